"""Validation: the seeds' examples and the real recordings pass; each kind of fault is found."""

from __future__ import annotations

import json
import os
import textwrap

import pytest

from chatconv.problems import ChatconvError
from chatconv.references import FileReferenceError, resolve_reference
from chatconv.sources import Record
from chatconv.validate import (check_schema, detect_kind, discover, load_eval_file, validate_path,
                               validate_record)
from conftest import read_jsonl, recorded_files, run_chatconv, to_legacy, write_jsonl

# The YAML snippets of seed 001, each the input_messages of one case.
SEED_001_SNIPPETS = {
    "single-system-and-user": """
        - role: system
          content: You are a helpful assistant.
        - role: user
          content: Hello, world!
    """,
    "multi-turn-with-assistant": """
        - role: user
          content: Debug this code
        - role: assistant
          content: I can help with that
        - role: user
          content: Thanks, here's the code
    """,
    "system-with-guidelines": """
        - role: user
          content:
            - type: text
              value: Review this code
            - type: file
              value: ./guidelines.instructions.md
    """,
    "embedded-non-guideline-file": """
        - role: user
          content:
            - type: text
              value: "Review this:"
            - type: file
              value: ./code.js
    """,
    "extract-guideline-from-user": """
        - role: user
          content:
            - type: file
              value: python.instructions.md
            - type: text
              value: Write a function
    """,
    "multiple-guideline-files": """
        - role: user
          content:
            - type: file
              value: python.instructions.md
            - type: file
              value: security.instructions.md
    """,
    "only-guideline-files": """
        - role: system
          content: System context
        - role: user
          content:
            - type: file
              value: guidelines.instructions.md
    """,
    "explicit-system-message": """
        - role: system
          content: Custom system context
        - role: user
          content: Hello
    """,
    "orchestrator-populates-chat-prompt": """
        - role: user
          content: Hello
        - role: assistant
          content: Hi there
    """,
}


def _write_seed_files(folder):
    (folder / "guidelines.instructions.md").write_text("Always be concise")
    (folder / "code.js").write_text("console.log('test')")
    (folder / "python.instructions.md").write_text("Use type hints.")
    (folder / "security.instructions.md").write_text("Never log secrets.")


@pytest.mark.parametrize("name", sorted(SEED_001_SNIPPETS))
def test_every_seed_001_snippet_validates(repo, name):
    _write_seed_files(repo)
    messages = textwrap.indent(textwrap.dedent(SEED_001_SNIPPETS[name]).strip(), "      ")
    path = repo / f"{name}.yaml"
    path.write_text(f"guideline_patterns: ['**/*.instructions.md']\nevalcases:\n"
                    f"  - id: {name}\n    outcome: as in seed 001\n    input_messages:\n{messages}\n")
    problems, summary = validate_path(path)
    assert problems == [] and summary.records == 1


@pytest.mark.parametrize("path", recorded_files(), ids=lambda p: p.name)
def test_recordings_validate_unchanged(path):
    problems, summary = validate_path(path)
    assert problems == []
    assert summary.records == len(read_jsonl(path)) > 0


def _as_conversations(steps):
    by_id = {}
    for step in steps:
        step = dict(step)
        conversation = by_id.setdefault(step.pop("conversationId"), [])
        conversation.append(step)
    return [{"id": cid, "steps": s, "metadata": {}} for cid, s in by_id.items()]


def _as_steps(conversations):
    return [{"conversationId": c["id"], **step} for c in conversations for step in c["steps"]]


@pytest.mark.parametrize("path", recorded_files(), ids=lambda p: p.name)
def test_recordings_validate_in_the_other_line_style(tmp_path, path):
    records = read_jsonl(path)
    other = _as_steps(records) if "steps" in records[0] else _as_conversations(records)
    problems, summary = validate_path(write_jsonl(tmp_path / "other.jsonl", other))
    assert problems == [] and summary.records == len(other)


