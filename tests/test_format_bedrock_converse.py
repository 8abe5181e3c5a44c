"""The bedrock-converse format: Amazon Bedrock Converse requests and responses (issue 30), read
into chatconv's recordings and written back. The round trip is a property (import then export
gives the same JSON value for any request); every body export writes is one botocore's own
Converse input shape accepts (sdk_types.converse_errors, here and in test_sdk_bodies.py)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import assert_nothing_lost, import_and_validate, import_problems, read_jsonl, round_trip, write_jsonl, real_file_back
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sdk_types import converse_errors

from chatconv.formats import FORMATS, IMPORTED
from chatconv.formats.importing import _format_of

REAL = Path(__file__).parent / "data" / "formats" / "bedrock-converse" / "real"
REQUEST = {"modelId": "anthropic.claude-3-5-sonnet", "system": [{"text": "Be brief."}],
           "messages": [{"role": "user", "content": [{"text": "Weather?"}]},
                        {"role": "assistant", "content": [
                            {"reasoningContent": {"reasoningText": {"text": "Look it up.", "signature": "c2ln"}}},
                            {"toolUse": {"toolUseId": "t1", "name": "w", "input": {"city": "Oslo"}}}]},
                        {"role": "user", "content": [
                            {"toolResult": {"toolUseId": "t1", "content": [{"json": {"temp": 3}}], "status": "success"}},
                            {"text": "And tomorrow?"}]}],
           "inferenceConfig": {"maxTokens": 512}}


def test_requests_and_responses_are_converse_and_nothing_else():
    assert [fmt.NAME for fmt in FORMATS if fmt.detect(REQUEST)] == ["bedrock-converse"]
    response = json.loads((REAL / "vercel-ai-amazon-bedrock-reasoning.response.json").read_text())
    assert _format_of(response, IMPORTED, None).NAME == "bedrock-converse"
    assert _format_of({"messages": [{"role": "user", "content": "hi"}]}, IMPORTED, None).NAME == "openai-chat"


def test_blocks_are_parts_and_a_user_message_of_results_and_text_is_a_tool_then_a_user_message(tmp_path):
    steps = read_jsonl(import_and_validate(tmp_path, write_jsonl(tmp_path / "r.jsonl", [REQUEST])))
    assert steps[0]["input"]["content"] == "Be brief." and steps[1]["input"]["content"][0]["text"] == "Weather?"
    answer, result = steps[1]["output"]
    reasoning, call = answer["content"]
    assert reasoning["text"] == "Look it up." and reasoning["providerOptions"]["bedrock-converse"] == {
        "reasoningText": {"signature": "c2ln"}}
    assert call["input"] == {"city": "Oslo"} and result["content"][0]["output"] == {"type": "json", "value": {"temp": 3}}
    assert steps[2]["input"]["providerOptions"]["bedrock-converse"] == {"joined": True}


def test_a_response_alone_is_an_answer_whose_request_was_not_recorded(tmp_path):
    source = REAL / "vercel-ai-issue-17267-parallel-tool-calls.response.json"
    [step] = read_jsonl(import_and_validate(tmp_path, source))
    assert step["input"]["providerOptions"] == {"chatconv": {"unrecorded": True}}
    [answer] = step["output"]
    assert [p["type"] for p in answer["content"]] == ["text", "tool-call", "tool-call"]
    assert answer["providerOptions"]["bedrock-converse"]["response"]["stopReason"] == "tool_use"
    assert_nothing_lost(json.loads(source.read_text()), [step], ("output", "message", "content", "role", "text",
                                                             "toolUse", "toolUseId", "name", "input"))


@pytest.mark.parametrize("message, path, words", [
    ({"role": "user", "content": [{"video": {"format": "mp4", "source": {"bytes": "AA=="}}}]}, "$.messages[0].content[0]",
     "a video block"),
    ({"role": "user", "content": [{"toolUse": {"toolUseId": "t", "name": "n", "input": {}}}]},
     "$.messages[0].content[0]", "toolUse in assistant"),
    ({"role": "user", "content": [{"text": "a", "image": {}}]}, "$.messages[0].content[0]", "cannot read"),
])
def test_a_block_chatconv_cannot_read_is_named_at_its_path(tmp_path, message, path, words):
    problems = import_problems(write_jsonl(tmp_path / "r.jsonl", [{"messages": [message]}]), "bedrock-converse")
    assert [(p.path, p.severity) for p in problems] == [(path, "error")]
    assert words in problems[0].message + (problems[0].hint or "")


# --- the round trip, on any request -------------------------------------------------------------

TEXT = st.text(st.characters(blacklist_categories=("Cs",)), min_size=1, max_size=10)


@st.composite
def requests(draw) -> dict:
    messages, calls = [], 0
    for _ in range(draw(st.integers(1, 3))):
        asked = [{"text": draw(TEXT)}]
        if draw(st.booleans()):
            asked.append({"image": draw(st.sampled_from([{"format": "png", "source": {"bytes": "iVBORw0KGgo="}},
                                                         {"source": {"bytes": "iVBORw0KGgo="}, "format": "png"}]))})
        if draw(st.booleans()):
            asked.append({"document": {"format": "pdf", "name": "a", "source": {"bytes": "JVBERi0="}}})
        if draw(st.booleans()):
            asked.append({"cachePoint": {"type": "default"}})
        if messages and messages[-1]["role"] == "assistant" and any("toolUse" in b for b in messages[-1]["content"]):
            results = [{"toolResult": {"toolUseId": b["toolUse"]["toolUseId"], "content": draw(st.sampled_from([
                [{"text": "ok"}], [{"json": {"a": 1}}], [{"json": "a scalar"}], [{"text": "a"}, {"json": [1]}]])),
                **draw(st.sampled_from([{}, {"status": "success"}, {"status": "error"}]))}}
                for b in messages[-1]["content"] if "toolUse" in b]
            asked = results + (asked if draw(st.booleans()) else [])
        messages.append({"role": "user", "content": asked})
        answer = []
        if draw(st.booleans()):
            answer.append({"reasoningContent": {"reasoningText": {"text": draw(TEXT), "signature": "c2ln"}}})
        answer.append({"text": draw(TEXT)})
        for _ in range(draw(st.integers(0, 2))):
            calls += 1
            answer.append({"toolUse": {"toolUseId": f"tooluse_{calls}", "name": "w",
                                       "input": draw(st.dictionaries(st.text(max_size=3), st.integers(0, 9), max_size=2))}})
        messages.append({"role": "assistant", "content": answer})
    body: dict = {"messages": messages}
    if draw(st.booleans()):
        body = {"system": [{"text": draw(TEXT)}, *draw(st.sampled_from([[], [{"cachePoint": {"type": "default"}}]]))],
                **body}
    if draw(st.booleans()):
        body["inferenceConfig"] = {"maxTokens": draw(st.integers(1, 4096))}
    if draw(st.booleans()):
        body = {"modelId": "anthropic.claude-3-5-sonnet", **body}  # a body's field before its messages
    return body


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(requests(), min_size=1, max_size=2))
def test_any_request_comes_back_whole_and_botocore_takes_it(tmp_path, bodies):
    back = round_trip(tmp_path, bodies, "bedrock-converse")
    assert [json.dumps(b) for b in back] == [json.dumps(b) for b in bodies]  # values and key order
    assert [converse_errors(b) for b in back] == [[] for _ in back]


@pytest.mark.parametrize("name", sorted(p.name for p in REAL.iterdir() if ".request" in p.name))
def test_a_real_request_comes_back_whole_and_botocore_takes_it(tmp_path, name):
    # Requests recorded by OpenTelemetry's botocore instrumentation and pydantic-ai's tests
    # (tests/data/formats/README.md): parallel calls, thinking with signatures, a failed tool.
    written, back = real_file_back(tmp_path, REAL / name, "bedrock-converse")
    assert back == written and [converse_errors(json.loads(body)) for body in back] == [[]]
