"""World AABBs of each shape type (``tumble.collision.aabb``) against brute force: points sampled on the shape's
surface (or its exact vertices), placed in the world by an independent NumPy/SciPy pose (SciPy's scalar-last
``Rotation`` for both the body and the local rotation).

Every sampled point must lie in the kernel's box (containment), and every face of the box must be within a
stated distance of the farthest sample along its axis (tightness).

Tolerances:
- containment, and exact references (box corners, hull vertices, margins, poses): 1e-12 × (1 + |coordinates|).
  Inputs are O(1)–O(10) and each coordinate takes a few dozen flops, so rounding is ~1e-14; 1e-12 leaves margin.
- tightness of smooth shapes: the samples lie ON the surface, so the sample box is inside the true box by at
  most the search's deficit. Sphere, ellipsoid and capsule caps are affine images p = c + M u of the unit
  sphere, so each coordinate e_j · p is linear in u; a two-stage brute-force search (``sphere_search``: a
  coarse Fibonacci set, then a fine Fibonacci cap around the best coarse sample of each ±e_j) finds a sample
  within angle ε_fine of the maximizer, hence within S ε_fine² / 2 of the maximum, S the largest semi-axis or
  radius (ε_fine ≈ 6e-3 rad, so ≈ 2e-5 S). Covering radii are taken as twice the mean spacing and checked by
  ``test_sampling_covers``. A cylinder's extremes lie on its two rim circles, sampled at N angles: deficit
  <= r (1 − cos(π/N)).
  A wrong formula (for example the box rule |R| s applied to an ellipsoid or a cylinder) is off by O(0.1 S)
  in a generic orientation, orders of magnitude above these bounds.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
from scipy.spatial.transform import Rotation

from tumble import Box, Capsule, ConvexHull, Cylinder, Ellipsoid, Sphere, World
from tumble.collision.aabb import geom_aabbs, geom_aabbs_serial
from tumble.conventions import GeomType
from tumble.model.fields import GEOM_FIELDS, Geometry

SETTINGS = settings(max_examples=25, deadline=None)  # deadline=None: the first call compiles (Numba)
ROUND = 1e-12

unit = st.floats(-1.0, 1.0, allow_nan=False, allow_infinity=False)
quats = (st.tuples(unit, unit, unit, unit).map(lambda t: np.array(t, dtype=float))
         .filter(lambda q: np.linalg.norm(q) > 0.1).map(lambda q: q / np.linalg.norm(q)))
coord = st.floats(-10.0, 10.0, allow_nan=False, allow_infinity=False)
offset = st.floats(-2.0, 2.0, allow_nan=False, allow_infinity=False)
vecs = st.tuples(coord, coord, coord).map(np.array)
offsets = st.tuples(offset, offset, offset).map(np.array)
size = st.floats(0.05, 2.0)
margins = st.floats(0.0, 0.5)


def matrix(q: np.ndarray) -> np.ndarray:
    """Rotation matrix of (w, x, y, z) by SciPy (scalar-last at the boundary)."""
    return Rotation.from_quat([q[1], q[2], q[3], q[0]]).as_matrix()


def fibonacci_sphere(n: int, z_min: float = -1.0) -> np.ndarray:
    """n nearly uniform unit vectors (golden-angle spiral) on the cap z >= z_min (the whole sphere for −1)."""
    k = np.arange(n) + 0.5
    z = 1.0 - (1.0 - z_min) * k / n
    r = np.sqrt(1.0 - z * z)
    phi = np.pi * (3.0 - np.sqrt(5.0)) * k
    return np.column_stack([r * np.cos(phi), r * np.sin(phi), z])


# Coarse search: the whole sphere; fine search: a cap of angular radius EPS_COARSE around the best coarse
# sample. Covering radii are taken as twice the mean spacing (test_sampling_covers checks them).
N_COARSE, N_FINE = 4000, 4000
SPHERE_PTS = fibonacci_sphere(N_COARSE)
EPS_COARSE = 2.0 * np.sqrt(4.0 * np.pi / N_COARSE)
CAP_PTS = fibonacci_sphere(N_FINE, np.cos(EPS_COARSE))
EPS_FINE = 2.0 * np.sqrt(2.0 * np.pi * (1.0 - np.cos(EPS_COARSE)) / N_FINE)
N_RIM = 20_000
RIM = np.linspace(0.0, 2.0 * np.pi, N_RIM, endpoint=False)


def _cap_around(u: np.ndarray) -> np.ndarray:
    """CAP_PTS turned so that the cap's pole +z goes to the unit vector u."""
    t = np.array([1.0, 0, 0]) if abs(u[0]) < 0.9 else np.array([0, 1.0, 0])
    e1 = np.cross(u, t)
    e1 /= np.linalg.norm(e1)
    e2 = np.cross(u, e1)
    return CAP_PTS @ np.array([e1, e2, u])


