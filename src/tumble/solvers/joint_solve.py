"""The joints' share of a sub-step: their equality rows solved as one block, limits and motors by Gauss–Seidel,
and the position projection after the position stage.

**The equality rows** (constraints/joint_rows.py) of all joints form K λ = −(J v + Σ λ₀ + b) with
K = J M⁻¹ Jᵀ + Σ (ArtiSynth notes 0.5–0.6: the Schur complement of the KKT system; M is block-diagonal, so
K is sparse: two rows couple only through a body they share). Two ways to solve it, ``World(joint_solver=...)``:

- ``"direct"`` (default): K is factored once per sub-step by an envelope (skyline) Cholesky in a
  bandwidth-reducing order of the joints (reverse Cuthill–McKee on the joint graph, chosen when the joints
  change): a chain or a tree is banded, so the factorization costs O(rows · band²) and each solve
  O(rows · band). One solve satisfies every equality row exactly, whatever the chain length and the mass
  ratios; with contacts and limits the whole block takes part in the block Gauss–Seidel iteration with
  their rows (notes 0.15 with the joints as one block).
- ``"pgs"``: block Gauss–Seidel over the joints (notes 0.15): each joint's own rows are solved exactly
  (its k×k block of K), then the next joint's. Converges slowly along long chains and across high mass
  ratios, as Gauss–Seidel does, and takes no SHAKE step (below): a Gauss–Seidel SHAKE pass on top of
  unconverged velocity sweeps fed the next sub-step's warm start and diverged on a double pendulum.

K is kept SPD for redundant constraints (a closed loop, two joints on the same pair) by adding
``REGULARIZATION`` times each diagonal entry: the solve then returns the least-squares-like impulse.

**Softness** (notes 0.11): a joint with compliance c [m/N or rad/(N·m)] and damping d [N·s/m] is a stiff
spring k = 1/c with damper d behind each equality row, integrated implicitly over the sub-step h: with
φ⁺ = φ + h Ċ⁺, λ/h = −(k φ⁺ + d Ċ⁺) gives Ċ⁺ + Σ λ + b = 0 with Σ = c / (h (h + d c)), b = φ / (h + d c).
A rigid joint (c = 0) has Σ = 0, b = 0 and is held in place by the projection instead.

**Limits and motors**: a limit is a unilateral row: λ >= 0 with Ċ >= −C/h while the coordinate is within its
bounds (the bodies may reach the bound this step but not pass it, a speculative row) and Ċ >= 0 once past;
a motor drives Ċ to its target speed with |λ| <= max force (or torque) × h.

**SHAKE / RATTLE** (``joint_shake``, "direct" only): after the velocity solve, impulses along the same rows
make the pose the position stage will reach satisfy the rigid rows (Ryckaert et al. 1977); with the velocity
solve at the next sub-step's pose this is RATTLE (Andersen 1983), symplectic and momentum-conserving. The
velocity solve alone loses energy at O(h) (each sub-step removes the velocity that the constraint's
curvature turns into violation): two jointed bodies spinning in zero g lost 0.6 % of their kinetic
energy in 2 s at 1/240 s and their angular momentum changed 0.5 %; with SHAKE 1.5e-6 and 2e-9.

**Projection** (notes 0.5, constraint satisfaction as projection): after the position stage the rigid
equality rows (and limits past their bound) are brought back to C = 0 by the smallest mass-weighted move,
Δq = M⁻¹ Jᵀ μ with J M⁻¹ Jᵀ μ = −C, on positions only: velocities are not touched, so no energy is injected
(a Baumgarte velocity bias would). ``World(joint_projection=...)`` Newton steps (default 2) with the rows
rebuilt at each pose; SHAKE takes as many.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse
from scipy.sparse.csgraph import reverse_cuthill_mckee

from ..constraints.joint_rows import BROKEN, EQUALITY_ROWS, HAS_LIMIT, HAS_MOTOR, MOTOR_ROW, joint_rows_one, limit_rows
from ..dynamics.integrate import position_stage_one
from ..jit import njit
from ..math3d import exp_map_t, qmul_t, qrot_t

REGULARIZATION = 1e-10
"""Fraction of each diagonal entry of K added to it, so that redundant joints (closed loops) keep K SPD.
Relative 1e-10 moves a solve by ~1e-10 of its impulse, far below the joints' other errors."""

