"""Capsule against a convex polytope (box, convex hull, cylinder prism), exactly.

A capsule is its core segment S = [c0, c1] swept by a sphere of radius r, so it touches polytope B where
dist(S, B) ≤ r. Two regimes:

- **S outside B.** The closest points of S and B lie on a pair of features: an end of S against a face
  interior of B, or S against an edge of B (edge ends cover B's vertices, S's ends are clamped). The
  minimum over those pairs is exact; the normal is (p − q)/|p − q| and the depth r − |p − q|.
- **S meets B** (found by clipping S against B's face half-spaces, Cyrus–Beck). S and B are both
  polytopes, so separating axes are complete (Baraff II 7.1): B's face normals and S × (edges of B).
  The axis of greatest separation s < 0 gives the normal and depth r − s.

When the normal is one of B's face normals, the segment is clipped to that face's prism and each clipped
end within the margin becomes a contact: a capsule lying on a box face gets two contacts, as Baraff II 8
asks for a stable resting contact; a tilted capsule keeps only its low end. Otherwise one contact at the
closest points. Points are midway between the two surfaces, normals point from B toward the capsule A,
depth is the penetration (negative within the margin). World frame, metres.
"""

from __future__ import annotations

import numpy as np

from ..jit import njit
from ..math3d import centroid
from . import features
from .sat import KIND_CAPSULE, bounding_radius, face_preference, segment_params

FACE_ALIGNED = 1.0 - 1e-12
"""cos of the angle (1.4e-6 rad) under which the closest-point normal counts as B's face normal. Closest points
on a face interior give the face normal to rounding (~1e-10 rad even at a 1 µm gap); a looser slack would
also snap the normal of a segment end just beyond a face's edge, whose closest point is on the edge, and
report depths along the face normal that differ from the true ones (seen: 1.4 mrad, 2e-9 m)."""

TOUCHING = 1e-12
"""m. Below this core distance the closest-point normal is ill-defined; separating axes take over."""



@njit(cache=True, forceinline=True, refcount=False)
def _segment_edge_closest(c0, c1, wv, a, b):
    """Closest points (p on [c0, c1], q on edge a → b of wv) as six scalars."""
    dx, dy, dz = c1[0] - c0[0], c1[1] - c0[1], c1[2] - c0[2]
    ex, ey, ez = wv[b, 0] - wv[a, 0], wv[b, 1] - wv[a, 1], wv[b, 2] - wv[a, 2]
    s, t = segment_params(c0[0], c0[1], c0[2], dx, dy, dz, wv[a, 0], wv[a, 1], wv[a, 2], ex, ey, ez)
    return (c0[0] + s * dx, c0[1] + s * dy, c0[2] + s * dz,
            wv[a, 0] + t * ex, wv[a, 1] + t * ey, wv[a, 2] + t * ez)


@njit(cache=True, forceinline=True, refcount=False)
def _face_height(wn, wd, f, p):
    return wn[f, 0] * p[0] + wn[f, 1] * p[1] + wn[f, 2] * p[2] - wd[f]


@njit(cache=True, forceinline=True, refcount=False)
def _side_normal(wv, wn, f, a, b):
    """Outward normal (unnormalised) of the side plane through face f's edge a → b: edge × n_f."""
    ex, ey, ez = wv[b, 0] - wv[a, 0], wv[b, 1] - wv[a, 1], wv[b, 2] - wv[a, 2]
    return ey * wn[f, 2] - ez * wn[f, 1], ez * wn[f, 0] - ex * wn[f, 2], ex * wn[f, 1] - ey * wn[f, 0]


@njit(cache=True)
def inside_face(wv, wn, f, s0, ns, face_verts, px, py, pz):
    """True when the point p (on or off the plane of face f) lies within the prism over that face polygon:
    on the inner side of every side plane (edge × outward normal)."""
    for k in range(ns):
        a, b = face_verts[s0 + k], face_verts[s0 + (k + 1) % ns]
        sx, sy, sz = _side_normal(wv, wn, f, a, b)
        if sx * (px - wv[a, 0]) + sy * (py - wv[a, 1]) + sz * (pz - wv[a, 2]) > 0.0:
            return False
    return True


