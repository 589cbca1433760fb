"""Joint rows: the velocity-level Jacobian rows and position errors of every joint at the current pose.

A joint holds a frame on each body (an anchor point and axes, stored in the body's axes; the world's
when the body is -1). Every row r of joint j is one scalar constraint C_r(x) = 0 (or >= 0) whose time
derivative is linear in the two bodies' velocities:

    Ċ_r = lin_r · (v_a − v_b) + ang_a_r · ω_a + ang_b_r · ω_b,

so the row's impulse λ changes the velocities by Δv_a = m_a⁻¹ lin λ, Δω_a = I_a⁻¹ ang_a λ, Δv_b =
−m_b⁻¹ lin λ, Δω_b = I_b⁻¹ ang_b λ (M⁻¹ Jᵀ λ, Baraff II (8-12); ArtiSynth notes 0.10 for the bilateral
rows G). With p_a, p_b the anchors in the world, r_a = p_a − x_a, r_b = p_b − x_b, and the joint axes
u (the hinge or slider axis, frame a's x axis), n₁, n₂ (frame a's y and z axes):

- point rows (ball, hinge, fixed): C = (p_a − p_b)·e_i, lin = e_i, ang_a = r_a × e_i, ang_b = −r_b × e_i;
- hinge axis rows: C = n_i · u_b (u_b frame b's x axis), ang_a = n_i × u_b, ang_b = −ang_a;
- rotation-lock rows (slider, fixed): C = θ·e_i with θ the rotation vector of R_a R_bᵀ (frames in the
  world), ang_a = e_i, ang_b = −e_i (Ċ = ω_a − ω_b where the frames agree);
- slider rows: with d = p_b − p_a, C = n_i·d, lin = −n_i, ang_a = −(r_a + d) × n_i, ang_b = r_b × n_i;
- the limit row (hinge angle, slider position s, both a's motion relative to b): the nearer bound's
  C = s − lo or hi − s, >= 0, on the coordinate's row (hinge: s the turn of frame a about u from frame b,
  ṡ = u·(ω_a − ω_b); slider: s = u·(p_a − p_b) with the slider row's form negated), negated for hi;
- the motor row: ṡ = target speed, with the coordinate's row;
- a ball joint's roll-pitch-yaw limit rows (notes 0.4): ``_rpy_limit_rows``.

Row slots per joint: 0–5 the equality rows (``EQUALITY_ROWS[kind]`` of them), 6 the limit, 7 the motor; a ball
joint's three limit rows take slots 3–5.

The rows' rates along the motion, J̇ u (``joint_rate_products``, ``rpy_rate_products``, ``joint_rates``), are here
too: the acceleration-level joints (the ODE integrators', solvers/joint_accel.py; the event method's,
constraints/joint_dense.py) need them. A new joint kind is its rows here (and their rates), its handle class
(joints.py) and its scene-file key (user/scene_joints.py); the solvers take any rows.
"""

from __future__ import annotations

import numpy as np

from ..conventions import JOINT_BALL, JOINT_FIXED, JOINT_HINGE, JOINT_SLIDER, RPY_SINGULAR_COS
from ..jit import njit
from ..math3d import qmul_t, qrot_inv_t, qrot_t, quat_matrix_t

BALL, HINGE, SLIDER, FIXED = JOINT_BALL, JOINT_HINGE, JOINT_SLIDER, JOINT_FIXED
"""Joint kinds (``joint_kind``), the codes of conventions.py's joint types."""
JOINT_NAMES = ("ball", "hinge", "slider", "fixed")
EQUALITY_ROWS = np.array([3, 5, 5, 6], dtype=np.int64)
"""Equality rows of each kind: a ball joint keeps a point (3), a hinge also the axis (2), a slider the
orientation (3) and the line (2), a fixed joint the point and the orientation (6)."""
ROW_SLOTS = 8
LIMIT_ROW, MOTOR_ROW = 6, 7
RPY_ROWS = 3
"""A ball joint's roll, pitch and yaw limit rows are slots 3, 4, 5 (its equality rows are 0–2)."""
LIMIT_SLOTS = 6
"""Columns of ``joint_limit``: (lo, hi) of the hinge angle or slider position, or three (lo, hi) pairs of a
ball joint's roll, pitch and yaw; an unlimited angle has (−NO_LIMIT, NO_LIMIT)."""
NO_LIMIT = 1e30


