"""Helpers over AI SDK model messages and the conversation steps that hold them (seed 004)."""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any, Callable, Generic, Iterator, TypeVar

from .problems import ChatconvError, Problem

State = TypeVar("State")
Entry = TypeVar("Entry")
CONVERSATION_WINDOW = 10_000  # conversations of a step-per-line file followed at once


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
    reads the parts. A list made without generators, a path only for a tool part: both read
    every line of a recording with it."""
    found: list[tuple[tuple, dict]] = []
    message = step.get("input")
    if isinstance(message, dict):
        _add_tool_parts(message.get("content"), path + ("input", "content"), found)
    output = step.get("output")
    if isinstance(output, list):
        for index, message in enumerate(output):
            if isinstance(message, dict):
                content = message.get("content")
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
        anything else (see lines.settled_calls): when none of their ids was used before, they
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
