"""The step stays thin in Python: a handful of kernel calls whatever the body count, and no allocation in
the steady state (issue: "The step stays thin in Python").

Kernel calls are counted by wrapping every Numba dispatcher that a tumble module holds as a global or in a
global tuple (the step reaches its kernels only through those); kernels calling kernels inside compiled code are one
call. Allocations are counted by Numba's own runtime statistics (NUMBA_NRT_STATS, so in a child process)
and, for NumPy, by tracemalloc's peak.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numba
import pytest

import tumble as tb

DT = 1.0 / 240.0


def _grid_pile(per_side: int, **options) -> tb.World:
    """per_side² columns of 2 boxes on the ground, each box touching its neighbours: one contact island."""
    world = tb.World(**options)
    for i in range(per_side):
        for j in range(per_side):
            for k in range(2):
                world.add_body(tb.Box(0.2, 0.2, 0.2), mass=1.0, position=(0.2 * i, 0.2 * j, 0.1 + 0.2 * k))
    world.add_ground()
    return world


def _wrap_kernels(set_attr, wrap) -> None:
    """Replace every Numba dispatcher or kernel call site (jit.CallSite) that a tumble module holds as a global,
    or in a global tuple (the narrowphase's table of family kernels), by ``wrap(kernel)``, through
    ``set_attr(module, name, value)``."""
    from tumble.jit import CallSite

    dispatcher = (numba.core.dispatcher.Dispatcher, CallSite)
    for name, module in list(sys.modules.items()):
        if not name.startswith("tumble"):
            continue
        for attr, value in list(vars(module).items()):
            if isinstance(value, dispatcher):
                set_attr(module, attr, wrap(value))
            elif isinstance(value, tuple) and value and all(isinstance(v, dispatcher) for v in value):
                set_attr(module, attr, tuple(wrap(v) for v in value))


def _count_calls(monkeypatch, world: tb.World, steps: int) -> list[int]:
    """Kernel calls in each of ``steps`` steps."""
    calls: list[str] = []

    def wrap(kernel):
        def counted(*args, **kwargs):
            calls.append(getattr(kernel, "kernel", kernel).__name__)
            return kernel(*args, **kwargs)
        return counted

    _wrap_kernels(monkeypatch.setattr, wrap)
    per_step = []
    for _ in range(steps):
        calls.clear()
        world.step(DT)
        per_step.append(len(calls))
    monkeypatch.undo()
    return per_step


@pytest.mark.parametrize("sleep", [False, True])
def test_kernel_calls_per_step_do_not_grow_with_the_body_count(monkeypatch, sleep):
    counts = {}
    for per_side in (2, 12):  # 8 and 288 bodies
        world = _grid_pile(per_side, sleep=sleep)
        for _ in range(3):  # compile and reach the steady state of the buffers first
            world.step(DT)
        counts[per_side] = _count_calls(monkeypatch, world, 5)
    # The same handful for 8 and 288 bodies: AABBs, motion sweep, broadphase update and collect, pair
    # fill, narrowphase, islands, the contact step — 8 in all today; 12 leaves room for a stage.
    assert counts[2] == counts[12]
    assert max(counts[12]) <= 12


_CHILD = textwrap.dedent("""
    import gc, json, sys, tracemalloc
    import numba
    import numpy as np
    from numba.core.runtime import rtsys
    sys.path.insert(0, sys.argv[1])
    sys.path.insert(0, sys.argv[2])
    from test_thin_step import _grid_pile, _wrap_kernels, DT
    from nrt_counting import counting

    # both piles compiled and at their steady state first: a kernel compiled after the wrapping below would
    # find a Python function where its callees' dispatchers were
    worlds = {per_side: _grid_pile(per_side, sleep=False) for per_side in (6, 12)}
    for world in worlds.values():
        for _ in range(20):
            world.step(DT)
    # the kernels' array arguments, counted (tests/nrt_counting.py), so that any further allocation shows
    array_args = [0]
    _wrap_kernels(setattr, lambda kernel: counting(kernel, array_args))
    figures = {}
    for per_side, world in worlds.items():
        world.step(DT)
        array_args[0] = 0
        before = rtsys.get_allocation_stats()
        tracemalloc.start()
        peak = 0
        for _ in range(20):
            gc.collect()  # the step's small cyclic garbage is not what is measured
            tracemalloc.reset_peak()
            base = tracemalloc.get_traced_memory()[0]
            world.step(DT)
            peak = max(peak, tracemalloc.get_traced_memory()[1] - base)
        tracemalloc.stop()
        after = rtsys.get_allocation_stats()
        figures[per_side] = {"nrt_allocs": after.alloc - before.alloc, "array_args": array_args[0],
                             "peak_bytes": peak, "contacts": world.step_stats.contacts}
    print(json.dumps(figures))
""")


def test_steady_state_steps_allocate_no_arrays(tmp_path: Path):
    env = dict(os.environ, NUMBA_NRT_STATS="1")
    script = tmp_path / "child.py"
    script.write_text(_CHILD)
    out = subprocess.run([sys.executable, str(script), str(Path(__file__).parent), str(Path(__file__).parents[1])],
                         env=env, capture_output=True, text=True, timeout=600, check=True)
    small, large = json.loads(out.stdout.strip().splitlines()[-1]).values()
    assert large["contacts"] > 1000  # 288 boxes touching the ground and each other
    # No kernel allocates an array in 20 steady-state steps: Numba's allocations are exactly the array
    # arguments it adapted (one each, a few hundred per step) ...
    for figures in (small, large):
        assert figures["array_args"] > 0
        assert figures["nrt_allocs"] == figures["array_args"]
    # ... nor does NumPy: the peak of traced memory within a step is Python's small objects (floats, tuples
    # of views; ~5 KB), the same for 73 and 289 bodies, where one (n, 3) float64 array would differ by
    # 5184 bytes and an array over the contacts by far more.
    assert abs(large["peak_bytes"] - small["peak_bytes"]) < 1000
