"""Test problems with known answers and independent reference solvers for tests/solvers.

Nothing here calls tumble: the known solutions are built first and the data derived from them, the residual
and the error bound are re-implemented from their textbook definitions, and the references are brute force
(complementary bases enumerated with numpy) or SciPy's L-BFGS-B.
"""

from __future__ import annotations

import itertools

import numpy as np
from scipy.optimize import minimize


def natural_residual(M, q, x, lo=None, hi=None):
    """‖x − mid(lo, x − (Mx + q), hi)‖∞, written out again here (lo = 0, hi = inf: ‖min(x, w)‖∞)."""
    n = len(q)
    lo = np.zeros(n) if lo is None else np.broadcast_to(lo, (n,))
    hi = np.full(n, np.inf) if hi is None else np.broadcast_to(hi, (n,))
    w = M @ x + q
    return float(np.max(np.abs(x - np.clip(x - w, lo, hi)), initial=0.0))


def error_bound(M, residual):
    """Upper bound on ‖x − x*‖∞ for a point with natural-map residual ``residual`` (∞-norm) when M is
    symmetric positive definite (the standard error bound of a strongly monotone affine variational inequality):
    with e = x − x*, r = x − Π(x − w) and y = x − r, the projection inequality at x* and the solution
    inequality at y give (r − e)ᵀ r <= (r − e)ᵀ M e, so λ_min eᵀe <= eᵀMe <= (1 + ‖M‖₂) ‖e‖₂ ‖r‖₂, i.e.
    ‖e‖∞ <= ‖e‖₂ <= (1 + ‖M‖₂) / λ_min · √n ‖r‖∞."""
    eig = np.linalg.eigvalsh(M)
    return (1.0 + eig[-1]) / eig[0] * np.sqrt(len(M)) * residual


def known_lcp(n, rng, kind="pd", eps=0.1):
    """(M, q, x*, w*) with 0 <= x* ⊥ w* >= 0 and q = w* − M x*, on a random split of the indices.

    kind "pd": M = AᵀA/n + eps I, A (n, n) Gaussian, so λ(M) ∈ [eps, ~4 + eps]: condition number <= ~41,
    and x* is the unique solution. kind "psd": M = AᵀA/n with A (n//2, n): rank n//2, positive semidefinite,
    x* one of many solutions (w* is still unique: for a convex QP every minimizer has the same gradient).
    """
    rows = n if kind == "pd" else max(1, n // 2)
    A = rng.standard_normal((rows, n))
    M = A.T @ A / n + (eps * np.eye(n) if kind == "pd" else 0.0)
    support = rng.random(n) < 0.5
    x = np.where(support, rng.uniform(0.1, 1.0, n), 0.0)
    w = np.where(support, 0.0, rng.uniform(0.1, 1.0, n))
    return M, w - M @ x, x, w


def known_box(n, rng, eps=0.1):
    """(M, q, lo, hi, x*) of a box-constrained LCP with a known solution: a third of the rows at lo (w* > 0),
    a third at hi (w* < 0), a third strictly inside (w* = 0); some rows have infinite bounds."""
    A = rng.standard_normal((n, n))
    M = A.T @ A / n + eps * np.eye(n)
    lo = -rng.uniform(0.5, 1.5, n)
    hi = rng.uniform(0.5, 1.5, n)
    kind = rng.integers(0, 3, n)                    # 0: at lo, 1: at hi, 2: free
    x = np.where(kind == 0, lo, np.where(kind == 1, hi, 0.0))
    free = kind == 2
    x[free] = rng.uniform(lo[free] + 0.1, hi[free] - 0.1)
    w = np.where(kind == 0, rng.uniform(0.1, 1.0, n), np.where(kind == 1, -rng.uniform(0.1, 1.0, n), 0.0))
    lo[free & (rng.random(n) < 0.5)] = -np.inf       # free rows may have no bound at all
    hi[free & (rng.random(n) < 0.5)] = np.inf
    return M, w - M @ x, lo, hi, x


def brute_force_lcp(M, q, tol=1e-9):
    """Every complementary basis S (x_S basic, w_S = 0, x = 0 off S) whose point is feasible: the LCP's
    solutions at its vertices. Exponential, for n <= 10. Returns the list of x found (empty: no solution;
    for n <= 10 and a solvable LCP at least one basic solution exists)."""
    n = len(q)
    found = []
    for mask in itertools.product([False, True], repeat=n):
        S = np.array(mask, dtype=bool)
        x = np.zeros(n)
        if S.any():
            sub = M[np.ix_(S, S)]
            xs, *_ = np.linalg.lstsq(sub, -q[S], rcond=None)
            if np.max(np.abs(sub @ xs + q[S])) > tol:
                continue
            x[S] = xs
        w = M @ x + q
        if np.all(x >= -tol) and np.all(w >= -tol) and abs(x @ w) <= tol * max(1.0, np.abs(x).max()):
            found.append(x)
    return found


def qp_reference(M, q, lo=None, hi=None):
    """min ½ xᵀMx + qᵀx over the box by SciPy's L-BFGS-B with tight tolerances: the QP that the LCP is
    equivalent to when M is symmetric positive definite (ArtiSynth notes 0.3)."""
    n = len(q)
    lo = np.zeros(n) if lo is None else lo
    hi = np.full(n, np.inf) if hi is None else hi
    bounds = [(a if np.isfinite(a) else None, b if np.isfinite(b) else None) for a, b in zip(lo, hi, strict=True)]
    res = minimize(lambda x: (0.5 * x @ M @ x + q @ x, M @ x + q), np.clip(np.zeros(n), lo, hi), jac=True,
                   method="L-BFGS-B", bounds=bounds,
                   options={"ftol": 1e-16, "gtol": 1e-13, "maxiter": 20000, "maxcor": 50})
    return res.x
