"""The migration engine: finds the numbered modules in migrations/, chains them, and rewrites
JSONL recordings and YAML / JSON documents without losing a byte of meaning.

Each module says which record kinds it upgrades (KINDS), what shape it upgrades (SUMMARY),
finds that shape itself (`detect(record)` -> the JSON path of the first spot, or None) and
upgrades one record in place (`upgrade(record)` -> record). Modules run in the order of their
numbers.

`migrate_record` upgrades one record, `migrate_lines` a block of JSONL bytes (bytes in, bytes
out: it runs as it is inside other engines, e.g. Dask), `migrate_file` a whole file.
"""

from __future__ import annotations

import base64
import importlib.util
import io
import json
import os
import re
import shutil
import sys
import tempfile
from collections import deque
from concurrent.futures import Future, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from contextlib import nullcontext
from dataclasses import dataclass, field, replace
from functools import cache
from pathlib import Path
from typing import Any, BinaryIO, Callable, Iterable, Iterator

import orjson

from .problems import ChatconvError, Problem, UnreadableInput, json_path
from .schemas import resource_dir
from .sources import (UTF8_BOM, NotWritten, Record, decode_utf8, detect_kind, duplicate_keys, exact_json,
                      file_format, is_blank_line, iter_line_batches, load_json, load_yaml, open_binary,
                      read_stdin_head, refuse_foreign_encoding, stdin_document_format)

_MODULE_NAME = re.compile(r"^(\d{4})_[a-z0-9_]+\.py$")
_MISSING = object()

BATCH_BYTES = 1 << 20  # lines are read, migrated and written in batches of about this size
EXAMPLES_KEPT = 3  # spots kept per migration for --dry-run


# ---------------------------------------------------------------------------------------------
# Finding and chaining the migrations


@dataclass(frozen=True)
class Migration:
    name: str  # the module's file name without .py, e.g. 0001_step_output_array
    summary: str
    kinds: tuple[str, ...]
    detect: Callable[[Any], tuple | None]
    upgrade: Callable[[Any], Any]


