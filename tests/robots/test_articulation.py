"""Articulations in reduced coordinates against closed forms, conservation laws and independent computations
(robots/dynamics.py, robots/step.py; docs/robots.md).

Robots here are built from a ``RobotDescription`` in code; the comparisons with Pinocchio on robot files are in
test_pinocchio.py."""

from __future__ import annotations

import math

import numpy as np
import pytest

import tumble as tb
from tumble.robots import GeomSpec, JointSpec, LinkSpec, RobotDescription

G = 9.81

SOLVERS = [pytest.param({}, id="pgs"), pytest.param({"solver": "apgd"}, id="apgd"),
           pytest.param({"solver": "lemke", "friction": "pyramid"}, id="lemke-pyramid")]
"""World options whose solver reaches the link contacts with friction (robots/contact_solve.py)."""
FRICTIONLESS = [pytest.param({"solver": "cg", "friction": "none"}, id="cg"),
                pytest.param({"solver": "lemke", "friction": "none"}, id="lemke")]


def rod_inertia(m: float, length: float, radius: float = 0.01) -> np.ndarray:
    """A solid cylinder along z about its COM [kg m²]."""
    ixx = m * (3 * radius**2 + length**2) / 12.0
    return np.diag([ixx, ixx, 0.5 * m * radius**2])


def chain(n: int, *, length: float = 0.2, mass: float = 0.5, axis=(1.0, 0.0, 0.0), geoms: bool = False,
          lower: float = -np.inf, upper: float = np.inf, damping: float = 0.0) -> RobotDescription:
    """n rods hanging along −z from hinges about ``axis``; link i's frame is at its hinge, its COM half a
    length below; each next hinge a length below."""
    links = [LinkSpec("base")]
    joints = []
    for i in range(n):
        shapes = [GeomSpec(tb.Capsule(0.02, length - 0.04), np.array([0.0, 0.0, -length / 2]))] if geoms else []
        links.append(LinkSpec(f"l{i}", mass, np.array([0.0, 0.0, -length / 2]), rod_inertia(mass, length), shapes))
        joints.append(JointSpec(f"j{i}", "revolute", "base" if i == 0 else f"l{i - 1}", f"l{i}",
                                np.array([0.0, 0.0, 0.0 if i == 0 else -length]), np.eye(3), np.array(axis),
                                lower=lower, upper=upper, damping=damping))
    return RobotDescription("chain", links, joints)


def random_tree(rng: np.random.Generator) -> RobotDescription:
    """A branching tree with every joint type but floating, random axes, offsets and inertias."""
    links = [LinkSpec("base", 1.0, rng.normal(size=3) * 0.05, np.diag([0.01, 0.02, 0.03]))]
    joints = []
    types = ["revolute", "prismatic", "spherical", "revolute", "fixed", "continuous", "revolute"]
    for i, kind in enumerate(types):
        A = rng.normal(size=(3, 3))
        inertia = A @ A.T * 0.01 + 0.01 * np.eye(3)
        parent = links[int(rng.integers(0, len(links)))].name
        axis = rng.normal(size=3)
        R, _ = np.linalg.qr(rng.normal(size=(3, 3)))
        if np.linalg.det(R) < 0:
            R[:, 0] *= -1
        links.append(LinkSpec(f"l{i}", float(rng.uniform(0.2, 2.0)), rng.normal(size=3) * 0.1, inertia))
        joints.append(JointSpec(f"j{i}", kind, parent, f"l{i}", rng.normal(size=3) * 0.2, R,
                                axis / np.linalg.norm(axis)))
    return RobotDescription("tree", links, joints)


def link_origin(robot, name):
    return robot.link(name).position


# ---------------------------------------------------------------------------------------------------- dynamics
def test_pendulum_period_matches_closed_form():
    """A compound pendulum (rod of 0.2 m, 0.5 kg, hinge at its end) from 0.02 rad: T = 2π √(I_O / (m g d))
    (1 + θ₀²/16) with I_O = I_c + m d². RK4 at 1 ms: the period from interpolated zero crossings to 1e-6
    relative (the amplitude correction is 2.5e-5; the next term ~1e-10; RK4's phase error ~(ωh)⁴ ~1e-9)."""
    w = tb.World(gravity=(0, 0, -G), robot_integrator="rk4")
    robot = w.add_robot(chain(1), position=(0, 0, 1))
    theta0 = 0.02
    robot.q = [theta0]
    m, d = 0.5, 0.1
    I_O = rod_inertia(m, 0.2)[0, 0] + m * d * d
    T = 2 * math.pi * math.sqrt(I_O / (m * G * d)) * (1 + theta0**2 / 16)
    h = 1e-3
    crossings, prev, t = [], robot.q[0], 0.0
    while len(crossings) < 3:
        w.step(h)
        t += h
        q = robot.q[0]
        if prev > 0 >= q or prev < 0 <= q:
            crossings.append(t - h * q / (q - prev))
        prev = q
    period = crossings[2] - crossings[0]
    assert abs(period - T) / T < 1e-6


def test_double_pendulum_conserves_energy_with_rk4():
    """A free double pendulum released at 90°/45° for 10 s at dt = 1e-3 with RK4: energy within 1e-6 of its
    start (the issue's bound; measured ~1e-10)."""
    w = tb.World(gravity=(0, 0, -G), robot_integrator="rk4")
    robot = w.add_robot(chain(2), position=(0, 0, 2))
    robot.q = [math.pi / 2, math.pi / 4]
    E0 = robot.kinetic_energy() + robot.potential_energy()
    for _ in range(10_000):
        w.step(1e-3)
    E1 = robot.kinetic_energy() + robot.potential_energy()
    assert abs(E1 - E0) <= 1e-6 * abs(E0)
    assert np.max(np.abs(robot.qd)) > 1.0   # it did swing


def test_joints_hold_by_construction():
    """After a chaotic 4-link swing, each hinge point is where both links put it to rounding (≤ 1e-14 m):
    reduced coordinates have no constraint error to drift."""
    w = tb.World(gravity=(0, 0, -G))
    robot = w.add_robot(chain(4), position=(0, 0, 2))
    robot.q = [1.5, -0.7, 0.3, 2.0]
    for _ in range(2000):
        w.step(1 / 240)
    for i in range(1, 4):
        parent = robot.link(f"l{i - 1}")
        hinge_from_parent = parent.position + parent.rotation @ np.array([0.0, 0.0, -0.2])
        assert np.linalg.norm(hinge_from_parent - robot.link(f"l{i}").position) < 1e-14


def test_one_kernel_step_is_semi_implicit_euler_on_the_forward_dynamics():
    """A robot alone takes ``World.step``'s one-kernel path, from the second step on through the compiled entry
    point it keeps (no dispatch): each step is q̇⁺ = q̇ + h q̈(q, q̇, τ), q⁺ = q + h q̇⁺ with q̈ from
    ``forward_dynamics`` (compared with Pinocchio in test_pinocchio.py), to 1e-12 relative."""
    w = tb.World(gravity=(0, 0, -G))
    robot = w.add_robot(chain(5, axis=(0.6, 0.8, 0.0)), position=(0, 0, 2))
    robot.q = [0.4, -1.1, 0.7, 0.2, -0.3]
    robot.qd = [0.5, 0.1, -0.8, 1.2, 0.3]
    robot.tau = [0.2, -0.1, 0.05, 0.0, 0.1]
    h = 1 / 240
    for k in range(20):
        q, qd = robot.q.copy(), robot.qd.copy()
        qd_next = qd + h * robot.forward_dynamics(q, qd, robot.tau)
        w.step(h)
        assert np.abs(robot.qd - qd_next).max() <= 1e-12 * np.abs(qd_next).max()
        assert np.abs(robot.q - (q + h * qd_next)).max() <= 1e-12 * np.abs(q).max()
        if k == 0:
            assert w.model.robots.free_step_entry is not None


