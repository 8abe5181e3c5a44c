"""`${{ NAME }}` in tests-era eval files, put in from the environment as AgentV does before it
reads the file (an unset NAME as nothing)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from agentv import agentv, needs_node
from chatconv.cases.environment import with_environment
from chatconv.sources import Record
from chatconv.validate import validate_path

# Text that names variables now and then (set, unset, spaced or not) among other text.
_NAMES = ["A", "B_2", "UNSET"]
_text = st.lists(st.one_of(st.text(max_size=6), st.sampled_from(_NAMES).map("${{{{ {} }}}}".format),
                           st.sampled_from(_NAMES).map("${{{{{}}}}}".format)), max_size=4).map("".join)
_json = st.recursive(st.none() | st.booleans() | st.integers() | _text,
                     lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
                     max_leaves=20)


def test_names_are_put_in_and_an_unset_one_is_nothing():
    record = Record("e.yaml", 1, {"tests": [{"criteria": "${{ SET }}", "input": "a ${{SET}} b ${{ UNSET }} c",
                                            "n": 3, "${{ SET }}": "keys stay"}]})
    [test] = with_environment(record, {"SET": "x"}).data["tests"]
    assert test == {"criteria": "x", "input": "a x b  c", "n": 3, "${{ SET }}": "keys stay"}
    assert record.data["tests"][0]["criteria"] == "${{ SET }}"  # the record read is left as it was


@given(_json)
def test_data_that_names_no_variable_is_the_same_object(data):
    data = {"tests": [data]}
    record = Record("e.yaml", 1, data)
    assert with_environment(record, {}).data is data or "${{" in repr(data)


@given(_json, st.fixed_dictionaries({"A": st.text(max_size=5), "B_2": st.text(max_size=5)}))
def test_putting_in_keeps_every_key_and_the_order_and_leaves_no_name(data, environ):
    # As v3.8.0 puts it in (typed=False): every value stays text (from v4 one reference alone may
    # become a boolean or a number: test_a_whole_value_from_the_environment_is_typed_from_v4...).
    put = with_environment(Record("e.yaml", 1, data), environ, typed=False).data
    # every name is put in, an unset one as nothing; a value holding `${{` is not read again
    if not any("${{" in value for value in environ.values()):
        assert not any(f"{{{{ {name} }}}}" in repr(put) or f"{{{{{name}}}}}" in repr(put) for name in _NAMES)

    def shape(value):
        if isinstance(value, dict):
            return [(key, shape(item)) for key, item in value.items()]
        if isinstance(value, list):
            return [shape(item) for item in value]
        return type(value).__name__
    assert shape(put) == shape(data)


def test_a_criteria_left_empty_by_an_unset_variable_is_refused_as_agentv_refuses_it(repo, monkeypatch):
    path = repo / "e.eval.yaml"
    path.write_text('tests:\n  - id: a\n    criteria: "${{ CHATCONV_TEST_CRITERIA }}"\n    input: hi\n')
    monkeypatch.delenv("CHATCONV_TEST_CRITERIA", raising=False)
    [problem] = validate_path(path)[0]
    assert (problem.line, problem.path, problem.message) == (3, "$.tests[0].criteria", "must not be empty")
    monkeypatch.setenv("CHATCONV_TEST_CRITERIA", "says hello")
    assert validate_path(path)[0] == []


def test_only_one_env_expression_alone_is_a_whole_value(repo, monkeypatch):
    from chatconv.cases.environment import with_env_templates
    from chatconv.sources import Record

    monkeypatch.setenv("CHATCONV_MAJOR", "1")
    monkeypatch.setenv("CHATCONV_MINOR", "5")
    record = Record("e.yaml", 1, data={"a": "{{ env.CHATCONV_MAJOR }}.{{ env.CHATCONV_MINOR }}",
                                       "b": " {{ env.CHATCONV_MINOR }} ", "d": "{{ env.CHATCONV_MINOR }}", "c": "${{ X }} {{ env.CHATCONV_MAJOR }}"})
    # AgentV coerces the text rendered, spaces and all: " 5 " is no number (its regex has no spaces)
    assert with_env_templates(record, str(repo)).data == {"a": "1.5", "b": " 5 ", "d": 5, "c": "${{ X }} {{ env.CHATCONV_MAJOR }}"}


@needs_node
@pytest.mark.parametrize("oracle, version", [("v4.42.4", "4.42.4"), ("v3.8.0", "3.8.0")])
def test_a_whole_value_from_the_environment_is_typed_from_v4_as_agentv_types_it(repo, monkeypatch, oracle, version):
    """v4.42.4 reads `content: "${{ N }}"` with N=42 as the number 42 (which its validate refuses);
    v3.8.0 as the text "42"."""
    monkeypatch.setenv("CHATCONV_N", "42")
    path = repo / "a.eval.yaml"
    path.write_text('tests:\n  - id: a\n    criteria: c\n    input:\n      - role: user\n'
                    '        content: "${{ CHATCONV_N }}"\n')
    [theirs] = agentv(oracle, "validate", ["a.eval.yaml"], repo)
    _, summary = validate_path(path, agentv=version)
    assert theirs["valid"] == (summary.errors == 0) and theirs["valid"] == (version == "3.8.0")


def test_a_case_file_gets_the_environment_its_eval_file_gets(repo, monkeypatch):
    monkeypatch.setenv("CHATCONV_TOPIC", "cats")
    (repo / "cases.yaml").write_text('- id: a\n  vars: {input: "About {{ env.CHATCONV_TOPIC }}"}\n  assert: [ok]\n')
    (repo / "suite.yaml").write_text('prompts: ["{{ input }}"]\ntests: file://cases.yaml\n')
    (repo / "cases.jsonl").write_text('{"id": "b", "criteria": "c", "input": "On ${{ CHATCONV_TOPIC }}"}\n')
    (repo / "t.eval.yaml").write_text("tests: ./cases.jsonl\n")
    from chatconv.prompt import build_prompts

    assert [c.inputs.question for c in build_prompts(repo / "suite.yaml").cases] == ["About cats"]
    assert [c.inputs.question for c in build_prompts(repo / "t.eval.yaml").cases] == ["On cats"]
