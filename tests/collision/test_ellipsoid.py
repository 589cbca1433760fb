"""Ellipsoid contacts: the plane closed form, and GJK/EPA against every shape checked by support functions.

For convex A and B, the signed penetration along a unit direction m is
overlap(m) = h_B(m) + h_A(−m) (h: support function), and the penetration depth (or minus the distance) is
min over m of overlap(m). The reference below evaluates closed-form support functions in NumPy, independent
of tumble's kernels: the reported normal must achieve the reported depth, and no sampled direction may do
better.
"""

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from pair_worlds import pair_world, rotation, world_vertices
from scipy.optimize import minimize
from scipy.spatial.transform import Rotation

import tumble as tb

SETTINGS = settings(max_examples=40, deadline=None)  # deadline=None: the first calls compile (Numba)
unit_quats = st.integers(0, 2**32 - 1).map(lambda s: Rotation.random(random_state=s).as_quat()[[3, 0, 1, 2]])
offsets = st.tuples(*[st.floats(-0.7, 0.7)] * 3)
ELLIPSOIDS = [tb.Ellipsoid(0.3, 0.2, 0.1), tb.Ellipsoid(0.25, 0.25, 0.4)]
OTHERS = [tb.Sphere(0.2), tb.Capsule(0.1, 0.4), tb.Box(0.5, 0.3, 0.4), tb.Cylinder(0.2, 0.3),
          tb.ConvexHull(np.random.default_rng(3).normal(size=(14, 3)) * 0.3), tb.Ellipsoid(0.2, 0.15, 0.3)]
DIRECTIONS = Rotation.random(4000, random_state=7).apply([0.0, 0.0, 1.0])


def support_values(shape, pos, quat, dirs):
    """h(m) = max over the shape of m · x for each unit row m of dirs, from closed forms."""
    R = rotation(quat)
    centre = dirs @ pos
    if isinstance(shape, tb.Sphere):
        return centre + shape.radius
    if isinstance(shape, tb.Capsule):
        axis = R[:, 2] * shape.length / 2
        return centre + np.abs(dirs @ axis) + shape.radius
    if isinstance(shape, tb.Ellipsoid):
        local = dirs @ R * np.array(shape.size)  # S Rᵀ m
        return centre + np.linalg.norm(local, axis=1)
    return np.max(dirs @ world_vertices(shape, pos, quat).T, axis=1)


def bounding_radius(shape, pos, quat):
    """Largest distance from the shape's centre to its surface [m]."""
    if isinstance(shape, tb.Sphere):
        return shape.radius
    if isinstance(shape, tb.Capsule):
        return shape.radius + shape.length / 2
    if isinstance(shape, tb.Ellipsoid):
        return max(shape.size)
    return np.linalg.norm(world_vertices(shape, pos, quat) - pos, axis=1).max()


def overlap(a, pa, qa, b, pb, qb, dirs):
    """Signed penetration of A and B along each direction m pointing from B toward A."""
    return support_values(b, pb, qb, dirs) + support_values(a, pa, qa, -dirs)


@SETTINGS
@given(ell=st.sampled_from(ELLIPSOIDS), other=st.sampled_from(OTHERS), qa=unit_quats, qb=unit_quats, d=offsets,
       reverse=st.booleans())
def test_depth_and_normal_are_the_minimum_translation(ell, other, qa, qb, d, reverse):
    pa, pb = np.zeros(3), np.array(d)
    world = pair_world(ell, pa, qa, other, pb, qb, reverse=reverse)
    contacts = world.contacts()
    sampled = overlap(ell, pa, qa, other, pb, qb, DIRECTIONS).min()  # ≥ the true depth (a min over fewer m)
    if not len(contacts):
        # No contact: the true depth (the minimum of overlap over all directions) must lie below −margin.
        # Refine the best sampled direction by Nelder–Mead; it can stall on a polytope's kinks, hence 1 mm.
        m0 = DIRECTIONS[np.argmin(overlap(ell, pa, qa, other, pb, qb, DIRECTIONS))]
        refined = minimize(lambda m: overlap(ell, pa, qa, other, pb, qb, (m / np.linalg.norm(m))[None])[0], m0,
                           method="Nelder-Mead", options={"xatol": 1e-10, "fatol": 1e-12}).fun
        assert min(refined, sampled) < -world.contact_margin + 1e-3
        return
    assert len(contacts) == 1 and contacts.kind[0] == "ellipsoid"
    ell_body = 1 if reverse else 0
    n = contacts.normal[0] * (1.0 if contacts.body_a[0] == ell_body else -1.0)  # toward the ellipsoid
    depth = contacts.depth[0]
    assert depth >= -world.contact_margin - 1e-12
    # The normal achieves the depth (EPA stops within 1e-9 m; GJK's closest points are exact to ~1e-12).
    assert overlap(ell, pa, qa, other, pb, qb, n[None])[0] == pytest.approx(depth, abs=2e-9)
    # ... and no sampled direction is shallower (the depth is the minimum over all directions). EPA's known
    # limit (gjk.epa_penetration): nearly concentric curved shapes exhaust its capacity and return an upper
    # bound within ~2e-4 × (sum of sizes); allow 5e-4 × that sum there.
    reach = bounding_radius(ell, pa, qa) + bounding_radius(other, pb, qb)
    concentric = np.linalg.norm(pb - pa) < 0.35 * reach
    assert sampled >= depth - (5e-4 * reach if concentric else 2e-9)
    # The point lies midway between the two surfaces along n: its offsets to the two supports are equal.
    gap_a = support_values(ell, pa, qa, -n[None])[0] + contacts.point[0] @ n
    gap_b = support_values(other, pb, qb, n[None])[0] - contacts.point[0] @ n
    assert gap_a == pytest.approx(gap_b, abs=2e-9)


