"""Compressed files (gzip `.gz`, zstd `.zst`): told by name, read as a stream of their
decompressed bytes (writing.py's CompressedWriter writes them).

A compressed file is never decompressed whole, into memory or onto disk: readers take its
lines as they take a plain file's, a chunk of decompressed bytes at a time. Data that is cut
short or corrupt is one problem naming the file and the last whole line, given once every whole
line before it was handed out (so that those are checked); the line it cuts is not.
"""

from __future__ import annotations

from pathlib import Path
from typing import BinaryIO, Iterator

from ..limits import EXPANSION, EXPANSION_FREE, LIMITS, size_text
from ..problems import Problem, UnreadableInput
from .decompress import corrupt_errors, decompressed_chunks
from .objects import open_raw

COMPRESSIONS = {".gz": "gzip", ".zst": "zstd"}  # suffix -> kind
_MAGIC = {"gzip": b"\x1f\x8b", "zstd": b"\x28\xb5\x2f\xfd"}
# A zstd file may start with a skippable frame (magic 0x184D2A50 to 0x184D2A5F, little-endian):
# pzstd writes one before each frame (the seekable format, its table at the end); zstandard's
# decompressobj skips them.
_ZSTD_SKIPPABLE = b"\x2a\x4d\x18"  # the magic's last three bytes; the first is 0x50 to 0x5F
_SUFFIX_OF = {kind: suffix for suffix, kind in COMPRESSIONS.items()}
def compression_of(path: str | Path) -> str | None:
    """gzip or zstd when the file's name ends in .gz or .zst (any case), else None."""
    if str(path) == "-":
        return None
    return COMPRESSIONS.get(Path(str(path)).suffix.lower())


def without_compression(path: str | Path) -> str:
    """The name with its compression suffix taken off (`run.jsonl.gz` -> `run.jsonl`)."""
    path = str(path)
    return path[:-len(Path(path).suffix)] if compression_of(path) else path


def _kind_of(head: bytes) -> str | None:
    """gzip or zstd when `head`, a file's first 4 bytes, start such data, else None."""
    if head[:1] and 0x50 <= head[0] <= 0x5F and head[1:4] == _ZSTD_SKIPPABLE:
        return "zstd"
    return next((k for k, magic in _MAGIC.items() if head.startswith(magic)), None)


def refuse_compressed_input(head: bytes, file: str = "-") -> None:
    """UnreadableInput when `head`, the first bytes of standard input, are gzip or zstd data:
    it is not decompressed (a file is, by its name)."""
    kind = _kind_of(head)
    if kind is not None:
        raise UnreadableInput(Problem(file, None, None, "$", f"standard input is {kind} data", "error",
                                      f"name the file instead, which is read decompressed, or decompress it into "
                                      f"the pipe: {kind} -dc FILE{_SUFFIX_OF[kind]} | chatconv ...",
                                      "compressed-data"))


def open_decompressed(raw: BinaryIO, file: str, kind: str) -> DecompressedStream:
    """A stream of the decompressed bytes of `raw` (open on `file`, named as `kind` data).

    UnreadableInput at once when the file does not start as `kind` data does (a plain file
    named .gz, say); an empty file reads as empty.
    """
    head = raw.peek(4)[:4]
    if head and _kind_of(head) != kind:
        raw.close()
        other = _kind_of(head)
        suffix = _SUFFIX_OF[kind]
        hint = (f"it holds {other} data: rename it to end in {_SUFFIX_OF[other]}" if other else
                f"if it is plain text, rename it without {suffix}; else compress it with {kind}")
        raise UnreadableInput(Problem(file, None, None, "$", f"the file is named {suffix} but does not hold "
                                      f"{kind} data", "error", hint, "compressed-data"))
    return DecompressedStream(raw, file, kind, decompressed_chunks(raw, kind))


