#!/usr/bin/env python3
"""Measure `chatconv text`, `dataset` and `tools` on a large recording against an orjson parse +
dump loop over the same file, in one run, and `tools`' peak memory at 1x and 4x the file size.

Targets (issue 32): text and dataset >= 0.6 of the orjson loop's rate, tools >= 0.5, tools' peak
memory <= 150 MiB and flat (the 4x file's within 10% + 4 MiB of the 1x file's). Every figure is
a whole child process (start-up, reading and writing included; output to /dev/null), the best
of --repeat runs taken in turn. The recording is bench_validate's (steps of the real recordings
in tests/data/recorded, unique conversation and tool-call ids, so it has no problem), and the
launcher is bench_migrate's. The script marks each target PASS or FAIL and exits 0 whatever
the figures (it is not a test and is not run in CI).

    python benchmarks/bench_recordings.py                      # 200k steps, and 800k for memory
    python benchmarks/bench_recordings.py --steps 50000 --repeat 1
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from bench_migrate import FLAT_FACTOR, FLAT_SLACK_MIB, MAX_PEAK_MIB, run  # noqa: E402
from bench_validate import FIXTURES, recording  # noqa: E402

TARGETS = {"text": 0.6, "dataset": 0.6, "tools": 0.5}  # issue 32's bars (issue 12's were 0.5, 0.5, 0.4)
ORJSON_LOOP = """
import sys, orjson
out = sys.stdout.buffer
with open(sys.argv[1], "rb") as source:
    for line in source:
        out.write(orjson.dumps(orjson.loads(line)) + b"\\n")
"""


def best(command: list[str], repeat: int) -> dict:
    return min((run(command) for _ in range(repeat)), key=lambda result: result["seconds"])


def measure(args) -> dict:
    workdir = Path(args.workdir)
    workdir.mkdir(parents=True, exist_ok=True)
    path = recording(workdir, args.steps, args.line_bytes, Path(args.fixtures), args.regenerate)
    jobs = ["--jobs", str(args.jobs)] if args.jobs else []
    figures = {"steps": args.steps, "file_mib": path.stat().st_size / 2**20}
    commands = {"orjson": [sys.executable, "-c", ORJSON_LOOP, str(path)]}
    commands.update({name: [sys.executable, "-m", "chatconv", name, *jobs, str(path)] for name in TARGETS})
    results = {name: [] for name in commands}
    for _ in range(args.repeat):  # in turn, so that a busy moment weighs on all alike
        for name, command in commands.items():
            results[name].append(run(command))
    for name, runs in results.items():
        figures[name] = min(runs, key=lambda result: result["seconds"])
    if args.grow:
        big = recording(workdir, args.steps * args.grow, args.line_bytes, Path(args.fixtures), args.regenerate)
        figures["tools_big"] = best([sys.executable, "-m", "chatconv", "tools", *jobs, str(big)], 1)
    return figures


def judge(figures: dict) -> list[tuple[str, str, bool]]:
    base = figures["orjson"]["seconds"]
    verdicts = []
    for name, target in TARGETS.items():
        ratio = base / figures[name]["seconds"]
        verdicts.append((f"{name} rate / orjson parse+dump rate", f"{ratio:.2f} (target >= {target})", ratio >= target))
    small = figures["tools"]["peak_mib"]
    verdicts.append(("tools peak memory, 1x", f"{small:.0f} MiB (target <= {MAX_PEAK_MIB})", small <= MAX_PEAK_MIB))
    if "tools_big" in figures:
        big = figures["tools_big"]["peak_mib"]
        verdicts.append(("tools peak memory, big file", f"{big:.0f} MiB (target <= {MAX_PEAK_MIB}, and <= "
                         f"{small * FLAT_FACTOR + FLAT_SLACK_MIB:.0f}: flat)",
                         big <= MAX_PEAK_MIB and big <= small * FLAT_FACTOR + FLAT_SLACK_MIB))
    return verdicts


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--steps", type=int, default=200_000, help="steps (lines) in the file (default: %(default)s)")
    parser.add_argument("--grow", type=int, default=4, help="tools' memory is measured on a file this many times "
                                                            "larger too; 0 skips it (default: %(default)s)")
    parser.add_argument("--repeat", type=int, default=3, help="timed runs of each; the best is kept (default: %(default)s)")
    parser.add_argument("--line-bytes", type=int, default=1400, help="average line size (default: %(default)s)")
    parser.add_argument("--jobs", type=int, help="passed as --jobs (default: not passed, so each command picks: "
                                                 "one worker per core for files of 16 MiB or more)")
    parser.add_argument("--workdir", default=str(HERE / "data"), help="where generated files go (default: benchmarks/data)")
    parser.add_argument("--fixtures", default=str(FIXTURES), help="folder of real recorded *.jsonl (default: %(default)s)")
    parser.add_argument("--regenerate", action="store_true", help="write the generated files again even if they exist")
    args = parser.parse_args(argv)
    figures = measure(args)
    print(f"{figures['steps']:,} steps, {figures['file_mib']:.0f} MiB")
    for name in ("orjson", *TARGETS, "tools_big"):
        if name in figures:
            f = figures[name]
            print(f"  {name:10} {f['seconds']:7.2f} s wall {f['cpu_seconds']:7.2f} s CPU {f['peak_mib']:6.0f} MiB peak")
    for what, value, passed in judge(figures):
        print(f"{'PASS' if passed else 'FAIL'}  {what}: {value}")


if __name__ == "__main__":
    main()
