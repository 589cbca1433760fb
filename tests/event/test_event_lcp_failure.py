"""Issue 53: an LCP of the event method that Lemke's method cannot solve (a degenerate problem) is the user-facing
``EventLCPFailed``: it names the stage and what to do, and the world is as before the step. Lemke's failure is
made here by replacing ``lemke_retried`` as the event method calls it (``methods/event.py: solve_lcp``) with one
that reports 'infeasible'; the natural case (three boxes joined by ball joints with collide=True, their end faces
touching) fails only after some dozens of steps, depending on rounding (tests/event/test_event_budget.py)."""

from __future__ import annotations

import numpy as np
import pytest

import tumble as tb
from tumble.methods import event
from tumble.solvers.result import STATUS_NAMES

INFEASIBLE = STATUS_NAMES.index("infeasible")


def _failing_lemke(M, q, regularized, tries, max_pivots, accept, as_lemke):
    n = q.shape[0]
    return np.zeros(n), np.arange(n), 0, INFEASIBLE


def _pose(world: tb.World, bodies) -> tuple:
    return world.time, [(b.position.tolist(), b.orientation.tolist(), b.velocity.tolist(),
                         b.angular_velocity.tolist()) for b in bodies]


def test_a_resting_contact_lcp_lemke_cannot_solve_raises_naming_the_stage_and_is_undone(monkeypatch):
    """A box resting on the ground: its resting-contact LCP fails in the step's first derivative. (Its velocities
    are set to zero after a first step: the rounding of a step leaves its corners closing at ~1e-17 m/s, and the
    plastic impulse LCP of the step's impacts, which comes first, would fail instead.)"""
    world = tb.World(method="event")
    world.add_ground()
    box = world.add_body(tb.Box(0.2, 0.1, 0.1), mass=1.0, position=(0.0, 0.0, 0.05))
    world.step(1 / 60)
    box.velocity, box.angular_velocity = (0.0, 0.0, 0.0), (0.0, 0.0, 0.0)
    before = _pose(world, [box])
    monkeypatch.setattr(event, "lemke_retried", _failing_lemke)
    with pytest.raises(event.EventLCPFailed) as failure:
        world.step(1 / 60)
    error = failure.value
    assert (error.stage, error.status) == ("resting", "infeasible")
    assert error.size >= 4 and error.user_error
    t0 = before[0]
    assert str(error) == (
        f"event method: the resting-contact force (Baraff II 9, with friction) LCP ({error.size} unknowns) in the "
        f"step from t = {t0:.9g} s to {t0 + 1 / 60:.9g} s (at t = {t0:.9g} s) could not be solved: Lemke's method "
        f"ended 'infeasible' on the exact and every regularized problem (a degenerate problem: more contacts, "
        f"friction directions or joints than the degrees of freedom they act on). Use method='timestep' (the "
        f"default), or collide=False on a joint whose bodies touch; the world is as before the step")
    assert _pose(world, [box]) == before
    with pytest.raises(event.EventLCPFailed) as failure:   # simulate keeps the frames so far (user_error)
        world.simulate(0.05, 1 / 60)
    assert len(failure.value.trajectory) == 1
    monkeypatch.undo()
    world.step(1 / 60)     # the world goes on from where it was
    assert world.time == pytest.approx(before[0] + 1 / 60, abs=1e-15)
    assert abs(box.position[2] - 0.05) < 1e-9


def test_an_impact_lcp_lemke_cannot_solve_raises_naming_the_stage_and_is_undone(monkeypatch):
    """A ball 1 mm above the ground at 1 m/s down: the step finds its landing, then the impact LCP fails (with
    friction, then the frictionless one it falls back to)."""
    world = tb.World(method="event")
    world.add_ground()
    ball = world.add_body(tb.Sphere(0.1), mass=1.0, position=(0.0, 0.0, 0.101), velocity=(0.0, 0.0, -1.0))
    before = _pose(world, [ball])
    monkeypatch.setattr(event, "lemke_retried", _failing_lemke)
    with pytest.raises(event.EventLCPFailed) as failure:
        world.step(1 / 60)
    error = failure.value
    assert (error.stage, error.status, error.size) == ("impact", "infeasible", 1)
    assert str(error).startswith("event method: the impact impulse (Baraff II 8) LCP (1 unknowns) in the step from "
                                 "t = 0 s to 0.0166666667 s (at t = ")
    landing = (np.sqrt(1.0 + 2.0 * 9.81 * 0.001) - 1.0) / 9.81      # 1 mm = t + ½ g t² (1 m/s down)
    assert error.when[2] == pytest.approx(landing, abs=1e-9)
    assert "Use method='timestep' (the default), or event_impacts='sequential'" in str(error)
    assert _pose(world, [ball]) == before
