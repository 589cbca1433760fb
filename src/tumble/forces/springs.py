"""Springs between rigid bodies: axial, multi-point (cables with via points) and frame (6-DOF) springs.

ArtiSynth notes 0.12 and 0.12.1 (axial springs), 0.14 (multi-point springs) and 0.22 (frame springs).
The notes lost their equations in conversion; the formulas below are the standard ones of each named
element, and every Jacobian is derived here and checked against central finite differences in
``tests/springs/test_springs.py``.

Conventions (``tumble.conventions``): SI units; quaternions (w, x, y, z) rotate body → world; a body's
origin is its centre of mass (COM); velocities v and ω are world-frame. Body index −1 means the world (a
fixed frame at the origin with identity orientation); a point "on the world" is a fixed world point.

Generalized coordinates (used by every Jacobian here and by ``tumble.integration.implicit``):

- velocity of body i: u_i = (v_i, ω_i) (6,), linear first, world frame [m/s, rad/s];
- position perturbation of body i: δ_i = (δx_i, δθ_i) (6,), where δx_i [m] moves the COM and δθ_i [rad] is a
  world-frame rotation vector applied on the left, q_i ← exp(δθ_i) q_i;
- generalized load on body i: F_i = (f_i, τ_i) (6,), the force [N] and the torque about the COM [N m], world.

The position Jacobian is K = ∂F/∂δ and the velocity Jacobian D = ∂F/∂u, each (6n, 6n) with body i's rows
and columns at 6 i … 6 i + 5. They are the exact derivatives of the world-frame loads (the "world
coordinates" Jacobians of ArtiSynth notes 0.22.3, including the terms that come from rotating the lever arms
and frames, which make K unsymmetric, notes 0.23). Damping loads depend on position too (the velocity of a
point on a spinning body turns with it), and K includes that.

Layout of the flat arrays (see ``SpringArrays``): an axial spring is a cable of two points, so axial and
multi-point springs share one set of ``cable_*`` arrays and one kernel. Frame springs have ``frame_*`` arrays.
Jacobians come out as 6×6 blocks (``block_row``, ``block_col``, ``K_blocks``, ``D_blocks``): a block couples
the load on body ``block_row`` to the motion of body ``block_col``; blocks that share a body pair are summed;
blocks with a −1 (world) index are to be skipped.
"""

from __future__ import annotations

from collections import namedtuple
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from .. import _checks
from ..conventions import FLOAT
from ..jit import njit
from ..math3d import qmul_t, qrot_t, quat_to_matrices, skew

__all__ = [
    "AxialSpring",
    "CableArrays",
    "FrameArrays",
    "FrameSpring",
    "MultiPointSpring",
    "SpringArrays",
    "SpringScratch",
    "pack_springs",
    "spring_jacobian_blocks",
    "spring_jacobians",
    "spring_loads",
    "spring_potential_energy",
]

SPRING_MIN_LENGTH = 1e-12
"""m. A spring segment shorter than this has no direction: its unit vector is taken as zero, so it exerts no
force and adds no Jacobian term instead of producing 0/0 = NaN. 1e-12 m is far below any anchor spacing a
scene means (atomic scale) and far above the ~1e-300 at which 1/l overflows."""

_PHI_SERIES = 1e-4
"""rad. Below this relative rotation angle θ the coefficient 1/θ² − cot(θ/2)/(2θ) of the inverse left
Jacobian of SO(3) is taken from its series 1/12 + θ²/720 (the next term, θ⁴/30240, is < 1e-20), because the
closed form cancels catastrophically (two terms ~1/θ² = 1e8 whose difference is 1/12)."""


# ================================================================================================
# The kernels' containers (namedtuples of ``SpringArrays``' arrays: Numba types them by class and entries)
# ================================================================================================

CableArrays = namedtuple("CableArrays", ["ptr", "point_body", "point_local", "stiffness", "damping", "rest_length",
                                         "block_ptr"])
CableArrays.__module__ = __name__
CableArrays.__doc__ = """The cables (axial springs are 2-point cables), c of them with p points in all, as the kernels
take them (``SpringArrays.cables``): ptr (c+1,) int64, the points of cable i are ptr[i] … ptr[i+1]−1 in path order;
point_body (p,) int64 (−1 = the world); point_local (p, 3) [m] body frame (world frame for −1); stiffness
[N/m], damping [N s/m], rest_length [m] (c,); block_ptr (c+1,) int64: cable i's p_i² Jacobian blocks start at
block_ptr[i]."""

FrameArrays = namedtuple("FrameArrays", ["body", "pos", "rot", "stiffness", "damping", "rot_stiffness",
                                         "rot_damping"])
FrameArrays.__module__ = __name__
FrameArrays.__doc__ = """The frame springs, f of them, as the kernels take them (``SpringArrays.frames``): body (f, 2)
int64 (a, b; −1 = the world); pos (f, 2, 3) [m] frame origins and rot (f, 2, 4) frame orientations (w, x, y, z),
in body coordinates; stiffness [N/m], damping [N s/m], rot_stiffness [N m/rad], rot_damping [N m s/rad] (f, 3),
diagonals in frame-A axes."""

SpringScratch = namedtuple("SpringScratch", ["cable_work", "cable_work_len", "frame_vec", "frame_mat", "m33", "m36",
                                             "v3", "frame_blocks"])
SpringScratch.__module__ = __name__
SpringScratch.__doc__ = """The load and Jacobian kernels' scratch (``SpringArrays.scratch``, made once so that a step
allocates nothing): cable_work (7, most, 3) and cable_work_len (most,), most the points of the longest cable (at
least 2); frame_vec (14, 3) and frame_mat (5, 3, 3); m33 (7, 3, 3), m36 (2, 3, 6) and v3 (3,) of the Jacobians;
frame_blocks (6, 4, 3, 3)."""


# ================================================================================================
# Small 3×3 helpers (scratch arrays in, results written to ``out``)
# ================================================================================================


@njit(cache=True, forceinline=True, refcount=False)
def _mm(a, b, out):
    """out = a b for 3×3 matrices; out must not alias a or b."""
    for i in range(3):
        for j in range(3):
            out[i, j] = a[i, 0] * b[0, j] + a[i, 1] * b[1, j] + a[i, 2] * b[2, j]


@njit(cache=True, forceinline=True, refcount=False)
def _mv(a, b, out):
    """out = a b for a 3×3 matrix and a 3-vector; out must not alias b."""
    for i in range(3):
        out[i] = a[i, 0] * b[0] + a[i, 1] * b[1] + a[i, 2] * b[2]


@njit(cache=True, forceinline=True, refcount=False)
def _cross(a, b, out):
    out[0] = a[1] * b[2] - a[2] * b[1]
    out[1] = a[2] * b[0] - a[0] * b[2]
    out[2] = a[0] * b[1] - a[1] * b[0]


@njit(cache=True, forceinline=True, refcount=False)
def _body_pose(b, x, q):
    """(x, q) of body b as scalars; the world (b = −1) is the identity pose at the origin."""
    if b < 0:
        return 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0
    return x[b, 0], x[b, 1], x[b, 2], q[b, 0], q[b, 1], q[b, 2], q[b, 3]


@njit(cache=True, forceinline=True, refcount=False)
def _point_state(j, b, local, x, q, v, w, p_out, r_out, pd_out, om_out):
    """World point p = x_b + R_b local, lever arm r = p − x_b, point velocity ṗ = v_b + ω_b × r and ω_b,
    written to row j of the outputs. A world point (b = −1): p = local, r = local, ṗ = 0, ω = 0."""
    bx, by, bz, qw, qx, qy, qz = _body_pose(b, x, q)
    rx, ry, rz = qrot_t(qw, qx, qy, qz, local[0], local[1], local[2])
    r_out[j, 0], r_out[j, 1], r_out[j, 2] = rx, ry, rz
    p_out[j, 0], p_out[j, 1], p_out[j, 2] = bx + rx, by + ry, bz + rz
    if b < 0:
        for k in range(3):
            pd_out[j, k] = 0.0
            om_out[j, k] = 0.0
        return
    for k in range(3):
        om_out[j, k] = w[b, k]
    pd_out[j, 0] = v[b, 0] + w[b, 1] * rz - w[b, 2] * ry
    pd_out[j, 1] = v[b, 1] + w[b, 2] * rx - w[b, 0] * rz
    pd_out[j, 2] = v[b, 2] + w[b, 0] * ry - w[b, 1] * rx


# ================================================================================================
# Cables: axial (2 points) and multi-point springs (ArtiSynth notes 0.12, 0.12.1, 0.14)
# ================================================================================================


