"""Validation: schema check (fast path), explanation (slow path, failing records only), and the
checks a schema cannot state (unique ids, tool-call pairing, step order, referenced files).
"""

from __future__ import annotations

import copy
import difflib
import math
import os
from collections import OrderedDict, deque
from dataclasses import dataclass, field
from itertools import islice
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Iterable, Iterator

import orjson

from .messages import iter_step_messages, iter_steps, message_parts
from .problems import ChatconvError, Problem, UnreadableInput
from .references import FileReferenceError, find_repo_root, pattern_problem, read_segment_text, resolve_reference
from .schemas import explaining_validator, fast_validator, load_schema, schema_names
from .sources import (BATCH_BYTES, Record, detect_kind, discover, empty_file_problem, file_format,
                      holds_no_record, integers_beyond_64_bits, is_blank_line, iter_line_batches,
                      iter_records, load_json, open_binary, problem_at)

if TYPE_CHECKING:
    from concurrent.futures import ProcessPoolExecutor

RECORDING_KINDS = {"step-record", "conversation", "conversation-step", "model-message"}
KIND_ALIASES = {"step": "step-record", "eval": "eval-file", "prompt": "chat-prompt"}
KNOWN_EVALUATOR_TYPES = ("code", "llm_judge")
_ROLE_SYNONYMS = {"human": "user", "ai": "assistant", "bot": "assistant", "model": "assistant",
                  "function": "tool", "developer": "system"}

CONVERSATION_WINDOW = 10_000  # step-per-line conversations followed at once (RecordingChecks)
PARALLEL_MIN_BYTES = 16 * 1024 * 1024  # unless --jobs says otherwise, smaller files use no workers


def kind_names() -> list[str]:
    """The kinds `--kind` accepts: every current schema, and a few short aliases."""
    return [n for n in schema_names() if not n.startswith("legacy/")] + sorted(KIND_ALIASES)


