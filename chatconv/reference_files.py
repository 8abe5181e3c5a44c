"""A referenced file opened and read safely: opened once, the real path of the file opened
checked against the repository root, at most --max-file-bytes read, from that very descriptor.

references.py says where a reference points; this module reads what it points at. A check by
name and a read by name could see two different files (a link swapped in between); here what is
read is what was checked.
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path
from typing import BinaryIO

from .limits import LIMITS, read_at_most, size_text


class FileReferenceError(Exception):
    """A file reference that cannot be used; `hint` says what to do. Callers add the position."""

    def __init__(self, message: str, hint: str):
        super().__init__(message)
        self.message = message
        self.hint = hint


def refuse_outside(subject: str, real: Path, root: Path, allow_outside_root: bool) -> None:
    """FileReferenceError, naming `subject` (`file 'a.md'`), when `real` (a resolved path) is
    outside the repository root and that is not allowed (SPEC §7's wording)."""
    if not allow_outside_root and not real.is_relative_to(root):
        raise FileReferenceError(f"{subject} resolves outside the repository root {root} (to {real})",
                                 "keep referenced files inside the repository, or pass --allow-outside-root")


def read_regular(candidate: Path, subject: str, root: Path, allow_outside_root: bool) -> tuple[Path, bytes] | None:
    """The real path and bytes of `candidate` (its links followed) when it is a regular file,
    None when there is none there (the look-up tries its next folder). FileReferenceError when
    the file opened resolves outside `root` (see refuse_outside), is too large or cannot be read;
    OSError when `candidate` cannot be looked at (a name too long, say)."""
    fd = _open_regular(candidate)
    if fd is None:
        return None
    with os.fdopen(fd, "rb") as stream:
        real = _opened_path(stream.fileno(), candidate)
        refuse_outside(subject, real, root, allow_outside_root)
        return real, _read_all(stream, real)


def open_within(path: Path, root: Path, allow_outside_root: bool, written: str) -> BinaryIO:
    """`path` (a case file found by a glob or in a case folder, say) open for reading, its links
    followed; FileReferenceError when the file opened resolves outside `root` and that is not
    allowed, or is no regular file. Read from the stream given: it is the file checked.
    OSError when it cannot be opened at all. The caller closes the stream."""
    stream = os.fdopen(os.open(path, _READ_FLAGS), "rb")
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


def segment_text(data: bytes, path: Path) -> str:
    """A file's text: UTF-8 with a BOM removed, CRLF and CR as LF, trailing white space removed."""
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise FileReferenceError(f"file {str(path)!r} is not UTF-8 (byte {exc.start})",
                                 "save the file as UTF-8") from None
    return text.replace("\r\n", "\n").replace("\r", "\n").rstrip()


def read_segment_text(path: Path) -> str:
    """A file's text, by its name (see segment_text), for code written before
    references.read_reference, which checks the file it reads against the root."""
    try:
        with open(path, "rb") as stream:
            data = _read_all(stream, path)
    except OSError as exc:
        raise _unreadable(path, exc) from None
    return segment_text(data, path)


# O_NONBLOCK: a pipe put where a file was has no writer; O_NOCTTY: a terminal is not taken on.
_READ_FLAGS = os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOCTTY", 0) | getattr(os, "O_CLOEXEC", 0)
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
        fd = os.open(candidate, _READ_FLAGS)
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
        if os.fstat(stream.fileno()).st_size > limit or len(data := read_at_most(stream, limit)) > limit:
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


def _unreadable(path: Path, exc: OSError) -> FileReferenceError:
    return FileReferenceError(f"file {str(path)!r} cannot be read: {exc.strerror}", "check the file's permissions")
