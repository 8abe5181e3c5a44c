"""Recording formats: each recognises its own data only, and turns it into AI SDK model messages."""

from __future__ import annotations

import pytest

from chatconv.formats import FORMATS, ai_sdk, openai_chat
from chatconv.problems import ChatconvError
from chatconv.recordings import conversation_messages, from_openai_messages
from conftest import read_jsonl, recorded_files

OPENAI_LOG = [
    {"role": "system", "content": "You book trips."},
    {"role": "user", "content": [{"type": "text", "text": "A flight to Oslo"},
                                 {"type": "image_url", "image_url": {"url": "https://example.com/map.png"}}]},
    {"role": "assistant", "content": None, "tool_calls": [
        {"id": "call_1", "type": "function", "function": {"name": "search", "arguments": '{"to": "OSL"}'}}]},
    {"role": "tool", "tool_call_id": "call_1", "content": "2 flights"},
    {"role": "assistant", "content": "There are 2 flights."},
]


def _detected(data) -> list[str]:
    return [recording_format.NAME for recording_format in FORMATS if recording_format.detect(data)]


@pytest.mark.parametrize("path", recorded_files(), ids=lambda path: path.name)
def test_recorded_files_are_ai_sdk_records(path):
    for record in read_jsonl(path):
        assert _detected(record) == ["ai-sdk"]
        steps = record["steps"] if "steps" in record else [record]
        # Each step's input, then its outputs, step after step.
        assert ai_sdk.to_model_messages(record) == [message for step in steps
                                                    for message in [step["input"], *step["output"]]]


def test_ai_sdk_messages_of_a_conversation_by_hand():
    user = lambda text: {"role": "user", "content": text}
    answer = lambda text: {"role": "assistant", "content": text}
    conversation = {"id": "c", "steps": [
        {"stepIndex": 0, "input": user("a"), "output": [answer("b"), answer("c")]},
        {"stepIndex": 1, "input": user("d"), "output": answer("e")}]}  # a legacy one-message output
    expected = [user("a"), answer("b"), answer("c"), user("d"), answer("e")]
    assert ai_sdk.to_model_messages(conversation) == expected
    assert conversation_messages(conversation["steps"]) == expected
    assert ai_sdk.to_model_messages(conversation["steps"][1]) == expected[3:]


def test_an_openai_log_is_openai_chat_and_becomes_model_messages():
    assert _detected(OPENAI_LOG) == ["openai-chat"]
    expected = [
        {"role": "system", "content": "You book trips."},
        {"role": "user", "content": [{"type": "text", "text": "A flight to Oslo"},
                                     {"type": "image", "image": "https://example.com/map.png"}]},
        {"role": "assistant", "content": [{"type": "tool-call", "toolCallId": "call_1", "toolName": "search",
                                           "input": {"to": "OSL"}}]},
        {"role": "tool", "content": [{"type": "tool-result", "toolCallId": "call_1", "toolName": "search",
                                      "output": {"type": "text", "value": "2 flights"}}]},
        {"role": "assistant", "content": "There are 2 flights."},
    ]
    assert openai_chat.to_model_messages(OPENAI_LOG) == expected
    assert from_openai_messages(OPENAI_LOG) == expected


def test_model_messages_with_tool_parts_are_not_an_openai_log():
    tool_messages = [{"role": "assistant", "content": [{"type": "tool-call", "toolCallId": "a", "toolName": "t",
                                                        "input": {}}]},
                     {"role": "tool", "content": [{"type": "tool-result", "toolCallId": "a", "toolName": "t",
                                                   "output": {"type": "text", "value": "v"}}]}]
    assert _detected(tool_messages) == []
    assert _detected([]) == [] and _detected({"role": "user"}) == []


def test_openai_arguments_that_are_not_json_are_a_problem():
    log = [{"role": "assistant", "content": None, "tool_calls": [
        {"id": "c", "type": "function", "function": {"name": "f", "arguments": "{oops"}}]}]
    with pytest.raises(ChatconvError) as caught:
        openai_chat.to_model_messages(log)
    [problem] = caught.value.problems
    assert (problem.path, problem.code) == ("$[0].tool_calls", "invalid-json")


@pytest.mark.parametrize("log, path, message", [
    ([{"role": "assistant", "content": None, "tool_calls": [{"id": "c"}]}],
     "$[0].tool_calls[0].function", "tool_calls[0].function must be an object"),
    ([{"role": "assistant", "content": None, "tool_calls": [{"function": {"name": "f"}}]}],
     "$[0].tool_calls[0].id", "tool_calls[0].id must be a string"),
    ([{"role": "assistant", "content": None, "tool_calls": {"id": "c"}}], "$[0].tool_calls", "tool_calls must be a list"),
    ([{"role": "user", "content": "hi"}, {"role": "user", "content": [{"type": "image_url", "image_url": {}}]}],
     "$[1].content[0].image_url.url", "content[0].image_url.url must be a string"),
    ([{"role": "user", "content": [{"type": "file"}]}], "$[0].content[0].file", "content[0].file must be an object"),
])
def test_an_openai_log_of_another_shape_is_not_detected_and_is_a_problem(log, path, message):
    assert _detected(log) == []
    with pytest.raises(ChatconvError) as caught:
        openai_chat.to_model_messages(log)
    [problem] = caught.value.problems
    assert (problem.path, problem.message, problem.code) == (path, message, "wrong-type")
