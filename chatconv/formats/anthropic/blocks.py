"""Anthropic content blocks read as AI SDK parts and written back (the Messages API's blocks, as
Claude Code's transcripts hold them too).

Each block's fields that a part has no place for stay under providerOptions[format] of the part
(cache_control, citations, a thinking block's signature, a document's context); so do the marks
that say how to write it back where the part alone cannot tell (a source that is not base64 or a
web URL). The format's name is the reading's, so that claude-code keeps what it read under its own.
"""

from __future__ import annotations

import base64
from typing import Any

import orjson

from ...providers.rules import is_base64, media
from ...sources import exact_json
from ..reading import Reading, free_of_marks, kept, rest_of, string_value

USER_BLOCKS = ("text", "image", "document", "tool_result")
# server_tool_use and mcp_tool_use (the MCP connector's) are calls the API ran itself; their
# results (web_search_tool_result, mcp_tool_result, ...) follow them in the assistant's content.
ASSISTANT_BLOCKS = ("text", "thinking", "redacted_thinking", "tool_use", "server_tool_use", "mcp_tool_use")
# Marks this module keeps to write a block back; the rest of what is kept is the block's own fields.
MARKS = ("sourceType", "source", "redactedData", "rawContent", "noContent", "is_error", "type")


def read_block(block: Any, reading: Reading, path: tuple, role: str) -> dict | None:
    """The part of one block of a `role` message, or None with an error at `path`."""
    kind = block.get("type") if isinstance(block, dict) else None
    kind = kind if isinstance(kind, str) else None  # no block's type (and no key of the tables below)
    server_result = role == "assistant" and kind is not None and kind.endswith("_tool_result") and kind != "tool_result"
    if not free_of_marks(block, MARKS, _CONSUMED.get("server_tool_result" if server_result else kind, ("type",)),
                         reading, path):
        return None
    allowed = USER_BLOCKS if role == "user" else ASSISTANT_BLOCKS
    try:
        if kind in allowed or server_result:
            return _READERS["server_tool_result" if server_result else kind](block, reading, path)
    except (KeyError, TypeError, ValueError, AttributeError):
        pass
    what = f"a block of type {kind!r}" if kind is not None else "a block without a string type"
    reading.error(path, f"{what} that chatconv cannot read in the {role}'s message",
                  f"{role} blocks are {', '.join(allowed)}{' and server tool results' if role == 'assistant' else ''}, "
                  "with the fields the Messages API gives them", code="wrong-type")
    return None


# The block fields each reader turns into part fields: the others are kept beside the marks.
_CONSUMED = {"image": ("type", "source"), "document": ("type", "source"), "tool_result": ("type", "is_error"),
             "server_tool_result": ("type", "is_error")}



def _text(block: dict, reading: Reading, path: tuple) -> dict:
    return reading.keep({"type": "text", "text": string_value(block["text"])}, {}, rest_of(block, ("type", "text")))


def _image(block: dict, reading: Reading, path: tuple) -> dict:
    source = block["source"]
    kind = source["type"]
    value = string_value(source["data"] if kind == "base64" else source["url"] if kind == "url" else source["file_id"])
    part = {"type": "image", "image": value}
    if kind == "base64" and isinstance(source.get("media_type"), str):
        part["mediaType"] = source["media_type"]
    inferred = "base64" if "mediaType" in part else "url" if value.startswith(("http://", "https://")) else None
    extra = rest_of(source, ("type", "data", "url", "file_id", "media_type" if "mediaType" in part else ""))
    return reading.keep(part, {"sourceType": kind if kind != inferred else None, "source": extra or None},
                        rest_of(block, ("type", "source")))


def _document(block: dict, reading: Reading, path: tuple) -> dict:
    """A document as a file part. A file part's data is base64 or a URL, so a text (or content)
    source is the base64 of its text (of the content's JSON when it is a list of blocks); URL
    documents are PDFs, a file id's type is not known. The source's type is kept but for base64."""
    source = block["source"]
    kind = source["type"]
    if kind in ("base64", "text"):
        data, media_type, known = string_value(source["data"]), string_value(source["media_type"]), ("type", "data", "media_type")
        if kind == "text":
            data = base64.b64encode(data.encode()).decode()
    elif kind in ("url", "file"):
        key = "url" if kind == "url" else "file_id"
        data, media_type, known = string_value(source[key]), ("application/pdf" if kind == "url" else "application/octet-stream"), ("type", key)
    elif kind == "content":
        value = source["content"]
        if not isinstance(value, (str, list)):
            raise TypeError("document content")
        text = value if isinstance(value, str) else orjson.dumps(value).decode()
        data, known = base64.b64encode(text.encode()).decode(), ("type", "content")
        media_type = "text/plain" if isinstance(value, str) else "application/json"
    else:
        raise ValueError(kind)
    part = {"type": "file", "data": data, "mediaType": media_type}
    if isinstance(block.get("title"), str):
        part["filename"] = block["title"]
    return reading.keep(part, {"sourceType": kind if kind != "base64" else None, "source": rest_of(source, known) or None},
                        rest_of(block, ("type", "source", "title") if "filename" in part else ("type", "source")))


