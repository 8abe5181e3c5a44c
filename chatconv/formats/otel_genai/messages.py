"""OpenTelemetry GenAI messages (the semantic conventions' gen_ai.input.messages,
gen_ai.output.messages and gen_ai.system_instructions JSON schemas) as AI SDK model messages.

A message is {role, parts, name?, finish_reason?}; its parts become model-message parts:
text -> text, reasoning -> reasoning, tool_call -> tool-call, tool_call_response -> tool-result
(its tool named by the importer from the call with that id), blob / uri / file -> image (a user's
image) or file, server_tool_call / server_tool_call_response -> a provider-executed tool call
and its result. A part of any other type (the schema's GenericPart: compaction, a vendor's own)
has no model-message counterpart: it is kept whole, with its position, under
providerOptions["otel-genai"].parts of its message, with a warning. Every field that is not
turned into a model-message field is kept under providerOptions["otel-genai"] of the message or
part it came from.
"""

from __future__ import annotations

from typing import Any

from ...messages import typed_tool_output
from ..reading import Reading, rest_of, tool_input

NAME = "otel-genai"
ROLES = ("system", "user", "assistant", "tool")
MEDIA = ("blob", "uri", "file")
# The parts each role takes (beyond text, and the generic parts kept on the message).
ROLE_PARTS = {
    "system": (),
    "user": MEDIA,
    "assistant": ("reasoning", "tool_call", "tool_call_response", "server_tool_call",
                  "server_tool_call_response", *MEDIA),
    "tool": ("tool_call_response",),
}
KNOWN_TYPES = {"text", "reasoning", "tool_call", "tool_call_response", "server_tool_call",
               "server_tool_call_response", *MEDIA}
UNKNOWN_MEDIA_TYPE = "application/octet-stream"  # a file part needs one; the source named none


class Refused(Exception):
    """A part or message that has no faithful place in a model message (path, message, hint)."""

    def __init__(self, path: tuple, message: str, hint: str | None = None):
        super().__init__(message)
        self.path, self.message, self.hint = path, message, hint


def messages_of(items: Any, reading: Reading, path: tuple) -> tuple[list[dict], list[tuple]] | None:
    """The model messages of a list of OTel messages and each one's path; None (an error filed
    in `reading`) when one of them cannot be read."""
    if not isinstance(items, list):
        reading.error(path, "OTel GenAI messages must be a JSON array of messages", code="wrong-type")
        return None
    out, paths = [], []
    for index, item in enumerate(items):
        try:
            out.append(message_of(item, reading, path + (index,)))
        except Refused as refused:
            reading.error(refused.path, refused.message, refused.hint, code="import-refused")
            return None
        paths.append(path + (index,))
    return out, paths


def system_instructions(parts: Any, reading: Reading, path: tuple) -> dict | None:
    """gen_ai.system_instructions (a list of parts, text or generic) as one system message."""
    if not isinstance(parts, list):
        reading.error(path, "gen_ai.system_instructions must be a JSON array of parts", code="wrong-type")
        return None
    try:
        message = message_of({"role": "system", "parts": parts}, reading, path, parts_path=path)
    except Refused as refused:
        reading.error(refused.path, refused.message, refused.hint, code="import-refused")
        return None
    return reading.keep(message, {"systemInstructions": True})


def message_of(message: Any, reading: Reading, path: tuple, parts_path: tuple | None = None) -> dict:
    if not isinstance(message, dict):
        raise Refused(path, "an OTel GenAI message must be an object {role, parts}")
    role, parts = message.get("role"), message.get("parts")
    if role not in ROLES:
        raise Refused(path + ("role",), f"a message of role {role!r}: chatconv reads roles {', '.join(ROLES)}",
                      "OTel GenAI roles are system, user, assistant and tool")
    if not isinstance(parts, list):
        raise Refused(path + ("parts",), "an OTel GenAI message needs its parts (a JSON array)")
    parts_path = path + ("parts",) if parts_path is None else parts_path
    if role == "user" and parts and all(_type(p) == "tool_call_response" for p in parts):
        role, kept_role = "tool", "user"  # tool results sent back in a user message (Anthropic's way)
    else:
        kept_role = None
    converted, generic = [], []
    for index, part in enumerate(parts):
        where = parts_path + (index,)
        kind = _type(part)
        if not isinstance(kind, str):  # asked first: a list is no member of KNOWN_TYPES (a TypeError)
            raise Refused(where, "an OTel GenAI part must be an object with a string `type`")
        if kind not in KNOWN_TYPES:
            reading.warn(where, f"a {kind!r} part has no counterpart in a model message: kept whole, with its "
                         f"position, under providerOptions.{NAME}.parts of its message", code="part-kept")
            generic.append({"index": index, "part": part})
        elif kind != "text" and kind not in ROLE_PARTS[role]:
            raise Refused(where, f"a {kind} part in a {role} message: chatconv's {role} messages do not take it",
                          _ROLE_HINTS[role])
        else:
            converted.append(_part(part, kind, role, reading, where))
    content: Any = converted
    if role == "system":
        content = "\n".join(p["text"] for p in converted)
        # More than one part, or a part with fields of its own: the parts as written.
        if len(converted) != 1 or "providerOptions" in converted[0]:
            kept_parts: Any = [p for p in parts if _type(p) == "text"]
        else:
            kept_parts = None
    else:
        kept_parts = None
    out = {"role": role, "content": content}
    return reading.keep(out, {"role": kept_role, "textParts": kept_parts, "parts": generic or None},
                        rest_of(message, ("role", "parts")))


