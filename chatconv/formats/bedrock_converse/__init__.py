"""Amazon Bedrock Converse: request bodies (`messages` of content blocks keyed by kind, `system`
blocks, `inferenceConfig`, `toolConfig`, ...) and responses (`output.message`, `stopReason`,
`usage`, `metrics`).

Read: `system` text blocks (a system message each), user and assistant messages and their
blocks: `text`, `image` and `document` (bytes as base64, as recordings hold them), `toolUse` (a
tool call), `toolResult` (a tool result: its text, JSON or their list, an error when its status
says so), `reasoningContent` (reasoning, its signature kept). A user message's toolResult blocks
become tool messages and its other blocks user messages, in order; the later ones of one
Converse message are marked `joined`, so that export writes them back as one. A `cachePoint`
block is kept on the part before it. The body's other fields are the conversation's metadata; a
response's fields stay on its assistant message under `response`.
"""

from __future__ import annotations

from typing import Any, Iterator

from ..reading import Imported, Reading, part_named, rest_of
from .body import DOCUMENT_TYPES, NAME, write

__all__ = ["NAME", "detect", "read", "write"]
TARGET = None  # no renderer of chatconv's; bodies are checked against botocore's Converse shapes in the suite
REQUESTS = True  # bodies are requests: a response recorded alone writes none (no-request)
KEYS = frozenset({"messages", "output", "stopReason"})
ROLES = ("user", "assistant")
BLOCKS = frozenset({"text", "image", "document", "video", "toolUse", "toolResult", "guardContent",
                    "reasoningContent", "cachePoint", "citationsContent"})
READ_BLOCKS = ("text", "image", "document", "toolUse", "toolResult", "reasoningContent", "cachePoint")


def detect(data: Any) -> bool:
    """A request (messages of blocks keyed by kind) or a response (output.message, stopReason)."""
    if not isinstance(data, dict):
        return False
    output = data.get("output")
    if isinstance(output, dict) and isinstance(output.get("message"), dict) and "stopReason" in data:
        return True
    messages = data.get("messages")
    return isinstance(messages, list) and bool(messages) and all(
        isinstance(message, dict) and message.get("role") in ROLES and isinstance(message.get("content"), list)
        and message["content"] and all(_is_block(block) for block in message["content"]) for message in messages)


def _is_block(block: Any) -> bool:
    return isinstance(block, dict) and "type" not in block and len(block) == 1 and not BLOCKS.isdisjoint(block)


def is_response(data: dict) -> bool:
    return "output" in data and "stopReason" in data


def read(reading: Reading) -> Iterator[Imported]:
    data = reading.data
    if is_response(data):
        message = data["output"].get("message") if isinstance(data["output"], dict) else None
        if not isinstance(message, dict):
            reading.error(("output",), "a Converse response holds output.message", code="wrong-type")
            return
        read_now = _message(message, reading, ("output", "message"))
        if read_now is None:
            return
        reading.keep(read_now[0], {"response": rest_of(data, ("output",)), "output": rest_of(data["output"], (
            "message",)) or None})
        yield Imported(None, read_now, {}, [("output", "message")] * len(read_now))
        return
    messages, paths = [], []
    system = data.get("system") or None  # an empty list stays with the body's fields
    if system is not None:
        if not isinstance(system, list):
            reading.error(("system",), "a Converse body's system is a list of blocks", code="wrong-type")
            return
        for index, block in enumerate(system):
            if isinstance(block, dict) and isinstance(block.get("text"), str):
                messages.append(reading.keep({"role": "system", "content": block["text"]}, {"system": True},
                                             rest_of(block, ("text",))))
                paths.append(("system", index))
            elif isinstance(block, dict) and "cachePoint" in block and messages:
                reading.keep(messages[-1], {"cachePoint": block["cachePoint"]})
            else:
                reading.error(("system", index), "a system block chatconv cannot read (text, or a cachePoint after one)",
                              code="wrong-type")
                return
    if not isinstance(data.get("messages"), list):
        reading.error(("messages",) if "messages" in data else (), "a Converse body holds `messages`, a list",
                      code="wrong-type" if "messages" in data else "missing-key")
        return
    for index, message in enumerate(data["messages"]):
        read_now = _message(message, reading, ("messages", index))
        if read_now is None:
            return
        messages += read_now
        paths += [("messages", index)] * len(read_now)
    first = system is not None and "messages" in data and list(data).index("system") < list(data).index("messages")
    rest = rest_of(data, ("messages", "system") if system is not None else ("messages",))
    written = (["system", "messages"] if first else ["messages"] + (["system"] if system is not None else [])) + list(rest)
    if messages:  # the body's system before its messages; its keys' order when export would write another
        reading.keep(messages[0], {"first": True if first else None, "bodyKeys": list(data) if list(data) != written else None})
    yield Imported(None, messages, rest_of(data, ("messages", "system") if system is not None else ("messages",)),
                   paths)