def _tool_use(block: dict, reading: Reading, path: tuple) -> dict:
    if not (isinstance(block.get("id"), str) and block["id"] and isinstance(block.get("name"), str) and block["name"]):
        raise KeyError("id")
    part = {"type": "tool-call", "toolCallId": block["id"], "toolName": block["name"], "input": block["input"]}
    ran_by_the_api = block["type"] != "tool_use"  # server_tool_use, mcp_tool_use (its server_name kept)
    if ran_by_the_api:
        part["providerExecuted"] = True
    return reading.keep(part, {"type": block["type"] if ran_by_the_api else None},
                        rest_of(block, ("type", "id", "name", "input")))


def _tool_result(block: dict, reading: Reading, path: tuple) -> dict:
    """A tool_result's output: text, error-text, content (text and base64 images), or, for any
    other list (blocks with their own fields, documents), the blocks as they are: json or error-json."""
    call_id, content, failed = string_value(block["tool_use_id"]), block.get("content", ""), block.get("is_error") is True
    if not call_id:
        raise KeyError("tool_use_id")
    marks: dict[str, Any] = {"noContent": True if "content" not in block else None,
                             "is_error": block["is_error"] if "is_error" in block and not failed else None}
    if isinstance(content, str):
        output = {"type": "error-text" if failed else "text", "value": content}
    elif isinstance(content, list):
        items = None if failed else [_result_item(item) for item in content]
        if items is None or None in items:
            output, marks["rawContent"] = {"type": "error-json" if failed else "json", "value": content}, True
        else:
            output = {"type": "content", "value": items}
    else:
        raise TypeError("tool_result content")
    part = {"type": "tool-result", "toolCallId": call_id, "toolName": "", "output": output}
    return reading.keep(part, marks, rest_of(block, ("type", "tool_use_id", "content", "is_error")))


def _result_item(item: Any) -> dict | None:
    """A content item for a text block or a base64 image with nothing else; else None."""
    if isinstance(item, dict) and item.get("type") == "text" and set(item) == {"type", "text"} and isinstance(item["text"], str):
        return {"type": "text", "text": item["text"]}
    source = item.get("source") if isinstance(item, dict) and item.get("type") == "image" and set(item) == {"type", "source"} else None
    if (isinstance(source, dict) and set(source) == {"type", "media_type", "data"} and source["type"] == "base64"
            and isinstance(source["data"], str) and isinstance(source["media_type"], str)):
        return {"type": "media", "data": source["data"], "mediaType": source["media_type"]}
    return None


def _server_tool_result(block: dict, reading: Reading, path: tuple) -> dict:
    """A server tool's result (web_search_tool_result, ...) in the assistant's content: its content as json."""
    call_id = string_value(block["tool_use_id"])
    failed = block.get("is_error") is True  # an mcp_tool_result says whether the MCP tool failed
    output = {"type": "error-json" if failed else "json", "value": block["content"]}
    part = {"type": "tool-result", "toolCallId": call_id, "toolName": "", "output": output}
    return reading.keep(part, {"type": block["type"], "is_error": block["is_error"] if "is_error" in block else None},
                        rest_of(block, ("type", "tool_use_id", "content", "is_error")))


def _thinking(block: dict, reading: Reading, path: tuple) -> dict:
    return reading.keep({"type": "reasoning", "text": string_value(block["thinking"])}, {}, rest_of(block, ("type", "thinking")))


def _redacted(block: dict, reading: Reading, path: tuple) -> dict:
    """Redacted thinking has no text to show: a reasoning part with empty text, its data kept."""
    return reading.keep({"type": "reasoning", "text": ""},
                        {"redactedData": string_value(block["data"])}, rest_of(block, ("type", "data")))


_READERS = {"text": _text, "image": _image, "document": _document, "tool_use": _tool_use, "server_tool_use": _tool_use,
            "mcp_tool_use": _tool_use,
            "tool_result": _tool_result, "server_tool_result": _server_tool_result, "thinking": _thinking,
            "redacted_thinking": _redacted}


# ---------------------------------------------------------------------------------------------
# Writing blocks


# The media a base64 source takes: images of these types, PDF documents (and plain text, as a text source).
IMAGE_TYPES = ("image/jpeg", "image/png", "image/gif", "image/webp")