def sphere_search(affine) -> np.ndarray:
    """Surface points of an affine image p = affine(u) of the unit sphere, found by brute-force search: all
    coarse samples, plus a fine cap around the best coarse sample of each of the six directions ±e_j.

    Why this finds the extremes: f(u) = e_j · p(u) = f0 + m · u is linear in u, maximal at u* = m/|m|. The
    coarse sample nearest u* (within EPS_COARSE) gives f >= f0 + |m| cos EPS_COARSE, so the best coarse sample
    u_b satisfies m · u_b >= |m| cos EPS_COARSE: u* is in the cap of radius EPS_COARSE around u_b, where the
    fine samples come within EPS_FINE of it. The deficit is <= |m| (1 − cos EPS_FINE) <= S EPS_FINE² / 2.
    """
    coarse = affine(SPHERE_PTS)
    found = [coarse]
    for j in range(3):
        for idx in (np.argmin(coarse[:, j]), np.argmax(coarse[:, j])):
            found.append(affine(_cap_around(SPHERE_PTS[idx])))
    return np.concatenate(found)


def test_sampling_covers():
    """The covering radii assumed above hold: random directions (in the whole sphere, and in the cap) are
    within EPS_COARSE (EPS_FINE) of a sample, measured with a k-d tree on chord lengths."""
    from scipy.spatial import cKDTree

    rng = np.random.default_rng(5)
    u = rng.normal(size=(200_000, 3))
    u /= np.linalg.norm(u, axis=1)[:, None]
    chord, _ = cKDTree(SPHERE_PTS).query(u)
    assert 2 * np.arcsin(chord.max() / 2) < EPS_COARSE
    z = rng.uniform(np.cos(EPS_COARSE), 1.0, 200_000)  # uniform on the cap (Archimedes)
    phi = rng.uniform(0.0, 2.0 * np.pi, 200_000)
    cap_u = np.column_stack([np.sqrt(1 - z * z) * np.cos(phi), np.sqrt(1 - z * z) * np.sin(phi), z])
    chord, _ = cKDTree(CAP_PTS).query(cap_u)
    assert 2 * np.arcsin(chord.max() / 2) < EPS_FINE


def one_row(geom_type, size3, hull_vertices=None):
    """Geometry arrays for a single row on body 0."""
    hv = np.zeros((0, 3)) if hull_vertices is None else np.ascontiguousarray(hull_vertices, dtype=float)
    return dict(geom_type=np.array([int(geom_type)], dtype=np.int32), geom_body=np.zeros(1, dtype=np.int32),
                geom_size=np.array([size3], dtype=float),
                geom_vert_start=np.array([0 if hull_vertices is not None else -1], dtype=np.int64),
                geom_vert_count=np.array([hv.shape[0]], dtype=np.int64), polytope_vertices=hv)


