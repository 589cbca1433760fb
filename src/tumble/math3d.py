"""Rigid-body math kernels: Numba-compiled, float64, no allocation beyond their outputs.

Conventions (see ``conventions.py``): quaternions are (w, x, y, z) and rotate body → world;
vectors are (3,) arrays; matrices are (3, 3) row-major, ``m[i, j]`` is row i, column j (Baraff I 4).

These functions are the building blocks the stage kernels inline. The friendly, validated NumPy
entry points for users are in ``tumble.rotations`` and ``tumble.spatial``.
"""

from __future__ import annotations

import numpy as np

from .conventions import SMALL_ANGLE
from .jit import njit

# ---------------------------------------------------------------------------------------------
# Scalar-tuple forms: used inside hot per-body loops, where small arrays would be heap-allocated.
# ---------------------------------------------------------------------------------------------


@njit(cache=True, inline="always")
def qmul_t(aw, ax, ay, az, bw, bx, by, bz):
    """Quaternion product a b as scalars, Baraff I (4-1): [s1 s2 − v1·v2, s1 v2 + s2 v1 + v1 × v2]."""
    return (aw * bw - ax * bx - ay * by - az * bz,
            aw * bx + bw * ax + ay * bz - az * by,
            aw * by + bw * ay + az * bx - ax * bz,
            aw * bz + bw * az + ax * by - ay * bx)


@njit(cache=True, inline="always")
def qrot_t(qw, qx, qy, qz, px, py, pz):
    """Rotate (px, py, pz) by the unit quaternion q: q p q⁻¹ (Baraff I section 4, footnote 4).

    Uses p + 2 s (v × p) + 2 v × (v × p), the expanded form of the matrix of Baraff I section 4.
    """
    tx = 2.0 * (qy * pz - qz * py)
    ty = 2.0 * (qz * px - qx * pz)
    tz = 2.0 * (qx * py - qy * px)
    return (px + qw * tx + (qy * tz - qz * ty),
            py + qw * ty + (qz * tx - qx * tz),
            pz + qw * tz + (qx * ty - qy * tx))


@njit(cache=True, inline="always")
def qrot_inv_t(qw, qx, qy, qz, px, py, pz):
    """Rotate by the inverse (conjugate) of the unit quaternion q: world → body."""
    return qrot_t(qw, -qx, -qy, -qz, px, py, pz)


@njit(cache=True, forceinline=True, refcount=False)
def quat_matrix_t(qw, qx, qy, qz):
    """The rotation matrix R(q) (body → world) of the unit quaternion q, Baraff I (4-3) (section 4,
    ``quaternion_to_matrix``), as its nine entries row by row (r00, r01, r02, r10, …, r22). Column k is body
    axis k in world coordinates. The one definition of quaternion → matrix in tumble: every other form
    (``quat_to_matrix``, ``quat_to_matrices``, the per-body and per-shape kernels) is built on it."""
    r00 = 1.0 - 2.0 * (qy * qy + qz * qz)
    r01 = 2.0 * (qx * qy - qw * qz)
    r02 = 2.0 * (qx * qz + qw * qy)
    r10 = 2.0 * (qx * qy + qw * qz)
    r11 = 1.0 - 2.0 * (qx * qx + qz * qz)
    r12 = 2.0 * (qy * qz - qw * qx)
    r20 = 2.0 * (qx * qz - qw * qy)
    r21 = 2.0 * (qy * qz + qw * qx)
    r22 = 1.0 - 2.0 * (qx * qx + qy * qy)
    return r00, r01, r02, r10, r11, r12, r20, r21, r22


# ---------------------------------------------------------------------------------------------
# Array forms.
# ---------------------------------------------------------------------------------------------


@njit(cache=True, refcount=False)
def skew(a, out):
    """The star operator a* of Baraff I (2-9): a* b = a × b. a (3,) → out (3, 3)."""
    out[0, 0] = 0.0
    out[0, 1] = -a[2]
    out[0, 2] = a[1]
    out[1, 0] = a[2]
    out[1, 1] = 0.0
    out[1, 2] = -a[0]
    out[2, 0] = -a[1]
    out[2, 1] = a[0]
    out[2, 2] = 0.0


