"""Ray casts against every shape of a world: exact closed forms per shape type (docs/queries.md).

A ray is o + t d, t >= 0, with d a unit vector (``World.ray_cast`` normalizes it) and t [m] the distance
along it. Each shape row g is tested in its own frame: with its world pose (c_g, R_g) (``collision/aabb.py``)
the ray becomes o' = R_gᵀ (o − c_g), d' = R_gᵀ d, which keeps t (a rotation keeps lengths). The shape is a
solid, and its test gives the interval [t_in, t_out] of the LINE inside it and the outward normal where the
line enters (Ericson, "Real-Time Collision Detection", 2005, §5.3):

    sphere (r)              |o' + t d'|² = r²; the roots by the perpendicular foot f = o' − (o'·d') d':
                            Δ = r² − |f|² (Haines et al., "Precision Improvements for Ray/Sphere
                            Intersection", Ray Tracing Gems ch. 7, 2019) and q = −(b + sign(b) √Δ), roots q and
                            c / q (b = o'·d', c = |o'|² − r²: no cancellation); normal p / |p|
    ellipsoid (a, b, c)     the unit sphere in scaled coordinates o'/s, d'/s (Ericson §5.3.2 applied after the
                            scaling); the same roots with the leading coefficient |d'/s|² ≠ 1;
                            normal ∝ (x/a², y/b², z/c²)
    box (half extents h)    Kay–Kajiya slabs (T. L. Kay, J. T. Kajiya, "Ray tracing complex scenes",
                            SIGGRAPH 1986; Ericson §5.3.3): t_in = max_k min(t_k⁻, t_k⁺), t_out = min_k max(…),
                            t_k± = (±h_k − o'_k) / d'_k; the normal is ∓e_k of the slab that set t_in
    cylinder (r, h)         the infinite cylinder x² + y² = r² (the 2-D circle's roots, as the sphere's) ∩ the
                            slab |z| <= h (Ericson §5.3.7): the side's normal (x, y, 0)/r or a cap's ±e_z
    capsule (r, l)          the union of the side (infinite cylinder ∩ |z| <= l) and the spheres at (0, 0, ±l):
                            convex, so the line meets it in one interval, the union of the pieces' intervals;
                            t_in is the least piece entry (Ericson §5.3.7)
    convex hull             Cyrus–Beck clipping by the face planes n_f · p <= e_f (M. Cyrus, J. Beck,
                            "Generalized two- and three-dimensional clipping", Computers & Graphics 3, 1978;
                            Ericson §5.3.8): t = (e_f − n_f·o') / (n_f·d'), entering where n_f·d' < 0
    plane (ground)          the solid half-space z' <= 0: t = −o'_z / d'_z, normal +e_z

A compound is its parts (one row each). The ray hits row g at t_in when 0 <= t_in <= t_out. A ray that
STARTS INSIDE a solid (t_in < 0 <= t_out; on the surface counts as inside when the ray points in) hits it at
t = 0, at its own origin, with the normal −d: the convention of PhysX's initial overlaps, so a ray cast from
within a body reports that body at once (cast from outside, or ``ignore`` the body, to find what lies
beyond). Rays take the nearest hit over all rows with t <= max_distance; ties go to the lower row.

Acceleration: a bounding-volume hierarchy over the rows' world AABBs (``aabb.geom_aabbs_serial``), built per
call (``build_bvh``: median split of the box centres on the longest axis, at most ``LEAF_SIZE`` rows a leaf,
flat arrays, O(g log² g) for g rows; Ericson §6.2 and §6.3.2). A ray walks it nearer child first and skips
every node whose box it does not cross on t ∈ [0, min(best t, max_distance)] (the same slabs); at a leaf each
row's own box is tested as before and then the exact test above. Planes (unbounded boxes) are outside the tree
and always take their exact test. Ties at the same t go to the lower row whatever the order of the walk, so
the hits are bitwise those of the brute-force loop over every row (``ray_cast_brute_parallel``, kept for
the tests).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
from numba import prange

from ..collision.aabb import geom_aabbs_serial
from ..conventions import GeomType
from ..jit import njit
from ..math3d import qmul_t, qrot_inv_t, qrot_t

if TYPE_CHECKING:
    from ..model.model import Model
    from ..model.state import State

_SPHERE, _BOX, _CAPSULE, _CYLINDER, _ELLIPSOID, _HULL, _PLANE = 0, 1, 2, 3, 4, 5, 6
if (_SPHERE, _BOX, _CAPSULE, _CYLINDER, _ELLIPSOID, _HULL, _PLANE) != (
        GeomType.SPHERE, GeomType.BOX, GeomType.CAPSULE, GeomType.CYLINDER, GeomType.ELLIPSOID,
        GeomType.CONVEX_HULL, GeomType.PLANE):  # pragma: no cover - guards an edit of conventions.py
    raise ImportError("tumble.queries.ray: the type codes here no longer match conventions.GeomType")

PARALLEL_MIN_RAYS = 64
"""Fewer rays than this run in ``ray_cast_serial``: below it, starting Numba's thread pool costs more than
the rays (a ray against a 100-body scene takes ~1 µs)."""

LEAF_SIZE = 4
"""Most shape rows in one leaf of the ray casts' BVH (``build_bvh``)."""

