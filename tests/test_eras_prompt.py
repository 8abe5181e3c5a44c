"""Prompts from every era (SPEC §1a): AgentV's own example trees build, and each construct of the
tests and current eras gives the messages AgentV's loader gives."""

from __future__ import annotations

import re
import time

import shutil
from pathlib import Path

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from chatconv.cases import read_cases
from chatconv.cases.templates import render
from chatconv.eras import era_named
from chatconv.problems import ChatconvError
from chatconv.prompt import build_prompts
from chatconv.sources import iter_records

from agentv import needs_node
from conftest import DATA, run_chatconv

TREES = {"tests": DATA / "agentv" / "tests-v3.8.0", "current": DATA / "agentv" / "current-2026-07"}
# Eval files as AgentV's eval_patterns name them (the repository's .agentv/config.yaml).
EVAL_NAMES = ("suite.yaml", "suite.yml", "eval.yaml", "EVAL.yaml")
EVAL_SUFFIXES = (".eval.yaml", ".eval.yml", ".eval.ts", ".EVAL.yaml")
# Files that cannot build: the code of chatconv's problem, and why.
CANNOT_BUILD = {
    "current/examples/features/sdk-eval-authoring/evals/greeting.eval.ts":
        ("unsupported", "a TypeScript eval (SDK eval authoring)"),
    "current/examples/showcase/multi-model-benchmark/evals/benchmark.eval.yaml":
        ("wrong-type", "evaluate_options.repeat is an object: AgentV HEAD's loader throws on it too"),
    "tests/examples/features/benchmark-tooling/evals/benchmark.eval.yaml":
        ("bad-value", "its name: AgentV v4.42.4's loader refuses the file"),
    # AgentV v4.42.4's validate refuses it (an unset ${{ EVAL_CRITERIA }}); its loader loads it (issue 28)
    "tests/examples/features/env-interpolation/evals/dataset.eval.yaml": ("bad-value", "empty criteria"),
    **{f"tests/examples/features/{name}.eval.yaml": ("removed-key", "AgentV v4.42.4's loader throws on it too")
       for name in ("repo-lifecycle/evals/dataset", "repo-lifecycle/evals/pool-e2e", "workspace-multi-repo/evals/dataset",
                    "workspace-setup-script/evals/dataset-vscode", "workspace-setup-script/evals/dataset",
                    "workspace-shared-config/evals/accuracy/dataset", "workspace-shared-config/evals/regression/dataset")},
}
# Cases built from every other eval file of each tree (files, cases).
BUILT = {"tests": (50, 225), "current": (110, 434)}


@pytest.fixture(scope="session")
def trees(tmp_path_factory) -> dict[str, Path]:
    """Both example trees, copied once; each is its own repository (an empty .git at its top)."""
    copies = {}
    for era, tree in TREES.items():
        copy = tmp_path_factory.mktemp(era) / tree.name
        shutil.copytree(tree, copy)
        (copy / ".git").mkdir()
        copies[era] = copy
    return copies


def eval_files(tree: Path) -> list[Path]:
    return sorted(p for p in tree.rglob("*") if p.is_file() and ".agentv" not in p.parts
                  and (p.name in EVAL_NAMES or p.name.endswith(EVAL_SUFFIXES)
                       or (p.name.startswith("dataset") and p.suffix in (".yaml", ".yml"))))


@pytest.mark.parametrize("era", TREES)
def test_every_eval_file_of_the_example_trees_builds(trees, era):
    built_files = built_cases = 0
    refused = {}
    for path in eval_files(trees[era]):
        name = f"{era}/{path.relative_to(trees[era]).as_posix()}"
        try:
            built_cases += len(list(build_prompts(path).cases))
            built_files += 1
        except ChatconvError as exc:
            refused[name] = exc.problems
    assert set(refused) == {n for n in CANNOT_BUILD if n.startswith(era + "/")}, refused
    for name, problems in refused.items():
        assert {p.code for p in problems} == {CANNOT_BUILD[name][0]}
    assert (built_files, built_cases) == BUILT[era]


BASIC_USER = ("Please review this JavaScript function:\n\n```javascript\nfunction calculateTotal(items) {\n"
              "  let total = 0;\n  for (let i = 0; i < 0; i++) {\n    total += items[i].price * items[i].quantity;\n"
              "  }\n  return total;\n}\n```")
BASIC_SYSTEM = "You are an expert software developer who provides clear, concise code reviews."


