"""Springs (ArtiSynth notes 0.12, 0.12.1, 0.14, 0.22): Jacobians against central finite differences at random
configurations, Newton's third law, energy balance, the period of a mass on a spring, and rejected input."""

import numpy as np
import pytest
from spring_helpers import fd_jacobians, loads, qmul, random_quat, rotvec_quat

from tumble.forces import (
    AxialSpring,
    FrameSpring,
    MultiPointSpring,
    pack_springs,
    spring_jacobians,
    spring_loads,
    spring_potential_energy,
)
from tumble.rotations import quat_to_matrix

SEEDS = range(4)


def random_state(rng, n):
    return (rng.normal(size=(n, 3)), random_quat(rng, n), rng.normal(size=(n, 3)), rng.normal(size=(n, 3)))


def make_spring(kind, rng, damped=True):
    """One spring of each kind, bound at a random creation pose of 3 bodies."""
    d = 1.0 if damped else 0.0
    if kind == "axial":
        s = AxialSpring(0, 1, rng.normal(size=3), rng.normal(size=3), 7.0, 0.3 * d, rest_length=0.5)
    elif kind == "axial_world":
        s = AxialSpring(None, 2, rng.normal(size=3), rng.normal(size=3), 5.0, 0.7 * d)
    elif kind == "multipoint":
        s = MultiPointSpring([0, None, 2, 2, 1], rng.normal(size=(5, 3)), 3.0, 0.4 * d, rest_length=1.0)
    elif kind == "frame":
        s = FrameSpring(0, 1, rng.normal(size=3), [3.0, 4.0, 5.0], np.array([0.1, 0.2, 0.3]) * d,
                        [1.0, 2.0, 3.0], np.array([0.3, 0.2, 0.1]) * d, frame_orientation=rng.normal(size=4))
    elif kind == "frame_iso":  # isotropic rotational stiffness: the torque is a gradient (energy test)
        s = FrameSpring(2, 0, rng.normal(size=3), [3.0, 1.0, 2.0], 0.5 * d, 2.0, 0.2 * d,
                        frame_orientation=rng.normal(size=4))
    else:
        s = FrameSpring(None, 2, rng.normal(size=3), 2.0, 0.5 * d, 1.5, 0.2 * d)
    s.bind(rng.normal(size=(3, 3)), random_quat(rng, 3))
    return s


KINDS = ["axial", "axial_world", "multipoint", "frame", "frame_iso", "frame_world"]


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("seed", SEEDS)
def test_jacobians_match_central_differences(kind, seed):
    # Central differences with ε = 1e-6 have truncation error ~ε² |f'''| ~ 1e-12 and rounding error
    # ~1e-16 |f| / ε ~ 1e-9 relative here; 1e-6 of the Jacobian's largest entry leaves a wide margin over
    # both (measured worst: 1.2e-9 for K, 3e-8 for D, whose entries are small next to the loads) while any
    # wrong term (≥ 1e-2 relative) fails.
    rng = np.random.default_rng(seed)
    springs = pack_springs([make_spring(kind, rng)])
    x, q, v, w = random_state(rng, 3)
    K, D = spring_jacobians(springs, x, q, v, w)
    K_fd, D_fd = fd_jacobians(springs, x, q, v, w)
    assert np.abs(K - K_fd).max() <= 1e-6 * np.abs(K_fd).max()
    assert np.abs(D - D_fd).max() <= 1e-6 * np.abs(D_fd).max()


