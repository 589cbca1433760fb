"""Convex polyhedra by separating axes (Baraff II 7.1), with contact manifolds by polygon clipping.

Two convex polyhedra are disjoint iff some face normal of either, or some cross product of an edge of
one with an edge of the other, separates them. The axis of greatest separation s is found (s > 0:
apart by s; s < 0: penetrating by −s). Only edge pairs whose Gauss-map arcs cross (those that form a
face of the Minkowski difference) can give that axis, which prunes most pairs (Gregorius, GDC 2013).
The best axis is kept per pair as a *witness*: next step it is tried first, and if it still separates the
pair the test ends there (Baraff II 7.1: "the separating plane ... is cached").

Contacts (all in world coordinates):
- face axis: the face is the reference; the most anti-parallel face of the other polyhedron (incident)
  is clipped against the reference face's side planes (Sutherland–Hodgman). Clipped points that came
  from incident vertices are vertex–face contacts, points made by cutting an incident edge with a
  reference side plane are edge–edge contacts (Baraff II 8). At most 4 are kept, spanning the largest area.
- edge–edge axis: one contact at the midpoint of the closest points of the two edges.

The contact point is the midpoint between the incident point and its projection on the reference
plane; ``depth`` is the penetration along the normal (negative: separated by that much, reported because
it is within the contact margin). Normals point from body B toward body A.
"""

from __future__ import annotations

import numpy as np

from ..jit import njit
from ..math3d import centroid, qrot_t
from ..model.fields import MAX_CONTACTS, WITNESS_NONE
from . import features, gjk

# Contact kinds (also used by the closed-form pairs); ``contacts.KIND_NAMES`` maps them to strings.
KIND_VERTEX_FACE = 0
KIND_EDGE_EDGE = 1
KIND_SPHERE = 2
KIND_CAPSULE = 3
KIND_ELLIPSOID = 4
"""Contact kinds (``kind`` of a contact row, named by detect.KIND_NAMES); KIND_ELLIPSOID: the point contact of a
curved surface (collision/ellipsoid.py). GJK's shape kinds are another set: gjk.SHAPE_*."""

# Witness axis types (WITNESS_NONE: none cached yet)
WITNESS_FACE_A = 0
WITNESS_FACE_B = 1
WITNESS_EDGES = 2

FACE_PREFERENCE_MIN = 1e-3
"""m. The least face preference (see ``face_preference``)."""

FACE_PREFERENCE_REL = 1e-3
"""The face preference grows as this × the smaller of the two shapes' bounding radii beyond 1 m."""


FACE_ALIGNED_COS = 0.99875
"""cos 0.05 rad. Nearly parallel edges of two faces that lie on each other (a box resting slightly tilted
and turned on another) cross along an axis within a few degrees of the face normal, and that axis can
separate a hair more than the face because of the tilt. When the shapes overlap along it too, it is the
face axis badly conditioned, not edges crossing: when the face manifold falls short, the crossing joins it
(``edge_axis_along_face``) instead of the single edge contact, on which a resting box would rock. (Shapes
apart along the edge axis keep the edge contact, whose gap is then the true one.)"""


@njit(cache=True, forceinline=True, refcount=False)
def edge_axis_along_face(ax, ay, az, nx, ny, nz):
    """True when the axis (ax, ay, az) (any length) lies within FACE_ALIGNED_COS of the unit normal n."""
    d = ax * nx + ay * ny + az * nz
    return d * d > FACE_ALIGNED_COS * FACE_ALIGNED_COS * (ax * ax + ay * ay + az * az)


@njit(cache=True, forceinline=True, refcount=False)
def face_preference(radius_a, radius_b):
    """m. How much more an edge pair must separate than the best face axis to be chosen: near-ties go to
    faces, whose clipped manifolds keep a box that rests tilted on another from rocking on one edge contact.
    max(1 mm, 1e-3 × the smaller bounding radius): the tilt of a resting box makes edge axes win by up to
    ~0.2 × size × tilt, so a fixed 1 mm let 10 m boxes tilted by 0.01 rad fall to edge contacts in 44% of
    poses (7% now), while below 1 m no relative rule kept as many face manifolds (docs/collision.md has
    the figures, from scripts/face_preference.py)."""
    return max(FACE_PREFERENCE_MIN, FACE_PREFERENCE_REL * min(radius_a, radius_b))


@njit(cache=True, forceinline=True, refcount=False)
def bounding_radius(wv, nv, cx, cy, cz):
    """Largest distance of the vertices wv[:nv] from the point c."""
    r2 = 0.0
    for k in range(nv):
        r2 = max(r2, (wv[k, 0] - cx) ** 2 + (wv[k, 1] - cy) ** 2 + (wv[k, 2] - cz) ** 2)
    return np.sqrt(r2)

CLIP_ROUNDING = 1e-12
"""m. Clipping treats a vertex this close to a side plane as lying on it: far above the rounding of
coordinates up to a kilometre (~1e-13 m), far below any contact feature."""

