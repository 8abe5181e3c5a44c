"""Older spellings of eval files that migration 0003 upgrades to the `evalcases` era.

`testcases` (one `messages` list whose trailing assistant message is the expected answer),
`tests` / `cases` / `eval_cases` for the case list, and in a case `input`, `expected_output`,
`expected_outcome`, `criteria`. They are read as upgraded (validate warns, naming the
migration); `chatconv migrate` rewrites them.
"""

from __future__ import annotations

from typing import Any

from ..kinds import CASE_LIST_KEYS

NAME = "spellings"
SCHEMA = "eval-file"
CASE_LISTS = tuple(key for key in CASE_LIST_KEYS if key != "evalcases")


def detect(data: Any) -> bool:
    return isinstance(data, dict) and "evalcases" not in data and any(key in data for key in CASE_LISTS)


def to_internal(data: Any) -> Any:
    from ..migrate import upgrade_record  # here: commands start without the migrations loaded

    upgraded, _ = upgrade_record(data, SCHEMA)
    return upgraded
