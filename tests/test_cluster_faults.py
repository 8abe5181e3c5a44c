"""A cluster's faults end a run with one line, never a hang or a traceback: a real Dask scheduler
and worker (`dask scheduler`, `dask worker` on 127.0.0.1, processes of their own) are started
for each test, and killed in the middle of a run. The run reads standard input, fed by the test,
so that the fault comes between two known batches."""

from __future__ import annotations

import json
import logging
import os
import re
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import orjson
import pytest
from click.testing import CliRunner

from chatconv.cli import cli
from chatconv.cluster import WORKERS_SECONDS
from conftest import REPO, legacy_bytes, recorded_files


class DaskProcesses:
    """A scheduler on 127.0.0.1 and, when asked, one worker process: each in a session of its own,
    killed whole (SIGKILL) when a test says so or when it ends."""

    def __init__(self, folder: Path):
        self.folder = folder
        self.environment = {**os.environ, "PYTHONPATH": str(REPO)}  # the workers load this tree's chatconv
        address_file = folder / "scheduler.json"
        self.scheduler = self._start("scheduler", "--host", "127.0.0.1", "--port", "0", "--no-dashboard",
                                     "--scheduler-file", address_file)
        self.worker = None
        deadline = time.monotonic() + 60
        while not address_file.exists() or not address_file.read_text().strip():
            assert time.monotonic() < deadline and self.scheduler.poll() is None, "the scheduler did not start"
            time.sleep(0.1)
        self.address = json.loads(address_file.read_text())["address"]

    def _start(self, *args) -> subprocess.Popen:
        return subprocess.Popen([sys.executable, "-m", "dask", *map(str, args)], cwd=self.folder,
                                env=self.environment, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                start_new_session=True)

    def start_worker(self) -> None:
        from distributed import Client

        self.worker = self._start("worker", self.address, "--nworkers", "1", "--nthreads", "1", "--no-dashboard")
        with Client(self.address, timeout=30, set_as_default=False) as client:
            client.wait_for_workers(1, timeout=60)

    @staticmethod
    def kill(process: subprocess.Popen | None) -> None:
        if process is not None and process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()

    def close(self) -> None:
        self.kill(self.worker)
        self.kill(self.scheduler)


@pytest.fixture
def dask_processes(tmp_path):
    processes = DaskProcesses(tmp_path)
    try:
        yield processes
    finally:
        processes.close()


def _legacy_lines(tmp_path) -> bytes:
    """Legacy recordings that migrate changes, every line whole."""
    return b"".join(legacy_bytes(path.read_bytes()).rstrip(b"\n") + b"\n" for path in recorded_files())


