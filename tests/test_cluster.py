"""Beyond one machine: `--scheduler ADDRESS` sends the batches of JSONL files to a Dask cluster's
workers, and every command that reads recordings (validate, migrate, import, export, text, tools,
dataset) writes exactly what a local run writes (a distributed.LocalCluster of 2 worker processes
stands for the cluster; test_cluster_faults.py starts real `dask` processes and kills them)."""

from __future__ import annotations

import gzip
import os
import signal
import socket
from types import SimpleNamespace
import sys
import time

import pytest
from distributed import Client, LocalCluster

from chatconv.sources import iter_line_batches, open_binary
from chatconv.validate import validate_path
from conftest import DATA, RECORDED, legacy_bytes, recorded_files, run_chatconv
from test_validate_parallel import _faulty_recording


@pytest.fixture(scope="module")
def cluster():
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as local:
        yield local


def _tasks_run(cluster, prefix: str) -> int:
    """How many tasks of the function `prefix` the cluster's scheduler has finished."""
    with Client(cluster.scheduler_address) as client:
        counts = client.run_on_scheduler(lambda dask_scheduler: {
            name: dict(p.state_counts) for name, p in dask_scheduler.task_prefixes.items()})
    return counts.get(prefix, {}).get("memory", 0)


def test_validate_on_a_cluster_reports_what_a_local_run_reports(tmp_path, cluster):
    path = _faulty_recording(tmp_path / "faulty.jsonl")  # every kind of fault, some across batches
    before = _tasks_run(cluster, "check_sent_lines")
    local = validate_path(path, jobs=1, batch_bytes=16 * 1024)
    on_cluster = validate_path(path, batch_bytes=16 * 1024, scheduler=cluster.scheduler_address)
    assert on_cluster == local
    assert local[1].errors and local[1].warnings
    with open(path, "rb") as stream:
        batches = sum(1 for _ in iter_line_batches(stream, 16 * 1024))
    assert batches > 100
    assert _tasks_run(cluster, "check_sent_lines") - before == batches  # the cluster checked them all


def test_validate_scheduler_option_prints_what_a_local_run_prints(tmp_path, cluster):
    folder = tmp_path / "runs"
    folder.mkdir()
    for copy in range(2):  # files of a few batches (1 MiB each), so that the cluster has several tasks
        assert _faulty_recording(folder / f"run-{copy}.jsonl").stat().st_size > 2 * 1024 * 1024
    local = run_chatconv("validate", folder, "--format", "json")
    remote = run_chatconv("validate", folder, "--format", "json", "--scheduler", cluster.scheduler_address)
    assert (remote.returncode, remote.stdout) == (local.returncode, local.stdout) == (1, local.stdout)
    assert b'"errors"' in local.stdout


@pytest.mark.parametrize("command", ["text", "tools", "dataset"])
def test_the_recording_commands_on_a_cluster_write_what_a_local_run_writes(tmp_path, cluster, command):
    folder = tmp_path / "runs"
    folder.mkdir()
    for copy in range(2):
        _faulty_recording(folder / f"run-{copy}.jsonl")  # problems too: reported alike
    local = run_chatconv(command, folder, "--jobs", "1")
    remote = run_chatconv(command, folder, "--scheduler", cluster.scheduler_address)
    assert (remote.returncode, remote.stdout, remote.stderr) == (local.returncode, local.stdout, local.stderr)
    assert local.stdout.count(b"\n") > 1000 and local.stderr


def test_migrate_on_a_cluster_writes_what_a_local_run_writes(tmp_path, cluster):
    folder = tmp_path / "runs"
    folder.mkdir()
    legacy = b"".join(legacy_bytes(path.read_bytes()).rstrip(b"\n") + b"\n" for path in recorded_files())
    (folder / "many.jsonl").write_bytes(legacy * 30)  # several batches
    (folder / "few.jsonl.gz").write_bytes(gzip.compress(legacy))
    before = _tasks_run(cluster, "migrate_file_part")
    local = run_chatconv("migrate", folder, "-o", tmp_path / "local", "--jobs", "2")
    remote = run_chatconv("migrate", folder, "-o", tmp_path / "remote", "--scheduler", cluster.scheduler_address)
    assert (remote.returncode, remote.stderr) == (local.returncode, local.stderr) == (0, local.stderr)
    for name in ("many.jsonl", "few.jsonl.gz"):
        assert (tmp_path / "remote" / name).read_bytes() == (tmp_path / "local" / name).read_bytes()
    assert b" migrated" in local.stderr and legacy.count(b"\n") * 31 > 1000
    with open_binary(str(folder / "many.jsonl")) as many, open_binary(str(folder / "few.jsonl.gz")) as few:
        batches = sum(1 for stream in (many, few) for _ in iter_line_batches(stream))
    assert batches >= 3 and _tasks_run(cluster, "migrate_file_part") - before == batches  # none migrated here
    # In place too, atomically as without it; and a file that changes nothing is left alone.
    in_place = folder / "many.jsonl"
    assert run_chatconv("migrate", in_place, "--in-place", "--scheduler", cluster.scheduler_address).returncode == 0
    assert in_place.read_bytes() == (tmp_path / "local" / "many.jsonl").read_bytes()


