"""World.ray_cast against references that do not share its formulas.

The reference for a shape is its signed distance function f (exact for sphere, box, capsule, cylinder, the
plane and a hull's max over face planes; for the ellipsoid min(s) (|p/s| − 1), which has the same zero set and
is 1-Lipschitz too). Along a ray f is sampled every H metres: f(o) < 0 means the ray starts inside (expected:
distance 0, the origin, −d); a first negative sample brackets the entry, refined by Brent's method to ~1e-15 m;
a least sample above H is a certain miss (f is 1-Lipschitz, so between samples it cannot dip by more than H/2).
Rays in between (grazing the surface within H) are ambiguous and skipped, as are rays that enter at a slant
|n · d| < 1e-3, where the root is ill-conditioned (the entry moves by δf / |n · d|); both are few, and counted.

Tolerance 1e-9 (m for distance and point, unit normal's components): the closed forms lose only a few ulps of
the coordinates (≈1e-15 m at metre scale) divided by |n · d| ≥ 1e-3, so ≈1e-12; 1e-9 leaves room and still
catches any wrong root, face or sign (they err by ≥ 1e-3 here).
"""

import numpy as np
import pytest
from scipy.optimize import brentq

import tumble as tb
from tumble.rotations import quat_to_matrix

H = 2e-3
TOL = 1e-9
RAYS = 500


def _random_pose(rng):
    q = rng.normal(size=4)
    return rng.uniform(-2, 2, size=3), q / np.linalg.norm(q)


def _sdf_and_normal(shape):
    """(f(p), outward normal at a surface point p), p (k, 3) in the shape frame."""
    if isinstance(shape, tb.Sphere):
        return (lambda p: np.linalg.norm(p, axis=-1) - shape.radius,
                lambda p: p / np.linalg.norm(p))
    if isinstance(shape, tb.Box):
        h = shape.half_extents

        def box(p):
            q = np.abs(p) - h
            return np.linalg.norm(np.maximum(q, 0), axis=-1) + np.minimum(q.max(axis=-1), 0)

        def box_normal(p):
            k = int(np.argmax(np.abs(p) - h))
            n = np.zeros(3)
            n[k] = np.sign(p[k])
            return n
        return box, box_normal
    if isinstance(shape, tb.Capsule):
        half = shape.length / 2

        def capsule_axis(p):
            return np.stack([0 * p[..., 0], 0 * p[..., 0], np.clip(p[..., 2], -half, half)], axis=-1)
        return (lambda p: np.linalg.norm(p - capsule_axis(p), axis=-1) - shape.radius,
                lambda p: (p - capsule_axis(p)) / np.linalg.norm(p - capsule_axis(p)))
    if isinstance(shape, tb.Cylinder):
        r, h = shape.radius, shape.height / 2

        def cylinder(p):
            d = np.stack([np.hypot(p[..., 0], p[..., 1]) - r, np.abs(p[..., 2]) - h], axis=-1)
            return np.minimum(d.max(axis=-1), 0) + np.linalg.norm(np.maximum(d, 0), axis=-1)

        def cylinder_normal(p):
            rho = np.hypot(p[0], p[1])
            if abs(abs(p[2]) - h) < abs(rho - r):
                return np.array([0, 0, np.sign(p[2])])
            return np.array([p[0] / rho, p[1] / rho, 0])
        return cylinder, cylinder_normal
    if isinstance(shape, tb.Ellipsoid):
        s = np.array([shape.a, shape.b, shape.c])
        return (lambda p: s.min() * (np.linalg.norm(p / s, axis=-1) - 1),
                lambda p: (p / s**2) / np.linalg.norm(p / s**2))
    if isinstance(shape, tb.ConvexHull):
        # outward face planes of the hull's triangles (n · p <= e inside)
        v = shape.vertices[shape.triangles]
        n = np.cross(v[:, 1] - v[:, 0], v[:, 2] - v[:, 0])
        n /= np.linalg.norm(n, axis=1)[:, None]
        e = np.einsum("ij,ij->i", n, v[:, 0])
        return (lambda p: (p @ n.T - e).max(axis=-1),
                lambda p: n[int(np.argmax(n @ p - e))])
    raise TypeError(shape)


