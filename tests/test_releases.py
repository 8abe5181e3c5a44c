"""`--agentv VERSION`: the verdicts of an AgentV release, not only of its era's newest; each
rule where releases of an era differ, on both sides of its boundary, and, where AgentV's own
code of both releases is in tests/oracles, as that code decides."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from agentv import agentv, needs_node
from conftest import run_chatconv
from chatconv.eras.releases import (CHECKED, NEWEST, newest_release, parse_range, parse_release, release_asked,
                                    required_release, satisfies)
from chatconv.problems import ChatconvError, UsageError
from chatconv.prompt import build_prompts
from chatconv.validate import validate_path

OBJECT_CONTENT = """\
tests:
  - id: a
    criteria: answers
    input:
      - role: user
        content: {question: hi}
"""
REPO_SOURCE = """\
workspace:
  repos:
    - path: a
      source: {type: git, url: "https://example.com/a.git"}
tests:
  - id: a
    criteria: answers
    input: hi
"""
OLD_NAME = """\
tests:
  - id: a
    criteria: answers
    input: hi
    assertions:
      - {name: judge, type: llm_judge}
"""
UNNAMED_GRADER = """\
tests:
  - id: a
    criteria: answers
    input: hi
    assertions:
      - {type: latency, threshold: 100}
"""
STRING_IN_TESTS = """\
tests:
  - file://cases.yaml
"""
NO_SCHEMA = """\
evalcases:
  - id: a
    outcome: answers
    input_messages: [{role: user, content: hi}]
