"""JSON text: records from JSON documents and JSONL lines, with the problems of broken ones; and
the two ways orjson's reading and writing can differ from the text (repeated keys, integers
beyond 64 bits), so that nothing is written back changed without a word.
"""

from __future__ import annotations

import json
from functools import lru_cache
from typing import Any, BinaryIO, Iterator

import orjson

from ..problems import ChatconvError, Problem
from .record import Record
from .text import UTF8_BOM, decode_utf8, empty_file_problem, is_blank_line


def load_json(data: bytes, file: str, first_line: int = 1) -> Record:
    """A JSON document, or one JSONL line (from line `first_line`), as a Record. A leading UTF-8
    BOM is dropped on any line, as migrate does: files joined with `cat` carry one mid-file."""
    data = data.removeprefix(UTF8_BOM)
    try:
        value = orjson.loads(data)
    except orjson.JSONDecodeError as exc:
        return Record(file, first_line, error=_json_problem(exc, data, file, first_line))
    return Record(file, first_line, value, text=data)


def _json_problem(exc: orjson.JSONDecodeError, data: bytes, file: str, first_line: int) -> Problem:
    if not data.strip():
        return empty_file_problem(file)
    try:
        decode_utf8(data, file, first_line)
    except ChatconvError as bad_encoding:
        return bad_encoding.problems[0]
    # orjson counts characters, not bytes (the text is UTF-8: decode_utf8 said so).
    line, column = exc.lineno, exc.colno
    content = data.rstrip().decode("utf-8-sig")
    last_line = content.count("\n") + 1
    if line > last_line:  # past the end: point just after the last character written
        line, column = last_line, len(content) - content.rfind("\n")
    line += first_line - 1
    hint = "fix the JSON syntax at this spot"
    if exc.pos >= len(content):
        hint = "the record ends too early: the line or file may be truncated"
    return Problem(file, line, column, "$", f"invalid JSON: {exc.msg}", "error", hint, "invalid-json")




def iter_jsonl(stream: BinaryIO, file: str, start: int = 1) -> Iterator[Record]:
    """One record per line that is not blank (see is_blank_line), in order; a broken line
    yields a record with `error`."""
    for number, line in enumerate(stream, start):
        if not is_blank_line(line):
            yield load_json(line, file, number)


def duplicate_keys(text: bytes) -> list[tuple[tuple, str]]:
    """(path of the object, key) for each key that a JSON text repeats within one object;
    orjson, like most readers, keeps the last value silently. For documents, not JSONL lines:
    reading with the json module costs ten times orjson's parse."""
    found: list[tuple[tuple, str]] = []

    def walk(value, path: tuple) -> None:
        if isinstance(value, _Pairs):
            seen = set()
            for key, item in value:
                if key in seen:
                    found.append((path, key))
                seen.add(key)
                walk(item, path + (key,))
        elif isinstance(value, list):
            for index, item in enumerate(value):
                walk(item, path + (index,))

    try:
        walk(json.loads(text.removeprefix(UTF8_BOM), object_pairs_hook=_Pairs), ())
    except (ValueError, RecursionError):
        pass  # orjson read it: the json module's limits are not the file's fault
    return found



class _Pairs(list):
    """An object's (key, value) pairs as the json module read them, repeated keys included."""



@lru_cache(maxsize=4)  # a record's several problems, a conversation's several steps: read once
def integers_beyond_64_bits(text: str | bytes) -> tuple[str, ...]:
    """The digits of each integer in the JSON `text` that orjson does not keep exact (it reads
    them as floats). Such a float is always written `d.ddde+NN`: callers look, with this, only
    when the JSON they write holds a `+`. ValueError for text the json module does not read;
    RecursionError past ~1000 levels."""
    return tuple(_read_integers(text))


def _read_integers(text: str | bytes) -> list[str]:
    found = []

    def note(digits: str) -> int:
        value = int(digits)
        if not -(1 << 63) <= value < (1 << 64):  # the integers orjson keeps exact
            found.append(digits)
        return 0  # the value is not wanted, only the digits

    json.loads(text.removeprefix(UTF8_BOM if isinstance(text, bytes) else "\ufeff"), parse_int=note)
    return found


class NotWritten(ValueError):
    """A value that chatconv's JSON output would not hold as it was read; `hint` says what to do."""

    def __init__(self, message: str, hint: str):
        super().__init__(message)
        self.hint = hint


_TOO_DEEP = ("it nests deeper than the 255 levels chatconv writes",
             "flatten the value: chatconv writes JSON at most 255 levels deep")
_BIG_INTEGER_HINT = "store the integer as a string: chatconv writes integers exactly within 64 bits"


def exact_json(value: Any, text: str | bytes | None = None) -> bytes:
    """`value` as compact JSON (orjson: keys in order, UTF-8, no spaces); NotWritten says why it
    cannot be written as it was read from `text`, the JSON text of its record: nesting deeper
    than orjson writes, or an integer beyond 64 bits, which orjson reads as a float (its digits
    would change). Every command that writes records or values read from JSON writes them so."""
    try:
        line = orjson.dumps(value)
    except orjson.JSONEncodeError as exc:
        if str(exc) == "Recursion limit reached":
            raise NotWritten(*_TOO_DEEP) from None
        if str(exc) == "Integer exceeds 64-bit range":  # read exact from YAML, but orjson writes 64 bits
            raise NotWritten("it holds an integer beyond 64 bits, which would not be written exactly",
                             _BIG_INTEGER_HINT) from None
        raise NotWritten(f"it cannot be written as JSON: {exc}", "fix the value in the record") from None
    # Such a float is always written d.ddde+NN: most lines need no look. (A one-byte search runs
    # at memchr's speed; looking for the two bytes "e+" costs eight times as much.)
    if b"+" in line and b"e+" in line and text:
        try:
            beyond = integers_beyond_64_bits(text)
        except RecursionError:  # orjson reads 1024 levels, the json module about 1000
            raise NotWritten("its record nests too deep (about 1000 levels) for its integers to be checked",
                             "flatten the record") from None
        for digits in beyond:
            if orjson.dumps(float(digits)) in line:
                raise NotWritten(f"the integer {digits} is beyond 64 bits and would not be written exactly",
                                 _BIG_INTEGER_HINT)
    return line
