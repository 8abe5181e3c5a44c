"""The pydantic models agree with the JSON Schemas: they accept and reject the same data.

Valid instances come from the schemas (hypothesis-jsonschema); broken ones are valid instances
with one targeted change that the schema certainly rejects. The real recordings must parse and
dump back unchanged, key order included.
"""

from __future__ import annotations

import copy
import json
import re
from collections import defaultdict
from functools import cache
from pathlib import Path
from typing import Any, Iterator

import pytest
from hypothesis import HealthCheck, Phase, assume, given, note, settings
from hypothesis import strategies as st
from hypothesis_jsonschema import from_schema
from jsonschema import Draft202012Validator
from pydantic import ValidationError

from chatconv.migrate import is_legacy, migrate_record, upgrade_record
from chatconv.models import MODELS, Conversation, StepRecord, parse_record, read_records
from chatconv.problems import ChatconvError
from chatconv.schemas import (
    bundled_schema,
    explaining_validator,
    fast_validator,
    load_schema,
    schema_names,
    schema_uri,
)
from conftest import to_legacy

FIXTURES = Path(__file__).parent / "data" / "recorded"  # copies of shared/fixtures/recorded
KINDS = [name for name in schema_names() if not name.startswith("legacy/")]
# Recordings keep unknown keys (SPEC §1), so only eval-file kinds can be broken by adding one.
RECORDED_KINDS = {"model-message", "conversation-step", "step-record", "conversation"}
# hypothesis favours the simplest branch of a union (a system message, a text part), so each
# role and part type of a model message also gets a run of its own.
MESSAGE_BRANCHES = [
    ("system",),
    ("user", "text"),
    ("user", "image"),
    ("user", "file"),
    ("assistant", "text"),
    ("assistant", "file"),
    ("assistant", "reasoning"),
    ("assistant", "tool-call"),
    ("assistant", "tool-result", "json"),
    ("tool", "text"),
    ("tool", "error-json"),
    ("tool", "content", "media"),
]
CASES = [
    *(pytest.param(kind, (), id=kind) for kind in KINDS),
    *(
        pytest.param("model-message", focus, id="model-message:" + "/".join(focus))
        for focus in MESSAGE_BRANCHES
    ),
]
PLACEHOLDER = "$chatconv-test:branch"
MAX_ITEMS = 3
DROP = object()


# Schema helpers ----------------------------------------------------------------------------


def resolve(schema: dict[str, Any], ref: str) -> dict[str, Any]:
    node: Any = schema
    for token in ref.removeprefix("#/").split("/"):
        node = node[token.replace("~1", "/").replace("~0", "~")]
    return node


def inline_refs(bundle: dict[str, Any], node: Any) -> Any:
    """`node` with every `$ref` replaced by its target (no schema here refers to itself)."""
    if isinstance(node, list):
        return [inline_refs(bundle, item) for item in node]
    if not isinstance(node, dict):
        return node
    if "$ref" in node:
        assert set(node) <= {"$ref", "description"}, f"constraints beside a $ref: {node}"
        return inline_refs(bundle, resolve(bundle, node["$ref"]))
    return {key: inline_refs(bundle, value) for key, value in node.items()}


def tag_dispatch(node: dict[str, Any]) -> tuple[str, list[tuple[list, Any]]] | None:
    """(tag, [(tag values, then-schema)]) when `node`'s allOf is only if/then on one tag."""
    tags, cases = set(), []
    for item in node.get("allOf", ()):
        condition = item.get("if", {})
        if set(item) != {"if", "then"} or set(condition) != {"properties", "required"}:
            return None
        ((tag, test),) = condition["properties"].items()
        values = [test["const"]] if "const" in test else test.get("enum")
        if condition["required"] != [tag] or values is None:
            return None
        tags.add(tag)
        cases.append((values, item["then"]))
    return (tags.pop(), cases) if len(tags) == 1 else None