@njit(cache=True)
def _cable_geometry(c, cables, x, q, v, w, scratch):
    """Points, segments and tension of cable c of ``cables`` (``CableArrays``); returns the tension T [N].

    Points P_0 … P_m (m segments); segment s runs from P_s to P_{s+1}: e_s = P_{s+1} − P_s, l_s = |e_s|,
    u_s = e_s / l_s, l̇_s = u_s · ė_s (notes (0.11)). Total length L = Σ l_s and L̇ = Σ l̇_s (notes (0.12)).
    Tension T = k (L − L0) + d L̇ (notes 0.12.1). The force on point j is T w_j with w_j = u_j − u_{j−1}
    (u_{−1} = u_m = 0): each segment pulls its two ends toward each other (notes 0.14).
    Also writes seg_h[s] = P⊥_s ė_s / l_s = ∂l̇_s/∂e_s with P⊥_s = 1 − u_s u_sᵀ, used by the Jacobian.
    State x, v, w (n, 3), q (n, 4), world. Writes into ``scratch`` (``SpringScratch``): the rows of
    cable_work (7, most, 3) are, per point j, p_j [m] world, r_j [m] lever arm, ṗ_j [m/s], ω_j [rad/s], then
    per segment s, u_s, h_s [1/s], and per point w_j; cable_work_len (most,) holds l_s [m].
    """
    ptr, point_body, point_local = cables.ptr, cables.point_body, cables.point_local
    work = scratch.cable_work
    p, r, pd, om, seg_u, seg_h, wv = work[0], work[1], work[2], work[3], work[4], work[5], work[6]
    seg_len = scratch.cable_work_len
    j0 = ptr[c]
    n_pts = ptr[c + 1] - j0
    for j in range(n_pts):
        _point_state(j, point_body[j0 + j], point_local[j0 + j], x, q, v, w, p, r, pd, om)
    length = 0.0
    rate = 0.0
    for s in range(n_pts - 1):
        ex = p[s + 1, 0] - p[s, 0]
        ey = p[s + 1, 1] - p[s, 1]
        ez = p[s + 1, 2] - p[s, 2]
        ls = np.sqrt(ex * ex + ey * ey + ez * ez)
        seg_len[s] = ls
        length += ls
        if ls < SPRING_MIN_LENGTH:
            for k in range(3):
                seg_u[s, k] = 0.0
                seg_h[s, k] = 0.0
            continue
        inv = 1.0 / ls
        ux, uy, uz = ex * inv, ey * inv, ez * inv
        dx = pd[s + 1, 0] - pd[s, 0]
        dy = pd[s + 1, 1] - pd[s, 1]
        dz = pd[s + 1, 2] - pd[s, 2]
        ld = ux * dx + uy * dy + uz * dz
        rate += ld
        seg_u[s, 0], seg_u[s, 1], seg_u[s, 2] = ux, uy, uz
        seg_h[s, 0] = (dx - ld * ux) * inv
        seg_h[s, 1] = (dy - ld * uy) * inv
        seg_h[s, 2] = (dz - ld * uz) * inv
    for j in range(n_pts):
        for k in range(3):
            a = seg_u[j, k] if j < n_pts - 1 else 0.0
            b = seg_u[j - 1, k] if j > 0 else 0.0
            wv[j, k] = a - b
    return cables.stiffness[c] * (length - cables.rest_length[c]) + cables.damping[c] * rate


@njit(cache=True)
def _cable_max_points(cable_ptr):
    most = 2
    for c in range(cable_ptr.shape[0] - 1):
        most = max(most, cable_ptr[c + 1] - cable_ptr[c])
    return most


@njit(cache=True)
def cable_loads(cables, x, q, v, w, force_out, torque_out, scratch):
    """Accumulate every cable's loads into ``force_out`` and ``torque_out`` (n, 3) [N, N m], world frame.

    Point j of a cable (on body b_j, lever arm r_j from the COM) receives f_j = T w_j (``_cable_geometry``;
    ArtiSynth notes 0.12 for two points, 0.14 with via points); body b_j receives f_j and the torque
    r_j × f_j about its COM. Loads on world points (b_j = −1) are dropped.
    cables: ``CableArrays`` (the cables' definitions: points in path order, body, body-frame offsets [m],
    stiffness [N/m], damping [N s/m], rest length [m]); state x, v, w (n, 3) world, q (n, 4) body → world;
    scratch: ``SpringScratch``, of which this reads cable_work (7, most, 3) and cable_work_len (most,), most ≥
    the points of the longest cable (``SpringArrays`` holds it, so a step allocates nothing).
    """
    ptr, point_body = cables.ptr, cables.point_body
    r, wv = scratch.cable_work[1], scratch.cable_work[6]
    for c in range(ptr.shape[0] - 1):
        tension = _cable_geometry(c, cables, x, q, v, w, scratch)
        j0 = ptr[c]
        for j in range(ptr[c + 1] - j0):
            b = point_body[j0 + j]
            if b < 0:
                continue
            fx, fy, fz = tension * wv[j, 0], tension * wv[j, 1], tension * wv[j, 2]
            force_out[b, 0] += fx
            force_out[b, 1] += fy
            force_out[b, 2] += fz
            torque_out[b, 0] += r[j, 1] * fz - r[j, 2] * fy
            torque_out[b, 1] += r[j, 2] * fx - r[j, 0] * fz
            torque_out[b, 2] += r[j, 0] * fy - r[j, 1] * fx


@njit(cache=True)
def cable_energy(cables, x, q, energy_out):
    """Potential energy ½ k (L − L0)² [J] of each cable (``CableArrays``) at the poses x (n, 3) [m], q (n, 4),
    written to ``energy_out`` (c,)."""
    cable_ptr, point_body, point_local = cables.ptr, cables.point_body, cables.point_local
    cable_stiffness, cable_rest_length = cables.stiffness, cables.rest_length
    most = _cable_max_points(cable_ptr)
    p = np.empty((most, 3))
    for c in range(cable_ptr.shape[0] - 1):
        j0 = cable_ptr[c]
        n_pts = cable_ptr[c + 1] - j0
        for j in range(n_pts):
            bx, by, bz, qw, qx, qy, qz = _body_pose(point_body[j0 + j], x, q)
            loc = point_local[j0 + j]
            rx, ry, rz = qrot_t(qw, qx, qy, qz, loc[0], loc[1], loc[2])
            p[j, 0], p[j, 1], p[j, 2] = bx + rx, by + ry, bz + rz
        length = 0.0
        for s in range(n_pts - 1):
            length += np.sqrt((p[s + 1, 0] - p[s, 0]) ** 2 + (p[s + 1, 1] - p[s, 1]) ** 2
                              + (p[s + 1, 2] - p[s, 2]) ** 2)
        stretch = length - cable_rest_length[c]
        energy_out[c] = 0.5 * cable_stiffness[c] * stretch * stretch


