"""Reading YAML, JSON and JSONL with positions, and every way reading can fail."""

from __future__ import annotations

import io
import subprocess
import sys
from pathlib import Path

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from chatconv.problems import UnreadableInput
from chatconv.sources import (MAX_ALIAS_COPIES, MAX_YAML_DEPTH, UTF8_BOM, duplicate_keys, iter_jsonl,
                              iter_records, load_json, load_yaml, read_stdin_head, yaml_parse_problem)
from chatconv.sources.yaml_parse import is_libyaml_depth_limit, safe_loader
from conftest import run_chatconv


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


@pytest.mark.parametrize("encoding, named", [
    ("utf-16", "UTF-16 (little-endian)"),  # with a byte order mark
    ("utf-16-le", "UTF-16 (little-endian)"),
    ("utf-16-be", "UTF-16 (big-endian)"),
    ("utf-32", "UTF-32 (little-endian)"),
    ("utf-32-be", "UTF-32 (big-endian)"),
])
@pytest.mark.parametrize("name", ["a.jsonl", "a.json", "a.yaml"])
def test_utf16_and_utf32_files_are_one_problem(tmp_path, encoding, named, name):
    path = tmp_path / name
    path.write_bytes('{"id": "a"}\n{"id": "b"}\n{"id": "c"}\n'.encode(encoding))
    with pytest.raises(UnreadableInput) as raised:
        list(iter_records(path))
    [problem] = raised.value.problems
    assert (problem.line, problem.column) == (1, 1)
    assert problem.message == f"the file is {named}; chatconv reads UTF-8"
    assert "iconv -f" in problem.hint


def test_utf16_jsonl_is_reported_once_by_validate_and_migrate(tmp_path):
    path = tmp_path / "a.jsonl"
    original = b"".join(b'{"stepIndex": %d}\n' % i for i in range(50)).decode().encode("utf-16-le")
    path.write_bytes(original)
    for args, stdin in [(["validate", path], None), (["validate", "-"], original),
                        (["migrate", "--in-place", path], None)]:
        result = run_chatconv(*args, stdin=stdin)
        output = result.stdout_text + result.stderr_text
        assert output.count("UTF-16 (little-endian)") == 1, output
        assert "invalid" not in output, output
    assert path.read_bytes() == original  # migrate left it as it was


def test_yaml_errors_are_one_line_with_their_position():
    record = load_yaml("a: 1\nb: x\x01\n", "f.yaml")
    assert (record.error.line, record.error.column) == (2, 5)
    assert record.error.message == (
        "invalid YAML: character #x0001: control characters are not allowed")


@pytest.fixture(params=["libyaml", "pure-python"])
def pyyaml_build(request, monkeypatch):
    """PyYAML as installed (its C loader), and as it is where it was built without libyaml."""
    import yaml

    if request.param == "libyaml" and not yaml.__with_libyaml__:
        pytest.skip("this PyYAML was built without libyaml")
    if request.param == "pure-python":
        monkeypatch.delattr(yaml, "CSafeLoader", raising=False)
    return request.param


_DEEP = 1100  # past libyaml's own limit of 1,000 levels (PyYAML 6.0.4's wheels)


def test_pyyaml_parses_deep_nesting_as_the_depth_check_expects(pyyaml_build):
    """What sources/yaml.py's depth check relies on, asked of the PyYAML installed: its parser
    yields the event of every level up to MAX_YAML_DEPTH + 1, or (libyaml only) stops with
    libyaml's own depth limit, after which the pure-Python parser yields them. A PyYAML release
    that does otherwise fails here, by name, before the depth tests below fail for it."""
    import yaml

    texts = {"flow": "a: " + "[" * _DEEP + "]" * _DEEP,
             "block": "a:\n" + "".join("  " * i + "-\n" for i in range(_DEEP)) + "  " * _DEEP + "- x\n"}
    for shape, text in texts.items():
        loader = safe_loader()
        opened = 0
        try:
            for event in yaml.parse(text, Loader=loader):
                opened += isinstance(event, yaml.CollectionStartEvent)
                if opened > MAX_YAML_DEPTH:
                    break
        except yaml.YAMLError as exc:
            assert loader is not yaml.SafeLoader and is_libyaml_depth_limit(exc), (
                f"PyYAML {yaml.__version__} ({pyyaml_build}) stops {shape} nesting after {opened} levels"
                f" in a way the depth check does not know: {exc}")
            continue
        assert opened > MAX_YAML_DEPTH, (shape, opened)


