"""The quick form of a schema (schemas._quick_form), which the hot path's fast validator checks:
each dispatch on a field's value (allOf of `if F is c then T`) made an anyOf of its branches. It
must accept exactly what the schema as written accepts, whatever the role, the part type and the
fields a message mixes; and a dispatch that an anyOf would read otherwise is left as written.
"""

from __future__ import annotations

import json
import re

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from chatconv.schemas import _quick_form, explaining_validator, fast_validator, load_schema, schema_names

# Valid parts and messages of each branch, which a twist may then break: another type or role,
# a field dropped, another branch's field added. A twisted one is what an anyOf of the branches
# could read otherwise than the allOf it stands for.
OUTPUTS = {"text": {"type": "text", "value": "a"}, "error-text": {"type": "error-text", "value": "a"},
           "json": {"type": "json", "value": {"k": [1]}}, "error-json": {"type": "error-json", "value": None},
           "content": {"type": "content", "value": [{"type": "text", "text": "a"},
                                                    {"type": "media", "data": "a", "mediaType": "image/png"}]}}
PARTS = {"text": {"type": "text", "text": "a"}, "image": {"type": "image", "image": "a"},
         "file": {"type": "file", "data": "a", "mediaType": "image/png"},
         "reasoning": {"type": "reasoning", "text": "a"},
         "tool-call": {"type": "tool-call", "toolCallId": "call-1", "toolName": "t", "input": {}},
         "tool-result": {"type": "tool-result", "toolCallId": "call-1", "toolName": "t", "output": OUTPUTS["json"]}}
ROLE_PARTS = {"system": [], "user": ["text", "image", "file"],
              "assistant": ["text", "file", "reasoning", "tool-call", "tool-result"], "tool": ["tool-result"]}
SEGMENTS = {"text": {"type": "text", "value": "a"}, "file": {"type": "file", "value": "a.txt"}}
FOREIGN_FIELDS = {"text": "a", "image": "a", "data": "a", "mediaType": "text/plain", "toolCallId": "c",
                  "toolName": "t", "input": 1, "output": OUTPUTS["text"], "value": "a", "providerExecuted": True,
                  "providerOptions": {"p": {}}, "filename": "f"}


@st.composite
def twisted(draw, value: dict, field: str, values: list[str]) -> dict:
    """`value`, or (one time in two) it with its `field` set to another of `values` (or one no
    branch has), a field dropped, or another branch's field added."""
    twist = draw(st.sampled_from(["none", "none", "none", "retype", "drop", "add"]))
    if twist == "retype":
        return {**value, field: draw(st.sampled_from([*values, "x"]))}
    if twist == "drop":
        dropped = draw(st.sampled_from(sorted(value)))
        return {key: item for key, item in value.items() if key != dropped}
    if twist == "add":
        name = draw(st.sampled_from(sorted(FOREIGN_FIELDS)))
        return {**value, name: FOREIGN_FIELDS[name]}
    return value


@st.composite
def parts(draw, kinds: list[str]) -> dict:
    part = dict(PARTS[draw(st.sampled_from(kinds))])
    if part["type"] == "tool-result":
        part["output"] = draw(twisted(OUTPUTS[draw(st.sampled_from(sorted(OUTPUTS)))], "type",
                                      [*OUTPUTS, "media"]))
    return draw(twisted(part, "type", list(PARTS)))


@st.composite
def messages(draw) -> dict:
    role = draw(st.sampled_from(sorted(ROLE_PARTS)))
    kinds = ROLE_PARTS[role]
    content = draw(st.lists(parts(kinds), min_size=1, max_size=3)) if kinds and draw(st.booleans()) else "hi"
    return draw(twisted({"role": role, "content": content}, "role", list(ROLE_PARTS)))


@st.composite
def input_messages(draw) -> dict:
    content = draw(st.lists(st.sampled_from(sorted(SEGMENTS)).flatmap(
        lambda kind: twisted(SEGMENTS[kind], "type", list(SEGMENTS))), max_size=3))
    return draw(twisted({"role": draw(st.sampled_from(sorted(ROLE_PARTS))), "content": content or "hi"},
                        "role", list(ROLE_PARTS)))


