"""otel-genai: OpenTelemetry GenAI messages read from OTLP JSON traces, gen_ai.* objects and bare
arrays into chatconv's recordings (import only).

Fixtures in data/formats/otel-genai are built from the semantic conventions' published schemas
and examples:
https://github.com/open-telemetry/semantic-conventions/blob/main/docs/gen-ai/gen-ai-input-messages.json
https://github.com/open-telemetry/semantic-conventions/blob/main/docs/gen-ai/gen-ai-output-messages.json
https://github.com/open-telemetry/semantic-conventions/blob/main/docs/gen-ai/gen-ai-system-instructions.json
https://github.com/open-telemetry/semantic-conventions/blob/main/docs/gen-ai/non-normative/examples-llm-calls.md
and the OTLP JSON encoding (https://opentelemetry.io/docs/specs/otlp/#json-protobuf-encoding).
"""

from __future__ import annotations

import json
from pathlib import Path

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from chatconv.formats import IMPORTED, import_paths, otel_genai, read
from chatconv.formats.otel_genai import any_value
from chatconv.messages import conversation_messages
from chatconv.problems import ChatconvError
from conftest import DATA, import_and_validate, import_problems, run_chatconv

FIXTURES = DATA / "formats" / "otel-genai"
TRACE = FIXTURES / "trace.json"
CALL = "call_VSPygqKTWdrhaFErNvMV18Yl"


def _detected(data) -> str | None:
    return next((fmt.NAME for fmt in IMPORTED if fmt.detect(data)), None)


def _imported(tmp_path: Path, data, name="in.json", problems=None):
    path = tmp_path / name
    path.write_text(data if isinstance(data, str) else json.dumps(data))
    found = [] if problems is None else problems
    records = import_paths([str(path)], "otel-genai" if problems is not None else None, problems=found)
    return records


def _messages(records: list[dict], conversation_id=None) -> list[dict]:
    steps = [r for r in records if conversation_id is None or r["conversationId"] == conversation_id]
    return conversation_messages(steps)


def _span(attributes: list[dict], **fields) -> dict:
    return {"resourceSpans": [{"resource": {}, "scopeSpans": [{"scope": {"name": "test"}, "spans": [
        {"traceId": "5b8efff798038103d269b633813fc60c", "spanId": "eee19b7ec3c1b174", "name": "chat gpt-4",
         "attributes": attributes, **fields}]}]}]}


def _text(key: str, value) -> dict:
    return {"key": key, "value": {"stringValue": value if isinstance(value, str) else json.dumps(value)}}


USER = [{"role": "user", "parts": [{"type": "text", "content": "hi"}]}]


# ---------------------------------------------------------------------------------------------
# Detection


def test_otel_records_are_detected_and_plain_openai_gemini_and_ui_messages_are_not():
    assert _detected(json.loads(TRACE.read_text())) == "otel-genai"
    assert _detected(json.loads((FIXTURES / "attributes.json").read_text())) == "otel-genai"
    for line in (FIXTURES / "messages.jsonl").read_text().splitlines():
        assert _detected(json.loads(line)) == "otel-genai"
    assert _detected({"messages": [{"role": "user", "content": "hi"}]}) == "openai-chat"
    assert _detected([{"role": "user", "content": "hi"}]) == "openai-chat"
    for other in ([{"role": "user", "parts": [{"text": "hi"}]}],  # Gemini contents
                  [{"role": "model", "parts": [{"functionCall": {"name": "f", "args": {}}}]}],
                  [{"role": "user", "parts": [{"type": "text", "text": "hi"}]}],  # AI SDK UI messages
                  [{"role": "user", "parts": []}],  # no OTel mark at all
                  {"messages": [{"role": "user", "content": "hi"}]}, {"contents": []}):
        assert not otel_genai.detect(other), other
    assert _detected({"gen_ai.input.messages": "[]"}) == "otel-genai"


# ---------------------------------------------------------------------------------------------
# OTLP JSON traces


