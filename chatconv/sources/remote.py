"""Paths that are URLs fsspec reads: s3:// (and gs://, az:// with their packages), https://,
memory:// (the library's own, in one process): their filesystems, folders, sizes and places;
objects.py reads their bytes.

fsspec is imported only when a URL is named: a run on local files never loads it. The endpoint
and the credentials come from the environment, as for every AWS tool (AWS_ENDPOINT_URL_S3,
AWS_PROFILE, AWS_ACCESS_KEY_ID, ~/.aws/config), or from fsspec's own configuration: chatconv has
no option for them. Every failure of the store (a missing key, a denied request, an endpoint out
of reach: botocore's errors are no OSErrors) becomes UnreadableInput, never a traceback.
"""

from __future__ import annotations

import os
import posixpath
import re
import threading
from contextlib import contextmanager
from typing import Any, Callable, Iterator

from ..interrupts import broken_pipes_raised
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
    installed, or the URL names no bucket (`s3://`)."""
    broken_pipes_raised()  # (a kept-alive connection the store closed must not end the run)
    try:
        from fsspec.core import url_to_fs
    except ImportError:
        raise UsageError(f"{url}: reading URLs needs fsspec: {INSTALL_HINT}") from None
    scheme, _, rest = url.partition("://")
    try:
        fs, path = url_to_fs(f"{scheme.lower()}://{rest}")  # (S3:// is s3://, as for the AWS tools)
    except ImportError as exc:  # fsspec names the package its scheme needs
        raise UsageError(f"{url}: {exc}") from None
    except ValueError as exc:  # an unknown scheme
        raise UsageError(f"{url}: {exc}") from None
    if not path.strip("/") and not is_web(url) and scheme.lower() != "memory":
        raise UsageError(f"{url}: names no bucket (write s3://BUCKET/KEY)")
    return fs, path


def unreadable(url: str, exc: BaseException) -> UnreadableInput:
    """Why the object at `url` could not be read, as a user reads it."""
    if isinstance(exc, FileNotFoundError):
        message = "no such bucket" if "bucket does not exist" in str(exc) else "no such object"
        hint = "check the URL"
    elif isinstance(exc, PermissionError):
        message, hint = "access denied", "check the credentials (AWS_PROFILE, AWS_ACCESS_KEY_ID, ...)"
    elif isinstance(exc, IsADirectoryError):
        message, hint = "is a folder, not a file", None
    else:
        first = (str(exc).strip().splitlines() or [""])[0][:300]
        message = f"cannot be read: {type(exc).__name__}{': ' + first if first else ''}"
        hint = ("check the URL, and that the server answers" if is_web(url) else
                "check the endpoint (AWS_ENDPOINT_URL_S3), the network and the credentials")
    return UnreadableInput(Problem(url, None, None, "$", message, "error", hint, "unreadable-file"))


# --scheduler: the store is read by the cluster's workers, not by this process (which may have
# no credentials for it, nor a way to reach it): (the thread whose reads go there, a function
# that runs `function(*args)` on a worker). A thread's, not a context variable's: the threads of
# a Dask worker in this process (a library's in-process cluster) must read the store themselves.
_cluster: tuple[int, Callable[..., Any]] | None = None


@contextmanager
def read_on_cluster(scheduler: str) -> Iterator[None]:
    """Within it, this thread's URL reads (listing, sizes, an object's bytes) are made by a worker
    of the Dask cluster at `scheduler`: the workers, which read each batch of an object
    themselves, are the ones that need access to the store. (Writing an object, -o s3://, is
    done here.) The cluster is connected to when a URL is first read."""
    global _cluster
    pool = None

    def on_a_worker(function: Callable, *args) -> Any:
        nonlocal pool
        if pool is None:
            from ..cluster import ClusterPool  # here: only a run on a cluster imports Dask

            pool = ClusterPool(scheduler)
        return pool.call(function, *args)

    before, _cluster = _cluster, (threading.get_ident(), on_a_worker)
    try:
        yield
    finally:
        _cluster = before
        if pool is not None:
            pool.close()


def on_cluster() -> bool:
    """Whether this thread's reads of the store are made on a cluster (see read_on_cluster)."""
    return _cluster is not None and _cluster[0] == threading.get_ident()


