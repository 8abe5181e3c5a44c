"""`chatconv import`: records of other tools' formats read into chatconv's recordings.

Each record is read by its format (told from its content, or forced) into conversations of model
messages; each conversation is cut into steps (a step starts at each user or system message and
holds what the model and tools said after it), tool results get the names of the calls they
answer (by id, across the records of a conversation), and every line written is checked by
chatconv's own schema first.
"""

from __future__ import annotations

import os
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any, Iterator, Sequence

from ..messages import CONVERSATION_WINDOW
from ..problems import ChatconvError, Problem, UsageError
from ..schemas import fast_validator
from ..sources import (DATA_SUFFIXES, FieldMap, NotWritten, Record, adapt_record, discover, exact_json, iter_records,
                       problem_at)
from ..validate import check_schema
from .reading import Imported, Reading
from .registry import IMPORTED, IMPORTED_NAMES, OWN_SUFFIXES, ai_sdk, format_named

STARTS_A_STEP = ("user", "system")


@dataclass
class ImportRun:
    """What an import read and wrote; problems in the order found."""

    records: int = 0
    conversations: int = 0
    steps: int = 0
    problems: list[Problem] = field(default_factory=list)
    formats: dict[str, int] = field(default_factory=dict)  # records read, by format


def split_steps(messages: list[dict]) -> list[tuple[dict, list[dict]]]:
    """(input, outputs) of each step: a step starts at a user or system message, or at the first."""
    steps: list[tuple[dict, list[dict]]] = []
    for message in messages:
        if not steps or message.get("role") in STARTS_A_STEP:
            steps.append((message, []))
        else:
            steps[-1][1].append(message)
    return steps


def import_records(paths: Sequence[str], format_name: str | None = None, conversations: bool = False,
                   run: ImportRun | None = None, field_map: FieldMap | None = None) -> Iterator[bytes]:
    """Each line (without its newline) of chatconv recordings made from the records of `paths`.

    Step records, one per line, or with `conversations` one conversation per line; `field_map`
    moves a record's keys before its format is told (sources.adapt). Problems
    (warnings, and the errors of conversations left out) go to `run.problems`; a path that
    cannot be read raises UnreadableInput.
    """
    run = run if run is not None else ImportRun()
    # A conversation continued by a later record (a request that answers an earlier response's
    # calls) numbers its steps on from where it stopped, as validate expects.
    next_steps: OrderedDict[str, int] = OrderedDict()
    for imported, reading in iter_imported(paths, format_name, run, field_map):
        first = next_steps.pop(imported.id, 0)
        lines, steps = _lines(imported, reading, conversations, first)
        run.problems.extend(reading.problems)
        reading.problems.clear()
        next_steps[imported.id] = first + steps
        while len(next_steps) > CONVERSATION_WINDOW:
            next_steps.popitem(last=False)
        if lines:
            run.conversations += 1
            run.steps += steps
            yield from lines


def iter_imported(paths: Sequence[str], format_name: str | None, run: ImportRun,
                  field_map: FieldMap | None = None) -> Iterator[tuple[Imported, Reading]]:
    """Each conversation read from the records of `paths`, its tool results named after their
    calls, with the reading that holds its problems (the caller takes them); conversations whose
    reading failed are left out, their problems in `run.problems`."""

    forced = format_named(format_name) if format_name else None
    names: OrderedDict[str, dict[str, str]] = OrderedDict()  # conversation id -> call id -> tool name
    for file, _ in discover(paths, DATA_SUFFIXES | OWN_SUFFIXES):
        for reading_format, reading in _readings(file, [forced] if forced else IMPORTED, forced, run, field_map):
            run.records += 1
            run.formats[reading_format.NAME] = run.formats.get(reading_format.NAME, 0) + 1
            for number, imported in enumerate(_conversations(reading_format, reading)):
                if imported.id is None:
                    imported.id = _name_after(reading, number)
                if not reading.failed:
                    _name_results(imported, reading, _names_of(names, imported.id))
                if not reading.failed:
                    yield imported, reading  # the caller takes this conversation's problems
                run.problems.extend(reading.problems)  # a reader leaves out what it could not read
                reading.problems.clear()
            run.problems.extend(reading.problems)
            reading.problems.clear()


def _readings(file: str, readers, forced, run: ImportRun, field_map: FieldMap | None
              ) -> Iterator[tuple[Any, Reading]]:
    """(format, reading) for each record of the file; a JSON array of records is read element by element."""
    own = [fmt for fmt in readers if hasattr(fmt, "records") and fmt.claims(file)]
    source = own[0].records(file) if own else iter_records(file)
    for record in source:
        record = adapt_record(record, field_map)
        if record.error:
            run.problems.append(record.error)
            continue
        run.problems.extend(record.problems)
        found = _format_of(record.data, readers, forced)
        if found is not None or not isinstance(record.data, list):
            if found is None:
                run.problems.append(_unknown(record, ()))
                continue
            yield found, Reading(record, found.NAME)
            continue
        if not record.data:
            run.problems.append(problem_at(record, (), "an empty array: no record to import", "warning",
                                           code="import-empty"))
        for index, item in enumerate(record.data):  # an array of records, such as a file of request bodies
            found = _format_of(item, readers, forced)
            if found is None:
                run.problems.append(_unknown(record, (index,)))
                continue
            yield found, Reading(record, found.NAME, prefix=(index,))


