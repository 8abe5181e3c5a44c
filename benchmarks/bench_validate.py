#!/usr/bin/env python3
"""Measure `chatconv validate` on a large recording against two baselines, in one run.

DESIGN.md, "Speed and memory": validating a clean recording should run at >= 60% of the rate
of a bare orjson parse of the same file, at >= 200x the rate of a per-record jsonschema loop,
and with a peak memory that is flat in the file size (<= 150 MiB).

Everything runs as whole child processes (start-up and imports included), on the same
generated file, so the figures are what a user sees. The script reports and marks each target
PASS or FAIL; it exits 0 whatever the figures are (it is not a test and is not run in CI).

    python benchmarks/bench_validate.py                 # 200k steps, and a 2M-step file
    python benchmarks/bench_validate.py --steps 20000 --repeat 1 --json
"""

from __future__ import annotations

import argparse
import datetime
import glob
import os
import shlex
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import orjson

HERE = Path(__file__).resolve().parent
CHECKOUT = HERE.parent
FIXTURES = CHECKOUT / "tests" / "data" / "recorded"  # copies of the real recordings, in the checkout
STEPS_PER_CONVERSATION = 10
JSONSCHEMA_LINES = 2_000  # the jsonschema loop runs ~1k lines/s: compare rates, not times
MiB = 1024 * 1024

# Targets from DESIGN.md; "flat" means the big file's peak is within 10% + 4 MiB of the small one's.
MIN_ORJSON_RATIO = 0.7  # a clean recording (issue 32; DESIGN.md said 0.6)
MIN_JSONSCHEMA_RATIO = 200
MAX_PEAK_MIB = 150
FLAT_FACTOR, FLAT_SLACK_MIB = 1.10, 4

ORJSON_LOOP = """
import sys, orjson
with open(sys.argv[1], "rb") as stream:
    for line in stream:
        orjson.loads(line)
"""

# The slow path chatconv uses only to explain failures, run on every record: the loop a user
# would write without chatconv. The validator is built before the loop, as chatconv builds its.
JSONSCHEMA_LOOP = """
import itertools, json, sys, time
from chatconv.schemas import explaining_validator
validator = explaining_validator("step-record")
start = time.perf_counter()
with open(sys.argv[1], "rb") as stream:
    valid = sum(validator.is_valid(json.loads(line)) for line in itertools.islice(stream, int(sys.argv[2])))
print(valid, time.perf_counter() - start)
"""

# Not judged: the least any validation with this stack can cost. One forked process per core
# parses its share of the file and runs the fast schema check on each line, and nothing else:
# no cross-line checks, no ordered output, no command-line start-up. Its rate bounds what
# `chatconv validate` can reach on this machine.
FLOOR_LOOP = """
import os, sys, orjson
from chatconv.schemas import fast_validator
is_valid, path = fast_validator("step-record").is_valid, sys.argv[1]
size, cores = os.path.getsize(path), len(os.sched_getaffinity(0))
with open(path, "rb") as stream:
    cuts = [0]
    for k in range(1, cores):
        stream.seek(size * k // cores)
        stream.readline()
        cuts.append(stream.tell())
cuts.append(size)
children = []
for start, end in zip(cuts, cuts[1:]):
    child = os.fork()
    if child == 0:
        valid = True
        with open(path, "rb") as stream:  # 1 MiB of whole lines at a time, as validate reads
            stream.seek(start)
            while start < end:
                lines = stream.read(min(1 << 20, end - start))
                lines += b"" if lines.endswith(b"\\n") else stream.readline()
                start += len(lines)
                for line in lines.splitlines():
                    valid = is_valid(orjson.loads(line)) and valid
        os._exit(0 if valid else 1)
    children.append(child)
sys.exit(max(os.waitstatus_to_exitcode(os.waitpid(child, 0)[1]) for child in children))
"""


# ---------------------------------------------------------------------------------------------
# Generating the recording