def call_on_store(url: str, action: Callable, *args):
    """action(fs, path, *args) on `url`'s filesystem: here, or on a cluster's worker (see
    read_on_cluster); every failure as UnreadableInput naming the URL."""
    if on_cluster():
        from ..workers import WorkerLost

        try:
            return _cluster[1](_call_here, url, action, *args)
        except WorkerLost as exc:
            raise UnreadableInput(Problem(url, None, None, "$", f"cannot be read on the cluster: {exc}", "error",
                                          exc.hint, "unreadable-file")) from None
    return _call_here(url, action, *args)


def _call_here(url: str, action: Callable, *args):
    fs, path = url_fs(url)
    try:
        return action(fs, path, *args)
    except (UsageError, UnreadableInput):
        raise
    except Exception as exc:  # OSErrors, and botocore's and aiohttp's own
        raise unreadable(url, exc) from None


def remote_isdir(url: str) -> bool:
    """Whether `url` names a folder (a prefix holding objects, a bucket), not an object; over
    http(s), one whose URL ends in / (its index page lists its files: fsspec takes it for one)."""
    if is_web(url):
        return url.endswith("/")
    if url.endswith("/"):  # a folder's URL, even where an object has the folder's name
        return call_on_store(url, lambda fs, path: fs.isdir(path))
    return call_on_store(url, lambda fs, path: not fs.isfile(path) and fs.isdir(path))


def remote_isfile(url: str) -> bool:
    """Whether `url` names an object."""
    return call_on_store(url, lambda fs, path: fs.isfile(path))


def remote_exists(url: str) -> bool:
    return call_on_store(url, lambda fs, path: fs.exists(path))


def remote_files(url: str) -> list[tuple[str, str]]:
    """(the object's URL, its key relative to the folder `url`: see relative_key) of every
    object under the folder, sorted; the keys that end in / (folder markers some tools write)
    left out."""
    def find(fs, path):
        return [_joined(url, fs, key) for key in sorted(fs.find(path.rstrip("/"))) if not key.endswith("/")]

    root = location(url)
    return [(found, _key_within(found, root)) for found in call_on_store(url, find)]


def relative_key(url: str, folder: str) -> str:
    """The key of the object `url` within the folder `folder`, however either URL is spelled
    (see location); a web URL's percent-escapes undone (`a%20b/x.jsonl` is `a b/x.jsonl`, as
    the file was named)."""
    return _key_within(url, location(folder))


def _key_within(url: str, root: str) -> str:
    key = location(url)[len(root):].lstrip("/")
    if is_web(url):
        from urllib.parse import unquote

        return unquote(key)
    return key


def location(path: str) -> str:
    """Where `path` is, to tell whether two names name one place (or one holds the other): a
    file's real path; an object's store and key, normalized, written as a path
    (`/s3:/bucket/runs/a.jsonl`), however its URL is spelled (S3://, s3a://, a doubled /)."""
    if not is_url(path):
        return os.path.realpath(path)
    if is_web(path):
        scheme, _, rest = path.partition("://")
        return posixpath.normpath(f"/{scheme.lower()}:/{rest}")
    fs, key = url_fs(path)
    protocol = fs.protocol if isinstance(fs.protocol, str) else fs.protocol[0]
    return posixpath.normpath(f"/{protocol}:/{key}")


def is_web(url: str) -> bool:
    """Whether `url` is an http(s) one: read only, and listed from index pages."""
    return url[:8].lower().startswith(("http://", "https://"))


def _joined(url: str, fs, key: str) -> str:
    if is_web(url):
        return key  # fsspec's HTTP filesystem lists whole URLs
    return fs.unstrip_protocol(key)


def remote_size(url: str) -> int:
    """The object's size in bytes (as stored: a .gz object's compressed size)."""
    return call_on_store(url, lambda fs, path: fs.size(path) or 0)


def stored_size(path: str) -> int:
    """The size of the file or the object (a URL) at `path`, as stored; 0 when it cannot be
    told (standard input, a pipe, a missing file: reading it says why)."""
    try:
        if is_url(path):
            return remote_size(path)
        return os.path.getsize(path) if path != "-" and os.path.isfile(path) else 0
    except (OSError, UnreadableInput, UsageError):
        return 0