def canonical_kind(kind: str) -> str:
    kind = KIND_ALIASES.get(kind, kind)
    load_schema(kind)  # KeyError names the known ones
    return kind


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
    """Validates files and folders, counting into `summary`; `run` yields problems as found.

    JSONL files are checked a batch of lines at a time, by `jobs` worker processes when more
    than one (None: one per core for files of PARALLEL_MIN_BYTES or more); the problems come
    out in line order whatever the number of workers.
    """

    kind: str | None = None
    allow_outside_root: bool = False
    max_errors: int | None = None
    skip_unknown: bool = False  # skip named files of unknown kind too, as folders' files are
    jobs: int | None = None
    batch_bytes: int = BATCH_BYTES
    conversation_window: int = CONVERSATION_WINDOW
    summary: Summary = field(default_factory=Summary)
    _pool: ProcessPoolExecutor | None = field(default=None, init=False, repr=False)

    def run(self, paths: Iterable[str | Path]) -> Iterator[Problem]:
        try:
            for path, explicit in discover(paths):
                for problem in self._file(path, explicit):
                    self.summary.count(problem)
                    yield problem
                    if self.max_errors and self.summary.errors >= self.max_errors:
                        self.summary.stopped = True
                        return
        finally:
            self._stop_workers()

    def _file(self, path: str, explicit: bool) -> Iterator[Problem]:
        options = LineOptions(path, self.kind, explicit, self.skip_unknown, self.allow_outside_root)
        try:
            yield from self._merge(path, self._batches(options), RecordingChecks(self.conversation_window))
        except UnreadableInput as exc:
            self.summary.unreadable += 1
            yield from exc.problems

    def _merge(self, path: str, batches: Iterable[tuple[Callable, Iterable]],
               checks: RecordingChecks) -> Iterator[Problem]:
        """Count and report each line's outcome in line order, with the checks across lines."""
        summary = self.summary
        counted = False
        for make_record, entries in batches:
            for where, outcome, steps in entries:
                if outcome is NOT_OURS:  # only ever the file's first record (see record_entry)
                    summary.skipped += 1  # a folder's file that is not ours
                    return
                if not counted:
                    summary.files += 1
                    counted = True
                if isinstance(outcome, Problem):  # the line is not a record: it could not be read
                    yield outcome
                    continue
                summary.records += 1
                if outcome:
                    yield from outcome
                if steps is not None:
                    yield from self._steps(checks, steps, make_record, where)
        if not counted:  # a JSONL file of blank lines
            summary.files += 1
            yield empty_file_problem(path)
        yield from checks.finish()

    def _steps(self, checks: RecordingChecks, steps: tuple, make_record: Callable,
               where: Any) -> Iterator[Problem]:
        """The checks across lines of a run of steps (see check_lines); the first is counted."""
        conversation_id, first_index, last_index, count, tool_lines = steps
        first = self.summary.records
        conversation, found = checks.add_steps(conversation_id, first_index, last_index, make_record, where)
        yield from found
        for offset, tool_where, parts in tool_lines:
            self.summary.records = first + offset  # exact, should --max-errors stop on this line
            yield from checks.add_tool_parts(conversation, parts, make_record, tool_where)
        self.summary.records = first + count - 1

    def _batches(self, options: LineOptions) -> Iterator[tuple[Callable, Iterable]]:
        """(make_record, entries) in order: check_lines describes the entries and `where`."""
        path = options.file
        if path == "-" or file_format(path) != "jsonl":
            yield light_record, (record_entry(record, record, options, first=index == 0)
                                 for index, record in enumerate(iter_records(path)))
            return
        with open_binary(path) as stream:
            jobs = self._jobs_for(os.fstat(stream.fileno()).st_size)
            batches = iter_line_batches(stream, self.batch_bytes)
            if jobs > 1:
                yield from self._checked_by_workers(batches, options, jobs)
                return
            opens_file = True
            for first_line, _, lines in batches:
                yield LineBatch(path, lines).record, check_lines(lines, first_line, options, opens_file)
                opens_file = opens_file and holds_no_record(lines)

    def _jobs_for(self, size: int) -> int:
        if size <= self.batch_bytes:
            return 1  # one batch: nothing to share out
        if self.jobs is not None:
            return self.jobs
        if size < PARALLEL_MIN_BYTES:
            return 1
        from .workers import available_cores  # here: a run without workers skips multiprocessing

        return available_cores()

    def _checked_by_workers(self, batches: Iterable[tuple[int, int, bytes]], options: LineOptions,
                            jobs: int) -> Iterator[tuple[Callable, list]]:
        """Batches checked by worker processes, handed on in file order.

        Workers read their batch from the file themselves (cheaper than a pipe); this process
        keeps it to locate the few problems found across lines. At most two batches per worker
        are read ahead, so memory stays flat; those still queued when the caller stops
        (--max-errors) are cancelled.
        """
        if self._pool is None:
            from .workers import start_pool

            self._pool = start_pool(jobs)
        pending: deque = deque()
        opens_file = True
        try:
            for first_line, offset, lines in batches:
                future = self._pool.submit(check_file_lines, offset, len(lines), first_line, options, opens_file)
                opens_file = opens_file and holds_no_record(lines)
                pending.append((lines, future))
                if len(pending) >= 2 * jobs:
                    yield self._collect(options.file, *pending.popleft())
            while pending:
                yield self._collect(options.file, *pending.popleft())
        finally:
            for _, future in pending:
                future.cancel()

    def _collect(self, path: str, lines: bytes, future) -> tuple[Callable, list]:
        from concurrent.futures.process import BrokenProcessPool  # loaded with the pool

        try:
            return LineBatch(path, lines).record, future.result()
        except BrokenProcessPool:
            self._stop_workers()
            raise UnreadableInput(Problem(
                path, None, None, "$", "validation stopped: a worker process ended unexpectedly",
                "error", "run again, or with --jobs 1 (e.g. if memory is short)")) from None

    def _stop_workers(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(cancel_futures=True)
            self._pool = None


# ---------------------------------------------------------------------------------------------
# One record


def check_schema(record: Record, kind: str) -> list[Problem]:
    """The schema problems of one record; legacy shapes are upgraded in memory (record.data
    changes, and record.positions gains the upgraded paths: see _locate_upgraded_paths)."""
    if fast_validator(kind).is_valid(record.data):
        return []
    from .migrate import migrations_for, upgrade_record  # here: most runs never need them loaded

    # A migration applies only if one finds its shape in the record as it is (the first to apply
    # does): the places of the original containers are noted only then.
    try:
        legacy = any(migration.detect(record.data) is not None for migration in migrations_for(kind))
    except Exception:  # a migration tripped on a shape it did not expect: explain the record as it is
        legacy = False
    places = _container_places(record.data) if legacy else None
    applied = []
    if legacy:
        original = _copy(record.data)
        try:
            record.data, applied = upgrade_record(record.data, kind)
        except Exception:  # as above; the upgrade may have changed part of it
            record.data, applied = original, []
    if applied and places is not None:
        _locate_upgraded_paths(record, places)
    problems = [problem_at(record, spot, f"legacy shape: {migration.summary}", "warning",
                           f"read as upgraded; `chatconv migrate` rewrites it (migration {migration.name})")
                for migration, spot in applied]
    if not (applied and fast_validator(kind).is_valid(record.data)):
        problems += explain(record, kind)
    return problems


def _copy(data: Any) -> Any:
    # orjson's round trip is several times faster than deepcopy, for the data it can write.
    try:
        return orjson.loads(orjson.dumps(data))
    except (orjson.JSONEncodeError, orjson.JSONDecodeError):  # an integer past 64 bits, deep nesting
        return copy.deepcopy(data)


def _container_places(data: Any) -> dict[int, tuple[Any, tuple, dict | None]]:
    """id -> (the container, its path, for an object a copy of its items) of each object and
    array in `data`, before an upgrade. The containers and values are kept, so ids stay theirs."""
    places: dict[int, tuple[Any, tuple, dict | None]] = {}
    stack = [(data, ())]
    while stack:
        node, path = stack.pop()
        if isinstance(node, dict):
            places[id(node)] = (node, path, dict(node))
            stack.extend((value, path + (key,)) for key, value in node.items())
        elif isinstance(node, list):
            places[id(node)] = (node, path, None)
            stack.extend((item, path + (index,)) for index, item in enumerate(node))
    return places


def _locate_upgraded_paths(record: Record, places: dict[int, tuple[Any, tuple, dict | None]]) -> None:
    """Give each path of the upgraded record.data that is not in the file the position of the
    original path it came from, so that problems found in the upgraded record point at the text.

    Migrations rename keys in place and keep the value objects: an object or array is the same
    one as before (`places`); a renamed key is found by its value; a value a migration wraps
    (`input: hi` -> `input_messages: [{role: user, content: hi}]`) by the original value held
    inside. Paths left without an alias are located at their nearest ancestor that has one.
    """
    aliases: dict[tuple, tuple] = {}
    stack: list[tuple[Any, tuple, tuple | None]] = [(record.data, (), ())]  # node, path, original path
    while stack:
        node, path, original = stack.pop()
        place = places.get(id(node))
        if place is not None and place[0] is node:
            original = place[1]
        else:
            place = None  # a container the upgrade made
        if original is not None and original != path:
            aliases[path] = original
        if isinstance(node, dict):
            before = place[2] if place is not None else {}
            gone = [(key, value) for key, value in before.items() if key not in node]
            for key, value in node.items():
                if original is None or key in before:
                    stack.append((value, path + (key,), None if original is None else original + (key,)))
                    continue
                old = next((old for old, old_value in gone if _holds(value, old_value)), None)
                if old is None:
                    stack.append((value, path + (key,), None))
                    continue
                stack.append((value, path + (key,), original + (old,)))
                aliases.setdefault(path + (old,), original + (old,))  # a later migration's spot
        elif isinstance(node, list):
            for index, item in enumerate(node):
                stack.append((item, path + (index,), original + (index,) if place is not None else None))
    if aliases:
        found = {path: record.locate(original) for path, original in aliases.items()}
        record.positions.update(found)  # locate made record.positions


def _holds(value: Any, target: Any, depth: int = 2) -> bool:
    """Whether `value` is `target`, or holds it within `depth` levels (a wrapped value)."""
    if value is target:
        return True
    if depth <= 0:
        return False
    items = value.values() if isinstance(value, dict) else value if isinstance(value, list) else ()
    return any(_holds(item, target, depth - 1) for item in items)


def check_record(record: Record, kind: str, checks: "RecordingChecks | None" = None,
                 allow_outside_root: bool = False) -> Iterator[Problem]:
    """Every problem of one record: its schema, then the checks a schema cannot state."""
    problems = check_schema(record, kind)
    yield from problems
    # Eval-file and config checks read defensively, so they still run: every problem at once.
    if kind in ("eval-file", "config"):
        yield from _check_guideline_patterns(record)
    elif any(p.is_error for p in problems):
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
    records = iter_records(path)
    record = next(records)
    more = sum(1 for _ in records)
    if more:
        name = "standard input" if str(path) == "-" else path
        raise ChatconvError(Problem(
            str(path), None, None, "$",
            f"prompt takes one eval file (YAML or JSON); {name} holds {more + 1} records", "error",
            "give a single eval file; JSONL lines are recordings, not eval files"))
    if record.error:
        raise ChatconvError(record.error)
    problems = [*record.problems, *check_record(record, "eval-file", allow_outside_root=allow_outside_root)]
    errors = [p for p in problems if p.is_error]
    if errors:
        raise ChatconvError(errors)
    return record, problems


def validate_path(path: str | Path, kind: str | None = None, **options) -> tuple[list[Problem], Summary]:
    """Every problem of a file or folder, and the counts; `options` are Validator's (e.g. jobs)."""
    validator = Validator(kind=canonical_kind(kind) if kind else None, **options)
    return list(validator.run([path])), validator.summary


# ---------------------------------------------------------------------------------------------
# The records of a file, one at a time; for JSONL, a batch of lines at a time (in workers)


NOT_OURS = None  # the outcome of a file's first record when of unknown kind: the file is skipped
_CHECKED_FURTHER = {"eval-file", "step-record", "conversation"}  # more than the schema to check


@dataclass(frozen=True)
class LineOptions:
    """What checking one file's records takes; sent to the worker processes with each batch."""

    file: str
    kind: str | None  # forced with --kind, else told from each record
    explicit: bool  # named on the command line, rather than found in a folder
    skip_unknown: bool
    allow_outside_root: bool


def record_entry(record: Record, where: Any, options: LineOptions, first: bool) -> tuple:
    """The (where, outcome, steps) entry of one record, as check_lines describes them.

    Only the file's `first` record tells that a file found in a folder (or any file, with
    --skip-unknown) is not ours; a later record of unknown kind is an error, as in a named file.
    """
    if record.error:
        return where, record.error, None
    kind = options.kind or detect_kind(record.data, record.file)
    if kind is None and first and (options.skip_unknown or not options.explicit):
        return where, NOT_OURS, None
    if kind is None:
        unknown = problem_at(record, (), "cannot tell what kind of record this is",
                             hint=f"pass --kind (one of: {', '.join(kind_names())})")
        return where, (*record.problems, unknown), None
    step = _StepCollector()
    problems = (*record.problems, *check_record(record, kind, step, options.allow_outside_root))
    if step.facts is None:
        return where, problems, None
    conversation_id, index, parts = step.facts
    if parts and record.positions is not None and isinstance(where, tuple):
        # Located already, perhaps with the paths of an upgrade (check_schema), which the text
        # alone does not give: the tool parts' problems are located as one record at a time.
        where = (*where, record.positions)
    return where, problems, (conversation_id, index, index, 1, ((0, where, parts),) if parts else ())


class _StepCollector:
    """The `checks` of check_record for record_entry: a step-per-line record's facts are kept
    for the checks across lines, which the caller runs; a conversation is checked whole here."""

    facts: tuple | None = None

    def add(self, record: Record, kind: str) -> Iterator[Problem]:
        if kind == "conversation":
            return RecordingChecks().add(record, kind)
        self.facts = (record.data.get("conversationId"), *step_facts(record.data, record.text))
        return iter(())


def check_lines(lines: bytes, first_line: int, options: LineOptions, opens_file: bool) -> list[tuple]:
    """The outcome of each non-blank line of `lines` (whole JSONL lines, from line `first_line`);
    `opens_file` when no record of the file comes before them (see holds_no_record).

    Each entry is (where, outcome, steps), in line order:
    - where: (line number, start, end) of the line in `lines` (LineBatch makes its Record),
      and for a step checked as a Record, its positions (see record_entry);
    - outcome: a tuple of the record's own problems (mostly empty); a Problem when the line is
      not a record (invalid JSON); NOT_OURS when the file's first record is of unknown kind
      and the file is then skipped (the only entry);
    - steps: None, or for step-per-line records the facts the checks across lines need, of a
      run of consecutive lines that are steps of one conversation with increasing stepIndex
      (the entry stands for the whole run; only its first line may have problems):
      (conversationId, first stepIndex, last stepIndex, lines in the run, tool lines), where
      tool lines are (line in the run from 0, where, tool parts) of the lines with tool parts
      (see _tool_parts).
    Runs in worker processes. A line that passes the fast schema check costs a parse, a check
    and a few facts; any other becomes a Record and goes through check_record.
    """
    file, forced_kind = options.file, options.kind
    loads, is_step = orjson.loads, fast_validator("step-record").is_valid
    entries: list[tuple] = []
    run = None  # the run being gathered: [where, conversationId, first, last, lines, tool lines]
    end = 0
    for number, line in enumerate(lines.split(b"\n"), first_line):
        start, end = end, end + len(line) + 1
        where = (number, start, end)
        try:
            data = loads(line)
        except orjson.JSONDecodeError:
            # Blank lines are no records, nor is a line that holds just a BOM (as migrate says).
            if not is_blank_line(line):
                run = _end_run(run, entries)
                entries.append(record_entry(load_json(lines[start:end], file, number), where, options,
                                            opens_file and not entries))  # read here when after a BOM
            continue
        if forced_kind is None and data.__class__ is dict and "stepIndex" in data and "steps" not in data:
            kind = "step-record"  # what detect_kind says, told without a call: most lines are steps
        else:
            kind = forced_kind or detect_kind(data, file)
        if kind == "step-record" and is_step(data):
            conversation_id, index = data.get("conversationId"), data["stepIndex"]
            parts = _tool_parts(data) if b'"tool-' in line else None
            if run is not None and conversation_id == run[1] and index > run[3]:
                if parts:
                    run[5].append((run[4], where, parts))
                run[3] = index
                run[4] += 1
            else:
                _end_run(run, entries)
                run = [where, conversation_id, index, index, 1, [(0, where, parts)] if parts else []]
            continue
        run = _end_run(run, entries)
        if kind is not None and kind not in _CHECKED_FURTHER and fast_validator(kind).is_valid(data):
            entries.append((where, (), None))
            continue
        entries.append(record_entry(Record(file, number, data, text=lines[start:end]), where, options,
                                    opens_file and not entries))
        if entries[-1][1] is NOT_OURS:
            return entries  # the file is skipped: the rest of it does not matter
    _end_run(run, entries)
    return entries


def _end_run(run: list | None, entries: list) -> None:
    """Add the entry of the run being gathered, if any; then there is none (None)."""
    if run is not None:
        where, conversation_id, first, last, count, tool_lines = run
        entries.append((where, (), (conversation_id, first, last, count, tuple(tool_lines))))


def check_file_lines(offset: int, length: int, first_line: int, options: LineOptions,
                     opens_file: bool) -> list[tuple]:
    """check_lines in a worker process, which reads its lines from the file itself."""
    with open(options.file, "rb") as stream:
        stream.seek(offset)
        return check_lines(stream.read(length), first_line, options, opens_file)


class LineBatch:
    """Lines of a JSONL file held by the main process while their outcomes are merged."""

    __slots__ = ("file", "lines")

    def __init__(self, file: str, lines: bytes):
        self.file = file
        self.lines = lines

    def record(self, where: tuple) -> Record:
        """A light Record of one line: enough to locate a problem in it, no parsed data.
        `where` is (line number, start, end), and the line's positions if found already."""
        number, start, end, *positions = where
        return Record(self.file, number, text=self.lines[start:end], positions=positions[0] if positions else None)


# ---------------------------------------------------------------------------------------------
# Explaining schema failures


def explain(record: Record, kind: str) -> list[Problem]:
    """Every schema error of a failing record, the most relevant first, as Problems."""
    try:
        return _explain(record, kind)
    except RecursionError:  # jsonschema recurses into (and reprs) the values it reports
        return [problem_at(record, (), f"the record does not match the {kind} schema, and is nested "
                           "too deeply to explain where", hint="nest arrays and objects less deeply")]


def _explain(record: Record, kind: str) -> list[Problem]:
    from jsonschema.exceptions import best_match

    errors = list(explaining_validator(kind).iter_errors(record.data))
    if not errors:  # the two validators disagree; say so rather than pass the record
        return [problem_at(record, (), f"the record does not match the {kind} schema")]
    best = best_match(errors)
    ordered = [best] + sorted((e for e in errors if e is not best), key=lambda e: list(map(str, e.absolute_path)))
    problems = {}
    for error in ordered:
        for problem in _describe(error, record, kind):
            problems.setdefault((problem.path, problem.message), problem)
    return list(problems.values())


def _short(value: Any, limit: int = 60) -> str:
    """The value as JSON, cut to `limit` characters; a large or deep value is never rendered whole."""
    text = _preview(value, limit, depth=2)
    return text if len(text) <= limit else text[:limit - 3] + "..."


def _preview(value: Any, limit: int, depth: int) -> str:
    """JSON text of enough of the value to fill `limit` characters (items cost 3 at least)."""
    if isinstance(value, dict):
        brackets, items = "{}", (f"{_preview(k, limit, 0)}: {_preview(v, limit, depth - 1)}"
                                 for k, v in value.items())
    elif isinstance(value, list):
        brackets, items = "[]", (_preview(v, limit, depth - 1) for v in value)
    elif isinstance(value, str):
        return orjson.dumps(value[:limit]).decode()  # one character more than fits, when cut
    elif isinstance(value, float) and not math.isfinite(value):
        return str(value)  # YAML's .inf and .nan: JSON has no spelling for them
    else:
        try:
            return orjson.dumps(value).decode()
        except TypeError:  # an integer past 64 bits
            return str(value)
    inside = "..." if depth <= 0 and value else ", ".join(islice(items, limit // 3 + 1))
    return brackets[0] + inside + brackets[1]


_JSON_TYPES = {dict: "object", list: "array", str: "string", bool: "boolean", int: "integer",
               float: "number"}


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
        digits = _digits_beyond_64_bits(instance, record)
        if digits:
            got = f"integer {digits} (beyond 64 bits)"
        else:
            got = "null" if instance is None else f"{_JSON_TYPES.get(type(instance), 'value')} {_short(instance)}"
        yield problem_at(record, path, f"expected {wanted}, got {got}")
    elif check == "enum":
        allowed = ", ".join(a if isinstance(a, str) else _short(a) for a in expected)
        yield problem_at(record, path, f"{_shown(instance, record)} is not one of: {allowed}",
                         hint=_enum_hint(instance, expected))
    elif check == "const":
        yield problem_at(record, path, f"expected {_short(expected)}, got {_shown(instance, record)}")
    elif check == "minimum":
        yield problem_at(record, path, f"{_shown(instance, record)} is less than the minimum {_short(expected)}")
    elif check == "minItems":
        yield problem_at(record, path, f"needs at least {expected} item(s)")
    elif check == "minLength":
        yield problem_at(record, path, "must not be empty")
    elif check == "pattern" and path and path[-1] == "timestamp":
        yield problem_at(record, path, f"{_short(instance)} is not an ISO-8601 date-time",
                         hint="write it like 2025-11-09T19:27:09.514Z")
    else:  # not error.message: jsonschema puts the Python repr of the whole value in it
        yield problem_at(record, path, f"{_shown(instance, record)} does not match the schema "
                                       f"({check}: {_short(expected)})")


def _shown(value: Any, record: Record) -> str:
    """_short(value), but an integer beyond 64 bits by its digits (see _digits_beyond_64_bits)."""
    digits = _digits_beyond_64_bits(value, record)
    return f"{digits} (an integer beyond 64 bits)" if digits else _short(value)


def _digits_beyond_64_bits(value: Any, record: Record) -> str | None:
    """The digits written for `value` when it is an integer beyond 64 bits that orjson read as a
    float (Python's own readers keep such integers: YAML's are ints); else None."""
    if (value.__class__ is not float or record.text is None or not value.is_integer()
            or -(1 << 63) <= value < (1 << 64)):
        return None
    try:
        beyond = integers_beyond_64_bits(record.text)
    except (ValueError, RecursionError):  # JSON that orjson reads and the json module does not
        return None
    found = {digits for digits in beyond if float(digits) == value}
    return found.pop() if len(found) == 1 else None  # else integers that read alike: which is unsure


def _enum_hint(value: Any, allowed: list) -> str | None:
    if isinstance(value, str):
        if value.lower() in _ROLE_SYNONYMS and _ROLE_SYNONYMS[value.lower()] in allowed:
            return f"use {_short(_ROLE_SYNONYMS[value.lower()])}"
        close = difflib.get_close_matches(value, [str(a) for a in allowed], n=1, cutoff=0.6)
        if close:
            return f"did you mean {_short(close[0])}?"
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
            read_segment_text(resolve_reference(value, eval_dir, root, allow_outside_root))
        except FileReferenceError as exc:
            yield problem_at(record, path, exc.message, hint=exc.hint)


def _check_guideline_patterns(record: Record) -> Iterator[Problem]:
    """The globs of an eval or config file that can never work as meant (prompt refuses them)."""
    patterns = record.data.get("guideline_patterns") if isinstance(record.data, dict) else None
    for index, pattern in enumerate(patterns if isinstance(patterns, list) else ()):
        reason = isinstance(pattern, str) and pattern and pattern_problem(pattern)  # else: schema's
        if reason:
            yield problem_at(record, ("guideline_patterns", index), f"bad glob {_short(pattern)}: {reason}",
                             hint="guideline patterns are globs relative to the repository root")


# ---------------------------------------------------------------------------------------------
# Checks a schema cannot state: recordings


@dataclass(slots=True)
class _Conversation:
    order: int  # when it was first seen: unanswered calls are reported in this order at the end
    last_step: int | None = None
    open_calls: dict[str, tuple[Record, tuple]] = field(default_factory=dict)  # light record, path
    call_ids: set[str] = field(default_factory=set)


def light_record(record: Record) -> Record:
    """The record without its data: what locating a problem in it takes, kept for later."""
    return Record(record.file, record.line, text=record.text, positions=record.positions)


def _itself(record: Record) -> Record:
    return record


def step_facts(step: dict, text: str | bytes | None, path: tuple = ()) -> tuple[int, tuple | None]:
    """A valid step's stepIndex and tool parts (see _tool_parts)."""
    # Most steps hold no tool parts; the raw line tells so without walking the messages.
    if isinstance(text, bytes) and b'"tool-' not in text:
        return step["stepIndex"], None
    return step["stepIndex"], _tool_parts(step, path)


def _tool_parts(step: dict, path: tuple = ()) -> tuple:
    """(is a call, toolCallId, path) of each tool-call and tool-result part of a valid step."""
    parts = []
    for message_path, message in iter_step_messages(step):
        for index, part in enumerate(message_parts(message)):
            kind = part.get("type")
            if kind == "tool-call" or kind == "tool-result":
                parts.append((kind == "tool-call", part["toolCallId"], path + message_path + ("content", index)))
    return tuple(parts)


class RecordingChecks:
    """Step order and tool-call pairing, per conversation, across the records of one file.

    A conversation-per-line record is one conversation. Step-per-line records are grouped by
    `conversationId` within a window of the `window` most recently active conversations, so
    that memory stays flat however long the file: a conversation that falls out of the window
    has its unanswered calls reported then, and is forgotten. `finish` reports the unanswered
    calls of the others, when no later step can answer them.

    Problems are located in a Record made by `make_record(where)` only when one is found or a
    tool call is left open; `where` is the record itself, or a line of a LineBatch.
    """

    def __init__(self, window: int = CONVERSATION_WINDOW):
        self.window = window
        self._recent: OrderedDict[Any, _Conversation] = OrderedDict()  # least recently active first
        self._started = 0

    def add(self, record: Record, kind: str) -> Iterator[Problem]:
        data = record.data
        if kind == "conversation":
            conversation = _Conversation(0)
            for path, step in iter_steps(data):  # the record outlives its conversation: no copy
                index, parts = step_facts(step, record.text, path)
                yield from _follow(conversation, index, index, _itself, record, path)
                yield from self.add_tool_parts(conversation, parts, _itself, record)
            yield from _unanswered(conversation)
        else:
            index, parts = step_facts(data, record.text)
            conversation, problems = self.add_steps(data.get("conversationId"), index, index,
                                                    light_record, record)
            yield from problems
            yield from self.add_tool_parts(conversation, parts, light_record, record)

    def add_steps(self, conversation_id: Any, first_index: int, last_index: int,
                  make_record: Callable[[Any], Record], where: Any) -> tuple[_Conversation, list[Problem]]:
        """Consecutive step-per-line records of one conversation, from `where` on, whose stepIndex
        increases from first_index to last_index: their conversation, and the problems found."""
        problems: list[Problem] = []
        conversation = self._recent.get(conversation_id)
        if conversation is None:
            conversation = self._begin(conversation_id, problems)
        else:
            self._recent.move_to_end(conversation_id)
        problems += _follow(conversation, first_index, last_index, make_record, where)
        return conversation, problems

    @staticmethod
    def add_tool_parts(conversation: _Conversation, parts: tuple | None,
                       make_record: Callable[[Any], Record], where: Any) -> list[Problem]:
        """Pairs the tool parts of one step (see _tool_parts) with the conversation's calls."""
        problems = []
        record = None  # made once for the step, when first needed
        for is_call, call_id, path in parts or ():
            if is_call:
                record = record or make_record(where)
                if call_id in conversation.call_ids:
                    problems.append(problem_at(
                        record, path + ("toolCallId",), f"duplicate toolCallId {call_id!r}",
                        "warning", "each tool call should have its own id"))
                conversation.call_ids.add(call_id)
                conversation.open_calls[call_id] = (record, path)
            elif conversation.open_calls.pop(call_id, None) is None and call_id not in conversation.call_ids:
                record = record or make_record(where)
                problems.append(problem_at(
                    record, path + ("toolCallId",), f"tool-result {call_id!r} answers no earlier tool-call",
                    hint="a tool result must follow the tool-call with the same toolCallId"))
        return problems

    def finish(self) -> Iterator[Problem]:
        for conversation in sorted(self._recent.values(), key=lambda c: c.order):
            yield from _unanswered(conversation)
        self._recent.clear()

    def _begin(self, conversation_id: Any, problems: list[Problem]) -> _Conversation:
        if len(self._recent) >= self.window:
            _, oldest = self._recent.popitem(last=False)
            problems += _unanswered(oldest)
        conversation = self._recent[conversation_id] = _Conversation(self._started)
        self._started += 1
        return conversation


def _follow(conversation: _Conversation, first_index: int, last_index: int,
            make_record: Callable[[Any], Record], where: Any, path: tuple = ()) -> list[Problem]:
    """The steps first_index..last_index follow the conversation's last one, or a problem."""
    problems = []
    if conversation.last_step is not None and first_index <= conversation.last_step:
        problems.append(problem_at(
            make_record(where), path + ("stepIndex",),
            f"stepIndex {first_index} does not follow {conversation.last_step}",
            hint="steps of a conversation must have increasing stepIndex, in file order"))
    conversation.last_step = last_index
    return problems


def _unanswered(conversation: _Conversation) -> list[Problem]:
    problems = [problem_at(record, path + ("toolCallId",), f"tool-call {call_id!r} is never answered",
                           "warning", "no later tool-result in this conversation has this toolCallId")
                for call_id, (record, path) in conversation.open_calls.items()]
    conversation.open_calls.clear()
    return problems
