"""How long `chatconv migrate` takes on a large eval file of the oldest era (v1, `testcases:`).

Builds a YAML file of about SIZE bytes (default 5 MB) by repeating the cases of
examples/evals/eras/v1-testcases.yaml (each with its own id), migrates it to the newest era
as the command does, and prints the seconds and the peak memory of that run.

    python benchmarks/bench_large_yaml.py            # 5 MB
    python benchmarks/bench_large_yaml.py 1000000    # 1 MB

Not a test: its time depends on the machine. The file stays under --max-file-bytes (16 MiB).
"""

from __future__ import annotations

import argparse
import re
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
ERA_V1 = ROOT / "examples" / "evals" / "eras" / "v1-testcases.yaml"


def legacy_eval_file(size: int) -> str:
    """A v1 eval file of about `size` bytes: the example's header, its cases repeated."""
    head, cases = ERA_V1.read_text().split("testcases:\n", 1)
    parts, total, copy = [head, "testcases:\n"], 0, 0
    while total < size:
        renamed = re.sub(r"(?m)^(  - id: )(\S+)", lambda m: f"{m.group(1)}{m.group(2)}-{copy}", cases)
        parts.append(renamed)
        total += len(renamed)
        copy += 1
    return "".join(parts)


def main(size: int) -> None:
    with tempfile.TemporaryDirectory() as folder:
        source = Path(folder) / "large.yaml"
        source.write_text(legacy_eval_file(size))
        started = time.perf_counter()
        run = subprocess.run([sys.executable, "-m", "chatconv", "migrate", str(source), "-o", str(source) + ".new"],
                             capture_output=True, text=True, cwd=ROOT)
        seconds = time.perf_counter() - started
        peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss // 1024
        if run.returncode != 0:
            sys.exit(f"migrate failed ({run.returncode}):\n{run.stderr}")
        print(f"{source.stat().st_size / 1e6:.1f} MB v1 eval file migrated in {seconds:.1f} s, peak memory {peak} MiB")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("size", nargs="?", type=int, default=5_000_000,
                        help="about how many bytes the eval file holds (default: %(default)s)")
    main(parser.parse_args().size)