def branch_schemas(node: dict[str, Any], tag: str, cases: list[tuple[list, Any]]) -> list[dict]:
    """One schema per tag value that `node` allows, each with its `then` folded in."""
    base = {key: value for key, value in node.items() if key != "allOf"}
    properties = base.get("properties", {})

    def with_tag(constraint: dict[str, Any]) -> dict[str, Any]:
        tag_schema = {**properties.get(tag, {}), **constraint}
        return {**base, "properties": {**properties, tag: tag_schema}}

    branches = [{**with_tag({"enum": values}), "allOf": [then]} for values, then in cases]
    covered = [value for values, _ in cases for value in values]
    declared = properties.get(tag, {}).get("enum")
    if declared is None:  # an open tag (evaluator type): any other value, without a then
        branches.append(with_tag({"not": {"enum": covered}}))
    elif uncovered := [value for value in declared if value not in covered]:
        branches.append(with_tag({"enum": uncovered}))
    return branches


def focus_of(shape: dict[str, Any], tag: str, focus: tuple[str, ...]) -> bool:
    return bool(set(shape["properties"][tag].get("enum", ())) & set(focus))


@cache
def instances(kind: str, focus: tuple[str, ...] = ()) -> st.SearchStrategy:
    """Instances of `kind` generated from its schema; where a tag value is in `focus`, only
    the branches for it.

    hypothesis-jsonschema rebuilds the strategy of every nested schema on every draw, and is
    slow on if/then dispatch. So each nested object schema gets its own strategy, built once,
    and a tag-dispatched one a strategy per branch; the parent generates a placeholder that is
    filled in afterwards. Tests still check every instance against the real schema.
    """
    bundle = bundled_schema(kind)
    alternatives: list[st.SearchStrategy] = []
    ids: dict[str, int] = {}

    def placeholder(node: dict[str, Any]) -> dict[str, Any]:
        key = json.dumps(node, sort_keys=True)
        if key not in ids:
            ids[key] = len(alternatives)
            alternatives.append(st.nothing())  # the slot is taken before nested schemas get theirs
            dispatch = tag_dispatch(node)
            shapes = branch_schemas(node, *dispatch) if dispatch else [node]
            if dispatch:
                tag = dispatch[0]
                shapes = [s for s in shapes if focus_of(s, tag, focus)] or shapes
            alternatives[ids[key]] = st.one_of([filled(from_schema(split(s))) for s in shapes])
        return {"const": {PLACEHOLDER: ids[key]}}

    def split(node: Any, nested: bool = False) -> Any:
        if isinstance(node, list):
            return [split(item, nested) for item in node]
        if not isinstance(node, dict):
            return node
        if nested and (node.get("type") == "object" or "properties" in node or tag_dispatch(node)):
            return placeholder(node)
        out = {}
        if node.get("type") == "object" and "properties" not in node:
            out["maxProperties"] = MAX_ITEMS  # free-form objects: small ones are as telling
        for key, value in node.items():
            if key == "properties":
                out[key] = {name: split(sub, nested=True) for name, sub in value.items()}
            elif key in ("items", "additionalProperties"):
                out[key] = split(value, nested=True)
                if key == "items":  # small arrays keep examples fast; their items vary anyway
                    out.setdefault("maxItems", max(MAX_ITEMS, node.get("minItems", 0)))
            elif key in ("allOf", "anyOf"):
                out[key] = split(value)
            elif key in ("then", "else") and "properties" not in node and set(node["if"]) <= {"type", "required"}:
                # No properties of this node's for a branch to be merged with. A `then` chosen by
                # the value's type alone is the whole value, of that type: an object there gets a
                # strategy of its own. In any other branch, the objects in its properties do.
                if key == "then" and set(node["if"]) == {"type"}:
                    out[key] = split({"type": node["if"]["type"], **value}, nested=True)
                else:
                    out[key] = split(value)
            else:
                out[key] = value
        return out

    def fill(value: Any, draw) -> Any:
        if isinstance(value, list):
            return [fill(item, draw) for item in value]
        if not isinstance(value, dict):
            return value
        if set(value) == {PLACEHOLDER}:
            return draw(alternatives[value[PLACEHOLDER]])
        return {key: fill(item, draw) for key, item in value.items()}

    @st.composite
    def filled(draw, strategy: st.SearchStrategy) -> Any:
        return fill(draw(strategy), draw)

    root = inline_refs(bundle, {"$ref": bundle["$ref"]})
    return alternatives[placeholder(root)["const"][PLACEHOLDER]]


# Targeted mutations ------------------------------------------------------------------------

# "1", 1 and True are what a lax model coerces; not 1.0, which is an integer to a schema.
WRONG_VALUES = ["1", 1, 0.5, True, None, [], {}]