def test_a_trace_gives_one_conversation_per_model_call_span(tmp_path):
    problems = []
    records = import_paths([str(TRACE)], problems=problems)
    ids = list(dict.fromkeys(r["conversationId"] for r in records))
    # Both chat spans carry the same gen_ai.conversation.id: the second is told apart by its span id.
    assert ids == ["conv_5j66UpCpwteGg4YSxUnt7lPY", "conv_5j66UpCpwteGg4YSxUnt7lPY#b7ad6b7169203331"]
    assert _messages(records, ids[0]) == [
        {"role": "system", "content": "You are a helpful weather bot.",
         "providerOptions": {"otel-genai": {"systemInstructions": True}}},
        {"role": "user", "content": [{"type": "text", "text": "Weather in Paris?"}]},
        {"role": "assistant", "content": [{"type": "tool-call", "toolCallId": CALL, "toolName": "get_weather",
                                           "input": {"location": "Paris"}}],
         "providerOptions": {"otel-genai": {"finish_reason": "tool_call"}}},
    ]
    second = _messages(records, ids[1])
    assert [m["role"] for m in second] == ["user", "assistant", "tool", "assistant"]
    call, result = second[1]["content"][0], second[2]["content"][0]
    assert call["input"] == {"location": "Paris"}  # arguments written as JSON text, parsed
    # The text is kept as written too (it has a space: not what compact JSON gives back).
    assert call["providerOptions"] == {"otel-genai": {"argumentsText": True, "arguments": '{"location": "Paris"}'}}
    assert result == {"type": "tool-result", "toolCallId": CALL, "toolName": "get_weather",
                      "output": {"type": "text", "value": "rainy, 57°F"}}
    assert second[3]["content"][0] == {"type": "reasoning", "text": "The tool says rainy and 57°F; answer briefly."}
    # The execute_tool span holds no messages: it is counted, not imported.
    assert [(p.code, p.severity) for p in problems] == [("import-skipped", "warning")]
    assert "1 span(s) without" in problems[0].message


def test_a_span_s_other_attributes_are_decoded_into_the_first_step_s_metadata():
    records = import_paths([str(TRACE)])
    metadata = records[0]["metadata"]["otel-genai"]
    attributes = metadata["attributes"]
    assert attributes["gen_ai.usage.input_tokens"] == 47  # OTLP writes int64 as text
    assert attributes["gen_ai.request.top_p"] == 1.0
    assert attributes["gen_ai.response.finish_reasons"] == ["tool_calls"]
    assert attributes["gen_ai.tool.definitions"][0]["name"] == "get_weather"  # JSON text, parsed
    assert not {"gen_ai.input.messages", "gen_ai.output.messages", "gen_ai.system_instructions"} & set(attributes)
    assert metadata["span"]["spanId"] == "00f067aa0ba902b7" and "attributes" not in metadata["span"]
    assert metadata["span"]["startTimeUnixNano"] == "1730000000000000000"
    assert metadata["scopeSpans"] == {"scope": {"name": "opentelemetry.instrumentation.openai_v2", "version": "2.1b0"}}
    assert metadata["resourceSpans"]["resource"]["attributes"][0]["key"] == "service.name"
    assert [r.get("metadata") is not None for r in records] == [True, False, True]


def test_a_span_without_conversation_id_is_named_by_trace_and_span_id(tmp_path):
    records = _imported(tmp_path, _span([_text("gen_ai.input.messages", USER)]))
    assert records[0]["conversationId"] == "5b8efff798038103d269b633813fc60c:eee19b7ec3c1b174"


def test_structured_attribute_values_are_read_like_json_text(tmp_path):
    message = {"kvlistValue": {"values": [
        {"key": "role", "value": {"stringValue": "user"}},
        {"key": "parts", "value": {"arrayValue": {"values": [{"kvlistValue": {"values": [
            {"key": "type", "value": {"stringValue": "text"}},
            {"key": "content", "value": {"stringValue": "hi"}}]}}]}}}]}}
    records = _imported(tmp_path, _span([{"key": "gen_ai.input.messages", "value": {"arrayValue": {"values": [message]}}}]))
    assert records[0]["input"] == {"role": "user", "content": [{"type": "text", "text": "hi"}]}


def test_any_value_decodes_each_otlp_kind_and_keeps_bytes_as_written():
    assert any_value({"intValue": "9007199254740993"}) == 9007199254740993
    assert any_value({"intValue": 3}) == 3 and any_value({"boolValue": False}) is False
    assert any_value({"bytesValue": "AAE="}) == {"bytesValue": "AAE="}
    assert any_value({"intValue": "x"}) == {"intValue": "x"} and any_value({}) is None
    # Arrays and key-value lists holding anything beside what is read are kept as written.
    for written in ({"arrayValue": {"values": [], "note": 1}},
                    {"kvlistValue": {"values": [{"key": "a", "value": {"intValue": 1}, "note": 2}]}},
                    {"kvlistValue": {"values": [{"key": "a", "value": {"intValue": 1}},
                                                {"key": "a", "value": {"intValue": 2}}]}}):
        assert any_value(written) == written


