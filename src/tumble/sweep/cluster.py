"""The Dask layer: a client on a running cluster, or a cluster of worker processes on this machine.

``scheduler`` (an address such as ``tcp://10.0.0.5:8786``, or Dask's own ``DASK_SCHEDULER_ADDRESS`` /
config ``scheduler-address`` when it is None) sends the tasks to a running Dask cluster; without one, a
``LocalCluster`` of ``workers`` processes (default: one per usable core), one thread each, runs them here.
Each local worker starts with ``WORKER_ENV`` on top of this process's environment, so it shares
``NUMBA_CACHE_DIR`` (or the default cache next to the package) with this process and with the others.
"""

from __future__ import annotations

import contextlib
import logging
import os
import socket
from collections.abc import Iterator
from typing import Any

INSTALL_HINT = 'pip install "tumble[sweep]"'

WORKER_ENV = {"NUMBA_NUM_THREADS": "1", "TUMBLE_PRECOMPILE": "0"}
"""What a local worker process runs with besides this process's environment: one Numba thread (the
parallelism is one variant per worker; more threads per worker would only oversubscribe the cores) and no
forked precompile (``run_sweep`` compiles in this process first and the workers load Numba's cache)."""

CONNECT_TIMEOUT_S = 5.0
"""[s] How long to try to reach a scheduler before giving up with a one-line error."""


def require_dask() -> None:
    """Raise ModuleNotFoundError with the install command when Dask's ``distributed`` or ``pyarrow`` is
    missing (they are the optional ``sweep`` extra)."""
    try:
        import distributed  # noqa: F401
        import pyarrow  # noqa: F401
    except ImportError as exc:
        raise ModuleNotFoundError(f"sweeps and fits need Dask (distributed) and pyarrow, which are not installed "
                                  f"({exc}): {INSTALL_HINT}") from None


def usable_cores() -> int:
    """The cores this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:   # not Linux
        return os.cpu_count() or 1


def scheduler_address(scheduler: str | None) -> str | None:
    """``scheduler``, else Dask's ``scheduler-address`` config (``DASK_SCHEDULER_ADDRESS``), else None."""
    if scheduler is not None:
        return scheduler
    import dask

    return dask.config.get("scheduler-address", None) or None


def check_scheduler(scheduler: Any, workers: int | None, connect_timeout: float) -> str | None:
    """Check the cluster arguments before anything runs, and return the scheduler's address (None: a local
    cluster). A TCP address is probed with one connection, so an unreachable scheduler is reported at once.

    Raises:
        TypeError: ``scheduler`` is neither an address nor a Client, or ``workers`` not a positive integer.
        ValueError: ``scheduler`` and ``workers`` both given, a malformed address, or no answer at it within
            ``connect_timeout`` seconds.
    """
    require_dask()
    from distributed import Client

    if workers is not None and (isinstance(workers, bool) or not isinstance(workers, int) or workers < 1):
        raise TypeError(f"workers must be a positive integer, got {workers!r}")
    if isinstance(connect_timeout, bool) or not isinstance(connect_timeout, (int, float)) or not connect_timeout > 0:
        raise ValueError(f"connect_timeout must be a positive number of seconds, got {connect_timeout!r}")
    if isinstance(scheduler, Client):
        if workers is not None:
            raise ValueError(f"workers={workers!r} applies to a cluster on this machine, not to a given Client")
        return None
    address = scheduler_address(scheduler)
    if address is None:
        return None
    if workers is not None:
        raise ValueError(f"workers={workers!r} applies to a cluster on this machine; a running cluster "
                         f"({address}) has the workers it has")
    scheme, location = _check_address(address)
    if scheme in ("tcp", "tls"):
        from distributed.comm.addressing import parse_host_port

        host, port = parse_host_port(location)
        try:
            socket.create_connection((host, port), timeout=connect_timeout).close()
        except OSError as exc:
            raise ValueError(f"scheduler {address!r} could not be reached within {connect_timeout:g} s: "
                             f"{exc.strerror or exc}") from None
    _probe(address, connect_timeout)
    return address


