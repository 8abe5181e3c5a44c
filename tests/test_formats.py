"""Recording formats: each recognises its own data only, and turns it into AI SDK model messages."""

from __future__ import annotations

import json
from pathlib import Path

import orjson
import pytest

from chatconv.formats import FORMATS, ai_sdk, from_openai_messages, openai_chat
from chatconv.messages import conversation_messages
from conftest import read_jsonl, recorded_files, run_chatconv

OPENAI_LOG = [
    {"role": "system", "content": "You book trips."},
    {"role": "user", "content": [{"type": "text", "text": "A flight to Oslo"},
                                 {"type": "image_url", "image_url": {"url": "https://example.com/map.png"}}]},
    {"role": "assistant", "content": None, "tool_calls": [
        {"id": "call_1", "type": "function", "function": {"name": "search", "arguments": '{"to": "OSL"}'}}]},
    {"role": "tool", "tool_call_id": "call_1", "content": "2 flights"},
    {"role": "assistant", "content": "There are 2 flights."},
]


def _detected(data) -> list[str]:
    return [recording_format.NAME for recording_format in FORMATS if recording_format.detect(data)]


@pytest.mark.parametrize("path", recorded_files(), ids=lambda path: path.name)
def test_recorded_files_are_ai_sdk_records(path):
    for record in read_jsonl(path):
        assert _detected(record) == ["ai-sdk"]
        steps = record["steps"] if "steps" in record else [record]
        # Each step's input, then its outputs, step after step.
        assert ai_sdk.to_model_messages(record) == [message for step in steps
                                                    for message in [step["input"], *step["output"]]]


def test_ai_sdk_messages_of_a_conversation_by_hand():
    user = lambda text: {"role": "user", "content": text}
    answer = lambda text: {"role": "assistant", "content": text}
    conversation = {"id": "c", "steps": [
        {"stepIndex": 0, "input": user("a"), "output": [answer("b"), answer("c")]},
        {"stepIndex": 1, "input": user("d"), "output": answer("e")}]}  # a legacy one-message output
    expected = [user("a"), answer("b"), answer("c"), user("d"), answer("e")]
    assert ai_sdk.to_model_messages(conversation) == expected
    assert conversation_messages(conversation["steps"]) == expected
    assert ai_sdk.to_model_messages(conversation["steps"][1]) == expected[3:]


def test_an_openai_log_is_openai_chat_and_becomes_model_messages():
    assert _detected(OPENAI_LOG) == ["openai-chat"]
    expected = [
        {"role": "system", "content": "You book trips."},
        {"role": "user", "content": [{"type": "text", "text": "A flight to Oslo"},
                                     {"type": "image", "image": "https://example.com/map.png"}]},
        {"role": "assistant", "content": [{"type": "tool-call", "toolCallId": "call_1", "toolName": "search",
                                           "input": {"to": "OSL"},
                                           # written with a space: kept as written, for export
                                           "providerOptions": {"openai-chat": {"arguments": '{"to": "OSL"}'}}}]},
        {"role": "tool", "content": [{"type": "tool-result", "toolCallId": "call_1", "toolName": "search",
                                      "output": {"type": "text", "value": "2 flights"}}]},
        {"role": "assistant", "content": "There are 2 flights."},
    ]
    assert openai_chat.to_model_messages(OPENAI_LOG) == expected
    assert from_openai_messages(OPENAI_LOG) == expected


def test_model_messages_with_tool_parts_are_not_an_openai_log():
    tool_messages = [{"role": "assistant", "content": [{"type": "tool-call", "toolCallId": "a", "toolName": "t",
                                                        "input": {}}]},
                     {"role": "tool", "content": [{"type": "tool-result", "toolCallId": "a", "toolName": "t",
                                                   "output": {"type": "text", "value": "v"}}]}]
    assert _detected(tool_messages) == []
    assert _detected([]) == [] and _detected({"role": "user"}) == []


def test_openai_arguments_that_are_not_json_are_kept_as_a_string_input_and_written_back():
    log = [{"role": "assistant", "content": None, "tool_calls": [
        {"id": "c", "type": "function", "function": {"name": "f", "arguments": "{oops"}}]}]
    [message] = openai_chat.to_model_messages(log)
    [call] = message["content"]
    assert call["input"] == "{oops" and call["providerOptions"] == {"openai-chat": {"rawArguments": True}}
    assert openai_chat.write([message], {})["messages"] == log


def _objects(value):
    """Every object in a JSON value, itself included, outermost first."""
    if isinstance(value, dict):
        yield value
        for item in value.values():
            yield from _objects(item)
    elif isinstance(value, list):
        for item in value:
            yield from _objects(item)


def _fixture_objects() -> list[dict]:
    found = []
    for path in sorted((Path(__file__).parent / "data" / "formats").rglob("*.json*")):
        texts = path.read_text().splitlines() if path.suffix == ".jsonl" else [path.read_text()]
        for text in filter(str.strip, texts):
            found.extend(_objects(json.loads(text)))
    return found


def test_an_object_a_format_detects_has_one_of_the_keys_that_format_is_asked_for():
    # Detection asks a format about an object only if it has one of the format's KEYS: a format
    # that detects an object without one would never be asked.
    objects = _fixture_objects()
    detected = 0
    for data in objects:
        for recording_format in FORMATS[1:]:
            if recording_format.detect(data):
                detected += 1
                assert not recording_format.KEYS.isdisjoint(data), (recording_format.NAME, sorted(data))
    assert detected >= 20  # the fixtures' records, and the messages and bodies nested in them


