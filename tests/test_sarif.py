"""`chatconv validate --format sarif`: a SARIF 2.1.0 log that the official schema accepts, whose
results are the problems the other formats report, with the locations GitHub code scanning reads."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from urllib.parse import unquote

import pytest
from jsonschema import Draft4Validator

from chatconv.cli.sarif import artifact_uri, sarif_log
from chatconv.problems import CODES, Problem
from conftest import DATA, run_chatconv

SARIF_SCHEMA = json.loads((DATA / "sarif" / "sarif-schema-2.1.0.json").read_text())


def assert_valid_sarif(log: dict) -> None:
    errors = sorted(Draft4Validator(SARIF_SCHEMA).iter_errors(log), key=lambda e: list(e.path))
    assert not errors, [f"{list(e.path)}: {e.message}" for e in errors[:5]]


@pytest.fixture(scope="module")
def broken_repo(tmp_path_factory) -> Path:
    """A folder as a repository holds it: files with errors and warnings (from tests/data), a
    path with spaces and non-ASCII, problems with no position; the run also names a file that does not exist."""
    root = tmp_path_factory.mktemp("repo")
    shutil.copytree(DATA / "traces", root / "traces")
    shutil.copytree(DATA / "formats", root / "formats")
    shared = root / "shared evals" / "déjà vu"
    shared.mkdir(parents=True)
    (shared / "review 1.yaml").write_text(
        "evalcases:\n  - {id: a, outcom: x, input_messages: [{role: human, content: hi}]}\n")
    (shared / "legacy.jsonl").write_text(
        '{"conversationId": "c", "stepIndex": 0, "input": {"role": "user", "content": "hi"},'
        ' "output": {"role": "assistant", "content": "yo"}}\n')
    (root / "empty.jsonl").write_text("")  # an empty-file problem: no line, no column
    (root / ".git").mkdir()  # the repository it is
    return root


@pytest.fixture(scope="module")
def sarif_run(broken_repo):
    result = run_chatconv("validate", "--format", "sarif", "traces", "formats", "shared evals", "empty.jsonl",
                          "gone.yaml", cwd=broken_repo)
    json_run = run_chatconv("validate", "--format", "json", "traces", "formats", "shared evals", "empty.jsonl",
                            "gone.yaml", cwd=broken_repo)
    return result, json.loads(result.stdout), json.loads(json_run.stdout)


def test_the_log_is_valid_sarif_2_1_0(sarif_run):
    result, log, _ = sarif_run
    assert_valid_sarif(log)
    assert log["version"] == "2.1.0" and len(log["runs"]) == 1
    assert result.returncode == 2  # gone.yaml cannot be read: as the text format exits


def test_results_are_the_problems_of_the_json_output(sarif_run):
    _, log, report = sarif_run
    [run] = log["runs"]
    results = run["results"]
    assert len(results) == len(report["problems"]) > 40
    for result, problem in zip(results, report["problems"]):
        assert result["ruleId"] == problem["code"]
        assert result["level"] == problem["severity"]
        assert result["message"]["text"].startswith(f"{problem['path']}: {problem['message']}")
        if problem["hint"]:
            assert result["message"]["text"].endswith(f" ({problem['hint']})")
        [location] = result["locations"]
        region = location["physicalLocation"]["region"]
        assert (region["startLine"], region["startColumn"]) == (problem["line"] or 1, problem["column"] or 1)
        uri = location["physicalLocation"]["artifactLocation"]["uri"]
        assert unquote(uri) == problem["file"] and " " not in uri and "\\" not in uri
    levels = {result["level"] for result in results}
    assert levels == {"error", "warning"}


def test_rules_are_the_codes_that_occur_with_their_descriptions(sarif_run):
    _, log, report = sarif_run
    driver = log["runs"][0]["tool"]["driver"]
    assert driver["name"] == "chatconv" and driver["version"]
    occurring = {problem["code"] for problem in report["problems"]}
    assert [rule["id"] for rule in driver["rules"]] == sorted(occurring)
    assert {"unreadable-file", "empty-file", "legacy-shape", "unknown-key", "missing-key"} <= occurring
    for rule in driver["rules"]:
        assert rule["shortDescription"]["text"] == CODES[rule["id"]]
    for result in log["runs"][0]["results"]:
        assert driver["rules"][result["ruleIndex"]]["id"] == result["ruleId"]


def test_paths_with_spaces_and_non_ascii_are_percent_encoded(sarif_run):
    _, log, _ = sarif_run
    uris = {result["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
            for result in log["runs"][0]["results"]}
    assert "shared%20evals/d%C3%A9j%C3%A0%20vu/review%201.yaml" in uris
    assert "empty.jsonl" in uris and "gone.yaml" in uris


def test_summary_goes_to_stderr_and_stdout_is_only_the_log(sarif_run):
    result, _, report = sarif_run
    assert result.stdout_text.count("\n") == 1
    assert f"{report['errors']} errors, {report['warnings']} warnings" in result.stderr_text


def test_a_clean_run_is_a_valid_log_with_no_result():
    result = run_chatconv("validate", "--format", "sarif", DATA / "recorded")
    log = json.loads(result.stdout)
    assert_valid_sarif(log)
    assert result.returncode == 0 and log["runs"][0]["results"] == [] and log["runs"][0]["tool"]["driver"]["rules"] == []


def test_select_max_warnings_and_exit_status_hold_in_sarif(broken_repo):
    result = run_chatconv("validate", "--format", "sarif", "--select", "legacy-shape", "--max-warnings", "0",
                          "shared evals", cwd=broken_repo)
    log = json.loads(result.stdout)
    assert_valid_sarif(log)
    assert result.returncode == 0 and log["runs"][0]["results"] == []
    assert "(2 ignored: select / ignore)" in result.stderr_text and "1 warning not printed" in result.stderr_text


def test_uris_of_absolute_and_odd_paths(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert artifact_uri(str(tmp_path / "a b" / "c#1.yaml")) == "a%20b/c%231.yaml"
    assert artifact_uri("./evals/../evals/x%y.yaml") == "evals/x%25y.yaml"
    outside = Path("/elsewhere/r.jsonl")
    assert artifact_uri(str(outside)) == "file:///elsewhere/r.jsonl"
    assert artifact_uri("/elsewhere/bad\udcff r.jsonl") == "file:///elsewhere/bad%FF%20r.jsonl"  # bytes not UTF-8
    log = sarif_log([Problem(str(tmp_path / "a b.yaml"), None, None, "$", "m", "warning", None, "empty-file"),
                     Problem("-", 3, 4, "$.x", "m", "error", "h", "wrong-type")])
    assert_valid_sarif(log)
    assert log["runs"][0]["results"][1]["message"]["text"] == "$.x: m (h)"
