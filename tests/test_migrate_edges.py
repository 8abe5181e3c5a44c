"""`chatconv migrate` at the edges: odd outputs (pipes, links, missing folders, a full disk),
--rejects that would land in the data, JSON that orjson refuses, YAML merge keys and numbers.
Each ends in a clear message or in the data kept whole, never in a traceback or a lost line."""

from __future__ import annotations

import datetime
import os
import resource
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import orjson
import pytest
import yaml

from conftest import RECORDED, run_chatconv
from test_migrate import legacy_bytes

WEATHER = RECORDED / "weather-steps.jsonl"
LEGACY_LINE = b'{"stepIndex":0,"input":{"role":"user","content":"a"},"output":{"role":"assistant","content":"x"}}'
MIGRATED_LINE = b'{"stepIndex":0,"input":{"role":"user","content":"a"},"output":[{"role":"assistant","content":"x"}]}'


@pytest.fixture
def legacy(tmp_path):
    path = tmp_path / "legacy.jsonl"
    path.write_bytes(legacy_bytes(WEATHER.read_bytes()))
    return path


def _read_fifo(path, into: list) -> threading.Thread:
    reader = threading.Thread(target=lambda: into.append(path.read_bytes()))
    reader.start()
    return reader


def test_a_pipe_as_output_is_written_to_not_replaced(tmp_path, legacy):
    fifo = tmp_path / "out.pipe"
    os.mkfifo(fifo)
    received: list[bytes] = []
    reader = _read_fifo(fifo, received)
    result = run_chatconv("migrate", legacy, "-o", fifo)
    reader.join(10)
    assert result.returncode == 0, result.stderr_text
    assert received == [WEATHER.read_bytes()]
    assert not fifo.is_file() and fifo.exists()  # still a pipe


def test_a_pipe_as_input_is_read_whole_with_jobs(tmp_path):
    fifo = tmp_path / "in.jsonl"
    os.mkfifo(fifo)
    lines = LEGACY_LINE + b"\n"
    writer = threading.Thread(target=lambda: fifo.write_bytes(lines * 5000))  # several batches
    writer.start()
    result = run_chatconv("migrate", fifo, "--jobs", "2", "-o", tmp_path / "out.jsonl")
    writer.join(10)
    assert result.returncode == 0, result.stderr_text
    assert (tmp_path / "out.jsonl").read_bytes() == (MIGRATED_LINE + b"\n") * 5000


# chatconv's command line, saying on standard error how many tasks its worker pools were given.
_COUNTING_TASKS = """
import atexit, sys
from chatconv import workers
given = []
ordered = workers.OrderedPool.ordered
workers.OrderedPool.ordered = lambda pool, tasks: ordered(pool, (given.append(1) or task for task in tasks))
atexit.register(lambda: sys.stderr.write(f"worker tasks: {len(given)}\\n"))
from chatconv.cli import main
sys.argv[0] = "chatconv"
main()
"""


def test_standard_input_shared_out_to_workers_keeps_the_order_and_the_line_numbers(tmp_path):
    # Several 1 MiB batches, a bad line in the third: the workers' output is one process's.
    data = (LEGACY_LINE + b"\n") * 25_000 + b"not json\n" + (LEGACY_LINE + b"\n") * 5_000
    runs = {}
    for jobs in (1, 2):
        rejects = tmp_path / f"rejects{jobs}.jsonl"
        result = subprocess.run([sys.executable, "-c", _COUNTING_TASKS, "migrate", "-", "--jobs", str(jobs),
                                 "--rejects", str(rejects)], input=data, capture_output=True)
        assert result.returncode == 0, result.stderr.decode()
        runs[jobs] = result.stdout, rejects.read_bytes()
        tasks = int(result.stderr.decode().rsplit("worker tasks: ", 1)[1])
        assert tasks == 0 if jobs == 1 else tasks >= 3  # with --jobs 2, each batch went to a worker
    assert runs[2] == runs[1]
    assert runs[2][0] == (MIGRATED_LINE + b"\n") * 30_000
    assert runs[2][1].startswith(b'{"file":"-","line":25001,')


