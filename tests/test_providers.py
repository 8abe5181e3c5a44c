"""Each API's rules: broken, each gives its error naming the message; repaired only when asked."""

from __future__ import annotations

import json

import pytest

from chatconv.providers import ProviderRuleError, render_anthropic, render_gemini, render_openai


def call(call_id, name="weather"):
    return {"type": "tool-call", "toolCallId": call_id, "toolName": name, "input": {"city": "Paris"}}


def result(call_id, value="sunny", kind="text", name="weather"):
    return {"type": "tool-result", "toolCallId": call_id, "toolName": name, "output": {"type": kind, "value": value}}


TOOL_TURN = [
    {"role": "system", "content": "Be brief."},
    {"role": "user", "content": "Weather in Paris?"},
    {"role": "assistant", "content": [{"type": "text", "text": "Checking."}, call("c1")]},
    {"role": "tool", "content": [result("c1")]},
    {"role": "assistant", "content": "Sunny."},
]


def test_valid_tool_turn_renders_for_each_api():
    openai, repairs = render_openai(TOOL_TURN)
    assert repairs == []
    assert openai["messages"][2] == {"role": "assistant", "content": "Checking.", "tool_calls": [
        {"id": "c1", "type": "function", "function": {"name": "weather", "arguments": '{"city":"Paris"}'}}]}
    assert openai["messages"][3] == {"role": "tool", "tool_call_id": "c1", "content": "sunny"}

    anthropic, _ = render_anthropic(TOOL_TURN)
    assert anthropic["system"] == "Be brief."
    assert [m["role"] for m in anthropic["messages"]] == ["user", "assistant", "user", "assistant"]
    assert anthropic["messages"][1]["content"][1] == {"type": "tool_use", "id": "c1", "name": "weather",
                                                      "input": {"city": "Paris"}}
    assert anthropic["messages"][2]["content"] == [{"type": "tool_result", "tool_use_id": "c1", "content": "sunny"}]

    gemini, _ = render_gemini(TOOL_TURN)
    assert gemini["system_instruction"] == {"parts": [{"text": "Be brief."}]}
    assert [c["role"] for c in gemini["contents"]] == ["user", "model", "user", "model"]
    assert gemini["contents"][1]["parts"][1] == {"functionCall": {"id": "c1", "name": "weather",
                                                                  "args": {"city": "Paris"}}}
    assert gemini["contents"][2]["parts"] == [{"functionResponse": {"id": "c1", "name": "weather",
                                                                    "response": {"result": "sunny"}}}]


def test_runs_of_one_role_are_merged_for_anthropic_and_gemini_not_openai():
    messages = [{"role": "user", "content": "a"}, {"role": "user", "content": "b"}]
    assert render_anthropic(messages)[0]["messages"] == [
        {"role": "user", "content": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}]}]
    assert render_gemini(messages)[0]["contents"] == [{"role": "user", "parts": [{"text": "a"}, {"text": "b"}]}]
    assert len(render_openai(messages)[0]["messages"]) == 2


def test_text_only_tool_message_becomes_user_text():
    messages = [{"role": "user", "content": "run it"}, {"role": "tool", "content": "exit 0"}]
    assert render_openai(messages)[0]["messages"][1] == {"role": "user", "content": "[Tool]: exit 0"}
    assert render_anthropic(messages)[0]["messages"][0]["content"][1] == {"type": "text", "text": "[Tool]: exit 0"}


def test_error_results_are_marked():
    messages = [{"role": "user", "content": "go"}, {"role": "assistant", "content": [call("c1")]},
                {"role": "tool", "content": [result("c1", "boom", "error-text")]}]
    assert render_anthropic(messages)[0]["messages"][2]["content"][0]["is_error"] is True
    assert render_gemini(messages)[0]["contents"][2]["parts"][0]["functionResponse"]["response"] == {"error": "boom"}


