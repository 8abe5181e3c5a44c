"""Nothing lost to a second run, a writer, a full disk: in-place rewrites locked and checked
before the rename, writes whole or an error, a rejects file never torn."""

from __future__ import annotations

import contextlib
import errno
import io
import os
import resource
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from chatconv.migrate import migrate_paths
from chatconv.migrate.files import append_lines, migrate_file
from chatconv.problems import UnreadableInput
from chatconv.sources.writing import write_all
from conftest import RECORDED, run_chatconv
from test_migrate_edges import LEGACY_LINE, MIGRATED_LINE

FINETUNE = Path(__file__).parent / "data" / "formats" / "openai-chat" / "finetune.jsonl"


def _legacy_file(tmp_path: Path, lines: int) -> Path:
    path = tmp_path / "run.jsonl"
    path.write_bytes((LEGACY_LINE + b"\n") * lines)  # ~100 bytes a line: lines / 10,000 batches
    return path


def _on_first_batch(action):
    """A progress hook (see migrate_paths) that calls `action` once, after the first batch is
    migrated and before the file is replaced: a known moment inside a run."""
    calls = []

    @contextlib.contextmanager
    def progress(file):
        def report(done):
            if not calls:
                calls.append(done)
                action()
        yield report

    return progress


def _run_cli(*args, **kwargs) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "chatconv", *map(str, args)], capture_output=True, **kwargs)


# ---------------------------------------------------------------------------------------------
# Two runs at once, a file replaced or appended to while it is migrated


def test_a_second_in_place_run_stops_while_the_first_holds_the_file(tmp_path):
    path = _legacy_file(tmp_path, 3_000)
    second = []
    outcomes = list(migrate_paths([str(path)], in_place=True, jobs=2, progress=_on_first_batch(
        lambda: second.append(_run_cli("migrate", path, "--in-place", "--jobs", "2")))))
    [run] = second
    assert run.returncode == 2, run.stderr.decode()
    assert f"{path} is being rewritten by another chatconv run; nothing was changed" in run.stderr.decode()
    assert b"Traceback" not in run.stderr
    [outcome] = outcomes
    assert outcome.error is None and outcome.tally.read == 3_000 == outcome.tally.migrated
    # lines in = lines out + rejected, every one migrated once
    assert path.read_bytes() == (MIGRATED_LINE + b"\n") * 3_000


