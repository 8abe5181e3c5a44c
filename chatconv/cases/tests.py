"""The `tests` era's cases (AgentV v3 to v4.42): `input` (a string, a message list, an object),
`input_files`, `expected_output`, `criteria` (alias `expected_outcome`), graders; a suite's own
`input` (and `input_files`) go before every case's messages unless the case says
`execution.skip_defaults: true`; cases may live in case files (external.py).
"""

from __future__ import annotations

import copy
import re
from dataclasses import dataclass, field, replace
from typing import Any, Iterator

from ..problems import Problem
from ..sources import Record
from . import Case, Lookup
from .external import RawCase, raw_cases
from .shorthand import compact_json, expand_input, expected_messages, with_input_files
from .turns import conversation_turns, window_size

GRADER_KEYS = ("assertions", "assert", "evaluators")


@dataclass
class Suite:
    """What an eval file gives every case: messages first, input files, graders."""

    messages: list[tuple[dict, tuple | list]] = field(default_factory=list)
    files: list | None = None  # written at `input_files`
    graders: list = field(default_factory=list)

    @classmethod
    def of(cls, data: dict) -> Suite:
        files = data.get("input_files")
        return cls(expand_input(data.get("input"), ("input",)), files if isinstance(files, list) else None,
                   graders_of(data))


def graders_of(owner: dict) -> list:
    """The graders an object lists: `assertions`, `assert`, `evaluators`, `execution.evaluators`."""
    found = []
    for key in GRADER_KEYS:
        if isinstance(owner.get(key), list):
            found += owner[key]
    execution = owner.get("execution")
    if isinstance(execution, dict) and isinstance(execution.get("evaluators"), list):
        found += execution["evaluators"]
    return found


def read(record: Record, lookup: Lookup) -> Iterator[Case | Problem]:
    data = record.data if isinstance(record.data, dict) else {}
    suite = Suite.of(data)
    key = "tests" if "tests" in data or "eval_cases" not in data else "eval_cases"
    for item in raw_cases(record, lookup, key):
        yield item if isinstance(item, Problem) else skipped_by_agentv(item) or tests_case(item, suite)


# What AgentV's loader (v3.8 to v4.42) takes for grading a test by: one of them must be there
# (`assertions: null` counts; `evaluators`, `rubrics` and the suite's graders do not).
GRADED_BY = ("expected_output", "assertions", "assert", "turns")


def skipped_by_agentv(raw: RawCase) -> Problem | None:
    """Why AgentV's loader skips a test (its validate passes some of these), if it does: no
    input of its own (a suite's input goes before a test's, never instead of it), or nothing to
    grade it by."""
    case = raw.data
    name = case.get("id") if isinstance(case.get("id"), str) else "?"
    if case.get("input") in (None, "", []):
        return raw.source.problem(raw.path, f"test {name!r} has no input of its own: AgentV skips it",
                                  "give the test `input` (the suite's input goes before it, never instead)",
                                  "skipped-test")
    criteria = case.get("criteria", case.get("expected_outcome"))
    graded = (isinstance(criteria, str) and criteria) or case.get("expected_output") is not None \
        or any(key in case for key in GRADED_BY[1:])
    if not graded:
        return raw.source.problem(raw.path, f"test {name!r} has nothing to grade it by: AgentV skips it",
                                  "give it `criteria` (what a good answer does), `expected_output` or `assertions`",
                                  "skipped-test")
    return None


def skips_defaults(case: dict) -> bool:
    execution = case.get("execution")
    return isinstance(execution, dict) and execution.get("skip_defaults") is True


def input_messages(raw: RawCase, suite: Suite) -> list[tuple[dict, tuple | list]]:
    """A case's input messages with their places: the suite's first (unless skipped), then its own."""
    case, path = raw.data, raw.path
    defaults = not skips_defaults(case)
    files, files_path = None, None
    if isinstance(case.get("input_files"), list):
        files, files_path = case["input_files"], path + ("input_files",)
    elif defaults and suite.files:
        files, files_path = suite.files, ("input_files",)
    own = case.get("input")
    if files and isinstance(own, str):
        mine = [with_input_files(own, path + ("input",), files, files_path)]
    elif files:
        mine = []  # AgentV attaches input files only to a string input: the case has no input
    else:
        mine = expand_input(own, path + ("input",))
    return (suite.messages if defaults else []) + mine


