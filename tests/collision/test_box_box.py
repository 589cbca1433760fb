"""The box–box path (15 closed-form axes) against the general separating-axis path on the same geometry.

A box and the convex hull of its 8 corners are the same solid, but the hull goes through the general polytope
test (face queries over vertices, pruned edge pairs, clipping against polygon side planes), which shares
with the box path only the clipping pass and the manifold reduction. On random poses the two must agree on
existence, the deepest depth, the normal and the contact points.
"""

import numpy as np
import pytest
from scipy.spatial.transform import Rotation

import tumble as tb

SIZES = [(1.0, 0.6, 0.4), (0.3, 0.3, 0.3), (2.0, 2.0, 0.2)]


def corners_hull(size):
    half = np.array(size) / 2
    signs = np.array([[sx, sy, sz] for sx in (-1, 1) for sy in (-1, 1) for sz in (-1, 1)], dtype=float)
    return tb.ConvexHull(signs * half)


def two_body_contacts(shape_a, shape_b, pose_a, pose_b):
    world = tb.World(gravity=(0, 0, 0))
    world.add_body(shape_a, position=pose_a[0], orientation=pose_a[1])
    world.add_body(shape_b, position=pose_b[0], orientation=pose_b[1])
    return world.contacts()


def random_pose(rng, spread):
    return rng.uniform(-spread, spread, 3), Rotation.random(random_state=rng).as_quat()[[3, 0, 1, 2]]


@pytest.mark.parametrize("sizes", [(SIZES[0], SIZES[1]), (SIZES[0], SIZES[0]), (SIZES[2], SIZES[1])])
def test_box_path_matches_general_polytope_path(sizes):
    rng = np.random.default_rng(11)
    compared = 0
    for _ in range(150):
        pa, pb = random_pose(rng, 0.1), random_pose(rng, 0.7)
        boxes = two_body_contacts(tb.Box(*sizes[0]), tb.Box(*sizes[1]), pa, pb)
        hulls = two_body_contacts(corners_hull(sizes[0]), corners_hull(sizes[1]), pa, pb)
        assert len(boxes) == len(hulls)
        if len(boxes) == 0:
            continue
        compared += 1
        # Depths are the same separating-axis overlaps computed by different formulas: rounding only (1e-12 m).
        np.testing.assert_allclose(boxes.depth.max(), hulls.depth.max(), atol=1e-12)
        # The same axis rule picks the same normal (random poses give no exact ties between axes).
        np.testing.assert_allclose(boxes.normal[np.argmax(boxes.depth)], hulls.normal[np.argmax(hulls.depth)],
                                   atol=1e-9)
        # Each box-path point is a general-path point (same set of ≤ 4 points, possibly in another order),
        # and no two points of a manifold coincide.
        for p in boxes.point:
            assert np.min(np.linalg.norm(hulls.point - p, axis=1)) < 1e-9
        gaps = np.linalg.norm(boxes.point[:, None] - boxes.point[None], axis=2) + np.eye(len(boxes))
        assert gaps.min() > 1e-9
        assert len(set(boxes.feature.tolist())) == len(boxes)
    assert compared > 40


@pytest.mark.parametrize("make", [tb.Box, lambda *size: corners_hull(size)], ids=["box", "hull"])
def test_a_corner_on_a_side_plane_is_one_contact(make):
    """A cube turned 45° about z over a cube's corner: the turned cube's incident face corners fall on the
    reference face's side planes up to rounding. Clipping must not keep such a corner and also add a crossing
    at the same spot (a contact counted twice): the overlap is a triangle, so 3 distinct contacts."""
    turned = Rotation.from_euler("z", 45, degrees=True).as_quat()[[3, 0, 1, 2]]
    contacts = two_body_contacts(make(1.0, 1.0, 1.0), make(1.0, 1.0, 1.0), (np.zeros(3), np.array([1.0, 0, 0, 0])),
                                 (np.array([0.5, 0.5, 0.997]), turned))
    gaps = np.linalg.norm(contacts.point[:, None] - contacts.point[None], axis=2) + np.eye(len(contacts))
    assert gaps.min() > 1e-6
    assert len(contacts) == 3


def jittered_column_grid(shape, n=12, layers=5, seed=4):
    """n × n columns of ``layers`` shapes each, touching and slightly turned: thousands of touching pairs.
    ``shape``: one shape, or a list whose shapes take turns."""
    rng = np.random.default_rng(seed)
    shapes = shape if isinstance(shape, list) else [shape]
    world = tb.World(gravity=(0, 0, 0))
    world.add_ground()
    for i in range(n):
        for j in range(n):
            for k in range(layers):
                turn = Rotation.from_rotvec(rng.normal(size=3) * 0.02).as_quat()[[3, 0, 1, 2]]
                world.add_body(shapes[(i + 2 * j + 3 * k) % len(shapes)], orientation=turn,
                               position=(0.5 * i + rng.uniform(-0.01, 0.01), 0.5 * j + rng.uniform(-0.01, 0.01),
                                         0.2 + 0.399 * k))
    return world


MIXED = [tb.Box(0.5, 0.5, 0.4), tb.Sphere(0.2), tb.Capsule(0.2, 0.1), tb.Cylinder(0.25, 0.4),
         tb.Ellipsoid(0.25, 0.22, 0.2), corners_hull((0.5, 0.5, 0.4))]


@pytest.mark.parametrize("shape", [tb.Box(0.5, 0.5, 0.4), corners_hull((0.5, 0.5, 0.4)), MIXED],
                         ids=["box", "hull", "every shape (all four pair families)"])
def test_parallel_narrowphase_is_bitwise_the_serial_one(shape):
    """Above PARALLEL_MIN_PAIRS the narrowphase splits the pairs among threads; each pair writes only its own
    slots, so every thread count must give the same contacts, bit for bit, in the same order. With every
    shape, each family's serial kernel is checked against its parallel driver."""
    numba = pytest.importorskip("numba")
    from tumble.conventions import PARALLEL_MIN_PAIRS

    if numba.config.NUMBA_NUM_THREADS < 2:
        pytest.skip("Numba has a single thread here")
    before = numba.get_num_threads()
    results = []
    try:
        for threads in (1, 2):
            numba.set_num_threads(threads)
            world = jittered_column_grid(shape)
            results.append((world.contacts(), world.contacts(), world.collision_stats["pairs"]))
    finally:
        numba.set_num_threads(before)
    (first1, again1, pairs), (first2, again2, _) = results
    assert pairs >= 2 * PARALLEL_MIN_PAIRS
    for a, b in ((first1, first2), (again1, again2)):  # again: with the cached witnesses
        assert len(a) > 2 * PARALLEL_MIN_PAIRS
        for name in ("body_a", "body_b", "point", "normal", "depth", "kind", "feature"):
            np.testing.assert_array_equal(getattr(a, name), getattr(b, name))