def enum_strings(node: Any) -> set[str]:
    """Every string that an enum or const allows, anywhere in `node`."""
    if isinstance(node, list):
        return set().union(*map(enum_strings, node))
    if not isinstance(node, dict):
        return set()
    found = {v for v in node.get("enum", [node.get("const")]) if isinstance(v, str)}
    return found.union(*map(enum_strings, node.values()))


# A tag value of another branch ("text" in a tool message) is the likeliest slip of a model.
OUTSIDE_ENUM = ["human", 12345, *sorted(enum_strings([load_schema(kind) for kind in KINDS]))]


def json_types(value: Any) -> set[str]:
    if isinstance(value, bool):
        return {"boolean"}
    if isinstance(value, int):
        return {"integer", "number"}
    kinds = {str: "string", float: "number", type(None): "null", list: "array", dict: "object"}
    return {kinds[type(value)]}


# In `depends`: the value's own type, or its content (not one of its keys), chose the branch.
ITS_TYPE, ITS_CONTENT = object(), object()


def applicable(bundle: dict, schema: dict, instance: Any) -> list[tuple[dict, frozenset]]:
    """Every subschema that applies to `instance` (through $ref, allOf and if/then), with the
    keys whose values decided that it applies."""
    found, stack = [], [(schema, frozenset())]
    while stack:
        node, depends = stack.pop()
        found.append((node, depends))
        if "$ref" in node:
            stack.append((resolve(bundle, node["$ref"]), depends))
        stack.extend((sub, depends) for sub in node.get("allOf", ()))
        if "if" in node:
            condition = node["if"]
            branch = "then" if Draft202012Validator(condition).is_valid(instance) else "else"
            keys = set(condition.get("properties", {})) | set(condition.get("required", []))
            shape = set(condition) - {"properties", "required"}  # what the value's own shape decides
            if shape == {"type"}:
                keys.add(ITS_TYPE)  # a change of the whole value may switch the branch
            elif shape:
                keys.add(ITS_CONTENT)  # e.g. `items`: any change inside may switch it too
            if branch in node:
                stack.append((node[branch], depends | keys))
    return found


def invalid_values(node: dict[str, Any]) -> Iterator[tuple[str, Any]]:
    """(mutation class, value) for values that `node` alone certainly rejects."""
    if "type" in node:
        allowed = {node["type"]} if isinstance(node["type"], str) else set(node["type"])
        yield from (("wrong type", v) for v in WRONG_VALUES if not json_types(v) & allowed)
    if "enum" in node or "const" in node:
        allowed_values = node["enum"] if "enum" in node else [node["const"]]
        yield from (("outside enum", v) for v in OUTSIDE_ENUM if v not in allowed_values)
    if node.get("minLength", 0) >= 1:
        yield "constraint", ""
    if "minimum" in node:
        yield "constraint", node["minimum"] - 1
    if node.get("minItems", 0) >= 1:
        yield "constraint", []
    if "pattern" in node and not re.search(node["pattern"], "yesterday"):
        yield "constraint", "yesterday"


def mutations(bundle: dict, schema: dict, instance: Any, unknown_keys: bool, path=()) -> Iterator:
    """(mutation class, path, new value or DROP) for one-place changes that make `instance`
    invalid under `schema`. A change at a key only uses subschemas that do not depend on that
    key, so that it cannot switch the if/then branch that made it invalid."""
    nodes = [(node, depends) for node, depends in applicable(bundle, schema, instance) if ITS_CONTENT not in depends]
    if isinstance(instance, dict):
        for node, depends in nodes:
            for key in node.get("required", []):
                if key in instance and key not in depends:
                    yield "drop required key", path + (key,), DROP
            if unknown_keys and node.get("additionalProperties") is False:
                assert "unknownKey" not in node.get("properties", {})
                yield "unknown key", path + ("unknownKey",), 1
        for key, value in instance.items():
            children = [
                node["properties"][key]
                if key in node.get("properties", {})
                else node.get("additionalProperties")
                for node, depends in nodes
                if key not in depends
            ]
            yield from child_mutations(bundle, children, value, unknown_keys, path + (key,))
    elif isinstance(instance, list):
        children = [node["items"] for node, _ in nodes if "items" in node]
        for index, value in enumerate(instance):
            yield from child_mutations(bundle, children, value, unknown_keys, path + (index,))


