"""Several files and folders in the recording commands, JSON files holding an array of records,
and --field with nested keys (validate, text, tools, dataset, migrate)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import orjson
from hypothesis import HealthCheck, given, settings, strategies as st

from conftest import run_chatconv
from chatconv.recordings import iter_paths_records, iter_paths_steps
from chatconv.sources import adapt, parse_field_map, restore

TRACES = Path(__file__).parent / "data" / "traces" / "stepTraces.json"  # not in recorded/: that folder validates clean
FIELDS = ["--field", "input=turn.userMessage", "--field", "output=agentMessages"]


class _Run:
    def __init__(self, result):
        self.exit_code, self.stdout, self.stderr = result.returncode, result.stdout_text, result.stderr_text
        self.output = self.stdout + self.stderr


def run(*args):
    return _Run(run_chatconv(*args))


def step(conversation, index, text="hi"):
    return {"conversationId": conversation, "stepIndex": index, "input": {"role": "user", "content": text},
            "output": [{"role": "assistant", "content": text.upper()}]}


def write_jsonl(path: Path, records) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return path


def test_text_reads_files_and_folders_in_order(tmp_path):
    write_jsonl(tmp_path / "a.jsonl", [step("a", 0, "one")])
    folder = tmp_path / "more"
    folder.mkdir()
    write_jsonl(folder / "b.jsonl", [step("b", 0, "two")])
    (folder / "c.json").write_text(json.dumps([step("c", 0, "three"), step("c", 1, "four")]))
    result = run("text", tmp_path / "a.jsonl", folder)
    assert result.exit_code == 0, result.output
    assert [orjson.loads(line)["text"] for line in result.stdout.splitlines()] == ["ONE", "TWO", "THREE", "FOUR"]


def test_dataset_names_steps_after_their_own_file(tmp_path):
    first = {k: v for k, v in step(None, 0).items() if k != "conversationId"}
    write_jsonl(tmp_path / "x.jsonl", [first])
    write_jsonl(tmp_path / "y.jsonl", [first])
    result = run("dataset", tmp_path / "x.jsonl", tmp_path / "y.jsonl")
    assert [orjson.loads(line)["id"] for line in result.stdout.splitlines()] == ["x-step-0", "y-step-0"]


def test_tools_pairs_calls_within_a_file(tmp_path):
    call = {"role": "assistant", "content": [{"type": "tool-call", "toolCallId": "t1", "toolName": "f", "input": {}}]}
    answer = {"role": "tool", "content": [{"type": "tool-result", "toolCallId": "t1", "toolName": "f",
                                           "output": {"type": "json", "value": 1}}]}
    write_jsonl(tmp_path / "calls.jsonl", [{**step("c", 0), "output": [call]}])
    write_jsonl(tmp_path / "results.jsonl", [{**step("c", 1), "output": [answer]}])
    result = run("tools", tmp_path / "calls.jsonl", tmp_path / "results.jsonl")
    rows = [orjson.loads(line) for line in result.stdout.splitlines()]
    assert [row["status"] for row in rows] == ["unanswered"]  # the result in another file answers nothing
    assert "answers no tool call" in result.stderr or "t1" in result.stderr


def test_missing_path_is_reported_and_the_others_read(tmp_path):
    write_jsonl(tmp_path / "a.jsonl", [step("a", 0)])
    for command in ("text", "tools", "dataset"):
        result = run(command, tmp_path / "missing.jsonl", tmp_path / "a.jsonl")
        assert result.exit_code == 2, command
        assert "missing.jsonl" in result.stderr and "no such file" in result.stderr
        assert "Traceback" not in result.output
    assert "HI" in run("text", tmp_path / "missing.jsonl", tmp_path / "a.jsonl").stdout


def test_nested_fields_in_text_and_dataset():
    result = run("text", TRACES, *FIELDS)
    assert result.exit_code == 1  # the second turn's user message content is a number
    assert orjson.loads(result.stdout.splitlines()[0]) == {"conversationId": "c1", "stepIndex": 0, "text": "4"}
    # The problem is at `content` inside turn.userMessage, line 6 column 45 of the file.
    assert f"{TRACES}:6:45: error: $[1].input.content" in result.stderr
    result = run("dataset", TRACES, *FIELDS)
    assert orjson.loads(result.stdout.splitlines()[0])["prompt"] == "What is 2+2?"


def test_validate_json_array_elements_with_fields(tmp_path):
    result = run("validate", TRACES, *FIELDS)
    assert "2 records" in result.output
    assert f"{TRACES}:6:45: error: $[1].input.content" in result.output
    assert f"{TRACES}:7:4: warning: $[1].output: legacy shape" in result.output  # at agentMessages
    plain = run("validate", TRACES)
    assert f"{TRACES}:2:3: error: $[0]: missing required key 'input'" in plain.output


def test_validate_keeps_arrays_that_are_not_records(tmp_path):
    messages = tmp_path / "m.json"
    messages.write_text(json.dumps([{"role": "user", "content": "hi"}]))
    assert run("validate", messages).exit_code == 0  # a chat prompt, one record
    fine_tuning = tmp_path / "f.json"
    fine_tuning.write_text(json.dumps([{"messages": []}]))
    assert "cannot tell what kind of record this is" in run("validate", fine_tuning).output
    empty = tmp_path / "e.json"
    empty.write_text("[]")
    assert "Traceback" not in run("validate", empty).output
    truncated = tmp_path / "t.json"
    truncated.write_text('[{"stepIndex": 0,')
    result = run("validate", truncated)
    assert "invalid JSON" in result.output and "truncated" in result.output


def test_repeated_keys_are_reported_in_their_elements(tmp_path):
    path = tmp_path / "d.json"
    path.write_text('[\n {"stepIndex": 0, "input": {"role": "user", "content": "a"}, "output": [], "input": 1},\n'
                    '  {"stepIndex": 1, "input": {"role": "user", "content": "a", "role": "user"}, "output": []}\n]\n')
    result = run("validate", path)
    assert f"{path}:2:76: error: $[0].input: duplicate key 'input'" in result.output, result.output
    assert f"{path}:3:62: error: $[1].input.role: duplicate key 'role'" in result.output
    assert result.output.count("duplicate key") == 2 and "2 records" in result.output  # each once, in its element


def test_recordings_refuse_empty_and_truncated_arrays(tmp_path):
    (tmp_path / "e.json").write_text("[]")
    (tmp_path / "t.json").write_text('[{"stepIndex": 0,')
    for name, words in (("e.json", "empty array"), ("t.json", "invalid JSON")):
        result = run("text", tmp_path / name)
        assert result.exit_code == 1 and words in result.stderr and "Traceback" not in result.output


def test_field_through_a_value_that_is_not_an_object(tmp_path):
    path = tmp_path / "s.jsonl"
    write_jsonl(path, [{"stepIndex": 0, "turn": "text", "output": []}])
    for command in ("text", "validate"):
        result = run(command, path, "--field", "input=turn.userMessage")
        assert "'turn' is not an object" in result.output, command
        assert f"{path}:1:" in result.output


def test_field_in_steps_read_from_a_nested_key_is_located(tmp_path):
    # The steps of a conversation read from `trace.turns`, a step's input from turn.userMessage:
    # the problem is at the content where it is in the file (line 5), not at the step.
    path = tmp_path / "c.json"
    path.write_text('{"id": "c1",\n "trace": {"turns": [\n'
                    '   {"stepIndex": 0, "turn": {"userMessage": {"role": "user", "content": "hi"}}, "output": []},\n'
                    '   {"stepIndex": 1,\n'
                    '    "turn": {"userMessage": {"role": "user", "content": 5}}, "output": []}]}}\n')
    result = run("validate", path, "--field", "steps=trace.turns", "--field", "input=turn.userMessage")
    assert f"{path}:5:46: error: $.steps[1].input.content" in result.output, result.output
    path.write_text(path.read_text().replace('"trace": {"turns"', '"turns"').replace("]}}", "]}"))  # one key
    result = run("validate", path, "--field", "steps=turns", "--field", "input=turn.userMessage")
    assert f"{path}:5:46: error: $.steps[1].input.content" in result.output, result.output


def test_migrate_json_array_with_fields_is_idempotent(tmp_path):
    target = tmp_path / "stepTraces.json"
    shutil.copy(TRACES, target)
    before = json.loads(target.read_text())
    assert run("migrate", "--in-place", target, *FIELDS).exit_code == 0
    after = json.loads(target.read_text())
    assert after[1]["agentMessages"] == [before[1]["agentMessages"]]  # upgraded where it is
    assert [list(e) for e in after] == [list(e) for e in before]  # keys and their order kept
    assert after[0] == before[0] and after[1]["turn"] == before[1]["turn"]
    written = target.read_bytes()
    assert run("migrate", "--in-place", target, *FIELDS).exit_code == 0
    assert target.read_bytes() == written


def test_library_functions(tmp_path):
    write_jsonl(tmp_path / "a.jsonl", [step("a", 0)])
    steps = list(iter_paths_steps([tmp_path / "a.jsonl", TRACES], parse_field_map(["input=turn.userMessage",
                                                                                     "output=agentMessages"]), []))
    assert [(s.record.file.endswith("a.jsonl"), s.step["stepIndex"]) for s in steps] == [(True, 0), (False, 0)]
    records = list(iter_paths_records([TRACES]))
    assert [(r.line, r.prefix) for r in records] == [(2, (0,)), (5, (1,))]


def test_parse_field_map_escapes_dots():
    assert parse_field_map([r"input=a\.b.c"]) == {"input": ("a.b", "c")}
    for bad in (["input=a..b"], ["input=a", "output=a.b"]):
        try:
            parse_field_map(bad)
        except ValueError:
            continue
        raise AssertionError(bad)


_keys = st.sampled_from(["a", "b", "turn", "x", "userMessage"])
_values = st.recursive(st.integers(), lambda inner: st.dictionaries(_keys, inner, max_size=3), max_leaves=6)


@settings(suppress_health_check=[HealthCheck.too_slow])
@given(st.dictionaries(_keys, _values, max_size=4), st.lists(_keys, min_size=1, max_size=3))
def test_adapt_keeps_every_value_and_restores(data, key_path):
    field_map = {"input": tuple(key_path)}
    try:
        view = adapt(data, field_map)
    except ValueError:
        return  # a path through a non-object, or a clash: refused, not guessed
    # Nothing renamed that was not mapped: every key of the view is the data's, or the mapped name.
    assert set(view) - set(data) <= {"input"}
    assert restore(view, data, field_map) == data  # every value kept, back in its place
    assert list(restore(view, data, field_map)) == list(data)
