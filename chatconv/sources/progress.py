"""How far a run's reading has got, for whoever watches (a progress bar): each file as the walk
hands it on (discover), and the bytes of each batch of lines read (iter_line_batches).

Nothing is told unless a watcher is set (watching_reads), and only in the process that set it:
a worker process forked while a run watches keeps quiet.
"""

from __future__ import annotations

import contextlib
import os
from contextvars import ContextVar
from typing import Iterator, Protocol


class ReadWatcher(Protocol):
    def file(self, path: str) -> None:
        """The walk hands `path` on: the files before it are read."""

    def read(self, count: int) -> None:
        """`count` more bytes of the current file are read."""


_WATCHER: ContextVar[tuple[int, ReadWatcher] | None] = ContextVar("chatconv_read_watcher", default=None)


@contextlib.contextmanager
def watching_reads(watcher: ReadWatcher) -> Iterator[None]:
    token = _WATCHER.set((os.getpid(), watcher))
    try:
        yield
    finally:
        _WATCHER.reset(token)


def told_file(path: str) -> None:
    watching = _WATCHER.get()
    if watching is not None and watching[0] == os.getpid():
        watching[1].file(path)


def told_read(count: int) -> None:
    watching = _WATCHER.get()
    if watching is not None and watching[0] == os.getpid():
        watching[1].read(count)
