"""A migration run over many paths, as `chatconv migrate` makes it: the files planned (see
plan.py), migrated one after the other with one set of workers and one rejects file, and what
became of each handed back, for the caller to report. Nothing is printed here.
"""

from __future__ import annotations

import os
import stat
import sys
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass, replace
from pathlib import Path
from typing import BinaryIO, Callable, Iterable, Iterator

from ..eras import era_names
from ..problems import Problem, UnreadableInput, UsageError
from ..sources import configured_release, file_format
from .batches import Workers
from .files import migrate_file
from .lines import LineRejected, Tally
from .plan import Target, is_folder, output_folder, plan_targets, refuse_rejects_among
from .tree import companions, copy_unchanged

# Called with each file, gives what to call with the input bytes read so far (or None).
ProgressFor = Callable[[str], AbstractContextManager[Callable[[int], None] | None]]


@dataclass(frozen=True)
class MigratedFile:
    """What became of one file of a run: its counts, or the error that stopped it."""

    file: str  # the input (`-` for standard input); or an output or rejects file that could not be closed
    tally: Tally | None = None  # None when the file did not migrate whole (see error)
    error: LineRejected | UnreadableInput | None = None
    stopped: bool = False  # the file stopped at a rejected record (no rejects file): left as it was
    skipped: Problem | None = None  # a warning: a symlink found in a folder, not followed (see links.py)
    copied: bool = False  # copied unchanged into the -o folder: a refused file, or one no migration reads


def migrate_paths(paths: Iterable[str], output: str | None = None, *, in_place: bool = False,
                  backup: bool = False, dry_run: bool = False, check: bool = False, rejects: str | None = None,
                  jobs: int = 1, progress: ProgressFor | None = None,
                  to_era: str | None = None, field_map: dict | None = None,
                  scheduler: str | None = None) -> Iterator[MigratedFile]:
    """Migrate files and folders (`-` is standard input), one MigratedFile per file, in order.

    output, in_place: where the migrated bytes go (see plan_targets: one input and no output
    means this process's standard output, as for the command); backup keeps FILE.bak of
    a file rewritten in place. dry_run and check write nothing (their tallies say what would
    change). rejects: a file the rejected records are appended to (see Reject), so that the
    file's other records are migrated; else the first one stops its file, which is left as it
    was (MigratedFile.stopped), and the run goes on with the next file: each file has its own
    target, so that no other file's output misses anything. A file that cannot be read or
    written is reported and the run goes on. Last come the output and
    rejects files whose last bytes could not be written when closed. to_era: eval files move
    forward to that era (one of eras.era_names()) instead of the newest (or, without it, the
    era of the release their config's `required_version` names); none is moved back.
    field_map: fields read from other keys (sources.parse_field_map), migrated under their own
    keys in JSON and JSONL files. First come the symlinks found in folders and not followed
    (see links.py): a MigratedFile each, with only `skipped` set (a warning). Into an output
    folder, a file not migrated (refused, or its document set aside) is copied as it was, and
    then every other file of the folders searched (see tree.py): each such file's MigratedFile
    says `copied` (or its `error`). scheduler: a Dask scheduler's address, whose cluster's
    workers migrate the JSONL files' batches (sent to them; this process writes what they send back).

    Raises UsageError, before anything is written, for a call that cannot be carried out.
    """
    if in_place and output:
        raise UsageError("use -o OUT or --in-place, not both")
    if backup and not in_place:
        raise UsageError("--backup keeps FILE.bak of a file rewritten with --in-place")
    if to_era is not None and to_era not in era_names():
        raise UsageError(f"no era {to_era!r}; known: {', '.join(era_names())}")
    writes = not (dry_run or check)
    skipped: list[Problem] = []
    paths = list(paths)
    targets = plan_targets(paths, output, in_place, writes, skipped)
    tree = output_folder(paths, output, len(targets)) if writes and not in_place else None
    folders = [path for path in paths if is_folder(path)]
    others = companions(folders, targets, tree, skipped) if tree is not None else []
    try:
        if rejects and writes:
            refuse_rejects_among(rejects, targets)
        rejects_stream = _open_rejects(rejects if writes else os.devnull) if rejects else None
    except (UsageError, UnreadableInput):
        _close_streams(targets, None, None)
        raise
    try:
        yield from (MigratedFile(warning.file, skipped=warning) for warning in skipped)
        with Workers(jobs, scheduler) as workers:
            configs: dict = {}
            for file, target in targets:
                era = to_era or _required_era(file, configs)
                outcome = _migrate_one(file, target if writes else None, backup, rejects_stream, workers, progress,
                                       era, field_map)
                failed = None
                if tree is not None and _left_out(outcome):
                    failed = _copy(file, target)
                    outcome = replace(outcome, copied=failed is None)
                yield outcome
                if failed is not None:
                    yield MigratedFile(file, error=failed)
            for file, target in others:
                failed = _copy(file, target)
                yield MigratedFile(file, error=failed, copied=failed is None)
    finally:
        unclosed = _close_streams(targets, rejects_stream, rejects)
    yield from unclosed