MERGE_DISTANCE = 1e-3
"""m. GJK's closest point replaces a clipped candidate this close to it instead of joining as another
contact (two contacts at one place would double that place's impulse)."""

GJK_TOL = 1e-12
"""m. Accuracy asked of GJK for the distance of polytopes apart (exact to rounding for polytopes anyway)."""

DEPTH_ROUNDING = 1e-9
"""m. A clipped manifold counts as falling short of the separating-axis overlap when its deepest point is
shallower by more than this: clipped points are interpolated, so their depth can differ from the same
depth computed at a vertex by rounding (~1e-16 × coordinates), never by a nanometre."""


@njit(cache=True)
def transform_polytope(polytopes, rows, pose, world_out):
    """World vertices (nv, 3) [m], face normals (nf, 3) and plane offsets (nf,) [m] of a polytope at ``pose``
    = (px, py, pz, qw, qx, qy, qz) (shape → world), written to ``world_out`` = (wv, wn, wd). ``rows`` = (first
    vertex row v0, vertex count nv, first face row f0, face count nf) in the packed tables ``polytopes``
    (``fields.Polytopes``)."""
    vertices, face_normal, face_offset = polytopes.vertices, polytopes.face_normal, polytopes.face_offset
    v0, nv, f0, nf = rows
    px, py, pz, qw, qx, qy, qz = pose
    wv_out, wn_out, wd_out = world_out
    for k in range(nv):
        x, y, z = qrot_t(qw, qx, qy, qz, vertices[v0 + k, 0], vertices[v0 + k, 1], vertices[v0 + k, 2])
        wv_out[k, 0] = x + px
        wv_out[k, 1] = y + py
        wv_out[k, 2] = z + pz
    for k in range(nf):
        x, y, z = qrot_t(qw, qx, qy, qz, face_normal[f0 + k, 0], face_normal[f0 + k, 1], face_normal[f0 + k, 2])
        wn_out[k, 0] = x
        wn_out[k, 1] = y
        wn_out[k, 2] = z
        wd_out[k] = face_offset[f0 + k] + x * px + y * py + z * pz


@njit(cache=True, forceinline=True, refcount=False)
def _face_separation(wn, wd, f, wv_other, nv_other):
    """min over the other polytope's vertices of n_f · v − d_f: how far it lies outside face f."""
    best = np.inf
    for k in range(nv_other):
        s = wn[f, 0] * wv_other[k, 0] + wn[f, 1] * wv_other[k, 1] + wn[f, 2] * wv_other[k, 2]
        if s < best:
            best = s
    return best - wd[f]


@njit(cache=True, forceinline=True, refcount=False)
def face_query(wn, wd, nf, wv_other, nv_other):
    """(greatest separation, its face) over the faces of one polytope."""
    best, best_f = -np.inf, -1
    for f in range(nf):
        s = _face_separation(wn, wd, f, wv_other, nv_other)
        if s > best:
            best, best_f = s, f
    return best, best_f


@njit(cache=True)
def _edge_axis(wvA, eA0, eA1, cA, wvB, eB0, eB1):
    """Unit axis along (edge A) × (edge B), pointing out of A; separation of B along it. Returns
    (ok, ax, ay, az, s); ok is False for (near-)parallel edges, which give no axis."""
    dax, day, daz = wvA[eA1, 0] - wvA[eA0, 0], wvA[eA1, 1] - wvA[eA0, 1], wvA[eA1, 2] - wvA[eA0, 2]
    dbx, dby, dbz = wvB[eB1, 0] - wvB[eB0, 0], wvB[eB1, 1] - wvB[eB0, 1], wvB[eB1, 2] - wvB[eB0, 2]
    ax, ay, az = day * dbz - daz * dby, daz * dbx - dax * dbz, dax * dby - day * dbx
    n2 = ax * ax + ay * ay + az * az
    la = dax * dax + day * day + daz * daz
    lb = dbx * dbx + dby * dby + dbz * dbz
    if n2 <= 1e-12 * la * lb:  # sin² of the angle between the edges below 1e-12: parallel
        return False, 0.0, 0.0, 0.0, 0.0
    inv = 1.0 / np.sqrt(n2)
    ax, ay, az = ax * inv, ay * inv, az * inv
    if ax * (wvA[eA0, 0] - cA[0]) + ay * (wvA[eA0, 1] - cA[1]) + az * (wvA[eA0, 2] - cA[2]) < 0.0:
        ax, ay, az = -ax, -ay, -az
    s = ax * (wvB[eB0, 0] - wvA[eA0, 0]) + ay * (wvB[eB0, 1] - wvA[eA0, 1]) + az * (wvB[eB0, 2] - wvA[eA0, 2])
    return True, ax, ay, az, s