def test_link_reads_follow_every_change_of_the_joint_state():
    """Link poses are the kinematics of the current q however it changed — set, stepped (alone, and beside another
    robot), restored, another robot added, the dynamics evaluated at another q — against the closed form of a
    3-link chain of x hinges (to 1e-15 m): the robot keeps its links' kinematics between changes, never past one."""
    w = tb.World(gravity=(0, 0, -G))
    robot = w.add_robot(chain(3), position=(0, 0, 2))

    def expected(q):
        out, p, angle = [], np.array([0.0, 0.0, 2.0]), 0.0
        for i in range(3):
            out.append(p.copy())
            angle += q[i]
            p = p + 0.2 * np.array([0.0, np.sin(angle), -np.cos(angle)])   # R_x(angle) (0, 0, −0.2)
        return np.array(out)

    def read():
        return np.array([robot.link(f"l{i}").position for i in range(3)])

    def check():
        assert np.abs(read() - expected(robot.q)).max() < 1e-15

    check()
    robot.q = [0.3, -0.5, 0.9]
    check()
    snap = w.snapshot()
    before = read()
    for _ in range(5):
        w.step(1 / 240)
        check()
    assert np.abs(read() - before).max() > 1e-6
    w.time = 0.0
    w.restore(snap)
    check()
    robot.mass_matrix([1.0, 1.0, 1.0])
    robot.forward_dynamics([0.2, 0.1, 0.0], np.zeros(3), np.zeros(3))
    check()
    w.add_robot(chain(2), position=(1, 0, 2), name="other")
    check()
    for _ in range(5):   # two robots: the World's whole step (robots/step.py after_contacts), not the one kernel
        w.step(1 / 240)
        check()


def test_mass_matrix_inverse_and_forward_dynamics_agree():
    """On a random branching tree (revolute, prismatic, spherical, fixed, continuous joints): M is symmetric
    positive definite, RNEA(q, q̇, ABA(q, q̇, τ)) = τ, and M q̈ + RNEA(q, q̇, 0) = τ, to 1e-10 relative."""
    rng = np.random.default_rng(3)
    w = tb.World(gravity=(0.3, -0.2, -G))
    robot = w.add_robot(random_tree(rng), fixed_base=False, position=(0, 0, 1))
    for _ in range(10):
        q = rng.normal(size=robot.nq)
        qd, tau = rng.normal(size=robot.nv), rng.normal(size=robot.nv)
        M = robot.mass_matrix(q)
        assert np.allclose(M, M.T, rtol=0, atol=1e-14 * np.abs(M).max())
        assert np.all(np.linalg.eigvalsh(M) > 0)
        qdd = robot.forward_dynamics(q, qd, tau)
        scale = np.abs(tau).max()
        assert np.abs(robot.inverse_dynamics(q, qd, qdd) - tau).max() < 1e-10 * scale
        bias = robot.inverse_dynamics(q, qd, np.zeros(robot.nv))
        assert np.abs(M @ qdd + bias - tau).max() < 1e-10 * scale


def test_forward_dynamics_of_a_robot_far_from_the_origin_matches_one_at_it():
    """The joint-space dynamics of a fixed-base robot do not depend on where its base stands (uniform gravity):
    the ABA of the random tree placed 10 km from the world origin gives the q̈ it gives at the origin, to 1e-10
    relative, and q̈ = M⁻¹ (τ − RNEA(q, q̇, 0)) there as well. (The kernels work about the root's origin; about the
    world origin the inertias would reach m |r|² ~ 1e8 kg m² and leave ~2e-7 of the answer.)"""
    rng = np.random.default_rng(11)
    description = random_tree(rng)
    near = tb.World(gravity=(0.3, -0.2, -G)).add_robot(description, position=(0.0, 0.0, 0.0))
    far = tb.World(gravity=(0.3, -0.2, -G)).add_robot(description, position=(6e3, -8e3, 0.0))
    for _ in range(10):
        q = rng.normal(size=near.nq)
        qd, tau = rng.normal(size=near.nv), rng.normal(size=near.nv)
        expected = near.forward_dynamics(q, qd, tau)
        scale = np.abs(expected).max()
        assert np.abs(far.forward_dynamics(q, qd, tau) - expected).max() < 1e-10 * scale
        bias = far.inverse_dynamics(q, qd, np.zeros(far.nv))
        assert np.abs(np.linalg.solve(far.mass_matrix(q), tau - bias) - expected).max() < 1e-10 * scale


def test_a_robot_far_from_the_first_robot_steps_as_it_does_alone():
    """A world's robots are stepped as one forest. Robot b, 10 km from robot a, given random states: one step's
    velocity change (q̇₁ − q̇₀)/h, the q̈ of its velocity stage (no damping, springs or limits; a fixed base), is b's
    own forward_dynamics (its one-tree ABA) to 1e-10 relative, for a and b alike. (Worked about the forest's
    first root, b's inertias would reach m d² ~ 1e8 kg m² and its q̈ be off by ~3e-6.)"""
    rng = np.random.default_rng(5)
    description = random_tree(rng)
    w = tb.World(gravity=(0.3, -0.2, -G))
    robots = (w.add_robot(description, name="a", position=(0.0, 0.0, 0.0)),
              w.add_robot(description, name="b", position=(6e3, -8e3, 0.0)))
    h = 1e-3
    for _ in range(5):
        expected = []
        for robot in robots:
            robot.q = rng.normal(size=robot.nq)   # (the ball joint's quaternion normalized)
            robot.qd = rng.normal(size=robot.nv)
            expected.append((robot.qd.copy(), robot.forward_dynamics(robot.q, robot.qd, np.zeros(robot.nv))))
        w.step(h)
        for robot, (qd0, qdd) in zip(robots, expected, strict=True):
            assert np.abs((robot.qd - qd0) / h - qdd).max() < 1e-10 * np.abs(qdd).max(), robot.name


def test_jacobian_matches_finite_differences():
    """J q̇ = (ω, v_point) of a point on a link equals central differences of the point's world position and
    the link's orientation along q̇ (step 1e-6: error ~1e-12 ≪ the 1e-8 tolerance)."""
    rng = np.random.default_rng(5)
    w = tb.World()
    robot = w.add_robot(chain(3, axis=(0.3, 0.8, 0.1)), position=(0, 0, 1))
    q0, qd = rng.normal(size=3), rng.normal(size=3)
    body_point = np.array([0.05, -0.02, -0.1])

    def point_and_R(q):
        robot.q = q
        link = robot.link("l2")
        return link.position + link.rotation @ body_point, link.rotation

    robot.q = q0
    p = point_and_R(q0)[0]
    robot.q = q0
    J = robot.jacobian("l2", p)
    eps = 1e-6
    (p1, R1), (p0, R0) = point_and_R(q0 + eps * qd), point_and_R(q0 - eps * qd)
    v_fd = (p1 - p0) / (2 * eps)
    Rdot = (R1 - R0) / (2 * eps)
    robot.q = q0
    R = robot.link("l2").rotation
    W = Rdot @ R.T
    omega_fd = np.array([W[2, 1], W[0, 2], W[1, 0]])
    assert np.allclose(J[3:] @ qd, v_fd, atol=1e-8)
    assert np.allclose(J[:3] @ qd, omega_fd, atol=1e-8)