POSITION_TOLERANCE = 1e-10
"""[m or rad] a rigid row violated by less than this is left alone by SHAKE and the projection. Each SHAKE
step (K of the sub-step's start pose: a quasi-Newton step) cuts a swinging 10-link chain's predicted error
about 250-fold, 3e-6 → 1e-8 → 4e-11 m, so two steps usually end under 1e-10 and the projection then only
checks; at 1e-12 it ran two full passes every sub-step, for errors a hundred times below any tolerance
the tests ask for (the joint error stays below 1e-9 m)."""

DIRECT, PGS = 0, 1
SOLVER_NAMES = {"direct": DIRECT, "pgs": PGS}


def joint_structure(kind: np.ndarray, body: np.ndarray, inv_mass: np.ndarray, direct: bool) -> tuple:
    """The sparsity structure of K for ``joint_solve_*``: (order (m,), row0 (m,), start (R,), ptr (R + 1,),
    adj_ptr (m + 1,), adj_joint, adj_side (k, 2)), recomputed when the joints or the bodies change.

    order: the joints in elimination order (reverse Cuthill–McKee on the graph of joints that share a
    moving body, for ``direct``; the given order for block Gauss–Seidel). row0[j]: joint j's first row in
    that order. start[g]: the first column of row g's envelope (its own joint's first row, or the first row
    of the earliest neighbouring joint); ptr: offsets of the packed rows of L. adj: for each joint, the
    joints before it in the order that share a moving body with it, and which side (0 a, 1 b) that body is
    on in each (one entry per shared body).
    """
    m = kind.shape[0]
    rows = EQUALITY_ROWS[kind] if m else np.zeros(0, dtype=np.int64)
    moving = [[int(i) for i in body[j] if i >= 0 and inv_mass[i] > 0.0] for j in range(m)]
    by_body: dict[int, list[tuple[int, int]]] = {}
    for j in range(m):
        for side in range(2):
            i = int(body[j, side])
            if i >= 0 and inv_mass[i] > 0.0:
                by_body.setdefault(i, []).append((j, side))
    order = np.arange(m, dtype=np.int64)
    if direct and m > 1:
        pairs = [(j1, j2) for members in by_body.values() for (j1, _) in members for (j2, _) in members if j1 != j2]
        if pairs:
            r, c = np.array(pairs).T
            graph = scipy.sparse.csr_matrix((np.ones(len(r)), (r, c)), shape=(m, m))
            order = reverse_cuthill_mckee(graph, symmetric_mode=True).astype(np.int64)
    position = np.empty(m, dtype=np.int64)
    position[order] = np.arange(m)
    row0 = np.zeros(m, dtype=np.int64)
    total = 0
    for j in order:
        row0[j] = total
        total += rows[j]
    adj_ptr = np.zeros(m + 1, dtype=np.int64)
    adj_joint: list[int] = []
    adj_side: list[tuple[int, int]] = []
    start = np.zeros(total, dtype=np.int64)
    for j in range(m):
        first = row0[j]
        if direct:
            for i in moving[j]:
                side = 0 if body[j, 0] == i else 1
                for j2, side2 in by_body[i]:
                    if j2 != j and position[j2] < position[j]:
                        adj_joint.append(j2)
                        adj_side.append((side, side2))
                        first = min(first, row0[j2])
        adj_ptr[j + 1] = len(adj_joint)
        start[row0[j]:row0[j] + rows[j]] = first
    ptr = np.zeros(total + 1, dtype=np.int64)
    ptr[1:] = np.cumsum(np.arange(total) - start + 1)
    return (order, row0, start, ptr, adj_ptr, np.array(adj_joint, dtype=np.int64),
            np.array(adj_side, dtype=np.int64).reshape(-1, 2))


@njit(cache=True, inline="always")
def _dot3(a, b, j, r, j2, r2):
    return a[j, r, 0] * b[j2, r2, 0] + a[j, r, 1] * b[j2, r2, 1] + a[j, r, 2] * b[j2, r2, 2]


