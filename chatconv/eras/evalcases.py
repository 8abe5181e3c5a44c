"""The `evalcases` era (AgentV v2, `$schema: agentv-eval-v2`): the internal shape itself.

Cases under `evalcases`, each with `id`, `outcome`, `input_messages`, `expected_messages?`,
`execution?`, `metadata?` (SPEC §1). Every later stage (validate's checks across a file,
prompt) reads eval files in this shape.
"""

from __future__ import annotations

from typing import Any, Iterator

NAME = "evalcases"
SCHEMA = "eval-file"
CASE_LIST = "evalcases"
CASE_LISTS = (CASE_LIST,)


def detect(data: Any) -> bool:
    return isinstance(data, dict) and CASE_LIST in data


def iter_cases(data: Any) -> Iterator[tuple[tuple, dict]]:
    """(JSON path, case) for each case that is an object; anything else is the schema's to report."""
    cases = data.get(CASE_LIST) if isinstance(data, dict) else None
    if isinstance(cases, list):
        for index, case in enumerate(cases):
            if isinstance(case, dict):
                yield (CASE_LIST, index), case
