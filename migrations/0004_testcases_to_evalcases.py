"""0004: a `testcases` file (AgentV v1) becomes an `evalcases` file (v2).

`testcases` -> `evalcases`; in each case the one `messages` list -> `input_messages`, and its
trailing assistant message, the v1 expected answer, -> `expected_messages` (unless the case has
them already, or it is the only message). A `$schema` that names v1 names v2 afterwards. Other
keys stay where they stand; 0003 then moves older v2 spellings among them.
"""

from chatconv.migrate import cases_in, declare_era, in_era, insert_after, new_like, rename_key

KINDS = ("eval-file",)
ERAS = ("testcases", "evalcases")
SUMMARY = "testcases (v1) -> evalcases (v2): messages split into input_messages and expected_messages"


def detect(record):
    if in_era(record, "testcases") and "evalcases" not in record:
        return ("testcases",)
    return None


def _split(case):
    messages = case.get("messages")
    if "input_messages" in case or not isinstance(messages, list) or not messages:
        return
    rename_key(case, "messages", "input_messages")
    # The trailing assistant message is the expected answer, unless the case says otherwise.
    if (len(messages) > 1 and isinstance(messages[-1], dict) and messages[-1].get("role") == "assistant"
            and "expected_messages" not in case):
        expected = new_like(messages, [messages[-1]])
        del messages[-1]  # not pop(): ruamel.yaml's sequence keeps its comments in step on del
        insert_after(case, "input_messages", "expected_messages", expected)


def upgrade(record):
    declare_era(record, "testcases", "evalcases")
    rename_key(record, "testcases", "evalcases")
    for _, case in cases_in(record, "evalcases"):
        _split(case)
    return record
