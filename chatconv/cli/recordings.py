"""`chatconv text`, `tools` and `dataset`: rows made of a recording's steps, one per line or as a
table; a step that cannot be read or written is reported on standard error and left out.
"""

from __future__ import annotations

import functools
import sys

import click
from click.core import ParameterSource

from ..pairing import CONVERSATION_WINDOW
from ..recordings import FIELD_NAMES, parse_field_map
from ..sources.remote import read_on_cluster
from ..recordings.batches import JOBS_HELP
from ..recordings.rows import DATASET_COLUMNS, TEXT_COLUMNS, iter_step_rows, table_header
from ..recordings.tool_events import TOOL_COLUMNS
from ..recordings.tools import DEFAULT_MAX_MEMORY, tool_row_lines
from .colour import color_option
from .limits import SIZE, limit_options
from .progress import shows_progress
from .discovery import no_ignore_option
from .reporters import EXIT_UNREADABLE, fail, finish
from .settings import Selection, ignored_text, selected, selection_options

FIELD_HELP = (
    f"Read the field NAME from the record's KEY (repeatable), e.g. --field output=agentMessages; KEY may be a "
    f"dotted path into nested objects, e.g. --field input=turn.userMessage (write a dot inside a key as \\.). "
    f"NAME is one of: {', '.join(FIELD_NAMES)}. A NAME or a KEY may be given once; a record that has both KEY "
    f"and NAME is refused (the rename would hide one of them).")


def field_map_option(ctx, param, pairs):
    try:
        return parse_field_map(list(pairs))
    except ValueError as exc:
        raise click.BadParameter(str(exc)) from None


def scheduler_option(command):
    """--scheduler ADDRESS: a JSONL file's batches of lines go to a Dask cluster's workers. The
    cluster's workers are its own: --jobs beside it is refused (one rule for every command)."""

    @functools.wraps(command)  # (the options given to `command` so far stay on it)
    def checked(*args, **kwargs):
        context = click.get_current_context()
        if kwargs.get("scheduler") is not None and \
                context.get_parameter_source("jobs") not in (None, ParameterSource.DEFAULT):
            raise click.UsageError("--jobs and --scheduler cannot be used together: on a cluster, its workers "
                                   "do the work (start more with `dask worker ADDRESS`); drop --jobs")
        if kwargs.get("scheduler") is None:
            return command(*args, **kwargs)
        with read_on_cluster(kwargs["scheduler"]):  # s3:// objects are read by the workers
            return command(*args, **kwargs)

    return click.option(
        "--scheduler", metavar="ADDRESS",
        help="Read JSONL files on the Dask cluster of the scheduler at ADDRESS (e.g. tcp://host:8786; needs "
             'pip install "chatconv[dask]"): their batches of lines are sent to its workers, which need no view '
             "of the files, and the output is the same as a local run's. URLs (s3://) are read by the workers "
             "themselves: they need the store's credentials, this machine only to write -o s3://. Not with --jobs.")(checked)


def _recording_options(command):
    command = selection_options(command)
    command = click.option("--format", "output_format", type=click.Choice(["jsonl", "table"]), default="jsonl",
                           show_default=True,
                           help="jsonl: one JSON object per line; table: for a person, a header row then aligned "
                                "columns, long values cut with an ellipsis (use jsonl for the whole values).")(command)
    command = click.option("--field", "field_map", multiple=True, metavar="NAME=KEY", callback=field_map_option,
                           help=FIELD_HELP)(command)
    command = click.option("--jobs", type=click.IntRange(min=1), metavar="N", help=JOBS_HELP)(command)
    command = scheduler_option(command)
    command = shows_progress()(command)
    command = limit_options(command)
    command = no_ignore_option(command)
    command = color_option(command)
    return click.argument("paths", nargs=-1, required=True, type=click.Path(allow_dash=True))(command)


_RECORDING_FILE = """PATHS are files, folders (searched for .jsonl, .ndjson and .json files, and .jsonl.gz
    and .jsonl.zst ones, as `validate` searches them) or - for standard input, read in the order found. A file holds one step per
    line or one conversation per line, or (.json) an array of them; legacy shapes are read too.
    A step that is invalid, or whose output cannot be written exactly, is reported on standard
    error and left out (exit status 1); a path that cannot be read is reported and the others
    are read (exit status 2)."""


