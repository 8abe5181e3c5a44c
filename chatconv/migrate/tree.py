"""A folder migrated into a -o folder comes out whole: besides the files migrated there, the
files a migration does not read (prompt files, fixtures, graders' scripts: what the eval files
refer to) and the files it refused (each named with its reason) are copied as they are, so that
the new tree validates and runs as the old one did. Copies are atomic, and keep the mode bits
(a grader's script stays executable); a link found inside the folder is copied as the file it
names.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import Iterable

from ..problems import Problem, UnreadableInput, UsageError
from ..sources import discover, is_url, open_raw
from ..sources.remote import location
from .atomic_object import replacing
from .links import skipped_link
from .plan import inside, relative_name

_CHUNK = 1 << 20


def companions(folders: Iterable[str], planned: Iterable[tuple[str, Path | str]], output: Path | str,
               skipped: list[Problem]) -> list[tuple[str, Path | str]]:
    """(file, where its copy goes) for each file a search of `folders` finds (every name, in
    hidden folders too but .git and tools' caches, the search's other rules kept) that the run
    does not migrate (`planned`: (file, its target)), nor writes: a file under `output` that is
    not under the folder searched (a -o folder inside an input folder) is the run's own. Told
    before anything is written. Links the run must not follow are left out, each with a warning
    in `skipped`. UsageError when two files would go to one place, or a copy over an input.
    (Folders and `output` may be URLs: places are compared by sources.remote.location.)"""
    planned = list(planned)
    taken = {location(file) for file, _ in planned}
    out = location(output)
    found = []
    for folder in folders:
        searched = location(folder)
        for file, _ in discover([folder], suffixes=None, hidden=True):  # .github/prompts/, say
            real = location(file)
            if real in taken or (_within(real, out) and not _within(real, searched)):
                continue
            warning = skipped_link(file, folder, in_place=False)
            if warning is not None:
                skipped.append(warning)
                continue
            found.append((file, inside(output, relative_name(file, folder))))
    sources = taken | {location(file) for file, _ in found}
    targets: dict[str, str] = {}
    for file, target in [*((f, t) for f, t in planned if isinstance(t, (Path, str))), *found]:
        where = location(target)
        if where in sources and where != location(file):
            raise UsageError(f"-o {output} would write over the input {where} before it is copied; write to a "
                             "folder outside the inputs")
        if where in targets:
            raise UsageError(f"-o {output}: {targets[where]} and {file} would both go to {target}; migrate the "
                             "folders one at a time, or into folders of their own")
        targets[where] = file
    return found


def _within(path: str, folder: str) -> bool:
    return os.path.commonpath([path, folder]) == folder


def copy_unchanged(file: str, target: Path | str) -> None:
    """`file`'s bytes to `target`, replaced whole (AtomicFile, or AtomicObject for a URL), with
    `file`'s mode bits (a local file's). UnreadableInput names the file when it cannot be read,
    the target when it cannot be written."""
    if isinstance(target, Path):
        try:
            target.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise UnreadableInput(_problem(str(target), f"cannot make its folder: {exc.strerror}")) from None
    try:
        source = open_raw(file)
    except OSError as exc:
        raise UnreadableInput(_problem(file, f"cannot be read to copy it: {exc.strerror}")) from None
    with source:
        try:
            mode = None if is_url(file) else stat.S_IMODE(os.fstat(source.fileno()).st_mode)
        except OSError as exc:
            raise UnreadableInput(_problem(file, f"cannot be read to copy it: {exc.strerror}")) from None
        with replacing(target, mode=mode) as sink:  # UnreadableInput naming the target when it cannot be made
            try:
                while chunk := source.read(_CHUNK):
                    sink.write(chunk)
            except OSError as exc:
                raise UnreadableInput(_problem(file, f"cannot be read to copy it: {exc.strerror}")) from None
            try:
                sink.commit()
            except OSError as exc:
                raise UnreadableInput(_problem(str(target), f"cannot be written: {exc.strerror}")) from None


def _problem(file: str, message: str) -> Problem:
    return Problem(file, None, None, "$", message, "error", "the -o folder lacks this file; fix the cause and run "
                   "again", code="unreadable-file")
