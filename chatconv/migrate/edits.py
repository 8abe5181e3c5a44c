"""Edits for migration authors: rename and insert keys where they stand, move ruamel.yaml
comments with the values they follow, and make containers of the same type. They work on plain
dicts and lists (JSON, JSONL) and on ruamel.yaml's round-trip ones (YAML), so that a migration
is written once for both. And for eval-file migrations: which era a file is in, its `$schema`
moved with it, and a refusal that names the key.
"""

from __future__ import annotations

from typing import Any, Iterable, Iterator

from ..eras import declared_era, era_named, era_of
from .registry import Refused

_MISSING = object()


def rename_key(mapping: dict, old: str, new: str, value: Any = _MISSING) -> None:
    """Rename `old` to `new` where it stands (optionally with a new value), keeping key order.

    Works on plain dicts and on ruamel.yaml's CommentedMap, whose comments move with the key.
    """
    if value is _MISSING:
        value = mapping[old]
    if _is_commented(mapping):
        position = list(mapping).index(old)
        comment = mapping.ca.items.pop(old, None)
        del mapping[old]
        mapping.insert(position, new, value)
        if comment is not None:
            mapping.ca.items[new] = comment
        return
    keys = list(mapping)
    after = [(key, mapping.pop(key)) for key in keys[keys.index(old) + 1:]]  # most often none
    del mapping[old]
    mapping[new] = value
    mapping.update(after)


def insert_after(mapping: dict, anchor: str, key: str, value: Any) -> None:
    """Add `key` right after `anchor` (which must be in the mapping), keeping the other keys' order."""
    if _is_commented(mapping):
        mapping.insert(list(mapping).index(anchor) + 1, key, value)
        return
    items = list(mapping.items())
    items.insert(list(mapping).index(anchor) + 1, (key, value))
    mapping.clear()
    mapping.update(items)


def move_comment(source: dict, source_key: str, target: dict, target_key: str) -> None:
    """Move the comment after `source_key`'s value to after `target_key`'s value.

    For a value that a migration wraps (`input: text` -> `input_messages: [{..., content: text}]`):
    the comment that followed the text must follow it in its new place. No-op on plain dicts.
    """
    if _is_commented(source) and _is_commented(target):
        comment = source.ca.items.pop(source_key, None)
        if comment is not None:
            target.ca.items[target_key] = comment


def append_moving_comment(source: dict, key: str, target: list) -> None:
    """Append `source[key]`'s value to `target` and take the key out; the comment after the
    value follows it to its place as the list's last item. Comments are ruamel.yaml's (on plain
    dicts the value just moves)."""
    comment = source.ca.items.pop(key, None) if _is_commented(source) else None
    target.append(source.pop(key))
    if comment is not None and comment[2] is not None and _is_commented(target):
        target.ca.items[len(target) - 1] = [comment[2], None, None, None]  # a sequence item's is its first


def new_like(container: Any, items: Iterable = ()) -> Any:
    """A new list or mapping of the same type as `container` (a ruamel.yaml one for YAML)."""
    made = type(container)()
    if isinstance(made, list):
        made.extend(items)
    else:
        made.update(items)
    return made


def new_list_like(container: Any, items: Iterable = ()) -> list:
    """A new list in `container`'s document (a ruamel.yaml sequence in YAML), for a value a
    migration makes where the document may have no list of its own to copy the type of."""
    if not _is_commented(container):
        return list(items)
    from ruamel.yaml.comments import CommentedSeq

    made = CommentedSeq()
    made.extend(items)
    return made


def _is_commented(container: Any) -> bool:
    return hasattr(container, "ca") and hasattr(container, "insert")



def in_era(record: Any, name: str) -> bool:
    """Whether a parsed eval file is written in the era called `name` (see eras.era_of):
    an eval-file migration touches only files of the era it moves from."""
    return isinstance(record, dict) and era_of(record) is era_named(name)


def declare_era(record: dict, old: str, new: str) -> None:
    """A `$schema` that names the era `old` names `new` afterwards (the era's first id), where it
    stands: a file that declared its era keeps declaring the one it is in. Any other is kept."""
    if declared_era(record) is era_named(old) and era_named(new).SCHEMA_IDS:
        record["$schema"] = era_named(new).SCHEMA_IDS[0]


def cases_in(record: dict, key: str | None) -> Iterator[tuple[tuple, dict]]:
    """(JSON path, case) of each object in the case list under `key` (none when it is not a list)."""
    cases = record.get(key) if key is not None else None
    for index, case in enumerate(cases if isinstance(cases, list) else []):
        if isinstance(case, dict):
            yield (key, index), case


def refusal(path: tuple, message: str) -> Refused:
    """Refused at a JSON path of the record: `$.tests[2].execution.cache: ...`."""
    return Refused(message, path)


def insert_before(mapping: dict, anchor: str, key: str, value: Any) -> None:
    """Add `key` right before `anchor` (which must be in the mapping), keeping the other keys' order."""
    keys = list(mapping)
    position = keys.index(anchor)
    if position > 0:
        insert_after(mapping, keys[position - 1], key, value)
    elif _is_commented(mapping):
        mapping.insert(0, key, value)
    else:
        items = list(mapping.items())
        mapping.clear()
        mapping[key] = value
        mapping.update(items)


def quoted_like(container: Any, text: str) -> str:
    """`text` as a new string in `container`'s document: double-quoted in YAML (a template such as
    `{{ input }}` must be quoted there, and AgentV's own files quote it so), plain elsewhere."""
    if not _is_commented(container):
        return text
    from ruamel.yaml.scalarstring import DoubleQuotedScalarString

    return DoubleQuotedScalarString(text)