@njit(cache=True, refcount=False)
def joint_inverse_arms(j, body, lin, ang_a, ang_b, inv_inertia_world, inv_ang_a, inv_ang_b):
    """inv_ang_a/b[j] (8, 3) = I⁻¹ ang_a/b of joint j's rows (zero for the world)."""
    for side in range(2):
        i = body[j, side]
        ang = ang_a if side == 0 else ang_b
        out = inv_ang_a if side == 0 else inv_ang_b
        for r in range(lin.shape[1]):
            for c in range(3):
                out[j, r, c] = 0.0 if i < 0 else (inv_inertia_world[i, c, 0] * ang[j, r, 0]
                                                  + inv_inertia_world[i, c, 1] * ang[j, r, 1]
                                                  + inv_inertia_world[i, c, 2] * ang[j, r, 2])


@njit(cache=True, inline="always")
def _body_mass(i, inv_mass):
    return 0.0 if i < 0 else inv_mass[i]


@njit(cache=True, refcount=False)
def assemble_joint(j, kind, body, flags, sigma, lin, ang_a, ang_b, inv_ang_a, inv_ang_b, inv_mass, structure,
                   factor, row_mass):
    """Joint j's rows of K + Σ (its own block and its blocks with the joints before it in the order) into the
    packed envelope ``factor``, and row_mass[j] (8,) = 1 / K_rr of each of its rows (the limit and motor
    rows use theirs). A broken joint's rows are identity rows (their impulse stays 0)."""
    order, row0, start, ptr, adj_ptr, adj_joint, adj_side = structure
    a, b = body[j, 0], body[j, 1]
    ima, imb = _body_mass(a, inv_mass), _body_mass(b, inv_mass)
    for r in range(lin.shape[1]):
        k_rr = (ima + imb) * _dot3(lin, lin, j, r, j, r) + _dot3(ang_a, inv_ang_a, j, r, j, r) \
            + _dot3(ang_b, inv_ang_b, j, r, j, r)
        row_mass[j, r] = 1.0 / k_rr if k_rr > 0.0 else 0.0
    broken = flags[j] & BROKEN
    for r in range(EQUALITY_ROWS[kind[j]]):
        g = row0[j] + r
        base = ptr[g] - start[g]
        for c in range(start[g], g + 1):
            factor[base + c] = 0.0
        if broken:
            factor[base + g] = 1.0
            continue
        for r2 in range(r + 1):     # own block, lower triangle
            value = (ima + imb) * _dot3(lin, lin, j, r, j, r2) + _dot3(ang_a, inv_ang_a, j, r, j, r2) \
                + _dot3(ang_b, inv_ang_b, j, r, j, r2)
            if r2 == r:
                value = value * (1.0 + REGULARIZATION) + sigma[j]
            factor[base + row0[j] + r2] = value
        for e in range(adj_ptr[j], adj_ptr[j + 1]):     # blocks with earlier joints through a shared body
            j2 = adj_joint[e]
            if flags[j2] & BROKEN:
                continue
            side, side2 = adj_side[e, 0], adj_side[e, 1]
            i = body[j, side]
            sign = (1.0 if side == 0 else -1.0) * (1.0 if side2 == 0 else -1.0)
            ang = ang_a if side == 0 else ang_b
            inv2 = inv_ang_a if side2 == 0 else inv_ang_b
            for r2 in range(EQUALITY_ROWS[kind[j2]]):
                factor[base + row0[j2] + r2] += sign * inv_mass[i] * _dot3(lin, lin, j, r, j2, r2) \
                    + _dot3(ang, inv2, j, r, j2, r2)


@njit(cache=True, refcount=False)
def cholesky_rows(factor, start, ptr, g0, g1):
    """Envelope Cholesky of rows g0..g1−1 in place (rows before g0 already factored), row by row:
    L[g, c] = (K[g, c] − Σ_k L[g, k] L[c, k]) / L[c, c]."""
    for g in range(g0, g1):
        sg, bg = start[g], ptr[g] - start[g]
        for c in range(sg, g + 1):
            sc, bc = start[c], ptr[c] - start[c]
            s = factor[bg + c]
            for k in range(max(sg, sc), c):
                s -= factor[bg + k] * factor[bc + k]
            if c < g:
                factor[bg + c] = s / factor[bc + c]
            else:
                factor[bg + g] = np.sqrt(s) if s > 0.0 else 1e150   # a row of no moving body: its λ stays 0