def test_bad_json_text_in_a_messages_attribute_is_an_error_at_that_attribute(tmp_path):
    trace = _span([_text("gen_ai.request.model", "gpt-4"), _text("gen_ai.input.messages", '[{"role": "user", "par')])
    problems = []
    assert _imported(tmp_path, trace, problems=problems) == []
    [error] = [p for p in problems if p.is_error]
    assert error.code == "invalid-json"
    assert error.path == "$.resourceSpans[0].scopeSpans[0].spans[0].attributes[1].value.stringValue"
    assert "gen_ai.input.messages is not JSON text" in error.message


def test_one_bad_span_leaves_only_its_own_conversation_out(tmp_path):
    trace = _span([_text("gen_ai.input.messages", [{"role": "robot", "parts": []}])])
    good = dict(trace["resourceSpans"][0]["scopeSpans"][0]["spans"][0], spanId="aaaaaaaaaaaaaaaa",
                attributes=[_text("gen_ai.input.messages", USER)])
    trace["resourceSpans"][0]["scopeSpans"][0]["spans"].append(good)
    problems = []
    records = _imported(tmp_path, trace, problems=problems)
    assert [r["conversationId"] for r in records] == ["5b8efff798038103d269b633813fc60c:aaaaaaaaaaaaaaaa"]
    [error] = [p for p in problems if p.is_error]
    assert error.path.endswith("spans[0].attributes[0].value.stringValue[0].role")
    assert "role 'robot'" in error.message


@pytest.mark.parametrize("trace, path", [
    ({"resourceSpans": {"scopeSpans": []}}, "$.resourceSpans"),
    ({"resourceSpans": [{"scopeSpans": [{"spans": ["x"]}]}]}, "$.resourceSpans[0].scopeSpans[0].spans[0]"),
    (_span({"gen_ai.input.messages": "[]"}), "$.resourceSpans[0].scopeSpans[0].spans[0].attributes"),
    (_span([{"key": "gen_ai.input.messages"}]), "$.resourceSpans[0].scopeSpans[0].spans[0].attributes[0]"),
    # An attribute is {key, value}: a field beside them, or a key given twice, would be lost.
    (_span([_text("gen_ai.input.messages", "[]") | {"note": "x"}]),
     "$.resourceSpans[0].scopeSpans[0].spans[0].attributes[0]"),
    (_span([_text("gen_ai.input.messages", "[]"), _text("gen_ai.request.model", "a"),
            _text("gen_ai.request.model", "b")]), "$.resourceSpans[0].scopeSpans[0].spans[0].attributes[2].key"),
])
def test_a_trace_of_the_wrong_shape_is_an_error_at_its_path(tmp_path, trace, path):
    problems = []
    assert _imported(tmp_path, trace, problems=problems) == []
    assert [p.path for p in problems if p.is_error] == [path]


# ---------------------------------------------------------------------------------------------
# gen_ai.* objects and bare arrays


def test_output_messages_are_choices_each_its_own_conversation():
    problems = []
    records = import_paths([str(FIXTURES / "attributes.json")], problems=problems)
    assert problems == []
    ids = list(dict.fromkeys(r["conversationId"] for r in records))
    assert ids == ["attributes.json:1", "attributes.json:1#1"]
    first, second = _messages(records, ids[0]), _messages(records, ids[1])
    assert first[:2] == second[:2] and [m["role"] for m in first] == ["system", "user", "assistant"]
    assert first[2]["content"][0]["text"].startswith(" Why did the developer")
    assert second[2]["content"][0]["text"].startswith(" Why did OpenTelemetry get promoted")
    assert records[0]["metadata"]["otel-genai"]["gen_ai.usage.output_tokens"] == 77


