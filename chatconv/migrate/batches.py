"""A JSONL file migrated a batch of whole lines at a time, in this process or in worker
processes that are sent each batch's lines (read here, through the file, pipe or standard
input this process opened), migrate them and append them to the new file in turn; results come
back in file order with the file's line numbers. On a Dask cluster (--scheduler) the workers
see none of this machine's files: they send the migrated lines back, and this process writes them.
"""

from __future__ import annotations

from dataclasses import replace
from typing import BinaryIO, Iterator

from ..sources import StdinInput, iter_line_batches
from ..sources.writing import write_all
from ..workers import OrderedPool, worker_context, worker_result
from .lines import MigratedLines, migrate_lines

_BROKEN_HINT = "run again, or with --jobs 1 (e.g. if memory is short); the file was not changed"


class Workers:
    """Migrates JSONL files a batch at a time, in `jobs` worker processes when jobs > 1, else
    in this one. At most two batches per process are in flight (see OrderedPool), so memory
    stays flat in the file size. Use it as a context manager: leaving it ends the processes.
    """

    def __init__(self, jobs: int = 1, scheduler: str | None = None):
        self.jobs = jobs
        self._pool = self._turn = None
        if scheduler is not None:
            from ..cluster import ClusterPool  # here: only a run on a cluster imports Dask

            self._pool = ClusterPool(scheduler)
        elif jobs > 1:
            context = worker_context()
            self._turn = (context.Condition(), context.RawValue("q", 0))
            self._pool = OrderedPool(jobs, _start_worker, (self._turn,), context)

    def __enter__(self) -> Workers:
        return self

    def __exit__(self, *exc_info) -> None:
        if self._pool is not None:
            self._pool.close()

    def migrate(self, file: str, source: BinaryIO | StdinInput, keep_rejects: bool,
                append_to: str | None = None, to_era: str | None = None,
                field_map: dict | None = None) -> Iterator[tuple[int, MigratedLines]]:
        """(input bytes done, result) for each batch of `file`, in order; `source` is open on
        it (or is standard input). With `append_to`, local worker processes append the migrated
        lines to that file themselves, in order, and return results without them; else
        results hold them (on a cluster, always: its workers see no file here). to_era,
        field_map: as for migrate_lines."""
        batches = source.batches() if isinstance(source, StdinInput) else iter_line_batches(source)
        if self._pool is None:
            for first_line, offset, lines in batches:
                yield offset + len(lines), migrate_lines(lines, file, first_line, keep_rejects, to_era, field_map)
            return
        # This process reads the batches, through the stream it opened (a file is never read
        # again by its name: one replaced meanwhile would be read at offsets of another one;
        # standard input and pipes alike), and sends them on, each with the number of its
        # first line; the workers migrate and write the lines.
        if self._turn is None:  # a cluster's: its workers send the lines back
            append_to = None
        else:
            condition, turn = self._turn
            with condition:
                turn.value = 0
        tasks = (((offset + len(lines), first_line), _migrate_file_part,
                  (file, lines, first_line, keep_rejects, batch, append_to, to_era, field_map))
                 for batch, (first_line, offset, lines) in enumerate(batches))
        ordered = self._pool.ordered(tasks)
        try:
            for (done, first_line), future in ordered:
                yield done, worker_result(future, file, "migration", _BROKEN_HINT, first_line)
        finally:
            # Now, not when garbage is collected: a batch still running would write into the
            # file's temporary file after it is removed, or take the next file's turns.
            ordered.close()


_turn: tuple | None = None  # in a worker process: (condition, number of the next batch to write)
_STOPPED = -1  # the turn after a batch that failed: the batches after it write nothing


def _start_worker(turn: tuple) -> None:
    global _turn
    _turn = turn


def _migrate_file_part(file: str, data: bytes, first_line: int, keep_rejects: bool, batch: int,
                       append_to: str | None, to_era: str | None, field_map: dict | None = None) -> MigratedLines:
    """migrate_lines on a batch of a file's lines from line `first_line`; with append_to, the
    lines are appended to that file in the batch's turn, not returned."""
    try:
        result = migrate_lines(data, file, first_line, keep_rejects, to_era, field_map)
    except BaseException:
        if append_to is not None:
            _write_in_turn(batch, None)  # the batches before are written; those after must not be
        raise
    if append_to is None:
        return result
    _write_in_turn(batch, append_to, result.data)
    return replace(result, data=b"")


def _write_in_turn(batch: int, path: str | None, data: bytes = b"") -> None:
    """Wait for this batch's turn, then append `data` to `path` and pass the turn on; with no
    path (the batch failed), stop the batches after it instead."""
    condition, turn = _turn
    with condition:
        condition.wait_for(lambda: turn.value in (batch, _STOPPED))
        if turn.value == _STOPPED:
            return
        turn.value = _STOPPED  # until this batch is written: a failed write stops the batches after it
        try:
            if path is not None:
                try:
                    with open(path, "ab") as out:
                        write_all(out, data)
                except OSError as exc:  # named, so that the main process can tell whose it is
                    raise OSError(exc.errno, exc.strerror, path) from None
                turn.value = batch + 1
        finally:
            condition.notify_all()

