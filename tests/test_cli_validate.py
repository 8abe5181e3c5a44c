"""`chatconv validate` as a user runs it: the gallery of bad input, formats, exit codes."""

from __future__ import annotations

import json

import pytest

from conftest import REPO, RECORDED, run_chatconv

CASE = "evalcases:\n  - id: a\n    outcome: x\n    input_messages:\n"
ALIAS_BOMB = "a: &a [x,x,x,x,x,x,x,x,x]\n" + "".join(
    f"{n}: &{n} [" + ",".join([f"*{p}"] * 9) + "]\n" for n, p in zip("bcdefgh", "abcdefg"))
STEP = '{"stepIndex":0,"input":{"role":"user","content":"x"},"output":[%s]}\n'
ORPHAN = '{"role":"tool","content":[{"type":"tool-result","toolCallId":"z","toolName":"t","output":{"type":"text","value":"v"}}]}'

# name: (file name, content, exit status, line, text that names the field or fault)
GALLERY = {
    "misspelt key": ("e.yaml", "evalcases:\n  - id: a\n    outcome: x\n    input_mesages: []\n",
                     1, 4, "$.evalcases[0].input_mesages: unknown key 'input_mesages' (did you mean 'input_messages'?)"),
    # AgentV refuses an unknown key in the current era (before it, it ignores one: a warning)
    "unknown key": ("e.yaml", "colour: red\nprompts: ['{{ q }}']\ntests: [{id: a, vars: {q: hi}, assert: []}]\n", 1, 1,
                    "$.colour: unknown key 'colour'"),
    "wrong role": ("e.yaml", CASE + "      - role: human\n        content: hi\n", 1, 5,
                   '$.evalcases[0].input_messages[0].role: "human" is not one of'),
    "string for a list": ("e.yaml", "evalcases:\n  - id: a\n    outcome: x\n    input_messages: hi\n", 1, 4,
                          "$.evalcases[0].input_messages: expected array, got string"),
    "broken YAML": ("e.yaml", "evalcases:\n  - id: a\n   outcome: [x\n", 1, 3, "invalid YAML"),
    "alias bomb": ("e.yaml", ALIAS_BOMB, 1, None, "YAML aliases expand to more than"),
    "truncated JSONL line": ("r.jsonl", STEP % "" + STEP[:40], 1, 2, "invalid JSON: unexpected end of data"),
    "invalid UTF-8": ("e.yaml", (CASE + "      - {role: user, content: caf\xe9}\n").encode("latin-1"), 1, 5,
                      "invalid UTF-8 byte 0xe9"),
    "empty file": ("e.yaml", "", 1, 1, "the file is empty"),
    "duplicate id": ("e.yaml", CASE + "      - {role: user, content: hi}\n  - id: a\n    outcome: y\n"
                     "    input_messages: [{role: user, content: ho}]\n", 1, 6, "$.evalcases[1].id: duplicate case id 'a'"),
    "tool-result with no call": ("r.jsonl", STEP % ORPHAN, 1, 1,
                                 "$.output[0].content[0].toolCallId: tool-result 'z' answers no earlier tool-call"),
    "missing referenced file": ("e.yaml", CASE + "      - role: user\n        content:\n          - {type: file, value: gone.md}\n",
                                1, 7, "file 'gone.md' not found; looked in:"),
    "file reference escaping the root": ("e.yaml", CASE + "      - role: user\n        content:\n"
                                         "          - {type: file, value: ../outside.md}\n",
                                         1, 7, "resolves outside the repository root"),
    "file name too long": ("e.yaml", CASE + "      - role: user\n        content:\n"
                           "          - {type: file, value: " + "x" * 300 + "}\n",
                           1, 7, "cannot be looked up: file name too long"),
    "integer beyond 64 bits": ("r.jsonl", STEP.replace('"x"', "123456789012345678901234567890") % "", 1, 1,
                               "$.input.content: expected string or array, got integer "
                               "123456789012345678901234567890 (beyond 64 bits)"),
}


@pytest.mark.parametrize("name", list(GALLERY))
def test_bad_input_gets_one_clear_message(repo, name):
    file_name, content, status, line, expected = GALLERY[name]
    (repo.parent / "outside.md").write_text("outside")
    path = repo / file_name
    path.write_bytes(content.encode() if isinstance(content, str) else content)
    result = run_chatconv("validate", path)
    assert result.returncode == status, result.stdout_text
    *problems, summary, count = result.stdout_text.splitlines()  # the summary, then the count by code
    assert len(problems) == 1, result.stdout_text
    [problem] = problems
    assert "1 error" in summary and count.startswith("  1 × ") and count.endswith(" (error)")
    assert problem.startswith(f"{path}:{line}:" if line else f"{path}:")
    assert ": error: " in problem and expected in problem


