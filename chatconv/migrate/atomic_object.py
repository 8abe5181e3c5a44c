"""AtomicFile's promise for an object named by URL (`migrate -o s3://bucket/out/`): the object
appears whole under its name, or not at all.

A store has no rename, and a copy then a delete is neither atomic nor free; but a multipart
upload is completed in one request, which makes the object whole at once. The bytes go to an
upload under the final key (fsspec's autocommit=False) that only commit() completes; discard(),
an exception or Ctrl-C aborts it. (fsspec's own `with fs.open(key, "wb")` completes the upload
on any exit, an exception's too: that leaves a partial object under the final name.) A process
killed outright leaves an incomplete upload, which holds no object: a bucket's lifecycle rule
(AbortIncompleteMultipartUpload) clears those.
"""

from __future__ import annotations

from pathlib import Path

from ..interrupts import signals_held
from ..problems import Problem, UnreadableInput
from ..sources import CompressedWriter
from ..sources.remote import is_web, unreadable, url_fs
from .atomic import AtomicFile, Replacing

PART_BYTES = 8 << 20  # bytes an upload request carries (S3's parts are 5 MiB at least, the last aside)


def replacing(target: Path | str, backup: bool = False, compression: str | None = None, mode: int | None = None,
              etag: str | None = None) -> Replacing:
    """What writes `target` whole or not at all: AtomicFile for a path (`mode`: see it),
    AtomicObject for an object's URL (`etag`: see it)."""
    if isinstance(target, Path):
        return AtomicFile(target, backup, compression, mode)
    return AtomicObject(target, backup, compression, etag)


class AtomicObject(Replacing):
    """An upload to `url` that commit() completes, else aborts; AtomicFile's interface (write,
    commit, discard, `target`, `compression`; `temporary` is None: no file a worker process
    could append to, so the bytes come back to be written here). With backup, the object
    replaced is first copied to URL.bak (in the store, no bytes through here). With `etag` (an
    object rewritten in place: the ETag of the bytes read, sources.stream_etag), commit refuses
    to replace an object that changed since (its ETag is another) or went away."""

    def __init__(self, url: str, backup: bool = False, compression: str | None = None, etag: str | None = None):
        self.target, self.backup, self.compression, self.etag = url, backup, compression, etag
        self.temporary = None
        self.stream = None
        if is_web(url):
            raise UnreadableInput(Problem(url, None, None, "$", "cannot be written: http(s):// URLs are read only",
                                          "error", "write to s3://, gs:// or a local path", code="unreadable-file"))
        self.fs, self.path = url_fs(url)
        try:
            with signals_held():  # an upload begun and not yet held here would be left behind
                self.stream = self.fs.open(self.path, "wb", block_size=PART_BYTES, autocommit=False)
        except Exception as exc:
            raise _unwritable(url, exc) from None
        self._writer = CompressedWriter(self.stream, compression) if compression else None

    def write(self, data: bytes) -> None:
        try:
            self._put(data)
        except Exception as exc:
            raise _unwritable(self.target, exc) from None

    def commit(self) -> None:
        try:
            if self._writer is not None:
                self._writer.close()  # the end of the compressed data
                self._writer = None
            self.stream.close()  # the last part goes up; nothing is completed yet (autocommit=False)
            if self.etag is not None:
                try:
                    now = remote_etag(self.fs, self.path)
                except FileNotFoundError:
                    raise _changed(self.target, "went away") from None
                if now != self.etag:
                    raise _changed(self.target, "changed")
            if self.backup and self.fs.exists(self.path):
                self.fs.copy(self.path, self.path + ".bak")
            with signals_held():
                self.stream.commit()
                self.stream = None
        except UnreadableInput:
            self.discard()
            raise
        except Exception as exc:
            self.discard()
            raise _unwritable(self.target, exc) from None

    def discard(self) -> None:
        self._writer = None
        if self.stream is not None:
            stream, self.stream = self.stream, None
            try:
                stream.discard()  # aborts the upload: its parts go
            except Exception:
                pass  # the store is gone: the incomplete upload is the lifecycle rule's


def remote_etag(fs, path: str) -> str | None:
    """The object's ETag now (asked of the store, not of fsspec's cache), or None."""
    return fs.info(path, refresh=True).get("ETag")


def _unwritable(url: str, exc: BaseException) -> UnreadableInput:
    if isinstance(exc, FileNotFoundError):  # what is missing to write an object is its bucket
        reason, hint = "no such bucket", "make the bucket, or check the URL"
    else:
        problem = unreadable(url, exc).problems[0]
        reason, hint = problem.message.removeprefix("cannot be read: "), problem.hint or "check the URL"
    return UnreadableInput(Problem(url, None, None, "$", f"cannot be written: {reason}", "error",
                                   f"{hint}; nothing was written", code="unreadable-file"))


def _changed(url: str, what: str) -> UnreadableInput:
    return UnreadableInput(Problem(url, None, None, "$", f"{what} while it was migrated: not replaced", "error",
                                   "run again once nothing else writes it", code="unreadable-file"))
