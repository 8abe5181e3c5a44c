"""Read YAML, JSON and JSONL into records that know where they came from (file, line, column).

JSONL is streamed line by line in constant memory; YAML and JSON files are read whole (they are
small, hand-written files). Positions of JSON text are found only when a problem needs them.
"""

from __future__ import annotations

import bisect
import io
import json
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
# The C YAML composer, ruamel.yaml (migrate) and the code that walks records recurse once or more
# per level: deeper YAML is refused before it is composed. Far deeper than any hand-written file,
# within the ~245 levels ruamel.yaml reads under Python's recursion limit and the 254 orjson writes.
MAX_YAML_DEPTH = 200

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
    """The whole file (`-` is standard input); UnreadableInput says why it cannot be read."""
    if str(path) == "-":
        data = sys.stdin.buffer.read()
    else:
        data = _read_file(path)
    refuse_foreign_encoding(data[:4], str(path))
    return data


def _read_file(path: str | Path) -> bytes:
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


# UTF-16 and UTF-32, told by their byte order mark, else by the NUL bytes next to the first
# character (ASCII in any JSON or YAML record): (label, name for iconv).
_FOREIGN_BOMS = [
    (b"\xff\xfe\x00\x00", ("UTF-32 (little-endian)", "UTF-32LE")),
    (b"\x00\x00\xfe\xff", ("UTF-32 (big-endian)", "UTF-32BE")),
    (b"\xff\xfe", ("UTF-16 (little-endian)", "UTF-16LE")),
    (b"\xfe\xff", ("UTF-16 (big-endian)", "UTF-16BE")),
]
_FOREIGN_NULS = {  # the first bytes, 0 for NUL and x for any other
    "x000": ("UTF-32 (little-endian)", "UTF-32LE"),
    "000x": ("UTF-32 (big-endian)", "UTF-32BE"),
    "x0x0": ("UTF-16 (little-endian)", "UTF-16LE"),
    "x0": ("UTF-16 (little-endian)", "UTF-16LE"),
    "0x0x": ("UTF-16 (big-endian)", "UTF-16BE"),
    "0x": ("UTF-16 (big-endian)", "UTF-16BE"),
}


def refuse_foreign_encoding(head: bytes, file: str) -> None:
    """Raise UnreadableInput when `head`, the first bytes of a file, are UTF-16 or UTF-32.

    Checked once at the start of a file, so that such a file is one problem, not one per line.
    """
    encoding = next((e for bom, e in _FOREIGN_BOMS if head.startswith(bom)), None)
    encoding = encoding or _FOREIGN_NULS.get("".join("x" if b else "0" for b in head[:4]))
    if encoding:
        label, name = encoding
        raise UnreadableInput(Problem(
            file, 1, 1, "$", f"the file is {label}; chatconv reads UTF-8", "error",
            f"convert it, e.g. iconv -f {name} -t UTF-8 OLD > NEW"))


def decode_utf8(data: bytes, file: str, first_line: int = 1) -> str:
    """UTF-8 text with a leading BOM removed; any other encoding is a problem naming the spot.

    Raises UnreadableInput for a whole file (first_line 1) in UTF-16 or UTF-32, else
    ChatconvError at the first byte that is not UTF-8.
    """
    if first_line == 1:
        refuse_foreign_encoding(data[:4], file)
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
    problem = yaml_parse_problem(text, file)
    if problem:
        return Record(file, problem.line, error=problem)
    loader = yaml.CSafeLoader(text)
    try:
        node = loader.get_single_node()
    except yaml.YAMLError as exc:  # e.g. an undefined alias
        problem = _yaml_error_problem(exc, text, file)
        return Record(file, problem.line, error=problem)
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


def yaml_parse_problem(text: str, file: str) -> Problem | None:
    """Why `text` cannot be composed safely: invalid YAML, or nested deeper than MAX_YAML_DEPTH;
    None when it can be. Call it before anything composes the text (PyYAML, ruamel.yaml).

    Reads the parser's events, which needs no recursion (composing does, in C for PyYAML).
    An alias counts as deep as the node it copies; an alias inside the node it names would copy
    it without end.
    """
    try:
        return _nesting_problem(text, file)
    except yaml.YAMLError as exc:
        return _yaml_error_problem(exc, text, file)


