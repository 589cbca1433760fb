"""Recursive dynamics of an articulation in reduced coordinates (Featherstone, *Rigid Body Dynamics
Algorithms*, 2008; the single-body half in Modern Robotics ch. 8, seed 003).

Spatial vectors are 6-vectors with the angular part first, as tumble's twists and wrenches (spatial.py):
a motion (ω, v) and a force (n, f), both in a link's own frame about its origin. Link i's frame is placed in
its parent's by the transform ``(E_i, r_i)``: E_i (3, 3) maps parent coordinates to link coordinates and
r_i (3,) is the link's origin in parent coordinates (Featherstone §2.8, Plücker transform ⁱX_λ(i)):

    X m = (E ω, E (v − r × ω))                 (motion, parent → link; Featherstone (2.24))
    Xᵀ f = (Eᵀ n + r × Eᵀ f, Eᵀ f)             (force, link → parent)

Every joint's motion subspace S (6 × nᵢ, the link's frame) is constant (robots/tree.py), so the joint's
velocity-product term c_J = Ṡ q̇ is zero (Featherstone §4.4): revolute (axis, 0), prismatic (0, axis),
spherical (I, 0) (q̇ = ω in the link frame) and floating (q̇ = (v, ω), the link's own velocity in its own
frame, linear part first as in Pinocchio). Gravity enters as a fictitious base acceleration
a₀ = (0, −g) (Featherstone §5.3).

The kernels take the tree's arrays (``tree.Tree``) and a ``Work`` of preallocated scratch rows, so that a
step allocates nothing: ``kinematics`` (the transforms, world poses and link velocities), ``rnea``
(inverse dynamics, Table 5.1), ``crba`` (the joint-space mass matrix, Table 6.2), ``ltdl_factor`` /
``ltdl_solve`` (its sparse factorization H = Lᵀ D L over the expanded parent array, Tables 6.3 and 6.4) and
``aba`` (forward dynamics, Table 7.1).
"""

from __future__ import annotations

from collections import namedtuple

import numpy as np

from ..jit import njit, view
from ..math3d import quat_to_matrix

FIXED, REVOLUTE, PRISMATIC, SPHERICAL, FLOATING = range(5)
JOINT_CODES = {"fixed": FIXED, "revolute": REVOLUTE, "continuous": REVOLUTE, "prismatic": PRISMATIC,
               "spherical": SPHERICAL, "floating": FLOATING}
NQ = (0, 1, 1, 4, 7)
"""Sizes of q per joint code."""
NV = (0, 1, 1, 3, 6)
"""Sizes of q̇ per joint code."""

Work = namedtuple("Work", ["E", "r", "R_world", "p_world", "vel", "acc", "force", "inertia", "bias",
                           "U", "D_inv", "u", "c", "X", "tmp", "tmp6", "vecs", "mat", "gauss", "R3", "flags"])
"""Scratch rows of one articulation of L links and nv velocities (``new_work``): E (L, 3, 3), r (L, 3) the
link-from-parent transforms; R_world (L, 3, 3) (link → world) and p_world (L, 3) [m] the links' world poses;
vel, acc, force (L, 6) the links' spatial velocities [rad/s, m/s], accelerations and forces in their own
frames; inertia (L, 6, 6) composite or articulated inertias; bias (L, 6) articulated bias forces; U (L, 6, 6),
D_inv (L, 6, 6), u (L, 6) the ABA's joint-space terms; c (L, 6) velocity-product accelerations; X (6, 6),
tmp (6, 6), tmp6 (6,), vecs (8, 6), mat (6, 6), gauss (6, 12), R3 (3, 3) the kernels' own scratch (they
allocate nothing); flags (1,): 1.0 while E, r, R_world, p_world hold the kinematics of the current q (robots/
step.py reuses them)."""


def work_size(links: int) -> int:
    """Floats in the buffer of a ``Work`` for ``links`` links (``work_views``)."""
    return links * (9 + 3 + 9 + 3 + 6 * 3 + 36 + 6 + 36 + 36 + 6 + 6) + 36 + 36 + 6 + 48 + 36 + 72 + 9 + 1


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
    X = view(wf, o, (6, 6))
    o += 36
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
    return Work(E, r, R_world, p_world, vel, acc, force, inertia, bias, U, D_inv, u, c, X, tmp, tmp6, vecs, mat,
                gauss, R3, wf[o:o + 1])