@njit(cache=True, forceinline=True, refcount=False)
def limit_rows(kind):
    """(first, end) of the limit row slots of a joint kind: 3–5 for a ball joint's roll-pitch-yaw limits,
    6 for a hinge's or slider's coordinate."""
    if kind == BALL:
        return RPY_ROWS, RPY_ROWS + 3
    return LIMIT_ROW, LIMIT_ROW + 1

HAS_LIMIT, HAS_MOTOR, BROKEN, LINKED = 1, 2, 4, 8
"""Bits of ``joint_flags``. LINKED: a loop closure, a joint with a robot link's body on a side, solved in the robots'
contact stage (robots/closures.py), not by the World's joint solve."""
IDLE = BROKEN | LINKED
"""The joints the World's joint solve leaves alone (their rows identity rows, their impulses zero)."""


@njit(cache=True, forceinline=True, refcount=False)
def _frame(i, local, x, q):
    """(anchor (3), orientation (4)) of a joint frame in the world: ``local`` (7,) = anchor and quaternion in
    body i's axes, or in the world's when i < 0."""
    if i < 0:
        return (local[0], local[1], local[2]), (local[3], local[4], local[5], local[6])
    qw, qx, qy, qz = q[i, 0], q[i, 1], q[i, 2], q[i, 3]
    px, py, pz = qrot_t(qw, qx, qy, qz, local[0], local[1], local[2])
    fw, fx, fy, fz = qmul_t(qw, qx, qy, qz, local[3], local[4], local[5], local[6])
    return (px + x[i, 0], py + x[i, 1], pz + x[i, 2]), (fw, fx, fy, fz)


@njit(cache=True, forceinline=True, refcount=False)
def _axis(f, k):
    """Axis k (0 x, 1 y, 2 z) of the frame with orientation f, in the world."""
    e0 = 1.0 if k == 0 else 0.0
    e1 = 1.0 if k == 1 else 0.0
    e2 = 1.0 if k == 2 else 0.0
    return qrot_t(f[0], f[1], f[2], f[3], e0, e1, e2)


@njit(cache=True, forceinline=True, refcount=False)
def _cross(a0, a1, a2, b0, b1, b2):
    return a1 * b2 - a2 * b1, a2 * b0 - a0 * b2, a0 * b1 - a1 * b0


@njit(cache=True, forceinline=True, refcount=False)
def _set(out, j, r, lin_r, ang_a_r, ang_b_r):
    """Row r of joint j: lin, ang_a, ang_b (3-tuples) into ``out``'s first three arrays (m, 8, 3)."""
    lin, ang_a, ang_b = out[0], out[1], out[2]
    lin[j, r, 0], lin[j, r, 1], lin[j, r, 2] = lin_r
    ang_a[j, r, 0], ang_a[j, r, 1], ang_a[j, r, 2] = ang_a_r
    ang_b[j, r, 0], ang_b[j, r, 1], ang_b[j, r, 2] = ang_b_r


@njit(cache=True, forceinline=True, refcount=False)
def _relative_rotation(fa, fb):
    """Rotation vector θ (world) of R_a R_bᵀ: the small rotation that takes frame b onto frame a."""
    rw, rx, ry, rz = qmul_t(fa[0], fa[1], fa[2], fa[3], fb[0], -fb[1], -fb[2], -fb[3])
    if rw < 0.0:
        rw, rx, ry, rz = -rw, -rx, -ry, -rz
    s = np.sqrt(rx * rx + ry * ry + rz * rz)
    if s < 1e-12:
        return 2.0 * rx, 2.0 * ry, 2.0 * rz
    angle = 2.0 * np.arctan2(s, rw)
    return angle * rx / s, angle * ry / s, angle * rz / s


