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


# What only a tests-era file writes: the keys of the tests era that this era's schema marks
# removed (`removed` in eval-current.json), at the top and in a test; a key this era accepts
# (`input_files`, `criteria`) never says so.
TESTS_ERA_SUITE_KEYS = ("input", "assertions", "execution", "workspace", "target", "eval_cases", "preprocessors")
TESTS_ERA_CASE_KEYS = ("input", "expected_output", "assertions", "evaluators")


def detect(data: dict) -> bool:
    if "id" in data:
        return False  # a case row of a case file, not a suite
    if any(key in data for key in MARKS):
        return True
    tests = data.get("tests")
    inline = [t for t in tests if isinstance(t, dict)] if isinstance(tests, list) else []
    # `assert` beside tests was also the tests era's alias of `assertions` (v3.8), and `vars` a
    # test's key since v4.30: a tests-era key tells a file of that era.
    written_then = (any(key in data for key in TESTS_ERA_SUITE_KEYS)
                    or any(key in t for t in inline for key in TESTS_ERA_CASE_KEYS))
    if written_then:
        return False
    return any("vars" in t for t in inline) or (tests is not None and any(key in data for key in SHARED_MARKS))
