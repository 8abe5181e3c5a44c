"""An app's chat history -> native API messages, trimmed to a token budget (seed 003, SPEC §4).

The history is never flattened into one text blob: each stored message becomes one API message,
so the model sees who said what.
"""

from __future__ import annotations

import math
from typing import Callable, Iterable, Mapping

import orjson

from .problems import ChatconvError, Problem

# The companion app of seed 003 stores the human side as "human" and its persona's own
# messages as "system"; to the API the persona is the assistant.
DEFAULT_ROLE_MAP = {"human": "user", "system": "assistant", "user": "user", "assistant": "assistant"}


def to_native_messages(history: Iterable[Mapping], current_message: str | None = None,
                       role_map: Mapping[str, str] = DEFAULT_ROLE_MAP) -> list[dict]:
    """One API message per history message, roles mapped, then the current user message if any.

    A heartbeat (no current message) leaves the history ending with the assistant's last word.
    """
    messages = []
    for index, message in enumerate(history):
        role = message.get("role")
        if role not in role_map:
            raise ChatconvError(Problem(
                "<history>", None, None, f"$[{index}].role", f"role {role!r} has no API role",
                "error", f"add it to role_map (known: {', '.join(role_map)})", "bad-value"))
        messages.append({"role": role_map[role], "content": message.get("content", "")})
    if current_message:
        messages.append({"role": "user", "content": current_message})
    return messages


def estimate_tokens(message: Mapping) -> int:
    """About four characters a token, plus a few for the message's framing."""
    content = message.get("content", "")
    text = content if isinstance(content, str) else orjson.dumps(content).decode()
    if message.get("tool_calls"):
        text += orjson.dumps(message["tool_calls"]).decode()
    return math.ceil(len(text) / 4) + 4


def _answers_tools(message: Mapping) -> bool:
    content = message.get("content")
    return isinstance(content, list) and any(
        isinstance(p, dict) and p.get("type") in ("tool-result", "tool_result") for p in content)


def split_turns(messages: list[dict]) -> list[list[dict]]:
    """Turns: each starts at a user message, so a tool call and its results share a turn."""
    turns: list[list[dict]] = []
    for message in messages:
        starts_turn = message.get("role") == "user" and not _answers_tools(message)
        if starts_turn or not turns:
            turns.append([message])
        else:
            turns[-1].append(message)
    return turns


def trim_to_budget(system_prompt: str | None, messages: list[dict], budget: int,
                   count_tokens: Callable[[Mapping], int] = estimate_tokens) -> list[dict]:
    """The system prompt and the newest whole turns that fit in `budget` tokens, in order.

    Whole turns are dropped from the oldest. The newest turn is always kept, even over budget:
    without it there is nothing to answer.
    """
    system = [{"role": "system", "content": system_prompt}] if system_prompt else []
    used = sum(count_tokens(m) for m in system)
    kept: list[list[dict]] = []
    for turn in reversed(split_turns(messages)):
        cost = sum(count_tokens(m) for m in turn)
        if kept and used + cost > budget:
            break
        kept.insert(0, turn)
        used += cost
    return system + [m for turn in kept for m in turn]
