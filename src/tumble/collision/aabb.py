"""World-space axis-aligned bounding boxes (AABBs) of the geometry rows: the broadphase's input (Baraff II 7.2).

A geometry row i belongs to body b = ``geom_body[i]``; its pose in the world is the body pose composed with
the row's local pose (``arrays.GEOM_FIELDS``):

    R_g = R(q_b ⊗ geom_quat_i),        c_g = x_b + R(q_b) geom_pos_i          (Baraff I (2-1), (4-1))

and a shape point p (shape frame) lies at c_g + R_g p in the world. Along a world axis e_j the tight AABB
is c_g,j ± h_j with h_j = max over the shape of (R_g p)_j, the shape's support value in direction R_gᵀ e_j:

    sphere     (r,0,0)            h_j = r
    box        half extents s     h_j = Σ_k |R_jk| s_k
    capsule    (r, half length)   h_j = l |a_j| + r                      a = R_g e_z, the segment axis
    cylinder   (r, half height)   h_j = l |a_j| + r sqrt(1 − a_j²)       (rim circles of radius r at ±l a)
    ellipsoid  semi-axes s        h_j = sqrt(Σ_k (R_jk s_k)²)            (support of diag(s) · unit ball)
    hull       vertices v_m       min_m / max_m of (R_g v_m)_j           (hull frame = shape frame)
    plane      —                  the solid half-space n · (p − c_g) <= 0, n = R_g e_z (as the narrowphase
                                  reads it): ±inf on every axis, except that when n is exactly ±e_j the
                                  box ends at c_g,j on the side n faces (the ground z <= h of
                                  ``World.add_ground`` gets hi_z = h). A tilted plane's box is infinite:
                                  it overlaps every box and the narrowphase decides.

Every box is then inflated by ``margin`` [m] on every side, so that pairs closer than the margin reach the
narrowphase (speculative contacts). All of these bounds are tight: each face of the box touches the shape
(before inflation). An unknown ``geom_type`` gives NaN bounds, which the broadphase rejects (a NaN is a bug,
never scrubbed).

The kernels take the shapes as the Model's container ``geom`` (``model.fields.Geometry``, g rows), of which they
read geom_type, geom_body (g,) int32; geom_pos (g,3) m, body frame; geom_quat (g,4) shape → body;
geom_size (g,3) m; geom_vert_start, geom_vert_count (g,) int64: the row's slice of polytope_vertices (V,3) m,
shape frame (the World's ``PolytopeTable``; only CONVEX_HULL rows read it: boxes and cylinders, which also
have polytopes for the narrowphase, use their exact closed forms here);
x (n,3) m, world; q (n,4) body → world; margin scalar [m] >= 0; aabb_lo_out, aabb_hi_out (g,3) m, world.

``geom_aabbs`` runs its rows in parallel (``prange``); ``geom_aabbs_serial`` is the same per-row function in
a plain loop, for worlds with fewer than ``conventions.PARALLEL_MIN_GEOMS_AABB`` rows. Both give bitwise-equal
results.
"""

from __future__ import annotations

import numpy as np
from numba import prange

from ..conventions import GeomType
from ..jit import njit
from ..math3d import qmul_t, qrot_t, quat_matrix_t

# Type codes as plain ints, compile-time constants in the kernels. They are written out (not read from
# ``GeomType`` inside the kernels) so that Numba's cache, keyed on this file, cannot keep stale codes: if
# ``GeomType`` ever changes, the check below fails at import until this file is edited to match.
_SPHERE, _BOX, _CAPSULE, _CYLINDER, _ELLIPSOID, _CONVEX_HULL, _PLANE = 0, 1, 2, 3, 4, 5, 6
if (_SPHERE, _BOX, _CAPSULE, _CYLINDER, _ELLIPSOID, _CONVEX_HULL, _PLANE) != (
        GeomType.SPHERE, GeomType.BOX, GeomType.CAPSULE, GeomType.CYLINDER, GeomType.ELLIPSOID,
        GeomType.CONVEX_HULL, GeomType.PLANE):  # pragma: no cover - guards an edit of conventions.py
    raise ImportError("tumble.collision.aabb: the type codes here no longer match conventions.GeomType")


