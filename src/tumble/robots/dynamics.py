"""Recursive dynamics of an articulation in reduced coordinates (Featherstone, *Rigid Body Dynamics
Algorithms*, 2008; the single-body half in Modern Robotics ch. 8, seed 003).

Spatial vectors are 6-vectors with the angular part first, as tumble's twists and wrenches (spatial.py):
a motion (ω, v) and a force (n, f). Link i's frame is placed in its parent's by the transform ``(E_i, r_i)``:
E_i (3, 3) maps parent coordinates to link coordinates and r_i (3,) is the link's origin in parent coordinates
(Featherstone §2.8, Plücker transform ⁱX_λ(i)):

    X m = (E ω, E (v − r × ω))                 (motion, parent → link; Featherstone (2.24))
    Xᵀ f = (Eᵀ n + r × Eᵀ f, Eᵀ f)             (force, link → parent)

``aba``, ``crba`` and ``rnea`` work in world axes about the origin of each tree's root link (``_world_link``):
each link's quantities are carried there once, and what passes between a link and its parent are then sums, not
transforms.

Every joint's motion subspace S (6 × nᵢ, the link's frame) is constant (robots/tree.py), so the joint's
velocity-product term c_J = S̊ q̇ in the link frame is zero (Featherstone §4.4; in world axes the columns move
with the link, and the kernels' velocity product is cᵢ = vᵢ ×ₘ Sᵢ q̇ᵢ): revolute (axis, 0), prismatic (0, axis),
spherical (I, 0) (q̇ = ω in the link frame) and floating (q̇ = (v, ω), the link's own velocity in its own
frame, linear part first as in Pinocchio). Gravity enters as a fictitious base acceleration
a₀ = (0, −g) (Featherstone §5.3).

The kernels take the tree's arrays (``tree.Tree``) and a ``Work`` of preallocated scratch rows, so that a
step allocates nothing: ``kinematics`` (the transforms and world poses; ``link_velocities`` the links'
velocities), ``rnea`` (inverse dynamics, Table 5.1), ``crba`` (the joint-space mass matrix, Table 6.2),
``ltdl_factor`` / ``ltdl_solve`` (its sparse factorization H = Lᵀ D L over the expanded parent array, Tables 6.3
and 6.4) and ``aba`` (forward dynamics, Table 7.1).
"""

from __future__ import annotations

from collections import namedtuple

import numpy as np

from ..conventions import JOINT_BALL, JOINT_FIXED, JOINT_FREE, JOINT_HINGE, JOINT_SLIDER
from ..jit import FMA as _FMA
from ..jit import njit, view
from ..math3d import quat_to_matrix

SPHERICAL, REVOLUTE, PRISMATIC, FIXED, FLOATING = JOINT_BALL, JOINT_HINGE, JOINT_SLIDER, JOINT_FIXED, JOINT_FREE
"""A tree's joint codes: the World's joint types (conventions.py) under URDF's names."""
JOINT_CODES = {"fixed": FIXED, "revolute": REVOLUTE, "continuous": REVOLUTE, "prismatic": PRISMATIC,
               "spherical": SPHERICAL, "floating": FLOATING}
NQ = (4, 1, 1, 0, 7)
"""Sizes of q per joint code (spherical, revolute, prismatic, fixed, floating)."""
NV = (3, 1, 1, 0, 6)
"""Sizes of q̇ per joint code."""

Work = namedtuple("Work", ["E", "r", "R_world", "p_world", "vel", "acc", "force", "inertia", "bias",
                           "U", "D_inv", "u", "c", "tmp", "tmp6", "vecs", "mat", "gauss", "R3", "flags",
                           "S_world", "origin"])
"""Scratch rows of one articulation of L links and nv velocities (``new_work``): E (L, 3, 3), r (L, 3) the
link-from-parent transforms; R_world (L, 3, 3) (link → world) and p_world (L, 3) [m] the links' world poses;
vel, acc, force (L, 6) the links' spatial velocities [rad/s, m/s], accelerations and forces (``link_velocities``'
in the links' own frames; the dynamics kernels' in world axes about their tree's root origin); inertia
(L, 6, 6) composite or articulated inertias (upper triangles, the same axes); bias (L, 6) articulated bias
forces; U (L, 6, 6), D_inv (L, 6, 6), u (L, 6) the ABA's joint-space terms (U's row j the column of Uᵢ for the
link's j-th velocity; a one-velocity link's u holds uᵢ − Uᵢᵀ cᵢ, what the ABA's last pass reads); c (L, 6)
velocity-product accelerations; S_world (L, 6, 6) the links' motion subspace columns in the same axes
(``_world_link``; row j for velocity j); origin (L, 3) [m] the point each link's tree is taken about
(``_link_origin``); tmp (6, 6), tmp6 (6,), vecs (8, 6), mat (6, 6), gauss (6, 12), R3 (3, 3) the kernels' own
scratch (they allocate nothing); flags (1,): 1.0 while E, r, R_world, p_world hold the kinematics of the current
q (robots/step.py reuses them)."""


def work_size(links: int) -> int:
    """Floats in the buffer of a ``Work`` for ``links`` links (``work_views``)."""
    return links * (9 + 3 + 9 + 3 + 6 * 3 + 36 + 6 + 36 + 36 + 6 + 6 + 36 + 3) + 36 + 6 + 48 + 36 + 72 + 9 + 1


@njit(cache=True, inline="always")   # returns views (tree.tree_views)
def work_views(wf, L):
    """The ``Work`` of an articulation of L links as views into the float buffer ``wf`` (``work_size``): one
    buffer passes to a kernel for the price of one array (robots/tree.py, "packed storage")."""
    o = 0
    E = view(wf, o, (L, 3, 3))
    o += 9 * L
    r = view(wf, o, (L, 3))
    o += 3 * L
    R_world = view(wf, o, (L, 3, 3))
    o += 9 * L
    p_world = view(wf, o, (L, 3))
    o += 3 * L
    vel = view(wf, o, (L, 6))
    o += 6 * L
    acc = view(wf, o, (L, 6))
    o += 6 * L
    force = view(wf, o, (L, 6))
    o += 6 * L
    inertia = view(wf, o, (L, 6, 6))
    o += 36 * L
    bias = view(wf, o, (L, 6))
    o += 6 * L
    U = view(wf, o, (L, 6, 6))
    o += 36 * L
    D_inv = view(wf, o, (L, 6, 6))
    o += 36 * L
    u = view(wf, o, (L, 6))
    o += 6 * L
    c = view(wf, o, (L, 6))
    o += 6 * L
    tmp = view(wf, o, (6, 6))
    o += 36
    tmp6 = wf[o:o + 6]
    o += 6
    vecs = view(wf, o, (8, 6))
    o += 48
    mat = view(wf, o, (6, 6))
    o += 36
    gauss = view(wf, o, (6, 12))
    o += 72
    R3 = view(wf, o, (3, 3))
    o += 9
    flags = wf[o:o + 1]
    o += 1
    return Work(E, r, R_world, p_world, vel, acc, force, inertia, bias, U, D_inv, u, c, tmp, tmp6, vecs, mat,
                gauss, R3, flags, view(wf, o, (L, 6, 6)), view(wf, o + 36 * L, (L, 3)))