def load_fixture_steps(folder: Path) -> list[dict]:
    """Every real step: step-record lines as they are, and the steps inside conversation lines."""
    steps = []
    for path in sorted(glob.glob(str(folder / "*.jsonl"))):
        with open(path, "rb") as stream:
            for line in stream:
                if line.strip():
                    record = orjson.loads(line)
                    steps.extend(record["steps"] if "steps" in record else [record])
    if not steps:
        sys.exit(f"no recorded steps found in {folder}")
    return steps


def _cut(value, items: int, chars: int):
    """`value` with every list cut to `items` entries and every string to `chars` characters."""
    if isinstance(value, str):
        return value[:chars]
    if isinstance(value, list):
        return [_cut(v, items, chars) for v in value[:items]]
    if isinstance(value, dict):
        return {k: _cut(v, items, chars) for k, v in value.items()}
    return value


def shrink_step(step: dict, items: int, chars: int) -> dict:
    """A smaller copy of a step that is still a valid step: texts, tool outputs and metadata are
    cut; messages, parts, tool calls and ids are left whole so tool-call pairing still holds."""
    step = orjson.loads(orjson.dumps(step))
    step["metadata"] = _cut(step.get("metadata", {}), items, chars)
    for message in [step["input"], *step["output"]]:
        content = message.get("content")
        if isinstance(content, str):
            message["content"] = content[:chars]
            continue
        for part in content or []:
            if part.get("type") == "text":
                part["text"] = part["text"][:chars]
            elif part.get("type") == "tool-result":
                part["output"] = _cut(part["output"], items, chars)
    return step


def step_template(step: dict) -> bytes:
    """The step as one JSON line with placeholders for what must be unique per generated step.

    Filling placeholders in bytes, rather than building and dumping a dict per step, keeps the
    2M-step file to about half a minute of generation.
    Each original toolCallId gets one placeholder, so a call and its result stay paired.
    """
    step = dict(step, conversationId="@CONV@", stepIndex="@STEP@", timestamp="@TIME@")
    text = orjson.dumps(step)
    call_ids = []
    for message in [step["input"], *step["output"]]:
        for part in message.get("content") if isinstance(message.get("content"), list) else []:
            if "toolCallId" in part and part["toolCallId"] not in call_ids:
                call_ids.append(part["toolCallId"])
    for number, call_id in enumerate(call_ids):
        text = text.replace(orjson.dumps(call_id), b'"@CALL%d@"' % number)
    return text.replace(b'"@STEP@"', b"@STEP@") + b"\n"


# (items, chars) of each variant: the real step, and two cut-down copies of it.
VARIANTS = [(10**9, 10**9), (2, 400), (1, 120)]


def generate(path: Path, steps: int, line_bytes: int, fixtures: Path) -> None:
    """Write `steps` valid step records, ~`line_bytes` per line on average.

    The variants of the real steps are cycled; while the running average line is above
    `line_bytes`, variants larger than that are skipped, so the mix settles on the target size.
    Conversations are 10 consecutive steps (stepIndex 0..9) with their own conversationId;
    every tool call id is unique in the file; timestamps increase by one second per step.
    """
    templates = [step_template(shrink_step(step, items, chars))
                 for step in load_fixture_steps(fixtures) for items, chars in VARIANTS]
    start_time = datetime.datetime(2025, 1, 1, tzinfo=datetime.timezone.utc)
    partial = path.with_suffix(".partial")
    written = cursor = 0
    with open(partial, "wb") as out:
        for number in range(steps):
            template = templates[cursor % len(templates)]
            cursor += 1
            for _ in templates:  # at most one lap, should no variant be small enough
                if written <= line_bytes * number or len(template) <= line_bytes:
                    break
                template = templates[cursor % len(templates)]
                cursor += 1
            conversation, step_index = divmod(number, STEPS_PER_CONVERSATION)
            stamp = (start_time + datetime.timedelta(seconds=number)).strftime("%Y-%m-%dT%H:%M:%S.000Z")
            line = (template.replace(b"@CONV@", b"bench-%08d" % conversation)
                    .replace(b"@STEP@", b"%d" % step_index)
                    .replace(b"@TIME@", stamp.encode()))
            call_number = 0
            while b"@CALL%d@" % call_number in line:
                line = line.replace(b"@CALL%d@" % call_number, b"call-%d-%d" % (number, call_number))
                call_number += 1
            out.write(line)
            written += len(line)
    partial.rename(path)  # a generation cut short is never mistaken for a finished file


