"""`chatconv import` over files: each file's records through the Importer (importing.py), a JSONL
file of more than a batch by worker processes, a batch of lines each, with the same lines and
problems as one process gives.

What import carries from record to record (a conversation's tool names and its next step) is
the main process's. A worker imports its batch with a state of its own, empty at the start. When
no conversation is read by two records of the batch (fine-tuning lines, most logs), it says what
the whole batch read, wrote and found, and each conversation's state after it; the main process
takes all of it when it knows none of those conversations (then the worker started each as the
main process would), and otherwise reads the batch again itself. In a batch where a conversation
is read twice, the worker says it of each record, and the main process takes a record's result
when none of its conversations was read before, in the batch or earlier, and reads the others
again itself, with its own state. The workers are started once, for the first file that needs
them, and serve every file after it.
"""

from __future__ import annotations

import io
from typing import TYPE_CHECKING, Iterable, Iterator, Sequence

from ..handback import hand_back
from ..problems import ChatconvError, Problem, UnreadableInput, UsageError
from ..sources import (BATCH_BYTES, DATA_SUFFIXES, Batch, FieldMap, Record, batch_workers, compression_of,
                       cycle_collector_paused, discover, file_format, iter_jsonl, iter_line_batches, open_binary,
                       read_batch, read_by_offset, stored_size)
from .import_state import ImportState
from .importing import ImportRun, Importer
from .registry import OWN_SUFFIXES

if TYPE_CHECKING:
    from ..cluster import ClusterPool
    from ..workers import OrderedPool


def import_records(paths: Sequence[str], format_name: str | None = None, conversations: bool = False,
                   run: ImportRun | None = None, field_map: FieldMap | None = None,
                   jobs: int | None = 1, batch_bytes: int = BATCH_BYTES) -> Iterator[bytes]:
    """Each line (without its newline) of chatconv recordings made from the records of `paths`.

    Step records, one per line, or with `conversations` one conversation per line; `field_map`
    moves a record's keys before its format is told (sources.adapt). Problems (warnings, and the
    errors of conversations left out) go to `run.problems`; a path that cannot be read raises
    UnreadableInput. `jobs`: worker processes for JSONL files (None: one per core for files of
    16 MiB or more), each given batches of about `batch_bytes` of lines; the lines are the same
    whatever the number.
    """
    for chunk in import_chunks(paths, format_name, conversations, run, field_map, jobs, batch_bytes):
        yield from chunk[:-1].split(b"\n")


def import_chunks(paths: Sequence[str], format_name: str | None = None, conversations: bool = False,
                  run: ImportRun | None = None, field_map: FieldMap | None = None,
                  jobs: int | None = 1, batch_bytes: int = BATCH_BYTES,
                  unreadable: list[Problem] | None = None, scheduler: str | None = None) -> Iterator[bytes]:
    """The lines of import_records, each ending in a newline, several to a chunk (a record's, or
    a batch's): what `chatconv import` writes, in as few writes as the lines come. With an
    `unreadable` list, a file that cannot be read (or read on) goes there and the next is read,
    as the other commands do; else its UnreadableInput ends the import. `scheduler`: a Dask
    scheduler's address, whose cluster's workers are sent the JSONL files' batches."""
    importer = Importer(format_name, conversations, field_map, run if run is not None else ImportRun())
    pool: OrderedPool | ClusterPool | None = None  # started for the first file that needs workers (their number is the run's)
    try:
        for file, _ in discover(paths, DATA_SUFFIXES | OWN_SUFFIXES):
            try:
                workers = _jobs_for(importer, file, jobs, batch_bytes, scheduler)
                if workers > 1:
                    if pool is None:
                        from ..cluster import ordered_pool  # here: a run without workers skips multiprocessing
                        pool = ordered_pool(workers, scheduler, shared_bytes=4 * batch_bytes)  # a batch's lines: ~1.3x its size
                    yield from import_in_workers(importer, file, pool, batch_bytes, scheduler)
                    continue
                for record in importer.records(file):
                    yield from _chunk_of(importer, record)
            except UnreadableInput as exc:  # the lines before it are written
                if unreadable is None:
                    raise
                unreadable.extend(exc.problems)
    finally:
        if pool is not None:
            pool.close()


def _chunk_of(importer: Importer, record: Record) -> Iterator[bytes]:
    """A record's lines, each ending in a newline, in one chunk (none when it has no line)."""
    lines = list(importer.lines_of(record))
    if lines:
        yield b"\n".join(lines) + b"\n"