class _Run:
    """`chatconv migrate - --scheduler ADDRESS` fed standard input by the test; its output read as
    it comes (a thread: the pipe must not fill)."""

    def __init__(self, address: str):
        self.process = subprocess.Popen([sys.executable, "-m", "chatconv", "migrate", "-", "--scheduler", address],
                                        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        self.out = bytearray()
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def _read(self) -> None:
        for chunk in iter(lambda: self.process.stdout.read1(65536), b""):
            self.out += chunk

    def feed(self, data: bytes) -> None:
        try:
            self.process.stdin.write(data)
            self.process.stdin.flush()
        except BrokenPipeError:  # the run stopped before it read them all: what it says is checked
            pass

    def wait_for_output(self, lines: int, seconds: float = 120) -> None:
        deadline = time.monotonic() + seconds
        while self.out.count(b"\n") < lines:
            assert time.monotonic() < deadline and self.process.poll() is None, bytes(self.out[-200:])
            time.sleep(0.05)

    def end(self, seconds: float) -> tuple[int, str, float]:
        started = time.monotonic()
        try:
            self.process.stdin.close()
        except BrokenPipeError:
            pass
        stderr = self.process.stderr.read().decode()
        code = self.process.wait(timeout=seconds)
        self.reader.join(10)
        return code, stderr, time.monotonic() - started


def _fault_run(dask_processes, tmp_path, fault) -> tuple[int, str, float, bytes, bytes]:
    """A migration of legacy lines whose first batches the cluster migrates; then `fault`; then
    more lines. Returns the exit status, standard error, the seconds from the fault to the end,
    the output, and the lines fed."""
    dask_processes.start_worker()
    lines = _legacy_lines(tmp_path)
    first = lines * (2_200_000 // len(lines) + 1)  # two batches of 1 MiB and more
    run = _Run(dask_processes.address)
    run.feed(first)
    run.wait_for_output(first.count(b"\n") // 3)  # the first batch migrated and written
    fault()
    run.feed(lines * 40)
    code, stderr, seconds = run.end(WORKERS_SECONDS + 60)
    return code, stderr, seconds, bytes(run.out), first + lines * 40


def _stopped_at(stderr: str, output: bytes, fed: bytes) -> int:
    """The line the run says it stopped at: the lines before it are the ones written, whole."""
    found = re.search(r"-:(\d+): error: migration stopped at line (\d+), after the (\d+) whole lines", stderr)
    assert found, stderr
    line = int(found[1])
    assert int(found[2]) == line and int(found[3]) == line - 1
    written = output.split(b"\n")
    assert written[-1] == b"" and len(written) - 1 == line - 1  # every line before it, none after
    assert line - 1 < fed.count(b"\n")
    return line


def test_every_worker_killed_mid_run_ends_it_after_the_workers_deadline(dask_processes, tmp_path):
    code, stderr, seconds, output, fed = _fault_run(dask_processes, tmp_path,
                                                    lambda: dask_processes.kill(dask_processes.worker))
    assert code == 2
    assert "every worker of the Dask cluster is gone (none for 10 s)" in stderr
    assert f"start workers (`dask worker {dask_processes.address}`)" in stderr
    assert "Traceback" not in stderr and len(stderr.strip().splitlines()) == 1, stderr
    _stopped_at(stderr, output, fed)
    assert seconds < WORKERS_SECONDS + 30


def test_the_scheduler_killed_mid_run_ends_it_at_once_with_one_line(dask_processes, tmp_path):
    code, stderr, seconds, output, fed = _fault_run(dask_processes, tmp_path,
                                                    lambda: dask_processes.kill(dask_processes.scheduler))
    assert code == 2
    assert f"the Dask scheduler at {dask_processes.address} went away" in stderr
    assert "chatconv installed" not in stderr  # not the hint for workers without chatconv
    assert "Traceback" not in stderr and len(stderr.strip().splitlines()) == 1, stderr
    _stopped_at(stderr, output, fed)
    assert seconds < 30


def test_a_scheduler_without_workers_is_a_usage_error_after_the_workers_deadline(dask_processes):
    from chatconv.cluster import ClusterPool
    from chatconv.problems import UsageError

    # (The command waits WORKERS_SECONDS; the pool is asked here with 2 s: the same code, the suite's time.)
    started = time.monotonic()
    with pytest.raises(UsageError) as refused:
        ClusterPool(dask_processes.address, workers_seconds=2)
    assert 2 <= time.monotonic() - started < 30
    assert refused.value.message == (
        f"--scheduler {dask_processes.address}: the scheduler has no workers (none joined within 2 s); "
        f"start some (`dask worker {dask_processes.address}`) and run again")
    assert logging.getLogger("distributed.client").level < logging.CRITICAL  # Dask's logs are given back


@pytest.mark.parametrize("command", ["validate", "migrate", "import", "export", "text", "tools", "dataset"])
def test_jobs_beside_scheduler_is_a_usage_error_on_every_command(tmp_path, command):
    path = tmp_path / "run.jsonl"
    path.write_bytes(orjson.dumps({"output": []}) + b"\n")
    extra = ["--to", "anthropic"] if command == "export" else []
    result = CliRunner().invoke(cli, [command, str(path), *extra, "--jobs", "2", "--scheduler", "tcp://127.0.0.1:1"])
    assert result.exit_code == 2
    assert "--jobs and --scheduler cannot be used together" in result.output
