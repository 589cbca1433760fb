"""Rolling resistance and torsional friction (docs/materials.md) against closed forms.

A pair's torsional row resists the relative spin n·(ω_a − ω_b) with a torque of at most μ_s f_n, its rolling
rows the tangential part of ω_a − ω_b with at most μ_r f_n (a disc), f_n the pair's normal force (the sum over
its contacts). Closed forms, for a solid sphere (I = 2/5 m r²) of radius r rolling without slipping:

- on level ground, the constant resisting torque μ_r m g decelerates it at a = μ_r g / (r (1 + I/(m r²)))
  = 5 μ_r g / (7 r) (m a = −F, I α = F r − μ_r m g, a = r α), so it stops after v0² / (2 a);
- on a slope of angle θ, f_n = m g cos θ: it stays at rest while tan θ <= μ_r / r, and otherwise rolls down
  at a = g (sin θ − (μ_r / r) cos θ) / (1 + I/(m r²));
- spinning about the vertical at ω0 on its contact point, the torque μ_s m g stops it at t = I ω0 / (μ_s m g);
  a box on its face too (Coulomb friction off, so the torsional row alone resists): the manifold's four
  corners share one bound μ_s m g, not four.

With both zero (the default) the step is the rigid one bit for bit (tests/golden, and
``test_explicit_zeros_step_bitwise_like_the_default``).
"""

from __future__ import annotations

import numpy as np
import pytest

import tumble as tb

DT = 1.0 / 240.0
G = 9.81
R = 0.1
MASS = 1.0
INERTIA_RATIO = 0.4   # I / (m r²) of a solid sphere


def _stop_time(values: list[float], threshold: float) -> int:
    """The index of the first entry at or below ``threshold``."""
    return next(i for i, value in enumerate(values) if value <= threshold)


def _rolling_ball(mu_r: float, v0: float, seconds: float, **options):
    world = tb.World(**options)
    world.add_ground(rolling_friction=mu_r)
    ball = world.add_body(tb.Sphere(R), mass=MASS, position=(0.0, 0.0, R), velocity=(v0, 0.0, 0.0),
                          angular_velocity=(0.0, v0 / R, 0.0), rolling_friction=mu_r)
    xs, vs = [], []
    for _ in range(round(seconds / DT)):
        world.step(DT)
        xs.append(ball.position[0])
        vs.append(ball.velocity[0])
    return ball, np.array(xs), np.array(vs)


@pytest.mark.parametrize("friction", ["cone", "pyramid", "box"])
def test_a_rolling_ball_stops_after_the_closed_form_distance(friction):
    """μ_r = 0.01 m (ball and ground: the pair's √(a b) is 0.01), v0 = 1 m/s, ω0 = v0 / r: a = 5 μ_r g / (7 r)
    = 0.7007 m/s², distance v0² / (2 a) = 0.7136 m, reached at t = 1.43 s. Tolerance 1 % (the issue's): the
    symplectic step's distance differs from the integral by about v0 h / 2 = 2 mm (0.3 %); measured 0.07 %.
    Whatever the friction model, the rolling rows are the same disc; the ball never slips (ω r = v)."""
    mu_r, v0 = 0.01, 1.0
    ball, xs, vs = _rolling_ball(mu_r, v0, 2.0, friction=friction)
    a = mu_r * G / (R * (1.0 + INERTIA_RATIO))
    assert xs[-1] == pytest.approx(v0 ** 2 / (2.0 * a), rel=0.01)
    assert np.allclose(ball.velocity, 0.0, atol=1e-9) and np.allclose(ball.angular_velocity, 0.0, atol=1e-8)
    # the deceleration itself, over the first second: v(t) = v0 − a t to 0.5 % of v0 (one step's a h is 0.3 %)
    t = DT * np.arange(1, len(vs) + 1)
    early = t <= 1.0
    np.testing.assert_allclose(vs[early], v0 - a * t[early], rtol=0.0, atol=5e-3 * v0)


