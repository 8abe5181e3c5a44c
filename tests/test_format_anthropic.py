"""The anthropic format: Messages API request bodies, responses, a request with its response and
message lists read into chatconv's recordings, and written back.

Fixtures (tests/data/formats/anthropic) follow Anthropic's API reference:
https://docs.anthropic.com/en/api/messages (request: system as a string or text blocks, messages,
model, max_tokens, tools, tool_choice, thinking, metadata, stop_sequences; response: id, type,
role, content, model, stop_reason, stop_sequence, usage),
https://docs.anthropic.com/en/docs/agents-and-tools/tool-use/implement-tool-use (tool_use,
tool_result with string or block content and is_error),
https://docs.anthropic.com/en/docs/build-with-claude/extended-thinking (thinking with signature,
redacted_thinking), https://docs.anthropic.com/en/docs/build-with-claude/citations (document
sources base64, text, content, url, file; citations on text blocks),
https://docs.anthropic.com/en/docs/build-with-claude/prompt-caching (cache_control) and
https://docs.anthropic.com/en/docs/agents-and-tools/tool-use/web-search-tool (server_tool_use,
web_search_tool_result).
"""

from __future__ import annotations

import base64
import json
from pathlib import Path

import orjson
import pytest
from conftest import import_and_validate, import_problems, write_jsonl
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from chatconv.formats import (
    FORMATS,
    anthropic,
    export_bodies,
    import_paths,
    read,
    write,
)
from chatconv.providers import ProviderRuleError
from chatconv.recordings import tool_rows

DATA = Path(__file__).parent / "data" / "formats" / "anthropic"


def _bodies(path: Path) -> list[dict]:
    if path.suffix == ".jsonl":
        return [json.loads(line) for line in path.read_text().splitlines()]
    return [json.loads(path.read_text())]


def _detected(data) -> list[str]:
    return [fmt.NAME for fmt in FORMATS if fmt.detect(data)]


@pytest.mark.parametrize("name, statuses", [
    ("request_tools.json", {"toolu_01A09q90qw90lq917835lq9": "ok", "toolu_01B2c3d4e5f6g7h8i9j0k1l2": "error"}),
    ("blocks.jsonl", {"srvtoolu_01WYG3ziw53XMcoyKL4XcZmE": "ok", "toolu_01Shot": "ok", "toolu_01Rm": "ok",
                      "toolu_01Ls": "error"}),
    ("exchange.json", {"toolu_01A09q90qw90lq917835lq9": "ok"}),
    ("response.json", {"toolu_01T1x1fJ34qAmk2tNTrN7Up6": "unanswered"}),  # the next request would answer it
])
def test_every_fixture_imports_into_valid_recordings_whose_calls_are_paired(tmp_path, name, statuses):
    problems: list = []
    out = import_and_validate(tmp_path, DATA / name, problems=problems)
    assert not [p for p in problems if p.is_error]
    assert {row["toolCallId"]: row["status"] for row in tool_rows(out)} == statuses


@pytest.mark.parametrize("name", ["request_tools.json", "blocks.jsonl"])
def test_import_then_export_gives_the_same_bodies(tmp_path, name):
    out = import_and_validate(tmp_path, DATA / name)
    exported = [orjson.loads(body) for body in export_bodies([str(out)], "anthropic", per="conversation")]
    assert exported == _bodies(DATA / name)


def test_a_user_message_with_tool_results_is_a_tool_message_then_a_user_message_joined_back_on_export():
    [conversation] = read(DATA / "request_tools.json")
    roles = [m["role"] for m in conversation.messages]
    assert roles == ["system", "system", "user", "assistant", "tool", "user", "assistant", "user"]
    tool, rest = conversation.messages[4], conversation.messages[5]
    assert [p["toolCallId"] for p in tool["content"]] == ["toolu_01A09q90qw90lq917835lq9", "toolu_01B2c3d4e5f6g7h8i9j0k1l2"]
    assert [p["toolName"] for p in tool["content"]] == ["get_weather", "search_flights"]  # named after their calls
    assert tool["content"][1]["output"] == {"type": "error-text", "value": "flight search is down"}
    assert rest == {"role": "user", "content": [{"type": "text", "text": "Also, is a window seat possible?"}],
                    "providerOptions": {"anthropic": {"joined": True}}}
    # Both point at the one Anthropic message they came from.
    assert conversation.paths[4] == conversation.paths[5] == ("messages", 2)
    body = write(conversation.messages, "anthropic", conversation.metadata)
    assert [block["type"] for block in body["messages"][2]["content"]] == ["tool_result", "tool_result", "text"]