def test_floating_base_momentum_in_flight():
    """A floating 3-link robot tumbling in zero gravity, RK4 at 1 ms for 1 s: linear momentum Σ m v_com and
    angular momentum about the system's COM (Σ Iᵢ ωᵢ + mᵢ cᵢ × vᵢ) stay at their start to 1e-10 relative."""
    rng = np.random.default_rng(11)
    w = tb.World(gravity=(0, 0, 0), robot_integrator="rk4")
    desc = chain(3, axis=(0.0, 1.0, 0.0))
    desc.links[0] = LinkSpec("base", 2.0, np.zeros(3), np.diag([0.02, 0.03, 0.04]))
    robot = w.add_robot(desc, fixed_base=False, position=(0, 0, 1))
    robot.qd = rng.normal(size=robot.nv)

    def momenta():
        P, L, m_tot, mc = np.zeros(3), np.zeros(3), 0.0, np.zeros(3)
        links = robot.links
        for link in links:
            P += link.mass * link.velocity
            m_tot += link.mass
            mc += link.mass * link.com
        c = mc / m_tot
        for spec, link in zip(robot.description.links, links, strict=True):
            R = link.rotation
            I_world = R @ spec.inertia @ R.T
            L += I_world @ link.angular_velocity + link.mass * np.cross(link.com - c, link.velocity)
        return P, L

    P0, L0 = momenta()
    for _ in range(1000):
        w.step(1e-3)
    P1, L1 = momenta()
    assert np.linalg.norm(P1 - P0) <= 1e-10 * np.linalg.norm(P0)
    assert np.linalg.norm(L1 - L0) <= 1e-10 * np.linalg.norm(L0)


def test_gravity_compensation_holds_the_pose():
    """τ = g(q₀) applied to a 4-link arm at rest holds it at q₀ to 1e-9 rad over 5 s (semi-implicit Euler at
    1/240 s: q̈ = M⁻¹ (g − g) is rounding)."""
    w = tb.World(gravity=(0, 0, -G))
    robot = w.add_robot(chain(4, axis=(0.0, 1.0, 0.0)), position=(0, 0, 1))
    q0 = np.array([0.7, -0.4, 1.1, 0.2])
    robot.q = q0
    robot.tau = robot.gravity_torques()
    for _ in range(1200):
        w.step(1 / 240)
    assert np.abs(robot.q - q0).max() < 1e-9


# ---------------------------------------------------------------------------------------------------- controls
def test_position_motor_settles_at_the_gravity_offset():
    """A PD motor (kp, kd) holding a rod at the horizontal target π/2 settles where the motor balances gravity,
    kp (π/2 − θ) = m g d sin θ (solved by Newton below), to 1e-6 rad."""
    m, d, kp = 0.5, 0.1, 20.0
    w = tb.World(gravity=(0, 0, -G))
    robot = w.add_robot(chain(1, axis=(0.0, 1.0, 0.0)), position=(0, 0, 1))
    robot.q = [math.pi / 2]   # horizontal (along −x), the motor's target
    robot.q_target = [math.pi / 2]
    robot.kp, robot.kd = kp, 2.0
    for _ in range(2400):
        w.step(1 / 240)
    # gravity's torque about +y on the rod at angle θ is −m g d sin θ: balance kp (π/2 − θ) = m g d sin θ
    theta = math.pi / 2
    for _ in range(50):
        f = kp * (math.pi / 2 - theta) - m * G * d * math.sin(theta)
        df = -kp - m * G * d * math.cos(theta)
        theta -= f / df
    assert abs(robot.q[0] - theta) < 1e-6
    assert robot.qd[0] == pytest.approx(0.0, abs=1e-6)


@pytest.mark.parametrize("options", SOLVERS + FRICTIONLESS)
def test_joint_limit_stops_the_fall(options):
    """A rod thrown from 0.45 rad at −6 rad/s toward its lower limit of −0.5 rad (it would swing past 1 rad
    without it) stops there: never beyond by more than 2 mrad (a velocity-level row lets a step's approach
    overshoot by rounding only; 2 mrad allows the Baumgarte push's slack), with every solver."""
    w = tb.World(gravity=(0, 0, -G), **options)
    robot = w.add_robot(chain(1, lower=-0.5, upper=0.5), position=(0, 0, 1))
    robot.q = [0.45]
    robot.qd = [-6.0]
    lowest = 1.0
    for _ in range(480):
        w.step(1 / 240)
        lowest = min(lowest, robot.q[0])
    assert lowest >= -0.5 - 2e-3
    assert lowest < -0.49   # it did reach the limit


@pytest.mark.parametrize("options", SOLVERS + FRICTIONLESS)
def test_a_rod_resting_on_its_limit_holds_gravity_with_a_warm_started_row(options):
    """A rod held horizontal by its lower limit (gravity pulls it into the limit): the limit's impulse each step is
    gravity's torque about the hinge times the step, m g d h (closed form: the rod does not move), with every
    solver. The row starts from the last step's impulse (kept in the joint state), so at rest one Gauss–Seidel
    sweep confirms it (from zero it would take a second), and APGD and CG stop at once."""
    h = 1 / 240
    w = tb.World(gravity=(0, 0, -G), **options)
    robot = w.add_robot(chain(1, lower=math.pi / 2, upper=math.pi), position=(0, 0, 1))
    robot.q = [math.pi / 2]
    for _ in range(120):
        w.step(h)
    forest = w.model.robots
    m, d = 0.5, 0.1
    # frictionless Lemke solves its LCP with the normal rows' regularization first, as the World's step does
    # (velocity_solve.LEMKE_REGULARIZATION: a compliance of 1e-6 of the row's own W), so the rod rests 6e-9 rad
    # into its limit, with an impulse 1e-6 short
    regularized = w.settings.solver == "lemke" and w.settings.friction == "none"
    assert robot.q[0] == pytest.approx(math.pi / 2, abs=1e-8 if regularized else 1e-9)
    assert forest.state.lower_impulse[0] == pytest.approx(m * G * d * h, rel=2e-6 if regularized else 1e-9)
    assert forest.state.upper_impulse[0] == 0.0
    assert forest.last_rows == 1   # the last step's one limit row
    solver = w.settings.solver
    if solver == "pgs":
        assert forest.rows.stats[0] == 1.0   # in one sweep
    elif solver in ("apgd", "cg"):
        assert forest.rows.stats[0] == 0.0   # the warm start already solves it


def test_every_joint_of_a_chain_keeps_its_limits():
    """A 4-link chain with limits ±0.5 rad on every hinge, thrown with joint speeds up to 8 rad/s: no joint
    passes its limits by more than 2 mrad over 2 s (each limit's row acts on its own coordinate — a row put on
    the wrong one lets the others through by a radian)."""
    w = tb.World(gravity=(0, 0, -G))
    robot = w.add_robot(chain(4, lower=-0.5, upper=0.5), position=(0, 0, 2))
    robot.q = [0.3, -0.2, 0.4, 0.0]
    robot.qd = [-8.0, 6.0, 5.0, -7.0]
    worst, reached = 0.0, 0.0
    for _ in range(480):
        w.step(1 / 240)
        worst = max(worst, float(np.abs(robot.q).max()) - 0.5)
        reached = max(reached, float(np.abs(robot.q).max()))
    assert worst <= 2e-3
    assert reached > 0.49


def test_implicit_damping_decays_like_the_closed_form():
    """A damped hinge without gravity, q̇(0) = 1: q̇(t) = exp(−c t / I) (semi-implicit with implicit damping:
    (1 + h c/I)^−n exactly, within 0.2 % of the exponential at h c / I = 0.002)."""
    c = 0.01
    w = tb.World(gravity=(0, 0, 0))
    robot = w.add_robot(chain(1, damping=c), position=(0, 0, 1))
    robot.qd = [1.0]
    I_O = rod_inertia(0.5, 0.2)[0, 0] + 0.5 * 0.1**2
    h = 0.002 * I_O / c
    n = 1000
    for _ in range(n):
        w.step(h)
    assert robot.qd[0] == pytest.approx((1 + h * c / I_O) ** -n, rel=1e-9)
    assert robot.qd[0] == pytest.approx(math.exp(-c * n * h / I_O), rel=0.002)


