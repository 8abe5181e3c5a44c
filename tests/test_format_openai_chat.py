"""The openai-chat format: Chat Completions message lists, request bodies, fine-tuning lines and
response objects read into chatconv's recordings, and written back.

Fixtures (tests/data/formats/openai-chat) follow OpenAI's API reference:
https://platform.openai.com/docs/api-reference/chat/create (messages, content parts, tool_calls,
refusal, developer), https://platform.openai.com/docs/api-reference/chat/object (the response
object), https://platform.openai.com/docs/guides/fine-tuning (fine-tuning lines with `tools`,
`parallel_tool_calls` and `weight`), and the legacy `function_call` / role `function` messages.
"""

from __future__ import annotations

import json
from pathlib import Path

import orjson
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from chatconv.formats import ExportRun, export_bodies, from_openai_messages, import_paths, read, write
from chatconv.formats.openai_chat import _checked_message
from chatconv.formats.openai_chat.common import common_message
from chatconv.formats.reading import Reading
from chatconv.problems import ChatconvError
from chatconv.recordings import tool_rows
from chatconv.sources import Record

from conftest import import_and_validate, import_problems, write_jsonl

DATA = Path(__file__).parent / "data" / "formats" / "openai-chat"


def _imported(tmp_path, name: str, problems: list | None = None) -> Path:
    return import_and_validate(tmp_path, DATA / name, problems=problems)


def _bodies(path: Path) -> list[dict]:
    if path.suffix == ".jsonl":
        return [json.loads(line) for line in path.read_text().splitlines()]
    return [json.loads(path.read_text())]


@pytest.mark.parametrize("name", ["finetune.jsonl", "parts.json", "response.json", "legacy.jsonl"])
def test_every_fixture_imports_into_valid_recordings_whose_calls_are_all_answered_where_the_source_answers_them(
        tmp_path, name):
    out = _imported(tmp_path, name, problems=[])
    rows = list(tool_rows(out))
    statuses = {row["toolCallId"]: row["status"] for row in rows}
    if name == "response.json":  # a response whose calls the next request would answer
        assert statuses == {"call_abc123": "unanswered"}
    else:
        assert all(status == "ok" for status in statuses.values()) and (statuses or name == "parts.json")


@pytest.mark.parametrize("name", ["finetune.jsonl", "parts.json"])
def test_import_then_export_gives_the_same_bodies(tmp_path, name):
    out = _imported(tmp_path, name)
    exported = [orjson.loads(body) for body in export_bodies([str(out)], "openai-chat", per="conversation")]
    assert exported == _bodies(DATA / name)


def test_a_fine_tuning_line_becomes_steps_cut_at_each_user_and_system_message(tmp_path):
    records = import_paths([str(DATA / "finetune.jsonl")])
    [system, first] = [r for r in records if r["conversationId"] == "finetune.jsonl:1"]
    assert system["input"] == {"role": "system", "content": "You are a weather assistant."} and system["output"] == []
    assert system["metadata"]["openai-chat"]["parallel_tool_calls"] is False  # the body's own fields
    marv = [r for r in records if r["conversationId"] == "finetune.jsonl:2"]
    assert [(s["stepIndex"], s["input"]["role"], len(s["output"])) for s in marv] == [
        (0, "system", 0), (1, "user", 1), (2, "user", 1)]
    call, result, answer = first["output"]
    assert call["content"][0]["input"] == {"location": "San Francisco, USA", "format": "celsius"}
    assert result["content"][0]["toolName"] == "get_current_weather"  # named after the call it answers
    assert answer["providerOptions"] == {"openai-chat": {"weight": 1}}  # a field with no model-message place


def test_every_case_the_old_importer_damaged_is_read_right_or_warned():
    problems: list = []
    [legacy, not_json, parsed] = [read_one for read_one in read(DATA / "legacy.jsonl", problems=problems)]
    # function_call and role function: a call and its result, paired; double-encoded arguments decoded once.
    call = legacy.messages[1]["content"][0]
    assert (call["toolName"], call["input"]) == ("calculator", {"expression": "2+2"})
    assert legacy.messages[2]["content"][0]["toolCallId"] == call["toolCallId"]
    # Arguments that are not JSON stay a string; arguments already an object are the input.
    assert not_json.messages[1]["content"][0]["input"] == "query=weather"
    assert parsed.messages[1]["content"][1]["input"] == {"query": "news"}
    assert [(p.code, p.line, p.path) for p in problems] == [
        ("arguments-double-encoded", 1, "$[1].function_call.arguments"),
        ("arguments-not-json", 2, "$[1].tool_calls[0].function.arguments")]
    [parts] = read(DATA / "parts.json")
    developer, system, user, assistant = parts.messages[:4]
    assert developer == {"role": "system", "content": "Answer in one sentence.",
                         "providerOptions": {"openai-chat": {"role": "developer"}}}
    audio = user["content"][3]
    assert (audio["type"], audio["data"], audio["mediaType"]) == ("file", "UklGRiQAAABXQVZF", "audio/wav")
    assert [p["type"] for p in user["content"]] == ["text", "image", "image", "file", "file", "file"]
    refusal = parts.messages[-1]
    assert refusal["content"] == [{"type": "text", "text": "I can't help with that.",
                                   "providerOptions": {"openai-chat": {"refusal": True}}}]