@njit(cache=True, forceinline=True, refcount=False)
def _is_minkowski_face(a, b, bxa, c, d):
    """Do the Gauss-map arcs (a, b) of edge A and (c, d) = (−normals of edge B) cross? (Gregorius 2013)
    b × a is passed in, computed once per edge of A; the test on it rejects most pairs before d × c.
    All five are 3-tuples (unit normals, world)."""
    ax, ay, az = a
    bx, by, bz = b
    bxa_x, bxa_y, bxa_z = bxa
    cx, cy, cz = c
    dx, dy, dz = d
    cba = cx * bxa_x + cy * bxa_y + cz * bxa_z
    dba = dx * bxa_x + dy * bxa_y + dz * bxa_z
    if cba * dba >= 0.0:
        return False
    dxc_x, dxc_y, dxc_z = dy * cz - dz * cy, dz * cx - dx * cz, dx * cy - dy * cx
    adc = ax * dxc_x + ay * dxc_y + az * dxc_z
    bdc = bx * dxc_x + by * dxc_y + bz * dxc_z
    return adc * bdc < 0.0 and cba * bdc > 0.0


@njit(cache=True)
def edge_query(edges, edge_faces, eA0, neA, wvA, wnA, cA, eB0, neB, wvB, wnB):
    """(greatest separation, edge of A, edge of B) over Minkowski-face edge pairs; edges are local
    vertex pairs into wv*, edge_faces local face pairs into wn*."""
    best, best_i, best_j = -np.inf, -1, -1
    for i in range(neA):
        fa0, fa1 = edge_faces[eA0 + i, 0], edge_faces[eA0 + i, 1]
        ax, ay, az = wnA[fa0, 0], wnA[fa0, 1], wnA[fa0, 2]
        bx, by, bz = wnA[fa1, 0], wnA[fa1, 1], wnA[fa1, 2]
        bxa_x, bxa_y, bxa_z = by * az - bz * ay, bz * ax - bx * az, bx * ay - by * ax
        for j in range(neB):
            fb0, fb1 = edge_faces[eB0 + j, 0], edge_faces[eB0 + j, 1]
            if not _is_minkowski_face((ax, ay, az), (bx, by, bz), (bxa_x, bxa_y, bxa_z),
                                      (-wnB[fb0, 0], -wnB[fb0, 1], -wnB[fb0, 2]),
                                      (-wnB[fb1, 0], -wnB[fb1, 1], -wnB[fb1, 2])):
                continue
            ok, _, _, _, s = _edge_axis(wvA, edges[eA0 + i, 0], edges[eA0 + i, 1], cA,
                                        wvB, edges[eB0 + j, 0], edges[eB0 + j, 1])
            if ok and s > best:
                best, best_i, best_j = s, i, j
    return best, best_i, best_j


@njit(cache=True)
def witness_separation(witness, edges, edge_rows, world_a, world_b):
    """Separation along a cached witness axis ``witness`` = (kind, i, j) at the current poses: positive only if
    that axis still separates the two polytopes (−inf if there is no usable witness). ``edge_rows`` = (first
    edge row of A, of B) in ``edges``; world_* = (world vertices, vertex count, face normals, plane offsets)."""
    kind, i, j = witness
    eA0, eB0 = edge_rows
    wvA, nvA, wnA, wdA = world_a
    wvB, nvB, wnB, wdB = world_b
    if kind == WITNESS_FACE_A:
        return _face_separation(wnA, wdA, i, wvB, nvB)
    if kind == WITNESS_FACE_B:
        return _face_separation(wnB, wdB, j, wvA, nvA)
    if kind == WITNESS_EDGES:
        ok, ax, ay, az, _ = _edge_axis(wvA, edges[eA0 + i, 0], edges[eA0 + i, 1], centroid(wvA, nvA),
                                       wvB, edges[eB0 + j, 0], edges[eB0 + j, 1])
        if ok:
            # The edges may no longer be the supporting features: use the supports of the whole polytopes.
            hi_a = -np.inf
            for k in range(nvA):
                hi_a = max(hi_a, ax * wvA[k, 0] + ay * wvA[k, 1] + az * wvA[k, 2])
            lo_b = np.inf
            for k in range(nvB):
                lo_b = min(lo_b, ax * wvB[k, 0] + ay * wvB[k, 1] + az * wvB[k, 2])
            return lo_b - hi_a
    return -np.inf


@njit(cache=True)
def reduce_manifold(points, depth, n, nx, ny, nz, keep_out):
    """Indices (written to keep_out, returns their count ≤ 4) of the contact points to keep: the deepest,
    the farthest from it, the one spanning the largest triangle with those two, and the one farthest
    outside that triangle — the quadrilateral of (nearly) largest area."""
    if n <= MAX_CONTACTS:
        for k in range(n):
            keep_out[k] = k
        return n
    a = 0
    for k in range(1, n):
        if depth[k] > depth[a]:
            a = k
    b, best = -1, -1.0
    for k in range(n):
        d = (points[k, 0] - points[a, 0]) ** 2 + (points[k, 1] - points[a, 1]) ** 2 + (points[k, 2] - points[a, 2]) ** 2
        if k != a and d > best:
            b, best = k, d
    c, best = -1, -1.0
    for k in range(n):
        if k == a or k == b:
            continue
        area = abs(_signed_area(points, a, b, k, nx, ny, nz))
        if area > best:
            c, best = k, area
    # orient (a, b, c) counter-clockwise about n, then take the point most outside one of its edges
    if _signed_area(points, a, b, c, nx, ny, nz) < 0.0:
        b, c = c, b
    d, best = -1, 0.0
    for k in range(n):
        if k == a or k == b or k == c:
            continue
        outside = min(_signed_area(points, a, b, k, nx, ny, nz), _signed_area(points, b, c, k, nx, ny, nz),
                      _signed_area(points, c, a, k, nx, ny, nz))
        if outside < best:
            d, best = k, outside
    keep_out[0], keep_out[1], keep_out[2] = a, b, c
    if d < 0:
        return 3
    keep_out[3] = d
    return 4


