"""The openai-responses format: Responses API request bodies, response objects and item lists.

Fixtures (tests/data/formats/openai-responses) are built from OpenAI's published API reference:
https://platform.openai.com/docs/api-reference/responses/create (request: input, instructions,
conversation, previous_response_id; input items: message, function_call, function_call_output,
reasoning, custom_tool_call, ...), https://platform.openai.com/docs/api-reference/responses/object
(the response object and its output items) and
https://platform.openai.com/docs/guides/function-calling (the tool loop chained by
previous_response_id).
"""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from chatconv.formats import FORMATS, read
from conftest import read_jsonl, run_chatconv

DATA = Path(__file__).parent / "data" / "formats" / "openai-responses"
NAME = "openai-responses"


def _detected(data) -> list[str]:
    return [fmt.NAME for fmt in FORMATS if fmt.detect(data)]


def _read(tmp_path: Path, record, name: str = "r.jsonl"):
    path = tmp_path / name
    path.write_bytes(orjson.dumps(record) + b"\n")
    problems: list = []
    return read(path, problems=problems), problems


def _own(item: dict) -> dict:
    return (item.get("providerOptions") or {}).get(NAME) or {}


# --- detection ----------------------------------------------------------------------------------


@pytest.mark.parametrize("path", sorted(DATA.glob("*.jsonl")), ids=lambda p: p.name)
def test_every_fixture_record_is_openai_responses_only(path):
    for record in read_jsonl(path):
        assert _detected(record) == [NAME]
    assert _detected(orjson.loads((DATA / "items.json").read_bytes())) == [NAME]


