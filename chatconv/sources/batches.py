"""The one way a JSONL file is cut into batches of whole lines (iter_line_batches), how many
workers a file gets, and a line past --max-line-bytes, which is never held whole.
"""

from __future__ import annotations

import gc
from contextlib import contextmanager
from typing import BinaryIO, Iterator, NamedTuple

from ..limits import LIMITS, size_text
from ..problems import Problem, UnreadableInput
from .compressed import compression_of
from .progress import told_read
from .objects import read_range
from .remote import is_url

BATCH_BYTES = 1 << 20  # JSONL files are read, checked and migrated about this many bytes at a time
PARALLEL_MIN_BYTES = 16 * 1024 * 1024  # unless --jobs says otherwise, smaller files use no workers
LINE_PART_BYTES = 1 << 20  # a long line is read this much at a time (see rest_of_line)
COMPRESSION_RATIO = 16  # about, for JSONL recordings (gzip: 10x, zstd: 80x on the generated ones)


def batch_workers(size: int, jobs: int | None, batch_bytes: int = BATCH_BYTES, compressed: bool = False,
                  scheduler: str | None = None) -> int:
    """How many workers a JSONL file of `size` bytes has its batches shared out to (1: none).

    `jobs` as --jobs gives it (None: one per core for files of PARALLEL_MIN_BYTES or more, a
    compressed file's size counted 16 times: recordings compress 10 to 80 times); a file of
    one batch has none, unless it is compressed; a Dask `scheduler` takes every batch (its
    cluster has the workers)."""
    if scheduler is not None:
        return 2
    if jobs == 1 or (size <= batch_bytes and not compressed):
        return 1
    if jobs is not None:
        return jobs
    if size * (COMPRESSION_RATIO if compressed else 1) < PARALLEL_MIN_BYTES:
        return 1
    from ..workers import available_cores  # here: a run without workers skips multiprocessing

    return available_cores()


class Batch(NamedTuple):
    """Whole lines of a JSONL file: the number of the first, the offset in the file, the bytes."""

    first_line: int
    offset: int
    data: bytes


def iter_line_batches(stream: BinaryIO, batch_bytes: int = BATCH_BYTES, first_line: int = 1,
                      offset: int = 0) -> Iterator[Batch]:
    """The batches of whole lines of `stream`, in order, each about `batch_bytes` long.

    A batch ends with the line that holds its `batch_bytes`-th byte (a long line makes it
    longer); the last line of the file may lack its newline. Lines are numbered as iterating
    the stream numbers them (split at b"\\n" only). A line longer than LIMITS.max_line_bytes is
    not held: the lines before it come as a batch, then UnreadableInput names it. `first_line`
    and `offset` are those of the stream's first byte (standard input read on after its head).
    """
    number = first_line
    limit = LIMITS.max_line_bytes
    # A compressed file's progress is told in its own bytes, those the bar measures it by (its
    # size): its decompressed bytes would fill the bar at a tenth of the way, then stand still.
    compressed_tell = getattr(stream, "compressed_tell", None)
    told = compressed_tell() if compressed_tell else 0
    while data := stream.read(batch_bytes):
        rest = b""
        if not data.endswith(b"\n"):
            try:
                rest = rest_of_line(stream, len(data) - data.rfind(b"\n") - 1, limit)
            except UnreadableInput:  # compressed data that fails here: its whole lines come first
                if whole := data[:data.rfind(b"\n") + 1]:
                    yield Batch(number, offset, whole)
                raise
            data = data[:data.rfind(b"\n") + 1] if rest is None else data + rest
        long = _long_line_start(data, limit)
        if long is None and rest is None:  # the line after data's whole lines
            long = len(data)
        if long is not None:
            if long:
                yield Batch(number, offset, data[:long])
            raise UnreadableInput(line_too_long(_stream_name(stream), number + data.count(b"\n", 0, long)))
        if compressed_tell is None:
            told_read(len(data))  # a progress bar's measure (progress.py)
        else:
            told, before = compressed_tell(), told
            told_read(told - before)
        yield Batch(number, offset, data)
        number += newlines(data)
        offset += len(data)


@contextmanager
def cycle_collector_paused() -> Iterator[None]:
    """Python's cycle collector off for a block that makes many objects and no cycles that must go
    before its end (a batch's parsed JSON and the records made of it, a YAML round trip): its
    passes over them, ever longer, took a quarter to a third of such a block's time. It runs
    again after (and, when it was on, may then collect what the block left)."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def newlines(data: bytes) -> int:
    """How many lines end in `data`: bytes.count looks at a byte at a time, where replace finds
    each newline with memchr (six times faster on a batch of ~900-byte lines, copy included)."""
    return len(data) - len(data.replace(b"\n", b""))


def read_by_offset(file: str, scheduler: str | None = None) -> bool:
    """Whether a worker reads its batch of `file` itself, by offset (read_batch), rather than
    being sent the lines: a plain file's, and an object's (s3://) even on a cluster; not a
    compressed file's (no offsets), nor a local file's on a Dask cluster (its workers see no file
    here). Every command that shares batches out asks this."""
    return compression_of(file) is None and (scheduler is None or is_url(file))


def read_batch(file: str, offset: int, length: int) -> bytes:
    """A batch's lines read again from its file, by a worker process: cheaper than sending them
    down a pipe (one copy, not a pickle and two), for a file that is not compressed; an
    object's (a URL) in one ranged request."""
    if is_url(file):
        return read_range(file, offset, length)
    with open(file, "rb") as stream:
        stream.seek(offset)
        return stream.read(length)


def rest_of_line(stream: BinaryIO, held: int, limit: int) -> bytes | None:
    """The rest of the line of which `held` bytes are read, or None (nothing held) once the
    line is longer than `limit` bytes: read a part at a time, so that an endless line
    (/dev/zero) never takes more than about `limit` bytes of memory."""
    room = max(limit - held, 0) + 1
    parts, length = [], 0
    while length < room:
        part = stream.readline(min(LINE_PART_BYTES, room - length))
        parts.append(part)
        length += len(part)
        if not part or part.endswith(b"\n"):
            return b"".join(parts)
    return None


def _long_line_start(data: bytes, limit: int) -> int | None:
    """Where in `data` the first line longer than `limit` bytes (its newline aside) starts.

    Looked for a window of `limit` + 1 bytes at a time, not a line at a time: a window from a
    line's start without a newline holds a long line's start; else every line that ends in it
    is short, and the next window starts after its last newline (two windows pass `limit`)."""
    start = 0
    while len(data) - start > limit:
        end = data.rfind(b"\n", start, start + limit + 1)
        if end < 0:
            return start
        start = end + 1
    return None


def _stream_name(stream: BinaryIO) -> str:
    name = getattr(stream, "name", None)
    return name if isinstance(name, str) and not name.startswith("<") else "-"


def line_too_long(file: str, line: int | None) -> Problem:
    """The problem of a line longer than --max-line-bytes (which is not read)."""
    where = f"line {line}" if line else "a line"
    return Problem(file, line, 1 if line else None, "$",
                   f"{where} is longer than {size_text(LIMITS.max_line_bytes)} (--max-line-bytes): not read",
                   "error", "split the record, or raise --max-line-bytes if memory allows", "too-large")

