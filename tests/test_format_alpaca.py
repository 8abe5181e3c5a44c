"""The alpaca format: instruction rows (Stanford Alpaca, LLaMA-Factory), read into chatconv's
recordings and written back (issue 30). Import then export gives the same JSON value, for any
row of the format (property)."""

from __future__ import annotations

import json
from pathlib import Path

import orjson
import pytest
from conftest import import_and_validate, import_problems, read_jsonl, round_trip, run_chatconv, write_jsonl
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from chatconv.formats import IMPORTED, ExportRun, alpaca, export_bodies

ROWS = [{"instruction": "Translate to English", "input": "hola", "output": "hello"},
        {"instruction": "Say hi", "input": "", "output": "hi", "system": "Be kind.", "history": [["q1", "a1"]]},
        {"instruction": "Who are you?", "output": "I am {{name}}.", "id": 7}]


def test_detected_as_alpaca_and_by_no_other_format():
    assert all([fmt.NAME for fmt in IMPORTED if fmt.detect(row)] == ["alpaca"] for row in ROWS)
    assert all(fmt.detect({"instruction": "", "input": "0"}) == (fmt is alpaca) for fmt in IMPORTED)
    assert not alpaca.detect({"instruction": "x"}) and not alpaca.detect({"input": "x", "output": "y"})


def test_a_row_is_a_conversation_whose_prompt_joins_instruction_and_input(tmp_path):
    out = import_and_validate(tmp_path, write_jsonl(tmp_path / "rows.jsonl", ROWS))
    steps = read_jsonl(out)
    assert steps[0]["input"]["content"] == [{"type": "text", "text": "Translate to English"},
                                            {"type": "text", "text": "hola"}]
    result = run_chatconv("dataset", out)
    rows = [orjson.loads(line) for line in result.stdout.splitlines()]
    assert [(r["prompt"], r["completion"]) for r in rows] == [
        ("Translate to English\nhola", "hello"), ("Be kind.", ""), ("q1", "a1"), ("Say hi", "hi"),
        ("Who are you?", "I am {{name}}.")]
    assert steps[-1]["metadata"] == {"alpaca": {"id": 7}}


def test_import_then_export_gives_the_rows_back(tmp_path):
    assert round_trip(tmp_path, ROWS, "alpaca") == ROWS


@pytest.mark.parametrize("row, path", [({"instruction": "x", "input": 3, "output": "y"}, "$.input"),
                                       ({"instruction": "x", "output": "y", "history": [["q"]]}, "$.history")])
def test_a_row_chatconv_cannot_read_is_left_out_at_its_path(tmp_path, row, path):
    [problem] = import_problems(write_jsonl(tmp_path / "rows.jsonl", [row]))
    assert problem.path == path and problem.severity == "error"


TEXT = st.text(st.characters(blacklist_categories=("Cs",)), max_size=10)


@st.composite
def rows(draw) -> dict:
    row = {"instruction": draw(TEXT)}
    if draw(st.booleans()):
        row["input"] = draw(TEXT)
    if draw(st.booleans()) or "input" not in row:
        row["output"] = draw(TEXT)
    if draw(st.booleans()):
        row["system"] = draw(TEXT)
    if draw(st.booleans()):
        row["history"] = draw(st.lists(st.lists(TEXT, min_size=2, max_size=2), max_size=3))
    row.update(draw(st.dictionaries(st.sampled_from(["id", "category", "source"]), TEXT, max_size=2)))
    return row


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(rows(), min_size=1, max_size=3))
def test_any_row_comes_back_whole(tmp_path, drawn):
    assert round_trip(tmp_path, drawn, "alpaca") == drawn


@pytest.mark.parametrize("name", ["identity.json", "alpaca.json"])
def test_real_alpaca_files_come_back_whole(tmp_path, name):
    # LLaMA-Factory's and axolotl's own data (tests/data/formats/README.md).
    source = Path(__file__).parent / "data" / "formats" / "alpaca" / "real" / name
    steps = import_and_validate(tmp_path, source)
    run = ExportRun()
    back = [orjson.loads(body) for body in export_bodies([str(steps)], "alpaca", "conversation", run=run)]
    assert back == json.loads(source.read_text(encoding="utf-8")) and run.problems == []