def recording(workdir: Path, steps: int, line_bytes: int, fixtures: Path, regenerate: bool) -> Path:
    """The generated file for this size, made once and reused by later runs."""
    path = workdir / f"steps-{steps}-{line_bytes}b.jsonl"
    if regenerate or not path.exists():
        print(f"generating {path} ({steps:,} steps) ...", file=sys.stderr, flush=True)
        started = time.perf_counter()
        generate(path, steps, line_bytes, fixtures)
        print(f"  done in {time.perf_counter() - started:.1f} s", file=sys.stderr, flush=True)
    return path


# ---------------------------------------------------------------------------------------------
# Running and measuring child processes


def child_env() -> dict:
    # Children import chatconv from this checkout first, so the checkout is what is measured.
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(CHECKOUT), env.get("PYTHONPATH")) if p)
    return env


def run(command: list[str]) -> dict:
    """Run a command to completion: its wall time, CPU time, exit code, output and memory.

    os.wait4 returns the resource usage of that one child and of the workers it waited for:
    ru_maxrss is the peak of its largest process (RUSAGE_CHILDREN would be the maximum over
    every child so far), the CPU time is theirs together. With worker processes the largest
    one understates what the run takes, so the memory of the whole process tree is sampled too.
    """
    # The output goes to files, of which the end is read: a run that prints a problem per line
    # prints tens of MB, and this process, grown to hold them, would pass its peak on to the next
    # child (Linux carries a process's peak RSS over fork and exec into ru_maxrss).
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        started = time.perf_counter()
        child = subprocess.Popen(command, stdout=out, stderr=err, env=child_env())
        tree = TreeMemory(child.pid)
        _, status, usage = os.wait4(child.pid, 0)
        seconds = time.perf_counter() - started
        stdout, stderr = _tail(out), _tail(err)
    tree.stop()
    child.returncode = os.waitstatus_to_exitcode(status)  # tell Popen the child is reaped
    peak = usage.ru_maxrss * (1 if sys.platform == "darwin" else 1024)  # Linux counts KiB
    return {"seconds": seconds, "cpu_seconds": usage.ru_utime + usage.ru_stime, "exit": child.returncode,
            "peak_mib": peak / MiB, "tree_mib": tree.peak_kib * 1024 / MiB,
            "stdout": stdout.decode(errors="replace").strip(),
            "stderr": stderr.decode(errors="replace").strip()}


def _tail(stream, size: int = 1 << 20) -> bytes:
    """The last `size` bytes written to `stream` (the summary and counts end the output)."""
    end = stream.seek(0, os.SEEK_END)
    stream.seek(max(0, end - size))
    return stream.read()


class TreeMemory:
    """The peak, over samples every 50 ms, of the memory of a process and its descendants (the
    sum of their PSS, which counts pages shared after fork once); 0 where /proc cannot tell."""

    def __init__(self, pid: int):
        self.pid = pid
        self.peak_kib = 0
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._done.set()
        self._thread.join()

    def _sample(self) -> None:
        while not self._done.wait(0.05):
            self.peak_kib = max(self.peak_kib, sum(map(_pss_kib, _descendants(self.pid))))


