"""`chatconv prompt --form seed` (chatconv's own form of a prompt) as a user runs it: outputs per
target, and bad input without tracebacks. AgentV's form, the default, is checked against AgentV's
own prompt builder in tests/test_agentv_prompts.py."""

from __future__ import annotations

import json
import os

import pytest

from conftest import REPO, run_chatconv

MULTI = REPO / "examples" / "evals" / "multi-turn.yaml"


def lines(result):
    return [json.loads(line) for line in result.stdout_text.splitlines()]


def test_raw_output_of_the_examples():
    result = run_chatconv("prompt", "--form", "seed", MULTI)
    assert result.returncode == 0, result.stderr_text
    [case] = lines(result)
    assert case["id"] == "debug-off-by-one" and case["guidelines"] == ""
    assert case["chat_prompt"] == [
        {"role": "system", "content": "Answer in at most three sentences."},
        {"role": "user", "content": "My loop skips the last item of the list."},
        {"role": "assistant", "content": "Can you show me the loop?"},
        {"role": "user", "content": "for i in range(len(items) - 1): print(items[i])"}]
    assert case["question"].startswith("[System]: Answer in at most three sentences.\n[User]: My loop")


def test_guidelines_come_from_the_config_of_the_examples():
    result = run_chatconv("prompt", "--form", "seed", REPO / "examples" / "evals" / "code-review.yaml", "--target", "anthropic")
    [case] = lines(result)
    system = case["request"]["system"]
    assert system.startswith("You are a careful assistant.\n\n[[ ## Guidelines ## ]]\n\nPrefer small functions")
    content = case["request"]["messages"][0]["content"]
    assert content.startswith("<Attached: guidelines/python.instructions.md>\nReview this function.\n=== ./files/slugify.py ===")


@pytest.mark.parametrize("target, key", [("openai", "messages"), ("anthropic", "messages"), ("gemini", "contents"),
                                         ("agent", "prompt")])
def test_each_target_gives_a_request_body(target, key):
    [case] = lines(run_chatconv("prompt", "--form", "seed", MULTI, "--target", target))
    assert set(case) == {"id", "request"} and key in case["request"]


def test_cli_patterns_and_default_system_prompt(repo):
    (repo / "rules.md").write_text("Be exact.")
    path = repo / "e.yaml"
    path.write_text("evalcases:\n  - id: c\n    outcome: o\n    input_messages:\n"
                    "      - {role: user, content: [{type: file, value: rules.md}, {type: text, value: hi}]}\n")
    [case] = lines(run_chatconv("prompt", "--form", "seed", path, "--guideline-pattern", "*.md", "--default-system-prompt", "Judge.",
                                "--target", "openai"))
    assert case["request"]["messages"][0] == {"role": "system",
                                              "content": "Judge.\n\n[[ ## Guidelines ## ]]\n\nBe exact."}


def test_case_selection_and_unknown_case():
    assert [c["id"] for c in lines(run_chatconv("prompt", "--form", "seed", MULTI, "--case", "debug-off-by-one"))] == ["debug-off-by-one"]
    result = run_chatconv("prompt", "--form", "seed", MULTI, "--case", "nope")
    assert result.returncode == 2 and "no case 'nope'" in result.stderr_text and "debug-off-by-one" in result.stderr_text


def _eval(repo, content_yaml):
    path = repo / "e.yaml"
    path.write_text("evalcases:\n  - id: c\n    outcome: o\n    input_messages:\n" + content_yaml)
    return path


BAD = {
    "missing file": ("      - {role: user, content: [{type: file, value: gone.md}]}\n", [], 1,
                     "e.yaml:5:45: error: $.evalcases[0].input_messages[0].content[0].value: file 'gone.md' not found"),
    "file outside the root": ("      - {role: user, content: [{type: file, value: ../secret.md}]}\n", [], 1,
                              "resolves outside the repository root"),
    "invalid eval file": ("      - {role: human, content: hi}\n", [], 1, '"human" is not one of'),
    "late system message for anthropic": (
        "      - {role: user, content: a}\n      - {role: system, content: b}\n",
        ["--target", "anthropic", "--system-policy", "keep"], 1,
        "e.yaml:2:5: error: $.evalcases[0]: case 'c': anthropic: a system message after the conversation has started"),
}


@pytest.mark.parametrize("name", list(BAD))
def test_bad_input_gives_one_clear_message(repo, name):
    content, options, status, expected = BAD[name]
    (repo.parent / "secret.md").write_text("secret")
    result = run_chatconv("prompt", "--form", "seed", _eval(repo, content), *options)
    assert result.returncode == status
    assert result.stdout_text == ""
    [message] = result.stderr_text.splitlines()
    assert expected in message


@pytest.mark.parametrize("pattern, reason", [("docs/[a.md", "an unclosed '[' in the pattern"),
                                              ("/docs/*.md", "patterns match paths relative to the repository root")])
def test_a_bad_guideline_pattern_option_is_a_usage_error(repo, pattern, reason):
    result = run_chatconv("prompt", "--form", "seed", _eval(repo, "      - {role: user, content: hi}\n"), "--guideline-pattern", pattern)
    assert result.returncode == 2 and result.stdout_text == ""
    assert f"Error: Invalid value for '--guideline-pattern': bad glob '{pattern}': {reason}" in result.stderr_text


