"""Closed-form contact tests for spheres, capsules and planes, and polytopes against a plane.

Every function takes shape A first and B second and writes contacts whose normal points from B toward A
(Baraff II 8), whose ``depth`` is the penetration along it (negative: a gap, reported because it is
within ``margin``), and whose point is midway between the two surfaces, into ``out`` = (point (S, 3),
normal (S, 3), depth (S,), kind (S,), feature (S,)) from row ``base``. Returns the number written.
World frame throughout; points are 3-tuples; a plane is (nx, ny, nz, d): {p : n · p = d} with unit normal n,
solid below. A capsule is the segment [c0, c1] swept by a sphere of radius r.
"""

from __future__ import annotations

import numpy as np

from ..jit import njit
from ..math3d import qrot_inv_t, qrot_t
from . import features
from .capsule_polytope import inside_face
from .sat import KIND_CAPSULE, KIND_SPHERE, KIND_VERTEX_FACE, reduce_manifold, segment_params


@njit(cache=True, forceinline=True, refcount=False)
def _write(out, row, point, normal, depth, kind, feature):
    """One contact into row ``row`` of ``out`` (module docstring)."""
    point_out, normal_out, depth_out, kind_out, feature_out = out
    point_out[row, 0], point_out[row, 1], point_out[row, 2] = point
    normal_out[row, 0], normal_out[row, 1], normal_out[row, 2] = normal
    depth_out[row] = depth
    kind_out[row] = kind
    feature_out[row] = feature


@njit(cache=True)
def spheres(a, ra, b, rb, margin, feature, out, base):
    """Sphere A (centre a, radius ra) against sphere B: n = (a − b)/|a − b|, depth = ra + rb − |a − b|.
    Concentric spheres get n = +z (any unit vector is a valid normal there)."""
    ax, ay, az = a
    bx, by, bz = b
    dx, dy, dz = ax - bx, ay - by, az - bz
    dist = np.sqrt(dx * dx + dy * dy + dz * dz)
    depth = ra + rb - dist
    if depth < -margin:
        return 0
    if dist > 0.0:
        nx, ny, nz = dx / dist, dy / dist, dz / dist
    else:
        nx, ny, nz = 0.0, 0.0, 1.0
    # midpoint of the surface points b + rb n and a − ra n
    s = 0.5 * (rb - ra + dist)
    _write(out, base, (bx + s * nx, by + s * ny, bz + s * nz), (nx, ny, nz), depth, KIND_SPHERE, feature)
    return 1


@njit(cache=True)
def sphere_plane(c, r, plane, margin, feature, out, base):
    """Sphere A (centre c, radius r) against plane B: depth = r − (n · c − d)."""
    cx, cy, cz = c
    nx, ny, nz, d = plane
    height = nx * cx + ny * cy + nz * cz - d
    depth = r - height
    if depth < -margin:
        return 0
    s = 0.5 * (height + r)  # from the centre down to the midpoint of plane and sphere bottom
    _write(out, base, (cx - s * nx, cy - s * ny, cz - s * nz), (nx, ny, nz), depth, KIND_SPHERE, feature)
    return 1


@njit(cache=True, forceinline=True, refcount=False)
def _closest_on_segment(px, py, pz, ax, ay, az, bx, by, bz):
    """Parameter t ∈ [0, 1] of the point of segment [a, b] closest to p."""
    ex, ey, ez = bx - ax, by - ay, bz - az
    ee = ex * ex + ey * ey + ez * ez
    if ee <= 0.0:
        return 0.0
    t = ((px - ax) * ex + (py - ay) * ey + (pz - az) * ez) / ee
    return min(max(t, 0.0), 1.0)


@njit(cache=True)
def capsule_sphere(c0, c1, ra, centre, rb, margin, out, base):
    """Capsule A against sphere B (``centre``, rb): the sphere against the closest point of the capsule's
    segment."""
    sx, sy, sz = centre
    t = _closest_on_segment(sx, sy, sz, c0[0], c0[1], c0[2], c1[0], c1[1], c1[2])
    return spheres((c0[0] + t * (c1[0] - c0[0]), c0[1] + t * (c1[1] - c0[1]), c0[2] + t * (c1[2] - c0[2])), ra,
                   centre, rb, margin, features.POINT_ID, out, base)


@njit(cache=True)
def capsule_plane(c0, c1, r, plane, margin, out, base):
    """Capsule A against plane B: each end sphere against the plane (two contacts when it lies flat);
    features 0 and 1 name the ends."""
    kind_out = out[3]
    n = sphere_plane(c0, r, plane, margin, features.capsule_end(0, 0, 0), out, base)
    n += sphere_plane(c1, r, plane, margin, features.capsule_end(0, 0, 1), out, base + n)
    for k in range(n):
        kind_out[base + k] = KIND_CAPSULE
    return n


