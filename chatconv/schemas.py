"""Find, load and compile the JSON Schemas: one registry, every `$ref` resolved locally; and
bundle them, one self-contained schema per name, for tools that cannot follow cross-file `$ref`s.

The schemas live in the repository's top-level `schemas/` folder and ship inside the wheel
as `chatconv/_schemas`; both places are looked up, the packaged one first.
"""

from __future__ import annotations

import re
from functools import cache
from pathlib import Path
from typing import Any, Callable
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
        if isinstance(node, dict):
            node = dict(node)
            ref = node.get("$ref")
            if isinstance(ref, str):
                target, _, fragment = ref.partition("#")
                target = _schema_name(urljoin(schema_uri(stem), target)) if target else stem
                embed(target)
                node["$ref"] = pointer(target, fragment)
            if isinstance(node.get("pattern"), str):
                node["pattern"] = _anchored_pattern(node["pattern"])
        return _subschemas_mapped(node, lambda sub: rewrite(sub, stem))

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
def fast_validator(name: str, published: bool = False):
    """A jsonschema-rs validator for `name`, compiled once: of its quick form (see _quick_form),
    for the hot path's `is_valid`; with `published`, of the schema as written, whose errors name
    the branch of a dispatch an instance failed in (see recall.failure_key)."""
    import jsonschema_rs

    form = 0 if published else 1
    load_schema(name)  # a KeyError that names the schemas there are, for another name
    registry = jsonschema_rs.Registry([(pair[0]["$id"], pair[form]) for pair in _quick_schemas().values()])
    return jsonschema_rs.validator_for(_quick_schemas()[name][form], registry=registry)


@cache
def _quick_schemas() -> dict[str, tuple[dict, dict]]:
    """Each schema's name: (the schema, its quick form)."""
    return {name: (schema, _quick_form(schema, schema)) for name, schema in _all_schemas().items()}


_DATA_KEYWORDS = {"const", "enum", "default", "examples"}  # their values are JSON, not schemas
_NAME_MAPS = {"properties", "patternProperties", "$defs"}  # their keys are names, not keywords


def _subschemas_mapped(node: Any, change: Callable[[Any], Any]) -> Any:
    """`node` (a schema, or a list of them) with `change` made to each schema in it: its keywords'
    values (each of a list's), and those of a map of names (`properties`, `$defs`); not a
    keyword's whose value is JSON data (`const`, `enum`...), nor anything in a schema's `$ref`
    or `pattern`, which are strings."""
    if isinstance(node, list):
        return [change(item) for item in node]
    if not isinstance(node, dict):
        return node
    changed = {}
    for key, value in node.items():
        if key in _NAME_MAPS and isinstance(value, dict):
            changed[key] = {name: change(sub) for name, sub in value.items()}
        else:
            changed[key] = value if key in _DATA_KEYWORDS else change(value)
    return changed


def _quick_form(node: Any, document: dict) -> Any:
    """`node` of `document`, with each dispatch on a field's value (see _dispatch_branches) made an
    anyOf of its branches: it holds for the same instances, and jsonschema-rs checks it in about
    two thirds of the time (a step of a recording: 2.0 µs, not 3.0), since it evaluates every `if`
    of an allOf, and an anyOf's branches only until one holds, those that do not failing at once
    on the field. The explaining validator keeps the published form, whose errors name a branch."""
    quick = _subschemas_mapped(node, lambda sub: _quick_form(sub, document))
    branches = _dispatch_branches(quick, document) if isinstance(quick, dict) else None
    if branches is None:
        return quick
    return {**{key: value for key, value in quick.items() if key != "allOf"}, "anyOf": branches}


def _dispatch_branches(node: dict, document: dict) -> list | None:
    """The `then`s of node's allOf when the allOf is a dispatch that an anyOf of them can stand
    for, else None. It is one when it is only `if {"properties": {F: V}, "required": [F]} then
    T`, F one field and V a `const` or an `enum` of strings; node is an object that requires F,
    its `properties` give F an `enum` of the Vs' values, each in one V; and every T (or what its
    local `$ref` points to) holds F to its V's values in its own `properties`. For an instance
    whose F is one of them, the allOf asks just the T of its V to hold; so does the anyOf, each
    other T failing on F. (A `$ref` into such an allOf would find it gone: none of ours has one,
    tests/test_quick_schemas.py holds that.)"""
    members = node.get("allOf")
    if node.get("type") != "object" or "anyOf" in node or not isinstance(members, list) or not members:
        return None
    field, values = None, []
    for member in members:
        condition = member.get("if") if isinstance(member, dict) and member.keys() == {"if", "then"} else None
        if not isinstance(condition, dict) or condition.keys() != {"properties", "required"} \
                or not isinstance(condition["properties"], dict) or len(condition["properties"]) != 1:
            return None
        ((key, test),) = condition["properties"].items()
        own = _held_values(test)
        if field not in (None, key) or condition["required"] != [key] or own is None or len(test) != 1:
            return None
        pinned = _local_target(member["then"], document).get("properties", {}).get(key)
        if _held_values(pinned) != own:
            return None
        field = key
        values.extend(own)
    enum = _held_values(node.get("properties", {}).get(field))
    if field not in node.get("required", ()) or enum is None or sorted(values) != enum \
            or len(set(values)) != len(values):
        return None
    return [member["then"] for member in members]


def _held_values(schema: Any) -> list[str] | None:
    """The strings a schema's `const` or `enum` holds a value to, sorted; None for another schema."""
    if not isinstance(schema, dict):
        return None
    values = [schema["const"]] if "const" in schema else schema.get("enum")
    if not isinstance(values, list) or not all(isinstance(value, str) for value in values):
        return None
    return sorted(values)


def _local_target(schema: Any, document: dict) -> dict:
    """`schema`, or what its `$ref` points to in `document` ({} for a `$ref` to another one)."""
    if not isinstance(schema, dict):
        return {}
    ref = schema.get("$ref")
    if not isinstance(ref, str):
        return schema
    if not ref.startswith("#/"):
        return {}
    node: Any = document
    for step in ref[2:].split("/"):
        step = step.replace("~1", "/").replace("~0", "~")
        node = node.get(step) if isinstance(node, dict) else None
    return node if isinstance(node, dict) else {}


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
