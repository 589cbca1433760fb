"""tumble.solvers.contact_problem: the next step's contact problem as matrices (issue 12, item 4).

N is checked against the bodies' own impulse response (Body.apply_impulse and point_velocity, Baraff II
(8-12)), b against closed forms, and the frictionless LCP's solution, found here by SciPy's bounded QP
(ArtiSynth notes 0.3: the LCP of a symmetric positive semidefinite N is that QP), against the closed-form
weight and against what the step itself does.
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy.optimize import minimize

import tumble as tb
from tumble.constraints.contact_rows import tangent_basis
from tumble.solvers.contact_problem import contact_problem

DT = 1.0 / 240.0
G = 9.81


def _qp_lcp(N: np.ndarray, b: np.ndarray) -> np.ndarray:
    """0 ≤ λ ⊥ N λ + b ≥ 0 as min ½ λᵀ N λ + bᵀ λ, λ ≥ 0 (N symmetric PSD), by L-BFGS-B."""
    res = minimize(lambda x: 0.5 * x @ N @ x + b @ x, np.zeros(len(b)), jac=lambda x: N @ x + b,
                   bounds=[(0.0, None)] * len(b), method="L-BFGS-B", options={"ftol": 1e-16, "gtol": 1e-14,
                                                                            "maxiter": 10000})
    return res.x


def _stack(n: int, gap: float = 0.0, **options) -> tuple[tb.World, list]:
    """n boxes (0.4 m, 1.5 kg) stacked on the ground, each 1 cm beside the one below, ``gap`` [m] apart."""
    world = tb.World(**options)
    world.add_ground()
    boxes = [world.add_body(tb.Box(0.4, 0.4, 0.4), mass=1.5, position=(0.01 * i, 0, 0.2 + (0.4 + gap) * i + gap))
             for i in range(n)]
    return world, boxes


def test_resting_box_normal_lcp_carries_the_weight():
    """A box at rest: b_n = −g dt on its 4 normal rows (v* = −g dt; the gaps are within the slop), and the
    frictionless LCP's impulses sum to m g dt (1e-8 relative: the QP's accuracy) and stop the box."""
    world = tb.World()
    world.add_ground()
    world.add_body(tb.Box(0.2, 0.3, 0.4), mass=2.0, position=(0.1, -0.2, 0.2))
    problem = contact_problem(world, DT)
    N, b = problem.normal_lcp()
    assert len(b) == 4
    np.testing.assert_allclose(b, -G * DT, rtol=1e-12)
    lam = _qp_lcp(N, b)
    assert lam.sum() == pytest.approx(2.0 * G * DT, rel=1e-8)
    impulses = np.zeros(3 * len(b))
    impulses[problem.normal_rows] = lam
    np.testing.assert_allclose(problem.velocities(impulses)[:6], 0.0, atol=1e-8)


def test_n_is_the_bodies_impulse_response():
    """Column j of N is the change of every row's relative velocity when a unit impulse acts along row j
    (+ on A, − on B at the contact point): measured with Body.apply_impulse and point_velocity on a
    2-box stack turned and spinning, 1e-12 relative."""
    world, boxes = _stack(2, gravity=(0, 0, 0))
    boxes[1].angular_velocity = (0.3, -0.2, 0.5)
    boxes[1].orientation = (np.cos(0.1), 0.0, 0.0, np.sin(0.1))
    problem = contact_problem(world, DT)
    c = problem.contacts
    assert len(c) >= 8
    bodies = world.bodies

    def row_velocities() -> np.ndarray:
        out = np.empty(3 * len(c))
        for i in range(len(c)):
            rel = bodies[c.body_a[i]].point_velocity(c.point[i]) - bodies[c.body_b[i]].point_velocity(c.point[i])
            for d in range(3):
                direction = _row_direction(problem, i, d)
                out[3 * i + d] = rel @ direction
        return out

    base = row_velocities()
    for j in range(3 * len(c)):
        i, d = divmod(j, 3)
        snapshot = world.snapshot()
        direction = _row_direction(problem, i, d)
        bodies[c.body_a[i]].apply_impulse(direction, c.point[i])
        bodies[c.body_b[i]].apply_impulse(-direction, c.point[i])
        np.testing.assert_allclose(row_velocities() - base, problem.N[:, j], rtol=1e-12, atol=1e-12)
        world.restore(snapshot)


def _row_direction(problem, i: int, d: int) -> np.ndarray:
    """Row 3i + d's unit direction: the normal, or the tangents of the solver's convention (t1 ⟂ n from n
    alone, t2 = n × t1)."""
    basis = tangent_basis(*problem.contacts.normal[i])
    return (problem.contacts.normal[i], np.array(basis[:3]), np.array(basis[3:]))[d]


@pytest.mark.parametrize("n", [1, 3])
def test_frictionless_lcp_matches_the_step(n):
    """friction="none", one sub-step and many sweeps: the step's velocities after the solve equal v⁺ of the
    LCP's solution (1e-6 m/s: the step's sweeps stop at tolerance 1e-9 m/s per row, 200 sweeps at most,
    and the QP's own accuracy), starting from boxes dropped 1 mm onto each other (speculative rows)."""
    world, boxes = _stack(n, 0.001, friction="none", substeps=1, iterations=200, tolerance=1e-9, sleep=False,
                          relax_iterations=0)
    for box in boxes:
        box.velocity = (0.0, 0.0, -0.3)
    problem = contact_problem(world, DT)
    N, b = problem.normal_lcp()
    impulses = np.zeros(len(problem.b))
    impulses[problem.normal_rows] = _qp_lcp(N, b)
    expected = problem.velocities(impulses).reshape(-1, 6)
    world.step(DT)
    got = np.concatenate([world.state_arrays()["v"], world.state_arrays()["w"]], axis=1)
    assert len(got) == n + 1  # the ground and the boxes
    np.testing.assert_allclose(got, expected, atol=1e-6)


