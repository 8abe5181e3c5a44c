"""CSV case files (AgentV's parseCsvCases, after Promptfoo): the header names each column.

`id` (default `row-N`), `input` (with `__prefix` / `__suffix` around it), `vars.a.b` (a nested
var), `__expected` / `__expectedN` (an assertion, kept as written), `__description` (criteria),
`__metadata:k` (metadata), other `__` columns kept as they are under their names; any other
column is a var. Quoted cells follow RFC 4180; a BOM is removed.
"""

from __future__ import annotations

import csv
import io
from typing import Iterator

from ..problems import ChatconvError, Problem
from ..sources import decode_utf8
from . import Source


def read_csv_cases(data: bytes, file: str) -> Iterator[tuple[dict, Source] | Problem]:
    """(case, where it is written) for each row, or the problems of the file."""
    try:
        text = decode_utf8(data, file).removeprefix("\ufeff")
    except ChatconvError as exc:
        yield exc.problems[0]
        return
    # strict: an unclosed quote is an error, not a cell that runs to the end of the file
    reader = csv.reader(io.StringIO(text, newline=""), strict=True)
    try:
        header = next(reader, None)
    except csv.Error as exc:
        yield Problem(file, 1, 1, "$", f"invalid CSV: {exc}", "error", "fix the quoting of the header", "case-file")
        return
    if not header:
        yield Problem(file, 1, 1, "$", "the case file holds no case", "warning", None, "case-file")
        return
    clash = _clashing_vars(header)
    if clash:
        yield Problem(file, 1, 1, "$", f"the columns {clash[0]!r} and {clash[1]!r} both set a var (one inside the "
                      "other, or the same one)", "error", "keep one of the columns, or rename one", "case-file")
        return
    row_number = 0
    while True:
        line = reader.line_num + 1
        try:
            row = next(reader)
        except StopIteration:
            return
        except csv.Error as exc:
            yield Problem(file, line, 1, "$", f"invalid CSV: {exc}", "error", "fix the quoting of this row",
                          "case-file")
            return
        if not any(cell.strip() for cell in row):
            continue
        row_number += 1
        case = _case(dict(zip(header, row)), row_number)
        yield case, Source(file, lambda path, line=line: (line, 1))


def _case(cells: dict[str, str], number: int) -> dict:
    case: dict = {"id": cells.get("id") or f"row-{number}"}
    variables: dict = {}
    for name, cell in cells.items():
        if name in ("id", "__prefix", "__suffix"):
            continue
        if name == "input":
            case["input"] = cells.get("__prefix", "") + cell + cells.get("__suffix", "")
        elif name.startswith("vars."):
            _put(variables, name[len("vars."):].split("."), cell)
        elif name.startswith("__expected"):
            if cell:
                case.setdefault("assert", []).append(cell)
        elif name == "__description":
            case["criteria"] = cell
        elif name.startswith("__metadata:"):
            key = name[len("__metadata:"):]
            if key.endswith("[]"):
                case.setdefault("metadata", {})[key[:-2]] = [part.strip() for part in cell.split(",") if part.strip()]
            else:
                case.setdefault("metadata", {})[key] = cell
        elif name.startswith("__"):
            case[name] = cell
        else:
            variables[name] = cell
    if variables:
        case["vars"] = variables
    return case


def _clashing_vars(header: list[str]) -> tuple[str, str] | None:
    """Two columns that set the same var, or a var and a var inside it (`vars.a`, `vars.a.b`)."""
    seen: list[tuple[tuple, str]] = []
    for name in header:
        if name in ("id", "input") or name.startswith("__"):
            continue
        keys = tuple(name[len("vars."):].split(".")) if name.startswith("vars.") else (name,)
        for other, other_name in seen:
            if keys[:len(other)] == other or other[:len(keys)] == keys:
                return other_name, name
        seen.append((keys, name))
    return None


def _put(target: dict, keys: list[str], value: str) -> None:
    for key in keys[:-1]:
        target = target.setdefault(key, {})
    target[keys[-1]] = value
