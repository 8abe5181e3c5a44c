"""An in-place rewrite's hold on its input: one run at a time per file, and nothing replaced
when the file changed while it was read.

Two runs rewriting one file at once would each replace it with what they read, and a process
appending to a file being rewritten would see its lines vanish with the old file. So a run
takes an advisory lock (flock) on the file it opened, refuses a file another run holds, and
just before the rename checks that the name still leads to the file it read, of the same size
and modification time. The lock is advisory: it stops other chatconv runs, not every writer;
the check catches the others (an appender, an editor saving) before anything is replaced. A
line appended after the check and before the rename goes to the old file: the run reads it
there after the rename (gained_since) and carries it over to the new one.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import BinaryIO

from ..problems import Problem, UnreadableInput

try:
    import fcntl
except ImportError:  # Windows: no flock; the check before the rename still stands
    fcntl = None


@dataclass(frozen=True)
class InputState:
    """The input as it was when a run opened it."""

    file: str  # as the caller named it, for messages
    target: str  # the file itself (an in-place run on a link rewrites its target)
    device: int
    inode: int
    size: int
    mtime_ns: int


def hold_input(file: str, source: BinaryIO, target: str) -> InputState:
    """Lock the open input `source` (named `file`; the file itself is `target`, its real path)
    for this run, without waiting, and note its state; UnreadableInput when another run holds
    it, or has just replaced it."""
    fd = source.fileno()
    if fcntl is not None:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)  # released when the file is closed
        except BlockingIOError:
            raise _busy(file) from None
        except OSError:
            pass  # a file system without locks (some network ones): the check before the rename remains
    opened = os.fstat(fd)
    try:
        named = os.stat(target)
    except OSError as exc:  # removed (or renamed away) since it was opened
        raise _changed(file, f"{file} went away while it was migrated ({exc.strerror})") from None
    if (named.st_dev, named.st_ino) != (opened.st_dev, opened.st_ino):
        # Another run replaced it between this run's open and its lock: what was opened is old.
        raise _busy(file)
    return InputState(file, target, opened.st_dev, opened.st_ino, opened.st_size, opened.st_mtime_ns)


def release_input(source: BinaryIO) -> None:
    """Let go of the lock now, not when the file is closed: worker processes forked while it
    was open hold copies of the descriptor, which would keep it locked until they end."""
    if fcntl is not None:
        try:
            fcntl.flock(source.fileno(), fcntl.LOCK_UN)
        except (OSError, ValueError):
            pass


def check_unchanged(state: InputState) -> None:
    """UnreadableInput when the file named state.file is no longer the one read, as it was:
    replaced, grown, shrunk or written to since. Called just before the new file replaces it."""
    try:
        now = os.stat(state.target)
    except OSError as exc:
        raise _changed(state.file, f"{state.file} went away while it was migrated ({exc.strerror})") from None
    if (now.st_dev, now.st_ino) != (state.device, state.inode):
        raise _changed(state.file, f"{state.file} was replaced while it was migrated")
    if now.st_size > state.size:
        added = now.st_size - state.size
        raise _changed(state.file, f"{state.file} changed while it was migrated ({added:,} "
                                   f"{'byte was' if added == 1 else 'bytes were'} added)")
    if now.st_size != state.size or now.st_mtime_ns != state.mtime_ns:
        raise _changed(state.file, f"{state.file} changed while it was migrated (written to)")


def gained_since(state: InputState, source: BinaryIO) -> bytes:
    """What the file read (`source`, still open: the old file, after the rename) gained past the
    size it had when it was read: lines a writer appended between the check before the rename
    and the rename itself, which went to the old file and must not vanish with it."""
    fd = source.fileno()
    grown = os.fstat(fd).st_size - state.size
    return os.pread(fd, grown, state.size) if grown > 0 else b""


def _busy(file: str) -> UnreadableInput:
    return UnreadableInput(Problem(file, None, None, "$", f"{file} is being rewritten by another chatconv run; "
                                   "nothing was changed", "error", "run again when that run has finished",
                                   code="file-busy"))


def _changed(file: str, message: str) -> UnreadableInput:
    return UnreadableInput(Problem(file, None, None, "$", f"{message}; nothing was replaced", "error",
                                   "run again when nothing writes to it", code="file-changed"))