def test_basic_suite_in_both_eras(trees):
    guideline = (trees["tests"] / "examples/features/basic/evals/javascript.instructions.md").read_text().rstrip()
    [old] = build_prompts(trees["tests"] / "examples/features/basic/evals/dataset.eval.yaml",
                          case_ids=["code-review-javascript"], form="seed").cases
    # chatconv's seed form: the tests-era config names *.instructions.md as guidelines, and the
    # file joins the system message (AgentV v4's own form: tests/test_agentv_prompts.py).
    assert old.inputs.chat_prompt == [
        {"role": "system", "content": f"{BASIC_SYSTEM}\n\n[[ ## Guidelines ## ]]\n\n{guideline}"},
        {"role": "user", "content": f"{BASIC_USER}\n<Attached: javascript.instructions.md>"}]
    [new] = build_prompts(trees["current"] / "examples/features/basic/evals/suite.yaml",
                          case_ids=["code-review-javascript"], form="seed").cases
    # The current config has no guideline patterns: the file is embedded in the user message.
    assert new.inputs.chat_prompt == [
        {"role": "system", "content": BASIC_SYSTEM},
        {"role": "user", "content": f"{BASIC_USER}\n=== javascript.instructions.md ===\n{guideline}"}]


def test_example_prompt_matrix_and_scenarios(trees):
    features = trees["current"] / "examples/features"
    found = {c.id: c.inputs for c in build_prompts(features / "test-vars-templating/evals/suite.yaml").cases}
    assert list(found) == ["capital-france__prompt_support-chat", "capital-france__prompt_terse",
                           "greet-ada__prompt_support-chat", "greet-ada__prompt_terse"]
    assert found["greet-ada__prompt_terse"].question == "Answer for new teammates in one sentence: How should I greet Ada?"
    assert found["greet-ada__prompt_support-chat"].chat_prompt[1] == {"role": "user", "content": "How should I greet Ada?"}
    scenario = [(c.id, c.inputs.question) for c in build_prompts(features / "scenarios/evals/suite.yaml").cases]
    assert scenario[:2] == [("spanish__scenario_test_1", "Translate 'hello' to Spanish."),
                            ("spanish__scenario_test_2", "Translate 'thank you' to Spanish.")]
    external = [c.id for c in build_prompts(features / "external-datasets/evals/suite.yaml").cases]
    assert "csv-magic-greeting" in external and external[-1] == "inline-test"


# ---------------------------------------------------------------------------------------------
# Each construct on a small file


def cases_of(path: Path, era: str | None = None):
    [record] = iter_records(path)
    return read_cases(record, era_named(era) if era else None)


# A suite assertion: AgentV (current era) skips a test with nothing to grade it by, so that the
# texts below, about prompts and vars, are given one (after their last line: places stay).
SUITE_ASSERT = "assert: [{type: contains, value: x}]\n"


def graded(text: str) -> str:
    """A current-era text with a suite assertion, unless it has one or is of another era."""
    current = any(mark in text for mark in ("prompts", "vars", "scenarios", "default_test"))
    return text + SUITE_ASSERT if current and not re.search(r"^assert:", text, re.M) else text


def messages(repo: Path, text: str, name: str = "e.yaml", era: str | None = None) -> dict:
    path = repo / name
    path.write_text(graded(text))
    found = cases_of(path, era)
    assert [p for p in found.problems if p.is_error] == []
    return {case.id: case.messages for case in found.cases}


def problems(repo: Path, text: str, name: str = "e.yaml") -> list[tuple]:
    path = repo / name
    path.write_text(graded(text))
    return [(Path(p.file).name, p.line, p.path, p.code) for p in cases_of(path).problems]


def user(content):
    return {"role": "user", "content": content}


def test_tests_input_shapes(repo):
    found = messages(repo, """
tests:
  - {id: s, criteria: c, input: Hi}
  - id: l
    criteria: c
    input: [{role: system, content: Be terse}, {role: user, content: Hi}, not-a-message]
  - id: o
    criteria: c
    input: {question: x, n: 1}
  - id: m
    criteria: c
    input: {role: user, content: [{type: text, value: a}, {type: file, value: f.md}]}
""")
    assert found == {
        "s": [user("Hi")],
        "l": [{"role": "system", "content": "Be terse"}, user("Hi")],
        "o": [user('{\n  "question": "x",\n  "n": 1\n}')],
        "m": [user([{"type": "text", "value": "a"}, {"type": "file", "value": "f.md"}])],
    }


def test_tests_input_files_and_suite_defaults(repo):
    found = messages(repo, """
input: Use the context.
input_files: [suite.md]
tests:
  - {id: a, criteria: c, input: Q1}
  - {id: b, criteria: c, input: Q2, input_files: [own.md, two.md]}
  - {id: c, criteria: c, input: Q3, execution: {skip_defaults: true}}
""")
    assert found == {
        "a": [user("Use the context."), user([{"type": "file", "value": "suite.md"}, {"type": "text", "value": "Q1"}])],
        "b": [user("Use the context."), user([{"type": "file", "value": "own.md"}, {"type": "file", "value": "two.md"},
                                              {"type": "text", "value": "Q2"}])],
        "c": [user("Q3")],
    }


