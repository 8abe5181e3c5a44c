"""`chatconv migrate`: rewrite recordings and eval files in the current shape, and say what changed.

The files to migrate and where each goes (standard output, -o FILE or FOLDER, in place) are
planned here from the options; chatconv.migrate does the migrating.
"""

from __future__ import annotations

import contextlib
import os
import sys
from pathlib import Path

import click

from ..problems import UnreadableInput
from ..sources import discover
from .reporters import EXIT_INVALID, EXIT_OK, EXIT_UNREADABLE, ShortReporter, plural, short_line

PROGRESS_MIN_BYTES = 32 << 20  # a progress bar on a terminal for files from this size


@click.command()
@click.argument("paths", nargs=-1, required=True, type=click.Path(allow_dash=True))
@click.option("-o", "--output", type=click.Path(allow_dash=True), metavar="OUT",
              help="Write here: a file for one input file (- for standard output), else a folder (made if "
                   "needed, as is OUT/ with a trailing slash) that mirrors the inputs.")
@click.option("--in-place", is_flag=True, help="Rewrite each file in place, atomically (old or new, whole).")
@click.option("--backup", is_flag=True, help="With --in-place: keep the old file as FILE.bak.")
@click.option("--dry-run", is_flag=True, help="Write nothing; print what would change, per migration, with examples.")
@click.option("--check", is_flag=True, help="Write nothing; exit 1 when anything would change (for CI).")
@click.option("--rejects", "rejects_file", type=click.Path(dir_okay=False, allow_dash=False), metavar="FILE",
              help="Set records that cannot be parsed or migrated aside in FILE (JSONL, appended) and go on.")
@click.option("--jobs", type=click.IntRange(min=1), default=1, show_default=True, metavar="N",
              help="Worker processes for JSONL files.")
def migrate(paths, output, in_place, backup, dry_run, check, rejects_file, jobs):
    """Rewrite recordings (JSONL) and eval files (YAML, JSON) in the current shape.

    PATHS are files, folders (searched as `validate` searches them) or - for standard input.
    Each record goes through the numbered migrations that apply to it; a record that none
    changes is written byte for byte as it was read. Migrated records go to standard output
    (one input), to -o OUT, or back into each file with --in-place.

    \b
    Standard error: FILE:LINE: error: message for a record that stops the run, then
      N files, N records read: N migrated, N unchanged, N rejected
    and one line per migration applied.
    Exit status: 0 done, 1 a record stopped the run (or --check found changes),
    2 unreadable input or usage error.
    """
    # Imported when run: the other commands start without the migrations' machinery.
    from ..migrate import LineRejected, Tally, Workers, migrate_file

    if in_place and output:
        raise click.UsageError("use -o OUT or --in-place, not both")
    if backup and not in_place:
        raise click.UsageError("--backup keeps FILE.bak of a file rewritten with --in-place")
    writes = not (dry_run or check)
    targets = _migration_targets(paths, output, in_place, writes)
    if rejects_file and writes:
        _refuse_rejects_among(rejects_file, targets)
    total, done, status = Tally(), [], EXIT_OK
    reporter = ShortReporter()
    rejects = _open_rejects(rejects_file if writes else os.devnull) if rejects_file else None
    try:
        with Workers(jobs) as workers:
            for file, target in targets:
                try:
                    with _migration_progress(file) as progress:
                        tally = migrate_file(file, target if writes else None, backup=backup, rejects=rejects,
                                             workers=workers, progress=progress)
                except LineRejected as exc:
                    click.echo(short_line(exc.reject.file, exc.reject.error, exc.reject.line), err=True)
                    status = EXIT_INVALID
                    break
                except UnreadableInput as exc:
                    for problem in exc.problems:
                        reporter.problem(problem)
                    status = EXIT_UNREADABLE
                    continue
                total.add(tally)
                done.append((file, tally))
    finally:
        for _, target in targets:  # a device or pipe given as -o: its last bytes go out now
            if hasattr(target, "close") and target is not sys.stdout.buffer:
                try:
                    target.close()
                except OSError as exc:
                    click.echo(short_line(target.name, f"cannot write the migrated records: {exc.strerror}"),
                               err=True)
                    status = EXIT_UNREADABLE
        if rejects is not None:
            try:
                rejects.close()
            except OSError as exc:  # the last rejected lines could not be written
                click.echo(short_line(rejects_file, f"cannot write the rejected lines here: {exc.strerror}"),
                           err=True)
                status = EXIT_UNREADABLE
    changed = [(file, tally) for file, tally in done if tally.migrated or tally.rejected]
    if dry_run:
        _print_dry_run(changed, total)
    if check:
        for file, tally in changed:
            click.echo(f"would migrate {file} ({tally.migrated + tally.rejected} of {tally.read} records)", err=True)
    if done:
        _print_migration_summary(total, len(done), writes)
    if status == EXIT_OK and check and changed:
        status = EXIT_INVALID
    sys.exit(status)


