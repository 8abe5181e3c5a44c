"""Validation: schema check (fast path), explanation (slow path, failing records only), and the
checks a schema cannot state (unique ids, tool-call pairing, step order, referenced files).
"""

from __future__ import annotations

import difflib
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Iterator

from .messages import iter_step_messages, iter_steps, message_parts
from .migrate import upgrade_record
from .problems import ChatconvError, Problem, UnreadableInput
from .prompt.files import FileReferenceError, find_repo_root, resolve_reference
from .schemas import explaining_validator, fast_validator, load_schema, schema_names
from .sources import DATA_SUFFIXES, Record, iter_records, problem_at

RECORDING_KINDS = {"step-record", "conversation", "conversation-step", "model-message"}
KIND_ALIASES = {"step": "step-record", "eval": "eval-file", "prompt": "chat-prompt"}
KNOWN_EVALUATOR_TYPES = ("code", "llm_judge")
_CASE_LIST_SPELLINGS = ("evalcases", "testcases", "tests", "cases", "eval_cases")
_ROLE_SYNONYMS = {"human": "user", "ai": "assistant", "bot": "assistant", "model": "assistant",
                  "function": "tool", "developer": "system"}
_SKIPPED_FOLDERS = {"node_modules", "__pycache__", "venv"}


def kind_names() -> list[str]:
    """The kinds `--kind` accepts: every current schema, and a few short aliases."""
    return [n for n in schema_names() if not n.startswith("legacy/")] + sorted(KIND_ALIASES)


def canonical_kind(kind: str) -> str:
    kind = KIND_ALIASES.get(kind, kind)
    load_schema(kind)  # KeyError names the known ones
    return kind


def detect_kind(data: Any, file: str = "") -> str | None:
    """The record kind, told from the content (and, for config files, the file name)."""
    if isinstance(data, dict):
        if "steps" in data:
            return "conversation"
        if "stepIndex" in data or ("input" in data and "output" in data):
            return "step-record"
        if any(key in data for key in _CASE_LIST_SPELLINGS):
            return "eval-file"
        if "question" in data:
            return "provider-request"
        if _is_config_name(file) or (data and set(data) <= {"$schema", "guideline_patterns"}):
            return "config"
    if isinstance(data, list) and data and all(isinstance(m, dict) and "role" in m for m in data):
        return "chat-prompt"
    return None


def _is_config_name(file: str) -> bool:
    path = Path(file)
    return path.name in ("chatconv.yaml", "chatconv.yml") or (
        path.parent.name == ".agentv" and path.stem == "config")


@dataclass
class Summary:
    files: int = 0
    records: int = 0
    errors: int = 0
    warnings: int = 0
    skipped: int = 0  # files found in folders that hold no chatconv record
    unreadable: int = 0
    stopped: bool = False  # --max-errors was reached

    def count(self, problem: Problem) -> None:
        if problem.is_error:
            self.errors += 1
        else:
            self.warnings += 1


@dataclass
class Validator:
    """Validates files and folders, counting into `summary`; `run` yields problems as found."""

    kind: str | None = None
    allow_outside_root: bool = False
    max_errors: int | None = None
    skip_unknown: bool = False  # skip named files of unknown kind too, as folders' files are
    summary: Summary = field(default_factory=Summary)

    def run(self, paths: Iterable[str | Path]) -> Iterator[Problem]:
        for path, explicit in discover(paths):
            for problem in self._file(path, explicit):
                self.summary.count(problem)
                yield problem
                if self.max_errors and self.summary.errors >= self.max_errors:
                    self.summary.stopped = True
                    return

    def _file(self, path: str, explicit: bool) -> Iterator[Problem]:
        checks = RecordingChecks()
        counted = False
        try:
            for record in iter_records(path):
                kind = None
                if not record.error:
                    kind = self.kind or detect_kind(record.data, path)
                    if kind is None and (self.skip_unknown or not explicit):
                        self.summary.skipped += 1  # a folder's file that is not ours
                        return
                if not counted:
                    self.summary.files += 1
                    counted = True
                if record.error:
                    yield record.error
                    continue
                self.summary.records += 1
                yield from record.problems
                if kind is None:
                    yield problem_at(record, (), "cannot tell what kind of record this is",
                                     hint=f"pass --kind (one of: {', '.join(kind_names())})")
                    continue
                yield from check_record(record, kind, checks, self.allow_outside_root)
        except UnreadableInput as exc:
            self.summary.unreadable += 1
            yield from exc.problems
            return
        yield from checks.finish()


