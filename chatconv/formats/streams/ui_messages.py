"""The AI SDK's UI message stream (toUIMessageStream's chunks: `start`, `text-delta`,
`tool-input-available`, ...) assembled into the assistant's UIMessage, which ai-sdk-ui reads.
"""

from __future__ import annotations

from typing import Any


def ui_message(chunks: list[dict], notes: list[str]) -> dict:
    """The assistant's UIMessage, as the AI SDK's processUIMessageStream builds it: text and
    reasoning parts of their deltas (`done` at their end), tool parts through their states,
    sources, files and data parts as they come, a step-start for each step."""
    message: dict[str, Any] = {"id": "", "role": "assistant", "parts": []}
    parts, open_parts, tools = message["parts"], {}, {}
    for chunk in chunks:
        kind = chunk.get("type")
        if kind in ("start", "finish", "message-metadata"):
            if isinstance(chunk.get("messageId"), str):
                message["id"] = chunk["messageId"]
            if isinstance(chunk.get("messageMetadata"), dict):
                message["metadata"] = {**message.get("metadata", {}), **chunk["messageMetadata"]}
        elif kind == "start-step":
            parts.append({"type": "step-start"})
        elif kind in ("text-start", "reasoning-start"):
            part = {"type": kind.split("-")[0], "text": "", "state": "streaming"}
            _ui_metadata(part, chunk)
            open_parts[(part["type"], chunk.get("id"))] = part
            parts.append(part)
        elif kind in ("text-delta", "reasoning-delta", "text-end", "reasoning-end"):
            part = open_parts.get((kind.split("-")[0], chunk.get("id")))
            if part is None:
                continue  # a delta of a part never started: nothing to add it to
            # (streamText's fullStream says `text` where the UI stream says `delta`)
            part["text"] += chunk.get("delta", chunk.get("text", "")) if kind.endswith("delta") else ""
            _ui_metadata(part, chunk)
            if kind.endswith("end"):
                part["state"] = "done"
        elif kind.startswith("tool-"):
            _ui_tool(chunk, kind, parts, tools)
        elif kind.startswith("data-"):
            if chunk.get("transient"):
                continue  # sent to the client, never kept in the message
            same = next((p for p in parts if p.get("type") == kind and "id" in chunk and p.get("id") == chunk["id"]), None)
            if same is not None:
                same["data"] = chunk.get("data")  # a data part sent again: it replaces the one before
            else:
                parts.append(dict(chunk))
        elif kind in ("source-url", "source-document", "file"):
            parts.append(dict(chunk))
    if any(p.get("state") in ("streaming", "input-streaming") for p in parts):
        notes.append("the stream ends with parts unfinished: they are what came")
    for part in parts:
        part.pop("_inputText", None)
    return message


def _ui_metadata(part: dict, chunk: dict) -> None:
    if isinstance(chunk.get("providerMetadata"), dict):
        part["providerMetadata"] = {**part.get("providerMetadata", {}), **chunk["providerMetadata"]}


def _ui_tool(chunk: dict, kind: str, parts: list, tools: dict) -> None:
    call_id = chunk.get("toolCallId")
    part = tools.get(call_id)
    if part is None:
        name = chunk.get("toolName", "")
        part = {"type": "dynamic-tool", "toolName": name} if chunk.get("dynamic") else {"type": f"tool-{name}"}
        part.update({"toolCallId": call_id, "state": "input-streaming"})
        if chunk.get("providerExecuted"):
            part["providerExecuted"] = True
        tools[call_id] = part
        parts.append(part)
    if kind == "tool-input-delta":
        part["_inputText"] = part.get("_inputText", "") + chunk.get("inputTextDelta", "")
    elif kind in ("tool-input-available", "tool-input-error"):
        part.pop("_inputText", None)
        part["input"] = chunk.get("input")
        part["state"] = "input-available" if kind == "tool-input-available" else "output-error"
        if kind == "tool-input-error":
            part["errorText"] = chunk.get("errorText", "")
        if isinstance(chunk.get("providerMetadata"), dict):
            part["callProviderMetadata"] = chunk["providerMetadata"]
    elif kind == "tool-output-available":
        part["output"], part["state"] = chunk.get("output"), "output-available"
    elif kind == "tool-output-error":
        part["errorText"], part["state"] = chunk.get("errorText", ""), "output-error"
    if part.get("state") != "input-streaming":
        part.pop("_inputText", None)
    elif "_inputText" in part:  # cut mid-input: the text that came, as the input
        part["input"] = part["_inputText"]
