"""Loop closures: a World joint (ball, hinge, slider or fixed; ``world.add_joint``) with a robot link's body on a
side, held in the robots' contact stage (robots/step.py ``contact_stage``) rather than by the World's joint solve.

A joint's equality rows (constraints/joint_rows.py) are Ċ_r = lin_r · (v_a − v_b) + ang_a_r · ω_a + ang_b_r · ω_b
with v the bodies' COM velocities. A link side's body velocity is its link's, J(q) q̇ (Featherstone §3.2, the
point Jacobian at the body's COM), so the row in joint space is

    J_r = lin_r · J_v(x_a) + ang_a_r · J_ω(a)  −  lin_r · J_v(x_b) + ang_b_r · J_ω(b)

(``_twist_row``, on the links' paths to the root); a free body's side is the World's row, J_b = (lin, ang_a) on
a and (−lin, ang_b) on b, and the world's side nothing. The stage then treats the rows as its others: W = J M⁻¹ Jᵀ
through Z = L⁻ᵀ Jᵀ, the free velocity, a free body's share as a load.

**Solve.** The joint's k rows (3 ball, 5 hinge or slider, 6 fixed; padded to whole triples of the stage) are one
block of the stage's Gauss–Seidel sweeps, solved exactly at each visit: Δλ = −K⁻¹ (J v − target) with K its k × k
block of W, factored once a step (``factor_block``: LDLᵀ; a pivot below ``PIVOT_TOLERANCE`` of its diagonal entry
is a row that the others already hold, a redundant row such as a planar four-bar's out-of-plane ones, and gets no
impulse). A robot whose only rows are one closure is so held exactly in one sweep; closures and contacts couple
through the sweeps. The impulses warm-start the next step.

**Drift.** Velocity rows keep Ċ = 0 to first order only: the position stage leaves an error C of order h² |v|² / L
a step. After it ``project`` (robots/step.py ``finish_coupled``) brings the rows back to C = 0 by the smallest
move in the metric of the mass matrices (ArtiSynth notes 0.5, constraint satisfaction as projection, here of
positions, as the World's joints: solvers/joint_solve.py): with the rows at the new pose, W μ = −C by the same
blocks and sweeps, then Δq = M⁻¹ Jᵀ μ (q ⊕ Δq, M the step's factored joint-space matrix) and a free body's pose
moved by M_b⁻¹ J_bᵀ μ; Newton steps until |C| <= ``PROJECTION_TOLERANCE`` (at most ``PROJECTION_STEPS``).
Velocities are not touched, so no energy is injected.

Closures hold their rigid equality rows only: limits, motors and compliance are refused (``World.add_joint``), and
only the default solver "pgs" holds them. ``joint.force`` and ``joint.torque`` read the stage's impulse over the
step (``closure_readout``); a closure breaks as other joints do.
"""

from __future__ import annotations

import numpy as np

from ..constraints.joint_rows import BROKEN, EQUALITY_ROWS, joint_rows_one
from ..jit import njit
from ..solvers.joint_solve import joint_wrench
from .dynamics import jacobian_column

PIVOT_TOLERANCE = 1e-10
"""A closure row whose LDLᵀ pivot falls below this fraction of its diagonal entry of W depends on the rows before
it (to rounding), and one whose diagonal entry falls below this fraction of its block's largest moves nothing but
by rounding: both are left without impulse (``factor_block``)."""

PROJECTION_STEPS = 3
"""Newton steps of the position projection at most (module docstring)."""
PROJECTION_TOLERANCE = 1e-12
"""[m or rad] The projection stops once no closure row's |C| exceeds this."""
SHAKE_STEPS = 2
"""SHAKE iterations after the velocity solve (robots/step.py ``_shake_closures``)."""
PROJECTION_SWEEPS = 50
"""Block Gauss–Seidel sweeps of one projection step at most (one closure alone: one sweep, exact)."""

CLOSURE_ROWS = 8
"""``row_normal`` of a closure's first row is CLOSURE_ROWS + k, k its rows (a contact triple's first row holds its
own index, below the rows' count)."""


@njit(cache=True, refcount=False)
def closure_triples(closures):
    """Row triples the stage needs for the closures that are not broken: one for a ball joint's 3 rows, two for
    the others' 5 or 6."""
    data, index, _, _ = closures
    count = 0
    for c in range(index.shape[0]):
        j = index[c]
        if not data.flags[j] & BROKEN:
            count += 1 if EQUALITY_ROWS[data.kind[j]] <= 3 else 2
    return count