def test_import_and_export_on_a_cluster_write_what_a_local_run_writes(tmp_path, cluster):
    source = tmp_path / "finetune.jsonl"
    rows = (DATA / "formats" / "openai-chat" / "finetune.jsonl").read_bytes().rstrip(b"\n") + b"\n"
    source.write_bytes(rows * 1500)  # ~2.8 MB: three batches
    before = _tasks_run(cluster, "import_batch")
    local = run_chatconv("import", source, "-o", tmp_path / "local.jsonl", "--jobs", "2")
    remote = run_chatconv("import", source, "-o", tmp_path / "remote.jsonl", "--scheduler", cluster.scheduler_address)
    assert (remote.returncode, remote.stderr) == (local.returncode, local.stderr) == (0, local.stderr)
    imported = (tmp_path / "local.jsonl").read_bytes()
    assert (tmp_path / "remote.jsonl").read_bytes() == imported and imported.count(b"\n") > 5_000
    assert _tasks_run(cluster, "import_batch") - before == 3  # its batches sent to the workers: they need not see the file

    steps = tmp_path / "local.jsonl"
    for per in ("step", "conversation"):
        local = run_chatconv("export", steps, "--to", "anthropic", "--per", per, "--jobs", "2")
        remote = run_chatconv("export", steps, "--to", "anthropic", "--per", per,
                              "--scheduler", cluster.scheduler_address)
        assert (remote.returncode, remote.stdout, remote.stderr) == (local.returncode, local.stdout, local.stderr)
        assert local.returncode == 0 and local.stdout.count(b"\n") >= 4500


def test_tools_pairs_calls_across_batches_run_on_a_cluster(tmp_path, cluster):
    from chatconv.recordings.tools import tool_row_lines

    path = _faulty_recording(tmp_path / "faulty.jsonl")
    before = _tasks_run(cluster, "work_batch")
    local_problems, remote_problems = [], []
    local = list(tool_row_lines([str(path)], problems=local_problems, jobs=1, batch_bytes=16 * 1024))
    remote = list(tool_row_lines([str(path)], problems=remote_problems, batch_bytes=16 * 1024,
                                 scheduler=cluster.scheduler_address))
    assert (remote, remote_problems) == (local, local_problems)
    assert _tasks_run(cluster, "work_batch") - before > 100  # one task a batch


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def test_a_scheduler_out_of_reach_is_a_usage_error(tmp_path):
    path = _faulty_recording(tmp_path / "faulty.jsonl")  # more than one batch: the cluster is asked for
    result = run_chatconv("validate", path, "--scheduler", f"tcp://127.0.0.1:{_free_port()}")
    assert result.returncode == 2
    assert b"cannot reach a Dask scheduler" in result.stderr
    assert b"Traceback" not in result.stderr


def test_without_dask_the_scheduler_option_says_how_to_install_it(tmp_path, monkeypatch):
    from chatconv.cluster import ClusterPool
    from chatconv.problems import UsageError

    monkeypatch.setitem(sys.modules, "distributed", None)  # as if Dask were not installed
    with pytest.raises(UsageError, match=r'pip install "chatconv\[dask\]"'):
        ClusterPool("tcp://127.0.0.1:8786")


class _FailedFuture:
    def __init__(self, exc):
        self.exc = exc

    def result(self, timeout=None):
        raise self.exc


def test_a_task_the_cluster_cannot_run_stops_its_file_with_a_message():
    from chatconv.cluster import _ClusterResult
    from chatconv.problems import UnreadableInput
    from chatconv.workers import worker_result

    failed = _ClusterResult(_FailedFuture(RuntimeError("Error during deserialization of the task graph.\nmore")),
                            SimpleNamespace(lost=None))
    with pytest.raises(UnreadableInput) as stopped:
        worker_result(failed, "run.jsonl", "validation", line=2001)
    [problem] = stopped.value.problems
    assert (problem.file, problem.line, problem.code) == ("run.jsonl", 2001, "unreadable-file")
    assert problem.message == ("validation stopped at line 2001, after the 2000 whole lines before it: the Dask "
                               "cluster could not run the task (RuntimeError: Error during deserialization of the "
                               "task graph.)")
    assert "workers need chatconv installed" in problem.hint


