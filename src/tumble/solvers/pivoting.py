"""Lemke's complementary pivoting for the LCP w = M x + q, x >= 0, w >= 0, xᵀw = 0 (ArtiSynth notes 0.3,
0.7–0.8; Cottle, Pang & Stone, *The Linear Complementarity Problem*, 1992, ch. 4).

The augmented system w = M x + q + d z0 with the covering vector d = 1 and an artificial variable z0 >= 0 is
kept as a dense tableau: the explicit inverse B⁻¹ (n, n) of the basis and the basic values b = B⁻¹ q, with
the columns of [I, −M, −d] for (w, x, z0). Start: z0 enters at the value that makes w = q + d z0 >= 0,
replacing the most negative q_i. Then each pivot brings in the complement of the variable that just left
(x_i for w_i, w_i for x_i) and the ratio test chooses which basic variable leaves. It ends when z0 leaves
(a complementary basis: a solution), when the entering column has no positive entry (a *secondary ray*:
status ``"infeasible"``), or at the pivot cap (``"max_iterations"``).

Anti-cycling: the **lexicographic** minimum-ratio rule. Ties in the ratio b_i / a_i are broken by comparing
the rows (B⁻¹)_i / a_i column by column and taking the lexicographically smallest; as the rows of B⁻¹ are
independent the choice is unique, and it is the pivot the perturbed problem q + (ε, ε², …, εⁿ) would make,
which cannot revisit a basis (Cottle, Pang & Stone, ch. 4, degeneracy resolution). The first pivot uses the
same rule on the rows of [q, I] (the last index among the most negative q_i). When z0 is among the tied rows
it leaves at once. Ties are decided with a tolerance of 1e-11 relative (``_TIE``), above the rounding of the
scaled tableau.

Numerics: M and q are divided by max(|M|, |q|) first (which changes neither x nor the pivots), so the pivot
tolerance 1e-12 (``_PIVOT``) is relative. At the end the complementary basis B defines the solution exactly:
with S the basic x's, M_SS x_S = −q_S and x = 0 off S (M_SS is nonsingular because B is), so x is
re-solved from that system ("polished") and kept when its residual is lower than the tableau's. A point
whose scaled residual is still above √eps · (1 + ‖x‖∞) gets status ``"degenerate"`` (the basis was
numerically singular), never a silent ``ok``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..jit import njit
from .result import (
    CONVERGED,
    DEGENERATE,
    INFEASIBLE,
    MAX_ITERATIONS,
    STATUS_NAMES,
    SolverResult,
    _result,
    check_iterations,
    check_problem,
    natural_map_norm,
)

__all__ = ["LEMKE_ACCEPT", "MAX_LEMKE_SIZE", "lemke", "lemke_retried"]

MAX_LEMKE_SIZE = 2000
"""The largest n that ``lemke`` accepts. Its tableau holds B⁻¹ (n × n, 32 MB at n = 2000) and a pivot costs
O(n²), with typically n/2 to 2n pivots: at n = 2000 a random positive definite problem took 970 pivots and
8 s on the 2-core development machine. Above this, ``lemke`` raises ``ValueError`` before any work; pgs, apgd
or cg_qp scale to larger problems."""

LEMKE_ACCEPT = float(np.sqrt(np.finfo(np.float64).eps))
"""The natural-map residual of a scaled LCP (max |M|, |q| = 1) above which ``lemke_retried`` refuses a
complementary basis (rounding made it inexact)."""

_PIVOT = 1e-12
"""An entering-column entry a_i counts as positive when a_i > 1e-12 · max(1, max|a|) (scaled tableau): a
pivot on a smaller one would amplify rounding by more than 1e12."""

_TIE = 1e-11
"""Two ratios (or two lexicographic entries) within 1e-11 · (1 + |value|) are a tie: ten times the pivot
tolerance, well above the rounding of the scaled tableau after a few hundred pivots (~1e-14), far below any
genuine gap between ratios of an O(1) problem."""



@njit(cache=True)
def _pivot(binv, b, a, r):
    """Make the entering column (a, its current tableau column) the unit vector e_r: divide row r by a_r and
    eliminate a from the other rows, in B⁻¹ (n, n) and b (n,) in place."""
    n = b.shape[0]
    inv = 1.0 / a[r]
    b[r] *= inv
    for k in range(n):
        binv[r, k] *= inv
    for i in range(n):
        f = a[i]
        if i == r or f == 0.0:
            continue
        b[i] -= f * b[r]
        for k in range(n):
            binv[i, k] -= f * binv[r, k]


@njit(cache=True)
def _lemke_kernel(MT, q, max_pivots):
    """Lemke's method (module docstring) on a scaled problem; ``MT`` is Mᵀ (row j is column j of M).

    Variables are numbered w_i = i, x_j = n + j, z0 = 2n. Returns (x (n,), basis (n,) variable per row,
    pivots, code) with code CONVERGED, MAX_ITERATIONS (the pivot cap) or INFEASIBLE (a secondary ray).
    """
    n = q.shape[0]
    x = np.zeros(n)
    basis = np.arange(n)
    if n == 0 or np.min(q) >= 0.0:
        return x, basis, 0, CONVERGED
    if max_pivots == 0:
        return x, basis, 0, MAX_ITERATIONS
    binv = np.eye(n)
    b = q.copy()
    a = np.empty(n)
    cand = np.empty(n, dtype=np.int64)
    # first pivot: z0 enters (column −d = −1) in place of the lexicographically smallest row of [q, I]
    qmin = np.min(q)
    r = 0
    for i in range(n):
        if q[i] <= qmin + _TIE * (1.0 + abs(qmin)):
            r = i   # the last of the tied rows is the lexicographic minimum of (q_i, e_i)
    a[:] = -1.0
    _pivot(binv, b, a, r)
    leaving = basis[r]
    basis[r] = 2 * n
    z0row = r
    pivots = 1
    entering = n + leaving
    while True:
        if pivots >= max_pivots:
            code = MAX_ITERATIONS
            break
        if entering < n:                      # w_i: column e_i
            for i in range(n):
                a[i] = binv[i, entering]
        else:                                 # x_j: column −M[:, j]
            a[:] = -(binv @ MT[entering - n])
        amax = np.max(np.abs(a))
        ptol = _PIVOT * max(1.0, amax)
        theta = np.inf
        for i in range(n):
            if a[i] > ptol:
                t = max(b[i], 0.0) / a[i]
                if t < theta:
                    theta = t
        if theta == np.inf:
            code = INFEASIBLE
            break
        nc = 0
        has_z0 = False
        for i in range(n):
            if a[i] > ptol and max(b[i], 0.0) / a[i] <= theta + _TIE * (1.0 + theta):
                cand[nc] = i
                nc += 1
                if i == z0row:
                    has_z0 = True
        if has_z0:
            r = z0row
        else:
            for k in range(n):
                if nc == 1:
                    break
                vmin = np.inf
                vabs = 0.0
                for c in range(nc):
                    v = binv[cand[c], k] / a[cand[c]]
                    vmin = min(vmin, v)
                    vabs = max(vabs, abs(v))
                keep = 0
                for c in range(nc):
                    if binv[cand[c], k] / a[cand[c]] <= vmin + _TIE * max(1.0, vabs):
                        cand[keep] = cand[c]
                        keep += 1
                nc = keep
            r = cand[0]
            for c in range(1, nc):            # unresolved only through rounding: take the largest pivot
                if a[cand[c]] > a[r]:
                    r = cand[c]
        _pivot(binv, b, a, r)
        pivots += 1
        leaving = basis[r]
        basis[r] = entering
        if leaving == 2 * n:
            code = CONVERGED
            break
        entering = leaving + n if leaving < n else leaving - n
    for i in range(n):
        v = basis[i]
        if n <= v < 2 * n:
            x[v - n] = max(b[i], 0.0)
    return x, basis, pivots, code


@njit(cache=True)
def _polish(M, q, x, basis):
    """Re-solve the complementary basis exactly: M_SS x_S = −q_S on the basic x's S, x = 0 elsewhere; kept
    when its natural-map residual is no larger than x's (module docstring). M (n, n), q, x (n,)."""
    n = q.shape[0]
    zero, inf = np.zeros(n), np.full(n, np.inf)
    S = np.sort(basis[(basis >= n) & (basis < 2 * n)] - n)
    if S.size == 0:
        return x
    sub = np.empty((S.size, S.size))
    rhs = np.empty(S.size)
    for i in range(S.size):
        rhs[i] = -q[S[i]]
        for j in range(S.size):
            sub[i, j] = M[S[i], S[j]]
    try:
        xs = np.linalg.solve(sub, rhs)
    except Exception:   # singular to working precision: the tableau's x stands
        return x
    y = np.zeros(n)
    for i in range(S.size):
        y[S[i]] = max(xs[i], 0.0)
    if natural_map_norm(y, M @ y + q, zero, inf) <= natural_map_norm(x, M @ x + q, zero, inf):
        return y
    return x


