"""The scene descriptions satisfy BENCH.md: counts, spacing, clearance, materials, seeded determinism."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.optimize import linprog
from scipy.spatial import cKDTree

from bench.geometry import box_box_separation, quat_to_matrix
from bench.scenes import CLEARANCE, SCENE_IDS, case_ids, make_case, make_pile, make_s1


@pytest.fixture(scope="module")
def s2_boxes():
    return make_case("S2-boxes")


def test_every_scene_expands_to_cases_that_build_quick():
    for sid in SCENE_IDS:
        for cid in case_ids(sid, quick=True):
            scene = make_case(cid, quick=True)
            assert scene.n_bodies >= 1 and scene.steps >= 1 and scene.quick


def test_case_ids():
    assert case_ids("S2") == ["S2-boxes", "S2-spheres"]
    assert case_ids("S6") == ["S6-slide", "S6-stick"]
    assert case_ids("S7") == ["S7-125", "S7-1000", "S7-8000"]
    with pytest.raises(ValueError, match="unknown scene"):
        case_ids("S9")


def test_s1_matches_bench():
    s = make_case("S1")
    a = s.arrays
    assert s.n_bodies == 4096 and s.steps == 1000 and s.dt == 1e-3
    assert s.gravity == (0.0, 0.0, 0.0) and not s.contacts and s.ground is None and not s.walls
    assert np.allclose(np.linalg.norm(a["w"], axis=1), 5.0)
    # 2 m grid: every nearest neighbour exactly 2 m away
    d, _ = cKDTree(a["x"]).query(a["x"], k=2)
    assert np.allclose(d[:, 1], 2.0)
    b = s.bodies[0]
    assert b.shape.size == (0.2, 0.4, 0.8) and b.density == 1000.0
    assert b.mass == pytest.approx(1000 * 0.2 * 0.4 * 0.8)
    assert b.inertia == pytest.approx((b.mass * (0.4**2 + 0.8**2) / 12, b.mass * (0.2**2 + 0.8**2) / 12,
                                       b.mass * (0.2**2 + 0.4**2) / 12))
    # ω directions cover the sphere (not all the same): mean direction is near zero
    assert np.linalg.norm(a["w"].mean(axis=0)) < 0.5


def test_s1_is_seeded():
    a, b, c = make_s1(per_side=4), make_s1(per_side=4), make_s1(per_side=4, seed=99)
    assert np.array_equal(a.arrays["w"], b.arrays["w"])
    assert not np.array_equal(a.arrays["w"], c.arrays["w"])


def test_s2_boxes_grid_pen_and_materials(s2_boxes):
    s = s2_boxes
    a = s.arrays
    assert s.n_bodies == 1000 and s.dt == pytest.approx(1 / 240) and s.steps == 720
    for axis in range(3):
        values = np.unique(np.round(a["x"][:, axis], 9))
        assert len(values) == 10 and np.allclose(np.diff(values), 0.3)
    assert a["x"][:, 2].min() == pytest.approx(0.5)
    assert np.allclose(a["half_size"], 0.1) and np.allclose(a["mass"], 8.0)
    assert all(b.friction == 0.5 and b.restitution == 0.0 for b in s.bodies)
    # pen: inner 3 m × 3 m, 2 m high
    inner_faces = sorted(abs(w.position[i]) - 0.5 * w.size[i] for w in s.walls for i in (0, 1) if w.position[i])
    assert np.allclose(inner_faces, 1.5) and len(s.walls) == 4
    assert all(w.size[2] == 2.0 and w.position[2] == 1.0 for w in s.walls)
    assert np.allclose(np.linalg.norm(a["q"], axis=1), 1.0)
    assert len(np.unique(np.round(a["q"], 6), axis=0)) == 1000  # each one its own random orientation


def test_s2_boxes_clear_neighbours_and_walls(s2_boxes):
    s = s2_boxes
    a = s.arrays
    rot = quat_to_matrix(a["q"])
    pairs = cKDTree(a["x"]).query_pairs(0.35, output_type="ndarray")
    i, j = pairs[:, 0], pairs[:, 1]
    sep = box_box_separation(a["x"][i], rot[i], a["half_size"][i], a["x"][j], rot[j], a["half_size"][j])
    assert sep.min() >= CLEARANCE - 1e-12
    for c, r, h in s.wall_boxes():
        n = s.n_bodies
        wsep = box_box_separation(a["x"], rot, a["half_size"], np.tile(c, (n, 1)), np.tile(r, (n, 1, 1)),
                                  np.tile(h, (n, 1)))
        assert wsep.min() >= CLEARANCE - 1e-12
    # independent check of the closest pairs: no point lies inside both boxes (linear programme:
    # maximise t subject to every face plane of both boxes being ≥ t away from the point)
    closest = np.argsort(sep)[:25]
    for k in closest:
        rows, rhs = [], []
        for m in (i[k], j[k]):
            for axis in range(3):
                n_ = rot[m][:, axis]
                for sign in (1.0, -1.0):
                    rows.append(np.append(sign * n_, 1.0))
                    rhs.append(sign * n_ @ a["x"][m] + a["half_size"][m, axis])
        res = linprog(c=[0, 0, 0, -1], A_ub=np.array(rows), b_ub=np.array(rhs), bounds=[(None, None)] * 4)
        assert res.status == 0 and -res.fun < 0.0  # the deepest common point is outside one of them


def test_s2_spheres_offsets():
    s = make_case("S2-spheres")
    a = s.arrays
    assert s.n_bodies == 1000 and np.allclose(a["half_size"][:, 0], 0.1)
    grid = (np.round(a["x"][:, :2] / 0.3 - 0.5, 0) + 0.5) * 0.3
    offsets = a["x"][:, :2] - grid
    assert np.abs(offsets).max() <= 0.04 and np.abs(offsets).max() > 0.03 and offsets.std() > 0.01
    assert np.allclose(np.unique(np.round(a["x"][:, 2], 9)), 0.5 + 0.3 * np.arange(10))
    d, _ = cKDTree(a["x"]).query(a["x"], k=2)
    assert d[:, 1].min() > 0.2  # no sphere touches another


def test_piles_are_seeded():
    a, b = make_pile("boxes", per_side=3), make_pile("boxes", per_side=3)
    c = make_pile("boxes", per_side=3, seed=12345)
    assert np.array_equal(a.arrays["q"], b.arrays["q"]) and not np.array_equal(a.arrays["q"], c.arrays["q"])
    a, c = make_pile("spheres", per_side=3), make_pile("spheres", per_side=3, seed=12345)
    assert not np.array_equal(a.arrays["x"], c.arrays["x"])


def test_s3_stack_exact():
    s = make_case("S3")
    z = s.arrays["x"][:, 2]
    assert s.n_bodies == 20 and np.array_equal(z, 0.5 + np.arange(20)) and s.params["top_height"] == 19.5
    assert np.allclose(s.arrays["mass"], 1.0) and np.allclose(s.arrays["inertia"], 1.0 / 6.0)
    assert s.steps == 2400


def test_s4_pyramid_rests_exactly():
    s = make_case("S4")
    x = s.arrays["x"]
    assert s.n_bodies == 210 and s.steps == 1200 and np.allclose(x[:, 1], 0.0)
    rows = np.round(x[:, 2] - 0.5).astype(int)
    assert np.array_equal(np.bincount(rows), np.arange(20, 0, -1))
    for r in range(1, 20):
        above, below = np.sort(x[rows == r, 0]), np.sort(x[rows == r - 1, 0])
        assert np.allclose(above, 0.5 * (below[:-1] + below[1:]))  # offset by half a box
        assert np.allclose(np.diff(above), 1.0)  # side faces touch, no gap


def test_s5_and_s6():
    s = make_case("S5")
    b = s.bodies[0]
    assert b.mass == 1.0 and b.shape.size == (0.1,) and b.position[2] == 1.1 and b.restitution == 0.5
    assert b.friction == 0.0 and s.ground.restitution == 0.5 and s.ground.friction == 0.0 and s.steps == 720
    for cid, mu in (("S6-slide", 0.3), ("S6-stick", 0.5)):
        s = make_case(cid)
        g = np.array(s.gravity)
        assert np.linalg.norm(g) == pytest.approx(9.81)
        assert math.degrees(math.atan2(g[0], -g[2])) == pytest.approx(20.0)
        assert s.bodies[0].friction == mu and s.ground.friction == mu and s.steps == 480
        assert s.bodies[0].position[2] == pytest.approx(0.1)  # resting on the plane


def test_s7_scaling(s2_boxes):
    s125 = make_case("S7-125")
    assert s125.n_bodies == 125 and s125.params["pen_inner"] == pytest.approx(1.5)
    assert s125.params["pen_height"] == pytest.approx(1.0) and s125.scene_id == "S7"
    s1000 = make_case("S7-1000")
    assert s1000.bodies == s2_boxes.bodies and s1000.walls == s2_boxes.walls
    with pytest.raises(ValueError):
        make_case("S7-100")
