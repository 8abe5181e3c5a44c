#!/usr/bin/env python3
"""Measure `chatconv migrate` on a large legacy recording against an orjson round trip, in one run.

DESIGN.md, "Speed and memory": migrating a legacy recording should run at >= 40% of the rate of
an orjson parse + dump loop over the same file, with a peak memory that is flat in the file
size (<= 150 MiB), and `--jobs 2` should be >= 1.6x as fast as `--jobs 1` on two cores.

Every figure is a whole child process (start-up, reading and writing included), the best of
--repeat runs taken in turn, so that a busy machine weighs on all of them alike. The recording
is made of the real ones in tests/data/recorded, each line made legacy (a one-message output as
that message, AI SDK 4 parts) as the tests make them. The script prints each target as PASS or
FAIL and exits 0 whatever the figures (it is not a test and is not run in CI).

    python benchmarks/bench_migrate.py                  # 200k steps, and 50k for the memory slope
    python benchmarks/bench_migrate.py --steps 20000 --repeat 1
"""

from __future__ import annotations

import argparse
import hashlib
import os
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
CHECKOUT = HERE.parent
sys.path[:0] = [str(CHECKOUT / "tests"), str(CHECKOUT)]

from conftest import recorded_files  # noqa: E402  (the test helpers make the legacy lines)
from test_migrate import legacy_bytes  # noqa: E402

MiB = 1024 * 1024
MIN_ORJSON_RATIO = 0.7  # issue 32 (0.40 before)
MAX_PEAK_MIB = 150
FLAT_FACTOR, FLAT_SLACK_MIB = 1.10, 4  # "flat": the big file's peak within 10% + 4 MiB of the small one's
MIN_JOBS_SPEEDUP = 1.6

ORJSON_LOOP = """
import sys, orjson
with open(sys.argv[1], "rb") as source, open(sys.argv[2], "wb") as out:
    for line in source:
        out.write(orjson.dumps(orjson.loads(line)) + b"\\n")
"""


def generate(folder: Path, steps: int) -> tuple[Path, str]:
    """A legacy recording of `steps` lines, and the SHA-256 of what migrating it must give."""
    current = [line.rstrip(b"\n") + b"\n" for path in recorded_files()
               for line in path.read_bytes().splitlines(keepends=True)]
    legacy = [legacy_bytes(line) for line in current]
    path = folder / f"legacy-{steps}.jsonl"
    expected = hashlib.sha256()
    with open(path, "wb") as out:
        for start in range(0, steps, 10_000):
            indexes = [i % len(current) for i in range(start, min(steps, start + 10_000))]
            out.write(b"".join(legacy[i] for i in indexes))
            expected.update(b"".join(current[i] for i in indexes))
    return path, expected.hexdigest()


# Starts the command and reports its wall time and peak memory. A child's ru_maxrss keeps the
# high-water mark of the process it was forked from, even across exec: measured from this
# script, which holds the generated lines, every command would seem to need as much as it.
# This launcher is a bare interpreter (-S -I), so it adds at most its own ~10 MiB.
LAUNCHER = """
import os, sys, time
start = time.perf_counter()
pid = os.fork()
if pid == 0:
    os.dup2(os.open(os.devnull, os.O_WRONLY), 1)
    os.execvp(sys.argv[1], sys.argv[1:])
_, status, usage = os.wait4(pid, 0)
print(time.perf_counter() - start, usage.ru_utime + usage.ru_stime, usage.ru_maxrss,
      os.waitstatus_to_exitcode(status))
"""


# Bytecode is cached, as for an installed package (pip compiles it), and out of the checkout: a
# PYTHONDONTWRITEBYTECODE in the caller's environment would have every command compile chatconv
# again (about 0.15 s of start-up). A command's first run fills the cache; best-of runs skip it.
PYCACHE = Path(tempfile.gettempdir()) / "chatconv-bench-pycache"