def reference(shape, pos, quat, origins, directions):
    """Expected (kind, t, normal) per ray, world frame: kind 'hit', 'inside', 'miss' or 'skip'."""
    f, normal = _sdf_and_normal(shape)
    R = quat_to_matrix(quat)
    lo, ld = (origins - pos) @ R, directions @ R
    span = np.linalg.norm(lo, axis=1).max() + 2 * max(np.abs(shape.size).max(), 1.0) + 1
    t = np.arange(0, span, H)
    out = []
    for o, d in zip(lo, ld, strict=True):
        samples = f(o + t[:, None] * d)
        if samples[0] < 0:
            out.append(("inside", 0.0, None))
            continue
        neg = np.flatnonzero(samples < 0)
        if not neg.size:
            out.append(("miss" if samples.min() > H else "skip", np.inf, None))
            continue
        k = neg[0]
        root = brentq(lambda s, o=o, d=d: f(o + s * d), t[k - 1], t[k], xtol=1e-15, rtol=1e-15)
        n = normal(o + root * d)
        out.append(("hit" if abs(n @ d) > 1e-3 else "skip", root, R @ n))
    return out


def random_rays(rng, n, scale):
    origins = rng.uniform(-3, 3, size=(n, 3)) * scale
    targets = rng.uniform(-0.8, 0.8, size=(n, 3)) * scale
    return origins, targets - origins


HULL_POINTS = np.random.default_rng(7).normal(size=(30, 3)) * [0.6, 0.4, 0.8]

SHAPES = {
    "sphere": tb.Sphere(0.7),
    "box": tb.Box(0.6, 1.2, 1.8),
    "capsule": tb.Capsule(0.4, 1.1),
    "cylinder": tb.Cylinder(0.5, 1.3),
    "ellipsoid": tb.Ellipsoid(0.4, 0.9, 0.6),
    "hull": tb.ConvexHull(HULL_POINTS),
}


@pytest.mark.parametrize("name", list(SHAPES))
def test_shape_against_closed_form(name):
    shape = SHAPES[name]
    rng = np.random.default_rng(51)
    pos, quat = _random_pose(rng)
    world = tb.World()
    world.add_body(tb.Sphere(0.1), position=(50, 50, 50))   # body 0: out of the way, so the hit index matters
    body = world.add_body(shape, position=pos, orientation=quat)
    origins, directions = random_rays(rng, RAYS, 1.0)
    origins += pos
    hits = world.ray_cast(origins, directions)
    unit = directions / np.linalg.norm(directions, axis=1)[:, None]
    ref = reference(shape, pos, quat, origins, unit)
    counts = {"hit": 0, "miss": 0, "inside": 0, "skip": 0}
    worst = 0.0
    for i, (kind, t, n) in enumerate(ref):
        counts[kind] += 1
        if kind == "miss":
            assert hits.body[i] == -1 and hits.distance[i] == np.inf, (i, hits.distance[i])
            assert np.all(np.isnan(hits.point[i])) and np.all(np.isnan(hits.normal[i]))
        elif kind == "inside":
            assert hits.body[i] == body.index and hits.distance[i] == 0.0
            np.testing.assert_array_equal(hits.point[i], origins[i])
            np.testing.assert_allclose(hits.normal[i], -unit[i], atol=1e-15)
        elif kind == "hit":
            assert hits.body[i] == body.index, (i, t)
            err = max(abs(hits.distance[i] - t), np.abs(hits.point[i] - (origins[i] + t * unit[i])).max(),
                      np.abs(hits.normal[i] - n).max())
            worst = max(worst, err)
            assert err < TOL, (i, hits.distance[i], t, hits.normal[i], n)
    assert counts["hit"] > 100 and counts["miss"] > 100 and counts["skip"] < RAYS // 20, counts
    print(f"{name}: {counts}, worst error {worst:.2e}")


