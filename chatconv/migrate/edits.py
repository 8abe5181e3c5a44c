"""Edits for migration authors: rename and insert keys where they stand, move ruamel.yaml
comments with the values they follow, and make containers of the same type. They work on plain
dicts and lists (JSON, JSONL) and on ruamel.yaml's round-trip ones (YAML), so that a migration
is written once for both.
"""

from __future__ import annotations

from typing import Any, Iterable

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


def new_like(container: Any, items: Iterable = ()) -> Any:
    """A new list or mapping of the same type as `container` (a ruamel.yaml one for YAML)."""
    made = type(container)()
    if isinstance(made, list):
        made.extend(items)
    else:
        made.update(items)
    return made


def _is_commented(container: Any) -> bool:
    return hasattr(container, "ca") and hasattr(container, "insert")