def test_without_rolling_resistance_the_ball_keeps_rolling():
    """The same ball with μ_r = 0 on one side (√(0 · 0.01) = 0): it keeps v0 (tests/contact/test_rolling.py)."""
    world = tb.World()
    world.add_ground(rolling_friction=0.01)
    ball = world.add_body(tb.Sphere(R), mass=MASS, position=(0.0, 0.0, R), velocity=(1.0, 0.0, 0.0),
                          angular_velocity=(0.0, 1.0 / R, 0.0))
    for _ in range(240):
        world.step(DT)
    assert ball.velocity[0] == pytest.approx(1.0, abs=1e-12)


def _incline_ball(theta: float, mu_r: float, seconds: float):
    """A ball (mass 1 kg) set at rest on a fixed slab tilted by ``theta`` about y; its path down the slope after
    each step."""
    q = np.array([np.cos(theta / 2), 0.0, np.sin(theta / 2), 0.0])
    normal = np.array([np.sin(theta), 0.0, np.cos(theta)])
    world = tb.World(sleep=False)
    world.add_body(tb.Box(30.0, 30.0, 0.2), orientation=q, fixed=True, rolling_friction=mu_r)
    ball = world.add_body(tb.Sphere(R), mass=MASS, position=(0.1 + R) * normal, rolling_friction=mu_r)
    start = ball.position
    down = np.array([np.cos(theta), 0.0, -np.sin(theta)])
    path = []
    for _ in range(round(seconds / DT)):
        world.step(DT)
        path.append(float((ball.position - start) @ down))
    return np.array(path)


def test_on_a_slope_the_bound_is_mu_r_times_the_normal_force():
    """μ_r / r = 0.1. At 5° (tan θ = 0.087 < 0.1) the ball stays: the first step, with no warm start, lets it
    creep 2.4 µm while the sweeps build the rolling torque, then it holds (no motion over the last 0.5 s; in
    the 0.2 s before, it settles by 1e-14 m); at 10° it rolls down at a = g (sin θ − 0.1 cos θ) / 1.4 =
    0.5267 m/s², to 1 % over 1 s: the bound is μ_r times f_n = m g cos θ."""
    mu_r = 0.01
    held = _incline_ball(np.radians(5.0), mu_r, 1.0)
    assert abs(held[-1]) < 1e-5 and held[-1] == held[119]
    theta = np.radians(10.0)
    path = _incline_ball(theta, mu_r, 1.0)
    a = G * (np.sin(theta) - mu_r / R * np.cos(theta)) / (1.0 + INERTIA_RATIO)
    assert path[-1] == pytest.approx(0.5 * a * 1.0 ** 2, rel=0.01)


def _spinning(shape, mu_s: float, w0: float, seconds: float, friction: float):
    world = tb.World()
    world.add_ground(torsional_friction=mu_s, friction=friction)
    body = world.add_body(shape, mass=MASS, position=(0.0, 0.0, R), angular_velocity=(0.0, 0.0, w0),
                          torsional_friction=mu_s, friction=friction)
    spins = []
    for _ in range(round(seconds / DT)):
        world.step(DT)
        spins.append(body.angular_velocity[2])
    return body, spins


@pytest.mark.parametrize("shape, friction", [(tb.Sphere(R), 0.5), (tb.Box(2 * R, 2 * R, 2 * R), 0.0)],
                         ids=["sphere", "box-face"])
def test_a_spinning_body_stops_at_the_closed_form_time(shape, friction):
    """μ_s = 0.002 m, ω0 = 5 rad/s about the vertical: t = I ω0 / (μ_s m g): 1.019 s for the sphere
    (I = 0.004 kg m²), 1.699 s for the 0.2 m cube (I = m a² / 6) resting on four corners, whose manifold shares
    one bound (per-corner rows bounded by four times the pair's force would stop it at t/4). Tolerance 1 %
    (the issue's; a step is 0.25–0.4 % of t); measured 0.14 % and 0.06 %. The body does not drift."""
    mu_s, w0 = 0.002, 5.0
    body, spins = _spinning(shape, mu_s, w0, 2.5, friction)
    inertia = body.inertia_body[2, 2]
    t_stop = DT * (_stop_time(spins, 1e-9 * w0) + 1)
    assert t_stop == pytest.approx(inertia * w0 / (mu_s * MASS * G), rel=0.01)
    assert np.allclose(body.position[:2], 0.0, atol=1e-9)
    assert np.all(np.diff(spins[:_stop_time(spins, 1e-9 * w0)]) < 0.0)


