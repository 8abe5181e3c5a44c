"""Every problem validate reports names its check: a code of problems.CODES, the one each kind of
fault is meant to have."""

from __future__ import annotations

import io
import re
import sys
import textwrap
from pathlib import Path

import orjson
import pytest

from chatconv.problems import CODES
from chatconv.validate import Validator, validate_path
from conftest import REPO, RECORDED, write_jsonl

EXAMPLES = REPO / "examples"


def _step(index, output, conversation="c1", **extra):
    return {"conversationId": conversation, "stepIndex": index, "input": {"role": "user", "content": "go"},
            "output": output, **extra}


def _call(call_id):
    return {"role": "assistant", "content": [{"type": "tool-call", "toolCallId": call_id, "toolName": "t",
                                              "input": {}}]}


def _result(call_id):
    return {"role": "tool", "content": [{"type": "tool-result", "toolCallId": call_id, "toolName": "t",
                                         "output": {"type": "text", "value": "ok"}}]}


CASE = "  - {id: a, outcome: x, input_messages: [{role: user, content: hi}]}\n"

# (file name, content, the codes of the problems validate finds in it)
BROKEN_FILES = [
    ("unknown-key.yaml", "evalcases:\n  - {id: a, outcom: x, input_messages: [{role: user, content: hi}]}\n",
     {"unknown-key"}),
    ("missing-key.yaml", "evalcases:\n  - {id: a, input_messages: [{role: user, content: hi}]}\n", {"missing-key"}),
    ("wrong-type.yaml", "evalcases:\n  - {id: a, outcome: x, input_messages: just a string}\n", {"wrong-type"}),
    ("bad-value.yaml", "evalcases:\n  - {id: a, outcome: x, input_messages: [{role: human, content: hi}]}\n",
     {"bad-value"}),
    ("legacy.yaml", "eval_cases:\n  - {id: a, outcome: x, input_messages: [{role: user, content: hi}]}\n",
     {"legacy-shape"}),
    ("removed.yaml", "prompts: ['{{ input }}']\ninput: hi\ntests:\n  - {id: a, vars: {input: hi}, assert: []}\n",
     {"removed-key"}),
    (".agentv/config.yaml", "eval_patterns: ['**/*.eval.yaml']\nretries: 3\n", {"unknown-config-key"}),
    ("duplicate-id.yaml", "evalcases:\n" + CASE + CASE, {"duplicate-case-id"}),
    ("evaluator.yaml", "execution:\n  evaluators: [{name: c, type: rubric}]\nevalcases:\n" + CASE,
     {"unknown-evaluator"}),
    ("reference.yaml", "evalcases:\n  - id: a\n    outcome: x\n    input_messages:\n      - role: user\n"
     "        content: [{type: file, value: missing.md}]\n", {"file-reference"}),
    ("glob.yaml", "guideline_patterns: [/docs/*.md, 'a[b']\nevalcases:\n" + CASE, {"bad-glob"}),
    ("unknown.yaml", "name: not a record of ours\n", {"unknown-kind"}),
    ("invalid.yaml", "evalcases: [\n", {"invalid-yaml"}),
    ("deep.yaml", "a: " + "[" * 250 + "]" * 250 + "\n", {"invalid-yaml"}),
    ("looping-alias.yaml", "a: &x [*x]\n", {"invalid-yaml"}),
    ("complex-key.yaml", "? [a, b]\n: c\n", {"invalid-yaml"}),
    ("alias-bomb.yaml", "a: &a [1, 1, 1, 1, 1, 1, 1, 1, 1, 1]\n" + "".join(
        f"{chr(98 + i)}: &{chr(98 + i)} [{', '.join(['*' + chr(97 + i)] * 10)}]\n" for i in range(5)),
     {"yaml-alias-bomb"}),
    ("tag.yaml", "evalcases:\n  - {id: a, outcome: !custom x, input_messages: [{role: user, content: hi}]}\n",
     {"unsupported-yaml-tag"}),
    ("tag-value.yaml", "evalcases:\n  - {id: !!int abc, outcome: x, input_messages: [{role: user, content: hi}]}\n",
     {"unsupported-yaml-tag"}),
    ("merge.yaml", "evalcases:\n  - <<: 1\n    id: a\n    outcome: x\n"
     "    input_messages: [{role: user, content: hi}]\n", {"yaml-merge"}),
    ("duplicate-key.yaml", "evalcases: []\nevalcases:\n" + CASE, {"duplicate-key"}),
    ("duplicate-key.json", '{"evalcases": [], "evalcases": [{"id": "a", "outcome": "x", "input_messages": '
     '[{"role": "user", "content": "hi"}]}]}', {"duplicate-key"}),
    ("invalid.json", '{"evalcases": [', {"invalid-json"}),
    ("empty.yaml", "", {"empty-file"}),
    ("blank.jsonl", "\n  \n", {"empty-file"}),
]

BROKEN_BYTES = [
    ("utf16.yaml", "evalcases: []\n".encode("utf-16"), {"foreign-encoding"}),
    ("latin1.yaml", "evalcases: [caf\xe9]\n".encode("latin-1"), {"invalid-utf8"}),
    ("latin1.jsonl", b'{"stepIndex": 0, "input": "caf\xe9"}\n', {"invalid-utf8"}),
]