def _finish(problems: list, unreadable: list, selection: Selection):
    """Report the problems --select / --ignore keep; exit 2 when a path could not be read (never
    ignored), else as finish does."""
    problems, ignored = selected(problems, selection)
    try:
        if unreadable:
            fail(problems + unreadable, EXIT_UNREADABLE)
        finish(problems)
    finally:  # after the problems, as a summary
        if ignored:
            sys.stderr.write(f"({ignored_text(ignored)})\n")


def _write(lines, output_format: str = "jsonl", columns: tuple = ()) -> None:
    out = sys.stdout.buffer
    if output_format == "table":  # the columns' names first, for the person reading
        out.write(table_header(columns))
    for line in lines:
        out.write(line)


@click.command(help=f"""The text of each step's whole output array: {{"conversationId", "stepIndex", "text"}}.

    \b
    Example: chatconv text a.jsonl b.jsonl stepTraces.json --field output=agentMessages

    {_RECORDING_FILE}
    """)
@_recording_options
def text(paths, field_map, output_format, jobs, scheduler, selection):
    problems, unreadable = [], []
    _write(iter_step_rows(paths, "text", field_map, output_format, problems, unreadable, jobs, scheduler=scheduler),
           output_format, TEXT_COLUMNS)
    _finish(problems, unreadable, selection)


@click.command(help=f"""Each tool call with its result, paired by toolCallId across the steps of a conversation.

    \b
    {{"conversationId", "stepIndex", "toolCallId", "toolName", "args", "result", "status"}}
    status is ok, error or unanswered; result is the tool result's output value (null when
    unanswered). Calls are paired within a file: a conversation split across files is paired
    in each. A conversation's calls come out in order, each once it and the calls before it are
    final (answered; or unanswered when the conversation leaves --window or the file ends).
    Results that answer no call and repeated ids are reported on stderr.

    A call waiting for its result holds its id, name and place, not its arguments (read again
    from its line when its row is written); what is held is capped by --max-memory: past it,
    the least recently active conversations are finished early (their waiting calls written
    unanswered, with a warning).

    \b
    Example: chatconv tools runs/ stepTraces.json --field input=turn.userMessage --field output=agentMessages

    {_RECORDING_FILE}
    """)
@_recording_options
@click.option("--window", type=click.IntRange(min=1), default=CONVERSATION_WINDOW, show_default=True,
              help="Conversations followed at once: calls are paired within this many recent conversations.")
@click.option("--max-memory", type=SIZE, default=f"{DEFAULT_MAX_MEMORY >> 20}MiB", show_default=True,
              metavar="SIZE",
              help="What is held between lines, at most (e.g. 256MiB, 1GiB): each conversation's call ids, its "
                   "calls waiting for a result (id, name and place, not their arguments) and the rows waiting "
                   "behind them. Past it, the least recently active conversations are finished early: their "
                   "waiting calls are written unanswered, with a warning, and a later result for one answers no call.")
def tools(paths, field_map, output_format, window, jobs, scheduler, max_memory, selection):
    problems, unreadable = [], []
    _write(tool_row_lines(paths, field_map, window, problems, unreadable, output_format, jobs, max_memory,
                          scheduler=scheduler), output_format, TOOL_COLUMNS)
    _finish(problems, unreadable, selection)


@click.command(help=f"""Dataset items, one per step: {{"id", "prompt", "completion", "metadata"}}.

    id is "<conversation id>-step-<stepIndex>"; a step without a conversationId belongs to the
    file's own conversation, named after the file without its suffix (stdin for -).

    \b
    Example: chatconv dataset runs/ --field output=response > dataset.jsonl

    {_RECORDING_FILE}
    """)
@_recording_options
def dataset(paths, field_map, output_format, jobs, scheduler, selection):
    problems, unreadable = [], []
    _write(iter_step_rows(paths, "dataset", field_map, output_format, problems, unreadable, jobs,
                          scheduler=scheduler), output_format, DATASET_COLUMNS)
    _finish(problems, unreadable, selection)