@cache
def migrations() -> tuple[Migration, ...]:
    """Every migration, in the order of its number."""
    folder = resource_dir("_migrations", "migrations")
    found = []
    for path in sorted(folder.glob("*.py")):
        if not _MODULE_NAME.match(path.name):
            continue
        spec = importlib.util.spec_from_file_location(f"chatconv_migration_{path.stem}", path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        found.append(Migration(path.stem, module.SUMMARY, tuple(module.KINDS),
                               module.detect, module.upgrade))
    return tuple(found)


@cache
def migrations_for(kind: str | None) -> tuple[Migration, ...]:
    return tuple(m for m in migrations() if kind in m.kinds)


def upgrade_record(record: Any, kind: str | None) -> tuple[Any, list[tuple[Migration, tuple]]]:
    """Run every migration for `kind` whose shape the record has, in order.

    Returns the upgraded record (the input may have been changed in place) and the migrations
    applied, each with the path of the first spot it found.
    """
    applied = []
    for migration in migrations_for(kind):
        spot = migration.detect(record)
        if spot is not None:
            record = migration.upgrade(record)
            applied.append((migration, spot))
    return record, applied


def migrate_record(record: Any, kind: str | None = None) -> tuple[Any, list[str]]:
    """Upgrade one record to the current shape; its kind is told from its content unless given.

    Returns the record (changed in place where possible) and the names of the migrations applied.
    """
    kind = kind or detect_kind(record)
    record, applied = upgrade_record(record, kind)
    return record, [migration.name for migration, _ in applied]


# ---------------------------------------------------------------------------------------------
# Helpers for migrations: edits that keep key order, and ruamel.yaml comments


def rename_key(mapping: dict, old: str, new: str, value: Any = _MISSING) -> None:
    """Rename `old` to `new` where it stands (optionally with a new value), keeping key order.

    Works on plain dicts and on ruamel.yaml's CommentedMap, whose comments move with the key.
    """
    if value is _MISSING:
        value = mapping[old]
    if _is_commented(mapping):
        position = list(mapping).index(old)
        comment = mapping.ca.items.pop(old, None)
        del mapping[old]
        mapping.insert(position, new, value)
        if comment is not None:
            mapping.ca.items[new] = comment
        return
    keys = list(mapping)
    after = [(key, mapping.pop(key)) for key in keys[keys.index(old) + 1:]]  # most often none
    del mapping[old]
    mapping[new] = value
    mapping.update(after)


def insert_after(mapping: dict, anchor: str, key: str, value: Any) -> None:
    """Add `key` right after `anchor` (which must be in the mapping), keeping the other keys' order."""
    if _is_commented(mapping):
        mapping.insert(list(mapping).index(anchor) + 1, key, value)
        return
    items = list(mapping.items())
    items.insert(list(mapping).index(anchor) + 1, (key, value))
    mapping.clear()
    mapping.update(items)


def move_comment(source: dict, source_key: str, target: dict, target_key: str) -> None:
    """Move the comment after `source_key`'s value to after `target_key`'s value.

    For a value that a migration wraps (`input: text` -> `input_messages: [{..., content: text}]`):
    the comment that followed the text must follow it in its new place. No-op on plain dicts.
    """
    if _is_commented(source) and _is_commented(target):
        comment = source.ca.items.pop(source_key, None)
        if comment is not None:
            target.ca.items[target_key] = comment


def new_like(container: Any, items: Iterable = ()) -> Any:
    """A new list or mapping of the same type as `container` (a ruamel.yaml one for YAML)."""
    made = type(container)()
    if isinstance(made, list):
        made.extend(items)
    else:
        made.update(items)
    return made


def _is_commented(container: Any) -> bool:
    return hasattr(container, "ca") and hasattr(container, "insert")


# ---------------------------------------------------------------------------------------------
# JSONL: batches of lines, bytes in and bytes out


@dataclass
class Reject:
    """A line (or a YAML / JSON document) that could not be parsed or migrated."""

    file: str
    line: int
    error: str
    text: bytes  # as read, without its line ending

    def to_json_line(self) -> bytes:
        """{"file", "line", "error", "text"}; text that is not UTF-8 also comes whole as base64."""
        entry: dict[str, Any] = {"file": self.file, "line": self.line, "error": self.error}
        try:
            entry["text"] = self.text.decode("utf-8")
        except UnicodeDecodeError:
            entry["text"] = self.text.decode("utf-8", "replace")
            entry["base64"] = base64.b64encode(self.text).decode("ascii")
        return orjson.dumps(entry) + b"\n"


class LineRejected(ChatconvError):
    """A line that cannot be parsed or migrated: it stops the run unless rejects are kept."""

    def __init__(self, reject: Reject):
        self.reject = reject
        super().__init__(Problem(reject.file, reject.line, None, "$", reject.error))

    def __reduce__(self):  # crosses process boundaries (--jobs, Dask) whole
        return (type(self), (self.reject,))


@dataclass
class Tally:
    """Counts of records (JSONL lines, blank ones included, or whole documents)."""

    read: int = 0
    migrated: int = 0
    unchanged: int = 0
    rejected: int = 0
    by_migration: dict[str, int] = field(default_factory=dict)  # records each migration changed
    examples: dict[str, list[tuple[str, int, str]]] = field(default_factory=dict)  # (file, line, path)
    rejected_examples: list[tuple[str, int, str]] = field(default_factory=list)  # (file, line, error)

    @property
    def written(self) -> int:
        return self.migrated + self.unchanged

    def count_migrated(self, file: str, line: int, applied: list[tuple[Migration, tuple]]) -> None:
        self.migrated += 1
        for migration, spot in applied:
            count = self.by_migration[migration.name] = self.by_migration.get(migration.name, 0) + 1
            if count <= EXAMPLES_KEPT:
                self.examples.setdefault(migration.name, []).append((file, line, json_path(spot)))

    def count_rejected(self, reject: Reject) -> None:
        self.rejected += 1
        if self.rejected <= EXAMPLES_KEPT:
            self.rejected_examples.append((reject.file, reject.line, reject.error))

    def add(self, other: Tally) -> None:
        self.read += other.read
        self.migrated += other.migrated
        self.unchanged += other.unchanged
        self.rejected += other.rejected
        for name, count in other.by_migration.items():
            self.by_migration[name] = self.by_migration.get(name, 0) + count
        for name, spots in other.examples.items():
            kept = self.examples.setdefault(name, [])
            kept.extend(spots[:EXAMPLES_KEPT - len(kept)])
        self.rejected_examples.extend(other.rejected_examples[:EXAMPLES_KEPT - len(self.rejected_examples)])


@dataclass
class MigratedLines:
    data: bytes  # what to write: every line that was not rejected, in order
    tally: Tally
    rejects: list[Reject]


class _BadRecord(Exception):
    """Why one record cannot be parsed or migrated; becomes a Reject with its position."""

    def __init__(self, message: str, line_offset: int = 0):
        super().__init__(message)
        self.line_offset = line_offset  # within a document: lines after its first


def migrate_lines(data: bytes, file: str = "-", first_line: int = 1,
                  keep_rejects: bool = False) -> MigratedLines:
    """Migrate whole JSONL lines; returns the bytes to write, the counts and the rejects.

    A line that no migration changes (a blank line included) is written as it was read, byte
    for byte; a migrated line becomes compact JSON (orjson: keys in order, UTF-8, no spaces)
    with the line's own ending (`\\n`, `\\r\\n` or none). A line that cannot be parsed or
    migrated raises LineRejected, or, with keep_rejects, is left out and returned in `rejects`.
    """
    kind_of = detect_kind
    written: list[bytes] = []
    tally = Tally()
    rejects: list[Reject] = []
    for number, line in enumerate(io.BytesIO(data), first_line):
        tally.read += 1
        try:
            applied = _migrate_line(line, kind_of, written)
        except _BadRecord as exc:
            reject = Reject(file, number, str(exc), line.rstrip(b"\r\n"))
            if not keep_rejects:
                raise LineRejected(reject) from None
            rejects.append(reject)
            tally.count_rejected(reject)
            continue
        if applied:
            tally.count_migrated(file, number, applied)
    tally.unchanged = tally.read - tally.migrated - tally.rejected
    return MigratedLines(b"".join(written), tally, rejects)


def _migrate_line(line: bytes, kind_of, written: list[bytes]) -> list:
    """Append what to write for `line` to `written`; return the migrations applied."""
    if is_blank_line(line):
        written.append(line)
        return []
    record, exact = _parse_json(line)  # JSON allows the line ending
    record, applied = _upgrade(record, kind_of)
    if not applied:
        written.append(line)
        return applied
    if not exact:
        raise _BadRecord(_NOT_EXACT)
    text = _written_back(record, line)
    if line.startswith(UTF8_BOM):
        written.append(UTF8_BOM)
    written.append(text)
    if line.endswith(b"\n"):  # the line's own ending: \n, \r\n, or (the last line) \r or none
        written.append(b"\r\n" if line.endswith(b"\r\n") else b"\n")
    elif line.endswith(b"\r"):
        written.append(b"\r")
    return applied


_NOT_EXACT = ("holds what cannot be written back exactly (a lone surrogate, or a number beyond the "
              "range of a double): migrate it by hand")


def _parse_json(text: bytes) -> tuple[Any, bool]:
    """The JSON value of `text`, and whether orjson read it (so can write it back exactly).

    JSON that orjson refuses but the standard allows (a lone surrogate escape, 1e400) is read
    with the json module, so that a line no migration changes is still kept as it is. Nesting
    deeper than 1024 levels neither reads: such a line is a reject.
    """
    body = text.removeprefix(UTF8_BOM)  # the same object, and no cost, when there is none
    try:
        return orjson.loads(body), True
    except orjson.JSONDecodeError:
        pass
    try:
        return json.loads(body, parse_constant=_no_constant), False
    except (ValueError, RecursionError):
        pass
    record = load_json(text, "", 1)  # accepts a leading UTF-8 BOM; else explains the error
    if record.error:
        problem = record.error
        where = f" at line {problem.line}, column {problem.column}" if b"\n" in text.rstrip() else (
            f" at column {problem.column}")
        hint = f" ({problem.hint})" if problem.hint else ""
        raise _BadRecord(f"{problem.message}{where}{hint}", (problem.line or 1) - 1)
    return record.data, True


def _no_constant(name: str) -> None:
    raise ValueError(f"{name} is not JSON")  # the json module would take NaN and Infinity


def _upgrade(record: Any, kind_of: Callable[[Any], str | None]) -> tuple[Any, list]:
    try:
        return upgrade_record(record, kind_of(record))
    except Exception as exc:  # a migration tripped on a shape it did not expect: that record's fault
        raise _BadRecord(f"cannot be migrated: {type(exc).__name__}: {exc}") from None


def _written_back(record: Any, original: bytes) -> bytes:
    """The migrated record as compact JSON, or _BadRecord when it would not be written exactly
    (see exact_json): nested too deep, or an integer beyond 64 bits whose digits would change."""
    try:
        return exact_json(record, original)
    except NotWritten as exc:
        raise _BadRecord(f"cannot be written back: {exc} ({exc.hint})") from None


# ---------------------------------------------------------------------------------------------
# YAML and JSON documents (eval files, mostly)


def migrate_document(data: bytes, file: str, fmt: str, keep_rejects: bool = False) -> MigratedLines:
    """Migrate a whole YAML or JSON document; its bytes are kept when nothing changes.

    YAML is rewritten with ruamel.yaml's round trip (comments, quoting, key order and the
    file's indentation kept); JSON keeps its indentation, or stays on one line.
    A document that cannot be read is rejected whole (LineRejected unless keep_rejects).
    """
    tally = Tally(read=1)
    try:
        new, applied = _migrate_yaml(data, file) if fmt == "yaml" else _migrate_json(data)
    except _BadRecord as exc:
        reject = Reject(file, 1 + exc.line_offset, str(exc), data)
        if not keep_rejects:
            raise LineRejected(reject) from None
        tally.count_rejected(reject)
        return MigratedLines(b"", tally, [reject])
    if applied:
        tally.count_migrated(file, 1, applied)
    else:
        tally.unchanged = 1
    return MigratedLines(new, tally, [])


def _migrate_json(data: bytes) -> tuple[bytes, list]:
    record, exact = _parse_json(data)
    record, applied = _upgrade(record, detect_kind)
    if not applied:
        return data, []
    if not exact:
        raise _BadRecord(_NOT_EXACT)
    repeated = duplicate_keys(data)
    if repeated:  # written back, the object would keep only the last value
        path, key = repeated[0]
        raise _BadRecord(f"{json_path(path + (key,))}: duplicate key {key!r}; keep one of them, then migrate")
    indent = _json_indent(data)
    written = _written_back(record, data)  # refuses what cannot be written exactly
    if indent is not None:
        try:
            written = json.dumps(record, indent=indent, ensure_ascii=False).encode()
        except RecursionError:
            raise _BadRecord("cannot be written back (RecursionError): it nests too deeply") from None
    return _like_original(written, data), applied


def _json_indent(data: bytes) -> str | None:
    """The indentation of a pretty-printed JSON text (its first indented line), None for one line."""
    match = re.search(rb"\n([ \t]+)\S", data.strip())
    return match.group(1).decode() if match else None


def _migrate_yaml(data: bytes, file: str) -> tuple[bytes, list]:
    """Upgrade a YAML document with ruamel.yaml's round trip, so that comments, quoting and key
    order stay. What it must mean is told first from chatconv's own reading (merges and aliases
    expanded, within the limits validate keeps); the rewrite is read back and must mean that."""
    try:
        text = decode_utf8(data, file)
    except ChatconvError as exc:
        raise _BadRecord(exc.problems[0].message, (exc.problems[0].line or 1) - 1) from None
    kind_of = lambda data: detect_kind(data, file)  # noqa: E731
    expected, applied = _upgrade(_read_yaml(text, file), kind_of)
    if not applied:
        return data, []
    yaml = _round_trip_yaml(text)
    try:
        document = yaml.load(text)
    except Exception as exc:  # ruamel.yaml is stricter in places (a duplicate key, say)
        raise _BadRecord(f"invalid YAML: {' '.join(str(exc).split())}") from None
    try:
        document, _ = upgrade_record(document, kind_of(document))
    except Exception as exc:  # ruamel.yaml fails to delete a key that a merge shares, say
        raise _BadRecord(_shared_nodes_message(document) or f"cannot be migrated: {type(exc).__name__}: {exc}") from None
    out = io.StringIO()
    yaml.dump(document, out)
    written = _keep_document_markers(out.getvalue(), text)
    if _read_yaml(written, file) != expected:
        raise _BadRecord(_shared_nodes_message(document) or "the rewritten YAML would not mean what the file means "
                         "as read (a date or tagged value read otherwise): migrate it by hand")
    return _like_original(written.encode(), data), applied


def _read_yaml(text: str, file: str) -> Any:
    """The document as validate and prompt read it; _BadRecord when it cannot be."""
    try:
        record = load_yaml(text, file)
    except ChatconvError as exc:  # aliases that expand without bound
        record = Record(file, 1, error=exc.problems[0])
    problem = record.error or next((p for p in record.problems if p.is_error), None)
    if problem is not None:  # e.g. a duplicate key: which of its values is meant is not known
        raise _BadRecord(f"{problem.path}: {problem.message}" if problem.path != "$" else problem.message,
                         (problem.line or 1) - 1)
    return record.data


def _shared_nodes_message(document: Any) -> str | None:
    if not _has_merge_keys(document) and not _has_aliases(document):
        return None
    return ("uses YAML merge keys (<<) or aliases (*name) that a migration would edit through, changing "
            "every place that shares them: write the shared keys out, then migrate")


_PREAMBLE = re.compile(r"(?:[ \t]*(?:#[^\n]*)?\n)+(?=---)")  # comment and blank lines above `---`


def _keep_document_markers(written: str, original: str) -> str:
    """ruamel.yaml drops the comments above a `---` document start (a yaml-language-server
    header, say) and a `...` document end: put them back as they were."""
    preamble = _PREAMBLE.match(original)
    if preamble and written.startswith("---"):
        written = preamble.group() + written
    if re.search(r"\n\.\.\.[ \t]*\n?\Z", original) and not written.rstrip().endswith("\n..."):
        written = written.rstrip("\n") + "\n...\n"
    return written


class _Verbatim(str):
    """A YAML scalar kept as the text it was written as, with its tag."""

    def __new__(cls, text: str, tag: str):
        scalar = super().__new__(cls, text)
        scalar.tag = tag
        return scalar


# Floats and dates are read as the text they were written as, and written back so: ruamel.yaml
# would respell 1e-400 as 0e+000, make 1e400 .inf, invent digits beyond a double's, and read a
# date as a date where chatconv's reader (and so a migration's plain reading) sees text.
_VERBATIM_TAGS = ("tag:yaml.org,2002:float", "tag:yaml.org,2002:timestamp")


def _has_aliases(node: Any, seen: set | None = None) -> bool:
    """Whether a container is reached twice: ruamel.yaml reads an alias as the same object."""
    seen = set() if seen is None else seen
    if not isinstance(node, (dict, list)):
        return False
    if id(node) in seen:
        return True
    seen.add(id(node))
    return any(_has_aliases(v, seen) for v in (node.values() if isinstance(node, dict) else node))


def _has_merge_keys(node: Any) -> bool:
    if isinstance(node, dict):
        return bool(getattr(node, "merge", None)) or any(_has_merge_keys(v) for v in node.values())
    if isinstance(node, list):
        return any(_has_merge_keys(v) for v in node)
    return False


def _round_trip_yaml(text: str):
    """A ruamel.yaml round-trip reader and writer set up to write `text` back as it was."""
    from ruamel.yaml import YAML

    yaml = YAML()  # round trip: comments, key order, anchors
    yaml.preserve_quotes = True
    yaml.width = sys.maxsize  # never fold a line that was not folded (folding loses runs of spaces)
    for tag in _VERBATIM_TAGS:
        yaml.constructor.add_constructor(tag, lambda _, node: _Verbatim(node.value, node.tag))
    yaml.representer.add_representer(_Verbatim, lambda r, data: r.represent_scalar(data.tag, str(data)))
    mapping, sequence, offset = _yaml_indents(text)
    yaml.indent(mapping=mapping, sequence=sequence, offset=offset)
    yaml.explicit_start = bool(re.match(r"(\s*#[^\n]*\n)*\s*---", text))
    return yaml


_KEY_ONLY = re.compile(r"^([ -]*)[^ #-][^#]*:\s*(#.*)?$")  # `key:` or `- key:`, its value below


def _yaml_indents(text: str) -> tuple[int, int, int]:
    """(mapping, sequence, offset) indentation as ruamel.yaml takes them, read from the first
    block mapping and the first block sequence under a `key:` line (else 2, 2, 0)."""
    mapping = sequence = offset = None
    parent = None  # the column of the previous line's key when that line was `key:` alone
    for line in text.splitlines():
        content = line.lstrip(" ")
        if not content or content.startswith("#"):
            continue
        column = len(line) - len(content)
        if parent is not None:
            if content.startswith("- ") and sequence is None and column >= parent:
                item = content[1:].lstrip(" ")
                offset, sequence = column - parent, len(line) - len(item) - parent
            elif not content.startswith("-") and mapping is None and column > parent:
                mapping = column - parent
        key_only = _KEY_ONLY.match(line)
        parent = len(key_only.group(1)) if key_only else None
    if sequence is None:
        offset, sequence = 0, 2
    return mapping or 2, sequence, offset


def _like_original(new: bytes, original: bytes) -> bytes:
    """`new` with the original's BOM, line endings (CRLF) and final newline (or its absence)."""
    if b"\r\n" in original:
        new = new.replace(b"\r\n", b"\n").replace(b"\n", b"\r\n")
    newline = b"\r\n" if b"\r\n" in original else b"\n"
    new = new.rstrip(b"\r\n")
    if original.endswith(b"\n"):
        new += newline
    if original.startswith(UTF8_BOM) and not new.startswith(UTF8_BOM):
        new = UTF8_BOM + new
    return new


# ---------------------------------------------------------------------------------------------
# Files: batches, worker processes, atomic rewrite


class Workers:
    """Migrates a JSONL file a batch of whole lines at a time, in `jobs` worker processes when
    jobs > 1, else in this one; results come back in file order. At most two batches per
    process are in flight, so memory stays flat in the file size. Use it as a context manager:
    leaving it ends the processes.
    """

    def __init__(self, jobs: int = 1):
        self.jobs = jobs
        self._pool, self._turn = _start_workers(jobs) if jobs > 1 else (None, None)

    def __enter__(self) -> Workers:
        return self

    def __exit__(self, *exc_info) -> None:
        if self._pool is not None:
            self._pool.shutdown(cancel_futures=True)

    def migrate(self, file: str, source: BinaryIO, head: bytes, keep_rejects: bool,
                append_to: str | None = None) -> Iterator[tuple[int, MigratedLines]]:
        """(input bytes done, result) for each batch of `file`, in order. `source` is open on
        it, past `head` (standard input's first line, read to tell its format). With
        `append_to`, worker processes append the migrated lines to that file themselves, in
        order, and return results without them; else results hold them."""
        # Standard input, or a pipe, cannot be shared out by offsets (a file named "-" is not it).
        if self._pool is None or file == "-" or not os.path.isfile(file):
            done = 0
            for first_line, lines in _batches(source, head):
                done += len(lines)
                yield done, migrate_lines(lines, file, first_line, keep_rejects)
            return
        # This process only finds where batches end: the workers read, count, migrate and
        # write the lines, so that nearly all the work is shared out. Line numbers are made
        # whole here, from the lines counted in the batches before.
        condition, turn = self._turn
        with condition:
            turn.value = 0
        lines_before = 0
        tasks = ((offset + length, (_migrate_file_part, file, offset, length, keep_rejects, batch, append_to))
                 for batch, (offset, length) in enumerate(_file_parts(source)))
        ahead = self._ahead(tasks)
        try:
            for done, future in ahead:
                result = _result(future, file, lines_before)
                lines_before += result.tally.read
                yield done, result
        finally:
            ahead.close()  # now, not when garbage is collected: see _ahead

    def _ahead(self, tasks: Iterable[tuple[int, tuple]]) -> Iterator[tuple[int, Future]]:
        """Submit (key, (function, *args)) tasks, two per process ahead; (key, future) in order."""
        pending: deque = deque()
        try:
            for key, (function, *args) in tasks:
                pending.append((key, self._pool.submit(function, *args)))
                if len(pending) >= 2 * self.jobs:
                    yield pending.popleft()
            while pending:
                yield pending.popleft()
        finally:
            # A batch still running would write into the file's temporary file after it is
            # removed, or take the turns of the next file's batches: wait for it to end.
            wait([future for _, future in pending if not future.cancel()])


def _start_workers(jobs: int) -> tuple[ProcessPoolExecutor, tuple]:
    """The pool, and the turn its workers write in: (a condition, the next batch to write)."""
    from .workers import start_pool, worker_context

    context = worker_context()
    turn = (context.Condition(), context.RawValue("q", 0))
    return start_pool(jobs, _start_worker, (turn,), context), turn


_turn: tuple | None = None  # in a worker process: (condition, number of the next batch to write)
_STOPPED = -1  # the turn after a batch that failed: the batches after it write nothing


def _start_worker(turn: tuple) -> None:
    global _turn
    _turn = turn


def _file_parts(stream: BinaryIO) -> Iterator[tuple[int, int]]:
    """(offset, length) of a file's batches of whole lines of about BATCH_BYTES, found by
    seeking to where each would end and reading on to the end of that line."""
    size = os.fstat(stream.fileno()).st_size
    offset = 0
    while offset < size:
        stream.seek(offset + BATCH_BYTES)
        stream.readline()
        end = min(stream.tell(), size)
        yield offset, end - offset
        offset = end


def _migrate_file_part(file: str, offset: int, length: int, keep_rejects: bool, batch: int,
                       append_to: str | None) -> MigratedLines:
    """migrate_lines on a part of a file, its lines numbered from 1 (see _result); with
    append_to, the lines are appended to that file in the batch's turn, not returned."""
    with open(file, "rb") as stream:
        stream.seek(offset)
        data = stream.read(length)
    try:
        result = migrate_lines(data, file, 1, keep_rejects)
    except BaseException:
        if append_to is not None:
            _write_in_turn(batch, None)  # the batches before are written; those after must not be
        raise
    if append_to is None:
        return result
    _write_in_turn(batch, append_to, result.data)
    return replace(result, data=b"")


def _write_in_turn(batch: int, path: str | None, data: bytes = b"") -> None:
    """Wait for this batch's turn, then append `data` to `path` and pass the turn on; with no
    path (the batch failed), stop the batches after it instead."""
    condition, turn = _turn
    with condition:
        condition.wait_for(lambda: turn.value in (batch, _STOPPED))
        if turn.value == _STOPPED:
            return
        turn.value = _STOPPED  # until this batch is written: a failed write stops the batches after it
        try:
            if path is not None:
                try:
                    with open(path, "ab") as out:
                        out.write(data)
                except OSError as exc:  # named, so that the main process can tell whose it is
                    raise OSError(exc.errno, exc.strerror, path) from None
                turn.value = batch + 1
        finally:
            condition.notify_all()


def _result(future: Future, file: str, lines_before: int) -> MigratedLines:
    """A worker's result, its lines numbered from the start of the file."""
    try:
        result = future.result()
    except LineRejected as exc:
        raise LineRejected(replace(exc.reject, line=exc.reject.line + lines_before)) from None
    except BrokenProcessPool:
        raise UnreadableInput(Problem(
            file, None, None, "$", "migration stopped: a worker process ended unexpectedly", "error",
            "run again, or with --jobs 1 (e.g. if memory is short); the file was not changed")) from None
    for reject in result.rejects:
        reject.line += lines_before
    tally = result.tally
    tally.examples = {name: [(path, line + lines_before, spot) for path, line, spot in spots]
                      for name, spots in tally.examples.items()}
    tally.rejected_examples = [(path, line + lines_before, error) for path, line, error in tally.rejected_examples]
    return result


class AtomicFile:
    """A file written beside `target` that replaces it whole on commit(), else vanishes.

    The data is fsynced before os.replace (atomic), and the folder after it: a crash at any
    moment leaves the old file or the new one. A killed run may leave its `.NAME.*.tmp` behind,
    never a partial TARGET. With backup, the old file is kept as TARGET.bak (a hard link).
    """

    def __init__(self, target: Path, backup: bool = False):
        self.target = target
        self.backup = backup
        handle, self.temporary = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.",
                                                  suffix=".tmp")
        self.stream = os.fdopen(handle, "wb")

    def __enter__(self) -> AtomicFile:
        return self

    def __exit__(self, *exc_info) -> None:
        self.discard()

    def write(self, data: bytes) -> None:
        try:
            self.stream.write(data)
        except OSError as exc:
            raise _unwritable(self.target, exc) from None

    def commit(self) -> None:
        self.stream.flush()
        os.fsync(self.stream.fileno())
        self.stream.close()
        _keep_owner(self.temporary, self.target)  # before chmod: chown clears set-user-id bits
        os.chmod(self.temporary, _mode_for(self.target))
        if self.backup and self.target.exists():
            _keep_backup(self.target)
        os.replace(self.temporary, self.target)
        _fsync_folder(self.target.parent)

    def discard(self) -> None:
        self.stream.close()
        if os.path.exists(self.temporary):
            os.unlink(self.temporary)


