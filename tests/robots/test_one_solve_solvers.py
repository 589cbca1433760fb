"""The one solve with every solver: a robot's contacts, limits and dry friction are rows of APGD's, CG's and
Lemke's problem as of the Gauss–Seidel sweep's (solvers/velocity_solve.py, solvers/rows.py, constraints/
link_rows.py). Each scene has a free body beside the robot, so that the robot steps in the one solve, and is
checked against a closed form, a conservation law or the same scene with a fixed body.

Solver and friction model pairs: APGD with the cone, Lemke with the Anitescu–Stewart pyramid (its LCP), CG
without friction (its QP is frictionless: seed 004)."""

from __future__ import annotations

import numpy as np
import pytest

import tumble as tb
from tumble.robots import GeomSpec, JointSpec, LinkSpec, RobotDescription

H = 1 / 240
G = 9.81


def box_inertia(m: float, a: float, b: float, c: float) -> np.ndarray:
    return np.diag([m * (b * b + c * c) / 12, m * (a * a + c * c) / 12, m * (a * a + b * b) / 12])
SOLVERS = [("apgd", "cone"), ("lemke", "pyramid"), ("cg", "none")]


def tray_world(solver: str, friction: str, twin: bool):
    """tests/robots/test_one_solve.py's tray (a PD-held prismatic 5 kg link, or a fixed body with ``twin``) with
    a stack of three 1 kg, 0.2 m boxes, under ``solver``."""
    w = tb.World(gravity=(0, 0, -G), solver=solver, friction=friction)
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


@pytest.mark.parametrize("solver,friction", SOLVERS)
def test_a_stack_on_a_robot_s_tray_rests_as_on_a_fixed_body(solver, friction):
    """The stack on the PD-held tray sinks into it no deeper than 0.05 mm over 2 s (the bound of the Gauss–Seidel
    test, tests/robots/test_one_solve.py), and within 0.05 mm of the same stack on a fixed tray under the same
    solver: the link's rows are solved with the stack's, not apart (apart, the stack sank 1.8–3.1 mm)."""
    sinks = []
    for twin in (True, False):
        w, robot, boxes = tray_world(solver, friction, twin)
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


@pytest.mark.parametrize("solver,friction", SOLVERS)
def test_a_floating_robot_and_a_box_colliding_conserve_momentum(solver, friction):
    """A floating one-link robot thrown spinning against a free box in zero gravity (tests/robots/
    test_one_solve.py's scene): whatever impulses the solver finds act on both through the same rows at one
    common point, so linear and angular momentum are conserved to rounding (1e-12, as with Gauss–Seidel)."""
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
    for _ in range(120):
        w.step(H)
        touched += len(w.contacts().depth) > 0
    assert touched > 10
    p1, l1 = w.linear_momentum(), w.angular_momentum(point=(0, 0, 0))
    assert np.abs(p1 - p0).max() < 1e-12
    assert np.abs(l1 - l0).max() < 1e-12


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
