"""The link contact stage's solve: its rows' impulses by the World's solver (``World(solver=...)``).

robots/step.py ``contact_stage`` builds the rows of the contacts that touch a link, the joint limits in reach and
the joints' dry friction, in joint space: W = J M⁻¹ Jᵀ (+ J_b M_b⁻¹ J_bᵀ of a free body on the other side) through
each row's Z = L⁻ᵀ Jᵀ on its path (``Rows``: zc, zd = D⁻¹ Z), the free velocities v_free and the targets. This
module finds λ with

    w = (W + C) λ + v_free − target,   normal and limit rows 0 <= λ ⊥ w >= 0,   a contact's friction pair in
    the friction model's set of radius μ λ_n,   a dry-friction row |λ| <= its bound (and w = 0 inside it),

C the compliance of a compliant pair's normal rows (``Rows.row_C``, 0 for the others),

by the solver the World was given, as the World's own contact rows are (solvers/velocity_solve.py):

- ``PGS`` (default): projected Gauss–Seidel in joint space, W never formed (``_pgs_rows``: (W λ)_r = Z_r · u +
  J_b · Δv_b with u = D⁻¹ Σ Z_c λ_c and Δv_b = Σ λ_c M_b⁻¹ J_bᵀ kept current, so a row costs its path), each
  contact's friction by the World's friction step (``_friction_step``: sequential_impulse.friction_disc's disc
  or friction_polygon's polygon in the K_t metric, or the box), and a pair's torsional and rolling rows
  (docs/materials.md) after its contacts, as the World's ``angular_sweep`` (``_block_sweep``); the stage's own
  sweep cap and relative tolerance (``Forest.iterations``, ``Forest.tolerance``);
- ``APGD``, ``CG``, ``Lemke``: on W formed densely (``delassus``, the rows that move something): projected.apgd's
  accelerated projected gradient with the rows' feasible set (solvers/rows.py ``RowList``, the projection of
  the World's APGD); mprgp.cg_qp's projected conjugate gradients on the normal and limit rows (frictionless,
  seed 004's QP: ``World`` refuses joints with dry friction under "cg"); Lemke's method on the rows' LCP
  (solvers/lcp_form.py: the frictionless one, or the Anitescu–Stewart pyramid's, with limits as unilateral rows
  and dry friction as bounded ones). Iterations: the World's per sub-step times its sub-steps (the stage solves
  once a step); tolerance the World's [m/s]. A failed solve (non-finite, infeasible, over MAX_LEMKE_SIZE)
  falls back on ``FALLBACK_SWEEPS`` Gauss–Seidel sweeps from the warm start, as the World's does.

``Rows.stats`` reports (iterations or sweeps, the residual: for PGS the last sweep's largest impulse change over
the largest impulse, else the natural-map residual [m/s] of solvers/rows.py, the status code of solvers/result.py).
"""

from __future__ import annotations

import numpy as np
from numba import types

from ..jit import njit, overload
from ..solvers.lcp_form import (
    ROW_BOUNDED,
    ROW_FRICTION,
    ROW_PAIRED,
    ROW_UNILATERAL,
    ROW_ZERO,
    lcp_impulses,
    lcp_layout,
    rows_lcp,
)
from ..solvers.mprgp import _mprgp_kernel
from ..solvers.pivoting import LEMKE_ACCEPT, MAX_LEMKE_SIZE, lemke_retried
from ..solvers.projected import _apgd_kernel
from ..solvers.result import CONVERGED, FAILED, INFEASIBLE, MAX_ITERATIONS
from ..solvers.rows import RowList, natural_residual, project
from ..solvers.sequential_impulse import (
    FRICTION_BOX,
    FRICTION_CONE,
    FRICTION_PYRAMID,
    disc_boundary,
    disc_frame,
    friction_polygon,
)
from ..solvers.velocity_solve import (
    APGD,
    CG,
    FALLBACK_SWEEPS,
    LEMKE_TRIES_FRICTIONLESS,
    LEMKE_TRIES_PYRAMID,
    PGS,
    Lemke,
)
from .closures import closure_sweeps

