"""Validating files and folders: each file's records checked in order (a JSONL file a batch of
lines at a time, in worker processes when it pays), counted, and merged with the checks across
the records of the file.
"""

from __future__ import annotations

from functools import partial
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Callable, Iterable, Iterator

from ..eras import NEWEST
from ..eras.releases import Release, release_asked
from ..kinds import checked_kind, config_era, is_config_file, is_eval_file_name
from ..pairing import CONVERSATION_WINDOW
from ..problems import Problem, UnreadableInput, UsageError
from ..sources import (BATCH_BYTES, Batch, adapt_record, batch_workers, compression_of, configured_release, discover,
                       empty_file_problem, eval_pattern_config, file_format, holds_no_record, iter_line_batches,
                       iter_records, open_binary, read_as_records, read_by_offset, stream_size)
from .conversations import WITHOUT_DATA, RecordingChecks, RecordSource
from .lines import NOT_A_RECORD, NOT_OURS, LineOptions, StepRun, check_lines, record_entry
from .order import PlaceOrder
from .summary import Summary
from .rendered import RENDERED_FORMATS, ProblemBlock, Rendering
from .rendered import from_wire as rendered_from_wire
from .wire import LineBatch, check_file_lines, check_sent_lines, entries_from_wire

if TYPE_CHECKING:
    from ..workers import OrderedPool



class _Stopped(Exception):
    """--max-errors was reached: the file's reading ends, the problems found are handed on."""


