"""Loads on a robot link's World body — ``Body.apply_force`` / ``apply_torque``, force callbacks, springs — act on
the robot as the generalized force Jᵀ (τ, f) through the link's Jacobian at its COM (robots/step.py
``gather_link_loads``), in every way a step runs the robots (one robot alone: ``World.step``'s one kernel; robots
and a ground: the robots' one kernel; robots and free bodies: the stages around the World's step). Checked
against closed forms (a pushed slider, a twisted rod, a floating robot's momentum) and against M⁻¹ Jᵀ w formed
from ``Robot.mass_matrix`` and ``Robot.jacobian``."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.optimize import brentq

import tumble as tb
from tumble.robots import GeomSpec, JointSpec, LinkSpec, RobotDescription

G = 9.81
H = 1 / 240


def world_for(path: str, gravity: float = 0.0) -> tb.World:
    """A world in which a robot's step runs by ``path``: "alone" (the robot alone: World.step's one kernel),
    "ground" (robots and a ground far below: the robots' one kernel, links_step) or "mixed" (a free body far away:
    contact_stage before the World's step, finish_step after)."""
    w = tb.World(gravity=(0, 0, -gravity))
    if path == "ground":
        w.add_ground(-50.0)
    elif path == "mixed":
        w.add_body(tb.Sphere(0.1), mass=1.0, position=(50.0, 0.0, 0.0))
    return w


PATHS = ["alone", "ground", "mixed"]


def box_link(name: str, mass: float, com=(0.0, 0.0, 0.0), inertia=(0.01, 0.02, 0.03)) -> LinkSpec:
    return LinkSpec(name, mass, np.array(com, dtype=float), np.diag(inertia), [GeomSpec(tb.Box(0.05, 0.05, 0.05))])


@pytest.mark.parametrize("path", PATHS)
def test_a_force_on_a_slider_s_link_accelerates_it_by_f_over_m(path):
    """A 2 kg link on a slider along x pushed by f = (3, 4, −5) N at its COM for one step from rest: q̇ = h f_x / m
    (the joint holds the rest), to 1e-15 m/s; the load is used once (the next step adds nothing)."""
    w = world_for(path)
    links = [LinkSpec("base"), box_link("block", 2.0)]
    joints = [JointSpec("slide", "prismatic", "base", "block", np.zeros(3), np.eye(3), np.array([1.0, 0.0, 0.0]))]
    robot = w.add_robot(RobotDescription("slider", links, joints), position=(0, 0, 1))
    robot.link("block").body.apply_force([3.0, 4.0, -5.0])
    w.step(H)
    assert robot.qd[0] == pytest.approx(H * 3.0 / 2.0, abs=1e-15)
    w.step(H)
    assert robot.qd[0] == pytest.approx(H * 3.0 / 2.0, abs=1e-15)


@pytest.mark.parametrize("path", PATHS)
def test_a_torque_and_an_off_centre_force_turn_a_hinged_rod_by_the_closed_form(path):
    """A rod hinged about y at its frame, COM 0.25 m along x: a torque (0, 0.3, 7) N m plus a force (0, 0, −2) N at
    its far end (0.5 m out) give τ = 0.3 + 0.5 · 2 about y, so q̇ = h τ / I_hinge with I_hinge = I_yy + m c², to
    1e-14 rad/s."""
    w = world_for(path)
    m, c, iyy = 1.5, 0.25, 0.04
    links = [LinkSpec("base"), box_link("rod", m, (c, 0.0, 0.0), (0.001, iyy, iyy))]
    joints = [JointSpec("hinge", "revolute", "base", "rod", np.zeros(3), np.eye(3), np.array([0.0, 1.0, 0.0]))]
    robot = w.add_robot(RobotDescription("rod", links, joints), position=(0, 0, 1))
    body = robot.link("rod").body
    body.apply_torque([0.0, 0.3, 7.0])
    body.apply_force([0.0, 0.0, -2.0], point=(0.5, 0.0, 1.0))
    w.step(H)
    assert robot.qd[0] == pytest.approx(H * (0.3 + 0.5 * 2.0) / (iyy + m * c * c), abs=1e-14)


def random_arm(rng: np.random.Generator) -> RobotDescription:
    """Five links, each with a shape, on revolute, prismatic and spherical joints of random axes and offsets."""
    links, joints = [LinkSpec("base")], []
    for i, kind in enumerate(["revolute", "spherical", "prismatic", "revolute", "revolute"]):
        A = rng.normal(size=(3, 3))
        links.append(LinkSpec(f"l{i}", float(rng.uniform(0.5, 2.0)), rng.normal(size=3) * 0.1,
                              A @ A.T * 0.01 + 0.01 * np.eye(3), [GeomSpec(tb.Sphere(0.02))]))
        axis = rng.normal(size=3)
        joints.append(JointSpec(f"j{i}", kind, links[-2].name, f"l{i}", rng.normal(size=3) * 0.2, np.eye(3),
                                axis / np.linalg.norm(axis)))
    return RobotDescription("arm", links, joints)


@pytest.mark.parametrize("path", PATHS)
def test_loads_on_every_link_move_the_robot_by_m_inverse_j_transpose_w(path):
    """Random forces fᵢ at random points pᵢ and torques τᵢ on each link of a random 5-link arm at a random pose, at
    rest, no gravity: one step's q̇ is h M⁻¹ Σ (J_ω(pᵢ)ᵀ τᵢ + J_v(pᵢ)ᵀ fᵢ) with ``Robot.jacobian`` at each force's
    point and ``Robot.mass_matrix`` (an independent path: the Jacobian's kernel at the point itself, not at the COM
    with the moment (pᵢ − cᵢ) × fᵢ, and a dense solve), to 1e-11 relative (rounding of M⁻¹ of a tree whose
    inertias span 1e-2 to 2)."""
    rng = np.random.default_rng(7)
    w = world_for(path)
    robot = w.add_robot(random_arm(rng), position=(0, 0, 1))
    q = rng.normal(size=robot.nq)
    q[2:6] /= np.linalg.norm(q[2:6])   # (the ball joint's quaternion: after j0's one angle)
    robot.q = q
    tau = np.zeros(robot.nv)
    for link in robot.links[1:]:
        f, t = rng.normal(size=3), rng.normal(size=3)
        point = link.com + rng.normal(size=3) * 0.1
        link.body.apply_force(f, point=point)
        link.body.apply_torque(t)
        J = robot.jacobian(link.name, point)          # (ω, v) rows
        tau += J[:3].T @ t + J[3:].T @ f
    expected = H * np.linalg.solve(robot.mass_matrix(), tau)
    w.step(H)
    np.testing.assert_allclose(robot.qd, expected, rtol=1e-11, atol=1e-11 * np.abs(expected).max())


def test_a_push_on_a_floating_robot_changes_its_momentum_by_the_impulse():
    """A floating three-link robot in zero gravity, at rest, pushed for one step by f = (1, −2, 0.5) N at a point of
    its last link: its linear momentum Σ m v becomes h f and its angular momentum about its centre of mass
    h (p − c) × f (the equations of motion at one pose conserve both but for the load). The momenta are read at the
    step's end pose, which differs from the start's by O(h²): a step of h = 1 µs makes that 1e-12 of the change;
    1e-9 relative allowed."""
    rng = np.random.default_rng(3)
    w = tb.World(gravity=(0, 0, 0))
    desc = random_arm(rng)
    desc = RobotDescription("float", [box_link("base", 1.0)] + desc.links[1:4], desc.joints[:3])
    robot = w.add_robot(desc, position=(0, 0, 1), fixed_base=False)
    tip = robot.links[-1]
    f, point = np.array([1.0, -2.0, 0.5]), tip.com + np.array([0.05, 0.02, -0.03])
    centre = sum(link.mass * link.com for link in robot.links) / sum(link.mass for link in robot.links)
    tip.body.apply_force(f, point=point)
    h = 1e-6
    w.step(h)
    links = [link for link in robot.links if link.mass > 0]
    linear = sum(link.mass * link.velocity for link in links)
    angular = sum(link.rotation @ desc.links[i].inertia @ link.rotation.T @ link.angular_velocity
                  + link.mass * np.cross(link.com - centre, link.velocity)
                  for i, link in enumerate(robot.links) if link.mass > 0)
    np.testing.assert_allclose(linear, h * f, rtol=1e-9)
    np.testing.assert_allclose(angular, h * np.cross(point - centre, f), rtol=1e-9)


ROD_URDF = """<robot name="rod">
  <link name="base"/>
  <link name="rod">
    <inertial><origin xyz="0 0 -0.2"/><mass value="1"/>
      <inertia ixx="0.02" iyy="0.02" izz="0.002" ixy="0" ixz="0" iyz="0"/></inertial>
    <collision><origin xyz="0 0 -0.2"/><geometry><box size="0.05 0.05 0.4"/></geometry></collision>
  </link>
  <joint name="hinge" type="continuous"><parent link="base"/><child link="rod"/><axis xyz="0 1 0"/>
    <dynamics damping="0.5"/></joint>
</robot>"""


def test_a_spring_from_a_link_to_the_world_holds_a_pendulum_at_the_closed_form_angle(tmp_path):
    """A 1 kg rod (COM 0.2 m below its hinge about y, tip 0.4 m) pulled toward a fixed point 0.4 m beside its
    hanging tip by an AxialSpring (k = 40 N/m, rest length 0) comes to rest, damped, where the spring's and
    gravity's torques about the hinge cancel (brentq on that torque balance), to 1e-9 rad after 10 s. The world
    saved to a scene file and loaded again (the spring naming the link body "rod/rod") rests at the same angle."""
    m, c, tip, k = 1.0, 0.2, 0.4, 40.0
    anchor = np.array([0.4, 0.0, 1.0 - tip])          # beside the hanging tip
    urdf = tmp_path / "rod.urdf"
    urdf.write_text(ROD_URDF)
    w = tb.World(gravity=(0, 0, -G))
    robot = w.add_urdf(urdf, position=(0, 0, 1), fixed_base=True)
    w.add_spring(tb.AxialSpring(robot.link("rod").body, None, (0.0, 0.0, 1.0 - tip), anchor, k, 0.0, 0.0))
    loaded = tb.load_scene(w.save_scene(tmp_path / "scene.toml"))
    assert [type(s).__name__ for s in loaded.springs] == ["AxialSpring"]

    def torque(theta: float) -> float:   # about +y at the hinge (0, 0, 1), the tip swung by θ toward +x
        p = np.array([tip * math.sin(theta), 0.0, 1.0 - tip * math.cos(theta)])
        com = np.array([c * math.sin(theta), 0.0, 1.0 - c * math.cos(theta)])
        hinge = np.array([0.0, 0.0, 1.0])
        return float(np.cross(p - hinge, k * (anchor - p))[1] + np.cross(com - hinge, [0.0, 0.0, -m * G])[1])

    expected = brentq(torque, 0.0, math.pi / 2, xtol=1e-15)
    assert expected > 0.3
    for world in (w, loaded):
        for _ in range(2400):
            world.step(H)
        rod = world.robots[0]
        assert rod.q[0] == pytest.approx(-expected, abs=1e-9)   # (q about +y turns −z, the tip, toward −x)
