"""Inverse kinematics (``Robot.inverse_kinematics``, robots/ik.py; docs/robots.md "Inverse kinematics") against
closed forms (the two-link arm's law of cosines, a ball joint, the reach of a stretched arm) and independent
readouts (the link poses of ``Robot.link`` at the returned q, orientation errors from quaternions in NumPy)."""

from __future__ import annotations

import math
import os

import numpy as np
import pytest

import tumble as tb
from tumble.robots import JointSpec, LinkSpec, RobotDescription

L1, L2 = 0.7, 0.4
"""[m] the planar arm's upper and lower link lengths."""
INERTIA = np.diag([0.01, 0.01, 0.01])


def planar_arm(*, floating: bool = False, j0: tuple[float, float] = (-math.pi, math.pi)) -> tuple[tb.World, tb.Robot]:
    """Two links in the xy plane turning about z: j0 at the base's origin (limits ``j0``), j1 at (L1, 0, 0) of l0
    (limits [0, π]: one elbow, so the law of cosines has one answer); the tip is link ``tip`` at (L2, 0, 0) of
    l1 (a fixed joint)."""
    links = [LinkSpec("base", 1.0, np.zeros(3), INERTIA), LinkSpec("l0", 1.0, np.array([L1 / 2, 0, 0]), INERTIA),
             LinkSpec("l1", 1.0, np.array([L2 / 2, 0, 0]), INERTIA), LinkSpec("tip", 0.1, np.zeros(3), INERTIA)]
    z = np.array([0.0, 0.0, 1.0])
    joints = [JointSpec("j0", "revolute", "base", "l0", np.zeros(3), np.eye(3), z, lower=j0[0], upper=j0[1]),
              JointSpec("j1", "revolute", "l0", "l1", np.array([L1, 0, 0]), np.eye(3), z, lower=0.0, upper=math.pi),
              JointSpec("tipj", "fixed", "l1", "tip", np.array([L2, 0, 0]))]
    world = tb.World()
    return world, world.add_robot(RobotDescription("arm", links, joints), fixed_base=not floating)


def closed_form(x: float, y: float) -> np.ndarray:
    """The two-link IK with the elbow in [0, π]: cos q1 = (x² + y² − L1² − L2²) / (2 L1 L2) (law of cosines),
    q0 = atan2(y, x) − atan2(L2 sin q1, L1 + L2 cos q1)."""
    q1 = math.acos((x * x + y * y - L1 * L1 - L2 * L2) / (2 * L1 * L2))
    return np.array([math.atan2(y, x) - math.atan2(L2 * math.sin(q1), L1 + L2 * math.cos(q1)), q1])


def angle_between(a: np.ndarray, b: np.ndarray) -> float:
    """The rotation angle [rad] between unit quaternions a and b: 4 asin(|a ∓ b| / 2) (the chord between the
    4-vectors is 2 sin(θ/4); unlike 2 acos |a · b|, exact near θ = 0)."""
    chord = min(np.linalg.norm(a - b), np.linalg.norm(a + b))
    return 4.0 * math.asin(min(1.0, chord / 2.0))


def test_planar_arm_matches_the_law_of_cosines():
    """Targets spread over the annulus of reach with the elbow in [0.3, 2.6] rad (σ_min of J ≥ ~0.1 m there).
    Asking for 1e-10 m, the angles are within 1e-10 m / σ_min ≤ 1e-9 rad of the closed form: 1e-7 rad allows
    a hundredfold margin."""
    world, arm = planar_arm()
    rng = np.random.default_rng(3)
    for _ in range(20):
        q_true = np.array([rng.uniform(-3.0, 3.0), rng.uniform(0.3, 2.6)])
        x = L1 * math.cos(q_true[0]) + L2 * math.cos(q_true[0] + q_true[1])
        y = L1 * math.sin(q_true[0]) + L2 * math.sin(q_true[0] + q_true[1])
        res = arm.inverse_kinematics("tip", (x, y, 0.0), q0=(0.1, 0.5), tolerance=1e-10)
        assert res.ok and res.position_error <= 1e-10
        assert math.isnan(res.orientation_error)
        expected = closed_form(x, y)
        wrapped = (res.q - expected + math.pi) % (2 * math.pi) - math.pi   # q0 ± 2π is the same arm
        np.testing.assert_allclose(wrapped, 0.0, atol=1e-7)


