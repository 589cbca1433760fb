"""The articulations' stages of a time-stepping step (methods/timestepping.py calls them around its own).

    velocity stage   q̇* = q̇ + h M⁻¹ (τ − C q̇ − g) by the articulated-body algorithm (in a step with a contact
                     stage, which factors M anyway, by M itself: CRBA, RNEA and a solve), with joint damping
                     implicit ((M + h D) in place of M: ``armature`` + h·damping on the diagonal) and the
                     position/velocity motors τ = kp (q_t − q) + kd (q̇_t − q̇) implicit too (``joint_forces``),
                     clamped to the joint's effort; a free joint's linear velocity changed as the world
                     velocity in the start's axes, not by its body-frame transport term −h ω × v
                     (``free_joint_world_rate``)
    contact stage    the contacts that touch a link, the joint limits about to be passed and joints' dry
                     friction, as velocity-level rows: each contact's normal and two friction rows through
                     the link Jacobian (``link_rows.point_rows``); the Delassus operator W = J M⁻¹ Jᵀ = Z D⁻¹ Zᵀ from
                     the LTDL-factored joint-space M (Z = L⁻ᵀ Jᵀ, nonzero on a row's path to the root), plus
                     J_b M_b⁻¹ J_bᵀ of a free body on the other side; a pair's torsional and rolling rows
                     on the links' angular velocities (docs/materials.md); Newton restitution above the threshold
                     and a Baumgarte push out of penetration beyond the slop as velocity targets; warm-started
                     by feature id; solved by the World's solver and friction model (robots/contact_solve.py:
                     projected Gauss–Seidel in joint space with the World's own friction step by default,
                     APGD, CG or Lemke on W formed densely)
    position stage   q ⊕ h q̇ (angles and slides added; ball and free joints by the exponential map; a free
                     joint's linear velocity then turned into its body's end axes)
    bodies           the links' World bodies (collision shapes, energy, replay) follow the joints

A step in which no link touches anything and no limit is in reach is one kernel call (``free_step``), after
the World's own contact step; with ``rk4`` (``World(robot_integrator="rk4")``) such a step advances (q, q̇)
by classical Runge–Kutta on the ABA instead (joint damping and motors then explicit).
"""

from __future__ import annotations

from collections import namedtuple

import numpy as np

from ..collision.contacts import slot
from ..constraints.contact_rows import tangent_basis
from ..constraints.joint_rows import BROKEN, joint_rows_one
from ..constraints.link_rows import LIMIT_MARGIN, limit_target, point_rows
from ..integration.guard import NonFiniteStep
from ..jit import CallSite, njit, view
from ..math3d import exp_map_t, matrix_to_quat, qmul_t, quat_matrix_t
from ..model.settings import FRICTION_MODELS
from ..precompile import Share
from ..solvers.sequential_impulse import FRICTION_NONE, compliant_row
from ..solvers.velocity_solve import APGD, CG, PGS, Lemke, sweeps_singly
from .closures import (
    CLOSURE_ROWS,
    PROJECTION_STEPS,
    PROJECTION_TOLERANCE,
    SHAKE_STEPS,
    _twist_row,
    closure_readout,
    closure_residual,
    closure_rows,
    closure_triples,
    factor_block,
    solve_blocks,
)
from .contact_solve import FRAME_SIZE, _pgs_rows, link_solve, tangent_frame
from .dynamics import (
    FLOATING,
    PRISMATIC,
    REVOLUTE,
    SPHERICAL,
    aba,
    crba,
    kinematics,
    link_velocities,
    ltdl_factor,
    ltdl_solve,
    rnea,
    work_views,
)
from .forest import scratch_views, state_views
from .tree import tree_views


@njit(cache=True, forceinline=True, refcount=False)
def joint_forces(tree, st, h, tau_total, armature, tau_loads):
    """tau_total (nv,) = τ + motors − damping q̇ − the springs' stiffness (q − spring_ref) and armature (nv,) =
    armature + h damping + the motors' and springs' implicit share (module docstring). A motor evaluated at the
    step's end state, τ_m = kp (q_t − q − h q̇⁺) + kd (q̇_t − q̇⁺) with q̇⁺ = q̇ + h q̈, is kp (q_t − q − h q̇) +
    kd (q̇_t − q̇) now and (h kd + h² kp) on M's diagonal (stable for any gains, as joint damping); a motor at its
    effort limit pushes explicitly with the limit. A joint spring is such a motor without effort limit, kp =
    stiffness toward spring_ref, kd = 0. ``tau_loads`` (nv,): the links' loads (``gather_link_loads``), added.
    h = 0 gives the explicit forces (RK4's stages)."""
    for i in range(tree.parent.shape[0]):
        code = tree.jtype[i]
        for j in range(tree.nv_link[i]):
            d = tree.v_start[i] + j
            t = st.tau[d]
            extra = 0.0
            kp, kd = st.kp[d], st.kd[d]
            if kp != 0.0 or kd != 0.0:
                m = kd * (st.qd_target[d] - st.qd[d])
                if code == REVOLUTE or code == PRISMATIC:
                    m += kp * (st.q_target[d] - st.q[tree.q_start[i]] - h * st.qd[d])
                else:
                    kp = 0.0
                limit = tree.effort[d]
                if m > limit or m < -limit:
                    t += limit if m > 0.0 else -limit
                else:
                    t += m
                    extra = h * kd + h * h * kp
            k = tree.stiffness[d]
            if k != 0.0:   # (a revolute or prismatic coordinate: tree.build_tree refuses others)
                t -= k * (st.q[tree.q_start[i]] - tree.spring_ref[d] + h * st.qd[d])
                extra += h * h * k
            tau_total[d] = t - tree.damping[d] * st.qd[d] + tau_loads[d]
            armature[d] = tree.armature[d] + h * tree.damping[d] + extra


@njit(cache=True, forceinline=True, refcount=False)
def free_joint_world_rate(tree, qd, qd_new, h):
    """qd_new (nv,) += h ω × v for each free joint (qd: q̇ at the step's start, v and ω the joint's body-frame
    linear and angular velocity): its linear velocity's change over the step becomes that of the world velocity,
    in the axes of the step's start, h R₀ᵀ a_w. The body-frame coordinates of a velocity fixed in the world turn at
    −ω, d/dt (Rᵀ v_w) = Rᵀ a_w − ω × v (Featherstone §2.8's body-frame derivative), and the velocity stage's q̈
    carries that −ω × v; taken explicitly it stretched v by √(1 + (h ω)²) a step (a free box at 1 m/s spinning at
    10 rad/s gained 37 % of its kinetic energy in 1 s at h = 1/240 s). Until ``position_stage`` turns it into the
    end's axes the free joint's v is the world velocity in R₀'s axes, the velocity the contact rows' J (formed at
    the step's start) constrain and the position update moves by."""
    for i in range(tree.parent.shape[0]):
        if tree.jtype[i] != FLOATING:
            continue
        d = tree.v_start[i]
        vx, vy, vz = qd[d], qd[d + 1], qd[d + 2]
        wx, wy, wz = qd[d + 3], qd[d + 4], qd[d + 5]
        qd_new[d] += h * (wy * vz - wz * vy)
        qd_new[d + 1] += h * (wz * vx - wx * vz)
        qd_new[d + 2] += h * (wx * vy - wy * vx)


@njit(cache=True, forceinline=True, refcount=False)
def _turn_into_end_axes(qd, d, h):
    """A free joint's linear velocity qd[d:d+3], the world velocity in the axes of the step's start (R₀ᵀ v_w), into
    the body axes at its end, R₁ = R₀ exp(h [ω]) with ω = qd[d+3:d+6]: exp(−h [ω]) v by Rodrigues' formula
    (v cos θ − sin θ k × v + (1 − cos θ)(k · v) k, θ = h |ω|, k = ω / |ω|), so that R₁ v is R₀ v and |v| is kept."""
    turn_back(qd, d, qd[d + 3], qd[d + 4], qd[d + 5], h)


@njit(cache=True, forceinline=True, refcount=False)
def turn_back(x, d, wx, wy, wz, h):
    """x[d:d+3] ← exp(−h [ω]) x[d:d+3] for ω = (wx, wy, wz) (Rodrigues' formula, as ``_turn_into_end_axes``): a
    vector's coordinates in body axes that turned by exp(h [ω])."""
    speed = np.sqrt(wx * wx + wy * wy + wz * wz)
    theta = h * speed
    if theta == 0.0:
        return
    kx, ky, kz = wx / speed, wy / speed, wz / speed
    vx, vy, vz = x[d], x[d + 1], x[d + 2]
    half = np.sin(0.5 * theta)
    one_minus_cos = 2.0 * half * half   # 1 − cos θ from its half-angle form: no cancellation at small θ
    sin = np.sin(theta)
    kv = (kx * vx + ky * vy + kz * vz) * one_minus_cos
    x[d] = vx - one_minus_cos * vx - sin * (ky * vz - kz * vy) + kv * kx
    x[d + 1] = vy - one_minus_cos * vy - sin * (kz * vx - kx * vz) + kv * ky
    x[d + 2] = vz - one_minus_cos * vz - sin * (kx * vy - ky * vx) + kv * kz


@njit(cache=True, forceinline=True, refcount=False)
def gather_link_loads(tree, work, q, link_body, force, torque, tau_loads):
    """tau_loads (nv,) += Σ J_cᵀ f + J_ωᵀ τ [N m, N] of the loads on the links' World bodies (force (n, 3) [N] at
    the body's COM and torque (n, 3) [N m] about it, world frame: ``Body.apply_force``, force callbacks, springs),
    J_c the Jacobian of the link's COM (closures.``_twist_row``, the closures' rows, along its path to the root): the
    external forces f^x of the RNEA (Featherstone Table 5.1) as joint forces. The loads are then
    zeroed (consumed: a step takes them once, as the World's velocity stage takes a free body's). Kinematics of
    ``q`` (nq,) are computed when a load is found and the work does not hold them (work.flags[0]: 0 none,
    1 ``write_bodies``', 2 these)."""
    for i in range(link_body.shape[0]):
        b = link_body[i]
        if b < 0:
            continue
        f0, f1, f2 = force[b, 0], force[b, 1], force[b, 2]
        t0, t1, t2 = torque[b, 0], torque[b, 1], torque[b, 2]
        if f0 == 0.0 and f1 == 0.0 and f2 == 0.0 and t0 == 0.0 and t1 == 0.0 and t2 == 0.0:
            continue
        if work.flags[0] == 0.0:
            kinematics(tree, q, work)
            work.flags[0] = 2.0   # (world poses of q, without write_bodies' link velocities: not 1)
        R, c = work.R_world[i], tree.com[i]
        com = (work.p_world[i, 0] + R[0, 0] * c[0] + R[0, 1] * c[1] + R[0, 2] * c[2],
               work.p_world[i, 1] + R[1, 0] * c[0] + R[1, 1] * c[1] + R[1, 2] * c[2],
               work.p_world[i, 2] + R[2, 0] * c[0] + R[2, 1] * c[1] + R[2, 2] * c[2])
        _twist_row(tree, work, i, com, (f0, f1, f2), (t0, t1, t2), tau_loads)   # (the closures' J row, with w)
        for a in range(3):
            force[b, a] = 0.0
            torque[b, a] = 0.0


