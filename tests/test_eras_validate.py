"""Each eval-file era validated on its own terms (SPEC §1a): AgentV's own example trees, era
detection, "did you mean" from the era's keys only, the keys the current era removed, config
files and their eval_patterns, and problems in line order."""

from __future__ import annotations

import json

import shutil
import textwrap
from pathlib import Path

import pytest
import yaml

from chatconv.eras import era_names, era_of
from chatconv.kinds import config_era, detect_kind
from chatconv.schemas import load_schema
from chatconv.sources import Record
from chatconv.validate import explain, validate_path
from agentv import agentv, needs_node
from conftest import DATA, run_chatconv

TREES = ("tests-v3.8.0", "current-2026-07")
# Errors AgentV itself raises on its own examples, which chatconv reports too: (tree, file, JSON
# path, or the start of paths) -> why (tests/test_agentv_verdicts.py asks AgentV: v4.42.4, the
# tests era's last release, of the v3.8.0 tree; HEAD of the current one).
_REPOS_REMOVED = "AgentV v4.42.4: workspace.repos[].source, checkout and clone have been removed"
AGENTV_ERRORS: dict[tuple[str, str, str], str] = {
    ("current-2026-07", "examples/showcase/multi-model-benchmark/evals/benchmark.eval.yaml",
     "$.evaluate_options.repeat"): "AgentV HEAD: the repeat object shape has been removed",
    ("tests-v3.8.0", "examples/features/agent-skills-evals/csv-analyzer.EVAL.yaml", "$.tests[0].assertions[1]"):
        "AgentV v4.42.4's loader skips the rubrics grader (its validate passes it): its criteria is a string",
    ("tests-v3.8.0", "examples/features/benchmark-tooling/evals/benchmark.eval.yaml", "$.name"):
        "AgentV v3.8.0 on: its loader refuses a suite name that is not lowercase letters, digits and hyphens",
    ("tests-v3.8.0", "examples/features/env-interpolation/evals/dataset.eval.yaml", "$.tests[0].criteria"):
        "AgentV v3.8.0 on: an unset ${{ EVAL_CRITERIA }} leaves the criteria empty",
    **{("tests-v3.8.0", f"examples/features/{name}.eval.yaml", "$.workspace.repos["): _REPOS_REMOVED
       for name in ("repo-lifecycle/evals/dataset", "repo-lifecycle/evals/pool-e2e", "workspace-multi-repo/evals/dataset",
                    "workspace-setup-script/evals/dataset-vscode", "workspace-setup-script/evals/dataset")},
    **{("tests-v3.8.0", f"examples/features/workspace-shared-config/evals/{name}/dataset.eval.yaml", "$.workspace"):
       _REPOS_REMOVED + " (in the workspace file it names)" for name in ("accuracy", "regression")},
}
# The files of AgentV HEAD's examples whose tests or graders its loader skips (its validate passes
# them): an llm-rubric prompt read from a file or a command, an assertion's `target`.
# tests/test_agentv_verdicts.py checks each against AgentV's own loader.
HEAD_LOADER_SKIPS = {
    "showcase/multi-model-benchmark/evals/benchmark.eval.yaml",  # (its loader stops at `repeat` first)
    "features/assert-set/evals/suite.yaml",
    "features/basic/evals/suite.yaml",
    "features/default-graders/evals/suite.yaml",
    "features/file-changes-graders/evals/suite.yaml",
    "features/multi-turn-conversation/evals/suite.yaml",
    "features/prompt-template-sdk/evals/suite.yaml",
    "features/weighted-graders/evals/suite.yaml",
    "red-team/archetypes/coding-agent/suites/destructive-git.eval.yaml",
    "red-team/archetypes/coding-agent/suites/mcp-tool-description-poisoning.eval.yaml",
    "red-team/archetypes/coding-agent/suites/readme-issue-url-injection.eval.yaml",
    "red-team/archetypes/coding-agent/suites/sandbox-escape.eval.yaml",
    "red-team/archetypes/coding-agent/suites/screenshot-pii-upload.eval.yaml",
    "red-team/archetypes/coding-agent/suites/secrets-exfiltration.eval.yaml",
    "red-team/archetypes/coding-agent/suites/supply-chain-slopsquatting.eval.yaml",
    "red-team/archetypes/customer-facing-agent/suites/bola-bfla.eval.yaml",
    "red-team/archetypes/customer-facing-agent/suites/compliance-boundary-violation.eval.yaml",
    "red-team/archetypes/customer-facing-agent/suites/cross-session-leak.eval.yaml",
    "red-team/archetypes/customer-facing-agent/suites/escalation-hijack.eval.yaml",
    "red-team/archetypes/customer-facing-agent/suites/pii-cross-customer-disclosure.eval.yaml",
    "red-team/archetypes/customer-facing-agent/suites/support-doc-indirect-injection.eval.yaml",
    "red-team/archetypes/customer-facing-agent/suites/unauthorized-action-social-engineering.eval.yaml",
    "red-team/suites/agentic-memory-poisoning.eval.yaml",
    "red-team/suites/agentic-tool-misuse.eval.yaml",
    "red-team/suites/atlas-v5.4-agentic.eval.yaml",
    "red-team/suites/llm01-prompt-injection.eval.yaml",
    "red-team/suites/llm02-insecure-output.eval.yaml",
    "red-team/suites/llm06-excessive-agency.eval.yaml",
    "red-team/suites/llm07-system-prompt-leakage.eval.yaml",
    "red-team/suites/llm08-vector-embedding.eval.yaml",
    "red-team/suites/llm10-unbounded-consumption.eval.yaml",
    "showcase/cw-incident-triage/evals/suite.yaml",
    "showcase/offline-grader-benchmark/evals/setup-a.eval.yaml",
    "showcase/offline-grader-benchmark/evals/setup-b.eval.yaml",
    "showcase/psychotherapy/evals/encouragement.eval.yaml",
    "showcase/psychotherapy/evals/listening.eval.yaml",
    "showcase/psychotherapy/evals/routing.eval.yaml",
}