def _nesting_problem(text: str, file: str) -> Problem | None:
    heights: dict[str, int | None] = {}  # anchor -> levels in its node (None while still open)
    stack: list[list] = []  # per open collection: [anchor, levels of its deepest item]
    for event in yaml.parse(text, Loader=yaml.CSafeLoader):
        if isinstance(event, yaml.CollectionStartEvent):
            stack.append([event.anchor, 0])
            if event.anchor:
                heights[event.anchor] = None
            levels = 0
        elif isinstance(event, yaml.CollectionEndEvent):
            anchor, levels = stack.pop()
            levels += 1
            if anchor:
                heights[anchor] = levels
        elif isinstance(event, yaml.AliasEvent):
            levels = heights.get(event.anchor, 0)
            if levels is None:
                return _mark_problem(file, event.start_mark,
                                     f"the alias *{event.anchor} is inside the node it names",
                                     "an alias must name a node written before it")
        else:
            continue
        if len(stack) + levels > MAX_YAML_DEPTH:
            return _mark_problem(file, event.start_mark,
                                 f"YAML nested deeper than {MAX_YAML_DEPTH} levels",
                                 "flatten the data; aliases count as deep as the node they name")
        if stack:
            stack[-1][1] = max(stack[-1][1], levels)
    return None


def _mark_problem(file: str, mark, message: str, hint: str) -> Problem:
    return Problem(file, mark.line + 1, mark.column + 1, "$", message, "error", hint)


def _yaml_error_problem(exc: yaml.YAMLError, text: str, file: str) -> Problem:
    """One problem, on one line, for an error of the YAML reader, parser or composer."""
    line = column = 1
    if isinstance(exc, yaml.MarkedYAMLError):
        mark = exc.problem_mark or exc.context_mark
        message = " ".join(str(p) for p in (exc.context, exc.problem) if p)
        if mark:
            line, column = mark.line + 1, mark.column + 1
    elif isinstance(exc, yaml.reader.ReaderError):  # a character YAML does not allow
        message = f"character #x{exc.character:04x}: {exc.reason}"
        line = text.count("\n", 0, exc.position) + 1
        column = exc.position - (text.rfind("\n", 0, exc.position) + 1) + 1
    else:
        message = str(exc)
    return Problem(file, line, column, "$", "invalid YAML: " + " ".join(message.split()), "error",
                   "fix the YAML syntax at this spot")


def empty_file_problem(file: str) -> Problem:
    return Problem(file, 1, 1, "$", "the file is empty", "error", "a file must hold a record")


_YAML_TAG = "tag:yaml.org,2002:"
_MERGE_TAG = _YAML_TAG + "merge"
_TEXT_TAGS = {_YAML_TAG + "timestamp", _YAML_TAG + "binary"}  # kept as the text written
_KNOWN_TAGS = {  # the tags of JSON-like data, by kind of node
    yaml.ScalarNode: {_YAML_TAG + t for t in ("str", "int", "float", "bool", "null")} | _TEXT_TAGS,
    yaml.SequenceNode: {_YAML_TAG + "seq"},
    yaml.MappingNode: {_YAML_TAG + "map"},
}