def discover(paths: Iterable[str | Path]) -> Iterator[tuple[str, bool]]:
    """(file, named explicitly) for each path; folders are searched for data files, in order."""
    for path in paths:
        path = str(path)
        if path != "-" and os.path.isdir(path):
            for folder, subfolders, files in os.walk(path):
                subfolders[:] = sorted(d for d in subfolders if _searched(d))
                for name in sorted(files):
                    if Path(name).suffix.lower() in DATA_SUFFIXES:
                        yield os.path.join(folder, name), False
        else:
            yield path, True


def _searched(folder: str) -> bool:
    # Hidden folders hold tool state (.git, .venv), except the eval config folder .agentv.
    return folder == ".agentv" or not (folder.startswith(".") or folder in _SKIPPED_FOLDERS)


# ---------------------------------------------------------------------------------------------
# One record


def check_record(record: Record, kind: str, checks: "RecordingChecks | None" = None,
                 allow_outside_root: bool = False) -> Iterator[Problem]:
    """Every problem of one record; legacy shapes are upgraded in memory (record.data changes)."""
    if not fast_validator(kind).is_valid(record.data):
        record.data, applied = upgrade_record(record.data, kind)
        for migration, spot in applied:
            yield problem_at(
                record, spot, f"legacy shape: {migration.summary}", "warning",
                f"read as upgraded; `chatconv migrate` rewrites it (migration {migration.name})")
        if not (applied and fast_validator(kind).is_valid(record.data)):
            problems = list(explain(record, kind))
            yield from problems
            # Eval-file checks read defensively, so they still run: every problem at once.
            if any(p.is_error for p in problems) and kind != "eval-file":
                return
    if kind == "eval-file":
        yield from check_eval_file(record, allow_outside_root)
    elif kind in ("step-record", "conversation"):
        yield from (checks or RecordingChecks()).add(record, kind)


def validate_record(data: Any, kind: str | None = None, file: str = "<record>") -> list[Problem]:
    """The problems of one in-memory record (kind detected when not given)."""
    kind = canonical_kind(kind) if kind else detect_kind(data, file)
    record = Record(file, 1, data)
    if kind is None:
        return [problem_at(record, (), "cannot tell what kind of record this is")]
    checks = RecordingChecks()
    return [*check_record(record, kind, checks), *checks.finish()]


def load_eval_file(path: str | Path, allow_outside_root: bool = False) -> tuple[Record, list[Problem]]:
    """An eval file, read and upgraded in memory, with its warnings; ChatconvError lists its errors."""
    [record] = iter_records(path)
    if record.error:
        raise ChatconvError(record.error)
    problems = [*record.problems, *check_record(record, "eval-file", allow_outside_root=allow_outside_root)]
    errors = [p for p in problems if p.is_error]
    if errors:
        raise ChatconvError(errors)
    return record, problems


def validate_path(path: str | Path, kind: str | None = None, **options) -> tuple[list[Problem], Summary]:
    """Every problem of a file or folder, and the counts."""
    validator = Validator(kind=canonical_kind(kind) if kind else None, **options)
    return list(validator.run([path])), validator.summary


# ---------------------------------------------------------------------------------------------
# Explaining schema failures


def explain(record: Record, kind: str) -> Iterator[Problem]:
    """Every schema error of a failing record, the most relevant first, as Problems."""
    from jsonschema.exceptions import best_match

    errors = list(explaining_validator(kind).iter_errors(record.data))
    if not errors:  # the two validators disagree; say so rather than pass the record
        yield problem_at(record, (), f"the record does not match the {kind} schema")
        return
    best = best_match(errors)
    ordered = [best] + sorted((e for e in errors if e is not best), key=lambda e: list(map(str, e.absolute_path)))
    seen = set()
    for error in ordered:
        for problem in _describe(error, record, kind):
            key = (problem.path, problem.message)
            if key not in seen:
                seen.add(key)
                yield problem


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


_JSON_TYPES = {dict: "object", list: "array", str: "string", bool: "boolean", int: "integer",
               float: "number", type(None): "null"}


