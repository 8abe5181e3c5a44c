"""`chatconv migrate`: rewrite recordings and eval files in the current shape, and say what changed.

chatconv.migrate plans where each file goes and migrates it (migrate_paths); this command prints
what became of each file and the summary.
"""

from __future__ import annotations

import sys

import click

from ..eras import era_names
from ..eras.releases import release_asked
from ..problems import UnreadableInput, UsageError, printable, shown_name
from .recordings import FIELD_HELP, field_map_option, scheduler_option
from .releases import migrate_agentv_option
from .progress import hide_progress, progress_bar, showing
from .discovery import no_ignore_option
from .limits import limit_options
from .max_warnings import max_warnings_option
from .reporters import EXIT_INVALID, EXIT_OK, EXIT_UNREADABLE, ShortReporter, plural, short_line

@click.command()
@click.argument("paths", nargs=-1, required=True, type=click.Path(allow_dash=True))
@click.option("-o", "--output", type=click.Path(allow_dash=True), metavar="OUT",
              help="Write here: a file for one input file (- for standard output), else a folder (made if "
                   "needed, as is OUT/ with a trailing slash) that mirrors the inputs.")
@click.option("--in-place", is_flag=True,
              help="Rewrite each file in place, atomically (old or new, whole). A file another chatconv run is "
                   "rewriting, or one that changes while it is migrated (a process appending to it), is left as "
                   "it is, with a message (exit 2): run again when nothing writes to it.")
@click.option("--backup", is_flag=True, help="With --in-place: keep the old file as FILE.bak.")
@click.option("--dry-run", is_flag=True, help="Write nothing; print what would change, per migration, with examples.")
@click.option("--check", is_flag=True, help="Write nothing; exit 1 when anything would change (for CI).")
@click.option("--rejects", "rejects_file", type=click.Path(dir_okay=False, allow_dash=False), metavar="FILE",
              help="Set records that cannot be parsed or migrated aside in FILE (JSONL, appended, whole lines) "
                   "and go on. A FILE that ends in a partial line is refused before anything is migrated.")
@click.option("--jobs", type=click.IntRange(min=1), default=1, show_default=True, metavar="N",
              help="Worker processes for JSONL files.")
@scheduler_option
@click.option("--to", "to_era", type=click.Choice(era_names()), metavar="ERA",
              help=f"Move eval files forward to this era, not to the newest ({', '.join(era_names())}); "
                   "a file already there or past it is left as it is.")
@click.option("--field", "field_map", multiple=True, metavar="NAME=KEY", callback=field_map_option,
              help=FIELD_HELP + " The field is migrated where it is, under its own key (JSON and JSONL files).")
