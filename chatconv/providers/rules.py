"""What the renderers share: the rules' error and repairs, and the turns Anthropic and Gemini take.

A broken rule is a ProviderRuleError naming the message, unless repairs are allowed, in which
case the fix is made and reported. Merging runs of one role for Anthropic and Gemini is how
those APIs take a conversation, not a repair.
"""

from __future__ import annotations

import base64
from dataclasses import dataclass, field
from typing import Callable
from urllib.parse import unquote_to_bytes

from ..problems import ChatconvError, Problem
from ..sources import exact_json


class ProviderRuleError(ChatconvError):
    """A message list that the target API would refuse."""

    def __init__(self, target: str, index: int | None, message: str, hint: str):
        path = "$" if index is None else f"$.messages[{index}]"
        super().__init__(Problem("<request>", None, None, path, f"{target}: {message}", "error", hint,
                                 "provider-rule"))
        self.target, self.index, self.rule = target, index, message


@dataclass
class Rendering:
    target: str
    repair: bool
    repairs: list[str] = field(default_factory=list)
    # Parts left out because the API has no place for them: (message index, problem code, what).
    # Not a broken rule (nothing the case asked is lost that the API could take): a warning.
    left: list[tuple[int | None, str, str]] = field(default_factory=list)

    def left_out(self, index: int | None, code: str, message: str) -> None:
        self.left.append((index, code, message))

    def broken(self, index: int | None, message: str, hint: str, fix: Callable[[], None] | None = None) -> None:
        """Raise for a broken rule, or, when repairs are allowed and one exists, make and note it."""
        if self.repair and fix is not None:
            fix()
            self.repairs.append(f"{self.target}: message {index}: {message} (repaired)")
            return
        raise ProviderRuleError(self.target, index, message, hint)


def message_parts_of(message: dict) -> list[dict]:
    content = message["content"]
    return [{"type": "text", "text": content}] if isinstance(content, str) else list(content)


def result_text(output: dict) -> str:
    """A tool result's output as text, for APIs that take results as strings; NotWritten for a
    value orjson does not write (nested deeper than 255 levels: it reads 1024)."""
    kind, value = output.get("type"), output.get("value")
    if kind in ("text", "error-text"):
        return value
    if kind == "content":
        return "\n".join(item.get("text", "") for item in value if item.get("type") == "text")
    return exact_json(value).decode()


def is_url(data: str) -> bool:
    """A web or data URL: what OpenAI takes as it is (Anthropic and Gemini: see media)."""
    return data.startswith(("http://", "https://", "data:"))


def tool_text_message(message: dict) -> dict | None:
    """A tool message that holds only text (as in eval input) has no place of its own in an API."""
    if message["role"] == "tool" and isinstance(message["content"], str):
        return {"role": "user", "content": f"[Tool]: {message['content']}"}
    return None


def system_and_turns(messages: list[dict], state: Rendering, assistant_role: str,
                     to_block: Callable[[dict, int, Rendering, str], dict | None], call: str, result: str,
                     result_id: str, call_id: str) -> tuple[str, list[dict]]:
    """How Anthropic and Gemini take a conversation: one system text up front, then turns of
    {"role", "blocks", "index"} that alternate, starting with the user, every `call` block
    answered by a `result` block (`result_id` naming its `call_id`) first in the next user turn.
    `to_block` makes a part's block, told the role of the message it is in (a tool-result in the
    assistant's own message answers a tool the provider ran: no `result` block)."""
    system, rest = _hoist_system(messages, state)
    turns = _merged_turns(rest, state, assistant_role, to_block)
    _check_turns(turns, state, call, result, result_id, call_id)
    return system, _without_emptied_turns(turns)


def _hoist_system(messages: list[dict], state: Rendering) -> tuple[str, list[dict]]:
    """Anthropic and Gemini take one system text before the conversation."""
    system, rest = [], []
    for index, message in enumerate(messages):
        if message["role"] != "system":
            rest.append(message)
        elif not message["content"].strip():
            # A system text of white space only is left out: Anthropic refuses it ("system: text
            # content blocks must contain non-whitespace text") and Gemini an empty part, and it
            # tells the model nothing, so leaving it out changes nothing the user asked.
            continue
        elif not rest:
            system.append(message["content"])
        else:
            state.broken(index, "a system message after the conversation has started",
                         "use --system-policy merge (or user/assistant) so that system text comes first",
                         lambda m=message: system.append(m["content"]))
    return "\n\n".join(system), rest


def _merged_turns(messages: list[dict], state: Rendering, assistant_role: str,
                   to_block: Callable[[dict, int, Rendering, str], dict | None]) -> list[dict]:
    """Turns of {"role", "blocks", "index"}: tool results go with the user, runs of one role merge."""
    turns: list[dict] = []
    for index, message in enumerate(messages):
        message = tool_text_message(message) or message
        role = assistant_role if message["role"] == "assistant" else "user"
        blocks = [b for b in (to_block(p, index, state, message["role"]) for p in message_parts_of(message)) if b is not None]
        # No turn when nothing of it can be sent (e.g. only reasoning, or repaired empty text).
        _add_turn(turns, role, blocks, index)
    return turns