def test_bare_arrays_read_media_parts_as_images_and_files():
    records = import_paths([str(FIXTURES / "messages.jsonl")])
    user, answer = _messages(records, "messages.jsonl:1")
    assert user["content"][1:] == [
        {"type": "image", "image": "https://raw.githubusercontent.com/open-telemetry/opentelemetry.io/refs/heads/main/"
         "static/img/logos/opentelemetry-horizontal-color.png", "mediaType": "image/png",
         "providerOptions": {"otel-genai": {"type": "uri", "modality": "image"}}},
        {"type": "file", "data": "gs://my-bucket/my-video.mp4", "mediaType": "video/mp4",
         "providerOptions": {"otel-genai": {"type": "uri", "modality": "video"}}},
        {"type": "file", "data": "provider_fileid_123", "mediaType": "application/octet-stream",
         "providerOptions": {"otel-genai": {"type": "file", "noMimeType": True}}},
        {"type": "image", "image": "aGVsbG8gd29ybGQgaW1hZ2luZSB0aGlzIGlzIGFuIGltYWdlCg==", "mediaType": "image/png",
         "providerOptions": {"otel-genai": {"modality": "image"}}},
        {"type": "file", "data": "aGVsbG8gd29ybGQgaW1hZ2luZSB0aGlzIGlzIGFuIGltYWdlCg==", "mediaType": "audio/wav",
         "providerOptions": {"otel-genai": {"modality": "audio"}}},
    ]
    # The model's own image: assistant messages take file parts, not image parts.
    assert answer["content"] == [{"type": "file", "data": "aGVsbG8gd29ybGQgaW1hZ2luZSB0aGlzIGlzIGFuIGltYWdlCg==",
                                  "mediaType": "image/jpg", "providerOptions": {"otel-genai": {"modality": "image"}}}]


def test_a_multi_turn_array_with_tools_an_error_response_and_a_built_in_tool():
    records = [r for r in import_paths([str(FIXTURES / "messages.jsonl")]) if r["conversationId"] == "messages.jsonl:2"]
    assert [r["stepIndex"] for r in records] == [0, 1, 2]
    messages = _messages(records)
    assert messages[1]["providerOptions"] == {"otel-genai": {"name": "ada"}}
    # OTel has no error flag on a tool's response: an error object is read as the JSON it is.
    assert messages[3]["content"][0]["output"] == {"type": "json", "value": {"error": "no table free at 19:00",
                                                                             "code": 409}}
    server_call, server_result = messages[6]["content"][1:]
    assert server_call == {"type": "tool-call", "toolCallId": "ci_1", "toolName": "code_interpreter",
                           "input": {"type": "code_interpreter", "code": "print(84.50 / 2)"},
                           "providerExecuted": True, "providerOptions": {"otel-genai": {"type": "server_tool_call"}}}
    assert server_result["toolName"] == "code_interpreter" and server_result["output"]["type"] == "json"


def test_tool_responses_in_a_user_message_and_the_draft_result_field(tmp_path):
    messages = USER + [
        {"role": "assistant", "parts": [{"type": "tool_call", "id": "c1", "name": "lookup", "arguments": None}]},
        {"role": "user", "parts": [{"type": "tool_call_response", "id": "c1", "result": {"rows": 3}}]}]
    records = _imported(tmp_path, messages)
    tool = _messages(records)[2]
    assert tool == {"role": "tool", "content": [
        {"type": "tool-result", "toolCallId": "c1", "toolName": "lookup", "output": {"type": "json", "value": {"rows": 3}},
         "providerOptions": {"otel-genai": {"field": "result"}}}],
        "providerOptions": {"otel-genai": {"role": "user"}}}
    assert _messages(records)[1]["content"][0]["input"] is None  # null arguments stay null


def test_a_message_s_and_a_part_s_own_null_fields_are_kept_too(tmp_path):
    messages = [
        {"role": "user", "name": None, "parts": [{"type": "text", "content": "Book a table.", "lang": None}]},
        {"role": "assistant", "parts": [{"type": "tool_call", "id": "c1", "name": "book", "arguments": {}, "extra": None},
                                        {"type": "uri", "uri": "https://example.com/a.pdf", "modality": None}]},
        {"role": "tool", "parts": [{"type": "tool_call_response", "id": "c1", "response": "ok", "status": None}]}]
    user, answer, tool = _messages(_imported(tmp_path, messages))
    assert user["providerOptions"] == {"otel-genai": {"name": None}}
    assert user["content"][0]["providerOptions"] == {"otel-genai": {"lang": None}}
    assert [part["providerOptions"] for part in answer["content"]] == [
        {"otel-genai": {"extra": None}}, {"otel-genai": {"type": "uri", "noMimeType": True, "modality": None}}]
    assert tool["content"][0]["providerOptions"] == {"otel-genai": {"status": None}}


def test_a_system_message_of_several_text_parts_keeps_them(tmp_path):
    parts = [{"type": "text", "content": "Be brief."}, {"type": "text", "content": "Be kind."}]
    [system] = _messages(_imported(tmp_path, [{"role": "system", "parts": parts}] + USER))[:1]
    assert system == {"role": "system", "content": "Be brief.\nBe kind.",
                      "providerOptions": {"otel-genai": {"textParts": parts}}}