def _jobs_for(importer: Importer, file: str, jobs: int | None, batch_bytes: int, scheduler: str | None) -> int:
    """Workers for a file: JSONL files of more than one batch only (others are read whole, or by
    their format's own reader); on a cluster, every JSONL file's."""
    if (jobs == 1 and scheduler is None) or file == "-" or file_format(file) != "jsonl" or \
            importer.own_reader(file) is not None:
        return 1
    return batch_workers(stored_size(file), jobs, batch_bytes, compression_of(file) is not None, scheduler)


def import_paths(paths: Sequence[str], format_name: str | None = None, conversations: bool = False,
                 problems: list[Problem] | None = None) -> list[dict]:
    """The library's import: chatconv's records made of `paths` (step records, or conversations).

    Problems are appended to `problems`; without a list, any error raises ChatconvError."""
    import orjson

    if not paths:
        raise UsageError("name at least one file to import")
    run = ImportRun()
    records = [orjson.loads(line) for line in import_records(paths, format_name, conversations, run)]
    if problems is None and any(p.is_error for p in run.problems):
        raise ChatconvError([p for p in run.problems if p.is_error])
    if problems is not None:
        problems.extend(run.problems)
    return records


# What a worker says of a batch none of whose conversations two records read: the ids of the
# conversations read, and their state after the batch, each in the order read (the tool names and
# next step of those that have them, by id: ImportState.add_new); (records, conversations, steps)
# counted; formats read as {name: count}; problems.
BatchResult = tuple[list[str], tuple[dict, dict], tuple[int, int, int], dict[str, int], list]
# What it says of each record of another batch: (line, end of its lines in the batch's blob, the
# conversation ids it read, each id's state after it, counts, formats, problems), in the same shapes.
RecordResult = tuple[int, int, tuple, tuple, tuple[int, int, int], tuple, list]


def import_in_workers(importer: Importer, file: str, pool: OrderedPool | ClusterPool, batch_bytes: int,
                      scheduler: str | None = None) -> Iterator[bytes]:
    """The chunks of `file` as import_chunks gives them, made by the workers of `pool` (the
    cluster's of `scheduler`, when it is one)."""
    from ..workers import worker_result

    settings = (importer.format_name, importer.conversations, importer.field_map)
    unread: list[UnreadableInput] = []  # compressed data that failed: raised after the batches before it
    # A worker reads its batch from the file when it can (sources.read_by_offset); else it is sent.
    # This process reads them too: it numbers the lines, and reads a batch again when it must.
    by_offset = read_by_offset(file, scheduler)
    with open_binary(file) as source:
        tasks = ((batch, _import_file_part, (file, batch.first_line, batch.offset, len(batch.data), settings))
                 if by_offset else (batch, _import_batch, (file, batch.first_line, batch.data, settings))
                 for batch in _until_unreadable(iter_line_batches(source, batch_bytes), unread))
        for batch, future in pool.ordered(tasks):
            blob, whole, results = worker_result(future, file, "import", line=batch.first_line)
            if results is not None:
                yield from _taken(importer, file, batch, blob, results)
            elif importer.state.knows_any(whole[0]):  # a conversation of an earlier batch goes on
                for record in iter_jsonl(io.BytesIO(batch.data), file, batch.first_line):
                    yield from _chunk_of(importer, record)
            else:
                _take_batch(importer, whole)
                if blob:
                    yield blob
    if unread:
        raise unread[0]


def _until_unreadable(batches: Iterator[Batch], unread: list[UnreadableInput]) -> Iterator[Batch]:
    try:
        yield from batches
    except UnreadableInput as exc:
        unread.append(exc)


def _taken(importer: Importer, file: str, batch: Batch, blob: bytes, results: list[RecordResult]) -> Iterator[bytes]:
    """The batch's chunks: the worker's lines for each record none of whose conversations was read
    before (in the batch or earlier), as long runs of `blob` (most batches: all of it); the other
    records read again here, with this process's state."""
    lines_of_batch: list[bytes] | None = None
    start = run_start = 0  # the record's lines in blob start at `start`; the run not yet given, at `run_start`
    seen: set = set()  # the ids the batch's records read
    for result in results:
        line, end, ids = result[:3]
        continued = not seen.isdisjoint(ids)
        seen.update(ids)
        if continued or any(importer.state.knows(i) for i in ids):
            if start > run_start:
                yield blob[run_start:start]
            run_start = end  # the worker's lines of this record are not taken
            if lines_of_batch is None:  # read again here: rare
                lines_of_batch = batch.data.split(b"\n")
            [record] = iter_jsonl(io.BytesIO(lines_of_batch[line - batch.first_line]), file, line)
            yield from _chunk_of(importer, record)
        else:
            _take(importer, result)
        start = end
    if start > run_start:
        yield blob[run_start:start]


