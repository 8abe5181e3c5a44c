"""The current era (AgentV since 2026-07, aligned with Promptfoo's config): `prompts` rendered
with each test's `vars` (Nunjucks templates), `providers`, `tests[].vars` and `assert`,
`default_test`, `evaluate_options`, `environment`."""

NAME = "current"
TITLE = "AgentV since 2026-07 (Promptfoo-aligned): prompts x tests[].vars, assert"
SCHEMA = "eval-current"
CONFIG_SCHEMA = "config-current"
SCHEMA_IDS = ("chatconv-eval-current",)
CASE_LISTS = ("tests",)
MARKED_BY = ("`prompts`, `default_test`, `evaluate_options` or `scenarios`; `tests` beside `providers`, "
             "`environment`, `extensions` or `assert`; tests with `vars`")  # for `chatconv schema`
# Top-level keys that appeared with this era and only an eval file has.
MARKS = ("prompts", "default_test", "evaluate_options", "scenarios")
# Keys of this era that AgentV's other files have too (`.agentv/providers.yaml`, assertion
# templates, environment files): they mark an eval file only beside a case list.
SHARED_MARKS = ("providers", "environment", "extensions", "assert")


def detect(data: dict) -> bool:
    if "id" in data:
        return False  # a case row of a case file, not a suite
    if any(key in data for key in MARKS):
        return True
    tests = data.get("tests")
    if tests is not None and any(key in data for key in SHARED_MARKS):
        return True
    return isinstance(tests, list) and any(isinstance(t, dict) and "vars" in t for t in tests)