STACK = 64
"""Depth of a ray's traversal stack: a median-split tree over g rows is ceil(log2(g / LEAF_SIZE)) + 1 deep,
and the walk holds at most one pending node per level (a thousand levels' worth of rows is far beyond any
model)."""

_EMPTY = (np.inf, -np.inf, 0.0, 0.0, 0.0)


@njit(cache=True, forceinline=True, refcount=False)
def _quadratic(a, b, c, fx, fy, fz, radius2):
    """Roots t0 <= t1 of a t² + 2 b t + c = 0 (a > 0), whose discriminant is Δ = a (radius2 − |f|²) for f the
    foot of the perpendicular from the centre (scaled); (inf, −inf) when there is none. Stable form: q =
    −(b + sign(b) √Δ), roots q / a and c / q (Ericson §5.3.2; Ray Tracing Gems ch. 7)."""
    disc = a * (radius2 - (fx * fx + fy * fy + fz * fz))
    if disc < 0.0:
        return np.inf, -np.inf
    s = np.sqrt(disc)
    q = -(b + s) if b >= 0.0 else -(b - s)
    if q == 0.0:  # b = 0 and Δ = 0: the line grazes at t = 0
        return 0.0, 0.0
    t0 = q / a
    t1 = c / q
    return min(t0, t1), max(t0, t1)


@njit(cache=True, forceinline=True, refcount=False)
def _ball(ox, oy, oz, dx, dy, dz, r):
    """Line interval in the ball |p| <= r (d unit) and the entry normal."""
    b = ox * dx + oy * dy + oz * dz
    t0, t1 = _quadratic(1.0, b, ox * ox + oy * oy + oz * oz - r * r, ox - b * dx, oy - b * dy, oz - b * dz, r * r)
    if t0 > t1:
        return _EMPTY
    px, py, pz = ox + t0 * dx, oy + t0 * dy, oz + t0 * dz
    norm = np.sqrt(px * px + py * py + pz * pz)
    if norm == 0.0:
        return t0, t1, -dx, -dy, -dz
    return t0, t1, px / norm, py / norm, pz / norm


@njit(cache=True, forceinline=True, refcount=False)
def _ellipsoid(ox, oy, oz, dx, dy, dz, sa, sb, sc):
    """Line interval in the ellipsoid (x/sa)² + (y/sb)² + (z/sc)² <= 1 and the entry normal ∝ ∇."""
    Ox, Oy, Oz = ox / sa, oy / sb, oz / sc
    Dx, Dy, Dz = dx / sa, dy / sb, dz / sc
    a = Dx * Dx + Dy * Dy + Dz * Dz
    b = Ox * Dx + Oy * Dy + Oz * Dz
    k = b / a
    t0, t1 = _quadratic(a, b, Ox * Ox + Oy * Oy + Oz * Oz - 1.0, Ox - k * Dx, Oy - k * Dy, Oz - k * Dz, 1.0)
    if t0 > t1:
        return _EMPTY
    px, py, pz = ox + t0 * dx, oy + t0 * dy, oz + t0 * dz
    nx, ny, nz = px / (sa * sa), py / (sb * sb), pz / (sc * sc)
    norm = np.sqrt(nx * nx + ny * ny + nz * nz)
    if norm == 0.0:
        return t0, t1, -dx, -dy, -dz
    return t0, t1, nx / norm, ny / norm, nz / norm


