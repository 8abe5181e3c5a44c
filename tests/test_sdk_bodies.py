"""Every request body chatconv writes is one the provider's own SDK types accept (sdk_types.py,
strict: no unknown key, no wrong type): `export` of every file of tests/data/formats and
tests/data/recorded to each target, per step and per conversation; `prompt` of the eval files
of examples/ and tests/data/agentv-prompts for each target, in both forms; and export of
generated messages, which is either refused with a problem or written and accepted, never
written and rejected (what has no home in a target is left out with a warning, or converted)."""

from __future__ import annotations

import shutil
from functools import cache
from pathlib import Path

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from chatconv.formats import EXPORTED, ExportRun, export_bodies, import_paths
from chatconv.problems import ChatconvError
from chatconv.prompt import PromptOptions, build_prompts
from chatconv.providers import RENDERERS, ProviderRuleError, render_request
from conftest import DATA, REPO
from sdk_types import CHECKS  # the SDKs are test requirements (pyproject's test extra): never skipped

FORMAT_FILES = sorted(p for p in (DATA / "formats").rglob("*") if p.is_file() and p.name != "README.md"
                      and p.parent.name != "licenses")  # real/: the sources' README and licences
RECORDED = sorted((DATA / "recorded").glob("*.jsonl"))
EVAL_FILES = sorted(p for p in [*(REPO / "examples" / "evals").rglob("*.yaml"),
                                *(DATA / "agentv-prompts").rglob("*.yaml")] if p.parent.name != ".agentv")
TARGETS = {"openai-chat": "openai", "anthropic": "anthropic", "gemini": "gemini"}


@cache
def _recording(source: Path, folder: Path) -> Path:
    """chatconv's recording of a file: as it is (tests/data/recorded), or imported."""
    if source.parent.name == "recorded":
        return source
    out = folder / f"{source.parent.name}-{source.name}.steps.jsonl"
    # what import writes, its problems aside (tests/test_format_*.py check those)
    out.write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in import_paths([str(source)], problems=[])))
    return out