# ---------------------------------------------------------------------------------------------------- contact
def lowest_point(world) -> float:
    """The lowest surface point of every capsule or box of the world's robot links [m]."""
    low = np.inf
    for body in world.bodies:
        if body.name and "/" in body.name:
            low = min(low, body.position[2] - 0.02)   # capsules of radius 0.02 about a segment; COM on it
    return low


def test_arm_falling_onto_the_ground_collides_link_by_link():
    """A 4-link arm hinged 0.35 m above the ground falls onto it: no capsule's COM ever goes below its radius
    minus 3 mm (slop 1 mm plus a step's Baumgarte push), and the arm comes to rest lying on the ground."""
    w = tb.World(gravity=(0, 0, -G))
    w.add_ground(friction=0.8)
    robot = w.add_robot(chain(4, geoms=True, damping=0.002), position=(0, 0, 0.35))
    robot.q = [1.3, 0.2, 0.1, 0.0]
    low_com = np.inf
    for _ in range(2400):
        w.step(1 / 240)
        low_com = min(low_com, min(b.position[2] for b in w.bodies if b.name and "/" in b.name))
    assert low_com >= 0.02 - 3e-3
    assert np.abs(robot.qd).max() < 1e-2


@pytest.mark.parametrize("options", SOLVERS)
def test_floating_box_robot_lands_and_rests(options):
    """A floating-base one-link robot (a 0.3 × 0.2 × 0.1 m box) dropped spinning onto the ground comes to rest
    flat at its half height (to 2 mm) within 4 s, with every solver."""
    links = [LinkSpec("torso", 2.0, np.zeros(3), np.diag([0.0083, 0.0167, 0.0217]), [GeomSpec(tb.Box(0.3, 0.2, 0.1))])]
    w = tb.World(gravity=(0, 0, -G), **options)
    w.add_ground(friction=0.8)
    robot = w.add_robot(RobotDescription("box", links, []), position=(0, 0, 0.5), fixed_base=False)
    robot.qd = [0.3, 0.0, 0.0, 0.5, 1.0, 0.0]
    for _ in range(960):
        w.step(1 / 240)
    assert robot.q[2] == pytest.approx(0.05, abs=2e-3)
    assert np.abs(robot.qd).max() < 1e-3


@pytest.mark.parametrize("options", SOLVERS)
def test_free_box_resting_on_a_motor_held_beam_loads_the_motor(options):
    """A 1 kg box resting on a horizontal beam held by a PD motor (kp = 500 N m/rad) at 0: the beam sags
    until kp θ = (m_beam d_beam + m_box x_box) g (small θ, solved exactly below): the box's weight reaches the
    joint through the contact rows, a free body's and a link's (to 2 %, the box slides a little as the beam
    tilts), with every solver."""
    length, m_beam = 0.6, 1.0
    links = [LinkSpec("base"), LinkSpec("beam", m_beam, np.array([length / 2, 0.0, 0.0]),
                                        np.diag([0.001, m_beam * length**2 / 12, m_beam * length**2 / 12]),
                                        [GeomSpec(tb.Box(length, 0.2, 0.02), np.array([length / 2, 0, 0]))])]
    joints = [JointSpec("hinge", "revolute", "base", "beam", np.zeros(3), np.eye(3), np.array([0.0, 1.0, 0.0]))]
    w = tb.World(gravity=(0, 0, -G), **options)
    robot = w.add_robot(RobotDescription("beam", links, joints), position=(0, 0, 0.5))
    robot.kp, robot.kd = 500.0, 20.0
    x_box = 0.45
    box = w.add_body(tb.Box(0.1, 0.1, 0.1), mass=1.0, position=(x_box, 0, 0.5 + 0.01 + 0.05), friction=1.0)
    for _ in range(1440):
        w.step(1 / 240)
    # hinge about +y: a positive q turns +x toward −z (the beam sags) — g torque (m_b d + m x) g cos θ
    theta = robot.q[0]
    x = box.position[0]
    expected = (m_beam * length / 2 + 1.0 * x) * G * math.cos(theta) / 500.0
    assert theta == pytest.approx(expected, rel=0.02)
    assert abs(box.velocity).max() < 1e-3


# ---------------------------------------------------------------------------------------------------- errors
def test_bad_input_changes_nothing():
    w = tb.World()
    with pytest.raises(TypeError, match="fixed_base"):
        w.add_robot(chain(2), fixed_base="yes")
    with pytest.raises(ValueError, match="orientation"):
        w.add_robot(chain(2), orientation=(0, 0, 0, 0))
    massless = chain(2)
    massless.links[2] = LinkSpec("l1")
    with pytest.raises(ValueError, match="'j1' moves no mass"):
        w.add_robot(massless)
    with pytest.raises(ValueError, match="time-stepping"):
        tb.World(method="event", event_impacts="sequential").add_robot(chain(1))
    assert w.robots == () and w.body_count == 0
    robot = w.add_robot(chain(2))
    with pytest.raises(ValueError, match="q"):
        robot.q = [1.0, 2.0, 3.0]
    with pytest.raises(ValueError, match="kp"):
        robot.kp = -1.0
    with pytest.raises(ValueError, match="no link 'hand'"):
        robot.link("hand")
    with pytest.raises(ValueError, match="already a robot"):
        w.add_robot(chain(1))


def test_link_bodies_follow_their_robot_only(tmp_path):
    """A link's World body cannot be removed or attached, and a robot built in code (no file) cannot be saved to a
    scene file: each refused with the link's name, nothing changed. (A joint on a link's body is a loop closure:
    test_closures.py.)"""
    w = tb.World()
    robot = w.add_robot(chain(2, geoms=True), position=(0, 0, 1))
    link = robot.link("l1").body
    box = w.add_body(tb.Box(0.1, 0.1, 0.1), position=(1, 0, 1))
    with pytest.raises(ValueError, match="'chain/l1', a robot link's body"):
        w.remove_body(link)
    with pytest.raises(ValueError, match="robot link's body"):
        w.attach(box, link)
    with pytest.raises(ValueError, match="robots"):
        w.save_scene(tmp_path / "scene.toml")
    assert w.body_count == 3 and not w.joints and not (tmp_path / "scene.toml").exists()


def test_removing_a_body_before_a_robot_keeps_its_links_in_place():
    """Removing a free body made before a robot moves the link bodies up one row: the robot still places its own
    links (each link body's COM where the link puts it) and its links still skip each other in detection."""
    w = tb.World(gravity=(0, 0, -G))
    box = w.add_body(tb.Box(0.1, 0.1, 0.1), position=(3, 0, 1))
    robot = w.add_robot(chain(3, geoms=True), position=(0, 0, 1))
    robot.q = [0.3, 1.2, -0.8]
    w.remove_body(box)
    for _ in range(24):
        w.step(1 / 240)
    for name in ("l0", "l1", "l2"):
        link = robot.link(name)
        assert link.body.name == f"chain/{name}"
        assert np.allclose(link.body.position, link.com, atol=1e-12)
    assert len(w.contacts().depth) == 0   # touching neighbours are not a contact


def test_snapshot_and_restore_repeat_a_robot_step_exactly():
    """restore(snapshot()) brings back q, q̇ and the controls: the steps after it repeat bitwise, contacts with the
    ground included; a snapshot of another robot's size is refused."""
    w = tb.World(gravity=(0, 0, -G))
    w.add_ground(friction=0.8)
    robot = w.add_robot(chain(3, geoms=True), position=(0, 0, 0.45))
    robot.q = [1.2, 0.3, -0.2]
    robot.kd = 0.05
    for _ in range(60):
        w.step(1 / 240)
    snap = w.snapshot()
    for _ in range(60):
        w.step(1 / 240)
    q1, qd1 = robot.q, robot.qd
    robot.kd = 1.0
    w.restore(snap)
    assert robot.kd[0] == 0.05
    for _ in range(60):
        w.step(1 / 240)
    assert np.array_equal(robot.q, q1) and np.array_equal(robot.qd, qd1)
    bad = dict(snap, robots=np.zeros(3))
    with pytest.raises(ValueError, match="robots"):
        w.restore(bad)


