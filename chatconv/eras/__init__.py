"""Eval-file eras: each way AgentV's eval files have been written, as data behind one protocol.

Four eras, oldest first (SPEC §1a): `testcases` (v1), `evalcases` (v2, the internal shape of
SPEC §1), `tests` (v3 to v4.42) and `current` (Promptfoo-aligned). An era says how its files
are recognised, which schema checks them and their config files, and which keys mark it. A
file's era is read from its `$schema` when that names one, else from its keys, newest era
first; a caller may force one (`--era`). Reading an era's cases is cases/'s work.
"""

from __future__ import annotations

from typing import Any, Protocol

from . import current, evalcases, testcases, tests


class Era(Protocol):
    NAME: str  # e.g. "tests": what --era takes
    TITLE: str  # one line for `chatconv schema`
    SCHEMA: str  # the schema a file of the era is checked against
    CONFIG_SCHEMA: str  # the schema of the era's config files
    SCHEMA_IDS: tuple[str, ...]  # `$schema` values that name the era
    CASE_LISTS: tuple[str, ...]  # the top-level keys that hold its cases
    MARKED_BY: str  # the keys that tell a file of the era, in words

    def detect(self, data: dict) -> bool:
        """Whether a parsed eval file (an object) is written in this era, told from its keys."""


ERAS: tuple[Era, ...] = (testcases, evalcases, tests, current)  # oldest first
NEWEST: Era = ERAS[-1]  # where a migration goes unless told to stop earlier


def era_named(name: str) -> Era:
    """The era called `name`; KeyError names the known ones."""
    for era in ERAS:
        if era.NAME == name:
            return era
    raise KeyError(f"no era {name!r}; known: {', '.join(era_names())}")


def era_names() -> list[str]:
    return [era.NAME for era in ERAS]


def era_index(era: Era) -> int:
    """The era's place in time: 0 for the oldest."""
    return ERAS.index(era)


def declared_era(data: Any) -> Era | None:
    """The era a file's `$schema` names, if it names one (an id, or a URL or path ending in one)."""
    declared = data.get("$schema") if isinstance(data, dict) else None
    if not isinstance(declared, str):
        return None
    name = declared.strip().rsplit("/", 1)[-1].removesuffix(".json")
    for era in ERAS:
        if name in era.SCHEMA_IDS or name == era.SCHEMA:  # an id alone is its own last part
            return era
    return None


# Every era's detect asks for one of these keys (its case lists, or the current era's marks), and
# declared_era for `$schema`: a record with none of them is told apart at the cost of one look.
_ERA_KEYS = frozenset({"$schema", *current.MARKS, *(key for era in ERAS for key in era.CASE_LISTS)})


def era_of(data: Any, forced: str | None = None) -> Era | None:
    """The era a parsed eval file is written in, or None when no era recognises it. `forced`
    (an era's name) wins; then the era its `$schema` names; then its keys, newest era first."""
    if forced is not None:
        return era_named(forced)
    if not isinstance(data, dict) or _ERA_KEYS.isdisjoint(data):
        return None
    return declared_era(data) or next((era for era in reversed(ERAS) if era.detect(data)), None)


__all__ = ["ERAS", "NEWEST", "Era", "declared_era", "era_index", "era_named", "era_names", "era_of"]
