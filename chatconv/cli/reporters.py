"""The one place the commands write problems: a reporter per output format (text lines, GitHub
workflow annotations, one JSON object), the summary line, migrate's short form, and the exit
status that follows from what was reported. --max-warnings and the counts by code are
max_warnings.py's.

Exit status: 0 valid (warnings allowed), 1 invalid input, 2 usage error or unreadable input.
"""

from __future__ import annotations

import os
import sys
from typing import BinaryIO, Iterable, NoReturn

import click
import orjson

from ..interrupts import signals_held
from ..problems import Problem, printable, shown_name
from ..sources.writing import write_all
from ..validate import ProblemBlock, Summary
from .settings import ignored_text
from .colour import coloured_text, wants_colour
from .progress import hide_progress
from .max_warnings import WarningCap, count_lines, count_objects, current_cap

EXIT_OK, EXIT_INVALID, EXIT_UNREADABLE = 0, 1, 2


def plural(n: int, word: str, words: str | None = None) -> str:
    return f"{n} {word if n == 1 else words or word + 's'}"


def write_json_line(value) -> None:
    write_all(sys.stdout.buffer, orjson.dumps(value) + b"\n")


def summary_line(summary: Summary, cap: WarningCap | None = None) -> str:
    """`N files, N records: N errors, N warnings`, and why files were skipped, the run stopped,
    or warnings were not printed (--max-warnings)."""
    text = (f"{plural(summary.files, 'file')}, {plural(summary.records, 'record')}: "
            f"{plural(summary.errors, 'error')}, {plural(summary.warnings, 'warning')}")
    if summary.skipped:
        text += f" ({summary.skipped} skipped: not chatconv records)"
    if summary.stopped:
        text += " (stopped early: --max-errors reached)"
    if summary.ignored:
        text += f" ({ignored_text(summary.ignored)})"
    if cap is not None and cap.hidden:
        text += f" ({cap.not_printed_text()})"
    return text


def github_annotation(problem: Problem) -> str:
    # Workflow commands need their property values and message escaped.
    def escape(text: str, prop: bool = False) -> str:
        text = text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")
        return text.replace(":", "%3A").replace(",", "%2C") if prop else text

    level = "error" if problem.is_error else "warning"
    message = printable(f"{problem.path}: {problem.message}" + (f" ({problem.hint})" if problem.hint else ""))
    return (f"::{level} file={escape(printable(shown_name(problem.file)), True)},line={problem.line or 1},"
            f"col={problem.column or 1},title=chatconv::{escape(message)}")


def short_line(file: str, message: str, line: int | None = None, hint: str | None = None,
               severity: str = "error") -> str:
    """migrate's form, which names a file (and a line) but no JSON path: FILE[:LINE]: error: message (hint)."""
    where = f"{shown_name(file)}:{line}" if line is not None else shown_name(file)
    return printable(f"{where}: {severity}: {message}" + (f" ({hint})" if hint else ""))


# Why validate passed over a file found in a folder (Summary.skipped_files)
SKIPPED_REASON = ("no key tells an eval file, a config or a recording, and its name is no eval file's "
                  "(*.eval.yaml, suite.yaml, eval.yaml)")


def skipped_line(file: str) -> str:
    """`FILE: skipped: why`, a line of --show-files."""
    return f"{printable(shown_name(file))}: skipped: {SKIPPED_REASON}"


def _summary_lines(summary: Summary, cap: WarningCap, show_files: bool = False) -> list[str]:
    cap.noted = True
    skipped = [skipped_line(file) for file in summary.skipped_files] if show_files else []
    return [*skipped, summary_line(summary, cap), *count_lines(summary.by_code, cap)]


def summary_on_stderr(summary: Summary, cap: WarningCap, show_files: bool = False) -> None:
    """The summary and the counts by code on standard error, after the data a format writes on
    standard output (github, sarif); with `show_files`, the skipped files before them."""
    hide_progress()
    sys.stdout.flush()
    for line in _summary_lines(summary, cap, show_files):
        click.echo(line, err=True)


class TextReporter:
    """One line per problem (FILE:LINE:COL: severity: PATH: message (hint)), then the summary
    and the counts by code.

    Lines are written to the stream as they come and flushed with the summary, not one by one
    (as click.echo does): a legacy file has a warning on every line. Without colour, the
    workers may write them (`render`; see validate.rendered)."""

    show_files = False  # validate --show-files: the files skipped, each with why, before the summary

    def __init__(self, err: bool = False):
        self.err = err  # the commands that write data on standard output report on standard error
        self.out = sys.stderr if err else sys.stdout
        self.cap = current_cap()
        colour = wants_colour(self.out)
        self.text = coloured_text if colour else Problem.format_text  # colour.py
        self.render = None if colour else "text"
        self.raw = _utf8_bytes(self.out)

    def problem(self, problem: Problem) -> None:
        if self.cap.shows(problem):
            hide_progress()  # a progress bar on the terminal: cleared first (it comes back)
            self.out.write(self.text(problem) + "\n")

    def block(self, block: ProblemBlock) -> None:
        written = self.cap.written(block)
        if written:
            hide_progress()
            if self.raw is not None:  # as the text layer would write them (a legacy file's are tens of MB)
                self.out.flush()
                write_all(self.raw, written)
            else:
                self.out.write(written.decode())

    def summary(self, summary: Summary) -> None:
        hide_progress()
        self.out.write("".join(line + "\n" for line in _summary_lines(summary, self.cap, self.show_files)))
        self.out.flush()