def new_work(links: int) -> Work:
    """A ``Work`` for an articulation of ``links`` links (views into one zeroed buffer)."""
    return work_views(np.zeros(work_size(links)), links)


@njit(cache=True, forceinline=True, refcount=False, fastmath=_FMA)
def _motion_to_child(E, r, m, out):
    """out = X m for a motion m (6,) of the parent (module docstring)."""
    wx, wy, wz = m[0], m[1], m[2]
    vx = m[3] - (r[1] * wz - r[2] * wy)
    vy = m[4] - (r[2] * wx - r[0] * wz)
    vz = m[5] - (r[0] * wy - r[1] * wx)
    for a in range(3):
        out[a] = E[a, 0] * wx + E[a, 1] * wy + E[a, 2] * wz
        out[3 + a] = E[a, 0] * vx + E[a, 1] * vy + E[a, 2] * vz


@njit(cache=True, forceinline=True, refcount=False, fastmath=_FMA)
def _transpose_times(E, x0, x1, x2):
    """Eᵀ x for a 3 × 3 E and x = (x0, x1, x2), as three numbers."""
    return (E[0, 0] * x0 + E[1, 0] * x1 + E[2, 0] * x2, E[0, 1] * x0 + E[1, 1] * x1 + E[2, 1] * x2,
            E[0, 2] * x0 + E[1, 2] * x1 + E[2, 2] * x2)


@njit(cache=True, forceinline=True, refcount=False, fastmath=_FMA)
def _rotate(R, x0, x1, x2):
    """R x for a 3 × 3 R and x = (x0, x1, x2), as three numbers."""
    return (R[0, 0] * x0 + R[0, 1] * x1 + R[0, 2] * x2, R[1, 0] * x0 + R[1, 1] * x1 + R[1, 2] * x2,
            R[2, 0] * x0 + R[2, 1] * x1 + R[2, 2] * x2)


@njit(cache=True, forceinline=True, refcount=False, fastmath=_FMA)
def _times_E(E, m):
    """M E for a 3 × 3 M given by its 9 entries row by row, returned the same way."""
    m00, m01, m02, m10, m11, m12, m20, m21, m22 = m
    return (m00 * E[0, 0] + m01 * E[1, 0] + m02 * E[2, 0], m00 * E[0, 1] + m01 * E[1, 1] + m02 * E[2, 1],
            m00 * E[0, 2] + m01 * E[1, 2] + m02 * E[2, 2], m10 * E[0, 0] + m11 * E[1, 0] + m12 * E[2, 0],
            m10 * E[0, 1] + m11 * E[1, 1] + m12 * E[2, 1], m10 * E[0, 2] + m11 * E[1, 2] + m12 * E[2, 2],
            m20 * E[0, 0] + m21 * E[1, 0] + m22 * E[2, 0], m20 * E[0, 1] + m21 * E[1, 1] + m22 * E[2, 1],
            m20 * E[0, 2] + m21 * E[1, 2] + m22 * E[2, 2])


@njit(cache=True, forceinline=True, refcount=False, fastmath=_FMA)
def _rotate_symmetric(E, S):
    """The upper triangle (s00, s01, s02, s11, s12, s22) of Eᵀ S E for a symmetric S given the same way."""
    s00, s01, s02, s11, s12, s22 = S
    t00, t01, t02, t10, t11, t12, t20, t21, t22 = _times_E(E, (s00, s01, s02, s01, s11, s12, s02, s12, s22))
    return (E[0, 0] * t00 + E[1, 0] * t10 + E[2, 0] * t20,
            E[0, 0] * t01 + E[1, 0] * t11 + E[2, 0] * t21,
            E[0, 0] * t02 + E[1, 0] * t12 + E[2, 0] * t22,
            E[0, 1] * t01 + E[1, 1] * t11 + E[2, 1] * t21,
            E[0, 1] * t02 + E[1, 1] * t12 + E[2, 1] * t22,
            E[0, 2] * t02 + E[1, 2] * t12 + E[2, 2] * t22)


@njit(cache=True, forceinline=True, refcount=False, fastmath=_FMA)
def _rigid_parts(E, r0, r1, r2, inertia):
    """Xᵀ I X for a rigid body's inertia I = [[Ī, h×], [h×ᵀ, m 1]] about a link's origin (Featherstone (2.63))
    and the transform (E, r = (r0, r1, r2)) of the module docstring, by the rigid structure (about a third of
    the work of a general symmetric I's (2.66)): with h₁ = Eᵀ h and Ī₁ = Eᵀ Ī E, the new frame sees m,
    h' = h₁ + m r and Ī' = Ī₁ − r h₁ᵀ − h₁ rᵀ − m r rᵀ + (2 h₁·r + m |r|²) 1 ((2.66) with a× b× = b aᵀ − (a·b) 1).
    m is read as I[3, 3], h from I's upper right block h× (I[2, 4], I[0, 5], I[1, 3]), Ī from its upper
    triangle. Returns (m, h'₀, h'₁, h'₂) and Ī''s upper triangle (P00, P01, P02, P11, P12, P22)."""
    I = inertia
    m = I[3, 3]
    A00, A01, A02, A11, A12, A22 = _rotate_symmetric(E, (I[0, 0], I[0, 1], I[0, 2], I[1, 1], I[1, 2], I[2, 2]))
    g0, g1, g2 = _transpose_times(E, I[2, 4], I[0, 5], I[1, 3])
    diag = 2.0 * (g0 * r0 + g1 * r1 + g2 * r2) + m * (r0 * r0 + r1 * r1 + r2 * r2)
    P00 = A00 - 2.0 * r0 * g0 - m * r0 * r0 + diag
    P11 = A11 - 2.0 * r1 * g1 - m * r1 * r1 + diag
    P22 = A22 - 2.0 * r2 * g2 - m * r2 * r2 + diag
    P01 = A01 - r0 * g1 - g0 * r1 - m * r0 * r1
    P02 = A02 - r0 * g2 - g0 * r2 - m * r0 * r2
    P12 = A12 - r1 * g2 - g1 * r2 - m * r1 * r2
    return m, g0 + m * r0, g1 + m * r1, g2 + m * r2, P00, P01, P02, P11, P12, P22