def test_array_tool_content_is_a_content_output():
    [_, _, parallel] = read(DATA / "finetune.jsonl")
    result = parallel.messages[3]["content"][0]
    assert result["output"] == {"type": "content", "value": [{"type": "text", "text": "unavailable: "},
                                                             {"type": "text", "text": "station down"}]}


def test_a_response_object_is_a_conversation_named_by_its_id_with_the_response_fields_on_its_message():
    [response] = read(DATA / "response.json")
    assert response.id == "chatcmpl-B9MHDbslfkBeAs8l4bebGdFOJ6PeG"
    [message] = response.messages
    kept = message["providerOptions"]["openai-chat"]
    assert kept["choice"]["finish_reason"] == "tool_calls" and kept["response"]["usage"]["total_tokens"] == 99
    assert kept["refusal"] is None and kept["annotations"] == []  # the source's own fields, nulls too
    call = message["content"][0]
    assert call["providerOptions"]["openai-chat"]["arguments"] == '{\n"location": "Boston, MA"\n}'  # as written


@pytest.mark.parametrize("bad, path", [
    ("not a list", "$[0]"),
    ([{"role": "human", "content": "hi"}], "$[0]"),
    ([{"role": "assistant", "content": None, "tool_calls": [{"id": "c", "type": "function"}]}], "$[0].tool_calls[0]"),
    ([{"role": "user", "content": [{"type": "video", "video": "x"}]}], "$[0].content[0]"),
    ([{"role": "tool", "content": "orphan"}], "$[0]"),
    ([{"role": "tool", "tool_call_id": "nobody", "content": "orphan"}], "$[0]"),
    ([{"role": "function", "name": "f", "content": "no call"}], "$[0]"),
    ([{"role": "user", "content": [{"type": "image_url", "image_url": {"url": 7}}]}], "$[0].content[0]"),
    # Calls that are not calls are refused, not passed over.
    ([{"role": "assistant", "content": "x", "tool_calls": "search"}], "$[0].tool_calls"),
    ([{"role": "assistant", "content": "x", "function_call": "search"}], "$[0].function_call"),
    ([{"role": "user", "content": [{"type": "input_audio", "input_audio": {"data": "UklGRg=="}}]}], "$[0].content[0]"),
])
def test_from_openai_messages_refuses_what_it_cannot_read_with_a_chatconv_error(bad, path):
    with pytest.raises(ChatconvError) as caught:
        from_openai_messages(bad)
    assert caught.value.problems[0].path == path


def test_inspect_style_and_completion_objects_given_to_from_openai_messages_are_errors_not_tracebacks():
    inspect_messages = [{"role": "user", "content": [{"type": "text", "text": "hi"}], "source": "input"},
                        {"role": "assistant", "content": "hi", "tool_calls": [
                            {"id": "t1", "function": "ls", "arguments": {"path": "."}}]}]
    with pytest.raises(ChatconvError):
        from_openai_messages(inspect_messages)
    with pytest.raises(ChatconvError):
        from_openai_messages(_bodies(DATA / "response.json")[0])


def test_write_gathers_the_tools_of_the_calls_only_when_asked():
    messages = from_openai_messages(_bodies(DATA / "finetune.jsonl")[2]["messages"])
    assert "tools" not in write(messages, "openai-chat")
    assert write(messages, "openai-chat", gather_tools=True)["tools"] == [
        {"type": "function", "function": {"name": "get_current_weather"}}]


# ---------------------------------------------------------------------------------------------
# The round trip, on generated bodies

_text = st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=12)
_arguments = st.dictionaries(st.sampled_from(["q", "n", "unit"]), st.integers(-5, 5) | _text, max_size=3)