@SETTINGS
@given(ell=st.sampled_from(ELLIPSOIDS), other=st.sampled_from(OTHERS), qa=unit_quats, qb=unit_quats, d=offsets)
def test_swapping_the_bodies_flips_the_normal(ell, other, qa, qb, d):
    assume(np.linalg.norm(d) > 1e-2)
    c1 = pair_world(ell, np.zeros(3), qa, other, np.array(d), qb).contacts()
    c2 = pair_world(ell, np.zeros(3), qa, other, np.array(d), qb, reverse=True).contacts()
    assert len(c1) == len(c2)
    if len(c1):
        # both orders reach the same minimum translation, to EPA's tolerance (2e-4 m where the centres are
        # close enough for EPA's capacity limit to bind, see the test above)
        assert c1.depth[0] == pytest.approx(c2.depth[0], abs=2e-9 if np.linalg.norm(d) > 0.3 else 2e-4)
        np.testing.assert_allclose(c1.normal[0], -c2.normal[0], atol=1e-4)


@pytest.mark.parametrize("turn", [0.0, 0.4, 1.3])
def test_ellipsoid_on_the_ground_touches_at_its_lowest_point(turn):
    a, b, c = 0.3, 0.2, 0.1
    q = Rotation.from_euler("xy", [turn, 0.5 * turn]).as_quat()[[3, 0, 1, 2]]
    R = rotation(q)
    reach = np.sqrt(np.sum((R[2] * np.array([a, b, c])) ** 2))  # support of the ellipsoid along −z
    world = tb.World()
    world.add_ground()
    world.add_body(tb.Ellipsoid(a, b, c), position=(0.1, -0.2, reach - 0.003), orientation=q)
    contacts = world.contacts()
    assert len(contacts) == 1
    assert contacts.depth[0] == pytest.approx(0.003, abs=1e-14)
    np.testing.assert_allclose(contacts.normal[0], (0, 0, 1), atol=1e-15)
    # the lowest point: centre − R S² Rᵀ z / |S Rᵀ z|, lifted halfway to the plane
    m = R.T @ np.array([0.0, 0.0, 1.0]) * np.array([a, b, c])
    lowest = np.array([0.1, -0.2, reach - 0.003]) - R @ (np.array([a, b, c]) * m) / np.linalg.norm(m)
    np.testing.assert_allclose(contacts.point[0], lowest + (0, 0, 0.0015), atol=1e-14)


def test_round_ellipsoid_matches_the_sphere_closed_forms():
    # An ellipsoid with equal semi-axes is a sphere: against a box face and another sphere the depths must be
    # the sphere closed forms' (EPA: within its 1e-9 m tolerance).
    for other, pos in [(tb.Box(1.0, 1.0, 1.0), (0.2, 0.1, 0.72)), (tb.Sphere(0.2), (0.1, 0.2, 0.3))]:
        depths = []
        for shape in (tb.Ellipsoid(0.25, 0.25, 0.25), tb.Sphere(0.25)):
            c = pair_world(shape, np.array(pos), (1, 0, 0, 0), other, np.zeros(3), (1, 0, 0, 0)).contacts()
            depths.append(c.depth[0])
        assert depths[0] == pytest.approx(depths[1], abs=1e-9)


def test_no_pair_of_shapes_is_unsupported():
    shapes = [tb.Sphere(0.2), tb.Box(0.3, 0.3, 0.3), tb.Capsule(0.1, 0.3), tb.Cylinder(0.2, 0.3),
              tb.Ellipsoid(0.2, 0.15, 0.1), tb.ConvexHull(np.random.default_rng(1).normal(size=(10, 3)) * 0.2)]
    world = tb.World(gravity=(0, 0, 0))
    world.add_ground()
    for k, shape in enumerate(shapes):  # all within reach of each other and of the ground
        world.add_body(shape, position=(0.05 * k, 0.03 * k, 0.1))
    contacts = world.contacts()
    assert world.collision_stats["unsupported_pairs"] == 0
    assert world.collision_stats["pairs"] == len(shapes) * (len(shapes) + 1) // 2
    assert np.all(np.isfinite(contacts.depth)) and np.all(np.isfinite(contacts.normal))
