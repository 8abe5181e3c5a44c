"""Responses as the APIs wrote them: a response logged alone is the answer of a step whose input
was not recorded (text, dataset and tools give the answer; export writes no made-up request),
and a request logged with its response (`{"request", "response"}`) is one conversation for every
provider format, the request's turn answered by the response."""

from __future__ import annotations

import json
from pathlib import Path

import orjson
import pytest
from conftest import DATA, import_and_validate, read_jsonl, run_chatconv, write_jsonl

from chatconv.formats import ExportRun, export_bodies, import_paths
from chatconv.messages import is_unrecorded, unrecorded_input

FORMATS = DATA / "formats"
# Each provider's logged response, alone: (file, its answers' text, the tool calls it asks for)
LONE = [
    (FORMATS / "openai-chat" / "response.json", [""], ["get_current_weather"]),
    (FORMATS / "anthropic" / "response.json", ["I'll look that up."], ["get_weather"]),
    (FORMATS / "gemini" / "responses.jsonl",
     ["", "Fjords hold the sky\nstill water, steep granite walls\nferries draw white lines",
      "Deep blue fjord at dawn\nmountains lean to drink the light\ngulls stitch the silence"], ["get_weather"]),
]


def _rows(command: str, path: Path) -> list[dict]:
    result = run_chatconv(command, path)
    assert result.returncode == 0, result.stderr_text
    return [orjson.loads(line) for line in result.stdout.splitlines()]


@pytest.mark.parametrize("source, texts, calls", LONE, ids=lambda v: v.parent.name if isinstance(v, Path) else "")
def test_a_response_alone_is_the_output_of_a_step_whose_input_was_not_recorded(tmp_path, source, texts, calls):
    out = import_and_validate(tmp_path, source)
    steps = read_jsonl(out)
    assert all(is_unrecorded(step["input"]) and step["input"]["content"] == "" for step in steps)
    assert all(step["output"] and step["output"][0]["role"] == "assistant" for step in steps)
    assert [row["text"] for row in _rows("text", out)] == texts
    assert [(row["prompt"], row["completion"]) for row in _rows("dataset", out)] == [("", text) for text in texts]
    assert [row["toolName"] for row in _rows("tools", out)] == calls


def test_a_responses_api_response_alone_has_its_instructions_as_input(tmp_path):
    steps = read_jsonl(import_and_validate(tmp_path, FORMATS / "openai-responses" / "responses.jsonl"))
    assert steps[0]["input"]["content"] == "Search the web before answering." and not is_unrecorded(steps[0]["input"])
    assert steps[0]["output"][0]["content"][1]["text"].startswith("A rescued sea otter")


def test_a_conversation_that_goes_on_from_an_earlier_record_is_not_given_an_unrecorded_input(tmp_path):
    # A Responses tool loop: a response (its request logged apart, unlinked), then the request
    # after its call, which starts with the call's result and goes on with the response's id.
    steps = read_jsonl(import_and_validate(tmp_path, FORMATS / "openai-responses" / "tool-loop.jsonl"))
    assert [is_unrecorded(step["input"]) for step in steps] == [False, True, False, True]
    assert steps[2]["input"]["role"] == "tool" and steps[2]["stepIndex"] == 1


@pytest.mark.parametrize("target", ["openai-chat", "anthropic", "gemini"])
@pytest.mark.parametrize("per", ["step", "conversation"])
def test_export_writes_no_body_of_a_response_alone_and_says_so_for_every_target(tmp_path, target, per):
    steps = tmp_path / "steps.jsonl"
    write_jsonl(steps, import_paths([str(source) for source, _, _ in LONE]))
    run = ExportRun()
    assert list(export_bodies([str(steps)], target, per, run=run)) == []
    assert [(p.code, p.severity, p.line, p.path) for p in run.problems] == [
        ("no-request", "warning", line, "$.input") for line in range(1, 6)]
    result = run_chatconv("export", "--to", target, "--per", per, steps)
    assert result.returncode == 0 and result.stdout == b"" and "no request body to write" in result.stderr_text