def geometry(**fields):
    """A ``Geometry`` (the kernels' container) of the given fields, in the registry's dtypes; the fields not
    given are zeros (the AABB kernels do not read them)."""
    g = len(next(iter(fields.values())))
    return Geometry(*(np.ascontiguousarray(fields[f.name], dtype=f.dtype) if f.name in fields
                      else np.zeros((g, *f.shape), dtype=f.dtype) for f in GEOM_FIELDS))


def kernel_box(rows, x, q, gpos, gquat, margin, kernel=geom_aabbs):
    lo = np.full((1, 3), np.nan)
    hi = np.full((1, 3), np.nan)  # NaN-filled: a row the kernel forgot to write fails (STYLE.md pattern 12)
    geom = geometry(geom_type=rows["geom_type"], geom_body=rows["geom_body"], geom_pos=gpos[None, :],
                    geom_quat=gquat[None, :], geom_size=rows["geom_size"], geom_vert_start=rows["geom_vert_start"],
                    geom_vert_count=rows["geom_vert_count"])
    kernel(geom, rows["polytope_vertices"], x[None, :], q[None, :], margin, lo, hi)
    return lo[0], hi[0]


def to_world(points_shape, x, q, gpos, gquat):
    """x_b + R(q_b) (geom_pos + R(geom_quat) p): body pose ∘ local pose."""
    return x + (gpos + points_shape @ matrix(gquat).T) @ matrix(q).T


def check(points_shape, extreme_shape, tight_tol, rows, x, q, gpos, gquat):
    """Containment of all points, and tightness against the extreme samples within ``tight_tol``."""
    lo, hi = kernel_box(rows, x, q, gpos, gquat, 0.0)
    scale = ROUND * (1.0 + np.abs(x).max() + np.abs(gpos).max() + 4.0)
    pts = to_world(points_shape, x, q, gpos, gquat)
    assert np.all(pts >= lo - scale) and np.all(pts <= hi + scale)
    ext = to_world(extreme_shape, x, q, gpos, gquat)
    assert np.all(ext.min(axis=0) - lo <= tight_tol + scale), (ext.min(axis=0) - lo)
    assert np.all(hi - ext.max(axis=0) <= tight_tol + scale), (hi - ext.max(axis=0))
    return lo, hi


def search_in_shape_frame(affine_shape, x, q, gpos, gquat):
    """``sphere_search`` run in the world (the search must look for extremes along WORLD axes), returned in
    the shape frame for ``check``."""
    world = sphere_search(lambda u: to_world(affine_shape(u), x, q, gpos, gquat))
    return (world - x) @ matrix(q) @ matrix(gquat) - gpos @ matrix(gquat)


@SETTINGS
@given(x=vecs, q=quats, gpos=offsets, gquat=quats, r=size)
def test_sphere(x, q, gpos, gquat, r):
    pts = search_in_shape_frame(lambda u: r * u, x, q, gpos, gquat)
    check(pts, pts, r * EPS_FINE ** 2 / 2, one_row(GeomType.SPHERE, (r, 0, 0)), x, q, gpos, gquat)


@SETTINGS
@given(x=vecs, q=quats, gpos=offsets, gquat=quats, s=st.tuples(size, size, size).map(np.array))
def test_box_is_exact_on_its_corners(x, q, gpos, gquat, s):
    corners = np.array([[i, j, k] for i in (-1, 1) for j in (-1, 1) for k in (-1, 1)]) * s
    faces = np.random.default_rng(0).uniform(-1, 1, (2000, 3)) * s  # interior points: containment only
    lo, hi = check(corners, corners, 0.0, one_row(GeomType.BOX, s), x, q, gpos, gquat)
    assert np.all(to_world(faces, x, q, gpos, gquat) >= lo - 1e-9)


@SETTINGS
@given(x=vecs, q=quats, gpos=offsets, gquat=quats, r=size, half=size)
def test_capsule(x, q, gpos, gquat, r, half):
    """The extremes lie on the two end spheres (the side is inside their convex hull); each is searched."""
    caps = np.concatenate([search_in_shape_frame(lambda u, z=z: r * u + [0, 0, z], x, q, gpos, gquat)
                           for z in (half, -half)])
    t = np.linspace(-half, half, 50)
    side = np.column_stack([r * np.cos(3 * t), r * np.sin(3 * t), t])
    check(np.concatenate([caps, side]), caps, r * EPS_FINE ** 2 / 2, one_row(GeomType.CAPSULE, (r, half, 0)),
          x, q, gpos, gquat)