def test_legacy_shapes_are_warnings_naming_their_migrations(tmp_path):
    for recording in recorded_files():
        if "steps" not in read_jsonl(recording)[0]:
            write_jsonl(tmp_path / recording.name, [to_legacy(s) for s in read_jsonl(recording)])
    problems, summary = validate_path(tmp_path)
    assert summary.errors == 0 and summary.files == 4
    names = {p.hint.split("migration ")[1].rstrip(")") for p in problems}
    assert names == {"0001_step_output_array", "0002_ai_sdk5_parts"}
    assert all(p.severity == "warning" and "legacy shape" in p.message for p in problems)


def test_tests_era_spellings_are_valid_in_their_own_era(repo):
    # `tests` / `input` / `criteria` / `expected_output` are AgentV v3-v4.42's own keys, not a
    # legacy spelling of v2's: the file is checked against its own era's schema.
    path = repo / "tests-era.yaml"
    path.write_text("tests:\n  - id: a\n    criteria: says hi\n    input: hello\n    expected_output: hi\n")
    assert validate_path(path)[0] == []


def test_older_spellings_within_an_era_are_read(repo):
    path = repo / "old.yaml"
    path.write_text("eval_cases:\n  - id: a\n    outcome: says hi\n    input_messages: [{role: user, content: hi}]\n")
    problems, _ = validate_path(path)
    assert [p.severity for p in problems] == ["warning"]
    assert "0003_eval_file_spellings" in problems[0].hint and problems[0].line == 1


def _eval_file(repo, body: str, name="e.yaml"):
    path = repo / name
    path.write_text(textwrap.dedent(body))
    return path


def _eval_file_with_segments(repo, segments: list[str], name="e.yaml"):
    """An eval file of one case whose user message holds these segments, from line 7 on."""
    head = "evalcases:\n  - id: a\n    outcome: x\n    input_messages:\n      - role: user\n        content:\n"
    return _eval_file(repo, head + "".join(f"          - {segment}\n" for segment in segments), name)


def test_duplicate_case_id_names_the_first_line(repo):
    path = _eval_file(repo, """\
        evalcases:
          - id: a
            outcome: x
            input_messages: [{role: user, content: hi}]
          - id: a
            outcome: y
            input_messages: [{role: user, content: ho}]
    """)
    [problem] = validate_path(path)[0]
    assert (problem.line, problem.path) == (5, "$.evalcases[1].id")
    assert "duplicate case id 'a'" in problem.message and "line 2" in problem.hint


def test_misspelt_key_gets_did_you_mean(repo):
    path = _eval_file(repo, """\
        evalcases:
          - id: a
            outcom: x
            input_messages: [{role: user, content: hi}]
    """)
    [problem] = validate_path(path)[0]  # one problem: the missing 'outcome' is the same fault
    assert problem.message == "unknown key 'outcom'" and problem.line == 3
    assert problem.hint == "did you mean 'outcome'?"


def test_misspelt_required_key_in_a_recording_stays_an_error():
    step = _step(0, [])
    step["stepindex"] = step.pop("stepIndex")
    problems = {(p.severity, p.message, p.hint) for p in validate_record(step)}
    assert ("error", "missing required key 'stepIndex'", "is 'stepindex' a misspelling of it?") in problems


def test_wrong_role_and_string_for_list(repo):
    path = _eval_file(repo, """\
        evalcases:
          - id: a
            outcome: x
            input_messages:
              - role: human
                content: hi
          - id: b
            outcome: x
            input_messages: just a string
    """)
    problems = validate_path(path)[0]
    by_path = {p.path: p for p in problems}
    role = by_path["$.evalcases[0].input_messages[0].role"]
    assert role.line == 5 and '"human" is not one of' in role.message and role.hint == 'use "user"'
    string = by_path["$.evalcases[1].input_messages"]
    assert string.line == 9 and "expected array, got string" in string.message


