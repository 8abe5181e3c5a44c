"""Eval files migrate forward only, one AgentV era at a time (SPEC §1a; issue 10, item 4):
each migration on small files (exact text, comments and quoting kept), `--to ERA`, never back,
refusals that name the key, AgentV's own tests-era example tree, and a property test: the
prompts built from a file are the same before and after, and a second run changes nothing.
"""

from __future__ import annotations

import copy
import json
import os
import re
import shutil
from pathlib import Path

import pytest
import yaml
from conftest import REPO, run_chatconv
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from chatconv.eras import era_of
from chatconv.migrate import (LineRejected, Refused, migrate_document, migrate_lines, migrate_paths, migrate_record,
                              migrations)
from chatconv.sources import discover

# ---------------------------------------------------------------------------------------------
# Each migration on a small file: the exact text written

V1 = """\
# v1 suite
testcases:   # one messages list per case
  - id: greet
    outcome: 'Says hello'
    messages:
      - role: system
        content: Be brief.   # the system prompt
      - role: user
        content: "Hi there"
      # the expected answer follows
      - role: assistant
        content: Hello!
"""

V1_AS_V2 = """\
# v1 suite
evalcases:   # one messages list per case
  - id: greet
    outcome: 'Says hello'
    input_messages:
      - role: system
        content: Be brief.   # the system prompt
      - role: user
        content: "Hi there"
      # the expected answer follows
    expected_messages:
      - role: assistant
        content: Hello!
"""

V2 = """\
$schema: agentv-eval-v2
description: "Review"   # kept
execution:
  target: default
  evaluators:
    - name: judge
      type: llm_judge
      prompt: ./judge.md
evalcases:
  - id: one
    outcome: Names the bug   # the judge reads this
    input_messages:
      - role: user
        content: 'Why does it crash?'   # the question
    expected_messages:
      - role: assistant
        content: It dereferences None.
  - id: two
    outcome: Runs
    input_messages:
      - {role: system, content: Terse.}
      - {role: user, content: Go}
    execution:
      evaluators:
        - {name: check, type: code, script: ./check.py}
"""

# Each comment is kept where it was written (a value that moved keeps its comment): the file is written by spans.
V2_AS_TESTS = """\
$schema: chatconv-eval-tests
description: "Review"   # kept
execution:
  target: default
assertions:
  - name: judge
    type: llm-grader
    prompt: ./judge.md
tests:
  - id: one
    criteria: Names the bug   # the judge reads this
    input: 'Why does it crash?'   # the question
    expected_output:
      - role: assistant
        content: It dereferences None.
  - id: two
    criteria: Runs
    input:
      - {role: system, content: Terse.}
      - {role: user, content: Go}
    assertions:
      - {name: check, type: code-grader, command: ./check.py}
"""

TESTS = """\
description: 'Tests era'
execution:
  target: azure-base   # the default target
  workers: 4
assertions:
  - type: code-grader
    command: [python, check.py]
tests:
  - id: add
    criteria: Adds   # grading text
    input: "What is 15 + 27?"   # a string input
    expected_output: "42"
    assertions:
      - type: contains
        value: "42"
  - id: chat
    criteria: Chats
    input:
      - role: system
        content: Be terse.
      - role: user
        content: Hi
"""

TESTS_AS_CURRENT = """\
description: 'Tests era'
providers:             # the default target
  - azure-base
evaluate_options:
  max_concurrency: 4
assert:
  - type: script
    command: [python, check.py]
prompts:
  - "{{ input }}"
tests:
  - id: add
    vars:
      input: "What is 15 + 27?" # a string input
      expected_output: "42"
    assert:
      - type: contains
        value: "42"
      - Adds         # grading text
  - id: chat
    criteria: Chats
    vars:
      input:
        - role: system
          content: Be terse.
        - role: user
          content: Hi
"""


@pytest.mark.parametrize("before, to, after, applied", [
    (V1, "evalcases", V1_AS_V2, ["0004_testcases_to_evalcases"]),
    (V2, "tests", V2_AS_TESTS, ["0005_evalcases_to_tests"]),
    (TESTS, None, TESTS_AS_CURRENT, ["0006_tests_to_current"]),
], ids=["0004", "0005", "0006"])
def test_each_era_step_writes_the_next_era_keeping_comments_and_quoting(before, to, after, applied):
    result = migrate_document(before.encode(), "e.yaml", "yaml", to_era=to)
    assert result.data.decode() == after
    assert list(result.tally.by_migration) == applied
    assert era_of(yaml.safe_load(after)).NAME == (to or "current")
    again = migrate_document(result.data, "e.yaml", "yaml", to_era=to)
    assert again.data == result.data and again.tally.unchanged == 1


