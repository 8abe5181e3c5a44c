"""Problems written in the workers: a batch's own problems as the lines the output prints.

A legacy recording warns on every line, and a Problem costs the main process more than the
line's check costs a worker: made again from the wire, counted, held in order, formatted and
written, about 5 µs each. With a Rendering, a worker formats its batch's problems once (as
text lines, or as the JSON output's objects) and hands them back as one ProblemBlock, with
what the main process still needs of each: its place (to merge the few problems found across
lines, see order.PlaceOrder) and its code (to count, and for --max-warnings). The output is
the same bytes as the problems' own: a block holds exactly what Problem.format_text or
Problem.to_dict gives.
"""

from __future__ import annotations

from array import array
from bisect import bisect_left, bisect_right
from collections import Counter
from dataclasses import dataclass, replace
from typing import Callable, Iterator

import orjson

from ..handback import hand_back
from ..problems import Problem, printable, shown_name


RENDERED_FORMATS = (None, "text", "json")  # what Validator.render takes (None: no block)


@dataclass(frozen=True)
class Rendering:
    """How the workers write their problems: `format` "text" (a line per problem, as
    Problem.format_text) or "json" (its object, as Problem.to_dict), and `keep` the problems to
    report (--select / --ignore; None: all), the others counted as ignored."""

    format: str
    keep: Callable[[Problem], bool] | None = None


def _key(line: int | None, column: int | None) -> int:
    """A place in a file as one integer, ordered as (line, column) are (Problem.place)."""
    return (line or 0) << 32 | (column or 0)


class ProblemBlock:
    """Problems of one file, in order of place, as written: problems lo..hi-1 of a batch's
    (a block is split, sharing its arrays, when a problem found across lines comes between)."""

    __slots__ = ("file", "text", "ends", "keys", "codes", "table", "lo", "hi")

    def __init__(self, file: str, text: bytes, ends: array, keys: array, codes: array, table: tuple,
                 lo: int = 0, hi: int | None = None):
        self.file = file
        self.text = text  # each problem's line, with its newline
        self.ends = ends  # where each problem's line ends in `text`
        self.keys = keys  # each problem's place (_key)
        self.codes = codes  # each problem's (code, severity), as an index into `table`
        self.table = table
        self.lo, self.hi = lo, len(keys) if hi is None else hi

    def __len__(self) -> int:
        return self.hi - self.lo

    def place(self, index: int) -> tuple[str, int, int]:
        key = self.keys[index]
        return self.file, key >> 32, key & 0xFFFFFFFF

    @property
    def first(self) -> tuple[str, int, int]:
        return self.place(self.lo)

    @property
    def last(self) -> tuple[str, int, int]:
        return self.place(self.hi - 1)

    def count_before(self, place: tuple[str, int, int], inclusive: bool) -> int:
        """How many of the block's problems come before `place` (or at it, when `inclusive`)."""
        file = place[0]
        if file != self.file:
            return len(self) if self.file < file else 0
        find = bisect_right if inclusive else bisect_left
        return find(self.keys, _key(place[1], place[2]), self.lo, self.hi) - self.lo

    def split(self, count: int) -> tuple[ProblemBlock, ProblemBlock]:
        """The first `count` problems and the rest, as two blocks."""
        middle = self.lo + count
        return (ProblemBlock(self.file, self.text, self.ends, self.keys, self.codes, self.table, self.lo, middle),
                ProblemBlock(self.file, self.text, self.ends, self.keys, self.codes, self.table, middle, self.hi))

    def _start(self) -> int:
        """Where the block's first line starts in `text`."""
        return self.ends[self.lo - 1] if self.lo else 0

    def written(self) -> bytes:
        """The block's lines, as the output prints them."""
        return self.text[self._start():self.ends[self.hi - 1]] if self.hi > self.lo else b""

    def lines(self) -> Iterator[tuple[str, str, bytes]]:
        """(code, severity, line) of each problem, in order."""
        text, ends, codes, table = self.text, self.ends, self.codes, self.table
        start = self._start()
        for index in range(self.lo, self.hi):
            end = ends[index]
            code, severity = table[codes[index]]
            yield code, severity, text[start:end]
            start = end

    def severities(self) -> Counter:
        """{(code, severity): problems} of the block."""
        return Counter({self.table[index]: count for index, count in Counter(self.codes[self.lo:self.hi]).items()})


def _text_line(problem: Problem) -> bytes:
    return (problem.format_text() + "\n").encode()


