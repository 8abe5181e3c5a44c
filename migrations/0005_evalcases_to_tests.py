"""0005: an `evalcases` file (AgentV v2) becomes a `tests` file (AgentV v3 to v4.42).

`evalcases` -> `tests`; in a case `input_messages` -> `input` (one user message whose content
is a string becomes that string), `expected_messages` -> `expected_output`, `outcome` ->
`criteria`; `execution.evaluators` (of the suite or a case) -> `assertions` beside it, each
`type: code` grader as `type: code-grader`, the judge names AgentV deprecated (`llm_judge`,
`llm-judge`, `code_judge`, `code-judge`, which v4.42.4 skips) as `llm-grader` and `code-grader`,
also inside a composite, and every script grader's `script` as `command` (the other types of
AgentV's v3.8 schema are kept by name). A `$schema` that names v2 names the tests era afterwards.
What has no home in the tests era is refused with the reason, never dropped: a file-level
`metadata` or `guideline_patterns`, a case's `metadata.systemPrompt` (the tests era does not
read it into the prompt), an evaluator type the tests era does not know, and text holding `${{`
(the tests era reads `${{ NAME }}` as an environment variable).
"""

import json

from chatconv.migrate import cases_in, declare_era, in_era, insert_after, move_comment, refusal, rename_key
from chatconv.migrate.graders import RENAMED_TYPES, graders
from chatconv.migrate.literal import strings

KINDS = ("eval-file",)
ERAS = ("evalcases", "tests")
SUMMARY = "evalcases (v2) -> tests (v3): input_messages -> input, outcome -> criteria, evaluators -> assertions"

_CASE_KEYS = {"input_messages": "input", "expected_messages": "expected_output", "outcome": "criteria"}
# Grader types AgentV's v3.8 schema knows, kept by name (v2's `code` becomes `code-grader`).
_KEPT_TYPES = ("code-grader", "code-judge", "code_grader", "code_judge", "composite", "contains", "cost", "equals",
               "execution-metrics", "execution_metrics", "field-accuracy", "field_accuracy", "is-json", "is_json",
               "latency", "llm-grader", "llm-judge", "llm_grader", "llm_judge", "regex", "rubrics", "token-usage",
               "token_usage", "tool-trajectory", "tool_trajectory")
# v2's `code`, and the judge names AgentV deprecated in v3 and v4.42.4 skips with a warning
# ("'llm_judge' is deprecated. Use 'llm-grader' instead"): a file migrated must lose no grader.
_TESTS_ERA_TYPES = {"code": "code-grader", "llm_judge": "llm-grader", "llm-judge": "llm-grader",
                    "code_judge": "code-grader", "code-judge": "code-grader"}
# Script graders (v2's `code`, and those the current era calls `script`): v2 gives the command as
# `script`, the tests era as `command`.
_SCRIPT_TYPES = ("code", *(old for old, new in RENAMED_TYPES.items() if new == "script"))


def detect(record):
    if in_era(record, "evalcases") and isinstance(record.get("evalcases"), list):
        return ("evalcases",)
    return None


