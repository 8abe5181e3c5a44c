"""Ctrl-C and SIGTERM held back for the steps that an interrupt must not cut in two (a task
handed to a worker, a temporary file made, a chunk of JSON output written). Kept apart from
workers.py, which imports multiprocessing: a run without workers does not pay for it.
"""

from __future__ import annotations

import signal
from contextlib import contextmanager

HELD = {signal.SIGINT, signal.SIGTERM}
MASKS = hasattr(signal, "pthread_sigmask")  # not on Windows: there nothing can be held


@contextmanager
def signals_held():
    """Ctrl-C and SIGTERM wait (they are not lost) until the block ends."""
    if not MASKS:
        yield
        return
    previous = signal.pthread_sigmask(signal.SIG_BLOCK, HELD)
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, previous)