def _format_of(data: Any, readers, forced):
    if forced is not None:
        return forced if not isinstance(data, list) or forced.detect(data) else None
    return next((fmt for fmt in readers if fmt.detect(data)), None)


def _unknown(record: Record, path: tuple) -> Problem:
    data = record.data
    for key in path:
        data = data[key]
    if ai_sdk.detect(data):
        return problem_at(record, path, "already a chatconv recording (AI SDK steps): nothing to import", "error",
                          "use it as it is (`chatconv migrate` rewrites legacy shapes)", code="unknown-format")
    return problem_at(record, path, "cannot tell which format this record is in", "error",
                      f"name it with --from ({', '.join(IMPORTED_NAMES)})", code="unknown-format")


def _conversations(reading_format, reading: Reading) -> Iterator[Imported]:
    try:
        yield from reading_format.read(reading)
    except ChatconvError as exc:
        reading.problems.extend(exc.problems)
    except (KeyError, TypeError, AttributeError, ValueError, IndexError) as exc:  # a shape the reader did not foresee
        reading.error((), f"not a {reading_format.NAME} record as chatconv reads it ({type(exc).__name__}: {exc})",
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
    for index, (opening, rest) in enumerate(split_steps(imported.messages)):
        step = {"conversationId": conversation_id, "stepIndex": first + index, "input": opening, "output": rest}
        if index == 0 and imported.metadata:
            step["metadata"] = {reading.format: imported.metadata}
        steps.append(step)
    records = ([{"id": conversation_id, "steps": [_without_id(s) for s in steps]}] if conversations else steps)
    kind = "conversation" if conversations else "step-record"
    lines, valid = [], fast_validator(kind).is_valid
    for record in records:
        errors = [] if valid(record) else [p for p in check_schema(Record(reading.record.file, _line_of(reading),
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


def _line_of(reading: Reading) -> int:
    """The line the data read starts on: its record's, unless it is an element of a JSON array
    (locating one reads the record's text again: most records are whole lines)."""
    return reading.record.line if not reading.prefix else reading.record.locate(reading.prefix)[0]


def _name_after(reading: Reading, number: int) -> str:
    """A conversation id for a source that has none: the file's name and the record's line."""
    name = f"{os.path.basename(reading.record.file)}:{_line_of(reading)}"
    return name if number == 0 else f"{name}#{number}"


def _names_of(names: OrderedDict, conversation_id: str) -> dict[str, str]:
    """The tool names by call id of a conversation, kept for its later records (the most recent
    conversations only, as validate follows them)."""
    if conversation_id in names:
        names.move_to_end(conversation_id)
        return names[conversation_id]
    while len(names) >= CONVERSATION_WINDOW:
        names.popitem(last=False)
    names[conversation_id] = {}
    return names[conversation_id]


def _name_results(imported: Imported, reading: Reading, names: dict[str, str]) -> None:
    """Give each tool result the name of the call it answers, by id; a result that answers no
    call it can be paired with is an error (its toolName would be invented)."""
    for index, message in enumerate(imported.messages):
        if not isinstance(message.get("content"), list):
            continue
        for position, part in enumerate(message["content"]):
            if part.get("type") == "tool-call":
                names[part["toolCallId"]] = part["toolName"]
            elif part.get("type") == "tool-result" and not part.get("toolName"):
                name = names.get(part["toolCallId"])
                if name is None:
                    where = imported.paths[index] if index < len(imported.paths) else ()
                    reading.error(where, f"tool result {part['toolCallId']!r} answers no earlier tool call of its "
                                  "conversation, so its tool's name is unknown",
                                  "import the record that holds the call too (same conversation), or remove the result",
                                  code="tool-result-orphan")
                    return
                part["toolName"] = name


def import_paths(paths: Sequence[str], format_name: str | None = None, conversations: bool = False,
                 problems: list[Problem] | None = None) -> list[dict]:
    """The library's import: chatconv's records made of `paths` (step records, or conversations).

    Problems are appended to `problems`; without a list, any error raises ChatconvError."""
    import orjson

    if not paths:
        raise UsageError("name at least one file to import")
    run = ImportRun()
    records = [orjson.loads(line) for line in import_records(paths, format_name, conversations, run)]
    if problems is None and any(p.is_error for p in run.problems):
        raise ChatconvError([p for p in run.problems if p.is_error])
    if problems is not None:
        problems.extend(run.problems)
    return records
