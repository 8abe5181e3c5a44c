"""The rows of `text` and `dataset`: one per step, each made of its own step alone, so a worker
makes a batch's rows and this process writes them in order (see batches)."""

from __future__ import annotations

import unicodedata
from pathlib import Path
from typing import Any, Iterable, Iterator

import orjson

from ..problems import ChatconvError, Problem, UnreadableInput
from ..sources import BATCH_BYTES, FieldMap, Record, discover
from .batches import RecordRunner
from .dataset import dataset_item, step_text
from .steps import _is_array, record_steps, step_row_json

TEXT_COLUMNS = ("conversationId", "stepIndex", "text")
DATASET_COLUMNS = ("id", "prompt", "completion")


# The table's columns: each as wide as this (display cells), longer values cut with "…"; the
# last column is not padded. Fixed, not measured: rows are written as they are made (by workers
# too), and a table of a long recording never held whole.
COLUMN_WIDTHS = {"conversationId": 24, "stepIndex": 4, "text": 72, "id": 30, "prompt": 40, "completion": 40,
                 "toolName": 20, "status": 10, "toolCallId": 28}
COLUMN_TITLES = {"stepIndex": "step"}  # a short title, so that the column stays narrow
# Control characters (an escape sequence in a model's output, say) would act on the terminal
# that shows the table: each is shown as U+FFFD, one cell as it was counted.
_CONTROLS = dict.fromkeys([*range(0x20), 0x7F, *range(0x80, 0xA0)], "\ufffd")


def row_line(row: dict, line: bytes | None, output_format: str, columns: tuple) -> bytes:
    """A row as written, with its newline: its JSON (`line`, else orjson's), or for "table" its
    columns cut and aligned (COLUMN_WIDTHS), for a person."""
    if output_format == "jsonl":
        return (line or orjson.dumps(row)) + b"\n"
    cells = []
    for column in columns:
        value = row[column]
        cells.append(value if isinstance(value, str) else orjson.dumps(value).decode())
    return _table_line(cells, columns)


def table_header(columns: tuple) -> bytes:
    """The table's header: the columns' titles, aligned as its rows are, and a rule beneath."""
    titles = _table_line([COLUMN_TITLES.get(column, column) for column in columns], columns)
    rule = _table_line(["-" * COLUMN_WIDTHS[column] for column in columns], columns)
    return titles + rule


def _table_line(cells: list[str], columns: tuple) -> bytes:
    out = []
    for index, (text, column) in enumerate(zip(cells, columns)):
        text, used = _cut(" ".join(text.split()), COLUMN_WIDTHS[column])  # one line: newlines and tabs are spaces
        if not text.isprintable():  # rare: a control character, or one such as U+200B
            text = text.translate(_CONTROLS)
        last = index == len(columns) - 1
        out.append(text if last else text + " " * (COLUMN_WIDTHS[column] - used))
    return ("  ".join(out) + "\n").encode("utf-8", "surrogateescape")


def _cut(text: str, width: int) -> tuple[str, int]:
    """`text` cut to `width` display cells (a wide character takes two), ending in "…" when cut,
    and the cells it takes. Only the characters up to the cut are measured: a step's text may
    be long."""
    if text.isascii():  # most values: a character is a cell
        return (text, len(text)) if len(text) <= width else (text[:width - 1] + "…", width)
    used, cut = 0, None
    for index, char in enumerate(text):
        taken = _cells(char)
        if cut is None and used + taken > width - 1:  # one cell left for the ellipsis
            cut = text[:index] + "…", used + 1
        used += taken
        if used > width:
            return cut
    return text, used


def _cells(char: str) -> int:
    if char.isascii():
        return 1
    if unicodedata.combining(char):
        return 0
    return 2 if unicodedata.east_asian_width(char) in ("W", "F") else 1


def _text_row(item) -> dict:
    return {"conversationId": item.conversation_id, "stepIndex": item.step["stepIndex"], "text": step_text(item.step)}


_MAKERS = {"text": (_text_row, TEXT_COLUMNS), "dataset": (dataset_item, DATASET_COLUMNS)}


def step_rows(records: Iterable[tuple[Record, Any]], settings: tuple) -> list[tuple[bytes, list[Problem]]]:
    """The rows of some records' steps, written, and their problems, as one result: a step that
    cannot be read or written exactly is left out with a problem. settings: (command, field
    map, output format)."""
    command, field_map, output_format = settings
    make, columns = _MAKERS[command]
    problems: list[Problem] = []
    out = []
    for record, _ in records:
        for item in record_steps(record, field_map, problems):
            row = make(item)
            try:
                line = step_row_json(item, row)
            except ChatconvError as exc:
                problems.extend(exc.problems)
                continue
            out.append(row_line(row, line, output_format, columns))
    return [(b"".join(out), problems)]


def iter_step_rows(paths: Iterable[str | Path], command: str, field_map: FieldMap | None = None,
                   output_format: str = "jsonl", problems: list[Problem] | None = None,
                   unreadable: list[Problem] | None = None, jobs: int | None = 1,
                   batch_bytes: int = BATCH_BYTES, scheduler: str | None = None) -> Iterator[bytes]:
    """The rows of `command` ("text" or "dataset") made of each step of `paths` (files, folders,
    -), written, in file order, each with its newline. Problems go to `problems` (without a
    list, the first raises ChatconvError); a path that cannot be read raises UnreadableInput,
    or with an `unreadable` list is reported there. `jobs`: worker processes for a JSONL file
    (None: one per core for files of 16 MiB or more), each given batches of about
    `batch_bytes`; the rows are the same whatever the number, or on the Dask cluster of the
    scheduler at the address `scheduler`."""
    settings = (command, field_map, output_format)
    with RecordRunner(jobs, batch_bytes, scheduler) as runner:
        for file, _ in discover(paths):
            try:
                for _, (chunk, found) in runner.results(file, step_rows, settings, _is_array):
                    if found:
                        if problems is None:
                            raise ChatconvError(found)
                        problems.extend(found)
                    if chunk:
                        yield chunk
            except UnreadableInput as exc:
                if unreadable is None:
                    raise
                unreadable.extend(exc.problems)