def test_an_error_of_chatconvs_own_raised_by_a_task_is_raised_as_it_is():
    from chatconv.cluster import _ClusterResult
    from chatconv.migrate.lines import LineRejected, Reject

    rejected = LineRejected(Reject("run.jsonl", 7, "invalid JSON", b"{"))
    with pytest.raises(LineRejected) as raised:
        _ClusterResult(_FailedFuture(rejected), SimpleNamespace(lost=None)).result()
    assert raised.value is rejected  # a record that stops a migration on a worker stops it as at home


@pytest.mark.parametrize("address, said", [("nope", b"missing port number"), ("tcp://127.0.0.1", b"missing port number"),
                                           ("://host:8786", b"unknown address scheme ''"),
                                           ("udp://host:8786", b"unknown address scheme 'udp'"),
                                           ("inproc://host", b"don't know how to extract host and port"),
                                           ("ucx://host:8786", b"don't know how to extract host and port")])
def test_a_scheduler_address_no_scheduler_can_be_at_is_a_usage_error_at_once(tmp_path, address, said):
    path = _faulty_recording(tmp_path / "faulty.jsonl")
    result = run_chatconv("validate", path, "--scheduler", address)
    assert result.returncode == 2
    assert said in result.stderr
    assert b"Traceback" not in result.stderr and b"Exception ignored" not in result.stderr


def test_a_tls_scheduler_address_without_dasks_tls_settings_is_a_usage_error_at_once(tmp_path):
    # A Client made of it failed on its first connection (TypeError: TLS expects a `ssl_context`),
    # half made: a traceback, then 20 s of clean-up at exit.
    from chatconv.cluster import ClusterPool
    from chatconv.problems import UsageError

    started = time.monotonic()
    with pytest.raises(UsageError, match="needs Dask's TLS settings"):
        ClusterPool("tls://127.0.0.1:1")
    assert time.monotonic() - started < 2  # at once: no connection is tried
    _faulty_recording(tmp_path / "faulty.jsonl")
    result = run_chatconv("validate", tmp_path, "--scheduler", "tls://127.0.0.1:1")
    assert result.returncode == 2 and result.stdout == b""
    [said] = result.stderr_text.splitlines()
    assert said.startswith("Error: --scheduler tls://127.0.0.1:1: ") and "TLS" in said and "tcp://" in said, said
    assert b"Exception ignored" not in result.stderr


def test_an_unencrypted_scheduler_address_where_dask_requires_encryption_is_a_usage_error_at_once(tmp_path,
                                                                                                monkeypatch):
    _faulty_recording(tmp_path / "faulty.jsonl")
    monkeypatch.setenv("DASK_DISTRIBUTED__COMM__REQUIRE_ENCRYPTION", "True")  # Dask's configuration, as a user sets it
    result = run_chatconv("validate", tmp_path, "--scheduler", "tcp://127.0.0.1:1")
    assert result.returncode == 2
    assert result.stderr_text == ("Error: --scheduler tcp://127.0.0.1:1: Dask's configuration requires encryption "
                                  "(distributed.comm.require-encryption): use a tls:// address\n")


def _peer(answer):
    """A TCP server on 127.0.0.1 that is no Dask scheduler: `answer(connection)` is what it does."""
    import threading

    server = socket.create_server(("127.0.0.1", 0))

    def serve():
        kept = []  # connections held open, as a silent peer holds them
        while True:
            try:
                connection, _ = server.accept()
            except OSError:
                return
            kept.append(connection)
            answer(connection)

    threading.Thread(target=serve, daemon=True).start()
    return server, f"tcp://127.0.0.1:{server.getsockname()[1]}"


