"""Sensor readings against closed forms (docs/sensors.md): an IMU on a resting, a falling and a spinning body; the
contact force under a box and between two stacked boxes; the force–torque sensor in the joints of an arm held
still (robot built in code) and under a box hung from a ball joint."""

from __future__ import annotations

import math

import numpy as np
import pytest

import tumble as tb
from tumble.robots import JointSpec, LinkSpec, RobotDescription
from tumble.rotations import quat_to_matrix

G = 9.81
DT = 1e-3


@pytest.fixture(scope="module")
def resting():
    """A 2 kg box resting on the ground after 200 steps, with an IMU at its COM, a rotated and offset IMU and a
    contact force sensor."""
    w = tb.World()
    w.add_ground()
    box = w.add_body(tb.Box(0.4, 0.4, 0.4), mass=2.0, position=(0.0, 0.0, 0.2), name="box")
    upright = w.add_sensor(tb.Imu(box), name="upright")
    q = (math.cos(math.pi / 4), math.sin(math.pi / 4), 0.0, 0.0)   # 90° about body x: sensor y = body z
    turned = w.add_sensor(tb.Imu(box, position=(0.1, -0.05, 0.2), orientation=q), name="turned")
    force = w.add_sensor(tb.ContactForce(box))
    before = upright.read()[0], force.read()
    for _ in range(200):
        w.step(DT)
    return w, box, upright, turned, force, before


def test_imu_on_a_resting_box_reads_plus_g_upright(resting):
    """At rest the specific force is −g: (0, 0, +9.81) in an upright sensor frame, before any step (a = 0 by
    definition) and after 200 steps. Tolerance 1e-6 g: the contact solve leaves |Δv| per step of the order of its
    residual (measured: 9e-8 m/s² off (0, 0, g) after 200 steps of dt = 1 ms); ω reads 0 to 1e-12 rad/s."""
    _, _, upright, _, _, (before, _) = resting
    assert np.array_equal(before, [0.0, 0.0, G])
    acc, gyro = upright.read()
    np.testing.assert_allclose(acc, [0.0, 0.0, G], atol=1e-6 * G)
    np.testing.assert_allclose(gyro, 0.0, atol=1e-12)


def test_imu_mounted_rotated_reads_the_rotated_vector(resting):
    """Mounted turned 90° about the body's x axis (and off the COM, which at rest changes nothing): the sensor's
    y axis is the body's z, so −g reads (0, +9.81, 0); the same as R_mᵀ (0, 0, g), to 1e-6 g."""
    _, _, _, turned, _, _ = resting
    acc, _ = turned.read()
    np.testing.assert_allclose(acc, [0.0, G, 0.0], atol=1e-6 * G)
    R = quat_to_matrix(turned.orientation)
    np.testing.assert_allclose(acc, R.T @ [0.0, 0.0, G], atol=1e-6 * G)


def test_contact_force_under_a_resting_box_is_its_weight(resting):
    """The ground pushes the 2 kg box up with m g = 19.62 N, to 1e-6 relative (the solve's residual, as above);
    zero before the first step (no step, no impulse)."""
    _, _, _, _, force, (_, before) = resting
    np.testing.assert_array_equal(before, 0.0)
    np.testing.assert_allclose(force.read(), [0.0, 0.0, 2.0 * G], rtol=0, atol=1e-6 * 2.0 * G)


def test_free_fall_reads_zero_specific_force():
    """A body falling freely (no contact, spinning about its principal z axis with the IMU off the COM along z, so
    the centripetal term is zero) reads a − g = 0 to 1e-9 m/s²: the step adds g dt to v exactly up to rounding of
    v (|v| ~ 0.5 m/s, 1e-16 relative, over dt = 1 ms: ~1e-13)."""
    w = tb.World()
    body = w.add_body(tb.Box(0.2, 0.3, 0.4), mass=1.0, position=(0.0, 0.0, 5.0))
    body.angular_velocity = (0.0, 0.0, 1.5)
    imu = w.add_sensor(tb.Imu(body, position=(0.0, 0.0, 0.1)))
    for _ in range(50):
        w.step(DT)
    acc, gyro = imu.read()
    assert np.max(np.abs(acc)) < 1e-9
    np.testing.assert_allclose(gyro, [0.0, 0.0, 1.5], atol=1e-12)