def _add_turn(turns: list[dict], role: str, blocks: list[dict], index: int) -> None:
    """Append a turn of `blocks`, or add them to the last turn when it has the same role (runs of
    one role merge); no turn at all for no blocks (both APIs refuse an empty turn)."""
    if not blocks:
        return
    if turns and turns[-1]["role"] == role:
        turns[-1]["blocks"].extend(blocks)
    else:
        turns.append({"role": role, "blocks": blocks, "index": index})


def is_base64(data: str) -> bool:
    """Whether `data` is base64 (standard alphabet, padded): what Anthropic's and Gemini's inline
    data must be. A file id, a path or a gs:// URI in a part's data is not."""
    try:
        base64.b64decode(data, validate=True)
    except ValueError:
        return False
    return len(data) % 4 == 0


def media(part: dict) -> tuple[str, str, bool]:
    """(base64 data or URL, media type, whether it is a URL) of an image or file part.

    A data URL is no URL to Anthropic and Gemini: they take its payload as base64 data, with the
    media type the URL names (RFC 2397: a payload not in base64 is percent-encoded text)."""
    data = part["image"] if part["type"] == "image" else part["data"]
    media_type = part.get("mediaType", "image/png")
    if data.startswith("data:"):
        header, _, payload = data[len("data:"):].partition(",")
        kind, *parameters = header.split(";")  # parameters such as charset are not sent
        if parameters[-1:] != ["base64"]:
            payload = base64.b64encode(unquote_to_bytes(payload)).decode()
        return payload, kind or media_type, False
    return data, media_type, data.startswith(("http://", "https://"))


def _check_turns(turns: list[dict], state: Rendering, call: str, result: str, result_id: str, call_id: str) -> None:
    """Start with the user; every call answered in the next user turn, results first."""
    if not turns:
        state.broken(None, "no message to send: no user or assistant message",
                     "the API needs at least one user message; give the case a user message")
    if turns and turns[0]["role"] != "user":
        state.broken(turns[0]["index"], f"the conversation starts with the {turns[0]['role']}",
                     "the first message must come from the user",
                     lambda: turns.insert(0, {"role": "user", "blocks": [{"type": "text", "text": "(conversation start)"}],
                                              "index": 0}))
    for position, turn in enumerate(turns):
        calls = [b[call_id] for b in turn["blocks"] if b.get("type") == call]
        if turn["role"] == "user":
            results = [b for b in turn["blocks"] if b.get("type") == result]
            answered = _answered_ids(turns, position, call, call_id)
            for block in results:
                if block[result_id] not in answered:
                    state.broken(turn["index"], f"a {result} for {block[result_id]!r} answers no {call} of the turn before",
                                 f"each {result} must follow the assistant turn holding its {call}",
                                 lambda b=block, t=turn: _result_to_text(t, b, result_id))
            _results_first(turn, state, result)
        if calls:
            following = turns[position + 1] if position + 1 < len(turns) else None
            given = {b[result_id] for b in following["blocks"] if b.get("type") == result} if following else set()
            for missing in (c for c in calls if c not in given):
                state.broken(turn["index"], f"{call} {missing!r} is not answered in the next user message",
                             f"put a {result} for it first in the next user message",
                             lambda t=turn, m=missing: _drop_call(t, m, call, call_id))


def _without_emptied_turns(turns: list[dict]) -> list[dict]:
    """The turns with none left empty by a repair (a turn that held only a dropped call), and
    the runs of one role that leaves merged again: both APIs refuse an empty turn, and take
    alternating roles. Order and every remaining block are kept."""
    kept: list[dict] = []
    for turn in turns:
        _add_turn(kept, turn["role"], turn["blocks"], turn["index"])
    return kept


def _answered_ids(turns: list[dict], position: int, call: str, call_id: str) -> set:
    if position == 0 or turns[position - 1]["role"] == "user":
        return set()
    return {b[call_id] for b in turns[position - 1]["blocks"] if b.get("type") == call}


def _results_first(turn: dict, state: Rendering, result: str) -> None:
    blocks = turn["blocks"]
    kinds = [b.get("type") == result for b in blocks]
    if any(kinds) and kinds != sorted(kinds, reverse=True):
        state.broken(turn["index"], f"text comes before a {result} in a user message",
                     "tool results must come first in the user message",
                     lambda: blocks.sort(key=lambda b: b.get("type") != result))


def _result_to_text(turn: dict, block: dict, result_id: str) -> None:
    position = turn["blocks"].index(block)
    turn["blocks"][position] = {"type": "text", "text": f"[Tool result {block[result_id]}]: {block.get('content', '')}"}


def _drop_call(turn: dict, missing: str, call: str, call_id: str) -> None:
    turn["blocks"] = [b for b in turn["blocks"] if not (b.get("type") == call and b[call_id] == missing)]
