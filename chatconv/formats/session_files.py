"""Files that are one session each (Claude Code transcripts, Claude Agent SDK streams, Codex CLI
rollouts): told by their first lines, read as one record whose data is the list of the line
objects and whose positions are the lines, so that a problem still names the line it is on.
"""

from __future__ import annotations

from typing import Any, Callable, Iterator

from ..problems import ChatconvError
from ..sources import Record, data_suffix, iter_jsonl_stream, open_binary

JSONL = (".jsonl", ".jsonl.gz", ".jsonl.zst", ".ndjson", ".ndjson.gz", ".ndjson.zst")


def claims_by_lines(file: str, decide: Callable[[Any], bool | None], look_ahead: int = 20) -> bool:
    """Whether a JSONL file is a session: `decide` is asked each of its first lines' data in turn
    (True or False ends the look; None reads on); a broken line says nothing either way."""
    if file == "-" or data_suffix(file) not in JSONL:
        return False
    try:
        with open_binary(file) as stream:  # a compressed session too
            for number, record in enumerate(iter_jsonl_stream(stream, file)):
                if number >= look_ahead:
                    return False
                verdict = decide(record.data) if record.error is None else None
                if verdict is not None:
                    return verdict
    except (OSError, ChatconvError):  # unreadable: told when the file is read as records
        return False
    return False


def whole_file_records(file: str) -> Iterator[Record]:
    """The lines that cannot be parsed (each a record with its error), then the file as one record."""
    lines, positions, texts = [], {}, []
    with open_binary(file) as stream:
        for record in iter_jsonl_stream(stream, file):  # a line past --max-line-bytes is not held
            if record.error:
                yield record
                continue
            positions[(len(lines),)] = (record.line, 1)
            lines.append(record.data)
            texts.append(record.text)
    if lines:
        first = positions[(0,)][0]
        # The lines' text as one JSON array: what tells an integer beyond 64 bits (read as a float) when written.
        yield Record(file, first, data=lines, positions={(): (first, 1), **positions},
                     text=b"[" + b",".join(texts) + b"]")