@njit(cache=True)
def capsules(a0, a1, ra, b0, b1, rb, margin, out, base):
    """Capsule A (core ends a0, a1: 3-tuples) against capsule B (b0, b1): spheres at the closest points of the
    two segments; when the segments are parallel and overlap along their length, two contacts at the ends of
    the overlap (``features.capsule_end`` 0 and 1)."""
    kind_out = out[3]
    dax, day, daz = a1[0] - a0[0], a1[1] - a0[1], a1[2] - a0[2]
    dbx, dby, dbz = b1[0] - b0[0], b1[1] - b0[1], b1[2] - b0[2]
    la2 = dax * dax + day * day + daz * daz
    lb2 = dbx * dbx + dby * dby + dbz * dbz
    cx, cy, cz = day * dbz - daz * dby, daz * dbx - dax * dbz, dax * dby - day * dbx
    if cx * cx + cy * cy + cz * cz <= 1e-12 * la2 * lb2:
        # parallel: project B's ends onto A's line and keep the overlap interval [t0, t1] of A
        u0 = (b0[0] - a0[0]) * dax + (b0[1] - a0[1]) * day + (b0[2] - a0[2]) * daz
        u1 = (b1[0] - a0[0]) * dax + (b1[1] - a0[1]) * day + (b1[2] - a0[2]) * daz
        t0 = max(0.0, min(u0, u1) / la2)
        t1 = min(1.0, max(u0, u1) / la2)
        if t1 > t0:
            n = 0
            for f in range(2):
                t = t0 if f == 0 else t1
                px, py, pz = a0[0] + t * dax, a0[1] + t * day, a0[2] + t * daz
                u = _closest_on_segment(px, py, pz, b0[0], b0[1], b0[2], b1[0], b1[1], b1[2])
                n += spheres((px, py, pz), ra, (b0[0] + u * dbx, b0[1] + u * dby, b0[2] + u * dbz), rb, margin,
                             features.capsule_end(0, 0, f), out, base + n)
            for k in range(n):
                kind_out[base + k] = KIND_CAPSULE
            return n
    s, t = segment_params(a0[0], a0[1], a0[2], dax, day, daz, b0[0], b0[1], b0[2], dbx, dby, dbz)
    n = spheres((a0[0] + s * dax, a0[1] + s * day, a0[2] + s * daz), ra,
                (b0[0] + t * dbx, b0[1] + t * dby, b0[2] + t * dbz), rb, margin, features.POINT_ID, out, base)
    if n:
        kind_out[base] = KIND_CAPSULE
    return n


@njit(cache=True)
def sphere_box(c, r, pose, half, margin, out, base):
    """Sphere A (centre c, radius r) against box B (``pose`` = centre b and orientation q (7-tuple), half
    extents ``half`` = h). The closest box point to the centre, found in the box frame by clamping; a centre
    inside the box is pushed out through the nearest face. Feature: which of the 27 box regions (faces, edges,
    corners, inside) the centre is in."""
    cx, cy, cz = c
    bx, by, bz, qw, qx, qy, qz = pose
    hx, hy, hz = half
    lx, ly, lz = qrot_inv_t(qw, qx, qy, qz, cx - bx, cy - by, cz - bz)
    px, py, pz = min(max(lx, -hx), hx), min(max(ly, -hy), hy), min(max(lz, -hz), hz)
    region = _region(lx, hx) * 9 + _region(ly, hy) * 3 + _region(lz, hz)
    dx, dy, dz = lx - px, ly - py, lz - pz
    dist = np.sqrt(dx * dx + dy * dy + dz * dz)
    if dist > 0.0:
        depth = r - dist
        if depth < -margin:
            return 0
        nlx, nly, nlz = dx / dist, dy / dist, dz / dist
    else:
        # inside: leave through the face with the least penetration
        gx, gy, gz = hx - abs(lx), hy - abs(ly), hz - abs(lz)
        if gx <= gy and gx <= gz:
            nlx, nly, nlz, gap = (1.0 if lx >= 0 else -1.0), 0.0, 0.0, gx
            px = nlx * hx
        elif gy <= gz:
            nlx, nly, nlz, gap = 0.0, (1.0 if ly >= 0 else -1.0), 0.0, gy
            py = nly * hy
        else:
            nlx, nly, nlz, gap = 0.0, 0.0, (1.0 if lz >= 0 else -1.0), gz
            pz = nlz * hz
        depth = r + gap
        dist = -gap
    nx, ny, nz = qrot_t(qw, qx, qy, qz, nlx, nly, nlz)
    wx, wy, wz = qrot_t(qw, qx, qy, qz, px, py, pz)
    s = 0.5 * (dist - r)  # from the box point along n to the midpoint with the sphere's surface point
    _write(out, base, (bx + wx + s * nx, by + wy + s * ny, bz + wz + s * nz), (nx, ny, nz), depth, KIND_SPHERE,
           features.closest(features.CLOSEST_REGION, region))
    return 1


