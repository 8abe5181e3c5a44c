"""File references of eval files (SPEC §2): where a reference points, the text it brings, and
guideline patterns: whether a glob is sound and which files it makes guidelines.

validate checks references and patterns with these; prompt reads them with these.
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path
from typing import BinaryIO

from .kinds import CONFIG_FILE_NAMES
from .limits import LIMITS, size_text
from .problems import ChatconvError, Problem


class FileReferenceError(Exception):
    """A file reference that cannot be used; `hint` says what to do. Callers add the position."""

    def __init__(self, message: str, hint: str):
        super().__init__(message)
        self.message = message
        self.hint = hint


def find_repo_root(start: Path) -> Path:
    """The nearest folder at or above `start` that holds `.git`, else `start` itself."""
    start = start.resolve()
    for folder in (start, *start.parents):
        if (folder / ".git").exists():
            return folder
    return start


def search_folders(eval_dir: Path, root: Path) -> list[Path]:
    """The eval file's folder, then each parent up to and including the repository root."""
    eval_dir, root = eval_dir.resolve(), root.resolve()
    folders = [eval_dir]
    if eval_dir.is_relative_to(root):
        for parent in eval_dir.parents:
            if not parent.is_relative_to(root):
                break
            folders.append(parent)
    return folders


def resolve_reference(value: str, eval_dir: Path, root: Path, allow_outside_root: bool = False) -> Path:
    """The file a segment's `value` names, looked up as SPEC §2 says.

    Raises FileReferenceError when no candidate exists, when the value cannot be looked up at
    all (a name too long, say), or when the file found resolves outside the repository root
    (through `..` or a symlink) and that is not allowed. It only says where the file is: to read
    it, use read_reference (a check here and a read later could see two different files).
    """
    root = root.resolve()
    folders, relative = _lookup_folders(value, eval_dir, root)
    try:
        return _look_up(value, relative, folders, root, allow_outside_root)
    except (OSError, RuntimeError, ValueError) as exc:  # RuntimeError: a symlink loop (Python 3.11)
        raise _lookup_error(value, exc) from None


def read_reference(value: str, eval_dir: Path, root: Path, allow_outside_root: bool = False) -> tuple[Path, str]:
    """The file a segment's `value` names (its real path) and its text (see segment_text), as
    open_reference finds, checks and reads it."""
    real, data = open_reference(value, eval_dir, root, allow_outside_root)
    return real, segment_text(data, real)


def open_reference(value: str, eval_dir: Path, root: Path, allow_outside_root: bool = False) -> tuple[Path, bytes]:
    """The file `value` names (its real path) and its bytes, looked up as resolve_reference
    looks it up and refused as it refuses.

    The file is opened once; the root check is made on the file opened and the bytes are read
    from it. A symlink swapped between a check by name and a read by name could make the read
    land outside the root (on /etc/passwd, say); here what is read is what was checked.
    """
    root = root.resolve()
    folders, relative = _lookup_folders(value, eval_dir, root)
    try:
        for folder in folders:
            fd = _open_regular(folder / relative)
            if fd is None:
                continue
            with os.fdopen(fd, "rb") as stream:
                real = _opened_path(stream.fileno(), folder / relative)
                refuse_outside(f"file {value!r}", real, root, allow_outside_root)
                return real, _read_all(stream, real)
    except (OSError, RuntimeError, ValueError) as exc:  # the look-up's: a name too long, say
        raise _lookup_error(value, exc) from None
    raise _not_found(value, relative, folders)


def open_within(path: Path, root: Path, allow_outside_root: bool, written: str) -> BinaryIO:
    """`path` (a case file found by a glob or in a case folder, say) open for reading, its links
    followed; FileReferenceError when the file opened resolves outside `root` and that is not
    allowed, or is no regular file. Read from the stream given: it is the file checked.
    OSError when it cannot be opened at all. The caller closes the stream."""
    stream = os.fdopen(os.open(path, os.O_RDONLY | os.O_NONBLOCK | _NO_TERMINAL | _CLOSE_ON_EXEC), "rb")
    try:
        mode = os.fstat(stream.fileno()).st_mode
        if not stat.S_ISREG(mode):
            what = "a folder" if stat.S_ISDIR(mode) else "not a regular file"
            raise FileReferenceError(f"{written!r} is {what}: {path}", "name a file")
        refuse_outside(repr(written), _opened_path(stream.fileno(), path), root, allow_outside_root)
    except BaseException:
        stream.close()
        raise
    return stream