@njit(cache=True, forceinline=True, refcount=False)
def _slab(o, d, h):
    """Interval of o + t d in the slab |p| <= h along one axis: (t_near, t_far, sign of the entry normal);
    (−inf, inf) when d = 0 and o is inside, (inf, −inf) when it is outside."""
    if d == 0.0:
        if abs(o) > h:
            return np.inf, -np.inf, 0.0
        return -np.inf, np.inf, 0.0
    ta = (-h - o) / d
    tb = (h - o) / d
    if d > 0.0:
        return ta, tb, -1.0
    return tb, ta, 1.0


@njit(cache=True, forceinline=True, refcount=False)
def _box(ox, oy, oz, dx, dy, dz, hx, hy, hz):
    """Kay–Kajiya slabs: line interval in the box |p_k| <= h_k and the entry normal ∓e_k."""
    t_in, t_out = -np.inf, np.inf
    nx = ny = nz = 0.0
    n0, f0, s0 = _slab(ox, dx, hx)
    n1, f1, s1 = _slab(oy, dy, hy)
    n2, f2, s2 = _slab(oz, dz, hz)
    if n0 > t_in:
        t_in, nx, ny, nz = n0, s0, 0.0, 0.0
    if n1 > t_in:
        t_in, nx, ny, nz = n1, 0.0, s1, 0.0
    if n2 > t_in:
        t_in, nx, ny, nz = n2, 0.0, 0.0, s2
    t_out = min(f0, min(f1, f2))
    if t_in > t_out:
        return _EMPTY
    return t_in, t_out, nx, ny, nz


@njit(cache=True, forceinline=True, refcount=False)
def _tube(ox, oy, dx, dy, r):
    """Line interval in the infinite cylinder x² + y² <= r² (the circle's roots; a = dx² + dy²)."""
    a = dx * dx + dy * dy
    c = ox * ox + oy * oy - r * r
    if a == 0.0:
        if c > 0.0:
            return np.inf, -np.inf
        return -np.inf, np.inf
    b = ox * dx + oy * dy
    k = b / a
    return _quadratic(a, b, c, ox - k * dx, oy - k * dy, 0.0, r * r)


@njit(cache=True, forceinline=True, refcount=False)
def _radial(ox, oy, dx, dy, dz, t):
    """Outward normal (x, y, 0)/|(x, y)| of the cylinder side at o + t d (−d on the axis)."""
    px, py = ox + t * dx, oy + t * dy
    norm = np.sqrt(px * px + py * py)
    if norm == 0.0:
        return -dx, -dy, -dz
    return px / norm, py / norm, 0.0


@njit(cache=True, forceinline=True, refcount=False)
def _cylinder(ox, oy, oz, dx, dy, dz, r, h):
    """Line interval in the solid cylinder x² + y² <= r², |z| <= h and the entry normal (side or cap)."""
    r0, r1 = _tube(ox, oy, dx, dy, r)
    z0, z1, sz = _slab(oz, dz, h)
    t_in, t_out = max(r0, z0), min(r1, z1)
    if t_in > t_out:
        return _EMPTY
    if z0 >= r0:
        return t_in, t_out, 0.0, 0.0, sz
    nx, ny, nz = _radial(ox, oy, dx, dy, dz, t_in)
    return t_in, t_out, nx, ny, nz