@njit(cache=True, forceinline=True, refcount=False)
def _signed_area(p, i, j, k, nx, ny, nz):
    """n · ((p_j − p_i) × (p_k − p_i)): twice the signed area of triangle (i, j, k) about n."""
    ux, uy, uz = p[j, 0] - p[i, 0], p[j, 1] - p[i, 1], p[j, 2] - p[i, 2]
    vx, vy, vz = p[k, 0] - p[i, 0], p[k, 1] - p[i, 1], p[k, 2] - p[i, 2]
    return nx * (uy * vz - uz * vy) + ny * (uz * vx - ux * vz) + nz * (ux * vy - uy * vx)


@njit(cache=True)
def clip_by_plane(pts, line, m, sx, sy, sz, sd, side, tmp_pts, tmp_line):
    """One Sutherland–Hodgman pass: keep the part of convex polygon pts[:m] (vertex k's edge out lies on
    line[k]) with s · p ≤ sd, where side plane s is clip line ``LINE_SIDE | side``. Writes the result back to
    pts/line and returns its size. Leaving the half-space, the new vertex's edge out runs along the side
    plane; entering it, along the cut edge's own line."""
    # A vertex within CLIP_ROUNDING of the plane counts as on it (kept, and no crossing is made beside it):
    # otherwise rounding can keep it and add a crossing at the same spot, a contact counted twice.
    tol = CLIP_ROUNDING * np.sqrt(sx * sx + sy * sy + sz * sz)
    out = 0
    for k in range(m):
        kn = (k + 1) % m
        dp = sx * pts[k, 0] + sy * pts[k, 1] + sz * pts[k, 2] - sd
        dq = sx * pts[kn, 0] + sy * pts[kn, 1] + sz * pts[kn, 2] - sd
        if dp <= tol:
            tmp_pts[out, 0], tmp_pts[out, 1], tmp_pts[out, 2] = pts[k, 0], pts[k, 1], pts[k, 2]
            tmp_line[out] = line[k]
            out += 1
        if (dp < -tol and dq > tol) or (dp > tol and dq < -tol):
            t = dp / (dp - dq)
            for c in range(3):
                tmp_pts[out, c] = pts[k, c] + t * (pts[kn, c] - pts[k, c])
            tmp_line[out] = (features.LINE_SIDE | side) if dp < 0.0 else line[k]
            out += 1
    for k in range(out):
        pts[k, 0], pts[k, 1], pts[k, 2] = tmp_pts[k, 0], tmp_pts[k, 1], tmp_pts[k, 2]
        line[k] = tmp_line[k]
    return out


@njit(cache=True)
def name_clipped(line, kind, m, ref_on_b, ref_face, inc_face, tmp_line):
    """Turn the edge-out lines of a clipped polygon's m vertices into feature ids (in place) and kinds.

    A vertex is named by the lines of its edge in and edge out (``features.face_clip``): its whole history,
    however many planes cut it. Between two incident edges it is an incident vertex, between two side planes
    a reference corner (both vertex–face contacts, Baraff II 8); between an incident edge and a side plane it
    is an edge–edge contact."""
    for k in range(m):
        line_in, line_out = line[(k - 1) % m], line[k]
        mixed = (line_in & features.LINE_SIDE) != (line_out & features.LINE_SIDE)
        kind[k] = KIND_EDGE_EDGE if mixed else KIND_VERTEX_FACE
        tmp_line[k] = features.face_clip(ref_on_b, ref_face, inc_face, line_in, line_out)
    for k in range(m):
        line[k] = tmp_line[k]


