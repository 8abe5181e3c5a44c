"""chatconv and AgentV give the same verdict on eval files neither has seen: AgentV's own
examples, each changed at a place hypothesis draws (a key added, a key taken away), fed to both.

AgentV's verdict is its validate's and its loader's together: a file is bad to AgentV when its
validate refuses it, its loader throws, or its loader skips a test or a grader (its validate
passes some of those; chatconv follows the loader, see README "AgentV's own verdicts")."""

from __future__ import annotations

import os

import itertools
import re
import shutil
from pathlib import Path
from typing import NamedTuple

import pytest
import yaml
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from agentv import agentv, copy_tree, needs_node, yaml_files
from conftest import REPO
from chatconv.validate import validate_path

# (example tree, the release whose verdicts chatconv gives on it, --agentv for it): AgentV's
# v3.8.0 tree, and for the evalcases era this repository's own examples (AgentV's trees of that
# era are not in tests/data).
PAIRS = [("tests-v3.8.0", "v4.42.4", None), ("tests-v3.8.0", "v3.8.0", "3.8.0"),
         ("examples", "v2.5.8", None), ("examples", "26781d3d9", "0.20.0"), ("current-2026-07", "58f316ca2", None)]
MUTATIONS_PER_EXAMPLE = 12  # files per oracle call: node starts once for all of them
_names = itertools.count()


def agentv_verdicts(version: str, files: list[str], root) -> dict[str, tuple[bool, list[str]]]:
    """file -> (whether AgentV takes it whole, what it said against it)."""
    checked = {line["file"]: line for line in agentv(version, "validate", files, root)}
    loaded = {line["file"]: line for line in agentv(version, "load", files, root)}
    verdicts = {}
    for file in files:
        said = [e["message"] for e in checked[file]["errors"]]
        said += [loaded[file]["error"]] if not loaded[file]["ok"] else []
        said += [m["text"] for m in loaded[file]["messages"] if "Skipping" in m["text"]]
        verdicts[file] = (not said, said)
    return verdicts


class Examples(NamedTuple):
    version: str
    asked: str | None  # chatconv's --agentv
    root: Path
    parsed: dict  # file -> its data

    def __repr__(self) -> str:  # hypothesis prints it with a failure
        return f"<{len(self.parsed)} examples AgentV {self.version} takes whole>"


@pytest.fixture(scope="module", params=PAIRS, ids=["-".join(pair[:2]) for pair in PAIRS])
def clean_examples(request, tmp_path_factory) -> Examples:
    """The tree's eval files that AgentV takes whole, as parsed YAML."""
    tree, version, asked = request.param
    if tree == "examples":
        root = Path(shutil.copytree(REPO / "examples", tmp_path_factory.mktemp("mutations") / "examples"))
        (root / ".git").mkdir()
    else:
        root = copy_tree(tree, tmp_path_factory.mktemp("mutations"))
    files = [line["file"] for line in agentv(version, "validate", yaml_files(root), root)
             if line["fileType"] == "eval" and line["valid"]]
    clean = [file for file, (whole, _) in agentv_verdicts(version, files, root).items() if whole]
    parsed = {file: yaml.safe_load((root / file).read_text()) for file in clean}
    return Examples(version, asked, root, {file: data for file, data in parsed.items() if isinstance(data, dict)})


# Where chatconv refuses on purpose what AgentV takes: (what the error says, the end of its path).
# A content segment without its `value`: AgentV's validate misses it in a suite's `input` when
# the tests are in a case file, and its loader drops the segment without a word.
STRICTER_ON_PURPOSE = [("missing required key 'value'", re.compile(r"\.content\[\d+\]$"))]


def on_purpose(problem) -> bool:
    return any(words in problem.message and where.search(problem.path) for words, where in STRICTER_ON_PURPOSE)


def _objects(data, path=()):
    """(path, object) of every object in `data`, the top one first."""
    if isinstance(data, dict):
        yield path, data
        for key, value in data.items():
            yield from _objects(value, path + (key,))
    elif isinstance(data, list):
        for index, value in enumerate(data):
            yield from _objects(value, path + (index,))


def mutate(data, draw):
    """What was done to `data` (changed in place): one key added to, or taken from, an object
    drawn from it. `draw` is hypothesis's; only small values are drawn, so a failure reads."""
    places = list(_objects(data))
    path, target = places[draw(st.integers(0, len(places) - 1), label="object")]
    if not target or draw(st.booleans(), label="add"):
        key = draw(st.sampled_from(["zz_note", "colour", "criterias", "inputs"]), label="key")
        target[key] = draw(st.sampled_from(["x", 1, None, ["y"]]), label="value")
        return f"added {key!r} at {path}"
    key = draw(st.sampled_from(sorted(target, key=str)), label="key")
    del target[key]
    return f"took {key!r} from {path}"


