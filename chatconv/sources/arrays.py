"""A JSON file that holds an array of records (a `stepTraces.json`: an array of turns), read as one
Record per element: each element is located at its own line and column in the file, and the
paths of its problems start with its index (`$[3].input`).

This is the slower path: the file is read whole, as any JSON document is.
"""

from __future__ import annotations

import json
import re
from typing import Any

from ..kinds import detect_kind
from ..schemas import load_schema
from .fields import FieldClash, FieldMap, adapt
from .record import Record
from .text import UTF8_BOM


def holds_records(data: Any) -> bool:
    """Whether a JSON document is an array of records rather than one record: a non-empty array of
    objects that is not itself a record (a list of chat messages `[{"role": ...}]` is a chat
    prompt, one record)."""
    return _objects(data) and detect_kind(data) is None


def read_as_records(data: Any, field_map: FieldMap | None = None, kind: str | None = None) -> bool:
    """Whether validate and migrate read a JSON document as an array of records, each a record of
    its own: an array that holds_records whose first element (its fields read as `field_map` says)
    is of a kind told from its content; with `kind` (--kind), any non-empty array of objects unless
    that kind is itself an array (a chat prompt). Any other array stays one record: a list another
    tool wrote (OpenAI messages, say) is of unknown kind, as it always was."""
    if kind is not None:
        return _objects(data) and load_schema(kind).get("type") != "array"
    if not holds_records(data):
        return False
    try:
        return detect_kind(adapt(data[0], field_map or {})) is not None
    except FieldClash:
        return True  # each element is reported where its field cannot be read


def _objects(data: Any) -> bool:
    return isinstance(data, list) and bool(data) and all(isinstance(item, dict) for item in data)


def element_records(record: Record) -> list[Record]:
    """One Record per element of a document that is an array (a JSON one's text is bytes; a YAML
    one has none, and its positions), each with its own text (so that its problems are located at it), line, and prefix
    (its index). The document's problems (its repeated keys) go to the elements that hold them."""
    text = record.text.removeprefix(UTF8_BOM).decode("utf-8", "replace") if record.text else None
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
    for problem in record.problems:
        # Located in the file and named by its path from the document ($[3].a), as the element
        # would locate and name it: the document's text was read for them once, not again here.
        index = _INDEX.match(problem.path)
        if index and int(index[1]) < len(elements):
            elements[int(index[1])].problems.append(problem)
    return elements


_INDEX = re.compile(r"\$\[(\d+)\]")


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
