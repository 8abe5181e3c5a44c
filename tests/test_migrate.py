"""The migration engine and the three migrations: real recordings made legacy migrate back to
their exact bytes; properties of migrate_lines; YAML and JSON eval files; atomic rewrites."""

from __future__ import annotations

import copy
import errno
import io
import os
import pickle
import re
from functools import cache

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from chatconv.migrate import (AtomicFile, LineRejected, MigratedLines, migrate_document, migrate_lines,
                              migrate_record, migrations, migrations_for, rename_key)
from ai_sdk import ai_sdk4_records
from conftest import legacy_bytes, recorded_files, run_chatconv, to_legacy

# ---------------------------------------------------------------------------------------------
# Real recordings


def test_the_migrations_are_found_in_order():
    assert [m.name for m in migrations()] == [
        "0001_step_output_array", "0002_ai_sdk5_parts", "0003_eval_file_spellings", "0004_testcases_to_evalcases",
        "0005_evalcases_to_tests", "0006_tests_to_current", "0007_config_tests_to_current"]
    assert all(m.summary and m.kinds for m in migrations())
    # Eval files move one era at a time, an era's own spellings fixed before the move out of it.
    assert [m.name for m in migrations_for("eval-file", "current")] == [
        "0004_testcases_to_evalcases", "0003_eval_file_spellings", "0005_evalcases_to_tests", "0006_tests_to_current"]
    assert [m.name for m in migrations_for("config")] == ["0007_config_tests_to_current"]
    assert migrations_for("config", "tests") == ()  # a config moves with its files' era, never past --to
    assert [m.name for m in migrations_for("eval-file", "evalcases")] == [
        "0004_testcases_to_evalcases", "0003_eval_file_spellings"]
    # A kind that is an era's schema reads eval files up to that era (eval-file: the evalcases era's).
    assert migrations_for("eval-file") == migrations_for("eval-file", "evalcases")
    assert migrations_for("eval-tests") == migrations_for("eval-file", "tests")
    assert migrations_for("eval-current") == migrations_for("eval-file", "current")


@pytest.mark.parametrize("path", recorded_files(), ids=lambda p: p.name)
def test_legacy_recordings_migrate_back_to_their_exact_bytes(path):
    original = path.read_bytes()
    legacy = legacy_bytes(original)
    assert legacy != original
    result = migrate_lines(legacy, path.name)
    assert result.data == original
    assert result.tally.read == result.tally.migrated == original.count(b"\n") + (not original.endswith(b"\n"))
    assert result.tally.unchanged == result.tally.rejected == 0


@pytest.mark.parametrize("path", recorded_files(), ids=lambda p: p.name)
def test_current_recordings_come_out_byte_identical(path):
    original = path.read_bytes()
    result = migrate_lines(original)
    assert result.data == original
    assert result.tally.migrated == 0


def test_both_migrations_are_exercised_by_the_recordings():
    applied = set()
    for path in recorded_files():
        applied |= set(migrate_lines(legacy_bytes(path.read_bytes())).tally.by_migration)
    assert applied == {"0001_step_output_array", "0002_ai_sdk5_parts"}


# ---------------------------------------------------------------------------------------------
# One record


def test_migrate_record_upgrades_ai_sdk4_parts_where_they_stand():
    step = {"stepIndex": 0, "input": {"role": "user", "content": [
        {"type": "image", "image": "AAAA", "mimeType": "image/png", "x": 1}]},
        "output": {"role": "assistant", "experimental_providerMetadata": {"a": {"b": 1}}, "content": [
            {"type": "tool-call", "toolCallId": "c1", "toolName": "t", "args": {"q": 1}, "extra": True},
            {"type": "tool-result", "toolCallId": "c1", "toolName": "t", "result": "boom", "isError": True},
            {"type": "tool-result", "toolCallId": "c2", "toolName": "t", "result": {"ok": 1}},
            {"type": "text", "text": "done", "args": "not a tool call: kept"}]},
        "zzz": "unknown, kept last"}
    record, applied = migrate_record(step)
    assert applied == ["0001_step_output_array", "0002_ai_sdk5_parts"]
    assert orjson.dumps(record) == orjson.dumps({
        "stepIndex": 0, "input": {"role": "user", "content": [
            {"type": "image", "image": "AAAA", "mediaType": "image/png", "x": 1}]},
        "output": [{"role": "assistant", "providerOptions": {"a": {"b": 1}}, "content": [
            {"type": "tool-call", "toolCallId": "c1", "toolName": "t", "input": {"q": 1}, "extra": True},
            {"type": "tool-result", "toolCallId": "c1", "toolName": "t",
             "output": {"type": "error-text", "value": "boom"}},
            {"type": "tool-result", "toolCallId": "c2", "toolName": "t", "output": {"type": "json", "value": {"ok": 1}}},
            {"type": "text", "text": "done", "args": "not a tool call: kept"}]}],
        "zzz": "unknown, kept last"})


