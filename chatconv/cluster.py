"""A Dask cluster as the worker pool (`--scheduler ADDRESS`): the same tasks the local worker
processes run, submitted to a running scheduler, their results taken back in order.

Only the work on each batch of lines goes to the cluster; the batches are read here and sent
with their task (the cluster's workers need not see this machine's files), and what crosses
batches (a conversation's step order, its tool calls and results) is merged here, in file
order, as a local run merges its workers' results. So a run on a cluster reports exactly what a
local run reports.

Dask is an optional dependency (`pip install "chatconv[dask]"`): it is imported only here,
only when a scheduler is named.
"""

from __future__ import annotations

import logging
import time
from collections import deque
from typing import Any, Callable, Iterable, Iterator

from .interrupts import broken_pipes_raised, signals_held
from .problems import UsageError
from .workers import OrderedPool, WorkerLost

CONNECT_SECONDS = 10
WORKERS_SECONDS = 10  # how long a cluster may have no worker: at the start, or once every one is gone
POLL_SECONDS = 1  # how often a wait for a task's result looks at the cluster


def ordered_pool(jobs: int, scheduler: str | None = None, shared_bytes: int = 0):
    """The pool a command shares its batches out to: `jobs` local worker processes (handing
    back up to `shared_bytes` a task through shared memory: see OrderedPool), or the Dask
    cluster of the scheduler at `scheduler` when one is named."""
    return OrderedPool(jobs, shared_bytes=shared_bytes) if scheduler is None else ClusterPool(scheduler)


def _check_address(address: str) -> None:
    """ValueError for an address no scheduler can be reached at (an unknown scheme, no port, a
    scheme without host and port: inproc, ucx), before a Client is made of it: a Client that
    fails on it is left half made, and its clean-up at exit waits 20 s and prints a traceback.
    UsageError for an address Dask's configuration gives a client no settings for: tls:// without
    TLS settings, an unencrypted one where encryption is required (its Client fails so on
    connecting, with a TypeError or a RuntimeError)."""
    import dask
    from distributed.comm import get_address_host_port, parse_address
    from distributed.security import Security

    get_address_host_port(address)
    if dask.config.get("distributed.client.security-loader", None):
        return  # it gives the Client its settings: the Client says what is wrong with them
    scheme, security = parse_address(address)[0], Security()  # Security(): Dask's configuration
    if scheme == "tls" and security.get_connection_args("client")["ssl_context"] is None:
        raise UsageError(f"--scheduler {address}: a tls:// address needs Dask's TLS settings, and none are set: "
                         "set distributed.comm.tls.ca-file, .client.cert and .client.key in Dask's configuration "
                         "(https://distributed.dask.org/en/stable/tls.html), or use a tcp:// address")
    if security.require_encryption and scheme not in ("tls", "wss"):
        raise UsageError(f"--scheduler {address}: Dask's configuration requires encryption "
                         "(distributed.comm.require-encryption): use a tls:// address")


def _probe(address: str) -> None:
    """TimeoutError or OSError unless a Dask scheduler answers at `address` within CONNECT_SECONDS,
    asked before a Client is made: a Client made of a peer that is none (a port that says
    nothing, an HTTP server, one that sends garbage, a host name that does not resolve) hung, or
    failed with a traceback and waited 20 s at exit to close. The probe runs on a loop of its
    own, which does not wait for a name lookup still running when time is up."""
    import asyncio

    from distributed.comm import connect, get_address_host_port, parse_address

    async def identity() -> Any:
        if parse_address(address)[0] in ("tcp", "tls"):  # refused at once: Dask's connect tries again until time is up
            host, port = get_address_host_port(address)
            _, writer = await asyncio.open_connection(host, port)
            writer.close()
        comm = await connect(address, timeout=CONNECT_SECONDS)
        try:
            await comm.write({"op": "identity"})
            return await comm.read()
        finally:
            comm.abort()

    loop = asyncio.new_event_loop()
    try:
        answer = loop.run_until_complete(asyncio.wait_for(identity(), CONNECT_SECONDS))
    except (asyncio.TimeoutError, TimeoutError):
        raise TimeoutError(f"nothing answered as a Dask scheduler within {CONNECT_SECONDS} s") from None
    except (OSError, ValueError):
        raise
    except Exception as exc:  # (MemoryError too) what the peer sent is no Dask message
        raise OSError(f"what answered is no Dask scheduler ({type(exc).__name__})") from None
    finally:
        loop.close()
    if not isinstance(answer, dict) or answer.get("type") != "Scheduler":
        raise OSError(f"what answered is no Dask scheduler (it says it is {answer.get('type')!r})"
                      if isinstance(answer, dict) else "what answered is no Dask scheduler")


