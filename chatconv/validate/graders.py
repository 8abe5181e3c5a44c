"""The graders of an eval file that AgentV's loader skips: its validate passes them, or only
warns, but the test then runs without them (or is skipped whole), so chatconv refuses them.
Tests era: AgentV v3.8 to v4.42.4; current era: AgentV 58f316ca2. Each rule was read from the
loader's own message for a grader without the field.
"""

from __future__ import annotations

import re

from typing import Any, Iterator

from ..migrate.graders import GRADER_KEYS, RENAMED_TYPES, SET_LISTS, future_scope, graders
from ..cases import items
from ..eras.releases import GRADER_NAMES_OPTIONAL, OLD_GRADER_NAMES_SKIPPED, Release
from ..problems import Problem
from ..sources import Record, problem_at
from .explain import short_json

TEXT_VALUE = ("contains", "icontains", "equals", "regex", "starts-with", "ends-with")
TEXT_LIST_VALUE = ("contains-any", "contains-all", "icontains-any", "icontains-all")
TRAJECTORY_MODES = ("any_order", "in_order", "exact", "subset", "superset")
METRIC_THRESHOLDS = ("max_tool_calls", "max_llm_calls", "max_tokens", "max_cost_usd", "max_duration_ms",
                     "target_exploration_ratio")
TOKEN_LIMITS = ("max_total", "max_input", "max_output")
FIELD_MATCHES = ("exact", "numeric_tolerance", "date")  # of a field-accuracy grader's fields
# The types the current era's AgentV (58f316ca2) no longer takes, skipping the whole test, and
# what it says to write instead: the tests era's names (but code-grader, which it still reads).
REMOVED_IN_CURRENT = {**{old: f"type: {new}" for old, new in RENAMED_TYPES.items() if old != "code-grader"},
                      "tool-trajectory": "trajectory:* assertions (trajectory:tool-used for a tool's use and count)",
                      "skill-trigger": "type: skill-used with value: <skill>"}
# The graders AgentV v3 skips without a `name` (it names the others after their type and value).
NAMED_TYPES = ("llm-grader", "llm_grader", "llm-judge", "llm_judge", "code-grader", "code_grader", "code-judge",
               "code_judge", "composite", "latency", "cost", "token-usage", "tool-trajectory", "field-accuracy",
               "execution-metrics", "rubric")
AGGREGATORS = ("weighted_average", "threshold", "code-grader", "llm-grader")  # a composite's
# The old names AgentV's loader skips after v3.8 ("'llm_judge' is deprecated. Use 'llm-grader'").
DEPRECATED_TYPES = {"llm_judge": "llm-grader", "llm-judge": "llm-grader", "code_judge": "code-grader",
                    "code-judge": "code-grader"}


def _is_score(key: Any) -> bool:
    return (isinstance(key, int) and not isinstance(key, bool)) or (isinstance(key, str) and key.isdigit())