@njit(cache=True)
def _core_meets(c0, c1, wn, wd, nf):
    """Does segment [c0, c1] meet the polytope ∩ₓ {n_f · x ≤ d_f}? (Cyrus–Beck clipping of the parameter.)"""
    t_in, t_out = 0.0, 1.0
    for f in range(nf):
        h0, h1 = _face_height(wn, wd, f, c0), _face_height(wn, wd, f, c1)
        if h0 > 0.0 and h1 > 0.0:
            return False
        if h0 > 0.0:
            t_in = max(t_in, h0 / (h0 - h1))
        elif h1 > 0.0:
            t_out = min(t_out, h0 / (h0 - h1))
        if t_in > t_out:
            return False
    return True


@njit(cache=True)
def _face_contacts(capsule, world, face, face_verts, margin, out, base):
    """Clip the segment of ``capsule`` = (c0, c1, r) to the prism over face ``face`` = (f, s0, ns): face f of
    the polytope ``world`` = (wv, wn, wd), whose ns vertices are face_verts[s0:s0+ns]; every clipped end within
    ``margin`` is a contact with normal n_f, depth r − h (h: height of the end above the face plane), written
    to ``out`` from row ``base``. Returns the count (0–2)."""
    c0, c1, r = capsule
    wv, wn, wd = world
    f, s0, ns = face
    point_out, normal_out, depth_out, kind_out, feature_out = out
    t0, t1, side0, side1 = 0.0, 1.0, -1, -1
    for k in range(ns):
        a, b = face_verts[s0 + k], face_verts[s0 + (k + 1) % ns]
        sx, sy, sz = _side_normal(wv, wn, f, a, b)
        g0 = sx * (c0[0] - wv[a, 0]) + sy * (c0[1] - wv[a, 1]) + sz * (c0[2] - wv[a, 2])
        g1 = sx * (c1[0] - wv[a, 0]) + sy * (c1[1] - wv[a, 1]) + sz * (c1[2] - wv[a, 2])
        if g0 > 0.0 and g1 > 0.0:
            return 0
        if g0 > 0.0:
            t = g0 / (g0 - g1)
            if t > t0:
                t0, side0 = t, k
        elif g1 > 0.0:
            t = g0 / (g0 - g1)
            if t < t1:
                t1, side1 = t, k
    if t0 > t1:
        return 0
    n = 0
    for end, t, side in ((0, t0, side0), (1, t1, side1)):
        px = c0[0] + t * (c1[0] - c0[0])
        py = c0[1] + t * (c1[1] - c0[1])
        pz = c0[2] + t * (c1[2] - c0[2])
        h = wn[f, 0] * px + wn[f, 1] * py + wn[f, 2] * pz - wd[f]
        if h - r > margin or (end == 1 and t1 - t0 <= 0.0):
            continue
        s = 0.5 * (h + r)  # from the core point down to the midpoint of the face and the capsule surface
        row = base + n
        point_out[row, 0] = px - s * wn[f, 0]
        point_out[row, 1] = py - s * wn[f, 1]
        point_out[row, 2] = pz - s * wn[f, 2]
        for c in range(3):
            normal_out[row, c] = wn[f, c]
        depth_out[row] = r - h
        kind_out[row] = KIND_CAPSULE
        feature_out[row] = features.capsule_end(f, side + 1, end)
        n += 1
    return n


@njit(cache=True)
def _point_contact(p, q, normal, r, sep, feature, out, base):
    """One contact between core point p and B's point q (3-tuples) along ``normal`` n (B → A) with core
    separation ``sep``: the point midway between q and the capsule surface point p − r n."""
    px, py, pz = p
    qx, qy, qz = q
    nx, ny, nz = normal
    point_out, normal_out, depth_out, kind_out, feature_out = out
    point_out[base, 0] = 0.5 * (qx + px - r * nx)
    point_out[base, 1] = 0.5 * (qy + py - r * ny)
    point_out[base, 2] = 0.5 * (qz + pz - r * nz)
    normal_out[base, 0], normal_out[base, 1], normal_out[base, 2] = nx, ny, nz
    depth_out[base] = r - sep
    kind_out[base] = KIND_CAPSULE
    feature_out[base] = feature
    return 1


