"""AgentV's `${{ NAME }}` in eval files of the `tests` era (v3 to v4.42): before AgentV reads
such a file, every string in it has each `${{ NAME }}` replaced by the environment variable
NAME, or by nothing where NAME is unset (so `criteria: "${{ UNSET }}"` is an empty criteria,
which AgentV refuses). chatconv checks, and builds the prompts of, what AgentV then reads.
"""

from __future__ import annotations

import os
import re
from dataclasses import replace
from typing import Any, Mapping

from ..sources import Record

_REFERENCE = re.compile(r"\$\{\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*\}\}")


def with_environment(record: Record, environ: Mapping[str, str] | None = None) -> Record:
    """The record as AgentV reads it once the environment is put in; the record itself when it
    names no variable (its positions hold either way: no key or list changes)."""
    environ = os.environ if environ is None else environ
    data = _put_in(record.data, environ)
    return record if data is record.data else replace(record, data=data)


def _put_in(value: Any, environ: Mapping[str, str]) -> Any:
    """`value` with each string's references replaced; the same object where nothing changed."""
    if isinstance(value, str):
        return _REFERENCE.sub(lambda match: environ.get(match.group(1), ""), value) if "${{" in value else value
    if isinstance(value, dict):
        changed = {key: _put_in(item, environ) for key, item in value.items()}
        return value if all(changed[key] is item for key, item in value.items()) else changed
    if isinstance(value, list):
        changed_list = [_put_in(item, environ) for item in value]
        return value if all(new is old for new, old in zip(changed_list, value)) else changed_list
    return value
