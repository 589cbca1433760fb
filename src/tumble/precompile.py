"""Compile what a world's steps need before its first step, in parallel processes.

A first step on an empty Numba cache compiles every kernel the step reaches, one after the other in one
process: ~30 s for a stack of boxes and ~50 s for the demo's mixed shapes on the 2-core development machine
(bench/compile_probe.py), while the second core idles. The kernels fall into *shares* that compile
independently: the detection stage, each narrowphase family the world's shapes can form, the contact step
with its solver. ``precompile`` compiles the shares that are not in the cache yet in forked copies of this
process, spread over the cores by their estimated cost (longest first), and each child writes what it compiled
to Numba's cache; the world's own first step then loads it all from there. A child works on a copy of the
world (``os.fork``), so a share may run a real stage of the step: what it changes dies with the child.

Shares come from the world's advance method (``compile_shares``: methods/timestepping.py). A world steps the
same with or without it; it only changes when the compiling happens and on how many cores.

It needs ``os.fork`` (Linux; macOS only with the ``fork`` start method's caveats, so not there) and a cache
Numba can write; elsewhere, or when this process has already started Numba's thread pool (a forked child
would inherit a pool without its threads), the first step compiles as before. ``World.precompile`` is the
explicit call (with a progress bar on request), ``tumble compile SCENE`` the command; the first step of a world
calls ``precompile_before_first_step`` unless ``AUTO`` is False or ``TUMBLE_PRECOMPILE=0`` is set.
"""

from __future__ import annotations

import contextlib
import os
import select
import signal
import sys
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numba

__all__ = ["AUTO", "Share", "precompile", "precompile_before_first_step"]

TIMEOUT_S = 900.0
"""[s] How long ``precompile`` waits for its children in all (a cold demo takes ~30 s on 2 cores); then it stops
them and leaves what they had not compiled to the first step."""

AUTO = os.environ.get("TUMBLE_PRECOMPILE", "1") != "0"
"""Whether a world's first step precompiles its cold shares in parallel (``precompile_before_first_step``)."""


@dataclass(frozen=True)
class Share:
    """Kernels that compile together: ``run`` reaches them (on a forked copy of the world; it may change the
    world, which the child then drops); ``kernels``, the dispatchers whose cache entries show the share is
    compiled; ``cost`` [s], its estimated cold compile time on the development machine (for balancing)."""

    name: str
    cost: float
    run: Callable[[], None]
    kernels: tuple[Any, ...] = field(default=())


def _cached(share: Share) -> bool:
    """Whether every kernel of ``share`` is compiled in this process or has an entry in Numba's cache (its index
    file: a kernel cached for other argument types counts as compiled, and then compiles at its first call)."""
    for kernel in share.kernels:
        if getattr(kernel, "overloads", True):  # compiled here (or not a Numba dispatcher: nothing to tell)
            continue
        cache_file = getattr(getattr(kernel, "_cache", None), "_cache_file", None)
        if cache_file is None or not os.path.exists(cache_file._index_path):
            return False
    return True


def can_fork() -> bool:
    """Whether shares can compile in forked children here: on Linux, with the JIT on, in a process with no
    thread but this one (a child forked while another thread holds a lock, the import lock say, would wait
    for it forever) and before Numba's thread pool started (a child would inherit a pool without its
    threads)."""
    if sys.platform != "linux" or not hasattr(os, "fork") or numba.config.DISABLE_JIT:
        return False
    if threading.active_count() > 1:
        return False
    from numba.np.ufunc import parallel

    return not parallel._is_initialized


def _assign(costs: Sequence[float], processes: int) -> list[list[int]]:
    """Longest-processing-time-first: each share (by index), the costliest first, to the least loaded of
    ``processes`` bins; the bins that got any."""
    bins: list[list[int]] = [[] for _ in range(processes)]
    load = [0.0] * processes
    for i in sorted(range(len(costs)), key=lambda i: -costs[i]):
        k = load.index(min(load))
        bins[k].append(i)
        load[k] += costs[i]
    return [b for b in bins if b]


def _child(shares: Sequence[Share], work: list[int], report: int) -> None:
    """Run the shares ``work`` (indices into ``shares``) in this forked child, writing each finished one's index
    (one byte) to the pipe ``report``; never returns."""
    status = 0
    try:
        for i in work:
            shares[i].run()
            os.write(report, bytes([i]))
    except BaseException:  # noqa: BLE001 - a child must not return into the parent's code
        status = 1
    finally:
        os._exit(status)


def precompile(shares: Sequence[Share], processes: int | None = None, progress: bool = False) -> dict[str, Any]:
    """Compile the cold ``shares`` in ``processes`` forked children (default: the usable cores, at most one per
    share). Returns {"shares": names of the cold shares, "processes": children used, "seconds": wall time,
    "left": names of the shares not compiled (no fork here, or their child failed: their kernels then compile
    at their first call)}. ``progress``: a progress bar (tqdm, on stderr) that advances as shares finish."""
    started = time.perf_counter()
    cold = [s for s in shares if not _cached(s)]
    result: dict[str, Any] = {"shares": [s.name for s in cold], "processes": 0, "seconds": 0.0, "left": []}
    if not cold or not can_fork():
        result["left"] = result["shares"]
        return result
    if processes is None:
        processes = len(os.sched_getaffinity(0))
    bins = _assign([s.cost for s in cold], max(1, min(processes, len(cold), 255)))
    read, write = os.pipe()
    sys.stdout.flush()   # a child must not write the parent's buffered output a second time
    sys.stderr.flush()
    children = []
    for work in bins:
        pid = os.fork()
        if pid == 0:
            os.close(read)
            _child(cold, work, write)
        children.append(pid)
    os.close(write)
    bar = None
    if progress:
        from tqdm import tqdm

        bar = tqdm(total=len(cold), desc="compiling kernels", unit="share", file=sys.stderr)
    done = set()
    deadline = started + TIMEOUT_S
    with os.fdopen(read, "rb", buffering=0) as pipe:
        while True:
            ready, _, _ = select.select([pipe], [], [], max(0.0, deadline - time.perf_counter()))
            if not ready:   # a child that hangs must not hang the step: its shares compile at first use
                for pid in children:
                    with contextlib.suppress(ProcessLookupError):
                        os.kill(pid, signal.SIGKILL)
                break
            byte = pipe.read(1)
            if not byte:
                break
            done.add(byte[0])
            if bar is not None:
                bar.set_postfix_str(cold[byte[0]].name)
                bar.update(1)
    for pid in children:
        os.waitpid(pid, 0)
    if bar is not None:
        bar.close()
    result["processes"] = len(children)
    result["left"] = [s.name for i, s in enumerate(cold) if i not in done]
    result["seconds"] = time.perf_counter() - started
    return result


def precompile_before_first_step(shares: Callable[[], Sequence[Share]]) -> None:
    """What a world's first step calls: ``precompile(shares())`` when ``AUTO`` and forking are on and at least
    two shares are cold (one would compile no faster in a child)."""
    if not AUTO or not can_fork():
        return
    plan = shares()
    if sum(not _cached(s) for s in plan) >= 2:
        precompile(plan)