@njit(cache=True)
def capsule_polytope(c0, c1, r, world, rows, polytopes, margin, out, base):
    """Contacts of capsule A (core ends c0, c1 (3-tuples), radius r) with polytope B (``world`` = (world
    vertices wv (nv, 3), face normals wn (nf, 3), offsets wd (nf,)); ``rows`` = (nv, nf, first face row f0,
    first edge row e0, edge count ne) in the packed ``polytopes`` tables). Normals point B → A; up to 2
    contacts are written to ``out`` = (point, normal, depth, kind, feature) from row ``base``.
    Returns the number of contacts written (0–2)."""
    wv, wn, wd = world
    nv, nf, f0, e0, ne = rows
    face_vstart, face_vcount, face_verts, edges = (polytopes.face_vstart, polytopes.face_vcount,
                                                   polytopes.face_verts, polytopes.edges)
    if not _core_meets(c0, c1, wn, wd, nf):
        best, feature = np.inf, -1
        px = py = pz = qx = qy = qz = 0.0
        for end in range(2):  # ends of S over face interiors
            c = c0 if end == 0 else c1
            for f in range(nf):
                h = _face_height(wn, wd, f, c)
                if h <= 0.0 or h >= best:
                    continue
                if inside_face(wv, wn, f, face_vstart[f0 + f], face_vcount[f0 + f], face_verts, c[0], c[1], c[2]):
                    best, feature = h, features.closest(features.CLOSEST_FACE, f)
                    px, py, pz = c[0], c[1], c[2]
                    qx, qy, qz = c[0] - h * wn[f, 0], c[1] - h * wn[f, 1], c[2] - h * wn[f, 2]
        for e in range(ne):  # S against B's edges (and so its vertices)
            p0x, p0y, p0z, q0x, q0y, q0z = _segment_edge_closest(c0, c1, wv, edges[e0 + e, 0], edges[e0 + e, 1])
            dist = np.sqrt((p0x - q0x) ** 2 + (p0y - q0y) ** 2 + (p0z - q0z) ** 2)
            if dist < best:
                best, feature = dist, features.closest(features.CLOSEST_EDGE, e)
                px, py, pz, qx, qy, qz = p0x, p0y, p0z, q0x, q0y, q0z
        if best - r > margin:
            return 0
        if best > TOUCHING:
            nx, ny, nz = (px - qx) / best, (py - qy) / best, (pz - qz) / best
            face, align = -1, FACE_ALIGNED
            for f in range(nf):
                a = wn[f, 0] * nx + wn[f, 1] * ny + wn[f, 2] * nz
                if a > align:
                    face, align = f, a
            if face >= 0:
                n = _face_contacts((c0, c1, r), world, (face, face_vstart[f0 + face], face_vcount[f0 + face]),
                                   face_verts, margin, out, base)
                if n:
                    return n
            return _point_contact((px, py, pz), (qx, qy, qz), (nx, ny, nz), r, best, feature, out, base)
    # S meets B: separating axes over B's faces, then S × edges of B (both orientations)
    best_face, face_sep = -1, -np.inf
    for f in range(nf):
        s = min(_face_height(wn, wd, f, c0), _face_height(wn, wd, f, c1))
        if s > face_sep:
            best_face, face_sep = f, s
    ux, uy, uz = c1[0] - c0[0], c1[1] - c0[1], c1[2] - c0[2]
    uu = ux * ux + uy * uy + uz * uz
    best_edge, edge_sep, ex_, ey_, ez_ = -1, -np.inf, 0.0, 0.0, 0.0
    for e in range(ne):
        a, b = edges[e0 + e, 0], edges[e0 + e, 1]
        dx, dy, dz = wv[b, 0] - wv[a, 0], wv[b, 1] - wv[a, 1], wv[b, 2] - wv[a, 2]
        ax, ay, az = uy * dz - uz * dy, uz * dx - ux * dz, ux * dy - uy * dx
        aa = ax * ax + ay * ay + az * az
        if aa <= 1e-12 * uu * (dx * dx + dy * dy + dz * dz):
            continue  # parallel: the face normals beside this edge already cover the direction
        inv = 1.0 / np.sqrt(aa)
        ax, ay, az = ax * inv, ay * inv, az * inv
        lo, hi = np.inf, -np.inf
        for k in range(nv):
            v = ax * wv[k, 0] + ay * wv[k, 1] + az * wv[k, 2]
            lo, hi = min(lo, v), max(hi, v)
        s0 = ax * c0[0] + ay * c0[1] + az * c0[2]
        s1 = ax * c1[0] + ay * c1[1] + az * c1[2]
        ea = ax * wv[a, 0] + ay * wv[a, 1] + az * wv[a, 2]
        eb = ax * wv[b, 0] + ay * wv[b, 1] + az * wv[b, 2]
        # Each orientation of the axis is its own candidate: a face of the Minkowski difference S − B with
        # that normal exists only where e supports B along it (its Gauss-map arc meets S's great circle;
        # parallel edges elsewhere on B share the direction but not the closest points), and its
        # separation is that orientation's. Keeping only the orientation that separates more lost the
        # axis when the two nearly tie (a capsule centred in a cylinder prism): rounding could pick the
        # side where e does not support, and the parallel edge opposite did the same the other way, so
        # the depth came out 2.6 mm too deep (found by tests/collision/test_capsule_polytope.py).
        for sign in (1.0, -1.0):    # the axis pointing B → A, then reversed
            support = hi if sign > 0.0 else -lo
            sep = min(sign * s0, sign * s1) - support
            tol = 1e-9 * (1.0 + abs(support))
            if sign * ea < support - tol or sign * eb < support - tol:
                continue
            if sep > edge_sep:
                best_edge, edge_sep, ex_, ey_, ez_ = e, sep, sign * ax, sign * ay, sign * az
    cx, cy, cz = centroid(wv, nv)
    half = 0.5 * np.sqrt(uu)
    if edge_sep > face_sep + face_preference(half + r, bounding_radius(wv, nv, cx, cy, cz)):
        if edge_sep - r > margin:
            return 0
        px, py, pz, qx, qy, qz = _segment_edge_closest(c0, c1, wv, edges[e0 + best_edge, 0],
                                                       edges[e0 + best_edge, 1])
        return _point_contact((px, py, pz), (qx, qy, qz), (ex_, ey_, ez_), r, edge_sep,
                              features.closest(features.CLOSEST_EDGE, best_edge), out, base)
    if face_sep - r > margin:
        return 0
    n = _face_contacts((c0, c1, r), world, (best_face, face_vstart[f0 + best_face], face_vcount[f0 + best_face]),
                       face_verts, margin, out, base)
    if n and best_edge >= 0 and edge_sep >= face_sep:
        # The clipped ends fall short of the face axis's overlap r − face_sep when the deepest part of the
        # segment lies beside the face, over one of its edges; the edge axis, which separates at least as
        # much as the face, is then the contact (as sat.collide_polytopes decides for a short manifold).
        depth_out = out[2]
        deepest = depth_out[base]
        for j in range(1, n):
            deepest = max(deepest, depth_out[base + j])
        if deepest < r - face_sep - 1e-9 * (1.0 + r):
            px, py, pz, qx, qy, qz = _segment_edge_closest(c0, c1, wv, edges[e0 + best_edge, 0],
                                                           edges[e0 + best_edge, 1])
            return _point_contact((px, py, pz), (qx, qy, qz), (ex_, ey_, ez_), r, edge_sep,
                                  features.closest(features.CLOSEST_EDGE, best_edge), out, base)
    if n:
        return n
    # the segment's deepest end lies outside the face's prism: report it at the axis's separation
    c = c0 if _face_height(wn, wd, best_face, c0) <= _face_height(wn, wd, best_face, c1) else c1
    h = _face_height(wn, wd, best_face, c)
    return _point_contact((c[0], c[1], c[2]), (c[0] - h * wn[best_face, 0], c[1] - h * wn[best_face, 1],
                                               c[2] - h * wn[best_face, 2]),
                          (wn[best_face, 0], wn[best_face, 1], wn[best_face, 2]), r, h,
                          features.closest(features.CLOSEST_FACE, best_face), out, base)