@pytest.fixture(scope="session")
def trees(tmp_path_factory) -> dict[str, Path]:
    """AgentV's example trees, copied once; each its own repository root (file references that
    start with `/` start there)."""
    root = tmp_path_factory.mktemp("agentv")
    copies = {}
    for name in TREES:
        copies[name] = shutil.copytree(DATA / "agentv" / name, root / name)
        (copies[name] / ".git").mkdir()
    return copies


def _eval_files(tree: Path) -> list[Path]:
    """The eval files and configs a user of the tree names one by one."""
    names = ("*.eval.yaml", "suite.yaml", "EVAL.yaml", ".agentv/config.yaml")
    return sorted({path for pattern in names for path in tree.rglob(pattern)})


def _unexpected_errors(name: str, tree: Path, problems) -> list[str]:
    def expected(p) -> bool:
        file = Path(p.file).relative_to(tree).as_posix()
        if name == "current-2026-07" and p.code == "skipped-grader" and file.removeprefix("examples/") in HEAD_LOADER_SKIPS:
            return True
        return any((name, file) == (tree_name, known) and p.path.startswith(path)
                   for tree_name, known, path in AGENTV_ERRORS)

    return [f"{p.file}:{p.line}: {p.path}: {p.message}" for p in problems if p.is_error and not expected(p)]


def _warnings_are_allowed(problems) -> None:
    # Unsupported constructs, unknown config keys and older spellings warn; nothing else may.
    allowed = {"unsupported", "unknown-config-key", "legacy-shape"}
    assert all(p.code in allowed for p in problems if not p.is_error), [p for p in problems if not p.is_error]


@pytest.mark.parametrize("name", TREES)
def test_agentv_example_folders_validate_without_errors(trees, name):
    tree = trees[name]
    problems, summary = validate_path(tree / "examples")
    assert _unexpected_errors(name, tree, problems) == []
    _warnings_are_allowed(problems)
    assert summary.files >= 60  # the eval files were found and checked, not skipped


@pytest.mark.parametrize("name", TREES)
def test_agentv_eval_files_named_one_by_one_validate_without_errors(trees, name):
    tree = trees[name]
    files = _eval_files(tree)
    assert len(files) >= 50
    result = run_chatconv("validate", "--format", "json", *map(str, files))
    assert result.returncode == (1 if any(key[0] == name for key in AGENTV_ERRORS) else 0), result.stdout_text[-3000:]
    problems = []
    for path in files:
        problems += validate_path(path)[0]
    assert _unexpected_errors(name, tree, problems) == []


def test_each_example_file_is_read_in_its_trees_era(trees):
    expected = {"tests-v3.8.0": "tests", "current-2026-07": "current"}
    for name, tree in trees.items():
        for path in _eval_files(tree):
            data = yaml.safe_load(path.read_text())
            if path.parent.name == ".agentv":
                continue
            if set(data) <= {"name", "description", "tests"} and isinstance(data["tests"], str):
                # Keys both eras have (`tests: ./cases/`): the older era's, valid in both.
                assert era_of(data).NAME == "tests", path
                continue
            assert era_of(data).NAME == expected[name], path


def test_the_configs_are_configs_whatever_their_keys(trees):
    quickstart = trees["current-2026-07"] / "examples/features/readme-quickstart/.agentv/config.yaml"
    assert "tests:" in quickstart.read_text()  # a key an eval file has: the name decides
    problems, _ = validate_path(quickstart)
    assert [(p.severity, p.code, p.path) for p in problems] == [("warning", "unknown-config-key", "$.tests")]


