"""0006: a `tests` file (AgentV v3 to v4.42) becomes a current one (Promptfoo-aligned, 2026-07),
following AgentV's own guide, "Breaking Changes From v4.42.4" (its quick checklist).

- A case's `input` -> `vars.input` rendered by one prompt, `prompts: ["{{ input }}"]`: a string
  stays a string, a message list stays a list (AgentV's whole-value rule renders `{{ input }}`
  to the list itself); a string input with `input_files` becomes one user message whose content
  is the file parts, then the text, as the tests era builds it. `expected_output` ->
  `vars.expected_output`; `assertions` / `evaluators` -> `assert`; `expected_outcome` ->
  `criteria`, which becomes the last check of the case's own `assert` where it has one (a plain
  string: an llm-rubric, as AgentV's guide and its own migrated examples write it); `note` ->
  `description`; a case's `execution.evaluators` / `execution.assertions`
  -> `execution.assert`.
- A suite-level `input` -> `default_test.vars.suite_input` (one var per message), rendered whole
  by a chat prompt before `{"role": "user", "content": "{{ input }}"}`; suite `input_files`
  join each string input that has none of its own.
- Current AgentV renders a case's input, criteria and expected output once more, as templates,
  after the prompt: text there that a template engine would read (`{{`, `{%`, `{#`) is wrapped
  in `{% raw %}` so that it stays the text it was.
- The suite's `execution`: `target` / `targets` -> `providers` (current AgentV rejects a
  top-level `target`; a target object's `name` -> `id`), `threshold` -> `threshold`,
  `budget_usd` / `total_budget_usd` -> `evaluate_options.budget_usd`, `workers` /
  `max_concurrency` -> `evaluate_options.max_concurrency`, `trials` -> `evaluate_options.repeat` (its count),
  its graders -> `assert`; `execution` is then gone. `assertions` -> `assert`; `eval_cases` ->
  `tests`. Grader types as migrate/graders.py renames them; a rubric item's `required_min_score`
  (0 to 10) -> `min_score` (its tenth: 8 -> 0.8, as AgentV's own migrated example has it).

Refused, with the key and AgentV's advice, never dropped: a suite `name` AgentV's loader
refuses, `execution.fail_on_error`, `execution.cache`, a trials policy beyond its count,
`workspace` (AgentV rejects it now), target selection in a case, `tool-trajectory` graders,
`${{ NAME }}` env interpolation, a key current AgentV has no place
for, and inputs the new prompts cannot carry exactly.
"""

import json
import re

from chatconv.migrate import (append_moving_comment, cases_in, declare_era, in_era, insert_after, insert_before,
                              move_comment, new_like, new_list_like, quoted_like, refusal, rename_key)
from chatconv.migrate.graders import (current_type, future_scope, graders, item_min_score, rename_grader,
                                     renamed_fields, rubric_items, type_after)
from chatconv.migrate.literal import TEMPLATE_SYNTAX, escaped_texts, strings

KINDS = ("eval-file",)
ERAS = ("tests", "current")
SUMMARY = "tests (v3-v4.42) -> current: input -> prompts + vars.input, assertions -> assert, execution -> ..."

PROMPT = "{{ input }}"
# What current AgentV renders as a template with the case's vars once the prompt is rendered (its
# second pass over each case): text moved there is escaped, so that it stays the text it was.
_RENDERED_AGAIN = ("criteria", "expected_outcome", "input", "input_files", "expected_output")
_SUITE_MOVES = {"target": "providers", "targets": "providers", "threshold": "threshold",
                "budget_usd": "budget_usd", "total_budget_usd": "budget_usd", "totalBudgetUsd": "budget_usd",
                "workers": "max_concurrency", "max_concurrency": "max_concurrency", "trials": "repeat",
                "assertions": "assert", "assert": "assert", "evaluators": "assert"}