def child_mutations(bundle, children, value, unknown_keys, path) -> Iterator:
    for child in children:
        if not isinstance(child, dict):
            continue
        for node, depends in applicable(bundle, child, value):
            if not depends:
                yield from ((change, path, bad) for change, bad in invalid_values(node))
        yield from mutations(bundle, child, value, unknown_keys, path)


def mutated(instance: Any, path: tuple, new: Any) -> Any:
    broken = copy.deepcopy(instance)
    *parents, last = path
    target = broken
    for step in parents:
        target = target[step]
    if new is DROP:
        del target[last]
    else:
        target[last] = new
    return broken


# Tests -------------------------------------------------------------------------------------


def upgraded_or_none(record: Any, kind: str) -> Any:
    """`record` moved up by the migrations that find their shape in it; None when none does or
    one refuses."""
    if not is_legacy(record, kind):
        return None
    try:
        return upgrade_record(copy.deepcopy(record), kind)[0]
    except Exception:
        return None


def dump(record) -> Any:
    return record.model_dump(mode="json", by_alias=True, exclude_unset=True)


def assert_same_json(dumped: Any, original: Any) -> None:
    assert dumped == original
    assert json.dumps(dumped) == json.dumps(original), "same data, but keys in another order"


# Kinds whose instances take about a second each to generate (the tests era's many optional
# sections): fewer examples, to keep the suite within CI's ten minutes.
SLOW_TO_GENERATE = {"eval-tests": 8, "eval-current": 15}  # (seconds an example: the suite's time)


def property_settings(focus: tuple[str, ...], shrink: bool = True, kind: str = "") -> settings:
    return settings(
        max_examples=15 if focus else SLOW_TO_GENERATE.get(kind, 40),
        deadline=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
        phases=list(Phase) if shrink else [Phase.explicit, Phase.reuse, Phase.generate],
    )


def test_every_schema_has_a_model():
    assert sorted(MODELS) == sorted(KINDS)


def test_parse_record_names_the_known_kinds_for_an_unknown_one():
    with pytest.raises(KeyError, match="eval-file"):
        parse_record("legacy/conversation-step-v1", {})


@pytest.mark.parametrize("kind", schema_names())
def test_bundled_schema_is_self_contained_and_validates_like_the_registry(kind):
    bundle = bundled_schema(kind)
    Draft202012Validator.check_schema(bundle)
    refs = re.findall(r'"\$ref": "([^"]*)"', json.dumps(bundle))
    assert refs and all(ref.startswith("#/$defs/") for ref in refs)
    for ref in refs:
        resolve(bundle, ref)
    records = [
        json.loads(line)
        for path in FIXTURES.glob("*.jsonl")
        for line in path.read_text(encoding="utf-8").splitlines()
    ]
    samples = [*records, *(r["steps"][0] for r in records if r.get("steps")), {}, [], "x"]
    bundled, registry = Draft202012Validator(bundle), explaining_validator(kind)
    for sample in samples:
        assert bundled.is_valid(sample) == registry.is_valid(sample)


@pytest.mark.parametrize(("kind", "focus"), CASES)
def test_model_accepts_what_the_schema_generates_and_dumps_it_back(kind, focus):
    @property_settings(focus, kind=kind)
    @given(instance=instances(kind, focus))
    def check(instance):
        assert explaining_validator(kind).is_valid(instance)
        assert fast_validator(kind).is_valid(instance)
        assert_same_json(dump(parse_record(kind, instance)), instance)

    check()


