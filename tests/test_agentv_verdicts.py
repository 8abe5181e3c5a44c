"""chatconv's verdict on each of AgentV's own example files is AgentV's own, as its `validate`
and its loader give it: valid or invalid, file by file (tests/agentv.py runs AgentV's code with
node)."""

from __future__ import annotations

import hashlib
import os
import re

import pytest
import yaml

from agentv import ORACLES, agentv, copy_tree, needs_node, yaml_files
from chatconv.validate import validate_path

# (example tree, an AgentV release whose verdicts chatconv gives on it: the newest release of the
# tree's era, chatconv's default; or the release asked for with --agentv)
PAIRS = [("tests-v3.8.0", "v4.42.4"), ("current-2026-07", "58f316ca2"), ("tests-v3.8.0", "v3.8.0")]
ASKED = {"v3.8.0": "3.8.0", "v4.42.4": "4.42.4"}  # --agentv for the release; HEAD's is the default
# The kinds of file both check; AgentV's targets files are not chatconv's to check.
KINDS = ("eval", "config")

# Where chatconv does not give AgentV's verdict yet (issue 28): file -> what AgentV says. The
# test fails when an entry is wrong either way, so the list can only shrink.
NOT_YET: dict[tuple[str, str], dict[str, str]] = {
    ("tests-v3.8.0", "v4.42.4"): {},
    ("current-2026-07", "58f316ca2"): {},
    ("tests-v3.8.0", "v3.8.0"): {},
}


def chatconv_verdict(path, agentv: str | None = None) -> str:
    problems, summary = validate_path(path, skip_unknown=True, agentv=agentv)
    if summary.skipped:
        return "skipped"
    return "invalid" if summary.errors else "valid"


@pytest.fixture(scope="module", params=PAIRS, ids=["-".join(pair) for pair in PAIRS])
def verdicts(request, tmp_path_factory):
    """(pair, [(file, AgentV's kind, AgentV's verdict, chatconv's verdict)]) for every YAML file
    of the tree that AgentV checks as one of KINDS."""
    tree, version = request.param
    root = copy_tree(tree, tmp_path_factory.mktemp("agentv"))
    # ${{ NAME }} in AgentV's files reads the environment: both read this process's.
    checked = [line for line in agentv(version, "validate", yaml_files(root), root) if line["fileType"] in KINDS]
    # AgentV's verdict on an eval file is its loader's too: a test or grader it skips (its
    # validate passes some) is an error to chatconv, which follows the loader there.
    evals = [line["file"] for line in checked if line["fileType"] == "eval"]
    loaded = {line["file"]: line for line in agentv(version, "load", evals, root)}

    def theirs(line) -> str:
        load = loaded.get(line["file"])
        skips = load is not None and (not load["ok"] or any("Skipping" in m["text"] for m in load["messages"]))
        return "valid" if line["valid"] and not skips else "invalid"

    rows = [(line["file"], line["fileType"], theirs(line), chatconv_verdict(root / line["file"], ASKED.get(version)))
            for line in checked]
    return request.param, rows


@needs_node
def test_chatconv_gives_agentvs_verdict_on_every_example_file(verdicts):
    pair, rows = verdicts
    assert len(rows) > 50  # the tree was read, and AgentV checked it
    differ = {file: f"AgentV {theirs}, chatconv {ours}" for file, _, theirs, ours in rows if theirs != ours}
    known = NOT_YET[pair]
    assert sorted(set(differ) - set(known)) == [], f"new disagreements with AgentV {pair[1]}: {differ}"
    assert sorted(set(known) - set(differ)) == [], "these now agree with AgentV: take them out of NOT_YET"


@needs_node
@pytest.mark.parametrize("pair", PAIRS, ids=["-".join(pair) for pair in PAIRS])
def test_each_place_agentvs_validate_names_is_where_chatconv_says_what_is_wrong(tmp_path, pair):
    """Where AgentV's validate refuses a file and names a place (`tests[0].input`, or a repo by its
    path, `workspace.repos[path=./repo]`), chatconv has an error there, or at the key holding it
    or a key inside it."""
    tree, version = pair
    root = copy_tree(tree, tmp_path)
    refused = [line for line in agentv(version, "validate", yaml_files(root), root)
               if line["fileType"] in KINDS and not line["valid"]]
    named = 0
    for line in refused:
        problems, _ = validate_path(root / line["file"], agentv=ASKED.get(version))
        ours = [p.path for p in problems if p.is_error]
        data = yaml.safe_load((root / line["file"]).read_text())
        for error in line["errors"]:
            if not error.get("location"):
                continue
            named += 1
            place = _indexed("$." + error["location"], data)
            assert any(_within(place, path) or _within(path, place) for path in ours), (line["file"], place, ours)
    assert named >= (1 if tree.startswith("current") else 10)


def _indexed(place: str, data) -> str:
    """AgentV's `repos[path=./repo]` as the JSON path of that entry, `repos[0]`."""
    match = re.search(r"\.workspace\.repos\[path=([^\]]+)\]", place)
    workspace = data.get("workspace") if isinstance(data, dict) else None
    repos = workspace.get("repos") if isinstance(workspace, dict) else None
    if match and isinstance(repos, list):
        index = next((i for i, repo in enumerate(repos) if isinstance(repo, dict) and repo.get("path") == match[1]), None)
        if index is not None:
            return place.replace(match[0], f".workspace.repos[{index}]")
    if match:  # the workspace comes from a file: chatconv names the key that refers to it
        return place[:match.start()] + ".workspace"
    return place


def _within(inner: str, outer: str) -> bool:
    return inner == outer or inner.startswith((outer + ".", outer + "["))


def test_the_oracles_are_the_bundles_as_published():
    for line in (ORACLES / "SHA256SUMS").read_text().splitlines():
        digest, name = line.split()
        assert hashlib.sha256((ORACLES / name).read_bytes()).hexdigest() == digest, name


MISTYPED_SUITE = "description: x\ntest:\n  - id: a\n    input: hi\n"  # `test` for `tests`: no key tells an era


@needs_node
@pytest.mark.parametrize("version", ["v4.42.4", "58f316ca2"])
def test_a_folder_checks_every_file_agentv_checks(tmp_path, version):
    """What AgentV's `validate FOLDER` selects, chatconv's folder run checks and gives the same
    verdict on; a file named as an eval file with its case list mistyped is never passed over."""
    names = ["a.eval.yaml", "b.eval.yml", "evals/suite.yaml", "evals/suite.yml", "eval.yaml", "EVAL.yaml",
             "notes.yaml"]
    for name in names:
        (tmp_path / name).parent.mkdir(exist_ok=True)
        (tmp_path / name).write_text(MISTYPED_SUITE)
    (tmp_path / ".git").mkdir()
    selected = {line["file"]: line["valid"] for line in agentv(version, "validate", ["."], tmp_path)}
    assert selected and not any(selected.values())  # AgentV checked some of them, and refused them
    problems, summary = validate_path(tmp_path)
    refused = {os.path.relpath(p.file, tmp_path) for p in problems if p.is_error}
    skipped = {os.path.relpath(file, tmp_path) for file in summary.skipped_files}
    assert set(selected) <= refused
    assert skipped <= {"notes.yaml"}