def test_file_references_missing_and_outside_the_root(repo):
    (repo / "evals").mkdir()
    (repo / "shared.md").write_text("found in a parent folder")
    outside = repo.parent / "outside-secret.md"
    outside.write_text("secret")
    os.symlink(outside, repo / "evals" / "link.md")
    files = ["shared.md", "/shared.md", "missing.md", "../../outside-secret.md", "link.md"]
    path = _eval_file_with_segments(repo, [f"{{type: file, value: {f}}}" for f in files], name="evals/e.yaml")
    problems = validate_path(path)[0]
    assert [p.line for p in problems] == [9, 10, 11]
    assert "not found" in problems[0].message and str(repo / "evals") in problems[0].message
    assert all("resolves outside the repository root" in p.message for p in problems[1:])
    assert validate_path(path, allow_outside_root=True)[0][1:] == []


def test_unknown_evaluator_type_is_a_warning(repo):
    path = _eval_file(repo, """\
        execution:
          evaluators:
            - {name: custom, type: rubric, rubric_file: r.md}
        evalcases:
          - {id: a, outcome: x, input_messages: [{role: user, content: hi}]}
    """)
    [problem] = validate_path(path)[0]
    assert problem.severity == "warning" and "unknown evaluator type 'rubric'" in problem.message


def _step(index, output, conversation="c1"):
    return {"conversationId": conversation, "stepIndex": index,
            "input": {"role": "user", "content": "go"}, "output": output}


def _call(call_id):
    return {"role": "assistant", "content": [
        {"type": "tool-call", "toolCallId": call_id, "toolName": "t", "input": {}}]}


def _result(call_id):
    return {"role": "tool", "content": [{"type": "tool-result", "toolCallId": call_id, "toolName": "t",
                                         "output": {"type": "text", "value": "ok"}}]}


def test_tool_pairing_across_steps(tmp_path):
    path = write_jsonl(tmp_path / "r.jsonl", [
        _step(0, [_call("a")]),
        _step(1, [_result("a"), _call("b"), _call("b")]),    # answered a step later; b twice
        _step(2, [_result("zzz")]),                          # answers nothing
        _step(0, [_result("a")], conversation="c2"),         # a belongs to another conversation
    ])
    problems = validate_path(path)[0]
    summary = sorted((p.line, p.severity, p.message) for p in problems)
    assert summary == [
        (2, "warning", "duplicate toolCallId 'b'"),
        (2, "warning", "tool-call 'b' is never answered"),
        (3, "error", "tool-result 'zzz' answers no earlier tool-call"),
        (4, "error", "tool-result 'a' answers no earlier tool-call"),
    ]


def test_tool_pairing_within_a_conversation_record(tmp_path):
    # The record's text is looked at once for tool parts: those of any step are all found.
    steps = [{k: v for k, v in _step(i, []).items() if k != "conversationId"} for i in range(50)]
    steps[3]["output"], steps[40]["output"] = [_call("a"), _call("b")], [_result("b"), _result("zzz")]
    quiet = [{k: v for k, v in _step(i, []).items() if k != "conversationId"} for i in range(50)]
    path = write_jsonl(tmp_path / "r.jsonl", [{"id": "x", "steps": steps}, {"id": "y", "steps": quiet}])
    problems = validate_path(path)[0]
    assert [(p.line, p.path, p.message) for p in problems] == [
        (1, "$.steps[3].output[0].content[0].toolCallId", "tool-call 'a' is never answered"),
        (1, "$.steps[40].output[1].content[0].toolCallId", "tool-result 'zzz' answers no earlier tool-call"),
    ]


def test_step_index_must_increase(tmp_path):
    path = write_jsonl(tmp_path / "r.jsonl", [_step(0, []), _step(2, []), _step(1, [])])
    [problem] = validate_path(path)[0]
    assert problem.line == 3 and "stepIndex 1 does not follow 2" in problem.message


def test_unknown_key_in_a_recording_is_a_warning_and_kept(tmp_path):
    step = _step(0, [{"role": "assistant", "content": "hi", "extra": 1}])
    step["note"] = "kept"
    problems = validate_record(step)
    assert sorted(p.path for p in problems) == ["$.note", "$.output[0].extra"]
    assert all(p.severity == "warning" and "kept" in p.message for p in problems)
    assert step["note"] == "kept" and step["output"][0]["extra"] == 1