FALLBACK_TOLERANCE = 1e-6
"""The relative tolerance of the fallback sweeps (``Forest.tolerance``'s default)."""


@njit(cache=True, forceinline=True, refcount=False)
def _apply_row(r, delta, n_body_rows, zd, row_dofs, row_ndof, u, row_side, row_mjb, body_dv):
    """An impulse change ``delta`` on row r: u += D⁻¹ Z_r δ along its path (``zd``: D⁻¹ Z by path position), and
    each free body on it Δv_b += δ M_b⁻¹ J_bᵀ (rows below ``n_body_rows`` may have one)."""
    for t in range(row_ndof[r]):
        u[row_dofs[r, t]] += zd[r, t] * delta
    if r < n_body_rows:
        for side in range(2):
            body = row_side[r, side]
            if body >= 0:
                for a in range(6):
                    body_dv[body, a] += delta * row_mjb[r, side, a]


RANK_ONE = 1e-10
"""A contact's tangential block K_t of W counts as of rank one (or zero) when det K_t <= this × (tr K_t)²: a link
that can slide along one tangent only (a planar arm on a wall) or not at all, where ``friction_disc``'s sticking
impulse K_t⁻¹ v_t does not exist (``_friction_step``)."""

FRAME_SIZE = 12
"""Floats of a contact's ``tangent_frame``."""


@njit(cache=True, forceinline=True, refcount=False)
def tangent_frame(k11, k12, k22, frame):
    """frame (FRAME_SIZE,) = what the friction steps of a contact with tangential block K_t = [[k11, k12], [k12,
    k22]] of W need and W keeps over a step's sweeps: K_t; its inverse; its ``disc_frame`` (e1, e2, qa, qb); its
    rank, 2, 1 (``RANK_ONE``; then (qa, qb) is the unit vector e with K_t ≈ tr K_t · e eᵀ and e2 = tr K_t) or 0;
    and the γ of its last sliding friction step (``disc_boundary``'s start in the next sweep), 0 at first."""
    frame[0], frame[1], frame[2] = k11, k12, k22
    frame[11] = 0.0
    trace = k11 + k22
    det = k11 * k22 - k12 * k12
    if det > RANK_ONE * trace * trace:
        frame[3], frame[4], frame[5] = k22 / det, -k12 / det, k11 / det
        frame[6], frame[7], frame[8], frame[9] = disc_frame(k11, k12, k22)
        frame[10] = 2.0
    elif trace > 0.0:
        e1, e2 = (k11, k12) if k11 >= k22 else (k12, k22)   # the column of larger norm
        norm = np.sqrt(e1 * e1 + e2 * e2)
        frame[7], frame[8], frame[9] = trace, e1 / norm, e2 / norm
        frame[10] = 1.0
    else:
        frame[10] = 0.0


