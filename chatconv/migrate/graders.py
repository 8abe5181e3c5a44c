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
                 "llm-judge": "llm-rubric", "composite": "assert-set"}
RUBRIC_LISTS = ("criteria", "rubrics", "rubric_item")  # an llm-rubric's list is its `value` now
# A grader's keys that current AgentV names otherwise (checked against its loader: a `name` is
# passed over, so the grader loses its name; `target` and a script's `script` skip the whole test).
RENAMED_FIELDS = {"name": "metric", "target": "provider", "required_min_score": "min_score"}
SET_LISTS = ("assertions", "evaluators")  # an assert-set's graders are its `assert` now
# Promptfoo's assertion types current AgentV leaves to the future and refuses, `not-` ones too,
# even from a custom assertion of that name ("This type is future scope in AgentV and is not
# accepted as a custom assertion"; its loader at 58f316ca2).
FUTURE_SCOPE_TYPES = frozenset((
    "answer-relevance", "bleu", "classifier", "contains-html", "contains-json", "contains-sql", "contains-xml",
    "context-faithfulness", "context-recall", "context-relevance", "conversation-relevance", "factuality",
    "finish-reason", "gleu", "guardrails", "is-html", "is-refusal", "is-sql", "is-valid-function-call",
    "is-valid-openai-function-call", "is-valid-openai-tools-call", "is-xml", "levenshtein", "meteor",
    "model-graded-closedqa", "model-graded-factuality", "moderation", "perplexity", "perplexity-score", "pi",
    "rouge-n", "ruby", "similar:cosine", "similar:dot", "similar:euclidean", "select-best", "human", "max-score",
    "tool-call-f1", "trace-error-spans", "trace-span-count", "trace-span-duration", "search-rubric", "word-count"))


def future_scope(kind: Any) -> bool:
    """Whether current AgentV refuses an assertion of this type (see FUTURE_SCOPE_TYPES)."""
    return isinstance(kind, str) and kind.removeprefix("not-") in FUTURE_SCOPE_TYPES


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


def type_after(grader: dict) -> Any:
    """The grader's type once migrated: its current name, or the type as written."""
    return current_type(grader) or grader.get("type")


def renamed_fields(grader: dict) -> Iterator[tuple[str, str]]:
    """(key, its current name) of each key of the grader that the current era names otherwise
    (by its type_after): rename_grader's renames, for the refusals to check first."""
    kind = type_after(grader)
    yield from ((old, new) for old, new in RENAMED_FIELDS.items() if old in grader)
    if kind == "script" and "script" in grader:
        yield "script", "command"
    if kind == "assert-set":
        yield from ((key, "assert") for key in SET_LISTS if isinstance(grader.get(key), list))
    if kind == "llm-rubric":
        yield from ((key, "value") for key in RUBRIC_LISTS if isinstance(grader.get(key), (list, str)))


def rubric_items(grader: dict) -> Iterator[dict]:
    """The rubric items of an llm-rubric (as migrated or not): its list's objects."""
    if type_after(grader) != "llm-rubric":
        return
    for key in ("value", *RUBRIC_LISTS):
        if isinstance(grader.get(key), list):
            yield from (item for item in grader[key] if isinstance(item, dict))
            return


def item_min_score(item: dict) -> float | None:
    """A rubric item's `required_min_score` (an integer 0 to 10 in the tests era) as current
    AgentV's `min_score` (0 to 1: AgentV's own migration writes 8 as 0.8); None when it is no
    integer from 1 to 10 (0 requires nothing, and current AgentV refuses a min_score of 0)."""
    score = item.get("required_min_score")
    if isinstance(score, bool) or not isinstance(score, int) or not 1 <= score <= 10:
        return None
    return score / 10


def rename_grader(grader: dict) -> None:
    """A grader with its current type, its keys renamed where they stand (a rubric item's
    required_min_score too, on the current scale)."""
    renames = list(renamed_fields(grader))
    new = current_type(grader)
    if new is not None:
        if grader.get("type") == "skill-trigger":
            if "skill" in grader:
                rename_key(grader, "skill", "value")
            grader.pop("should_trigger", None)  # said by the new type
        grader["type"] = new
    for old, key in renames:
        rename_key(grader, old, key)
    for item in rubric_items(grader):
        if "required_min_score" in item:
            rename_key(item, "required_min_score", "min_score", item_min_score(item))