@pytest.mark.parametrize("name, answer", [
    ("garbage", lambda c: c.sendall(b"\x00\xff garbage " * 100)),
    ("an HTTP server", lambda c: (c.recv(1000), c.sendall(b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n"))),
])
def test_a_peer_that_is_no_scheduler_is_a_usage_error_at_once(tmp_path, name, answer):
    # Each hung, or ended in two tracebacks and a 20 s wait at exit, before: a probe asks it first.
    server, address = _peer(answer)
    try:
        started = time.monotonic()
        result = run_chatconv("validate", RECORDED, "--scheduler", address, timeout=60)
        assert time.monotonic() - started < 15, name
    finally:
        server.close()
    assert result.returncode == 2 and f"--scheduler {address}: cannot reach a Dask scheduler there (what answered " \
        "is no Dask scheduler" in result.stderr_text, result.stderr_text
    assert result.stderr_text.count("\n") <= 3  # usage, try, one line


def test_a_peer_that_says_nothing_ends_in_the_connect_time(monkeypatch):
    from chatconv import cluster
    from chatconv.problems import UsageError

    monkeypatch.setattr(cluster, "CONNECT_SECONDS", 1)
    server, address = _peer(lambda connection: None)
    try:
        started = time.monotonic()
        with pytest.raises(UsageError, match="nothing answered as a Dask scheduler within 1 s"):
            cluster.ClusterPool(address)
        assert time.monotonic() - started < 5
    finally:
        server.close()


def test_the_clients_threads_hold_ctrl_c_as_this_thread_does(cluster):
    # A signal goes to a thread that does not hold it: were Dask's threads to take Ctrl-C, the
    # main thread would be interrupted inside a block that holds it (a chunk of JSON written).
    from chatconv.cluster import ClusterPool

    def threads() -> set[str]:
        return set(os.listdir("/proc/self/task"))

    before = threads()
    with ClusterPool(cluster.scheduler_address) as pool:
        started = threads() - before
        assert started and pool.jobs == 2
        for task in started:
            with open(f"/proc/self/task/{task}/status") as status:
                blocked = int(next(line for line in status if line.startswith("SigBlk:")).split()[1], 16)
            assert blocked & (1 << (signal.SIGINT - 1)) and blocked & (1 << (signal.SIGTERM - 1)), task


def test_once_the_cluster_is_lost_every_later_task_fails_at_once():
    from chatconv.cluster import ClusterPool
    from chatconv.workers import WorkerLost

    pool = object.__new__(ClusterPool)  # as one whose scheduler went away, its client closed since
    pool.address, pool.lost, pool.ahead, pool.jobs = "tcp://host:8786", None, 2, 1
    pool.client = SimpleNamespace(status="closed")
    started = time.monotonic()
    [(key, result)] = list(pool.ordered((n, abs, (-n,)) for n in range(5)))  # nothing submitted to a closed client
    with pytest.raises(WorkerLost, match="the Dask scheduler at tcp://host:8786 went away"):
        result.result()
    assert key == 0 and pool.lost is not None and time.monotonic() - started < 1


def test_a_tasks_own_timeout_error_is_not_taken_for_the_wait_and_ends_it():
    from chatconv.cluster import _ClusterResult
    from chatconv.workers import WorkerLost

    class TimedOut(_FailedFuture):
        status = "error"

        def done(self):
            return True

        def exception(self, timeout=None):
            return self.exc

    with pytest.raises(WorkerLost, match=r"could not run the task \(TimeoutError: slow\)"):
        _ClusterResult(TimedOut(TimeoutError("slow")), SimpleNamespace(lost=None)).result()


def test_a_task_that_ends_as_the_wait_gives_up_gives_its_result():
    from chatconv.cluster import _ClusterResult

    class JustInTime:  # the wait of POLL_SECONDS gives up, and the task is done right after
        status, waits = "pending", 0

        def result(self, timeout=None):
            self.waits += 1
            if self.waits == 1:
                self.status = "finished"
                raise TimeoutError("timed out after 1 s.")
            return "the result"

        def done(self):
            return self.status == "finished"

    pool = SimpleNamespace(lost=None, workers_seconds=10,
                           client=SimpleNamespace(status="running", nthreads=lambda: {"worker": 1}))
    assert _ClusterResult(JustInTime(), pool).result() == "the result"


def test_import_on_a_cluster_is_not_kept_local_by_the_default_jobs():
    from chatconv.formats.import_files import _jobs_for
    from chatconv.formats.importing import Importer, ImportRun

    path = str(DATA / "formats" / "openai-chat" / "finetune.jsonl")
    importer = Importer(None, False, None, ImportRun())
    assert _jobs_for(importer, path, 1, 1 << 20, None) == 1
    assert _jobs_for(importer, path, 1, 1 << 20, "tcp://host:8786") > 1


def test_dasks_logs_are_given_back_when_the_last_of_overlapping_pools_closes():
    import logging

    from chatconv.cluster import _DaskLogsHeld

    client_logs = logging.getLogger("distributed.client")
    level = client_logs.level
    first, second = _DaskLogsHeld(), _DaskLogsHeld()
    first.close()
    assert client_logs.level > logging.CRITICAL  # the second is still open
    second.close()
    second.close()  # (closed twice: nothing more)
    assert client_logs.level == level


def test_on_a_real_cluster_a_call_gives_its_result_and_a_tasks_own_timeout_error_is_worker_lost(cluster):
    from chatconv.cluster import ClusterPool
    from chatconv.workers import WorkerLost

    def times_out():
        raise TimeoutError("slow")

    with ClusterPool(cluster.scheduler_address) as pool:
        assert pool.call(abs, -3) == 3
        with pytest.raises(WorkerLost, match=r"could not run the task \(TimeoutError: slow\)"):
            pool.call(times_out)
