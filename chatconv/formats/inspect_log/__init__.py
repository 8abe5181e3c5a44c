"""inspect_ai eval logs: a `.json` log (EvalLog: version, status, eval, plan, results, stats,
samples) or a `.eval` log (a zip of them: inspect_archive.py). Import only.

Each sample (id and epoch) is one conversation, named `<eval.run_id>/<sample id>/<epoch>`. Its
messages (ChatMessageSystem, User, Assistant, Tool) become model messages; the sample's other
fields (input, target, output, scores, metadata, events...) become the conversation's metadata
under their own names, and the log's header (every field but samples) goes once, as `log`, to
the first conversation written from the log; the others name that one in `logHeaderIn`.
`attachment://` references in messages are replaced by the sample's attachments (kept too).
"""

from __future__ import annotations

import mimetypes
from pathlib import Path
from typing import Any, Iterator

from .archive import SUFFIX, LogHeader, claims, records
from ..reading import Imported, Reading, name_results_of, rest_of, string_value, tool_input

NAME = "inspect"
SUFFIXES = (SUFFIX,)  # files that are no JSON, searched in folders too
ROLES = ("system", "user", "assistant", "tool")
AUDIO = {"wav": "audio/wav", "mp3": "audio/mpeg"}
VIDEO = {"mp4": "video/mp4", "mpeg": "video/mpeg", "mov": "video/quicktime"}
ATTACHMENT = "attachment://"

__all__ = ["NAME", "SUFFIXES", "claims", "detect", "read", "records"]  # claims, records: the .eval zip's


KEYS = frozenset({"eval", "epoch"})


def detect(data: Any) -> bool:
    """An EvalLog (`eval` with `samples`, or `version` and `status`) or one EvalSample (`id`,
    `epoch`, `input` and `messages`: an entry of a `.eval` log)."""
    if not isinstance(data, dict):
        return False
    if isinstance(data.get("eval"), dict):
        return "samples" in data or ("version" in data and "status" in data)
    return all(key in data for key in ("id", "epoch", "input")) and isinstance(data.get("messages"), list)


def read(reading: Reading) -> Iterator[Imported]:
    data = reading.data
    if not isinstance(data.get("eval"), dict):  # a sample entry of a .eval log
        log = getattr(reading.record, "log", None) or LogHeader({})
        yield _sample(data, reading, (), log)
        return
    samples = data.get("samples")
    if samples is None:
        reading.warn((), "the log holds no samples (a log written header only, or an eval that failed early)",
                     code="import-empty")
        return
    if not isinstance(samples, list):
        reading.error(("samples",), "samples must be a list of EvalSample objects", code="wrong-type")
        return
    log = LogHeader(rest_of(data, ("samples",)))
    for index, sample in enumerate(samples):
        yield _sample(sample, reading, ("samples", index), log)


def _sample(sample: Any, reading: Reading, where: tuple, log: LogHeader) -> Imported:
    """One conversation; always returned, even when its reading failed (the importer then leaves
    it out and takes its problems)."""
    if not isinstance(sample, dict) or not isinstance(sample.get("messages"), list):
        reading.error(where + ("messages",), "a sample needs its messages (a list of ChatMessage objects)",
                      code="missing-key")
        return Imported(None, [], {})
    if not isinstance(sample.get("id"), (str, int)) or isinstance(sample.get("id"), bool):
        reading.error(where + ("id",), "a sample needs its id (a string or an integer)", code="missing-key")
        return Imported(None, [], {})
    attachments = sample.get("attachments")
    messages_data = _resolved(sample["messages"], attachments) if isinstance(attachments, dict) and attachments \
        else sample["messages"]
    messages, paths = [], []
    for index, message in enumerate(messages_data):
        path = where + ("messages", index)
        converted = _message(message, reading, path)
        if converted is not None:
            messages.append(converted)
            paths.append(path)
    conversation_id = _conversation_id(sample, log, reading)
    metadata = rest_of(sample, ("messages",))
    # A sample is a conversation of its own: its results are paired here, so that the log's
    # header goes to a sample that is written, not to one refused for an orphan result.
    if not reading.failed and name_results_of(messages, paths, reading, {}):
        if log.kept_by is None:
            log.kept_by, metadata["log"] = conversation_id, log.data
        else:
            metadata["logHeaderIn"] = log.kept_by
    return Imported(conversation_id, messages, metadata, paths)


def _conversation_id(sample: dict, log: LogHeader, reading: Reading) -> str:
    spec = log.data.get("eval") if isinstance(log.data.get("eval"), dict) else {}
    run = spec.get("run_id") or spec.get("eval_id") or Path(reading.record.file.partition("!")[0]).name
    epoch = sample.get("epoch")
    return f"{run}/{sample['id']}" + (f"/{epoch}" if epoch is not None else "")