def test_tool_part_in_a_user_message_is_an_error():
    step = _step(0, [])
    step["input"] = {"role": "user", "content": [{"type": "tool-call", "toolCallId": "x", "toolName": "t",
                                                  "input": {}}]}
    [problem] = validate_record(step)
    assert problem.path == "$.input.content[0].type" and '"tool-call" is not one of' in problem.message


@pytest.mark.parametrize("data, kind", [
    ({"evalcases": []}, "eval-file"),
    ({"tests": []}, "eval-file"),
    ({"id": "c", "steps": []}, "conversation"),
    ({"stepIndex": 0}, "step-record"),
    ({"question": "q"}, "provider-request"),
    ({"guideline_patterns": ["*.md"]}, "config"),
    ([{"role": "user", "content": "hi"}], "chat-prompt"),
    ({"name": "x"}, None),
])
def test_detect_kind(data, kind):
    assert detect_kind(data) == kind


def test_config_detected_by_name():
    assert detect_kind({}, ".agentv/config.yaml") == "config"
    assert detect_kind({}, "sub/chatconv.yaml") == "config"


# ---------------------------------------------------------------------------------------------
# Hostile input: deep, large or odd values, odd files


def test_a_deeply_nested_invalid_record_is_one_problem(tmp_path):
    deep = "[" * 1000 + '{"bad": 1}' + "]" * 1000
    step = '{"stepIndex": 0, "input": {"role": "user", "content": %s}, "output": []}' % deep
    conversation = '{"id": "c", "steps": [%s]}' % step
    path = tmp_path / "deep.jsonl"
    path.write_text(f"{step}\n{conversation}\n")
    problems, summary = validate_path(path)
    assert [(p.line, p.path) for p in problems] == [(1, "$"), (2, "$")] and summary.errors == 2
    assert all("nested too deeply to explain" in p.message for p in problems)


def test_values_in_messages_are_json_and_short():
    deep = {"a": None}
    for _ in range(50):
        deep = [deep]
    step = _step(True, [{"role": "assistant", "content": {"a": None, "b": True}},
                        {"role": "assistant", "content": None},
                        {"role": "assistant", "content": deep},
                        {"role": "assistant", "content": 7}])
    step["input"]["content"] = {"text": "x" * 1_000_000}
    messages = {p.path: p.message for p in validate_record(step)}
    assert messages == {
        "$.stepIndex": "expected integer, got boolean true",
        "$.output[0].content": 'expected string or array, got object {"a": null, "b": true}',
        "$.output[1].content": "expected string or array, got null",
        "$.output[2].content[0]": 'expected object, got array [[[...]]]',
        "$.output[3].content": "expected string or array, got integer 7",
        "$.input.content": 'expected string or array, got object {"text": "' + "x" * 47 + "...",
    }


def test_bad_guideline_globs_in_eval_and_config_files(repo):
    _eval_file(repo, """\
        guideline_patterns:
          - "**/*.md"
          - /docs/*.md
          - "[abc"
        evalcases:
          - {id: a, outcome: x, input_messages: [{role: user, content: hi}]}
    """)
    (repo / ".agentv").mkdir()
    (repo / ".agentv" / "config.yaml").write_text('guideline_patterns:\n  - "docs/[a-z.md"\n')
    problems, summary = validate_path(repo)
    assert [(p.file, p.line, p.path) for p in problems] == [
        (str(repo / "e.yaml"), 3, "$.guideline_patterns[1]"),
        (str(repo / "e.yaml"), 4, "$.guideline_patterns[2]"),
        (str(repo / ".agentv" / "config.yaml"), 2, "$.guideline_patterns[0]"),
    ]
    assert problems[0].message == 'bad glob "/docs/*.md": patterns match paths relative to the ' \
                                  "repository root; drop the leading '/'"
    assert all("unclosed '['" in p.message for p in problems[1:]) and summary.errors == 3