@njit(cache=True, forceinline=True, refcount=False, fastmath=_FMA)
def _link_origin(parent, work, i):
    """o for link i, the point the world-axes kernels work about: the origin of its tree's root (a robot far from
    the world origin, or from the other robots of the forest, is then as well conditioned as one at it; every
    link of a tree must use the same o, since its quantities are summed), as three numbers. Kept in
    work.origin[i] for its children: call in topological order (a parent before its children)."""
    p = parent[i]
    o = work.origin
    if p < 0:
        o[i, 0], o[i, 1], o[i, 2] = work.p_world[i, 0], work.p_world[i, 1], work.p_world[i, 2]
    else:
        o[i, 0], o[i, 1], o[i, 2] = o[p, 0], o[p, 1], o[p, 2]
    return o[i, 0], o[i, 1], o[i, 2]


@njit(cache=True, forceinline=True, refcount=False, fastmath=_FMA)
def _world_link(tree, work, i):
    """Link i in world axes about its tree's root origin o (``_link_origin``; call in topological order), after
    ``kinematics`` (the frame of ``aba``, ``crba`` and ``rnea``): its motion subspace columns Sᵢ = X⁻¹ Sᵢ^link,
    (R ω, R v + x × R ω) with x = pᵢ − o, into work.S_world[i] (row j for its j-th velocity), and its spatial
    inertia about o (Featherstone (2.63)) returned as (m, h₀, h₁, h₂, Ī₀₀, Ī₀₁, Ī₀₂, Ī₁₁, Ī₁₂, Ī₂₂)
    (``_rigid_parts`` with the transform E = Rᵀ, r = x)."""
    o0, o1, o2 = _link_origin(tree.parent, work, i)
    R, S, Sw = work.R_world[i], tree.S, work.S_world
    x0, x1, x2 = work.p_world[i, 0] - o0, work.p_world[i, 1] - o1, work.p_world[i, 2] - o2
    for j in range(tree.nv_link[i]):
        d = tree.v_start[i] + j
        w0, w1, w2 = _rotate(R, S[d, 0], S[d, 1], S[d, 2])
        l0, l1, l2 = _rotate(R, S[d, 3], S[d, 4], S[d, 5])
        s = Sw[i, j]
        s[0], s[1], s[2] = w0, w1, w2
        s[3], s[4], s[5] = l0 + x1 * w2 - x2 * w1, l1 + x2 * w0 - x0 * w2, l2 + x0 * w1 - x1 * w0
    return _rigid_parts(R.T, x0, x1, x2, tree.spatial_inertia[i])


@njit(cache=True, forceinline=True, refcount=False, fastmath=_FMA)
def _joint_motion(Sw, n, x, d0):
    """Σⱼ Sw[j] x[d0 + j] over a link's n velocities (its joint's motion for velocities x), as six numbers."""
    j0 = j1 = j2 = j3 = j4 = j5 = 0.0
    for j in range(n):
        s, xj = Sw[j], x[d0 + j]
        j0, j1, j2 = j0 + s[0] * xj, j1 + s[1] * xj, j2 + s[2] * xj
        j3, j4, j5 = j3 + s[3] * xj, j4 + s[4] * xj, j5 + s[5] * xj
    return j0, j1, j2, j3, j4, j5


@njit(cache=True, forceinline=True, refcount=False, fastmath=_FMA)
def _rigid_times(inertia, v0, v1, v2, v3, v4, v5):
    """I v for a rigid inertia I = [[Ī, h×], [h×ᵀ, m 1]] given as ``_world_link`` returns it,
    (m, h₀, h₁, h₂, Ī₀₀, Ī₀₁, Ī₀₂, Ī₁₁, Ī₁₂, Ī₂₂), and a motion v = (ω, v): (Ī ω + h × v, m v − h × ω), as six
    numbers."""
    m, h0, h1, h2, A00, A01, A02, A11, A12, A22 = inertia
    return (A00 * v0 + A01 * v1 + A02 * v2 + (h1 * v5 - h2 * v4),
            A01 * v0 + A11 * v1 + A12 * v2 + (h2 * v3 - h0 * v5),
            A02 * v0 + A12 * v1 + A22 * v2 + (h0 * v4 - h1 * v3),
            m * v3 - (h1 * v2 - h2 * v1), m * v4 - (h2 * v0 - h0 * v2), m * v5 - (h0 * v1 - h1 * v0))


@njit(cache=True, forceinline=True, refcount=False, fastmath=_FMA)
def _store_rigid(out, inertia):
    """The upper triangle of out (6, 6) = [[Ī, h×], [h×ᵀ, m 1]] (Featherstone (2.63)) for a rigid inertia given
    as ``_world_link`` returns it."""
    m, h0, h1, h2, A00, A01, A02, A11, A12, A22 = inertia
    out[0, 0], out[0, 1], out[0, 2], out[1, 1], out[1, 2], out[2, 2] = A00, A01, A02, A11, A12, A22
    out[0, 3], out[0, 4], out[0, 5] = 0.0, -h2, h1
    out[1, 3], out[1, 4], out[1, 5] = h2, 0.0, -h0
    out[2, 3], out[2, 4], out[2, 5] = -h1, h0, 0.0
    out[3, 3], out[3, 4], out[3, 5], out[4, 4], out[4, 5], out[5, 5] = m, 0.0, 0.0, m, 0.0, m


@njit(cache=True, forceinline=True, refcount=False, fastmath=_FMA)
def _cross_motion(v0, v1, v2, v3, v4, v5, m0, m1, m2, m3, m4, m5):
    """v ×ₘ m for motions v and m (Featherstone (2.31)), as six numbers."""
    return (v1 * m2 - v2 * m1, v2 * m0 - v0 * m2, v0 * m1 - v1 * m0, v1 * m5 - v2 * m4 + v4 * m2 - v5 * m1,
            v2 * m3 - v0 * m5 + v5 * m0 - v3 * m2, v0 * m4 - v1 * m3 + v3 * m1 - v4 * m0)


@njit(cache=True, forceinline=True, refcount=False, fastmath=_FMA)
def _cross_force(v0, v1, v2, v3, v4, v5, f0, f1, f2, f3, f4, f5):
    """v ×* f for a motion v and a force f (Featherstone (2.32)), as six numbers."""
    return (v1 * f2 - v2 * f1 + v4 * f5 - v5 * f4, v2 * f0 - v0 * f2 + v5 * f3 - v3 * f5,
            v0 * f1 - v1 * f0 + v3 * f4 - v4 * f3, v1 * f5 - v2 * f4, v2 * f3 - v0 * f5, v0 * f4 - v1 * f3)