_extra = st.dictionaries(st.sampled_from(["x_note", "x_id", "x_flag"]),
                         st.none() | st.booleans() | st.integers(-(2 ** 63), 2 ** 63 - 1) | _text, max_size=2)


def _with(draw, item: dict) -> dict:
    """`item` with, at times, fields of the source's own that no model-message field holds."""
    return {**item, **draw(_extra)}


@st.composite
def _user(draw):
    part = st.one_of(
        st.builds(lambda t: {"type": "text", "text": t}, _text),
        st.builds(lambda u, d: {"type": "image_url", "image_url": {"url": u, **d}},
                  st.sampled_from(["https://example.com/a.png", "data:image/png;base64,iVBORw0KGgo="]),
                  st.sampled_from([{}, {"detail": "low"}, {"detail": "high"}, {"detail": "auto"}])),
        st.builds(lambda f: {"type": "input_audio", "input_audio": {"data": "UklGRg==", "format": f}},
                  st.sampled_from(["wav", "mp3"])),
        st.builds(lambda n: {"type": "file", "file": {"filename": n, "file_data": "data:application/pdf;base64,JVBE"}},
                  st.sampled_from(["a.pdf", "b.pdf"])),
        st.builds(lambda n: {"type": "file", "file": {"file_id": "file-abc", **n}},
                  st.sampled_from([{}, {"filename": "notes.txt"}])))
    parts = st.lists(part.map(lambda p: _with(draw, p)), min_size=1, max_size=3)
    message = {"role": "user", "content": draw(_text | parts)}
    if draw(st.booleans()):
        message["name"] = draw(st.sampled_from(["alice", "bob"]))
    return _with(draw, message)


@st.composite
def _call(draw, call_id: str):
    if draw(st.integers(0, 4)) == 0:  # a custom tool: free-text input
        return _with(draw, {"id": call_id, "type": "custom", "custom": {"name": "apply_patch", "input": draw(_text)}})
    dump = draw(st.sampled_from([json.dumps, lambda v: orjson.dumps(v).decode()]))
    return _with(draw, {"id": call_id, "type": "function", "function": _with(draw, {
        "name": draw(st.sampled_from(["search", "lookup"])), "arguments": dump(draw(_arguments))})})


@st.composite
def _result(draw, call_id: str):
    texts = st.lists(st.builds(lambda t: {"type": "text", "text": t}, _text).map(lambda p: _with(draw, p)),
                     min_size=1, max_size=2)
    return _with(draw, {"role": "tool", "tool_call_id": call_id, "content": draw(_text | texts)})


@st.composite
def _exchange(draw, number: int):
    """An assistant turn, with its calls answered at once by tool messages."""
    ids = [f"call_{number}_{i}" for i in range(draw(st.integers(0, 2)))]
    message: dict = {"role": "assistant", "content": draw(st.none() | _text) if ids else draw(_text)}
    if draw(st.booleans()) and message["content"] is None:
        message["refusal"] = draw(_text)
    elif draw(st.booleans()):
        message["refusal"] = None  # as responses echoed into a log write it
    if message["content"] is None and ids and draw(st.booleans()):
        del message["content"]  # fine-tuning lines often leave it out beside tool_calls
    if ids:
        message["tool_calls"] = [draw(_call(i)) for i in ids]
    if draw(st.booleans()):
        message["weight"] = draw(st.sampled_from([0, 1]))  # fine-tuning: learn from this turn or not
    if draw(st.booleans()):
        message["name"] = "helper"
    return [_with(draw, message), *(draw(_result(i)) for i in ids)]


@st.composite
def _bodies_generated(draw):
    messages = []
    if draw(st.booleans()):
        system = {"role": draw(st.sampled_from(["system", "developer"])), "content": draw(_text)}
        if draw(st.booleans()):
            system["name"] = "setup"
        messages.append(_with(draw, system))
    for number in range(draw(st.integers(1, 3))):
        messages.append(draw(_user()))
        if draw(st.booleans()) or number == 0:
            messages.extend(draw(_exchange(number)))
    body: dict = {"messages": messages}
    if draw(st.booleans()):
        body["model"] = "gpt-4o"
    if draw(st.booleans()):
        body["parallel_tool_calls"] = draw(st.booleans())
    return _with(draw, body)


