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

Limits (hinge, slider, a ball joint's roll-pitch-yaw) and motors: each step starts with a kick
(``joint_velocity_kick``), the time-stepping solve's block and active set over the step (an impact on a
limit stops dead; a motor moves toward its speed by at most its force × h), which also fixes for the step
which limits are at their bound and which motors at their speed; in the derivative those are held at the
acceleration level by the same block solve (``joint_constraint_forces``), with the rate products of their
rows (``joint_rate_products``, ``rpy_rate_products``).
"""

from __future__ import annotations

import numpy as np

from ..constraints.joint_rows import (
    BALL,
    BROKEN,
    EQUALITY_ROWS,
    FIXED,
    HAS_LIMIT,
    HAS_MOTOR,
    HINGE,
    MOTOR_ROW,
    NO_LIMIT,
    ROW_SLOTS,
    RPY_ROWS,
    SLIDER,
    _axis,
    _cross,
    _frame,
    joint_rows_one,
    limit_rows,
    rpy_angles,
    rpy_lower_nearer,
    rpy_rate_row,
)
from ..conventions import RPY_SINGULAR_COS
from ..integration.state_vector import STATE_SIZE
from ..jit import njit
from ..math3d import qrot_inv_t, qrot_t
from .joint_solve import (
    _apply,
    _row_velocity,
    _solve,
    assemble_joint,
    cholesky_rows,
    joint_inverse_arms,
    joint_iteration,
    limit_sign,
    motor_yields_to_limit,
)

ENGAGED_GAP = 1e-9
"""[m or rad] a limit whose coordinate is this close to its bound (or past it) is at the bound for the
acceleration-level solve: the step's kick leaves an engaged limit at C = 0 to rounding, and the position
projection puts one that the step carried past back on it."""
ENGAGED_SPEED = 1e-9
"""[m/s or rad/s] and not separating faster than this (the kick leaves an engaged limit at Ċ = 0)."""
MOTOR_SPEED_TOLERANCE = 1e-9
"""[m/s or rad/s] a motor this close to its target speed holds it by a force (the kick leaves an unsaturated
motor at its speed to rounding); further off, it acts only in the kick, with its largest impulse."""


@njit(cache=True, forceinline=True, refcount=False)
def _dot(a0, a1, a2, b0, b1, b2):
    return a0 * b0 + a1 * b1 + a2 * b2


@njit(cache=True, forceinline=True, refcount=False)
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

    And in slot 7 (``MOTOR_ROW``) the coordinate's row, which the limit and the motor use (the limit's row is
    it or its negation, by the nearer bound): a hinge's ṡ = u·(ω_a − ω_b) with u fixed in a gives
    (ω_a × u)·(ω_a − ω_b); a slider's s = u·(p_a − p_b) is the slider row along u negated; 0 for ball and
    fixed joints.

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
        for i in (1, 2, 0):     # the line rows along n₁, n₂, then the coordinate's row along u, negated
            n = _axis(fa, i)
            nd = _cross(wa[0], wa[1], wa[2], n[0], n[1], n[2])
            e = _cross(s0, s1, s2, n[0], n[1], n[2])
            f = _cross(ra[0] + d0, ra[1] + d1, ra[2] + d2, nd[0], nd[1], nd[2])
            g = _cross(wr[0], wr[1], wr[2], n[0], n[1], n[2])
            h = _cross(rb[0], rb[1], rb[2], nd[0], nd[1], nd[2])
            rate = (-_dot(nd[0], nd[1], nd[2], va[0] - vb[0], va[1] - vb[1], va[2] - vb[2])
                    - _dot(e[0] + f[0], e[1] + f[1], e[2] + f[2], wa[0], wa[1], wa[2])
                    + _dot(g[0] + h[0], g[1] + h[1], g[2] + h[2], wb[0], wb[1], wb[2]))
            if i == 0:
                out[j, MOTOR_ROW] = -rate
            else:
                out[j, r] = rate
                r += 1
    elif k == HINGE:
        u = _axis(fa, 0)
        ud = _cross(wa[0], wa[1], wa[2], u[0], u[1], u[2])
        out[j, MOTOR_ROW] = _dot(ud[0], ud[1], ud[2], wa[0] - wb[0], wa[1] - wb[1], wa[2] - wb[2])
    else:
        out[j, MOTOR_ROW] = 0.0


@njit(cache=True, refcount=False)
def rpy_rate_products(j, body, frame_a, frame_b, limit, x, q, v, w, out):
    """out[j, 3 + k] = Ġ u of a ball joint's roll-pitch-yaw limit row k (notes 0.4), signed as the row is
    (``_rpy_limit_rows``: the nearer bound's). The row is g_k = R_b h_k(φ, θ) with h_k row k of H⁻¹ (notes
    (0.2)) and Ċ = ± g_k · ω_rel, ω_rel = ω_a − ω_b; its rate along the motion is
    ġ_k · ω_rel = (ω_b × g_k) · ω_rel + (∂h_k/∂φ φ̇ + ∂h_k/∂θ θ̇) · R_bᵀ ω_rel, with (φ̇, θ̇) = (h_0, h_1) · R_bᵀ ω_rel.
    Zero within ``RPY_SINGULAR_COS`` of gimbal lock, where the rows are off. Shapes as ``joint_rate_products``,
    limit (m, 6)."""
    pa, fa, ra, va, wa = _side(body[j, 0], frame_a[j], x, q, v, w)
    pb, fb, rb, vb, wb = _side(body[j, 1], frame_b[j], x, q, v, w)
    phi, theta, psi = rpy_angles(fa, fb)
    cf, sf, ct, st = np.cos(phi), np.sin(phi), np.cos(theta), np.sin(theta)
    if abs(ct) < RPY_SINGULAR_COS:
        for k in range(3):
            out[j, RPY_ROWS + k] = 0.0
        return
    r0, r1, r2 = wa[0] - wb[0], wa[1] - wb[1], wa[2] - wb[2]
    l0, l1, l2 = qrot_inv_t(fb[0], fb[1], fb[2], fb[3], r0, r1, r2)     # ω_rel in frame b's axes
    h = rpy_rate_row(0, cf, sf, ct, st)
    phi_rate = _dot(h[0], h[1], h[2], l0, l1, l2)
    h = rpy_rate_row(1, cf, sf, ct, st)
    theta_rate = _dot(h[0], h[1], h[2], l0, l1, l2)
    inv_c2 = 1.0 / (ct * ct)
    for k in range(3):
        if k == 0:      # h_0 = (cφ tθ, sφ tθ, 1)
            d0 = -sf * st / ct * phi_rate + cf * inv_c2 * theta_rate
            d1 = cf * st / ct * phi_rate + sf * inv_c2 * theta_rate
            angle = phi
        elif k == 1:    # h_1 = (−sφ, cφ, 0)
            d0, d1 = -cf * phi_rate, -sf * phi_rate
            angle = theta
        else:           # h_2 = (cφ / cθ, sφ / cθ, 0)
            d0 = -sf / ct * phi_rate + cf * st * inv_c2 * theta_rate
            d1 = cf / ct * phi_rate + sf * st * inv_c2 * theta_rate
            angle = psi
        hk = rpy_rate_row(k, cf, sf, ct, st)
        g0, g1, g2 = qrot_t(fb[0], fb[1], fb[2], fb[3], hk[0], hk[1], hk[2])
        t0, t1, t2 = _cross(wb[0], wb[1], wb[2], g0, g1, g2)
        rate = _dot(t0, t1, t2, r0, r1, r2) + d0 * l0 + d1 * l1
        sign = 1.0 if rpy_lower_nearer(angle, limit[j, 2 * k], limit[j, 2 * k + 1]) else -1.0
        out[j, RPY_ROWS + k] = sign * rate


@njit(cache=True, refcount=False)
def _rows_at(kind, body, frame_a, frame_b, limit, flags, soft, x, q, inv_inertia_world, structure, lin, ang_a,
             ang_b, inv_a, inv_b, error, coordinate, sigma, active, impulse, bias):
    """Every joint's rows and I⁻¹ arms at the pose (x, q); sigma, impulse and bias cleared, and ``active`` the
    rigid joints' equality rows (not a soft or broken joint's, nor the limit and motor rows)."""
    order = structure[0]
    sigma[:] = 0.0
    for jj in range(kind.shape[0]):
        j = order[jj]
        joint_rows_one(j, kind, body, frame_a, frame_b, limit, flags, x, q, lin, ang_a, ang_b, error, coordinate)
        joint_inverse_arms(j, body, lin, ang_a, ang_b, inv_inertia_world, inv_a, inv_b)
        rigid = soft[j, 0] == 0.0 and not flags[j] & BROKEN
        for s in range(ROW_SLOTS):
            active[j, s] = 1 if rigid and s < EQUALITY_ROWS[kind[j]] else 0
            impulse[j, s] = 0.0
            bias[j, s] = 0.0


@njit(cache=True, refcount=False)
def _factor_active(kind, body, flags, sigma, lin, ang_a, ang_b, inv_a, inv_b, inv_mass, structure, active, factor):
    """K over the ``active`` rows assembled in the structure's order and factored (envelope Cholesky)."""
    order, row0, start, ptr, adj_ptr, adj_joint, adj_side, count, slots = structure
    for jj in range(kind.shape[0]):
        assemble_joint(order[jj], kind, body, flags, sigma, lin, ang_a, ang_b, inv_a, inv_b, inv_mass, structure,
                       active, factor)
    cholesky_rows(factor, start, ptr, 0, start.shape[0])


