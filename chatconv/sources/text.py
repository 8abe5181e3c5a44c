"""Bytes and text: reading files, telling their encoding, the one rule for a blank line, and
the one way a JSONL file is cut into batches of whole lines.
"""

from __future__ import annotations

import os
import stat
import sys
from pathlib import Path
from typing import BinaryIO, Iterator, NamedTuple

from ..limits import LIMITS, size_text
from ..problems import ChatconvError, Problem, UnreadableInput
from .compressed import compression_of, open_decompressed
from .progress import told_read

UTF8_BOM = b"\xef\xbb\xbf"
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


def read_bytes(path: str | Path, limit: int | None = None) -> bytes:
    """The whole file (`-` is standard input), decompressed when it is a `.gz` or `.zst`;
    UnreadableInput says why it cannot be read, or that it holds more than `limit` bytes
    (a YAML document's limit: LIMITS.max_file_bytes). A device or a FIFO (/dev/zero, say)
    is never read past LIMITS.max_file_bytes: it may not end."""
    if str(path) == "-":
        data = read_whole(sys.stdin.buffer, "-", limit)
    else:
        with open_binary(path) as stream:  # a compressed document: held whole anyway, as a plain one is
            data = read_whole(stream, str(path), limit)
    refuse_foreign_encoding(data[:4], str(path))
    return data


def read_whole(stream: BinaryIO, file: str, limit: int | None = None) -> bytes:
    """All of an open file's bytes; UnreadableInput when they are more than `limit`, or, for a
    device or a pipe (which may never end), more than LIMITS.max_file_bytes."""
    if limit is None and not _is_regular(stream):
        limit = LIMITS.max_file_bytes
    data = stream.read() if limit is None else stream.read(limit + 1)
    if limit is not None and len(data) > limit:
        raise UnreadableInput(file_too_large(file, limit))
    return data


def file_too_large(file: str, limit: int | None = None) -> Problem:
    """The problem of a file to read whole that is larger than `limit` (--max-file-bytes)."""
    return Problem(file, None, None, "$", f"the file is larger than {size_text(limit or LIMITS.max_file_bytes)} "
                   "(--max-file-bytes): not read", "error", "split it, or raise --max-file-bytes if memory allows",
                   "too-large")


def _is_regular(stream: BinaryIO) -> bool:
    try:
        return stat.S_ISREG(os.fstat(stream.fileno()).st_mode)
    except (OSError, ValueError, AttributeError):  # a decompressing stream: its file was checked
        return True


def _read_file(path: str | Path) -> bytes:
    try:
        return Path(path).read_bytes()
    except FileNotFoundError:
        raise UnreadableInput(_file_problem(path, "no such file", "check the path")) from None
    except IsADirectoryError:
        raise UnreadableInput(_file_problem(path, "is a folder, not a file")) from None
    except OSError as exc:
        raise UnreadableInput(_file_problem(path, f"cannot be read: {exc.strerror}")) from None


def _file_problem(path, message: str, hint: str | None = None) -> Problem:
    return Problem(str(path), None, None, "$", message, "error", hint, "unreadable-file")


# UTF-16 and UTF-32, told by their byte order mark, else by the NUL bytes next to the first
# character (ASCII in any JSON or YAML record): (label, name for iconv).
_FOREIGN_BOMS = [
    (b"\xff\xfe\x00\x00", ("UTF-32 (little-endian)", "UTF-32LE")),
    (b"\x00\x00\xfe\xff", ("UTF-32 (big-endian)", "UTF-32BE")),
    (b"\xff\xfe", ("UTF-16 (little-endian)", "UTF-16LE")),
    (b"\xfe\xff", ("UTF-16 (big-endian)", "UTF-16BE")),
]
_FOREIGN_NULS = {  # the first bytes, 0 for NUL and x for any other
    "x000": ("UTF-32 (little-endian)", "UTF-32LE"),
    "000x": ("UTF-32 (big-endian)", "UTF-32BE"),
    "x0x0": ("UTF-16 (little-endian)", "UTF-16LE"),
    "x0": ("UTF-16 (little-endian)", "UTF-16LE"),
    "0x0x": ("UTF-16 (big-endian)", "UTF-16BE"),
    "0x": ("UTF-16 (big-endian)", "UTF-16BE"),
}


def refuse_foreign_encoding(head: bytes, file: str) -> None:
    """Raise UnreadableInput when `head`, the first bytes of a file, are UTF-16 or UTF-32.

    Checked once at the start of a file, so that such a file is one problem, not one per line.
    """
    encoding = next((e for bom, e in _FOREIGN_BOMS if head.startswith(bom)), None)
    encoding = encoding or _FOREIGN_NULS.get("".join("x" if b else "0" for b in head[:4]))
    if encoding:
        label, name = encoding
        raise UnreadableInput(Problem(
            file, 1, 1, "$", f"the file is {label}; chatconv reads UTF-8", "error",
            f"convert it, e.g. iconv -f {name} -t UTF-8 OLD > NEW", "foreign-encoding"))