@settings(max_examples=60, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(body=_bodies_generated())
def test_import_then_export_gives_back_any_body(tmp_path_factory, body):
    folder = tmp_path_factory.mktemp("roundtrip")
    source = folder / "bodies.jsonl"
    source.write_text(json.dumps(body) + "\n")  # json: orjson refuses integers beyond 64 bits
    # named: a body with fields of its own (x_note) is a dataset's row to detection (hf-messages)
    records = import_paths([str(source)], "openai-chat")
    steps = folder / "steps.jsonl"
    steps.write_text("".join(json.dumps(r) + "\n" for r in records))
    [exported] = [json.loads(b) for b in export_bodies([str(steps)], "openai-chat", per="conversation")]
    assert exported == body
    # Import is stable: the exported body imports into the same records.
    source.write_text(json.dumps(exported) + "\n")
    assert import_paths([str(source)], "openai-chat") == records


# The common shapes read sooner: the same message as the full reading, or the full reading

_odd = st.none() | st.booleans() | st.integers(-2, 2) | st.just("") | st.just("x") | st.just([]) | st.just({})
_big_or_float = st.integers(-(2 ** 70), 2 ** 70) | st.floats(allow_nan=False, allow_infinity=False) | _text


@st.composite
def _nearcommon_message(draw):
    """A message of a shape openai_chat reads sooner (text, tool calls with their arguments, a
    tool result), or one a key, a type or a value away from it."""
    kind = draw(st.sampled_from(["text", "tool", "calls"]))
    if kind == "text":
        message = {"role": draw(st.sampled_from(["system", "developer", "user", "assistant", "tool"])),
                   "content": draw(_text)}
    elif kind == "tool":
        parts = st.lists(st.fixed_dictionaries({"type": st.just("text"), "text": _text}), max_size=2)
        message = {"role": "tool", "tool_call_id": draw(st.sampled_from(["call_1", ""])),
                   "content": draw(_text | parts)}
    else:
        compact = lambda v: json.dumps(v, separators=(",", ":"), ensure_ascii=False)  # noqa: E731
        calls = []
        for number in range(draw(st.integers(0, 2))):
            value = draw(st.dictionaries(st.sampled_from(["q", "n", "+"]), _big_or_float, max_size=2) | _arguments)
            write = draw(st.sampled_from([compact, compact, compact, json.dumps, lambda v: json.dumps(json.dumps(v)),
                                          lambda v: json.dumps([v])]))
            calls.append({"id": f"call_{number}", "type": "function",
                          "function": {"name": "search", "arguments": write(value)}})
        message = {"role": "assistant", "content": draw(st.none() | _text), "tool_calls": calls}
    for _ in range(draw(st.sampled_from([0, 0, 1, 2]))):  # a step away: a key set to another value, added or left out
        calls = message.get("tool_calls")
        calls = [c for c in calls if isinstance(c, dict)] if isinstance(calls, list) else []
        inner = [c["function"] for c in calls if isinstance(c.get("function"), dict)]
        target = draw(st.sampled_from([message, *calls, *inner]))
        key = draw(st.sampled_from([*target, "name", "refusal", "x_note", "type", "weight"]))
        if draw(st.booleans()) and key in target:
            del target[key]
        else:
            target[key] = draw(_odd)
    return message


def _calling(call: dict | None = None, **function) -> dict:
    """An assistant message with one call: search({"q":"x"}), changed by `call` and `function`."""
    return {"role": "assistant", "content": None, "tool_calls": [
        {"id": "call_1", "type": "function", "function": {"name": "search", "arguments": '{"q":"x"}', **function},
         **(call or {})}]}


@settings(max_examples=200, deadline=None)  # (400 took 10 s of CI's 10 minutes)
@given(message=_nearcommon_message() | _user() | _exchange(0).map(lambda messages: messages[0]))
# Each a step from a shape read sooner, always tried (hypothesis draws them seldom):
@example(message=_calling({"id": ""})).via("an empty call id")
@example(message=_calling({"type": "custom"})).via("a custom call written with `function`")
@example(message=_calling(name="")).via("an empty tool name")
@example(message=_calling(arguments='{"q": "x"}')).via("arguments not written compactly")
@example(message=_calling(arguments='"{\\"q\\":\\"x\\"}"')).via("arguments encoded twice")
@example(message=_calling(arguments='{"n":123456789012345678901234567890}')).via("an integer beyond 64 bits")
@example(message=_calling(arguments='["x"]')).via("arguments that are not an object")
@example(message={"role": "tool", "tool_call_id": "", "content": "ok"}).via("an empty tool_call_id")
@example(message={"role": "tool", "tool_call_id": "call_1", "content": "ok", "name": "search"}).via("a named tool message")
@example(message={"role": "developer", "content": "be brief"}).via("a developer message")
@example(message={k: v for k, v in _calling().items() if k != "content"}).via("calls without content")
@example(message={"role": "tool", "tool_call_id": "call_1", "content": [{"type": "text", "text": "a"}]}
         ).via("a result of text parts")
@example(message={"role": "tool", "tool_call_id": "call_1", "content": [{"type": "text", "text": "a", "x": 1}]}
         ).via("a result of text parts with fields of their own")
@example(message={"role": "tool", "tool_call_id": "call_1", "content": [{"type": "image", "text": "a"}]}
         ).via("a result of parts that are not text")
@example(message=_calling(arguments='{"n": 123456789012345678901234567890}')
         ).via("an integer beyond 64 bits, not written compactly")
@example(message=_calling(arguments='{"n": 1e+400}')).via("a float beyond doubles, not written compactly")
@example(message={"role": "assistant", "content": "hi", "weight": 0}).via("fine-tuning's weight")
@example(message={"role": "assistant", "content": None, "weight": 1}).via("a weight on a message without text")
def test_a_message_read_sooner_is_the_message_the_full_reading_gives(message):

    sooner = common_message(json.loads(json.dumps(message)))
    reading = Reading(Record("log.jsonl", 1, data=[message]), "openai-chat")
    full = _checked_message(message, reading, (0,), {})
    if sooner is not None:
        assert reading.problems == []
        assert json.dumps(sooner) == json.dumps(full)  # the same keys in the same order: the same line


@pytest.mark.parametrize("message", [
    {"role": "user", "content": "hello"},
    {"role": "assistant", "content": "hi", "weight": 1},
    {"role": "tool", "tool_call_id": "call_1", "content": "{\"ok\":true}"},
    {"role": "assistant", "content": None, "tool_calls": [
        {"id": "call_1", "type": "function", "function": {"name": "search", "arguments": '{"q":"x"}'}}]},
    # As OpenAI's fine-tuning guide writes them: calls without content, arguments with spaces.
    {"role": "assistant", "tool_calls": [
        {"id": "call_1", "type": "function", "function": {"name": "search", "arguments": '{"q": "x", "n": 2}'}}]},
    {"role": "tool", "tool_call_id": "call_1", "content": [{"type": "text", "text": "found"}]},
])
def test_the_shapes_of_fine_tuning_lines_are_read_sooner(message):

    assert common_message(message) is not None


# Fields of the source's own at every level: each comes back where it was

OWN_FIELDS_BODY = {"messages": [
    {"role": "user", "content": "hello"},
    {"role": "assistant", "content": "hi", "tool_calls": None, "function_call": None},
    {"role": "assistant", "content": "and", "tool_calls": []},
    {"role": "user", "content": [
        {"type": "image_url", "image_url": {"url": "https://example.com/a.png", "detail": "high", "x": 1}, "x": 2},
        {"type": "input_audio", "input_audio": {"data": "UklGRg==", "format": "wav", "x": 3}, "x": 4},
        {"type": "file", "file": {"file_data": "data:application/pdf;base64,JVBE", "file_id": "file-1",
                                  "filename": "a.pdf"}, "x": 5}]},
    {"role": "assistant", "content": [{"type": "refusal", "refusal": "no", "x": 6}]},
    {"role": "user", "content": "then search"},
    {"role": "assistant", "content": None, "tool_calls": [
        {"id": "call_1", "type": "function", "function": {"name": "search", "arguments": "{}", "x": 7}, "x": 8},
        {"id": "call_2", "type": "function", "function": {"name": "lookup"}},
        {"id": "call_3", "type": "custom", "custom": {"name": "apply_patch", "input": "*** Begin Patch", "x": 9}}]},
    {"role": "tool", "tool_call_id": "call_1", "content": [{"type": "text", "text": "found", "x": 10}]},
    {"role": "tool", "tool_call_id": "call_2", "content": "none"},
    {"role": "tool", "tool_call_id": "call_3", "content": "applied"}]}


def test_the_own_fields_of_parts_inner_objects_calls_and_tool_text_parts_come_back_where_they_were(tmp_path):
    source = tmp_path / "body.json"
    source.write_text(json.dumps(OWN_FIELDS_BODY))
    problems: list = []
    records = import_paths([str(source)], problems=problems)
    # A custom tool's input is free text: no warning that it is not JSON.
    assert [p.code for p in problems] == []
    steps = tmp_path / "steps.jsonl"
    steps.write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in records))
    [exported] = [orjson.loads(b) for b in export_bodies([str(steps)], "openai-chat", per="conversation")]
    assert exported == OWN_FIELDS_BODY


