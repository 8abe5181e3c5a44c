"""A fine-tuning line (or chat log body) made only of the common OpenAI shapes, imported in one
pass: what the Importer's full path (detect, read, name results, cut steps, check, write) gives
it, at a fraction of the cost. Any record it is not sure of is left to the full path (None); a
property test holds the two equal on generated records.

The steps are not checked against the schema, as the full path checks its own: every step made
here is valid by construction. Its messages are common_message's (system, user and assistant
text; tool calls with non-empty ids and names and object inputs; results of text or text parts,
with non-empty ids), a result's tool name is that of the call it answers (an orphan goes to
the full path), and the metadata is an object. The property test would see a step the full
path refuses.
"""

from __future__ import annotations

from ..sources import NotWritten, Record, exact_json
from .openai_chat.body import BODY_FIELDS
from .openai_chat.common import common_message
from .reading import STARTS_A_STEP
from .registry import IMPORTED, hf_messages, openai_chat

# Keys by which another format could claim a `{"messages": [...]}` object before openai-chat
# does (detection asks formats in registry order), and openai-chat's own `choices` and Anthropic's
# `system`: a record with any of them takes the full path. Anthropic's remaining claim on such a
# body, blocks only it writes, cannot hold for common shapes, whose contents are strings.
_CLAIMED = frozenset().union(*(fmt.KEYS for fmt in IMPORTED if fmt is not openai_chat)) - {"messages"} | {
    "choices", "system"}


def quick_lines(record: Record, conversation_id: str) -> tuple[list[bytes], dict[str, str]] | None:
    """The step lines of `record` (a body of `messages` and other fields, the metadata) as
    conversation `conversation_id` from step 0, and the tool names of its calls by id; None when
    the record is not one of common shapes whose every line is valid and written exactly."""
    data = record.data
    if record.error or record.problems or type(data) is not dict or not _CLAIMED.isdisjoint(data) \
            or not BODY_FIELDS.issuperset(data):  # a dataset's row with columns of its own: hf-messages
        return None
    return _quick(record, conversation_id, openai_chat.NAME, False)


# A Hugging Face row's columns no earlier format claims (Anthropic's `system`, an inspect sample's `input`).
_HF_CLAIMED = frozenset().union(*(fmt.KEYS for fmt in IMPORTED[:IMPORTED.index(hf_messages)])) - {
    "messages", *hf_messages.MEDIA_COLUMNS} | {"system", "input", "choices", "prompt", "completion"}
# The key orders hf-messages writes a message of each common shape in: another is marked, so the full path reads it.
_HF_ORDERS = {("role", "content"), ("role", "content", "weight"), ("role", "tool_call_id", "content"),
              ("role", "content", "tool_calls"), ("role", "tool_calls")}


def hf_quick_lines(record: Record, conversation_id: str) -> tuple[list[bytes], dict[str, str]] | None:
    """quick_lines for a Hugging Face row (hf-messages): `messages` of the common shapes beside
    columns no Chat Completions body has (an id, a source), as hf_messages.read and the importer
    would make it; None for any other row."""
    data = record.data
    if record.error or record.problems or type(data) is not dict or not _HF_CLAIMED.isdisjoint(data) \
            or BODY_FIELDS.issuperset(data):
        return None
    return _quick(record, conversation_id, hf_messages.NAME, True)


def _quick(record: Record, conversation_id: str, format_name: str, hub: bool) -> tuple[list[bytes], dict[str, str]] | None:
    data = record.data
    messages = data.get("messages")
    if type(messages) is not list or not messages or type(messages[0]) is not dict or messages[0].get("role") not in STARTS_A_STEP:
        return None  # none, or a response's messages alone: the full path gives them an unrecorded input
    names: dict[str, str] = {}
    steps: list[dict] = []
    output: list[dict] = []
    for source in messages:
        message = common_message(source)
        if message is None or (hub and (tuple(source) not in _HF_ORDERS or (
                "weight" in source and source["role"] != "assistant"))):  # (the Hub's row keeps a user's weight apart)
            return None
        role = message["role"]
        if role == "assistant" and type(message["content"]) is list:
            for part in message["content"]:
                if part["type"] == "tool-call":
                    names[part["toolCallId"]] = part["toolName"]
        elif role == "tool":
            result = message["content"][0]
            name = names.get(result["toolCallId"])
            if name is None:  # an orphan result: the full path says so
                return None
            result["toolName"] = name
        if not steps or role in STARTS_A_STEP:
            output = []
            steps.append({"conversationId": conversation_id, "stepIndex": len(steps), "input": message,
                          "output": output})
        else:
            output.append(message)
    if hub and next(iter(data)) != "messages":  # the row's form, on its first message, as hf_messages.read marks it
        first = steps[0]["input"]
        first["providerOptions"] = {**first.get("providerOptions", {}), format_name: {"row": "placed"}}
    if len(data) > 1:
        if hub and next(iter(data)) != "messages":  # its place, as hf_messages.read keeps it
            steps[0]["metadata"] = {format_name: {key: len(value) if key == "messages" else value
                                                  for key, value in data.items()}}
        else:
            steps[0]["metadata"] = {format_name: {key: value for key, value in data.items() if key != "messages"}}
    try:
        return [exact_json(step, record.text) for step in steps], names
    except NotWritten:  # too deep, an integer beyond 64 bits: the full path says so
        return None