@njit(cache=True, forceinline=True, refcount=False)
def velocity_stage(tree, st, work, gravity, h, tau_total, armature, qdd, qd_free, tau_loads):
    """qd_free (nv,) = q̇ + h q̈ by the ABA, with the joint forces of ``joint_forces`` (module docstring); the
    kinematics of q (the ABA reads the world poses) are reused when the last ``write_bodies`` left them
    (work.flags[0]), else computed; ``tau_loads`` the links' loads (``gather_link_loads``)."""
    if work.flags[0] == 0.0:
        kinematics(tree, st.q, work)
    joint_forces(tree, st, h, tau_total, armature, tau_loads)
    aba(tree, work, armature, st.qd, tau_total, gravity, qdd)
    for d in range(qd_free.shape[0]):
        qd_free[d] = st.qd[d] + h * qdd[d]
    free_joint_world_rate(tree, st.qd, qd_free, h)


@njit(cache=True, refcount=False)
def q_rates(tree, q, qd, out):
    """out (nq,) = dq/dt for velocities qd (nv,): q̇ for angles and slides, ½ q ⊗ (0, ω) for a ball joint's
    quaternion (ω in the link frame), R v and ½ q ⊗ (0, ω) for a free joint."""
    for i in range(tree.parent.shape[0]):
        k, d, code = tree.q_start[i], tree.v_start[i], tree.jtype[i]
        if code == REVOLUTE or code == PRISMATIC:
            out[k] = qd[d]
        elif code == SPHERICAL or code == FLOATING:
            qk = k if code == SPHERICAL else k + 3
            wd = d if code == SPHERICAL else d + 3
            w0, x0, y0, z0 = q[qk], q[qk + 1], q[qk + 2], q[qk + 3]
            a, b, c = qd[wd], qd[wd + 1], qd[wd + 2]
            out[qk] = 0.5 * (-x0 * a - y0 * b - z0 * c)
            out[qk + 1] = 0.5 * (w0 * a + y0 * c - z0 * b)
            out[qk + 2] = 0.5 * (w0 * b + z0 * a - x0 * c)
            out[qk + 3] = 0.5 * (w0 * c + x0 * b - y0 * a)
            if code == FLOATING:
                r00, r01, r02, r10, r11, r12, r20, r21, r22 = quat_matrix_t(w0, x0, y0, z0)
                out[k] = r00 * qd[d] + r01 * qd[d + 1] + r02 * qd[d + 2]
                out[k + 1] = r10 * qd[d] + r11 * qd[d + 1] + r12 * qd[d + 2]
                out[k + 2] = r20 * qd[d] + r21 * qd[d + 1] + r22 * qd[d + 2]


@njit(cache=True, forceinline=True, refcount=False)
def _normalize_quaternions(tree, q):
    for i in range(tree.parent.shape[0]):
        code = tree.jtype[i]
        if code == SPHERICAL or code == FLOATING:
            k = tree.q_start[i] + (0 if code == SPHERICAL else 3)
            n = np.sqrt(q[k] ** 2 + q[k + 1] ** 2 + q[k + 2] ** 2 + q[k + 3] ** 2)
            for a in range(4):
                q[k + a] /= n


@njit(cache=True, forceinline=True, refcount=False)
def position_stage(tree, q, qd, h):
    """q ← q ⊕ h q̇ (semi-implicit Euler's position update): angles and slides add h q̇; a ball or free joint's
    orientation turns by the exponential map of h ω (link frame, exact for constant ω, stays unit length). A free
    joint's v is then the world velocity in the axes of the step's start (``free_joint_world_rate``): its position
    moves by h R₀ v, the velocity the contact rows' J (of the step's start) constrained, so that a resting or
    rolling body's contact does not drift and a body spinning in flight moves on the straight line of its
    velocity; then v is turned into the end's body axes (``_turn_into_end_axes``), q̇'s convention between steps."""
    for i in range(tree.parent.shape[0]):
        k, d, code = tree.q_start[i], tree.v_start[i], tree.jtype[i]
        if code == REVOLUTE or code == PRISMATIC:
            q[k] += h * qd[d]
        elif code == SPHERICAL or code == FLOATING:
            qk = k if code == SPHERICAL else k + 3
            wd = d if code == SPHERICAL else d + 3
            if code == FLOATING:
                r00, r01, r02, r10, r11, r12, r20, r21, r22 = quat_matrix_t(q[qk], q[qk + 1], q[qk + 2], q[qk + 3])
                q[k] += h * (r00 * qd[d] + r01 * qd[d + 1] + r02 * qd[d + 2])
                q[k + 1] += h * (r10 * qd[d] + r11 * qd[d + 1] + r12 * qd[d + 2])
                q[k + 2] += h * (r20 * qd[d] + r21 * qd[d + 1] + r22 * qd[d + 2])
            ew, ex, ey, ez = exp_map_t(qd[wd], qd[wd + 1], qd[wd + 2], h)
            q[qk], q[qk + 1], q[qk + 2], q[qk + 3] = qmul_t(q[qk], q[qk + 1], q[qk + 2], q[qk + 3], ew, ex, ey, ez)
            if code == FLOATING:
                _turn_into_end_axes(qd, d, h)
    _normalize_quaternions(tree, q)


@njit(cache=True, refcount=False)
def rk4_stage(tree, st, work, gravity, h, sc):
    """(q, q̇) advanced by classical Runge–Kutta on q̈ = ABA(q, q̇, τ) (joint damping and motors explicit,
    evaluated at each stage's state through ``joint_forces``); ``sc`` the forest's ``Scratch``; st.q and st.qd
    are overwritten."""
    nq, nv = st.q.shape[0], st.qd.shape[0]
    tau_total, armature, qdd, k_q, k_v = sc.tau_total, sc.armature, sc.qdd, sc.k_q, sc.k_v
    q_stage, qd_stage, q0, qd0 = sc.q_stage, sc.qd_stage, sc.q0, sc.qd0
    for a in range(nq):
        q0[a] = st.q[a]
    for a in range(nv):
        qd0[a] = st.qd[a]
    weights = (0.0, 0.5, 0.5, 1.0)
    for s in range(4):
        for a in range(nq):
            q_stage[a] = q0[a] + weights[s] * h * k_q[s - 1, a] if s > 0 else q0[a]
        for a in range(nv):
            qd_stage[a] = qd0[a] + weights[s] * h * k_v[s - 1, a] if s > 0 else qd0[a]
        _normalize_quaternions(tree, q_stage)
        for a in range(nq):
            st.q[a] = q_stage[a]
        for a in range(nv):
            st.qd[a] = qd_stage[a]
        kinematics(tree, st.q, work)
        joint_forces(tree, st, 0.0, tau_total, armature, sc.tau_loads)
        aba(tree, work, armature, st.qd, tau_total, gravity, qdd)
        for a in range(nv):
            k_v[s, a] = qdd[a]
        q_rates(tree, st.q, st.qd, k_q[s])
    work.flags[0] = 0.0
    for a in range(nq):
        st.q[a] = q0[a] + h / 6.0 * (k_q[0, a] + 2.0 * k_q[1, a] + 2.0 * k_q[2, a] + k_q[3, a])
    for a in range(nv):
        st.qd[a] = qd0[a] + h / 6.0 * (k_v[0, a] + 2.0 * k_v[1, a] + 2.0 * k_v[2, a] + k_v[3, a])
    _normalize_quaternions(tree, st.q)


@njit(cache=True, forceinline=True, refcount=False)
def write_bodies(tree, work, q, qd, link_body, x, qb, v, w):
    """The links' World bodies at the joints' state: body COM x (n, 3) = p + R com, orientation qb (n, 4) of R
    (body axes are link axes), COM velocity v = R (v_o + ω × com) and ω = R ω_link, world frame. Its kinematics
    of q serve the next velocity stage (work.flags[0]); a robot without link bodies skips all of it."""
    bodies = 0
    for i in range(link_body.shape[0]):
        bodies += link_body[i] >= 0
    if bodies == 0:
        work.flags[0] = 0.0
        return
    kinematics(tree, q, work)
    work.flags[0] = 1.0
    link_velocities(tree.parent, tree.v_start, tree.nv_link, tree.S, work.E, work.r, qd, work.vel)
    for i in range(link_body.shape[0]):
        b = link_body[i]
        if b < 0:
            continue
        R, c, vel = work.R_world[i], tree.com[i], work.vel[i]
        wl0, wl1, wl2 = vel[0], vel[1], vel[2]
        vc0 = vel[3] + wl1 * c[2] - wl2 * c[1]
        vc1 = vel[4] + wl2 * c[0] - wl0 * c[2]
        vc2 = vel[5] + wl0 * c[1] - wl1 * c[0]
        for a in range(3):
            x[b, a] = work.p_world[i, a] + R[a, 0] * c[0] + R[a, 1] * c[1] + R[a, 2] * c[2]
            v[b, a] = R[a, 0] * vc0 + R[a, 1] * vc1 + R[a, 2] * vc2
            w[b, a] = R[a, 0] * wl0 + R[a, 1] * wl1 + R[a, 2] * wl2
        matrix_to_quat(R, qb[b])


@njit(cache=True, inline="always")   # returns views (tree.tree_views)
def _unpack(buffers):
    tree_i, tree_f, state_f, work_f, scratch_f = buffers
    L, nv, nq = tree_i[0], tree_i[1], tree_i[2]
    tree, link_body = tree_views(tree_i, tree_f)
    return (tree, link_body, state_views(state_f, nq, nv), work_views(work_f, L),
            scratch_views(scratch_f, nq, nv))


@njit(cache=True, forceinline=True, refcount=False)
def limits_in_reach(tree, q, qd, h):
    """Whether a revolute or prismatic coordinate with a position limit is within ``LIMIT_MARGIN`` of it, now or
    after h [s] at its current speed (the step then needs the contact stage's limit rows)."""
    for i in range(tree.parent.shape[0]):
        code = tree.jtype[i]
        if code != REVOLUTE and code != PRISMATIC:
            continue
        d = tree.v_start[i]
        lo, hi = tree.lower[d], tree.upper[d]
        if lo == -np.inf and hi == np.inf:
            continue
        qi = q[tree.q_start[i]]
        reach = qi + h * qd[d]
        if min(qi, reach) <= lo + LIMIT_MARGIN or max(qi, reach) >= hi - LIMIT_MARGIN:
            return True
    return False


@njit(cache=True, forceinline=True, refcount=False)
def _save(st, sc):
    """Keep q, q̇ and the limit and friction rows' impulses (the warm starts) of the step's start in ``sc``."""
    for a in range(st.q.shape[0]):
        sc.q_saved[a] = st.q[a]
    for a in range(st.qd.shape[0]):
        sc.qd_saved[a] = st.qd[a]
        sc.impulses_saved[0, a] = st.lower_impulse[a]
        sc.impulses_saved[1, a] = st.upper_impulse[a]
        sc.impulses_saved[2, a] = st.friction_impulse[a]