@njit(cache=True, forceinline=True, refcount=False)
def _capsule(ox, oy, oz, dx, dy, dz, r, half):
    """Line interval in the capsule (segment (0, 0, ±half) swept by r): the union of the side piece and the two
    balls, each a convex piece of a convex whole, so the entry is the least piece entry (balls win ties)."""
    t_in, t_out, nx, ny, nz = _ball(ox, oy, oz - half, dx, dy, dz, r)
    b0, b1, bx, by, bz = _ball(ox, oy, oz + half, dx, dy, dz, r)
    if b0 <= b1:
        if b0 < t_in:
            t_in, nx, ny, nz = b0, bx, by, bz
        t_out = max(t_out, b1)
    r0, r1 = _tube(ox, oy, dx, dy, r)
    z0, z1, _ = _slab(oz, dz, half)
    s0, s1 = max(r0, z0), min(r1, z1)
    if s0 <= s1:
        if s0 < t_in:
            t_in = s0
            nx, ny, nz = _radial(ox, oy, dx, dy, dz, s0)
        t_out = max(t_out, s1)
    if t_in > t_out:
        return _EMPTY
    return t_in, t_out, nx, ny, nz


@njit(cache=True, forceinline=True, refcount=False)
def _hull(ox, oy, oz, dx, dy, dz, poly, f0, nf):
    """Cyrus–Beck: line interval in the intersection of the face half-spaces n_f · p <= e_f (faces f0 … f0+nf
    of the packed tables ``poly``, shape frame) and the normal of the face that set the entry."""
    normal, offset = poly.face_normal, poly.face_offset
    t_in, t_out = -np.inf, np.inf
    nx = ny = nz = 0.0
    for f in range(f0, f0 + nf):
        mx, my, mz = normal[f, 0], normal[f, 1], normal[f, 2]
        num = offset[f] - (mx * ox + my * oy + mz * oz)
        den = mx * dx + my * dy + mz * dz
        if den == 0.0:
            if num < 0.0:
                return _EMPTY
        elif den < 0.0:
            t = num / den
            if t > t_in:
                t_in, nx, ny, nz = t, mx, my, mz
        else:
            t_out = min(t_out, num / den)
        if t_in > t_out:
            return _EMPTY
    return t_in, t_out, nx, ny, nz


@njit(cache=True, forceinline=True, refcount=False)
def _half_space(oz, dz):
    """Line interval in z <= 0 and the entry normal +e_z."""
    if dz == 0.0:
        if oz > 0.0:
            return _EMPTY
        return -np.inf, np.inf, 0.0, 0.0, 1.0
    t = -oz / dz
    if dz < 0.0:
        return t, np.inf, 0.0, 0.0, 1.0
    return -np.inf, t, 0.0, 0.0, 1.0


@njit(cache=True, forceinline=True, refcount=False)
def geom_interval(g, geom, poly, body_x, body_q, ox, oy, oz, dx, dy, dz):
    """The line o + t d (world, d unit) against shape row g of ``geom`` (``Geometry``) posed by its body's
    body_x (n, 3) [m] and body_q (n, 4): (t_in, t_out, nx, ny, nz) with t [m] along d and the entry's unit
    outward normal in the WORLD frame; t_in > t_out when the line misses (module docstring)."""
    b = geom.geom_body[g]
    bw, bx, by, bz = body_q[b, 0], body_q[b, 1], body_q[b, 2], body_q[b, 3]
    cx, cy, cz = qrot_t(bw, bx, by, bz, geom.geom_pos[g, 0], geom.geom_pos[g, 1], geom.geom_pos[g, 2])
    cx += body_x[b, 0]
    cy += body_x[b, 1]
    cz += body_x[b, 2]
    qw, qx, qy, qz = qmul_t(bw, bx, by, bz, geom.geom_quat[g, 0], geom.geom_quat[g, 1], geom.geom_quat[g, 2],
                            geom.geom_quat[g, 3])
    lx, ly, lz = qrot_inv_t(qw, qx, qy, qz, ox - cx, oy - cy, oz - cz)
    ux, uy, uz = qrot_inv_t(qw, qx, qy, qz, dx, dy, dz)
    t = geom.geom_type[g]
    s0, s1, s2 = geom.geom_size[g, 0], geom.geom_size[g, 1], geom.geom_size[g, 2]
    if t == _SPHERE:
        r = _ball(lx, ly, lz, ux, uy, uz, s0)
    elif t == _BOX:
        r = _box(lx, ly, lz, ux, uy, uz, s0, s1, s2)
    elif t == _CAPSULE:
        r = _capsule(lx, ly, lz, ux, uy, uz, s0, s1)
    elif t == _CYLINDER:
        r = _cylinder(lx, ly, lz, ux, uy, uz, s0, s1)
    elif t == _ELLIPSOID:
        r = _ellipsoid(lx, ly, lz, ux, uy, uz, s0, s1, s2)
    elif t == _HULL:
        r = _hull(lx, ly, lz, ux, uy, uz, poly, geom.geom_face_start[g], geom.geom_face_count[g])
    elif t == _PLANE:
        r = _half_space(lz, uz)
    else:
        r = _EMPTY
    t_in, t_out, nx, ny, nz = r
    wx, wy, wz = qrot_t(qw, qx, qy, qz, nx, ny, nz)
    return t_in, t_out, wx, wy, wz