def _migration_targets(paths, output, in_place, writes) -> list[tuple[str, object]]:
    """(input file, where its migrated bytes go: a Path, standard output, or None) for each file."""
    files = []  # (file, its name under a -o folder)
    for path in paths:
        if path != "-" and os.path.isdir(path):
            files += [(file, os.path.relpath(file, path)) for file, _ in discover([path])]
        else:
            files.append((path, os.path.basename(path)))
    if not writes:
        return [(file, None) for file, _ in files]
    if in_place:
        if any(file == "-" for file, _ in files):
            raise click.UsageError("standard input cannot be rewritten in place; use -o OUT")
        for file, _ in files:
            if not os.path.isfile(file):
                raise click.UsageError(f"--in-place rewrites regular files; {file} is not one")
        # A link stays a link: the file it points to is the one rewritten.
        return [(file, Path(os.path.realpath(file))) for file, _ in files]
    one_file = len(files) == 1 and not os.path.isdir(paths[0])
    if not output or output == "-":
        if not one_file:
            raise click.UsageError("several input files: pass -o FOLDER or --in-place (or --dry-run, --check)")
        return [(files[0][0], sys.stdout.buffer)]
    folder = output.endswith(("/", os.sep)) or os.path.isdir(output)
    if one_file and not folder:
        return [(files[0][0], _output_file(output))]
    names = [name for _, name in files]
    if "-" in names or len(set(names)) < len(names):
        raise click.UsageError("-o FOLDER needs input files with distinct names (not standard input)")
    if os.path.exists(output) and not os.path.isdir(output):
        raise click.UsageError(f"-o {output} is a file; several input files need -o FOLDER")
    inputs = {os.path.realpath(file): file for file, _ in files}
    for file, name in files:
        other = inputs.get(os.path.realpath(Path(output) / name))
        if other is not None and other != file:
            raise click.UsageError(f"-o {output} would write over the input {other} before it is read; "
                                   "write to a folder outside the inputs")
    try:
        for name in names:
            (Path(output) / name).parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise click.UsageError(f"-o {output}: cannot make the folder for the migrated files: {exc.strerror}") from None
    return [(file, Path(output) / name) for file, name in files]


def _output_file(output: str):
    """Where one input's migrated bytes go: a new or regular file is replaced atomically (a
    link's target, the link staying); a device or pipe (/dev/null, say) is written to."""
    if os.path.exists(output) and not os.path.isfile(output):
        try:
            return click.open_file(output, "wb")
        except OSError as exc:
            raise click.UsageError(f"-o {output}: cannot write to it: {exc.strerror}") from None
    target = Path(os.path.realpath(output))
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise click.UsageError(f"-o {output}: cannot make its folder: {exc.strerror}") from None
    return target


def _refuse_rejects_among(rejects_file: str, targets) -> None:
    """--rejects must name a file of its own: appended to an input or an output, the rejected
    lines would be lost in the rewrite or mixed into the data."""
    def same(path) -> bool:
        path = str(path)
        return os.path.realpath(path) == os.path.realpath(rejects_file) or (
            os.path.exists(path) and os.path.exists(rejects_file) and os.path.samefile(path, rejects_file))

    if rejects_file == "-":
        raise click.UsageError("--rejects takes a file (the migrated records may be on standard output)")
    for file, target in targets:
        if file != "-" and same(file) or isinstance(target, Path) and same(target) or (
                target is sys.stdout.buffer and _is_standard_output(rejects_file)):
            raise click.UsageError(f"--rejects {rejects_file} is also an input or output file; give it a file of its own")


def _is_standard_output(path: str) -> bool:
    try:
        found, stdout = os.stat(path), os.fstat(sys.stdout.fileno())
    except (OSError, ValueError):
        return False
    return (found.st_dev, found.st_ino) == (stdout.st_dev, stdout.st_ino)


def _open_rejects(file: str):
    # Appended to, never truncated: an earlier run's rejects may be the only copy of those lines.
    try:
        return open(file, "ab")
    except OSError as exc:
        raise click.UsageError(f"cannot write the rejects file {file}: {exc.strerror}") from None


def _migration_progress(file: str):
    """A progress bar on a terminal for a long file, as a callback taking the bytes read."""
    size = os.path.getsize(file) if file != "-" and os.path.isfile(file) else 0
    if size < PROGRESS_MIN_BYTES or not sys.stderr.isatty():
        return contextlib.nullcontext(None)

    @contextlib.contextmanager
    def bar():
        with click.progressbar(length=size, label=file, file=sys.stderr) as progress:
            yield lambda done: progress.update(done - progress.pos)

    return bar()


def _print_dry_run(changed, total) -> None:
    from ..migrate import migrations

    for file, tally in changed:
        click.echo(f"would migrate {file}: {tally.migrated} of {tally.read} records"
                   + (f", {tally.rejected} rejected" if tally.rejected else ""))
    for migration in migrations():
        count = total.by_migration.get(migration.name)
        if count:
            click.echo(f"{migration.name}: {plural(count, 'record')} ({migration.summary})")
            for file, line, path in total.examples[migration.name]:
                click.echo(f"  {file}:{line}: {path}")
    if total.rejected:
        click.echo(f"rejected: {plural(total.rejected, 'record')}")
        for file, line, error in total.rejected_examples:
            click.echo(f"  {file}:{line}: {error}")


def _print_migration_summary(total, files: int, writes: bool) -> None:
    from ..migrate import migrations

    line = (f"{plural(files, 'file')}, {plural(total.read, 'record')} read: {total.migrated} migrated, "
            f"{total.unchanged} unchanged, {total.rejected} rejected")
    click.echo(line + ("" if writes else " (nothing written)"), err=True)
    for migration in migrations():
        count = total.by_migration.get(migration.name)
        if count:
            click.echo(f"  {migration.name}: {plural(count, 'record')}", err=True)