@njit(cache=True, forceinline=True, refcount=False)
def _non_finite(st, sc, work):
    """The first velocity coordinate (or nv + the q entry) whose value went non-finite, with q, q̇ and the warm
    starts put back to the step's start (``_save``); −1 if all are finite."""
    bad = -1
    for a in range(st.qd.shape[0]):
        if not np.isfinite(st.qd[a]):
            bad = a
            break
    if bad < 0:
        for a in range(st.q.shape[0]):
            if not np.isfinite(st.q[a]):
                bad = st.qd.shape[0] + a
                break
    if bad >= 0:
        for a in range(st.q.shape[0]):
            st.q[a] = sc.q_saved[a]
        for a in range(st.qd.shape[0]):
            st.qd[a] = sc.qd_saved[a]
            st.lower_impulse[a] = sc.impulses_saved[0, a]
            st.upper_impulse[a] = sc.impulses_saved[1, a]
            st.friction_impulse[a] = sc.impulses_saved[2, a]
            sc.tau_loads[a] = 0.0
        work.flags[0] = 0.0
    return bad



FREE_STEP_DONE = -1
FREE_STEP_LIMIT = -2
"""``free_step``'s answers besides the index of a non-finite coordinate."""

STAGE_UNCOUPLED = -1
STAGE_TOO_FEW_ROWS = -2
"""``contact_stage``'s answers besides its number of rows."""


@njit(cache=True, refcount=False)
def free_step(buffers, gravity, h, rk4, x, qb, v, w):
    """A whole step of robots that touch nothing, in one call: (q, q̇) by semi-implicit Euler
    (``velocity_stage``, ``position_stage``) or, with ``rk4``, by ``rk4_stage``, with the loads on the links'
    bodies that a ``contact_stage`` gathered before it in this step (``gather_link_loads``; World.step takes the
    one-kernel path of a robot alone only while no link body holds a load: ``Forest.loads_pending``); then
    ``write_bodies``. ``buffers`` is ``Forest.buffers``; x, qb, v, w the World bodies' state rows.
    Returns FREE_STEP_DONE;
    FREE_STEP_LIMIT, having changed nothing, when a limit is in reach (the step then needs ``contact_stage``);
    or the coordinate that went non-finite (``_non_finite``), with the robots as before the step."""
    tree, link_body, st, work, sc = _unpack(buffers)
    header = buffers[0]
    if header[4] > 0 and limits_in_reach(tree, st.q, st.qd, h):   # (tree.HEADER: coordinates with a limit)
        return FREE_STEP_LIMIT
    _save(st, sc)
    bodies = header[3] > 0   # (links with a World body: loads possible; without, tau_loads stays zero)
    if rk4:
        rk4_stage(tree, st, work, gravity, h, sc)
    else:
        velocity_stage(tree, st, work, gravity, h, sc.tau_total, sc.armature, sc.qdd, sc.qd_free, sc.tau_loads)
        for d in range(st.qd.shape[0]):
            st.qd[d] = sc.qd_free[d]
        position_stage(tree, st.q, st.qd, h)
    if bodies:
        for d in range(st.qd.shape[0]):
            sc.tau_loads[d] = 0.0   # (used)
    bad = _non_finite(st, sc, work)
    if bad >= 0:
        return bad
    if bodies:
        write_bodies(tree, work, st.q, st.qd, link_body, x, qb, v, w)
    else:
        work.flags[0] = 0.0
    return FREE_STEP_DONE


@njit(cache=True, refcount=False)
def gather_loads(buffers, force, torque):
    """The loads on the links' World bodies (force, torque (n, 3), world) as joint forces (``gather_link_loads``),
    for a step whose robots advance apart from the World's solve by ``free_step``, before the World's step clears
    the bodies' loads (methods/timestepping.py, a world whose robots step in the one solve when coupled)."""
    tree, link_body, st, work, sc = _unpack(buffers)
    gather_link_loads(tree, work, st.q, link_body, force, torque, sc.tau_loads)


@njit(cache=True, refcount=False)
def place_links(buffers, x, qb, v, w):
    """The links' World bodies where the current q, q̇ put them (after q or q̇ were set)."""
    tree, link_body, st, work, _ = _unpack(buffers)
    write_bodies(tree, work, st.q, st.qd, link_body, x, qb, v, w)


@njit(cache=True, refcount=False)
def _wake_links(link_bodies, awake, sleep_timer, force, torque):
    """The links' bodies awake (a robot never sleeps) and without loads: the step's robot stages took theirs
    (``gather_link_loads``), and nothing left on a link body carries over to the next step (the World's free step,
    which clears loads, may not run: a world of robots alone)."""
    for i in range(link_bodies.shape[0]):
        b = link_bodies[i]
        awake[b] = True
        sleep_timer[b] = 0.0
        for k in range(3):
            force[b, k] = 0.0
            torque[b, k] = 0.0


@njit(cache=True, forceinline=True, refcount=False)
def _closure_block(tree, rows, first, j, closures, body_link, bodies, work, projection):
    """Closure j's rows from row ``first`` (``closures.closure_rows``) on the union of its links' paths. Returns
    the rows taken."""
    data = closures[0]
    a, b = data.body[j, 0], data.body[j, 1]
    link_a = body_link[a] if a >= 0 else -1
    link_b = body_link[b] if b >= 0 else -1
    rows.row_ndof[first] = _contact_path(tree, link_a, link_b, rows.dof_stamp, first, rows.row_dofs[first])
    return closure_rows(tree, work, rows, first, j, closures, body_link, bodies, projection)


@njit(cache=True, forceinline=True, refcount=False)
def _joint_space_move(tree, rows, n_rows, M, g):
    """g (nv,) = M⁻¹ Jᵀ λ of rows 0 … n_rows − 1: the generalized impulse gathered along each row's path, then one
    solve with the LTDL-factored M."""
    for d in range(g.shape[0]):
        g[d] = 0.0
    for r in range(n_rows):
        for t in range(rows.row_ndof[r]):
            d = rows.row_dofs[r, t]
            g[d] += rows.rows_J[r, d] * rows.lam[r]
    ltdl_solve(tree.dof_parent, M, g)


@njit(cache=True, forceinline=True, refcount=False)
def _impulse_velocities(tree, rows, n_rows, M, qd_free, qd, g):
    """q̇ (nv,) = q̇_free + M⁻¹ Jᵀ λ of rows 0 … n_rows − 1 (``_joint_space_move``, in g (nv,))."""
    _joint_space_move(tree, rows, n_rows, M, g)
    for d in range(g.shape[0]):
        qd[d] = qd_free[d] + g[d]


@njit(cache=True, forceinline=True, refcount=False)
def _shake_closures(tree, work, joint_state, rows, layout, closures, bodies, h, M):
    """SHAKE (Ryckaert et al. 1977) on the loop closures after the velocity solve, as the World's joints
    (solvers/joint_solve.py ``joint_shake``): impulses along the closures' rows of the step's start that make the
    pose the position stage will reach satisfy them. With C⁺ a row's error at the predicted pose (q ⊕ h q̇ for the
    links, x + h v⁺ and ω⁺ for a free body on a closure), the rows' velocities are asked for J v − C⁺ / h, by the
    closure blocks' sweeps on W of the step's start (``closure_sweep``); q̇ and the free bodies' share follow;
    ``SHAKE_STEPS`` times. With the velocity solve at the next step's pose this is RATTLE (Andersen 1983): the
    velocity solve alone removes, each step, the velocity the rows' curvature turns into error, an O(h) loss of
    energy (a four-bar lost 5 % of its energy in 2 s at 1/240 s). joint_state = (st, sc, link_body), layout =
    (n_rows, n_pair_rows, n_body_rows) of the stage, bodies = (inv_mass, x, qb, v, w, force, gravity)."""
    st, sc, link_body = joint_state
    n_rows, first, end = layout
    inv_mass, x, qb, v, w, force, gravity = bodies
    data, _, _, shake = closures
    predicted, px, pq = shake
    u = sc.qdd   # D⁻¹ Σ Z λ, as the sweeps left it
    for _ in range(SHAKE_STEPS):
        for a in range(st.q.shape[0]):
            sc.q_stage[a] = st.q[a]
        for a in range(st.qd.shape[0]):
            sc.qd_stage[a] = st.qd[a]
        position_stage(tree, sc.q_stage, sc.qd_stage, h)
        kinematics(tree, sc.q_stage, work)
        # the predicted poses of the closures' bodies: a link's where q ⊕ h q̇ puts it, a free body's after h at the
        # velocity the stage leaves it (its loads' h (g + F/m) and the rows' Δv)
        r = first
        while r < end:
            j = rows.row_slot[r]
            for side in range(2):
                body = data.body[j, side]
                if body < 0:
                    continue
                i = -1
                for k in range(link_body.shape[0]):
                    if link_body[k] == body:
                        i = k
                if i >= 0:
                    R, c = work.R_world[i], tree.com[i]
                    for e in range(3):
                        px[body, e] = work.p_world[i, e] + R[e, 0] * c[0] + R[e, 1] * c[1] + R[e, 2] * c[2]
                    matrix_to_quat(R, pq[body])
                    continue
                if inv_mass[body] == 0.0:   # a fixed body stays (it is on no row: its body_dv is not kept)
                    for e in range(3):
                        px[body, e] = x[body, e]
                    for e in range(4):
                        pq[body, e] = qb[body, e]
                    continue
                dv = rows.body_dv[body]
                for e in range(3):
                    px[body, e] = x[body, e] + h * (v[body, e] + h * (gravity[e] + force[body, e] * inv_mass[body])
                                                    + dv[e])
                ew, ex, ey, ez = exp_map_t(w[body, 0] + dv[3], w[body, 1] + dv[4], w[body, 2] + dv[5], h)
                pq[body, 0], pq[body, 1], pq[body, 2], pq[body, 3] = qmul_t(ew, ex, ey, ez, qb[body, 0], qb[body, 1],
                                                                            qb[body, 2], qb[body, 3])
            joint_rows_one(j, data, px, pq, predicted)
            k = rows.row_normal[r] - CLOSURE_ROWS
            for i in range(k):
                # J v now is its residual plus its target; ask it for that less C⁺ / h
                rows.target[r + i] += closure_residual(rows, r + i, r, u) - predicted[3][j, i] / h
            r += 3 if k <= 3 else 6
        work.flags[0] = 0.0
        solve_blocks(rows, first, end, u)
        _impulse_velocities(tree, rows, n_rows, M, sc.qd_free, st.qd, sc.qd0)
    # (work keeps the predicted kinematics, flagged stale: the stage reads no more of them, and the finish
    # computes them at the step's end)


