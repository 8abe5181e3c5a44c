"""The legacy shape most old recordings have, checked on the hot path: a step-per-line record
whose `output` is one message object (migration 0001).

A year of such recordings has it on every line. The general path (check_schema) copies each
record, notes where every container was, upgrades it with every migration and locates every
value of its text, so that any problem found later is located as written: a hundred times a
clean line's cost. Here the one migration is applied in place, the record checked again, the
warning located from the parsed data (compact_position), and the upgrade's one move kept as
an alias ($.output[0]... is written at $.output...). The outcome is the general path's, Problem
for Problem; a record this cannot settle (another problem, text written otherwise) is left to it.
"""

from __future__ import annotations

from functools import cache
from typing import Any, Callable

from ..problems import Problem
from ..sources.record import compact_position
from .schema import legacy_words

OUTPUT = ("output",)
# The upgrade moves the message under its new array: what was written at $.output is $.output[0].
OUTPUT_ALIASES = {("output", 0): OUTPUT}


@cache
def _output_migration():
    """Migration 0001 and the words of its warning; None if it were not the first to run."""
    from ..migrate import migrations_for  # here: a run without legacy records never loads them

    first = migrations_for("step-record")[0]
    # Only the first migration can be applied alone: what a later one finds, an earlier may move.
    return (first, *legacy_words(first)) if first.name.startswith("0001_") else None


def legacy_output_problem(data: dict, text: bytes, file: str, line: int,
                          is_valid: Callable[[Any], bool]) -> Problem | None:
    """The warning of a step record (`data`, parsed from the one line `text`) whose output is
    one message and that is otherwise valid, with `data` upgraded in place; None, and `data` as
    it was, for any other record.

    Valid after this one upgrade means no later migration applies: the step schema refuses the
    keys they rename (test_validate_problem_path holds the two paths to the same Problems).
    """
    found = _output_migration()
    output = data.get("output")
    if found is None or output.__class__ is not dict:
        return None
    migration, message, severity, hint = found
    if migration.detect(data) != OUTPUT:
        return None
    position = compact_position(text, data, OUTPUT, line)  # before the upgrade: the text is of data as read
    if position is None:
        return None
    migration.upgrade(data)
    if not is_valid(data):
        data["output"] = output  # as read, for the general path
        return None
    return Problem(file, line, position[1], "$.output", message, severity, hint, "legacy-shape")
