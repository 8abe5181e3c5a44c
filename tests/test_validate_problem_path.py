"""The problem path: files where every line has a warning, or many lines an error, give the same
problems, in the same order, as one record at a time (the general path), whatever --jobs; the
summary counts them by code, and --max-warnings caps the lines printed, not the counts."""

from __future__ import annotations

import dataclasses
import io
import json
import sys

import orjson
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from chatconv.sources import UTF8_BOM, Record
from chatconv.sources.record import _json_positions, compact_position, unalias
from chatconv.validate import validate_path
from chatconv.validate.explain import explain
from conftest import read_jsonl, recorded_files, run_chatconv
from test_sources import _paths
from test_validate_rendered import _validate


def _base_steps() -> list[dict]:
    return [step for path in recorded_files() for step in read_jsonl(path) if "steps" not in step]


BASE = _base_steps()


def _call(call_id, key="input"):
    return {"role": "assistant", "content": [{"type": "tool-call", "toolCallId": call_id, "toolName": "t", key: {}}]}


def _result(call_id):
    return {"role": "tool", "content": [{"type": "tool-result", "toolCallId": call_id, "toolName": "t",
                                         "output": {"type": "text", "value": "v"}}]}


def _one_message(step: dict) -> dict:
    return dict(step, output=step["output"][0])


# Each fault turns a valid step (its number n in the file) into one line of the file.
FAULTS = {
    "clean": lambda step, n: orjson.dumps(step),
    "legacy": lambda step, n: orjson.dumps(_one_message(step)),
    "legacy, a call never answered": lambda step, n: orjson.dumps(dict(step, output=_call(f"never-{n}"))),
    "legacy, a call answered later": lambda step, n: orjson.dumps(dict(step, output=_call("shared"))),
    "legacy, a result answering nothing": lambda step, n: orjson.dumps(dict(step, output=_result(f"nobody-{n}"))),
    "legacy and AI SDK 4 parts": lambda step, n: orjson.dumps(dict(step, output=_call(f"old-{n}", "args"))),
    "legacy, written with spaces": lambda step, n: json.dumps(_one_message(step)).encode(),
    "legacy, non-ASCII before the output": lambda step, n: orjson.dumps(
        _one_message(dict(step, input={"role": "user", "content": "café ü → 日本"}))),
    "legacy, output written twice": lambda step, n: orjson.dumps(_one_message(step))[:-1]
    + b',"output":' + orjson.dumps(step["output"][0]) + b"}",
    "legacy, stepIndex going down": lambda step, n: orjson.dumps(_one_message(dict(step, stepIndex=0))),
    "legacy and an unknown key": lambda step, n: orjson.dumps(dict(_one_message(step), colour="red")),
    "a schema error": lambda step, n: orjson.dumps(dict(step, input=dict(step["input"], role="human"))),
    "two schema errors": lambda step, n: orjson.dumps(dict(step, input=dict(step["input"], role="human"),
                                                           timestamp="yesterday")),
    "a wrong type deep in the output": lambda step, n: orjson.dumps(
        dict(step, output=[*step["output"], {"role": "assistant", "content": [{"type": "text", "text": 5}]}])),
    "unknown key": lambda step, n: orjson.dumps(dict(step, colour="red")),
}


def _write(path, faults: list[str]) -> None:
    lines = []
    for n, fault in enumerate(faults):
        step = dict(BASE[n % len(BASE)], conversationId=f"c{n // 4}", stepIndex=n % 4)
        lines.append(FAULTS[fault](orjson.loads(orjson.dumps(step)), n) + b"\n")
    lines.append(orjson.dumps(dict(BASE[0], conversationId="last", output=[_result("shared")])) + b"\n")
    path.write_bytes(b"".join(lines))


def _one_record_at_a_time(monkeypatch, path):
    """Standard input takes the general path: every record read whole and checked alone."""
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(path.read_bytes())))
    problems, summary = validate_path("-")
    return [dataclasses.replace(problem, file=str(path)) for problem in problems], summary


