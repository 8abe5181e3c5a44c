"""A recording read as steps: step-per-line or conversation-per-line files, fields read from
other keys (--field), legacy shapes read as current ones; and a row made of a step, written
back exactly.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator

from ..problems import ChatconvError, Problem, UnreadableInput
from ..sources import FieldMap, NotWritten, Record, adapt_record, discover, exact_json, iter_records, problem_at
from ..schemas import fast_validator
from ..validate import check_schema

@dataclass
class Step:
    """One step of a recording, with where it came from."""

    record: Record
    conversation_id: Any
    step: dict
    path: tuple  # of the step within its record


def iter_recording_steps(path: str | Path, field_map: FieldMap | None = None,
                         problems: list[Problem] | None = None) -> Iterator[Step]:
    """Every step of a step-per-line or conversation-per-line file, in file order, streamed; a
    JSON file holding an array of steps or conversations gives one record per element.

    Legacy shapes are upgraded in memory. A record that is broken or invalid is skipped and its
    problems appended to `problems` (raised as ChatconvError when no list is given).
    """
    for record in iter_records(path, split=_is_array):
        yield from _record_steps(record, field_map, problems)


def iter_paths_steps(paths: Iterable[str | Path], field_map: FieldMap | None = None,
                     problems: list[Problem] | None = None,
                     unreadable: list[Problem] | None = None) -> Iterator[Step]:
    """iter_recording_steps over files, folders (searched as validate searches them, see
    sources.discover) and `-`, in the order found; each Step knows its Record (file, line).

    A path that cannot be read (missing, a foreign encoding) raises UnreadableInput, or, with
    an `unreadable` list, has its problems appended there and the next path is read.
    """
    for file, _ in discover(paths):
        try:
            yield from iter_recording_steps(file, field_map, problems)
        except UnreadableInput as exc:
            if unreadable is None:
                raise
            unreadable.extend(exc.problems)


def iter_paths_records(paths: Iterable[str | Path], split: Callable[[Any], bool] | None = None,
                       field_map: FieldMap | None = None,
                       unreadable: list[Problem] | None = None) -> Iterator[Record]:
    """Every Record of files, folders (see sources.discover) and `-`, in the order found, unchecked.

    split(data) tells that a JSON document holds an array of records (default: any array, see
    _is_array; sources.holds_records keeps a list of chat messages whole): each element is then
    a Record of its own, located at its own line and column, its problems' paths prefixed with
    its index. field_map renames fields (see sources.adapt; a clash sets Record.error). A path
    that cannot be read raises UnreadableInput, or with an `unreadable` list is reported there.
    """
    for file, _ in discover(paths):
        try:
            for record in iter_records(file, split=split or _is_array):
                yield adapt_record(record, field_map)
        except UnreadableInput as exc:
            if unreadable is None:
                raise
            unreadable.extend(exc.problems)


def _is_array(data: Any) -> bool:
    # A recording holds steps and conversations, never a bare array: any array is one of records.
    return isinstance(data, list)


def record_steps(record: Record, field_map: FieldMap | None, problems: list[Problem]) -> Iterable[Step]:
    """The steps of one record, as iter_recording_steps gives them (problems appended): a valid
    step-per-line record read as written (nearly every line of a recording) costs one schema
    check and no more."""
    data = record.data
    if not field_map and record.error is None and type(data) is dict and "steps" not in data \
            and fast_validator("step-record").is_valid(data):
        return (Step(record, data.get("conversationId"), data, ()),)
    return _record_steps(record, field_map, problems)


def _record_steps(record: Record, field_map: FieldMap | None, problems: list[Problem] | None) -> Iterator[Step]:
    record = adapt_record(record, field_map)
    found = [record.error] if record.error else _check(record)
    if problems is None and found:
        raise ChatconvError(found)
    if found:
        problems.extend(found)
        return
    if "steps" in record.data:
        for index, step in enumerate(record.data["steps"]):
            yield Step(record, record.data["id"], step, ("steps", index))
    else:
        yield Step(record, record.data.get("conversationId"), record.data, ())


def _check(record: Record) -> list[Problem]:
    if not isinstance(record.data, dict):
        return [problem_at(record, (), "a recording line must be a JSON object (a step or a conversation)",
                           code="wrong-type")]
    kind = "conversation" if "steps" in record.data else "step-record"
    # Only schema faults stop a record here; pairing is reported by the commands themselves.
    return [p for p in check_schema(record, kind) if p.is_error]


def step_row_json(item: Step, row: dict) -> bytes:
    """A row made of one step, as JSON; ChatconvError at the step when it cannot be written exactly."""
    try:
        return exact_json(row, item.record.text)
    except NotWritten as exc:
        raise ChatconvError(problem_at(item.record, item.path, f"step left out: {exc}", hint=exc.hint,
                                       code="not-written")) from None