@njit(cache=True, refcount=False)
def joint_velocity_kick(kind, body, frame_a, frame_b, limit, flags, soft, motor, x, q, v, w, inv_mass,
                        inv_inertia_world, structure, lin, ang_a, ang_b, inv_a, inv_b, error, coordinate, sigma, active,
                        factor, rhs, bias, impulse, awake, h, limit_gap, motor_hold):
    """The velocities v, w (n, 3) made to meet the joints at the start of an ODE step of h [s], in place, by the
    time-stepping solve's block with its active set (``joint_iteration``, direct): the rigid equality rows
    to Ċ = 0 (the M-orthogonal projection, notes 0.5: what a contact kick or a velocity set by the user asks
    of the joints), a limit to Ċ ≥ −C/h (it may reach its bound over the step, not pass it: an impact on
    the limit stops dead), a motor toward its speed with an impulse of at most its force × h. Soft joints'
    rows take no part (they are forces). impulse (m, 8) [N·s] receives the rows' impulses; bias (m, 8) is
    scratch (cleared); awake (n,) all True. The other arrays as ``joint_constraint_forces``.

    Then the rows the step's derivative holds, fixed for the whole step as the event method fixes its
    resting contacts (an rk4 stage's predicted pose leaves a limit at its bound off it by ~(ω h)², which a
    per-stage test would take for leaving it): limit_gap (m, 8) is 0 on a limit at its bound after the kick
    (C ≤ ``ENGAGED_GAP``, Ċ ≤ ``ENGAGED_SPEED``), NO_LIMIT elsewhere; motor_hold (m, 2) is (0, its force)
    for a motor at its speed (within ``MOTOR_SPEED_TOLERANCE``), (0, 0) for one off it."""
    _rows_at(kind, body, frame_a, frame_b, limit, flags, soft, x, q, inv_inertia_world, structure, lin, ang_a,
             ang_b, inv_a, inv_b, error, coordinate, sigma, active, impulse, bias)
    for j in range(kind.shape[0]):
        if not flags[j] & BROKEN and flags[j] & HAS_MOTOR and motor[j, 1] > 0.0:
            active[j, MOTOR_ROW] = 1    # impulse 0, inside its bounds; a limit comes in when violated
    _factor_active(kind, body, flags, sigma, lin, ang_a, ang_b, inv_a, inv_b, inv_mass, structure, active, factor)
    joint_iteration(kind, body, flags, sigma, bias, error, motor, impulse, lin, ang_a, ang_b, inv_a, inv_b, inv_mass,
                    awake, structure, active, factor, rhs, True, h, v, w)
    for j in range(kind.shape[0]):
        for s in range(ROW_SLOTS):
            limit_gap[j, s] = NO_LIMIT     # a limit not at its bound never enters (its target is −∞)
        motor_hold[j, 0] = 0.0             # a motor at its speed keeps it: u̇ along its row = −Ġ u
        motor_hold[j, 1] = 0.0             # and off its speed has no force in the derivative (bounds 0, 0)
        if flags[j] & BROKEN:
            continue
        a, b = body[j, 0], body[j, 1]
        if flags[j] & HAS_LIMIT:
            first, end = limit_rows(kind[j])
            for s in range(first, end):
                speed = _row_velocity(j, s, a, b, lin, ang_a, ang_b, v, w)
                if error[j, s] <= ENGAGED_GAP and speed <= ENGAGED_SPEED:
                    limit_gap[j, s] = 0.0
        if flags[j] & HAS_MOTOR:
            speed = _row_velocity(j, MOTOR_ROW, a, b, lin, ang_a, ang_b, v, w)
            if motor[j, 1] > 0.0 and abs(speed - motor[j, 0]) <= MOTOR_SPEED_TOLERANCE:
                motor_hold[j, 1] = motor[j, 1]


