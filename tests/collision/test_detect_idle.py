"""The detector skips worlds where no pair can pass the filter (collision/detect.py, ``idle``)."""

from __future__ import annotations

import tumble as tb


def _world(*bodies: tuple[bool, bool]) -> tb.World:
    """Bodies given as (collide, fixed), 1 m apart along x, overlapping nothing."""
    world = tb.World(gravity=(0.0, 0.0, 0.0))
    for i, (collide, fixed) in enumerate(bodies):
        world.add_body(tb.Box(0.5, 0.5, 0.5), mass=1.0, position=(float(i), 0.0, 0.0), collide=collide, fixed=fixed)
    return world


def _idle(world: tb.World) -> bool:
    return world._method.detector(world.model).idle


def test_idle_only_when_no_pair_can_collide() -> None:
    assert _idle(_world((False, False), (False, False)))
    assert _idle(_world((True, False), (False, False)))      # one colliding body: no partner
    assert _idle(_world((True, True), (True, True)))         # colliding, but nothing moves
    assert not _idle(_world((True, False), (True, True)))
    assert not _idle(_world((True, False), (True, False)))
    world = _world((False, False))
    world.add_ground()
    assert _idle(world)
    world.add_body(tb.Sphere(0.1), mass=1.0, position=(5.0, 0.0, 0.05))
    assert not _idle(world)                                   # added: the detector is rebuilt


def test_an_idle_world_steps_and_a_colliding_one_still_detects() -> None:
    world = _world((False, False), (False, False))
    world.bodies[0].velocity = (1.0, 0.0, 0.0)     # drives through the other: no contact may appear
    for _ in range(100):
        world.step(0.01)
    assert len(world.contacts()) == 0
    assert world.collision_stats["pairs"] == 0
    live = _world((True, False), (True, True))
    live.bodies[0].velocity = (1.0, 0.0, 0.0)
    for _ in range(100):
        live.step(0.01)
    assert live.collision_stats["pairs"] == 1
