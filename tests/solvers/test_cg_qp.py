"""cg_qp (MPRGP) on seed 004's frictionless sphere contact problem, whose contact forces are known in closed
form by statics, and on random problems against lemke."""

from __future__ import annotations

import numpy as np
import pytest
from lcp_cases import error_bound, known_lcp, natural_residual
from scipy.spatial.transform import Rotation

from tumble.solvers import cg_qp, lemke

G = 9.81


def skew(s):
    return np.array([[0.0, -s[2], s[1]], [s[2], 0.0, -s[0]], [-s[1], s[0], 0.0]])


def sphere_problem(centres, radii, masses, contacts, seed=0):
    """Seed 004's frictionless problem for spheres under gravity, at rest.

    M = blockdiag(M_1, J̄_1, …, M_nb, J̄_nb) (6 nb, 6 nb) with M_i = m_i I₃ and J̄_i the inertia in the body's
    local reference frame (a random rotation A_i and random principal moments: spheres are uniform, but the
    seed's formulas do not care, and the angular blocks should be exercised). D = [D_1 … D_nc] (6 nb, nc): the
    column of contact i holds, for each body k in it, (n_k, b̄_k) with n_k the contact normal pointing into
    body k (opposite for the two bodies), n̄_k = A_kᵀ n_k, s̄_k the contact point relative to the centre in the
    local frame and b̄_k = s̃̄_k n̄_k. ``contacts`` lists (a, b, n): body a (or −1, the fixed ground/wall) and
    body b, n the unit normal pointing from b into a. f is gravity. Returns (N = Dᵀ M⁻¹ D, r = Dᵀ M⁻¹ f).
    """
    nb = len(masses)
    rng = np.random.default_rng(seed)
    rotations = Rotation.random(nb, random_state=rng).as_matrix()
    M = np.zeros((6 * nb, 6 * nb))
    f = np.zeros(6 * nb)
    for k in range(nb):
        M[6 * k:6 * k + 3, 6 * k:6 * k + 3] = masses[k] * np.eye(3)
        moments = rng.uniform(0.5, 1.5, 3) * 0.4 * masses[k] * radii[k] ** 2
        M[6 * k + 3:6 * k + 6, 6 * k + 3:6 * k + 6] = np.diag(moments)
        f[6 * k + 2] = -masses[k] * G
    D = np.zeros((6 * nb, len(contacts)))
    for i, (a, b, n) in enumerate(contacts):
        n = np.asarray(n, dtype=float)
        for body, normal in ((a, n), (b, -n)):
            if body < 0:
                continue
            point = centres[body] - radii[body] * normal          # on the sphere, where the normal enters it
            s_bar = rotations[body].T @ (point - centres[body])
            n_bar = rotations[body].T @ normal
            D[6 * body:6 * body + 3, i] = normal
            D[6 * body + 3:6 * body + 6, i] = skew(s_bar) @ n_bar
    Minv = np.linalg.inv(M)
    return D.T @ Minv @ D, D.T @ Minv @ f


def test_seed004_vertical_stack():
    """Three spheres stacked on the ground: at rest, each contact carries the weight of everything above it,
    λ = g (m1 + m2 + m3, m2 + m3, m3), with zero relative normal acceleration (c = Nλ + r = 0)."""
    radii = [0.5, 0.3, 0.2]
    masses = [3.0, 1.5, 0.7]
    z = [0.5, 0.5 + 0.5 + 0.3, 0.5 + 0.5 + 0.3 + 0.3 + 0.2]
    centres = [np.array([0.0, 0.0, zi]) for zi in z]
    up = [0.0, 0.0, 1.0]
    N, r = sphere_problem(centres, radii, masses, [(0, -1, up), (1, 0, up), (2, 1, up)])
    expected = G * np.array([sum(masses), masses[1] + masses[2], masses[2]])
    result = cg_qp(N, r)
    assert result.ok
    # 1e-10 relative: a 3×3 well-conditioned system (entries ~1/m), solved to tol 1e-10 and then exactly by CG
    assert np.max(np.abs(result.x - expected)) < 1e-10 * np.max(expected)
    assert np.max(np.abs(N @ result.x + r)) < 1e-10 * np.max(np.abs(r))
    exact = lemke(N, r)
    assert exact.ok and np.max(np.abs(exact.x - expected)) < 1e-10 * np.max(expected)


def test_seed004_pyramid_between_walls():
    """Two spheres on the ground, apart, and a third resting on both, the lower two held by walls: statics
    gives every contact force. With θ the angle of a top contact from the vertical, each top contact carries
    F = m_top g / (2 cos θ); the ground under bottom sphere k carries m_k g + F cos θ, each wall F sin θ."""
    R = 0.5
    d = 0.8                                   # half the distance between the bottom centres (> R: a gap)
    zt = R + np.sqrt(4 * R**2 - d**2)         # the top sphere touches both bottom ones
    centres = [np.array([-d, 0.0, R]), np.array([d, 0.0, R]), np.array([0.0, 0.0, zt])]
    masses = [2.0, 3.0, 1.2]
    n_left = (centres[2] - centres[0]) / (2 * R)
    n_right = (centres[2] - centres[1]) / (2 * R)
    contacts = [(2, 0, n_left), (2, 1, n_right), (0, -1, [0, 0, 1.0]), (1, -1, [0, 0, 1.0]),
                (0, -1, [1.0, 0, 0]), (1, -1, [-1.0, 0, 0])]
    N, r = sphere_problem(centres, [R, R, R], masses, contacts, seed=3)
    cos, sin = n_left[2], n_left[0]
    F = masses[2] * G / (2 * cos)
    expected = np.array([F, F, masses[0] * G + F * cos, masses[1] * G + F * cos, F * sin, F * sin])
    assert np.linalg.eigvalsh(N)[0] > 1e-3   # six independent in-plane contacts: N is positive definite
    result = cg_qp(N, r)
    assert result.ok
    # 1e-9 relative: N's condition number here is ~1e2, so a residual of 1e-10 moves λ by ~1e-8 at most
    assert np.max(np.abs(result.x - expected)) < 1e-9 * np.max(expected)
    exact = lemke(N, r)
    assert exact.ok and np.max(np.abs(exact.x - expected)) < 1e-9 * np.max(expected)