@njit(cache=True)
def lemke_retried(M, q, regularized, tries, max_pivots, accept, as_lemke):
    """Lemke's method with a regularize-and-retry ladder: the one wrapper that ``lemke``, the step's Lemke
    solve (velocity_solve.py) and the event method's contact LCPs (methods/event.py) share.

    Try t replaces the first ``regularized`` diagonal entries d_i of M (n, n) by d_i (1 + tries[t, 0]) +
    tries[t, 1] (a relative and an absolute regularization; (0, 0) is the exact problem) and pivots from
    scratch, at most ``max_pivots`` times. A degenerate LCP can make Lemke end on a ray, at the pivot cap or on a
    basis that rounding made inexact, and a regularized diagonal moves it off the degeneracy. The first try
    that ends on a complementary basis whose natural-map residual (of the problem it solved) is small enough
    is taken. Without ``as_lemke`` (the step's rule), M and q (n,) come scaled (max |M|, |q| = 1) and the
    tableau's x must be within ``accept``: an x blown up to 1e10 by rounding is refused. With ``as_lemke``
    (``lemke``'s rule, module docstring), each try is scaled to max |M_t|, |q| = 1, its x re-solved from its
    basis, and accepted within accept (1 + ‖x‖∞). M is left as it came.

    Returns (x (n,), basis (n,), pivots of all tries, code): CONVERGED with the accepted try's x and basis,
    else the last try's with its code (DEGENERATE for a complementary basis refused as inexact).
    """
    n = q.shape[0]
    zero, inf = np.zeros(n), np.full(n, np.inf)
    x, basis, pivots, code = np.zeros(n), np.arange(n), 0, MAX_ITERATIONS
    for t in range(tries.shape[0]):
        Mt, qt = M.copy(), q
        for i in range(regularized):
            Mt[i, i] = M[i, i] * (1.0 + tries[t, 0]) + tries[t, 1]
        if as_lemke:
            scale = max(np.max(np.abs(Mt)), np.max(np.abs(q))) if n else 0.0
            if scale == 0.0:   # M = 0 and q = 0: x = 0 solves it
                return np.zeros(n), np.arange(n), pivots, CONVERGED
            Mt, qt = Mt / scale, q / scale
        x, basis, used, code = _lemke_kernel(np.ascontiguousarray(Mt.T), qt, max_pivots)
        pivots += used
        if code == CONVERGED:
            bound = accept
            if as_lemke:
                if used > 0:
                    x = _polish(Mt, qt, x, basis)
                size = 0.0
                for i in range(n):
                    size = max(size, abs(x[i]))
                bound = accept * (1.0 + size)
            if natural_map_norm(x, Mt @ x + qt, zero, inf) <= bound:
                break
            code = DEGENERATE
    return x, basis, pivots, code


