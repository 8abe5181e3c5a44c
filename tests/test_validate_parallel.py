"""JSONL checked a batch of lines at a time, in this process or in workers: the same problems in
the same order and the same summary as one record at a time; the window of conversations."""

from __future__ import annotations

import dataclasses
import io
import multiprocessing
import os
import sys
import threading

import orjson
import pytest

from chatconv import validate, workers
from chatconv.sources import iter_line_batches
from chatconv.validate import validate_path
from conftest import RECORDED, read_jsonl, recorded_files, write_jsonl

# (jobs, batch_bytes): one batch in this process; many small batches in this process; many
# small batches (mostly a line or two each) in two workers; bigger batches in two workers.
MODES = [(1, validate.BATCH_BYTES), (1, 1024), (2, 1024), (2, 16 * 1024)]
MODE_IDS = ["serial", "serial-batches", "workers-tiny-batches", "workers"]


def _step(conversation, index, output):
    return {"conversationId": conversation, "stepIndex": index, "input": {"role": "user", "content": "go"},
            "output": output}


def _call(call_id):
    return {"role": "assistant", "content": [{"type": "tool-call", "toolCallId": call_id, "toolName": "t",
                                              "input": {}}]}


def _result(call_id):
    return {"role": "tool", "content": [{"type": "tool-result", "toolCallId": call_id, "toolName": "t",
                                         "output": {"type": "text", "value": "v"}}]}


def _fixture_steps() -> list[dict]:
    """The steps of the step-per-line fixtures, each file's conversation with its own id."""
    return [dict(step, conversationId=f"{path.stem}-{step['conversationId']}")
            for path in recorded_files() for step in read_jsonl(path) if "steps" not in step]


def _recording(copies: int) -> list[dict]:
    """Copies of the recorded step files with unique conversation and tool-call ids; every
    other pair of copies interleaved line by line, the others one conversation after another."""
    steps = []
    for pair in range(0, copies, 2):
        first, second = (_copy(copy) for copy in (pair, pair + 1))
        if pair % 4:
            steps += [step for steps_pair in zip(first, second) for step in steps_pair]
        else:
            steps += first + second
    return steps


def _copy(copy: int) -> list[dict]:
    steps = []
    for step in _fixture_steps():
        text = orjson.dumps(step).decode()
        for part_id in _tool_call_ids(step):
            text = text.replace(f'"{part_id}"', f'"{part_id}-{copy}"')
        step = orjson.loads(text)
        step["conversationId"] = f"{step['conversationId']}-{copy}"
        steps.append(step)
    return steps


def _tool_call_ids(step: dict) -> set[str]:
    return {part["toolCallId"] for message in [step["input"], *step["output"]]
            for part in (message["content"] if isinstance(message["content"], list) else [])
            if "toolCallId" in part}


def _faulty_recording(path, copies: int = 60):
    """A recording of a few thousand steps with one of each kind of fault, spread through it."""
    steps = _recording(copies)
    steps[300]["colour"] = "red"                                   # unknown key: a warning
    steps[500]["output"] = steps[500]["output"][0]                 # legacy single output
    steps[700]["output"] = [_result("nobody")]                     # a result answering nothing
    steps[900]["output"].append(_call("never"))                    # a call never answered
    steps[950]["output"] = _call("legacy-never")                   # the same, in a legacy step
    steps[1300]["input"]["role"] = "human"                         # a schema error
    later = next(i for i in range(1100, len(steps)) if steps[i]["stepIndex"] > 1)
    steps[later]["stepIndex"] = 0                                  # stepIndex going down
    lines = [orjson.dumps(step) + b"\n" for step in steps]
    lines[100] = b'{"stepIndex": 1, "input": {"role": "user", "content": \n'  # a broken line
    lines[1200] = b"   \n"                                         # a blank line
    lines[1400] = b"[1, 2]\n"                                      # JSON, but not a record
    lines[-1] = lines[-1][:len(lines[-1]) // 2]                     # the last line cut short
    path.write_bytes(b"".join(lines))
    return path


def _run(path, jobs, batch_bytes, **options):
    return validate_path(path, jobs=jobs, batch_bytes=batch_bytes, **options)


def _one_record_at_a_time(monkeypatch, path, **options):
    """The problems read through standard input, which takes the record-by-record path."""
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(path.read_bytes())))
    problems, summary = validate_path("-", **options)
    return [dataclasses.replace(p, file=str(path)) for p in problems], summary


