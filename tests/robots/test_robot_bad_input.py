"""The Robot handle and the robot step under bad or extreme input (issue 53 items 2, 5, 10): the step guard puts the
robots back with the bodies, the dynamics methods never return NaN silently, link numbers do not wrap around,
controls name their argument, huge ball-joint quaternions are scaled before normalizing, a limited joint at a
huge speed stays sane, and a robot file's oversized collision mesh is refused before any hull is built."""

from __future__ import annotations

import dataclasses
import re
import time

import numpy as np
import pytest

import tumble as tb
from tumble.robots.description import GeomSpec, JointSpec, LinkSpec, RobotDescription

I = np.eye(3) * 0.01


def arm() -> RobotDescription:
    """base → a (revolute about y, limited to ±1 rad) → b (spherical), boxes on every link."""
    box = [GeomSpec(tb.Box(0.1, 0.1, 0.1))]
    links = [LinkSpec("base", 1.0, np.zeros(3), I.copy(), list(box)),
             LinkSpec("a", 1.0, np.array([0.0, 0.0, 0.1]), I.copy(), list(box)),
             LinkSpec("b", 1.0, np.array([0.0, 0.0, 0.1]), I.copy(), list(box))]
    joints = [JointSpec("j1", "revolute", "base", "a", np.array([0.0, 0.0, 0.3]), axis=np.array([0.0, 1.0, 0.0]),
                        lower=-1.0, upper=1.0),
              JointSpec("j2", "spherical", "a", "b", np.array([0.0, 0.0, 0.3]))]
    return RobotDescription("arm", links, joints)


def world_with_free_body():
    world = tb.World()
    world.add_ground()
    robot = world.add_robot(arm(), position=(0.0, 0.0, 1.0))
    ball = world.add_body(tb.Sphere(0.1), position=(3.0, 0.0, 1.0))
    return world, robot, ball


def test_the_step_guard_puts_the_robots_back_with_a_free_body_present():
    """Issue 53 item 2: a World step that goes non-finite after the robots' stage changed their q̇ and warm starts
    (here a free body of 1 g pushed by 1e308 N overflows its own step; the issue's robot.qd = 1e154 is now refused
    at the setter, below) raised NonFiniteStep, which promises the state as before the step, but left the robots
    as the stage made them (with qd = 1e154: NaN). Now q, q̇ and the warm starts (the limit and friction rows'
    impulses) are as before the step, with the bodies and the time."""
    world = tb.World()
    world.add_ground()
    desc = arm()
    desc.joints[0] = dataclasses.replace(desc.joints[0], friction=0.05)   # (a friction row: the stage runs)
    robot = world.add_robot(desc, position=(0.0, 0.0, 1.0))
    q = robot.q
    q[0] = 0.5
    robot.q, robot.qd = q, [2.0, 0.1, 0.2, 0.3]
    for _ in range(3):
        world.step(1 / 240)
    ball = world.add_body(tb.Sphere(0.1), position=(3.0, 0.0, 1.0), mass=1e-3)
    forest = world.model.robots
    forest.state.lower_impulse[:] = 0.25   # (a warm start to keep)
    q, qd, t = robot.q, robot.qd, world.time
    impulses = [a.copy() for a in (forest.state.lower_impulse, forest.state.upper_impulse,
                                   forest.state.friction_impulse)]
    x_ball, x_link = ball.position.copy(), robot.link("b").body.position.copy()
    for _ in range(2):   # (and again: the failed step changed nothing)
        ball.apply_force((1e308, 0.0, 0.0))
        with pytest.raises(tb.NonFiniteStep, match=r"body \d+ .* the world's state and time are as before the step"):
            world.step(1 / 240)
        assert robot.q.tolist() == q.tolist() and robot.qd.tolist() == qd.tolist() and world.time == t
        for a, b in zip(impulses, (forest.state.lower_impulse, forest.state.upper_impulse,
                                   forest.state.friction_impulse), strict=True):
            assert a.tolist() == b.tolist()
        assert ball.position.tolist() == x_ball.tolist()
        assert robot.link("b").body.position.tolist() == x_link.tolist()
    world.step(1 / 240)   # (and the world steps on)
    assert np.all(np.isfinite(robot.q)) and robot.qd.tolist() != qd.tolist()


def test_forward_dynamics_never_returns_nan_silently():
    """Issue 53 item 10: τ = 1e308 overflows q̈; the answer is a FloatingPointError naming the method, the entry
    and its joint (a finite τ whose q̈ overflows float64 has no answer to return)."""
    _, robot, _ = world_with_free_body()
    with pytest.raises(FloatingPointError, match=r"forward_dynamics: q̈\[\d\] \(joint '.*'\) overflows float64 for "
                                                 r"the q, qd and tau given \(robot 'arm'\)"):
        robot.forward_dynamics(robot.q, np.zeros(robot.nv), [1e308] * robot.nv)
    with pytest.raises(FloatingPointError, match=r"inverse_dynamics: τ\[\d\] .* overflows float64"):
        robot.inverse_dynamics(robot.q, np.zeros(robot.nv), [1e308] * robot.nv)
    assert np.all(np.isfinite(robot.forward_dynamics(robot.q, np.zeros(robot.nv), [1e3] * robot.nv)))


