"""Islands and sleeping (constraints/islands.py) and body removal.

Closed forms used: a body at rest on the ground carries its weight, Σ f_n = m g; a box released in
free fall from rest has fallen ½ g t² after t; the physics of awake bodies does not depend on the sleep
setting, so the trajectories with ``sleep=True`` and ``sleep=False`` agree bitwise until the first island
falls asleep.
"""

from __future__ import annotations

import numpy as np
import pytest

import tumble as tb

DT = 1.0 / 240.0
G = 9.81


def _pile(**options) -> tuple[tb.World, list[tb.Body]]:
    """A 3-box stack and two boxes side by side on the ground, dropped from 1 cm: an island of 3 and two
    islands of 1 (the ground joins none)."""
    world = tb.World(gravity=(0.0, 0.0, -G), **options)
    boxes = [world.add_body(tb.Box(0.5, 0.5, 0.5), mass=1.0, position=(0.0, 0.0, 0.26 + 0.51 * i))
             for i in range(3)]
    boxes += [world.add_body(tb.Box(0.5, 0.5, 0.5), mass=2.0, position=(1.0 + 0.6 * i, 0.0, 0.26))
              for i in range(2)]
    world.add_ground()
    return world, boxes


def _run(world: tb.World, steps: int) -> None:
    for _ in range(steps):
        world.step(DT)


def test_settled_pile_sleeps_and_keeps_its_forces(monkeypatch):
    # The full steps of a sleeping world (the skip of methods/timestepping._asleep_step would run no detection at all; a
    # sleeping island beside an awake one takes these full steps).
    monkeypatch.setattr(tb.methods.timestepping, "QUIET_WORLD_SKIP", False)
    world, boxes = _pile()
    _run(world, 480)  # 2 s: settled within ~0.5 s, then quiet for sleep_time = 0.5 s
    assert not any(b.awake for b in boxes)
    assert world.step_stats.sleeping == 5
    assert all(np.all(b.velocity == 0.0) and np.all(b.angular_velocity == 0.0) for b in boxes)
    x_asleep = np.array([b.position for b in boxes])
    _run(world, 120)
    # Asleep, nothing moves at all (not even by rounding).
    np.testing.assert_array_equal(np.array([b.position for b in boxes]), x_asleep)
    # Asleep, the narrowphase skips the pairs and keeps their contacts: the stack's two box–box pairs take no
    # polytope test, and the kept contacts are the ones a fresh detection of the same state finds.
    assert world.collision_stats["polytope_tests"] == 0
    c, fresh = world.contacts(), world.detect_contacts()
    order, fresh_order = np.lexsort(c.point.T), np.lexsort(fresh.point.T)
    np.testing.assert_array_equal(c.point[order], fresh.point[fresh_order])
    np.testing.assert_array_equal(c.depth[order], fresh.depth[fresh_order])
    # The sleeping contacts still carry the weights: the ground holds 3 × 1 kg + 2 × 2 kg.
    ground = world.body("ground").index
    on_ground = c.body_b == ground
    total = c.force[on_ground, 2].sum()
    # 0.5%: the impulses were recycled from the last awake step, whose solve is converged to ~1e-4.
    assert total == pytest.approx(7.0 * G, rel=5e-3)


def test_sleep_false_gives_identical_physics_while_awake():
    asleep, boxes_a = _pile()
    awake, boxes_b = _pile(sleep=False)
    for _ in range(480):
        asleep.step(DT)
        awake.step(DT)
        if not all(b.awake for b in boxes_a):
            break
        # Bitwise: the island pass changes nothing while no island sleeps.
        np.testing.assert_array_equal(asleep.state_arrays()["x"], awake.state_arrays()["x"])
        np.testing.assert_array_equal(asleep.state_arrays()["v"], awake.state_arrays()["v"])
    else:
        pytest.fail("the pile never fell asleep in 2 s")
    _run(asleep, 240)
    _run(awake, 240)
    assert all(b.awake for b in boxes_b)
    # After sleeping, the figures match: the bodies slept where the awake run keeps them, within 0.1 mm
    # (what a settled box still creeps in the awake run at sleep_speed = 1 cm/s is far less; the rest
    # is the solver's sub-millimetre settling).
    np.testing.assert_allclose(asleep.state_arrays()["x"], awake.state_arrays()["x"], atol=1e-4)