def _verdicts(kind: str, instance) -> tuple[bool, bool, bool]:
    """(quick form, schema as written, Python jsonschema's explaining validator) accept it."""
    return (fast_validator(kind).is_valid(instance), fast_validator(kind, published=True).is_valid(instance),
            explaining_validator(kind).is_valid(instance))


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(message=messages(), as_input=st.booleans())
def test_a_model_message_is_judged_alike_in_its_quick_form(message, as_input):
    assert len(set(_verdicts("model-message", message))) == 1
    step = {"conversationId": "c", "stepIndex": 0, "input": message if as_input else {"role": "user", "content": "q"},
            "output": [] if as_input else [message]}
    assert len(set(_verdicts("step-record", step))) == 1


@settings(max_examples=200, deadline=None)
@given(message=input_messages())
def test_an_input_message_is_judged_alike_in_its_quick_form(message):
    assert len(set(_verdicts("input-message", message))) == 1


def test_the_messages_dispatches_are_quick_and_an_open_one_is_left_as_written():
    # The hot path's reason for the quick form: no role or part-type dispatch is left an allOf.
    for name in ("model-message", "input-message"):
        schema = load_schema(name)
        assert '"allOf"' in json.dumps(schema) and '"allOf"' not in json.dumps(_quick_form(schema, schema))
    # An evaluator's type may be any string (other types are kept): no anyOf can stand for it.
    evaluator = load_schema("evaluator")
    assert _quick_form(evaluator, evaluator) == evaluator


def _dispatch(then_a: dict, then_b: dict, **node) -> dict:
    schema = {"type": "object", "required": ["k"], "properties": {"k": {"enum": ["a", "b"]}},
              "allOf": [{"if": {"properties": {"k": {"const": "a"}}, "required": ["k"]}, "then": then_a},
                        {"if": {"properties": {"k": {"const": "b"}}, "required": ["k"]}, "then": then_b}]}
    return {**schema, **node}


A = {"properties": {"k": {"const": "a"}}, "required": ["x"]}
B = {"properties": {"k": {"const": "b"}}, "required": ["y"]}


@pytest.mark.parametrize(("schema", "quick"), [
    pytest.param(_dispatch(A, B), True, id="each branch holds k to its value"),
    pytest.param(_dispatch({"required": ["x"]}, B), False, id="a branch that does not hold k"),
    pytest.param(_dispatch({**A, "properties": {"k": {"const": "b"}}}, B), False, id="a branch holding k to another's value"),
    pytest.param(_dispatch(A, B, properties={"k": {"enum": ["a", "b", "c"]}}), False, id="a value without its branch"),
    pytest.param(_dispatch(A, B, required=[]), False, id="k not required"),
    pytest.param(_dispatch({**A, "type": "object"}, B, type=["object", "array"]), False, id="not only an object"),
    pytest.param({**_dispatch(A, B), "$defs": {"a": A}, "allOf": [
        {"if": {"properties": {"k": {"const": "a"}}, "required": ["k"]}, "then": {"$ref": "#/$defs/a"}},
        {"if": {"properties": {"k": {"enum": ["b"]}}, "required": ["k"]}, "then": B}]}, True,
        id="a branch by its local $ref, a value by an enum"),
])
def test_a_dispatch_is_made_an_anyof_only_where_it_holds_for_the_same_instances(schema, quick):
    import jsonschema_rs

    made = _quick_form(schema, schema)
    assert ("anyOf" in made and "allOf" not in made) is quick
    # An anyOf of the branches made whatever the schema, against the schema as written: where
    # the dispatch is not made one, some instance tells them apart.
    anyway = {**{key: value for key, value in schema.items() if key != "allOf"},
              "anyOf": [member["then"] for member in schema["allOf"]]}
    written, read_quick, read_anyway = (jsonschema_rs.validator_for(form) for form in (schema, made, anyway))
    instances = ({"k": "a", "x": 1}, {"k": "a", "y": 1}, {"k": "b", "y": 1}, {"k": "b", "x": 1},
                 {"k": "c", "x": 1}, {"x": 1}, {}, [], {"k": "a", "x": 1, "y": 1})
    for instance in instances:
        assert read_quick.is_valid(instance) == written.is_valid(instance), instance
    told_apart = [instance for instance in instances if read_anyway.is_valid(instance) != written.is_valid(instance)]
    assert bool(told_apart) is not quick


def test_no_schema_refers_into_a_dispatch():
    # The quick form has no allOf where a dispatch was: a `$ref` into one would find nothing.
    refs = re.findall(r'"\$ref": "([^"]*)"', json.dumps([load_schema(name) for name in schema_names()]))
    assert refs and not [ref for ref in refs if "/allOf/" in ref or "/anyOf/" in ref]
