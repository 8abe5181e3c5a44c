"""`chatconv export`: chatconv's recordings written as another API's request bodies.

A file's steps are gathered by conversation; each conversation becomes one body
(`per="conversation"`), or each step that has an output one body holding the conversation up to
and with that step (`per="step"`). A body is written by its format from the
messages and what import kept (providerOptions, the first step's metadata[format]), and must
keep the rules of the API it is for (chatconv.providers checks them): a body the API would
refuse is a problem at its step, and not written.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from itertools import groupby
from typing import Iterator, Mapping, Sequence

from ..messages import CONVERSATION_WINDOW, ConversationWindow, conversation_messages
from ..problems import ChatconvError, Problem, UsageError
from ..providers import RENDERERS, ProviderRuleError
from ..recordings import Step, iter_paths_steps
from ..sources import NotWritten, exact_json, problem_at
from .registry import EXPORTED, format_named

PER = ("step", "conversation")


@dataclass
class ExportRun:
    steps: int = 0
    bodies: int = 0
    problems: list[Problem] = field(default_factory=list)


def export_bodies(paths: Sequence[str], format_name: str, per: str = "step", gather_tools: bool = False,
                  field_map: Mapping[str, str] | None = None, run: ExportRun | None = None) -> Iterator[bytes]:
    """Each request body (compact JSON, no newline) made of the recordings in `paths`.

    A file's steps are gathered by conversation within a window of the CONVERSATION_WINDOW most
    recently active ones (memory stays bounded, as validate's pairing does): per step, a body is
    written as each answered step arrives; per conversation, when the conversation falls out of
    the window or the file ends (least recently active first: in file order for the usual file,
    whose conversations are not interleaved)."""
    fmt = format_named(format_name)
    if fmt.NAME not in EXPORTED:
        raise UsageError(f"{format_name} cannot be exported; export writes {', '.join(EXPORTED)}")
    if per not in PER:
        raise UsageError(f"--per must be one of {', '.join(PER)}")
    run = run if run is not None else ExportRun()
    for _, steps_of_file in groupby(iter_paths_steps(paths, field_map, run.problems), key=lambda s: s.record.file):
        window: ConversationWindow[list[Step]] = ConversationWindow(CONVERSATION_WINDOW, list)
        for item in steps_of_file:
            run.steps += 1
            steps, evicted = window.follow(item.conversation_id)
            if per == "conversation":
                yield from _bodies(fmt, [done for _, done in evicted], gather_tools, run)
            steps.append(item)
            if per == "step" and item.step["output"]:
                yield from _bodies(fmt, [steps], gather_tools, run)
        if per == "conversation":
            yield from _bodies(fmt, [done for _, done in window.drain()], gather_tools, run)


def _bodies(fmt, conversations: list[list[Step]], gather_tools: bool, run: ExportRun) -> Iterator[bytes]:
    for steps in conversations:
        body = _body(fmt, steps, gather_tools, run)
        if body is not None:
            run.bodies += 1
            yield body


def _body(fmt, steps: list[Step], gather_tools: bool, run: ExportRun) -> bytes | None:
    """The body holding these steps' messages; None, with a problem at its step, when it cannot be written."""
    metadata = (steps[0].step.get("metadata") or {}).get(fmt.NAME) or {}
    if not isinstance(metadata, dict):
        run.problems.append(problem_at(steps[-1].record, steps[0].path + ("metadata", fmt.NAME),
                                       f"not exported: metadata.{fmt.NAME} of the conversation's first step must be "
                                       "an object (the body's own fields)", code="wrong-type"))
        return None
    messages = conversation_messages([item.step for item in steps])
    owners = [item for item in steps for _ in range(1 + len(item.step["output"]))]  # the step of each message
    try:
        RENDERERS[fmt.TARGET](messages)  # the API's rules, as prompt's renderers keep them
        body = fmt.write(messages, metadata, gather_tools=gather_tools)
        line = exact_json(body)
        if b"+" in line:  # a float as d.ddde+NN: maybe an integer beyond 64 bits in a step's text
            for text in {id(item.record): item.record.text for item in steps}.values():
                exact_json(body, text)
        return line
    except ProviderRuleError as exc:
        item = owners[exc.index] if exc.index is not None and exc.index < len(owners) else steps[-1]
        run.problems.append(problem_at(item.record, item.path, f"not exported: {exc.problems[0].message}", "error",
                                       exc.problems[0].hint, code="provider-rule"))
    except ChatconvError as exc:
        run.problems.extend(exc.problems)
    except NotWritten as exc:
        run.problems.append(problem_at(steps[-1].record, steps[-1].path, f"not exported: {exc}", "error", exc.hint,
                                       code="not-written"))
    return None
