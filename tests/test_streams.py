"""Streamed responses (SSE, chunk lines, Gemini CLI's chunk arrays) are assembled into the response
the API would have returned unstreamed: the same text, byte for byte, and the same tool calls.

The fixtures (tests/data/formats/streams) follow the providers' streaming references: OpenAI's
"Streaming" guide and chat.completion.chunk object, the Responses API's streaming events,
Anthropic's "Streaming Messages" (message_start … message_stop, input_json_delta,
signature_delta), Gemini's streamGenerateContent with alt=sse. Each `X.expected.json` is the
unstreamed response written by hand from the same reference."""

from __future__ import annotations

import json
import random

import orjson
import pytest
from conftest import DATA, import_and_validate, read_jsonl, run_chatconv
from hypothesis import given, settings
from hypothesis import strategies as st

from chatconv.formats import import_paths, streams

STREAMS = DATA / "formats" / "streams"
CASES = [("openai-chat.sse", "openai-chat"), ("openai-chat-chunks.jsonl", "openai-chat"),
         ("anthropic.sse", "anthropic"), ("gemini.sse", "gemini"), ("gemini-cli-chunks.json", "gemini"),
         ("openai-responses.sse", "openai-responses")]


@pytest.mark.parametrize("name, provider", CASES)
def test_a_stream_is_assembled_into_the_unstreamed_response(name, provider):
    assert streams.claims(str(STREAMS / name))
    [record] = list(streams.records(str(STREAMS / name)))
    assert record.data == json.loads((STREAMS / f"{provider}.expected.json").read_text())
    first_event = next(number for number, line in enumerate((STREAMS / name).read_text().splitlines(), 1)
                       if line.startswith(("data:", "{", "[")))
    assert record.line == first_event and not record.problems


@pytest.mark.parametrize("name, provider", CASES)
def test_a_stream_imports_as_its_unstreamed_response_does(tmp_path, name, provider):
    streamed = read_jsonl(import_and_validate(tmp_path, STREAMS / name))
    unstreamed = read_jsonl(import_and_validate(tmp_path, STREAMS / f"{provider}.expected.json"))
    assert streamed == unstreamed
    # The answer's text, as `text` gives it, is the stream's, every piece in order.
    expected = {"openai-chat": "Let me check the weather — ☀️.", "anthropic": "I'll look that up.\n",
                "gemini": "Fjords hold the sky\nstill water", "openai-responses": "Checking now."}[provider]
    result = run_chatconv("text", tmp_path / f"{name}.steps.jsonl")
    assert [orjson.loads(line)["text"] for line in result.stdout.splitlines()] == [expected]


def test_a_stream_cut_short_gives_what_came_before_with_a_warning(tmp_path):
    problems: list = []
    [step] = import_paths([str(STREAMS / "openai-responses-cut.sse")], problems=problems)
    cut, unfinished = sorted(problems, key=lambda p: -p.line)
    assert (cut.severity, cut.line) == ("warning", 37) and "the stream is cut short here" in cut.message
    assert (unfinished.severity, unfinished.line) == ("warning", 2) and "ends before its last event" in unfinished.message
    assert [part["type"] for part in step["output"][0]["content"]] == ["text", "tool-call"]
    assert step["output"][0]["content"][0]["text"] == "Checking now."


def test_several_streams_in_one_file_are_several_responses(tmp_path):
    one = (STREAMS / "anthropic.sse").read_text()
    two = one.replace("msg_01Stream", "msg_02Stream").replace("I'll look ", "Looking ")
    path = tmp_path / "calls.log"  # a log under any name: told from its lines
    path.write_text(one + two)
    records = list(streams.records(str(path)))
    assert [r.data["id"] for r in records] == ["msg_01Stream", "msg_02Stream"]
    assert records[1].line == one.count("\n") + 2  # its message_start data line
    assert records[1].data["content"][1]["text"] == "Looking that up.\n"


