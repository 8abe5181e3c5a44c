"""Reading YAML, JSON and JSONL with positions, and every way reading can fail."""

from __future__ import annotations

import io

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from chatconv.problems import UnreadableInput
from chatconv.sources import MAX_ALIAS_COPIES, iter_jsonl, iter_records, load_json, load_yaml


def test_yaml_positions_point_at_keys_and_items():
    text = "evalcases:\n  - id: a\n    input_messages:\n      - role: user\n        content: hi\n"
    record = load_yaml(text, "f.yaml")
    assert record.error is None
    assert record.data["evalcases"][0]["input_messages"][0]["role"] == "user"
    assert record.locate(("evalcases", 0, "id")) == (2, 5)
    assert record.locate(("evalcases", 0, "input_messages", 0, "role")) == (4, 9)
    assert record.locate(("evalcases", 0, "input_messages", 0, "content")) == (5, 9)
    # a path that does not exist falls back to its nearest ancestor
    assert record.locate(("evalcases", 0, "nope", 3)) == (2, 5)


def test_yaml_keeps_dates_and_key_spellings_as_written():
    record = load_yaml("when: 2025-11-09\nyes: 1\n", "f.yaml")
    assert record.data == {"when": "2025-11-09", "yes": 1}


def test_yaml_duplicate_key_is_reported_with_its_line():
    record = load_yaml("id: a\nid: b\n", "f.yaml")
    [problem] = record.problems
    assert (problem.line, problem.column, problem.path) == (2, 1, "$.id")
    assert "duplicate key 'id'" in problem.message


def test_yaml_syntax_error_names_line_and_column():
    record = load_yaml("evalcases: [\n  {id: 1\n", "f.yaml")
    assert record.error.line == 3 and "invalid YAML" in record.error.message


def test_yaml_alias_bomb_is_refused_quickly():
    lines = ['a: &a ["x","x","x","x","x","x","x","x","x"]']
    for name, prev in zip("bcdefgh", "abcdefg"):
        lines.append(f"{name}: &{name} [" + ",".join([f"*{prev}"] * 9) + "]")
    record = load_yaml("\n".join(lines) + "\n", "bomb.yaml")
    assert record.error is not None
    assert f"more than {MAX_ALIAS_COPIES}" in record.error.message


def test_yaml_merge_keys_and_small_aliases_still_work():
    record = load_yaml("base: &b {role: user}\nmsg:\n  <<: *b\n  content: hi\n", "f.yaml")
    assert record.data["msg"] == {"role": "user", "content": "hi"}


def test_jsonl_truncated_line_is_located(tmp_path):
    path = tmp_path / "r.jsonl"
    path.write_bytes(b'{"a": 1}\n\n{"b": [1, 2\n')
    records = list(iter_records(path))
    assert [r.line for r in records] == [1, 3]
    assert records[0].data == {"a": 1}
    error = records[1].error
    assert error.line == 3 and "truncated" in error.hint


def test_invalid_utf8_is_located_in_yaml_and_jsonl(tmp_path):
    yaml_file = tmp_path / "a.yaml"
    yaml_file.write_bytes(b"id: ok\nname: caf\xe9\n")
    [record] = iter_records(yaml_file)
    assert (record.error.line, record.error.column) == (2, 10)
    assert "UTF-8" in record.error.message
    jsonl_file = tmp_path / "a.jsonl"
    jsonl_file.write_bytes(b'{"a": "ok"}\n{"a": "caf\xe9"}\n')
    records = list(iter_records(jsonl_file))
    assert records[1].error.line == 2 and "UTF-8" in records[1].error.message


def test_utf16_file_is_named_as_such(tmp_path):
    path = tmp_path / "a.yaml"
    path.write_bytes("id: a\n".encode("utf-16"))
    [record] = iter_records(path)
    assert "UTF-16" in record.error.message and "iconv" in record.error.hint


def test_utf8_bom_is_accepted(tmp_path):
    (tmp_path / "a.json").write_bytes(b'\xef\xbb\xbf{"a": 1}')
    (tmp_path / "a.jsonl").write_bytes(b'\xef\xbb\xbf{"a": 1}\n')
    (tmp_path / "a.yaml").write_bytes(b"\xef\xbb\xbfa: 1\n")
    for name in ("a.json", "a.jsonl", "a.yaml"):
        [record] = iter_records(tmp_path / name)
        assert record.data == {"a": 1}, name


@pytest.mark.parametrize("name", ["e.yaml", "e.json", "e.jsonl"])
def test_empty_file_is_a_problem(tmp_path, name):
    (tmp_path / name).write_bytes(b"")
    [record] = iter_records(tmp_path / name)
    assert "empty" in record.error.message


def test_missing_file_and_folder_are_unreadable(tmp_path):
    with pytest.raises(UnreadableInput, match="no such file"):
        list(iter_records(tmp_path / "nope.yaml"))
    with pytest.raises(UnreadableInput, match="folder"):
        list(iter_records(tmp_path))


def test_jsonl_is_streamed_one_line_at_a_time():
    class CountingStream(io.BytesIO):
        lines_read = 0

        def __iter__(self):
            while line := self.readline():
                CountingStream.lines_read += 1
                yield line

    stream = CountingStream(b"".join(b'{"i": %d}\n' % i for i in range(1000)))
    records = iter_jsonl(stream, "s.jsonl")
    first = next(records)
    assert first.data == {"i": 0}
    assert CountingStream.lines_read == 1


json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**63), 2**63 - 1) | st.text(max_size=5),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner, max_size=3),
    max_leaves=12,
)


def _paths(value, path=()):
    yield path, value
    if isinstance(value, dict):
        for key, item in value.items():
            yield from _paths(item, path + (key,))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from _paths(item, path + (index,))


@settings(max_examples=150)
@given(json_values, st.booleans())
def test_json_positions_point_at_each_value(value, pretty):
    """Every path of a JSON document maps to where its key (or, in a list, its value) is written."""
    option = orjson.OPT_INDENT_2 if pretty else 0
    text = orjson.dumps(value, option=option)
    record = load_json(text, "v.json")
    lines = text.decode().split("\n")
    for path, item in _paths(value):
        line, column = record.locate(path)
        written = lines[line - 1][column - 1:]
        if path and isinstance(path[-1], str):
            assert written.startswith(orjson.dumps(path[-1]).decode()), (path, written)
        else:
            assert written.startswith(orjson.dumps(item).decode()[:1]), (path, written)
