"""The gemini format: generateContent request bodies, bare `contents` lists and responses read
into chatconv's recordings, and request bodies written back.

Fixtures (tests/data/formats/gemini) follow Google's Gemini API reference:
https://ai.google.dev/api/generate-content (the request: contents, system_instruction, tools,
toolConfig, generationConfig, safetySettings, cachedContent; the response: candidates with
finishReason, safetyRatings, citationMetadata, index; usageMetadata, modelVersion, responseId),
https://ai.google.dev/api/caching#Content and #Part (text, thought, thoughtSignature, inlineData,
fileData, functionCall, functionResponse, executableCode, codeExecutionResult), and
https://ai.google.dev/gemini-api/docs/function-calling (calls without ids answered by name; a
functionResponse's "output" and "error" keys).
"""

from __future__ import annotations

import json
from pathlib import Path

import orjson
import pytest
from conftest import import_and_validate, run_chatconv
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from chatconv.formats import FORMATS, export_bodies, gemini, import_paths, read, write
from chatconv.problems import ChatconvError
from chatconv.providers import ProviderRuleError
from chatconv.recordings import tool_rows

DATA = Path(__file__).parent / "data" / "formats" / "gemini"


def _messages(data) -> list[dict]:
    """The model messages of one record (written to a file and read)."""
    return [m for conversation in _conversations(data) for m in conversation.messages]


def _conversations(data, problems: list | None = None):
    import tempfile

    with tempfile.NamedTemporaryFile("wb", suffix=".json", delete=False) as file:
        file.write(orjson.dumps(data))
    return read(file.name, "gemini", problems)


def test_requests_import_into_valid_recordings_whose_calls_are_all_answered_and_export_gives_them_back(tmp_path):
    out = import_and_validate(tmp_path, DATA / "requests.jsonl", problems=[])
    rows = list(tool_rows(out))
    assert {row["status"] for row in rows} == {"ok", "error"} and len(rows) == 5
    # Calls without ids are named after where they were; the responses answer them in order.
    by_id = {row["toolCallId"]: row for row in rows}
    assert by_id["get_weather-contents-1-parts-1"]["result"] == {"temp_c": 7, "sky": "cloudy"}
    assert by_id["fc_7f3b"]["status"] == "error"  # a response with an "error" key
    assert by_id["executableCode-contents-3-parts-1"]["result"] == {"outcome": "OUTCOME_OK", "output": "328\n"}
    exported = list(export_bodies([str(out)], "gemini", per="conversation"))
    assert exported == (DATA / "requests.jsonl").read_bytes().splitlines()  # byte for byte


def test_a_request_becomes_steps_with_its_parts_as_model_parts(tmp_path):
    [first, second, third, fourth] = [json.loads(line) for line in (DATA / "requests.jsonl").read_text().splitlines()]
    messages = _messages(first)
    assert messages[0] == {"role": "system", "content": "You are a travel assistant.\nAnswer in one short paragraph.",
                           "providerOptions": {"gemini": {"lengths": [27, 30]}}}
    assert messages[1]["content"][1:] == [
        {"type": "image", "image": first["contents"][0]["parts"][1]["inline_data"]["data"], "mediaType": "image/jpeg"},
        {"type": "file", "data": "https://generativelanguage.googleapis.com/v1beta/files/brochure-8d2k1",
         "mediaType": "application/pdf"}]
    [conversation] = _conversations(first)
    assert conversation.metadata == {key: first[key] for key in ("tools", "tool_config", "generationConfig",
                                                                 "safetySettings")}
    messages = _messages(second)
    assert messages[0]["providerOptions"] == {"gemini": {"key": "systemInstruction", "instruction": {"role": "user"}}}
    assert messages[2]["content"][:2] == [
        {"type": "reasoning", "text": "I need the current weather and a forecast."},
        {"type": "tool-call", "toolCallId": "fc_7f3a", "toolName": "get_weather", "input": {"city": "Oslo"},
         "providerOptions": {"gemini": {"thoughtSignature": "CiQB0e2Kb3x1ZmQ="}}}]
    assert messages[3]["role"] == "tool" and messages[3]["content"][1]["output"] == {
        "type": "error-json", "value": {"error": {"code": 503, "message": "forecast service unavailable"}}}
    # A user turn that answers and adds text: a tool message, then a user message (a step of its own).
    roles = [m["role"] for m in _messages(third)]
    assert roles == ["user", "assistant", "tool", "user", "assistant", "user"]
    code = _messages(third)[4]["content"]
    assert code[1]["providerExecuted"] is True and code[2]["type"] == "tool-result" and code[2]["toolName"] == "code_execution"
    assert _messages(fourth) == [{"role": "user", "content": [{"type": "text", "text": "Write a haiku about fjords."}],
                                  "providerOptions": {"gemini": {"noRole": True}}}]


