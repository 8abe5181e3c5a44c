"""OpenAI chat messages (the Chat Completions API's `messages`): assistant `tool_calls` with JSON
string arguments, `tool` messages that answer them by `tool_call_id`, and content parts
(text, image_url, file).
"""

from __future__ import annotations

from typing import Any

import orjson

from ..problems import ChatconvError, Problem

NAME = "openai-chat"
ROLES = ("system", "user", "assistant", "tool")
PART_TYPES = ("text", "image_url", "file")  # the content parts to_model_messages reads


def detect(data: Any) -> bool:
    """A list of messages with OpenAI roles, whose tool calls and content parts are OpenAI's."""
    return isinstance(data, list) and bool(data) and all(
        _is_message(message) and _unreadable_field(message) is None for message in data)


def _is_message(message: Any) -> bool:
    if not isinstance(message, dict) or message.get("role") not in ROLES:
        return False
    if message["role"] == "tool":
        return "tool_call_id" in message
    if not isinstance(message.get("tool_calls", []), list):
        return False
    content = message.get("content")
    if isinstance(content, list):
        return all(isinstance(part, dict) and part.get("type") in PART_TYPES for part in content)
    return content is None or isinstance(content, str)


# The string fields from_openai_messages reads, by key path: of a tool call, of a content part.
CALL_FIELDS = (("id",), ("function", "name"))
PART_FIELDS = {"image_url": (("image_url", "url"),), "file": (("file", "file_data"),)}
Unreadable = tuple[str, str]  # (JSON path within a message, what the value there must be)


def _unreadable_field(message: Any) -> Unreadable | None:
    """The first field of a message that from_openai_messages reads and cannot; None if none."""
    if not isinstance(message, dict):
        return "", "an object"
    calls = message.get("tool_calls") if message.get("role") == "assistant" else None
    if calls:
        if not isinstance(calls, list):
            return ".tool_calls", "a list"
        items = [(f".tool_calls[{index}]", call, CALL_FIELDS) for index, call in enumerate(calls)]
    elif message.get("role") != "tool" and isinstance(message.get("content"), list):
        items = [(f".content[{index}]", part, PART_FIELDS.get(part.get("type"), ()) if isinstance(part, dict) else ())
                 for index, part in enumerate(message["content"])]
    else:
        return None
    for where, item, fields in items:
        unreadable = _not_a_string(item, fields, where)
        if unreadable is not None:
            return unreadable
    return None


def _not_a_string(item: Any, fields: tuple[tuple[str, ...], ...], where: str) -> Unreadable | None:
    """The first of `fields` (key paths) that `item` (at `where`) does not hold as a string."""
    if not isinstance(item, dict):
        return where, "an object"
    for keys in fields:
        value, path = item, where
        for key in keys:
            if not isinstance(value, dict):
                return path, "an object"
            value, path = value.get(key), f"{path}.{key}"
        if not isinstance(value, str):
            return path, "a string"
    return None


def to_model_messages(data: list[dict]) -> list[dict]:
    return from_openai_messages(data)


def from_openai_messages(messages: list[dict]) -> list[dict]:
    """An OpenAI-format chat log (tool_calls, tool messages) as AI SDK model messages.

    ChatconvError, naming the field, for a message not in OpenAI's shape (see CALL_FIELDS)."""
    names: dict[str, str] = {}
    out = []
    for index, message in enumerate(messages):
        unreadable = _unreadable_field(message)
        if unreadable is not None:
            field, what = unreadable
            raise ChatconvError(Problem(
                "<openai log>", None, None, f"$[{index}]{field}",
                f"{field.lstrip('.') or 'a message'} must be {what}", "error",
                "tool calls need id and function.name, image_url parts image_url.url and file parts "
                "file.file_data, as OpenAI's chat messages have them", code="wrong-type"))
        role, content = message.get("role"), message.get("content")
        if role == "tool":
            call_id = message.get("tool_call_id")
            out.append({"role": "tool", "content": [{"type": "tool-result", "toolCallId": call_id,
                                                     "toolName": names.get(call_id, ""),
                                                     "output": {"type": "text", "value": content or ""}}]})
        elif role == "assistant" and message.get("tool_calls"):
            parts = [{"type": "text", "text": content}] if content is not None else []
            for call in message["tool_calls"]:
                names[call["id"]] = call["function"]["name"]
                parts.append({"type": "tool-call", "toolCallId": call["id"], "toolName": call["function"]["name"],
                              "input": _arguments(call["function"].get("arguments", "{}"), index)})
            out.append({"role": "assistant", "content": parts})
        elif isinstance(content, list):
            out.append({"role": role, "content": [_from_openai_part(p) for p in content]})
        else:
            out.append({"role": role, "content": content})
    return out


def _arguments(text: str, index: int) -> Any:
    try:
        return orjson.loads(text)
    except orjson.JSONDecodeError:
        raise ChatconvError(Problem("<openai log>", None, None, f"$[{index}].tool_calls",
                                    "tool call arguments are not valid JSON", "error",
                                    "arguments must be a JSON string of the call's input",
                                    code="invalid-json")) from None


def _from_openai_part(part: dict) -> dict:
    if part.get("type") == "image_url":
        return {"type": "image", "image": part["image_url"]["url"]}
    if part.get("type") == "file":
        file = {"type": "file", "data": part["file"]["file_data"], "mediaType": "application/octet-stream"}
        if "filename" in part["file"]:
            file["filename"] = part["file"]["filename"]
        return file
    return {"type": "text", "text": part.get("text", "")}