@njit(cache=True, forceinline=True, refcount=False)
def _crosses_box(i, g, origins, inv_dir, limit, aabb_lo, aabb_hi):
    """Does ray i (inverse direction components inv_dir[i], inf where d_k = 0) cross row g's AABB for some
    t in [0, limit]? (Kay–Kajiya slabs on the box.)"""
    t0, t1 = 0.0, limit
    for k in range(3):
        o = origins[i, k]
        inv = inv_dir[i, k]
        lo, hi = aabb_lo[g, k], aabb_hi[g, k]
        if np.isinf(inv):
            if o < lo or o > hi:
                return False
        else:
            ta = (lo - o) * inv
            tb = (hi - o) * inv
            if ta > tb:
                ta, tb = tb, ta
            t0 = max(t0, ta)
            t1 = min(t1, tb)
            if t0 > t1:
                return False
    return True


@njit(cache=True, forceinline=True, refcount=False)
def _box_entry(i, origins, inv_dir, limit, lo, hi, k):
    """Where ray i enters box k of (lo, hi) (m, 3) [m] on t in [0, limit]: that t [m], or inf when it does not
    cross it there (the slabs of ``_crosses_box``)."""
    t0, t1 = 0.0, limit
    for a in range(3):
        o = origins[i, a]
        inv = inv_dir[i, a]
        if np.isinf(inv):
            if o < lo[k, a] or o > hi[k, a]:
                return np.inf
        else:
            ta = (lo[k, a] - o) * inv
            tb = (hi[k, a] - o) * inv
            if ta > tb:
                ta, tb = tb, ta
            t0 = max(t0, ta)
            t1 = min(t1, tb)
            if t0 > t1:
                return np.inf
    return t0


@njit(cache=True, forceinline=True, refcount=False)
def _try_row(i, g, rays, geom, poly, bodies, best, hit, normal):
    """Row g's exact test for ray i against the best hit so far (best [m], hit row or −1, its normal): the new
    (best, hit, normal). A tie at the same t goes to the lower row, whatever the order rows are tried in."""
    origins, directions = rays[0], rays[1]
    dx, dy, dz = directions[i, 0], directions[i, 1], directions[i, 2]
    t_in, t_out, nx, ny, nz = geom_interval(g, geom, poly, bodies.x, bodies.q, origins[i, 0], origins[i, 1],
                                            origins[i, 2], dx, dy, dz)
    if t_in > t_out or t_out < 0.0:
        return best, hit, normal
    if t_in < 0.0:  # the ray starts inside: a hit at its origin, facing it (module docstring)
        t_in, nx, ny, nz = 0.0, -dx, -dy, -dz
    if t_in < best or (t_in == best and (hit < 0 or g < hit)):
        return t_in, g, (nx, ny, nz)
    return best, hit, normal


