"""The `tools` rows of a recording: each tool call with its result, paired by toolCallId across
the steps of a conversation, within the one window of recent conversations (messages), with
what is held between lines bounded in bytes (--max-memory).

A worker reads each step (tool_facts): a call answered in its own step (the usual case) comes
back as its finished row; any other call as its id, name and place, and a result that answers
no call of its own step as its id, status and value. This process pairs those across steps
(ToolRows). A call waiting for its result holds its id, name and place only: its arguments are
read again from its line when its row is written (a file that cannot be read again, standard
input or a JSON array, keeps them instead). A conversation's rows are written in the order of
its calls, each as soon as it and the earlier calls of the conversation are final.
"""

from __future__ import annotations

from collections import deque
from pathlib import Path
from typing import Any, Iterable, Iterator

import orjson

from ..messages import (CONVERSATION_WINDOW, ConversationWindow, is_error_output, iter_tool_parts, tool_call_of,
                        tool_result_of)
from ..problems import ChatconvError, Problem, UnreadableInput
from ..sources import BATCH_BYTES, FieldMap, NotWritten, Record, discover, exact_json, problem_at
from ..validate import duplicate_call_problem, orphan_result_problem
from .batches import RecordRunner, record_at
from .rows import row_line
from .steps import Step, _is_array, _record_steps, record_steps

DEFAULT_MAX_MEMORY = 64 * 1024 * 1024
TOOL_COLUMNS = ("conversationId", "stepIndex", "toolName", "status", "toolCallId")
# A step's tool events, in the order of its parts: [CALL, toolCallId, toolName, path of the part
# in its record, its row written when answered in its own step (b"" when left out) or None, its
# arguments as JSON when its line cannot be read again or None, left out (not written exactly)]
# and (RESULT, toolCallId, path, status, its value as JSON or None when not written exactly).
CALL, RESULT = 0, 1
# What holding each thing costs, in bytes, over the lengths of its strings: Python's objects
# and the dicts and sets they sit in (measured roughly; the cap is on this estimate).
_ID_COST, _CALL_COST, _ROW_COST, _CONVERSATION_COST = 100, 300, 80, 600


def tool_parts(item: Step) -> Iterator[tuple[tuple, dict]]:
    """(path in its record, part) of each tool-call and tool-result part of a step, in order."""
    for path, part in iter_tool_parts(item.step):
        yield item.path + path, part


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


_TOOL_TYPES = ("tool-call", "tool-result")


def _tool_parts_list(item: Step) -> list[tuple[tuple, dict]]:
    """tool_parts as a list, read without generators: the same parts and paths, for the hot path
    (a path is made only for a tool part)."""
    found: list[tuple[tuple, dict]] = []
    step = item.step
    message = step.get("input")
    if isinstance(message, dict):
        _add_tool_parts(message, item.path + ("input",), found)
    output = step.get("output")
    if isinstance(output, list):
        for index, message in enumerate(output):
            if isinstance(message, dict):
                _add_tool_parts(message, (index,), found, item.path + ("output",))
    elif isinstance(output, dict):
        _add_tool_parts(output, item.path + ("output",), found)
    return found


def _add_tool_parts(message: dict, path: tuple, found: list, prefix: tuple = ()) -> None:
    content = message.get("content")
    if isinstance(content, list):
        for index, part in enumerate(content):
            if isinstance(part, dict) and part.get("type") in _TOOL_TYPES:
                found.append((prefix + path + ("content", index), part))


def _step_events(item: Step, keep_args: bool, output_format: str, problems: list[Problem]) -> tuple:
    """The tool events of a step, in the order of its parts (see the module's docstring)."""
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
        for path, part in _tool_parts_list(item):
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


class _Call:
    """A call of a conversation, until its row is written: its id, name and place (and its
    arguments when its line cannot be read again), then its row."""

    __slots__ = ("call_id", "name", "step_index", "path", "where", "args", "row", "final", "left_out")

    def __init__(self, call_id, name, step_index, path, where, args, left_out):
        self.call_id, self.name, self.step_index, self.path, self.where = call_id, name, step_index, path, where
        self.args, self.left_out, self.row, self.final = args, left_out, None, False


class _Conversation:
    __slots__ = ("seen", "open", "queue", "held")

    def __init__(self) -> None:
        self.seen: set = set()  # every call id used, for repeated ids and repeated results
        self.open: dict[Any, _Call] = {}  # the calls waiting for a result
        self.queue: deque[_Call] = deque()  # the calls whose rows are not written yet, in call order
        self.held = _CONVERSATION_COST


