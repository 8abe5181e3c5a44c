"""Bedrock Converse request bodies written back from model messages (__init__ reads them): the
fields import kept under providerOptions["bedrock-converse"] restore what a model message has no
place for, so that import then export gives the body back; what Converse cannot take from other
formats' messages is left out, noted.
"""

from __future__ import annotations

import base64
import binascii
from typing import Any

from ..reading import kept

NAME = "bedrock-converse"
DOCUMENT_TYPES = {"pdf": "application/pdf", "csv": "text/csv", "doc": "application/msword",
                  "docx": "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
                  "xls": "application/vnd.ms-excel",
                  "xlsx": "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
                  "html": "text/html", "txt": "text/plain", "md": "text/markdown"}


MARKS = ("joined", "system", "first", "bodyKeys", "response", "output", "cachePoint", "format", "source", "noInput", "keys",
         "reasoningText", "contentList")


def write(messages: list[dict], metadata: dict, gather_tools: bool = False, notes: list | None = None) -> dict:
    """A Converse request body: the system messages as `system` blocks, the others as messages
    (tool results in user messages, the joined runs back as one), then what import kept of the body."""
    notes = notes if notes is not None else []
    system, out = [], []
    for index, message in enumerate(messages):
        own = kept(message, NAME)
        if message["role"] == "system":
            system.append({"text": message["content"] if isinstance(message["content"], str) else "",
                           **_extra(own)})
            if "cachePoint" in own:
                system.append({"cachePoint": own["cachePoint"]})
            continue
        role = "assistant" if message["role"] == "assistant" else "user"
        blocks = _blocks(message, index, notes)
        if out and out[-1]["role"] == role:  # Converse's roles alternate: tool results and the joined runs are one
            out[-1]["content"] += blocks
        else:
            out.append({"role": role, "content": blocks, **_extra(own)})
    body: dict[str, Any] = {"messages": out}
    own = kept(messages[0], NAME) if messages else {}
    if system:
        body = {"system": system, **body} if own.get("first") else {**body, "system": system}
    return _ordered({**body, **metadata}, own.get("bodyKeys"))


def _extra(own: dict) -> dict:
    return {key: value for key, value in own.items() if key not in MARKS}


def _blocks(message: dict, index: int, notes: list) -> list[dict]:
    content = message["content"]
    parts = [{"type": "text", "text": content}] if isinstance(content, str) else content
    blocks = []
    for part in parts:
        own = kept(part, NAME)
        block = _written(part, own, index, notes)
        if block is None:
            continue
        blocks.append(block)
        if "cachePoint" in own:
            blocks.append({"cachePoint": own["cachePoint"]})
    return blocks


def _ordered(value: dict, keys: Any) -> dict:
    return {**{key: value[key] for key in keys if key in value}, **value} if isinstance(keys, list) else value


IMAGE_FORMATS = ("png", "jpeg", "gif", "webp")
FORMAT_OF_TYPE = {media: fmt for fmt, media in DOCUMENT_TYPES.items()}


def _media(data: str, media: str, own: dict, name: str | None, index: int, notes: list) -> dict | None:
    """An image or document block of base64 data (a data URL's too); None, noted, for what
    Converse cannot take (a web URL, a type it has no format for)."""
    if data.startswith("data:"):
        media, _, data = data[5:].partition(";base64,")
    if data.startswith("s3://"):
        source = {"s3Location": {"uri": data}}
    elif _is_base64(data):
        source = {"bytes": data}
    else:
        notes.append((index, "part-left-out", "a file given by URL or path is left out (Converse takes its bytes or "
                      "an S3 location)"))
        return None
    fmt = own.get("format")
    if media.startswith("image/"):
        fmt = fmt or ("jpeg" if media == "image/jpg" else media.rpartition("/")[2])
        kind = "image" if fmt in IMAGE_FORMATS else None
    else:
        fmt, kind = fmt or FORMAT_OF_TYPE.get(media), "document"
        kind = kind if fmt in DOCUMENT_TYPES else None
    if kind is None:
        notes.append((index, "part-left-out", f"a {media} file is left out (Converse has no format for it)"))
        return None
    value: dict[str, Any] = {"format": fmt, "source": {**source, **(own.get("source") or {})}}
    if kind == "document":
        value["name"] = name or f"document-{index}"  # Converse requires a name
    return {kind: _ordered({**value, **_extra(own)}, own.get("keys"))}


def _is_base64(data: str) -> bool:
    try:
        base64.b64decode(data, validate=True)
    except (binascii.Error, ValueError):
        return False
    return True


def _written(part: dict, own: dict, index: int, notes: list) -> dict | None:
    kind = part["type"]
    if kind == "text":
        return {"text": part["text"]}
    if kind == "image":
        return _media(part["image"], part.get("mediaType") or "image/png", own, None, index, notes)
    if kind == "file":
        return _media(part["data"], part["mediaType"], own, part.get("filename"), index, notes)
    if kind == "tool-call" and not part.get("providerExecuted"):
        value = {"toolUseId": part["toolCallId"], "name": part["toolName"]}
        if not (own.get("noInput") and part.get("input") == {}):
            value["input"] = part.get("input", {})
        return {"toolUse": _ordered({**value, **_extra(own)}, own.get("keys"))}
    if kind == "tool-result" and not part.get("providerExecuted"):
        value = {"toolUseId": part["toolCallId"], "content": _result_content(part["output"], own, index, notes),
                 **_extra(own)}
        if part["output"]["type"].startswith("error") and "status" not in value:
            value["status"] = "error"
        return {"toolResult": _ordered(value, own.get("keys"))}
    if kind == "reasoning":
        return {"reasoningContent": {"reasoningText": {"text": part["text"], **(own.get("reasoningText") or {})},
                                     **_extra(own)}}
    notes.append((index, "part-left-out", f"a {kind} part{' the provider ran' if part.get('providerExecuted') else ''}"
                  " is left out (Converse has no block for it)"))
    return None


def _result_content(output: dict, own: dict, index: int, notes: list) -> list:
    """A toolResult's content blocks: as read, or text, JSON, and the text and images of a content output."""
    kind, value = output["type"], output.get("value")
    if own.get("contentList") and isinstance(value, list):
        return value
    if kind in ("text", "error-text"):
        return [{"text": value}]
    if kind == "content" and isinstance(value, list):
        blocks = []
        for item in value:
            if item.get("type") == "text":
                blocks.append({"text": item["text"]})
            elif item.get("type") == "media":
                block = _media(item["data"], item["mediaType"], {}, None, index, notes)
                if block is not None:
                    blocks.append(block)
        return blocks
    return [{"json": value}]  # (Converse's json block holds any JSON value)