BROKEN = {
    "openai orphan tool result": (render_openai, [{"role": "user", "content": "x"},
                                                  {"role": "tool", "content": [result("zz")]}],
                                  1, "tool result 'zz' answers no earlier tool_calls id"),
    "anthropic late system": (render_anthropic, [{"role": "user", "content": "x"}, {"role": "system", "content": "late"}],
                              1, "a system message after the conversation has started"),
    "anthropic starts with assistant": (render_anthropic, [{"role": "assistant", "content": "hi"}],
                                        0, "the conversation starts with the assistant"),
    "anthropic unanswered tool_use": (render_anthropic, [{"role": "user", "content": "x"},
                                                         {"role": "assistant", "content": [call("c1")]},
                                                         {"role": "user", "content": "ok?"}],
                                      1, "tool_use 'c1' is not answered in the next user message"),
    "anthropic results not first": (render_anthropic, [{"role": "user", "content": "x"},
                                                       {"role": "assistant", "content": [call("c1")]},
                                                       {"role": "user", "content": "also"},
                                                       {"role": "tool", "content": [result("c1")]}],
                                    2, "text comes before a tool_result in a user message"),
    "gemini starts with model": (render_gemini, [{"role": "assistant", "content": "hi"}],
                                 0, "the conversation starts with the model"),
    "gemini missing functionResponse": (render_gemini, [{"role": "user", "content": "x"},
                                                        {"role": "assistant", "content": [call("c1"), call("c2")]},
                                                        {"role": "tool", "content": [result("c1")]}],
                                        1, "functionCall 'c2' is not answered in the next user message"),
    "anthropic nothing to send": (render_anthropic, [{"role": "system", "content": "only"}],
                                  None, "no message to send: no user or assistant message"),
    "gemini late system": (render_gemini, [{"role": "user", "content": "x"}, {"role": "system", "content": "late"}],
                           1, "a system message after the conversation has started"),
}


@pytest.mark.parametrize("name", list(BROKEN))
def test_broken_rule_is_an_error_naming_the_message(name):
    render, messages, index, rule = BROKEN[name]
    with pytest.raises(ProviderRuleError) as caught:
        render(messages)
    assert caught.value.index == index and caught.value.rule.endswith(rule)
    expected_path = "$" if index is None else f"$.messages[{index}]"
    assert caught.value.problems[0].path == expected_path and caught.value.problems[0].hint


@pytest.mark.parametrize("name", [n for n in BROKEN if BROKEN[n][2] is not None])
def test_repair_only_when_asked_and_always_reported(name):
    render, messages, _, rule = BROKEN[name]
    body, repairs = render(messages, repair=True)
    assert len(repairs) >= 1 and rule in repairs[0] and "(repaired)" in repairs[0]
    # a repaired body breaks no rule any more
    assert render(_as_messages(body, render), repair=False)


def _as_messages(body, render):
    """Read a rendered body back as messages, to check that it now passes the rules."""
    if render is render_openai:
        return [m for m in body["messages"] if m["role"] != "tool"]
    if render is render_anthropic:
        messages = [{"role": "system", "content": body["system"]}] if "system" in body else []
        for m in body["messages"]:
            blocks = m["content"] if isinstance(m["content"], list) else [{"type": "text", "text": m["content"]}]
            parts = [_from_anthropic(b) for b in blocks]
            messages.append({"role": m["role"], "content": parts})
        return _split_results(messages)
    messages = [{"role": "system", "content": body["system_instruction"]["parts"][0]["text"]}] if "system_instruction" in body else []
    for c in body["contents"]:
        messages.append({"role": "assistant" if c["role"] == "model" else "user", "content": [_from_gemini(p) for p in c["parts"]]})
    return _split_results(messages)


def _from_anthropic(block):
    if block["type"] == "text":
        return {"type": "text", "text": block["text"]}
    if block["type"] == "tool_use":
        return call(block["id"], block["name"])
    return result(block["tool_use_id"], block["content"])


def _from_gemini(part):
    if "text" in part:
        return {"type": "text", "text": part["text"]}
    if "functionCall" in part:
        return call(part["functionCall"]["id"], part["functionCall"]["name"])
    return result(part["functionResponse"]["id"], "x", name=part["functionResponse"]["name"])


def _split_results(messages):
    """User messages carrying tool results become tool messages followed by the user's text."""
    out = []
    for m in messages:
        results = [p for p in m["content"] if p["type"] == "tool-result"] if isinstance(m["content"], list) else []
        rest = [p for p in m["content"] if p["type"] != "tool-result"] if results else m["content"]
        if results:
            out.append({"role": "tool", "content": results})
        if rest:
            out.append({"role": m["role"], "content": rest})
    return out


@pytest.mark.parametrize("url, data, media_type", [
    ("data:image/jpeg;base64,AAAA", "AAAA", "image/jpeg"),
    ("data:;base64,AAAA", "AAAA", "image/png"),  # no type in the URL: the part's (here the default)
    ("data:text/plain;charset=utf-8,hi%21", "aGkh", "text/plain"),  # percent-encoded: sent as base64
])
def test_data_urls_are_sent_as_base64_data_with_their_media_type(url, data, media_type):
    messages = [{"role": "user", "content": [{"type": "text", "text": "see"}, {"type": "image", "image": url}]}]
    assert render_anthropic(messages)[0]["messages"][0]["content"][1] == {
        "type": "image", "source": {"type": "base64", "media_type": media_type, "data": data}}
    assert render_gemini(messages)[0]["contents"][0]["parts"][1] == {
        "inline_data": {"mime_type": media_type, "data": data}}
    assert render_openai(messages)[0]["messages"][0]["content"][1] == {"type": "image_url", "image_url": {"url": url}}


