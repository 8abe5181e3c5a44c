"""A YAML file that an eval or config file names (a config's providers file, an eval file's
workspace file), read as AgentV reads it: from the naming file's folder."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..problems import Problem
from ..reference_files import FileReferenceError, segment_text
from ..references import find_repo_root, not_followed, open_reference
from ..sources import Record, is_url, load_yaml, problem_at


def read_named_yaml(record: Record, at: tuple, value: str, subject: str,
                    allow_outside_root: bool) -> tuple[Any, Problem | None]:
    """The data of the YAML file `value` names, from `record`'s folder; else the problem, at
    `at` in the record and naming `subject`, that stops its reading: no such file, a folder, a
    name the file system refuses, outside the repository, not UTF-8, not YAML."""
    folder = Path(record.file).parent
    try:
        if is_url(record.file):
            raise not_followed(record.file)
        real, data = open_reference(value, folder, find_repo_root(folder.resolve()), allow_outside_root,
                                    search=False)
        read = load_yaml(segment_text(data, real), str(real))
    except FileReferenceError as exc:
        return None, problem_at(record, at, f"{subject}: {exc.message}", hint=exc.hint, code="file-reference")
    if read.error is not None:  # said here, where the file is named, as AgentV says it
        error = read.error
        return None, problem_at(record, at, f"{subject} {value!r} does not read: {real.name}:{error.line}:"
                                f"{error.column}: {error.message}", hint=error.hint, code=error.code)
    return read.data, None