@pytest.mark.parametrize("friction, directions, ratio", [("cone", 8, 1.0), ("box", 8, math.sqrt(2.0)),
                                                         ("pyramid", 8, 1.0), ("pyramid", 4, math.cos(math.pi / 4))])
def test_a_link_sliding_diagonally_feels_the_friction_model(friction, directions, ratio):
    """A floating box robot sliding on the ground along the diagonal (x = y) at 1 m/s, μ = 0.4: with the cone the
    friction impulse opposes the motion at magnitude μ m g (deceleration μ g); with the box each tangent row
    takes its own μ λ_n, √2 more along the diagonal (the box model's known anisotropy); the pyramid's k-gon
    (directions from t1 = y, t2 = −x here) has a vertex on the diagonal for k = 8 (the cone's μ m g) and the
    middle of an edge for k = 4 (cos(π/4) μ m g, docs/contact.md). Measured over 0.1 s of sliding, to 2 %."""
    links = [LinkSpec("slab", 2.0, np.zeros(3), np.diag([0.02, 0.02, 0.03]), [GeomSpec(tb.Box(0.3, 0.3, 0.05))])]
    w = tb.World(gravity=(0, 0, -G), friction=friction, friction_directions=directions)
    w.add_ground(friction=0.4)
    robot = w.add_robot(RobotDescription("slab", links, []), position=(0, 0, 0.025), fixed_base=False,
                        friction=0.4)
    for _ in range(24):   # settle onto the ground
        w.step(1 / 240)
    qd = robot.qd
    qd[:3] = (1 / math.sqrt(2), 1 / math.sqrt(2), 0.0)
    robot.qd = qd
    v0 = robot.link("slab").velocity[:2].copy()
    for _ in range(24):
        w.step(1 / 240)
    v1 = robot.link("slab").velocity[:2]
    # the sweeps end by their tolerance while the slab slides (a change measured before the cone's projection
    # never did: every sliding step ran to the cap)
    forest = w.model.robots
    assert forest.rows.stats[0] < forest.iterations
    decel = (np.linalg.norm(v0) - np.linalg.norm(v1)) / 0.1
    assert decel == pytest.approx(ratio * 0.4 * G, rel=0.02)
    assert abs(v1[0] - v1[1]) < 1e-6   # still along the diagonal


def test_one_description_makes_two_robots():
    """The same RobotDescription added twice under two names gives two independent robots (the description
    itself is not changed): each swings by its own q."""
    desc = chain(2)
    w = tb.World(gravity=(0, 0, -G))
    a = w.add_robot(desc, position=(0, 0, 1), name="a")
    b = w.add_robot(desc, position=(1, 0, 1), name="b")
    assert desc.name == "chain" and (a.name, b.name) == ("a", "b")
    a.q = [0.5, 0.0]
    for _ in range(48):
        w.step(1 / 240)
    assert np.abs(a.q).max() > 0.1 and np.abs(b.q).max() == 0.0
    assert np.allclose(b.link("l0").position, (1, 0, 1))


@pytest.mark.parametrize("options", SOLVERS + [FRICTIONLESS[1]])
@pytest.mark.parametrize("friction", [1.0, 0.2])
def test_joint_dry_friction_holds_or_slips_by_the_closed_form(friction, options):
    """A horizontal rod on a hinge with dry friction τ_f (URDF <dynamics friction>): gravity's torque is
    m g d = 0.49 N m. With τ_f = 1 N m it stays put (to 1e-9 rad over 1 s); with τ_f = 0.2 N m it turns with
    α = (m g d − τ_f) / I_O: its speed after 0.05 s is α t to 1 % (the angle moves by 4 mrad: cos ≈ 1). Every
    solver but CG (refused: test_cg_refuses_joint_dry_friction); Lemke takes the row as a bounded one."""
    desc = chain(1)
    desc.joints[0].friction = friction
    w = tb.World(gravity=(0, 0, -G), **options)
    robot = w.add_robot(desc, position=(0, 0, 1))
    robot.q = [math.pi / 2]
    m, d = 0.5, 0.1
    I_O = rod_inertia(m, 0.2)[0, 0] + m * d * d
    if friction > m * G * d:
        for _ in range(240):
            w.step(1 / 240)
        assert abs(robot.q[0] - math.pi / 2) < 1e-9
    else:
        for _ in range(50):
            w.step(1e-3)
        alpha = (m * G * d - friction) / I_O
        assert abs(robot.qd[0]) == pytest.approx(alpha * 0.05, rel=0.01)


@pytest.mark.parametrize("touching", [False, True])
def test_a_robot_step_that_goes_non_finite_leaves_no_trace(touching):
    """A step of 1e200 s overflows a floating slab robot's q: the step is refused naming the joint, and the
    robot and its link's body are as before it — in a world of the robot and the ground alone, where no World
    step moves or saves the link bodies (robots/step.py ``after_contacts``), resting on the ground or in flight."""
    links = [LinkSpec("slab", 2.0, np.zeros(3), np.diag([0.02, 0.02, 0.03]), [GeomSpec(tb.Box(0.3, 0.3, 0.05))])]
    w = tb.World(gravity=(0, 0, -G))
    w.add_ground(friction=0.8)
    robot = w.add_robot(RobotDescription("slab", links, []), position=(0, 0, 0.025 if touching else 2.0),
                        fixed_base=False)
    for _ in range(30):
        w.step(1 / 240)
    assert (len(w.contacts()) > 0) == touching
    q, qd = robot.q.copy(), robot.qd.copy()
    body = robot.link("slab").body
    pose = (body.position.copy(), body.orientation.copy(), body.velocity.copy(), body.angular_velocity.copy())
    with pytest.raises(tb.NonFiniteStep, match="joint"):
        w.step(1e200)   # q̇ = 1e201 m/s, then q overflows
    assert np.array_equal(robot.q, q) and np.array_equal(robot.qd, qd)
    after = (body.position, body.orientation, body.velocity, body.angular_velocity)
    for a, b in zip(after, pose, strict=True):
        assert np.allclose(a, b, rtol=0, atol=1e-12)


@pytest.mark.parametrize("excess", [0.0, 2e-4, 5e-3])
def test_a_speculative_contact_stops_an_approach_faster_than_its_gap(excess):
    """A floating box robot hovering 2 mm above the ground (inside the contact margin: speculative contacts, no
    impulse yet) and falling so that in one step it would close its gap less the slop and ``excess`` × h more: the
    contacts take exactly the impulse that leaves the approach at (gap − slop) / h (to 1e-9 m/s), and none when
    the fall does not reach that (excess 0). A contact without impulse is only skipped in a sweep while its
    normal row's residual keeps it open (robots/contact_solve.py ``_block_sweep``), so a small closing residual
    (2e-4 m/s here) must still bring it in."""
    links = [LinkSpec("box", 2.0, np.zeros(3), np.diag([0.0083, 0.0167, 0.0217]), [GeomSpec(tb.Box(0.3, 0.2, 0.1))])]
    h, gap = 1 / 240, 0.002
    w = tb.World(gravity=(0, 0, -G))
    w.add_ground()
    robot = w.add_robot(RobotDescription("box", links, []), position=(0, 0, 0.05 + gap), fixed_base=False)
    allowed = -(gap - w.model.settings.slop) / h           # the speculative contacts' target normal velocity
    free = allowed - excess if excess else allowed + 1e-3  # the vertical velocity after gravity, before contact
    robot.qd = [0.0, 0.0, free + G * h, 0.0, 0.0, 0.0]
    w.step(h)
    vz = robot.qd[2]
    if excess:
        assert vz == pytest.approx(allowed, abs=1e-9)
        assert w.contacts().impulse[:, 2].sum() == pytest.approx(2.0 * excess, rel=1e-6)   # m Δv
    else:
        assert vz == pytest.approx(free, abs=1e-12)
        assert np.all(w.contacts().impulse == 0.0)


