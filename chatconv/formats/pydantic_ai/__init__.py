"""pydantic-ai message histories, as `result.all_messages_json()` and `ModelMessagesTypeAdapter`
write them: a JSON list of `{"kind": "request" | "response", "parts": [...], ...}`, one conversation.

A request's parts are model messages of their own: `system-prompt` a system message,
`user-prompt` a user message (its content text, or a list of text, `image-url` and other
`*-url` items and `binary` content), `tool-return` a tool result, `retry-prompt` a tool result
that is an error (a user message when it answers no tool). A response is one assistant message:
`text`, `thinking` (reasoning) and `tool-call` parts (args as JSON text or an object). Every field
chatconv has no place for stays under providerOptions["pydantic-ai"]: a pydantic message's own
(timestamp, instructions, usage, model_name, run_id, ...) as `message` on the model message it
starts, a part's own (part_kind, timestamp, id, provider_details, ...) as `part` where the part
went, so that export gives the same JSON value back.
"""

from __future__ import annotations

from typing import Any, Iterator

from ..reading import Imported, Reading, kept, rest_of, tool_arguments, tool_input

NAME = "pydantic-ai"
TARGET = None  # no API's rules: a library's own history
KEYS = frozenset({"parts"})
KINDS = ("request", "response")
REQUEST_PARTS = ("system-prompt", "user-prompt", "tool-return", "retry-prompt")
RESPONSE_PARTS = ("text", "thinking", "tool-call")


def detect(data: Any) -> bool:
    """A history (a list of pydantic messages), or one message."""
    if isinstance(data, list):
        return bool(data) and all(map(_is_message, data))
    return _is_message(data)


def _is_message(data: Any) -> bool:
    return isinstance(data, dict) and data.get("kind") in KINDS and isinstance(data.get("parts"), list) and all(
        isinstance(part, dict) and "part_kind" in part for part in data["parts"])


def read(reading: Reading) -> Iterator[Imported]:
    data = reading.data
    history, where = ([data], lambda index: ()) if isinstance(data, dict) else (data, lambda index: (index,))
    messages: list[dict] = []
    paths: list[tuple] = []
    for index, message in enumerate(history):
        path = where(index)
        if not _is_message(message):
            reading.error(path, "a pydantic-ai message is {kind: request or response, parts: [...]}, each part with "
                          "its part_kind", code="wrong-type")
            return
        own = rest_of(message, ("parts",))
        if list(message)[0] != "parts":
            own["parts"] = list(message).index("parts")  # where the parts go back (dumps write them first)
        read_now = _request(message, reading, path) if message["kind"] == "request" else _response(
            message, reading, path)
        if read_now is None:
            return
        empty = not read_now
        if empty:  # a message of no part: an empty message of its kind holds its fields
            read_now = [({"role": "user" if message["kind"] == "request" else "assistant", "content": []}, path)]
        reading.keep(read_now[0][0], {"message": own, "noParts": True if empty else None})
        messages += [m for m, _ in read_now]
        paths += [p for _, p in read_now]
    if isinstance(data, dict) and messages:
        reading.keep(messages[0], {"single": True})
    yield Imported(None, messages, {}, paths)


def _fields(part: dict, consumed: tuple[str, ...]) -> dict:
    """A part's own fields (beside those read into the model part), with their order when a
    writer putting the consumed ones first would give another."""
    own: dict[str, Any] = {"part": rest_of(part, consumed)}
    present = [key for key in consumed if key in part]
    if list(part) != present + list(own["part"]):
        own["keys"] = list(part)
    return own


