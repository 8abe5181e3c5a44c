"""The shapes most OpenAI chat logs and fine-tuning files are made of, read into model messages
at once: what openai_chat's full reading gives them (a property test holds the two equal), at a
fraction of its cost, for any message that has nothing to keep, mark or warn about.
"""

from __future__ import annotations

from typing import Any

import orjson

PLAIN_ROLES = ("system", "user", "assistant")  # whose {role, content: string} is a model message as it is

_TOOL_MESSAGE_KEYS = {"role", "tool_call_id", "content"}
_CALLS_MESSAGE_KEYS = {"role", "content", "tool_calls"}
_CALL_KEYS = {"id", "type", "function"}
_FUNCTION_KEYS = {"name", "arguments"}


def common_message(message: Any) -> dict | None:
    """The model message of `message` when it is of one of these shapes, as the full reading
    gives it; None for any other shape, or for one that would be kept, marked or warned about.

    The shapes: {role, content: string} of system, user or assistant, with fine-tuning's `weight`
    or without; {role: tool, tool_call_id, content: string}; {role: assistant, content: null or
    string, tool_calls: [{id, type: function, function: {name, arguments}}]} whose arguments are
    a JSON object written compactly."""
    if type(message) is not dict:
        return None
    role, content = message.get("role"), message.get("content")
    if len(message) == 2 and type(content) is str and role in PLAIN_ROLES:
        return {"role": role, "content": content}
    if len(message) == 3 and "weight" in message and type(content) is str and role in PLAIN_ROLES:
        # Fine-tuning's weight (whether to train on an assistant message) is kept as the full reading keeps it.
        return {"role": role, "content": content, "providerOptions": {"openai-chat": {"weight": message["weight"]}}}
    if role == "tool" and type(content) is str and message.keys() == _TOOL_MESSAGE_KEYS:
        call_id = message["tool_call_id"]
        if type(call_id) is not str or not call_id:
            return None
        return {"role": "tool", "content": [{"type": "tool-result", "toolCallId": call_id, "toolName": "",
                                             "output": {"type": "text", "value": content}}]}
    if role != "assistant" or message.keys() != _CALLS_MESSAGE_KEYS or not (content is None or type(content) is str):
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
    return {"role": "assistant", "content": parts}


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
    # An object written compactly writes back to the same text: nothing to keep (an integer beyond
    # 64 bits, read as a float, does not).
    text = arguments.encode()
    if type(value) is not dict or orjson.dumps(value) != text:
        return None
    return {"type": "tool-call", "toolCallId": call_id, "toolName": name, "input": value}