@njit(cache=True, forceinline=True, refcount=False)
def _friction_step(frame, old1, old2, vt1, vt2, limit, friction_model, directions):
    """The friction impulse (λ_t1, λ_t2) of one contact's Gauss–Seidel visit, by the World's own friction step
    (solvers/sequential_impulse.py, ArtiSynth notes 0.16 and 0.10): from the impulse ``old`` and the tangential
    velocity v_t it leaves, the point of the disc |λ_t| <= ``limit`` (FRICTION_CONE: ``friction_disc``, its
    sticking impulse λ_old − K_t⁻¹ v_t inside, ``disc_boundary`` outside) or of its inscribed polygon
    (FRICTION_PYRAMID: ``friction_polygon``) that removes v_t the most in the K_t⁻¹ metric (maximal
    dissipation), K_t the contact's tangential block of W = J M⁻¹ Jᵀ given by its ``tangent_frame``.
    FRICTION_BOX: each row in turn within ±limit, the second seeing the first's change (notes 0.10).
    Where K_t has rank one (``RANK_ONE``) with unit eigenvector e, v_t moves along e only: the impulse is s e, s
    the row's own step along e clamped to ±limit (the least impulse of the set of minimizers), then onto the
    polygon for the pyramid; for rank zero it is zero."""
    if not limit > 0.0:   # μ = 0 or friction="none" (μ set to 0), or no normal impulse
        return 0.0, 0.0
    k11, k12, k22, rank = frame[0], frame[1], frame[2], frame[10]
    if friction_model == FRICTION_BOX:
        n1 = min(max(old1 - vt1 / k11 if k11 > 0.0 else old1, -limit), limit)
        n2 = old2 - (vt2 + k12 * (n1 - old1)) / k22 if k22 > 0.0 else old2
        return n1, min(max(n2, -limit), limit)
    if rank == 2.0:
        if friction_model == FRICTION_PYRAMID:
            return friction_polygon(k11, k12, k22, old1, old2, vt1, vt2, limit, directions)
        u1 = old1 - (frame[3] * vt1 + frame[4] * vt2)
        u2 = old2 - (frame[4] * vt1 + frame[5] * vt2)
        if u1 * u1 + u2 * u2 <= limit * limit:
            return u1, u2
        t1, t2, frame[11] = disc_boundary(frame[6], frame[7], frame[8], frame[9], k11 * old1 + k12 * old2 - vt1,
                                          k12 * old1 + k22 * old2 - vt2, limit, frame[11])
        return t1, t2
    if rank == 0.0:
        return 0.0, 0.0
    e1, e2 = frame[8], frame[9]
    s = min(max(e1 * old1 + e2 * old2 - (e1 * vt1 + e2 * vt2) / frame[7], -limit), limit)
    if friction_model == FRICTION_PYRAMID:
        return friction_polygon(1.0, 0.0, 1.0, s * e1, s * e2, 0.0, 0.0, limit, directions)
    return s * e1, s * e2


