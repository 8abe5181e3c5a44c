"""Claude Code transcripts (`~/.claude/projects/<project>/<session>.jsonl`): one JSON object per
line, a whole file one conversation, named by its sessionId.

The file is one record (its data the list of the line objects) whose positions are the lines,
so that a problem still names the line it is on. A `user` or `assistant` line's `message` is an
Anthropic message, read by anthropic.py's block reading; the line's other fields (uuid,
parentUuid, timestamp, cwd, version, toolUseResult, ...) stay under providerOptions["claude-code"]
of its first model message, and the message's own fields (id, model, stop_reason, usage) under
`message` there. Lines that are not messages (summary, system, file-history-snapshot,
queue-operation, ...) go, with their index, to the conversation's metadata (`entries`).
"""

from __future__ import annotations

from typing import Any, Iterator

from ..anthropic import read_message
from ..reading import Imported, Reading, rest_of
from ..session_files import claims_by_lines, whole_file_records

NAME = "claude-code"
MESSAGE_LINES = ("user", "assistant")


def claims(file: str) -> bool:
    """A .jsonl file whose lines are typed objects, the first message line with its sessionId."""
    return claims_by_lines(file, _decides)


def _decides(data: Any) -> bool | None:
    if not isinstance(data, dict) or data.get("type") not in MESSAGE_LINES:
        return None  # summaries and snapshots may come before the first message
    return isinstance(data.get("sessionId"), str) and isinstance(data.get("message"), dict)


records = whole_file_records


KEYS = frozenset({"sessionId"})


def detect(data: Any) -> bool:
    """A transcript's lines (a list), or one of its message lines."""
    if isinstance(data, dict):
        return data.get("type") in MESSAGE_LINES and "sessionId" in data and isinstance(data.get("message"), dict)
    # A line of another shape (no type, not an object) is an error at its line when read, not a
    # reason to read each line apart.
    return isinstance(data, list) and any(detect(line) for line in data)


def read(reading: Reading) -> Iterator[Imported]:
    messages, paths, entries = [], [], []
    for path, _, converted in message_lines(reading, entries, "transcript"):
        messages.extend(converted)
        paths.extend([path + ("message",)] * len(converted))
    lines = reading.data if isinstance(reading.data, list) else [reading.data]
    session = next((line["sessionId"] for line in lines if isinstance(line, dict)
                    and isinstance(line.get("sessionId"), str)), None)
    yield Imported(session, messages, {"entries": entries} if entries else {}, paths)


def message_lines(reading: Reading, entries: list[dict], what: str) -> Iterator[tuple[tuple, dict, list[dict]]]:
    """(path, line, its model messages) of each user or assistant line of a session's lines (or
    of one line) that reads; the other lines go, with their index, to `entries`; a line that is
    not an object, or a message line that does not read, is said (`what`: the file's kind)."""
    data = reading.data
    lines, where = ([data], lambda index: ()) if isinstance(data, dict) else (data, lambda index: (index,))
    for index, line in enumerate(lines):
        path = where(index)
        if not isinstance(line, dict):
            reading.error(path, f"a {what} line must be a JSON object", code="wrong-type")
            continue
        if line.get("type") not in MESSAGE_LINES:
            entries.append({"index": index, "entry": line})
            continue
        converted = read_message_line(line, reading, path)
        if converted is not None:
            yield path, line, converted


def read_message_line(line: dict, reading: Reading, path: tuple) -> list[dict] | None:
    """The model messages of a user or assistant line (Claude Code's, the Agent SDK's): its
    Anthropic `message` read as anthropic reads one, the message's own fields kept as `message`
    and the line's beside them on the first; None, with the problem said, when it has none."""
    message = line.get("message")
    if not isinstance(message, dict) or message.get("role") not in MESSAGE_LINES:
        article = "an" if line["type"] == "assistant" else "a"
        reading.error(path + ("message",), f"{article} {line['type']} line needs a message with role user or assistant",
                      code="wrong-type")
        return None
    converted = read_message({"role": message["role"], "content": message.get("content")}, reading,
                             path + ("message",))
    if converted:
        reading.keep(converted[0], {"message": rest_of(message, ("role", "content")) or None}, rest_of(line, ("message",)))
    return converted