@pytest.mark.parametrize(("kind", "focus"), CASES)
def test_model_rejects_what_the_schema_rejects(kind, focus):
    bundle = bundled_schema(kind)

    # A failure notes its change and path; shrinking a whole broken conversation takes minutes.
    @property_settings(focus, shrink=False, kind=kind)
    @given(instance=instances(kind, focus), data=st.data())
    def check(instance, data):
        found = list(mutations(bundle, bundle, instance, unknown_keys=kind not in RECORDED_KINDS))
        assume(found)
        # One change per place of the schema (list indices aside) in every example, so that
        # a top-level key is broken as often as a key of a deeply nested part.
        places = defaultdict(list)
        for mutation in found:
            places[tuple("*" if isinstance(step, int) else step for step in mutation[1])].append(
                mutation
            )
        for place in sorted(places, key=repr):
            classes = sorted({m[0] for m in places[place]})
            chosen = data.draw(st.sampled_from(classes), label=f"mutation at {place}")
            _, path, new = data.draw(st.sampled_from([m for m in places[place] if m[0] == chosen]))
            broken = mutated(instance, path, new)
            note(f"{chosen} at {path}: {broken!r}")
            assert not explaining_validator(kind).is_valid(broken)
            assert not fast_validator(kind).is_valid(broken)
            upgraded = upgraded_or_none(broken, kind)
            if upgraded is not None and fast_validator(kind).is_valid(upgraded):
                # An older shape the model reads as upgraded (SPEC §1a) must be taken as that.
                assert_same_json(dump(parse_record(kind, broken)), upgraded)
                continue
            with pytest.raises(ValidationError):
                parse_record(kind, broken)

    check()


STEP = {"stepIndex": 0, "input": {"role": "user", "content": "hi"}, "output": []}
TIMESTAMP_PATTERN = load_schema("conversation-step")["properties"]["timestamp"]["pattern"]


def verdicts(kind: str, instance: Any) -> tuple[bool, bool, bool]:
    """(explaining validator, fast validator, model) accept the instance."""
    try:
        parse_record(kind, instance)
        model = True
    except ValidationError:
        model = False
    return explaining_validator(kind).is_valid(instance), fast_validator(kind).is_valid(instance), model


@pytest.mark.parametrize(("value", "accepted"), [(2, True), (2.0, True), (2.5, False), ("2", False),
                                                 (True, False), (-1.0, False)])
def test_an_integral_number_is_an_integer_to_schemas_and_model(value, accepted):
    # JSON Schema's integer is a number without a fraction: 2.0 is one, and the model reads it as 2.
    assert verdicts("step-record", {**STEP, "stepIndex": value}) == (accepted,) * 3
    if accepted:
        assert parse_record("step-record", {**STEP, "stepIndex": value}).stepIndex == 2


@settings(max_examples=300, deadline=None)
@given(timestamp=st.one_of(
    st.from_regex(TIMESTAMP_PATTERN),
    st.tuples(st.from_regex(TIMESTAMP_PATTERN, fullmatch=True), st.sampled_from(["\n", " ", "\r\n", "Z"]))
    .map("".join),
    st.text(alphabet="0123456789-:TZ.+\n", max_size=30),
))
def test_a_timestamp_pattern_reads_alike_in_schemas_and_model(timestamp):
    # Python's `$` also matches before a final newline; ECMA-262's, jsonschema-rs's and the
    # model's do not: all three must give one verdict, so that every failure can be explained.
    found = verdicts("step-record", {**STEP, "timestamp": timestamp})
    assert found in ((True,) * 3, (False,) * 3), found
    if timestamp.endswith("\n"):
        assert found == (False,) * 3


def part_types_by_role() -> dict[str, list[str]]:
    """The part types that each role's content allows, as model-message.json says."""
    schema = load_schema("model-message")
    allowed = {}
    for role in schema["properties"]["role"]["enum"]:
        content = schema["$defs"][f"{role}-message"]["properties"]["content"]
        part_type = content.get("items", {}).get("properties", {}).get("type", {})
        allowed[role] = part_type.get("enum", [])
    return allowed


PART_TYPES = part_types_by_role()
MISPLACED_PARTS = [
    (role, part_type)
    for role in PART_TYPES
    for part_type in sorted(set().union(*PART_TYPES.values()))
    if part_type not in PART_TYPES[role]
]


def parts_of_type(part_type: str) -> st.SearchStrategy:
    role = next(role for role, types in PART_TYPES.items() if part_type in types)
    return (
        instances("model-message", (role, part_type))
        .filter(lambda message: isinstance(message["content"], list))
        .map(lambda message: [p for p in message["content"] if p["type"] == part_type])
        .filter(bool)
        .map(lambda parts: parts[0])
    )