@settings(max_examples=25, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(st.lists(st.sampled_from(list(FAULTS)), min_size=1, max_size=60))
def test_the_problem_path_gives_the_general_paths_problems_whatever_the_jobs(tmp_path_factory, monkeypatch, faults):
    path = tmp_path_factory.mktemp("problems") / "r.jsonl"
    _write(path, faults)
    expected = _one_record_at_a_time(monkeypatch, path)
    assert validate_path(path, jobs=1) == expected
    assert validate_path(path, jobs=1, batch_bytes=512) == expected
    assert validate_path(path, jobs=2, batch_bytes=2048) == expected


@pytest.mark.parametrize("jobs", [1, 2])
def test_every_fault_is_reported_as_one_record_at_a_time(tmp_path, monkeypatch, jobs):
    path = tmp_path / "r.jsonl"
    _write(path, [fault for fault in FAULTS for _ in range(3)] * 4)
    problems, summary = expected = _one_record_at_a_time(monkeypatch, path)
    assert validate_path(path, jobs=jobs, batch_bytes=4096) == expected
    codes = set(summary.by_code)
    assert {("legacy-shape", "warning"), ("tool-call-unanswered", "warning"), ("tool-result-orphan", "error"),
            ("bad-value", "error"), ("wrong-type", "error"), ("step-order", "error"),
            ("unknown-key", "warning")} <= codes
    assert sum(summary.by_code.values()) == len(problems) == summary.errors + summary.warnings
    # A call in a legacy step's one message is located in the line as written ($.output.content...).
    never = next(p for p in problems if "'never-" in p.message)
    line = path.read_bytes().split(b"\n")[never.line - 1]
    assert never.path == "$.output[0].content[0].toolCallId"
    assert never.column == line.index(b'"toolCallId":"never-') + 1
    # So is one in a step upgraded by the schema check (AI SDK 4 parts too), located across lines.
    old = next(p for p in problems if "'old-" in p.message)
    line = path.read_bytes().split(b"\n")[old.line - 1]
    assert old.path == "$.output[0].content[0].toolCallId"
    assert old.column == line.index(b'"toolCallId":"old-') + 1


@pytest.mark.parametrize("path", recorded_files(), ids=lambda p: p.name)
def test_compact_positions_are_the_walked_positions(path):
    for number, line in enumerate(path.read_bytes().splitlines(), 1):
        data = orjson.loads(line)
        text = orjson.dumps(data)  # the fixtures as orjson writes them, non-ASCII text included
        walked = _json_positions(text, number)
        for spot in [*(path for path, _ in _paths(data)), ("nowhere",), ("steps", 10**6, "x")]:
            expected = next(walked[spot[:end]] for end in range(len(spot), -1, -1) if spot[:end] in walked)
            assert compact_position(text, data, spot, number) == expected, spot


def test_text_that_orjson_would_not_write_is_walked():
    data = {"a": 1, "output": {"x": 1}}
    assert compact_position(b'{"a": 1, "output": {"x": 1}}', data, ("output",), 1) is None
    assert compact_position(b'{"a":1,"output":{"x":0},"output":{"x":1}}', data, ("output",), 1) is None
    assert compact_position(b'{"a":1,"output":{"x":1}}', data, ("output", "x"), 7) == (7, 18)


def test_a_path_of_upgraded_data_is_read_at_its_longest_alias():
    aliases = {("evalcases",): ("cases",), ("evalcases", 1, "input_messages"): ("cases", 1, "input")}
    assert unalias(("evalcases", 1, "input_messages", 0, "content"), aliases) == ("cases", 1, "input", 0, "content")
    assert unalias(("evalcases", 1, "id"), aliases) == ("cases", 1, "id")
    assert unalias(("description",), aliases) == ("description",)


def test_each_problem_of_an_upgraded_eval_file_is_located_in_its_text(tmp_path):
    cases = [{"id": f"c{i}", "outcome": "x", "input": f"q{i}", f"bogus_{i}": i} for i in range(40)]
    path = tmp_path / "old.json"
    path.write_text(json.dumps({"$schema": "agentv-eval-v2", "cases": cases}, indent=1))
    problems, _ = validate_path(path)
    unknown = [p for p in problems if p.code == "unknown-key"]
    assert len(unknown) == 40
    text = path.read_text().splitlines()
    for index, problem in enumerate(unknown):
        assert problem.path == f"$.evalcases[{index}].bogus_{index}"
        assert f'"bogus_{index}"' in text[problem.line - 1]


@pytest.mark.parametrize("fault", ["a schema error", "two schema errors", "a wrong type deep in the output",
                                   "unknown key", "legacy and AI SDK 4 parts"])
def test_narrowed_explanations_are_the_full_ones(fault, monkeypatch):
    """Explaining without walking the valid values gives the Problems a full walk gives."""
    from chatconv.schemas import explaining_validator

    explaining = sys.modules["chatconv.validate.explain"]
    monkeypatch.setattr(explaining, "failure_key", lambda record, kind: None)  # each explained, not recalled
    for n, step in enumerate(BASE):
        text = FAULTS[fault](orjson.loads(orjson.dumps(step)), n)
        narrow = explain(Record("f", 1, orjson.loads(text), text=text), "step-record")
        with monkeypatch.context() as patched:
            patched.setattr(explaining, "narrowed_validator", explaining_validator)
            full = explain(Record("f", 1, orjson.loads(text), text=text), "step-record")
        assert narrow == full and narrow


# Lines that fail alike, and lines that fail nearly alike but must be told apart: another wrong
# role (another hint), a float against an integer beyond 64 bits that orjson reads as that float
# (the text decides), the wrong value at another place, a YAML-like value of another type.
ALIKE = [
    b'{"conversationId":"c","stepIndex":0,"input":{"role":"human","content":"a"},"output":[]}',
    b'{"conversationId":"c","stepIndex":1,"input":{"role":"human","content":"b"},"output":[]}',
    b'{"conversationId":"c","stepIndex":2,"input":{"role":"bot","content":"b"},"output":[]}',
    b'{"conversationId":"c","stepIndex":3,"input":{"role":"Human","content":"b"},"output":[]}',
    b'{"conversationId":"c","stepIndex":4,"input":{"role":"user","content":1e20},"output":[]}',
    b'{"conversationId":"c","stepIndex":4,"input":{"role":"user","content":100000000000000000000},"output":[]}',
    b'{"conversationId":"c","stepIndex":-1,"input":{"role":"user","content":"a"},"output":[]}',
    b'{"conversationId":"c","stepIndex":"4","input":{"role":"user","content":"a"},"output":[]}',
    b'{"conversationId":"c","stepIndex":5,"colour":"red","input":{"role":"user","content":"a"},"output":[]}',
    b'{"conversationId":"c","stepIndex":5,"color":"red","input":{"role":"user","content":"a"},"output":[]}',
    b'{"conversationId":"c","stepIndex":6,"input":{"role":"user","content":5},"output":[]}',
    b'{"conversationId":"c","stepIndex":6,"input":{"role":"user","content":[5]},"output":[]}',
    b'{"conversationId":"c","stepIndex":7,"input":{"role":"user","content":"a"},"output":[{"role":"tool"}]}',
    # The same fault at another index: the path is part of what is recalled.
    b'{"conversationId":"c","stepIndex":7,"input":{"role":"user","content":"a"},"output":[{"role":"assistant",'
    b'"content":"x"},{"role":"tool"}]}',
    b'{"conversationId":"c","stepIndex":7,"input":{"role":"user","content":"a"},"output":[{"role":"tool",'
    b'"content":"x"}]}',
]


def test_records_failing_alike_are_explained_as_each_alone(monkeypatch):
    """Explanations recalled by what failed (recall.failure_key) are those of each record alone,
    located in its own line; records that fail alike are explained once."""
    explaining = sys.modules["chatconv.validate.explain"]
    lines = ALIKE * 3
    records = [Record("f.jsonl", n, orjson.loads(text), text=text) for n, text in enumerate(lines, 1)]
    kinds = ["step-record"] * len(records)
    monkeypatch.setattr(sys.modules["chatconv.validate.recall"], "_said", {})
    described = []
    real = explaining._described
    monkeypatch.setattr(explaining, "_described", lambda record, kind: described.append(1) or real(record, kind))
    recalled = [explain(record, k) for record, k in zip(records, kinds)]
    # Explained once each: the two "human" lines alike, and the 11 others; the 2 floats every time.
    assert len(described) == 12 + 2 * 3
    with monkeypatch.context() as patched:
        patched.setattr(explaining, "failure_key", lambda record, kind: None)
        alone = [explain(Record("f.jsonl", n, orjson.loads(text), text=text), k)
                 for (n, text), k in zip(enumerate(lines, 1), kinds)]
    assert recalled == alone
    assert all(recalled) and len({p.line for problems in recalled for p in problems}) == len(lines)
    assert {p.message for p in alone[0] + alone[2] + alone[3]} == {
        '"human" is not one of: system, user, assistant, tool', '"bot" is not one of: system, user, assistant, tool',
        '"Human" is not one of: system, user, assistant, tool'}
    # The integer beyond 64 bits is told by its digits, the float as a number.
    assert "100000000000000000000 (beyond 64 bits)" in alone[5][0].message
    assert "100000000000000000000" not in alone[4][0].message


# ---------------------------------------------------------------------------------------------
# The command line: counts by code, --max-warnings


def _legacy_file(tmp_path, count=30):
    """`count` legacy steps (a warning each), then three with an error each."""
    path = tmp_path / "legacy.jsonl"
    answer = {"role": "assistant", "content": "a"}
    steps = [{"conversationId": "c", "stepIndex": n, "input": {"role": "user", "content": "q"}, "output": answer}
             for n in range(count)]
    steps += [{"conversationId": "c", "stepIndex": n, "input": {"role": "human", "content": "q"}, "output": [answer]}
              for n in range(count, count + 3)]
    path.write_bytes(b"".join(orjson.dumps(step) + b"\n" for step in steps))
    return path


def test_text_output_counts_problems_by_code(tmp_path):
    result = run_chatconv("validate", _legacy_file(tmp_path))
    lines = result.stdout_text.splitlines()
    assert result.returncode == 1 and len(lines) == 33 + 3
    assert lines[-3] == "1 file, 33 records: 3 errors, 30 warnings"
    assert lines[-2:] == ["  30 × legacy-shape (warning)", "  3 × bad-value (error)"]


def test_max_warnings_caps_the_lines_of_each_code_not_the_counts(tmp_path):
    path = _legacy_file(tmp_path)
    result = run_chatconv("validate", "--max-warnings", "5", path)
    lines = result.stdout_text.splitlines()
    warnings = [line for line in lines if ": warning: " in line]
    errors = [line for line in lines if ": error: " in line]
    assert result.returncode == 1 and len(warnings) == 5 and len(errors) == 3  # errors are never held back
    assert warnings == [line for line in run_chatconv("validate", path).stdout_text.splitlines()
                        if ": warning: " in line][:5]  # the first five, in order
    assert lines[-3] == "1 file, 33 records: 3 errors, 30 warnings (25 warnings not printed: --max-warnings 5)"
    assert lines[-2] == "  30 × legacy-shape (warning; 25 not printed)"
    github = run_chatconv("validate", "--format", "github", "--max-warnings", "0", path)
    assert github.stdout_text.count("::warning ") == 0 and github.stdout_text.count("::error ") == 3
    assert "30 warnings (30 warnings not printed: --max-warnings 0)" in github.stderr_text


def test_json_output_counts_by_code_and_says_what_was_not_printed(tmp_path):
    path = _legacy_file(tmp_path)
    report = json.loads(run_chatconv("validate", "--format", "json", path).stdout)
    assert (report["errors"], report["warnings"], len(report["problems"])) == (3, 30, 33)
    assert report["counts"] == [
        {"code": "legacy-shape", "severity": "warning", "count": 30, "not_printed": 0},
        {"code": "bad-value", "severity": "error", "count": 3, "not_printed": 0}]
    assert report["not_printed"] == 0
    capped = json.loads(run_chatconv("validate", "--format", "json", "--max-warnings", "2", path).stdout)
    assert len(capped["problems"]) == 5 and capped["warnings"] == 30 and capped["not_printed"] == 28
    assert capped["counts"][0] == {"code": "legacy-shape", "severity": "warning", "count": 30, "not_printed": 28}


def test_import_max_warnings(tmp_path):
    body = {"messages": [{"role": "user", "content": "hi"},
                         {"role": "assistant", "content": None, "tool_calls": [
                             {"id": "c", "type": "function", "function": {"name": "f", "arguments": "not json"}}]},
                         {"role": "tool", "tool_call_id": "c", "content": "ok"}]}
    path = tmp_path / "bodies.jsonl"
    path.write_bytes(orjson.dumps(body) + b"\n" + orjson.dumps(body) + b"\n" + orjson.dumps(body) + b"\n")
    whole = run_chatconv("import", path)
    capped = run_chatconv("import", "--max-warnings", "1", path)
    assert whole.stdout == capped.stdout and whole.returncode == capped.returncode == 0
    assert whole.stderr_text.count(": warning: ") == 3 and capped.stderr_text.count(": warning: ") == 1
    assert capped.stderr_text.splitlines()[-2:] == ["(2 warnings not printed: --max-warnings 1)",
                                                    "  3 × arguments-not-json (warning; 2 not printed)"]


def test_migrate_takes_max_warnings(tmp_path):
    """migrate's problems are errors (a line that stops the run, unreadable input): the option
    is taken, so that one set of options serves validate, migrate and import, and holds none back."""
    path = _legacy_file(tmp_path, count=4)
    path.write_bytes(path.read_bytes().replace(b'"human"', b'"user"'))
    whole = run_chatconv("migrate", path)
    capped = run_chatconv("migrate", "--max-warnings", "0", path)
    assert whole.returncode == capped.returncode == 0 and whole.stdout == capped.stdout
    assert whole.stderr_text == capped.stderr_text and "4 migrated" in capped.stderr_text
    missing = run_chatconv("migrate", "--max-warnings", "0", tmp_path / "gone.jsonl")
    assert missing.returncode == 2 and "gone.jsonl" in missing.stderr_text


def _tool_step(conversation: str, index: int, parts: list[tuple[str, str]]) -> dict:
    """A step whose output holds a tool-call or a tool-result part for each (kind, id) of `parts`."""
    output = [_call(call_id) if kind == "call" else _result(call_id) for kind, call_id in parts]
    return {"conversationId": conversation, "stepIndex": index, "input": {"role": "user", "content": "go"},
            "output": output or [{"role": "assistant", "content": "done"}]}


def _step_lines(steps: list[tuple]) -> list[bytes]:
    """The JSON of each (conversation, parts, legacy, ...) of `steps`: its conversation's next
    step (_tool_step), a one-part output written as the message itself when `legacy` (as legacy
    recorders wrote it: a warning)."""
    following: dict[str, int] = {}
    lines = []
    for conversation, parts, legacy, *_ in steps:
        following[conversation] = following.get(conversation, -1) + 1
        step = _tool_step(conversation, following[conversation], parts)
        if legacy and len(step["output"]) == 1:
            step["output"] = step["output"][0]
        lines.append(orjson.dumps(step))
    return lines


_parts = st.lists(st.tuples(st.sampled_from(["call", "result"]), st.sampled_from(["a", "b", "c"])), max_size=4)


# A step: its conversation, its parts, whether a one-part output is written as legacy recorders
# wrote it (the one message itself: a warning), whether a blank line follows it.
_steps = st.lists(st.tuples(st.sampled_from(["x", "y"]), _parts, st.booleans(), st.booleans()), min_size=1, max_size=30)


# Each example starts worker pools three times (about a second): 15 and the examples below keep
# the suite within its time (it tried 60 in each CI run once, then 25).
@settings(max_examples=15, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(_steps)
@example([("x", [("call", "a"), ("result", "a")], False, False), ("y", [], False, False),
          ("x", [("call", "a"), ("result", "a")], False, False)])  # a duplicate
@example([("x", [("call", "a")], False, False), ("y", [], False, False),
          ("x", [("call", "a"), ("result", "a")], False, False)])  # an open call called again
# A run that settles, with a legacy step and a blank line in it, an id of which was called before
# (in the first of the batches of 1000 bytes).
@example([("x", [("call", "a"), ("result", "a")], False, False), ("y", [], False, False),
          ("x", [("call", "a")], True, True), ("x", [("result", "a")], True, False), *[("y", [], False, False)] * 6])
def test_runs_whose_calls_settle_among_themselves_pair_as_part_by_part(tmp_path_factory, monkeypatch, steps):
    """A run of steps whose calls are answered within it is only counted as seen (lines._settles,
    CallLedger.settle), without its tool lines, read again should they be needed: duplicates, repeats,
    orphans, calls left open and conversations that come back are found as the general path
    pairs each part, and the command writes them as one process does."""
    path = tmp_path_factory.mktemp("pairing") / "r.jsonl"
    lines = [line + b"\n" + (b"  \n" if step[3] else b"") for line, step in zip(_step_lines(steps), steps)]
    path.write_bytes(b"".join(lines))
    expected = _one_record_at_a_time(monkeypatch, path)
    assert validate_path(path, jobs=1) == expected
    assert validate_path(path, jobs=2, batch_bytes=600) == expected
    # Exit status, output and errors; the workers write the lines' own problems (see rendered).
    alone = _validate(monkeypatch, [str(path)], 1, 10**9)[:3]
    for size in (300, 1000):
        assert _validate(monkeypatch, [str(path)], 2, size)[:3] == alone


def test_a_run_settles_only_when_its_calls_are_all_answered_within_it():
    from chatconv.validate.lines import LineOptions, check_lines
    from chatconv.validate.rendered import BlockWriter, Rendering

    options = LineOptions("r.jsonl", None, True, False, False, rendering=Rendering("text"))

    def run(*steps, legacy=False, **checking):
        """(settled, its tool lines) of the one run of these steps' parts, one step a line."""
        made = [_tool_step("x", index, parts) for index, parts in enumerate(steps)]
        if legacy:
            made[-1]["output"] = made[-1]["output"][0]
        lines = b"".join(orjson.dumps(step) + b"\n" for step in made)
        (entry,) = check_lines(lines, 1, options, True, **checking)
        return entry.steps.settled, entry.steps.tool_lines

    settled = run([("call", "a"), ("result", "a")], [("call", "b")], [("result", "b"), ("result", "b")])
    assert settled == (("a", "b"), None)  # a result repeated is no problem
    assert run([], []) == ((), None)
    assert run([("call", "a")])[0] is None  # left open
    assert run([("result", "a")], [("call", "a"), ("result", "a")])[0] is None  # answers a call before the run
    assert run([("call", "a"), ("result", "a"), ("call", "a"), ("result", "a")])[0] is None  # a duplicate
    # A legacy step's warning is the line's own problem, unless the worker wrote it already.
    legacy, tool_lines = run([("call", "a")], [("result", "a")], legacy=True)
    assert legacy is None and tool_lines[1].problems[0].code == "legacy-shape"
    assert run([("call", "a")], [("result", "a")], legacy=True, written=BlockWriter("r.jsonl", Rendering("text"))) \
        == (("a",), None)
    # Asked to, every run keeps its tool lines, their parts located by path.
    kept, tool_lines = run([("call", "a"), ("result", "a")], [("call", "b")], [("result", "b")], settle=False)
    assert kept is None and [(line.offset, line.where.number, [part[:2] for part in line.parts]) for line in tool_lines] \
        == [(0, 1, [(True, "a"), (False, "a")]), (1, 2, [(True, "b")]), (2, 3, [(False, "b")])]


# Lines a run of steps may hold that are no record (blank, white space, a BOM alone), and one
# that ends it (not JSON).
_ODD_LINES = [b"", b"  ", b"\t", b"\r", UTF8_BOM, UTF8_BOM + b" ", b"not json"]


@settings(max_examples=150, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["x", "y"]), _parts, st.booleans(), st.sampled_from([None, *_ODD_LINES])),
                min_size=1, max_size=20),
       st.sampled_from([b"\n", b"\r\n"]), st.booleans(), st.booleans())
