"""Which files a migration run reads and where the migrated bytes of each go: folders searched
as validate searches them; standard output, a file or a folder for -o; each file itself for
--in-place. The combinations that would lose data or cannot be carried out are refused with a
UsageError, before anything is written.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import BinaryIO, Iterable

from ..problems import Problem, UnreadableInput, UsageError
from ..sources import discover, is_url, remote_isdir
from ..sources.remote import location, relative_key, remote_isfile, url_fs
from .links import skipped_folder, skipped_link

# A file replaced atomically, an object's URL (s3://: uploaded whole), a stream written to, or
# nothing (a dry run).
Target = Path | str | BinaryIO | None


def plan_targets(paths: Iterable[str], output: str | None = None, in_place: bool = False,
                 writes: bool = True, skipped: list[Problem] | None = None) -> list[tuple[str, Target]]:
    """(input file, where its migrated bytes go) for each file of `paths` (`-` is standard input).

    Without writes (a dry run, a check) nothing goes anywhere. With in_place, each file is its
    own target (a link's target, the link staying). Else one input goes to standard output
    (no output, or `-`) or to the file `output`; several, or `output` ending with a slash or
    naming a folder, go to that folder (made if needed) under their names within the paths.
    A device or pipe named as `output` (/dev/null, say) is opened here, for writing to: the
    caller closes it (migrate_paths does). UsageError for what cannot be carried out.
    Symlinks found in a folder that the run must not follow (see links.py) are left out, with
    a warning each appended to `skipped` when given. Paths and `output` may be URLs (s3://):
    their objects are written whole (AtomicObject), and a folder's are the keys under it.
    """
    paths = list(paths)
    if output and is_url(output):
        url_fs(output)  # a URL that names no bucket, or whose store's package is missing: said first
    files = []  # (file, its name under a -o folder)
    for path in paths:
        if is_folder(path):
            files += _searched_files(path, in_place, [] if skipped is None else skipped)
        else:
            files.append((path, path.rstrip("/").rpartition("/")[2] if is_url(path) else os.path.basename(path)))
    if not writes:
        return [(file, None) for file, _ in files]
    if in_place:
        if any(file == "-" for file, _ in files):
            raise UsageError("standard input cannot be rewritten in place; use -o OUT")
        for file, _ in files:
            if not is_url(file) and not os.path.isfile(file):
                raise UsageError(f"--in-place rewrites regular files; {file} is not one")
        # A link stays a link: the file it points to is the one rewritten.
        return [(file, file if is_url(file) else Path(os.path.realpath(file))) for file, _ in files]
    one_file = len(files) == 1 and not is_folder(paths[0])
    if not output or output == "-":
        if not one_file:
            raise UsageError("several input files: pass -o FOLDER or --in-place (or --dry-run, --check)")
        return [(files[0][0], sys.stdout.buffer)]
    if one_file and output_folder(paths, output, len(files)) is None:
        return [(files[0][0], _output_file(output))]
    names = [name for _, name in files]
    if "-" in names or len(set(names)) < len(names):
        raise UsageError("-o FOLDER needs input files with distinct names (not standard input)")
    if is_url(output) and not output.endswith("/") and remote_isfile(output) or \
            not is_url(output) and os.path.exists(output) and not os.path.isdir(output):
        raise UsageError(f"-o {output} is a file; several input files need -o FOLDER")
    inputs = {location(file): file for file, _ in files}
    for file, name in files:
        other = inputs.get(location(inside(output, name)))
        if other is not None and other != file:
            raise UsageError(f"-o {output} would write over the input {other} before it is read; "
                             "write to a folder outside the inputs")
    try:
        for name in names:
            if not is_url(output):  # a store's folders are the keys' prefixes: nothing to make
                (Path(output) / name).parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise UsageError(f"-o {output}: cannot make the folder for the migrated files: {exc.strerror}") from None
    return [(file, inside(output, name)) for file, name in files]


def output_folder(paths: list[str], output: str | None, files: int) -> Path | str | None:
    """The -o folder a run that writes `files` files from `paths` (not in place) writes them
    into (see plan_targets), or None when it writes one file or a stream; a URL's, as a URL."""
    if not output or output == "-":
        return None
    one_file = files == 1 and not is_folder(paths[0])
    folder = output.endswith(("/", os.sep)) or is_folder(output)
    if not (folder or not one_file):
        return None
    return output if is_url(output) else Path(output)


def is_folder(path: str) -> bool:
    """Whether `path` is a folder: a local one, or a URL's (a prefix, a bucket). A URL that
    cannot be looked at counts as a file: reading it says why."""
    if is_url(path):
        try:
            return remote_isdir(path)
        except UnreadableInput:
            return False
    return path != "-" and os.path.isdir(path)


def inside(folder: Path | str, name: str) -> Path | str:
    """The path of `name` (a relative path, / between its parts) in `folder`: a URL in a URL's."""
    if is_url(folder):
        return f"{str(folder).rstrip('/')}/{name}"
    return Path(folder) / name


def relative_name(file: str, folder: str) -> str:
    """`file`'s path within `folder`, which a search of it found it in."""
    if is_url(folder):
        return relative_key(file, folder)
    return os.path.relpath(file, folder)


def _searched_files(folder: str, in_place: bool, skipped: list[Problem]) -> list[tuple[str, str]]:
    """(file, its name within `folder`) for each file a search of `folder` finds, but the links
    the run must not follow: their warnings go to `skipped`."""
    files, linked_folders = [], []
    for file, _ in discover([folder], linked_folders=linked_folders):
        warning = skipped_link(file, folder, in_place)
        if warning is None:
            files.append((file, relative_name(file, folder)))
        else:
            skipped.append(warning)
    skipped += filter(None, (skipped_folder(linked, folder) for linked in linked_folders))
    return files


def _output_file(output: str) -> Target:
    """Where one input's migrated bytes go: a new or regular file is replaced atomically (a
    link's target, the link staying); a device or pipe (/dev/null, say) is written to."""
    if is_url(output):
        return output  # (a URL of https://, which cannot be written, says so when it is opened)
    if os.path.exists(output) and not os.path.isfile(output):
        try:
            return open(output, "wb")
        except OSError as exc:
            raise UsageError(f"-o {output}: cannot write to it: {exc.strerror}") from None
    target = Path(os.path.realpath(output))
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise UsageError(f"-o {output}: cannot make its folder: {exc.strerror}") from None
    return target


def refuse_rejects_among(rejects_file: str, targets: Iterable[tuple[str, Target]]) -> None:
    """UsageError unless `rejects_file` is a file of its own: appended to an input or an output,
    the rejected lines would be lost in the rewrite or mixed into the data."""
    def same(path) -> bool:
        path = str(path)
        return location(path) == os.path.realpath(rejects_file) or (
            os.path.exists(path) and os.path.exists(rejects_file) and os.path.samefile(path, rejects_file))

    if rejects_file == "-":
        raise UsageError("--rejects takes a file (the migrated records may be on standard output)")
    if is_url(rejects_file):
        raise UsageError(f"--rejects {rejects_file}: rejected lines are appended, and an object cannot be appended "
                         "to; give a local file")
    for file, target in targets:
        if file != "-" and same(file) or isinstance(target, (Path, str)) and same(target) or (
                target is sys.stdout.buffer and _is_standard_output(rejects_file)):
            raise UsageError(f"--rejects {rejects_file} is also an input or output file; give it a file of its own")


def _is_standard_output(path: str) -> bool:
    try:
        found, stdout = os.stat(path), os.fstat(sys.stdout.fileno())
    except (OSError, ValueError):
        return False
    return (found.st_dev, found.st_ino) == (stdout.st_dev, stdout.st_ino)
