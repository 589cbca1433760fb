"""pgs and apgd (tumble.solvers) against LCPs and box-constrained LCPs with known solutions, SciPy's QP solver
and an independent projected-gradient iteration."""

from __future__ import annotations

import numpy as np
import pytest
from lcp_cases import error_bound, known_box, known_lcp, natural_residual, qp_reference

from tumble.solvers import apgd, lemke, pgs, projected

SOLVERS = {
    "pgs": lambda M, q, **kw: pgs(M, q, iterations=kw.pop("iterations", 5000), **kw),
    "apgd": lambda M, q, **kw: apgd(M, q, iterations=kw.pop("iterations", 5000), **kw),
}


@pytest.mark.parametrize("name", SOLVERS)
@pytest.mark.parametrize("n", [5, 30, 100, 200])
def test_known_lcp_positive_definite(name, n):
    rng = np.random.default_rng(400 + n)
    M, q, x_star, _ = known_lcp(n, rng, "pd")
    r = SOLVERS[name](M, q, tol=1e-8)
    assert r.ok and r.status == "converged"
    res = natural_residual(M, q, r.x)
    assert res <= 1e-8 and r.residual == pytest.approx(res, abs=1e-15)
    # the brief's 1e-6 on the residual, and the distance to the known solution within the error bound the
    # residual implies for a PD M ((1 + ‖M‖)/λ_min · √n · res <= ~41 · 15 · 1e-8 ≈ 6e-6): a solver that
    # stopped on a wrong point with a small residual would violate it.
    assert res < 1e-6
    assert np.max(np.abs(r.x - x_star)) <= error_bound(M, res) + 1e-15


@pytest.mark.parametrize("name", SOLVERS)
@pytest.mark.parametrize("n", [9, 60, 150])
def test_known_box_problem(name, n):
    """Box constraints with a known solution: some x* at lo, some at hi, some free, some bounds infinite."""
    rng = np.random.default_rng(500 + n)
    M, q, lo, hi, x_star = known_box(n, rng)
    r = SOLVERS[name](M, q, lo=lo, hi=hi, tol=1e-9)
    assert r.ok
    res = natural_residual(M, q, r.x, lo, hi)
    assert res <= 1e-9
    assert np.all(r.x >= lo) and np.all(r.x <= hi)
    assert np.max(np.abs(r.x - x_star)) <= error_bound(M, res) + 1e-15


@pytest.mark.parametrize("name", SOLVERS)
@pytest.mark.parametrize("seed", range(4))
def test_agrees_with_scipy_qp(name, seed):
    """ArtiSynth notes 0.3: the box LCP with M symmetric PD is the QP min ½xᵀMx + qᵀx over the box."""
    rng = np.random.default_rng(600 + seed)
    n = int(rng.integers(4, 20))
    A = rng.standard_normal((n, n))
    M = A.T @ A / n + 0.2 * np.eye(n)
    q = rng.standard_normal(n)
    lo, hi = -rng.uniform(0.0, 1.0, n), rng.uniform(0.0, 1.0, n)
    r = SOLVERS[name](M, q, lo=lo, hi=hi, tol=1e-11)
    assert r.ok
    # 1e-6: L-BFGS-B's own accuracy (projected gradient ~1e-10..1e-8 times the error bound factor ~25)
    assert np.max(np.abs(r.x - qp_reference(M, q, lo, hi))) < 1e-6


@pytest.mark.parametrize("name", SOLVERS)
def test_positive_semidefinite(name):
    rng = np.random.default_rng(7)
    M, q, _, w_star = known_lcp(40, rng, "psd")
    r = SOLVERS[name](M, q, tol=1e-9, iterations=20000)
    assert r.ok
    assert natural_residual(M, q, r.x) <= 1e-9
    # w = Mx + q is unique for a PSD M (module lcp_cases); how close it is depends on the problem's
    # conditioning on the null space, so only a loose 1e-5 is claimed for these first-order methods.
    assert np.max(np.abs(M @ r.x + q - w_star)) < 1e-5


@pytest.mark.parametrize("name", SOLVERS)
def test_agrees_with_lemke(name):
    rng = np.random.default_rng(8)
    M, q, _, _ = known_lcp(50, rng, "pd")
    q = q + rng.normal(0.0, 0.3, 50)       # no longer the constructed answer: compare with lemke instead
    exact = lemke(M, q)
    r = SOLVERS[name](M, q, tol=1e-10)
    assert exact.ok and r.ok
    assert np.max(np.abs(r.x - exact.x)) <= error_bound(M, natural_residual(M, q, r.x)) + 1e-12


