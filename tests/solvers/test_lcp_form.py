"""The rows-to-LCP form of solvers/lcp_form.py (Lemke's problem for the World's step and the link contact stage):
against ContactProblem.pyramid_lcp's independent assembly, and its solutions against the conditions of each row
kind (ArtiSynth notes 0.10)."""

from __future__ import annotations

import numpy as np
import pytest

import tumble as tb
from tumble.solvers.contact_problem import ContactProblem
from tumble.solvers.lcp_form import (
    ROW_BOUNDED,
    ROW_FRICTION,
    ROW_PAIRED,
    ROW_UNILATERAL,
    lcp_impulses,
    lcp_layout,
    rows_lcp,
)


def _spd(rng, n):
    A = rng.normal(size=(n, n))
    return A @ A.T + 0.1 * np.eye(n)


@pytest.mark.parametrize("k", [3, 4, 8])
def test_contact_rows_give_the_pyramid_lcp_of_the_contact_problem(k):
    """Contacts' (normal, t1, t2) rows alone: the same M and q as ContactProblem.pyramid_lcp (scipy assembly,
    to 1e-12), and λ = T z its to_impulses."""
    rng = np.random.default_rng(k)
    c = 3
    N, q, mu = _spd(rng, 3 * c), rng.normal(size=3 * c), rng.uniform(0.2, 1.0, c)
    kind = np.tile([ROW_UNILATERAL, ROW_FRICTION, ROW_PAIRED], c)
    mu_rows = np.zeros(3 * c)
    mu_rows[1::3] = mu
    M, qq = rows_lcp(N, q, kind, mu_rows, k)
    problem = ContactProblem(list(range(c)), 0.01, None, None, N, q, None, mu)
    M_ref, q_ref, to_impulses = problem.pyramid_lcp(k)
    np.testing.assert_allclose(M, M_ref, atol=1e-12)
    np.testing.assert_allclose(qq, q_ref, atol=1e-12)
    z = rng.uniform(0.0, 1.0, M.shape[0])
    out = np.empty(3 * c)
    lcp_impulses(z, kind, k, out)
    np.testing.assert_allclose(out, to_impulses(z), atol=1e-12)


def test_a_solution_meets_every_row_kind_s_conditions():
    """Random problems of two contacts with pyramid friction, a limit (unilateral) and two bounded rows (dry
    friction), solved by tumble.solvers.lemke: the rows' λ and w = N λ + q meet, to 1e-9, λ_n >= 0 ⊥ w_n >= 0 on
    the unilateral rows; |λ| <= b on a bounded row, w = 0 strictly inside, w <= 0 at +b and >= 0 at −b; each
    friction impulse inside μ λ_n's polygon and taking out the most power, λ_t · w_t <= d · w_t for every vertex
    d of it (maximal dissipation)."""
    rng = np.random.default_rng(3)
    k = 6
    kind = np.array([ROW_UNILATERAL, ROW_FRICTION, ROW_PAIRED, ROW_UNILATERAL, ROW_FRICTION, ROW_PAIRED,
                     ROW_UNILATERAL, ROW_BOUNDED, ROW_BOUNDED])
    n = kind.shape[0]
    angles = 2 * np.pi * np.arange(k) / k
    polygon = np.stack([np.cos(angles), np.sin(angles)], axis=1)
    edge_normals = np.stack([np.cos(angles + np.pi / k), np.sin(angles + np.pi / k)], axis=1)
    bound_hits = 0
    for _ in range(40):
        N, q = _spd(rng, n), rng.normal(size=n) * 2.0
        mu = np.zeros(n)
        mu[[1, 4]] = rng.uniform(0.2, 1.0, 2)
        mu[[7, 8]] = rng.uniform(0.05, 1.0, 2)
        M, qq = rows_lcp(N, q, kind, mu, k)
        assert M.shape[0] == lcp_layout(kind, k)[3] == 3 + 2 * (k + 1) + 2 * 3
        r = tb.solvers.lemke(M, qq)
        assert r.ok
        lam = np.empty(n)
        lcp_impulses(r.x, kind, k, lam)
        w = N @ lam + q
        for i in (0, 3, 6):
            assert lam[i] >= -1e-9 and w[i] >= -1e-9 and abs(lam[i] * w[i]) < 1e-9
        for i in (7, 8):
            b = mu[i]
            assert abs(lam[i]) <= b + 1e-9
            if abs(lam[i]) < b - 1e-9:
                assert abs(w[i]) < 1e-9
            else:
                bound_hits += 1
                assert w[i] * np.sign(lam[i]) <= 1e-9
        for t in (1, 4):
            lam_t, w_t, limit = lam[t:t + 2], w[t:t + 2], mu[t] * lam[t - 1]
            assert np.max(edge_normals @ lam_t) <= limit * np.cos(np.pi / k) + 1e-9
            assert lam_t @ w_t <= np.min(limit * polygon @ w_t) + 1e-9
    assert bound_hits > 0   # some dry-friction rows slipped at their bound
