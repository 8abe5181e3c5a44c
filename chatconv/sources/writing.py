"""Writes that are whole or raise: every byte given reaches the stream, or an OSError says why.

A write may take fewer bytes than it was given (a disk that fills mid-write, a file-size
limit): the system call returns the count it took, and Python's buffered files pass that short
count on without raising, once some bytes went through. A caller that does not look at the
count loses the rest without a word. write_all looks; standard output gets the same guard for
every writer (click.echo, print, a reporter) through whole_standard_output.
"""

from __future__ import annotations

import errno
import io
import os
import sys
import zlib
from functools import partial
from typing import BinaryIO, Callable


def write_all(stream: BinaryIO, data: bytes) -> None:
    """Write all of `data` to `stream`, again after a short write; raise OSError when the stream
    takes nothing (the next write of a full disk raises ENOSPC itself, so that is rare)."""
    _write_rest(stream.write, memoryview(data).cast("B"))


def _write_rest(write: Callable[[memoryview], int | None], view: memoryview) -> None:
    while view:
        written = write(view)
        if written is None:  # a stream that takes bytes whole and says nothing (a writer of another kind)
            return
        if written <= 0:
            raise OSError(errno.EIO, "the output took no more bytes")
        view = view[written:]


_buffered_write = io.BufferedWriter.write


class WholeWriter(io.BufferedWriter):
    """A buffered file whose write() takes every byte or raises (see write_all)."""

    def write(self, data) -> int:
        # A writer of many small lines (`tools`, a row each) calls this per line: a write taken
        # whole costs one call and one comparison; only a short one goes round the loop.
        written = _buffered_write(self, data)
        total = len(data) if type(data) is bytes else memoryview(data).nbytes
        if written == total:
            return written
        _write_rest(partial(_buffered_write, self), memoryview(data).cast("B")[written:])
        return total


def whole_standard_output() -> None:
    """Make sys.stdout write whole or raise: a text stream over a WholeWriter on the same file
    descriptor, with the same encoding and buffering. The original stays as sys.__stdout__ (so
    that the descriptor stays open); a closed or missing standard output is left as it is."""
    stream = sys.stdout
    try:
        fd = stream.fileno()
        stream.flush()
        encoding, errors, line_buffering = stream.encoding, stream.errors, stream.line_buffering
    except (AttributeError, OSError, ValueError):  # none, closed, or not a file (a test runner's)
        return
    raw = io.FileIO(fd, "wb", closefd=False)
    try:
        interactive = os.isatty(fd)
    except OSError:
        interactive = False
    sys.stdout = io.TextIOWrapper(WholeWriter(raw), encoding=encoding, errors=errors,
                                  line_buffering=line_buffering or interactive, write_through=False)


GZIP_LEVEL = 6  # gzip's own default: level 9 (the gzip module's) costs twice the time for ~1% less
ZSTD_LEVEL = 3  # zstd's own default


class CompressedWriter:
    """Writes `kind` compressed data to `stream`: close() writes the end of it, leaving the
    stream open. Dropped without close() (a run that failed), it writes nothing more, so that
    what was written never passes for whole data.

    gzip's header names no file and no time (zlib writes it so), so that the same records give
    the same bytes.
    """

    def __init__(self, stream: BinaryIO, kind: str):
        self.stream = stream
        if kind == "gzip":
            self._compressor = zlib.compressobj(GZIP_LEVEL, zlib.DEFLATED, 16 + zlib.MAX_WBITS)  # 16+: gzip framing
        else:
            import zstandard  # here: only .zst files need it

            self._compressor = zstandard.ZstdCompressor(level=ZSTD_LEVEL).compressobj()

    def write(self, data: bytes) -> None:
        if compressed := self._compressor.compress(data):
            write_all(self.stream, compressed)

    def close(self) -> None:
        write_all(self.stream, self._compressor.flush())
