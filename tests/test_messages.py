"""SPEC §5 on the real recordings and on generated steps: text, tool calls, results, pairing."""

from __future__ import annotations

import copy

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from chatconv.messages import (extract_text_from_message, extract_text_from_messages,
                               extract_tool_calls_from_messages, extract_tool_results_from_messages,
                               normalize_output, step_messages)
from chatconv.pairing import ToolPairing
from chatconv.problems import ChatconvError
from conftest import RECORDED, read_jsonl

WEATHER = read_jsonl(RECORDED / "weather-steps.jsonl")
MASTRA = {step["stepIndex"]: step for step in read_jsonl(RECORDED / "mastra-travel-planner-steps.jsonl")}


def test_weather_step_0_by_hand():
    step = WEATHER[0]
    assert extract_text_from_messages(step["output"]) == (
        "The current weather in San Francisco, CA is sunny with a temperature of 72°F, humidity at 65%, "
        "and wind speed of 10 mph.")
    assert extract_tool_calls_from_messages(step["output"]) == [
        {"toolCallId": "di3wILsFH1FvvShN", "toolName": "weather", "args": {"location": "San Francisco, CA"}}]
    [result] = extract_tool_results_from_messages(step["output"])
    assert result["toolCallId"] == "di3wILsFH1FvvShN" and result["output"]["value"]["temperature"] == 72


def test_mastra_parallel_calls_are_paired_with_their_results():
    for index, expected in ((2, [("1XEufbvADC2ti4k4", "searchFlightsTool"), ("h2QeeOESmbCrDzjU", "searchAccommodationsTool")]),
                            (8, [("OfuApLXHiNMEiHGx", "searchVehiclesTool"), ("WLJHVf2IejVAOuQK", "searchVehiclesTool")])):
        pairing = ToolPairing()
        pairing.add_step(MASTRA[index])
        assert [(c.call["toolCallId"], c.call["toolName"]) for c in pairing.calls] == expected
        assert all(c.status == "ok" and c.result["toolCallId"] == c.call["toolCallId"] for c in pairing.calls)
        assert pairing.orphans == [] and pairing.duplicates == []
    assert MASTRA[8]["output"][0]["content"][0]["input"]["type"] == "compact"
    assert extract_tool_calls_from_messages(MASTRA[8]["output"])[1]["args"]["type"] == "sedan"


def test_string_content_and_part_arrays_mixed():
    # mastra: the final assistant message of step 2 has string content after a tool round trip
    text = extract_text_from_messages(MASTRA[2]["output"])
    assert text.startswith("I've found a few options for your flights from New York (JFK) to San Francisco")


def test_multi_message_output_yields_all_text_and_calls():
    output = [
        {"role": "assistant", "content": [{"type": "text", "text": "Let me check."},
                                          {"type": "tool-call", "toolCallId": "a", "toolName": "t", "input": {"q": 1}}]},
        {"role": "tool", "content": [{"type": "tool-result", "toolCallId": "a", "toolName": "t",
                                      "output": {"type": "error-text", "value": "timeout"}}]},
        {"role": "assistant", "content": [{"type": "reasoning", "text": "hmm"}, {"type": "text", "text": "It failed."}]},
    ]
    assert extract_text_from_messages(output) == "Let me check.\n\nIt failed."
    assert extract_text_from_messages(output, include_reasoning=True) == "Let me check.\n\nhmm\nIt failed."
    pairing = ToolPairing()
    pairing.add_step({"stepIndex": 0, "input": {"role": "user", "content": "go"}, "output": output})
    assert [(c.call["args"], c.status, c.result["output"]["value"]) for c in pairing.calls] == [({"q": 1}, "error", "timeout")]


def test_ai_sdk_4_parts_are_read():
    message = {"role": "assistant", "content": [{"type": "tool-call", "toolCallId": "a", "toolName": "t", "args": {"x": 1}}]}
    result = {"role": "tool", "content": [{"type": "tool-result", "toolCallId": "a", "toolName": "t", "result": "bad",
                                           "isError": True}]}
    assert extract_tool_calls_from_messages([message])[0]["args"] == {"x": 1}
    assert extract_tool_results_from_messages([result])[0]["output"] == {"type": "error-text", "value": "bad"}
    bare = {"role": "assistant", "content": [{"type": "tool-call", "toolCallId": "b", "toolName": "t"}]}
    assert extract_tool_calls_from_messages([bare])[0]["args"] == {}