"""


def _errors(repo, text: str, agentv_version: str | None, name: str = "e.eval.yaml") -> list[str]:
    path = repo / name
    path.write_text(text)
    problems, _ = validate_path(path, agentv=agentv_version)
    return [p.path for p in problems if p.is_error]


@pytest.mark.parametrize("text, before, after, where", [
    (OBJECT_CONTENT, "3.8.0", "4.0.0", "$.tests[0].input[0].content"),
    (REPO_SOURCE, "4.37.2", "4.38.0", "$.workspace.repos[0].source"),
    (STRING_IN_TESTS, "3.8.0", "4.0.0", "$.tests[0]"),
    (NO_SCHEMA, "0.20.0", "1.0.0", "$"),
])
def test_each_rule_holds_from_its_release_on(repo, text, before, after, where):
    (repo / "cases.yaml").write_text("- {id: b, criteria: c, input: hi}\n")
    older, newer = _errors(repo, text, before), _errors(repo, text, after)
    if where == "$.workspace.repos[0].source":  # a key removed: refused from the boundary on
        older, newer = newer, older
    assert older == [where] and newer == []


@pytest.mark.parametrize("text, before, after", [(OLD_NAME, "3.8.0", "4.0.0"), (UNNAMED_GRADER, "3.8.0", "4.0.0")])
def test_graders_v3_reads_and_v4_skips_and_the_other_way_round(repo, text, before, after):
    older, newer = _errors(repo, text, before), _errors(repo, text, after)
    skipped = ["$.tests[0].assertions[0]"]
    assert (older, newer) == (([], skipped) if text is OLD_NAME else (skipped, []))


def test_without_agentv_the_newest_release_of_the_files_era_decides(repo):
    assert _errors(repo, OBJECT_CONTENT, None) == _errors(repo, OBJECT_CONTENT, "4.42.4") == []
    assert _errors(repo, REPO_SOURCE, None) == _errors(repo, REPO_SOURCE, "4.42.4") == ["$.workspace.repos[0].source"]
    assert newest_release("tests").version == NEWEST["tests"] == (4, 42, 4)
    assert newest_release("testcases") is None


def test_v3_takes_every_yaml_file_of_a_folder_for_an_eval_file(repo):
    (repo / "evals").mkdir()
    (repo / "evals" / "workspace.yaml").write_text("repos: [{path: a}]\n")
    (repo / ".agentv").mkdir()
    (repo / ".agentv" / "targets.yaml").write_text("targets: [{name: t}]\n")
    _, v4 = validate_path(repo, agentv="4.42.4")
    problems, v3 = validate_path(repo, agentv="3.8.0")
    assert v4.errors == 0 and len(v4.skipped_files) == 2
    assert {p.path for p in problems if p.is_error} == {"$"}  # "missing required key: one of 'tests', ..."
    assert [f.rsplit("/", 1)[-1] for f in v3.skipped_files] == ["targets.yaml"]


def test_the_cli_takes_agentv_and_refuses_what_it_cannot_mean(repo):
    path = repo / "e.eval.yaml"
    path.write_text(OBJECT_CONTENT)
    assert run_chatconv("validate", "--agentv", "v4.42.4", path).returncode == 0
    older = run_chatconv("validate", "--agentv", "v3.8.0", path)
    assert older.returncode == 1
    assert "AgentV v3.8.0 takes a message's content only as a string or a list" in older.stdout_text
    for bad, said in [("four", "is not an AgentV version"), ("0.19.0", "from 0.20.0 (2025-12) on")]:
        result = run_chatconv("validate", "--agentv", bad, path)
        assert result.returncode == 2 and said in result.stderr_text and "Traceback" not in result.stderr_text
    clash = run_chatconv("validate", "--agentv", "4.42.4", "--era", "current", path)
    assert clash.returncode == 2 and "give --agentv or --era, not both" in clash.stderr_text
    assert "--agentv VERSION" in run_chatconv("validate", "--help").stdout_text


def test_prompt_and_migrate_take_agentv(repo):
    path = repo / "e.eval.yaml"
    path.write_text(OBJECT_CONTENT)
    assert [case.id for case in build_prompts(path, agentv="4.42.4").cases] == ["a"]
    refused = run_chatconv("prompt", "--agentv", "3.8.0", path)
    assert refused.returncode == 1 and "AgentV v3.8.0 takes a message's content" in refused.stderr_text
    with pytest.raises(UsageError, match="reads tests-era eval files, not current"):
        build_prompts(path, era="current", agentv="4.42.4")
    kept = run_chatconv("migrate", "--agentv", "4.42.4", path)  # to the tests era: already there
    assert kept.returncode == 0 and kept.stdout_text == OBJECT_CONTENT
    moved = run_chatconv("migrate", "--agentv", "5.3.1", path)
    assert moved.returncode == 0 and "prompts:" in moved.stdout_text
    clash = run_chatconv("migrate", "--agentv", "4.42.4", "--to", "current", path)
    assert clash.returncode == 2 and "give --agentv or --to, not both" in clash.stderr_text


@given(st.tuples(st.integers(0, 99), st.integers(0, 99), st.integers(0, 99)), st.booleans(),
       st.sampled_from(["", "-next.1", "+build.5"]))
def test_a_version_is_read_as_written(version, prefixed, suffix):
    text = ("v" if prefixed else "") + ".".join(map(str, version)) + suffix
    if version < (0, 20, 0):
        with pytest.raises(ValueError):
            parse_release(text)
        return
    release = parse_release(text)
    assert release.version == version and release.label.lstrip("v") == text.lstrip("v")
    assert release.era == ("evalcases" if version < (3, 0, 0) else "tests" if version < (5, 0, 0) else "current")
    assert release_asked(text, release.era) == release


@needs_node
@pytest.mark.parametrize("oracle, version", [("26781d3d9", "0.20.0"), ("v2.5.8", "2.5.8")])
def test_an_evalcases_file_without_schema_gets_that_releases_verdict(repo, oracle, version):
    """AgentV 0.20.0 refuses an eval file without `$schema`; 2.5.8 takes it: as their own code says."""
    (repo / ".git").mkdir(exist_ok=True)
    for name, text in [("plain.yaml", NO_SCHEMA), ("declared.yaml", "$schema: agentv-eval-v2\n" + NO_SCHEMA)]:
        (repo / name).write_text(text)
        [theirs] = agentv(oracle, "validate", [name], repo)
        _, summary = validate_path(repo / name, agentv=version)
        assert theirs["valid"] == (summary.errors == 0), (oracle, name, theirs)


@needs_node
def test_the_checked_releases_are_the_oracles_releases():
    """CHECKED names exactly the releases the oracle bundles say they are (their own `version`)."""
    import json
    import subprocess

    from agentv import NODE, ORACLES

    said = set()
    for bundle in sorted(ORACLES.glob("agentv-*.mjs")):
        out = subprocess.run([NODE, str(bundle), "version"], capture_output=True, text=True, check=True).stdout
        said.add(parse_release(json.loads(out)["agentv"]).version)
    assert said == set(CHECKED) and len(said) == 5


TESTS_ERA_CONFIG = """\
$schema: agentv-config-v2
guideline_patterns: ["**/*.md"]
execution:
  verbose: false
  trace_file: .agentv/results/trace.jsonl
"""


@needs_node
@pytest.mark.parametrize("oracle, version", [("v4.42.4", "4.42.4"), ("58f316ca2", "5.3.1")])
def test_a_config_is_checked_in_the_era_of_the_release_asked(repo, oracle, version):
    """A tests-era config is valid to AgentV 4.42.4 and refused by HEAD (`trace_file`): chatconv
    asked for either release says as that release does, whatever era the config's keys tell."""
    (repo / ".git").mkdir(exist_ok=True)
    (repo / ".agentv").mkdir()
    (repo / ".agentv" / "config.yaml").write_text(TESTS_ERA_CONFIG)
    [theirs] = agentv(oracle, "validate", [".agentv/config.yaml"], repo)
    problems, summary = validate_path(repo / ".agentv" / "config.yaml", agentv=version)
    assert theirs["valid"] == (summary.errors == 0), (oracle, theirs, problems)
    assert [p.path for p in problems if p.is_error] == ([] if theirs["valid"] else ["$.execution.trace_file"])


