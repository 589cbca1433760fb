"""A robot's links are row sides of the World's one solve (constraints/link_rows.py, integration/articulation.py):
what a robot does to the bodies around it, checked against the same scene with fixed or kinematic bodies, and
against conservation laws.

Each scene runs at 1/240 s with the default solver (Gauss–Seidel, 4 sub-steps, the split impulse), and some under
every other solver too (``SOLVERS``): a robot's contacts, limits and dry friction are rows of APGD's, CG's and
Lemke's problem as of the Gauss–Seidel sweep's (solvers/velocity_solve.py, solvers/rows.py). Each of those scenes
has a free body beside the robot, so that the robot steps in the one solve."""

from __future__ import annotations

import os

import numpy as np
import pytest

import tumble as tb
from tumble.robots import GeomSpec, JointSpec, LinkSpec, RobotDescription

H = 1 / 240
G = 9.81
SOLVERS = [("apgd", "cone"), ("lemke", "pyramid"), ("cg", "none")]
"""The other solvers with a friction model each takes: APGD the cone, Lemke the Anitescu–Stewart pyramid (its LCP),
CG none (its QP is frictionless: seed 004)."""


def box_inertia(m: float, a: float, b: float, c: float) -> np.ndarray:
    return np.diag([m * (b * b + c * c) / 12, m * (a * a + c * c) / 12, m * (a * a + b * b) / 12])


def tray_world(twin: bool, **options):
    """A 0.6 × 0.6 × 0.05 m tray whose top is at z = 0.525 m, and on it a stack of three 0.2 m, 1 kg boxes: the
    tray is a 5 kg link on a prismatic joint held by its PD motor (``twin`` False) or a fixed body (True);
    ``options`` the World's (solver, friction)."""
    w = tb.World(gravity=(0, 0, -G), **options)
    w.add_ground()
    robot = None
    if twin:
        w.add_body(tb.Box(0.6, 0.6, 0.05), position=(0, 0, 0.5), fixed=True)
    else:
        tray = LinkSpec("tray", 5.0, np.zeros(3), box_inertia(5.0, 0.6, 0.6, 0.05), [GeomSpec(tb.Box(0.6, 0.6, 0.05))])
        lift = JointSpec("lift", "prismatic", "base", "tray", origin_xyz=np.array([0.0, 0.0, 0.5]),
                         axis=np.array([0.0, 0.0, 1.0]), effort=1e4)
        robot = w.add_robot(RobotDescription("lift", [LinkSpec("base"), tray], [lift]))
        robot.kp, robot.kd, robot.q_target = [4e4], [2e3], [0.0]
    boxes = [w.add_body(tb.Box(0.2, 0.2, 0.2), mass=1.0, position=(0, 0, 0.625 + 0.2 * i)) for i in range(3)]
    return w, robot, boxes


@pytest.mark.parametrize("lifting", [False, True])
def test_a_stack_on_a_robot_s_tray_rests_as_on_a_fixed_body(lifting):
    """Three stacked boxes on a PD-held tray sink no deeper into it than 0.05 mm and slide less than 0.05 mm over
    6 s, holding still or while the tray lifts 0.4 m at 0.2 m/s, as on a fixed tray (closed form: the stack rests
    on it). Before the one solve (issue 49) the link's contacts were solved once a step apart from the World's
    solve, with a Baumgarte push: the stack sank 1.8–3.1 mm and slid 2.9–3.5 mm. The bound is the split
    impulse's slop region (0.01 mm on the fixed twin) with margin for the tray's motion."""
    for twin in (True, False):
        w, robot, boxes = tray_world(twin)
        worst_sink = worst_slide = 0.0
        start = None
        for n in range(int(6.0 / H)):
            t = n * H
            if lifting and robot is not None and t > 1.0:
                z = min(0.4, 0.2 * (t - 1.0))
                robot.q_target, robot.qd_target = [z], [0.2 if z < 0.4 else 0.0]
            w.step(H)
            if n == int(1.0 / H):
                start = np.array([b.position[:2] for b in boxes])
            if t > 1.0:
                top = 0.525 + (robot.q[0] if robot is not None else 0.0)
                worst_sink = max(worst_sink, top - (boxes[0].position[2] - 0.1))
                worst_slide = max(worst_slide, np.abs(np.array([b.position[:2] for b in boxes]) - start).max())
        assert worst_sink < 5e-5 and worst_slide < 5e-5, (twin, worst_sink, worst_slide)
        if lifting and robot is not None:
            assert robot.q[0] == pytest.approx(0.4, abs=2e-3)   # the tray did lift the stack