@njit(cache=True)
def _clip_incident(wvR, face_verts, ref, normal, wvI, inc, names, clip):
    """Clip the incident face (``inc`` = (i0, ni): ni vertices, local ids face_verts[i0:i0+ni] into wvI) against
    the side planes of the reference face (``ref`` = (r0, nr): face_verts[r0:r0+nr] into wvR, outward unit
    ``normal`` n). ``names`` = (ref_on_b, ref_face, inc_face) name the features; ``clip`` = (pts, feat, kind,
    tmp_pts, tmp_line): writes the polygon to pts with its feature ids in feat and kinds in kind; returns its
    size."""
    r0, nr = ref
    nx, ny, nz = normal
    i0, ni = inc
    ref_on_b, ref_face, inc_face = names
    pts, feat, kind, tmp_pts, tmp_line = clip
    for k in range(ni):
        v = face_verts[i0 + k]
        pts[k, 0], pts[k, 1], pts[k, 2] = wvI[v, 0], wvI[v, 1], wvI[v, 2]
        feat[k] = k  # the line of the edge out of vertex k: incident edge k
    m = ni
    for s in range(nr):
        a = face_verts[r0 + s]
        b = face_verts[r0 + (s + 1) % nr]
        ex, ey, ez = wvR[b, 0] - wvR[a, 0], wvR[b, 1] - wvR[a, 1], wvR[b, 2] - wvR[a, 2]
        # side plane normal (edge × n) points out of the reference polygon (it is CCW about n)
        sx, sy, sz = ey * nz - ez * ny, ez * nx - ex * nz, ex * ny - ey * nx
        m = clip_by_plane(pts, feat, m, sx, sy, sz, sx * wvR[a, 0] + sy * wvR[a, 1] + sz * wvR[a, 2], s,
                          tmp_pts, tmp_line)
        if m == 0:
            break
    name_clipped(feat, kind, m, ref_on_b, ref_face, inc_face, tmp_line)
    return m


@njit(cache=True)
def segment_params(p1x, p1y, p1z, d1x, d1y, d1z, p2x, p2y, p2z, d2x, d2y, d2z):
    """Parameters (s, t) in [0, 1] of the closest points p1 + s d1 and p2 + t d2 of two segments
    (Ericson, Real-Time Collision Detection 5.1.9); scalars in, no allocation."""
    rx, ry, rz = p1x - p2x, p1y - p2y, p1z - p2z
    a = d1x * d1x + d1y * d1y + d1z * d1z
    e = d2x * d2x + d2y * d2y + d2z * d2z
    f = d2x * rx + d2y * ry + d2z * rz
    c = d1x * rx + d1y * ry + d1z * rz
    b = d1x * d2x + d1y * d2y + d1z * d2z
    denom = a * e - b * b
    s = min(max((b * f - c * e) / denom, 0.0), 1.0) if denom > 1e-14 * a * e else 0.0
    t = (b * s + f) / e
    if t < 0.0:
        t = 0.0
        s = min(max(-c / a, 0.0), 1.0)
    elif t > 1.0:
        t = 1.0
        s = min(max((b - c) / a, 0.0), 1.0)
    return s, t


@njit(cache=True, forceinline=True, refcount=False)
def edge_midpoint(p1x, p1y, p1z, d1x, d1y, d1z, p2x, p2y, p2z, d2x, d2y, d2z):
    """The midpoint of the closest points of segments p1 + s d1 and p2 + t d2, as a tuple."""
    s, t = segment_params(p1x, p1y, p1z, d1x, d1y, d1z, p2x, p2y, p2z, d2x, d2y, d2z)
    return 0.5 * (p1x + s * d1x + p2x + t * d2x), 0.5 * (p1y + s * d1y + p2y + t * d2y), \
        0.5 * (p1z + s * d1z + p2z + t * d2z)


@njit(cache=True, forceinline=True, refcount=False)
def _edges_midpoint(wvA, a0, a1, wvB, b0, b1):
    """``edge_midpoint`` of edge a0 → a1 of wvA and edge b0 → b1 of wvB."""
    return edge_midpoint(wvA[a0, 0], wvA[a0, 1], wvA[a0, 2], wvA[a1, 0] - wvA[a0, 0], wvA[a1, 1] - wvA[a0, 1],
                         wvA[a1, 2] - wvA[a0, 2], wvB[b0, 0], wvB[b0, 1], wvB[b0, 2], wvB[b1, 0] - wvB[b0, 0],
                         wvB[b1, 1] - wvB[b0, 1], wvB[b1, 2] - wvB[b0, 2])


