"""A YAML file that an eval or config file names (a config's providers file, an eval file's
workspace file), read as the files chatconv checks are read."""

from __future__ import annotations

from pathlib import Path

from ..reference_files import read_regular, segment_text
from ..references import find_repo_root
from ..sources import Record, load_yaml


def read_named_yaml(path: Path, subject: str, allow_outside_root: bool) -> Record | None:
    """The record of the YAML file at `path` (its links followed, within the repository of its
    folder unless allowed outside), or None when no file is there. FileReferenceError or
    OSError when it cannot be read; a record's `error` when it is no YAML."""
    found = read_regular(path, subject, find_repo_root(path.parent.resolve()), allow_outside_root)
    return None if found is None else load_yaml(segment_text(found[1], found[0]), str(found[0]))
