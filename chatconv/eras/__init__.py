"""Eval-file eras: each way AgentV's eval files have been written, behind one small protocol.

An era says how its files are recognised (kinds.detect_kind asks every era), which schema
checks them, and where their cases are. Today chatconv reads two: the `evalcases` era, the
internal shape every later stage reads, and the older spellings that migration 0003 upgrades
to it (read as upgraded by validate, rewritten by `chatconv migrate`). A new era is a new
module listed in ERAS.
"""

from __future__ import annotations

from typing import Any, Iterator, Protocol

from . import evalcases, spellings


class Era(Protocol):
    NAME: str  # e.g. "evalcases"
    SCHEMA: str  # the schema a file of the era is checked against
    CASE_LISTS: tuple[str, ...]  # the top-level keys that hold its cases

    def detect(self, data: Any) -> bool:
        """Whether a parsed eval file is written in this era."""


ERAS: tuple[Era, ...] = (evalcases, spellings)


def era_of(data: Any) -> Era | None:
    """The era a parsed eval file is written in, or None when no era recognises it."""
    return next((era for era in ERAS if era.detect(data)), None)


def iter_cases(data: Any) -> Iterator[tuple[tuple, dict]]:
    """(JSON path, case) of each case (an object) of an eval file in the internal shape; anything
    else is the schema's to report."""
    return evalcases.iter_cases(data)


__all__ = ["ERAS", "Era", "era_of", "iter_cases"]
