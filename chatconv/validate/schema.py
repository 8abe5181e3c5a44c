"""The schema check of one record: the compiled fast path, then, for a record that fails, the
legacy shapes upgraded in memory (each a warning) and located in the text as written.
"""

from __future__ import annotations

import copy
from functools import cache
from typing import Any

import orjson

from ..problems import Problem
from ..schemas import fast_validator
from ..sources import Record, problem_at
from .explain import explain


def check_schema(record: Record, kind: str) -> list[Problem]:
    """The schema problems of one record; legacy shapes are upgraded in memory (record.data
    changes; record.aliases and record.as_read locate its upgraded paths in the text: see
    _locate_upgraded_paths)."""
    if fast_validator(kind).is_valid(record.data):
        return []
    from ..migrate import is_legacy, upgrade_record  # here: most runs never need them loaded

    # The places of the original containers are noted only when a migration will apply.
    # An eval file's kind is its era's schema: it is read up to that era, never past (migrations_for).
    legacy = is_legacy(record.data, kind)
    places = _container_places(record.data) if legacy else None
    applied = []
    if legacy:
        original = _copy(record.data)
        try:
            record.data, applied = upgrade_record(record.data, kind)
        except Exception:  # as above; the upgrade may have changed part of it
            record.data, applied = original, []
    if applied and places is not None:
        _locate_upgraded_paths(record, places)
        record.as_read = original
    problems = [problem_at(record, spot, *legacy_words(migration), code="legacy-shape") for migration, spot in applied]
    if not (applied and fast_validator(kind).is_valid(record.data)):
        problems += explain(record, kind)
    return problems


@cache
def legacy_words(migration) -> tuple[str, str, str]:
    """The message, severity and hint of a legacy shape that `migration` upgrades."""
    return (f"legacy shape: {migration.summary}", "warning",
            f"read as upgraded; `chatconv migrate` rewrites it (migration {migration.name})")


def _copy(data: Any) -> Any:
    # orjson's round trip is several times faster than deepcopy, for the data it can write.
    try:
        return orjson.loads(orjson.dumps(data))
    except (orjson.JSONEncodeError, orjson.JSONDecodeError):  # an integer past 64 bits, deep nesting
        return copy.deepcopy(data)


def _container_places(data: Any) -> dict[int, tuple[Any, tuple, dict | None]]:
    """id -> (the container, its path, for an object a copy of its items) of each object and
    array in `data`, before an upgrade. The containers and values are kept, so ids stay theirs."""
    places: dict[int, tuple[Any, tuple, dict | None]] = {}
    stack = [(data, ())]
    while stack:
        node, path = stack.pop()
        if isinstance(node, dict):
            places[id(node)] = (node, path, dict(node))
            stack.extend((value, path + (key,)) for key, value in node.items())
        elif isinstance(node, list):
            places[id(node)] = (node, path, None)
            stack.extend((item, path + (index,)) for index, item in enumerate(node))
    return places


def _locate_upgraded_paths(record: Record, places: dict[int, tuple[Any, tuple, dict | None]]) -> None:
    """Alias each path of the upgraded record.data that is not in the file to the original path
    it came from (record.aliases), so that problems found in the upgraded record point at the text.

    Migrations rename keys in place and keep the value objects: an object or array is the same
    one as before (`places`); a renamed key is found by its value; a value a migration wraps
    (`input: hi` -> `input_messages: [{role: user, content: hi}]`) by the original value held
    inside. A path is located by its longest aliased ancestor (unalias): a path gets an alias of
    its own only where that would not give its original path.
    """
    aliases: dict[tuple, tuple] = {}
    # node, path, original path (None: unknown), the path unalias gives it by its ancestors' aliases
    stack: list[tuple[Any, tuple, tuple | None, tuple]] = [(record.data, (), (), ())]
    while stack:
        node, path, original, read_at = stack.pop()
        place = places.get(id(node))
        if place is not None and place[0] is node:
            original = place[1]
        else:
            place = None  # a container the upgrade made
        if original is not None and original != read_at:
            aliases[path] = read_at = original
        if isinstance(node, dict):
            before = place[2] if place is not None else {}
            gone = [(key, value) for key, value in before.items() if key not in node]
            for key, value in node.items():
                if original is None or key in before:
                    stack.append((value, path + (key,), None if original is None else original + (key,),
                                  read_at + (key,)))
                    continue
                old = next((old for old, old_value in gone if _holds(value, old_value)), None)
                stack.append((value, path + (key,), None if old is None else original + (old,), read_at + (key,)))
        elif isinstance(node, list):
            for index, item in enumerate(node):
                stack.append((item, path + (index,), original + (index,) if place is not None else None,
                              read_at + (index,)))
    # Located when a problem asks (most records have one, the legacy shape's warning), in the text.
    record.aliases = {**record.aliases, **aliases} if record.aliases else aliases


def _holds(value: Any, target: Any, depth: int = 2) -> bool:
    """Whether `value` is `target`, or holds it within `depth` levels (a wrapped value)."""
    if value is target:
        return True
    if depth <= 0:
        return False
    items = value.values() if isinstance(value, dict) else value if isinstance(value, list) else ()
    return any(_holds(item, target, depth - 1) for item in items)