def test_a_rename_never_overwrites_a_key_that_is_already_there():
    part = {"type": "tool-call", "toolCallId": "c", "toolName": "t", "args": {"old": 1}, "input": {"new": 1}}
    record, applied = migrate_record({"stepIndex": 0, "input": {"role": "user", "content": "hi"},
                                      "output": [{"role": "assistant", "content": [dict(part)]}]})
    assert applied == [] and record["output"][0]["content"][0] == part


def test_migrate_record_on_a_conversation_upgrades_every_step():
    conversation = {"id": "c", "steps": [
        {"stepIndex": 0, "input": {"role": "user", "content": "a"}, "output": {"role": "assistant", "content": "b"}},
        {"stepIndex": 1, "input": {"role": "user", "content": "c"}, "output": [{"role": "assistant", "content": "d"}]},
        {"stepIndex": 2, "input": {"role": "user", "content": "e"}, "output": {"role": "assistant", "content": "f"}}]}
    record, applied = migrate_record(conversation)
    assert applied == ["0001_step_output_array"]
    assert [type(step["output"]) for step in record["steps"]] == [list, list, list]


def test_rename_key_keeps_key_order_on_plain_dicts():
    mapping = {"a": 1, "b": 2, "c": 3}
    rename_key(mapping, "b", "B")
    assert list(mapping.items()) == [("a", 1), ("B", 2), ("c", 3)]
    rename_key(mapping, "c", "C", 30)
    assert list(mapping.items()) == [("a", 1), ("B", 2), ("C", 30)]



_PROPERTIES_0002 = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _step_of(*messages) -> dict:
    return {"stepIndex": 0, "input": {"role": "user", "content": "hi"}, "output": list(messages)}


def test_0002_moves_redacted_reasoning_and_signatures_where_ai_sdk5_keeps_them():
    """AI SDK 5's modelMessageSchema refuses a redacted-reasoning part and drops a reasoning
    part's signature; its Anthropic provider reads both from providerOptions.anthropic."""
    record, applied = migrate_record(_step_of({"role": "assistant", "content": [
        {"type": "redacted-reasoning", "data": "opaque"},
        {"type": "reasoning", "text": "hmm", "signature": "sig", "x_after": 1},
        {"type": "reasoning", "signature": "sig2", "text": "t", "providerOptions": {"anthropic": {"cacheControl": 1}}},
        {"type": "redacted-reasoning", "experimental_providerMetadata": {"openai": {"a": 1}}, "data": "d2", "x": 2},
        {"type": "reasoning", "text": "plain"}]}))
    assert applied == ["0002_ai_sdk5_parts"]
    assert orjson.dumps(record["output"][0]["content"]) == orjson.dumps([
        {"type": "reasoning", "text": "", "providerOptions": {"anthropic": {"redactedData": "opaque"}}},
        {"type": "reasoning", "text": "hmm", "providerOptions": {"anthropic": {"signature": "sig"}}, "x_after": 1},
        {"type": "reasoning", "text": "t", "providerOptions": {"anthropic": {"cacheControl": 1, "signature": "sig2"}}},
        {"type": "reasoning", "providerOptions": {"openai": {"a": 1}, "anthropic": {"redactedData": "d2"}},
         "text": "", "x": 2},
        {"type": "reasoning", "text": "plain"}])


