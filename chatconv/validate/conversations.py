"""The checks a schema cannot state across the steps of recordings: step order and tool-call
pairing, per conversation, in the one window of recent conversations (pairing.ConversationWindow).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from itertools import count
from typing import Any, Iterator, Protocol

from ..messages import iter_steps, step_tool_parts
from ..pairing import CONVERSATION_WINDOW, ORPHAN, CallLedger, ConversationWindow
from ..problems import Problem
from ..sources import Record, problem_at


# A tool-call or tool-result part of a valid step, as pairing needs it: (is a call, toolCallId,
# path in its record). A plain tuple: steps hold several, and the hot path makes them per line.
ToolPart = tuple[bool, str, tuple]


class RecordSource(Protocol):
    """Where the records being checked are kept: `record` turns a `where` (a line of a batch, or
    a record) into a Record to locate problems in. It is called only when a problem is found or
    a tool call is left open, and what it makes is kept until the call is answered: light."""

    def record(self, where: Any) -> Record: ...


class _AsItIs:
    """`where` is the record itself, located as it is (a conversation, checked whole)."""

    @staticmethod
    def record(where: Record) -> Record:
        return where


class _WithoutData:
    """`where` is the record itself, kept without its data (see light_record)."""

    @staticmethod
    def record(where: Record) -> Record:
        return light_record(where)


AS_IT_IS, WITHOUT_DATA = _AsItIs(), _WithoutData()


def light_record(record: Record) -> Record:
    """The record without its data: what locating a problem in it takes, kept for later."""
    return Record(record.file, record.line, text=record.text, positions=record.positions, prefix=record.prefix,
                  moved=record.moved, aliases=record.aliases)


def step_facts(step: dict, path: tuple = ()) -> tuple[int, tuple[ToolPart, ...]]:
    """A valid step's stepIndex and tool parts (see tool_parts). Its messages are walked: the
    record's text cannot tell it holds no tool part, JSON being free to write "tool\u002dcall"."""
    return step["stepIndex"], tool_parts(step, path)


def tool_parts(step: dict, path: tuple = ()) -> tuple[ToolPart, ...]:
    """The tool-call and tool-result parts of a valid step at `path` in its record, in order."""
    return tuple([(part["type"] == "tool-call", part["toolCallId"], part_path)
                  for part_path, part in step_tool_parts(step, path)])


@dataclass(slots=True)
class _Conversation:
    order: int  # when it was first seen: unanswered calls are reported in this order at the end
    last_step: int | None = None
    calls: CallLedger[tuple[Record, tuple]] = field(default_factory=CallLedger)  # light record, path