def _describe(error, record: Record, kind: str) -> Iterator[Problem]:
    path = tuple(error.absolute_path)
    check, expected, instance = error.validator, error.validator_value, error.instance
    if check == "additionalProperties":
        known = list(error.schema.get("properties", {}))
        for key in (k for k in instance if k not in known):
            close = difflib.get_close_matches(key, known, n=1, cutoff=0.6)
            hint = f"did you mean {close[0]!r}?" if close else f"known keys: {', '.join(known)}"
            if kind in RECORDING_KINDS:
                yield problem_at(record, path + (key,), f"unknown key {key!r}, kept as it is",
                                 "warning", hint)
            else:
                yield problem_at(record, path + (key,), f"unknown key {key!r}", "error", hint)
    elif check == "required":
        unknown = [k for k in instance if k not in error.schema.get("properties", {})]
        for key in (k for k in expected if k not in instance):
            misspelt = difflib.get_close_matches(key, unknown, n=1, cutoff=0.6)
            if misspelt and kind not in RECORDING_KINDS:
                continue  # the error on the unknown key already says "did you mean ...?"
            hint = f"is {misspelt[0]!r} a misspelling of it?" if misspelt else f"add {key!r}"
            yield problem_at(record, path, f"missing required key {key!r}", hint=hint)
    elif check == "type":
        wanted = " or ".join(expected) if isinstance(expected, list) else expected
        got = _JSON_TYPES.get(type(instance), type(instance).__name__)
        yield problem_at(record, path, f"expected {wanted}, got {got} {_short(instance)}")
    elif check == "enum":
        yield problem_at(record, path, f"{_short(instance)} is not one of: {', '.join(map(str, expected))}",
                         hint=_enum_hint(instance, expected))
    elif check == "minItems":
        yield problem_at(record, path, f"needs at least {expected} item(s)")
    elif check == "minLength":
        yield problem_at(record, path, "must not be empty")
    elif check == "pattern" and path and path[-1] == "timestamp":
        yield problem_at(record, path, f"{_short(instance)} is not an ISO-8601 date-time",
                         hint="write it like 2025-11-09T19:27:09.514Z")
    else:
        yield problem_at(record, path, error.message)


def _enum_hint(value: Any, allowed: list) -> str | None:
    if isinstance(value, str):
        if value.lower() in _ROLE_SYNONYMS and _ROLE_SYNONYMS[value.lower()] in allowed:
            return f"use {_ROLE_SYNONYMS[value.lower()]!r}"
        close = difflib.get_close_matches(value, [str(a) for a in allowed], n=1, cutoff=0.6)
        if close:
            return f"did you mean {close[0]!r}?"
    return None


# ---------------------------------------------------------------------------------------------
# Checks a schema cannot state: eval files


def _items(value: Any) -> Iterator[tuple[int, dict]]:
    """(index, item) for the objects of a list; anything else holds none (checked elsewhere)."""
    if isinstance(value, list):
        for index, item in enumerate(value):
            if isinstance(item, dict):
                yield index, item


def _cases(data: Any) -> Iterator[tuple[int, dict]]:
    return _items(data.get("evalcases")) if isinstance(data, dict) else iter(())


def check_eval_file(record: Record, allow_outside_root: bool = False) -> Iterator[Problem]:
    """Unique case ids, known evaluator types and usable file references."""
    first_line: dict[str, int] = {}
    for index, case in _cases(record.data):
        case_id = case.get("id")
        if not isinstance(case_id, str):
            continue
        if case_id in first_line:
            yield problem_at(record, ("evalcases", index, "id"), f"duplicate case id {case_id!r}",
                             hint=f"ids must be unique in a file; first used on line {first_line[case_id]}")
        else:
            first_line[case_id] = record.locate(("evalcases", index, "id"))[0]
    yield from _check_evaluators(record)
    yield from _check_file_references(record, allow_outside_root)


def _check_evaluators(record: Record) -> Iterator[Problem]:
    data = record.data
    places = [(("execution",), data.get("execution") if isinstance(data, dict) else None)]
    places += [(("evalcases", i, "execution"), case.get("execution")) for i, case in _cases(data)]
    for path, execution in places:
        evaluators = execution.get("evaluators") if isinstance(execution, dict) else None
        for index, evaluator in _items(evaluators):
            kind = evaluator.get("type")
            if isinstance(kind, str) and kind not in KNOWN_EVALUATOR_TYPES:
                yield problem_at(record, path + ("evaluators", index, "type"),
                                 f"unknown evaluator type {kind!r}; its keys are kept unchecked",
                                 "warning", f"known types: {', '.join(KNOWN_EVALUATOR_TYPES)}")