@pytest.mark.parametrize(
    ("role", "part_type"), MISPLACED_PARTS, ids=[f"{r}-with-{p}" for r, p in MISPLACED_PARTS]
)
def test_a_part_is_rejected_where_its_role_does_not_allow_it(role, part_type):
    # A model that takes any part anywhere passes the mutations above: this is the slip they miss.
    @settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.too_slow])
    @given(part=parts_of_type(part_type))
    def check(part):
        message = {"role": role, "content": [part]}
        assert not explaining_validator("model-message").is_valid(message)
        assert not fast_validator("model-message").is_valid(message)
        with pytest.raises(ValidationError):
            parse_record("model-message", message)

    check()


@pytest.mark.parametrize("path", sorted(FIXTURES.glob("*.jsonl")), ids=lambda p: p.name)
def test_recordings_parse_and_dump_back_unchanged(path):
    lines = path.read_text(encoding="utf-8").splitlines()
    assert lines
    for line in lines:
        record = json.loads(line)
        kind = "conversation" if "steps" in record else "step-record"
        parsed = parse_record(kind, record)
        assert isinstance(parsed, MODELS[kind])
        assert_same_json(dump(parsed), record)


def test_recordings_keep_unknown_keys():
    line = (FIXTURES / "weather-steps.jsonl").read_text(encoding="utf-8").splitlines()[0]
    record = json.loads(line)
    part = record["output"][0]["content"][0]
    record["output"][0]["content"][0] = {"recordedBy": "sdk", **part}
    record["output"][0]["latencyMs"] = 12
    assert not explaining_validator("step-record").is_valid(record)  # validate warns about them
    dumped = dump(parse_record("step-record", record))
    assert dumped == record
    assert list(dumped["output"][0]["content"][0]) == [*part, "recordedBy"]


@pytest.mark.parametrize("path", sorted(FIXTURES.glob("*.jsonl")), ids=lambda p: p.name)
def test_a_legacy_record_parses_as_its_migrated_self(path):
    # Read as every command reads it: upgraded on read, the caller's data left as it was.
    for line in path.read_text(encoding="utf-8").splitlines():
        legacy = to_legacy(json.loads(line))
        kind = "conversation" if "steps" in legacy else "step-record"
        before = copy.deepcopy(legacy)
        parsed = parse_record(kind, legacy)
        assert legacy == before
        assert parsed == parse_record(kind, migrate_record(copy.deepcopy(legacy), kind)[0])
        assert_same_json(dump(parsed), json.loads(line))


def test_a_legacy_step_with_one_output_object_and_ai_sdk4_parts_parses():
    step = {"stepIndex": 0, "input": {"role": "user", "content": "weather?"},
            "output": {"role": "assistant", "content": [
                {"type": "tool-call", "toolCallId": "c1", "toolName": "weather", "args": {"city": "Oslo"}},
                {"type": "tool-result", "toolCallId": "c1", "toolName": "weather", "result": "cold", "isError": True}]}}
    parsed = parse_record("step-record", step)
    call, result = parsed.output[0].content
    assert call.input == {"city": "Oslo"} and result.output.type == "error-text" and result.output.value == "cold"
    assert isinstance(step["output"], dict) and "args" in step["output"]["content"][0]


@pytest.mark.parametrize("path", sorted(FIXTURES.glob("*.jsonl")), ids=lambda p: p.name)
def test_read_records_gives_the_models_of_a_file(path, tmp_path):
    records = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    models = list(read_records(path))
    assert [type(model) for model in models] == [Conversation if "steps" in r else StepRecord for r in records]
    assert [dump(model) for model in models] == records
    legacy = tmp_path / path.name
    legacy.write_text("".join(json.dumps(to_legacy(r)) + "\n" for r in records), encoding="utf-8")
    assert list(read_records(legacy)) == models


def test_read_records_reads_an_eval_file_of_older_spellings_as_upgraded(tmp_path):
    path = tmp_path / "old.yaml"  # late-v2 spellings: moved within their era, never past it
    path.write_text("evalcases:\n  - id: greet\n    criteria: polite\n    input: hello\n", encoding="utf-8")
    [model] = read_records(path)
    assert isinstance(model, MODELS["eval-file"])
    assert dump(model) == {"evalcases": [{"id": "greet", "outcome": "polite",
                                          "input_messages": [{"role": "user", "content": "hello"}]}]}