def test_spinning_body_reads_the_centripetal_acceleration():
    """No gravity; a box spinning at ω = 2 rad/s about its principal z axis (constant ω: exact for the splitting
    integrator's principal-axis rotation) with the IMU at r = (0.5, 0, 0) from the COM, sensor axes = body axes:
    the point's acceleration is −ω² r = (−2, 0, 0) m/s² in the body frame.

    The sensor's a = (v_p − v_p⁻)/dt is the chord of the point's velocity circle over one step: of length
    ω² r · sinc(θ/2) (θ = ω dt) and pointing at the mid-step radius, θ/2 behind the end-of-step axes it is read
    in (the body turns +z, so that radius is at −θ/2 in those axes). So the y component is +ω² r sinc(θ/2) sin(θ/2)
    ≈ +ω² r θ/2 = +2e-3 m/s² and x is −ω² r sinc(θ/2) cos(θ/2): checked against these closed forms to 1e-8 ω² r
    (what is left is the splitting step's O(dt²) rotation error and rounding over dt), and against the plain
    −ω² r to ω² r θ (the O(ω dt) of the one-step difference)."""
    w = tb.World(gravity=(0.0, 0.0, 0.0))
    body = w.add_body(tb.Box(0.2, 0.3, 0.4), mass=1.0, position=(0.0, 0.0, 0.0))
    omega, r = 2.0, 0.5
    body.angular_velocity = (0.0, 0.0, omega)
    imu = w.add_sensor(tb.Imu(body, position=(r, 0.0, 0.0)))
    for _ in range(100):
        w.step(DT)
    acc, gyro = imu.read()
    a, theta = omega * omega * r, omega * DT
    np.testing.assert_allclose(acc, [-a, 0.0, 0.0], atol=a * theta)
    chord = 2.0 * math.sin(theta / 2) / theta * a
    np.testing.assert_allclose(acc, [-chord * math.cos(theta / 2), chord * math.sin(theta / 2), 0.0], atol=1e-8 * a)
    np.testing.assert_allclose(gyro, [0.0, 0.0, omega], atol=1e-12)


def test_contact_force_with_other_reads_the_top_box_weight():
    """Two boxes stacked on the ground (1 kg below, 3 kg on top), settled for 400 steps: the lower box feels the
    upper one's weight pushing down, (0, 0, −3 g); the upper one the opposite; the ground carries both, (0, 0, 4 g)
    on the lower box from the ground. Tolerance 1e-6 relative, the solve's residual as for the single box."""
    w = tb.World()
    ground = w.add_ground()
    low = w.add_body(tb.Box(0.5, 0.5, 0.2), mass=1.0, position=(0.0, 0.0, 0.1))
    top = w.add_body(tb.Box(0.4, 0.4, 0.2), mass=3.0, position=(0.0, 0.0, 0.3))
    on_low = w.add_sensor(tb.ContactForce(low, other=top))
    on_top = w.add_sensor(tb.ContactForce(top, other=low))
    from_ground = w.add_sensor(tb.ContactForce(low, other=ground))
    for _ in range(400):
        w.step(DT)
    tol = 1e-6 * 4.0 * G
    np.testing.assert_allclose(on_low.read(), [0.0, 0.0, -3.0 * G], atol=tol)
    np.testing.assert_allclose(on_top.read(), [0.0, 0.0, 3.0 * G], atol=tol)
    np.testing.assert_allclose(from_ground.read(), [0.0, 0.0, 4.0 * G], atol=tol)


def _arm() -> RobotDescription:
    """Two links on hinges about y, stretched horizontally along x: link 1 (1.5 kg, COM 0.2 m out) hinged at the
    base, link 2 (0.8 kg, COM 0.15 m beyond its hinge) hinged 0.4 m out."""
    links = [LinkSpec("base"),
             LinkSpec("upper", 1.5, np.array([0.2, 0.0, 0.0]), np.diag([0.002, 0.03, 0.03])),
             LinkSpec("fore", 0.8, np.array([0.15, 0.0, 0.0]), np.diag([0.001, 0.01, 0.01]))]
    y = np.array([0.0, 1.0, 0.0])
    joints = [JointSpec("shoulder", "revolute", "base", "upper", np.zeros(3), np.eye(3), y),
              JointSpec("elbow", "revolute", "upper", "fore", np.array([0.4, 0.0, 0.0]), np.eye(3), y)]
    return RobotDescription("arm", links, joints)