_EVALUATE_OPTIONS = ("budget_usd", "max_concurrency", "repeat")
_NO_HOME = {
    "fail_on_error": "has no current eval-YAML home; AgentV treats it as operational policy: do not commit it "
                     "into migrated eval YAML (remove it, then migrate)",
    "failOnError": "has no current eval-YAML home; AgentV treats it as operational policy: do not commit it "
                   "into migrated eval YAML (remove it, then migrate)",
    "cache": "has no current eval-YAML home; AgentV: use project or operator config if cache policy is needed "
             "(remove it, then migrate)",
    "skip_defaults": "means nothing for a whole suite and has no current home (remove it, then migrate)",
}
# Keys a current file keeps as they are (AgentV's current schema); the tests-era keys this
# migration moves; any other key has no current home that chatconv knows, and is refused.
_CURRENT_KEYS = frozenset((
    "$schema", "assert", "author", "category", "default_test", "defaults", "derived_metrics", "description", "env",
    "environment", "evaluate_options", "extensions", "governance", "license", "name", "nunjucks_filters",
    "output_path", "prompts", "providers", "requires", "scenarios", "tags", "tests", "threshold", "timeout_seconds",
    "version"))
_MOVED_KEYS = frozenset(("input", "input_files", "execution", "assertions", "target", "eval_cases"))
_CURRENT_CASE_KEYS = frozenset((
    "aggregation", "assert", "assert_scoring_function", "conversation_id", "criteria", "depends_on", "description",
    "environment", "execution", "id", "metadata", "mode", "on_dependency_failure", "on_turn_failure", "options",
    "prompts", "provider", "providers", "run", "suite", "threshold", "turns", "vars", "window_size"))
_MOVED_CASE_KEYS = frozenset(("input", "input_files", "expected_output", "assertions", "evaluators",
                              "expected_outcome", "note"))
_WORKSPACE = ("current AgentV rejects workspace in eval YAML: move testbed setup to `environment` and lifecycle "
              "hooks to `extensions`, local paths to --workspace-path or .agentv/config.local.yaml (AgentV's "
              "guide); rewrite it by hand, then migrate")
_ENV = ("tests-era env interpolation `${{ NAME }}` is written `{{ env.NAME }}` in the current era (AgentV's guide); "
        "chatconv renders no env, so the prompt would change: rewrite it by hand, then migrate")
_CASE_GRADERS = ("assertions", "evaluators")
_NAME = re.compile(r"[a-z0-9-]{1,64}")
_READS_CRITERIA = re.compile(r"\{\{-?\s*criteria\s*-?\}\}")


def detect(record):
    # A tests-era eval file has a case list; a case row of a JSONL or YAML case file (`id`,
    # `input`, ...) has none, and current AgentV still reads such rows as they are.
    if not in_era(record, "tests") or _case_list_key(record) is None:
        return None
    try:
        return next(_spots(record), None)
    except Exception:  # a shape the tests-era schema refuses: left to it
        return None


def _spots(record):
    """The JSON paths of what this migration changes, in file order."""
    # Suite input_files with no case to take them up (`tests: []`) mean the same in the current
    # era, which keeps the key: nothing moves.
    kept = () if _takes_suite_files(record) else ("input_files",)
    for key in ("$schema", "input", "input_files", "target", "execution", "assertions", "eval_cases"):
        if key in record and key not in kept and (key != "$schema" or in_era({"$schema": record[key]}, "tests")):
            yield (key,)
    for key in record:
        if key not in _CURRENT_KEYS and key not in kept:
            yield (key,)  # moved, or refused
    for path, _ in _inline_cases(record):
        yield path  # its input moves to vars (a case without one is refused)
    for path, grader in _graders(record):
        if current_type(grader) is not None:
            yield path


def _case_list_key(record):
    return "tests" if "tests" in record else "eval_cases" if "eval_cases" in record else None


def _graders(record):
    return graders([((), record)] + list(_inline_cases(record)))


def _inline_cases(record):
    return cases_in(record, _case_list_key(record))


# --- refusals: all checked before anything changes -------------------------------------------

