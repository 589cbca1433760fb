"""Lemke's method (tumble.solvers.lemke) against LCPs with known solutions, brute-force enumeration, SciPy's
QP solver, infeasible and degenerate problems."""

from __future__ import annotations

import numpy as np
import pytest
from lcp_cases import brute_force_lcp, known_lcp, natural_residual, qp_reference

import tumble
from tumble.solvers import MAX_LEMKE_SIZE, lemke


@pytest.mark.parametrize("n", [5, 12, 40, 100, 200])
def test_known_solution_positive_definite(n):
    rng = np.random.default_rng(100 + n)
    M, q, x_star, _ = known_lcp(n, rng, "pd")
    r = lemke(M, q)
    assert r.ok and r.status == "converged"
    # 1e-9: the unique solution solves one n×n system M_SS x_S = −q_S with cond(M) <= ~41 and |x*| <= 1, so
    # rounding leaves ~1e-14; 1e-9 leaves room without hiding a wrong active set (an error of >= 0.1).
    assert np.max(np.abs(r.x - x_star)) < 1e-9
    assert natural_residual(M, q, r.x) < 1e-9
    assert r.residual == pytest.approx(natural_residual(M, q, r.x), abs=1e-15)
    assert 1 <= r.iterations <= 3 * n + 1      # ~n/2..n pivots are typical; 3n + 1 would flag a runaway path


@pytest.mark.parametrize("n", [6, 20, 60, 150])
def test_known_solution_positive_semidefinite(n):
    rng = np.random.default_rng(200 + n)
    M, q, _, w_star = known_lcp(n, rng, "psd")
    r = lemke(M, q)
    assert r.ok
    # x is not unique (M has rank n/2), so check the definition of a solution instead, and w, which is
    # unique for a symmetric PSD M (every minimizer of the convex QP of notes 0.3 has the same gradient);
    # 1e-9 as above (entries O(1), a handful of pivots' rounding ~1e-13).
    assert natural_residual(M, q, r.x) < 1e-9
    assert np.all(r.x >= 0.0)
    assert np.max(np.abs(M @ r.x + q - w_star)) < 1e-9


@pytest.mark.parametrize("seed", range(6))
def test_agrees_with_scipy_qp(seed):
    """ArtiSynth notes 0.3: for a symmetric positive definite M the LCP is min ½xᵀMx + qᵀx, x >= 0; solve that
    with SciPy's L-BFGS-B (an independent method) and compare."""
    rng = np.random.default_rng(300 + seed)
    n = int(rng.integers(3, 15))
    A = rng.standard_normal((n, n))
    M = A.T @ A / n + 0.2 * np.eye(n)
    q = rng.standard_normal(n)
    r = lemke(M, q)
    assert r.ok
    x_ref = qp_reference(M, q)
    # 1e-6: L-BFGS-B stops on a projected gradient of ~1e-10..1e-8, and the error bound (1 + ‖M‖)/λ_min ≈ 25
    # turns that into <= ~1e-7 in x; a wrong active set would differ by O(0.1).
    assert np.max(np.abs(r.x - x_ref)) < 1e-6


def test_trivial_and_empty():
    r = lemke(np.eye(3), [1.0, 0.0, 2.0])            # q >= 0: x = 0 without a pivot
    assert r.ok and r.iterations == 0 and np.all(r.x == 0.0)
    r = lemke(np.zeros((0, 0)), np.zeros(0))
    assert r.ok and r.x.shape == (0,) and r.residual == 0.0
    r = lemke(np.zeros((2, 2)), np.zeros(2))
    assert r.ok and np.all(r.x == 0.0)
    r = lemke(np.eye(1), [-2.0])                     # x = 2, w = 0
    assert r.ok and r.x[0] == pytest.approx(2.0, abs=1e-15)


@pytest.mark.parametrize(("M", "q"), [
    (-np.eye(2), [-1.0, -1.0]),                            # w = −x − 1 >= 0 needs x <= −1 < 0
    ([[1.0, -1.0], [-1.0, 1.0]], [-1.0, -1.0]),            # PSD; w1 + w2 = −2 < 0 for every x
    ([[0.0, 0.0], [0.0, 0.0]], [-1.0, 0.0]),               # w1 = −1 whatever x
    ([[1.0, -2.0, 0.0], [-2.0, 4.0, 0.0], [0.0, 0.0, 1.0]], [-1.0, 0.0, -1.0]),  # PSD: w1 + w2/2 = −1 < 0
])
def test_infeasible_ends_on_a_ray(M, q):
    """Each of these has no feasible point (shown in the comments), so no solution: Lemke must end on its
    secondary ray with status "infeasible", never raise, never claim ok."""
    r = lemke(M, q)
    assert r.status == "infeasible" and not r.ok
    assert r.residual > 0.5   # the reported residual is honest: no point is a solution
    assert brute_force_lcp(np.asarray(M), np.asarray(q)) == []   # the independent check agrees


