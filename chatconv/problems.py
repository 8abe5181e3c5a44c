"""One Problem type for everything chatconv reports, and the one exception family it raises."""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass
from typing import Iterable, Literal

Severity = Literal["error", "warning"]
PathPart = str | int

_IDENTIFIER = re.compile(r"^[A-Za-z_$][A-Za-z0-9_$-]*$")


def json_path(parts: Iterable[PathPart]) -> str:
    """`("evalcases", 0, "id")` -> `$.evalcases[0].id`; odd keys are quoted."""
    out = ["$"]
    for part in parts:
        if isinstance(part, int):
            out.append(f"[{part}]")
        elif _IDENTIFIER.match(part):
            out.append(f".{part}")
        else:
            out.append("[" + repr(part) + "]")
    return "".join(out)


@dataclass(frozen=True, slots=True)
class Problem:
    """Where (file, line, column, JSON path), what, how bad, and how to fix it."""

    file: str
    line: int | None
    column: int | None
    path: str
    message: str
    severity: Severity = "error"
    hint: str | None = None

    @property
    def is_error(self) -> bool:
        return self.severity == "error"

    def to_dict(self) -> dict:
        return asdict(self)

    def format_text(self) -> str:
        where = f"{self.file}:{self.line or 1}:{self.column or 1}"
        text = f"{where}: {self.severity}: {self.path}: {self.message}"
        return f"{text} ({self.hint})" if self.hint else text


class ChatconvError(Exception):
    """Bad input the user can fix; carries the problems that say where and why."""

    def __init__(self, problems: Problem | list[Problem]):
        self.problems = [problems] if isinstance(problems, Problem) else list(problems)
        super().__init__("\n".join(p.format_text() for p in self.problems))


class UnreadableInput(ChatconvError):
    """The input could not be read at all (missing, a folder, no permission): exit status 2."""
