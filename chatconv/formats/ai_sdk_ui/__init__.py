"""AI SDK UI messages (`UIMessage`, AI SDK 5): what `useChat` keeps and apps store, a list of
`{"id", "role", "parts": [...], "metadata"?}`, one message, or a chat request's body
(`{"id", "messages": [...], "trigger"}`).

Read as the AI SDK's own convertToModelMessages reads them: `text`, `reasoning` and `file` parts
are model parts (a part's providerMetadata its providerOptions); a tool part (`tool-<name>`, or
`dynamic-tool` with its toolName) is a tool call, and its output (`output-available`) or error
(`output-error`) the result in a tool message after the assistant's; an assistant message's
`step-start` parts cut it into an assistant message (and its results) per step. UI-only parts
(`source-url`, `source-document`, `data-*`) have no model counterpart: they are kept whole, with
their position, on their message, with a warning. Everything else (ids, metadata, states, a
part's own fields) stays under providerOptions["ai-sdk-ui"], so that export gives the same JSON
value back; messages from elsewhere get ids `msg-<n>`.
"""

from __future__ import annotations

from typing import Any, Iterator

from ..reading import Imported, Reading, kept, rest_of

NAME = "ai-sdk-ui"
TARGET = None  # no API's rules: an app's stored messages
KEYS = frozenset({"parts", "messages", "trigger"})
ROLES = ("system", "user", "assistant")
KEPT_PARTS = ("source-url", "source-document")  # and data-*: UI-only


def detect(data: Any) -> bool:
    """UI messages: a list, one, or a chat request body's `messages`."""
    if isinstance(data, list):
        return bool(data) and all(map(_is_ui_message, data))
    if isinstance(data, dict) and isinstance(data.get("messages"), list) and "parts" not in data:
        return bool(data["messages"]) and all(map(_is_ui_message, data["messages"]))
    return _is_ui_message(data)


def _is_ui_message(data: Any) -> bool:
    return (isinstance(data, dict) and isinstance(data.get("id"), str) and data.get("role") in ROLES
            and isinstance(data.get("parts"), list) and "content" not in data and all(
                isinstance(p, dict) and isinstance(p.get("type"), str) and "content" not in p for p in data["parts"]))


def read(reading: Reading) -> Iterator[Imported]:
    data = reading.data
    if isinstance(data, list):
        items, where, metadata, form = data, (), {}, None
    elif "messages" in data and "parts" not in data:
        items, where, metadata, form = data["messages"], ("messages",), rest_of(data, ("messages",)), "body"
        if list(data)[0] != "messages":
            metadata = {key: (None if key == "messages" else value) for key, value in data.items()}  # its place
    else:
        items, where, metadata, form = [data], None, {}, "single"
    messages, paths = [], []
    for index, item in enumerate(items):
        path = where + (index,) if where is not None else ()
        if not _is_ui_message(item):
            reading.error(path, "a UI message is {id, role: system, user or assistant, parts: [{type, ...}]}",
                          code="wrong-type")
            return
        read_now = _message(item, reading, path)
        if read_now is None:
            return
        messages += read_now
        paths += [path] * len(read_now)
    if form and messages:
        reading.keep(messages[0], {"form": form})
    yield Imported(None, messages, metadata, paths)


def _message(item: dict, reading: Reading, path: tuple) -> list[dict] | None:
    role = item["role"]
    blocks: list[list[dict]] = [[]]
    starts, aside = [], []
    for index, part in enumerate(item["parts"]):
        kind = part["type"]
        if kind == "step-start":
            starts.append(index)
            if blocks[-1]:
                blocks.append([])
            continue
        if kind in KEPT_PARTS or kind.startswith("data-"):
            aside.append({"at": index, "part": part})
            reading.warn(path + ("parts", index), f"a {kind} part has no counterpart in a model message: kept whole, "
                         f"with its position, under providerOptions.{NAME}.aside of its message", code="part-kept")
            continue
        converted = _part(part, role, reading, path + ("parts", index))
        if converted is None:
            return None
        result = converted.get("_result")
        written = _ui_part({k: v for k, v in converted.items() if k != "_result"},
                           {result["toolCallId"]: [result]} if result else {})
        if written is not None and list(written) != list(part):
            reading.keep(converted, {"keys": list(part)})
        blocks[-1].append(converted)
    fields = rest_of(item, ("role", "parts"))
    default = ["id", "role", "parts", *[key for key in fields if key != "id"]]
    marks = {"message": fields, "stepStarts": starts or None, "aside": aside or None,
             "keys": list(item) if list(item) != default else None}
    if role == "system":
        texts = [p for block in blocks for p in block]
        if not all(p["type"] == "text" for p in texts):
            reading.error(path + ("parts",), "a system message's parts are text", code="wrong-type")
            return None
        plain = len(texts) == 1 and "providerOptions" not in texts[0]
        message = {"role": "system", "content": "\n".join(p["text"] for p in texts)}
        return [reading.keep(message, {**marks, "parts": None if plain else [
            p for p in item["parts"] if p["type"] == "text"]})]
    out: list[dict] = []
    for block in blocks:
        results = [part.pop("_result") for part in block if "_result" in part]
        out.append({"role": role, "content": block})
        if results:
            out.append({"role": "tool", "content": results})
    reading.keep(out[0], marks)
    for later in out[1:]:
        reading.keep(later, {"joined": True})
    return out