def test_system_blocks_thinking_and_the_body_fields_are_kept():
    [conversation] = read(DATA / "request_tools.json")
    first, second = conversation.messages[:2]
    assert first == {"role": "system", "content": "You are a travel agent for Northwind Air.",
                     "providerOptions": {"anthropic": {"system": "blocks"}}}
    assert second["providerOptions"]["anthropic"]["cache_control"] == {"type": "ephemeral"}
    thinking, redacted = conversation.messages[3]["content"][:2]
    assert thinking == {"type": "reasoning", "text": "I need the weather and the flights; both tools can run at once.",
                        "providerOptions": {"anthropic": {"signature": "EqQBCkYIARgCIkDnmTSPYyV8Zn0x"}}}
    assert redacted["text"] == "" and redacted["providerOptions"]["anthropic"]["redactedData"].startswith("EmwKAhgB")
    assert set(conversation.metadata) == {"model", "max_tokens", "tools", "tool_choice", "thinking", "metadata",
                                          "stop_sequences"}
    texts = conversation.messages[6]["content"]
    assert texts[0]["providerOptions"]["anthropic"] == {"citations": None}  # the source's null, kept
    assert texts[1]["providerOptions"]["anthropic"]["citations"][0]["type"] == "page_location"


def test_documents_and_images_of_every_source_are_file_and_image_parts():
    conversation = read(DATA / "blocks.jsonl")[0]
    parts = conversation.messages[1]["content"]
    pdf, text, content, file, url_image, file_image, _ = parts
    assert (pdf["mediaType"], pdf["filename"]) == ("application/pdf", "Q3 report")
    assert pdf["providerOptions"]["anthropic"] == {"cache_control": {"type": "ephemeral"}}
    assert base64.b64decode(text["data"]).decode() == "The grass is green. The sky is blue."
    assert text["mediaType"] == "text/plain" and text["providerOptions"]["anthropic"]["sourceType"] == "text"
    assert json.loads(base64.b64decode(content["data"])) == [{"type": "text", "text": "First chunk."},
                                                             {"type": "text", "text": "Second chunk."}]
    assert (file["data"], file["providerOptions"]["anthropic"]) == ("file_011CNha8iCJcU1wXNR6q4V8w", {"sourceType": "file"})
    assert url_image == {"type": "image", "image": "https://upload.wikimedia.org/wikipedia/commons/a/a7/"
                                                   "Camponotus_flavomarginatus_ant.jpg"}
    assert file_image["providerOptions"]["anthropic"] == {"sourceType": "file"}


def test_server_tools_and_tool_results_with_images():
    web = read(DATA / "blocks.jsonl")[1]
    call, result, _, _ = web.messages[1]["content"]
    assert call["providerExecuted"] is True and call["providerOptions"]["anthropic"] == {"type": "server_tool_use"}
    assert result["toolName"] == "web_search" and result["output"]["type"] == "json"
    shot = web.messages[2]["content"][0]
    assert [item["type"] for item in shot["output"]["value"]] == ["text", "media"]
    assert shot["providerOptions"]["anthropic"] == {"is_error": False}
    shell = read(DATA / "blocks.jsonl")[2]
    empty = shell.messages[3]["content"][0]
    assert empty["output"] == {"type": "text", "value": ""}
    assert empty["providerOptions"]["anthropic"] == {"noContent": True, "cache_control": {"type": "ephemeral"}}
    failed = shell.messages[5]["content"][0]
    assert failed["output"]["type"] == "error-json" and len(failed["output"]["value"]) == 2


def test_a_response_is_a_conversation_named_by_its_id_with_its_fields_on_its_message():
    [response] = read(DATA / "response.json")
    assert response.id == "msg_01XFDUDYJgAACzvnptvVoYEL"
    [message] = response.messages
    kept = message["providerOptions"]["anthropic"]["response"]
    assert kept["stop_reason"] == "tool_use" and kept["stop_sequence"] is None and kept["usage"]["output_tokens"] == 503
    assert response.paths == [()]


def test_a_request_with_its_response_is_one_conversation_exported_as_the_request_with_the_reply(tmp_path):
    [exchange] = read(DATA / "exchange.json")
    assert exchange.id == "msg_01Aq9w938a90dw8q" and exchange.metadata["model"] == "claude-sonnet-4-5"
    reply = exchange.messages[-1]
    assert reply["providerOptions"]["anthropic"]["record"] == {"latency_ms": 812}
    assert exchange.paths[-1] == ("response",)
    out = import_and_validate(tmp_path, DATA / "exchange.json")
    [body] = [orjson.loads(b) for b in export_bodies([str(out)], "anthropic", per="conversation")]
    source = _bodies(DATA / "exchange.json")[0]
    assert body == {**source["request"], "messages": [*source["request"]["messages"],
                                                      {"role": "assistant", "content": source["response"]["content"]}]}