def test_a_generic_part_is_kept_whole_on_its_message_with_a_warning(tmp_path):
    compaction = {"type": "compaction", "id": "cmp_1", "content": "earlier turns, summarised"}
    problems = []
    records = _imported(tmp_path, [{"role": "user", "parts": [compaction, {"type": "text", "content": "go on"}]}],
                        problems=problems)
    assert records[0]["input"] == {"role": "user", "content": [{"type": "text", "text": "go on"}],
                                   "providerOptions": {"otel-genai": {"parts": [{"index": 0, "part": compaction}]}}}
    assert [(p.code, p.path) for p in problems] == [("part-kept", "$[0].parts[0]")]


@pytest.mark.parametrize("messages, path, words", [
    ([{"role": "user", "parts": [{"type": "reasoning", "content": "hm"}]}], "$[0].parts[0]", "reasoning part in a user"),
    ([{"role": "user", "parts": [{"type": "text", "content": 3}]}], "$[0].parts[0].content", "needs `content`"),
    ([{"role": "user", "parts": [{"type": "text", "content": "a"}, {"content": "b"}]}], "$[0].parts[1]", "string `type`"),
    ([{"role": "assistant", "parts": [{"type": "tool_call", "name": "f", "arguments": {}}]}], "$[0].parts[0]", "call id"),
    ([{"role": "tool", "parts": [{"type": "tool_call_response", "id": "c"}]}], "$[0].parts[0]", "needs its `response`"),
    ([{"role": "tool", "parts": [{"type": "text", "content": "x"}]}], None, "tool-result"),
    ([{"role": "user", "parts": [{"type": "blob", "modality": "image", "content": "AA==", "mime_type": 7}]}],
     "$[0].parts[0].mime_type", "mime_type must be a string"),
    ([{"role": "user", "parts": "hi"}, {"role": "user", "parts": [{"type": "text", "content": "x"}]}],
     "$[0].parts", "needs its parts"),
])
def test_bad_messages_are_errors_at_their_path(tmp_path, messages, path, words):
    problems = []
    assert _imported(tmp_path, messages, problems=problems) == []
    errors = [p for p in problems if p.is_error]
    assert errors and words in errors[0].message + " " + (errors[0].hint or "") + errors[0].code
    if path is not None:
        assert errors[0].path == path


def test_the_library_read_raises_on_bad_input_and_returns_conversations(tmp_path):
    conversations = read(TRACE)
    assert [c.id for c in conversations][0] == "conv_5j66UpCpwteGg4YSxUnt7lPY"
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"gen_ai.input.messages": "{not json"}))
    with pytest.raises(ChatconvError) as caught:
        read(bad)
    assert caught.value.problems[0].path == "$['gen_ai.input.messages']"
    assert caught.value.problems[0].code == "invalid-json"


# ---------------------------------------------------------------------------------------------
# The command line


@pytest.mark.parametrize("name", ["trace.json", "messages.jsonl", "attributes.json"])
def test_imported_fixtures_validate_and_pair_their_tool_calls(tmp_path, name):
    out = tmp_path / "out.jsonl"
    imported = run_chatconv("import", FIXTURES / name, "-o", out)
    assert imported.returncode == 0, imported.stderr_text
    validated = run_chatconv("validate", out)
    assert validated.returncode == 0 and " 0 errors" in validated.stderr_text + validated.stdout_text
    tools = [orjson.loads(line) for line in run_chatconv("tools", out).stdout.splitlines()]
    unanswered = [(row["conversationId"], row["toolCallId"]) for row in tools if row["status"] == "unanswered"]
    # Only the trace's first chat span leaves its call unanswered: its answer is in the next span.
    assert unanswered == ([("conv_5j66UpCpwteGg4YSxUnt7lPY", CALL)] if name == "trace.json" else [])


def test_a_truncated_jsonl_line_is_a_problem_not_a_traceback(tmp_path):
    path = tmp_path / "cut.jsonl"
    lines = (FIXTURES / "messages.jsonl").read_text().splitlines()
    path.write_text(lines[0] + "\n" + lines[1][:80] + "\n")
    result = run_chatconv("import", path)
    assert result.returncode != 0 and "cut.jsonl:2" in result.stderr_text
    assert len(result.stdout.splitlines()) == 1  # the first line's conversation (one step) still comes out