@njit(cache=True, refcount=False)
def quat_mul(a, b, out):
    """Quaternion product a b, Baraff I (4-1). a, b, out (4,); out may alias a or b."""
    w, x, y, z = qmul_t(a[0], a[1], a[2], a[3], b[0], b[1], b[2], b[3])
    out[0] = w
    out[1] = x
    out[2] = y
    out[3] = z


@njit(cache=True, refcount=False)
def quat_conj(q, out):
    """Conjugate [s, −v]; the inverse of a unit quaternion. q, out (4,)."""
    out[0] = q[0]
    out[1] = -q[1]
    out[2] = -q[2]
    out[3] = -q[3]


@njit(cache=True, refcount=False)
def quat_normalize(q, out):
    """q / |q| (Baraff I section 4, ``normalize``). q, out (4,)."""
    inv = 1.0 / np.sqrt(q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3])
    out[0] = q[0] * inv
    out[1] = q[1] * inv
    out[2] = q[2] * inv
    out[3] = q[3] * inv


@njit(cache=True, refcount=False)
def quat_rotate(q, p, out):
    """Rotate p (3,) by the unit quaternion q (4,): R(q) p, body → world. out (3,)."""
    x, y, z = qrot_t(q[0], q[1], q[2], q[3], p[0], p[1], p[2])
    out[0] = x
    out[1] = y
    out[2] = z


@njit(cache=True, refcount=False)
def quat_to_matrix(q, out):
    """Rotation matrix of a unit quaternion q (4,), Baraff I section 4 (``quat_matrix_t``). out (3, 3)."""
    (out[0, 0], out[0, 1], out[0, 2], out[1, 0], out[1, 1], out[1, 2],
     out[2, 0], out[2, 1], out[2, 2]) = quat_matrix_t(q[0], q[1], q[2], q[3])


@njit(cache=True)
def quat_to_matrices(q, out):
    """R(q_i) (n, 3, 3) of unit quaternions q (n, 4) (``quat_matrix_t``), written to out (n, 3, 3)."""
    for i in range(q.shape[0]):
        (out[i, 0, 0], out[i, 0, 1], out[i, 0, 2], out[i, 1, 0], out[i, 1, 1], out[i, 1, 2],
         out[i, 2, 0], out[i, 2, 1], out[i, 2, 2]) = quat_matrix_t(q[i, 0], q[i, 1], q[i, 2], q[i, 3])


@njit(cache=True, refcount=False)
def matrix_to_quat(m, out):
    """Unit quaternion of a rotation matrix, Baraff I section 4 (``matrix_to_quaternion``).

    Four branches: the trace branch when tr(m) >= 0, else the branch of the largest diagonal entry,
    so the square root is always taken of a number >= 1. The result has w >= 0 on the trace branch;
    q and −q are the same rotation. Returns the branch taken (0 trace, 1/2/3 for x/y/z) for tests.
    """
    tr = m[0, 0] + m[1, 1] + m[2, 2]
    if tr >= 0.0:
        s = np.sqrt(tr + 1.0)
        out[0] = 0.5 * s
        s = 0.5 / s
        out[1] = (m[2, 1] - m[1, 2]) * s
        out[2] = (m[0, 2] - m[2, 0]) * s
        out[3] = (m[1, 0] - m[0, 1]) * s
        return 0
    i = 0
    if m[1, 1] > m[0, 0]:
        i = 1
    if m[2, 2] > m[i, i]:
        i = 2
    if i == 0:
        s = np.sqrt((m[0, 0] - (m[1, 1] + m[2, 2])) + 1.0)
        out[1] = 0.5 * s
        s = 0.5 / s
        out[2] = (m[0, 1] + m[1, 0]) * s
        out[3] = (m[2, 0] + m[0, 2]) * s
        out[0] = (m[2, 1] - m[1, 2]) * s
    elif i == 1:
        s = np.sqrt((m[1, 1] - (m[2, 2] + m[0, 0])) + 1.0)
        out[2] = 0.5 * s
        s = 0.5 / s
        out[3] = (m[1, 2] + m[2, 1]) * s
        out[1] = (m[0, 1] + m[1, 0]) * s
        out[0] = (m[0, 2] - m[2, 0]) * s
    else:
        s = np.sqrt((m[2, 2] - (m[0, 0] + m[1, 1])) + 1.0)
        out[3] = 0.5 * s
        s = 0.5 / s
        out[1] = (m[2, 0] + m[0, 2]) * s
        out[2] = (m[1, 2] + m[2, 1]) * s
        out[0] = (m[1, 0] - m[0, 1]) * s
    return i + 1


