"""0002: AI SDK 4 message parts become AI SDK 5 parts.

tool-call `args` -> `input`; tool-result `result` (+ `isError`) -> typed `output`;
`mimeType` -> `mediaType`; `experimental_providerMetadata` -> `providerOptions` (on messages
and parts). Each key is renamed where it stands, so the order of keys is kept.
"""

from chatconv.messages import iter_step_messages, iter_steps, typed_tool_output
from chatconv.migrate import rename_key

KINDS = ("step-record", "conversation")
SUMMARY = "AI SDK 4 parts (args, result/isError, mimeType, experimental_providerMetadata)"

_RENAMED = {"mimeType": "mediaType", "experimental_providerMetadata": "providerOptions"}
_TOOL_CALL_RENAMED = {**_RENAMED, "args": "input"}
_OLD_KEYS = frozenset(_TOOL_CALL_RENAMED) | {"result"}


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


def detect(record):
    for path, obj in _places(record):
        # isdisjoint first: most objects hold no old key, and it answers that in C.
        if not _OLD_KEYS.isdisjoint(obj) and (_legacy_keys(obj) or _is_legacy_result(obj)):
            return path
    return None


def upgrade(record):
    for _, obj in _places(record):
        if _OLD_KEYS.isdisjoint(obj):
            continue
        for old, new in _legacy_keys(obj):
            rename_key(obj, old, new)
        if _is_legacy_result(obj):
            # isError belongs to the result; a non-boolean one is not ours to drop, so it stays.
            is_error = isinstance(obj.get("isError"), bool) and obj.pop("isError")
            rename_key(obj, "result", "output", typed_tool_output(obj["result"], is_error))
    return record