def _take_batch(importer: Importer, result: BatchResult) -> None:
    """A worker's batch, none of whose conversations this process knows: its counts, formats and
    problems, and its conversations' state."""
    _, after, counts, formats, problems = result
    _add_to_run(importer.run, counts, formats.items(), problems)
    importer.state.add_new(*after)


def _take(importer: Importer, result: RecordResult) -> None:
    """A worker's record: its counts, formats and problems, and its conversations' state after it."""
    state = importer.state
    _, _, _, after, counts, formats, problems = result
    _add_to_run(importer.run, counts, formats, problems)
    for conversation_id, names, next_step in after:
        if names is not None:
            state.add_names(conversation_id, names)
        if next_step is not None:
            state.set_next_step(conversation_id, next_step)


def _add_to_run(run: ImportRun, counts: tuple[int, int, int], formats: Iterable[tuple[str, int]],
                problems: list[Problem]) -> None:
    """What a worker counted and found, added to this process's run."""
    run.records, run.conversations, run.steps = (run.records + counts[0], run.conversations + counts[1],
                                                 run.steps + counts[2])
    for name, count in formats:
        run.formats[name] = run.formats.get(name, 0) + count
    run.problems.extend(problems)


def _import_file_part(file: str, first_line: int, offset: int, length: int, settings: tuple
                      ) -> tuple[bytes, BatchResult | None, list[RecordResult] | None]:
    """_import_batch in a worker that reads the batch from the file itself."""
    return _import_batch(file, first_line, read_batch(file, offset, length), settings)


def _import_batch(file: str, first_line: int, data: bytes, settings: tuple
                  ) -> tuple[bytes, BatchResult | None, list[RecordResult] | None]:
    """In a worker: the lines made of a batch of whole lines from line `first_line`, joined, and
    what the batch did as a whole (BatchResult) or, when two of its records read one
    conversation, each record's result."""
    with cycle_collector_paused():  # (see sources.cycle_collector_paused: a fifth of a batch's time)
        return _imported_batch(file, first_line, data, settings)


def _imported_batch(file: str, first_line: int, data: bytes, settings: tuple
                    ) -> tuple[bytes, BatchResult | None, list[RecordResult] | None]:
    format_name, conversations, field_map = settings
    importer = Importer(format_name, conversations, field_map, ImportRun(), ImportState())
    out: list[bytes] = []
    touched: list[str] = []
    seen: set[str] = set()
    for record in iter_jsonl(io.BytesIO(data), file, first_line):
        out.extend(importer.lines_of(record, touched))
        seen.update(touched[len(seen):])  # the ids this record read (every id before them was new)
        if len(seen) < len(touched):  # a conversation goes on from record to record: say it of each
            return _import_records(importer, file, first_line, data)
    run, state = importer.run, importer.state
    after = (dict(state.names), dict(state.next_steps))  # (none was read twice: in the order read)
    return _joined(out), (touched, after, (run.records, run.conversations, run.steps), run.formats, run.problems), None


def _import_records(importer: Importer, file: str, first_line: int, data: bytes
                    ) -> tuple[bytes, None, list[RecordResult]]:
    """The batch's lines, and each record's result: read again from the start, with an empty state."""
    state, out, results, end = ImportState(), [], [], 0
    importer.state = state
    for record in iter_jsonl(io.BytesIO(data), file, first_line):
        run = importer.run = ImportRun()
        ids: list[str] = []
        for made in importer.lines_of(record, ids):
            out.append(made)
            end += len(made) + 1
        after = tuple((i, dict(state.names[i]) if i in state.names else None, state.next_steps.get(i)) for i in ids)
        results.append((record.line, end, tuple(ids), after, (run.records, run.conversations, run.steps),
                        tuple(run.formats.items()), run.problems))
    return _joined(out), None, results


def _joined(lines: list[bytes]) -> bytes:
    """The lines, each with its newline, as a worker hands them back to this process (the list
    is used up: an empty line at its end gives the last newline, in one join and no copy)."""
    lines.append(b"")
    return hand_back(b"\n".join(lines))