def test_a_point_on_the_link_reaches_the_target():
    """The tip as the point (L2, 0, 0) of l1 [m, l1's frame] instead of a link of its own: the same closed form,
    and the position checked by the arm's forward kinematics written out (not the engine's)."""
    world, arm = planar_arm()
    x, y = 0.5, 0.6
    res = arm.inverse_kinematics("l1", (x, y, 0.0), q0=(0.1, 0.5), point=(L2, 0.0, 0.0), tolerance=1e-10)
    assert res.ok
    q0, q1 = res.q
    tip = (L1 * math.cos(q0) + L2 * math.cos(q0 + q1), L1 * math.sin(q0) + L2 * math.sin(q0 + q1))
    assert math.dist(tip, (x, y)) <= 1e-10
    np.testing.assert_allclose(res.q, closed_form(x, y), atol=1e-7)
    # without the point, l1's origin (the elbow) goes there instead: at distance L1 from the shoulder
    elbow = arm.inverse_kinematics("l1", (0.0, L1, 0.0), q0=(0.1, 0.5), tolerance=1e-10)
    assert elbow.ok and abs(elbow.q[0] - math.pi / 2) <= 1e-7


@pytest.mark.parametrize("distance", [1.3, 2.0])
def test_out_of_reach_reports_the_gap_to_the_stretched_arm(distance):
    """A target at ``distance`` > L1 + L2 = 1.1 m: no exception, ok False, the arm stretched toward it and the
    error |target| − reach (closed form). The distance is flat in the elbow angle there (reach − L1 L2 q1² /
    (2 reach) to second order), so the error is within 1e-12 m once q1 is within ~1e-6 rad of 0."""
    world, arm = planar_arm()
    direction = np.array([math.cos(0.4), math.sin(0.4), 0.0])
    res = arm.inverse_kinematics("tip", distance * direction, q0=(0.1, 0.5), max_iterations=200)
    assert not res.ok
    assert res.iterations == 200
    assert res.position_error == pytest.approx(distance - (L1 + L2), abs=1e-12)
    assert 0.0 <= res.q[1] <= 1e-6
    assert res.q[0] == pytest.approx(0.4, abs=1e-6)


def test_q_stays_within_the_limits_where_the_free_answer_lies_outside():
    """j0 limited to [0, 0.5] rad and a target on the circle of radius L1 + L2 at 0.9 rad, which only the
    stretched arm at j0 = 0.9 reaches: the closest the limits allow is j0 = 0.5 (the distance from the elbow
    to the target, 2.2 − 1.54 cos(0.9 − j0) squared, falls as j0 grows) with the forearm pointing at the
    target, an error of |t − elbow| − L2 (closed form)."""
    world, arm = planar_arm(j0=(0.0, 0.5))
    target = (L1 + L2) * np.array([math.cos(0.9), math.sin(0.9), 0.0])
    res = arm.inverse_kinematics("tip", target, q0=(0.1, 0.5), max_iterations=200)
    lower, upper = arm.position_limits
    assert np.all(res.q >= lower) and np.all(res.q <= upper)
    assert not res.ok
    gap = target[:2] - L1 * np.array([math.cos(0.5), math.sin(0.5)])
    assert res.q[0] == 0.5
    assert res.q[1] == pytest.approx(math.atan2(gap[1], gap[0]) - 0.5, abs=1e-7)
    assert res.position_error == pytest.approx(np.linalg.norm(gap) - L2, abs=1e-12)


def test_a_ball_joint_turns_to_the_target_orientation():
    """A rod on a ball joint at the origin (q the joint's quaternion, the base at identity): the target
    orientation o is reached with q = ±o, and the rod's end at o's rotation of (0, 0, 0.5) m (closed form)."""
    links = [LinkSpec("base", 1.0, np.zeros(3), INERTIA), LinkSpec("rod", 1.0, np.array([0, 0, 0.25]), INERTIA)]
    joints = [JointSpec("ball", "spherical", "base", "rod")]
    world = tb.World()
    robot = world.add_robot(RobotDescription("ball", links, joints))
    o = np.array([0.3, -0.5, 0.7, 0.4])
    o /= np.linalg.norm(o)
    w, x, y, z = o
    R = np.array([[1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)],
                  [2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)],
                  [2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)]])
    res = robot.inverse_kinematics("rod", R @ (0, 0, 0.5), o, point=(0, 0, 0.5), tolerance=1e-10,
                                   angular_tolerance=1e-10)
    assert res.ok
    assert angle_between(res.q, o) <= 1e-9
    assert abs(np.linalg.norm(res.q) - 1.0) <= 1e-12


