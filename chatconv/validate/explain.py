"""Explaining schema failures (the slow path, for failing records only): each jsonschema error
as a Problem whose message is written for the schema keyword that failed.
"""

from __future__ import annotations

import difflib
import math
from itertools import islice
from typing import Any, Callable, Iterator, NamedTuple

import orjson

from ..eras import ERAS, NEWEST
from ..eras import tests as tests_era
from ..kinds import RECORDING_KINDS
from ..problems import Problem
from ..sources import Record, integers_beyond_64_bits, problem_at
from .narrowed import narrowed_validator
from .recall import failure_key, recall

_ROLE_SYNONYMS = {"human": "user", "ai": "assistant", "bot": "assistant", "model": "assistant",
                  "function": "tool", "developer": "system"}
# How close (difflib's ratio) a key must be to suggest it: `criterias` -> `criteria` (0.94),
# `asert` -> `assert` (0.91); `tags` -> `target` (0.6) is not suggested.
SUGGESTION_CUTOFF = 0.75
_JSON_TYPES = {dict: "object", list: "array", str: "string", bool: "boolean", int: "integer",
               float: "number"}


def explain(record: Record, kind: str) -> list[Problem]:
    """Every schema error of a failing record as Problems: jsonschema's best match first (of two
    errors that say the same at one path, the more relevant is kept), then by JSON path. validate
    reports a record's problems in order of place (lines.record_entry)."""
    try:
        return _explain(record, kind)
    except RecursionError:  # jsonschema recurses into (and reprs) the values it reports
        return [problem_at(record, (), f"the record does not match the {kind} schema, and is nested "
                           "too deeply to explain where", hint="nest arrays and objects less deeply",
                           code="too-deep")]


def _explain(record: Record, kind: str) -> list[Problem]:
    said = recall(failure_key(record, kind), lambda: _described(record, kind))
    return [problem_at(record, s.path, s.message, s.severity, s.hint, code=s.code) for s in said]


def _described(record: Record, kind: str) -> list[Said]:
    from jsonschema.exceptions import best_match

    errors = list(narrowed_validator(kind).iter_errors(record.data))
    if not errors:  # the two validators disagree; say so rather than pass the record
        return [Said((), f"the record does not match the {kind} schema", code="bad-value")]
    best = best_match(errors)
    ordered = [best] + sorted((e for e in errors if e is not best), key=lambda e: list(map(str, e.absolute_path)))
    said = {}
    for error in ordered:
        path = tuple(error.absolute_path)
        describe = _DESCRIBERS.get(error.validator, _not_matching)
        for one in describe(error, record, kind, path):
            said.setdefault((one.path, one.message), one)
    return list(said.values())


def short_json(value: Any, limit: int = 60) -> str:
    """The value as JSON, cut to `limit` characters; a large or deep value is never rendered whole."""
    text = _preview(value, limit, depth=2)
    return text if len(text) <= limit else text[:limit - 3] + "..."