@pytest.mark.parametrize("data", [
    {"messages": [{"role": "user", "content": "hi"}]},  # a chat body
    [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"}],  # a chat log
    [{"role": "developer", "content": [{"type": "text", "text": "be brief"}]}],  # chat parts
    {"input": {"role": "user", "content": "hi"}, "output": [], "stepIndex": 0},  # chatconv's own step
    {"input": "hi", "target": "hello"},  # an eval sample
    {"object": "chat.completion", "output": []},
    [], {}, "input",
])
def test_what_is_not_a_responses_record_is_not_claimed(data):
    assert NAME not in _detected(data)


def test_a_role_list_with_responses_part_types_is_responses():
    assert _detected([{"role": "user", "content": [{"type": "input_text", "text": "hi"}]}]) == [NAME]
    assert _detected([{"role": "assistant", "content": [{"type": "output_text", "text": "hi"}]}]) == [NAME]
    assert _detected({"model": "gpt-4.1", "input": "hi"}) == [NAME]


# --- reading ------------------------------------------------------------------------------------


def test_an_item_list_becomes_model_messages_with_the_items_fields_kept():
    [conversation] = read(DATA / "items.json")
    assert conversation.id == "items.json:1" and conversation.metadata == {}
    assert conversation.messages == [
        {"role": "system", "content": "You are a build assistant.",
         "providerOptions": {NAME: {"content": [{"type": "input_text", "text": "You are a build assistant."}],
                                    "type": "message"}}},
        {"role": "user", "content": [{"type": "text", "text": "Is the main branch green?"}]},
        {"role": "assistant", "content": [
            {"type": "tool-call", "toolCallId": "call_ci_1", "toolName": "ci_status", "input": {"branch": "main"},
             "providerOptions": {NAME: {"item": {"type": "function_call"}}}}]},
        {"role": "tool", "content": [
            {"type": "tool-result", "toolCallId": "call_ci_1", "toolName": "ci_status",
             "output": {"type": "text", "value": "passing"},
             "providerOptions": {NAME: {"item": {"type": "function_call_output"}}}}]},
        {"role": "assistant", "content": [
            {"type": "text", "text": "Yes: main is passing.",
             "providerOptions": {NAME: {"annotations": [], "item": {"type": "message", "role": "assistant"}}}}]},
    ]
    assert conversation.paths == [(0,), (1,), (2,), (3,), (4,)]


def test_a_request_body_with_every_item_and_part_type():
    simple, full = read(DATA / "requests.jsonl")
    assert [m["role"] for m in simple.messages] == ["system", "user"]
    assert _own(simple.messages[0]) == {"instructions": True} and _own(simple.messages[1]) == {"inputString": True}
    assert simple.metadata == {"model": "gpt-4.1", "temperature": 0.7, "max_output_tokens": 400, "store": False}

    assert full.id == "conv_68a1f0c2e5a48190b5d3a6f1c0de0001"
    assert set(full.metadata) == {"model", "conversation", "reasoning", "include", "text", "tools", "tool_choice",
                                  "parallel_tool_calls"}
    system, user, turn, results, answer, *rest = full.messages
    assert system["content"].startswith("Answer in English") and _own(system) == {"role": "developer"}
    parts = user["content"]
    assert [p["type"] for p in parts] == ["text", "image", "image", "file", "file", "file", "image", "file"]
    assert _own(parts[1]) == {"detail": "high"} and parts[2]["image"].startswith("data:image/png;base64,")
    assert parts[3]["mediaType"] == "application/pdf" and parts[3]["filename"] == "report.pdf"
    assert parts[4]["data"] == "file-6F2ksmvXxt4VdoqmHRw6kL" and _own(parts[4]) == {"source": "file_id"}
    assert _own(parts[5]) == {"source": "file_url"}
    assert parts[6]["image"].startswith("file-") and _own(parts[6]) == {"fileId": True, "detail": "auto"}
    assert parts[7]["mediaType"] == "audio/wav" and _own(parts[7]) == {"type": "input_audio", "format": "wav"}
    # reasoning, message and two calls in a row: one assistant message, each item's fields on its first part
    assert [p["type"] for p in turn["content"]] == ["reasoning", "reasoning", "text", "tool-call", "tool-call"]
    assert _own(turn["content"][0])["item"]["encrypted_content"].startswith("gAAAA")
    assert "item" not in _own(turn["content"][1])
    assert _own(turn["content"][2])["annotations"][0]["type"] == "file_citation"
    assert turn["content"][3]["input"] == {"city": "Paris"}
    assert _own(turn["content"][3])["item"] == {"type": "function_call", "id": "fc_68a1f0db5a3c8190a9e2d1c0b9a8f7e6",
                                               "status": "completed"}
    # two outputs in a row: one tool message; a list of input_text parts is a content output
    assert [p["toolName"] for p in results["content"]] == ["get_weather", "get_weather"]
    assert results["content"][1]["output"] == {"type": "content", "value": [
        {"type": "text", "text": "Error: no such city: Atlantis"}]}
    assert answer["role"] == "assistant"
    follow_up, sql_turn, sql_result, sql_answer, thanks, chart_call, chart_result, refusal = rest
    assert follow_up == {"role": "user", "content": "Now count last month's orders."}
    assert sql_turn["content"][0]["input"].startswith("SELECT count(*)")  # a custom tool's free text
    assert sql_result["content"][0]["toolName"] == "run_sql"
    assert _own(sql_answer["content"][0]) == {"contentString": True, "item": {"role": "assistant"}}
    assert chart_result["content"][0]["output"]["type"] == "json"  # text and an image: the parts as they are
    assert chart_result["content"][0]["output"]["value"][1]["type"] == "input_image"
    assert _own(refusal["content"][0]) == {"refusal": True, "item": {"role": "assistant"}}


def test_response_objects_keep_their_ids_output_and_the_items_with_no_place(tmp_path):
    problems: list = []
    searched, refused, incomplete = read(DATA / "responses.jsonl", problems=problems)
    assert searched.id == "resp_68a1f3b0a4e88190b1c2d3e4f5a6b7c8"
    assert searched.messages[0] == {"role": "system", "content": "Search the web before answering.",
                                    "providerOptions": {NAME: {"instructions": True}}}
    turn = searched.messages[1]
    assert [p["type"] for p in turn["content"]] == ["reasoning", "text"]
    assert turn["content"][0]["text"] == "" and _own(turn["content"][0])["noSummary"] is True
    assert _own(turn["content"][0])["item"]["summary"] == []  # the empty summary stays with the item
    assert _own(turn["content"][1])["logprobs"][0]["token"] == "A"
    [kept] = _own(turn)["items"]
    assert kept["at"] == 1 and kept["item"]["type"] == "web_search_call"
    assert kept["item"]["action"]["query"] == "positive news story today"
    assert [p.path for p in problems] == ["$.output[1]"] and not problems[0].is_error
    assert "usage" in searched.metadata and "output" not in searched.metadata

    assert refused.id == "conv_68a1f4a0a0008190c0ffee0000000002"  # `conversation` wins over the id
    assert _own(refused.messages[0]["content"][0])["refusal"] is True
    assert incomplete.metadata["incomplete_details"] == {"reason": "max_output_tokens"}
    assert incomplete.messages[0]["content"][0]["type"] == "reasoning"


def test_a_tool_loop_chained_by_previous_response_id_pairs_results_and_numbers_steps(tmp_path):
    result = run_chatconv("import", DATA / "tool-loop.jsonl")
    assert result.returncode == 0, result.stderr_text
    steps = [orjson.loads(line) for line in result.stdout.splitlines()]
    first_response = "resp_67ccf18ef5fc8190b16dbee19bc54e5f087bb177ab789d5c"
    assert [(s["conversationId"], s["stepIndex"]) for s in steps] == [
        ("tool-loop.jsonl:1", 0), (first_response, 0), (first_response, 1),
        ("resp_67ccf19bca0c8190a2d1d1c7b2e8e9f0087bb177ab789d5c", 0)]
    assert steps[2]["input"]["content"][0]["toolName"] == "get_weather"  # named from the earlier record
    assert steps[2]["metadata"][NAME]["previous_response_id"] == first_response


def test_imported_fixtures_validate_and_every_call_is_answered(tmp_path):
    imported = run_chatconv("import", DATA)
    assert imported.returncode == 0, imported.stderr_text
    assert "10 records read (10 openai-responses)" in imported.stderr_text
    out = tmp_path / "out.jsonl"
    out.write_bytes(imported.stdout)
    validated = run_chatconv("validate", out)
    assert validated.returncode == 0 and "0 errors" in validated.stdout_text + validated.stderr_text
    tools = [orjson.loads(line) for line in run_chatconv("tools", out).stdout.splitlines()]
    assert len(tools) == 6 and {t["status"] for t in tools} == {"ok"}
    assert {t["toolName"] for t in tools} == {"ci_status", "get_weather", "run_sql", "render_chart"}


# --- bad input ----------------------------------------------------------------------------------


@pytest.mark.parametrize("record, path, words", [
    ({"input": [{"type": "message", "role": "user", "content": [{"type": "input_video", "url": "x"}]}]},
     "$.input[0].content[0]", "a part of type 'input_video'"),
    ({"input": [{"type": "hologram_call", "id": "h1"}]}, "$.input[0]", "'hologram_call'"),
    ({"input": [{"type": "message", "role": "robot", "content": "hi"}]}, "$.input[0].role", "role"),
    ({"input": [{"type": "function_call", "name": "f", "arguments": "{}"}]}, "$.input[0]", "call_id"),
    ({"input": [{"type": "function_call_output", "call_id": "c", "output": 42}]}, "$.input[0].output", "string"),
    ({"input": [{"type": "reasoning", "summary": "thought"}]}, "$.input[0].summary", "summary_text"),
    ({"input": [{"type": "message", "role": "assistant", "content": []}]}, "$.input[0].content", "non-empty"),
    ({"input": [{"type": "message", "role": "system", "content": 3}]}, "$.input[0].content", "system"),
    ({"input": [{"type": "custom_tool_call", "call_id": "c", "name": "sql", "input": {"q": 1}}]},
     "$.input[0].input", "string"),
    ({"input": [{"type": "function_call_output", "call_id": "call_nowhere", "output": "x"}]}, "$.input[0]",
     "answers no earlier tool call"),
    ({"object": "response", "id": "resp_1", "output": [{"type": "message", "role": "assistant",
                                                        "content": [{"type": "input_image"}]}]},
     "$.output[0].content[0]", "assistant"),
])
def test_bad_records_are_refused_with_their_json_path(tmp_path, record, path, words):
    conversations, problems = _read(tmp_path, record)
    errors = [p for p in problems if p.is_error]
    assert conversations == [] and errors, problems
    assert errors[0].path == path and words in errors[0].message, errors[0]


@pytest.mark.parametrize("record, path, words", [
    ({"messages": [{"role": "user", "content": "hi"}]}, "$", "no input"),
    ({"object": "response", "id": "resp_1"}, "$.output", "must be a list"),
    ([{"input": "hi"}, 3], "$[1]", "a record is a JSON object"),
])
def test_records_named_responses_that_are_not_are_refused_as_such(tmp_path, record, path, words):
    path_ = tmp_path / "r.jsonl"
    path_.write_bytes(orjson.dumps(record) + b"\n")
    problems: list = []
    read(path_, NAME, problems=problems)
    errors = [p for p in problems if p.is_error]
    assert [(e.path, words in e.message) for e in errors] == [(path, True)], problems
    assert "Error" not in errors[0].message  # said as what the record lacks, not as a Python exception


def test_a_truncated_line_and_wrong_shapes_are_problems_not_tracebacks(tmp_path):
    good = orjson.dumps({"input": "hi"})
    path = tmp_path / "bad.jsonl"
    path.write_bytes(good + b"\n" + good[:-4] + b"\n" + orjson.dumps({"object": "response", "output": [3]}) + b"\n")
    result = run_chatconv("import", "--from", NAME, path)
    assert result.returncode == 1
    assert "bad.jsonl:2" in result.stderr_text and "bad.jsonl:3" in result.stderr_text
    assert len(result.stdout.splitlines()) == 1  # the good line is still imported
    assert run_chatconv("import", "--from", NAME, DATA / "items.json").returncode == 0


def test_an_item_with_no_neighbouring_assistant_message_is_kept_on_an_empty_one(tmp_path):
    [conversation], problems = _read(tmp_path, [
        {"role": "user", "content": [{"type": "input_text", "text": "and the file?"}]},
        {"type": "item_reference", "id": "msg_abc"},
        {"role": "user", "content": "thanks"}])
    assert conversation.messages[1] == {"role": "assistant", "content": [], "providerOptions": {
        NAME: {"items": [{"at": 0, "item": {"type": "item_reference", "id": "msg_abc"}}]}}}
    assert [p.severity for p in problems] == ["warning"]


# --- nothing lost, order kept (generated item lists) ---------------------------------------------

_text = st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), min_size=1, max_size=12)
_id = st.from_regex(r"call_[A-Za-z0-9]{4,8}", fullmatch=True)
_user = st.builds(lambda t, d: {"type": "message", "role": "user", "content": [
    {"type": "input_text", "text": t}, {"type": "input_image", "image_url": f"https://example.com/{d}.png",
                                        "detail": "low"}]}, _text, st.integers(0, 999))
