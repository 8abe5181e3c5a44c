"""Atomic rewrites: a new file written beside its target (compressed on request), fsynced, given
the target's mode and owner, and swapped in whole (the old one kept as TARGET.bak on request), or
thrown away.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

from ..problems import Problem, UnreadableInput
from ..sources import CompressedWriter
from ..sources.writing import write_all
from ..interrupts import signals_held


WRITEBACK_BYTES = 32 << 20  # written out to the disk as the file grows, this much at a time


class Replacing:
    """What AtomicFile and AtomicObject share: a context manager whose end discards what
    commit() did not make whole, and writes that go through the compressor when there is one."""

    stream = None
    _writer: CompressedWriter | None = None

    def __enter__(self):
        return self

    def __exit__(self, *exc_info) -> None:
        self.discard()

    def discard(self) -> None:
        raise NotImplementedError

    def _put(self, data: bytes) -> None:
        if self._writer is not None:
            self._writer.write(data)
        else:
            write_all(self.stream, data)


class AtomicFile(Replacing):
    """A file written beside `target` that replaces it whole on commit(), else vanishes.

    The data is fsynced before os.replace (atomic), and the folder after it: a crash at any
    moment leaves the old file or the new one. A killed run may leave its `.NAME.*.tmp` behind,
    never a partial TARGET. With backup, the old file is kept as TARGET.bak (a hard link).
    compression (gzip or zstd, see sources.compression_of): what write() is given is written
    compressed so; the temporary file then holds compressed bytes only this object may append.
    """

    def __init__(self, target: Path, backup: bool = False, compression: str | None = None, mode: int | None = None):
        self.target = target
        self.mode = mode  # the new file's permissions; None: the old file's, or a new file's default
        self.backup = backup
        self.compression = compression
        self._handed = 0  # the bytes handed to the disk so far (see _hand_to_disk)
        self._open = False  # a temporary file that neither commit() nor discard() has ended
        # Ctrl-C or SIGTERM (an interrupt) wait while the temporary file is made and opened: one
        # in between would leave it behind, named nowhere. (One right after, before the `with`
        # block, leaves an object that __del__ discards.)
        with signals_held():
            try:
                handle, self.temporary = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.",
                                                          suffix=".tmp")
            except OSError as exc:  # the target's folder is missing or read-only: said of the target
                raise unwritable(target, exc) from None
            self.stream = os.fdopen(handle, "wb")
            self._open = True
        self._writer = CompressedWriter(self.stream, compression) if compression else None

    def write(self, data: bytes) -> None:
        try:
            self._put(data)
            if self.stream.tell() - self._handed >= WRITEBACK_BYTES:
                self._hand_to_disk()
        except OSError as exc:
            raise unwritable(self.target, exc) from None

    def _hand_to_disk(self) -> None:
        """Start writing what was written so far to the disk, without waiting for it: the fsync
        of commit() then waits for the last part only (for a 400 MB import it waited 0.2 s, the
        whole of it, as the kernel writes a file back on its own only after ~30 s or GBs)."""
        if not hasattr(os, "posix_fadvise"):  # (not on macOS nor Windows: commit waits for all)
            return
        self.stream.flush()
        end = self.stream.tell()
        os.posix_fadvise(self.stream.fileno(), self._handed, end - self._handed, os.POSIX_FADV_DONTNEED)
        self._handed = end

    def commit(self) -> None:
        if self._writer is not None:
            try:
                self._writer.close()  # the end of the compressed data, before the bytes are made durable
            except OSError as exc:
                raise unwritable(self.target, exc) from None
            self._writer = None
        try:  # the last bytes are written here: a full disk may say so only now (or at the fsync)
            self.stream.flush()
            os.fsync(self.stream.fileno())
            self.stream.close()
        except OSError as exc:
            raise unwritable(self.target, exc) from None
        _keep_owner(self.temporary, self.target)  # before chmod: chown clears set-user-id bits
        os.chmod(self.temporary, _mode_for(self.target) if self.mode is None else self.mode)
        if self.backup and self.target.exists():
            _keep_backup(self.target)
        os.replace(self.temporary, self.target)
        self._open = False
        _fsync_folder(self.target.parent)

    def discard(self) -> None:
        self._writer = None  # its end is not written: the temporary file goes
        self._open = False
        try:
            self.stream.close()  # (closed even when its last bytes cannot be written: they are not wanted)
        except OSError:
            pass  # a full disk: the bytes it could not take are thrown away with the file
        if os.path.exists(self.temporary):
            os.unlink(self.temporary)

    def __del__(self) -> None:
        if getattr(self, "_open", False):  # dropped unended (an interrupt before its `with` began)
            self.discard()


def _mode_for(target: Path) -> int:
    """The target's permissions, or those a new file gets (mkstemp makes its files 0600)."""
    try:
        return os.stat(target).st_mode & 0o7777
    except FileNotFoundError:
        umask = os.umask(0)  # the only portable way to read the umask is to set it
        os.umask(umask)
        return 0o666 & ~umask


def _keep_owner(new: str, target: Path) -> None:
    """The new file gets the old one's owner and group, where this process may give them (as
    root, say): a file rewritten for its owner should stay readable by that owner."""
    try:
        old = os.stat(target)
        if (old.st_uid, old.st_gid) != (os.getuid(), os.getgid()):
            os.chown(new, old.st_uid, old.st_gid)
    except (OSError, AttributeError):  # a new target; not allowed; no chown on Windows
        pass


def _keep_backup(target: Path) -> None:
    backup = target.with_name(target.name + ".bak")
    staged = target.with_name(f".{target.name}.bak.{os.getpid()}.tmp")
    if staged.exists():
        staged.unlink()
    try:
        os.link(target, staged)  # the old bytes stay where they are: no copy of a large file
    except OSError:
        shutil.copy2(target, staged)
    try:
        os.replace(staged, backup)
    except OSError:
        staged.unlink()
        raise


def _fsync_folder(folder: Path) -> None:
    try:
        handle = os.open(folder, os.O_RDONLY)
    except OSError:
        return  # folders cannot be opened on Windows; the rename is durable there already
    try:
        os.fsync(handle)
    except OSError:
        pass
    finally:
        os.close(handle)



def unwritable(target: Path, exc: OSError) -> UnreadableInput:
    """The target cannot be written. Nothing was replaced: AtomicFile leaves the old file whole
    when writing the new one fails."""
    return UnreadableInput(Problem(str(target), None, None, "$", f"cannot write here: {exc.strerror or exc}",
                                   "error", "check that the folder exists, can be written to and has room",
                                   code="unreadable-file"))