def _descendants(pid: int) -> list[int]:
    found, stack = [], [pid]
    while stack:
        pid = stack.pop()
        found.append(pid)
        try:
            for task in os.listdir(f"/proc/{pid}/task"):
                with open(f"/proc/{pid}/task/{task}/children") as children:
                    stack += map(int, children.read().split())
        except OSError:  # gone already, or no /proc
            pass
    return found


def _pss_kib(pid: int) -> int:
    try:
        with open(f"/proc/{pid}/smaps_rollup") as rollup:
            return next((int(line.split()[1]) for line in rollup if line.startswith("Pss:")), 0)
    except OSError:
        return 0


def memory_mib(result: dict) -> float:
    """What a run takes: its largest process, or its whole tree when that is more."""
    return max(result["peak_mib"], result["tree_mib"])


def best_of(runs: list[dict]) -> dict:
    best = min(runs, key=lambda r: r["seconds"])
    return dict(best, peak_mib=max(r["peak_mib"] for r in runs), tree_mib=max(r["tree_mib"] for r in runs))


def count_lines(path: Path) -> int:
    with open(path, "rb") as stream:
        return sum(chunk.count(b"\n") for chunk in iter(lambda: stream.read(1 << 20), b""))


def default_command() -> str:
    found = shutil.which("chatconv")
    if found:
        return shlex.quote(found)
    return shlex.join([sys.executable, "-c", "from chatconv.cli import main; main()"])


def check_valid(command: list[str], path: Path) -> dict:
    """Validate the generated file once (this also warms the page cache for the timed runs)."""
    result = run([*command, str(path)])
    summary = result["stdout"].splitlines()[-1] if result["stdout"] else result["stderr"]
    print(f"chatconv validate {path.name}: {summary}", file=sys.stderr, flush=True)
    if result["exit"] != 0 or " 0 errors" not in summary:
        # Not a verdict on chatconv: invalid data would send every record down the slow path
        # and measure the wrong thing, so there is nothing worth timing.
        print(f"the generated file is not valid (exit {result['exit']}): fix the generator\n"
              f"{result['stdout'][-2000:]}\n{result['stderr'][-2000:]}", file=sys.stderr)
        sys.exit(1)
    return dict(result, summary=summary)


# ---------------------------------------------------------------------------------------------
# The benchmark


def measure(args) -> dict:
    command = [*shlex.split(args.command), "validate", *(["--jobs", str(args.jobs)] if args.jobs else [])]
    one_process = [*shlex.split(args.command), "validate", "--jobs", "1"]
    workdir = Path(args.workdir)
    workdir.mkdir(parents=True, exist_ok=True)
    fixtures = Path(args.fixtures)
    small = recording(workdir, args.steps, args.line_bytes, fixtures, args.regenerate)
    lines = count_lines(small)
    size = small.stat().st_size
    jsonschema_lines = min(JSONSCHEMA_LINES, lines)
    summary = check_valid(command, small)["summary"]

    # Rounds of them all, rather than blocks, so drift in the machine hits all alike.
    timed = {"orjson": [], "validate": [], "validate_one_process": [], "jsonschema": [], "floor": []}
    for _ in range(args.repeat):
        timed["orjson"].append(run([sys.executable, "-c", ORJSON_LOOP, str(small)]))
        timed["floor"].append(run([sys.executable, "-c", FLOOR_LOOP, str(small)]))
        timed["validate"].append(run([*command, str(small)]))
        timed["validate_one_process"].append(run([*one_process, str(small)]))
        timed["jsonschema"].append(run([sys.executable, "-c", JSONSCHEMA_LOOP, str(small), str(jsonschema_lines)]))
    for name, runs in timed.items():
        failed = [r for r in runs if r["exit"] != 0]
        if failed:
            sys.exit(f"{name} run failed (exit {failed[0]['exit']}):\n{failed[0]['stderr'][-2000:]}")
    best = {name: best_of(runs) for name, runs in timed.items()}
    valid_count, loop_seconds = best["jsonschema"]["stdout"].split()
    figures = {
        "file": str(small), "lines": lines, "bytes": size, "avg_line_bytes": round(size / lines),
        "command": command, "repeat": args.repeat, "summary": summary,
        "orjson": _rate(best["orjson"], lines),
        "validate": _rate(best["validate"], lines),
        "validate_one_process": _rate(best["validate_one_process"], lines),
        "floor": _rate(best["floor"], lines),
        "jsonschema": dict(_rate(best["jsonschema"], jsonschema_lines), valid_records=int(valid_count),
                           loop_only_lines_per_s=round(jsonschema_lines / float(loop_seconds))),
    }

    big_steps = args.big_steps if args.big_steps is not None else args.steps * args.grow
    if big_steps:
        big = recording(workdir, big_steps, args.line_bytes, fixtures, args.regenerate)
        big_lines = count_lines(big)
        # A fresh child for the peak of the big file; its time is reported too (one run only).
        big_run = check_valid(command, big)
        figures["validate_big"] = dict(_rate(big_run, big_lines), file=str(big), bytes=big.stat().st_size,
                                       summary=big_run["summary"])
    figures["targets"] = judge(figures)
    return figures