# Degenerate problems (ties in the ratio test) on which Lemke CYCLES when its ties are broken by the first
# tied row instead of the lexicographic rule: found by a seeded search over small integer LCPs with that rule
# patched in (the first with the first pivot's rule patched too, the others with only the later pivots').
CYCLING = [
    ([[-1.0, 2.0, 0.0], [0.0, 2.0, 0.0], [-2.0, 0.0, -1.0]], [-2.0, -2.0, -1.0]),
    ([[-1.0, 0.0, 2.0], [-2.0, -2.0, 0.0], [-1.0, 1.0, 1.0]], [-2.0, -2.0, -2.0]),
    ([[-1.0, 2.0, -1.0], [1.0, 1.0, 0.0], [1.0, -2.0, -1.0]], [-2.0, -2.0, 1.0]),
    ([[-2.0, -1.0, 2.0, 0.0], [-1.0, 2.0, 2.0, 2.0], [0.0, -2.0, -1.0, 1.0], [-2.0, 2.0, -2.0, -2.0]],
     [-2.0, 1.0, -2.0, 1.0]),
    ([[1.0, 1.0, 2.0, -2.0], [0.0, 1.0, -2.0, 0.0], [2.0, 2.0, 1.0, -2.0], [0.0, -2.0, -2.0, 0.0]],
     [-2.0, -2.0, -2.0, 1.0]),
]


@pytest.mark.parametrize(("M", "q"), CYCLING)
def test_lexicographic_rule_prevents_cycling(M, q):
    M, q = np.array(M), np.array(q)
    r = lemke(M, q)
    # an n <= 4 problem has at most 4 · 2⁴ almost-complementary bases; without cycling Lemke needs a handful
    # of pivots (3 to 5 here), far below 100
    assert r.status in ("converged", "infeasible") and r.iterations < 100
    if r.ok:
        assert natural_residual(M, q, r.x) < 1e-12
    else:
        # M is not copositive-plus, so a ray proves nothing by itself; here none of them has a solution
        assert brute_force_lcp(M, q) == []


def test_degenerate_sweep_never_cycles():
    """6000 small integer LCPs (q with zeros, repeated columns, ties everywhere): Lemke never reaches its cap
    (a cycle would), and every "converged" answer is a solution. With the first-tied-row rule about 20 of
    them cycle (measured with that mutation)."""
    rng = np.random.default_rng(1)
    for trial in range(6000):
        n = int(rng.integers(2, 7))
        kind = trial % 3
        if kind == 0:
            M = rng.integers(-2, 3, (n, n)).astype(float)
        elif kind == 1:
            A = rng.integers(-1, 2, (n, n)).astype(float)
            A[:, -1] = A[:, 0]
            M = A.T @ A
        else:
            M = rng.integers(0, 3, (n, n)).astype(float)
        q = rng.integers(-2, 2, n).astype(float)
        r = lemke(M, q)
        assert r.status in ("converged", "infeasible"), (M, q, r)
        if r.ok:
            assert natural_residual(M, q, r.x) < 1e-12, (M, q, r)


def _degenerate_cases():
    rng = np.random.default_rng(4)
    cases = []
    for _ in range(60):
        n = int(rng.integers(2, 8))
        A = rng.integers(-1, 2, (int(rng.integers(1, n + 1)), n)).astype(float)
        A[:, -1] = A[:, 0]                                   # repeated column: M singular, rows tie
        q = rng.integers(-1, 2, n).astype(float)             # many zeros in q: degenerate first pivots
        cases.append((A.T @ A, q))
    return cases


def test_degenerate_psd_problems_solved_exactly_when_solvable():
    """PSD M with repeated columns and q with zeros: Lemke (for copositive-plus M, which PSD is) finds a
    solution exactly when one exists. Whether one exists is decided independently by enumerating every
    complementary basis."""
    for M, q in _degenerate_cases():
        r = lemke(M, q)
        solvable = bool(brute_force_lcp(M, q))
        assert r.status == ("converged" if solvable else "infeasible"), (M, q, r)
        if r.ok:
            # integer data, a few pivots: the residual is rounding only (1e-12 >> 1e-16 · 8 · 9)
            assert natural_residual(M, q, r.x) < 1e-12


def test_pivot_cap():
    rng = np.random.default_rng(5)
    M, q, _, _ = known_lcp(30, rng, "pd")
    r = lemke(M, q, max_pivots=3)
    assert r.status == "max_iterations" and not r.ok and r.iterations == 3
    r = lemke(M, q, max_pivots=0)
    assert r.status == "max_iterations" and r.iterations == 0


def test_scale_invariance():
    """Lemke's pivots do not depend on a common scale of M and q (it scales internally): the same x for data
    1e-6 and 1e6 times larger, to rounding."""
    rng = np.random.default_rng(6)
    M, q, x_star, _ = known_lcp(25, rng, "pd")
    for s in (1e-6, 1e6):
        r = lemke(s * M, s * q)
        assert r.ok and np.max(np.abs(r.x - x_star)) < 1e-9


def test_size_limit_refused_before_work():
    n = MAX_LEMKE_SIZE + 1
    with pytest.raises(ValueError, match=rf"M has shape \({n}, {n}\).*MAX_LEMKE_SIZE = {MAX_LEMKE_SIZE}"):
        lemke(np.zeros((n, n)), np.zeros(n))


def test_reachable_from_package():
    assert tumble.solvers.lemke is lemke
