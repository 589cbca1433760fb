"""Springs in a World and the integrators that use their Jacobians (issue 13; docs/springs.md).

Closed forms: a stiff spring's stability under implicit Euler and its blow-up under symplectic Euler (the
explicit method is stable only for h √(k/m) < 2), the period 2π√(m/k), a static spring load balanced by
the ground's contact force.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import tumble as tb

G = 9.81


def _oscillator(integrator: str, k: float, m: float = 1.0, x0: float = 0.01) -> tuple[tb.World, tb.Body]:
    world = tb.World(gravity=(0, 0, 0), integrator=integrator)
    body = world.add_body(tb.Sphere(0.05), mass=m, position=(x0, 0, 0))
    world.add_spring(tb.AxialSpring(body, None, (x0, 0, 0), (0, 0, 0), stiffness=k, rest_length=0.0))
    return world, body


def test_stiff_spring_is_stable_with_implicit_euler_and_not_with_symplectic_euler():
    # k = 1e6 N/m, m = 1 kg, h = 1e-2 s: h ω = 10. Implicit Euler multiplies the energy by 1/(1 + h²ω²) =
    # 1/101 per step; symplectic Euler's amplification is > 1 once h ω > 2 and the motion grows without bound.
    world, body = _oscillator("implicit_euler", 1e6)
    energy0 = 0.5 * 1e6 * 0.01**2
    for _ in range(20):
        world.step(1e-2)
    energy = 0.5 * np.dot(body.velocity, body.velocity) + 0.5 * 1e6 * np.dot(body.position, body.position)
    assert energy < energy0 * 1.01**-20 * 1.01   # at least the dissipation of 20 steps at the slowest rate
    assert np.all(np.isfinite(body.position))

    world, body = _oscillator("symplectic_euler", 1e6)
    for _ in range(20):
        world.step(1e-2)
    assert not np.isfinite(body.position).all() or np.linalg.norm(body.position) > 1e3


@pytest.mark.parametrize("integrator", ["splitting", "implicit_euler", "trapezoidal", "bridson_marino"])
def test_oscillator_period(integrator):
    # k = 100 N/m, m = 1 kg: T = 2π/10 s. At h = 1e-3 (h ω = 0.01) the schemes' period errors are
    # O((h ω)²) ≈ 1e-4 relative, inside the 0.5 %.
    world, body = _oscillator(integrator, 100.0, x0=0.1)
    xs = []
    for _ in range(2000):
        world.step(1e-3)
        xs.append(body.position[0])
    x = np.array(xs)
    t = np.arange(1, x.size + 1) * 1e-3
    i = np.nonzero(np.diff(np.sign(x)) != 0)[0]
    crossings = t[i] - x[i] * (t[i + 1] - t[i]) / (x[i + 1] - x[i])
    assert 2 * np.mean(np.diff(crossings)) == pytest.approx(2 * np.pi / 10, rel=5e-3)


def test_trapezoidal_keeps_the_oscillator_energy():
    # The trapezoidal rule conserves a linear oscillator's energy exactly (up to rounding).
    world, body = _oscillator("trapezoidal", 100.0, x0=0.1)
    for _ in range(3000):
        world.step(1e-3)
    energy = 0.5 * np.dot(body.velocity, body.velocity) + 0.5 * 100.0 * np.dot(body.position, body.position)
    assert energy == pytest.approx(0.5 * 100.0 * 0.1**2, rel=1e-9)


@pytest.mark.parametrize("integrator", ["splitting", "implicit_euler"])
def test_spring_pressing_a_box_on_the_ground(integrator):
    # A spring pulls a resting 1 kg box down to a point below the ground, stretched by 0.5 m with k = 200 N/m:
    # the ground carries m g + k·0.5 = 109.81 N. With contacts the implicit integrator treats the spring
    # implicitly and the contacts by the splitting step (step._implicit_spring_kick).
    world = tb.World(integrator=integrator)
    world.add_ground()
    box = world.add_body(tb.Box(0.2, 0.2, 0.2), mass=1.0, position=(0, 0, 0.1))
    world.add_spring(tb.AxialSpring(box, None, (0, 0, 0.0), (0, 0, -0.5), stiffness=200.0, rest_length=0.0))
    h = 1 / 240
    for _ in range(240):
        world.step(h)
    contacts = world.contacts()
    spring = 200.0 * 0.5
    if integrator == "implicit_euler":
        # Linearly implicit Euler expects the spring to shorten over the step ((m + h² k) Δv = h f); the
        # contact keeps it from doing so, so the spring's load reaches the contact scaled by 1/(1 + h² k/m)
        # (0.35 % here): the known cost of treating springs implicitly outside the contact solve.
        spring /= 1.0 + h * h * 200.0 / 1.0
    assert contacts.force[:, 2].sum() == pytest.approx(G + spring, rel=1e-6)
    assert box.position[2] == pytest.approx(0.1, abs=1e-3)


def test_add_spring_checks_and_remove_body_takes_its_springs():
    world, other = tb.World(), tb.World()
    a = world.add_body(tb.Sphere(0.1))
    b = world.add_body(tb.Sphere(0.1), position=(1, 0, 0))
    o = other.add_body(tb.Sphere(0.1))
    with pytest.raises(TypeError, match="spring must be"):
        world.add_spring("spring")
    with pytest.raises(ValueError, match="different world"):
        tb.AxialSpring(a, o, (0, 0, 0), (1, 0, 0), stiffness=1.0)
    with pytest.raises(ValueError, match="live bodies of this world"):
        world.add_spring(tb.AxialSpring(o, None, (0, 0, 0), (1, 0, 0), stiffness=1.0))
    assert world.springs == ()
    spring = world.add_spring(tb.AxialSpring(a, b, (0, 0, 0), (1, 0, 0), stiffness=1.0))
    with pytest.raises(ValueError, match="already"):
        world.add_spring(spring)
    world.remove_body(b)
    assert world.springs == ()
    world.step(1e-3)


def test_a_spring_joins_its_bodies_island():
    # Two boxes resting on the ground, tied by a spring stretched to 2 N (below the friction limit μ m g =
    # 4.9 N): one island. They sleep together; the sleeping bodies' spring loads do not pile up (had 2 N
    # accumulated over the ~1.5 s asleep, the push would release ~3 m/s along x), and a push wakes both.
    world = tb.World()
    world.add_ground()
    a = world.add_body(tb.Box(0.2, 0.2, 0.2), mass=1.0, position=(0, 0, 0.1))
    b = world.add_body(tb.Box(0.2, 0.2, 0.2), mass=1.0, position=(0.5, 0, 0.1))
    world.add_spring(tb.AxialSpring(a, b, (0, 0, 0.1), (0.5, 0, 0.1), stiffness=20.0, rest_length=0.4))
    for _ in range(480):
        world.step(1 / 240)
    assert world.step_stats.sleeping == 2
    a.apply_impulse((0.0, 0.2, 0.0))
    world.step(1 / 240)
    assert world.step_stats.sleeping == 0
    # Sliding now, the box is no longer held by static friction along x: the spring's 2 N gives it
    # 2 m/s² × 1/240 s ≈ 0.008 m/s in the step; a piled-up load would give ~3 m/s.
    assert abs(a.velocity[0]) < 0.05


_ALLOC_CHILD = """
import json, sys
from numba.core.runtime import rtsys
import tumble as tb
from tumble.forces import springs as sp
sys.path.insert(0, sys.argv[1])
from nrt_counting import counting