def _request(message: dict, reading: Reading, path: tuple) -> list[tuple[dict, tuple]] | None:
    out: list[tuple[dict, tuple]] = []
    for index, part in enumerate(message["parts"]):
        where = path + ("parts", index)
        kind, content = part.get("part_kind"), part.get("content")
        if kind == "system-prompt" and isinstance(content, str):
            out.append((reading.keep({"role": "system", "content": content}, _fields(part, ("content",))), where))
        elif kind == "user-prompt":
            parts = content if isinstance(content, str) else _user_content(content, reading, where)
            if parts is None:
                return None
            out.append((reading.keep({"role": "user", "content": parts}, _fields(part, ("content",))), where))
        elif kind in ("tool-return", "retry-prompt") and isinstance(part.get("tool_name"), str) \
                and isinstance(part.get("tool_call_id"), str):
            error = kind == "retry-prompt"
            output = {"type": ("error-text" if error else "text") if isinstance(content, str) else (
                "error-json" if error else "json"), "value": content}
            result = reading.keep({"type": "tool-result", "toolCallId": part["tool_call_id"],
                                   "toolName": part["tool_name"], "output": output},
                                  _fields(part, ("tool_name", "content", "tool_call_id")))
            if out and out[-1][0]["role"] == "tool" and "message" not in kept(out[-1][0], NAME):
                out[-1][0]["content"].append(result)  # results in a row: one tool message
            else:
                out.append(({"role": "tool", "content": [result]}, where))
        elif kind == "retry-prompt" and isinstance(content, str):  # a retry for the output, not a tool
            out.append((reading.keep({"role": "user", "content": content}, _fields(part, ("content",))), where))
        else:
            reading.error(where, f"a request part of kind {kind!r} chatconv cannot read" if kind not in REQUEST_PARTS
                          else f"a {kind} part with content chatconv cannot read",
                          f"request parts are {', '.join(REQUEST_PARTS)}", code="wrong-type")
            return None
    return out


def _user_content(content: Any, reading: Reading, path: tuple) -> list[dict] | None:
    """A user prompt's list: text, images and other files by URL, binary content."""
    if not isinstance(content, list):
        reading.error(path + ("content",), "a user prompt's content is text or a list", code="wrong-type")
        return None
    parts = []
    for index, item in enumerate(content):
        kind = item.get("kind") if isinstance(item, dict) else None
        if isinstance(item, str):
            parts.append({"type": "text", "text": item})
        elif kind == "image-url" and isinstance(item.get("url"), str):
            parts.append(reading.keep({"type": "image", "image": item["url"]}, _fields(item, ("url",))))
        elif isinstance(kind, str) and kind.endswith("-url") and isinstance(item.get("url"), str):
            media = item.get("media_type") if isinstance(item.get("media_type"), str) else "application/octet-stream"
            parts.append(reading.keep({"type": "file", "data": item["url"], "mediaType": media}, _fields(item, ("url",))))
        elif kind == "binary" and isinstance(item.get("data"), str) and isinstance(item.get("media_type"), str):
            parts.append(reading.keep({"type": "file", "data": item["data"], "mediaType": item["media_type"]},
                                      _fields(item, ("data", "media_type"))))
        else:
            reading.error(path + ("content", index), "a user prompt item chatconv cannot read",
                          "items are text, image-url (and other *-url) and binary content", code="wrong-type")
            return None
    return parts


def _response(message: dict, reading: Reading, path: tuple) -> list[tuple[dict, tuple]] | None:
    parts = []
    for index, part in enumerate(message["parts"]):
        where = path + ("parts", index)
        kind, content = part.get("part_kind"), part.get("content")
        if kind in ("text", "thinking") and isinstance(content, str):
            parts.append(reading.keep({"type": "text" if kind == "text" else "reasoning", "text": content},
                                      _fields(part, ("content",))))
        elif kind == "tool-call" and isinstance(part.get("tool_name"), str) and isinstance(part.get("tool_call_id"), str):
            args = part.get("args")
            value, marks = tool_input(args, reading, where + ("args",)) if isinstance(args, str) else (
                {} if args is None else args, {"argsObject": True} if args is not None else {"argsNull": True})
            parts.append(reading.keep({"type": "tool-call", "toolCallId": part["tool_call_id"],
                                       "toolName": part["tool_name"], "input": value},
                                      {**marks, **_fields(part, ("tool_name", "args", "tool_call_id"))}))
        else:
            reading.error(where, f"a response part of kind {kind!r} chatconv cannot read",
                          f"response parts are {', '.join(RESPONSE_PARTS)}", code="wrong-type")
            return None
    return [({"role": "assistant", "content": parts}, path)]


