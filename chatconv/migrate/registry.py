"""The migrations: the numbered modules of migrations/, found, ordered and chained.

Each module says which record kinds it upgrades (KINDS), what shape it upgrades (SUMMARY),
finds that shape itself (`detect(record)` -> the JSON path of the first spot, or None) and
upgrades one record in place (`upgrade(record)` -> record). Modules run in the order of their
numbers.
"""

from __future__ import annotations

import importlib.util
import re
from dataclasses import dataclass
from functools import cache
from typing import Any, Callable

from ..kinds import detect_kind
from ..schemas import resource_dir

_MODULE_NAME = re.compile(r"^(\d{4})_[a-z0-9_]+\.py$")


@dataclass(frozen=True)
class Migration:
    name: str  # the module's file name without .py, e.g. 0001_step_output_array
    summary: str
    kinds: tuple[str, ...]
    detect: Callable[[Any], tuple | None]
    upgrade: Callable[[Any], Any]


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
        found.append(Migration(path.stem, module.SUMMARY, tuple(module.KINDS),
                               module.detect, module.upgrade))
    return tuple(found)


@cache
def migrations_for(kind: str | None) -> tuple[Migration, ...]:
    return tuple(m for m in migrations() if kind in m.kinds)


def is_legacy(record: Any, kind: str | None) -> bool:
    """Whether a migration for `kind` finds its shape in the record as it is. False when one
    trips on a shape it did not expect: such a record is left to the schema to explain."""
    try:
        return any(migration.detect(record) is not None for migration in migrations_for(kind))
    except Exception:  # a migration's detect meets any shape a record that failed the schema has
        return False


def upgrade_record(record: Any, kind: str | None) -> tuple[Any, list[tuple[Migration, tuple]]]:
    """Run every migration for `kind` whose shape the record has, in order.

    Returns the upgraded record (the input may have been changed in place) and the migrations
    applied, each with the path of the first spot it found.
    """
    applied = []
    for migration in migrations_for(kind):
        spot = migration.detect(record)
        if spot is not None:
            record = migration.upgrade(record)
            applied.append((migration, spot))
    return record, applied


def migrate_record(record: Any, kind: str | None = None) -> tuple[Any, list[str]]:
    """Upgrade one record to the current shape; its kind is told from its content unless given.

    Returns the record (changed in place where possible) and the names of the migrations applied.
    """
    kind = kind or detect_kind(record)
    record, applied = upgrade_record(record, kind)
    return record, [migration.name for migration, _ in applied]