def test_tests_input_files_problem_points_at_the_file_entry(repo):
    (repo / "e.yaml").write_text("tests:\n  - id: a\n    criteria: c\n    input: Q\n    input_files:\n      - gone.md\n")
    result = run_chatconv("prompt", repo / "e.yaml")
    assert result.returncode == 1
    assert "e.yaml:6:" in result.stderr_text and "$.tests[0].input_files[0]" in result.stderr_text


def test_tests_expected_criteria_and_graders(repo):
    path = repo / "e.yaml"
    path.write_text("""
assertions: [{type: contains, value: z}]
tests:
  - {id: a, expected_outcome: says 4, input: Q, expected_output: "4"}
  - {id: b, criteria: c, input: Q, expected_output: {risk: High}, assert: [{type: equals, value: x}],
     execution: {evaluators: [{name: j, type: llm_judge}]}}
  - {id: c, criteria: c, input: Q, expected_output: [{role: assistant, content: A}]}
""")
    a, b, c = cases_of(path).cases
    assert (a.criteria, a.expected) == ("says 4", [{"role": "assistant", "content": "4"}])
    assert b.expected == [{"role": "assistant", "content": '{\n  "risk": "High"\n}'}]
    assert b.graders == [{"type": "equals", "value": "x"}, {"name": "j", "type": "llm_judge"},
                         {"type": "contains", "value": "z"}]
    assert c.expected == [{"role": "assistant", "content": "A"}]


def test_external_case_files(repo):
    (repo / "cases").mkdir()
    (repo / "cases" / "a.yaml").write_text("- {id: y1, criteria: c, input: from yaml}\n")
    (repo / "cases" / "b.jsonl").write_text('{"id": "j1", "criteria": "c", "input": "from jsonl"}\n\n'
                                            '{"id": "j2", "criteria": "c", "input": [{"role": "user", "content": "two"}]}\n')
    (repo / "cases" / "c.json").write_text('{"tests": [{"id": "n1", "criteria": "c", "input": "from json"}]}')
    (repo / "cases" / "d.csv").write_text("id,input,__expected\nv1,from csv,contains:x\n")
    found = messages(repo, """
tests:
  - file://cases/*.{yaml,jsonl}
  - {id: inline, criteria: c, input: here}
  - cases/c.json
""")
    assert found == {"y1": [user("from yaml")], "j1": [user("from jsonl")], "j2": [user("two")],
                     "inline": [user("here")], "n1": [user("from json")]}
    assert messages(repo, "tests: file://cases/d.csv\n", "f.yaml") == {"v1": [user("from csv")]}
    assert messages(repo, "tests: ./cases/a.yaml\n", "g.yaml") == {"y1": [user("from yaml")]}


def test_case_file_problems_name_the_file_line_and_path(repo):
    (repo / "rows.jsonl").write_text('{"id": "ok", "input": "x", "criteria": "c"}\n{"id": "no-input", "criteria": "c"}\n'
                                     '{broken\n')
    assert problems(repo, "tests: ./rows.jsonl\n") == [
        ("rows.jsonl", 2, "$", "skipped-test"), ("rows.jsonl", 3, "$", "invalid-json")]
    (repo / "list.yaml").write_text("- id: a\n  input: x\n  criteria: c\n- id: b\n  input: [{role: user, content: y}]\n"
                                    "  input_files: [f]\n  criteria: c\n")
    assert problems(repo, "tests: ./list.yaml\n") == [("list.yaml", 6, "$[1].input_files", "no-input")]
    assert problems(repo, "tests:\n  - {id: a, input: x, criteria: c}\n  - file://missing.yaml\n") == [
        ("e.yaml", 3, "$.tests[1]", "case-file")]
    assert problems(repo, "tests: file://none/*.jsonl\n") == [("e.yaml", 1, "$.tests", "case-file")]
    (repo / "dict.yaml").write_text("id: a\n")
    assert problems(repo, "tests: dict.yaml\n") == [("dict.yaml", 1, "$", "case-file")]


# ---------------------------------------------------------------------------------------------
# Current era


def test_current_string_prompt_with_default_vars(repo):
    assert messages(repo, """
prompts: ["Answer for {{ audience }}: {{ question }}{{ nothing }}"]
default_test: {vars: {audience: users, question: default}}
tests: [{id: c, vars: {question: Why?}}]
""") == {"c": [user("Answer for users: Why?")]}