def _resolved(value: Any, attachments: dict) -> Any:
    """`value` with each string `attachment://<hash>` replaced by that attachment (inspect moves
    long content out of messages into the sample's attachments)."""
    if isinstance(value, str):
        if value.startswith(ATTACHMENT):
            found = attachments.get(value[len(ATTACHMENT):])
            return found if isinstance(found, str) else value
        return value
    if isinstance(value, list):
        return [_resolved(item, attachments) for item in value]
    if isinstance(value, dict):
        return {key: _resolved(item, attachments) for key, item in value.items()}
    return value


# ---------------------------------------------------------------------------------------------
# Messages


def _message(message: Any, reading: Reading, path: tuple) -> dict | None:
    role = message.get("role") if isinstance(message, dict) else None
    if role not in ROLES:
        reading.error(path + ("role",), f"not an inspect ChatMessage (role must be one of {', '.join(ROLES)})",
                      code="wrong-type")
        return None
    if role == "tool":
        return _tool_message(message, reading, path)
    content, rest = message.get("content"), rest_of(message, ("role", "content", "tool_calls"))
    if isinstance(content, str):
        parts: list[dict] | str = content
        data_parts: list[dict] = []
    elif isinstance(content, list):
        converted = _parts(content, role, reading, path + ("content",))
        if converted is None:
            return None
        parts, data_parts = converted
    else:
        reading.error(path + ("content",), "content must be a string or a list of Content objects", code="wrong-type")
        return None
    kept = {"dataParts": data_parts or None, **rest}
    if role == "system":
        if isinstance(parts, list):
            if any(part["type"] != "text" for part in parts):
                reading.error(path + ("content",), "system content other than text has no place in a system message",
                              code="import-refused")
                return None
            kept = {"content": content, **kept}  # its parts, as they were
            parts = "\n".join(part["text"] for part in parts)
        return reading.keep({"role": "system", "content": parts}, kept)
    if role == "user":
        return reading.keep({"role": "user", "content": parts}, kept)
    return _assistant(message, parts, kept, reading, path)


def _assistant(message: dict, parts: list[dict] | str, kept: dict, reading: Reading, path: tuple) -> dict | None:
    calls = message.get("tool_calls")
    if calls is None:
        return reading.keep({"role": "assistant", "content": parts}, kept)
    if not isinstance(calls, list):
        reading.error(path + ("tool_calls",), "tool_calls must be a list of ToolCall objects", code="wrong-type")
        return None
    if isinstance(parts, str):
        kept = {"content": "" if not parts else None, **kept}  # "" beside tool calls: no text part
        parts = [{"type": "text", "text": parts}] if parts else []
    for index, call in enumerate(calls):
        converted = _tool_call(call, reading, path + ("tool_calls", index))
        if converted is None:
            return None
        parts.append(converted)
    return reading.keep({"role": "assistant", "content": parts}, kept)


def _tool_call(call: Any, reading: Reading, path: tuple) -> dict | None:
    if not (isinstance(call, dict) and isinstance(call.get("id"), str) and call["id"]
            and isinstance(call.get("function"), str) and call["function"]):
        reading.error(path, "a tool call needs its id and function (the tool's name)",
                      "inspect writes tool calls as {id, function, arguments}", code="missing-key")
        return None
    value, keep = tool_input(call.get("arguments", {}), reading, path + ("arguments",))
    part = {"type": "tool-call", "toolCallId": call["id"], "toolName": call["function"], "input": value}
    return reading.keep(part, {**keep, "noArguments": True if "arguments" not in call else None,
                               **rest_of(call, ("id", "function", "arguments"))})


def _parts(content: list, role: str, reading: Reading, where: tuple) -> tuple[list[dict], list[dict]] | None:
    """The model parts of a content list, and its data parts (a model's internal payload, which
    no model part holds: kept on the message with their index)."""
    parts, data_parts = [], []
    for index, item in enumerate(content):
        kind = item.get("type") if isinstance(item, dict) else None
        if kind == "data":
            data_parts.append({"index": index, **item})
            continue
        converted = _part(item, kind, role, reading, where + (index,))
        if converted is None:
            return None
        parts.extend(converted)
    return parts, data_parts