@njit(cache=True, forceinline=True, refcount=False, fastmath=_FMA)
def _symmetric_times(C, s):
    """C s for a symmetric C (6, 6) given by its upper triangle (C[a, b], a ≤ b) and s (6,), as six numbers."""
    s0, s1, s2, s3, s4, s5 = s[0], s[1], s[2], s[3], s[4], s[5]
    return (C[0, 0] * s0 + C[0, 1] * s1 + C[0, 2] * s2 + C[0, 3] * s3 + C[0, 4] * s4 + C[0, 5] * s5,
            C[0, 1] * s0 + C[1, 1] * s1 + C[1, 2] * s2 + C[1, 3] * s3 + C[1, 4] * s4 + C[1, 5] * s5,
            C[0, 2] * s0 + C[1, 2] * s1 + C[2, 2] * s2 + C[2, 3] * s3 + C[2, 4] * s4 + C[2, 5] * s5,
            C[0, 3] * s0 + C[1, 3] * s1 + C[2, 3] * s2 + C[3, 3] * s3 + C[3, 4] * s4 + C[3, 5] * s5,
            C[0, 4] * s0 + C[1, 4] * s1 + C[2, 4] * s2 + C[3, 4] * s3 + C[4, 4] * s4 + C[4, 5] * s5,
            C[0, 5] * s0 + C[1, 5] * s1 + C[2, 5] * s2 + C[3, 5] * s3 + C[4, 5] * s4 + C[5, 5] * s5)


@njit(cache=True, forceinline=True, refcount=False, fastmath=_FMA)
def _dot6(s, f0, f1, f2, f3, f4, f5):
    """s · f for s (6,) and f given as six numbers."""
    return s[0] * f0 + s[1] * f1 + s[2] * f2 + s[3] * f3 + s[4] * f4 + s[5] * f5


@njit(cache=True, forceinline=True, refcount=False, fastmath=_FMA)
def transforms(tree, q, work):
    """The transforms of every link (module docstring) at joint positions ``q`` (nq,), into work.E, work.r: link
    i's joint places it in parent[i]'s frame (−1: the world) by the fixed origin (origin_R (L, 3, 3) joint →
    parent, origin_p (L, 3) [m]) and then the joint's own motion. ``kinematics`` adds the world poses, which the
    dynamics kernels read."""
    jtype, axis, origin_R, origin_p, q_start = tree.jtype, tree.axis, tree.origin_R, tree.origin_p, tree.q_start
    E, r, Rj = work.E, work.r, work.R3
    for i in range(jtype.shape[0]):
        k = q_start[i]
        t0 = 0.0
        t1 = 0.0
        t2 = 0.0
        code = jtype[i]
        if code == REVOLUTE:
            # Ro Rj = Ro + sin q (Ro K) + (1 − cos q) (Ro K²) (Rodrigues; tree.origin_RK, origin_RK2)
            sn, cs = np.sin(q[k]), np.cos(q[k])
            cs = 1.0 - cs
            Ro, RK, RK2 = origin_R[i], tree.origin_RK[i], tree.origin_RK2[i]
            for a in range(3):
                r[i, a] = origin_p[i, a]
                for b in range(3):
                    E[i, b, a] = Ro[a, b] + sn * RK[a, b] + cs * RK2[a, b]
            continue
        if code == SPHERICAL:
            quat_to_matrix(q[k:k + 4], Rj)
        elif code == FLOATING:
            quat_to_matrix(q[k + 3:k + 7], Rj)
            t0, t1, t2 = q[k], q[k + 1], q[k + 2]
        else:
            Rj[:, :] = 0.0
            Rj[0, 0] = Rj[1, 1] = Rj[2, 2] = 1.0
            if code == PRISMATIC:
                t0, t1, t2 = axis[i, 0] * q[k], axis[i, 1] * q[k], axis[i, 2] * q[k]
        Ro = origin_R[i]
        for a in range(3):
            r[i, a] = origin_p[i, a] + Ro[a, 0] * t0 + Ro[a, 1] * t1 + Ro[a, 2] * t2
            for b in range(3):
                E[i, b, a] = Ro[a, 0] * Rj[0, b] + Ro[a, 1] * Rj[1, b] + Ro[a, 2] * Rj[2, b]


@njit(cache=True, forceinline=True, refcount=False, fastmath=_FMA)
def kinematics(tree, q, work):
    """``transforms`` at joint positions ``q`` (nq,) (work.E, work.r) and the links' world poses work.R_world
    (L, 3, 3) (link → world), work.p_world (L, 3) [m]. Links are in topological order (a parent before its
    children)."""
    transforms(tree, q, work)
    parent, E, r, R_world, p_world = tree.parent, work.E, work.r, work.R_world, work.p_world
    for i in range(parent.shape[0]):
        p = parent[i]
        if p < 0:
            for a in range(3):
                p_world[i, a] = r[i, a]
                for b in range(3):
                    R_world[i, a, b] = E[i, b, a]
        else:
            for a in range(3):
                p_world[i, a] = p_world[p, a] + (R_world[p, a, 0] * r[i, 0] + R_world[p, a, 1] * r[i, 1]
                                                 + R_world[p, a, 2] * r[i, 2])
                for b in range(3):
                    R_world[i, a, b] = (R_world[p, a, 0] * E[i, b, 0] + R_world[p, a, 1] * E[i, b, 1]
                                        + R_world[p, a, 2] * E[i, b, 2])


@njit(cache=True, forceinline=True, refcount=False, fastmath=_FMA)
def link_velocities(parent, v_start, nv_link, S, E, r, qd, vel):
    """vel (L, 6): each link's spatial velocity in its own frame, vᵢ = X vλ + Sᵢ q̇ᵢ (Featherstone Table 5.1),
    after ``kinematics``; S (nv, 6) the motion subspace columns, qd (nv,)."""
    for i in range(parent.shape[0]):
        p = parent[i]
        if p < 0:
            vel[i, :] = 0.0
        else:
            _motion_to_child(E[i], r[i], vel[p], vel[i])
        for j in range(nv_link[i]):
            d = v_start[i] + j
            for a in range(6):
                vel[i, a] += S[d, a] * qd[d]


