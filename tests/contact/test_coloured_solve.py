"""The coloured contact solve (solvers/colouring.py): large worlds sweep their contact pairs colour by colour,
each colour's pairs in parallel.

The colouring is checked against its definition by brute force; the coloured solve against closed forms,
conservation laws, the serial solve's converged answer (a frictionless LCP has one answer in velocities,
whatever order Gauss–Seidel takes the rows in), and itself on 1 and 2 threads (bitwise). The tests lower
``COLOURED_SOLVE_MIN_BODIES`` so that small scenes take the coloured path.
"""

from __future__ import annotations

import numba
import numpy as np
import pytest

import tumble as tb
import tumble.world as tumble_world
from tumble.solvers.colouring import ROUND_COLOURS, colour_pairs

from .test_timestep_contact import _pile

DT = 1.0 / 240.0
G = 9.81


@pytest.fixture
def coloured(monkeypatch):
    """Every world of this test solves its contacts in the coloured order."""
    monkeypatch.setattr(tumble_world, "COLOURED_SOLVE_MIN_BODIES", 1)


def _steps(world: tb.World, seconds: float) -> None:
    for _ in range(round(seconds / DT)):
        world.step(DT)


def _colour(pair_body, pair_contacts, pair_awake, inv_mass):
    m, n = len(pair_contacts), len(inv_mass)
    colour_start = np.full(m + 1, -7, dtype=np.int64)
    order = np.full(m, -7, dtype=np.int64)
    colours = colour_pairs(pair_body, pair_contacts, pair_awake, inv_mass, np.zeros(n, dtype=np.int64),
                           np.zeros(m, dtype=np.int64), colour_start, order)
    return colours, colour_start, order


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_colours_are_body_disjoint_and_cover_every_visited_pair(seed):
    """Random contact graphs with fixed bodies, empty and asleep pairs, and a hub body in 150 pairs (more
    than one round of ROUND_COLOURS colours): every visited pair is in exactly one colour, in ascending
    order within it; no two pairs of a colour share a moving body; skipped pairs are in none."""
    rng = np.random.default_rng(seed)
    n, m = 300, 900
    inv_mass = np.where(rng.random(n) < 0.05, 0.0, 1.0)
    inv_mass[0] = 1.0          # the hub
    pair_body = rng.integers(0, n, size=(m, 2))
    pair_body[:150, 0] = 0
    pair_body[:150, 1] = np.arange(1, 151)
    pair_body[pair_body[:, 0] == pair_body[:, 1], 1] = (pair_body[pair_body[:, 0] == pair_body[:, 1], 0] + 1) % n
    pair_contacts = rng.integers(0, 5, size=m)
    pair_contacts[:150] = 1
    pair_awake = rng.random(m) < 0.9
    pair_awake[:150] = True
    colours, colour_start, order = _colour(pair_body, pair_contacts, pair_awake, inv_mass)
    visited = np.flatnonzero((pair_contacts > 0) & pair_awake)
    assert colour_start[0] == 0 and colour_start[colours] == len(visited)
    assert np.array_equal(np.sort(order[:len(visited)]), visited)
    assert colours >= 150 > ROUND_COLOURS        # the hub's pairs all differ
    for c in range(colours):
        members = order[colour_start[c]:colour_start[c + 1]]
        assert np.all(np.diff(members) > 0)
        moving = [b for k in members for b in pair_body[k] if inv_mass[b] > 0.0]
        assert len(moving) == len(set(moving)), f"colour {c} has two pairs on one moving body"


def test_pairs_on_one_fixed_body_share_a_colour():
    """Boxes on the ground, touching nothing else: the ground is never written, so one colour holds all."""
    inv_mass = np.array([0.0] + [1.0] * 10)
    pair_body = np.array([[0, i] for i in range(1, 11)])
    colours, colour_start, order = _colour(pair_body, np.full(10, 4), np.ones(10, dtype=bool), inv_mass)
    assert colours == 1 and np.array_equal(order, np.arange(10))


def test_large_worlds_take_the_coloured_path_and_small_ones_do_not(monkeypatch):
    """The choice follows the body count alone (COLOURED_SOLVE_MIN_BODIES)."""
    for threshold, expect in ((10_000, False), (1, True)):
        monkeypatch.setattr(tumble_world, "COLOURED_SOLVE_MIN_BODIES", threshold)
        world = tb.World()
        world.add_ground()
        world.add_body(tb.Box(0.2, 0.2, 0.2), position=(0, 0, 0.1))
        world.step(DT)
        assert (world._colours is not None) == expect


