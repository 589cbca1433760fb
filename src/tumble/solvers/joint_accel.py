"""Joints for the integrators of the unconstrained ODE (euler, rk4, adaptive): constraint forces by projection.

The time-stepping solve (solvers/joint_solve.py) works with impulses over a step. An ODE integrator instead
asks for the state's derivative at any state it chooses, so there the joints enter as forces: ArtiSynth
notes 0.5 (constraint satisfaction as projection). With u = (v, ω) of every body, M the block-diagonal mass
matrix and G the joints' equality rows (constraints/joint_rows.py), the constraint force Gᵀλ keeps the
velocity constraint G u = 0 in time:

    d/dt (G u) = G u̇ + Ġ u = 0,   u̇ = a_free + M⁻¹ Gᵀ λ   ⇒   (G M⁻¹ Gᵀ) λ = −(Ġ u + G a_free),

with a_free = (F/m + g, I⁻¹(τ − ω × L)) the accelerations the loads alone give (Baraff I (2-43): L̇ = τ,
so ω̇ = I⁻¹(τ − ω × I ω)). K = G M⁻¹ Gᵀ is the matrix the time-stepping solve factors; it is assembled and
factored by the same envelope Cholesky (``assemble_joint``, ``cholesky_rows``) in the joints' reverse
Cuthill–McKee order. Ġ u is the rate of each row's Jacobian along the motion, ``joint_rate_products``.

The ODE keeps G u = 0 and C = 0 only to its truncation error, and the rounding drifts; so each step ends as
the notes' projection does (post-stabilization, Cline & Pai 2003): the positions are projected back onto
C = 0 (``joint_project``) and the velocities onto G u = 0, u ← u − M⁻¹ Gᵀ (G M⁻¹ Gᵀ)⁻¹ G u
(``joint_velocity_projection``, the M-orthogonal projection, notes 0.5), which removes only the velocity
along the constraint directions and so never adds kinetic energy.

A soft joint (compliance c > 0, damping d; notes 0.11) is what its rows' regularization stands for in the
time-stepping solve, a spring k = 1/c with a damper d behind each equality row, and here it is exactly
that, a force: its rows' multipliers are explicit, λ_r = −(C_r / c + d G_r u) [N or N·m] at the state
(C_r the row's violation, ``joint_rows_one``), and they enter the rigid rows' right-hand side through
a_free, so the rigid joints hold against them. The soft rows take no part in K or in the projections.

Limits and motors (inequalities and targets, which need the time-stepping solve's active set) are refused
for these integrators by the world.
"""

from __future__ import annotations

from ..constraints.joint_rows import (
    BROKEN,
    FIXED,
    HINGE,
    SLIDER,
    _axis,
    _cross,
    _frame,
    joint_rows_one,
)
from ..dynamics.state import STATE_SIZE
from ..jit import njit
from .joint_solve import _apply, _row_velocity, _solve, assemble_joint, cholesky_rows, joint_inverse_arms


@njit(cache=True, inline="always")
def _dot(a0, a1, a2, b0, b1, b2):
    return a0 * b0 + a1 * b1 + a2 * b2


@njit(cache=True, inline="always")
def _side(i, frame, x, q, v, w):
    """(anchor p, frame orientation, r = p − x, v, ω) of one side of a joint; the world (i < 0) is at rest."""
    p, f = _frame(i, frame, x, q)
    if i < 0:
        return p, f, (0.0, 0.0, 0.0), (0.0, 0.0, 0.0), (0.0, 0.0, 0.0)
    return (p, f, (p[0] - x[i, 0], p[1] - x[i, 1], p[2] - x[i, 2]), (v[i, 0], v[i, 1], v[i, 2]),
            (w[i, 0], w[i, 1], w[i, 2]))