@pytest.mark.parametrize("text, position", [
    ("evalcases: " + "[" * 1000 + "]" * 1000, (1, 12 + MAX_YAML_DEPTH - 1)),
    ("evalcases: " + "[" * 150 + "\n" + "{a: " * 900 + "1" + "}" * 900 + "]" * 150, (2, 4 * 50 - 3)),
    ("evalcases:\n" + "".join("  " * i + "-\n" for i in range(1000)) + "  " * 1000 + "- x\n",
     (MAX_YAML_DEPTH + 1, 2 * MAX_YAML_DEPTH - 1)),
    ("evalcases:\n" + "".join("  " * i + f"k{i}:\n" for i in range(1, 1000)) + "  " * 1000 + "x\n",
     (MAX_YAML_DEPTH + 1, 2 * MAX_YAML_DEPTH + 1)),
])
def test_deep_yaml_is_refused_where_it_gets_too_deep(text, position, pyyaml_build):
    record = load_yaml(text, "d.yaml")
    assert record.error.message == f"YAML nested deeper than {MAX_YAML_DEPTH} levels"
    assert (record.error.line, record.error.column) == position
    assert yaml_parse_problem(text, "d.yaml") == record.error


def test_yaml_as_deep_as_allowed_is_read(pyyaml_build):
    depth = MAX_YAML_DEPTH - 1  # inside the top mapping
    record = load_yaml("x: " + "[" * depth + "]" * depth, "d.yaml")
    assert record.error is None
    assert str(record.data).count("[") == depth


def test_aliases_count_as_deep_as_what_they_copy(pyyaml_build):
    lines = ["a0: &a0 [1]"] + [f"a{i}: &a{i} [*a{i - 1}]" for i in range(1, 2 * MAX_YAML_DEPTH)]
    record = load_yaml("\n".join(lines), "chain.yaml")
    assert record.error.message == f"YAML nested deeper than {MAX_YAML_DEPTH} levels"
    record = load_yaml("a: &a {b: [1, *a]}\n", "loop.yaml")
    assert record.error.message == "the alias *a is inside the node it names"
    assert (record.error.line, record.error.column) == (1, 15)


# The command line as run where PyYAML has no C loader
_WITHOUT_LIBYAML = "import sys, yaml; del yaml.CSafeLoader; sys.argv[0] = 'chatconv'; from chatconv.cli import main; main()"


@pytest.mark.parametrize("stdin", [False, True])
@pytest.mark.parametrize("libyaml", [True, False])
def test_very_deep_yaml_does_not_crash_the_cli(tmp_path, stdin, libyaml):
    path = tmp_path / "d.yaml"
    path.write_text("evalcases: " + "[" * 30000 + "]" * 30000 + "\n")
    args = ("validate", "-") if stdin else ("validate", path)
    if libyaml:
        result = run_chatconv(*args, stdin=path.read_bytes() if stdin else None)
    else:
        result = subprocess.run([sys.executable, "-c", _WITHOUT_LIBYAML, *map(str, args)],
                                input=path.read_bytes() if stdin else None, capture_output=True)
        result.stdout_text = result.stdout.decode()
        assert b"Traceback" not in result.stderr, result.stderr.decode()
    assert result.returncode == 1, result.stdout_text
    assert f"1:{12 + MAX_YAML_DEPTH - 1}: error: $: YAML nested deeper than" in result.stdout_text


@pytest.mark.parametrize("text, tag, position", [
    ("id: !custom x\n", "!custom", (1, 5)),
    ("id: !!python/object:os.system x\n", "!!python/object:os.system", (1, 5)),
    ("id: !!python/object/apply:os.system [ls]\n", "!!python/object/apply:os.system", (1, 5)),
    ("id: !!set {a, b}\n", "!!set", (1, 5)),
    ("!custom id: x\n", "!custom", (1, 1)),
])
def test_unsupported_yaml_tags_are_problems(text, tag, position):
    record = load_yaml(text, "t.yaml")
    assert record.error is None
    [problem] = record.problems
    assert problem.message == f"unsupported YAML tag {tag!r}"
    assert (problem.line, problem.column) == position and "remove" in problem.hint


def test_standard_yaml_tags_are_read_and_bad_values_reported():
    record = load_yaml("a: !!str 5\nb: !!float 1\nc: !!binary aGk=\nd: !!int abc\n", "t.yaml")
    assert record.data == {"a": "5", "b": 1.0, "c": "aGk=", "d": "abc"}
    [problem] = record.problems
    assert (problem.line, problem.path, problem.message) == (4, "$.d", "'abc' is not a valid !!int")


