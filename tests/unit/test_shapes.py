"""Shapes (``tumble.shapes``) and convex hulls (``tumble.polyhedron``): geometry, immutability and
rejected input (error type and the argument named in the message)."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from tumble import Box, Capsule, ConvexHull, Cylinder, Ellipsoid, Sphere
from tumble.conventions import GeomType
from tumble.polyhedron import hull as raw_hull
from tumble.polyhedron import volume_moments

# (constructor, argument names, good values)
SHAPES = [
    (Sphere, ("radius",), (0.5,)),
    (Box, ("lx", "ly", "lz"), (1.0, 2.0, 3.0)),
    (Capsule, ("radius", "length"), (0.2, 1.0)),
    (Cylinder, ("radius", "height"), (0.3, 0.8)),
    (Ellipsoid, ("a", "b", "c"), (0.1, 0.2, 0.3)),
]
CASES = [(cls, names, good, i) for cls, names, good in SHAPES for i in range(len(names))]
IDS = [f"{cls.__name__}-{names[i]}" for cls, names, _, i in CASES]


def with_value(good, i, value):
    args = list(good)
    args[i] = value
    return args


# ---------------------------------------------------------------------------------------------
# Primitive sizes.
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("bad", [0.0, -1.0, -1e-300, np.nan, np.inf, -np.inf])
@pytest.mark.parametrize(("cls", "names", "good", "i"), CASES, ids=IDS)
def test_non_positive_or_non_finite_size_raises_value_error(cls, names, good, i, bad):
    with pytest.raises(ValueError, match=rf"^{names[i]}\b"):
        cls(*with_value(good, i, bad))


@pytest.mark.parametrize("bad", ["1.0", None, [1.0], True])
@pytest.mark.parametrize(("cls", "names", "good", "i"), CASES, ids=IDS)
def test_non_number_size_raises_type_error(cls, names, good, i, bad):
    with pytest.raises(TypeError, match=rf"^{names[i]}\b"):
        cls(*with_value(good, i, bad))


@pytest.mark.parametrize(("cls", "names", "good"), SHAPES, ids=[s[0].__name__ for s in SHAPES])
def test_sizes_are_stored_as_float_and_frozen(cls, names, good):
    shape = cls(*[int(np.ceil(v)) for v in good])  # integers are accepted and stored as float
    for name in names:
        assert type(getattr(shape, name)) is float
    with pytest.raises(dataclasses.FrozenInstanceError):
        setattr(shape, names[0], 2.0)


def test_size_rows_and_geom_types():
    assert Sphere(0.5).size == (0.5, 0.0, 0.0)
    assert Sphere(0.5).geom_type == GeomType.SPHERE
    assert Box(1.0, 2.0, 3.0).size == (0.5, 1.0, 1.5)  # FULL side lengths in, half extents out
    np.testing.assert_array_equal(Box(1.0, 2.0, 3.0).half_extents, [0.5, 1.0, 1.5])
    assert Box(1.0, 2.0, 3.0).geom_type == GeomType.BOX
    assert Capsule(0.2, 1.0).size == (0.2, 0.5, 0.0)
    assert Capsule(0.2, 1.0).geom_type == GeomType.CAPSULE
    assert Cylinder(0.3, 0.8).size == (0.3, 0.4, 0.0)
    assert Cylinder(0.3, 0.8).geom_type == GeomType.CYLINDER
    assert Ellipsoid(0.1, 0.2, 0.3).size == (0.1, 0.2, 0.3)
    assert Ellipsoid(0.1, 0.2, 0.3).geom_type == GeomType.ELLIPSOID


def test_box_corners():
    c = Box(1.0, 2.0, 3.0).corners()
    assert c.shape == (8, 3)
    assert len({tuple(p) for p in c}) == 8
    np.testing.assert_array_equal(np.abs(c), np.tile([0.5, 1.0, 1.5], (8, 1)))
    np.testing.assert_array_equal(c.sum(axis=0), np.zeros(3))


# ---------------------------------------------------------------------------------------------
# Convex hull geometry.
# ---------------------------------------------------------------------------------------------


def test_hull_drops_interior_points_and_is_outward_wound():
    rng = np.random.default_rng(7)
    corners = Box(2.0, 1.0, 0.5).corners()
    interior = (rng.random((50, 3)) - 0.5) * [1.8, 0.8, 0.4]
    h = ConvexHull(np.vstack([interior, corners]))
    assert h.vertices.shape == (8, 3)
    assert h.triangles.shape == (12, 3)  # a box's 6 faces, 2 triangles each
    assert h.volume == pytest.approx(1.0, rel=1e-14)  # 2 × 1 × 0.5, exact up to rounding
    np.testing.assert_allclose(h.center, np.zeros(3), rtol=0, atol=1e-15)
    assert h.size == pytest.approx((1.0, 0.5, 0.25), rel=1e-15)
    assert h.geom_type == GeomType.CONVEX_HULL
    # Outward: every triangle's normal points away from the (interior) origin, the COM.
    a, b, c = (h.vertices[h.triangles[:, i]] for i in range(3))
    n = np.cross(b - a, c - a)
    assert np.all(np.einsum("ij,ij->i", n, a) > 0.0)


def test_hull_is_closed_two_manifold():
    rng = np.random.default_rng(11)
    h = ConvexHull(rng.normal(size=(60, 3)))
    edges = {}
    for t in h.triangles:
        for i in range(3):
            e = (int(t[i]), int(t[(i + 1) % 3]))
            edges[e] = edges.get(e, 0) + 1
    # Consistently wound closed surface: each directed edge once, and its reverse once.
    assert all(count == 1 for count in edges.values())
    assert all((b, a) in edges for a, b in edges)
    # Euler: V − E + F = 2.
    assert len(h.vertices) - len(edges) // 2 + len(h.triangles) == 2


def test_hull_center_is_tetrahedron_centroid_and_arrays_read_only():
    pts = np.array([[1.0, 2.0, 3.0], [3.0, 2.0, 3.0], [1.0, 5.0, 3.0], [1.0, 2.0, 7.0]])
    h = ConvexHull(pts)
    np.testing.assert_allclose(h.center, pts.mean(axis=0), rtol=0, atol=1e-14 * 8)  # O(4) coordinates
    assert h.volume == pytest.approx(2.0 * 3.0 * 4.0 / 6.0, rel=1e-14)  # |det| / 6
    np.testing.assert_allclose(np.sort(h.vertices + h.center, axis=0), np.sort(pts, axis=0), atol=1e-14 * 8)
    for arr in (h.vertices, h.triangles, h.center):
        with pytest.raises(ValueError):
            arr[0] = 0
    with pytest.raises(dataclasses.FrozenInstanceError):
        h.volume = 1.0


def test_volume_moments_of_unit_cube():
    v, t = raw_hull(Box(1.0, 1.0, 1.0).corners() + 0.5)  # the cube [0, 1]³
    volume, first, second = volume_moments(v, t)
    assert volume == pytest.approx(1.0, rel=1e-14)
    np.testing.assert_allclose(first, [0.5, 0.5, 0.5], rtol=1e-14)  # ∫x dV = 1/2
    # ∫x² dV = 1/3, ∫xy dV = 1/4 over [0, 1]³.
    np.testing.assert_allclose(second, np.full((3, 3), 0.25) + np.eye(3) / 12.0, rtol=1e-14)


# ---------------------------------------------------------------------------------------------
# Convex hull bad input.
# ---------------------------------------------------------------------------------------------

TETRA = [[0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]]


@pytest.mark.parametrize("n", [0, 1, 2, 3])
def test_hull_needs_four_points(n):
    pts = np.array(TETRA[:n]).reshape(n, 3)
    with pytest.raises(ValueError, match=r"^points\b"):
        ConvexHull(pts)


def test_hull_of_more_vertices_than_feature_ids_can_name_is_refused():
    """Every point of a sphere is a hull vertex: 2049 of them exceed MAX_HULL_VERTICES (2048), whose faces
    would overflow the feature-id fields; 2048 is accepted."""
    from tumble.collision.features import MAX_HULL_VERTICES

    def on_sphere(n):
        v = np.random.default_rng(5).normal(size=(n, 3))
        return v / np.linalg.norm(v, axis=1, keepdims=True)

    assert ConvexHull(on_sphere(MAX_HULL_VERTICES)).vertices.shape[0] == MAX_HULL_VERTICES
    with pytest.raises(ValueError, match=r"^points: the hull has 2049 vertices, more than the 2048"):
        ConvexHull(on_sphere(MAX_HULL_VERTICES + 1))


def test_a_large_point_set_is_refused_before_any_quadratic_work():
    """Issue 53 item 8: the hull-vertex refusal came after the thickness and merged-face checks, whose work grows
    as vertices × faces: 20,000 points on a sphere took 11 s to be refused (and for two nearly coplanar faces,
    not for their count), 1.3 M triangles > 600 s. Now the vertex count is checked as soon as qhull returns, and
    more than HULL_POINTS_MAX (200,000) points are refused before qhull runs."""
    import time

    from tumble._checks import HULL_POINTS_MAX

    v = np.random.default_rng(5).normal(size=(HULL_POINTS_MAX + 1, 3))
    v /= np.linalg.norm(v, axis=1, keepdims=True)
    start = time.perf_counter()
    with pytest.raises(ValueError, match=r"^points: the hull has 20000 vertices, more than the 2048"):
        ConvexHull(v[:20_000])
    assert time.perf_counter() - start < 3.0   # 0.08 s here (was 11 s)
    start = time.perf_counter()
    with pytest.raises(ValueError, match=r"^points hold 200001 points, more than the 200000 a convex hull"):
        ConvexHull(v)
    assert time.perf_counter() - start < 1.0   # counted first: 2 ms here


def _tilted_plane(n: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    uv = rng.random((n, 2))
    e1, e2 = np.array([1.0, 2.0, 0.5]), np.array([-0.3, 0.4, 1.0])
    return uv[:, :1] * e1 + uv[:, 1:] * e2 + [3.0, -1.0, 2.0]


@pytest.mark.parametrize(
    "points",
    [
        np.array([[0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [1.0, 1.0, 0.0], [0.3, 0.7, 0.0]]),
        _tilted_plane(20, 1),                                              # coplanar, not axis aligned
        _tilted_plane(20, 2) + 1e-13 * np.random.default_rng(3).normal(size=(20, 3)),  # flat to 1e-13
        np.outer(np.linspace(0.0, 1.0, 6), [1.0, -2.0, 0.5]),              # collinear
        np.ones((5, 3)),                                                   # one point repeated
    ],
    ids=["coplanar-z0", "coplanar-tilted", "nearly-flat", "collinear", "repeated"],
)
def test_degenerate_hull_raises_value_error_naming_points(points):
    with pytest.raises(ValueError, match=r"^points\b"):
        ConvexHull(points)


def test_hull_bad_array_input():
    with pytest.raises(ValueError, match=r"^points\b"):
        ConvexHull(np.zeros((5, 2)))  # wrong shape
    with pytest.raises(ValueError, match=r"^points\b"):
        ConvexHull([*TETRA, [np.nan, 0.0, 0.0]])
    with pytest.raises(TypeError, match=r"^points\b"):
        ConvexHull("points")
    with pytest.raises(TypeError, match=r"^points\b"):
        ConvexHull(None)
