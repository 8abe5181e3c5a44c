"""The one place the commands write problems: a reporter per output format (text lines, GitHub
workflow annotations, one JSON object), the summary line and the counts by code, migrate's
short form, --max-warnings, and the exit status that follows from what was reported.

Exit status: 0 valid (warnings allowed), 1 invalid input, 2 usage error or unreadable input.
"""

from __future__ import annotations

import functools
import os
import sys
from collections import Counter
from typing import BinaryIO, Iterable, NoReturn

import click
import orjson

from ..problems import Problem, shown_name
from ..sources.writing import write_all
from ..validate import ProblemBlock, Summary
from .settings import current_settings, ignored_text
from .colour import coloured_text, wants_colour
from .progress import hide_progress

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


def count_lines(by_code: Counter, cap: WarningCap | None = None) -> list[str]:
    """One line per (code, severity) reported, the most frequent first: `  29,060 × legacy-shape
    (warning)`, with how many of them --max-warnings left unprinted."""
    lines = []
    for (code, severity), count in sorted(by_code.items(), key=lambda item: (-item[1], str(item[0]))):
        hidden = cap.hidden.get(code, 0) if cap is not None and severity == "warning" else 0
        note = f"; {hidden:,} not printed" if hidden else ""
        lines.append(f"  {count:,} × {code or 'no code'} ({severity}{note})")
    return lines


def count_objects(by_code: Counter, cap: WarningCap | None = None) -> list[dict]:
    """The counts by code of the JSON output: [{"code", "severity", "count", "not_printed"}]."""
    return [{"code": code, "severity": severity, "count": count,
             "not_printed": cap.hidden.get(code, 0) if cap is not None and severity == "warning" else 0}
            for (code, severity), count in sorted(by_code.items(), key=lambda item: (-item[1], str(item[0])))]


class WarningCap:
    """--max-warnings N: at most N warning lines of each code are printed; the others are
    counted, and the counts stay whole. Errors are never held back: a CI run that fails must
    show every reason it failed (--max-errors stops a run instead)."""

    def __init__(self, limit: int | None = None):
        self.limit = limit
        self.printed: Counter = Counter()  # warning lines printed, by code
        self.hidden: Counter = Counter()  # warning lines held back, by code
        self.noted = False  # the summary has said how many were held back

    def shows(self, problem: Problem) -> bool:
        """Whether to print the problem; counts it as held back when not."""
        if self.limit is None or problem.severity != "warning":
            return True
        code = problem.code
        if self.printed[code] < self.limit:
            self.printed[code] += 1
            return True
        self.hidden[code] += 1
        return False

    def written(self, block: ProblemBlock) -> bytes:
        """The lines of a block of problems to print: all but the warnings past the limit, as
        `shows` would leave them, counted alike."""
        if self.limit is None:
            return block.written()
        printed, limit = self.printed, self.limit
        counts = block.severities()
        warned = {code: count for (code, severity), count in counts.items() if severity == "warning"}
        if all(printed[code] + count <= limit for code, count in warned.items()):
            printed.update(warned)
            return block.written()
        if len(warned) == len(counts) and all(printed[code] >= limit for code in warned):
            self.hidden.update(warned)  # warnings only, all past the limit: a legacy file's, mostly
            return b""
        kept = []
        for code, severity, line in block.lines():
            if severity != "warning" or printed[code] < limit:
                printed[code] += severity == "warning"
                kept.append(line)
            else:
                self.hidden[code] += 1
        return b"".join(kept)

    def not_printed_text(self) -> str:
        total = sum(self.hidden.values())
        return f"{total:,} {'warning' if total == 1 else 'warnings'} not printed: --max-warnings {self.limit}"

    def note(self) -> list[str]:
        """What the summary says of the warnings held back, once: a command whose summary line
        does not know of the cap (import) gets these lines after it."""
        if self.noted or not self.hidden:
            return []
        self.noted = True
        by_code = Counter({(code, "warning"): self.printed[code] + hidden for code, hidden in self.hidden.items()})
        return [f"({self.not_printed_text()})", *count_lines(by_code, self)]


_CAP = "chatconv.max_warnings"


def current_cap() -> WarningCap:
    """The --max-warnings of the command running (max_warnings_option), else none."""
    context = click.get_current_context(silent=True)
    cap = context.find_root().meta.get(_CAP) if context is not None else None
    return cap if cap is not None else WarningCap()


