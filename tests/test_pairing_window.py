"""The pairing window, one rule with two callers: validate (its recording checks) and the `tools`
rows pair tool calls within the same window of recently active conversations, so they agree on
the results that answer no call, the calls left unanswered and the repeated ids."""

from __future__ import annotations

import random
import re
from collections import Counter

import orjson
import pytest

from chatconv.recordings import tool_rows
from chatconv.validate import validate_path
from conftest import write_jsonl

ORPHAN = re.compile(r"tool-result '(.+)' answers no earlier tool-call")
DUPLICATE = re.compile(r"duplicate toolCallId '(.+)'")
UNANSWERED = re.compile(r"tool-call '(.+)' is never answered")


def _step(conversation, index, calls=(), results=()):
    output = []  # the results of earlier calls, then the step's own calls
    if results:
        output.append({"role": "tool", "content": [
            {"type": "tool-result", "toolCallId": result, "toolName": "lookup",
             "output": {"type": "text", "value": "v"}} for result in results]})
    if calls:
        output.append({"role": "assistant", "content": [
            {"type": "tool-call", "toolCallId": call, "toolName": "lookup", "input": {"q": call}} for call in calls]})
    step = {"stepIndex": index, "input": {"role": "user", "content": "go"},
            "output": output or [{"role": "assistant", "content": "done"}]}
    return step if conversation is None else {"conversationId": conversation, **step}


def _interleaved():
    """Three conversations taking turns (and one without an id): calls answered a few steps
    later, a result after its conversation fell out of a small window, an id reused once its
    call was answered, a result for a call never made, a conversation that comes back."""
    return [
        _step("a", 0, calls=["a1", "a2"]),
        _step("b", 0, calls=["b1"]),
        _step("a", 1, results=["a1"]),
        _step("c", 0, calls=["c1"], results=["nope"]),
        _step("b", 1, results=["b1"], calls=["b1"]),  # answered, then the id used again
        _step(None, 0, calls=["n1"]),
        _step("a", 2, results=["a2"], calls=["a3"]),
        _step("c", 1, results=["c1"]),
        _step("b", 2, results=["b1"]),
        _step(None, 1, results=["n1"]),
        _step("a", 3, results=["a3"]),
        _step("d", 0, calls=["d1", "d2"]),
        _step("d", 1, results=["d1"], calls=["d1"]),  # the next step: in any window
        _step("b", 3, results=["zz"]),
    ]


def _shuffled(seed):
    """Conversations in a random order, each call answered (or not) some steps later in its own
    conversation, with ids never reused: a file no one wrote by hand."""
    rng = random.Random(seed)
    open_calls: dict[str, list[str]] = {}
    next_index: dict[str, int] = {}
    steps = []
    for number in range(120):
        conversation = rng.choice("pqrstu")
        waiting = open_calls.setdefault(conversation, [])
        results = [waiting.pop(rng.randrange(len(waiting))) for _ in range(min(len(waiting), rng.randint(0, 2)))]
        calls = [f"{conversation}{number}-{k}" for k in range(rng.choice((0, 0, 1, 2)))]
        waiting += calls
        index = next_index[conversation] = next_index.get(conversation, -1) + 1
        steps.append(_step(conversation, index, calls, results))
    return steps


def _at(problems, pattern):
    return sorted((p.line, p.path, pattern.match(p.message)[1]) for p in problems if pattern.match(p.message))


def _assert_agree(path, window=10_000):
    """validate and `tools` find the same orphans and duplicates (ids and paths) and the same
    unanswered calls; gives validate's problems."""
    found, _ = validate_path(path, conversation_window=window)
    reported = []
    rows = list(tool_rows(path, window=window, problems=reported))
    step_at = {line: orjson.loads(text) for line, text in enumerate(path.read_bytes().splitlines(), 1)}

    for rule in (ORPHAN, DUPLICATE):
        assert _at(found, rule) == _at(reported, rule)
    never_answered = Counter((step_at[line].get("conversationId"), step_at[line]["stepIndex"], call_id)
                             for line, _, call_id in _at(found, UNANSWERED))
    unanswered_rows = Counter((row["conversationId"], row["stepIndex"], row["toolCallId"])
                              for row in rows if row["status"] == "unanswered")
    assert never_answered == unanswered_rows
    return found


@pytest.mark.parametrize("window", [1, 2, 10_000])
@pytest.mark.parametrize("steps", [_interleaved(), _shuffled(7)], ids=["by-hand", "shuffled"])
def test_validate_and_tools_pair_calls_within_the_same_window(tmp_path, steps, window):
    path = write_jsonl(tmp_path / "steps.jsonl", steps)
    found = _assert_agree(path, window)
    # The window matters for these files: a small one finds more orphans than a large one.
    if window == 1:
        assert len(_at(found, ORPHAN)) > len(_at(validate_path(path)[0], ORPHAN))


def _part(kind, call_id):
    if kind == "call":
        return {"type": "tool-call", "toolCallId": call_id, "toolName": "lookup", "input": {}}
    return {"type": "tool-result", "toolCallId": call_id, "toolName": "lookup", "output": {"type": "text", "value": "v"}}


def _one_message(index, *parts):
    return {"stepIndex": index, "input": {"role": "user", "content": "go"},
            "output": [{"role": "assistant", "content": [_part(kind, call_id) for kind, call_id in parts]}]}


def test_parts_of_one_message_are_paired_in_their_order(tmp_path):
    """Calls and results in one message, in both orders, and two orphans of one id: each problem
    at its own part, the same for validate and `tools`."""
    path = write_jsonl(tmp_path / "steps.jsonl", [
        _one_message(0, ("result", "x"), ("call", "x")),  # the result comes first: it answers nothing
        _one_message(1, ("call", "y"), ("result", "y")),
        _one_message(2, ("result", "z"), ("result", "z"), ("call", "y"))])
    found = _assert_agree(path)
    assert _at(found, ORPHAN) == [(1, "$.output[0].content[0].toolCallId", "x"),
                                  (3, "$.output[0].content[0].toolCallId", "z"),
                                  (3, "$.output[0].content[1].toolCallId", "z")]
    assert _at(found, DUPLICATE) == [(3, "$.output[0].content[2].toolCallId", "y")]
    assert _at(found, UNANSWERED) == [(1, "$.output[0].content[1].toolCallId", "x"),
                                      (3, "$.output[0].content[2].toolCallId", "y")]
