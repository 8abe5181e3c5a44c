"""The `tools` rows of a recording: each tool call with its result, paired by toolCallId across
the steps of a conversation, within the one window of recent conversations (messages), with
what is held between lines bounded in bytes (--max-memory).

A worker reads each step's tool calls and results (tool_events.tool_facts); this process pairs
them across steps (tool_pairing.ToolRows).
"""

from __future__ import annotations

from pathlib import Path
from typing import Iterable, Iterator

import orjson

from ..pairing import CONVERSATION_WINDOW
from ..problems import ChatconvError, Problem, UnreadableInput
from ..sources import BATCH_BYTES, FieldMap, discover
from .batches import RecordRunner
from .steps import _is_array
from .tool_events import tool_facts
from .tool_pairing import DEFAULT_MAX_MEMORY, ToolRows


def tool_row_lines(paths: str | Path | Iterable[str | Path], field_map: FieldMap | None = None,
                   window: int = CONVERSATION_WINDOW, problems: list[Problem] | None = None,
                   unreadable: list[Problem] | None = None, output_format: str = "jsonl", jobs: int | None = 1,
                   max_memory: int = DEFAULT_MAX_MEMORY, batch_bytes: int = BATCH_BYTES,
                   scheduler: str | None = None) -> Iterator[bytes]:
    """Each `tools` row of a recording (files, folders, -), written, with its newline; see
    tool_rows. `jobs`: worker processes for a JSONL file (None: one per core for files of
    16 MiB or more), each given batches of about `batch_bytes`; the rows are the same whatever
    the number, or on the Dask cluster of the scheduler at the address `scheduler`."""
    paths = [paths] if isinstance(paths, (str, Path)) else paths
    found: list[Problem] = [] if problems is None else problems
    with RecordRunner(jobs, batch_bytes, scheduler) as runner:
        for file, _ in discover(paths):
            try:
                rows = ToolRows(file, field_map, output_format, window, max_memory, found)
                try:
                    steps = runner.results(file, tool_facts, (field_map, output_format), _is_array, reads_again=True)
                    for record, facts in steps:
                        yield from rows.add(record, facts)
                        if problems is None and found:
                            errors = [problem for problem in found if problem.is_error]
                            if errors:
                                raise ChatconvError(errors)
                            found.clear()  # warnings, with no list given to keep them in
                    yield from rows.finish()
                finally:
                    rows.close()
            except UnreadableInput as exc:
                if unreadable is None:
                    raise
                unreadable.extend(exc.problems)


def tool_rows(path: str | Path | Iterable[str | Path], field_map: FieldMap | None = None,
              window: int = CONVERSATION_WINDOW, problems: list[Problem] | None = None,
              unreadable: list[Problem] | None = None, jobs: int | None = 1,
              max_memory: int = DEFAULT_MAX_MEMORY, batch_bytes: int = BATCH_BYTES) -> Iterator[dict]:
    """Each tool call of a recording (a file, or several files and folders: see
    iter_paths_steps) with its result, streamed, file by file: calls are paired within a file.
    {"conversationId", "stepIndex", "toolCallId", "toolName", "args", "result", "status"}.

    status is ok, error or unanswered; result is the tool result's output value (None when
    unanswered). A conversation's rows come in the order of its calls, each once it and the
    calls before it are final: answered, or unanswered when the conversation leaves the window
    of the `window` most recently active ones, or the file ends, or what is held passes
    `max_memory` bytes (its least recently active conversations are finished early, with a
    warning). Steps left out (see iter_recording_steps), calls whose row cannot be written
    exactly (left out too), results that answer no call and repeated ids are appended to
    `problems`; without a list, the first error raises ChatconvError. A path that cannot be
    read raises UnreadableInput, or with an `unreadable` list is reported there.
    """
    for line in tool_row_lines(path, field_map, window, problems, unreadable, "jsonl", jobs, max_memory, batch_bytes):
        yield orjson.loads(line)