@pytest.mark.parametrize("required, release", [
    ("^4.42.0", "v4.42.4"), ("~4.42", "v4.42.4"), ("4.x", "v4.42.4"), (">=4.0.0 <5.0.0", "v4.42.4"),
    ("3.8.0", "v3.8.0"), ("=3.8.0", "v3.8.0"), (">=3 <4.13", "v4.0.0"), ("^2.12.0", "v2.12.0"),
    (">=2.11.0 <3.0.0", "v2.11.0"), ("^0.20.0", "v0.20.0"), (">=5", "v5.3.1"), ("^5.3.1", "v5.3.1"),
    (">4.42.4 <5", "v4.42.5"), ("1.2.3 - 2.3.4", "v2.3.4"),
    (">=2.11.0", None), ("*", None), (">=4.0.0 <5.0.0 || ^5.3", None),  # releases of several eras
])
def test_a_required_version_puts_the_newest_release_it_allows_in_force(required, release):
    found = required_release(required)
    assert (found.label if found else None) == release
    if found is not None:
        assert satisfies(found.version, parse_range(required))


@pytest.mark.parametrize("required", ["banana", "<0.10", ">=9 <8"])
def test_a_required_version_that_names_no_release_is_said(required):
    with pytest.raises(ValueError):
        required_release(required)


versions = st.tuples(st.integers(0, 6), st.integers(0, 50), st.integers(0, 12))


@given(version=versions, op=st.sampled_from(["", "=", ">=", ">", "<", "<=", "^", "~"]),
       parts=st.integers(1, 3), other=versions)
def test_a_range_holds_as_npm_semver_reads_it(version, op, parts, other):
    """Each operator, on a full or partial version, against any other version."""
    written = ".".join(map(str, version[:parts]))
    holds = satisfies(other, parse_range(op + written))
    low = version[:parts] + (0,) * (3 - parts)
    nxt = lambda level: low[:level] + (low[level] + 1,) + (0,) * (2 - level)  # noqa: E731
    if op == "^":
        level = next((i for i, n in enumerate(low[:parts]) if n != 0), parts - 1)
        expected = low <= other < nxt(level)
    elif op == "~":
        expected = low <= other < nxt(1 if parts > 1 else 0)
    elif op in ("", "="):
        expected = low <= other < nxt(parts - 1)
    elif op == ">=":
        expected = other >= low
    elif op == "<":
        expected = other < low
    elif op == ">":
        expected = other >= nxt(parts - 1) if parts < 3 else other > low
    else:
        expected = other < nxt(parts - 1)
    assert holds == expected, (op + written, other)


def test_a_configs_required_version_decides_the_release_of_validate_prompt_and_migrate(repo):
    (repo / ".agentv").mkdir()
    config = repo / ".agentv" / "config.yaml"
    (repo / "s.eval.yaml").write_text(OBJECT_CONTENT)
    (repo / "v2.yaml").write_text(NO_SCHEMA)
    for required, errors in [("^3.8.0", 1), (">=4.0.0 <5", 0), (">=2.11.0", 0)]:
        config.write_text(f"required_version: {required!r}\n")
        problems, summary = validate_path(repo / "s.eval.yaml")
        assert summary.errors == errors, (required, problems)
        if errors:
            assert "AgentV v3.8.0 takes a message's content only as a string or a list" in problems[0].message
    config.write_text("required_version: '^5.0.0'\n")  # AgentV 5 reads no tests-era file
    [problem], summary = validate_path(repo / "s.eval.yaml")
    assert problem.is_error and problem.message.startswith("AgentV v5.3.1 reads current-era eval files, and "
                                                           "this is a tests-era one")
    assert "--agentv v4.42.4" in problem.hint and "chatconv migrate" in problem.hint
    config.write_text("required_version: '^3.8.0'\n")
    with pytest.raises(ChatconvError):
        list(build_prompts(repo / "s.eval.yaml").cases)
    config.write_text("required_version: '4.x'\n")
    result = run_chatconv("migrate", repo / "v2.yaml", "--dry-run")
    assert "0005_evalcases_to_tests: 1 record" in result.stdout_text and "0006" not in result.stdout_text
    config.write_text("required_version: 'banana'\n")
    [warning], summary = validate_path(config)
    assert warning.severity == "warning" and warning.path == "$.required_version" and summary.errors == 0


@needs_node
def test_a_file_of_an_older_era_gets_the_verdict_of_the_release_asked(repo):
    (repo / "s.eval.yaml").write_text(OBJECT_CONTENT)
    [theirs] = agentv("58f316ca2", "validate", ["s.eval.yaml"], repo)
    problems, summary = validate_path(repo / "s.eval.yaml", agentv="5.3.1")
    assert not theirs["valid"] and summary.errors == 1 and problems[0].path == "$.tests[0]"


@pytest.mark.parametrize("required, release", [(">=0.0.0 <3", "v2.5.8"), ("0.19.x || 4.x", "v4.42.4")])
def test_a_range_that_reaches_below_the_oldest_release_takes_those_it_knows(required, release):
    assert required_release(required).label == release