def _with_metadata(part: dict, source: dict, reading: Reading, consumed: tuple[str, ...]) -> dict:
    """The model part, the UI part's providerMetadata as its providerOptions (as the AI SDK
    converts it), its other fields kept."""
    metadata = source.get("providerMetadata")
    if isinstance(metadata, dict) and NAME not in metadata:
        part["providerOptions"] = dict(metadata)
        consumed += ("providerMetadata",)
    return reading.keep(part, {"metadataKeys": list(metadata) if "providerMetadata" in consumed else None},
                        rest_of(source, consumed))


def _part(part: dict, role: str, reading: Reading, path: tuple) -> dict | None:
    kind = part["type"]
    if kind in ("text", "reasoning") and isinstance(part.get("text"), str) and (kind == "text" or role == "assistant"):
        return _with_metadata({"type": kind, "text": part["text"]}, part, reading, ("type", "text"))
    if kind == "file" and isinstance(part.get("url"), str) and isinstance(part.get("mediaType"), str) \
            and role != "system":
        converted = {"type": "file", "data": part["url"], "mediaType": part["mediaType"]}
        consumed: tuple[str, ...] = ("type", "url", "mediaType")
        if isinstance(part.get("filename"), str):
            converted["filename"], consumed = part["filename"], consumed + ("filename",)
        return _with_metadata(converted, part, reading, consumed)
    if (kind.startswith("tool-") or kind == "dynamic-tool") and role == "assistant" \
            and isinstance(part.get("toolCallId"), str):
        name = part.get("toolName") if kind == "dynamic-tool" else kind[len("tool-"):]
        if not isinstance(name, str) or not name:
            reading.error(path, "a dynamic-tool part names its tool (toolName)", code="wrong-type")
            return None
        call = {"type": "tool-call", "toolCallId": part["toolCallId"], "toolName": name,
                "input": part.get("input", {})}
        consumed = ("type", "toolCallId", "input", "output" if "output" in part else "errorText", "state") + (
            ("toolName",) if kind == "dynamic-tool" else ())  # (an errorText beside an output is the part's own)
        if part.get("providerExecuted") is True:
            call["providerExecuted"] = True
            consumed += ("providerExecuted",)
        reading.keep(call, {"noInput": True if "input" not in part else None, "dynamic": kind == "dynamic-tool" or None,
                            "toolState": part.get("state")}, rest_of(part, consumed))
        if "output" in part or "errorText" in part:
            error = "output" not in part
            call["_result"] = {"type": "tool-result", "toolCallId": part["toolCallId"], "toolName": name,
                               "output": {"type": "error-text", "value": part["errorText"]} if error
                               else {"type": "json", "value": part["output"]}}
        return call
    reading.error(path, f"a {kind} part chatconv cannot read in a {role} message",
                  "UI parts read: text, reasoning, file, tool-<name>, dynamic-tool, step-start (and source-*, data-* "
                  "kept)", code="wrong-type")
    return None


# ---------------------------------------------------------------------------------------------
# Writing UI messages