@njit(cache=True, refcount=False)
def joint_rate_products(j, kind, body, frame_a, frame_b, x, q, v, w, out):
    """out[j, r] = Ġ_r u [m/s² or rad/s²] for joint j's equality rows r (the rows of ``joint_rows_one``): the
    time derivative of each row's Jacobian along the bodies' motion, times their velocities, with every
    vector fixed in a body turning with it (ṙ = ω × r).

    - point rows, e_i·(p_a − p_b): e_i·(ω_a × (ω_a × r_a) − ω_b × (ω_b × r_b)), the centripetal terms;
    - hinge axis rows, n_i·u_b (n_i fixed in a, u_b in b): ((ω_a × n_i) × u_b + n_i × (ω_b × u_b))·(ω_a − ω_b);
    - rotation-lock rows: 0 (their rows (0, e_i, −e_i) are constant);
    - slider rows, n_i·(p_b − p_a) with lin = −n_i, ang_a = −(r_a + d) × n_i, ang_b = r_b × n_i:
      −(ω_a × n_i)·(v_a − v_b) − ((ṗ_b − v_a) × n_i + (r_a + d) × (ω_a × n_i))·ω_a
      + ((ω_b × r_b) × n_i + r_b × (ω_a × n_i))·ω_b, with ṗ_b = v_b + ω_b × r_b.

    Shapes: body (m, 2); frame_a, frame_b (m, 7); x, v, w (n, 3); q (n, 4); out (m, 8)."""
    pa, fa, ra, va, wa = _side(body[j, 0], frame_a[j], x, q, v, w)
    pb, fb, rb, vb, wb = _side(body[j, 1], frame_b[j], x, q, v, w)
    k = kind[j]
    r = 0
    if k != SLIDER:
        wra = _cross(wa[0], wa[1], wa[2], ra[0], ra[1], ra[2])
        wrb = _cross(wb[0], wb[1], wb[2], rb[0], rb[1], rb[2])
        ca = _cross(wa[0], wa[1], wa[2], wra[0], wra[1], wra[2])
        cb = _cross(wb[0], wb[1], wb[2], wrb[0], wrb[1], wrb[2])
        for i in range(3):
            out[j, r] = ca[i] - cb[i]
            r += 1
    if k == HINGE:
        ub = _axis(fb, 0)
        ubdot = _cross(wb[0], wb[1], wb[2], ub[0], ub[1], ub[2])
        for i in (1, 2):
            n = _axis(fa, i)
            ndot = _cross(wa[0], wa[1], wa[2], n[0], n[1], n[2])
            t0, t1, t2 = _cross(ndot[0], ndot[1], ndot[2], ub[0], ub[1], ub[2])
            s0, s1, s2 = _cross(n[0], n[1], n[2], ubdot[0], ubdot[1], ubdot[2])
            out[j, r] = _dot(t0 + s0, t1 + s1, t2 + s2, wa[0] - wb[0], wa[1] - wb[1], wa[2] - wb[2])
            r += 1
    elif k == SLIDER or k == FIXED:
        for _ in range(3):
            out[j, r] = 0.0
            r += 1
    if k == SLIDER:
        d0, d1, d2 = pb[0] - pa[0], pb[1] - pa[1], pb[2] - pa[2]
        wr = _cross(wb[0], wb[1], wb[2], rb[0], rb[1], rb[2])
        s0, s1, s2 = vb[0] + wr[0] - va[0], vb[1] + wr[1] - va[1], vb[2] + wr[2] - va[2]   # ṗ_b − v_a
        for i in (1, 2):
            n = _axis(fa, i)
            nd = _cross(wa[0], wa[1], wa[2], n[0], n[1], n[2])
            e = _cross(s0, s1, s2, n[0], n[1], n[2])
            f = _cross(ra[0] + d0, ra[1] + d1, ra[2] + d2, nd[0], nd[1], nd[2])
            g = _cross(wr[0], wr[1], wr[2], n[0], n[1], n[2])
            h = _cross(rb[0], rb[1], rb[2], nd[0], nd[1], nd[2])
            out[j, r] = (-_dot(nd[0], nd[1], nd[2], va[0] - vb[0], va[1] - vb[1], va[2] - vb[2])
                         - _dot(e[0] + f[0], e[1] + f[1], e[2] + f[2], wa[0], wa[1], wa[2])
                         + _dot(g[0] + h[0], g[1] + h[1], g[2] + h[2], wb[0], wb[1], wb[2]))
            r += 1


