"""The current era's cases (AgentV since 2026-07, Promptfoo-aligned): each test's `vars`
(over `default_test.vars`, the test winning per key) rendered into each of `prompts`; with
several prompts a case's id is `<test id>__prompt_<prompt id>`. What a prompt renders to is read
with the tests era's shorthand (a string is one user message; `"{{ input }}"` with a message
list gives those messages), then rendered once more with the same vars (AgentV's second pass).
`vars.expected_output` is reference text for graders, not an expected message.
Without `prompts`, cases from case files that carry `input` keep the tests era's shorthand.
"""

from __future__ import annotations

from typing import Iterator

from ..problems import Problem
from ..references import FileReferenceError
from ..sources import Record, problem_at
from . import Case, Lookup, Source, items
from .external import RawCase, case_file_records, raw_cases, referenced_files
from .matrix import MAX_CASES, array_expansions, expansion_count
from .prompts import Prompt, read_prompts, safe_id
from .shorthand import as_json_text, content_and_place, expand_input, json_messages
from .template_limits import TemplateLimit, deadline
from .templates import TemplateProblem, limit_problem, render, render_string, whole_value_name
from .tests import Suite, tests_case
from .turns import conversation_turns, window_size


def read(record: Record, lookup: Lookup) -> Iterator[Case | Problem]:
    data = record.data if isinstance(record.data, dict) else {}
    if "nunjucks_filters" in data:
        yield problem_at(record, ("nunjucks_filters",), "custom Nunjucks filters (`nunjucks_filters`, JavaScript "
                         "modules) are not supported; a template that uses one is refused", "warning",
                         "use built-in filters, or render the value into the vars", code="unsupported")
    prompts: list[Prompt] = []
    for item in read_prompts(record, lookup):
        if isinstance(item, Problem):
            yield item
        else:
            prompts.append(item)
    if "prompts" in data and not prompts:
        return  # every prompt was refused: the problems say why
    defaults = yield from _default_vars(record, lookup)
    graded_by_suite = _graded_by_suite(data)
    room = [MAX_CASES]  # the cases this file may still make (_matrix takes from it)
    for raw in _all_cases(record, lookup):
        if isinstance(raw, Problem):
            yield raw
        elif not graded_by_suite and not _graded(raw.data):
            name = raw.data.get("id") if isinstance(raw.data.get("id"), str) else "?"
            yield raw.source.problem(raw.path, f"test {name!r} has nothing to grade it by: AgentV skips it",
                                     "give it `assert`, `criteria` or `expected_output`, or the suite an `assert`",
                                     "skipped-test")
        elif not prompts:
            yield _raw_case(raw)
        else:
            yield from _matrix(raw, prompts, defaults, _graders(data), room)


def _graded(test: dict) -> bool:
    """Whether AgentV's loader (58f316ca2) finds something to grade a test by in the test itself
    (`assert: []` counts; criteria must be text)."""
    criteria = test.get("criteria")
    return (isinstance(criteria, str) and bool(criteria)) or test.get("expected_output") is not None \
        or "assert" in test or "turns" in test


def _graded_by_suite(data: dict) -> bool:
    """Whether the suite's `assert` or `default_test`'s grades every test (a list holding one)."""
    default_test = data.get("default_test")
    lists = [data.get("assert"), default_test.get("assert") if isinstance(default_test, dict) else None]
    return any(isinstance(graders, list) and graders for graders in lists)


def _all_cases(record: Record, lookup: Lookup) -> Iterator[RawCase | Problem]:
    yield from raw_cases(record, lookup, "tests")
    yield from _scenario_cases(record, lookup)


def _raw_case(raw: RawCase) -> Case | Problem:
    if "input" in raw.data:
        return tests_case(raw, Suite())
    return raw.source.problem(raw.path, "with no `prompts`, a case needs `input` (AgentV's PROMPT.md fallback "
                              "is not supported)", "add `prompts: ['{{ input }}']` to render `vars.input`",
                              "no-input")