def test_0002_makes_experimental_content_the_output_in_the_results_place():
    """AI SDK 4 wrote a tool's content for the model twice, as `result` and `experimental_content`:
    it becomes one content output; an image's mimeType its mediaType (from its first bytes where
    it had none)."""
    content = [{"type": "text", "text": "page"}, {"type": "image", "data": "iVBORw0KGgoAAAANSUhEUg=="},
               {"type": "image", "data": "/9j/4AAQSkZJRgABAQ=="}, {"type": "image", "data": "R0lGODlhAQABAIAAAA=="},
               {"type": "image", "data": "UklGRiQAAABXRUJQVlA4IA=="}, {"type": "image", "data": "AAAA"},
               {"type": "image", "data": "AAAA", "mimeType": "image/heic"}]
    value = [{"type": "text", "text": "page"},
             *({"type": "media", "data": item["data"], "mediaType": kind} for item, kind in zip(content[1:], [
                 "image/png", "image/jpeg", "image/gif", "image/webp", "image/*", "image/heic"]))]
    result = {"type": "tool-result", "toolCallId": "c", "toolName": "shot"}
    legacy = _step_of({"role": "tool", "content": [
        {**result, "result": copy.deepcopy(content), "x": 1, "experimental_content": copy.deepcopy(content)},
        {**result, "experimental_content": copy.deepcopy(content), "isError": False, "x": 1},
        {**result, "result": copy.deepcopy(content), "isError": True, "experimental_content": copy.deepcopy(content)}]})
    record, applied = migrate_record(copy.deepcopy(legacy))
    assert applied == ["0002_ai_sdk5_parts"]
    assert orjson.dumps(record["output"][0]["content"]) == orjson.dumps([
        {**result, "output": {"type": "content", "value": value}, "x": 1},
        {**result, "output": {"type": "content", "value": value}, "x": 1},
        # A failed call: AI SDK 5's content output cannot say so; its error output holds the same items.
        {**result, "output": {"type": "error-json", "value": content}}])
    # A file the earlier 0002 migrated (the result as an output, experimental_content kept) ends the same.
    earlier = copy.deepcopy(legacy)
    for part in earlier["output"][0]["content"]:
        if "result" in part:
            failed = part.pop("isError", False)
            rename_key(part, "result", "output", {"type": "error-json" if failed else "json", "value": part["result"]})
    again, applied = migrate_record(earlier)
    assert applied == ["0002_ai_sdk5_parts"] and again == record


def test_0002_gives_a_tool_result_without_result_the_output_ai_sdk5_gives_undefined():
    """A tool that returned undefined: AI SDK 4's JSON has no `result`; AI SDK 5 writes json null."""
    result = {"type": "tool-result", "toolCallId": "c", "toolName": "t"}
    record, applied = migrate_record(_step_of({"role": "tool", "content": [
        {**result, "x": 1}, {**result, "isError": True}, {"toolName": "t", "type": "tool-result", "toolCallId": "c"}]}))
    assert applied == ["0002_ai_sdk5_parts"]
    assert orjson.dumps(record["output"][0]["content"]) == orjson.dumps([
        {**result, "output": {"type": "json", "value": None}, "x": 1},
        {**result, "output": {"type": "error-json", "value": None}},
        {"toolName": "t", "output": {"type": "json", "value": None}, "type": "tool-result", "toolCallId": "c"}])


@pytest.mark.parametrize("part", [
    {"type": "reasoning", "text": "t", "signature": "new", "providerOptions": {"anthropic": {"signature": "old"}}},
    {"type": "reasoning", "text": "t", "signature": "s", "providerOptions": {"anthropic": "not an object"}},
    {"type": "reasoning", "text": "t", "signature": {"not": "a string"}},
    {"type": "redacted-reasoning", "data": "d", "providerOptions": {"anthropic": {"redactedData": "other"}}},
    {"type": "redacted-reasoning", "data": "d", "text": "which text?"},
    {"type": "tool-result", "toolCallId": "c", "toolName": "t", "output": {"type": "json", "value": 1},
     "experimental_content": [{"type": "text", "text": "not the result"}]},
    {"type": "tool-result", "toolCallId": "c", "toolName": "t", "output": {"type": "text", "value": "a"},
     "experimental_content": [{"type": "text", "text": "a"}]},
    {"type": "tool-result", "toolCallId": "c", "toolName": "t", "output": {"type": "json", "value": [{"type": "x"}]},
     "experimental_content": [{"type": "x"}]},
    {"type": "tool-result", "toolCallId": "c", "toolName": "t", "isError": True,
     "experimental_content": [{"type": "text", "text": "failed, with no result"}]},
    {"type": "tool-result", "toolCallId": "c", "toolName": "t",
     "experimental_content": [{"type": "text", "text": "a", "providerOptions": {}}]},
], ids=["signature-taken", "anthropic-not-object", "signature-not-string", "redactedData-taken", "text-taken",
        "content-unlike-result", "text-output", "unknown-item", "failed-without-result", "item-with-more-keys"])
def test_0002_leaves_what_it_cannot_move_without_overwriting_or_losing(part):
    record = _step_of({"role": "assistant", "content": [copy.deepcopy(part)]})
    migrated, applied = migrate_record(record)
    assert applied == [] and migrated["output"][0]["content"][0] == part