@njit(cache=True, refcount=False)
def _factor_equality_rows(kind, body, frame_a, frame_b, limit, flags, soft, x, q, inv_mass, inv_inertia_world,
                          structure, lin, ang_a, ang_b, inv_a, inv_b, error, coordinate, sigma, active, factor):
    """Rows and I⁻¹ arms of every joint at the pose (x, q) and the envelope Cholesky factor of K = G M⁻¹ Gᵀ
    over the rigid joints' equality rows (``structure`` holds equality rows alone: the world refuses limits
    and motors here); a soft joint's rows (soft[j, 0] > 0) are identity rows of the factor, out of K."""
    order, row0, start, ptr, adj_ptr, adj_joint, adj_side, count, slots = structure
    sigma[:] = 0.0
    for jj in range(kind.shape[0]):
        j = order[jj]
        joint_rows_one(j, kind, body, frame_a, frame_b, limit, flags, x, q, lin, ang_a, ang_b, error, coordinate)
        joint_inverse_arms(j, body, lin, ang_a, ang_b, inv_inertia_world, inv_a, inv_b)
        rigid = 1 if soft[j, 0] == 0.0 else 0
        for r in range(count[j]):
            active[j, slots[j, r]] = rigid
        assemble_joint(j, kind, body, flags, sigma, lin, ang_a, ang_b, inv_a, inv_b, inv_mass, structure, active,
                       factor)
    cholesky_rows(factor, start, ptr, 0, start.shape[0])


@njit(cache=True, refcount=False)
def joint_constraint_forces(kind, body, frame_a, frame_b, limit, flags, soft, x, q, v, w, inv_mass,
                            inv_inertia_world, acc, ang_acc, structure, lin, ang_a, ang_b, inv_a, inv_b, error,
                            coordinate, sigma, active, factor, rhs, rate, force, torque):
    """The joints' constraint loads at the state (x, q, v, w) (module docstring): the soft joints' spring
    multipliers λ_s = −(C / c + d G u), then the rigid ones' from (G M⁻¹ Gᵀ) λ = −(Ġ u + G (a_free +
    M⁻¹ G_sᵀ λ_s)); writes force (n, 3) [N] and torque (n, 3) [N·m about the COM], world frame, = Gᵀ λ of
    all of them on each moving body (zero elsewhere); rhs (rows,) holds every λ in the structure's row order.

    soft (m, 2): compliance c [m/N or rad/(N·m)] and damping d per joint, c = 0 for a rigid one.
    acc, ang_acc (n, 3): a_free, the bodies' accelerations under their loads alone [m/s², rad/s²], to which
    the soft joints' accelerations are added; inv_inertia_world (n, 3, 3) at q; rate (m, 8) scratch for Ġ u
    (for a soft joint, its λ_s). The other arrays are ``JointSet``'s scratch and structure, as
    ``joint_setup`` takes them."""
    order, row0, start, ptr, adj_ptr, adj_joint, adj_side, count, slots = structure
    _factor_equality_rows(kind, body, frame_a, frame_b, limit, flags, soft, x, q, inv_mass, inv_inertia_world,
                          structure, lin, ang_a, ang_b, inv_a, inv_b, error, coordinate, sigma, active, factor)
    for j in range(kind.shape[0]):   # the soft joints' forces first: the rigid rows hold against them
        c = soft[j, 0]
        if c == 0.0 or flags[j] & BROKEN:
            continue
        a, b = body[j, 0], body[j, 1]
        for r in range(count[j]):
            s = slots[j, r]
            rate[j, s] = -(error[j, s] / c + soft[j, 1] * _row_velocity(j, s, a, b, lin, ang_a, ang_b, v, w))
        for r in range(count[j]):
            _apply(j, slots[j, r], a, b, rate[j, slots[j, r]], lin, inv_a, inv_b, inv_mass, acc, ang_acc)
    for j in range(kind.shape[0]):
        a, b = body[j, 0], body[j, 1]
        rigid = soft[j, 0] == 0.0 and not flags[j] & BROKEN
        if rigid:
            joint_rate_products(j, kind, body, frame_a, frame_b, x, q, v, w, rate)
        for r in range(count[j]):
            s = slots[j, r]
            g = row0[j] + r
            rhs[g] = -(rate[j, s] + _row_velocity(j, s, a, b, lin, ang_a, ang_b, acc, ang_acc)) if rigid else 0.0
    _solve(factor, start, ptr, rhs, 0, start.shape[0])
    for j in range(kind.shape[0]):
        if soft[j, 0] > 0.0 and not flags[j] & BROKEN:
            for r in range(count[j]):
                rhs[row0[j] + r] = rate[j, slots[j, r]]
    force[:] = 0.0
    torque[:] = 0.0
    for j in range(kind.shape[0]):
        if flags[j] & BROKEN:
            continue
        for side in range(2):
            i = body[j, side]
            if i < 0 or inv_mass[i] == 0.0:
                continue
            sign = 1.0 if side == 0 else -1.0
            ang = ang_a if side == 0 else ang_b
            for r in range(count[j]):
                s = slots[j, r]
                lam = rhs[row0[j] + r]
                for c in range(3):
                    force[i, c] += sign * lin[j, s, c] * lam
                    torque[i, c] += ang[j, s, c] * lam