def new_work(links: int) -> Work:
    """A ``Work`` for an articulation of ``links`` links (views into one zeroed buffer)."""
    return work_views(np.zeros(work_size(links)), links)


@njit(cache=True, forceinline=True, refcount=False)
def _rotation_about(axis, angle, out):
    """Rodrigues' formula: out (3, 3) = rotation by ``angle`` [rad] about the unit ``axis`` (3,)."""
    c, s = np.cos(angle), np.sin(angle)
    t = 1.0 - c
    x, y, z = axis[0], axis[1], axis[2]
    out[0, 0] = c + t * x * x
    out[0, 1] = t * x * y - s * z
    out[0, 2] = t * x * z + s * y
    out[1, 0] = t * x * y + s * z
    out[1, 1] = c + t * y * y
    out[1, 2] = t * y * z - s * x
    out[2, 0] = t * x * z - s * y
    out[2, 1] = t * y * z + s * x
    out[2, 2] = c + t * z * z


@njit(cache=True, forceinline=True, refcount=False)
def _motion_to_child(E, r, m, out):
    """out = X m for a motion m (6,) of the parent (module docstring)."""
    wx, wy, wz = m[0], m[1], m[2]
    vx = m[3] - (r[1] * wz - r[2] * wy)
    vy = m[4] - (r[2] * wx - r[0] * wz)
    vz = m[5] - (r[0] * wy - r[1] * wx)
    for a in range(3):
        out[a] = E[a, 0] * wx + E[a, 1] * wy + E[a, 2] * wz
        out[3 + a] = E[a, 0] * vx + E[a, 1] * vy + E[a, 2] * vz


@njit(cache=True, forceinline=True, refcount=False)
def _force_to_parent_add(E, r, f, out):
    """out += Xᵀ f for a force f (6,) of the child (module docstring)."""
    n0 = E[0, 0] * f[0] + E[1, 0] * f[1] + E[2, 0] * f[2]
    n1 = E[0, 1] * f[0] + E[1, 1] * f[1] + E[2, 1] * f[2]
    n2 = E[0, 2] * f[0] + E[1, 2] * f[1] + E[2, 2] * f[2]
    g0 = E[0, 0] * f[3] + E[1, 0] * f[4] + E[2, 0] * f[5]
    g1 = E[0, 1] * f[3] + E[1, 1] * f[4] + E[2, 1] * f[5]
    g2 = E[0, 2] * f[3] + E[1, 2] * f[4] + E[2, 2] * f[5]
    out[0] += n0 + r[1] * g2 - r[2] * g1
    out[1] += n1 + r[2] * g0 - r[0] * g2
    out[2] += n2 + r[0] * g1 - r[1] * g0
    out[3] += g0
    out[4] += g1
    out[5] += g2


@njit(cache=True, forceinline=True, refcount=False)
def _cross_motion(v, m, out):
    """out = v ×ₘ m, the spatial cross product of motions (Featherstone (2.31))."""
    out[0] = v[1] * m[2] - v[2] * m[1]
    out[1] = v[2] * m[0] - v[0] * m[2]
    out[2] = v[0] * m[1] - v[1] * m[0]
    out[3] = v[1] * m[5] - v[2] * m[4] + v[4] * m[2] - v[5] * m[1]
    out[4] = v[2] * m[3] - v[0] * m[5] + v[5] * m[0] - v[3] * m[2]
    out[5] = v[0] * m[4] - v[1] * m[3] + v[3] * m[1] - v[4] * m[0]


@njit(cache=True, forceinline=True, refcount=False)
def _cross_force_add(v, f, out):
    """out += v ×* f, the spatial cross product of a motion and a force (Featherstone (2.32))."""
    out[0] += v[1] * f[2] - v[2] * f[1] + v[4] * f[5] - v[5] * f[4]
    out[1] += v[2] * f[0] - v[0] * f[2] + v[5] * f[3] - v[3] * f[5]
    out[2] += v[0] * f[1] - v[1] * f[0] + v[3] * f[4] - v[4] * f[3]
    out[3] += v[1] * f[5] - v[2] * f[4]
    out[4] += v[2] * f[3] - v[0] * f[5]
    out[5] += v[0] * f[4] - v[1] * f[3]