def _migrate_one(file: str, target: Target, backup: bool, rejects: BinaryIO | None, workers: Workers,
                 progress: ProgressFor | None, to_era: str | None, field_map: dict | None = None) -> MigratedFile:
    try:
        with progress(file) if progress is not None else nullcontext() as report:
            tally = migrate_file(file, target, backup=backup, rejects=rejects, workers=workers, progress=report,
                                 to_era=to_era, field_map=field_map)
    except LineRejected as exc:
        return MigratedFile(file, error=exc, stopped=True)
    except UnreadableInput as exc:
        return MigratedFile(file, error=exc)
    return MigratedFile(file, tally)


def _required_era(file: str, configs: dict) -> str | None:
    """The era of the release its config's `required_version` puts in force (see
    sources.configured_release): a project that runs AgentV 4 is not moved past it."""
    release = configured_release(file, configs)
    return release.era if release is not None else None


def _left_out(outcome: MigratedFile) -> bool:
    """Whether a file's migrated bytes were not written: a record stopped it, or (with
    --rejects) its one document was set aside. In a -o folder it is then copied as it is."""
    if outcome.stopped:
        return True
    tally = outcome.tally
    return tally is not None and bool(tally.rejected) and file_format(outcome.file) != "jsonl"


def _copy(file: str, target: Path | str) -> UnreadableInput | None:
    """Copy a file unchanged into the -o folder; why it could not be, else None."""
    try:
        copy_unchanged(file, target)
    except UnreadableInput as exc:
        return exc
    return None


def _open_rejects(file: str) -> BinaryIO:
    # Appended to, never truncated: an earlier run's rejects may be the only copy of those lines.
    # Unbuffered: each batch's rejected lines go in whole writes (see files.append_lines).
    try:
        stream = open(file, "ab", buffering=0)
    except OSError as exc:
        raise UsageError(f"cannot write the rejects file {file}: {exc.strerror}") from None
    try:
        _refuse_torn_end(file, stream)
    except BaseException:
        stream.close()
        raise
    return stream


def _refuse_torn_end(file: str, stream: BinaryIO) -> None:
    """A rejects file whose last line has no newline was cut short (a run that could not finish
    writing it): lines appended after it would be glued to it, so the run stops first."""
    opened = os.fstat(stream.fileno())
    size = opened.st_size
    if size == 0 or not stat.S_ISREG(opened.st_mode):  # a pipe, a device: no end to read back
        return
    try:
        with open(file, "rb") as existing:
            existing.seek(size - 1)
            last = existing.read(1)
    except OSError:
        return  # cannot be read back (write-only): appending is all that is asked
    if last != b"\n":
        raise UnreadableInput(Problem(file, None, None, "$", f"{file} ends in a partial line (a run that could "
                                      "not finish writing it)", "error", "fix or remove that line before appending; "
                                      "nothing was migrated", code="unreadable-file"))


def _close_streams(targets: list[tuple[str, Target]], rejects: BinaryIO | None,
                   rejects_file: str | None) -> list[MigratedFile]:
    """Close the streams the run opened; a device or pipe given as -o, and the rejects file,
    get their last bytes now. Those that could not be written, as MigratedFiles."""
    unclosed = []
    streams = [(target, target.name, "cannot write the migrated records") for _, target in targets
               if hasattr(target, "close") and target is not sys.stdout.buffer]
    if rejects is not None:
        streams.append((rejects, rejects_file, "cannot write the rejected lines here"))
    for stream, name, message in streams:
        try:
            stream.close()
        except OSError as exc:
            problem = Problem(name, None, None, "$", f"{message}: {exc.strerror}", code="unreadable-file")
            unclosed.append(MigratedFile(name, error=UnreadableInput(problem)))
    return unclosed