@njit(cache=True)
def cable_jacobian_blocks(cables, x, q, v, w, out, scratch):
    """Position and velocity Jacobian blocks of every cable (ArtiSynth notes 0.12, 0.12.1, 0.14).

    Point level (P_k world point k, T the tension, w_j = u_j − u_{j−1}, N_s = P⊥_s / l_s, h_s = N_s ė_s):
      ∂L/∂P_k = −w_kᵀ,  ∂L̇/∂Ṗ_k = −w_kᵀ,  ∂L̇/∂P_k = (h_{k−1} − h_k)ᵀ,  ∂u_s/∂P_{s+1} = −∂u_s/∂P_s = N_s,
      ∂T/∂P_k = g_kᵀ = −k w_kᵀ + d (h_{k−1} − h_k)ᵀ,  ∂T/∂Ṗ_k = −d w_kᵀ,
      K^p_jk = ∂f_j/∂P_k = w_j g_kᵀ + T ∂w_j/∂P_k,  with ∂w_j/∂P_j = −N_j − N_{j−1}, ∂w_j/∂P_{j±1} = ±… = N_j, N_{j−1},
      D^p_jk = ∂f_j/∂Ṗ_k = −d w_j w_kᵀ.
    Body level, with G_k = [1, −[r_k]×] (3×6: δP_k = G_k δ_{b_k}, Ṗ_k = G_k u_{b_k}) and ∂Ṗ_k/∂δθ = −[ω][r_k]×:
      K_jk = G_jᵀ (K^p_jk G_k + D^p_jk [0, −[ω_{b_k}]×[r_k]×]) + δ_jk [[0, 0], [0, [f_j]×[r_j]×]],
      D_jk = G_jᵀ D^p_jk G_k.
    The last K term is the turning of the lever arm in τ_j = r_j × f_j.
    cables: ``CableArrays``; state x, v, w (n, 3) world, q (n, 4) body → world.
    out = (block_row_out, block_col_out, K_out, D_out): cable c of p points writes p² blocks at
    cables.block_ptr[c] + j p + k: block_row_out (nb,) = b_j, block_col_out (nb,) = b_k (−1 for world points),
    K_out, D_out (nb, 6, 6) [N/m, N/rad, N m/m, N m/rad] and [N s/m, …].
    scratch: ``SpringScratch`` (``SpringArrays``' own, so that a call allocates nothing), of which this uses
    cable_work (7, most, 3), cable_work_len (most,), m33 (7, 3, 3), m36 (2, 3, 6) and v3 (3,).
    """
    block_row_out, block_col_out, K_out, D_out = out
    cable_ptr, point_body, cable_block_ptr = cables.ptr, cables.point_body, cables.block_ptr
    cable_stiffness, cable_damping = cables.stiffness, cables.damping
    work, m33, m36 = scratch.cable_work, scratch.m33, scratch.m36
    r, om, seg_u, seg_h, wv = work[1], work[3], work[4], work[5], work[6]
    seg_len = scratch.cable_work_len
    kp, dp, rj, rk, wk, tmp, tmp2 = m33[0], m33[1], m33[2], m33[3], m33[4], m33[5], m33[6]
    xk, yk = m36[0], m36[1]
    fj = scratch.v3
    for c in range(cable_ptr.shape[0] - 1):
        tension = _cable_geometry(c, cables, x, q, v, w, scratch)
        k_c = cable_stiffness[c]
        d_c = cable_damping[c]
        j0 = cable_ptr[c]
        n_pts = cable_ptr[c + 1] - j0
        n_seg = n_pts - 1
        for j in range(n_pts):
            skew(r[j], rj)
            for k in range(n_pts):
                blk = cable_block_ptr[c] + j * n_pts + k
                block_row_out[blk] = point_body[j0 + j]
                block_col_out[blk] = point_body[j0 + k]
                # K^p_jk = w_j g_kᵀ + T ∂w_j/∂P_k and D^p_jk = −d w_j w_kᵀ.
                for a in range(3):
                    hprev = seg_h[k - 1, a] if k > 0 else 0.0
                    hnext = seg_h[k, a] if k < n_seg else 0.0
                    tmp[0, a] = -k_c * wv[k, a] + d_c * (hprev - hnext)  # g_k in row 0
                for a in range(3):
                    for b in range(3):
                        kp[a, b] = wv[j, a] * tmp[0, b]
                        dp[a, b] = -d_c * wv[j, a] * wv[k, b]
                # T ∂w_j/∂P_k from the segments touching j: N_s = (1 − u_s u_sᵀ) / l_s.
                for s in (j - 1, j):
                    if s < 0 or s >= n_seg or seg_len[s] < SPRING_MIN_LENGTH:
                        continue
                    # w_j = u_j − u_{j−1}: sign +1 for u_j (s = j), −1 for u_{j−1}; ∂u_s/∂P_{s+1} = N_s.
                    sgn = 1.0 if s == j else -1.0
                    if k == s + 1:
                        coef = sgn
                    elif k == s:
                        coef = -sgn
                    else:
                        continue
                    scale = coef * tension / seg_len[s]
                    for a in range(3):
                        for b in range(3):
                            eye = 1.0 if a == b else 0.0
                            kp[a, b] += scale * (eye - seg_u[s, a] * seg_u[s, b])
                # Columns of body b_k: X = K^p G_k + D^p [0, −[ω]×[r_k]×], Y = D^p G_k.
                skew(r[k], rk)
                skew(om[k], wk)
                _mm(wk, rk, tmp)            # [ω]×[r_k]×
                _mm(dp, tmp, tmp2)          # D^p [ω]×[r_k]×
                _mm(kp, rk, tmp)            # K^p [r_k]×
                for a in range(3):
                    for b in range(3):
                        xk[a, b] = kp[a, b]
                        xk[a, 3 + b] = -tmp[a, b] - tmp2[a, b]
                _mm(dp, rk, tmp)
                for a in range(3):
                    for b in range(3):
                        yk[a, b] = dp[a, b]
                        yk[a, 3 + b] = -tmp[a, b]
                # Rows: G_jᵀ X = [X; [r_j]× X].
                for a in range(3):
                    for b in range(6):
                        K_out[blk, a, b] = xk[a, b]
                        D_out[blk, a, b] = yk[a, b]
                        K_out[blk, 3 + a, b] = rj[a, 0] * xk[0, b] + rj[a, 1] * xk[1, b] + rj[a, 2] * xk[2, b]
                        D_out[blk, 3 + a, b] = rj[a, 0] * yk[0, b] + rj[a, 1] * yk[1, b] + rj[a, 2] * yk[2, b]
            # δ(r_j × f_j) from the lever arm turning: (δθ × r_j) × f_j = [f_j]×[r_j]× δθ.
            for a in range(3):
                fj[a] = tension * wv[j, a]
            skew(fj, tmp)
            _mm(tmp, rj, tmp2)
            blk = cable_block_ptr[c] + j * n_pts + j
            for a in range(3):
                for b in range(3):
                    K_out[blk, 3 + a, 3 + b] += tmp2[a, b]


# ================================================================================================
# Frame springs (ArtiSynth notes 0.22)
# ================================================================================================


@njit(cache=True, forceinline=True, refcount=False)
def _world_diag(rot, d, out):
    """out = R diag(d) Rᵀ: a stiffness or damping diagonal in frame-A axes, in world coordinates."""
    for i in range(3):
        for j in range(3):
            out[i, j] = rot[i, 0] * d[0] * rot[j, 0] + rot[i, 1] * d[1] * rot[j, 1] + rot[i, 2] * d[2] * rot[j, 2]


@njit(cache=True)
def _frame_state(s, frames, x, q, v, w, vec, mat):
    """Kinematics and loads of frame spring s of ``frames`` (``FrameArrays``; ArtiSynth notes 0.22,
    (0.37)–(0.40)), in world coordinates, at the state x, v, w (n, 3), q (n, 4).

    Frame A (on body a) has world origin p_A and rotation R_A = R_a R_a0; frame B likewise. With e = p_B − p_A,
    ė = ṗ_B − ṗ_A (material-point velocities), R_AB = R_Aᵀ R_B = exp([φ]×) (φ the rotation vector in frame-A
    axes, |φ| ≤ π), Ω = ω_b − ω_a and stiffness/damping diagonals in frame-A axes mapped to world as
    K_w = R_A diag(k) R_Aᵀ:
      f_B = −K_tw e − D_tw ė   (force on B at p_B; −f_B acts on A at the same point p_B),
      τ_B = −R_A diag(k_r) φ − D_rw Ω   (torque on B; −τ_B on A).
    Because −f_B is applied to A at p_B (not at p_A), the loads balance in force and in moment about any
    point, and the translational part is the exact gradient of ½ dᵀ diag(k_t) d with d = R_Aᵀ e.

    Writes vec rows: 0 r_A (p_A − x_a), 1 r_B, 2 e, 3 ė, 4 φ, 5 ω_a, 6 ω_b, 7 f_B, 8 τ_B, 9 g_r = R_A diag(k_r) φ,
    10 s = p_B − x_a, 11 Ω, 12 d = R_Aᵀ e; mat: 0 R_A, 1 K_tw, 2 D_tw, 3 D_rw, 4 R_B.
    Returns |φ| [rad].
    """
    frame_body, frame_pos, frame_rot = frames.body, frames.pos, frames.rot
    a = frame_body[s, 0]
    b = frame_body[s, 1]
    ax, ay, az, aw, ai, aj, ak = _body_pose(a, x, q)
    bx, by, bz, bw, bi, bj, bk = _body_pose(b, x, q)
    la = frame_pos[s, 0]
    lb = frame_pos[s, 1]
    vec[0, 0], vec[0, 1], vec[0, 2] = qrot_t(aw, ai, aj, ak, la[0], la[1], la[2])
    vec[1, 0], vec[1, 1], vec[1, 2] = qrot_t(bw, bi, bj, bk, lb[0], lb[1], lb[2])
    ra = frame_rot[s, 0]
    rb = frame_rot[s, 1]
    fa = qmul_t(aw, ai, aj, ak, ra[0], ra[1], ra[2], ra[3])
    fb = qmul_t(bw, bi, bj, bk, rb[0], rb[1], rb[2], rb[3])
    for k in range(3):
        vec[5, k] = w[a, k] if a >= 0 else 0.0
        vec[6, k] = w[b, k] if b >= 0 else 0.0
        vec[11, k] = vec[6, k] - vec[5, k]
    vec[2, 0] = bx + vec[1, 0] - ax - vec[0, 0]
    vec[2, 1] = by + vec[1, 1] - ay - vec[0, 1]
    vec[2, 2] = bz + vec[1, 2] - az - vec[0, 2]
    vec[10, 0] = bx + vec[1, 0] - ax
    vec[10, 1] = by + vec[1, 1] - ay
    vec[10, 2] = bz + vec[1, 2] - az
    # ė = (v_b + ω_b × r_B) − (v_a + ω_a × r_A)
    _cross(vec[6], vec[1], vec[3])
    _cross(vec[5], vec[0], vec[13])
    for k in range(3):
        va = v[a, k] if a >= 0 else 0.0
        vb = v[b, k] if b >= 0 else 0.0
        vec[3, k] = vb + vec[3, k] - va - vec[13, k]
    # Relative rotation R_AB = R_Aᵀ R_B as the quaternion conj(q_A) q_B; its log is φ (notes 0.22, (0.45)).
    rw, rx, ry, rz = qmul_t(fa[0], -fa[1], -fa[2], -fa[3], fb[0], fb[1], fb[2], fb[3])
    if rw < 0.0:  # q and −q are one rotation: the one with w ≥ 0 has angle ≤ π
        rw, rx, ry, rz = -rw, -rx, -ry, -rz
    sn = np.sqrt(rx * rx + ry * ry + rz * rz)
    theta = 2.0 * np.arctan2(sn, rw)
    # θ / sin(θ/2) → 2 / cos(θ/2) as θ → 0; 1e-12 is where the two agree to rounding (error ~ sn²/3).
    scale = theta / sn if sn > 1e-12 else 2.0 / rw
    vec[4, 0], vec[4, 1], vec[4, 2] = rx * scale, ry * scale, rz * scale
    # Frame rotations as matrices (columns are the frame axes in world coordinates).
    for k in range(3):
        ex = 1.0 if k == 0 else 0.0
        ey = 1.0 if k == 1 else 0.0
        ez = 1.0 if k == 2 else 0.0
        mat[0, 0, k], mat[0, 1, k], mat[0, 2, k] = qrot_t(fa[0], fa[1], fa[2], fa[3], ex, ey, ez)
        mat[4, 0, k], mat[4, 1, k], mat[4, 2, k] = qrot_t(fb[0], fb[1], fb[2], fb[3], ex, ey, ez)
    _world_diag(mat[0], frames.stiffness[s], mat[1])
    _world_diag(mat[0], frames.damping[s], mat[2])
    _world_diag(mat[0], frames.rot_damping[s], mat[3])
    frame_rot_stiffness = frames.rot_stiffness
    for k in range(3):
        vec[13, k] = frame_rot_stiffness[s, k] * vec[4, k]
    _mv(mat[0], vec[13], vec[9])
    _mv(mat[1], vec[2], vec[7])
    _mv(mat[2], vec[3], vec[13])
    _mv(mat[3], vec[11], vec[8])
    for k in range(3):
        vec[7, k] = -vec[7, k] - vec[13, k]
        vec[8, k] = -vec[9, k] - vec[8, k]
        vec[12, k] = mat[0, 0, k] * vec[2, 0] + mat[0, 1, k] * vec[2, 1] + mat[0, 2, k] * vec[2, 2]
    return theta


