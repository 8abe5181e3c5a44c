"""The hot path: the lines of a JSONL batch checked one by one, each line's outcome an Entry.

It runs in worker processes (see wire.py) or in this one. A line that passes the fast
schema check costs a parse, a check and a few facts; any other becomes a Record and goes
through check_record. The checks across lines (step order, tool-call pairing) need facts of
every step, in file order: consecutive steps of one conversation are gathered in a StepRun,
which the main process hands to RecordingChecks (see run.Validator), the lines it came from
held in a LineBatch (see wire).
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum
from typing import Any, Iterator, NamedTuple

import orjson

from ..eras.releases import Release
from ..kinds import detect_kind, kind_names
from ..problems import Problem
from ..schemas import fast_validator
from ..sources import Record, is_blank_line, load_json, problem_at
from .conversations import RecordingChecks, ToolPart, step_facts, tool_parts
from .legacy import OUTPUT_ALIASES, legacy_output_column, legacy_output_warning
from .record import check_record
from .rendered import BlockWriter, Rendering

_CHECKED_FURTHER = {"eval-file", "step-record", "conversation"}  # more than the schema to check
# The NamedTuples of the hot path are made with this: their own __new__ is a Python call, which
# would cost checking a few per cent.
_new = tuple.__new__


@dataclass(frozen=True)
class LineOptions:
    """What checking one file's records takes; sent to the worker processes with each batch."""

    file: str
    kind: str | None  # forced with --kind, or "config" for a config file's name; else told from each record
    explicit: bool  # named on the command line, rather than found in a folder
    skip_unknown: bool
    allow_outside_root: bool
    era: str | None = None  # the era eval files are checked in (--era), else each file's own
    # The era of a file no era recognises that a config's `eval_patterns` names an eval file
    # (the config's era): it is checked as such, and told what it lacks.
    pattern_era: str | None = None
    rendering: Rendering | None = None  # a worker writes its batch's own problems so (see rendered)
    release: Release | None = None  # the AgentV release whose verdict is given (--agentv), else the era's newest


class LineSpan(NamedTuple):
    """A line of a batch: its number in the file, where it starts and ends in the batch's bytes,
    and for a step checked as a Record, its positions (see record_entry), or for a step upgraded
    on the hot path, the aliases of the upgrade (see legacy)."""

    number: int
    start: int
    end: int
    positions: dict | None = None
    aliases: dict | None = None


class ToolLine(NamedTuple):
    """A line of a StepRun, after its first, that holds tool parts or problems of its own (a
    legacy shape upgraded on the hot path; see legacy), or the first line, with tool parts."""

    offset: int  # lines after the run's first
    where: LineSpan
    parts: tuple[ToolPart, ...] | None
    problems: tuple[Problem, ...] = ()  # reported before the checks of its tool parts


class StepRun(NamedTuple):
    """Consecutive lines that are steps of one conversation with increasing stepIndex: what the
    checks across lines need of them. The first line's own problems are its Entry's, a later
    line's its ToolLine's."""

    conversation_id: Any
    first_index: int
    last_index: int
    count: int  # lines in the run
    tool_lines: tuple[ToolLine, ...] | None  # None when it settles: see check_lines
    # The toolCallIds its tool parts call, when they settle among themselves (see _settles):
    # the main process then pairs none of them, unless one was called before the run.
    settled: tuple | None = None


class Outcome(Enum):
    """What the line of an Entry is, for counting (members, unlike None, say so by name)."""

    RECORD = "a record: counted, its problems reported"
    NOT_A_RECORD = "a line that could not be read as a record (invalid JSON): its problem reported"
    NOT_OURS = "the file's first record, of unknown kind: the file is skipped (the only entry)"


RECORD, NOT_A_RECORD, NOT_OURS = Outcome.RECORD, Outcome.NOT_A_RECORD, Outcome.NOT_OURS


class Entry(NamedTuple):
    """The outcome of one line, or of a StepRun, in line order (see check_lines)."""

    where: Any  # a LineSpan of a batch (LineBatch makes its Record), or a Record read whole
    problems: tuple[Problem, ...]  # mostly none
    steps: StepRun | None = None
    outcome: Outcome = RECORD


