"""The openinference format, and the deprecated GenAI attributes otel-genai reads (issue 30):
messages written as flattened span attributes (`llm.input_messages.N.message.*`,
`gen_ai.prompt.N.*`), read as the conventions' message JSON is. Real spans of OpenInference's
instrumentations and any-agent are imported whole: each model call's messages, calls paired
with their results, every other attribute kept."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import assert_nothing_lost, import_and_validate, read_jsonl, write_jsonl

from chatconv.formats import IMPORTED
from chatconv.formats.importing import _format_of

DATA = Path(__file__).parent / "data" / "formats"
REAL = DATA / "openinference" / "real"


def _flat_keys(attributes: dict) -> tuple[str, ...]:
    """The attribute names that are a flattened message's place (their values are what counts)."""
    return tuple(key for key in attributes if key.startswith(("llm.input_messages.", "llm.output_messages.",
                                                              "gen_ai.prompt", "gen_ai.completion")))


def _llm_spans(data: dict) -> list[dict]:
    spans = data["spans"] if "spans" in data else [data]
    return [span for span in spans if any(key.startswith("llm.") and "messages" in key
                                          for key in span.get("attributes", span))]


@pytest.mark.parametrize("name", sorted(p.name for p in REAL.iterdir()))
def test_a_real_openinference_file_is_openinference_and_each_model_call_imported_whole(tmp_path, name):
    data = json.loads((REAL / name).read_text(encoding="utf-8"))
    assert _format_of(data, IMPORTED, None).NAME == "openinference"
    steps = read_jsonl(import_and_validate(tmp_path, REAL / name))
    spans = _llm_spans(data)
    assert len({s["conversationId"] for s in steps}) == len(spans)
    for span in spans:
        attributes = span.get("attributes", span)
        vocabulary = _flat_keys(attributes) + ("tool", "assistant", "user", "system", "text", "message_content", "type")
        # the span's ids may be kept as their digits (integers beyond 64 bits): compared as text
        source = json.loads(json.dumps(attributes))
        assert_nothing_lost(source, steps, vocabulary)


def test_contents_and_tool_calls_become_parts_and_results_meet_their_calls(tmp_path):
    steps = read_jsonl(import_and_validate(tmp_path, REAL / "openinference-genai-fixture-client-span-tool-calls.json"))
    [step] = steps
    assert step["input"]["content"] == [{"type": "text", "text": "Weather in Paris?"}]
    call, result, answer = step["output"]
    assert call["content"][1] | {"providerOptions": None} == {
        "type": "tool-call", "toolCallId": "1234", "toolName": "get_weather", "input": {"location": "Paris"},
        "providerOptions": None}
    assert result["content"][0]["toolCallId"] == "1234" and result["content"][0]["toolName"] == "get_weather"
    assert answer["content"][0]["text"].startswith("The weather in Paris")
    attributes = step["metadata"]["openinference"]
    assert attributes["llm.token_count.total"] == 149 and "llm.input_messages.0.message.role" not in attributes


def test_any_agent_ids_beyond_64_bits_are_kept_as_their_digits_with_a_warning(tmp_path):
    from chatconv.formats import import_paths
    problems: list = []
    records = import_paths([str(REAL / "any-agent-openai-agents-trace.json")], problems=problems)
    assert records and {p.code for p in problems} <= {"import-changed", "import-skipped"}
    assert records[0]["metadata"]["openinference"]["span"]["context"]["trace_id"] == "312240062924141420731563990691240884516"


def test_the_deprecated_genai_attributes_are_read_as_the_conventions_messages(tmp_path):
    # gen_ai.prompt and gen_ai.completion as JSON text (OpenInference's fixture of the deprecated form)
    source = DATA / "otel-genai" / "real" / "openinference-genai-fixture-deprecated-client-span-tool-calls.json"
    [step] = read_jsonl(import_and_validate(tmp_path, source))
    assert step["metadata"]["otel-genai"]["gen_ai.response.id"] == "chatcmpl-CQF10eCkoFphJZJQkzzN6EkTD0AVF"
    call, result, answer = step["output"]
    assert result["content"][0]["toolName"] == "get_weather" and answer["content"][0]["text"].startswith("The weather")
    # and flattened, as OpenLLMetry writes them
    flat = {"gen_ai.system": "openai", "gen_ai.prompt.0.role": "user", "gen_ai.prompt.0.content": "Weather?",
            "gen_ai.completion.0.role": "assistant", "gen_ai.completion.0.finish_reason": "tool_calls",
            "gen_ai.completion.0.tool_calls.0.id": "c1", "gen_ai.completion.0.tool_calls.0.name": "w",
            "gen_ai.completion.0.tool_calls.0.arguments": '{"city": "Oslo"}', "gen_ai.completion.1": "None"}
    [step] = read_jsonl(import_and_validate(tmp_path, write_jsonl(tmp_path / "flat.jsonl", [flat])))
    [answer] = step["output"]
    assert answer["content"][0]["input"] == {"city": "Oslo"}
    assert step["metadata"]["otel-genai"] == {"gen_ai.system": "openai", "gen_ai.completion.1": "None"}
