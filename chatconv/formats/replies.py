"""The replies of a recorded conversation, for the turns of a conversation test (`chatconv prompt
--replies`): each is the text AgentV adds to the history after a turn, the content of the
answer's last assistant message (a string as it is; text, image and file parts as their texts,
one per line; other content as its compact JSON).

A recording in chatconv's shape gives one reply per step (the step's output), in step order;
one in any format `chatconv import` reads gives one per answer (a run of assistant messages
between user messages), in order. Replies are filed under the conversation's id; a conversation
named as AgentV names a turn's call, `<test id>/turn-<n>`, gives turn n's reply of that test.
"""

from __future__ import annotations

import re
from contextlib import closing
from pathlib import Path
from typing import Any

from ..cases.shorthand import compact_json
from ..kinds import RECORDING_KINDS, detect_kind
from ..problems import ChatconvError, Problem
from ..prompt.turns import LoggedAnswers
from ..recordings import iter_recording_steps
from ..sources import iter_records
from .importing import ImportRun, iter_imported

_TURN_CALL = re.compile(r"^(.*)/turn-(\d+)$")
_CONTENT_PARTS = ("text", "image", "file")


def read_replies(path: str | Path) -> dict[str, list[str]]:
    """The replies of each conversation of the recording at `path`, by its id (see above).
    ChatconvError names what cannot be read."""
    by_id: dict[str, list[str]] = {}
    per_turn: dict[str, dict[int, str]] = {}
    for conversation_id, replies in _conversations(path):
        turn = _TURN_CALL.match(conversation_id)
        if turn and replies:
            per_turn.setdefault(turn.group(1), {})[int(turn.group(2))] = replies[-1]
        elif conversation_id not in by_id:
            by_id[conversation_id] = replies
    for test_id, turns in per_turn.items():
        ordered = [turns[n] for n in range(1, max(turns) + 1) if n in turns]
        if len(ordered) == max(turns):  # turns 1..n all there: their replies in order
            by_id.setdefault(test_id, ordered)
    return by_id


def _conversations(path: str | Path):
    """(conversation id, its replies) in file order."""
    with closing(iter_records(path)) as records:  # the file closed now, not when collected
        first = next(records, None)
    if first is not None and not first.error and detect_kind(first.data) in RECORDING_KINDS:
        problems: list[Problem] = []
        steps: dict[str, list[str]] = {}
        for item in iter_recording_steps(path, problems=problems):
            output = item.step.get("output")
            steps.setdefault(str(item.conversation_id), []).append(_reply(output if isinstance(output, list) else []))
        errors = [p for p in problems if p.is_error]
        if errors:
            raise ChatconvError(errors)
        yield from steps.items()
        return
    run = ImportRun()
    imported = list(iter_imported([str(path)], None, run))
    errors = [p for p in run.problems if p.is_error]
    if errors:
        raise ChatconvError(errors)
    for conversation in imported:
        yield str(conversation.id), LoggedAnswers(_answers(conversation.messages))


def _answers(messages: list[dict]) -> list[str]:
    """One reply per run of assistant messages: its last message's."""
    replies, run = [], []
    for message in [*messages, {"role": "user"}]:
        if message.get("role") == "assistant":
            run.append(message)
        elif message.get("role") == "user" and run:
            replies.append(_reply(run))
            run = []
    return replies


def _reply(messages: list) -> str:
    """The content of the last assistant message that has one, as AgentV takes a reply's text."""
    for message in reversed(messages):
        if isinstance(message, dict) and message.get("role") == "assistant" and message.get("content") is not None:
            return _text(message["content"])
    return ""


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list) and content and all(
            isinstance(part, dict) and part.get("type") in _CONTENT_PARTS for part in content):
        return "\n".join(part.get("text", "") for part in content if part.get("type") == "text")
    return compact_json(content)