# ---------------------------------------------------------------------------------------------
# Era detection


def _write(repo: Path, body: str, name: str = "e.yaml") -> Path:
    path = repo / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(body))
    return path


@pytest.mark.parametrize("data, era", [
    ({"testcases": []}, "testcases"),
    ({"evalcases": []}, "evalcases"),
    ({"tests": [{"id": "a", "input": "hi"}]}, "tests"),
    ({"tests": "./cases.yaml", "input": "hi"}, "tests"),
    ({"prompts": ["{{ input }}"], "tests": []}, "current"),
    ({"tests": [{"id": "a", "vars": {"input": "hi"}}]}, "current"),
    ({"scenarios": ["file://s.yaml"]}, "current"),
    ({"$schema": "agentv-eval-v2", "tests": []}, "evalcases"),  # $schema wins over the keys
    ({"$schema": "https://chatconv.dev/schemas/eval-tests.json", "prompts": []}, "tests"),
])
def test_the_era_is_told_from_schema_then_keys(data, era):
    assert era_of(data).NAME == era


@pytest.mark.parametrize("data", [
    {"providers": [{"id": "default"}]},  # .agentv/providers.yaml
    {"assert": [{"type": "is-json"}]},  # an assertion template
    {"id": "a", "vars": {"input": "hi"}, "assert": []},  # a row of a JSONL case file
    {"test_id": "a", "score": 1, "assertions": []},  # a result row
])
def test_agentvs_other_files_are_no_eval_files(data):
    assert era_of(data) is None and detect_kind(data, "x.yaml") is None


@pytest.mark.parametrize("data, era", [
    # v3.8 took a suite-level `assert` as an alias of `assertions`: the tests' keys tell the era.
    ({"assert": [{"type": "contains", "value": "4"}], "tests": [{"id": "a", "criteria": "c", "input": "2+2?"}]},
     "tests"),
    ({"assert": [{"type": "contains", "value": "4"}], "execution": {"target": "x"}, "tests": "./cases.yaml"}, "tests"),
    ({"assert": ["says 4"], "tests": [{"id": "a", "vars": {"input": "2+2?"}}]}, "current"),
    ({"providers": ["default"], "tests": "./cases.yaml"}, "current"),
])
def test_a_suite_assert_is_read_in_the_era_its_tests_are_written_in(data, era):
    assert era_of(data).NAME == era


def test_current_keys_that_the_tests_era_had_too_keep_a_file_current(repo):
    # `input_files` and `criteria` are current keys: beside `providers` they do not make a file
    # one of the tests era; a key the current schema marks removed does.
    assert era_of({"providers": ["x"], "input_files": ["a.md"], "tests": "file://cases.jsonl"}).NAME == "current"
    assert era_of({"providers": ["x"], "tests": [{"id": "a", "criteria": "c"}]}).NAME == "current"
    assert era_of({"providers": ["x"], "workspace": {}, "tests": "file://cases.jsonl"}).NAME == "tests"
    assert era_of({"providers": ["x"], "tests": [{"id": "a", "expected_output": "4"}]}).NAME == "tests"
    path = _write(repo, "providers: [x]\ninput_files: [a.md]\ntests: file://cases.jsonl\n")
    (repo / "a.md").write_text("a\n")
    (repo / "cases.jsonl").write_text('{"id": "a", "vars": {"input": "hi"}}\n')
    assert not [p for p in validate_path(path)[0] if p.code == "unknown-key"]


def test_the_tests_era_marks_are_the_tests_era_keys_the_current_schema_removed():
    from chatconv.eras import current

    def removed(properties):
        return {key for key, value in properties.items() if "removed" in value}

    newest, tests = load_schema("eval-current"), load_schema("eval-tests")
    assert set(current.TESTS_ERA_SUITE_KEYS) == removed(newest["properties"]) & set(tests["properties"])
    assert (set(current.TESTS_ERA_CASE_KEYS)
            == removed(newest["$defs"]["case"]["properties"]) & set(tests["$defs"]["case"]["properties"]))


def test_a_prompt_object_in_a_prompts_list_is_checked_by_the_schema(repo):
    path = _write(repo, "prompts:\n  - raw: 5\ntests:\n  - vars: {input: hi}\n")
    [problem] = validate_path(path)[0]
    assert (problem.line, problem.path, problem.message) == (2, "$.prompts[0].raw", "expected string, got integer 5")