class RecordingChecks:
    """Step order and tool-call pairing, per conversation, across the records of one file.

    A conversation-per-line record is one conversation. Step-per-line records are grouped by
    `conversationId` within a window of the `window` most recently active conversations, so
    that memory stays flat however long the file: a conversation that falls out of the window
    has its unanswered calls reported then, and is forgotten. `finish` reports the unanswered
    calls of the others, in the order the conversations were first seen.

    Problems are located in a Record made by a RecordSource only when one is found or a tool
    call is left open.
    """

    def __init__(self, window: int = CONVERSATION_WINDOW):
        started = count()
        self._conversations = ConversationWindow(window, lambda: _Conversation(next(started)))
        # The followed conversations that may have a call open (left so by their last step with
        # tool parts; earliest_open_line drops those it finds answered): the only ones it looks at.
        self._waiting: dict[int, _Conversation] = {}

    def add(self, record: Record, kind: str) -> Iterator[Problem]:
        data = record.data
        if kind == "conversation":
            conversation = _Conversation(0)
            for path, step in iter_steps(data):  # the record outlives its conversation: no copy
                index, parts = step_facts(step, path)
                yield from _follow(conversation, index, index, AS_IT_IS, record, path)
                yield from _pair(conversation, parts, AS_IT_IS, record)
            yield from _unanswered(conversation)  # a whole conversation: its open calls are told now
        else:
            index, parts = step_facts(data)
            conversation, problems = self.add_steps(data.get("conversationId"), index, index,
                                                    WITHOUT_DATA, record)
            yield from problems
            yield from self.add_tool_parts(conversation, parts, WITHOUT_DATA, record)

    def add_steps(self, conversation_id: Any, first_index: int, last_index: int,
                  source: RecordSource, where: Any) -> tuple[_Conversation, list[Problem]]:
        """Consecutive step-per-line records of one conversation, from `where` on, whose stepIndex
        increases from first_index to last_index: their conversation, and the problems found."""
        conversation, evicted = self._conversations.follow(conversation_id)
        problems = _follow(conversation, first_index, last_index, source, where)
        if evicted:  # their calls can no longer be answered: reported first
            problems[:0] = [problem for _, gone in evicted for problem in _unanswered(gone)]
            for _, gone in evicted:
                self._waiting.pop(id(gone), None)
        return conversation, problems

    def add_tool_parts(self, conversation: _Conversation, parts: tuple[ToolPart, ...] | None,
                       source: RecordSource, where: Any) -> list[Problem]:
        """Pairs the tool parts of one step with the conversation's calls."""
        problems = _pair(conversation, parts, source, where)
        if conversation.calls.open:  # a call waits: earliest_open_line looks at this conversation
            self._waiting[id(conversation)] = conversation
        return problems

    def settle(self, conversation: _Conversation, call_ids: tuple | None) -> bool:
        """A run of steps whose calls settle among themselves (lines._settles; None: they
        do not), counted as seen without pairing them one by one; False when they must be, an
        id having been called before the run (CallLedger.settle)."""
        return call_ids is not None and conversation.calls.settle(call_ids)

    def earliest_open_line(self) -> int | None:
        """The first line of the earliest record holding a tool call not answered yet: its
        problem, should it never be, may still come (None: no call waits). Asked now and then
        (PlaceOrder.due), of the conversations given a call since: those whose calls are all
        answered are forgotten until they are given another (most conversations wait for nothing)."""
        for key, conversation in list(self._waiting.items()):
            if not conversation.calls.open:
                del self._waiting[key]
        return min((record.line for conversation in self._waiting.values()
                    for record, _ in conversation.calls.open.values()), default=None)

    def finish(self) -> Iterator[Problem]:
        """The unanswered calls of the conversations still followed: no later step can answer them."""
        for _, conversation in sorted(self._conversations.drain(), key=lambda item: item[1].order):
            yield from _unanswered(conversation)


def _follow(conversation: _Conversation, first_index: int, last_index: int, source: RecordSource,
            where: Any, path: tuple = ()) -> list[Problem]:
    """The steps first_index..last_index follow the conversation's last one, or a problem."""
    problems = []
    if conversation.last_step is not None and first_index <= conversation.last_step:
        problems.append(problem_at(
            source.record(where), path + ("stepIndex",),
            f"stepIndex {first_index} does not follow {conversation.last_step}",
            hint="steps of a conversation must have increasing stepIndex, in file order", code="step-order"))
    conversation.last_step = last_index
    return problems


def _pair(conversation: _Conversation, parts: tuple[ToolPart, ...] | None, source: RecordSource,
          where: Any) -> list[Problem]:
    """Pairs the tool parts of one step with the conversation's calls: the problems found."""
    problems = []
    record = None  # made once for the step, when first needed
    calls = conversation.calls
    for is_call, call_id, path in parts or ():
        if is_call:
            record = record or source.record(where)
            if calls.call(call_id, (record, path)):
                problems.append(duplicate_call_problem(record, path, call_id))
        elif calls.answer(call_id)[0] == ORPHAN:
            record = record or source.record(where)
            problems.append(orphan_result_problem(record, path, call_id))
    return problems


def _unanswered(conversation: _Conversation) -> list[Problem]:
    return [problem_at(record, path + ("toolCallId",), f"tool-call {call_id!r} is never answered",
                       "warning", "no later tool-result in this conversation has this toolCallId",
                       code="tool-call-unanswered")
            for call_id, (record, path) in conversation.calls.close()]


def duplicate_call_problem(record: Record, path: tuple, call_id: Any) -> Problem:
    """A tool call (at `path` in its record) whose toolCallId an earlier call of its conversation has."""
    return problem_at(record, path + ("toolCallId",), f"duplicate toolCallId {call_id!r}", "warning",
                      "each tool call should have its own id", code="duplicate-tool-call-id")


def orphan_result_problem(record: Record, path: tuple, call_id: Any) -> Problem:
    """A tool result (at `path` in its record) that answers no earlier call of its conversation."""
    return problem_at(record, path + ("toolCallId",), f"tool-result {call_id!r} answers no earlier tool-call",
                      hint="a tool result must follow the tool-call with the same toolCallId",
                      code="tool-result-orphan")
