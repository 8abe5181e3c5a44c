"""`chatconv import` and `chatconv export`: recordings of other tools read into chatconv's, and
chatconv's written as other APIs' request bodies. Lines go to standard output or, whole, to -o
FILE (written beside it and renamed); problems and the summary to standard error.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Iterator

import click

from ..formats import EXPORTED, IMPORTED_NAMES, ExportRun, ImportRun, export_bodies, import_chunks
from ..formats.registry import OWN_SUFFIXES
from ..problems import UsageError, printable, shown_name
from ..migrate.plan import is_folder
from ..sources import DATA_SUFFIXES, data_suffix, is_url, parse_field_map
from ..sources.remote import location, remote_isfile
from ..sources.writing import write_all
from ..recordings.batches import JOBS_HELP
from .recordings import FIELD_HELP, field_map_option, scheduler_option
from .colour import color_option
from .progress import hide_progress, shows_progress
from .limits import limit_options
from .discovery import no_ignore_option
from .max_warnings import max_warnings_option
from .reporters import EXIT_INVALID, EXIT_OK, EXIT_UNREADABLE, TextReporter, plural
from .settings import Selection, ignored_text, selected, selection_options


def _written(chunks: Iterator[bytes], output: str | None, paths: tuple[str, ...],
             suffixes: frozenset[str] = DATA_SUFFIXES) -> None:
    """Every chunk of lines (each line ending in its newline) to standard output, or to OUTPUT,
    replaced whole only when all was read; a call the library cannot carry out as given is a
    usage error (exit status 2). OUTPUT may not be one of the files read (`paths`, files or
    folders, whose files of `suffixes` are read): it is refused before anything is read."""
    _refuse_output_read(output, paths, suffixes)
    try:
        _write(chunks, output)
    except UsageError as exc:
        raise click.UsageError(exc.message) from None


def _refuse_output_read(output: str | None, paths: tuple[str, ...], suffixes: frozenset[str]) -> None:
    """A usage error when OUTPUT is a file that PATHS name or hold (a file of `suffixes` in a
    folder named): replacing it with what was made of it would lose what was not (records left
    out with an error, bodies refused). Objects (s3://) alike, compared by their location."""
    if output in (None, "-") or not (remote_isfile(output) if is_url(output) else os.path.isfile(output)):
        return
    real = location(output)
    for path in paths:
        if path == "-" or not (is_url(path) or os.path.exists(path)):
            continue
        folder = is_folder(path)
        if folder:
            inside = data_suffix(output) in suffixes and os.path.commonpath([real, location(path)]) == location(path)
        elif is_url(path) or is_url(output):
            inside = location(path) == real
        else:
            inside = os.path.samefile(path, output)  # (a hard link too)
        if inside:
            where = f"is in the folder {shown_name(path)}, which is" if folder else "is one of the files"
            raise click.UsageError(printable(f"-o {shown_name(output)} {where} read: writing it would replace what "
                                             "was read with what was made of it (records left out would be lost); "
                                             "write to another file"))


def _write(chunks: Iterator[bytes], output: str | None) -> None:
    if output in (None, "-"):
        for chunk in chunks:
            write_all(sys.stdout.buffer, chunk)
        return
    from ..migrate.atomic_object import replacing

    target = output if is_url(output) else Path(output)  # (an object, s3://: uploaded whole, or not at all)
    if isinstance(target, Path) and target.is_dir():
        raise click.UsageError(f"-o {output} is a folder; name the file to write")
    # A device or a pipe (/dev/null): written to, as migrate -o does.
    if isinstance(target, Path) and target.exists() and not target.is_file():
        try:
            with open(target, "wb") as stream:
                for chunk in chunks:
                    write_all(stream, chunk)
        except OSError as exc:  # said of the file named, not of standard output
            raise OSError(exc.errno, exc.strerror, output) from None
        return
    with replacing(target) as out:
        for chunk in chunks:
            out.write(chunk)
        out.commit()


def _any_field_map(ctx, param, pairs):
    try:
        return parse_field_map(list(pairs), names=None)  # other tools' keys, not chatconv's fields
    except ValueError as exc:
        raise click.BadParameter(str(exc)) from None


def _data_on_stdout(options: dict) -> bool:
    return options.get("output") in (None, "-")


def _report(problems, summary: str, selection: Selection, unreadable: list | None = None) -> None:
    """The problems and the summary on standard error; exit 2 when a file could not be read (the
    others were), else 1 for an error, else 0."""
    hide_progress()
    problems, ignored = selected(problems, selection)
    reporter = TextReporter(err=True)
    for problem in [*problems, *(unreadable or ())]:
        reporter.problem(problem)
    click.echo(summary + (f" ({ignored_text(ignored)})" if ignored else ""), err=True)
    sys.exit(EXIT_UNREADABLE if unreadable else EXIT_INVALID if any(p.is_error for p in problems) else EXIT_OK)


@click.command("import", help=f"""Read recordings of another tool's format into chatconv's recordings.

    PATHS are files, folders (searched for .jsonl, .json, .yaml files, .jsonl.gz and .jsonl.zst,
    and .eval logs) or - for standard input. Each record's format is told from its content; --from names it. Formats:
    {', '.join(IMPORTED_NAMES)}.

    \b
    Each conversation becomes steps (AI SDK 5 step records, one per line; --conversations: one
    conversation per line): a step starts at each user (or system) message and holds what the
    model and the tools said after it. A request body and its response make one conversation;
    the body's own fields (model, tools, settings) go to the first step's metadata[FORMAT], and
    what a message or part has beyond a model message to its providerOptions[FORMAT]. Tool
    results take their call's name, by id, across a conversation's records.

    \b
    Examples:
      chatconv import finetune.jsonl -o steps.jsonl
      chatconv import logs/ --from anthropic --conversations
      chatconv import run.eval | chatconv tools -
      chatconv import gateway.jsonl --field messages=payload.messages

    Standard error: each problem (FILE:LINE:COL: severity: PATH: message), then
    N records read (by format): N conversations, N steps written. A conversation that cannot be
    read exactly is left out with an error (exit status 1); 2 for unreadable input.
    """)
@click.argument("paths", nargs=-1, required=True, type=click.Path(allow_dash=True))
@click.option("--from", "format_name", type=click.Choice(IMPORTED_NAMES), metavar="FORMAT",
              help=f"The records' format ({', '.join(IMPORTED_NAMES)}), instead of telling it from each record.")
@click.option("--conversations", is_flag=True, help="Write one conversation per line instead of one step per line.")
@click.option("--field", "field_map", multiple=True, metavar="NAME=KEY", callback=_any_field_map,
              help="Read the record's key NAME from KEY (repeatable; KEY may be a dotted path), before its "
                   "format is told: e.g. --field messages=payload.messages for log lines that wrap a body.")
@click.option("-o", "--output", type=click.Path(allow_dash=True), metavar="FILE",
              help="Write to FILE (replaced whole at the end; never a file that is read; a pipe or device such as "
                   "/dev/null is written to) "
                   "instead of standard output.")
@click.option("--jobs", type=click.IntRange(min=1), metavar="N",
              help="Worker processes that import JSONL files (output is the same for any N). "
                   "[default: one per core for files of 16 MiB or more, else 1]")
@scheduler_option
@max_warnings_option
@selection_options
@limit_options
@no_ignore_option
@color_option
@shows_progress(_data_on_stdout)
def import_(paths, format_name, conversations, field_map, output, jobs, scheduler, selection):
    run, unreadable = ImportRun(), []
    _written(import_chunks(paths, format_name, conversations, run, field_map, jobs, unreadable=unreadable,
                           scheduler=scheduler), output,
             paths, DATA_SUFFIXES | OWN_SUFFIXES)
    formats = ", ".join(f"{count} {name}" for name, count in run.formats.items())
    _report(run.problems, f"{plural(run.records, 'record')} read{f' ({formats})' if formats else ''}: "
                          f"{plural(run.conversations, 'conversation')}, {plural(run.steps, 'step')} written",
            selection, unreadable)


@click.command(help=f"""Write chatconv's recordings in another tool's format, one per line: an API's
    request bodies, a dataset's rows (sharegpt, alpaca, hf-messages, preference), a library's
    histories (pydantic-ai, ai-sdk-ui).

    PATHS are recordings (files, folders, -): step or conversation per line, legacy shapes too.
    Formats: {', '.join(EXPORTED)}.

    \b
    --per step (the default): for each step that has an output, a body holding its
    conversation up to and with that step. --per conversation: one body per conversation (an
    OpenAI fine-tuning line, with --gather-tools for the `tools` its calls use; a dataset's row).
    Import then export gives the imported body back (docs/formats/ says what is normalized).
    A body the API would refuse (its rules, as `chatconv prompt` keeps them) is not written:
    an error at its step (exit status 1). A part the API has no place for is left out with a
    warning (part-left-out, blank-text), counted in the summary; --strict makes it an error.

    \b
    Examples:
      chatconv export steps.jsonl --to openai-chat --per conversation --gather-tools > finetune.jsonl
      chatconv export run.jsonl --to anthropic -o bodies.jsonl
      chatconv export steps.jsonl --to sharegpt --per conversation -o train.jsonl
    """)
@click.argument("paths", nargs=-1, required=True, type=click.Path(allow_dash=True))
@click.option("--to", "format_name", type=click.Choice(EXPORTED), required=True, metavar="FORMAT",
              help=f"The format to write (an API's bodies, a dataset's rows): {', '.join(EXPORTED)}.")
@click.option("--per", type=click.Choice(["step", "conversation"]), default="step", show_default=True,
              help="One body per step (the conversation so far) or per conversation.")
@click.option("--gather-tools", is_flag=True,
              help="openai-chat: give a body with tool calls and no `tools` the tools its calls name.")
@click.option("--strict", is_flag=True,
              help="A part the target has no place for (or writes otherwise) is an error and its body is not "
                   "written, instead of a warning.")
@click.option("--field", "field_map", multiple=True, metavar="NAME=KEY", callback=field_map_option, help=FIELD_HELP)
@click.option("-o", "--output", type=click.Path(allow_dash=True), metavar="FILE",
              help="Write to FILE (replaced whole at the end; never a file that is read; a pipe or device such as "
                   "/dev/null is written to) "
                   "instead of standard output.")
@click.option("--jobs", type=click.IntRange(min=1), metavar="N", help=JOBS_HELP)
@scheduler_option
@selection_options
@limit_options
@no_ignore_option
@color_option
@shows_progress(_data_on_stdout)
def export(paths, format_name, per, gather_tools, strict, field_map, output, jobs, scheduler, selection):
    run = ExportRun()
    unreadable = []
    bodies = export_bodies(paths, format_name, per, gather_tools, field_map, run, jobs, strict=strict,
                           unreadable=unreadable, scheduler=scheduler)
    _written((body + b"\n" for body in bodies), output, paths)
    summary = f"{plural(run.steps, 'step')} read: {plural(run.bodies, 'body', 'bodies')} written"
    left_out = sum(p.code in ("part-left-out", "blank-text") for p in run.problems)
    changed = sum(p.code == "export-changed" for p in run.problems)
    unrequested = sum(p.code == "no-request" for p in run.problems)
    for count, what in ((left_out, "part left out" if left_out == 1 else "parts left out"),
                        (changed, "value written otherwise" if changed == 1 else "values written otherwise"),
                        (unrequested, "response without its request" if unrequested == 1 else
                         "responses without their request")):
        if count:
            summary += f", {count} {what}"
    _report(run.problems, summary, selection, unreadable)

