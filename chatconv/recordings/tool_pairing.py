"""The pairing of a file's tool events (tool_events) across the steps of each conversation, in
this process (ToolRows). A call waiting for its result holds its id, name and place only: its
arguments are read again from its line when its row is written (a file that cannot be read
again, standard input or a JSON array, keeps them instead). A conversation's rows are written in
the order of its calls, each as soon as it and the earlier calls of the conversation are final.
"""

from __future__ import annotations

from collections import deque
from typing import Any, Iterator

import orjson

from ..messages import tool_call_of
from ..pairing import CONVERSATION_WINDOW, ConversationWindow
from ..problems import Problem
from ..sources import FieldMap, Record, open_raw, problem_at
from ..validate import duplicate_call_problem, orphan_result_problem
from .batches import record_at
from .steps import _record_steps
from .tool_events import CALL, row_bytes

DEFAULT_MAX_MEMORY = 64 * 1024 * 1024
# What holding each thing costs, in bytes, over the lengths of its strings: Python's objects
# and the dicts and sets they sit in (measured roughly; the cap is on this estimate).
_ID_COST, _CALL_COST, _ROW_COST, _CONVERSATION_COST = 100, 300, 80, 600


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
            self._stream = open_raw(self.file)
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

