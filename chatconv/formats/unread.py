"""Shapes of other tools' records that chatconv recognises but does not read yet. A record no
format reads is named for what it is ("this looks like Alpaca rows"), rather than left to a
guess: a preference pair whose sides are not messages, a Gemini Interactions record.
unknown_format is the problem of any record no format reads.
"""

from __future__ import annotations

from typing import Any

from ..problems import Problem
from ..sources import Record, problem_at
from .ai_sdk import detect as ai_sdk_detect
from .streams import stream_event


def looks_like(data: Any) -> str | None:
    """What `data` seems to be, for a record no format reads: e.g. "Alpaca rows
    (instruction/input/output)"; None when it is nothing chatconv knows."""
    if not isinstance(data, dict):
        return None
    if ("chosen" in data and "rejected" in data) or ("preferred_output" in data and "non_preferred_output" in data):
        return "a preference pair (chosen/rejected, as DPO datasets hold them) whose sides are not text or messages"
    if isinstance(data.get("outputs"), list) and "status" in data and ("model" in data or "agent" in data):
        return "a Gemini Interactions API interaction (outputs, status)"
    return None


def unknown_format(record: Record, forced, names: tuple[str, ...]) -> Problem:
    """The problem of a record no format reads (`forced`: the one --from named; `names`: the
    formats chatconv imports): what it is when that can be told, else how to name it."""
    if forced is not None:
        return problem_at(record, (), f"not a record of the {forced.NAME} format: a record is a JSON object "
                          "(or an array of them)",
                          "error", "check the record, or name another format with --from", code="unknown-format")
    if stream_event(record.data):
        return problem_at(record, (), "an event of a streamed response: chatconv assembles a stream from its file, "
                          "not line by line", "error", "name the file (not standard input), so that its events are "
                          "read together", code="unknown-format")
    seems = looks_like(record.data)
    if seems is not None:
        return problem_at(record, (), f"this looks like {seems}: chatconv does not read that format yet", "error",
                          f"chatconv imports {', '.join(names)}; convert the record to one of them",
                          code="unknown-format")
    if ai_sdk_detect(record.data) and _has_messages(record.data):
        return problem_at(record, (), "already a chatconv recording (AI SDK steps): nothing to import", "error",
                          "use it as it is (`chatconv migrate` rewrites legacy shapes)", code="unknown-format")
    return problem_at(record, (), "cannot tell which format this record is in", "error",
                      f"name it with --from ({', '.join(names)})", code="unknown-format")


def _has_messages(data: dict) -> bool:
    """Whether a record taken for chatconv's own holds a message where a step's input is: the
    first step's input of a conversation, or the step's own (an object with a role)."""
    steps = data.get("steps")
    step = steps[0] if isinstance(steps, list) and steps else data
    return isinstance(step, dict) and isinstance(step.get("input"), dict) and "role" in step["input"]