def _default_vars(record: Record, lookup: Lookup):
    """The vars of `default_test` (an object, or a `file://` YAML file), returned; problems yielded."""
    value = record.data.get("default_test") if isinstance(record.data, dict) else None
    where = ("default_test",)
    if isinstance(value, dict):
        found = value.get("vars")
        return found if isinstance(found, dict) else {}
    if not isinstance(value, str):
        return {}
    if value.strip().startswith("ref://"):
        yield problem_at(record, where, "`ref://` default tests (named in the config's `refs`) are not supported",
                         "error", "write default_test inline or as file://defaults.yaml", code="unsupported")
        return {}
    try:
        path = lookup.resolve(value.strip().removeprefix("file://"))
    except FileReferenceError as exc:
        yield problem_at(record, where, exc.message, "error", exc.hint, code="case-file")
        return {}
    documents = list(case_file_records(record, lookup, path, where))
    document = documents[0]
    if isinstance(document, Problem) or document.error:
        yield document if isinstance(document, Problem) else document.error
        return {}
    if len(documents) > 1 or not isinstance(document.data, dict):
        yield Source(document.file, document.locate).problem((), "a default test file holds one object",
                                                             None, "case-file")
        return {}
    found = document.data.get("vars")
    return found if isinstance(found, dict) else {}


def _scenario_cases(record: Record, lookup: Lookup) -> Iterator[RawCase | Problem]:
    """`scenarios`: each `{config: [rows], tests: [rows]}` makes a test of each config row x test
    row, vars merged (the test's over the config's) and `assert` lists joined."""
    scenarios = record.data.get("scenarios") if isinstance(record.data, dict) else None
    if not isinstance(scenarios, list):
        return
    found: list[tuple[dict, Source, tuple]] = []
    own = Source(record.file, record.locate)
    for index, entry in enumerate(scenarios):
        where = ("scenarios", index)
        if isinstance(entry, dict):
            found.append((entry, own, where))
            continue
        if not isinstance(entry, str):
            yield own.problem(where, "a scenario is an object or a file:// reference", None, "wrong-type")
            continue
        files, problem = referenced_files(record, lookup, entry, where)
        if problem:
            yield problem
        for path in files:
            for document in case_file_records(record, lookup, path, where):
                if isinstance(document, Problem) or document.error:
                    yield document if isinstance(document, Problem) else document.error
                    continue
                yield from document.problems
                source = Source(document.file, document.locate)
                if isinstance(document.data, dict):
                    found.append((document.data, source, ()))
                elif isinstance(document.data, list):
                    found += [(item, source, (i,)) for i, item in items(document.data)]
                else:
                    yield source.problem((), "a scenario file holds a scenario or a list of them", None, "case-file")
    for i, (scenario, source, path) in enumerate(found):
        configs, tests = scenario.get("config") or [{}], scenario.get("tests") or []
        wrong = list(_misshapen(configs, path + ("config",))) + list(_misshapen(tests, path + ("tests",)))
        if wrong:  # the schema leaves scenarios unchecked: say what is wrong, and skip the scenario
            yield from (source.problem(place, f"a scenario's {what}", None, "wrong-type") for place, what in wrong)
            continue
        for j, config in items(configs):
            for k, test in items(tests):
                case = {**config, **test, "vars": {**(config.get("vars") or {}), **(test.get("vars") or {})},
                        "assert": list(config.get("assert") or []) + list(test.get("assert") or [])}
                case["id"] = (test.get("id") or (f"{config['id']}__scenario_test_{k + 1}" if config.get("id")
                                                 else f"scenario-{i}-{j}-{k}"))
                yield RawCase(case, source, path + ("tests", k), True)


def _misshapen(rows, where: tuple) -> Iterator[tuple[tuple, str]]:
    """(place, what it should be) of each part of a scenario's `config` or `tests` of the wrong type."""
    if not isinstance(rows, list):
        yield where, f"{where[-1]} is a list of objects"
        return
    for index, row in enumerate(rows):
        if not isinstance(row, dict):
            yield where + (index,), f"{where[-1]} row is an object"
            continue
        for key, kind, name in (("vars", dict, "an object"), ("assert", list, "a list")):
            if row.get(key) is not None and not isinstance(row[key], kind):
                yield where + (index, key), f"`{key}` is {name}"