def _rate(result: dict, lines: int) -> dict:
    return {"lines": lines, "seconds": round(result["seconds"], 3), "cpu_seconds": round(result["cpu_seconds"], 3),
            "lines_per_s": round(lines / result["seconds"]), "peak_mib": round(result["peak_mib"], 1),
            "tree_mib": round(result["tree_mib"], 1), "memory_mib": round(memory_mib(result), 1)}


def judge(f: dict) -> list[dict]:
    validate_rate = f["validate"]["lines_per_s"]
    targets = [
        _target("validate rate / orjson rate", validate_rate / f["orjson"]["lines_per_s"],
                f">= {MIN_ORJSON_RATIO}", validate_rate >= MIN_ORJSON_RATIO * f["orjson"]["lines_per_s"]),
        _target("validate rate / jsonschema-loop rate", validate_rate / f["jsonschema"]["lines_per_s"],
                f">= {MIN_JSONSCHEMA_RATIO}", validate_rate >= MIN_JSONSCHEMA_RATIO * f["jsonschema"]["lines_per_s"]),
        _target("validate peak memory, 1x file (MiB)", f["validate"]["memory_mib"], f"<= {MAX_PEAK_MIB}",
                f["validate"]["memory_mib"] <= MAX_PEAK_MIB),
    ]
    if "validate_big" in f:
        small, big = f["validate"]["memory_mib"], f["validate_big"]["memory_mib"]
        grow = f["validate_big"]["lines"] / f["lines"]
        targets += [
            _target(f"validate peak memory, {grow:g}x file (MiB)", big, f"<= {MAX_PEAK_MIB}", big <= MAX_PEAK_MIB),
            _target(f"peak memory flat: {grow:g}x file vs 1x (MiB)", big - small,
                    f"<= {FLAT_FACTOR - 1:.0%} + {FLAT_SLACK_MIB} MiB",
                    big <= small * FLAT_FACTOR + FLAT_SLACK_MIB),
        ]
    return targets


def _target(name: str, value: float, wanted: str, passed: bool) -> dict:
    return {"name": name, "value": round(value, 2), "target": wanted, "result": "PASS" if passed else "FAIL"}