def decode_utf8(data: bytes, file: str, first_line: int = 1) -> str:
    """UTF-8 text with a leading BOM removed; any other encoding is a problem naming the spot.

    Raises UnreadableInput for a whole file (first_line 1) in UTF-16 or UTF-32, else
    ChatconvError at the first byte that is not UTF-8.
    """
    if first_line == 1:
        refuse_foreign_encoding(data[:4], file)
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = first_line + data.count(b"\n", 0, exc.start)
        column = exc.start - (data.rfind(b"\n", 0, exc.start) + 1) + 1
        raise ChatconvError(Problem(
            file, line, column, "$", f"invalid UTF-8 byte 0x{data[exc.start]:02x}", "error",
            "save the file as UTF-8", "invalid-utf8")) from None



def open_binary(path: str | Path) -> BinaryIO:
    """The file, open for reading bytes; UnreadableInput says why it cannot be (e.g. it is
    UTF-16: refused here, once, rather than line by line). A `.gz` or `.zst` file gives its
    decompressed bytes, streamed (see compressed.py): it cannot be read by offset then."""
    try:
        stream = open(path, "rb")
    except OSError:
        _read_file(path)  # raises the right UnreadableInput
        raise
    kind = compression_of(path)
    if kind is not None:
        stream = open_decompressed(stream, str(path), kind)
    try:
        refuse_foreign_encoding(stream.peek(4)[:4], str(path))
    except UnreadableInput:
        stream.close()
        raise
    return stream




def empty_file_problem(file: str) -> Problem:
    return Problem(file, 1, 1, "$", "the file is empty", "error", "a file must hold a record", "empty-file")


# ---------------------------------------------------------------------------------------------
# Blank lines and batches of lines


def is_blank_line(line: bytes) -> bool:
    """Whether a JSONL line holds no record: only white space, after at most one leading BOM
    (files joined end to end leave a line holding just a BOM). Every reader of JSONL lines
    (validate, migrate, the recording commands, standard input's head) asks this."""
    return not line.removeprefix(UTF8_BOM).strip()


def holds_no_record(lines: bytes) -> bool:
    """Whether whole JSONL lines are all blank (see is_blank_line)."""
    return all(is_blank_line(line) for line in lines.split(b"\n"))


class Batch(NamedTuple):
    """Whole lines of a JSONL file: the number of the first, the offset in the file, the bytes."""

    first_line: int
    offset: int
    data: bytes


def iter_line_batches(stream: BinaryIO, batch_bytes: int = BATCH_BYTES) -> Iterator[Batch]:
    """The batches of whole lines of `stream`, in order, each about `batch_bytes` long.

    A batch ends with the line that holds its `batch_bytes`-th byte (a long line makes it
    longer); the last line of the file may lack its newline. Lines are numbered as iterating
    the stream numbers them (split at b"\\n" only). See batch_spans for the same batches of a
    file that worker processes read themselves. A line longer than LIMITS.max_line_bytes is
    not held: the lines before it come as a batch, then UnreadableInput names it.
    """
    number = 1
    offset = 0
    limit = LIMITS.max_line_bytes
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
        told_read(len(data))  # a progress bar's measure (progress.py)
        yield Batch(number, offset, data)
        number += data.count(b"\n")
        offset += len(data)


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


def batch_spans(stream: BinaryIO, batch_bytes: int = BATCH_BYTES) -> Iterator[tuple[int, int]]:
    """(offset, length) of the batches iter_line_batches reads, found by seeking to where each
    would end and reading on to the end of that line: for workers that read their own lines.
    A line that goes on past LIMITS.max_line_bytes from there ends them: UnreadableInput."""
    size = os.fstat(stream.fileno()).st_size
    limit = LIMITS.max_line_bytes
    offset = 0
    while offset < size:
        stream.seek(offset + batch_bytes - 1)
        if rest_of_line(stream, 0, limit) is None:
            raise UnreadableInput(line_too_long(_stream_name(stream), _line_number_at(stream, offset + batch_bytes - 1)))
        end = min(stream.tell(), size)
        yield offset, end - offset
        offset = end


def _line_number_at(stream: BinaryIO, offset: int) -> int:
    """The number of the line that holds the byte at `offset` (the file read again, a batch at a time)."""
    stream.seek(0)
    newlines = 0
    while offset > 0 and (data := stream.read(min(BATCH_BYTES, offset))):
        newlines += data.count(b"\n")
        offset -= len(data)
    return newlines + 1
