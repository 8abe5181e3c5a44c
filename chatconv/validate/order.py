"""Problems handed on sorted by place (file, line, column) while a file is still being read.

Most problems are found in order: a line's own come with it. The few found later than the
lines they are about (a tool call never answered, told when its conversation ends or leaves
the window) would otherwise come after later lines' problems. PlaceOrder holds a file's
problems and lets go of those no later one can precede: the caller says, now and then, from
which line on problems may still be found (the record being read, or an earlier tool call
still waiting for its result). Memory: the problems held behind the earliest such call.
"""

from __future__ import annotations

from collections import deque
from heapq import heappop, heappush
from itertools import count
from typing import Iterator

from ..problems import Problem

CHECK_EVERY = 256  # problems held before the caller is asked where it is (see due)


class PlaceOrder:
    """A file's problems, released sorted by place, those of one place in the order found (so
    that the output is the same whatever the order batches were checked in).

    Most come in order: they queue in `_run` (a problem whose place is not before the last one
    queued), and only the others go on the heap; a release merges the two."""

    __slots__ = ("_run", "_held", "_found", "_check_at")

    def __init__(self) -> None:
        self._run: deque[tuple[tuple[str, int, int], int, Problem]] = deque()  # in order of place
        self._held: list[tuple[tuple[str, int, int], int, Problem]] = []  # a heap
        self._found = count()
        self._check_at = CHECK_EVERY

    def __len__(self) -> int:
        return len(self._run) + len(self._held)

    def add(self, problem: Problem) -> None:
        place = problem.place
        run = self._run
        if not run or place >= run[-1][0]:
            run.append((place, next(self._found), problem))
        else:
            heappush(self._held, (place, next(self._found), problem))

    def due(self) -> bool:
        """Whether enough is held to be worth a release (finding `before` costs the caller)."""
        return len(self) >= self._check_at

    def release(self, file: str, before: int) -> Iterator[Problem]:
        """The problems held that come before line `before` of `file`: no problem found later
        may precede them."""
        yield from self._before((file, before, 0))
        # Held back still (behind an early open call, say): ask again when twice as many are held.
        self._check_at = max(CHECK_EVERY, 2 * len(self))

    def drain(self) -> Iterator[Problem]:
        """Every problem held, in order: the file is read."""
        yield from self._before(None)
        self._check_at = CHECK_EVERY

    def _before(self, limit: tuple[str, int, int] | None) -> Iterator[Problem]:
        """The problems held whose place is before `limit` (None: all), the run and the heap merged."""
        run, held = self._run, self._held
        while run and (limit is None or run[0][0] < limit):
            while held and held[0] < run[0]:  # (place, order found): the heap's first comes first
                yield heappop(held)[2]
            yield run.popleft()[2]
        while held and (limit is None or held[0][0] < limit):
            yield heappop(held)[2]
