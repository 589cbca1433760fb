"""Coulomb friction at acceleration level in the event-driven method, against closed forms."""

from __future__ import annotations

import numpy as np
import pytest

import tumble as tb

G = 9.81
DT = 1.0 / 240.0


def _box_on_ground(mu: float, **body):
    world = tb.World(method="event", event_impacts="sequential")
    world.add_ground(friction=mu)
    box = world.add_body(tb.Box(0.2, 0.2, 0.2), mass=1.0, position=(0, 0, 0.1), friction=mu, **body)
    return world, box


def _run(world, seconds):
    for _ in range(round(seconds / DT)):
        world.step(DT)


def test_a_sliding_box_decelerates_at_mu_g_and_stops():
    """v0 = 2 m/s, μ = 0.5: x(t) = v0 t − ½ μ g t² (to 1e-9 at t = 0.2 s: RK4 is exact for the quadratic),
    then it stops at v0²/(2 μ g) (to 1e-6: the stop is found to a speed within threshold/2 = 5e-4 m/s,
    which it would travel ~(5e-4)²/(2 μ g) ≈ 3e-8 m further) and stays."""
    mu, v0 = 0.5, 2.0
    world, box = _box_on_ground(mu, velocity=(v0, 0.0, 0.0))
    _run(world, 0.2)
    t = world.time
    assert box.position[0] == pytest.approx(v0 * t - 0.5 * mu * G * t**2, abs=1e-9)
    assert box.velocity[0] == pytest.approx(v0 - mu * G * t, abs=1e-9)
    assert abs(box.position[2] - 0.1) < 1e-9 and np.linalg.norm(box.angular_velocity) < 1e-9
    _run(world, 0.5)
    assert box.position[0] == pytest.approx(v0**2 / (2 * mu * G), abs=1e-6)
    assert np.linalg.norm(box.velocity) < 1e-9
    friction = world.contacts().force[:, :2].sum(axis=0)
    assert np.linalg.norm(friction) < 1e-9          # at rest, nothing pushes: no friction


@pytest.mark.parametrize("push, moves", [(0.3, False), (0.8, True)], ids=["sticks", "slips"])
def test_a_pushed_box_sticks_below_mu_m_g_and_slips_above(push, moves):
    """A horizontal force p m g at the centre, μ = 0.5: p = 0.3 is held by static friction (the box does
    not move; friction = −p m g along x, exactly: x is one of the octagon's directions); p = 0.8 slips
    from rest at once with a = (p − μ) g."""
    mu = 0.5
    world, box = _box_on_ground(mu)
    world.add_force(lambda w, t: box.apply_force((push * G, 0.0, 0.0)))
    _run(world, 0.3)
    t = world.time
    if moves:
        assert box.position[0] == pytest.approx(0.5 * (push - mu) * G * t**2, abs=1e-9)
    else:
        assert np.linalg.norm(box.position - [0, 0, 0.1]) < 1e-12
        box.apply_force((push * G, 0.0, 0.0))
        world._method.last_contacts = None
        assert world.contacts().force[:, 0].sum() == pytest.approx(-push * G, rel=1e-9)
    assert np.linalg.norm(box.angular_velocity) < 1e-9


@pytest.mark.parametrize("mu", [0.3, 0.5])
def test_incline_with_friction(mu):
    """A box on a fixed slab tilted 20°: μ = 0.3 < tan 20° slides at g (sin θ − μ cos θ) (1e-6); μ = 0.5
    sticks (no motion to 1e-12 m)."""
    theta = np.radians(20.0)
    q = np.array([np.cos(theta / 2), 0.0, np.sin(theta / 2), 0.0])
    normal = np.array([np.sin(theta), 0.0, np.cos(theta)])
    world = tb.World(method="event", event_impacts="sequential")
    world.add_body(tb.Box(4.0, 4.0, 0.2), position=(0, 0, 0), orientation=q, fixed=True, friction=mu)
    box = world.add_body(tb.Box(0.2, 0.2, 0.2), mass=1.0, position=0.2 * normal, orientation=q, friction=mu)
    start = box.position
    _run(world, 0.5)
    d = box.position - start
    if mu < np.tan(theta):
        downhill = np.array([np.cos(theta), 0.0, -np.sin(theta)])
        a = 2.0 * (d @ downhill) / world.time**2
        assert a == pytest.approx(G * (np.sin(theta) - mu * np.cos(theta)), rel=1e-6)
    else:
        assert np.linalg.norm(d) < 1e-12
    assert np.linalg.norm(box.angular_velocity) < 1e-9


def test_a_spinning_box_stops_turning_at_the_coulomb_rate():
    """A box spinning about z on the ground, μ = 0.5: each corner slides on its circle, so friction
    μ m g / 4 at r = 0.1√2 m from the axis at each of 4 corners gives the torque μ m g r and
    ω(t) = ω0 − μ m g r t / I_z (I_z = m (0.2² + 0.2²)/12), to 1e-9 at 0.03 s; it stops at ω0 I_z/(μ m g r)
    and stays (each contact's slide turns back at the same instant: one stop search).

    Friction is tracked per contact, not per pair: the corners' mean tangential velocity is zero for a
    spin about the centre, so a per-pair rule took the spinning box for a resting one and let it spin."""
    mu, w0 = 0.5, 5.0
    world, box = _box_on_ground(mu, angular_velocity=(0.0, 0.0, w0))
    r, inertia = 0.1 * np.sqrt(2.0), (0.04 + 0.04) / 12.0
    rate = mu * G * r / inertia
    _run(world, 0.03)
    assert box.angular_velocity[2] == pytest.approx(w0 - rate * world.time, abs=1e-9)
    assert np.linalg.norm(box.velocity) < 1e-9
    _run(world, 0.1)
    # stopped to the stop speed 1e-9 m/s at the corners (r = 0.14 m): |ω| ≤ 7.1e-9 rad/s, kept by sticking
    assert np.linalg.norm(box.angular_velocity) < 7.1e-9
    angle = 2.0 * np.arctan2(box.orientation[3], box.orientation[0])
    assert angle == pytest.approx(w0**2 / (2.0 * rate), abs=1e-6)