class _YamlBuilder:
    """Turns composed YAML nodes into plain JSON-like data and a path -> position map."""

    def __init__(self, file: str, loader):
        self.file = file
        self.loader = loader
        self.positions: dict[tuple, Position] = {}
        self.problems: list[Problem] = []
        self._reported: set[tuple[int, str]] = set()  # (node, message): aliases visit nodes again
        self._seen: set[int] = set()
        self._copies = 0

    def _at(self, node) -> Position:
        return (node.start_mark.line + 1, node.start_mark.column + 1)

    def _report(self, node, path: tuple, message: str, hint: str) -> None:
        if (id(node), message) not in self._reported:
            self._reported.add((id(node), message))
            line, column = self._at(node)
            self.problems.append(Problem(self.file, line, column, json_path(path), message, "error",
                                         hint))

    def _visit(self, node, path: tuple) -> None:
        """Count the copies aliases make; too many is an error."""
        if id(node) not in self._seen:
            self._seen.add(id(node))
            return
        self._copies += 1
        if self._copies > MAX_ALIAS_COPIES:
            line, column = self._at(node)
            raise ChatconvError(Problem(
                self.file, line, column, json_path(path),
                f"YAML aliases expand to more than {MAX_ALIAS_COPIES} nodes", "error",
                "remove the nested aliases (&anchor / *alias) that multiply the document"))

    def _check_tag(self, node, path: tuple) -> bool:
        if node.tag in _KNOWN_TAGS[type(node)]:
            return True
        tag = node.tag.replace(_YAML_TAG, "!!", 1)
        self._report(node, path, f"unsupported YAML tag {tag!r}",
                     "remove it; chatconv reads plain data: strings, numbers, lists, mappings")
        return False

    def build(self, node, path: tuple, key_node=None) -> Any:
        self._visit(node, path)
        self.positions.setdefault(path, self._at(key_node or node))
        known_tag = self._check_tag(node, path)
        if isinstance(node, yaml.ScalarNode):
            return self._scalar(node, path) if known_tag else node.value
        if isinstance(node, yaml.SequenceNode):
            items = []
            for index, item in enumerate(node.value):
                items.append(self.build(item, path + (index,)))
            return items
        result = {}
        for key, (key_node, value_node) in self._pairs(node, path).items():
            result[key] = self.build(value_node, path + (key,), key_node)
        return result

    def _scalar(self, node, path: tuple) -> Any:
        # Dates and other non-JSON scalars stay the text that was written.
        if node.tag in _TEXT_TAGS:
            return node.value
        try:
            return self.loader.construct_object(node)
        except (ValueError, KeyError, yaml.YAMLError):  # e.g. `!!int abc`
            tag = node.tag.replace(_YAML_TAG, "!!", 1)
            self._report(node, path, f"{node.value!r} is not a valid {tag}",
                         f"remove the tag {tag}")
            return node.value

    def _pairs(self, node, path: tuple) -> dict[str, tuple]:
        """key -> (key node, value node) of a mapping, merge keys (<<) expanded as YAML says: a
        key written in the mapping wins over a merged one wherever it stands, an earlier merge
        source over a later one. Keys come in the order written, merged ones at the merge key."""
        written = {}
        for key_node, value_node in node.value:
            if key_node.tag != _MERGE_TAG:
                key = self._key(key_node, path)
                if key in written:
                    self._report(key_node, path + (key,), f"duplicate key {key!r}",
                                 "a YAML mapping holds each key once; remove one of them")
                written[key] = (key_node, value_node)
        pairs = {}
        for key_node, value_node in node.value:
            if key_node.tag != _MERGE_TAG:
                pairs.setdefault(key_node.value, written[key_node.value])
                continue
            for source in self._merge_sources(value_node, path):
                for key, nodes in self._pairs(source, path).items():
                    if key not in written:
                        pairs.setdefault(key, nodes)
        return pairs

    def _key(self, key_node, path: tuple) -> str:
        if not isinstance(key_node, yaml.ScalarNode):
            line, column = self._at(key_node)
            raise ChatconvError(Problem(self.file, line, column, json_path(path),
                                        "a mapping key must be a plain string"))
        self._check_tag(key_node, path)
        return key_node.value  # as written: `yes:` stays "yes", `1:` stays "1"

    def _merge_sources(self, node, path: tuple) -> list:
        """The mappings a merge key's value names; anything else is a problem."""
        items = node.value if isinstance(node, yaml.SequenceNode) else [node]
        sources = []
        for item in items:
            if isinstance(item, yaml.MappingNode):
                self._visit(item, path)
                self._check_tag(item, path)
                sources.append(item)
            else:
                self._report(item, path, "a merge key (<<) takes a mapping or a list of mappings",
                             "name an anchored mapping, e.g. <<: *defaults, or <<: [*a, *b]")
        return sources


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
    return Problem(file, line, column, "$", f"invalid JSON: {exc.msg}", "error", hint)