class ToolRows:
    """Pairs the tool events of a file's steps (tool_facts) across steps and gives the rows
    written, in order (see the module's docstring). Holds at most `max_memory` bytes (an
    estimate): past it, the least recently active conversations are finished early, their
    waiting calls written unanswered, with a warning. Problems are appended to `problems`."""

    def __init__(self, file: str, field_map: FieldMap | None, output_format: str, window: int = CONVERSATION_WINDOW,
                 max_memory: int = DEFAULT_MAX_MEMORY, problems: list[Problem] | None = None):
        self.file, self.field_map, self.output_format = file, field_map, output_format
        self.max_memory = max_memory
        self.problems = [] if problems is None else problems
        self.held = 0  # bytes held, by the estimate
        self._window: ConversationWindow[_Conversation] = ConversationWindow(window, self._new_conversation)
        self._cached: tuple[Any, Record] | None = None  # the last record read again
        self._stream = None  # the file, open while lines are read again

    def add(self, record: Record | None, facts: tuple) -> Iterator[bytes]:
        """The rows made final by one record's facts; `record` is the Record when its line
        cannot be read again (else it is, by its offset)."""
        line, offset, problems, steps = facts
        self.problems.extend(problems)
        where = record if record is not None else (offset, line)
        for conversation_id, step_index, step_path, found, events in steps:
            self.problems.extend(found)
            conversation, evicted = self._window.follow(conversation_id)
            for gone_id, gone in evicted:
                yield from self._close(gone_id, gone)
            for event in events:
                if event[0] == CALL and event[4] is not None and not conversation.queue:
                    # Answered in its own step with no call of its conversation waiting (so no
                    # earlier call of its id open either): the usual call, written at once.
                    self._seen(conversation, event[1], step_path + event[3], where)
                    if event[4]:
                        yield event[4]
                elif event[0] == CALL:
                    yield from self._call(conversation_id, conversation, step_index, step_path, where, event)
                else:
                    yield from self._result(conversation_id, conversation, step_path, where, event)
            yield from self._flush(conversation)
            while self.held > self.max_memory and len(self._window):
                gone_id, gone = self._window.pop_oldest()
                if gone.open:
                    self.problems.append(self._early(gone_id, gone, where, step_path))
                yield from self._close(gone_id, gone)

    def _new_conversation(self) -> _Conversation:
        conversation = _Conversation()
        self.held += conversation.held
        return conversation

    def finish(self) -> Iterator[bytes]:
        for conversation_id, conversation in self._window.drain():
            yield from self._close(conversation_id, conversation)
        self.close()

    def close(self) -> None:
        if self._stream is not None:
            self._stream.close()
            self._stream = None

    def _call(self, conversation_id, conversation: _Conversation, step_index, step_path, where, event) -> Iterator[bytes]:
        _, call_id, name, path, row, args, left_out = event
        self._seen(conversation, call_id, step_path + path, where)
        earlier = conversation.open.pop(call_id, None)
        if earlier is not None:  # a call whose id is used again: no result can answer it now
            self._settle(conversation_id, conversation, earlier, None, "unanswered")
        # A call read whole here (not from a line read again) keeps its arguments, not its record.
        call = _Call(call_id, name, step_index, step_path + path, where if isinstance(where, tuple) else None, args,
                     left_out)
        conversation.queue.append(call)
        if row is not None:
            call.final, call.row = True, row or None
            if row:
                self._hold(conversation, _ROW_COST + len(row))
        else:
            conversation.open[call_id] = call
            self._hold(conversation, _CALL_COST + _size(call_id) + _size(name) + len(args or b""))
        return iter(())

    def _seen(self, conversation: _Conversation, call_id: Any, path: tuple, where) -> None:
        """Notes a call's id; a repeated one is a problem at the call."""
        if call_id in conversation.seen:
            self.problems.append(duplicate_call_problem(self._record(where), path, call_id))
        else:
            conversation.seen.add(call_id)
            self._hold(conversation, _ID_COST + _size(call_id))

    def _result(self, conversation_id, conversation: _Conversation, step_path, where, event) -> Iterator[bytes]:
        _, call_id, path, status, value = event
        call = conversation.open.pop(call_id, None)
        if call is not None:
            self._settle(conversation_id, conversation, call, value, status)
        elif call_id not in conversation.seen:
            self.problems.append(orphan_result_problem(self._record(where), step_path + path, call_id))
        return iter(())

    def _settle(self, conversation_id, conversation: _Conversation, call: _Call, value: bytes | None,
                status: str) -> None:
        """The call's row, final: answered (status ok or error, value its result) or unanswered."""
        self._hold(conversation, -(_CALL_COST + _size(call.call_id) + _size(call.name) + len(call.args or b"")))
        call.final = True
        if call.left_out or (status != "unanswered" and value is None):
            return
        args = call.args if call.args is not None else self._args(call)
        call.row = row_bytes(conversation_id, call.step_index, call.call_id, call.name, args, value, status,
                             self.output_format)
        self._hold(conversation, _ROW_COST + len(call.row))

    def _flush(self, conversation: _Conversation) -> Iterator[bytes]:
        queue = conversation.queue
        while queue and queue[0].final:
            call = queue.popleft()
            if call.row is not None:
                self._hold(conversation, -(_ROW_COST + len(call.row)))
                yield call.row

    def _close(self, conversation_id, conversation: _Conversation) -> Iterator[bytes]:
        """The conversation ends (the file's end, or it left the window): its waiting calls are
        unanswered, and every row is written."""
        for call in list(conversation.open.values()):
            self._settle(conversation_id, conversation, call, None, "unanswered")
        conversation.open.clear()
        yield from self._flush(conversation)
        self.held -= conversation.held

    def _hold(self, conversation: _Conversation, size: int) -> None:
        conversation.held += size
        self.held += size

    def _early(self, conversation_id, conversation: _Conversation, where, step_path) -> Problem:
        count = len(conversation.open)
        return problem_at(self._record(where), step_path, f"tool calls of conversation {conversation_id!r} "
                          f"written unanswered: --max-memory ({self.max_memory} bytes) reached with {count} call"
                          f"{'' if count == 1 else 's'} waiting; a later result for one will answer no call",
                          "warning", "raise --max-memory, or give each conversation's steps together",
                          code="memory-cap")

    def _record(self, where) -> Record:
        """The record at `where` (a Record, or (offset, line) of a JSONL line, read again and
        checked as before, so its paths are those of the steps read)."""
        if isinstance(where, Record):
            return where
        if self._cached is not None and self._cached[0] == where:
            return self._cached[1]
        if self._stream is None:
            self._stream = open(self.file, "rb")
        record = record_at(self.file, *where, self._stream)
        list(_record_steps(record, self.field_map, []))  # adapts and upgrades it as it was read
        self._cached = (where, record)
        return record

    def _args(self, call: _Call) -> bytes:
        data: Any = self._record(call.where).data
        for key in call.path:
            data = data[key]
        return orjson.dumps([tool_call_of(data)["args"]])[1:-1]  # exact: it was checked when first read


