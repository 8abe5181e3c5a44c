"""Eval and config files: reading one for prompt, and the checks a schema cannot state (unique
case ids, known evaluator types, usable file references, sound guideline patterns).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Iterator

from ..eras import iter_cases
from ..problems import ChatconvError, Problem
from ..references import FileReferenceError, find_repo_root, pattern_problem, read_segment_text, resolve_reference
from ..sources import Record, iter_records, problem_at
from .explain import short_json
from .schema import check_schema

KNOWN_EVALUATOR_TYPES = ("code", "llm_judge")


def load_eval_file(path: str | Path, allow_outside_root: bool = False) -> tuple[Record, list[Problem]]:
    """An eval file, read and upgraded in memory, with its warnings; ChatconvError lists its errors."""
    records = iter_records(path)
    record = next(records)
    more = sum(1 for _ in records)
    if more:
        name = "standard input" if str(path) == "-" else path
        raise ChatconvError(Problem(
            str(path), None, None, "$",
            f"prompt takes one eval file (YAML or JSON); {name} holds {more + 1} records", "error",
            "give a single eval file; JSONL lines are recordings, not eval files", "usage"))
    if record.error:
        raise ChatconvError(record.error)
    problems = [*record.problems, *check_eval_document(record, "eval-file", allow_outside_root)]
    errors = [p for p in problems if p.is_error]
    if errors:
        raise ChatconvError(errors)
    return record, problems


def check_eval_document(record: Record, kind: str, allow_outside_root: bool = False) -> Iterator[Problem]:
    """Every problem of an eval file or a config file (`kind`): its schema, then the checks a
    schema cannot state. They read defensively, so they run whatever the schema found: every
    problem at once."""
    yield from check_schema(record, kind)
    yield from check_guideline_patterns(record)
    if kind == "eval-file":
        yield from check_eval_file(record, allow_outside_root)


def _items(value: Any) -> Iterator[tuple[int, dict]]:
    """(index, item) for the objects of a list; anything else holds none (checked elsewhere)."""
    if isinstance(value, list):
        for index, item in enumerate(value):
            if isinstance(item, dict):
                yield index, item


def check_eval_file(record: Record, allow_outside_root: bool = False) -> Iterator[Problem]:
    """Unique case ids, known evaluator types and usable file references."""
    first_line: dict[str, int] = {}
    for path, case in iter_cases(record.data):
        case_id = case.get("id")
        if not isinstance(case_id, str):
            continue
        if case_id in first_line:
            yield problem_at(record, path + ("id",), f"duplicate case id {case_id!r}",
                             hint=f"ids must be unique in a file; first used on line {first_line[case_id]}",
                             code="duplicate-case-id")
        else:
            first_line[case_id] = record.locate(path + ("id",))[0]
    yield from _check_evaluators(record)
    yield from _check_file_references(record, allow_outside_root)


def _check_evaluators(record: Record) -> Iterator[Problem]:
    data = record.data
    places = [(("execution",), data.get("execution") if isinstance(data, dict) else None)]
    places += [(path + ("execution",), case.get("execution")) for path, case in iter_cases(data)]
    for path, execution in places:
        evaluators = execution.get("evaluators") if isinstance(execution, dict) else None
        for index, evaluator in _items(evaluators):
            kind = evaluator.get("type")
            if isinstance(kind, str) and kind not in KNOWN_EVALUATOR_TYPES:
                yield problem_at(record, path + ("evaluators", index, "type"),
                                 f"unknown evaluator type {kind!r}; its keys are kept unchecked",
                                 "warning", f"known types: {', '.join(KNOWN_EVALUATOR_TYPES)}",
                                 code="unknown-evaluator")


def iter_file_segments(data: Any) -> Iterator[tuple[tuple, str]]:
    """(path, value) of every file segment in an eval file's messages."""
    for path, case in iter_cases(data):
        for field_name in ("input_messages", "expected_messages"):
            for m_index, message in _items(case.get(field_name)):
                for s_index, segment in _items(message.get("content")):
                    value = segment.get("value")
                    if segment.get("type") == "file" and isinstance(value, str) and value:
                        yield path + (field_name, m_index, "content", s_index, "value"), value


def _check_file_references(record: Record, allow_outside_root: bool) -> Iterator[Problem]:
    eval_dir = Path(record.file).parent if record.file != "-" else Path.cwd()
    root = find_repo_root(eval_dir)
    for path, value in iter_file_segments(record.data):
        try:
            read_segment_text(resolve_reference(value, eval_dir, root, allow_outside_root))
        except FileReferenceError as exc:
            yield problem_at(record, path, exc.message, hint=exc.hint, code="file-reference")


def check_guideline_patterns(record: Record) -> Iterator[Problem]:
    """The globs of an eval or config file that can never work as meant (prompt refuses them)."""
    patterns = record.data.get("guideline_patterns") if isinstance(record.data, dict) else None
    for index, pattern in enumerate(patterns if isinstance(patterns, list) else ()):
        reason = isinstance(pattern, str) and pattern and pattern_problem(pattern)  # else: schema's
        if reason:
            yield problem_at(record, ("guideline_patterns", index), f"bad glob {short_json(pattern)}: {reason}",
                             hint="guideline patterns are globs relative to the repository root", code="bad-glob")
