"""The hf-messages format: Hugging Face chat datasets (`messages` rows with the Hub's liberties,
TRL's prompt-completion rows, bare message lists), read into chatconv's recordings and written
back (issue 30). The round trip is a property: import then export gives the same JSON value, key
order too, for any row of the format; nothing is lost (every message's text, call and part, in order)."""

from __future__ import annotations

import json
from pathlib import Path

import orjson
import pytest
from conftest import import_and_validate, import_problems, read_jsonl, round_trip, write_jsonl, imported_lines, real_file_back
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from chatconv.formats import IMPORTED, ExportRun, export_bodies, hf_messages
from chatconv.formats.importing import _format_of

REAL = Path(__file__).parent / "data" / "formats" / "hf-messages" / "real"
ROW = {"messages": [{"role": "system", "content": "Be brief."},
                    {"role": "user", "content": [{"type": "image"}, {"type": "text", "text": "What is it?"}]},
                    {"role": "assistant", "tool_calls": [{"type": "function", "function": {
                        "name": "describe", "arguments": {"detail": "high"}}}]},
                    {"role": "tool", "name": "describe", "content": "a cat on a mat"},
                    {"role": "assistant", "content": "A cat."}],
       "images": ["cat.png"], "id": 7}


def _detected(data) -> list[str]:
    """The format import reads `data` as (detection asks the formats in the registry's order)."""
    found = _format_of(data, IMPORTED, None)
    return [found.NAME] if found else []