def test_pairing_across_steps_orphans_and_duplicates():
    call = lambda i: {"role": "assistant", "content": [{"type": "tool-call", "toolCallId": i, "toolName": "t", "input": {}}]}
    result = lambda i: {"role": "tool", "content": [{"type": "tool-result", "toolCallId": i, "toolName": "t",
                                                     "output": {"type": "text", "value": "v"}}]}
    pairing = ToolPairing()
    pairing.add_step({"stepIndex": 0, "input": {"role": "user", "content": "x"}, "output": [call("a"), call("b")]})
    pairing.add_step({"stepIndex": 1, "input": result("a"), "output": [result("zz"), call("b"), result("a")]})
    assert [(c.step_index, c.call["toolCallId"], c.status) for c in pairing.calls] == [
        (0, "a", "ok"), (0, "b", "unanswered"), (1, "b", "unanswered")]
    # A second result for "a" answers a call that was made: no orphan, as validate says too.
    assert [(i, r["toolCallId"]) for i, r in pairing.orphans] == [(1, "zz")]
    assert [(i, r["toolCallId"]) for i, r in pairing.repeats] == [(1, "a")]
    assert [(i, c["toolCallId"]) for i, c in pairing.duplicates] == [(1, "b")]


@pytest.mark.parametrize("bad", [None, "text", 3])
def test_normalize_output_refuses_what_is_not_a_message(bad):
    with pytest.raises(ChatconvError, match="output must be a message or an array of messages"):
        normalize_output(bad)


def all_steps():
    steps = []
    for path in sorted(RECORDED.glob("*.jsonl")):
        for record in read_jsonl(path):
            steps.extend(record["steps"] if "steps" in record else [record])
    return steps


STEPS = all_steps()


@settings(max_examples=60)
@given(st.sampled_from(STEPS))
def test_legacy_single_output_gives_the_same_results_as_its_array(step):
    first = step["output"][0]
    legacy = copy.deepcopy(first)
    for fn in (extract_text_from_messages, extract_tool_calls_from_messages, extract_tool_results_from_messages):
        assert fn(normalize_output(legacy)) == fn([first])
    assert normalize_output(step["output"]) is step["output"]


text_part = st.builds(lambda t: {"type": "text", "text": t}, st.text(max_size=8))
other_part = st.sampled_from([{"type": "reasoning", "text": "«r»"},
                              {"type": "tool-call", "toolCallId": "c", "toolName": "t", "input": {}}])
message = st.builds(lambda role, content: {"role": role, "content": content},
                    st.sampled_from(["user", "assistant", "tool", "system"]),
                    st.one_of(st.text(max_size=8), st.lists(st.one_of(text_part, other_part), max_size=4)))


@given(st.lists(message, max_size=5))
def test_text_extraction_drops_no_text_part_and_adds_none(messages):
    texts = [extract_text_from_message(m) for m in messages]
    for m, t in zip(messages, texts):
        expected = m["content"] if isinstance(m["content"], str) else "\n".join(
            p["text"] for p in m["content"] if p["type"] == "text")
        assert t == expected
        assert "«r»" not in t
    assert extract_text_from_messages(messages) == "\n\n".join(t for t in texts if t)


call_ids = st.sampled_from(["a", "b", "c", "d"])


@given(st.lists(st.lists(st.tuples(st.sampled_from(["call", "result"]), call_ids), max_size=4), max_size=5))
def test_pairing_accounts_for_every_call_and_every_result_exactly_once(steps_spec):
    pairing, calls, results = ToolPairing(), 0, 0
    for index, parts in enumerate(steps_spec):
        output = []
        for kind, call_id in parts:
            if kind == "call":
                output.append({"role": "assistant", "content": [{"type": "tool-call", "toolCallId": call_id,
                                                                 "toolName": "t", "input": {}}]})
                calls += 1
            else:
                output.append({"role": "tool", "content": [{"type": "tool-result", "toolCallId": call_id,
                                                            "toolName": "t", "output": {"type": "text", "value": "v"}}]})
                results += 1
        pairing.add_step({"stepIndex": index, "input": {"role": "user", "content": "x"}, "output": output})
    assert len(pairing.calls) == calls
    answered = [c for c in pairing.calls if c.result is not None]
    assert len(answered) + len(pairing.orphans) + len(pairing.repeats) == results
    assert len({id(c.result) for c in answered}) == len(answered)  # no result used twice
    assert all(c.result["toolCallId"] == c.call["toolCallId"] for c in answered)


def test_step_messages_are_input_then_outputs():
    assert step_messages(WEATHER[1]) == [WEATHER[1]["input"], *WEATHER[1]["output"]]


def test_the_call_ledger_pairs_results_with_calls_by_id():
    # The one pairing rule validate and `tools` keep per conversation.
    from chatconv.pairing import ANSWERED, ORPHAN, REPEAT, CallLedger

    ledger = CallLedger()
    assert ledger.call("a", "first a") is False and ledger.call("b", "b") is False
    assert ledger.answer("z") == (ORPHAN, None)
    assert ledger.answer("a") == (ANSWERED, "first a")
    assert ledger.answer("a") == (REPEAT, None)  # a retry of an answered call: no error
    assert ledger.call("a", "second a") is True  # a used id again: a duplicate, and the open one
    assert ledger.call("c", "c") is False
    assert ledger.close() == [("b", "b"), ("a", "second a"), ("c", "c")]  # in the order opened
    assert ledger.close() == [] and ledger.answer("b") == (REPEAT, None)