@pytest.mark.parametrize("solver,friction", SOLVERS)
def test_a_stack_on_a_robot_s_tray_rests_as_on_a_fixed_body_under_every_solver(solver, friction):
    """The stack on the PD-held tray sinks into it no deeper than 0.05 mm over 2 s (the bound above), and within
    0.05 mm of the same stack on a fixed tray under the same solver: the link's rows are solved with the stack's,
    not apart (apart, the stack sank 1.8–3.1 mm)."""
    sinks = []
    for twin in (True, False):
        w, robot, boxes = tray_world(twin, solver=solver, friction=friction)
        worst = 0.0
        for n in range(int(2.0 / H)):
            w.step(H)
            if n * H > 0.5:
                top = 0.525 + (robot.q[0] if robot is not None else 0.0)
                worst = max(worst, top - (boxes[0].position[2] - 0.1))
        assert np.isfinite(worst)
        sinks.append(worst)
    assert sinks[1] < 5e-5, sinks
    assert abs(sinks[1] - sinks[0]) < 5e-5, sinks


def gripper_world():
    """A palm on a vertical prismatic joint (PD) with two prismatic fingers (effort 30 N each), μ = 0.8, around a
    0.1 m, 0.5 kg cube on the ground."""
    w = tb.World(gravity=(0, 0, -G))
    w.add_ground(friction=0.8)
    finger = tb.Box(0.02, 0.08, 0.15)
    links = [LinkSpec("base"),
             LinkSpec("palm", 1.0, np.zeros(3), box_inertia(1.0, 0.3, 0.1, 0.05), [GeomSpec(tb.Box(0.3, 0.1, 0.05))]),
             LinkSpec("left", 0.2, np.zeros(3), box_inertia(0.2, 0.02, 0.08, 0.15), [GeomSpec(finger)]),
             LinkSpec("right", 0.2, np.zeros(3), box_inertia(0.2, 0.02, 0.08, 0.15), [GeomSpec(finger)])]
    joints = [JointSpec("lift", "prismatic", "base", "palm", origin_xyz=np.array([0.0, 0.0, 0.2]),
                        axis=np.array([0.0, 0.0, 1.0]), effort=200.0),
              JointSpec("left", "prismatic", "palm", "left", origin_xyz=np.array([-0.1, 0.0, -0.1]),
                        axis=np.array([1.0, 0.0, 0.0]), effort=30.0),
              JointSpec("right", "prismatic", "palm", "right", origin_xyz=np.array([0.1, 0.0, -0.1]),
                        axis=np.array([-1.0, 0.0, 0.0]), effort=30.0)]
    robot = w.add_robot(RobotDescription("gripper", links, joints), friction=0.8)
    robot.kp, robot.kd = [2e4, 0.0, 0.0], [2e3, 0.0, 0.0]
    cube = w.add_body(tb.Box(0.1, 0.1, 0.1), mass=0.5, position=(0, 0, 0.05), friction=0.8)
    return w, robot, cube


