"""Recordings as steps: adapters, dataset items, payloads both ways, and the text/tools/dataset commands."""

from __future__ import annotations

import json

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from chatconv.providers import render_anthropic, render_gemini, render_openai
from chatconv.formats import from_openai_messages
from chatconv.recordings import (adapt, conversation_messages, conversation_to_dataset,
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


def test_tools_reports_orphans_and_repeated_ids_where_they_are(tmp_path):
    call = {"role": "assistant", "content": [{"type": "tool-call", "toolCallId": "a", "toolName": "t", "input": {}}]}
    orphan = {"role": "tool", "content": [{"type": "tool-result", "toolCallId": "zz", "toolName": "t",
                                           "output": {"type": "text", "value": "v"}}]}
    path = write_jsonl(tmp_path / "r.jsonl", [  # no conversationId: one conversation, null
        {"stepIndex": 0, "input": {"role": "user", "content": "x"}, "output": [call]},
        {"stepIndex": 1, "input": {"role": "user", "content": "y"}, "output": [call, orphan]}])
    result = run_chatconv("tools", path)
    assert result.returncode == 1
    assert rows(result) == [{"conversationId": None, "stepIndex": index, "toolCallId": "a", "toolName": "t",
                             "args": {}, "result": None, "status": "unanswered"} for index in (0, 1)]
    line = path.read_text().splitlines()[1]
    at_call, at_result = line.index('"toolCallId":"a"') + 1, line.index('"toolCallId":"zz"') + 1
    assert result.stderr_text.splitlines() == [  # in the order of the parts, as validate reports them
        f"{path}:2:{at_call}: warning: $.output[0].content[0].toolCallId: duplicate toolCallId 'a' "
        "(each tool call should have its own id)",
        f"{path}:2:{at_result}: error: $.output[1].content[0].toolCallId: tool-result 'zz' answers no earlier "
        "tool-call (a tool result must follow the tool-call with the same toolCallId)"]


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


def test_steps_without_a_conversation_id_are_named_after_the_file(tmp_path):
    steps = [{k: v for k, v in s.items() if k != "conversationId"} for s in read_jsonl(RECORDED / "weather-steps.jsonl")]
    path = write_jsonl(tmp_path / "run-7.jsonl", steps)
    assert [item["id"] for item in rows(run_chatconv("dataset", path))][:2] == ["run-7-step-0", "run-7-step-1"]
    from_stdin = run_chatconv("dataset", "-", stdin=path.read_bytes())
    assert rows(from_stdin)[0]["id"] == "stdin-step-0"


def _deep(levels: int) -> list:
    value: list = []
    for _ in range(levels - 1):
        value = [value]
    return value


def test_a_step_too_deep_to_write_is_left_out(tmp_path):
    steps = read_jsonl(RECORDED / "weather-steps.jsonl")[:3]
    steps[1]["metadata"] = {"d": _deep(300)}
    steps[2]["output"][0]["content"][0]["input"] = {"d": _deep(300)}  # a tool call's args
    path = tmp_path / "r.jsonl"
    path.write_text("".join(json.dumps(step) + "\n" for step in steps))  # orjson writes 255 levels at most
    dataset = run_chatconv("dataset", path)
    assert dataset.returncode == 1
    assert [item["id"] for item in rows(dataset)] == ["weather-trajectory-step-0", "weather-trajectory-step-2"]
    assert dataset.stderr_text == (f"{path}:2:1: error: $: step left out: it nests deeper than the 255 levels "
                                   "chatconv writes (flatten the value: chatconv writes JSON at most 255 levels deep)\n")
    tools = run_chatconv("tools", path)
    assert tools.returncode == 1
    assert [row["stepIndex"] for row in rows(tools)] == [0, 1]
    [problem] = tools.stderr_text.splitlines()
    assert problem.startswith(f"{path}:3:") and ": error: $.output[0].content[0].input: tool call " in problem
    assert "left out: it nests deeper than the 255 levels chatconv writes" in problem
    text = run_chatconv("text", path)  # nothing deep in its rows
    assert text.returncode == 0 and len(rows(text)) == 3


BIG = 123456789012345678901234567890


def _big_integer_steps() -> list[dict]:
    steps = read_jsonl(RECORDED / "weather-steps.jsonl")[:4]
    steps[0]["stepIndex"] = BIG
    steps[1]["metadata"] = {"n": BIG}
    steps[2]["output"][1]["content"][0]["output"]["value"] = {"n": BIG}  # a tool result
    steps[3]["output"][-1]["content"] = "call +1 555"  # a '+' in the text: nothing inexact in the row
    steps[3]["metadata"] = {"n": BIG, "max": 2**64 - 1, "min": -2**63, "float": 1e30}
    return steps


@pytest.mark.parametrize("command, written, problems", [
    ("text", [1, 2, 3], [(1, "$")]),
    ("dataset", [2], [(1, "$"), (2, "$"), (4, "$")]),
    ("tools", [1, 3, 3], [(1, "$.stepIndex"), (3, "$.output[1].content[0].output.value")]),
])
def test_integers_beyond_64_bits_are_never_written_changed(tmp_path, command, written, problems):
    path = tmp_path / "r.jsonl"
    path.write_text("".join(json.dumps(step) + "\n" for step in _big_integer_steps()))  # json: BIG as digits
    result = run_chatconv(command, path)
    assert result.returncode == 1
    found = result.stderr_text.splitlines()
    assert [(int(line.split(":")[1]), line.split(": ")[2]) for line in found] == problems
    assert all(f"the integer {BIG} is beyond 64 bits and would not be written exactly" in line for line in found)
    out = rows(result)
    assert [row.get("stepIndex", row.get("id")) for row in out] == [
        f"weather-trajectory-step-{i}" if command == "dataset" else i for i in written]
    assert "e+29" not in result.stdout_text


def test_integers_within_64_bits_and_large_floats_are_written_as_read(tmp_path):
    step = _big_integer_steps()[3]
    del step["metadata"]["n"]
    path = tmp_path / "r.jsonl"
    path.write_text(json.dumps(step) + "\n")
    result = run_chatconv("dataset", path)
    assert result.returncode == 0
    assert b'"metadata":{"max":18446744073709551615,"min":-9223372036854775808,"float":1e+30}' in result.stdout


@pytest.mark.parametrize("command", ["text", "tools", "dataset"])
def test_recording_help_names_stdin_and_field_names(command):
    text = " ".join(run_chatconv(command, "--help").stdout_text.split())
    assert "PATHS are files, folders" in text and "- for standard input" in text
    assert "NAME is one of: conversationId, stepIndex, input, output, id, timestamp, metadata, steps" in text


def test_schema_takes_the_short_kinds():
    step = run_chatconv("schema", "step")
    assert step.returncode == 0 and step.stdout == run_chatconv("schema", "step-record").stdout


def test_field_map_from_the_cli(tmp_path):
    steps = [{"conv": s["conversationId"], "turn": s["stepIndex"], "input": s["input"], "response": s["output"]}
             for s in read_jsonl(RECORDED / "weather-steps.jsonl")]
    path = write_jsonl(tmp_path / "other.jsonl", steps)
    result = run_chatconv("text", path, "--field", "output=response", "--field", "stepIndex=turn",
                          "--field", "conversationId=conv")
    assert rows(result) == rows(run_chatconv("text", RECORDED / "weather-steps.jsonl"))


@pytest.mark.parametrize("fields, expected", [
    (["nonsense"], "'nonsense' is not NAME=KEY with NAME one of: conversationId, stepIndex, input, output, id,"),
    (["outptu=response"], "'outptu=response' is not NAME=KEY"),
    (["output=a", "output=b"], "output is mapped twice (output=a, output=b)"),
    (["id=x", "conversationId=x"], "the key 'x' is mapped twice"),
])
def test_bad_field_mappings_are_usage_errors(fields, expected):
    options = [option for field in fields for option in ("--field", field)]
    result = run_chatconv("text", RECORDED / "weather-steps.jsonl", *options)
    assert result.returncode == 2 and result.stdout_text == ""
    assert f"Error: Invalid value for '--field': {expected}" in result.stderr_text


@pytest.mark.parametrize("field, key", [("output=input", "output"), ("stepIndex=conversationId", "stepIndex")])
def test_a_mapping_never_hides_a_key_the_record_has(tmp_path, field, key):
    path = write_jsonl(tmp_path / "r.jsonl", read_jsonl(RECORDED / "weather-steps.jsonl")[:2])
    result = run_chatconv("text", path, "--field", field)
    assert result.returncode == 1 and result.stdout_text == ""
    first, second = result.stderr_text.splitlines()
    name, source = field.split("=")
    assert first.startswith(f"{path}:1:") and second.startswith(f"{path}:2:")
    assert f": error: $.{key}: --field {field}: the record has both '{source}' and '{name}'" in first


def test_mappings_may_swap_two_keys(tmp_path):
    swapped = [{**s, "input": s["output"], "output": s["input"]} for s in read_jsonl(RECORDED / "weather-steps.jsonl")]
    path = write_jsonl(tmp_path / "swapped.jsonl", swapped)
    result = run_chatconv("text", path, "--field", "input=output", "--field", "output=input")
    assert rows(result) == rows(run_chatconv("text", RECORDED / "weather-steps.jsonl"))


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


def test_a_conversation_line_is_read_for_big_integers_once_not_once_per_step(tmp_path, monkeypatch):
    # Each step's row holding an "e+" (as a float beyond 64 bits is written) looks at its record's
    # text; a conversation's text is shared by all its steps, and reading it per step made long
    # conversations quadratic.
    from chatconv import recordings
    from chatconv.sources import json as sources_json

    calls = []
    real = sources_json._read_integers
    monkeypatch.setattr(sources_json, "_read_integers", lambda text: calls.append(1) or real(text))
    sources_json.integers_beyond_64_bits.cache_clear()
    steps = [{"stepIndex": i, "input": {"role": "user", "content": f"{i}e+{i}"},
              "output": [{"role": "assistant", "content": f"{2 * i}"}]} for i in range(50)]
    path = tmp_path / "conv.jsonl"
    path.write_bytes(orjson.dumps({"id": "c", "steps": steps}) + b"\n")
    items = list(recordings.iter_recording_steps(path))
    rows = [recordings.step_row_json(item, {"text": recordings.step_text(item.step), "in": item.step["input"]})
            for item in items]
    assert len(rows) == 50 and all(b"e+" in row for row in rows)
    assert len(calls) == 1
