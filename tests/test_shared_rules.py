"""The rules that used to be written more than once, one test each, driving every caller through
the same cases: which JSONL lines are blank (sources.is_blank_line), and the ordered pool of
worker processes (workers.OrderedPool: the same output whatever the number of workers)."""

from __future__ import annotations

import io

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from chatconv.migrate import migrate_lines
from chatconv.sources import BATCH_BYTES, UTF8_BOM, iter_jsonl
from chatconv.validate import LineOptions, check_lines, validate_path
from chatconv.validate.lines import NOT_A_RECORD
from conftest import legacy_bytes, recorded_files, run_chatconv, to_legacy
from test_validate_parallel import MODE_IDS, MODES, _faulty_recording

# ---------------------------------------------------------------------------------------------
# Blank lines


def _legacy_step(conversation: str) -> bytes:
    """A step of its own conversation, in a legacy shape: validate warns of it, migrate changes it."""
    return orjson.dumps(to_legacy({"conversationId": conversation, "stepIndex": 0,
                                   "input": {"role": "user", "content": "go"},
                                   "output": [{"role": "assistant", "content": "done"}]}))


BLANK = {
    "empty": b"\n",
    "spaces and a tab": b"   \t \n",
    "CRLF": b"\r\n",
    "spaces and CRLF": b"  \r\n",
    "a BOM alone": UTF8_BOM + b"\n",
    "a BOM, spaces and CRLF": UTF8_BOM + b"  \r\n",
}
NOT_BLANK = {
    "a BOM then a step (first line)": UTF8_BOM + _legacy_step("a") + b"\n",
    "a step": _legacy_step("b") + b"\n",
    "two BOMs": UTF8_BOM * 2 + b"\n",
    "a BOM then text": UTF8_BOM + b"hello\n",
    "a BOM then a step": UTF8_BOM + _legacy_step("c") + b"\n",
    "a step ending in CRLF": _legacy_step("d") + b"\r\n",
    "a step without a line ending (last line)": _legacy_step("e"),
}
# Each case once, blank ones between the others; the cases that must stay first or last do.
LINES = [NOT_BLANK["a BOM then a step (first line)"], *BLANK.values(), NOT_BLANK["a step"], BLANK["empty"],
         NOT_BLANK["two BOMs"], BLANK["a BOM alone"], NOT_BLANK["a BOM then text"], BLANK["spaces and CRLF"],
         NOT_BLANK["a BOM then a step"], NOT_BLANK["a step ending in CRLF"], BLANK["CRLF"],
         NOT_BLANK["a step without a line ending (last line)"]]
RECORD_LINES = {number for number, line in enumerate(LINES, 1) if line not in BLANK.values()}
# What each reader makes of each line that is not blank: a record (a step, whatever BOM leads it,
# on any line), or broken JSON.
READ_AS = {number: "record" if line.rstrip().endswith(b"}") else "broken"
           for number, line in enumerate(LINES, 1) if number in RECORD_LINES}
ONLY_BLANK = b"".join(BLANK.values())


def _read_by_iter_jsonl(data: bytes) -> dict[int, str]:
    return {record.line: "broken" if record.error else "record" for record in iter_jsonl(io.BytesIO(data), "r.jsonl")}


def _read_by_check_lines(data: bytes) -> dict[int, str]:
    entries = check_lines(data, 1, LineOptions("r.jsonl", None, True, False, False), opens_file=True)
    return {entry.where.number: "broken" if entry.outcome is NOT_A_RECORD else "record" for entry in entries}


def _read_by_validate(data: bytes, path) -> list[dict[int, str]]:
    """The lines `chatconv validate` reports on, from a file and from standard input: each line
    read as a record here is a legacy step (a warning) or broken (an error)."""
    path.write_bytes(data)
    found = []
    for result in (run_chatconv("validate", "--format", "json", path),
                   run_chatconv("validate", "--format", "json", "-", stdin=data)):
        read: dict[int, str] = {}
        for problem in orjson.loads(result.stdout)["problems"]:
            broken = problem["severity"] == "error" or read.get(problem["line"]) == "broken"
            read[problem["line"]] = "broken" if broken else "record"
        found.append(read)
    return found