def test_an_integer_beyond_64_bits_leaves_its_conversation_out_of_import_and_export_rather_than_changing(tmp_path):
    source = tmp_path / "big.jsonl"
    source.write_text('{"messages": [{"role": "user", "content": "hi"}], "seed": 123456789012345678901234567890}\n'
                      '{"messages": [{"role": "user", "content": "ok"}], "seed": 1}\n')
    problems: list = []
    records = import_paths([str(source)], problems=problems)
    assert [r["input"]["content"] for r in records] == ["ok"]
    assert [(p.line, p.code) for p in problems if p.is_error] == [(1, "not-written")]
    steps = tmp_path / "steps.jsonl"
    steps.write_text('{"conversationId": "c", "stepIndex": 0, "input": {"role": "user", "content": "hi"}, '
                     '"output": [{"role": "assistant", "content": "yo"}], '
                     '"metadata": {"openai-chat": {"seed": 123456789012345678901234567890}}}\n')
    run = ExportRun()
    assert list(export_bodies([str(steps)], "openai-chat", run=run)) == []
    assert [p.code for p in run.problems] == ["not-written"]


def test_a_response_with_no_choice_is_said_to_hold_no_message(tmp_path):
    source = tmp_path / "response.json"
    source.write_text('{"id": "chatcmpl-1", "object": "chat.completion", "choices": []}')
    problems: list = []
    assert import_paths([str(source)], problems=problems) == []
    assert [p.code for p in problems] == ["import-empty"]


