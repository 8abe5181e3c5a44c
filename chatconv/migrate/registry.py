"""The migrations: the numbered modules of migrations/, found, ordered and chained.

Each module says which record kinds it upgrades (KINDS), what shape it upgrades (SUMMARY),
finds that shape itself (`detect(record)` -> the JSON path of the first spot, or None) and
upgrades one record in place (`upgrade(record)` -> record). An eval-file migration also says
which eras it moves a file between (`ERAS = ("tests", "current")`; from == to for an in-era
spelling fix): eval files only ever move forward, one era at a time (SPEC §1a). Migrations run
in era order (an era's in-era spellings before the move out of it), the others in the order of
their numbers. A migration that meets what has no home in the era it moves to raises Refused:
the file is left as it is, never rewritten with something dropped.
"""

from __future__ import annotations

import importlib.util
import re
from dataclasses import dataclass
from functools import cache
from typing import Any, Callable

from ..eras import ERAS, NEWEST, Era, era_index, era_named
from ..kinds import detect_kind
from ..problems import json_path
from ..schemas import resource_dir

_MODULE_NAME = re.compile(r"^(\d{4})_[a-z0-9_]+\.py$")


class Refused(Exception):
    """A record a migration will not rewrite: the message says what to do, about `path` (the
    JSON path of the record as the migration met it, when it names one). `moved_to` is the era
    an earlier migration of the run had moved the record to (its path is then that era's, not
    the file's), None while the record is as read."""

    def __init__(self, message: str, path: tuple | None = None):
        super().__init__(message)
        self.path = path
        self.moved_to: str | None = None

    def __str__(self) -> str:
        if self.path is None:
            return self.args[0]
        moved = f" (as moved to the {self.moved_to} era)" if self.moved_to else ""
        return f"{json_path(self.path)}{moved}: {self.args[0]}"


@dataclass(frozen=True)
class Migration:
    name: str  # the module's file name without .py, e.g. 0001_step_output_array
    summary: str
    kinds: tuple[str, ...]
    detect: Callable[[Any], tuple | None]
    upgrade: Callable[[Any], Any]
    eras: tuple[str, str] | None = None  # (from era, to era) of an eval-file migration

    def _order(self) -> tuple:
        if self.eras is None:
            return (-1, -1, self.name)
        return (era_index(era_named(self.eras[0])), era_index(era_named(self.eras[1])), self.name)


@cache
def migrations() -> tuple[Migration, ...]:
    """Every migration, in the order of its number."""
    folder = resource_dir("_migrations", "migrations")
    found = []
    for path in sorted(folder.glob("*.py")):
        if not _MODULE_NAME.match(path.name):
            continue
        spec = importlib.util.spec_from_file_location(f"chatconv_migration_{path.stem}", path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        eras = getattr(module, "ERAS", None)
        if eras is not None:
            for name in eras:
                era_named(name)  # a misspelt era fails here, loudly, not as a migration that never runs
        found.append(Migration(path.stem, module.SUMMARY, tuple(module.KINDS), module.detect, module.upgrade,
                               tuple(eras) if eras is not None else None))
    return tuple(found)


def _era_name(era: Era | str | None) -> str | None:
    return era if era is None or isinstance(era, str) else era.NAME


@cache
def _migrations_until(kind: str | None, until_era: str | None) -> tuple[Migration, ...]:
    schema_of = next((era for era in ERAS if era.SCHEMA == kind), None)
    if schema_of is not None:  # an era's schema: an eval file read as one, moved up to that era
        kind, until_era = "eval-file", until_era or schema_of.NAME
    limit = None if until_era is None else era_index(era_named(until_era))
    chosen = [m for m in migrations() if kind in m.kinds
              and (m.eras is None or limit is None or era_index(era_named(m.eras[1])) <= limit)]
    return tuple(sorted(chosen, key=Migration._order))


def migrations_for(kind: str | None, until_era: Era | str | None = None) -> tuple[Migration, ...]:
    """The migrations for `kind`, in the order they run. For eval files, only those whose
    target era is not past `until_era` (an Era or its name). Without one, a `kind` that is an
    era's schema (`eval-tests`; `eval-file` is the evalcases era's) stands for the eval files
    read against it, which move up to that era and never past; any other kind runs them all.
    Reading (validate, models) passes only the kind; `chatconv migrate` passes its --to."""
    return _migrations_until(kind, _era_name(until_era))


def is_legacy(record: Any, kind: str | None) -> bool:
    """Whether a migration for `kind` (see migrations_for) finds its shape in the record as it is.
    False when one trips on a shape it did not expect: such a record is left to the schema."""
    try:
        return any(migration.detect(record) is not None for migration in migrations_for(kind))
    except Exception:  # a migration's detect meets any shape a record that failed the schema has
        return False


def upgrade_record(record: Any, kind: str | None,
                   until_era: Era | str | None = None) -> tuple[Any, list[tuple[Migration, tuple]]]:
    """Run every migration for `kind` whose shape the record has, in order; an eval file is
    moved forward era by era, but not past `until_era` (None: see migrations_for).

    Returns the upgraded record (the input may have been changed in place) and the migrations
    applied, each with the path of the first spot it found. Refused when a migration will not
    rewrite the record (the record may then be changed in part: work on a copy).
    """
    applied = []
    for migration in migrations_for(kind, until_era):
        spot = migration.detect(record)
        if spot is not None:
            try:
                record = migration.upgrade(record)
            except Refused as exc:
                exc.moved_to = next((m.eras[1] for m, _ in reversed(applied) if m.eras and m.eras[0] != m.eras[1]),
                                    None)
                raise
            applied.append((migration, spot))
    return record, applied


def migrate_record(record: Any, kind: str | None = None, to_era: Era | str | None = None) -> tuple[Any, list[str]]:
    """Upgrade one record to the current shape (an eval file to the newest era, or to `to_era`);
    its kind is told from its content unless given. Never moves an eval file back.

    Returns the record (changed in place where possible) and the names of the migrations applied.
    Refused when a migration will not rewrite it.
    """
    kind = kind or detect_kind(record)
    record, applied = upgrade_record(record, kind, to_era or NEWEST.NAME)
    return record, [migration.name for migration, _ in applied]
