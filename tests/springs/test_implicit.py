"""Implicit integrators (ArtiSynth notes 0.9.2–0.9.4) on springs, against closed forms: the exact discrete energy
map of implicit Euler on a linear oscillator, the period 2π√(m/k), energy conservation of the trapezoidal rule,
the Störmer–Verlet stability limit ωh < 2 of Bridson–Marino, and symplectic Euler's limit for contrast."""

import numpy as np
import pytest
from spring_helpers import random_quat

import tumble.integration.implicit as implicit
from tumble.forces import AxialSpring, FrameSpring, MultiPointSpring, pack_springs
from tumble.integration.implicit import implicit_step

REST = 1.0


def oscillator(k, m=1.0, d=0.0, stretch=0.1):
    """One body on an axial spring to the world origin along x, anchor at its COM, stretched by ``stretch``.
    While the body stays on the +x side the load is exactly linear: m ẍ = −k (x − REST) − d ẋ."""
    mass = np.array([m])
    inv_mass = 1.0 / mass
    inertia = 0.1 * np.eye(3)[None]
    x = np.array([[REST, 0.0, 0.0]])
    q = np.array([[1.0, 0.0, 0.0, 0.0]])
    s = AxialSpring(None, 0, [0.0, 0.0, 0.0], x[0], k, d)
    s.bind(x, q)
    x = x + [[stretch, 0.0, 0.0]]
    return dict(mass=mass, inv_mass=inv_mass, inertia_body=inertia, x=x, q=q, v=np.zeros((1, 3)),
                w=np.zeros((1, 3)), force=np.zeros((1, 3)), torque=np.zeros((1, 3)), gravity=np.zeros(3),
                springs=pack_springs([s]))


def energy(st, k):
    return 0.5 * st["mass"][0] * st["v"][0] @ st["v"][0] + 0.5 * k * (st["x"][0, 0] - REST) ** 2


def step(method, st, h):
    implicit_step(method, st["mass"], st["inv_mass"], st["inertia_body"], st["x"], st["q"], st["v"], st["w"],
                  st["force"], st["torque"], st["gravity"], st["springs"], h)


def symplectic_euler(k, m, d, x, v, h, steps):
    """Reference (ArtiSynth notes 0.9.1): v ← v + h (−k (x − REST) − d v)/m, x ← x + h v; the largest |x − REST|."""
    most = 0.0
    for _ in range(steps):
        v = v + h * (-k * (x - REST) - d * v) / m
        x = x + h * v
        most = max(most, abs(x - REST))
    return most


def test_implicit_euler_is_stable_on_a_stiff_spring_where_symplectic_euler_explodes():
    # k = 1e6 N/m, m = 1 kg: ω = 1000 rad/s, ωh = 10 at h = 1e-2. Implicit Euler maps z = ωx + iv to
    # z / (1 + iωh), so the energy falls by exactly 1/(1 + ω²h²) = 1/101 per step; symplectic Euler is stable
    # only for ωh < 2 and its amplitude grows by ~ωh per step here.
    k, h = 1e6, 1e-2
    st = oscillator(k)
    e0 = energy(st, k)
    for n in range(1, 6):
        step("implicit_euler", st, h)
        assert energy(st, k) == pytest.approx(e0 / 101.0 ** n, rel=1e-9)
        assert abs(st["x"][0, 0] - REST) <= 0.1
    assert symplectic_euler(k, 1.0, 0.0, REST + 0.1, 0.0, h, 20) > 1e10


def test_implicit_euler_damps_an_undamped_oscillator_monotonically_by_the_closed_form_factor():
    k, h = 100.0, 1e-2
    st = oscillator(k)
    energies = [energy(st, k)]
    for _ in range(300):
        step("implicit_euler", st, h)
        energies.append(energy(st, k))
    energies = np.array(energies)
    assert np.all(np.diff(energies) < 0.0)
    factor = 1.0 / (1.0 + k * h * h)
    assert np.allclose(energies, energies[0] * factor ** np.arange(301), rtol=1e-9, atol=0.0)


def upward_crossings(values, h):
    values = np.asarray(values)
    i = np.flatnonzero((values[:-1] < 0.0) & (values[1:] >= 0.0))
    return (i + values[i] / (values[i] - values[i + 1])) * h