def test_a_v1_file_goes_through_every_era_in_one_run():
    result = migrate_document(V1.encode(), "e.yaml", "yaml")
    assert list(result.tally.by_migration) == [
        "0004_testcases_to_evalcases", "0005_evalcases_to_tests", "0006_tests_to_current"]
    assert yaml.safe_load(result.data) == {
        "prompts": ["{{ input }}"],
        "tests": [{"id": "greet", "criteria": "Says hello", "vars": {
            "input": [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Hi there"}],
            "expected_output": [{"role": "assistant", "content": "Hello!"}]}}]}
    assert "# the system prompt" in result.data.decode() and "# v1 suite" in result.data.decode()


def test_in_era_spellings_of_v2_are_fixed_before_the_move_out_of_it():
    record, applied = migrate_record({"eval_cases": [{"id": "a", "expected_outcome": "ok", "input": "hi"}]})
    assert applied == ["0003_eval_file_spellings", "0005_evalcases_to_tests", "0006_tests_to_current"]
    assert record == {"prompts": ["{{ input }}"], "tests": [{"id": "a", "criteria": "ok", "vars": {"input": "hi"}}]}


def test_0003_never_touches_a_file_of_another_era():
    tests_era = {"tests": [{"id": "a", "criteria": "c", "input": "hi", "expected_output": "yo"}]}
    assert migrate_record(json.loads(json.dumps(tests_era)), to_era="evalcases") == (tests_era, [])
    assert migrate_record(json.loads(json.dumps(tests_era)), to_era="tests") == (tests_era, [])


def test_nothing_is_moved_back_into_an_older_era():
    current = {"prompts": ["{{ input }}"], "tests": [{"id": "a", "vars": {"input": "hi"}}]}
    for era in ("testcases", "evalcases", "tests", "current"):
        assert migrate_record(json.loads(json.dumps(current)), to_era=era) == (current, [])
    v2 = {"evalcases": [{"id": "a", "outcome": "o", "input_messages": [{"role": "user", "content": "hi"}]}]}
    assert migrate_record(json.loads(json.dumps(v2)), to_era="testcases") == (v2, [])


@pytest.mark.parametrize("text, expected", [
    ("Plain text.", "Plain text."),
    ("Use {{ ctx }} and {% if %} and {# note #}.", "{% raw %}Use {{ ctx }} and {% if %} and {# note #}.{% endraw %}"),
    # A raw block cannot hold `endraw`: each opening brace is written as an expression instead.
    ("{{{ a }} {%endraw", '{{ "{" }}{{ "{" }}{ a }} {{ "{" }}%endraw'),
])
def test_text_current_agentv_renders_is_escaped(text, expected):
    record, _ = migrate_record({"input": text, "tests": [{"id": "a", "criteria": text, "input": text}]})
    # The suite input is a var the prompt renders whole (a prompt's own text is rendered twice).
    assert record["prompts"] == [[{"role": "user", "content": "{{ suite_input }}"},
                                  {"role": "user", "content": "{{ input }}"}]]
    assert record["default_test"] == {"vars": {"suite_input": expected}}
    # Current AgentV renders a case's input and criteria again once the prompt is rendered.
    assert record["tests"][0] == {"id": "a", "criteria": expected, "vars": {"input": expected}}


def test_a_suite_message_list_becomes_one_var_per_message():
    record, _ = migrate_record({"input": [{"role": "system", "content": "Be brief."}, {"role": "user", "content": [
        {"type": "file", "value": "ctx.md"}]}], "tests": [{"id": "a", "criteria": "c", "input": "Go"}]})
    assert record == {
        "prompts": [[{"role": "system", "content": "{{ suite_input_1 }}"},
                     {"role": "user", "content": "{{ suite_input_2 }}"}, {"role": "user", "content": "{{ input }}"}]],
        "default_test": {"vars": {"suite_input_1": "Be brief.",
                                  "suite_input_2": [{"type": "file", "value": "ctx.md"}]}},
        "tests": [{"id": "a", "criteria": "c", "vars": {"input": "Go"}}]}


@pytest.mark.parametrize("record, message", [
    ({"tests": [{"id": "{{ x }}", "criteria": "c", "input": "x"}]}, r"\$\.tests\[0\]\.id: an id with template syntax"),
    ({"tests": [{"id": "a", "criteria": "c", "input": "Hi ${{ USER }}"}]},
     r"\$\.tests\[0\]\.input: tests-era env interpolation `\$\{\{ NAME \}\}` is written `\{\{ env\.NAME \}\}`"),
    # The first offending text in file order is named.
    ({"tests": [{"id": "a", "criteria": "c", "input": [{"role": "user", "content": "${{ A }}"},
                                                      {"role": "user", "content": "${{ B }}"}]}]},
     r"^\$\.tests\[0\]\.input\[0\]\.content: tests-era env"),
])
def test_text_that_cannot_be_kept_literal_is_refused(record, message):
    with pytest.raises(Refused, match=message):
        migrate_record(record)


def test_input_files_become_file_parts_before_the_text():
    record, _ = migrate_record({"input_files": ["ctx.md"], "tests": [
        {"id": "a", "criteria": "c", "input": "Sum up."},
        {"id": "b", "criteria": "c", "input": "Own.", "input_files": ["own.md"]}]})
    assert "input_files" not in record and record["prompts"] == ["{{ input }}"]
    assert [case["vars"]["input"] for case in record["tests"]] == [
        [{"role": "user", "content": [{"type": "file", "value": "ctx.md"}, {"type": "text", "value": "Sum up."}]}],
        [{"role": "user", "content": [{"type": "file", "value": "own.md"}, {"type": "text", "value": "Own."}]}]]


def test_suite_execution_and_graders_move_as_agentv_guide_says():
    record, _ = migrate_record({
        "execution": {"targets": ["base", {"name": "skills", "provider": "codex"}], "threshold": 0.8,
                      "total_budget_usd": 2.0, "trials": {"count": 3}},
        "tests": [{"id": "a", "criteria": "c", "note": "why", "input": "x", "evaluators": [
            {"type": "rubrics", "criteria": [{"id": "r", "outcome": "o"}]}, {"type": "is_json"},
            {"type": "skill-trigger", "skill": "csv", "should_trigger": False},
            {"name": "judge", "type": "llm_judge", "prompt": "p.md", "target": "grader", "required_min_score": 0.5},
            {"name": "set", "type": "composite", "assertions": [{"name": "c", "type": "code-grader", "script": ["x"]}]}],
            "execution": {"evaluators": [{"type": "code_judge", "command": "x"}], "skip_defaults": True}}]})
    assert record == {
        "providers": ["base", {"id": "skills", "provider": "codex"}], "threshold": 0.8,
        "evaluate_options": {"budget_usd": 2.0, "repeat": 3},
        "prompts": ["{{ input }}"],
        "tests": [{"id": "a", "description": "why", "vars": {"input": "x"}, "assert": [
            {"type": "llm-rubric", "value": [{"id": "r", "outcome": "o"}]}, {"type": "is-json"},
            {"type": "not-skill-used", "value": "csv"},
            {"metric": "judge", "type": "llm-rubric", "prompt": "p.md", "provider": "grader", "min_score": 0.5},
            {"metric": "set", "type": "assert-set", "assert": [{"metric": "c", "type": "script", "command": ["x"]}]},
            "c"],  # the criteria, the case's last check (current AgentV refuses it beside assert)
            "execution": {"assert": [{"type": "script", "command": "x"}], "skip_defaults": True}}]}


@pytest.mark.parametrize("record, message", [
    ({"execution": {"fail_on_error": False}, "tests": []},
     r"\$\.execution\.fail_on_error: has no current eval-YAML home; AgentV treats it as operational policy"),
    ({"execution": {"cache": True}, "tests": []}, r"\$\.execution\.cache: has no current eval-YAML home"),
    ({"assertions": [{"name": "j", "type": "llm_judge"}], "tests": []},
     r"\$\.assertions\[0\]: an llm grader with no prompt judged each test's criteria; current AgentV skips"),
    ({"tests": [{"id": "a", "criteria": "c", "input": "x", "assertions": [{"type": "llm-rubric"}]}]},
     r"\$\.tests\[0\]\.assertions\[0\]: an llm grader with no prompt judged each test's criteria"),
    ({"assertions": [{"name": "j", "metric": "k", "type": "contains", "value": "x"}], "tests": []},
     r"\$\.assertions\[0\]\.name: the grader has 'metric' too, which current AgentV calls 'name'"),
    ({"execution": {"trials": {"count": 3, "strategy": "pass_at_k"}}, "tests": []},
     r"\$\.execution\.trials\.strategy: current AgentV takes evaluate_options\.repeat as a count only"),
    ({"workspace": {"mode": "static", "path": "/tmp/ws"}, "tests": []},
     r"\$\.workspace: current AgentV rejects workspace in eval YAML: move testbed setup to `environment`"),
    ({"dataset": "label", "tests": []}, r"\$\.dataset: has no current eval-YAML home that chatconv knows"),
    ({"tests": [{"id": "a", "criteria": "c", "input": "x", "reference_answer": "y"}]},
     r"\$\.tests\[0\]\.reference_answer: has no current home in a test case"),
    ({"tests": [{"id": "a", "criteria": "c", "input": "x", "execution": {"target": "t"}}]},
     r"\$\.tests\[0\]\.execution\.target: current AgentV keeps target selection out of test cases"),
    ({"tests": [{"id": "a", "criteria": "c", "input": "x", "assertions": [{"type": "tool-trajectory"}]}]},
     r"\$\.tests\[0\]\.assertions\[0\]\.type: tool-trajectory is replaced by .*trajectory:"),
    ({"tests": [{"id": "a", "criteria": "c"}]}, r"\$\.tests\[0\]: the case has no input"),
    ({"input": None, "tests": [{"id": "a", "criteria": "c", "input": "x"}]},
     r"\$\.input: a suite-level input that is not text or messages"),
    ({"execution": {"targets": [{"name": "t", "use_target": "u"}]}, "tests": []},
     r"\$\.execution\.targets\[0\]\.use_target: current AgentV rejects use_target"),
    ({"metadata": {"systemPrompt": "Be kind."}, "evalcases": [{"id": "a", "outcome": "o", "input_messages": []}]},
     r"\$\.metadata: a file-level metadata has no home in the tests era"),
    ({"guideline_patterns": ["*.md"], "evalcases": [{"id": "a", "outcome": "o", "input_messages": []}]},
     r"\$\.guideline_patterns: the tests era reads guideline_patterns only from \.agentv/config\.yaml"),
    ({"evalcases": [{"id": "a", "outcome": "o", "input_messages": [], "execution": {"evaluators": [
        {"name": "x", "type": "semantic"}]}}]}, r"\$\.evalcases\[0\]\.execution\.evaluators\[0\]\.type: evaluator type"),
    ({"evalcases": [{"id": "a", "outcome": "o", "input_messages": [{"role": "user", "content": "Echo ${{ HOME }}"}]}]},
     r"\$\.evalcases\[0\]\.input_messages\[0\]\.content: the tests era reads `\$\{\{ NAME \}\}`"),
    ({"testcases": [{"id": "a", "outcome": "${{ X }}", "messages": [{"role": "user", "content": "hi"}]}]},
     r"\$\.evalcases\[0\]\.outcome \(as moved to the evalcases era\): the tests era reads"),
    ({"evalcases": [{"id": "a", "outcome": "o", "input_messages": [], "execution": {"evaluators": [["x"]]}}]},
     r"\$\.evalcases\[0\]\.execution\.evaluators\[0\]: an evaluator is an object with a type, not a list"),
    ({"evalcases": [{"id": "a", "outcome": "o", "input_messages": [], "execution": {"evaluators": [{"name": "x"}]}}]},
     r"\$\.evalcases\[0\]\.execution\.evaluators\[0\]: an evaluator with no type"),
    ({"name": "Multi-Model Benchmark", "tests": [{"id": "a", "input": "x"}]},
     r"\$\.name: AgentV's loader refuses a suite name that is not at most 64 lowercase letters"),
    ({"name": "a" * 65, "tests": [{"id": "a", "input": "x"}]}, r"\$\.name: AgentV's loader refuses"),
    ({"tests": [{"id": "a", "input": "x", "assertions": [{"type": "rubrics", "criteria": [
        {"id": "r", "outcome": "o", "required_min_score": 0}]}]}]},
     r"\$\.tests\[0\]\.assertions\[0\]\.required_min_score: rubric item 'r': current AgentV takes min_score"),
    ({"tests": [{"id": "a", "input": "x", "assertions": [{"type": "rubrics", "criteria": [
        {"id": "r", "outcome": "o", "required_min_score": 8, "min_score": 0.5}]}]}]},
     r"rubric item 'r' has min_score too, which current AgentV takes in place of required_min_score: keep one"),
])
def test_what_has_no_home_in_the_next_era_is_refused_never_dropped(record, message):
    with pytest.raises(Refused, match=message):
        migrate_record(record)


def test_a_rubric_items_required_min_score_is_its_tenth_as_min_score_where_it_stood():
    record = {"tests": [{"id": "a", "input": "x", "assertions": [{"type": "rubrics", "criteria": [
        {"id": "r", "weight": 2.0, "required_min_score": 8, "score_ranges": {0: "bad", 10: "good"}},
        {"id": "s", "outcome": "o", "required_min_score": 10}]}]}]}
    migrated, _ = migrate_record(record)
    [grader] = migrated["tests"][0]["assert"]
    assert grader["value"] == [{"id": "r", "weight": 2.0, "min_score": 0.8, "score_ranges": {0: "bad", 10: "good"}},
                               {"id": "s", "outcome": "o", "min_score": 1.0}]


@pytest.mark.parametrize("execution, named", [
    ({"verbose": True, "trace_file": "t.jsonl"}, ["trace_file"]),
    ({"otel_file": "o.json", "keep_workspaces": False}, ["otel_file"]),
    ({"trace_file": "t.jsonl", "otel_file": "o.json"}, ["trace_file", "otel_file"]),
])
def test_a_tests_era_configs_keys_current_agentv_refuses_are_refused_each_named(execution, named):
    config = {"$schema": "agentv-config-v2", "guideline_patterns": ["*.md"], "execution": execution}
    with pytest.raises(Refused) as refused:
        migrate_record(config, "config")
    assert str(refused.value).startswith(f"$.execution.{named[0]}: ")
    assert all(f"execution.{key}" in str(refused.value) for key in named)
    assert migrate_record(config, "config", "tests") == (config, [])  # the tests era keeps them


def test_a_tests_era_config_without_them_is_a_current_one_as_it_is():
    config = {"$schema": "agentv-config-v2", "guideline_patterns": ["*.md"], "eval_patterns": ["**/*.eval.yaml"],
              "execution": {"verbose": False, "keep_workspaces": False}}
    assert migrate_record(dict(config), "config") == (config, [])


def test_a_refused_file_is_left_as_it_is_with_the_reason(tmp_path):
    path = tmp_path / "e.yaml"
    text = "execution:\n  cache: true   # keep\ntests:\n  - id: a\n    criteria: c\n    input: hi\n"
    path.write_text(text)
    result = run_chatconv("migrate", path, "--in-place")
    assert result.returncode == 1
    assert f"{path}:2: error: $.execution.cache: has no current eval-YAML home" in result.stderr_text
    assert path.read_text() == text


@pytest.mark.parametrize("name, text, expected", [
    ("e.json", '{\n  "execution": {\n    "cache": true\n  },\n  "tests": [{"id": "a", "criteria": "c", "input": "hi"}]\n}\n',
     ":3: error: $.execution.cache: has no current"),
    ("v2.yaml", "evalcases:\n  - id: a\n    outcome: ok\n    input_messages:\n      - role: user\n"
     "        content: Echo ${{ X }}\n", ":6: error: $.evalcases[0].input_messages[0].content: the tests era reads"),
    # Refused by a later migration: the path is of the era the file was moved to, not in the text.
    ("v1.yaml", "testcases:\n  - id: a\n    outcome: ${{ X }}\n    messages:\n      - role: user\n        content: hi\n",
     ":1: error: $.evalcases[0].outcome (as moved to the evalcases era): the tests era reads"),
])
def test_a_refusal_is_reported_at_its_line_or_says_which_era_its_path_is_of(tmp_path, name, text, expected):
    path = tmp_path / name
    path.write_text(text)
    result = run_chatconv("migrate", path, "--check")
    assert result.returncode == 1 and f"{path}{expected}" in result.stderr_text, result.stderr_text


# ---------------------------------------------------------------------------------------------
# `chatconv migrate --to ERA`, and validate reading each file within its own era


def test_cli_moves_to_the_newest_era_or_stops_at_to(tmp_path):
    v2, tests, current = tmp_path / "v2.yaml", tmp_path / "tests.yaml", tmp_path / "current.yaml"
    v2.write_text(V2)
    tests.write_text(TESTS)
    current.write_text(TESTS_AS_CURRENT)
    result = run_chatconv("migrate", v2, tests, current, "--in-place", "--to", "tests")
    assert result.returncode == 0, result.stderr_text
    assert v2.read_text() == V2_AS_TESTS and tests.read_text() == TESTS and current.read_text() == TESTS_AS_CURRENT
    assert "3 files, 3 records read: 1 migrated, 2 unchanged, 0 rejected" in result.stderr_text
    assert "2 eval files already at or past era tests: left as they are (never moved back)" in result.stderr_text
    result = run_chatconv("migrate", v2, tests, "--in-place")
    assert result.returncode == 0, result.stderr_text
    assert tests.read_text() == TESTS_AS_CURRENT and "0006_tests_to_current: 2 records" in result.stderr_text
    assert "already at or past" not in result.stderr_text


@pytest.mark.parametrize("jobs", [1, 2])
def test_to_stops_an_eval_file_on_a_jsonl_line_too(tmp_path, jobs):
    path = tmp_path / "e.jsonl"
    v1 = {"testcases": [{"id": "a", "outcome": "o", "messages": [{"role": "user", "content": "hi"}]}]}
    path.write_text(json.dumps(v1) + "\n")
    [outcome] = migrate_paths([str(path)], in_place=True, to_era="evalcases", jobs=jobs)
    assert outcome.error is None and outcome.tally.migrated == 1
    assert json.loads(path.read_text()) == {"evalcases": [{"id": "a", "outcome": "o", "input_messages": [
        {"role": "user", "content": "hi"}]}]}
    assert migrate_lines(path.read_bytes(), to_era="evalcases").tally.unchanged == 1


def test_cli_to_takes_only_era_names(tmp_path):
    result = run_chatconv("migrate", tmp_path / "x.yaml", "--to", "v9")
    assert result.returncode == 2 and "'v9' is not one of 'testcases', 'evalcases', 'tests', 'current'" in (
        result.stderr_text)


def test_migrate_paths_takes_to_era_and_refuses_an_unknown_one(tmp_path):
    path = tmp_path / "e.yaml"
    path.write_text(V1)
    [outcome] = migrate_paths([str(path)], in_place=True, to_era="evalcases")
    assert outcome.tally.by_migration == {"0004_testcases_to_evalcases": 1} and path.read_text() == V1_AS_V2
    from chatconv.problems import UsageError
    with pytest.raises(UsageError, match="no era 'v9'"):
        list(migrate_paths([str(path)], in_place=True, to_era="v9"))


def test_validate_reads_a_v2_file_as_upgraded_only_within_v2():
    from chatconv.sources import Record
    from chatconv.validate.schema import check_schema

    data = {"evalcases": [{"id": "a", "criteria": "c", "input": "hi"}]}
    record = Record("e.json", 1, data, text=json.dumps(data).encode())
    problems = check_schema(record, "eval-file")
    assert [p.hint.rsplit(" ", 1)[-1] for p in problems] == ["0003_eval_file_spellings)"]
    assert record.data == {"evalcases": [{"id": "a", "outcome": "c",
                                          "input_messages": [{"role": "user", "content": "hi"}]}]}


LATE_V2 = """\
evalcases:
  - id: risk
    expected_outcome: Returns a structured risk assessment
    input: Analyze transaction 12345
    expected_output:   # an object: the structured answer
      riskLevel: Low
  - id: code
    expected_outcome: ok
    execution:
      evaluators:
        - name: keywords
          type: code_judge
          script: [uv, run, check.py]
    input: Hi
"""


def test_late_v2_files_read_and_move_forward_as_agentv_reads_them(tmp_path):
    # AgentV's late v2 files (2026-02) spell cases with input / expected_output (an object is one
    # assistant message holding it) / expected_outcome, and script graders as code_judge (which
    # AgentV v4.42.4 skips: migrated, it is a code-grader).
    (tmp_path / ".git").mkdir()
    path = tmp_path / "late.yaml"
    path.write_text(LATE_V2)
    result = run_chatconv("validate", path)
    assert result.returncode == 0 and "0003_eval_file_spellings" in result.stdout_text, result.stdout_text
    v2 = migrate_document(path.read_bytes(), str(path), "yaml", to_era="evalcases").data.decode()
    assert "    expected_messages:\n      - role: assistant\n" \
           "        content:       # an object: the structured answer\n          riskLevel: Low\n" in v2
    tests_era = migrate_document(path.read_bytes(), str(path), "yaml", to_era="tests").data.decode()
    assert "        type: code-grader\n        command: [uv, run, check.py]\n" in tests_era
    later = tmp_path / "later.yaml"
    for era in ("evalcases", "tests", "current"):
        later.write_bytes(migrate_document(path.read_bytes(), str(path), "yaml", to_era=era).data)
        assert _prompts(later) == _prompts(path), era
        assert run_chatconv("validate", later).returncode == 0, era


def test_a_v2_example_file_is_valid_v2_not_legacy():
    result = run_chatconv("validate", REPO / "examples" / "evals" / "code-review.yaml")
    assert result.returncode == 0 and "legacy shape" not in result.stdout_text


# ---------------------------------------------------------------------------------------------
# AgentV's tests-era example tree (v3.8.0), migrated to the current era

TREE = REPO / "tests" / "data" / "agentv" / "tests-v3.8.0"

# Files AgentV's v3.8.0 tree holds that 0006 refuses, and the start of the reason.
_TRAJECTORY = ".type: tool-trajectory is replaced by Promptfoo-compatible trajectory:* assertions"
_WORKSPACE = "$.workspace: current AgentV rejects workspace in eval YAML"
_DATASET = "$.dataset: has no current eval-YAML home that chatconv knows"
EXPECTED_REFUSALS = {
    "examples/features/basic/evals/dataset.eval.yaml":
        "$.tests[1].execution.target: current AgentV keeps target selection out of test cases",
    "examples/features/matrix-evaluation/evals/dataset.eval.yaml":
        "$.tests[1].execution.targets: current AgentV keeps target selection out of test cases",
    "examples/features/external-datasets/evals/dataset.eval.yaml":
        "$.tests: mixes included case files with inline cases",
    "examples/features/suite-level-input/evals/dataset.eval.yaml":
        "$.input: a suite-level input with cases from another file",
    "examples/features/suite-level-input-files/evals/dataset.eval.yaml":
        "$.tests[2].execution.skip_defaults: this case skips the suite-level input",
    "examples/features/env-interpolation/evals/dataset.eval.yaml":
        "$.tests[0].criteria: tests-era env interpolation `${{ NAME }}` is written `{{ env.NAME }}`",
    "examples/features/prompt-template-sdk/evals/dataset.eval.yaml":
        "$.tests[0].reference_answer: has no current home in a test case",
    "examples/features/benchmark-tooling/evals/benchmark.eval.yaml":
        "$.name: AgentV's loader refuses a suite name that is not at most 64 lowercase letters",
    "examples/features/basic-jsonl/evals/dataset.eval.yaml": _DATASET,
    "examples/features/sdk-custom-assertion/evals/dataset.eval.yaml":
        "$.tests[0].assertions[1].type: current AgentV refuses the Promptfoo assertion type 'word-count'",
    "examples/features/composite/evals/dataset.eval.yaml": _DATASET,
    "examples/features/weighted-evaluators/evals/dataset.eval.yaml": _DATASET,
    **{f"examples/{path}": "$.execution.trials.strategy: current AgentV takes evaluate_options.repeat as a count only"
       for path in ["features/trials/evals/dataset.eval.yaml", "showcase/multi-model-benchmark/evals/benchmark.eval.yaml"]},
    **{f"examples/{path}": spot + ": an llm grader with no prompt judged each test's criteria; current AgentV skips an "
       "llm-rubric with no value" for path, spot in [
        ("features/default-evaluators/evals/dataset.eval.yaml", "$.tests[1].assertions[0]"),
        ("features/file-changes-graders/evals/dataset.eval.yaml", "$.tests[0].assertions[1]"),
        ("showcase/cw-incident-triage/evals/dataset.eval.yaml", "$.assertions[1]"),
        ("showcase/psychotherapy/evals/encouragement.eval.yaml", "$.assertions[1]"),
        ("showcase/psychotherapy/evals/listening.eval.yaml", "$.assertions[1]"),
        ("showcase/psychotherapy/evals/routing.eval.yaml", "$.assertions[1]")]},
    **{f"examples/{path}": _WORKSPACE for path in [
        "features/repo-lifecycle/evals/dataset.eval.yaml", "features/repo-lifecycle/evals/pool-e2e.eval.yaml",
        "features/workspace-multi-repo/evals/dataset.eval.yaml",
        "features/workspace-setup-script/evals/dataset-vscode.eval.yaml",
        "features/workspace-setup-script/evals/dataset.eval.yaml",
        "features/workspace-shared-config/evals/accuracy/dataset.eval.yaml",
        "features/workspace-shared-config/evals/regression/dataset.eval.yaml",
        "showcase/cross-repo-sync/evals/dataset.eval.yaml"]},
    **{f"examples/{path}": spot + _TRAJECTORY for path, spot in [
        ("features/batch-cli/evals/dataset.eval.yaml", "$.tests[0].assertions[1]"),
        ("features/execution-metrics/evals/dataset.eval.yaml", "$.tests[2].assertions[0]"),
        ("features/latency-assertions/evals/dataset.eval.yaml", "$.tests[0].assertions[0]"),
        ("features/tool-evaluation-plugins/evals/dataset.eval.yaml", "$.tests[2].assertions[0]"),
        ("features/tool-trajectory-advanced/evals/trace-file-demo.eval.yaml", "$.tests[0].assertions[0]"),
        ("features/tool-trajectory-simple/evals/dataset.eval.yaml", "$.tests[0].assertions[0]"),
        ("showcase/tool-evaluation-plugins/tool-eval-demo.yaml", "$.tests[0].assertions[0]")]},
}


@pytest.fixture(scope="session")
def tests_era_tree(tmp_path_factory) -> Path:
    """A copy of the tests-era example tree, its own repository root (file references from `/`)."""
    root = tmp_path_factory.mktemp("agentv-tests-era") / "repo"
    shutil.copytree(TREE, root)
    (root / ".git").mkdir()
    return root


def _eval_files(root: Path) -> list[Path]:
    found = []
    for file, _ in discover([str(root)]):
        path = Path(file)
        if path.suffix in (".yaml", ".yml") and ".agentv" not in path.parts:
            data = yaml.safe_load(path.read_text(encoding="utf-8"))
            if isinstance(data, dict) and "tests" in data:
                found.append(path)
    return sorted(found)


def test_every_tests_era_example_migrates_to_current_or_is_refused_with_its_reason(tests_era_tree):
    migrated, refused = [], {}
    for path in _eval_files(tests_era_tree):
        name = path.relative_to(tests_era_tree).as_posix()
        try:
            result = migrate_document(path.read_bytes(), str(path), "yaml")
        except LineRejected as exc:
            refused[name] = exc.reject.error
            assert exc.reject.code == "no-newer-home", (name, exc.reject.error)
            continue
        after = yaml.safe_load(result.data)
        assert era_of(after).NAME == "current", name
        assert not {"execution", "assertions", "input", "input_files", "eval_cases"} & set(after), name
        for case in after["tests"] if isinstance(after["tests"], list) else []:
            if isinstance(case, dict):
                assert not {"input", "input_files", "expected_output", "assertions"} & set(case), (name, case)
        again = migrate_document(result.data, str(path), "yaml")
        assert again.data == result.data and again.tally.unchanged == 1, name
        migrated.append(name)
    assert {name: error[:len(EXPECTED_REFUSALS.get(name, ""))] for name, error in refused.items()} == (
        EXPECTED_REFUSALS)
    assert len(migrated) == 25
    for name in migrated:  # each migrated case's prompt is the one it had
        path = tests_era_tree / name
        after = path.with_name(f"migrated-{path.name}")  # beside it: its file references resolve alike
        after.write_bytes(migrate_document(path.read_bytes(), str(path), "yaml").data)
        try:
            assert _prompts(after) == _prompts(path), name
        finally:
            after.unlink()


def test_the_cli_migrates_the_example_tree_and_names_each_refusal(tests_era_tree, tmp_path):
    out = tmp_path / "out"
    result = run_chatconv("migrate", tests_era_tree / "examples", "-o", f"{out}/", "--rejects", tmp_path / "r.jsonl")
    assert result.returncode == 0, result.stderr_text
    rejected = [json.loads(line) for line in (tmp_path / "r.jsonl").read_text().splitlines()]
    refused = sorted([*EXPECTED_REFUSALS, "examples/features/.agentv/config.yaml"])  # its trace_file, otel_file
    assert sorted(Path(r["file"]).relative_to(tests_era_tree).as_posix() for r in rejected) == refused
    # The -o folder holds the whole tree: the refused files and those no migration reads, as they were.
    source = tests_era_tree / "examples"
    files = sorted(p.relative_to(source).as_posix() for p in source.rglob("*") if p.is_file())
    assert sorted(p.relative_to(out).as_posix() for p in out.rglob("*") if p.is_file()) == files
    migrated = {name for name in files if (out / name).read_bytes() != (source / name).read_bytes()}
    assert len(migrated) == 25 and not migrated & {name.removeprefix("examples/") for name in refused}
    assert all(os.stat(out / n).st_mode == os.stat(source / n).st_mode for n in files if n not in migrated)
    read = int(re.match(r"(\d+) files, ", result.stderr_text.splitlines()[-3]).group(1))  # those migrate reads
    assert (f"copied unchanged into {out}/: {len(refused)} files not migrated (named above) and "
            f"{len(files) - read} other files") in result.stderr_text


def test_a_folder_migrated_into_a_folder_validates_where_it_migrated(tests_era_tree, tmp_path):
    """Every migrated file of the new tree is valid where it stands: the files it refers to
    (prompt files, fixtures) came with it."""
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    result = run_chatconv("migrate", tests_era_tree / "examples", "-o", repo / "examples")
    assert result.returncode == 1  # some files refused, each named
    written = [line.split(":")[0] for line in result.stderr_text.splitlines() if ": error: " in line]
    assert len(written) == len(EXPECTED_REFUSALS) + 1
    check = run_chatconv("validate", repo / "examples", "--format", "json")
    faults = {p["file"] for p in json.loads(check.stdout)["problems"] if p["severity"] == "error"}
    refused = {str(repo / name) for name in EXPECTED_REFUSALS}
    assert faults and faults <= refused, faults - refused  # errors only where the old files had them


# ---------------------------------------------------------------------------------------------
# Property: migrating forward keeps every case's prompt, and a second run changes nothing

FILES = {"ctx.md": "Context for the task.\n", "docs/notes.txt": "Line one\r\nLine two\n"}

# Text, some of it what a template engine would read as its own syntax (it must stay text).
text = st.one_of(
    st.text(st.characters(blacklist_categories=("Cs", "Cc"), blacklist_characters="\u2028\u2029\x85"),
            min_size=1, max_size=20).filter(lambda s: s.strip() and s == s.strip()),
    st.sampled_from(["Use {{ name }} here", "{% if a %}b{% endif %}", "{# note #} text", "{{", "a }} b {%"]))
file_segment = st.sampled_from(sorted(FILES)).map(lambda value: {"type": "file", "value": value})
segments = st.lists(st.one_of(text.map(lambda t: {"type": "text", "value": t}), file_segment), min_size=1,
                    max_size=3).filter(lambda parts: any(p["type"] == "text" for p in parts))
content = st.one_of(text, segments)


def message(role):
    return content.map(lambda c: {"role": role, "content": c})


conversation = st.tuples(st.lists(message("system"), max_size=1),
                         st.lists(st.one_of(message("user"), message("assistant")), max_size=2),
                         message("user")).map(lambda t: t[0] + t[1] + [t[2]])
expected = st.one_of(st.none(), text)
ids = st.lists(st.from_regex(r"[a-z][a-z0-9-]{0,8}", fullmatch=True), min_size=1, max_size=3, unique=True)


def _case_list(draw_ids, build):
    return st.tuples(draw_ids, st.data()).map(lambda pair: [build(i, pair[1]) for i in pair[0]])


def _v1_case(case_id, data):
    messages = data.draw(conversation)
    answer = data.draw(expected)
    return {"id": case_id, "outcome": data.draw(text),
            "messages": messages + ([{"role": "assistant", "content": answer}] if answer else [])}


def _v2_case(case_id, data):
    case = {"id": case_id, data.draw(st.sampled_from(["outcome", "expected_outcome", "criteria"])): data.draw(text)}
    if data.draw(st.booleans()):  # the late-v2 spellings
        case["input"] = data.draw(st.one_of(text, conversation))
        answer = data.draw(expected)
        if answer:
            case["expected_output"] = answer
    else:
        case["input_messages"] = data.draw(conversation)
        answer = data.draw(expected)
        if answer:
            case["expected_messages"] = [{"role": "assistant", "content": answer}]
    return case


def _tests_case(case_id, data):
    case = {"id": case_id, "criteria": data.draw(text)}
    if data.draw(st.booleans()):
        case["input"] = data.draw(text)
        if data.draw(st.booleans()):
            case["input_files"] = data.draw(st.lists(st.sampled_from(sorted(FILES)), min_size=1, max_size=2))
    else:
        case["input"] = data.draw(conversation)
    answer = data.draw(st.one_of(expected, conversation))
    if answer:
        case["expected_output"] = answer
    return case


def _tests_file(cases, suite_input, suite_files):
    record = {"tests": cases}
    if suite_files and all(isinstance(c["input"], str) for c in cases):
        record = {"input_files": suite_files, **record}
    if suite_input and all(isinstance(c["input"], str) for c in cases):
        record = {"input": suite_input, **record}
    return record


FILES_OF_ERA = {
    "testcases": _case_list(ids, _v1_case).map(lambda cases: {"testcases": cases}),
    "evalcases": _case_list(ids, _v2_case).map(lambda cases: {"evalcases": cases}),
    "tests": st.builds(_tests_file, _case_list(ids, _tests_case), st.one_of(st.none(), text),
                       st.one_of(st.none(), st.lists(st.sampled_from(sorted(FILES)), min_size=1, max_size=2))),
}
STEPS = [("testcases", "evalcases"), ("testcases", "current"), ("evalcases", "evalcases"),
         ("evalcases", "tests"), ("evalcases", "current"), ("tests", "current")]


def _prompts(path: Path) -> list[tuple]:
    from chatconv.prompt import build_prompts

    # The seed form: what a case holds, whatever release reads it (AgentV's own builder changed
    # between releases: guidelines went, a leading `/` file came back; tests/test_agentv_prompts.py).
    built = build_prompts(path, form="seed")
    return [(c.id, c.inputs.question, c.inputs.guidelines, c.inputs.chat_prompt) for c in built.cases]


@pytest.fixture
def repo_with_files(tmp_path) -> Path:
    (tmp_path / ".git").mkdir()
    for name, body in FILES.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_bytes(body.encode())
    return tmp_path


@pytest.mark.parametrize("era, to", STEPS, ids=[f"{a}-{b}" for a, b in STEPS])
@settings(max_examples=40, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(data=st.data())
def test_migrating_forward_keeps_every_prompt(repo_with_files, era, to, data):
    record = data.draw(FILES_OF_ERA[era])
    before = repo_with_files / "before.json"
    before.write_text(json.dumps(record, ensure_ascii=False), encoding="utf-8")
    try:
        result = migrate_document(before.read_bytes(), str(before), "json", to_era=to)
    except LineRejected as exc:  # text the newer era would render otherwise (a `${{`): refused, with why
        assert exc.reject.code == "no-newer-home" and "rewrite it by hand" in exc.reject.error
        return
    after = repo_with_files / "after.json"
    after.write_bytes(result.data)
    assert era_of(json.loads(result.data)).NAME == to
    assert _prompts(after) == _prompts(before)


@pytest.mark.parametrize("era", sorted(FILES_OF_ERA))
@settings(max_examples=60, deadline=None)
@given(data=st.data())
def test_migrating_twice_changes_nothing(era, data):
    record = data.draw(FILES_OF_ERA[era])
    text = json.dumps(record, ensure_ascii=False).encode()
    try:
        first = migrate_document(text, "e.json", "json")
    except LineRejected as exc:  # text a newer era would render otherwise (a `${{`): refused, with why
        assert exc.reject.code == "no-newer-home" and "then migrate" in exc.reject.error
        return
    assert era_of(json.loads(first.data)).NAME == "current"
    second = migrate_document(first.data, "e.json", "json")
    assert second.data == first.data and second.tally.unchanged == 1
    as_yaml = yaml.safe_dump(record, allow_unicode=True, sort_keys=False).encode()
    assert yaml.safe_load(migrate_document(as_yaml, "e.yaml", "yaml").data) == json.loads(first.data)


# Each eval-file migration, on its own: once it has upgraded a file, it finds nothing more to do
# there (else every run reports the file as migrated, and --check never passes).
EDGE_FILES = [
    {"input": "Be brief.", "tests": []}, {"input_files": ["ctx.md"], "tests": []}, {"input": "hi", "tests": [{}]},
    {"execution": {"threshold": 0.5}, "tests": []}, {"tests": "cases.jsonl"}, {"testcases": []},
    {"evalcases": []}, {"cases": []}, {"evalcases": [{"id": "a", "criteria": "c", "expected_outcome": "o"}]},
    *(yaml.safe_load(text) for text in (V1, V2, TESTS))]


def _upgrade_leaves_nothing_to_detect(record) -> None:
    for migration in (m for m in migrations() if m.eras is not None):
        if migration.detect(record) is None:
            continue
        try:
            after = migration.upgrade(copy.deepcopy(record))
        except Refused:
            continue
        assert migration.detect(after) is None, (migration.name, record, after)


@pytest.mark.parametrize("record", EDGE_FILES, ids=lambda r: json.dumps(r)[:40])
def test_after_its_upgrade_a_migration_detects_nothing(record):
    _upgrade_leaves_nothing_to_detect(record)


def test_after_its_upgrade_a_migration_detects_nothing_in_the_example_files():
    paths = sorted((REPO / "examples" / "evals").rglob("*.yaml")) + _eval_files(TREE)
    for path in paths:
        _upgrade_leaves_nothing_to_detect(yaml.safe_load(path.read_text(encoding="utf-8")))


@pytest.mark.parametrize("era", sorted(FILES_OF_ERA))
@settings(max_examples=60, deadline=None)
@given(data=st.data())
def test_after_its_upgrade_a_migration_detects_nothing_in_any_file(era, data):
    _upgrade_leaves_nothing_to_detect(data.draw(FILES_OF_ERA[era]))


def test_a_suite_input_with_no_cases_migrates_once():
    record, applied = migrate_record({"input": "Be brief.", "input_files": ["ctx.md"], "tests": []})
    assert record == {"prompts": [[{"role": "user", "content": "{{ suite_input }}"},
                                   {"role": "user", "content": "{{ input }}"}]],
                      "default_test": {"vars": {"suite_input": "Be brief."}}, "input_files": ["ctx.md"],
                      "tests": []}  # no case takes the files up: they stay, as the current era reads them
    assert applied == ["0006_tests_to_current"] and migrate_record(record) == (record, [])


def test_suite_input_files_with_no_case_are_kept_not_dropped():
    record = {"input_files": ["ctx.md"], "tests": []}  # valid in the tests era and the current one
    assert migrate_record(json.loads(json.dumps(record))) == (record, [])


def test_the_shipped_examples_of_every_era_build_one_prompt_and_migrate_to_the_current_era(tmp_path):
    # examples/evals/eras holds the case of examples/evals/code-review.yaml written in each other era.
    shutil.copytree(REPO / "examples", tmp_path / "examples")
    (tmp_path / "examples" / ".git").mkdir()
    evals = tmp_path / "examples" / "evals"
    v2 = evals / "code-review.yaml"
    files = sorted((evals / "eras").glob("*.yaml"))
    assert [era_of(yaml.safe_load(f.read_text())).NAME for f in files] == ["current", "testcases", "tests"]
    for path in files:
        assert _prompts(path) == _prompts(v2), path.name
        migrated = path.with_name(f"migrated-{path.name}")
        migrated.write_bytes(migrate_document(path.read_bytes(), str(path), "yaml").data)
        assert era_of(yaml.safe_load(migrated.read_text())).NAME == "current"
        assert _prompts(migrated) == _prompts(v2), path.name
    assert run_chatconv("validate", tmp_path / "examples").returncode == 0


def test_0005_renames_graders_inside_a_composite_and_adds_no_type():
    text = (b"evalcases:\n  - id: a\n    outcome: o\n    input_messages: [{role: user, content: hi}]\n"
            b"    execution:\n      evaluators:\n"
            b"        - {name: s, type: composite, evaluators: [{name: i}, {name: j, type: llm_judge}]}\n")
    written = migrate_document(text, "e.yaml", "yaml", to_era="tests").data.decode()
    assert "evaluators: [{name: i}, {name: j, type: llm-grader}]" in written


@pytest.mark.parametrize("criteria, grader, message", [
    (None, {"type": "contains", "value": "x"}, r"\$\.tests\[0\]\.criteria: criteria beside the case's graders"),
    (5, {"type": "contains", "value": "x"}, r"\$\.tests\[0\]\.criteria: criteria beside the case's graders"),
    ("Names the bug", {"type": "llm-grader", "prompt": "Does it meet {{ criteria }}?"},
     r"\$\.tests\[0\]\.criteria: a grader reads the criteria"),
])
def test_criteria_that_cannot_become_the_last_check_is_refused(criteria, grader, message):
    with pytest.raises(Refused, match=message):
        migrate_record({"tests": [{"id": "a", "input": "x", "criteria": criteria, "assertions": [grader]}]})
