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

Each row's world AABB (``aabb.geom_aabbs_serial``) is tested first, by the same slabs on t ∈ [0, min(best t,
max_distance)], so a ray pays the exact test only for the rows whose box it crosses before its best hit so
far (planes, whose boxes are unbounded, go straight to their exact test).
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
def _cast_one(i, rays, geom_ok, geom, poly, bodies, aabb, out):
    origins, directions, inv_dir, max_distance = rays
    aabb_lo, aabb_hi = aabb
    body_out, distance_out, point_out, normal_out = out
    dx, dy, dz = directions[i, 0], directions[i, 1], directions[i, 2]
    ox, oy, oz = origins[i, 0], origins[i, 1], origins[i, 2]
    best = max_distance[i]
    hit = -1
    bnx = bny = bnz = 0.0
    for g in range(geom.geom_type.shape[0]):
        if not geom_ok[g]:
            continue
        if geom.geom_type[g] != _PLANE and not _crosses_box(i, g, origins, inv_dir, best, aabb_lo, aabb_hi):
            continue
        t_in, t_out, nx, ny, nz = geom_interval(g, geom, poly, bodies.x, bodies.q, ox, oy, oz, dx, dy, dz)
        if t_in > t_out or t_out < 0.0:
            continue
        if t_in < 0.0:  # the ray starts inside: a hit at its origin, facing it (module docstring)
            t_in, nx, ny, nz = 0.0, -dx, -dy, -dz
        if t_in < best or (hit < 0 and t_in == best):
            best, hit, bnx, bny, bnz = t_in, g, nx, ny, nz
    if hit < 0:
        body_out[i] = -1
        distance_out[i] = np.inf
        for k in range(3):
            point_out[i, k] = np.nan
            normal_out[i, k] = np.nan
        return
    body_out[i] = geom.geom_maker[hit]
    distance_out[i] = best
    point_out[i, 0], point_out[i, 1], point_out[i, 2] = ox + best * dx, oy + best * dy, oz + best * dz
    normal_out[i, 0], normal_out[i, 1], normal_out[i, 2] = bnx, bny, bnz


@njit(cache=True, parallel=True)
def ray_cast_parallel(rays, geom_ok, geom, poly, bodies, aabb, out):
    """Cast every ray, in parallel over the rays (``prange``).

    rays = (origins (n, 3) [m] world, directions (n, 3) unit world, inv_dir (n, 3) [1/m] 1/d_k (inf where
    d_k = 0), max_distance (n,) [m] >= 0); geom_ok (g,) bool: the rows a ray may hit; geom (``Geometry``),
    poly (``Polytopes``), bodies (``BodyState``: x, q); aabb = (lo, hi) (g, 3) [m] the rows' world boxes;
    out = (body (n,) int64: ``geom_maker`` of the row hit, −1 for none; distance (n,) [m], inf for none;
    point (n, 3) [m] world; normal (n, 3) unit world outward; NaN for none)."""
    for i in prange(rays[0].shape[0]):
        _cast_one(i, rays, geom_ok, geom, poly, bodies, aabb, out)


@njit(cache=True, refcount=False)
def ray_cast_serial(rays, geom_ok, geom, poly, bodies, aabb, out):
    """``ray_cast_parallel`` in a plain loop, for fewer than ``PARALLEL_MIN_RAYS`` rays (same results)."""
    for i in range(rays[0].shape[0]):
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
         geom_ok: np.ndarray) -> RayHits:
    """Cast rays (origins (n, 3) [m], unit directions (n, 3), max_distance (n,) [m], world) against the shape
    rows of ``model`` with ``geom_ok`` (g,) True, posed by ``state``; one kernel call, parallel from
    ``PARALLEL_MIN_RAYS`` rays on. Inputs are taken as checked (``World.ray_cast`` checks them)."""
    n = origins.shape[0]
    geom, poly, bodies = model.geometry(), model.polytope_tables(), state.bodies()
    g = geom.geom_type.shape[0]
    lo, hi = np.empty((g, 3)), np.empty((g, 3))
    geom_aabbs_serial(geom, poly.vertices, bodies.x, bodies.q, 0.0, lo, hi)
    with np.errstate(divide="ignore"):
        inv_dir = np.where(directions == 0.0, np.inf, 1.0 / np.where(directions == 0.0, 1.0, directions))
    out = (np.empty(n, dtype=np.int64), np.empty(n), np.empty((n, 3)), np.empty((n, 3)))
    kernel = ray_cast_parallel if n >= PARALLEL_MIN_RAYS else ray_cast_serial
    kernel((origins, directions, inv_dir, max_distance), geom_ok, geom, poly, bodies, (lo, hi), out)
    return RayHits(*out)
