"""The decompressors: the decompressed bytes of gzip or zstd data, a chunk at a time, each chunk
as soon as it is made (so that the bytes before a failure are handed out), and the errors that
say the data is cut short or corrupt. compressed.py reads files through them.
"""

from __future__ import annotations

import gzip
import zlib
from typing import BinaryIO, Iterator

# Decompressed bytes asked of gzip at a time; compressed bytes fed to zstd at a time. zstd's
# decompressobj has no output bound, so the input is kept small: a chunk is near 10x this for
# most data, and at most 32,768x (a block of one repeated byte takes 4 bytes for 128 KiB), 16 MiB,
# where 16 KiB gave a file of zeros 512 MiB chunks, past any --max-line-bytes.
_GZIP_CHUNK = 256 * 1024
_ZSTD_INPUT = 512
# Data that repeats gives more than that (a 512-byte read made 5.6 MiB of a file of copies: zstd
# hands out whole blocks of 128 KiB, and such a block takes a dozen bytes): the reads start small,
# are cut down as a chunk grows past this, and doubled after four reads that gave nothing (the
# data of a block that compresses ten times is some 13 KiB) or when a chunk is under an eighth of
# it (data zstd stored whole, a byte out for a byte in), so that a chunk stays near it.
_ZSTD_OUTPUT = 256 * 1024
_ZSTD_SMALLEST = 16


def decompressed_chunks(raw: BinaryIO, kind: str) -> Iterator[bytes]:
    """The decompressed bytes of `raw`, gzip or zstd data (`kind`), a chunk at a time."""
    return _gzip_chunks(raw) if kind == "gzip" else zstd_chunks(raw)


def _gzip_chunks(raw: BinaryIO) -> Iterator[bytes]:
    # GzipFile reads every member of a multi-member file (`cat a.gz b.gz`) and checks each CRC.
    # read1: what one step decompressed, so that the bytes before a failure are handed out.
    with gzip.GzipFile(fileobj=raw, mode="rb") as stream:
        while chunk := stream.read1(_GZIP_CHUNK):
            yield chunk


class Truncated(Exception):
    """The compressed data ends inside a frame."""


def zstd_chunks(raw: BinaryIO) -> Iterator[bytes]:
    # zstandard's stream_reader ends quietly where a file is cut short; a decompressobj says
    # whether its frame ended (eof), so each frame gets its own, and a file may hold several.
    import zstandard  # here: only .zst files need it

    decompressor = zstandard.ZstdDecompressor()
    frame, begun = decompressor.decompressobj(), False
    size, idle = _ZSTD_SMALLEST, 0  # bytes read at a time; reads that gave nothing since the last chunk
    while data := raw.read(size):
        while data:
            begun = True
            chunk = frame.decompress(data)
            data = b""
            if frame.eof:
                data = frame.unused_data
                frame, begun = decompressor.decompressobj(), False
            if chunk:
                yield chunk
        if chunk:
            idle = 0
            if len(chunk) > _ZSTD_OUTPUT:
                size = max(_ZSTD_SMALLEST, size * _ZSTD_OUTPUT // len(chunk))
            elif len(chunk) * 8 < _ZSTD_OUTPUT and size < _ZSTD_INPUT:  # data stored whole: a byte a byte
                size *= 2
        else:
            idle += 1
            if idle >= 4 and size < _ZSTD_INPUT:
                size, idle = size * 2, 0
    if begun:
        raise Truncated("the data ends inside a frame")


def corrupt_errors() -> tuple[type[BaseException], ...]:
    errors: tuple[type[BaseException], ...] = (EOFError, zlib.error, gzip.BadGzipFile, Truncated)
    try:
        import zstandard
    except ImportError:  # never raised then
        return errors
    return errors + (zstandard.ZstdError,)