def test_a_response_is_a_conversation_per_candidate_named_by_its_response_id(tmp_path):
    out = import_and_validate(tmp_path, DATA / "responses.jsonl", problems=[])
    steps = [json.loads(line) for line in out.read_text().splitlines()]
    assert [s["conversationId"] for s in steps] == ["mJvlaPqDL9ak1dkP2sy7oAk", "Xk3laJ2fBvWm1dkPn9qS8Qw",
                                                    "Xk3laJ2fBvWm1dkPn9qS8Qw#1"]
    # A response alone: the answer is the output of a step whose input was not recorded.
    assert all(s["input"] == {"role": "user", "content": "", "providerOptions": {"chatconv": {"unrecorded": True}}}
               for s in steps)
    assert steps[1]["output"][0]["content"][0]["text"].startswith("Fjords hold the sky")
    kept = steps[1]["output"][0]["providerOptions"]["gemini"]
    assert kept["candidate"]["citationMetadata"]["citationSources"][0]["uri"] == "https://example.org/poems"
    assert kept["response"]["usageMetadata"]["totalTokenCount"] == 47 and kept["response"]["modelVersion"] == "gemini-2.0-flash"
    assert steps[2]["output"][0]["providerOptions"]["gemini"]["candidate"] == {"finishReason": "STOP", "index": 1}
    # The response's call is answered by the next request, not here.
    assert [row["status"] for row in tool_rows(out)] == ["unanswered"]


def test_a_bare_contents_list_is_read_and_plain_openai_bodies_are_not_gemini():
    contents = json.loads((DATA / "contents.json").read_text())
    assert [f.NAME for f in FORMATS if f.detect(contents)] == ["gemini"]
    assert [m["role"] for m in _messages(contents)] == ["user", "assistant"]
    for other in ({"messages": [{"role": "user", "content": "hi"}]}, [{"role": "user", "content": "hi"}],
                  {"contents": []}, {"contents": [{"role": "system", "parts": []}]}, {"candidates": []}, "text"):
        assert not gemini.detect(other)


def test_spellings_are_kept_part_by_part():
    body = {"contents": [{"role": "user", "parts": [
        {"inlineData": {"mimeType": "image/png", "data": "iVBORw0KGgo="}},
        {"inline_data": {"mimeType": "application/pdf", "data": "JVBERi0x"}},
        {"fileData": {"file_uri": "gs://bucket/report.pdf", "mimeType": "application/pdf", "displayName": "report"}},
        {"file_data": {"file_uri": "https://example.com/clip.mp4"}, "videoMetadata": {"startOffset": "10s"}}]}]}
    messages = _messages(body)
    assert messages[0]["content"][2]["providerOptions"]["gemini"]["as"] == "file_data"  # gs:// is no web URL
    assert write(messages, "gemini") == body


def test_export_of_messages_from_elsewhere_uses_the_renderers_spellings_and_merges_results_with_text():
    messages = [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "Weather?"},
        {"role": "assistant", "content": [{"type": "tool-call", "toolCallId": "c1", "toolName": "w", "input": {}}]},
        {"role": "tool", "content": [{"type": "tool-result", "toolCallId": "c1", "toolName": "w",
                                      "output": {"type": "text", "value": "rain"}}]},
        {"role": "user", "content": [{"type": "image", "image": "data:image/png;base64,iVBO"}]}]
    assert write(messages, "gemini", gather_tools=True) == {
        "system_instruction": {"parts": [{"text": "Be brief."}]},
        "contents": [{"role": "user", "parts": [{"text": "Weather?"}]},
                     {"role": "model", "parts": [{"functionCall": {"id": "c1", "name": "w", "args": {}}}]},
                     {"role": "user", "parts": [{"functionResponse": {"id": "c1", "name": "w", "response": {"result": "rain"}}},
                                                {"inline_data": {"mime_type": "image/png", "data": "iVBO"}}]}],
        "tools": [{"functionDeclarations": [{"name": "w"}]}]}
    with pytest.raises(ProviderRuleError):  # the API's rules hold: an unanswered call is refused
        write(messages[:3], "gemini")


