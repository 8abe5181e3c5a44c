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


def broken_pipes_raised() -> None:
    """From now on, a write to a connection or pipe whose other end is gone raises
    BrokenPipeError instead of ending the process (SIGPIPE ignored, as Python has it).

    The CLI lets SIGPIPE end it quietly, so that `chatconv text ... | head` ends as `cat` does;
    but a run that talks over the network (an object store, a Dask scheduler) writes to sockets
    that the other end may close at any time (a server closing a kept-alive connection): those
    writes must fail, and be retried, not kill the run. Standard output's reader going away then
    ends the run in cli.main, as the signal would have."""
    import threading

    if hasattr(signal, "SIGPIPE") and threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGPIPE, signal.SIG_IGN)