@pytest.mark.parametrize("merge, position", [("[*b, 5]", (2, 20)), ("5", (2, 15))])
def test_merge_key_of_a_non_mapping_is_a_problem(merge, position):
    record = load_yaml(f"b: &b {{x: 1}}\nm: {{a: 1, <<: {merge}}}\n", "m.yaml")
    [problem] = record.problems
    assert problem.message == "a merge key (<<) takes a mapping or a list of mappings"
    assert (problem.line, problem.column, problem.path) == (*position, "$.m")
    assert record.data["m"]["a"] == 1


def test_merged_keys_give_way_to_written_ones_and_to_earlier_sources():
    text = ("- &first {id: a, x: 1}\n"
            "- {<<: *first, id: b}\n"
            "- {id: c, <<: *first}\n"
            "- {<<: [{x: 2, y: 2}, *first], z: 3}\n")
    record = load_yaml(text, "m.yaml")
    assert record.problems == []
    assert [list(item.items()) for item in record.data] == [
        [("id", "a"), ("x", 1)],
        [("x", 1), ("id", "b")],
        [("id", "c"), ("x", 1)],
        [("x", 2), ("y", 2), ("id", "a"), ("z", 3)],
    ]
    assert record.locate((1, "id")) == (2, 16)  # the key written, not the merged one
    assert record.locate((1, "x")) == (1, 18)
    record = load_yaml("- &first {id: a}\n- {<<: *first, id: b, id: c}\n", "m.yaml")
    [problem] = record.problems
    assert (problem.line, problem.column, problem.message) == (2, 23, "duplicate key 'id'")


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


# ---------------------------------------------------------------------------------------------
# Standard input, duplicate keys, BOM-only lines, positions in characters

STEP_LINE = b'{"stepIndex":0,"input":{"role":"user","content":"a"},"output":[]}'


@pytest.mark.parametrize(("stdin", "fmt", "head_lines"), [
    (STEP_LINE + b"\n" + STEP_LINE + b"\n", "jsonl", 1),
    (b"\n\n" + STEP_LINE + b"\n", "jsonl", 3),  # blank lines first
    (b"\n" * 100_000 + STEP_LINE + b"\n", "jsonl", 100_001),  # many: held in one growing buffer
    (UTF8_BOM + STEP_LINE + b"\n", "jsonl", 1),  # a BOM first
    (b"{bad\n" + STEP_LINE + b"\n", "jsonl", 2),  # a broken first line, then whole ones
    (b'{\n  "evalcases": []\n}\n', "json", 1),  # pretty-printed JSON: its first line opens a value
    (b'{"evalcases": [\n{"id": "a"}\n]}\n', "json", 1),  # ... even when a whole object follows
    (b"[1, 2]\n", "jsonl", 1),  # arrays are records too (chat prompts)
    (b"{bad\n[1]\n", "jsonl", 2),
    (b"evalcases: []\n", "yaml", 1),
    (b"", "yaml", 0),
])
def test_standard_input_is_told_by_its_first_lines(stdin, fmt, head_lines):
    stream = io.BytesIO(stdin)
    told, head = read_stdin_head(stream)
    assert told == fmt
    assert head.count(b"\n") == head_lines and head + stream.read() == stdin  # nothing lost


def test_standard_input_jsonl_keeps_line_numbers_after_blank_lines(monkeypatch):
    monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BytesIO(b"\n\n" + STEP_LINE + b"\n{oops\n")))
    records = list(iter_records("-"))
    assert [r.line for r in records] == [3, 4]
    assert records[0].error is None and records[1].error.line == 4


def test_a_first_line_with_just_a_bom_is_blank():
    records = list(iter_jsonl(io.BytesIO(UTF8_BOM + b"\n" + STEP_LINE + b"\n"), "f.jsonl"))
    assert [(r.line, r.error) for r in records] == [(2, None)]


def test_duplicate_keys_of_json_documents_are_found_with_their_place(tmp_path):
    assert duplicate_keys(b'{"a": 1, "b": {"c": [{"d": 1, "d": 2}]}, "a": 3}') == [
        (("b", "c", 0), "d"), ((), "a")]
    assert duplicate_keys(UTF8_BOM + b'{"a": 1}') == []
    path = tmp_path / "dup.json"
    path.write_bytes(b'{\n  "evalcases": [],\n  "evalcases": []\n}\n')
    [record] = iter_records(path)
    [problem] = record.problems
    assert (problem.line, problem.path, problem.message) == (3, "$.evalcases", "duplicate key 'evalcases'")


def test_a_truncated_line_with_non_ascii_text_gets_the_truncation_hint():
    record = load_json('{"content":"café trunc'.encode(), "f.jsonl", 7)
    assert record.error.line == 7 and "truncated" in record.error.hint


