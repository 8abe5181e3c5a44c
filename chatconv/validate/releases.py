"""Where a release decides otherwise than its era's newest (eras/releases.py): the problems of an
eval file checked for an older release of its era (`--agentv VERSION`, or its config's
`required_version`: sources.configured_release), or of an older era."""

from __future__ import annotations

import re
from dataclasses import replace
from typing import Iterator

from ..cases import items
from ..eras import evalcases as evalcases_era
from ..eras import tests as tests_era
from ..eras.releases import OBJECT_CONTENT, REPO_SOURCE_REMOVED, SCHEMA_OPTIONAL, Release, newest_release
from ..problems import Problem
from ..sources import Record, problem_at

# The schema's refusal of a repo key that releases before REPO_SOURCE_REMOVED take.
_REPO_KEY = re.compile(r"\.workspace\.repos\[\d+\]\.(source|checkout|clone)$")


def release_problems(record: Record, era, release: Release | None, problems: list[Problem]) -> list[Problem]:
    """`problems`, the verdict of the era's newest release on the file, as `release` gives it."""
    if release is None:
        return problems
    problems = [_older_era_refused(p, release) for p in problems]
    if era is tests_era:
        if release.before(REPO_SOURCE_REMOVED):
            problems = [p for p in problems if not (p.code == "removed-key" and _REPO_KEY.search(p.path))]
        if release.before(OBJECT_CONTENT):
            problems = problems + list(_v3_refusals(record, release))
    if era is evalcases_era and release.before(SCHEMA_OPTIONAL):
        data = record.data if isinstance(record.data, dict) else {}
        if data.get("$schema") != "agentv-eval-v2":
            problems = problems + [problem_at(record, ("$schema",) if "$schema" in data else (),
                                              f"AgentV {release.label} refuses an eval file without "
                                              "`$schema: agentv-eval-v2`", hint="add `$schema: agentv-eval-v2`",
                                              code="missing-key")]
    return problems


def _older_era_refused(problem: Problem, release: Release) -> Problem:
    """A file of an older era, which chatconv reads as upgraded (a warning), is refused by the
    release asked for: it reads its own era's files only."""
    if problem.code != "legacy-shape" or problem.is_error:
        return problem
    from ..migrate import migrations  # here: as check_schema, which met the legacy shape, loads them

    migration = next((m for m in migrations() if m.eras and m.eras[0] != m.eras[1]
                      and f"migration {m.name})" in (problem.hint or "")), None)
    if migration is None:  # a spelling within the era, which its releases read
        return problem
    older = migration.eras[0]
    newest = newest_release(older)
    told = f"; or check it as {older}-era AgentV reads it: --agentv {newest.label}" if newest else ""
    return replace(problem, severity="error",
                   message=f"AgentV {release.label} reads {release.era}-era eval files, and this is a {older}-era "
                           f"one: {migration.summary}",
                   hint=f"`chatconv migrate` moves it forward (migration {migration.name}){told}")


def _v3_refusals(record: Record, release: Release) -> Iterator[Problem]:
    """What AgentV v3 refuses that v4 takes: an entry of `tests` that is not an object (a case
    file named in the list), a message's content as an object, an expected message without
    content."""
    data = record.data if isinstance(record.data, dict) else {}
    tests = data.get("tests")
    for index, test in enumerate(tests if isinstance(tests, list) else ()):
        if not isinstance(test, dict):
            yield problem_at(record, ("tests", index), f"AgentV {release.label} takes only objects in `tests` "
                             "(a case file may be the whole of `tests`)", hint="write the test here; AgentV v4 reads the file",
                             code="wrong-type")
    for index, test in items(tests):
        for key in ("input", "expected_output"):
            messages = test.get(key)
            for m, message in items(messages if isinstance(messages, list) else None):
                yield from _content_refusal(record, ("tests", index, key, m), message, key, release)
    for m, message in items(data.get("input") if isinstance(data.get("input"), list) else None):
        yield from _content_refusal(record, ("input", m), message, "input", release)


def _content_refusal(record: Record, path: tuple, message: dict, key: str, release: Release) -> Iterator[Problem]:
    if "role" not in message:
        return  # not a message (a content list's segment): the schema's
    content = message.get("content")
    if isinstance(content, dict) or (key == "expected_output" and "content" not in message):
        yield problem_at(record, path + ("content",) if "content" in message else path,
                         f"AgentV {release.label} takes a message's content only as a string or a list",
                         hint="write the object as JSON text; AgentV v4 takes it as it is",
                         code="wrong-type")