def test_referenced_files_must_be_utf8_files(repo):
    (repo / "adir").mkdir()
    (repo / "utf16.md").write_bytes("hi".encode("utf-16"))
    (repo / "latin1.md").write_bytes("café".encode("latin-1"))
    (repo / "binary.md").write_bytes(bytes(range(256)))
    (repo / "fine.md").write_text("fine")
    files = ["adir", "utf16.md", "latin1.md", "binary.md", "fine.md"]
    path = _eval_file_with_segments(repo, [f"{{type: file, value: {f}}}" for f in files])
    problems = validate_path(path)[0]
    assert [p.line for p in problems] == [7, 8, 9, 10]
    assert problems[0].message == f"file 'adir' is a folder: {repo / 'adir'}"
    assert all("is not UTF-8" in p.message and p.hint == "save the file as UTF-8" for p in problems[1:])


def test_prompt_refuses_a_file_of_several_records(tmp_path):
    lines = b'{"evalcases": []}\n' * 3
    path = tmp_path / "cases.jsonl"
    path.write_bytes(lines)
    with pytest.raises(ChatconvError) as raised:
        load_eval_file(path)
    [problem] = raised.value.problems
    assert problem.message == f"prompt takes one eval file (YAML or JSON); {path} holds 3 records"
    from_stdin = run_chatconv("prompt", "-", stdin=lines)
    assert from_stdin.returncode == 1 and from_stdin.stdout == b""
    assert "standard input holds 3 records" in from_stdin.stderr_text


def test_folders_give_only_regular_files(tmp_path):
    write_jsonl(tmp_path / "steps.jsonl", [_step(0, [])])
    os.mkfifo(tmp_path / "pipe.jsonl")  # reading it would wait for a writer forever
    assert list(discover([tmp_path])) == [(str(tmp_path / "steps.jsonl"), False)]


# ---------------------------------------------------------------------------------------------
# A folder's file, named long file references, integers beyond 64 bits, legacy positions


def test_a_folder_file_is_not_ours_only_when_its_first_record_is_not(tmp_path):
    foreign = {"foo": 1}
    write_jsonl(tmp_path / "mixed.jsonl", [_step(0, []), foreign, dict(_step(1, []), input={"role": "human",
                                                                                             "content": "x"})])
    write_jsonl(tmp_path / "theirs.jsonl", [foreign, _step(0, []), {"bar": 2}])
    problems, summary = validate_path(tmp_path)
    assert [(os.path.basename(p.file), p.line, p.message) for p in problems] == [
        ("mixed.jsonl", 2, "cannot tell what kind of record this is"),
        ("mixed.jsonl", 3, '"human" is not one of: system, user, assistant, tool'),
    ]
    assert problems[0].column == 1 and problems[0].path == "$" and "--kind" in problems[0].hint
    assert (summary.files, summary.records, summary.skipped, summary.errors) == (1, 3, 1, 2)
    assert validate_path(tmp_path / "mixed.jsonl", skip_unknown=True)[0] == problems


def _long_reference(repo, value="x" * 300):
    return _eval_file_with_segments(repo, ["{type: text, value: hi}", f"{{type: file, value: {value}}}"])


def test_a_file_name_too_long_is_a_problem_at_the_segment(repo):
    path = _long_reference(repo)
    [problem] = validate_path(path)[0]
    assert (problem.line, problem.column, problem.path) == (8, 26, "$.evalcases[0].input_messages[0].content[1].value")
    assert problem.message == f"file '{'x' * 77}...' cannot be looked up: file name too long"
    assert "255 bytes" in problem.hint
    with pytest.raises(ChatconvError) as raised:
        load_eval_file(path)
    assert [p.message for p in raised.value.problems] == [problem.message]
    result = run_chatconv("prompt", path)
    assert result.returncode == 1 and result.stdout == b"" and "Traceback" not in result.stderr_text
    assert f"{path}:8:26: error:" in result.stderr_text and "file name too long" in result.stderr_text


