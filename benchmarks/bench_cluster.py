#!/usr/bin/env python3
"""Measure `chatconv validate --scheduler` on a local Dask cluster against a local run, on the
same folder, in one run.

DESIGN.md, "Speed and memory": beyond one machine, the same per-batch work runs on a Dask
cluster. This script starts a distributed.LocalCluster (--workers processes, one thread each)
on this machine, makes a folder of --files JSONL recordings (bench_validate's generator, from
tests/data/recorded), and times, best of --repeat, whole processes:
  - `chatconv validate FOLDER` (local worker processes, one per core);
  - `chatconv validate FOLDER --scheduler ADDRESS`.
It checks that both print the same thing, and prints the figures. On one machine the cluster
shares the cores with the client and adds a network hop per batch, so it is not expected to be
faster here: the figure says what the hop costs. There is no target; the script exits 0.

    python benchmarks/bench_cluster.py                       # 4 files of 50k steps
    python benchmarks/bench_cluster.py --steps 10000 --repeat 1
"""

from __future__ import annotations

import argparse
import shlex
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from bench_validate import CHECKOUT, FIXTURES, default_command, recording, run  # noqa: E402


def measure(args) -> dict:
    from distributed import LocalCluster

    # The cluster's workers import chatconv from this checkout too, as the children do (child_env):
    # spawned processes take this process's sys.path.
    sys.path.insert(0, str(CHECKOUT))

    workdir = Path(args.workdir or tempfile.mkdtemp(prefix="bench-cluster-"))
    folder = workdir / "folder"
    folder.mkdir(parents=True, exist_ok=True)
    source = recording(workdir, args.steps, args.line_bytes, Path(args.fixtures), regenerate=False)
    for index in range(args.files):
        target = folder / f"run-{index}.jsonl"
        if not target.exists():
            target.hardlink_to(source)
    lines = args.steps * args.files
    command = shlex.split(args.command) + ["validate", str(folder)]
    with LocalCluster(n_workers=args.workers, threads_per_worker=1, processes=True,
                      dashboard_address=None) as cluster:
        commands = {"local": command, "cluster": command + ["--scheduler", cluster.scheduler_address]}
        runs = {name: [run(argv) for _ in range(args.repeat)] for name, argv in commands.items()}
    best = {name: min(results, key=lambda r: r["seconds"]) for name, results in runs.items()}
    if best["local"]["stdout"] != best["cluster"]["stdout"]:
        sys.exit(f"the cluster printed something else:\n{best['cluster']['stdout']}\n{best['cluster']['stderr']}\n"
                 f"local:\n{best['local']['stdout']}")
    return {"lines": lines, "files": args.files, "workers": args.workers,
            "runs": {name: {"seconds": r["seconds"], "lines_per_s": lines / r["seconds"], "peak_mib": r["peak_mib"]}
                     for name, r in best.items()},
            "summary": best["local"]["stdout"].splitlines()[-1]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--steps", type=int, default=50_000, help="steps in each file (default: %(default)s)")
    parser.add_argument("--files", type=int, default=4, help="files in the folder (default: %(default)s)")
    parser.add_argument("--workers", type=int, default=2, help="the local cluster's worker processes")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--line-bytes", type=int, default=1400, help="average generated line size")
    parser.add_argument("--command", default=default_command(), help="how to run chatconv")
    parser.add_argument("--workdir", help="where generated files go (default: a new temporary folder)")
    parser.add_argument("--fixtures", default=str(FIXTURES))
    args = parser.parse_args()
    figures = measure(args)
    print(f"{figures['files']} files, {figures['lines']:,} lines; {figures['summary']}")
    for name, r in figures["runs"].items():
        print(f"  {name:8} {r['seconds']:7.2f} s  {r['lines_per_s']:>9,.0f} lines/s  peak {r['peak_mib']:.0f} MiB "
              "(the client's)")
    local, cluster = figures["runs"]["local"]["seconds"], figures["runs"]["cluster"]["seconds"]
    print(f"  cluster / local time: {cluster / local:.2f}")


if __name__ == "__main__":
    main()