@njit(cache=True, refcount=False)
def joint_constraint_forces(kind, body, frame_a, frame_b, limit, flags, soft, motor, x, q, v, w, inv_mass,
                            inv_inertia_world, acc, ang_acc, structure, lin, ang_a, ang_b, inv_a, inv_b, error,
                            coordinate, sigma, active, factor, rhs, rate, bias, limit_gap, motor_hold, lam, awake,
                            force, torque):
    """The joints' constraint loads at the state (x, q, v, w) (module docstring). First the soft joints'
    spring multipliers λ_s = −(C / c + d G u), added to the accelerations; then, by the time-stepping solve's
    block and active set (``joint_iteration``, direct) with accelerations for velocities and forces for
    impulses, the rows kept at G u̇ + Ġ u = 0: the rigid equality rows, a limit at its bound with λ ≥ 0 (it
    lets go when it would pull), a motor at its speed with |λ| ≤ its largest force; which limits and motors
    those are, the step's kick decided (``joint_velocity_kick``'s limit_gap and motor_hold). A motor off its
    speed acts only in the kick. Writes force (n, 3) [N] and torque (n, 3) [N·m about the COM],
    world frame, = Gᵀ λ of all rows on each moving body (zero elsewhere), and λ (m, 8) [N or N·m] per slot.

    soft (m, 2): compliance c [m/N or rad/(N·m)] and damping d per joint, c = 0 for a rigid one; motor (m, 2)
    target speed and largest force or torque. acc, ang_acc (n, 3): a_free, the bodies' accelerations under
    their loads alone [m/s², rad/s²], which become those with the joints; inv_inertia_world (n, 3, 3) at q;
    rate, bias (m, 8) scratch; limit_gap (m, 8), motor_hold (m, 2) from the kick; awake (n,) all True. The
    other arrays are ``JointSet``'s scratch and structure, as ``joint_setup`` takes them."""
    order, row0, start, ptr, adj_ptr, adj_joint, adj_side, count, slots = structure
    _rows_at(kind, body, frame_a, frame_b, limit, flags, soft, x, q, inv_inertia_world, structure, lin, ang_a,
             ang_b, inv_a, inv_b, error, coordinate, sigma, active, lam, bias)
    for j in range(kind.shape[0]):
        if flags[j] & BROKEN:
            continue
        a, b = body[j, 0], body[j, 1]
        compliance = soft[j, 0]
        joint_rate_products(j, kind, body, frame_a, frame_b, x, q, v, w, rate)
        for s in range(EQUALITY_ROWS[kind[j]]):
            if compliance > 0.0:     # the soft joints' forces first: the rigid rows hold against them
                spring = error[j, s] / compliance
                lam[j, s] = -(spring + soft[j, 1] * _row_velocity(j, s, a, b, lin, ang_a, ang_b, v, w))
                _apply(j, s, a, b, lam[j, s], lin, inv_a, inv_b, inv_mass, acc, ang_acc)
            else:
                bias[j, s] = rate[j, s]
        if flags[j] & HAS_LIMIT:
            if kind[j] == BALL:
                rpy_rate_products(j, body, frame_a, frame_b, limit, x, q, v, w, rate)
            first, end = limit_rows(kind[j])
            for s in range(first, end):
                bias[j, s] = rate[j, s] if kind[j] == BALL else limit_sign(j, lin, ang_a, ang_b) * rate[j, MOTOR_ROW]
                active[j, s] = 1 if limit_gap[j, s] == 0.0 else 0
        if flags[j] & HAS_MOTOR:
            bias[j, MOTOR_ROW] = rate[j, MOTOR_ROW]
            active[j, MOTOR_ROW] = 1 if motor_hold[j, 1] > 0.0 else 0
        # a motor held at zero speed on a limit at its bound: the limit holds the coordinate
        delta = motor_yields_to_limit(j, kind, flags, active, limit_gap, motor_hold, lam, lin, ang_a, ang_b, 1.0)
        if delta != 0.0:
            _apply(j, MOTOR_ROW, a, b, delta, lin, inv_a, inv_b, inv_mass, acc, ang_acc)
    _factor_active(kind, body, flags, sigma, lin, ang_a, ang_b, inv_a, inv_b, inv_mass, structure, active, factor)
    joint_iteration(kind, body, flags, sigma, bias, limit_gap, motor_hold, lam, lin, ang_a, ang_b, inv_a, inv_b,
                    inv_mass, awake, structure, active, factor, rhs, True, 1.0, acc, ang_acc)
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
                for c in range(3):
                    force[i, c] += sign * lin[j, s, c] * lam[j, s]
                    torque[i, c] += ang[j, s, c] * lam[j, s]


