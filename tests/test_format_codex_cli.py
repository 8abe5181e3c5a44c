"""The codex-cli format: Codex CLI rollouts (issue 30). Real rollouts the CLI wrote are imported
whole: the response items as the model's history, every other line kept, each line accounted for."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest
from conftest import assert_nothing_lost, import_and_validate, import_problems, read_jsonl, write_jsonl

from chatconv.formats import claude_agent_sdk, claude_code, codex_cli

REAL = Path(__file__).parent / "data" / "formats" / "codex-cli" / "real"
# The Responses items' vocabulary, read into the model messages' own
VOCABULARY = ("payload", "message", "input_text", "output_text", "content", "role", "text", "summary", "summary_text",
              "function_call", "function_call_output", "call_id", "name", "arguments", "output", "type", "reasoning")


@pytest.mark.parametrize("name", sorted(p.name for p in REAL.iterdir()))
def test_a_real_rollout_is_imported_whole_every_line_accounted_for(tmp_path, name):
    source = REAL / name
    assert codex_cli.claims(str(source)) and not claude_code.claims(str(source))
    assert not claude_agent_sdk.claims(str(source))
    lines = [orjson.loads(line) for line in source.read_bytes().splitlines()]
    steps = read_jsonl(import_and_validate(tmp_path, source))
    accounted = steps[0]["metadata"]["codex-cli"]["lines"]
    assert [entry["index"] for entry in accounted] == list(range(len(lines)))
    assert [entry.get("entry") or {**entry["line"], "payload": None} for entry in accounted] == [
        line if line["type"] != "response_item" else {**line, "payload": None} for line in lines]
    session = next((line["payload"]["id"] for line in lines if line["type"] == "session_meta"), None)
    if session:
        assert {s["conversationId"] for s in steps} == {session}
    assert_nothing_lost(lines, steps, VOCABULARY)


def test_reasoning_calls_and_their_outputs_are_read_in_order(tmp_path):
    steps = read_jsonl(import_and_validate(tmp_path, REAL / "rollout-2025-09-24T19-22-20-01997e76-d124-7592-9cac-2ec05abbca08.head16.jsonl"))
    messages = [m for s in steps for m in [s["input"], *s["output"]]]
    assert [m["role"] for m in messages] == ["user", "user", "assistant", "tool", "assistant", "tool"]
    reasoning, call = messages[2]["content"]
    assert reasoning["type"] == "reasoning" and reasoning["text"].startswith("**Assessing environment")
    assert call["toolName"] == "shell" and call["input"]["command"][:2] == ["bash", "-lc"]
    [result] = messages[3]["content"]
    assert result["toolCallId"] == call["toolCallId"] and result["toolName"] == "shell"


def test_a_line_that_is_not_a_rollout_line_is_named(tmp_path):
    path = write_jsonl(tmp_path / "rollout.jsonl", [
        {"timestamp": "t", "type": "session_meta", "payload": {"id": "s"}}, {"type": "response_item"}])
    problems = import_problems(path)
    assert [(p.line, p.severity) for p in problems] == [(2, "error")] and "a rollout line" in problems[0].message


def test_an_item_responses_does_not_have_is_kept_whole(tmp_path):
    ghost = {"timestamp": "t2", "type": "response_item", "payload": {"type": "ghost_snapshot", "ghost_commit": {}}}
    path = write_jsonl(tmp_path / "rollout.jsonl", [
        {"timestamp": "t", "type": "session_meta", "payload": {"id": "s"}}, ghost,
        {"timestamp": "t3", "type": "response_item", "payload": {"type": "message", "role": "user", "content": [
            {"type": "input_text", "text": "hi"}]}}])
    [step] = read_jsonl(import_and_validate(tmp_path, path))
    assert step["metadata"]["codex-cli"]["lines"][1] == {"index": 1, "entry": ghost}