@njit(cache=True, forceinline=True, refcount=False)
def _write(i, rays, geom, best, hit, normal, out):
    """Ray i's answer (``ray_cast_parallel``'s out) from its best hit (row hit, −1 for none, at best [m])."""
    origins, directions = rays[0], rays[1]
    body_out, distance_out, point_out, normal_out = out
    if hit < 0:
        body_out[i] = -1
        distance_out[i] = np.inf
        for k in range(3):
            point_out[i, k] = np.nan
            normal_out[i, k] = np.nan
        return
    body_out[i] = geom.geom_maker[hit]
    distance_out[i] = best
    for k in range(3):
        point_out[i, k] = origins[i, k] + best * directions[i, k]
        normal_out[i, k] = normal[k]


@njit(cache=True, forceinline=True, refcount=False)
def _cast_tree(i, rays, geom, poly, bodies, aabb, bvh, stack, out):
    """Ray i through the BVH ``bvh`` (``build_bvh``) and the rows outside it (planes), into out."""
    origins, inv_dir, max_distance = rays[0], rays[2], rays[3]
    aabb_lo, aabb_hi = aabb
    rows, planes, node_lo, node_hi, node_first, node_count, node_child = bvh
    best = max_distance[i]
    hit = -1
    normal = (0.0, 0.0, 0.0)
    for k in range(planes.shape[0]):
        best, hit, normal = _try_row(i, planes[k], rays, geom, poly, bodies, best, hit, normal)
    top = 0
    if node_lo.shape[0] > 0 and _box_entry(i, origins, inv_dir, best, node_lo, node_hi, 0) < np.inf:
        stack[0] = 0
        top = 1
    while top > 0:
        top -= 1
        node = stack[top]
        if _box_entry(i, origins, inv_dir, best, node_lo, node_hi, node) == np.inf:
            continue  # entered before a hit found since it was pushed
        count = node_count[node]
        if count > 0:
            for k in range(node_first[node], node_first[node] + count):
                g = rows[k]
                if _crosses_box(i, g, origins, inv_dir, best, aabb_lo, aabb_hi):
                    best, hit, normal = _try_row(i, g, rays, geom, poly, bodies, best, hit, normal)
            continue
        a = node_child[node]
        b = a + 1
        ta = _box_entry(i, origins, inv_dir, best, node_lo, node_hi, a)
        tb = _box_entry(i, origins, inv_dir, best, node_lo, node_hi, b)
        if ta > tb:
            a, b, ta, tb = b, a, tb, ta
        if tb < np.inf:  # the farther child waits below the nearer
            stack[top] = b
            top += 1
        if ta < np.inf:
            stack[top] = a
            top += 1
    _write(i, rays, geom, best, hit, normal, out)


@njit(cache=True, forceinline=True, refcount=False)
def _cast_one(i, rays, geom_ok, geom, poly, bodies, aabb, out):
    """Ray i against every row in turn (the brute-force path; the same hits as ``_cast_tree``)."""
    origins, inv_dir, max_distance = rays[0], rays[2], rays[3]
    aabb_lo, aabb_hi = aabb
    best = max_distance[i]
    hit = -1
    normal = (0.0, 0.0, 0.0)
    for g in range(geom.geom_type.shape[0]):
        if not geom_ok[g]:
            continue
        if geom.geom_type[g] != _PLANE and not _crosses_box(i, g, origins, inv_dir, best, aabb_lo, aabb_hi):
            continue
        best, hit, normal = _try_row(i, g, rays, geom, poly, bodies, best, hit, normal)
    _write(i, rays, geom, best, hit, normal, out)


