"""A recording read as steps: step-per-line or conversation-per-line files, fields read from
other keys (--field), legacy shapes read as current ones; and a row made of a step, written
back exactly.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterator, Mapping

from ..problems import ChatconvError, Problem
from ..sources import NotWritten, Record, exact_json, iter_records, problem_at
from ..validate import check_schema

STEP_FIELDS = ("conversationId", "stepIndex", "input", "output", "id", "timestamp", "metadata")
CONVERSATION_FIELDS = ("id", "steps")
FIELD_NAMES = tuple(dict.fromkeys(STEP_FIELDS + CONVERSATION_FIELDS))


def parse_field_map(pairs: list[str]) -> dict[str, str]:
    """`["output=response"]` -> {"output": "response"}: the step's field is read from another key.

    ValueError for a pair that is not NAME=KEY with NAME a chatconv field, and for a NAME or a
    KEY given twice (one of the two mappings would be lost).
    """
    field_map: dict[str, str] = {}
    for pair in pairs:
        name, _, key = pair.partition("=")
        if not key or name not in FIELD_NAMES:
            raise ValueError(f"{pair!r} is not NAME=KEY with NAME one of: {', '.join(FIELD_NAMES)}")
        if name in field_map:
            raise ValueError(f"{name} is mapped twice ({name}={field_map[name]}, {pair})")
        if key in field_map.values():
            raise ValueError(f"the key {key!r} is mapped twice: each key can be read as one field only")
        field_map[name] = key
    return field_map


class FieldClash(ValueError):
    """A mapped field's name is already a key of the record: renaming would hide one of the two."""

    def __init__(self, path: tuple, name: str, key: str):
        super().__init__(f"--field {name}={key}: the record has both {key!r} and {name!r}")
        self.path = path


def adapt(data: Any, field_map: Mapping[str, str], path: tuple = ()) -> Any:
    """A record with mapped fields renamed to their chatconv names; other keys kept, in order.

    FieldClash when a key would be renamed to a name the record already has (and keeps).
    """
    if not field_map or not isinstance(data, dict):
        return data
    renamed = {key: name for name, key in field_map.items()}
    for name, key in field_map.items():
        # A name whose own key is renamed away (a swap, or name=name) leaves room for the new one.
        if key in data and name in data and name not in renamed:
            raise FieldClash(path + (name,), name, key)
    adapted = {renamed.get(key, key): value for key, value in data.items()}
    steps = adapted.get("steps")
    if isinstance(steps, list):
        written_as = next(key for key in data if renamed.get(key, key) == "steps")  # where problems point
        adapted["steps"] = [adapt(step, field_map, path + (written_as, index)) for index, step in enumerate(steps)]
    return adapted


@dataclass
class Step:
    """One step of a recording, with where it came from."""

    record: Record
    conversation_id: Any
    step: dict
    path: tuple  # of the step within its record


def iter_recording_steps(path: str | Path, field_map: Mapping[str, str] | None = None,
                         problems: list[Problem] | None = None) -> Iterator[Step]:
    """Every step of a step-per-line or conversation-per-line file, in file order, streamed.

    Legacy shapes are upgraded in memory. A record that is broken or invalid is skipped and its
    problems appended to `problems` (raised as ChatconvError when no list is given).
    """
    for record in iter_records(path):
        try:
            record.data = adapt(record.data, field_map or {})
        except FieldClash as exc:
            record.error = problem_at(record, exc.path, str(exc), hint="map only keys whose field name the "
                                      "record does not use, or leave that --field out", code="field-clash")
        found = [record.error] if record.error else _check(record)
        if problems is None and found:
            raise ChatconvError(found)
        if found:
            problems.extend(found)
            continue
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