@njit(cache=True, refcount=False)
def _solve(factor, start, ptr, rhs, g0, g1):
    """rhs[g0:g1] ← (L Lᵀ)⁻¹ rhs over rows g0..g1−1 (every row's envelope starts at or after g0)."""
    for g in range(g0, g1):
        bg = ptr[g] - start[g]
        s = rhs[g]
        for k in range(start[g], g):
            s -= factor[bg + k] * rhs[k]
        rhs[g] = s / factor[bg + g]
    for g in range(g1 - 1, g0 - 1, -1):
        bg = ptr[g] - start[g]
        rhs[g] /= factor[bg + g]
        xg = rhs[g]
        for k in range(start[g], g):
            rhs[k] -= factor[bg + k] * xg


@njit(cache=True, inline="always")
def _row_velocity(j, r, a, b, lin, ang_a, ang_b, v, w):
    s = 0.0
    for c in range(3):
        if a >= 0:
            s += lin[j, r, c] * v[a, c] + ang_a[j, r, c] * w[a, c]
        if b >= 0:
            s += -lin[j, r, c] * v[b, c] + ang_b[j, r, c] * w[b, c]
    return s


@njit(cache=True, inline="always")
def _apply(j, r, a, b, impulse, lin, inv_ang_a, inv_ang_b, inv_mass, v, w):
    """v, ω += M⁻¹ J_rᵀ impulse (module docstring of joint_rows)."""
    if a >= 0:
        for c in range(3):
            v[a, c] += inv_mass[a] * lin[j, r, c] * impulse
            w[a, c] += inv_ang_a[j, r, c] * impulse
    if b >= 0:
        for c in range(3):
            v[b, c] -= inv_mass[b] * lin[j, r, c] * impulse
            w[b, c] += inv_ang_b[j, r, c] * impulse


@njit(cache=True, inline="always")
def _asleep(j, body, awake):
    """Whether joint j joins only sleeping or fixed bodies (its island sleeps: it is skipped)."""
    for side in range(2):
        i = body[j, side]
        if i >= 0 and awake[i]:
            return False
    return True


@njit(cache=True, refcount=False)
def joint_warm_start(kind, body, flags, impulse, lin, inv_ang_a, inv_ang_b, inv_mass, awake, v, w):
    """Apply the joints' impulses of the last sub-step (m, 8) along the current rows (joints of sleeping
    islands keep theirs for when they wake)."""
    for j in range(kind.shape[0]):
        if flags[j] & BROKEN or _asleep(j, body, awake):
            continue
        a, b = body[j, 0], body[j, 1]
        for r in range(lin.shape[1]):
            if impulse[j, r] != 0.0:
                _apply(j, r, a, b, impulse[j, r], lin, inv_ang_a, inv_ang_b, inv_mass, v, w)