@njit(cache=True, forceinline=True, refcount=False)
def _twist_angle(fa, fb):
    """Angle [rad] in (−π, π] of frame b about frame a's x axis (the hinge angle): twist of q_a⁻¹ q_b."""
    rw, rx, _, _ = qmul_t(fa[0], -fa[1], -fa[2], -fa[3], fb[0], fb[1], fb[2], fb[3])
    angle = 2.0 * np.arctan2(rx, rw)
    if angle > np.pi:
        angle -= 2.0 * np.pi
    elif angle <= -np.pi:
        angle += 2.0 * np.pi
    return angle


@njit(cache=True, refcount=False)
def joint_rows(joints, x, q, out):
    """Fill every joint's rows at the current pose (module docstring).

    ``joints``: the joints (model.fields.JointData: kind (m,), body (m, 2) (−1 the world), frame_a / frame_b
    (m, 7) local anchor [m] and quaternion, limit (m, 6) [rad or m], flags (m,)); x (n, 3), q (n, 4). ``out``
    = (lin, ang_a, ang_b (m, 8, 3), error (m, 8), coordinate (m,)), e.g. a JointRows: error is the rows' C
    [m or rad] (the limit row: its distance to the nearer bound, >= 0 when within), coordinate the hinge
    angle [rad] or slider position [m] of a relative to b (0 for ball and fixed joints).
    """
    for j in range(joints.kind.shape[0]):
        joint_rows_one(j, joints, x, q, out)


@njit(cache=True, refcount=False)
def joint_rows_one(j, joints, x, q, out):
    """``joint_rows`` for joint j alone."""
    body, frame_a, frame_b, limit, flags = joints.body, joints.frame_a, joints.frame_b, joints.limit, joints.flags
    error, coordinate = out[3], out[4]
    a, b = body[j, 0], body[j, 1]
    pa, fa = _frame(a, frame_a[j], x, q)
    pb, fb = _frame(b, frame_b[j], x, q)
    ra0, ra1, ra2 = (pa[0] - x[a, 0], pa[1] - x[a, 1], pa[2] - x[a, 2]) if a >= 0 else (0.0, 0.0, 0.0)
    rb0, rb1, rb2 = (pb[0] - x[b, 0], pb[1] - x[b, 1], pb[2] - x[b, 2]) if b >= 0 else (0.0, 0.0, 0.0)
    d0, d1, d2 = pb[0] - pa[0], pb[1] - pa[1], pb[2] - pa[2]
    k = joints.kind[j]
    r = 0
    if k != SLIDER:     # the point rows
        for i in range(3):
            e0 = 1.0 if i == 0 else 0.0
            e1 = 1.0 if i == 1 else 0.0
            e2 = 1.0 if i == 2 else 0.0
            c0, c1, c2 = _cross(ra0, ra1, ra2, e0, e1, e2)
            g0, g1, g2 = _cross(rb0, rb1, rb2, e0, e1, e2)
            _set(out, j, r, (e0, e1, e2), (c0, c1, c2), (-g0, -g1, -g2))
            error[j, r] = -(d0 * e0 + d1 * e1 + d2 * e2)
            r += 1
    u = _axis(fa, 0)
    if k == HINGE:
        ub = _axis(fb, 0)
        for i in (1, 2):
            n = _axis(fa, i)
            c0, c1, c2 = _cross(n[0], n[1], n[2], ub[0], ub[1], ub[2])
            _set(out, j, r, (0.0, 0.0, 0.0), (c0, c1, c2), (-c0, -c1, -c2))
            error[j, r] = n[0] * ub[0] + n[1] * ub[1] + n[2] * ub[2]
            r += 1
    elif k == SLIDER or k == FIXED:
        t0, t1, t2 = _relative_rotation(fa, fb)
        for i in range(3):
            e0 = 1.0 if i == 0 else 0.0
            e1 = 1.0 if i == 1 else 0.0
            e2 = 1.0 if i == 2 else 0.0
            _set(out, j, r, (0.0, 0.0, 0.0), (e0, e1, e2), (-e0, -e1, -e2))
            error[j, r] = t0 * e0 + t1 * e1 + t2 * e2
            r += 1
    if k == SLIDER:
        for i in (1, 2):
            n = _axis(fa, i)
            c0, c1, c2 = _cross(ra0 + d0, ra1 + d1, ra2 + d2, n[0], n[1], n[2])
            g0, g1, g2 = _cross(rb0, rb1, rb2, n[0], n[1], n[2])
            _set(out, j, r, (-n[0], -n[1], -n[2]), (-c0, -c1, -c2), (g0, g1, g2))
            error[j, r] = n[0] * d0 + n[1] * d1 + n[2] * d2
            r += 1
    # the coordinate's row (limit and motor)
    if k == HINGE:
        s = _twist_angle(fa, fb)
        l0, l1, l2 = 0.0, 0.0, 0.0
        a0, a1, a2 = -u[0], -u[1], -u[2]
        b0, b1, b2 = u[0], u[1], u[2]
    elif k == SLIDER:
        s = u[0] * d0 + u[1] * d1 + u[2] * d2
        c0, c1, c2 = _cross(ra0 + d0, ra1 + d1, ra2 + d2, u[0], u[1], u[2])
        g0, g1, g2 = _cross(rb0, rb1, rb2, u[0], u[1], u[2])
        l0, l1, l2 = -u[0], -u[1], -u[2]
        a0, a1, a2 = -c0, -c1, -c2
        b0, b1, b2 = g0, g1, g2
    else:
        s = 0.0
        l0 = l1 = l2 = a0 = a1 = a2 = b0 = b1 = b2 = 0.0
    # the coordinate is a's motion relative to b (with b the world: the body's own angle or travel)
    s = -s
    l0, l1, l2, a0, a1, a2, b0, b1, b2 = -l0, -l1, -l2, -a0, -a1, -a2, -b0, -b1, -b2
    coordinate[j] = s
    _set(out, j, MOTOR_ROW, (l0, l1, l2), (a0, a1, a2), (b0, b1, b2))
    if flags[j] & HAS_LIMIT and k == BALL:
        _rpy_limit_rows(j, fa, fb, limit, out)
    elif flags[j] & HAS_LIMIT:
        lo, hi = limit[j, 0], limit[j, 1]
        if s - lo <= hi - s:
            _set(out, j, LIMIT_ROW, (l0, l1, l2), (a0, a1, a2), (b0, b1, b2))
            error[j, LIMIT_ROW] = s - lo
        else:
            _set(out, j, LIMIT_ROW, (-l0, -l1, -l2), (-a0, -a1, -a2), (-b0, -b1, -b2))
            error[j, LIMIT_ROW] = hi - s