@SETTINGS
@given(x=vecs, q=quats, gpos=offsets, gquat=quats, r=size, half=size)
@example(x=np.zeros(3), q=np.array([0.0, 0, 0, 1]), gpos=np.zeros(3), gquat=np.array([0.0, 0, 0.5**0.5, 0.5**0.5]),
         r=1.0, half=1.0)  # axis along −y up to rounding: sqrt(1 − a_y²) once gave a 2e-8 r loose face
def test_cylinder(x, q, gpos, gquat, r, half):
    ring = np.column_stack([r * np.cos(RIM), r * np.sin(RIM), np.zeros(N_RIM)])
    rims = np.concatenate([ring + [0, 0, half], ring - [0, 0, half]])
    rng = np.random.default_rng(1)
    u = rng.uniform(0, 1, 3000)
    a = rng.uniform(0, 2 * np.pi, 3000)
    inside = np.column_stack([r * np.sqrt(u) * np.cos(a), r * np.sqrt(u) * np.sin(a), rng.uniform(-half, half, 3000)])
    check(np.concatenate([rims, inside]), rims, r * (1 - np.cos(np.pi / N_RIM)),
          one_row(GeomType.CYLINDER, (r, half, 0)), x, q, gpos, gquat)


@SETTINGS
@given(x=vecs, q=quats, gpos=offsets, gquat=quats, s=st.tuples(size, size, size).map(np.array))
def test_ellipsoid(x, q, gpos, gquat, s):
    """The ellipsoid is diag(s) applied to the unit sphere: affine in u, as ``sphere_search`` needs."""
    pts = search_in_shape_frame(lambda u: u * s, x, q, gpos, gquat)
    check(pts, pts, s.max() * EPS_FINE ** 2 / 2, one_row(GeomType.ELLIPSOID, s), x, q, gpos, gquat)


@SETTINGS
@given(x=vecs, q=quats, gpos=offsets, gquat=quats, seed=st.integers(0, 2**32 - 1))
def test_convex_hull_is_exact_on_its_vertices(x, q, gpos, gquat, seed):
    hull = ConvexHull(np.random.default_rng(seed).normal(0.0, 1.0, (30, 3)))
    rows = one_row(GeomType.CONVEX_HULL, hull.size, hull.vertices)
    check(hull.vertices, hull.vertices, 0.0, rows, x, q, gpos, gquat)


def test_convex_hull_reads_only_its_own_vertices():
    """Rows index a packed vertex array: a hull's box must come from its slice only."""
    a = ConvexHull(np.random.default_rng(2).normal(0.0, 1.0, (20, 3)))
    b = ConvexHull(5.0 * np.random.default_rng(3).normal(0.0, 1.0, (25, 3)))
    hv = np.concatenate([a.vertices, b.vertices])
    ident = np.array([[1.0, 0, 0, 0]] * 2)
    lo, hi = np.empty((2, 3)), np.empty((2, 3))
    geom = geometry(geom_type=np.full(2, int(GeomType.CONVEX_HULL), np.int32), geom_body=np.array([0, 1], np.int32),
                    geom_quat=ident, geom_vert_start=np.array([0, len(a.vertices)]),
                    geom_vert_count=np.array([len(a.vertices), len(b.vertices)]))
    geom_aabbs(geom, hv, np.zeros((2, 3)), ident, 0.0, lo, hi)
    for i, verts in enumerate((a.vertices, b.vertices)):
        np.testing.assert_array_equal(lo[i], verts.min(axis=0))
        np.testing.assert_array_equal(hi[i], verts.max(axis=0))


