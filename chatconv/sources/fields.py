"""Fields read from other keys (`--field NAME=KEY`): a record seen with chatconv's field names, the
values located where they are in the text, and the record written back under its own keys.

KEY is a key of the record, or a dotted path into nested objects: `turn.userMessage` reads
data["turn"]["userMessage"]. A dot or a backslash that is part of a key is written `\\.` or `\\\\`.
"""

from __future__ import annotations

from typing import Any, Mapping

from .record import Record, problem_at

STEP_FIELDS = ("conversationId", "stepIndex", "input", "output", "id", "timestamp", "metadata")
CONVERSATION_FIELDS = ("id", "steps")
FIELD_NAMES = tuple(dict.fromkeys(STEP_FIELDS + CONVERSATION_FIELDS))

FieldMap = Mapping[str, "tuple[str, ...] | str"]


def split_key(key: str) -> tuple[str, ...]:
    """`turn.userMessage` -> ("turn", "userMessage"); `a\\.b` is the one key "a.b"."""
    parts, current, chars = [], [], iter(key)
    for char in chars:
        if char == "\\":
            current.append(next(chars, "\\"))
        elif char == ".":
            parts.append("".join(current))
            current = []
        else:
            current.append(char)
    parts.append("".join(current))
    return tuple(parts)


def parse_field_map(pairs: list[str], names: tuple[str, ...] | None = FIELD_NAMES) -> dict[str, tuple[str, ...]]:
    """`["output=response", "input=turn.userMessage"]` -> {"output": ("response",), "input": ("turn",
    "userMessage")}: the step's field is read from another key, or from a path into nested objects.

    ValueError for a pair that is not NAME=KEY with NAME one of `names` (chatconv's fields; None:
    any name, for other tools' records), an empty key in the
    path, a NAME or a KEY given twice, or a KEY inside another mapped KEY (one of the two mappings
    would be lost).
    """
    field_map: dict[str, tuple[str, ...]] = {}
    for pair in pairs:
        name, _, key = pair.partition("=")
        if not key or not name or (names is not None and name not in names):
            raise ValueError(f"{pair!r} is not NAME=KEY"
                             + (f" with NAME one of: {', '.join(names)}" if names is not None else ""))
        keys = split_key(key)
        if "" in keys:
            raise ValueError(f"{pair!r}: the key path has an empty key (write a dot that is part of a key as \\.)")
        if name in field_map:
            raise ValueError(f"{name} is mapped twice ({name}={_written(field_map[name])}, {pair})")
        for other in field_map.values():
            if other == keys:
                raise ValueError(f"the key {key!r} is mapped twice: each key can be read as one field only")
            if other[:len(keys)] == keys or keys[:len(other)] == other:
                raise ValueError(f"the keys {_written(other)!r} and {key!r} are one inside the other: "
                                 "map keys that do not hold each other")
        field_map[name] = keys
    return field_map


def _written(keys: tuple[str, ...]) -> str:
    return ".".join(key.replace("\\", "\\\\").replace(".", "\\.") for key in keys)


def _keys(field_map: FieldMap) -> dict[str, tuple[str, ...]]:
    return {name: (key,) if isinstance(key, str) else tuple(key) for name, key in field_map.items()}


class FieldClash(ValueError):
    """A mapped field cannot be read: its name is already a key of the record (renaming would
    hide one of the two), or its key path goes through a value that is not an object."""

    def __init__(self, path: tuple, name: str, key: str, message: str | None = None):
        super().__init__(message or f"--field {name}={key}: the record has both {key!r} and {name!r}")
        self.path = path


def adapt(data: Any, field_map: FieldMap, path: tuple = (), moved: list | None = None) -> Any:
    """A record with mapped fields read under their chatconv names; other keys kept, in order.

    A renamed key keeps its place; a value read from a nested path takes the place of the
    outermost key of that path, which follows it holding the rest (left out when nothing is left
    in it). The record itself is not changed. `path`: where `data` is in the record as read.
    `moved` receives (path in the result, path in the record) of each value read from another
    key, to locate it (Record.move).
    FieldClash when a key would be renamed to a name the record already has (and keeps), or a
    key path goes through a value that is not an object.
    """
    if not field_map or not isinstance(data, dict):
        return data
    return _adapt(data, _keys(field_map), path, path, moved)