def test_joint_of_does_not_wrap_around_and_controls_name_their_argument():
    _, robot, _ = world_with_free_body()
    assert robot.joint_of(0) == "fixed base" and robot.joint_of(2) == "j2"
    for link in (-1, 3):
        with pytest.raises(ValueError, match=rf"link must be a link number in \[0, 2\] \(robot 'arm' has 3 links; no "
                                             rf"wrapping around\), got {link}"):
            robot.joint_of(link)
    with pytest.raises(TypeError, match=r"link must be a link number \(an int\), got 1.0"):
        robot.joint_of(1.0)
    with pytest.raises(TypeError, match=r"tau must be a real number, got 'abc' of type str"):
        robot.tau = "abc"
    with pytest.raises(ValueError, match=r"kp must be finite, got nan"):
        robot.kp = float("nan")
    with pytest.raises(TypeError, match=r"q_target must be a real number, got None"):
        robot.q_target = None
    robot.tau = 2
    assert robot.tau.tolist() == [2.0] * robot.nv


def test_a_huge_ball_joint_quaternion_is_scaled_before_normalizing():
    """Issue 53 item 5: q of 1e200 was normalized to zero (|q|² overflowed); scaled first, as _checks.quaternion."""
    _, robot, _ = world_with_free_body()
    q = robot.q
    q[1:5] = [1e200, 0.0, 1e200, 0.0]
    robot.q = q
    assert np.allclose(robot.q[1:5], [2 ** -0.5, 0.0, 2 ** -0.5, 0.0], rtol=0, atol=1e-15)
    q[1:5] = [0.5, 0.5, 0.5, 0.5]
    robot.q = q
    assert robot.q[1:5].tolist() == [0.5, 0.5, 0.5, 0.5]   # (a unit quaternion kept bit for bit)
    for small in (0.0, 1e-200):
        q[1:5] = [small, 0.0, 0.0, 0.0]
        with pytest.raises(ValueError, match=r"q: the quaternion of joint 'j2' at q\[1:5\] is zero \(norm below "
                                             r"1e-12\), got \["):
            robot.q = q


def test_joint_speeds_are_limited_at_the_setter_and_a_limited_joint_stops_sanely_below_it():
    """Issue 53 item 10: a limited hinge at q̇ = 1e20 rad/s ended its step 67 rad beyond its limit (the stop's
    rounding, 2.2e-16 × 1e20, left 1.6e4 rad/s). q̇ is refused above JOINT_SPEED_MAX = 1e6 (the issue's 1e154 too);
    at the bound the hinge stops at its limit within the step, finite, with no more energy than it had."""
    world = tb.World()
    world.add_ground()
    desc = arm()
    desc.joints[1] = dataclasses.replace(desc.joints[1], type="fixed")
    robot = world.add_robot(desc, position=(0.0, 0.0, 1.0))
    world.add_body(tb.Sphere(0.1), position=(3.0, 0.0, 1.0))
    for speed in (1e20, 1e154, -1.0000001e6):
        with pytest.raises(ValueError, match=rf"qd\[0\] \(joint 'j1' of robot 'arm'\) is {re.escape(repr(speed))}; a "
                                             r"joint speed must be at most 1e\+06 rad/s or m/s in size "
                                             r"\(docs/conventions.md \"Limits\"\)"):
            robot.qd = [speed]
    assert robot.qd.tolist() == [0.0]
    robot.qd = [1e6]
    energy = robot.kinetic_energy()
    for _ in range(10):
        world.step(1 / 240)
        assert np.all(np.isfinite(robot.qd)) and -1.0 - 1e-6 <= robot.q[0] <= 1.0 + 1e-6, robot.q
    assert robot.kinetic_energy() <= energy


def _urdf_with_mesh(folder, mesh) -> str:
    path = folder / "robot.urdf"
    path.write_text(f'<?xml version="1.0"?><robot name="big"><link name="a"><collision><geometry>'
                    f'<mesh filename="{mesh.name}"/></geometry></collision></link></robot>')
    return str(path)


def test_an_oversized_collision_mesh_is_refused_naming_the_file_and_its_count(tmp_path):
    """Issue 53 item 8: a 1.3 M-triangle mesh ran > 600 s before the 2048-vertex refusal (the hull's checks grow
    as vertices × faces, and a hull refused for nearly coplanar faces was retried with jitter). Now a
    mesh of more than HULL_POINTS_MAX (200,000) vertices is refused as soon as it is read, and a finely
    tessellated sphere (10,242 vertices, all on its hull) for its hull's vertex count at once; both name the
    file and the count."""
    trimesh = pytest.importorskip("trimesh")
    from tumble._checks import HULL_POINTS_MAX
    from tumble.robots.urdf import read_urdf

    n = (HULL_POINTS_MAX + 2) // 3   # disjoint small triangles: 200,001 vertices that trimesh does not merge
    rng = np.random.default_rng(0)
    tri = rng.uniform(-0.1, 0.1, (n, 1, 3)) + rng.uniform(-1e-3, 1e-3, (n, 3, 3))
    big = tmp_path / "big.stl"
    trimesh.Trimesh(tri.reshape(-1, 3), np.arange(3 * n).reshape(n, 3), process=False).export(big)
    start = time.perf_counter()
    with pytest.raises(ValueError, match=rf"big\.stl has {3 * n} vertices \({n} triangles\), more than the "
                                         rf"{HULL_POINTS_MAX} a collision mesh may have"):
        read_urdf(_urdf_with_mesh(tmp_path, big))
    assert time.perf_counter() - start < 5.0   # reading the 3 MB file: 0.2 s here

    sphere = tmp_path / "sphere.stl"
    trimesh.creation.icosphere(subdivisions=5).export(sphere)
    start = time.perf_counter()
    with pytest.raises(ValueError, match=r"sphere\.stl\).*the hull has 10242 vertices, more than the 2048.*"
                                         r"convex_decomposition=True"):
        read_urdf(_urdf_with_mesh(tmp_path, sphere))
    assert time.perf_counter() - start < 5.0