def test_files_that_are_not_streams_are_not_claimed(tmp_path):
    for name in ("openai-chat/finetune.jsonl", "gemini/responses.jsonl", "anthropic/exchange.json",
                 "otel-genai/trace.json"):
        assert not streams.claims(str(DATA / "formats" / name)), name
    broken = tmp_path / "x.sse"
    broken.write_text("data: not json\n\n")
    assert not streams.claims(str(broken))


# --- property: any text and arguments, cut anywhere, come back whole --------------------------

TEXT = st.text(st.characters(blacklist_categories=("Cs",)), max_size=40)
ARGS = st.dictionaries(st.text(min_size=1, max_size=6), st.one_of(st.integers(-2**63, 2**63 - 1), st.text(max_size=8), st.booleans()),
                       max_size=3)


def _cut(text: str, seed: int) -> list[str]:
    """`text` cut into pieces at random places (an empty piece too, as streams send)."""
    rng = random.Random(seed)
    places = sorted(rng.sample(range(len(text) + 1), min(len(text) + 1, rng.randint(0, 5))))
    bounds = [0, *places, len(text)]
    return [text[a:b] for a, b in zip(bounds, bounds[1:])] or [""]


def _openai_chat_stream(text: str, args: dict, seed: int) -> list[dict]:
    chunk = {"id": "c1", "object": "chat.completion.chunk", "created": 1, "model": "m"}
    deltas = [{"role": "assistant", "content": ""}] + [{"content": piece} for piece in _cut(text, seed)]
    deltas += [{"tool_calls": [{"index": 0, "id": "call_1", "type": "function", "function": {"name": "f", "arguments": ""}}]}]
    deltas += [{"tool_calls": [{"index": 0, "function": {"arguments": piece}}]} for piece in _cut(json.dumps(args), seed)]
    return [{**chunk, "choices": [{"index": 0, "delta": d, "finish_reason": None}]} for d in deltas]


def _anthropic_stream(text: str, args: dict, seed: int) -> list[dict]:
    events = [{"type": "message_start", "message": {"id": "m1", "type": "message", "role": "assistant", "content": [],
                                                    "model": "m", "usage": {"input_tokens": 1}}},
              {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}]
    events += [{"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": p}}
               for p in _cut(text, seed)]
    events += [{"type": "content_block_start", "index": 1,
                "content_block": {"type": "tool_use", "id": "toolu_1", "name": "f", "input": {}}}]
    events += [{"type": "content_block_delta", "index": 1, "delta": {"type": "input_json_delta", "partial_json": p}}
               for p in _cut(json.dumps(args), seed)]
    return events + [{"type": "message_stop"}]


def _gemini_stream(text: str, args: dict, seed: int) -> list[dict]:
    chunks = [{"candidates": [{"content": {"role": "model", "parts": [{"text": p}]}, "index": 0}], "responseId": "r1"}
              for p in _cut(text, seed)]
    return chunks + [{"candidates": [{"content": {"role": "model", "parts": [{"functionCall": {"name": "f", "args": args}}]},
                                      "finishReason": "STOP", "index": 0}], "responseId": "r1"}]


@settings(max_examples=60, deadline=None)
@given(TEXT, ARGS, st.integers(0, 10**6), st.sampled_from(["openai-chat", "anthropic", "gemini"]))
def test_streamed_text_and_arguments_come_back_byte_for_byte(tmp_path_factory, text, args, seed, provider):
    events = {"openai-chat": _openai_chat_stream, "anthropic": _anthropic_stream, "gemini": _gemini_stream}[provider](
        text, args, seed)
    path = tmp_path_factory.mktemp("s") / "stream.sse"
    path.write_bytes(b"".join(b"data: " + orjson.dumps(event) + b"\n\n" for event in events))
    [step] = import_paths([str(path)])
    parts = step["output"][0]["content"]
    texts = [part["text"] for part in parts if part["type"] == "text"]
    assert "".join(texts) == text and len(texts) <= 1
    [call] = [part for part in parts if part["type"] == "tool-call"]
    assert call["input"] == args and call["toolName"] == "f"


def _sse(events: list) -> bytes:
    return b"".join(b"data: " + (e if isinstance(e, bytes) else orjson.dumps(e)) + b"\n\n" for e in events)