@njit(cache=True, forceinline=True, refcount=False)
def _region(x, h):
    """0 below −h, 1 within [−h, h], 2 above h."""
    return 0 if x < -h else (2 if x > h else 1)


@njit(cache=True)
def polytope_plane(wv, nv, plane, margin, scratch, out, base):
    """Polytope A (world vertices wv[:nv]) against plane B: every vertex within ``margin`` of the plane is a
    vertex–face contact (feature: ``features.vertex``); more than 4 are reduced to the 4 spanning the largest
    area. ``scratch`` = (points (C, 3), depths (C,), features (C,), kept (C,))."""
    nx, ny, nz, d = plane
    pts, dep, feat, keep = scratch
    m = 0
    for k in range(nv):
        height = nx * wv[k, 0] + ny * wv[k, 1] + nz * wv[k, 2] - d
        if height > margin:
            continue
        for c in range(3):
            pts[m, c] = wv[k, c]
        pts[m, 0] -= 0.5 * height * nx
        pts[m, 1] -= 0.5 * height * ny
        pts[m, 2] -= 0.5 * height * nz
        dep[m] = -height
        feat[m] = features.vertex(k)
        m += 1
    count = reduce_manifold(pts, dep, m, nx, ny, nz, keep)
    for k in range(count):
        j = keep[k]
        _write(out, base + k, (pts[j, 0], pts[j, 1], pts[j, 2]), (nx, ny, nz), dep[j], KIND_VERTEX_FACE, feat[j])
    return count


@njit(cache=True)
def sphere_polytope(c, r, world, rows, polytopes, margin, out, base):
    """Sphere A (centre c, radius r) against polytope B (``world`` = (world vertices wv, face normals wn,
    offsets wd); ``rows`` = (vertex count, face count nf, first face row f0, first edge row e0, edge count ne)
    in the packed ``polytopes`` tables). Centre outside: the closest point of B over its face interiors and its edges
    (vertices are edge ends), exact. Centre inside: out through the face of least penetration. Feature:
    ``features.closest`` of the face or edge."""
    cx, cy, cz = c
    wv, wn, wd = world
    _, nf, f0, e0, ne = rows
    face_vstart, face_vcount, face_verts, edges = (polytopes.face_vstart, polytopes.face_vcount,
                                                   polytopes.face_verts, polytopes.edges)
    inside, best_face, best_gap = True, -1, -np.inf
    for f in range(nf):
        h = wn[f, 0] * cx + wn[f, 1] * cy + wn[f, 2] * cz - wd[f]
        if h > 0.0:
            inside = False
        if h > best_gap:
            best_face, best_gap = f, h
    if inside:
        nx, ny, nz = wn[best_face, 0], wn[best_face, 1], wn[best_face, 2]
        return sphere_plane(c, r, (nx, ny, nz, wd[best_face]), margin,
                            features.closest(features.CLOSEST_FACE, best_face), out, base)
    if best_gap > r + margin:
        return 0
    best, bx, by, bz, feature = np.inf, 0.0, 0.0, 0.0, -1
    for f in range(nf):
        h = wn[f, 0] * cx + wn[f, 1] * cy + wn[f, 2] * cz - wd[f]
        if h <= 0.0 or h >= best:
            continue
        px, py, pz = cx - h * wn[f, 0], cy - h * wn[f, 1], cz - h * wn[f, 2]
        within = inside_face(wv, wn, f, face_vstart[f0 + f], face_vcount[f0 + f], face_verts, px, py, pz)
        if within:
            best, bx, by, bz, feature = h, px, py, pz, features.closest(features.CLOSEST_FACE, f)
    for e in range(ne):
        a, b = edges[e0 + e, 0], edges[e0 + e, 1]
        t = _closest_on_segment(cx, cy, cz, wv[a, 0], wv[a, 1], wv[a, 2], wv[b, 0], wv[b, 1], wv[b, 2])
        px = wv[a, 0] + t * (wv[b, 0] - wv[a, 0])
        py = wv[a, 1] + t * (wv[b, 1] - wv[a, 1])
        pz = wv[a, 2] + t * (wv[b, 2] - wv[a, 2])
        dist = np.sqrt((cx - px) ** 2 + (cy - py) ** 2 + (cz - pz) ** 2)
        if dist < best:
            best, bx, by, bz, feature = dist, px, py, pz, features.closest(features.CLOSEST_EDGE, e)
    return spheres(c, r, (bx, by, bz), 0.0, margin, feature, out, base)
