"""Cases written outside the eval file: `tests: ./cases.yaml`, `tests: file://x.jsonl`, and
`file://` (or plain path) entries of a `tests` list, globs included, found as file references are
(the eval file's folder, then its parents; inside the repository unless allowed). Each case comes with the file and JSON path it is written at,
so a problem in it names the case file, its line and its path.

Case files: `.yaml`/`.yml` (a list of cases), `.jsonl` (one case a line), `.json` (a list, or
`{tests: [...]}`), `.csv` (csvcases.py), and a folder (each subfolder's `case.yaml`, its id the
folder's name). Dataset functions (`.js`, `.ts`, `.py`) are refused as unsupported.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO, Iterator

from wcmatch import glob

from ..problems import ChatconvError, Problem
from ..references import FileReferenceError
from ..sources import (Record, compression_of, file_format, iter_jsonl_file, problem_at, read_document,
                       refuse_foreign_encoding)
from ..sources.compressed import open_decompressed
from ..eras import era_of
from . import Lookup, Source
from .environment import with_env_templates, with_environment
from .csvcases import read_csv_cases

_GLOB_MAGIC = set("*?[]{}()!+@")
_GLOB_FLAGS = glob.BRACE | glob.GLOBSTAR | glob.EXTGLOB
# Files that are code (dataset functions, SDK-authored eval files): chatconv runs no code.
CODE_SUFFIXES = (".js", ".mjs", ".cjs", ".ts", ".mts", ".py")


@dataclass
class RawCase:
    """One case as written (an object), where it is written, and whether a case file holds it."""

    data: dict
    source: Source
    path: tuple
    external: bool = False


def raw_cases(record: Record, lookup: Lookup, key: str = "tests") -> Iterator[RawCase | Problem]:
    """The cases of an eval file's `key` (a list of objects and references, or one reference),
    in order, references expanded in place."""
    value = record.data.get(key) if isinstance(record.data, dict) else None
    if isinstance(value, str):
        yield from referenced_cases(record, lookup, value, (key,))
    elif isinstance(value, list):
        source = Source(record.file, record.locate)
        for index, item in enumerate(value):
            if isinstance(item, dict):
                yield RawCase(item, source, (key, index))
            elif isinstance(item, str):
                yield from referenced_cases(record, lookup, item, (key, index))
            # anything else is the schema's to report


def referenced_files(record: Record, lookup: Lookup, reference: str,
                     where: tuple) -> tuple[list[Path], Problem | None]:
    """The files (or folders) a reference names; a problem at the reference (in the eval file)
    when it names none, or one outside the repository root that is not allowed."""
    written = reference.strip()
    relative = written.removeprefix("file://")
    base = lookup.folder
    try:
        if _GLOB_MAGIC & set(relative):
            found = sorted(Path(p) for p in glob.glob(relative, flags=_GLOB_FLAGS, root_dir=str(base)))
            files = [Path(os.path.normpath(base / p)) for p in found]
            if not files:
                return [], problem_at(record, where, f"no case file matches {written!r} (from {base})",
                                      hint="check the glob; it is relative to the eval file's folder",
                                      code="case-file")
            for path in files:
                lookup.refuse_outside(path, str(path))
            return files, None
        folder = Path(os.path.normpath(base / relative))
        if folder.is_dir():  # a folder of cases (<case>/case.yaml)
            lookup.refuse_outside(folder, written)
            return [folder], None
        return [lookup.resolve(relative)], None
    except FileReferenceError as exc:
        return [], problem_at(record, where, f"case {exc.message}" if exc.message.startswith("file ")
                              else f"case file {exc.message}", hint=exc.hint, code="case-file")
    except (OSError, ValueError) as exc:  # a name the file system refuses (too long, a NUL)
        return [], problem_at(record, where, f"case file {written!r} cannot be looked up: {exc}",
                              hint="check the path", code="case-file")


def referenced_cases(record: Record, lookup: Lookup, reference: str, where: tuple) -> Iterator[RawCase | Problem]:
    files, problem = referenced_files(record, lookup, reference, where)
    if problem:
        yield problem
    for path in files:
        yield from case_file_cases(record, lookup, path, where)


def case_file_cases(record: Record, lookup: Lookup, path: Path, where: tuple) -> Iterator[RawCase | Problem]:
    """The cases of one case file (or case folder) that the eval file names at `where`."""
    suffix = path.suffix.lower()
    if path.is_dir():
        yield from _folder_cases(record, lookup, path, where)
    elif suffix in CODE_SUFFIXES:
        yield problem_at(record, where, f"{path.name}: dataset functions (cases made by a JavaScript, "
                         "TypeScript or Python function) are not supported", "error",
                         "write the cases to a YAML, JSON, JSONL or CSV case file", code="unsupported")
    elif suffix == ".csv":
        stream = _opened(record, lookup, path, where)
        if isinstance(stream, Problem):
            yield stream
            return
        try:
            with stream:
                data = stream.read()
        except OSError as exc:
            yield _cannot_read(record, where, path, exc.strerror)
            return
        for item in read_csv_cases(data, str(path)):
            yield item if isinstance(item, Problem) else RawCase(item[0], item[1], (), True)
    elif suffix in (".yaml", ".yml", ".json", ".jsonl"):
        yield from _file_cases(record, lookup, path, where)
    else:
        yield problem_at(record, where, f"{path.name}: case files are .yaml, .yml, .json, .jsonl or .csv",
                         hint="rename the file or convert its cases", code="unsupported")


def case_file_records(record: Record, lookup: Lookup, path: Path, where: tuple) -> Iterator[Record | Problem]:
    """The records of a file the eval file names at `where` (one a line for JSONL, else one), as
    sources reads them; a file that cannot be read at all is a problem at the reference.
    They are read from the file opened and checked against the repository root: a link in the
    repository swapped between a check by name and a read by name cannot bring in another file."""
    stream = _opened(record, lookup, path, where)
    if isinstance(stream, Problem):
        yield stream
        return
    with stream:
        try:
            yield from (_with_env(document, record, lookup) for document in _records_of(stream, str(path)))
        except ChatconvError as exc:
            yield _unreadable(record, where, path, exc)
        except OSError as exc:  # a read that fails part way
            yield _cannot_read(record, where, path, exc.strerror)


def _with_env(document: Record, record: Record, lookup: Lookup) -> Record:
    """A case file's record with the environment put in as AgentV puts it into the eval file
    naming it (`${{ NAME }}` in the tests era, `{{ env.NAME }}` in the current one)."""
    era = era_of(record.data) if isinstance(record.data, dict) else None
    if era is None or document.error:
        return document
    if era.NAME == "tests":
        return with_environment(document)
    if era.NAME == "current":
        return with_env_templates(document, str(lookup.root))
    return document


def _cannot_read(record: Record, where: tuple, path: Path, reason: str) -> Problem:
    return problem_at(record, where, f"case file {path} cannot be read: {reason}",
                      hint="check the file's path and permissions", code="case-file")


def _opened(record: Record, lookup: Lookup, path: Path, where: tuple) -> BinaryIO | Problem:
    """The case file open (see Lookup.open), or the problem at the reference that says why not."""
    try:
        return lookup.open(path, str(path))
    except FileReferenceError as exc:
        return problem_at(record, where, f"case file {exc.message}", hint=exc.hint, code="case-file")
    except OSError as exc:
        return _cannot_read(record, where, path, "no such file" if isinstance(exc, FileNotFoundError) else exc.strerror)


def _records_of(stream: BinaryIO, file: str) -> Iterator[Record]:
    """The records of the open file named `file`, read as sources.iter_records reads a file."""
    kind = compression_of(file)
    if kind is not None:
        stream = open_decompressed(stream, file, kind)
    refuse_foreign_encoding(stream.peek(4)[:4], file)
    fmt = file_format(file)
    if fmt != "jsonl":
        yield read_document(stream, file, fmt)  # as sources.iter_records reads a file
        return
    yield from iter_jsonl_file(stream, file)


def _unreadable(record: Record, where: tuple, path: Path, exc: ChatconvError) -> Problem:
    # The reader's own hint says what to do (raise --max-file-bytes, convert from UTF-16).
    problem = exc.problems[0]
    return problem_at(record, where, f"case file {path} cannot be read: {problem.message}",
                      hint=problem.hint or "check the file's path and permissions", code="case-file")


def _empty(problem: Problem) -> Problem:
    # An empty case file holds no case: AgentV warns and goes on.
    if problem.code != "empty-file":
        return problem
    return Problem(problem.file, problem.line, problem.column, problem.path, "the case file holds no case",
                   "warning", None, "case-file")


def _file_cases(record: Record, lookup: Lookup, path: Path, where: tuple) -> Iterator[RawCase | Problem]:
    """A YAML or JSON file's list of cases (JSON also `{tests: [...]}`), or a JSONL file's lines."""
    lines = file_format(path) == "jsonl"
    for document in case_file_records(record, lookup, path, where):
        if isinstance(document, Problem) or document.error:
            yield _empty(document if isinstance(document, Problem) else document.error)
            continue
        yield from document.problems
        source = Source(document.file, document.locate)
        if lines:
            yield (RawCase(document.data, source, (), True) if isinstance(document.data, dict)
                   else problem_at(document, (), "a JSONL case is an object, one a line", code="wrong-type"))
            continue
        cases, prefix = document.data, ()
        if path.suffix.lower() == ".json" and isinstance(cases, dict) and "tests" in cases:
            cases, prefix = cases["tests"], ("tests",)
        if not isinstance(cases, list):
            yield source.problem(prefix, "a case file holds a list of cases",
                                 "write the cases as a list (- id: ...)", "case-file")
            continue
        for index, case in enumerate(cases):
            if isinstance(case, dict):
                yield RawCase(case, source, prefix + (index,), True)
            else:
                yield source.problem(prefix + (index,), "a case is an object", None, "wrong-type")


def _folder_cases(record: Record, lookup: Lookup, folder: Path, where: tuple) -> Iterator[RawCase | Problem]:
    """A folder of cases: each subfolder's case.yaml, its id the subfolder's name when it has none."""
    found = False
    for sub in sorted(p for p in folder.iterdir() if p.is_dir()):
        case_file = sub / "case.yaml"
        if not case_file.is_file():
            continue
        found = True
        for document in case_file_records(record, lookup, case_file, where):
            if isinstance(document, Problem) or document.error:
                yield document if isinstance(document, Problem) else document.error
                continue
            yield from document.problems
            if isinstance(document.data, dict):
                yield RawCase({**document.data, "id": document.data.get("id", sub.name)},
                              Source(document.file, document.locate), (), True)
            else:
                yield Source(document.file, document.locate).problem((), "case.yaml holds one case (an object)",
                                                                     None, "case-file")
    if not found:
        yield problem_at(record, where, f"the folder {folder} holds no <case>/case.yaml", code="case-file")
