"""Read YAML, JSON and JSONL into records that know where they came from (file, line, column).

JSONL is streamed line by line in constant memory; YAML and JSON files are read whole (they are
small, hand-written files). Positions of JSON text are found only when a problem needs them.
"""

from __future__ import annotations

import bisect
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO, Iterator

import orjson
import yaml

from .problems import ChatconvError, PathPart, Problem, UnreadableInput, json_path

JSONL_SUFFIXES = {".jsonl", ".ndjson"}
JSON_SUFFIXES = {".json"}
YAML_SUFFIXES = {".yaml", ".yml"}
DATA_SUFFIXES = JSONL_SUFFIXES | JSON_SUFFIXES | YAML_SUFFIXES

# A YAML alias may point at a large node many times over (the "billion laughs"); counting the
# nodes that aliases copy bounds the work and memory of reading any YAML file.
MAX_ALIAS_COPIES = 100_000

Position = tuple[int, int]
UTF8_BOM = b"\xef\xbb\xbf"


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

    def locate(self, path: tuple[PathPart, ...]) -> Position:
        """Line and column of `path`, or of its nearest ancestor that can be found."""
        if self.positions is None:
            self.positions = _json_positions(self.text, self.line) if self.text else {}
        for end in range(len(path), -1, -1):
            position = self.positions.get(tuple(path[:end]))
            if position:
                return position
        return (self.line, 1)


def problem_at(record: Record, path: tuple, message: str, severity="error", hint=None) -> Problem:
    line, column = record.locate(path)
    return Problem(record.file, line, column, json_path(path), message, severity, hint)


# ---------------------------------------------------------------------------------------------
# Bytes and text


def read_bytes(path: str | Path) -> bytes:
    if str(path) == "-":
        return sys.stdin.buffer.read()
    try:
        return Path(path).read_bytes()
    except FileNotFoundError:
        raise UnreadableInput(_file_problem(path, "no such file", "check the path")) from None
    except IsADirectoryError:
        raise UnreadableInput(_file_problem(path, "is a folder, not a file")) from None
    except OSError as exc:
        raise UnreadableInput(_file_problem(path, f"cannot be read: {exc.strerror}")) from None


def _file_problem(path, message: str, hint: str | None = None) -> Problem:
    return Problem(str(path), None, None, "$", message, "error", hint)


_FOREIGN_BOMS = [
    (b"\xff\xfe\x00\x00", "UTF-32"),
    (b"\x00\x00\xfe\xff", "UTF-32"),
    (b"\xff\xfe", "UTF-16"),
    (b"\xfe\xff", "UTF-16"),
]


def decode_utf8(data: bytes, file: str, first_line: int = 1) -> str:
    """UTF-8 text with a leading BOM removed; any other encoding is a problem naming the spot."""
    for bom, name in _FOREIGN_BOMS:
        if data.startswith(bom):
            raise ChatconvError(Problem(
                file, first_line, 1, "$", f"the file is {name}-encoded; chatconv reads UTF-8",
                "error", f"convert it, e.g. iconv -f {name} -t UTF-8"))
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = first_line + data.count(b"\n", 0, exc.start)
        column = exc.start - (data.rfind(b"\n", 0, exc.start) + 1) + 1
        raise ChatconvError(Problem(
            file, line, column, "$", f"invalid UTF-8 byte 0x{data[exc.start]:02x}", "error",
            "save the file as UTF-8")) from None


# ---------------------------------------------------------------------------------------------
# YAML


def load_yaml(text: str, file: str) -> Record:
    """Parse one YAML document with the safe C loader, keeping each node's line and column."""
    loader = yaml.CSafeLoader(text)
    try:
        node = loader.get_single_node()
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line, column = (mark.line + 1, mark.column + 1) if mark else (1, 1)
        message = " ".join(str(p) for p in (exc.context, exc.problem) if p)
        return Record(file, line, error=Problem(
            file, line, column, "$", f"invalid YAML: {message}", "error",
            "fix the YAML syntax at this spot"))
    except yaml.YAMLError as exc:
        return Record(file, 1, error=Problem(file, 1, 1, "$", f"invalid YAML: {exc}"))
    finally:
        loader.dispose()
    if node is None:
        return Record(file, 1, error=empty_file_problem(file))
    builder = _YamlBuilder(file, loader)
    try:
        data = builder.build(node, ())
    except ChatconvError as exc:
        return Record(file, 1, error=exc.problems[0])
    return Record(file, 1, data, problems=builder.problems, positions=builder.positions)


