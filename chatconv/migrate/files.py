"""One file migrated (`-` is standard input): to a new file swapped in atomically, to a stream,
or only counted; JSONL a batch at a time (see batches.py), YAML and JSON whole. Rejected
records go to a rejects file, made durable before the file they leave is replaced. A file
named .gz or .zst is written compressed so; a stream gets the input's compression.
"""

from __future__ import annotations

import errno
import os
import sys
from contextlib import nullcontext
from pathlib import Path
from typing import BinaryIO, Callable, Iterable, Iterator

from ..problems import Problem, UnreadableInput
from ..sources import (CompressedWriter, compression_of, file_format, is_url, open_binary, read_stdin, read_whole,
                       stream_etag)
from ..sources.writing import write_all
from .atomic import Replacing, unwritable
from .atomic_object import replacing
from .batches import Workers
from .documents import migrate_document
from .guard import check_unchanged, gained_since, hold_input, release_input
from .lines import LineRejected, Reject, Tally, migrate_lines


def migrate_file(path: str, output: Path | str | BinaryIO | None, *, backup: bool = False,
                 rejects: BinaryIO | None = None, workers: Workers | None = None,
                 progress: Callable[[int], None] | None = None, to_era: str | None = None,
                 field_map: dict | None = None) -> Tally:
    """Migrate one file (`-` is standard input) to `output` and return its counts.

    output: a path (written through AtomicFile; the input itself for an in-place run, which
    is left alone when nothing changes), an object's URL (through AtomicObject; the input's,
    in place), a binary stream, or None to only count (dry run).
    rejects: a binary stream that receives a JSON line per rejected record (see Reject); it
    is fsynced before the file is replaced. Without it, a bad record raises LineRejected and
    leaves `output` untouched. progress, if given, is called with the input bytes read so far.
    to_era: an eval file moves forward to that era (a name of eras.era_names()), not to the newest.
    field_map: fields read from other keys (sources.parse_field_map), migrated under their own keys.
    Raises UnreadableInput when the file cannot be read.
    """
    in_place = isinstance(output, Path) and path != "-" and output.exists() and os.path.samefile(path, output) \
        or isinstance(output, str) and output == path
    keep_rejects = rejects is not None
    tally = Tally()
    with _open_input(path) as source:
        # One in-place run per file, and none over a file that changed while it was read (guard.py;
        # an object's ETag, AtomicObject).
        held = hold_input(path, source, str(output)) if in_place and isinstance(output, Path) else None
        # run.jsonl.gz stays gzip; a folder missing or read-only is said of the target (AtomicFile)
        sink = replacing(output, backup, compression_of(output), etag=stream_etag(source) if in_place else None) \
            if isinstance(output, (Path, str)) else None
        # A stream (standard output, a device) is written compressed as the input is.
        kind = compression_of(path)
        writer = CompressedWriter(output, kind) if kind and output is not None and sink is None else None
        results: Iterable = ()
        try:
            stdin = read_stdin(source) if path == "-" else None  # its format told by its first lines
            fmt = stdin.format if stdin is not None else file_format(path)
            if fmt == "jsonl":
                # Worker processes write straight into a file (a dry run's into nowhere); what
                # goes to a stream, or is compressed, comes back to be written here.
                append_to = (sink.temporary if sink is not None and not sink.compression else
                             os.devnull if output is None else None)
                results = (workers or Workers()).migrate(path, stdin or source, keep_rejects, append_to, to_era,
                                                                 field_map)
            else:
                fmt, data = stdin.document() if stdin is not None else (fmt, read_whole(source, path))
                results = [(len(data), migrate_document(data, path, fmt, keep_rejects, to_era, field_map))]
            for done, result in _unless_unwritable(results, sink):
                tally.add(result.tally)
                if sink is not None:
                    sink.write(result.data)
                elif output is not None:
                    _write_stream(output, result.data, writer)
                if result.rejects:
                    _set_aside(rejects, result.rejects)
                if progress is not None:  # against the file's size: a compressed file's bytes read
                    progress(source.compressed_tell() if hasattr(source, "compressed_tell") else done)
            if writer is not None:
                _write_stream(output, None, writer)  # the end of the compressed data
            if sink is not None and _should_commit(fmt, tally, in_place):
                if backup and _exists(f"{sink.target}.bak"):
                    raise UnreadableInput(Problem(
                        str(output), None, None, "$", f"{sink.target}.bak is an earlier backup, which --backup "
                        "would replace", "error", "move it away and run again; the file was not changed",
                        code="unreadable-file"))
                if rejects is not None:
                    _set_aside(rejects, [], sync=True)  # the rejected lines are safe before they leave the file
                if held is not None:
                    check_unchanged(held)  # last: the new file replaces exactly what was read
                try:
                    sink.commit()
                except OSError as exc:
                    raise unwritable(output, exc) from None
                if held is not None and fmt == "jsonl" and compression_of(path) is None:
                    _carry_over(gained_since(held, source), path, output, tally, to_era, field_map)
        finally:
            if hasattr(results, "close"):
                results.close()  # the workers' batches are over before the temporary file goes
            if sink is not None:
                sink.discard()
            if held is not None:
                release_input(source)
    return tally


