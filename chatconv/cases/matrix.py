"""Promptfoo's matrix, as the current era (current.py) makes cases of a test's vars: each var
whose value is a non-empty list of strings makes one case per string, the lists multiplied.
A few lines of YAML can ask for billions, so the cases are made one at a time and counted first
(a file makes at most MAX_CASES).
"""

from __future__ import annotations

import itertools
import math
from typing import Iterator

MAX_CASES = 100_000  # the cases one eval file may make: 30 lists of 30 strings would make 30**30


def _expansion_keys(variables: dict) -> list[str]:
    return [k for k, v in variables.items() if isinstance(v, list) and v and all(isinstance(x, str) for x in v)]


def expansion_count(variables: dict) -> int:
    """How many vars objects array_expansions makes of `variables`."""
    return math.prod(len(variables[key]) for key in _expansion_keys(variables))


def array_expansions(variables: dict) -> Iterator[dict]:
    """Promptfoo's matrix: each var whose value is a non-empty list of strings makes one vars
    object per string (a cartesian product over such vars); other vars stay as they are. Made
    one at a time: their number is the product of the lists' lengths (expansion_count)."""
    keys = _expansion_keys(variables)
    if not keys:
        yield variables
        return
    for combo in itertools.product(*(variables[k] for k in keys)):
        yield {**variables, **dict(zip(keys, combo))}