def test_a_body_needing_an_unrecorded_input_is_not_written_but_the_others_are(tmp_path):
    asked = {"role": "user", "content": "hi"}
    answer = {"role": "assistant", "content": "hello"}
    steps = write_jsonl(tmp_path / "s.jsonl", [
        {"conversationId": "a", "stepIndex": 0, "input": unrecorded_input(), "output": [answer]},
        {"conversationId": "a", "stepIndex": 1, "input": asked, "output": [answer]},
        {"conversationId": "b", "stepIndex": 0, "input": asked, "output": [answer]}])
    run = ExportRun()
    bodies = [orjson.loads(body) for body in export_bodies([str(steps)], "openai-chat", "step", run=run)]
    assert bodies == [{"messages": [asked, answer]}]
    assert [(p.code, p.line) for p in run.problems] == [("no-request", 1), ("no-request", 1)]


# --- {request, response} ------------------------------------------------------------------------


def _exchange(tmp_path: Path, name: str, request: dict, response: dict, **rest) -> Path:
    path = tmp_path / name
    # Indented, as a log written for people: problems are still located in it.
    path.write_text(json.dumps({"request": request, "response": response, **rest}, indent=2))
    return path


def _first(path: Path) -> dict:
    return json.loads(path.read_text().splitlines()[0])


OPENAI_REQUEST = {"model": "gpt-4o", "messages": [{"role": "system", "content": "Be brief."},
                                                  {"role": "user", "content": "Weather in Boston?"}],
                  "tools": [{"type": "function", "function": {"name": "get_current_weather",
                                                              "parameters": {"type": "object"}}}]}


def test_an_openai_chat_request_with_its_response_is_one_conversation(tmp_path):
    response = json.loads((FORMATS / "openai-chat" / "response.json").read_text())
    source = _exchange(tmp_path, "log.json", OPENAI_REQUEST, response, latency_ms=321)
    steps = read_jsonl(import_and_validate(tmp_path, source))
    assert [s["conversationId"] for s in steps] == [response["id"]] * 2
    assert [s["input"]["content"] for s in steps] == ["Be brief.", "Weather in Boston?"]
    answer = steps[1]["output"][0]
    assert answer["content"][0]["toolName"] == "get_current_weather"
    assert answer["providerOptions"]["openai-chat"]["record"] == {"latency_ms": 321}
    assert answer["providerOptions"]["openai-chat"]["response"]["usage"]["total_tokens"] == 99
    assert steps[0]["metadata"] == {"openai-chat": {"model": "gpt-4o", "tools": OPENAI_REQUEST["tools"]}}
    # Export gives the request back, the answer after it.
    body = orjson.loads(next(export_bodies([str(tmp_path / "log.json.steps.jsonl")], "openai-chat", "conversation")))
    assert body["messages"][:2] == OPENAI_REQUEST["messages"] and body["tools"] == OPENAI_REQUEST["tools"]
    assert body["messages"][2]["tool_calls"][0]["function"]["name"] == "get_current_weather"


def test_a_gemini_request_with_its_response_is_one_conversation_per_candidate(tmp_path):
    response = orjson.loads((FORMATS / "gemini" / "responses.jsonl").read_bytes().splitlines()[1])
    request = {"contents": [{"role": "user", "parts": [{"text": "A haiku on fjords, twice."}]}],
               "generationConfig": {"candidateCount": 2}}
    steps = read_jsonl(import_and_validate(tmp_path, _exchange(tmp_path, "g.json", request, response)))
    assert [s["conversationId"] for s in steps] == ["Xk3laJ2fBvWm1dkPn9qS8Qw", "Xk3laJ2fBvWm1dkPn9qS8Qw#1"]
    assert all(s["input"]["content"] == [{"type": "text", "text": "A haiku on fjords, twice."}] for s in steps)
    assert steps[0]["input"] is not steps[1]["input"]
    assert [s["output"][0]["content"][0]["text"].split("\n")[0] for s in steps] == ["Fjords hold the sky",
                                                                                    "Deep blue fjord at dawn"]
    assert all(s["metadata"] == {"gemini": {"generationConfig": {"candidateCount": 2}}} for s in steps)


def test_a_responses_request_with_its_response_says_its_instructions_once(tmp_path):
    response = orjson.loads((FORMATS / "openai-responses" / "responses.jsonl").read_bytes().splitlines()[0])
    request = {"model": "o4-mini", "instructions": "Search the web before answering.", "input": "Good news today?"}
    steps = read_jsonl(import_and_validate(tmp_path, _exchange(tmp_path, "r.json", request, response)))
    assert [s["input"]["role"] for s in steps] == ["system", "user"]
    answer = steps[1]["output"][0]
    assert answer["content"][1]["text"].startswith("A rescued sea otter")
    kept = answer["providerOptions"]["openai-responses"]["response"]
    assert kept["id"] == response["id"] and kept["usage"] == response["usage"]


