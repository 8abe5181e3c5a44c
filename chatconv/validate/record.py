"""One record's problems: its schema, then the checks a schema cannot state for its kind."""

from __future__ import annotations

from typing import Any, Iterable, Iterator, Protocol

from ..kinds import checked_kind, detect_kind
from ..eras.releases import Release
from ..problems import Problem
from ..sources import Record, problem_at
from ..sources.files import eval_pattern_problem
from .conversations import RecordingChecks
from .eval_files import check_eval_document
from .schema import check_schema


class ChecksAcrossRecords(Protocol):
    """What check_record hands a recording that passed its schema to, for the checks across the
    records of a file (RecordingChecks; validate's batches keep a step's facts for later)."""

    def add(self, record: Record, kind: str) -> Iterable[Problem]: ...


def check_record(record: Record, kind: str, checks: ChecksAcrossRecords | None = None,
                 allow_outside_root: bool = False, era: str | None = None,
                 release: Release | None = None) -> Iterator[Problem]:
    """Every problem of one record: its schema, then the checks a schema cannot state. `era`
    (an era's name) is the era an eval file is checked in, else its own; `release` the AgentV
    release whose verdict is given, else the newest of the file's era."""
    if kind in ("eval-file", "config"):
        yield from check_eval_document(record, kind, allow_outside_root, era if kind == "eval-file" else None,
                                       release)
        if kind == "config":
            yield from _eval_pattern_problems(record)
        return
    problems = check_schema(record, kind)
    yield from problems
    if any(p.is_error for p in problems):
        return
    if kind in ("step-record", "conversation"):
        yield from (checks or RecordingChecks()).add(record, kind)


def validate_record(data: Any, kind: str | None = None, file: str = "<record>") -> list[Problem]:
    """The problems of one in-memory record (kind detected when not given)."""
    kind, era = checked_kind(kind) if kind else (detect_kind(data, file), None)
    record = Record(file, 1, data)
    if kind is None:
        return [problem_at(record, (), "cannot tell what kind of record this is", code="unknown-kind")]
    checks = RecordingChecks()
    return [*check_record(record, kind, checks, era=era), *checks.finish()]


def _eval_pattern_problems(record: Record) -> Iterator[Problem]:
    """A config's `eval_patterns` that folder discovery cannot use (their schema is checked
    already): warnings, since AgentV may take them, and prompt, which reads guideline_patterns
    alone, goes on."""
    patterns = record.data.get("eval_patterns") if isinstance(record.data, dict) else None
    for index, pattern in enumerate(patterns if isinstance(patterns, list) else ()):
        reason = eval_pattern_problem(pattern) if isinstance(pattern, str) else None
        if reason:
            yield problem_at(record, ("eval_patterns", index), f"eval pattern {pattern!r} is not used: {reason}",
                             "warning", "write fewer alternatives: until then chatconv finds no file by it",
                             code="bad-glob")
