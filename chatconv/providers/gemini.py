"""Gemini generateContent: `system_instruction`, roles user and model, functionCall turns followed
by as many functionResponse parts."""

from __future__ import annotations

from typing import Any

from ..messages import is_error_output
from .rules import Rendering, media, system_and_turns


def render_gemini(messages: list[dict], repair: bool = False, warnings: list | None = None) -> tuple[dict, list[str]]:
    """The Gemini generateContent request body holding `messages` (AI SDK model messages), and the repairs made.

    A message the API would refuse raises ProviderRuleError; with `repair`, a rule that has a
    fix is repaired instead and the repair noted. A tool another provider ran itself (no
    executableCode of Gemini's) is left out, noted in `warnings` as (message index, code, what)."""
    state = Rendering("gemini", repair)
    system, turns = system_and_turns(messages, state, "model", _gemini_part,
                                     "functionCall", "functionResponse", "id", "id")
    body: dict[str, Any] = {}
    if system:
        body["system_instruction"] = {"parts": [{"text": system}]}
    body["contents"] = [{"role": t["role"], "parts": [_gemini_wire(b) for b in t["blocks"]]} for t in turns]
    if warnings is not None:
        warnings.extend(state.left)
    return body, state.repairs


def _gemini_part(part: dict, index: int, state: Rendering, role: str) -> dict | None:
    kind = part["type"]
    if kind == "text":
        if not part["text"].strip():  # Gemini refuses an empty text part; white space says nothing: as for Anthropic
            state.left_out(index, "blank-text", "a text part of white space only is left out (Gemini refuses empty text)")
            return None
        return {"type": "text", "text": part["text"]}
    if kind in ("image", "file"):
        data, media_type, is_url = media(part)
        if is_url:
            return {"type": "wire", "part": {"file_data": {"mime_type": media_type, "file_uri": data}}}
        return {"type": "wire", "part": {"inline_data": {"mime_type": media_type, "data": data}}}
    if kind in ("tool-call", "tool-result") and role == "assistant" and part.get("providerExecuted", kind == "tool-result"):
        # Code the model ran itself, and its result in the same turn: no response awaited. Only
        # Gemini's own (executableCode) has a place; another provider's server tool (a web
        # search) is left out, with a warning.
        value = part.get("input", {}) if kind == "tool-call" else part["output"].get("value")
        if is_code_execution(part, value):
            return {"type": "wire", "part": {"executableCode" if kind == "tool-call" else "codeExecutionResult": value}}
        state.left_out(index, "part-left-out", f"the {'call' if kind == 'tool-call' else 'result'} of "
                       f"{part['toolName']!r}, a tool another provider ran itself, is left out (Gemini has no place for it)")
        return None
    if kind == "tool-call" and not isinstance(part.get("input", {}), dict):
        state.broken(index, f"tool call {part['toolCallId']!r} has an input that is not an object",
                     "functionCall takes the call's args as a JSON object; arguments logged as text that is not "
                     "JSON have no place in it")
    if kind == "tool-call":
        return {"type": "functionCall", "id": part["toolCallId"], "name": part["toolName"], "args": part.get("input", {})}
    if kind == "tool-result":
        output = part["output"]
        value = output.get("value")
        response = value if isinstance(value, dict) else {"error" if is_error_output(output) else "result": value}
        return {"type": "functionResponse", "id": part["toolCallId"], "name": part["toolName"], "response": response}
    return None


CODE_TOOL = "code_execution"  # the name the AI SDK gives Gemini's own code execution
_CODE_FIELDS = {"tool-call": {"code", "language", "id"}, "tool-result": {"outcome", "output", "id"}}


def is_code_execution(part: dict, value) -> bool:
    """Whether a provider-executed call (or its result) is Gemini's code execution, with the
    fields executableCode (codeExecutionResult) takes."""
    return (part["toolName"] == CODE_TOOL and isinstance(value, dict)
            and set(value) <= _CODE_FIELDS[part["type"]])


def _gemini_wire(block: dict) -> dict:
    if block["type"] == "text":
        return {"text": block["text"]}
    if block["type"] in ("functionCall", "functionResponse"):
        payload = "args" if block["type"] == "functionCall" else "response"
        return {block["type"]: {"id": block["id"], "name": block["name"], payload: block[payload]}}
    return block["part"]
