"""Paths that are URLs fsspec reads: s3:// (and gs://, az:// with their packages), https://,
memory:// (the library's own, in one process).

fsspec is imported only when a URL is named: a run on local files never loads it. The endpoint
and the credentials come from the environment, as for every AWS tool (AWS_ENDPOINT_URL_S3,
AWS_PROFILE, AWS_ACCESS_KEY_ID, ~/.aws/config), or from fsspec's own configuration: chatconv has
no option for them. Every failure of the store (a missing key, a denied request, an endpoint out
of reach: botocore's errors are no OSErrors) becomes UnreadableInput, never a traceback.
"""

from __future__ import annotations

import io
import os
import re
from typing import BinaryIO, Iterator

from ..problems import Problem, UnreadableInput, UsageError

_URL = re.compile(r"^([a-zA-Z][a-zA-Z0-9+.-]+)://")
# Bytes asked of the store at a time when an object is read from start to end: a request costs
# 20-60 ms on S3, so 1 MiB reads ran at 8 MiB/s against a local S3 server, 8 MiB ones at 32.
READ_BLOCK = 8 << 20
INSTALL_HINT = 'pip install "chatconv[s3]" (gs:// also needs gcsfs, az:// adlfs)'


def is_url(path) -> bool:
    """Whether `path` names an object by URL (`s3://bucket/key`), not a local file."""
    return _URL.match(str(path)) is not None


def url_fs(url: str):
    """(the fsspec filesystem of `url`, the path within it); UsageError when its package is not
    installed."""
    try:
        from fsspec.core import url_to_fs
    except ImportError:
        raise UsageError(f"{url}: reading URLs needs fsspec: {INSTALL_HINT}") from None
    try:
        return url_to_fs(url)
    except ImportError as exc:  # fsspec names the package its scheme needs
        raise UsageError(f"{url}: {exc}") from None
    except ValueError as exc:  # an unknown scheme
        raise UsageError(f"{url}: {exc}") from None


def unreadable(url: str, exc: BaseException) -> UnreadableInput:
    """Why the object at `url` could not be read, as a user reads it."""
    if isinstance(exc, FileNotFoundError):
        message, hint = "no such object", "check the URL"
    elif isinstance(exc, PermissionError):
        message, hint = "access denied", "check the credentials (AWS_PROFILE, AWS_ACCESS_KEY_ID, ...)"
    elif isinstance(exc, IsADirectoryError):
        message, hint = "is a folder, not a file", None
    else:
        first = (str(exc).strip().splitlines() or [""])[0][:300]
        message = f"cannot be read: {type(exc).__name__}{': ' + first if first else ''}"
        hint = "check the endpoint (AWS_ENDPOINT_URL_S3), the network and the credentials"
    return UnreadableInput(Problem(url, None, None, "$", message, "error", hint, "unreadable-file"))


def _call(url: str, action, *args, **kwargs):
    fs, path = url_fs(url)
    try:
        return action(fs, path, *args, **kwargs)
    except (UsageError, UnreadableInput):
        raise
    except Exception as exc:  # OSErrors, and botocore's and aiohttp's own
        raise unreadable(url, exc) from None


def remote_isdir(url: str) -> bool:
    """Whether `url` names a folder (a prefix holding objects, a bucket), not an object."""
    return _call(url, lambda fs, path: not fs.isfile(path) and fs.isdir(path))


def remote_files(url: str) -> Iterator[tuple[str, str]]:
    """(the object's URL, its key relative to the folder `url`) of every object under the
    folder, sorted; the keys that end in / (folder markers some tools write) left out."""
    def find(fs, path):
        root = path.rstrip("/")
        return fs, root, sorted(key for key in fs.find(root) if not key.endswith("/"))

    fs, root, keys = _call(url, find)
    for key in keys:
        yield _joined(url, fs, key), key[len(root):].lstrip("/")


def _joined(url: str, fs, key: str) -> str:
    if url.startswith(("http://", "https://")):
        return key  # fsspec's HTTP filesystem lists whole URLs
    return fs.unstrip_protocol(key)


def remote_size(url: str) -> int:
    """The object's size in bytes (as stored: a .gz object's compressed size)."""
    return _call(url, lambda fs, path: fs.size(path) or 0)


def stored_size(path: str) -> int:
    """The size of the file or the object (a URL) at `path`, as stored; 0 when it cannot be
    told (standard input, a pipe, a missing file: reading it says why)."""
    try:
        if is_url(path):
            return remote_size(path)
        return os.path.getsize(path) if path != "-" and os.path.isfile(path) else 0
    except (OSError, UnreadableInput, UsageError):
        return 0


def open_remote(url: str) -> BinaryIO:
    """The object's bytes, streamed READ_BLOCK at a time (a prefix is no empty file: it is a
    folder); `.size` is the object's size, as it has no descriptor to ask."""
    def opened(fs, path):
        if not fs.isfile(path):  # s3fs would open a prefix as an empty file
            raise IsADirectoryError(url) if fs.isdir(path) else FileNotFoundError(url)
        return fs.open(path, "rb", block_size=READ_BLOCK)

    raw = _call(url, opened)
    stream = io.BufferedReader(raw, 1 << 20)
    stream.size = raw.size  # type: ignore[attr-defined]
    return stream


def open_raw(path: str) -> BinaryIO:
    """The file or the object (a URL) at `path`, open for reading its bytes as stored; OSError
    (a file's) or UnreadableInput (an object's) when it cannot be."""
    return open_remote(path) if is_url(path) else open(path, "rb")


def read_range(url: str, offset: int, length: int) -> bytes:
    """`length` bytes at `offset` (a worker's batch), in one ranged request. A server that
    ignores ranges (python -m http.server) sends the whole object: refused, never taken for
    the range."""
    # Keywords: s3fs's second positional parameter is the object's version.
    data = _call(url, lambda fs, path: fs.cat_file(path, start=offset, end=offset + length))
    if len(data) != length:
        raise unreadable(url, OSError(f"{length:,} bytes asked at {offset:,}, {len(data):,} sent: "
                                      "the server does not read by range"))
    return data
