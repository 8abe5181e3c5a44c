"""An object's bytes (a URL's: see remote.py): streamed from start to end, or a range of them
(a worker's batch); on a cluster (remote.read_on_cluster), each read made by a worker. Every
failure, at the start or part way, is UnreadableInput naming the URL."""

from __future__ import annotations

import io
from typing import BinaryIO

from ..problems import Problem, UnreadableInput
from .remote import READ_BLOCK, call_on_store, is_url, on_cluster, unreadable


def open_remote(url: str) -> BinaryIO:
    """The object's bytes, streamed READ_BLOCK at a time (a prefix is no empty file: it is a
    folder); `.size` is the object's size and `.etag` its ETag (None where the store has none),
    as it has no descriptor to ask. A failure part way is UnreadableInput, as one at the start.
    On a cluster (see read_on_cluster), each block is read by a worker."""
    if on_cluster():  # a task a read: each as large as a request
        raw = _ObjectReader(url, *call_on_store(url, _object_info))
        stream = io.BufferedReader(raw, READ_BLOCK)
    else:  # (fsspec's file asks READ_BLOCK at a time itself)
        raw = _ObjectReader(url, *call_on_store(url, _opened))
        stream = io.BufferedReader(raw, 1 << 20)
    stream.size, stream.etag = raw.size, raw.etag  # type: ignore[attr-defined]
    return stream


def _opened(fs, path: str) -> tuple[int, str | None, BinaryIO]:
    size, etag = _object_info(fs, path)
    fs.invalidate_cache(path)  # (its file would take a listing's "folder, 0 bytes" for it too)
    # (s3fs's file asks each range of the version it first saw: one rewritten meanwhile fails)
    return size, etag, fs.open(path, "rb", block_size=READ_BLOCK)


def _object_info(fs, path: str) -> tuple[int, str | None]:
    """The size and ETag of the object at `path`; IsADirectoryError for a prefix (s3fs would
    open one as an empty file), FileNotFoundError when there is nothing there."""
    protocols = {fs.protocol} if isinstance(fs.protocol, str) else set(fs.protocol)
    stores = protocols & {"s3", "gs", "az"}  # (stores of buckets)
    try:
        # The store's own answer, not that of a listing fsspec keeps: a key can name an object
        # and, with a / after it, a folder too; a listing of it says "folder".
        info = fs.info(path, refresh=True) if stores else fs.info(path)
    except FileNotFoundError:
        bucket = path.split("/")[0]
        if stores and not fs.exists(bucket):
            raise FileNotFoundError(f"{bucket}: the specified bucket does not exist") from None
        raise
    if info.get("type") != "file":
        raise IsADirectoryError(path)
    return info.get("size") or 0, info.get("ETag")


class _ObjectReader(io.RawIOBase):
    """An object's bytes: read through fsspec's file `opened`, or else each read a ranged one
    (made on a cluster's worker); every failure as UnreadableInput naming the URL."""

    def __init__(self, url: str, size: int, etag: str | None, opened: BinaryIO | None = None):
        self.url, self.size, self.etag, self.opened, self.position = url, size, etag, opened, 0

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def seek(self, offset: int, whence: int = io.SEEK_SET) -> int:
        self.position = max(0, offset + (0, self.position, self.size)[whence])
        return self.position

    def tell(self) -> int:
        return self.position

    def readinto(self, buffer) -> int:
        length = min(len(buffer), self.size - self.position)
        if length <= 0:
            return 0
        if self.opened is None:
            data = read_range(self.url, self.position, length)
        else:
            try:
                self.opened.seek(self.position)
                data = self.opened.read(length)
            except Exception as exc:  # the store gone part way (botocore's errors are no OSErrors)
                raise unreadable(self.url, exc) from None
        buffer[:len(data)] = data
        self.position += len(data)
        return len(data)

    def close(self) -> None:
        if self.opened is not None:
            self.opened.close()
        super().close()


def open_raw(path: str) -> BinaryIO:
    """The file or the object (a URL) at `path`, open for reading its bytes as stored; OSError
    (a file's) or UnreadableInput (an object's) when it cannot be."""
    return open_remote(path) if is_url(path) else open(path, "rb")


def read_range(url: str, offset: int, length: int) -> bytes:
    """`length` bytes at `offset` (a worker's batch), in one ranged request. A server that
    ignores ranges (python -m http.server) sends the whole object: refused, never taken for
    the range."""
    # Keywords: s3fs's second positional parameter is the object's version.
    data = call_on_store(url, lambda fs, path: fs.cat_file(path, start=offset, end=offset + length))
    if len(data) != length:
        raise UnreadableInput(Problem(url, None, None, "$", f"cannot be read by range: {length:,} bytes asked at "
                                      f"{offset:,}, {len(data):,} sent (the server ignores ranges)", "error",
                                      "read it with --jobs 1, which streams it, or from a server that reads by "
                                      "range", "unreadable-file"))
    return data