def _json_line(problem: Problem) -> bytes:
    return orjson.dumps(problem.to_dict()) + b"\n"  # orjson writes no newline in a value


_WRITERS = {"text": _text_line, "json": _json_line}


def _text_pieces(problem: Problem) -> tuple[bytes, bytes, bytes]:
    """What _text_line writes of `problem` before its line, between line and column, and after."""
    head = printable(shown_name(problem.file)).encode() + b":"  # as Problem.where writes it
    return head, b":", _text_line(replace(problem, line=1, column=1))[len(head) + 3:]  # after "1:1"


def _json_pieces(problem: Problem) -> tuple[bytes, bytes, bytes]:
    """What _json_line writes of `problem` before its line, between line and column, and after."""
    head = orjson.dumps({"file": shown_name(problem.file)})[:-1] + b',"line":'
    before_tail = len(head) + len(b'1,"column":1')
    return head, b',"column":', _json_line(replace(problem, line=1, column=1))[before_tail:]


_PIECES = {"text": _text_pieces, "json": _json_pieces}


class BlockWriter:
    """A batch's problems written into a block, in the order given (the order of place, as the
    main process would have found them); those the rendering leaves out counted as ignored."""

    def __init__(self, file: str, rendering: Rendering):
        self.file = file
        self.format = rendering.format
        self.write = _WRITERS[rendering.format]
        self._warning: Problem | None = None  # the last warning take_at wrote, and its pieces
        self._pieces: tuple[bytes, bytes, bytes] = (b"", b"", b"")
        self.keep = rendering.keep
        self.lines: list[bytes] = []
        self.keys = array("q")
        self.codes = array("H")
        self.table: dict[tuple[str | None, str], int] = {}
        self.ignored = 0

    def take(self, problems: tuple[Problem, ...]) -> tuple[Problem, ...]:
        """Writes `problems` into the block; gives back those it cannot hold, which stay
        Problems: of another file, before the last place written (an eval file's cases read
        from the file itself are at other lines: a block is in order of place), not UTF-8."""
        left = ()
        keys = self.keys
        for problem in problems:
            if self.keep is not None and not self.keep(problem):
                self.ignored += 1
                continue
            key = _key(problem.line, problem.column)
            try:
                in_order = problem.file == self.file and not (keys and key < keys[-1])
                line = self.write(problem) if in_order else None
            except (UnicodeEncodeError, TypeError):  # a lone surrogate: text cannot encode it, orjson refuses it
                line = None
            if line is None:
                left += (problem,)
                continue
            self.lines.append(line)
            keys.append(key)
            code = (problem.code, problem.severity)
            self.codes.append(self.table.setdefault(code, len(self.table)))
        return left

    def take_at(self, warning: Problem, line: int, column: int) -> bool:
        """Writes `warning` (a Problem of no place) at `line` and `column` (from 1) into the block,
        as take would write the Problem there, without making it: a legacy file has one on every
        line. False when it cannot (see take): the caller makes the Problem."""
        key = _key(line, column)
        if self.keep is not None or (self.keys and key < self.keys[-1]):
            # A filter is given Problems; a place out of order is take's to settle.
            return not self.take((warning.at(line, column),))
        if warning is not self._warning:
            try:
                self._pieces = _PIECES[self.format](warning)
            except (UnicodeEncodeError, TypeError):  # as in take
                return False
            self._warning = warning
            self.table.setdefault((warning.code, warning.severity), len(self.table))
        head, middle, tail = self._pieces
        self.lines.append(b"%s%d%s%d%s" % (head, line, middle, column, tail))
        self.keys.append(key)
        self.codes.append(self.table[warning.code, warning.severity])
        return True

    def wire(self) -> tuple | None:
        """The block as it goes back to the main process (see from_wire); None when empty and
        nothing was ignored."""
        if not self.lines and not self.ignored:
            return None
        ends, end = array("q"), 0
        for line in self.lines:
            end += len(line)
            ends.append(end)
        return (hand_back(b"".join(self.lines)), ends, self.keys, self.codes,
                tuple(self.table), self.ignored)


def from_wire(file: str, wire: tuple) -> tuple[ProblemBlock | None, int]:
    """The block a BlockWriter sent (None when it held no problem), and how many it ignored."""
    text, ends, keys, codes, table, ignored = wire
    return (ProblemBlock(file, text, ends, keys, codes, table) if keys else None), ignored
