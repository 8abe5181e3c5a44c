"""Codex CLI rollouts (`~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl`): one JSON object per line,
`{"timestamp", "type", "payload"}`, a file one session named by its `session_meta` id.

The `response_item` payloads are the model's history as the Responses API has it (messages of
user, developer and assistant, reasoning, function calls and their outputs, custom tool calls),
read as openai-responses reads its items; the injected context (environment, instructions) is
there as the messages it was sent as. The other lines (`session_meta`, `turn_context`,
`event_msg`: user_message and agent_message repeat what the items say, token counts, task
events) are not messages. Every line is accounted for in the conversation's metadata
(`lines`, in file order): an item's line by its index and its own fields (the timestamp), any
other line whole (an item of a type Responses does not have, Codex's own ghost_snapshot, too).
"""

from __future__ import annotations

from typing import Any, Iterator

from ..openai_responses import ITEM_TYPES, NAME as RESPONSES, Conversation
from ..reading import Imported, Reading, rest_of
from ..session_files import claims_by_lines, whole_file_records

NAME = "codex-cli"
LINE_TYPES = ("session_meta", "response_item", "event_msg", "turn_context", "compacted")
KEYS = frozenset({"payload"})


def claims(file: str) -> bool:
    """A .jsonl file whose first line is a rollout line (its timestamp, type and payload)."""
    return claims_by_lines(file, lambda data: _is_line(data), look_ahead=1)


records = whole_file_records


def _is_line(data: Any) -> bool:
    return isinstance(data, dict) and data.get("type") in LINE_TYPES and isinstance(data.get("payload"), dict) \
        and "timestamp" in data


def detect(data: Any) -> bool:
    """A rollout's lines (a list), or one of its lines."""
    if isinstance(data, list):
        return bool(data) and _is_line(data[0])
    return _is_line(data)


def read(reading: Reading) -> Iterator[Imported]:
    data = reading.data
    lines, where = ([data], lambda index: ()) if isinstance(data, dict) else (data, lambda index: (index,))
    # The items' marks go where openai-responses keeps them (problems said once, in one list).
    conversation = Conversation(Reading(reading.record, RESPONSES, reading.problems))
    accounted, session = [], None
    for index, line in enumerate(lines):
        path = where(index)
        if not _is_line(line):
            reading.error(path, "a rollout line is {timestamp, type, payload}, its type one of "
                          f"{', '.join(LINE_TYPES)}", code="wrong-type")
            return
        payload = line["payload"]
        if line["type"] == "session_meta" and session is None and isinstance(payload.get("id"), str):
            session = payload["id"]
        if line["type"] == "response_item" and payload.get("type", "message") in ITEM_TYPES:
            conversation.item(payload, path + ("payload",))
            accounted.append({"index": index, "line": rest_of(line, ("payload",))})
        else:
            accounted.append({"index": index, "entry": line})
    if reading.failed:
        return
    yield Imported(session, conversation.messages, {"lines": accounted}, conversation.paths)