@njit(cache=True, refcount=False, fastmath=_FMA)
def rnea(tree, work, qd, qdd, gravity, tau):
    """Recursive Newton–Euler inverse dynamics (Featherstone Table 5.1): tau (nv,) = M q̈ + C q̇ + g for
    velocities qd (nv,) and accelerations qdd (nv,) under ``gravity`` (3,) [m/s²], after ``kinematics``;
    ``tree`` a ``tree.Tree`` (its spatial_inertia (L, 6, 6) about each link's origin in its frame [kg, kg m,
    kg m²]), ``work`` a ``Work``. In world axes about the root's origin (``_world_link``, as ``aba``): vᵢ = vλ + Sᵢ q̇ᵢ,
    aᵢ = aλ + Sᵢ q̈ᵢ + vᵢ ×ₘ Sᵢ q̇ᵢ, and a link's force reaches its parent by a sum."""
    parent, v_start, nv_link = tree.parent, tree.v_start, tree.nv_link
    vel, acc, force, Sw = work.vel, work.acc, work.force, work.S_world
    L = parent.shape[0]
    # a link's v and a in local variables (stored for its children and the backward pass only: a row of
    # ``work`` written is one the compiler must reload)
    for i in range(L):
        p = parent[i]
        Iw = _world_link(tree, work, i)
        if p < 0:
            v0 = v1 = v2 = v3 = v4 = v5 = 0.0
            a0, a1, a2, a3, a4, a5 = 0.0, 0.0, 0.0, -gravity[0], -gravity[1], -gravity[2]
        else:
            vp, ap = vel[p], acc[p]
            v0, v1, v2, v3, v4, v5 = vp[0], vp[1], vp[2], vp[3], vp[4], vp[5]
            a0, a1, a2, a3, a4, a5 = ap[0], ap[1], ap[2], ap[3], ap[4], ap[5]
        j0, j1, j2, j3, j4, j5 = _joint_motion(Sw[i], nv_link[i], qd, v_start[i])
        e0, e1, e2, e3, e4, e5 = _joint_motion(Sw[i], nv_link[i], qdd, v_start[i])
        v0, v1, v2, v3, v4, v5 = v0 + j0, v1 + j1, v2 + j2, v3 + j3, v4 + j4, v5 + j5
        # + vᵢ ×ₘ Sᵢ q̇ᵢ (Featherstone (2.31))
        c0, c1, c2, c3, c4, c5 = _cross_motion(v0, v1, v2, v3, v4, v5, j0, j1, j2, j3, j4, j5)
        a0, a1, a2, a3, a4, a5 = a0 + e0 + c0, a1 + e1 + c1, a2 + e2 + c2, a3 + e3 + c3, a4 + e4 + c4, a5 + e5 + c5
        vi, ai = vel[i], acc[i]
        vi[0], vi[1], vi[2], vi[3], vi[4], vi[5] = v0, v1, v2, v3, v4, v5
        ai[0], ai[1], ai[2], ai[3], ai[4], ai[5] = a0, a1, a2, a3, a4, a5
        # fᵢ = Iᵢ aᵢ + vᵢ ×* Iᵢ vᵢ (Featherstone (2.32))
        g0, g1, g2, g3, g4, g5 = _rigid_times(Iw, v0, v1, v2, v3, v4, v5)
        b0, b1, b2, b3, b4, b5 = _cross_force(v0, v1, v2, v3, v4, v5, g0, g1, g2, g3, g4, g5)
        f0, f1, f2, f3, f4, f5 = _rigid_times(Iw, a0, a1, a2, a3, a4, a5)
        fi = force[i]
        fi[0], fi[1], fi[2], fi[3], fi[4], fi[5] = f0 + b0, f1 + b1, f2 + b2, f3 + b3, f4 + b4, f5 + b5
    for i in range(L - 1, -1, -1):
        fi = force[i]
        for j in range(nv_link[i]):
            tau[v_start[i] + j] = _dot6(Sw[i, j], fi[0], fi[1], fi[2], fi[3], fi[4], fi[5])
        p = parent[i]
        if p >= 0:
            for a in range(6):
                force[p, a] += fi[a]


@njit(cache=True, refcount=False, fastmath=_FMA)
def crba(tree, work, M):
    """The joint-space mass matrix M (nv, nv) by the composite-rigid-body algorithm (Featherstone Table 6.2),
    after ``kinematics``; ``tree`` a ``tree.Tree``, ``work`` a ``Work`` (its rows are the scratch). In world axes
    about the root's origin (``_world_link``, as ``aba``): a composite inertia Icᵢ = Iᵢ + Σ Ic of the children is a
    sum (upper triangles), and Mᵢⱼ = Sⱼᵀ Fᵢ with Fᵢ = Icᵢ Sᵢ for every j on i's path to the root, the one Fᵢ
    that Table 6.2 carries up by Xᵀ a link at a time."""
    parent, v_start, nv_link = tree.parent, tree.v_start, tree.nv_link
    Ic, Sw = work.inertia, work.S_world
    L = parent.shape[0]
    M[:, :] = 0.0
    for i in range(L):
        Iw = _world_link(tree, work, i)
        _store_rigid(Ic[i], Iw)
    for i in range(L - 1, -1, -1):
        p = parent[i]
        if p >= 0:
            for a in range(6):
                for b in range(a, 6):
                    Ic[p, a, b] += Ic[i, a, b]
    for i in range(L):
        for j in range(nv_link[i]):
            di = v_start[i] + j
            f0, f1, f2, f3, f4, f5 = _symmetric_times(Ic[i], Sw[i, j])
            for jj in range(nv_link[i]):
                M[di, v_start[i] + jj] = _dot6(Sw[i, jj], f0, f1, f2, f3, f4, f5)
            k = i
            while parent[k] >= 0:
                k = parent[k]
                for jj in range(nv_link[k]):
                    dj = v_start[k] + jj
                    t = _dot6(Sw[k, jj], f0, f1, f2, f3, f4, f5)
                    M[di, dj] = t
                    M[dj, di] = t


@njit(cache=True, refcount=False, fastmath=_FMA)
def ltdl_factor(dof_parent, M):
    """In place, M = Lᵀ D L over the tree's expanded parent array ``dof_parent`` (nv,) (−1: none): D on the
    diagonal, L's off-diagonal entries below it, no fill-in (Featherstone Table 6.3)."""
    n = M.shape[0]
    for k in range(n - 1, -1, -1):
        i = dof_parent[k]
        while i >= 0:
            a = M[k, i] / M[k, k]
            j = i
            while j >= 0:
                M[i, j] -= M[k, j] * a
                j = dof_parent[j]
            M[k, i] = a
            i = dof_parent[i]


@njit(cache=True, refcount=False, fastmath=_FMA)
def ltdl_solve(dof_parent, LD, x):
    """In place, x ← M⁻¹ x with M factored by ``ltdl_factor`` into ``LD`` (Featherstone Table 6.4)."""
    ltdl_solve_range(dof_parent, LD, x, 0, LD.shape[0])


