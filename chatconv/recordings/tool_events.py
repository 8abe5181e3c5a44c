"""The tool events of a recording's steps, for the `tools` rows, read in a worker process (or
here) by tool_facts: a call answered in its own step (the usual case) comes back as its finished
row; any other call as its id, name and place, and a result that answers no call of its own step
as its id, status and value. tool_pairing pairs those across steps.
"""

from __future__ import annotations

from typing import Any, Iterable

import orjson

from ..messages import is_error_output, step_tool_parts, tool_call_of, tool_result_of
from ..problems import Problem
from ..sources import NotWritten, Record, exact_json, problem_at
from .rows import row_line
from .steps import Step, record_steps

TOOL_COLUMNS = ("conversationId", "stepIndex", "toolName", "status", "toolCallId")
# A step's tool events, in the order of its parts: [CALL, toolCallId, toolName, path of the part
# in its record, its row written when answered in its own step (b"" when left out) or None, its
# arguments as JSON when its line cannot be read again or None, left out (not written exactly)]
# and (RESULT, toolCallId, path, status, its value as JSON or None when not written exactly).
CALL, RESULT = 0, 1


def tool_parts(item: Step) -> list[tuple[tuple, dict]]:
    """(path in its record, part) of each tool-call and tool-result part of a step, in order."""
    return step_tool_parts(item.step, item.path)


def _written(item: Step, value: Any, spot: tuple, call_id: Any, problems: list[Problem]) -> bytes | None:
    """`value` as exact JSON, one level down as a row holds it; None, with a problem, when it
    cannot be written (the call's row is then left out)."""
    try:
        return exact_json([value], item.record.text)[1:-1]
    except NotWritten as exc:
        problems.append(problem_at(item.record, spot, f"tool call {call_id!r} left out: {exc}", hint=exc.hint,
                                   code="not-written"))
        return None


def row_bytes(conversation_id: Any, step_index: Any, call_id: Any, name: Any, args: bytes, result: bytes | None,
              status: str, output_format: str) -> bytes:
    """A `tools` row as written, with its newline; args and result are JSON already."""
    row = {"conversationId": conversation_id, "stepIndex": step_index, "toolCallId": call_id, "toolName": name,
           "args": orjson.Fragment(args), "result": None if result is None else orjson.Fragment(result),
           "status": status}
    return row_line(row, None, output_format, TOOL_COLUMNS)


def _step_events(item: Step, keep_args: bool, output_format: str, problems: list[Problem]) -> tuple:
    """The tool events of a step, in the order of its parts (see CALL and RESULT)."""
    events = _plain_step_events(item, keep_args, output_format)
    if events is not None:
        return events
    return _checked_step_events(item, keep_args, output_format, problems)


def _plain_step_events(item: Step, keep_args: bool, output_format: str) -> tuple | None:
    """_step_events for a step whose values are all written as read (nearly every step), a row
    written in one go; None when one is not, for _checked_step_events to say which."""
    events: list = []
    local: dict[Any, list] = {}
    index = item.step.get("stepIndex")
    text = item.record.text
    try:
        for path, part in tool_parts(item):
            if part["type"] == "tool-call":
                call = tool_call_of(part)
                event = local[call["toolCallId"]] = [CALL, call["toolCallId"], call["toolName"], path, None,
                                                     call["args"], False]
                events.append(event)
                continue
            result = tool_result_of(part)
            call_id = result["toolCallId"]
            value = result["output"].get("value")
            status = "error" if is_error_output(result["output"]) else "ok"
            event = local.pop(call_id, None)
            if event is None:
                events.append((RESULT, call_id, path, status, _plain([value], text)[1:-1]))
                continue
            row = {"conversationId": item.conversation_id, "stepIndex": index, "toolCallId": call_id,
                   "toolName": event[2], "args": event[5], "result": value, "status": status}
            event[4] = row_line(row, _plain(row, text), output_format, TOOL_COLUMNS)
            event[5] = None
        waiting = [event for event in events if event[0] == CALL and event[4] is None]
        if waiting:
            _plain([index], text)
        for event in waiting:
            written = _plain([event[5]], text)[1:-1]
            event[5] = written if keep_args else None
    except NotWritten:
        return None
    return tuple(tuple(event) for event in events)


def _plain(value: Any, text: Any) -> bytes:
    """`value` as JSON; NotWritten when it may not be written as read (see exact_json)."""
    try:
        line = orjson.dumps(value)
    except orjson.JSONEncodeError:
        raise NotWritten("", None) from None
    if b"+" in line and text:
        raise NotWritten("", None)  # perhaps an integer beyond 64 bits: exact_json looks
    return line


def _checked_step_events(item: Step, keep_args: bool, output_format: str, problems: list[Problem]) -> tuple:
    """_step_events, each value checked in turn (exact_json), with a problem for each that
    cannot be written."""
    events: list = []
    local: dict[Any, list] = {}  # call id -> its event, while not answered in this step
    index = item.step.get("stepIndex")
    for path, part in tool_parts(item):
        if part["type"] == "tool-call":
            call = tool_call_of(part)
            call_id = call["toolCallId"]
            # One problem a call at most: its stepIndex, else its arguments.
            args = None
            if _written(item, index, item.path + ("stepIndex",), call_id, problems) is not None:
                args = _written(item, call["args"], path + ("input",), call_id, problems)
            event = [CALL, call_id, call["toolName"], path, None, args, args is None]
            local[call_id] = event  # a second call of the id in the step: the first is answered by none here
            events.append(event)
            continue
        result = tool_result_of(part)
        call_id = result["toolCallId"]
        value = _written(item, result["output"].get("value"), path + ("output", "value"), call_id, problems)
        status = "error" if is_error_output(result["output"]) else "ok"
        event = local.pop(call_id, None)
        if event is not None:
            if not event[6] and value is not None:
                event[4] = row_bytes(item.conversation_id, index, call_id, event[2], event[5], value, status,
                                     output_format)
            else:
                event[4] = b""  # answered, left out
            event[5] = None
        else:  # answers a call of an earlier step, or repeats a result, or answers none
            events.append((RESULT, call_id, path, status, value))
    if not keep_args:
        for event in events:
            if event[0] == CALL:
                event[5] = None  # read again from the file when needed
    return tuple(tuple(event) for event in events)


def tool_facts(records: Iterable[tuple[Record, Any]], settings: tuple) -> list[tuple]:
    """In a worker (or here), for each record: (line, offset, problems of the record, its steps
    as (conversation id, step index, step path, problems, events))."""
    field_map, output_format = settings
    facts = []
    for record, offset in records:
        problems: list[Problem] = []
        steps = []
        for item in record_steps(record, field_map, problems):
            found: list[Problem] = []
            events = _step_events(item, offset is None, output_format, found)
            steps.append((item.conversation_id, item.step.get("stepIndex"), item.path, found, events))
        facts.append((record.line, offset, problems, steps))
    return facts