def _mixed_scene(**extras) -> tb.World:
    """A small scene with rolling, sliding, spinning and a stack, every body and the ground given ``extras``."""
    world = tb.World()
    world.add_ground(friction=0.6, **extras)
    world.add_body(tb.Sphere(0.1), position=(0, 0, 0.1), velocity=(1, 0, 0), angular_velocity=(0, 8, 3), **extras)
    world.add_body(tb.Box(0.2, 0.3, 0.1), position=(1, 0, 0.05), velocity=(0.5, 0.2, 0), angular_velocity=(0, 0, 4),
                   friction=0.3, **extras)
    for i in range(3):
        world.add_body(tb.Box(0.2, 0.2, 0.2), position=(-1, 0.01 * i, 0.1 + 0.2 * i), **extras)
    world.add_body(tb.Capsule(0.05, 0.2), position=(0, 1, 0.3), orientation=(1, 1, 0, 0), velocity=(0, 0, -1),
                   **extras)
    return world


def test_explicit_zeros_step_bitwise_like_the_default():
    """Zero rolling and torsional friction and a rigid contact (the defaults, given explicitly) build no extra
    row and change no operation: 120 steps of a mixed scene are bitwise those of the default."""
    default = _mixed_scene()
    zeros = _mixed_scene(rolling_friction=0.0, torsional_friction=0.0, contact_stiffness=None,
                         contact_dissipation=0.0)
    for _ in range(120):
        default.step(DT)
        zeros.step(DT)
    for name, value in default.state_arrays().items():
        np.testing.assert_array_equal(zeros.state_arrays()[name], value, err_msg=name)


def _colliding_balls(**extras_b):
    world = tb.World(gravity=(0.0, 0.0, 0.0))
    world.add_body(tb.Sphere(0.1), position=(-0.2, 0, 0), velocity=(1, 0.1, 0), angular_velocity=(0, 3, 9),
                   restitution=0.5, rolling_friction=0.02, torsional_friction=0.02)
    world.add_body(tb.Sphere(0.12), mass=2.0, position=(0.05, 0.02, 0), angular_velocity=(4, 0, -6), **extras_b)
    return world


def test_the_rows_conserve_momentum_and_a_snapshot_repeats_them():
    """Two spinning balls colliding in zero gravity with rolling and torsional friction: the angular rows are
    couples, so linear and angular momentum keep to rounding (1e-12 relative) while the spins come out other
    than without the rows; and a snapshot taken after the collision (with the pair's angular impulse for the
    warm start) repeats the run bitwise."""
    plain = _colliding_balls()
    world = _colliding_balls(rolling_friction=0.05, torsional_friction=0.01)
    p0, l0 = world.linear_momentum(), world.angular_momentum()
    for _ in range(30):
        world.step(DT)
        plain.step(DT)
    assert np.abs(world.bodies[1].angular_velocity - plain.bodies[1].angular_velocity).max() > 0.1
    np.testing.assert_allclose(world.linear_momentum(), p0, rtol=0, atol=1e-12 * np.linalg.norm(p0))
    np.testing.assert_allclose(world.angular_momentum(), l0, rtol=0, atol=1e-12 * np.linalg.norm(l0))
    snap = world.snapshot()
    later = []
    for _ in range(20):
        world.step(DT)
        later.append(world.state_arrays())
    world.restore(snap)
    for expected in later:
        world.step(DT)
        for name, value in expected.items():
            np.testing.assert_array_equal(world.state_arrays()[name], value, err_msg=name)