# Records of formats chatconv does not read yet: named for what they are, not a wrong guess.
@pytest.mark.parametrize("record, words", [
    ({"prompt": "hi", "chosen": {"from": "gpt", "value": "a"}, "rejected": {"from": "gpt", "value": "b"}},
     "a preference pair"),
    ({"input": {"messages": [{"role": "user", "content": "hi"}]}, "preferred_output": [], "non_preferred_output": []},
     "a preference pair"),
    ({"id": "v1_abc", "status": "completed", "model": "gemini-2.5-flash", "input": "hi",
      "outputs": [{"type": "text", "text": "hello"}]}, "a Gemini Interactions API interaction"),
])
def test_a_format_chatconv_does_not_read_yet_is_named(tmp_path, record, words):
    path = tmp_path / "rows.jsonl"
    path.write_bytes(orjson.dumps(record) + b"\n")
    result = run_chatconv("import", path)
    assert result.returncode == 1 and result.stdout == b""
    [error] = [line for line in result.stderr_text.splitlines() if ": error: " in line]
    assert f"rows.jsonl:1:1: error: $: this looks like {words}" in error and "does not read that format yet" in error
    assert "already a chatconv recording" not in result.stderr_text


def test_a_chatconv_step_is_still_told_apart_from_a_row_with_input_and_output(tmp_path):
    path = tmp_path / "steps.jsonl"
    path.write_bytes(orjson.dumps({"stepIndex": 0, "input": {"role": "user", "content": "hi"}, "output": []}) + b"\n")
    assert "already a chatconv recording" in run_chatconv("import", path).stderr_text


def test_llama_factory_text_parts_are_read_as_hf_messages_and_named_with_what_to_do_under_openai_chat(tmp_path):
    path = tmp_path / "lf.jsonl"
    path.write_bytes(orjson.dumps({"messages": [{"role": "user", "content": [{"type": "text", "value": "hi"}]},
                                                {"role": "assistant", "content": "hello"}]}) + b"\n")
    result = run_chatconv("import", path)
    assert result.returncode == 0 and "(1 hf-messages)" in result.stderr_text
    assert orjson.loads(result.stdout.splitlines()[0])["input"]["content"][0]["text"] == "hi"
    result = run_chatconv("import", "--from", "openai-chat", path)
    assert result.returncode == 1
    assert "$.messages[0].content[0]: a text part with `value` instead of `text`: LLaMA-Factory" in result.stderr_text
    assert "--from hf-messages" in result.stderr_text


def test_the_detection_table_lists_every_format_in_the_order_detection_asks():
    from chatconv.formats import IMPORTED_NAMES
    text = (Path(__file__).parent.parent / "docs" / "formats.md").read_text(encoding="utf-8")
    table = text[text.index("## How a record's format is told"):text.index("## What every format shares")]
    rows = [line.split("|")[1].strip() for line in table.splitlines() if line.startswith("| ") and "---" not in line]
    assert rows[1:] == list(IMPORTED_NAMES)  # (the first row is the table's head)


# The fields whose value a reader looks up (a key of a dict, a member of a set): a list or an
# object there was a TypeError, which the catch-all named "not a record of the format as
# chatconv reads it (TypeError: unhashable type: 'list')" rather than the field.
_LOOKED_UP = ("role", "type", "from", "tag", "name", "format", "kind")


def _strings(value, path=()):
    if isinstance(value, str):
        yield path
    elif isinstance(value, (dict, list)):
        for key, item in (value.items() if isinstance(value, dict) else enumerate(value)):
            yield from _strings(item, path + (key,))


def test_a_list_where_a_fixture_has_a_looked_up_string_is_a_problem_at_its_field(tmp_path):
    from chatconv.formats import ImportRun, import_paths, import_records
    fixtures = [path for path in sorted((Path(__file__).parent / "data" / "formats").rglob("*.json*"))
                if "agentv-run" not in path.parts]  # a run's layout, not a file of records
    tried = 0
    for fixture in fixtures:
        jsonl = fixture.suffix != ".json"
        texts = fixture.read_bytes().splitlines() if jsonl else [fixture.read_bytes()]
        records = [orjson.loads(text) for text in texts if text.strip()]
        run = ImportRun()
        list(import_records([str(fixture)], run=run))
        named = list(run.formats) if len(run.formats) == 1 else []  # read as that format too: detection may refuse it
        shapes = set()
        for number, record in enumerate(records):
            for path in _strings(record):
                shape = tuple(key if isinstance(key, str) else 0 for key in path)
                if not path or str(path[-1]).rsplit(".", 1)[-1] not in _LOOKED_UP or shape in shapes:
                    continue
                if len(shapes) == 12:  # a file's first dozen such fields: the test stays fast
                    break
                shapes.add(shape)
                changed = orjson.loads(orjson.dumps(record))
                inner = changed
                for key in path[:-1]:
                    inner = inner[key]
                inner[path[-1]] = [inner[path[-1]]]
                rows = records[:number] + [changed] + records[number + 1:]
                target = tmp_path / fixture.name
                target.write_bytes(b"".join(orjson.dumps(row) + b"\n" for row in rows) if jsonl else orjson.dumps(changed))
                for format_name in [None, *named]:
                    problems: list = []
                    import_paths([str(target)], format_name, problems=problems)  # no exception: a problem
                    tried += 1
                    assert not [p.message for p in problems if "as chatconv reads it (TypeError" in p.message], \
                        (fixture.name, path, format_name)
    assert tried > 300