@njit(cache=True, refcount=False)
def _rpy_limit_rows(j, fa, fb, limit, out):
    """A ball joint's roll-pitch-yaw limit rows (ArtiSynth notes 0.4) in slots 3–5: with R = R_bᵀ R_a = Rz(φ)
    Ry(θ) Rx(ψ) frame a's orientation relative to frame b, the rates are (φ̇, θ̇, ψ̇) = H⁻¹ R_bᵀ (ω_a − ω_b)
    (notes (0.2)); angle k's row is row k of H⁻¹ R_bᵀ, its C the distance to the nearer bound. Within
    ``RPY_SINGULAR_COS`` of gimbal lock (θ = ±π/2) the rows are left inactive. ``out`` as ``joint_rows``."""
    error = out[3]
    phi, theta, psi = rpy_angles(fa, fb)
    cf, sf, ct, st = np.cos(phi), np.sin(phi), np.cos(theta), np.sin(theta)
    for k in range(3):
        slot = RPY_ROWS + k
        if abs(ct) < RPY_SINGULAR_COS:
            _set(out, j, slot, (0.0, 0.0, 0.0), (0.0, 0.0, 0.0), (0.0, 0.0, 0.0))
            error[j, slot] = NO_LIMIT
            continue
        h0, h1, h2 = rpy_rate_row(k, cf, sf, ct, st)
        g0, g1, g2 = qrot_t(fb[0], fb[1], fb[2], fb[3], h0, h1, h2)    # R_b hₖ: the row in the world
        angle = phi if k == 0 else (theta if k == 1 else psi)
        lo, hi = limit[j, 2 * k], limit[j, 2 * k + 1]
        if rpy_lower_nearer(angle, lo, hi):
            _set(out, j, slot, (0.0, 0.0, 0.0), (g0, g1, g2), (-g0, -g1, -g2))
            error[j, slot] = angle - lo
        else:
            _set(out, j, slot, (0.0, 0.0, 0.0), (-g0, -g1, -g2), (g0, g1, g2))
            error[j, slot] = hi - angle


