#!/usr/bin/env python3
"""How each command's time and memory grow with the input: 10k, 100k and 1M lines, locally and
on a local Dask cluster, in one run.

For each size, bench_validate's generator makes a recording of that many steps (from the real
recordings in tests/data/recorded, most steps with a tool call), and its openai-chat export is
made once for `import`. Each command is then timed as a whole process (best of --repeat), with
its peak memory (the sum of its processes' PSS, sampled every 50 ms: with local workers, theirs
too; on the cluster, the client's), locally (its
default workers: one per core for files of 16 MiB or more) and with `--scheduler` on a
local cluster of --workers processes on this machine (`dask scheduler`, `dask worker`). The outputs of the two runs
must be the same bytes (a run that differs stops the script). It prints a Markdown table: the
performance page of the docs shows it. There is no target: the figures say how each grows (flat
memory, time in proportion to the lines).

    python benchmarks/bench_scaling.py                           # 10k, 100k, 1M (some 20 min here)
    python benchmarks/bench_scaling.py --sizes 10000 100000 --repeat 1
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from bench_validate import FIXTURES, best_of, child_env, recording, run  # noqa: E402

# (name, arguments after `chatconv`, with {steps} and {bodies} for the files); each writes to
# standard output or -o {out}, of which a digest is compared.
COMMANDS = [
    ("validate", ["validate", "{steps}", "--format", "json"]),
    ("migrate", ["migrate", "{steps}", "-o", "{out}"]),
    ("import", ["import", "{bodies}", "-o", "{out}"]),
    ("export", ["export", "{steps}", "--to", "openai-chat", "-o", "{out}"]),
    ("text", ["text", "{steps}"]),
    ("tools", ["tools", "{steps}"]),
    ("dataset", ["dataset", "{steps}"]),
]


def _digest(result: dict, out: Path) -> str:
    data = out.read_bytes() if out.exists() else result["stdout"].encode()
    return hashlib.sha256(data).hexdigest()[:12]


def _timed(arguments: list[str], files: dict, repeat: int, workdir: Path) -> tuple[dict, str]:
    out = workdir / "out.jsonl"
    runs, digest = [], None
    for _ in range(repeat):
        out.unlink(missing_ok=True)
        command = [sys.executable, "-m", "chatconv", *(a.format(out=out, **files) for a in arguments)]
        result = run(command)
        if result["exit"] not in (0, 1):
            raise SystemExit(f"{' '.join(command)} exited {result['exit']}: {result['stderr'][-2000:]}")
        digest = _digest(result, out)
        runs.append(result)
    out.unlink(missing_ok=True)
    return best_of(runs), digest


@contextmanager
def local_cluster(workdir: Path, workers: int) -> Iterator[str]:
    """A scheduler and `workers` worker processes (`dask scheduler`, `dask worker`), started as
    processes of their own: this process stays small, and its children's peak memory with it
    (Linux starts a child's peak at its parent's). Yields the scheduler's address."""
    address_file = workdir / "scheduler.json"
    address_file.unlink(missing_ok=True)
    started = [subprocess.Popen([sys.executable, "-m", "dask", *command], env=child_env(), cwd=workdir,
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
               for command in (["scheduler", "--host", "127.0.0.1", "--port", "0", "--no-dashboard",
                                "--scheduler-file", str(address_file)],)]
    try:
        while not address_file.exists() or not address_file.read_text().strip():
            time.sleep(0.1)
        address = json.loads(address_file.read_text())["address"]
        started.append(subprocess.Popen([sys.executable, "-m", "dask", "worker", address, "--nworkers", str(workers),
                                         "--nthreads", "1", "--no-dashboard"], env=child_env(), cwd=workdir,
                                        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                        start_new_session=True))
        # (asked by a process of its own: Dask's client would grow this one)
        subprocess.run([sys.executable, "-c", "import sys; from distributed import Client; "
                        "Client(sys.argv[1]).wait_for_workers(int(sys.argv[2]), timeout=120)", address, str(workers)],
                       check=True, env=child_env(), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        yield address
    finally:
        for process in reversed(started):
            os.killpg(process.pid, signal.SIGTERM)
            process.wait()


def measure(args) -> list[dict]:
    workdir = Path(args.workdir or tempfile.mkdtemp(prefix="bench-scaling-"))
    workdir.mkdir(parents=True, exist_ok=True)
    rows = []
    with local_cluster(workdir, args.workers) as scheduler:
        for size in args.sizes:
            steps = recording(workdir, size, args.line_bytes, Path(args.fixtures), False)
            bodies = workdir / f"bodies-{size}.jsonl"
            if not bodies.exists():
                made = run([sys.executable, "-m", "chatconv", "export", str(steps), "--to", "openai-chat",
                            "--per", "conversation", "-o", str(bodies)])
                assert made["exit"] in (0, 1), made["stderr"][-2000:]
            files = {"steps": str(steps), "bodies": str(bodies)}
            for name, arguments in COMMANDS:
                if args.commands and name not in args.commands:
                    continue
                local, local_digest = _timed(arguments, files, args.repeat, workdir)
                remote, remote_digest = _timed([*arguments, "--scheduler", scheduler], files,
                                               args.repeat, workdir)
                if local_digest != remote_digest:
                    raise SystemExit(f"{name} at {size:,} lines: the cluster's output differs from the local one")
                # Memory: the processes' own (PSS, sampled), not ru_maxrss, which starts at this
                # process's size (a child's peak begins at its parent's).
                rows.append({"command": name, "lines": size, "local_s": local["seconds"],
                             "local_mib": local["tree_mib"], "cluster_s": remote["seconds"],
                             "client_mib": remote["tree_mib"]})
                print(_row(rows[-1]), file=sys.stderr, flush=True)
    return rows


def _row(row: dict) -> str:
    return (f"| {row['command']} | {row['lines']:,} | {row['local_s']:.2f} | {row['local_mib']:.0f} | "
            f"{row['cluster_s']:.2f} | {row['client_mib']:.0f} |")


def print_table(rows: list[dict]) -> None:
    print("| command | lines | local s | local MiB | cluster s | client MiB |")
    print("|---|---:|---:|---:|---:|---:|")
    for row in sorted(rows, key=lambda r: ([c for c, _ in COMMANDS].index(r["command"]), r["lines"])):
        print(_row(row))


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000, 1_000_000],
                        help="lines (steps) of each file (default: %(default)s)")
    parser.add_argument("--commands", nargs="+", choices=[name for name, _ in COMMANDS],
                        help="only these commands (default: all)")
    parser.add_argument("--repeat", type=int, default=1, help="timed runs of each; the best is kept (default: 1)")
    parser.add_argument("--workers", type=int, default=2, help="the local cluster's worker processes (default: 2)")
    parser.add_argument("--line-bytes", type=int, default=1400, help="average line size (default: %(default)s)")
    parser.add_argument("--workdir", help="where generated files go (default: a temporary folder)")
    parser.add_argument("--fixtures", default=str(FIXTURES), help="real recordings to generate from")
    print_table(measure(parser.parse_args(argv)))


if __name__ == "__main__":
    main()
