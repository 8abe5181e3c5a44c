"""Tool calls paired with their results across the steps of a conversation (CallLedger: the
one rule validate's checks and the `tools` rows keep), and the window of conversations a stream
of step records follows at once (ConversationWindow)."""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any, Callable, Generic, Iterator, TypeVar

from .messages import is_error_output, step_tool_parts, tool_call_of, tool_result_of

State = TypeVar("State")
Entry = TypeVar("Entry")
CONVERSATION_WINDOW = 10_000  # conversations of a step-per-line file followed at once


@dataclass
class ToolCall:
    """A call and what became of it: `status` is ok, error or unanswered."""

    step_index: Any
    call: dict
    result: dict | None = None

    @property
    def status(self) -> str:
        if self.result is None:
            return "unanswered"
        return "error" if is_error_output(self.result["output"]) else "ok"


class CallLedger(Generic[Entry]):
    """THE pairing rule of tool calls and results, by toolCallId, within one conversation
    (validate's checks and the `tools` rows both keep one per conversation).

    A call opens its id, and says whether the id was used before (a duplicate: the new call is
    the one a later result answers). A result answers the open call of its id; a further result
    for an id already answered (a retry, say) is a repeat, no error; a result for an id never
    called is an orphan. The caller keeps what it needs of each call as its entry.
    """

    __slots__ = ("open", "seen")

    def __init__(self) -> None:
        self.open: dict[Any, Entry] = {}  # the calls not answered yet, in the order made
        self.seen: set = set()

    def call(self, call_id: Any, entry: Entry) -> bool:
        """Open a call; True when its id was used before in the conversation."""
        duplicate = call_id in self.seen
        self.seen.add(call_id)
        self.open[call_id] = entry
        return duplicate

    def settle(self, call_ids: tuple) -> bool:
        """Calls made and all answered among themselves, each id once, no result answering
        anything else (see lines._settles): when none of their ids was used before, they
        are only seen, as call and answer one by one would leave them (True). Else nothing is
        changed (False): the caller pairs them one by one, to find what they make."""
        if not self.seen.isdisjoint(call_ids):
            return False
        self.seen.update(call_ids)
        return True

    def answer(self, call_id: Any) -> tuple[str, Entry | None]:
        """(ANSWERED, the call's entry), or (REPEAT or ORPHAN, None)."""
        if call_id in self.open:
            return ANSWERED, self.open.pop(call_id)
        return (REPEAT if call_id in self.seen else ORPHAN), None

    def close(self) -> list[tuple[Any, Entry]]:
        """The calls left unanswered, in the order made; none stays open."""
        unanswered = list(self.open.items())
        self.open.clear()
        return unanswered


ANSWERED, REPEAT, ORPHAN = "answered", "repeat", "orphan"
DUPLICATE = "duplicate"  # a call whose toolCallId was used before (ToolPairing.add_step)


@dataclass
class ToolPairing:
    """Calls paired with their results by toolCallId, across the steps of one conversation.

    A result may come in a later step than its call; parts are paired in their order, as
    validate pairs them. A result with no earlier call, and a toolCallId used twice, are kept in
    `orphans` and `duplicates` (add_step gives each with its path, for the caller to report); a
    further result for a call already answered (a retry, say) is no error, as validate says
    too, and is kept in `repeats`.
    """

    calls: list[ToolCall] = field(default_factory=list)
    orphans: list[tuple[Any, dict]] = field(default_factory=list)
    duplicates: list[tuple[Any, dict]] = field(default_factory=list)
    repeats: list[tuple[Any, dict]] = field(default_factory=list)
    _ledger: CallLedger[ToolCall] = field(default_factory=CallLedger)

    def add_step(self, step: dict) -> list[tuple[str, tuple, Any]]:
        """Pairs the step's tool parts in the order they come (step_tool_parts, as validate
        does: a result before its call in one message answers nothing). Gives the step's orphan
        results and duplicate calls, in the order of the parts: (ORPHAN or DUPLICATE, path of the part
        within the step, toolCallId)."""
        index = step.get("stepIndex")
        found = []
        for path, part in step_tool_parts(step):
            if part["type"] == "tool-call":
                call = tool_call_of(part)
                paired = ToolCall(index, call)
                self.calls.append(paired)
                if self._ledger.call(call["toolCallId"], paired):
                    self.duplicates.append((index, call))
                    found.append((DUPLICATE, path, call["toolCallId"]))
                continue
            result = tool_result_of(part)
            outcome, paired = self._ledger.answer(result["toolCallId"])
            if paired is not None:
                paired.result = result
            elif outcome == REPEAT:
                self.repeats.append((index, result))
            else:
                self.orphans.append((index, result))
                found.append((ORPHAN, path, result["toolCallId"]))
        return found


# ---------------------------------------------------------------------------------------------
# Conversations followed across a stream of steps


class ConversationWindow(Generic[State]):
    """The `size` most recently active conversations of a stream of step records, each with a
    state of the caller's (validate's pairing and step order, the `tools` rows).

    Step-per-line files interleave conversations; following all of them would hold the whole
    file. `follow` gives a conversation's state, made by `new()` the first time, and the
    conversations pushed out of the window by it (least recently active first), whose calls
    can no longer be answered: the caller settles them. A conversation that comes back after
    falling out starts afresh. Memory stays flat however long the file.
    """

    def __init__(self, size: int, new: Callable[[], State]):
        self.size = size
        self._new = new
        self._recent: OrderedDict[Any, State] = OrderedDict()  # least recently active first

    def follow(self, conversation_id: Any) -> tuple[State, list[tuple[Any, State]]]:
        state = self._recent.get(conversation_id)
        if state is not None:
            self._recent.move_to_end(conversation_id)
            return state, []
        evicted = []
        while len(self._recent) >= self.size:
            evicted.append(self._recent.popitem(last=False))
        state = self._recent[conversation_id] = self._new()
        return state, evicted

    def __len__(self) -> int:
        return len(self._recent)

    def states(self) -> Iterator[State]:
        """The state of every conversation followed, least recently active first."""
        return iter(self._recent.values())

    def pop_oldest(self) -> tuple[Any, State]:
        """The least recently active conversation, no longer followed (the caller settles it)."""
        return self._recent.popitem(last=False)

    def drain(self) -> list[tuple[Any, State]]:
        """Every conversation still followed, least recently active first; the window empties."""
        states = list(self._recent.items())
        self._recent.clear()
        return states