def test_validate_names_migration_0002_for_the_ai_sdk4_shapes_and_nothing_after_it(tmp_path):
    """Each shape is a legacy-shape warning naming 0002 (not an unknown key, not an error); once
    migrated, the file is clean."""
    content = [{"type": "image", "data": "AAAA", "mimeType": "image/png"}]
    shapes = [("assistant", {"type": "redacted-reasoning", "data": "d"}),
              ("assistant", {"type": "reasoning", "text": "r", "signature": "s"}),
              ("tool", {"type": "tool-result", "toolCallId": "c2", "toolName": "t", "result": content,
                        "experimental_content": content})]
    lines = []
    for index, (role, part) in enumerate(shapes):
        call = {"type": "tool-call", "toolCallId": f"c{index}", "toolName": "t", "input": {}}
        answer = {"type": "tool-result", "toolCallId": f"c{index}", "toolName": "t", "output": {"type": "text", "value": "a"}}
        output = [{"role": "assistant", "content": [part, call] if role == "assistant" else [call]},
                  {"role": "tool", "content": [part] if role == "tool" else [answer]}]
        lines.append(orjson.dumps({"stepIndex": index, "input": {"role": "user", "content": "hi"}, "output": output}))
    path = tmp_path / "run.jsonl"
    path.write_bytes(b"\n".join(lines) + b"\n")
    result = run_chatconv("validate", path)
    assert result.returncode == 0, result.stdout_text + result.stderr_text
    warnings = [line for line in result.stdout_text.splitlines() if ": warning: " in line]
    assert [re.search(r":(\d+):\d+: warning: (\S+):", line).groups() for line in warnings] == [
        ("1", "$.output[0].content[0]"), ("2", "$.output[0].content[0]"), ("3", "$.output[1].content[0]")], warnings
    assert all("legacy shape: AI SDK 4 parts" in line and "migration 0002_ai_sdk5_parts" in line for line in warnings)
    assert ": error: " not in result.stdout_text
    migrated = run_chatconv("migrate", path, "--in-place")
    assert migrated.returncode == 0, migrated.stderr_text
    again = run_chatconv("validate", path)
    assert again.returncode == 0 and ": warning: " not in again.stdout_text, again.stdout_text


def _values(node, key=None) -> set[str]:
    """Every scalar in `node` (as JSON, so that 1, 1.0 and true differ), but the values of `type`
    and `isError`, which 0002 turns into other values."""
    if isinstance(node, dict):
        return set().union(*(_values(value, k) for k, value in node.items()))
    if isinstance(node, list):
        return set().union(*(_values(item) for item in node))
    return set() if key in ("type", "isError") else {orjson.dumps(node).decode()}


@_PROPERTIES_0002
@given(ai_sdk4_records())
def test_0002_keeps_every_value_and_a_second_run_changes_nothing(record):
    """AI SDK 4 records of every shape 0002 knows, unknown keys and shapes it must leave included:
    every value (and unknown key) is still there after the upgrade, and upgrading again does nothing."""
    original = copy.deepcopy(record)
    migrated, applied = migrate_record(record)
    assert applied in ([], ["0002_ai_sdk5_parts"])
    assert _values(original) <= _values(migrated)
    unknown = {key for part in _parts(original) for key in part if key.startswith("x_")}
    assert unknown <= {key for part in _parts(migrated) for key in part}
    before = orjson.dumps(migrated)
    again, applied = migrate_record(migrated)
    assert applied == [] and orjson.dumps(again) == before


def _parts(record) -> list[dict]:
    return [part for message in [record["input"], *record["output"]] for part in message["content"]]


# ---------------------------------------------------------------------------------------------
# Lines: endings, blank lines, rejects


STEP = b'{"stepIndex":0,"input":{"role":"user","content":"hi"},"output":{"role":"assistant","content":"h\xc3\xa9"}}'
STEP_MIGRATED = b'{"stepIndex":0,"input":{"role":"user","content":"hi"},"output":[{"role":"assistant","content":"h\xc3\xa9"}]}'


def test_each_line_keeps_its_own_ending_and_blank_lines_are_kept():
    data = STEP + b"\r\n" + b"\n" + b"   \n" + STEP + b"\n" + STEP
    result = migrate_lines(data)
    assert result.data == (STEP_MIGRATED + b"\r\n" + b"\n" + b"   \n" + STEP_MIGRATED + b"\n" + STEP_MIGRATED)
    assert (result.tally.read, result.tally.migrated, result.tally.unchanged) == (5, 3, 2)


def test_a_line_with_a_bom_keeps_it():
    assert migrate_lines(b"\xef\xbb\xbf" + STEP + b"\n").data == b"\xef\xbb\xbf" + STEP_MIGRATED + b"\n"