def test_the_friction_step_of_a_contact_of_rank_one_minimizes_over_the_disc():
    """Where a contact's tangential block K_t = κ e eᵀ has rank one (a link that slides along one tangent only),
    the friction step (robots/contact_solve.py ``_friction_step``) still minimizes ½ λᵀ K_t λ − λᵀ (K_t λ_old −
    v_t) over the disc |λ| <= limit (its value within 1e-9 of the least of 20000 points sampled on and in the
    disc), with no part along the null direction, where an impulse changes nothing; for rank zero it is zero."""
    from tumble.robots.contact_solve import FRAME_SIZE, _friction_step, tangent_frame
    from tumble.solvers.sequential_impulse import FRICTION_CONE

    def step(K, old, v, limit):
        frame = np.zeros(FRAME_SIZE)
        tangent_frame(K[0, 0], K[0, 1], K[1, 1], frame)
        return _friction_step(frame, *old, *v, limit, FRICTION_CONE, 8)

    rng = np.random.default_rng(5)
    radii = np.sqrt(rng.uniform(0.0, 1.0, 20000))
    angles = rng.uniform(0.0, 2.0 * np.pi, 20000)
    disc = np.stack([radii * np.cos(angles), radii * np.sin(angles)], axis=1)
    disc = np.concatenate([disc, np.stack([np.cos(angles), np.sin(angles)], axis=1)])
    for _ in range(50):
        e = rng.normal(size=2)
        e /= np.linalg.norm(e)
        kappa = rng.uniform(0.1, 10.0)
        K = kappa * np.outer(e, e)
        old = rng.normal(size=2)
        v = e * rng.normal() * 3.0   # J q̇ lies in the range of K_t
        limit = rng.uniform(0.1, 2.0)
        got = np.array(step(K, old, v, limit))

        def value(lam, K=K, old=old, v=v):
            return 0.5 * np.einsum("...i,ij,...j->...", lam, K, lam) - lam @ (K @ old - v)

        assert np.linalg.norm(got) <= limit * (1 + 1e-12)
        assert abs(got @ np.array([-e[1], e[0]])) < 1e-12
        assert value(got) <= np.min(value(limit * disc)) + 1e-9
    assert step(np.zeros((2, 2)), (0.3, 0.1), (0.2, 0.1), 1.0) == (0.0, 0.0)


@pytest.mark.parametrize("friction", ["cone", "pyramid"])
def test_a_sliding_link_s_friction_dissipates_the_most(friction):
    """Maximal dissipation at a link contact: a floating body robot with an anisotropic inertia slides on a sphere
    set off its COM, so the contact's tangential block K_t of J M⁻¹ Jᵀ is far from a multiple of the identity.
    After a step in which it keeps sliding, with v_t⁺ the contact point's tangential velocity (J q̇⁺, J of the
    step's start), the friction impulse on the link is the point of the friction set that minimizes λ · v_t⁺ (the
    power it takes out, as the World's friction step leaves it: sequential_impulse.friction_disc and
    friction_polygon). For the cone that is −μ λ_n v_t⁺ / |v_t⁺|: against the sliding to 1e-6 rad, on the
    circle to 1e-9; for the pyramid of 8 directions no vertex of the polygon takes out more (to 1e-9 relative).
    (Projecting the sticking impulse radially onto the disc, as the stage once did, leaves 0.02 rad here.)"""
    from scipy.spatial.transform import Rotation

    from tumble.constraints.contact_rows import tangent_basis

    R = Rotation.from_rotvec([0.2, 0.7, 0.1]).as_matrix()
    inertia = R @ np.diag([0.004, 0.03, 0.02]) @ R.T
    links = [LinkSpec("puck", 1.5, np.zeros(3), inertia, [GeomSpec(tb.Sphere(0.05), np.array([0.12, 0.04, 0.0]))])]
    w = tb.World(gravity=(0, 0, -G), friction=friction, sleep=False)
    w.add_ground(friction=0.5)
    robot = w.add_robot(RobotDescription("puck", links, []), position=(-0.12, -0.04, 0.05 - 1e-5), fixed_base=False)
    robot.qd = [1.0, 0.3, 0.0, 0.0, 0.0, 0.0]
    q0 = robot.q.copy()
    w.step(1 / 240)
    c = w.contacts()
    assert len(c) == 1
    qd = robot.qd.copy()
    body = robot.link("puck").body
    sign = 1.0 if c.body_a[0] == body.index else -1.0
    n = c.normal[0] * sign                       # from the ground toward the link
    impulse = c.impulse[0] * sign                # on the link
    lam_n = impulse @ n
    lam_t = impulse - lam_n * n
    # q̇⁺ with the free joint's linear velocity in the axes of the step's start, as the rows see it (robots/step.py
    # ``free_joint_world_rate``; between steps it is in the end's body axes): R₀ᵀ R₁ v
    R0, R1 = (Rotation.from_quat(np.roll(qq[3:7], -1)).as_matrix() for qq in (q0, robot.q))
    qd[:3] = R0.T @ R1 @ qd[:3]
    robot.q = q0
    v = (robot.jacobian("puck", c.point[0]) @ qd)[3:]
    v_t = v - (v @ n) * n
    assert np.linalg.norm(v_t) > 0.5 and lam_n > 0.0   # still sliding, pressed on the ground
    if friction == "cone":
        cos = -(v_t @ lam_t) / (np.linalg.norm(v_t) * np.linalg.norm(lam_t))
        assert cos > math.cos(1e-6)
        assert np.linalg.norm(lam_t) == pytest.approx(0.5 * lam_n, rel=1e-9)
    else:
        t = np.array(tangent_basis(*n)).reshape(2, 3)
        angles = 2.0 * np.pi * np.arange(8) / 8
        vertices = 0.5 * lam_n * (np.cos(angles)[:, None] * t[0] + np.sin(angles)[:, None] * t[1])
        scale = np.linalg.norm(lam_t) * np.linalg.norm(v_t)
        assert lam_t @ v_t <= np.min(vertices @ v_t) + 1e-9 * scale


# ---------------------------------------------------------------------------------------------------- solvers
def slab_robot(world, mu: float, height: float = 0.025):
    """A floating 2 kg slab (0.3 × 0.3 × 0.05 m) robot on ``world``'s ground of friction ``mu``."""
    links = [LinkSpec("slab", 2.0, np.zeros(3), np.diag([0.02, 0.02, 0.03]), [GeomSpec(tb.Box(0.3, 0.3, 0.05))])]
    world.add_ground(friction=mu)
    return world.add_robot(RobotDescription("slab", links, []), position=(0, 0, height), fixed_base=False,
                           friction=mu)


@pytest.mark.parametrize("options", SOLVERS + FRICTIONLESS)
def test_each_solver_slides_a_link_at_the_coulomb_rate(options):
    """The World's solver reaches the link contacts (robots/contact_solve.py): a floating slab robot sliding at
    1 m/s along −t2 (a vertex of the pyramid) on ground of μ = 0.4 decelerates at μ g to 0.5 % with PGS, APGD and
    Lemke (pyramid), not at all (1e-9 m/s²) frictionless (CG, Lemke), and stays on the ground (its COM within
    0.05 mm of its half height) with each."""
    w = tb.World(gravity=(0, 0, -G), sleep=False, **options)
    robot = slab_robot(w, 0.4)
    for _ in range(24):
        w.step(1 / 240)
    robot.qd = [1.0, 0.0, 0.0, 0.0, 0.0, 0.0]
    heights = []
    for _ in range(24):
        w.step(1 / 240)
        heights.append(robot.q[2])
    decel = (1.0 - robot.qd[0]) / 0.1
    if w.settings.friction == "none":
        assert abs(decel) < 1e-9
    else:
        assert decel == pytest.approx(0.4 * G, rel=0.005)
    assert np.max(np.abs(np.array(heights) - 0.025)) < 5e-5


