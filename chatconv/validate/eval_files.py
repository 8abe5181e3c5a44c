"""Eval and config files: reading one for prompt, and the checks a schema cannot state (unique
case ids, known evaluator types, usable file references, sound guideline patterns). An eval file
is checked against its own era's schema (eras/), and its cases are read as cases/ reads them.
"""

from __future__ import annotations

import re
from dataclasses import replace
from pathlib import Path
from typing import Iterator

from ..cases import EvalCases, items, read_cases
from ..cases.environment import with_env_templates, with_environment
from ..eras import NEWEST, Era, era_named, era_of
from ..eras import evalcases as evalcases_era
from ..eras import tests as tests_era
from ..eras.releases import ENV_VALUES_TYPED, REPO_SOURCE_REMOVED, TEST_VARS, Release, required_release
from ..kinds import config_era
from ..problems import ChatconvError, Problem
from ..reference_files import FileReferenceError, segment_text
from ..references import find_repo_root, pattern_problem, repository_root
from ..sources import Record, is_url, iter_records, problem_at
from .configs import check_config_providers
from .explain import short_json
from .graders import check_current_graders, check_graders
from .referenced import read_named_yaml
from .releases import release_problems
from .schema import check_schema
from .workspaces import check_workspace_files

KNOWN_EVALUATOR_TYPES = ("code", "llm_judge")
SKIPPED_BY_AGENTV = ("skipped-test", "skipped-grader")  # the codes of what AgentV's loader passes over


def load_eval_file(path: str | Path, allow_outside_root: bool = False) -> tuple[Record, list[Problem]]:
    """An eval file, read and upgraded in memory, with its warnings; ChatconvError lists its errors."""
    record, problems, _ = read_eval_file(path, allow_outside_root)
    return record, problems


def read_eval_file(path: str | Path, allow_outside_root: bool = False, era: str | None = None,
                   release: Release | None = None) -> tuple[Record, list[Problem], EvalCases]:
    """An eval file of any era (`era` forces one), read and checked as AgentV `release` (else
    the newest of the era) checks it, with its warnings and its cases; ChatconvError lists its
    errors."""
    records = iter_records(path)
    record = next(records)
    more = sum(1 for _ in records)
    if more:
        name = "standard input" if str(path) == "-" else path
        raise ChatconvError(Problem(
            str(path), None, None, "$",
            f"prompt takes one eval file (YAML or JSON); {name} holds {more + 1} records", "error",
            "give a single eval file; JSONL lines are recordings, not eval files", "usage"))
    if record.error:
        raise ChatconvError(record.error)
    found, cases = _eval_file_problems(record, file_era(record, era), allow_outside_root, release)
    # AgentV builds the prompts of a file's other tests, and of a test whose grader it skips,
    # and of a file outside a repository: what its loader reads so is a warning here.
    found = [replace(p, severity="warning") if p.code in (*SKIPPED_BY_AGENTV, "no-repository") else p
             for p in [*_outside_repository(record), *found]]
    problems = sorted([*record.problems, *found], key=Problem.place.fget)
    errors = [p for p in problems if p.is_error]
    if errors:
        raise ChatconvError(errors)
    return record, problems, cases


def file_era(record: Record, forced: str | None = None) -> Era:
    """The era an eval file is checked in: the one forced, else its own; a file no era
    recognises (one given with --kind eval-file, say) is checked as the internal shape."""
    return era_of(record.data, forced) or evalcases_era


def check_eval_document(record: Record, kind: str, allow_outside_root: bool = False,
                        era: str | None = None, release: Release | None = None) -> Iterator[Problem]:
    """Every problem of an eval file or a config file (`kind`): its schema (an eval file's era's),
    then the checks a schema cannot state. They read defensively, so they run whatever the
    schema found: every problem at once."""
    if kind == "config":
        # A release asked for reads its own era's config: a tests-era key current AgentV
        # refuses (`execution.otel_file`) is an error to it, whatever era the keys tell.
        era = era_named(release.era) if release is not None else config_era(record.data)
        yield from check_schema(record, era.CONFIG_SCHEMA)
        yield from check_guideline_patterns(record)
        yield from _required_version_problems(record)
        if era is NEWEST:
            yield from check_config_providers(record, allow_outside_root)
        return
    yield from _outside_repository(record)
    yield from _eval_file_problems(record, file_era(record, era), allow_outside_root, release)[0]


