"""`chatconv text`, `tools` and `dataset`: rows made of a recording's steps, one per line or as a
table; a step that cannot be read or written is reported on standard error and left out.
"""

from __future__ import annotations

import sys

import click
import orjson

from ..problems import ChatconvError
from ..messages import CONVERSATION_WINDOW
from ..recordings import (FIELD_NAMES, dataset_item, iter_paths_steps, parse_field_map, step_row_json, step_text,
                          tool_rows)
from .reporters import EXIT_UNREADABLE, fail, finish

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


def _recording_options(command):
    command = click.option("--format", "output_format", type=click.Choice(["jsonl", "table"]), default="jsonl",
                           show_default=True, help="jsonl: one JSON object per line; table: for a person.")(command)
    command = click.option("--field", "field_map", multiple=True, metavar="NAME=KEY", callback=field_map_option,
                           help=FIELD_HELP)(command)
    return click.argument("paths", nargs=-1, required=True, type=click.Path(allow_dash=True))(command)


_RECORDING_FILE = """PATHS are files, folders (searched for .jsonl, .ndjson and .json files, and .jsonl.gz
    and .jsonl.zst ones, as `validate` searches them) or - for standard input, read in the order found. A file holds one step per
    line or one conversation per line, or (.json) an array of them; legacy shapes are read too.
    A step that is invalid, or whose output cannot be written exactly, is reported on standard
    error and left out (exit status 1); a path that cannot be read is reported and the others
    are read (exit status 2)."""


def _finish(problems: list, unreadable: list):
    """Report the problems; exit 2 when a path could not be read, else as finish does."""
    if unreadable:
        fail(problems + unreadable, EXIT_UNREADABLE)
    finish(problems)


def _emit_step_row(item, row: dict, output_format: str, columns: tuple, problems) -> None:
    """Write a row made of one step, unless it cannot be written exactly: then a problem."""
    try:
        line = step_row_json(item, row)
    except ChatconvError as exc:
        problems.extend(exc.problems)
        return
    _emit(row, output_format, columns, line)


def _emit(row: dict, output_format: str, columns: tuple, line: bytes | None = None) -> None:
    if output_format == "jsonl":
        sys.stdout.buffer.write((line or orjson.dumps(row)) + b"\n")
        return
    cells = []
    for column in columns:
        value = row[column]
        text = value if isinstance(value, str) else orjson.dumps(value).decode()
        text = text.replace("\n", " ")
        cells.append(text if len(text) <= 60 else text[:57] + "...")
    click.echo("  ".join(cells))


@click.command(help=f"""The text of each step's whole output array: {{"conversationId", "stepIndex", "text"}}.

    \b
    Example: chatconv text a.jsonl b.jsonl stepTraces.json --field output=agentMessages

    {_RECORDING_FILE}
    """)
@_recording_options
def text(paths, field_map, output_format):
    problems, unreadable = [], []
    for item in iter_paths_steps(paths, field_map, problems, unreadable):
        row = {"conversationId": item.conversation_id, "stepIndex": item.step["stepIndex"],
               "text": step_text(item.step)}
        _emit_step_row(item, row, output_format, ("conversationId", "stepIndex", "text"), problems)
    _finish(problems, unreadable)


@click.command(help=f"""Each tool call with its result, paired by toolCallId across the steps of a conversation.

    \b
    {{"conversationId", "stepIndex", "toolCallId", "toolName", "args", "result", "status"}}
    status is ok, error or unanswered; result is the tool result's output value (null when
    unanswered). Calls are paired within a file: a conversation split across files is paired
    in each. Calls come out per file, per conversation, in order. Results that answer no call
    and repeated ids are reported on stderr.

    \b
    Example: chatconv tools runs/ stepTraces.json --field input=turn.userMessage --field output=agentMessages

    {_RECORDING_FILE}
    """)
@_recording_options
@click.option("--window", type=click.IntRange(min=1), default=CONVERSATION_WINDOW, show_default=True,
              help="Conversations followed at once: calls are paired within this many recent conversations.")
def tools(paths, field_map, output_format, window):
    problems, unreadable = [], []
    for row in tool_rows(paths, field_map, window, problems, unreadable):
        _emit(row, output_format, ("conversationId", "stepIndex", "toolName", "status", "toolCallId"))
    _finish(problems, unreadable)


@click.command(help=f"""Dataset items, one per step: {{"id", "prompt", "completion", "metadata"}}.

    id is "<conversation id>-step-<stepIndex>"; a step without a conversationId belongs to the
    file's own conversation, named after the file without its suffix (stdin for -).

    \b
    Example: chatconv dataset runs/ --field output=response > dataset.jsonl

    {_RECORDING_FILE}
    """)
@_recording_options
def dataset(paths, field_map, output_format):
    problems, unreadable = [], []
    for item in iter_paths_steps(paths, field_map, problems, unreadable):
        _emit_step_row(item, dataset_item(item), output_format, ("id", "prompt", "completion"), problems)
    _finish(problems, unreadable)