BROKEN_RECORDINGS = [
    ("orphan.jsonl", [_step(0, [_result("nobody")])], {"tool-result-orphan"}),
    ("unanswered.jsonl", [_step(0, [_call("x")])], {"tool-call-unanswered"}),
    ("duplicate-call.jsonl", [_step(0, [_call("x"), _call("x"), _result("x")])], {"duplicate-tool-call-id"}),
    ("order.jsonl", [_step(0, []), _step(2, []), _step(1, [])], {"step-order"}),
    ("unknown-key.jsonl", [_step(0, [], colour="red")], {"unknown-key"}),
    ("too-deep.jsonl", None, {"too-deep"}),
    ("legacy.jsonl", [_step(0, {"role": "assistant", "content": "hi"})], {"legacy-shape"}),
    ("not-a-record.jsonl", [_step(0, []), [1, 2]], {"unknown-kind"}),
]


def _write_broken_inputs(folder):
    (folder / ".git").mkdir()
    expected = {}
    for name, text, codes in BROKEN_FILES:
        (folder / name).parent.mkdir(exist_ok=True)
        (folder / name).write_text(text)
        expected[name] = codes
    for name, data, codes in BROKEN_BYTES:
        (folder / name).write_bytes(data)
        expected[name] = codes
    for name, records, codes in BROKEN_RECORDINGS:
        if records is None:
            deep = "[" * 1000 + '{"bad": 1}' + "]" * 1000
            (folder / name).write_text('{"stepIndex": 0, "input": {"role": "user", "content": %s}, "output": []}\n'
                                       % deep)
        else:
            write_jsonl(folder / name, records)
        expected[name] = codes
    return expected


def _codes_by_file(problems, folder) -> dict[str, set]:
    found: dict[str, set] = {}
    for problem in problems:
        found.setdefault(Path(problem.file).relative_to(folder).as_posix(), set()).add(problem.code)
    return found


def test_each_broken_input_gets_the_code_of_its_fault(tmp_path):
    expected = _write_broken_inputs(tmp_path)
    files = [tmp_path / name for name in expected]
    problems = list(Validator().run(files))
    assert _codes_by_file(problems, tmp_path) == expected
    missing = tmp_path / "missing.yaml"
    assert {p.code for p in validate_path(missing)[0]} == {"unreadable-file"}


@pytest.mark.parametrize("jobs", [1, 2])
def test_every_problem_validate_yields_has_a_known_code(tmp_path, jobs):
    """On the shipped examples, the recorded fixtures and the broken inputs, in every mode."""
    _write_broken_inputs(tmp_path)
    problems = []
    for path in (EXAMPLES, RECORDED, tmp_path, tmp_path / "missing.jsonl"):
        problems += validate_path(path, jobs=jobs, batch_bytes=64)[0]
    assert problems and all(p.code in CODES for p in problems), [p for p in problems if p.code not in CODES]


def test_stdin_problems_have_codes_too(monkeypatch):
    lines = b"".join(orjson.dumps(step) + b"\n" for step in [_step(0, [_call("x")]), _step(0, [])])
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(lines + b"{broken\n")))
    problems = validate_path("-")[0]
    assert [p.code for p in problems] == ["tool-call-unanswered", "step-order", "invalid-json"]  # by line


def test_the_json_output_carries_the_code(repo):
    path = repo / "e.yaml"
    path.write_text(textwrap.dedent("""\
        evalcases:
          - {id: a, outcom: x, input_messages: [{role: user, content: hi}]}
    """))
    [problem] = validate_path(path)[0]
    # SPEC §7's keys, none removed, and the code added
    assert list(problem.to_dict()) == ["file", "line", "column", "path", "message", "severity", "hint", "code"]
    assert problem.to_dict()["code"] == "unknown-key"


def test_the_readme_lists_every_code_with_its_line_in_order():
    # The README's "Check codes" section is CODES written out: a code added, renamed or
    # described anew must be written there too, in the same order.
    readme = (REPO / "README.md").read_text()
    section = readme.split("\n### Check codes\n", 1)[1].split("\n#", 1)[0]
    listed = re.findall(r"^- `([a-z0-9-]+)`: (.+)$", section, flags=re.MULTILINE)
    assert listed == list(CODES.items())


def test_every_problem_the_package_makes_names_its_check():
    # Read with ast: each Problem(...) and problem_at(...) call under chatconv/ gives a code, by
    # keyword or as Problem's eighth argument, and each literal code is one of CODES. A problem
    # made without one could not be counted or filtered by code.
    import ast
    from pathlib import Path

    from chatconv.problems import CODES

    missing, unknown = [], []
    for path in sorted((Path(__file__).parent.parent / "chatconv").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if not (isinstance(node, ast.Call) and getattr(node.func, "id", None) in ("Problem", "problem_at")):
                continue
            code = next((k.value for k in node.keywords if k.arg == "code"), None)
            if code is None and node.func.id == "Problem" and len(node.args) >= 8:
                code = node.args[7]
            where = f"{path.name}:{node.lineno}"
            if code is None:
                missing.append(where)
            elif isinstance(code, ast.Constant) and code.value not in CODES:
                unknown.append(f"{where} {code.value!r}")
    assert missing == [] and unknown == []
