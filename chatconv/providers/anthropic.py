"""Anthropic Messages: `system` up front, user and assistant alternating, every tool_use answered
by a tool_result first in the next user message, no empty text."""

from __future__ import annotations

from typing import Any

from ..messages import is_error_output
from .rules import Rendering, media, result_text, system_and_turns, text_block


def render_anthropic(messages: list[dict], repair: bool = False) -> tuple[dict, list[str]]:
    """The Anthropic Messages request body holding `messages` (AI SDK model messages), and the repairs made.

    A message the API would refuse raises ProviderRuleError; with `repair`, a rule that has a
    fix is repaired instead and the repair noted."""
    state = Rendering("anthropic", repair)
    system, turns = system_and_turns(messages, state, "assistant", _anthropic_block,
                                     "tool_use", "tool_result", "tool_use_id", "id")
    _trim_final_assistant_text(turns)
    body: dict[str, Any] = {}
    if system:
        body["system"] = system
    body["messages"] = [{"role": t["role"], "content": _anthropic_content(t["blocks"])} for t in turns]
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
        return text_block(part, index, state, "an empty text block", "Anthropic refuses empty text; remove it")
    if kind in ("image", "file"):
        data, media_type, is_url = media(part)
        source = ({"type": "url", "url": data} if is_url else
                  {"type": "base64", "media_type": media_type, "data": data})
        return {"type": "image" if kind == "image" else "document", "source": source}
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