def run(command: list[str]) -> dict:
    """Wall time, CPU time and peak memory (that of its largest process) of a command, workers
    included. CPU time hardly changes when other processes share the cores; wall time does."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(CHECKOUT), os.environ.get("PYTHONPATH", "")]),
           "PYTHONPYCACHEPREFIX": str(PYCACHE)}
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    # The last command's output (289 MB) may still be on its way to the disk: writing it back
    # would slow this command (the kernel throttles writers), so each one starts with none.
    os.sync()
    report = subprocess.run([sys.executable, "-S", "-I", "-c", LAUNCHER, *command], env=env,
                            capture_output=True, text=True)
    seconds, cpu_seconds, peak, status = report.stdout.split()
    if status != "0":
        sys.exit(f"failed: {' '.join(command)}\n{report.stderr}")
    return {"seconds": float(seconds), "cpu_seconds": float(cpu_seconds),
            "peak_mib": int(peak) * 1024 / MiB}  # Linux counts KiB


def sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as stream:
        while block := stream.read(MiB):
            digest.update(block)
    return digest.hexdigest()


def measure(args) -> dict:
    workdir = Path(args.workdir or tempfile.mkdtemp(prefix="bench-migrate-"))
    workdir.mkdir(parents=True, exist_ok=True)
    big, big_expected = generate(workdir, args.steps)
    small, small_expected = generate(workdir, args.steps // 4)
    # Each run writes a new file, removed after it is checked: no run replaces a file whose
    # pages another left in the cache.
    out = workdir / "out.jsonl"
    migrate = [sys.executable, "-m", "chatconv", "migrate"]
    commands = {
        "orjson loop": [sys.executable, "-c", ORJSON_LOOP, str(big), str(out)],
        "migrate --jobs 1": migrate + [str(big), "-o", str(out), "--jobs", "1"],
        "migrate --jobs 2": migrate + [str(big), "-o", str(out), "--jobs", "2"],
        "migrate --jobs 1, 1/4 size": migrate + [str(small), "-o", str(out), "--jobs", "1"],
    }
    runs: dict[str, list[dict]] = {name: [] for name in commands}
    for _ in range(args.repeat):
        for name, command in commands.items():
            runs[name].append(run(command))
            if name.startswith("migrate"):
                expected = small_expected if "1/4" in name else big_expected
                assert sha256(out) == expected, f"{name} wrote other bytes than the migration must give"
            out.unlink()
    best = {name: min(r, key=lambda r: r["seconds"]) for name, r in runs.items()}
    for name, result in best.items():
        lines = args.steps // 4 if "1/4" in name else args.steps
        result["lines_per_s"] = lines / result["seconds"]
        result["peak_mib"] = max(r["peak_mib"] for r in runs[name])
    return {"steps": args.steps, "file_mib": big.stat().st_size / MiB, "cores": os.cpu_count(),
            "python": sys.version.split()[0], "best": best}


def judge(figures: dict) -> list[tuple[str, str, bool]]:
    best = figures["best"]
    one, two = best["migrate --jobs 1"], best["migrate --jobs 2"]
    small = best["migrate --jobs 1, 1/4 size"]
    ratio = one["lines_per_s"] / best["orjson loop"]["lines_per_s"]
    cpu_ratio = best["orjson loop"]["cpu_seconds"] / one["cpu_seconds"]
    speedup = one["seconds"] / two["seconds"]
    flat = one["peak_mib"] <= small["peak_mib"] * FLAT_FACTOR + FLAT_SLACK_MIB
    return [
        (f"migrate rate / orjson round-trip rate = {ratio:.2f} (in CPU time: {cpu_ratio:.2f})",
         f">= {MIN_ORJSON_RATIO}", ratio >= MIN_ORJSON_RATIO),
        (f"peak memory {one['peak_mib']:.0f} MiB (--jobs 2: {two['peak_mib']:.0f} MiB)", f"<= {MAX_PEAK_MIB} MiB",
         max(one["peak_mib"], two["peak_mib"]) <= MAX_PEAK_MIB),
        (f"peak memory at 1/4 size {small['peak_mib']:.0f} MiB vs full {one['peak_mib']:.0f} MiB", "flat", flat),
        (f"--jobs 2 speed-up = {speedup:.2f}x", f">= {MIN_JOBS_SPEEDUP}x on 2 cores", speedup >= MIN_JOBS_SPEEDUP),
    ]


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--steps", type=int, default=200_000, help="lines of the legacy recording")
    parser.add_argument("--repeat", type=int, default=3, help="runs of each command; the best counts")
    parser.add_argument("--workdir", help="where to write the recordings (default: a new temporary folder)")
    args = parser.parse_args(argv)
    figures = measure(args)
    print(f"{figures['steps']} legacy steps, {figures['file_mib']:.0f} MiB; Python {figures['python']}, "
          f"{figures['cores']} cores, load average {os.getloadavg()[0]:.2f}; best of {args.repeat}")
    for name, result in figures["best"].items():
        print(f"  {name:28} {result['seconds']:6.2f} s  {result['lines_per_s']:>9,.0f} lines/s  "
              f"cpu {result['cpu_seconds']:6.2f} s  peak {result['peak_mib']:5.0f} MiB")
    for figure, wanted, passed in judge(figures):
        print(f"{'PASS' if passed else 'FAIL'}  {figure} (target {wanted})")


if __name__ == "__main__":
    main()