def _mode_for(target: Path) -> int:
    """The target's permissions, or those a new file gets (mkstemp makes its files 0600)."""
    try:
        return os.stat(target).st_mode & 0o7777
    except FileNotFoundError:
        umask = os.umask(0)  # the only portable way to read the umask is to set it
        os.umask(umask)
        return 0o666 & ~umask


def _keep_owner(new: str, target: Path) -> None:
    """The new file gets the old one's owner and group, where this process may give them (as
    root, say): a file rewritten for its owner should stay readable by that owner."""
    try:
        old = os.stat(target)
        if (old.st_uid, old.st_gid) != (os.getuid(), os.getgid()):
            os.chown(new, old.st_uid, old.st_gid)
    except (OSError, AttributeError):  # a new target; not allowed; no chown on Windows
        pass


def _keep_backup(target: Path) -> None:
    backup = target.with_name(target.name + ".bak")
    staged = target.with_name(f".{target.name}.bak.{os.getpid()}.tmp")
    if staged.exists():
        staged.unlink()
    try:
        os.link(target, staged)  # the old bytes stay where they are: no copy of a large file
    except OSError:
        shutil.copy2(target, staged)
    try:
        os.replace(staged, backup)
    except OSError:
        staged.unlink()
        raise


def _fsync_folder(folder: Path) -> None:
    try:
        handle = os.open(folder, os.O_RDONLY)
    except OSError:
        return  # folders cannot be opened on Windows; the rename is durable there already
    try:
        os.fsync(handle)
    except OSError:
        pass
    finally:
        os.close(handle)


