"""A conversation test's turns played as AgentV plays them (from v4; read in its code at v4.42.4
and 58f316ca2): the prompt each turn sends, given the replies of the turns before it.

The history starts as the test's input, each message's content as text (content that is not a
string as its compact JSON, file segments with their path, text and resolved path). Each turn
adds its input as the user's (a message list as its compact JSON) and sends the history as the
chatPrompt, the turn's input as the question: `<test id>/turn-<n>`. Its reply is then added as
the assistant's. With `window_size` n a turn sees every system message and the last 2n others.
A turn's prompt holds every reply before it: where a reply is not given (a recording, --replies),
the turns stop there, and the caller says so.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from ..cases import Case
from ..eras.releases import Release
from ..problems import ChatconvError
from ..references import FileReferenceError, open_reference
from .agentv import AgentVInputs
from .context import EvalFileContext


@dataclass(frozen=True)
class TurnPrompt:
    id: str  # `<test id>/turn-<n>`, as AgentV names the turn
    inputs: AgentVInputs


def play_turns(case: Case, context: EvalFileContext, release: Release, replies: list[str] | None,
               allow_outside_root: bool = False) -> tuple[list[TurnPrompt], int | None]:
    """The prompt of each turn of `case` (a conversation test) that the replies given reach,
    and the number of the first turn left out for want of the reply before it (None: none)."""
    history = [{"role": m["role"], "content": _as_text(m["content"], case, context, index, allow_outside_root)}
               for index, m in enumerate(case.messages)]
    played = []
    for number, turn in enumerate(case.turns or [], 1):
        if number > 1:
            if replies is None or len(replies) < number - 1:
                return played, number
            history.append({"role": "assistant", "content": replies[number - 2]})
        text = turn["input"] if isinstance(turn["input"], str) else _compact(turn["input"])
        history.append({"role": "user", "content": text})
        sent = _window(history, case.window_size)
        played.append(TurnPrompt(f"{case.id}/turn-{number}", AgentVInputs(release, text, sent)))
    return played, None


def _window(history: list[dict], size: float | None) -> list[dict]:
    """Every system message, then the last 2n others (all of them without a window)."""
    copied = [dict(message) for message in history]
    if size is None:
        return copied
    others = [m for m in copied if m["role"] != "system"]
    return [m for m in copied if m["role"] == "system"] + others[int(-size * 2):]


def _compact(value: Any) -> str:
    """JSON.stringify's text of a value: no spaces, characters as they are."""
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def _as_text(content: Any, case: Case, context: EvalFileContext, index: int, allow_outside_root: bool) -> str:
    """A message's content in the history: a string as it is, else its compact JSON, each file
    segment with the `path`, `text` and `resolvedPath` AgentV's loader gave it."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        content = [_resolved(segment, case, context, index, position, allow_outside_root)
                   for position, segment in enumerate(content)]
    return _compact(content)


def _resolved(segment: Any, case: Case, context: EvalFileContext, index: int, position: int,
              allow_outside_root: bool) -> Any:
    if not (isinstance(segment, dict) and segment.get("type") == "file" and isinstance(segment.get("value"), str)):
        return segment
    value = segment["value"]
    try:
        found, data = open_reference(value, context.path.parent, context.root, allow_outside_root)
    except FileReferenceError as exc:
        where = case.content_paths[index] if index < len(case.content_paths) else case.path
        place = where[position] if isinstance(where, list) else where + (position, "value")
        raise ChatconvError(case.source.problem(place, exc.message, exc.hint, "file-reference")) from None
    text = data.decode("utf-8", errors="replace")
    return {**segment, "path": value.lstrip("/\\"), "text": text, "resolvedPath": str(found)}