@njit(cache=True, refcount=False)
def joint_iteration(kind, body, flags, sigma, bias, error, motor, impulse, lin, ang_a, ang_b, inv_ang_a, inv_ang_b,
                    row_mass, inv_mass, awake, structure, factor, rhs, direct, h, v, w):
    """One iteration of the joints' rows on the velocities v, ω (n, 3), in place: the equality block (all at
    once for ``direct``, joint by joint otherwise), then every limit and motor row. sigma (m,), bias (m, 6)
    [m/s], error (m, 8) (the limit rows' C), motor (m, 2) target speed and largest force or torque, impulse
    (m, 8) accumulated. Joints of sleeping islands are skipped (their bodies are at rest and, joined only to
    each other, decouple from the rest of K). Returns the largest equality-row velocity error before the
    solve [m/s or rad/s]."""
    order, row0, start, ptr, adj_ptr, adj_joint, adj_side = structure
    m = kind.shape[0]
    residual = 0.0
    if direct:
        for j in range(m):
            a, b = body[j, 0], body[j, 1]
            skip = flags[j] & BROKEN or _asleep(j, body, awake)
            for r in range(EQUALITY_ROWS[kind[j]]):
                g = row0[j] + r
                if skip:
                    rhs[g] = 0.0
                    continue
                res = _row_velocity(j, r, a, b, lin, ang_a, ang_b, v, w) + sigma[j] * impulse[j, r] + bias[j, r]
                residual = max(residual, abs(res))
                rhs[g] = -res
        _solve(factor, start, ptr, rhs, 0, start.shape[0])
        for j in range(m):
            if flags[j] & BROKEN or _asleep(j, body, awake):
                continue
            a, b = body[j, 0], body[j, 1]
            for r in range(EQUALITY_ROWS[kind[j]]):
                delta = rhs[row0[j] + r]
                impulse[j, r] += delta
                _apply(j, r, a, b, delta, lin, inv_ang_a, inv_ang_b, inv_mass, v, w)
    else:
        for jj in range(m):
            j = order[jj]
            if flags[j] & BROKEN or _asleep(j, body, awake):
                continue
            a, b = body[j, 0], body[j, 1]
            n = EQUALITY_ROWS[kind[j]]
            for r in range(n):
                res = _row_velocity(j, r, a, b, lin, ang_a, ang_b, v, w) + sigma[j] * impulse[j, r] + bias[j, r]
                residual = max(residual, abs(res))
                rhs[row0[j] + r] = -res
            _solve(factor, start, ptr, rhs, row0[j], row0[j] + n)
            for r in range(n):
                delta = rhs[row0[j] + r]
                impulse[j, r] += delta
                _apply(j, r, a, b, delta, lin, inv_ang_a, inv_ang_b, inv_mass, v, w)
    for j in range(m):
        f = flags[j]
        if f & BROKEN or not f & (HAS_LIMIT | HAS_MOTOR) or _asleep(j, body, awake):
            continue
        a, b = body[j, 0], body[j, 1]
        if f & HAS_MOTOR:
            r = MOTOR_ROW
            vel = _row_velocity(j, r, a, b, lin, ang_a, ang_b, v, w)
            bound = motor[j, 1] * h
            old = impulse[j, r]
            new = min(max(old - row_mass[j, r] * (vel - motor[j, 0]), -bound), bound)
            impulse[j, r] = new
            _apply(j, r, a, b, new - old, lin, inv_ang_a, inv_ang_b, inv_mass, v, w)
        if f & HAS_LIMIT:
            first, end = limit_rows(kind[j])
            for r in range(first, end):
                gap = error[j, r]
                target = -gap / h if gap > 0.0 else 0.0      # may reach the bound this sub-step, never pass it
                vel = _row_velocity(j, r, a, b, lin, ang_a, ang_b, v, w)
                old = impulse[j, r]
                new = max(old - row_mass[j, r] * (vel - target), 0.0)
                impulse[j, r] = new
                _apply(j, r, a, b, new - old, lin, inv_ang_a, inv_ang_b, inv_mass, v, w)
    return residual


@njit(cache=True, refcount=False)
def joint_setup(kind, body, frame_a, frame_b, limit, flags, soft, x, q, inv_mass, inv_inertia_world, structure, h,
                lin, ang_a, ang_b, inv_ang_a, inv_ang_b, error, coordinate, sigma, bias, row_mass, factor):
    """Rows, I⁻¹ arms, Σ and b of the soft rows (module docstring) and the factor of K + Σ at the current pose,
    for a sub-step of h [s]. soft (m, 2): compliance and damping. The other arrays: the scratch of
    ``JointScratch`` (world side)."""
    order, row0, start, ptr, adj_ptr, adj_joint, adj_side = structure
    for jj in range(kind.shape[0]):
        j = order[jj]
        joint_rows_one(j, kind, body, frame_a, frame_b, limit, flags, x, q, lin, ang_a, ang_b, error, coordinate)
        joint_inverse_arms(j, body, lin, ang_a, ang_b, inv_inertia_world, inv_ang_a, inv_ang_b)
        c, d = soft[j, 0], soft[j, 1]
        sigma[j] = c / (h * (h + d * c)) if c > 0.0 else 0.0
        for r in range(6):
            bias[j, r] = error[j, r] / (h + d * c) if c > 0.0 else 0.0
        assemble_joint(j, kind, body, flags, sigma, lin, ang_a, ang_b, inv_ang_a, inv_ang_b, inv_mass, structure,
                       factor, row_mass)
    cholesky_rows(factor, start, ptr, 0, start.shape[0])


