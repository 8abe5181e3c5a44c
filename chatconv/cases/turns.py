"""A conversation test (`mode: conversation`): its turns and its window, as AgentV's loader
keeps them (the tests era from v4, and the current era), for prompts that play them
(prompt/turns.py).
"""

from __future__ import annotations


def conversation_turns(test: dict, variables: dict | None = None) -> list[dict] | None:
    """A conversation test's turns as AgentV's loader keeps them (each with its input, and its
    expected output and graders when it has them), rendered with the test's vars when given;
    None for a test that is no conversation, or has no turn."""
    turns = test.get("turns")
    if test.get("mode") != "conversation" or not isinstance(turns, list) or not turns:
        return None
    kept = []
    for turn in turns:
        if not isinstance(turn, dict) or "input" not in turn:
            continue
        made = {key: turn[key] for key in ("input", "expected_output") if key in turn}
        graders = turn.get("assert", turn.get("assertions"))
        if graders is not None:
            made["assert"] = graders
        if variables is not None:
            from .templates import render  # here: a tests-era file's reading needs no Jinja2

            made = render(made, variables)
        kept.append(made)
    return kept or None


def window_size(test: dict) -> float | None:
    """How many earlier exchanges each turn sees, where AgentV's loader takes it (a number of at
    least 1: it drops any other value without a word, and each turn then sees them all)."""
    size = test.get("window_size")
    valid = isinstance(size, (int, float)) and not isinstance(size, bool) and size >= 1
    return size if valid else None