def _outside_repository(record: Record) -> Iterator[Problem]:
    """AgentV's validate refuses an eval file that no git repository holds (every release
    checked: "Cannot validate file references: git repository root not found"): a file
    reference starting with `/` starts at the repository root. Its loader reads the file all the
    same; so does chatconv, with no root to bound the files it reads."""
    if record.file != "-" and not is_url(record.file) and repository_root(Path(record.file).parent) is None:
        yield problem_at(record, (), "AgentV refuses an eval file outside a git repository (\"Cannot validate file "
                         "references: git repository root not found\"): no folder above it holds .git",
                         hint="validate it inside its repository (or make one there: git init)",
                         code="no-repository")


def _required_version_problems(record: Record) -> Iterator[Problem]:
    """A `required_version` chatconv cannot read as a release is a warning: AgentV only warns
    when the running version is outside it, and chatconv then gives each file its era's newest
    release's verdict."""
    required = record.data.get("required_version") if isinstance(record.data, dict) else None
    if not isinstance(required, str):
        return
    try:
        required_release(required)
    except ValueError as exc:
        yield problem_at(record, ("required_version",), str(exc), "warning",
                         hint="write a semver range such as '>=4.0.0 <5.0.0' or '^4.42.0'; each eval file is "
                              "meanwhile checked as its era's newest release checks it", code="bad-value")


def _eval_file_problems(record: Record, era: Era, allow_outside_root: bool,
                        release: Release | None = None) -> tuple[list[Problem], EvalCases]:
    """An eval file's problems (its era's schema, then the checks of its cases), as AgentV
    `release` gives them (None: the era's newest), and its cases."""
    if era is tests_era:  # ${{ NAME }} and a test's vars, as AgentV puts them in before reading
        record = with_environment(record, typed=release is None or not release.before(ENV_VALUES_TYPED))
        if release is None or not release.before(TEST_VARS):
            from ..cases.tests import with_test_vars  # here: recordings' checks start without the era readers

            record = with_test_vars(record)
    elif era is NEWEST and record.file != "-":  # (an object's: its folder's URL)
        root = record.file.rpartition("/")[0] if is_url(record.file) else str(find_repo_root(Path(record.file).parent))
        record = with_env_templates(record, root)  # {{ env.NAME }}
    schema_problems = check_schema(record, era.SCHEMA)  # first: it upgrades older spellings in memory
    cases = read_cases(record, era, allow_outside_root)
    # A case the schema refused is read defensively (AgentV's loader skips a bad message, say):
    # what the reader then says about the same spot only repeats the schema's problem.
    refused = [(p.file, p.path) for p in schema_problems if p.is_error]
    problems = [*schema_problems, *check_guideline_patterns(record),
                *(p for p in cases.problems if not any(_same_spot(p, place) for place in refused)),
                *_unplayed_turns(record), *check_eval_file(record, cases=cases, release=release)]
    return release_problems(record, era, release, [_as_agentv_runs(p) for p in problems]), cases


# What AgentV's validate passes and its loader drops without a word (a conversation's settings,
# with the default it then runs with), or checks only when it plays the turn (a turn's graders):
# the file runs, but not as written.
_DROPPED_SETTING = re.compile(r"^\$\.tests\[\d+\]\.(aggregation|on_turn_failure|window_size)$")
_RUNS_WITH = {"aggregation": "mean", "on_turn_failure": "continue", "window_size": "every earlier turn in view"}
_TURN_GRADER = re.compile(r"^\$\.tests\[\d+\]\.turns\[\d+\]\.(assert|assertions)(\[|\.|$)")


def _as_agentv_runs(problem: Problem) -> Problem:
    if not problem.is_error:
        return problem
    setting = _DROPPED_SETTING.match(problem.path)
    if setting:
        return replace(problem, severity="warning", code="dropped-by-agentv",
                       message=f"{problem.message}: AgentV's loader drops it without a word, and runs the test with "
                               f"{_RUNS_WITH[setting.group(1)]}")
    if _TURN_GRADER.match(problem.path):
        return replace(problem, severity="warning", code="dropped-by-agentv",
                       message=f"{problem.message}: AgentV's validate does not check a turn's graders, and its run "
                               "meets this when it plays the turn")
    return problem


def _unplayed_turns(record: Record) -> Iterator[Problem]:
    """A conversation test (tests and current eras) needs a turn, and turns need a conversation
    test, as AgentV's validate says."""
    tests = record.data.get("tests") if isinstance(record.data, dict) else None
    for index, test in items(tests):
        turns = test.get("turns")
        if test.get("mode") == "conversation" and not (isinstance(turns, list) and turns):
            yield problem_at(record, ("tests", index, "turns" if "turns" in test else "mode"),
                             "a conversation test (mode: conversation) needs at least one turn: AgentV refuses it",
                             hint="list the turns under `turns`, each with its `input`", code="missing-key")
        for key in ("turns", "on_turn_failure"):
            if key in test and test.get("mode") != "conversation":
                yield problem_at(record, ("tests", index, key), f"`{key}` is for a conversation test: AgentV "
                                 "refuses it without `mode: conversation`", hint="add `mode: conversation` to the test",
                                 code="missing-key")


