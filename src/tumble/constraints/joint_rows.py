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
"""

from __future__ import annotations

import numpy as np

from ..conventions import RPY_SINGULAR_COS
from ..jit import njit
from ..math3d import qmul_t, qrot_t

BALL, HINGE, SLIDER, FIXED = 0, 1, 2, 3
"""Joint kinds (``joint_kind``)."""
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

HAS_LIMIT, HAS_MOTOR, BROKEN = 1, 2, 4
"""Bits of ``joint_flags``."""


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
def _set(lin, ang_a, ang_b, j, r, l0, l1, l2, a0, a1, a2, b0, b1, b2):
    lin[j, r, 0], lin[j, r, 1], lin[j, r, 2] = l0, l1, l2
    ang_a[j, r, 0], ang_a[j, r, 1], ang_a[j, r, 2] = a0, a1, a2
    ang_b[j, r, 0], ang_b[j, r, 1], ang_b[j, r, 2] = b0, b1, b2


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
def joint_rows(kind, body, frame_a, frame_b, limit, flags, x, q, lin, ang_a, ang_b, error, coordinate):
    """Fill every joint's rows at the current pose (module docstring).

    kind (m,), body (m, 2) (−1 the world), frame_a / frame_b (m, 7) local anchor [m] and quaternion,
    limit (m, 2) [rad or m], flags (m,); x (n, 3), q (n, 4). Out: lin, ang_a, ang_b (m, 8, 3); error (m, 8)
    the rows' C [m or rad] (the limit row: its distance to the nearer bound, >= 0 when within); coordinate
    (m,) the hinge angle [rad] or slider position [m] of a relative to b (0 for ball and fixed joints).
    """
    for j in range(kind.shape[0]):
        joint_rows_one(j, kind, body, frame_a, frame_b, limit, flags, x, q, lin, ang_a, ang_b, error, coordinate)


@njit(cache=True, refcount=False)
def joint_rows_one(j, kind, body, frame_a, frame_b, limit, flags, x, q, lin, ang_a, ang_b, error, coordinate):
    """``joint_rows`` for joint j alone."""
    a, b = body[j, 0], body[j, 1]
    pa, fa = _frame(a, frame_a[j], x, q)
    pb, fb = _frame(b, frame_b[j], x, q)
    ra0, ra1, ra2 = (pa[0] - x[a, 0], pa[1] - x[a, 1], pa[2] - x[a, 2]) if a >= 0 else (0.0, 0.0, 0.0)
    rb0, rb1, rb2 = (pb[0] - x[b, 0], pb[1] - x[b, 1], pb[2] - x[b, 2]) if b >= 0 else (0.0, 0.0, 0.0)
    d0, d1, d2 = pb[0] - pa[0], pb[1] - pa[1], pb[2] - pa[2]
    k = kind[j]
    r = 0
    if k != SLIDER:     # the point rows
        for i in range(3):
            e0 = 1.0 if i == 0 else 0.0
            e1 = 1.0 if i == 1 else 0.0
            e2 = 1.0 if i == 2 else 0.0
            c0, c1, c2 = _cross(ra0, ra1, ra2, e0, e1, e2)
            g0, g1, g2 = _cross(rb0, rb1, rb2, e0, e1, e2)
            _set(lin, ang_a, ang_b, j, r, e0, e1, e2, c0, c1, c2, -g0, -g1, -g2)
            error[j, r] = -(d0 * e0 + d1 * e1 + d2 * e2)
            r += 1
    u = _axis(fa, 0)
    if k == HINGE:
        ub = _axis(fb, 0)
        for i in (1, 2):
            n = _axis(fa, i)
            c0, c1, c2 = _cross(n[0], n[1], n[2], ub[0], ub[1], ub[2])
            _set(lin, ang_a, ang_b, j, r, 0.0, 0.0, 0.0, c0, c1, c2, -c0, -c1, -c2)
            error[j, r] = n[0] * ub[0] + n[1] * ub[1] + n[2] * ub[2]
            r += 1
    elif k == SLIDER or k == FIXED:
        t0, t1, t2 = _relative_rotation(fa, fb)
        for i in range(3):
            e0 = 1.0 if i == 0 else 0.0
            e1 = 1.0 if i == 1 else 0.0
            e2 = 1.0 if i == 2 else 0.0
            _set(lin, ang_a, ang_b, j, r, 0.0, 0.0, 0.0, e0, e1, e2, -e0, -e1, -e2)
            error[j, r] = t0 * e0 + t1 * e1 + t2 * e2
            r += 1
    if k == SLIDER:
        for i in (1, 2):
            n = _axis(fa, i)
            c0, c1, c2 = _cross(ra0 + d0, ra1 + d1, ra2 + d2, n[0], n[1], n[2])
            g0, g1, g2 = _cross(rb0, rb1, rb2, n[0], n[1], n[2])
            _set(lin, ang_a, ang_b, j, r, -n[0], -n[1], -n[2], -c0, -c1, -c2, g0, g1, g2)
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
    _set(lin, ang_a, ang_b, j, MOTOR_ROW, l0, l1, l2, a0, a1, a2, b0, b1, b2)
    if flags[j] & HAS_LIMIT and k == BALL:
        _rpy_limit_rows(j, fa, fb, limit, lin, ang_a, ang_b, error)
    elif flags[j] & HAS_LIMIT:
        lo, hi = limit[j, 0], limit[j, 1]
        if s - lo <= hi - s:
            _set(lin, ang_a, ang_b, j, LIMIT_ROW, l0, l1, l2, a0, a1, a2, b0, b1, b2)
            error[j, LIMIT_ROW] = s - lo
        else:
            _set(lin, ang_a, ang_b, j, LIMIT_ROW, -l0, -l1, -l2, -a0, -a1, -a2, -b0, -b1, -b2)
            error[j, LIMIT_ROW] = hi - s


@njit(cache=True, refcount=False)
def _rpy_limit_rows(j, fa, fb, limit, lin, ang_a, ang_b, error):
    """A ball joint's roll-pitch-yaw limit rows (ArtiSynth notes 0.4) in slots 3–5: with R = R_bᵀ R_a = Rz(φ)
    Ry(θ) Rx(ψ) frame a's orientation relative to frame b, the rates are (φ̇, θ̇, ψ̇) = H⁻¹ R_bᵀ (ω_a − ω_b)
    (notes (0.2)); angle k's row is row k of H⁻¹ R_bᵀ, its C the distance to the nearer bound. Within
    ``RPY_SINGULAR_COS`` of gimbal lock (θ = ±π/2) the rows are left inactive."""
    phi, theta, psi = rpy_angles(fa, fb)
    cf, sf, ct, st = np.cos(phi), np.sin(phi), np.cos(theta), np.sin(theta)
    for k in range(3):
        slot = RPY_ROWS + k
        if abs(ct) < RPY_SINGULAR_COS:
            _set(lin, ang_a, ang_b, j, slot, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0)
            error[j, slot] = NO_LIMIT
            continue
        h0, h1, h2 = rpy_rate_row(k, cf, sf, ct, st)
        g0, g1, g2 = qrot_t(fb[0], fb[1], fb[2], fb[3], h0, h1, h2)    # R_b hₖ: the row in the world
        angle = phi if k == 0 else (theta if k == 1 else psi)
        lo, hi = limit[j, 2 * k], limit[j, 2 * k + 1]
        if rpy_lower_nearer(angle, lo, hi):
            _set(lin, ang_a, ang_b, j, slot, 0.0, 0.0, 0.0, g0, g1, g2, -g0, -g1, -g2)
            error[j, slot] = angle - lo
        else:
            _set(lin, ang_a, ang_b, j, slot, 0.0, 0.0, 0.0, -g0, -g1, -g2, g0, g1, g2)
            error[j, slot] = hi - angle


@njit(cache=True, forceinline=True, refcount=False)
def rpy_angles(fa, fb):
    """(φ, θ, ψ) [rad] of frame a relative to frame b (orientations fa, fb (4,), world): R_bᵀ R_a =
    Rz(φ) Ry(θ) Rx(ψ) (ArtiSynth notes 0.4)."""
    rw, rx, ry, rz = qmul_t(fb[0], -fb[1], -fb[2], -fb[3], fa[0], fa[1], fa[2], fa[3])
    r00 = 1.0 - 2.0 * (ry * ry + rz * rz)
    r10 = 2.0 * (rx * ry + rw * rz)
    r20 = 2.0 * (rx * rz - rw * ry)
    r21 = 2.0 * (ry * rz + rw * rx)
    r22 = 1.0 - 2.0 * (rx * rx + ry * ry)
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
