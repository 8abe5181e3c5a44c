"""A JSON file that holds an array of records (a `stepTraces.json`: an array of turns), read as one
Record per element: each element is located at its own line and column in the file, and the
paths of its problems start with its index (`$[3].input`).

This is the slower path: the file is read whole, as any JSON document is.
"""

from __future__ import annotations

import json
from typing import Any

from ..kinds import detect_kind
from .json import duplicate_keys
from .record import Record, problem_at
from .text import UTF8_BOM


def holds_records(data: Any) -> bool:
    """Whether a JSON document is an array of records rather than one record: a non-empty array of
    objects that is not itself a record (a list of chat messages `[{"role": ...}]` is a chat
    prompt, one record)."""
    return (isinstance(data, list) and bool(data) and all(isinstance(item, dict) for item in data)
            and detect_kind(data) is None)


def element_records(record: Record) -> list[Record]:
    """One Record per element of a JSON document that is an array, each with its own text (so
    that its problems are located at it), line, and prefix (its index). Repeated keys found in
    the document are put on the element that holds them."""
    text = record.text
    if isinstance(text, bytes):
        text = text.removeprefix(UTF8_BOM).decode("utf-8", "replace")
    spans = _element_spans(text, len(record.data)) if text else None
    elements = []
    for index, item in enumerate(record.data):
        if spans is None:  # no JSON text (YAML: located as it was read), or not found in it (nested too deep)
            positions = {path[1:]: at for path, at in (record.positions or {}).items() if path[:1] == (index,)}
            element = Record(record.file, positions.get((), (record.line,))[0], item, positions=positions or None,
                             prefix=(index,))
        else:
            start, end = spans[index]
            line = record.line + text.count("\n", 0, start)
            column = start - (text.rfind("\n", 0, start) + 1)
            # Padded to its column, so that the positions found in its text are those of the file.
            element = Record(record.file, line, item, text=" " * column + text[start:end], prefix=(index,))
        elements.append(element)
    if record.text:
        for path, key in duplicate_keys(record.text if isinstance(record.text, bytes) else record.text.encode()):
            if path and isinstance(path[0], int) and path[0] < len(elements):
                element = elements[path[0]]
                element.problems.append(problem_at(element, path[1:] + (key,), f"duplicate key {key!r}", "error",
                                                   "a JSON object holds each key once; the last value would win",
                                                   code="duplicate-key"))
    return elements


def _element_spans(text: str, count: int) -> list[tuple[int, int]] | None:
    """(start, end) of each element of the JSON array `text` (character offsets), or None."""
    decoder = json.JSONDecoder()
    spans = []
    i = _skip(text, 0)
    if not text.startswith("[", i):
        return None
    i = _skip(text, i + 1)
    try:
        while len(spans) < count:
            _, end = decoder.raw_decode(text, i)
            spans.append((i, end))
            i = _skip(text, end)
            if text.startswith(",", i):
                i = _skip(text, i + 1)
    except (ValueError, RecursionError):
        return None
    return spans


def _skip(text: str, i: int) -> int:
    while i < len(text) and text[i] in " \t\r\n":
        i += 1
    return i