@pytest.mark.parametrize("options", SOLVERS + FRICTIONLESS)
def test_each_solver_stops_a_landing_slab_with_the_impulse_of_the_closed_form(options):
    """A slab robot touching the ground flat and falling at 1 m/s (restitution 0): in one step its four corner
    contacts stop it, v_z = 0 and no tilt (1e-6 m/s, rad/s; frictionless Lemke 3e-6), the normal impulses
    non-negative and summing to m (v + g h) (1e-6 relative; frictionless Lemke 3e-6, below) — the LCP's answer,
    which every solver must reach (Lemke exactly, the iterative ones to their tolerance). The corner impulses
    alone are not unique (four rows of rank three)."""
    h = 1 / 240
    w = tb.World(gravity=(0, 0, -G), sleep=False, **options)
    robot = slab_robot(w, 0.5, height=0.025 - 1e-5)
    robot.qd = [0.0, 0.0, -1.0, 0.0, 0.0, 0.0]
    w.step(h)
    c = w.contacts()
    assert len(c) == 4
    assert np.all(c.normal_impulse >= 0.0)
    # (frictionless Lemke: its first try regularizes the normal rows by 1e-6 of their W, as the World's step, and
    # leaves the impulse 1.3e-6 short)
    regularized = w.settings.solver == "lemke" and w.settings.friction == "none"
    assert c.normal_impulse.sum() == pytest.approx(2.0 * (1.0 + G * h), rel=3e-6 if regularized else 1e-6)
    still = 3e-6 if regularized else 1e-6   # (the regularization's compliance leaves 1e-6 of the 1 m/s)
    assert abs(robot.qd[2]) < still and np.abs(robot.qd[3:]).max() < still


def test_cg_refuses_joint_dry_friction():
    """solver="cg" solves frictionless problems (λ >= 0); a joint with dry friction (a bounded row) is refused when
    the robot is added, naming the joint, and the world is left without it."""
    desc = chain(2)
    desc.joints[1].friction = 0.3
    w = tb.World(solver="cg", friction="none")
    with pytest.raises(ValueError, match="'j1'.*dry friction"):
        w.add_robot(desc, position=(0, 0, 1))
    assert len(w.model.robots.robots) == 0 and len(w.bodies) == 0


@pytest.mark.parametrize("options", SOLVERS + FRICTIONLESS)
def test_a_link_on_a_compliant_ground_sinks_by_its_weight_over_the_stiffness(options):
    """Compliant contact reaches link contacts (docs/materials.md, Hunt–Crossley rows): a floating 1 kg ball robot
    (r = 0.1 m) resting on a ground of k = 2e4 N/m, d = 1 s/m sinks x = m g / k = 0.49 mm (closed form, one
    contact point), to 1e-6 relative after 3 s with Gauss–Seidel and Lemke (3e-6 frictionless, its first try
    regularized as the World's), 1e-4 with APGD and CG (their tolerance is a velocity, 1e-6 m/s: against x / h
    that is 1e-4); a rigid ground holds it at r."""
    k = 2e4
    x = 1.0 * G / k
    for stiffness, expected in ((k, x), (None, 0.0)):
        links = [LinkSpec("ball", 1.0, np.zeros(3), np.eye(3) * 0.004, [GeomSpec(tb.Sphere(0.1))])]
        w = tb.World(gravity=(0, 0, -G), sleep=False, **options)
        w.add_ground(friction=0.5, contact_stiffness=stiffness, contact_dissipation=1.0 if stiffness else 0.0)
        robot = w.add_robot(RobotDescription("ball", links, []), position=(0, 0, 0.1), fixed_base=False)
        for _ in range(720):
            w.step(1 / 240)
        sunk = 0.1 - robot.q[2]
        if stiffness is None:
            assert abs(sunk) < 1e-4   # the rigid row's slop
        else:
            iterative = w.settings.solver in ("apgd", "cg")
            regularized = w.settings.solver == "lemke" and w.settings.friction == "none"
            assert sunk == pytest.approx(expected, rel=1e-4 if iterative else 3e-6 if regularized else 1e-6)


def ball_robot(world, radius: float = 0.1, mass: float = 1.0):
    """A floating solid ball robot (I = 2/5 m r²) resting on ``world``'s ground."""
    links = [LinkSpec("ball", mass, np.zeros(3), np.eye(3) * 0.4 * mass * radius**2, [GeomSpec(tb.Sphere(radius))])]
    return world.add_robot(RobotDescription("ball", links, []), position=(0, 0, radius), fixed_base=False)


def test_a_link_ball_rolls_to_rest_over_the_closed_form_distance():
    """Rolling resistance on a link (docs/materials.md; the pair's angular rows in the link stage): a ball robot
    (r = 0.1 m) rolling at 1 m/s with μ_r = 0.01 m on itself and the ground decelerates at a = 5 μ_r g / (7 r)
    and stops after v0² / (2a) − v0 h / 2 = 0.7116 m: the closed form's 0.7136 m less semi-implicit Euler's
    shortfall (its positions sum h v⁺), to 0.05 % (measured −0.011 %: the last step's partial stop). Without the
    rows it rolls its 1.5 m in 1.5 s to 1e-12 and stays on the ground to 1e-12 m. (Before ``free_joint_world_rate``
    the spin gained the ball speed and this stop ran 10 % long; with the body-frame velocity turned before the
    contact rows it rose 3 µm and rolled 0.06 % short.)"""
    v0, r, mu_r, h = 1.0, 0.1, 0.01, 1 / 240
    a = 5.0 * mu_r * G / (7.0 * r)
    for rolling in (mu_r, 0.0):
        w = tb.World(gravity=(0, 0, -G), sleep=False)
        w.add_ground(friction=0.8, rolling_friction=rolling)
        robot = ball_robot(w, r)
        robot.link("ball").body.rolling_friction = rolling
        robot.qd = [v0, 0.0, 0.0, 0.0, v0 / r, 0.0]   # rolling along +x: ω_y = v / r
        heights = []
        for _ in range(360):
            w.step(h)
            heights.append(robot.q[2])
        if rolling:
            assert robot.q[0] == pytest.approx(v0**2 / (2 * a) - v0 * h / 2, rel=5e-4)
            assert np.abs(robot.qd).max() < 1e-6
        else:
            assert robot.q[0] == pytest.approx(1.5 * v0, rel=1e-12)
            np.testing.assert_allclose(heights, r, atol=1e-12)


def test_a_link_ball_spinning_on_the_ground_stops_at_the_closed_form_time():
    """Torsional friction on a link: a ball robot spinning at 5 rad/s about the vertical with μ_s = 0.002 m stops
    at t = I ω0 / (μ_s m g) = 1.019 s (closed form, within 1 %); the angular impulse of the pair is kept as the
    World's (``pair_angular_impulse``), so a resting ball's warm start holds."""
    w0, r, mu_s = 5.0, 0.1, 0.002
    w = tb.World(gravity=(0, 0, -G), sleep=False)
    w.add_ground(friction=0.8, torsional_friction=mu_s)
    robot = ball_robot(w, r)
    robot.link("ball").body.torsional_friction = mu_s
    robot.qd = [0.0, 0.0, 0.0, 0.0, 0.0, w0]
    stopped = None
    for step in range(360):
        w.step(1 / 240)
        if stopped is None and abs(robot.qd[5]) < 1e-9:
            stopped = (step + 1) / 240
    I = 0.4 * 1.0 * r**2
    assert stopped == pytest.approx(I * w0 / (mu_s * 1.0 * G), rel=0.01)


