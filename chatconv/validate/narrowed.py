"""The explaining validator, narrowed to the values that fail: before jsonschema descends into a
property or an array item, the compiled validator (jsonschema-rs) of that subschema says whether
the value is valid, and a valid value is not walked. A record with one bad field among large
valid messages is explained at the cost of the bad field, not of the record.

The errors are the same: a value valid against a subschema yields no error from it (the two
validators agree, as check_schema already relies on; the schemas use neither $dynamicRef nor
unevaluated*, whose outcome could depend on where a subschema is met).
"""

from __future__ import annotations

from functools import cache
from typing import Any, Callable

from ..schemas import explaining_validator, load_schema, schema_names


@cache
def narrowed_validator(kind: str):
    """explaining_validator(kind), skipping the properties and items that are valid."""
    from jsonschema import validators

    base = explaining_validator(kind)
    skipping = validators.extend(type(base), {"properties": _properties, "items": _items, "allOf": _all_of,
                                              "if": _if, "$ref": _ref})
    # The registry is the base validator's: every $ref resolves locally, as there.
    return skipping(base.schema, registry=base._registry)


def _properties(validator, properties: dict, instance: Any, schema: dict):
    if not validator.is_type(instance, "object"):
        return
    for name, subschema in properties.items():
        if name in instance and not _is_valid(subschema, instance[name]):
            yield from validator.descend(instance[name], subschema, path=name, schema_path=name)


def _items(validator, items: Any, instance: Any, schema: dict):
    if items is False or not validator.is_type(instance, "array"):
        # `items: false` reports the extra items themselves: jsonschema's own keyword says it.
        from jsonschema._keywords import items as items_keyword

        yield from items_keyword(validator, items, instance, schema)
        return
    for index in range(len(schema.get("prefixItems", [])), len(instance)):
        if not _is_valid(items, instance[index]):
            yield from validator.descend(instance=instance[index], schema=items, path=index)


def _all_of(validator, all_of: list, instance: Any, schema: dict):
    for index, subschema in enumerate(all_of):
        if not _is_valid(subschema, instance):
            yield from validator.descend(instance, subschema, schema_path=index)


def _if(validator, if_schema: Any, instance: Any, schema: dict):
    # The condition told by the compiled validator (jsonschema's own asks the slow one): a
    # message schema dispatches on its role and each part's type with a dozen of these.
    check = _compiled(id(if_schema))
    holds = check(instance) if check is not None else validator.evolve(schema=if_schema).is_valid(instance)
    branch = "then" if holds else "else"
    if branch in schema and not _is_valid(schema[branch], instance):
        yield from validator.descend(instance, schema[branch], schema_path=branch)


_RESOLVED: dict[tuple[str, str], Any] = {}  # (base URI, $ref) -> referencing's Resolved


def _ref(validator, ref: str, instance: Any, schema: dict):
    # jsonschema's own `$ref`, less the walk of a valid value (it looks the reference up and
    # descends as this does, through the same private resolver).
    from jsonschema.exceptions import _WrappedReferencingError
    from referencing.exceptions import Unresolvable

    resolver = validator._resolver
    key = (resolver._base_uri, ref)  # one registry: a reference from one base resolves to one place
    resolved = _RESOLVED.get(key)
    if resolved is None:
        try:
            resolved = _RESOLVED[key] = resolver.lookup(ref)
        except Unresolvable as error:
            raise _WrappedReferencingError(error) from error
    target = resolved.contents
    if _is_valid(target, instance):
        return
    if isinstance(target, dict) and "$schema" in target:
        # A schema that names its dialect would be walked by that dialect's own validator
        # class (jsonschema's evolve), without these keywords: it names the same dialect.
        target = {key: value for key, value in target.items() if key != "$schema"}
    yield from validator.descend(instance, target, resolver=resolved.resolver)


def _is_valid(subschema: Any, value: Any) -> bool:
    check = _compiled(id(subschema))
    return check is not None and check(value)


_COMPILED: dict[int, Callable[[Any], bool] | None] = {}


def _compiled(key: int) -> Callable[[Any], bool] | None:
    """The fast `is_valid` of the subschema with this id() (a dict of the loaded schemas, which
    are kept for the life of the process), compiled when first met; None for one not found."""
    if key not in _COMPILED:
        where = _subschema_places().get(key)
        _COMPILED[key] = None if where is None else _compile(*where)
    return _COMPILED[key]


def _compile(uri: str, pointer: str) -> Callable[[Any], bool] | None:
    import jsonschema_rs

    try:
        return jsonschema_rs.validator_for({"$ref": uri + "#" + pointer}, registry=_registry()).is_valid
    except (ValueError, jsonschema_rs.ReferencingError):  # not compiled alone: walked, as before
        return None


@cache
def _registry():
    import jsonschema_rs

    return jsonschema_rs.Registry([(schema["$id"], schema) for schema in map(load_schema, schema_names())])


@cache
def _subschema_places() -> dict[int, tuple[str, str]]:
    """id() of each object of every loaded schema -> (its schema's $id, its JSON pointer)."""
    places: dict[int, tuple[str, str]] = {}
    for name in schema_names():
        root = load_schema(name)
        stack = [(root, "")]
        while stack:
            node, pointer = stack.pop()
            if isinstance(node, dict):
                places[id(node)] = (root["$id"], pointer)
                stack.extend((value, f"{pointer}/{_escape(key)}") for key, value in node.items())
            elif isinstance(node, list):
                stack.extend((value, f"{pointer}/{index}") for index, value in enumerate(node))
    return places


def _escape(key: str) -> str:
    return key.replace("~", "~0").replace("/", "~1")