@pytest.mark.parametrize("jobs, batch_bytes", MODES, ids=MODE_IDS)
def test_faults_are_reported_alike_in_every_mode(tmp_path, monkeypatch, jobs, batch_bytes):
    path = _faulty_recording(tmp_path / "faulty.jsonl")
    expected = _one_record_at_a_time(monkeypatch, path)
    assert _run(path, jobs, batch_bytes) == expected
    messages = [p.message for p in expected[0]]
    for fault in ["invalid JSON", "unknown key 'colour'", "legacy shape", "'nobody' answers no earlier",
                  "'never' is never answered", "does not follow", '"human" is not one of',
                  "cannot tell what kind", "unexpected end of data"]:
        assert any(fault in m for m in messages), fault
    # A problem in a step upgraded in memory is located in the line as written.
    [legacy] = [p for p in expected[0] if "'legacy-never'" in p.message]
    line = path.read_bytes().split(b"\n")[legacy.line - 1]
    assert legacy.path == "$.output[0].content[0].toolCallId"
    assert legacy.column == line.index(b'"toolCallId":"legacy-never"') + 1


def test_workers_are_spawned_when_another_thread_runs(tmp_path, monkeypatch):
    """A library caller with threads of its own gets spawned workers (forking could copy a lock
    a thread holds), and the same problems as without workers."""
    path = _faulty_recording(tmp_path / "faulty.jsonl")
    expected = _one_record_at_a_time(monkeypatch, path)
    started = []
    real_start_pool = workers.start_pool
    monkeypatch.setattr(workers, "start_pool", lambda jobs, *args: started.append(
        workers.worker_context().get_start_method()) or real_start_pool(jobs, *args))
    stop = threading.Event()
    other = threading.Thread(target=stop.wait)
    other.start()
    try:
        assert _run(path, 2, 1024) == expected
    finally:
        stop.set()
        other.join()
    assert started == ["spawn"]


def test_workers_are_forked_when_this_thread_is_the_only_one(monkeypatch):
    # Other tests may leave threads behind (Dask's, say): the rule is checked, not this process.
    can_fork = "fork" in multiprocessing.get_all_start_methods()
    monkeypatch.setattr(threading, "active_count", lambda: 1)
    assert workers.worker_context().get_start_method() == ("fork" if can_fork else "spawn")
    monkeypatch.setattr(threading, "active_count", lambda: 2)
    assert workers.worker_context().get_start_method() == "spawn"


@pytest.mark.parametrize("jobs, batch_bytes", MODES, ids=MODE_IDS)
def test_max_errors_stops_at_the_same_problem(tmp_path, monkeypatch, jobs, batch_bytes):
    path = _faulty_recording(tmp_path / "faulty.jsonl")
    for max_errors in range(1, 7):
        expected = _one_record_at_a_time(monkeypatch, path, max_errors=max_errors)
        assert expected[1].stopped and expected[1].errors == max_errors
        assert _run(path, jobs, batch_bytes, max_errors=max_errors) == expected


@pytest.mark.parametrize("jobs, batch_bytes", MODES, ids=MODE_IDS)
def test_recorded_fixtures_alike_in_every_mode(jobs, batch_bytes):
    serial = validate_path(RECORDED, jobs=1)
    assert serial[1].files == 5 and serial[0] == []
    assert _run(RECORDED, jobs, batch_bytes) == serial
    for path in recorded_files():
        assert _run(path, jobs, batch_bytes) == validate_path(path, jobs=1)


FOREIGN = b'{"name": "not a record of ours"}\n'


def _mixed_lines(foreign_at: int) -> list[bytes]:
    steps = _recording(2)
    steps[3]["output"] = [_result("nobody")]
    lines = [orjson.dumps(step) + b"\n" for step in steps]
    lines[foreign_at] = FOREIGN
    return lines


@pytest.mark.parametrize("jobs, batch_bytes", MODES, ids=MODE_IDS)
def test_a_later_record_of_unknown_kind_is_an_error_in_a_folder_file_alike(tmp_path, monkeypatch, jobs,
                                                                             batch_bytes):
    """Only a file's first record tells that a folder's file is not ours: a later record of
    unknown kind is an error, and the rest of the file is still checked, in any batch."""
    lines = _mixed_lines(40)
    lines[60] = lines[60].replace(b'"role":"user"', b'"role":"human"', 1)
    path = tmp_path / "mixed.jsonl"
    path.write_bytes(b"".join(lines))
    problems, summary = _run(tmp_path, jobs, batch_bytes)
    assert (summary.files, summary.skipped, summary.records, summary.errors) == (1, 0, len(lines), 3)
    assert [(p.line, p.message) for p in problems] == [
        (4, "tool-result 'nobody' answers no earlier tool-call"),
        (41, "cannot tell what kind of record this is"),
        (61, '"human" is not one of: system, user, assistant, tool'),
    ]
    assert "--kind" in problems[1].hint
    expected = _one_record_at_a_time(monkeypatch, path, skip_unknown=True)
    assert _run(path, jobs, batch_bytes, skip_unknown=True) == expected == (problems, expected[1])


@pytest.mark.parametrize("jobs, batch_bytes", MODES, ids=MODE_IDS)
@pytest.mark.parametrize("head", [b"", b"\n" * 3000, b"\xef\xbb\xbf\n" + b" \n" * 1500,
                                  b"\n" * 1500 + b"\xef\xbb\xbf\n" + b"\n" * 1500],
                         ids=["first-line", "after-blank-batches", "after-bom-and-blanks", "after-a-bom-line-later"])