def test_an_exchange_problem_is_located_in_its_half(tmp_path):
    response = json.loads((FORMATS / "openai-chat" / "response.json").read_text())
    response["choices"][0]["message"]["tool_calls"][0]["function"]["arguments"] = "{not json"
    source = _exchange(tmp_path, "bad.json", OPENAI_REQUEST, response)
    problems: list = []
    import_paths([str(source)], problems=problems)
    [problem] = problems
    assert problem.code == "arguments-not-json"
    assert problem.path == "$.response.choices[0].message.tool_calls[0].function.arguments"
    lines = source.read_text().splitlines()
    assert '"arguments": "{not json"' in lines[problem.line - 1]


def test_a_pair_whose_halves_are_of_two_formats_is_not_an_exchange(tmp_path):
    response = json.loads((FORMATS / "anthropic" / "response.json").read_text())
    gemini_request = {"contents": [{"role": "user", "parts": [{"text": "hi"}]}]}
    problems: list = []
    assert import_paths([str(_exchange(tmp_path, "x.json", gemini_request, response))], problems=problems) == []
    assert [p.code for p in problems] == ["unknown-format"]


def test_from_names_the_format_of_an_exchange_too(tmp_path):
    response = json.loads((FORMATS / "openai-chat" / "response.json").read_text())
    source = _exchange(tmp_path, "log.json", OPENAI_REQUEST, response)
    assert import_paths([str(source)], "openai-chat") == import_paths([str(source)])


@pytest.mark.parametrize("target", ["openai-chat", "anthropic", "gemini"])
def test_set_aside_responses_items_are_left_out_of_every_body_with_a_warning(tmp_path, target):
    response = orjson.loads((FORMATS / "openai-responses" / "responses.jsonl").read_bytes().splitlines()[0])
    request = {"model": "o4-mini", "input": "Good news today?"}
    steps = import_and_validate(tmp_path, _exchange(tmp_path, "r.json", request, response))
    run = ExportRun()
    [body] = list(export_bodies([str(steps)], target, "conversation", run=run))
    assert b"web_search_call" not in body
    assert [p.message for p in run.problems if p.code == "part-left-out" and "Responses item" in p.message] == [
        f"1 Responses item(s) set aside on this message (web_search_call) have no place in a body for {target}: left out"]


def test_strict_makes_a_part_left_out_an_error_and_the_summary_counts_them(tmp_path):
    response = orjson.loads((FORMATS / "openai-responses" / "responses.jsonl").read_bytes().splitlines()[0])
    steps = import_and_validate(tmp_path, _exchange(tmp_path, "r.json", {"model": "o4-mini", "input": "Hi"}, response))
    lenient = run_chatconv("export", "--to", "anthropic", steps)
    assert lenient.returncode == 0 and lenient.stdout.count(b"\n") == 1
    assert lenient.stderr_text.count(": warning: ") == 2
    assert lenient.stderr_text.endswith("2 steps read: 1 body written, 2 parts left out\n")
    strict = run_chatconv("export", "--to", "anthropic", "--strict", steps)
    assert strict.returncode == 1 and strict.stdout == b""
    assert strict.stderr_text.count(": error: $.output[0]: not exported: ") == 2  # at the answer that held them
    assert strict.stderr_text.endswith("2 steps read: 0 bodies written, 2 parts left out\n")
    run = ExportRun()
    assert list(export_bodies([str(steps)], "anthropic", "conversation", run=run, strict=True)) == []
    assert sorted(p.code for p in run.problems if p.is_error) == ["part-left-out", "part-left-out"]


def test_the_summary_counts_responses_without_their_request(tmp_path):
    steps = write_jsonl(tmp_path / "s.jsonl", import_paths([str(FORMATS / "anthropic" / "response.json")]))
    result = run_chatconv("export", "--to", "openai-chat", steps)
    assert result.returncode == 0 and result.stdout == b""
    assert result.stderr_text.endswith("1 step read: 0 bodies written, 1 response without its request\n")