@njit(cache=True, forceinline=True, refcount=False)
def rpy_angles(fa, fb):
    """(φ, θ, ψ) [rad] of frame a relative to frame b (orientations fa, fb (4,), world): R_bᵀ R_a =
    Rz(φ) Ry(θ) Rx(ψ) (ArtiSynth notes 0.4)."""
    rw, rx, ry, rz = qmul_t(fb[0], -fb[1], -fb[2], -fb[3], fa[0], fa[1], fa[2], fa[3])
    r00, _, _, r10, _, _, r20, r21, r22 = quat_matrix_t(rw, rx, ry, rz)
    return np.arctan2(r10, r00), -np.arcsin(min(1.0, max(-1.0, r20))), np.arctan2(r21, r22)


@njit(cache=True, forceinline=True, refcount=False)
def rpy_rate_row(k, cf, sf, ct, st):
    """Row k of H⁻¹ (notes (0.2)), (φ̇, θ̇, ψ̇) = H⁻¹ ω in frame b's axes, from cos and sin of φ and θ."""
    if k == 0:
        return cf * st / ct, sf * st / ct, 1.0
    if k == 1:
        return -sf, cf, 0.0
    return cf / ct, sf / ct, 0.0


@njit(cache=True, forceinline=True, refcount=False)
def rpy_lower_nearer(angle, lo, hi):
    """Whether a roll, pitch or yaw limit row is the lower bound's (else the upper's, negated)."""
    return angle - lo <= hi - angle


# ------------------------------------------------------------------------------------------------------------
# J̇ u: the rows' rates along the motion (the acceleration-level joints: solvers/joint_accel.py, joint_dense.py)

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
def joint_rate_products(j, joints, x, q, v, w, out):
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

    ``joints`` as ``joint_rows``; x, v, w (n, 3); q (n, 4); out (m, 8)."""
    body, frame_a, frame_b = joints.body, joints.frame_a, joints.frame_b
    pa, fa, ra, va, wa = _side(body[j, 0], frame_a[j], x, q, v, w)
    pb, fb, rb, vb, wb = _side(body[j, 1], frame_b[j], x, q, v, w)
    k = joints.kind[j]
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
def rpy_rate_products(j, joints, x, q, v, w, out):
    """out[j, 3 + k] = Ġ u of a ball joint's roll-pitch-yaw limit row k (notes 0.4), signed as the row is
    (``_rpy_limit_rows``: the nearer bound's). The row is g_k = R_b h_k(φ, θ) with h_k row k of H⁻¹ (notes
    (0.2)) and Ċ = ± g_k · ω_rel, ω_rel = ω_a − ω_b; its rate along the motion is
    ġ_k · ω_rel = (ω_b × g_k) · ω_rel + (∂h_k/∂φ φ̇ + ∂h_k/∂θ θ̇) · R_bᵀ ω_rel, with (φ̇, θ̇) = (h_0, h_1) · R_bᵀ ω_rel.
    Zero within ``RPY_SINGULAR_COS`` of gimbal lock, where the rows are off. Shapes as ``joint_rate_products``."""
    body, frame_a, frame_b, limit = joints.body, joints.frame_a, joints.frame_b, joints.limit
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
def joint_rates(joints, x, q, v, w, out):
    """``joint_rate_products`` for every joint: out (m, 8) [m/s² or rad/s²]."""
    for j in range(joints.kind.shape[0]):
        joint_rate_products(j, joints, x, q, v, w, out)