def test_era_forces_the_schema(repo):
    path = _write(repo, """\
        prompts: ["{{ input }}"]
        tests:
          - id: a
            vars: {input: hi}
            assert: []
    """)
    assert validate_path(path)[0] == []
    problems = validate_path(path, era="tests")[0]
    # As AgentV v4.42.4 says: `prompts` ignored (a warning), so the test has no input (an error)
    assert [(p.line, p.path, p.severity, p.code) for p in problems] == [
        (1, "$.prompts", "warning", "unknown-key"), (3, "$.tests[0]", "error", "skipped-test")]
    result = run_chatconv("validate", "--era", "tests", str(path))
    assert result.returncode == 1 and "$.prompts: unknown key 'prompts', ignored by AgentV" in result.stdout_text
    assert run_chatconv("validate", "--era", "nope", str(path)).returncode == 2
    assert "--era" in run_chatconv("validate", "--help").stdout_text


def test_a_file_named_with_era_is_checked_as_that_era_even_with_keys_of_no_era(repo):
    path = _write(repo, """\
        description: cases under a key no era has
        items:
          - vars: {input: hi}
    """)
    problems = validate_path(path, era="tests")[0]
    assert [(p.line, p.path, p.code) for p in problems] == [(1, "$", "missing-key"), (2, "$.items", "unknown-key")]
    assert "cannot tell what kind" not in run_chatconv("validate", "--era", "tests", str(path)).stdout_text
    # In a folder, a file of no era stays one that is not chatconv's (skipped), --era or not.
    assert validate_path(repo, era="tests")[0] == []


def test_a_file_of_no_era_is_a_clear_error(repo):
    path = _write(repo, "description: what?\nproviders: [default]\n")
    [problem] = validate_path(path)[0]
    assert problem.code == "unknown-kind" and "cannot tell what kind of record this is" in problem.message
    assert "--kind" in problem.hint


# ---------------------------------------------------------------------------------------------
# "Did you mean": the era's own keys, close ones only


@pytest.mark.parametrize("body, path, suggestion", [
    ("tests:\n  - id: a\n    criterias: c\n    input: hi\n", "$.tests[0].criterias", "criteria"),
    ("prompts: ['{{ input }}']\nasert: []\ntests: [{id: a, vars: {input: hi}}]\n", "$.asert", "assert"),
    ("prompt: ['{{ input }}']\nproviders: [default]\ntests: [{id: a, vars: {input: hi}}]\n", "$.prompt", "prompts"),
    ("evalcases:\n  - {id: a, outcom: x, input_messages: [{role: user, content: hi}]}\n", "$.evalcases[0].outcom",
     "outcome"),
    ("testcases:\n  - {id: a, mesages: [{role: user, content: hi}]}\n", "$.testcases[0].mesages", "messages"),
])
def test_each_eras_typo_gets_that_eras_key(repo, body, path, suggestion):
    problems = validate_path(_write(repo, body))[0]
    [typo] = [p for p in problems if p.path == path]
    assert typo.code == "unknown-key" and typo.hint == f"did you mean {suggestion!r}?"


def test_tags_never_suggests_target(repo):
    path = _write(repo, "tags: [smoke]\nevalcases:\n"
                        "  - {id: a, outcome: x, input_messages: [{role: user, content: hi}]}\n")
    [problem] = validate_path(path)[0]
    assert problem.path == "$.tags" and "did you mean" not in problem.hint


def test_a_key_already_present_is_never_suggested(repo):
    path = _write(repo, "tests:\n  - id: a\n    criteria: c\n    criterias: d\n    input: hi\n")
    [problem] = validate_path(path)[0]
    assert problem.path == "$.tests[0].criterias" and "did you mean" not in problem.hint


def test_a_removed_key_is_never_suggested(repo):
    path = _write(repo, "prompts: ['{{ input }}']\ntests:\n  - id: a\n    vars: {input: hi}\n    inputs: hi\n")
    [problem] = validate_path(path)[0]
    assert problem.path == "$.tests[0].inputs" and "'input'" not in problem.hint


# The keys AgentV's published schemas (v3.8.0; 2026-07, less those it refuses) take, and the keys
# its own examples use beside them: (era, where a case sits, top-level keys, case keys).
AGENTV_KEYS = [
    ("tests", ("tests", 0),
     "$schema name description version author tags license requires input input_files tests eval_cases target "
     "execution assertions assert workspace dataset evaluator",
     "id criteria expected_outcome input input_files expected_output assertions assert evaluators execution "
     "workspace metadata conversation_id dataset note description reference_answer rubrics depends_on "
     "on_dependency_failure mode turns aggregation on_turn_failure window_size"),
    ("current", ("tests", 0),
     "$schema name description category version author tags license requires prompts input_files tests defaults "
     "providers timeout_seconds evaluate_options threshold default_test environment scenarios derived_metrics "
     "output_path env nunjucks_filters extensions assert governance",
     "id description vars provider providers prompts input_files assert assert_scoring_function options threshold "
     "execution run environment metadata conversation_id suite depends_on on_dependency_failure mode turns "
     "aggregation on_turn_failure window_size criteria"),
]