def test_current_whole_value_and_second_pass(repo):
    assert messages(repo, """
prompts: ["{{ input }}"]
tests:
  - id: a
    vars:
      product: AgentV
      input:
        - {role: system, content: You review code.}
        - role: user
          content: [{type: text, value: "Review {{ vars.product }}"}, {type: file, value: js.md}]
  - {id: b, vars: {input: Hello}}
""") == {"a": [{"role": "system", "content": "You review code."},
               user([{"type": "text", "value": "Review AgentV"}, {"type": "file", "value": "js.md"}])],
         "b": [user("Hello")]}


def test_current_chat_prompts_and_ids(repo):
    (repo / "chat.json").write_text('[{"role": "system", "content": "Tone: {{ tone }}"}, '
                                    '{"role": "user", "content": "{{ question }}"}]')
    (repo / "plain.txt").write_text("Q: {{ question }}\r\n")
    found = messages(repo, """
prompts:
  - {id: support chat!, label: Support, file: ./chat.json}
  - file://plain.txt
  - [{role: system, content: "Answer in {{ tone }} style."}, {role: user, content: "{{ question }}"}]
  - {role: user, content: "one {{ question }}"}
  - {messages: [{role: user, content: "m {{ question }}"}], id: msgs}
  - {prompt: "p {{ question }}", id: p}
  - {raw: "r {{ question }}", id: r}
default_test: {vars: {tone: concise}}
tests: [{id: refund, vars: {question: Can I?}}]
""")
    system = {"role": "system", "content": "Tone: concise"}
    assert found.pop("refund__prompt_support-chat") == [system, user("Can I?")]
    assert found.pop("refund__prompt_plain.txt") == [user("Q: Can I?")]
    chats = {k: found.pop(k) for k in list(found) if k.startswith("refund__prompt_chat-")}
    assert sorted(chats.values(), key=len) == [
        [user("one Can I?")], [{"role": "system", "content": "Answer in concise style."}, user("Can I?")]]
    assert {len(k) for k in chats} == {len("refund__prompt_chat-") + 12}  # chat-<12 hex digits>
    assert found == {"refund__prompt_msgs": [user("m Can I?")], "refund__prompt_p": [user("p Can I?")],
                     "refund__prompt_r": [user("r Can I?")]}


def test_current_single_chat_list_is_one_prompt(repo):
    assert messages(repo, """
prompts: [{role: system, content: S}, {role: user, content: "{{ q }}"}]
tests: [{id: a, vars: {q: x}}]
""") == {"a": [{"role": "system", "content": "S"}, user("x")]}


def test_current_default_test_file_and_expected_output_is_reference_text(repo):
    (repo / "defaults.yaml").write_text("vars:\n  audience: team\n  expected: {answer: Paris}\n")
    path = repo / "e.yaml"
    path.write_text(graded("""
prompts: ["{{ audience }}: {{ q }}"]
default_test: file://defaults.yaml
tests: [{id: a, vars: {q: capital?, expected_output: "{{ vars.expected.answer }}"}}]
"""))
    [case] = cases_of(path).cases
    assert case.messages == [user("team: capital?")]
    assert (case.expected, case.criteria) == ([], "Paris")


def test_current_raw_external_cases_without_prompts(repo):
    (repo / "rows.jsonl").write_text('{"id": "a", "input": "plain", "input_files": ["f.md"], "criteria": "c"}\n')
    assert messages(repo, "tests: ./rows.jsonl\nproviders: [x]\n", era="current") == {
        "a": [user([{"type": "file", "value": "f.md"}, {"type": "text", "value": "plain"}])]}
    # With prompts, a raw case's input becomes vars.input (and its input_files are dropped).
    assert messages(repo, "prompts: ['{{ input }}']\ntests: ./rows.jsonl\n", "g.yaml") == {"a": [user("plain")]}


def test_current_array_vars_expand(repo):
    path = repo / "e.yaml"
    path.write_text(graded("prompts: ['{{ a }}-{{ b }}']\ntests: [{id: x, vars: {a: [p, q], b: [r, s]}}]\n"))
    assert [c.messages[0]["content"] for c in cases_of(path).cases] == ["p-r", "p-s", "q-r", "q-s"]


