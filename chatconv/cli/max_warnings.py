"""--max-warnings: the warning lines each code prints at most (WarningCap), the option that
sets it for a command, and the counts by code the summaries give, with what the cap held back.
"""

from __future__ import annotations

import functools
from collections import Counter

import click

from ..problems import Problem
from ..validate import ProblemBlock
from .progress import hide_progress
from .settings import current_settings


def count_lines(by_code: Counter, cap: WarningCap | None = None) -> list[str]:
    """One line per (code, severity) reported, the most frequent first: `  29,060 × legacy-shape
    (warning)`, with how many of them --max-warnings left unprinted."""
    lines = []
    for code, severity, count, hidden in _counted(by_code, cap):
        note = f"; {hidden:,} not printed" if hidden else ""
        lines.append(f"  {count:,} × {code or 'no code'} ({severity}{note})")
    return lines


def count_objects(by_code: Counter, cap: WarningCap | None = None) -> list[dict]:
    """The counts by code of the JSON output: [{"code", "severity", "count", "not_printed"}]."""
    return [{"code": code, "severity": severity, "count": count, "not_printed": hidden}
            for code, severity, count, hidden in _counted(by_code, cap)]


def _counted(by_code: Counter, cap: WarningCap | None) -> list[tuple]:
    """(code, severity, count, how many of them the cap held back), the most frequent first."""
    return [(code, severity, count, cap.hidden.get(code, 0) if cap is not None and severity == "warning" else 0)
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
        return self._shows(problem.code, problem.severity)

    def _shows(self, code: str | None, severity: str) -> bool:
        if self.limit is None or severity != "warning":
            return True
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
        return b"".join([line for code, severity, line in block.lines() if self._shows(code, severity)])

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