@njit(cache=True, inline="always")
def _move(i, dx, dy, dz, tx, ty, tz, x, q):
    """Translate body i by (dx, dy, dz) [m] and turn it by the rotation vector (tx, ty, tz) [rad] (world)."""
    x[i, 0] += dx
    x[i, 1] += dy
    x[i, 2] += dz
    if tx == 0.0 and ty == 0.0 and tz == 0.0:
        return
    dw, ex, ey, ez = exp_map_t(tx, ty, tz, 1.0)
    a, b, c, d = qmul_t(dw, ex, ey, ez, q[i, 0], q[i, 1], q[i, 2], q[i, 3])
    inv = 1.0 / np.sqrt(a * a + b * b + c * c + d * d)
    q[i, 0], q[i, 1], q[i, 2], q[i, 3] = a * inv, b * inv, c * inv, d * inv


@njit(cache=True, refcount=False)
def joint_project(kind, body, frame_a, frame_b, limit, flags, soft, x, q, inv_mass, inv_inertia_world, structure,
                  direct, lin, ang_a, ang_b, inv_ang_a, inv_ang_b, error, coordinate, sigma, row_mass, factor, rhs,
                  iterations):
    """The position projection (module docstring): ``iterations`` Newton steps that move the bodies' x, q
    (n, 3), (n, 4) so that the rigid joints' equality rows and the limits past their bounds reach C = 0:
    all joints at once by the envelope factor (``direct``), or joint by joint, each at the pose its
    predecessors left (Gauss–Seidel); a pass stops early where no rigid row is violated by more than
    ``POSITION_TOLERANCE``. Velocities are not touched; ``inv_inertia_world`` is that of the
    pose before the projection (the moves are small). The scratch arrays are those of ``joint_setup``."""
    order, row0, start, ptr, adj_ptr, adj_joint, adj_side = structure
    m = kind.shape[0]
    sigma[:] = 0.0
    for _ in range(iterations):
        if direct:
            worst = 0.0
            for j in range(m):
                joint_rows_one(j, kind, body, frame_a, frame_b, limit, flags, x, q, lin, ang_a, ang_b, error,
                               coordinate)
                worst = max(worst, _rigid_violation(j, kind, flags, soft, error))
            if worst <= POSITION_TOLERANCE:
                return
        for jj in range(m):
            j = order[jj]
            if not direct:
                joint_rows_one(j, kind, body, frame_a, frame_b, limit, flags, x, q, lin, ang_a, ang_b, error,
                               coordinate)
                if _rigid_violation(j, kind, flags, soft, error) <= POSITION_TOLERANCE:
                    continue
            joint_inverse_arms(j, body, lin, ang_a, ang_b, inv_inertia_world, inv_ang_a, inv_ang_b)
            assemble_joint(j, kind, body, flags, sigma, lin, ang_a, ang_b, inv_ang_a, inv_ang_b, inv_mass,
                           structure, factor, row_mass)
            rigid = soft[j, 0] == 0.0 and not flags[j] & BROKEN
            n = EQUALITY_ROWS[kind[j]]
            for r in range(n):
                rhs[row0[j] + r] = -error[j, r] if rigid else 0.0
            if not direct:
                cholesky_rows(factor, start, ptr, row0[j], row0[j] + n)
                _solve(factor, start, ptr, rhs, row0[j], row0[j] + n)
                _project_move(j, kind, body, flags, error, lin, inv_ang_a, inv_ang_b, row_mass, row0, rhs,
                              inv_mass, x, q)
        if direct:
            cholesky_rows(factor, start, ptr, 0, start.shape[0])
            _solve(factor, start, ptr, rhs, 0, start.shape[0])
            for j in range(m):
                _project_move(j, kind, body, flags, error, lin, inv_ang_a, inv_ang_b, row_mass, row0, rhs,
                              inv_mass, x, q)


@njit(cache=True, inline="always")
def _rigid_violation(j, kind, flags, soft, error):
    """The largest |C| of joint j's rigid equality rows and of its limit past its bound [m or rad]."""
    if flags[j] & BROKEN:
        return 0.0
    worst = 0.0
    if soft[j, 0] == 0.0:
        for r in range(EQUALITY_ROWS[kind[j]]):
            worst = max(worst, abs(error[j, r]))
    if flags[j] & HAS_LIMIT:
        first, end = limit_rows(kind[j])
        for r in range(first, end):
            worst = max(worst, -error[j, r])
    return worst


