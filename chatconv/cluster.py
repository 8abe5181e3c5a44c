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

from collections import deque
from typing import Any, Callable, Iterable, Iterator

from .problems import UsageError
from .workers import OrderedPool, WorkerLost

CONNECT_SECONDS = 10


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

    from distributed.comm import connect

    async def identity() -> Any:
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
    """OrderedPool's interface (ordered, close) over a Dask scheduler at `address`."""

    def __init__(self, address: str, ahead: int = 2):
        try:
            from distributed import Client
        except ImportError:
            raise UsageError(f'--scheduler {address}: Dask is not installed (pip install "chatconv[dask]")') from None
        try:
            _check_address(address)
            _probe(address)
            self.client = Client(address, timeout=CONNECT_SECONDS, set_as_default=False)
        except (OSError, TimeoutError, ValueError) as exc:  # refused, unreachable, not an address
            raise UsageError(f"--scheduler {address}: cannot reach a Dask scheduler there ({exc}); start one "
                             "(`dask scheduler`) or check the address, e.g. tcp://host:8786") from None
        # Enough batches in flight to keep every worker thread busy, and no more (memory stays flat).
        self.jobs = max(1, sum(self.client.nthreads().values()))
        self.ahead = ahead

    def __enter__(self) -> "ClusterPool":
        return self

    def __exit__(self, *exc_info) -> None:
        self.close()

    def close(self) -> None:
        self.client.close()

    def ordered(self, tasks: Iterable[tuple[Any, Callable, tuple]]) -> Iterator[tuple[Any, "_ClusterResult"]]:
        """(key, result) for each (key, function, args) task, in the order given."""
        pending: deque[tuple[Any, Any]] = deque()
        try:
            for key, function, args in tasks:
                # pure=False: two batches with the same bytes are still two tasks.
                pending.append((key, self.client.submit(function, *args, pure=False)))
                if len(pending) >= self.ahead * self.jobs:
                    yield self._taken(pending.popleft())
            while pending:
                yield self._taken(pending.popleft())
        finally:
            if pending and self.client.status == "running":  # closed already when a task failed
                self.client.cancel([future for _, future in pending])

    @staticmethod
    def _taken(item: tuple[Any, Any]) -> tuple[Any, "_ClusterResult"]:
        key, future = item
        return key, _ClusterResult(future)


class _ClusterResult:
    """A Dask future whose result() raises WorkerLost when the cluster could not run its task
    (a worker died with it, the scheduler went away, the workers cannot load chatconv), as a
    local pool's does: the user is told, never shown a traceback."""

    def __init__(self, future):
        self.future = future

    def result(self) -> Any:
        from distributed.scheduler import KilledWorker

        try:
            return self.future.result()
        except KilledWorker:
            raise WorkerLost("the Dask cluster lost a worker running the task") from None
        except Exception as exc:  # the task's functions are chatconv's and raise nothing: the cluster failed
            first_line = str(exc).split("\n", 1)[0]
            raise WorkerLost(f"the Dask cluster could not run the task ({type(exc).__name__}: {first_line}); "
                             "its workers need chatconv installed, the version this machine runs") from None
