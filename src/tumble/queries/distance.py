"""Signed distances between shapes and bodies (docs/queries.md).

The signed distance of two solids A and B is their distance when apart and minus their penetration depth
(the length of the least translation that separates them) when they overlap. With it come two points, a on
A and b on B (the closest points, or when overlapping the deepest point of each inside the other, so that
translating A by |distance| n leaves them touching) and the unit normal n from B toward A:
a − b = distance · n in both cases.

Per pair of shape rows (``pair_distance``):

- sphere–sphere: |c_a − c_b| − r_a − r_b along the line of centres (e_z for concentric spheres);
- sphere–box: the closest point of the box to the centre by clamping in the box frame (Ericson, "Real-Time
  Collision Detection", 2005, §5.1.4); a centre inside the box is pushed out through the nearest face;
- any shape against a plane (the ground): the shape's support point against the plane's normal n,
  s(−n), is its deepest point, and n · s(−n) − e the signed distance (closed form for every shape: for a box
  its lowest corner, for an ellipsoid p − R S² Rᵀ n / |S Rᵀ n|);
- every other pair: GJK on the two "cores" (a sphere's centre, a capsule's segment, the exact cylinder,
  the ellipsoid, a box's or hull's vertices) while they are apart, EPA once they overlap (E. G. Gilbert,
  D. W. Johnson, S. S. Keerthi 1988; G. van den Bergen, "Collision Detection in Interactive 3D
  Environments", 2004, §4.3; collision/gjk.py), minus the radii that sweep the cores. Exact to rounding
  for polytopes, points and segments; within ~1e-11 × size for the curved shapes (GJK's and EPA's
  tolerances, ``TOL``).

Two bodies: the least signed distance over their shapes' pairs (a compound's parts each count; when parts
overlap, the deepest pair's depth, not the depth of the union). Two planes: −inf (they meet unless exactly
parallel); ``World.distance`` refuses that pair.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from ..collision import gjk
from ..collision.aabb import geom_aabbs_serial
from ..collision.sat import transform_polytope
from ..jit import njit
from ..math3d import qmul_t, qrot_inv_t, qrot_t

if TYPE_CHECKING:
    from ..model.model import Model
    from ..model.state import State

from .ray import _BOX, _CAPSULE, _CYLINDER, _ELLIPSOID, _PLANE, _SPHERE  # noqa: E402  (the one copy)

TOL = 1e-12
"""m. GJK's and EPA's stopping tolerance: exact to rounding for polytopes, points and segments; on curved
shapes GJK stops within ~1e-12 × size and EPA within max(TOL, 1e-11 × size) (collision/gjk.py)."""

WITNESS_GAP = 1e-7
"""How far apart (relative to the shapes' coordinates, m/m) ``_witnesses`` moves overlapping cores to find their
contact region by GJK: well above the ~1e-8 relative separation below which GJK's direction is rounding
(collision/gjk.py), and small enough that the witness points err by ~gap × the normal's error (< 1e-9 m)."""

RESULT_SIZE = 10
"""Entries of one pair's result: (distance, a (3), b (3), n (3))."""


@dataclass(frozen=True)
class Distance:
    """Signed distance between two bodies (``World.distance``).

    Attributes:
        distance: [m] signed: the gap when apart, minus the penetration depth when overlapping.
        point_a: (3,) [m] world: the point of body A closest to B (overlapping: A's deepest point in B).
        point_b: (3,) [m] world: the point of body B closest to A (overlapping: B's deepest point in A).
        normal: (3,) unit, world, from B toward A; point_a − point_b = distance · normal.
    """

    distance: float
    point_a: np.ndarray
    point_b: np.ndarray
    normal: np.ndarray


@njit(cache=True, forceinline=True, refcount=False)
def _pose(g, geom, bodies):
    """World pose (px, py, pz, qw, qx, qy, qz) of shape row g: its body's pose composed with its local pose."""
    x, q = bodies.x, bodies.q
    b = geom.geom_body[g]
    ox, oy, oz = qrot_t(q[b, 0], q[b, 1], q[b, 2], q[b, 3], geom.geom_pos[g, 0], geom.geom_pos[g, 1],
                        geom.geom_pos[g, 2])
    qw, qx, qy, qz = qmul_t(q[b, 0], q[b, 1], q[b, 2], q[b, 3], geom.geom_quat[g, 0], geom.geom_quat[g, 1],
                            geom.geom_quat[g, 2], geom.geom_quat[g, 3])
    return x[b, 0] + ox, x[b, 1] + oy, x[b, 2] + oz, qw, qx, qy, qz


@njit(cache=True)
def _core(g, pose, geom, poly, world):
    """Shape row g at ``pose`` as a GJK shape tuple (collision/gjk.py) and the radius that sweeps it: a sphere is
    its centre, a capsule its segment, a cylinder the exact cylinder, an ellipsoid itself, a box or hull its
    world vertices (written to ``world`` = (wv, wn, wd))."""
    t = geom.geom_type[g]
    px, py, pz, qw, qx, qy, qz = pose
    s = (geom.geom_size[g, 0], geom.geom_size[g, 1], geom.geom_size[g, 2])
    wv = world[0]
    if t == _SPHERE:
        return (gjk.SHAPE_POINT, pose, (0.0, 0.0, 0.0), wv, 0), s[0]
    if t == _CAPSULE:
        ax, ay, az = qrot_t(qw, qx, qy, qz, 0.0, 0.0, s[1])
        return (gjk.SHAPE_SEGMENT, (px - ax, py - ay, pz - az, qw, qx, qy, qz), (px + ax, py + ay, pz + az), wv,
                0), s[0]
    if t == _CYLINDER:
        return (gjk.SHAPE_CYLINDER, pose, s, wv, 0), 0.0
    if t == _ELLIPSOID:
        return (gjk.SHAPE_ELLIPSOID, pose, s, wv, 0), 0.0
    nv = geom.geom_vert_count[g]
    transform_polytope(poly, (geom.geom_vert_start[g], nv, geom.geom_face_start[g], 0), pose, world)
    return (gjk.SHAPE_POLYTOPE, pose, (0.0, 0.0, 0.0), wv, nv), 0.0


@njit(cache=True, forceinline=True, refcount=False)
def _spheres(ca, ra, cb, rb):
    """Sphere A against sphere B: (distance, a, b, n), n along the line of centres (e_z when concentric)."""
    dx, dy, dz = ca[0] - cb[0], ca[1] - cb[1], ca[2] - cb[2]
    d = np.sqrt(dx * dx + dy * dy + dz * dz)
    nx, ny, nz = (dx / d, dy / d, dz / d) if d > 0.0 else (0.0, 0.0, 1.0)
    return (d - ra - rb, ca[0] - ra * nx, ca[1] - ra * ny, ca[2] - ra * nz,
            cb[0] + rb * nx, cb[1] + rb * ny, cb[2] + rb * nz, nx, ny, nz)


@njit(cache=True, forceinline=True, refcount=False)
def _sphere_box(c, r, pose, hx, hy, hz):
    """Sphere A (centre c, radius r) against box B (world ``pose``, half extents h): the clamped closest point
    (Ericson §5.1.4); a centre inside leaves by the face of least clearance (ties: the lower axis)."""
    px, py, pz, qw, qx, qy, qz = pose
    lx, ly, lz = qrot_inv_t(qw, qx, qy, qz, c[0] - px, c[1] - py, c[2] - pz)
    cx, cy, cz = min(max(lx, -hx), hx), min(max(ly, -hy), hy), min(max(lz, -hz), hz)
    ex, ey, ez = lx - cx, ly - cy, lz - cz
    gap = np.sqrt(ex * ex + ey * ey + ez * ez)
    if gap > 0.0:
        nx, ny, nz = ex / gap, ey / gap, ez / gap
    else:
        gx, gy, gz = hx - abs(lx), hy - abs(ly), hz - abs(lz)
        if gx <= gy and gx <= gz:
            nx, ny, nz, gap, cx = (1.0 if lx >= 0.0 else -1.0), 0.0, 0.0, -gx, (hx if lx >= 0.0 else -hx)
        elif gy <= gz:
            nx, ny, nz, gap, cy = 0.0, (1.0 if ly >= 0.0 else -1.0), 0.0, -gy, (hy if ly >= 0.0 else -hy)
        else:
            nx, ny, nz, gap, cz = 0.0, 0.0, (1.0 if lz >= 0.0 else -1.0), -gz, (hz if lz >= 0.0 else -hz)
    wx, wy, wz = qrot_t(qw, qx, qy, qz, nx, ny, nz)
    bx, by, bz = qrot_t(qw, qx, qy, qz, cx, cy, cz)
    return (gap - r, c[0] - r * wx, c[1] - r * wy, c[2] - r * wz, px + bx, py + by, pz + bz, wx, wy, wz)


@njit(cache=True, forceinline=True, refcount=False)
def _against_plane(shape, r, pose):
    """A shape (GJK core ``shape`` swept by r) against the plane shape at ``pose`` (solid below its body z):
    its deepest point s(−n) − r n, distance n · that − e, n the plane's normal."""
    px, py, pz, qw, qx, qy, qz = pose
    nx, ny, nz = qrot_t(qw, qx, qy, qz, 0.0, 0.0, 1.0)
    sx, sy, sz = gjk.support(shape, -nx, -ny, -nz)
    ax, ay, az = sx - r * nx, sy - r * ny, sz - r * nz
    d = nx * (ax - px) + ny * (ay - py) + nz * (az - pz)
    return d, ax, ay, az, ax - d * nx, ay - d * ny, az - d * nz, nx, ny, nz


@njit(cache=True)
def _witnesses(shape_a, shape_b, depth, nx, ny, nz, ws):
    """Deepest points a ∈ A and b ∈ B of overlapping cores with a − b = −depth n: EPA's support points are each
    deepest, but on a face or an edge any point is, and the two are picked apart. So A is moved out by depth +
    ``WITNESS_GAP`` along n, GJK finds the closest points a' and b of the moved A and B (in the contact
    region), and a = a' − (depth + gap) n. When GJK cannot separate them (rounding), EPA's points are kept."""
    gap = WITNESS_GAP * (1.0 + depth + abs(shape_a[1][0]) + abs(shape_a[1][1]) + abs(shape_a[1][2]))
    s = depth + gap
    tx, ty, tz = s * nx, s * ny, s * nz
    kind, pose, size, wv, nv = shape_a
    px, py, pz, qw, qx, qy, qz = pose
    moved_pose = (px + tx, py + ty, pz + tz, qw, qx, qy, qz)
    moved_size = (size[0] + tx, size[1] + ty, size[2] + tz) if kind == gjk.SHAPE_SEGMENT else size
    for k in range(nv):
        wv[k, 0] += tx
        wv[k, 1] += ty
        wv[k, 2] += tz
    apart, _, _, _, _, ax, ay, az, bx, by, bz = gjk.distance_ws((kind, moved_pose, moved_size, wv, nv), shape_b,
                                                                TOL, ws)
    for k in range(nv):
        wv[k, 0] -= tx
        wv[k, 1] -= ty
        wv[k, 2] -= tz
    if not apart:
        return gjk.support(shape_a, -nx, -ny, -nz) + gjk.support(shape_b, nx, ny, nz)
    return ax - tx, ay - ty, az - tz, bx, by, bz


@njit(cache=True)
def pair_distance(ga, gb, geom, poly, bodies, scratch):
    """Signed distance of shape rows ga (A) and gb (B) of ``geom`` (``Geometry``; polytopes in ``poly``,
    ``Polytopes``), their bodies posed by ``bodies`` (``BodyState``: x (n, 3) [m], q (n, 4)): (distance [m],
    a (3) [m], b (3) [m], n (3) unit from B toward A), all world (module docstring). scratch = (an
    ``gjk.epa_workspace()``, (wv, wn, wd) for A's polytope, the same for B's)."""
    ws, world_a, world_b = scratch
    ta, tb = geom.geom_type[ga], geom.geom_type[gb]
    pa, pb = _pose(ga, geom, bodies), _pose(gb, geom, bodies)
    if ta == _PLANE and tb == _PLANE:
        return -np.inf, np.nan, np.nan, np.nan, np.nan, np.nan, np.nan, np.nan, np.nan, np.nan
    swap = ta == _PLANE or (tb == _SPHERE and ta != _SPHERE)
    if swap:  # below, a plane is always B and a sphere facing another shape A; the result is swapped back
        ga, gb, ta, tb, pa, pb = gb, ga, tb, ta, pb, pa
        world_a, world_b = world_b, world_a
    if tb == _PLANE:
        shape_a, ra = _core(ga, pa, geom, poly, world_a)
        r = _against_plane(shape_a, ra, pb)
    elif ta == _SPHERE and tb == _SPHERE:
        r = _spheres(pa, geom.geom_size[ga, 0], pb, geom.geom_size[gb, 0])
    elif ta == _SPHERE and tb == _BOX:
        r = _sphere_box(pa, geom.geom_size[ga, 0], pb, geom.geom_size[gb, 0], geom.geom_size[gb, 1],
                        geom.geom_size[gb, 2])
    else:
        shape_a, ra = _core(ga, pa, geom, poly, world_a)
        shape_b, rb = _core(gb, pb, geom, poly, world_b)
        depth, nx, ny, nz, ax, ay, az, bx, by, bz, _ = gjk.epa_penetration_ws(shape_a, shape_b, TOL, ws)
        if depth >= 0.0:
            ax, ay, az, bx, by, bz = _witnesses(shape_a, shape_b, depth, nx, ny, nz, ws)
        r = (-depth - ra - rb, ax - ra * nx, ay - ra * ny, az - ra * nz, bx + rb * nx, by + rb * ny,
             bz + rb * nz, nx, ny, nz)
    if swap:
        d, ax, ay, az, bx, by, bz, nx, ny, nz = r
        return d, bx, by, bz, ax, ay, az, -nx, -ny, -nz
    return r


@njit(cache=True)
def pair_distances(pairs, geom, poly, bodies, out):
    """``pair_distance`` of every row (a, b) of pairs (m, 2) int64 (shape rows), written to out (m,
    RESULT_SIZE) = (distance, a, b, n) per pair [m], world. Allocates its GJK/EPA scratch once."""
    nv = 1
    nf = 1
    for g in range(geom.geom_type.shape[0]):
        nv = max(nv, geom.geom_vert_count[g])
        nf = max(nf, geom.geom_face_count[g])
    scratch = (gjk.epa_workspace(), (np.empty((nv, 3)), np.empty((nf, 3)), np.empty(nf)),
               (np.empty((nv, 3)), np.empty((nf, 3)), np.empty(nf)))
    for k in range(pairs.shape[0]):
        r = pair_distance(pairs[k, 0], pairs[k, 1], geom, poly, bodies, scratch)
        for j in range(RESULT_SIZE):
            out[k, j] = r[j]


def body_distance(model: Model, state: State, a: int, b: int) -> Distance:
    """Signed distance between bodies a and b (body rows of ``model``, posed by ``state``): the least over the
    pairs of their shapes (the rows whose ``geom_maker`` they are). Both must have shapes."""
    maker = model.geom.live("geom_maker")
    rows_a, rows_b = np.flatnonzero(maker == a), np.flatnonzero(maker == b)
    pairs = np.stack(np.meshgrid(rows_a, rows_b, indexing="ij"), axis=-1).reshape(-1, 2).astype(np.int64)
    out = np.empty((pairs.shape[0], RESULT_SIZE))
    pair_distances(pairs, model.geometry(), model.polytope_tables(), state.bodies(), out)
    best = out[int(np.argmin(out[:, 0]))]
    return Distance(float(best[0]), best[1:4].copy(), best[4:7].copy(), best[7:10].copy())


def bodies_within(model: Model, state: State, body: int, distance: float) -> np.ndarray:
    """Indices (k,) int64, ascending, of the bodies other than ``body`` whose signed distance to it is at most
    ``distance`` [m]: the shape rows whose world AABBs, inflated by max(distance, 0), overlap one of ``body``'s
    are the candidates (a box gap never exceeds the shapes' gap), then ``pair_distances`` decides."""
    geom = model.geometry()
    g = geom.geom_type.shape[0]
    lo, hi = np.empty((g, 3)), np.empty((g, 3))
    bodies = state.bodies()
    geom_aabbs_serial(geom, model.polytope_tables().vertices, bodies.x, bodies.q, 0.0, lo, hi)
    maker = geom.geom_maker
    own = np.flatnonzero(maker == body)
    others = np.flatnonzero(maker != body)
    pad = max(distance, 0.0)
    near = np.all((lo[own, None, :] <= hi[None, others, :] + pad) & (lo[None, others, :] <= hi[own, None, :] + pad),
                  axis=2)
    i, j = np.nonzero(near)
    if not i.size:
        return np.zeros(0, dtype=np.int64)
    pairs = np.stack([own[i], others[j]], axis=1).astype(np.int64)
    out = np.empty((pairs.shape[0], RESULT_SIZE))
    pair_distances(pairs, geom, model.polytope_tables(), bodies, out)
    close = maker[pairs[:, 1]][out[:, 0] <= distance]
    return np.unique(close).astype(np.int64)