def empty_file_problem(file: str) -> Problem:
    return Problem(file, 1, 1, "$", "the file is empty", "error", "a file must hold a record")


class _YamlBuilder:
    """Turns composed YAML nodes into plain JSON-like data and a path -> position map."""

    def __init__(self, file: str, loader):
        self.file = file
        self.loader = loader
        self.positions: dict[tuple, Position] = {}
        self.problems: list[Problem] = []
        self._seen: set[int] = set()
        self._copies = 0

    def _at(self, node) -> Position:
        return (node.start_mark.line + 1, node.start_mark.column + 1)

    def build(self, node, path: tuple, key_node=None) -> Any:
        if id(node) in self._seen:
            self._copies += 1
            if self._copies > MAX_ALIAS_COPIES:
                line, column = self._at(node)
                raise ChatconvError(Problem(
                    self.file, line, column, json_path(path),
                    f"YAML aliases expand to more than {MAX_ALIAS_COPIES} nodes", "error",
                    "remove the nested aliases (&anchor / *alias) that multiply the document"))
        else:
            self._seen.add(id(node))
        self.positions.setdefault(path, self._at(key_node or node))
        if isinstance(node, yaml.ScalarNode):
            return self._scalar(node)
        if isinstance(node, yaml.SequenceNode):
            return [self.build(item, path + (i,)) for i, item in enumerate(node.value)]
        return self._mapping(node, path)

    def _scalar(self, node) -> Any:
        # Dates and other non-JSON scalars stay the text that was written.
        if node.tag in ("tag:yaml.org,2002:timestamp", "tag:yaml.org,2002:binary"):
            return node.value
        return self.loader.construct_object(node)

    def _mapping(self, node, path: tuple) -> dict:
        result: dict[str, Any] = {}
        for key_node, value_node in node.value:
            if key_node.tag == "tag:yaml.org,2002:merge":
                for source in _merge_sources(value_node):
                    for key, value in self._mapping(source, path).items():
                        result.setdefault(key, value)
                continue
            if not isinstance(key_node, yaml.ScalarNode):
                line, column = self._at(key_node)
                raise ChatconvError(Problem(self.file, line, column, json_path(path),
                                            "a mapping key must be a plain string"))
            key = key_node.value  # as written: `yes:` stays "yes", `1:` stays "1"
            if key in result:
                line, column = self._at(key_node)
                self.problems.append(Problem(
                    self.file, line, column, json_path(path + (key,)), f"duplicate key {key!r}",
                    "error", "a YAML mapping holds each key once; remove one of them"))
            result[key] = self.build(value_node, path + (key,), key_node)
        return result


def _merge_sources(node) -> list:
    return node.value if isinstance(node, yaml.SequenceNode) else [node]


# ---------------------------------------------------------------------------------------------
# JSON


def load_json(data: bytes, file: str, first_line: int = 1) -> Record:
    if first_line == 1 and data.startswith(UTF8_BOM):
        data = data[3:]
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
    line, column = exc.lineno, exc.colno
    content = data.rstrip()
    last_line = content.count(b"\n") + 1
    if line > last_line:  # past the end: point just after the last character written
        line, column = last_line, len(content) - content.rfind(b"\n")
    line += first_line - 1
    hint = "fix the JSON syntax at this spot"
    if exc.pos >= len(data.rstrip()):
        hint = "the record ends too early: the line or file may be truncated"
    return Problem(file, line, column, "$", f"invalid JSON: {exc.msg}", "error", hint)


def iter_jsonl(stream: BinaryIO, file: str, start: int = 1) -> Iterator[Record]:
    """One record per non-blank line, in order; a broken line yields a record with `error`."""
    for number, line in enumerate(stream, start):
        if not line.strip():
            continue
        yield load_json(line, file, number)


_STRING = re.compile(r'"(?:[^"\\]|\\.)*"', re.S)
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