_EXACT = np.zeros((1, 2))
"""``lemke``'s one try: the exact problem."""


def _check_size(shape: tuple | None) -> None:
    """ValueError for a square matrix larger than MAX_LEMKE_SIZE (other shapes are check_problem's)."""
    if shape is not None and len(shape) == 2 and shape[0] == shape[1] and shape[0] > MAX_LEMKE_SIZE:
        raise ValueError(f"M has shape {tuple(shape)}: lemke's dense tableau is limited to n <= MAX_LEMKE_SIZE "
                         f"= {MAX_LEMKE_SIZE}; use pgs, apgd or cg_qp for larger problems")


def lemke(M: Any, q: Any, max_pivots: int | None = None) -> SolverResult:
    """Solve the LCP w = M x + q, x >= 0, w >= 0, xᵀw = 0 by Lemke's method (module docstring; ArtiSynth
    notes 0.3 and 0.7–0.8 for where such LCPs come from).

    Args:
        M: (n, n) finite matrix, n <= ``MAX_LEMKE_SIZE``. Lemke solves every LCP with M positive semidefinite
            (or, more generally, copositive-plus) that has a feasible point; for other M it may end on a ray
            even though a solution exists.
        q: (n,) finite vector.
        max_pivots: pivot cap, an integer >= 0; default max(100, 50 n).

    Returns:
        ``SolverResult`` with status ``"converged"``, ``"infeasible"`` (secondary ray), ``"max_iterations"``
        or ``"degenerate"`` (module docstring); ``iterations`` counts pivots, the first (z0 entering)
        included; ``residual`` is ``lcp_residual(M, q, x)``. Never raises for a well-formed input.

    Raises:
        ValueError: n > ``MAX_LEMKE_SIZE`` (before any work), M not square, q of another length, a NaN or
            infinite entry, max_pivots < 0. TypeError: non-numeric arrays, a non-integer max_pivots.
    """
    _check_size(getattr(M, "shape", None))  # refuse a big ndarray before even copying it
    M, q = check_problem(M, q)
    n = q.shape[0]
    _check_size(M.shape)
    cap = max(100, 50 * n) if max_pivots is None else check_iterations("max_pivots", max_pivots)
    zero, inf = np.zeros(n), np.full(n, np.inf)
    x, _, pivots, code = lemke_retried(M, q, 0, _EXACT, cap, LEMKE_ACCEPT, True)
    status = STATUS_NAMES[code]
    return _result(M, q, x, zero, inf, pivots, status)