def _matrix(raw: RawCase, prompts: list[Prompt], defaults: dict, suite_graders: list,
            room: list[int]) -> Iterator[Case | Problem]:
    case, path, source = raw.data, raw.path, raw.source
    if not isinstance(case.get("id"), str) or not case["id"]:
        yield source.problem(path, "a test needs an id (a non-empty string)", "add `id: <name>`", "missing-key")
        return
    own = case.get("vars") if isinstance(case.get("vars"), dict) else {}
    variables = {**defaults, **own}
    if raw.external and "input" in case and "input" not in own:
        variables["input"] = case["input"]  # a raw case's input becomes vars.input (AgentV drops input_files)
    count = expansion_count(variables) * len(prompts)
    if count > room[0]:  # refused before any is made: a few lines of YAML can ask for billions
        yield source.problem(path + ("vars",), f"test {case['id']!r} makes {count:,} cases (each list of strings "
                             f"in its vars makes a case per string, and the lists multiply): chatconv reads at "
                             f"most {MAX_CASES:,} cases a file, and this file has room for {room[0]:,} more",
                             "split the lists over several tests or files", "case-limit")
        return
    room[0] -= count
    for prompt in prompts:  # several prompts: each gives its own case id
        case_id = case["id"] if len(prompts) == 1 else f"{case['id']}__prompt_{safe_id(prompt.id)}"
        for expanded in array_expansions(variables):
            try:
                with deadline():  # one for the case's templates (setting it costs as much as a small render)
                    built = _rendered_case(raw, case_id, prompt, expanded, own)
            except TemplateLimit as exc:  # the time ran out between two of its templates
                past = limit_problem(exc)
                built = prompt.source.problem(prompt.path, f"test {case['id']!r}: {past.message}", past.hint, past.code)
            if isinstance(built, Case):
                built.graders += suite_graders
            yield built


def _var_place(raw: RawCase, name: str, own: dict) -> tuple | None:
    """Where a whole-value var is written in the case's own file, when it is."""
    parts = name.split(".")
    if parts[0] == "vars":
        parts = parts[1:]
    if parts and parts[0] in own:
        return raw.path + ("vars", *parts)
    if parts == ["input"] and "input" in raw.data:
        return raw.path + ("input",)
    return None


def _rendered_case(raw: RawCase, case_id: str, prompt: Prompt, variables: dict, own: dict) -> Case | Problem:
    try:
        rendered = render(prompt.template, variables)
    except TemplateProblem as exc:
        return prompt.source.problem(prompt.path, f"test {raw.data['id']!r}: {exc.message}", exc.hint, exc.code)
    same_file = prompt.source.file == raw.source.file
    base = prompt.path if same_file else raw.path
    if isinstance(prompt.template, str):
        name = whole_value_name(prompt.template)
        base = (name and _var_place(raw, name, own)) or base
    if isinstance(rendered, str):  # a prompt that renders to JSON text of messages sends those messages
        rendered = json_messages(rendered) or rendered
    messages = expand_input(rendered, base)
    try:
        messages = [_second_pass(message, place, variables) for message, place in messages]
        case_id = render_string(case_id, variables)
    except TemplateProblem as exc:
        return raw.source.problem(raw.path + ("vars",), f"test {raw.data['id']!r}: {exc.message}", exc.hint, exc.code)
    if not messages:
        return raw.source.problem(raw.path, f"test {raw.data['id']!r}: the prompt {prompt.id!r} renders to no "
                                  "message", "give the vars the prompt uses (e.g. vars.input)", "no-input")
    try:
        turns = conversation_turns(raw.data, variables)
    except TemplateProblem as exc:
        return raw.source.problem(raw.path + ("turns",), f"test {raw.data['id']!r}: {exc.message}", exc.hint, exc.code)
    return Case(str(case_id), raw.path, raw.source, [m for m, _ in messages], [p for _, p in messages],
                criteria=_criteria(raw.data, variables), graders=_graders(raw.data),
                metadata=raw.data.get("metadata") if isinstance(raw.data.get("metadata"), dict) else {},
                turns=turns, window_size=window_size(raw.data))


def _second_pass(message: dict, place: tuple | list, variables: dict) -> tuple[dict, tuple | list]:
    """AgentV renders a case's input again with its vars: text a var brought may hold templates."""
    content = render(message["content"], variables)
    if content == message["content"]:
        return message, place
    new_content, new_place = content_and_place(content, place if isinstance(place, tuple) else ())
    if isinstance(place, list) and isinstance(new_content, list) and len(new_content) == len(place):
        new_place = place
    return {"role": message["role"], "content": new_content}, new_place


def _criteria(case: dict, variables: dict) -> str | None:
    """The case's criteria, else its description, else `vars.expected_output` as reference text."""
    for value in (case.get("criteria"), case.get("description"), variables.get("expected_output")):
        if value is None:
            continue
        try:
            value = render(value, variables)
        except TemplateProblem:
            pass  # the text as written: criteria are for graders, not for the prompt
        return value if isinstance(value, str) else as_json_text(value)
    return None


def _graders(case: dict) -> list:
    found = case.get("assert")
    return list(found) if isinstance(found, list) else []


__all__ = ["read"]