@njit(cache=True, refcount=False)
def _project_move(j, kind, body, flags, error, lin, inv_ang_a, inv_ang_b, row_mass, row0, rhs, inv_mass, x, q):
    """Move joint j's bodies by M⁻¹ J_jᵀ μ_j (μ of its equality rows in rhs, and of each limit row past its
    bound: a scalar step μ = −C / K_rr)."""
    if flags[j] & BROKEN:
        return
    a, b = body[j, 0], body[j, 1]
    ima, imb = _body_mass(a, inv_mass), _body_mass(b, inv_mass)
    ax = ay = az = atx = aty = atz = 0.0
    bx = by = bz = btx = bty = btz = 0.0
    n = EQUALITY_ROWS[kind[j]]
    first, end = limit_rows(kind[j])
    for r in range(n + end - first):
        if r >= n:      # a limit past its bound, as one scalar row
            rr = first + r - n
            if not flags[j] & HAS_LIMIT or error[j, rr] >= 0.0:
                continue
            mu = -error[j, rr] * row_mass[j, rr]
        else:
            rr = r
            mu = rhs[row0[j] + r]
        ax += ima * lin[j, rr, 0] * mu
        ay += ima * lin[j, rr, 1] * mu
        az += ima * lin[j, rr, 2] * mu
        atx += inv_ang_a[j, rr, 0] * mu
        aty += inv_ang_a[j, rr, 1] * mu
        atz += inv_ang_a[j, rr, 2] * mu
        bx -= imb * lin[j, rr, 0] * mu
        by -= imb * lin[j, rr, 1] * mu
        bz -= imb * lin[j, rr, 2] * mu
        btx += inv_ang_b[j, rr, 0] * mu
        bty += inv_ang_b[j, rr, 1] * mu
        btz += inv_ang_b[j, rr, 2] * mu
    if a >= 0 and ima > 0.0:
        _move(a, ax, ay, az, atx, aty, atz, x, q)
    if b >= 0 and imb > 0.0:
        _move(b, bx, by, bz, btx, bty, btz, x, q)


@njit(cache=True, refcount=False)
def joint_accumulate(body, lin, ang_a, impulse, frame_a, q, wrench):
    """wrench (m, 6) += the sub-step's impulse on body a: (Σ lin λ, torque about the joint's anchor on a)
    [N·s, N·m·s], world frame; the world's step divides by dt."""
    for j in range(body.shape[0]):
        f0 = f1 = f2 = t0 = t1 = t2 = 0.0
        for r in range(lin.shape[1]):
            lam = impulse[j, r]
            f0 += lin[j, r, 0] * lam
            f1 += lin[j, r, 1] * lam
            f2 += lin[j, r, 2] * lam
            t0 += ang_a[j, r, 0] * lam
            t1 += ang_a[j, r, 1] * lam
            t2 += ang_a[j, r, 2] * lam
        a = body[j, 0]
        # ang_a λ is the torque about a's COM; about the anchor p_a = x_a + r_a it is that − r_a × F
        from_com = (0.0, 0.0, 0.0)
        if a >= 0:
            from_com = qrot_t(q[a, 0], q[a, 1], q[a, 2], q[a, 3], frame_a[j, 0], frame_a[j, 1], frame_a[j, 2])
        c0 = from_com[1] * f2 - from_com[2] * f1
        c1 = from_com[2] * f0 - from_com[0] * f2
        c2 = from_com[0] * f1 - from_com[1] * f0
        wrench[j, 0] += f0
        wrench[j, 1] += f1
        wrench[j, 2] += f2
        wrench[j, 3] += t0 - c0
        wrench[j, 4] += t1 - c1
        wrench[j, 5] += t2 - c2


