"""Colour in the text output, on a terminal only: `error` red, `warning` yellow, the place bold.

Whether to colour: --color always or never when given; else none when NO_COLOR is set and not
empty (no-color.org), colour when FORCE_COLOR is set and not empty, else colour only when the
stream is a terminal. Output that is not coloured is the plain text contract byte for byte.
"""

from __future__ import annotations

import os

import click

from ..problems import Problem
from .progress import is_terminal

COLOR_CHOICES = ("auto", "always", "never")
_CHOICE = "chatconv.color"
_SEVERITY_COLOURS = {"error": "red", "warning": "yellow"}


def color_option(command):
    """--color auto|always|never for a command whose problems TextReporter writes."""

    def remember(ctx, param, value):
        ctx.find_root().meta[_CHOICE] = value
        return value

    return click.option(
        "--color", type=click.Choice(COLOR_CHOICES), default="auto", show_default=True, expose_value=False,
        callback=remember, is_eager=True,
        help="Colour problems (error red, warning yellow): auto colours on a terminal only, and not when the "
             "NO_COLOR environment variable is set (FORCE_COLOR colours anyway). Piped or redirected output "
             "is plain text.")(command)


def wants_colour(stream) -> bool:
    """Whether text written to `stream` by the command running is coloured."""
    context = click.get_current_context(silent=True)
    choice = context.find_root().meta.get(_CHOICE, "auto") if context is not None else "auto"
    if choice != "auto":
        return choice == "always"
    if os.environ.get("NO_COLOR"):
        return False
    if os.environ.get("FORCE_COLOR"):
        return True
    return is_terminal(stream)


def coloured_text(problem: Problem) -> str:
    """The problem's text line with its place bold and its severity coloured."""
    text = problem.format_text()
    where = problem.where  # as format_text writes it (a name that is not UTF-8 escaped)
    rest = text[len(where) + 2 + len(problem.severity):]  # after "WHERE: severity"
    return (click.style(where, bold=True) + ": "
            + click.style(problem.severity, fg=_SEVERITY_COLOURS.get(problem.severity), bold=True) + rest)