def tests_case(raw: RawCase, suite: Suite) -> Case | Problem:
    """One case of the tests era (also a raw case of the current era's case files)."""
    case, path, source = raw.data, raw.path, raw.source
    if not isinstance(case.get("id"), str) or not case["id"]:
        return source.problem(path + ("id",) if "id" in case else path, "a case needs an id (a non-empty string)",
                              "add `id: <name>`", "missing-key")
    messages = input_messages(raw, suite)
    if not messages:
        return _no_input(raw)
    criteria = case.get("criteria", case.get("expected_outcome"))
    expected = expected_messages(case.get("expected_output"), path + ("expected_output",))
    return Case(case["id"], path, source, [m for m, _ in messages], [place for _, place in messages],
                expected=[m for m, _ in expected], expected_paths=[place for _, place in expected],
                criteria=criteria if isinstance(criteria, str) else None,
                graders=graders_of(case) + suite.graders,
                metadata=case.get("metadata") if isinstance(case.get("metadata"), dict) else {},
                turns=conversation_turns(case), window_size=window_size(case))


# A test's `vars` (v4.30 on) put into its criteria, input, input files, expected output and
# turns, as AgentV v4.42.4 puts them in: `{{ name }}` or `{{ a.b }}`, looked up through objects;
# one such reference alone is the value itself (a list stays a list), within text a value that
# is not a string is its compact JSON, and a name with no value stays as written.
_VARIED = ("criteria", "expected_outcome", "input", "input_files", "expected_output")
_VAR = re.compile(r"\{\{\s*([A-Za-z_][A-Za-z0-9_.]*)\s*\}\}")
_WHOLE_VAR = re.compile(r"^\{\{\s*([A-Za-z_][A-Za-z0-9_.]*)\s*\}\}$")
_NO_VALUE = object()


def with_test_vars(record: Record) -> Record:
    """The eval file with each inline test's vars put in (see above), as v4.42.4 reads it; the
    record itself when no test has vars."""
    tests = record.data.get("tests") if isinstance(record.data, dict) else None
    if not isinstance(tests, list) or not any(isinstance(t, dict) and isinstance(t.get("vars"), dict) for t in tests):
        return record
    data = {**record.data, "tests": [with_vars(test) if isinstance(test, dict) else test for test in tests]}
    return replace(record, data=data)


def with_vars(case: dict) -> dict:
    """The test with its vars put in (see above); the test itself when it has none."""
    variables = case.get("vars")
    if not isinstance(variables, dict):
        return case
    put = {key: _put_vars(case[key], variables) for key in _VARIED if key in case}
    if isinstance(case.get("turns"), list):
        put["turns"] = [{**turn, **{key: _put_vars(turn[key], variables) for key in ("input", "expected_output")
                                    if key in turn}} if isinstance(turn, dict) else turn for turn in case["turns"]]
    return {**case, **put}


def _put_vars(value: Any, variables: dict) -> Any:
    if isinstance(value, str):
        whole = _WHOLE_VAR.match(value)
        if whole:
            found = _lookup(variables, whole.group(1))
            return value if found is _NO_VALUE else copy.deepcopy(found)
        return _VAR.sub(lambda match: _as_text(_lookup(variables, match.group(1)), match.group(0)), value)
    if isinstance(value, list):
        return [_put_vars(item, variables) for item in value]
    if isinstance(value, dict):
        return {key: _put_vars(item, variables) for key, item in value.items()}
    return value


def _lookup(variables: dict, dotted: str) -> Any:
    found: Any = variables
    for name in dotted.split("."):
        if not isinstance(found, dict) or name not in found:
            return _NO_VALUE
        found = found[name]
    return found


def _as_text(value: Any, written: str) -> str:
    if value is _NO_VALUE:
        return written
    return value if isinstance(value, str) else compact_json(value)


def _no_input(raw: RawCase) -> Problem:
    case = raw.data
    if "input_files" in case and "input" in case and not isinstance(case["input"], str):
        return raw.source.problem(raw.path + ("input_files",), "input_files attach to a string input only; "
                                  "with a message list, AgentV builds no input for this case",
                                  "write the files as {type: file, value: ...} segments of a message",
                                  "no-input")
    return raw.source.problem(raw.path + ("input",) if "input" in case else raw.path,
                              f"case {case['id']!r} has no input messages",
                              "give `input`: a string, or a list of {role, content} messages", "no-input")


__all__ = ["Suite", "graders_of", "input_messages", "read", "skipped_by_agentv", "tests_case"]
