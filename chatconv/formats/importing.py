"""`chatconv import`: records of other tools' formats read into chatconv's recordings.

Each record is read by its format (told from its content, or forced) into conversations of model
messages; each conversation is cut into steps (a step starts at each user or system message and
holds what the model and tools said after it), tool results get the names of the calls they
answer (by id, across the records of a conversation), and every line written is checked by
chatconv's own schema first (a line of common OpenAI shapes goes the quick way, quick_import.py,
whose steps are valid by construction).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, Callable, Iterable, Iterator, Sequence

from ..messages import unrecorded_input
from ..problems import ChatconvError, Problem
from ..schemas import fast_validator
from ..sources import (DATA_SUFFIXES, FieldMap, NotWritten, Record, adapt_record, discover, element_records, exact_json,
                       iter_records, problem_at, without_compression)
from ..validate import check_schema
from .exchanges import exchange_format
from .import_state import ImportState
from .openai_chat.body import BODY_FIELDS
from .quick_import import hf_quick_lines, quick_lines
from .reading import STARTS_A_STEP, Imported, Reading, name_results
from .registry import IMPORTED, IMPORTED_NAMES, OWN_SUFFIXES, format_named, hf_messages, openai_chat, sharegpt, streams
from .unread import unknown_format


@dataclass
class ImportRun:
    """What an import read and wrote; problems in the order found."""

    records: int = 0
    conversations: int = 0
    steps: int = 0
    problems: list[Problem] = field(default_factory=list)
    formats: dict[str, int] = field(default_factory=dict)  # records read, by format

    def read(self, format_name: str) -> None:
        """One record read, in the format `format_name`."""
        self.records += 1
        self.formats[format_name] = self.formats.get(format_name, 0) + 1

    def wrote(self, steps: int) -> None:
        """One conversation written, of `steps` steps."""
        self.conversations += 1
        self.steps += steps


def split_steps(messages: list[dict], continued: bool = False) -> list[tuple[dict, list[dict]]]:
    """(input, outputs) of each step: a step starts at a user or system message. Messages before
    the first (a response logged without its request) are the output of a step whose input was
    not recorded (messages.unrecorded_input), not an answer taken for a question. A record that
    `continued` a conversation with a tool result (answering an earlier record's call) starts a
    step with it; one that goes on with the model's answer (a retried response, say) does not."""
    steps: list[tuple[dict, list[dict]]] = []
    first_role = messages[0].get("role") if messages else None
    if messages and first_role not in STARTS_A_STEP and not (continued and first_role == "tool"):
        steps.append((unrecorded_input(), []))
    for message in messages:
        if not steps or message.get("role") in STARTS_A_STEP:
            steps.append((message, []))
        else:
            steps[-1][1].append(message)
    return steps


@dataclass
class Importer:
    """One import: how records are read (the formats tried, one forced, fields moved), what is
    written (steps or conversations), the state across records and what was found."""

    format_name: str | None = None
    conversations: bool = False
    field_map: FieldMap | None = None
    run: ImportRun = field(default_factory=ImportRun)
    state: ImportState = field(default_factory=ImportState)
    _own: dict = field(default_factory=dict, init=False, repr=False)  # own_reader's answer, by file

    def __post_init__(self):
        self.forced = format_named(self.format_name) if self.format_name else None
        self.readers = [self.forced] if self.forced else IMPORTED
        # Fine-tuning lines of common shapes go the quick way when nothing else is asked of them.
        self.quick = self.forced in (None, openai_chat, sharegpt, hf_messages) and not self.field_map \
            and not self.conversations

    def _quick_reader(self, data: dict) -> tuple[str, Callable] | None:
        """(format, its quick path) that may read `data` (a line of a fine-tuning file): sharegpt's
        for `conversations` no earlier format claims, openai-chat's (quick_import) else."""
        if "conversations" in data:
            alone = self.forced in (None, sharegpt) and _BEFORE_SHAREGPT.isdisjoint(data)
            return (sharegpt.NAME, sharegpt.quick_lines) if alone else None
        if self.forced in (None, openai_chat) and (self.forced is openai_chat or BODY_FIELDS.issuperset(data)):
            return openai_chat.NAME, quick_lines
        return (hf_messages.NAME, hf_quick_lines) if self.forced in (None, hf_messages) else None

    def own_reader(self, file: str):
        """The format that reads `file` itself (not as JSON or JSONL records), or None; a stream
        (streams/) gives its assembled responses, which any format then reads. Asked once a file:
        telling a stream reads the file's start."""
        if file not in self._own:
            own = next((fmt for fmt in self.readers if hasattr(fmt, "records") and fmt.claims(file)), None)
            self._own[file] = own if own is not None or not streams.claims(file) else streams
        return self._own[file]

    def records(self, file: str) -> Iterator[Record]:
        own = self.own_reader(file)
        return own.records(file) if own else iter_records(file)

    def conversations_of(self, record: Record, touched: list[str] | None = None) -> Iterator[tuple[Imported, Reading]]:
        """Each conversation of a record, its tool results named after their calls, with the
        reading that holds its problems (those the caller adds too): they go to run.problems
        once the caller is done with it. Conversations whose reading failed are left out, their
        problems in run.problems. `touched` gathers the ids read."""
        run = self.run
        for reading_format, reading in _readings(record, self.readers, self.forced, run, self.field_map):
            run.read(reading_format.NAME)
            for number, imported in enumerate(_conversations(reading_format, reading)):
                if imported.id is None:
                    imported.id = _name_after(reading.record, number)
                if touched is not None:
                    touched.append(imported.id)
                if not reading.failed:
                    names = self.state.names_of(imported.id)
                    name_results(imported, reading, names)
                    self.state.add_names(imported.id, names)
                if not reading.failed:
                    yield imported, reading
                run.problems.extend(reading.problems)  # a reader leaves out what it could not read
                reading.problems.clear()
            run.problems.extend(reading.problems)
            reading.problems.clear()

    def lines_of(self, record: Record, touched: list[str] | None = None) -> Iterable[bytes]:
        """The lines (without newline) made of one record: the quick way's list, when it takes
        the record (a fine-tuning line, most often), else as the full path makes them."""
        quick = self._quick_lines_of(record, touched) if self.quick and type(record.data) is dict else None
        return quick if quick is not None else self._full_lines_of(record, touched)

    def _quick_lines_of(self, record: Record, touched: list[str] | None) -> list[bytes] | None:
        conversation_id = _name_after(record, 0)
        reader = self._quick_reader(record.data)
        quick = None if reader is None or self.state.knows(conversation_id) else reader[1](record, conversation_id)
        if quick is None:
            return None
        lines, names = quick
        if touched is not None:
            touched.append(conversation_id)
        self.state.add_read(conversation_id, names, len(lines))
        self.run.read(reader[0])
        self.run.wrote(len(lines))
        return lines

    def _full_lines_of(self, record: Record, touched: list[str] | None) -> Iterator[bytes]:
        run = self.run
        for imported, reading in self.conversations_of(record, touched):
            first = self.state.take_first_step(imported.id)
            lines, steps = _lines(imported, reading, self.conversations, first)
            self.state.set_next_step(imported.id, first + steps)
            if lines:
                run.wrote(steps)
                yield from lines


def iter_imported(paths: Sequence[str], format_name: str | None, run: ImportRun,
                  field_map: FieldMap | None = None) -> Iterator[Imported]:
    """Each conversation read from the records of `paths` (see Importer.conversations_of)."""
    importer = Importer(format_name, False, field_map, run)
    for file, _ in discover(paths, DATA_SUFFIXES | OWN_SUFFIXES):
        for record in importer.records(file):
            yield from (imported for imported, _ in importer.conversations_of(record))


def _readings(record: Record, readers, forced, run: ImportRun, field_map: FieldMap | None, elements: bool = True
              ) -> Iterator[tuple[Any, Reading]]:
    """(format, reading) for a record; an array that no format reads whole (a file of request
    bodies) is read element by element, each a record of its own (sources.element_records)."""
    record = adapt_record(record, field_map)
    if record.error:
        run.problems.append(record.error)
        return
    found = _format_of(record.data, readers, forced)
    if found is None and elements and isinstance(record.data, list):
        if not record.data:
            run.problems.append(problem_at(record, (), "an empty array: no record to import", "warning",
                                           code="import-empty"))
        # The elements carry the repeated keys of a JSON text; a YAML record's problems stay its own.
        run.problems.extend(() if record.text else record.problems)
        for element in element_records(record):
            yield from _readings(element, readers, forced, run, field_map, elements=False)
        return
    run.problems.extend(record.problems)
    if found is None:
        run.problems.append(unknown_format(record, forced, IMPORTED_NAMES))
        return
    yield found, Reading(record, found.NAME)


# The keys of the formats detection asks before sharegpt: a record with one of them goes the full way.
_BEFORE_SHAREGPT = frozenset().union(*(fmt.KEYS for fmt in IMPORTED[:IMPORTED.index(sharegpt)]))


def _format_of(data: Any, readers, forced):
    if forced is not None:  # an object is read as the format named; an array, if that format reads it
        if isinstance(data, dict):
            return (not forced.detect(data) and exchange_format(data, readers)) or forced
        takes = getattr(forced, "takes_list", forced.detect)  # a format may read, when named, lists it does not claim
        return forced if isinstance(data, list) and takes(data) else None
    if isinstance(data, dict):
        return next((fmt for fmt in readers if not fmt.KEYS.isdisjoint(data) and fmt.detect(data)),
                    None) or exchange_format(data, readers)
    return next((fmt for fmt in readers if fmt.detect(data)), None)


def _conversations(reading_format, reading: Reading) -> Iterator[Imported]:
    try:
        yield from reading_format.read(reading)
    except ChatconvError as exc:
        reading.problems.extend(exc.problems)
    except (KeyError, TypeError, AttributeError, ValueError, IndexError) as exc:  # a shape the reader did not foresee
        reading.error((), f"not a record of the {reading_format.NAME} format as chatconv reads it "
                          f"({type(exc).__name__}: {exc})",
                      f"check the record against the {reading_format.NAME} format, or name another with --from",
                      code="unknown-format")


def _lines(imported: Imported, reading: Reading, conversations: bool, first: int = 0) -> tuple[list[bytes], int]:
    """The conversation's lines and its number of steps; no line (its errors in reading.problems)
    when it cannot be written."""
    if not imported.messages:
        reading.warn((), "no message to import in this record", code="import-empty")
        return [], 0
    conversation_id = imported.id
    steps = []
    for index, (opening, rest) in enumerate(split_steps(imported.messages, first > 0)):
        step = {"conversationId": conversation_id, "stepIndex": first + index, "input": opening, "output": rest}
        if index == 0 and imported.metadata:
            step["metadata"] = {reading.format: imported.metadata}
        steps.append(step)
    records = ([{"id": conversation_id, "steps": [_without_id(s) for s in steps]}] if conversations else steps)
    kind = "conversation" if conversations else "step-record"
    lines, valid = [], fast_validator(kind).is_valid
    for record in records:
        errors = [] if valid(record) else [p for p in check_schema(Record(reading.record.file, reading.record.line,
                                                                            data=record), kind) if p.is_error]
        if errors:
            reading.problems.extend(errors)
            return [], 0
        try:
            lines.append(exact_json(record, reading.record.text))  # the text: to tell integers beyond 64 bits
        except NotWritten as exc:
            reading.error((), f"conversation left out: {exc}", exc.hint, code="not-written")
            return [], 0
    return lines, len(steps)


def _without_id(step: dict) -> dict:
    return {key: value for key, value in step.items() if key != "conversationId"}


def _name_after(record: Record, number: int) -> str:
    """A conversation id for a source that has none: the file's name and the record's line."""
    name = f"{_file_name(record.file)}:{record.line}"
    return name if number == 0 else f"{name}#{number}"


@lru_cache(maxsize=16)  # asked once per record, of the few files being read
def _file_name(path: str) -> str:
    """The file's name as its conversations are named after it: a compressed file's without its
    .gz or .zst, so that compressing a file renames none of them."""
    return os.path.basename(without_compression(path))
