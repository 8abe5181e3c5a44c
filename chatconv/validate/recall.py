"""Explanations recalled: records that fail the schema alike (the same wrong role on every tenth
line of a file) are explained once, not at some 100 µs a record by jsonschema's Python validator,
and what was said is located in each record's own line (explain.py).
"""

from __future__ import annotations

from typing import Any, Callable

import orjson

from ..kinds import RECORDING_KINDS
from ..schemas import fast_validator
from ..sources import Record

_MAX_KEYS = 512  # then forgotten all at once: the keys hold the values that failed
_KEYED_VALUE_BYTES = 2048
_said: dict[tuple, list] = {}


def recall(key: tuple | None, describe: Callable[[], list]) -> list:
    """What `describe()` said of the records that failed as `key` says (failure_key), said once;
    said afresh when the key is None."""
    if key is None:
        return describe()
    said = _said.get(key)
    if said is None:
        if len(_said) >= _MAX_KEYS:
            _said.clear()
        said = _said[key] = describe()
    return said


def failure_key(record: Record, kind: str) -> tuple | None:
    """What the explanation of a recording's JSON record depends on: the compiled validator's
    errors, each as the path that failed, the schema's path and the JSON of the value there
    (the rest of the record is valid, and the describers look at nothing else); None for a
    record not to be explained from its key: a YAML one (values JSON does not have), a value
    too large to keep, a float (an integer beyond 64 bits is told by the text), one too deep
    for the compiled validator, none found."""
    if kind not in RECORDING_KINDS or record.text.__class__ is not bytes:
        return None
    try:
        errors = list(fast_validator(kind, published=True).iter_errors(record.data))
    except ValueError:  # nested too deep for it
        return None
    key: list = [kind]
    for error in errors:
        path = tuple(error.instance_path)
        value = record.data
        for part in path:
            value = value[part]
        try:
            written = orjson.dumps(value)
        except orjson.JSONEncodeError:
            return None
        if len(written) > _KEYED_VALUE_BYTES or _holds_float(value):
            return None
        key.append((path, tuple(error.schema_path), written))
    return tuple(key) if len(key) > 1 else None


def _holds_float(value: Any) -> bool:
    if value.__class__ is float:
        return True
    if value.__class__ is dict:
        return any(_holds_float(v) for v in value.values())
    if value.__class__ is list:
        return any(_holds_float(v) for v in value)
    return False