def _probe(address: str, timeout: float) -> None:
    """Ask the scheduler at ``address`` who it is (Dask's handshake, then its ``identity``), all within
    ``timeout`` seconds, in a loop of its own: a listener that accepts and never answers, or answers with
    something that is not Dask, is one ValueError at the deadline instead of a Client waiting for ever (Dask's
    ``Client(timeout=...)`` does not bound the handshake) and no half-made Client is left to complain as it is
    collected."""
    import asyncio

    from distributed.comm import connect
    from distributed.core import send_recv

    async def ask() -> Any:
        comm = await connect(address, timeout=timeout)
        try:
            return await send_recv(comm, op="identity")
        finally:
            comm.abort()

    def failed(why: str) -> ValueError:
        return ValueError(f"scheduler {address!r} could not be reached within {timeout:g} s: {why}")

    try:
        with _quiet("distributed"):
            reply = asyncio.run(asyncio.wait_for(ask(), timeout))
    except TimeoutError:
        raise failed("no answer from a Dask scheduler there (something accepts the connection but does not "
                     "reply)") from None
    except Exception as exc:   # OSError, a reply that is not Dask's protocol: one line
        raise failed(f"it does not answer as a Dask scheduler ({type(exc).__name__}: "
                     f"{' '.join(str(exc).split())[:200]})") from None
    if not isinstance(reply, dict) or reply.get("type") != "Scheduler":
        kind = reply.get("type") if isinstance(reply, dict) else type(reply).__name__
        raise failed(f"it answers, but as {kind!r}, not as a Dask scheduler")


@contextlib.contextmanager
def dask_client(scheduler: Any = None, workers: int | None = None, *,
                connect_timeout: float = CONNECT_TIMEOUT_S) -> Iterator[Any]:
    """A ``distributed.Client``: on ``scheduler`` (an address, or a Client to use as it is), or on a new
    ``LocalCluster`` of ``workers`` processes; closed (with the cluster) on leaving unless it was given.

    Raises:
        ValueError: ``scheduler`` and ``workers`` are both given, or the scheduler cannot be reached within
            ``connect_timeout`` seconds (the message names the address).
    """
    require_dask()
    from distributed import Client, LocalCluster

    if isinstance(scheduler, Client):
        yield scheduler
        return
    address = check_scheduler(scheduler, workers, connect_timeout)
    if address is not None:
        try:
            with _quiet("distributed"):
                client = Client(address, timeout=connect_timeout, set_as_default=False)
        except Exception as exc:   # OSError, TimeoutError, a malformed address: the same one line
            text = " ".join(str(exc).split()) or type(exc).__name__
            raise ValueError(f"scheduler {address!r} could not be reached within {connect_timeout:g} s: "
                             f"{text}") from None
        try:
            yield client
        finally:
            client.close()
        return
    # the scheduler's HTTP server (health, metrics; the dashboard too where bokeh is installed) on a free local
    # port: its default, 8787, is taken by any other cluster running here
    cluster = LocalCluster(n_workers=workers or usable_cores(), threads_per_worker=1, processes=True,
                           dashboard_address="127.0.0.1:0", env=dict(WORKER_ENV), silence_logs=logging.ERROR)
    client = Client(cluster, set_as_default=False)
    try:
        yield client
    finally:
        client.close()
        with _quiet("distributed"):
            cluster.close(timeout=30)


def _check_address(address: Any) -> tuple[str, str]:
    """Refuse an address Dask could not even try (checked here: a Client made from one fails slowly)."""
    from distributed.comm.addressing import parse_address, parse_host_port
    from distributed.comm.registry import get_backend

    if not isinstance(address, str) or not address.strip():
        raise TypeError(f"scheduler must be an address such as 'tcp://127.0.0.1:8786', got {address!r}")
    try:
        scheme, location = parse_address(address)
        get_backend(scheme)
        if scheme in ("tcp", "tls"):
            parse_host_port(location)
    except (ValueError, TypeError) as exc:
        raise ValueError(f"scheduler {address!r} is not a Dask address such as 'tcp://127.0.0.1:8786': "
                         f"{' '.join(str(exc).split())}") from None
    if scheme == "inproc":
        raise ValueError(f"scheduler {address!r}: an inproc:// address names a scheduler inside another process's "
                         f"memory, which cannot be reached from here; give its tcp:// or tls:// address")
    return scheme, location


@contextlib.contextmanager
def _quiet(logger: str) -> Iterator[None]:
    """Dask's own log lines below ERROR are not shown while inside (a failed connection logs each retry)."""
    log = logging.getLogger(logger)
    level = log.level
    log.setLevel(logging.CRITICAL)
    try:
        yield
    finally:
        log.setLevel(level)
