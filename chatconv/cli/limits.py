"""--max-line-bytes and --max-file-bytes: the one option decorator of every command that reads
JSONL lines or whole files, so that no input takes memory without bound (see chatconv.limits).
"""

from __future__ import annotations

import re
import sys
from decimal import Decimal

import click

from ..limits import EXPANSION, EXPANSION_FREE, MIB, Limits, set_limits, size_text

# KB, MB, GB: powers of 1000, as disks count; KiB, MiB, GiB (and K, M, G): powers of 1024.
_UNITS = {"": 1, "b": 1, "kb": 10**3, "mb": 10**6, "gb": 10**9,
          "k": 1 << 10, "kib": 1 << 10, "m": MIB, "mib": MIB, "g": 1 << 30, "gib": 1 << 30}


class ByteSize(click.ParamType):
    """A size in bytes, for every option that takes one: 1048576, 512KiB, 1.5GiB, 64MB."""

    name = "SIZE"

    def convert(self, value, param, ctx) -> int:
        if isinstance(value, int):
            return value
        match = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([a-zA-Z]*)\s*", str(value))
        unit = _UNITS.get(match.group(2).lower()) if match else None
        # Decimal, not float: exact for any count of bytes, and no infinity from a long number.
        size = int(Decimal(match.group(1)) * unit) if unit is not None else 0
        if size < 1:
            self.fail(f"{value!r} is not a size: write e.g. 64MiB, 512KiB or 1048576 (bytes)", param, ctx)
        if size > sys.maxsize:  # no read can be that long: Python's reads would raise OverflowError
            self.fail(f"{value!r} is larger than any file this machine can read", param, ctx)
        return size


SIZE = ByteSize()


def _set(name: str):
    def callback(ctx, param, value):
        # Every run sets its limits, the defaults too: a library caller's run before (a test's
        # CliRunner, say) must not leave its own.
        set_limits(**{name: getattr(Limits(), name) if value is None else value})
        return value
    return callback


def limit_options(command):
    """Add --max-line-bytes, --max-file-bytes and --max-expansion (set before the command reads anything)."""
    command = click.option(
        "--max-expansion", type=click.IntRange(min=1), metavar="N", expose_value=False,
        callback=_set("max_expansion"),
        help=f"How many times its size a .gz or .zst file's data may expand, past its first "
             f"{size_text(EXPANSION_FREE)} [default: {EXPANSION['gzip']:,} for gzip, {EXPANSION['zstd']:,} for "
             "zstd, whose long matches compress repeated lines thousands of times]. Data past it (a "
             "decompression bomb) is an error, read no further.")(command)
    command = click.option(
        "--max-file-bytes", type=SIZE, expose_value=False, callback=_set("max_file_bytes"),
        help=f"The largest file read whole: a YAML document, a file an eval case references "
             f"[default: {size_text(Limits().max_file_bytes)}]. A larger one is an error, not read.")(command)
    return click.option(
        "--max-line-bytes", type=SIZE, expose_value=False, callback=_set("max_line_bytes"),
        help=f"The longest JSONL line read [default: {size_text(Limits().max_line_bytes)}]. A longer line "
             "is an error at that line and is not held in memory: the file is read no further.")(command)
