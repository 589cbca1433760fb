"""mlcp_to_lcp (ArtiSynth notes 0.7): reduce, solve with lemke, recover, and check the ORIGINAL mixed problem's
conditions; compare with a brute-force active-set enumeration that never forms the reduced LCP."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
import scipy.sparse as sp

from tumble.solvers import cg_qp, lemke, mlcp_to_lcp

# The mixed LCP (module docstring of tumble/solvers/mlcp.py):
#   M u − Gᵀλ − Nᵀz = b_m,   G u + g = 0,   w = N u + n,   0 <= z ⊥ w >= 0.


def brute_force_mlcp(M, G, N, bm, g, n, tol=1e-10):
    """Try every set S of active unilateral rows (w_S = 0, z = 0 off S): solve the square KKT system
        [M −Gᵀ −N_Sᵀ; G 0 0; N_S 0 0] [u; λ; z_S] = [b_m; −g; −n_S]
    with numpy and keep the solutions with z_S >= 0 and w >= 0 everywhere."""
    nu, ng, m = M.shape[0], G.shape[0], N.shape[0]
    found = []
    for mask in itertools.product([False, True], repeat=m):
        S = np.flatnonzero(mask)
        NS = N[S]
        K = np.block([[M, -G.T, -NS.T],
                      [G, np.zeros((ng, ng)), np.zeros((ng, len(S)))],
                      [NS, np.zeros((len(S), ng)), np.zeros((len(S), len(S)))]])
        rhs = np.concatenate([bm, -g, -n[S]])
        try:
            sol = np.linalg.solve(K, rhs)
        except np.linalg.LinAlgError:
            continue
        u, lam, zS = sol[:nu], sol[nu:nu + ng], sol[nu + ng:]
        z = np.zeros(m)
        z[S] = zS
        if np.all(zS >= -tol) and np.all(N @ u + n >= -tol):
            found.append((u, lam, z))
    return found


def check_mixed_conditions(M, G, N, bm, g, n, u, lam, z, tol):
    """The conditions of the original mixed problem, each to ``tol`` relative to the data's size."""
    scale = 1.0 + np.max(np.abs(bm)) + np.max(np.abs(M)) * np.max(np.abs(u))
    w = N @ u + n
    assert np.max(np.abs(M @ u - G.T @ lam - N.T @ z - bm)) < tol * scale      # dynamics
    assert np.max(np.abs(G @ u + g), initial=0.0) < tol * scale                 # bilateral rows hold
    assert np.all(z >= 0.0)                                                     # z >= 0 (lemke: exactly)
    assert np.all(w >= -tol * scale)                                            # w >= 0
    assert np.max(np.abs(z * w), initial=0.0) < tol * scale * (1.0 + np.max(np.abs(z), initial=0.0))


def rigid_body_example():
    """A 2 kg block (u = (ω, v), angular part first, as tumble's 6-vectors) moving down and spinning, onto
    the ground z = 0 at two corners (unilateral rows: the corners' normal velocities n · (v + ω × r) >= 0)
    while a bilateral row holds its y velocity at zero. bm = M u_prev + h f."""
    J = np.diag([0.05, 0.08, 0.1])
    M = np.zeros((6, 6))
    M[:3, :3] = J
    M[3:, 3:] = 2.0 * np.eye(3)
    u_prev = np.array([0.3, -1.0, 0.2, 0.1, 0.05, -1.5])
    h, f = 0.01, np.array([0.0, 0.0, 0.0, 0.0, 0.0, -2.0 * 9.81])
    bm = M @ u_prev + h * f
    G = np.array([[0.0, 0.0, 0.0, 0.0, 1.0, 0.0]])
    up = np.array([0.0, 0.0, 1.0])
    corners = [np.array([0.2, 0.1, -0.05]), np.array([-0.2, 0.1, -0.05])]
    N = np.array([np.concatenate([np.cross(r, up), up]) for r in corners])
    return M, G, N, bm, np.zeros(1), np.zeros(2)


def test_rigid_body_one_bilateral_two_unilateral():
    M, G, N, bm, g, n = rigid_body_example()
    A, q, recover = mlcp_to_lcp(M, G, N, bm, g, n)
    r = lemke(A, q)
    assert r.ok
    u, lam = recover(r.x)
    # 1e-9 (the brief): the data are O(1..10) and one 7×7 factorization plus a 2×2 Lemke solve leave ~1e-15
    check_mixed_conditions(M, G, N, bm, g, n, u, lam, r.x, 1e-9)
    reference = brute_force_mlcp(M, G, N, bm, g, n)
    assert len(reference) == 1                 # A is positive definite here: the solution is unique
    u_ref, lam_ref, z_ref = reference[0]
    assert np.max(np.abs(u - u_ref)) < 1e-9 and np.max(np.abs(lam - lam_ref)) < 1e-9
    assert np.max(np.abs(r.x - z_ref)) < 1e-9
    assert np.any(r.x > 0.0)                   # the block does hit the ground: a non-trivial case


