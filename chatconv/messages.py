"""Helpers over AI SDK model messages and the conversation steps that hold them (seed 004)."""

from __future__ import annotations

from typing import Any, Iterator


def iter_steps(record: dict) -> Iterator[tuple[tuple, dict]]:
    """(path, step) for each step of a record: a conversation's steps, or the step itself."""
    if "steps" in record:
        steps = record["steps"]
        if isinstance(steps, list):
            for index, step in enumerate(steps):
                if isinstance(step, dict):
                    yield ("steps", index), step
    else:
        yield (), record


def iter_step_messages(step: dict) -> Iterator[tuple[tuple, Any]]:
    """(path within the step, message) for the input and each output message, in order.

    A legacy single-message output is yielded as one message at ("output",).
    """
    if "input" in step:
        yield ("input",), step["input"]
    output = step.get("output")
    if isinstance(output, list):
        for index, message in enumerate(output):
            yield ("output", index), message
    elif isinstance(output, dict):
        yield ("output",), output


def message_parts(message: Any) -> list:
    """The parts of a message's content; [] for string content or anything malformed."""
    if isinstance(message, dict):
        content = message.get("content")
        if isinstance(content, list):
            return content
    return []
