"""The YAML rewrite by spans (migrate/yaml_spans.py, sources/yaml_nodes.py): a migrated eval file
is written by copying the text of what the migration left as it was. It must mean what the
round trip writes, keep every comment, and leave to the round trip what it cannot write."""

from __future__ import annotations

import json
from collections import Counter

import pytest
import yaml
from conftest import REPO
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from chatconv.migrate import yaml_rewrite
from chatconv.migrate.documents import migrate_document
from chatconv.migrate.yaml_scalars import plain_text
from chatconv.sources import load_yaml
from chatconv.sources.yaml_nodes import read_yaml_written

EVAL_FILES = sorted({*REPO.glob("examples/evals/**/*.yaml"), *REPO.glob("tests/data/agentv/**/*.yaml")})


def _comments(text: str) -> Counter:
    return read_yaml_written(text, where=False)[1].comments


@pytest.fixture
def round_trip_calls(monkeypatch):
    """The files the round trip was asked to write."""
    calls = []
    real = yaml_rewrite._round_trip

    def counted(text, file, *args):
        calls.append(file)
        return real(text, file, *args)

    monkeypatch.setattr(yaml_rewrite, "_round_trip", counted)
    return calls


def _by_round_trip(data: bytes, file: str, monkeypatch) -> bytes:
    with monkeypatch.context() as patch:
        patch.setattr(yaml_rewrite, "read_yaml_written", lambda text, where=True: None)
        return migrate_document(data, file, "yaml", keep_rejects=True).data


@pytest.mark.parametrize("path", EVAL_FILES, ids=lambda p: str(p.relative_to(REPO)))
def test_every_eval_file_is_written_meaning_what_the_round_trip_writes(path, round_trip_calls, monkeypatch):
    data = path.read_bytes()
    result = migrate_document(data, str(path), "yaml", keep_rejects=True)
    if not result.tally.migrated:  # at the newest era already (kept as it is), or refused (nothing written)
        assert result.data == (b"" if result.tally.rejected else data) and round_trip_calls == []
        return
    by_spans = round_trip_calls == []
    new = result.data.decode()
    old = _by_round_trip(data, str(path), monkeypatch).decode()
    assert load_yaml(new, "new").data == load_yaml(old, "old").data
    assert list(load_yaml(new, "new").data) == list(load_yaml(old, "old").data)  # keys in the same order
    if by_spans:
        assert _comments(new) == _comments(data.decode().replace("\r\n", "\n"))


def test_most_eval_files_of_plain_data_are_written_by_spans(round_trip_calls):
    spans = 0
    for path in EVAL_FILES:
        before = len(round_trip_calls)
        result = migrate_document(path.read_bytes(), str(path), "yaml", keep_rejects=True)
        spans += bool(result.tally.migrated) and len(round_trip_calls) == before
    # Every example file of plain data that migrates (29; those that current AgentV would not load
    # whole are refused) is written by spans, the comment lines between its cases kept; the round
    # trip takes those with aliases or tags.
    assert spans >= 29


def test_the_large_v1_file_of_the_benchmark_is_written_by_spans_as_the_round_trip_writes_it(round_trip_calls,
                                                                                             monkeypatch):
    head, cases = (REPO / "examples/evals/eras/v1-testcases.yaml").read_text().split("testcases:\n", 1)
    data = (head + "testcases:\n" + "".join(cases.replace("id: review-slugify", f"id: case-{n}")
                                             for n in range(40))).encode()
    new = migrate_document(data, "big.yaml", "yaml").data
    assert round_trip_calls == []
    assert new == _by_round_trip(data, "big.yaml", monkeypatch)


RENAMED = """\
# the suite
description: d   # kept
evalcases:   # the cases
  # first
  - id: one
    outcome: |
      Two lines,
        one indented.
    input_messages:
      - role: user
        content: >-
          Folded
          text   # not a comment

  - id: two
    input_messages: [{role: user, content: "quoted, with a comma"}]
"""