@njit(cache=True, forceinline=True, refcount=False, fastmath=_FMA)
def ltdl_solve_range(dof_parent, LD, x, lo, hi):
    """``ltdl_solve`` on coordinates lo … hi − 1 alone: M⁻¹ x = L⁻¹ D⁻¹ L⁻ᵀ x for an x that is zero outside them,
    when they hold whole trees of a forest (whose M is block diagonal, ``dof_parent`` −1 at each tree's first
    coordinate): the entries outside stay zero, and the work is that of those trees."""
    lt_solve(dof_parent, LD, x, lo, hi)
    for i in range(lo, hi):
        x[i] /= LD[i, i]
    l_solve(dof_parent, LD, x, lo, hi)


@njit(cache=True, forceinline=True, refcount=False, fastmath=_FMA)
def lt_solve(dof_parent, LD, x, lo, hi):
    """In place x ← L⁻ᵀ x on coordinates lo … hi − 1, L the unit lower-triangular factor of M = Lᵀ D L in ``LD``
    (Featherstone Table 6.4's first pass). A zero entry passes nothing on, so that for an x nonzero on one
    link's path to the root (a point Jacobian's row) the result stays on that path and the work is the path's
    length times its depth (Featherstone §6.5, the factor's sparsity)."""
    for i in range(hi - 1, lo - 1, -1):
        xi = x[i]
        if xi != 0.0:
            j = dof_parent[i]
            while j >= 0:
                x[j] -= LD[i, j] * xi
                j = dof_parent[j]


@njit(cache=True, forceinline=True, refcount=False, fastmath=_FMA)
def l_solve(dof_parent, LD, x, lo, hi):
    """In place x ← L⁻¹ x on coordinates lo … hi − 1 (Featherstone Table 6.4's last pass; ``lt_solve``)."""
    for i in range(lo, hi):
        j = dof_parent[i]
        while j >= 0:
            x[i] -= LD[i, j] * x[j]
            j = dof_parent[j]


@njit(cache=True, forceinline=True, refcount=False, fastmath=_FMA)
def l_times(dof_parent, LD, x, lo, hi):
    """In place x ← L x on coordinates lo … hi − 1 (the inverse of ``l_solve``): x_i + Σ_j L_ij x_j over i's
    ancestors j, from the last coordinate down so that each reads its ancestors unchanged."""
    for i in range(hi - 1, lo - 1, -1):
        j = dof_parent[i]
        while j >= 0:
            x[i] += LD[i, j] * x[j]
            j = dof_parent[j]


@njit(cache=True, refcount=False, fastmath=_FMA)
def _invert_small(A, k, W, out):
    """out[:k, :k] = A[:k, :k]⁻¹ by Gauss–Jordan with partial pivoting (A is k × k, k ≤ 6, symmetric
    positive definite here: an articulated inertia projected on a joint's subspace); W (6, 12) scratch."""
    for a in range(k):
        for b in range(k):
            W[a, b] = A[a, b]
            W[a, k + b] = 1.0 if a == b else 0.0
    for c in range(k):
        piv = c
        for a in range(c + 1, k):
            if abs(W[a, c]) > abs(W[piv, c]):
                piv = a
        if piv != c:
            for b in range(2 * k):
                W[c, b], W[piv, b] = W[piv, b], W[c, b]
        d = W[c, c]
        for b in range(2 * k):
            W[c, b] /= d
        for a in range(k):
            if a != c:
                m = W[a, c]
                for b in range(2 * k):
                    W[a, b] -= m * W[c, b]
    for a in range(k):
        for b in range(k):
            out[a, b] = W[a, k + b]


