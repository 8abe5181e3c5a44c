"""Find, load and compile the JSON Schemas: one registry, every `$ref` resolved locally; and
bundle them, one self-contained schema per name, for tools that cannot follow cross-file `$ref`s.

The schemas live in the repository's top-level `schemas/` folder and ship inside the wheel
as `chatconv/_schemas`; both places are looked up, the packaged one first.
"""

from __future__ import annotations

import re
from functools import cache
from pathlib import Path
from typing import Any
from urllib.parse import urljoin

import orjson

BASE_URI = "https://chatconv.dev/schemas/"
BUNDLED_URI = BASE_URI + "bundled/"
DRAFT = "https://json-schema.org/draft/2020-12/schema"
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


def bundled_schema(name: str) -> dict[str, Any]:
    """`name`'s schema made self-contained, for tools that cannot follow cross-file `$ref`s
    (an editor's YAML extension, Python `jsonschema` without a registry, check-jsonschema).

    Every file it reaches (itself included) sits in `$defs` under its name (`legacy/` ones as
    `legacy~1NAME` in a pointer), each file's own `$defs` under `<file>:<def>`; every `$ref` is
    rewritten to point there. The top level refers to the schema itself and carries its title, so
    that an editor names it. Each `pattern` is written so that Python's `re` reads it as ECMA-262
    (the dialect JSON Schema names) does: see _anchored_pattern.
    """
    defs: dict[str, Any] = {}

    def pointer(stem: str, fragment: str) -> str:
        if fragment.startswith("/$defs/"):
            local, _, rest = fragment.removeprefix("/$defs/").partition("/")
            stem, fragment = f"{stem}:{local}", f"/{rest}" if rest else ""
        return "#/$defs/" + stem.replace("~", "~0").replace("/", "~1") + fragment

    def rewrite(node: Any, stem: str) -> Any:
        if isinstance(node, list):
            return [rewrite(item, stem) for item in node]
        if not isinstance(node, dict):
            return node
        out = {}
        for key, value in node.items():
            if key == "$ref" and isinstance(value, str):
                target, _, fragment = value.partition("#")
                target = _schema_name(urljoin(schema_uri(stem), target)) if target else stem
                embed(target)
                out[key] = pointer(target, fragment)
            elif key == "pattern" and isinstance(value, str):
                out[key] = _anchored_pattern(value)
            elif key in ("properties", "$defs") and isinstance(value, dict):  # names, not keywords
                out[key] = {name: rewrite(sub, stem) for name, sub in value.items()}
            else:
                out[key] = rewrite(value, stem)
        return out

    def embed(stem: str) -> None:
        if stem in defs:
            return
        defs[stem] = {}  # claimed first, so that a file that refers back is not embedded twice
        schema = load_schema(stem)
        for local, sub in schema.get("$defs", {}).items():
            defs[f"{stem}:{local}"] = rewrite(sub, stem)
        body = {k: v for k, v in schema.items() if k not in ("$id", "$schema", "$defs")}
        defs[stem] = rewrite(body, stem)

    embed(name)
    own = load_schema(name)
    return {
        "$schema": DRAFT,
        "$id": BUNDLED_URI + name + ".json",
        "title": own.get("title", name),
        "description": f"{own.get('description', own.get('title', name))} (Bundled by chatconv: the {name} "
                       "schema and every schema it refers to, under $defs.)",
        "$ref": pointer(name, ""),
        "$defs": defs,
    }


def bundle_text(name: str) -> str:
    """The bundle of `name` as written to a file and printed: JSON, indented by 2, a final newline."""
    return orjson.dumps(bundled_schema(name), option=orjson.OPT_INDENT_2).decode() + "\n"


def _schema_name(uri: str) -> str:
    """The name of the schema at `uri` (one of ours, below BASE_URI); KeyError for another."""
    if not (uri.startswith(BASE_URI) and uri.endswith(".json")):
        raise KeyError(f"$ref to {uri!r}, which is not one of chatconv's schemas")
    return uri.removeprefix(BASE_URI).removesuffix(".json")


def _anchored_pattern(pattern: str) -> str:
    """`pattern` with each `$` anchor (not escaped, not in a [...] class) as `(?!\\n)$`.

    Under ECMA-262 the two are the same (without the multiline flag, `$` matches at the end
    only, where no newline follows); Python's `re`, which `jsonschema` uses, also matches `$`
    before a final newline, and the lookahead forbids that. So every validator reads it as
    chatconv does.
    """
    return _replace_end_anchors(pattern, r"(?!\n)$")


def _replace_end_anchors(pattern: str, replacement: str) -> str:
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
            char = replacement
        out.append(char)
    return "".join(out)


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
    return re.compile(_replace_end_anchors(pattern, r"\Z"))