@njit(cache=True)
def manifold_top_up(ref, inc, plane, overlap, deepest, crossing, crossing_feature, names, cand, n):
    """Add to the candidates ``cand`` = (pts, feat, kind, dep), [:n] in use (deepest depth ``deepest``), what
    reaches the separating-axis ``overlap`` along n (``plane`` = (nx, ny, nz, dref): the reference plane
    n · x = dref of polytope R; ``ref`` = (wvR, wnR, wdR, nfR) its world vertices, faces and face count;
    ``inc`` = (wvI, nvI) the other polytope's world vertices; ``names`` = (ref_on_b, ref_face)). Returns the
    new count and whether the candidates still fall short.

    First the deepest vertex of I (wvI[:nvI]) that lies inside R: a vertex below the reference plane but beside
    R touches nothing, so its depth would put the contact off both surfaces. If no vertex inside R reaches
    the overlap, the overlap is made by edges crossing: the crossing point of the best edge pair (NaN: none
    given) is added at depth ``overlap``. Points are midway between the incident point and the reference
    plane."""
    wvR, wnR, wdR, nfR = ref
    wvI, nvI = inc
    nx, ny, nz, dref = plane
    ref_on_b, ref_face = names
    pts, feat, kind, dep = cand
    best, v = deepest, -1
    for j in range(nvI):
        h = nx * wvI[j, 0] + ny * wvI[j, 1] + nz * wvI[j, 2] - dref
        if -h <= best:
            continue
        # within R's other face planes, the vertex lies over the reference face: inside R if below its plane,
        # else a gap h above it (a contact of depth −h between the two surfaces either way)
        inside = True
        for f in range(nfR):
            if f != ref_face and (wnR[f, 0] * wvI[j, 0] + wnR[f, 1] * wvI[j, 1] + wnR[f, 2] * wvI[j, 2] - wdR[f]
                                  > DEPTH_ROUNDING):
                inside = False
                break
        if inside:
            best, v = -h, j
    if v >= 0:
        pts[n, 0] = wvI[v, 0] + 0.5 * best * nx
        pts[n, 1] = wvI[v, 1] + 0.5 * best * ny
        pts[n, 2] = wvI[v, 2] + 0.5 * best * nz
        feat[n] = features.deepest_vertex(ref_on_b, ref_face, v)
        kind[n] = KIND_VERTEX_FACE
        dep[n] = best
        n += 1
    if best < overlap - DEPTH_ROUNDING:
        if np.isnan(crossing[0]):
            return n, True
        pts[n, 0], pts[n, 1], pts[n, 2] = crossing[0], crossing[1], crossing[2]
        feat[n] = crossing_feature
        kind[n] = KIND_EDGE_EDGE
        dep[n] = overlap
        n += 1
    return n, False


@njit(cache=True)
def collide_polytopes(rows_a, rows_b, poly, world_a, world_b, margin, witness, k, scratch, out, base):
    """Contacts between polytopes A and B already transformed to world.

    rows_* = (first vertex row, vertex count, first face row, face count, first edge row, edge count) of each
    in the packed tables ``poly`` (``fields.Polytopes``); world_* = (vertices (nv, 3), face normals (nf, 3),
    plane offsets (nf,)) in world. ``witness[k]`` = [kind, i, j] is read and updated in place. ``scratch``
    and ``out`` are the narrowphase's scratch and output tuples; writes up to 4 contacts at row ``base``.
    Returns (number of contacts, True if the cached witness alone decided).
    """
    vA, nvA, fA, nfA, eA, neA = rows_a
    vB, nvB, fB, nfB, eB, neB = rows_b
    edges, edge_faces = poly.edges, poly.edge_faces
    wvA, wnA, wdA = world_a
    wvB, wnB, wdB = world_b
    if witness[k, 0] != WITNESS_NONE:
        if witness_separation((witness[k, 0], witness[k, 1], witness[k, 2]), edges, (eA, eB),
                              (wvA, nvA, wnA, wdA), (wvB, nvB, wnB, wdB)) > margin:
            return 0, True
    sa, fa = face_query(wnA, wdA, nfA, wvB, nvB)
    if sa > margin:
        witness[k, 0], witness[k, 1], witness[k, 2] = WITNESS_FACE_A, fa, -1
        return 0, False
    sb, fb = face_query(wnB, wdB, nfB, wvA, nvA)
    if sb > margin:
        witness[k, 0], witness[k, 1], witness[k, 2] = WITNESS_FACE_B, -1, fb
        return 0, False
    cA = centroid(wvA, nvA)
    se, ia, ib = edge_query(edges, edge_faces, eA, neA, wvA, wnA, cA, eB, neB, wvB, wnB)
    if se > margin:
        witness[k, 0], witness[k, 1], witness[k, 2] = WITNESS_EDGES, ia, ib
        return 0, False
    cB = centroid(wvB, nvB)
    prefer = face_preference(bounding_radius(wvA, nvA, cA[0], cA[1], cA[2]),
                             bounding_radius(wvB, nvB, cB[0], cB[1], cB[2]))
    if se > max(sa, sb) + prefer:
        witness[k, 0], witness[k, 1], witness[k, 2] = WITNESS_EDGES, ia, ib
        return _edge_contact(edges, (eA, ia), (eB, ib), wvA, cA, wvB, out, base), False
    # Face contact. The reference is A's face if it separates at least as much as B's (ties to A). If no
    # point of the face manifold reaches the face axis's overlap, edges cross there: when the best edge pair
    # separates at least as much as the face, its edge contact is the answer (the preference for faces is
    # for the stable manifold they give, which is then not to be had), unless its axis is the face's own
    # (FACE_ALIGNED_COS); otherwise the crossing joins the manifold at the face's depth.
    crossing = (np.nan, np.nan, np.nan)
    for _attempt in range(2):  # the crossing is computed only for the rare second attempt
        if sa >= sb:
            witness[k, 0], witness[k, 1], witness[k, 2] = WITNESS_FACE_A, fa, -1
            n, short = _face_contact(False, fa, (fA, nfA, nvA, wvA, wnA, wdA), (fB, nfB, nvB, wnB, wvB), sa,
                                     crossing, features.edge_edge(ia, ib), poly, margin, scratch, out, base)
        else:
            witness[k, 0], witness[k, 1], witness[k, 2] = WITNESS_FACE_B, -1, fb
            n, short = _face_contact(True, fb, (fB, nfB, nvB, wvB, wnB, wdB), (fA, nfA, nvA, wnA, wvA), sb,
                                     crossing, features.edge_edge(ia, ib), poly, margin, scratch, out, base)
        if not short or ia < 0:
            break
        _, ax, ay, az, _ = _edge_axis(wvA, edges[eA + ia, 0], edges[eA + ia, 1], cA, wvB, edges[eB + ib, 0],
                                      edges[eB + ib, 1])
        ref_normal = wnA[fa] if sa >= sb else wnB[fb]
        edge_is_face = se <= 0.0 and edge_axis_along_face(ax, ay, az, ref_normal[0], ref_normal[1], ref_normal[2])
        if se >= max(sa, sb) and not edge_is_face:
            witness[k, 0], witness[k, 1], witness[k, 2] = WITNESS_EDGES, ia, ib
            return _edge_contact(edges, (eA, ia), (eB, ib), wvA, cA, wvB, out, base), False
        crossing = _edges_midpoint(wvA, edges[eA + ia, 0], edges[eA + ia, 1], wvB, edges[eB + ib, 0],
                                   edges[eB + ib, 1])
    return n, False