def test_a_system_text_changed_after_import_is_written_as_one_part():
    body = {"system_instruction": {"parts": [{"text": "a"}, {"text": "b"}]}, "contents": [{"parts": [{"text": "q"}]}]}
    messages = _messages(body)
    assert write(messages, "gemini") == body
    messages[0]["content"] = "a\nb, and more"
    assert write(messages, "gemini")["system_instruction"] == {"parts": [{"text": "a\nb, and more"}]}


def test_a_system_instruction_that_is_not_text_is_kept_whole_as_the_bodys_field():
    body = {"system_instruction": {"parts": [{"inline_data": {"mime_type": "text/plain", "data": "aGk="}}]},
            "contents": [{"role": "user", "parts": [{"text": "hi"}]}]}
    problems = []
    [conversation] = _conversations(body, problems)
    assert conversation.metadata == {"system_instruction": body["system_instruction"]}
    assert [p.severity for p in problems] == ["warning"]
    assert write(conversation.messages, "gemini", conversation.metadata) == body


def test_a_thought_flag_on_user_text_is_kept_not_read_as_reasoning():
    body = {"contents": [{"role": "user", "parts": [{"text": "hm", "thought": True}]}]}
    [message] = _messages(body)
    assert message["content"] == [{"type": "text", "text": "hm", "providerOptions": {"gemini": {"thought": True}}}]
    assert write([message], "gemini") == body


@pytest.mark.parametrize("bad, path, words", [
    ({"contents": [{"role": "user", "parts": [{"toolCall": {"name": "x"}}]}]}, "$.contents[0].parts[0]",
     "exactly one of"),
    ({"contents": [{"role": "user", "parts": [{"text": "a", "inline_data": {}}]}]}, "$.contents[0].parts[0]",
     "exactly one of"),
    ({"contents": [{"role": "user", "parts": [{"text": 3}]}]}, "$.contents[0].parts[0].text", "string"),
    ({"contents": [{"role": "user", "parts": [{"functionCall": {"name": "f"}}]}]}, "$.contents[0].parts[0]",
     "functionCall part in a user turn"),
    ({"contents": [{"role": "model", "parts": [{"functionCall": {"args": {}}}]}]},
     "$.contents[0].parts[0].functionCall", "needs its name"),
    ({"contents": [{"role": "user", "parts": [{"functionResponse": {"name": "f", "response": {}}}]}]},
     "$.contents[0].parts[0].functionResponse", "answers no earlier functionCall"),
    ({"contents": [{"role": "user", "parts": [{"functionResponse": {"name": "f"}}]}]},
     "$.contents[0].parts[0].functionResponse", "needs the function's name and its response"),
    ({"contents": [{"role": "model", "parts": [{"codeExecutionResult": {"outcome": "OUTCOME_OK"}}]}]},
     "$.contents[0].parts[0].codeExecutionResult", "no executableCode before it"),
    ({"contents": [{"role": "user", "parts": [{"inline_data": {"mime_type": "image/png"}}]}]},
     "$.contents[0].parts[0].inline_data", "needs data"),
    ({"contents": [{"role": "user", "parts": [{"inlineData": "abc"}]}]}, "$.contents[0].parts[0].inlineData",
     "must be an object"),
    ({"contents": [{"role": "user", "parts": [{"inlineData": {"mime_type": "a/b", "mimeType": "a/b", "data": ""}}]}]},
     "$.contents[0].parts[0].inlineData", "each field written once"),
    ({"contents": [{"role": "tool", "parts": []}]}, "$.contents[0]", "role: user or model"),
    ({"contents": [{"role": "user", "parts": "hi"}]}, "$.contents[0]", "role: user or model"),
    ({"contents": [{"role": ["user"], "parts": [{"text": "hi"}]}]}, "$.contents[0].role", "role is a string"),
    ({"candidates": [{"content": {"role": {"r": "model"}, "parts": [{"text": "hi"}]}}]}, "$.candidates[0].content.role",
     "role is a string"),
    ({"contents": "hi"}, "$.contents", "needs `contents`"),
    ({"system_instruction": {"parts": [{"text": "a"}]}, "systemInstruction": {"parts": [{"text": "a"}]},
      "contents": [{"parts": [{"text": "q"}]}]}, "$.systemInstruction", "written twice"),
    # A field named like a mark kept beside the part's (or turn's) own: export could not tell them apart.
    ({"contents": [{"role": "user", "parts": [{"text": "a", "inner": {}}]}]}, "$.contents[0].parts[0].inner",
     "cannot be kept"),
    ({"contents": [{"role": "user", "parts": [{"text": "a"}], "newTurn": True}]}, "$.contents[0].newTurn",
     "cannot be kept"),
])
def test_bad_input_is_an_error_naming_its_json_path_not_a_traceback(bad, path, words):
    problems = []
    assert _conversations(bad, problems) == []
    errors = [p for p in problems if p.is_error]
    assert errors and errors[0].path == path and words in errors[0].message, [p.format_text() for p in problems]
    with pytest.raises(ChatconvError):
        _conversations(bad)