_assistant = st.builds(lambda t, i: {"type": "message", "id": f"msg_{i}", "status": "completed", "role": "assistant",
                                     "content": [{"type": "output_text", "text": t, "annotations": []}]},
                       _text, st.integers(0, 999))
_reasoning = st.builds(lambda ts, i: {"type": "reasoning", "id": f"rs_{i}",
                                      "summary": [{"type": "summary_text", "text": t} for t in ts]},
                       st.lists(_text, max_size=3), st.integers(0, 999))


@st.composite
def _items(draw):
    items = [draw(_user)]
    for _ in range(draw(st.integers(1, 4))):
        items += draw(st.lists(st.one_of(_assistant, _reasoning), max_size=2))
        calls = draw(st.lists(_id, max_size=2, unique=True).filter(lambda ids: not set(ids) & _seen(items)))
        items += [{"type": "function_call", "call_id": c, "name": "lookup",
                   "arguments": orjson.dumps({"q": draw(_text)}).decode()} for c in calls]
        items += [{"type": "function_call_output", "call_id": c, "output": draw(_text)} for c in calls]
        items += draw(st.lists(st.one_of(_user, _assistant), max_size=1))
    return items


def _seen(items: list) -> set:
    return {item.get("call_id") for item in items}


def _leaves(value) -> list:
    """The values of a JSON value, but its type tags (the mapping turns them into others)."""
    if isinstance(value, dict):
        return [leaf for k, v in value.items() if k != "type" for leaf in _leaves(v)]
    if isinstance(value, list):
        return [leaf for v in value for leaf in _leaves(v)]
    return [value]


@settings(max_examples=60, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(items=_items())
def test_generated_items_lose_nothing_and_keep_their_order(tmp_path, items):
    [conversation], problems = _read(tmp_path, items, "gen.jsonl")
    assert not [p for p in problems if p.is_error]
    out = _leaves(conversation.messages)
    source = [{**item, "arguments": orjson.loads(item["arguments"])} if item["type"] == "function_call" else item
              for item in items]  # arguments are read parsed
    for leaf in _leaves(source):  # every value read is somewhere in the messages
        assert leaf in out, leaf
    said = [p.get("text", p.get("toolCallId")) for m in conversation.messages if isinstance(m["content"], list)
            for p in m["content"] if p["type"] in ("text", "tool-call", "reasoning")]
    expected = [t for item in items for t in (
        [p["text"] for p in item["content"]] if item["type"] == "message" and item["role"] == "assistant" else
        [p["text"] for p in item["content"] if p["type"] == "input_text"] if item["type"] == "message" else
        [s["text"] for s in item["summary"]] or [""] if item["type"] == "reasoning" else
        [item["call_id"]] if item["type"] == "function_call" else [])]
    assert said == expected
