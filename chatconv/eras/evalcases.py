"""The `evalcases` era (AgentV v2, `$schema: agentv-eval-v2`, 2025-11 to 2026-02): the internal
shape of SPEC §1 that every later stage reads.

Cases under `evalcases`, each with `id`, `outcome`, `input_messages`, `expected_messages?`,
`execution?`, `metadata?`. `eval_cases` and `cases` are older spellings of the case list that
migration 0003 renames.
"""

NAME = "evalcases"
TITLE = "AgentV v2 (2025-11 to 2026-02): evalcases with input_messages and outcome"
SCHEMA = "eval-file"
CONFIG_SCHEMA = "config"
SCHEMA_IDS = ("agentv-eval-v2", "chatconv-eval-evalcases")
CASE_LIST = "evalcases"
CASE_LISTS = (CASE_LIST, "eval_cases", "cases")
MARKED_BY = "`evalcases` (older: `eval_cases`, `cases`)"  # for `chatconv schema`


def detect(data: dict) -> bool:
    return any(key in data for key in CASE_LISTS)