def _adapt(data: Any, field_map: dict[str, tuple[str, ...]], path: tuple, at: tuple, moved: list | None) -> Any:
    """adapt of `data`, found at `path` in the record as read and put at `at` in the result."""
    if not isinstance(data, dict):
        return data
    renamed = {keys[0]: name for name, keys in field_map.items() if len(keys) == 1}
    for name, keys in field_map.items():
        # A name whose own key is renamed away (a swap, or name=name) leaves room for the new one.
        if keys[0] in data and name in data and name not in renamed:
            raise FieldClash(path + (name,), name, _written(keys))
    nested: dict[str, list[tuple[str, Any]]] = {}  # outermost key -> (name, value) read inside it
    rests: dict[str, Any] = {}
    for name, keys in field_map.items():
        if len(keys) > 1 and keys[0] in data:
            found, rest = _take(rests.get(keys[0], data[keys[0]]), keys, 1, path, name)
            if found is not _ABSENT:
                nested.setdefault(keys[0], []).append((name, found))
                rests[keys[0]] = rest
                if moved is not None:
                    moved.append((at + (name,), path + keys))
    adapted = {}
    for key, value in data.items():
        for name, found in nested.get(key, ()):
            adapted[name] = found
        if key in rests:
            if rests[key] != {}:
                adapted[key] = rests[key]
            continue
        adapted[renamed.get(key, key)] = value
        if key in renamed and moved is not None and renamed[key] != key:
            moved.append((at + (renamed[key],), path + (key,)))
    steps = adapted.get("steps")
    if isinstance(steps, list):
        written_as = field_map.get("steps", ("steps",))  # where the steps are in the record as read
        adapted["steps"] = [_adapt(step, field_map, path + written_as + (index,), at + ("steps", index), moved)
                            for index, step in enumerate(steps)]
    return adapted


_ABSENT = object()


def _take(container: Any, keys: tuple[str, ...], depth: int, path: tuple, name: str) -> tuple[Any, Any]:
    """(the value at keys[depth:] in container, the container without it), copies along the path;
    (_ABSENT, container) when a key is missing."""
    if not isinstance(container, dict):
        spot = keys[:depth]
        raise FieldClash(path + spot, name, _written(keys),
                         f"--field {name}={_written(keys)}: {_written(spot)!r} is not an object, so it holds no "
                         f"{keys[depth]!r}")
    key = keys[depth]
    if key not in container:
        return _ABSENT, container
    if depth == len(keys) - 1:
        return container[key], {k: v for k, v in container.items() if k != key}
    found, rest = _take(container[key], keys, depth + 1, path, name)
    if found is _ABSENT:
        return _ABSENT, container
    return found, {**container, key: rest}


def restore(view: Any, original: Any, field_map: FieldMap) -> Any:
    """The reverse of adapt: `view` (adapt's result, perhaps changed since, e.g. migrated) with
    each mapped field put back under its own key, in its place in `original`, the record adapt
    read. Keys the view added keep their places; nothing of the view is dropped."""
    if not field_map or not isinstance(view, dict) or not isinstance(original, dict):
        return view
    field_map = _keys(field_map)
    single = {name: keys[0] for name, keys in field_map.items() if len(keys) == 1}
    nested = {name: keys for name, keys in field_map.items() if len(keys) > 1 and name in view}
    out = {}
    for key, value in view.items():
        if key in nested:
            continue
        out[single.get(key, key)] = value
    for name, keys in nested.items():
        out = _put(out, original, keys, view[name])
    steps_key = single.get("steps", "steps")
    if isinstance(out.get(steps_key), list) and isinstance(original.get(steps_key), list):
        befores = original[steps_key]
        out[steps_key] = [restore(step, befores[index], field_map) if index < len(befores) else step
                          for index, step in enumerate(out[steps_key])]
    return out


def _put(container: dict, original: Any, keys: tuple[str, ...], value: Any) -> dict:
    """A copy of container with value at keys, each key put back in its place in original."""
    key = keys[0]
    before = original.get(key) if isinstance(original, dict) else None
    inner = value if len(keys) == 1 else _put(dict(container.get(key) or {}), before, keys[1:], value)
    if key in container:
        return {k: (inner if k == key else v) for k, v in container.items()}
    order = list(original) if isinstance(original, dict) else []
    # In its place: after the keys that came before it in the original.
    spot = sum(1 for k in container if k in order and order.index(k) < order.index(key)) if key in order \
        else len(container)
    items = list(container.items())
    return dict(items[:spot] + [(key, inner)] + items[spot:])


def adapt_record(record: Record, field_map: FieldMap | None) -> Record:
    """The record with its mapped fields read under their chatconv names (see sources.adapt), each
    located where it is in the text; a field that cannot be read sets record.error."""
    if not field_map or record.error:
        return record
    moved: list = []
    try:
        record.data = adapt(record.data, field_map, moved=moved)
    except FieldClash as exc:
        record.error = problem_at(record, exc.path, str(exc), hint="map only keys whose field name the record does "
                                  "not use, through objects, or leave that --field out", code="field-clash")
        return record
    record.move(tuple(moved))
    return record
