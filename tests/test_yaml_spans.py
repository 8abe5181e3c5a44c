"""The YAML rewrite by spans (migrate/yaml_spans.py, sources/yaml_nodes.py): a migrated eval file
is written by copying the text of what the migration left as it was. It must mean what the
round trip writes, keep every comment, and leave to the round trip what it cannot write."""

from __future__ import annotations

from collections import Counter

import pytest
import yaml
from conftest import REPO
from hypothesis import given, settings
from hypothesis import strategies as st

from chatconv.migrate import yaml_rewrite
from chatconv.migrate.documents import migrate_document
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
    if not result.tally.migrated:
        return  # at the newest era already, or refused: nothing written either way
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
    # Of AgentV's example files that migrate, 31 are plain data that the spans write whole; the
    # round trip takes those with aliases, and 4 whose comments after a changed case would be lost.
    assert spans >= 31


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
\r
  - id: two
    input_messages: [{role: user, content: "quoted, with a comma"}]
"""


def test_renamed_keys_keep_their_comments_and_moved_block_text_keeps_its_lines(round_trip_calls):
    data = RENAMED.replace("\r", "").replace("\n", "\r\n").encode()
    new = migrate_document(data, "e.yaml", "yaml").data
    assert round_trip_calls == []
    text = new.decode()
    assert "\r\n" in text and "\n" not in text.replace("\r\n", "")  # the file's line ends stay
    assert "tests:   # the cases\r\n  # first\r\n" in text
    assert "    criteria: |\r\n      Two lines,\r\n        one indented.\r\n" in text
    before = load_yaml(RENAMED.replace("\r", ""), "e").data["evalcases"]
    after = load_yaml(text.replace("\r\n", "\n"), "e").data["tests"]
    assert after[0]["criteria"] == before[0]["outcome"]
    assert after[0]["vars"]["input"] == before[0]["input_messages"][0]["content"]
    assert _comments(text.replace("\r\n", "\n")) == _comments(RENAMED.replace("\r", ""))


SHARED = """\
defaults: &judge {type: llm_judge, prompt: ./judge.md}
evalcases:
  - id: one
    input_messages: [{role: user, content: Hi}]
    execution: {evaluators: [*judge]}
"""


def test_aliases_are_left_to_the_round_trip(round_trip_calls):
    assert read_yaml_written(SHARED) is None
    result = migrate_document(SHARED.encode(), "shared.yaml", "yaml", keep_rejects=True)
    assert round_trip_calls == ["shared.yaml"] or result.tally.rejected


def test_a_rewrite_that_would_drop_a_comment_is_left_to_the_round_trip(round_trip_calls, monkeypatch):
    monkeypatch.setattr(yaml_rewrite, "rewrite_by_spans", lambda text, *args: text.replace("# kept", ""))
    new = migrate_document(RENAMED.replace("\r", "").encode(), "e.yaml", "yaml").data
    assert round_trip_calls == ["e.yaml"]
    assert b"# kept" in new


@pytest.mark.parametrize("path", EVAL_FILES[:80], ids=lambda p: str(p.relative_to(REPO)))
def test_the_span_reader_reads_what_load_yaml_reads(path):
    text = path.read_text(encoding="utf-8").replace("\r\n", "\n")
    read = read_yaml_written(text)
    if read is None:
        return
    expected = load_yaml(text, str(path)).data
    assert read[0] == expected and repr(read[0]) == repr(expected)


_scalars = st.one_of(st.none(), st.booleans(), st.integers(), st.floats(allow_nan=False),
                     st.text(max_size=20), st.sampled_from(["yes", "2024-01-01", "1e3", "~", "a: b", "#x", "- y"]))
_data = st.recursive(_scalars, lambda inner: st.one_of(st.lists(inner, max_size=4),
                                                        st.dictionaries(st.text(max_size=8), inner, max_size=4)),
                     max_leaves=20)


@settings(max_examples=150, deadline=None)
@given(data=st.dictionaries(st.text(min_size=1, max_size=8), _data, min_size=1, max_size=4),
       flow=st.booleans(), style=st.sampled_from([None, '"', "'", "|"]))
def test_the_span_reader_agrees_with_load_yaml_on_any_plain_document(data, flow, style):
    text = yaml.safe_dump(data, default_flow_style=flow, default_style=style, allow_unicode=True, sort_keys=False)
    read = read_yaml_written(text)
    expected = load_yaml(text, "doc.yaml")
    if read is None:
        return
    assert not expected.error
    assert read[0] == expected.data and repr(read[0]) == repr(expected.data)


def test_the_span_reader_refuses_what_is_not_plain_data():
    for text in ["a: &x 1\nb: *x\n", "a: 1\na: 2\n", "<<: {a: 1}\n", "a: !!str 1\n", "? [a]\n: 1\n", "a: [\n", "",
                 "a: 1\n---\nb: 2\n"]:
        assert read_yaml_written(text) is None, text
    assert read_yaml_written("a: 1  # one\n# two\n")[1].comments == Counter({"# one": 1, "# two": 1})