@pytest.mark.parametrize("seed", range(12))
def test_random_mixed_problems(seed):
    rng = np.random.default_rng(900 + seed)
    nu = 6 * int(rng.integers(1, 4))
    ng = int(rng.integers(0, 4))
    m = int(rng.integers(1, min(6, nu - ng) + 1))   # m <= nu − ng: generic N gives a positive definite A
    B = rng.standard_normal((nu, nu))
    M = B @ B.T / nu + np.eye(nu)
    G = rng.standard_normal((ng, nu))
    N = rng.standard_normal((m, nu))
    bm, g, n = rng.standard_normal(nu), rng.standard_normal(ng), rng.standard_normal(m)
    A, q, recover = mlcp_to_lcp(M, G, N, bm, g, n)
    # A = N (projected M⁻¹) Nᵀ is symmetric positive semidefinite (notes 0.5–0.7)
    assert np.max(np.abs(A - A.T)) < 1e-12 * np.max(np.abs(A))
    assert np.linalg.eigvalsh(0.5 * (A + A.T))[0] > -1e-12
    r = lemke(A, q)
    assert r.ok
    u, lam = recover(r.x)
    check_mixed_conditions(M, G, N, bm, g, n, u, lam, r.x, 1e-9)
    reference = brute_force_mlcp(M, G, N, bm, g, n)
    assert len(reference) == 1                 # A is PD (m <= nu − ng): exactly one solution
    u_ref, lam_ref, z_ref = reference[0]
    assert np.max(np.abs(u - u_ref)) < 1e-9 and np.max(np.abs(r.x - z_ref)) < 1e-9
    assert np.max(np.abs(lam - lam_ref), initial=0.0) < 1e-9
    # the reduced LCP is a valid input of cg_qp too (A symmetric PSD), with the same answer
    c = cg_qp(0.5 * (A + A.T), q)
    assert c.ok and np.max(np.abs(c.x - r.x)) < 1e-8


def test_sparse_input_and_defaults():
    M, G, N, bm, g, n = rigid_body_example()
    dense = mlcp_to_lcp(M, G, N, bm, g, n)
    sparse = mlcp_to_lcp(sp.csr_matrix(M), sp.coo_matrix(G), sp.csc_matrix(N), bm)   # g, n default 0
    np.testing.assert_allclose(sparse[0], dense[0], rtol=0, atol=1e-14)
    np.testing.assert_allclose(sparse[1], dense[1], rtol=0, atol=1e-14)
    z = np.array([0.3, 0.1])
    for a, b in zip(sparse[2](z), dense[2](z), strict=True):
        np.testing.assert_allclose(a, b, rtol=0, atol=1e-14)


def test_no_bilateral_rows_is_the_schur_complement():
    """Without G the reduction is seed 004's N = D M⁻¹ Dᵀ-type Schur complement: A = N M⁻¹ Nᵀ,
    q = N M⁻¹ b_m + n (written out here with numpy's inverse)."""
    M, _, N, bm, _, n = rigid_body_example()
    n = np.array([0.1, -0.2])
    for G in (None, np.zeros((0, 6))):
        A, q, recover = mlcp_to_lcp(M, G, N, bm, None, n)
        Minv = np.linalg.inv(M)
        np.testing.assert_allclose(A, N @ Minv @ N.T, rtol=1e-13, atol=1e-15)
        np.testing.assert_allclose(q, N @ Minv @ bm + n, rtol=1e-13, atol=1e-15)
        u, lam = recover(np.array([1.0, 2.0]))
        assert lam.shape == (0,)
        np.testing.assert_allclose(u, Minv @ (bm + N.T @ np.array([1.0, 2.0])), rtol=1e-13)


def test_singular_kkt_rejected():
    M, G, N, bm, g, n = rigid_body_example()
    G2 = np.vstack([G, G])                         # the same bilateral row twice: K singular
    with pytest.raises(ValueError, match=r"KKT matrix \[M Gᵀ; G 0\].*singular"):
        mlcp_to_lcp(M, G2, N, bm)


@pytest.mark.parametrize(("kwargs", "pattern"), [
    ({"M": np.ones((6, 5))}, r"M must have shape \(6, 6\)"),
    ({"G": np.ones((1, 5))}, r"G must have shape \(k, 6\)"),
    ({"N": np.ones((2, 7))}, r"N must have shape \(k, 6\)"),
    ({"bm": np.ones(5)}, r"bm must have shape \(6,\)"),
    ({"g": np.ones(2)}, r"g must have shape \(1,\)"),
    ({"n": [0.0, np.nan]}, r"n must be finite"),
    ({"M": np.full((6, 6), np.inf)}, r"M must be finite"),
])
def test_bad_input(kwargs, pattern):
    M, G, N, bm, g, n = rigid_body_example()
    args = {"M": M, "G": G, "N": N, "bm": bm, "g": g, "n": n} | kwargs
    with pytest.raises(ValueError, match=pattern):
        mlcp_to_lcp(**args)


def test_recover_checks_z():
    M, G, N, bm, g, n = rigid_body_example()
    _, _, recover = mlcp_to_lcp(M, G, N, bm, g, n)
    with pytest.raises(ValueError, match=r"z must have shape \(2,\)"):
        recover(np.zeros(3))
