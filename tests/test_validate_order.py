"""Problems come out sorted by file, line and column, whatever order they were found in, and
the whole file is not held to sort it."""

from __future__ import annotations

import orjson
from hypothesis import given, settings
from hypothesis import strategies as st

from chatconv.problems import Problem
from chatconv.validate import validate_path
from chatconv.validate.order import CHECK_EVERY, PlaceOrder
from test_validate_parallel import MODES, _call, _faulty_recording, _step

# A problem per (line, column), found in some order; `late` problems are found after later lines'
# (as an unanswered call's is), each no earlier than the line it is found at says.
places = st.lists(st.tuples(st.integers(0, 40), st.integers(0, 3), st.integers(0, 3)), max_size=60)


@settings(max_examples=150, deadline=None)
@given(places, st.randoms(use_true_random=False), st.integers(1, 5))
def test_any_order_found_comes_out_sorted_and_whole(found, random, every):
    problems = [Problem("f.jsonl", line or None, column or None, "$", f"#{n}", code="bad-value")
                for n, (line, column, _) in enumerate(found)]
    # Found in an order where each problem may come late: shuffled, then released as the reader
    # passes lines, never past a problem still to come (what the caller promises).
    pending = problems[:]
    random.shuffle(pending)
    order, out = PlaceOrder(), []
    for index, problem in enumerate(pending):
        order.add(problem)
        if index % every == 0:
            still = [p.line or 0 for p in pending[index + 1:]]
            out += order.release("f.jsonl", min(still, default=10**9))
    out += order.drain()
    assert len(out) == len(problems) and set(map(id, out)) == set(map(id, problems))
    assert [p.place for p in out] == sorted(p.place for p in problems)
    # one place's problems keep the order they were found in
    for place in {p.place for p in out}:
        assert [p for p in out if p.place == place] == [p for p in pending if p.place == place]


def test_a_late_problem_comes_before_later_lines_problems(tmp_path):
    lines = [_step("c", 0, [_call("never")])]  # a call on line 1, told unanswered at the end
    lines += [dict(_step("c", index, [{"role": "assistant", "content": "hi"}]), colour=index)
              for index in range(1, 40)]  # an unknown key on each later line: a warning each
    path = tmp_path / "late.jsonl"
    path.write_bytes(b"".join(orjson.dumps(line) + b"\n" for line in lines))
    problems, summary = validate_path(path)
    assert problems[0].code == "tool-call-unanswered" and problems[0].line == 1
    assert [p.place for p in problems] == sorted(p.place for p in problems)
    assert summary.warnings == len(problems) == 40


def test_problems_wait_behind_a_call_still_open_when_the_order_is_due(tmp_path):
    """More than CHECK_EVERY warnings after an early call that is never answered: the release
    due on the way lets go of none of them before the call's problem, told at the end."""
    lines = [_step("c", 0, [_call("never")])]
    lines += [dict(_step("c", index, [{"role": "assistant", "content": "hi"}]), colour=index)
              for index in range(1, CHECK_EVERY * 3)]
    path = tmp_path / "open.jsonl"
    path.write_bytes(b"".join(orjson.dumps(line) + b"\n" for line in lines))
    problems, _ = validate_path(path)
    assert problems[0].code == "tool-call-unanswered" and problems[0].line == 1
    assert [p.place for p in problems] == sorted(p.place for p in problems)
    assert len(problems) == CHECK_EVERY * 3


def test_the_faulty_recording_is_sorted_alike_in_every_mode(tmp_path):
    path = _faulty_recording(tmp_path / "faulty.jsonl")
    runs = [validate_path(path, jobs=jobs, batch_bytes=batch_bytes)[0] for jobs, batch_bytes in MODES]
    assert all(run == runs[0] for run in runs)
    assert [p.place for p in runs[0]] == sorted(p.place for p in runs[0])


def test_problems_are_let_go_while_the_file_is_read(tmp_path, monkeypatch):
    """A file with a warning on every line holds about CHECK_EVERY problems, not all of them."""
    lines = [dict(_step(f"c{index}", 0, [{"role": "assistant", "content": "hi"}]), colour=index)
             for index in range(CHECK_EVERY * 6)]
    path = tmp_path / "warns.jsonl"
    path.write_bytes(b"".join(orjson.dumps(line) + b"\n" for line in lines))
    most = []
    add = PlaceOrder.add

    def watched(self, problem):
        add(self, problem)
        most.append(len(self))

    monkeypatch.setattr(PlaceOrder, "add", watched)
    problems, _ = validate_path(path)
    assert len(problems) == CHECK_EVERY * 6
    assert max(most) <= CHECK_EVERY + 1
    assert [p.line for p in problems] == sorted(p.line for p in problems)