@dataclass
class Validator:
    """Validates files and folders, counting into `summary`; `run` yields each file's problems
    sorted by place, as soon as no later one can precede them.

    JSONL files are checked a batch of lines at a time, by `jobs` worker processes when more
    than one (None: one per core for files of sources.PARALLEL_MIN_BYTES or more); the problems come
    out in line order whatever the number of workers.
    """

    kind: str | None = None
    era: str | None = None  # eval files are checked in this era (an era's name), else their own
    # The AgentV release whose verdicts are given ("4.42.4": eras/releases.py): its era's files,
    # as it checks them; None: each file in its own era, as the era's newest release checks it.
    agentv: str | None = None
    allow_outside_root: bool = False
    max_errors: int | None = None
    skip_unknown: bool = False  # skip named files of unknown kind too, as folders' files are
    jobs: int | None = None
    batch_bytes: int = BATCH_BYTES
    conversation_window: int = CONVERSATION_WINDOW
    field_map: dict | None = None  # fields read from other keys (sources.parse_field_map)
    scheduler: str | None = None  # a Dask scheduler's address: JSONL batches are checked on its cluster
    keep: Callable[[Problem], bool] | None = None  # which problems to report (--select / --ignore); None: all
    # The workers write their problems in this format ("text" or "json": see rendered.Rendering),
    # and `run` yields them as ProblemBlocks; None: every problem a Problem. Not with max_errors,
    # which counts each.
    render: str | None = None
    summary: Summary = field(default_factory=Summary)
    _pool: OrderedPool | None = field(default=None, init=False, repr=False)
    _configs: dict = field(default_factory=dict, init=False, repr=False)  # eval_pattern_config's
    _release: Release | None = field(default=None, init=False, repr=False)  # agentv's

    def __post_init__(self) -> None:
        if self.render not in RENDERED_FORMATS:
            raise UsageError(f"render must be one of {', '.join(map(str, RENDERED_FORMATS))}, not {self.render!r}")
        if self.kind is not None:  # a kind's name or alias; an era's schema forces that era
            self.kind, era = checked_kind(self.kind)
            self.era = self.era or era
        self._release = release_asked(self.agentv, self.era)
        if self._release is not None:
            self.era = self._release.era

    def run(self, paths: Iterable[str | Path]) -> Iterator[Problem | ProblemBlock]:
        """Every problem of `paths`, file by file in the order found, each file's sorted by
        place (file, line, column; see PlaceOrder); with `render`, some of them written in blocks."""
        try:
            for path, explicit in discover(paths):
                yield from self._file(path, explicit)
                if self.summary.stopped:
                    return
        finally:
            self._stop_workers()

    def _file(self, path: str, explicit: bool) -> Iterator[Problem | ProblemBlock]:
        # A config is told by its file's name, once: each record is then checked as one.
        kind = self.kind or ("config" if path != "-" and is_config_file(path) else None)
        rendering = Rendering(self.render, self.keep) if self.render and not self.max_errors else None
        release, era = self._release, self.era
        if release is None and era is None and kind is None:  # the release its config requires, if one
            release = configured_release(path, self._configs)
            era = release.era if release is not None else None
        options = LineOptions(path, kind, explicit, self.skip_unknown, self.allow_outside_root, era,
                              None if kind else self._pattern_era(path, release), rendering, release)
        order = PlaceOrder()
        try:
            yield from self._merge(path, self._batches(options), RecordingChecks(self.conversation_window), order)
        except UnreadableInput as exc:
            self.summary.unreadable += 1
            yield from order.drain()  # those found before it
            for problem in exc.problems:
                self.summary.count(problem)
                yield problem
        except _Stopped:
            pass
        yield from order.drain()

    def _found(self, order: PlaceOrder, problems: Iterable[Problem]) -> None:
        """Count problems as found, held in `order` to be handed on sorted; --max-errors stops here."""
        summary, keep = self.summary, self.keep
        for problem in problems:
            if keep is not None and not keep(problem):  # --select / --ignore: counted as ignored only
                summary.ignored += 1
                continue
            summary.count(problem)
            order.add(problem)
            if self.max_errors and summary.errors >= self.max_errors:
                summary.stopped = True
                raise _Stopped

    def _pattern_era(self, path: str, release: Release | None) -> str | None:
        """The era to check this YAML or JSON file in when its keys tell no kind: its config's,
        when the config's `eval_patterns` name it an eval file; the newest, when its name does
        (kinds.EVAL_FILE_NAMES); else None (it is no eval file)."""
        if path == "-" or file_format(path) == "jsonl":
            return None
        config = eval_pattern_config(path, self._configs)
        if config is not None:
            return config_era(config).NAME
        era = release.era if release is not None else self.era
        return (era or NEWEST.NAME) if is_eval_file_name(path, release) else None

    def _merge(self, path: str, batches: Iterable[tuple[RecordSource, Iterable, tuple | None]],
               checks: RecordingChecks, order: PlaceOrder) -> Iterator[Problem | ProblemBlock]:
        """Count each entry in line order, with the checks across lines; hand on the problems
        no later one can precede, now and then (the rest are the caller's to drain). A batch's
        block of problems written by its worker is counted first: they are its lines' own."""
        summary = self.summary
        found = partial(self._found, order)
        counted = False
        for source, entries, written in batches:
            if written is not None:
                block, ignored = rendered_from_wire(path, written)
                summary.ignored += ignored
                if block is not None:
                    summary.count_block(block)
                    order.add_block(block)
            for where, problems, steps, outcome in entries:
                if outcome is NOT_OURS:  # only ever the file's first record (see record_entry)
                    summary.skipped_files.append(path)  # a folder's file that is not ours
                    return
                if order.due():  # nothing found from here on comes before this record, or an open call
                    start = where[0] if isinstance(where, tuple) else where.line  # a LineSpan, or a Record
                    waiting = checks.earliest_open_line()
                    yield from order.release(path, start if waiting is None else min(start, waiting))
                if not counted:
                    summary.files += 1
                    counted = True
                if outcome is NOT_A_RECORD:
                    found(problems)
                    continue
                summary.records += 1
                if problems:  # most lines have none: no call for them
                    found(problems)
                if steps is not None:
                    self._steps(checks, steps, source, where, found)
            # The batch's entries (a file of errors has a problem on every line) go before the next batch's are made.
            del entries
        if not counted:  # a JSONL file of blank lines
            summary.files += 1
            found([empty_file_problem(path)])
        found(checks.finish())

    def _steps(self, checks: RecordingChecks, run: StepRun, source: RecordSource, where, found) -> None:
        """The checks across lines of a run of steps (a StepRun, or its fields as a worker sent
        them); its first line is counted already."""
        conversation_id, first_index, last_index, count, tool_lines, settled = run
        first = self.summary.records
        conversation, problems = checks.add_steps(conversation_id, first_index, last_index, source, where)
        found(problems)
        if not checks.settle(conversation, settled):
            if tool_lines is None:  # a run that settled: it has none (see check_lines)
                source, tool_lines = source.tool_lines(where, count)
            for offset, tool_where, parts, problems in tool_lines:
                self.summary.records = first + offset  # exact, should --max-errors stop on this line
                found(problems)  # a later line's own (a legacy shape), before its tool parts'
                found(checks.add_tool_parts(conversation, parts, source, tool_where))
        self.summary.records = first + count - 1

    def _batches(self, options: LineOptions) -> Iterator[tuple[RecordSource, Iterable, tuple | None]]:
        """(source, entries, problems written) in order: see check_lines, RecordSource for the
        sources, and rendered.BlockWriter for the problems a worker writes (None: none written)."""
        path = options.file
        if path == "-" or file_format(path) != "jsonl" or self.field_map:
            # Read whole, record by record: a JSON array of records gives one per element; with
            # --field, JSONL lines too (the fast path reads the keys as written).
            split = partial(read_as_records, field_map=self.field_map, kind=options.kind)
            records = (adapt_record(record, self.field_map) for record in iter_records(path, split))
            yield WITHOUT_DATA, (record_entry(record, record, options, first=index == 0)
                                 for index, record in enumerate(records)), None
            return
        with open_binary(path) as stream:
            jobs = batch_workers(stream_size(stream), self.jobs, self.batch_bytes,
                                 compression_of(path) is not None, self.scheduler)
            batches = iter_line_batches(stream, self.batch_bytes)
            if jobs > 1:
                yield from self._checked_by_workers(batches, options, jobs)
                return
            opens_file = True
            for first_line, _, lines in batches:
                yield LineBatch(path, lines, options), check_lines(lines, first_line, options, opens_file), None
                opens_file = opens_file and holds_no_record(lines)

    def _checked_by_workers(self, batches: Iterable[Batch], options: LineOptions,
                            jobs: int) -> Iterator[tuple[LineBatch, list, tuple | None]]:
        """Batches checked by worker processes, handed on in file order (workers.OrderedPool).

        Workers read their batch from the file themselves (cheaper than a pipe); a compressed
        file's batches, which cannot be read by offset, are sent to them. This process keeps
        each batch to locate the few problems found across lines.
        """
        from ..cluster import ordered_pool  # here: a run without workers skips multiprocessing
        from ..workers import worker_result

        if self._pool is None:  # a batch's problems, written (a legacy batch's: a sixth of its size), come back shared
            self._pool = ordered_pool(jobs, self.scheduler, shared_bytes=self.batch_bytes)
        unread: list[UnreadableInput] = []  # compressed data that failed: after the batches before it
        by_offset = read_by_offset(options.file, self.scheduler)
        checked = self._pool.ordered(_worker_tasks(batches, options, unread, by_offset))
        try:
            for (lines, first_line), future in checked:
                entries, written = worker_result(future, options.file, "validation", line=first_line)
                yield LineBatch(options.file, lines, options), entries_from_wire(entries), written
        except UnreadableInput:
            self._stop_workers()  # a worker died: the pool is broken, the next file starts another
            raise
        finally:
            checked.close()  # now: the batches queued are cancelled, those running ended
        if unread:
            raise unread[0]

    def _stop_workers(self) -> None:
        if self._pool is not None:
            self._pool.close()
            self._pool = None


def _worker_tasks(batches: Iterable[Batch], options: LineOptions, unread: list[UnreadableInput],
                  by_offset: bool = True) -> Iterator[tuple]:
    """((the batch's lines, its first line's number), check_file_lines, its arguments) of each
    batch, in order; unless the workers read their batch `by_offset` (sources.read_by_offset),
    check_sent_lines and the lines themselves. A file whose data fails to be read ends the
    tasks there, the failure put in `unread` (the batches in flight are done first)."""
    opens_file = True
    try:
        for first_line, offset, lines in batches:
            if by_offset:
                yield (lines, first_line), check_file_lines, (offset, len(lines), first_line, options, opens_file)
            else:
                yield (lines, first_line), check_sent_lines, (lines, first_line, options, opens_file)
            opens_file = opens_file and holds_no_record(lines)
    except UnreadableInput as exc:
        unread.append(exc)



def validate_path(path: str | Path, kind: str | None = None, **options) -> tuple[list[Problem], Summary]:
    """Every problem of a file or folder, and the counts; `options` are Validator's (e.g. jobs)."""
    validator = Validator(kind=kind, **options)  # era=... forces one
    return list(validator.run([path])), validator.summary
