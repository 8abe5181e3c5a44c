"""`chatconv export`: chatconv's recordings written as another API's request bodies.

A file's steps are gathered by conversation; each conversation becomes one body
(`per="conversation"`), or each step that has an output one body holding the conversation up to
and with that step (`per="step"`). A body is written by its format from the
messages and what import kept (providerOptions, the first step's metadata[format]), and must
keep the rules of the API it is for (chatconv.providers checks them): a body the API would
refuse is a problem at its step, and not written.

A JSONL file of more than a batch is read by worker processes (recordings.batches). A worker
gathers its batch's steps by conversation as if each started in the batch, and writes their
bodies (per step; per conversation, each conversation as it stands at the batch's end). This
process follows the conversations across the file in the one window and takes a worker's body
when its conversation started in that batch, at its first step there (then the worker saw what
this process sees); a conversation that goes on from an earlier batch is written here, its
earlier steps read again from their lines. The bodies and problems are those of one process.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Iterable, Iterator, Mapping, Sequence

from ..messages import conversation_messages, is_unrecorded
from ..pairing import CONVERSATION_WINDOW, ConversationWindow
from ..problems import ChatconvError, Problem, UnreadableInput, UsageError
from ..providers import RENDERERS, ProviderRuleError
from ..recordings import Step
from ..recordings.batches import RecordRunner, record_at
from ..recordings.steps import _is_array, _record_steps
from ..sources import BATCH_BYTES, NotWritten, Record, discover, exact_json, problem_at
from .reading import kept
from .registry import EXPORTED, format_named

PER = ("step", "conversation")


@dataclass
class ExportRun:
    steps: int = 0
    bodies: int = 0
    problems: list[Problem] = field(default_factory=list)


def export_bodies(paths: Sequence[str], format_name: str, per: str = "step", gather_tools: bool = False,
                  field_map: Mapping[str, str] | None = None, run: ExportRun | None = None, jobs: int | None = 1,
                  batch_bytes: int = BATCH_BYTES, strict: bool = False,
                  unreadable: list[Problem] | None = None, scheduler: str | None = None) -> Iterator[bytes]:
    """Each request body (compact JSON, no newline) made of the recordings in `paths`.

    A file's steps are gathered by conversation within a window of the CONVERSATION_WINDOW most
    recently active ones (memory stays bounded, as validate's pairing does): per step, a body is
    written as each answered step arrives; per conversation, when the conversation falls out of
    the window or the file ends (least recently active first: in file order for the usual file,
    whose conversations are not interleaved). What a target has no place for is left out of a
    body, or written in the form the API takes, each with a warning (CHANGED_CODES); `strict`:
    each is an error instead, and the body is not written. `jobs`: worker processes for a JSONL file (None:
    one per core for files of 16 MiB or more), each given batches of about `batch_bytes`; the
    bodies and problems are the same whatever the number. With an `unreadable` list, a file that
    cannot be read (or read on) goes there and the next is read; else its UnreadableInput ends it.
    `scheduler`: a Dask scheduler's address, whose cluster's workers are sent the batches."""
    fmt = format_named(format_name)
    if fmt.NAME not in EXPORTED:
        raise UsageError(f"{format_name} cannot be exported; export writes {', '.join(EXPORTED)}")
    if per not in PER:
        raise UsageError(f"--per must be one of {', '.join(PER)}")
    run = run if run is not None else ExportRun()
    settings = (fmt.NAME, per, gather_tools, field_map, strict)
    with RecordRunner(jobs, batch_bytes, scheduler) as runner:
        for file, _ in discover(paths):
            exporter = _FileExport(file, fmt, per, gather_tools, field_map, run, strict)
            try:
                for batch, (record, facts) in enumerate(runner.results(file, _export_facts, settings, _is_array,
                                                                       reads_again=True)):
                    yield from exporter.add(batch, facts)
            except UnreadableInput as exc:  # (with an `unreadable` list) the steps before it are exported
                if unreadable is None:
                    raise
                unreadable.extend(exc.problems)
            yield from exporter.finish()


# What a worker (or this process) says of some records: for each record (its line, its offset
# or None, its problems, and for each step (conversation id, its place: (offset, line, path)
# or the Step itself when its line cannot be read again, the number of earlier steps of its
# conversation in the batch, whether it has an output, its body per step as (bytes or None,
# problems) or None)); and per conversation, {id: (its steps in the batch, its body then)}.
Facts = tuple[list[tuple[int, Any, list, list[tuple]]], dict]


def _export_facts(records: Iterable[tuple[Record, Any]], settings: tuple) -> list[Facts]:
    format_name, per, gather_tools, field_map, strict = settings
    fmt = format_named(format_name)
    gathered: dict[Any, list[Step]] = {}  # the batch's steps by conversation; the batch bounds it
    out = []
    for record, offset in records:
        problems: list[Problem] = []
        steps = []
        for item in _record_steps(record, field_map, problems):
            has_output = bool(item.step["output"])
            if offset is None:  # read whole here: this process writes its bodies, from the Steps
                steps.append((item.conversation_id, item, -1, has_output, None))
                continue
            conversation = gathered.setdefault(item.conversation_id, [])
            earlier = len(conversation)
            conversation.append(item)
            body = _made(fmt, conversation, gather_tools, strict) if per == "step" and has_output else None
            steps.append((item.conversation_id, (offset, record.line, item.path), earlier, has_output, body))
        out.append((record.line, offset, problems, steps))
    whole = {}
    if per == "conversation":
        whole = {conversation_id: (len(steps), _made(fmt, steps, gather_tools, strict))
                 for conversation_id, steps in gathered.items()}
    return [(out, whole)]


def _made(fmt, steps: list[Step], gather_tools: bool, strict: bool) -> tuple[bytes | None, list[Problem]]:
    run = ExportRun()
    return _body(fmt, steps, gather_tools, run, strict), run.problems


class _Followed:
    """A conversation of the window: the places of its steps; its Steps once they are needed
    here; and, when it started at its first step of a worker's batch, that batch and the
    worker's whole body of it (per conversation)."""

    __slots__ = ("places", "steps", "batch", "whole")

    def __init__(self) -> None:
        self.places: list = []
        self.steps: list[Step] | None = None
        self.batch: int | None = None
        self.whole: tuple | None = None


class _FileExport:
    """One file's conversations followed across its batches, in the window (see the module)."""

    def __init__(self, file: str, fmt, per: str, gather_tools: bool, field_map, run: ExportRun, strict: bool):
        self.file, self.fmt, self.per, self.gather_tools, self.field_map = file, fmt, per, gather_tools, field_map
        self.strict = strict
        self.run = run
        self.window: ConversationWindow[_Followed] = ConversationWindow(CONVERSATION_WINDOW, _Followed)
        self._read: tuple[Any, list[Step]] | None = None  # the last record read again, its Steps

    def add(self, batch: int, facts: Facts) -> Iterator[bytes]:
        records, whole = facts
        for _, _, problems, steps in records:
            self.run.problems.extend(problems)
            for conversation_id, place, earlier, has_output, body in steps:
                self.run.steps += 1
                followed, evicted = self.window.follow(conversation_id)
                if self.per == "conversation":
                    for _, done in evicted:
                        yield from self._whole(done)
                if not followed.places and earlier == 0:
                    followed.batch, followed.whole = batch, whole.get(conversation_id)
                followed.places.append(place)
                if followed.steps is not None:
                    followed.steps.append(self._step(place))
                if self.per == "step" and has_output:
                    if followed.batch == batch and body is not None:
                        yield from self._taken(body)
                    else:
                        yield from self._taken(self._here(followed))

    def finish(self) -> Iterator[bytes]:
        if self.per == "conversation":
            for _, done in self.window.drain():
                yield from self._whole(done)

    def _whole(self, followed: _Followed) -> Iterator[bytes]:
        if followed.whole is not None and followed.whole[0] == len(followed.places):
            return self._taken(followed.whole[1])  # the worker's batch held all of it
        return self._taken(self._here(followed))

    def _here(self, followed: _Followed) -> tuple[bytes | None, list[Problem]]:
        if followed.steps is None:
            followed.steps = [self._step(place) for place in followed.places]
        return _made(self.fmt, followed.steps, self.gather_tools, self.strict)

    def _taken(self, made: tuple[bytes | None, list[Problem]]) -> Iterator[bytes]:
        body, problems = made
        self.run.problems.extend(problems)
        if body is not None:
            self.run.bodies += 1
            yield body

    def _step(self, place) -> Step:
        """The Step at `place`: itself, or read again from its line as it was read."""
        if isinstance(place, Step):
            return place
        offset, line, path = place
        if self._read is None or self._read[0] != offset:
            self._read = (offset, list(_record_steps(record_at(self.file, offset, line), self.field_map, [])))
        return next(item for item in self._read[1] if item.path == path)


# The codes of what a body leaves out or writes otherwise than recorded: warnings, or with strict errors.
CHANGED_CODES = ("part-left-out", "blank-text", "export-changed")


def _body(fmt, steps: list[Step], gather_tools: bool, run: ExportRun, strict: bool = False) -> bytes | None:
    """The body holding these steps' messages; None, with a problem at its step, when it cannot be written."""
    metadata = (steps[0].step.get("metadata") or {}).get(fmt.NAME) or {}
    if not isinstance(metadata, dict):
        run.problems.append(problem_at(steps[-1].record, steps[0].path + ("metadata", fmt.NAME),
                                       f"not exported: metadata.{fmt.NAME} of the conversation's first step must be "
                                       "an object (the body's own fields)", code="wrong-type"))
        return None
    messages = conversation_messages([item.step for item in steps])
    owners = [item for item in steps for _ in range(1 + len(item.step["output"]))]  # the step of each message
    # and its place in that step: a note about a message is located at it (a legacy one-message output at output)
    places = [place for item in steps for place in
              [("input",), *([("output", k) for k in range(len(item.step["output"]))]
                             if isinstance(item.step["output"], list) else [("output",)])]]
    # A dataset's row (sharegpt) may start with the model: an input never recorded is no turn. A
    # format of requests (an API's, even with no renderer of chatconv's: bedrock-converse) writes none.
    if fmt.TARGET is None and not getattr(fmt, "REQUESTS", False):
        kept_at = [index for index, message in enumerate(messages) if not is_unrecorded(message)]
        messages, owners, places = ([seq[i] for i in kept_at] for seq in (messages, owners, places))
    unrecorded = next((index for index, message in enumerate(messages) if is_unrecorded(message)), None)
    if unrecorded is not None:  # one rule for every API and --per: a request body is never made up
        item = owners[unrecorded]
        run.problems.append(problem_at(item.record, item.path + ("input",), "not exported: a response recorded "
                                       "without its request: there is no request body to write", "warning",
                                       "import the request and its response together (a {request, response} record)",
                                       code="no-request"))
        return None
    notes: list[tuple[int | None, str, str]] = []  # what the body leaves out or writes otherwise: warnings
    for index, message in enumerate(messages):
        # Responses items a model message has no place for (web_search_call, ...) were set aside on
        # their message at import; no export target takes them back.
        items = kept(message, "openai-responses").get("items")
        if isinstance(items, list) and items:
            kinds = sorted({str(entry.get("item", {}).get("type")) for entry in items if isinstance(entry, dict)})
            notes.append((index, "part-left-out", f"{len(items)} Responses item(s) set aside on this message "
                          f"({', '.join(kinds)}) have no place in a body for {fmt.NAME}: left out"))
    try:
        if fmt.TARGET is not None:  # the API's rules, as prompt's renderers keep them (a dataset row has none)
            RENDERERS[fmt.TARGET](messages)
        body = fmt.write(messages, metadata, gather_tools=gather_tools, notes=notes)
        line = exact_json(body)
        if b"+" in line:  # a float as d.ddde+NN: maybe an integer beyond 64 bits in a step's text
            for text in {id(item.record): item.record.text for item in steps}.values():
                exact_json(body, text)
        for index, code, message in notes:
            known = index is not None and index < len(owners)
            item, place = (owners[index], places[index]) if known else (steps[-1], ())
            run.problems.append(problem_at(item.record, item.path + place, f"not exported: {message}" if strict else message,
                                           "error" if strict else "warning",
                                           "without --strict it is written without them" if strict else None,
                                           code=code))
        return None if strict and notes else line
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