def _preview(value: Any, limit: int, depth: int) -> str:
    """JSON text of enough of the value to fill `limit` characters (items cost 3 at least)."""
    if isinstance(value, dict):
        brackets, items = "{}", (f"{_preview(k, limit, 0)}: {_preview(v, limit, depth - 1)}"
                                 for k, v in value.items())
    elif isinstance(value, list):
        brackets, items = "[]", (_preview(v, limit, depth - 1) for v in value)
    elif isinstance(value, str):
        return orjson.dumps(value[:limit]).decode()  # one character more than fits, when cut
    elif isinstance(value, float) and not math.isfinite(value):
        return str(value)  # YAML's .inf and .nan: JSON has no spelling for them
    else:
        try:
            return orjson.dumps(value).decode()
        except TypeError:  # an integer past 64 bits
            return str(value)
    inside = "..." if depth <= 0 and value else ", ".join(islice(items, limit // 3 + 1))
    return brackets[0] + inside + brackets[1]


def _shown(value: Any, record: Record) -> str:
    """short_json(value), but an integer beyond 64 bits by its digits (see _digits_beyond_64_bits)."""
    digits = _digits_beyond_64_bits(value, record)
    return f"{digits} (an integer beyond 64 bits)" if digits else short_json(value)


def _digits_beyond_64_bits(value: Any, record: Record) -> str | None:
    """The digits written for `value` when it is an integer beyond 64 bits that orjson read as a
    float (Python's own readers keep such integers: YAML's are ints); else None."""
    if (value.__class__ is not float or record.text is None or not value.is_integer()
            or -(1 << 63) <= value < (1 << 64)):
        return None
    try:
        beyond = integers_beyond_64_bits(record.text)
    except (ValueError, RecursionError):  # JSON that orjson reads and the json module does not
        return None
    found = {digits for digits in beyond if float(digits) == value}
    return found.pop() if len(found) == 1 else None  # else integers that read alike: which is unsure


def _enum_hint(value: Any, allowed: list) -> str | None:
    if isinstance(value, str):
        if value.lower() in _ROLE_SYNONYMS and _ROLE_SYNONYMS[value.lower()] in allowed:
            return f"use {short_json(_ROLE_SYNONYMS[value.lower()])}"
        close = difflib.get_close_matches(value, [str(a) for a in allowed], n=1, cutoff=0.6)
        if close:
            return f"did you mean {short_json(close[0])}?"
    return None


# ---------------------------------------------------------------------------------------------
# One describer per schema keyword: (error, record, kind, path) -> what it says of the error.


class Said(NamedTuple):
    """A problem as a describer says it, at a path of the record: located by problem_at."""

    path: tuple
    message: str
    severity: str = "error"
    hint: str | None = None
    code: str | None = None


# The eval files of the eras before the current one: AgentV ignores a key it does not know there
# (its v4 validate warns "Unknown field"), so chatconv warns, with what it may have meant; but a
# misspelling of a required key that is missing stays an error, the one that says so (AgentV
# skips such a case). A schema marks the spots of the current era that AgentV leaves open so
# (`"unknownKeysIgnored": true`).
IGNORES_UNKNOWN_KEYS = frozenset(era.SCHEMA for era in ERAS if era is not NEWEST)


def _is_config(kind: str) -> bool:
    return kind == "config" or kind.startswith("config-")


def _known_keys(schema: dict) -> list[str]:
    """The keys a schema spot takes: its properties, less those it names only to refuse."""
    return [key for key, sub in schema.get("properties", {}).items()
            if not (isinstance(sub, dict) and "removed" in sub)]


def close_key(key: str, known: list[str], present: Any = ()) -> str | None:
    """The known key `key` is most likely a misspelling of, if one is close; never a key the
    object holds already (it is not missing)."""
    candidates = [k for k in known if k not in present]
    close = difflib.get_close_matches(key, candidates, n=1, cutoff=SUGGESTION_CUTOFF)
    return close[0] if close else None


def _unknown_keys(error, record: Record, kind: str, path: tuple) -> Iterator[Said]:
    known = _known_keys(error.schema)
    for key in (k for k in error.instance if k not in error.schema.get("properties", {})):
        close = close_key(key, known, error.instance)
        hint = f"did you mean {close!r}?" if close else f"known keys: {', '.join(known)}"
        refused = error.schema.get("unknownKeysRefused")  # a spot where AgentV refuses what it does not know
        if refused:
            yield Said(path + (key,), f"unknown key {key!r}: {refused}", "error", hint, code="unknown-key")
        elif kind in RECORDING_KINDS:
            yield Said(path + (key,), f"unknown key {key!r}, kept as it is", "warning", hint,
                       code="unknown-key")
        elif (kind in IGNORES_UNKNOWN_KEYS or error.schema.get("unknownKeysIgnored")) and (
                close not in error.schema.get("required", ())):
            yield Said(path + (key,), f"unknown key {key!r}, ignored by AgentV", "warning", hint,
                       code="unknown-key")
        elif _is_config(kind):
            yield Said(path + (key,), f"unknown config key {key!r}, ignored", "warning", hint,
                       code="unknown-config-key")
        else:
            yield Said(path + (key,), f"unknown key {key!r}", "error", hint, code="unknown-key")


def _removed_key(error, record: Record, kind: str, path: tuple) -> Iterator[Said]:
    """A key the schema names only to refuse it (`"removed": what to do instead`): AgentV's own
    guidance, rather than "unknown key"."""
    instead = error.schema.get("removed") if isinstance(error.schema, dict) else None
    if not (instead and path):
        yield from _not_matching(error, record, kind, path)
        return
    current = kind.endswith("-current")
    yield Said(path, removed_key_message(path[-1], instead, current), code="removed-key",
               hint="AgentV's guide to the breaking changes since v4.42.4 shows each move" if current else None)


def removed_key_message(key: str, instead: str, current: bool) -> str:
    """What a key an era's schema names only to refuse (`"removed"`) is told: removed with the
    current era, or within the tests era (its last release is the one checked)."""
    if current:
        return f"{key!r} was removed in this era (AgentV rejects it): {instead}"
    return f"{key!r} was removed within this era (AgentV {tests_era.LAST_RELEASE} rejects it): {instead}"


def _one_of_required(error, record: Record, kind: str, path: tuple) -> Iterator[Said]:
    """anyOf whose branches each only require keys: say which keys, not the schema's text."""
    branches = error.validator_value
    if all(isinstance(b, dict) and set(b) == {"required"} for b in branches) and isinstance(error.instance, dict):
        keys = [key for b in branches for key in b["required"]]
        yield Said(path, f"missing required key: one of {', '.join(map(repr, keys))}",
                   hint=f"add {keys[0]!r}", code="missing-key")
        return
    yield from _not_matching(error, record, kind, path)


def _missing_keys(error, record: Record, kind: str, path: tuple) -> Iterator[Said]:
    instance = error.instance
    unknown = [k for k in instance if k not in error.schema.get("properties", {})]
    for key in (k for k in error.validator_value if k not in instance):
        misspelt = difflib.get_close_matches(key, unknown, n=1, cutoff=SUGGESTION_CUTOFF)
        if misspelt and kind not in RECORDING_KINDS:
            continue  # the error on the unknown key already says "did you mean ...?"
        hint = f"is {misspelt[0]!r} a misspelling of it?" if misspelt else f"add {key!r}"
        yield Said(path, f"missing required key {key!r}", hint=hint, code="missing-key")


def _wrong_type(error, record: Record, kind: str, path: tuple) -> Iterator[Said]:
    expected, instance = error.validator_value, error.instance
    wanted = " or ".join(expected) if isinstance(expected, list) else expected
    digits = _digits_beyond_64_bits(instance, record)
    if digits:
        got = f"integer {digits} (beyond 64 bits)"
    else:
        got = "null" if instance is None else f"{_JSON_TYPES.get(type(instance), 'value')} {short_json(instance)}"
    yield Said(path, f"expected {wanted}, got {got}", code="wrong-type")


def _not_allowed(error, record: Record, kind: str, path: tuple) -> Iterator[Said]:
    expected = error.validator_value
    allowed = ", ".join(a if isinstance(a, str) else short_json(a) for a in expected)
    yield Said(path, f"{_shown(error.instance, record)} is not one of: {allowed}",
               hint=_enum_hint(error.instance, expected), code="bad-value")


def _not_the_constant(error, record: Record, kind: str, path: tuple) -> Iterator[Said]:
    yield Said(path, f"expected {short_json(error.validator_value)}, "
                     f"got {_shown(error.instance, record)}", code="bad-value")


def _below_minimum(error, record: Record, kind: str, path: tuple) -> Iterator[Said]:
    yield Said(path, f"{_shown(error.instance, record)} is less than the minimum "
                     f"{short_json(error.validator_value)}", code="bad-value")


def _too_few_items(error, record: Record, kind: str, path: tuple) -> Iterator[Said]:
    yield Said(path, f"needs at least {error.validator_value} item(s)", code="bad-value")


def _empty(error, record: Record, kind: str, path: tuple) -> Iterator[Said]:
    yield Said(path, "must not be empty", code="bad-value")


def _not_the_pattern(error, record: Record, kind: str, path: tuple) -> Iterator[Said]:
    means = error.schema.get("patternMeans")  # the pattern in words, where a schema gives them
    if path and path[-1] == "timestamp":
        yield Said(path, f"{short_json(error.instance)} is not an ISO-8601 date-time",
                   hint="write it like 2025-11-09T19:27:09.514Z", code="bad-value")
    elif means:
        yield Said(path, f"{short_json(error.instance)} is not {means}", code="bad-value")
    else:
        yield from _not_matching(error, record, kind, path)


def _not_matching(error, record: Record, kind: str, path: tuple) -> Iterator[Said]:
    # Not error.message: jsonschema puts the Python repr of the whole value in it.
    yield Said(path, f"{_shown(error.instance, record)} does not match the schema "
                     f"({error.validator}: {short_json(error.validator_value)})", code="bad-value")


_DESCRIBERS: dict[str, Callable[[Any, Record, str, tuple], Iterator[Said]]] = {
    "additionalProperties": _unknown_keys,
    "not": _removed_key,
    "anyOf": _one_of_required,
    "required": _missing_keys,
    "type": _wrong_type,
    "enum": _not_allowed,
    "const": _not_the_constant,
    "minimum": _below_minimum,
    "minItems": _too_few_items,
    "minLength": _empty,
    "pattern": _not_the_pattern,
}  # any other keyword: _not_matching