@njit(cache=True)
def frame_loads(frames, x, q, v, w, force_out, torque_out, scratch):
    """Accumulate every frame spring's wrench into ``force_out``, ``torque_out`` (n, 3) [N, N m], world frame.

    Body b gets f_B and r_B × f_B + τ_B; body a gets −f_B and −(p_B − x_a) × f_B − τ_B (``_frame_state``;
    ArtiSynth notes 0.22, (0.37)–(0.40)). frames: ``FrameArrays``: body (f, 2) int64 (a, b; −1 = world);
    pos (f, 2, 3) [m] frame origins in body coordinates; rot (f, 2, 4) frame orientations in body
    coordinates (w, x, y, z); stiffness [N/m], damping [N s/m], rot_stiffness [N m/rad], rot_damping
    [N m s/rad] (f, 3), diagonals in frame-A axes. State x, v, w (n, 3) world, q (n, 4) body → world.
    scratch: ``SpringScratch``, of which this uses frame_vec (14, 3) and frame_mat (5, 3, 3)
    (``SpringArrays`` holds it, so a step allocates nothing).
    """
    frame_body = frames.body
    vec, mat = scratch.frame_vec, scratch.frame_mat
    for s in range(frame_body.shape[0]):
        _frame_state(s, frames, x, q, v, w, vec, mat)
        a = frame_body[s, 0]
        b = frame_body[s, 1]
        fx, fy, fz = vec[7, 0], vec[7, 1], vec[7, 2]
        if b >= 0:
            rx, ry, rz = vec[1, 0], vec[1, 1], vec[1, 2]
            force_out[b, 0] += fx
            force_out[b, 1] += fy
            force_out[b, 2] += fz
            torque_out[b, 0] += ry * fz - rz * fy + vec[8, 0]
            torque_out[b, 1] += rz * fx - rx * fz + vec[8, 1]
            torque_out[b, 2] += rx * fy - ry * fx + vec[8, 2]
        if a >= 0:
            sx, sy, sz = vec[10, 0], vec[10, 1], vec[10, 2]
            force_out[a, 0] -= fx
            force_out[a, 1] -= fy
            force_out[a, 2] -= fz
            torque_out[a, 0] -= sy * fz - sz * fy + vec[8, 0]
            torque_out[a, 1] -= sz * fx - sx * fz + vec[8, 1]
            torque_out[a, 2] -= sx * fy - sy * fx + vec[8, 2]


@njit(cache=True)
def frame_energy(frames, x, q, energy_out):
    """Potential ½ dᵀ diag(k_t) d + ½ φᵀ diag(k_r) φ [J] of each frame spring (``FrameArrays``) at the poses
    x (n, 3) [m], q (n, 4), written to ``energy_out`` (f,).

    The torque −R_A diag(k_r) φ is the exact gradient of the rotational term when k_r is isotropic
    (J_l(φ)ᵀ φ = φ); with unequal k_r it is ArtiSynth's (0.37) torque, which is not a gradient."""
    frame_body, frame_stiffness, frame_rot_stiffness = frames.body, frames.stiffness, frames.rot_stiffness
    vec = np.empty((14, 3))
    mat = np.empty((5, 3, 3))
    zeros3 = np.zeros((frame_body.shape[0], 3))
    still = np.zeros_like(x)  # velocities do not enter the energy
    undamped = FrameArrays(frame_body, frames.pos, frames.rot, frame_stiffness, zeros3, frame_rot_stiffness, zeros3)
    for s in range(frame_body.shape[0]):
        _frame_state(s, undamped, x, q, still, still, vec, mat)
        e = 0.0
        for k in range(3):
            e += frame_stiffness[s, k] * vec[12, k] ** 2 + frame_rot_stiffness[s, k] * vec[4, k] ** 2
        energy_out[s] = 0.5 * e


@njit(cache=True, forceinline=True, refcount=False)
def _inv_left_jacobian(phi, theta, out):
    """J_l⁻¹(φ) = 1 − ½ [φ]× + (1/θ² − cot(θ/2)/(2θ)) [φ]×² (ArtiSynth notes (0.45), Grassia 1998): the map
    from a left (world-side) rotation increment η, exp(η) exp(φ) = exp(φ + δφ), to δφ = J_l⁻¹ η.
    Written with cot(θ/2) so it stays finite up to θ = π."""
    if theta < _PHI_SERIES:
        c2 = 1.0 / 12.0 + theta * theta / 720.0
    else:
        half = 0.5 * theta
        c2 = 1.0 / (theta * theta) - np.cos(half) / (2.0 * theta * np.sin(half))
    px, py, pz = phi[0], phi[1], phi[2]
    # [φ]×² = φ φᵀ − θ² 1
    out[0, 0] = 1.0 + c2 * (px * px - theta * theta)
    out[1, 1] = 1.0 + c2 * (py * py - theta * theta)
    out[2, 2] = 1.0 + c2 * (pz * pz - theta * theta)
    out[0, 1] = 0.5 * pz + c2 * px * py
    out[1, 0] = -0.5 * pz + c2 * px * py
    out[0, 2] = -0.5 * py + c2 * px * pz
    out[2, 0] = 0.5 * py + c2 * px * pz
    out[1, 2] = 0.5 * px + c2 * py * pz
    out[2, 1] = -0.5 * px + c2 * py * pz


