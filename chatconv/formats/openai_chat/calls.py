"""OpenAI Chat Completions' tool calls and their answers, read into chatconv's parts: a
tool_calls entry (function or custom), the legacy function_call (given an id that the function
message answering it takes), and a tool or function message.
"""

from __future__ import annotations

from typing import Any

from ..reading import Reading, rest_of, tool_input


def tool_call(call: Any, reading: Reading, path: tuple) -> dict | None:
    kind = call.get("type", "function") if isinstance(call, dict) else None
    body = call.get(kind) if kind in ("function", "custom") else None
    if not (isinstance(body, dict) and isinstance(call.get("id"), str) and call["id"]
            and isinstance(body.get("name"), str) and body["name"]):
        reading.error(path, "a tool call needs an id, a type (function or custom) and its name",
                      "write tool calls as OpenAI's API does: {id, type: function, function: {name, arguments}}",
                      code="wrong-type")
        return None
    payload = "arguments" if kind == "function" else "input"
    if kind == "custom":
        value, keep = body.get("input", ""), {"type": "custom"}  # a custom tool's input is free text, as it is
    else:
        value, keep = tool_input(body.get(payload, "{}"), reading, path + (kind, payload))
    part = {"type": "tool-call", "toolCallId": call["id"], "toolName": body["name"], "input": value}
    # The function (or custom) object's other fields are kept apart from the call's own.
    return reading.keep(part, {**keep, "noType": True if "type" not in call else None,
                               "noPayload": True if payload not in body else None,
                               "argumentsObject": True if not isinstance(body.get(payload, ""), str) else None,
                               kind: rest_of(body, ("name", payload)) or None},
                        rest_of(call, ("id", "type", kind)))


def legacy_call(call: dict, reading: Reading, path: tuple, legacy_calls: dict) -> dict | None:
    """A function_call (before tool_calls) has no id: it is given one (`function_call-<path>`),
    kept as legacy, that the function message answering it (by name) takes."""
    if not isinstance(call.get("name"), str) or not call["name"]:
        reading.error(path + ("function_call",), "a function_call needs its name", code="wrong-type")
        return None
    call_id = "function_call-" + "-".join(str(p) for p in path)
    legacy_calls.setdefault(call["name"], []).append(call_id)
    value, keep = tool_input(call.get("arguments", "{}"), reading, path + ("function_call", "arguments"))
    part = {"type": "tool-call", "toolCallId": call_id, "toolName": call["name"], "input": value}
    return reading.keep(part, {**keep, "legacy": "function_call"}, rest_of(call, ("name", "arguments")))


def tool_message(message: dict, reading: Reading, path: tuple, legacy_calls: dict) -> dict | None:
    if message["role"] == "function":
        name, known = message.get("name"), ("role", "name", "content")
        if not isinstance(name, str):  # (a list is no key of legacy_calls)
            reading.error(path + ("name",), "a function message names its function with a string", code="wrong-type")
            return None
        if not legacy_calls.get(name):
            reading.error(path, f"a function message for {name!r} answers no earlier function_call",
                          code="tool-result-orphan")
            return None
        call_id = legacy_calls[name].pop(0)
    else:
        call_id, name, known = message.get("tool_call_id"), "", ("role", "tool_call_id", "content")
        if not isinstance(call_id, str) or not call_id:
            reading.error(path, "a tool message needs the tool_call_id of the call it answers", code="missing-key")
            return None
    content = message.get("content")
    if isinstance(content, str):
        output = {"type": "text", "value": content}
    elif isinstance(content, list) and all(isinstance(p, dict) and p.get("type") == "text"
                                           and isinstance(p.get("text"), str) for p in content):
        output = {"type": "content", "value": [{"type": "text", "text": p["text"]} for p in content]}
    else:
        reading.error(path + ("content",), "tool content must be a string or text parts", code="wrong-type")
        return None
    part = {"type": "tool-result", "toolCallId": call_id, "toolName": name, "output": output}
    # Text parts with fields of their own (a content output's parts have no place for them): the
    # parts as written, which export gives back while their texts are the output's.
    own_fields = isinstance(content, list) and any(set(p) != {"type", "text"} for p in content)
    marks = {"role": "function" if message["role"] == "function" else None, "textParts": content if own_fields else None}
    return {"role": "tool", "content": [reading.keep(part, marks, rest_of(message, known))]}