@njit(cache=True, forceinline=True, refcount=False)
def _twist_row(tree, work, link, point, lin, ang, J):
    """J (nv,) += lin · J_v(point) + ang · J_ω on ``link``'s path to the root: a coordinate's column of J_ω is
    R s_ω and of J_v R s_v + (R s_ω) × r (r from the link's origin to ``point``, world frame)."""
    k = link
    while k >= 0:
        R = work.R_world[k]
        dx = point[0] - work.p_world[k, 0]
        dy = point[1] - work.p_world[k, 1]
        dz = point[2] - work.p_world[k, 2]
        for j in range(tree.nv_link[k]):
            d = tree.v_start[k] + j
            ax, ay, az, vx, vy, vz = jacobian_column(R, tree.S[d], dx, dy, dz)
            J[d] += lin[0] * vx + lin[1] * vy + lin[2] * vz + ang[0] * ax + ang[1] * ay + ang[2] * az
        k = tree.parent[k]


@njit(cache=True, forceinline=True, refcount=False)
def closure_rows(tree, work, rows, first, j, closures, body_link, bodies, projection):
    """Rows first … of the contact stage (``Rows``) for closure joint j (module docstring), at the World bodies'
    poses (bodies = (inv_mass, x, q); the links' bodies sit where the joint state puts them): J on the path of
    row ``first`` (its coordinates already in row_dofs[first]) and a free body's J_b; for the velocity stage the
    target Ċ = 0 and the last step's impulses as the warm start, for the ``projection`` the target −C and no warm
    start. The rows past the joint's k up to a whole triple move nothing. Returns the rows taken (3 or 6)."""
    data, _, scratch, _ = closures
    inv_mass, x, q = bodies
    lin, ang_a, ang_b, error = scratch[0], scratch[1], scratch[2], scratch[3]
    joint_rows_one(j, data, x, q, scratch)
    k = EQUALITY_ROWS[data.kind[j]]
    size = 3 if k <= 3 else 6
    a, b = data.body[j, 0], data.body[j, 1]
    rows_J, row_dofs, row_ndof, row_side, row_jb = rows.rows_J, rows.row_dofs, rows.row_ndof, rows.row_side, \
        rows.row_jb
    count = row_ndof[first]
    for r in range(size):
        row = first + r
        row_ndof[row] = count
        for t in range(count):
            d = row_dofs[first, t]
            row_dofs[row, t] = d
            rows_J[row, d] = 0.0
        row_side[row, 0] = row_side[row, 1] = -1
        rows.lo[row] = -np.inf
        rows.row_mu[row] = 0.0
        rows.row_C[row] = 0.0
        rows.row_slot[row] = j
        rows.row_normal[row] = CLOSURE_ROWS + k
        rows.target[row] = 0.0
        rows.lam[row] = 0.0
        if r >= k:
            continue
        for side in range(2):
            body = a if side == 0 else b
            if body < 0:
                continue
            sign = 1.0 if side == 0 else -1.0
            linear = work.vecs[0]
            for e in range(3):
                linear[e] = sign * lin[j, r, e]
            angular = ang_a[j, r] if side == 0 else ang_b[j, r]
            if body_link[body] >= 0:
                _twist_row(tree, work, body_link[body], x[body], linear, angular, rows_J[row])
            elif inv_mass[body] > 0.0:
                row_side[row, side] = body
                jb = row_jb[row, side]
                for e in range(3):
                    jb[e] = linear[e]
                    jb[3 + e] = angular[e]
        rows.target[row] = -error[j, r] if projection else 0.0
        rows.lam[row] = 0.0 if projection else data.impulse[j, r]
    return size


@njit(cache=True, forceinline=True, refcount=False)
def _block_entry(rows, i, k):
    """W_ik of two rows of one closure (one path): Σ Z_i D⁻¹ Z_k along it, plus J_b,i M_b⁻¹ J_b,kᵀ of a free
    body on a side."""
    s = 0.0
    for t in range(rows.row_ndof[i]):
        s += rows.zc[i, t] * rows.zd[k, t]
    for side in range(2):
        if rows.row_side[i, side] >= 0 and rows.row_side[k, side] == rows.row_side[i, side]:
            for e in range(6):
                s += rows.row_jb[i, side, e] * rows.row_mjb[k, side, e]
    return s


@njit(cache=True, forceinline=True, refcount=False)
def factor_block(rows, first):
    """The LDLᵀ factor of the closure's k × k block K of W (rows first … first + k − 1) into rows.row_factor:
    row i holds L_i0 … L_i,i−1 and D_i in its entry i. D_i = 0, and its column of L zero, for a row whose pivot
    falls below ``PIVOT_TOLERANCE`` of K_ii (it depends on the rows before it) or whose K_ii falls below that of
    the block's largest (it moves nothing but by rounding: a hinge closure's axis rows on a planar linkage,
    K_ii ~ 1e-31 against 1)."""
    k = rows.row_normal[first] - CLOSURE_ROWS
    F = rows.row_factor
    scale = 0.0
    for i in range(k):
        scale = max(scale, rows.W[first + i])
    for i in range(k):
        fi = F[first + i]
        for c in range(i + 1):
            s = _block_entry(rows, first + i, first + c)
            for p in range(c):
                s -= fi[p] * F[first + c, p] * F[first + p, p]
            if c < i:
                dc = F[first + c, c]
                fi[c] = s / dc if dc > 0.0 else 0.0
            else:
                fi[i] = s if s > PIVOT_TOLERANCE * rows.W[first + i] and rows.W[first + i] > PIVOT_TOLERANCE * scale \
                    else 0.0


