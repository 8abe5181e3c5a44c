"""The claude-code format: a Claude Code transcript (one JSON object per line, a file one session)
read into one conversation.

The fixture follows the transcripts Claude Code writes under ~/.claude/projects/ (no official
reference exists; the line fields are as community notes describe them, e.g.
https://github.com/DRMacIver/claude-reliability/blob/main/notes/transcript-format.md), with
Anthropic message content as https://docs.anthropic.com/en/api/messages has it.
"""

from __future__ import annotations

import json
from pathlib import Path

from conftest import import_and_validate, read_jsonl

from chatconv.formats import FORMATS, claude_code, import_paths, read
from chatconv.recordings import tool_rows

DATA = Path(__file__).parent / "data" / "formats" / "claude-code"
SESSION = "7f3c2a1e-5b8d-4e6f-9a0b-1c2d3e4f5a6b"
FIXTURE = DATA / f"{SESSION}.jsonl"


def _lines() -> list[dict]:
    return [json.loads(line) for line in FIXTURE.read_text().splitlines()]


def test_a_transcript_is_one_conversation_named_by_its_session_valid_with_its_calls_paired(tmp_path):
    problems: list = []
    out = import_and_validate(tmp_path, FIXTURE, problems=problems)
    assert not problems and {r["conversationId"] for r in read_jsonl(out)} == {SESSION}
    assert {row["toolName"]: row["status"] for row in tool_rows(out)} == {"Bash": "error", "Read": "ok"}


def test_each_line_keeps_its_fields_and_lines_that_are_not_messages_go_to_the_metadata():
    [conversation] = read(FIXTURE)
    lines = _lines()
    message_lines = [line for line in lines if line["type"] in ("user", "assistant")]
    assert len(conversation.messages) == len(message_lines)  # no message line split or dropped here
    for message, line in zip(conversation.messages, message_lines):
        own = message["providerOptions"]["claude-code"]
        assert {k: v for k, v in own.items() if k != "message"} == {k: v for k, v in line.items() if k != "message"}
        extra = {k: v for k, v in line["message"].items() if k not in ("role", "content")}
        assert own.get("message", {}) == extra
    assert conversation.metadata == {"entries": [{"index": i, "entry": line} for i, line in enumerate(lines)
                                                 if line["type"] not in ("user", "assistant")]}
    # Each message points at its own line of the file.
    assert conversation.paths[0] == (2, "message")


def test_a_bad_block_is_a_problem_on_its_own_line(tmp_path):
    lines = _lines()
    lines[6]["message"]["content"][0]["type"] = "tool_call"
    source = tmp_path / "session.jsonl"
    source.write_text("".join(json.dumps(line) + "\n" for line in lines))
    problems: list = []
    assert import_paths([str(source)], problems=problems) == []
    [error] = [p for p in problems if p.is_error]
    assert error.line == 7 and error.path == "$[6].message.content[0]"


def test_a_truncated_last_line_is_a_problem_and_the_rest_is_read(tmp_path):
    text = FIXTURE.read_text()
    source = tmp_path / "session.jsonl"
    source.write_text(text + text.splitlines()[-1][:50] + "\n")
    problems: list = []
    records = import_paths([str(source)], problems=problems)
    assert records and [p.line for p in problems if p.is_error] == [len(text.splitlines()) + 1]


def test_claims_and_detection_take_transcripts_only(tmp_path):
    assert claude_code.claims(str(FIXTURE))
    body = tmp_path / "bodies.jsonl"
    body.write_text(json.dumps({"system": "s", "messages": [{"role": "user", "content": "hi"}]}) + "\n")
    assert not claude_code.claims(str(body)) and not claude_code.claims("-")
    assert [f.NAME for f in FORMATS if f.detect(_lines())] == ["claude-code"]
    assert not claude_code.detect({"messages": [{"role": "user", "content": "hi"}]})
    assert not claude_code.detect([{"role": "user", "content": "hi"}])


def test_a_line_read_alone_with_from_is_a_conversation_of_its_session(tmp_path):
    source = tmp_path / "lines.json"
    source.write_text(json.dumps(_lines()[2]))
    [conversation] = read(source, "claude-code")
    assert conversation.id == SESSION and conversation.messages[0]["content"] == "The checkout test fails, can you fix it?"


def test_a_line_that_is_no_object_is_an_error_at_its_line_not_a_reason_to_read_lines_apart(tmp_path):
    text = FIXTURE.read_text()
    source = tmp_path / "session.jsonl"
    source.write_text('[1, 2]\n' + text + '"stray"\n')
    problems: list = []
    assert import_paths([str(source)], problems=problems) == []
    errors = [(p.line, p.path) for p in problems if p.is_error]
    assert errors == [(1, "$[0]"), (len(text.splitlines()) + 2, f"$[{len(text.splitlines()) + 1}]")]


def test_a_broken_first_line_does_not_hide_the_transcript(tmp_path):
    source = tmp_path / "session.jsonl"
    source.write_text('{"type": "summ\n' + FIXTURE.read_text())
    problems: list = []
    records = import_paths([str(source)], problems=problems)
    assert {r["conversationId"] for r in records} == {SESSION}
    assert [(p.line, p.code) for p in problems if p.is_error] == [(1, "invalid-json")]


def test_an_integer_beyond_64_bits_is_an_error_not_a_float(tmp_path):
    lines = FIXTURE.read_text().splitlines()
    source = tmp_path / "session.jsonl"
    source.write_text("\n".join(lines[:2] + [lines[2][:-1] + ', "big": 123456789012345678901234567890}'] + lines[3:]) + "\n")
    problems: list = []
    assert import_paths([str(source)], problems=problems) == []
    [error] = [p for p in problems if p.is_error]
    assert "123456789012345678901234567890" in error.message and error.code == "not-written"