# the kernels' array arguments, counted (tests/nrt_counting.py), so that any allocation inside them shows
array_args = [0]
for name in ("cable_loads", "frame_loads"):
    setattr(sp, name, counting(getattr(sp, name), array_args))

world = tb.World(gravity=(0, 0, -9.81))
a = world.add_body(tb.Box(0.2, 0.2, 0.2), mass=1.0, position=(0, 0, 1))
b = world.add_body(tb.Box(0.2, 0.2, 0.2), mass=2.0, position=(1, 0, 1))
c = world.add_body(tb.Sphere(0.1), mass=0.5, position=(2, 0, 1))
world.add_spring(tb.AxialSpring(a, None, (0, 0, 1.1), (0, 0, 2), stiffness=50.0, damping=1.0))
world.add_spring(tb.MultiPointSpring([a, b, c], [(0.1, 0, 1), (1, 0.1, 1), (2, 0, 1.1)], stiffness=30.0,
                                     damping=0.5))
world.add_spring(tb.FrameSpring(b, c, (1.5, 0, 1), stiffness=40.0, damping=0.3, rotational_stiffness=2.0,
                                rotational_damping=0.1))
for _ in range(5):
    world.step(1 / 240)
array_args[0] = 0
before = rtsys.get_allocation_stats().alloc
sp.spring_loads(world.model.spring_arrays(), *(world._live()[k] for k in ("x", "q", "v", "w", "force", "torque")))
print(json.dumps({"nrt_allocs": rtsys.get_allocation_stats().alloc - before, "array_args": array_args[0]}))
"""


def test_spring_loads_allocate_nothing_per_step():
    # The load kernels keep their scratch in SpringArrays: a call allocates exactly the MemInfos of the array
    # arguments it adapts (their count is measured by wrapping the kernels), nothing more. The cable kernel
    # alone used to allocate eight scratch arrays per call, which this counts.
    import json
    import os
    import subprocess
    import sys

    env = dict(os.environ, NUMBA_NRT_STATS="1")
    out = subprocess.run([sys.executable, "-c", _ALLOC_CHILD, str(Path(__file__).parents[1])], env=env,
                         capture_output=True, text=True, timeout=600, check=True)
    figures = json.loads(out.stdout.strip().splitlines()[-1])
    # 21 to each kernel: its CableArrays or FrameArrays (7), x, q, v, w, force, torque and the SpringScratch (8)
    assert figures["array_args"] == 42
    assert figures["nrt_allocs"] == figures["array_args"]


_IMPLICIT_ALLOC_CHILD = """
import json, sys, tracemalloc
import numpy as np
from numba.core.runtime import rtsys
import tumble.integration.implicit as implicit
from tumble.forces import AxialSpring, FrameSpring, MultiPointSpring, pack_springs
sys.path.insert(0, sys.argv[1])
from nrt_counting import counting