@pytest.mark.parametrize("kind", ["axial", "multipoint", "frame"])
@pytest.mark.parametrize("seed", SEEDS)
def test_newtons_third_law(kind, seed):
    # With every end on a body (no world), total force and total moment about the origin vanish:
    # Σ F_i = 0 and Σ (x_i × F_i + τ_i) = 0, exactly up to rounding.
    rng = np.random.default_rng(seed)
    s = {"axial": lambda: AxialSpring(0, 1, rng.normal(size=3), rng.normal(size=3), 7.0, 0.3, rest_length=0.2),
         "multipoint": lambda: MultiPointSpring([0, 2, 1, 2], rng.normal(size=(4, 3)), 3.0, 0.4, rest_length=0.1),
         "frame": lambda: FrameSpring(0, 1, rng.normal(size=3), [3.0, 4.0, 5.0], [0.1, 0.2, 0.3], [1.0, 2.0, 3.0],
                                      [0.3, 0.2, 0.1], frame_orientation=rng.normal(size=4))}[kind]()
    s.bind(rng.normal(size=(3, 3)), random_quat(rng, 3))
    springs = pack_springs([s])
    x, q, v, w = random_state(rng, 3)
    f = np.zeros((3, 3))
    t = np.zeros((3, 3))
    spring_loads(springs, x, q, v, w, f, t)
    scale = np.abs(f).max() * (1 + np.abs(x).max()) + np.abs(t).max()
    assert scale > 1e-3
    assert np.abs(f.sum(axis=0)).max() <= 1e-13 * scale
    assert np.abs((np.cross(x, f) + t).sum(axis=0)).max() <= 1e-13 * scale


@pytest.mark.parametrize("kind", ["axial", "axial_world", "multipoint", "frame_iso", "frame_world"])
@pytest.mark.parametrize("seed", SEEDS)
def test_potential_falls_at_the_rate_of_the_spring_power(kind, seed):
    # Undamped: dV/dt = −Σ (F_i·v_i + τ_i·ω_i) along the motion x ← x + t v, q ← exp(t ω) q. dV/dt is taken by
    # central differences (ε = 1e-6: error ~1e-10 relative), so the tolerance is 1e-7 of the power's scale.
    rng = np.random.default_rng(seed)
    springs = pack_springs([make_spring(kind, rng, damped=False)])
    x, q, v, w = random_state(rng, 3)

    def energy(t):
        qt = np.array([qmul(rotvec_quat(t * w[i]), q[i]) for i in range(3)])
        return spring_potential_energy(springs, x + t * v, qt)

    eps = 1e-6
    rate = (energy(eps) - energy(-eps)) / (2 * eps)
    g = loads(springs, x, q, v, w).reshape(3, 6)
    power = float(np.sum(g[:, :3] * v) + np.sum(g[:, 3:] * w))
    scale = np.abs(g).max() * (np.abs(v).max() + np.abs(w).max())
    assert energy(0.0) > 1e-3
    assert abs(rate + power) <= 1e-7 * scale


def test_mass_on_a_spring_to_the_world_has_period_two_pi_sqrt_m_over_k():
    # Anchor at the COM of a tilted body, displaced along a random axis: a 1-D oscillator with period
    # 2π √(m/k). Integrated with velocity Verlet at T/2000, whose period error is (ωh)²/24 ≈ 4e-7, far below
    # the 0.5 % asked; the measured period comes from linear interpolation of 10 upward zero crossings.
    rng = np.random.default_rng(7)
    m, k, rest = 2.0, 50.0, 1.0
    axis = rng.normal(size=3)
    axis /= np.linalg.norm(axis)
    x = (rest * axis)[None, :].copy()
    q = random_quat(rng, 1)
    spring = AxialSpring(None, 0, np.zeros(3), x[0], k, rest_length=None)
    spring.bind(x, q)
    springs = pack_springs([spring])
    x += 0.1 * axis
    v = np.zeros((1, 3))
    w = np.zeros((1, 3))
    period = 2 * np.pi * np.sqrt(m / k)
    h = period / 2000
    f = np.zeros((1, 3))
    t = np.zeros((1, 3))
    spring_loads(springs, x, q, v, w, f, t)
    crossings = []
    prev = np.linalg.norm(x[0]) - rest
    for step in range(1, 2000 * 11):
        v += 0.5 * h * f / m
        x += h * v
        f[:] = 0.0
        spring_loads(springs, x, q, v, w, f, t)
        v += 0.5 * h * f / m
        cur = np.linalg.norm(x[0]) - rest
        if prev < 0.0 <= cur:
            crossings.append((step - 1 + (-prev) / (cur - prev)) * h)
        prev = cur
    measured = np.diff(crossings).mean()
    assert abs(measured - period) <= 5e-3 * period
    assert np.abs(t).max() <= 1e-12  # the anchor is at the COM: no torque