def iter_jsonl(stream: BinaryIO, file: str, start: int = 1) -> Iterator[Record]:
    """One record per non-blank line, in order; a broken line yields a record with `error`."""
    for number, line in enumerate(stream, start):
        if not line.removeprefix(UTF8_BOM).strip():
            continue  # blank, or a BOM alone (files joined end to end)
        yield load_json(line, file, number)


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

    Raises UnreadableInput when the file cannot be read at all (missing, UTF-16, ...).
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
    """The file, open for reading bytes; UnreadableInput says why it cannot be (e.g. it is
    UTF-16: refused here, once, rather than line by line)."""
    try:
        stream = open(path, "rb")
    except OSError:
        _read_file(path)  # raises the right UnreadableInput
        raise
    try:
        refuse_foreign_encoding(stream.peek(4)[:4], str(path))
    except UnreadableInput:
        stream.close()
        raise
    return stream


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
        record = load_json(data, file)
        if not record.error:
            record.problems = [problem_at(record, path + (key,), f"duplicate key {key!r}", "error",
                                          "a JSON object holds each key once; the last value would win")
                               for path, key in duplicate_keys(record.text)]
        return record
    try:
        text = decode_utf8(data, file)
    except ChatconvError as exc:
        return Record(file, exc.problems[0].line or 1, error=exc.problems[0])
    return load_yaml(text, file)


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


def integers_beyond_64_bits(text: str | bytes) -> list[str]:
    """The digits of each integer in the JSON `text` that orjson does not keep exact (it reads
    them as floats). Such a float is always written `d.ddde+NN`: callers look, with this, only
    when the JSON they write holds a `+`. RecursionError past ~1000 levels (the json module)."""
    found = []

    def note(digits: str) -> int:
        value = int(digits)
        if not -(1 << 63) <= value < (1 << 64):  # the integers orjson keeps exact
            found.append(digits)
        return 0  # the value is not wanted, only the digits

    json.loads(text.removeprefix(UTF8_BOM if isinstance(text, bytes) else "\ufeff"), parse_int=note)
    return found


class _Pairs(list):
    """An object's (key, value) pairs as the json module read them, repeated keys included."""


def read_stdin_head(stream: BinaryIO) -> tuple[str, bytes]:
    """The format of standard input (jsonl, json or yaml), and the lines read to tell it.

    JSONL when the first line that is not blank (a BOM aside) is a whole JSON object or array,
    or when it is a broken object and the next line is whole. A pretty-printed JSON document is
    neither: its first line opens a value it does not close (it ends with `{`, `[`, `,` or `:`).
    Else one JSON or YAML document, by the first character (see stdin_document_format).
    """
    head, content = b"", []
    while len(content) < 2 and (line := stream.readline()):
        head += line
        text = line.removeprefix(UTF8_BOM)  # a line holding just a BOM is blank, as everywhere
        if text.strip():
            content.append(text)
            if _is_whole_json_line(text) or not _may_be_a_broken_record(text):
                break
    if _is_whole_json_line(content[0] if content else b"") or (
            len(content) == 2 and _is_whole_json_line(content[1])):
        return "jsonl", head
    first = content[0].lstrip()[:1] if content else b""
    return ("json" if first in (b"{", b"[") else "yaml"), head


def stdin_document_format(data: bytes, told: str) -> str:
    """json stays json when the document reads as JSON; else it is YAML, which reads flow style
    (`{evalcases: [...]}`) that looks like JSON but is not."""
    if told != "json":
        return told
    try:
        orjson.loads(data.removeprefix(UTF8_BOM))
        return "json"
    except orjson.JSONDecodeError:
        readable_as_yaml = yaml_parse_problem(data.decode("utf-8-sig", "replace"), "-") is None
        return "yaml" if readable_as_yaml else "json"  # else the JSON error is the one to show


def _is_whole_json_line(line: bytes) -> bool:
    try:
        return isinstance(orjson.loads(line), (dict, list))
    except orjson.JSONDecodeError:
        return False


def _may_be_a_broken_record(line: bytes) -> bool:
    """A line that starts an object and does not end as a pretty-printed document's first line."""
    text = line.strip()
    return text.startswith(b"{") and not text.endswith((b"{", b"[", b",", b":"))


def _iter_stdin() -> Iterator[Record]:
    stream = sys.stdin.buffer
    fmt, head = read_stdin_head(stream)
    refuse_foreign_encoding(head[:4], "-")
    if fmt == "jsonl":
        yield from iter_jsonl(io.BytesIO(head), "-")
        yield from iter_jsonl(stream, "-", start=head.count(b"\n") + 1)
        return
    data = head + stream.read()
    yield _load_document(data, "-", stdin_document_format(data, fmt))


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
