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

from dataclasses import dataclass
from typing import Any

from ..cases import Case
from ..cases.shorthand import compact_json
from ..eras.releases import Release
from .agentv import AgentVInputs, open_segment
from .context import EvalFileContext


class LoggedAnswers(list):
    """The answers of a conversation recorded whole (another tool's log), in order: where the
    test's input holds assistant messages (an earlier exchange), the log holds their answers
    first, and the turns' replies after them."""


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
    replies = usable_replies(case, replies)
    played = []
    for number, turn in enumerate(case.turns or [], 1):
        if number > 1:
            if replies is None or len(replies) < number - 1:
                return played, number
            history.append({"role": "assistant", "content": replies[number - 2]})
        text = turn["input"] if isinstance(turn["input"], str) else compact_json(turn["input"])
        history.append({"role": "user", "content": text})
        sent = _window(history, case.window_size)
        played.append(TurnPrompt(f"{case.id}/turn-{number}", AgentVInputs(release, text, sent)))
    return played, None


def usable_replies(case: Case, replies: list[str] | None) -> list[str] | None:
    """The replies to the turns of `case`: a log's answers (LoggedAnswers) less those of the
    test's own input (each run of its assistant messages), when the log starts with them."""
    if not isinstance(replies, LoggedAnswers):
        return replies
    roles = [m["role"] for m in case.messages]
    own = [m["content"] if isinstance(m["content"], str) else compact_json(m["content"])
           for index, m in enumerate(case.messages)
           if m["role"] == "assistant" and (index + 1 == len(roles) or roles[index + 1] != "assistant")]
    return replies[len(own):] if replies[:len(own)] == own else list(replies)


def _window(history: list[dict], size: float | None) -> list[dict]:
    """Every system message, then the last 2n others (all of them without a window)."""
    copied = [dict(message) for message in history]
    if size is None:
        return copied
    others = [m for m in copied if m["role"] != "system"]
    return [m for m in copied if m["role"] == "system"] + others[int(-size * 2):]


def _as_text(content: Any, case: Case, context: EvalFileContext, index: int, allow_outside_root: bool) -> str:
    """A message's content in the history: a string as it is, else its compact JSON, each file
    segment with the `path`, `text` and `resolvedPath` AgentV's loader gave it."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        content = [_resolved(segment, case, context, index, position, allow_outside_root)
                   for position, segment in enumerate(content)]
    return compact_json(content)


def _resolved(segment: Any, case: Case, context: EvalFileContext, index: int, position: int,
              allow_outside_root: bool) -> Any:
    if not (isinstance(segment, dict) and segment.get("type") == "file" and isinstance(segment.get("value"), str)):
        return segment
    value = segment["value"]
    found, data = open_segment(value, case, context, index, position, allow_outside_root)
    text = data.decode("utf-8", errors="replace")
    return {**segment, "path": value.lstrip("/\\"), "text": text, "resolvedPath": str(found)}
