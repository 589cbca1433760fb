"""Joints under the ODE integrators (euler, rk4, adaptive): constraint forces by projection (ArtiSynth notes
0.5; solvers/joint_accel.py). The rows' rate term Ġu against central differences of the rows kernel, and the
motion against closed forms: the exact pendulum period and its energy, a slider's g sin α, a hanging body's
weight, a broken joint's free fall (the double pendulum's energy, a spinning pair's momentum and a chain
swinging into the ground are in test_joints.py); a compliant joint as the spring it stands for (its sag, its
period, the energy it stores beside a rigid joint); hinge and slider limits and motors (an impact on a limit,
resting on it, a motor reaching its speed under load or giving way at its force); a ball joint's
roll-pitch-yaw limits (their rows' Ġ u, a rod resting on its pitch limit); nothing refused."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.special import ellipk

import tumble as tb
from tumble.constraints.joint_rows import (
    BALL,
    EQUALITY_ROWS,
    FIXED,
    HAS_LIMIT,
    HINGE,
    MOTOR_ROW,
    SLIDER,
    joint_rate_products,
    joint_rows,
    rpy_rate_products,
)
from tumble.model.fields import JointData
from tumble.rotations import axis_angle_to_quat, quat_mul, quat_rotate

G = 9.81


def _random_frames(rng, m):
    frames = np.zeros((m, 7))
    frames[:, :3] = rng.normal(scale=0.3, size=(m, 3))
    q = rng.normal(size=(m, 4))
    frames[:, 3:] = q / np.linalg.norm(q, axis=1, keepdims=True)
    return frames


def _random_joints(rng):
    """Three bodies at random poses and velocities and six joints between them and the world, with random
    frames: (x, q, v, w, body (6, 2), frame_a, frame_b (6, 7))."""
    x = rng.normal(size=(3, 3))
    q = rng.normal(size=(3, 4))
    q /= np.linalg.norm(q, axis=1, keepdims=True)
    v, w = rng.normal(size=(3, 3)), rng.normal(scale=2.0, size=(3, 3))
    body = np.array([[0, 1], [1, 2], [2, 0], [0, -1], [1, -1], [2, 1]], dtype=np.int64)
    return x, q, v, w, body, _random_frames(rng, 6), _random_frames(rng, 6)


def _advance(x, q, v, w, eps):
    """The pose after time eps at constant velocities: x + eps v, and q turned by the rotation vector eps ω."""
    q2 = np.array([quat_mul(axis_angle_to_quat(wi / np.linalg.norm(wi), eps * np.linalg.norm(wi)), qi)
                   for wi, qi in zip(w, q, strict=True)])
    return x + eps * v, q2


def _joints(kind, body, frame_a, frame_b, limit, flags):
    """The joints as the rows kernel takes them (model.fields.JointData; no softness, motors or impulses)."""
    m = len(kind)
    return JointData(np.asarray(kind, dtype=np.int64), np.asarray(body, dtype=np.int64),
                     np.asarray(frame_a, dtype=float), np.asarray(frame_b, dtype=float), np.asarray(limit, dtype=float),
                     np.asarray(flags, dtype=np.int64), np.zeros((m, 2)), np.zeros((m, 2)), np.zeros((m, 8)),
                     np.zeros((m, 6)))


def _g_times_u(kind, body, frame_a, frame_b, x, q, v, w):
    """G(x, q) u for every equality row and the coordinate's row (slot 7) (m, 8), from the rows kernel
    (constraints/joint_rows.py)."""
    m = len(kind)
    lin, ang_a, ang_b = np.zeros((m, 8, 3)), np.zeros((m, 8, 3)), np.zeros((m, 8, 3))
    error, coordinate = np.zeros((m, 8)), np.zeros(m)
    joint_rows(_joints(kind, body, frame_a, frame_b, np.zeros((m, 6)), np.zeros(m, dtype=np.int64)), x, q,
               (lin, ang_a, ang_b, error, coordinate))
    out = np.zeros((m, 8))
    for j in range(m):
        a, b = body[j]
        for r in [*range(EQUALITY_ROWS[kind[j]]), MOTOR_ROW]:
            s = lin[j, r] @ v[a] + ang_a[j, r] @ w[a]
            if b >= 0:
                s += -lin[j, r] @ v[b] + ang_b[j, r] @ w[b]
            out[j, r] = s
    return out


@pytest.mark.parametrize("kind", [BALL, HINGE, SLIDER, FIXED])
def test_rate_products_match_central_differences_of_the_rows(kind):
    # Ġ u is derived by hand per row type (joint_rate_products' docstring); here it is checked against
    # (G(t + ε) u − G(t − ε) u) / 2ε with G from the rows kernel at poses moved along the velocities, for
    # random frames, poses and velocities, with body b a body or the world. Central differences at ε = 1e-5
    # err by O(ε²) ~ 1e-10 and by rounding ~1e-16/ε ~ 1e-11 of the terms (order 10 here), so 1e-7 absolute.
    rng = np.random.default_rng(kind)
    x, q, v, w, body, frame_a, frame_b = _random_joints(rng)
    m = len(body)
    kinds = np.full(m, kind, dtype=np.int64)
    rate = np.zeros((m, 8))
    for j in range(m):
        joint_rate_products(j, _joints(kinds, body, frame_a, frame_b, np.zeros((m, 6)), np.zeros(m, dtype=np.int64)),
                            x, q, v, w, rate)
    eps = 1e-5
    plus = _g_times_u(kinds, body, frame_a, frame_b, *_advance(x, q, v, w, eps), v, w)
    minus = _g_times_u(kinds, body, frame_a, frame_b, *_advance(x, q, v, w, -eps), v, w)
    rows = EQUALITY_ROWS[kind]
    np.testing.assert_allclose(rate[:, :rows], ((plus - minus) / (2 * eps))[:, :rows], rtol=0, atol=1e-7)
    assert np.abs(rate[:, :rows]).max() > 0.1 or kind == FIXED   # the check is not of zeros (fixed: lock rows)
    # the coordinate's row (hinge angle, slider position), which the limits and motors use
    np.testing.assert_allclose(rate[:, MOTOR_ROW], ((plus - minus) / (2 * eps))[:, MOTOR_ROW], rtol=0, atol=1e-7)
    assert np.abs(rate[:, MOTOR_ROW]).max() > 0.1 or kind in (BALL, FIXED)


def _rod_pendulum(integrator: str, theta0: float):
    """A 0.1 × 0.1 × 1 m, 1 kg box hanging from a hinge at its end (the origin), turned θ₀ about y."""
    world = tb.World(integrator=integrator)
    rod = world.add_body(tb.Box(0.1, 0.1, 1.0), mass=1.0)
    q = axis_angle_to_quat([0, 1, 0], theta0)
    rod.orientation = q
    rod.position = quat_rotate(q, [0, 0, -0.5])
    joint = world.add_joint(tb.HingeJoint(rod, None, (0, 0, 0), (0, 1, 0)))
    i_pivot = (0.1**2 + 1.0**2) / 12 + 0.5**2
    return world, rod, joint, i_pivot


@pytest.mark.parametrize("integrator", ["rk4", "adaptive"])
def test_ninety_degree_pendulum_keeps_the_exact_period_and_its_energy(integrator):
    # T = (2/π) K(sin²(θ₀/2)) 2π√(I_pivot/(m g L)). The forces are exact constraint forces, so the period's
    # error is the integrator's: measured 1.6e-8 relative for both (the splitting step gives 1.4e-6), most of
    # it the linear interpolation of the zero crossings; energy drift over two periods 5e-9 (rk4) and 1e-10
    # (adaptive) of m g L/2 (splitting 3.5e-3); joint error below 1e-10 m after each step's projection.
    theta0 = np.pi / 2
    world, rod, joint, i_pivot = _rod_pendulum(integrator, theta0)
    dt = 1 / 240
    e0, scale = world.energy(), G * 0.5
    times, angles, drift, error = [], [], 0.0, 0.0
    period = 2 * np.pi * np.sqrt(i_pivot / (G * 0.5)) * 2 / np.pi * ellipk(np.sin(theta0 / 2) ** 2)
    for _ in range(int(2.2 * period / dt)):
        world.step(dt)
        times.append(world.time)
        angles.append(np.arctan2(rod.position[0], -rod.position[2]))   # from the downward vertical
        drift = max(drift, abs(world.energy() - e0))
        error = max(error, joint.error)
    t, a = np.array(times), np.array(angles)
    i = np.nonzero((a[:-1] > 0) & (a[1:] <= 0))[0]
    crossings = t[i] - a[i] * (t[i + 1] - t[i]) / (a[i + 1] - a[i])
    assert len(crossings) == 2
    assert crossings[1] - crossings[0] == pytest.approx(period, rel=1e-6)
    assert drift / scale < 1e-7
    assert error < 1e-9


def test_frictionless_slider_on_an_incline_is_exact_with_rk4():
    # s(t) = ½ g sin α t², a quadratic, which rk4 integrates exactly; what is left (measured 2.5e-11 relative)
    # is K's REGULARIZATION (λ short by 1e-10 of itself) undone by the projections. No turning.
    alpha = np.radians(30.0)
    axis = np.array([np.cos(alpha), 0.0, -np.sin(alpha)])
    world = tb.World(integrator="rk4")
    body = world.add_body(tb.Box(0.3, 0.2, 0.1), mass=1.5, position=(0, 0, 1))
    joint = world.add_joint(tb.SliderJoint(body, None, (0, 0, 1), axis))
    for _ in range(240):
        world.step(1 / 240)
    t = world.time
    assert joint.position == pytest.approx(0.5 * G * np.sin(alpha) * t * t, rel=1e-9)
    np.testing.assert_allclose(body.velocity, G * np.sin(alpha) * t * axis, rtol=0, atol=1e-9)
    assert np.linalg.norm(body.angular_velocity) < 1e-12
    assert joint.error < 1e-10      # the projection's POSITION_TOLERANCE


def test_hanging_body_reads_its_weight_and_breaks_then_falls_freely():
    # At rest under a ball joint, the constraint force at the end of each step is +m g up (a closed form);
    # with break_force below m g it breaks after the first step and the body then falls at g: rk4 is exact
    # for a constant acceleration, so v = −g (t − dt) to rounding.
    world = tb.World(integrator="rk4")
    body = world.add_body(tb.Sphere(0.1), mass=3.0, position=(0, 0, -0.5))
    joint = world.add_joint(tb.BallJoint(body, None, (0, 0, 0)))
    for _ in range(5):
        world.step(1 / 240)
    # (K carries REGULARIZATION = 1e-10 of its diagonal: λ comes out short by that fraction)
    np.testing.assert_allclose(joint.force, [0, 0, 3.0 * G], rtol=1e-9, atol=1e-12)
    assert np.abs(body.velocity).max() < 1e-12 and not joint.broken
    joint.break_force = 0.9 * 3.0 * G
    world.step(1 / 240)
    assert joint.broken
    for _ in range(24):
        world.step(1 / 240)
    assert body.velocity[2] == pytest.approx(-G * 24 / 240, rel=1e-12)


def test_euler_holds_the_joint_too():
    # Explicit Euler gains energy (as it does without joints) but the projections keep the joint closed.
    world, rod, joint, _ = _rod_pendulum("euler", 0.5)
    for _ in range(240):
        world.step(1 / 240)
    assert joint.error < 1e-9
    assert np.linalg.norm(rod.position) == pytest.approx(0.5, abs=1e-9)


@pytest.mark.parametrize("integrator", ["euler", "rk4", "adaptive"])
def test_every_joint_option_is_held_and_a_world_with_them_switches_between_ode_integrators(integrator):
    # Limits (hinge, slider, roll-pitch-yaw), motors, damping and a compliance are all held by these
    # integrators: nothing is refused, at creation, on assignment, or on switching integrators.
    world = tb.World(integrator=integrator)
    a = world.add_body(tb.Sphere(0.1))
    b = world.add_body(tb.Sphere(0.1), position=(1, 0, 0))
    rpy = [(-0.5, 0.5), (-1.0, 1.0), (-1.0, 1.0)]
    ball = world.add_joint(tb.BallJoint(a, b, (0, 0, 0), rpy_limits=rpy, compliance=1e-3))
    hinge = world.add_joint(tb.HingeJoint(a, None, (0, 0, 0), (0, 1, 0), limits=(-1, 1), motor=(1.0, 5.0)))
    hinge.limits, hinge.motor, hinge.damping, hinge.compliance = (-0.5, 0.5), (2.0, 3.0), 2.0, 1e-3
    ball.limits = [None, (-0.2, 0.2), None]
    world.add_joint(tb.SliderJoint(b, None, (1, 0, 0), (1, 0, 0), limits=(-1, 1), motor=(1.0, 5.0)))
    world.step(1 / 240)
    other = tb.World(integrator="adaptive" if integrator != "adaptive" else "euler")   # (within its family)
    c = other.add_body(tb.Sphere(0.1))
    other.add_joint(tb.BallJoint(c, None, (0, 0, 0), rpy_limits=rpy))
    other.integrator = integrator
    assert other.integrator == integrator


@pytest.mark.parametrize("seed", [0, 1])
def test_roll_pitch_yaw_limit_rate_products_match_central_differences(seed):
    # The limit rows of a ball joint (slots 3–5, signed by the nearer bound) and their Ġ u
    # (``rpy_rate_products``), against (G(t + ε) u − G(t − ε) u) / 2ε from the rows kernel at poses moved
    # along the velocities; random frames, poses, velocities and limits. The rows carry 1/cos θ and the rates
    # 1/cos² θ, so the terms reach ~100 and the differences' truncation error (ε² times the third derivative)
    # grows with them (measured 8e-8 relative at ε = 1e-5): 1e-6 relative, 1e-7 absolute.
    rng = np.random.default_rng(seed)
    x, q, v, w, body, frame_a, frame_b = _random_joints(rng)
    m = len(body)
    kinds = np.full(m, BALL, dtype=np.int64)
    limit = np.sort(rng.uniform(-3.0, 3.0, size=(m, 3, 2)), axis=2).reshape(m, 6)
    flags = np.full(m, HAS_LIMIT, dtype=np.int64)

    def g_times_u(xx, qq):
        lin, ang_a, ang_b = np.zeros((m, 8, 3)), np.zeros((m, 8, 3)), np.zeros((m, 8, 3))
        error, coordinate = np.zeros((m, 8)), np.zeros(m)
        joint_rows(_joints(kinds, body, frame_a, frame_b, limit, flags), xx, qq, (lin, ang_a, ang_b, error, coordinate))
        out = np.zeros((m, 3))
        for j in range(m):
            a, b = body[j]
            for k in range(3):
                out[j, k] = ang_a[j, 3 + k] @ w[a] + (ang_b[j, 3 + k] @ w[b] if b >= 0 else 0.0)
        return out, error

    _, error = g_times_u(x, q)
    assert np.all(error[:, 3:6] < 1e29)     # every row on (none within gimbal lock here)
    rate = np.zeros((m, 8))
    for j in range(m):
        rpy_rate_products(j, _joints(kinds, body, frame_a, frame_b, limit, flags), x, q, v, w, rate)
    eps = 1e-5
    plus, _ = g_times_u(*_advance(x, q, v, w, eps))
    minus, _ = g_times_u(*_advance(x, q, v, w, -eps))
    np.testing.assert_allclose(rate[:, 3:6], (plus - minus) / (2 * eps), rtol=1e-6, atol=1e-7)
    assert np.abs(rate[:, 3:6]).max() > 0.1


@pytest.mark.parametrize("integrator", ["rk4", "adaptive"])
def test_ball_jointed_rod_rests_on_its_pitch_limit(integrator):
    # A rod hung from a ball joint at its end, released horizontal: it swings about y, its pitch θ (R =
    # Rz(φ) Ry(θ) Rx(ψ) of the rod's frame relative to the world's) growing to the limit 0.5 rad, where it
    # stops and rests; the limit row then holds the gravity torque m g (L/2) cos 0.5 about y.
    world = tb.World(gravity=(0, 0, -G), integrator=integrator)
    rod = world.add_body(tb.Box(1.0, 0.05, 0.05), mass=1.0, position=(0.5, 0, 0))
    ball = world.add_joint(tb.BallJoint(rod, None, (0, 0, 0), rpy_limits=[None, (-0.5, 0.5), None]))
    worst = 0.0
    for _ in range(480):
        world.step(1 / 240)
        worst = max(worst, ball.rpy[1] - 0.5)
    assert worst < 1e-9
    np.testing.assert_allclose(ball.rpy, [0.0, 0.5, 0.0], atol=1e-9)
    assert np.linalg.norm(rod.angular_velocity) < 1e-9
    assert -ball.torque[1] == pytest.approx(1.0 * G * 0.5 * np.cos(0.5), rel=1e-8)


def _hinged_rod(integrator: str, limits, gravity=(0, 0, -G)) -> tuple[tb.World, tb.Body, tb.HingeJoint]:
    """A rod (1 m, 1 kg, along x) hinged at its end to the world about y; I about the hinge = m L²/3 (+ the
    cross-section's m (0.05²)/12)."""
    world = tb.World(gravity=gravity, integrator=integrator)
    rod = world.add_body(tb.Box(1.0, 0.05, 0.05), mass=1.0, position=(0.5, 0, 0))
    hinge = world.add_joint(tb.HingeJoint(rod, None, (0, 0, 0), (0, 1, 0), limits=limits))
    return world, rod, hinge


@pytest.mark.parametrize("integrator", ["euler", "rk4", "adaptive"])
def test_rod_falls_onto_its_limit_and_rests_there_on_its_weight(integrator):
    # Released horizontal, the rod swings down onto its limit at 0.5 rad, stops dead there (the kick: an
    # inelastic impact on the limit) and rests: the limit then holds the gravity torque m g (L/2) cos 0.5
    # about the hinge, which the joint reads (acceleration-level solve, λ ≥ 0). The limit is never passed by
    # more than the projection's tolerance (1e-10 rad; the issue allows 1e-3).
    world, rod, hinge = _hinged_rod(integrator, (-0.5, 0.5))
    worst = 0.0
    for _ in range(480):
        world.step(1 / 240)
        worst = max(worst, hinge.angle - 0.5)
    assert worst < 1e-9
    assert hinge.angle == pytest.approx(0.5, abs=1e-9)
    assert np.linalg.norm(rod.angular_velocity) < 1e-9
    assert -hinge.torque[1] == pytest.approx(1.0 * G * 0.5 * np.cos(0.5), rel=1e-8)


def test_rod_into_its_limit_stops_dead_and_leaves_it_when_pushed_back():
    # Zero gravity: the rod turns at 1 rad/s into its limit at 0.3 rad. At the impact the limit's impulse
    # stops it (0 after, not a rebound); then, turned back at 2 rad/s, it leaves the limit freely (the limit
    # never pulls) and turns on at exactly 2 rad/s.
    world, rod, hinge = _hinged_rod("rk4", (-1.0, 0.3), gravity=(0, 0, 0))
    # the angle grows with a turn about +y (x toward −z, as gravity turns it in the test above)
    rod.angular_velocity = (0, 1.0, 0)
    rod.velocity = np.cross(rod.angular_velocity, rod.position)
    for _ in range(120):
        world.step(1 / 240)
    assert hinge.angle == pytest.approx(0.3, abs=1e-9)
    assert np.linalg.norm(rod.angular_velocity) < 1e-9
    rod.angular_velocity = (0, -2.0, 0)
    rod.velocity = np.cross(rod.angular_velocity, rod.position)
    angle = hinge.angle
    for _ in range(24):
        world.step(1 / 240)
    assert hinge.angle == pytest.approx(angle - 2.0 * 0.1, abs=1e-9)
    assert rod.angular_velocity[1] == pytest.approx(-2.0, abs=1e-9)


@pytest.mark.parametrize("integrator", ["rk4", "adaptive"])
def test_slider_motor_reaches_its_speed_up_an_incline_and_holds_it_against_the_weight(integrator):
    # A 1 kg block on a frictionless slider up a 30° incline, its motor asking 0.5 m/s up the axis with at
    # most 100 N. The kick of the first step is capped at 100 N × dt = 0.417 N·s (the speed needs 0.5), so it
    # saturates once, then reaches 0.5 m/s; from there the motor holds the speed by a force m g sin α
    # (= 4.905 N, within its 100 N), which the joint reads along the axis.
    alpha = np.radians(30.0)
    axis = np.array([np.cos(alpha), 0.0, np.sin(alpha)])
    world = tb.World(gravity=(0, 0, -G), integrator=integrator)
    block = world.add_body(tb.Box(0.2, 0.2, 0.2), mass=1.0)
    slider = world.add_joint(tb.SliderJoint(block, None, (0, 0, 0), axis, motor=(0.5, 100.0)))
    world.step(1 / 240)
    assert block.velocity @ axis < 0.5 - 0.05     # saturated in the first step
    for _ in range(47):
        world.step(1 / 240)
    np.testing.assert_allclose(block.velocity, 0.5 * axis, rtol=0, atol=1e-9)
    assert slider.force @ axis == pytest.approx(G * np.sin(alpha), rel=1e-8)


def test_slider_motor_too_weak_for_the_load_gives_way_at_its_force():
    # The same block, the motor now at most 2 N against the 4.905 N of gravity along the incline: it never
    # reaches its speed and pushes with its whole force, so the block slides down at
    # a = F/m − g sin α exactly at the step ends (the motor's impulse F dt enters each step's kick).
    alpha = np.radians(30.0)
    axis = np.array([np.cos(alpha), 0.0, np.sin(alpha)])
    world = tb.World(gravity=(0, 0, -G), integrator="rk4")
    block = world.add_body(tb.Box(0.2, 0.2, 0.2), mass=1.0)
    world.add_joint(tb.SliderJoint(block, None, (0, 0, 0), axis, motor=(0.5, 2.0)))
    for _ in range(240):
        world.step(1 / 240)
    np.testing.assert_allclose(block.velocity, (2.0 - G * np.sin(alpha)) * world.time * axis, rtol=0, atol=1e-9)


def test_slider_limit_holds_a_block_sliding_down_its_incline():
    alpha = np.radians(30.0)
    axis = np.array([np.cos(alpha), 0.0, np.sin(alpha)])
    world = tb.World(gravity=(0, 0, -G), integrator="rk4")
    block = world.add_body(tb.Box(0.2, 0.2, 0.2), mass=1.0)
    slider = world.add_joint(tb.SliderJoint(block, None, (0, 0, 0), axis, limits=(-0.2, 1.0)))
    worst = 0.0
    for _ in range(480):
        world.step(1 / 240)
        worst = max(worst, -0.2 - slider.position)
    assert worst < 1e-9
    assert slider.position == pytest.approx(-0.2, abs=1e-9)
    assert np.linalg.norm(block.velocity) < 1e-9
    assert slider.force @ axis == pytest.approx(G * np.sin(alpha), rel=1e-8)


@pytest.mark.parametrize("integrator", ["euler", "rk4", "adaptive"])
def test_compliant_joint_sags_by_m_g_c_and_reads_the_weight(integrator):
    # A ball joint of compliance c at the COM of a hanging body is a spring k = 1/c along each point row
    # (notes 0.11), here a force: the body settles m g c below the anchor and the joint reads its weight.
    # m = 1 kg, c = 1e-4 m/N (ω = 100 rad/s, h ω = 0.42 at 1/240 s), damping 100 N·s/m (ζ = 0.5): after 2 s
    # the transient is e^(−ζ ω t) = e^(−100) of the 1 mm sag, so the sag is exact to rounding (1e-12 m).
    m, c = 1.0, 1e-4
    world = tb.World(gravity=(0, 0, -G), integrator=integrator)
    body = world.add_body(tb.Sphere(0.1), mass=m, position=(0, 0, 1))
    joint = world.add_joint(tb.BallJoint(body, None, (0, 0, 1), compliance=c, damping=100.0))
    for _ in range(480):
        world.step(1 / 240)
    assert 1.0 - body.position[2] == pytest.approx(m * G * c, abs=1e-12)
    np.testing.assert_allclose(joint.force, [0.0, 0.0, m * G], atol=1e-9)


def test_compliant_joint_oscillates_with_the_period_of_its_spring():
    # Zero gravity, the body pulled 1 mm off its anchor: x(t) = δ cos(t / √(m c)) exactly (each point row is a
    # linear spring along a world axis). rk4 on this linear oscillator is exactly x_n = δ Re R(i ω h)ⁿ with
    # R(z) = 1 + z + z²/2 + z³/6 + z⁴/24, to rounding (2e-14 m measured over the 3000 steps); against the
    # exact motion it lags by (ω h)⁵/120 rad per step, 2.5e-4 rad over the 3000 steps at ω h = 0.1, i.e.
    # 2.5e-7 m of the 1 mm.
    m, c, delta = 1.0, 1e-4, 1e-3
    world = tb.World(gravity=(0, 0, 0), integrator="rk4")
    body = world.add_body(tb.Sphere(0.1), mass=m)
    world.add_joint(tb.BallJoint(body, None, (0, 0, 0), compliance=c))
    body.position = (delta, 0, 0)
    dt = 1e-3
    xs = []
    for _ in range(3000):
        world.step(dt)
        xs.append(body.position[0])
    n = np.arange(1, 3001)
    z = 1j * dt / np.sqrt(m * c)
    growth = 1 + z + z**2 / 2 + z**3 / 6 + z**4 / 24
    np.testing.assert_allclose(xs, delta * (growth**n).real, rtol=0, atol=1e-13)
    np.testing.assert_allclose(xs, delta * np.cos(n * dt / np.sqrt(m * c)), rtol=0, atol=3e-7)


def test_compliant_joint_beside_a_rigid_one_keeps_the_energy_and_the_rigid_joint():
    # A rod (1 kg, 1 m) on a rigid hinge to the world, a 0.5 kg ball hung from its tip by an undamped ball
    # joint of compliance 1e-4 (k = 1e4 N/m): the spring's multipliers are explicit, the rigid hinge's solved
    # with them in a_free. The exact motion conserves kinetic + gravity + spring energy Σ ½ C²/c; rk4 at
    # 1 ms (h ω = 0.14 for the ball) kept it to 1.1e-7 J of the swing's ~8 J kinetic energy, hence 1e-6 J.
    # Leaving the spring out of the rigid rows' a_free (the hinge then fights it blind) drifts by 0.08 J.
    c = 1e-4
    world = tb.World(gravity=(0, 0, -G), integrator="rk4")
    rod = world.add_body(tb.Box(1.0, 0.05, 0.05), mass=1.0, position=(0.5, 0, 0))
    ball = world.add_body(tb.Sphere(0.05), mass=0.5, position=(1.0, 0, 0))
    hinge = world.add_joint(tb.HingeJoint(rod, None, (0, 0, 0), (0, 1, 0)))
    world.add_joint(tb.BallJoint(rod, ball, (1.0, 0, 0), compliance=c))

    def energy():
        tip = rod.position + quat_rotate(rod.orientation, np.array([0.5, 0.0, 0.0]))
        return world.energy() + 0.5 * np.sum((tip - ball.position) ** 2) / c

    e0 = energy()
    stretch = 0.0
    for _ in range(1500):
        world.step(1e-3)
        stretch = max(stretch, np.linalg.norm(rod.position + quat_rotate(rod.orientation, np.array([0.5, 0, 0]))
                                              - ball.position))
        assert hinge.error < 1e-9
    assert stretch > 1e-4     # the spring did stretch: the ball's weight and the swing load it
    assert abs(energy() - e0) < 1e-6


def test_slider_limit_on_a_spinning_arm_holds_the_centripetal_force():
    # Zero gravity: an arm (2 kg box along x) spins about z; a 0.5 kg block on a slider along the arm is
    # flung outward onto the slider's upper limit and then turns with the arm as one rigid body about their
    # common centre of mass. The limit then gives the block its centripetal force m ω² d (d: the block's
    # distance from the common COM, along the arm), which the joint reads. The limit row's Ġ u is nonzero here
    # (its axis turns with the arm), so it checks that term and its sign.
    world = tb.World(gravity=(0, 0, 0), integrator="rk4")
    arm = world.add_body(tb.Box(1.0, 0.1, 0.1), mass=2.0, angular_velocity=(0, 0, 3.0))
    block = world.add_body(tb.Box(0.1, 0.1, 0.1), mass=0.5, position=(0.2, 0, 0), velocity=(0, 0.6, 0),
                           angular_velocity=(0, 0, 3.0))
    slider = world.add_joint(tb.SliderJoint(block, arm, (0.2, 0, 0), (1, 0, 0), limits=(-0.1, 0.3)))
    for _ in range(720):
        world.step(1 / 240)
    assert slider.position == pytest.approx(0.3, abs=1e-9)
    com = (2.0 * arm.position + 0.5 * block.position) / 2.5
    omega = arm.angular_velocity[2]
    np.testing.assert_allclose(block.angular_velocity, arm.angular_velocity, rtol=0, atol=1e-9)
    axis = quat_rotate(arm.orientation, np.array([1.0, 0.0, 0.0]))
    centripetal = 0.5 * omega**2 * np.linalg.norm(block.position - com)
    assert slider.force @ axis == pytest.approx(-centripetal, rel=1e-6)


def test_spinning_ball_jointed_rod_precesses_steadily_on_its_pitch_limit():
    # A rod (1 × 0.3 × 0.3 m, 1 kg) hung from a ball joint at its end, set at its pitch limit (0.5 rad below
    # the horizontal), turning about the vertical at Ω = 2 rad/s and spinning about its own axis â at s =
    # 3 rad/s. With the pitch held, yaw and roll are free and no load turns them, so the motion is a steady
    # precession: ω = Ω ẑ + s â, yaw Ω t, roll s t. The limit gives the torque about the pivot that keeps it,
    # Ω ẑ × L − r × m g (L = I ω about the pivot: I∥ = m (0.3² + 0.3²)/12 along â, I⊥ = m (L² + 0.3²)/12 +
    # m (L/2)² across; Euler's equations). The pitch row's axis turns with the yaw and ω has a part along that
    # turning, so the row's Ġ u is not zero here (without the spin it would be).
    omega, spin = 2.0, 3.0
    world = tb.World(gravity=(0, 0, -G), integrator="rk4")
    rod = world.add_body(tb.Box(1.0, 0.3, 0.3), mass=1.0, position=(0.5, 0, 0))
    ball = world.add_joint(tb.BallJoint(rod, None, (0, 0, 0), rpy_limits=[None, (-0.5, 0.5), None]))
    tilt = axis_angle_to_quat(np.array([0.0, 1.0, 0.0]), 0.5)
    axis = quat_rotate(tilt, np.array([1.0, 0.0, 0.0]))
    rod.orientation = tilt
    rod.position = 0.5 * axis
    rod.angular_velocity = np.array([0.0, 0.0, omega]) + spin * axis
    rod.velocity = np.cross(rod.angular_velocity, rod.position)
    for _ in range(480):
        world.step(1 / 240)
        assert abs(ball.rpy[1] - 0.5) < 1e-9
    t = world.time

    def wrapped(angle):
        return angle - 2 * np.pi * round(angle / (2 * np.pi))

    np.testing.assert_allclose(ball.rpy, [wrapped(omega * t), 0.5, wrapped(spin * t)], atol=1e-8)
    axis = quat_rotate(rod.orientation, np.array([1.0, 0.0, 0.0]))
    w = np.array([0.0, 0.0, omega]) + spin * axis
    np.testing.assert_allclose(rod.angular_velocity, w, atol=1e-9)
    i_perp, i_axis = (1.0 + 0.09) / 12 + 0.25, 0.18 / 12
    along = w @ axis
    momentum = i_axis * along * axis + i_perp * (w - along * axis)
    torque = np.cross([0.0, 0.0, omega], momentum) - np.cross(0.5 * axis, [0.0, 0.0, -G])
    np.testing.assert_allclose(ball.torque, torque, rtol=0, atol=1e-7)


@pytest.mark.parametrize("integrator", ["splitting", "rk4"])
@pytest.mark.parametrize("brake", [10.0, 2.0])
def test_braking_motor_on_a_limit_holds_or_gives_way_at_its_torque(integrator, brake):
    # The rod rests horizontal on its lower limit (0 rad); gravity turns it away from the limit with
    # m g L/2 = 4.905 N·m, and a motor asks for 0 rad/s with at most ``brake`` N·m. The motor's row and the
    # limit's are one row up to sign: both in the block made K singular (solvers/joint_solve.py,
    # ``motor_yields_to_limit``). A 10 N·m brake holds the rod at rest with the whole weight torque; a 2 N·m
    # brake gives way: the rod turns off the limit with I θ̈ = m g (L/2) cos θ − 2 N·m, here checked by its speed
    # and angle after 0.1 s against that equation's solution (solve_ivp, 1e-12), to the O(h) of a motor's
    # impulse taken whole at the start of each step: the angle leads by at most F h t / (2 I) = 1.25e-3 rad
    # (F = 2 N·m, h = 1/240 s, t = 0.1 s, I = 1/3 kg m²); the speed at the step ends takes the whole impulse.
    world, rod, hinge = _hinged_rod(integrator, (0.0, 1.0))
    hinge.motor = (0.0, brake)
    inertia = 1.0 / 3.0 + 1.0 * 0.05 ** 2 / 12
    for _ in range(24):
        world.step(1 / 240)
        assert hinge.angle >= -1e-9
    if brake > G * 0.5:
        assert hinge.angle == pytest.approx(0.0, abs=1e-9)
        assert np.linalg.norm(rod.angular_velocity) < 1e-9
        assert -hinge.torque[1] == pytest.approx(G * 0.5, rel=1e-8)
    else:
        from scipy.integrate import solve_ivp

        def rhs(t, y):
            return [y[1], (G * 0.5 * np.cos(y[0]) - brake) / inertia]

        exact = solve_ivp(rhs, (0.0, 0.1), [0.0, 0.0], rtol=1e-12, atol=1e-12).y[:, -1]
        assert rod.angular_velocity[1] == pytest.approx(exact[1], abs=1e-3)
        assert hinge.angle == pytest.approx(exact[0], abs=1.25e-3)


@pytest.mark.parametrize("integrator", ["splitting", "rk4"])
def test_motor_pushing_into_its_limit_in_a_chain_of_limits_keeps_finite_impulses(integrator):
    # Found by a randomized 5-link chain (2 ball joints with roll-pitch-yaw limits, 3 hinges with limits, 2
    # with motors): at t = 0.77 s the first two links lock on their pitch limits while the third hinge hits its
    # upper limit with its motor pushing into it. The limits entering one by one used up the active set's
    # passes with the motor's row and its limit's both in the block, and the last pass applied the singular
    # pair's 9e6 N·s: the chain went to NaN under rk4. With the motor out of the block while its limit is in,
    # the chain still took 9 passes at times, one more than the 8 it had then, and the last pass's clamp left
    # its joints apart by 1e-3 m and a pitch limit passed by 0.3 rad (solvers/joint_solve.py,
    # ``ACTIVE_SET_PASSES``).
    # Now over 2 s: the splitting step holds the joints to 1e-9 m and the limits to 1e-6 rad (measured 1e-10,
    # 3e-9); rk4 the joints to 1e-6 m and the limits to 1e-4 rad (measured 6e-8 and 3.3e-5: a limit reached
    # within a step is held only from the next step's kick, and the projection at the step's end brings the
    # pose back by Newton steps; the issue allows 1e-3 rad).
    specs = [("ball", [(-0.7117, 0.9009), (-1.2, 1.2), (-0.3763, 0.8973)]),
             ("ball", [(-0.1533, 0.6554), (-1.2, 1.2), (-0.1816, 0.0992)]),
             ("hinge", (0.0763, 0.5070), (1.1537, 0.9096)), ("hinge", (-0.7319, -0.0930), (-1.1862, 0.7869)),
             ("hinge", (-0.4392, -0.0296), None)]
    world = tb.World(gravity=(0, 0, -G), integrator=integrator)
    links = [world.add_body(tb.Box(0.3, 0.05, 0.05), mass=0.5, position=(0.15 + 0.3 * i, 0, 1)) for i in range(5)]
    joints = []
    for i, spec in enumerate(specs):
        a, b, anchor = links[i], (links[i - 1] if i else None), (0.3 * i, 0, 1)
        if spec[0] == "ball":
            joints.append(world.add_joint(tb.BallJoint(a, b, anchor, rpy_limits=spec[1])))
        else:
            joints.append(world.add_joint(tb.HingeJoint(a, b, anchor, (0, 1, 0), limits=spec[1], motor=spec[2])))
    worst_error = worst_limit = 0.0
    for _ in range(480):
        world.step(1 / 240)
        worst_error = max(worst_error, *(j.error for j in joints))
        if world.time < 0.1:    # the second hinge starts 0.076 rad outside its limits
            continue
        for joint, spec in zip(joints, specs, strict=True):
            values, bounds = (joint.rpy, spec[1]) if spec[0] == "ball" else ([joint.angle], [spec[1]])
            for value, (lo, hi) in zip(values, bounds, strict=True):
                worst_limit = max(worst_limit, lo - value, value - hi)
    joint_tolerance, limit_tolerance = (1e-9, 1e-6) if integrator == "splitting" else (1e-6, 1e-4)
    assert worst_error < joint_tolerance
    assert worst_limit < limit_tolerance
