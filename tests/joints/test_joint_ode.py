"""Joints under the ODE integrators (euler, rk4, adaptive): constraint forces by projection (ArtiSynth notes
0.5; solvers/joint_accel.py). The rows' rate term Ġu against central differences of the rows kernel, and the
motion against closed forms: the exact pendulum period and its energy, a slider's g sin α, a hanging body's
weight, a broken joint's free fall (the double pendulum's energy, a spinning pair's momentum and a chain
swinging into the ground are in test_joints.py); a compliant joint as the spring it stands for (its sag, its
period, the energy it stores beside a rigid joint); and the refusals (limits, motors)."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.special import ellipk

import tumble as tb
from tumble.constraints.joint_rows import BALL, EQUALITY_ROWS, FIXED, HINGE, SLIDER, joint_rows
from tumble.rotations import axis_angle_to_quat, quat_mul, quat_rotate
from tumble.solvers.joint_accel import joint_rate_products

G = 9.81


def _random_frames(rng, m):
    frames = np.zeros((m, 7))
    frames[:, :3] = rng.normal(scale=0.3, size=(m, 3))
    q = rng.normal(size=(m, 4))
    frames[:, 3:] = q / np.linalg.norm(q, axis=1, keepdims=True)
    return frames


def _advance(x, q, v, w, eps):
    """The pose after time eps at constant velocities: x + eps v, and q turned by the rotation vector eps ω."""
    q2 = np.array([quat_mul(axis_angle_to_quat(wi / np.linalg.norm(wi), eps * np.linalg.norm(wi)), qi)
                   for wi, qi in zip(w, q, strict=True)])
    return x + eps * v, q2


def _g_times_u(kind, body, frame_a, frame_b, x, q, v, w):
    """G(x, q) u for every equality row (m, 8), from the rows kernel (constraints/joint_rows.py)."""
    m = len(kind)
    lin, ang_a, ang_b = np.zeros((m, 8, 3)), np.zeros((m, 8, 3)), np.zeros((m, 8, 3))
    error, coordinate = np.zeros((m, 8)), np.zeros(m)
    joint_rows(kind, body, frame_a, frame_b, np.zeros((m, 6)), np.zeros(m, dtype=np.int64), x, q, lin, ang_a,
               ang_b, error, coordinate)
    out = np.zeros((m, 8))
    for j in range(m):
        a, b = body[j]
        for r in range(EQUALITY_ROWS[kind[j]]):
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
    n, m = 3, 6
    x = rng.normal(size=(n, 3))
    q = rng.normal(size=(n, 4))
    q /= np.linalg.norm(q, axis=1, keepdims=True)
    v, w = rng.normal(size=(n, 3)), rng.normal(scale=2.0, size=(n, 3))
    kinds = np.full(m, kind, dtype=np.int64)
    body = np.array([[0, 1], [1, 2], [2, 0], [0, -1], [1, -1], [2, 1]], dtype=np.int64)
    frame_a, frame_b = _random_frames(rng, m), _random_frames(rng, m)
    rate = np.zeros((m, 8))
    for j in range(m):
        joint_rate_products(j, kinds, body, frame_a, frame_b, x, q, v, w, rate)
    eps = 1e-5
    plus = _g_times_u(kinds, body, frame_a, frame_b, *_advance(x, q, v, w, eps), v, w)
    minus = _g_times_u(kinds, body, frame_a, frame_b, *_advance(x, q, v, w, -eps), v, w)
    rows = EQUALITY_ROWS[kind]
    np.testing.assert_allclose(rate[:, :rows], ((plus - minus) / (2 * eps))[:, :rows], rtol=0, atol=1e-7)
    assert np.abs(rate[:, :rows]).max() > 0.1 or kind == FIXED   # the check is not of zeros (fixed: lock rows)


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
def test_limits_and_motors_are_refused_with_nothing_changed(integrator):
    world = tb.World(integrator=integrator)
    a = world.add_body(tb.Sphere(0.1))
    b = world.add_body(tb.Sphere(0.1), position=(1, 0, 0))
    for joint, name in [(tb.HingeJoint(a, None, (0, 0, 0), (0, 1, 0), limits=(-1, 1)), "limits"),
                        (tb.SliderJoint(a, b, (0, 0, 0), (1, 0, 0), motor=(1.0, 5.0)), "motor")]:
        with pytest.raises(ValueError, match=f"{name}=.*integrator='{integrator}'"):
            world.add_joint(joint)
    assert world.joints == ()
    hinge = world.add_joint(tb.HingeJoint(a, None, (0, 0, 0), (0, 1, 0)))
    for name, value in [("limits", (-1.0, 1.0)), ("motor", (1.0, 5.0))]:
        before = getattr(hinge, name)
        with pytest.raises(ValueError, match=f"{name}="):
            setattr(hinge, name, value)
        assert getattr(hinge, name) == before
    hinge.damping = 2.0     # damping alone (no compliance) changes nothing in a rigid joint: allowed
    hinge.compliance = 1e-3  # a compliance is a spring, which these integrators take as a force
    assert world.add_joint(tb.BallJoint(a, b, (0, 0, 0), compliance=1e-3)).compliance == 1e-3
    # and a world whose joints have limits cannot switch to an ODE integrator
    other = tb.World()
    c = other.add_body(tb.Sphere(0.1))
    other.add_joint(tb.HingeJoint(c, None, (0, 0, 0), (0, 1, 0), limits=(-1, 1)))
    with pytest.raises(ValueError, match="limits="):
        other.integrator = integrator
    assert other.integrator == "splitting"


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