def _non_negative(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and value >= 0


def _texts(value: Any) -> bool:
    return isinstance(value, list) and bool(value) and all(isinstance(item, str) for item in value)


def why_skipped(grader: dict, release: Release | None = None) -> tuple[str, str] | None:
    """(why AgentV's loader skips this grader, what to write instead), or None if it keeps it;
    as `release` does (None: the newest of the tests era)."""
    kind = grader.get("type")
    if kind in DEPRECATED_TYPES and not (release and release.before(OLD_GRADER_NAMES_SKIPPED)):
        return (f"{kind!r} is a name AgentV no longer takes", f"write type: {DEPRECATED_TYPES[kind]} "
                "(`chatconv migrate` renames it)")
    if release and release.before(GRADER_NAMES_OPTIONAL) and kind in NAMED_TYPES and not grader.get("name"):
        return f"it has no `name`, which {release.label} needs for this type", "give it `name: <a name>`"
    kind = DEPRECATED_TYPES.get(kind, kind)  # read as its new name
    needs = _needs(grader, kind)
    if needs:
        return needs
    if kind in ("code-grader", "code_grader") and "command" not in grader and "script" not in grader:
        return "it has no `command`", "give the command that grades, e.g. command: [python, grade.py]"
    if kind == "composite":
        return _composite(grader)
    if kind == "rubrics" and not (isinstance(grader.get("criteria"), list) and grader["criteria"]):
        return "its `criteria` is not a non-empty list", "list the rubric's items under `criteria`"
    if kind == "tool-trajectory" and grader.get("mode") not in TRAJECTORY_MODES:
        return (f"its `mode` {short_json(grader.get('mode'))} is not one AgentV knows",
                f"mode is one of {', '.join(TRAJECTORY_MODES)}")
    if kind == "tool-trajectory":
        needed = "minimums" if grader["mode"] == "any_order" else "expected"
        if needed not in grader:
            return f"mode {grader['mode']} needs `{needed}`", f"give the tool calls it checks as `{needed}`"
    prompt = grader.get("prompt")
    if isinstance(prompt, dict) and not isinstance(prompt.get("command"), list):
        return "its `prompt` object has no `command` list", "give prompt: {command: [...]}, or the prompt as text"
    if kind == "skill-trigger" and "skill" not in grader:
        return "it has no `skill`", "name the skill it checks as `skill`"
    return None


def _needs(grader: dict, kind: str) -> tuple[str, str] | None:
    """What a grader of the checks both eras share lacks, for which AgentV's loader skips it."""
    if kind in TEXT_VALUE and not (isinstance(grader.get("value"), str) and grader["value"]):
        return "it has no `value` (a non-empty string)", "give the text to look for as `value`"
    if kind in TEXT_LIST_VALUE and not _texts(grader.get("value")):
        return "its `value` is not a non-empty list of strings", "give `value` as a list of strings"
    if kind == "field-accuracy" and not (isinstance(grader.get("fields"), list) and grader["fields"]):
        return "it has no `fields` (a non-empty list)", "list the fields to compare under `fields`"
    if kind == "latency" and not _non_negative(grader.get("threshold")):
        return "its `threshold` is not a non-negative number", "give `threshold` in milliseconds"
    if kind == "cost" and not _non_negative(grader.get("budget")):
        return "its `budget` is not a non-negative number", "give `budget` in US dollars"
    if kind == "token-usage" and not any(key in grader for key in TOKEN_LIMITS):
        return "it sets no limit", f"set one of {', '.join(TOKEN_LIMITS)}"
    if kind == "execution-metrics" and not any(key in grader for key in METRIC_THRESHOLDS):
        return "it sets no threshold", f"set one of {', '.join(METRIC_THRESHOLDS)}"
    return None


def _composite(grader: dict) -> tuple[str, str] | None:
    if not any(isinstance(grader.get(key), list) for key in SET_LISTS):
        return "it lists no graders", "list its graders under `assertions`"
    aggregator = grader.get("aggregator")
    kind = aggregator.get("type") if isinstance(aggregator, dict) else None
    if kind not in AGGREGATORS:
        return ("it has no `aggregator` of a type AgentV knows",
                f"give aggregator: {{type: ...}}, one of {', '.join(AGGREGATORS)}")
    threshold = aggregator.get("threshold")
    if kind == "threshold" and not (_non_negative(threshold) and threshold <= 1):
        return "its threshold aggregator has no `threshold` from 0 to 1", "give aggregator.threshold, e.g. 0.7"
    if kind == "code-grader" and "path" not in aggregator:
        return "its code-grader aggregator has no `path`", "give the script that aggregates as aggregator.path"
    return None


def _owners(record: Record, *more: str) -> list[tuple[tuple, dict]]:
    """(path, object) of what lists graders: the suite, each inline test, and the suite's `more`
    objects (the current era's `default_test`)."""
    data = record.data if isinstance(record.data, dict) else {}
    owners = [((), data)] + [(("tests", index), test) for index, test in items(data.get("tests"))]
    return owners + [((key,), data[key]) for key in more if isinstance(data.get(key), dict)]


def _turns(record: Record) -> list[tuple[tuple, dict]]:
    """(path, turn) of each turn of the inline tests: a turn lists graders of its own."""
    data = record.data if isinstance(record.data, dict) else {}
    return [(("tests", index, "turns", number), turn) for index, test in items(data.get("tests"))
            for number, turn in items(test.get("turns"))]


def check_graders(record: Record, release: Release | None = None) -> Iterator[Problem]:
    """An error for each grader AgentV's loader would skip, nested ones included."""
    for path, grader in graders(_owners(record)):
        name, kind = grader.get("name"), grader.get("type")
        in_set = len(path) >= 4 and path[-2] in SET_LISTS and path[-4] in GRADER_KEYS  # a composite's member
        if in_set and not all(isinstance(value, str) and value for value in (name, kind)):
            yield problem_at(record, path, "a grader within a composite needs a `name` and a `type`: AgentV "
                             "skips it without them", hint="give it `name: <a name>` and its `type`",
                             code="skipped-grader")
            continue
        if not isinstance(kind, str):
            continue  # the schema's to say
        what = f"grader {name!r}" if isinstance(name, str) else "this grader"
        reason = why_skipped(grader, release)
        if reason:
            yield problem_at(record, path, f"AgentV skips {what} ({kind}): {reason[0]}", hint=reason[1],
                             code="skipped-grader")
            continue
        for place, part in _skipped_parts(grader):
            yield problem_at(record, path + place, f"AgentV skips this {part[0]} of {what}: {part[1]}",
                             hint=part[2], code="skipped-grader")


def _skipped_parts(grader: dict) -> Iterator[tuple[tuple, tuple[str, str, str]]]:
    """(place in the grader, (what, why AgentV's loader skips it, what to write)) of each part of
    a grader it keeps that it skips: a rubric item with neither an outcome nor score ranges, a
    field compared by a match it does not know."""
    kind = grader["type"]
    for key in ("criteria", "rubrics") if kind == "rubrics" else ("rubrics",):
        for index, item in enumerate(grader.get(key) if isinstance(grader.get(key), list) else ()):
            if isinstance(item, dict) and "score_ranges" not in item and not (
                    isinstance(item.get("outcome"), str) and item["outcome"]):
                yield (key, index), ("rubric item", "it has no `outcome` (a non-empty string)",
                                     "say what a good answer does as `outcome`")
            ranges = item.get("score_ranges") if isinstance(item, dict) else None
            if isinstance(ranges, dict) and not all(_is_score(score) for score in ranges):
                yield (key, index, "score_ranges"), ("rubric item's score ranges (and the whole test)",
                                                     "a shorthand map's keys are scores (whole numbers)",
                                                     "key each range by its score, e.g. 0: ..., 5: ..., 10: ...")
    yield from _field_skips(grader)


def _rubric_item_skips(grader: dict) -> Iterator[tuple[tuple, tuple[str, str, str]]]:
    """The items of an llm-rubric's list that current AgentV's loader skips: one that is no
    text and no object, or an object with neither an outcome (or criteria) nor score ranges."""
    items_ = grader.get("value") if grader.get("type") == "llm-rubric" else None
    for index, item in enumerate(items_ if isinstance(items_, list) else ()):
        if isinstance(item, str):
            continue
        if not isinstance(item, dict):
            yield ("value", index), ("rubric item", "it is neither text nor an object",
                                     "write it as text, or as {id, outcome}")
        elif "score_ranges" not in item and not any(
                isinstance(item.get(key), str) and item[key] for key in ("outcome", "criteria")):
            yield ("value", index), ("rubric item", "it has no `outcome` (a non-empty string) and no score ranges",
                                     "say what a good answer does as `outcome`")


def _field_skips(grader: dict) -> Iterator[tuple[tuple, tuple[str, str, str]]]:
    """The fields of a field-accuracy grader AgentV's loader skips: no `path`, or a `match` it
    does not know (both eras)."""
    fields = grader.get("fields") if grader.get("type") == "field-accuracy" else None
    for index, spec in enumerate(fields if isinstance(fields, list) else ()):
        path = spec.get("path") if isinstance(spec, dict) else None
        match = spec.get("match") if isinstance(spec, dict) else None
        if not (isinstance(path, str) and path.strip()):
            yield ("fields", index), ("field", "it has no `path` (a non-empty string)",
                                      "name the field to compare as `path`, e.g. path: invoice.total")
        elif match not in FIELD_MATCHES:
            yield ("fields", index), ("field", f"its `match` {short_json(match)} is not one it knows",
                                      f"match is one of {', '.join(FIELD_MATCHES)}")


def check_current_graders(record: Record, rubric_prompt: bool = False) -> Iterator[Problem]:
    """An error for each assertion of a current-era file that AgentV's loader skips, or for
    which it skips the whole test, nested ones included. rubric_prompt: the suite's default
    test gives llm-rubrics a prompt (`options.rubric_prompt`), so one needs no value of its own."""
    for path, grader in graders(_owners(record, "default_test") + _turns(record)):
        if not isinstance(grader.get("type"), str):
            if path.count("assert") > 1:  # inside an assert-set (a list's own the schema says)
                yield problem_at(record, path, "AgentV skips this assertion of the assert-set: it has no `type` "
                                 "(a string)", hint="give it its type, e.g. type: contains", code="skipped-grader")
            continue
        reason = _why_current_skips(grader, rubric_prompt)
        if reason:
            yield problem_at(record, path, f"AgentV {reason[0]}", hint=reason[1], code="skipped-grader")
            continue
        for place, part in [*_field_skips(grader), *_rubric_item_skips(grader)]:
            yield problem_at(record, path + place, f"AgentV skips this {part[0]} of the grader: {part[1]}",
                             hint=part[2], code="skipped-grader")


def _why_current_skips(grader: dict, rubric_prompt: bool = False) -> tuple[str, str] | None:
    kind = grader.get("type")
    if future_scope(kind):
        return (f"refuses the Promptfoo assertion type {kind!r} (future scope in AgentV), and so the test, even "
                "from a custom assertion of that name", "use an assertion AgentV runs, or give your custom "
                "assertion another name")
    if "target" in grader:
        return "skips the whole test: an assertion's `target` has been removed", "rename it `provider`"
    if kind in REMOVED_IN_CURRENT:
        return (f"skips the whole test: it no longer takes the type {kind!r}",
                f"write {REMOVED_IN_CURRENT[kind]}; `chatconv migrate` rewrites a tests-era file's graders")
    if kind == "script" and "command" not in grader:
        return "skips this script: it has no `command`", "give the command that grades, e.g. command: [python, grade.py]"
    if kind == "assert-set" and not isinstance(grader.get("assert"), list):
        return "skips this assert-set: it has no `assert` list", "list its assertions under `assert`"
    needs = _needs(grader, kind) if isinstance(kind, str) else None
    if needs:
        return f"skips this {kind}: {needs[0]}", needs[1]
    if kind != "llm-rubric":
        return None
    prompt = grader.get("prompt")
    if prompt is not None and not (isinstance(prompt, str) and not prompt.startswith("file://")):
        # From a file or a command the prompt is not taken: the grader is skipped, or the whole
        # test when a prompt file names neither {{ output }} nor {{ expected_output }}.
        return ("takes an llm-rubric's prompt only as text written in place: from a file or a command "
                "it skips the grader, or the whole test", "write the prompt as text, or the rubric as `value`")
    if grader.get("value") in (None, "") and prompt in (None, "") and not rubric_prompt:
        return ("skips this llm-rubric: it has neither `value` nor `prompt` (nor does the default test give a "
                "`rubric_prompt`)", "write the rubric as `value`")
    for index, item in enumerate(grader.get("value") if isinstance(grader.get("value"), list) else ()):
        fault = score_ranges_fault(item.get("score_ranges")) if isinstance(item, dict) else None
        if fault:
            return (f"skips the whole test: rubric item {item.get('id', index)!r} has score_ranges that {fault}",
                    "key each range by its score from 0 to 10, starting at 0, each with its text (0: ..., 5: ...)")
    return None


_DECIMAL = re.compile(r"[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?")


def score_ranges_fault(ranges: Any) -> str | None:
    """Why AgentV's loader refuses a rubric item's score_ranges written as a map (it reads a map
    whose keys are whole scores from 0 to 10, each with a text, from 0 up, as ranges); None
    when it takes them, or they are a list (the schema's to check)."""
    if ranges is None or isinstance(ranges, list):
        return None
    if not isinstance(ranges, dict) or not ranges:
        return "are neither a list nor a map of scores"
    scores = []
    for key, text in ranges.items():
        score = _number(key)
        if score is None or score != int(score) or not 0 <= score <= 10 or not (isinstance(text, str) and text):
            return f"are a map with the key {key!r}: its keys are whole scores from 0 to 10, each with a text"
        scores.append(int(score))
    return None if min(scores) == 0 else f"start at {min(scores)}: a map of scores starts at 0"


def _number(key: Any) -> float | None:
    """A map key as JavaScript's Number() reads a decimal one (YAML's 5 and "5" alike; "" is 0),
    or None (NaN, and what Python reads but JavaScript does not: "1_0", "nan", "inf")."""
    if isinstance(key, bool):
        return None
    text = str(key).strip()
    return float(text or "0") if _DECIMAL.fullmatch(text or "0") else None
