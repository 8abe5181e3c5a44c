#!/usr/bin/env python3
"""Measure `chatconv validate` on a compressed recording (.jsonl.gz, .jsonl.zst) against the
decompressor alone streaming the same file with an orjson parse loop, in one run.

DESIGN.md and issue 12: a compressed recording is read at no more than the decompressor's own
cost. Here that cost is a bare loop that streams the file through gzip (the standard library)
or zstandard and parses each line with orjson; chatconv's rate over that loop's is the ratio
shown, beside the same ratio for the plain file (validate over an orjson loop), so that what
compression adds can be told apart from what validate costs anyway.

Every figure is a whole child process (start-up included), on the same generated recording as
bench_validate.py (made valid: unique ids), best of --repeat. The script reports; it exits 0
whatever the figures (not a test, not run in CI).

    python benchmarks/bench_compressed.py                      # 100k steps, best of 1
    python benchmarks/bench_compressed.py --steps 20000 --jobs 1
"""

from __future__ import annotations

import argparse
import gzip
import os
import shlex
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from bench_validate import FIXTURES, check_valid, default_command, recording, run  # noqa: E402

# The baselines: each streams its file a chunk at a time and parses every line, as chatconv
# does; nothing is held whole. io.BufferedReader gives the zstd stream its lines.
LOOPS = {
    "plain": """
import sys, orjson
with open(sys.argv[1], "rb") as stream:
    for line in stream:
        if line.strip():
            orjson.loads(line)
""",
    "gzip": """
import gzip, sys, orjson
with gzip.open(sys.argv[1], "rb") as stream:
    for line in stream:
        if line.strip():
            orjson.loads(line)
""",
    "zstd": """
import io, sys, orjson, zstandard
with open(sys.argv[1], "rb") as raw:
    reader = zstandard.ZstdDecompressor().stream_reader(raw, read_across_frames=True)
    for line in io.BufferedReader(reader, 1 << 20):
        if line.strip():
            orjson.loads(line)
""",
    "zstd alone": """
import sys, zstandard
with open(sys.argv[1], "rb") as raw:
    reader = zstandard.ZstdDecompressor().stream_reader(raw, read_across_frames=True)
    total = 0
    while chunk := reader.read(1 << 20):
        total += len(chunk)
print(total)
""",
}


def compressed(path: Path, kind: str) -> Path:
    """The file compressed (gzip level 6, zstd level 3: their command-line defaults), made once."""
    target = path.with_name(path.name + (".gz" if kind == "gzip" else ".zst"))
    if target.exists() and target.stat().st_mtime >= path.stat().st_mtime:
        return target
    print(f"compressing {target.name} ...", file=sys.stderr, flush=True)
    partial = target.with_name(target.name + ".partial")
    with open(path, "rb") as source, open(partial, "wb") as out:
        if kind == "gzip":
            with gzip.GzipFile(fileobj=out, mode="wb", compresslevel=6) as writer:
                while block := source.read(1 << 20):
                    writer.write(block)
        else:
            import zstandard

            zstandard.ZstdCompressor(level=3).copy_stream(source, out)
    partial.rename(target)
    return target


def measure(args) -> dict:
    workdir = Path(args.workdir)
    workdir.mkdir(parents=True, exist_ok=True)
    plain = recording(workdir, args.steps, args.line_bytes, FIXTURES, args.regenerate)
    validate = [*shlex.split(args.command), "validate", *(["--jobs", str(args.jobs)] if args.jobs else [])]
    files = {"plain": plain, "gzip": compressed(plain, "gzip"), "zstd": compressed(plain, "zstd")}
    for path in files.values():
        check_valid(validate, path)  # also warms the page cache
    rows = []
    for kind, path in files.items():
        loop = min((run([sys.executable, "-c", LOOPS[kind], str(path)]) for _ in range(args.repeat)),
                   key=lambda r: r["seconds"])
        chatconv = min((run([*validate, str(path)]) for _ in range(args.repeat)), key=lambda r: r["seconds"])
        rows.append({"file": kind, "mib": path.stat().st_size / (1 << 20), "loop_s": loop["seconds"],
                     "loop_cpu_s": loop["cpu_seconds"], "validate_s": chatconv["seconds"],
                     "validate_cpu_s": chatconv["cpu_seconds"],
                     "validate_peak_mib": max(chatconv["peak_mib"], chatconv["tree_mib"]),
                     "ratio": loop["seconds"] / chatconv["seconds"],
                     "cpu_ratio": loop["cpu_seconds"] / chatconv["cpu_seconds"]})
    alone = min((run([sys.executable, "-c", LOOPS["zstd alone"], str(files["zstd"])]) for _ in range(args.repeat)),
                key=lambda r: r["seconds"])
    return {"steps": args.steps, "jobs": args.jobs, "rows": rows,
            "zstd_read_mib_s": plain.stat().st_size / (1 << 20) / alone["seconds"]}


def print_table(figures: dict) -> None:
    print(f"chatconv validate on {figures['steps']:,} steps, --jobs {figures['jobs'] or 'auto'} "
          f"(whole processes; rate ratio = loop time / validate time)")
    print(f"{'file':<6} {'MiB':>7} {'loop s':>7} {'CPU s':>6} {'validate s':>11} {'CPU s':>6} {'peak MiB':>9} "
          f"{'ratio':>6} {'CPU ratio':>10}")
    for row in figures["rows"]:
        print(f"{row['file']:<6} {row['mib']:>7.1f} {row['loop_s']:>7.2f} {row['loop_cpu_s']:>6.2f} "
              f"{row['validate_s']:>11.2f} {row['validate_cpu_s']:>6.2f} {row['validate_peak_mib']:>9.1f} "
              f"{row['ratio']:>6.2f} {row['cpu_ratio']:>10.2f}")
    plain = figures["rows"][0]
    for row in figures["rows"][1:]:
        print(f"{row['file']}: validate takes {row['validate_cpu_s'] - plain['validate_cpu_s']:+.2f} CPU s over the "
              f"plain file, the loop {row['loop_cpu_s'] - plain['loop_cpu_s']:+.2f} s (the decompressor's own cost); "
              f"ratio {row['ratio'] / plain['ratio']:.2f} of the plain file's (1.00: compression costs chatconv "
              f"what it costs the loop)")
    print(f"zstandard alone streams {figures['zstd_read_mib_s']:.0f} MiB/s of decompressed data")


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--steps", type=int, default=100_000, help="steps in the file (default: %(default)s)")
    parser.add_argument("--line-bytes", type=int, default=900, help="average line size (default: %(default)s)")
    parser.add_argument("--repeat", type=int, default=1, help="runs of each; the best is kept (default: %(default)s)")
    parser.add_argument("--jobs", type=int, help="passed to chatconv validate as --jobs (default: validate picks)")
    parser.add_argument("--command", default=default_command(), help="the chatconv to run (default: %(default)s)")
    parser.add_argument("--workdir", default=str(HERE / "data"), help="where generated files go (default: %(default)s)")
    parser.add_argument("--regenerate", action="store_true", help="write the generated files again")
    print_table(measure(parser.parse_args(argv)))


if __name__ == "__main__":
    os.environ.setdefault("PYTHONHASHSEED", "0")
    main()