def iter_file_segments(data: Any) -> Iterator[tuple[tuple, str]]:
    """(path, value) of every file segment in an eval file's messages."""
    for index, case in _cases(data):
        for field_name in ("input_messages", "expected_messages"):
            for m_index, message in _items(case.get(field_name)):
                for s_index, segment in _items(message.get("content")):
                    value = segment.get("value")
                    if segment.get("type") == "file" and isinstance(value, str) and value:
                        yield (("evalcases", index, field_name, m_index, "content", s_index, "value"),
                               value)


def _check_file_references(record: Record, allow_outside_root: bool) -> Iterator[Problem]:
    eval_dir = Path(record.file).parent if record.file != "-" else Path.cwd()
    root = find_repo_root(eval_dir)
    for path, value in iter_file_segments(record.data):
        try:
            resolve_reference(value, eval_dir, root, allow_outside_root)
        except FileReferenceError as exc:
            yield problem_at(record, path, exc.message, hint=exc.hint)


# ---------------------------------------------------------------------------------------------
# Checks a schema cannot state: recordings


@dataclass
class _Conversation:
    last_step: int | None = None
    open_calls: dict[str, tuple[Record, tuple]] = field(default_factory=dict)
    call_ids: set[str] = field(default_factory=set)


class RecordingChecks:
    """Step order and tool-call pairing, per conversation, across the records of one file.

    A conversation-per-line record is one conversation; step-per-line records are grouped by
    `conversationId`. Unanswered calls are reported by `finish`, when no later step can answer.
    """

    def __init__(self):
        self._by_id: dict[Any, _Conversation] = {}

    def add(self, record: Record, kind: str) -> Iterator[Problem]:
        data = record.data
        if kind == "conversation":
            conversation = _Conversation()
            for path, step in iter_steps(data):
                yield from self._step(record, conversation, path, step)
            yield from _unanswered(conversation)
        else:
            conversation = self._by_id.setdefault(data.get("conversationId"), _Conversation())
            yield from self._step(record, conversation, (), data)

    def finish(self) -> Iterator[Problem]:
        for conversation in self._by_id.values():
            yield from _unanswered(conversation)
        self._by_id.clear()

    def _step(self, record: Record, conversation: _Conversation, path: tuple, step: dict) -> Iterator[Problem]:
        index = step["stepIndex"]
        if conversation.last_step is not None and index <= conversation.last_step:
            yield problem_at(record, path + ("stepIndex",),
                             f"stepIndex {index} does not follow {conversation.last_step}",
                             hint="steps of a conversation must have increasing stepIndex, in file order")
        conversation.last_step = index
        # Most steps hold no tool parts; the raw line tells so without walking the messages.
        if isinstance(record.text, bytes) and b'"tool-' not in record.text:
            return
        for message_path, message in iter_step_messages(step):
            for p_index, part in enumerate(message_parts(message)):
                kind = part.get("type")
                if kind == "tool-call":
                    yield from self._call(record, conversation, path + message_path + ("content", p_index), part)
                elif kind == "tool-result":
                    yield from self._result(record, conversation, path + message_path + ("content", p_index), part)

    @staticmethod
    def _call(record, conversation, path, part) -> Iterator[Problem]:
        call_id = part["toolCallId"]
        if call_id in conversation.call_ids:
            yield problem_at(record, path + ("toolCallId",), f"duplicate toolCallId {call_id!r}",
                             "warning", "each tool call should have its own id")
        conversation.call_ids.add(call_id)
        conversation.open_calls[call_id] = (record, path)

    @staticmethod
    def _result(record, conversation, path, part) -> Iterator[Problem]:
        call_id = part["toolCallId"]
        if conversation.open_calls.pop(call_id, None) is None and call_id not in conversation.call_ids:
            yield problem_at(record, path + ("toolCallId",),
                             f"tool-result {call_id!r} answers no earlier tool-call",
                             hint="a tool result must follow the tool-call with the same toolCallId")


def _unanswered(conversation: _Conversation) -> Iterator[Problem]:
    for call_id, (record, path) in conversation.open_calls.items():
        yield problem_at(record, path + ("toolCallId",), f"tool-call {call_id!r} is never answered",
                         "warning", "no later tool-result in this conversation has this toolCallId")
    conversation.open_calls.clear()
