"""Problems the workers write (validate.rendered): the output is the same bytes as when each
problem is a Problem, whatever the batches, the workers, the format and the options, and the
problems found across lines fall among a block's at their place."""

from __future__ import annotations

import orjson
import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from chatconv.cli import cli
from chatconv.cli import validate as validate_command
from chatconv.problems import Problem
from chatconv.validate import ProblemBlock, Rendering, Validator
from chatconv.validate.order import PlaceOrder
from chatconv.validate.rendered import BlockWriter, from_wire
from test_validate_parallel import MODES, MODE_IDS, _call, _faulty_recording, _recording, _result


def _expanded(items) -> list[bytes]:
    """Each problem's text line, from Problems and blocks alike."""
    lines = []
    for item in items:
        if isinstance(item, ProblemBlock):
            lines += item.written().splitlines(keepends=True)
        else:
            lines.append((item.format_text() + "\n").encode())
    return lines


def _block(problems: list[Problem], fmt: str = "text", keep=None) -> tuple[ProblemBlock | None, int]:
    writer = BlockWriter("f.jsonl", Rendering(fmt, keep))
    assert writer.take(tuple(problems)) == ()
    return from_wire("f.jsonl", writer.wire()) if writer.wire() else (None, 0)


def _problem(line: int, column: int, n: int, code: str = "bad-value", severity: str = "error") -> Problem:
    return Problem("f.jsonl", line, column or None, "$", f"#{n}", severity, code=code)


# Lines 1..40: each batch's own problems, then, found while a line is read, problems across
# lines at that line or an earlier one (a call told unanswered later, say), and now and then a
# release before the earliest line a problem still to be found can be at.
batches = st.lists(st.lists(st.tuples(st.integers(0, 3), st.lists(st.tuples(st.integers(0, 8), st.integers(0, 3)),
                                                                   max_size=3)),
                            min_size=1, max_size=6), max_size=8)


@settings(max_examples=200, deadline=None)
@given(batches, st.lists(st.booleans(), min_size=50, max_size=50), st.data())
def test_blocks_come_out_as_their_problems_would(batches, due, data):
    with_blocks, reference = PlaceOrder(), PlaceOrder()
    out_blocks, out_reference = [], []
    line, n = 0, 0
    for batch in batches:
        first = line + 1
        own = []
        for offset, (count, _) in enumerate(batch):
            for column in range(count):
                own.append(_problem(first + offset, column * 7, n := n + 1))
        block, _ = _block(own)
        if block is not None:
            with_blocks.add_block(block)
        for problem in own:
            reference.add(problem)
        for offset, (_, across) in enumerate(batch):
            line = first + offset
            if due[line % 50]:
                # No problem found from here on is before the line read, or before an earlier line
                # still waiting (the earliest of those found across lines from here on).
                later = [max(1, at - back) for at in range(line, first + len(batch)) for back, _ in batch[at - first][1]]
                before = min([line, *later])
                out_blocks += with_blocks.release("f.jsonl", before)
                out_reference += reference.release("f.jsonl", before)
            for back, column in across:
                found = _problem(max(1, line - back), data.draw(st.sampled_from([0, 7, column])), n := n + 1,
                                 "tool-call-unanswered")
                with_blocks.add(found)
                reference.add(found)
    out_blocks += with_blocks.drain()
    out_reference += reference.drain()
    assert _expanded(out_blocks) == _expanded(out_reference)
    assert len(with_blocks) == len(reference) == 0


def test_a_block_is_split_where_a_problem_found_later_comes_between():
    block, _ = _block([_problem(1, 1, 1), _problem(2, 5, 2), _problem(2, 9, 3), _problem(4, 1, 4)])
    order = PlaceOrder()
    order.add_block(block)
    order.add(_problem(2, 5, 5, "tool-call-unanswered"))  # at a place of the block: after its own
    order.add(_problem(3, 1, 6, "tool-call-unanswered"))
    first = list(order.release("f.jsonl", 3))
    assert [type(item) for item in first] == [ProblemBlock, Problem, ProblemBlock]
    assert [line.split(b": ")[-1] for line in _expanded(first)] == [b"#1\n", b"#2\n", b"#5\n", b"#3\n"]
    assert len(order) == 2  # line 3's and line 4's are held: a problem at line 3 may still come
    assert [line.split(b": ")[-1] for line in _expanded(order.drain())] == [b"#6\n", b"#4\n"]


def test_a_block_counts_and_keeps_as_the_problems_would():
    problems = [_problem(1, 1, 1, "legacy-shape", "warning"), _problem(1, 4, 2),
                _problem(2, 1, 3, "legacy-shape", "warning"), _problem(3, 2, 4, "unknown-key", "warning")]
    block, ignored = _block(problems, keep=lambda p: p.code != "unknown-key")
    assert ignored == 1 and len(block) == 3
    assert block.severities() == {("legacy-shape", "warning"): 2, ("bad-value", "error"): 1}
    assert [code for code, _, _ in block.lines()] == ["legacy-shape", "bad-value", "legacy-shape"]
    json_block, _ = _block(problems, "json")
    assert [orjson.loads(line) for line in json_block.written().splitlines()] == [p.to_dict() for p in problems]


