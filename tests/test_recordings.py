"""Recordings as steps: adapters, dataset items, payloads both ways, and the text/tools/dataset commands."""

from __future__ import annotations

import json

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from chatconv.providers import render_anthropic, render_gemini, render_openai
from chatconv.recordings import (adapt, conversation_messages, conversation_to_dataset, from_openai_messages,
                                 iter_recording_steps)
from conftest import RECORDED, read_jsonl, run_chatconv, to_legacy, write_jsonl


def rows(result):
    return [json.loads(line) for line in result.stdout_text.splitlines()]


def test_text_command_on_both_line_styles(tmp_path):
    steps = read_jsonl(RECORDED / "demand-letter-steps.jsonl")
    conversations = read_jsonl(RECORDED / "demand-letter-conversations.jsonl")
    by_steps = rows(run_chatconv("text", RECORDED / "demand-letter-steps.jsonl"))
    by_conversations = rows(run_chatconv("text", RECORDED / "demand-letter-conversations.jsonl"))
    assert [r["stepIndex"] for r in by_steps] == [s["stepIndex"] for s in steps]
    assert len(by_conversations) == sum(len(c["steps"]) for c in conversations)
    assert by_conversations[0] == {"conversationId": conversations[0]["id"], "stepIndex": 0,
                                   "text": "Can you please provide the name of the primary contact person at ABC Company?"}


def test_tools_command_pairs_parallel_calls():
    result = run_chatconv("tools", RECORDED / "mastra-travel-planner-steps.jsonl")
    assert result.returncode == 0 and result.stderr_text == ""
    step8 = [r for r in rows(result) if r["stepIndex"] == 8]
    assert [(r["toolCallId"], r["args"]["type"], r["status"]) for r in step8] == [
        ("OfuApLXHiNMEiHGx", "compact", "ok"), ("WLJHVf2IejVAOuQK", "sedan", "ok")]
    assert step8[0]["result"][0]["name"] == "2021 Honda Civic"
    assert set(step8[0]) == {"conversationId", "stepIndex", "toolCallId", "toolName", "args", "result", "status"}


def test_tools_reports_orphans_and_unanswered(tmp_path):
    path = write_jsonl(tmp_path / "r.jsonl", [
        {"conversationId": "c", "stepIndex": 0, "input": {"role": "user", "content": "x"}, "output": [
            {"role": "assistant", "content": [{"type": "tool-call", "toolCallId": "a", "toolName": "t", "input": {}}]},
            {"role": "tool", "content": [{"type": "tool-result", "toolCallId": "zz", "toolName": "t",
                                          "output": {"type": "text", "value": "v"}}]}]}])
    result = run_chatconv("tools", path)
    assert result.returncode == 1
    assert rows(result) == [{"conversationId": "c", "stepIndex": 0, "toolCallId": "a", "toolName": "t", "args": {},
                             "result": None, "status": "unanswered"}]
    assert "tool-result 'zz' answers no earlier tool-call" in result.stderr_text


def test_legacy_steps_give_the_same_text_and_tools(tmp_path):
    legacy = [to_legacy(step) for step in read_jsonl(RECORDED / "weather-steps.jsonl")]
    path = write_jsonl(tmp_path / "legacy.jsonl", legacy)
    for command in ("text", "tools", "dataset"):
        assert rows(run_chatconv(command, path)) == rows(run_chatconv(command, RECORDED / "weather-steps.jsonl"))


def test_dataset_items(tmp_path):
    items = rows(run_chatconv("dataset", RECORDED / "weather-steps.jsonl"))
    assert items[1]["id"] == "weather-trajectory-step-1"
    assert items[1]["prompt"].startswith("Thanks for that! That's pretty helpful.")
    assert items[1]["metadata"] == read_jsonl(RECORDED / "weather-steps.jsonl")[1]["metadata"]
    [conversation] = read_jsonl(RECORDED / "demand-letter-conversations.jsonl")[:1]
    assert conversation_to_dataset(conversation)[0]["id"] == f"{conversation['id']}-step-0"


