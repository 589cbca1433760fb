"""Joints in the event-driven method (constraints/joint_dense.py): the jointed system's inverse mass W in the
impacts and the resting-contact LCP, the joints' force in every derivative, projection after each step.
Against closed forms: a pendulum's exact period, a hinged rod's rebound apex sin θ₁ = e² sin θ₀, static
equilibrium of a rod resting on a support with and without friction."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.special import ellipk

import tumble as tb
from tumble.rotations import axis_angle_to_quat, quat_rotate

G = 9.81


def _hinged_rod(world, tilt: float, **material):
    """A 1 × 0.1 × 0.1 m, 1 kg rod hinged to the world about y at its end (the origin), its far end raised
    by ``tilt`` [rad]."""
    rod = world.add_body(tb.Box(1.0, 0.1, 0.1), mass=1.0, **material)
    q = axis_angle_to_quat([0, 1, 0], -tilt)
    rod.orientation = q
    rod.position = quat_rotate(q, [0.5, 0, 0])
    return rod, world.add_joint(tb.HingeJoint(rod, None, (0, 0, 0), (0, 1, 0)))


def _angle(rod) -> float:
    return float(np.arctan2(rod.position[2], rod.position[0]))


def test_pendulum_keeps_the_elliptic_period():
    # Released horizontal (90° amplitude), no contacts: the constraint forces make the motion exact up to
    # rk4's error. Half periods from successive zero crossings of the angle from the downward vertical:
    # measured 1e-9 relative; energy drift 2.6e-9 of m g L/2; joint error 3e-11 m.
    world = tb.World(method="event", event_impacts="sequential")
    rod, joint = _hinged_rod(world, 0.0)
    i_pivot = (0.1**2 + 1.0) / 12 + 0.25
    period = 2 * np.pi * np.sqrt(i_pivot / (G * 0.5)) * 2 / np.pi * ellipk(np.sin(np.pi / 4) ** 2)
    e0, drift, times, swing = world.energy(), 0.0, [], []
    for _ in range(int(1.2 * period * 240)):
        world.step(1 / 240)
        times.append(world.time)
        swing.append(np.arctan2(rod.position[0], -rod.position[2]))
        drift = max(drift, abs(world.energy() - e0))
    t, a = np.array(times), np.array(swing)
    i = np.nonzero(np.sign(a[:-1]) != np.sign(a[1:]))[0]
    crossings = t[i] - a[i] * (t[i + 1] - t[i]) / (a[i + 1] - a[i])
    assert len(crossings) >= 2
    assert np.diff(crossings) == pytest.approx(period / 2, rel=1e-6)
    assert drift < 1e-7 * G * 0.5
    assert joint.error < 1e-9


def test_hinged_rod_rebounds_to_e_squared_and_rests_on_half_its_weight():
    # The rod falls from 0.3 rad onto a frictionless support under its far end (e = 0.5 on both). The impact
    # acts through the hinge (all impacts at once, with W): ω⁺ = −e ω⁻ exactly, so each rebound rises to
    # sin θ₁ = e² sin θ₀. Apexes sampled every 1/240 s miss the true one by at most ½ α (dt/2)² ≈ 3e-5 rad
    # (α = m g L/2 / I_pivot ≈ 14.7 rad/s²): 4e-4 and 1.7e-3 of the first two; measured 3.6e-4 and 1.0e-3.
    # At rest (Zeno ended by the plastic pass) the rod is in equilibrium: the support's forces' moment about
    # the hinge balances gravity's, m g L/2, and with the hinge's force they carry m g (to 1e-9).
    e, tilt = 0.5, 0.3
    world = tb.World(method="event", event_impacts="sequential")
    world.add_body(tb.Box(0.4, 0.4, 0.2), fixed=True, position=(1.0, 0, -0.15), restitution=e, friction=0.0)
    rod, joint = _hinged_rod(world, tilt, restitution=e, friction=0.0)
    angles, impacts = [], []
    for _ in range(240):
        world.step(1 / 240)
        angles.append(_angle(rod))
        impacts.append(world._method.stats.collisions)
    hits = np.flatnonzero(impacts)
    angles = np.array(angles)
    assert angles[hits[0]:hits[1]].max() == pytest.approx(np.arcsin(e**2 * np.sin(tilt)), rel=1e-3)
    assert angles[hits[1]:hits[2]].max() == pytest.approx(np.arcsin(e**4 * np.sin(tilt)), rel=3e-3)
    # at rest: measured 1.3e-10 rad and 2.1e-9 rad/s (each step's velocity projections leave ~1e-9), far
    # inside the method's resting band (1e-6 m/s at the tip)
    assert abs(_angle(rod)) < 1e-8 and np.abs(rod.angular_velocity).max() < 1e-8
    contacts = world.contacts()
    moment = np.cross(contacts.point, contacts.force).sum(axis=0)[1]   # about the hinge (the origin)
    assert moment == pytest.approx(-G * 0.5, rel=1e-9)                  # balances gravity's m g L/2
    total = contacts.force.sum(axis=0) + joint.force
    np.testing.assert_allclose(total, [0, 0, G], rtol=0, atol=1e-9)
    assert joint.error < 1e-9


def test_hinged_rod_resting_with_friction_is_in_equilibrium():
    # With friction the hinge and the support's friction can push against each other (statically
    # indeterminate: the LCP picks one answer, through Lemke's regularized retry where it cycles), but any
    # answer balances: support forces + hinge force = m g up, and the moments about the hinge cancel.
    # Not quite at rest: the rod creeps up off the support at 8e-7 rad/s (its contacts separating at
    # 7e-7 m/s, inside the method's resting band of 1e-3 threshold = 1e-6 m/s) and lands again; frictionless
    # it rests to 1e-9 (above). Bound 1e-5 rad/s.
    world = tb.World(method="event", event_impacts="sequential")
    world.add_body(tb.Box(0.4, 0.4, 0.2), fixed=True, position=(1.0, 0, -0.15))
    rod, joint = _hinged_rod(world, 0.05)
    for _ in range(240):
        world.step(1 / 240)
    assert np.abs(rod.angular_velocity).max() < 1e-5
    contacts = world.contacts()
    np.testing.assert_allclose(contacts.force.sum(axis=0) + joint.force, [0, 0, G], rtol=0, atol=1e-8)
    # about the hinge axis y (the hinge itself carries the moments about x and z)
    moment = np.cross(contacts.point, contacts.force).sum(axis=0) + np.cross(rod.position, [0, 0, -G])
    assert abs(moment[1]) < 1e-8


def test_a_lone_body_steps_in_an_event_world():
    # With fewer than two colliding bodies the detector computes no AABBs (it is idle); the event method's
    # longest step read them anyway and came out 0, so a single moving body never advanced (found with the
    # pendulum above). Free flight: x = v t − ½ g t² (rk4 is exact for it).
    world = tb.World(method="event", event_impacts="sequential")
    ball = world.add_body(tb.Sphere(0.1), velocity=(1.0, 0, 2.0))
    for _ in range(24):
        world.step(1 / 240)
    np.testing.assert_allclose(ball.position, [0.1, 0, 0.2 - 0.5 * G * 0.01], rtol=0, atol=1e-12)


def test_limits_motors_and_compliance_are_refused():
    world = tb.World(method="event", event_impacts="sequential")
    rod = world.add_body(tb.Box(1.0, 0.1, 0.1), mass=1.0, position=(0.5, 0, 0))
    with pytest.raises(ValueError, match="limits=.*method='event'"):
        world.add_joint(tb.HingeJoint(rod, None, (0, 0, 0), (0, 1, 0), limits=(-1.0, 1.0)))
    assert world.joints == ()
    hinge = world.add_joint(tb.HingeJoint(rod, None, (0, 0, 0), (0, 1, 0)))
    with pytest.raises(ValueError, match="motor=.*method='event'"):
        hinge.motor = (1.0, 2.0)
    assert hinge.motor is None


@pytest.mark.parametrize("options", [{"method": "event"}, {"integrator": "rk4"}])
def test_a_velocity_that_breaks_the_joint_is_projected_as_an_impact_at_the_hinge(options):
    # The rod, hinged at its end, is given v = 1 m/s at its COM, straight up and so off the hinge's circle.
    # The step's first velocity projection is an inelastic impulse at the hinge, which keeps the angular
    # momentum about the hinge: ω = m d v / I_pivot (no gravity, so it stays), 1.4962 rad/s.
    world = tb.World(gravity=(0, 0, 0), **options)
    rod, joint = _hinged_rod(world, 0.0)
    rod.velocity = (0.0, 0.0, 1.0)
    i_pivot = (0.1**2 + 1.0) / 12 + 0.25
    for _ in range(5):
        world.step(1 / 240)
    assert -rod.angular_velocity[1] == pytest.approx(0.5 * 1.0 / i_pivot, rel=1e-9)
    assert joint.error < 1e-9


def test_the_ground_as_master_and_a_removed_carrier_save_and_load(tmp_path):
    # A box attached to the ground (a fixed master, whose plane has no bounding radius), and a point mass on a
    # body that is then removed (its attachment goes with it): both save and load.
    world = tb.World()
    ground = world.add_ground()
    box = world.add_body(tb.Box(0.2, 0.2, 0.2), position=(0, 0, 0.1), name="box")
    world.attach(box, ground)
    gone = world.add_body(tb.Sphere(0.1), position=(1, 0, 1), name="gone")
    world.attach_point_mass(gone, (1.05, 0, 1), 0.2)
    world.remove_body(gone)
    loaded = tb.load_scene(world.save_scene(tmp_path / "fixed.toml"))
    assert [(a.name, b.name) for a, b in loaded.attachments] == [("box", "ground")]
    for _ in range(10):
        loaded.step(1 / 240)
    np.testing.assert_allclose(loaded.bodies[1].position, [0, 0, 0.1], atol=1e-15)