def test_renamed_keys_keep_their_comments_and_moved_block_text_keeps_its_lines(round_trip_calls):
    data = RENAMED.replace("\n", "\r\n").encode()
    new = migrate_document(data, "e.yaml", "yaml").data
    assert round_trip_calls == []
    text = new.decode()
    assert "\r\n" in text and "\n" not in text.replace("\r\n", "")  # the file's line ends stay
    assert "tests:   # the cases\r\n  # first\r\n" in text
    assert "    criteria: |\r\n      Two lines,\r\n        one indented.\r\n" in text
    before = load_yaml(RENAMED, "e").data["evalcases"]
    after = load_yaml(text.replace("\r\n", "\n"), "e").data["tests"]
    assert after[0]["criteria"] == before[0]["outcome"]
    assert after[0]["vars"]["input"] == before[0]["input_messages"][0]["content"]
    assert _comments(text.replace("\r\n", "\n")) == _comments(RENAMED)


SHARED = """\
testcases:
  - id: one
    messages:
      - role: user
        content: &question Hi there
      - role: user
        content: *question
"""


def test_aliases_are_left_to_the_round_trip(round_trip_calls):
    assert read_yaml_written(SHARED) is None
    result = migrate_document(SHARED.encode(), "shared.yaml", "yaml")
    assert result.tally.migrated == 1
    assert round_trip_calls == ["shared.yaml"]
    assert b"content: &question Hi there" in result.data and b"content: *question" in result.data


def test_a_rewrite_that_would_drop_a_comment_is_left_to_the_round_trip(round_trip_calls, monkeypatch):
    monkeypatch.setattr(yaml_rewrite, "rewrite_by_spans", lambda text, *args: text.replace("# kept", ""))
    new = migrate_document(RENAMED.encode(), "e.yaml", "yaml").data
    assert round_trip_calls == ["e.yaml"]
    assert b"# kept" in new


@pytest.mark.parametrize("path", EVAL_FILES, ids=lambda p: str(p.relative_to(REPO)))
def test_the_span_reader_reads_what_load_yaml_reads(path):
    text = path.read_text(encoding="utf-8").replace("\r\n", "\n")
    read = read_yaml_written(text)
    expected = load_yaml(text, str(path)).data
    if read is None:  # left to load_yaml and the round trip: how many are is held below
        return
    assert read[0] == expected and repr(read[0]) == repr(expected)


# The example files the span reader reads (the others hold anchors, tags or several documents).
SPAN_READ = {path for path in EVAL_FILES
             if read_yaml_written(path.read_text(encoding="utf-8").replace("\r\n", "\n")) is not None}


def test_the_span_reader_reads_most_eval_files():
    assert len(SPAN_READ) >= len(EVAL_FILES) - 28


_scalars = st.one_of(st.none(), st.booleans(), st.integers(), st.floats(allow_nan=False),
                     st.text(max_size=20), st.sampled_from(["yes", "2024-01-01", "1e3", "~", "a: b", "#x", "- y"]))
_data = st.recursive(_scalars, lambda inner: st.one_of(st.lists(inner, max_size=4),
                                                        st.dictionaries(st.text(max_size=8), inner, max_size=4)),
                     max_leaves=20)


# Text only, for documents written in a quoted or literal style: a number or null forced into
# one is written with its tag, which the span reader leaves to the round trip.
_text_data = st.recursive(st.text(max_size=20) | st.sampled_from(["yes", "1e3", "~", "a: b", "#x", "- y"]),
                          lambda inner: st.one_of(st.lists(inner, max_size=4),
                                                  st.dictionaries(st.text(max_size=8), inner, max_size=4)),
                          max_leaves=20)
_documents = st.sampled_from([None, '"', "'", "|"]).flatmap(lambda style: st.tuples(
    st.just(style), st.dictionaries(st.text(min_size=1, max_size=8), _data if style is None else _text_data,
                                    min_size=1, max_size=4)))


@settings(max_examples=150, deadline=None)
@given(document=_documents, flow=st.booleans())
def test_the_span_reader_agrees_with_load_yaml_on_any_plain_document(document, flow):
    style, data = document
    text = yaml.safe_dump(data, default_flow_style=flow, default_style=style, allow_unicode=True, sort_keys=False)
    read = read_yaml_written(text)
    expected = load_yaml(text, "doc.yaml")
    assert not expected.error
    assert read is not None  # safe_dump writes plain data: no alias, tag or repeated key
    assert read[0] == expected.data and repr(read[0]) == repr(expected.data)


def test_the_span_reader_refuses_what_is_not_plain_data():
    for text in ["a: &x 1\nb: *x\n", "a: 1\na: 2\n", "<<: {a: 1}\n", "a: !!str 1\n", "? [a]\n: 1\n", "a: [\n", "",
                 "a: 1\n---\nb: 2\n"]:
        assert read_yaml_written(text) is None, text
    assert read_yaml_written("a: 1  # one\n# two\n")[1].comments == Counter({"# one": 1, "# two": 1})



