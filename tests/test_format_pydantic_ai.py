"""The pydantic-ai format: message histories as pydantic-ai dumps them (issue 30), read into
chatconv's recordings and written back. The round trip is a property (import then export gives
the same JSON value, key order too, for any history); every history export writes is one
pydantic-ai's own ModelMessagesTypeAdapter loads (the consumer of the format, as an oracle)."""

from __future__ import annotations

import json
from pathlib import Path

import orjson
import pytest
from conftest import import_and_validate, import_problems, read_jsonl, round_trip, write_jsonl, exported, real_file_back
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic_ai.messages import ModelMessagesTypeAdapter

from chatconv.formats import IMPORTED
from chatconv.formats.importing import _format_of

REAL = Path(__file__).parent / "data" / "formats" / "pydantic-ai" / "real"
STAMP = "2026-02-16T03:42:51.501850Z"
HISTORY = [
    {"parts": [{"content": "Be brief.", "timestamp": STAMP, "dynamic_ref": None, "part_kind": "system-prompt"},
               {"content": "Weather in Oslo?", "timestamp": STAMP, "part_kind": "user-prompt"}],
     "instructions": None, "kind": "request"},
    {"parts": [{"content": "Look it up.", "id": None, "signature": None, "provider_name": None,
                "part_kind": "thinking"},
               {"tool_name": "weather", "args": {"city": "Oslo"}, "tool_call_id": "c1", "part_kind": "tool-call"}],
     "model_name": "gpt-4.1", "timestamp": STAMP, "kind": "response"},
    {"parts": [{"tool_name": "weather", "content": {"temp": 3}, "tool_call_id": "c1", "metadata": None,
                "timestamp": STAMP, "part_kind": "tool-return"}], "kind": "request"},
    {"parts": [{"content": "3 degrees.", "part_kind": "text"}], "kind": "response"},
]


def _loads(history) -> list:
    """What pydantic-ai itself makes of a history (a ValidationError if it refuses it)."""
    return ModelMessagesTypeAdapter.validate_json(orjson.dumps(history))


def test_a_history_is_pydantic_ai_and_nothing_else():
    assert _format_of(HISTORY, IMPORTED, None).NAME == "pydantic-ai"
    assert _format_of(HISTORY[0], IMPORTED, None).NAME == "pydantic-ai"
    assert _format_of([{"role": "user", "parts": [{"text": "hi"}]}], IMPORTED, None).NAME == "gemini"


def test_parts_are_messages_thinking_is_reasoning_and_results_meet_their_calls(tmp_path):
    _loads(HISTORY)
    steps = read_jsonl(import_and_validate(tmp_path, write_jsonl(tmp_path / "h.json", [HISTORY])))
    system, user = steps[0]["input"], steps[1]["input"]
    assert system["content"] == "Be brief." and user["content"] == "Weather in Oslo?"
    answer, result, final = steps[1]["output"]
    assert [p["type"] for p in answer["content"]] == ["reasoning", "tool-call"]
    assert answer["content"][1]["input"] == {"city": "Oslo"}
    assert result["content"][0]["output"] == {"type": "json", "value": {"temp": 3}}
    assert result["content"][0]["toolCallId"] == "c1" and final["content"][0]["text"] == "3 degrees."


def test_a_conversation_of_another_format_becomes_a_history_pydantic_ai_loads(tmp_path):
    body = {"messages": [{"role": "system", "content": "s"}, {"role": "user", "content": "q"},
                         {"role": "assistant", "content": None, "tool_calls": [
                             {"id": "c", "type": "function", "function": {"name": "f", "arguments": "{\"a\":1}"}}]},
                         {"role": "tool", "tool_call_id": "c", "content": "r"},
                         {"role": "assistant", "content": "done"}]}
    steps = import_and_validate(tmp_path, write_jsonl(tmp_path / "b.jsonl", [body]))
    [history], run = exported(steps, "pydantic-ai")
    loaded = _loads(history)
    assert [m.kind for m in loaded] == ["request", "response", "request", "response"]
    assert [p.part_kind for p in loaded[0].parts] == ["system-prompt", "user-prompt"]
    assert loaded[1].parts[0].args == '{"a":1}' and loaded[2].parts[0].content == "r" and run.problems == []