def test_a_file_part_with_a_data_url_and_a_web_url():
    pdf = {"type": "file", "data": "data:application/pdf;base64,JVBE", "mediaType": "application/pdf"}
    web = {"type": "file", "data": "https://example.com/a.pdf", "mediaType": "application/pdf"}
    messages = [{"role": "user", "content": [pdf, web]}]
    assert render_anthropic(messages)[0]["messages"][0]["content"] == [
        {"type": "document", "source": {"type": "base64", "media_type": "application/pdf", "data": "JVBE"}},
        {"type": "document", "source": {"type": "url", "url": "https://example.com/a.pdf"}}]
    assert render_gemini(messages)[0]["contents"][0]["parts"] == [
        {"inline_data": {"mime_type": "application/pdf", "data": "JVBE"}},
        {"file_data": {"mime_type": "application/pdf", "file_uri": "https://example.com/a.pdf"}}]


def test_a_tool_the_provider_ran_is_called_and_answered_in_the_assistants_own_turn():
    """No result is awaited from the user for it (web search for Anthropic, code execution for Gemini)."""
    def messages(name, call_input, value):
        return [{"role": "user", "content": "go"},
                {"role": "assistant", "content": [
                    {"type": "tool-call", "toolCallId": "s1", "toolName": name, "input": call_input, "providerExecuted": True},
                    {"type": "tool-result", "toolCallId": "s1", "toolName": name, "output": {"type": "json", "value": value}},
                    {"type": "text", "text": "done"}]}]
    hits = [{"type": "web_search_result", "url": "https://example.com/", "title": "Example"}]
    assert render_anthropic(messages("web_search", {"query": "q"}, hits))[0]["messages"][1]["content"] == [
        {"type": "server_tool_use", "id": "s1", "name": "web_search", "input": {"query": "q"}},
        {"type": "web_search_tool_result", "tool_use_id": "s1", "content": hits},
        {"type": "text", "text": "done"}]
    code, result = {"language": "PYTHON", "code": "print(1)"}, {"outcome": "OUTCOME_OK", "output": "1\n"}
    assert render_gemini(messages("code_execution", code, result))[0]["contents"][1]["parts"] == [
        {"executableCode": code}, {"codeExecutionResult": result}, {"text": "done"}]


def test_an_anthropic_text_block_of_white_space_only_is_left_out_with_a_warning():
    # The API refuses it ("text content blocks must contain non-whitespace text"); Claude Code
    # writes one before thinking. prompt and export leave it out alike, with a blank-text warning.
    warnings: list = []
    body, repairs = render_anthropic([{"role": "user", "content": [{"type": "text", "text": " "},
                                                                   {"type": "text", "text": "hi"}]}], warnings=warnings)
    assert body == {"messages": [{"role": "user", "content": "hi"}]} and repairs == []
    assert [(index, code) for index, code, _ in warnings] == [(0, "blank-text")]


@pytest.mark.parametrize("text", ["", " \n"])
def test_a_gemini_text_part_of_white_space_only_is_left_out_as_for_anthropic(text, tmp_path):
    # One rule for both APIs that refuse it, in prompt and export alike.
    warnings: list = []
    body, repairs = render_gemini([{"role": "user", "content": [{"type": "text", "text": text},
                                                                {"type": "text", "text": "hi"}]}], warnings=warnings)
    assert body == {"contents": [{"role": "user", "parts": [{"text": "hi"}]}]} and repairs == []
    assert [(index, code) for index, code, _ in warnings] == [(0, "blank-text")]
    from chatconv.formats import ExportRun, export_bodies
    steps = tmp_path / "s.jsonl"
    steps.write_text(json.dumps({"stepIndex": 0, "input": {"role": "user", "content": [
        {"type": "text", "text": text}, {"type": "text", "text": "hi"}]}, "output": [
        {"role": "assistant", "content": []}, {"role": "assistant", "content": "ok"}]}) + "\n")
    run = ExportRun()
    [exported] = [json.loads(b) for b in export_bodies([str(steps)], "gemini", "step", run=run)]
    assert exported["contents"] == [{"role": "user", "parts": [{"text": "hi"}]},
                                    {"role": "model", "parts": [{"text": "ok"}]}]
    assert [p.code for p in run.problems] == ["blank-text", "part-left-out"]