def test_force_torque_in_a_horizontal_arm_held_by_gravity_compensation():
    """The arm held horizontal by τ = g(q) (gravity compensation: q̈ = 0, it stays at rest) for 100 steps. The
    parent carries the subtree's weight and its moment about the joint: at the shoulder F = (m1 + m2) g up and
    τ_y = −g (m1 x1 + m2 x2) (x the COMs' distances out: 0.2 and 0.55 m), at the elbow F = m2 g and
    τ_y = −g m2 0.15, in the links' frames (aligned with the world at q = 0). Tolerance 1e-9 relative: rounding
    of a q̈ that is zero in exact arithmetic (|Δq̇| ~ 1e-16 per step over dt = 1 ms)."""
    w = tb.World()
    robot = w.add_robot(_arm(), position=(0.0, 0.0, 1.0))
    robot.tau = robot.gravity_torques()
    shoulder = w.add_sensor(tb.ForceTorque(robot, "shoulder"), name="shoulder")
    elbow = w.add_sensor(tb.ForceTorque(robot, "elbow"), name="elbow")
    for _ in range(100):
        w.step(DT)
    assert np.max(np.abs(robot.q)) < 1e-9
    m1, m2 = 1.5, 0.8
    expected = {
        shoulder: ([0.0, 0.0, (m1 + m2) * G], [0.0, -G * (m1 * 0.2 + m2 * 0.55), 0.0]),
        elbow: ([0.0, 0.0, m2 * G], [0.0, -G * m2 * 0.15, 0.0]),
    }
    for sensor, (force, torque) in expected.items():
        f, t = sensor.read()
        np.testing.assert_allclose(f, force, atol=1e-9 * (m1 + m2) * G)
        np.testing.assert_allclose(t, torque, atol=1e-9 * (m1 + m2) * G)


def test_force_torque_in_a_hanging_pendulum_is_its_weight_in_the_child_frame():
    """The arm turned to hang straight down (q1 = π/2 about y puts x along −z), unpowered, for 100 steps: the
    shoulder carries the whole weight with no moment. In the child frame (turned by π/2 about y: world up, +z,
    is the link's −x) F = (−(m1 + m2) g, 0, 0). Tolerance 1e-9 relative as above."""
    w = tb.World()
    robot = w.add_robot(_arm(), position=(0.0, 0.0, 1.0))
    robot.q = [math.pi / 2, 0.0]
    shoulder = w.add_sensor(tb.ForceTorque(robot, "shoulder"))
    for _ in range(100):
        w.step(DT)
    f, t = shoulder.read()
    scale = 2.3 * G
    np.testing.assert_allclose(f, [-2.3 * G, 0.0, 0.0], atol=1e-9 * scale)
    np.testing.assert_allclose(t, 0.0, atol=1e-9 * scale)


def test_force_torque_of_a_ball_joint_holding_a_hanging_box():
    """A 1.2 kg box hung from the world by a ball joint 0.3 m above its COM, at rest for 200 steps: the joint
    (parent: the world; child: the box, its body a) holds it with (0, 0, m g) and no moment about the anchor, in
    the joint frame (the world's axes here: the box is not turned). Tolerance 1e-6 relative: the joint solve's
    residual."""
    w = tb.World()
    box = w.add_body(tb.Box(0.2, 0.2, 0.2), mass=1.2, position=(0.0, 0.0, 1.0))
    joint = w.add_joint(tb.BallJoint(box, None, (0.0, 0.0, 1.3)))
    ft = w.add_sensor(tb.ForceTorque(joint))
    for _ in range(200):
        w.step(DT)
    f, t = ft.read()
    np.testing.assert_allclose(f, [0.0, 0.0, 1.2 * G], atol=1e-6 * 1.2 * G)
    np.testing.assert_allclose(t, 0.0, atol=1e-6 * 1.2 * G)
