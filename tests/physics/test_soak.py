"""A short soak: the demo's 100 mixed bodies (boxes, balls, capsules, cylinders, rocks) poured into its pen
stay finite, inside the pen, at rest, and step in flat memory.

The outside check ran 100,000 steps of 200 bodies; a test has minutes for the whole suite, so this runs the
demo's pour to rest (1,500 steps, 6.25 s simulated), which passes through every contact family, the
islands' sleeping and waking, and the guard's checks on every step.
"""

import gc
import tracemalloc

import numpy as np

from tumble.user.demo import PEN_HALF_WIDTH, build_demo_world

DT = 1.0 / 240.0


def test_the_demo_pour_stays_finite_in_the_pen_and_in_flat_memory():
    world = build_demo_world()
    moving = [b for b in world.bodies if not b.name.startswith(("wall", "ground"))]   # the 100 poured
    for _ in range(500):    # the pour; every buffer reaches its working size
        world.step(DT)
    gc.collect()
    tracemalloc.start()
    base = tracemalloc.get_traced_memory()[0]
    for k in range(1000):
        world.step(DT)
        if k % 100 == 0:
            x = np.array([b.position for b in moving])
            assert np.all(np.isfinite(x))
    gc.collect()
    grown = tracemalloc.get_traced_memory()[0] - base
    tracemalloc.stop()
    # a few kB of Python-level caches at most; a per-step leak of even 100 bytes would be 100 kB here
    assert grown < 64 * 1024, grown
    x = np.array([b.position for b in moving])
    v = np.array([b.velocity for b in moving])
    assert np.all(np.isfinite(x)) and np.all(np.isfinite(v))
    # inside the pen (its walls' inner faces at ±PEN_HALF_WIDTH), above the ground, and settled: the pour
    # comes to rest within the 6 s (a body faster than 0.5 m/s would be one still bouncing or escaping)
    assert np.abs(x[:, :2]).max() < PEN_HALF_WIDTH and x[:, 2].min() > 0.0
    assert np.linalg.norm(v, axis=1).max() < 0.5