def test_missing_file_is_exit_2(tmp_path):
    result = run_chatconv("validate", tmp_path / "nope.yaml")
    assert result.returncode == 2 and "no such file" in result.stdout_text


def test_usage_error_is_exit_2():
    result = run_chatconv("validate", "x.yaml", "--format", "xml")
    assert result.returncode == 2 and "Invalid value for '--format'" in result.stderr_text


def test_valid_examples_and_recordings_exit_0():
    result = run_chatconv("validate", "examples", RECORDED, cwd=REPO)
    assert result.returncode == 0, result.stdout_text
    assert result.stdout_text.splitlines()[-1].startswith("13 files, 62 records: 0 errors, 0 warnings")  # eras/ adds 3


def test_json_format_is_one_object_with_every_problem(repo):
    path = repo / "e.yaml"
    path.write_text(GALLERY["wrong role"][1])
    result = run_chatconv("validate", "--format", "json", path)
    report = json.loads(result.stdout)
    assert result.returncode == 1
    assert (report["files"], report["records"], report["errors"], report["warnings"]) == (1, 1, 1, 0)
    [problem] = report["problems"]
    assert problem == {"file": str(path), "line": 5, "column": 9, "severity": "error",
                       "path": "$.evalcases[0].input_messages[0].role",
                       "message": '"human" is not one of: system, user, assistant', "hint": 'use "user"',
                       "code": "bad-value"}


def test_github_format_is_workflow_annotations(repo):
    path = repo / "e.yaml"
    path.write_text(GALLERY["wrong role"][1])
    result = run_chatconv("validate", "--format", "github", path)
    assert result.stdout_text.startswith(f"::error file={path},line=5,col=9,title=chatconv::$.evalcases[0]")


def test_stdin_jsonl_and_yaml():
    steps = (RECORDED / "weather-steps.jsonl").read_bytes()
    result = run_chatconv("validate", "-", stdin=steps)
    assert result.returncode == 0 and "10 records: 0 errors" in result.stdout_text
    result = run_chatconv("validate", "-", stdin=GALLERY["wrong role"][1].encode())
    assert result.returncode == 1 and result.stdout_text.startswith("-:5:9: error:")


def test_max_errors_stops_early(tmp_path):
    path = tmp_path / "r.jsonl"
    path.write_text("{}\n" * 50)
    result = run_chatconv("validate", "--kind", "step", "--max-errors", "2", path)
    lines = result.stdout_text.splitlines()
    assert result.returncode == 1 and len(lines) == 4 and "stopped early" in lines[2]
    assert lines[3] == "  2 × missing-key (error)"  # the counts are of what was reported


def test_folders_skip_files_that_are_not_chatconv_records(repo):
    (repo / "package.json").write_text('{"name": "x"}')
    (repo / "e.yaml").write_text(CASE + "      - {role: user, content: hi}\n")
    result = run_chatconv("validate", repo)
    assert result.returncode == 0
    assert result.stdout_text.strip() == "1 file, 1 record: 0 errors, 0 warnings (1 skipped: not chatconv records)"
    named = run_chatconv("validate", repo / "package.json")
    assert named.returncode == 1 and "cannot tell what kind of record this is" in named.stdout_text
    assert run_chatconv("validate", "--skip-unknown", repo / "package.json").returncode == 0


MISTYPED_SUITE = "description: x\ntest:\n  - id: a\n    input: hi\n"  # `test` for `tests`: no key tells an era


@pytest.mark.parametrize("name", ["s.eval.yaml", "s.eval.yml", "evals/suite.yaml", "suite.yml", "eval.yaml",
                                  "EVAL.yaml"])
def test_a_folder_never_passes_over_a_file_named_as_an_eval_file(repo, name):
    (repo / name).parent.mkdir(exist_ok=True)
    (repo / name).write_text(MISTYPED_SUITE)
    result = run_chatconv("validate", repo)
    assert result.returncode == 1, result.stdout_text
    assert f"{name}:2:1: error: $.test: unknown key 'test' (did you mean 'tests'?)" in result.stdout_text
    assert f"{name}:1:1: error: $: missing required key" in result.stdout_text
    assert "skipped" not in result.stdout_text


