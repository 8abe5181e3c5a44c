"""Gemini generateContent: `system_instruction`, roles user and model, functionCall turns followed
by as many functionResponse parts."""

from __future__ import annotations

from typing import Any

from ..messages import is_error_output
from .rules import Rendering, media, system_and_turns, text_block


def render_gemini(messages: list[dict], repair: bool = False) -> tuple[dict, list[str]]:
    """The Gemini generateContent request body holding `messages` (AI SDK model messages), and the repairs made.

    A message the API would refuse raises ProviderRuleError; with `repair`, a rule that has a
    fix is repaired instead and the repair noted."""
    state = Rendering("gemini", repair)
    system, turns = system_and_turns(messages, state, "model", _gemini_part,
                                     "functionCall", "functionResponse", "id", "id")
    body: dict[str, Any] = {}
    if system:
        body["system_instruction"] = {"parts": [{"text": system}]}
    body["contents"] = [{"role": t["role"], "parts": [_gemini_wire(b) for b in t["blocks"]]} for t in turns]
    return body, state.repairs


def _gemini_part(part: dict, index: int, state: Rendering, role: str) -> dict | None:
    kind = part["type"]
    if kind == "text":
        return text_block(part, index, state, "an empty text part", "Gemini refuses empty parts; remove it")
    if kind in ("image", "file"):
        data, media_type, is_url = media(part)
        if is_url:
            return {"type": "wire", "part": {"file_data": {"mime_type": media_type, "file_uri": data}}}
        return {"type": "wire", "part": {"inline_data": {"mime_type": media_type, "data": data}}}
    if kind == "tool-call" and part.get("providerExecuted"):  # code the model ran itself: no response awaited
        return {"type": "wire", "part": {"executableCode": part.get("input", {})}}
    if kind == "tool-call":
        return {"type": "functionCall", "id": part["toolCallId"], "name": part["toolName"], "args": part.get("input", {})}
    if kind == "tool-result" and role == "assistant":  # the result of that code, in the same turn
        return {"type": "wire", "part": {"codeExecutionResult": part["output"].get("value")}}
    if kind == "tool-result":
        output = part["output"]
        value = output.get("value")
        response = value if isinstance(value, dict) else {"error" if is_error_output(output) else "result": value}
        return {"type": "functionResponse", "id": part["toolCallId"], "name": part["toolName"], "response": response}
    return None


def _gemini_wire(block: dict) -> dict:
    if block["type"] == "text":
        return {"text": block["text"]}
    if block["type"] in ("functionCall", "functionResponse"):
        payload = "args" if block["type"] == "functionCall" else "response"
        return {block["type"]: {"id": block["id"], "name": block["name"], payload: block[payload]}}
    return block["part"]
