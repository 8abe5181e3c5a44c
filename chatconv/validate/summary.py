"""What a validate run counts: files, records, errors and warnings (per code too), files passed
over or unreadable."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from ..problems import Problem
from .rendered import ProblemBlock


@dataclass
class Summary:
    """What a run counted: files and records read, errors and warnings (and per code, in
    `by_code`), files skipped or unreadable, and whether --max-errors stopped it."""

    files: int = 0
    records: int = 0
    errors: int = 0
    warnings: int = 0
    skipped_files: list[str] = field(default_factory=list)  # files found in folders that hold no chatconv record
    unreadable: int = 0
    stopped: bool = False  # --max-errors was reached
    ignored: int = 0  # problems the run's `keep` left out (--select / --ignore): neither counted nor yielded
    by_code: Counter = field(default_factory=Counter)  # (code, severity) -> problems reported

    @property
    def skipped(self) -> int:
        return len(self.skipped_files)

    def count(self, problem: Problem) -> None:
        self._add(problem.code, problem.severity, 1)

    def count_block(self, block: ProblemBlock) -> None:
        for (code, severity), count in block.severities().items():
            self._add(code, severity, count)

    def _add(self, code: str | None, severity: str, count: int) -> None:
        if severity == "error":
            self.errors += count
        else:
            self.warnings += count
        self.by_code[code, severity] += count