@njit(cache=True, forceinline=True, refcount=False)
def _geom_aabb_one(i, geom, polytope_vertices, x, q, margin, aabb_lo_out, aabb_hi_out):
    """AABB of row i of ``geom`` (``Geometry``): c_g ± h (hull: c_g + vertex bounds), inflated by margin; h per
    type as in the module docstring. The shape of this function matters to Numba: the same code with early
    returns, or with the symmetric and hull extents merged into one final write, compiled 4–5× slower
    (measured ~100 vs ~23 ns per row)."""
    geom_pos, geom_quat, geom_size = geom.geom_pos, geom.geom_quat, geom.geom_size
    t = geom.geom_type[i]
    b = geom.geom_body[i]
    bw, bx, by, bz = q[b, 0], q[b, 1], q[b, 2], q[b, 3]
    # c_g = x_b + R(q_b) geom_pos, R_g = R(q_b ⊗ geom_quat) (Baraff I (2-1), (4-1)).
    c0, c1, c2 = qrot_t(bw, bx, by, bz, geom_pos[i, 0], geom_pos[i, 1], geom_pos[i, 2])
    c0 += x[b, 0]
    c1 += x[b, 1]
    c2 += x[b, 2]
    w, u, v, z = qmul_t(bw, bx, by, bz, geom_quat[i, 0], geom_quat[i, 1], geom_quat[i, 2], geom_quat[i, 3])
    # Rotation matrix of a unit quaternion (Baraff I section 4); column k is the shape's axis k in the world.
    r00, r01, r02, r10, r11, r12, r20, r21, r22 = quat_matrix_t(w, u, v, z)
    s0, s1, s2 = geom_size[i, 0], geom_size[i, 1], geom_size[i, 2]
    if t == _SPHERE:
        h0 = h1 = h2 = s0
    elif t == _BOX:
        h0 = abs(r00) * s0 + abs(r01) * s1 + abs(r02) * s2
        h1 = abs(r10) * s0 + abs(r11) * s1 + abs(r12) * s2
        h2 = abs(r20) * s0 + abs(r21) * s1 + abs(r22) * s2
    elif t == _CAPSULE:
        # Segment ±s1 a (a = R_g e_z = column 2) swept by a sphere of radius s0.
        h0 = s1 * abs(r02) + s0
        h1 = s1 * abs(r12) + s0
        h2 = s1 * abs(r22) + s0
    elif t == _CYLINDER:
        # Rim circles of radius s0 at ±s1 a: the circle's extent along e_j is s0 |e_j − (a·e_j) a| = s0 sqrt(1 − a_j²),
        # evaluated as the norm of a's other two components: 1 − a_j² cancels catastrophically when the axis is
        # nearly along e_j (an error of ε in a_j² would give sqrt(ε) ≈ 1e-8 r instead of ≈ ε r).
        h0 = s1 * abs(r02) + s0 * np.sqrt(r12 * r12 + r22 * r22)
        h1 = s1 * abs(r12) + s0 * np.sqrt(r02 * r02 + r22 * r22)
        h2 = s1 * abs(r22) + s0 * np.sqrt(r02 * r02 + r12 * r12)
    elif t == _ELLIPSOID:
        # max of e_jᵀ R_g diag(s) u over unit u is |diag(s) R_gᵀ e_j| (Cauchy–Schwarz).
        h0 = np.sqrt((r00 * s0) ** 2 + (r01 * s1) ** 2 + (r02 * s2) ** 2)
        h1 = np.sqrt((r10 * s0) ** 2 + (r11 * s1) ** 2 + (r12 * s2) ** 2)
        h2 = np.sqrt((r20 * s0) ** 2 + (r21 * s1) ** 2 + (r22 * s2) ** 2)
    elif t == _CONVEX_HULL or t == _PLANE:
        h0 = h1 = h2 = 0.0  # unused: hull and plane extents are not symmetric, see below
    else:
        h0 = h1 = h2 = np.nan  # unknown type code: a bug the broadphase reports
    if t == _CONVEX_HULL:
        l0 = l1 = l2 = np.inf
        u0 = u1 = u2 = -np.inf
        start = geom.geom_vert_start[i]
        for m in range(start, start + geom.geom_vert_count[i]):
            p0, p1, p2 = polytope_vertices[m, 0], polytope_vertices[m, 1], polytope_vertices[m, 2]
            w0 = r00 * p0 + r01 * p1 + r02 * p2
            w1 = r10 * p0 + r11 * p1 + r12 * p2
            w2 = r20 * p0 + r21 * p1 + r22 * p2
            l0, u0 = min(l0, w0), max(u0, w0)
            l1, u1 = min(l1, w1), max(u1, w1)
            l2, u2 = min(l2, w2), max(u2, w2)
        aabb_lo_out[i, 0], aabb_hi_out[i, 0] = c0 + l0 - margin, c0 + u0 + margin
        aabb_lo_out[i, 1], aabb_hi_out[i, 1] = c1 + l1 - margin, c1 + u1 + margin
        aabb_lo_out[i, 2], aabb_hi_out[i, 2] = c2 + l2 - margin, c2 + u2 + margin
    elif t == _PLANE:
        # Half-space n · (p − c_g) <= 0, n = R_g e_z = column 2: unbounded, except on the side of axis j that
        # n faces when n is exactly ±e_j (the ground as World.add_ground makes it).
        l0 = l1 = l2 = -np.inf
        u0 = u1 = u2 = np.inf
        if r12 == 0.0 and r22 == 0.0:
            if r02 > 0.0:
                u0 = 0.0
            else:
                l0 = 0.0
        if r02 == 0.0 and r22 == 0.0:
            if r12 > 0.0:
                u1 = 0.0
            else:
                l1 = 0.0
        if r02 == 0.0 and r12 == 0.0:
            if r22 > 0.0:
                u2 = 0.0
            else:
                l2 = 0.0
        aabb_lo_out[i, 0], aabb_hi_out[i, 0] = c0 + l0 - margin, c0 + u0 + margin
        aabb_lo_out[i, 1], aabb_hi_out[i, 1] = c1 + l1 - margin, c1 + u1 + margin
        aabb_lo_out[i, 2], aabb_hi_out[i, 2] = c2 + l2 - margin, c2 + u2 + margin
    else:
        aabb_lo_out[i, 0], aabb_hi_out[i, 0] = c0 - h0 - margin, c0 + h0 + margin
        aabb_lo_out[i, 1], aabb_hi_out[i, 1] = c1 - h1 - margin, c1 + h1 + margin
        aabb_lo_out[i, 2], aabb_hi_out[i, 2] = c2 - h2 - margin, c2 + h2 + margin