@SETTINGS
@given(x=vecs, q=quats, gpos=offsets, gquat=quats, s=st.tuples(size, size, size), margin=margins,
       t=st.sampled_from([GeomType.SPHERE, GeomType.BOX, GeomType.CAPSULE, GeomType.CYLINDER, GeomType.ELLIPSOID]))
def test_margin_inflates_every_side(x, q, gpos, gquat, s, margin, t):
    rows = one_row(t, s)
    lo0, hi0 = kernel_box(rows, x, q, gpos, gquat, 0.0)
    lo, hi = kernel_box(rows, x, q, gpos, gquat, margin)
    tol = ROUND * (1.0 + np.abs(x).max() + 4.0)
    np.testing.assert_allclose(lo, lo0 - margin, rtol=0, atol=tol)
    np.testing.assert_allclose(hi, hi0 + margin, rtol=0, atol=tol)


@pytest.mark.parametrize(("gquat", "axis", "side"), [
    ((1.0, 0, 0, 0), 2, +1),                            # normal +z: the ground
    ((0.0, 1, 0, 0), 2, -1),                            # turned 180° about x: normal −z, solid above
    ((0.5, 0.5, 0.5, 0.5), 0, +1),                      # 120° about (1,1,1), exact in binary: normal +x
    ((0.5, 0.5, 0.5, -0.5), 1, -1),                     # normal −y, exactly
    ((np.cos(0.1), np.sin(0.1), 0, 0), None, 0),        # tilted: unbounded on every axis
    ((0.5**0.5, 0, 0.5**0.5, 0), None, 0),              # 90° about y: normal +x up to rounding (n_z ≈ 2e-16),
])                                                      # so treated as tilted: safe, only less tight
def test_plane_half_space_is_bounded_only_on_its_outward_side(gquat, axis, side):
    """A plane row bounds the solid half-space n · (p − c) <= 0: with n = ±e_j the box ends at c_j + margin on
    the side n faces (a point just beyond is outside the half-space, so nothing is lost); on every other
    side, and for a tilted normal on every axis, the half-space is unbounded."""
    c, margin = np.array([1.0, 2.0, 3.0]), 0.1
    rows = one_row(GeomType.PLANE, (0, 0, 0))
    lo, hi = kernel_box(rows, c, np.array([1.0, 0, 0, 0]), np.zeros(3), np.array(gquat), margin)
    want_lo, want_hi = np.full(3, -np.inf), np.full(3, np.inf)
    if axis is not None:
        if side > 0:
            want_hi[axis] = c[axis] + margin
        else:
            want_lo[axis] = c[axis] - margin
    np.testing.assert_array_equal(lo, want_lo)
    np.testing.assert_array_equal(hi, want_hi)


def test_unknown_type_gives_nan_not_a_silent_box():
    rows = one_row(99, (1, 1, 1))
    lo, hi = kernel_box(rows, np.zeros(3), np.array([1.0, 0, 0, 0]), np.zeros(3), np.array([1.0, 0, 0, 0]), 0.0)
    assert np.all(np.isnan(lo)) and np.all(np.isnan(hi))


def _mixed_world(n_bodies: int) -> World:
    rng = np.random.default_rng(4)
    hull = ConvexHull(rng.normal(0.0, 0.3, (12, 3)))
    world = World()
    shapes = [Sphere(0.2), Box(0.3, 0.2, 0.5), Capsule(0.1, 0.4), hull, Cylinder(0.2, 0.3), Ellipsoid(0.1, 0.2, 0.3),
              [(Box(0.2, 0.2, 0.2), (0.3, 0, 0), (1, 0, 0, 0)), (Sphere(0.1), (-0.3, 0, 0), (0.6, 0.8, 0, 0))]]
    for i in range(n_bodies):
        q = rng.normal(size=4)
        world.add_body(shapes[i % len(shapes)], position=rng.uniform(-5, 5, 3), orientation=q / np.linalg.norm(q))
    world.add_ground()
    return world