def _anthropic_events(message_id: str, text: str, end: bool = True) -> list:
    return [{"type": "message_start", "message": {"id": message_id, "type": "message", "role": "assistant",
                                                  "content": [], "model": "m"}},
            {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
            {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": text}},
            *([{"type": "message_stop"}] if end else [])]


def test_a_broken_line_between_streams_is_left_out_and_the_next_stream_read(tmp_path):
    path = tmp_path / "multi.sse"
    path.write_bytes(_sse([*_anthropic_events("m1", "one"), b'{"type": "content_blo', *_anthropic_events("m3", "three")]))
    problems: list = []
    steps = import_paths([str(path)], problems=problems)
    assert [s["output"][0]["content"][0]["text"] for s in steps] == ["one", "three"]
    assert [(p.severity, p.line) for p in problems] == [("warning", 9)] and "not JSON" in problems[0].message


def test_a_log_of_responses_with_an_error_line_is_not_taken_for_a_stream(tmp_path):
    response = {"id": "msg_a", "type": "message", "role": "assistant", "content": [{"type": "text", "text": "A"}]}
    error = {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}
    path = tmp_path / "log.jsonl"
    path.write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in (response, error, {**response, "id": "msg_b"})))
    assert not streams.claims(str(path))


def test_records_around_a_stream_are_read_as_records(tmp_path):
    body = {"messages": [{"role": "user", "content": "Next question"}]}
    chunk = {"id": "c1", "object": "chat.completion.chunk", "choices": [
        {"index": 0, "delta": {"role": "assistant", "content": "Hi"}, "finish_reason": "stop"}]}
    path = tmp_path / "mixed.jsonl"
    path.write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in (chunk, body, body)))
    steps = import_paths([str(path)])
    assert [s["input"]["content"] for s in steps] == ["", "Next question", "Next question"]
    assert steps[0]["output"][0]["content"] == "Hi" or steps[0]["output"][0]["content"][0]["text"] == "Hi"


def test_an_error_event_and_a_missing_end_are_said(tmp_path):
    path = tmp_path / "err.sse"
    path.write_bytes(_sse([*_anthropic_events("m1", "Hel", end=False),
                           {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}]))
    problems: list = []
    [step] = import_paths([str(path)], problems=problems)
    assert step["output"][0]["content"][0]["text"] == "Hel"
    assert sorted(p.message.split(" (")[0].split(":")[0] for p in problems) == [
        "the stream ends before its last event", "the stream holds an error event"]


def test_a_tool_input_cut_short_is_kept_as_its_text(tmp_path):
    events = [*_anthropic_events("m1", "Calling.", end=False),
              {"type": "content_block_start", "index": 1,
               "content_block": {"type": "tool_use", "id": "toolu_1", "name": "f", "input": {}}},
              {"type": "content_block_delta", "index": 1, "delta": {"type": "input_json_delta", "partial_json": '{"a": 1'}}]
    path = tmp_path / "cut.sse"
    path.write_bytes(_sse(events))
    problems: list = []
    [step] = import_paths([str(path)], problems=problems)
    text, call = step["output"][0]["content"]
    assert text["text"] == "Calling." and call["toolName"] == "f"
    assert any("is cut short: kept as the text that came" in p.message for p in problems)


def test_a_responses_stream_with_no_end_gives_its_text_from_the_deltas(tmp_path):
    lines = (STREAMS / "openai-responses.sse").read_text().split("\n")
    # up to the first text delta's end: the message item never reached output_item.done
    cut = "\n".join(lines[:lines.index("event: response.output_text.done")])
    path = tmp_path / "r.sse"
    path.write_text(cut + "\n")
    problems: list = []
    [step] = import_paths([str(path)], problems=problems)
    assert step["output"][0]["content"][0]["text"] == "Checking now."
    assert [p.code for p in problems] == ["import-changed"]


def test_stream_events_on_standard_input_say_to_name_the_file():
    result = run_chatconv("import", "-", stdin=(STREAMS / "openai-chat-chunks.jsonl").read_bytes())
    assert result.returncode == 1 and result.stdout == b""
    assert "-:1:1: error: $: an event of a streamed response" in result.stderr_text
    assert "name the file (not standard input)" in result.stderr_text


