"""Worker processes for `--jobs`: the cores there are, and how workers are started.

validate and migrate share work out to processes (CPU-bound Python gains nothing from
threads). This module is imported only when workers are wanted: multiprocessing costs start-up
time that a small run should not pay.
"""

from __future__ import annotations

import multiprocessing
import os
import signal
import threading
import time
from concurrent.futures import ProcessPoolExecutor
from typing import Callable


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
                               initargs=(initializer, initargs))


def _start_worker(initializer: Callable[..., None] | None, initargs: tuple) -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    threading.Thread(target=_end_with_parent, args=(os.getppid(),), daemon=True).start()
    if initializer is not None:
        initializer(*initargs)


def _end_with_parent(parent: int) -> None:
    # A worker waiting for work, or for its turn to write, would wait for ever if the main
    # process were killed (its pipes stay open in the other workers): it ends itself instead.
    while os.getppid() == parent:
        time.sleep(0.5)
    os._exit(1)