def test_in_place_on_a_link_rewrites_its_target_and_keeps_the_link(tmp_path, legacy):
    link = tmp_path / "link.jsonl"
    link.symlink_to(legacy.name)
    result = run_chatconv("migrate", link, "--in-place")
    assert result.returncode == 0, result.stderr_text
    assert link.is_symlink() and os.readlink(link) == legacy.name
    assert legacy.read_bytes() == WEATHER.read_bytes()


def test_output_to_standard_output_a_new_folder_and_a_missing_folder(tmp_path, legacy):
    assert run_chatconv("migrate", legacy, "-o", "-").stdout == WEATHER.read_bytes()
    run_chatconv("migrate", legacy, "-o", f"{tmp_path / 'made'}/")
    assert (tmp_path / "made" / legacy.name).read_bytes() == WEATHER.read_bytes()
    deep = tmp_path / "a" / "b" / "out.jsonl"
    assert run_chatconv("migrate", legacy, "-o", deep).returncode == 0
    assert deep.read_bytes() == WEATHER.read_bytes()


@pytest.mark.parametrize("where", ["output", "input", "in-place"])
def test_rejects_that_would_land_in_the_data_are_a_usage_error(tmp_path, legacy, where):
    before = legacy.read_bytes()
    out = tmp_path / "out.jsonl"
    args = {"output": [legacy, "-o", out, "--rejects", out],
            "input": [legacy, "-o", out, "--rejects", legacy],
            "in-place": [legacy, "--in-place", "--rejects", legacy]}[where]
    result = run_chatconv("migrate", *args)
    assert result.returncode == 2
    assert "--rejects" in result.stderr_text and "a file of its own" in result.stderr_text
    assert legacy.read_bytes() == before and not out.exists()


def test_several_inputs_into_a_file_is_a_usage_error(tmp_path, legacy):
    taken = tmp_path / "taken.jsonl"
    taken.write_bytes(b"")
    result = run_chatconv("migrate", RECORDED, "-o", taken)
    assert result.returncode == 2 and "several input files need -o FOLDER" in result.stderr_text


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_a_full_disk_ends_with_a_message_and_leaves_nothing_behind(tmp_path, jobs):
    source = tmp_path / "big.jsonl"
    source.write_bytes((LEGACY_LINE + b"\n") * 40_000)  # 4 MB, several batches
    out = tmp_path / "out.jsonl"

    def small_files():  # writes beyond 1 MB fail as on a full disk (EFBIG; SIGXFSZ is ignored)
        resource.setrlimit(resource.RLIMIT_FSIZE, (1 << 20, 1 << 20))

    result = subprocess.run([sys.executable, "-m", "chatconv", "migrate", str(source), "-o", str(out),
                             "--jobs", jobs], capture_output=True, preexec_fn=small_files, timeout=60)
    stderr = result.stderr.decode()
    assert result.returncode == 2 and "Traceback" not in stderr
    assert f"{out}: error: cannot write here: File too large" in stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["big.jsonl"]


def test_json_that_orjson_refuses_is_kept_when_unchanged_and_rejected_when_not(tmp_path):
    current = (b'{"stepIndex":0,"input":{"role":"user","content":"\\ud83d"},'
               b'"output":[{"role":"assistant","content":"x"}],"n":1e400}')
    needs_migration = current.replace(b'"output":[{"role":"assistant","content":"x"}]',
                                      b'"output":{"role":"assistant","content":"x"}')
    path = tmp_path / "odd.jsonl"
    path.write_bytes(current + b"\n" + LEGACY_LINE + b"\n")
    result = run_chatconv("migrate", path)
    assert result.returncode == 0, result.stderr_text
    assert result.stdout == current + b"\n" + MIGRATED_LINE + b"\n"

    path.write_bytes(needs_migration + b"\n")
    result = run_chatconv("migrate", path, "--rejects", tmp_path / "rejects.jsonl")
    assert result.returncode == 0 and result.stdout == b""
    reject = orjson.loads((tmp_path / "rejects.jsonl").read_bytes())
    assert reject["line"] == 1 and "cannot be written back exactly" in reject["error"]