def test_read_records_stops_at_a_record_it_cannot_read(tmp_path):
    path = tmp_path / "steps.jsonl"
    good = json.dumps({"stepIndex": 0, "input": {"role": "user", "content": "hi"}, "output": []})
    path.write_text(f"{good}\n" + json.dumps({"stepIndex": -1, "input": {"role": "user", "content": "x"},
                                              "output": []}) + "\n", encoding="utf-8")
    models = read_records(path)
    assert next(models).stepIndex == 0
    with pytest.raises(ChatconvError) as caught:
        next(models)
    [problem] = caught.value.problems
    assert (problem.file, problem.line, problem.path) == (str(path), 2, "$.stepIndex")
    path.write_text('{"hello": "world"}\n', encoding="utf-8")
    with pytest.raises(ChatconvError, match="cannot tell what kind of record this is"):
        list(read_records(path))
    path.write_text(f"{good}\n{{oops\n", encoding="utf-8")
    with pytest.raises(ChatconvError) as caught:
        list(read_records(path, kind="step"))
    assert caught.value.problems[0].line == 2


@pytest.mark.parametrize("name", schema_names())
def test_schema_is_documented(name):
    schema = load_schema(name)
    assert schema["$id"] == schema_uri(name)
    assert isinstance(schema.get("title"), str) and schema["title"].strip()

    def properties(node: Any) -> Iterator[tuple[str, dict]]:
        if isinstance(node, list):
            for item in node:
                yield from properties(item)
        elif isinstance(node, dict):
            for key, value in node.items():
                if key == "properties":
                    for prop, sub in value.items():
                        yield prop, sub
                        yield from properties(sub)
                elif key != "if":  # a condition tests a property, it does not declare one
                    yield from properties(value)

    def described(sub: dict) -> bool:
        if "description" in sub:
            return True
        ref = sub.get("$ref", "")
        return set(sub) == {"$ref"} and ref.startswith("#/$defs/") and (
            "description" in resolve(schema, ref)
        )

    assert [prop for prop, sub in properties(schema) if not described(sub)] == []


def test_an_older_eval_file_parses_as_a_later_eras_model_moved_up_to_it_never_past():
    v2 = {"evalcases": [{"id": "a", "outcome": "Says hi", "input_messages": [{"role": "user", "content": "hi"}]}]}
    before = copy.deepcopy(v2)
    parsed = parse_record("eval-tests", v2)
    assert parsed.root == {"tests": [{"id": "a", "criteria": "Says hi", "input": "hi"}]} and v2 == before
    assert parse_record("eval-current", v2).root["tests"] == [{"id": "a", "criteria": "Says hi", "vars": {"input": "hi"}}]
    # A tests-era file is not moved back into the evalcases era's model.
    with pytest.raises(ValidationError):
        parse_record("eval-file", {"tests": [{"id": "a", "criteria": "c", "input": "hi"}]})


def test_a_tests_era_file_whose_cases_are_under_the_older_eval_cases_is_valid():
    # AgentV reads `eval_cases` for `tests`, so the schema takes either (it once required `tests`
    # while the model took `eval_cases` by moving it up from an older era).
    data = {"eval_cases": [{"id": "a", "criteria": "c", "input": "hi"}], "assertions": []}
    for validator in (explaining_validator("eval-tests"), fast_validator("eval-tests")):
        assert validator.is_valid(data)
        assert not validator.is_valid({"assertions": []})
    assert parse_record("eval-tests", data).root == data


def test_an_era_file_nested_too_deeply_is_refused_as_invalid_not_a_recursion_error():
    nested: list = []
    for _ in range(3000):
        nested = [nested]
    with pytest.raises(ValidationError, match="nested too deeply to explain"):
        parse_record("eval-tests", {"tests": [{"id": "a", "criteria": "c", "input": nested}]})
    with pytest.raises(ValidationError, match=r"\$\.tests\[0\]\.input: does not match the eval-tests schema"):
        parse_record("eval-tests", {"tests": [{"id": "a", "criteria": "c", "input": 5}]})


def test_a_record_its_era_schema_takes_is_read_as_it_is():
    # {tests: [], input_files: [...]} is valid in the current era; read as the current era's
    # model, it is not moved through the tests era's migration (which would change it).
    data = {"tests": [], "input_files": ["a.md"]}
    assert parse_record("eval-current", data).model_dump(exclude_unset=True) == data