def _refuse_homeless(record):
    execution = record.get("execution")
    if execution is not None and not isinstance(execution, dict):
        raise refusal(("execution",), "is not a mapping: fix it, then migrate")
    for key in execution or {}:
        if key in _NO_HOME:
            raise refusal(("execution", key), _NO_HOME[key])
        if key not in _SUITE_MOVES:
            raise refusal(("execution", key), "has no current eval-YAML home that chatconv knows (current AgentV "
                          "rejects a top-level execution): move or remove it, then migrate")
    if "target" in record and execution and ("target" in execution or "targets" in execution):
        raise refusal(("target",), "the suite names a target twice (here and in execution): keep one, then migrate")
    for key in ("providers", "threshold", "evaluate_options", "prompts", "assert", "default_test"):
        if key in record and (key != "assert" or "assertions" in record or execution):
            raise refusal((key,), "is a current-era key already, beside tests-era ones: finish the move by hand")
    if "tests" in record and "eval_cases" in record:
        raise refusal(("eval_cases",), "the file has tests too: keep one case list, then migrate")
    grader_sources = [k for k in ("assertions", "assert") if k in record] + [
        k for k in ("assertions", "assert", "evaluators") if k in (execution or {})]
    if len(grader_sources) > 1:
        raise refusal(("execution",) if execution and grader_sources[-1] in execution else (grader_sources[-1],),
                      f"the suite has graders in {' and '.join(grader_sources)}: AgentV runs them in an order "
                      "chatconv does not know; put them in one list, then migrate")
    for key, moved in ((k, _SUITE_MOVES[k]) for k in execution or {}):
        if moved == "providers":
            _refuse_targets(execution[key], ("execution", key))
        if key == "trials" and not isinstance(execution[key], (dict, int)):
            raise refusal(("execution", key), "is neither a count nor a mapping: fix it, then migrate")
        if key == "trials" and isinstance(execution[key], dict) and set(execution[key]) != {"count"}:
            other = next(k for k in execution[key] if k != "count")
            raise refusal(("execution", key, other), "current AgentV takes evaluate_options.repeat as a count "
                          "only (\"the repeat object shape has been removed\"): remove it, then migrate")
    name = record.get("name")
    if isinstance(name, str) and not _NAME.fullmatch(name):
        raise refusal(("name",), "AgentV's loader refuses a suite name that is not at most 64 lowercase letters, "
                      "digits and hyphens (v4.42.4 too): rename it, then migrate")
    for key in record:
        if key not in _CURRENT_KEYS and key not in _MOVED_KEYS:
            raise refusal((key,), _WORKSPACE if key == "workspace" else "has no current eval-YAML home that "
                          "chatconv knows (current AgentV refuses unknown keys): move or remove it, then migrate")
    for path, grader in _graders(record):
        if grader.get("type") in ("tool-trajectory", "tool_trajectory"):
            raise refusal(path + ("type",), "tool-trajectory is replaced by Promptfoo-compatible trajectory:* "
                          "assertions (trajectory:tool-used, trajectory:tool-sequence, trajectory:tool-args-match; "
                          "max_duration_ms has no equivalent): rewrite it by hand, then migrate")
        taken = set()
        for old, key in renamed_fields(grader):
            if key in grader or key in taken:
                raise refusal(path + (old,), f"the grader has {key!r} too, which current AgentV calls {old!r}: "
                              "keep one, then migrate")
            taken.add(key)
        if type_after(grader) == "llm-rubric" and not ({"value", "prompt"} & (set(grader) | taken)):
            raise refusal(path, "an llm grader with no prompt judged each test's criteria; current AgentV skips an "
                          "llm-rubric with no value (\"expected value or prompt\"): give it a value or remove it "
                          "(each test's criteria becomes a check of its own), then migrate")
        for index, item in enumerate(rubric_items(grader)):
            named = f"rubric item {item.get('id', index)!r}"
            if "required_min_score" in item and "min_score" in item:
                raise refusal(path + ("required_min_score",), f"{named} has min_score too, which current AgentV "
                              "takes in place of required_min_score: keep one, then migrate")
            if "required_min_score" in item and item_min_score(item) is None:
                raise refusal(path + ("required_min_score",), f"{named}: current AgentV takes min_score (0 to 1) in "
                              "its place, and an integer from 1 to 10 becomes its tenth; this is none (0 requires "
                              "nothing: remove it), then migrate")
        if future_scope(type_after(grader)):
            raise refusal(path + ("type",), f"current AgentV refuses the Promptfoo assertion type "
                          f"{type_after(grader)!r} (\"future scope in AgentV\"), even from a custom assertion of "
                          "that name: give the custom assertion another name (its .agentv/assertions file and "
                          "here), or use an assertion AgentV runs, then migrate")
        if grader.get("type") == "skill-trigger" and "value" in grader:
            raise refusal(path + ("value",), "a skill-trigger with a value: write it as skill-used by hand")
    _refuse_inputs(record)