def write(messages: list[dict], metadata: dict, gather_tools: bool = False, notes: list | None = None) -> Any:
    """The UI messages: one for each model message that started one (and for each run of
    messages from elsewhere of one role, tool results written on their calls' parts), then put
    back in the form read (a list, one message, or a request body)."""
    notes = notes if notes is not None else []
    out: list[tuple[dict, dict, list]] = []  # (the message's marks, its fields, its parts)
    results: dict[str, list[dict]] = {}  # each call's results in order (an id may come again in a later message)
    for message in messages:
        if message["role"] == "tool":
            for part in message["content"]:
                if part["type"] == "tool-result":
                    results.setdefault(part["toolCallId"], []).append(part)
    for index, message in enumerate(messages):
        own = kept(message, NAME)
        if message["role"] == "tool":
            continue  # each result is written on its call's part
        joined = own.get("joined") or (out and out[-1][1]["role"] == message["role"] == "assistant"
                                      and "message" not in own)
        if not joined:
            fields = own.get("message") if isinstance(own.get("message"), dict) else {"id": f"msg-{len(out)}"}
            out.append((own, {**fields, "role": message["role"]}, []))
        elif out[-1][2]:
            out[-1][2].append({"type": "step-start"})  # a step after the first (put back where read, below)
        content = message["content"]
        parts = [{"type": "text", "text": content}] if isinstance(content, str) else content
        for part in parts:
            written = _ui_part(part, results)
            if written is None:
                notes.append((index, "part-left-out", f"a {part['type']} part is left out (a UI message has no part "
                              "for it)"))
            else:
                out[-1][2].append(written)
    written_messages = [_ui_message(own, fields, parts) for own, fields, parts in out]
    form = kept(messages[0], NAME).get("form") if messages else None
    if form == "single" and len(written_messages) == 1:
        return written_messages[0]
    if form == "body":
        if "messages" in metadata:
            return {key: (written_messages if key == "messages" else value) for key, value in metadata.items()}
        return {"messages": written_messages, **metadata}
    return written_messages


def _in_order(value: dict, keys: Any) -> dict:
    return {**{key: value[key] for key in keys if key in value}, **value} if isinstance(keys, list) else value


def _ui_message(own: dict, fields: dict, parts: list[dict]) -> dict:
    """The UI message: its step-start and UI-only parts back where they were, its keys in the order read."""
    if isinstance(own.get("stepStarts"), list):
        parts = [p for p in parts if p.get("type") != "step-start"]
    # each at its index in the parts read, in order of index (what comes before it is then in place)
    put_back = [(at, {"type": "step-start"}) for at in own.get("stepStarts") or []] + [
        (item["at"], item["part"]) for item in own.get("aside") or []]
    for at, part in sorted(put_back, key=lambda item: item[0]):
        parts.insert(min(at, len(parts)), part)
    if fields["role"] == "system" and isinstance(own.get("parts"), list):
        parts = own["parts"]
    message = {"id": fields.get("id"), "role": fields["role"], "parts": parts,
               **{k: v for k, v in fields.items() if k not in ("id", "role")}}
    return _in_order(message, own.get("keys"))


def _ui_part(part: dict, results: dict) -> dict | None:
    """The UI part of a model part (a tool call with its result, when there is one); None for a
    part a UI message has no place for."""
    own = kept(part, NAME)
    extra = {k: v for k, v in own.items() if k not in _PART_MARKS}
    keys = own.get("metadataKeys")
    tail = {"providerMetadata": {key: value for key, value in (part.get("providerOptions") or {}).items()
                                 if key in keys}} if isinstance(keys, list) else {}
    if part["type"] in ("text", "reasoning"):
        written = {"type": part["type"], "text": part["text"], **extra, **tail}
    elif part["type"] in ("file", "image"):
        written = {"type": "file", "mediaType": part.get("mediaType") or "image/png",
                   "url": part["data"] if part["type"] == "file" else part["image"]}
        if "filename" in part:
            written["filename"] = part["filename"]
        written = {**written, **extra, **tail}
    elif part["type"] == "tool-call":
        waiting = results.get(part["toolCallId"])
        written = _tool_part(part, own, extra, waiting.pop(0) if waiting else None)
    else:
        return None
    return _in_order(written, own.get("keys"))


_PART_MARKS = ("noInput", "dynamic", "metadataKeys", "keys", "toolState")


def _tool_part(part: dict, own: dict, extra: dict, result: dict | None) -> dict:
    written: dict[str, Any] = {"type": "dynamic-tool" if own.get("dynamic") else f"tool-{part['toolName']}"}
    if own.get("dynamic"):
        written["toolName"] = part["toolName"]
    written["toolCallId"] = part["toolCallId"]
    state = "input-available"
    if not (own.get("noInput") and part.get("input") == {}):
        written["input"] = part.get("input", {})
    if result is not None:
        output = result["output"]
        if output["type"] in ("error-text", "error-json"):
            written["errorText"] = output["value"] if isinstance(output["value"], str) else str(output["value"])
            state = "output-error"
        else:
            written["output"] = output.get("value")
            state = "output-available"
    if part.get("providerExecuted"):
        written["providerExecuted"] = True
    # the state as read, while the result it says is still there
    read = own.get("toolState")
    written["state"] = read if isinstance(read, str) and (result is None) == (
        read not in ("output-available", "output-error")) else state
    return {**written, **extra}
