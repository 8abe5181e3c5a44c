"""Which files a search of the paths given reads: a folder's data files, in os.walk's order,
but hidden folders, tools' folders and what .gitignore files ignore; a URL's folder
(`s3://bucket/runs/`) alike (see remote.py), .gitignore files aside."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Iterable, Iterator

from ..problems import UnreadableInput
from .files import DATA_SUFFIXES, data_suffix
from .ignore import Ignored
from .progress import told_file
from .remote import is_url, remote_files, remote_isdir

_SKIPPED_FOLDERS = {"node_modules", "__pycache__", "venv"}
# Hidden folders that hold tools' state, never a project's files: passed over even by a search
# of hidden folders (a -o copy of a folder).
_TOOL_STATE = _SKIPPED_FOLDERS | {".git", ".venv", ".tox", ".nox", ".mypy_cache", ".pytest_cache", ".ruff_cache",
                                  ".hypothesis", ".cache"}


def discover(paths: Iterable[str | Path], suffixes: Iterable[str] | None = DATA_SUFFIXES,
             linked_folders: list[str] | None = None, hidden: bool = False) -> Iterator[tuple[str, bool]]:
    """(file, named explicitly) for each path; folders are searched for files whose names end in
    one of `suffixes` (the data files; None: every file), in order, skipping hidden folders (but
    with `hidden`, which skips only those of tools' state: .git, .venv, caches), some tools' folders and what `.gitignore` files ignore
    (see ignore.py; a file named is always read). A folder reached through a symlink is not
    searched: `linked_folders`, when given, gets those found. A URL's folder (`s3://bucket/runs/`)
    is searched alike, .gitignore files aside (see remote.py)."""
    suffixes = None if suffixes is None else frozenset(suffixes)
    for path in paths:
        path = str(path)
        if is_url(path):
            yield from _discover_remote(path, suffixes, hidden)
        elif path != "-" and os.path.isdir(path):
            ignored = Ignored(path)
            for folder, subfolders, files in os.walk(path):
                subfolders[:] = sorted(d for d in subfolders if _enters(d, hidden)
                                       and not ignored.ignores(folder, d, is_folder=True))
                if linked_folders is not None:  # os.walk lists them, and does not go into them
                    linked_folders += _linked(folder, subfolders)
                for name in sorted(files):
                    file = os.path.join(folder, name)
                    # Only regular files: reading a named pipe or a device found there could block.
                    if ((suffixes is None or data_suffix(name) in suffixes) and os.path.isfile(file)
                            and not ignored.ignores(folder, name, is_folder=False)):
                        told_file(file)
                        yield file, False
        else:
            told_file(path)
            yield path, True


def _discover_remote(url: str, suffixes: frozenset[str] | None, hidden: bool) -> Iterator[tuple[str, bool]]:
    try:
        files = remote_files(url) if remote_isdir(url) else None
    except UnreadableInput:  # named, then: reading it says why it cannot be
        files = None
    if files is None:
        told_file(url)
        yield url, True
        return
    for file, key in sorted(files, key=_walk_order):
        *folders, name = key.split("/")
        if all(_enters(d, hidden) for d in folders) and \
                (suffixes is None or data_suffix(name) in suffixes):
            told_file(file)
            yield file, False


def _walk_order(found: tuple[str, str]) -> list[tuple[int, str]]:
    """Where os.walk (a local folder's search) puts a file: a folder's files, then its folders'."""
    *folders, name = found[1].split("/")
    return [(1, folder) for folder in folders] + [(0, name)]


def _linked(folder: str, subfolders: list[str]) -> list[str]:
    return [os.path.join(folder, d) for d in subfolders if os.path.islink(os.path.join(folder, d))]


def _enters(folder: str, hidden: bool) -> bool:
    """Whether a search goes into the folder named `folder` (see discover)."""
    return _searched(folder) or hidden and folder not in _TOOL_STATE


def _searched(folder: str) -> bool:
    # Hidden folders hold tool state (.git, .venv), except the eval config folder .agentv.
    return folder == ".agentv" or not (folder.startswith(".") or folder in _SKIPPED_FOLDERS)