def test_arguments_holding_an_integer_beyond_64_bits_stay_their_text_rather_than_changing_digits(tmp_path):
    arguments = '{"id": 123456789012345678901234567890}'
    body = {"messages": [{"role": "user", "content": "go"}, {"role": "assistant", "content": None, "tool_calls": [
        {"id": "c1", "type": "function", "function": {"name": "fetch", "arguments": arguments}}]},
        {"role": "tool", "tool_call_id": "c1", "content": "ok"}]}
    source = tmp_path / "body.json"
    source.write_text(json.dumps(body))
    problems: list = []
    [record] = import_paths([str(source)], problems=problems)
    assert record["output"][0]["content"][0]["input"] == arguments
    assert [p.code for p in problems] == ["arguments-inexact"]
    assert write([record["input"], *record["output"]], "openai-chat") == body


@pytest.mark.parametrize("log, path", [
    ([{"role": "user", "content": "hi", "noContent": True}], "$[0].noContent"),
    ([{"role": "assistant", "content": "hi", "choice": {"index": 0}}], "$[0].choice"),
    ([{"role": "user", "content": [{"type": "text", "text": "hi", "legacy": "yes"}]}], "$[0].content[0].legacy"),
    ([{"role": "assistant", "content": None, "tool_calls": [{"id": "c", "type": "function", "rawArguments": 1,
                                                             "function": {"name": "f", "arguments": "{}"}}]}],
     "$[0].tool_calls[0].rawArguments"),
])
def test_a_field_named_like_a_mark_is_refused_rather_than_lost_on_export(log, path):
    with pytest.raises(ChatconvError) as caught:
        from_openai_messages(log)
    assert caught.value.problems[0].path == path and "cannot be kept" in caught.value.problems[0].message


def test_a_refusal_part_and_a_null_refusal_are_no_clash():
    log = [{"role": "assistant", "content": [{"type": "refusal", "refusal": "no"}], "refusal": None}]
    [message] = from_openai_messages(log)
    assert write([message], "openai-chat")["messages"] == log


@pytest.mark.parametrize("record, path, words", [
    ({"model": "gpt-4o"}, "$", "holds `messages`, a list"),
    ({"messages": 3}, "$.messages", "holds `messages`, a list"),
    ({"choices": [7]}, "$.choices[0]", "holds its `message`"),
    ({"id": "c", "choices": [{"message": {"role": "human"}}]}, "$.choices[0].message", "not an OpenAI chat message"),
])
def test_a_record_forced_as_openai_chat_that_is_not_one_says_what_it_lacks(tmp_path, record, path, words):
    [problem] = import_problems(write_jsonl(tmp_path / "r.jsonl", [record]), "openai-chat")
    assert (problem.path, problem.line) == (path, 1) and words in problem.message
    assert "Error" not in problem.message  # the reader's own check, not the importer's safety net