def test_trapezoidal_period_and_energy_of_a_linear_oscillator():
    # k = 100, m = 1: T = 2π/10 s. The trapezoidal rule's discrete frequency is (2/h) atan(ωh/2), a period
    # error of (ωh)²/12 ≈ 8e-6 at h = 1e-3, far inside the 0.5 % asked; it conserves the energy of a linear
    # oscillator exactly (a Cayley transform), so the drift over 10 periods is rounding only: < 1e-10.
    k, h = 100.0, 1e-3
    st = oscillator(k)
    e0 = energy(st, k)
    stretch = []
    for _ in range(int(10.5 * 2 * np.pi / 10.0 / h)):
        step("trapezoidal", st, h)
        stretch.append(st["x"][0, 0] - REST)
    period = np.diff(upward_crossings(stretch, h)).mean()
    assert abs(period - 2 * np.pi / 10.0) <= 5e-3 * 2 * np.pi / 10.0
    assert abs(period - 2 * np.pi / 10.0) <= 1e-4 * 2 * np.pi / 10.0
    assert abs(energy(st, k) - e0) <= 1e-10 * e0


def test_bridson_marino_is_stable_for_stiff_damping_where_symplectic_euler_explodes():
    # k = 1e6, d = 1e4 (damping ratio 5), h = 1e-2: ωh = 10 and hd/m = 100. The damping is implicit, and
    # heavy enough to hold the explicit elastic part; symplectic Euler is unstable once hd/m > 2.
    k, d, h = 1e6, 1e4, 1e-2
    st = oscillator(k, d=d)
    e0 = energy(st, k)
    for _ in range(500):
        step("bridson_marino", st, h)
        assert energy(st, k) <= e0
    assert energy(st, k) < 1e-12 * e0
    assert symplectic_euler(k, 1.0, d, REST + 0.1, 0.0, h, 20) > 1e10


@pytest.mark.parametrize(("omega_h", "stable"), [(1.9, True), (2.1, False)])
def test_bridson_marino_undamped_stability_limit_is_omega_h_two(omega_h, stable):
    # Without damping Bridson–Marino steps the elastic force explicitly: it is Störmer–Verlet, stable iff
    # ωh < 2 (its amplification matrix has trace 2 − ω²h²). So a stiff undamped spring needs h < 2/ω.
    k = 1e6
    h = omega_h / 1000.0
    st = oscillator(k)
    e0 = energy(st, k)
    peak = 0.0
    with np.errstate(all="ignore"):
        for _ in range(400):
            step("bridson_marino", st, h)
            peak = max(peak, energy(st, k))
            if not np.isfinite(peak) or peak > 1e6 * e0:
                break
    # Verlet's energy oscillates by a factor 1/(1 − ω²h²/4) ≈ 10 at ωh = 1.9 but stays bounded.
    assert (peak < 20 * e0) == stable


def test_free_fall_is_the_exact_discrete_prediction():
    # No springs: implicit Euler is symplectic Euler, v⁺ = v + h g, x⁺ = x + h v⁺ (and ω = 0 stays 0).
    st = oscillator(1.0)
    st["springs"] = None
    st["gravity"] = np.array([0.0, 0.0, -9.81])
    x0 = st["x"].copy()
    h = 0.01
    for method in ("implicit_euler", "trapezoidal", "bridson_marino"):
        st["x"][:] = x0
        st["v"][:] = 0.0
        for _ in range(10):
            step(method, st, h)
        # implicit Euler: z = −g h² n(n+1)/2; trapezoidal and Bridson–Marino are exact for constant g: −g t²/2.
        expect = -9.81 * h * h * 55 if method == "implicit_euler" else -9.81 * 0.1 ** 2 / 2
        assert st["x"][0, 2] == pytest.approx(expect, rel=1e-12)
        assert st["v"][0, 2] == pytest.approx(-9.81 * 0.1, rel=1e-12)


def test_fixed_body_stays_put_and_stiff_frame_spring_is_stable():
    # Body 0 fixed, body 1 tied to it by a stiff frame spring (k_r = 1e6 N m/rad on I = 0.1 kg m²:
    # ω = 3162 rad/s, ωh = 32) and spinning: implicit Euler keeps it bounded, and body 0 does not move.
    rng = np.random.default_rng(1)
    x = np.array([[0.0, 0.0, 0.0], [0.5, 0.0, 0.0]])
    q = random_quat(rng, 2)
    fs = FrameSpring(0, 1, [0.25, 0.0, 0.0], 1e6, 0.0, 1e6, 0.0)
    fs.bind(x, q)
    st = dict(mass=np.array([1.0, 1.0]), inv_mass=np.array([0.0, 1.0]),
              inertia_body=np.stack([0.1 * np.eye(3)] * 2), x=x, q=q, v=np.zeros((2, 3)),
              w=np.array([[0.0, 0.0, 0.0], [0.3, -0.2, 0.4]]), force=np.zeros((2, 3)), torque=np.zeros((2, 3)),
              gravity=np.array([0.0, 0.0, -9.81]), springs=pack_springs([fs]))
    fixed = (st["x"][0].copy(), st["q"][0].copy())
    for _ in range(200):
        step("implicit_euler", st, 1e-2)
    assert np.array_equal(st["x"][0], fixed[0]) and np.array_equal(st["q"][0], fixed[1])
    assert np.abs(st["w"][1]).max() < 0.4 and np.abs(st["x"][1] - [0.5, 0.0, 0.0]).max() < 1e-3
    assert abs(np.linalg.norm(st["q"][1]) - 1.0) < 1e-12


