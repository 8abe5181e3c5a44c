"""The current era (AgentV since 2026-07, aligned with Promptfoo's config): `prompts` rendered
with each test's `vars` (Nunjucks templates), `providers`, `tests[].vars` and `assert`,
`default_test`, `evaluate_options`, `environment`."""

NAME = "current"
TITLE = "AgentV since 2026-07 (Promptfoo-aligned): prompts x tests[].vars, assert"
SCHEMA = "eval-current"
CONFIG_SCHEMA = "config-current"
SCHEMA_IDS = ("chatconv-eval-current",)
CASE_LISTS = ("tests",)
# Top-level keys that appeared with this era.
MARKS = ("prompts", "providers", "default_test", "evaluate_options", "environment", "extensions", "assert")


def detect(data: dict) -> bool:
    if any(key in data for key in MARKS):
        return True
    tests = data.get("tests")
    return isinstance(tests, list) and any(isinstance(t, dict) and "vars" in t for t in tests)