def test_a_response_repeated_under_its_id_is_still_an_answer_not_a_question(tmp_path):
    # A retried call logged twice: the second record goes on with the conversation, with the model.
    response = json.loads((FORMATS / "anthropic" / "response.json").read_text())
    retried = {**response, "content": [{"type": "text", "text": "Retry answer"}]}
    steps = write_jsonl(tmp_path / "s.jsonl", import_paths([str(write_jsonl(tmp_path / "log.jsonl", [response, retried]))]))
    rows = [(row["prompt"], row["completion"]) for row in _rows("dataset", steps)]
    assert rows == [("", "I'll look that up."), ("", "Retry answer")]


@pytest.mark.parametrize("target", ["openai-chat", "anthropic", "gemini"])
def test_a_tool_another_provider_ran_is_left_out_with_a_warning(tmp_path, target):
    steps = import_and_validate(tmp_path, FORMATS / "anthropic" / "mcp-exchange.json")
    run = ExportRun()
    [body] = [orjson.loads(b) for b in export_bodies([str(steps)], target, "conversation", run=run)]
    left_out = [p.message for p in run.problems if p.code == "part-left-out"]
    if target == "anthropic":  # its own MCP blocks go back as they were
        assert left_out == [] and b"mcp_tool_use" in orjson.dumps(body)
    else:
        assert len(left_out) == 2 and all("'echo'" in m or "tool-result" in m for m in left_out)
        assert b"echo" not in orjson.dumps(body).replace(b"I'll use the echo tool.", b"")


# Exchanges whose other half is none chatconv reads: what there is is read, the rest kept, said.
ODD_EXCHANGES = [
    ({"request": None, "response": {"id": "c1", "object": "chat.completion", "choices": [
        {"index": 0, "message": {"role": "assistant", "content": "hi"}, "finish_reason": "stop"}]}},
     "$.request", "the request is null", ["", "hi"]),
    ({"request": {"messages": [{"role": "user", "content": "q"}]},
      "response": [{"id": "c1", "object": "chat.completion.chunk", "choices": []}]},
     "$.response", "the response is a list", ["q"]),
    ({"request": {"messages": [{"role": "user", "content": "q"}]}, "response": None},
     "$.response", "the response is null", ["q"]),
    ({"request": {"messages": [{"role": "user", "content": "q"}]}}, None, None, ["q"]),
    ({"request": {"messages": [{"role": "user", "content": "q"}]},
      "response": {"error": {"message": "rate limited", "type": "rate_limit"}}},
     "$.response", "the response is an API error", ["q"]),
    ({"request": {"contents": [{"role": "user", "parts": [{"text": "q"}]}]},
      "response": {"promptFeedback": {"blockReason": "SAFETY"}, "responseId": "r9"}},
     "$.response", "the response holds no answer", ["q"]),
    ({"request": {"contents": [{"role": "user", "parts": [{"text": "q"}]}]},
      "response": {"candidates": [], "responseId": "r8"}}, "$.response", "the response holds no answer", ["q"]),
]


@pytest.mark.parametrize("record, path, words, texts", ODD_EXCHANGES)
def test_an_exchange_with_a_half_chatconv_does_not_read_keeps_it_and_says_so(tmp_path, record, path, words, texts):
    from sdk_types import CHECKS
    source = write_jsonl(tmp_path / "log.jsonl", [record])
    problems: list = []
    steps = import_paths([str(source)], problems=problems)
    assert [p.path for p in problems if p.code == "import-changed"] == ([path] if path else [])
    assert all(words in p.message for p in problems if p.code == "import-changed")
    written = [step["input"]["content"] if isinstance(step["input"]["content"], str)
               else step["input"]["content"][0]["text"] for step in steps] + [
        m["content"] for step in steps for m in step["output"] if isinstance(m["content"], str)]
    assert written == texts
    if path == "$.response" and record["response"] is not None:  # the response not read is kept whole
        assert orjson.dumps(record["response"]) in orjson.dumps(steps)
    recording = write_jsonl(tmp_path / "steps.jsonl", steps)
    for target, check in (("openai-chat", "openai"), ("anthropic", "anthropic"), ("gemini", "gemini")):
        for body in export_bodies([str(recording)], target, "conversation", run=ExportRun()):
            assert CHECKS[check](orjson.loads(body)) == [], (target, body)