def write_block(part: dict, name: str, index: int, notes: list, role: str = "user") -> dict | None:
    """The block of a part of a `role` message, with what import kept of it (`name`: the format
    it was kept under); None for a part the Messages API has no place for, noted in `notes` as
    (index, code, what): a tool another provider ran itself (its call, and its result in the
    assistant's content) is one."""
    own = kept(part, name)
    extra = {key: value for key, value in own.items() if key not in MARKS}
    kind = part["type"]
    if kind == "text":
        if not part["text"].strip():  # the API refuses it: "text content blocks must contain non-whitespace text"
            notes.append((index, "blank-text", "a text block of white space only is left out (Anthropic refuses it)"))
            return None
        return {"type": "text", "text": part["text"], **extra}
    if kind == "reasoning":
        if "redactedData" in own:
            return {"type": "redacted_thinking", "data": own["redactedData"], **extra}
        # The API takes thinking back only with the signature it gave it: the one kept, or Claude
        # Code's (its transcripts hold the API's own blocks).
        signature = own.get("signature", kept(part, "claude-code").get("signature"))
        if not isinstance(signature, str):
            notes.append((index, "part-left-out", "reasoning without Anthropic's signature is left out (the API takes "
                          "thinking back only signed)"))
            return None
        return {"type": "thinking", "thinking": part["text"], **extra, "signature": signature}
    if kind in ("image", "file"):
        return _media_block(part, own, extra, index, notes)
    server = own.get("type") in ("server_tool_use", "mcp_tool_use", None) and own.get("type")
    if kind == "tool-call" and part.get("providerExecuted") and not server:
        notes.append((index, "part-left-out", f"the call of {part['toolName']!r}, a tool another provider ran itself, "
                      "is left out (Anthropic has no place for it)"))
        return None
    if kind == "tool-result" and role == "assistant" and not own.get("type"):
        notes.append((index, "part-left-out", f"the result of {part['toolName']!r}, a tool another provider ran "
                      "itself, is left out (Anthropic has no place for it)"))
        return None
    if kind == "tool-call":
        return {"type": own.get("type", "tool_use"), "id": part["toolCallId"], "name": part["toolName"],
                "input": part.get("input", {}), **extra}
    if kind == "tool-result" and own.get("type"):
        error = {"is_error": own["is_error"]} if "is_error" in own else {}
        return {"type": own["type"], "tool_use_id": part["toolCallId"], **error, "content": part["output"]["value"],
                **extra}
    return _result_block(part, own, extra)


def _media_block(part: dict, own: dict, extra: dict, index: int, notes: list) -> dict | None:
    kind = own.get("sourceType")
    value, media_type = part["image"] if part["type"] == "image" else part["data"], part.get("mediaType")
    if kind is None:  # as import left it: base64 with its type or a web URL; another format's data URL is base64
        value, media_type, is_url = media(part)
        kind = "url" if is_url else "base64"
        if kind == "base64" and not _takes_base64(part["type"], value, media_type):
            notes.append((index, "part-left-out", f"a {part['type']} part of type {media_type} whose data is "
                          f"{'base64' if is_base64(value) else repr(value[:40])} is left out (Anthropic takes base64 "
                          "images (JPEG, PNG, GIF, WebP), PDFs and plain text, and media by web URL)"))
            return None
        if kind == "base64" and part["type"] == "file" and media_type == "text/plain":
            kind = "text"  # the API's plain text source: the text itself
    if kind == "base64":
        source = {"type": "base64", **({"media_type": media_type} if media_type else {}), "data": value}
    elif kind in ("url", "file"):
        source = {"type": kind, "url" if kind == "url" else "file_id": value}
    elif kind == "text":
        source = {"type": "text", "media_type": media_type, "data": base64.b64decode(value).decode()}
    else:  # content: its text, or its blocks
        text = base64.b64decode(value).decode()
        source = {"type": "content", "content": text if media_type == "text/plain" else orjson.loads(text)}
    source.update(own.get("source") or {})
    block = {"type": "image" if part["type"] == "image" else "document", "source": source}
    if part.get("filename") is not None:
        block["title"] = part["filename"]
    return {**block, **extra}


def _takes_base64(kind: str, value: str, media_type: str) -> bool:
    """Whether a base64 source takes this data: base64 of an image type it reads, of a PDF, or of UTF-8 plain text."""
    if not is_base64(value):  # a file id, a path, a gs:// URI
        return False
    if kind == "image":
        return media_type in IMAGE_TYPES
    if media_type == "text/plain":
        try:
            base64.b64decode(value).decode()
        except UnicodeDecodeError:
            return False
        return True
    return media_type == "application/pdf"


def _result_block(part: dict, own: dict, extra: dict) -> dict:
    output = part["output"]
    block: dict[str, Any] = {"type": "tool_result", "tool_use_id": part["toolCallId"]}
    if own.get("rawContent") or output["type"] in ("text", "error-text"):
        block["content"] = output["value"]
    elif output["type"] == "content":
        block["content"] = [{"type": "text", "text": item["text"]} if item["type"] == "text" else
                            {"type": "image", "source": {"type": "base64", "media_type": item["mediaType"],
                                                         "data": item["data"]}} for item in output["value"]]
    else:
        block["content"] = exact_json(output["value"]).decode()  # a JSON result (another format's) as its text
    if own.get("noContent") and block["content"] == "":
        del block["content"]
    if output["type"].startswith("error-"):
        block["is_error"] = True
    elif "is_error" in own:
        block["is_error"] = own["is_error"]
    return {**block, **extra}