@pytest.mark.parametrize("value", ["/" + "x" * 300, "a/" * 2100 + "b", "x" * 300 + "/b.md"],
                         ids=["from-root", "path-too-long", "folder-too-long"])
def test_any_reference_the_file_system_refuses_is_a_file_reference_error(repo, value):
    with pytest.raises(FileReferenceError) as raised:
        resolve_reference(value, repo, repo)
    assert "cannot be looked up: file name too long" in raised.value.message


BIG = 123456789012345678901234567890


@pytest.mark.parametrize("suffix", [".jsonl", ".json"])
def test_integers_beyond_64_bits_are_shown_by_their_digits(tmp_path, suffix):
    step = _step(0, [])
    step["stepIndex"] = -BIG
    step["input"]["content"] = BIG
    step["output"] = [{"role": BIG * 10, "content": "x"}]
    path = tmp_path / f"r{suffix}"
    path.write_text(json.dumps(step) + "\n")
    messages = {p.path: p.message for p in validate_path(path)[0]}
    assert messages == {
        "$.stepIndex": f"-{BIG} (an integer beyond 64 bits) is less than the minimum 0",
        "$.input.content": f"expected string or array, got integer {BIG} (beyond 64 bits)",
        "$.output[0].role": f"{BIG * 10} (an integer beyond 64 bits) is not one of: system, user, assistant, tool",
    }


def test_integers_beyond_64_bits_that_read_alike_are_not_told_apart(tmp_path):
    step = _step(0, [{"role": "assistant", "content": BIG + 1}])
    step["input"]["content"] = BIG  # the same float as BIG + 1: which digits are meant is unsure
    path = tmp_path / "r.jsonl"
    path.write_text(json.dumps(step) + "\n")
    messages = [p.message for p in validate_path(path)[0]]
    assert messages == ["expected string or array, got number 1.2345678901234568e+29"] * 2


def test_a_float_that_is_no_integer_beyond_64_bits_stays_a_number(tmp_path):
    path = tmp_path / "r.jsonl"
    path.write_text('{"stepIndex": 0, "input": {"role": "user", "content": 1.5e30}, "output": []}\n')
    [problem] = validate_path(path)[0]
    assert problem.message == "expected string or array, got number 1.5e+30"


TESTS_ERA_FILE = """\
tests:
  - id: a
    input: hi
    criteria: c
    outcom: x
  - id: b
    input:
      - role: human
        content: hi
    criteria: c
"""


def test_problems_in_a_tests_era_file_point_at_its_text(repo):
    path = repo / "tests-era.yaml"
    path.write_text(TESTS_ERA_FILE)
    problems = validate_path(path)[0]
    # The file's own paths (never v2's `evalcases` / `input_messages`), in line order.
    assert [(p.line, p.column, p.severity, p.path) for p in problems] == [
        (5, 5, "warning", "$.tests[0].outcom"),  # AgentV ignores a key it does not know
        (8, 9, "error", "$.tests[1].input[0].role"),
    ]
    assert problems[-1].hint == 'use "user"'


def test_problems_in_a_legacy_json_eval_file_point_at_its_text(repo):
    data = {"cases": [{"id": "a", "criteria": "c", "input": "hi", "outcom": "x"},
                      {"id": "b", "expected_outcome": "c", "input": [{"role": "user", "content": "hi"}],
                       "expected_output": [{"content": "there"}]}]}
    path = repo / "old.json"
    path.write_text(json.dumps(data, indent=2))
    text = path.read_text().splitlines()
    problems = {p.path: (p.line, p.column) for p in validate_path(path)[0]}

    def spot(line_text):  # the line and column of the first line holding `line_text`
        line = next(i for i, t in enumerate(text) if line_text in t)
        return line + 1, text[line].index(line_text) + 1

    assert problems == {
        "$.cases": spot('"cases"'),
        "$.evalcases[0].outcom": spot('"outcom"'),
        "$.evalcases[1].expected_messages[0]": (spot('"expected_output"')[0] + 1, 9),  # its "{"
    }
    assert text[problems["$.evalcases[1].expected_messages[0]"][0] - 1] == "        {"


