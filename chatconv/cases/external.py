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
from typing import Iterator

from wcmatch import glob

from ..problems import ChatconvError, Problem
from ..references import FileReferenceError
from ..sources import Record, iter_jsonl, load_document, open_binary, problem_at, read_bytes
from . import Lookup, Source
from .csvcases import read_csv_cases

_GLOB_MAGIC = set("*?[]{}()!+@")
_GLOB_FLAGS = glob.BRACE | glob.GLOBSTAR | glob.EXTGLOB
_FUNCTION_SUFFIXES = {".js", ".mjs", ".cjs", ".ts", ".mts", ".py"}


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
        yield from case_file_cases(record, path, where)


def case_file_cases(record: Record, path: Path, where: tuple) -> Iterator[RawCase | Problem]:
    """The cases of one case file (or case folder) that the eval file names at `where`."""
    suffix = path.suffix.lower()
    if path.is_dir():
        yield from _folder_cases(record, path, where)
    elif suffix in _FUNCTION_SUFFIXES:
        yield problem_at(record, where, f"{path.name}: dataset functions (cases made by a JavaScript, "
                         "TypeScript or Python function) are not supported", "error",
                         "write the cases to a YAML, JSON, JSONL or CSV case file", code="unsupported")
    elif suffix == ".jsonl":
        yield from _jsonl_cases(record, path, where)
    elif suffix == ".csv":
        data = _read(record, path, where)
        if isinstance(data, Problem):
            yield data
        else:
            for item in read_csv_cases(data, str(path)):
                yield item if isinstance(item, Problem) else RawCase(item[0], item[1], (), True)
    elif suffix in (".yaml", ".yml", ".json"):
        yield from _document_cases(record, path, where)
    else:
        yield problem_at(record, where, f"{path.name}: case files are .yaml, .yml, .json, .jsonl or .csv",
                         hint="rename the file or convert its cases", code="unsupported")


def _read(record: Record, path: Path, where: tuple) -> bytes | Problem:
    try:
        return read_bytes(path)
    except ChatconvError as exc:
        return problem_at(record, where, f"case file {path} cannot be read: {exc.problems[0].message}",
                          hint="check the file's path and permissions", code="case-file")


def _empty(problem: Problem) -> Problem:
    # An empty case file holds no case: AgentV warns and goes on.
    return Problem(problem.file, problem.line, problem.column, problem.path, "the case file holds no case",
                   "warning", None, "case-file")


def _document_cases(record: Record, path: Path, where: tuple) -> Iterator[RawCase | Problem]:
    data = _read(record, path, where)
    if isinstance(data, Problem):
        yield data
        return
    document = load_document(data, str(path), "json" if path.suffix.lower() == ".json" else "yaml")
    if document.error:
        yield _empty(document.error) if document.error.code == "empty-file" else document.error
        return
    yield from document.problems
    source = Source(document.file, document.locate)
    cases, prefix = document.data, ()
    if path.suffix.lower() == ".json" and isinstance(cases, dict) and "tests" in cases:
        cases, prefix = cases["tests"], ("tests",)
    if not isinstance(cases, list):
        yield source.problem(prefix, "a case file holds a list of cases", "write the cases as a list (- id: ...)",
                             "case-file")
        return
    for index, case in enumerate(cases):
        if isinstance(case, dict):
            yield RawCase(case, source, prefix + (index,), True)
        else:
            yield source.problem(prefix + (index,), "a case is an object", None, "wrong-type")


def _jsonl_cases(record: Record, path: Path, where: tuple) -> Iterator[RawCase | Problem]:
    try:
        stream = open_binary(path)
    except ChatconvError as exc:
        yield problem_at(record, where, f"case file {path} cannot be read: {exc.problems[0].message}",
                         hint="check the file's path and permissions", code="case-file")
        return
    with stream:
        for line in iter_jsonl(stream, str(path)):
            if line.error:
                yield line.error
            elif isinstance(line.data, dict):
                yield RawCase(line.data, Source(line.file, line.locate), (), True)
            else:
                yield problem_at(line, (), "a JSONL case is an object, one a line", code="wrong-type")


def _folder_cases(record: Record, folder: Path, where: tuple) -> Iterator[RawCase | Problem]:
    """A folder of cases: each subfolder's case.yaml, its id the subfolder's name when it has none."""
    found = False
    for sub in sorted(p for p in folder.iterdir() if p.is_dir()):
        case_file = sub / "case.yaml"
        if not case_file.is_file():
            continue
        found = True
        for item in _single_case(record, case_file, where):
            if isinstance(item, RawCase):
                item.data.setdefault("id", sub.name)
            yield item
    if not found:
        yield problem_at(record, where, f"the folder {folder} holds no <case>/case.yaml", code="case-file")


def _single_case(record: Record, path: Path, where: tuple) -> Iterator[RawCase | Problem]:
    data = _read(record, path, where)
    if isinstance(data, Problem):
        yield data
        return
    document = load_document(data, str(path), "yaml")
    if document.error:
        yield document.error
        return
    yield from document.problems
    source = Source(document.file, document.locate)
    if isinstance(document.data, dict):
        yield RawCase(dict(document.data), source, (), True)
    else:
        yield source.problem((), "case.yaml holds one case (an object)", None, "case-file")