def test_detection_takes_anthropic_marks_only():
    plain = {"messages": [{"role": "user", "content": "hi"}]}
    assert _detected(plain) == ["openai-chat"]
    assert _detected({**plain, "system": "Be brief."}) == ["anthropic"]
    assert _detected(_bodies(DATA / "response.json")[0]) == ["anthropic"]
    assert _detected(_bodies(DATA / "exchange.json")[0]) == ["anthropic"]
    marked = [{"role": "assistant", "content": [{"type": "tool_use", "id": "t", "name": "f", "input": {}}]}]
    assert _detected(marked) == ["anthropic"] and _detected({"messages": marked}) == ["anthropic"]
    image = [{"role": "user", "content": [{"type": "image", "source": {"type": "url", "url": "https://a.b/c.png"}}]}]
    assert _detected(image) == ["anthropic"]
    assert _detected([{"role": "user", "content": [{"type": "text", "text": "hi"}]}]) == ["openai-chat"]


@pytest.mark.parametrize("line, path", [
    ({"system": 7, "messages": []}, "$.system"),
    ({"system": "s", "messages": [{"role": "human", "content": "hi"}]}, "$.messages[0]"),
    ({"system": "s", "messages": [{"role": "user", "content": 5}]}, "$.messages[0].content"),
    ({"system": "s", "messages": [{"role": "user", "content": [{"type": "video", "url": "x"}]}]}, "$.messages[0].content[0]"),
    ({"system": "s", "messages": [{"role": "user", "content": [{"type": {}}]}]}, "$.messages[0].content[0]"),
    ({"system": "s", "messages": [{"role": "assistant", "content": [{"type": "tool_use", "name": "f", "input": {}}]}]},
     "$.messages[0].content[0]"),
    ({"system": "s", "messages": [{"role": "assistant", "content": [
        {"type": "tool_result", "tool_use_id": "t", "content": "x"}]}]}, "$.messages[0].content[0]"),
    ({"system": "s", "messages": [{"role": "user", "content": [
        {"type": "image", "source": {"type": "base64", "data": 7}}]}]}, "$.messages[0].content[0]"),
    ({"system": "s", "messages": [{"role": "user", "content": [
        {"type": "document", "source": {"type": "zip", "data": "x"}}]}]}, "$.messages[0].content[0]"),
    ({"system": "s", "messages": [{"role": "user", "content": [
        {"type": "tool_result", "tool_use_id": "nobody", "content": "x"}]}]}, "$.messages[0]"),
    ({"system": "s", "messages": [{"role": "user", "content": [
        {"type": "tool_result", "tool_use_id": "t", "content": 3}]}]}, "$.messages[0].content[0]"),
    # A field named like a mark kept beside the block's (or message's) own: export could not tell them apart.
    ({"system": "s", "messages": [{"role": "user", "content": [{"type": "text", "text": "a", "sourceType": "x"}]}]},
     "$.messages[0].content[0].sourceType"),
    ({"system": "s", "messages": [{"role": "user", "content": [{"type": "text", "text": "a", "is_error": True}]}]},
     "$.messages[0].content[0].is_error"),
    ({"system": "s", "messages": [{"role": "user", "content": "a", "joined": True}]}, "$.messages[0].joined"),
    ({"system": [{"type": "text", "text": "a", "system": "x"}], "messages": []}, "$.system[0].system"),
])
def test_bad_input_is_a_problem_at_its_path_and_the_conversation_is_left_out(tmp_path, line, path):
    source = tmp_path / "bad.jsonl"
    source.write_bytes(orjson.dumps(line) + b"\n")
    problems: list = []
    assert import_paths([str(source)], "anthropic", problems=problems) == []
    errors = [p for p in problems if p.is_error]
    assert errors and errors[0].path == path and errors[0].line == 1, [p.format_text() for p in problems]


def test_a_truncated_line_is_a_problem_and_the_other_lines_are_read(tmp_path):
    source = tmp_path / "cut.jsonl"
    good = orjson.dumps(_bodies(DATA / "blocks.jsonl")[2])
    source.write_bytes(good + b"\n" + good[:40] + b"\n")
    problems: list = []
    records = import_paths([str(source)], problems=problems)
    assert {r["conversationId"] for r in records} == {"cut.jsonl:1"}
    assert [p.line for p in problems if p.is_error] == [2]


