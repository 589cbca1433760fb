"""Projected conjugate gradients for seed 004's frictionless contact QP
    min ½ λᵀ N λ + λᵀ b   subject to   λ >= 0,
N (n, n) symmetric positive (semi)definite, which is the LCP 0 <= λ ⊥ N λ + b >= 0 (ArtiSynth notes 0.3).
In seed 004, N = Dᵀ M⁻¹ D (the Schur complement of the KKT system of the contacts) and b = r.

The method is **MPRGP**, Dostál's *modified proportioning with reduced gradient projections* (Z. Dostál,
*Optimal Quadratic Programming Algorithms*, Springer 2009, ch. 8; Dostál & Schöberl 2005). With g = N λ + b,
the free set F = {λ_i > 0} and the active set A = {λ_i = 0}:
    φ (free gradient) = g on F, 0 on A;   β (chopped gradient) = min(g, 0) on A, 0 on F;
    φ̃ (reduced free gradient) = min(λ / ᾱ, φ) on F.
While the iterate is *proportional*, ‖β‖² <= Γ² φ̃ᵀφ, it takes conjugate-gradient steps on the free set along
p (p = φ after any other step); a CG step that would leave the feasible set is cut at the bound (the *feasible
step*) and followed by an *expansion step* λ ← max(λ − ᾱ φ, 0), a reduced gradient projection that may fix
several bounds at once, and CG restarts. When the chopped gradient dominates, a *proportioning step* along β
(an exact line search) releases bounds. Γ = 1 and ᾱ = 1.9 / L with L = min(‖N‖∞, ‖N‖_F) >= λ_max(N), inside
Dostál's (0, 2/‖N‖]. For N positive definite MPRGP converges R-linearly, with a rate bounded in terms of
the spectral condition number of N only, and under a non-degeneracy condition on the solution it identifies
the active set, and then ends with plain CG, in finitely many steps (Dostál, ch. 8).

Every iteration is one product with N (the expansion step one more) inside a Numba kernel.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .._checks import array
from ..jit import njit
from .result import (
    CONVERGED,
    DEGENERATE,
    DIVERGED,
    INFEASIBLE,
    MAX_ITERATIONS,
    STATUS_NAMES,
    SolverResult,
    _result,
    check_iterations,
    check_problem,
    check_symmetric,
    check_tol,
)
from .rows import natural_residual, product

__all__ = ["cg_qp"]


_GAMMA = 1.0
"""Dostál's proportioning constant Γ: 1 is his recommended default (the balance between CG on the free set
and releasing bounds)."""

_FLAT = 1e-13
"""A direction p has zero curvature when pᵀ N p <= 1e-13 · L · pᵀp (L >= λ_max): below the rounding of N p
(about n · eps · L |p|², 1e-13 for n ~ 500); curvature below −1e-10 · L · pᵀp is negative (N not PSD)."""

_NEGATIVE = 1e-10


@njit(cache=True)
def _free_gradient(x, g, p):
    """p ← φ(x): g on the free set, 0 on the active set."""
    for i in range(x.shape[0]):
        p[i] = g[i] if x[i] > 0.0 else 0.0


@njit(cache=True)
def _mprgp_kernel(N, b, feasible, x, iterations, tol, alpha, L):
    """MPRGP (module docstring) on λ = x (n,) in place, x >= 0 on entry. Returns (iterations, code).

    N is a dense matrix or the step's frictionless contact rows; ``feasible`` (the box [0, ∞) or the rows'
    set) only decides the stopping test, ``natural_residual`` (rows.py)."""
    n = x.shape[0]
    g = product(N, x) + b
    if natural_residual(feasible, x, g) <= tol:
        return 0, CONVERGED
    p = np.empty(n)
    d = np.empty(n)
    _free_gradient(x, g, p)
    for it in range(iterations):
        beta2 = 0.0
        phit_phi = 0.0
        for i in range(n):
            if x[i] > 0.0:
                phit_phi += min(x[i] / alpha, g[i]) * g[i]
            elif g[i] < 0.0:
                beta2 += g[i] * g[i]
        if beta2 <= _GAMMA * _GAMMA * phit_phi:
            # proportional: a conjugate-gradient trial step along −p
            if g @ p <= 0.0:                  # rounding left p no descent direction: restart CG from φ
                _free_gradient(x, g, p)
            Np = product(N, p)
            pnp = p @ Np
            pp = p @ p
            gp = g @ p
            if pnp < -_NEGATIVE * L * pp:
                return it, DEGENERATE
            step_cg = gp / pnp if pnp > _FLAT * L * pp else np.inf
            step_f = np.inf
            for i in range(n):
                if p[i] > 0.0:
                    step_f = min(step_f, x[i] / p[i])
            if step_cg <= step_f:
                for i in range(n):
                    x[i] = max(x[i] - step_cg * p[i], 0.0)
                    g[i] -= step_cg * Np[i]
                _free_gradient(x, g, d)
                gam = (d @ Np) / pnp
                for i in range(n):
                    p[i] = d[i] - gam * p[i]
            else:
                if step_f == np.inf:          # descent along −p forever: the QP is unbounded below
                    return it + 1, INFEASIBLE
                for i in range(n):            # feasible step to the first bound, then expansion
                    x[i] = max(x[i] - step_f * p[i], 0.0)
                    g[i] -= step_f * Np[i]
                _free_gradient(x, g, d)
                for i in range(n):
                    x[i] = max(x[i] - alpha * d[i], 0.0)
                g = product(N, x) + b
                _free_gradient(x, g, p)
        else:
            # proportioning: exact line search along the chopped gradient (raises active λ_i)
            for i in range(n):
                d[i] = g[i] if (x[i] <= 0.0 and g[i] < 0.0) else 0.0
            Nd = product(N, d)
            dnd = d @ Nd
            dd = d @ d
            if dnd < -_NEGATIVE * L * dd:
                return it, DEGENERATE
            if dnd <= _FLAT * L * dd:         # λ can grow along −β forever while the objective falls
                return it + 1, INFEASIBLE
            step = (g @ d) / dnd
            for i in range(n):
                x[i] = max(x[i] - step * d[i], 0.0)
                g[i] -= step * Nd[i]
            _free_gradient(x, g, p)
        res = natural_residual(feasible, x, g)
        if res == np.inf:
            return it + 1, DIVERGED
        if res <= tol:
            g = product(N, x) + b                     # confirm on a fresh gradient, free of recurrence drift
            if natural_residual(feasible, x, g) <= tol:
                return it + 1, CONVERGED
            _free_gradient(x, g, p)
    return iterations, MAX_ITERATIONS


def cg_qp(N: Any, b: Any, x0: Any = None, iterations: int | None = None, tol: float = 1e-10) -> SolverResult:
    """Seed 004's frictionless contact problem min ½ λᵀNλ + λᵀb, λ >= 0, i.e. the LCP 0 <= λ ⊥ Nλ + b >= 0
    (ArtiSynth notes 0.3), by MPRGP projected conjugate gradients (module docstring).

    Args:
        N: (n, n) finite symmetric (to 1e-10 relative) positive semidefinite matrix, e.g. Dᵀ M⁻¹ D (seed 004).
        b: (n,) finite vector (seed 004's r = b + Dᵀ M⁻¹ f).
        x0: (n,) start, clipped at 0; default 0.
        iterations: the most iterations, integer >= 0; default max(100, 10 n).
        tol: stop when ``lcp_residual(N, b, λ)`` = ‖min(λ, Nλ + b)‖∞ <= tol (>= 0).

    Returns:
        ``SolverResult`` with ``x`` = λ; status ``"converged"``, ``"max_iterations"``, ``"infeasible"`` (a
        descent direction no bound stops: the QP is unbounded, so the LCP has no solution), ``"degenerate"``
        (negative curvature: N is not PSD) or ``"diverged"``.

    Raises:
        ValueError / TypeError naming the argument (``result.check_*``), ValueError if N is not symmetric.
    """
    N, b = check_problem(N, b, "N", "b")
    n = b.shape[0]
    x = np.zeros(n) if x0 is None else np.maximum(array("x0", x0, (n,)), 0.0)
    iterations = max(100, 10 * n) if iterations is None else check_iterations("iterations", iterations)
    tol = check_tol(tol)
    Ns = check_symmetric("N", N)
    L = min(float(np.max(np.sum(np.abs(Ns), axis=1))), float(np.linalg.norm(Ns))) if n else 0.0
    if not L > 0.0:
        L = 1.0
    zero, inf = np.zeros(n), np.full(n, np.inf)
    done, code = _mprgp_kernel(Ns, b, (zero, inf), x, iterations, tol, 1.9 / L, L)
    return _result(N, b, x, zero, inf, done, STATUS_NAMES[code])