def _size(value: Any) -> int:
    return len(value) if isinstance(value, str) else 16


def tool_row_lines(paths: str | Path | Iterable[str | Path], field_map: FieldMap | None = None,
                   window: int = CONVERSATION_WINDOW, problems: list[Problem] | None = None,
                   unreadable: list[Problem] | None = None, output_format: str = "jsonl", jobs: int | None = 1,
                   max_memory: int = DEFAULT_MAX_MEMORY, batch_bytes: int = BATCH_BYTES,
                   scheduler: str | None = None) -> Iterator[bytes]:
    """Each `tools` row of a recording (files, folders, -), written, with its newline; see
    tool_rows. `jobs`: worker processes for a JSONL file (None: one per core for files of
    16 MiB or more), each given batches of about `batch_bytes`; the rows are the same whatever
    the number, or on the Dask cluster of the scheduler at the address `scheduler`."""
    paths = [paths] if isinstance(paths, (str, Path)) else paths
    found: list[Problem] = [] if problems is None else problems
    with RecordRunner(jobs, batch_bytes, scheduler) as runner:
        for file, _ in discover(paths):
            try:
                rows = ToolRows(file, field_map, output_format, window, max_memory, found)
                try:
                    steps = runner.results(file, tool_facts, (field_map, output_format), _is_array, reads_again=True)
                    for record, facts in steps:
                        yield from rows.add(record, facts)
                        if problems is None and found:
                            errors = [problem for problem in found if problem.is_error]
                            if errors:
                                raise ChatconvError(errors)
                            found.clear()  # warnings, with no list given to keep them in
                    yield from rows.finish()
                finally:
                    rows.close()
            except UnreadableInput as exc:
                if unreadable is None:
                    raise
                unreadable.extend(exc.problems)


def tool_rows(path: str | Path | Iterable[str | Path], field_map: FieldMap | None = None,
              window: int = CONVERSATION_WINDOW, problems: list[Problem] | None = None,
              unreadable: list[Problem] | None = None, jobs: int | None = 1,
              max_memory: int = DEFAULT_MAX_MEMORY, batch_bytes: int = BATCH_BYTES) -> Iterator[dict]:
    """Each tool call of a recording (a file, or several files and folders: see
    iter_paths_steps) with its result, streamed, file by file: calls are paired within a file.
    {"conversationId", "stepIndex", "toolCallId", "toolName", "args", "result", "status"}.

    status is ok, error or unanswered; result is the tool result's output value (None when
    unanswered). A conversation's rows come in the order of its calls, each once it and the
    calls before it are final: answered, or unanswered when the conversation leaves the window
    of the `window` most recently active ones, or the file ends, or what is held passes
    `max_memory` bytes (its least recently active conversations are finished early, with a
    warning). Steps left out (see iter_recording_steps), calls whose row cannot be written
    exactly (left out too), results that answer no call and repeated ids are appended to
    `problems`; without a list, the first error raises ChatconvError. A path that cannot be
    read raises UnreadableInput, or with an `unreadable` list is reported there.
    """
    for line in tool_row_lines(path, field_map, window, problems, unreadable, "jsonl", jobs, max_memory, batch_bytes):
        yield orjson.loads(line)
