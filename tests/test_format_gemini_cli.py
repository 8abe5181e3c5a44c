"""The gemini-cli format: Gemini CLI session recordings (issue 30). Real sessions the CLI wrote
are imported whole: thoughts as reasoning, each tool call with its result beside it, nothing lost."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import assert_nothing_lost, import_and_validate, import_problems, read_jsonl, write_jsonl

from chatconv.formats import IMPORTED
from chatconv.formats.importing import _format_of

REAL = Path(__file__).parent / "data" / "formats" / "gemini-cli" / "real"
# The session's vocabulary, read into the model messages' own
VOCABULARY = ("type", "user", "gemini", "content", "thoughts", "toolCalls", "args", "result", "functionResponse",
              "response", "output", "error", "messages", "sessionId", "id", "name", "description", "text")


@pytest.mark.parametrize("name", sorted(p.name for p in REAL.iterdir()))
def test_a_real_session_is_imported_whole(tmp_path, name):
    session = json.loads((REAL / name).read_text(encoding="utf-8"))
    assert _format_of(session, IMPORTED, None).NAME == "gemini-cli"
    steps = read_jsonl(import_and_validate(tmp_path, REAL / name))
    assert {s["conversationId"] for s in steps} == {session["sessionId"]}
    assert steps[0]["metadata"]["gemini-cli"]["projectHash"] == session["projectHash"]
    messages = [m for s in steps for m in [s["input"], *s["output"]]]
    # every session message is a model message, in order (a tool message follows each model turn with calls)
    ids = [m["providerOptions"]["gemini-cli"]["id"] for m in messages if m["role"] != "tool"]
    assert ids == [m["id"] for m in session["messages"]]
    assert_nothing_lost(session, steps, VOCABULARY)


def test_calls_are_followed_by_their_results_and_errors_say_so(tmp_path):
    steps = read_jsonl(import_and_validate(tmp_path, REAL / "session-2025-10-29T10-39-a63242d9.json"))
    call, result = steps[0]["output"]
    [call_part] = [p for p in call["content"] if p["type"] == "tool-call"]
    assert call_part["toolName"] == "write_file" and call_part["providerOptions"]["gemini-cli"]["status"] == "error"
    [result_part] = result["content"]
    assert result_part["toolCallId"] == call_part["toolCallId"] and result_part["output"]["type"] == "error-text"
    assert result_part["output"]["value"].startswith('Tool "write_file" not found in registry')


def test_thoughts_are_reasoning_with_their_subject_kept(tmp_path):
    steps = read_jsonl(import_and_validate(tmp_path, REAL / "agent-history-real-session-01.json"))
    [thought, text] = steps[0]["output"][0]["content"]
    assert thought["type"] == "reasoning" and thought["text"] == "[REDACTED_THOUGHT]"
    assert thought["providerOptions"]["gemini-cli"]["subject"] == "Generating Specific Response"
    assert text == {"type": "text", "text": "[REDACTED_ASSISTANT_TEXT]"}


def test_a_result_that_is_not_one_response_of_its_call_is_kept_as_json_and_other_messages_as_entries(tmp_path):
    result = [{"functionResponse": {"id": "c1", "name": "ls", "response": {"output": "a"}}},
              {"inlineData": {"mimeType": "image/png", "data": "AA=="}}]
    session = {"sessionId": "s", "projectHash": "h", "messages": [
        {"id": "1", "type": "user", "content": "list"},
        {"id": "2", "type": "info", "content": "Switched model"},
        {"id": "3", "type": "gemini", "content": "", "toolCalls": [{"id": "c1", "name": "ls", "args": {},
                                                                    "result": result, "status": "success"}]}]}
    steps = read_jsonl(import_and_validate(tmp_path, write_jsonl(tmp_path / "s.json", [session])))
    assert steps[0]["output"][1]["content"][0]["output"] == {"type": "json", "value": result}
    assert steps[0]["metadata"]["gemini-cli"]["entries"] == [{"index": 1, "entry": session["messages"][1]}]


@pytest.mark.parametrize("message, path", [
    ({"id": "1", "type": "gemini", "content": "", "toolCalls": [{"name": "ls"}]}, "$.messages[0].toolCalls[0]"),
    ({"id": "1", "type": "user", "content": {"text": "hi"}}, "$.messages[0].content"),
])
def test_a_message_chatconv_cannot_read_is_named_at_its_path(tmp_path, message, path):
    problems = import_problems(write_jsonl(tmp_path / "s.jsonl", [{"sessionId": "s", "projectHash": "h",
                                                                   "messages": [message]}]))
    assert [(p.path, p.severity) for p in problems] == [(path, "error")]