@pytest.mark.parametrize("fmt", ["text", "json"])
def test_problems_a_block_cannot_hold_stay_problems(fmt):
    writer = BlockWriter("f.jsonl", Rendering(fmt))
    elsewhere = Problem("other.yaml", 3, 1, "$", "a file it names is missing", code="file-reference")
    odd_name = Problem("f.jsonl", 4, 1, "$", "bad \udcff byte", code="invalid-utf8")
    assert writer.take((_problem(1, 1, 1), elsewhere, odd_name)) == (elsewhere, odd_name)
    block, _ = from_wire("f.jsonl", writer.wire())
    assert len(block) == 1


def _legacy_faulty(path):
    """A recording whose every one-message step is written as legacy recorders wrote it (a
    warning each), with problems across lines among them: results answering nothing, calls never
    answered, a stepIndex going down, a call id used twice; and errors of lines of their own."""
    steps = _recording(40)
    for step in steps:
        if len(step["output"]) == 1:
            step["output"] = step["output"][0]
    for at in range(150, len(steps), 400):
        steps[at]["output"] = [_result(f"nobody-{at}")]
        steps[at + 40]["output"] = _call(f"never-{at}")
        steps[at + 90]["input"]["role"] = "human"
        steps[at + 120]["colour"] = "red"
    steps[700]["output"] = [_call("twice"), _result("twice"), _call("twice"), _result("twice")]
    later = next(i for i in range(1000, len(steps)) if steps[i]["stepIndex"] > 1)
    steps[later]["stepIndex"] = 0
    lines = [orjson.dumps(step) + b"\n" for step in steps]
    lines[333] = b'{"stepIndex": 1, "input": \n'
    path.write_bytes(b"".join(lines))
    return path


@pytest.fixture(scope="module")
def recordings(tmp_path_factory):
    folder = tmp_path_factory.mktemp("rendered")
    return [_legacy_faulty(folder / "legacy.jsonl"), _faulty_recording(folder / "faulty.jsonl")]


def _validate(monkeypatch, args, jobs, batch_bytes) -> tuple[int, bytes, bytes, int]:
    """The command's exit status, output and errors, and the blocks its reporter was given."""
    blocks = []
    real = Validator.run

    def run(self, paths):
        for item in real(self, paths):
            blocks.extend([item] if isinstance(item, ProblemBlock) else [])
            yield item

    monkeypatch.setattr(validate_command, "Validator",
                        lambda **options: Validator(**options, batch_bytes=batch_bytes))
    monkeypatch.setattr(Validator, "run", run)
    result = CliRunner().invoke(cli, ["validate", *args, "--jobs", str(jobs)])
    return result.exit_code, result.stdout_bytes, result.stderr_bytes, len(blocks)


OPTIONS = [[], ["--format", "json"], ["--max-warnings", "3"], ["--format", "json", "--max-warnings", "0"],
           ["--ignore", "legacy-shape"], ["--select", "tool-call-unanswered,bad-value", "--format", "json"],
           ["--max-errors", "4"], ["--format", "github", "--max-warnings", "2"]]


@pytest.mark.parametrize("jobs, batch_bytes", MODES[1:], ids=MODE_IDS[1:])
@pytest.mark.parametrize("options", OPTIONS, ids=[" ".join(o) or "text" for o in OPTIONS])
def test_the_output_is_the_same_bytes_as_one_problem_at_a_time(monkeypatch, recordings, jobs, batch_bytes, options):
    paths = [str(path) for path in recordings]
    expected = _validate(monkeypatch, [*paths, *options], 1, 10**9)
    assert expected[3] == 0 and expected[0] == 1  # in this process, every problem a Problem
    assert b"legacy-shape" in expected[1] + expected[2] or {"--select", "--ignore"} & set(options)
    got = _validate(monkeypatch, [*paths, *options], jobs, batch_bytes)
    assert got[:3] == expected[:3]
    written = jobs > 1 and "--max-errors" not in options and "github" not in options
    assert (got[3] > 0) == written  # the workers wrote the problems: each batch's a block


@settings(max_examples=200, deadline=None)
@given(st.text(min_size=1, max_size=20), st.integers(1, 10**7), st.integers(1, 10**6),
       st.text(st.characters(blacklist_categories=()), max_size=30),  # lone surrogates too: not written
       st.none() | st.text(max_size=30), st.sampled_from(["warning", "error"]), st.sampled_from(["text", "json"]))