@njit(cache=True)
def frame_jacobian_blocks(frames, frame_block_start, x, q, v, w, out, scratch):
    """Exact world-coordinate position and velocity Jacobians of every frame spring (ArtiSynth notes 0.22.3).

    Variations (world; slots 0 δx_a, 1 δθ_a, 2 δx_b, 3 δθ_b; [a]× the cross-product matrix):
      δp_A = δx_a − [r_A]× δθ_a,  δe = δp_B − δp_A,  δė = [ω_a]×[r_A]× δθ_a − [ω_b]×[r_B]× δθ_b,
      δR_A = [δθ_a]× R_A, hence δ(M_w y) = M_w δy + (M_w [y]× − [M_w y]×) δθ_a for M_w = R_A diag(m) R_Aᵀ,
      δφ = J_l⁻¹(φ) R_Aᵀ (δθ_b − δθ_a)   (left perturbation of R_AB = R_Aᵀ R_B),
      δf_B = −K_tw δe − D_tw δė − (K_tw[e]× − [K_tw e]× + D_tw[ė]× − [D_tw ė]×) δθ_a,
      δτ_B = [g_r]× δθ_a − Q (δθ_b − δθ_a) − (D_rw[Ω]× − [D_rw Ω]×) δθ_a,  Q = R_A diag(k_r) J_l⁻¹ R_Aᵀ,
      δT_b = [r_B]× δf_B + δτ_B + [f_B]×[r_B]× δθ_b,  δT_a = [f_B]× δs − [s]× δf_B − δτ_B,  s = p_B − x_a.
    Velocity: ∂ė/∂(v_a, ω_a, v_b, ω_b) = (−1, [r_A]×, 1, −[r_B]×), ∂f_B/∂u = −D_tw ∂ė/∂u,
      ∂τ_B/∂ω_a = D_rw = −∂τ_B/∂ω_b.
    Exact for any configuration with |φ| < π (the rotation vector, and so the torque, jumps at π).
    frames: ``FrameArrays`` (as in ``frame_loads``); state x, v, w (n, 3) world, q (n, 4) body → world.
    out = (block_row_out, block_col_out, K_out, D_out) as in ``cable_jacobian_blocks``: spring s writes four
    blocks at frame_block_start + 4 s: (a, a), (a, b), (b, a), (b, b); K_out, D_out (nb, 6, 6).
    scratch: ``SpringScratch`` (``SpringArrays``' own), of which this uses frame_vec (14, 3), frame_mat
    (5, 3, 3), frame_blocks (6, 4, 3, 3), m33 (the first 4 of its (7, 3, 3)) and v3 (3,).
    """
    block_row_out, block_col_out, K_out, D_out = out
    frame_body, frame_rot_stiffness = frames.body, frames.rot_stiffness
    vec, mat, blocks, m33 = scratch.frame_vec, scratch.frame_mat, scratch.frame_blocks, scratch.m33
    blocks[:] = 0.0
    dF = blocks[0]    # ∂f_B / slot
    dT = blocks[1]    # ∂τ_B / slot
    de = blocks[2]    # ∂e / slot (also ∂ė/∂u)
    dTa, dTb, ds = blocks[3], blocks[4], blocks[5]
    m1, m2, m3, jinv = m33[0], m33[1], m33[2], m33[3]
    y = scratch.v3
    for s in range(frame_body.shape[0]):
        theta = _frame_state(s, frames, x, q, v, w, vec, mat)
        ra = frame_body[s, 0]
        rb = frame_body[s, 1]
        # ---- position Jacobian
        for i in range(4):
            for a in range(3):
                for b in range(3):
                    de[i, a, b] = 0.0
                    ds[i, a, b] = 0.0
                    dT[i, a, b] = 0.0
        skew(vec[0], m1)   # [r_A]×
        skew(vec[1], m2)   # [r_B]×
        for a in range(3):
            de[0, a, a] = -1.0
            de[2, a, a] = 1.0
            ds[0, a, a] = -1.0
            ds[2, a, a] = 1.0
            for b in range(3):
                de[1, a, b] = m1[a, b]
                de[3, a, b] = -m2[a, b]
                ds[3, a, b] = -m2[a, b]
        for i in range(4):
            _mm(mat[1], de[i], dF[i])
            for a in range(3):
                for b in range(3):
                    dF[i, a, b] = -dF[i, a, b]
        # −D_tw δė: δė = [ω_a]×[r_A]× δθ_a − [ω_b]×[r_B]× δθ_b
        skew(vec[5], m3)
        _mm(m3, m1, jinv)
        _mm(mat[2], jinv, m3)
        for a in range(3):
            for b in range(3):
                dF[1, a, b] -= m3[a, b]
        skew(vec[6], m3)
        _mm(m3, m2, jinv)
        _mm(mat[2], jinv, m3)
        for a in range(3):
            for b in range(3):
                dF[3, a, b] += m3[a, b]
        # Turning of frame A under K_tw and D_tw: −(M_w [y]× − [M_w y]×) for (M, y) = (K_t, e), (D_t, ė).
        for mi, yi in ((1, 2), (2, 3)):
            skew(vec[yi], m3)
            _mm(mat[mi], m3, jinv)
            _mv(mat[mi], vec[yi], y)
            skew(y, m3)
            for a in range(3):
                for b in range(3):
                    dF[1, a, b] += -jinv[a, b] + m3[a, b]
        # Rotational torque: [g_r]× δθ_a − Q (δθ_b − δθ_a) − (D_rw[Ω]× − [D_rw Ω]×) δθ_a.
        _inv_left_jacobian(vec[4], theta, jinv)
        for a in range(3):
            for b in range(3):
                m3[a, b] = frame_rot_stiffness[s, a] * jinv[a, b]
        _mm(mat[0], m3, jinv)
        for a in range(3):
            for b in range(3):  # Q = (R_A diag(k_r) J_l⁻¹) R_Aᵀ
                m3[a, b] = jinv[a, 0] * mat[0, b, 0] + jinv[a, 1] * mat[0, b, 1] + jinv[a, 2] * mat[0, b, 2]
        skew(vec[9], jinv)
        for a in range(3):
            for b in range(3):
                dT[1, a, b] = jinv[a, b] + m3[a, b]
                dT[3, a, b] = -m3[a, b]
        skew(vec[11], m3)
        _mm(mat[3], m3, jinv)
        _mv(mat[3], vec[11], y)
        skew(y, m3)
        for a in range(3):
            for b in range(3):
                dT[1, a, b] += -jinv[a, b] + m3[a, b]
        # Torques about the COMs.
        skew(vec[7], m3)   # [f_B]×
        skew(vec[10], m1)  # [s]×
        for i in range(4):
            _mm(m3, ds[i], jinv)
            _mm(m1, dF[i], m2)  # [s]× δf_B
            for a in range(3):
                for b in range(3):
                    dTa[i, a, b] = jinv[a, b] - m2[a, b] - dT[i, a, b]
            skew(vec[1], m2)
            _mm(m2, dF[i], jinv)  # [r_B]× δf_B
            for a in range(3):
                for b in range(3):
                    dTb[i, a, b] = jinv[a, b] + dT[i, a, b]
        skew(vec[1], m2)
        _mm(m3, m2, jinv)      # [f_B]×[r_B]×
        for a in range(3):
            for b in range(3):
                dTb[3, a, b] += jinv[a, b]
        base = frame_block_start + 4 * s
        for blk in range(4):
            row_is_b = blk >= 2
            col_is_b = blk % 2 == 1
            block_row_out[base + blk] = rb if row_is_b else ra
            block_col_out[base + blk] = rb if col_is_b else ra
            c0 = 2 if col_is_b else 0
            for a in range(3):
                for b in range(3):
                    for half in range(2):
                        fval = dF[c0 + half, a, b]
                        K_out[base + blk, a, 3 * half + b] = fval if row_is_b else -fval
                        K_out[base + blk, 3 + a, 3 * half + b] = (dTb if row_is_b else dTa)[c0 + half, a, b]
        # ---- velocity Jacobian: slots (v_a, ω_a, v_b, ω_b); ∂ė/∂u has the same blocks as ∂e/∂δ.
        for i in range(4):
            _mm(mat[2], de[i], dF[i])
            for a in range(3):
                for b in range(3):
                    dF[i, a, b] = -dF[i, a, b]
                    dT[i, a, b] = 0.0
        for a in range(3):
            for b in range(3):
                dT[1, a, b] = mat[3, a, b]
                dT[3, a, b] = -mat[3, a, b]
        skew(vec[10], m1)
        skew(vec[1], m2)
        for i in range(4):
            _mm(m1, dF[i], jinv)
            _mm(m2, dF[i], m3)
            for a in range(3):
                for b in range(3):
                    dTa[i, a, b] = -jinv[a, b] - dT[i, a, b]
                    dTb[i, a, b] = m3[a, b] + dT[i, a, b]
        for blk in range(4):
            row_is_b = blk >= 2
            c0 = 2 if blk % 2 == 1 else 0
            for a in range(3):
                for b in range(3):
                    for half in range(2):
                        fval = dF[c0 + half, a, b]
                        D_out[base + blk, a, 3 * half + b] = fval if row_is_b else -fval
                        D_out[base + blk, 3 + a, 3 * half + b] = (dTb if row_is_b else dTa)[c0 + half, a, b]