@pytest.mark.parametrize("rest", [None, 0.3])
def test_zero_length_spring_gives_finite_loads_and_jacobians(rest):
    a = AxialSpring(0, 1, [1.0, 2.0, 3.0], [1.0, 2.0, 3.0], 10.0, 1.0, rest_length=rest)
    x = np.array([[0.0, 0.0, 0.0], [1.0, 0.0, 0.0]])
    q = np.array([[1.0, 0.0, 0.0, 0.0], [1.0, 0.0, 0.0, 0.0]])
    a.bind(x, q)
    springs = pack_springs([a])
    v = np.array([[0.0, 1.0, 0.0], [0.0, 0.0, 1.0]])
    w = np.zeros((2, 3))
    f = np.zeros((2, 3))
    t = np.zeros((2, 3))
    spring_loads(springs, x, q, v, w, f, t)
    K, D = spring_jacobians(springs, x, q, v, w)
    assert np.all(f == 0.0) and np.all(t == 0.0)
    assert np.all(np.isfinite(K)) and np.all(np.isfinite(D))
    assert a.rest_length == (0.0 if rest is None else rest)


def test_rest_length_defaults_to_the_distance_at_creation():
    s = AxialSpring(0, None, [0.0, 0.0, 0.0], [3.0, 4.0, 0.0], 1.0)
    assert s.rest_length == 5.0
    m = MultiPointSpring([0, None, 1], [[0.0, 0.0, 0.0], [3.0, 4.0, 0.0], [3.0, 4.0, 2.0]], 1.0)
    assert m.rest_length == 7.0


def test_anchors_are_stored_body_local_and_loads_vanish_at_rest():
    rng = np.random.default_rng(3)
    x = rng.normal(size=(2, 3))
    q = random_quat(rng, 2)
    springs = [AxialSpring(0, 1, [0.1, 0.2, 0.3], [1.0, 1.0, 1.0], 10.0, 1.0),
               MultiPointSpring([0, None, 1], rng.normal(size=(3, 3)), 5.0, 1.0),
               FrameSpring(0, 1, [0.5, 0.0, 0.0], 10.0, 1.0, 5.0, 1.0, frame_orientation=rng.normal(size=4))]
    for s in springs:
        s.bind(x, q)
    f = np.zeros((2, 3))
    t = np.zeros((2, 3))
    spring_loads(pack_springs(springs), x, q, np.zeros((2, 3)), np.zeros((2, 3)), f, t)
    assert np.abs(f).max() < 1e-12 and np.abs(t).max() < 1e-12
    # A rigid motion of both bodies together leaves the springs between them at rest (the multi-point spring
    # has a world via point, so it is left out).
    turn = rotvec_quat(np.array([0.3, -0.2, 0.5]))
    R = quat_to_matrix(turn)
    frame_only = pack_springs([springs[0], springs[2]])
    x2 = x @ R.T + np.array([1.0, -2.0, 0.5])
    q2 = np.array([qmul(turn, qi) for qi in q])
    f[:] = 0.0
    t[:] = 0.0
    spring_loads(frame_only, x2, q2, np.zeros((2, 3)), np.zeros((2, 3)), f, t)
    assert np.abs(f).max() < 1e-12 and np.abs(t).max() < 1e-12


class Handle:
    def __init__(self, index, world):
        self.index = index
        self.world = world