def test_the_files_a_folder_passed_over_are_listed_with_why(repo):
    (repo / "package.json").write_text('{"name": "x"}')
    (repo / "notes.yaml").write_text(MISTYPED_SUITE)  # not named as an eval file: not AgentV's either
    (repo / "ok.eval.yaml").write_text("tests:\n  - id: a\n    criteria: c\n    input: hi\n")
    quiet = run_chatconv("validate", repo)
    assert quiet.returncode == 0 and "package.json" not in quiet.stdout_text
    shown = run_chatconv("validate", "--show-files", repo)
    skipped = [line for line in shown.stdout_text.splitlines() if ": skipped: " in line]
    assert [line.split(": skipped: ")[0] for line in skipped] == [str(repo / "notes.yaml"), str(repo / "package.json")]
    assert all("no key tells an eval file, a config or a recording" in line for line in skipped)
    assert shown.stdout_text.splitlines()[len(skipped)].startswith("1 file, 1 record: 0 errors")  # then the summary
    listed = json.loads(run_chatconv("validate", "--format", "json", repo).stdout_text)["skipped"]
    assert [entry["file"] for entry in listed] == [str(repo / "notes.yaml"), str(repo / "package.json")]
    github = run_chatconv("validate", "--format", "github", "--show-files", repo)
    assert github.stdout_text == "" and f"{repo / 'package.json'}: skipped: " in github.stderr_text


def test_a_folder_file_with_a_later_record_of_unknown_kind_is_invalid(tmp_path):
    """The file is ours (its first record is a step): the unknown record is an error, and the
    records after it are still checked."""
    step = STEP % ""
    (tmp_path / "f.jsonl").write_text(step + '{"foo":1}\n' + step.replace('"user"', '"human"'))
    for args in ([tmp_path], ["--skip-unknown", tmp_path / "f.jsonl"]):
        result = run_chatconv("validate", *args)
        lines = result.stdout_text.splitlines()
        assert result.returncode == 1, result.stdout_text
        assert lines[0].startswith(f"{tmp_path / 'f.jsonl'}:2:1: error: $: cannot tell what kind of record this is")
        assert "--kind" in lines[0] and ':3:' in lines[1] and '"human" is not one of' in lines[1]
        assert lines[2] == "1 file, 3 records: 2 errors, 0 warnings"


def test_schema_command_lists_and_prints():
    listing = run_chatconv("schema")
    assert "eval-file" in listing.stdout_text and "legacy/model-message-v4" in listing.stdout_text
    schema = json.loads(run_chatconv("schema", "conversation-step").stdout)
    assert schema["properties"]["output"]["type"] == "array"
    unknown = run_chatconv("schema", "nope")
    assert unknown.returncode == 2 and "no schema 'nope'" in unknown.stderr_text


@pytest.mark.parametrize("kind", ["eval-tests", "eval-file"])
def test_an_eras_schema_as_kind_gets_every_check_of_an_eval_file(repo, kind):
    # --kind eval-tests forces the tests era, and the checks beyond the schema still run.
    path = repo / "e.yaml"
    path.write_text("tests:\n  - id: a\n    input: hi\n    criteria: c\n  - id: a\n    input: ho\n    criteria: c\n")
    result = run_chatconv("validate", "--kind", kind, str(path))
    assert result.returncode == 1 and "$.tests[1].id: duplicate case id 'a'" in result.stdout_text


def test_an_eras_schema_as_kind_forces_that_era(repo):
    path = repo / "e.yaml"
    path.write_text("prompts: ['{{ input }}']\ntests:\n  - id: a\n    vars: {input: hi}\n    criteria: c\n")
    assert run_chatconv("validate", str(path)).returncode == 0
    result = run_chatconv("validate", "--kind", "eval-tests", str(path))
    assert result.returncode == 1 and "$.prompts: unknown key 'prompts'" in result.stdout_text
    config = repo / ".agentv" / "config.yaml"
    config.parent.mkdir()
    config.write_text("eval_patterns: ['**/*.{1..5000}x']\n")
    result = run_chatconv("validate", "--kind", "config-current", str(config))
    assert result.returncode == 0 and "warning: $.eval_patterns[0]: eval pattern" in result.stdout_text