def test_a_dropped_body_wakes_the_pile_it_lands_on():
    world, boxes = _pile()
    _run(world, 480)
    assert not any(b.awake for b in boxes)
    top = boxes[2].position
    dropped = world.add_body(tb.Box(0.5, 0.5, 0.5), mass=1.0, position=top + (0.0, 0.0, 1.0))
    _run(world, 24)  # 0.1 s: falls 4.9 cm, far from the pile's contact margin
    assert not any(b.awake for b in boxes[:3])
    # Free fall from rest under sub-stepped symplectic Euler: ½ g t² to O(h); 1e-3 m covers the O(h) term.
    assert dropped.position[2] == pytest.approx(top[2] + 1.0 - 0.5 * G * 0.1 ** 2, abs=1e-3)
    _run(world, 96)  # 0.4 s later it has landed (fall time √(2 · 0.49 / g) = 0.32 s)
    assert all(b.awake for b in boxes[:3])
    # The other two boxes are islands of their own: untouched, they sleep on.
    assert not boxes[3].awake and not boxes[4].awake
    assert dropped.position[2] > top[2] + 0.45  # it rests on the stack


def _sleep_then_drop(skip: bool, monkeypatch) -> tuple[dict, tb.Contacts, list[int]]:
    """The pile falls asleep, sleeps 0.5 s, and a box dropped on the stack wakes it; returns the end state,
    the end contacts and the solver iterations of every step."""
    monkeypatch.setattr(tb.methods.timestepping, "QUIET_WORLD_SKIP", skip)
    world, boxes = _pile()
    iterations = []
    for _ in range(600):
        world.step(DT)
        iterations.append(world.step_stats.iterations)
    world.add_body(tb.Box(0.5, 0.5, 0.5), mass=1.0, position=boxes[2].position + (0.0, 0.0, 0.6))
    for _ in range(240):
        world.step(DT)
    return world.state_arrays(), world.contacts(), iterations


def test_a_sleeping_world_skips_its_steps_and_wakes_bitwise_as_the_full_steps(monkeypatch):
    """A step of a world whose moving bodies all sleep is skipped (methods/timestepping._asleep_step). The full
    step would have changed nothing, so the run through sleep and a wake-up by a dropped box is bitwise the same."""
    state, contacts, iterations = _sleep_then_drop(True, monkeypatch)
    full_state, full_contacts, full_iterations = _sleep_then_drop(False, monkeypatch)
    for key in ("x", "q", "v", "w"):
        np.testing.assert_array_equal(state[key], full_state[key])
    np.testing.assert_array_equal(contacts.point, full_contacts.point)
    # The reported forces agree to rounding, not bitwise: a full step of a sleeping pair re-projects its kept
    # friction impulse onto the rebuilt tangent basis (a change in the last bits, measured 1e-14 N of 9 N),
    # which the skipped step leaves as the last awake step solved it.
    np.testing.assert_allclose(contacts.force, full_contacts.force, rtol=0.0, atol=1e-12)
    # The skip happened: the full steps ran the solver while the world slept, the skipped ones did not.
    asleep = [k for k in range(600) if iterations[k] == 0]
    assert len(asleep) > 100 and all(full_iterations[k] > 0 for k in asleep)


def test_a_skipped_step_keeps_the_sleeping_contact_forces_whatever_its_dt():
    """The kept impulses were solved with the last awake step's dt: the forces stay impulse / that dt, so the
    ground still carries the pile's weight 7 g (0.5 %, as above) after skipped steps of another dt."""
    world, boxes = _pile()
    _run(world, 600)
    assert not any(b.awake for b in boxes)
    world.step(DT / 2)
    world.step(DT * 3)
    assert world.step_stats.iterations == 0 and world.step_stats.contacts == 20
    c = world.contacts()
    total = c.force[c.body_b == world.body("ground").index, 2].sum()
    assert total == pytest.approx(7.0 * G, rel=5e-3)