@njit(cache=True, forceinline=True, refcount=False)
def _edge_contact(edges, edge_a, edge_b, wvA, cA, wvB, out, base):
    """One edge–edge contact at the midpoint of the closest points of edge ia of A and edge ib of B
    (``edge_a`` = (eA, ia): A's first edge row in ``edges`` and the edge; ``edge_b`` = (eB, ib)), written to
    row ``base`` of ``out``."""
    eA, ia = edge_a
    eB, ib = edge_b
    _, ax, ay, az, s = _edge_axis(wvA, edges[eA + ia, 0], edges[eA + ia, 1], cA,
                                  wvB, edges[eB + ib, 0], edges[eB + ib, 1])
    mid = _edges_midpoint(wvA, edges[eA + ia, 0], edges[eA + ia, 1], wvB, edges[eB + ib, 0], edges[eB + ib, 1])
    # the axis points A → B; the contact normal B → A
    return write_edge_contact(out, base, mid, (-ax, -ay, -az), -s, features.edge_edge(ia, ib))


@njit(cache=True, forceinline=True, refcount=False)
def write_edge_contact(out, base, point, normal, depth, feature):
    """Write one edge–edge contact (point and normal as 3-tuples, world; depth in m) to row ``base`` of
    ``out`` = (point, normal, depth, kind, feature); returns 1."""
    point_out, normal_out, depth_out, kind_out, feature_out = out
    point_out[base, 0], point_out[base, 1], point_out[base, 2] = point
    normal_out[base, 0], normal_out[base, 1], normal_out[base, 2] = normal
    depth_out[base] = depth
    kind_out[base] = KIND_EDGE_EDGE
    feature_out[base] = feature
    return 1


