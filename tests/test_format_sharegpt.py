"""The sharegpt format: LLaMA-Factory / Axolotl / FastChat conversations of `from`/`value` turns,
read into chatconv's recordings and written back (issue 30). The round trip is a property:
import then export gives the same JSON value, for any record of the format; nothing is lost
(every turn's text, in order)."""

from __future__ import annotations

import json
from pathlib import Path

import orjson
import pytest
from conftest import import_and_validate, import_problems, read_jsonl, round_trip, write_jsonl, imported_lines, real_file_back
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from chatconv.formats import FORMATS, ExportRun, export_bodies, sharegpt

TOOLS = json.dumps([{"name": "get_weather", "description": "Weather", "parameters": {"type": "object"}}])
RECORD = {"conversations": [{"from": "human", "value": "What's the weather in Oslo?"},
                            {"from": "function_call", "value": json.dumps({"name": "get_weather",
                                                                           "arguments": {"city": "Oslo"}})},
                            {"from": "observation", "value": '{"temp": 3}'},
                            {"from": "gpt", "value": "It is 3 degrees."}],
          "system": "You are helpful.", "tools": TOOLS}


def test_detected_as_sharegpt_and_by_no_other_format():
    assert [fmt.NAME for fmt in FORMATS if fmt.detect(RECORD)] == ["sharegpt"]
    assert not sharegpt.detect({"messages": [{"role": "user", "content": "hi"}]})
    assert not sharegpt.detect({"conversations": [{"role": "user", "content": "hi"}]})


def test_turns_are_messages_calls_are_paired_and_columns_kept(tmp_path):
    steps = read_jsonl(import_and_validate(tmp_path, write_jsonl(tmp_path / "rows.jsonl", [RECORD])))
    assert [s["input"]["role"] for s in steps] == ["system", "user"]
    assert steps[0]["input"]["providerOptions"] == {"sharegpt": {"column": True}}
    assert steps[0]["metadata"] == {"sharegpt": {"tools": TOOLS}}
    call, result, answer = steps[1]["output"]
    assert call["content"][0] | {"providerOptions": None} == {
        "type": "tool-call", "toolCallId": "call_1", "toolName": "get_weather", "input": {"city": "Oslo"},
        "providerOptions": None}
    assert result["content"][0]["toolName"] == "get_weather" and result["content"][0]["toolCallId"] == "call_1"
    assert answer == {"role": "assistant", "content": "It is 3 degrees."}


def test_import_then_export_gives_the_record_back(tmp_path):
    other_tags = {"conversations": [{"from": "user", "value": "hi", "weight": 0},
                                    {"from": "assistant", "value": "hello", "weight": 1}], "id": "x1"}
    parallel = {"conversations": [{"from": "human", "value": "both"},
                                  {"from": "function_call", "value": '[{"name": "a", "arguments": {}}, '
                                                                     '{"name": "b", "arguments": {"x": 1}}]'},
                                  {"from": "observation", "value": "A"}, {"from": "observation", "value": "B"},
                                  {"from": "gpt", "value": "done"}]}
    records = [RECORD, other_tags, parallel]
    assert round_trip(tmp_path, records, "sharegpt") == records


@pytest.mark.parametrize("turn, path, words", [
    ({"from": "bot", "value": "x"}, "$.conversations[1].from", "a turn from 'bot'"),
    ({"from": "gpt", "value": ["x"]}, "$.conversations[1].value", "a turn whose value is not text"),
    ({"from": "function_call", "value": "get_weather(city=Oslo)"}, "$.conversations[1].value", "not the JSON text"),
])
def test_a_turn_chatconv_cannot_read_leaves_the_record_out_at_its_path(tmp_path, turn, path, words):
    rows = write_jsonl(tmp_path / "rows.jsonl", [{"conversations": [{"from": "human", "value": "q"}, turn]}])
    [problem] = import_problems(rows)
    assert problem.path == path and words in problem.message and problem.severity == "error"


def test_an_observation_that_answers_no_call_is_an_orphan(tmp_path):
    rows = write_jsonl(tmp_path / "rows.jsonl", [{"conversations": [{"from": "human", "value": "q"},
                                                                    {"from": "observation", "value": "r"}]}])
    [problem] = import_problems(rows)
    assert problem.code == "tool-result-orphan" and problem.path == "$.conversations[1]"


def test_what_a_turn_cannot_hold_is_left_out_with_a_warning(tmp_path):
    steps = write_jsonl(tmp_path / "s.jsonl", [{"stepIndex": 0, "input": {"role": "user", "content": [
        {"type": "text", "text": "look"}, {"type": "image", "image": "https://example.org/a.png"}]}, "output": [
        {"role": "assistant", "content": [{"type": "reasoning", "text": "hm"}, {"type": "text", "text": "a cat"}]}]}])
    run = ExportRun()
    [row] = [orjson.loads(b) for b in export_bodies([str(steps)], "sharegpt", "conversation", run=run)]
    assert row == {"conversations": [{"from": "human", "value": "look"}, {"from": "gpt", "value": "a cat"}]}
    assert [(p.code, p.path) for p in run.problems] == [("part-left-out", "$.input"), ("part-left-out", "$.output[0]")]


