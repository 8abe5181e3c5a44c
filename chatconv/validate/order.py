"""Problems handed on sorted by place (file, line, column) while a file is still being read.

Most problems are found in order: a line's own come with it. The few found later than the
lines they are about (a tool call never answered, told when its conversation ends or leaves
the window) would otherwise come after later lines' problems. PlaceOrder holds a file's
problems and lets go of those no later one can precede: the caller says, now and then, from
which line on problems may still be found (the record being read, or an earlier tool call
still waiting for its result). Memory: the problems held behind the earliest such call.
Problems a worker wrote come as blocks of a batch's (see rendered), kept whole where they can.
"""

from __future__ import annotations

from collections import deque
from heapq import heappop, heappush
from itertools import count
from typing import Iterator

from ..problems import Problem
from .rendered import ProblemBlock

CHECK_EVERY = 256  # problems held before the caller is asked where it is (see due)


class PlaceOrder:
    """A file's problems, released sorted by place, those of one place in the order found (so
    that the output is the same whatever the order batches were checked in).

    Most come in order: they queue in `_run` (a problem whose place is not before the end of
    the last one queued), and only the others go on the heap; a release merges the two. A
    ProblemBlock (a batch's problems, written by a worker; see rendered) is one item of the run,
    split where a problem of the heap comes between its problems."""

    __slots__ = ("_run", "_held", "_found", "_check_at", "_size", "_end")

    def __init__(self) -> None:
        self._run: deque[tuple[tuple[str, int, int], int, Problem | ProblemBlock]] = deque()  # in order of place
        self._held: list[tuple[tuple[str, int, int], int, Problem | ProblemBlock]] = []  # a heap
        self._found = count()
        self._check_at = CHECK_EVERY
        self._size = 0  # problems held (a block holds many)
        self._end: tuple[str, int, int] | None = None  # the place of the last problem queued in the run

    def __len__(self) -> int:
        return self._size

    def add(self, problem: Problem) -> None:
        self._size += 1
        place = problem.place
        if not self._run or place >= self._end:
            self._run.append((place, next(self._found), problem))
            self._end = place
        else:
            heappush(self._held, (place, next(self._found), problem))

    def add_block(self, block: ProblemBlock) -> None:
        """A batch's problems, found before any later problem of its lines (they are the lines'
        own: those found across lines come after them at one place)."""
        self._size += len(block)
        first = block.first
        if not self._run or first >= self._end:
            self._run.append((first, next(self._found), block))
            self._end = block.last
        else:  # not met: a batch comes after the places of every problem found before it
            for _ in range(len(block)):
                one, block = block.split(1)
                heappush(self._held, (one.first, next(self._found), one))

    def due(self) -> bool:
        """Whether enough is held to be worth a release (finding `before` costs the caller)."""
        return len(self) >= self._check_at

    def release(self, file: str, before: int) -> Iterator[Problem | ProblemBlock]:
        """The problems held that come before line `before` of `file`: no problem found later
        may precede them."""
        yield from self._before((file, before, 0))
        # Held back still (behind an early open call, say): ask again when twice as many are held.
        self._check_at = max(CHECK_EVERY, 2 * len(self))

    def drain(self) -> Iterator[Problem | ProblemBlock]:
        """Every problem held, in order: the file is read."""
        yield from self._before(None)
        self._check_at = CHECK_EVERY

    def _before(self, limit: tuple[str, int, int] | None) -> Iterator[Problem | ProblemBlock]:
        """The problems held whose place is before `limit` (None: all), the run and the heap merged."""
        run, held = self._run, self._held
        while run and (limit is None or run[0][0] < limit):
            while held and held[0] < run[0]:  # (place, order found): the heap's first comes first
                yield self._taken(heappop(held)[2])
            first = run[0][2]
            if first.__class__ is ProblemBlock:
                # Its problems up to the heap's first (found later: after those at its place), and before limit.
                size = len(first)
                if held:
                    size = first.count_before(held[0][0], inclusive=True)
                if limit is not None:
                    size = min(size, first.count_before(limit, inclusive=False))
                size = max(size, 1)  # the block's first comes before both (tested above): never an empty split
                if size < len(first):  # the rest stays first in the run
                    first, rest = first.split(size)
                    run[0] = (rest.first, run[0][1], rest)
                    yield self._taken(first)
                    continue
            run.popleft()
            yield self._taken(first)
        if not run:
            self._end = None
        while held and (limit is None or held[0][0] < limit):
            yield self._taken(heappop(held)[2])

    def _taken(self, item: Problem | ProblemBlock) -> Problem | ProblemBlock:
        self._size -= 1 if item.__class__ is Problem else len(item)
        return item