def _refuse_targets(value, path):
    for index, target in enumerate(value if isinstance(value, list) else [value]):
        where = path + ((index,) if isinstance(value, list) else ())
        if isinstance(target, dict) and "use_target" in target:
            raise refusal(where + ("use_target",), "current AgentV rejects use_target: a target must be a concrete "
                          "provider object (or the id of one): rewrite it, then migrate")
        if isinstance(target, dict) and "name" in target and "id" in target:
            raise refusal(where + ("name",), "a target with both name and id: keep id, then migrate")
        if not isinstance(target, (str, dict)):
            raise refusal(where, "a target is an id or a provider object: fix it, then migrate")


def _refuse_inputs(record):
    """What the prompts of the current era cannot carry exactly."""
    suite = "input" in record  # an input written with no value too: it is refused below
    key = _case_list_key(record)
    cases = record.get(key) if key else None
    inline = list(_inline_cases(record))
    included = isinstance(cases, str) or any(isinstance(c, str) for c in cases or [] if isinstance(cases, list))
    if included and ("input" in record or "input_files" in record):
        where = ("input",) if "input" in record else ("input_files",)
        raise refusal(where, "a suite-level input with cases from another file: current AgentV renders such rows "
                      "through the file's prompts and drops their input_files, so their prompts would change; "
                      "write the suite input into the rows, then migrate")
    if included and inline:
        raise refusal((key,), "mixes included case files with inline cases: the inline cases need prompts, and "
                      "current AgentV would then render the included rows through them (dropping their "
                      "input_files); put all cases in one place, then migrate")
    if suite:
        _suite_messages(record["input"])  # refuses what is neither text nor messages
        for where, text in strings(record["input"], ("input",)):
            _refuse_unkept(where, text)
    for path, case in inline:
        for key in case:
            if key not in _CURRENT_CASE_KEYS and key not in _MOVED_CASE_KEYS:
                raise refusal(path + (key,), _WORKSPACE if key == "workspace" else "has no current home in a test "
                              "case that chatconv knows (current AgentV refuses unknown keys): move or remove it, "
                              "then migrate")
        if "vars" in case:
            raise refusal(path + ("vars",), "the case has vars already, beside tests-era keys: finish by hand")
        if "note" in case and "description" in case:
            raise refusal(path + ("note",), "the case has a description too, which a note becomes: keep one, "
                          "then migrate")
        if isinstance(case.get("id"), str) and TEMPLATE_SYNTAX.search(case["id"]):
            raise refusal(path + ("id",), "an id with template syntax ({{, {%, {#) would be rendered by current "
                          "AgentV: rename the case, then migrate")
        for key in _RENDERED_AGAIN:
            for where, text in strings(case.get(key), path + (key,)):
                _refuse_unkept(where, text)
        value = case.get("input")
        if value is None:
            raise refusal(path, "the case has no input (AgentV v3-v4.42 skips such a case): give it one or "
                          "remove it, then migrate")
        if not isinstance(value, (str, list)):
            raise refusal(path + ("input",), "an input that is neither text nor a message list: write it as "
                          "a message list, then migrate")
        if "input_files" in case and not isinstance(value, str):
            raise refusal(path + ("input_files",), "input_files with a message-list input: AgentV v3-v4.42 gives "
                          "this case no input; write the files as file parts of a message, then migrate")
        if suite and _applies_suite(case) is False:
            raise refusal(path + ("execution", "skip_defaults"), "this case skips the suite-level input, which "
                          "moves into the file's one prompt: give it a file of its own, then migrate")
        if suite and not isinstance(value, str):
            raise refusal(path + ("input",), "a message-list input after a suite-level input: one prompt cannot "
                          "splice a list of messages after the suite's; write the suite messages into this "
                          "input, then migrate")
        if "assertions" in case and "evaluators" in case:
            raise refusal(path + ("evaluators",), "the case has assertions too: put them in one list, then migrate")
        if "criteria" in case and any(key in case for key in _CASE_GRADERS):
            _refuse_unmovable_criteria(record, case, path)
        execution = case.get("execution")
        for where in ("target", "targets"):
            if isinstance(execution, dict) and where in execution:
                raise refusal(path + ("execution", where), "current AgentV keeps target selection out of test "
                              "cases: split target-specific cases into their own eval file (or use --target), "
                              "then migrate")
        for where in ("trials", "workers"):
            if isinstance(execution, dict) and where in execution:
                raise refusal(path + ("execution", where), "has no home in a current case's execution (use "
                              "run.repeat or the suite's evaluate_options): move it, then migrate")
        if isinstance(execution, dict) and sum(k in execution for k in ("assertions", "evaluators", "assert")) > 1:
            raise refusal(path + ("execution",), "graders in more than one list: put them in one, then migrate")


