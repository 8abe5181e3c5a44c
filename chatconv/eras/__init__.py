"""Eval-file eras: each way AgentV's eval files have been written, behind one small protocol.

An era says how its files are recognised, which schema checks them, where their cases are, and
how a file of the era becomes the shape every later stage reads (the `evalcases` era's: the
internal case of prompt/). Today chatconv reads two: the `evalcases` era itself, and the older
spellings that migration 0003 upgrades. A new era is a new module listed in ERAS.
"""

from __future__ import annotations

from typing import Any, Iterator, Protocol

from . import evalcases, spellings


class Era(Protocol):
    NAME: str  # e.g. "evalcases"
    SCHEMA: str  # the schema a file of the era is checked against once in the internal shape

    def detect(self, data: Any) -> bool:
        """Whether a parsed eval file is written in this era."""

    def to_internal(self, data: Any) -> Any:
        """The file in the internal (`evalcases`) shape; the data may be changed in place."""


ERAS: tuple[Era, ...] = (evalcases, spellings)


def era_of(data: Any) -> Era | None:
    """The era a parsed eval file is written in, or None when no era recognises it."""
    return next((era for era in ERAS if era.detect(data)), None)


def iter_cases(data: Any) -> Iterator[tuple[tuple, dict]]:
    """(JSON path, case) of each case (an object) of an eval file in the internal shape."""
    return evalcases.iter_cases(data)


__all__ = ["ERAS", "Era", "era_of", "iter_cases"]
