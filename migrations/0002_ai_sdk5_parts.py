"""0002: AI SDK 4 message parts become AI SDK 5 parts.

tool-call `args` -> `input`; tool-result `result` (+ `isError`) -> typed `output`;
`mimeType` -> `mediaType`; `experimental_providerMetadata` -> `providerOptions`.
Each key is renamed where it stands, so the order of keys is kept.
"""

from chatconv.messages import iter_step_messages, iter_steps, message_parts
from chatconv.migrate import rename_key

KINDS = ("step-record", "conversation")
SUMMARY = "AI SDK 4 parts (args, result/isError, mimeType, experimental_providerMetadata)"

_RENAMED = {"args": "input", "mimeType": "mediaType", "experimental_providerMetadata": "providerOptions"}


def _places(record):
    """(path, object) for every message and every part that a rename may touch."""
    for step_path, step in iter_steps(record):
        for message_path, message in iter_step_messages(step):
            if isinstance(message, dict):
                yield step_path + message_path, message
                for index, part in enumerate(message_parts(message)):
                    if isinstance(part, dict):
                        yield step_path + message_path + ("content", index), part


def _is_legacy_result(obj) -> bool:
    return obj.get("type") == "tool-result" and "result" in obj and "output" not in obj


def _legacy_keys(obj):
    # A key is only renamed when its new name is free: nothing is overwritten or lost.
    return [old for old, new in _RENAMED.items() if old in obj and new not in obj]


def detect(record):
    for path, obj in _places(record):
        if _legacy_keys(obj) or _is_legacy_result(obj):
            return path
    return None


def _typed_output(result, is_error: bool) -> dict:
    kind = "text" if isinstance(result, str) else "json"
    return {"type": f"error-{kind}" if is_error else kind, "value": result}


def upgrade(record):
    for _, obj in _places(record):
        for old in _legacy_keys(obj):
            rename_key(obj, old, _RENAMED[old])
        if _is_legacy_result(obj):
            is_error = isinstance(obj.get("isError"), bool) and obj.pop("isError")
            rename_key(obj, "result", "output", _typed_output(obj["result"], is_error))
    return record
