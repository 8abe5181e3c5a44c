"""Helpers over AI SDK model messages and the conversation steps that hold them (seed 004)."""

from __future__ import annotations

from typing import Any, Iterator

from .problems import ChatconvError, Problem


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


_TOOL_TYPES = ("tool-call", "tool-result")


def step_tool_parts(step: dict, path: tuple = ()) -> list[tuple[tuple, dict]]:
    """(path in the record, part) of each tool-call and tool-result part of a step found at
    `path` in its record, in order: the input's, then each output message's (a legacy
    single-message output is read at ("output",)). validate pairs them by these paths; `tools`
    reads the parts. A list made without generators: both read every line of a recording with it."""
    found: list[tuple[tuple, dict]] = []
    message = step.get("input")
    if isinstance(message, dict):
        _add_tool_parts(message.get("content"), path + ("input", "content"), found)
    output = step.get("output")
    if isinstance(output, list):
        for index, message in enumerate(output):
            content = message.get("content") if isinstance(message, dict) else None
            if isinstance(content, list):  # most output messages' content is a string
                _add_tool_parts(content, path + ("output", index, "content"), found)
    elif isinstance(output, dict):
        _add_tool_parts(output.get("content"), path + ("output", "content"), found)
    return found


def _add_tool_parts(content: Any, path: tuple, found: list) -> None:
    if isinstance(content, list):
        for index, part in enumerate(content):
            if isinstance(part, dict) and part.get("type") in _TOOL_TYPES:
                found.append((path + (index,), part))


# ---------------------------------------------------------------------------------------------
# Output arrays, text and tool calls (SPEC §5)


def normalize_output(output: Any) -> list:
    """A step's output as an array: a list stays, one message becomes [message]."""
    if isinstance(output, list):
        return output
    if isinstance(output, dict):
        return [output]
    kind = "null" if output is None else type(output).__name__
    raise ChatconvError(Problem("<step>", None, None, "$.output",
                                f"output must be a message or an array of messages, got {kind}",
                                "error", "record every message the agent produced as a list", "wrong-type"))


def extract_text_from_message(message: dict, include_reasoning: bool = False) -> str:
    """String content as it is; else the text parts (and reasoning, when asked) joined by lines."""
    content = message.get("content")
    if isinstance(content, str):
        return content
    kinds = ("text", "reasoning") if include_reasoning else ("text",)
    return "\n".join(p["text"] for p in message_parts(message)
                     if isinstance(p, dict) and p.get("type") in kinds and isinstance(p.get("text"), str))


def extract_text_from_messages(messages: list, include_reasoning: bool = False) -> str:
    """Each message's text, empty ones left out, separated by a blank line."""
    texts = (extract_text_from_message(m, include_reasoning) for m in messages if isinstance(m, dict))
    return "\n\n".join(t for t in texts if t)


def extract_tool_calls(message: dict) -> list[dict]:
    """The tool calls of an assistant message, in order: {toolCallId, toolName, args}."""
    if not isinstance(message, dict) or message.get("role") != "assistant":
        return []
    return [tool_call_of(p) for p in message_parts(message) if isinstance(p, dict) and p.get("type") == "tool-call"]


def tool_call_of(part: dict) -> dict:
    """A tool-call part as {toolCallId, toolName, args} (AI SDK 4 `args` read too)."""
    return {"toolCallId": part.get("toolCallId"), "toolName": part.get("toolName"),
            "args": part["input"] if "input" in part else part.get("args", {})}


def extract_tool_calls_from_messages(messages: list) -> list[dict]:
    """The tool calls of every assistant message, in order: {toolCallId, toolName, args}."""
    return [call for message in messages for call in extract_tool_calls(message)]


def typed_tool_output(result: Any, is_error: bool = False) -> dict:
    """An AI SDK 4 `result` as an AI SDK 5 output: text for a string, else json; error-* on error."""
    kind = "text" if isinstance(result, str) else "json"
    return {"type": f"error-{kind}" if is_error else kind, "value": result}


def is_error_output(output: dict) -> bool:
    """Whether a tool result's AI SDK 5 output says the tool failed (error-text, error-json)."""
    return str(output.get("type", "")).startswith("error-")


def extract_tool_results(message: dict) -> list[dict]:
    """The tool results of a message, in order: {toolCallId, toolName, output} (AI SDK 5 output)."""
    return [tool_result_of(p) for p in message_parts(message) if isinstance(p, dict) and p.get("type") == "tool-result"]


def tool_result_of(part: dict) -> dict:
    """A tool-result part as {toolCallId, toolName, output} (AI SDK 4 `result` read as an output)."""
    output = part["output"] if "output" in part else typed_tool_output(part.get("result"), part.get("isError") is True)
    return {"toolCallId": part.get("toolCallId"), "toolName": part.get("toolName"), "output": output}


def extract_tool_results_from_messages(messages: list) -> list[dict]:
    """The tool results of every message, in order: {toolCallId, toolName, output}."""
    return [result for message in messages for result in extract_tool_results(message)]


def step_messages(step: dict) -> list:
    """The input and every output message of a step, in order."""
    return [message for _, message in iter_step_messages(step)]


def conversation_messages(steps: list[dict]) -> list[dict]:
    """A conversation's messages in order (each step's input, then its outputs), for replay; a
    legacy one-message output is read as [message]."""
    return [message for step in steps
            for message in step_messages({**step, "output": normalize_output(step["output"])})]


# A step's input that was never recorded (a response logged without its request): a user message
# with no content, marked so that nothing takes it for what the user said. `text` and `dataset`
# read it as empty; export writes no request body that would need it.
_UNRECORDED_MARK = {"unrecorded": True}


def unrecorded_input() -> dict:
    """The input of a step whose request was not recorded (a fresh dict: callers may keep fields on it)."""
    return {"role": "user", "content": "", "providerOptions": {"chatconv": dict(_UNRECORDED_MARK)}}


def is_unrecorded(message: Any) -> bool:
    """Whether `message` stands for an input that was not recorded (unrecorded_input)."""
    options = message.get("providerOptions") if isinstance(message, dict) else None
    return isinstance(options, dict) and options.get("chatconv") == _UNRECORDED_MARK
