"""Claude Agent SDK message streams, as `claude -p --output-format stream-json` and the SDKs'
`query()` write them: one JSON object per line, each with a `type` and the `session_id`. A file
is one conversation, named by its session id (a file of several sessions, one per session).

`assistant` and `user` lines hold an Anthropic message (`message`), read by anthropic's block
reading: the SDK writes each content block of an API response as a line of its own (sharing the
message's id), and each line is a model message as the SDK gave it. The user's prompt is not in
the stream unless the SDK was asked to repeat it, so a session usually starts with the model (a
step whose input was not recorded). A line's other fields (uuid, parent_tool_use_id,
tool_use_result, ...) stay under providerOptions["claude-agent-sdk"] of its first model message,
the message's own fields (id, model, usage, ...) under `message` there. Other lines (system
init, result, stream_event, control_response, ...) go, with their index, to the conversation's
metadata (`entries`).
"""

from __future__ import annotations

from typing import Any, Iterator

from ..claude_code import message_lines
from ..reading import Imported, Reading
from ..session_files import claims_by_lines, whole_file_records

NAME = "claude-agent-sdk"
MESSAGE_LINES = ("user", "assistant")
SDK_LINES = ("system", "user", "assistant", "result", "stream_event")
KEYS = frozenset({"session_id"})


def claims(file: str) -> bool:
    """A .jsonl/.ndjson file whose first line of the SDK's kinds carries its session_id."""
    return claims_by_lines(file, _decides)


def _decides(data: Any) -> bool | None:
    if not isinstance(data, dict) or data.get("type") not in SDK_LINES:
        return None  # control lines may come first
    return isinstance(data.get("session_id"), str) and "sessionId" not in data


records = whole_file_records


def detect(data: Any) -> bool:
    """A stream's lines (a list), or one of its message lines."""
    if isinstance(data, dict):
        return (data.get("type") in MESSAGE_LINES and isinstance(data.get("session_id"), str)
                and isinstance(data.get("message"), dict))
    return isinstance(data, list) and any(isinstance(line, dict) and line.get("type") in SDK_LINES
                                          and isinstance(line.get("session_id"), str) for line in data)


def read(reading: Reading) -> Iterator[Imported]:
    sessions: dict[Any, Imported] = {}  # by session id, in the order they start
    entries: list[dict] = []
    for path, line, converted in message_lines(reading, entries, "stream"):
        session = line.get("session_id") if isinstance(line.get("session_id"), str) else None
        imported = sessions.setdefault(session, Imported(session, []))
        imported.messages.extend(converted)
        imported.paths.extend([path + ("message",)] * len(converted))
    if not sessions:
        reading.error((), "a Claude Agent SDK stream with no assistant or user line: nothing to import",
                      code="wrong-type")
        return
    first = next(iter(sessions.values()))
    if entries:
        first.metadata = {"entries": entries}
    yield from sessions.values()