@migrate_agentv_option
@max_warnings_option
@limit_options
@no_ignore_option
def migrate(paths, output, in_place, backup, dry_run, check, rejects_file, jobs, scheduler, to_era, field_map,
            agentv):
    """Rewrite recordings (JSONL) and eval files (YAML, JSON) in the current shape.

    Eval files move forward one AgentV era at a time, to the newest era (or --to ERA, or the
    era of the release --agentv names, or else of the release their .agentv/config.yaml's
    required_version names); a file is never rewritten into an older era.

    PATHS are files, folders (searched as `validate` searches them) or - for standard input.
    Each record goes through the numbered migrations that apply to it; a record that none
    changes is written byte for byte as it was read. Migrated records go to standard output
    (one input), to -o OUT, or back into each file with --in-place.

    A .json file that holds an array of records (a stepTraces.json) has each element migrated
    and is written back as an array (its indentation, each element's keys and unknown fields
    kept). --field migrates a field held under another key there, e.g. a legacy one-message
    output in agentMessages becomes a one-message array in agentMessages:
      chatconv migrate --in-place stepTraces.json --field output=agentMessages

    \b
    \b
    A folder migrated into -o FOLDER comes out whole: the files no migration reads (prompt
    files, fixtures, scripts) and the files refused are copied there unchanged, so that the
    new tree validates and runs as the old one did.

    \b
    Standard error: FILE:LINE: error: message for each file a record stopped (the file is left
    as it was, the run goes on with the next; --rejects sets such records aside instead), then
      N files, N records read: N migrated, N unchanged, N rejected[; N files left as they were (refused)]
    one line per migration applied, and what was copied unchanged into the -o folder.
    Exit status: 0 done, 1 a record stopped a file (or --check found changes),
    2 unreadable input or usage error.
    """
    # Imported when run: the other commands start without the migrations' machinery.
    from ..migrate import LineRejected, Tally, migrate_paths

    release = release_asked(agentv, to_era, "--to")
    to_era = release.era if release else to_era

    total, done, status, refused = Tally(), [], EXIT_OK, 0
    copied = {"refused": 0, "other": 0}  # files copied unchanged into the -o folder
    reporter = ShortReporter()
    # The bar (on a terminal, after a while) follows the bytes migrate_paths says it has read.
    data_on_stdout = not (in_place or dry_run or check) and output in (None, "-")
    try:
        with showing(progress_bar(paths, data_on_stdout), watch=False) as bar:
            for outcome in migrate_paths(paths, output, in_place=in_place, backup=backup, dry_run=dry_run,
                                         check=check, rejects=rejects_file, jobs=jobs,
                                         progress=bar.file_progress if bar is not None else None,
                                         to_era=to_era, field_map=field_map or None, scheduler=scheduler):
                if isinstance(outcome.error, LineRejected):
                    hide_progress()
                    reject = outcome.error.reject
                    click.echo(short_line(reject.file, reject.error, reject.line), err=True)
                    status, refused = EXIT_INVALID, refused + 1
                    copied["refused"] += outcome.copied
                elif outcome.copied and outcome.tally is None:  # a file no migration reads
                    copied["other"] += 1
                elif outcome.skipped is not None:  # a symlink in a folder, not followed: a warning
                    reporter.problem(outcome.skipped)
                elif outcome.error is not None:
                    for problem in outcome.error.problems:
                        reporter.problem(problem)
                    status = EXIT_UNREADABLE
                else:
                    total.add(outcome.tally)
                    done.append((outcome.file, outcome.tally))
                    copied["refused"] += outcome.copied  # its one document set aside (--rejects)
    except UsageError as exc:
        raise click.UsageError(exc.message) from None
    except UnreadableInput as exc:  # a rejects file refused before anything was migrated: said as the others are
        for problem in exc.problems:
            reporter.problem(problem)
        sys.exit(EXIT_UNREADABLE)
    writes = not (dry_run or check)
    changed = [(file, tally) for file, tally in done if tally.migrated or tally.rejected]
    if dry_run:
        _print_dry_run(changed, total)
    if check:
        for file, tally in changed:
            click.echo(printable(f"would migrate {shown_name(file)} ({tally.migrated + tally.rejected} of "
                                 f"{tally.read} records)"), err=True)
    if done or refused:
        _print_migration_summary(total, len(done), writes, to_era, refused)
    if any(copied.values()):
        _print_copies(copied, output)
    if status == EXIT_OK and check and changed:
        status = EXIT_INVALID
    sys.exit(status)


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


def _print_copies(copied: dict, output: str) -> None:
    """What else went into the -o folder, so that it holds the whole tree."""
    parts = []
    if copied["refused"]:
        parts.append(f"{plural(copied['refused'], 'file')} not migrated (named above)")
    if copied["other"]:
        parts.append(f"{plural(copied['other'], 'other file')} (prompt files, fixtures, scripts: no migration reads "
                     f"{'it' if copied['other'] == 1 else 'them'})")
    click.echo(printable(f"  copied unchanged into {shown_name(str(output))}: {' and '.join(parts)}"), err=True)


def _print_migration_summary(total, files: int, writes: bool, to_era: str | None, refused: int = 0) -> None:
    from ..migrate import migrations

    line = (f"{plural(files, 'file')}, {plural(total.read, 'record')} read: {total.migrated} migrated, "
            f"{total.unchanged} unchanged, {total.rejected} rejected")
    if refused:  # each named above with its reason
        line += f"; {plural(refused, 'file')} left as {'it was' if refused == 1 else 'they were'} (refused)"
    click.echo(line + ("" if writes else " (nothing written)"), err=True)
    if total.at_era:
        era = f"era {to_era}" if to_era else "the era of the AgentV release their config requires (required_version)"
        click.echo(f"  {plural(total.at_era, 'eval file')} already at or past {era}: left as "
                   f"{'it is' if total.at_era == 1 else 'they are'} (never moved back)", err=True)
    for migration in migrations():
        count = total.by_migration.get(migration.name)
        if count:
            click.echo(f"  {migration.name}: {plural(count, 'record')}", err=True)