class DecompressedStream:
    """The decompressed bytes of a compressed file, read as a plain binary file is: read(n),
    readline(), peek(n), iteration by line. Lines are split at b"\\n" only, as for a plain file.

    A failure (corrupt or cut-short data, a read error) is raised as UnreadableInput only once
    every whole line decompressed before it was handed out (the part of a line before it is
    not, unless a read(n) handed it out already); then on every read.
    """

    def __init__(self, raw: BinaryIO, file: str, kind: str, chunks: Iterator[bytes]):
        self.raw = raw
        self.name = file
        self.kind = kind
        self._chunks = chunks
        self._buffer = b""
        self._start = 0  # where the bytes not yet handed out start in _buffer
        self._good = 0  # bytes decompressed so far (their lines are counted only on a failure)
        self._failure: UnreadableInput | None = None
        self._done = False
        self._expansion = LIMITS.max_expansion or EXPANSION[kind]  # (see _bomb)

    # -- reading ----------------------------------------------------------------------------

    def _more(self) -> bytes:
        """The next decompressed bytes; b"" at the end, or when the data fails from here."""
        if self._done or self._failure is not None:
            return b""
        try:
            chunk = next(self._chunks)
        except StopIteration:
            self._done = True
            return b""
        except corrupt_errors() as exc:
            self._failure = self._corrupt(exc)
            return b""
        except OSError as exc:
            whole = self._lines_before(self._good)
            self._failure = UnreadableInput(Problem(self.name, whole + 1, None, "$", "cannot be read past "
                                                    f"line {whole}: {exc.strerror or exc}", "error", None,
                                                    "unreadable-file"))
            return b""
        self._good += len(chunk)
        if self._good > EXPANSION_FREE and self._good > self._expansion * max(1, self.compressed_tell()):
            self._failure = self._bomb()
            return b""
        return chunk

    def _bomb(self) -> UnreadableInput:
        """The data expands past --max-expansion: the lines before are read, none after."""
        whole = self._lines_before(self._good)
        return UnreadableInput(Problem(
            self.name, whole + 1, None, "$", f"the {self.kind} data expands more than {self._expansion:,} times "
            f"its size ({size_text(self._good)} of {size_text(max(1, self.compressed_tell()))} read): read no "
            f"further than line {whole}", "error", "a file that small holding this much is a decompression bomb, "
            "or data that repeats: raise --max-expansion if it is yours", "compressed-data"))

    def _lines_before(self, size: int) -> int:
        """The newlines in the first `size` decompressed bytes, read again from the start: only
        a failure asks, so that reading whole data pays no count."""
        count = 0
        try:
            with open_raw(self.name) as raw:
                for chunk in decompressed_chunks(raw, self.kind):
                    count += chunk.count(b"\n", 0, size)
                    size -= len(chunk)
                    if size <= 0:
                        break
        except (OSError, UnreadableInput, *corrupt_errors()):
            pass  # it fails where it did: the bytes before are counted
        return count

    def _corrupt(self, exc: BaseException) -> UnreadableInput:
        whole = self._lines_before(self._good)
        where = f"after line {whole}, the last whole line" if whole else "before its first line ends"
        tool = "gzip" if self.kind == "gzip" else "zstd"
        return UnreadableInput(Problem(
            self.name, whole + 1, None, "$", f"the {self.kind} data is cut short or corrupt {where} ({exc})",
            "error", f"copy the file whole again, if a copy or download was cut short; `{tool} -dc FILE > "
                     "PART.jsonl` keeps the lines before", "compressed-data"))

    def _drop_cut_line(self) -> None:
        """Once the data failed: the bytes after the last whole line held are not handed out."""
        self._buffer = self._buffer[:max(self._buffer.rfind(b"\n", self._start) + 1, self._start)]

    def _end(self) -> bytes:
        """b"" at the end of the data; the failure, once every good byte was handed out."""
        if self._failure is not None:
            raise self._failure
        return b""

    def _take(self, end: int) -> bytes:
        data = self._buffer[self._start:end]
        self._start = end
        return data

    def read(self, size: int = -1) -> bytes:
        held = len(self._buffer) - self._start
        if size is None or size < 0 or held < size:
            parts = [memoryview(self._buffer)[self._start:]]  # joined below: not copied twice
            while size is None or size < 0 or held < size:
                chunk = self._more()
                if not chunk:
                    break
                parts.append(chunk)
                held += len(chunk)
            self._buffer, self._start = b"".join(parts), 0
            if self._failure is not None:
                self._drop_cut_line()
            held = len(self._buffer) - self._start
        if not held:
            return self._end()
        whole = size is None or size < 0
        return self._take(len(self._buffer) if whole else min(self._start + size, len(self._buffer)))

    def readline(self, size: int | None = -1) -> bytes:
        """The next line, or its first `size` bytes (as a file's readline(size)): a long line
        is decompressed only that far, and its chunks are joined once, not once per chunk."""
        limit = -1 if size is None else size
        if limit == 0:
            return b""
        if (end := self._buffer.find(b"\n", self._start)) < 0:
            held = len(self._buffer) - self._start
            parts = [memoryview(self._buffer)[self._start:]]
            while (limit < 0 or held < limit) and (chunk := self._more()):
                parts.append(chunk)
                held += len(chunk)
                if b"\n" in chunk:
                    break
            self._buffer, self._start = b"".join(parts), 0
            if self._failure is not None:
                self._drop_cut_line()
            if self._start == len(self._buffer):
                return self._end()
            if (end := self._buffer.find(b"\n")) < 0:
                end = len(self._buffer) - 1  # the last line, without its newline, or a part
        if limit > 0:
            end = min(end, self._start + limit - 1)
        return self._take(end + 1)

    def __iter__(self) -> Iterator[bytes]:
        while line := self.readline():
            yield line

    def peek(self, size: int = 1) -> bytes:
        """At least `size` bytes ahead when there are (fewer at the end), without using them."""
        while len(self._buffer) - self._start < size and (chunk := self._more()):
            self._buffer, self._start = self._buffer[self._start:] + chunk, 0
        return self._buffer[self._start:]

    def compressed_tell(self) -> int:
        """The compressed bytes read so far (for progress against the file's size)."""
        return self.raw.tell()

    # -- the file ---------------------------------------------------------------------------

    def fileno(self) -> int:
        return self.raw.fileno()

    def seekable(self) -> bool:
        return False  # workers cannot read a batch of it by offset

    def close(self) -> None:
        close = getattr(self._chunks, "close", None)
        if close is not None:
            close()
        self.raw.close()

    def __enter__(self) -> DecompressedStream:
        return self

    def __exit__(self, *exc_info) -> None:
        self.close()