# --- the round trip, on any record of the format ----------------------------------------------

TEXT = st.text(st.characters(blacklist_categories=("Cs",)), max_size=12)
ARGUMENTS = st.dictionaries(st.text(max_size=4), st.one_of(st.integers(-2**53, 2**53), TEXT, st.booleans()), max_size=3)
EXTRA = st.dictionaries(st.sampled_from(["weight", "loss", "name_tag"]), st.one_of(st.integers(0, 1), TEXT), max_size=1)


@st.composite
def records(draw) -> dict:
    turns = []
    for _ in range(draw(st.integers(1, 6))):
        kind = draw(st.sampled_from(["human", "user", "gpt", "assistant", "system", "call"]))
        if kind == "call":
            calls = [{"name": draw(st.text(min_size=1, max_size=6)), "arguments": draw(ARGUMENTS)}
                     for _ in range(draw(st.integers(1, 2)))]
            as_list = len(calls) > 1 or draw(st.booleans())
            dumps = draw(st.sampled_from([json.dumps, lambda v: orjson.dumps(v).decode(),
                                          lambda v: json.dumps(v, ensure_ascii=False, indent=1)]))
            turns.append({"from": "function_call", "value": dumps(calls if as_list else calls[0]), **draw(EXTRA)})
            turns += [{"from": draw(st.sampled_from(["observation", "tool"])), "value": draw(TEXT)} for _ in calls]
        else:
            turns.append({"from": kind, "value": draw(TEXT), **draw(EXTRA)})
    record = {"conversations": turns}
    if draw(st.booleans()):
        record["system"] = draw(TEXT)
    record.update(draw(st.dictionaries(st.sampled_from(["tools", "id", "images"]), TEXT, max_size=2)))
    return record


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(records(), min_size=1, max_size=3))
def test_any_record_comes_back_whole(tmp_path, rows):
    back = round_trip(tmp_path, rows, "sharegpt")
    assert back == rows
    # nothing lost, order kept: every turn's text, tag and field, in order
    assert [[(t["from"], t["value"]) for t in r["conversations"]] for r in back] == [
        [(t["from"], t["value"]) for t in r["conversations"]] for r in rows]


REAL = Path(__file__).parent / "data" / "formats" / "sharegpt" / "real"


@pytest.mark.parametrize("name", sorted(p.name for p in REAL.iterdir()))
def test_a_real_sharegpt_file_comes_back_whole(tmp_path, name):
    # axolotl's, LLaMA-Factory's and torchtune's own files (tests/data/formats/README.md): human/gpt,
    # system turns, function_call/observation turns with a tools column of JSON text.
    written, back = real_file_back(tmp_path, REAL / name, "sharegpt")
    assert back == written  # key order too


# --- the quick path (a line of the common shape in one pass) is the full path's equal --------


@settings(max_examples=150, deadline=None)
@given(st.lists(records(), min_size=1, max_size=4))
def test_the_quick_way_reads_as_the_full_path_does(rows):
    lines = [json.dumps(row, ensure_ascii=False).encode() for row in rows]
    assert imported_lines(lines, quick=True) == imported_lines(lines, quick=False)


def test_common_rows_go_the_quick_way(monkeypatch):
    # Counted: the full reading is not asked for a row of plain human/gpt turns.
    calls = []
    monkeypatch.setattr(sharegpt, "read", lambda reading: calls.append(reading) or iter(()))
    row = {"conversations": [{"from": "human", "value": "hi"}, {"from": "gpt", "value": "hello"}], "system": "s"}
    out, counts, formats, problems, _ = imported_lines([json.dumps(row).encode()], quick=True)
    assert calls == [] and counts == (1, 1, 2) and formats == {"sharegpt": 1} and problems == []
    # and rows with tool turns (a call, its observation), as LLaMA-Factory's glaive rows
    out, counts, formats, problems, _ = imported_lines([json.dumps(RECORD).encode()], quick=True)
    assert calls == [] and counts == (1, 1, 2) and problems == []
    assert orjson.loads(out[1])["output"][1]["content"][0]["toolName"] == "get_weather"


def test_a_tag_that_is_not_text_is_a_problem_on_the_quick_way_too(tmp_path):
    from conftest import run_chatconv
    rows = write_jsonl(tmp_path / "rows.jsonl", [{"conversations": [{"from": ["human"], "value": "hi"}]}])
    result = run_chatconv("import", rows)  # (run_chatconv fails on a traceback)
    assert result.returncode == 1 and "$.conversations[0].from" in result.stderr_text