@njit(cache=True)
def build_bvh(geom_ok, geom_type, lo, hi):
    """Bounding-volume hierarchy over the rows g with geom_ok[g] that are not planes, from their world boxes
    lo, hi (g, 3) [m] (Ericson §6.2: top-down, each node split at the median of its rows' box centres along
    the longest axis of the centres' extent, until at most ``LEAF_SIZE`` rows remain).

    Returns (rows (m,) int64: the tree's rows in leaf order; planes (p,) int64: the ok plane rows, outside the
    tree; node_lo, node_hi (k, 3) [m]: each node's box, the union of its rows' boxes; node_first, node_count
    (k,) int64: a leaf's rows are rows[first : first + count], count 0 for an inner node; node_child (k,)
    int64: an inner node's children are child and child + 1). Node 0 is the root; k = 0 when m = 0."""
    n = geom_type.shape[0]
    keep = np.zeros(n, dtype=np.bool_)
    is_plane = np.zeros(n, dtype=np.bool_)
    for g in range(n):
        keep[g] = geom_ok[g] and geom_type[g] != _PLANE
        is_plane[g] = geom_ok[g] and geom_type[g] == _PLANE
    rows = np.flatnonzero(keep).astype(np.int64)
    planes = np.flatnonzero(is_plane).astype(np.int64)
    m = rows.shape[0]
    cap = max(1, 2 * m)
    node_lo, node_hi = np.empty((cap, 3)), np.empty((cap, 3))
    node_first, node_count = np.zeros(cap, dtype=np.int64), np.zeros(cap, dtype=np.int64)
    node_child = np.zeros(cap, dtype=np.int64)
    if m == 0:
        return rows, planes, node_lo[:0], node_hi[:0], node_first[:0], node_count[:0], node_child[:0]
    centre = np.empty((n, 3))
    for g in range(n):
        for a in range(3):
            centre[g, a] = 0.5 * (lo[g, a] + hi[g, a])
    todo = np.empty((cap, 3), dtype=np.int64)   # (node, first, count)
    todo[0, 0], todo[0, 1], todo[0, 2] = 0, 0, m
    pending = 1
    nodes = 1
    while pending > 0:
        pending -= 1
        node, first, count = todo[pending, 0], todo[pending, 1], todo[pending, 2]
        c_lo = np.full(3, np.inf)
        c_hi = np.full(3, -np.inf)
        for a in range(3):
            node_lo[node, a] = np.inf
            node_hi[node, a] = -np.inf
        for k in range(first, first + count):
            g = rows[k]
            for a in range(3):
                node_lo[node, a] = min(node_lo[node, a], lo[g, a])
                node_hi[node, a] = max(node_hi[node, a], hi[g, a])
                c_lo[a] = min(c_lo[a], centre[g, a])
                c_hi[a] = max(c_hi[a], centre[g, a])
        if count <= LEAF_SIZE:
            node_first[node], node_count[node] = first, count
            continue
        axis = 0
        for a in range(1, 3):
            if c_hi[a] - c_lo[a] > c_hi[axis] - c_lo[axis]:
                axis = a
        part = rows[first:first + count]
        keys = np.empty(count)
        for k in range(count):
            keys[k] = centre[part[k], axis]
        order = np.argsort(keys, kind="mergesort")
        rows[first:first + count] = part[order]
        half = count // 2
        node_child[node] = nodes
        todo[pending, 0], todo[pending, 1], todo[pending, 2] = nodes, first, half
        todo[pending + 1, 0], todo[pending + 1, 1], todo[pending + 1, 2] = nodes + 1, first + half, count - half
        pending += 2
        nodes += 2
    return rows, planes, node_lo[:nodes], node_hi[:nodes], node_first[:nodes], node_count[:nodes], node_child[:nodes]


@njit(cache=True, parallel=True)
def ray_cast_parallel(rays, geom, poly, bodies, aabb, bvh, out):
    """Cast every ray through the BVH, in parallel over blocks of rays (``prange``; one traversal stack a
    block).

    rays = (origins (n, 3) [m] world, directions (n, 3) unit world, inv_dir (n, 3) [1/m] 1/d_k (inf where
    d_k = 0), max_distance (n,) [m] >= 0); geom (``Geometry``), poly (``Polytopes``), bodies (``BodyState``:
    x, q); aabb = (lo, hi) (g, 3) [m] the rows' world boxes; bvh: ``build_bvh`` over the rows a ray may hit;
    out = (body (n,) int64: ``geom_maker`` of the row hit, −1 for none; distance (n,) [m], inf for none;
    point (n, 3) [m] world; normal (n, 3) unit world outward; NaN for none)."""
    n = rays[0].shape[0]
    blocks = (n + PARALLEL_MIN_RAYS - 1) // PARALLEL_MIN_RAYS
    for block in prange(blocks):
        stack = np.empty(STACK, dtype=np.int64)
        for i in range(block * PARALLEL_MIN_RAYS, min(n, (block + 1) * PARALLEL_MIN_RAYS)):
            _cast_tree(i, rays, geom, poly, bodies, aabb, bvh, stack, out)