def test_rolling_friction_on_a_link_needs_the_gauss_seidel_solver():
    """With another solver the World refuses rolling friction on any body, a link's too (its rows are built by the
    Gauss–Seidel sweep only, as the World's)."""
    w = tb.World(solver="apgd")
    robot = w.add_robot(chain(1, geoms=True), position=(0, 0, 1))
    with pytest.raises(ValueError, match="rolling_friction"):
        robot.link("l0").body.rolling_friction = 0.01
    assert robot.link("l0").body.rolling_friction == 0.0


def test_the_stage_s_sweep_cap_takes_effect_at_the_next_step():
    """``Forest.iterations`` and ``tolerance`` reach the next step's contact stage (the stage keeps its settings
    tuple between steps of one dt: robots/step.py ``_stage_arguments``): a slab robot landing flat takes more than
    one Gauss–Seidel sweep; capped at 1, the next step takes one."""
    w = tb.World(gravity=(0, 0, -G), sleep=False)
    robot = slab_robot(w, 0.5, height=0.025 - 1e-5)
    robot.qd = [0.0, 0.0, -1.0, 0.0, 0.0, 0.0]
    forest = w.model.robots
    w.step(1 / 240)
    assert forest.rows.stats[0] > 1.0
    forest.iterations = 1
    robot.qd = [0.0, 0.0, -1.0, 0.0, 0.0, 0.0]
    w.step(1 / 240)
    assert forest.rows.stats[0] == 1.0
    robot.qd = [0.0, 0.0, -1.0, 0.0, 0.0, 0.0]
    snap = w.snapshot()
    sweeps = []
    for tolerance in (1e-2, 1e-14):
        w.restore(snap)
        forest.iterations, forest.tolerance = 200, tolerance
        w.step(1 / 240)
        sweeps.append(forest.rows.stats[0])
    assert sweeps[0] < sweeps[1]


def test_a_new_gravity_reaches_a_resting_link_s_contact_stage_at_the_next_step():
    """The contact stage keeps its arguments from step to step (robots/step.py ``_stage_arguments``), gravity among
    them: a slab robot resting on the ground, gravity turned upward, leaves the ground at once with q̈_z = +g (the
    contact pulls nothing): its vertical speed after the step is g h to 1e-9 m/s (rounding of the step's solve),
    where the old gravity would have left it at rest."""
    w = tb.World(gravity=(0, 0, -G), sleep=False)
    robot = slab_robot(w, 0.5)
    for _ in range(48):
        w.step(1 / 240)
    assert w.model.robots.coupled and abs(robot.qd[2]) < 1e-6   # resting, in contact
    w.gravity = (0, 0, G)
    w.step(1 / 240)
    assert robot.qd[2] == pytest.approx(G / 240, abs=1e-9)


def test_a_free_ball_rolling_on_a_link_slows_by_the_closed_form():
    """A pair of a link and a free body takes the angular rows too, the free body's share as a couple (its loads
    λ (0, ±d) / h): a free 1 kg ball (r = 0.1 m) rolling at 0.1 m/s on a robot's table link (a slider resting on
    its lower limit), μ_r = 0.01 m on both, stops after v0² / (2a), a = 5 μ_r g / (7 r) (within 1 %: the World's
    sub-stepped free body)."""
    v0, r, mu_r = 0.1, 0.1, 0.01
    links = [LinkSpec("base"), LinkSpec("top", 5.0, np.zeros(3), np.eye(3) * 0.1, [GeomSpec(tb.Box(2.0, 2.0, 0.1))])]
    joints = [JointSpec("slide", "prismatic", "base", "top", np.zeros(3), np.eye(3), np.array([0.0, 0.0, 1.0]),
                        lower=0.0, upper=0.01)]   # (resting on its lower limit)
    w = tb.World(gravity=(0, 0, -G), sleep=False)
    robot = w.add_robot(RobotDescription("table", links, joints), position=(0, 0, 0.0))
    robot.link("top").body.rolling_friction = mu_r
    ball = w.add_body(tb.Sphere(r), mass=1.0, position=(-0.5, 0, 0.05 + r), friction=0.8, rolling_friction=mu_r,
                      velocity=(v0, 0, 0), angular_velocity=(0, v0 / r, 0))
    for _ in range(240):
        w.step(1 / 240)
    a = 5.0 * mu_r * G / (7.0 * r)
    assert ball.position[0] + 0.5 == pytest.approx(v0**2 / (2 * a), rel=0.01)
    assert np.linalg.norm(ball.velocity) < 1e-4


def test_a_spinning_free_robot_keeps_its_speed_and_line_under_euler():
    """Semi-implicit Euler on a floating base (the default robot integrator): a free robot with an isotropic inertia
    (its ω stays constant) moving at 1 m/s and spinning at 10 rad/s about another axis, no gravity, keeps its
    kinetic energy and its world velocity to 1e-12 over 1 s at h = 1/240 s, and moves on the straight line of its
    velocity, 1 m in that second, every step h v_w (1e-12; the closed form of free flight). The free joint's
    linear velocity is in the body frame: its explicit transport term −ω × v stretched it by √(1 + (h ω)²) a step,
    +37 % energy in that second; turned, but moved with the start's axes, the path left the velocity by
    h |ω| = 2.4° (robots/step.py ``free_joint_world_rate`` and ``position_stage`` now keep the world velocity in
    the start's axes through the step)."""
    w = tb.World(gravity=(0, 0, 0))
    links = [LinkSpec("b", 1.0, np.zeros(3), np.eye(3) * 0.004, [])]
    robot = w.add_robot(RobotDescription("b", links, []), position=(0, 0, 1), fixed_base=False)
    robot.qd = [1.0, 0.0, 0.0, 0.0, 6.0, 8.0]
    v_world = robot.link("b").velocity.copy()
    x0 = robot.link("b").position.copy()
    e0 = robot.kinetic_energy()
    steps = []
    for _ in range(240):
        before = robot.link("b").position.copy()
        w.step(1 / 240)
        steps.append(robot.link("b").position - before)
    assert robot.kinetic_energy() == pytest.approx(e0, rel=1e-12)
    np.testing.assert_allclose(robot.link("b").velocity, v_world, atol=1e-12)
    np.testing.assert_allclose(np.array(steps), np.tile(v_world / 240, (240, 1)), atol=1e-15)
    np.testing.assert_allclose(robot.link("b").position - x0, v_world, atol=1e-12)


def test_a_thrown_spinning_free_robot_follows_the_discrete_parabola():
    """Under gravity the same spinning free robot's position is semi-implicit Euler's closed form for a point
    mass, x_n = x_0 + n h v_0 + n (n + 1) / 2 h² g, to 1e-12 m over 1 s at h = 1/240 s, whatever it spins
    (an anisotropic inertia here, so ω also tumbles): its world velocity v_0 + n h g to 1e-12 m/s."""
    G = 9.81
    w = tb.World(gravity=(0, 0, -G))
    links = [LinkSpec("b", 2.0, np.zeros(3), np.diag([0.01, 0.02, 0.03]), [])]
    robot = w.add_robot(RobotDescription("b", links, []), position=(0, 0, 10), fixed_base=False)
    robot.qd = [1.0, -0.5, 2.0, 3.0, 6.0, 8.0]
    v0 = robot.link("b").velocity.copy()
    x0 = robot.link("b").position.copy()
    h, n = 1 / 240, 240
    g = np.array([0.0, 0.0, -G])
    for _ in range(n):
        w.step(h)
    np.testing.assert_allclose(robot.link("b").velocity, v0 + n * h * g, atol=1e-12)
    np.testing.assert_allclose(robot.link("b").position, x0 + n * h * v0 + n * (n + 1) / 2 * h * h * g, atol=1e-12)
