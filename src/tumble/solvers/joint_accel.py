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
rows (constraints/joint_rows.py: ``joint_rate_products``, ``rpy_rate_products``).
"""

from __future__ import annotations

from ..constraints.joint_rows import (
    BALL,
    BROKEN,
    EQUALITY_ROWS,
    HAS_LIMIT,
    HAS_MOTOR,
    MOTOR_ROW,
    NO_LIMIT,
    ROW_SLOTS,
    _cross,
    joint_rate_products,
    joint_rows_one,
    limit_rows,
    rpy_rate_products,
)
from ..integration.state_vector import STATE_SIZE
from ..jit import njit
from ..model.fields import JointBlock
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


@njit(cache=True, refcount=False)
def _rows_at(joints, scratch, structure, x, q, inv_inertia_world, impulse, bias):
    """Every joint's rows and I⁻¹ arms at the pose (x, q) into ``scratch`` (JointScratch); sigma, impulse and bias
    (m, 8) cleared, and ``active`` the rigid joints' equality rows (not a soft or broken joint's, nor the limit
    and motor rows)."""
    kind, body, flags, soft = joints.kind, joints.body, joints.flags, joints.soft
    lin, ang_a, ang_b, inv_a, inv_b = scratch.lin, scratch.ang_a, scratch.ang_b, scratch.inv_ang_a, scratch.inv_ang_b
    sigma, active = scratch.sigma, scratch.active
    rows = (lin, ang_a, ang_b, scratch.error, scratch.coordinate)
    order = structure[0]
    sigma[:] = 0.0
    for jj in range(kind.shape[0]):
        j = order[jj]
        joint_rows_one(j, joints, x, q, rows)
        joint_inverse_arms(j, body, lin, ang_a, ang_b, inv_inertia_world, inv_a, inv_b)
        rigid = soft[j, 0] == 0.0 and not flags[j] & BROKEN
        for s in range(ROW_SLOTS):
            active[j, s] = 1 if rigid and s < EQUALITY_ROWS[kind[j]] else 0
            impulse[j, s] = 0.0
            bias[j, s] = 0.0


@njit(cache=True, refcount=False)
def _factor_active(joints, block, inv_mass, structure):
    """K over the ``block.active`` rows assembled in the structure's order and factored (envelope Cholesky)."""
    order, row0, start, ptr, adj_ptr, adj_joint, adj_side, count, slots = structure
    for jj in range(joints.kind.shape[0]):
        assemble_joint(order[jj], joints, block, inv_mass, structure)
    cholesky_rows(block.factor, start, ptr, 0, start.shape[0])


