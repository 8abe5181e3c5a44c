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

from chatconv.formats import ExportRun, export_bodies, import_paths, streams
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


CASE_PARAMS = [pytest.param(case, id=case.path) for case in CASES]  # each named by its file


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


@pytest.mark.parametrize("case", CASE_PARAMS)
def test_import_reads_the_file_with_no_error(imported, case):
    records, problems, _ = imported[case.path]
    assert [p.format_text() for p in problems if p.severity == "error"] == []
    assert records


@pytest.mark.parametrize("case", CASE_PARAMS)
def test_every_step_written_validates(imported, case):
    records, _, out = imported[case.path]
    assert records
    found, summary = validate_path(out)
    assert summary.errors == 0, [p.format_text() for p in found]


@pytest.mark.parametrize("case", CASE_PARAMS)
def test_the_response_is_the_output_of_one_step_whose_input_was_not_recorded(imported, case):
    records, _, _ = imported[case.path]
    steps = [step for record in records for step in record.get("steps", [record])]
    assert len(steps) == 1, [(s.get("stepIndex"), s["input"].get("role"), len(s["output"])) for s in steps]
    [step] = steps
    assert is_unrecorded(step["input"]) and step["input"]["content"] == ""
    assert step["output"] and all(message["role"] == "assistant" for message in step["output"])


@pytest.mark.parametrize("case", CASE_PARAMS)
def test_text_gives_the_answer(imported, case):
    records, _, _ = imported[case.path]
    steps = [step for record in records for step in record.get("steps", [record])]
    assert [step_text(step) for step in steps] == case.texts


@pytest.mark.parametrize("case", CASE_PARAMS)
def test_tools_gives_the_calls(imported, case):
    _, _, out = imported[case.path]
    problems: list = []
    rows = list(tool_rows(out, problems=problems))
    assert [(row["toolName"], row["args"]) for row in rows] == case.calls
    assert all(row["status"] == "unanswered" or row["result"] is not None for row in rows)
    assert [p for p in problems if p.severity == "error"] == []


@pytest.mark.parametrize("case", CASE_PARAMS)
def test_a_response_alone_exports_no_body_and_says_so(imported, case):
    records, _, out = imported[case.path]
    assert records
    for target in TARGETS:
        for per in ("step", "conversation"):
            run = ExportRun()
            assert list(export_bodies([str(out)], target, per=per, run=run)) == []
            assert {p.code for p in run.problems} == {"no-request"}  # a warning, never an error


# The request each real response answers, as its API takes it (the files hold responses only).
REQUESTS = {"anthropic": {"model": "claude-sonnet-4-5", "max_tokens": 1024,
                          "messages": [{"role": "user", "content": "Go ahead."}]},
            "openai-chat": {"model": "gpt-4.1", "messages": [{"role": "user", "content": "Go ahead."}]},
            "gemini": {"contents": [{"role": "user", "parts": [{"text": "Go ahead."}]}]},
            "responses": {"model": "gpt-4.1", "input": "Go ahead."}}


@pytest.mark.parametrize("case", CASE_PARAMS)
def test_a_real_response_with_a_request_exports_bodies_the_sdks_accept(tmp_path, case):
    source = REAL / case.path
    provider = case.path.split("/")[0].removesuffix("-stream").removesuffix("-response")
    if case.path.split("/")[0].endswith("-stream"):
        response = next(streams.records(str(source))).data  # the response the stream assembles into
    else:
        response = json.loads(source.read_text(encoding="utf-8"))
    request = dict(REQUESTS[provider])
    servers = sorted({block["server_name"] for block in response.get("content") or []
                      if isinstance(block, dict) and block.get("type") == "mcp_tool_use"})
    if servers:  # an MCP connector's answer: its request named the servers
        request["mcp_servers"] = [{"type": "url", "url": f"https://{name}.example/sse", "name": name} for name in servers]
    exchange = write_jsonl(tmp_path / "exchange.jsonl", [{"request": request, "response": response}])
    steps = import_paths([str(exchange)])
    assert steps[-1]["input"]["content"] in ("Go ahead.", [{"type": "text", "text": "Go ahead."}])
    assert steps[-1]["output"] and steps[-1]["output"][0]["role"] == "assistant"
    recording = write_jsonl(tmp_path / "steps.jsonl", steps)
    written = 0
    for target, sdk in TARGETS.items():
        for per in ("step", "conversation"):
            run = ExportRun()
            bodies = [orjson.loads(body) for body in export_bodies([str(recording)], target, per=per, run=run)]
            assert [(i, errors) for i, body in enumerate(bodies) if (errors := CHECKS[sdk](body))] == []
            # a body not written is refused by the API's rules, and said
            assert bodies or any(p.code == "provider-rule" for p in run.problems), (target, per)
            written += len(bodies)
    assert written  # some target takes every real answer


def test_the_cli_reads_the_imported_steps(imported):
    outs = [out for records, _, out in imported.values() if records]
    for command in ("validate", "text", "tools"):
        result = run_chatconv(command, *outs)
        assert result.returncode == 0, (command, result.stderr_text)