@njit(cache=True, refcount=False)
def joint_velocity_projection(kind, body, frame_a, frame_b, limit, flags, soft, x, q, v, w, inv_mass,
                              inv_inertia_world, structure, lin, ang_a, ang_b, inv_a, inv_b, error, coordinate, sigma,
                              active, factor, rhs, impulse, bias):
    """u ← u − M⁻¹ Gᵀ (G M⁻¹ Gᵀ)⁻¹ G u at the pose (x, q): the velocities v, w (n, 3) made to meet the rigid
    joints' equality rows by the smallest change in the kinetic-energy norm (notes 0.5); a soft joint's rows
    (soft (m, 2), compliance > 0) are a force, not a constraint, and take no part; impulse, bias (m, 8)
    scratch. Arrays as ``joint_constraint_forces``."""
    order, row0, start, ptr, adj_ptr, adj_joint, adj_side, count, slots = structure
    _rows_at(kind, body, frame_a, frame_b, limit, flags, soft, x, q, inv_inertia_world, structure, lin, ang_a,
             ang_b, inv_a, inv_b, error, coordinate, sigma, active, impulse, bias)
    _factor_active(kind, body, flags, sigma, lin, ang_a, ang_b, inv_a, inv_b, inv_mass, structure, active, factor)
    for j in range(kind.shape[0]):
        a, b = body[j, 0], body[j, 1]
        for r in range(count[j]):
            s = slots[j, r]
            rhs[row0[j] + r] = -_row_velocity(j, s, a, b, lin, ang_a, ang_b, v, w) if active[j, s] else 0.0
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
    (integration/state_vector.py); ω (n, 3) and inv_inertia_world (n, 3, 3) at that state; the loads force, torque
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
def joint_rates(kind, body, frame_a, frame_b, x, q, v, w, out):
    """``joint_rate_products`` for every joint: out (m, 8) [m/s² or rad/s²]."""
    for j in range(kind.shape[0]):
        joint_rate_products(j, kind, body, frame_a, frame_b, x, q, v, w, out)