def test_loads_velocities_moves_and_gravity_wake():
    world, boxes = _pile()
    _run(world, 480)
    boxes[3].apply_force((5.0, 0.0, 0.0))
    assert boxes[3].awake
    x0 = boxes[3].position
    world.step(DT)
    assert boxes[3].position[0] > x0[0]
    boxes[4].velocity = (0.0, 0.0, 0.0)   # a zero velocity is no push
    assert not boxes[4].awake
    boxes[4].angular_velocity = (0.0, 0.0, 1.0)
    assert boxes[4].awake
    world.gravity = (0.0, 0.0, -2.0 * G)
    assert all(b.awake for b in boxes)


def test_a_body_put_to_sleep_by_hand_wakes_when_sleep_is_off():
    """With sleep=False nothing sleeps: a body put to sleep by hand is woken by the next step, and its
    contacts are solved in that step (it does not sink into the ground for a step)."""
    world = tb.World(sleep=False)
    world.add_ground()
    box = world.add_body(tb.Box(0.2, 0.2, 0.2), mass=1.0, position=(0.0, 0.0, 0.1))
    _run(world, 120)
    z = box.position[2]
    box.awake = False
    world.step(DT)
    assert box.awake
    # Resting: it moves by rounding only (a step unsolved would sink it by g dt² = 0.17 mm).
    assert abs(box.position[2] - z) < 1e-6


def test_awake_setter():
    world, boxes = _pile()
    boxes[3].velocity = (1.0, 0.0, 0.0)
    boxes[3].awake = False
    assert not boxes[3].awake and np.all(boxes[3].velocity == 0.0)
    boxes[3].awake = True
    assert boxes[3].awake
    with pytest.raises(TypeError, match="awake"):
        boxes[3].awake = 1
    with pytest.raises(ValueError, match="fixed"):
        world.body("ground").awake = False
    assert world.body("ground").awake


def test_snapshot_restore_keeps_the_sleep_state():
    world, boxes = _pile()
    _run(world, 480)
    snap = world.snapshot()
    boxes[0].apply_impulse((0.0, 0.0, 1.0))
    _run(world, 10)
    world.restore(snap)
    assert not any(b.awake for b in boxes)
    x = world.state_arrays()["x"]
    _run(world, 10)
    np.testing.assert_array_equal(world.state_arrays()["x"], x)


def test_bad_sleep_options():
    with pytest.raises(ValueError, match="sleep_time"):
        tb.World(sleep_time=0.0)
    with pytest.raises(ValueError, match="sleep_speed"):
        tb.World(sleep_speed=-1.0)
    with pytest.raises(TypeError, match="sleep"):
        tb.World(sleep="yes")


# ---------------------------------------------------------------------------------------------- removal


def test_remove_body_renumbers_handles_and_drops_the_support():
    world, boxes = _pile()
    _run(world, 480)
    named = world.add_body(tb.Sphere(0.1), position=(5.0, 5.0, 0.1), name="ball")
    bottom, middle, top = boxes[:3]
    z_middle = middle.position[2]
    kept = {middle: "middle", top: "top"}
    world.remove_body(bottom)
    assert kept[middle] == "middle" and kept[top] == "top"  # handles stay usable as keys
    assert bottom not in (middle, top)
    assert world.body_count == 6
    assert [b.index for b in world.bodies] == list(range(6))
    assert middle.index == 0 and top.index == 1 and world.body("ball") is named and named.index == 5
    with pytest.raises(ValueError, match="removed"):
        bottom.position  # noqa: B018 (the property raises)
    with pytest.raises(ValueError, match="live body"):
        world.remove_body(bottom)
    with pytest.raises(TypeError, match="Body"):
        world.remove_body(3)
    assert middle.awake and top.awake
    # The support is gone: the two boxes fall onto the ground and rest there, the 0.5 m boxes' centres at
    # 0.25 m and 0.75 m (1 mm: the solver's penetration and slop are below 0.2 mm per contact).
    _run(world, 240)
    assert z_middle > 0.7
    assert middle.position[2] == pytest.approx(0.25, abs=1e-3)
    assert top.position[2] == pytest.approx(0.75, abs=1e-3)
    assert len(world.contacts()) > 0


def test_remove_body_from_another_world_is_refused():
    world, boxes = _pile()
    other, _ = _pile()
    with pytest.raises(ValueError, match="this world"):
        other.remove_body(boxes[0])
    assert other.body_count == 6
