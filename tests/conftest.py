"""Shared test helpers: the recorded fixtures, a repository folder, running the CLI."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import orjson
import pytest

DATA = Path(__file__).parent / "data"
RECORDED = DATA / "recorded"
REPO = Path(__file__).parent.parent


def recorded_files() -> list[Path]:
    return sorted(RECORDED.glob("*.jsonl"))


def read_jsonl(path: Path) -> list[dict]:
    return [orjson.loads(line) for line in path.read_bytes().splitlines() if line.strip()]


def write_jsonl(path: Path, records) -> Path:
    path.write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in records))
    return path


def run_chatconv(*args, cwd=None, stdin: bytes | None = None) -> subprocess.CompletedProcess:
    """Run the CLI as a user does; bad input must never end in a traceback."""
    result = subprocess.run([sys.executable, "-m", "chatconv", *map(str, args)], cwd=cwd,
                            input=stdin, capture_output=True)
    result.stdout_text = result.stdout.decode()
    result.stderr_text = result.stderr.decode()
    assert "Traceback" not in result.stderr_text, result.stderr_text
    return result


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """An empty repository folder (it holds .git, so it is the repository root)."""
    (tmp_path / ".git").mkdir()
    return tmp_path
