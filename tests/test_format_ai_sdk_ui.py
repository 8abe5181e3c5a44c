"""The ai-sdk-ui format: AI SDK 5 UI messages (issue 30), read as the AI SDK's own
convertToModelMessages reads them and written back. The round trip is a property (import then
export gives the same JSON value, key order too, for any list of UI messages); the model messages
import writes are ones the AI SDK's modelMessageSchema accepts (test_ai_sdk_oracle reads every
fixture)."""

from __future__ import annotations

import json
from pathlib import Path

import orjson
import pytest
from conftest import import_and_validate, import_problems, read_jsonl, round_trip, write_jsonl, real_file_back
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from chatconv.formats import IMPORTED, ExportRun, export_bodies
from chatconv.formats.importing import _format_of

REAL = Path(__file__).parent / "data" / "formats" / "ai-sdk-ui" / "real"
CHAT = [{"id": "u1", "role": "user", "parts": [{"type": "text", "text": "Weather in London?"}]},
        {"id": "a1", "role": "assistant", "metadata": {"model": "gpt-4o"}, "parts": [
            {"type": "step-start"},
            {"type": "reasoning", "text": "Look it up.", "providerMetadata": {"anthropic": {"signature": "s1"}}},
            {"type": "tool-weather", "toolCallId": "c1", "state": "output-available", "input": {"city": "London"},
             "output": {"sky": "sunny"}},
            {"type": "source-url", "sourceId": "s", "url": "https://example.org"},
            {"type": "step-start"},
            {"type": "text", "text": "Sunny.", "state": "done"}]}]


def test_ui_messages_are_ai_sdk_ui_and_nothing_else():
    assert _format_of(CHAT, IMPORTED, None).NAME == "ai-sdk-ui"
    assert _format_of({"id": "c", "messages": CHAT, "trigger": "submit-message"}, IMPORTED, None).NAME == "ai-sdk-ui"
    assert _format_of([{"role": "user", "parts": [{"text": "hi"}]}], IMPORTED, None).NAME == "gemini"


def test_steps_are_model_messages_calls_meet_results_and_ui_only_parts_are_kept(tmp_path):
    steps = read_jsonl(import_and_validate(tmp_path, write_jsonl(tmp_path / "chat.json", [CHAT])))
    [step] = steps
    first, results, second = step["output"]
    reasoning, call = first["content"]
    assert reasoning["providerOptions"]["anthropic"] == {"signature": "s1"}  # as convertToModelMessages puts it
    assert call["toolName"] == "weather" and results["content"][0]["output"] == {"type": "json", "value": {"sky": "sunny"}}
    assert second["content"][0]["text"] == "Sunny."
    assert first["providerOptions"]["ai-sdk-ui"]["aside"] == [{"at": 3, "part": CHAT[1]["parts"][3]}]


@pytest.mark.parametrize("part, words", [
    ({"type": "tool-x", "toolCallId": "c", "state": "input-available", "input": {}}, "in a user message"),
    ({"type": "audio", "url": "a.wav"}, "an audio part"),
])
def test_a_part_chatconv_cannot_read_is_named_at_its_path(tmp_path, part, words):
    problems = import_problems(write_jsonl(tmp_path / "ui.jsonl", [[{"id": "u", "role": "user", "parts": [part]}]]),
                               "ai-sdk-ui")
    assert [(p.path, p.severity) for p in problems] == [("$[0].parts[0]", "error")]
    assert words.split()[-1] in problems[0].message


def test_a_conversation_of_another_format_becomes_ui_messages(tmp_path):
    body = {"messages": [{"role": "user", "content": "q"},
                         {"role": "assistant", "content": None, "tool_calls": [
                             {"id": "c", "type": "function", "function": {"name": "f", "arguments": "{}"}}]},
                         {"role": "tool", "tool_call_id": "c", "content": "r"},
                         {"role": "assistant", "content": "done"}]}
    steps = import_and_validate(tmp_path, write_jsonl(tmp_path / "b.jsonl", [body]))
    [ui] = [orjson.loads(b) for b in export_bodies([str(steps)], "ai-sdk-ui", "conversation", run=ExportRun())]
    assert [m["role"] for m in ui] == ["user", "assistant"]
    assert ui[1]["parts"] == [{"type": "tool-f", "toolCallId": "c", "input": {}, "output": "r",
                               "state": "output-available"}, {"type": "step-start"}, {"type": "text", "text": "done"}]


# --- the round trip, on any list of UI messages ---------------------------------------------------

TEXT = st.text(st.characters(blacklist_categories=("Cs",)), max_size=8)