def test_hull_of_box_corners_agrees_with_box():
    box = tb.Box(0.6, 1.2, 1.8)
    rng = np.random.default_rng(3)
    pos, quat = _random_pose(rng)
    worlds = []
    for shape in (box, tb.ConvexHull(box.corners())):
        w = tb.World()
        w.add_body(shape, position=pos, orientation=quat)
        worlds.append(w)
    origins, directions = random_rays(rng, RAYS, 1.0)
    origins += pos
    a, b = (w.ray_cast(origins, directions) for w in worlds)
    np.testing.assert_array_equal(a.body, b.body)
    hit = a.body >= 0
    assert 100 < hit.sum() < RAYS - 100
    np.testing.assert_allclose(a.distance[hit], b.distance[hit], rtol=0, atol=1e-12)
    np.testing.assert_allclose(a.normal[hit], b.normal[hit], rtol=0, atol=1e-12)


def test_ground_is_hit_from_above_and_from_below():
    world = tb.World()
    world.add_body(tb.Sphere(0.5), position=(10, 0, 3))
    ground = world.add_ground(height=0.25)
    rng = np.random.default_rng(5)
    origins = rng.uniform(-3, 3, size=(RAYS, 3)) + [0, 0, 3.5]
    directions = rng.normal(size=(RAYS, 3))
    unit = directions / np.linalg.norm(directions, axis=1)[:, None]
    hits = world.ray_cast(origins, directions)
    down = (unit[:, 2] < 0) & (np.abs(origins[:, 0] - 10) > 4)   # away from the sphere
    t = (0.25 - origins[:, 2]) / unit[:, 2]
    np.testing.assert_array_equal(hits.body[down], ground.index)
    np.testing.assert_allclose(hits.distance[down], t[down], rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(hits.point[down][:, 2], 0.25, atol=1e-12)
    np.testing.assert_array_equal(hits.normal[down], np.tile([0.0, 0.0, 1.0], (down.sum(), 1)))
    assert np.all(hits.body[(unit[:, 2] >= 0) & (np.abs(origins[:, 0] - 10) > 4)] == -1)
    below = world.ray_cast((0, 0, -1), (0.3, 0, 1))
    assert below.body == ground.index and below.distance == 0.0


def test_ray_from_inside_hits_at_its_origin():
    world = tb.World()
    world.add_body(tb.Box(4, 4, 4))
    ball = world.add_body(tb.Sphere(1.0), position=(10, 0, 0))
    hits = world.ray_cast([[10.2, 0.1, 0], [10, 0, 0]], [[1, 0, 0], [0, 0, -2]])
    np.testing.assert_array_equal(hits.body, [ball.index, ball.index])
    np.testing.assert_array_equal(hits.distance, [0.0, 0.0])
    np.testing.assert_array_equal(hits.point, [[10.2, 0.1, 0], [10, 0, 0]])
    np.testing.assert_array_equal(hits.normal, [[-1, 0, 0], [0, 0, 1]])
    # ignoring the body it starts in, the ray goes on to what lies beyond
    beyond = world.ray_cast((10, 0, 0), (-1, 0, 0), ignore=ball)
    assert beyond.body == 0 and beyond.distance == pytest.approx(8.0, abs=1e-12)


def test_nearest_of_several_bodies_and_compounds():
    world = tb.World()
    balls = [world.add_body(tb.Sphere(0.4), position=(x, 0, 0)) for x in (3.0, 1.0, 5.0)]
    pair = world.add_body([(tb.Sphere(0.3), (0, 0, 0), (1, 0, 0, 0)), (tb.Box(0.2, 0.2, 0.2), (0, 1, 0), (1, 0, 0, 0))],
                          position=(-2, 0, 0))
    hits = world.ray_cast([[0, 0, 0], [10, 0, 0], [-2, 5, 0], [-10, 0, 0]],
                          [[1, 0, 0], [-1, 0, 0], [0, -1, 0], [1, 0, 0]])
    np.testing.assert_array_equal(hits.body, [balls[1].index, balls[2].index, pair.index, pair.index])
    # the parts are shifted so that the compound's COM, c = V_box · 1 / (V_sphere + V_box) along y, is the origin
    c = 0.008 / (4 / 3 * np.pi * 0.3**3 + 0.008)
    np.testing.assert_allclose(hits.distance, [0.6, 4.6, 5 - (1 - c + 0.1), 8 - np.sqrt(0.09 - c * c)], atol=1e-12)


def test_max_distance_per_ray():
    world = tb.World()
    world.add_body(tb.Sphere(1.0), position=(5, 0, 0))
    origins = np.zeros((4, 3))
    directions = np.tile([1.0, 0, 0], (4, 1))
    hits = world.ray_cast(origins, directions, max_distance=[3.9, 4.0, 4.1, np.inf])
    np.testing.assert_array_equal(hits.body, [-1, 0, 0, 0])
    np.testing.assert_array_equal(hits.distance, [np.inf, 4.0, 4.0, 4.0])
    one = world.ray_cast((0, 0, 0), (2, 0, 0), max_distance=3.0)
    assert one.body == -1 and one.distance == np.inf and one.point.shape == (3,)


def test_collision_groups_collide_flag_and_ignore():
    world = tb.World()
    first = world.add_body(tb.Sphere(0.5), position=(2, 0, 0), collision_group=0b01)
    second = world.add_body(tb.Sphere(0.5), position=(4, 0, 0), collision_group=0b10)
    world.add_body(tb.Sphere(0.5), position=(1, 0, 0), collide=False)
    o, d = (0, 0, 0), (1, 0, 0)
    assert world.ray_cast(o, d).body == first.index
    assert world.ray_cast(o, d, mask=0b10).body == second.index
    assert world.ray_cast(o, d, mask=0b100).body == -1
    assert world.ray_cast(o, d, ignore=[first]).body == second.index
    assert world.ray_cast(o, d, ignore=(first.index, second)).body == -1


def test_many_rays_run_in_parallel_and_match_the_serial_kernel():
    rng = np.random.default_rng(11)
    world = tb.World()
    world.add_ground()
    for shape in SHAPES.values():
        world.add_body(shape, position=rng.uniform(-3, 3, size=3) + [0, 0, 3])
    origins, directions = random_rays(rng, 300, 2.0)
    many = world.ray_cast(origins, directions)
    for i in range(0, 300, 37):
        one = world.ray_cast(origins[i], directions[i])
        assert one.body == many.body[i]
        np.testing.assert_array_equal(one.distance, many.distance[i])
        np.testing.assert_array_equal(one.normal, many.normal[i])


@pytest.mark.parametrize(("kwargs", "error", "message"), [
    ({"origins": [[0, 0, 0], [1, 1, 1]], "directions": [[1, 0, 0], [0, 0, 0]]}, ValueError,
     r"directions\[1\] must be non-zero, got \[0.0, 0.0, 0.0\]"),
    ({"origins": [0, 0, 0], "directions": [0, 0, 0]}, ValueError, r"directions must be non-zero"),
    ({"origins": [[0, 0, 0]], "directions": [[1, 0, 0], [0, 1, 0]]}, ValueError,
     r"directions must have as many rows as origins \(1\), got 2"),
    ({"origins": [0, 0], "directions": [1, 0, 0]}, ValueError, r"origins must have shape \(3,\)"),
    ({"origins": [0, 0, np.nan], "directions": [1, 0, 0]}, ValueError, r"origins must be finite"),
    ({"origins": "here", "directions": [1, 0, 0]}, TypeError, r"origins must be an array"),
    ({"origins": [0, 0, 0], "directions": [1, 0, 0], "max_distance": -1.0}, ValueError,
     r"max_distance must be >= 0 \[m\] \(inf for no limit\), got -1.0"),
    ({"origins": [[0, 0, 0]] * 2, "directions": [[1, 0, 0]] * 2, "max_distance": [1.0, np.nan]}, ValueError,
     r"max_distance\[1\] must be >= 0"),
    ({"origins": [[0, 0, 0]] * 2, "directions": [[1, 0, 0]] * 2, "max_distance": [1.0, 2, 3]}, ValueError,
     r"max_distance must have shape \(2,\)"),
    ({"origins": [0, 0, 0], "directions": [1, 0, 0], "mask": 1 << 32}, ValueError, r"mask must fit in 32 bits"),
    ({"origins": [0, 0, 0], "directions": [1, 0, 0], "ignore": 7}, ValueError,
     r"ignore must be a body index in \[0, 1\), got 7"),
    ({"origins": [0, 0, 0], "directions": [1, 0, 0], "ignore": 2.5}, TypeError, r"ignore must be None, a Body"),
])
def test_bad_input_is_refused(kwargs, error, message):
    world = tb.World()
    world.add_body(tb.Sphere(1.0))
    with pytest.raises(error, match=message):
        world.ray_cast(**kwargs)


def test_bvh_gives_bitwise_the_brute_force_hits():
    # A random scene of every shape type (a compound, a ground, a body that does not collide, one in another
    # collision group) and random rays, many from inside shapes and many grazing tied boxes: the BVH path of
    # World.ray_cast against the brute-force loop over every row, field by field, bitwise.
    from tumble.queries import ray as _ray

    rng = np.random.default_rng(51)
    world = tb.World(gravity=(0, 0, 0))
    world.add_ground(height=-3.0)
    kinds = [lambda: tb.Sphere(rng.uniform(0.1, 0.6)), lambda: tb.Box(*rng.uniform(0.1, 1.0, 3)),
             lambda: tb.Capsule(rng.uniform(0.05, 0.3), rng.uniform(0.1, 0.8)),
             lambda: tb.Cylinder(rng.uniform(0.1, 0.4), rng.uniform(0.1, 0.8)),
             lambda: tb.Ellipsoid(*rng.uniform(0.1, 0.5, 3)),
             lambda: tb.ConvexHull(rng.normal(size=(12, 3)) * 0.3)]
    for i in range(300):
        q = rng.normal(size=4)
        world.add_body(kinds[i % 6](), position=rng.uniform(-4, 4, 3), orientation=q / np.linalg.norm(q),
                       collide=i != 7, collision_group=2 if i == 11 else 1)
    for z in (0.0, 1.0):   # two equal boxes at the same place: ties between rows
        world.add_body(tb.Box(0.5, 0.5, 0.5), position=(6.0, 6.0, z))
        world.add_body(tb.Box(0.5, 0.5, 0.5), position=(6.0, 6.0, z))
    n = 20000
    origins = rng.uniform(-6, 6, (n, 3))
    origins[:200] = [6.0, 6.0, 5.0]
    directions = rng.normal(size=(n, 3))
    directions[:200] = [0.0, 0.0, -1.0]
    directions[200:300] = [1.0, 0.0, 0.0]   # zero components: the slabs' inf branch
    directions /= np.linalg.norm(directions, axis=1, keepdims=True)
    limit = np.where(rng.uniform(size=n) < 0.3, rng.uniform(0.0, 5.0, n), np.inf)
    for mask in (None, 1):
        fast = world.ray_cast(origins, directions, max_distance=limit, mask=mask)
        geom = world._model.geom
        ok = ((geom.live("geom_group") & np.uint32(0xFFFFFFFF if mask is None else mask)) != 0) \
            & world._model.body.live("collide")[geom.live("geom_body")]
        unit = directions / np.linalg.norm(directions, axis=1)[:, None]   # as World.ray_cast normalizes
        slow = _ray.cast(world._model, world._state, origins, unit, limit, np.ascontiguousarray(ok),
                         brute_force=True)
        for field in ("body", "distance", "point", "normal"):
            a, b = getattr(fast, field), getattr(slow, field)
            assert np.array_equal(a, b, equal_nan=True), field
        assert 0.2 < np.mean(fast.body >= 0) < 0.95
    every = world.ray_cast(origins, directions, max_distance=limit)
    for count in (1, 5, 63):   # the serial kernel below PARALLEL_MIN_RAYS
        few = world.ray_cast(origins[:count], directions[:count], max_distance=limit[:count])
        np.testing.assert_array_equal(few.body, every.body[:count])
        np.testing.assert_array_equal(few.distance, every.distance[:count])