@njit(cache=True, forceinline=True, refcount=False)
def project_closures(tree, work, sc, q, poses, projection):
    """One Newton step of the loop closures' position projection (robots/closures.py): their rows at the pose of
    q and the World bodies' poses = (x, qb) (the links' bodies written from q), W μ = −C by block Gauss–Seidel
    (one closure alone: exact), q ← q ⊕ M⁻¹ Jᵀ μ and a free body's pose moved by M_b⁻¹ J_bᵀ μ (position and
    rotation vector, world frame). projection = (closures, packed_rows, M, body_link, inv_mass,
    inv_inertia_body), M the step's LTDL-factored joint-space matrix. Returns False, changing nothing, when no
    closure row's |C| exceeds PROJECTION_TOLERANCE."""
    closures, packed_rows, M, body_link, inv_mass, inv_inertia_body = projection
    x, qb = poses
    rf, ri, R_cap, B_cap = packed_rows
    nv = M.shape[0]
    rows = rows_views(rf, ri, R_cap, nv, B_cap)
    for d in range(nv):
        rows.dof_stamp[d] = -1
    data, index, _, _ = closures
    n = 0
    for c in range(index.shape[0]):
        j = index[c]
        if not data.flags[j] & BROKEN:
            n += _closure_block(tree, rows, n, j, closures, body_link, (inv_mass, x, qb), work, True)
    worst = 0.0
    for r in range(n):
        worst = max(worst, abs(rows.target[r]))
        rows.vrow[r] = 0.0
    if worst <= PROJECTION_TOLERANCE:
        return False
    _row_operators(tree, rows, M, n, n, (inv_mass, inv_inertia_body, qb))
    r = 0
    while r < n:
        factor_block(rows, r)
        r += 3 if rows.row_normal[r] - CLOSURE_ROWS <= 3 else 6
    u = sc.qdd
    for d in range(nv):
        u[d] = 0.0
    for r in range(n):
        for side in range(2):
            if rows.row_side[r, side] >= 0:
                for e in range(6):
                    rows.body_dv[rows.row_side[r, side], e] = 0.0
    solve_blocks(rows, 0, n, u)
    # Δq = M⁻¹ Jᵀ μ (u, D⁻¹ Σ Z μ, is L Δq; one solve from Jᵀ μ is as cheap), and a free body's M_b⁻¹ J_bᵀ μ,
    # which the sweeps summed in body_dv
    g = sc.qdd
    _joint_space_move(tree, rows, n, M, g)
    position_stage(tree, q, g, 1.0)
    for r in range(n):
        for side in range(2):
            body = rows.row_side[r, side]
            if body < 0:
                continue
            move = rows.body_dv[body]
            for e in range(3):
                x[body, e] += move[e]
            dw, ex, ey, ez = exp_map_t(move[3], move[4], move[5], 1.0)
            a0, a1, a2, a3 = qmul_t(dw, ex, ey, ez, qb[body, 0], qb[body, 1], qb[body, 2], qb[body, 3])
            norm = np.sqrt(a0 * a0 + a1 * a1 + a2 * a2 + a3 * a3)
            qb[body, 0], qb[body, 1], qb[body, 2], qb[body, 3] = a0 / norm, a1 / norm, a2 / norm, a3 / norm
            for e in range(6):
                move[e] = 0.0   # (moved: a body on several rows moves once)
    return True


@njit(cache=True, refcount=False)
def finish_coupled(buffers, h, poses, projection):
    """After a step's contact stage: the position stage, the loop closures' projection (``project_closures``; its
    ``projection`` arguments) and the links' bodies; poses = (x, qb, v, w) of the World's bodies. Returns −1, or
    the coordinate that went non-finite (``_non_finite``), with the robots as at the step's start
    (``contact_stage`` keeps it)."""
    tree, link_body, st, work, sc = _unpack(buffers)
    x, qb, v, w = poses
    position_stage(tree, st.q, st.qd, h)
    bad = _non_finite(st, sc, work)
    if bad >= 0:
        return bad
    write_bodies(tree, work, st.q, st.qd, link_body, x, qb, v, w)
    if projection is not None:   # (None without closures: this code is not compiled)
        for _ in range(PROJECTION_STEPS):
            if not project_closures(tree, work, sc, st.q, (x, qb), projection):
                break
            bad = _non_finite(st, sc, work)
            if bad >= 0:
                return bad
            write_bodies(tree, work, st.q, st.qd, link_body, x, qb, v, w)
    return -1


@njit(cache=True, refcount=False)
def finish_step(buffers, gravity, h, rk4, coupled, poses, link_pairs, links, projection):
    """The robots' part of a step after the World's contact step, in one call: the link contacts hidden from the
    World's solve counted again (``show_link_pairs``; link_pairs = (pair_contacts, kept, hidden): ``hidden`` pairs
    were), then, after a ``contact_stage`` (``coupled``), the position stage and the links' bodies
    (``finish_coupled``), or else the robots' whole step (``free_step``: ABA, or ``rk4``); the links' bodies awake
    and without loads (``_wake_links``; links = (link_bodies, awake, sleep_timer, force, torque)). poses = (x, q,
    v, w) of the World's bodies, ``projection`` the loop closures' (``project_closures``). Returns −1 or
    ``free_step``'s FREE_STEP_LIMIT, or the coordinate that went non-finite (the robots are then as at the step's
    start)."""
    pair_contacts, kept, hidden = link_pairs
    if hidden:
        show_link_pairs(pair_contacts, kept)
    x, qb, v, w = poses
    if coupled:
        bad = finish_coupled(buffers, h, poses, projection)
    else:
        bad = free_step(buffers, gravity, h, rk4, x, qb, v, w)
    link_bodies, awake, sleep_timer, force, torque = links
    _wake_links(link_bodies, awake, sleep_timer, force, torque)
    return bad


@njit(cache=True, refcount=False)
def links_step(buffers, gravity, body_link, contacts, bodies, settings, packed_rows, M, kept, closures, finish):
    """A step's robot stages in a world of robots alone (every moving body a link's): ``contact_stage`` (its
    arguments) and then ``finish_step``, in one call; finish = (rk4, link_bodies, awake, sleep_timer). Nothing is
    left to a World solve between them. Returns (the stage's rows or its STAGE_* answer, the contacts touching a
    link, ``finish_step``'s answer); with STAGE_TOO_FEW_ROWS nothing changed (grow the rows, call again)."""
    rows, _, link_contacts = contact_stage(buffers, gravity, body_link, contacts, bodies, settings, packed_rows, M,
                                           kept, closures)
    pairs = contacts[0]
    if rows == STAGE_TOO_FEW_ROWS:
        return rows, link_contacts, FREE_STEP_DONE
    rk4, link_bodies, awake, sleep_timer = finish
    inv_mass, inv_inertia_body, x, qb, v, w, force, torque = bodies
    hidden = pairs.pair_key.shape[0] if rows >= 0 else 0
    links = (link_bodies, awake, sleep_timer, force, torque)
    if closures is None:
        bad = finish_step(buffers, gravity, settings[0], rk4, rows != STAGE_UNCOUPLED, (x, qb, v, w),
                          (pairs.pair_contacts, kept, hidden), links, None)
    else:
        bad = finish_step(buffers, gravity, settings[0], rk4, rows != STAGE_UNCOUPLED, (x, qb, v, w),
                          (pairs.pair_contacts, kept, hidden), links,
                          (closures, packed_rows, M, body_link, inv_mass, inv_inertia_body))
    return rows, link_contacts, bad


@njit(cache=True, refcount=False)
def count_link_contacts(pair_body, pair_contacts, body_link):
    """The contact points of this step's pairs (pair_body (m, 2), pair_contacts (m,)) that touch a link
    (body_link (n,) the link of each World body, −1: a free or fixed body)."""
    m = 0
    for k in range(pair_body.shape[0]):
        a, b = pair_body[k, 0], pair_body[k, 1]
        if body_link[a] >= 0 or body_link[b] >= 0:
            m += pair_contacts[k]
    return m


@njit(cache=True, forceinline=True, refcount=False)
def _block_rows(tree, work, rows, first, source, ab, body_link, bodies, point, normal, angular):
    """Rows first … first + 2 of the contact stage (``Rows``) along the directions ``normal`` (3,) and its
    ``tangent_basis`` t1, t2, between World bodies ``ab`` = (a, b): on the path of row ``source`` (its coordinates
    already in row_dofs[source]); J of a link side through ``link_rows.point_rows`` (of the velocity of ``point``,
    or with ``angular`` of the angular velocity), and of a free body (bodies = (inv_mass, x)) J_b = ±(d, r × d) or, with
    ``angular``, ±(0, d), + on A. Returns (t1x, t1y, t1z, t2x, t2y, t2z)."""
    a, b = ab
    inv_mass, x = bodies
    rows_J, row_dofs, row_ndof, row_side, row_jb = rows.rows_J, rows.row_dofs, rows.row_ndof, rows.row_side, \
        rows.row_jb
    count = row_ndof[source]
    for r in range(first, first + 3):
        row_ndof[r] = count
        for t in range(count):
            d = row_dofs[source, t]
            row_dofs[r, t] = d
            rows_J[r, d] = 0.0
    nx, ny, nz = normal[0], normal[1], normal[2]
    t1x, t1y, t1z, t2x, t2y, t2z = tangent_basis(nx, ny, nz)
    nrm, tg1, tg2 = work.vecs[0], work.vecs[1], work.vecs[2]
    nrm[0], nrm[1], nrm[2] = nx, ny, nz
    tg1[0], tg1[1], tg1[2] = t1x, t1y, t1z
    tg2[0], tg2[1], tg2[2] = t2x, t2y, t2z
    for side in range(2):
        body = a if side == 0 else b
        if body_link[body] >= 0:
            point_rows(tree, work, body_link[body], point, nrm, tg1, tg2, 1.0 if side == 0 else -1.0,
                        rows_J[first], rows_J[first + 1], rows_J[first + 2], angular)
    for r in range(3):
        row = first + r
        dirn = nrm if r == 0 else tg1 if r == 1 else tg2
        for side in range(2):
            body = a if side == 0 else b
            sign = 1.0 if side == 0 else -1.0
            row_side[row, side] = -1
            if body_link[body] < 0 and inv_mass[body] > 0.0:
                row_side[row, side] = body
                jb = row_jb[row, side]
                if angular:
                    for e in range(3):
                        jb[e] = 0.0
                        jb[3 + e] = sign * dirn[e]
                else:
                    rx, ry, rz = point[0] - x[body, 0], point[1] - x[body, 1], point[2] - x[body, 2]
                    jb[0], jb[1], jb[2] = sign * dirn[0], sign * dirn[1], sign * dirn[2]
                    jb[3] = sign * (ry * dirn[2] - rz * dirn[1])
                    jb[4] = sign * (rz * dirn[0] - rx * dirn[2])
                    jb[5] = sign * (rx * dirn[1] - ry * dirn[0])
    return t1x, t1y, t1z, t2x, t2y, t2z


@njit(cache=True, forceinline=True, refcount=False)
def _contact_path(tree, link_a, link_b, stamp, mark, out):
    """The coordinates a contact between links ``link_a`` and ``link_b`` (−1: not a link) moves: every joint
    coordinate from either link to its root, into ``out`` deepest first (descending: a parent's coordinates
    are numbered below its child's), each once (``stamp`` (nv,) marked with ``mark``). Returns their count.
    Z = L⁻ᵀ Jᵀ of the contact's rows is nonzero on these only (Featherstone §6.5)."""
    n = 0
    for side in range(2):
        k = link_a if side == 0 else link_b
        while k >= 0:
            for j in range(tree.nv_link[k] - 1, -1, -1):
                d = tree.v_start[k] + j
                if stamp[d] != mark:
                    stamp[d] = mark
                    out[n] = d
                    n += 1
            k = tree.parent[k]
    if link_a >= 0 and link_b >= 0:   # two paths joined: back in descending order
        for i in range(1, n):
            d = out[i]
            j = i - 1
            while j >= 0 and out[j] < d:
                out[j + 1] = out[j]
                j -= 1
            out[j + 1] = d
    return n


