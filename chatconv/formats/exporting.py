"""`chatconv export`: chatconv's recordings written as another API's request bodies.

A file's steps are gathered by conversation (in the order each first appears); each conversation
becomes one body (`per="conversation"`), or each step that has an output one body holding the
conversation up to and with that step (`per="step"`). A body is written by its format from the
messages and what import kept (providerOptions, the first step's metadata[format]), and must
keep the rules of the API it is for (chatconv.providers checks them): a body the API would
refuse is a problem at its step, and not written.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from itertools import groupby
from typing import Any, Iterable, Iterator, Mapping, Sequence

from ..messages import conversation_messages
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
    """Each request body (compact JSON, no newline) made of the recordings in `paths`."""

    fmt = format_named(format_name)
    if fmt.NAME not in EXPORTED:
        raise UsageError(f"{format_name} cannot be exported; export writes {', '.join(EXPORTED)}")
    if per not in PER:
        raise UsageError(f"--per must be one of {', '.join(PER)}")
    run = run if run is not None else ExportRun()
    for _, steps_of_file in groupby(iter_paths_steps(paths, field_map, run.problems), key=lambda s: s.record.file):
        for steps in _conversations(steps_of_file):
            run.steps += len(steps)
            for body in _bodies(fmt, steps, per, gather_tools, run):
                run.bodies += 1
                yield body


def _conversations(items: Iterable[Step]) -> Iterator[list[Step]]:
    """A file's steps by conversation, in the order each conversation first appears."""
    gathered: dict[Any, list[Step]] = {}
    for item in items:
        gathered.setdefault(item.conversation_id, []).append(item)
    yield from gathered.values()


def _bodies(fmt, steps: list[Step], per: str, gather_tools: bool, run: ExportRun) -> Iterator[bytes]:
    ends = [len(steps)] if per == "conversation" else [i + 1 for i, s in enumerate(steps) if s.step["output"]]
    metadata = (steps[0].step.get("metadata") or {}).get(fmt.NAME) or {}
    if not isinstance(metadata, dict):
        run.problems.append(problem_at(steps[0].record, steps[0].path + ("metadata", fmt.NAME),
                                       f"not exported: metadata.{fmt.NAME} must be an object (the body's own fields)",
                                       code="wrong-type"))
        return
    for end in ends:
        part = steps[:end]
        messages = conversation_messages([item.step for item in part])
        owners = [item for item in part for _ in range(1 + len(item.step["output"]))]  # the step of each message
        try:
            RENDERERS[fmt.TARGET](messages)  # the API's rules, as prompt's renderers keep them
            body = fmt.write(messages, metadata, gather_tools=gather_tools)
            yield exact_json(body, _texts(part))
        except ProviderRuleError as exc:
            item = owners[exc.index] if exc.index is not None and exc.index < len(owners) else part[-1]
            run.problems.append(problem_at(item.record, item.path, f"not exported: {exc.problems[0].message}", "error",
                                           exc.problems[0].hint, code="provider-rule"))
        except ChatconvError as exc:
            run.problems.extend(exc.problems)
        except NotWritten as exc:
            item = part[-1]
            run.problems.append(problem_at(item.record, item.path, f"not exported: {exc}", "error", exc.hint,
                                           code="not-written"))


def _texts(steps: list[Step]) -> bytes:
    """The JSON text of the records a body is made of, as one JSON array: exact_json looks in it
    for integers beyond 64 bits, which orjson read as floats (the body would change their digits)."""
    texts = dict.fromkeys(item.record.text for item in steps if item.record.text)
    return b"[" + b",".join(t.encode() if isinstance(t, str) else t for t in texts) + b"]"