array_args = [0]
for name in ("count_moving", "implicit_dense_step"):
    setattr(implicit, name, counting(getattr(implicit, name), array_args))

n = 20
x = np.c_[np.arange(n, dtype=float), np.zeros(n), np.zeros(n)]
q = np.tile([1.0, 0.0, 0.0, 0.0], (n, 1))
springs = [AxialSpring(i, i + 1, x[i], x[i + 1], 1e4, 1.0) for i in range(n - 1)]
springs += [MultiPointSpring([0, 5, 9], [x[0], x[5] + [0, 0.2, 0], x[9]], 5e3, 2.0),
            FrameSpring(10, 11, x[10] + [0.5, 0, 0], 3e3, 1.0, 50.0, 0.5)]
for s in springs:
    s.bind(x, q)
packed = pack_springs(springs)
mass, inv_mass, inertia = np.ones(n), np.ones(n), np.stack([0.1 * np.eye(3)] * n)
v, w = np.zeros((n, 3)), np.zeros((n, 3))
v[:, 1] = np.linspace(0.0, 1.0, n)
force, torque, gravity = np.zeros((n, 3)), np.zeros((n, 3)), np.array([0.0, 0.0, -9.81])
figures = {}
for method in ("implicit_euler", "trapezoidal", "bridson_marino", "loads"):
    def call(ws):
        if method == "loads":
            return implicit.implicit_spring_loads(mass, inv_mass, inertia, x, q, v, w, packed, 1e-2, force, torque,
                                                  ws)
        return implicit.implicit_step_unchecked(method, mass, inv_mass, inertia, x, q, v, w, force, torque,
                                                gravity, packed, 1e-2, ws)
    ws = None
    for _ in range(3):
        ws = call(ws)
    array_args[0] = 0
    before = rtsys.get_allocation_stats().alloc
    tracemalloc.start()
    for _ in range(5):
        ws = call(ws)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    force[:] = 0.0
    torque[:] = 0.0
    figures[method] = {"nrt_allocs": rtsys.get_allocation_stats().alloc - before, "array_args": array_args[0],
                       "peak_bytes": peak}
print(json.dumps(figures))
"""


def test_implicit_steps_allocate_nothing_once_their_workspace_is_made():
    # 20 bodies, 21 springs of all kinds: the dense implicit step keeps M, D, K, the LU and the Jacobian
    # blocks in a workspace made once. Numba allocates exactly the MemInfos of the arrays it adapts (counted
    # by wrapping the kernels), and NumPy nothing: a single 120 × 120 matrix would be 115 KB of traced memory,
    # the Python objects of five calls take a few KB.
    import json
    import os
    import subprocess
    import sys

    env = dict(os.environ, NUMBA_NRT_STATS="1")
    out = subprocess.run([sys.executable, "-c", _IMPLICIT_ALLOC_CHILD, str(Path(__file__).parents[1])], env=env,
                         capture_output=True, text=True, timeout=600, check=True)
    figures = json.loads(out.stdout.strip().splitlines()[-1])
    for method, f in figures.items():
        assert f["array_args"] > 0, method
        assert f["nrt_allocs"] == f["array_args"], method
        assert f["peak_bytes"] < 10_000, method


def test_event_world_refuses_a_spring_and_leaves_it_unbound():
    # The event-driven method takes no state-dependent loads: add_spring refuses, before it binds the spring
    # to the bodies' poses or adds it (bad input changes nothing, the spring included).
    world = tb.World(method="event", event_impacts="sequential")
    body = world.add_body(tb.Sphere(0.1), position=(0, 0, 1))
    spring = tb.AxialSpring(body, None, (0, 0, 1), (0, 0, 2), stiffness=10.0)
    with pytest.raises(ValueError, match="method='timestep' only"):
        world.add_spring(spring)
    assert not spring.bound
    assert world.springs == ()
