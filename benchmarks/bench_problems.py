#!/usr/bin/env python3
"""Measure `chatconv validate` on recordings full of problems against an orjson parse loop, in one run.

DESIGN.md, "Speed and memory": a recording where every line has a warning, or one line in ten
an error, validates at >= 0.35 of the rate of a bare orjson parse loop over the same file (a
problem costs little more than a clean line; issue 32 asks >= 0.5 of the file of warnings); the
clean file validates at >= 0.7 of it
(as bench_validate.py also judges, on its own file).

The three files are made from one recording that bench_validate.py generates from
tests/data/recorded (unique conversation and tool-call ids, so that it has no problem):
  - clean: that recording;
  - legacy: every step's `output` one message object instead of an array, as recorders wrote
    before output became an array (its messages' parts gathered in one assistant message, so
    each tool call keeps its result): every line gets migration 0001's legacy-shape warning;
  - errors: one step in ten has `input.role` "human" (an error that names the fix).
Each measurement is a whole child process (start-up included) that prints every problem to a
pipe read by this script, the best of --repeat runs taken in turn. The script prints PASS or
FAIL for each target and exits 0 (it is not run in CI).

    python benchmarks/bench_problems.py                       # 200k steps, best of 3
    python benchmarks/bench_problems.py --steps 50000 --repeat 1
"""

from __future__ import annotations

import argparse
import shlex
import sys
from pathlib import Path

import orjson

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from bench_validate import (ORJSON_LOOP, add_run_arguments, best_of, count_lines, memory_mib,  # noqa: E402
                            recording, run, run_benchmark)

MIN_ORJSON_RATIO = 0.35  # one line in ten an error
MIN_CLEAN_RATIO = 0.7  # issue 32 (DESIGN.md said 0.6)
MIN_LEGACY_RATIO = 0.5  # issue 32: a warning on every line
ERROR_EVERY = 10


def one_message(output: list[dict]) -> dict:
    """A step's output messages as the one message a legacy recorder wrote: the first message
    alone, or every message's parts gathered in one assistant message (a tool result stays
    after its call, in the same step)."""
    if len(output) == 1:
        return output[0]
    parts = []
    for message in output:
        content = message.get("content")
        parts += [{"type": "text", "text": content}] if isinstance(content, str) else content or []
    return {"role": "assistant", "content": parts}


def derive(clean: Path, name: str, change) -> Path:
    """A copy of the clean recording with `change(step, number)` applied to each step."""
    path = clean.with_name(f"{clean.stem}-{name}.jsonl")
    if path.exists() and path.stat().st_mtime >= clean.stat().st_mtime:
        return path
    partial = path.with_suffix(".partial")
    with open(clean, "rb") as source, open(partial, "wb") as out:
        for number, line in enumerate(source):
            out.write(orjson.dumps(change(orjson.loads(line), number)) + b"\n")
    partial.rename(path)
    return path


def legacy(step: dict, number: int) -> dict:
    step["output"] = one_message(step["output"])
    return step


def with_errors(step: dict, number: int) -> dict:
    if number % ERROR_EVERY == ERROR_EVERY - 1:
        step["input"]["role"] = "human"
    return step


def measure(args) -> dict:
    workdir = Path(args.workdir)
    workdir.mkdir(parents=True, exist_ok=True)
    clean = recording(workdir, args.steps, args.line_bytes, Path(args.fixtures), args.regenerate)
    files = {"clean": clean, "legacy": derive(clean, "legacy", legacy), "errors": derive(clean, "errors", with_errors)}
    validate = [*shlex.split(args.command), "validate", *(["--jobs", str(args.jobs)] if args.jobs else [])]
    runs = {(name, what): [] for name in files for what in ("orjson", "validate")}
    for _ in range(args.repeat):  # rounds of them all, so that drift in the machine hits all alike
        for name, path in files.items():
            runs[name, "orjson"].append(run([sys.executable, "-c", ORJSON_LOOP, str(path)]))
            runs[name, "validate"].append(run([*validate, str(path)]))
    figures = {"steps": args.steps, "repeat": args.repeat, "command": validate, "files": {}}
    for name, path in files.items():
        lines = count_lines(path)
        orjson_run, validate_run = best_of(runs[name, "orjson"]), best_of(runs[name, "validate"])
        if orjson_run["exit"] != 0 or validate_run["exit"] not in (0, 1):
            sys.exit(f"{name}: a run failed:\n{orjson_run['stderr'][-2000:]}\n{validate_run['stderr'][-2000:]}")
        summary = [line for line in validate_run["stdout"].splitlines() if not line.startswith(("/", " "))]
        figures["files"][name] = {
            "file": str(path), "lines": lines, "bytes": path.stat().st_size,
            "summary": summary[-1] if summary else validate_run["stderr"][-500:],
            "counts": [line.strip() for line in validate_run["stdout"].splitlines() if line.startswith("  ")],
            "orjson_s": round(orjson_run["seconds"], 3), "validate_s": round(validate_run["seconds"], 3),
            "validate_cpu_s": round(validate_run["cpu_seconds"], 3), "memory_mib": round(memory_mib(validate_run), 1),
            "ratio": round(orjson_run["seconds"] / validate_run["seconds"], 3),
        }
    return figures


ROWS = {"clean": "validate on a clean file",
        "legacy": "validate on a legacy file (every line a warning)",
        "errors": f"validate on a file where 1 line in {ERROR_EVERY} has an error"}


def print_table(f: dict) -> None:
    print(f"command: {shlex.join(f['command'])}; best of {f['repeat']} run(s), whole processes\n")
    for name, row in f["files"].items():
        print(f"{name}: {row['file']} ({row['lines']:,} lines, {row['bytes'] / 2**20:,.1f} MiB)")
        print(f"  chatconv validate says: {row['summary']}")
        for line in row["counts"]:
            print(f"    {line}")
    print(f"\n{'row':52} {'orjson s':>9} {'validate s':>11} {'CPU s':>7} {'peak':>10} {'ratio':>6}  target")
    for name, row in f["files"].items():
        least = {"clean": MIN_CLEAN_RATIO, "legacy": MIN_LEGACY_RATIO}.get(name, MIN_ORJSON_RATIO)
        target = f">= {least}  {'PASS' if row['ratio'] >= least else 'FAIL'}"
        print(f"{ROWS[name]:52} {row['orjson_s']:>9.2f} {row['validate_s']:>11.2f} {row['validate_cpu_s']:>7.2f} "
              f"{row['memory_mib']:>6.1f} MiB {row['ratio']:>6.2f}  {target}")
    print("  (ratio: the orjson loop's time over validate's, on the same file: validate's rate as a share of the"
          " loop's;\n   CPU s: of validate and its workers; peak: its memory, the larger of peak RSS and tree PSS)")


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_run_arguments(parser, "steps (lines) in each file")
    return parser.parse_args(argv)


def main(argv=None) -> None:
    run_benchmark(parse_args, measure, print_table, argv)


if __name__ == "__main__":
    main()