def test_a_record_too_deep_to_write_back_is_rejected_with_its_line(tmp_path):
    deep = b'{"d":' + b"[" * 300 + b"]" * 300 + b"}"
    path = tmp_path / "deep.jsonl"
    path.write_bytes(MIGRATED_LINE + b"\n" + LEGACY_LINE[:-1] + b',"metadata":' + deep + b"}\n")
    before = path.read_bytes()
    result = run_chatconv("migrate", path, "--in-place")
    assert result.returncode == 1
    assert f"{path}:2: error: cannot be written back" in result.stderr_text
    assert path.read_bytes() == before
    current_and_deep = MIGRATED_LINE[:-1] + b',"metadata":' + deep + b"}\n"
    path.write_bytes(current_and_deep)
    assert run_chatconv("migrate", path).stdout == current_and_deep  # nothing to change: kept


def test_a_last_line_ending_in_a_bare_carriage_return_keeps_it(tmp_path):
    path = tmp_path / "cr.jsonl"
    path.write_bytes(LEGACY_LINE + b"\r")
    assert run_chatconv("migrate", path).stdout == MIGRATED_LINE + b"\r"


MERGED = """base: &base {criteria: shared}
evalcases:
- <<: *base
  id: a
  input: hello
"""


def test_yaml_merge_keys_are_refused_when_a_migration_would_touch_them(tmp_path):
    path = tmp_path / "merged.yaml"
    path.write_text(MERGED)
    result = run_chatconv("migrate", path, "--in-place", "--to", "evalcases")
    assert result.returncode == 1
    assert f"{path}:1: error: uses YAML merge keys (<<)" in result.stderr_text
    assert path.read_text() == MERGED
    current = MERGED.replace("criteria", "note").replace(
        "input: hello", "input_messages: [{role: user, content: hello}]\n  outcome: ok")
    path.write_text(current)
    result = run_chatconv("migrate", path, "--in-place", "--to", "evalcases")
    assert result.returncode == 0 and path.read_text() == current


def test_yaml_numbers_and_long_lines_come_back_as_written(tmp_path):
    numbers = {"tiny": "1e-400", "huge": "1e400", "pi": "3.14159265358979323846", "big": "12345678901234567890.5"}
    long_text = "w" * 70_000 + "   " + "z " * 10 + "end"
    metadata = "".join(f"    {key}: {value}\n" for key, value in numbers.items()) + f"    long: {long_text}\n"
    path = tmp_path / "numbers.yaml"
    path.write_text(f"evalcases:\n- id: a\n  input: hi\n  criteria: c\n  metadata:\n{metadata}")
    result = run_chatconv("migrate", path, "--in-place", "--to", "evalcases")
    assert result.returncode == 0, result.stderr_text
    written = path.read_text()
    assert metadata in written  # every number, and the long line unfolded, as they were
    assert yaml.safe_load(written)["evalcases"][0]["metadata"]["long"] == long_text


@pytest.mark.parametrize(("before", "kept", "rejected", "read"), [
    (b"\n", b"\n", 0, 3),  # a blank line stays
    (b"\xef\xbb\xbf", b"\xef\xbb\xbf", 0, 2),  # so does a BOM, before the first record
    (b"{broken\n", b"", 1, 3),  # a broken first line is set aside, the rest is still JSONL
])
def test_standard_input_of_jsonl_is_jsonl_whatever_its_first_line(tmp_path, before, kept, rejected, read):
    stdin = before + LEGACY_LINE + b"\n" + LEGACY_LINE + b"\n"
    rejects = tmp_path / "rejects.jsonl"
    result = run_chatconv("migrate", "-", "--rejects", rejects, stdin=stdin)
    assert result.returncode == 0, result.stderr_text
    assert result.stdout == kept + (MIGRATED_LINE + b"\n") * 2
    assert len(rejects.read_bytes().splitlines()) == rejected
    assert f"{read} records read: 2 migrated, {read - 2 - rejected} unchanged, {rejected} rejected" in result.stderr_text


def test_a_json_eval_file_with_a_repeated_key_is_not_rewritten(tmp_path):
    path = tmp_path / "dup.json"
    text = b'{"tests": [{"id": "a", "input": "hi", "criteria": "c", "metadata": {"n": 1, "n": 2}}]}\n'
    path.write_bytes(text)
    result = run_chatconv("migrate", path, "--in-place")
    assert result.returncode == 1
    assert "$.tests[0].metadata.n: duplicate key 'n'" in result.stderr_text
    assert path.read_bytes() == text