def _refuse_homeless(record):
    """Refused for what a tests-era file has no place for; checked before anything changes."""
    if "metadata" in record:
        raise refusal(("metadata",), "a file-level metadata has no home in the tests era (AgentV v3 reads none): "
                      "write a systemPrompt as a system message at the start of each case's input_messages, "
                      "remove the rest, then migrate")
    if "guideline_patterns" in record:
        raise refusal(("guideline_patterns",), "the tests era reads guideline_patterns only from "
                      ".agentv/config.yaml: move them there, then migrate")
    if "assertions" in record:
        raise refusal(("assertions",), "is not an evalcases-era key; remove it or rename it, then migrate")
    for path, case in cases_in(record, "evalcases"):
        taken = [new for old, new in _CASE_KEYS.items() if old in case and new in case]
        if taken or "assertions" in case:
            key = (taken or ["assertions"])[0]
            raise refusal(path + (key,), "the case holds this tests-era key already: keep one spelling, then migrate")
        metadata = case.get("metadata")
        if isinstance(metadata, dict) and "systemPrompt" in metadata:
            raise refusal(path + ("metadata", "systemPrompt"), "the tests era does not read a systemPrompt into the "
                          "prompt: write it as a system message at the start of input_messages, then migrate")
    for path, evaluators in _evaluator_lists(record):
        for index, evaluator in enumerate(evaluators):
            if not isinstance(evaluator, dict):
                raise refusal(path + (index,), f"an evaluator is an object with a type, not {_json_kind(evaluator)}: "
                              "fix it, then migrate")
            kind = evaluator.get("type")
            if "type" not in evaluator:
                raise refusal(path + (index,), "an evaluator with no type: give it one, then migrate")
            if kind != "code" and kind not in _KEPT_TYPES:
                raise refusal(path + (index, "type"), f"evaluator type {kind!r} has no tests-era equivalent that "
                              "chatconv knows: write it as a tests-era assertion by hand, then migrate")
    for path, text in strings(record, ()):
        if "${{" in text:  # literal text in v2; in the tests era, in any string, an environment variable
            raise refusal(path, "the tests era reads `${{ NAME }}` in any text as an environment variable, so "
                          "this text would change: rewrite it without `${{`, then migrate")


def _json_kind(value):
    """What a JSON value is, in words."""
    if value is None or isinstance(value, bool):
        return json.dumps(value)
    return "text" if isinstance(value, str) else "a list" if isinstance(value, list) else "a number"


def _evaluator_lists(record):
    """(JSON path, list) of each `execution.evaluators`: the suite's, then each case's."""
    owners = [((), record)] + list(cases_in(record, "evalcases"))
    for path, owner in owners:
        execution = owner.get("execution")
        if isinstance(execution, dict) and isinstance(execution.get("evaluators"), list):
            yield path + ("execution", "evaluators"), execution["evaluators"]


def _evaluators_to_assertions(owner):
    """`execution.evaluators` -> `assertions` right after `execution` (which goes when empty)."""
    execution = owner.get("execution")
    if not isinstance(execution, dict) or not isinstance(execution.get("evaluators"), list):
        return
    for _, grader in graders([((), owner)]):  # those a composite holds too
        _upgrade_grader(grader)
    moved = execution["evaluators"]
    if len(execution) == 1:
        rename_key(owner, "execution", "assertions", moved)
        return
    del execution["evaluators"]
    insert_after(owner, "execution", "assertions", moved)


def _upgrade_grader(grader):
    """A grader as the tests era's last release runs it; a type it does not rename stays as written
    (or absent)."""
    if grader.get("type") in _TESTS_ERA_TYPES:
        grader["type"] = _TESTS_ERA_TYPES[grader["type"]]
    if grader.get("type") in _SCRIPT_TYPES and "script" in grader and "command" not in grader:
        rename_key(grader, "script", "command")


def _upgrade_case(case):
    for old, new in _CASE_KEYS.items():
        if old not in case:
            continue
        value = case[old]
        if old == "input_messages" and _is_one_user_text(value):
            move_comment(value[0], "content", case, old)  # the comment after the text stays after it
            value = value[0]["content"]
        rename_key(case, old, new, value)
    _evaluators_to_assertions(case)


def _is_one_user_text(messages):
    """One user message whose content is a string: the tests era writes that as the string."""
    return (isinstance(messages, list) and len(messages) == 1 and isinstance(messages[0], dict)
            and set(messages[0]) == {"role", "content"} and messages[0]["role"] == "user"
            and isinstance(messages[0]["content"], str))


def upgrade(record):
    _refuse_homeless(record)
    declare_era(record, "evalcases", "tests")
    _evaluators_to_assertions(record)
    for _, case in cases_in(record, "evalcases"):
        _upgrade_case(case)
    rename_key(record, "evalcases", "tests")
    return record