@pytest.fixture(scope="module")
def recordings(tmp_path_factory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("recordings")
    return {f"{s.parent.name}/{s.name}": _recording(s, folder) for s in [*FORMAT_FILES, *RECORDED]}


def exported(recording: Path, target: str, per: str) -> tuple[list[dict], ExportRun]:
    run = ExportRun()
    bodies = [orjson.loads(b) for b in export_bodies([str(recording)], target, per=per, run=run)]
    return bodies, run


def rejected(bodies: list[dict], target: str) -> list[tuple[int, list[str]]]:
    return [(index, errors) for index, body in enumerate(bodies) if (errors := CHECKS[target](body))]


# The targets that are an API's request bodies (a dataset's rows, sharegpt, have no SDK type).
API_TARGETS = [target for target in EXPORTED if target in CHECKS]


@pytest.mark.parametrize("target", API_TARGETS)
@pytest.mark.parametrize("per", ["step", "conversation"])
def test_every_exported_body_is_accepted_by_the_sdk(recordings, target, per):
    written = 0
    for name, recording in recordings.items():
        bodies, _ = exported(recording, target, per)
        written += len(bodies)
        assert not rejected(bodies, target), (name, rejected(bodies, target)[:2])
    assert written


def prompt_bodies(path: Path, target: str, form: str) -> list[dict]:
    """The bodies `chatconv prompt --target` writes for the file's cases (none when it refuses them)."""
    try:
        prompts = build_prompts(path, PromptOptions(), form=form)
    except ChatconvError:
        return []
    bodies = []
    for case in prompts.cases:
        try:
            if form == "seed":
                bodies.append(render_request(case.as_request(), target)[0])
            else:
                bodies.append(RENDERERS[target](case.inputs.messages())[0])
        except ProviderRuleError:
            continue
    return bodies


@pytest.fixture(scope="module")
def eval_files(tmp_path_factory) -> list[Path]:
    """The eval files, AgentV's test ones in a copy of their folder that is a repository root."""
    root = tmp_path_factory.mktemp("prompts") / "agentv-prompts"
    shutil.copytree(DATA / "agentv-prompts", root)
    (root / ".git").mkdir(exist_ok=True)
    return [root / p.relative_to(DATA / "agentv-prompts") if DATA in p.parents else p for p in EVAL_FILES]


@pytest.mark.parametrize("target", ["openai", "anthropic", "gemini"])
def test_every_prompt_body_is_accepted_by_the_sdk(eval_files, target):
    written = 0
    for path in eval_files:
        for form in ("agentv", "seed"):
            bodies = prompt_bodies(path, target, form)
            written += len(bodies)
            assert not rejected(bodies, target), (path, form, rejected(bodies, target)[:2])
    assert written > 20


# Generated conversations with the shapes that have no plain home in some target: text of white
# space, reasoning with and without Anthropic's signature, media of every kind of data (base64 of
# types the APIs take or not, web and gs:// URLs, data URLs, file ids, paths), tool inputs that
# are objects or text, server tools (Gemini's code execution, another provider's web search).
TEXTS = ["hi", "a\n", " ", "", "\n\t"]
DATA_OF = ["iVBORw0KGgo=", "JVBERi0xLjQ=", "aGVsbG8=", "https://example.com/a.png", "gs://bucket/a.pdf",
           "file-6F2ksmvXxt4VdoqmHRw6kL", "/tmp/report.pdf", "data:image/png;base64,iVBORw0KGgo=", "data:text/plain,hello"]
MEDIA_TYPES = ["image/png", "image/tiff", "application/pdf", "text/plain", "audio/wav", "application/octet-stream"]
_text = st.builds(lambda text: {"type": "text", "text": text}, st.sampled_from(TEXTS))
_media = st.one_of(
    st.builds(lambda data, kind: {"type": "image", "image": data, "mediaType": kind},
              st.sampled_from(DATA_OF), st.sampled_from(MEDIA_TYPES)),
    st.builds(lambda data, kind, name: {"type": "file", "data": data, "mediaType": kind, **name},
              st.sampled_from(DATA_OF), st.sampled_from(MEDIA_TYPES), st.sampled_from([{}, {"filename": "a"}])))
_reasoning = st.builds(lambda text, signed: {"type": "reasoning", "text": text,
                                             **({"providerOptions": {"anthropic": {"signature": "EqQBCkYI"}}}
                                                if signed else {})}, st.sampled_from(TEXTS[:2]), st.booleans())
_input = st.sampled_from([{}, {"q": "x"}, {"n": [1, 2]}, "query=weather"])
_output = st.sampled_from([{"type": "text", "value": "ok"}, {"type": "json", "value": {"a": 1}},
                           {"type": "json", "value": [1, "b"]}, {"type": "error-text", "value": "no"},
                           {"type": "content", "value": [{"type": "text", "text": "t"}]}])
# A tool the provider ran itself: (name, input, output value), answered in the assistant's own message.
_SERVER = [("code_execution", {"code": "print(1)", "language": "PYTHON"}, {"outcome": "OUTCOME_OK", "output": "1\n"}),
           ("web_search", {"query": "news"}, [{"type": "web_search_result", "url": "https://example.com", "title": "t"}])]


@st.composite
def recordings_generated(draw) -> list[dict]:
    """The steps of one conversation: a user message each, then the assistant's messages (and
    the tool results of its calls, some left unanswered)."""
    ids = iter(range(10**6))
    steps = []
    for index in range(draw(st.integers(1, 3))):
        user = draw(st.lists(st.one_of(_text, _media), min_size=1, max_size=3))
        output: list[dict] = []
        parts = draw(st.lists(st.one_of(_text, _reasoning, _media.filter(lambda p: p["type"] == "file")), max_size=3))
        calls = [{"type": "tool-call", "toolCallId": f"call{next(ids)}", "toolName": "t", "input": draw(_input)}
                 for _ in range(draw(st.integers(0, 2)))]
        for name, call_input, value in draw(st.lists(st.sampled_from(_SERVER), max_size=1)):
            call_id = f"server{next(ids)}"
            parts += [{"type": "tool-call", "toolCallId": call_id, "toolName": name, "input": call_input,
                       "providerExecuted": True},
                      {"type": "tool-result", "toolCallId": call_id, "toolName": name,
                       "output": {"type": "json", "value": value}}]
        if parts or calls:
            output.append({"role": "assistant", "content": parts + calls})
        if calls:
            output.append({"role": "tool", "content": [{"type": "tool-result", "toolCallId": c["toolCallId"],
                                                        "toolName": "t", "output": draw(_output)} for c in calls]})
            output.append({"role": "assistant", "content": [draw(_text)]})
        steps.append({"conversationId": "c", "stepIndex": index, "input": {"role": "user", "content": user},
                      "output": output})
    return steps


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(recordings_generated())
def test_a_generated_conversation_is_refused_or_written_as_the_sdk_takes_it(tmp_path, steps):
    recording = tmp_path / "steps.jsonl"
    recording.write_bytes(b"".join(orjson.dumps(step) + b"\n" for step in steps))
    for target in API_TARGETS:
        for per in ("step", "conversation"):
            bodies, run = exported(recording, target, per)
            assert not rejected(bodies, target), (target, per, rejected(bodies, target)[:2])
            if not bodies and (per == "conversation" or any(step["output"] for step in steps)):  # refused: said why
                assert any(p.is_error for p in run.problems), (target, per)