@njit(cache=True, forceinline=True, refcount=False)
def closure_residual(rows, r, first, u):
    """J v − target of closure row r (its block's first row ``first``: their path) at u = D⁻¹ Σ Z λ and the free
    bodies' Δv (``rows.body_dv``)."""
    s = rows.vrow[r] - rows.target[r]
    for t in range(rows.row_ndof[first]):
        s += rows.zc[r, t] * u[rows.row_dofs[first, t]]
    for side in range(2):
        body = rows.row_side[r, side]
        if body >= 0:
            for e in range(6):
                s += rows.row_jb[r, side, e] * rows.body_dv[body, e]
    return s


@njit(cache=True, forceinline=True, refcount=False)
def closure_sweep(first, rows, u, change, largest):
    """One Gauss–Seidel visit of a closure's block (rows first … first + k − 1, one path): its residuals
    J v − target from u = D⁻¹ Σ Z λ and the free bodies' Δv, Δλ = −K⁻¹ of them by the factor of ``factor_block``
    (the rows with D = 0 get none), then u and Δv updated. Returns (change, largest) with the block's impulse
    changes and impulses taken in."""
    k = rows.row_normal[first] - CLOSURE_ROWS
    F, lam, zd, row_dofs = rows.row_factor, rows.lam, rows.zd, rows.row_dofs
    count = rows.row_ndof[first]
    y = rows.closure_work
    for i in range(k):
        y[i] = -closure_residual(rows, first + i, first, u)
    for i in range(k):   # L y' = y, then y'' = D⁻¹ y', then Lᵀ Δ = y''
        for p in range(i):
            y[i] -= F[first + i, p] * y[p]
    for i in range(k):
        d = F[first + i, i]
        y[i] = y[i] / d if d > 0.0 else 0.0
    for i in range(k - 1, -1, -1):
        for p in range(i + 1, k):
            y[i] -= F[first + p, i] * y[p]
    for i in range(k):
        r = first + i
        delta = y[i]
        if delta == 0.0:
            continue
        lam[r] += delta
        change = max(change, abs(delta))
        for t in range(count):
            u[row_dofs[first, t]] += zd[r, t] * delta
        for side in range(2):
            body = rows.row_side[r, side]
            if body >= 0:
                for e in range(6):
                    rows.body_dv[body, e] += delta * rows.row_mjb[r, side, e]
    for i in range(k):
        largest = max(largest, abs(lam[first + i]))
    return change, largest


@njit(cache=True, refcount=False)   # (not inlined: it would weigh on the contacts' sweep loop)
def closure_sweeps(rows, first, end, u, change, largest):
    """``closure_sweep`` of each closure block in rows first … end − 1. Returns (change, largest) as it."""
    r = first
    while r < end:
        change, largest = closure_sweep(r, rows, u, change, largest)
        r += 3 if rows.row_normal[r] - CLOSURE_ROWS <= 3 else 6
    return change, largest


@njit(cache=True, refcount=False)
def solve_blocks(rows, first, end, u):
    """The closure blocks of rows first … end − 1 alone, by ``closure_sweeps`` until no impulse moves by more than
    PROJECTION_TOLERANCE of the largest (or 1), at most PROJECTION_SWEEPS sweeps: one sweep for a lone closure."""
    for _ in range(PROJECTION_SWEEPS):
        change, largest = closure_sweeps(rows, first, end, u, 0.0, 0.0)
        if change <= PROJECTION_TOLERANCE * max(largest, 1.0):
            return


@njit(cache=True, forceinline=True, refcount=False)
def closure_readout(rows, first, closures, q):
    """Closure j's (``row_slot``) impulses of this step into its warm start (data.impulse) and its wrench: the
    impulse on a and the angular impulse about the joint's anchor, world frame (solvers/joint_solve.py
    ``joint_wrench``, as the World's joints; ``joint.force`` divides by the step). Returns the rows the closure
    took."""
    data, _, scratch, _ = closures
    j = rows.row_slot[first]
    k = rows.row_normal[first] - CLOSURE_ROWS
    for r in range(k):
        data.impulse[j, r] = rows.lam[first + r]
    w = joint_wrench(j, data.body, scratch[0], scratch[1], data.impulse, data.frame_a, q)
    for e in range(6):
        data.wrench[j, e] = w[e]
    return 3 if k <= 3 else 6