def print_table(f: dict) -> None:
    print(f"\nfile: {f['file']}\n      {f['lines']:,} lines, {f['bytes'] / MiB:,.1f} MiB, "
          f"{f['avg_line_bytes']} bytes per line on average; best of {f['repeat']} run(s), "
          f"whole processes")
    print(f"command: {shlex.join(f['command'])}")
    print(f"chatconv validate says: {f['summary']}")
    if "validate_big" in f:
        print(f"  and on the big file ({f['validate_big']['bytes'] / MiB:,.0f} MiB): {f['validate_big']['summary']}")
    print()
    rows = [("orjson parse loop", f["orjson"]), ("chatconv validate", f["validate"]),
            ("chatconv validate --jobs 1", f["validate_one_process"]),
            ("floor: parse + is_valid, per core", f["floor"]),
            (f"jsonschema loop (first {f['jsonschema']['lines']:,})", f["jsonschema"])]
    if "validate_big" in f:
        rows.append(("chatconv validate, big file", f["validate_big"]))
    print(f"{'measure':34} {'lines':>11} {'seconds':>9} {'CPU s':>7} {'lines/s':>11} {'peak RSS':>12} "
          f"{'tree PSS':>12}")
    for name, row in rows:
        print(f"{name:34} {row['lines']:>11,} {row['seconds']:>9.2f} {row['cpu_seconds']:>7.2f} "
              f"{row['lines_per_s']:>11,} {row['peak_mib']:>8.1f} MiB {row['tree_mib']:>8.1f} MiB")
    print("  (CPU s: of the process and its workers; peak RSS: of its largest process; tree PSS: the")
    print("   peak of the whole process tree, sampled every 50 ms; the targets take the larger)")
    js = f["jsonschema"]
    print(f"  (jsonschema loop: {js['valid_records']:,} of {js['lines']:,} records valid; "
          f"{js['loop_only_lines_per_s']:,} lines/s inside the loop, without start-up)")
    print(f"  (floor, not judged: orjson.loads + jsonschema-rs is_valid alone, a forked process per core,"
          f" no other check:\n   the most validate could reach here, "
          f"{f['floor']['lines_per_s'] / js['lines_per_s']:.0f}x the jsonschema loop)\n")
    print(f"{'target':44} {'figure':>9}  {'wanted':24} result")
    for t in f["targets"]:
        print(f"{t['name']:44} {t['value']:>9,}  {t['target']:24} {t['result']}")


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_run_arguments(parser, "steps (lines) in the main file")
    parser.add_argument("--grow", type=int, default=10, help="the big file for the memory check is this many times larger (default: %(default)s)")
    parser.add_argument("--big-steps", type=int, help="steps in the big file, instead of STEPS x GROW; 0 skips it")
    return parser.parse_args(argv)


def add_run_arguments(parser: argparse.ArgumentParser, steps_help: str) -> None:
    """The arguments of a benchmark of validate on generated recordings (bench_problems' too)."""
    parser.add_argument("--steps", type=int, default=200_000, help=f"{steps_help} (default: %(default)s)")
    parser.add_argument("--repeat", type=int, default=3, help="timed runs of each; the best is kept (default: %(default)s)")
    parser.add_argument("--line-bytes", type=int, default=900, help="average generated line size (default: %(default)s)")
    parser.add_argument("--jobs", type=int, help="passed to chatconv validate as --jobs (default: not passed, "
                                                 "so validate picks: one worker per core for files of 16 MiB or more)")
    parser.add_argument("--command", default=default_command(),
                        help="how to run chatconv, as a shell-quoted command (default: %(default)s)")
    parser.add_argument("--workdir", default=str(HERE / "data"), help="where generated files go (default: benchmarks/data, git-ignored)")
    parser.add_argument("--fixtures", default=str(FIXTURES), help="folder of real recorded *.jsonl (default: %(default)s)")
    parser.add_argument("--regenerate", action="store_true", help="write the generated files again even if they exist")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON instead of a table")


def run_benchmark(parse_args, measure, print_table, argv=None) -> None:
    """The main of a benchmark that takes add_run_arguments (bench_problems' too): its figures
    measured, then printed as a table, or as JSON with --json."""
    args = parse_args(argv)
    figures = measure(args)
    if args.json:
        print(orjson.dumps(figures, option=orjson.OPT_INDENT_2).decode())
    else:
        print_table(figures)


def main(argv=None) -> None:
    run_benchmark(parse_args, measure, print_table, argv)


if __name__ == "__main__":
    main()