def _utf8_bytes(stream) -> BinaryIO | None:
    """The binary stream under a text stream that writes UTF-8 and "\n" as they are: blocks of
    problem lines (strict UTF-8, which any error handler writes alike) are written to it
    directly; None for any other."""
    encoding = (getattr(stream, "encoding", None) or "").lower().replace("-", "")
    if encoding != "utf8" or os.linesep != "\n":
        return None
    return getattr(stream, "buffer", None)


class GithubReporter:
    """A workflow annotation per problem on standard output; the summary on standard error."""

    render = None  # each problem a Problem
    show_files = False

    def __init__(self):
        self.cap = current_cap()

    def problem(self, problem: Problem) -> None:
        if self.cap.shows(problem):
            hide_progress()
            sys.stdout.write(github_annotation(problem) + "\n")

    def summary(self, summary: Summary) -> None:
        summary_on_stderr(summary, self.cap, self.show_files)


class JsonReporter:
    """One JSON object: the problems (SPEC §7, each with its `code`), then the counts, the counts
    by code (`counts`), the warnings --max-warnings left out (`not_printed`), the problems
    --select / --ignore left out (`ignored`) and the files passed over, each with why
    (`skipped`: always, --show-files or not).

    The problems are written as they come, CHUNK bytes at a time (a legacy file has one on every
    line, and holding them took hundreds of MB): `problems` is the object's first key, as the
    counts are known only at the end. A run that stops after the first problem (Ctrl-C, a usage
    error found mid-run) ends the object without the counts (close_unfinished): it parses, and
    the counts it lacks say it is not whole."""

    render = "json"
    show_files = False

    def __init__(self):
        self.cap = current_cap()
        self.started = False  # the object's start is in `pending`, or written
        self.closed = False  # its end written
        self.pending = bytearray()  # whole problems, each after its comma, not written yet

    def problem(self, problem: Problem) -> None:
        if self.cap.shows(problem):
            self._add(orjson.dumps(problem.to_dict()))

    def block(self, block: ProblemBlock) -> None:
        written = self.cap.written(block)
        if written:  # one object a line: the array's items once the newlines are commas
            self._add(written[:-1].replace(b"\n", b","))

    def _add(self, items: bytes) -> None:
        before = b"," if self.started else _JSON_START
        if len(items) >= CHUNK:  # a block's many problems: written at once, in one write with its comma
            self._write(before + items)
            return
        # One concatenation: an interrupt leaves `pending` with the items whole, or without them.
        self.pending += before + items
        self.started = True
        if len(self.pending) >= CHUNK:
            self._write()

    def _write(self, *more: bytes, closing: bool = False) -> None:
        """What is pending, then `more` (a block's problems after their comma, or the end)."""
        hide_progress()  # standard output may be the terminal the bar is on
        # Ctrl-C cannot cut a write: the output ends after a whole problem. Held a chunk at a time (the
        # two calls take about as long as a problem takes to write); a reader that stops reading (a
        # full pipe) holds them back until it reads on or goes away (SIGPIPE then ends the run).
        with signals_held():
            chunk, self.pending = self.pending, bytearray()
            for data in (chunk, *more):
                write_all(sys.stdout.buffer, data)
            self.started = True
            self.closed = closing

    def summary(self, summary: Summary) -> None:
        self.cap.noted = True
        rest = orjson.dumps({"files": summary.files, "records": summary.records, "errors": summary.errors,
                             "warnings": summary.warnings, "counts": count_objects(summary.by_code, self.cap),
                             "not_printed": sum(self.cap.hidden.values()), "ignored": summary.ignored,
                             "skipped": [{"file": file, "reason": SKIPPED_REASON} for file in summary.skipped_files]})
        self._close(b"]," + rest[1:] + b"\n")  # rest's keys after the array's end

    def close_unfinished(self) -> None:
        """End the object begun, without the counts: the run stops before its summary. Standard
        output that failed (a full disk) is left as it is: that failure is the one told."""
        if self.started and not self.closed:
            try:
                self._close(b"]}\n")
            except OSError:
                pass

    def _close(self, end: bytes) -> None:
        """Write what is pending, then `end`; the object is closed once both are written (an
        interrupt before leaves it to close_unfinished, whole)."""
        self._write(end if self.started else _JSON_START + end, closing=True)


_JSON_START = b'{"problems":['
CHUNK = 1 << 16  # bytes of problems the JSON output writes at a time


class ShortReporter:
    """migrate's problems, on standard error: FILE[:LINE]: error: message (hint)."""

    def __init__(self):
        self.cap = current_cap()

    def problem(self, problem: Problem) -> None:
        if self.cap.shows(problem):
            hide_progress()
            click.echo(short_line(problem.file, problem.message, problem.line, problem.hint, problem.severity),
                       err=True)


REPORTERS = {"text": TextReporter, "json": JsonReporter, "github": GithubReporter}


def fail(problems: Iterable[Problem], status: int) -> NoReturn:
    """Report the problems that stop a command on standard error, and exit with `status`."""
    hide_progress()
    reporter = TextReporter(err=True)
    for problem in problems:
        reporter.problem(problem)
    sys.exit(status)


def finish(problems: list[Problem]) -> NoReturn:
    """Report a command's problems on standard error; exit 1 if any is an error, else 0."""
    fail(problems, EXIT_INVALID if any(p.is_error for p in problems) else EXIT_OK)