# ---------------------------------------------------------------------------------------------
# Properties: each OTel message is one model message, its parts in order, nothing dropped

TEXT = st.text(min_size=1, max_size=12)
PARTS = {
    "system": st.fixed_dictionaries({"type": st.just("text"), "content": TEXT}),
    "user": st.one_of(st.fixed_dictionaries({"type": st.just("text"), "content": TEXT}),
                      st.fixed_dictionaries({"type": st.just("uri"), "modality": st.sampled_from(["image", "audio"]),
                                             "uri": st.just("https://example.com/x")}),
                      st.fixed_dictionaries({"type": st.sampled_from(["compaction", "x-vendor"]), "id": TEXT})),
    "assistant": st.one_of(st.fixed_dictionaries({"type": st.sampled_from(["text", "reasoning"]), "content": TEXT}),
                           st.fixed_dictionaries({"type": st.just("tool_call"), "id": TEXT, "name": TEXT,
                                                  "arguments": st.dictionaries(TEXT, st.integers(), max_size=2)})),
}
MESSAGES = st.lists(st.sampled_from(["system", "user", "assistant"]).flatmap(
    lambda role: st.fixed_dictionaries({"role": st.just(role), "parts": st.lists(PARTS[role], min_size=1, max_size=3)})),
    min_size=1, max_size=5)


@settings(max_examples=60, deadline=None)
@given(MESSAGES)
def test_every_message_and_part_is_read_in_order_or_kept(messages):
    from chatconv.formats.otel_genai.messages import messages_of
    from chatconv.formats.reading import Reading
    from chatconv.sources import Record

    reading = Reading(Record("gen.json", 1, data=messages), "otel-genai")
    converted, paths = messages_of(messages, reading, ())
    assert not reading.failed and paths == [(i,) for i in range(len(messages))]
    assert [m["role"] for m in converted] == [m["role"] for m in messages]
    for source, message in zip(messages, converted):
        kept = message.get("providerOptions", {}).get("otel-genai", {})
        generic = [(entry["index"], entry["part"]) for entry in kept.get("parts", [])]
        assert generic == [(i, p) for i, p in enumerate(source["parts"]) if p["type"] in ("compaction", "x-vendor")]
        known = [p for p in source["parts"] if p["type"] not in ("compaction", "x-vendor")]
        if source["role"] == "system":
            assert message["content"] == "\n".join(p["content"] for p in known)
            continue
        assert len(message["content"]) == len(known)
        for part, model_part in zip(known, message["content"]):
            said = {"text": part.get("content"), "reasoning": part.get("content"), "uri": part.get("uri"),
                    "tool_call": part.get("id")}[part["type"]]
            assert said in (model_part.get("text"), model_part.get("image"), model_part.get("data"),
                            model_part.get("toolCallId"))


# --- spans as the OpenTelemetry SDK writes them (Span.to_json: context, attributes as an object) ---


@pytest.mark.parametrize("name", ["sdk-spans.json", "sdk-spans.jsonl"])
def test_spans_in_the_sdks_own_json_are_read_and_other_spans_skipped_with_a_warning(tmp_path, name):
    problems: list = []
    out = import_and_validate(tmp_path, FIXTURES / name,
                              problems=problems)
    [step] = [json.loads(line) for line in out.read_text().splitlines()]
    assert step["conversationId"] == "0x5b8aa5a2d2c872e8321cf37308d69df2:0x051581bf3cb55c13"
    assert step["input"]["content"] == [{"type": "text", "text": "Weather in Paris?"}]
    assert step["output"][0]["content"][0]["toolName"] == "get_weather"
    kept = step["metadata"]["otel-genai"]
    assert kept["attributes"] == {"gen_ai.operation.name": "chat", "gen_ai.request.model": "gpt-4o"}
    assert kept["span"]["context"]["span_id"] == "0x051581bf3cb55c13" and kept["span"]["resource"]["attributes"]
    assert [(p.code, p.severity) for p in problems] == [("import-skipped", "warning")]


def test_an_sdk_span_whose_messages_are_not_json_is_left_out_at_its_attribute(tmp_path):
    span = {"context": {"trace_id": "0x1", "span_id": "0x2"}, "attributes": {"gen_ai.input.messages": "[{oops"}}
    path = tmp_path / "spans.json"
    path.write_text(json.dumps({"spans": [span]}, indent=2))
    [problem] = import_problems(path)
    assert problem.code == "invalid-json" and problem.path == "$.spans[0].attributes['gen_ai.input.messages']"
    assert problem.line == 9
