"""Bytes and text: reading files, telling their encoding, the one rule for a blank line.
(batches.py cuts a JSONL file into batches of whole lines.)
"""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import BinaryIO

from ..limits import LIMITS, read_at_most, size_text
from ..problems import ChatconvError, Problem, UnreadableInput
from .compressed import compression_of, open_decompressed
from .objects import open_remote
from .remote import is_url

UTF8_BOM = b"\xef\xbb\xbf"


def read_whole(stream: BinaryIO, file: str, limit: int | None = None) -> bytes:
    """All of an open file's bytes; UnreadableInput when they are more than `limit`, or, for a
    device or a pipe (which may never end), more than LIMITS.max_file_bytes."""
    if limit is None and not _is_regular(stream):
        limit = LIMITS.max_file_bytes
    data = stream.read() if limit is None else read_at_most(stream, limit)
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


def _open_problem(path: str | Path, exc: OSError) -> Problem:
    """Why the file could not be opened, as a user reads it."""
    if isinstance(exc, FileNotFoundError):
        message, hint = "no such file", "check the path"
    elif isinstance(exc, IsADirectoryError):
        message, hint = "is a folder, not a file", None
    else:
        message, hint = f"cannot be read: {exc.strerror}", None
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
    decompressed bytes, streamed (see compressed.py): it cannot be read by offset then. A URL
    (`s3://bucket/run.jsonl`) gives the object's bytes (remote.py)."""
    if is_url(path):
        stream = open_remote(str(path))
    else:
        try:
            stream = open(path, "rb")
        except OSError as exc:
            raise UnreadableInput(_open_problem(path, exc)) from None
    kind = compression_of(path)
    if kind is not None:
        stream = open_decompressed(stream, str(path), kind)
    try:
        refuse_foreign_encoding(stream.peek(4)[:4], str(path))
    except UnreadableInput:
        stream.close()
        raise
    return stream




def stream_size(stream: BinaryIO) -> int:
    """The size of the file open as `stream` (open_binary's), as stored: a .gz file's compressed
    size; an object's, which has no descriptor, from its store."""
    try:
        return os.fstat(stream.fileno()).st_size
    except (OSError, AttributeError, ValueError):  # io.UnsupportedOperation is an OSError
        return _object_attribute(stream, "size") or 0


def stream_etag(stream: BinaryIO) -> str | None:
    """The ETag of the object open as `stream` (open_binary's): what an in-place rewrite checks
    is still there before it replaces the object; None for a file."""
    return _object_attribute(stream, "etag")


def _object_attribute(stream: BinaryIO, name: str):
    # open_remote's stream carries it; a decompressing stream has that one as its `raw`.
    for holder in (stream, getattr(stream, "raw", None)):
        value = getattr(holder, name, None)
        if value is not None and not callable(value):
            return value
    return None


def empty_file_problem(file: str) -> Problem:
    return Problem(file, 1, 1, "$", "the file is empty", "error", "a file must hold a record", "empty-file")


# ---------------------------------------------------------------------------------------------
# Blank lines


def is_blank_line(line: bytes) -> bool:
    """Whether a JSONL line holds no record: only white space, after at most one leading BOM
    (files joined end to end leave a line holding just a BOM). Every reader of JSONL lines
    (validate, migrate, the recording commands, standard input's head) asks this."""
    return not line.removeprefix(UTF8_BOM).strip()


def holds_no_record(lines: bytes) -> bool:
    """Whether whole JSONL lines are all blank (see is_blank_line)."""
    return all(is_blank_line(line) for line in lines.split(b"\n"))
