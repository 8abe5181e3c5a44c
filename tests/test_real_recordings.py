"""Files other tools wrote (tests/data/formats/real, each one's source in its README.md): logged
API responses, SSE captures and chunk logs, copied from public repositories. For each file:
`chatconv import` reads it with no error (or a clearly stated refusal, never a traceback); every
step it writes validates; the response is the `output` of its step (whose input was not recorded),
never its input; `text` gives the answer's text and `tools` its tool calls, as stated below from
reading the files themselves; export to every target writes no body the SDKs would reject.

Three of them showed faults, fixed since: Azure's stream opens with a chunk of no provider's
shape; OpenRouter repeats a call's name in a later delta; a Gemini chunk file of two chunks with
no final newline."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import orjson
import pytest
from conftest import DATA, run_chatconv, write_jsonl

from chatconv.formats import ExportRun, export_bodies, import_paths
from chatconv.messages import is_unrecorded
from chatconv.recordings import step_text, tool_rows
from chatconv.validate import validate_path
from sdk_types import CHECKS

REAL = DATA / "formats" / "real"
TARGETS = {"openai-chat": "openai", "anthropic": "anthropic", "gemini": "gemini"}


def _field(path: str, *keys) -> str:
    """A value of a JSON file, read with json (not chatconv): the answer a response file holds."""
    value = json.loads((REAL / path).read_text(encoding="utf-8"))
    for key in keys:
        value = value[key]
    return value


@dataclass
class Case:
    path: str                    # under tests/data/formats/real
    texts: list[str]             # `chatconv text` of each step: the answer's text
    calls: list[tuple]           # (toolName, args) of each `chatconv tools` row


CASES = [
    Case("anthropic-response/anthropic-mcp.1.json",
         [_field("anthropic-response/anthropic-mcp.1.json", "content", 2, "text")],
         [("echo", {"message": "hello world"})]),
    Case("anthropic-response/anthropic-tool-no-args.json",
         [_field("anthropic-response/anthropic-tool-no-args.json", "content", 0, "text")],
         [("updateIssueList", {})]),
    Case("anthropic-stream/anthropic-mcp.1.chunks.txt",
         ["The echo tool responded back with: **hello world**\n\nIt simply echoed back the exact message that "
          "was sent to it."],
         [("echo", {"message": "hello world"})]),
    Case("anthropic-stream/anthropic-tool-no-args.chunks.txt",
         ["I'll update the issue list for you."],
         [("updateIssueList", {})]),
    Case("anthropic-stream/test_mcp_server_side_tool.sse",
         ["**`simonw/llm`** is a CLI tool and Python library that lets you interact with a wide variety of "
          "Large Language Models (LLMs) \u2014 from providers like OpenAI, Anthropic, and Google, as well as "
          "local models \u2014 with features like prompt execution, multi-turn conversations, persistent "
          "logging to SQLite, embeddings, structured output, and an extensible plugin system."],
         [("read_wiki_structure", {"repoName": "simonw/llm"}),
          ("ask_question", {"repoName": "simonw/llm",
                            "question": "What does this repository do? Give a brief summary."})]),
    Case("openai-chat-response/openai-text.json",
         [_field("openai-chat-response/openai-text.json", "choices", 0, "message", "content")], []),
    # Azure's stream starts with a prompt_filter_results chunk of no provider's shape.
    Case("openai-chat-stream/azure-model-router.1.chunks.txt", ["Capital of Denmark."], []),
    # OpenRouter says the function's name again in a later delta of the call.
    Case("openai-chat-stream/test_tools_streaming_variant_a.1.sse", [""], [("llm_version", {})]),
    Case("openai-chat-stream/test_tools_streaming_variant_a.2.sse",
         ["The current version of *llm* is **0.fixed-version**."], []),
    Case("gemini-response/google-tool-call.json", [""], [("weather", {"location": "San Francisco"})]),
    Case("gemini-stream/google-text.chunks.txt",
         ['There are **3** "r"s in strawberry.\n\nst**r**awbe**rr**y'], []),
    # Two chunks, and no newline after the last.
    Case("gemini-stream/google-tool-call.chunks.txt", [""], [("weather", {"location": "San Francisco"})]),
    Case("gemini-stream/test_stream_events_tool_calls.json", [""], [("pelican_name_generator", {"type": "funny"})]),
    Case("responses-stream/issue-19493-gpt-5.1-tool-call.chunks.txt", [""], [("get_weather", {"city": "Beijing"})]),
    Case("responses-stream/test_responses_basic_streaming.sse", ["pong"], []),
]


def _params(test: str) -> list:
    """The cases, each named by its file, for the test `test`."""
    return [pytest.param(case, id=case.path) for case in CASES]


@pytest.fixture(scope="module")
def imported(tmp_path_factory) -> dict[str, tuple[list[dict], list, Path]]:
    """Each file imported once with the library: (its records, the import's problems, the steps file)."""
    folder = tmp_path_factory.mktemp("real")
    found = {}
    for case in CASES:
        problems: list = []
        records = import_paths([str(REAL / case.path)], problems=problems)
        out = write_jsonl(folder / (case.path.replace("/", "--") + ".steps.jsonl"), records)
        found[case.path] = (records, problems, out)
    return found


def test_every_real_file_is_listed_with_its_source():
    files = sorted(str(p.relative_to(REAL)) for p in REAL.rglob("*") if p.is_file()
                   and p.parent.name != "licenses" and p.name != "README.md")
    assert files == sorted(case.path for case in CASES)
    readme = (REAL / "README.md").read_text(encoding="utf-8")
    assert all(f"`{case.path}`" in readme for case in CASES)


def test_the_cli_imports_them_all_without_a_traceback(tmp_path):
    # One process for every file (run_chatconv fails on a traceback); each file's errors are checked below.
    result = run_chatconv("import", *(REAL / case.path for case in CASES), "-o", tmp_path / "all.jsonl")
    refused = {line.split(":", 1)[0] for line in result.stderr_text.splitlines() if ": error: " in line}
    assert not refused, result.stderr_text


@pytest.mark.parametrize("case", _params("import"))
def test_import_reads_the_file_with_no_error(imported, case):
    records, problems, _ = imported[case.path]
    assert [p.format_text() for p in problems if p.severity == "error"] == []
    assert records


@pytest.mark.parametrize("case", _params("validate"))
def test_every_step_written_validates(imported, case):
    records, _, out = imported[case.path]
    assert records
    found, summary = validate_path(out)
    assert summary.errors == 0, [p.format_text() for p in found]


@pytest.mark.parametrize("case", _params("output"))
def test_the_response_is_the_output_of_one_step_whose_input_was_not_recorded(imported, case):
    records, _, _ = imported[case.path]
    steps = [step for record in records for step in record.get("steps", [record])]
    assert len(steps) == 1, [(s.get("stepIndex"), s["input"].get("role"), len(s["output"])) for s in steps]
    [step] = steps
    assert is_unrecorded(step["input"]) and step["input"]["content"] == ""
    assert step["output"] and all(message["role"] == "assistant" for message in step["output"])


@pytest.mark.parametrize("case", _params("text"))
def test_text_gives_the_answer(imported, case):
    records, _, _ = imported[case.path]
    steps = [step for record in records for step in record.get("steps", [record])]
    assert [step_text(step) for step in steps] == case.texts


@pytest.mark.parametrize("case", _params("tools"))
def test_tools_gives_the_calls(imported, case):
    _, _, out = imported[case.path]
    problems: list = []
    rows = list(tool_rows(out, problems=problems))
    assert [(row["toolName"], row["args"]) for row in rows] == case.calls
    assert all(row["status"] == "unanswered" or row["result"] is not None for row in rows)
    assert [p for p in problems if p.severity == "error"] == []


@pytest.mark.parametrize("case", _params("export"))
def test_export_writes_no_body_the_sdks_reject(imported, case):
    records, _, out = imported[case.path]
    assert records
    for target, sdk in TARGETS.items():
        for per in ("step", "conversation"):
            run = ExportRun()
            bodies = [orjson.loads(body) for body in export_bodies([str(out)], target, per=per, run=run)]
            assert [(i, errors) for i, body in enumerate(bodies) if (errors := CHECKS[sdk](body))] == []
            # a response alone has no request to write: said with a warning, never an error
            assert [p.format_text() for p in run.problems if p.severity == "error"] == []


def test_the_cli_reads_the_imported_steps(imported):
    outs = [out for records, _, out in imported.values() if records]
    for command in ("validate", "text", "tools"):
        result = run_chatconv(command, *outs)
        assert result.returncode == 0, (command, result.stderr_text)