# ---------------------------------------------------------------------------------------------
# Files


def file_format(path: str | Path) -> str:
    """jsonl, json or yaml, from the file name; unknown names are read as YAML (a JSON superset)."""
    suffix = Path(str(path)).suffix.lower()
    if suffix in JSONL_SUFFIXES:
        return "jsonl"
    if suffix in JSON_SUFFIXES:
        return "json"
    return "yaml"


def iter_records(path: str | Path) -> Iterator[Record]:
    """Every record of a file (`-` is standard input), streamed for JSONL.

    Raises UnreadableInput when the file cannot be opened at all.
    """
    file = str(path)
    if file == "-":
        yield from _iter_stdin()
        return
    fmt = file_format(path)
    if fmt == "jsonl":
        with open_binary(path) as stream:
            empty = True
            for record in iter_jsonl(stream, file):
                empty = False
                yield record
            if empty:
                yield Record(file, 1, error=empty_file_problem(file))
        return
    yield _load_document(read_bytes(path), file, fmt)


def open_binary(path: str | Path) -> BinaryIO:
    """The file, open for reading bytes; UnreadableInput says why it cannot be."""
    try:
        return open(path, "rb")
    except OSError:
        read_bytes(path)  # raises the right UnreadableInput
        raise


def iter_line_batches(stream: BinaryIO, batch_bytes: int) -> Iterator[tuple[int, int, bytes]]:
    """(number of the first line, offset in the file, whole lines) of about `batch_bytes` each.

    Lines are numbered as iterating the stream numbers them (split at b"\\n" only). A batch
    ends with the line its `batch_bytes`-th byte is in (a long line makes it longer); the last
    line of the file may lack its newline.
    """
    number = 1
    offset = 0
    while batch := stream.read(batch_bytes):
        if not batch.endswith(b"\n"):
            batch += stream.readline()  # finish the line the read cut
        yield number, offset, batch
        number += batch.count(b"\n")
        offset += len(batch)


def _load_document(data: bytes, file: str, fmt: str) -> Record:
    if fmt == "json":
        return load_json(data, file)
    try:
        text = decode_utf8(data, file)
    except ChatconvError as exc:
        return Record(file, exc.problems[0].line or 1, error=exc.problems[0])
    return load_yaml(text, file)


def stdin_format(first_line: bytes) -> str:
    """Standard input is JSONL when its first line is a whole JSON object, else one JSON or
    YAML document, told by its first character."""
    try:
        if isinstance(orjson.loads(first_line), dict):
            return "jsonl"
    except orjson.JSONDecodeError:
        pass
    return "json" if first_line.lstrip()[:1] in (b"{", b"[") else "yaml"


def _iter_stdin() -> Iterator[Record]:
    stream = sys.stdin.buffer
    first = stream.readline()
    if stdin_format(first) == "jsonl":
        yield load_json(first, "-", 1)
        yield from iter_jsonl(stream, "-", start=2)
        return
    data = first + stream.read()
    stripped = data.lstrip()
    yield _load_document(data, "-", "json" if stripped[:1] in (b"{", b"[") else "yaml")


# ---------------------------------------------------------------------------------------------
# What kind of record

_CASE_LIST_SPELLINGS = ("evalcases", "testcases", "tests", "cases", "eval_cases")


def detect_kind(data: Any, file: str = "") -> str | None:
    """The record kind, told from the content (and, for config files, the file name)."""
    if isinstance(data, dict):
        if "steps" in data:
            return "conversation"
        if "stepIndex" in data or ("input" in data and "output" in data):
            return "step-record"
        if any(key in data for key in _CASE_LIST_SPELLINGS):
            return "eval-file"
        if "question" in data:
            return "provider-request"
        if _is_config_name(file) or (data and set(data) <= {"$schema", "guideline_patterns"}):
            return "config"
    if isinstance(data, list) and data and all(isinstance(m, dict) and "role" in m for m in data):
        return "chat-prompt"
    return None


def _is_config_name(file: str) -> bool:
    path = Path(file)
    return path.name in ("chatconv.yaml", "chatconv.yml") or (
        path.parent.name == ".agentv" and path.stem == "config")