def test_a_bad_line_stops_with_its_line_number():
    with pytest.raises(LineRejected) as caught:
        migrate_lines(STEP + b"\n" + b'{"stepIndex":1,"input"\n' + STEP + b"\n", "run.jsonl", first_line=10)
    reject = caught.value.reject
    assert (reject.file, reject.line, reject.text) == ("run.jsonl", 11, b'{"stepIndex":1,"input"')
    assert "invalid JSON" in reject.error and "truncated" in reject.error
    assert pickle.loads(pickle.dumps(caught.value)).reject == reject  # crosses process boundaries


def test_rejects_are_set_aside_with_the_reason_and_every_line_is_accounted_for():
    data = STEP + b"\n" + b"not json\n" + b"\xff\xfe\n" + STEP + b"\n"
    result = migrate_lines(data, "run.jsonl", keep_rejects=True)
    assert result.data == STEP_MIGRATED + b"\n" + STEP_MIGRATED + b"\n"
    assert [(r.line, r.text) for r in result.rejects] == [(2, b"not json"), (3, b"\xff\xfe")]
    assert orjson.loads(result.rejects[0].to_json_line()) == {
        "file": "run.jsonl", "line": 2, "error": result.rejects[0].error, "text": "not json"}
    entry = orjson.loads(result.rejects[1].to_json_line())
    assert entry["base64"] == "//4=" and entry["text"] == "\ufffd\ufffd"  # not UTF-8: kept whole as base64
    assert (result.tally.read, result.tally.migrated, result.tally.rejected) == (4, 2, 2)
    assert pickle.loads(pickle.dumps(result)) == result


def test_an_integer_beyond_64_bits_is_never_rewritten_as_a_float():
    big = STEP[:-1] + b',"metadata":{"id":-9223372036854775809}}'
    with pytest.raises(LineRejected, match="beyond 64 bits"):
        migrate_lines(big + b"\n")
    fits = STEP[:-1] + b',"metadata":{"id":18446744073709551615,"n":1e300}}'
    assert migrate_lines(fits).data == STEP_MIGRATED[:-1] + b',"metadata":{"id":18446744073709551615,"n":1e+300}}'
    current_big = STEP_MIGRATED[:-1] + b',"metadata":{"id":123456789012345678901234567890}}'
    assert migrate_lines(current_big).data == current_big  # untouched lines are never re-serialized


# ---------------------------------------------------------------------------------------------
# Properties

_JSON = st.recursive(
    st.none() | st.booleans() | st.integers(-(2 ** 63), 2 ** 63 - 1) | st.text(max_size=8)
    | st.floats(allow_nan=False, allow_infinity=False),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3),
    max_leaves=6)
_UNKNOWN = st.dictionaries(st.from_regex(r"\Ax_[a-z]{1,6}\Z"), _JSON, max_size=2)  # never a key a migration owns


@st.composite
def _with_unknown_keys(draw, known: dict) -> dict:
    """`known` with unknown keys slipped in at drawn places."""
    items = list(known.items())
    for key, value in draw(_UNKNOWN).items():
        items.insert(draw(_index_up_to(len(items))), (key, value))
    return dict(items)


@cache
def _index_up_to(last: int) -> st.SearchStrategy:
    return st.integers(0, last)


_TEXT = st.text(max_size=12)
_OUTPUTS = st.one_of(
    st.builds(lambda v: {"type": "text", "value": v}, _TEXT),
    st.builds(lambda v: {"type": "json", "value": v}, _JSON.filter(lambda v: not isinstance(v, str))),
    st.builds(lambda v: {"type": "error-text", "value": v}, _TEXT),
    st.builds(lambda v: {"type": "content", "value": [{"type": "text", "text": v}]}, _TEXT))
_OPTIONS = st.dictionaries(st.sampled_from(["openai", "anthropic"]), st.dictionaries(_TEXT, _JSON, max_size=2), max_size=1)


@st.composite
def _part(draw) -> dict:
    kind = draw(st.sampled_from(["text", "tool-call", "tool-result", "file", "image"]))
    if kind == "text":
        part = {"type": "text", "text": draw(_TEXT)}
    elif kind == "tool-call":
        part = {"type": "tool-call", "toolCallId": draw(_TEXT), "toolName": draw(_TEXT), "input": draw(_JSON)}
    elif kind == "tool-result":
        output = draw(_OUTPUTS)
        part = {"type": "tool-result", "toolCallId": draw(_TEXT), "toolName": draw(_TEXT), "output": output}
    elif kind == "file":
        part = {"type": "file", "data": draw(_TEXT), "mediaType": "text/plain"}
    else:
        part = {"type": "image", "image": draw(_TEXT), "mediaType": "image/png"}
    if draw(st.booleans()):
        part["providerOptions"] = draw(_OPTIONS)
    return draw(_with_unknown_keys(part))