def migrate_file(path: str, output: Path | BinaryIO | None, *, backup: bool = False,
                 rejects: BinaryIO | None = None, workers: Workers | None = None,
                 progress: Callable[[int], None] | None = None) -> Tally:
    """Migrate one file (`-` is standard input) to `output` and return its counts.

    output: a path (written through AtomicFile; the input itself for an in-place run, which
    is left alone when nothing changes), a binary stream, or None to only count (dry run).
    rejects: a binary stream that receives a JSON line per rejected record (see Reject); it
    is fsynced before the file is replaced. Without it, a bad record raises LineRejected and
    leaves `output` untouched. progress, if given, is called with the input bytes read so far.
    Raises UnreadableInput when the file cannot be read.
    """
    in_place = isinstance(output, Path) and path != "-" and output.exists() and os.path.samefile(path, output)
    keep_rejects = rejects is not None
    tally = Tally()
    with _open_input(path) as source:
        sink = _atomic_output(output, backup) if isinstance(output, Path) else None
        results: Iterable = ()
        try:
            fmt, head = _input_format(path, source)
            if fmt == "jsonl":
                # Worker processes write straight into a file (a dry run's into nowhere); what
                # goes to a stream comes back to be written here.
                append_to = sink.temporary if sink is not None else os.devnull if output is None else None
                results = (workers or Workers()).migrate(path, source, head, keep_rejects, append_to)
            else:
                data = head + source.read()
                fmt = stdin_document_format(data, fmt) if path == "-" else fmt
                results = [(len(data), migrate_document(data, path, fmt, keep_rejects))]
            for done, result in _unless_unwritable(results, sink):
                tally.add(result.tally)
                if sink is not None:
                    sink.write(result.data)
                elif output is not None:
                    _write_stream(output, result.data)
                if result.rejects:
                    _set_aside(rejects, result.rejects)
                if progress is not None:
                    progress(done)
            if sink is not None and _should_commit(fmt, tally, in_place):
                if backup and os.path.lexists(f"{sink.target}.bak"):
                    raise UnreadableInput(Problem(
                        str(output), None, None, "$", f"{sink.target}.bak is an earlier backup, which --backup "
                        "would replace", "error", "move it away and run again; the file was not changed"))
                if rejects is not None:
                    _set_aside(rejects, [], sync=True)  # the rejected lines are safe before they leave the file
                try:
                    sink.commit()
                except OSError as exc:
                    raise _unwritable(output, exc) from None
        finally:
            if hasattr(results, "close"):
                results.close()  # the workers' batches are over before the temporary file goes
            if sink is not None:
                sink.discard()
    return tally


