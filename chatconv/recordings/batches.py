"""A recording's records shared out to worker processes for `text`, `tools`, `dataset` and
`export` (--jobs), as validate, migrate and import share theirs: a JSONL file of more than a
batch is cut into batches of whole lines, each turned by a worker into what the command needs
of it (output bytes, problems, facts), handed back in file order (workers.OrderedPool).

Every JSONL file goes through the same batches, by workers or by this process, so the output
is the same whatever the number of workers. Other files (JSON, YAML, standard input) are read
record by record here: they are read whole, or cannot be cut.
"""

from __future__ import annotations

from itertools import chain
from typing import Any, BinaryIO, Callable, Iterable, Iterator

from ..problems import UnreadableInput
from ..sources import (BATCH_BYTES, Record, batch_workers, compression_of, cycle_collector_paused, empty_file_problem,
                       file_format, is_blank_line, is_url, iter_line_batches, iter_records, load_json, open_binary,
                       open_raw, read_batch, read_by_offset, stream_size)

# ((record, its byte offset in the file, or None when it cannot be read again there), ..., settings)
# -> results: a command's work on some records (a batch's, or one read whole), in a worker or here.
RecordWork = Callable[[Iterable[tuple[Record, Any]], Any], list]

JOBS_HELP = ("Worker processes that read JSONL files (output is the same for any N). "
             "[default: one per core for files of 16 MiB or more, else 1]")


def batch_records(file: str, first_line: int, offset: int, data: bytes) -> Iterator[tuple[Record, int]]:
    """(Record, byte offset in the file) of each line of a batch that is not blank, as iter_jsonl
    reads them (each line with its newline: a cut line's problem is located as validate locates
    it); one at a time, so that the records of a batch are not all held at once."""
    start, number, size = 0, first_line, len(data)
    while start < size:
        end = data.find(b"\n", start) + 1 or size
        line = data[start:end]
        if not is_blank_line(line):
            yield load_json(line, file, number), offset + start
        number += 1
        start = end


def record_at(file: str, offset: int, line: int, stream: BinaryIO | None = None) -> Record:
    """The record of the JSONL line at `offset` of `file` (numbered `line`), read again (from
    `stream`, the file open, when given)."""
    if stream is None:
        with open_raw(file) as stream:
            return record_at(file, offset, line, stream)
    stream.seek(offset)
    return load_json(stream.readline(), file, line)


def _work_batch(work: RecordWork, file: str, first_line: int, offset: int, data: bytes | int,
                settings: Any) -> tuple[bool, list]:
    """In a worker (or here): whether the batch holds a record, and work's results on its records.
    `data`: the batch's lines, or their length, for the worker to read them from the file itself
    (one read, where a pipe costs this process a pickle and a copy of each batch)."""
    if data.__class__ is int:
        data = read_batch(file, offset, data)
    # Parsed JSON makes no reference cycles, but its many objects set off the cycle collector
    # again and again (a third of the time of a batch): it waits until the batch is done.
    with cycle_collector_paused():
        records = batch_records(file, first_line, offset, data)
        first = next(records, None)
        if first is None:
            return False, work([], settings)
        return True, work(chain((first,), records), settings)


class RecordRunner:
    """Runs a command's `work` over each record of its files, in file order; one pool of
    workers for the whole run, started when a file first needs it. Use as a context manager."""

    def __init__(self, jobs: int | None = None, batch_bytes: int = BATCH_BYTES, scheduler: str | None = None):
        self.jobs = jobs
        self.batch_bytes = batch_bytes
        self.scheduler = scheduler  # a Dask scheduler's address: the batches go to its cluster
        self._pool = None

    def __enter__(self) -> "RecordRunner":
        return self

    def __exit__(self, *exc_info) -> None:
        if self._pool is not None:
            self._pool.close()
            self._pool = None

    def results(self, file: str, work: RecordWork, settings: Any, split: Callable[[Any], bool] | None = None,
                reads_again: bool = False) -> Iterator[tuple[Record | None, Any]]:
        """(a Record or None, a result of work) for the records of `file`, in order: the Record
        is given with the results of a record read here whole (its offset is then None), None
        with those of a JSONL file's batch (its lines are read again with record_at). An empty
        JSONL file gives its one record, its empty-file error. Raises UnreadableInput when the
        file cannot be read. A compressed file's lines cannot be read again by offset, and an
        object's (a URL's) would be read again a block at a time, a request each: for a command
        that `reads_again`, each is read record by record here, as standard input is."""
        if file == "-" or file_format(file) != "jsonl" or \
                (reads_again and (compression_of(file) is not None or is_url(file))):
            for record in iter_records(file, split):
                for result in work([(record, None)], settings):
                    yield record, result
            return
        empty = True
        with open_binary(file) as stream:
            batches = iter_line_batches(stream, self.batch_bytes)
            jobs = batch_workers(stream_size(stream), self.jobs, self.batch_bytes,
                                 compression_of(file) is not None, self.scheduler)
            if jobs > 1:
                chunks = self._by_workers(file, batches, work, settings, jobs)
            else:
                chunks = (_work_batch(work, file, batch.first_line, batch.offset, batch.data, settings)
                          for batch in batches)
            for any_record, chunk in chunks:
                empty = empty and not any_record
                for result in chunk:
                    yield None, result
        if empty:
            record = Record(file, 1, error=empty_file_problem(file))
            for result in work([(record, None)], settings):
                yield record, result

    def _by_workers(self, file: str, batches, work: RecordWork, settings: Any, jobs: int) -> Iterator[tuple]:
        from ..cluster import ordered_pool  # here: a run without workers skips multiprocessing
        from ..workers import worker_result

        if self._pool is None:
            self._pool = ordered_pool(jobs, self.scheduler)
        # Workers read their batch themselves where they can, as validate's do (read_by_offset).
        by_offset = read_by_offset(file, self.scheduler)
        tasks = ((batch.first_line, _work_batch, (work, file, batch.first_line, batch.offset,
                                                  len(batch.data) if by_offset else batch.data, settings))
                 for batch in batches)
        ordered = self._pool.ordered(tasks)
        try:
            for first_line, future in ordered:
                yield worker_result(future, file, "reading", line=first_line)
        except UnreadableInput:
            self._pool.close()  # a worker died: the pool is broken, the next file starts another
            self._pool = None
            raise
        finally:
            ordered.close()