@njit(cache=True, forceinline=True, refcount=False, fastmath=_FMA)
def aba(tree, work, armature, qd, tau, gravity, qdd):
    """Articulated-body forward dynamics (Featherstone Table 7.1): qdd (nv,) = M⁻¹ (τ − C q̇ − g), after
    ``kinematics`` (it reads the world poses); ``armature`` (nv,) [kg m² or kg] is added to M's diagonal (rotor
    inertia, or h·damping for implicit joint damping); ``tree`` a ``tree.Tree``, ``work`` a ``Work`` (its rows
    are the scratch).

    Every spatial quantity is taken in world-aligned coordinates about one point o per tree, the origin of its
    root link (Featherstone §2.8: any frame serves Table 7.1; Pinocchio's ``aba`` offers the same about the world
    origin, its ``Convention.WORLD``; o keeps a robot far from the origin, or from the forest's other robots, as
    well conditioned as one at it: ``_link_origin``).
    The joint axes are then turned into that frame once (Sᵢ = X⁻¹ Sᵢ^link), the velocity-product term is
    cᵢ = vᵢ ×ₘ Sᵢ q̇ᵢ (the columns of Sᵢ move with link i, Featherstone (2.31)), and a link's articulated
    inertia and bias force reach its parent by two sums, with no transform: the transform of the link-frame
    form, Xᵀ Iᵃ X (~200 multiplications a link, on the backward pass's chain of dependencies), is replaced by
    one rigid-body inertia carried to the world frame per link on the forward pass (``_world_link``, ~70,
    independent between links).
    Articulated inertias are kept as their upper triangles (IAᵢ[a, b], a ≤ b)."""
    parent, v_start, nv_link = tree.parent, tree.v_start, tree.nv_link
    vel, acc, c, IA, pA = work.vel, work.acc, work.c, work.inertia, work.bias
    U, D_inv, u, Sw, tmp = work.U, work.D_inv, work.u, work.S_world, work.tmp
    L = parent.shape[0]
    vj, pa, Du = work.vecs[0], work.vecs[2], work.vecs[3]
    Ia = work.mat
    # pass 1: Sᵢ and Iᵢ (``_world_link``), vᵢ = vλ + Sᵢ q̇ᵢ, cᵢ = vᵢ ×ₘ Sᵢ q̇ᵢ and pᵢ = vᵢ ×* Iᵢ vᵢ (local variables:
    # the rows are views of one buffer, so every store would make the compiler reload what it had read)
    for i in range(L):
        p = parent[i]
        Iw = _world_link(tree, work, i)
        _store_rigid(IA[i], Iw)
        j0, j1, j2, j3, j4, j5 = _joint_motion(Sw[i], nv_link[i], qd, v_start[i])
        if p < 0:
            v0, v1, v2, v3, v4, v5 = j0, j1, j2, j3, j4, j5
        else:
            v0, v1, v2, v3, v4, v5 = (vel[p, 0] + j0, vel[p, 1] + j1, vel[p, 2] + j2, vel[p, 3] + j3, vel[p, 4] + j4,
                                      vel[p, 5] + j5)
        vel[i, 0], vel[i, 1], vel[i, 2], vel[i, 3], vel[i, 4], vel[i, 5] = v0, v1, v2, v3, v4, v5
        c[i, 0], c[i, 1], c[i, 2], c[i, 3], c[i, 4], c[i, 5] = _cross_motion(v0, v1, v2, v3, v4, v5, j0, j1, j2, j3,
                                                                             j4, j5)
        f0, f1, f2, f3, f4, f5 = _rigid_times(Iw, v0, v1, v2, v3, v4, v5)
        pA[i, 0], pA[i, 1], pA[i, 2], pA[i, 3], pA[i, 4], pA[i, 5] = _cross_force(v0, v1, v2, v3, v4, v5, f0, f1, f2,
                                                                                  f3, f4, f5)
    # pass 2, leaves to root: Uᵢ = IAᵢ Sᵢ, Dᵢ = Sᵢᵀ Uᵢ + armature, uᵢ = τᵢ − Sᵢᵀ pAᵢ; the parent gains
    # Iᵃ = IAᵢ − Uᵢ Dᵢ⁻¹ Uᵢᵀ and pᵃ = pAᵢ + Iᵃ cᵢ + Uᵢ Dᵢ⁻¹ uᵢ (U's rows are Uᵢ's columns)
    for i in range(L - 1, -1, -1):
        k = nv_link[i]
        p = parent[i]
        Ii = IA[i]
        I00, I01, I02, I03, I04, I05 = Ii[0, 0], Ii[0, 1], Ii[0, 2], Ii[0, 3], Ii[0, 4], Ii[0, 5]
        I11, I12, I13, I14, I15 = Ii[1, 1], Ii[1, 2], Ii[1, 3], Ii[1, 4], Ii[1, 5]
        I22, I23, I24, I25 = Ii[2, 2], Ii[2, 3], Ii[2, 4], Ii[2, 5]
        I33, I34, I35, I44, I45, I55 = Ii[3, 3], Ii[3, 4], Ii[3, 5], Ii[4, 4], Ii[4, 5], Ii[5, 5]
        if k == 1:
            # one degree of freedom (revolute, prismatic), in local variables
            d0 = v_start[i]
            s = Sw[i, 0]
            s0, s1, s2, s3, s4, s5 = s[0], s[1], s[2], s[3], s[4], s[5]
            # (sums in pairs: this pass is one chain of dependencies from the leaves to the root, and its
            # length, not its count of operations, sets its time)
            U0 = (I00 * s0 + I01 * s1) + (I02 * s2 + I03 * s3) + (I04 * s4 + I05 * s5)
            U1 = (I01 * s0 + I11 * s1) + (I12 * s2 + I13 * s3) + (I14 * s4 + I15 * s5)
            U2 = (I02 * s0 + I12 * s1) + (I22 * s2 + I23 * s3) + (I24 * s4 + I25 * s5)
            U3 = (I03 * s0 + I13 * s1) + (I23 * s2 + I33 * s3) + (I34 * s4 + I35 * s5)
            U4 = (I04 * s0 + I14 * s1) + (I24 * s2 + I34 * s3) + (I44 * s4 + I45 * s5)
            U5 = (I05 * s0 + I15 * s1) + (I25 * s2 + I35 * s3) + (I45 * s4 + I55 * s5)
            Ui = U[i, 0]
            Ui[0], Ui[1], Ui[2], Ui[3], Ui[4], Ui[5] = U0, U1, U2, U3, U4, U5
            dinv = 1.0 / (((s0 * U0 + s1 * U1) + (s2 * U2 + s3 * U3)) + ((s4 * U4 + s5 * U5) + armature[d0]))
            D_inv[i, 0, 0] = dinv
            pA0, pA1, pA2, pA3, pA4, pA5 = pA[i, 0], pA[i, 1], pA[i, 2], pA[i, 3], pA[i, 4], pA[i, 5]
            uu = tau[d0] - ((s0 * pA0 + s1 * pA1) + (s2 * pA2 + s3 * pA3) + (s4 * pA4 + s5 * pA5))
            c0, c1, c2, c3, c4, c5 = c[i, 0], c[i, 1], c[i, 2], c[i, 3], c[i, 4], c[i, 5]
            # pass 3 takes uᵢ − Uᵢᵀ cᵢ, known now, so that its chain from aλ to q̈ᵢ is one product shorter
            u[i, 0] = uu - ((U0 * c0 + U1 * c1) + (U2 * c2 + U3 * c3) + (U4 * c4 + U5 * c5))
            if p < 0:
                continue
            # the parent's IA gains Iᵃ = IAᵢ − Uᵢ D⁻¹ Uᵢᵀ (upper triangle)
            w0, w1, w2, w3, w4, w5 = U0 * dinv, U1 * dinv, U2 * dinv, U3 * dinv, U4 * dinv, U5 * dinv
            P = IA[p]
            P[0, 0] += I00 - w0 * U0
            P[0, 1] += I01 - w0 * U1
            P[0, 2] += I02 - w0 * U2
            P[0, 3] += I03 - w0 * U3
            P[0, 4] += I04 - w0 * U4
            P[0, 5] += I05 - w0 * U5
            P[1, 1] += I11 - w1 * U1
            P[1, 2] += I12 - w1 * U2
            P[1, 3] += I13 - w1 * U3
            P[1, 4] += I14 - w1 * U4
            P[1, 5] += I15 - w1 * U5
            P[2, 2] += I22 - w2 * U2
            P[2, 3] += I23 - w2 * U3
            P[2, 4] += I24 - w2 * U4
            P[2, 5] += I25 - w2 * U5
            P[3, 3] += I33 - w3 * U3
            P[3, 4] += I34 - w3 * U4
            P[3, 5] += I35 - w3 * U5
            P[4, 4] += I44 - w4 * U4
            P[4, 5] += I45 - w4 * U5
            P[5, 5] += I55 - w5 * U5
            # pᵃ = pAᵢ + Iᵃ cᵢ + Uᵢ D⁻¹ uᵢ = pAᵢ + IAᵢ cᵢ + Uᵢ D⁻¹ (uᵢ − Uᵢᵀ cᵢ): IAᵢ cᵢ is off the chain
            e = u[i, 0] * dinv
            pA[p, 0] += (pA0 + U0 * e) + ((I00 * c0 + I01 * c1) + (I02 * c2 + I03 * c3) + (I04 * c4 + I05 * c5))
            pA[p, 1] += (pA1 + U1 * e) + ((I01 * c0 + I11 * c1) + (I12 * c2 + I13 * c3) + (I14 * c4 + I15 * c5))
            pA[p, 2] += (pA2 + U2 * e) + ((I02 * c0 + I12 * c1) + (I22 * c2 + I23 * c3) + (I24 * c4 + I25 * c5))
            pA[p, 3] += (pA3 + U3 * e) + ((I03 * c0 + I13 * c1) + (I23 * c2 + I33 * c3) + (I34 * c4 + I35 * c5))
            pA[p, 4] += (pA4 + U4 * e) + ((I04 * c0 + I14 * c1) + (I24 * c2 + I34 * c3) + (I44 * c4 + I45 * c5))
            pA[p, 5] += (pA5 + U5 * e) + ((I05 * c0 + I15 * c1) + (I25 * c2 + I35 * c3) + (I45 * c4 + I55 * c5))
            continue
        # any other joint (fixed, spherical, floating): the same with a k × k D, on the whole symmetric IAᵢ
        for a in range(6):
            for b in range(a, 6):
                Ia[a, b] = Ii[a, b]
                Ia[b, a] = Ii[a, b]
        if k > 0:
            s0 = v_start[i]
            for j in range(k):
                for a in range(6):
                    t = 0.0
                    for b in range(6):
                        t += Ia[a, b] * Sw[i, j, b]
                    U[i, j, a] = t
            for j in range(k):
                for jj in range(k):
                    t = 0.0
                    for a in range(6):
                        t += Sw[i, j, a] * U[i, jj, a]
                    tmp[j, jj] = t
                tmp[j, j] += armature[s0 + j]
                t = tau[s0 + j]
                for a in range(6):
                    t -= Sw[i, j, a] * pA[i, a]
                u[i, j] = t
            _invert_small(tmp, k, work.gauss, D_inv[i])
        if p < 0:
            continue
        if k > 0:
            for a in range(6):
                for j in range(k):
                    t = 0.0
                    for jj in range(k):
                        t += U[i, jj, a] * D_inv[i, jj, j]
                    vj[j] = t   # row a of U D⁻¹
                for b in range(6):
                    t = 0.0
                    for j in range(k):
                        t += vj[j] * U[i, j, b]
                    Ia[a, b] -= t
            for j in range(k):
                t = 0.0
                for jj in range(k):
                    t += D_inv[i, j, jj] * u[i, jj]
                Du[j] = t
        for a in range(6):
            t = pA[i, a]
            for b in range(6):
                t += Ia[a, b] * c[i, b]
            for j in range(k):
                t += U[i, j, a] * Du[j]
            pa[a] = t
        for a in range(6):
            pA[p, a] += pa[a]
            for b in range(a, 6):
                IA[p, a, b] += Ia[a, b]
    # pass 3, root to leaves: aᵢ = aλ + cᵢ (the world's a₀ = −g), q̈ᵢ = D⁻¹ (uᵢ − Uᵢᵀ aᵢ), aᵢ += Sᵢ q̈ᵢ
    for i in range(L):
        p = parent[i]
        if p < 0:
            a0, a1, a2, a3, a4, a5 = 0.0, 0.0, 0.0, -gravity[0], -gravity[1], -gravity[2]
        else:
            a0, a1, a2, a3, a4, a5 = acc[p, 0], acc[p, 1], acc[p, 2], acc[p, 3], acc[p, 4], acc[p, 5]
        k = nv_link[i]
        if k == 1:
            # q̈ᵢ = D⁻¹ ((uᵢ − Uᵢᵀ cᵢ) − Uᵢᵀ aλ), the first term from pass 2
            Ui, s = U[i, 0], Sw[i, 0]
            qq = D_inv[i, 0, 0] * (u[i, 0] - ((Ui[0] * a0 + Ui[1] * a1) + (Ui[2] * a2 + Ui[3] * a3)
                                              + (Ui[4] * a4 + Ui[5] * a5)))
            qdd[v_start[i]] = qq
            a0, a1, a2 = a0 + c[i, 0] + s[0] * qq, a1 + c[i, 1] + s[1] * qq, a2 + c[i, 2] + s[2] * qq
            a3, a4, a5 = a3 + c[i, 3] + s[3] * qq, a4 + c[i, 4] + s[4] * qq, a5 + c[i, 5] + s[5] * qq
        else:
            a0, a1, a2 = a0 + c[i, 0], a1 + c[i, 1], a2 + c[i, 2]
            a3, a4, a5 = a3 + c[i, 3], a4 + c[i, 4], a5 + c[i, 5]
        acc[i, 0], acc[i, 1], acc[i, 2], acc[i, 3], acc[i, 4], acc[i, 5] = a0, a1, a2, a3, a4, a5
        if k <= 1:
            continue
        s0 = v_start[i]
        for j in range(k):
            t = u[i, j]
            for a in range(6):
                t -= U[i, j, a] * acc[i, a]
            vj[j] = t
        for j in range(k):
            t = 0.0
            for jj in range(k):
                t += D_inv[i, j, jj] * vj[jj]
            qdd[s0 + j] = t
        for j in range(k):
            for a in range(6):
                acc[i, a] += Sw[i, j, a] * qdd[s0 + j]