@pytest.mark.parametrize("era, case_path, top_keys, case_keys", AGENTV_KEYS)
def test_a_key_of_the_era_is_never_unknown(era, case_path, top_keys, case_keys):
    # Every value is wrong: only whether each key is known matters here.
    data = {key: None for key in top_keys.split()}
    data[case_path[0]] = [{key: None for key in case_keys.split()}]
    problems = explain(Record("e.yaml", 1, data), era_of({}, era).SCHEMA)  # what a failing file is told
    assert problems and [p.path for p in problems if p.code in ("unknown-key", "removed-key")] == []


# ---------------------------------------------------------------------------------------------
# Keys the current era removed: AgentV's own guidance


@pytest.mark.parametrize("body, path, replacement", [
    ("prompts: ['{{ input }}']\ninput: hi\ntests: [{id: a, vars: {input: hi}, assert: []}]\n", "$.input", "`prompts`"),
    ("prompts: ['{{ input }}']\ntests:\n  - {id: a, input: hi}\n", "$.tests[0].input", "`vars.input`"),
    ("prompts: ['{{ input }}']\nevalcases: []\ntests: [{id: a, vars: {input: hi}, assert: []}]\n", "$.evalcases",
     "rename it to `tests`"),
    ("prompts: ['{{ input }}']\nexecution: {target: x}\ntests: [{id: a, vars: {input: hi}, assert: []}]\n", "$.execution",
     "`evaluate_options"),
    ("prompts: ['{{ input }}']\ntests:\n  - {id: a, vars: {input: hi}, expected_output: hi}\n",
     "$.tests[0].expected_output", "`vars.expected_output`"),
])
def test_removed_keys_name_agentvs_replacement(repo, body, path, replacement):
    [problem] = validate_path(_write(repo, body))[0]
    assert (problem.path, problem.code, problem.severity) == (path, "removed-key", "error")
    key = path.rsplit(".", 1)[-1].split("[")[0]
    assert problem.message.startswith(f"{key!r} was removed in this era (AgentV rejects it): ")
    assert replacement in problem.message and "unknown key" not in problem.message


# ---------------------------------------------------------------------------------------------
# Config files and eval_patterns


def test_unknown_config_keys_are_warnings(repo):
    path = _write(repo, "$schema: agentv-config-v2\nguideline_patterns: ['**/*.md']\nretries: 3\n",
                  ".agentv/config.yaml")
    [problem] = validate_path(path)[0]
    assert (problem.severity, problem.code, problem.path) == ("warning", "unknown-config-key", "$.retries")
    assert run_chatconv("validate", str(path)).returncode == 0


def test_guideline_patterns_beside_current_keys_is_no_unknown_key(repo):
    # chatconv reads guideline_patterns whatever the config's era (prompt's guidelines).
    _write(repo, "- id: openai\n  label: default\n", ".agentv/p.yaml")
    path = _write(repo, "guideline_patterns: ['**/*.md']\nproviders: file://p.yaml\n", ".agentv/config.yaml")
    assert config_era({"guideline_patterns": [], "providers": ""}).NAME == "current"
    assert validate_path(path)[0] == []


@pytest.mark.parametrize("config, files, expected", [
    ("providers: file://missing.yaml\n", {}, ["1:1: $.providers: the providers file: file 'missing.yaml' not found"]),
    ("providers: file://p.yaml\n", {"p.yaml": "default: {id: openai}\n"},
     ["1:1: $.providers: the providers file file://p.yaml must hold a YAML list"]),
    ("providers: file://p.yaml\n", {"p.yaml": "- [\n"}, ["1:1: $.providers: the providers file 'p.yaml' does not read"]),
    ('providers: "file://p\\0.yaml"\n', {}, ["1:1: $.providers: the providers file: file 'p\\x00.yaml' cannot be looked up"]),
    ("providers: file://p.yaml\n", {"p.yaml": "- {id: openai, provider: x}\n"},
     ["1:1: $.providers: providers[0] in file://p.yaml: 'provider' is not taken by AgentV"]),
    ("providers:\n  - id: openai\n    provider: azure\n", {},
     ["3:5: $.providers[0].provider: providers[0]: 'provider' is not taken by AgentV"]),
    ("providers: [{id: openai, label: llm}]\ndefaults:\n  provider: llm\n  grader: judge\n", {},
     ["4:3: $.defaults.grader: 'judge' does not match a configured provider label or id"]),
    ("providers: [{id: openai}]\nexecution:\n  otel_file: o.json\n", {},
     ["3:3: $.execution.otel_file: unknown key 'otel_file': AgentV refuses it"]),
    ("providers: file://p.yaml\ndefaults: {provider: default, grader: openai}\n",
     {"p.yaml": "- id: openai\n  label: default\n"}, []),
])
def test_a_current_config_is_checked_as_agentv_checks_it(repo, config, files, expected):
    for name, text in files.items():
        _write(repo, text, f".agentv/{name}")
    path = _write(repo, config, ".agentv/config.yaml")
    found = [f"{p.line}:{p.column}: {p.path}: {p.message}" for p in validate_path(path)[0]]
    assert len(found) == len(expected) and all(f.startswith(e) for f, e in zip(found, expected)), found


