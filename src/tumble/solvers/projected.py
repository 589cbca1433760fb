"""Iterative solvers of the box-constrained LCP: projected Gauss–Seidel / SOR and accelerated projected
gradient descent (ArtiSynth notes 0.3, 0.15).

Both solve: find lo <= x <= hi with w = M x + q and
    x_i = lo_i ⇒ w_i >= 0,   x_i = hi_i ⇒ w_i <= 0,   lo_i < x_i < hi_i ⇒ w_i = 0
(lo = 0, hi = +inf: the standard LCP), and stop when ``lcp_residual`` ‖x − mid(lo, x − w, hi)‖∞ <= tol.
When M is symmetric positive semidefinite this is the optimality condition of the QP
    min ½ xᵀ M x + qᵀ x  over  lo <= x <= hi      (ArtiSynth notes 0.3, LCP ⇔ QP),
which is what apgd minimizes and why pgs converges (each row update minimizes the QP over one coordinate).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..jit import njit
from .result import (
    CONVERGED,
    DIVERGED,
    MAX_ITERATIONS,
    STATUS_NAMES,
    SolverResult,
    _result,
    check_box_problem,
    check_omega,
    check_symmetric,
    natural_map_norm,
)
from .rows import natural_residual, product, project

__all__ = ["apgd", "pgs"]


_REFRESH = 50
"""pgs keeps w = M x + q up to date by rank-one column updates; every 50 sweeps (and before it reports
convergence) it recomputes w from scratch, so rounding drift never decides a result."""


@njit(cache=True)
def _pgs_kernel(M, MT, q, lo, hi, x, iterations, tol, omega):
    """Projected SOR sweeps on x (n,) in place: row by row x_i ← mid(lo_i, x_i − ω w_i / M_ii, hi_i), with
    w (n,) updated by the change times column i of M (row i of ``MT``), so each row sees every earlier one.
    Returns (sweeps done, code)."""
    n = x.shape[0]
    w = M @ x + q
    if natural_map_norm(x, w, lo, hi) <= tol:
        return 0, CONVERGED
    for sweep in range(iterations):
        for i in range(n):
            xi = min(max(x[i] - omega * w[i] / M[i, i], lo[i]), hi[i])
            d = xi - x[i]
            if d != 0.0:
                x[i] = xi
                for k in range(n):
                    w[k] += d * MT[i, k]
        if (sweep + 1) % _REFRESH == 0:
            w = M @ x + q
        res = natural_map_norm(x, w, lo, hi)
        if res == np.inf:
            return sweep + 1, DIVERGED
        if res <= tol:
            w = M @ x + q
            if natural_map_norm(x, w, lo, hi) <= tol:
                return sweep + 1, CONVERGED
    return iterations, MAX_ITERATIONS


def pgs(M: Any, q: Any, lo: Any = None, hi: Any = None, x0: Any = None, iterations: int = 100,
        tol: float = 1e-8, omega: float = 1.0) -> SolverResult:
    """Projected Gauss–Seidel (omega = 1) or projected SOR for the box-constrained LCP (module docstring;
    ArtiSynth notes 0.15, the method the engine's ``sequential_impulse`` applies to contact rows).

    One sweep visits the rows in order: x_i ← mid(lo_i, x_i − ω (M x + q)_i / M_ii, hi_i). For a symmetric
    positive definite M and 0 < ω < 2 the iterates converge to the solution (linearly, slowly when M is
    ill-conditioned); for other M there is no guarantee.

    Args:
        M: (n, n) finite matrix with a positive diagonal.
        q: (n,) finite vector.
        lo, hi: (n,) bounds or scalars; default 0 and +inf. ±inf allowed, lo <= hi.
        x0: (n,) start (warm start), projected onto the box; default the projection of 0.
        iterations: the most sweeps, an integer >= 0.
        tol: stop when ``lcp_residual`` <= tol (>= 0; checked after every sweep).
        omega: relaxation factor in (0, 2).

    Returns:
        ``SolverResult`` (status ``"converged"``, ``"max_iterations"`` or ``"diverged"``); ``iterations``
        counts sweeps.

    Raises:
        ValueError / TypeError naming the argument: see ``result.check_*``; ValueError when a diagonal entry of
        M is <= 0 (the row update divides by it).
    """
    M, q, lo, hi, x, iterations, tol = check_box_problem(M, q, lo, hi, x0, iterations, tol)
    n = q.shape[0]
    omega = check_omega(omega)
    diag = np.diag(M)
    if n and np.any(diag <= 0.0):
        i = int(np.argmax(diag <= 0.0))
        raise ValueError(f"M must have a positive diagonal for pgs, got M[{i}, {i}] = {float(diag[i])!r}")
    sweeps, code = _pgs_kernel(M, np.ascontiguousarray(M.T), q, lo, hi, x, iterations, tol, omega)
    return _result(M, q, x, lo, hi, sweeps, STATUS_NAMES[code])


@njit(cache=True)
def _apgd_kernel(M, q, feasible, x, iterations, tol, L, mnorm):
    """Accelerated projected gradient (FISTA, Beck & Teboulle 2009) with the gradient restart of O'Donoghue &
    Candès (2015) and Lipschitz backtracking, on x (n,) in place. Returns (iterations done, code, final L).

    M is a dense matrix or the step's contact rows, ``feasible`` a (lo, hi) box or the rows' friction set
    (rows.py resolves ``product``, ``project`` and ``natural_residual`` by their types).

    Step: x⁺ = P(y − (M y + q) / L), P the projection onto the feasible set (mid(lo, ·, hi) for a box).
    Backtracking: the step is accepted when
    dᵀ M d <= L dᵀd for d = x⁺ − y (the descent lemma of ½ xᵀMx + qᵀx), else L doubles; dᵀ M d comes from the
    products M x⁺ and M y already at hand, with a slack for their rounding (n · eps · ‖M‖∞ · (|x⁺|∞ + |y|∞)
    · ‖d‖₁). Momentum: t⁺ = (1 + √(1 + 4t²)) / 2, y⁺ = x⁺ + (t − 1)/t⁺ · (x⁺ − x). Restart (t ← 1, y⁺ = x⁺)
    when (y − x⁺)ᵀ(x⁺ − x) > 0: the momentum points uphill. One product with M per iteration (M y by
    linearity from M x⁺ and M x), one more per backtrack.
    """
    n = x.shape[0]
    Mx = product(M, x)
    if natural_residual(feasible, x, Mx + q) <= tol:
        return 0, CONVERGED, L
    y = x.copy()
    My = Mx.copy()
    xn = np.empty(n)
    t = 1.0
    gamma = n * np.finfo(np.float64).eps * mnorm
    for k in range(iterations):
        while True:
            for i in range(n):
                xn[i] = y[i] - (My[i] + q[i]) / L
            project(feasible, xn)
            Mxn = product(M, xn)
            dd = 0.0
            dmd = 0.0
            d1 = 0.0
            xa = 0.0
            ya = 0.0
            for i in range(n):
                d = xn[i] - y[i]
                dd += d * d
                dmd += d * (Mxn[i] - My[i])
                d1 += abs(d)
                xa = max(xa, abs(xn[i]))
                ya = max(ya, abs(y[i]))
            if dmd <= L * dd + gamma * d1 * (xa + ya) or not np.isfinite(dmd):
                break
            L *= 2.0
        res = natural_residual(feasible, xn, Mxn + q)
        if res == np.inf:
            x[:] = xn
            return k + 1, DIVERGED, L
        if res <= tol:
            x[:] = xn
            return k + 1, CONVERGED, L
        uphill = 0.0
        for i in range(n):
            uphill += (y[i] - xn[i]) * (xn[i] - x[i])
        t_next = 0.5 * (1.0 + np.sqrt(1.0 + 4.0 * t * t))
        if uphill > 0.0:
            t = 1.0
            y[:] = xn
            My[:] = Mxn
        else:
            beta = (t - 1.0) / t_next
            t = t_next
            for i in range(n):
                y[i] = xn[i] + beta * (xn[i] - x[i])
                My[i] = Mxn[i] + beta * (Mxn[i] - Mx[i])
        x[:] = xn
        Mx = Mxn
    return iterations, MAX_ITERATIONS, L


def largest_eigenvalue_estimate(M: np.ndarray, iterations: int = 50) -> float:
    """Power iteration on a symmetric (n, n) M from a fixed pseudo-random start: the Rayleigh quotient after
    up to ``iterations`` products (stopping when it changes by < 1e-6 relative). It approaches λ_max from
    below; callers that need an upper bound add a margin or backtrack (apgd does both)."""
    n = M.shape[0]
    if n == 0:
        return 0.0
    v = np.random.default_rng(12345).standard_normal(n)
    v /= np.linalg.norm(v)
    rayleigh = 0.0
    for _ in range(iterations):
        mv = M @ v
        new = float(v @ mv)
        norm = float(np.linalg.norm(mv))
        if norm == 0.0:
            return max(new, 0.0)
        v = mv / norm
        if abs(new - rayleigh) <= 1e-6 * abs(new):
            return new
        rayleigh = new
    return rayleigh


def apgd(M: Any, q: Any, lo: Any = None, hi: Any = None, x0: Any = None, iterations: int = 500,
         tol: float = 1e-8) -> SolverResult:
    """Accelerated projected gradient descent with adaptive restart for the box-constrained LCP with a symmetric
    positive semidefinite M, i.e. min ½ xᵀMx + qᵀx over lo <= x <= hi (module docstring; ArtiSynth notes 0.3).

    Step 1/L: L starts at 1.1 × the power-iteration estimate of λ_max(M) (50 products at most) and doubles
    whenever the descent lemma fails on a step (``_apgd_kernel``), so a low estimate costs a few backtracks,
    never divergence. Nesterov momentum (FISTA) with the O'Donoghue–Candès gradient restart. With M PSD the
    objective error falls as O(1/k²), and linearly (rate 1 − √(μ/L) up to restarts) when M is positive
    definite with smallest eigenvalue μ.

    Args:
        M: (n, n) finite symmetric matrix (to 1e-10 relative), meant positive semidefinite; an indefinite M
            may end ``"max_iterations"`` or ``"diverged"``.
        q: (n,) finite vector.
        lo, hi: (n,) bounds or scalars; default 0 and +inf.
        x0: (n,) start, projected onto the box; default the projection of 0.
        iterations: the most iterations (each one product with M plus one per backtrack), integer >= 0.
        tol: stop when ``lcp_residual`` <= tol (>= 0).

    Returns:
        ``SolverResult`` (status ``"converged"``, ``"max_iterations"`` or ``"diverged"``).

    Raises:
        ValueError / TypeError naming the argument (``result.check_*``), ValueError if M is not symmetric.
    """
    M, q, lo, hi, x, iterations, tol = check_box_problem(M, q, lo, hi, x0, iterations, tol)
    n = q.shape[0]
    Ms = check_symmetric("M", M)
    mnorm = float(np.max(np.sum(np.abs(Ms), axis=1))) if n else 0.0
    L = 1.1 * largest_eigenvalue_estimate(Ms)
    if not L > 0.0:   # M = 0 (or numerically so): any positive step is safe, the backtracking fixes the rest
        L = max(mnorm, 1.0)
    done, code, _ = _apgd_kernel(Ms, q, (lo, hi), x, iterations, tol, L, mnorm)
    return _result(M, q, x, lo, hi, done, STATUS_NAMES[code])
