"""OpenAI / Azure OpenAI Chat Completions: `messages`, where a `tool` message answers an earlier
`tool_calls` id."""

from __future__ import annotations

from typing import Any

from ..sources import exact_json
from .rules import Rendering, is_url, result_text, tool_text_message


def render_openai(messages: list[dict], repair: bool = False, warnings: list | None = None) -> tuple[dict, list[str]]:
    """The OpenAI Chat Completions request body holding `messages` (AI SDK model messages), and the repairs made.

    A message the API would refuse raises ProviderRuleError; with `repair`, a rule that has a
    fix is repaired instead and the repair noted."""
    state = Rendering("openai", repair)
    out: list[dict] = []
    open_calls: set[str] = set()
    for index, message in enumerate(messages):
        message = tool_text_message(message) or message
        role = message["role"]
        if role == "system" or isinstance(message["content"], str):
            out.append({"role": role, "content": message["content"]})
            continue
        if role == "tool":
            for part in message["content"]:
                call_id = part["toolCallId"]
                if call_id not in open_calls:
                    state.broken(index, f"tool result {call_id!r} answers no earlier tool_calls id",
                                 "a tool message must follow the assistant message that made the call",
                                 lambda: None)
                    continue
                open_calls.discard(call_id)
                out.append({"role": "tool", "tool_call_id": call_id, "content": result_text(part["output"])})
            continue
        if role == "assistant":
            texts = [p["text"] for p in message["content"] if p["type"] == "text"]
            calls = [p for p in message["content"] if p["type"] == "tool-call"]
            entry: dict[str, Any] = {"role": "assistant", "content": "\n".join(texts) if texts else None}
            if calls:
                entry["tool_calls"] = [{"id": c["toolCallId"], "type": "function", "function": {
                    "name": c["toolName"], "arguments": exact_json(c.get("input", {})).decode()}} for c in calls]
                open_calls.update(c["toolCallId"] for c in calls)
            out.append(entry)
            continue
        out.append({"role": role, "content": [_openai_part(p) for p in message["content"]]})
    return {"messages": out}, state.repairs


def _openai_part(part: dict) -> dict:
    if part["type"] == "text":
        return {"type": "text", "text": part["text"]}
    if part["type"] == "image":
        url = part["image"] if is_url(part["image"]) else f"data:{part.get('mediaType', 'image/png')};base64,{part['image']}"
        return {"type": "image_url", "image_url": {"url": url}}
    file = {"file_data": part["data"] if is_url(part["data"]) else f"data:{part['mediaType']};base64,{part['data']}"}
    if part.get("filename"):
        file["filename"] = part["filename"]
    return {"type": "file", "file": file}
