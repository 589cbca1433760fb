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
        # Normals agree unless two axes tie within rounding (then either is right).
        if abs(np.sort(boxes.depth)[-1] - np.sort(hulls.depth)[-1]) < 1e-12:
            if not np.allclose(boxes.normal[0], hulls.normal[0], atol=1e-9):
                continue
        # Each box-path point is a general-path point (same set of ≤ 4 points, possibly in another order).
        for p in boxes.point:
            assert np.min(np.linalg.norm(hulls.point - p, axis=1)) < 1e-9
        assert len(set(boxes.feature.tolist())) == len(boxes)
    assert compared > 40
