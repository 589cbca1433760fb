"""A joint's motor and breaking force assigned while it is in a world take effect from the next step."""

from __future__ import annotations

import numpy as np
import pytest

import tumble as tb

G = 9.81


def _rod(motor=None):
    """A 1 kg, 1 m rod hinged at one end about y, in zero gravity (no load on the motor)."""
    world = tb.World(gravity=(0, 0, 0))
    rod = world.add_body(tb.Box(1.0, 0.1, 0.1), mass=1.0, position=(0.5, 0, 0))
    joint = world.add_joint(tb.HingeJoint(rod, None, (0, 0, 0), (0, 1, 0), motor=motor))
    return world, rod, joint


def test_motor_assigned_in_the_world_drives_then_releases():
    world, rod, joint = _rod(motor=(2.0, 50.0))
    for _ in range(60):
        world.step(1 / 240)
    assert rod.angular_velocity[1] == pytest.approx(2.0, abs=1e-4)   # SHAKE moves it by ~1e-5 (test_joints)
    joint.motor = (-1.0, 50.0)                  # a new target: reached within the next step
    for _ in range(60):
        world.step(1 / 240)
    assert rod.angular_velocity[1] == pytest.approx(-1.0, abs=1e-4)
    joint.motor = None                          # released: set turning at 0.5 rad/s with no load, it keeps
    rod.angular_velocity = (0.0, 0.5, 0.0)      # that speed (a motor left on would pull it back to −1)
    rod.velocity = tuple(np.cross((0.0, 0.5, 0.0), rod.position))
    for _ in range(60):
        world.step(1 / 240)
    assert rod.angular_velocity[1] == pytest.approx(0.5, abs=1e-4)
    assert joint.motor is None
    world2, rod2, joint2 = _rod()               # a motor added to a hinge that had none
    joint2.motor = (3.0, 50.0)
    for _ in range(60):
        world2.step(1 / 240)
    assert rod2.angular_velocity[1] == pytest.approx(3.0, abs=1e-4)


def test_motor_released_under_load_lets_the_rod_fall_freely():
    # A motor holds the rod horizontal against gravity (its impulse carries m g L/2 = 4.9 N·m); released,
    # the rod swings down with α = m g (L/2) / I_hinge, I_hinge = m (L² + w²)/12 + m (L/2)². A motor impulse
    # left in the warm start would keep holding it.
    world = tb.World()
    rod = world.add_body(tb.Box(1.0, 0.1, 0.1), mass=1.0, position=(0.5, 0, 0))
    joint = world.add_joint(tb.HingeJoint(rod, None, (0, 0, 0), (0, 1, 0), motor=(0.0, 1e3)))
    for _ in range(24):
        world.step(1 / 240)
    assert abs(rod.angular_velocity[1]) < 1e-6
    joint.motor = None
    n = 10
    for _ in range(n):
        world.step(1 / 240)
    alpha = 1.0 * G * 0.5 / ((1.0 + 0.01) / 12 + 0.25)
    # the rod turns by ~3e-3 rad in these steps: the torque arm changes by < 1e-5 (relative)
    assert rod.angular_velocity[1] == pytest.approx(alpha * n / 240, rel=1e-3)


def test_break_force_assigned_in_the_world():
    world = tb.World()
    body = world.add_body(tb.Sphere(0.1), mass=2.0, position=(0, 0, -0.5))
    joint = world.add_joint(tb.BallJoint(body, None, (0, 0, 0)))
    for _ in range(24):
        world.step(1 / 240)
    assert not joint.broken
    joint.break_force = 0.5 * 2.0 * G           # below the static load m g: breaks after the next step
    world.step(1 / 240)
    assert joint.broken
    np.testing.assert_allclose(joint.break_force, 0.5 * 2.0 * G)


def test_bad_parameters_raise_and_change_nothing():
    world, rod, joint = _rod(motor=(2.0, 5.0))
    with pytest.raises(ValueError, match="motor"):
        joint.motor = (1.0, -1.0)
    with pytest.raises(TypeError, match="motor"):
        joint.motor = "fast"
    with pytest.raises(ValueError, match="break_force"):
        joint.break_force = -1.0
    assert joint.motor == (2.0, 5.0) and joint.break_force == float("inf")
    ball = world.add_body(tb.Sphere(0.1), position=(0, 0, -2))
    ball_joint = world.add_joint(tb.BallJoint(ball, None, (0, 0, -1.5)))
    with pytest.raises(ValueError, match="hinge or slider"):
        ball_joint.motor = (1.0, 1.0)


def test_limits_assigned_in_the_world_stop_then_free_the_rod():
    # The rod spins at 1 rad/s in zero gravity. Limits (−0.2, 0.2) assigned at angle ~0 stop it at 0.2 rad
    # (the bound holds within 1e-3 rad, as in test_joints); removed, the rod turns freely past the bound.
    world, rod, joint = _rod()
    rod.angular_velocity = (0.0, 1.0, 0.0)
    rod.velocity = (0.0, 0.0, -0.5)             # v = ω × r with r = (0.5, 0, 0)
    world.step(1 / 240)
    joint.limits = (-0.2, 0.2)
    angles = []
    for _ in range(120):                        # 0.5 s: it would reach 0.5 rad unlimited
        world.step(1 / 240)
        angles.append(joint.angle)
    assert max(angles) == pytest.approx(0.2, abs=1e-3)
    joint.limits = None
    start = joint.angle
    rod.angular_velocity = (0.0, 1.0, 0.0)
    rod.velocity = tuple(np.cross((0.0, 1.0, 0.0), rod.position))
    for _ in range(120):
        world.step(1 / 240)
    assert joint.angle == pytest.approx(start + 0.5, abs=2e-3)     # past 0.2: the limit is gone


def test_compliance_assigned_in_the_world_sags_by_m_g_c():
    # As test_joints' compliant joint, but made soft after 1 s of hanging rigid (ArtiSynth notes 0.11).
    c, m = 1e-4, 2.0
    world = tb.World()
    body = world.add_body(tb.Sphere(0.1), mass=m, position=(0, 0, -0.5))
    joint = world.add_joint(tb.BallJoint(body, None, (0, 0, 0)))
    for _ in range(240):
        world.step(1 / 240)
    assert body.position[2] == pytest.approx(-0.5, abs=1e-9)
    joint.compliance = c
    joint.damping = 200.0
    for _ in range(720):
        world.step(1 / 240)
    assert body.position[2] == pytest.approx(-0.5 - m * G * c, rel=1e-6)
    with pytest.raises(ValueError, match="compliance"):
        joint.compliance = -1.0
    assert joint.compliance == c