def _write_stream(output: BinaryIO, data: bytes) -> None:
    try:
        output.write(data)
    except OSError as exc:  # a full device; standard output's errors are the caller's to name
        if output is getattr(sys.stdout, "buffer", None):
            raise
        raise _unwritable(Path(getattr(output, "name", "the output")), exc) from None


def _set_aside(rejects: BinaryIO, found: list[Reject], sync: bool = False) -> None:
    """Append rejects to the rejects file (and, with sync, make them durable)."""
    try:
        for reject in found:
            rejects.write(reject.to_json_line())
        if sync:
            rejects.flush()
            os.fsync(rejects.fileno())
    except OSError as exc:
        name = getattr(rejects, "name", "the rejects file")
        raise UnreadableInput(Problem(str(name), None, None, "$", f"cannot write the rejected lines here: "
                                      f"{exc.strerror or exc}", "error", "give --rejects a file on a disk with room; "
                                      "nothing was replaced")) from None


def _unless_unwritable(results: Iterable, sink: AtomicFile | None) -> Iterator:
    """The results, but a failed write of the new file (a full disk, say) as _unwritable:
    workers report theirs as an OSError naming the temporary file."""
    try:
        yield from results
    except OSError as exc:
        if sink is None or exc.filename != sink.temporary:
            raise
        raise _unwritable(sink.target, exc) from None