# ---------------------------------------------------------------------------------------------
# Writing a history


def write(messages: list[dict], metadata: dict, gather_tools: bool = False, notes: list | None = None) -> Any:
    """The history: a pydantic message for each model message that started one (and one for each
    run of requests or responses of messages from elsewhere), its parts from the model messages."""
    notes = notes if notes is not None else []
    history: list[dict] = []
    for index, message in enumerate(messages):
        own = kept(message, NAME)
        kind = "response" if message["role"] == "assistant" else "request"
        fields = own.get("message")
        if isinstance(fields, dict) or not history or history[-1]["kind"] != kind:
            history.append(_started(fields if isinstance(fields, dict) else {"kind": kind}))
        history[-1]["parts"] += _parts(message, index, notes)
    history = [_placed(entry) for entry in history]
    return history[0] if messages and kept(messages[0], NAME).get("single") and len(history) == 1 else history


def _started(fields: dict) -> dict:
    return {"parts": [], **{key: value for key, value in fields.items() if key != "parts"},
            "_at": fields.get("parts") if isinstance(fields.get("parts"), int) else 0}


def _placed(entry: dict) -> dict:
    """The message with its parts where they were (first, as dumps write them)."""
    at = entry.pop("_at")
    items = [(key, value) for key, value in entry.items() if key != "parts"]
    items.insert(at, ("parts", entry["parts"]))
    return dict(items)


def _part(consumed: dict, item: dict, default_kind: str | None) -> dict:
    """A pydantic part of the consumed fields and those import kept, in the order read."""
    own = kept(item, NAME)
    rest = own.get("part") if isinstance(own.get("part"), dict) else ({"part_kind": default_kind} if default_kind else {})
    written = {**consumed, **rest}
    keys = own.get("keys")
    return {**{key: written[key] for key in keys if key in written}, **written} if isinstance(keys, list) else written


def _parts(message: dict, index: int, notes: list) -> list[dict]:
    role, content = message["role"], message["content"]
    if kept(message, NAME).get("noParts") and content in ([], ""):
        return []
    if role in ("system", "user"):
        if role == "user" and isinstance(content, list):
            content = [_user_item(part, index, notes) for part in content]
            content = [item for item in content if item is not None]
        kind = "system-prompt" if role == "system" else "user-prompt"
        return [_part({"content": content}, message, kind)]
    parts = [{"type": "text", "text": content}] if isinstance(content, str) else content
    out = []
    for part in parts:
        if part["type"] == "tool-result":
            error = part["output"]["type"].startswith("error")
            out.append(_part({"tool_name": part["toolName"], "content": part["output"].get("value"),
                              "tool_call_id": part["toolCallId"]}, part, "retry-prompt" if error else "tool-return"))
        elif part["type"] in ("text", "reasoning"):
            out.append(_part({"content": part["text"]}, part, "text" if part["type"] == "text" else "thinking"))
        elif part["type"] == "tool-call":
            own = kept(part, NAME)
            args = (None if own.get("argsNull") else part.get("input")) if own.get("argsNull") or own.get(
                "argsObject") else tool_arguments(part, NAME)
            out.append(_part({"tool_name": part["toolName"], "args": args, "tool_call_id": part["toolCallId"]},
                             part, "tool-call"))
        else:
            notes.append((index, "part-left-out", f"a {part['type']} part is left out (a pydantic-ai response "
                          "holds text, thinking and tool calls)"))
    return out


def _user_item(part: dict, index: int, notes: list) -> Any:
    if part["type"] == "text":
        return part["text"]
    if part["type"] == "image":
        return _part({"url": part["image"]}, part, None) if kept(part, NAME) else {"url": part["image"],
                                                                                     "kind": "image-url"}
    if kept(part, NAME).get("part", {}).get("kind") == "binary" or not kept(part, NAME):
        if kept(part, NAME):
            return _part({"data": part["data"], "media_type": part["mediaType"]}, part, None)
        return {"data": part["data"], "media_type": part["mediaType"], "kind": "binary"}
    return _part({"url": part["data"]}, part, None)