def test_an_integer_beyond_64_bits_is_an_error_not_a_float(tmp_path):
    source = tmp_path / "big.jsonl"
    source.write_text('{"system": "s", "max_tokens": 123456789012345678901234567890, '
                      '"messages": [{"role": "user", "content": "hi"}]}\n')
    problems: list = []
    assert import_paths([str(source)], problems=problems) == []
    [error] = [p for p in problems if p.is_error]
    assert "123456789012345678901234567890" in error.message and error.line == 1


def test_write_keeps_the_renderers_rules():
    [conversation] = read(DATA / "response.json")
    with pytest.raises(ProviderRuleError):  # a reply alone is no request: it starts with the assistant
        write(conversation.messages, "anthropic")
    other = [{"role": "system", "content": "a"}, {"role": "system", "content": "b"},
             {"role": "user", "content": [{"type": "image", "image": "data:image/png;base64,iVBO"}]}]
    assert write(other, "anthropic") == {"system": "a\n\nb", "messages": [{"role": "user", "content": [
        {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "iVBO"}}]}]}


# ---------------------------------------------------------------------------------------------
# The round trip, on generated bodies

_text = st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), min_size=1, max_size=12).filter(str.strip)
_cache = st.sampled_from([{}, {"cache_control": {"type": "ephemeral"}}])
_png = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="


def _text_block(draw) -> dict:
    return {"type": "text", "text": draw(_text), **draw(_cache)}


_SOURCES = st.sampled_from([
    ("image", {"type": "base64", "media_type": "image/png", "data": _png}),
    ("image", {"type": "url", "url": "https://example.com/a.png"}),
    ("image", {"type": "file", "file_id": "file_011CPMxVD3fHLUhvTqtsQA5w"}),
    ("document", {"type": "base64", "media_type": "application/pdf", "data": "JVBERi0xLjQK"}),
    ("document", {"type": "text", "media_type": "text/plain", "data": "Plain text, é and ✓."}),
    ("document", {"type": "content", "content": "One string."}),
    ("document", {"type": "content", "content": [{"type": "text", "text": "A chunk."}]}),
    ("document", {"type": "url", "url": "https://example.com/a.pdf"}),
])


@st.composite
def _user_blocks(draw) -> list[dict]:
    blocks = []
    for _ in range(draw(st.integers(1, 3))):
        if draw(st.booleans()):
            blocks.append(_text_block(draw))
            continue
        kind, source = draw(_SOURCES)
        extra = draw(st.sampled_from([{}, {"title": "Doc"}, {"citations": {"enabled": True}, "context": "c"}])) \
            if kind == "document" else {}
        blocks.append({"type": kind, "source": source, **extra, **draw(_cache)})
    return blocks


@st.composite
def _result(draw, call_id: str) -> dict:
    content = draw(st.one_of(
        _text, st.just([{"type": "text", "text": "a"}, {"type": "image", "source": {
            "type": "base64", "media_type": "image/png", "data": _png}}]),
        st.just([{"type": "text", "text": "cached", "cache_control": {"type": "ephemeral"}}]), st.none()))
    block = {"type": "tool_result", "tool_use_id": call_id}
    if content is not None:
        block["content"] = content
    block.update(draw(st.sampled_from([{}, {"is_error": True}, {"is_error": False}])))
    return block