@pytest.mark.parametrize("written, message", [
    ('"a\\0b"', "the workspace file: file 'a\\x00b' cannot be looked up: embedded null byte"),
    ("x" * 300, "the workspace file: file 'xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx...' "
                "cannot be looked up: file name too long"),
    ("ws", "the workspace file: file 'ws' is a folder"),
    ("../../../../../../etc/passwd", "the workspace file: file '../../../../../../etc/passwd' resolves outside"),
    ("bad.yaml", "the workspace file 'bad.yaml' does not read: bad.yaml:2:1: invalid YAML"),
])
def test_a_workspace_file_that_cannot_be_read_is_a_message(repo, written, message):
    (repo / "evals" / "ws").mkdir(parents=True)
    _write(repo, "repos: [\n", "evals/bad.yaml")
    path = _write(repo, f"workspace: {written}\ntests:\n  - {{id: a, criteria: c, input: hi}}\n", "evals/s.eval.yaml")
    result = run_chatconv("validate", path)  # no traceback, exit 1
    assert result.returncode == 1 and f"$.workspace: {message}" in result.stdout_text, result.stdout_text


@pytest.mark.parametrize("workspace_file, expected", [
    (None, ["$.workspace: the workspace file: file 'ws/workspace.yaml' not found"]),
    ("repos:\n  - path: ./r\n    repo: https://example.com/r.git\n", []),
    ("repos:\n  - path: ./r\n    source: {type: git}\n",
     ["$.workspace: the workspace file 'ws/workspace.yaml', repos[0]: 'source' was removed within this era "
      "(AgentV v4.42.4 rejects it): use workspace.repos[].repo"]),
])
def test_a_workspace_file_is_read_as_agentv_reads_it(repo, workspace_file, expected):
    if workspace_file is not None:
        _write(repo, workspace_file, "evals/ws/workspace.yaml")
    path = _write(repo, "workspace: ws/workspace.yaml\ntests:\n  - {id: a, criteria: c, input: hi}\n",
                  "evals/suite.eval.yaml")
    found = [f"{p.path}: {p.message}" for p in validate_path(path)[0]]
    assert len(found) == len(expected) and all(f.startswith(e) for f, e in zip(found, expected)), found


def test_a_config_with_only_eval_patterns_is_a_config(repo):
    path = _write(repo, "eval_patterns: ['**/evals/**/suite.yaml']\n", ".agentv/config.yaml")
    assert detect_kind({"eval_patterns": []}, str(path)) == "config"
    assert validate_path(path)[0] == []


@pytest.mark.parametrize("data, era", [
    ({"guideline_patterns": []}, "current"),  # chatconv reads it in every era: the newest
    ({"guideline_patterns": [], "eval_patterns": [], "trace_file": 1}, "current"),
    ({"eval_patterns": [], "providers": "file://p.yaml"}, "current"),
    ({"something": 1}, "current"),  # no era's config explains it: the newest
    ({"execution": {"verbose": True, "trace_file": "t.jsonl"}}, "tests"),  # current AgentV refuses trace_file
    ({"providers": [], "execution": {"otel_file": "o.json"}}, "current"),  # providers: current; otel_file refused
])
def test_a_configs_era_is_told_from_its_keys(data, era):
    assert config_era(data).NAME == era


def test_eval_patterns_name_eval_files_in_a_folder(repo):
    _write(repo, "eval_patterns: ['**/evals/**/suite.yaml']\n", ".agentv/config.yaml")
    named = _write(repo, "description: no tests yet\n", "area/evals/suite.yaml")
    _write(repo, "description: not an eval file\n", "area/other.yaml")
    problems, summary = validate_path(repo)
    assert [(p.file, p.path, p.code) for p in problems] == [(str(named), "$", "missing-key")]
    assert "'tests'" in problems[0].message and summary.skipped == 1


def test_an_eval_pattern_too_big_to_expand_matches_nothing_and_is_reported(repo):
    config = _write(repo, "eval_patterns: ['**/*.{1..5000}x', '**/suite.yaml']\n", ".agentv/config.yaml")
    named = _write(repo, "description: no tests yet\n", "evals/suite.yaml")
    problems, _ = validate_path(repo)
    assert [(p.file, p.line, p.path, p.severity, p.code) for p in problems] == [
        (str(config), 1, "$.eval_patterns[0]", "warning", "bad-glob"), (str(named), 1, "$", "error", "missing-key")]
    assert "more than 1000 patterns" in problems[0].message
    result = run_chatconv("validate", str(repo))
    assert result.returncode == 1 and "Traceback" not in result.stderr_text
    # prompt reads the config for its guideline_patterns alone: the pattern does not stop it.
    from chatconv.prompt.context import config_patterns
    assert config_patterns(config) == []