def world_aabbs(world: World, margin: float, kernel):
    g = world.model.geom.count
    lo, hi = np.full((g, 3), np.nan), np.full((g, 3), np.nan)
    live = world._live()
    kernel(world.model.geometry(), world.model.polytopes.arrays()["vertices"], live["x"], live["q"], margin, lo, hi)
    return lo, hi


def test_serial_and_parallel_drivers_are_bitwise_equal():
    world = _mixed_world(300)
    lo_p, hi_p = world_aabbs(world, 0.01, geom_aabbs)
    lo_s, hi_s = world_aabbs(world, 0.01, geom_aabbs_serial)
    np.testing.assert_array_equal(lo_p, lo_s)
    np.testing.assert_array_equal(hi_p, hi_s)


def test_world_compound_pose_is_body_pose_after_local_pose():
    """Two equal spheres at (±1, 0, 0) in the compound frame (COM at the origin by symmetry); the body turned
    90° about z puts them at x ± (0, 1, 0): each box is centre ± r exactly (to rounding)."""
    r = 0.25
    world = World()
    c = np.array([1.0, 2.0, 3.0])
    world.add_body([(Sphere(r), (1, 0, 0), (1, 0, 0, 0)), (Sphere(r), (-1, 0, 0), (1, 0, 0, 0))], position=c,
                   orientation=(np.cos(np.pi / 4), 0, 0, np.sin(np.pi / 4)))
    world.add_body(Box(2.0, 4.0, 6.0), position=(0, 0, 0), orientation=(np.cos(np.pi / 4), np.sin(np.pi / 4), 0, 0))
    lo, hi = world_aabbs(world, 0.0, geom_aabbs_serial)
    np.testing.assert_allclose(lo[:2], [c + [0, 1, 0] - r, c - [0, 1, 0] - r], atol=1e-12)
    np.testing.assert_allclose(hi[:2], [c + [0, 1, 0] + r, c - [0, 1, 0] + r], atol=1e-12)
    # Box turned 90° about x: its y and z extents swap.
    np.testing.assert_allclose(lo[2], [-1.0, -3.0, -2.0], atol=1e-12)
    np.testing.assert_allclose(hi[2], [1.0, 3.0, 2.0], atol=1e-12)


@pytest.mark.parametrize("kernel", [geom_aabbs, geom_aabbs_serial])
def test_world_rows_contain_their_shapes(kernel):
    """Through the World's own arrays: each hull's vertices and each box's corners span exactly its row's box;
    the ground's box is the half-space z <= 0."""
    world = _mixed_world(25)
    lo, hi = world_aabbs(world, 0.0, kernel)
    geom, live = world.model.geom, world._live()
    for i in range(geom.count):
        t = GeomType(geom.live("geom_type")[i])
        if t == GeomType.PLANE:  # the ground z <= 0: bounded above only
            np.testing.assert_array_equal(lo[i], [-np.inf, -np.inf, -np.inf])
            np.testing.assert_array_equal(hi[i], [np.inf, np.inf, 0.0])
            continue
        if t == GeomType.CONVEX_HULL:
            s, n = geom.live("geom_vert_start")[i], geom.live("geom_vert_count")[i]
            pts = world.model.polytopes.arrays()["vertices"][s:s + n]
        elif t == GeomType.BOX:
            pts = np.array([[a, b, c] for a in (-1, 1) for b in (-1, 1) for c in (-1, 1)]) * geom.live("geom_size")[i]
        else:
            continue
        b = geom.live("geom_body")[i]
        w = to_world(pts, live["x"][b], live["q"][b], geom.live("geom_pos")[i], geom.live("geom_quat")[i])
        assert np.all(w >= lo[i] - 1e-12) and np.all(w <= hi[i] + 1e-12)
        np.testing.assert_allclose(w.min(axis=0), lo[i], atol=1e-12)
        np.testing.assert_allclose(w.max(axis=0), hi[i], atol=1e-12)
