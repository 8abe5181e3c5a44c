"""inspect_ai's `.eval` logs: a zip holding `header.json` (the log without its samples),
`samples/<id>_epoch_<n>.json` (one EvalSample each), and entries derived from those
(`summaries.json`, `_journal/...`). Each sample entry is read as one record, one at a time, so a
big log is never held whole; each sample's record carries the log's header (one dict, shared).
"""

from __future__ import annotations

import zipfile
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator

from ...limits import LIMITS
from ...problems import Problem
from ...sources import Record, file_too_large, load_document, open_binary
from ...sources.files import is_regular_file

SUFFIX = ".eval"
ZIP_MAGIC = b"PK\x03\x04"
HEADER = "header.json"
START = "_journal/start.json"  # what a log still being written has instead of header.json
REDUCTIONS = "reductions.json"  # results.sample_reductions, which header.json leaves out
SAMPLES = "samples/"
# What reading an entry raises on a damaged archive: a bad CRC or size (BadZipFile), a broken
# deflate stream (zlib.error), a truncated file (EOFError), a method this Python lacks such as
# zstandard (NotImplementedError), an encrypted entry (RuntimeError).
ENTRY_ERRORS = (zipfile.BadZipFile, zlib.error, EOFError, NotImplementedError, RuntimeError, OSError)


@dataclass
class LogHeader:
    """A log's own fields (eval, plan, results, stats...), shared by the records of its samples."""

    data: dict
    kept_by: str | None = None  # the conversation whose metadata holds them (the first one written)


@dataclass
class SampleRecord(Record):
    """A sample entry of a `.eval` log."""

    log: LogHeader | None = None


def claims(file: str) -> bool:
    """A `.eval` file, or a zip (under any name) whose entries include header.json."""
    if Path(file).suffix.lower() == SUFFIX:
        return True
    if not is_regular_file(file):  # a pipe's first bytes, read here, would be gone for its reading
        return False
    try:
        with open(file, "rb") as stream:
            if stream.read(4) != ZIP_MAGIC:
                return False
            with zipfile.ZipFile(stream) as archive:
                return HEADER in archive.namelist()
    except (OSError, zipfile.BadZipFile):
        return False


def records(file: str) -> Iterator[Record]:
    """One record per sample entry, in the archive's order; a damaged archive or entry is a
    record with its error (UnreadableInput when the file cannot be opened at all)."""
    stream = open_binary(file)
    try:
        try:
            archive = zipfile.ZipFile(stream)
        except (zipfile.BadZipFile, OSError, EOFError) as exc:
            yield Record(file, 1, error=_broken(file, f"not a readable zip archive ({exc})"))
            return
        with archive:
            yield from _samples(file, archive)
    finally:
        stream.close()


def _samples(file: str, archive: zipfile.ZipFile) -> Iterator[Record]:
    names = archive.namelist()
    header, pending = _header(file, archive, names)  # pending: the header's problems, told once
    samples = [name for name in names if name.startswith(SAMPLES) and name.endswith(".json")]
    if not samples:
        pending.append(Problem(file, 1, 1, "$", "the log holds no samples/ entry: no conversation to import",
                               "warning", "a log whose eval was cancelled or failed early may have none",
                               "import-empty"))
    log = LogHeader(header)
    for name in samples:
        entry = f"{file}!{name}"
        try:
            raw = _entry_bytes(archive, name)
        except ENTRY_ERRORS as exc:
            yield Record(entry, 1, error=_broken(entry, f"this entry cannot be read ({type(exc).__name__}: {exc})"))
            continue
        if raw is None:
            yield Record(entry, 1, error=file_too_large(entry))
            continue
        record = load_document(raw, entry, "json")
        if record.error:
            yield record
            continue
        yield SampleRecord(entry, 1, record.data, problems=pending + record.problems, text=record.text, log=log)
        pending = []
    for problem in pending:  # no sample took them: each is told on a record of its own
        yield Record(file, 1, error=problem)


def _header(file: str, archive: zipfile.ZipFile, names: list[str]) -> tuple[dict, list[Problem]]:
    """The log's header (header.json, else the journal's start), with reductions.json added; an
    absent or unreadable header is a warning: the samples are read without it."""
    problems: list[Problem] = []
    header: dict = {}
    for name in (HEADER, START):
        if name in names:
            value = _entry_object(file, archive, name, problems)
            if value is not None:
                header = value
                break
    else:
        problems.append(Problem(file, 1, 1, "$", "the log has no header.json (nor _journal/start.json)", "warning",
                                "conversation ids then name the file instead of the eval's run_id", "bad-archive"))
    if REDUCTIONS in names:
        reductions = _entry_object(file, archive, REDUCTIONS, problems, kind=list)
        if reductions is not None:
            header = {**header, "reductions": reductions}
    return header, problems


def _entry_bytes(archive: zipfile.ZipFile, name: str) -> bytes | None:
    """An entry's bytes, or None when they are more than --max-file-bytes: found as they are
    inflated (the size an archive states may lie), so that a small archive that inflates to
    gigabytes takes no more memory than the limit."""
    limit = LIMITS.max_file_bytes
    with archive.open(name) as entry:
        data = entry.read(limit + 1)
    return None if len(data) > limit else data


def _entry_object(file: str, archive: zipfile.ZipFile, name: str, problems: list[Problem], kind=dict):
    entry = f"{file}!{name}"
    try:
        raw = _entry_bytes(archive, name)
        if raw is None:  # the header read without it, as an unreadable one is
            large = file_too_large(entry)
            problems.append(Problem(large.file, 1, 1, "$", large.message, "warning", large.hint, large.code))
            return None
        record = load_document(raw, entry, "json")
    except ENTRY_ERRORS as exc:
        problems.append(_broken(entry, f"this entry cannot be read ({type(exc).__name__}: {exc})", "warning"))
        return None
    if record.error:
        problems.append(Problem(entry, record.error.line, record.error.column, "$", record.error.message, "warning",
                                record.error.hint, record.error.code))
        return None
    if not isinstance(record.data, kind):
        problems.append(Problem(entry, 1, 1, "$", f"{name} is not a JSON {kind.__name__.replace('dict', 'object')}",
                                "warning", None, "wrong-type"))
        return None
    return record.data


def _broken(file: str, message: str, severity: str = "error") -> Problem:
    return Problem(file, 1, 1, "$", message, severity,
                   "the .eval log is damaged or truncated: copy it again, or rewrite it with "
                   "`inspect log convert --to json`", "bad-archive")