def test_box_bounds_and_bad_input():
    world, _ = _stack(1, friction="cone")
    problem = contact_problem(world, DT)
    lo, hi = problem.box_bounds(np.full(len(problem.contacts), 2.0))
    mu = problem.mu[0]
    assert np.all(lo[problem.normal_rows] == 0.0) and np.all(np.isinf(hi[problem.normal_rows]))
    np.testing.assert_allclose(np.delete(hi, problem.normal_rows), 2.0 * mu)
    np.testing.assert_allclose(np.delete(lo, problem.normal_rows), -2.0 * mu)
    with pytest.raises(ValueError, match="dt"):
        contact_problem(world, -1.0)
    with pytest.raises(ValueError, match="normal_estimate"):
        problem.box_bounds(np.ones(3))
    with pytest.raises(ValueError, match="directions"):
        problem.pyramid_lcp(2)


@pytest.mark.parametrize("mu, sliding", [(0.3, True), (0.5, False)])
def test_pyramid_lcp_by_lemke_gives_the_incline_closed_form(mu, sliding):
    """A 1 kg box on a fixed slab tilted 20° about y, moving down the slope at 1 m/s (μ = 0.3, sliding) or
    at rest (μ = 0.5 > tan 20°, sticking). The Anitescu–Stewart LCP (k = 8; the slope runs along a
    direction of the pyramid, where it equals the cone) solved by Lemke's method gives v⁺ with the
    closed-form downslope change g (sin θ − μ cos θ) dt, or v⁺ = 0 when sticking; no normal velocity.
    1e-9 m/s: Lemke is exact to rounding on this 4-contact problem."""
    from tumble.solvers.pivoting import lemke

    theta = np.radians(20.0)
    q = np.array([np.cos(theta / 2), 0.0, np.sin(theta / 2), 0.0])
    normal = np.array([np.sin(theta), 0.0, np.cos(theta)])
    down = np.array([np.cos(theta), 0.0, -np.sin(theta)])
    world = tb.World()
    world.add_body(tb.Box(4.0, 4.0, 0.2), orientation=q, fixed=True, friction=mu)
    box = world.add_body(tb.Box(0.2, 0.2, 0.2), mass=1.0, position=0.2 * normal, orientation=q, friction=mu)
    if sliding:
        box.velocity = down
    problem = contact_problem(world, DT)
    M, qv, to_impulses = problem.pyramid_lcp(8)
    result = lemke(M, qv)
    assert result.ok
    v = problem.velocities(to_impulses(result.x)).reshape(-1, 6)[1]
    expected = G * (np.sin(theta) - mu * np.cos(theta)) * DT + 1.0 if sliding else 0.0
    assert v[:3] @ down == pytest.approx(expected, abs=1e-9)
    assert abs(v[:3] @ normal) < 1e-9 and np.linalg.norm(v[3:]) < 1e-9


def _scene(name: str) -> tb.World:
    """The issue's real scenes: a resting box, a 5-box stack, a 100-sphere pile (5 × 5 × 4 touching
    spheres on the ground, each touching its lattice neighbours: ~400 contacts)."""
    if name == "box":
        world = tb.World()
        world.add_ground()
        world.add_body(tb.Box(0.2, 0.3, 0.4), mass=2.0, position=(0.1, -0.2, 0.2))
        return world
    if name == "stack":
        return _stack(5)[0]
    world = tb.World()
    world.add_ground()
    for i in range(5):
        for j in range(5):
            for k in range(4):
                world.add_body(tb.Sphere(0.1), mass=0.5, position=(0.2 * i, 0.2 * j, 0.1 + 0.2 * k))
    return world


@pytest.mark.parametrize("scene", ["box", "stack", "spheres"])
def test_every_solver_agrees_with_lemke_on_real_scenes(scene):
    """The frictionless LCP of each scene by pgs, apgd and cg_qp: the velocities they leave agree with
    Lemke's within 1e-6 m/s, each at a residual < 1e-8 (the impulses themselves are not unique where N is
    singular, as under a box's 4 coplanar contacts; v⁺ = v* + M⁻¹ Dᵀ λ is)."""
    from tumble.solvers import apgd, cg_qp, lemke, pgs

    problem = contact_problem(_scene(scene), DT)
    N, b = problem.normal_lcp()
    exact = lemke(N, b)
    assert exact.ok and exact.residual < 1e-12

    def velocities(lam: np.ndarray) -> np.ndarray:
        impulses = np.zeros(len(problem.b))
        impulses[problem.normal_rows] = lam
        return problem.velocities(impulses)

    reference = velocities(exact.x)
    assert np.abs(reference[2::6]).max() < 1e-9  # every body stops: the scenes are at rest
    for result in (pgs(N, b, iterations=20000, tol=1e-12), apgd(N, b, iterations=20000, tol=1e-12),
                   cg_qp(N, b, tol=1e-12)):
        assert result.residual < 1e-8, result
        np.testing.assert_allclose(velocities(result.x), reference, atol=1e-6)