@njit(cache=True, forceinline=True, refcount=False)
def _keep_joint_impulses(st, rows, first, n_rows):
    """The impulses of this stage's limit and dry friction rows (rows first … n_rows − 1; ``row_slot`` 2 d + side
    of a limit on coordinate d, d of a friction row) into the joint state, 0 for a coordinate without one."""
    nv = st.qd.shape[0]
    for d in range(nv):
        st.lower_impulse[d] = 0.0
        st.upper_impulse[d] = 0.0
        st.friction_impulse[d] = 0.0
    for r in range(first, n_rows):
        k = rows.row_slot[r]
        if rows.row_normal[r] < 0:
            st.friction_impulse[k] = rows.lam[r]
        elif k % 2 == 0:
            st.lower_impulse[k // 2] = rows.lam[r]
        else:
            st.upper_impulse[k // 2] = rows.lam[r]


@njit(cache=True, forceinline=True, refcount=False)
def _coordinate_row(dof_parent, d, sign, row, rows_J, row_dofs, row_ndof):
    """Row ``row`` of J = sign on coordinate d alone (a limit or a joint's dry friction); its path is d and the
    coordinates above it."""
    count = 0
    j = d
    while j >= 0:
        row_dofs[row, count] = j
        rows_J[row, j] = 0.0
        count += 1
        j = dof_parent[j]
    row_ndof[row] = count
    rows_J[row, d] = sign


@njit(cache=True, forceinline=True, refcount=False)
def _row_operators(tree, rows, M, n_rows, n_body_rows, bodies):
    """What the sweeps need of rows 0 … n_rows − 1 (their J, path and free-body J_b set; triples below
    ``n_body_rows``, single rows after): Z = L⁻ᵀ Jᵀ and D⁻¹ Z by path position (zc, zd), a free body's M_b⁻¹ J_bᵀ
    (row_mjb), W's diagonal (W, inv_W) and inv_D, with M (nv, nv) LTDL-factored; bodies = (inv_mass,
    inv_inertia_body, q) of the World's bodies."""
    inv_mass, inv_inertia_body, qb = bodies
    (rows_J, rows_Y, W, row_side, row_jb, row_mjb, row_dofs, row_ndof, inv_D, zc, zd) = (
        rows.rows_J, rows.rows_Y, rows.W, rows.row_side, rows.row_jb, rows.row_mjb, rows.row_dofs, rows.row_ndof,
        rows.inv_D, rows.zc, rows.zd)
    nv = inv_D.shape[0]
    # with M (with the implicit damping's h D and the armature) factored, M = Lᵀ D L: each row's Z = L⁻ᵀ Jᵀ (in
    # rows_Y), nonzero only on its path, the ancestors of the coordinates its J touches (Featherstone §6.5), so
    # that J M⁻¹ Jᵀ = Z D⁻¹ Zᵀ costs a path per pair of rows, not nv
    for d in range(nv):
        inv_D[d] = 1.0 / M[d, d]
    r = 0
    while r < n_rows:
        k = 3 if r < n_body_rows else 1   # a block's three rows share their path: one walk for the three
        count = row_ndof[r]
        for rr in range(r, r + k):
            for t in range(count):
                d = row_dofs[r, t]
                rows_Y[rr, d] = rows_J[rr, d]
        for t in range(count):   # deepest first: a coordinate is final before it passes its share up
            i = row_dofs[r, t]
            j = tree.dof_parent[i]
            if k == 3:
                y0, y1, y2 = rows_Y[r, i], rows_Y[r + 1, i], rows_Y[r + 2, i]
                while j >= 0:
                    m_ij = M[i, j]
                    rows_Y[r, j] -= m_ij * y0
                    rows_Y[r + 1, j] -= m_ij * y1
                    rows_Y[r + 2, j] -= m_ij * y2
                    j = tree.dof_parent[j]
            else:
                y0 = rows_Y[r, i]
                while j >= 0:
                    rows_Y[r, j] -= M[i, j] * y0
                    j = tree.dof_parent[j]
        # by path position for the sweeps: Z and D⁻¹ Z
        for rr in range(r, r + k):
            for t in range(count):
                d = row_dofs[r, t]
                zc[rr, t] = rows_Y[rr, d]
                zd[rr, t] = rows_Y[rr, d] * inv_D[d]
        r += k
    # a free body's M_b⁻¹ J_bᵀ of each row: (J_lin / m, I_w⁻¹ J_ang) with I_w⁻¹ = R I_b⁻¹ Rᵀ
    for r in range(n_body_rows):
        for side in range(2):
            body = row_side[r, side]
            if body < 0:
                continue
            jb, mjb = row_jb[r, side], row_mjb[r, side]
            r00, r01, r02, r10, r11, r12, r20, r21, r22 = quat_matrix_t(qb[body, 0], qb[body, 1], qb[body, 2],
                                                                        qb[body, 3])
            # body-frame angular part Rᵀ j, then I_b⁻¹, then back with R
            b0 = r00 * jb[3] + r10 * jb[4] + r20 * jb[5]
            b1 = r01 * jb[3] + r11 * jb[4] + r21 * jb[5]
            b2 = r02 * jb[3] + r12 * jb[4] + r22 * jb[5]
            Ib = inv_inertia_body[body]
            c0 = Ib[0, 0] * b0 + Ib[0, 1] * b1 + Ib[0, 2] * b2
            c1 = Ib[1, 0] * b0 + Ib[1, 1] * b1 + Ib[1, 2] * b2
            c2 = Ib[2, 0] * b0 + Ib[2, 1] * b1 + Ib[2, 2] * b2
            for a in range(3):
                mjb[a] = inv_mass[body] * jb[a]
            mjb[3] = r00 * c0 + r01 * c1 + r02 * c2
            mjb[4] = r10 * c0 + r11 * c1 + r12 * c2
            mjb[5] = r20 * c0 + r21 * c1 + r22 * c2
    # the diagonal of W = J M⁻¹ Jᵀ (+ J_b M_b⁻¹ J_bᵀ of a free body): Σ Z² / D along the row's path
    for r in range(n_rows):
        s = 0.0
        for t in range(row_ndof[r]):
            s += zc[r, t] * zd[r, t]
        if r < n_body_rows:
            for side in range(2):
                if row_side[r, side] >= 0:
                    ja, mj = row_jb[r, side], row_mjb[r, side]
                    for a in range(6):
                        s += ja[a] * mj[a]
        W[r] = s
        rows.inv_W[r] = 1.0 / s if s > 0.0 else 0.0


@njit(cache=True, refcount=False)
def contact_stage(buffers, gravity, body_link, contacts, bodies, settings, packed_rows, M, kept, closures):
    """The velocity stage, then the contacts that touch a link, the loop closures (robots/closures.py) and the joint
    limits about to be passed, solved together at velocity level (module docstring). ``contacts`` = (pairs, slots,
    old): the World's contact pairs (``StagePairs``) and slots, and the last step's ``WarmStart``
    (collision/contacts.py), whose contacts warm-start those found again; ``closures`` is
    JointSet.closure_args'. Writes q̇ (st.qd) and adds the free bodies' share to their loads
    (force, torque), and each contact's impulses to its slot (normal_impulse, friction_impulse). Row scratch
    ``packed_rows`` = (floats, ints, R, B), R rows and B bodies of capacity (``rows_views``): rows_J, rows_Y (R,
    nv), W (R,) the diagonal, row_side (R, 2) int, row_jb (R, 2, 6), target, lam, lo, row_mu (R,), row_normal (R,)
    int (``Rows``); M (nv, nv). ``bodies`` is (inv_mass, inv_inertia_body, x, q, v, w, force, torque) of the World's
    bodies, ``settings`` (h [s], baumgarte, slop [m], restitution_threshold [m/s], the solver's settings
    (robots/contact_solve.py ``link_solve``: ``Forest.stage_solver``), max_push_velocity [m/s] of a limit's push, the
    friction model (sequential_impulse.FRICTION_*), the pyramid's directions, the World's sub-steps: a slot holds
    one sub-step's share of the step's impulse, as the World's solve leaves it and ``detect.gather`` reads it). q and
    q̇ are kept as at the step's start first (``finish_coupled``); at the end the pairs that touch a link leave the
    World's solve (``hide_link_pairs`` into ``kept`` (≥ pairs,)). Returns (rows, the contacts left to the World's
    solve, the contacts touching a link), or, having changed nothing, rows = STAGE_UNCOUPLED when the step needs no
    stage (no contact touches a link, no closure, no joint has dry friction, no limit is in reach: ``finish_step``
    then steps the robots whole) or STAGE_TOO_FEW_ROWS when R < 3 × (those contacts + the link pairs with torsional
    or rolling rows + the closures' triples) + 3 nv or B < the World's bodies (grow, call again; that count of row
    triples is then the third value)."""
    pairs, slots, old = contacts
    inv_mass, inv_inertia_body, x, qb, v, w, force, torque = bodies
    h, baumgarte, slop, restitution_threshold, solver, max_push, friction_model, directions, substeps = settings
    tree, link_body, st, work, sc = _unpack(buffers)
    rf, ri, R_cap, B_cap = packed_rows
    # the loads on the links' bodies, before the World's step clears them (kept in sc.tau_loads until a velocity
    # stage, this one's or ``free_step``'s, takes them)
    gather_link_loads(tree, work, st.q, link_body, force, torque, sc.tau_loads)
    # the stage is needed when a contact touches a link, a closure holds, a joint has dry friction or a limit is in
    # reach
    link_contacts = count_link_contacts(pairs.pair_body, pairs.pair_contacts, body_link)
    closure_blocks = 0
    if closures is not None:   # (a world without closures passes None: this code is not compiled for it)
        closure_blocks = closure_triples(closures)
    coupled = link_contacts > 0 or closure_blocks > 0 or limits_in_reach(tree, st.q, st.qd, h)
    for d in range(tree.friction.shape[0]):
        coupled = coupled or tree.friction[d] > 0.0
    if not coupled:
        return STAGE_UNCOUPLED, -1, 0
    blocks = link_contacts + closure_blocks   # row triples: the contacts', the closures', each link pair's angular
    # rows (below)
    for k in range(pairs.pair_key.shape[0]):
        if pairs.pair_contacts[k] and (pairs.pair_rolling[k] != 0.0 or pairs.pair_torsional[k] != 0.0) and (
                body_link[pairs.pair_body[k, 0]] >= 0 or body_link[pairs.pair_body[k, 1]] >= 0):
            blocks += 1
    if R_cap < 3 * blocks + 3 * st.qd.shape[0] or B_cap < inv_mass.shape[0]:
        return STAGE_TOO_FEW_ROWS, -1, blocks
    rows = rows_views(rf, ri, R_cap, st.qd.shape[0], B_cap)
    (rows_J, rows_Y, W, row_side, row_jb, target, lam, lo, row_normal, row_mu, row_slot, row_mjb, vrow, row_dofs,
     row_ndof, dof_stamp, body_dv, stats, W_off, inv_D, zc, zd, _, _, row_C, _, _) = rows
    _save(st, sc)
    # the velocity stage through M itself, which the rows need factored anyway: q̈ = (M + h D)⁻¹ (τ − C q̇ − g)
    # with M by the CRBA (and the implicit damping's h D and the armature on its diagonal: ``joint_forces``),
    # factored M = Lᵀ D L, and C q̇ + g by the RNEA at q̈ = 0 (Featherstone §6.1: exact as the ABA, and the
    # RNEA and a solve cost less than the ABA)
    qd_free, armature, qdd = sc.qd_free, sc.armature, sc.qdd
    nv = qd_free.shape[0]
    if work.flags[0] == 0.0:
        kinematics(tree, st.q, work)
    joint_forces(tree, st, h, sc.tau_total, armature, sc.tau_loads)
    crba(tree, work, M)
    for d in range(nv):
        M[d, d] += armature[d]
        qdd[d] = 0.0
    ltdl_factor(tree.dof_parent, M)
    rnea(tree, work, st.qd, qdd, gravity, qd_free)   # C q̇ + g, in qd_free until the solve
    for d in range(nv):
        qdd[d] = sc.tau_total[d] - qd_free[d]
        sc.tau_loads[d] = 0.0   # (used)
    ltdl_solve(tree.dof_parent, M, qdd)
    for d in range(nv):
        qd_free[d] = st.qd[d] + h * qdd[d]
    free_joint_world_rate(tree, st.qd, qd_free, h)
    for d in range(nv):
        dof_stamp[d] = -1
    n_rows = 0
    for k in range(pairs.pair_key.shape[0]):
        a, b = pairs.pair_body[k, 0], pairs.pair_body[k, 1]
        if body_link[a] < 0 and body_link[b] < 0:
            continue
        mu = 0.0 if friction_model == FRICTION_NONE else pairs.pair_friction[k]
        e = pairs.pair_restitution[k]
        for j in range(pairs.pair_contacts[k]):
            s = slot(k, j)
            first = n_rows
            n_rows += 3
            # the three rows share one path (the union of theirs): the sweeps take the contact as a block
            row_ndof[first] = _contact_path(tree, body_link[a], body_link[b], dof_stamp, first, row_dofs[first])
            t1x, t1y, t1z, t2x, t2y, t2z = _block_rows(tree, work, rows, first, first, (a, b), body_link,
                                                       (inv_mass, x), slots.point[s], slots.normal[s], False)
            for r in range(3):
                row = first + r
                row_normal[row] = first
                row_mu[row] = mu
                row_slot[row] = s
                if r == 0:
                    lo[row] = 0.0
                else:
                    lo[row] = -np.inf   # friction: within ±μ λ_n, set in the sweeps
                target[row] = 0.0
            # the depth, restitution and a compliant pair's material, until the free velocity and W give the targets
            # (below)
            target[first] = slots.depth[s]
            target[first + 1] = e
            target[first + 2] = pairs.pair_dissipation[k]
            row_C[first] = pairs.pair_compliance[k]
            row_C[first + 1] = row_C[first + 2] = 0.0
            # warm start: the impulses of the same contact (pair key and feature id) in the last step
            lam[first] = lam[first + 1] = lam[first + 2] = 0.0
            old_key, old_count, old_feature = old.pair_key, old.pair_contacts, old.feature
            old_normal, old_friction = old.normal_impulse, old.friction_impulse
            k_old = np.searchsorted(old_key, pairs.pair_key[k])
            if k_old < old_key.shape[0] and old_key[k_old] == pairs.pair_key[k]:
                for j_old in range(old_count[k_old]):
                    so = slot(k_old, j_old)
                    if old_feature[so] == slots.feature[s]:
                        f = old_friction[so]   # (a slot holds one World sub-step's share: below)
                        lam[first] = old_normal[so] * substeps
                        lam[first + 1] = (f[0] * t1x + f[1] * t1y + f[2] * t1z) * substeps
                        lam[first + 2] = (f[0] * t2x + f[1] * t2y + f[2] * t2z) * substeps
                        break
    n_contact_rows = n_rows
    # a pair's torsional and rolling rows (docs/materials.md; Gauss–Seidel only, as the World's: another solver's
    # World refuses the materials): n, t1, t2 of its first contact on the links' angular velocities, after the
    # contacts whose normal impulses bound them
    if sweeps_singly(solver):
        for k in range(pairs.pair_key.shape[0]):
            a, b = pairs.pair_body[k, 0], pairs.pair_body[k, 1]
            c = pairs.pair_contacts[k]
            if c == 0 or (body_link[a] < 0 and body_link[b] < 0) or (
                    pairs.pair_rolling[k] == 0.0 and pairs.pair_torsional[k] == 0.0):
                continue
            s0 = slot(k, 0)
            normal_row = 0
            while row_slot[normal_row] != s0:   # the pair's first contact row (its contacts' rows are consecutive)
                normal_row += 3
            first = n_rows
            n_rows += 3
            nx, ny, nz = slots.normal[s0, 0], slots.normal[s0, 1], slots.normal[s0, 2]
            t1x, t1y, t1z, t2x, t2y, t2z = _block_rows(tree, work, rows, first, normal_row, (a, b), body_link,
                                                       (inv_mass, x), slots.normal[s0], slots.normal[s0], True)
            for r in range(3):
                row = first + r
                lo[row] = -np.inf
                target[row] = 0.0
                row_C[row] = 0.0
                row_slot[row] = k
            row_normal[first], row_normal[first + 1], row_normal[first + 2] = normal_row, c, normal_row
            row_mu[first] = pairs.pair_torsional[k]
            row_mu[first + 1] = row_mu[first + 2] = pairs.pair_rolling[k]
            # warm start: the pair's angular impulse of the last step (world axes, one sub-step's share), on the new
            # directions
            lam[first] = lam[first + 1] = lam[first + 2] = 0.0
            k_old = np.searchsorted(old.pair_key, pairs.pair_key[k])
            if k_old < old.pair_key.shape[0] and old.pair_key[k_old] == pairs.pair_key[k]:
                f = old.pair_angular_impulse[k_old]
                lam[first] = (f[0] * nx + f[1] * ny + f[2] * nz) * substeps
                lam[first + 1] = (f[0] * t1x + f[1] * t1y + f[2] * t1z) * substeps
                lam[first + 2] = (f[0] * t2x + f[1] * t2y + f[2] * t2z) * substeps
    n_pair_rows = n_rows
    # loop closures (robots/closures.py): each joint's equality rows as one block of whole triples
    if closures is not None:
        closure_data, closure_index, _, _ = closures
        for c in range(closure_index.shape[0]):
            j = closure_index[c]
            if not closure_data.flags[j] & BROKEN:
                n_rows += _closure_block(tree, rows, n_rows, j, closures, body_link, (inv_mass, x, qb), work, False)
    n_body_rows = n_rows   # the rows that may touch a free body: contacts', pairs' angular ones and closures'
    # joint limits about to be passed: a unilateral row on the coordinate
    for i in range(tree.parent.shape[0]):
        code = tree.jtype[i]
        if code != REVOLUTE and code != PRISMATIC:
            continue
        d = tree.v_start[i]
        qi = st.q[tree.q_start[i]]
        for side in range(2):
            bound = tree.lower[d] if side == 0 else tree.upper[d]
            if not np.isfinite(bound):
                continue
            sign = 1.0 if side == 0 else -1.0
            gap = sign * (qi - bound)
            # a row for every limit within the margin after the free motion, not only those it would pass: the
            # impulses of the other rows may drive a coordinate into a limit its free motion left alone (the
            # row may then approach the limit by the gap; it pushes only once there)
            if gap + h * sign * qd_free[d] >= LIMIT_MARGIN:
                continue
            if n_rows >= rows_J.shape[0]:
                break
            row = n_rows
            n_rows += 1
            _coordinate_row(tree.dof_parent, d, sign, row, rows_J, row_dofs, row_ndof)
            row_C[row] = 0.0
            row_side[row, 0] = -1
            row_side[row, 1] = -1
            row_normal[row] = row
            row_mu[row] = 0.0
            lo[row] = 0.0
            # approach up to the limit within the step; beyond it, a Baumgarte push of at most max_push [rad/s
            # or m/s] (a robot started outside its limits is brought back, not flung)
            target[row] = limit_target(gap, h, baumgarte, max_push)
            # warm start: this limit's impulse in the last contact stage (a robot resting on a limit needs the same
            # impulse step after step; from zero the sweeps must rebuild it against the contacts coupled to it)
            row_slot[row] = 2 * d + side
            lam[row] = st.lower_impulse[d] if side == 0 else st.upper_impulse[d]
    # joint dry friction (URDF <dynamics friction>, MJCF frictionloss): a row holding the coordinate still with
    # an impulse of at most friction · h either way (Coulomb friction in the joint)
    for i in range(tree.parent.shape[0]):
        code = tree.jtype[i]
        if code != REVOLUTE and code != PRISMATIC:
            continue
        d = tree.v_start[i]
        if tree.friction[d] <= 0.0 or n_rows >= rows_J.shape[0]:
            continue
        row = n_rows
        n_rows += 1
        _coordinate_row(tree.dof_parent, d, 1.0, row, rows_J, row_dofs, row_ndof)
        row_C[row] = 0.0
        row_side[row, 0] = -1
        row_side[row, 1] = -1
        row_normal[row] = -1
        row_mu[row] = tree.friction[d] * h   # the bound on |λ| itself
        lo[row] = -row_mu[row]
        target[row] = 0.0
        row_slot[row] = d
        lam[row] = min(max(st.friction_impulse[d], -row_mu[row]), row_mu[row])
    if n_rows == 0:
        for d in range(nv):
            st.qd[d] = qd_free[d]
        _keep_joint_impulses(st, rows, 0, 0)
        return 0, hide_link_pairs(pairs.pair_body, pairs.pair_contacts, body_link, kept), link_contacts
    _row_operators(tree, rows, M, n_rows, n_body_rows, (inv_mass, inv_inertia_body, qb))
    r = n_pair_rows
    while r < n_body_rows:
        factor_block(rows, r)
        r += 3 if row_normal[r] - CLOSURE_ROWS <= 3 else 6
    for r in range(0, n_pair_rows, 3):
        for k, (ra, rb) in enumerate(((r, r + 1), (r, r + 2), (r + 1, r + 2))):
            s = 0.0
            for t in range(row_ndof[r]):
                s += zc[ra, t] * zd[rb, t]
            for side in range(2):
                if row_side[r, side] >= 0:
                    ja, mj = row_jb[ra, side], row_mjb[rb, side]
                    for a in range(6):
                        s += ja[a] * mj[a]
            W_off[r + k] = s
        tangent_frame(W[r + 1], W_off[r + 2], W[r + 2], rows.tangent_frame[r // 3])
    # free velocity of each row (a free body's as the World's velocity stage will leave it: + h (g + F/m), so
    # that the impulses found here are the ones its step needs), and the normal rows' targets
    for r in range(n_rows):
        s = 0.0
        for t in range(row_ndof[r]):
            d = row_dofs[r, t]
            s += rows_J[r, d] * qd_free[d]
        if r < n_body_rows:
            for side in range(2):
                body = row_side[r, side]
                if body >= 0:
                    jb = row_jb[r, side]
                    for a in range(3):
                        s += jb[a] * h * (gravity[a] + force[body, a] * inv_mass[body])
                    s += jb[0] * v[body, 0] + jb[1] * v[body, 1] + jb[2] * v[body, 2]
                    s += jb[3] * w[body, 0] + jb[4] * w[body, 1] + jb[5] * w[body, 2]
        vrow[r] = s
    for r in range(0, n_contact_rows, 3):
        depth, e, dissipation = target[r], target[r + 1], target[r + 2]
        target[r + 1] = 0.0
        target[r + 2] = 0.0
        if row_C[r] > 0.0 and W[r] > 0.0:
            # a compliant pair (docs/materials.md): the normal row is its Hunt–Crossley spring–damper over the step,
            # v_n + bias + C λ = 0 (``compliant_row``, as the World's compliant rows), C = 1 / D on W's diagonal
            bias, damping = compliant_row(row_C[r], dissipation, -depth, 1.0 / W[r], h)
            target[r] = -bias
            row_C[r] = 1.0 / damping
            rows.inv_W[r] = 1.0 / (W[r] + row_C[r])
            continue
        row_C[r] = 0.0
        closing = -vrow[r]
        bounce = e * closing if closing > restitution_threshold else 0.0
        if depth < 0.0:
            # a speculative contact (within the margin): it may close its gap to within the slop this step, not
            # more (a free body's sub-stepped position stage moves it less than h v, so a gap left to close
            # exactly would stay open at a rest speed); it bounces only if it would close it
            if bounce > 0.0 and closing * h >= -depth:
                target[r] = bounce
            else:
                target[r] = min(0.0, (depth + slop) / h)
        else:
            target[r] = max(bounce, baumgarte * max(depth - slop, 0.0) / h)
    # the rows' impulses by the World's solver (robots/contact_solve.py), from the warm start
    # (sc.qdd is free by now; Gauss–Seidel called directly: through link_solve's @overload the stage took 1 µs more)
    if sweeps_singly(solver):
        done, residual, code = _pgs_rows(rows, n_rows, (n_contact_rows, n_pair_rows, n_body_rows), sc.qdd,
                                         friction_model, directions, solver.iterations, solver.tolerance)
    else:
        done, residual, code = link_solve(solver, rows, n_rows, n_contact_rows, sc.qdd, friction_model, directions)
    stats[0], stats[1], stats[2] = done, residual, code
    _impulse_velocities(tree, rows, n_rows, M, qd_free, st.qd, sc.qd0)
    if closures is not None:   # loop closures: SHAKE (robots/closures.py)
        if n_body_rows > n_pair_rows:
            _shake_closures(tree, work, (st, sc, link_body), rows, (n_rows, n_pair_rows, n_body_rows), closures,
                            (inv_mass, x, qb, v, w, force, gravity), h, M)
    _keep_joint_impulses(st, rows, n_body_rows, n_rows)
    # a free body gets its impulses as the loads λ J / h of this step, which the World's velocity stage applies
    # with gravity in each of its sub-steps: its velocity at the end is the one solved for here, and its
    # position moves as the World's sub-stepped scheme moves a body under a steady load (an impulse added to v
    # before that scheme would move it further than the rows assumed, and a body resting on a link would keep
    # a rest speed)
    for r in range(n_body_rows):
        for side in range(2):
            body = row_side[r, side]
            if body < 0:
                continue
            jb = row_jb[r, side]
            for a in range(3):
                force[body, a] += jb[a] * lam[r] / h
                torque[body, a] += jb[3 + a] * lam[r] / h
    # the impulses, for world.contacts(): λ_n, and the friction impulse on A in the world frame
    for r in range(0, n_contact_rows, 3):
        s = row_slot[r]
        slots.normal_impulse[s] = lam[r] / substeps
        t1x, t1y, t1z, t2x, t2y, t2z = tangent_basis(slots.normal[s, 0], slots.normal[s, 1], slots.normal[s, 2])
        slots.friction_impulse[s, 0] = (lam[r + 1] * t1x + lam[r + 2] * t2x) / substeps
        slots.friction_impulse[s, 1] = (lam[r + 1] * t1y + lam[r + 2] * t2y) / substeps
        slots.friction_impulse[s, 2] = (lam[r + 1] * t1z + lam[r + 2] * t2z) / substeps
    if closures is not None:
        r = n_pair_rows
        while r < n_body_rows:
            r += closure_readout(rows, r, closures, qb)
    for r in range(n_contact_rows, n_pair_rows, 3):   # a pair's angular impulse in world axes, as the World's
        k = row_slot[r]
        s0 = slot(k, 0)
        t1x, t1y, t1z, t2x, t2y, t2z = tangent_basis(slots.normal[s0, 0], slots.normal[s0, 1], slots.normal[s0, 2])
        for e, (n_e, t1_e, t2_e) in enumerate(((slots.normal[s0, 0], t1x, t2x), (slots.normal[s0, 1], t1y, t2y),
                                               (slots.normal[s0, 2], t1z, t2z))):
            pairs.pair_angular_impulse[k, e] = (lam[r] * n_e + lam[r + 1] * t1_e + lam[r + 2] * t2_e) / substeps
    return n_rows, hide_link_pairs(pairs.pair_body, pairs.pair_contacts, body_link, kept), link_contacts


@njit(cache=True, refcount=False)
def hide_link_pairs(pair_body, pair_contacts, body_link, kept):
    """Move the contact counts of the pairs that touch a link into ``kept`` (≥ m,) and zero them, so that the
    World's own solve leaves those contacts to the contact stage; ``show_link_pairs`` puts them back. Returns
    the contacts left to the World's solve."""
    left = 0
    for k in range(pair_body.shape[0]):
        a, b = pair_body[k, 0], pair_body[k, 1]
        kept[k] = -1
        if body_link[a] >= 0 or body_link[b] >= 0:
            kept[k] = pair_contacts[k]
            pair_contacts[k] = 0
        else:
            left += pair_contacts[k]
    return left


@njit(cache=True, refcount=False)
def show_link_pairs(pair_contacts, kept):
    """Undo ``hide_link_pairs``: the link contacts count again (``world.contacts()`` lists them)."""
    for k in range(pair_contacts.shape[0]):
        if kept[k] >= 0:
            pair_contacts[k] = kept[k]


StagePairs = namedtuple("StagePairs", ["pair_key", "pair_body", "pair_friction", "pair_restitution",
                                       "pair_contacts", "pair_compliance", "pair_dissipation", "pair_rolling",
                                       "pair_torsional", "pair_angular_impulse"])
"""The contact pair fields the contact stage reads (``fields.ContactPairs``): passing these alone saves the
unboxing of the others at each call (``ArrayGroup.subview``)."""

Rows = namedtuple("Rows", ["rows_J", "rows_Y", "W", "row_side", "row_jb", "target", "lam", "lo", "row_normal",
                           "row_mu", "row_slot", "row_mjb", "vrow", "row_dofs", "row_ndof", "dof_stamp", "body_dv",
                           "stats", "W_off", "inv_D", "zc", "zd", "inv_W", "tangent_frame", "row_C", "row_factor",
                           "closure_work"])
"""The contact stage's row scratch (``contact_stage``); W_off (R,) holds each contact's off-diagonal entries of
W = J M⁻¹ Jᵀ: W₀₁, W₀₂, W₁₂ of the triple starting at row r in W_off[r], W_off[r + 1], W_off[r + 2]; inv_D (nv,)
the reciprocals of the LTDL factor's diagonal (the sweeps multiply: a division costs several multiplications);
row r's path (the coordinates its Z can touch, deepest first) is row_dofs[r, :row_ndof[r]], and rows_J, rows_Y
(dense, by coordinate) are written on it only; zc, zd (R, nv) hold Z and D⁻¹ Z by path position, so that a
sweep reads them in order; tangent_frame (R, FRAME_SIZE) holds contact c's (first row 3c) ``tangent_frame`` in
row c; row_C (R,) [1/kg] the compliance of a compliant contact's normal row (``compliant_row``; 0: rigid), on
W's diagonal. Rows come in this order: contacts' triples (row_normal: the triple's first row, row_slot: the
contact's slot), pairs' angular triples (torsion n, rolling t1, t2: row_normal[r] the pair's first contact row and
row_normal[r + 1] its contacts, row_slot the pair, row_mu μ_s, μ_r, μ_r), loop closures' blocks of whole triples
(robots/closures.py: row_normal CLOSURE_ROWS + the joint's k rows, row_slot the joint; row_factor (R, 6) row i's
entries of its block's LDLᵀ factor, closure_work (6,) a block's scratch), joint limits (row_normal: the row,
row_slot 2 d + side), joints' dry friction (row_normal −1, row_slot d, row_mu the bound)."""


def rows_size(R: int, nv: int, B: int) -> tuple[int, int]:
    """(floats, ints) in the packed buffers of a ``Rows`` of R rows, nv coordinates and B World bodies."""
    return 4 * R * nv + 15 * R + (24 + FRAME_SIZE) * R + 6 * B + 9 + nv, R * nv + 5 * R + nv


@njit(cache=True, inline="always")   # returns views (tree.tree_views)
def rows_views(rf, ri, R, nv, B):
    """The ``Rows`` as views into its float and int buffers (``rows_size``): the contact stage takes two arrays
    for the 27 (a call unboxes each array it is given, ~5 ns each for a kernel without reference counting)."""
    o = 0
    rows_J = view(rf, o, (R, nv))
    o += R * nv
    rows_Y = view(rf, o, (R, nv))
    o += R * nv
    zc = view(rf, o, (R, nv))
    o += R * nv
    zd = view(rf, o, (R, nv))
    o += R * nv
    row_jb = view(rf, o, (R, 2, 6))
    o += 12 * R
    row_mjb = view(rf, o, (R, 2, 6))
    o += 12 * R
    tangent_frame = view(rf, o, (R, FRAME_SIZE))
    o += FRAME_SIZE * R
    W, target, lam, lo = view(rf, o, R), view(rf, o + R, R), view(rf, o + 2 * R, R), view(rf, o + 3 * R, R)
    o += 4 * R
    row_mu, vrow, W_off, inv_W = view(rf, o, R), view(rf, o + R, R), view(rf, o + 2 * R, R), view(rf, o + 3 * R, R)
    o += 4 * R
    row_C = view(rf, o, R)
    o += R
    row_factor = view(rf, o, (R, 6))
    o += 6 * R
    closure_work = view(rf, o, 6)
    o += 6
    body_dv = view(rf, o, (B, 6))
    o += 6 * B
    stats = view(rf, o, 3)
    inv_D = view(rf, o + 3, nv)
    row_dofs = view(ri, 0, (R, nv))
    o = R * nv
    row_side = view(ri, o, (R, 2))
    row_normal, row_slot, row_ndof = view(ri, o + 2 * R, R), view(ri, o + 3 * R, R), view(ri, o + 4 * R, R)
    dof_stamp = view(ri, o + 5 * R, nv)
    return Rows(rows_J, rows_Y, W, row_side, row_jb, target, lam, lo, row_normal, row_mu, row_slot, row_mjb, vrow,
                row_dofs, row_ndof, dof_stamp, body_dv, stats, W_off, inv_D, zc, zd, inv_W, tangent_frame, row_C,
                row_factor, closure_work)


def _row_capacity(forest, rows: int, bodies: int) -> tuple:
    """The contact stage's row scratch, packed (rows_f, rows_i, R, B) (``rows_views``), grown by doubling to hold
    ``rows`` rows and ``bodies`` World bodies (allocates only on growth); ``forest.rows`` its ``Rows``."""
    have = forest.packed_rows
    if have is None or have[2] < rows or have[3] < bodies:
        R = max(rows, 2 * (0 if have is None else have[2]), 16)
        B = max(bodies, 1)
        nv = forest.nv
        floats, ints = rows_size(R, nv, B)
        rf, ri = np.zeros(floats), np.zeros(ints, dtype=np.int64)
        forest.packed_rows = (rf, ri, R, B)
        forest.rows = rows_views(rf, ri, R, nv, B)
        forest.stage_args.clear()
    return forest.packed_rows


_CONTACT_STAGE = {solver: (CallSite(contact_stage, fixed=True), CallSite(contact_stage, fixed=True))
                  for solver in (PGS, APGD, CG, Lemke)}
"""``contact_stage`` called without the dispatcher's typing of its ~60 arrays in namedtuples (~100 ns each;
jit.CallSite): per solver class two sites, indexed by whether the world has no loop closures (``closures`` None:
another compilation, without their code). The contact list, the bodies and the row scratch keep their types from
step to step, and the solver's settings, inside the plain settings tuple, keep theirs within a site."""
_FINISH_STEP = CallSite(finish_step, fixed=True)
_LINKS_STEP = {solver: (CallSite(links_step, fixed=True), CallSite(links_step, fixed=True))
               for solver in (PGS, APGD, CG, Lemke)}
_FINISH_CLOSURES = CallSite(finish_step, fixed=True)


def _stage_arguments(model, state, contacts, dt: float) -> tuple:
    """``contact_stage``'s arguments for this step, the row scratch ``packed_rows`` at least as large as when the
    stage last asked for more (``STAGE_TOO_FEW_ROWS``: ``_grow_rows``). The tuple is kept for each of the two
    contact buffers a step may detect into (``Forest.stage_args``, by the buffer's id) while what it views is the
    same: both buffers and their rows (a buffer's ``generation`` counts its resizes), the bodies' rows, gravity, dt,
    the loop closures' tuple; the forest drops them when its row scratch, its sweeps or its robots change.
    Building it costs ~0.8 µs, a check ~0.3 µs."""
    forest = model.robots
    now, last = contacts.now, contacts.last
    closures = model.joints.closure_args(model.body.view().inv_mass)
    key = (now, last, now.pairs.generation, now.slots.generation, last.pairs.generation, last.slots.generation,
           state.body.generation, model.body.generation, id(model.gravity), dt, id(closures))
    held = forest.stage_args.get(id(now))
    if held is not None and held[0] == key:
        return held[1]
    n = model.body.count
    if forest.kept_pairs.shape[0] < now.pair_count:
        forest.kept_pairs = np.zeros(2 * now.pair_count, dtype=np.int64)
    packed = forest.packed_rows
    if packed is None or packed[3] < n:
        packed = _row_capacity(forest, 3 * forest.nv, n)
    settings = model.settings
    b, bm = state.bodies(), model.bodies()
    bodies = (bm.inv_mass, bm.inv_inertia_body, b.x, b.q, b.v, b.w, b.force, b.torque)
    stage_settings = forest.stage_settings   # (kept while dt and the forest's sweeps and tolerance are the same)
    if stage_settings is None or stage_settings[0] != dt:
        stage_settings = forest.stage_settings = (
            dt, settings.baumgarte, settings.slop, settings.restitution_threshold, forest.stage_solver(settings),
            settings.max_push_velocity, FRICTION_MODELS[settings.friction], settings.friction_directions,
            settings.substeps)
    args = (forest.buffers, model.gravity, forest.body_link(n),
            (now.pairs.subview(StagePairs), now.slots.view(), last.warm_start()), bodies, stage_settings,
            packed, forest.M, forest.kept_pairs, closures)
    if len(forest.stage_args) > 1:   # (the buffers were replaced: keep this step's alone)
        forest.stage_args.clear()
    forest.stage_args[id(now)] = (key, args)
    return args


def _grow_rows(model, args: tuple, blocks: int) -> tuple:
    """``args`` of ``_stage_arguments`` with a row scratch for ``blocks`` row triples (contacts, pairs' angular
    rows, closures) and every limit."""
    forest = model.robots
    packed = _row_capacity(forest, 3 * blocks + 3 * forest.nv, model.body.count)
    return args[:6] + (packed,) + args[7:]


def before_contacts(model, state, contacts, dt: float) -> bool:
    """The robots' velocity and contact stages (module docstring), before the World's own contact step, when a
    link touches something, a loop closure holds, a joint has dry friction or a limit is in reach
    (``contact_stage`` tells): q̇ gets the joint forces, gravity and every link contact's, closure's and limit's
    impulse; the free bodies touching a link get their share, and those contacts are taken out of the World's
    solve. Otherwise the robots' whole step waits for ``after_contacts`` (one kernel call). Returns whether the
    World's solve has contacts left (False when every contact touched a link)."""
    forest = model.robots
    args = _stage_arguments(model, state, contacts, dt)
    site = _CONTACT_STAGE[type(args[5][4])][args[9] is None]   # (the solver: its settings' fifth entry)
    rows, left, link_contacts = site(*args)
    if rows == STAGE_TOO_FEW_ROWS:
        rows, left, link_contacts = site(*_grow_rows(model, args, link_contacts))
    forest.coupled = rows != STAGE_UNCOUPLED
    forest.last_rows = max(rows, 0)
    forest.hidden = contacts.now.pair_count if link_contacts else 0
    return not link_contacts or left != 0   # (no link contact taken: the World's solve keeps all its pairs)


def step_alone(model, state, contacts, dt: float) -> int:
    """The robots' whole step in a world of robots alone (every moving body a link's, so no World joints but loop
    closures, no springs: ``TimeStepping.links_only``): ``before_contacts`` and ``after_contacts`` without a World
    solve between them, in one kernel call (``links_step``). Returns as ``after_contacts``."""
    forest = model.robots
    forest.moves += 1      # the joint state moved (Robot keeps its links' kinematics until it does)
    args = _stage_arguments(model, state, contacts, dt)
    b = state.bodies()
    finish = (forest.integrator == "rk4", forest.link_bodies, b.awake, b.sleep_timer)
    site = _LINKS_STEP[type(args[5][4])][args[9] is None]
    rows, link_contacts, bad = site(*args, finish)
    if rows == STAGE_TOO_FEW_ROWS:
        rows, link_contacts, bad = site(*_grow_rows(model, args, link_contacts), finish)
    forest.coupled = rows != STAGE_UNCOUPLED
    forest.last_rows = max(rows, 0)
    forest.hidden = 0
    return max(bad, -1)


def after_contacts(model, state, contacts, dt: float) -> int:
    """The robots' position stage and their links' bodies, after the World's own contact step (which moved
    the link bodies as free bodies: they are put back where the joints hold them); a robot step that
    ``before_contacts`` left alone is done here whole (``free_step``). One kernel call (``finish_step``).
    Returns −1, or the coordinate of the forest that went non-finite (the robots are then as at the step's
    start; ``non_finite_error``)."""
    forest = model.robots
    forest.moves += 1      # the joint state moved (Robot keeps its links' kinematics until it does)
    b = state.bodies()
    bm = model.bodies()
    closures = model.joints.closure_args(bm.inv_mass)
    projection = None if closures is None else (closures, forest.packed_rows, forest.M,
                                                forest.body_link(model.body.count), bm.inv_mass, bm.inv_inertia_body)
    site = _FINISH_STEP if closures is None else _FINISH_CLOSURES
    bad = site(forest.buffers, model.gravity, dt, forest.integrator == "rk4", forest.coupled, (b.x, b.q, b.v, b.w),
               (contacts.now.pairs.subview(StagePairs).pair_contacts, forest.kept_pairs, forest.hidden),
               (forest.link_bodies, b.awake, b.sleep_timer, b.force, b.torque), projection)
    forest.hidden = 0
    return max(bad, -1)


ROBOT_STAGES_COMPILE_SECONDS = (46.0, 40.0, 15.0)
"""[s] Cold compile time of the robots' stages alone on the 2-core development machine: ``links_step`` (a world of
robots alone; the humanoid drop, 46 s), ``contact_stage`` with ``finish_step`` (estimated), and ``finish_step``
alone (the free step of robots in the one solve; estimated)."""


def compile_share(model, state, contacts, links_only: bool, one_solve: bool) -> Share:
    """The robots' stages as a share of the first step's parallel compile (precompile.py), run once on the forked
    world (their kernels compile whole, whatever the state): in a world whose robots step in the one solve
    (``one_solve``: methods/timestepping.py, which has its own share for that contact step) their free step
    (``after_contacts`` uncoupled); else ``step_alone`` in a world of robots alone (``links_only``), or
    ``before_contacts`` and ``after_contacts``."""
    def run() -> None:
        dt = 1.0 / 240.0
        if one_solve:
            model.robots.coupled = False
            b = state.bodies()
            gather_loads(model.robots.buffers, b.force, b.torque)
            after_contacts(model, state, contacts, dt)
        elif links_only:
            step_alone(model, state, contacts, dt)
        else:
            before_contacts(model, state, contacts, dt)
            after_contacts(model, state, contacts, dt)

    if one_solve:
        return Share("robot stages", ROBOT_STAGES_COMPILE_SECONDS[2], run, (gather_loads, finish_step))
    kernels = (links_step,) if links_only else (contact_stage, finish_step)
    return Share("robot stages", ROBOT_STAGES_COMPILE_SECONDS[0 if links_only else 1], run, kernels)


def undo_robots(model) -> None:
    """After ``before_contacts``, when the World's own step went non-finite (methods/timestepping.py ``undo``): the
    robots as at the step's start. A ``contact_stage`` that ran (``Forest.coupled``) saved their q, q̇ and warm
    starts (``_save``) before changing them: they are put back; an uncoupled stage changed nothing but the loads it
    gathered, which the failed step drops as it drops the bodies' (integration/guard.py)."""
    forest = model.robots
    sc, st = forest.scratch, forest.state
    if sc is None:
        return
    sc.tau_loads[:] = 0.0
    if forest.coupled:
        st.q[:] = sc.q_saved
        st.qd[:] = sc.qd_saved
        st.lower_impulse[:] = sc.impulses_saved[0]
        st.upper_impulse[:] = sc.impulses_saved[1]
        st.friction_impulse[:] = sc.impulses_saved[2]
        forest.work.flags[0] = 0.0
        forest.coupled = False
    forest.hidden = 0
    forest.moves += 1   # (Robot handles read their links' kinematics afresh)


def non_finite_error(forest, bad: int, time: float, dt: float) -> NonFiniteStep:
    """The error of a robot step whose coordinate ``bad`` (``_non_finite``) went non-finite; the robots are
    already as before the step."""
    nv = forest.nv
    tree = forest.tree
    if bad < nv:
        link, field = int(tree.dof_link[bad]), "joint velocity"
    else:
        k = bad - nv
        link = int(np.flatnonzero(tree.q_start <= k)[-1])
        field = "joint position"
    for robot, (first, _, _) in zip(forest.robots, forest.offsets, strict=True):
        if first <= link < first + len(robot.link_names):
            joint = robot.joint_of(link - first)
            return NonFiniteStep(-1, f"{robot.name}/{joint}", field, "robot step", time, dt)
    return NonFiniteStep(-1, None, field, "robot step", time, dt)