def test_current_refusals_and_template_errors(repo):
    assert problems(repo, """
prompts:
  - {function: "x => x", id: f}
  - {command: [echo, hi]}
tests: [{id: a, vars: {q: x}}]
""") == [("e.yaml", 3, "$.prompts[0].function", "unsupported"), ("e.yaml", 4, "$.prompts[1].command", "unsupported")]
    assert problems(repo, "prompts: ['{{ q | shout }}']\nnunjucks_filters: {shout: ./f.js}\ntests: [{id: a, vars: {q: x}}]\n") == [
        ("e.yaml", 2, "$.nunjucks_filters", "unsupported"), ("e.yaml", 1, "$.prompts[0]", "unsupported")]
    assert problems(repo, "prompts:\n  - ok\n  - 'bad {% if %}'\ntests: [{id: a, vars: {}}]\n") == [
        ("e.yaml", 3, "$.prompts[1]", "template")]
    assert problems(repo, "prompts: ['see {{ q }}']\ntests: [{id: a, vars: {q: [{role: user}]}}]\n") == [
        ("e.yaml", 1, "$.prompts[0]", "unsupported")]
    (repo / "p.md").write_text("line one\n{{ broken\n")
    assert problems(repo, "prompts: [file://p.md]\ntests: [{id: a, vars: {}}]\n") == [("p.md", 2, "$", "template")]


@pytest.mark.parametrize("template, error", [("{{ q | load }}", "JSONDecodeError"), ("{{ 1 / 0 }}", "ZeroDivisionError"),
                                             ("{% for i in range(1000000) %}x{% endfor %}", "OverflowError")])
def test_a_template_that_fails_while_running_is_a_problem(repo, template, error):
    text = f"prompts: ['{template}']\ntests: [{{id: a, vars: {{q: not json}}}}]\n"
    assert problems(repo, text) == [("e.yaml", 1, "$.prompts[0]", "template")]
    result = run_chatconv("prompt", repo / "e.yaml")
    assert result.returncode == 1 and f"template cannot be rendered: {error}" in result.stderr_text
    assert "Traceback" not in result.stderr_text


def test_eval_ts_is_refused_and_era_can_be_forced(repo):
    (repo / "x.eval.ts").write_text("export default {}\n")
    result = run_chatconv("prompt", repo / "x.eval.ts")
    assert result.returncode == 1 and "SDK eval authoring" in result.stderr_text
    with pytest.raises(ChatconvError, match="written as code"):  # the suffixes case files refuse too
        build_prompts(repo / "x.eval.py")
    (repo / "e.yaml").write_text("prompts: ['{{ input }}']\ntests: [{id: a, vars: {input: hi}, assert: []}]\n")
    assert run_chatconv("prompt", repo / "e.yaml").stdout_text.startswith('{"id":"a","question":"hi"')
    forced = run_chatconv("prompt", "--era", "tests", repo / "e.yaml")
    # In the tests era the prompts are ignored (AgentV warns), and the test then has no input:
    # AgentV skips it, and builds nothing
    assert forced.returncode == 0 and forced.stdout_text == ""
    assert "warning: $.tests[0]: test 'a' has no input of its own: AgentV skips it" in forced.stderr_text
    assert run_chatconv("prompt", "--era", "nope", repo / "e.yaml").returncode == 2


# ---------------------------------------------------------------------------------------------
# Properties

_text = st.text(st.characters(blacklist_categories=("Cs", "Cc")), min_size=1, max_size=40).filter(str.strip)
_messages = st.lists(st.fixed_dictionaries({"role": st.sampled_from(["system", "user", "assistant"]),
                                            "content": _text}), min_size=1, max_size=4)