@njit(cache=True)
def _face_contact(ref_on_b, ref_face, ref, inc, s_ref, crossing, crossing_feature, polytopes, margin, scratch, out,
                  base):
    """Contacts of reference face ``ref_face`` of polytope R (``ref`` = (fR, nfR, nvR, wvR, wnR, wdR): nfR faces
    from row fR of the ``polytopes`` tables, nvR vertices; world vertices wvR, normals wnR, offsets wdR) against
    polytope I (``inc`` = (fI, nfI, nvI, wnI, wvI): faces from row fI), whose separation along the face normal
    n is ``s_ref`` (< 0: overlap −s_ref). Writes ≤ 4 contacts; the normal is −n when R is A (n points A → B),
    +n when R is B.

    The incident face (the most anti-parallel to n) is clipped against the reference face's side planes; its
    points within the margin are midway between the incident point and its projection on the reference
    plane. Clipping can fall short of the overlap −s_ref that the separating axis found: the deepest part of
    I may not be on the incident face, or lie outside the reference face's prism. Then (``manifold_top_up``)
    the deepest vertex of I that lies inside R joins the candidates; if that is still short, the overlap is
    made by edges crossing, and the crossing of the best edge pair (``crossing``, a point of both surfaces'
    overlap; NaN if there is none) joins them at depth −s_ref. Manifold reduction keeps the deepest, so the
    manifold is as deep as the separating-axis overlap, at a point where the shapes overlap. Returns (count,
    short): short when the manifold cannot reach the overlap and no crossing was given (the caller then
    reports the edge contact instead, if there is an edge pair).

    For polytopes apart (s_ref > 0) the face axis's separation is the distance only when a vertex faces the
    face or two edges face each other; for a vertex facing an edge it understates it, and the clipped points
    report the gap along n at their place. GJK then gives the exact distance and closest points (scratch[9]
    is its workspace): the pair has no contact if they are beyond the margin, else their midpoint, with its
    own normal, replaces the clipped candidate within MERGE_DISTANCE of it (keeping that candidate's id) or
    joins the manifold."""
    fR, nfR, nvR, wvR, wnR, wdR = ref
    fI, nfI, nvI, wnI, wvI = inc
    face_vstart, face_vcount, face_verts = polytopes.face_vstart, polytopes.face_vcount, polytopes.face_verts
    clip_pts, clip_feat, clip_kind, dep, keep = scratch[3], scratch[4], scratch[5], scratch[6], scratch[7]
    pts, feat, kind = clip_pts[0], clip_feat[0], clip_kind[0]
    tmp_pts, tmp_feat, tmp_kind = clip_pts[1], clip_feat[1], clip_kind[1]
    point_out, normal_out, depth_out, kind_out, feature_out = out
    nx, ny, nz = wnR[ref_face, 0], wnR[ref_face, 1], wnR[ref_face, 2]
    dref = wdR[ref_face]
    sign = -1.0 if ref_on_b else 1.0
    inc_face, best = 0, np.inf
    for g in range(nfI):  # incident face: the most anti-parallel to the reference normal
        d = wnI[g, 0] * nx + wnI[g, 1] * ny + wnI[g, 2] * nz
        if d < best:
            inc_face, best = g, d
    ref_row = fR + ref_face
    m = _clip_incident(wvR, face_verts, (face_vstart[ref_row], face_vcount[ref_row]), (nx, ny, nz),
                       wvI, (face_vstart[fI + inc_face], face_vcount[fI + inc_face]), (ref_on_b, ref_face, inc_face),
                       (pts, feat, kind, tmp_pts, tmp_feat))
    n, short = 0, False
    deepest = -np.inf
    for k in range(m):
        dist = nx * pts[k, 0] + ny * pts[k, 1] + nz * pts[k, 2] - dref
        if dist > margin:
            continue
        # midpoint between the incident point and its projection on the reference plane
        tmp_pts[n, 0] = pts[k, 0] - 0.5 * dist * nx
        tmp_pts[n, 1] = pts[k, 1] - 0.5 * dist * ny
        tmp_pts[n, 2] = pts[k, 2] - 0.5 * dist * nz
        tmp_feat[n] = feat[k]
        tmp_kind[n] = kind[k]
        dep[n] = -dist
        deepest = max(deepest, -dist)
        n += 1
    closest, cnx, cny, cnz = -1, 0.0, 0.0, 0.0
    if deepest < -s_ref - DEPTH_ROUNDING:
        if s_ref <= 0.0:
            n, short = manifold_top_up((wvR, wnR, wdR, nfR), (wvI, nvI), (nx, ny, nz, dref), -s_ref, deepest,
                                       crossing, crossing_feature, (ref_on_b, ref_face), (tmp_pts, tmp_feat, tmp_kind,
                                                                                          dep), n)
        else:
            # Apart: the face axis's separation is the distance only when a vertex faces the face or two edges
            # face each other; otherwise (a vertex facing an edge) it understates it. The exact distance and
            # closest points come from GJK, and join the manifold with their own normal.
            # (Touching within GJK_TOL although a face axis separates them: the clipped manifold stands.)
            apart, dist, cnx, cny, cnz, ax, ay, az, bx, by, bz = gjk.distance_ws(
                (gjk.SHAPE_POLYTOPE, (0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0), (0.0, 0.0, 0.0), wvR, nvR),
                (gjk.SHAPE_POLYTOPE, (0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0), (0.0, 0.0, 0.0), wvI, nvI), GJK_TOL,
                scratch[9])
            if apart and dist > margin:
                return 0, False
            if apart:
                px, py, pz = 0.5 * (ax + bx), 0.5 * (ay + by), 0.5 * (az + bz)
                closest, near = n, MERGE_DISTANCE ** 2
                for j in range(n):  # the clipped candidate at the same place, if any, becomes the exact one
                    d2 = (tmp_pts[j, 0] - px) ** 2 + (tmp_pts[j, 1] - py) ** 2 + (tmp_pts[j, 2] - pz) ** 2
                    if d2 < near:
                        closest, near = j, d2
                if closest == n:
                    tmp_feat[n] = features.POINT_ID
                    tmp_kind[n] = KIND_VERTEX_FACE
                    n += 1
                tmp_pts[closest, 0], tmp_pts[closest, 1], tmp_pts[closest, 2] = px, py, pz
                dep[closest] = -dist
    count = reduce_manifold(tmp_pts, dep, n, nx, ny, nz, keep)
    for k in range(count):
        j = keep[k]
        point_out[base + k, 0], point_out[base + k, 1], point_out[base + k, 2] = (
            tmp_pts[j, 0], tmp_pts[j, 1], tmp_pts[j, 2])
        normal_out[base + k, 0], normal_out[base + k, 1], normal_out[base + k, 2] = -sign * nx, -sign * ny, -sign * nz
        depth_out[base + k] = dep[j]
        kind_out[base + k] = tmp_kind[j]
        feature_out[base + k] = tmp_feat[j]
        if j == closest:  # GJK's normal points from I toward R, i.e. B → A when R is A
            normal_out[base + k, 0], normal_out[base + k, 1], normal_out[base + k, 2] = sign * cnx, sign * cny, \
                sign * cnz
    return count, short