def _lookup_folders(value: str, eval_dir: Path, root: Path) -> tuple[list[Path], str]:
    """Where `value` is looked up (SPEC §2) and the path looked up in each: an absolute value
    from the root only, a relative one from the eval file's folder up to the root."""
    if value.startswith("/"):
        return [root], value.lstrip("/")
    return search_folders(eval_dir, root), value


_NO_TERMINAL, _CLOSE_ON_EXEC = getattr(os, "O_NOCTTY", 0), getattr(os, "O_CLOEXEC", 0)  # POSIX only
# What Path.is_file takes for "no such file here": the next folder is tried.
_ABSENT = {errno.ENOENT, errno.ENOTDIR, errno.EBADF, errno.ELOOP}


def _open_regular(candidate: Path) -> int | None:
    """A descriptor of `candidate` (its links followed) when it is a regular file, else None.
    Only a regular file is opened (opening a device can do something), without blocking (a
    pipe put there after the look has no writer)."""
    try:
        if not stat.S_ISREG(os.stat(candidate).st_mode):
            return None
    except OSError as exc:
        if exc.errno in _ABSENT:
            return None
        raise
    try:
        fd = os.open(candidate, os.O_RDONLY | os.O_NONBLOCK | _NO_TERMINAL | _CLOSE_ON_EXEC)
    except OSError as exc:
        if exc.errno in _ABSENT:  # gone since the look
            return None
        raise _unreadable(candidate, exc) from None
    if not stat.S_ISREG(os.fstat(fd).st_mode):  # swapped for something else since the look
        os.close(fd)
        return None
    return fd


def _read_all(stream, path: Path) -> bytes:
    """The opened file's bytes; FileReferenceError when it holds more than --max-file-bytes (a 2 GB
    file, /dev/zero): it is not read whole."""
    limit = LIMITS.max_file_bytes
    try:
        if os.fstat(stream.fileno()).st_size > limit or len(data := stream.read(limit + 1)) > limit:
            raise FileReferenceError(f"file {str(path)!r} is larger than {size_text(limit)} (--max-file-bytes): "
                                     "not read", "reference a smaller file, or raise --max-file-bytes")
    except OSError as exc:
        raise _unreadable(path, exc) from None
    return data


def _opened_path(fd: int, candidate: Path) -> Path:
    """The real path of the file open as `fd`: what the system says it opened (Linux), else the
    candidate resolved, when that is the very file open (same device and inode)."""
    try:
        return Path(os.readlink(f"/proc/self/fd/{fd}"))
    except OSError:
        pass
    real = Path(os.path.realpath(candidate))
    opened, found = os.fstat(fd), _stat_or_none(real)
    if found is None or (found.st_dev, found.st_ino) != (opened.st_dev, opened.st_ino):
        raise FileReferenceError(f"file {str(candidate)!r} changed while it was read",
                                 "run again once nothing is moving the file")
    return real


def _stat_or_none(path: Path) -> os.stat_result | None:
    try:
        return os.stat(path)
    except OSError:
        return None


def refuse_outside(subject: str, real: Path, root: Path, allow_outside_root: bool) -> None:
    """FileReferenceError, naming `subject` (`file 'a.md'`), when `real` (a resolved path) is
    outside the repository root and that is not allowed (SPEC §7's wording)."""
    if not allow_outside_root and not real.is_relative_to(root):
        raise FileReferenceError(f"{subject} resolves outside the repository root {root} (to {real})",
                                 "keep referenced files inside the repository, or pass --allow-outside-root")


def _look_up(value: str, relative: str, folders: list[Path], root: Path, allow_outside_root: bool) -> Path:
    for folder in folders:
        candidate = folder / relative
        if candidate.is_file():
            refuse_outside(f"file {value!r}", candidate.resolve(), root, allow_outside_root)
            return candidate
    raise _not_found(value, relative, folders)