@njit(cache=True, refcount=False)
def joint_velocity_kick(joints, scratch, structure, ode, x, q, v, w, inv_mass, inv_inertia_world, h):
    """The velocities v, w (n, 3) made to meet the joints at the start of an ODE step of h [s], in place, by the
    time-stepping solve's block with its active set (``joint_iteration``, direct): the rigid equality rows
    to Ċ = 0 (the M-orthogonal projection, notes 0.5: what a contact kick or a velocity set by the user asks
    of the joints), a limit to Ċ ≥ −C/h (it may reach its bound over the step, not pass it: an impact on
    the limit stops dead), a motor toward its speed with an impulse of at most its force × h. Soft joints'
    rows take no part (they are forces). impulse (m, 8) [N·s] receives the rows' impulses; bias (m, 8) is
    scratch (cleared); awake (n,) all True (these three in ``ode``, JointOde). The other arrays as
    ``joint_constraint_forces``.

    Then the rows the step's derivative holds, fixed for the whole step as the event method fixes its
    resting contacts (an rk4 stage's predicted pose leaves a limit at its bound off it by ~(ω h)², which a
    per-stage test would take for leaving it): limit_gap (m, 8) is 0 on a limit at its bound after the kick
    (C ≤ ``ENGAGED_GAP``, Ċ ≤ ``ENGAGED_SPEED``), NO_LIMIT elsewhere; motor_hold (m, 2) is (0, its force)
    for a motor at its speed (within ``MOTOR_SPEED_TOLERANCE``), (0, 0) for one off it."""
    kind, body, flags, motor = joints.kind, joints.body, joints.flags, joints.motor
    lin, ang_a, ang_b, error, active = scratch.lin, scratch.ang_a, scratch.ang_b, scratch.error, scratch.active
    impulse, bias, limit_gap, motor_hold = ode.impulse, ode.bias, ode.limit_gap, ode.motor_hold
    _rows_at(joints, scratch, structure, x, q, inv_inertia_world, impulse, bias)
    for j in range(kind.shape[0]):
        if not flags[j] & BROKEN and flags[j] & HAS_MOTOR and motor[j, 1] > 0.0:
            active[j, MOTOR_ROW] = 1    # impulse 0, inside its bounds; a limit comes in when violated
    block = JointBlock(scratch.sigma, bias, error, motor, impulse, scratch.lin, scratch.ang_a, scratch.ang_b,
                       scratch.inv_ang_a, scratch.inv_ang_b, scratch.active, ode.factor, ode.rhs)
    _factor_active(joints, block, inv_mass, structure)
    joint_iteration(joints, block, inv_mass, ode.awake, structure, True, h, v, w)
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
def joint_constraint_forces(joints, scratch, structure, ode, x, q, v, w, inv_mass, inv_inertia_world):
    """The joints' constraint loads at the state (x, q, v, w) (module docstring). First the soft joints'
    spring multipliers λ_s = −(C / c + d G u), added to the accelerations; then, by the time-stepping solve's
    block and active set (``joint_iteration``, direct) with accelerations for velocities and forces for
    impulses, the rows kept at G u̇ + Ġ u = 0: the rigid equality rows, a limit at its bound with λ ≥ 0 (it
    lets go when it would pull), a motor at its speed with |λ| ≤ its largest force; which limits and motors
    those are, the step's kick decided (``joint_velocity_kick``'s limit_gap and motor_hold). A motor off its
    speed acts only in the kick. Writes force (n, 3) [N] and torque (n, 3) [N·m about the COM],
    world frame, = Gᵀ λ of all rows on each moving body (zero elsewhere), and λ (m, 8) [N or N·m] per slot.

    soft (m, 2): compliance c [m/N or rad/(N·m)] and damping d per joint, c = 0 for a rigid one; motor (m, 2)
    target speed and largest force or torque. In ``ode`` (JointOde): acc, ang_acc (n, 3), a_free, the bodies'
    accelerations under their loads alone [m/s², rad/s²], which become those with the joints; rate, bias (m, 8)
    scratch; limit_gap (m, 8), motor_hold (m, 2) from the kick; awake (n,) all True; force, torque and lam
    written. inv_inertia_world (n, 3, 3) at q. ``joints``, ``scratch``, ``structure``: ``JointSet``'s, as
    ``joint_setup`` takes them."""
    kind, body, flags, soft = joints.kind, joints.body, joints.flags, joints.soft
    lin, ang_a, ang_b, inv_a, inv_b = scratch.lin, scratch.ang_a, scratch.ang_b, scratch.inv_ang_a, scratch.inv_ang_b
    error, active = scratch.error, scratch.active
    acc, ang_acc, rate, bias, lam = ode.acc, ode.ang_acc, ode.rate, ode.bias, ode.lam
    limit_gap, motor_hold, force, torque = ode.limit_gap, ode.motor_hold, ode.force, ode.torque
    order, row0, start, ptr, adj_ptr, adj_joint, adj_side, count, slots = structure
    _rows_at(joints, scratch, structure, x, q, inv_inertia_world, lam, bias)
    for j in range(kind.shape[0]):
        if flags[j] & BROKEN:
            continue
        a, b = body[j, 0], body[j, 1]
        compliance = soft[j, 0]
        joint_rate_products(j, joints, x, q, v, w, rate)
        for s in range(EQUALITY_ROWS[kind[j]]):
            if compliance > 0.0:     # the soft joints' forces first: the rigid rows hold against them
                spring = error[j, s] / compliance
                lam[j, s] = -(spring + soft[j, 1] * _row_velocity(j, s, a, b, lin, ang_a, ang_b, v, w))
                _apply(j, s, a, b, lam[j, s], lin, inv_a, inv_b, inv_mass, acc, ang_acc)
            else:
                bias[j, s] = rate[j, s]
        if flags[j] & HAS_LIMIT:
            if kind[j] == BALL:
                rpy_rate_products(j, joints, x, q, v, w, rate)
            first, end = limit_rows(kind[j])
            for s in range(first, end):
                bias[j, s] = rate[j, s] if kind[j] == BALL else limit_sign(j, lin, ang_a, ang_b) * rate[j, MOTOR_ROW]
                active[j, s] = 1 if limit_gap[j, s] == 0.0 else 0
        if flags[j] & HAS_MOTOR:
            bias[j, MOTOR_ROW] = rate[j, MOTOR_ROW]
            active[j, MOTOR_ROW] = 1 if motor_hold[j, 1] > 0.0 else 0
        # a motor held at zero speed on a limit at its bound: the limit holds the coordinate
        block = JointBlock(scratch.sigma, bias, limit_gap, motor_hold, lam, scratch.lin, scratch.ang_a, scratch.ang_b,
                           scratch.inv_ang_a, scratch.inv_ang_b, scratch.active, ode.factor, ode.rhs)
        delta = motor_yields_to_limit(j, joints, block, 1.0)
        if delta != 0.0:
            _apply(j, MOTOR_ROW, a, b, delta, lin, inv_a, inv_b, inv_mass, acc, ang_acc)
    block = JointBlock(scratch.sigma, bias, limit_gap, motor_hold, lam, scratch.lin, scratch.ang_a, scratch.ang_b,
                       scratch.inv_ang_a, scratch.inv_ang_b, scratch.active, ode.factor, ode.rhs)
    _factor_active(joints, block, inv_mass, structure)
    joint_iteration(joints, block, inv_mass, ode.awake, structure, True, 1.0, acc, ang_acc)
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
def joint_velocity_projection(joints, scratch, structure, ode, x, q, v, w, inv_mass, inv_inertia_world):
    """u ← u − M⁻¹ Gᵀ (G M⁻¹ Gᵀ)⁻¹ G u at the pose (x, q): the velocities v, w (n, 3) made to meet the rigid
    joints' equality rows by the smallest change in the kinetic-energy norm (notes 0.5); a soft joint's rows
    (soft (m, 2), compliance > 0) are a force, not a constraint, and take no part; ode.impulse, ode.bias (m, 8)
    scratch. Arrays as ``joint_constraint_forces``."""
    kind, body, flags, soft = joints.kind, joints.body, joints.flags, joints.soft
    lin, ang_a, ang_b, inv_a, inv_b = scratch.lin, scratch.ang_a, scratch.ang_b, scratch.inv_ang_a, scratch.inv_ang_b
    active, factor, rhs = scratch.active, ode.factor, ode.rhs
    order, row0, start, ptr, adj_ptr, adj_joint, adj_side, count, slots = structure
    _rows_at(joints, scratch, structure, x, q, inv_inertia_world, ode.impulse, ode.bias)
    _factor_active(joints, JointBlock(scratch.sigma, ode.bias, scratch.error, joints.motor, ode.impulse, scratch.lin,
                                      scratch.ang_a, scratch.ang_b, scratch.inv_ang_a, scratch.inv_ang_b,
                                      scratch.active, ode.factor, ode.rhs),
                   inv_mass, structure)
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