def test_the_hubs_marks_decide_and_a_plain_openai_line_stays_openai_chat():
    assert _detected(ROW) == ["hf-messages"]
    plain = {"messages": [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"}]}
    assert _detected(plain) == ["openai-chat"]
    assert _detected({**plain, "audios": ["a.wav"]}) == ["hf-messages"]
    assert _detected({"prompt": plain["messages"][:1], "completion": plain["messages"][1:]}) == ["hf-messages"]
    assert _detected([{"role": "user", "content": [{"type": "text", "value": "hi"}]}]) == ["hf-messages"]
    # a preference pair is not a prompt-completion row, nor Anthropic's image block a Hub part
    assert not hf_messages.detect({"prompt": plain["messages"], "chosen": [], "rejected": []})
    anthropic = {"messages": [{"role": "user", "content": [{"type": "image", "source": {"type": "url", "url": "u"}}]}]}
    assert not hf_messages.detect(anthropic)


def test_calls_without_ids_are_paired_in_order_and_the_image_column_fills_its_part(tmp_path):
    steps = read_jsonl(import_and_validate(tmp_path, write_jsonl(tmp_path / "rows.jsonl", [ROW])))
    assert [s["input"]["role"] for s in steps] == ["system", "user"]
    assert steps[0]["metadata"] == {"hf-messages": {"images": ["cat.png"], "id": 7}}
    image, text = steps[1]["input"]["content"]
    assert image["type"] == "image" and image["image"] == "cat.png" and text["text"] == "What is it?"
    call, result, answer = steps[1]["output"]
    [call_part], [result_part] = call["content"], result["content"]
    assert call_part["toolName"] == "describe" and call_part["input"] == {"detail": "high"}
    assert result_part["toolCallId"] == call_part["toolCallId"] and result_part["toolName"] == "describe"
    assert result_part["output"] == {"type": "text", "value": "a cat on a mat"}
    assert answer == {"role": "assistant", "content": "A cat."}


def test_an_hf_row_exported_to_openai_chat_is_a_body_the_api_takes(tmp_path):
    # The ids chatconv gave the calls make a body OpenAI's API takes; arguments become JSON text.
    steps = import_and_validate(tmp_path, write_jsonl(tmp_path / "rows.jsonl", [ROW]))
    run = ExportRun()
    [body] = [orjson.loads(b) for b in export_bodies([str(steps)], "openai-chat", "conversation", run=run)]
    call = body["messages"][2]["tool_calls"][0]
    assert call["id"] == body["messages"][3]["tool_call_id"] and call["function"]["arguments"] == '{"detail":"high"}'


def test_import_then_export_gives_each_form_back(tmp_path):
    trl = {"id": 3, "prompt": [{"role": "user", "content": [{"type": "text", "value": "hi"},
                                                             {"type": "video", "video": "a.mp4", "fps": 2}]}],
           "completion": [{"role": "assistant", "content": "hello"}]}
    bare = [{"role": "user", "content": "q"},
            {"role": "assistant", "content": "a", "tool_calls": [{"id": "c1", "type": "function", "function": {
                "name": "f", "arguments": {}}}]}, {"role": "tool", "content": "r"}]
    late = {"id": "x", "messages": [{"role": "user", "content": [{"path": "a.wav", "type": "audio"}]}], "audios": []}
    records = [ROW, trl, bare, late]
    assert round_trip(tmp_path, records, "hf-messages") == records
    assert [list(r) for r in round_trip(tmp_path, records, "hf-messages") if isinstance(r, dict)] == [
        list(r) for r in records if isinstance(r, dict)]


@pytest.mark.parametrize("row, path, words", [
    ({"messages": [{"role": "user", "content": [{"type": "image"}]}]}, "$.messages[0].content[0]",
     "names no file"),
    ({"messages": [{"role": "user", "content": [{"type": "image"}]}], "images": [{"bytes": "..."}]},
     "$.messages[0].content[0]", "is not a file name or URL"),
    ({"messages": [{"role": "user", "content": "q"}, {"role": "tool", "content": "r"}]}, "$.messages[1]",
     "answers no earlier tool call"),
])
def test_a_row_chatconv_cannot_read_is_left_out_at_its_path(tmp_path, row, path, words):
    problems = import_problems(write_jsonl(tmp_path / "rows.jsonl", [row]), "hf-messages")
    assert [(p.path, p.severity) for p in problems][:1] == [(path, "error")] and words in problems[0].message


# --- the round trip, on any row of the format --------------------------------------------------

TEXT = st.text(st.characters(blacklist_categories=("Cs",)), max_size=10)
ARGUMENTS = st.dictionaries(st.text(max_size=4), st.one_of(st.integers(-2**53, 2**53), TEXT, st.booleans()), max_size=3)


@st.composite
def conversations(draw) -> list[dict]:
    messages: list[dict] = []
    media: dict[str, list[str]] = {}
    for index in range(draw(st.integers(1, 5))):
        kind = draw(st.sampled_from(["system", "user", "parts", "assistant", "calls"]))
        if kind in ("system", "user", "assistant"):
            messages.append({"role": kind, "content": draw(TEXT)})
        elif kind == "parts":
            parts = []
            for _ in range(draw(st.integers(1, 3))):
                part_kind = draw(st.sampled_from(["text", "value", "image", "video", "named"]))
                if part_kind == "text":
                    parts.append({"type": "text", "text": draw(TEXT)})
                elif part_kind == "value":
                    parts.append({"type": "text", "value": draw(TEXT)})
                elif part_kind == "named":
                    parts.append({"type": "image", "image": draw(st.sampled_from(["a.png", "https://x.y/b.jpg"]))})
                else:
                    parts.append({"type": part_kind})
                    media.setdefault(part_kind + "s", []).append(f"{index}.{'png' if part_kind == 'image' else 'mp4'}")
            messages.append({"role": "user", "content": parts})
        else:
            calls = []
            for number in range(draw(st.integers(1, 2))):
                arguments = draw(ARGUMENTS)
                call = {"type": "function", "function": {"name": draw(st.text(min_size=1, max_size=5)),
                        "arguments": arguments if draw(st.booleans()) else json.dumps(arguments)}}
                if draw(st.booleans()):
                    call = {"id": f"id{index}_{number}", **call}
                calls.append(call)
            messages.append({"role": "assistant", "tool_calls": calls} if draw(st.booleans())
                            else {"role": "assistant", "content": draw(TEXT), "tool_calls": calls})
            for call in calls:
                result = {"role": "tool", "content": draw(TEXT)}
                if "id" in call and draw(st.booleans()):
                    result["tool_call_id"] = call["id"]
                if draw(st.booleans()):
                    result["name"] = call["function"]["name"]
                messages.append(result)
    return [messages, media]


@st.composite
def rows(draw):
    messages, media = draw(conversations())
    form = draw(st.sampled_from(["messages", "late", "trl", "bare"]))
    columns = {**media, **draw(st.dictionaries(st.sampled_from(["id", "tools", "source"]), TEXT, max_size=2))}
    if form == "bare" and not media:
        return messages
    if form == "trl" and len(messages) > 1:
        split = draw(st.integers(1, len(messages) - 1))
        return {"prompt": messages[:split], "completion": messages[split:], **columns}
    if form == "late" and columns:
        return {**columns, "messages": messages}
    return {"messages": messages, **columns}


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(rows(), min_size=1, max_size=3))
def test_any_row_comes_back_whole(tmp_path, records):
    back = round_trip(tmp_path, records, "hf-messages", forced=True)
    assert back == records
    # key order kept too, and nothing lost: every message's keys and text, in order
    assert [json.dumps(r) for r in back] == [json.dumps(r) for r in records]


@pytest.mark.parametrize("name", sorted(p.name for p in REAL.iterdir()))
def test_a_real_dataset_file_comes_back_whole(tmp_path, name):
    # Files LLaMA-Factory and Microsoft's fine-tuning samples ship (tests/data/formats/README.md).
    written, back = real_file_back(tmp_path, REAL / name, "hf-messages", forced=True)
    assert back == written  # key order too


def test_real_files_are_told_apart_by_their_marks(tmp_path):
    # LLaMA-Factory's media rows carry media columns; Microsoft's tool-calling sample is OpenAI's own form.
    for name, expected in [("mllm_demo.json", "hf-messages"), ("mllm_audio_demo.json", "hf-messages"),
                           ("mllm_video_audio_demo.json", "hf-messages"),
                           ("stock_toolcall_validation.jsonl", "openai-chat")]:
        text = (REAL / name).read_text(encoding="utf-8")
        rows = json.loads(text) if name.endswith(".json") else [json.loads(line) for line in text.splitlines()]
        assert {tuple(_detected(row)) for row in rows} == {(expected,)}, name


# --- the quick path (a row of common messages in one pass) is the full path's equal -------------

COLUMNS = st.dictionaries(st.sampled_from(["id", "source", "images", "system", "tools", "model"]),
                          st.one_of(st.integers(0, 9), TEXT), max_size=2)


@st.composite
def common_rows(draw) -> dict:
    messages: list[dict] = []
    for index in range(draw(st.integers(1, 4))):
        kind = draw(st.sampled_from(["user", "assistant", "system", "calls", "weighted", "reversed"]))
        if kind in ("user", "assistant", "system"):
            messages.append({"role": kind, "content": draw(TEXT)})
        elif kind == "weighted":
            messages.append({"role": draw(st.sampled_from(["assistant", "user"])), "content": draw(TEXT),
                             "weight": draw(st.sampled_from([0, 1]))})
        elif kind == "reversed":
            messages.append({"content": draw(TEXT), "role": "user"})
        else:
            call = {"id": f"c{index}", "type": "function",
                    "function": {"name": "f", "arguments": json.dumps(draw(ARGUMENTS), separators=(",", ":"))}}
            messages.append({"role": "assistant", "content": draw(st.none() | TEXT), "tool_calls": [call]})
            messages.append(draw(st.sampled_from([{"role": "tool", "tool_call_id": f"c{index}", "content": "r"},
                                                  {"role": "tool", "content": "r", "tool_call_id": f"c{index}"}])))
    row = {"messages": messages, **draw(COLUMNS)}
    return dict(draw(st.permutations(list(row.items()))))


@settings(max_examples=150, deadline=None)
@given(st.lists(common_rows(), min_size=1, max_size=4))
def test_the_quick_way_reads_as_the_full_path_does(rows):
    lines = [json.dumps(row, ensure_ascii=False).encode() for row in rows]
    assert imported_lines(lines, quick=True) == imported_lines(lines, quick=False)


def test_common_dataset_rows_go_the_quick_way(monkeypatch):
    # Counted: the full reading is not asked for a row of plain messages and an id column.
    calls = []
    monkeypatch.setattr(hf_messages, "read", lambda reading: calls.append(reading) or iter(()))
    row = {"id": 3, "messages": [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"}]}
    out, counts, formats, problems, _ = imported_lines([json.dumps(row).encode()], quick=True)
    assert calls == [] and counts == (1, 1, 1) and formats == {"hf-messages": 1} and problems == []
    assert orjson.loads(out[0])["metadata"] == {"hf-messages": {"id": 3, "messages": 2}}


def test_bad_part_types_are_problems_and_columns_named_like_trls_are_columns(tmp_path):
    from conftest import run_chatconv
    bad = write_jsonl(tmp_path / "bad.jsonl", [{"messages": [{"role": "user", "content": [{"type": []}]}], "id": 1}])
    result = run_chatconv("import", bad)  # (run_chatconv fails on a traceback)
    assert result.returncode == 1 and "$.messages[0].content[0]" in result.stderr_text
    # integer columns that happen to be named prompt and completion are the row's own
    row = {"messages": [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "yo"}],
           "prompt": 12, "completion": 30}
    assert round_trip(tmp_path, [row], "hf-messages") == [row]
    # TRL rows: the ids given to calls without one are the row's, not each list's
    trl = {"prompt": [{"role": "user", "content": "q"}, {"role": "assistant", "tool_calls": [
        {"type": "function", "function": {"name": "f", "arguments": {}}}]}, {"role": "tool", "content": "r"}],
           "completion": [{"role": "assistant", "tool_calls": [
               {"type": "function", "function": {"name": "f", "arguments": {}}}]}, {"role": "tool", "content": "s"}]}
    steps = read_jsonl(import_and_validate(tmp_path, write_jsonl(tmp_path / "trl.jsonl", [trl])))
    ids = [p["toolCallId"] for s in steps for m in s["output"] if m["role"] == "assistant" for p in m["content"]]
    assert len(ids) == len(set(ids)) == 2
