"""A few shapes' detection in one call (collision/detect.py, ``serial_pairs``): AABBs, sweep and sort and the pair
rows, against the same stages called one by one, which a detector's first call takes (its broadphase has no rows
yet). Both read the same last step's buffer (its witnesses: the boxes' separating axes), so both ways must give
the same numbers, bit for bit."""

from __future__ import annotations

import numpy as np

import tumble as tb
from tumble.collision.contacts import ContactBuffer
from tumble.collision.detect import CollisionDetector
from tumble.model.fields import WITNESS_NONE

DT = 1.0 / 240.0


def _scene(rng: np.random.Generator) -> tb.World:
    world = tb.World(gravity=(0.0, 0.0, 0.0))
    for i in range(24):
        shape = (tb.Sphere(0.1), tb.Capsule(0.05, 0.2), tb.Box(0.2, 0.1, 0.15))[i % 3]
        world.add_body(shape, mass=1.0, position=tuple(rng.uniform(-2.0, 2.0, 3) + (0.0, 0.0, 2.5)),
                       velocity=tuple(rng.uniform(-1.0, 1.0, 3)), angular_velocity=tuple(rng.uniform(-3.0, 3.0, 3)))
    world.add_ground()
    return world


def _rows(buffer: ContactBuffer) -> dict[str, np.ndarray]:
    p, s = buffer.pairs, buffer.slots
    fields = {name: p.live(name).copy() for name in ("pair_key", "pair_geom", "pair_body", "pair_contacts",
                                                      "pair_awake", "pair_friction", "pair_witness")}
    used = np.concatenate([4 * k + np.arange(c) for k, c in enumerate(p.live("pair_contacts"))]
                          + [np.zeros(0, dtype=np.int64)]).astype(np.int64)
    for name in ("point", "normal", "depth", "feature"):
        fields[name] = s.live(name)[used].copy()
    return fields


def test_one_call_detection_equals_the_stages_one_by_one_through_growth() -> None:
    """The shapes close in on each other over 40 steps (pairs 0 → hundreds): the step's buffer (capacity 1) and
    the pair table (sized for 4 pairs a shape) grow on the way, and every step the one-call rows must equal a fresh
    detector's, which sorts from scratch and calls the stages one by one."""
    rng = np.random.default_rng(7)
    world = _scene(rng)
    model, state = world.model, world._state
    start = np.array([b.position for b in world.bodies[:24]])
    detector = CollisionDetector(model)
    now, last = ContactBuffer(1), ContactBuffer(1)
    fused_steps, table = 0, detector._broadphase._table_keys.shape[0]
    for step, scale in enumerate(np.linspace(1.0, 0.02, 40)):
        for i, body in enumerate(world.bodies[:24]):
            body.position = tuple((start[i] - (0.0, 0.0, 2.5)) * scale + (0.0, 0.0, 2.5 * scale))
        detector.update(model, state, now, last, DT)
        fused_steps += detector.stats["seconds_aabb"] == 0.0
        reference = ContactBuffer(1)
        CollisionDetector(model).update(model, state, reference, last, DT)
        got, want = _rows(now), _rows(reference)
        for name, value in want.items():
            np.testing.assert_array_equal(got[name], value, err_msg=f"{name} at step {step}")
        now, last = last, now
    # one call in most steps; the first call and the steps that grew the buffer or the table took the stages one
    # by one (26 and 14 of 40 here: both ways are checked above)
    assert 20 <= fused_steps < 39
    assert _rows(last)["pair_key"].shape[0] > 100
    assert now.pairs.capacity >= 64 and detector._broadphase._table_keys.shape[0] > table   # both grew


def test_one_call_detection_follows_a_change_of_the_excluded_pairs() -> None:
    """The one-call detection keeps its arguments from step to step (``CollisionDetector._held_args``); a joint
    made between two touching bodies (collide=False by default) excludes their pair from the next detection, as a
    fresh detector's, and the pair comes back once the joint is removed."""
    world = tb.World(gravity=(0.0, 0.0, 0.0))
    a = world.add_body(tb.Sphere(0.1), mass=1.0, position=(0.0, 0.0, 1.0))
    b = world.add_body(tb.Sphere(0.1), mass=1.0, position=(0.15, 0.0, 1.0))
    world.add_body(tb.Sphere(0.1), mass=1.0, position=(0.0, 0.15, 1.0))
    model, state = world.model, world._state
    detector = CollisionDetector(model)
    now, last = ContactBuffer(8), ContactBuffer(8)
    keys = []
    for step in range(10):
        if step == 5:
            joint = world.add_joint(tb.BallJoint(a, b, (0.075, 0.0, 1.0)))
        if step == 8:
            world.remove_joint(joint)
        detector.update(model, state, now, last, DT)
        reference = ContactBuffer(8)
        CollisionDetector(model).update(model, state, reference, last, DT)
        np.testing.assert_array_equal(_rows(now)["pair_key"], _rows(reference)["pair_key"], err_msg=f"step {step}")
        keys.append(len(_rows(now)["pair_key"]))
        now, last = last, now
    # every pair's AABBs overlap; the jointed one is left out while the joint is there
    assert keys == [3, 3, 3, 3, 3, 2, 2, 2, 3, 3]