def test_a_full_disk_on_one_file_leaves_the_next_file_whole_with_jobs(tmp_path):
    # Batches of the failed file still running used to take the next file's turns: it came out
    # short, or the run hung.
    (tmp_path / "in").mkdir()
    (tmp_path / "in" / "a.jsonl").write_bytes((LEGACY_LINE + b"\n") * 40_000)  # 4 MB: fails
    (tmp_path / "in" / "b.jsonl").write_bytes((LEGACY_LINE + b"\n") * 8_000)  # 0.8 MB: fits
    out = tmp_path / "out"

    def small_files():
        resource.setrlimit(resource.RLIMIT_FSIZE, (1 << 20, 1 << 20))

    result = subprocess.run([sys.executable, "-m", "chatconv", "migrate", str(tmp_path / "in"), "-o", str(out),
                             "--jobs", "2"], capture_output=True, preexec_fn=small_files, timeout=60)
    assert result.returncode == 2 and b"Traceback" not in result.stderr
    assert sorted(p.name for p in out.iterdir()) == ["b.jsonl"]
    assert (out / "b.jsonl").read_bytes() == (MIGRATED_LINE + b"\n") * 8_000


def test_an_output_folder_that_would_overwrite_an_input_is_refused(tmp_path):
    (tmp_path / "src" / "sub").mkdir(parents=True)
    (tmp_path / "src" / "a.jsonl").write_bytes(LEGACY_LINE + b"\n")
    inner = tmp_path / "src" / "sub" / "a.jsonl"
    inner.write_bytes(MIGRATED_LINE + b"\n")
    result = run_chatconv("migrate", tmp_path / "src", "-o", tmp_path / "src" / "sub")
    assert result.returncode == 2 and "would write over the input" in result.stderr_text
    assert inner.read_bytes() == MIGRATED_LINE + b"\n"


def test_backup_never_replaces_an_earlier_backup(legacy):
    earlier = legacy.with_name(legacy.name + ".bak")
    earlier.write_bytes(b"the true original\n")
    before = legacy.read_bytes()
    result = run_chatconv("migrate", legacy, "--in-place", "--backup")
    assert result.returncode == 2 and "an earlier backup" in result.stderr_text
    assert earlier.read_bytes() == b"the true original\n" and legacy.read_bytes() == before


@pytest.mark.skipif(not hasattr(os, "getuid") or os.getuid() != 0, reason="giving a file to another user takes root")
def test_in_place_keeps_the_owner_and_mode(legacy):
    os.chown(legacy, 65534, 65534)
    os.chmod(legacy, 0o640)
    assert run_chatconv("migrate", legacy, "--in-place").returncode == 0
    stat = legacy.stat()
    assert (stat.st_uid, stat.st_gid, stat.st_mode & 0o777) == (65534, 65534, 0o640)
    assert legacy.read_bytes() == WEATHER.read_bytes()