@st.composite
def chats(draw) -> list[dict]:
    messages, calls = [], 0
    for turn in range(draw(st.integers(1, 3))):
        asked = [{"type": "text", "text": draw(TEXT)}]
        if draw(st.booleans()):
            asked.append({"type": "file", "mediaType": "image/png", "url": "https://x.y/a.png"})
        messages.append({"id": f"u{turn}", "role": "user", "parts": asked})
        parts: list[dict] = []
        for _ in range(draw(st.integers(1, 3))):
            if draw(st.booleans()):
                parts.append({"type": "step-start"})
            kind = draw(st.sampled_from(["text", "reasoning", "tool", "source"]))
            if kind in ("text", "reasoning"):
                parts.append({"type": kind, "text": draw(TEXT), **draw(st.sampled_from([{}, {"state": "done"}]))})
            elif kind == "source":
                parts.append({"type": "source-url", "sourceId": "s", "url": "https://x.y"})
            else:
                calls += 1
                part = {"type": draw(st.sampled_from(["tool-search", "dynamic-tool"])), "toolCallId": f"c{calls}"}
                if part["type"] == "dynamic-tool":
                    part["toolName"] = "lookup"
                part["state"], part["input"] = "input-available", {"q": draw(TEXT)}
                outcome = draw(st.sampled_from(["none", "output", "error"]))
                if outcome == "output":
                    part["state"], part["output"] = "output-available", {"n": draw(st.integers(0, 9))}
                elif outcome == "error":
                    part["state"], part["errorText"] = "output-error", draw(TEXT)
                parts.append(part)
        messages.append({"id": f"a{turn}", "role": "assistant", "parts": parts,
                         **draw(st.sampled_from([{}, {"metadata": {"n": turn}}]))})
    return messages


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(chats(), min_size=1, max_size=2))
def test_any_chat_comes_back_whole(tmp_path, records):
    back = round_trip(tmp_path, records, "ai-sdk-ui")
    assert [json.dumps(r) for r in back] == [json.dumps(r) for r in records]  # values and key order


@pytest.mark.parametrize("name", sorted(p.name for p in REAL.iterdir() if p.suffix == ".json"
                                         and not p.name.endswith(".chunks.json")))
def test_a_real_ui_file_comes_back_whole(tmp_path, name):
    # The AI SDK's own snapshots of useChat's messages and request body (tests/data/formats/README.md).
    written, back = real_file_back(tmp_path, REAL / name, "ai-sdk-ui", one_record=True)
    assert back == written


STREAMS = sorted(p.name for p in REAL.iterdir() if p.suffix == ".sse" or p.name.endswith(".chunks.json"))


@pytest.mark.parametrize("name", STREAMS)
def test_a_real_ui_message_stream_is_assembled_into_the_message_use_chat_makes(tmp_path, name):
    # The AI SDK's own snapshots of toUIMessageStream (tests/data/formats/README.md).
    from conftest import run_chatconv
    result = run_chatconv("import", REAL / name)
    assert result.returncode == 0, result.stderr_text
    [step] = [orjson.loads(line) for line in result.stdout.splitlines()]
    assert step["input"]["providerOptions"] == {"chatconv": {"unrecorded": True}}  # the stream is the answer
    answer = step["output"][0]
    assert answer["role"] == "assistant"
    if "reasoning" in name:
        texts = [p["text"] for p in answer["content"] if p["type"] == "reasoning"]
        assert texts[0] == "I will open the conversation with witty banter."
        assert answer["content"][0]["providerOptions"]["testProvider"] == {"signature": "1234567890"}
    if "tool-call" in name:
        call, result_message = answer["content"][0], step["output"][1]
        assert call["input"] == {"value": "value"}
        assert result_message["content"][0]["output"] == {"type": "json", "value": "value-result"}
    if "error" in name:
        assert "the stream holds an error event (error)" in result.stderr_text


def test_a_call_id_used_again_later_and_an_error_beside_an_output_come_back(tmp_path):
    chat = [{"id": "u", "role": "user", "parts": [{"type": "text", "text": "q"}]},
            {"id": "a", "role": "assistant", "parts": [{"type": "tool-f", "toolCallId": "c", "state": "output-available",
                                                        "input": {}, "output": {"a": 1}, "errorText": "late"}]},
            {"id": "u2", "role": "user", "parts": [{"type": "text", "text": "again"}]},
            {"id": "b", "role": "assistant", "parts": [{"type": "tool-f", "toolCallId": "c", "state": "output-available",
                                                        "input": {}, "output": {"a": 2}}]}]
    assert round_trip(tmp_path, [chat], "ai-sdk-ui") == [chat]
