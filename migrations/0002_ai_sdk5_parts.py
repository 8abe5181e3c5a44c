"""0002: AI SDK 4 message parts become AI SDK 5 parts, in the shapes AI SDK 5 keeps.

- tool-call `args` -> `input`; tool-result `result` (+ `isError`) -> typed `output`;
  `mimeType` -> `mediaType`; `experimental_providerMetadata` -> `providerOptions` (on messages
  and parts). A tool result with no `result` at all (a tool that returned undefined, which JSON
  leaves out) gets `output: {type: json, value: null}` (error-json when it failed), as AI SDK 5
  writes an undefined tool output.
- A `redacted-reasoning` part `{data}` -> a reasoning part `{text: "", providerOptions:
  {anthropic: {redactedData}}}`, and a reasoning part's `signature` ->
  `providerOptions.anthropic.signature`: where AI SDK 5's Anthropic provider reads them (its
  `anthropicReasoningMetadataSchema`), and where its `modelMessageSchema` keeps them (a part of
  type redacted-reasoning is refused, a `signature` key dropped).
- A tool result's `experimental_content` (`[{type: text, text} | {type: image, data, mimeType?}]`)
  -> `output: {type: content, value: [{type: text, text} | {type: media, data, mediaType}]}`. AI
  SDK 4 wrote the same value as `result` beside it, so the copy goes: it takes the result's
  place. An image without its mimeType gets the type its first bytes show (PNG, JPEG, GIF, WebP),
  else `image/*`, as AI SDK 5 does for an image part of unknown type. A failed call's copy goes
  too, its result staying `error-json`: AI SDK 5's content output cannot say it failed.

Each key is renamed where it stands, so the order of keys is kept; a new `providerOptions` takes
the place of the key it holds. Nothing is overwritten and nothing lost: a shape that cannot move
without it (a signature where `providerOptions.anthropic` already has one, an
`experimental_content` that differs from the result or holds items of other kinds) stays as it
is, and validation reports the key AI SDK 5 would not keep.
"""

import base64
import binascii
import json

from chatconv.messages import iter_step_messages, iter_steps, typed_tool_output
from chatconv.migrate import rename_key
from chatconv.migrate.edits import insert_after

KINDS = ("step-record", "conversation")
SUMMARY = ("AI SDK 4 parts (args, result/isError, mimeType, experimental_providerMetadata, redacted-reasoning, "
           "reasoning signature, experimental_content)")

_RENAMED = {"mimeType": "mediaType", "experimental_providerMetadata": "providerOptions"}
_TOOL_CALL_RENAMED = {**_RENAMED, "args": "input"}
# The keys that may make an object legacy: a part without one of them is passed over at once
# (toolCallId: a tool result without any result).
_OLD_KEYS = frozenset(_TOOL_CALL_RENAMED) | {"result", "signature", "data", "experimental_content", "toolCallId"}
# (prefix of the first bytes, media type): what an AI SDK 4 tool-result image without mimeType is
_IMAGE_MAGIC = ((b"\x89PNG\r\n\x1a\n", "image/png"), (b"\xff\xd8\xff", "image/jpeg"), (b"GIF8", "image/gif"))


def _places(record):
    """(path, object) for every message and every part that a rename may touch."""
    for step_path, step in iter_steps(record):
        for message_path, message in iter_step_messages(step):
            if not isinstance(message, dict):
                continue
            path = step_path + message_path
            yield path, message
            content = message.get("content")  # messages.message_parts, inlined: the hot loop
            if isinstance(content, list):
                for index, part in enumerate(content):
                    if isinstance(part, dict):
                        yield path + ("content", index), part


def _legacy_keys(obj):
    """(old, new) for each AI SDK 4 key of a message or part whose new name is free: a rename
    never overwrites (a part holding both keeps both, and validation reports the old one)."""
    renames = _TOOL_CALL_RENAMED if obj.get("type") == "tool-call" else _RENAMED
    return [(old, new) for old, new in renames.items() if old in obj and new not in obj]


def _is_legacy_result(obj) -> bool:
    return obj.get("type") == "tool-result" and "result" in obj and "output" not in obj


def _is_void_result(obj) -> bool:
    """A tool result of AI SDK 4 whose `result` was undefined: JSON wrote no key for it."""
    return (obj.get("type") == "tool-result" and "result" not in obj and "output" not in obj
            and "experimental_content" not in obj)


def _upgrade_void_result(obj) -> None:
    is_error = isinstance(obj.get("isError"), bool) and obj.pop("isError")
    output = typed_tool_output(None, is_error)
    if "toolName" in obj:  # where AI SDK 4 had the result
        insert_after(obj, "toolName", "output", output)
    else:
        obj["output"] = output


# Reasoning: a signature and redacted data go to providerOptions.anthropic ----------------------


def _options(obj):
    """The providerOptions `obj` has once its keys are renamed (None: none)."""
    if "providerOptions" in obj:
        return obj["providerOptions"]
    return obj.get("experimental_providerMetadata")


def _anthropic_has_room(obj, key: str) -> bool:
    """Whether `key` can go to obj's providerOptions.anthropic without overwriting anything."""
    options = _options(obj)
    if options is None:
        return True
    anthropic = options.get("anthropic") if isinstance(options, dict) else None
    return isinstance(options, dict) and (anthropic is None and "anthropic" not in options
                                          or isinstance(anthropic, dict) and key not in anthropic)


def _is_signed_reasoning(obj) -> bool:
    return (obj.get("type") == "reasoning" and isinstance(obj.get("signature"), str)
            and _anthropic_has_room(obj, "signature"))


