"""Seed 003: an app's chat history as native API messages, trimmed to a token budget."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from chatconv.history import split_turns, to_native_messages, trim_to_budget
from chatconv.problems import ChatconvError

HISTORY = [{"role": "human", "content": "Hi Ei"}, {"role": "system", "content": "Hello, Flare!"}]


def test_history_becomes_native_messages_not_a_blob():
    assert to_native_messages(HISTORY, "How are you?") == [
        {"role": "user", "content": "Hi Ei"},
        {"role": "assistant", "content": "Hello, Flare!"},
        {"role": "user", "content": "How are you?"}]


def test_heartbeat_has_no_current_message_and_ends_with_the_assistant():
    assert to_native_messages(HISTORY)[-1] == {"role": "assistant", "content": "Hello, Flare!"}


def test_unknown_role_names_the_message():
    with pytest.raises(ChatconvError, match=r"\$\[1\]\.role: role 'narrator' has no API role"):
        to_native_messages([HISTORY[0], {"role": "narrator", "content": "..."}])


def test_custom_role_map():
    assert to_native_messages([{"role": "me", "content": "x"}], role_map={"me": "user"}) == [
        {"role": "user", "content": "x"}]


def _turn(i, with_tool=False):
    turn = [{"role": "user", "content": f"question {i}"}]
    if with_tool:
        turn += [{"role": "assistant", "content": None, "tool_calls": [{"id": f"c{i}"}]},
                 {"role": "tool", "tool_call_id": f"c{i}", "content": "result"}]
    return turn + [{"role": "assistant", "content": f"answer {i}"}]


def test_trimming_drops_whole_oldest_turns_and_keeps_the_system_prompt():
    messages = [m for i in range(5) for m in _turn(i, with_tool=i % 2 == 0)]
    count = lambda m: 10  # every message costs 10 tokens
    kept = trim_to_budget("persona", messages, budget=75, count_tokens=count)
    assert kept[0] == {"role": "system", "content": "persona"}
    assert kept[1:] == _turn(3) + _turn(4, with_tool=True)  # 10 + 20 + 40 tokens; turn 2 would exceed


def test_newest_turn_is_kept_even_over_budget():
    assert trim_to_budget(None, _turn(0), budget=1) == _turn(0)


@given(st.lists(st.tuples(st.booleans(), st.integers(1, 50)), min_size=1, max_size=12), st.integers(0, 400))
def test_trimming_keeps_a_newest_suffix_of_whole_turns_within_budget(shape, budget):
    turns = [_turn(i, with_tool) for i, (with_tool, _) in enumerate(shape)]
    messages = [m for t in turns for m in t]
    cost = lambda m: len(str(m.get("content"))) + 3
    kept = trim_to_budget(None, messages, budget, cost)
    assert messages[len(messages) - len(kept):] == kept  # a suffix, in order
    assert split_turns(kept) == turns[len(turns) - len(split_turns(kept)):]  # of whole turns
    assert len(split_turns(kept)) == 1 or sum(map(cost, kept)) <= budget
    kept_turns = len(split_turns(kept))
    if kept_turns < len(turns):  # the next older turn would not have fitted
        assert sum(map(cost, kept)) + sum(map(cost, turns[-kept_turns - 1])) > budget
    # a tool call is never separated from its result
    ids = {c["id"] for m in kept for c in m.get("tool_calls", [])}
    assert ids == {m["tool_call_id"] for m in kept if m["role"] == "tool"}