def _same_spot(problem: Problem, place: tuple[str, str]) -> bool:
    """Whether a problem's path is `place`'s, or one holds the other (`$.tests[1]` holds
    `$.tests[1].input`, not `$.tests[10]`), in the same file."""
    file, path = place
    if problem.file != file:
        return False
    shorter, longer = sorted((problem.path, path), key=len)
    return longer == shorter or (longer.startswith(shorter) and longer[len(shorter)] in ".[")


def check_eval_file(record: Record, allow_outside_root: bool = False,
                    cases: EvalCases | None = None, release: Release | None = None) -> Iterator[Problem]:
    """Unique case ids, known evaluator types and usable file references."""
    cases = cases or read_cases(record, file_era(record), allow_outside_root)
    first: dict[str, tuple] = {}
    for case in cases.cases:
        where = case.path + ("id",)
        if case.id in first and first[case.id] == (case.source, where):
            continue  # one written case made several (a current-era var listing values): AgentV keeps its id
        if case.id in first:
            source, place = first[case.id]
            line = source.locate(place)[0] if source.locate else None
            yield case.source.problem(where, f"duplicate case id {case.id!r}",
                                      f"ids must be unique in a file; first used on line {line}"
                                      + ("" if source == case.source else f" of {source.file}"), "duplicate-case-id")
        else:
            first[case.id] = (case.source, where)
    if cases.era is evalcases_era:
        yield from _check_evaluators(record)
    if cases.era is tests_era:
        yield from check_workspace_files(record, allow_outside_root,
                                         release is None or not release.before(REPO_SOURCE_REMOVED))
        yield from check_graders(record, release)
    if cases.era is NEWEST:
        yield from check_current_graders(record, _default_rubric_prompt(record, allow_outside_root))
    yield from _check_file_references(cases)


def _default_rubric_prompt(record: Record, allow_outside_root: bool) -> bool:
    """Whether the suite's default test (inline or `file://`) gives llm-rubrics a prompt
    (`options.rubric_prompt`: text, an object or a list), as AgentV's loader reads it."""
    default = record.data.get("default_test") if isinstance(record.data, dict) else None
    if isinstance(default, str) and default.startswith("file://"):
        default, _ = read_named_yaml(record, ("default_test",), default[len("file://"):], "the default test",
                                           allow_outside_root)
    options = default.get("options") if isinstance(default, dict) else None
    return isinstance(options, dict) and isinstance(options.get("rubric_prompt"), (str, dict, list))


def _check_evaluators(record: Record) -> Iterator[Problem]:
    data = record.data
    places = [(("execution",), data.get("execution") if isinstance(data, dict) else None)]
    places += [(("evalcases", index, "execution"), case.get("execution"))
               for index, case in items(data.get("evalcases") if isinstance(data, dict) else None)]
    for path, execution in places:
        evaluators = execution.get("evaluators") if isinstance(execution, dict) else None
        for index, evaluator in items(evaluators):
            kind = evaluator.get("type")
            if isinstance(kind, str) and kind not in KNOWN_EVALUATOR_TYPES:
                yield problem_at(record, path + ("evaluators", index, "type"),
                                 f"unknown evaluator type {kind!r}; its keys are kept unchecked",
                                 "warning", f"known types: {', '.join(KNOWN_EVALUATOR_TYPES)}",
                                 code="unknown-evaluator")


def _check_file_references(cases: EvalCases) -> Iterator[Problem]:
    # Relative references are looked up from the eval file's folder, even in a case file it
    # includes (as AgentV does).
    for case in cases.cases:
        for path, value in case.file_segments():
            try:
                file, data = cases.lookup.read(value)
                segment_text(data, file)  # as prompt reads it: UTF-8
            except FileReferenceError as exc:
                yield case.source.problem(path, exc.message, exc.hint, "file-reference")


def check_guideline_patterns(record: Record) -> Iterator[Problem]:
    """The globs of an eval or config file that can never work as meant (prompt refuses them)."""
    patterns = record.data.get("guideline_patterns") if isinstance(record.data, dict) else None
    for index, pattern in enumerate(patterns if isinstance(patterns, list) else ()):
        reason = isinstance(pattern, str) and pattern and pattern_problem(pattern)  # else: schema's
        if reason:
            yield problem_at(record, ("guideline_patterns", index), f"bad glob {short_json(pattern)}: {reason}",
                             hint="guideline patterns are globs relative to the repository root", code="bad-glob")
