"""The quick way a fine-tuning line of common shapes is imported (formats/quick_import.py) gives
what the full path gives: the same lines, counts, problems and state, or it leaves the record to
the full path."""

from __future__ import annotations

import io
import json

import orjson
from hypothesis import example, given, settings
from hypothesis import strategies as st

from chatconv.formats.importing import Importer
from chatconv.formats.quick_import import quick_lines
from chatconv.sources import iter_jsonl

from test_format_openai_chat import _nearcommon_message

_TOOLS = [{"type": "function", "function": {"name": "search", "parameters": {"type": "object"}}}]
# Top-level keys beside `messages`: a fine-tuning line's own, and keys by which another format
# (or openai-chat's response shape) could claim the object.
_BESIDE = st.dictionaries(st.sampled_from(["tools", "parallel_tool_calls", "x_note", "system", "choices", "type",
                                           "input", "contents", "request", "sessionId", "eval"]),
                          st.just(_TOOLS) | st.booleans() | st.just("hi") | st.just([]), max_size=2)
_CALL = {"role": "assistant", "content": None, "tool_calls": [
    {"id": "call_1", "type": "function", "function": {"name": "search", "arguments": '{"q":"x"}'}}]}
_ANSWER = {"role": "tool", "tool_call_id": "call_1", "content": "found"}


@st.composite
def _lines(draw):
    """A file of lines, most of them bodies of common-shape messages (calls answered or not)."""
    lines = []
    for _ in range(draw(st.integers(1, 3))):
        messages = draw(st.lists(_nearcommon_message() | st.sampled_from([_CALL, _ANSWER]), max_size=6))
        lines.append(json.dumps({"messages": messages, **draw(_BESIDE)}, ensure_ascii=draw(st.booleans())).encode())
    return lines


def _imported(lines: list[bytes], quick: bool) -> tuple:
    importer = Importer()
    importer.quick = quick
    out, touched = [], []
    for record in iter_jsonl(io.BytesIO(b"\n".join(lines) + b"\n"), "train.jsonl", 1):
        out.extend(importer.lines_of(record, touched))
    run, state = importer.run, importer.state
    return (out, touched, (run.records, run.conversations, run.steps), run.formats, run.problems,
            list(state.names.items()), list(state.next_steps.items()))


@settings(max_examples=300, deadline=None)
@given(lines=_lines())
@example(lines=[orjson.dumps({"messages": [{"role": "user", "content": "weather?"}, _CALL, _ANSWER,
                                           {"role": "assistant", "content": "sunny", "weight": 1}], "tools": _TOOLS})])
@example(lines=[orjson.dumps({"messages": [_ANSWER]})]).via("a result that answers no call")
@example(lines=[orjson.dumps({"messages": [{"role": "user", "content": "hi"}], "system": "be brief"})]
         ).via("an Anthropic body")
@example(lines=[b'{"messages":[{"role":"user","content":"hi"}],"n":123456789012345678901234567890}']
         ).via("an integer beyond 64 bits")
@example(lines=[b'{"messages":[{"role":"user","content":"hi"}],"messages":[]}']).via("a repeated key")
def test_the_quick_way_imports_as_the_full_path_does(lines):
    assert _imported(lines, quick=True) == _imported(lines, quick=False)


def test_a_fine_tuning_line_of_common_shapes_goes_the_quick_way():
    [record] = iter_jsonl(io.BytesIO(orjson.dumps({"messages": [{"role": "user", "content": "weather?"}, _CALL,
                                                                _ANSWER], "tools": _TOOLS}) + b"\n"), "t.jsonl", 1)
    lines, names = quick_lines(record, "t.jsonl:1")
    assert names == {"call_1": "search"}
    [step] = [orjson.loads(line) for line in lines]
    assert step["metadata"] == {"openai-chat": {"tools": _TOOLS}}
    assert [m["role"] for m in [step["input"], *step["output"]]] == ["user", "assistant", "tool"]
    assert step["output"][1]["content"][0]["toolName"] == "search"