def _read_by_migrate_lines(data: bytes) -> dict[int, str]:
    """The lines migrate_lines migrates (records) or rejects (broken); every other line passes
    byte for byte and counts as unchanged."""
    result = migrate_lines(data, "r.jsonl", 1, keep_rejects=True)
    rejected = {reject.line for reject in result.rejects}
    kept = [(number, line) for number, line in enumerate(io.BytesIO(data), 1) if number not in rejected]
    written = list(io.BytesIO(result.data))
    assert len(written) == len(kept)
    migrated = {number for (number, line), out in zip(kept, written) if out != line}
    assert result.tally.unchanged == len(kept) - len(migrated)
    return {**{number: "record" for number in migrated}, **{number: "broken" for number in rejected}}


def test_every_reader_of_jsonl_lines_agrees_on_which_lines_are_blank_and_what_the_others_are(tmp_path):
    data = b"".join(LINES)
    assert set(READ_AS) == RECORD_LINES
    assert _read_by_iter_jsonl(data) == READ_AS
    assert _read_by_check_lines(data) == READ_AS
    assert _read_by_validate(data, tmp_path / "r.jsonl") == [READ_AS, READ_AS]
    assert _read_by_migrate_lines(data) == READ_AS


def test_a_file_of_blank_lines_holds_no_record_for_any_reader(tmp_path):
    assert _read_by_iter_jsonl(ONLY_BLANK) == _read_by_check_lines(ONLY_BLANK) == {}
    path = tmp_path / "blank.jsonl"
    path.write_bytes(ONLY_BLANK)
    # (Standard input of blank lines alone is not told to be JSONL: it is read as one document.)
    result = run_chatconv("validate", path)
    assert result.returncode == 1 and result.stdout_text.startswith(f"{path}:1:1: error: $: the file is empty")
    result = migrate_lines(ONLY_BLANK, "blank.jsonl")
    assert result.data == ONLY_BLANK and result.tally.unchanged == result.tally.read == len(BLANK)


# ---------------------------------------------------------------------------------------------
# The ordered pool: one worker or several, small batches or large, the same output


def _legacy_recording(path):
    """~3 MB of legacy steps (several batches for migrate), a few lines broken or blank."""
    legacy = b"".join(legacy_bytes(path.read_bytes()) for path in recorded_files()).splitlines(keepends=True)
    lines = [legacy[i % len(legacy)] for i in range(4000)]
    lines[1500] = b'{"stepIndex": oops}\n'
    lines[2500] = UTF8_BOM + b"\n"
    lines[3999] = lines[3999][:20]
    path.write_bytes(b"".join(lines))
    return path


RECORDINGS = {"faulty": _faulty_recording, "legacy": _legacy_recording}


@pytest.fixture(params=sorted(RECORDINGS), scope="module")
def recording(request, tmp_path_factory):
    path = tmp_path_factory.mktemp(request.param) / f"{request.param}.jsonl"
    return RECORDINGS[request.param](path)


@pytest.mark.parametrize("jobs, batch_bytes", MODES[1:], ids=MODE_IDS[1:])
def test_validate_gives_the_same_problems_in_the_same_order_with_any_workers(recording, jobs, batch_bytes):
    expected = validate_path(recording, jobs=1)
    assert expected[0] and validate_path(recording, jobs=jobs, batch_bytes=batch_bytes) == expected


def test_the_commands_give_the_same_bytes_with_one_worker_or_two(recording, tmp_path):
    assert recording.stat().st_size > 2 * BATCH_BYTES  # so that --jobs 2 uses workers
    outputs = {}
    for jobs in ("1", "2"):
        validated = run_chatconv("validate", "--jobs", jobs, recording)
        out, rejects = tmp_path / f"out-{jobs}.jsonl", tmp_path / f"rejects-{jobs}.jsonl"
        migrated = run_chatconv("migrate", recording, "-o", out, "--jobs", jobs, "--rejects", rejects)
        assert migrated.returncode == 0, migrated.stderr_text
        outputs[jobs] = (validated.returncode, validated.stdout_text, out.read_bytes(), rejects.read_bytes(),
                         migrated.stderr)
    assert outputs["1"] == outputs["2"]
    returncode, report, migrated_bytes, rejected, _ = outputs["1"]
    assert returncode == 1 and report == run_chatconv("validate", recording).stdout_text
    assert migrated_bytes != recording.read_bytes() and rejected


