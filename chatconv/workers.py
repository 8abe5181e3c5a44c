"""Worker processes for `--jobs`: the cores there are, how workers are started, and the one
pool that hands results back in order (validate and migrate share their batches out with it).

validate and migrate share work out to processes (CPU-bound Python gains nothing from
threads). This module is imported only when workers are wanted: multiprocessing costs start-up
time that a small run should not pay.
"""

from __future__ import annotations

import errno
import multiprocessing
import os
import signal
import threading
import time
from collections import deque
from concurrent.futures import Future, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from typing import Any, Callable, Iterable, Iterator

from .handback import Slots, run_in_slot
from .interrupts import HELD, MASKS, signals_held
from .problems import Problem, UnreadableInput


def available_cores() -> int:
    """The cores this process may run on (its affinity mask where the system has one)."""
    if hasattr(os, "process_cpu_count"):  # Python 3.13
        return os.process_cpu_count() or 1
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0))
    return os.cpu_count() or 1


def worker_context():
    """The multiprocessing context to start workers with.

    Forked workers start at once, with chatconv and its compiled validators loaded. Forking a
    process that runs other threads (a library caller's, say) can copy a lock one of them holds
    and hang the worker, so such a process spawns its workers instead, as does a system
    without fork.
    """
    if "fork" in multiprocessing.get_all_start_methods() and threading.active_count() == 1:
        return multiprocessing.get_context("fork")
    return multiprocessing.get_context("spawn")


def start_pool(jobs: int, initializer: Callable[..., None] = None, initargs: tuple = (),
               context=None) -> ProcessPoolExecutor:
    """A pool of `jobs` workers that leave Ctrl-C to this process (it shuts the pool down),
    then run `initializer(*initargs)`."""
    return ProcessPoolExecutor(jobs, mp_context=context or worker_context(), initializer=_start_worker,
                               initargs=(os.getpid(), initializer, initargs))


def _start_worker(parent: int, initializer: Callable[..., None] | None, initargs: tuple) -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)  # a forked worker must not take the main process's handler
    if MASKS:
        signal.pthread_sigmask(signal.SIG_UNBLOCK, HELD)  # held while it was forked: see OrderedPool
    threading.Thread(target=_end_with_parent, args=(parent,), daemon=True).start()
    hold_freed_memory()
    if initializer is not None:
        initializer(*initargs)


# glibc's mallopt parameters (malloc.h).
_M_TRIM_THRESHOLD, _M_MMAP_THRESHOLD = -1, -3
_HOLD_BYTES = 32 * 1024 * 1024


def hold_freed_memory() -> None:
    """Keep the memory a batch frees for the next batch, up to 32 MiB a block.

    A worker's batch is a MiB of lines, their parsed records and the lines made of them, and all
    of it is freed when the batch ends. glibc gives such blocks back to the system (large ones
    are mapped apart; the heap's top is trimmed), and the next batch takes them again, page by
    page: some 1,900 page faults a batch, a fifth of an import worker's time. Past these
    thresholds a worker holds what it freed, and stays at its largest batch's size (a few MiB).
    Elsewhere than glibc there is no mallopt, and nothing changes.
    """
    try:
        import ctypes

        mallopt = ctypes.CDLL(None).mallopt
    except (OSError, AttributeError):
        return
    mallopt(_M_MMAP_THRESHOLD, _HOLD_BYTES)
    mallopt(_M_TRIM_THRESHOLD, 4 * _HOLD_BYTES)


def _end_with_parent(parent: int) -> None:
    # A worker waiting for work, or for its turn to write, would wait for ever if the main
    # process were killed (its pipes stay open in the other workers): it ends itself instead.
    # `parent` is the main process's pid as the main process read it: one killed between the
    # fork and this thread's start has already left the worker to another parent.
    while os.getppid() == parent:
        time.sleep(0.5)
    os._exit(1)


