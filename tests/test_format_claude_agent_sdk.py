"""The claude-agent-sdk format: the Claude Agent SDK's message stream (`claude -p --output-format
stream-json`), a file one session (issue 30). Real streams the CLI wrote are imported whole:
every line is a model message or an entry of the conversation's metadata, nothing lost."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest
from conftest import assert_nothing_lost, import_and_validate, import_problems, read_jsonl, write_jsonl

from chatconv.formats import claude_agent_sdk, claude_code

REAL = Path(__file__).parent / "data" / "formats" / "claude-agent-sdk" / "real"
# Anthropic's block vocabulary, read into the model messages' own
VOCABULARY = ("tool_use", "tool_result", "tool_use_id", "message")


def _lines(path: Path) -> list:
    return [orjson.loads(line) for line in path.read_bytes().splitlines()]


@pytest.mark.parametrize("name", sorted(p.name for p in REAL.iterdir()))
def test_a_real_stream_is_imported_whole(tmp_path, name):
    source = REAL / name
    assert claude_agent_sdk.claims(str(source)) and not claude_code.claims(str(source))
    steps = read_jsonl(import_and_validate(tmp_path, source))
    lines = _lines(source)
    assert {s["conversationId"] for s in steps} == {lines[-1]["session_id"]}
    messages = [m for s in steps for m in [s["input"], *s["output"]]]
    sdk = [m["providerOptions"]["claude-agent-sdk"] for m in messages if "claude-agent-sdk" in m.get("providerOptions", {})]
    entries = steps[0]["metadata"]["claude-agent-sdk"]["entries"]
    # each line a message (its uuid kept) or an entry, in the file's order
    assert sorted([e["index"] for e in entries] + [i for i, line in enumerate(lines) if line["type"] in (
        "user", "assistant")]) == list(range(len(lines)))
    assert [m.get("uuid") for m in sdk] == [line.get("uuid") for line in lines if line["type"] in ("user", "assistant")]
    assert_nothing_lost(lines, steps, VOCABULARY)


def test_the_tool_call_and_its_result_are_paired_and_the_prompt_is_unrecorded(tmp_path):
    steps = read_jsonl(import_and_validate(tmp_path, REAL / "plan-mode-ls.jsonl"))
    [step] = steps
    assert step["input"]["providerOptions"] == {"chatconv": {"unrecorded": True}}
    text, call, result, answer = step["output"]
    assert call["content"][0]["type"] == "tool-call" and call["content"][0]["toolName"] == "Bash"
    assert result["role"] == "tool" and result["content"][0]["toolCallId"] == call["content"][0]["toolCallId"]
    assert result["providerOptions"]["claude-agent-sdk"]["tool_use_result"]["interrupted"] is False
    assert answer["content"][0]["text"].startswith("The current directory contains")


def test_a_stream_of_no_message_says_so_at_its_file(tmp_path):
    path = write_jsonl(tmp_path / "s.jsonl", [{"type": "system", "subtype": "init", "session_id": "s1"},
                                               {"type": "result", "subtype": "success", "session_id": "s1"}])
    [problem] = import_problems(path)
    assert problem.severity == "error" and "no assistant or user line" in problem.message


def test_a_broken_line_is_named_and_the_rest_read(tmp_path):
    path = tmp_path / "s.jsonl"
    lines = (REAL / "basic_query.ndjson").read_bytes().splitlines()
    path.write_bytes(b"\n".join([lines[0], b'{"type": "assistant", "mess', *lines[1:]]) + b"\n")
    from chatconv.formats import import_paths
    problems: list = []
    steps = import_paths([str(path)], problems=problems)
    assert [(p.line, p.severity) for p in problems] == [(2, "error")]
    assert steps and steps[0]["output"][0]["content"][0]["text"] == "4"
