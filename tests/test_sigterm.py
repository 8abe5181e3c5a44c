"""SIGTERM ends a run as Ctrl-C does: the file rewritten in place stays whole, no temporary
file is left behind, and the exit status is 143."""

from __future__ import annotations

import multiprocessing
import os
import signal
import subprocess
import sys
import time

import pytest

from conftest import recorded_files
from test_migrate import legacy_bytes

LINES = 20_000  # ~30 MB: a run that lasts long enough to be signalled while it writes


@pytest.mark.parametrize("jobs", [1, 2])
def test_sigterm_during_an_in_place_migration_leaves_the_file_whole(tmp_path, jobs):
    lines = [legacy_bytes(line.rstrip(b"\n") + b"\n") for path in recorded_files()
             for line in path.read_bytes().splitlines(keepends=True)]
    old = b"".join(lines[i % len(lines)] for i in range(LINES))
    target = tmp_path / "run.jsonl"
    target.write_bytes(old)
    run = subprocess.Popen([sys.executable, "-m", "chatconv", "migrate", str(target), "--in-place", "--jobs", str(jobs)],
                           stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 30
        while not list(tmp_path.glob(".run.jsonl.*.tmp")):  # the rewrite has begun
            assert run.poll() is None and time.monotonic() < deadline, "the run ended before its temporary file showed"
            time.sleep(0.01)
        run.send_signal(signal.SIGTERM)
        _, stderr = run.communicate(timeout=30)
    finally:
        if run.poll() is None:
            run.kill()
    assert run.returncode == 143, stderr
    assert b"terminated" in stderr and b"Traceback" not in stderr
    assert target.read_bytes() == old
    assert sorted(os.listdir(tmp_path)) == ["run.jsonl"]


def test_without_signal_masks_workers_start_and_run_in_order(monkeypatch):
    # Windows has no pthread_sigmask: nothing is held there, and --jobs must still work.
    from chatconv import interrupts, workers

    monkeypatch.setattr(interrupts, "MASKS", False)
    monkeypatch.setattr(workers, "MASKS", False)
    monkeypatch.delattr(signal, "pthread_sigmask")
    with interrupts.signals_held():
        pass
    # Forked, as a run's workers are (a process running other threads, as a test runner may, spawns them).
    with workers.OrderedPool(2, context=multiprocessing.get_context("fork")) as pool:
        results = [(key, future.result()) for key, future in pool.ordered((n, abs, (-n,)) for n in range(10))]
    assert results == [(n, n) for n in range(10)]