def test_coloured_stack_carries_its_weight(coloured):
    """A 5-box stack for 3 s in the coloured order: the ground's contacts carry 5 m g (0.5 %, the issue's
    figure for a resting box), the top box drifts < 1 mm and sinks < 1 mm (the issue's S3 figures)."""
    world = tb.World()
    world.add_ground()
    boxes = [world.add_body(tb.Box(1.0, 1.0, 1.0), mass=1.0, position=(0, 0, 0.5 + i)) for i in range(5)]
    _steps(world, 3.0)
    assert world._colours is not None
    c = world.contacts()
    on_ground = (c.body_b == 0) | (c.body_a == 0)
    assert c.force[on_ground, 2].sum() == pytest.approx(5 * G, rel=5e-3)
    top = boxes[-1].position
    assert np.hypot(top[0], top[1]) < 1e-3
    assert abs(top[2] - 4.5) < 1e-3


def test_coloured_collision_conserves_momentum(coloured):
    """Two boxes meeting off-centre in zero gravity, friction on: total linear momentum conserved to 1e-10
    relative, and angular momentum about the origin to 1e-9 (Baraff II (8-12): equal and opposite impulses
    at one common point)."""
    world = tb.World(gravity=(0, 0, 0))
    a = world.add_body(tb.Box(0.4, 0.4, 0.4), mass=2.0, position=(-0.3, 0.05, 0.0), velocity=(1.0, 0.0, 0.1),
                       friction=0.5)
    b = world.add_body(tb.Box(0.3, 0.5, 0.3), mass=1.0, position=(0.3, -0.05, 0.02), velocity=(-1.5, 0.2, 0.0),
                       angular_velocity=(0.0, 0.0, 2.0), friction=0.5)

    def momenta():
        p = 2.0 * a.velocity + 1.0 * b.velocity
        lin = sum(np.cross(body.position, body.mass * body.velocity) for body in (a, b))
        spin = sum(body.inertia_world @ body.angular_velocity for body in (a, b))
        return p, lin + spin

    p0, l0 = momenta()
    _steps(world, 0.5)
    assert world._colours is not None
    assert np.linalg.norm(a.velocity - (1.0, 0.0, 0.1)) > 0.1     # they met
    p1, l1 = momenta()
    assert np.linalg.norm(p1 - p0) <= 1e-10 * np.linalg.norm(p0)
    assert np.linalg.norm(l1 - l0) <= 1e-9 * np.linalg.norm(l0)


def _one_step_velocities(world: tb.World, snapshot, coloured_order: bool, monkeypatch) -> np.ndarray:
    monkeypatch.setattr(tumble_world, "COLOURED_SOLVE_MIN_BODIES", 1 if coloured_order else 10_000)
    world.restore(snapshot)
    world.step(DT)
    assert (world._colours is not None) == coloured_order
    s = world.state_arrays()
    return np.concatenate([s["v"].ravel(), s["w"].ravel()])


def test_coloured_and_serial_orders_converge_to_one_answer(monkeypatch):
    """A frictionless contact LCP has one answer in velocities (N = J M⁻¹ Jᵀ is positive semi-definite: the
    QP's J λ is unique), so Gauss–Seidel in buffer order and in colour order, swept to convergence, reach
    the same velocities. A 27-box heap settling on the ground (0.2 s in), one step from the same state in
    each order at 500 sweeps per sub-step (to a residual under 1e-10 m/s; the split-impulse sweeps too, whose
    withdrawal turns the bodies' spins by their impulses): the velocities agree to 1e-7 m/s
    (the heap's speeds are ~0.5 m/s; the answer is unique in J λ, so the bodies' velocities are too, up to the
    sweeps' residual spread over the contacts of a body)."""
    rng = np.random.default_rng(3)
    world = tb.World(iterations=500, tolerance=1e-14, relax_iterations=500)
    world.add_ground()
    for i in range(27):
        q = rng.normal(size=4)
        world.add_body(tb.Box(0.2, 0.2, 0.2), position=(0.22 * (i % 3), 0.22 * ((i // 3) % 3), 0.12 + 0.21 * (i // 9)),
                       orientation=q / np.linalg.norm(q), friction=0.0)
    _steps(world, 0.2)
    snapshot = world.snapshot()
    serial = _one_step_velocities(world, snapshot, False, monkeypatch)
    coloured_state = _one_step_velocities(world, snapshot, True, monkeypatch)
    assert world.step_stats.contacts > 20
    np.testing.assert_allclose(coloured_state, serial, atol=1e-7)
    assert world.step_stats.residual < 1e-10


def test_coloured_trajectories_are_bitwise_the_same_on_any_thread_count(coloured):
    """The issue's determinism: the same scene gives bitwise the same trajectory on 1 and 2 threads and run
    after run, with the pairs of each colour shared out among the threads (restitution on, so every coloured
    pass runs)."""
    one = _pile(11, 1, restitution=0.3)
    two = _pile(11, numba.config.NUMBA_NUM_THREADS, restitution=0.3)
    np.testing.assert_array_equal(one, two)
    np.testing.assert_array_equal(one, _pile(11, 1, restitution=0.3))