def test_a_wrapped_string_is_located_at_its_original_key(repo):
    data = {"evalcases": [{"id": "a", "criteria": "c", "input": "hi", "expected_output": "there"}]}
    record = Record("e.json", 1, data, text=json.dumps(data, indent=1).encode())
    check_schema(record, "eval-file")
    text = record.text.decode().splitlines()
    for new, old in [(("evalcases", 0, "input_messages"), '"input"'),
                     (("evalcases", 0, "input_messages", 0, "content"), '"input"'),
                     (("evalcases", 0, "expected_messages"), '"expected_output"'),
                     (("evalcases", 0, "outcome"), '"criteria"'),
                     (("evalcases", 0, "id"), '"id"')]:
        line = next(i for i, t in enumerate(text) if old in t)
        assert record.locate(new) == (line + 1, text[line].index(old) + 1), new


def test_a_legacy_step_is_located_in_its_line(tmp_path):
    step = {"stepIndex": 0, "input": {"role": "user", "content": "go"},
            "output": {"role": "assistant", "colour": "red", "content": [
                {"type": "tool-call", "toolCallId": "t1", "toolName": "x", "args": {}}]}}
    path = write_jsonl(tmp_path / "r.jsonl", [step])
    line = path.read_text()
    problems = validate_path(path)[0]
    assert {(p.path, p.column) for p in problems} == {
        ("$.output", line.index('"output"') + 1),
        ("$.output[0].content[0]", line.index('{"type":"tool-call"') + 1),
        ("$.output[0].colour", line.index('"colour"') + 1),
        ("$.output[0].content[0].toolCallId", line.index('"toolCallId"') + 1),
    }


def test_a_migration_that_trips_on_an_odd_record_leaves_it_to_the_schema(monkeypatch):
    # Migrations see records that failed the schema: whatever one raises, validate explains the
    # record as it was read, with no traceback and no half-upgraded data.
    from chatconv import migrate
    from chatconv.migrate import registry

    def trip(record):
        record["stepIndex"] = "half-done"
        raise KeyError("odd")

    tripping = migrate.Migration("9999_trips", "trips", ("step-record",), lambda record: (), trip)
    for module in (migrate, registry):  # where validate and the migrate package look them up
        monkeypatch.setattr(module, "migrations_for", lambda kind: (tripping,))
    problems = validate_record({"stepIndex": 0, "input": {"role": "human", "content": "x"}, "output": []})
    assert [p.path for p in problems] == ["$.input.role"] and '"human" is not one of' in problems[0].message
def test_late_v2_spellings_are_read_within_v2(repo):
    path = repo / "old.yaml"
    path.write_text("evalcases:\n  - id: a\n    criteria: says hi\n    input: hello\n    expected_output: hi\n")
    problems, _ = validate_path(path)
    assert [p.severity for p in problems] == ["warning"]
    assert "0003_eval_file_spellings" in problems[0].hint and problems[0].line == 2  # the first case


LEGACY_EVAL_FILE = """\
evalcases:
  - id: a
    input: hi
    criteria: c
    outcom: x
  - id: a
    input:
      - role: human
        content: hi
    criteria: c
"""


def test_problems_in_a_legacy_eval_file_point_at_its_text(repo):
    path = repo / "old.yaml"
    path.write_text(LEGACY_EVAL_FILE)
    problems = validate_path(path)[0]
    assert [(p.line, p.column, p.severity, p.path) for p in problems] == [
        (2, 5, "warning", "$.evalcases[0]"),  # late-v2 spellings, read within v2
        (5, 5, "warning", "$.evalcases[0].outcom"),  # AgentV ignores a key it does not know
        (6, 5, "error", "$.evalcases[1].id"),
        (8, 9, "error", "$.evalcases[1].input_messages[0].role"),
    ]
    assert problems[2].hint == "ids must be unique in a file; first used on line 2"