@njit(cache=True, refcount=False, fastmath=_FMA)
def point_jacobian(parent, v_start, nv_link, S, R_world, p_world, link, point, J):
    """J (6, nv): the world-frame velocity (ω, v) of the point ``point`` (3,) [m, world] moving with link
    ``link``, J q̇ = (ω, v_point), after ``kinematics`` (angular rows first, as API.md's ``jacobian``)."""
    J[:, :] = 0.0
    k = link
    while k >= 0:
        R = R_world[k]
        dx = point[0] - p_world[k, 0]
        dy = point[1] - p_world[k, 1]
        dz = point[2] - p_world[k, 2]
        for j in range(nv_link[k]):
            d = v_start[k] + j
            J[0, d], J[1, d], J[2, d], J[3, d], J[4, d], J[5, d] = jacobian_column(R, S[d], dx, dy, dz)
        k = parent[k]


@njit(cache=True, forceinline=True, refcount=False)
def jacobian_column(R, s, dx, dy, dz):
    """(ω, v) [world frame] of coordinate column s (6,) (motion subspace, link frame: angular first) of a link
    with world rotation R, at the point (dx, dy, dz) from the link's origin: ω = R s_ω and v = R s_v + ω × d,
    the velocity of the link's origin plus ω × (point − origin)."""
    wx = R[0, 0] * s[0] + R[0, 1] * s[1] + R[0, 2] * s[2]
    wy = R[1, 0] * s[0] + R[1, 1] * s[1] + R[1, 2] * s[2]
    wz = R[2, 0] * s[0] + R[2, 1] * s[1] + R[2, 2] * s[2]
    return (wx, wy, wz, R[0, 0] * s[3] + R[0, 1] * s[4] + R[0, 2] * s[5] + wy * dz - wz * dy,
            R[1, 0] * s[3] + R[1, 1] * s[4] + R[1, 2] * s[5] + wz * dx - wx * dz,
            R[2, 0] * s[3] + R[2, 1] * s[4] + R[2, 2] * s[5] + wx * dy - wy * dx)
