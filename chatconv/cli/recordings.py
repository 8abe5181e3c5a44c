"""`chatconv text`, `tools` and `dataset`: rows made of a recording's steps, one per line or as a
table; a step that cannot be read or written is reported on standard error and left out.
"""

from __future__ import annotations

import sys

import click
import orjson

from ..problems import ChatconvError, UnreadableInput
from ..messages import CONVERSATION_WINDOW
from ..recordings import (FIELD_NAMES, dataset_item, iter_recording_steps, parse_field_map, step_row_json, step_text,
                          tool_rows)
from .reporters import EXIT_UNREADABLE, fail, finish

_FIELD_HELP = (
    f"Read the step field NAME from the record's KEY (repeatable), e.g. --field output=response. NAME is one "
    f"of: {', '.join(FIELD_NAMES)}. A NAME or a KEY may be given once; a record that has both KEY and NAME is "
    f"refused (the rename would hide one of them).")


def _field_map(ctx, param, pairs):
    try:
        return parse_field_map(list(pairs))
    except ValueError as exc:
        raise click.BadParameter(str(exc)) from None


def _recording_options(command):
    command = click.option("--format", "output_format", type=click.Choice(["jsonl", "table"]), default="jsonl",
                           show_default=True, help="jsonl: one JSON object per line; table: for a person.")(command)
    command = click.option("--field", "field_map", multiple=True, metavar="NAME=KEY", callback=_field_map,
                           help=_FIELD_HELP)(command)
    return click.argument("file", type=click.Path(dir_okay=False, allow_dash=True))(command)


_RECORDING_FILE = """FILE (- for standard input) holds one step per line or one conversation per line; legacy
    shapes are read too. A step that is invalid, or whose output cannot be written exactly, is
    reported on standard error and left out (exit status 1)."""


def _readable(items):
    """The steps or rows of a recording; a file that cannot be read ends the command (status 2)."""
    try:
        yield from items
    except UnreadableInput as exc:
        fail(exc.problems, EXIT_UNREADABLE)


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

    {_RECORDING_FILE}
    """)
@_recording_options
def text(file, field_map, output_format):
    problems = []
    for item in _readable(iter_recording_steps(file, field_map, problems)):
        row = {"conversationId": item.conversation_id, "stepIndex": item.step["stepIndex"],
               "text": step_text(item.step)}
        _emit_step_row(item, row, output_format, ("conversationId", "stepIndex", "text"), problems)
    finish(problems)


@click.command(help=f"""Each tool call with its result, paired by toolCallId across the steps of a conversation.

    \b
    {{"conversationId", "stepIndex", "toolCallId", "toolName", "args", "result", "status"}}
    status is ok, error or unanswered; result is the tool result's output value (null when
    unanswered). Calls come out per conversation, in order. Results that answer no call and
    repeated ids are reported on stderr.

    {_RECORDING_FILE}
    """)
@_recording_options
@click.option("--window", type=click.IntRange(min=1), default=CONVERSATION_WINDOW, show_default=True,
              help="Conversations followed at once: calls are paired within this many recent conversations.")
def tools(file, field_map, output_format, window):
    problems = []
    for row in _readable(tool_rows(file, field_map, window, problems)):
        _emit(row, output_format, ("conversationId", "stepIndex", "toolName", "status", "toolCallId"))
    finish(problems)


@click.command(help=f"""Dataset items, one per step: {{"id", "prompt", "completion", "metadata"}}.

    id is "<conversation id>-step-<stepIndex>"; a step without a conversationId belongs to the
    file's own conversation, named after the file without its suffix (stdin for -).

    {_RECORDING_FILE}
    """)
@_recording_options
def dataset(file, field_map, output_format):
    problems = []
    for item in _readable(iter_recording_steps(file, field_map, problems)):
        _emit_step_row(item, dataset_item(item), output_format, ("id", "prompt", "completion"), problems)
    finish(problems)