def _message(message: Any, reading: Reading, path: tuple) -> list[dict] | None:
    """The model messages of one Converse message: one, or for a user message with tool results a
    run of tool and user messages, the later ones marked `joined`."""
    if not isinstance(message, dict) or message.get("role") not in ROLES or not isinstance(message.get("content"), list):
        reading.error(path, "a Converse message is {role: user or assistant, content: [blocks]}", code="wrong-type")
        return None
    runs: list[dict] = []
    for index, block in enumerate(message["content"]):
        where = path + ("content", index)
        if isinstance(block, dict) and "cachePoint" in block and len(block) == 1:
            if not runs or not runs[-1]["content"]:
                reading.error(where, "a cachePoint with no block before it", code="wrong-type")
                return None
            reading.keep(runs[-1]["content"][-1], {"cachePoint": block["cachePoint"]})
            continue
        part = _block(block, message["role"], reading, where)
        if part is None:
            return None
        role = "tool" if part["type"] == "tool-result" else message["role"]
        if not runs or runs[-1]["role"] != role:
            runs.append({"role": role, "content": []})
        runs[-1]["content"].append(part)
    runs = runs or [{"role": message["role"], "content": []}]
    reading.keep(runs[0], {}, rest_of(message, ("role", "content")))
    for later in runs[1:]:
        reading.keep(later, {"joined": True})
    return runs


def _block(block: Any, role: str, reading: Reading, path: tuple) -> dict | None:
    kind = next(iter(block), None) if isinstance(block, dict) and len(block) == 1 else None
    value = block.get(kind) if kind else None
    if kind == "text" and isinstance(value, str):
        return {"type": "text", "text": value}
    if kind in ("image", "document") and isinstance(value, dict) and isinstance(value.get("format"), str) \
            and isinstance(value.get("source"), dict) and isinstance(value["source"].get("bytes"), str):
        data = value["source"]["bytes"]
        rest = {"source": rest_of(value["source"], ("bytes",)) or None, **rest_of(value, ("format", "source"))}
        if kind == "image":
            part = {"type": "image", "image": data, "mediaType": f"image/{value['format']}"}
        else:
            part = {"type": "file", "data": data, "mediaType": DOCUMENT_TYPES.get(value["format"], "application/octet-stream")}
            if isinstance(value.get("name"), str):
                part["filename"] = value["name"]
                rest.pop("name")
        order = ["format", "source", *(["name"] if "filename" in part else []), *(k for k in rest if k not in ("source",))]
        return reading.keep(part, {"format": value["format"], "keys": list(value) if list(value) != order else None}
                            | {k: v for k, v in rest.items() if v is not None})
    if kind == "toolUse" and isinstance(value, dict) and isinstance(value.get("toolUseId"), str) \
            and isinstance(value.get("name"), str) and role == "assistant":
        part = {"type": "tool-call", "toolCallId": value["toolUseId"], "toolName": value["name"],
                "input": value.get("input", {})}
        return reading.keep(part, {"noInput": True if "input" not in value else None,
                                   "keys": list(value) if list(value)[:3] != ["toolUseId", "name", "input"] else None},
                            rest_of(value, ("toolUseId", "name", "input")))
    if kind == "toolResult" and isinstance(value, dict) and isinstance(value.get("toolUseId"), str) and role == "user":
        return _result(value, reading, path)
    if kind == "reasoningContent" and isinstance(value, dict) and isinstance(value.get("reasoningText"), dict) \
            and isinstance(value["reasoningText"].get("text"), str):
        inner = value["reasoningText"]
        return reading.keep({"type": "reasoning", "text": inner["text"]},
                            {"reasoningText": rest_of(inner, ("text",)) or None}, rest_of(value, ("reasoningText",)))
    what = f"a {kind} block" if kind in BLOCKS else part_named(kind) if not isinstance(block, dict) or len(block) != 1 \
        else f"a block of kind {kind!r}"
    reading.error(path, f"{what} chatconv cannot read here",
                  f"Converse blocks read: {', '.join(READ_BLOCKS)} (toolUse in assistant, toolResult in user messages)",
                  code="wrong-type")
    return None


def _result(value: dict, reading: Reading, path: tuple) -> dict | None:
    content = value.get("content", [])
    error = value.get("status") == "error"
    if isinstance(content, list) and len(content) == 1 and isinstance(content[0], dict) and len(content[0]) == 1 \
            and isinstance(content[0].get("text"), str):
        output = {"type": "error-text" if error else "text", "value": content[0]["text"]}
    elif isinstance(content, list) and len(content) == 1 and isinstance(content[0], dict) and set(content[0]) == {"json"}:
        output = {"type": "error-json" if error else "json", "value": content[0]["json"]}
    elif isinstance(content, list):
        output = {"type": "error-json" if error else "json", "value": content}
    else:
        reading.error(path + ("toolResult", "content"), "a toolResult's content is a list of blocks", code="wrong-type")
        return None
    marks = {"contentList": True if output["value"] is content else None,
             "keys": list(value) if list(value)[:2] != ["toolUseId", "content"] else None}
    return reading.keep({"type": "tool-result", "toolCallId": value["toolUseId"], "toolName": "", "output": output},
                        marks, rest_of(value, ("toolUseId", "content")))
