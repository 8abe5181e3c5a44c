"""The shapes most OpenAI chat logs and fine-tuning files are made of, read into model messages
at once: what openai_chat's full reading gives them (a property test holds the two equal), at a
fraction of its cost, for any message that has nothing to warn about and little to keep.
"""

from __future__ import annotations

from typing import Any

import orjson

PLAIN_ROLES = ("system", "user", "assistant")  # whose {role, content: string} is a model message as it is

_TOOL_MESSAGE_KEYS = {"role", "tool_call_id", "content"}
_CALLS_MESSAGE_KEYS = {"role", "content", "tool_calls"}
_NO_CONTENT_KEYS = {"role", "tool_calls"}
_TEXT_PART_KEYS = {"type", "text"}
_CALL_KEYS = {"id", "type", "function"}
_FUNCTION_KEYS = {"name", "arguments"}


def common_message(message: Any) -> dict | None:
    """The model message of `message` when it is of one of these shapes, as the full reading
    gives it; None for any other shape, or for one that would be marked or warned about.

    The shapes: {role, content: string} of system, user or assistant, with fine-tuning's `weight`
    or without; {role: tool, tool_call_id, content: a string or text parts}; {role: assistant,
    content: null or string (or no content), tool_calls: [{id, type: function, function: {name,
    arguments}}]} whose arguments are the JSON text of an object (kept as written when it is not
    compact, as the full reading keeps it)."""
    if type(message) is not dict:
        return None
    role, content = message.get("role"), message.get("content")
    if len(message) == 2 and type(content) is str and role in PLAIN_ROLES:
        return {"role": role, "content": content}
    if len(message) == 3 and "weight" in message and type(content) is str and role in PLAIN_ROLES:
        # Fine-tuning's weight (whether to train on an assistant message) is kept as the full reading keeps it.
        return {"role": role, "content": content, "providerOptions": {"openai-chat": {"weight": message["weight"]}}}
    if role == "tool":
        return _common_result(message, content)
    keys = message.keys()
    if role != "assistant" or not (keys == _CALLS_MESSAGE_KEYS or keys == _NO_CONTENT_KEYS) \
            or not (content is None or type(content) is str):
        return None
    calls = message["tool_calls"]
    if type(calls) is not list or not calls:
        return None
    parts = [] if content is None else [{"type": "text", "text": content}]
    for call in calls:
        part = _common_call(call)
        if part is None:
            return None
        parts.append(part)
    if "content" not in message:  # as the API writes it back: without content
        return {"role": "assistant", "content": parts, "providerOptions": {"openai-chat": {"noContent": True}}}
    return {"role": "assistant", "content": parts}


def _common_result(message: dict, content: Any) -> dict | None:
    call_id = message.get("tool_call_id")
    if message.keys() != _TOOL_MESSAGE_KEYS or type(call_id) is not str or not call_id:
        return None
    if type(content) is str:
        output = {"type": "text", "value": content}
    elif type(content) is list and all(type(p) is dict and p.keys() == _TEXT_PART_KEYS and p["type"] == "text"
                                       and type(p["text"]) is str for p in content):
        output = {"type": "content", "value": [{"type": "text", "text": p["text"]} for p in content]}
    else:
        return None
    return {"role": "tool", "content": [{"type": "tool-result", "toolCallId": call_id, "toolName": "",
                                         "output": output}]}


def _common_call(call: Any) -> dict | None:
    if type(call) is not dict or call.keys() != _CALL_KEYS or call["type"] != "function":
        return None
    call_id, body = call["id"], call["function"]
    if type(call_id) is not str or not call_id or type(body) is not dict or body.keys() != _FUNCTION_KEYS:
        return None
    name, arguments = body["name"], body["arguments"]
    if type(name) is not str or not name or type(arguments) is not str:
        return None
    try:
        value = orjson.loads(arguments)
    except orjson.JSONDecodeError:
        return None
    if type(value) is not dict:
        return None
    part = {"type": "tool-call", "toolCallId": call_id, "toolName": name, "input": value}
    try:
        written = orjson.dumps(value)
    except orjson.JSONEncodeError:  # deeper than orjson writes: the full reading says what it keeps
        return None
    if written == arguments.encode():
        return part
    if b"+" in written:  # perhaps an integer beyond 64 bits, read as a float: the full reading looks
        return None
    # Written otherwise than compactly (spaces after ':' say): kept as written, as the full reading keeps it.
    part["providerOptions"] = {"openai-chat": {"arguments": arguments}}
    return part
