"""The agentv-run format: AgentV's run bundles (issue 30). Real bundles AgentV wrote are imported
whole: each sample one conversation, tool calls with their results, the sample's result, grading
and metrics as its metadata; the run's other files give no record and no error."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import orjson
from conftest import assert_nothing_lost, import_and_validate, read_jsonl, run_chatconv

from chatconv.formats import import_paths

REAL = Path(__file__).parent / "data" / "formats" / "agentv-run" / "real"
# the transcript's vocabulary, read into the model messages' own
VOCABULARY = ("turns", "type", "content", "text", "user", "assistant", "tool_use", "tool_name", "id", "input",
              "result", "output", "role", "tool_calls", "tool")


def test_a_run_folder_imports_each_sample_once_and_nothing_else(tmp_path):
    result = run_chatconv("import", REAL, "-o", tmp_path / "steps.jsonl")
    assert result.returncode == 0, result.stderr_text
    assert "4 records read (4 agentv-run): 4 conversations" in result.stderr_text
    steps = read_jsonl(tmp_path / "steps.jsonl")
    assert sorted({s["conversationId"] for s in steps}) == [
        "fizzbuzz--c6cd8f9f52ad/sample-1", "imported-codex-config-fix--27ab9295a603/sample-1",
        "imported-codex-config-fix--8860cd8f26ae/sample-1", "pi-rpc-live-marker--efd4e6c8bdbc/sample-1"]


def test_a_transcript_is_whole_with_its_result_grading_and_metrics(tmp_path):
    sample = next(REAL.glob("fizzbuzz/*/*/sample-1"))
    steps = read_jsonl(import_and_validate(tmp_path, sample / "transcript.json"))
    [step] = steps
    metadata = step["metadata"]["agentv-run"]
    assert metadata["grading"] == json.loads((sample / "grading.json").read_text())
    assert metadata["result"]["verdict"] == "pass" and "metrics" in metadata
    assert step["output"][0]["content"][0]["text"].startswith("```python")
    assert_nothing_lost(json.loads((sample / "transcript.json").read_text()), steps, VOCABULARY)


def test_rows_with_calls_are_one_conversation_each_call_beside_its_output(tmp_path):
    raw = next(REAL.glob("imported-codex-tool-calls/*/*/sample-1")) / "transcript-raw.jsonl"
    steps = read_jsonl(import_and_validate(tmp_path, raw))
    assert len(steps) == 1
    messages = steps[0]["output"]
    calls = [p for m in messages if m["role"] == "assistant" for p in m["content"] if p["type"] == "tool-call"]
    results = [p for m in messages if m["role"] == "tool" for p in m["content"]]
    assert [c["toolName"] for c in calls] == ["Read", "Grep", "Edit"]
    assert [r["toolCallId"] for r in results] == [c["toolCallId"] for c in calls]
    assert results[0]["output"] == {"type": "json", "value": {"name": "agentv-example-service",
                                                              "scripts": ["test", "lint"]}}
    rows = [orjson.loads(line) for line in raw.read_bytes().splitlines()]
    assert_nothing_lost(rows, steps, VOCABULARY)


def test_raw_rows_beside_a_transcript_are_not_read_twice(tmp_path):
    sample = next(REAL.glob("fizzbuzz/*/*/sample-1"))
    copy = tmp_path / "t--0/sample-1"
    shutil.copytree(sample, copy)
    problems: list = []
    assert import_paths([str(copy / "transcript-raw.jsonl")], problems=problems) == [] and problems == []
    assert len(import_paths([str(copy)])) == 1
    (copy / "transcript.json").unlink()  # an older run: its rows are read
    [record] = import_paths([str(copy)])
    assert record["conversationId"] == "t--0/sample-1" and record["output"][0]["content"][0]["text"].startswith("```")


def test_files_beside_a_folder_named_sample_are_not_taken_for_a_run(tmp_path):
    (tmp_path / "proj" / "sample-data").mkdir(parents=True)
    (tmp_path / "proj" / "chats").mkdir()
    chat = tmp_path / "proj" / "chats" / "a.jsonl"
    chat.write_text(json.dumps({"messages": [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "yo"}]})
                    + "\n")
    assert len(import_paths([str(chat)])) == 1
