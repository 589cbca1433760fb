"""Narrowphase against closed forms, a brute-force reference and Baraff II's configurations."""

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from pair_worlds import pair_world, rotation, world_vertices
from scipy.spatial.transform import Rotation

import tumble as tb
from tumble.collision.polytope import polytope_of

SETTINGS = settings(max_examples=60, deadline=None)  # deadline=None: the first calls compile (Numba)
unit_quats = st.integers(0, 2**32 - 1).map(lambda s: Rotation.random(random_state=s).as_quat()[[3, 0, 1, 2]])
offsets = st.tuples(*[st.floats(-0.8, 0.8)] * 3)
POLY_SHAPES = [tb.Box(1.0, 0.6, 0.4), tb.Box(0.3, 0.3, 0.3),
               tb.ConvexHull(np.random.default_rng(3).normal(size=(14, 3)) * 0.4), tb.Cylinder(0.3, 0.5)]




def brute_separation(va, fa_normals, vb, fb_normals, ea, eb):
    """Greatest separation over ALL candidate axes (no pruning): faces of both, every edge pair."""
    axes = [n for n in fa_normals] + [n for n in fb_normals]
    for da in ea:
        for db in eb:
            c = np.cross(da, db)
            if np.linalg.norm(c) > 1e-9:
                axes.append(c / np.linalg.norm(c))
    best = -np.inf
    for n in axes:
        s = max(va @ n) - min(vb @ n)  # overlap of projections along n, sign-free
        s2 = max(vb @ n) - min(va @ n)
        best = max(best, -min(s, s2))
    return best


def polytope_world(shape, pos, quat):
    v, R = world_vertices(shape, pos, quat), rotation(quat)
    p = polytope_of(shape)
    edges = [v[b] - v[a] for a, b in p.edges]
    return v, p.face_normal @ R.T, edges


@SETTINGS
@given(a=st.sampled_from(POLY_SHAPES), b=st.sampled_from(POLY_SHAPES), qa=unit_quats, qb=unit_quats, d=offsets)
def test_polytope_depth_matches_brute_force_and_moving_by_depth_separates(a, b, qa, qb, d):
    pa, pb = np.zeros(3), np.array(d)
    world = pair_world(a, pa, qa, b, pb, qb)
    contacts = world.contacts()
    va, na, ea = polytope_world(a, pa, qa)
    vb, nb, eb = polytope_world(b, pb, qb)
    sep = brute_separation(va, na, vb, nb, ea, eb)
    if sep > world.contact_margin + 1e-9:
        assert len(contacts) == 0
        return
    if sep < -1e-9:
        assert len(contacts) > 0
    if len(contacts) == 0:
        return
    assert np.all(np.isfinite(contacts.point)) and np.all(np.isfinite(contacts.normal))
    np.testing.assert_allclose(np.linalg.norm(contacts.normal, axis=1), 1.0, rtol=1e-12)
    # SAT's reported depth is the penetration along its axis: the deepest point is −sep, up to the face
    # preference (a face axis is used unless an edge axis beats it by sat.face_preference, 1e-3 × the smaller
    # bounding radius: below 1 mm for these shapes, all within 1 m of their centres).
    assert contacts.depth.max() == pytest.approx(-sep, abs=1.1e-3)
    # Moving A (body 0) along the normal by the depth (plus 1e-6 m) separates the pair.
    n = contacts.normal[0] if contacts.body_a[0] == 0 else -contacts.normal[0]
    shift = (contacts.depth.max() + 1e-6) * n
    va2 = va + shift
    assert brute_separation(va2, na, vb, nb, ea, eb) > 0.0


@pytest.mark.parametrize("d", [(-0.5, 0.75, 0.5), (-0.5, 0.5, 0.625)])
def test_deep_overlap_where_clipping_is_empty_still_reports_sat_depth(d):
    # Found by hypothesis: two copies of one hull, equally turned, overlapping by ~0.55 m. The best axis is a
    # face, but its incident face lies outside the reference face's prism, so clipping leaves nothing; the
    # deepest incident vertex must then carry the contact, at SAT's depth (rounding only).
    hull = POLY_SHAPES[2]
    q = np.array([-0.39633345, -0.42014651, 0.0472977, -0.8149599])
    q /= np.linalg.norm(q)
    contacts = pair_world(hull, np.zeros(3), q, hull, np.array(d), q).contacts()
    va, na, ea = polytope_world(hull, np.zeros(3), q)
    vb, nb, eb = polytope_world(hull, np.array(d), q)
    assert len(contacts) >= 1
    assert contacts.depth.max() == pytest.approx(-brute_separation(va, na, vb, nb, ea, eb), abs=1.1e-3)