@pytest.mark.parametrize(("make", "error", "words"), [
    (lambda: AxialSpring(0, 1, [0, 0, 0], [1, 0, 0], -1.0), ValueError, "stiffness must be non-negative, got -1.0"),
    (lambda: AxialSpring(0, 1, [0, 0, 0], [1, 0, 0], 1.0, damping=-2.0), ValueError, "damping must be non-negative"),
    (lambda: AxialSpring(0, 1, [0, 0, 0], [1, 0, 0], float("nan")), ValueError, "stiffness must be finite"),
    (lambda: AxialSpring(0, 1, [0, np.inf, 0], [1, 0, 0], 1.0), ValueError, "anchor_a must be finite"),
    (lambda: AxialSpring(0, 1, [0, 0], [1, 0, 0], 1.0), ValueError, "anchor_a must have shape (3,)"),
    (lambda: AxialSpring(0, 1, [0, 0, 0], [1, 0, 0], 1.0, rest_length=-1), ValueError, "rest_length must be non-n"),
    (lambda: AxialSpring(2, 2, [0, 0, 0], [1, 0, 0], 1.0), ValueError, "b must be a different body from a"),
    (lambda: AxialSpring(Handle(1, "W"), Handle(1, "W"), [0, 0, 0], [1, 0, 0], 1.0), ValueError, "index 1"),
    (lambda: AxialSpring(Handle(1, "W"), Handle(2, "V"), [0, 0, 0], [1, 0, 0], 1.0), ValueError,
     "b belongs to a different world"),
    (lambda: AxialSpring(None, None, [0, 0, 0], [1, 0, 0], 1.0), ValueError, "a and b are both None"),
    (lambda: AxialSpring("body", 1, [0, 0, 0], [1, 0, 0], 1.0), TypeError, "a must be a Body"),
    (lambda: AxialSpring(True, 1, [0, 0, 0], [1, 0, 0], 1.0), TypeError, "a must be a Body"),
    (lambda: AxialSpring(-1, 1, [0, 0, 0], [1, 0, 0], 1.0), ValueError, "a must be a non-negative body index"),
    (lambda: MultiPointSpring([0], [[0, 0, 0]], 1.0), ValueError, "bodies must name at least 2 points"),
    (lambda: MultiPointSpring([0, 0, 0], np.zeros((3, 3)), 1.0), ValueError, "a body and itself"),
    (lambda: MultiPointSpring([None, None], np.zeros((2, 3)), 1.0), ValueError, "bodies are all None"),
    (lambda: MultiPointSpring([0, 1], np.zeros((3, 3)), 1.0), ValueError, "points must have shape (2, 3)"),
    (lambda: FrameSpring(0, 0, [0, 0, 0], 1.0), ValueError, "b must be a different body from a"),
    (lambda: FrameSpring(0, 1, [0, 0, 0], [1.0, -1.0, 1.0]), ValueError, "stiffness must be non-negative"),
    (lambda: FrameSpring(0, 1, [0, 0, 0], 1.0, rotational_stiffness=-3.0), ValueError,
     "rotational_stiffness must be non-negative, got -3.0"),
    (lambda: FrameSpring(0, 1, [0, 0, 0], 1.0, frame_orientation=(0, 0, 0, 0)), ValueError, "frame_orientation"),
])
def test_bad_input_is_rejected_with_the_argument_named(make, error, words):
    with pytest.raises(error) as info:
        make()
    assert words in str(info.value)


def test_unbound_spring_and_out_of_range_body_are_rejected():
    s = AxialSpring(0, 3, [0, 0, 0], [1, 0, 0], 1.0)
    with pytest.raises(ValueError, match=r"springs\[0\] is not bound"):
        pack_springs([s])
    with pytest.raises(ValueError, match="body index 3, but x holds only 2 bodies"):
        s.bind(np.zeros((2, 3)), np.tile([1.0, 0, 0, 0], (2, 1)))
    assert not s.bound
    with pytest.raises(TypeError, match=r"springs\[0\] must be an AxialSpring"):
        pack_springs(["spring"])