def _not_found(value: str, relative: str, folders: list[Path]) -> FileReferenceError:
    """The FileReferenceError of a value no folder holds as a file."""
    try:
        folder_found = next((folder / relative for folder in folders if (folder / relative).is_dir()), None)
    except OSError as exc:
        return _lookup_error(value, exc)
    if folder_found is not None:
        return FileReferenceError(f"file {value!r} is a folder: {folder_found}",
                                  "a file segment names a file, not a folder")
    tried = ", ".join(str(folder) for folder in folders)
    return FileReferenceError(f"file {value!r} not found; looked in: {tried}",
                              "check the path; relative paths start at the eval file's folder")


_SHOWN_CHARACTERS = 80  # of a value that cannot be looked up (it may be very long)


def _lookup_error(value: str, exc: Exception) -> FileReferenceError:
    """The FileReferenceError of a value the file system refuses to look up."""
    shown = value if len(value) <= _SHOWN_CHARACTERS else value[:_SHOWN_CHARACTERS - 3] + "..."
    reason = (exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)) or type(exc).__name__
    hint = "check the path"
    if isinstance(exc, OSError) and exc.errno == errno.ENAMETOOLONG:
        hint = "shorten the path: a file or folder name holds at most 255 bytes, a path 4096"
    return FileReferenceError(f"file {shown!r} cannot be looked up: {reason[:1].lower()}{reason[1:]}", hint)


def read_segment_text(path: Path) -> str:
    """A file's text, by its name (see segment_text). A file segment's is read with
    read_reference, which checks the file it reads."""
    try:
        data = _read_within_limit(path)
    except OSError as exc:
        raise _unreadable(path, exc) from None
    return segment_text(data, path)


def segment_text(data: bytes, path: Path) -> str:
    """A file's text: UTF-8 with a BOM removed, CRLF and CR as LF, trailing white space removed."""
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise FileReferenceError(f"file {str(path)!r} is not UTF-8 (byte {exc.start})",
                                 "save the file as UTF-8") from None
    return text.replace("\r\n", "\n").replace("\r", "\n").rstrip()


def _unreadable(path: Path, exc: OSError) -> FileReferenceError:
    return FileReferenceError(f"file {str(path)!r} cannot be read: {exc.strerror}", "check the file's permissions")


# ---------------------------------------------------------------------------------------------
# Guideline patterns


def pattern_problem(pattern: str) -> str | None:
    """Why a glob can never work as meant, or None when it is sound."""
    if not isinstance(pattern, str) or not pattern.strip():
        return "a guideline pattern must be a non-empty string"
    if pattern.startswith("/"):
        return "patterns match paths relative to the repository root; drop the leading '/'"
    depth = 0
    for char in pattern.replace("\\[", "").replace("\\]", ""):
        depth += char == "["
        depth -= char == "]" and depth > 0
    if depth:
        return "an unclosed '[' in the pattern"
    return None


def check_patterns(patterns: list[str], where: str) -> list[str]:
    """The patterns, after refusing any that cannot work (ChatconvError names `where`)."""
    problems = [Problem(where, None, None, "$.guideline_patterns", f"bad glob {p!r}: {reason}",
                        code="bad-glob")
                for p in patterns if (reason := pattern_problem(p))]
    if problems:
        raise ChatconvError(problems)
    return list(patterns)


def is_guideline(value: str, file: Path | None, root: Path, patterns: list[str]) -> bool:
    """True when the file's path from the root, or its value as written, matches a pattern."""
    if not patterns:
        return False
    from wcmatch import glob  # here: only cases with guideline patterns need it (start-up time)

    # `**` spans folders, `*` stays within one, dot-folders such as .github/ match, case matters.
    flags = glob.GLOBSTAR | glob.DOTGLOB | glob.CASE
    candidates = [value[2:] if value.startswith("./") else value]
    if file is not None and file.resolve().is_relative_to(root):
        candidates.append(file.resolve().relative_to(root).as_posix())
    return any(glob.globmatch(c, patterns, flags=flags) for c in candidates)


def find_config(eval_dir: Path, root: Path) -> Path | None:
    """The nearest config file (CONFIG_FILE_NAMES) from the eval file's folder up to the root."""
    for folder in search_folders(eval_dir, root):
        for name in CONFIG_FILE_NAMES:
            if (folder / name).is_file():
                return folder / name
    return None


def _read_within_limit(path: Path) -> bytes:
    with open(path, "rb") as stream:
        return _read_all(stream, path)