@settings(max_examples=40, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(text=_text)
def test_string_input_is_one_user_message_as_in_v2(repo, text):
    tests_era = repo / "t.json"
    tests_era.write_bytes(orjson.dumps({"tests": [{"id": "a", "criteria": "c", "input": text}]}))
    v2 = repo / "v.json"
    v2.write_bytes(orjson.dumps({"evalcases": [{"id": "a", "outcome": "c",
                                                "input_messages": [{"role": "user", "content": text}]}]}))
    [left] = build_prompts(tests_era).cases
    [right] = build_prompts(v2).cases
    assert (left.inputs.question, left.inputs.chat_prompt) == (right.inputs.question, right.inputs.chat_prompt)


@given(value=st.one_of(_text, _messages))
def test_whole_value_input_gives_the_var_back(value):
    assert render("{{ input }}", {"input": value}) == value
    assert render(" {{ vars.input }} ", {"input": value}) == value


def test_array_vars_expand_on_the_command_line(repo):
    (repo / "e.yaml").write_text(graded("prompts: ['{{ a }}!']\ntests: [{id: x, vars: {a: [p, q]}}, {id: x, vars: {a: r}}]\n"))
    result = run_chatconv("prompt", repo / "e.yaml")
    assert result.returncode == 1 and "duplicate case id 'x'" in result.stderr_text  # two written cases
    (repo / "e.yaml").write_text(graded("prompts: ['{{ a }}!']\ntests: [{id: x, vars: {a: [p, q]}}]\n"))
    result = run_chatconv("prompt", repo / "e.yaml")
    assert [(r["id"], r["question"]) for r in map(orjson.loads, result.stdout.splitlines())] == [("x", "p!"), ("x", "q!")]


def test_case_files_prompt_files_and_default_tests_outside_the_root_need_the_flag(repo):
    project = repo / "project"
    project.mkdir()
    (project / ".git").mkdir()  # the repository root: repo/ is outside it
    (repo / "cases.yaml").write_text("- {id: a, input: hi, criteria: c}\n")
    (repo / "p.md").write_text("Say {{ q }}\n")
    (repo / "defaults.yaml").write_text("vars: {q: hello}\n")
    (repo / "more").mkdir()
    (repo / "more" / "b.yaml").write_text("- {id: b, input: there, criteria: c}\n")
    files = {"tests.yaml": "tests: file://../cases.yaml\n", "glob.yaml": "tests: ['../more/*.yaml']\n",
             "prompt.yaml": "prompts: [file://../p.md]\ndefault_test: file://../defaults.yaml\ntests: [{id: a, criteria: c}]\n"}
    for name, text in files.items():
        (project / name).write_text(text)
        [record] = iter_records(project / name)
        refused = read_cases(record).problems
        assert refused and all("outside the repository root" in p.message for p in refused), name
        assert all(p.path in ("$.tests", "$.tests[0]", "$.prompts[0]", "$.default_test") for p in refused)
        allowed = read_cases(record, allow_outside_root=True)
        assert allowed.problems == [] and len(allowed.cases) == 1, name
    result = run_chatconv("prompt", project / "prompt.yaml")
    assert result.returncode == 1 and "--allow-outside-root" in result.stderr_text
    result = run_chatconv("prompt", "--allow-outside-root", project / "prompt.yaml")
    assert result.returncode == 0 and '"question":"Say hello"' in result.stdout_text
    assert run_chatconv("validate", "--allow-outside-root", project / "tests.yaml").returncode == 0
    assert run_chatconv("validate", project / "tests.yaml").returncode == 1


def test_case_files_of_every_format_are_read_as_sources_reads_them(repo):
    (repo / "empty.jsonl").write_text("")
    (repo / "dup.json").write_text('[{"id": "a", "id": "b", "input": "x", "criteria": "c"}]')
    (repo / "folder.yaml").mkdir()
    assert problems(repo, "tests: ./empty.jsonl\n") == [("empty.jsonl", 1, "$", "case-file")]
    assert problems(repo, "tests: ./dup.json\n") == [("dup.json", 1, "$[0].id", "duplicate-key")]
    assert problems(repo, "prompts: ['{{ q }}']\ntests: [{id: a}]\nscenarios: [file://folder.yaml]\n") == [
        ("e.yaml", 3, "$.scenarios[0]", "case-file")]


@pytest.mark.parametrize("scenario, place", [
    ("{tests: 5}", "$.scenarios[0].tests"), ("{config: {vars: {q: b}}, tests: [{vars: {q: a}}]}", "$.scenarios[0].config"),
    ("{config: [{vars: [1]}], tests: [{vars: {q: a}}]}", "$.scenarios[0].config[0].vars"),
    ("{config: [{assert: 3}], tests: [{vars: {q: a}}]}", "$.scenarios[0].config[0].assert"),
    ("{tests: [{vars: {q: a}}, 3]}", "$.scenarios[0].tests[1]"), ("7", "$.scenarios[0]")])
def test_a_scenario_of_the_wrong_shape_is_a_problem(repo, scenario, place):
    text = f"prompts: ['{{{{ q }}}}']\ntests: [{{id: a, vars: {{q: x}}}}]\nscenarios:\n  - {scenario}\n"
    assert problems(repo, text) == [("e.yaml", 4, place, "wrong-type")]
    result = run_chatconv("prompt", repo / "e.yaml")
    assert result.returncode == 1 and "Traceback" not in result.stderr_text


@pytest.mark.parametrize("header", ["id,vars.a,vars.a.b", "id,vars.a.b,vars.a", "id,a,vars.a", "id,a,a"])
def test_csv_columns_that_set_the_same_var_are_a_problem(repo, header):
    (repo / "c.csv").write_text(f"{header}\nx,1,2\n")
    assert problems(repo, "tests: file://c.csv\n") == [("c.csv", 1, "$", "case-file")]


def test_csv_unclosed_quote_is_a_problem(repo):
    (repo / "c.csv").write_text('id,input\nx,"unclosed\n')
    assert problems(repo, "tests: file://c.csv\n") == [("c.csv", 2, "$", "case-file")]
    (repo / "d.csv").write_text('id,a.b,vars.x\nx,1,2\n')  # a plain column is a var as named, not nested
    assert messages(repo, "prompts: ['{{ x }}']\ntests: file://d.csv\n", "f.yaml") == {"x": [user("2")]}


# ---------------------------------------------------------------------------------------------
# Templates run under limits: no hang, no traceback, no gigabytes

_BOMBS = {  # each found hanging, ending in a traceback, or taking gigabytes
    "loops of loops": "{% for a in range(100000) %}{% for b in range(100000) %}{% endfor %}{% endfor %}",
    "a macro that doubles": "{% macro f(n) %}{% if n < 60 %}{{ f(n+1) }}{{ f(n+1) }}{% endif %}{% endmacro %}{{ f(0) }}",
    "a macro without end": "{% macro f(n) %}{{ f(n+1) }}{% endmacro %}{{ f(0) }}",
    "wordwrap of huge text": "{{ ('ab ' * 5000000) | wordwrap(3) }}",
    "parentheses": "{{ " + "(" * 3000 + "1" + ")" * 3000 + " }}",
    "lists": "{{ " + "[" * 3000 + "]" * 3000 + " }}",
    "25 nested loops": "{% for a in q %}" * 25 + "{% endfor %}" * 25,
    "120 nested loops": "{% for a in q %}" * 120 + "{% endfor %}" * 120,
    "a 5,000-digit integer": "{{ 10 ** 5000 }}",
    "an integer made by products": "{% set n = [7] %}{% for i in range(20) %}{% set _ = n.append(n[-1] * n[-1]) %}"
                                   "{% endfor %}{{ n[-1] }}",
    "a string of 10 GB": "{{ 'a' * 10**10 }}",
    "a list of 10 G items": "{{ [1] * 10**10 }}",
    "center": "{{ 'x' | center(10**10) }}",
    "indent": "{{ 'x\\ny' | indent(10**10) }}",
    "replace": "{{ ('a' * 1000) | replace('a', 'a' * 1000) | replace('a', 'a' * 1000) }}",
    "a string joined to itself": "{% set s = ['ab'] %}{% for i in range(60) %}{% set _ = s.append(s[-1] ~ s[-1]) %}"
                                 "{% endfor %}{{ s | length }}",
    "a string doubled": "{% set s = ['ab'] %}{% for i in range(60) %}{% set _ = s.append(s[-1] + s[-1]) %}"
                        "{% endfor %}{{ s | length }}",
    "a format's width": "{{ '%0999999999d' % 1 }}",
    "the format filter": "{{ '%0999999999d' | format(1) }}",
    "output written bit by bit": "{% for i in range(100000) %}{% for j in range(100) %}{{ 'x' * 100 }}{% endfor %}"
                                 "{% endfor %}",
}


_SLOW = {"loops of loops", "a macro that doubles", "wordwrap of huge text"}  # ended by the clock


@pytest.mark.parametrize("name", list(_BOMBS))
def test_a_template_past_a_limit_is_one_problem(repo, monkeypatch, name):
    from chatconv.cases import template_limits

    monkeypatch.setattr(template_limits, "TEMPLATE_SECONDS", 0.3)
    (repo / "p.txt").write_text(_BOMBS[name])
    started = time.monotonic()
    found = problems(repo, "prompts: [file://p.txt]\ntests: [{id: a, vars: {q: [1]}}]\n")
    assert time.monotonic() - started < 5
    assert [code for *_, code in found] == ["template-limit"], found


def test_templates_under_a_memory_cap_give_problems_not_tracebacks(repo):
    # Every bomb but those stopped by the clock (2 s each; the test above has them), as a prompt of
    # one file, read by the CLI with 1.5 GiB of address space at most.
    import resource
    import subprocess
    import sys

    bombs = [template for name, template in _BOMBS.items() if name not in _SLOW]
    for number, template in enumerate(bombs):
        (repo / f"p{number}.txt").write_text(template)
    prompts = ", ".join(f"file://p{number}.txt" for number in range(len(bombs)))
    (repo / "e.yaml").write_text(graded(f"prompts: [{prompts}]\ntests: [{{id: a, vars: {{q: [1]}}}}]\n"))

    def capped():
        resource.setrlimit(resource.RLIMIT_AS, (3 << 29, 3 << 29))

    result = subprocess.run([sys.executable, "-m", "chatconv", "validate", str(repo / "e.yaml")], cwd=repo,
                            capture_output=True, text=True, timeout=120, preexec_fn=capped)
    assert "Traceback" not in result.stderr and "MemoryError" not in result.stdout, result.stderr
    assert result.returncode == 1 and result.stdout.count("template-limit") == 1  # the count by code
    assert f"{len(bombs)} × template-limit (error)" in result.stdout, result.stdout


_PIECES = st.sampled_from(["{{ 'ab' * N }}", "{% for i in range(N) %}X{% endfor %}", "{{ 'x' | center(N) }}",
                           "{{ N ** N }}", "{{ 'ab' ~ 'cd' }}", "{{ '%0Nd' % 1 }}", "{{ [0] * N }}", "{{ q }}",
                           "{{ ('a' * N) | replace('a', 'bb') }}", "{{ range(N) | join(',') }}"])


@settings(max_examples=40, deadline=None)
@given(st.recursive(_PIECES, lambda inner: st.tuples(inner, inner).map(lambda pair: pair[0].replace("X", pair[1])),
                    max_leaves=4), st.lists(st.sampled_from([0, 1, 7, 100, 10**3, 10**5, 10**9]), min_size=8, max_size=8))
def test_any_template_renders_within_the_limits_or_says_which_it_passed(template, numbers):
    from chatconv.cases import template_limits, templates
    from chatconv.limits import LIMITS

    for number in numbers:
        template = template.replace("N", str(number), 1)
    template = template.replace("N", "3")
    started = time.monotonic()
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(template_limits, "TEMPLATE_SECONDS", 0.2)
        try:
            rendered = templates.render_string(template, {"q": "hi"})
        except templates.TemplateProblem as exc:
            assert exc.code in ("template-limit", "template", "unsupported"), exc.message
        else:
            assert isinstance(rendered, str) and len(rendered) <= LIMITS.max_file_bytes
    assert time.monotonic() - started < 2


def test_a_vars_matrix_past_the_cap_is_refused_before_any_case_is_made(repo, monkeypatch):
    from chatconv.cases import current

    lists = "{" + ", ".join(f"v{n}: [{', '.join(f's{i}' for i in range(30))}]" for n in range(8)) + "}"
    path = repo / "e.yaml"
    path.write_text(graded(f"prompts: ['{{{{ v0 }}}}-{{{{ q }}}}']\ntests:\n  - {{id: big, vars: {lists}}}\n"
                           "  - {id: small, vars: {q: [a, b]}}\n"))
    started = time.monotonic()
    read = cases_of(path)
    assert time.monotonic() - started < 5
    [problem] = read.problems
    assert (problem.code, problem.line, problem.path) == ("case-limit", 3, "$.tests[0].vars")
    assert "makes 656,100,000,000 cases" in problem.message
    assert [case.id for case in read.cases] == ["small", "small"]  # the other tests are read
    # The cap is a file's: tests that fit take from it, one past what is left is refused.
    monkeypatch.setattr(current, "MAX_CASES", 5)
    path.write_text(graded("prompts: ['{{ q }}']\ntests:\n  - {id: a, vars: {q: [u, v, w]}}\n"
                           "  - {id: b, vars: {q: [x, y, z]}}\n  - {id: c, vars: {q: [x, y]}}\n"))
    read = cases_of(path)
    assert [case.id for case in read.cases] == ["a"] * 3 + ["c"] * 2
    assert [(p.code, p.path) for p in read.problems] == [("case-limit", "$.tests[1].vars")]


@needs_node
@pytest.mark.parametrize("call", ["lipsum(1)", "namespace(a=1)", "dict(a=1)"])
def test_a_function_nunjucks_has_not_is_refused_as_agentv_refuses_it(repo, call):
    # Jinja2's lipsum, namespace and dict rendered here, where AgentV's Nunjucks fails the file
    # ("Unable to call `lipsum`, which is undefined or falsey"); its range, cycler and joiner work.
    from agentv import agentv  # (the oracle, run with node)

    (repo / "e.yaml").write_text(graded(f"prompts: ['a{{{{ {call} }}}}b']\ntests: [{{id: t, vars: {{input: x}}}}]\n"))
    [said] = agentv("58f316ca2", "prompt", ["e.yaml"], repo)
    assert said["ok"] is False and "Unable to call" in said["error"]
    assert [code for *_, code in problems(repo, (repo / "e.yaml").read_text())] == ["unsupported"]
    (repo / "e.yaml").write_text(graded("prompts: ['{% for i in range(3) %}{{ i }}{% endfor %}{{ self }}']\n"
                                        "tests: [{id: t, vars: {input: x}}]\n"))
    [said] = agentv("58f316ca2", "prompt", ["e.yaml"], repo)
    assert said["cases"][0]["question"] == messages(repo, (repo / "e.yaml").read_text())["t"][0]["content"] == "012"