def test_a_parallel_gripper_lifts_and_holds_a_cube():
    """The fingers squeeze with their 30 N effort limit (friction can hold 2 μ 30 N = 48 N against the cube's
    4.9 N), the palm lifts 0.3 m at 0.2 m/s and holds: the cube follows the palm within 1 mm (its offset from the
    palm once gripped stays within 1 mm), and ends 0.3 m up."""
    w, robot, cube = gripper_world()
    offset = None
    worst = 0.0
    for n in range(int(4.0 / H)):
        t = n * H
        robot.tau = [0.0, 30.0, 30.0] if t > 0.2 else [0.0, 0.0, 0.0]
        if t > 1.0:
            z = min(0.3, 0.2 * (t - 1.0))
            robot.q_target, robot.qd_target = [z, 0.0, 0.0], [0.2 if z < 0.3 else 0.0, 0.0, 0.0]
        w.step(H)
        if n == int(1.0 / H):
            offset = cube.position - robot.link("palm").position
        elif offset is not None:
            worst = max(worst, float(np.linalg.norm(cube.position - robot.link("palm").position - offset)))
    assert worst < 1e-3
    assert cube.position[2] == pytest.approx(0.35, abs=3e-3)


def pusher_world(kinematic: bool):
    """A 0.1 m pusher block at x = −0.3 m, 1 cm above the ground, moved along +x at 0.2 m/s from t = 0.2 s, against
    a 0.2 m, 1 kg box (μ = 0.5 with the ground): the pusher is a robot's link on a prismatic joint tracking the
    path by PD (``kinematic`` False) or a kinematic body on the same path."""
    w = tb.World(gravity=(0, 0, -G))
    w.add_ground(friction=0.5)
    block = tb.Box(0.1, 0.2, 0.1)
    box = w.add_body(tb.Box(0.2, 0.2, 0.2), mass=1.0, position=(0.0, 0, 0.1), friction=0.5)
    if kinematic:
        pusher = w.add_body(block, position=(-0.25, 0, 0.06), kinematic=True, friction=0.0)
        return w, pusher, box
    links = [LinkSpec("base"), LinkSpec("pusher", 2.0, np.zeros(3), box_inertia(2.0, 0.1, 0.2, 0.1),
                                        [GeomSpec(block)])]
    slide = JointSpec("slide", "prismatic", "base", "pusher", origin_xyz=np.array([-0.25, 0.0, 0.06]),
                      axis=np.array([1.0, 0.0, 0.0]), effort=1e4)
    robot = w.add_robot(RobotDescription("arm", links, [slide]), friction=0.0)
    robot.kp, robot.kd = [1e5], [2e3]
    return w, robot, box


def test_an_arm_pushes_a_box_as_a_kinematic_pusher_does():
    """The link pushing the box along a path moves it as a kinematic body on the same path does: the box's
    positions agree within 2 mm over 2 s (the PD tracks the path within a fraction of a millimetre against the
    box's μ m g = 4.9 N; both push the box 0.26 m)."""
    tracks = []
    for kinematic in (True, False):
        w, pusher, box = pusher_world(kinematic)
        xs = []
        for n in range(int(2.0 / H)):
            t = n * H
            speed = 0.2 if t >= 0.2 else 0.0
            if kinematic:
                pusher.velocity = (speed, 0.0, 0.0)
            else:
                pusher.q_target, pusher.qd_target = [0.2 * max(t + H - 0.2, 0.0)], [speed]
            w.step(H)
            xs.append(box.position.copy())
        tracks.append(np.array(xs))
    assert tracks[0][-1, 0] > 0.25                     # the box was pushed (from t = 0.7 s)
    assert np.abs(tracks[0] - tracks[1]).max() < 2e-3