def max_warnings_option(command):
    """The --max-warnings option of a command that reports problems (validate, migrate, import).

    Its reporters (TextReporter, GithubReporter, JsonReporter, ShortReporter) made while it runs
    print at most N warning lines of each code; the summary keeps the whole counts and says how
    many were not printed. A summary line that does not know of the cap is followed by that note.
    """

    @functools.wraps(command)
    def run(*args, max_warnings=None, **kwargs):
        cap = WarningCap(max_warnings if max_warnings is not None else current_settings().max_warnings)
        click.get_current_context().find_root().meta[_CAP] = cap
        try:
            return command(*args, **kwargs)
        finally:
            hide_progress()
            for line in cap.note():
                click.echo(line, err=True)

    return click.option(
        "--max-warnings", type=click.IntRange(min=0), metavar="N",
        help="Print at most N warnings of each code (e.g. 0: none): a legacy file warns on every line. "
             "The counts stay whole, and the summary says how many were not printed. Errors are "
             "always printed (see --max-errors, where there is one, to stop early). "
             "Default: max-warnings of [tool.chatconv] in pyproject.toml, else no limit.")(run)


def github_annotation(problem: Problem) -> str:
    # Workflow commands need their property values and message escaped.
    def escape(text: str, prop: bool = False) -> str:
        text = text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")
        return text.replace(":", "%3A").replace(",", "%2C") if prop else text

    level = "error" if problem.is_error else "warning"
    message = f"{problem.path}: {problem.message}" + (f" ({problem.hint})" if problem.hint else "")
    return (f"::{level} file={escape(shown_name(problem.file), True)},line={problem.line or 1},"
            f"col={problem.column or 1},title=chatconv::{escape(message)}")


def short_line(file: str, message: str, line: int | None = None, hint: str | None = None,
               severity: str = "error") -> str:
    """migrate's form, which names a file (and a line) but no JSON path: FILE[:LINE]: error: message (hint)."""
    where = f"{shown_name(file)}:{line}" if line is not None else shown_name(file)
    return f"{where}: {severity}: {message}" + (f" ({hint})" if hint else "")


def _summary_lines(summary: Summary, cap: WarningCap) -> list[str]:
    cap.noted = True
    return [summary_line(summary, cap), *count_lines(summary.by_code, cap)]


def summary_on_stderr(summary: Summary, cap: WarningCap) -> None:
    """The summary and the counts by code on standard error, after the data a format writes on
    standard output (github, sarif)."""
    hide_progress()
    sys.stdout.flush()
    for line in _summary_lines(summary, cap):
        click.echo(line, err=True)


class TextReporter:
    """One line per problem (FILE:LINE:COL: severity: PATH: message (hint)), then the summary
    and the counts by code.

    Lines are written to the stream as they come and flushed with the summary, not one by one
    (as click.echo does): a legacy file has a warning on every line. Without colour, the
    workers may write them (`render`; see validate.rendered)."""

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
        self.out.write("".join(line + "\n" for line in _summary_lines(summary, self.cap)))
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

    def __init__(self):
        self.cap = current_cap()

    def problem(self, problem: Problem) -> None:
        if self.cap.shows(problem):
            hide_progress()
            sys.stdout.write(github_annotation(problem) + "\n")

    def summary(self, summary: Summary) -> None:
        summary_on_stderr(summary, self.cap)


class JsonReporter:
    """One object at the end: the counts and the problems (SPEC §7, each with its `code`), and,
    added to it, the counts by code (`counts`), the warnings --max-warnings left out
    (`not_printed`) and the problems --select / --ignore left out (`ignored`)."""

    render = "json"

    def __init__(self):
        self.problems: list[dict | bytes] = []  # a problem's object, or a block's, one per line
        self.cap = current_cap()

    def problem(self, problem: Problem) -> None:
        if self.cap.shows(problem):
            self.problems.append(problem.to_dict())

    def block(self, block: ProblemBlock) -> None:
        written = self.cap.written(block)
        if written:
            self.problems.append(written)

    def summary(self, summary: Summary) -> None:
        self.cap.noted = True
        hide_progress()
        write_json_line({"files": summary.files, "records": summary.records, "errors": summary.errors,
                         "warnings": summary.warnings, "problems": _json_array(self.problems),
                         "counts": count_objects(summary.by_code, self.cap),
                         "not_printed": sum(self.cap.hidden.values()), "ignored": summary.ignored})


def _json_array(problems: list[dict | bytes]) -> list[dict] | orjson.Fragment:
    """The problems as the JSON output's array: as written by orjson, and as blocks wrote them."""
    if all(problem.__class__ is dict for problem in problems):
        return problems
    items = (orjson.dumps(problem) if problem.__class__ is dict else problem[:-1].replace(b"\n", b",")
             for problem in problems)
    return orjson.Fragment(b"[" + b",".join(items) + b"]")


class ShortReporter:
    """migrate's problems, on standard error: FILE: error: message (hint)."""

    def __init__(self):
        self.cap = current_cap()

    def problem(self, problem: Problem) -> None:
        if self.cap.shows(problem):
            hide_progress()
            click.echo(short_line(problem.file, problem.message, hint=problem.hint, severity=problem.severity),
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