@njit(cache=True)
def ray_cast_serial(rays, geom, poly, bodies, aabb, bvh, out):
    """``ray_cast_parallel`` in a plain loop, for fewer than ``PARALLEL_MIN_RAYS`` rays (same results)."""
    stack = np.empty(STACK, dtype=np.int64)
    for i in range(rays[0].shape[0]):
        _cast_tree(i, rays, geom, poly, bodies, aabb, bvh, stack, out)


@njit(cache=True, parallel=True)
def ray_cast_brute_parallel(rays, geom_ok, geom, poly, bodies, aabb, out):
    """Every ray against every row with geom_ok (g,) True (no tree), in parallel over the rays: the reference
    the BVH path must match bitwise (tests/queries/test_ray.py). Arguments as ``ray_cast_parallel``'s."""
    for i in prange(rays[0].shape[0]):
        _cast_one(i, rays, geom_ok, geom, poly, bodies, aabb, out)


@dataclass(frozen=True)
class RayHits:
    """What rays hit (``World.ray_cast``). For n rays each field has n rows; for one ray given as (3,), the
    rows are dropped (body and distance are 0-d arrays, point and normal (3,)).

    Attributes:
        body: (n,) int64: index of the body hit (``body.index``; the ground is a body like any other), −1 for
            none.
        distance: (n,) [m] along the unit direction from the origin to the hit, inf for none (0 for a ray
            that starts inside a shape).
        point: (n, 3) [m] world: origin + distance · direction, NaN for none.
        normal: (n, 3) unit, world: the outward normal of the surface hit (−direction for a ray starting
            inside), NaN for none.
    """

    body: np.ndarray
    distance: np.ndarray
    point: np.ndarray
    normal: np.ndarray


def cast(model: Model, state: State, origins: np.ndarray, directions: np.ndarray, max_distance: np.ndarray,
         geom_ok: np.ndarray, brute_force: bool = False) -> RayHits:
    """Cast rays (origins (n, 3) [m], unit directions (n, 3), max_distance (n,) [m], world) against the shape
    rows of ``model`` with ``geom_ok`` (g,) True, posed by ``state``: the rows' boxes, a BVH over them
    (``build_bvh``), then one kernel call, parallel from ``PARALLEL_MIN_RAYS`` rays on. ``brute_force``: every
    ray against every row instead (the same hits; for tests and measurements). Inputs are taken as checked
    (``World.ray_cast`` checks them)."""
    n = origins.shape[0]
    geom, poly, bodies = model.geometry(), model.polytope_tables(), state.bodies()
    g = geom.geom_type.shape[0]
    lo, hi = np.empty((g, 3)), np.empty((g, 3))
    geom_aabbs_serial(geom, poly.vertices, bodies.x, bodies.q, 0.0, lo, hi)
    with np.errstate(divide="ignore"):
        inv_dir = np.where(directions == 0.0, np.inf, 1.0 / np.where(directions == 0.0, 1.0, directions))
    out = (np.empty(n, dtype=np.int64), np.empty(n), np.empty((n, 3)), np.empty((n, 3)))
    rays = (origins, directions, inv_dir, max_distance)
    if brute_force:
        ray_cast_brute_parallel(rays, geom_ok, geom, poly, bodies, (lo, hi), out)
        return RayHits(*out)
    bvh = build_bvh(geom_ok, geom.geom_type, lo, hi)
    kernel = ray_cast_parallel if n >= PARALLEL_MIN_RAYS else ray_cast_serial
    kernel(rays, geom, poly, bodies, (lo, hi), bvh, out)
    return RayHits(*out)