@njit(cache=True, forceinline=True, refcount=False)
def _inertia_to_parent_add(E, r, inertia, X, tmp, out):
    """out += Xᵀ I X (6, 6): a link's inertia about its origin, carried to its parent's frame (Featherstone
    (2.66)), by blocks: with I = [[A, B], [Bᵀ, M]] rotated into the parent's axes (A₁ = Eᵀ A E, …) and
    r× the cross-product matrix of r,
        A' = A₁ − B₁ r× + r× B₁ᵀ − r× M₁ r×,   B' = B₁ + r× M₁,   M' = M₁
    (about 260 multiplications instead of the 432 of two dense 6 × 6 products). X (6, 6) is scratch for the
    rotated blocks, tmp (6, 6) for the products."""
    # rotated blocks: X[0:3, 0:3] = A₁, X[0:3, 3:6] = B₁, X[3:6, 3:6] = M₁ (tmp[0:3, 0:3] holds I E)
    for blk in range(3):
        a0 = 0 if blk < 2 else 3
        b0 = 0 if blk == 0 else 3
        for a in range(3):
            for b in range(3):
                tmp[a, b] = (inertia[a0 + a, b0] * E[0, b] + inertia[a0 + a, b0 + 1] * E[1, b]
                             + inertia[a0 + a, b0 + 2] * E[2, b])
        for a in range(3):
            for b in range(3):
                X[a0 + a, b0 + b] = E[0, a] * tmp[0, b] + E[1, a] * tmp[1, b] + E[2, a] * tmp[2, b]
    r0, r1, r2 = r[0], r[1], r[2]
    # D = r× M₁ (tmp[3:6, 0:3]) and C = B₁ r× (tmp[0:3, 3:6])
    for b in range(3):
        m0, m1, m2 = X[3, 3 + b], X[4, 3 + b], X[5, 3 + b]
        tmp[3, b] = r1 * m2 - r2 * m1
        tmp[4, b] = r2 * m0 - r0 * m2
        tmp[5, b] = r0 * m1 - r1 * m0
    for a in range(3):
        b0_, b1_, b2_ = X[a, 3], X[a, 4], X[a, 5]
        # row a of B₁ times r×: (B₁ r×)[a, :] = −(r × B₁[a, :]) componentwise as rows
        tmp[a, 3] = b1_ * r2 - b2_ * r1
        tmp[a, 4] = b2_ * r0 - b0_ * r2
        tmp[a, 5] = b0_ * r1 - b1_ * r0
    for a in range(3):
        for b in range(3):
            # (D r×)[a, b] = Σ_k D[a, k] r×[k, b]
            if b == 0:
                drx = tmp[3 + a, 1] * r2 - tmp[3 + a, 2] * r1
            elif b == 1:
                drx = tmp[3 + a, 2] * r0 - tmp[3 + a, 0] * r2
            else:
                drx = tmp[3 + a, 0] * r1 - tmp[3 + a, 1] * r0
            out[a, b] += X[a, b] - tmp[a, 3 + b] - tmp[b, 3 + a] - drx
            bb = X[a, 3 + b] + tmp[3 + a, b]
            out[a, 3 + b] += bb
            out[3 + b, a] += bb
            out[3 + a, 3 + b] += X[3 + a, 3 + b]


@njit(cache=True, forceinline=True, refcount=False)
def kinematics(tree, q, work):
    """The transforms of every link (module docstring) at joint positions ``q`` (nq,), into work.E, work.r, and
    the links' world poses work.R_world (L, 3, 3) (link → world), work.p_world (L, 3) [m]. Links are in
    topological order (a parent before its children); link i's joint places it in parent[i]'s frame (−1: the
    world) by the fixed origin (origin_R (L, 3, 3) joint → parent, origin_p (L, 3) [m]) and then the joint's
    own motion."""
    parent, jtype, axis, origin_R, origin_p, q_start = (tree.parent, tree.jtype, tree.axis, tree.origin_R,
                                                        tree.origin_p, tree.q_start)
    E, r, R_world, p_world, Rj = work.E, work.r, work.R_world, work.p_world, work.R3
    for i in range(parent.shape[0]):
        k = q_start[i]
        t0 = 0.0
        t1 = 0.0
        t2 = 0.0
        code = jtype[i]
        if code == REVOLUTE:
            _rotation_about(axis[i], q[k], Rj)
        elif code == SPHERICAL:
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


@njit(cache=True, forceinline=True, refcount=False)
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


