"""A heavy box resting on a light one (issue 31, "Heavy on light"): 0.5 m cubes, the light one (1 kg) on the
ground, the heavy one (10 … 10,000 kg) on it, default settings but ``sleep=False`` so the solver works every
step of the 10 s (with sleep the pair falls asleep after 0.5 s and holds trivially).

Before solvers/load_path.py, Gauss–Seidel carried the load through the light box at the rate m/(M + m) per sweep
(the spectral radius of the two normal rows is M/(M + m)); the heavy box sank, overshot, bounced and tipped, and
squeezed the light box out: at 100:1 it had left (0.3 m) within 2.5 s (22 mm deep on the way), at 1,000:1 and
10,000:1 within 1 s; 10:1 held (2 µm). With the light box's normal rows solved as one block the drift is
about 1 µm and the sink below 1 µm at every ratio (10,000:1 and 100,000:1 included).
"""

from __future__ import annotations

from collections import namedtuple

import numpy as np
import pytest

import tumble as tb
from tumble.solvers import load_path

DT = 1.0 / 240.0


def _pair(ratio: float, z_heavy: float = 0.75):
    world = tb.World(sleep=False)
    world.add_ground()
    light = world.add_body(tb.Box(0.5, 0.5, 0.5), mass=1.0, position=(0.0, 0.0, 0.25))
    heavy = world.add_body(tb.Box(0.5, 0.5, 0.5), mass=ratio, position=(0.0, 0.0, z_heavy))
    return world, light, heavy


def _run(world: tb.World, light: tb.Body, seconds: float) -> tuple[float, float]:
    """The light box's largest horizontal drift and sink [m] over the run, sampled every step."""
    drift = sink = 0.0
    for _ in range(round(seconds / DT)):
        world.step(DT)
        x = light.position
        drift = max(drift, float(np.hypot(x[0], x[1])))
        sink = max(sink, 0.25 - float(x[2]))
    return drift, sink


@pytest.mark.parametrize("ratio", [10.0, 100.0, 1000.0, 10000.0])
def test_heavy_box_on_light_box_holds(ratio):
    """The issue's acceptance: within 1 mm horizontally and less than 1 mm sink over 10 s at 10, 100 and 1,000
    (10,000 reported there; it holds too). Measured 0.6–1.4 µm drift and < 1 µm sink at every ratio; the bound
    is 10 µm, which the old solve missed by four orders of magnitude at 100:1 and above."""
    world, light, heavy = _pair(ratio)
    drift, sink = _run(world, light, 10.0)
    assert drift < 1e-5
    assert sink < 1e-5
    assert abs(heavy.position[2] - 0.75) < 1e-5   # the heavy box neither sinks into the light one nor hops


@pytest.mark.parametrize("ratio", [100.0, 10000.0])
def test_overlap_is_removed_without_pushing_the_light_box_out(ratio):
    """The heavy box started 5 mm into the light one: the split impulse's pseudo-velocities are solved as a
    block too. Measured over 3 s: drift 1 µm (100:1) and 0.35 mm (10,000:1), the light box's sink 0 and 49 µm,
    the overlap down to the slop (0.1 mm). With the block for the velocity rows only, the light box left at
    100:1 (117 mm drift); before either, 138 mm."""
    world, light, heavy = _pair(ratio, z_heavy=0.745)
    drift, sink = _run(world, light, 3.0)
    assert drift < 1e-3
    assert sink < 1e-4
    assert 0.5 - (heavy.position[2] - light.position[2]) < 1.5e-4


def test_blocks_only_where_the_load_path_is_ill_conditioned():
    """The block acts only where two of a body's pairs couple by iL² / ((iL + iA)(iL + iB)) >= BLOCK_COUPLING:
    not in a stack of equal boxes (1/2 at the bottom), so such scenes keep their trajectories bit for bit
    (tests/golden). Bodies: the ground (fixed), the light box, the heavy one; pairs ground–light, light–heavy.
    A compliant pair (a spring, solved by the sweeps) takes no part: with the light–heavy pair compliant, no
    body is light."""
    Pairs = namedtuple("Pairs", ["pair_body", "pair_contacts", "pair_awake", "pair_compliance"])
    pairs = Pairs(np.array([[0, 1], [1, 2]]), np.array([4, 4]), np.array([True, True]), np.zeros(2))
    for ratio, flagged in ((1.0, False), (3.0, False), (4.5, True), (10.0, True)):
        inv_mass = np.array([0.0, 1.0, 1.0 / ratio])
        start, members = load_path.block_bodies(pairs, inv_mass)
        assert load_path.has_light_body(pairs, inv_mass) == (ratio >= load_path.RATIO_MIN)
        assert start.shape[0] - 1 == int(flagged)
        if flagged:   # the light box's block: its two pairs
            assert members.tolist() == [0, 1]
    # more rows than BLOCK_MAX_ROWS: left to the sweeps
    crowded = Pairs(np.array([[0, 1]] * 4 + [[1, 2]]), np.full(5, 4), np.ones(5, dtype=bool), np.zeros(5))
    start, _ = load_path.block_bodies(crowded, np.array([0.0, 1.0, 0.01]))
    assert start.shape[0] == 1
    springy = pairs._replace(pair_compliance=np.array([0.0, 1e-4]))
    start, _ = load_path.block_bodies(springy, np.array([0.0, 1.0, 0.1]))
    assert start.shape[0] == 1 and not load_path.has_light_body(springy, np.array([0.0, 1.0, 0.1]))