class ClusterPool:
    """OrderedPool's interface (ordered, close) over a Dask scheduler at `address`.

    Each fault of the cluster ends the run with one line, never a hang or Dask's traceback:
    a scheduler with no workers (for WORKERS_SECONDS) is a UsageError here; a task's result
    raises WorkerLost when Dask gave up on it (a worker died with it, more than Dask's
    allowed-failures times), when every worker is gone for WORKERS_SECONDS, or when the
    scheduler went away (Dask's client says so within seconds). Once every worker or the
    scheduler is gone, every later task fails at once with the same WorkerLost (`lost`).
    """

    def __init__(self, address: str, ahead: int = 2, workers_seconds: float = WORKERS_SECONDS):
        try:
            from distributed import Client
        except ImportError:
            raise UsageError(f'--scheduler {address}: Dask is not installed (pip install "chatconv[dask]")') from None
        self.address, self.workers_seconds = address, workers_seconds
        self.lost: WorkerLost | None = None
        broken_pipes_raised()  # a connection the scheduler closed is Dask's to tell, not a SIGPIPE's
        self._logs = _DaskLogsHeld()
        try:
            _check_address(address)
            _probe(address)
            # The client's threads start with Ctrl-C and SIGTERM held, as they are in this thread:
            # else the signal reaches one of them, and the main thread is interrupted inside a
            # block that holds them (a JSON chunk written, a temporary file made).
            with signals_held():
                self.client = Client(address, timeout=CONNECT_SECONDS, set_as_default=False)
        except BaseException as exc:
            self._logs.close()
            if not isinstance(exc, (OSError, TimeoutError, ValueError)):  # refused, unreachable, not an address
                raise
            raise UsageError(f"--scheduler {address}: cannot reach a Dask scheduler there ({exc}); start one "
                             "(`dask scheduler`) or check the address, e.g. tcp://host:8786") from None
        try:
            try:
                self.client.wait_for_workers(1, timeout=workers_seconds)
            except (OSError, TimeoutError):  # (Dask's TimeoutError is the builtin one)
                raise UsageError(f"--scheduler {address}: the scheduler has no workers (none joined within "
                                 f"{workers_seconds:g} s); start some (`dask worker {address}`) and run again") \
                    from None
            # Enough batches in flight to keep every worker thread busy, and no more (memory stays flat).
            self.jobs = max(1, sum(self.client.nthreads().values()))
        except BaseException:  # (Ctrl-C too) the client closed, Dask's logs given back
            self.close()
            raise
        self.ahead = ahead

    def __enter__(self) -> "ClusterPool":
        return self

    def __exit__(self, *exc_info) -> None:
        self.close()

    def close(self) -> None:
        try:
            self.client.close(timeout=CONNECT_SECONDS)
        except (OSError, TimeoutError):  # a scheduler gone: nothing is left to close
            pass
        self._logs.close()

    def ordered(self, tasks: Iterable[tuple[Any, Callable, tuple]]) -> Iterator[tuple[Any, Any]]:
        """(key, result) for each (key, function, args) task, in the order given."""
        pending: deque[tuple[Any, Any]] = deque()
        try:
            for key, function, args in tasks:
                if self.lost is not None or self.client.status not in ("running", "connecting"):
                    # A client that lost its scheduler closes itself, and takes no more tasks.
                    pending.append((key, _Failed(self.lost or self.scheduler_gone())))
                    break
                # pure=False: two batches with the same bytes are still two tasks.
                pending.append((key, _ClusterResult(self.client.submit(function, *args, pure=False), self)))
                if len(pending) >= self.ahead * self.jobs:
                    yield pending.popleft()
            while pending:
                yield pending.popleft()
        finally:
            futures = [item.future for _, item in pending if isinstance(item, _ClusterResult)]
            if futures and self.client.status == "running":  # closed already when a task failed
                self.client.cancel(futures)

    def call(self, function: Callable, *args) -> Any:
        """function(*args) run by one of the cluster's workers: its result, or its exception;
        WorkerLost as for ordered's tasks."""
        if self.lost is not None or self.client.status not in ("running", "connecting"):
            raise self.lost or self.scheduler_gone()
        return _ClusterResult(self.client.submit(function, *args, pure=False), self).result()

    def scheduler_gone(self) -> WorkerLost:
        self.lost = WorkerLost(f"the Dask scheduler at {self.address} went away",
                               "start it and its workers again, and run again")
        return self.lost