def _carry_over(late: bytes, path: str, target: Path, tally: Tally, to_era: str | None, field_map) -> None:
    """Append to the new file the lines appended to the old one after the check before the
    rename (guard.gained_since), each migrated as the others were, or as it was when it cannot
    be (a torn last line included): nothing a writer appended is lost, and each is counted."""
    if not late:
        return
    first = tally.read + 1
    carried = []
    for number, line in enumerate(late.splitlines(keepends=True), first):
        try:
            moved = migrate_lines(line, path, number, to_era=to_era, field_map=field_map)
            carried.append(moved.data)
            tally.add(moved.tally)
        except LineRejected:  # kept as it was: it is not this run's to drop
            carried.append(line)
            tally.read += 1
            tally.unchanged += 1
    try:
        with open(target, "ab") as new:
            write_all(new, b"".join(carried))
            new.flush()
            os.fsync(new.fileno())
    except OSError as exc:
        raise unwritable(target, exc) from None


def _write_stream(output: BinaryIO, data: bytes | None, writer: CompressedWriter | None = None) -> None:
    """data to output, through writer (compressing) if given; with no data, writer's end."""
    try:
        if data is None:
            writer.close()
        else:
            if writer is not None:
                writer.write(data)
            else:
                write_all(output, data)
    except OSError as exc:  # a full device; standard output's errors are the caller's to name
        if output is getattr(sys.stdout, "buffer", None):
            raise
        raise unwritable(Path(getattr(output, "name", "the output")), exc) from None


def _set_aside(rejects: BinaryIO, found: list[Reject], sync: bool = False) -> None:
    """Append rejects to the rejects file (and, with sync, make them durable): whole lines or
    none (see append_lines), so that a full disk never leaves a torn line for the next run."""
    try:
        if found:
            append_lines(rejects, b"".join(reject.to_json_line() for reject in found))
        if sync:
            rejects.flush()
            try:
                os.fsync(rejects.fileno())
            except OSError as exc:
                if exc.errno != errno.EINVAL:  # EINVAL: a device or a pipe (/dev/null), nothing to make durable
                    raise
    except OSError as exc:
        name = getattr(rejects, "name", "the rejects file")
        raise UnreadableInput(Problem(str(name), None, None, "$", f"cannot write the rejected lines here: "
                                      f"{exc.strerror or exc}", "error", "give --rejects a file on a disk with room; "
                                      "nothing was replaced", code="unreadable-file")) from None


def append_lines(stream: BinaryIO, data: bytes) -> None:
    """Append whole lines to `stream`; when the disk fills part way (a write that takes only
    some of them, then one that fails), what was written of them is cut away again, when
    nothing else wrote to the file meanwhile, and the OSError raised."""
    try:
        stream.flush()  # what a buffered stream holds goes first: the lines stay in order
        fd = stream.fileno()
        before = os.fstat(fd).st_size
    except (AttributeError, OSError, ValueError):  # not a file (io.BytesIO, say): no system write to tear
        write_all(stream, data)
        return
    written = 0
    try:
        while written < len(data):
            taken = os.write(fd, data[written:])
            if taken <= 0:
                raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
            written += taken
    except OSError:
        if written:
            try:
                if os.fstat(fd).st_size == before + written:  # only these bytes since: they go
                    os.ftruncate(fd, before)
            except OSError:
                pass  # a device or a pipe: nothing to cut back
        raise


def _unless_unwritable(results: Iterable, sink: Replacing | None) -> Iterator:
    """The results, but a failed write of the new file (a full disk, say) as unwritable:
    workers report theirs as an OSError naming the temporary file."""
    try:
        yield from results
    except OSError as exc:
        if sink is None or exc.filename != sink.temporary:
            raise
        raise unwritable(sink.target, exc) from None


def _should_commit(fmt: str, tally: Tally, in_place: bool) -> bool:
    if fmt != "jsonl" and tally.rejected:
        return False  # a document that cannot be read is set aside whole: its file stays as it is
    return not in_place or bool(tally.migrated or tally.rejected)


def _exists(path: str) -> bool:
    if is_url(path):
        from ..sources.remote import remote_exists

        return remote_exists(path)
    return os.path.lexists(path)


def _open_input(path: str):
    return nullcontext(sys.stdin.buffer) if path == "-" else open_binary(path)
