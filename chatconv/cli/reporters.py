"""The one place the commands write problems: a reporter per output format (text lines, GitHub
workflow annotations, one JSON object), the summary line, migrate's short form, and the exit
status that follows from what was reported.

Exit status: 0 valid (warnings allowed), 1 invalid input, 2 usage error or unreadable input.
"""

from __future__ import annotations

import sys
from typing import Iterable, NoReturn

import click
import orjson

from ..problems import Problem
from ..validate import Summary

EXIT_OK, EXIT_INVALID, EXIT_UNREADABLE = 0, 1, 2


def plural(n: int, word: str, words: str | None = None) -> str:
    return f"{n} {word if n == 1 else words or word + 's'}"


def write_json_line(value) -> None:
    sys.stdout.buffer.write(orjson.dumps(value) + b"\n")


def summary_line(summary: Summary) -> str:
    """`N files, N records: N errors, N warnings`, and why files were skipped or the run stopped."""
    text = (f"{plural(summary.files, 'file')}, {plural(summary.records, 'record')}: "
            f"{plural(summary.errors, 'error')}, {plural(summary.warnings, 'warning')}")
    if summary.skipped:
        text += f" ({summary.skipped} skipped: not chatconv records)"
    if summary.stopped:
        text += " (stopped early: --max-errors reached)"
    return text


def github_annotation(problem: Problem) -> str:
    # Workflow commands need their property values and message escaped.
    def escape(text: str, prop: bool = False) -> str:
        text = text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")
        return text.replace(":", "%3A").replace(",", "%2C") if prop else text

    level = "error" if problem.is_error else "warning"
    message = f"{problem.path}: {problem.message}" + (f" ({problem.hint})" if problem.hint else "")
    return (f"::{level} file={escape(problem.file, True)},line={problem.line or 1},"
            f"col={problem.column or 1},title=chatconv::{escape(message)}")


def short_line(file: str, message: str, line: int | None = None, hint: str | None = None) -> str:
    """migrate's form, which names a file (and a line) but no JSON path: FILE[:LINE]: error: message (hint)."""
    where = f"{file}:{line}" if line is not None else file
    return f"{where}: error: {message}" + (f" ({hint})" if hint else "")


class TextReporter:
    """One line per problem (FILE:LINE:COL: severity: PATH: message (hint)), then the summary."""

    def __init__(self, err: bool = False):
        self.err = err  # the commands that write data on standard output report on standard error

    def problem(self, problem: Problem) -> None:
        click.echo(problem.format_text(), err=self.err)

    def summary(self, summary: Summary) -> None:
        click.echo(summary_line(summary), err=self.err)


class GithubReporter:
    """A workflow annotation per problem on standard output; the summary on standard error."""

    def problem(self, problem: Problem) -> None:
        click.echo(github_annotation(problem))

    def summary(self, summary: Summary) -> None:
        click.echo(summary_line(summary), err=True)


class JsonReporter:
    """One object at the end: the counts and every problem (SPEC §7)."""

    def __init__(self):
        self.problems: list[dict] = []

    def problem(self, problem: Problem) -> None:
        self.problems.append(problem.to_dict())

    def summary(self, summary: Summary) -> None:
        write_json_line({"files": summary.files, "records": summary.records, "errors": summary.errors,
                         "warnings": summary.warnings, "problems": self.problems})


class ShortReporter:
    """migrate's problems, on standard error: FILE: error: message (hint)."""

    def problem(self, problem: Problem) -> None:
        click.echo(short_line(problem.file, problem.message, hint=problem.hint), err=True)


REPORTERS = {"text": TextReporter, "json": JsonReporter, "github": GithubReporter}


def fail(problems: Iterable[Problem], status: int) -> NoReturn:
    """Report the problems that stop a command on standard error, and exit with `status`."""
    reporter = TextReporter(err=True)
    for problem in problems:
        reporter.problem(problem)
    sys.exit(status)


def finish(problems: list[Problem]) -> NoReturn:
    """Report a command's problems on standard error; exit 1 if any is an error, else 0."""
    fail(problems, EXIT_INVALID if any(p.is_error for p in problems) else EXIT_OK)
