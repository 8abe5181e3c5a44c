"""The legacy shape most old recordings have, checked on the hot path: a step-per-line record
whose `output` is one message object (migration 0001).

A year of such recordings has it on every line. The general path (check_schema) copies each
record, notes where every container was, upgrades it with every migration and locates every
value of its text, so that any problem found later is located as written: a hundred times a
clean line's cost. Here migration 0001's one move is made in place (what its upgrade does to a
step record), the record checked again, the warning located from the parsed data
(compact_position), and the move kept as an alias ($.output[0]... is written at $.output...).
The outcome is the general path's, Problem for Problem; a record this cannot settle (another
problem, text written otherwise) is left to it.
"""

from __future__ import annotations

from dataclasses import replace
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
    """The warning of migration 0001, as a Problem of no file or place; None if 0001 were not
    the first migration to run."""
    from ..migrate import migrations_for  # here: a run without legacy records never loads them

    first = migrations_for("step-record")[0]
    # Only the first migration can be applied alone: what a later one finds, an earlier may move.
    if not first.name.startswith("0001_"):
        return None
    message, severity, hint = legacy_words(first)
    return Problem("", None, None, "$.output", message, severity, hint, "legacy-shape")


def legacy_output_warning(file: str) -> Problem | None:
    """The warning of a step record whose output is one message, in `file` at no place yet
    (see legacy_output_column); None if there is none to give (see _output_migration)."""
    warning = _output_migration()
    return None if warning is None else replace(warning, file=file)


def legacy_output_column(data: dict, text: bytes, is_valid: Callable[[Any], bool]) -> int | None:
    """The column of the warning of a step record (`data`, parsed from the one line `text`)
    whose output is one message and that is otherwise valid, with `data` upgraded in place as
    migration 0001 upgrades it; None, and `data` as it was, for any other record.

    Valid after this one upgrade means no later migration applies: the step schema refuses the
    keys they rename (test_validate_problem_path holds the two paths to the same Problems).
    """
    output = data.get("output")
    if output.__class__ is not dict:
        return None
    position = compact_position(text, data, OUTPUT, 0)  # before the upgrade: the text is of data as read
    if position is None:
        return None
    data["output"] = [output]  # migration 0001's upgrade of a step record: the same key, in its place
    if not is_valid(data):
        data["output"] = output  # as read, for the general path
        return None
    return position[1]