@njit(cache=True, refcount=False)
def geom_aabbs_serial(geom, polytope_vertices, x, q, margin, aabb_lo_out, aabb_hi_out):
    """Serial driver of ``geom_aabbs`` (same arguments, bitwise-equal result)."""
    for i in range(geom.geom_type.shape[0]):
        _geom_aabb_one(i, geom, polytope_vertices, x, q, margin, aabb_lo_out, aabb_hi_out)


@njit(cache=True, forceinline=True, refcount=False)
def swept_aabbs_serial(geom, polytope_vertices, x, q, v, w, margin, dt, aabb_lo_out, aabb_hi_out, sweep_out):
    """``geom_aabbs_serial`` and then ``motion_sweep`` over a step of dt [s] in one call (for a few shapes the
    calls cost more than the boxes)."""
    geom_aabbs_serial(geom, polytope_vertices, x, q, margin, aabb_lo_out, aabb_hi_out)
    motion_sweep(geom.geom_body, x, v, w, dt, aabb_lo_out, aabb_hi_out, sweep_out)


@njit(cache=True, parallel=True)
def geom_aabbs(geom, polytope_vertices, x, q, margin, aabb_lo_out, aabb_hi_out):
    """Tight world AABB of every geometry row of ``geom`` (``Geometry``), inflated by ``margin`` [m] (Baraff II
    7.2), the bodies at x (n,3) [m], q (n,4) and hull vertices in polytope_vertices (V,3) [m].

    Writes aabb_lo_out, aabb_hi_out (g,3) [m], world frame; plane rows get ±inf bounds (see the module
    docstring: finite only on the outward side of an axis-aligned plane).
    Arguments and the per-type formulas: see the module docstring.
    """
    for i in prange(geom.geom_type.shape[0]):
        _geom_aabb_one(i, geom, polytope_vertices, x, q, margin, aabb_lo_out, aabb_hi_out)


@njit(cache=True, refcount=False)
def motion_sweep(geom_body, x, v, w, dt, aabb_lo, aabb_hi, sweep_out):
    """Inflate each finite AABB by how far its shape can move in a step of dt [s]: dt (|v| + |ω| R), R the
    distance from the body's COM to the far corner of the box (a bound on every point's lever arm), and
    write that distance to sweep_out (g,) [m]. Moving boxes then overlap what they may reach this step
    (speculative contacts, Box2D's and Bullet's cure for tunnelling); resting bodies are unchanged."""
    for i in range(geom_body.shape[0]):
        b = geom_body[i]
        speed = np.sqrt(v[b, 0] ** 2 + v[b, 1] ** 2 + v[b, 2] ** 2)
        spin = np.sqrt(w[b, 0] ** 2 + w[b, 1] ** 2 + w[b, 2] ** 2)
        s = 0.0
        if speed > 0.0 or spin > 0.0:
            r2 = 0.0
            for k in range(3):
                half = 0.5 * (aabb_hi[i, k] - aabb_lo[i, k])
                far = abs(0.5 * (aabb_hi[i, k] + aabb_lo[i, k]) - x[b, k]) + half
                r2 += far * far
            s = dt * (speed + spin * np.sqrt(r2))
            if np.isfinite(s):
                for k in range(3):
                    aabb_lo[i, k] -= s
                    aabb_hi[i, k] += s
            else:
                s = 0.0
        sweep_out[i] = s