@njit(cache=True)
def scatter_blocks(block_row, block_col, blocks, body_dof, scale, out):
    """out[6-row block of body_dof[row], 6-col block of body_dof[col]] += scale · blocks[i] for every block.

    body_dof (n,) int64: first row of each body in ``out``, or −1 to leave the body out (the world, fixed
    bodies). blocks (nb, 6, 6); out (N, N) dense."""
    for i in range(block_row.shape[0]):
        if block_row[i] < 0 or block_col[i] < 0:
            continue
        r0 = body_dof[block_row[i]]
        c0 = body_dof[block_col[i]]
        if r0 < 0 or c0 < 0:
            continue
        for a in range(6):
            for b in range(6):
                out[r0 + a, c0 + b] += scale * blocks[i, a, b]


# ================================================================================================
# Python API: spring definitions, binding to bodies, packing into flat arrays
# ================================================================================================

BodyRef = Any
"""A body reference: a ``Body`` handle (anything with an integer ``.index``; its ``.world`` is compared when
both ends have one), a non-negative integer body index, or None for the world (a fixed frame)."""


def _body_ref(name: str, value: Any) -> Any:
    if value is None:
        return None
    if isinstance(value, bool):
        raise TypeError(f"{name} must be a Body, a body index or None (the world), got {value!r}")
    if isinstance(value, (int, np.integer)):
        if value < 0:
            raise ValueError(f"{name} must be a non-negative body index, got {value!r}")
        return int(value)
    index = getattr(value, "index", None)
    if isinstance(index, bool) or not isinstance(index, (int, np.integer)):
        raise TypeError(f"{name} must be a Body, a body index or None (the world), got {value!r}")
    return value


def _index_of(ref: Any) -> int:
    if ref is None:
        return -1
    if isinstance(ref, int):
        return ref
    return int(ref.index)


def _check_distinct(name_a: str, a: Any, name_b: str, b: Any) -> None:
    if a is None and b is None:
        raise ValueError(f"{name_a} and {name_b} are both None (the world): a spring needs at least one body")
    if a is None or b is None:
        return
    world_a, world_b = getattr(a, "world", None), getattr(b, "world", None)
    if world_a is not None and world_b is not None and world_a is not world_b:
        raise ValueError(f"{name_b} belongs to a different world than {name_a}, got {name_b}={b!r}")
    if a is b or _index_of(a) == _index_of(b):
        raise ValueError(f"{name_b} must be a different body from {name_a} (a spring between a body and itself "
                         f"exerts no load), got {name_b}={b!r} with index {_index_of(b)}")


def _stiffness3(name: str, value: Any) -> np.ndarray:
    """A non-negative scalar (isotropic) or 3-vector (per axis)."""
    if isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(value, bool):
        return np.full(3, _checks.non_negative(name, value))
    out = _checks.vector3(name, value)
    if np.any(out < 0.0):
        raise ValueError(f"{name} must be non-negative, got {value!r}")
    return out


def _rotation(q: np.ndarray) -> np.ndarray:
    """(…, 4) unit quaternions (w, x, y, z) → (…, 3, 3) body → world rotation matrices."""
    q = np.asarray(q, dtype=np.float64)
    flat = np.ascontiguousarray(q.reshape(-1, 4))
    out = np.empty((flat.shape[0], 3, 3))
    quat_to_matrices(flat, out)
    return out.reshape(q.shape[:-1] + (3, 3))