@pytest.mark.parametrize("solver,friction", [("pgs", "cone"), *SOLVERS])
def test_a_floating_robot_and_a_box_colliding_conserve_momentum(solver, friction):
    """A floating one-link robot (a slab, its link frame at its COM) thrown spinning against a free, spinning box
    in zero gravity: the contact impulses act on both through one row at one common point, so the total linear
    momentum and the angular momentum about the origin (link and box, World bodies) are conserved through the
    collision to rounding. (Both have isotropic inertias, so that their free flight conserves the angular
    momentum exactly too: the robot's semi-implicit step of a spinning body with an anisotropic inertia drifts by
    ~1e-9 N m s a step, and a floating tree's hinge or a COM off the link frame drifts its linear momentum ~1e-7
    a step, which is the reduced-coordinate integrator's, not the contact's.) Whatever impulses a solver finds act
    through those rows, so every solver conserves them alike."""
    w = tb.World(gravity=(0, 0, 0), solver=solver, friction=friction)
    links = [LinkSpec("slab", 1.0, np.zeros(3), np.eye(3) * 0.01, [GeomSpec(tb.Box(0.3, 0.2, 0.05))])]
    robot = w.add_robot(RobotDescription("slab", links, []), fixed_base=False, position=(-0.5, 0.0, 0.0))
    qd = robot.qd
    qd[:3] = (1.0, 0.0, 0.1)
    qd[3:6] = (0.2, 0.5, 0.3)
    robot.qd = qd
    w.add_body(tb.Box(0.2, 0.2, 0.2), mass=2.0, position=(0.0, 0.03, 0.02), angular_velocity=(0.0, 0.0, 0.3))
    p0, l0 = w.linear_momentum(), w.angular_momentum(point=(0, 0, 0))
    touched = 0
    for _ in range(240):
        w.step(H)
        touched += len(w.contacts().depth) > 0
    assert touched > 10
    p1, l1 = w.linear_momentum(), w.angular_momentum(point=(0, 0, 0))
    assert np.abs(p1 - p0).max() < 1e-13
    assert np.abs(l1 - l0).max() < 1e-12


def a1_standing(world: tb.World):
    """pybullet_data's A1 quadruped on ``world``'s ground (μ 0.8) in a standing pose held by PD (kp 80, kd 2 on
    its twelve joints)."""
    pybullet_data = pytest.importorskip("pybullet_data")
    world.add_ground(friction=0.8)
    robot = world.add_urdf(os.path.join(pybullet_data.getDataPath(), "a1/a1.urdf"), fixed_base=False,
                           position=(0.0, 0.0, 0.32))
    lower, upper = robot.position_limits
    stand = np.clip(np.array([0.0, 0.8, -1.6] * 4), lower[6:], upper[6:])
    q = robot.q
    q[7:] = stand
    robot.q = q
    robot.q_target = np.concatenate([np.zeros(6), stand])
    robot.kp = np.concatenate([np.zeros(6), np.full(12, 80.0)])
    robot.kd = np.concatenate([np.zeros(6), np.full(12, 2.0)])
    return robot


def base_heights(world: tb.World, robot, seconds: float) -> np.ndarray:
    """The base's height after each step of ``seconds``, after 2 s of landing and settling."""
    for _ in range(int(2.0 / H)):
        world.step(H)
    heights = []
    for _ in range(int(seconds / H)):
        world.step(H)
        heights.append(robot.q[2])
    return np.array(heights)


def test_the_a1_held_by_pd_stands_still_on_the_ground():
    """pybullet_data's A1 quadruped settled in a standing pose held by PD keeps its base height within 1 mm over
    10 s: its feet neither sink nor creep. (A world of robots alone steps by the robots' own stage, its fast path;
    the same A1 beside a free body steps in the one solve: ``test_the_a1_beside_a_box_stands_still_too``.)"""
    w = tb.World(gravity=(0.0, 0.0, -G))
    heights = base_heights(w, a1_standing(w), 10.0)
    assert np.abs(heights - heights[0]).max() < 1e-3


def test_the_a1_beside_a_box_stands_still_too():
    """The A1 standing as above with a free box resting beside it (so its feet's contacts are rows of the one
    solve): its base height stays within 1 mm over 5 s, the box rests (within 0.05 mm of its closed-form height)."""
    w = tb.World(gravity=(0.0, 0.0, -G))
    robot = a1_standing(w)
    box = w.add_body(tb.Box(0.2, 0.2, 0.2), mass=1.0, position=(1.0, 0.0, 0.1))
    heights = base_heights(w, robot, 5.0)
    assert np.abs(heights - heights[0]).max() < 1e-3
    assert abs(box.position[2] - 0.1) < 5e-5