def _refuse_unmovable_criteria(record, case, path):
    """A case's criteria beside its own graders becomes their last check (current AgentV refuses
    the two together): not when it is no text, nor when a grader reads it as `{{ criteria }}`
    (AgentV's guide keeps criteria that graders share; it would then render empty)."""
    if not (isinstance(case["criteria"], str) and case["criteria"].strip()):
        raise refusal(path + ("criteria",), "criteria beside the case's graders becomes one of them, and this is "
                      "not text: write it as text or remove it, then migrate")
    graders = [case.get(key) for key in _CASE_GRADERS] + [record.get("assertions"), record.get("execution")]
    if _READS_CRITERIA.search(json.dumps(graders, default=str)):
        raise refusal(path + ("criteria",), "a grader reads the criteria ({{ criteria }}), which current AgentV "
                      "refuses beside the case's own graders: write the text into that grader (or give the case "
                      "no grader of its own), then migrate")


def _applies_suite(case):
    execution = case.get("execution")
    return not (isinstance(execution, dict) and execution.get("skip_defaults") is True)


def _suite_messages(value):
    """The suite-level input as messages (the tests era's shorthand: a string is one user message)."""
    if isinstance(value, str):
        return [{"role": "user", "content": value}]
    if isinstance(value, dict) and "role" in value:
        return [value]
    if isinstance(value, list) and all(isinstance(m, dict) and "role" in m and "content" in m for m in value):
        return value
    raise refusal(("input",), "a suite-level input that is not text or messages: fix it, then migrate")


def _refuse_unkept(path, text):
    """Refused for text that cannot stay literal through current AgentV's rendering."""
    if "${{" in text:
        raise refusal(path, _ENV)


# --- the rewrite -------------------------------------------------------------------------------

def upgrade(record):
    _refuse_homeless(record)
    declare_era(record, "tests", "current")
    if "eval_cases" in record:
        rename_key(record, "eval_cases", "tests")
    for _, grader in list(_graders(record)):
        rename_grader(grader)
    suite_files = record.get("input_files") if isinstance(record.get("input_files"), list) else None
    chat = _move_inputs(record)
    for _, case in _inline_cases(record):
        files = case.get("input_files") if "input_files" in case else suite_files if _applies_suite(case) else None
        _upgrade_case(case, files, chat)
    if "assertions" in record:
        rename_key(record, "assertions", "assert")
    if "target" in record:
        rename_key(record, "target", "providers", new_list_like(record, [record["target"]]))
    _move_execution(record)
    return record


def _move_inputs(record):
    """The file's prompts, in place of the suite's input (and input_files, which the cases take
    up). Whether the prompt is a chat whose last message's content is a case's input."""
    suite = "input" in record
    if not _takes_suite_files(record):
        if not suite:  # included case files are rendered as they are; input_files stay (see _spots)
            return False
    key = _case_list_key(record)
    if not suite:
        prompt = new_list_like(record, [quoted_like(record, PROMPT)])
    else:
        # As AgentV's guide moves a suite input: into default_test.vars, each message's content
        # rendered whole by the prompt. A var, unlike a prompt's own text, is rendered once.
        messages = _suite_messages(record["input"])
        names = ["suite_input"] if len(messages) == 1 else [f"suite_input_{n}" for n in range(1, len(messages) + 1)]
        variables = new_like(record, ((name, escaped_texts(m["content"])) for name, m in zip(names, messages)))
        chat = [new_like(record, {**m, "content": quoted_like(record, f"{{{{ {name} }}}}")}.items())
                for name, m in zip(names, messages)]
        chat.append(new_like(record, {"role": "user", "content": quoted_like(record, PROMPT)}.items()))
        prompt = new_list_like(record, [new_list_like(record, chat)])
    if suite:
        rename_key(record, "input", "prompts", prompt)
        insert_after(record, "prompts", "default_test", new_like(record, {"vars": variables}.items()))
    else:
        insert_before(record, key, "prompts", prompt)
    if "input_files" in record and _takes_suite_files(record):  # each case took them up
        del record["input_files"]
    return suite