@given(st.binary(max_size=300) | st.lists(st.sampled_from([b"\n", b"\r\n", b"{}", b"\xe2\x80\xa8"])).map(b"".join))
def test_newlines_counts_each_line_ending_as_count_does(data):
    from chatconv.sources.batches import newlines

    assert newlines(data) == data.count(b"\n")


@pytest.mark.parametrize("name", ["calls.log", "calls.txt", "calls"])
def test_jsonl_under_another_name_is_read_as_jsonl_by_every_command(tmp_path, name):
    # Loggers write JSONL as .log or .txt: told from its lines, as standard input is, not read as YAML.
    lines = [{"messages": [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"}]},
             {"messages": [{"role": "user", "content": "bye"}]}]
    path = tmp_path / name
    path.write_bytes(b"".join(orjson.dumps(line) + b"\n" for line in lines))
    imported = run_chatconv("import", path)
    assert imported.returncode == 0 and "2 records read (2 openai-chat)" in imported.stderr_text
    steps = tmp_path / f"{name}.steps"
    steps.write_bytes(imported.stdout)
    validated = run_chatconv("validate", steps)
    assert validated.returncode == 0 and "2 records: 0 errors" in validated.stdout_text
    assert [orjson.loads(row)["text"] for row in run_chatconv("text", steps).stdout.splitlines()] == ["hello", ""]


def test_a_document_under_another_name_is_still_read_whole(tmp_path):
    pretty = tmp_path / "body.txt"
    pretty.write_text('{\n  "messages": [{"role": "user", "content": "hi"}]\n}\n')
    imported = run_chatconv("import", pretty)
    assert imported.returncode == 0 and "1 record read (1 openai-chat)" in imported.stderr_text
    flow = tmp_path / "cases.txt"
    flow.write_text("{evalcases: [{id: a, outcome: x, input_messages: [{role: user, content: hi}]}]}\n")
    validated = run_chatconv("validate", flow)
    assert "no-repository" in validated.stdout_text  # read as YAML: an eval file (outside a repository)


@pytest.mark.skipif(not Path("/bin/bash").exists(), reason="process substitution needs bash")
def test_a_pipe_under_no_name_is_read_once_and_told_from_its_lines(tmp_path):
    # `<(...)` is a pipe: looked into to tell its format, it would be empty when read.
    steps = tmp_path / "steps.jsonl"
    steps.write_bytes(orjson.dumps({"stepIndex": 0, "input": {"role": "user", "content": "hi"}, "output": []}) + b"\n")
    body = tmp_path / "body.log"
    body.write_bytes(orjson.dumps({"messages": [{"role": "user", "content": "hi"}]}) + b"\n")
    chatconv = f"{sys.executable} -m chatconv"
    validated = subprocess.run(["/bin/bash", "-c", f"{chatconv} validate <(cat {steps})"], capture_output=True, text=True)
    assert validated.returncode == 0 and "1 record: 0 errors" in validated.stdout, validated.stdout
    imported = subprocess.run(["/bin/bash", "-c", f"{chatconv} import <(cat {body})"], capture_output=True, text=True)
    assert imported.returncode == 0 and "1 record read (1 openai-chat)" in imported.stderr, imported.stderr


def test_a_yaml_document_of_more_values_than_its_share_is_refused_before_it_is_composed(tmp_path, monkeypatch):
    # 1.5M values of a 3 MB flow sequence took 1 GB to read (15 MB: 3 GB): a document holds at
    # most one value per 16 bytes of --max-file-bytes, counted from the parser's events.
    import resource
    import subprocess
    import sys

    from chatconv.limits import LIMITS
    from chatconv.sources import load_yaml

    with monkeypatch.context() as patch:
        patch.setattr(LIMITS, "max_file_bytes", 1 << 20)  # 65,536 values
        record = load_yaml("tests: [" + ",".join(["1"] * 70_000) + "]\n", "big.yaml")
        assert record.error.code == "invalid-yaml" and record.error.line == 1
        assert "the YAML holds more than 65,536 values" in record.error.message
        assert "raise --max-file-bytes if memory allows" in record.error.hint
        assert load_yaml("tests: [" + ",".join(["1"] * 60_000) + "]\n", "fits.yaml").error is None
    (tmp_path / "big.yaml").write_text("tests: [" + ",".join(["1"] * 1_500_000) + "]\n")  # 3 MB

    def capped():
        resource.setrlimit(resource.RLIMIT_AS, (3 << 29, 3 << 29))

    result = subprocess.run([sys.executable, "-m", "chatconv", "validate", str(tmp_path / "big.yaml")],
                            capture_output=True, text=True, timeout=60, preexec_fn=capped)
    assert result.returncode == 1 and "the YAML holds more than 1,048,576 values" in result.stdout, result.stderr
