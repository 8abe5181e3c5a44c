"""AgentV's grader lists in an eval file of the tests era (`assertions`, `assert`, `evaluators`,
`execution.*` of the suite and of each case, and those nested in a composite), and the names
the current era gives their types (AgentV's guide "Breaking Changes From v4.42.4", "Grader Type
And Rubric Shape Changes"): for migration 0006.
"""

from __future__ import annotations

from typing import Any, Iterator

from .edits import rename_key

GRADER_KEYS = ("assertions", "assert", "evaluators")  # the keys that hold a list of graders
RENAMED_TYPES = {"rubrics": "llm-rubric", "rubric": "llm-rubric", "g-eval": "llm-rubric", "code-grader": "script",
                 "code-judge": "script", "code_grader": "script", "code_judge": "script",
                 "llm_judge": "llm-rubric", "llm_grader": "llm-rubric", "llm-grader": "llm-rubric",
                 "llm-judge": "llm-rubric"}
RUBRIC_LISTS = ("criteria", "rubrics", "rubric_item")  # an llm-rubric's list is its `value` now


def grader_lists(owners: list[tuple[tuple, dict]]) -> Iterator[tuple[tuple, list]]:
    """(JSON path, list) of every grader list of the owners (the suite, its cases: (path, object))."""
    places = [(key,) for key in GRADER_KEYS] + [("execution", key) for key in GRADER_KEYS]
    for path, owner in owners:
        for where in places:
            value: Any = owner
            for key in where:
                value = value.get(key) if isinstance(value, dict) else None
            if isinstance(value, list):
                yield from _with_nested(path + where, value)


def _with_nested(path: tuple, graders: list) -> Iterator[tuple[tuple, list]]:
    yield path, graders
    for index, grader in enumerate(graders):
        if isinstance(grader, dict):
            for key in GRADER_KEYS:
                if isinstance(grader.get(key), list):
                    yield from _with_nested(path + (index, key), grader[key])


def graders(owners: list[tuple[tuple, dict]]) -> Iterator[tuple[tuple, dict]]:
    """(JSON path, grader) of every grader object of the owners, nested ones included."""
    for path, found in grader_lists(owners):
        for index, grader in enumerate(found):
            if isinstance(grader, dict):
                yield path + (index,), grader


def current_type(grader: dict) -> str | None:
    """The current era's name for a tests-era grader's type, or None when it keeps its name."""
    kind = grader.get("type")
    if not isinstance(kind, str):
        return None
    if kind in RENAMED_TYPES:
        return RENAMED_TYPES[kind]
    if kind == "skill-trigger":
        return "not-skill-used" if grader.get("should_trigger") is False else "skill-used"
    if "_" in kind:  # multi-word snake_case types are kebab-case now: is_json -> is-json
        return kind.replace("_", "-")
    return None


def rename_grader(grader: dict) -> None:
    """A grader with its current type, its keys renamed where they stand."""
    new = current_type(grader)
    if new is None:
        return
    if grader.get("type") == "skill-trigger":
        if "skill" in grader:
            rename_key(grader, "skill", "value")
        grader.pop("should_trigger", None)  # said by the new type
    grader["type"] = new
    if new == "llm-rubric":
        for key in RUBRIC_LISTS:
            if isinstance(grader.get(key), list):
                rename_key(grader, key, "value")
