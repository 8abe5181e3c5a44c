"""0001: a step's `output` held one message object; it becomes an array of one message."""

from chatconv.messages import iter_steps

KINDS = ("step-record", "conversation")
SUMMARY = "step output is one message object; it becomes a one-message array"


def detect(record):
    for path, step in iter_steps(record):
        if isinstance(step.get("output"), dict):
            return path + ("output",)
    return None


def upgrade(record):
    for _, step in iter_steps(record):
        if isinstance(step.get("output"), dict):
            step["output"] = [step["output"]]  # same key, so its place in the order is kept
    return record
