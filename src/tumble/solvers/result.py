"""What every standalone solver returns, the one residual they all report, and their shared argument checks.

The problems (docs/solvers.md):

- the **LCP** (ArtiSynth notes 0.3, 0.7): find x (n,) with w = M x + q, x >= 0, w >= 0, xᵀw = 0;
- the **box-constrained LCP** (mixed complementarity, notes 0.15): find lo <= x <= hi with w = M x + q and
  x_i = lo_i ⇒ w_i >= 0, x_i = hi_i ⇒ w_i <= 0, lo_i < x_i < hi_i ⇒ w_i = 0. lo = 0, hi = +inf is the LCP.

The residual (:func:`lcp_residual`) is the infinity norm of the *natural map*
    r(x) = x − mid(lo, x − w, hi),   w = M x + q,
which is zero exactly at a solution; for the standard LCP it is min(x, w) componentwise. It is absolute, not
relative, and mixes the units of x and w (row i contributes |min(x_i, w_i)| to the LCP's), so a tolerance on
it is in those units. ``natural_map_norm`` is its one implementation: ``lcp_residual`` and every solver's
reported ``SolverResult.residual`` go through it, and the iterative solvers' kernels use it for their
stopping test ``residual <= tol``.
"""

from __future__ import annotations

import numbers
from dataclasses import dataclass
from typing import Any

import numpy as np

from .._checks import _show, array, non_negative, real
from ..jit import njit

__all__ = ["STATUSES", "SolverResult", "lcp_residual"]

CONVERGED, MAX_ITERATIONS, INFEASIBLE, DEGENERATE, DIVERGED, FAILED = range(6)
"""How a solve ended, as the kernels report it: the one status code of every solver, standalone and in-step
(an index into ``STATUS_NAMES``)."""

STATUS_NAMES = ("converged", "max_iterations", "infeasible", "degenerate", "diverged", "failed")
"""Each status code's name. ``FAILED`` is the step's own: a sub-step whose solver ended in INFEASIBLE,
DEGENERATE or DIVERGED (or, with Lemke, above MAX_LEMKE_SIZE after an island woke) applies no answer and runs
Gauss–Seidel sweeps instead (solvers/velocity_solve.py); the step reports the worst of its sub-steps, and the
codes are ordered so that the worst is the largest of CONVERGED, MAX_ITERATIONS and FAILED."""

STATUSES = STATUS_NAMES[:FAILED]
"""Every ``SolverResult.status`` (a standalone solve never reports ``"failed"``):

- ``"converged"``: a solution was found (``ok`` is True): the residual is <= ``tol`` (pgs, apgd, cg_qp), or
  Lemke reached a complementary basis and the point it gives passed the acceptance check of ``lemke``;
- ``"max_iterations"``: the iteration (pivot) cap was reached first; ``x`` is the last iterate;
- ``"infeasible"``: the solver found evidence that there is no solution: Lemke's secondary ray termination
  (for a copositive-plus M, e.g. any positive semidefinite M, this proves the LCP has no solution), or a
  descent direction of cg_qp's QP that no bound stops (the QP is unbounded below, so for PSD N the LCP is
  infeasible);
- ``"degenerate"``: the data are outside what the method can handle, found during the solve: Lemke's final
  basis is numerically singular (its point fails the acceptance check), or cg_qp met negative curvature
  (N is not positive semidefinite);
- ``"diverged"``: the iterates became non-finite (pgs, apgd on an M outside their assumptions).

There is no ``"too_large"``: ``lemke`` raises ``ValueError`` above ``MAX_LEMKE_SIZE`` before doing any work.
"""