def test_pieces_of_logprobs_audio_and_citations_are_joined_not_replaced(tmp_path):
    chunk = {"id": "c1", "object": "chat.completion.chunk", "model": "m"}
    chunks = [
        {**chunk, "choices": [{"index": 0, "delta": {"role": "assistant", "audio": {"id": "a1", "data": "AAA", "transcript": "Hel"}},
                               "logprobs": {"content": [{"token": "Hel", "logprob": -0.1}]}, "finish_reason": None}]},
        {**chunk, "choices": [{"index": 0, "delta": {"audio": {"data": "BBB", "transcript": "lo", "expires_at": 9}},
                               "logprobs": {"content": [{"token": "lo", "logprob": -0.2}]}, "finish_reason": "stop"}]}]
    [response] = [r.data for r in _records(tmp_path, chunks)]
    choice = response["choices"][0]
    assert choice["message"]["audio"] == {"id": "a1", "data": "AAABBB", "transcript": "Hello", "expires_at": 9}
    assert [t["token"] for t in choice["logprobs"]["content"]] == ["Hel", "lo"]
    gemini = [{"candidates": [{"content": {"role": "model", "parts": [{"text": "A"}]}, "index": 0,
                               "citationMetadata": {"citationSources": [{"uri": "u1"}]}}], "responseId": "r"},
              {"candidates": [{"content": {"role": "model", "parts": [{"text": "B"}]}, "index": 0, "finishReason": "STOP",
                               "citationMetadata": {"citationSources": [{"uri": "u2"}]}}], "responseId": "r"}]
    [response] = [r.data for r in _records(tmp_path, gemini)]
    assert response["candidates"][0]["citationMetadata"]["citationSources"] == [{"uri": "u1"}, {"uri": "u2"}]
    assert response["candidates"][0]["content"]["parts"] == [{"text": "AB"}]


def _records(tmp_path, events: list) -> list:
    path = tmp_path / "s.sse"
    path.write_bytes(_sse(events))
    return list(streams.records(str(path)))


# Events of every provider's shape, with any value where a field is: never a traceback.
_ANY = st.recursive(st.none() | st.booleans() | st.integers(-5, 5) | st.text(max_size=4),
                    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner, max_size=3),
                    max_leaves=6)
_FIELDS = ["type", "object", "id", "choices", "delta", "index", "content", "candidates", "responseId", "message",
           "content_block", "partial_json", "text", "tool_calls", "function", "response", "item", "output_index",
           "finish_reason", "finishReason", "parts", "error", "usage", "arguments", "sequence_number"]
def _others(*fixed: str) -> dict:
    return {key: _ANY for key in _FIELDS if key not in fixed}


_EVENT = st.one_of(
    st.fixed_dictionaries({"object": st.just("chat.completion.chunk")}, optional=_others("object")),
    st.fixed_dictionaries({"type": st.sampled_from(["message_start", "content_block_start", "content_block_delta",
                                                    "message_delta", "message_stop", "error", "ping"])},
                          optional=_others("type")),
    st.fixed_dictionaries({"type": st.sampled_from(["response.created", "response.output_item.added",
                                                    "response.output_text.delta", "response.completed"])},
                          optional=_others("type")),
    st.fixed_dictionaries({"candidates": st.lists(_ANY, max_size=2), "responseId": st.just("r")},
                          optional=_others("candidates", "responseId")),
    st.dictionaries(st.sampled_from(_FIELDS), _ANY, max_size=4))


@settings(max_examples=150, deadline=None)
@given(st.lists(_EVENT, min_size=1, max_size=6))
def test_any_events_are_read_or_refused_with_a_problem_never_a_traceback(tmp_path_factory, events):
    path = tmp_path_factory.mktemp("fuzz") / "events.sse"
    path.write_bytes(_sse(events))
    problems: list = []
    import_paths([str(path)], problems=problems)  # raises nothing: a problem says what it could not read
    assert all(p.line >= 1 and p.code for p in problems)