@settings(max_examples=60, deadline=None)
@given(lines=st.lists(st.binary(max_size=40).map(lambda b: b.replace(b"\n", b"")), max_size=30),
       last_newline=st.booleans(), batch_bytes=st.integers(min_value=1, max_value=64))
def test_batches_read_cover_the_file_in_order(tmp_path_factory, lines, last_newline, batch_bytes):
    # Every command reads a JSONL file's batches by iter_line_batches; workers read theirs again
    # by the offsets it gives.
    from chatconv.sources import iter_line_batches

    data = b"\n".join(lines) + (b"\n" if last_newline and lines else b"")
    path = tmp_path_factory.mktemp("batches") / "lines.jsonl"
    path.write_bytes(data)
    with open(path, "rb") as stream:
        batches = list(iter_line_batches(stream, batch_bytes))
    assert b"".join(data[batch.offset:batch.offset + len(batch.data)] for batch in batches) == data
    assert all(batch.data == data[batch.offset:batch.offset + len(batch.data)] for batch in batches)
    # Whole lines (the last may lack its newline), each batch numbered from its first line.
    assert all(batch.data.endswith(b"\n") for batch in batches[:-1])
    assert all(batch.first_line == data[:batch.offset].count(b"\n") + 1 for batch in batches)


# ---------------------------------------------------------------------------------------------
# Bytes handed back by workers through shared memory (handback.hand_back)


def _payload(index: int) -> bytes:
    """A task's bytes: some fit a 64-byte slot, some do not (those go down the pipe), one is empty."""
    return bytes([index % 251]) * (index * 7 % 150)


def _hand_back_payload(index: int, pause: float) -> tuple[int, object]:
    import time

    from chatconv.handback import hand_back

    time.sleep(pause)
    return index, hand_back(_payload(index))


@pytest.mark.parametrize("start_method", ["fork", "spawn"])
def test_workers_hand_back_each_tasks_bytes_whole_and_in_order(start_method, monkeypatch):
    """Many more tasks than slots, finishing out of order (early ones slow), their futures all
    kept before any is read: each result is its own task's bytes, from a slot or the pipe.
    This process copies a slot out slowly, so that a task given a slot too early would write
    over bytes not yet copied."""
    import multiprocessing
    import time

    from chatconv.handback import Slots
    from chatconv.workers import OrderedPool

    copied = []
    read = Slots.read

    def slow_read(slots, slot, length):
        time.sleep(0.005)
        copied.append(length)
        return read(slots, slot, length)

    monkeypatch.setattr(Slots, "read", slow_read)
    context = multiprocessing.get_context(start_method)
    tasks = ((index, _hand_back_payload, (index, 0.02 if index % 5 == 0 else 0.0)) for index in range(60))
    with OrderedPool(2, context=context, shared_bytes=64) as pool:
        assert (pool.slots is not None) == (start_method == "fork")
        futures = list(pool.ordered(tasks))
        results = [future.result() for _, future in futures]
    assert [key for key, _ in futures] == list(range(60))
    assert results == [(index, _payload(index)) for index in range(60)]
    # Forked, every payload that fits a slot came through one; spawned, none did.
    fits = sorted(len(_payload(index)) for index in range(60) if len(_payload(index)) <= 64)
    assert sorted(copied) == (fits if start_method == "fork" else [])


def test_bytes_handed_back_outside_a_worker_are_returned_as_they_are():
    from chatconv.handback import hand_back

    data = b"x" * 100
    assert hand_back(data) is data


def test_the_shared_memory_goes_with_its_pool():
    import multiprocessing

    from chatconv.handback import _SLOTS
    from chatconv.workers import OrderedPool

    # Forked workers share it (a process running other threads, as a test runner may, spawns them).
    with OrderedPool(2, context=multiprocessing.get_context("fork"), shared_bytes=1024) as pool:
        token = pool.slots.token
        assert _SLOTS[token] is pool.slots
        assert [future.result() for _, future in pool.ordered([(0, _hand_back_payload, (3, 0.0))])] \
            == [(3, _payload(3))]
    assert token not in _SLOTS and pool.slots is None
