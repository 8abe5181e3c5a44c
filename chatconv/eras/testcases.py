"""The `testcases` era (AgentV v1, 2025-11): cases under `testcases`, each with one `messages`
list whose trailing assistant message is the expected answer."""

NAME = "testcases"
TITLE = "AgentV v1 (2025-11): testcases, one messages list per case"
SCHEMA = "eval-testcases"
CONFIG_SCHEMA = "config"
SCHEMA_IDS = ("agentv-eval-v1", "chatconv-eval-testcases")
CASE_LISTS = ("testcases",)
MARKED_BY = "`testcases`"  # for `chatconv schema`


def detect(data: dict) -> bool:
    return "testcases" in data
