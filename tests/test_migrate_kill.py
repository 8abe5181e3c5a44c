"""A migration killed with SIGKILL at any moment leaves the old file or the new one, whole."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import pytest

from conftest import recorded_files
from test_migrate import legacy_bytes

LINES = 30_000  # ~45 MB: a run long enough to be killed at many moments
KILL_AT = (0.05, 0.2, 0.4, 0.6, 0.8, 0.9, 0.97, 1.02)  # fractions of a whole run's duration


@pytest.fixture(scope="module")
def old_and_new() -> tuple[bytes, bytes]:
    """A large legacy recording made of the real ones, and what migrating it must give."""
    current = [line.rstrip(b"\n") + b"\n" for path in recorded_files()
               for line in path.read_bytes().splitlines(keepends=True)]
    legacy = [legacy_bytes(line) for line in current]
    return (b"".join(legacy[i % len(legacy)] for i in range(LINES)),
            b"".join(current[i % len(current)] for i in range(LINES)))


def _migrate_in_place(target, jobs: int) -> subprocess.Popen:
    # A session of its own, so that the kill reaches the worker processes too.
    return subprocess.Popen([sys.executable, "-m", "chatconv", "migrate", str(target), "--in-place", "--backup",
                             "--jobs", str(jobs)], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            start_new_session=True)


@pytest.mark.parametrize("jobs", [1, 2])
def test_sigkill_at_any_moment_leaves_the_old_or_the_new_file_whole(tmp_path, old_and_new, jobs):
    old, new = old_and_new
    target = tmp_path / "run.jsonl"
    backup = tmp_path / "run.jsonl.bak"
    target.write_bytes(old)
    started = time.monotonic()
    whole_run = _migrate_in_place(target, jobs)
    assert whole_run.wait() == 0, whole_run.stderr.read().decode()
    duration = time.monotonic() - started
    assert target.read_bytes() == new and backup.read_bytes() == old

    outcomes = []
    for fraction in KILL_AT:
        target.write_bytes(old)
        backup.unlink(missing_ok=True)
        run = _migrate_in_place(target, jobs)
        time.sleep(duration * fraction)
        try:
            os.killpg(run.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass  # it had finished
        run.wait()
        data = target.read_bytes()
        assert data == old or data == new, f"killed at {fraction:.0%}: {len(data)} bytes, neither whole file"
        outcomes.append("new" if data == new else "old")
        if backup.exists():
            assert backup.read_bytes() == old
        # A killed run may leave its temporary file, named so that it never passes for the data.
        for stray in set(os.listdir(tmp_path)) - {"run.jsonl", "run.jsonl.bak"}:
            assert stray.startswith(".run.jsonl.") and stray.endswith(".tmp"), stray
            os.unlink(tmp_path / stray)
    assert "old" in outcomes, outcomes  # some kills did land mid-run