ARM_MASS, ARM_LENGTH = 1.0, 1.0
ARM_INERTIA = ARM_MASS * ARM_LENGTH ** 2 / 3.0   # a thin rod about its end [kg m²]
GRAVITY_TORQUE = ARM_MASS * G * ARM_LENGTH / 2.0   # about the hinge, the rod horizontal [N m]


def arm_world(solver: str, friction: str, joint_friction: float = 0.0, upper: float = np.inf):
    """A 1 m, 1 kg rod hinged at one end 1 m above the ground (axis y), released horizontal: gravity turns it
    +q. A free box rests on the ground beside it (so the robot steps in the one solve)."""
    w = tb.World(gravity=(0, 0, -G), solver=solver, friction=friction)
    w.add_ground()
    inertia = np.diag([1e-4, ARM_MASS * ARM_LENGTH ** 2 / 12.0, ARM_MASS * ARM_LENGTH ** 2 / 12.0])
    rod = LinkSpec("rod", ARM_MASS, np.array([ARM_LENGTH / 2, 0.0, 0.0]), inertia)
    hinge = JointSpec("hinge", "revolute", "base", "rod", origin_xyz=np.array([0.0, 0.0, 1.0]),
                      axis=np.array([0.0, 1.0, 0.0]), friction=joint_friction, lower=-np.inf, upper=upper)
    robot = w.add_robot(RobotDescription("arm", [LinkSpec("base"), rod], [hinge]))
    w.add_body(tb.Box(0.2, 0.2, 0.2), mass=1.0, position=(2.0, 0.0, 0.1))
    return w, robot


@pytest.mark.parametrize("solver,friction", SOLVERS)
def test_a_joint_limit_stops_the_rod(solver, friction):
    """The rod falls against an upper limit at 0.3 rad and stays there: after 1 s its angle is the limit to
    1e-3 rad (the limit row's speculative margin lets it reach the bound, not pass it) and its speed below
    1e-3 rad/s (an inelastic limit)."""
    w, robot = arm_world(solver, friction, upper=0.3)
    for _ in range(240):
        w.step(H)
        assert robot.q[0] <= 0.3 + 1e-3
    assert robot.q[0] == pytest.approx(0.3, abs=1e-3)
    assert abs(robot.qd[0]) < 1e-3


@pytest.mark.parametrize("solver,friction", [s for s in SOLVERS if s[0] != "cg"])
def test_joint_dry_friction_holds_or_slows_the_rod(solver, friction):
    """Dry friction F in the hinge (closed forms; "cg" refuses dry friction: its QP has no bounded rows):

    - F = 1.2 × the gravity torque m g L / 2 holds the horizontal rod still: |q| below the drift that the
      solver's tolerance allows (its residual ≤ 1e-6 rad/s, the default tolerance, over 0.5 s: 5e-7 rad; Lemke
      solves exactly, APGD stops at 6e-9 rad);
    - F = 0.4 × it lets the rod fall with α = (m g L / 2 − F) / I. Semi-implicit Euler over n sub-steps of h
      gives q_n = α h² n (n + 1) / 2 exactly for a constant torque; the torque's cos q falls by 0.2 % at the
      0.06 rad reached in 0.1 s, so the angle is within 1 % of it."""
    w, robot = arm_world(solver, friction, joint_friction=1.2 * GRAVITY_TORQUE)
    for _ in range(120):
        w.step(H)
    assert abs(robot.q[0]) < w.settings.tolerance * 0.5

    w, robot = arm_world(solver, friction, joint_friction=0.4 * GRAVITY_TORQUE)
    steps = 24
    for _ in range(steps):
        w.step(H)
    n = steps * w.settings.substeps
    h = H / w.settings.substeps
    alpha = (GRAVITY_TORQUE - 0.4 * GRAVITY_TORQUE) / ARM_INERTIA
    assert robot.q[0] == pytest.approx(alpha * h * h * n * (n + 1) / 2, rel=1e-2)