@njit(cache=True, refcount=False)
def axis_angle_to_quat(axis, angle, out):
    """[cos(θ/2), sin(θ/2) u] for a rotation of θ about the unit axis u (ArtiSynth notes 0.2)."""
    n = np.sqrt(axis[0] * axis[0] + axis[1] * axis[1] + axis[2] * axis[2])
    s = np.sin(0.5 * angle) / n
    out[0] = np.cos(0.5 * angle)
    out[1] = axis[0] * s
    out[2] = axis[1] * s
    out[3] = axis[2] * s


@njit(cache=True, refcount=False)
def quat_to_axis_angle(q, axis_out):
    """Axis (written to axis_out) and angle θ ∈ [0, π] of a unit quaternion; returns θ.

    For θ below ``SMALL_ANGLE`` the axis is undefined; (1, 0, 0) is returned with θ = 0.
    """
    w, x, y, z = q[0], q[1], q[2], q[3]
    if w < 0.0:  # q and −q are one rotation: take the one with θ ≤ π
        w, x, y, z = -w, -x, -y, -z
    s = np.sqrt(x * x + y * y + z * z)
    angle = 2.0 * np.arctan2(s, w)
    if s < 0.5 * SMALL_ANGLE:
        axis_out[0] = 1.0
        axis_out[1] = 0.0
        axis_out[2] = 0.0
        return 0.0
    axis_out[0] = x / s
    axis_out[1] = y / s
    axis_out[2] = z / s
    return angle


@njit(cache=True, refcount=False)
def quat_derivative_world(q, w, out):
    """q̇ = ½ [0, ω] q with ω in world coordinates, Baraff I (4-2), ArtiSynth notes (0.1)."""
    a, b, c, d = qmul_t(0.0, w[0], w[1], w[2], q[0], q[1], q[2], q[3])
    out[0] = 0.5 * a
    out[1] = 0.5 * b
    out[2] = 0.5 * c
    out[3] = 0.5 * d


@njit(cache=True, refcount=False)
def quat_derivative_body(q, w_body, out):
    """q̇ = ½ q [0, ω_b] with ω_b in the body (rotated) frame, ArtiSynth notes 0.2."""
    a, b, c, d = qmul_t(q[0], q[1], q[2], q[3], 0.0, w_body[0], w_body[1], w_body[2])
    out[0] = 0.5 * a
    out[1] = 0.5 * b
    out[2] = 0.5 * c
    out[3] = 0.5 * d


@njit(cache=True, inline="always")
def exp_map_t(wx, wy, wz, h):
    """exp(½ h [0, ω]) as scalars: the unit quaternion of a rotation by |ω| h about ω.

    Exact for constant ω over h; uses the Taylor series below ``SMALL_ANGLE`` where sin(θ/2)/|ω| loses
    digits.
    """
    wn = np.sqrt(wx * wx + wy * wy + wz * wz)
    half = 0.5 * h * wn
    if abs(half) < SMALL_ANGLE:
        c = 1.0 - 0.5 * half * half
        s = 0.5 * h * (1.0 - half * half / 6.0)
    else:
        c = np.cos(half)
        s = np.sin(half) / wn
    return c, wx * s, wy * s, wz * s