def test_a_file_done_with_is_unlocked_while_the_run_goes_on(tmp_path):
    import fcntl

    done = tmp_path / "current.jsonl"
    done.write_bytes((MIGRATED_LINE + b"\n") * 20)  # nothing to change: left as it is, same file
    later = _legacy_file(tmp_path, 20)
    free = []

    def try_lock():  # workers forked during the first file hold its descriptor: the lock must be let go
        with open(done, "rb") as other:
            try:
                fcntl.flock(other.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
                free.append(True)
            except BlockingIOError:
                free.append(False)

    hook = _on_first_batch(try_lock)
    outcomes = list(migrate_paths([str(done), str(later)], in_place=True, jobs=2,
                                  progress=lambda file: hook(file) if file == str(later) else contextlib.nullcontext()))
    assert [outcome.error for outcome in outcomes] == [None, None] and free == [True]


def test_a_file_replaced_while_migrated_is_not_read_at_old_offsets_nor_replaced(tmp_path):
    path = _legacy_file(tmp_path, 80_000)  # 8 batches: workers read some after the swap
    replacement = b"\n\n\n" + path.read_bytes()  # the same lines, three bytes later

    def replace_it():  # what another run (or an editor) does: a new file renamed over the old
        staged = tmp_path / "staged"
        staged.write_bytes(replacement)
        os.replace(staged, path)

    rejects = tmp_path / "rejects.jsonl"
    [outcome] = migrate_paths([str(path)], in_place=True, jobs=2, rejects=str(rejects),
                              progress=_on_first_batch(replace_it))
    assert isinstance(outcome.error, UnreadableInput), outcome
    assert outcome.error.problems[0].message == (f"{path} was replaced while it was migrated; nothing was replaced")
    assert path.read_bytes() == replacement  # the other writer's file, whole
    assert rejects.read_bytes() == b""  # no line read across the old and new files
    assert sorted(os.listdir(tmp_path)) == ["rejects.jsonl", "run.jsonl"]


def test_a_file_removed_between_its_open_and_its_lock_is_said_to_have_gone(tmp_path, monkeypatch):
    # Not "another run is rewriting it": no other run is, and the message must say what happened.
    from chatconv.migrate import files, guard

    path = _legacy_file(tmp_path, 10)

    def removed_then_held(file, source, target):
        os.unlink(file)
        return guard.hold_input(file, source, target)

    monkeypatch.setattr(files, "hold_input", removed_then_held)
    [outcome] = migrate_paths([str(path)], in_place=True)
    assert isinstance(outcome.error, UnreadableInput)
    [problem] = outcome.error.problems
    assert problem.code == "file-changed"
    assert problem.message.startswith(f"{path} went away while it was migrated (")
    assert os.listdir(tmp_path) == []  # no temporary file left behind


@pytest.mark.parametrize("jobs", [1, 2])
def test_lines_appended_while_migrated_are_never_dropped(tmp_path, jobs):
    path = _legacy_file(tmp_path, 3_000)  # one batch: the hook runs after it, before the rename
    before = path.read_bytes()
    appended = (LEGACY_LINE.replace(b'"a"', b'"late"') + b"\n") * 25
    appender = ("import sys\nwith open(sys.argv[1], 'ab') as out:\n    out.write(sys.stdin.buffer.read())\n")

    def append():  # another process writing to the file while it is read
        subprocess.run([sys.executable, "-c", appender, str(path)], input=appended, check=True)

    [outcome] = migrate_paths([str(path)], in_place=True, jobs=jobs, progress=_on_first_batch(append))
    assert isinstance(outcome.error, UnreadableInput), outcome
    assert outcome.error.problems[0].message == (
        f"{path} changed while it was migrated ({len(appended):,} bytes were added); nothing was replaced")
    assert outcome.error.problems[0].hint == "run again when nothing writes to it"
    assert path.read_bytes() == before + appended  # every line, the original's and the appended
    # Run again with nothing writing: every line in comes out, migrated.
    [again] = migrate_paths([str(path)], in_place=True, jobs=jobs)
    assert again.error is None and again.tally.read == 3_025 == again.tally.migrated + again.tally.rejected
    assert path.read_bytes().count(b"\n") == 3_025 and path.read_bytes().count(b'"late"') == 25


def test_lines_appended_between_the_check_and_the_rename_are_carried_over(tmp_path, monkeypatch):
    # After the check the old file is replaced: what a writer appended in between went to the old
    # file and vanished with it (exit 0). It is read there after the rename and carried over.
    from chatconv.migrate import files, guard

    path = _legacy_file(tmp_path, 40)
    late = LEGACY_LINE.replace(b'"a"', b'"late"') + b"\n" + b'{"not json\n' + b'{"torn'

    def checked_then_appended(state):
        guard.check_unchanged(state)
        with open(path, "ab") as out:  # as `>>` does: a writer that opens the file by its name
            out.write(late)

    monkeypatch.setattr(files, "check_unchanged", checked_then_appended)
    [outcome] = migrate_paths([str(path)], in_place=True)
    assert outcome.error is None, outcome.error
    lines = path.read_bytes().splitlines(keepends=True)
    assert lines[:40] == [MIGRATED_LINE + b"\n"] * 40
    # The late line migrated as the others were; a line that is not JSON and a torn one as they were.
    assert lines[40:] == [MIGRATED_LINE.replace(b'"a"', b'"late"') + b"\n", b'{"not json\n', b'{"torn']
    assert outcome.tally.read == 43 and outcome.tally.migrated == 41 and outcome.tally.unchanged == 2
    assert sorted(os.listdir(tmp_path)) == [path.name]


def test_a_file_written_to_without_growing_is_not_replaced(tmp_path):
    path = _legacy_file(tmp_path, 20)
    old = path.read_bytes()

    def overwrite():  # the same size, other bytes: only the modification time tells
        with open(path, "r+b") as out:
            out.write(old[:20].upper())
        os.utime(path, ns=(0, 1))

    [outcome] = migrate_paths([str(path)], in_place=True, progress=_on_first_batch(overwrite))
    assert "changed while it was migrated (written to)" in outcome.error.problems[0].message
    assert path.read_bytes() == old[:20].upper() + old[20:]


# ---------------------------------------------------------------------------------------------
# A full disk: standard output and files written whole or an error


def _file_size_limit():  # a write past 4 KiB is cut short (as on a disk that fills), the next fails (EFBIG)
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    resource.setrlimit(resource.RLIMIT_FSIZE, (4096, 4096))


@pytest.fixture(scope="module")
def big_recording(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("big") / "steps.jsonl"
    lines = (RECORDED / "mastra-travel-planner-steps.jsonl").read_bytes().rstrip(b"\n") + b"\n"
    path.write_bytes(lines * 10)  # 320 KB, written in large writes; validate finds problems on many lines
    return path


# migrate and validate write bytes (write_all); schema writes one large text (click.echo), which
# Python's text layer hands on without looking at the count: standard output itself must check.
@pytest.mark.parametrize("args", [["migrate", "RECORDING"], ["validate", "RECORDING", "--format", "json"],
                                  ["schema", "eval-file", "--bundle"]])
def test_standard_output_cut_short_is_an_error_not_a_truncated_file(tmp_path, big_recording, args):
    out = tmp_path / "out"
    args = [str(big_recording) if arg == "RECORDING" else arg for arg in args]
    with open(out, "wb") as stdout:
        result = subprocess.run([sys.executable, "-m", "chatconv", *args],
                                stdout=stdout, stderr=subprocess.PIPE, preexec_fn=_file_size_limit, timeout=60)
    assert result.returncode == 2, result.stderr.decode()
    assert "chatconv: error: cannot write standard output: File too large" in result.stderr.decode()
    assert "Traceback" not in result.stderr.decode()


@pytest.mark.parametrize("args", [["validate", RECORDED / "weather-steps.jsonl", "--format", "json"],
                                  ["text", RECORDED / "weather-steps.jsonl"], ["import", FINETUNE]])
def test_a_full_device_as_standard_output_is_an_error(args):
    with open("/dev/full", "wb") as stdout:
        result = subprocess.run([sys.executable, "-m", "chatconv", *map(str, args)], stdout=stdout,
                                stderr=subprocess.PIPE, timeout=60)
    assert result.returncode == 2
    assert result.stderr.decode().endswith("chatconv: error: cannot write standard output: No space left on device\n")


def test_a_reader_that_goes_away_ends_the_command_quietly(big_recording):
    run = subprocess.Popen([sys.executable, "-m", "chatconv", "text", str(big_recording)],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    run.stdout.read(10)
    run.stdout.close()  # `| head`
    assert run.wait(timeout=60) in (0, -signal.SIGPIPE)
    assert run.stderr.read() == b""


class _ShortWrites(io.RawIOBase):
    """A file that takes at most `step` bytes a write, then fails as a full disk does."""

    def __init__(self, step: int, room: int):
        self.data, self.step, self.room = bytearray(), step, room

    def writable(self) -> bool:
        return True

    def write(self, data) -> int:
        if len(self.data) >= self.room:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        taken = bytes(data[:min(self.step, self.room - len(self.data))])
        self.data += taken
        return len(taken)


def test_write_all_writes_again_after_a_short_write_and_raises_when_full():
    stream = _ShortWrites(step=7, room=100)
    write_all(stream, b"x" * 60)
    assert bytes(stream.data) == b"x" * 60
    with pytest.raises(OSError) as raised:
        write_all(stream, b"y" * 60)
    assert raised.value.errno == errno.ENOSPC


def test_a_stream_that_takes_part_of_each_write_gets_every_byte(tmp_path):
    # migrate_file given an unbuffered stream (a raw file, a socket): every write checked.
    path = _legacy_file(tmp_path, 50)
    out = _ShortWrites(step=100, room=1 << 20)
    tally = migrate_file(str(path), out)
    assert tally.migrated == 50 and bytes(out.data) == (MIGRATED_LINE + b"\n") * 50
    with pytest.raises(UnreadableInput) as raised:  # and a full one is an error, never a silent loss
        migrate_file(str(path), _ShortWrites(step=100, room=1000))
    assert "cannot write here: No space left on device" in raised.value.problems[0].message


# ---------------------------------------------------------------------------------------------
# The rejects file: whole lines, and a torn one found before appending


def test_a_rejects_file_ending_in_a_partial_line_stops_the_run_before_anything_changes(tmp_path):
    path = tmp_path / "run.jsonl"
    path.write_bytes(b"not json\n" + LEGACY_LINE + b"\n")
    rejects = tmp_path / "rejects.jsonl"
    rejects.write_bytes(b'{"file": "a.jsonl", "line": 1, "error": "x", "text": "y"}\n{"file": "a.js')
    torn = rejects.read_bytes()
    result = run_chatconv("migrate", path, "--in-place", "--rejects", rejects)
    assert result.returncode == 2
    # said as migrate says any file's error (FILE: error: ...), not at a line and column of it
    assert result.stderr_text == (f"{rejects}: error: {rejects} ends in a partial line (a run that could not "
                                  "finish writing it) (fix or remove that line before appending; nothing was "
                                  "migrated)\n")
    assert rejects.read_bytes() == torn and path.read_bytes() == b"not json\n" + LEGACY_LINE + b"\n"


def test_rejects_sent_to_a_device_do_not_stop_the_run(tmp_path):
    # /dev/null cannot be fsynced (EINVAL): there is nothing to make durable, and the file is
    # replaced as with a rejects file on a disk.
    source, out = tmp_path / "run.jsonl", tmp_path / "out.jsonl"
    source.write_bytes(LEGACY_LINE + b"\nnot json\n")
    result = run_chatconv("migrate", source, "-o", out, "--rejects", os.devnull)
    assert result.returncode == 0, result.stderr_text
    assert out.read_bytes() == MIGRATED_LINE + b"\n"
    assert "2 records read: 1 migrated, 0 unchanged, 1 rejected" in result.stderr_text


def test_rejected_lines_cut_short_by_a_full_disk_are_taken_back_whole(tmp_path, monkeypatch):
    path = tmp_path / "run.jsonl"
    original = b"not json\n" + LEGACY_LINE + b"\n" + b"[1,\n"
    path.write_bytes(original)
    rejects = tmp_path / "rejects.jsonl"
    rejects.write_bytes(b'{"earlier": true}\n')
    real_write = os.write

    def disk_fills(fd, data):  # half the bytes go, then the disk is full
        if fd > 2 and os.fstat(fd).st_ino == os.stat(rejects).st_ino:
            if len(data) > 1:
                return real_write(fd, bytes(data[:len(data) // 2]))
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        return real_write(fd, data)

    monkeypatch.setattr(os, "write", disk_fills)
    [outcome] = migrate_paths([str(path)], in_place=True, rejects=str(rejects))
    monkeypatch.undo()
    assert "cannot write the rejected lines here: No space left on device" in outcome.error.problems[0].message
    assert rejects.read_bytes() == b'{"earlier": true}\n'  # no torn line for the next run to glue to
    assert path.read_bytes() == original


def test_append_lines_writes_what_a_plain_stream_takes():
    stream = io.BytesIO()
    append_lines(stream, b"a\nb\n")
    assert stream.getvalue() == b"a\nb\n"