def _takes_suite_files(record):
    """Whether an inline case is there to take up the suite's input_files (included cases with
    them are refused)."""
    return any(True for _ in _inline_cases(record))


def _upgrade_case(case, files, chat):
    """files: the input files the case's string input gets; chat: whether its input is the
    content of the prompt's last message (else the whole prompt)."""
    if "expected_outcome" in case and "criteria" not in case:
        rename_key(case, "expected_outcome", "criteria")
    for key in _RENDERED_AGAIN:
        if key in case:
            escaped = escaped_texts(case[key])
            if escaped is not case[key]:
                case[key] = escaped
    if files is not None and "input_files" not in case:  # the suite's: escaped here, for this case
        files = [escaped_texts(f) for f in files]
    if "note" in case:
        rename_key(case, "note", "description")
    if "input" in case:
        value = case["input"]
        if isinstance(value, str) and files:
            parts = new_list_like(case, [new_like(case, {"type": "file", "value": f}.items()) for f in files]
                                  + [new_like(case, {"type": "text", "value": value}.items())])
            value = parts if chat else new_list_like(case, [new_like(case, {"role": "user", "content": parts}.items())])
        variables = new_like(case, {"input": value}.items())
        move_comment(case, "input", variables, "input")
        rename_key(case, "input", "vars", variables)
    if "input_files" in case:
        del case["input_files"]
    if "expected_output" in case:  # every inline case has vars now: its input went there
        move_comment(case, "expected_output", case["vars"], "expected_output")
        case["vars"]["expected_output"] = case.pop("expected_output")
    for old in _CASE_GRADERS:
        if old in case:
            rename_key(case, old, "assert")
    if "criteria" in case and isinstance(case.get("assert"), list):
        # Current AgentV refuses a test's criteria beside its own assert; its guide and its own
        # migrated examples make the criteria the last check, a plain string (an llm-rubric).
        append_moving_comment(case, "criteria", case["assert"])
    execution = case.get("execution")
    if isinstance(execution, dict):
        for old in ("assertions", "evaluators"):
            if old in execution:
                rename_key(execution, old, "assert")
        for old in ("total_budget_usd", "totalBudgetUsd"):
            if old in execution and "budget_usd" not in execution:
                rename_key(execution, old, "budget_usd")


def _move_execution(record):
    """The suite's execution, key by key, to where the current era keeps each; then it goes."""
    execution = record.get("execution")
    if not isinstance(execution, dict):
        return
    moved = []  # (top-level key, value), in the order they come
    options = None
    for key in list(execution):
        new = _SUITE_MOVES[key]
        value = execution[key]
        if new == "providers":
            value = _providers(execution, key, value)
            existing = next((v for k, v in moved if k == "providers"), None)
            if existing is not None:
                existing.extend(value)
                continue
        elif new in _EVALUATE_OPTIONS:
            if options is None:
                options = new_like(execution)
                moved.append(("evaluate_options", options))
            options[new] = _repeat(value) if new == "repeat" else value
            move_comment(execution, key, options, new)
            continue
        moved.append((new, value))
        move_comment(execution, key, record, new)
    if not moved:
        del record["execution"]
        return
    first_key, first_value = moved[0]
    rename_key(record, "execution", first_key, first_value)
    anchor = first_key
    for key, value in moved[1:]:
        insert_after(record, anchor, key, value)
        anchor = key


def _providers(execution, key, value):
    """A target or a list of them as a list of providers; a target object's `name` is its `id`."""
    made = value if isinstance(value, list) else new_list_like(execution, [value])
    for target in made:
        if isinstance(target, dict) and "name" in target:
            rename_key(target, "name", "id")
    return made


def _repeat(trials):
    """execution.trials as evaluate_options.repeat: its count (anything else was refused)."""
    return trials if isinstance(trials, int) else trials["count"]