_CONTENT = _TEXT | st.lists(_part(), max_size=3)


@st.composite
def _message(draw, role: str) -> dict:
    content = draw(_CONTENT)
    message = {"role": role, "content": content}
    if draw(st.booleans()):
        message["providerOptions"] = draw(_OPTIONS)
    return draw(_with_unknown_keys(message))


# Strategies made once, not on every draw (a new strategy is validated when first drawn from).
_USER = _message("user")
_OUTPUT_MESSAGES = st.lists(_message("assistant") | _message("tool"), min_size=1, max_size=3)


@st.composite
def _step(draw, index: int = 0) -> dict:
    step = {"stepIndex": index, "input": draw(_USER), "output": draw(_OUTPUT_MESSAGES)}
    return draw(_with_unknown_keys(step))


_STEPS = [_step(i) for i in range(3)]


@st.composite
def current_records(draw) -> dict:
    if draw(st.booleans()):
        return draw(_STEPS[0])
    steps = [draw(_STEPS[i]) for i in range(draw(st.integers(1, 3)))]
    return draw(_with_unknown_keys({"id": draw(_TEXT), "steps": steps}))


_ENDINGS = st.sampled_from([b"\n", b"\r\n"])
_GARBAGE = st.sampled_from([b"{", b'{"stepIndex":', b"nope", b'{"a":1}}', b"\xff\xfe"])


@st.composite
def jsonl_lines(draw) -> list[tuple[str, bytes]]:
    """(what, line) pairs: current, legacy, blank and broken lines with mixed endings; the last
    line may lack its ending."""
    lines = []
    for _ in range(draw(st.integers(0, 8))):
        what = draw(st.sampled_from(["current", "legacy", "blank", "bad"]))
        if what in ("current", "legacy"):
            record = draw(current_records())
            body = orjson.dumps(to_legacy(record) if what == "legacy" else record)
        else:
            body = draw(st.sampled_from([b"", b"  ", b"\t"])) if what == "blank" else draw(_GARBAGE)
        lines.append((what, body + draw(_ENDINGS)))
    if lines and draw(st.booleans()) and lines[-1][0] != "blank":
        lines[-1] = (lines[-1][0], lines[-1][1].rstrip(b"\r\n"))
    return lines


_PROPERTIES = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@_PROPERTIES
@given(current_records())
def test_unknown_fields_and_key_order_survive_a_round_trip_through_legacy(record):
    current = orjson.dumps(record)
    legacy = orjson.dumps(to_legacy(copy.deepcopy(record)))
    assert migrate_lines(legacy + b"\n").data == current + b"\n"


@_PROPERTIES
@given(jsonl_lines())
def test_migrating_twice_changes_nothing_the_second_time(lines):
    once = migrate_lines(b"".join(line for _, line in lines), keep_rejects=True)
    twice = migrate_lines(once.data, keep_rejects=True)
    assert twice.data == once.data
    assert twice.tally.migrated == twice.tally.rejected == 0