def test_sparse_solve_matches_dense(monkeypatch):
    # A chain of 60 bodies (over DENSE_MAX_BODIES) stepped by the sparse path (NumPy/SciPy assembly, SuperLU)
    # and, with the threshold raised, by the dense kernel (its own assembly and LU, implicit_dense_step): two
    # implementations of the same system, so they agree to rounding. Axial, multi-point and frame springs.
    rng = np.random.default_rng(5)
    n = 60
    x = np.c_[np.arange(n, dtype=float), np.zeros(n), np.zeros(n)]
    q = random_quat(rng, n)
    springs = [AxialSpring(None, 0, [-1.0, 0.0, 0.0], x[0], 1e4, 1.0)]
    springs += [AxialSpring(i, i + 1, x[i] + rng.normal(size=3) * 0.1, x[i + 1], 1e4, 1.0) for i in range(n - 1)]
    springs += [MultiPointSpring([3, 7, 12], [x[3], x[7] + [0, 0.2, 0], x[12]], 5e3, 2.0),
                FrameSpring(20, 21, x[20] + [0.5, 0.1, 0], 3e3, 1.0, 50.0, 0.5),
                FrameSpring(None, 40, x[40], [1e3, 2e3, 3e3], 0.5, [10.0, 20.0, 30.0], 0.2)]
    for s in springs:
        s.bind(x, q)
    packed = pack_springs(springs)
    base = dict(mass=np.ones(n), inv_mass=np.ones(n), inertia_body=np.stack([0.1 * np.eye(3)] * n),
                x=x + rng.normal(size=(n, 3)) * 0.05, q=q, v=rng.normal(size=(n, 3)), w=rng.normal(size=(n, 3)),
                force=np.zeros((n, 3)), torque=np.zeros((n, 3)), gravity=np.array([0.0, 0.0, -9.81]),
                springs=packed)
    results = []
    for limit in (50, 1000):
        monkeypatch.setattr(implicit, "DENSE_MAX_BODIES", limit)
        for method in ("implicit_euler", "trapezoidal", "bridson_marino"):
            st = {key: (val.copy() if isinstance(val, np.ndarray) else val) for key, val in base.items()}
            step(method, st, 1e-2)
            results.append(np.concatenate([st["x"], st["q"], st["v"], st["w"]], axis=1))
    for sparse, dense in zip(results[:3], results[3:], strict=True):
        assert np.allclose(sparse, dense, rtol=0.0, atol=1e-10)
    # the springs' implicit loads (for a step with contacts or joints) the same way
    loads = []
    for limit in (50, 1000):
        monkeypatch.setattr(implicit, "DENSE_MAX_BODIES", limit)
        force, torque = np.zeros((n, 3)), np.zeros((n, 3))
        implicit.implicit_spring_loads(base["mass"], base["inv_mass"], base["inertia_body"], base["x"], base["q"],
                                       base["v"], base["w"], packed, 1e-2, force, torque)
        loads.append(np.concatenate([force, torque], axis=1))
    assert np.abs(loads[0]).max() > 1.0
    assert np.allclose(loads[0], loads[1], rtol=0.0, atol=1e-8 * np.abs(loads[0]).max())


def test_bad_input_is_rejected_before_anything_changes():
    st = oscillator(10.0)
    before = {key: st[key].copy() for key in ("x", "q", "v", "w")}
    cases = [
        (("implicit", 1e-3), ValueError, "method must be one of"),
        ((3, 1e-3), TypeError, "method must be a string"),
        (("trapezoidal", 0.0), ValueError, "h must be positive, got 0.0"),
        (("trapezoidal", float("inf")), ValueError, "h must be finite"),
    ]
    for (method, h), error, words in cases:
        with pytest.raises(error, match=words):
            step(method, st, h)
    st["v"] = np.zeros((2, 3))
    with pytest.raises(ValueError, match=r"v must be a float64 array of shape \(1, 3\)"):
        step("implicit_euler", st, 1e-3)
    st["v"] = before["v"].copy()
    st["springs"] = "springs"
    with pytest.raises(TypeError, match="springs must be SpringArrays"):
        step("implicit_euler", st, 1e-3)
    for key in ("x", "q", "v", "w"):
        assert np.array_equal(st[key], before[key])