def test_a_settled_runs_tool_lines_read_again_are_those_its_batch_gives(steps, newline, last_newline, written):
    """LineBatch.tool_lines, from a run's first line and its count, finds the lines check_lines
    read, whatever lies among them, and their tool lines as check_lines gives them when asked to
    keep them (located alike, in the run's own batch; no problem of their own)."""
    from chatconv.validate.lines import LineOptions, check_lines
    from chatconv.validate.rendered import BlockWriter, Rendering
    from chatconv.validate.wire import LineBatch

    lines = [line for step, odd in zip(_step_lines(steps), (step[3] for step in steps))
             for line in (step, *([] if odd is None else [odd]))]
    data = newline.join(lines) + (newline if last_newline else b"")
    options = LineOptions("r.jsonl", None, True, False, False, rendering=Rendering("text"))

    def entries(settle):
        return check_lines(data, 1, options, True, BlockWriter("r.jsonl", Rendering("text")) if written else None,
                           settle=settle)

    batch, settled, kept = LineBatch("r.jsonl", data, options), entries(True), entries(False)
    assert [entry.where for entry in settled] == [entry.where for entry in kept]
    for entry, whole in zip(settled, kept):
        if entry.steps is None or entry.steps.tool_lines is not None:
            continue
        own_batch, tool_lines = batch.tool_lines(tuple(entry.where), entry.steps.count)
        assert [(line.offset, line.where.number, own_batch.record(line.where).text, line.where.aliases, line.parts,
                 line.problems) for line in tool_lines] == \
            [(line.offset, line.where.number, batch.record(line.where).text, line.where.aliases, line.parts, ())
             for line in whole.steps.tool_lines]


def test_a_tool_part_whose_type_is_written_with_escapes_is_paired(tmp_path, monkeypatch):
    # JSON may write any character as \uXXXX: the text of a line cannot tell it holds no tool part.
    call = orjson.dumps(_tool_step("c", 0, [("call", "a")])).replace(b'"tool-call"', b'"tool\\u002dcall"')
    answer = orjson.dumps(_tool_step("c", 1, [("result", "b")])).replace(b'"tool-result"', b'"\\u0074ool-result"')
    path = tmp_path / "escaped.jsonl"
    path.write_bytes(call + b"\n" + answer + b"\n")
    problems, _ = expected = _one_record_at_a_time(monkeypatch, path)
    assert sorted(problem.code for problem in problems) == ["tool-call-unanswered", "tool-result-orphan"]
    assert validate_path(path, jobs=1) == validate_path(path, jobs=2, batch_bytes=100) == expected