@settings(_PROPERTIES, max_examples=30)  # (its examples are the slowest to make: the suite's time)
@given(jsonl_lines(), st.integers(1, 4))
def test_every_line_is_accounted_for_in_any_batching(lines, batches):
    data = b"".join(line for _, line in lines)
    whole = migrate_lines(data, keep_rejects=True)
    tally = whole.tally
    written = whole.data.splitlines(keepends=True)
    assert tally.read == len(lines) == tally.migrated + tally.unchanged + tally.rejected
    assert len(written) == tally.migrated + tally.unchanged  # lines in = lines out + lines rejected
    assert [r.line for r in whole.rejects] == [n for n, (what, _) in enumerate(lines, 1) if what == "bad"]
    kept = [line for what, line in lines if what != "bad"]
    for (what, line), out in zip([pair for pair in lines if pair[0] != "bad"], written):
        if what in ("current", "blank"):
            assert out == line  # byte for byte
        assert out[len(out.rstrip(b"\r\n")):] == line[len(line.rstrip(b"\r\n")):]  # same ending
    assert len(kept) == len(written)
    # Split anywhere between lines (as --jobs and Dask do), the parts give the same bytes and lines.
    size = max(1, len(lines) // batches)
    parts, first = [], 1
    for start in range(0, len(lines), size):
        chunk = b"".join(line for _, line in lines[start:start + size])
        parts.append(migrate_lines(chunk, first_line=first, keep_rejects=True))
        first += size
    assert b"".join(p.data for p in parts) == whole.data
    assert [r.line for p in parts for r in p.rejects] == [r.line for r in whole.rejects]


# ---------------------------------------------------------------------------------------------
# Eval files

EVAL_BEFORE = """\
# Review suite: older spellings, comments and quoting everywhere
description: 'Code review'   # single quotes
eval_cases:   # the old name of evalcases
  - id: "case-1"
    criteria: The reply names the bug   # what the judge looks for
    input: "Why does this crash?"
    expected_output: |
      It dereferences None.
    # a comment before the next case
  - id: case-2
    expected_outcome: Says hello
    input_messages:
      - role: system
        content: Be brief.
      # the user's turn
      - role: user
        content: 'Hi'   # greeting
    note: last
"""

EVAL_AFTER = """\
# Review suite: older spellings, comments and quoting everywhere
description: 'Code review'   # single quotes
evalcases:   # the old name of evalcases
  - id: "case-1"
    outcome: The reply names the bug   # what the judge looks for
    input_messages:
      - role: user
        content: "Why does this crash?"
    expected_messages:
      - role: assistant
        content: |
          It dereferences None.
    # a comment before the next case
  - id: case-2
    outcome: Says hello
    input_messages:
      - role: system
        content: Be brief.
      # the user's turn
      - role: user
        content: 'Hi'   # greeting
    note: last
"""


def test_yaml_eval_file_keeps_comments_quoting_and_order():
    # Within its own era (--to evalcases): only the era's older spellings move.
    result = migrate_document(EVAL_BEFORE.encode(), "review.yaml", "yaml", to_era="evalcases")
    assert result.data.decode() == EVAL_AFTER
    assert result.tally.by_migration == {"0003_eval_file_spellings": 1}
    again = migrate_document(result.data, "review.yaml", "yaml", to_era="evalcases")
    assert again.data == result.data and again.tally.migrated == 0 and again.tally.at_era == 1


def test_yaml_indentation_line_endings_and_missing_final_newline_are_kept():
    before = "evalcases:\n- id: a\n  criteria: ok\n  input:\n  - role: user\n    content: hi"
    after = "evalcases:\n- id: a\n  outcome: ok\n  input_messages:\n  - role: user\n    content: hi"
    assert migrate_document(before.encode(), "a.yaml", "yaml", to_era="evalcases").data.decode() == after
    crlf = before.replace("\n", "\r\n") + "\r\n"
    assert (migrate_document(crlf.encode(), "a.yaml", "yaml", to_era="evalcases").data.decode()
            == after.replace("\n", "\r\n") + "\r\n")


@pytest.mark.parametrize("name", ["code-review.yaml", "multi-turn.yaml", "single-turn.yaml"])
def test_eval_files_at_the_era_asked_for_are_left_byte_identical(name):
    from conftest import REPO

    data = (REPO / "examples" / "evals" / name).read_bytes()
    result = migrate_document(data, name, "yaml", to_era="evalcases")
    assert result.data == data and result.tally.unchanged == 1 and result.tally.at_era == 1


def test_json_eval_file_keeps_its_indentation_and_unicode():
    before = b'{\n  "description": "\xc3\x9cn\xc3\xafcode",\n  "cases": [{"id": "a", "expected_outcome": "ok", ' \
             b'"input": "hi", "expected_output": "hello"}]\n}\n'
    result = migrate_document(before, "e.json", "json", to_era="evalcases")
    assert result.data == (
        b'{\n  "description": "\xc3\x9cn\xc3\xafcode",\n  "evalcases": [\n    {\n      "id": "a",\n'
        b'      "outcome": "ok",\n      "input_messages": [\n        {\n          "role": "user",\n'
        b'          "content": "hi"\n        }\n      ],\n      "expected_messages": [\n        {\n'
        b'          "role": "assistant",\n          "content": "hello"\n        }\n      ]\n    }\n  ]\n}\n')
    # A tests-era file is never moved back into the evalcases era.
    newer = migrate_document(b'{"tests":[{"id":"a","input":"hi"}]}', "e.json", "json", to_era="evalcases")
    assert newer.data == b'{"tests":[{"id":"a","input":"hi"}]}' and newer.tally.at_era == 1


def test_testcases_messages_split_into_input_and_expected():
    record, applied = migrate_record({"testcases": [{"id": "x", "outcome": "o", "messages": [
        {"role": "user", "content": "q"}, {"role": "assistant", "content": "a"}]}]}, to_era="evalcases")
    assert applied == ["0004_testcases_to_evalcases"]
    assert record == {"evalcases": [{"id": "x", "outcome": "o", "input_messages": [{"role": "user", "content": "q"}],
                                     "expected_messages": [{"role": "assistant", "content": "a"}]}]}


def test_a_broken_yaml_file_is_rejected_with_its_line():
    with pytest.raises(LineRejected) as caught:
        migrate_document(b"evalcases:\n  - id: a\n  b: [\n", "bad.yaml", "yaml")
    assert caught.value.reject.line == 3 and "invalid YAML" in caught.value.reject.error
    kept = migrate_document(b"a: [\n", "bad.yaml", "yaml", keep_rejects=True)
    assert kept == MigratedLines(b"", kept.tally, kept.rejects) and kept.tally.rejected == 1


# ---------------------------------------------------------------------------------------------
# Atomic files


def test_atomic_file_replaces_the_target_only_on_commit(tmp_path):
    target = tmp_path / "run.jsonl"
    target.write_bytes(b"old\n")
    os.chmod(target, 0o640)
    with AtomicFile(target) as out:
        out.write(b"half")
    assert target.read_bytes() == b"old\n" and os.listdir(tmp_path) == ["run.jsonl"]  # discarded
    with AtomicFile(target, backup=True) as out:
        out.write(b"new\n")
        out.commit()
    assert target.read_bytes() == b"new\n" and (tmp_path / "run.jsonl.bak").read_bytes() == b"old\n"
    assert os.stat(target).st_mode & 0o777 == 0o640  # the file keeps its permissions
    assert sorted(os.listdir(tmp_path)) == ["run.jsonl", "run.jsonl.bak"]


@pytest.mark.skipif(not hasattr(os, "posix_fadvise"), reason="no posix_fadvise on this system: commit writes all")
def test_an_atomic_file_hands_its_bytes_to_the_disk_as_it_grows(tmp_path, monkeypatch):
    from chatconv.migrate import atomic

    handed = []
    monkeypatch.setattr(atomic, "WRITEBACK_BYTES", 1000)
    monkeypatch.setattr(atomic.os, "posix_fadvise", lambda fd, start, length, advice: handed.append((start, length)))
    target = tmp_path / "out.jsonl"
    pieces = [bytes([65 + i % 26]) * 300 for i in range(12)]
    with AtomicFile(target) as out:
        for piece in pieces:
            out.write(piece)
        out.commit()
    assert target.read_bytes() == b"".join(pieces)  # flushed early, written whole
    # Every 1000 bytes or so, the bytes since the last time, each range once and in order.
    assert handed == [(0, 1200), (1200, 1200), (2400, 1200)]


def test_an_atomic_file_dropped_before_its_with_block_leaves_no_temporary_file(tmp_path):
    # An interrupt (Ctrl-C, SIGTERM) right after the object is made, before `with` runs its exit.
    target = tmp_path / "run.jsonl"
    target.write_bytes(b"old\n")
    out = AtomicFile(target)
    out.write(b"new")
    assert len(os.listdir(tmp_path)) == 2
    del out
    assert os.listdir(tmp_path) == ["run.jsonl"] and target.read_bytes() == b"old\n"
    with AtomicFile(target) as out:  # ended by commit: nothing more to do when it goes
        out.write(b"new\n")
        out.commit()
    del out
    assert os.listdir(tmp_path) == ["run.jsonl"] and target.read_bytes() == b"new\n"


class _DiskOfRoom(io.RawIOBase):
    """A file on a disk with `room` bytes left: a write past it fails as a full disk does."""

    def __init__(self, room: int):
        self.data, self.room = bytearray(), room

    def writable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def seek(self, offset: int, whence: int = io.SEEK_SET) -> int:  # only asked where it is (tell)
        return len(self.data)

    def write(self, data) -> int:
        if len(self.data) + len(data) > self.room:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        self.data += data
        return len(data)


def test_a_disk_that_fills_at_the_last_bytes_leaves_the_target_whole_and_no_temporary_file(tmp_path):
    # The last bytes sit in the buffer until commit() flushes them: the full disk is found there,
    # and the temporary file went on being left behind, the error blamed on standard output.
    from chatconv.problems import UnreadableInput

    target = tmp_path / "out.jsonl"
    target.write_bytes(b"old\n")
    with pytest.raises(UnreadableInput) as raised:
        with AtomicFile(target) as out:
            out.stream.close()
            out.stream = io.BufferedWriter(_DiskOfRoom(room=100), buffer_size=1024)
            out.write(b"x" * 150)  # buffered whole
            out.commit()
    problem = raised.value.problems[0]
    assert problem.file == str(target) and "No space left on device" in problem.message
    assert os.listdir(tmp_path) == ["out.jsonl"] and target.read_bytes() == b"old\n"