def _is_redacted_reasoning(obj) -> bool:
    return (obj.get("type") == "redacted-reasoning" and isinstance(obj.get("data"), str) and "text" not in obj
            and _anthropic_has_room(obj, "redactedData"))


def _to_anthropic(obj, old: str, key: str, value) -> None:
    """`value` as obj's providerOptions.anthropic[key], `old` gone: a new providerOptions takes
    old's place (after the renames, so an experimental_providerMetadata is providerOptions now)."""
    if "providerOptions" not in obj:
        rename_key(obj, old, "providerOptions", {"anthropic": {key: value}})
        return
    obj["providerOptions"].setdefault("anthropic", {})[key] = value
    del obj[old]


def _upgrade_reasoning(obj) -> None:
    if _is_signed_reasoning(obj):
        _to_anthropic(obj, "signature", "signature", obj["signature"])
    elif _is_redacted_reasoning(obj):
        data = obj["data"]
        obj["type"] = "reasoning"
        rename_key(obj, "data", "text", "")  # redacted: the reasoning has no text, its data is opaque
        if "providerOptions" in obj:
            obj["providerOptions"].setdefault("anthropic", {})["redactedData"] = data
        else:
            insert_after(obj, "text", "providerOptions", {"anthropic": {"redactedData": data}})


# Tool results: experimental_content becomes a content output ---------------------------------


def _same(a, b) -> bool:
    """Whether two JSON values are the same (True is not 1, 1.0 is not 1, as written)."""
    return a is b or json.dumps(a, sort_keys=True) == json.dumps(b, sort_keys=True)


def _image_type(data: str) -> str:
    try:
        head = base64.b64decode(data[:16] + "=" * (-len(data[:16]) % 4), validate=True)
    except (binascii.Error, ValueError):
        return "image/*"
    if head[:4] == b"RIFF" and head[8:12] == b"WEBP":
        return "image/webp"
    return next((kind for magic, kind in _IMAGE_MAGIC if head.startswith(magic)), "image/*")


def _content_items(items):
    """experimental_content's items as AI SDK 5 content-output items; None when one is not an
    AI SDK 4 text or image item with exactly its own keys (it would not be kept whole)."""
    if not isinstance(items, list):
        return None
    out = []
    for item in items:
        if not isinstance(item, dict):
            return None
        if item.get("type") == "text" and set(item) == {"type", "text"} and isinstance(item["text"], str):
            out.append({"type": "text", "text": item["text"]})
        elif (item.get("type") == "image" and set(item) <= {"type", "data", "mimeType"}
              and isinstance(item.get("data"), str) and isinstance(item.get("mimeType", ""), str)):
            media_type = item["mimeType"] if "mimeType" in item else _image_type(item["data"])
            out.append({"type": "media", "data": item["data"], "mediaType": media_type})
        else:
            return None
    return out


def _content_move(obj):
    """How obj's experimental_content moves: "output" (it becomes a content output in the place
    of the result or output that holds its copy, or in its own when there is none), "drop" (a
    failed call's copy: the error output keeps the value), or None (it stays)."""
    if obj.get("type") != "tool-result" or "experimental_content" not in obj:
        return None
    content = obj["experimental_content"]
    if "output" in obj:
        output = obj["output"]
        if not (isinstance(output, dict) and set(output) == {"type", "value"}
                and output["type"] in ("json", "error-json") and _same(output["value"], content)):
            return None
        failed = output["type"] == "error-json"
    elif "result" in obj:
        if not _same(obj["result"], content):
            return None
        failed = obj.get("isError") is True
    else:
        failed = obj.get("isError") is True
        if failed:
            return None
    if failed:
        return "drop"
    return "output" if _content_items(content) is not None else None


def _upgrade_content(obj, move: str) -> None:
    content = obj["experimental_content"]
    if move == "drop":
        del obj["experimental_content"]
        return
    output = {"type": "content", "value": _content_items(content)}
    if "output" in obj or "result" in obj:
        if isinstance(obj.get("isError"), bool):  # False here: a failed call's result stays error-json
            del obj["isError"]
        rename_key(obj, "output" if "output" in obj else "result", "output", output)
        del obj["experimental_content"]
    else:
        if obj.get("isError") is False:
            del obj["isError"]
        rename_key(obj, "experimental_content", "output", output)


def _is_legacy(obj) -> bool:
    return bool(_legacy_keys(obj) or _is_legacy_result(obj) or _is_void_result(obj) or _is_signed_reasoning(obj)
                or _is_redacted_reasoning(obj) or _content_move(obj))


def detect(record):
    for path, obj in _places(record):
        # isdisjoint first: most objects hold no old key, and it answers that in C.
        if not _OLD_KEYS.isdisjoint(obj) and _is_legacy(obj):
            return path
    return None


def upgrade(record):
    for _, obj in _places(record):
        if _OLD_KEYS.isdisjoint(obj):
            continue
        move = _content_move(obj)  # before `result` becomes an output: it holds the copy
        if move == "output":
            _upgrade_content(obj, move)
        for old, new in _legacy_keys(obj):
            rename_key(obj, old, new)
        if _is_legacy_result(obj):
            # isError belongs to the result; a non-boolean one is not ours to drop, so it stays.
            is_error = isinstance(obj.get("isError"), bool) and obj.pop("isError")
            rename_key(obj, "result", "output", typed_tool_output(obj["result"], is_error))
        elif _is_void_result(obj):
            _upgrade_void_result(obj)
        if move == "drop":
            _upgrade_content(obj, move)
        _upgrade_reasoning(obj)
    return record