class _Failed:
    """The result of a task that was not given to the cluster: it had failed already."""

    def __init__(self, lost: WorkerLost):
        self.lost = lost

    def result(self) -> Any:
        raise self.lost


class _ClusterResult:
    """A Dask future whose result() raises WorkerLost when the cluster could not run its task
    (Dask gave up on it, every worker is gone, the scheduler went away, the workers cannot
    load chatconv), as a local pool's does: the user is told, never shown a traceback."""

    def __init__(self, future, pool: ClusterPool):
        self.future, self.pool = future, pool

    def result(self) -> Any:
        from concurrent.futures import CancelledError  # (Dask's FutureCancelledError is one)

        from distributed.scheduler import KilledWorker

        pool, since = self.pool, None  # since when the cluster has had no worker
        while True:
            if pool.lost is not None:
                raise pool.lost
            try:
                return self.future.result(timeout=POLL_SECONDS)
            except TimeoutError:
                # Done since the wait gave up (a task that takes about POLL_SECONDS): its result or
                # its error is taken next time round; but a TimeoutError of its own is no wait's.
                if self.future.done() and self.future.status != "finished":
                    own = self.future.exception()  # (done: no wait; a timeout of 0 raises, done or not)
                    if isinstance(own, TimeoutError):
                        raise _not_run(own) from None
            except KilledWorker:
                raise WorkerLost("the Dask cluster lost a worker running the task") from None
            except CancelledError:  # by the client, when it lost the scheduler
                raise pool.scheduler_gone() from None
            except Exception as exc:
                if type(exc).__module__.partition(".")[0] == "chatconv":  # the task's own (a record that stops a migration)
                    raise
                raise _not_run(exc) from None  # the cluster failed it (a worker without chatconv, say)
            try:
                workers = pool.client.nthreads() if pool.client.status == "running" else None
            except OSError:  # (Dask's CommClosedError too)
                workers = None
            if workers is None:
                raise pool.scheduler_gone()
            if workers:
                since = None
            elif since is None:
                since = time.monotonic()
            elif time.monotonic() - since >= pool.workers_seconds:
                pool.lost = WorkerLost(f"every worker of the Dask cluster is gone (none for {pool.workers_seconds:g} s)",
                                       f"start workers (`dask worker {pool.address}`) and run again")
                raise pool.lost


def _not_run(exc: BaseException) -> WorkerLost:
    first_line = str(exc).split("\n", 1)[0]
    return WorkerLost(f"the Dask cluster could not run the task ({type(exc).__name__}: {first_line})",
                      "its workers need chatconv installed, the version this machine runs")


class _DaskLogsHeld:
    """Dask's own log lines (its client's ERROR on a lost scheduler, with a traceback) held back
    while a pool is open: chatconv says what happened, in one line. Dask gives some of its
    loggers a level and a handler of their own (distributed.client): each is held. Pools may
    overlap (a library's): the levels are given back when the last one closes."""

    _open = 0
    _levels: dict[str, int] = {}

    def __init__(self):
        cls, self.closed = type(self), False
        if cls._open == 0:
            manager = logging.Logger.manager.loggerDict
            cls._levels = {name: logging.getLogger(name).level for name in list(manager)
                           if name == "distributed" or name.startswith("distributed.")}
            for name in cls._levels:
                logging.getLogger(name).setLevel(logging.CRITICAL + 1)
        cls._open += 1

    def close(self) -> None:
        cls = type(self)
        if self.closed:
            return
        self.closed = True
        cls._open -= 1
        if cls._open == 0:
            for name, level in cls._levels.items():
                logging.getLogger(name).setLevel(level)