# v1 eval files written as people write them: each scalar in any style, comments anywhere one
# may stand, messages in block or flow style, lists indented or not.
_texts = st.text(st.characters(codec="utf-8", exclude_categories=("Cs", "Cc")), min_size=1, max_size=12)


@st.composite
def _v1_files(draw):
    comment = lambda: draw(st.sampled_from(["", "", "  # note", " # why: it matters"]))  # noqa: E731
    indent = draw(st.sampled_from(["  ", "    "]))
    dash = draw(st.sampled_from(["", indent]))  # an indentless list, or one indented under its key

    def scalar(text: str, column: int) -> str:
        style = draw(st.sampled_from(["plain", "single", "double", "literal", "folded"]))
        if style == "literal" or style == "folded":
            return ("|" if style == "literal" else ">") + "\n" + "".join(
                " " * (column + 2) + line + "\n" for line in text.split()) if text.split() else '""'
        if style == "single":
            return "'" + text.replace("'", "''") + "'"
        if style == "plain" and plain_text(text):
            return text
        return json.dumps(text, ensure_ascii=False)

    lines = [draw(st.sampled_from(["", "# an eval file\n", "# yaml-language-server: x\n---\n"]))]
    written = scalar(draw(_texts), 0)
    lines.append("description: " + written + ("" if written.endswith("\n") else comment() + "\n"))
    lines.append(f"testcases:{comment()}\n")
    for number in range(draw(st.integers(1, 3))):
        if draw(st.booleans()):
            lines.append(f"{dash}# case {number}\n")
        item = dash + "- "
        lines.append(f"{item}id: case-{number}{comment()}\n")
        inner = " " * len(item)
        if draw(st.booleans()):
            written = scalar(draw(_texts), len(inner))
            lines.append(f"{inner}outcome: {written}" + ("" if written.endswith("\n") else comment() + "\n"))
        lines.append(f"{inner}messages:{comment()}\n")
        roles = draw(st.lists(st.sampled_from(["user", "assistant", "system"]), min_size=1, max_size=3))
        for role in roles:
            content = draw(_texts)
            if draw(st.booleans()):
                lines.append(f"{inner}{dash}- {{role: {role}, content: {json.dumps(content, ensure_ascii=False)}}}{comment()}\n")
            else:
                at = len(inner) + len(dash) + 2
                lines.append(f"{inner}{dash}- role: {role}\n")
                written = scalar(content, at)
                lines.append(f"{' ' * at}content: {written}" + ("" if written.endswith("\n") else comment() + "\n"))
    return "".join(lines)


# monkeypatch is used only through its context(), undone within each example
@settings(max_examples=120, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(text=_v1_files(), crlf=st.booleans())
def test_any_v1_file_is_written_meaning_what_the_round_trip_writes_with_its_comments(text, crlf, monkeypatch):
    data = (text.replace("\n", "\r\n") if crlf else text).encode()
    with monkeypatch.context() as patch:
        calls = []
        real = yaml_rewrite._round_trip
        patch.setattr(yaml_rewrite, "_round_trip", lambda text, file, *a: calls.append(file) or real(text, file, *a))
        result = migrate_document(data, "gen.yaml", "yaml", keep_rejects=True)
    event("refused" if not result.tally.migrated else "round trip" if calls else "by spans")
    read = lambda data: load_yaml(data.decode().replace("\r\n", "\n"), "gen").data  # noqa: E731
    # What it must mean: the same data migrated as a JSON file, which neither rewrite writes.
    reference = migrate_document(json.dumps(read(data)).encode(), "gen.json", "json", keep_rejects=True)
    if not result.tally.migrated:  # refused: nothing written
        assert result.data == b"" and result.tally.rejected
        if reference.tally.migrated:  # the JSON file migrates: ruamel.yaml refused valid YAML the spans could not write
            assert calls and [reject.code for reject in result.rejects] == ["invalid-yaml"]
            event("refused by the round trip's reader")
        return
    assert reference.tally.migrated
    new = result.data
    assert (b"\r\n" in new) == crlf
    expected = json.loads(reference.data)
    assert read(new) == expected and repr(read(new)) == repr(expected)
    if not calls:  # written by spans: every comment of the file kept
        assert _comments(new.decode().replace("\r\n", "\n")) == _comments(text)
