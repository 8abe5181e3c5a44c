"""Older spellings of eval files that migration 0003 upgrades to the `evalcases` era.

`testcases` (one `messages` list whose trailing assistant message is the expected answer),
`tests` / `cases` / `eval_cases` for the case list, and in a case `input`, `expected_output`,
`expected_outcome`, `criteria`. They are read as upgraded (validate warns, naming the
migration); `chatconv migrate` rewrites them.
"""

from __future__ import annotations

from typing import Any

NAME = "spellings"
SCHEMA = "eval-file"
CASE_LISTS = ("testcases", "tests", "cases", "eval_cases")


def detect(data: Any) -> bool:
    return isinstance(data, dict) and "evalcases" not in data and any(key in data for key in CASE_LISTS)
