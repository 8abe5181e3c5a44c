"""Bytes that worker processes hand back to the main process through memory shared with them
(hand_back), not down the pipe of their results: for the tasks whose result is mostly bytes (the
lines an import worker made of its batch). workers.OrderedPool makes the slots and gives each
task one.
"""

from __future__ import annotations

import itertools
import mmap
from typing import Any, Callable


class Slots:
    """Memory shared with forked workers, `count` slots of `size` bytes: a task in flight writes
    what it hands back into its slot (OrderedPool.ordered gives slot i % count to the i-th task,
    once the slot's last task has handed back), and this process copies it out as it receives
    the task's result. Kept by token in _SLOTS, where the workers forked after it find it."""

    _tokens = itertools.count()

    def __init__(self, count: int, size: int):
        self.count, self.size = count, size
        self.memory = mmap.mmap(-1, count * size)  # anonymous and shared: forked workers write into it
        self.token = next(self._tokens)
        _SLOTS[self.token] = self

    def write(self, slot: int, data: bytes) -> None:
        start = slot * self.size
        self.memory[start:start + len(data)] = data

    def read(self, slot: int, length: int) -> bytes:
        start = slot * self.size
        return self.memory[start:start + length]

    def close(self) -> None:
        del _SLOTS[self.token]
        self.memory.close()


_SLOTS: dict[int, Slots] = {}
_slot: tuple[int, int] | None = None  # in a worker, the (token, slot) of the task running, until used


def run_in_slot(token: int, slot: int, function: Callable, args: tuple) -> Any:
    """In a worker: function(*args), a task that may hand back bytes into slot `slot`."""
    global _slot
    _slot = (token, slot) if token in _SLOTS else None  # a spawned worker has none
    try:
        return function(*args)
    finally:
        _slot = None


def hand_back(data: bytes) -> Any:
    """`data`, as a task run by workers returns it (once per task): written into the memory the
    task shares with this process, when it has a slot that holds it, and read back as bytes
    when its result is received. A MiB handed back down a pipe costs some 3 ms of CPU on each
    side (pickled, written 64 KiB at a time, read, joined, unpickled); from shared memory, a
    copy. Run elsewhere (in this process, on a Dask cluster), `data` is returned as it is."""
    global _slot
    if _slot is None:
        return data
    token, slot = _slot
    _slot = None
    slots = _SLOTS[token]
    if len(data) > slots.size:
        return data
    slots.write(slot, data)
    return _HandedBack(token, slot, len(data))


class _HandedBack:
    """Bytes in a slot: pickled as where they are, unpickled as the bytes themselves."""

    __slots__ = ("token", "slot", "length")

    def __init__(self, token: int, slot: int, length: int):
        self.token, self.slot, self.length = token, slot, length

    def __reduce__(self):
        return _handed_back, (self.token, self.slot, self.length)


def _handed_back(token: int, slot: int, length: int) -> bytes:
    return _SLOTS[token].read(slot, length)