def test_a_warning_written_at_a_place_is_the_problem_written(file, line, column, message, hint, severity, fmt):
    template = Problem(file, None, None, "$.output", message, severity, hint, "legacy-shape")
    by_place, whole = BlockWriter(file, Rendering(fmt)), BlockWriter(file, Rendering(fmt))
    expected = whole.take((Problem(file, line, column, "$.output", message, severity, hint, "legacy-shape"),))
    assert by_place.take_at(template, line, column) is (expected == ())
    if expected == ():
        assert by_place.take_at(template, line + 1, column) and whole.take((Problem(
            file, line + 1, column, "$.output", message, severity, hint, "legacy-shape"),)) == ()
        assert by_place.wire()[1:] == whole.wire()[1:] and by_place.lines == whole.lines


def test_blocks_come_back_through_shared_memory(monkeypatch, recordings):
    """Forked workers hand their blocks back through the pool's shared memory, not the pipe;
    the output is the same."""
    import multiprocessing

    from chatconv import handback, workers

    expected = _validate(monkeypatch, [str(recordings[0])], 1, 10**9)
    read = []
    real_read = handback.Slots.read
    monkeypatch.setattr(handback.Slots, "read", lambda self, slot, length: read.append(length) or
                        real_read(self, slot, length))
    monkeypatch.setattr(workers, "worker_context", lambda: multiprocessing.get_context("fork"))
    got = _validate(monkeypatch, [str(recordings[0])], 2, 16 * 1024)
    assert got[:3] == expected[:3] and got[3] > 0
    assert len(read) >= got[3] // 2 and sum(read) > len(expected[1]) // 2  # most blocks' lines came shared


def test_a_block_found_out_of_order_is_held_problem_by_problem():
    """A block whose first place comes before a problem held already (not met by batches read
    in order) goes on the heap a problem at a time: the output stays in order."""
    order = PlaceOrder()
    order.add(_problem(10, 1, 1))
    block, _ = _block([_problem(1, 1, 2), _problem(3, 1, 3), _problem(5, 1, 4)])
    order.add_block(block)
    assert len(order) == 4  # problems, not items
    order.add(_problem(4, 1, 5))
    assert [line.split(b": ")[-1] for line in _expanded(order.drain())] == [b"#2\n", b"#3\n", b"#5\n", b"#4\n",
                                                                            b"#1\n"]
    assert len(order) == 0


def test_problems_of_other_files_come_out_in_order_around_a_block():
    order = PlaceOrder()
    block, _ = _block([_problem(1, 1, 1), _problem(2, 1, 2), _problem(3, 1, 3)])
    order.add_block(block)
    order.add(Problem("z.jsonl", 1, 1, "$", "#z", code="bad-value"))
    order.add(Problem("a.jsonl", 9, 1, "$", "#a", code="bad-value"))  # before f.jsonl's, by name
    out = list(order.drain())
    assert [line.split(b": ")[-1] for line in _expanded(out)] == [b"#a\n", b"#1\n", b"#2\n", b"#3\n", b"#z\n"]


def test_a_problem_before_the_last_written_stays_a_problem():
    """An eval file's line that reads its cases from the file itself has problems at other
    lines: a block holds only problems in order of place, the rest stay Problems."""
    writer = BlockWriter("f.jsonl", Rendering("text"))
    early, same = _problem(2, 5, 3), _problem(7, 1, 4)
    assert writer.take((_problem(7, 1, 1), _problem(9, 2, 2), early, same)) == (early, same)
    warning = Problem("f.jsonl", None, None, "$.output", "legacy", "warning", None, "legacy-shape")
    assert not writer.take_at(warning, 8, 1) and writer.take_at(warning, 9, 2) and writer.take_at(warning, 10, 1)
    block, _ = from_wire("f.jsonl", writer.wire())
    assert [block.place(i)[1:] for i in range(len(block))] == [(7, 1), (9, 2), (9, 2), (10, 1)]


def test_an_eval_file_reading_its_own_lines_is_reported_alike_by_workers(tmp_path, monkeypatch):
    lines = [orjson.dumps({"id": f"t{i}", "input": 5, "criteria": "ok"}) for i in range(20)]
    lines.append(orjson.dumps({"description": "x", "tests": "file://own.jsonl"}))
    path = tmp_path / "own.jsonl"
    path.write_bytes(b"\n".join(lines) + b"\n")
    for options in ([], ["--format", "json"]):
        expected = _validate(monkeypatch, [str(path), *options], 1, 10**9)
        assert b"own.jsonl:1:12:" in expected[1] or b'"line":1,"column":12' in expected[1]
        assert _validate(monkeypatch, [str(path), *options], 2, 200)[:3] == expected[:3]


def test_an_unknown_rendering_is_a_usage_error_not_a_worker_traceback():
    from chatconv.problems import UsageError

    with pytest.raises(UsageError, match="render must be one of None, text, json, not 'xml'"):
        Validator(render="xml")