def _part(item: Any, kind: str | None, role: str, reading: Reading, path: tuple) -> list[dict] | None:
    try:
        if kind == "text":
            return [reading.keep({"type": "text", "text": string_value(item["text"])}, rest_of(item, ("type", "text")))]
        if kind == "reasoning" and role == "assistant":
            redacted = item.get("redacted") is True  # its reasoning is then opaque data, no text
            text = "" if redacted else string_value(item["reasoning"])
            return [reading.keep({"type": "reasoning", "text": text},
                                 rest_of(item, ("type",) if redacted else ("type", "reasoning")))]
        if kind == "tool_use" and role == "assistant":
            return _server_tool_use(item, reading, path)
        if kind == "image" and role == "user":
            return [reading.keep({"type": "image", "image": string_value(item["image"])}, rest_of(item, ("type", "image")))]
        if kind in ("image", "audio", "video", "document"):
            return [_file(item, kind, reading)]
    except (KeyError, TypeError):
        pass
    what = f"a part of type {kind!r}" if isinstance(kind, str) else "a part without a string type"
    reading.error(path, f"{what} that chatconv cannot read in the {role}'s message",
                  "inspect's Content: text, image, audio, video, document, data; reasoning and tool_use from "
                  "the assistant only", code="import-refused" if kind else "wrong-type")
    return None


def _file(item: dict, kind: str, reading: Reading) -> dict:
    data = string_value(item[kind])
    if kind == "audio":
        media_type = AUDIO.get(item["format"], f"audio/{string_value(item['format'])}")
    elif kind == "video":
        media_type = VIDEO.get(item["format"], f"video/{string_value(item['format'])}")
    else:
        media_type = item.get("mime_type") or _media_type(data)
    part = {"type": "file", "data": data, "mediaType": media_type}
    if kind == "document" and isinstance(item.get("filename"), str) and item["filename"]:
        part["filename"] = item["filename"]
    return reading.keep(part, {"type": kind, **rest_of(item, ("type", kind, "filename"))})


def _media_type(data: str) -> str:
    """A data URL's media type, else one guessed from the file name, else unknown bytes."""
    if data.startswith("data:"):
        return data[5:].split(";")[0].split(",")[0] or "application/octet-stream"
    return mimetypes.guess_type(data)[0] or "application/octet-stream"


def _server_tool_use(item: dict, reading: Reading, path: tuple) -> list[dict]:
    """A tool the provider ran (web search, MCP): its call and its result, in the assistant message."""
    value, keep = tool_input(string_value(item["arguments"]), reading, path + ("arguments",))
    call = {"type": "tool-call", "toolCallId": string_value(item["id"]), "toolName": string_value(item["name"]),
            "input": value, "providerExecuted": True}
    error = item.get("error")
    output = {"type": "error-text", "value": error} if isinstance(error, str) else \
        {"type": "text", "value": string_value(item["result"])}
    result = {"type": "tool-result", "toolCallId": item["id"], "toolName": item["name"], "output": output}
    reading.keep(result, {"result": item.get("result") if isinstance(error, str) else None})
    return [reading.keep(call, {**keep, **rest_of(item, ("type", "id", "name", "arguments", "result", "error"))}),
            result]



def _tool_message(message: dict, reading: Reading, path: tuple) -> dict | None:
    call_id, content, error = message.get("tool_call_id"), message.get("content"), message.get("error")
    if not isinstance(call_id, str) or not call_id:
        reading.error(path + ("tool_call_id",), "a tool message needs the tool_call_id of the call it answers",
                      code="missing-key")
        return None
    keep: dict = {}
    if isinstance(error, dict) and isinstance(error.get("message"), str):
        output = {"type": "error-text", "value": error["message"]}
        keep = {"error": rest_of(error, ("message",)) or None, "content": content or None}
    elif error is not None:
        reading.error(path + ("error",), "a tool error must be {type, message}", code="wrong-type")
        return None
    elif isinstance(content, str):
        output = {"type": "text", "value": content}
    elif isinstance(content, list) and all(isinstance(p, dict) and p.keys() == {"type", "text"} and p["type"] == "text"
                                           and isinstance(p["text"], str) for p in content):
        output = {"type": "content", "value": content}
    elif isinstance(content, list):
        output = {"type": "json", "value": content}  # images and other Content, as they are
    else:
        reading.error(path + ("content",), "content must be a string or a list of Content objects", code="wrong-type")
        return None
    function = message.get("function")
    name = function if isinstance(function, str) else ""  # none: the importer names it after its call
    part = reading.keep({"type": "tool-result", "toolCallId": call_id, "toolName": name, "output": output}, keep)
    rest = rest_of(message, ("role", "content", "tool_call_id", "function", "error"))
    return reading.keep({"role": "tool", "content": [part]}, rest)
