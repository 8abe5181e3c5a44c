"""OTLP JSON's typed attributes read into plain JSON: a span's attributes, each {key, value:
AnyValue}, as {key: (value, its path)}; the messages attributes stay the JSON text they are, the
tool definitions are read from theirs."""

from __future__ import annotations

from typing import Any

import orjson

from ..reading import Reading

INPUT, OUTPUT, SYSTEM = "gen_ai.input.messages", "gen_ai.output.messages", "gen_ai.system_instructions"
MESSAGE_KEYS = (SYSTEM, INPUT, OUTPUT)
# Attributes whose value is JSON text by the conventions: read as the JSON they hold.
JSON_ATTRIBUTES = (*MESSAGE_KEYS, "gen_ai.tool.definitions")


def attributes_of(items: Any, reading: Reading, path: tuple) -> dict[str, tuple[Any, tuple]] | None:
    """A span's attributes as {key: (value, path of the value)}: OTLP's typed values decoded."""
    if not isinstance(items, list):
        reading.error(path, "OTLP attributes must be an array of {key, value}", code="wrong-type")
        return None
    out = {}
    for index, item in enumerate(items):
        where = path + (index,)
        if not (isinstance(item, dict) and isinstance(item.get("key"), str) and isinstance(item.get("value"), dict)
                and len(item) == 2):
            reading.error(where, "an OTLP attribute must be {key, value: {stringValue | intValue | ...}} and "
                          "nothing else", code="wrong-type")
            return None
        if item["key"] in out:  # the conversation's metadata holds one value per key
            reading.error(where + ("key",), f"the attribute {item['key']!r} is given twice in this span",
                          code="wrong-type")
            return None
        value, at = any_value(item["value"]), where + ("value",)
        if item["key"] in JSON_ATTRIBUTES and isinstance(value, str):
            at += ("stringValue",)
            if item["key"] not in MESSAGE_KEYS:  # tool definitions: their JSON read here
                try:
                    value = orjson.loads(value)
                except orjson.JSONDecodeError as exc:
                    reading.error(at, f"{item['key']} is not JSON text ({exc})", code="invalid-json")
                    return None
        out[item["key"]] = (value, at)
    return out


def any_value(value: dict) -> Any:
    """An OTLP JSON AnyValue as plain JSON: strings, booleans, numbers (int64 written as text is
    read as a number), arrays and key-value lists (objects). bytesValue, and any shape OTLP does
    not define, is kept as written."""
    if len(value) != 1:
        return None if not value else value
    (kind, inner), = value.items()
    if kind in ("stringValue", "boolValue", "doubleValue"):
        return inner
    if kind == "intValue" and isinstance(inner, (str, int)) and not isinstance(inner, bool):
        try:
            return int(inner)
        except ValueError:
            return value
    # An array or key-value list read into plain JSON only when nothing of it would be lost
    # (no field beside `values`, each entry {key, value}, no key twice): else kept as written.
    values = inner.get("values", []) if isinstance(inner, dict) and set(inner) <= {"values"} else None
    if kind == "arrayValue" and isinstance(values, list):
        return [any_value(v) if isinstance(v, dict) else v for v in values]
    if kind == "kvlistValue" and isinstance(values, list) and all(
            isinstance(kv, dict) and isinstance(kv.get("key"), str) and set(kv) <= {"key", "value"}
            and isinstance(kv.get("value", {}), dict) for kv in values) \
            and len({kv["key"] for kv in values}) == len(values):
        return {kv["key"]: any_value(kv.get("value") or {}) for kv in values}
    return value