def test_interrupting_a_run_with_workers_leaves_nothing_and_exits_130(tmp_path):
    source = tmp_path / "big.jsonl"
    source.write_bytes((LEGACY_LINE + b"\n") * 600_000)  # 60 MB: seconds of work for 2 workers
    out = tmp_path / "out" / "big.jsonl"
    run = subprocess.Popen([sys.executable, "-m", "chatconv", "migrate", str(source), "-o", str(out), "--jobs", "2"],
                           stderr=subprocess.PIPE, preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    deadline = time.monotonic() + 30
    while not any(p.stat().st_size for p in out.parent.glob(".big.jsonl.*.tmp")) and time.monotonic() < deadline:
        time.sleep(0.02)  # until the workers are writing: mid-way
    assert run.poll() is None, "the run ended before it could be interrupted"
    run.send_signal(signal.SIGINT)
    _, stderr = run.communicate(timeout=60)
    assert run.returncode == 130 and b"Traceback" not in stderr
    assert list(out.parent.iterdir()) == []  # no partial file, no temporary file left behind


def test_workers_end_when_the_main_process_is_killed(tmp_path):
    source = tmp_path / "big.jsonl"
    source.write_bytes((LEGACY_LINE + b"\n") * 200_000)
    run = subprocess.Popen([sys.executable, "-m", "chatconv", "migrate", str(source), "-o", str(tmp_path / "o.jsonl"),
                            "--jobs", "2"], stderr=subprocess.DEVNULL)
    # Deadlines only bound a broken run: each loop ends as soon as what it waits for happens.
    deadline = time.monotonic() + 60
    workers = []
    while not workers and time.monotonic() < deadline:
        time.sleep(0.1)
        workers = [int(pid) for pid in open(f"/proc/{run.pid}/task/{run.pid}/children").read().split()]
    assert workers, "the run started no workers"
    # Each worker by its pid and its start time: on a busy machine (a CI run's parallel tests
    # start thousands of processes) an ended worker's pid may soon be another process's.
    workers = [(pid, _started(pid)) for pid in workers]
    run.kill()
    run.wait()
    deadline = time.monotonic() + 60
    while any(_running(*worker) for worker in workers) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not any(_running(*worker) for worker in workers), [_stat(pid) for pid, _ in workers]


def _stat(pid: int) -> list[str]:
    """The fields of /proc/PID/stat after the command's name (state first); [] when it is gone."""
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().rsplit(")", 1)[1].split()
    except FileNotFoundError:
        return []


def _started(pid: int) -> str | None:
    fields = _stat(pid)
    return fields[19] if fields else None  # starttime, field 22 of stat


def _running(pid: int, started: str | None) -> bool:
    """Whether process `pid`, started at `started`, exists and is not a zombie (one that ended,
    not yet reaped)."""
    fields = _stat(pid)
    return bool(fields) and fields[19] == started and fields[0] != "Z"


def test_a_worker_whose_main_process_died_before_it_started_ends():
    # Killed between forking a worker and the worker's start, the main process has already
    # left the worker to another parent: the worker knows the main process by the pid the main
    # process gave it, not by the parent it finds, and ends. (On a loaded machine this window
    # was wide enough for the test above to hit it.)
    worker = subprocess.Popen([sys.executable, "-c", "import time; from chatconv.workers import _start_worker; "
                               "_start_worker(-1, None, ()); time.sleep(120)"], stderr=subprocess.PIPE)
    _, stderr = worker.communicate(timeout=60)
    assert worker.returncode == 1 and stderr == b"", stderr.decode()


def test_a_rejects_file_on_a_full_disk_is_a_message(tmp_path):
    path = tmp_path / "bad.jsonl"
    path.write_bytes(LEGACY_LINE + b"\n{broken\n")
    before = path.read_bytes()
    result = run_chatconv("migrate", path, "--in-place", "--rejects", "/dev/full")
    assert result.returncode == 2 and "cannot write the rejected lines" in result.stderr_text
    assert path.read_bytes() == before


YAML_WITH_HEADER = """# yaml-language-server: $schema=https://example.com/eval.json
---
evalcases:
- id: a
  input: hi
  expected_output: 2024-01-01
  criteria: c
...
"""


def test_yaml_header_comments_end_marker_and_dates_survive(repo):
    path = repo / "eval.yaml"
    path.write_text(YAML_WITH_HEADER)
    result = run_chatconv("migrate", path, "--in-place", "--to", "evalcases")
    assert result.returncode == 0, result.stderr_text
    written = path.read_text()
    assert written.startswith("# yaml-language-server: $schema=https://example.com/eval.json\n---\n")
    assert written.endswith("\n...\n")
    case = yaml.safe_load(written)["evalcases"][0]
    assert case["expected_messages"] == [{"role": "assistant", "content": datetime.date(2024, 1, 1)}]
    assert "content: 2024-01-01" in written  # written as it was: chatconv reads it as that text
    assert run_chatconv("validate", path).returncode == 0


def test_yaml_whose_alias_a_migration_would_edit_through_is_refused(tmp_path):
    path = tmp_path / "alias.yaml"
    text = ("testcases:\n- id: one\n  messages: &conv\n  - {role: user, content: hi}\n"
            "  - {role: assistant, content: yo}\n  outcome: o\n- id: two\n  messages: *conv\n  outcome: o\n")
    path.write_text(text)
    result = run_chatconv("migrate", path, "--in-place")
    assert result.returncode == 1 and "aliases (*name) that a migration would edit through" in result.stderr_text
    assert path.read_text() == text


def test_yaml_whose_aliases_would_expand_without_bound_is_refused_at_once(tmp_path):
    lines = ["evalcases: []", "x0: &a0 [1]"] + [f"x{n}: &a{n} [*a{n - 1}, *a{n - 1}]" for n in range(1, 24)]
    path = tmp_path / "laughs.yaml"
    path.write_text("\n".join(lines) + "\n")
    result = subprocess.run([sys.executable, "-m", "chatconv", "migrate", str(path), "--check"],
                            capture_output=True, timeout=30)
    assert result.returncode == 1 and b"YAML aliases expand to more than" in result.stderr


def test_a_merge_that_no_rename_goes_through_still_migrates(tmp_path):
    path = tmp_path / "merge.yaml"
    path.write_text("eval_cases:\n- &base\n  id: a\n  outcome: o\n- <<: *base\n  id: b\n")
    result = run_chatconv("migrate", path, "--in-place", "--to", "evalcases")
    assert result.returncode == 0, result.stderr_text
    assert path.read_text() == "evalcases:\n- &base\n  id: a\n  outcome: o\n- <<: *base\n  id: b\n"


@pytest.mark.parametrize("stdin", [
    b'{"tests": [\n{"id": "a", "criteria": "o", "input": "hi"}\n]}\n',  # pretty JSON, a whole case on line 2
    b"{tests: [{id: a, criteria: o, input: hi}]}\n",  # YAML in flow style, which looks like JSON
])
def test_standard_input_documents_that_look_like_jsonl_or_json(stdin):
    result = run_chatconv("migrate", "-", stdin=stdin)
    assert result.returncode == 0, result.stderr_text
    assert b"prompts" in result.stdout and "1 record read: 1 migrated" in result.stderr_text


def test_output_on_a_full_device_is_a_message_not_a_silent_loss(tmp_path, legacy):
    for args in (["-o", "/dev/full"], ["-o", "-"]):
        result = subprocess.run([sys.executable, "-m", "chatconv", "migrate", str(legacy), *args],
                                stdout=open("/dev/full", "wb"), stderr=subprocess.PIPE)
        assert result.returncode == 2 and b"Traceback" not in result.stderr
        assert b"No space left on device" in result.stderr


@pytest.mark.parametrize("rejects", ["-", "/dev/stdout"])
def test_rejects_on_standard_output_are_refused(legacy, rejects):
    result = run_chatconv("migrate", legacy, "--rejects", rejects)
    assert result.returncode == 2 and "--rejects" in result.stderr_text and result.stdout == b""


def test_utf16_on_standard_input_is_unreadable_as_by_name(legacy):
    result = run_chatconv("migrate", "-", stdin=WEATHER.read_text().encode("utf-16"))
    assert result.returncode == 2 and "the file is UTF-16" in result.stderr_text


def test_a_yaml_eval_file_with_a_repeated_key_is_refused_not_crashed_on(tmp_path):
    path = tmp_path / "dup.yaml"
    text = "tests:\n- id: a\n  input: hello\n  input: again\n  criteria: c\n"
    path.write_text(text)
    result = run_chatconv("migrate", path, "--in-place")
    assert result.returncode == 1 and "duplicate key 'input'" in result.stderr_text
    assert path.read_text() == text


def test_standard_input_with_workers_is_not_a_file_named_dash(tmp_path):
    (tmp_path / "-").write_bytes(b"not this\n")
    checkout = str(Path(__file__).resolve().parents[1])  # chatconv importable from another folder
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [checkout, os.environ.get("PYTHONPATH")]))}
    result = subprocess.run([sys.executable, "-m", "chatconv", "migrate", "-", "--jobs", "2"], cwd=tmp_path,
                            env=env, input=LEGACY_LINE + b"\n", capture_output=True)
    assert result.returncode == 0, result.stderr
    assert result.stdout == MIGRATED_LINE + b"\n"


def test_a_line_holding_only_a_bom_is_blank_wherever_it_stands(tmp_path):
    path = tmp_path / "joined.jsonl"
    path.write_bytes(MIGRATED_LINE + b"\n\xef\xbb\xbf\n" + MIGRATED_LINE.replace(b'"stepIndex":0', b'"stepIndex":1') + b"\n")
    assert run_chatconv("validate", path).returncode == 0
    assert run_chatconv("migrate", path, "--check").returncode == 0
