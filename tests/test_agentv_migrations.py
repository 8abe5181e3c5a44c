"""A file chatconv migrates forward is loaded by AgentV itself, of the target era's newest
release, with every test and every grader kept (tests/agentv.py runs AgentV's code with node)."""

from __future__ import annotations

import os

from agentv import agentv, copy_tree, needs_node, refused_by_agentv
from chatconv.migrate import migrate_document, migrate_paths

# An AgentV v2 file with every grader name v2 files were written with, a composite among them.
V2_GRADERS = """\
evalcases:
  - id: one
    outcome: Names the bug
    input_messages:
      - {role: user, content: Why does it crash?}
    execution:
      evaluators:
        - {name: script, type: code, script: [python3, check.py]}
        - {name: judge, type: llm_judge, prompt: Is it right?}
        - {name: old-code, type: code_judge, script: [python3, check.py]}
        - {name: kebab, type: llm-judge}
        - {name: both, type: composite, aggregator: {type: weighted_average},
           evaluators: [{name: inner, type: llm_judge}, {name: inner-code, type: code-judge, command: [x]}]}
  - id: two
    outcome: Runs
    input_messages:
      - {role: user, content: Go}
"""


@needs_node
def test_a_v2_file_migrated_to_the_tests_era_loads_in_agentv_4_42_4_with_nothing_skipped(tmp_path):
    (tmp_path / ".git").mkdir()
    path = tmp_path / "suite.eval.yaml"
    path.write_bytes(migrate_document(V2_GRADERS.encode(), str(path), "yaml", to_era="tests").data)
    [loaded] = agentv("v4.42.4", "load", [path.name], tmp_path)
    assert loaded["ok"] and loaded["ids"] == ["one", "two"], loaded["error"]
    assert loaded["messages"] == []  # nothing skipped, nothing deprecated
    [first, _] = loaded["tests"]
    graders = first["assertions"]
    assert [g["name"] for g in graders] == ["script", "judge", "old-code", "kebab", "both"]
    assert [g["type"] for g in graders] == ["code-grader", "llm-grader", "code-grader", "llm-grader", "composite"]
    [said] = agentv("v4.42.4", "validate", [path.name], tmp_path)
    assert said["valid"] and said["warnings"] == [], said


# A tests-era file whose graders use the keys current AgentV renamed (name, target, script,
# required_min_score, composite and its list, an llm grader's criteria list).
TESTS_GRADERS = """\
tests:
  - id: one
    input: Why does it crash?
    assertions:
      - {name: judge, type: llm-grader, prompt: Is it right?, target: grader, required_min_score: 0.5}
      - {name: rubric, type: rubrics, criteria: [{id: r, outcome: Names the bug}]}
      - {name: check, type: code-grader, script: [python3, check.py]}
      - {name: both, type: composite, assertions: [{name: inner, type: contains, value: bug}]}
"""


@needs_node
def test_a_tests_era_file_migrated_to_current_loads_in_agentv_head_with_every_grader_named(tmp_path):
    (tmp_path / ".git").mkdir()
    (tmp_path / ".agentv").mkdir()
    (tmp_path / ".agentv" / "providers.yaml").write_text("- id: openai\n  label: grader\n")
    (tmp_path / ".agentv" / "config.yaml").write_text("providers: file://providers.yaml\n")
    path = tmp_path / "suite.eval.yaml"
    path.write_bytes(migrate_document(TESTS_GRADERS.encode(), str(path), "yaml").data)
    [said] = agentv("58f316ca2", "validate", [path.name], tmp_path)
    assert said["valid"] and said["warnings"] == [], said
    [loaded] = agentv("58f316ca2", "load", [path.name], tmp_path)
    assert loaded["ok"] and loaded["messages"] == [], (loaded["error"], loaded["messages"])
    graders = loaded["tests"][0]["assertions"]
    assert [g["name"] for g in graders] == ["judge", "rubric", "check", "both"]  # the names kept (`metric`)
    assert [g["type"] for g in graders] == ["llm-rubric", "llm-rubric", "script", "assert-set"]
    assert graders[0]["target"] == "grader" and graders[0]["min_score"] == 0.5
    assert [g["name"] for g in graders[3]["assertions"]] == ["inner"]


@needs_node
def test_every_file_of_agentvs_tree_migrated_to_current_is_run_whole_by_agentv_head(tmp_path):
    root = copy_tree("tests-v3.8.0", tmp_path)
    config = root / "examples/features/.agentv/config.yaml"
    [refused] = migrate_paths([str(config)], in_place=True)
    assert refused.stopped and "$.execution.trace_file" in str(refused.error), refused
    assert "execution.otel_file" in str(refused.error)
    # As the refusal says (current AgentV's loader refuses every eval file under otel_file):
    config.write_text("".join(line for line in config.read_text().splitlines(keepends=True)
                              if not line.lstrip().startswith(("trace_file:", "otel_file:"))))
    outcomes = list(migrate_paths([str(root / "examples")], in_place=True))
    assert not any(o.stopped for o in outcomes if o.file == str(config))
    written = sorted(os.path.relpath(o.file, root) for o in outcomes if o.tally and o.tally.migrated)
    assert len(written) > 20
    # Every file written, AgentV HEAD's validate takes and its loader reads with nothing skipped;
    # chatconv refuses the others, each with its reason (tests/test_eras_migrate.py lists them).
    assert refused_by_agentv("58f316ca2", written, root) == {}
