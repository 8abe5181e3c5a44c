"""JSONL lines, bytes in and bytes out: each line parsed, upgraded and written back exactly,
or kept byte for byte when no migration changes it; what a run counts (Tally) and sets aside
(Reject). migrate_lines runs as it is inside other engines (worker processes, Dask).

The parsing, upgrading and exact writing of one record are shared with documents.py.
"""

from __future__ import annotations

import base64
import io
import json
from dataclasses import dataclass, field
from typing import Any, Callable

import orjson

from ..eras import NEWEST
from ..kinds import detect_kind
from ..problems import ChatconvError, Problem, json_path
from ..sources import UTF8_BOM, FieldClash, NotWritten, adapt, exact_json, is_blank_line, load_json, restore
from .registry import Migration, Refused, upgrade_record

EXAMPLES_KEPT = 3  # spots kept per migration for --dry-run


@dataclass
class Reject:
    """A line (or a YAML / JSON document) that could not be parsed or migrated."""

    file: str
    line: int
    error: str
    text: bytes  # as read, without its line ending
    code: str | None = None  # the check that refused it (see problems.CODES); not in the rejects file

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
        super().__init__(Problem(reject.file, reject.line, None, "$", reject.error, code=reject.code))

    def __reduce__(self):  # crosses process boundaries (--jobs, Dask) whole
        return (type(self), (self.reject,))


@dataclass
class Tally:
    """Counts of records (JSONL lines, blank ones included, or whole documents)."""

    read: int = 0
    migrated: int = 0
    unchanged: int = 0
    rejected: int = 0
    at_era: int = 0  # eval files left as they were, already at or past the era a run stops at (--to)
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
        self.at_era += other.at_era
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


class BadRecord(Exception):
    """Why one record cannot be parsed or migrated, and the code of that check (see
    problems.CODES); becomes a Reject with its position."""

    def __init__(self, message: str, code: str, line_offset: int = 0):
        super().__init__(message)
        self.code = code
        self.line_offset = line_offset  # within a document: lines after its first


def migrate_lines(data: bytes, file: str = "-", first_line: int = 1,
                  keep_rejects: bool = False, to_era: str | None = None,
                  field_map: dict | None = None) -> MigratedLines:
    """Migrate whole JSONL lines; returns the bytes to write, the counts and the rejects.

    A line that no migration changes (a blank line included) is written as it was read, byte
    for byte; a migrated line becomes compact JSON (orjson: keys in order, UTF-8, no spaces)
    with the line's own ending (`\\n`, `\\r\\n` or none). A line that cannot be parsed or
    migrated raises LineRejected, or, with keep_rejects, is left out and returned in `rejects`.
    to_era: an eval file on a line moves forward to that era (an era's name), not to the newest.
    field_map: fields read from other keys (sources.parse_field_map), migrated under their own keys.
    """
    kind_of = detect_kind
    written: list[bytes] = []
    tally = Tally()
    rejects: list[Reject] = []
    for number, line in enumerate(io.BytesIO(data), first_line):
        tally.read += 1
        try:
            applied = _migrate_line(line, kind_of, written, to_era, field_map)
        except BadRecord as exc:
            reject = Reject(file, number, str(exc), line.rstrip(b"\r\n"), exc.code)
            if not keep_rejects:
                raise LineRejected(reject) from None
            rejects.append(reject)
            tally.count_rejected(reject)
            continue
        if applied:
            tally.count_migrated(file, number, applied)
    tally.unchanged = tally.read - tally.migrated - tally.rejected
    return MigratedLines(b"".join(written), tally, rejects)


def _migrate_line(line: bytes, kind_of, written: list[bytes], to_era: str | None, field_map: dict | None = None) -> list:
    """Append what to write for `line` to `written`; return the migrations applied."""
    if is_blank_line(line):
        written.append(line)
        return []
    record, exact = parse_json(line)  # JSON allows the line ending
    # Most runs map no field: the plain upgrade, without a call more per line.
    record, applied = try_upgrade_mapped(record, kind_of, to_era, field_map) if field_map else \
        try_upgrade(record, kind_of, to_era)
    if not applied:
        written.append(line)
        return applied
    if not exact:
        raise BadRecord(NOT_EXACT, "not-written")
    text = written_back(record, line)
    if line.startswith(UTF8_BOM):
        written.append(UTF8_BOM)
    written.append(text)
    if line.endswith(b"\n"):  # the line's own ending: \n, \r\n, or (the last line) \r or none
        written.append(b"\r\n" if line.endswith(b"\r\n") else b"\n")
    elif line.endswith(b"\r"):
        written.append(b"\r")
    return applied


NOT_EXACT = ("holds what cannot be written back exactly (a lone surrogate, or a number beyond the "
             "range of a double): migrate it by hand")


def parse_json(text: bytes) -> tuple[Any, bool]:
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
        raise BadRecord(f"{problem.message}{where}{hint}", problem.code or "invalid-json", (problem.line or 1) - 1)
    return record.data, True


def _no_constant(name: str) -> None:
    raise ValueError(f"{name} is not JSON")  # the json module would take NaN and Infinity


def try_upgrade(record: Any, kind_of: Callable[[Any], str | None], until_era: str | None = None,
                locate: Callable[[tuple], tuple[int, int]] | None = None) -> tuple[Any, list]:
    """upgrade_record as a run makes it: an eval file to `until_era`, None: the newest. locate
    gives the line (and column) of a JSON path in a document, for a refusal's line."""
    try:
        return upgrade_record(record, kind_of(record), until_era or NEWEST.NAME)
    except Refused as exc:  # what has no home in a newer era: the record is left as it is
        # A path of the record as read is in the text; one of a later era's shape is not.
        line = locate(exc.path)[0] if locate and exc.path is not None and exc.moved_to is None else 1
        raise BadRecord(str(exc), "no-newer-home", line - 1) from None
    except Exception as exc:  # a migration tripped on a shape it did not expect: that record's fault
        raise BadRecord(f"cannot be migrated: {type(exc).__name__}: {exc}", "legacy-shape") from None


def try_upgrade_mapped(record: Any, kind_of: Callable[[Any], str | None], until_era: str | None,
                       field_map: dict | None, locate: Callable[[tuple], tuple[int, int]] | None = None
                       ) -> tuple[Any, list]:
    """try_upgrade on the record with its fields read from other keys (sources.adapt), each
    then put back under its own key, in its place (sources.restore): `--field output=agentMessages`
    migrates the legacy output held in `agentMessages` there."""
    if not field_map:
        return try_upgrade(record, kind_of, until_era, locate)
    try:
        view = adapt(record, field_map)
    except FieldClash as exc:
        raise BadRecord(str(exc), "field-clash", locate(exc.path)[0] - 1 if locate else 0) from None
    view, applied = try_upgrade(view, kind_of, until_era)  # its paths are the view's: no line
    return (restore(view, record, field_map), applied) if applied else (record, applied)


def written_back(record: Any, original: bytes) -> bytes:
    """The migrated record as compact JSON, or BadRecord when it would not be written exactly
    (see exact_json): nested too deep, or an integer beyond 64 bits whose digits would change."""
    try:
        return exact_json(record, original)
    except NotWritten as exc:
        raise BadRecord(f"cannot be written back: {exc} ({exc.hint})", "not-written") from None

