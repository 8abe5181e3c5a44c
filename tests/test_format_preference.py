"""The preference format: DPO/ORPO pairs (TRL's prompt/chosen/rejected as text or messages,
OpenAI's preference fine-tuning lines), read into chatconv's recordings and written back (issue 30).
The round trip is a property: import then export gives the same JSON value, key order too, for any
pair; nothing is lost (both sides, every message, in order)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import import_and_validate, import_problems, read_jsonl, round_trip, write_jsonl, exported, real_file_back
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from chatconv.formats import IMPORTED
from chatconv.formats.importing import _format_of

REAL = Path(__file__).parent / "data" / "formats" / "preference" / "real"
OPENAI_LINE = {"input": {"messages": [{"role": "user", "content": "Capital of France?"}],
                         "tools": [], "parallel_tool_calls": True},
               "preferred_output": [{"role": "assistant", "content": "Paris."}],
               "non_preferred_output": [{"role": "assistant", "content": "Lyon."}]}


def _picked(data) -> str | None:
    found = _format_of(data, IMPORTED, None)
    return found.NAME if found else None


def test_each_form_is_a_preference_pair_and_a_prompt_completion_row_is_not():
    assert _picked({"conversations": [{"from": "human", "value": "q"}], "chosen": {"from": "gpt", "value": "a"},
                    "rejected": {"from": "gpt", "value": "b"}}) == "preference"
    assert _picked({"conversations": [{"from": "human", "value": "q"}, {"from": "gpt", "value": "a"}]}) == "sharegpt"
    assert _picked({"prompt": "q", "chosen": "a", "rejected": "b"}) == "preference"
    assert _picked({"chosen": [{"role": "user", "content": "q"}], "rejected": [{"role": "user", "content": "q"}]}) \
        == "preference"
    assert _picked(OPENAI_LINE) == "preference"
    assert _picked({"prompt": [{"role": "user", "content": "q"}],
                    "completion": [{"role": "assistant", "content": "a"}]}) == "hf-messages"


def test_the_prompt_answered_by_the_chosen_side_and_the_rejected_side_kept(tmp_path):
    steps = read_jsonl(import_and_validate(tmp_path, write_jsonl(tmp_path / "p.jsonl", [OPENAI_LINE])))
    [step] = steps
    assert step["input"]["content"] == "Capital of France?"
    assert [m["content"] for m in step["output"]] == ["Paris."]
    assert step["metadata"]["preference"] == {"input": {"tools": [], "parallel_tool_calls": True},
                                              "non_preferred_output": [{"role": "assistant", "content": "Lyon."}]}


def test_a_conversation_of_another_format_exported_as_a_pair_says_it_has_no_rejected_side(tmp_path):
    rows = write_jsonl(tmp_path / "chat.jsonl", [{"messages": [{"role": "user", "content": "q"},
                                                               {"role": "assistant", "content": "a"}]}])
    steps = import_and_validate(tmp_path, rows)
    [pair], run = exported(steps, "preference")
    assert pair == {"prompt": [{"role": "user", "content": "q"}], "chosen": [{"role": "assistant", "content": "a"}]}
    assert [(p.code, p.severity) for p in run.problems] == [("part-left-out", "warning")]
    assert "no rejected side" in run.problems[0].message


@pytest.mark.parametrize("row, path, words", [
    ({"prompt": "q", "chosen": "a", "rejected": [{"role": "assistant", "content": [{"type": "image"}]}]},
     "$.rejected[0].content[0]", "assistant content parts"),
    ({"input": {"messages": [{"role": "user", "content": "q"}]}, "preferred_output": "a",
      "non_preferred_output": []}, "$.preferred_output", "a list of messages"),
])
def test_a_pair_chatconv_cannot_read_is_left_out_at_its_path(tmp_path, row, path, words):
    problems = import_problems(write_jsonl(tmp_path / "p.jsonl", [row]), "preference")
    assert [(p.path, p.severity) for p in problems][:1] == [(path, "error")] and words in problems[0].message


# --- the round trip, on any pair ----------------------------------------------------------------

TEXT = st.text(st.characters(blacklist_categories=("Cs",)), max_size=10)


@st.composite
def sides(draw, role: str):
    """A side as text, or as messages (the assistant's with a call and its result now and then)."""
    if draw(st.booleans()):
        return draw(TEXT)
    messages = [{"role": role, "content": draw(TEXT)} for _ in range(draw(st.integers(1, 2)))]
    if role == "assistant" and draw(st.booleans()):
        messages += [{"role": "assistant", "content": None, "tool_calls": [
            {"id": "c1", "type": "function", "function": {"name": "f", "arguments": "{}"}}]},
            {"role": "tool", "tool_call_id": "c1", "content": draw(TEXT)},
            {"role": "assistant", "content": draw(TEXT)}]
    return messages


@st.composite
def pairs(draw) -> dict:
    form = draw(st.sampled_from(["trl", "implicit", "openai", "sharegpt"]))
    extra = draw(st.dictionaries(st.sampled_from(["id", "score", "source"]), TEXT, max_size=2))
    if form == "openai":
        prompt = draw(sides("user"))
        prompt = prompt if isinstance(prompt, list) else [{"role": "user", "content": prompt}]
        chosen, rejected = (draw(sides("assistant")) for _ in "ab")
        row = {"input": {"messages": prompt, **draw(st.dictionaries(st.just("tools"), st.just([]), max_size=1))},
               "preferred_output": chosen if isinstance(chosen, list) else [{"role": "assistant", "content": chosen}],
               "non_preferred_output": rejected if isinstance(rejected, list) else []}
    elif form == "sharegpt":  # LLaMA-Factory's pairs
        turns = [{"from": "human", "value": draw(TEXT)}]
        if draw(st.booleans()):
            turns += [{"from": "function_call", "value": '{"name": "w", "arguments": {}}'},
                      {"from": "observation", "value": draw(TEXT)}]
        row = {"conversations": turns, "chosen": {"from": "gpt", "value": draw(TEXT)},
               "rejected": {"from": "gpt", "value": draw(TEXT)},
               **draw(st.sampled_from([{}, {"system": "s"}, {"tools": "[]"}]))}
    elif form == "implicit":
        asked = [{"role": "user", "content": draw(TEXT)}]
        row = {"chosen": asked + [{"role": "assistant", "content": draw(TEXT)}],
               "rejected": asked + [{"role": "assistant", "content": draw(TEXT)}]}
    else:
        row = {"prompt": draw(sides("user")), "chosen": draw(sides("assistant")), "rejected": draw(sides("assistant"))}
    items = list({**row, **extra}.items())
    return dict(draw(st.permutations(items)))


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(pairs(), min_size=1, max_size=3))
def test_any_pair_comes_back_whole(tmp_path, rows):
    back = round_trip(tmp_path, rows, "preference", forced=True)
    assert [json.dumps(r) for r in back] == [json.dumps(r) for r in rows]  # values and key order


@pytest.mark.parametrize("name", sorted(p.name for p in REAL.iterdir()))
def test_a_real_preference_file_comes_back_whole(tmp_path, name):
    # Microsoft's DPO demo output (OpenAI's preference form) and torchtune's implicit-prompt pair
    # (tests/data/formats/README.md).
    written, back = real_file_back(tmp_path, REAL / name, "preference")
    assert back == written