def test_a_folder_file_whose_first_record_is_not_ours_is_skipped_alike(tmp_path, monkeypatch, jobs,
                                                                         batch_bytes, head):
    """However many batches of blank lines come before it, the first record decides."""
    path = tmp_path / "foreign.jsonl"
    path.write_bytes(head + b"".join(_mixed_lines(0)))
    problems, summary = _run(tmp_path, jobs, batch_bytes)
    assert problems == [] and (summary.files, summary.skipped, summary.records) == (0, 1, 0)
    expected = _one_record_at_a_time(monkeypatch, path, skip_unknown=True)
    assert _unnamed(_run(path, jobs, batch_bytes, skip_unknown=True)) == _unnamed(expected) == _unnamed(([], summary))
    # Named without --skip-unknown, the same file is checked: its first record is an error.
    problems, summary = _run(path, jobs, batch_bytes)
    first = head.count(b"\n") + 1
    assert [(p.line, p.message) for p in problems] == [
        (first, "cannot tell what kind of record this is"),
        (first + 3, "tool-result 'nobody' answers no earlier tool-call"),
    ]
    assert _one_record_at_a_time(monkeypatch, path) == (problems, summary)


def _unnamed(result):
    """A run's problems and summary, the skipped files counted, not named (standard input is `-`)."""
    problems, summary = result
    return problems, summary.skipped, dataclasses.replace(summary, skipped_files=[])


BOM_STEP = b"\xef\xbb\xbf" + orjson.dumps(_fixture_steps()[0]) + b"\n"


@pytest.mark.parametrize("content", [b"", b"\n  \n\n", BOM_STEP], ids=["empty", "blank lines", "BOM"])
def test_edge_files_alike(tmp_path, content):
    path = tmp_path / "edge.jsonl"
    path.write_bytes(content)
    assert _run(path, 2, 1) == _run(path, 1, validate.BATCH_BYTES)


def test_line_batches_hold_whole_lines_numbered_as_in_the_file():
    content = b'{"a": 1}\n\n{"b": 2}\n' + b"c" * 50 + b'\n{"d": 4}'
    batches = list(iter_line_batches(io.BytesIO(content), 4))
    assert b"".join(lines for _, _, lines in batches) == content
    for number, offset, lines in batches:
        assert content[offset:offset + len(lines)] == lines
        assert number == content.count(b"\n", 0, offset) + 1
        assert lines.endswith(b"\n") or offset + len(lines) == len(content)


def test_a_conversation_pushed_out_of_the_window_has_its_open_calls_reported(tmp_path):
    path = write_jsonl(tmp_path / "r.jsonl", [
        _step("a", 0, [_call("x")]),
        _step("b", 0, []),
        _step("c", 0, []),            # a is the least recently active of three: it is forgotten
        _step("b", 1, []),
        _step("a", 1, [_result("x")]),  # a starts afresh: its call is not remembered
    ])
    assert validate_path(path)[0] == []  # the default window follows all three
    for jobs, batch_bytes in MODES:
        problems, _ = validate_path(path, jobs=jobs, batch_bytes=batch_bytes, conversation_window=2)
        assert [(p.line, p.message) for p in problems] == [
            (1, "tool-call 'x' is never answered"),  # when a is pushed out, not at the end
            (5, "tool-result 'x' answers no earlier tool-call"),
        ]
        assert problems[0].column == orjson.dumps(_step("a", 0, [_call("x")])).index(b'"toolCallId"') + 1


def test_the_window_follows_recent_activity_not_first_appearance(tmp_path):
    path = write_jsonl(tmp_path / "r.jsonl", [
        _step("a", 0, [_call("x")]),
        _step("b", 0, []),
        _step("a", 1, []),            # a is active again, so b is the one pushed out next
        _step("c", 0, []),
        _step("b", 0, []),            # b starts afresh (stepIndex 0 is not out of order); a goes
    ])
    problems, _ = validate_path(path, conversation_window=2)
    assert [(p.line, p.message) for p in problems] == [(1, "tool-call 'x' is never answered")]


def _crash(*args):
    os._exit(3)


def test_a_worker_that_dies_is_reported_not_waited_for(tmp_path, monkeypatch):
    path = write_jsonl(tmp_path / "r.jsonl", _recording(2))
    monkeypatch.setattr(validate.wire, "check_lines", _crash)  # what the workers call
    # Only forked workers inherit the patch; threads other tests leave behind would make them spawned.
    monkeypatch.setattr(workers, "worker_context", lambda: multiprocessing.get_context("fork"))
    problems, summary = validate_path(path, jobs=2, batch_bytes=1024)
    assert summary.unreadable == 1
    assert [p.message for p in problems] == ["validation stopped: a worker process ended unexpectedly"]