@dataclass(frozen=True)
class SolverResult:
    """The outcome of one solve.

    Attributes:
        x: (n,) float64, the solution (or the last iterate when ``ok`` is False).
        iterations: sweeps (pgs), iterations (apgd, cg_qp) or pivots (lemke) done.
        residual: ``lcp_residual`` of ``x`` for the problem solved (natural-map norm, module docstring).
        status: one of :data:`STATUSES`.
        ok: True exactly when ``status == "converged"``.
    """

    x: np.ndarray
    iterations: int
    residual: float
    status: str
    ok: bool


@njit(cache=True)
def natural_map_norm(x, w, lo, hi):
    """‖x − mid(lo, x − w, hi)‖∞ for x, w, lo, hi (n,) (module docstring): the one definition of the residual,
    used by ``lcp_residual`` and by every solver's kernel for its stopping test. inf when a term is not
    finite (a diverged iterate); 0 for n = 0."""
    out = 0.0
    for i in range(x.shape[0]):
        r = abs(x[i] - min(max(x[i] - w[i], lo[i]), hi[i]))
        if not r <= out:          # also catches NaN
            out = r if np.isfinite(r) else np.inf
    return out


def _natural_map(M: np.ndarray, q: np.ndarray, x: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> float:
    """The residual of the module docstring on checked float64 arrays (no validation): w = M x + q, then
    ``natural_map_norm``."""
    with np.errstate(invalid="ignore", over="ignore"):   # a diverged x: inf − inf is NaN, reported as inf
        w = M @ x + q
    return float(natural_map_norm(x, w, lo, hi))


def lcp_residual(M: Any, q: Any, x: Any, lo: Any = None, hi: Any = None) -> float:
    """The natural-map residual ‖x − mid(lo, x − w, hi)‖∞ with w = M x + q (module docstring).

    Args:
        M: (n, n) matrix; q: (n,); x: (n,) the candidate solution.
        lo, hi: (n,) bounds or scalars, default 0 and +inf (the standard LCP, where the residual is
            ‖min(x, w)‖∞). Infinite bounds are allowed; lo <= hi.

    Returns:
        The residual, >= 0, zero exactly at a solution of the (box-constrained) LCP; it is what every
        solver of this package reports as ``SolverResult.residual``.
    """
    M, q = check_problem(M, q)
    x = array("x", x, (M.shape[0],))
    lo, hi = check_bounds(lo, hi, M.shape[0])
    return _natural_map(M, q, x, lo, hi)


def _result(M: np.ndarray, q: np.ndarray, x: np.ndarray, lo: np.ndarray, hi: np.ndarray, iterations: int,
            status: str) -> SolverResult:
    """Package a solve's outcome, with the shared residual."""
    x = np.array(x, dtype=np.float64)
    x.setflags(write=False)
    return SolverResult(x=x, iterations=int(iterations), residual=_natural_map(M, q, x, lo, hi), status=status,
                        ok=status == "converged")


# ----------------------------------------------------------------------------------------------- checks


def check_problem(M: Any, q: Any, m_name: str = "M", q_name: str = "q") -> tuple[np.ndarray, np.ndarray]:
    """M a finite square float64 (n, n) matrix and q a finite (n,) vector (ValueError / TypeError naming them)."""
    M = array(m_name, M, (None, None))
    if M.shape[0] != M.shape[1]:
        raise ValueError(f"{m_name} must be a square matrix, got shape {M.shape}")
    q = array(q_name, q, (None,))
    if q.shape[0] != M.shape[0]:
        raise ValueError(f"{q_name} must have length {M.shape[0]} to match {m_name} of shape {M.shape}, "
                         f"got length {q.shape[0]}")
    return np.ascontiguousarray(M), np.ascontiguousarray(q)


def check_symmetric(name: str, M: np.ndarray) -> np.ndarray:
    """M symmetric to 1e-10 relative (far above the rounding of a product like Dᵀ M⁻¹ D, far below any real
    asymmetry); returns the exactly symmetric ½ (M + Mᵀ)."""
    scale = float(np.max(np.abs(M))) if M.size else 0.0
    if M.size and float(np.max(np.abs(M - M.T))) > 1e-10 * scale:
        i, j = np.unravel_index(int(np.argmax(np.abs(M - M.T))), M.shape)
        raise ValueError(f"{name} must be symmetric, got {name}[{i}, {j}] = {float(M[i, j])!r} but "
                         f"{name}[{j}, {i}] = {float(M[j, i])!r}")
    return np.ascontiguousarray(0.5 * (M + M.T))


def _bound(name: str, value: Any, n: int, default: float) -> np.ndarray:
    if value is None:
        return np.full(n, default)
    if isinstance(value, (str, bytes, bool)):
        raise TypeError(f"{name} must be a number or an array of {n} numbers, got {_show(value)}")
    try:
        out = np.array(value, dtype=np.float64)
    except (TypeError, ValueError):
        raise TypeError(f"{name} must be a number or an array of {n} numbers, got {_show(value)}") from None
    if out.ndim == 0:
        out = np.full(n, float(out))
    if out.shape != (n,):
        raise ValueError(f"{name} must be a number or have shape ({n},), got shape {out.shape}: {_show(value)}")
    if np.any(np.isnan(out)):
        raise ValueError(f"{name} must not contain NaN, got {_show(value)}")
    return out


def check_bounds(lo: Any, hi: Any, n: int) -> tuple[np.ndarray, np.ndarray]:
    """lo (default 0) and hi (default +inf): scalars or (n,), no NaN, lo < +inf, hi > -inf, lo <= hi."""
    lo = _bound("lo", lo, n, 0.0)
    hi = _bound("hi", hi, n, np.inf)
    if np.any(lo == np.inf):
        raise ValueError(f"lo must be < +inf, got lo[{int(np.argmax(lo == np.inf))}] = inf")
    if np.any(hi == -np.inf):
        raise ValueError(f"hi must be > -inf, got hi[{int(np.argmax(hi == -np.inf))}] = -inf")
    if np.any(lo > hi):
        i = int(np.argmax(lo > hi))
        raise ValueError(f"lo must be <= hi, got lo[{i}] = {float(lo[i])!r} > hi[{i}] = {float(hi[i])!r}")
    return lo, hi


def check_start(x0: Any, n: int, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    """The starting point: (n,) finite, projected onto the box [lo, hi]; default the projection of 0."""
    if x0 is None:
        return np.minimum(np.maximum(np.zeros(n), lo), hi)
    x0 = array("x0", x0, (n,))
    return np.minimum(np.maximum(x0, lo), hi)


def check_iterations(name: str, value: Any) -> int:
    """An integer >= 0 (bool is not an integer here)."""
    if isinstance(value, bool) or not isinstance(value, (numbers.Integral, np.integer)):
        raise TypeError(f"{name} must be an integer >= 0, got {_show(value)} of type {type(value).__name__}")
    if int(value) < 0:
        raise ValueError(f"{name} must be >= 0, got {_show(value)}")
    return int(value)


def check_tol(value: Any) -> float:
    """tol: a finite real >= 0."""
    return non_negative("tol", value)


def check_omega(value: Any) -> float:
    """omega: a real in the open interval (0, 2), where SOR converges for a symmetric positive definite M."""
    out = real("omega", value)
    if not 0.0 < out < 2.0:
        raise ValueError(f"omega must be in the open interval (0, 2), got {_show(value)}")
    return out


def check_box_problem(M: Any, q: Any, lo: Any, hi: Any, x0: Any, iterations: Any,
                      tol: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray, int, float]:
    """The checks every box-constrained iterative solver makes, in order: (M, q, lo, hi, x, iterations, tol)
    validated, x the start (``check_start``)."""
    M, q = check_problem(M, q)
    n = q.shape[0]
    lo, hi = check_bounds(lo, hi, n)
    return M, q, lo, hi, check_start(x0, n, lo, hi), check_iterations("iterations", iterations), check_tol(tol)

