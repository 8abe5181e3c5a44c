"""The migration engine: finds the numbered modules in migrations/ and chains them.

Each module says which record kinds it upgrades (KINDS), what shape it upgrades (SUMMARY),
finds that shape itself (`detect(record)` -> the JSON path of the first spot, or None) and
upgrades one record (`upgrade(record)` -> record). Modules run in the order of their numbers.
"""

from __future__ import annotations

import importlib.util
import re
from dataclasses import dataclass
from functools import cache
from typing import Any, Callable

from .schemas import resource_dir

_MODULE_NAME = re.compile(r"^(\d{4})_[a-z0-9_]+\.py$")
_MISSING = object()


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


def upgrade_record(record: Any, kind: str) -> tuple[Any, list[tuple[Migration, tuple]]]:
    """Run every migration for `kind` whose shape the record has, in order.

    Returns the upgraded record (the input may have been changed in place) and the migrations
    applied, each with the path of the first spot it found.
    """
    applied = []
    for migration in migrations():
        if kind in migration.kinds:
            spot = migration.detect(record)
            if spot is not None:
                record = migration.upgrade(record)
                applied.append((migration, spot))
    return record, applied


def rename_key(mapping: dict, old: str, new: str, value: Any = _MISSING) -> None:
    """Rename `old` to `new` where it stands (optionally with a new value), keeping key order.

    Works on plain dicts and on ruamel.yaml's CommentedMap, whose comments move with the key.
    """
    if value is _MISSING:
        value = mapping[old]
    if hasattr(mapping, "insert") and hasattr(mapping, "ca"):  # ruamel round-trip mapping
        position = list(mapping).index(old)
        comment = mapping.ca.items.pop(old, None)
        del mapping[old]
        mapping.insert(position, new, value)
        if comment is not None:
            mapping.ca.items[new] = comment
        return
    items = [(new, value) if key == old else (key, item) for key, item in mapping.items()]
    mapping.clear()
    mapping.update(items)