def test_one_call_detection_carries_witnesses_while_the_pair_count_changes() -> None:
    """Boxes a few cm apart (their AABBs overlap) keep their separating-axis witnesses from step to step while a
    sphere passing by makes the number of pairs change from step to step (the buffers keep their capacity): each
    step's rows, witnesses included, and the tests the witnesses decided alone equal a fresh detector's reading
    the same last step (its held arguments follow the last step's count)."""
    world = tb.World(gravity=(0.0, 0.0, 0.0))
    for i in range(4):
        world.add_body(tb.Box(0.2, 0.2, 0.2), mass=1.0, position=(0.235 * i, 0.02 * i, 1.0),
                       orientation=(np.cos(0.1 * i), 0.0, 0.0, np.sin(0.1 * i)))
    ball = world.add_body(tb.Sphere(0.1), mass=1.0, position=(-1.0, 0.0, 1.2))
    model, state = world.model, world._state
    detector = CollisionDetector(model)
    now, last = ContactBuffer(64), ContactBuffer(64)
    counts, witnessed, decided = [], [], []
    for step in range(16):
        ball.position = (-0.6 + 0.13 * step, 0.0, 1.2 if step % 3 else 1.6)
        detector.update(model, state, now, last, DT)
        reference = ContactBuffer(64)
        fresh = CollisionDetector(model)
        fresh.update(model, state, reference, last, DT)
        got, want = _rows(now), _rows(reference)
        for name, value in want.items():
            np.testing.assert_array_equal(got[name], value, err_msg=f"{name} at step {step}")
        # a carried witness shows in the tests it decided alone (the contacts are the same either way)
        assert detector.stats["witness_decided"] == fresh.stats["witness_decided"], f"step {step}"
        decided.append(detector.stats["witness_decided"])
        counts.append(len(got["pair_key"]))
        witnessed.append(int(np.sum(got["pair_witness"][:, 0] != WITNESS_NONE)))
        now, last = last, now
    assert len(set(counts)) >= 3 and now.pairs.capacity == 64   # the count changed, the capacity did not
    assert min(witnessed[1:]) >= 2 and min(decided[1:]) >= 2          # the box pairs carried their witnesses


def test_one_call_detection_follows_a_buffer_that_grew() -> None:
    """Fourteen spheres spread out (three touching pairs), five of them gathered for one step (ten pairs, beyond
    the buffers' four rows, so that step's buffer grows; the pair table has room) and spread again: the same
    number of pairs before and after, and the grown buffer's arguments must follow its new arrays."""
    world = tb.World(gravity=(0.0, 0.0, 0.0))
    spread = [(0.5 * i, 0.0, 1.0) for i in range(14)]
    spread[1], spread[3], spread[5] = (0.15, 0.0, 1.0), (1.15, 0.0, 1.0), (2.15, 0.0, 1.0)
    gathered = [(0.01 * i, 0.0, 1.0) for i in range(5)] + spread[5:]
    balls = [world.add_body(tb.Sphere(0.1), mass=1.0, position=p) for p in spread]
    model, state = world.model, world._state
    detector = CollisionDetector(model)
    now, last = ContactBuffer(4), ContactBuffer(4)
    counts, tables = [], set()
    for step in range(8):
        for ball, p in zip(balls, gathered if step == 4 else spread, strict=True):
            ball.position = p
        detector.update(model, state, now, last, DT)
        tables.add(detector._broadphase.table_capacity)
        reference = ContactBuffer(4)
        CollisionDetector(model).update(model, state, reference, last, DT)
        got, want = _rows(now), _rows(reference)
        for name, value in want.items():
            np.testing.assert_array_equal(got[name], value, err_msg=f"{name} at step {step}")
        counts.append(len(got["pair_key"]))
        now, last = last, now
    assert counts == [3, 3, 3, 3, 10, 3, 3, 3]
    assert max(now.pairs.capacity, last.pairs.capacity) >= 10 and len(tables) == 1