def test_unreadable_config_is_named(repo):
    (repo / "chatconv.yaml").write_bytes(b"guideline_patterns: [\n")
    result = run_chatconv("prompt", "--form", "seed", _eval(repo, "      - {role: user, content: hi}\n"))
    assert result.returncode == 1 and "chatconv.yaml:2:1: error: $: invalid YAML" in result.stderr_text


CONFIG_PROBLEMS = {
    # name: (config text, prompt's exit status, the code validate gives the config's problem)
    "unsupported tag": ('guideline_patterns: !!python/object:os.system ["*.md"]\n', 1, "unsupported-yaml-tag"),
    "repeated key": ('guideline_patterns: ["*.md"]\nguideline_patterns: ["*.txt"]\n', 1, "duplicate-key"),
    "unknown key": ('guideline_patterns: ["*.md"]\nbogus: 1\n', 0, "unknown-config-key"),
}


@pytest.mark.parametrize("name", list(CONFIG_PROBLEMS))
def test_prompt_honours_the_config_problems_validate_reports(repo, name):
    # What `chatconv validate chatconv.yaml` says of the config, prompt says on standard error,
    # line for line: its errors stop prompt (exit 1, nothing written), its warnings do not.
    text, status, code = CONFIG_PROBLEMS[name]
    config = repo / "chatconv.yaml"
    config.write_text(text)
    (repo / "rules.md").write_text("Be exact.")
    path = _eval(repo, "      - {role: user, content: [{type: file, value: rules.md}, {type: text, value: hi}]}\n")
    validated = run_chatconv("validate", config)
    reported = [line for line in validated.stdout_text.splitlines() if line.startswith(str(config))]
    assert reported and f"{code} ({'error' if status else 'warning'})" in validated.stdout_text
    result = run_chatconv("prompt", "--form", "seed", path)
    assert result.returncode == status
    assert result.stderr_text.splitlines() == reported
    if status:
        assert result.stdout_text == ""
    else:  # the config's patterns are used: rules.md is a guideline
        assert lines(result)[0]["guidelines"] == "Be exact."


@pytest.mark.parametrize("name", ["pipe.md", "null.md"])
def test_a_pipe_or_a_device_referenced_is_named_as_such_not_opened(repo, name):
    # Neither is opened (a pipe without a writer would block); both are there, so not "not found".
    os.mkfifo(repo / "pipe.md")
    (repo / "null.md").symlink_to("/dev/null")
    path = _eval(repo, f"      - {{role: user, content: [{{type: file, value: {name}}}, {{type: text, value: hi}}]}}\n")
    message = f"file {name!r} is not a regular file: {repo / name} (name a regular file, not a pipe"
    for command in ("prompt", "validate"):
        result = run_chatconv(command, path)
        assert result.returncode == 1 and message in result.stderr_text + result.stdout_text


def test_missing_eval_file_is_exit_2(tmp_path):
    result = run_chatconv("prompt", "--form", "seed", tmp_path / "nope.yaml")
    assert result.returncode == 2 and "no such file" in result.stderr_text


def test_tests_era_files_build_the_prompts_of_their_v2_spelling(repo):
    # `tests` / `input` / `criteria` is AgentV's own later spelling (the tests era), not an old
    # one: it is read as written, with no warning, and builds the prompt its v2 spelling builds.
    later = repo / "later.yaml"
    later.write_text("tests:\n  - id: c\n    criteria: o\n    input: Hello\n")
    v2 = repo / "v2.yaml"
    v2.write_text("evalcases:\n  - id: c\n    outcome: o\n    input_messages: [{role: user, content: Hello}]\n")
    result = run_chatconv("prompt", "--form", "seed", later)
    assert lines(result) == [{"id": "c", "question": "Hello", "guidelines": "", "chat_prompt": None}]
    assert lines(result) == lines(run_chatconv("prompt", "--form", "seed", v2))
    assert result.stderr_text == ""


def test_older_spellings_work_as_read(repo):
    path = repo / "old.yaml"
    path.write_text("evalcases:\n  - id: c\n    criteria: o\n    input: Hello\n")  # late v2, read within v2
    result = run_chatconv("prompt", "--form", "seed", path)
    assert lines(result) == [{"id": "c", "question": "Hello", "guidelines": "", "chat_prompt": None}]
    assert "0003_eval_file_spellings" in result.stderr_text  # the warning names the migration


def test_a_provider_rule_names_the_case_file_a_case_is_written_in(repo):
    (repo / "cases.yaml").write_text("- id: late\n  criteria: c\n  input:\n    - {role: user, content: hi}\n"
                                     "    - {role: assistant, content: yo}\n    - {role: system, content: late}\n")
    (repo / "e.yaml").write_text("tests: ./cases.yaml\n")
    result = run_chatconv("prompt", "--form", "seed", "--target", "anthropic", "--system-policy", "keep", repo / "e.yaml")
    assert result.returncode == 1
    assert result.stderr_text.startswith(f"{repo / 'cases.yaml'}:1:3: error: $[0]: case 'late': anthropic:")


def test_an_unknown_case_lists_each_id_once(repo):
    (repo / "e.yaml").write_text("prompts: ['{{ a }}']\nassert: [{type: contains, value: p}]\n"
                                 "tests: [{id: x, vars: {a: [p, q, r]}}, {id: y, vars: {a: s}}]\n")
    result = run_chatconv("prompt", "--form", "seed", "--case", "z", repo / "e.yaml")
    assert result.returncode == 2 and "its cases: x, y" in result.stderr_text