@SETTINGS
@given(a=st.sampled_from(POLY_SHAPES + [tb.Sphere(0.3), tb.Capsule(0.2, 0.5)]),
       b=st.sampled_from(POLY_SHAPES + [tb.Sphere(0.25), tb.Capsule(0.15, 0.4)]),
       qa=unit_quats, qb=unit_quats, d=offsets)
def test_swapping_a_and_b_flips_normal_keeps_points_and_depth(a, b, qa, qb, d):
    # Degenerate ties leave the normal undefined (only the depth is): equal orientations can make distinct
    # axes tie exactly, and concentric centrally symmetric shapes overlap equally along n and −n.
    assume(not np.allclose(np.abs(qa @ qb), 1.0))
    assume(np.linalg.norm(d) > 1e-3)
    pb = np.array(d)
    c1 = pair_world(a, np.zeros(3), qa, b, pb, qb).contacts()
    c2 = pair_world(a, np.zeros(3), qa, b, pb, qb, reverse=True).contacts()
    assert len(c1) == len(c2)
    if not len(c1):
        return
    # World 2 holds the same shapes in reverse order (its body i is world 1's body 1 − i): the shape
    # that is A in world 2 is B in world 1.
    np.testing.assert_array_equal(1 - c2.body_a, c1.body_b)
    # Same contact set up to order; near-ties between A's and B's faces may pick the other reference face,
    # so compare the deepest depth (1e-9: rounding) and the normal direction.
    assert c1.depth.max() == pytest.approx(c2.depth.max(), abs=1e-9)
    np.testing.assert_allclose(c1.normal[np.argmax(c1.depth)], -c2.normal[np.argmax(c2.depth)], atol=1e-9)


def test_sphere_pairs_closed_forms():
    world = tb.World(gravity=(0, 0, 0))
    world.add_body(tb.Sphere(0.5), position=(0, 0, 0))
    world.add_body(tb.Sphere(0.3), position=(0.7, 0, 0))
    world.add_body(tb.Box(1, 1, 1), position=(0, 0, -0.95))
    c = world.contacts()
    by_pair = {(int(a), int(b)): k for k, (a, b) in enumerate(zip(c.body_a, c.body_b, strict=True))}
    k = by_pair[(0, 1)]  # spheres: depth 0.5 + 0.3 − 0.7, normal from 1 to 0 (−x), point midway
    assert c.depth[k] == pytest.approx(0.1)
    np.testing.assert_allclose(c.normal[k], (-1, 0, 0), atol=1e-15)
    np.testing.assert_allclose(c.point[k], (0.45, 0, 0), atol=1e-15)
    k = by_pair[(0, 2)]  # sphere on box top (z = −0.45): depth 0.05, normal +z
    assert c.depth[k] == pytest.approx(0.05)
    np.testing.assert_allclose(c.normal[k], (0, 0, 1), atol=1e-15)


def test_capsule_lying_on_ground_gives_two_contacts():
    world = tb.World()
    world.add_ground()
    lying = (np.cos(np.pi / 4), 0, np.sin(np.pi / 4), 0)  # body z turned onto world x
    world.add_body(tb.Capsule(0.1, 1.0), position=(0, 0, 0.098), orientation=lying)
    c = world.contacts()
    assert len(c) == 2
    np.testing.assert_allclose(c.depth, 0.002, atol=1e-12)
    np.testing.assert_allclose(sorted(c.point[:, 0]), (-0.5, 0.5), atol=1e-12)