@njit(cache=True, refcount=False)
def rnea(tree, work, qd, qdd, gravity, tau):
    """Recursive Newton–Euler inverse dynamics (Featherstone Table 5.1): tau (nv,) = M q̈ + C q̇ + g for
    velocities qd (nv,) and accelerations qdd (nv,) under ``gravity`` (3,) [m/s²], after ``kinematics``;
    ``tree`` a ``tree.Tree`` (its spatial_inertia (L, 6, 6) about each link's origin in its frame [kg, kg m,
    kg m²]), ``work`` a ``Work``."""
    parent, v_start, nv_link, S, spatial_inertia = (tree.parent, tree.v_start, tree.nv_link, tree.S,
                                                    tree.spatial_inertia)
    E, r, vel, acc, force, tmp6 = work.E, work.r, work.vel, work.acc, work.force, work.tmp6
    L = parent.shape[0]
    a0, vj = work.vecs[0], work.vecs[1]
    a0[:] = 0.0
    a0[3], a0[4], a0[5] = -gravity[0], -gravity[1], -gravity[2]
    for i in range(L):
        p = parent[i]
        if p < 0:
            vel[i, :] = 0.0
            _motion_to_child(E[i], r[i], a0, acc[i])
        else:
            _motion_to_child(E[i], r[i], vel[p], vel[i])
            _motion_to_child(E[i], r[i], acc[p], acc[i])
        for j in range(nv_link[i]):
            d = v_start[i] + j
            for a in range(6):
                vel[i, a] += S[d, a] * qd[d]
                acc[i, a] += S[d, a] * qdd[d]
        # + vᵢ × Sᵢ q̇ᵢ (c_J = 0)
        for a in range(6):
            tmp6[a] = 0.0
        for j in range(nv_link[i]):
            d = v_start[i] + j
            for a in range(6):
                tmp6[a] += S[d, a] * qd[d]
        for a in range(6):
            vj[a] = tmp6[a]
        _cross_motion(vel[i], vj, tmp6)
        for a in range(6):
            acc[i, a] += tmp6[a]
        # fᵢ = Iᵢ aᵢ + vᵢ ×* Iᵢ vᵢ
        Ii = spatial_inertia[i]
        for a in range(6):
            s = 0.0
            t = 0.0
            for b in range(6):
                s += Ii[a, b] * acc[i, b]
                t += Ii[a, b] * vel[i, b]
            force[i, a] = s
            tmp6[a] = t
        _cross_force_add(vel[i], tmp6, force[i])
    for i in range(L - 1, -1, -1):
        for j in range(nv_link[i]):
            d = v_start[i] + j
            s = 0.0
            for a in range(6):
                s += S[d, a] * force[i, a]
            tau[d] = s
        p = parent[i]
        if p >= 0:
            _force_to_parent_add(E[i], r[i], force[i], force[p])


@njit(cache=True, refcount=False)
def crba(tree, work, M):
    """The joint-space mass matrix M (nv, nv) by the composite-rigid-body algorithm (Featherstone Table 6.2),
    after ``kinematics``; ``tree`` a ``tree.Tree``, ``work`` a ``Work`` (its rows are the scratch)."""
    parent, v_start, nv_link, S, spatial_inertia = (tree.parent, tree.v_start, tree.nv_link, tree.S,
                                                    tree.spatial_inertia)
    E, r, composite, X, tmp = work.E, work.r, work.inertia, work.X, work.tmp
    L = parent.shape[0]
    M[:, :] = 0.0
    for i in range(L):
        for a in range(6):
            for b in range(6):
                composite[i, a, b] = spatial_inertia[i, a, b]
    for i in range(L - 1, -1, -1):
        p = parent[i]
        if p >= 0:
            _inertia_to_parent_add(E[i], r[i], composite[i], X, tmp, composite[p])
    f, g = work.vecs[0], work.vecs[1]
    for i in range(L):
        for j in range(nv_link[i]):
            di = v_start[i] + j
            # F = Icᵢ Sᵢ (one column)
            for a in range(6):
                s = 0.0
                for b in range(6):
                    s += composite[i, a, b] * S[di, b]
                f[a] = s
            for jj in range(nv_link[i]):
                dj = v_start[i] + jj
                s = 0.0
                for a in range(6):
                    s += S[dj, a] * f[a]
                M[di, dj] = s
            k = i
            while parent[k] >= 0:
                g[:] = 0.0
                _force_to_parent_add(E[k], r[k], f, g)
                for a in range(6):
                    f[a] = g[a]
                k = parent[k]
                for jj in range(nv_link[k]):
                    dj = v_start[k] + jj
                    s = 0.0
                    for a in range(6):
                        s += S[dj, a] * f[a]
                    M[di, dj] = s
                    M[dj, di] = s