_ROLE_HINTS = {
    "system": "system messages (and gen_ai.system_instructions) take text parts",
    "user": "user messages take text, blob, uri and file parts (tool_call_response parts alone: tool results)",
    "assistant": "assistant messages take text, reasoning, tool_call, tool_call_response, blob, uri and file parts",
    "tool": "tool messages take tool_call_response parts",
}


def _type(part: Any) -> Any:
    return part.get("type") if isinstance(part, dict) else None


def _part(part: dict, kind: str, role: str, reading: Reading, path: tuple) -> dict:
    if kind in ("text", "reasoning"):
        text = _string(part, "content", path)
        return reading.keep({"type": kind, "text": text}, {}, rest_of(part, ("type", "content")))
    if kind in ("tool_call", "server_tool_call"):
        return _tool_call(part, kind, reading, path)
    if kind in ("tool_call_response", "server_tool_call_response"):
        return _tool_result(part, kind, reading, path)
    return _media(part, kind, role, reading, path)


def _tool_call(part: dict, kind: str, reading: Reading, path: tuple) -> dict:
    call_id, name = _string(part, "id", path, "its call id"), _string(part, "name", path, "its tool's name")
    if kind == "server_tool_call":  # run by the provider: its details are the call's input
        if "server_tool_call" not in part:
            raise Refused(path, "a server_tool_call part needs its server_tool_call details")
        converted = {"type": "tool-call", "toolCallId": call_id, "toolName": name,
                     "input": part["server_tool_call"], "providerExecuted": True}
        return reading.keep(converted, {"type": kind}, rest_of(part, ("type", "id", "name", "server_tool_call")))
    arguments = part.get("arguments")
    value, keep = tool_input(arguments, reading, path + ("arguments",))
    converted = {"type": "tool-call", "toolCallId": call_id, "toolName": name,
                 "input": {} if "arguments" not in part else value}
    return reading.keep(converted, {**keep, "noArguments": True if "arguments" not in part else None,
                                    "argumentsText": True if isinstance(arguments, str) else None},
                        rest_of(part, ("type", "id", "name", "arguments")))


def _tool_result(part: dict, kind: str, reading: Reading, path: tuple) -> dict:
    call_id = _string(part, "id", path, "the id of the call it answers")
    # The published schema names the payload `response`; its first draft (still written by some
    # instrumentations) named it `result`.
    field = kind if kind == "server_tool_call_response" else "response" if "response" in part else "result"
    if field not in part:
        raise Refused(path, f"a {kind} part needs its `{'response' if field == 'result' else field}`")
    # OTel has no error flag on a tool's response: it is read as written, text or JSON.
    converted = {"type": "tool-result", "toolCallId": call_id, "toolName": "",
                 "output": typed_tool_output(part[field])}
    return reading.keep(converted, {"type": kind if kind != "tool_call_response" else None,
                                    "field": "result" if field == "result" else None},
                        rest_of(part, ("type", "id", field)))


def _media(part: dict, kind: str, role: str, reading: Reading, path: tuple) -> dict:
    """blob (base64 content), uri (a URL) or file (a file id): a user's image, else a file part."""
    source = {"blob": "content", "uri": "uri", "file": "file_id"}[kind]
    data = _string(part, source, path)
    media_type = part.get("mime_type")
    if media_type is not None and not isinstance(media_type, str):
        raise Refused(path + ("mime_type",), "mime_type must be a string")
    rest = rest_of(part, ("type", source, "mime_type"))
    if role == "user" and kind != "file" and part.get("modality") == "image":
        converted = {"type": "image", "image": data}
        if media_type:
            converted["mediaType"] = media_type
        return reading.keep(converted, {"type": kind if kind != "blob" else None}, rest)
    converted = {"type": "file", "data": data, "mediaType": media_type or UNKNOWN_MEDIA_TYPE}
    return reading.keep(converted, {"type": kind if kind != "blob" else None,
                                    "noMimeType": True if not media_type else None}, rest)


def _string(part: dict, key: str, path: tuple, what: str | None = None) -> str:
    value = part.get(key)
    if not isinstance(value, str) or (what is not None and not value):
        kind = part.get("type")
        raise Refused(path + (key,) if key in part else path,
                      f"a {kind} part needs {what or f'`{key}`'} as a {'non-empty ' if what else ''}string")
    return value