def test_apgd_is_accelerated():
    """On an ill-conditioned box problem (κ = 1e4) whose solution is mostly interior, accelerated projected
    gradient with restart needs O(√κ log 1/ε) iterations; a plain projected gradient with the same step
    (written out here) needs O(κ log 1/ε) and is far from converged after the same budget."""
    rng = np.random.default_rng(9)
    n = 60
    Q, _ = np.linalg.qr(rng.standard_normal((n, n)))
    M = Q @ np.diag(np.geomspace(1e-4, 1.0, n)) @ Q.T
    M = 0.5 * (M + M.T)
    lo, hi = -np.ones(n), np.ones(n)
    x_star, w_star = rng.uniform(-0.5, 0.5, n), np.zeros(n)
    x_star[:5], w_star[:5] = -1.0, rng.uniform(0.1, 1.0, 5)      # five rows at lo, five at hi
    x_star[5:10], w_star[5:10] = 1.0, -rng.uniform(0.1, 1.0, 5)
    q = w_star - M @ x_star
    budget = 3000     # √κ = 100; 30 · √κ covers the log factor and the restarts (about 1000 are used)
    r = apgd(M, q, lo=lo, hi=hi, iterations=budget, tol=1e-8)
    assert r.ok and r.iterations < budget
    assert np.max(np.abs(r.x - x_star)) <= error_bound(M, natural_residual(M, q, r.x, lo, hi))
    x = np.zeros(n)
    for _ in range(budget):
        x = np.clip(x - (M @ x + q) / 1.0, lo, hi)       # λ_max = 1
    assert natural_residual(M, q, x, lo, hi) > 100 * 1e-8


def test_apgd_backtracking_rescues_a_low_lipschitz_estimate():
    """apgd's step is 1/L with L from a power iteration, which approaches λ_max from below; the backtracking
    (descent-lemma check, L doubles) must make even a 100× too small L safe. Without it a step of 100/λ_max
    multiplies the error along the top eigenvector by |1 − 100| per iteration: divergence."""
    rng = np.random.default_rng(14)
    M, q, x_star, _ = known_lcp(40, rng, "pd")
    lam_max = np.linalg.eigvalsh(M)[-1]
    x = np.zeros(40)
    mnorm = float(np.max(np.sum(np.abs(M), axis=1)))
    done, code, L = projected._apgd_kernel(M, q, (np.zeros(40), np.full(40, np.inf)), x, 5000, 1e-10,
                                           0.01 * lam_max, mnorm)
    assert code == projected.CONVERGED and done < 5000
    assert 0.01 * lam_max < L <= 2.0 * lam_max      # it doubled, and never past 2 λ_max (the lemma holds there)
    assert np.max(np.abs(x - x_star)) <= error_bound(M, natural_residual(M, q, x))


def test_pgs_over_relaxation_and_warm_start():
    rng = np.random.default_rng(10)
    M, q, x_star, _ = known_lcp(80, rng, "pd")
    plain = pgs(M, q, iterations=5000, tol=1e-10)
    sor = pgs(M, q, iterations=5000, tol=1e-10, omega=1.5)
    under = pgs(M, q, iterations=5000, tol=1e-10, omega=0.5)
    for r in (plain, sor, under):
        assert r.ok and np.max(np.abs(r.x - x_star)) <= error_bound(M, r.residual)
    warm = pgs(M, q, x0=x_star, iterations=5000, tol=1e-10)
    assert warm.ok and warm.iterations <= 2     # from the answer: at most a sweep of rounding
    for solver in (pgs, apgd):
        r = solver(M, q, iterations=0, tol=1e-10)
        assert r.status == "max_iterations" and r.iterations == 0 and np.all(r.x == 0.0)
        r = solver(M, q, x0=x_star, iterations=0, tol=1e-10)
        assert r.ok and r.iterations == 0


def test_iteration_cap_reported():
    rng = np.random.default_rng(11)
    M, q, _, _ = known_lcp(100, rng, "pd")
    for solver in (pgs, apgd):
        r = solver(M, q, iterations=3, tol=1e-14)
        assert r.status == "max_iterations" and not r.ok and r.iterations == 3
        assert r.residual == pytest.approx(natural_residual(M, q, r.x), abs=1e-15)


def test_pgs_diverges_honestly():
    """PGS on a matrix it cannot handle (positive diagonal, but far from diagonally dominant and indefinite):
    the iterates blow up, and the status says so instead of returning garbage as ok."""
    M = np.array([[1.0, 10.0], [10.0, 1.0]])
    r = pgs(M, [-1.0, -1.0], lo=-np.inf, hi=np.inf, iterations=10_000)
    assert not r.ok and r.status in ("diverged", "max_iterations")
    assert r.status == "diverged"
