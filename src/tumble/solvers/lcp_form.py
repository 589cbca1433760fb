"""A list of contact, limit and friction rows as one LCP, for Lemke's method (ArtiSynth notes 0.10).

The rows' problem is w = N λ + q, each row r of a kind (``kind[r]``):

- ROW_UNILATERAL: 0 <= λ_r ⊥ w_r >= 0 (a contact's normal row, a joint limit);
- ROW_FRICTION, with the next row ROW_PAIRED: a contact's friction rows t1, t2, its normal row right before
  them. The friction impulse is Σ β_i d_i over the Anitescu–Stewart pyramid's k directions d_i = cos(2πi/k) t1
  + sin(2πi/k) t2, β >= 0, Σ β_i <= μ λ_n (μ = ``mu`` of the t1 row), with maximal dissipation: the slack γ of
  that bound is the sliding speed (``ContactProblem.pyramid_lcp``'s form);
- ROW_BOUNDED: |λ_r| <= mu[r], a constant bound (a joint's dry friction), written as the pyramid of the two
  directions ±1 with the bound in place of μ λ_n;
- ROW_ZERO: λ_r = 0 (a friction row of frictionless contact).

The unknowns z >= 0 are (λ of the unilateral rows in row order; β: k per friction pair, then 2 per bounded row;
γ: one per friction pair, then one per bounded row), and with T (rows × the λ and β unknowns) mapping them to the
rows' impulses, λ = T z (``lcp_impulses``):

    M = [[Tᵀ N T, E], [μ P − Eᵀ (friction pairs)]],   q̄ = (Tᵀ q, 0 for a pair, the bound for a bounded row),

E (β × γ) summing each pair's β into its γ row, P picking the pair's normal. For contact rows alone that is the
LCP the World's Lemke step solves (solvers/velocity_solve.py), with the same layout; the link contact stage
(robots/contact_solve.py) adds its limits and dry friction.
"""

from __future__ import annotations

import numpy as np

from ..jit import njit

ROW_UNILATERAL, ROW_FRICTION, ROW_PAIRED, ROW_BOUNDED, ROW_ZERO = range(5)
"""Row kinds of ``rows_lcp`` (module docstring)."""


@njit(cache=True)
def lcp_layout(kind, directions):
    """(unilateral rows, friction pairs, bounded rows, unknowns) of the rows' LCP (module docstring)."""
    m_u, pairs, bounded = 0, 0, 0
    for r in range(kind.shape[0]):
        if kind[r] == ROW_UNILATERAL:
            m_u += 1
        elif kind[r] == ROW_FRICTION:
            pairs += 1
        elif kind[r] == ROW_BOUNDED:
            bounded += 1
    return m_u, pairs, bounded, m_u + pairs * (directions + 1) + 3 * bounded


@njit(cache=True)
def rows_lcp(N, q, kind, mu, directions):
    """The LCP (M (s, s), q̄ (s,)) of rows with N (n, n), q (n,), kind (n,) int and mu (n,) (module docstring):
    the first ``lcp_layout(kind, directions)[0]`` unknowns are the unilateral rows' λ (Lemke's regularized ones)."""
    n = kind.shape[0]
    m_u, pairs, bounded, size = lcp_layout(kind, directions)
    k = directions
    top = m_u + pairs * k + 2 * bounded
    M = np.zeros((size, size))
    qq = np.zeros(size)
    if m_u == n:   # unilateral rows alone: T = I
        M[:, :] = N
        qq[:] = q
        return M, qq
    cs = np.cos(2.0 * np.pi * np.arange(k) / k)
    sn = np.sin(2.0 * np.pi * np.arange(k) / k)
    tmat = np.zeros((n, top))
    u, p, b = 0, 0, 0
    for r in range(n):
        if kind[r] == ROW_UNILATERAL:
            tmat[r, u] = 1.0
            u += 1
        elif kind[r] == ROW_FRICTION:
            for i in range(k):
                tmat[r, m_u + k * p + i] = cs[i]
                tmat[r + 1, m_u + k * p + i] = sn[i]
            p += 1
        elif kind[r] == ROW_BOUNDED:
            col = m_u + k * pairs + 2 * b
            tmat[r, col] = 1.0
            tmat[r, col + 1] = -1.0
            b += 1
    M[:top, :top] = tmat.T @ N @ tmat
    qq[:top] = tmat.T @ q
    u, p, b = 0, 0, 0
    for r in range(n):
        if kind[r] == ROW_UNILATERAL:
            u += 1
        elif kind[r] == ROW_FRICTION:
            g = top + p
            M[g, u - 1] = mu[r]   # the normal row, unilateral, just before the pair
            for i in range(k):
                M[m_u + k * p + i, g] = 1.0
                M[g, m_u + k * p + i] = -1.0
            p += 1
        elif kind[r] == ROW_BOUNDED:
            g = top + pairs + b
            col = m_u + k * pairs + 2 * b
            for i in range(2):
                M[col + i, g] = 1.0
                M[g, col + i] = -1.0
            qq[g] = mu[r]
            b += 1
    return M, qq


@njit(cache=True)
def lcp_impulses(z, kind, directions, out):
    """out (n,) = the rows' impulses λ = T z of a solution z of ``rows_lcp`` (module docstring)."""
    n = kind.shape[0]
    m_u, pairs, _, _ = lcp_layout(kind, directions)
    k = directions
    cs = np.cos(2.0 * np.pi * np.arange(k) / k)
    sn = np.sin(2.0 * np.pi * np.arange(k) / k)
    u, p, b = 0, 0, 0
    for r in range(n):
        code = kind[r]
        if code == ROW_UNILATERAL:
            out[r] = z[u]
            u += 1
        elif code == ROW_FRICTION:
            t1, t2 = 0.0, 0.0
            for i in range(k):
                beta = z[m_u + k * p + i]
                t1 += beta * cs[i]
                t2 += beta * sn[i]
            out[r], out[r + 1] = t1, t2
            p += 1
        elif code == ROW_BOUNDED:
            col = m_u + k * pairs + 2 * b
            out[r] = z[col] - z[col + 1]
            b += 1
        elif code == ROW_ZERO:
            out[r] = 0.0
