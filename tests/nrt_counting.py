"""Counting Numba's allocations, for the tests that a steady-state step allocates nothing.

Run with ``NUMBA_NRT_STATS=1``, Numba's runtime counts one allocation per array argument a kernel adapts
from Python (a MemInfo for the borrowed buffer), and one per array a kernel makes. A test wraps the kernels
it calls so that their array arguments are counted too: any allocation beyond that count is a kernel's own.
"""

from __future__ import annotations

from typing import Any

import numpy as np


def arrays_in(value: Any) -> int:
    """The arrays in ``value``: an array, or a tuple of them, nested."""
    if isinstance(value, np.ndarray):
        return 1
    if isinstance(value, tuple):
        return sum(arrays_in(v) for v in value)
    return 0


def counting(kernel: Any, counter: list[int]) -> Any:
    """``kernel`` (a dispatcher or a ``jit.CallSite``) wrapped so that each call adds the arrays among its
    arguments to ``counter[0]`` — unless it is compiled without reference counting (tumble.jit's
    ``refcount=False``), whose arguments Numba adapts without a MemInfo."""
    dispatcher = getattr(kernel, "kernel", kernel)
    adapts = getattr(dispatcher, "targetoptions", {}).get("_nrt", True)

    def counted(*args: Any) -> Any:
        if adapts:
            counter[0] += arrays_in(args)
        return kernel(*args)
    return counted