def _atomic_output(target: Path, backup: bool) -> AtomicFile:
    try:
        return AtomicFile(target, backup)
    except OSError as exc:
        raise _unwritable(target, exc) from None


def _unwritable(target: Path, exc: OSError) -> UnreadableInput:
    # Nothing was replaced: AtomicFile leaves the old file whole when writing the new one fails.
    return UnreadableInput(Problem(str(target), None, None, "$", f"cannot write here: {exc.strerror or exc}",
                                   "error", "check that the folder exists, can be written to and has room"))


def _should_commit(fmt: str, tally: Tally, in_place: bool) -> bool:
    if fmt != "jsonl" and tally.rejected:
        return False  # a document that cannot be read is set aside whole: its file stays as it is
    return not in_place or bool(tally.migrated or tally.rejected)


def _open_input(path: str):
    return nullcontext(sys.stdin.buffer) if path == "-" else open_binary(path)


def _batches(source: BinaryIO, head: bytes) -> Iterator[tuple[int, bytes]]:
    """(number of the first line, whole lines) of the source's batches, after `head`."""
    if head:
        yield 1, head
    for first_line, _, lines in iter_line_batches(source, BATCH_BYTES):
        yield first_line + head.count(b"\n"), lines


def _input_format(path: str, source: BinaryIO) -> tuple[str, bytes]:
    """jsonl, json or yaml, and the bytes read to tell: standard input is told by its first
    lines, as `validate -` tells it (see read_stdin_head); files go by their name."""
    if path != "-":
        return file_format(path), b""
    fmt, head = read_stdin_head(source)
    refuse_foreign_encoding(head[:4], "-")  # a UTF-16 file is one problem: unreadable, as by name
    return fmt, head