def test_eval_patterns_are_relative_to_the_folder_holding_agentv(repo):
    _write(repo, "eval_patterns: ['evals/*.yaml']\n", "project/.agentv/config.yaml")
    inside = _write(repo, "description: x\n", "project/evals/a.yaml")
    _write(repo, "description: x\n", "evals/a.yaml")  # above the project: no config names it
    problems, _ = validate_path(repo)
    assert {p.file for p in problems} == {str(inside)}


# ---------------------------------------------------------------------------------------------
# Order


def test_problems_come_out_by_line_then_column(repo):
    path = _write(repo, """\
        zzz: 1
        tests:
          - id: a
            input: {bad: object}
            criterias: c
            aaa: 2
        description: [not, a, string]
    """)
    problems = validate_path(path)[0]
    places = [(p.line, p.column) for p in problems]
    assert places == sorted(places) and len(places) == 5


def test_files_keep_their_order_and_each_is_sorted(repo):
    first = _write(repo, "zzz: 1\ntests: [{id: a, input: hi, criteria: c, bbb: 1}]\n", "a.yaml")
    second = _write(repo, "tests: [{id: a, input: hi, criteria: c, ccc: 1}]\nyyy: 2\n", "b.yaml")
    problems = validate_path(repo)[0]
    assert [(Path(p.file).name, p.line) for p in problems] == [("a.yaml", 1), ("a.yaml", 2), ("b.yaml", 1),
                                                              ("b.yaml", 2)]
    assert {p.file for p in problems} == {str(first), str(second)}


def test_schema_lists_the_eras():
    listing = run_chatconv("schema").stdout_text
    for name in era_names():
        assert f"\n{name} " in listing
    assert "eval schema eval-tests, config schema config-tests" in listing
    printed = run_chatconv("schema", "eval-tests")
    assert printed.returncode == 0 and '"$id": "https://chatconv.dev/schemas/eval-tests.json"' in printed.stdout_text


def test_a_config_with_unknown_keys_no_longer_blocks_prompt(repo):
    _write(repo, "eval_patterns: ['**/*.yaml']\nexecution: {verbose: true}\nproviders: file://p.yaml\n"
                 "required_version: '>=4'\nretries: 3\n", ".agentv/config.yaml")
    path = _write(repo, "evalcases:\n  - {id: a, outcome: x, input_messages: [{role: user, content: hi}]}\n")
    result = run_chatconv("prompt", str(path))
    assert result.returncode == 0 and '"question":"hi"' in result.stdout_text
    # what prompts do not read (here a providers file that is missing) is said, and does not stop them
    assert "warning: $.providers: the providers file" in result.stderr_text
    assert run_chatconv("validate", repo / ".agentv" / "config.yaml").returncode == 1


@pytest.mark.parametrize("name", ["eval-testcases", "eval-tests", "eval-current", "config-tests", "config-current"])
def test_every_property_of_an_era_schema_says_what_it_is(name):
    undescribed = []
    stack = [("$", load_schema(name))]
    while stack:
        where, node = stack.pop()
        if isinstance(node, dict):
            for key, sub in node.get("properties", {}).items():
                description = sub.get("description") if isinstance(sub, dict) else None
                if not (isinstance(description, str) and description and "\n" not in description):
                    undescribed.append(f"{where}.{key}")
            stack.extend((f"{where}.{key}", value) for key, value in node.items())
        elif isinstance(node, list):
            stack.extend((where, item) for item in node)
    assert undescribed == []


def test_a_tests_era_conversation_is_valid_and_played_turn_by_turn(repo):
    path = _write(repo, """\
        tests:
          - id: a
            criteria: c
            input: hi
            mode: conversation
            turns:
              - input: next
    """)
    assert validate_path(path)[0] == []
    result = run_chatconv("prompt", path)
    assert result.returncode == 0 and result.stderr_text == ""
    assert json.loads(result.stdout_text) == {"id": "a/turn-1", "question": "next", "chatPrompt": [
        {"role": "user", "content": "hi"}, {"role": "user", "content": "next"}]}


SCORE_RANGES = """\
prompts: ["{{ input }}"]
tests:
  - id: a
    vars: {input: hi}
    assert:
      - type: llm-rubric
        value: [{id: r, outcome: o, score_ranges: {0: bad, 10: good, zz_note: [y]}}]
  - id: b
    vars: {input: hi}
    assert:
      - type: llm-rubric
        value: [{id: r, outcome: o, score_ranges: {3: bad, 10: good}}]
  - id: c
    vars: {input: hi}
    assert:
      - type: llm-rubric
        value: [{id: r, outcome: o, score_ranges: {0: bad, "10": good}}]
"""