def record_entry(record: Record, where: Any, options: LineOptions, first: bool) -> Entry:
    """The Entry of one record read whole.

    Only the file's `first` record tells that a file found in a folder (or any file, with
    --skip-unknown) is not ours; a later record of unknown kind is an error, as in a named file.
    The record's problems are put in order of place here, the one place they are.
    """
    if record.error:
        return Entry(where, (record.error,), None, NOT_A_RECORD)
    kind = options.kind or detect_kind(record.data)  # a config file has its kind in options
    era = options.era
    if kind is None and options.pattern_era is not None:
        kind, era = "eval-file", era or options.pattern_era
    if kind is None and era is not None and options.explicit and not options.skip_unknown:
        kind = "eval-file"  # a file named with --era is an eval file of that era, whatever its keys
    if kind is None and first and (options.skip_unknown or not options.explicit):
        return Entry(where, (), None, NOT_OURS)
    if kind is None:
        unknown = problem_at(record, (), "cannot tell what kind of record this is",
                             hint=f"pass --kind (one of: {', '.join(kind_names())})", code="unknown-kind")
        return Entry(where, _by_place((*record.problems, unknown)))
    step = _StepCollector()
    problems = _by_place((*record.problems, *check_record(record, kind, step, options.allow_outside_root, era,
                                                          options.release)))
    if step.facts is None:
        return Entry(where, problems)
    index, parts = step.facts
    if parts and (record.positions is not None or record.aliases) and isinstance(where, LineSpan):
        # Located already, or with the paths of an upgrade (check_schema), which the text alone
        # does not give: the tool parts' problems are located as in the record.
        where = where._replace(positions=record.positions, aliases=record.aliases)
    tool_lines = (ToolLine(0, where, parts, ()),) if parts else ()
    return Entry(where, problems, StepRun(step.conversation_id, index, index, 1, tool_lines))


def _by_place(problems: tuple[Problem, ...]) -> tuple[Problem, ...]:
    # Most records have no problem: a conversation record comes here whether or not it has one.
    return tuple(sorted(problems, key=Problem.place.fget)) if len(problems) > 1 else problems


class _StepCollector:
    """The `checks` of check_record for record_entry: a step-per-line record's facts are kept
    for the checks across lines, which the caller runs; a conversation is checked whole here."""

    conversation_id: Any = None
    facts: tuple[int, tuple[ToolPart, ...] | None] | None = None  # step_facts of a step-per-line record

    def add(self, record: Record, kind: str) -> Iterator[Problem]:
        if kind == "conversation":
            return RecordingChecks().add(record, kind)
        self.conversation_id = record.data.get("conversationId")
        self.facts = step_facts(record.data)
        return iter(())


