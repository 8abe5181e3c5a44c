"""Shapes of other tools' records that chatconv recognises but does not read yet. A record no
format reads is named for what it is ("this looks like Alpaca rows"), rather than left to a
guess: Alpaca's `input`/`output` make a row look like a chatconv step, and Bedrock Converse's
`system` list a body Anthropic's reader would refuse block by block. unknown_format is the
problem of any record no format reads.
"""

from __future__ import annotations

from typing import Any

from ..problems import Problem
from ..sources import Record, problem_at
from .ai_sdk import detect as ai_sdk_detect
from .streams import stream_event

# Bedrock Converse content blocks are keyed by kind ({"text": ...}, {"toolUse": {...}}), with no `type`.
_CONVERSE_BLOCKS = frozenset({"text", "image", "document", "video", "toolUse", "toolResult", "guardContent",
                              "reasoningContent", "cachePoint", "citationsContent"})


def looks_like(data: Any) -> str | None:
    """What `data` seems to be, for a record no format reads: e.g. "Alpaca rows
    (instruction/input/output)"; None when it is nothing chatconv knows."""
    if not isinstance(data, dict):
        return None
    if ("chosen" in data and "rejected" in data) or ("preferred_output" in data and "non_preferred_output" in data):
        return "a preference pair (chosen/rejected, as DPO datasets hold them) whose sides are not text or messages"
    if is_converse(data):
        return "an Amazon Bedrock Converse request or response (content blocks keyed by kind: text, toolUse, ...)"
    if isinstance(data.get("outputs"), list) and "status" in data and ("model" in data or "agent" in data):
        return "a Gemini Interactions API interaction (outputs, status)"
    return None


def is_converse(data: dict) -> bool:
    """A Bedrock Converse request (messages of blocks keyed by kind) or response (output.message)."""
    output = data.get("output")
    if isinstance(output, dict) and isinstance(output.get("message"), dict) and "stopReason" in data:
        return True
    messages = data.get("messages")
    return isinstance(messages, list) and bool(messages) and all(
        isinstance(message, dict) and isinstance(message.get("content"), list) and message["content"] and all(
            isinstance(block, dict) and "type" not in block and len(block) == 1 and not _CONVERSE_BLOCKS.isdisjoint(block)
            for block in message["content"])
        for message in messages)


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