@pytest.mark.parametrize("message, path", [
    ({"kind": "request", "parts": [{"part_kind": "audio-prompt", "content": "x"}]}, "$[0].parts[0]"),
    ({"kind": "response", "parts": [{"part_kind": "tool-call", "args": "{}"}]}, "$[0].parts[0]"),
    ({"kind": "request", "parts": [{"part_kind": "user-prompt", "content": [{"kind": "video"}]}]},
     "$[0].parts[0].content[0]"),
])
def test_a_part_chatconv_cannot_read_is_named_at_its_path(tmp_path, message, path):
    problems = import_problems(write_jsonl(tmp_path / "h.jsonl", [[message]]), "pydantic-ai")
    assert [(p.path, p.severity) for p in problems] == [(path, "error")]


# --- the round trip, on any history -------------------------------------------------------------

TEXT = st.text(st.characters(blacklist_categories=("Cs",)), max_size=10)
STAMPS = st.sampled_from([STAMP, "2025-01-01T00:00:00Z"])


@st.composite
def histories(draw) -> list[dict]:
    history, calls = [], 0
    for turn in range(draw(st.integers(1, 3))):
        parts: list[dict] = []
        if turn == 0 and draw(st.booleans()):
            parts.append({"content": draw(TEXT), "timestamp": draw(STAMPS), "dynamic_ref": None,
                          "part_kind": "system-prompt"})
        content = draw(TEXT | st.lists(TEXT | st.builds(
            lambda u: {"url": u, "force_download": False, "vendor_metadata": None, "kind": "image-url",
                       "media_type": "image/png", "identifier": "a1"}, st.just("https://x.y/a.png")), max_size=2))
        parts.append({"content": content, "timestamp": draw(STAMPS), "part_kind": "user-prompt"})
        history.append({"parts": parts, "timestamp": draw(STAMPS), "instructions": draw(st.none() | TEXT),
                        "kind": "request", "run_id": "r1", "metadata": None})
        answer: list[dict] = []
        if draw(st.booleans()):
            answer.append({"content": draw(TEXT), "id": None, "signature": draw(st.none() | TEXT),
                           "provider_name": None, "provider_details": None, "part_kind": "thinking"})
        ids = [f"call_{calls + n}" for n in range(draw(st.integers(0, 2)))]
        calls += len(ids)
        for call_id in ids:
            args = draw(st.dictionaries(st.text(max_size=3), st.integers(0, 9), max_size=2))
            answer.append({"tool_name": draw(st.sampled_from(["ls", "read"])),
                           "args": args if draw(st.booleans()) else json.dumps(args, separators=(",", ":")),
                           "tool_call_id": call_id, "id": None, "provider_name": None, "provider_details": None,
                           "part_kind": "tool-call"})
        if not ids or draw(st.booleans()):
            answer.append({"content": draw(TEXT), "id": None, "provider_name": None, "provider_details": None,
                           "part_kind": "text"})
        history.append({"parts": answer, "usage": {"input_tokens": 1, "output_tokens": 2}, "model_name": "m",
                        "timestamp": draw(STAMPS), "kind": "response", "finish_reason": "stop"})
        if ids:
            history.append({"parts": [
                {"tool_name": "ls", "content": draw(TEXT | st.just({"ok": True})), "tool_call_id": call_id,
                 "metadata": None, "timestamp": draw(STAMPS),
                 "part_kind": draw(st.sampled_from(["tool-return", "retry-prompt"]))} for call_id in ids],
                "kind": "request"})
            history.append({"parts": [{"content": draw(TEXT), "part_kind": "text"}], "kind": "response"})
    return history


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(histories(), min_size=1, max_size=2))
def test_any_history_comes_back_whole(tmp_path, records):
    back = round_trip(tmp_path, records, "pydantic-ai")
    assert [json.dumps(r) for r in back] == [json.dumps(r) for r in records]  # values and key order


@pytest.mark.parametrize("name", sorted(p.name for p in REAL.iterdir()))
def test_a_real_history_comes_back_whole_and_pydantic_ai_loads_it(tmp_path, name):
    # Histories an application persisted with pydantic-ai (tests/data/formats/README.md).
    written, [back] = real_file_back(tmp_path, REAL / name, "pydantic-ai", one_record=True)
    assert [back] == written and len(_loads(json.loads(back))) == len(json.loads(back))


def test_a_message_of_no_part_comes_back_as_it_was(tmp_path):
    history = [{"parts": [], "instructions": "Be brief.", "kind": "request"},
               {"parts": [{"content": "hi", "part_kind": "text"}], "kind": "response"}]
    assert round_trip(tmp_path, [history], "pydantic-ai") == [history]
