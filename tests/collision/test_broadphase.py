"""Sweep-and-sort broadphase (``tumble.collision.broadphase``) against the O(g²) brute force (STYLE.md pattern
12), on moving scenes over many steps; the reporting filters; the pair table; coherence (Baraff II 7.2.2).

Exact comparisons: both paths use the same closed-interval test on the same float64 boxes, so their pair
lists must be identical, not merely close. Touching boxes (lo_a == hi_b on an axis) count as overlapping;
the scenes put boxes on a dyadic lattice (multiples of 1/8 m), where sums are exact, so exact touching happens
often and is checked to happen.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tumble import Box, Sphere, World
from tumble.collision.aabb import geom_aabbs_serial
from tumble.collision.broadphase import SweepAndSort, _slot, _table_insert, _table_remove, brute_force_pairs

ALL = 0xFFFFFFFF


def no_filter(g: int) -> dict[str, np.ndarray]:
    """Filter arrays under which every overlapping pair is reported: one movable body per row."""
    return dict(geom_body=np.arange(g, dtype=np.int32), inv_mass=np.ones(g), body_collide=np.ones(g, dtype=bool),
                geom_group=np.ones(g, dtype=np.uint32), geom_mask=np.full(g, ALL, dtype=np.uint32))


def both(sap: SweepAndSort, lo, hi, filt) -> tuple[np.ndarray, np.ndarray]:
    return sap.pairs(**filt).copy(), brute_force_pairs(lo, hi, **filt)


def touching_pairs(lo, hi, pairs) -> int:
    """How many reported pairs touch exactly (a face of one lies in a face plane of the other, no deeper)."""
    a, b = pairs[:, 0], pairs[:, 1]
    touch = (lo[a] == hi[b]) | (lo[b] == hi[a])
    return int(np.any(touch, axis=1).sum())


class LatticeScene:
    """g boxes with corners on a 1/8 m lattice moving by whole lattice steps, plus ``planes`` infinite rows
    (as the AABB kernel gives planes); ``teleport`` moves a random subset anywhere (incoherent jumps)."""

    def __init__(self, g: int, planes: int, seed: int) -> None:
        self.rng = np.random.default_rng(seed)
        self.g, self.planes = g, planes
        self.pos = self.rng.integers(0, 80, (g, 3))       # lattice units of 1/8 m: a 10 m cube
        self.ext = self.rng.integers(1, 9, (g, 3))        # box sides 1/8 .. 1 m
        self.vel = self.rng.integers(-1, 2, (g, 3))       # at most one lattice step per axis per step

    def boxes(self) -> tuple[np.ndarray, np.ndarray]:
        lo = np.concatenate([self.pos / 8.0, np.full((self.planes, 3), -np.inf)])
        hi = np.concatenate([(self.pos + self.ext) / 8.0, np.full((self.planes, 3), np.inf)])
        return lo, hi

    def step(self, teleport: int = 0, resize: int = 0) -> None:
        self.pos += self.vel
        self.vel = np.where(self.rng.random(self.vel.shape) < 0.1, self.rng.integers(-1, 2, self.vel.shape),
                            self.vel)
        if teleport:
            i = self.rng.choice(self.g, teleport, replace=False)
            self.pos[i] = self.rng.integers(0, 80, (teleport, 3))
        if resize:
            i = self.rng.choice(self.g, resize, replace=False)
            self.ext[i] = self.rng.integers(1, 9, (resize, 3))


@settings(max_examples=6, deadline=None)  # deadline=None: the first call compiles (Numba)
@given(seed=st.integers(0, 2**32 - 1), planes=st.integers(0, 2))
def test_moving_lattice_boxes_match_brute_force(seed, planes):
    """300 boxes (and 0–2 planes) over 40 steps of coherent motion with random jumps and resizes: the pair list
    equals brute force after every update, and exactly touching pairs occur and are reported."""
    scene = LatticeScene(300, planes, seed)
    filt = no_filter(scene.g + planes)
    lo, hi = scene.boxes()
    sap = SweepAndSort(pair_capacity=8)  # small: the table must grow during the run
    sap.reset(lo, hi)
    touching = 0
    for t in range(40):
        scene.step(teleport=5 if t % 7 == 3 else 0, resize=10 if t % 5 == 1 else 0)
        lo, hi = scene.boxes()
        sap.update(lo, hi)
        got, want = both(sap, lo, hi, filt)
        np.testing.assert_array_equal(got, want)
        touching += touching_pairs(lo, hi, got)
    assert touching > 0


def test_update_pairs_in_one_call_matches_brute_force_without_the_excluded_bodies():
    """``update_pairs`` (sort, collect and drop in one kernel call, as a step runs it): 200 lattice boxes over 30
    steps with jumps, a table that must grow, and every pair of bodies 3k, 3k + 1 excluded (a joint without
    collision): the pair list equals brute force without the excluded pairs after every step; a NaN box is
    refused naming its row, and the next call with good boxes goes on as if it had not been made."""
    scene = LatticeScene(200, 1, 11)
    g = scene.g + 1
    filt = no_filter(g)
    body = filt["geom_body"]
    excluded = np.array(sorted((k << 32) | (k + 1) for k in range(0, scene.g - 1, 3)), dtype=np.int64)
    lo, hi = scene.boxes()
    sap = SweepAndSort(pair_capacity=8)
    sap.reset(lo, hi)
    dropped = 0
    for t in range(30):
        scene.step(teleport=5 if t % 7 == 3 else 0)
        lo, hi = scene.boxes()
        got = sap.update_pairs(lo, hi, **filt, excluded=excluded).copy()
        want = brute_force_pairs(lo, hi, **filt)
        a, b = body[want[:, 0]].astype(np.int64), body[want[:, 1]].astype(np.int64)
        keep = ~np.isin((np.minimum(a, b) << 32) | np.maximum(a, b), excluded)
        dropped += int((~keep).sum())
        np.testing.assert_array_equal(got, want[keep])
    assert dropped > 0 and sap._table_keys.shape[0] > 16
    bad = lo.copy()
    bad[7, 1] = np.nan
    with pytest.raises(ValueError, match="geometry row 7"):
        sap.update_pairs(bad, hi, **filt, excluded=excluded)
    scene.step()
    lo, hi = scene.boxes()
    got = sap.update_pairs(lo, hi, **filt, excluded=excluded)
    want = brute_force_pairs(lo, hi, **filt)
    a, b = body[want[:, 0]].astype(np.int64), body[want[:, 1]].astype(np.int64)
    np.testing.assert_array_equal(got, want[~np.isin((np.minimum(a, b) << 32) | np.maximum(a, b), excluded)])


def world_scene(n: int, seed: int) -> tuple[World, np.random.Generator]:
    """n bodies: boxes and spheres in random orientations in a 6 m cube, a tenth of them fixed, a ground."""
    rng = np.random.default_rng(seed)
    world = World()
    for i in range(n):
        shape = Box(*rng.uniform(0.1, 0.6, 3)) if i % 2 else Sphere(rng.uniform(0.05, 0.3))
        q = rng.normal(size=4)
        fixed = i % 10 == 0
        world.add_body(shape, position=rng.uniform(0, 6, 3), orientation=q / np.linalg.norm(q), fixed=fixed,
                       velocity=np.zeros(3) if fixed else rng.normal(0, 1.0, 3))
    world.add_ground()
    return world, rng


def world_boxes(world: World, margin: float) -> tuple[np.ndarray, np.ndarray, dict[str, np.ndarray]]:
    geom, live = world.model.geom, world._live()
    g = geom.count
    lo, hi = np.full((g, 3), np.nan), np.full((g, 3), np.nan)
    geom_aabbs_serial(world.model.geometry(), world.model.polytopes.arrays()["vertices"], live["x"], live["q"],
                      margin, lo, hi)
    filt = dict(geom_body=geom.live("geom_body"), inv_mass=live["inv_mass"], body_collide=live["collide"],
                geom_group=geom.live("geom_group"), geom_mask=geom.live("geom_mask"))
    return lo, hi, filt


def test_world_boxes_and_spheres_match_brute_force():
    """300 boxes and spheres of a World, moved with their random velocities and jittered orientations over
    30 steps of 10 ms, AABBs from the kernel with a 5 mm margin, the World's own filter arrays (fixed bodies,
    a ground plane): sweep-and-sort equals brute force at every step."""
    world, rng = world_scene(300, 7)
    live = world._live()
    lo, hi, filt = world_boxes(world, 0.005)
    sap = SweepAndSort()
    sap.reset(lo, hi)
    for _ in range(30):
        live["x"] += 0.01 * live["v"]
        moving = live["inv_mass"] > 0
        dq = live["q"][moving] + 0.02 * rng.normal(size=(int(moving.sum()), 4))
        live["q"][moving] = dq / np.linalg.norm(dq, axis=1)[:, None]
        lo, hi, filt = world_boxes(world, 0.005)
        sap.update(lo, hi)
        got, want = both(sap, lo, hi, filt)
        np.testing.assert_array_equal(got, want)
    assert len(got) > 0


def test_pairs_are_sorted_unique_and_ordered():
    scene = LatticeScene(200, 1, 3)
    lo, hi = scene.boxes()
    sap = SweepAndSort()
    sap.reset(lo, hi)
    p = sap.pairs(**no_filter(201))
    assert p.dtype == np.int64 and p.shape[1] == 2 and len(p) > 0
    assert np.all(p[:, 0] < p[:, 1])
    keys = p[:, 0] * 201 + p[:, 1]
    assert np.all(np.diff(keys) > 0)


def test_reset_and_update_give_the_same_pairs():
    """After a long incremental run, a fresh build on the same boxes (and a reset of the same instance) holds
    exactly the same table."""
    scene = LatticeScene(400, 1, 11)
    lo, hi = scene.boxes()
    filt = no_filter(401)
    sap = SweepAndSort()
    sap.reset(lo, hi)
    for t in range(50):
        scene.step(teleport=3 if t % 10 == 0 else 0)
        lo, hi = scene.boxes()
        sap.update(lo, hi)
    incremental = sap.pairs(**filt).copy()
    count = sap.pair_count
    fresh = SweepAndSort()
    fresh.reset(lo, hi)
    np.testing.assert_array_equal(fresh.pairs(**filt), incremental)
    assert fresh.pair_count == count
    sap.reset(lo, hi)
    np.testing.assert_array_equal(sap.pairs(**filt), incremental)


def test_entering_and_leaving_overlap_through_touching():
    """Two unit boxes approach along x in steps of 1/4 m, touch, overlap, separate: the pair appears exactly
    when the gap is <= 0 (touching included) and disappears when it is positive again."""
    filt = no_filter(2)
    sap = SweepAndSort()
    lo = np.array([[0.0, 0, 0], [3.0, 0.5, 0.5]])
    sap.reset(lo, lo + 1.0)
    for xb in np.concatenate([np.arange(3.0, -2.01, -0.25), np.arange(-2.0, 3.01, 0.25)]):
        lo[1, 0] = xb
        sap.update(lo, lo + 1.0)
        gap = max(xb - 1.0, 0.0 - (xb + 1.0))
        assert (len(sap.pairs(**filt)) == 1) == (gap <= 0.0), xb


# ------------------------------------------------------------------------------------------------
# Filters
# ------------------------------------------------------------------------------------------------


def overlapping_pair(**overrides) -> tuple[np.ndarray, np.ndarray, dict[str, np.ndarray]]:
    """Two overlapping boxes, rows 0 and 1 of bodies 0 and 1, with filter arrays overridden as given."""
    lo = np.array([[0.0, 0.0, 0.0], [0.5, 0.5, 0.5]])
    filt = no_filter(2)
    filt.update({k: np.asarray(v, dtype=filt[k].dtype) for k, v in overrides.items()})
    return lo, lo + 1.0, filt


FILTER_CASES = [
    ({}, True),
    (dict(geom_body=[0, 0]), False),                                    # same body
    (dict(inv_mass=[0.0, 0.0]), False),                                 # both fixed
    (dict(inv_mass=[0.0, 1.0]), True),                                  # one fixed, one moving
    (dict(body_collide=[False, True]), False),
    (dict(body_collide=[True, False]), False),
    (dict(geom_group=[1, 2], geom_mask=[2, 1]), True),                  # each in the other's mask
    (dict(geom_group=[1, 2], geom_mask=[2, 4]), False),                 # b's mask excludes a's group
    (dict(geom_group=[1, 2], geom_mask=[4, 1]), False),                 # a's mask excludes b's group
    (dict(geom_group=[0, 1], geom_mask=[ALL, ALL]), False),             # a in no group
    (dict(geom_group=[0x80000000, 0x80000000], geom_mask=[0x80000000, 0x80000000]), True),  # top bit
    (dict(geom_group=[1, 1], geom_mask=[ALL - 1, ALL]), False),
]


@pytest.mark.parametrize(("overrides", "kept"), FILTER_CASES, ids=[str(c[0]) for c in FILTER_CASES])
def test_filter_rules(overrides, kept):
    lo, hi, filt = overlapping_pair(**overrides)
    sap = SweepAndSort()
    sap.reset(lo, hi)
    expected = [[0, 1]] if kept else np.zeros((0, 2))
    got, want = both(sap, lo, hi, filt)
    np.testing.assert_array_equal(got.reshape(-1, 2), expected)
    np.testing.assert_array_equal(want.reshape(-1, 2), expected)
    assert sap.pair_count == 1  # filtering happens when pairs are reported, not in the table


def test_filters_through_a_world():
    """World rows: a compound (two overlapping spheres of one body), two touching fixed boxes, a body with
    collide=False, and groups/masks; only the pairs allowed by every rule are reported."""
    world = World()
    world.add_body([(Sphere(0.5), (0, 0, 0), (1, 0, 0, 0)), (Sphere(0.5), (0.5, 0, 0), (1, 0, 0, 0))],
                   position=(0, 0, 5))                                                    # rows 0, 1 (body 0)
    world.add_body(Box(1, 1, 1), position=(10, 0, 0.5), fixed=True)                     # row 2 (body 1)
    world.add_body(Box(1, 1, 1), position=(10.9, 0, 0.5), fixed=True)                   # row 3 (body 2)
    world.add_body(Sphere(0.5), position=(10, 0, 1.5), collide=False)                   # row 4 (body 3)
    world.add_body(Sphere(0.5), position=(10.9, 0, 1.4))                                 # row 5 (body 4)
    world.add_body(Sphere(0.5), position=(0.3, 0, 5.8), collision_group=2, collision_mask=2)  # row 6 (body 5)
    world.add_body(Sphere(0.5), position=(20, 0, 0.3))                                   # row 7 (body 6)
    world.add_body(Sphere(0.5), position=(30, 0, 0.3), collision_group=2, collision_mask=2)  # row 8 (body 7)
    world.add_ground()                                                                   # row 9 (body 8)
    lo, hi, filt = world_boxes(world, 0.005)
    sap = SweepAndSort()
    sap.reset(lo, hi)
    got, want = both(sap, lo, hi, filt)
    np.testing.assert_array_equal(got, want)
    # Overlapping boxes: 0-1, 0-6, 1-6, 2-3, 2-4, 2-5, 3-4, 3-5, 4-5, and the ground (z <= 0 + margin) with
    # rows 2, 3, 7, 8. Rejected: 0-1 same body; 2-3, 2-9, 3-9 both fixed; every pair of 4 (collide=False);
    # 0-6, 1-6 and 8-9 (rows 6 and 8 are in group 2 only and collide with group 2 only).
    np.testing.assert_array_equal(got, [[2, 5], [3, 5], [7, 9]])
    assert sap.pair_count == 9 + 4


# ------------------------------------------------------------------------------------------------
# Coherence (Baraff II 7.2.2)
# ------------------------------------------------------------------------------------------------


def slow_scene(n: int, seed: int):
    rng = np.random.default_rng(seed)
    c = rng.uniform(0.0, 10.0, (n, 3))
    h = rng.uniform(0.05, 0.15, (n, 3))
    v = rng.uniform(-0.1, 0.1, (n, 3))
    return c, h, v


def test_swaps_per_step_are_linear_in_a_slowly_moving_scene():
    """1000 boxes (half sides 5–15 cm) in a 10 m cube moving at <= 0.1 m/s per axis, steps of 10 ms.

    Bound: per axis the 2000 endpoints lie ~200 per metre; two endpoints move at most 2 mm relative to each
    other per step, so an endpoint passes at most ~0.4 others on average and a step needs at most ~400
    exchanges per axis, ~1.2 n over three axes. We assert <= 2 n (an O(n) constant with margin). A teleport of
    every box (no coherence) costs far more, showing that the count measures coherence."""
    n = 1000
    c, h, v = slow_scene(n, 1)
    filt = no_filter(n)
    sap = SweepAndSort()
    sap.reset(c - h, c + h)
    swaps = []
    for _ in range(20):
        c += 0.01 * v
        sap.update(c - h, c + h)
        swaps.append(sap.last_swaps)
    assert max(swaps) <= 2 * n, swaps
    assert sum(swaps) > 0
    got, want = both(sap, c - h, c + h, filt)
    np.testing.assert_array_equal(got, want)
    c = np.random.default_rng(2).uniform(0.0, 10.0, (n, 3))
    sap.update(c - h, c + h)
    assert sap.last_swaps > 100 * n
    got, want = both(sap, c - h, c + h, filt)
    np.testing.assert_array_equal(got, want)


def test_still_scene_needs_no_swaps():
    c, h, _ = slow_scene(500, 3)
    sap = SweepAndSort()
    sap.reset(c - h, c + h)
    sap.update(c - h, c + h)
    assert sap.last_swaps == 0


# ------------------------------------------------------------------------------------------------
# The pair table and the state machine around it
# ------------------------------------------------------------------------------------------------


def test_table_grows_when_everything_overlaps():
    """100 boxes that all overlap: 4950 pairs from a table made for 1, both at reset and by update."""
    g = 100
    rng = np.random.default_rng(0)
    apart = rng.uniform(0, 1000, (g, 3))
    sap = SweepAndSort(pair_capacity=1)
    sap.reset(apart, apart + 1.0)
    assert sap.pair_count == 0
    piled = rng.uniform(0, 0.5, (g, 3))
    sap.update(piled, piled + 1.0)
    assert sap.pair_count == g * (g - 1) // 2
    assert sap.table_capacity >= 2 * sap.pair_count
    np.testing.assert_array_equal(sap.pairs(**no_filter(g)), brute_force_pairs(piled, piled + 1.0, **no_filter(g)))
    other = SweepAndSort(pair_capacity=1)
    other.reset(piled, piled + 1.0)
    np.testing.assert_array_equal(other.pairs(**no_filter(g)), sap.pairs(**no_filter(g)))
    sap.update(apart, apart + 1.0)
    assert sap.pair_count == 0 and len(sap.pairs(**no_filter(g))) == 0


@settings(max_examples=40, deadline=None)
@given(ops=st.lists(st.tuples(st.booleans(), st.integers(0, 5), st.integers(0, 5)).filter(lambda t: t[1] != t[2]),
                    max_size=60))
def test_hash_table_matches_a_set(ops):
    """Insert/remove sequences on a 16-slot table with up to 15 keys (loads far above the 1/2 the class keeps,
    so probe runs wrap and collide): the stored keys equal a Python set's, and every key is reachable from
    its home slot without crossing an empty slot (the linear-probing invariant backward-shift deletion keeps)."""
    keys = np.full(16, -1, dtype=np.int64)
    state = np.array([0, 16], dtype=np.int64)
    model: set[int] = set()
    for insert, a, b in ops:
        key = (min(a, b) << 32) | max(a, b)
        if insert:
            _table_insert(a, b, keys, state)
            model.add(key)
        else:
            _table_remove(a, b, keys, state)
            model.discard(key)
        assert set(keys[keys >= 0].tolist()) == model and state[0] == len(model)
        for s in np.flatnonzero(keys >= 0):
            j = _slot(keys[s], 15)
            while j != s:
                assert keys[j] >= 0
                j = (j + 1) & 15


def test_update_with_a_new_row_count_is_a_reset():
    scene = LatticeScene(100, 0, 5)
    lo, hi = scene.boxes()
    sap = SweepAndSort()
    sap.reset(lo[:50], hi[:50])
    sap.update(lo, hi)
    assert sap.geom_count == 100
    np.testing.assert_array_equal(sap.pairs(**no_filter(100)), brute_force_pairs(lo, hi, **no_filter(100)))


@pytest.mark.parametrize("bad", ["nan", "inverted"])
def test_nan_or_inverted_box_is_rejected_and_changes_nothing(bad):
    scene = LatticeScene(50, 1, 9)
    lo, hi = scene.boxes()
    sap = SweepAndSort()
    sap.reset(lo, hi)
    before = sap.pairs(**no_filter(51)).copy()
    lo2, hi2 = lo.copy(), hi.copy()
    if bad == "nan":
        lo2[7, 1] = np.nan
    else:
        lo2[7, 1] = hi2[7, 1] + 1.0
    with pytest.raises(ValueError, match="geometry row 7 is NaN or inverted"):
        sap.update(lo2, hi2)
    with pytest.raises(ValueError, match="geometry row 7 is NaN or inverted"):
        SweepAndSort().reset(lo2, hi2)
    np.testing.assert_array_equal(sap.pairs(**no_filter(51)), before)
    sap.update(lo, hi)
    assert sap.last_swaps == 0


def test_wrong_shapes_are_rejected():
    with pytest.raises(ValueError, match=r"aabb_lo and aabb_hi must both have shape \(g, 3\)"):
        SweepAndSort().reset(np.zeros((4, 2)), np.zeros((4, 2)))
    with pytest.raises(ValueError, match=r"aabb_lo and aabb_hi must both have shape \(g, 3\)"):
        brute_force_pairs(np.zeros((4, 3)), np.zeros((5, 3)), **no_filter(4))


def test_planes_overlap_everything_and_each_other():
    """Infinite rows sort at ±inf and overlap every box and each other (before filtering)."""
    lo = np.array([[-np.inf] * 3, [-np.inf] * 3, [0.0, 0, 0], [5.0, 5, 5]])
    hi = np.array([[np.inf] * 3, [np.inf] * 3, [1.0, 1, 1], [6.0, 6, 6]])
    sap = SweepAndSort()
    sap.reset(lo, hi)
    shift = np.array([[0.0, 0, 0], [0, 0, 0], [4.5, 0, 0], [-4.5, 0, 0]])  # the boxes pass each other
    sap.update(lo + shift, hi + shift)
    assert sap.last_swaps > 0
    np.testing.assert_array_equal(sap.pairs(**no_filter(4)), [[0, 1], [0, 2], [0, 3], [1, 2], [1, 3]])


@pytest.mark.parametrize("g", [0, 1])
def test_empty_and_single_row_worlds(g):
    lo, hi = np.zeros((g, 3)), np.ones((g, 3))
    sap = SweepAndSort()
    sap.reset(lo, hi)
    sap.update(lo, hi)
    assert sap.pairs(**no_filter(g)).shape == (0, 2)
    assert brute_force_pairs(lo, hi, **no_filter(g)).shape == (0, 2)