def _quat_mul(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return np.array([a[0] * b[0] - a[1:] @ b[1:], *(a[0] * b[1:] + b[0] * a[1:] + np.cross(a[1:], b[1:]))])


def _pose_arrays(x: Any, q: Any) -> tuple[np.ndarray, np.ndarray]:
    x = _checks.array("x", x, (None, 3))
    q = _checks.array("q", q, (x.shape[0], 4))
    norms = np.linalg.norm(q, axis=1)
    if np.any(norms < 1e-12):
        raise ValueError(f"q must hold non-zero quaternions, got a zero row at {int(np.argmin(norms))}")
    return x, q / norms[:, None]


def _local_points(bodies: Sequence[Any], points: np.ndarray, x: np.ndarray, q: np.ndarray,
                  name: str) -> np.ndarray:
    """World points → body-local offsets from each body's COM (world points stay as they are)."""
    out = points.copy()
    for j, ref in enumerate(bodies):
        i = _index_of(ref)
        if i < 0:
            continue
        if i >= x.shape[0]:
            raise ValueError(f"{name} refers to body index {i}, but x holds only {x.shape[0]} bodies")
        out[j] = _rotation(q[i]).T @ (points[j] - x[i])
    return out


class MultiPointSpring:
    """A cable from a point on the first body through via points to a point on the last body (ArtiSynth notes
    0.14): one linear tension T = k (L − L0) + d L̇ [N] along the whole path, L [m] the total length; each
    point is pulled along its two adjacent segments, like a frictionless pulley.

    Args:
        bodies: (p,) body references, p ≥ 2, one per point (None = the world: a fixed point).
        points: (p, 3) [m] world positions of the points at creation (stored body-local by ``bind``).
        stiffness: k [N/m] ≥ 0.   damping: d [N s/m] ≥ 0.
        rest_length: L0 [m] ≥ 0; None takes the path length at creation.
    """

    def __init__(self, bodies: Sequence[BodyRef], points: Any, stiffness: float, damping: float = 0.0,
                 rest_length: float | None = None) -> None:
        if isinstance(bodies, (str, bytes)) or not isinstance(bodies, Sequence):
            raise TypeError(f"bodies must be a sequence of bodies (None = the world), got {bodies!r}")
        if len(bodies) < 2:
            raise ValueError(f"bodies must name at least 2 points, got {len(bodies)}: {bodies!r}")
        refs = [_body_ref(f"bodies[{j}]", b) for j, b in enumerate(bodies)]
        pts = _checks.array("points", points, (len(refs), 3))
        k = _checks.non_negative("stiffness", stiffness)
        d = _checks.non_negative("damping", damping)
        length = float(np.sum(np.linalg.norm(np.diff(pts, axis=0), axis=1)))
        rest = length if rest_length is None else _checks.non_negative("rest_length", rest_length)
        movers = [r for r in refs if r is not None]
        if not movers:
            raise ValueError(f"bodies are all None (the world): a spring needs at least one body, got {bodies!r}")
        for j, r in enumerate(refs):
            if r is not None and r is not movers[0]:
                wa, wb = getattr(movers[0], "world", None), getattr(r, "world", None)
                if wa is not None and wb is not None and wa is not wb:
                    raise ValueError(f"bodies[{j}] belongs to a different world than the first body, got {r!r}")
        if len(movers) == len(refs) and len({_index_of(r) for r in movers}) == 1:
            raise ValueError(f"bodies must include two different bodies (or the world): a spring between a body "
                             f"and itself exerts no load, got {bodies!r}")
        self.bodies: list[BodyRef] = refs
        self.points: np.ndarray = pts
        self.stiffness: float = k
        self.damping: float = d
        self.rest_length: float = rest
        self.local_points: np.ndarray | None = None

    @property
    def bound(self) -> bool:
        """True once ``bind`` has stored the body-local points."""
        return self.local_points is not None

    def bind(self, x: Any, q: Any) -> None:
        """Store the points in body coordinates, given body positions x (n, 3) [m] and orientations q (n, 4)
        (w, x, y, z) at creation (the world's arrays)."""
        xa, qa = _pose_arrays(x, q)
        self.local_points = _local_points(self.bodies, self.points, xa, qa, "bodies")

    def _cable(self) -> tuple[list[BodyRef], np.ndarray, float, float, float]:
        return self.bodies, self.local_points, self.stiffness, self.damping, self.rest_length


class AxialSpring:
    """A linear axial spring with damping between a point on body a and a point on body b (ArtiSynth notes
    0.12, 0.12.1): tension T = k (l − l0) + d l̇ [N]; the force on the point of a is T û with û the unit
    vector from it toward the point of b, and −T û on the point of b. It is a ``MultiPointSpring`` of two
    points, and shares its kernels.

    Args:
        a, b: body references (a ``Body``, a body index, or None for the world); not the same body.
        anchor_a, anchor_b: (3,) [m] world points at creation (stored body-local by ``bind``).
        stiffness: k [N/m] ≥ 0.   damping: d [N s/m] ≥ 0.
        rest_length: l0 [m] ≥ 0; None takes the anchor distance at creation (0 when they coincide: the
            spring then has no direction, and exerts no load and no Jacobian while |l| < 1e-12 m).
    """

    def __init__(self, a: BodyRef, b: BodyRef, anchor_a: Any, anchor_b: Any, stiffness: float,
                 damping: float = 0.0, rest_length: float | None = None) -> None:
        a = _body_ref("a", a)
        b = _body_ref("b", b)
        pa = _checks.vector3("anchor_a", anchor_a)
        pb = _checks.vector3("anchor_b", anchor_b)
        k = _checks.non_negative("stiffness", stiffness)
        d = _checks.non_negative("damping", damping)
        rest = float(np.linalg.norm(pb - pa)) if rest_length is None else _checks.non_negative(
            "rest_length", rest_length)
        _check_distinct("a", a, "b", b)
        self.a: BodyRef = a
        self.b: BodyRef = b
        self.anchor_a: np.ndarray = pa
        self.anchor_b: np.ndarray = pb
        self.stiffness: float = k
        self.damping: float = d
        self.rest_length: float = rest
        self.local_a: np.ndarray | None = None
        self.local_b: np.ndarray | None = None

    @property
    def bound(self) -> bool:
        """True once ``bind`` has stored the body-local anchors."""
        return self.local_a is not None

    def bind(self, x: Any, q: Any) -> None:
        """Store the anchors in body coordinates, given body positions x (n, 3) [m] and orientations q (n, 4)
        (w, x, y, z) at creation (the world's arrays)."""
        xa, qa = _pose_arrays(x, q)
        local = _local_points([self.a, self.b], np.stack([self.anchor_a, self.anchor_b]), xa, qa, "a or b")
        self.local_a, self.local_b = local[0], local[1]

    def _cable(self) -> tuple[list[BodyRef], np.ndarray, float, float, float]:
        return [self.a, self.b], np.stack([self.local_a, self.local_b]), self.stiffness, self.damping, \
            self.rest_length


class FrameSpring:
    """A 6-DOF spring between a frame fixed on body a and a frame fixed on body b (ArtiSynth notes 0.22).

    At creation both frames sit at ``frame_point`` with orientation ``frame_orientation`` (world), which is the
    rest pose. Later, with d = R_Aᵀ (p_B − p_A) the offset of frame B's origin in frame-A axes, φ the rotation
    vector of R_Aᵀ R_B (frame-A axes, |φ| ≤ π), and velocities taken at the material points:
      force on b at p_B:  f_B = −R_A (k_t ∘ d) − R_A (d_t ∘ R_Aᵀ (ṗ_B − ṗ_A))   [N]
      torque on b:        τ_B = −R_A (k_r ∘ φ) − R_A (d_r ∘ R_Aᵀ (ω_b − ω_a))   [N m]
    and −f_B (at p_B) and −τ_B on a, so the pair balances in force and moment.

    Args:
        a, b: body references (a ``Body``, a body index, or None for the world); not the same body.
        frame_point: (3,) [m] world position of both frame origins at creation.
        stiffness: k_t [N/m], scalar or (3,) per frame-A axis, ≥ 0.   damping: d_t [N s/m], likewise.
        rotational_stiffness: k_r [N m/rad], scalar or (3,).   rotational_damping: d_r [N m s/rad].
        frame_orientation: (4,) quaternion (w, x, y, z) of the frames at creation, world; normalized.
    """

    def __init__(self, a: BodyRef, b: BodyRef, frame_point: Any, stiffness: Any, damping: Any = 0.0,
                 rotational_stiffness: Any = 0.0, rotational_damping: Any = 0.0,
                 frame_orientation: Any = (1.0, 0.0, 0.0, 0.0)) -> None:
        a = _body_ref("a", a)
        b = _body_ref("b", b)
        p = _checks.vector3("frame_point", frame_point)
        kt = _stiffness3("stiffness", stiffness)
        dt = _stiffness3("damping", damping)
        kr = _stiffness3("rotational_stiffness", rotational_stiffness)
        dr = _stiffness3("rotational_damping", rotational_damping)
        qf = _checks.quaternion("frame_orientation", frame_orientation)
        _check_distinct("a", a, "b", b)
        self.a: BodyRef = a
        self.b: BodyRef = b
        self.frame_point: np.ndarray = p
        self.frame_orientation: np.ndarray = qf
        self.stiffness: np.ndarray = kt
        self.damping: np.ndarray = dt
        self.rotational_stiffness: np.ndarray = kr
        self.rotational_damping: np.ndarray = dr
        self.local_pos: np.ndarray | None = None
        self.local_rot: np.ndarray | None = None

    @property
    def bound(self) -> bool:
        """True once ``bind`` has stored the frames in body coordinates."""
        return self.local_pos is not None

    def bind(self, x: Any, q: Any) -> None:
        """Store each body's frame (origin (3,) and orientation (4,)) in its body coordinates, given body
        positions x (n, 3) [m] and orientations q (n, 4) at creation (the world's arrays)."""
        xa, qa = _pose_arrays(x, q)
        pos = _local_points([self.a, self.b], np.stack([self.frame_point, self.frame_point]), xa, qa, "a or b")
        rot = np.empty((2, 4))
        for j, ref in enumerate((self.a, self.b)):
            i = _index_of(ref)
            qb = np.array([1.0, 0.0, 0.0, 0.0]) if i < 0 else qa[i] * np.array([1.0, -1.0, -1.0, -1.0])
            rot[j] = _quat_mul(qb, self.frame_orientation)
        self.local_pos, self.local_rot = pos, rot


Spring = AxialSpring | MultiPointSpring | FrameSpring


@dataclass
class SpringArrays:
    """All springs of a scene as flat arrays for the kernels (STYLE.md pattern 2: entity-prefixed names).

    Cables (axial springs are 2-point cables), c cables with p points in all:
      cable_ptr (c+1,) int64: points of cable i are cable_ptr[i] … cable_ptr[i+1]−1, in path order;
      cable_point_body (p,) int64 (−1 = world); cable_point_local (p, 3) [m] body frame (world frame for −1);
      cable_stiffness [N/m], cable_damping [N s/m], cable_rest_length [m]: (c,);
      cable_block_ptr (c+1,) int64: Jacobian blocks of cable i start at cable_block_ptr[i] (p_i² of them).
    Frame springs, f of them:
      frame_body (f, 2) int64 (a, b); frame_pos (f, 2, 3) [m] and frame_rot (f, 2, 4) frames in body coordinates;
      frame_stiffness [N/m], frame_damping [N s/m], frame_rot_stiffness [N m/rad], frame_rot_damping
      [N m s/rad]: (f, 3), diagonals in frame-A axes;
      frame_block_start: first of the 4 f frame blocks (after all cable blocks).
    block_count: total number of 6×6 Jacobian blocks.
    Scratch of the load and Jacobian kernels, made once here so that a step allocates nothing: cable_work
    (7, most, 3) and cable_work_len (most,) with most the points of the longest cable (at least 2);
    frame_work_vec (14, 3) and frame_work_mat (5, 3, 3); jacobian_m33 (7, 3, 3), jacobian_m36 (2, 3, 6),
    jacobian_v3 (3,), frame_jacobian_blocks (6, 4, 3, 3).
    The kernels take these arrays as three namedtuples, ``cables`` (``CableArrays``), ``frames``
    (``FrameArrays``) and ``scratch`` (``SpringScratch``): the same arrays, not copies.
    """

    cable_ptr: np.ndarray
    cable_point_body: np.ndarray
    cable_point_local: np.ndarray
    cable_stiffness: np.ndarray
    cable_damping: np.ndarray
    cable_rest_length: np.ndarray
    cable_block_ptr: np.ndarray
    frame_body: np.ndarray
    frame_pos: np.ndarray
    frame_rot: np.ndarray
    frame_stiffness: np.ndarray
    frame_damping: np.ndarray
    frame_rot_stiffness: np.ndarray
    frame_rot_damping: np.ndarray
    frame_block_start: int
    block_count: int
    cable_work: np.ndarray
    cable_work_len: np.ndarray
    frame_work_vec: np.ndarray
    frame_work_mat: np.ndarray
    jacobian_m33: np.ndarray
    jacobian_m36: np.ndarray
    jacobian_v3: np.ndarray
    frame_jacobian_blocks: np.ndarray

    SCRATCH = ("cable_work", "cable_work_len", "frame_work_vec", "frame_work_mat", "jacobian_m33", "jacobian_m36",
               "jacobian_v3", "frame_jacobian_blocks")
    """The fields that are the kernels' scratch, not the springs' data."""

    @property
    def cables(self) -> CableArrays:
        """The cable arrays as the kernels take them (the same arrays, no copy)."""
        return CableArrays(self.cable_ptr, self.cable_point_body, self.cable_point_local, self.cable_stiffness,
                           self.cable_damping, self.cable_rest_length, self.cable_block_ptr)

    @property
    def frames(self) -> FrameArrays:
        """The frame-spring arrays as the kernels take them (the same arrays, no copy)."""
        return FrameArrays(self.frame_body, self.frame_pos, self.frame_rot, self.frame_stiffness, self.frame_damping,
                           self.frame_rot_stiffness, self.frame_rot_damping)

    @property
    def scratch(self) -> SpringScratch:
        """The kernels' scratch arrays (the same arrays, no copy)."""
        return SpringScratch(self.cable_work, self.cable_work_len, self.frame_work_vec, self.frame_work_mat,
                             self.jacobian_m33, self.jacobian_m36, self.jacobian_v3, self.frame_jacobian_blocks)

    @property
    def max_body(self) -> int:
        """Largest body index referenced (−1 if none)."""
        most = int(self.cable_point_body.max(initial=-1))
        return max(most, int(self.frame_body.max(initial=-1)))


def pack_springs(springs: Sequence[Spring]) -> SpringArrays:
    """Flatten bound springs into ``SpringArrays``. Body indices are read from the handles now, so pack again
    after bodies are removed (a handle's index moves). Raises TypeError for a non-spring and ValueError for a
    spring not yet bound (call ``spring.bind(x, q)`` at creation)."""
    cables = []
    frames = []
    for i, s in enumerate(springs):
        if not isinstance(s, (AxialSpring, MultiPointSpring, FrameSpring)):
            raise TypeError(f"springs[{i}] must be an AxialSpring, MultiPointSpring or FrameSpring, got {s!r}")
        if not s.bound:
            raise ValueError(f"springs[{i}] is not bound to body poses: call springs[{i}].bind(x, q) first")
        (frames if isinstance(s, FrameSpring) else cables).append(s)
    rows = [c._cable() for c in cables]
    counts = np.array([len(r[0]) for r in rows], dtype=np.int64)
    cable_ptr = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)
    cable_block_ptr = np.concatenate([[0], np.cumsum(counts * counts)]).astype(np.int64)
    point_body = np.array([_index_of(b) for r in rows for b in r[0]], dtype=np.int64)
    point_local = np.concatenate([r[1] for r in rows]).astype(FLOAT) if rows else np.zeros((0, 3))
    nf = len(frames)
    frame_start = int(cable_block_ptr[-1])
    most = int(counts.max(initial=2))   # at least 2: an empty scene still gets usable scratch
    return SpringArrays(
        cable_ptr=cable_ptr,
        cable_point_body=point_body,
        cable_point_local=np.ascontiguousarray(point_local),
        cable_stiffness=np.array([r[2] for r in rows], dtype=FLOAT),
        cable_damping=np.array([r[3] for r in rows], dtype=FLOAT),
        cable_rest_length=np.array([r[4] for r in rows], dtype=FLOAT),
        cable_block_ptr=cable_block_ptr,
        frame_body=np.array([[_index_of(f.a), _index_of(f.b)] for f in frames], dtype=np.int64).reshape(nf, 2),
        frame_pos=np.array([f.local_pos for f in frames], dtype=FLOAT).reshape(nf, 2, 3),
        frame_rot=np.array([f.local_rot for f in frames], dtype=FLOAT).reshape(nf, 2, 4),
        frame_stiffness=np.array([f.stiffness for f in frames], dtype=FLOAT).reshape(nf, 3),
        frame_damping=np.array([f.damping for f in frames], dtype=FLOAT).reshape(nf, 3),
        frame_rot_stiffness=np.array([f.rotational_stiffness for f in frames], dtype=FLOAT).reshape(nf, 3),
        frame_rot_damping=np.array([f.rotational_damping for f in frames], dtype=FLOAT).reshape(nf, 3),
        frame_block_start=frame_start,
        block_count=frame_start + 4 * nf,
        cable_work=np.empty((7, most, 3)),
        cable_work_len=np.empty(most),
        frame_work_vec=np.empty((14, 3)),
        frame_work_mat=np.empty((5, 3, 3)),
        jacobian_m33=np.empty((7, 3, 3)),
        jacobian_m36=np.empty((2, 3, 6)),
        jacobian_v3=np.empty(3),
        frame_jacobian_blocks=np.zeros((6, 4, 3, 3)),
    )


