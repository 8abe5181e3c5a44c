"""Anthropic Messages: `system` up front, user and assistant alternating, every tool_use answered
by a tool_result first in the next user message, no empty text."""

from __future__ import annotations

from typing import Any

from ..messages import is_error_output
from .rules import Rendering, media, result_text, system_and_turns


def render_anthropic(messages: list[dict], repair: bool = False,
                     warnings: list | None = None) -> tuple[dict, list[str]]:
    """The Anthropic Messages request body holding `messages` (AI SDK model messages), and the repairs made.

    A message the API would refuse raises ProviderRuleError; with `repair`, a rule that has a
    fix is repaired instead and the repair noted. A text block of white space only is left out,
    noted in `warnings` as (message index, "blank-text", what)."""
    state = Rendering("anthropic", repair)
    system, turns = system_and_turns(messages, state, "assistant", _anthropic_block,
                                     "tool_use", "tool_result", "tool_use_id", "id")
    _trim_final_assistant_text(turns)
    body: dict[str, Any] = {}
    if system:
        body["system"] = system
    body["messages"] = [{"role": t["role"], "content": _anthropic_content(t["blocks"])} for t in turns]
    if warnings is not None:
        warnings.extend(state.left)
    return body, state.repairs


def _trim_final_assistant_text(turns: list[dict]) -> None:
    """A body that ends with the assistant (a prefill: the reply goes on from its text) has its
    last text's trailing white space trimmed. The Messages API refuses it: "messages: final
    assistant content cannot end with trailing whitespace" (its invalid_request_error), and the
    text the reply continues from is the same without it."""
    if turns and turns[-1]["role"] == "assistant" and turns[-1]["blocks"][-1]["type"] == "text":
        last = turns[-1]["blocks"][-1]
        turns[-1]["blocks"][-1] = {**last, "text": last["text"].rstrip()}


def _anthropic_content(blocks: list[dict]) -> str | list[dict]:
    if len(blocks) == 1 and blocks[0]["type"] == "text":
        return blocks[0]["text"]
    return blocks


def _anthropic_block(part: dict, index: int, state: Rendering, role: str) -> dict | None:
    kind = part["type"]
    if kind == "text":
        if not part["text"].strip():
            # The API refuses it ("text content blocks must contain non-whitespace text"), and it
            # says nothing: left out, with a warning (Claude Code writes one before thinking).
            state.left_out(index, "blank-text", "a text block of white space only is left out (Anthropic refuses it)")
            return None
        return {"type": "text", "text": part["text"]}
    if kind in ("image", "file"):
        data, media_type, is_url = media(part)
        source = ({"type": "url", "url": data} if is_url else
                  {"type": "base64", "media_type": media_type, "data": data})
        return {"type": "image" if kind == "image" else "document", "source": source}
    if kind == "tool-call" and not isinstance(part.get("input", {}), dict):
        state.broken(index, f"tool call {part['toolCallId']!r} has an input that is not an object",
                     "tool_use takes the call's input as a JSON object; arguments logged as text that is not "
                     "JSON have no place in it")
    if kind == "tool-call":
        # A tool the provider ran itself (web search) is answered in the assistant's own turn.
        kind = "server_tool_use" if part.get("providerExecuted") else "tool_use"
        return {"type": kind, "id": part["toolCallId"], "name": part["toolName"], "input": part.get("input", {})}
    if kind == "tool-result" and role == "assistant":  # a server tool's result (web_search_tool_result)
        return {"type": f"{part['toolName']}_tool_result", "tool_use_id": part["toolCallId"],
                "content": part["output"].get("value")}
    if kind == "tool-result":
        block = {"type": "tool_result", "tool_use_id": part["toolCallId"], "content": result_text(part["output"])}
        if is_error_output(part["output"]):
            block["is_error"] = True
        return block
    return None  # reasoning: the APIs take no reasoning back without the provider's signature
