"""The `tests` era (AgentV v3 to v4.42, 2026-02 to 2026-06): cases under `tests` (a list, or a
path or `file://` reference to a YAML or JSONL case file), each with `id`, `criteria`, `input`
(a string is one user message, else a message list), `input_files`, `expected_output` and
`assertions`; a suite may give `input`, `assertions`, `execution` and `workspace` for all."""

NAME = "tests"
TITLE = "AgentV v3 to v4.42 (2026-02 to 2026-06): tests with input, criteria and assertions"
SCHEMA = "eval-tests"
CONFIG_SCHEMA = "config-tests"
SCHEMA_IDS = ("chatconv-eval-tests",)
CASE_LISTS = ("tests",)
MARKED_BY = "`tests` (older: `eval_cases` beside `input`, `assertions`, `workspace`)"  # for `chatconv schema`
LAST_RELEASE = "v4.42.4"  # the era's last AgentV release, whose verdicts chatconv gives (keys it removed are errors)
# Top-level keys only this era (among those before the current one) has, beside its case list.
MARKS = ("input", "input_files", "assertions", "workspace")


def detect(data: dict) -> bool:
    # A case list marks an eval file: AgentV's result rows and case rows have `input` and
    # `assertions` too. `eval_cases` was this era's older name of `tests`.
    return "tests" in data or ("eval_cases" in data and any(key in data for key in MARKS))