@njit(cache=True, refcount=False)
def joint_shake(kind, body, frame_a, frame_b, limit, flags, soft, x, q, v, w, inv_mass, structure, direct, h, lin,
                inv_ang_a, inv_ang_b, impulse, factor, rhs, predict_x, predict_q, predict_w, predict_lin, predict_error,
                predict_coordinate, iterations, scheme, principal_q, principal_moments, inv_principal_moments):
    """SHAKE (Ryckaert, Ciccotti & Berendsen 1977; with the velocity solve at the next pose, RATTLE, Andersen
    1983): after the velocity solve, impulses ν along the rows J of the sub-step's start pose so that the pose
    the position stage will reach satisfies the rigid equality rows, K ν = −C(x + h v, exp(h ω) q) / h,
    ``iterations`` Newton steps with K's factor from ``joint_setup``. All impulses then act along J at one
    pose where the anchors coincide, so they conserve linear and angular momentum exactly (Baraff II (8-12)),
    and RATTLE's symplectic structure bounds the energy error instead of letting it drift; the position
    projection (``joint_project``) is left with the rounding of the prediction. v, w (n, 3) change in place;
    the pose is predicted by the position stage itself (``scheme``, the integrator's code, with the bodies'
    principal axes and moments) on the scratch predict_* arrays (n, 3), (n, 4), (n, 3), (m, 8, 3), (m, 8), (m,)."""
    order, row0, start, ptr, adj_ptr, adj_joint, adj_side = structure
    m = kind.shape[0]
    for _ in range(iterations):
        worst = 0.0
        if direct:
            _predict(0, m, order, body, inv_mass, x, q, v, w, h, predict_x, predict_q, predict_w, scheme, principal_q,
                     principal_moments, inv_principal_moments)
        for jj in range(m):
            j = order[jj]
            if not direct:      # Gauss–Seidel: joint j sees the impulses of the joints before it
                _predict(jj, jj + 1, order, body, inv_mass, x, q, v, w, h, predict_x, predict_q, predict_w, scheme,
                         principal_q, principal_moments, inv_principal_moments)
            joint_rows_one(j, kind, body, frame_a, frame_b, limit, flags, predict_x, predict_q, predict_lin,
                           predict_lin, predict_lin, predict_error, predict_coordinate)
            rigid = soft[j, 0] == 0.0 and not flags[j] & BROKEN
            n = EQUALITY_ROWS[kind[j]]
            for r in range(n):
                rhs[row0[j] + r] = -predict_error[j, r] / h if rigid else 0.0
                if rigid:
                    worst = max(worst, abs(predict_error[j, r]))
            if not direct:
                _solve(factor, start, ptr, rhs, row0[j], row0[j] + n)
                _shake_apply(j, kind, body, flags, row0, rhs, impulse, lin, inv_ang_a, inv_ang_b, inv_mass, v, w)
        if direct:
            if worst <= POSITION_TOLERANCE:
                return
            _solve(factor, start, ptr, rhs, 0, start.shape[0])
            for j in range(m):
                _shake_apply(j, kind, body, flags, row0, rhs, impulse, lin, inv_ang_a, inv_ang_b, inv_mass, v, w)


@njit(cache=True, inline="always")
def _shake_apply(j, kind, body, flags, row0, rhs, impulse, lin, inv_ang_a, inv_ang_b, inv_mass, v, w):
    if flags[j] & BROKEN:
        return
    a, b = body[j, 0], body[j, 1]
    for r in range(EQUALITY_ROWS[kind[j]]):
        nu = rhs[row0[j] + r]
        impulse[j, r] += nu
        _apply(j, r, a, b, nu, lin, inv_ang_a, inv_ang_b, inv_mass, v, w)


@njit(cache=True, refcount=False)
def _predict(j0, j1, order, body, inv_mass, x, q, v, w, h, predict_x, predict_q, predict_w, scheme, principal_q,
             principal_moments, inv_principal_moments):
    """The pose the position stage would give the moving bodies of joints order[j0:j1] with their velocities
    now, in predict_x, predict_q (predict_w: the angular velocity it leaves)."""
    for jj in range(j0, j1):
        j = order[jj]
        for side in range(2):
            i = body[j, side]
            if i < 0:
                continue
            for c in range(3):
                predict_x[i, c] = x[i, c]
                predict_w[i, c] = w[i, c]
            for c in range(4):
                predict_q[i, c] = q[i, c]
            if inv_mass[i] > 0.0:
                position_stage_one(i, scheme, principal_q, principal_moments, inv_principal_moments, predict_x,
                                   predict_q, v, predict_w, h)