def _check_state(springs: SpringArrays, x: np.ndarray, q: np.ndarray, v: np.ndarray, w: np.ndarray) -> None:
    if not isinstance(springs, SpringArrays):
        raise TypeError(f"springs must be SpringArrays (from pack_springs), got {type(springs).__name__}")
    n = x.shape[0] if isinstance(x, np.ndarray) and x.ndim == 2 else -1
    for name, arr, width in (("x", x, 3), ("q", q, 4), ("v", v, 3), ("w", w, 3)):
        if not isinstance(arr, np.ndarray) or arr.dtype != FLOAT or arr.shape != (n, width):
            raise ValueError(f"{name} must be a float64 array of shape ({n}, {width}), got "
                             f"{getattr(arr, 'shape', arr)!r}")
    if springs.max_body >= n:
        raise ValueError(f"springs refer to body {springs.max_body}, but x holds only {n} bodies")


def spring_loads(springs: SpringArrays, x: np.ndarray, q: np.ndarray, v: np.ndarray, w: np.ndarray,
                 force_out: np.ndarray, torque_out: np.ndarray) -> None:
    """Add every spring's force [N] and torque about the COM [N m] (world frame) to ``force_out`` and
    ``torque_out`` (n, 3). State: x, v, w (n, 3), q (n, 4), float64 (the world's arrays)."""
    _check_state(springs, x, q, v, w)
    for name, arr in (("force_out", force_out), ("torque_out", torque_out)):
        if not isinstance(arr, np.ndarray) or arr.dtype != FLOAT or arr.shape != x.shape:
            raise ValueError(f"{name} must be a float64 array of shape {x.shape}, got {getattr(arr, 'shape', arr)!r}")
    scratch = springs.scratch
    cable_loads(springs.cables, x, q, v, w, force_out, torque_out, scratch)
    frame_loads(springs.frames, x, q, v, w, force_out, torque_out, scratch)


def spring_jacobian_blocks(springs: SpringArrays, x: np.ndarray, q: np.ndarray, v: np.ndarray,
                           w: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Position and velocity Jacobians of all springs as 6×6 blocks: (block_row (nb,), block_col (nb,),
    K_blocks (nb, 6, 6), D_blocks (nb, 6, 6)). Block i adds ∂(f, τ)_{block_row}/∂(δx, δθ)_{block_col} (K) and
    ∂(f, τ)_{block_row}/∂(v, ω)_{block_col} (D); skip blocks with a −1 index; sum blocks of one body pair."""
    _check_state(springs, x, q, v, w)
    s = springs
    nb = s.block_count
    row = np.empty(nb, dtype=np.int64)
    col = np.empty(nb, dtype=np.int64)
    K = np.empty((nb, 6, 6))
    D = np.empty((nb, 6, 6))
    scratch = s.scratch
    cable_jacobian_blocks(s.cables, x, q, v, w, (row, col, K, D), scratch)
    frame_jacobian_blocks(s.frames, s.frame_block_start, x, q, v, w, (row, col, K, D), scratch)
    return row, col, K, D


def spring_jacobians(springs: SpringArrays, x: np.ndarray, q: np.ndarray, v: np.ndarray,
                     w: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Dense position and velocity Jacobians (K, D), each (6n, 6n), body i at rows and columns 6i … 6i+5 in
    the order (x, θ) / (v, ω) for columns and (f, τ) for rows (module docstring). For small systems and tests."""
    row, col, Kb, Db = spring_jacobian_blocks(springs, x, q, v, w)
    n = x.shape[0]
    dof = np.arange(n, dtype=np.int64) * 6
    K = np.zeros((6 * n, 6 * n))
    D = np.zeros((6 * n, 6 * n))
    scatter_blocks(row, col, Kb, dof, 1.0, K)
    scatter_blocks(row, col, Db, dof, 1.0, D)
    return K, D


def spring_potential_energy(springs: SpringArrays, x: np.ndarray, q: np.ndarray) -> float:
    """Total elastic energy [J]: ½ k (L − L0)² per cable and ½ dᵀ k_t d + ½ φᵀ k_r φ per frame spring."""
    _check_state(springs, x, q, np.zeros_like(x), np.zeros_like(x))
    s = springs
    ec = np.empty(s.cable_stiffness.shape[0])
    ef = np.empty(s.frame_body.shape[0])
    cable_energy(s.cables, x, q, ec)
    frame_energy(s.frames, x, q, ef)
    return float(ec.sum() + ef.sum())
