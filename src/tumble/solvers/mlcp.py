"""Turning a mixed LCP (bilateral and unilateral constraints) into a pure LCP (ArtiSynth notes 0.6–0.7).

The mixed LCP, with velocities (or accelerations) u (n_u,), bilateral impulses λ (n_g,) that are free and
unilateral impulses z (m,) that must be >= 0:

    [ M  −Gᵀ  −Nᵀ ] [u]   [−b_m]   [0]
    [ G   0    0  ] [λ] + [  g ] = [0],      0 <= z ⊥ w >= 0,  λ free,
    [ N   0    0  ] [z]   [  n ]   [w]

i.e. M u = b_m + Gᵀλ + Nᵀz (the constraint impulses act along the rows of G and N), G u + g = 0 (bilateral
rows held exactly) and w = N u + n (the unilateral rows' velocities, complementary to z).

The first two block rows form the KKT system of notes 0.6 with K = [M Gᵀ; G 0] (the sign of λ flipped):
    K [u; −λ] = [b_m + Nᵀ z; −g].
Factor K once (sparse LU, ``scipy.sparse.linalg.splu``) and solve it for the right-hand side [b_m; −g] and
for each of the m columns [N_jᵀ; 0] (the "m solves of K" of notes 0.7):
    K [u₀; μ₀] = [b_m; −g],   K [U; Μ] = [Nᵀ; 0]    ⇒   u = u₀ + U z,   λ = −(μ₀ + Μ z).
Substituting u into w = N u + n gives the pure LCP
    w = A z + q,   A = N U,   q = N u₀ + n,   0 <= z ⊥ w >= 0.
When M is symmetric positive definite and G has full row rank, A = N (M⁻¹ − M⁻¹Gᵀ(G M⁻¹ Gᵀ)⁻¹ G M⁻¹) Nᵀ
(the projected inverse of notes 0.5–0.7) is symmetric positive semidefinite, so lemke, pgs, apgd and cg_qp
all apply.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import scipy.sparse as sp
from scipy.sparse.linalg import norm as sparse_norm
from scipy.sparse.linalg import splu

from .._checks import array

__all__ = ["mlcp_to_lcp"]

_KKT_RESIDUAL = 1e-8
"""The solves with K are checked: a relative residual ‖K X − R‖ / (‖K‖ ‖X‖ + ‖R‖) above 1e-8 (eight digits
lost, far above the ~1e-15 of a well-posed factorization) means K is numerically singular."""


def _matrix(name: str, value: Any, rows: int | None, cols: int) -> sp.csc_matrix:
    """A finite (rows, cols) matrix, dense array-like or scipy.sparse, as CSC."""
    if sp.issparse(value):
        out = sp.csc_matrix(value, dtype=np.float64)
        if not np.all(np.isfinite(out.data)):
            raise ValueError(f"{name} must be finite, got a sparse matrix with non-finite entries")
    else:
        dense = array(name, value, (None, None))
        out = sp.csc_matrix(dense)
    if (rows is not None and out.shape[0] != rows) or out.shape[1] != cols:
        want = f"({'k' if rows is None else rows}, {cols})"
        raise ValueError(f"{name} must have shape {want}, got shape {out.shape}")
    return out


def _vector(name: str, value: Any, n: int) -> np.ndarray:
    return np.zeros(n) if value is None else array(name, value, (n,))


def mlcp_to_lcp(M: Any, G: Any, N: Any, bm: Any, g: Any = None, n: Any = None
                ) -> tuple[np.ndarray, np.ndarray, Callable[[Any], tuple[np.ndarray, np.ndarray]]]:
    """Reduce the mixed LCP of the module docstring to the pure LCP w = A z + q (ArtiSynth notes 0.7).

    Args:
        M: (n_u, n_u) mass (or system) matrix, dense or scipy.sparse.
        G: (n_g, n_u) bilateral constraint rows (n_g may be 0; None means none).
        N: (m, n_u) unilateral constraint rows (m may be 0).
        bm: (n_u,) the known right-hand side (impulses / forces) of M u = b_m + Gᵀλ + Nᵀz.
        g: (n_g,) bilateral offsets, G u + g = 0; default 0.
        n: (m,) unilateral offsets, w = N u + n; default 0.

    Returns:
        (A (m, m), q (m,), recover): the LCP data, and ``recover(z)`` -> (u (n_u,), λ (n_g,)) for a z (m,),
        one more solve with the stored factorization of K = [M Gᵀ; G 0].

    Raises:
        ValueError: wrong shapes, non-finite entries, or K = [M Gᵀ; G 0] singular (e.g. G rank-deficient, or
            M singular on the null space of G); the message names the argument. TypeError: non-numeric input.
    """
    if sp.issparse(M):
        nu = M.shape[0]
    else:
        nu = array("M", M, (None, None)).shape[0]
    Mk = _matrix("M", M, nu, nu)
    Gk = _matrix("G", np.zeros((0, nu)) if G is None else G, None, nu)
    Nk = _matrix("N", N, None, nu)
    ng, m = Gk.shape[0], Nk.shape[0]
    bm = array("bm", bm, (nu,))
    g = _vector("g", g, ng)
    n = _vector("n", n, m)
    if nu == 0:
        raise ValueError(f"M must have at least one row, got shape {(nu, nu)}")
    K = sp.bmat([[Mk, Gk.T], [Gk, None]], format="csc") if ng else Mk.tocsc()
    try:
        lu = splu(K)
    except RuntimeError as err:   # "Factor is exactly singular"
        raise ValueError(f"the KKT matrix [M Gᵀ; G 0] built from M (shape {(nu, nu)}) and G (shape "
                         f"{Gk.shape}) is singular ({err}): G must have full row rank and M must be "
                         f"positive definite on the null space of G") from None
    knorm = float(sparse_norm(K, np.inf))

    def solve(rhs: np.ndarray) -> np.ndarray:
        sol = lu.solve(rhs)
        err = float(np.max(np.abs(K @ sol - rhs), initial=0.0))
        size = knorm * float(np.max(np.abs(sol), initial=0.0)) + float(np.max(np.abs(rhs), initial=0.0))
        if not np.all(np.isfinite(sol)) or err > _KKT_RESIDUAL * max(size, np.finfo(np.float64).tiny):
            raise ValueError(f"the KKT matrix [M Gᵀ; G 0] built from M (shape {(nu, nu)}) and G (shape "
                             f"{Gk.shape}) is numerically singular (solve residual {err:.3g}): G must have "
                             f"full row rank and M must be positive definite on the null space of G")
        return sol

    base = solve(np.concatenate([bm, -g]))
    cols = solve(np.vstack([Nk.T.toarray(), np.zeros((ng, m))])) if m else np.zeros((nu + ng, 0))
    cols = cols.reshape(nu + ng, m)
    A = np.asarray(Nk @ cols[:nu])
    q = np.asarray(Nk @ base[:nu]) + n

    def recover(z: Any) -> tuple[np.ndarray, np.ndarray]:
        """(u (n_u,), λ (n_g,)) for unilateral impulses z (m,): K [u; −λ] = [b_m + Nᵀz; −g] (notes 0.7)."""
        z = array("z", z, (m,))
        sol = solve(np.concatenate([bm + Nk.T @ z, -g]))
        return sol[:nu], -sol[nu:]

    return A.reshape(m, m), q.reshape(m), recover