@njit(cache=True, refcount=False)
def joint_velocity_projection(kind, body, frame_a, frame_b, limit, flags, soft, x, q, v, w, inv_mass,
                              inv_inertia_world, structure, lin, ang_a, ang_b, inv_a, inv_b, error, coordinate, sigma,
                              active, factor, rhs):
    """u ← u − M⁻¹ Gᵀ (G M⁻¹ Gᵀ)⁻¹ G u at the pose (x, q): the velocities v, w (n, 3) made to meet the rigid
    joints' equality rows by the smallest change in the kinetic-energy norm (notes 0.5); a soft joint's rows
    (soft (m, 2), compliance > 0) are a force, not a constraint, and take no part. Arrays as
    ``joint_constraint_forces``."""
    order, row0, start, ptr, adj_ptr, adj_joint, adj_side, count, slots = structure
    _factor_equality_rows(kind, body, frame_a, frame_b, limit, flags, soft, x, q, inv_mass, inv_inertia_world,
                          structure, lin, ang_a, ang_b, inv_a, inv_b, error, coordinate, sigma, active, factor)
    for j in range(kind.shape[0]):
        a, b = body[j, 0], body[j, 1]
        rigid = soft[j, 0] == 0.0 and not flags[j] & BROKEN
        for r in range(count[j]):
            s = slots[j, r]
            rhs[row0[j] + r] = -_row_velocity(j, s, a, b, lin, ang_a, ang_b, v, w) if rigid else 0.0
    _solve(factor, start, ptr, rhs, 0, start.shape[0])
    for j in range(kind.shape[0]):
        if flags[j] & BROKEN or soft[j, 0] > 0.0:
            continue
        a, b = body[j, 0], body[j, 1]
        for r in range(count[j]):
            _apply(j, slots[j, r], a, b, rhs[row0[j] + r], lin, inv_a, inv_b, inv_mass, v, w)


@njit(cache=True, refcount=False)
def free_accelerations(inv_mass, inv_inertia_world, w, force, torque, gravity, y, acc, ang_acc):
    """a_free of every body (n, 3) each: acc = F/m + g and ang_acc = I⁻¹(τ − ω × L) (Baraff I (2-43): L̇ = τ
    and ω = I⁻¹ L, so ω̇ = I⁻¹(τ − ω × L)), zero for fixed bodies. L is read from Baraff's state y (13 n,)
    (dynamics/state.py); ω (n, 3) and inv_inertia_world (n, 3, 3) at that state; the loads force, torque
    (n, 3) [N, N·m] and gravity (3,) [m/s²], world frame."""
    for i in range(w.shape[0]):
        if inv_mass[i] == 0.0:
            for c in range(3):
                acc[i, c] = 0.0
                ang_acc[i, c] = 0.0
            continue
        o = STATE_SIZE * i + 10
        g0, g1, g2 = _cross(w[i, 0], w[i, 1], w[i, 2], y[o], y[o + 1], y[o + 2])
        t0, t1, t2 = torque[i, 0] - g0, torque[i, 1] - g1, torque[i, 2] - g2
        inv = inv_inertia_world[i]
        for c in range(3):
            acc[i, c] = inv_mass[i] * force[i, c] + gravity[c]
            ang_acc[i, c] = inv[c, 0] * t0 + inv[c, 1] * t1 + inv[c, 2] * t2


@njit(cache=True, refcount=False)
def rows_to_slots(structure, rhs, scale, out):
    """out (m, 8) = scale × the per-row values rhs (rows,) in the structure's row order, placed in each joint's
    row slots (the other slots 0): λ [N] to the impulse λ dt [N·s] that ``joint_accumulate`` reads."""
    order, row0, start, ptr, adj_ptr, adj_joint, adj_side, count, slots = structure
    out[:] = 0.0
    for j in range(count.shape[0]):
        for r in range(count[j]):
            out[j, slots[j, r]] = scale * rhs[row0[j] + r]


@njit(cache=True, refcount=False)
def joint_rates(kind, body, frame_a, frame_b, x, q, v, w, out):
    """``joint_rate_products`` for every joint: out (m, 8) [m/s² or rad/s²]."""
    for j in range(kind.shape[0]):
        joint_rate_products(j, kind, body, frame_a, frame_b, x, q, v, w, out)
