"""Shared helpers of the collision tests: two-body worlds and world-frame polytope vertices."""

import numpy as np
from scipy.spatial.transform import Rotation

import tumble as tb
from tumble.collision.polytope import polytope_of


def rotation(quat) -> np.ndarray:
    """3×3 rotation of a scalar-first unit quaternion."""
    return Rotation.from_quat(np.asarray(quat)[[1, 2, 3, 0]]).as_matrix()


def world_vertices(shape, pos, quat) -> np.ndarray:
    """(n, 3) world vertices of a polytope shape (box, hull, cylinder prism) at pose (pos, quat)."""
    return polytope_of(shape).vertices @ rotation(quat).T + pos


def pair_world(shape_a, pos_a, quat_a, shape_b, pos_b, quat_b, *, reverse=False):
    """A gravity-free world holding A then B as bodies 0 and 1 (B then A when ``reverse``)."""
    world = tb.World(gravity=(0, 0, 0))
    specs = [(shape_a, pos_a, quat_a), (shape_b, pos_b, quat_b)]
    for shape, pos, quat in (specs[::-1] if reverse else specs):
        world.add_body(shape, position=pos, orientation=quat)
    return world
