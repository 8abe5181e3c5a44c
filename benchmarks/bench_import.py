#!/usr/bin/env python3
"""Measure `chatconv import` of a large fine-tuning JSONL against an orjson round trip, in one run.

DESIGN.md, "Speed and memory": import should run at >= 40% of the rate of an orjson parse + dump
loop over the same file (>= 50% for a ShareGPT or Hugging Face chat file, `--format sharegpt` or
`--format hf-messages`: issue 30), with a peak
memory that is flat in the file size (<= 150 MiB).

The file is made of fine-tuning lines (`messages` + `tools`): the real recordings in
tests/data/recorded written as OpenAI bodies by `chatconv export --per step` (each the
conversation up to a step; those of at most 4 KiB, as fine-tuning examples mostly are), and the
fixtures of tests/data/formats/openai-chat, repeated to --lines (about 1.3 KB a line). Each figure is a whole child
process, the best of --repeat runs taken in turn (bench_migrate's launcher). The script prints
each target as PASS or FAIL and exits 0 whatever the figures (it is not run in CI).

    python benchmarks/bench_import.py                 # 200k lines, and 50k for the memory slope
    python benchmarks/bench_import.py --lines 20000 --repeat 1
    python benchmarks/bench_import.py --format sharegpt   # the recordings as ShareGPT rows
    python benchmarks/bench_import.py --format hf-messages  # as Hugging Face chat rows
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
from pathlib import Path

import orjson

HERE = Path(__file__).resolve().parent
CHECKOUT = HERE.parent
sys.path[:0] = [str(HERE), str(CHECKOUT / "tests"), str(CHECKOUT)]

from bench_migrate import FLAT_FACTOR, FLAT_SLACK_MIB, MAX_PEAK_MIB, MiB, ORJSON_LOOP, run  # noqa: E402
from conftest import recorded_files  # noqa: E402

MIN_ORJSON_RATIO = {"openai-chat": 0.40, "sharegpt": 0.50, "hf-messages": 0.50}
FORMATS = {"openai-chat": ("--gather-tools",), "sharegpt": (), "hf-messages": ()}  # export's options for each


def fine_tuning_lines(format_name: str) -> list[bytes]:
    """Fine-tuning lines of `format_name`: the recordings' steps exported to it (up to 4 KiB),
    and the format's real fixture lines."""
    export = [sys.executable, "-m", "chatconv", "export", *map(str, recorded_files()), "--to", format_name,
              *FORMATS[format_name]]
    exported = subprocess.run(export, capture_output=True, cwd=CHECKOUT).stdout.splitlines()
    data = CHECKOUT / "tests" / "data" / "formats"
    if format_name == "openai-chat":
        fixtures = (data / "openai-chat" / "finetune.jsonl").read_bytes().splitlines()
    elif format_name == "sharegpt":  # axolotl's ShareGPT fixture, one record, written as a line
        fixtures = [orjson.dumps(orjson.loads((data / "sharegpt" / "real" / "conversation.json").read_bytes()))]
    else:  # rows with a dataset's id column (as on the Hub), and xtuner's rows of the Hub's liberties
        exported = [b'{"id":%d,' % number + line[1:] for number, line in enumerate(exported) if line.strip()]
        fixtures = (data / "hf-messages" / "real" / "qwen35_tokenize_data.jsonl").read_bytes().splitlines()
    return [line + b"\n" for line in exported + fixtures if line.strip() and len(line) <= 4096]


def generate(folder: Path, lines: int, source: list[bytes]) -> Path:
    path = folder / f"finetune-{lines}-{len(source)}.jsonl"
    with open(path, "wb") as out:
        for start in range(0, lines, 10_000):
            out.write(b"".join(source[i % len(source)] for i in range(start, min(lines, start + 10_000))))
    return path


def measure(args) -> dict:
    workdir = Path(args.workdir or tempfile.mkdtemp(prefix="bench-import-"))
    workdir.mkdir(parents=True, exist_ok=True)
    source = fine_tuning_lines(args.format)
    big, small = generate(workdir, args.lines, source), generate(workdir, args.lines // 4, source)
    out = workdir / "out.jsonl"
    command = [sys.executable, "-m", "chatconv", "import"]
    commands = {
        "orjson loop": [sys.executable, "-c", ORJSON_LOOP, str(big), str(out)],
        "import": command + [str(big), "-o", str(out)],
        "import --jobs 1": command + [str(big), "-o", str(out), "--jobs", "1"],
        "import, 1/4 size": command + [str(small), "-o", str(out)],
    }
    run(commands["import, 1/4 size"])  # fills the bytecode cache (bench_migrate.PYCACHE), as installing would
    out.unlink()
    runs: dict[str, list[dict]] = {name: [] for name in commands}
    for _ in range(args.repeat):
        for name, argv in commands.items():
            runs[name].append(run(argv))
            out.unlink()
    best = {name: min(r, key=lambda r: r["seconds"]) for name, r in runs.items()}
    for name, result in best.items():
        result["lines_per_s"] = (args.lines // 4 if "1/4" in name else args.lines) / result["seconds"]
        result["peak_mib"] = max(r["peak_mib"] for r in runs[name])
    return {"lines": args.lines, "file_mib": big.stat().st_size / MiB, "best": best}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--lines", type=int, default=200_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--workdir")
    parser.add_argument("--format", choices=list(FORMATS), default="openai-chat")
    args = parser.parse_args()
    figures = measure(args)
    best = figures["best"]
    one, small, loop = best["import"], best["import, 1/4 size"], best["orjson loop"]
    ratio = one["lines_per_s"] / loop["lines_per_s"]
    target = MIN_ORJSON_RATIO[args.format]
    print(f"{figures['lines']:,} fine-tuning lines ({args.format}), {figures['file_mib']:.0f} MiB")
    for name, result in best.items():
        print(f"  {name:18} {result['seconds']:6.2f} s  {result['lines_per_s']:9,.0f} lines/s  "
              f"peak {result['peak_mib']:.0f} MiB")
    checks = [
        (f"import rate / orjson round-trip rate = {ratio:.2f}", f">= {target}", ratio >= target),
        (f"peak memory {one['peak_mib']:.0f} MiB", f"<= {MAX_PEAK_MIB} MiB", one["peak_mib"] <= MAX_PEAK_MIB),
        (f"peak at 1/4 size {small['peak_mib']:.0f} MiB vs full {one['peak_mib']:.0f} MiB", "flat",
         one["peak_mib"] <= small["peak_mib"] * FLAT_FACTOR + FLAT_SLACK_MIB),
    ]
    for text, target, ok in checks:
        print(f"{'PASS' if ok else 'FAIL'}  {text} (target {target})")


if __name__ == "__main__":
    main()