@needs_node
def test_a_score_ranges_map_agentv_cannot_read_skips_the_test_as_its_loader_does(repo):
    path = repo / "suite.yaml"
    path.write_text(SCORE_RANGES)
    [loaded] = agentv("58f316ca2", "load", ["suite.yaml"], repo)
    problems, _ = validate_path(path)
    assert loaded["ids"] == ["c"] and len(loaded["messages"]) == 2
    assert [p.path for p in problems if p.is_error] == ["$.tests[0].assert[0]", "$.tests[1].assert[0]"]


@needs_node
def test_a_rubric_item_agentv_cannot_read_is_skipped_as_its_loader_skips_it(repo):
    skipped, ours = _skipped_and_refused(repo, "      - type: llm-rubric\n        value: [{id: r1, outcome: o}, "
                                               "{id: r2}, {id: r3, criteria: c}, text, 5]\n")
    assert len(skipped) == 2 and "'r2'" in skipped[0] and "index 4" in skipped[1]
    assert ours == ["$.tests[0].assert[0].value[1]", "$.tests[0].assert[0].value[4]"]


def _skipped_and_refused(repo, assertions: str) -> tuple[list[str], list[str]]:
    """What AgentV HEAD's loader skips of a test with these assertions (YAML, under `assert:`),
    and the paths of chatconv's errors."""
    path = repo / "suite.yaml"
    path.write_text('prompts: ["{{ input }}"]\ntests:\n  - id: a\n    vars: {input: hi}\n    assert:\n' + assertions)
    [loaded] = agentv("58f316ca2", "load", ["suite.yaml"], repo)
    problems, _ = validate_path(path)
    return [m["text"] for m in loaded["messages"] if "Skipping" in m["text"]], [p.path for p in problems if p.is_error]


@pytest.mark.parametrize("key", ["nan", "inf", "1_0", "-1"])
def test_a_score_key_javascript_does_not_read_as_a_score_is_said_not_a_traceback(repo, key):
    path = repo / "suite.yaml"
    path.write_text('prompts: ["{{ input }}"]\ntests:\n  - id: a\n    vars: {input: hi}\n    assert:\n'
                    f"      - type: llm-rubric\n        value: [{{id: r, outcome: o, score_ranges: {{0: bad, {key}: good}}}}]\n")
    problems, summary = validate_path(path)
    assert summary.errors == 1 and problems[0].path == "$.tests[0].assert[0]" and key in problems[0].message


@needs_node
def test_an_assertion_without_a_type_inside_an_assert_set_is_skipped_as_agentvs_loader_skips_it(repo):
    skipped, ours = _skipped_and_refused(repo, "      - type: assert-set\n        assert:\n"
                                               "          - {type: contains, value: a}\n          - {value: b}\n"
                                               "          - {type: 5, value: b}\n")
    assert sum("Skipping evaluator with invalid type" in text for text in skipped) == 2
    assert ours == ["$.tests[0].assert[0].assert[1]", "$.tests[0].assert[0].assert[2]"]


@needs_node
@pytest.mark.parametrize("default_test", ["{options: {rubric_prompt: 'Grade {{ output }}'}}", "file://default.yaml", "{}"])
def test_an_llm_rubric_without_a_value_takes_the_default_tests_rubric_prompt_as_agentv_does(repo, default_test):
    (repo / "default.yaml").write_text("options:\n  rubric_prompt: Grade the answer.\n")
    path = repo / "suite.yaml"
    path.write_text(f'prompts: ["{{{{ input }}}}"]\ndefault_test: {default_test}\ntests:\n  - id: a\n'
                    "    vars: {input: hi}\n    assert:\n      - type: llm-rubric\n")
    [loaded] = agentv("58f316ca2", "load", ["suite.yaml"], repo)
    _, summary = validate_path(path)
    skipped = any("Skipping" in m["text"] for m in loaded["messages"])
    assert skipped == (default_test == "{}") and (summary.errors > 0) == skipped


@needs_node
@pytest.mark.parametrize("kind", ["word-count", "not-bleu", "contains-json"])
def test_a_promptfoo_type_agentv_leaves_to_the_future_is_refused_as_agentv_refuses_it(repo, kind):
    path = repo / "suite.yaml"
    path.write_text(f'prompts: ["{{{{ input }}}}"]\ntests:\n  - id: a\n    vars: {{input: hi}}\n    assert:\n'
                    f"      - {{type: {kind}, value: 3}}\n")
    [theirs] = agentv("58f316ca2", "validate", ["suite.yaml"], repo)
    problems, _ = validate_path(path)
    assert not theirs["valid"] and [p.path for p in problems if p.is_error] == ["$.tests[0].assert[0]"]