def test_field_map_from_the_cli(tmp_path):
    steps = [{"conv": s["conversationId"], "turn": s["stepIndex"], "input": s["input"], "response": s["output"]}
             for s in read_jsonl(RECORDED / "weather-steps.jsonl")]
    path = write_jsonl(tmp_path / "other.jsonl", steps)
    result = run_chatconv("text", path, "--field", "output=response", "--field", "stepIndex=turn",
                          "--field", "conversationId=conv")
    assert rows(result) == rows(run_chatconv("text", RECORDED / "weather-steps.jsonl"))
    bad = run_chatconv("text", path, "--field", "nonsense")
    assert bad.returncode == 1 and "bad field mapping 'nonsense'" in bad.stderr_text


def test_adapt_keeps_other_keys_in_order():
    assert list(adapt({"a": 1, "response": [], "z": 2}, {"output": "response"})) == ["a", "output", "z"]


BAD_RECORDS = {
    "tool part in a user message": ('{"stepIndex":0,"input":{"role":"user","content":[{"type":"tool-call",'
                                    '"toolCallId":"a","toolName":"t","input":{}}]},"output":[]}',
                                    '$.input.content[0].type: "tool-call" is not one of'),
    "call without an id": ('{"stepIndex":0,"input":{"role":"user","content":"x"},"output":[{"role":"assistant",'
                           '"content":[{"type":"tool-call","toolName":"t","input":{}}]}]}',
                           "$.output[0].content[0]: missing required key 'toolCallId'"),
    "output null": ('{"stepIndex":0,"input":{"role":"user","content":"x"},"output":null}',
                    "$.output: expected array, got null"),
}


@pytest.mark.parametrize("name", list(BAD_RECORDS))
@pytest.mark.parametrize("command", ["text", "tools", "dataset"])
def test_bad_records_give_clear_problems(tmp_path, name, command):
    line, expected = BAD_RECORDS[name]
    path = tmp_path / "r.jsonl"
    path.write_text(line + "\n")
    result = run_chatconv(command, path)
    assert result.returncode == 1 and result.stdout_text == ""
    [message] = result.stderr_text.splitlines()
    assert message.startswith(f"{path}:1:") and expected in message


def test_missing_recording_is_exit_2(tmp_path):
    assert run_chatconv("text", tmp_path / "nope.jsonl").returncode == 2


@pytest.mark.parametrize("render", [render_openai, render_anthropic, render_gemini])
def test_real_conversations_replay_as_valid_bodies(render):
    for path in sorted(RECORDED.glob("*.jsonl")):
        problems = []
        steps = [s.step for s in iter_recording_steps(path, problems=problems)]
        assert problems == []
        body, repairs = render(conversation_messages(steps))
        assert repairs == []


def test_replayed_body_keeps_calls_and_results():
    steps = read_jsonl(RECORDED / "weather-steps.jsonl")[:1]
    body, _ = render_anthropic(conversation_messages(steps))
    assert [m["role"] for m in body["messages"]] == ["user", "assistant", "user", "assistant"]
    assert body["messages"][2]["content"][0]["tool_use_id"] == "di3wILsFH1FvvShN"


# --- OpenAI log -> model messages -> OpenAI body is the identity --------------------------------

ids = st.text("abcdefghij0123456789", min_size=3, max_size=6)
json_args = st.dictionaries(st.text("xyz", min_size=1, max_size=3), st.integers(0, 9) | st.text(max_size=4), max_size=3)


@st.composite
def openai_logs(draw):
    log = [{"role": "system", "content": draw(st.text(max_size=10))}]
    for _ in range(draw(st.integers(1, 4))):
        log.append({"role": "user", "content": draw(st.text(min_size=1, max_size=10))})
        if draw(st.booleans()):
            calls = [{"id": draw(ids) + str(i), "type": "function",
                      "function": {"name": draw(st.sampled_from(["search", "book"])),
                                   "arguments": orjson.dumps(draw(json_args)).decode()}}
                     for i in range(draw(st.integers(1, 3)))]
            log.append({"role": "assistant", "content": draw(st.none() | st.text(max_size=6)), "tool_calls": calls})
            log.extend({"role": "tool", "tool_call_id": c["id"], "content": draw(st.text(max_size=8))} for c in calls)
        log.append({"role": "assistant", "content": draw(st.text(max_size=10))})
    return log


@settings(max_examples=150)
@given(openai_logs())
def test_openai_log_round_trip_is_the_identity(log):
    body, repairs = render_openai(from_openai_messages(log))
    assert body["messages"] == log and repairs == []