def test_a_role_that_is_not_a_string_is_a_wrong_type_at_the_role_not_an_unknown_format(tmp_path):
    # A list is no key of the roles: a TypeError, named by the catch-all (or, as detection
    # refused it, "cannot tell which format"). The body's contents say Gemini: its role is wrong.
    source = tmp_path / "bodies.jsonl"
    source.write_text('{"contents": [{"role": ["user"], "parts": [{"text": "hi"}]}]}\n')
    result = run_chatconv("import", source)
    assert result.returncode == 1 and result.stdout == b""
    assert result.stderr_text.splitlines()[0] == (f"{source}:1:16: error: $.contents[0].role: a Gemini turn's role "
                                                  "is a string: user or model")
    assert not gemini.detect([{"role": ["user"], "parts": []}])  # a bare list of turns: anyone's, with such a role


def test_null_fields_of_turns_and_parts_are_kept_and_written_back():
    body = {"contents": [{"role": "user", "parts": [{"text": "q", "thoughtSignature": None}], "note": None}]}
    [message] = _messages(body)
    assert message["providerOptions"]["gemini"] == {"note": None}
    assert message["content"][0]["providerOptions"]["gemini"] == {"thoughtSignature": None}
    assert write([message], "gemini") == body


def test_arguments_given_as_json_text_come_back_as_the_object_gemini_takes_without_an_extra_field():
    # functionCall.args is an object for the API (google-genai's FunctionCall refuses text): the
    # text is written back as its object (export warns export-changed).
    body = {"contents": [{"role": "user", "parts": [{"text": "q"}]}, {"role": "model", "parts": [
        {"functionCall": {"id": "c1", "name": "f", "args": '{"a": 1}'}}]}, {"role": "user", "parts": [
            {"functionResponse": {"id": "c1", "name": "f", "response": {"x": 1}}}]}]}
    body_written = write(_messages(body), "gemini")
    assert body_written["contents"][1] == {"role": "model", "parts": [{"functionCall": {"id": "c1", "name": "f",
                                                                                        "args": {"a": 1}}}]}
    assert body_written["contents"][::2] == body["contents"][::2]


def test_a_truncated_line_and_an_unknown_record_are_problems_with_their_line(tmp_path):
    source = tmp_path / "mixed.jsonl"
    source.write_text('{"contents":[{"parts":[{"text":"ok"}]}]}\n{"contents":[{"parts":[{"te\n{"other":1}\n')
    problems = []
    records = import_paths([str(source)], "gemini", problems=problems)
    assert len(records) == 1
    assert [(p.line, p.code) for p in problems if p.is_error] == [(2, "invalid-json"), (3, "missing-key")]


