"""Shapes of other tools' records that chatconv recognises but does not read yet. A record no
format reads is named for what it is ("this looks like Alpaca rows"), rather than left to a
guess: Alpaca's `input`/`output` make a row look like a chatconv step, and Bedrock Converse's
`system` list a body Anthropic's reader would refuse block by block.
"""

from __future__ import annotations

from typing import Any

# Bedrock Converse content blocks are keyed by kind ({"text": ...}, {"toolUse": {...}}), with no `type`.
_CONVERSE_BLOCKS = frozenset({"text", "image", "document", "video", "toolUse", "toolResult", "guardContent",
                              "reasoningContent", "cachePoint", "citationsContent"})


def looks_like(data: Any) -> str | None:
    """What `data` seems to be, for a record no format reads: e.g. "Alpaca rows
    (instruction/input/output)"; None when it is nothing chatconv knows."""
    if not isinstance(data, dict):
        return None
    if ("chosen" in data and "rejected" in data) or ("preferred_output" in data and "non_preferred_output" in data):
        return "a preference pair (chosen/rejected, as DPO datasets hold them)"
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