class OrderedPool:
    """Worker processes whose results come back in the order the tasks were given.

    validate and migrate share a file's batches out with it: `ordered` submits tasks while
    fewer than `ahead` per worker are in flight (so memory stays flat), and yields each task's
    key and future in order. Leaving `ordered` early cancels the tasks not started and waits
    for those running (a batch still writing must end before its file goes). Use the pool as
    a context manager: leaving it ends the processes.
    """

    def __init__(self, jobs: int, initializer: Callable[..., None] | None = None, initargs: tuple = (),
                 context=None, ahead: int = 2, shared_bytes: int = 0):
        self.jobs = jobs
        self.ahead = ahead
        context = context or worker_context()
        # Forked workers hand bytes back through memory shared with them (handback.py), up to
        # `shared_bytes` a task; spawned ones cannot see it, and send them down the pipe.
        self.slots = Slots(ahead * jobs + 1, shared_bytes) if shared_bytes and \
            context.get_start_method() == "fork" else None
        # This process reads the batches it hands out, a MiB at a time: it holds what it frees
        # as the workers do (see hold_freed_memory).
        hold_freed_memory()
        try:
            self.pool = start_pool(jobs, initializer, initargs, context)
        except OSError as exc:  # its queues' locks and pipes: file descriptors
            raise WorkersNotStarted(exc) from None
        # The workers start now, with Ctrl-C and SIGTERM held until they have: an interrupt
        # raised inside a fork (its at-fork handlers) is lost, or leaves the pool half made
        # and its shutdown waiting for ever. Workers that cannot start (no file descriptors
        # left, say) end the pool here, with a message, instead of hanging it.
        try:
            with signals_held():
                self.pool.submit(int).result()
        except (OSError, BrokenProcessPool) as exc:
            self._end_started()
            raise WorkersNotStarted(exc) from None

    def _end_started(self) -> None:
        """End the workers that did start when others could not: the pool cannot tell them to
        (its manager thread never ran), and the exit would wait for them for ever."""
        processes = dict(getattr(self.pool, "_processes", None) or {})  # the executor keeps them only there
        self.pool.shutdown(wait=False, cancel_futures=True)
        for process in processes.values():
            process.terminate()
        for process in processes.values():
            process.join(5)

    def __enter__(self) -> "OrderedPool":
        return self

    def __exit__(self, *exc_info) -> None:
        self.close()

    def close(self) -> None:
        self.pool.shutdown(cancel_futures=True)
        if self.slots is not None:
            self.slots.close()
            self.slots = None

    def ordered(self, tasks: Iterable[tuple[Any, Callable, tuple]]) -> Iterator[tuple[Any, Future]]:
        """(key, future) for each (key, function, args) task, in the order given."""
        pending: deque[tuple[Any, Future]] = deque()
        given: list[Future] = []  # the task last handed on: its caller may be stopped waiting for it
        slots = self.slots
        recent: deque[Future] = deque(maxlen=slots.count if slots else 0)  # the tasks that hold a slot
        try:
            for index, (key, function, args) in enumerate(tasks):
                if slots is not None:  # the slot of the task `count` before, once that one has handed back
                    if len(recent) == slots.count:
                        wait([recent[0]])
                    function, args = run_in_slot, (slots.token, index % slots.count, function, args)
                with signals_held():  # an interrupt inside submit would lose a task that runs: never waited for
                    pending.append((key, self.pool.submit(function, *args)))
                recent.append(pending[-1][1])
                if len(pending) >= self.ahead * self.jobs:
                    given = [pending[0][1]]
                    yield pending.popleft()
            while pending:
                given = [pending[0][1]]
                yield pending.popleft()
        finally:
            # Ctrl-C or SIGTERM while the caller waits for the task handed on must wait for it
            # too: it may be writing into a file that the caller removes next.
            wait(given + [future for _, future in pending if not future.cancel()])


class WorkersNotStarted(OSError):
    """Worker processes that could not be started (file descriptors or processes exhausted):
    the run stops with this message (exit 2), as for any system error; every file would fail
    alike. An OSError: showing it needs nothing more to be opened or imported."""

    def __init__(self, cause: OSError | BrokenProcessPool):
        reason = getattr(cause, "strerror", None) or str(cause) or type(cause).__name__
        super().__init__(getattr(cause, "errno", None) or errno.EAGAIN,
                         f"cannot start worker processes ({reason}): run with --jobs 1, or raise the limit "
                         "(`ulimit -n` for open files, `ulimit -u` for processes)")


class WorkerLost(Exception):
    """A task that a pool of another kind (a Dask cluster: cluster.py) could not run to its end;
    `hint` says what to do."""

    def __init__(self, message: str, hint: str = "run again, or without --scheduler"):
        super().__init__(message)
        self.hint = hint


def worker_result(future: Future, file: str, what: str, hint: str = "run again, or with --jobs 1 "
                  "(e.g. if memory is short)", line: int | None = None) -> Any:
    """The future's result; UnreadableInput naming `file` when its worker process died, or its
    cluster failed it, at `line` (the first of the task's batch: those before it are done)."""
    try:
        return future.result()
    except BrokenProcessPool:
        raise UnreadableInput(Problem(file, line, None, "$", f"{what} stopped{_at(line)}: a worker process ended "
                                      "unexpectedly", "error", hint, "unreadable-file")) from None
    except WorkerLost as exc:
        raise UnreadableInput(Problem(file, line, None, "$", f"{what} stopped{_at(line)}: {exc}", "error",
                                      exc.hint, "unreadable-file")) from None


def _at(line: int | None) -> str:
    """Where a run on a file stopped, and what was done before it."""
    if line is None or line <= 1:
        return ""
    return f" at line {line}, after the {line - 1} whole lines before it"
