"""A record that knows where it came from (file, line, column), and how a JSON path is located in it.

Positions of JSON text are found only when a problem needs them: most records have none.
"""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass, field
from typing import Any

import orjson

from ..problems import PathPart, Problem, json_path

Position = tuple[int, int]


@dataclass(slots=True)
class Record:
    """One record: a JSONL line, or the whole document of a YAML or JSON file."""

    file: str
    line: int
    data: Any = None
    error: Problem | None = None  # set when the record could not be parsed
    problems: list[Problem] = field(default_factory=list)  # non-fatal reading problems
    text: str | bytes | None = None  # JSON text, kept to find positions on demand
    positions: dict[tuple, Position] | None = None
    # An element of a JSON array file: its index, put before the paths of its problems ($[3].input).
    prefix: tuple = ()
    # (path in data, path in the text) of each value read from another key (--field), located there.
    moved: tuple[tuple[tuple, tuple], ...] = ()
    # {path in data: path in the text} of each subtree an upgrade in memory moved: a path under
    # the first is located at the same path under the second (see unalias).
    aliases: dict[tuple, tuple] | None = None
    # The data as the text holds it, when an upgrade in memory changed `data`: what the text is
    # matched against to locate a path (compact_position) without walking it.
    as_read: Any = None

    def locate(self, path: tuple[PathPart, ...]) -> Position:
        """Line and column of `path`, or of its nearest ancestor that can be found."""
        if self.aliases:
            path = unalias(path, self.aliases)
        data = self.data if self.as_read is None else self.as_read
        if self.positions is None and not self.moved and self.text.__class__ is bytes and data is not None:
            found = compact_position(self.text, data, path, self.line)
            if found is not None:
                return found
        positions = self.walked_positions()
        for end in range(len(path), -1, -1):
            position = positions.get(tuple(path[:end]))
            if position:
                return position
        return (self.line, 1)

    def walked_positions(self) -> dict[tuple, Position]:
        """The position of every path in the text, found by walking it once (then kept)."""
        if self.positions is None:
            self.positions = _json_positions(self.text, self.line) if self.text else {}
            _apply_moves(self.positions, self.moved)
        return self.positions

    def move(self, moved: tuple[tuple[tuple, tuple], ...]) -> None:
        """Locate each value read from another key (data path, text path) where it is in the text."""
        self.moved = self.moved + tuple(moved)
        if self.positions is not None:  # located already (YAML records are located as they are read)
            _apply_moves(self.positions, moved)


def unalias(path: tuple, aliases: dict[tuple, tuple]) -> tuple:
    """`path` in upgraded data as the path it was read at: the longest alias that holds it, moved.
    Looked up by the path's own prefixes, longest first: an eval file upgraded whole has an alias
    for each case it moved, and each of its problems is located."""
    path = tuple(path)
    for end in range(len(path), -1, -1):
        written = aliases.get(path[:end])
        if written is not None:
            return written + path[end:]
    return path


def compact_position(text: bytes, data: Any, path: tuple, line: int) -> Position | None:
    """The position of `path` (or of its nearest ancestor in `data`) in `text`, when `text` is
    one line that holds `data` as orjson writes it (compact: how chatconv and most recorders
    write JSONL); else None, and the text is walked (_json_positions). Found by writing what
    comes before each step of the path, in C, rather than by walking the text's tokens in
    Python: a problem is located at a few microseconds, whatever the size of its record.
    """
    try:
        if orjson.dumps(data) != (text[:-1] if text.endswith(b"\n") else text):
            return None  # spaces, escapes, other spellings of numbers, a key twice: walked instead
        offset = found = 0  # where the current value starts; where the deepest step found does
        node = data
        for part in path:
            if node.__class__ is dict and part in node:
                pairs = {}
                for name, value in node.items():
                    if name == part:
                        break
                    pairs[name] = value
                before = orjson.dumps(pairs)
                found = offset + (len(before) if len(before) > 2 else 1)  # at the key, as walking finds
                offset = found + len(orjson.dumps(part)) + 1
            elif node.__class__ is list and part.__class__ is int and 0 <= part < len(node):
                found = offset = offset + (len(orjson.dumps(node[:part])) if part else 1)
            else:
                break
            node = node[part]
    except (orjson.JSONEncodeError, TypeError):  # an integer beyond 64 bits, deep nesting, a key not a string
        return None
    head = text[:found]
    return line, (found if head.isascii() else len(head.decode("utf-8", "replace"))) + 1


def _apply_moves(positions: dict[tuple, Position], moved) -> None:
    """Each position found under a moved value's text path, given under its data path too. One
    pass over the positions: a conversation has a move per step, and a position per value."""
    if not moved:
        return
    data_paths: dict[tuple, list[tuple]] = {}  # text path -> the data paths of the values read there
    for data_path, text_path in moved:
        data_paths.setdefault(text_path, []).append(data_path)
    sizes = {len(text_path) for text_path in data_paths}
    for path, position in list(positions.items()):
        for size in sizes:
            for data_path in data_paths.get(path[:size], ()) if len(path) >= size else ():
                positions[data_path + path[size:]] = position


def problem_at(record: Record, path: tuple, message: str, severity="error", hint=None, *,
               code: str | None = None) -> Problem:
    """A Problem at `path` in the record, located in its text; `code` names the check (CODES).
    The path of an element of a JSON array file starts with its index: `$[3].input`."""
    line, column = record.locate(path)
    return Problem(record.file, line, column, json_path(record.prefix + tuple(path)), message, severity, hint, code)


# Possessive: a 20 MB string is matched without keeping backtracking state for each character.
_STRING = re.compile(r'"[^"\\]*+(?:\\.[^"\\]*+)*+"', re.S)
_SPACE = re.compile(r"[ \t\r\n]*")
_SCALAR = re.compile(r"[^,\]}\s]+")


def _json_positions(text: str | bytes, first_line: int) -> dict[tuple, Position]:
    """Map each JSON path in `text` to its line and column (keys point at the key)."""
    if isinstance(text, bytes):
        text = text.decode("utf-8", "replace")
    offsets: dict[tuple, int] = {}

    def skip(i: int) -> int:
        return _SPACE.match(text, i).end()

    def value(i: int, path: tuple) -> int:
        i = skip(i)
        offsets.setdefault(path, i)
        if text.startswith("{", i):
            i = skip(i + 1)
            while not text.startswith("}", i):
                key = _STRING.match(text, i)
                offsets[path + (orjson.loads(key.group()),)] = i
                i = skip(key.end()) + 1  # past the colon
                i = skip(value(i, path + (orjson.loads(key.group()),)))
                if text.startswith(",", i):
                    i = skip(i + 1)
            return i + 1
        if text.startswith("[", i):
            i, index = skip(i + 1), 0
            while not text.startswith("]", i):
                i = skip(value(i, path + (index,)))
                index += 1
                if text.startswith(",", i):
                    i = skip(i + 1)
            return i + 1
        match = _STRING.match(text, i) or _SCALAR.match(text, i)
        return match.end()

    try:
        value(0, ())
    except (AttributeError, RecursionError, orjson.JSONDecodeError):
        pass  # best effort: whatever was found before the surprise is still right
    line_starts = [0] + [m.end() for m in re.finditer("\n", text)]
    positions = {}
    for path, offset in offsets.items():
        row = bisect.bisect_right(line_starts, offset) - 1
        positions[path] = (first_line + row, offset - line_starts[row] + 1)
    return positions