def kuka():
    pybullet_data = pytest.importorskip("pybullet_data")
    pytest.importorskip("trimesh")
    world = tb.World()
    robot = world.add_urdf(os.path.join(pybullet_data.getDataPath(), "kuka_iiwa/model.urdf"), fixed_base=True)
    return world, robot


def kuka_poses(robot, n: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """n reachable poses of lbr_iiwa_link_7: forward kinematics (``Link.position``/``orientation``) of seeded
    random q within 90 % of the joint limits about their middle. Returns (q, positions (n, 3), orientations
    (n, 4)); the robot is left at q = 0."""
    lower, upper = robot.position_limits
    mid, half = (lower + upper) / 2, (upper - lower) / 2
    qs = mid + 0.9 * half * np.random.default_rng(seed).uniform(-1.0, 1.0, size=(n, robot.nq))
    positions, orientations = np.empty((n, 3)), np.empty((n, 4))
    link = robot.link("lbr_iiwa_link_7")
    for i, q in enumerate(qs):
        robot.q = q
        positions[i], orientations[i] = link.position, link.orientation
    robot.q = np.zeros(robot.nq)
    return qs, positions, orientations


def test_kuka_reaches_random_poses_within_the_limits():
    """pybullet_data's KUKA iiwa (7 revolute joints, all limited), from q = 0: at least 97 % of 200 random
    reachable poses to 1e-6 m and 1e-5 rad, q within the limits for every one. Each success is checked at the
    returned q by the link's own pose readout, the orientation error from the quaternions (``angle_between``)."""
    world, robot = kuka()
    _, positions, orientations = kuka_poses(robot, 200)
    lower, upper = robot.position_limits
    link = robot.link("lbr_iiwa_link_7")
    reached = 0
    for p, o in zip(positions, orientations, strict=True):
        res = robot.inverse_kinematics("lbr_iiwa_link_7", p, o)
        assert np.all(res.q >= lower) and np.all(res.q <= upper)
        if res.ok:
            robot.q = res.q
            # the readout's own rounding (~1e-15 m, ~1e-15 rad) is far below the tolerances
            assert np.linalg.norm(link.position - p) <= 1e-6 + 1e-12
            assert angle_between(link.orientation, o) <= 1e-5 + 1e-12
            robot.q = np.zeros(7)
            reached += 1
    assert reached >= 194


def test_the_robot_state_is_unchanged():
    """A solve (and a refused one) leaves q, q̇ and the link poses read before it as they were."""
    world, arm = planar_arm()
    arm.q, arm.qd = (0.3, 0.8), (0.1, -0.2)
    q, qd, tip = arm.q, arm.qd, arm.link("tip").position
    res = arm.inverse_kinematics("tip", (0.2, 0.9, 0.0))
    assert res.ok
    with pytest.raises(ValueError):
        arm.inverse_kinematics("tip", (np.nan, 0.9, 0.0))
    assert np.array_equal(arm.q, q) and np.array_equal(arm.qd, qd)
    assert np.array_equal(arm.link("tip").position, tip)
    world.step(1e-3)   # and the world steps on from it
    assert np.all(np.isfinite(arm.q))


def test_the_vectorized_form_agrees_with_single_calls():
    """n targets in one call (one out of reach, one with its own start) give row by row what single calls
    give, bit for bit (the same seed per target), with the documented shapes."""
    world, arm = planar_arm()
    targets = np.array([[0.5, 0.6, 0.0], [2.0, 0.0, 0.0], [-0.3, -0.8, 0.0]])
    starts = np.array([[0.1, 0.5], [0.1, 0.5], [2.0, 1.0]])
    res = arm.inverse_kinematics("tip", targets, q0=starts)
    assert res.q.shape == (3, 2) and res.ok.shape == (3,) and res.iterations.shape == (3,)
    assert res.position_error.shape == (3,) and res.orientation_error.shape == (3,)
    assert res.ok.tolist() == [True, False, True]
    for i in range(3):
        one = arm.inverse_kinematics("tip", targets[i], q0=starts[i])
        assert np.array_equal(res.q[i], one.q) and res.ok[i] == one.ok and res.iterations[i] == one.iterations
        assert res.position_error[i] == one.position_error


def test_the_vectorized_form_with_orientations_on_the_kuka():
    world, robot = kuka()
    _, positions, orientations = kuka_poses(robot, 4, seed=5)
    res = robot.inverse_kinematics("lbr_iiwa_link_7", positions, orientations)
    assert res.q.shape == (4, 7)
    for i in range(4):
        one = robot.inverse_kinematics("lbr_iiwa_link_7", positions[i], orientations[i])
        assert np.array_equal(res.q[i], one.q) and res.orientation_error[i] == one.orientation_error


def test_a_non_unit_orientation_is_normalized():
    world, robot = kuka()
    _, positions, orientations = kuka_poses(robot, 1, seed=7)
    unit = robot.inverse_kinematics("lbr_iiwa_link_7", positions[0], orientations[0])
    scaled = robot.inverse_kinematics("lbr_iiwa_link_7", positions[0], 3.0 * orientations[0])
    assert unit.ok and np.allclose(scaled.q, unit.q, atol=1e-12, rtol=0.0)


def test_a_floating_base_stays_put_unless_asked():
    """The arm on a floating base at (1, 2, 0.5): a target 1.5 m from the base is out of the arm's 1.1 m reach
    with the base held (q[:7] exactly as given, the error the closed-form gap 0.4 m); with floating_base=True
    the base moves and the target is reached."""
    world, arm = planar_arm(floating=True)
    q0 = arm.q
    q0[:3] = (1.0, 2.0, 0.5)
    target = np.array([2.5, 2.0, 0.5])
    held = arm.inverse_kinematics("tip", target, q0=q0, max_iterations=100)
    assert np.array_equal(held.q[:7], q0[:7])
    assert not held.ok and held.position_error == pytest.approx(0.4, abs=1e-9)
    free = arm.inverse_kinematics("tip", target, q0=q0, floating_base=True)
    assert free.ok and np.linalg.norm(free.q[:3] - q0[:3]) > 0.3
    assert abs(np.linalg.norm(free.q[3:7]) - 1.0) <= 1e-12


def test_bad_input_is_refused_with_the_argument_named():
    world, arm = planar_arm()
    q = arm.q
    cases = [
        (ValueError, "no link 'hand'", dict(link="hand")),
        (TypeError, "link must be", dict(link=3)),
        (ValueError, "position must be finite", dict(position=(np.nan, 0.0, 0.0))),
        (ValueError, r"position must have shape \(3,\)", dict(position=(1.0, 0.0))),
        (ValueError, "orientation must be a non-zero quaternion", dict(orientation=(0.0, 0.0, 0.0, 0.0))),
        (ValueError, r"orientation must have shape \(4,\)", dict(orientation=(1.0, 0.0, 0.0))),
        (ValueError, r"orientation must have shape \(2, 4\)",
         dict(position=np.zeros((2, 3)), orientation=np.zeros((3, 4)))),
        (ValueError, r"q0 must have shape \(2,\)", dict(q0=(0.0, 0.0, 0.0))),
        (ValueError, r"point must have shape \(3,\)", dict(point=(1.0,))),
        (ValueError, "tolerance must be positive", dict(tolerance=0.0)),
        (ValueError, "max_iterations", dict(max_iterations=0)),
        (ValueError, "floating_base=True: robot 'arm' has a fixed base", dict(floating_base=True)),
        (ValueError, "link 'base' of robot 'arm' is moved by no joint", dict(link="base")),
    ]
    for error, message, change in cases:
        args = dict(link="tip", position=(0.5, 0.5, 0.0)) | change
        with pytest.raises(error, match=message):
            arm.inverse_kinematics(**args)
    assert np.array_equal(arm.q, q)
    stiff = RobotDescription("stiff", [LinkSpec("a", 1.0, np.zeros(3), INERTIA), LinkSpec("b", 1.0, np.zeros(3),
                                                                                                INERTIA)],
                             [JointSpec("weld", "fixed", "a", "b")])
    robot = world.add_robot(stiff)
    with pytest.raises(ValueError, match="link 'b' of robot 'stiff' is moved by no joint"):
        robot.inverse_kinematics("b", (0.0, 0.0, 0.0))
    ball = RobotDescription("ballq", [LinkSpec("a", 1.0, np.zeros(3), INERTIA), LinkSpec("b", 1.0, np.zeros(3),
                                                                                            INERTIA)],
                            [JointSpec("ball", "spherical", "a", "b")])
    with pytest.raises(ValueError, match=r"q0: the quaternion of joint 'ball' at q0\[0:4\] is zero"):
        world.add_robot(ball).inverse_kinematics("b", (0.0, 0.0, 0.0), q0=np.zeros(4))