@njit(cache=True, forceinline=True, refcount=False)
def _block_sweep(r, rows, u, friction_model, directions, change, largest, angular):
    """One Gauss–Seidel visit of the block of rows r, r + 1, r + 2: a contact's (normal, t1, t2), or with
    ``angular`` a pair's torsional and rolling rows (n, t1, t2 of its first contact; docs/materials.md). The three
    rows in turn, exactly as row by row, but with one pass along their shared path for the three residuals
    (Z_a · u) and one for the update, the coupling inside the block from its 3 × 3 block of W (``W``, ``W_off``).
    A contact: normal λ >= lo, then the friction by the World's friction step (``_friction_step``: the cone's disc
    or the pyramid's polygon of ``directions`` vertices in the K_t⁻¹ metric, or the box) within μ λ_n of the new
    λ_n, as the World's sweep takes a contact's friction after its normal. A pair's angular rows, as the World's
    ``angular_sweep``: the spin within ±μ_s Λ, then the rolling pair in the disc μ_r Λ (``friction_disc``
    whatever the friction model), Λ the sum of the pair's normal impulses (its ``row_normal[r]``-th row and the
    next ``row_normal[r + 1]`` − 1 contacts' normal rows). ``rows`` the contact stage's ``Rows``, ``u`` = D⁻¹ Σ Z λ.
    Returns (change, largest) with this block's impulse changes and impulses taken in."""
    zc, zd, row_dofs, row_ndof, row_side, row_jb, row_mjb, body_dv = (rows.zc, rows.zd, rows.row_dofs, rows.row_ndof,
                                                                      rows.row_side, rows.row_jb, rows.row_mjb,
                                                                      rows.body_dv)
    W, W_off, vrow, target, lam, lo, row_mu = rows.W, rows.W_off, rows.vrow, rows.target, rows.lam, rows.lo, rows.row_mu
    if not angular and lam[r] == 0.0 and lam[r + 1] == 0.0 and lam[r + 2] == 0.0:
        # a contact without impulse stays without while its normal row's residual keeps it open (then its friction
        # bound μ λ_n is 0 too): that residual alone, the same sum as below, decides it (a fifth of the humanoid's
        # contacts are speculative ones, inside the margin and not touching)
        if W[r] <= 0.0:
            return change, largest
        d0 = vrow[r] - target[r]
        for t in range(row_ndof[r]):
            d0 += zc[r, t] * u[row_dofs[r, t]]
        for side in range(2):
            body = row_side[r, side]
            if body >= 0:
                for a in range(6):
                    d0 += row_jb[r, side, a] * body_dv[body, a]
        if d0 >= 0.0:
            return change, largest
    d0 = vrow[r] - target[r]
    d1 = vrow[r + 1] - target[r + 1]
    d2 = vrow[r + 2] - target[r + 2]
    for t in range(row_ndof[r]):
        ud = u[row_dofs[r, t]]
        d0 += zc[r, t] * ud
        d1 += zc[r + 1, t] * ud
        d2 += zc[r + 2, t] * ud
    for side in range(2):
        body = row_side[r, side]
        if body >= 0:
            for a in range(6):
                dv = body_dv[body, a]
                d0 += row_jb[r, side, a] * dv
                d1 += row_jb[r + 1, side, a] * dv
                d2 += row_jb[r + 2, side, a] * dv
    w01, w02 = W_off[r], W_off[r + 1]
    l0, l1, l2 = lam[r], lam[r + 1], lam[r + 2]
    n0 = l0
    if angular:
        total = 0.0
        first = rows.row_normal[r]
        for j in range(rows.row_normal[r + 1]):
            total += lam[first + 3 * j]
        if W[r] > 0.0:
            n0 = min(max(l0 - d0 * rows.inv_W[r], -row_mu[r] * total), row_mu[r] * total)
        bound, model = row_mu[r + 1] * total, FRICTION_CONE
    else:
        if W[r] > 0.0:   # (inv_W: 1 / W, 0 for a row that moves nothing; a division costs several multiplications)
            n0 = max(l0 - (d0 + rows.row_C[r] * l0) * rows.inv_W[r], lo[r])   # (C: a compliant row's, else 0)
        bound, model = row_mu[r + 1] * n0, friction_model
    c0 = n0 - l0
    n1, n2 = _friction_step(rows.tangent_frame[r // 3], l1, l2, d1 + w01 * c0, d2 + w02 * c0, bound, model,
                            directions)
    c1, c2 = n1 - l1, n2 - l2
    # measured after the friction step: a sliding contact's impulse stays on the boundary, where a row-by-row
    # change before the projection would never end the sweeps
    change = max(change, abs(c0), abs(c1), abs(c2))
    largest = max(largest, abs(n0), abs(n1), abs(n2))
    lam[r], lam[r + 1], lam[r + 2] = n0, n1, n2
    if c0 != 0.0 or c1 != 0.0 or c2 != 0.0:
        for t in range(row_ndof[r]):
            u[row_dofs[r, t]] += zd[r, t] * c0 + zd[r + 1, t] * c1 + zd[r + 2, t] * c2
        for side in range(2):
            body = row_side[r, side]
            if body >= 0:
                for a in range(6):
                    body_dv[body, a] += (c0 * row_mjb[r, side, a] + c1 * row_mjb[r + 1, side, a]
                                         + c2 * row_mjb[r + 2, side, a])
    return change, largest


@njit(cache=True, forceinline=True, refcount=False)
def _pgs_rows(rows, n_rows, layout, u, friction_model, directions, iterations, tolerance):
    """Projected Gauss–Seidel on the rows (module docstring) from the warm start ``rows.lam``, until no impulse
    moves by more than ``tolerance`` of the largest, or ``iterations`` sweeps; u (nv,) scratch. Rows, by layout =
    (n_contact_rows, n_pair_rows, n_body_rows): contacts' triples below the first, pairs' angular triples below the
    second, loop closures' blocks below the third (robots/closures.py ``closure_sweep``; these are the rows that
    may touch a free body), then single rows. Returns (sweeps, the last sweep's relative change, CONVERGED or
    MAX_ITERATIONS)."""
    n_contact_rows, n_pair_rows, n_body_rows = layout
    zc, zd, row_dofs, row_ndof, row_side, row_mjb, body_dv = (rows.zc, rows.zd, rows.row_dofs, rows.row_ndof,
                                                              rows.row_side, rows.row_mjb, rows.body_dv)
    W, vrow, target, lam, lo, row_mu, row_normal = (rows.W, rows.vrow, rows.target, rows.lam, rows.lo, rows.row_mu,
                                                    rows.row_normal)
    for d in range(u.shape[0]):
        u[d] = 0.0
    for r in range(n_body_rows):
        for side in range(2):
            body = row_side[r, side]
            if body >= 0:
                for a in range(6):
                    body_dv[body, a] = 0.0
    for r in range(n_rows):
        _apply_row(r, lam[r], n_body_rows, zd, row_dofs, row_ndof, u, row_side, row_mjb, body_dv)
    sweeps, relative = 0, 0.0
    for _ in range(iterations):
        change, largest = 0.0, 0.0
        sweeps += 1
        for r in range(0, n_contact_rows, 3):
            change, largest = _block_sweep(r, rows, u, friction_model, directions, change, largest, False)
        for r in range(n_contact_rows, n_pair_rows, 3):   # after the normal rows that bound them, as the World's
            change, largest = _block_sweep(r, rows, u, friction_model, directions, change, largest, True)
        if n_body_rows > n_pair_rows:
            change, largest = closure_sweeps(rows, n_pair_rows, n_body_rows, u, change, largest)
        for r in range(n_body_rows, n_rows):
            if W[r] <= 0.0:
                continue
            s = vrow[r] - target[r]
            for t in range(row_ndof[r]):
                s += zc[r, t] * u[row_dofs[r, t]]
            new = lam[r] - s * rows.inv_W[r]
            if row_normal[r] < 0:    # a joint's dry friction: |λ| <= friction h
                new = min(max(new, -row_mu[r]), row_mu[r])
            else:
                new = max(new, lo[r])
            delta = new - lam[r]
            if delta != 0.0:
                _apply_row(r, delta, n_body_rows, zd, row_dofs, row_ndof, u, row_side, row_mjb, body_dv)
            change = max(change, abs(delta))
            largest = max(largest, abs(new))
            lam[r] = new
        relative = change / largest if largest > 0.0 else 0.0
        if change <= tolerance * largest:
            return sweeps, relative, CONVERGED
    return sweeps, relative, MAX_ITERATIONS


@njit(cache=True)
def _active_rows(rows, n_rows, n_contact_rows):
    """(index, contact rows among them): the rows that move something (W_rr > 0), in order, a contact's triple
    kept whole while its normal row moves something (its friction rows' bound is μ λ_n); the others keep λ = 0."""
    index = np.empty(n_rows, dtype=np.int64)
    count = 0
    for r in range(0, n_contact_rows, 3):
        if rows.W[r] > 0.0:
            for k in range(3):
                index[count] = r + k
                count += 1
    contacts = count
    for r in range(n_contact_rows, n_rows):
        if rows.W[r] > 0.0:
            index[count] = r
            count += 1
    return index[:count], contacts


@njit(cache=True)
def delassus(rows, index, n_contact_rows, u):
    """W (m, m) = J M⁻¹ Jᵀ + J_b M_b⁻¹ J_bᵀ + C on the rows ``index`` (m,), dense and symmetric: column j from
    D⁻¹ Z_j scattered into u (nv,) (zero on entry and on exit), each row's Z_i · u along its path, plus the blocks
    of a free body both rows touch (contact rows, those below ``n_contact_rows``, alone have a body side), plus a
    compliant normal row's compliance ``row_C`` on the diagonal (the World's operator N + C)."""
    zc, zd, row_dofs, row_ndof, row_side, row_jb, row_mjb = (rows.zc, rows.zd, rows.row_dofs, rows.row_ndof,
                                                             rows.row_side, rows.row_jb, rows.row_mjb)
    m = index.shape[0]
    W = np.empty((m, m))
    for jj in range(m):
        j = index[jj]
        for t in range(row_ndof[j]):
            u[row_dofs[j, t]] = zd[j, t]
        for ii in range(m):
            i = index[ii]
            s = 0.0
            for t in range(row_ndof[i]):
                s += zc[i, t] * u[row_dofs[i, t]]
            if i < n_contact_rows and j < n_contact_rows:
                for si in range(2):
                    b = row_side[i, si]
                    if b < 0:
                        continue
                    for sj in range(2):
                        if row_side[j, sj] == b:
                            for a in range(6):
                                s += row_jb[i, si, a] * row_mjb[j, sj, a]
            W[ii, jj] = s
        for t in range(row_ndof[j]):
            u[row_dofs[j, t]] = 0.0
    for ii in range(m):
        for jj in range(ii):
            mean = 0.5 * (W[ii, jj] + W[jj, ii])
            W[ii, jj] = mean
            W[jj, ii] = mean
        W[ii, ii] += rows.row_C[index[ii]]   # a compliant normal row's C (0 for the others)
    return W


@njit(cache=True)
def _dense_problem(rows, index, contacts, n_contact_rows, friction_model, directions, u):
    """The rows ``index`` (m,), contacts' triples in its first ``contacts`` entries and single rows after them, as a
    dense problem: (W (m, m), q (m,) = v_free − target, their ``RowList`` (a single row λ >= 0, a dry-friction row
    within ± its bound), the warm start x₀ (m,) projected onto it, the largest diagonal entry of W, the largest
    absolute row sum of W: a bound on its largest eigenvalue)."""
    m = index.shape[0]
    W = delassus(rows, index, n_contact_rows, u)
    q, x0, mu, scale = np.empty(m), np.empty(m), np.empty(m), np.zeros(m)
    lo, hi = np.zeros(m), np.full(m, np.inf)
    diag_max, upper = 0.0, 0.0
    for ii in range(m):
        r = index[ii]
        q[ii] = rows.vrow[r] - rows.target[r]
        x0[ii] = rows.lam[r]
        mu[ii] = rows.row_mu[r]
        if ii >= contacts and rows.row_normal[r] < 0:
            lo[ii], hi[ii] = -rows.row_mu[r], rows.row_mu[r]
        if W[ii, ii] > 0.0:
            scale[ii] = 1.0 / W[ii, ii]
        diag_max = max(diag_max, W[ii, ii])
        upper = max(upper, np.sum(np.abs(W[ii])))
    for ii in range(0, contacts, 3):   # a contact's friction rows share one mass, as the World's (solvers/rows.py)
        k = W[ii + 1, ii + 1] + W[ii + 2, ii + 2]
        scale[ii + 1] = scale[ii + 2] = 2.0 / k if k > 0.0 else 0.0
    feasible = RowList(contacts, mu, lo, hi, friction_model, directions, scale)
    project(feasible, x0)
    return W, q, feasible, x0, diag_max, upper


@njit(cache=True)
def _conclude(rows, n_rows, n_contact_rows, u, friction, problem, x, done, code):
    """Keep a dense solve's x (its rows ``index``; the other rows λ = 0), or fall back on Gauss–Seidel sweeps
    from the warm start when it failed or left a non-finite residual (module docstring). ``friction`` =
    (friction_model, directions), ``problem`` = (index, W, q, feasible). Returns (iterations, residual, status)."""
    index, W, q, feasible = problem
    residual = natural_residual(feasible, x, W @ x + q) if index.shape[0] else 0.0
    if code >= INFEASIBLE or not np.isfinite(residual):
        _pgs_rows(rows, n_rows, (n_contact_rows, n_contact_rows, n_contact_rows), u, friction[0], friction[1],
                  FALLBACK_SWEEPS, FALLBACK_TOLERANCE)
        return done, residual, FAILED
    for r in range(n_rows):
        rows.lam[r] = 0.0
    for ii in range(index.shape[0]):
        rows.lam[index[ii]] = x[ii]
    return done, residual, code


@njit(cache=True, refcount=True)
def _apgd_rows(solver, rows, n_rows, n_contact_rows, u, friction_model, directions):
    """APGD on the dense rows (module docstring), from the warm start."""
    index, contacts = _active_rows(rows, n_rows, n_contact_rows)
    W, q, feasible, x, diag_max, upper = _dense_problem(rows, index, contacts, n_contact_rows, friction_model,
                                                        directions, u)
    done, code = 0, CONVERGED
    if index.shape[0]:
        done, code, _ = _apgd_kernel(W, q, feasible, x, solver.iterations, solver.tolerance, diag_max, upper)
    return _conclude(rows, n_rows, n_contact_rows, u, (friction_model, directions), (index, W, q, feasible), x, done,
                     code)


@njit(cache=True, refcount=True)
def _cg_rows(solver, rows, n_rows, n_contact_rows, u, friction_model, directions):
    """MPRGP on the normal and limit rows (frictionless: the World refuses "cg" with another friction model, and
    joints with dry friction), from the warm start; the friction rows keep λ = 0."""
    every, contacts = _active_rows(rows, n_rows, n_contact_rows)
    index = np.empty(every.shape[0], dtype=np.int64)
    m = 0
    for ii in range(every.shape[0]):
        r = every[ii]
        if ii >= contacts and rows.row_normal[r] < 0:   # a dry-friction row: a box, not MPRGP's λ >= 0
            _pgs_rows(rows, n_rows, (n_contact_rows, n_contact_rows, n_contact_rows), u, friction_model, directions,
                      FALLBACK_SWEEPS, FALLBACK_TOLERANCE)
            return 0, np.inf, FAILED
        if ii >= contacts or ii % 3 == 0:
            index[m] = r
            m += 1
    index = index[:m]
    # the normal rows as single rows (λ >= 0, no friction pair): contacts = 0
    W, q, feasible, x, _, upper = _dense_problem(rows, index, 0, n_contact_rows, friction_model, directions, u)
    done, code = 0, CONVERGED
    if m:
        done, code = _mprgp_kernel(W, q, feasible, x, solver.iterations, solver.tolerance, 1.9 / upper, upper)
    return _conclude(rows, n_rows, n_contact_rows, u, (friction_model, directions), (index, W, q, feasible), x, done,
                     code)


@njit(cache=True, refcount=True)
def _lemke_rows(solver, rows, n_rows, n_contact_rows, u, friction_model, directions):
    """Lemke's method on the rows' LCP (solvers/lcp_form.py): contact normals and limits unilateral, the contacts'
    friction pairs the pyramid's (with friction="pyramid"; otherwise λ_t = 0), dry friction bounded; tried as the
    World's step tries its LCP (``LEMKE_TRIES_*``), with Gauss–Seidel sweeps when both tries fail."""
    index, contacts = _active_rows(rows, n_rows, n_contact_rows)
    W, q, feasible, x, _, _ = _dense_problem(rows, index, contacts, n_contact_rows, friction_model, directions, u)
    friction = (friction_model, directions)
    problem = (index, W, q, feasible)
    m = index.shape[0]
    if m == 0:
        return _conclude(rows, n_rows, n_contact_rows, u, friction, problem, x, 0, CONVERGED)
    kind = np.full(m, ROW_UNILATERAL)
    mu = np.zeros(m)
    for ii in range(m):
        r = index[ii]
        if ii < contacts and ii % 3 == 1:
            if friction_model == FRICTION_PYRAMID and rows.row_mu[r] > 0.0:
                kind[ii], kind[ii + 1] = ROW_FRICTION, ROW_PAIRED
                mu[ii] = rows.row_mu[r]
            else:
                kind[ii], kind[ii + 1] = ROW_ZERO, ROW_ZERO
        elif ii >= contacts and rows.row_normal[r] < 0:
            kind[ii] = ROW_BOUNDED
            mu[ii] = rows.row_mu[r]
    m_u, _, _, size = lcp_layout(kind, directions)
    if size > MAX_LEMKE_SIZE:
        return _conclude(rows, n_rows, n_contact_rows, u, friction, problem, x, 0, INFEASIBLE)
    M, qq = rows_lcp(W, q, kind, mu, directions)
    scale = max(np.max(np.abs(M)), np.max(np.abs(qq)))
    if scale == 0.0:
        return _conclude(rows, n_rows, n_contact_rows, u, friction, problem, np.zeros(m), 0, CONVERGED)
    M /= scale
    qq /= scale
    cap = solver.iterations if solver.iterations > 0 else max(100, 50 * size)
    tries = LEMKE_TRIES_PYRAMID if friction_model == FRICTION_PYRAMID else LEMKE_TRIES_FRICTIONLESS
    sol, _, pivots, code = lemke_retried(M, qq, m_u, tries, cap, LEMKE_ACCEPT, False)
    if code != CONVERGED:
        return _conclude(rows, n_rows, n_contact_rows, u, friction, problem, x, pivots, INFEASIBLE)
    lcp_impulses(sol, kind, directions, x)
    return _conclude(rows, n_rows, n_contact_rows, u, friction, problem, x, pivots, CONVERGED)


@njit(cache=True, forceinline=True, refcount=False)
def _pgs_link(solver, rows, n_rows, n_contact_rows, u, friction_model, directions):
    return _pgs_rows(rows, n_rows, (n_contact_rows, n_contact_rows, n_contact_rows), u, friction_model, directions,
                     solver.iterations, solver.tolerance)


def link_solve(solver, rows, n_rows, n_contact_rows, u, friction_model, directions):
    """The impulses ``rows.lam`` of the stage's n_rows rows (the first n_contact_rows in contacts' triples) by
    ``solver`` (PGS, APGD, CG or Lemke settings for the stage: module docstring), from the warm start in
    rows.lam; u (nv,) scratch; friction_model and directions as the World's. Returns (iterations, residual,
    status) for ``rows.stats``. Callable from kernels only: the solver's type selects the implementation at
    compile time, so the default stage compiles none of the dense solvers (and calls ``_pgs_rows`` itself)."""
    raise NotImplementedError("link_solve is resolved by Numba inside kernels")


_KERNELS = {PGS: _pgs_link, APGD: _apgd_rows, CG: _cg_rows, Lemke: _lemke_rows}
"""(PGS: the stage calls ``_pgs_rows`` itself, but Numba types its other branch, ``link_solve``, for PGS too.)"""


@overload(link_solve)
def _link_solve_impl(solver, rows, n_rows, n_contact_rows, u, friction_model, directions):
    kernel = _KERNELS.get(solver.instance_class) if isinstance(solver, types.BaseNamedTuple) else None
    if kernel is None:
        return None

    def impl(solver, rows, n_rows, n_contact_rows, u, friction_model, directions):
        return kernel(solver, rows, n_rows, n_contact_rows, u, friction_model, directions)

    return impl
