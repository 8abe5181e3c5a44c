"""Find, load and compile the JSON Schemas: one registry, every `$ref` resolved locally.

The schemas live in the repository's top-level `schemas/` folder and ship inside the wheel
as `chatconv/_schemas`; both places are looked up, the packaged one first.
"""

from __future__ import annotations

import re
from functools import cache
from pathlib import Path
from typing import Any

import orjson

BASE_URI = "https://chatconv.dev/schemas/"
_PACKAGE = Path(__file__).resolve().parent


def resource_dir(packaged: str, top_level: str) -> Path:
    """The folder shipped in the wheel, else the one at the top of a source checkout."""
    for candidate in (_PACKAGE / packaged, _PACKAGE.parent / top_level):
        if candidate.is_dir():
            return candidate
    raise FileNotFoundError(f"chatconv is installed without its {top_level}/ folder")


@cache
def schema_dir() -> Path:
    return resource_dir("_schemas", "schemas")


@cache
def _all_schemas() -> dict[str, dict[str, Any]]:
    root = schema_dir()
    schemas = {}
    for path in sorted(root.rglob("*.json")):
        name = path.relative_to(root).with_suffix("").as_posix()
        schemas[name] = orjson.loads(path.read_bytes())
    return schemas


def schema_names() -> list[str]:
    """Every schema's name: its path under schemas/ without `.json` (`legacy/...` included)."""
    return list(_all_schemas())


def load_schema(name: str) -> dict[str, Any]:
    """The schema called `name`; KeyError names the ones that exist."""
    try:
        return _all_schemas()[name]
    except KeyError:
        raise KeyError(f"no schema {name!r}; known: {', '.join(schema_names())}") from None


def schema_uri(name: str) -> str:
    return BASE_URI + name + ".json"


@cache
def fast_validator(name: str):
    """A jsonschema-rs validator for `name`, compiled once; for the hot path (`is_valid`)."""
    import jsonschema_rs

    resources = [(schema["$id"], schema) for schema in _all_schemas().values()]
    registry = jsonschema_rs.Registry(resources)
    return jsonschema_rs.validator_for(load_schema(name), registry=registry)


@cache
def explaining_validator(name: str):
    """A jsonschema validator for `name`: slower, used only to explain a record that failed."""
    from jsonschema import Draft202012Validator, validators
    from referencing import Registry, Resource

    registry = Registry().with_resources(
        (schema["$id"], Resource.from_contents(schema)) for schema in _all_schemas().values()
    )
    validator_class = validators.extend(Draft202012Validator, {"pattern": _pattern_to_the_end})
    return validator_class(load_schema(name), registry=registry)


def _pattern_to_the_end(validator, pattern: str, instance: Any, schema: dict):
    """The `pattern` keyword with ECMA-262's `$`, as jsonschema-rs and the models read it.

    In Python's re, `$` also matches before a final newline: "...Z\n" would pass a timestamp
    pattern here that the fast path refuses, and the failure could not be explained.
    """
    from jsonschema.exceptions import ValidationError

    if validator.is_type(instance, "string") and not _ecma_regex(pattern).search(instance):
        yield ValidationError(f"{instance!r} does not match {pattern!r}")


@cache
def _ecma_regex(pattern: str) -> re.Pattern:
    """`pattern` compiled with each `$` anchor (not escaped, not in a [...] class) as `\\Z`."""
    out, in_class, escaped = [], False, False
    for char in pattern:
        if escaped:
            escaped = False
        elif char == "\\":
            escaped = True
        elif char == "[":
            in_class = True
        elif char == "]":
            in_class = False
        elif char == "$" and not in_class:
            char = r"\Z"
        out.append(char)
    return re.compile("".join(out))