def test_capsules_crossing_and_parallel():
    world = tb.World(gravity=(0, 0, 0))
    world.add_body(tb.Capsule(0.1, 1.0), orientation=(np.cos(np.pi / 4), 0, np.sin(np.pi / 4), 0))   # along x
    world.add_body(tb.Capsule(0.1, 1.0), position=(0, 0, 0.15),
                   orientation=(np.cos(np.pi / 4), np.sin(np.pi / 4), 0, 0))                            # along y
    c = world.contacts()
    assert len(c) == 1 and c.depth[0] == pytest.approx(0.05)
    world = tb.World(gravity=(0, 0, 0))
    for z in (0.0, 0.19):
        world.add_body(tb.Capsule(0.1, 1.0), position=(0.3 * z / 0.19, 0, z),
                       orientation=(np.cos(np.pi / 4), 0, np.sin(np.pi / 4), 0))
    c = world.contacts()
    assert len(c) == 2  # parallel: the two ends of the overlap [−0.2, 0.5] of the segments
    np.testing.assert_allclose(sorted(c.point[:, 0]), (-0.2, 0.5), atol=1e-12)
    np.testing.assert_allclose(c.depth, 0.01, atol=1e-12)


def test_cube_resting_flat_on_ground():
    world = tb.World()
    world.add_ground()
    world.add_body(tb.Box(1, 1, 1), position=(0, 0, 0.5))
    c = world.contacts()
    assert len(c) == 4
    np.testing.assert_allclose(c.normal, np.tile((0, 0, 1), (4, 1)), atol=1e-15)
    np.testing.assert_allclose(c.depth, 0.0, atol=1e-15)
    assert set(c.kind) == {"vertex-face"}


def test_cube_over_a_table_edge_gives_two_vertex_face_and_two_edge_edge():
    # Baraff II 8, figure: a cube hanging over the edge of a table (a fixed box).
    world = tb.World(gravity=(0, 0, 0))
    world.add_body(tb.Box(2, 2, 1), position=(0, 0, 0.5), fixed=True)
    world.add_body(tb.Box(1, 1, 1), position=(0.9, 0, 1.5))
    c = world.contacts()
    assert sorted(c.kind) == ["edge-edge", "edge-edge", "vertex-face", "vertex-face"]
    np.testing.assert_allclose(c.normal, np.tile((0, 0, 1), (4, 1)), atol=1e-15)
    edge_points = c.point[c.kind == "edge-edge"]
    np.testing.assert_allclose(edge_points[:, 0], 1.0, atol=1e-15)  # on the table's edge x = 1


def test_coincident_faces_give_a_four_point_face_contact():
    # Baraff II footnote 6: two equal cubes with exactly coincident faces.
    world = tb.World(gravity=(0, 0, 0))
    world.add_body(tb.Box(1, 1, 1))
    world.add_body(tb.Box(1, 1, 1), position=(0, 0, 1))
    c = world.contacts()
    assert len(c) == 4
    np.testing.assert_allclose(np.abs(c.point[:, :2]), 0.5, atol=1e-15)
    np.testing.assert_allclose(c.point[:, 2], 0.5, atol=1e-15)


@pytest.mark.parametrize("floor", ["ground", "box"])
def test_feature_ids_stable_while_sliding(floor):
    world = tb.World(gravity=(0, 0, 0))
    if floor == "ground":
        world.add_ground()
    else:
        world.add_body(tb.Box(20, 20, 1), position=(0, 0, -0.5), fixed=True)
    box = world.add_body(tb.Box(0.4, 0.3, 0.2), position=(0, 0, 0.0995), orientation=(np.cos(0.2), 0, 0, np.sin(0.2)))
    first = None
    for _ in range(100):
        box.position = box.position + (0.003, 0.001, 0)
        c = world.contacts()
        ids = sorted(c.feature.tolist())
        assert len(ids) == 4
        first = first or ids
        assert ids == first