def check_lines(lines: bytes, first_line: int, options: LineOptions, opens_file: bool,
                written: BlockWriter | None = None, settle: bool = True) -> list[Entry]:
    """The Entry of each non-blank line of `lines` (whole JSONL lines, from line `first_line`),
    a StepRun's lines sharing one; `opens_file` when no record of the file comes before them
    (see holds_no_record). The file's first record, of unknown kind, may make the file NOT_OURS:
    that entry is the only one.

    With `written`, the lines' own problems are written into it as each line is read (in line
    order, each line's in order of place), and left out of the entries.

    A run of steps whose tool calls settle among themselves (see _settles) has no tool lines
    (None) but the ids it calls (StepRun.settled), unless `settle` is False: most runs settle,
    and the checks across lines need no more of them (LineBatch.tool_lines reads them again).
    """
    file, forced_kind = options.file, options.kind
    loads, is_step = orjson.loads, fast_validator("step-record").is_valid
    take = written.take if written is not None else None
    legacy = None  # the file's legacy-shape warning, at no place yet: once a line has the shape
    entries: list[Entry] = []
    # The StepRun being gathered, in locals (the hot path makes no object for it): the LineSpan
    # of its first line (None when there is none), then its fields; its tool lines' fields, and
    # the ids it calls (see _settles; None once they cannot settle).
    run_where = run_own = run_id = run_first = run_last = run_calls = None
    run_count, run_tools = 0, []
    end = 0
    for number, line in enumerate(lines.split(b"\n"), first_line):
        start, end = end, end + len(line) + 1
        if not line:  # an empty line, no record: told without the error orjson makes of it (2 µs)
            continue
        try:
            data = loads(line)
        except orjson.JSONDecodeError:
            # Blank lines are no records, nor is a line that holds just a BOM (as migrate says).
            if not is_blank_line(line):
                if run_where is not None:
                    entries.append(_run_entry(run_where, run_own, run_id, run_first, run_last, run_count, run_tools,
                                              run_calls))
                    run_where = None
                entries.append(_taken(record_entry(load_json(lines[start:end], file, number),
                                                   LineSpan(number, start, end), options, opens_file and not entries),
                                      take))  # read here when after a BOM
            continue
        if forced_kind is None and data.__class__ is dict and "stepIndex" in data and "steps" not in data:
            kind = "step-record"  # what detect_kind says, told without a call: most lines are steps
        else:
            kind = forced_kind or detect_kind(data)
        if kind == "step-record":
            # A one-message output is never valid: its record goes to legacy without a first check.
            one_message = data.__class__ is dict and data.get("output").__class__ is dict
            if not one_message and is_step(data):
                own, aliases = (), None
            elif one_message and (legacy or (legacy := legacy_output_warning(file))) \
                    and (column := legacy_output_column(data, line, is_step)) is not None:
                # A step as valid ones are, with its warning: written at once (it is most lines').
                aliases = OUTPUT_ALIASES
                if written is not None and written.take_at(legacy, number, column):
                    own = ()
                else:
                    own = (legacy.at(number, column),)
            else:
                own = None
        else:
            own = None
        if own is not None:
            conversation_id, index = data.get("conversationId"), data["stepIndex"]
            parts = tool_parts(data)  # walked, whatever the text says (see step_facts)
            if run_where is None or conversation_id != run_id or index <= run_last:  # a new run
                if run_where is not None:
                    entries.append(_run_entry(run_where, run_own, run_id, run_first, run_last, run_count, run_tools,
                                              run_calls))
                run_where, run_own = _new(LineSpan, (number, start, end, None, aliases)), own
                run_id, run_first, run_count = conversation_id, index, 0
                run_tools, run_calls = [], {} if settle else None
                own = ()  # the first line's own problems are its Entry's
            if parts or own:
                run_tools.append((run_count, number, start, end, aliases, parts, own))
                if run_calls is not None and (own or not _settles(run_calls, parts)):
                    run_calls = None
            run_last = index
            run_count += 1
            continue
        if run_where is not None:
            entries.append(_run_entry(run_where, run_own, run_id, run_first, run_last, run_count, run_tools,
                                      run_calls))
            run_where = None
        if kind is not None and kind not in _CHECKED_FURTHER and fast_validator(kind).is_valid(data):
            entries.append(Entry(LineSpan(number, start, end), ()))
            continue
        entries.append(_taken(record_entry(Record(file, number, data, text=lines[start:end]),
                                           LineSpan(number, start, end), options, opens_file and not entries), take))
        if entries[-1].outcome is NOT_OURS:
            return entries  # the file is skipped: the rest of it does not matter
    if run_where is not None:
        entries.append(_run_entry(run_where, run_own, run_id, run_first, run_last, run_count, run_tools, run_calls))
    return entries


def _taken(entry: Entry, take) -> Entry:
    """The entry, its problems written by `take` (BlockWriter.take; None: none written)."""
    if take is None or not entry.problems:
        return entry
    return entry._replace(problems=take(entry.problems))


def _run_entry(where: LineSpan, problems: tuple[Problem, ...], conversation_id: Any, first_index: int,
               last_index: int, count: int, tool_lines: list[tuple], calls: dict | None) -> Entry:
    """The Entry of a run: `tool_lines` as the fields of each ToolLine, and its LineSpan's;
    `calls` as _settles left them (None: they do not settle)."""
    if calls is not None and all(calls.values()):
        run = (conversation_id, first_index, last_index, count, None, tuple(calls))
    else:
        tool_lines = tuple([_new(ToolLine, (offset, _new(LineSpan, (number, start, end, None, aliases)), parts, own))
                            for offset, number, start, end, aliases, parts, own in tool_lines])
        run = (conversation_id, first_index, last_index, count, tool_lines, None)
    return _new(Entry, (where, problems, _new(StepRun, run), RECORD))


def _settles(calls: dict, parts: tuple[ToolPart, ...]) -> bool:
    """Note a line's tool parts in `calls` (id: answered yet), the run's so far; False when the
    run's cannot settle among themselves. They settle when each id is called once, every call
    is answered, and every result answers a call before it in the run (or repeats an answer),
    in lines without problems of their own. Pairing such a run finds no problem and leaves no
    call open, whatever came before, unless an id was called before it (CallLedger.settle), and
    it is paired so in the main process, not part by part. Most runs settle: a tool's result
    comes in the step of its call."""
    for is_call, call_id, _ in parts:
        if is_call:
            if call_id in calls:
                return False
            calls[call_id] = False
        elif call_id in calls:
            calls[call_id] = True
        else:
            return False
    return True
