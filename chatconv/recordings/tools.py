"""The `tools` rows of a recording: each tool call with its result, paired by toolCallId across
the steps of a conversation, within the one window of recent conversations (messages).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Iterable, Iterator

from ..messages import CONVERSATION_WINDOW, ORPHAN, ConversationWindow, ToolPairing, iter_tool_parts
from ..problems import ChatconvError, Problem, UnreadableInput
from ..sources import FieldMap, NotWritten, discover, exact_json, problem_at
from ..validate import duplicate_call_problem, orphan_result_problem
from .steps import Step, iter_recording_steps


def tool_parts(item: Step) -> Iterator[tuple[tuple, dict]]:
    """(path in its record, part) of each tool-call and tool-result part of a step, in order."""
    for path, part in iter_tool_parts(item.step):
        yield item.path + path, part


def unwritten_tool_calls(item: Step) -> Iterator[tuple[str, Problem]]:
    """(toolCallId, problem) for each call or result of a step whose value `tools` cannot write
    exactly (see exact_json): that call's row is left out."""
    for path, part in tool_parts(item):
        # A row holds the call's stepIndex and args, and its result's value, one level down.
        if part["type"] == "tool-call":
            values = ((item.step["stepIndex"], item.path + ("stepIndex",)), ([part["input"]], path + ("input",)))
        else:
            values = (([part["output"].get("value")], path + ("output", "value")),)
        for value, spot in values:
            try:
                exact_json(value, item.record.text)
            except NotWritten as exc:
                yield part["toolCallId"], problem_at(item.record, spot, f"tool call {part['toolCallId']!r} "
                                                     f"left out: {exc}", hint=exc.hint, code="not-written")
                break


class ConversationPairings:
    """Tool pairing per conversation for a stream of steps, within a window of recent ones.

    A conversation's calls become final when it falls out of the window of the `window` most
    recently active ones, and at the end: memory stays flat in file size. Results that answer
    no call, and repeated call ids, are appended to `problems` as they are found.
    """

    def __init__(self, window: int = CONVERSATION_WINDOW, problems: list[Problem] | None = None):
        self.problems = [] if problems is None else problems
        self._recent: ConversationWindow[ToolPairing] = ConversationWindow(window, ToolPairing)

    def add(self, item: Step) -> list[tuple[Any, ToolPairing]]:
        """Pairs a step's tool parts; gives the conversations it pushed out of the window, least
        recently active first, whose calls are final."""
        pairing, evicted = self._recent.follow(item.conversation_id)
        # The problems validate reports, located at the part itself.
        for kind, path, call_id in pairing.add_step(item.step):
            problem = orphan_result_problem if kind == ORPHAN else duplicate_call_problem
            self.problems.append(problem(item.record, item.path + path, call_id))
        return evicted

    def finish(self) -> list[tuple[Any, ToolPairing]]:
        """Every conversation still followed, least recently active first."""
        return self._recent.drain()


def tool_rows(path: str | Path | Iterable[str | Path], field_map: FieldMap | None = None,
              window: int = CONVERSATION_WINDOW, problems: list[Problem] | None = None,
              unreadable: list[Problem] | None = None) -> Iterator[dict]:
    """Each tool call of a recording (a file, or several files and folders: see
    iter_paths_steps) with its result, streamed, file by file: calls are paired within a file.
    {"conversationId", "stepIndex", "toolCallId", "toolName", "args", "result", "status"}.

    status is ok, error or unanswered; result is the tool result's output value (None when
    unanswered). A conversation's rows come, in order, once its calls are final (see
    ConversationPairings). Steps left out (see iter_recording_steps), calls whose row cannot be
    written exactly (left out too), results that answer no call and repeated ids are appended
    to `problems`; without a list, the first error raises ChatconvError. A path that cannot be
    read raises UnreadableInput, or with an `unreadable` list is reported there.
    """
    paths = [path] if isinstance(path, (str, Path)) else path
    for file, _ in discover(paths):
        try:
            yield from _file_tool_rows(file, field_map, window, problems)
        except UnreadableInput as exc:
            if unreadable is None:
                raise
            unreadable.extend(exc.problems)


def _file_tool_rows(path: str, field_map: FieldMap | None, window: int,
                    problems: list[Problem] | None) -> Iterator[dict]:
    found = [] if problems is None else problems
    pairings = ConversationPairings(window, found)
    left_out = set()  # (conversation id, toolCallId) of the calls whose row cannot be written
    for item in iter_recording_steps(path, field_map, problems):
        for call_id, problem in unwritten_tool_calls(item):
            left_out.add((item.conversation_id, call_id))
            found.append(problem)
        evicted = pairings.add(item)
        if problems is None and found:
            errors = [problem for problem in found if problem.is_error]
            if errors:
                raise ChatconvError(errors)
            found.clear()  # warnings, with no list given to keep them in
        yield from _rows(evicted, left_out)
    yield from _rows(pairings.finish(), left_out)


def _rows(final: list[tuple[Any, ToolPairing]], left_out: set) -> Iterator[dict]:
    for conversation_id, pairing in final:
        for paired in pairing.calls:
            call = paired.call
            if (conversation_id, call["toolCallId"]) in left_out:
                continue
            yield {"conversationId": conversation_id, "stepIndex": paired.step_index,
                   "toolCallId": call["toolCallId"], "toolName": call["toolName"], "args": call["args"],
                   "result": paired.result["output"].get("value") if paired.result else None,
                   "status": paired.status}