def test_witness_decides_most_tests_in_a_coherent_scene():
    # 300 randomly turned boxes (0.2 m, diagonal 0.35 m) on a lattice of spacing 0.32 m: neighbours' AABBs
    # overlap but few boxes touch; each moves a little every step. The cached separating axis must settle
    # > 90% of all polytope tests, and nearly all tests of pairs that are apart (measured 99.4%); a pair
    # in contact always needs the full test.
    rng = np.random.default_rng(7)
    world = tb.World(gravity=(0, 0, 0))
    for i in range(300):
        world.add_body(tb.Box(0.2, 0.2, 0.2), position=np.array([i % 10, i // 10 % 10, i // 100]) * 0.32,
                       orientation=rng.normal(size=4))
    world.contacts()
    decided = tested = touching = 0
    for _ in range(20):
        for b in world.bodies:
            b.position = b.position + rng.normal(size=3) * 1e-4
        c = world.contacts()
        s = world.collision_stats
        decided += s["witness_decided"]
        tested += s["polytope_tests"]
        touching += len(set(zip(c.geom_a.tolist(), c.geom_b.tolist(), strict=True)))
    assert tested > 20 * 100
    assert decided / tested > 0.9
    assert decided / (tested - touching) > 0.98


def test_ground_contacts_never_nan_for_many_random_drops():
    rng = np.random.default_rng(11)
    world = tb.World()
    world.add_ground()
    shapes = POLY_SHAPES + [tb.Sphere(0.2), tb.Capsule(0.1, 0.3)]
    for k in range(40):
        world.add_body(shapes[k % len(shapes)], position=(k, 0, rng.uniform(0.0, 0.3)), orientation=rng.normal(size=4))
    c = world.contacts()
    assert len(c) > 20
    assert np.all(np.isfinite(c.point)) and np.all(np.isfinite(c.depth))
    np.testing.assert_allclose(c.normal, np.tile((0, 0, 1), (len(c), 1)), atol=1e-12)


def test_families_present_follow_the_shapes_that_can_pair():
    """A scene runs (and compiles) only the narrowphase families its geometries can form: fixed walls never
    pair with each other, a type pairs with itself only when two geometries have it."""
    from tumble.collision import narrowphase as nph

    S, B, C, E, P = (int(t) for t in (tb.Sphere.geom_type, tb.Box.geom_type, tb.Capsule.geom_type,
                                      tb.Ellipsoid.geom_type, tb.conventions.GeomType.PLANE))
    spheres_in_a_pen = nph.families_present([S, S, S, B, B, P], [True, True, True, False, False, False])
    assert spheres_in_a_pen == (nph.FAMILY_CLOSED_FORM,)
    assert nph.families_present([B, B, P], [True, True, False]) == (nph.FAMILY_BOXES,)
    assert nph.families_present([B, P], [True, False]) == (nph.FAMILY_BOXES,)  # box–ground only
    assert nph.families_present([S, B], [True, False]) == (nph.FAMILY_CLOSED_FORM,)  # one box: no box pair
    H = int(tb.ConvexHull.geom_type)
    assert nph.families_present([C, B, E, H, P], [True, True, True, True, False]) == tuple(range(nph.FAMILY_COUNT))


def test_a_box_pair_box_box_cannot_settle_goes_to_the_general_test():
    """Two boxes 2 mm apart with a vertex facing an edge: the face axis understates their distance, box_box
    defers the pair (narrowphase.FAMILY_BOXES) and the general separating-axis test with GJK measures it. The
    contact must be the one the same two shapes give as convex hulls (which take the general test directly):
    same point, normal and depth to rounding (1e-12 m; the two paths transform the same vertices)."""
    from tumble.collision import narrowphase as nph

    position = (0.10983612, 0.32644677, 0.03461747)
    orientation = (-0.23714915, -0.63064687, 0.23198631, 0.70158903)
    corners = lambda lx, ly, lz: np.array([(sx * lx, sy * ly, sz * lz) for sx in (-0.5, 0.5)  # noqa: E731
                                           for sy in (-0.5, 0.5) for sz in (-0.5, 0.5)])
    results = []
    for shapes in ((tb.Box(0.4, 0.3, 0.2), tb.Box(0.3, 0.2, 0.25)),
                   (tb.ConvexHull(corners(0.4, 0.3, 0.2)), tb.ConvexHull(corners(0.3, 0.2, 0.25)))):
        world = tb.World(gravity=(0, 0, 0))
        world.add_body(shapes[0])
        world.add_body(shapes[1], position=position, orientation=orientation)
        results.append((world.contacts(), world.collision_stats))
    (boxes, box_stats), (hulls, _) = results
    assert box_stats["deferred_box_pairs"] == 1
    assert len(boxes) == len(hulls) == 1
    assert -0.005 < boxes.depth[0] < 0.0          # apart, within the 5 mm margin
    np.testing.assert_allclose(boxes.depth, hulls.depth, atol=1e-12)
    np.testing.assert_allclose(boxes.point, hulls.point, atol=1e-12)
    np.testing.assert_allclose(boxes.normal, hulls.normal, atol=1e-12)
    moving = [True, True]
    assert nph.families_present([int(tb.Box.geom_type)] * 2, moving) == (nph.FAMILY_BOXES,)