@st.composite
def _bodies_generated(draw):
    body: dict = {"model": "claude-sonnet-4-5", "max_tokens": 1024}
    system = draw(st.sampled_from(["none", "string", "blocks"]))
    if system == "string":
        body["system"] = draw(_text)
    elif system == "blocks":
        body["system"] = [_text_block(draw) for _ in range(draw(st.integers(1, 2)))]
    messages: list[dict] = [{"role": "user", "content": draw(_text | _user_blocks())}]
    for number in range(draw(st.integers(1, 3))):
        blocks = []
        if draw(st.booleans()):
            blocks.append({"type": "thinking", "thinking": draw(_text), "signature": "EqQBCkYIARgC"})
        if draw(st.booleans()):
            blocks.append({"type": "redacted_thinking", "data": "EmwKAhgBEgy3va3p"})
        blocks.extend(_text_block(draw) for _ in range(draw(st.integers(0, 2))))
        ids = [f"toolu_{number}_{i}" for i in range(draw(st.integers(0 if blocks else 1, 2)))]
        blocks.extend({"type": "tool_use", "id": i, "name": draw(st.sampled_from(["search", "lookup"])),
                       "input": draw(st.dictionaries(st.sampled_from(["q", "n"]), st.integers(-5, 5) | _text, max_size=2))}
                      for i in ids)
        plain = len(blocks) == 1 and blocks[0]["type"] == "text" and set(blocks[0]) == {"type", "text"}
        messages.append({"role": "assistant", "content": blocks[0]["text"] if plain and draw(st.booleans()) else blocks})
        if ids:
            results = [draw(_result(i)) for i in ids]
            after = draw(st.sampled_from(["none", "same", "separate"]))
            if after == "same":
                results += draw(_user_blocks())
            messages.append({"role": "user", "content": results})
            if after == "separate":
                messages.append({"role": "user", "content": draw(_text | _user_blocks())})
        elif draw(st.booleans()):
            messages.append({"role": "user", "content": draw(_text | _user_blocks())})
    body["messages"] = messages
    if draw(st.booleans()):
        body["thinking"] = {"type": "enabled", "budget_tokens": 1024}
    return body


@settings(max_examples=80, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(body=_bodies_generated())
def test_import_then_export_gives_back_any_body(tmp_path_factory, body):
    folder = tmp_path_factory.mktemp("roundtrip")
    source = folder / "bodies.jsonl"
    source.write_bytes(orjson.dumps(body) + b"\n")
    records = import_paths([str(source)], "anthropic")  # without system nor blocks, a body is OpenAI's too
    steps = folder / "steps.jsonl"
    steps.write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in records))
    [exported] = [orjson.loads(b) for b in export_bodies([str(steps)], "anthropic", per="conversation")]
    assert exported == body
    # Import is stable: the exported body imports into the same records.
    source.write_bytes(orjson.dumps(exported) + b"\n")
    assert import_paths([str(source)], "anthropic") == records
    assert anthropic.detect(body) == ("system" in body or any(
        isinstance(m["content"], list) and any(b["type"] != "text" for b in m["content"]) for m in body["messages"]))


@pytest.mark.parametrize("record, path, words", [
    ({"model": "claude"}, "$", "holds `messages`, a list"),
    ({"messages": 3}, "$.messages", "holds `messages`, a list"),
    ({"type": "message", "role": "assistant", "content": 5}, "$.content", "holds `content`, a list"),
    ({"request": 3, "response": {}}, "$.request", "must be an object"),
])
def test_a_record_forced_as_anthropic_that_is_not_one_says_what_it_lacks(tmp_path, record, path, words):
    [problem] = import_problems(write_jsonl(tmp_path / "r.jsonl", [record]), "anthropic")
    assert problem.path == path and words in problem.message and "Error" not in problem.message


def test_mcp_connector_blocks_are_read_and_exported_back_as_they_were(tmp_path):
    # The MCP connector's calls and results sit in the assistant's content, as server tools' do.
    source = DATA / "mcp-exchange.json"
    logged = json.loads(source.read_text())
    out = import_and_validate(tmp_path, source)
    [step] = [json.loads(line) for line in out.read_text().splitlines()]
    call, result = step["output"][0]["content"][1:3]
    assert (call["toolName"], call["providerExecuted"], call["input"]) == ("echo", True, {"param1": "value1"})
    assert result["toolName"] == "echo" and result["output"] == {"type": "json", "value": [{"type": "text", "text": "Hello"}]}
    [body] = [orjson.loads(b) for b in export_bodies([str(out)], "anthropic", "conversation")]
    assert body["messages"] == logged["request"]["messages"] + [{"role": "assistant", "content": logged["response"]["content"]}]
    assert body["mcp_servers"] == logged["request"]["mcp_servers"]


def test_a_failed_mcp_tool_result_is_an_error_output(tmp_path):
    block = {"type": "mcp_tool_result", "tool_use_id": "mcptoolu_1", "is_error": True,
             "content": [{"type": "text", "text": "server unreachable"}]}
    response = {"type": "message", "role": "assistant", "content": [
        {"type": "mcp_tool_use", "id": "mcptoolu_1", "name": "echo", "server_name": "s", "input": {}}, block]}
    path = tmp_path / "x.json"
    path.write_text(json.dumps({"request": {"messages": [{"role": "user", "content": "echo"}]}, "response": response}))
    [conversation] = read(path)
    assert conversation.messages[1]["content"][1]["output"]["type"] == "error-json"
    assert write(conversation.messages, "anthropic")["messages"][1]["content"] == response["content"]