@njit(cache=True, refcount=False)
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


@njit(cache=True, refcount=False)
def ltdl_solve(dof_parent, LD, x):
    """In place, x ← M⁻¹ x with M factored by ``ltdl_factor`` into ``LD`` (Featherstone Table 6.4)."""
    n = LD.shape[0]
    for i in range(n - 1, -1, -1):
        j = dof_parent[i]
        while j >= 0:
            x[j] -= LD[i, j] * x[i]
            j = dof_parent[j]
    for i in range(n):
        x[i] /= LD[i, i]
    for i in range(n):
        j = dof_parent[i]
        while j >= 0:
            x[i] -= LD[i, j] * x[j]
            j = dof_parent[j]


@njit(cache=True, refcount=False)
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


@njit(cache=True, forceinline=True, refcount=False)
def aba(tree, work, armature, qd, tau, gravity, qdd):
    """Articulated-body forward dynamics (Featherstone Table 7.1): qdd (nv,) = M⁻¹ (τ − C q̇ − g), after
    ``kinematics``; ``armature`` (nv,) [kg m² or kg] is added to M's diagonal (rotor inertia, or h·damping for
    implicit joint damping); ``tree`` a ``tree.Tree``, ``work`` a ``Work`` (its rows are the scratch)."""
    parent, v_start, nv_link, S, spatial_inertia = (tree.parent, tree.v_start, tree.nv_link, tree.S,
                                                    tree.spatial_inertia)
    E, r, vel, acc, c, IA, pA = work.E, work.r, work.vel, work.acc, work.c, work.inertia, work.bias
    U, D_inv, u, X, tmp = work.U, work.D_inv, work.u, work.X, work.tmp
    L = parent.shape[0]
    vj, tmp6, pa, Du, a0 = work.vecs[0], work.vecs[1], work.vecs[2], work.vecs[3], work.vecs[4]
    Ia = work.mat
    for i in range(L):
        p = parent[i]
        for a in range(6):
            vj[a] = 0.0
        for j in range(nv_link[i]):
            d = v_start[i] + j
            for a in range(6):
                vj[a] += S[d, a] * qd[d]
        if p < 0:
            for a in range(6):
                vel[i, a] = vj[a]
        else:
            _motion_to_child(E[i], r[i], vel[p], vel[i])
            for a in range(6):
                vel[i, a] += vj[a]
        _cross_motion(vel[i], vj, c[i])
        for a in range(6):
            for b in range(6):
                IA[i, a, b] = spatial_inertia[i, a, b]
        Ii = spatial_inertia[i]
        for a in range(6):
            s = 0.0
            for b in range(6):
                s += Ii[a, b] * vel[i, b]
            tmp6[a] = s
            pA[i, a] = 0.0
        _cross_force_add(vel[i], tmp6, pA[i])
    for i in range(L - 1, -1, -1):
        k = nv_link[i]
        p = parent[i]
        if k == 1:
            # one degree of freedom (revolute, prismatic): S is one half of a 6-vector, (axis, 0) or (0, axis);
            # the general block below with k = 1, its zero half and Ia's symmetry skipped
            s0 = v_start[i]
            sv = S[s0]
            o = 3 if sv[0] == 0.0 and sv[1] == 0.0 and sv[2] == 0.0 else 0
            e0, e1, e2 = sv[o], sv[o + 1], sv[o + 2]
            for a in range(6):
                U[i, a, 0] = IA[i, a, o] * e0 + IA[i, a, o + 1] * e1 + IA[i, a, o + 2] * e2
            dinv = 1.0 / (e0 * U[i, o, 0] + e1 * U[i, o + 1, 0] + e2 * U[i, o + 2, 0] + armature[s0])
            D_inv[i, 0, 0] = dinv
            uu = tau[s0] - (e0 * pA[i, o] + e1 * pA[i, o + 1] + e2 * pA[i, o + 2])
            u[i, 0] = uu
            if p < 0:
                continue
            for a in range(6):
                ua = U[i, a, 0] * dinv
                for b in range(a, 6):
                    value = IA[i, a, b] - ua * U[i, b, 0]
                    Ia[a, b] = value
                    Ia[b, a] = value
            ud = uu * dinv
            for a in range(6):
                acc_a = pA[i, a] + U[i, a, 0] * ud
                for b in range(6):
                    acc_a += Ia[a, b] * c[i, b]
                pa[a] = acc_a
            _inertia_to_parent_add(E[i], r[i], Ia, X, tmp, IA[p])
            _force_to_parent_add(E[i], r[i], pa, pA[p])
            continue
        if k > 0:
            s0 = v_start[i]
            # U = IA S (6 × k), D = Sᵀ U + armature, u = τ − Sᵀ pA
            for j in range(k):
                for a in range(6):
                    s = 0.0
                    for b in range(6):
                        s += IA[i, a, b] * S[s0 + j, b]
                    U[i, a, j] = s
            for j in range(k):
                for jj in range(k):
                    s = 0.0
                    for a in range(6):
                        s += S[s0 + j, a] * U[i, a, jj]
                    tmp[j, jj] = s
                tmp[j, j] += armature[s0 + j]
                s = tau[s0 + j]
                for a in range(6):
                    s -= S[s0 + j, a] * pA[i, a]
                u[i, j] = s
            _invert_small(tmp, k, work.gauss, D_inv[i])
        if p < 0:
            continue
        # Ia = IA − U D⁻¹ Uᵀ ; pa = pA + Ia c + U D⁻¹ u
        for a in range(6):
            for b in range(6):
                Ia[a, b] = IA[i, a, b]
        if k > 0:
            for a in range(6):
                for j in range(k):
                    s = 0.0
                    for jj in range(k):
                        s += U[i, a, jj] * D_inv[i, jj, j]
                    vj[j] = s   # row a of U D⁻¹
                for b in range(6):
                    s = 0.0
                    for j in range(k):
                        s += vj[j] * U[i, b, j]
                    Ia[a, b] -= s
        for a in range(6):
            s = pA[i, a]
            for b in range(6):
                s += Ia[a, b] * c[i, b]
            pa[a] = s
        if k > 0:
            for j in range(k):
                s = 0.0
                for jj in range(k):
                    s += D_inv[i, j, jj] * u[i, jj]
                Du[j] = s
            for a in range(6):
                s = 0.0
                for j in range(k):
                    s += U[i, a, j] * Du[j]
                pa[a] += s
        _inertia_to_parent_add(E[i], r[i], Ia, X, tmp, IA[p])
        _force_to_parent_add(E[i], r[i], pa, pA[p])
    a0[:] = 0.0
    a0[3], a0[4], a0[5] = -gravity[0], -gravity[1], -gravity[2]
    for i in range(L):
        p = parent[i]
        if p < 0:
            _motion_to_child(E[i], r[i], a0, acc[i])
        else:
            _motion_to_child(E[i], r[i], acc[p], acc[i])
        for a in range(6):
            acc[i, a] += c[i, a]
        k = nv_link[i]
        if k == 0:
            continue
        s0 = v_start[i]
        if k == 1:
            s = u[i, 0]
            for a in range(6):
                s -= U[i, a, 0] * acc[i, a]
            qdd[s0] = D_inv[i, 0, 0] * s
            for a in range(6):
                acc[i, a] += S[s0, a] * qdd[s0]
            continue
        for j in range(k):
            s = u[i, j]
            for a in range(6):
                s -= U[i, a, j] * acc[i, a]
            vj[j] = s
        for j in range(k):
            s = 0.0
            for jj in range(k):
                s += D_inv[i, j, jj] * vj[jj]
            qdd[s0 + j] = s
        for j in range(k):
            for a in range(6):
                acc[i, a] += S[s0 + j, a] * qdd[s0 + j]


@njit(cache=True, refcount=False)
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
            s = S[d]
            wx = R[0, 0] * s[0] + R[0, 1] * s[1] + R[0, 2] * s[2]
            wy = R[1, 0] * s[0] + R[1, 1] * s[1] + R[1, 2] * s[2]
            wz = R[2, 0] * s[0] + R[2, 1] * s[1] + R[2, 2] * s[2]
            J[0, d], J[1, d], J[2, d] = wx, wy, wz
            # velocity of link k's origin plus ω × (point − origin)
            J[3, d] = R[0, 0] * s[3] + R[0, 1] * s[4] + R[0, 2] * s[5] + wy * dz - wz * dy
            J[4, d] = R[1, 0] * s[3] + R[1, 1] * s[4] + R[1, 2] * s[5] + wz * dx - wx * dz
            J[5, d] = R[2, 0] * s[3] + R[2, 1] * s[4] + R[2, 2] * s[5] + wx * dy - wy * dx
        k = parent[k]