def test_seed004_separating_contact():
    """A contact that is pulled apart gets no force: a sphere on the ground under gravity plus an upward force
    larger than its weight (r < 0 flipped): λ = 0 for it, while a resting neighbour still carries its weight."""
    radii, masses = [0.5, 0.5], [1.0, 2.0]
    centres = [np.array([0.0, 0.0, 0.5]), np.array([2.0, 0.0, 0.5])]
    N, r = sphere_problem(centres, radii, masses, [(0, -1, [0, 0, 1.0]), (1, -1, [0, 0, 1.0])])
    r = r.copy()
    r[0] = 5.0                     # contact 0 separates by itself (c = 5 > 0 at λ = 0)
    result = cg_qp(N, r)
    assert result.ok
    assert result.x[0] == 0.0 and result.x[1] == pytest.approx(masses[1] * G, rel=1e-12)


@pytest.mark.parametrize("n", [5, 30, 120])
def test_random_against_lemke(n):
    rng = np.random.default_rng(700 + n)
    A = rng.standard_normal((n, n))
    N = A.T @ A / n + 0.05 * np.eye(n)
    b = rng.standard_normal(n)
    exact = lemke(N, b)
    result = cg_qp(N, b, tol=1e-12)
    assert exact.ok and result.ok
    # 1e-8 (the brief): both are exact methods up to rounding; tol 1e-12 with cond(N) <= ~90 bounds the gap
    # by error_bound ≈ 1e-9 here
    assert np.max(np.abs(result.x - exact.x)) < 1e-8
    assert np.max(np.abs(result.x - exact.x)) <= error_bound(N, natural_residual(N, b, result.x)) + \
        error_bound(N, natural_residual(N, b, exact.x)) + 1e-14


@pytest.mark.parametrize("n", [10, 80])
def test_known_solution(n):
    rng = np.random.default_rng(800 + n)
    N, b, x_star, _ = known_lcp(n, rng, "pd")
    result = cg_qp(N, b)
    assert result.ok and np.max(np.abs(result.x - x_star)) < 1e-9   # tol 1e-10 · error bound factor ~41·√n
    Np, bp, _, w_star = known_lcp(n, rng, "psd")
    result = cg_qp(Np, bp)
    assert result.ok and natural_residual(Np, bp, result.x) <= 1e-10
    # w is unique for PSD N; MPRGP ends with CG on the free set, so it is accurate to ~1e-9 here
    assert np.max(np.abs(Np @ result.x + bp - w_star)) < 1e-8


def test_expansion_fixes_many_bounds_at_once():
    """MPRGP's expansion step (a reduced gradient projection) can put many λ_i on their bound in one step. Here
    N ≈ I (eigenvalues in [1, 1.001]) and b_i >= 0.5 on 150 rows: from λ = 1 one projected step of length
    ᾱ = 1.9 / ‖N‖ ≈ 1.89 > 1 / 1.5 sends all 150 to zero, so a handful of iterations suffice, where a method
    that fixes one bound per feasible step needs >= 150."""
    rng = np.random.default_rng(13)
    n = 200
    B = rng.standard_normal((n, n)) / n
    N = np.eye(n) + 0.05 * B @ B.T
    b = np.where(np.arange(n) < 150, rng.uniform(0.5, 1.0, n), -rng.uniform(0.5, 1.0, n))
    result = cg_qp(N, b, x0=np.ones(n))
    assert result.ok and result.iterations <= 10
    assert np.all(result.x[:150] == 0.0) and np.all(result.x[150:] > 0.0)


def test_unbounded_qp_is_infeasible():
    """N = [[1, −1], [−1, 1]] (PSD), b = (−1, −1): ½(λ1 − λ2)² − λ1 − λ2 falls without bound along (1, 1),
    and the LCP has no feasible point (w1 + w2 = −2). cg_qp reports "infeasible"; lemke agrees."""
    N = np.array([[1.0, -1.0], [-1.0, 1.0]])
    b = np.array([-1.0, -1.0])
    result = cg_qp(N, b)
    assert result.status == "infeasible" and not result.ok
    assert lemke(N, b).status == "infeasible"
    result = cg_qp(np.zeros((2, 2)), [-1.0, 0.0])      # N = 0: λ1 grows for ever
    assert result.status == "infeasible"


def test_indefinite_is_degenerate():
    """N = [[1, −2], [−2, 1]] (eigenvalues −1, 3) is not PSD: the first (proportioning) direction from λ = 0,
    the chopped gradient (−1, −1), has curvature −2, and cg_qp stops with "degenerate" rather than iterate."""
    result = cg_qp(np.array([[1.0, -2.0], [-2.0, 1.0]]), np.array([-1.0, -1.0]))
    assert result.status == "degenerate" and not result.ok


def test_iteration_cap_and_warm_start():
    rng = np.random.default_rng(12)
    N, b, x_star, _ = known_lcp(60, rng, "pd")
    r = cg_qp(N, b, iterations=2, tol=0.0)
    assert r.status == "max_iterations" and r.iterations == 2
    r = cg_qp(N, b, x0=x_star, tol=1e-10)
    assert r.ok and r.iterations == 0
