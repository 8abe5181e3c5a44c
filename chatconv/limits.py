"""The sizes chatconv reads at most, so that no input (a device, a file of one endless line, a
huge document) can take memory without bound. The command line sets them (--max-line-bytes,
--max-file-bytes) before a command reads anything; worker processes inherit them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import BinaryIO

MIB = 1 << 20
# The expansions allowed by default. JSONL recordings gzip 5 to 20 times (gzip sees 32 KiB back, at
# most 1,032 times: 300 KB of it made 300 MB of newlines); zstd's long matches compress repeated
# lines thousands of times (the benchmarks' repeated recordings 3,700), a bomb 30,000 and more.
EXPANSION = {"gzip": 250, "zstd": 10_000}
EXPANSION_FREE = 4 * MIB  # a compressed file's first decompressed bytes, which no ratio limits (small files of few lines compress more)
READ_PART_BYTES = MIB  # a file read whole under a limit is read this much at a time (see read_at_most)


@dataclass
class Limits:
    max_line_bytes: int = 64 * MIB  # one JSONL line (a record), held whole to be read
    max_file_bytes: int = 16 * MIB  # a file read whole: a YAML document, a file an eval case references
    # A compressed file's data may expand at most this many times the compressed bytes read of it
    # (past EXPANSION_FREE); None: EXPANSION[kind].
    max_expansion: int | None = None


LIMITS = Limits()


_KEPT = object()


def set_limits(max_line_bytes: int | None = None, max_file_bytes: int | None = None,
               max_expansion: int | None | object = _KEPT) -> None:
    """Change the limits of this process (and of the workers it starts after); max_expansion
    None is its default, EXPANSION's by kind."""
    if max_line_bytes is not None:
        LIMITS.max_line_bytes = max_line_bytes
    if max_file_bytes is not None:
        LIMITS.max_file_bytes = max_file_bytes
    if max_expansion is not _KEPT:
        LIMITS.max_expansion = max_expansion


def size_text(size: int) -> str:
    """64 MiB, 1.5 MiB, 512 KiB, 100 bytes: a limit as a message names it."""
    for unit, name in ((1 << 30, "GiB"), (MIB, "MiB"), (1 << 10, "KiB")):
        if size >= unit:
            return f"{size // unit} {name}" if size % unit == 0 else f"{size / unit:.1f} {name}"
    return f"{size} bytes"


def read_at_most(stream: BinaryIO, limit: int) -> bytes:
    """The stream's bytes up to one past `limit` (which tells a larger file), read a part at a
    time: a read of `limit` + 1 would take that much memory at once, whatever the file's size
    (--max-file-bytes 100GiB would end in MemoryError)."""
    parts, length = [], 0
    while length <= limit and (part := stream.read(min(READ_PART_BYTES, limit + 1 - length))):
        parts.append(part)
        length += len(part)
    return b"".join(parts)