# ---------------------------------------------------------------------------------------------
# The round trip, on generated bodies

_text = st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), min_size=1, max_size=12).filter(str.strip)
_args = st.dictionaries(st.sampled_from(["city", "days"]), st.integers(-5, 5) | _text, max_size=2)
_spell = st.sampled_from


@st.composite
def _user_parts(draw):
    inline, mime, uri = draw(_spell(["inline_data", "inlineData"])), draw(_spell(["mime_type", "mimeType"])), \
        draw(_spell(["file_uri", "fileUri"]))
    part = st.one_of(
        st.builds(lambda t: {"text": t}, _text),
        st.builds(lambda m: {inline: {mime: m, "data": "iVBORw0KGgo="}}, _spell(["image/png", "application/pdf"])),
        st.builds(lambda u: {draw(_spell(["file_data", "fileData"])): {mime: "application/pdf", uri: u}},
                  _spell(["https://example.com/a.pdf", "gs://bucket/a.pdf"])))
    return draw(st.lists(part, min_size=1, max_size=3))


@st.composite
def _exchange(draw, number: int):
    """A model turn, and the user turn answering its calls (with text after, or not)."""
    with_ids = draw(st.booleans())
    calls = [{"name": draw(_spell(["get_weather", "get_forecast"])), "args": draw(_args)}
             for _ in range(draw(st.integers(0, 2)))]
    if with_ids:
        for index, call in enumerate(calls):
            call["id"] = f"fc_{number}_{index}"
    parts: list = []
    if draw(st.booleans()):
        parts.append({"text": draw(_text), "thought": True, "thoughtSignature": "c2ln"})
    parts.extend({draw(_spell(["functionCall", "function_call"])): call} for call in calls)
    if draw(st.booleans()):
        parts += [{"executableCode": {"language": "PYTHON", "code": "print(1)"}},
                  {"codeExecutionResult": {"outcome": draw(_spell(["OUTCOME_OK", "OUTCOME_FAILED"])), "output": "1\n"}}]
    if not parts or draw(st.booleans()):
        parts.append({"text": draw(_text)})
    turns = [{"role": "model", "parts": parts}]
    if calls:
        responses = [{"functionResponse": {**({"id": c["id"]} if with_ids else {}), "name": c["name"],
                                           "response": draw(_spell([{"output": 1}, {"error": "down"}, {"sky": "rain"}]))}}
                     for c in calls]
        turns.append({"role": "user", "parts": responses + draw(st.lists(st.builds(lambda t: {"text": t}, _text),
                                                                         max_size=1))})
    return turns


@st.composite
def _bodies_generated(draw):
    body: dict = {}
    if draw(st.booleans()):
        body[draw(_spell(["system_instruction", "systemInstruction"]))] = {
            "parts": [{"text": t} for t in draw(st.lists(_text, min_size=1, max_size=2))]}
    contents: list = []
    for number in range(draw(st.integers(1, 3))):
        if not contents or contents[-1]["role"] == "model":
            contents.append({**({} if draw(st.booleans()) else {"role": "user"}), "parts": draw(_user_parts())})
        contents.extend(draw(_exchange(number)))
    if contents[-1]["role"] == "model":
        contents.append({"role": "user", "parts": draw(_user_parts())})
    body["contents"] = contents
    if draw(st.booleans()):
        body["generationConfig"] = {"temperature": 0.2}
    return body


@settings(max_examples=60, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(body=_bodies_generated())
def test_import_then_export_gives_back_any_body(tmp_path_factory, body):
    folder = tmp_path_factory.mktemp("roundtrip")
    source = folder / "bodies.jsonl"
    source.write_bytes(orjson.dumps(body) + b"\n")
    records = import_paths([str(source)])
    steps = folder / "steps.jsonl"
    steps.write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in records))
    [exported] = [orjson.loads(b) for b in export_bodies([str(steps)], "gemini", per="conversation")]
    assert exported == body
    # Import is stable: the exported body imports into the same records.
    source.write_bytes(orjson.dumps(exported) + b"\n")
    assert import_paths([str(source)]) == records