# The suite tries the same few changes each run (CI stays red or green for what it changed);
# CHATCONV_MUTATIONS=N tries N new ones, to look for disagreements (README: Development).
_EXPLORE = int(os.environ.get("CHATCONV_MUTATIONS") or 0)


@needs_node
# No shrinking: each try runs node twice, and the message names every file that differs.
@settings(max_examples=_EXPLORE or 4, derandomize=not _EXPLORE, phases=[Phase.explicit, Phase.reuse, Phase.generate],
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(data=st.data())
def test_a_changed_example_gets_agentvs_verdict(clean_examples, data):
    version, asked, root, examples = clean_examples
    assert len(examples) >= (2 if root.name == "examples" else 30)  # the tree was read, AgentV takes it
    written = {}
    for _ in range(MUTATIONS_PER_EXAMPLE):
        source = data.draw(st.sampled_from(sorted(examples)), label="example")
        mutated = yaml.safe_load(yaml.safe_dump(examples[source]))  # a copy
        what = mutate(mutated, data.draw)
        # Beside its source (its file references resolve alike), named as AgentV names eval files
        name = source.rsplit("/", 1)[0] + f"/mutation-{next(_names)}.eval.yaml"
        (root / name).write_text(yaml.safe_dump(mutated, sort_keys=False, allow_unicode=True))
        written[name] = f"{source}: {what}"
    theirs = agentv_verdicts(version, list(written), root)
    differ = []
    for name, what in written.items():
        problems, summary = validate_path(root / name, agentv=asked)
        ours = not summary.errors
        if theirs[name][0] and all(on_purpose(p) for p in problems if p.is_error):
            continue
        if ours != theirs[name][0]:
            differ.append(f"{what}: AgentV {'takes it' if theirs[name][0] else 'refuses it'} {theirs[name][1]}, "
                          f"chatconv {[str(p) for p in problems if p.is_error] or 'takes it'}")
    assert differ == [], "\n".join(differ)


GRADERS = """\
tests:
  - id: t1
    input: hi
    criteria: x
    assertions:
      - {name: fine, type: contains, value: x}
      - {name: no-value, type: contains}
      - {name: number-value, type: equals, value: 5}
      - {name: one-text, type: contains-any, value: x}
      - {name: no-command, type: code-grader}
      - {name: old-name, type: code_judge, command: [python, x.py]}
      - {name: old-llm, type: llm-judge}
      - {name: no-members, type: composite, aggregator: {type: weighted_average}}
      - {name: no-aggregator, type: composite, assertions: [{name: a, type: contains, value: x}]}
      - {name: bad-threshold, type: composite, assertions: [{name: a, type: contains, value: x}],
         aggregator: {type: threshold, threshold: 2}}
      - {name: members, type: composite, aggregator: {type: weighted_average},
         assertions: [{type: contains, value: x}, {name: b, value: y}, {name: c, type: contains, value: z}]}
      - {name: empty-rubric, type: rubrics, criteria: []}
      - {name: rubric-items, type: rubrics, criteria: [{id: a, weight: 1}, plain words, {id: c, outcome: ok}]}
      - {name: llm-rubric-items, type: llm-grader, rubrics: [{id: a}]}
      - {name: fields, type: field-accuracy, fields: [{path: a, match: exact}, {path: b, match: fuzzy}, {path: c}]}
      - {name: no-fields, type: field-accuracy, fields: []}
      - {name: slow, type: latency, threshold: -1}
      - {name: dear, type: cost}
      - {name: tokens, type: token-usage}
      - {name: no-mode, type: tool-trajectory}
      - {name: no-expected, type: tool-trajectory, mode: in_order}
      - {name: no-minimums, type: tool-trajectory, mode: any_order}
      - {name: metrics, type: execution-metrics}
      - {name: no-skill, type: skill-trigger}
  - id: no-own-input
    criteria: x
  - id: nothing-to-grade
    input: hi
    evaluators: [{name: e, type: contains, value: x}]
"""


@needs_node
def test_each_grader_and_test_agentv_skips_is_an_error(tmp_path):
    """One error from chatconv for each test and grader (or part of one) AgentV's loader skips."""
    (tmp_path / ".git").mkdir()
    (tmp_path / "x.py").write_text("print(1)\n")
    (tmp_path / "graders.eval.yaml").write_text(GRADERS)
    [loaded] = agentv("v4.42.4", "load", ["graders.eval.yaml"], tmp_path)
    skipped = [m["text"] for m in loaded["messages"] if "Skipping" in m["text"]]
    problems, _ = validate_path(tmp_path / "graders.eval.yaml")
    errors = [p for p in problems if p.is_error]
    assert len(skipped) == 27 and loaded["ids"] == ["t1"]
    assert len(errors) == len(skipped), "\n".join([*skipped, "---", *map(str, errors)])
    assert all("AgentV skips" in p.message or "composite needs" in p.message for p in errors)