@njit(cache=True, refcount=False)
def quat_integrate_exp(q, w, h, out):
    """Exponential-map update q(t + h) = exp(½ h ω) q(t) for a constant world-frame ω.

    Stays unit length to rounding, unlike q + h q̇ (Baraff I (4-2) with Euler), which needs the
    renormalisation Baraff I section 4 describes.
    """
    dw, dx, dy, dz = exp_map_t(w[0], w[1], w[2], h)
    a, b, c, d = qmul_t(dw, dx, dy, dz, q[0], q[1], q[2], q[3])
    out[0] = a
    out[1] = b
    out[2] = c
    out[3] = d


# ---------------------------------------------------------------------------------------------
# Roll, pitch, yaw (ArtiSynth notes 0.4): R = Rz(φ) Ry(θ) Rx(ψ); roll φ about z, then pitch θ
# about the new y, then yaw ψ about the final x.
# ---------------------------------------------------------------------------------------------


@njit(cache=True, refcount=False)
def rpy_to_matrix(phi, theta, psi, out):
    """R = Rz(φ) Ry(θ) Rx(ψ) (ArtiSynth notes 0.4). out (3, 3)."""
    cf, sf = np.cos(phi), np.sin(phi)
    ct, st = np.cos(theta), np.sin(theta)
    cp, sp = np.cos(psi), np.sin(psi)
    out[0, 0] = cf * ct
    out[0, 1] = cf * st * sp - sf * cp
    out[0, 2] = cf * st * cp + sf * sp
    out[1, 0] = sf * ct
    out[1, 1] = sf * st * sp + cf * cp
    out[1, 2] = sf * st * cp - cf * sp
    out[2, 0] = -st
    out[2, 1] = ct * sp
    out[2, 2] = ct * cp


@njit(cache=True, refcount=False)
def rpy_rate_matrix(phi, theta, out):
    """The matrix H with ω = H (φ̇, θ̇, ψ̇), ω in the base frame (ArtiSynth notes 0.4).

    ω = φ̇ z + θ̇ y' + ψ̇ x'' with y' = Rz(φ) y and x'' = Rz(φ) Ry(θ) x. Depends on φ and θ only.
    """
    cf, sf = np.cos(phi), np.sin(phi)
    ct, st = np.cos(theta), np.sin(theta)
    out[0, 0] = 0.0
    out[0, 1] = -sf
    out[0, 2] = cf * ct
    out[1, 0] = 0.0
    out[1, 1] = cf
    out[1, 2] = sf * ct
    out[2, 0] = 1.0
    out[2, 1] = 0.0
    out[2, 2] = -st


@njit(cache=True, refcount=False)
def rpy_rate_matrix_inv(phi, theta, out):
    """H⁻¹ with (φ̇, θ̇, ψ̇) = H⁻¹ ω (ArtiSynth notes (0.2)); singular at cos θ = 0 (gimbal lock).

    The caller checks |cos θ| against ``RPY_SINGULAR_COS`` first.
    """
    cf, sf = np.cos(phi), np.sin(phi)
    ct, st = np.cos(theta), np.sin(theta)
    tt = st / ct
    out[0, 0] = cf * tt
    out[0, 1] = sf * tt
    out[0, 2] = 1.0
    out[1, 0] = -sf
    out[1, 1] = cf
    out[1, 2] = 0.0
    out[2, 0] = cf / ct
    out[2, 1] = sf / ct
    out[2, 2] = 0.0


@njit(cache=True, inline="always")
def centroid(wv, nv):
    """Mean of the vertices wv[:nv], as a tuple (no allocation)."""
    cx = cy = cz = 0.0
    for k in range(nv):
        cx += wv[k, 0]
        cy += wv[k, 1]
        cz += wv[k, 2]
    return cx / nv, cy / nv, cz / nv
