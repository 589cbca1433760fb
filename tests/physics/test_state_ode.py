"""Baraff's state vector, the ode() interface, snapshots and force callbacks."""

import numpy as np
import pytest

import tumble as tb


def random_world(n=5, seed=0):
    rng = np.random.default_rng(seed)
    world = tb.World()
    for _ in range(n):
        world.add_body(tb.Box(*rng.uniform(0.1, 1.0, 3)), position=rng.normal(size=3), orientation=rng.normal(size=4),
                       velocity=rng.normal(size=3), angular_velocity=rng.normal(size=3))
    world.add_body(tb.Sphere(1.0), fixed=True)
    return world


def test_state_array_round_trip_and_layout():
    # Baraff I section 3: Y = (x, q, P = M v, L = I ω) per body, 13 numbers each.
    world = random_world()
    before = world.state_arrays()
    y = world.state_to_array()
    assert y.shape == (13 * world.body_count,)
    b = world.bodies[2]
    Y = y.reshape(-1, 13)[2]
    np.testing.assert_array_equal(Y[:3], b.position)
    np.testing.assert_array_equal(Y[3:7], b.orientation)
    np.testing.assert_allclose(Y[7:10], b.mass * b.velocity, rtol=1e-15)
    np.testing.assert_allclose(Y[10:], b.inertia_world @ b.angular_velocity, rtol=1e-13)
    world.array_to_state(y)
    for k, v in world.state_arrays().items():
        np.testing.assert_allclose(v, before[k], rtol=1e-13, atol=1e-15)


def test_state_derivative_is_baraff_2_43():
    world = random_world()
    b = world.bodies[1]
    b.apply_force((1.0, 2.0, 3.0))
    b.apply_torque((0.5, -0.5, 0.25))
    ydot = world.state_derivative(world.state_to_array()).reshape(-1, 13)[1]
    np.testing.assert_allclose(ydot[:3], b.velocity, rtol=1e-14)                                   # ẋ = v
    np.testing.assert_allclose(ydot[3:7], tb.rotations.quat_derivative(b.orientation, b.angular_velocity),
                               rtol=1e-12, atol=1e-15)                                             # q̇ = ½ ω q
    np.testing.assert_allclose(ydot[7:10], np.array([1.0, 2.0, 3.0]) + b.mass * world.gravity, rtol=1e-14)
    np.testing.assert_allclose(ydot[10:], (0.5, -0.5, 0.25))                                       # L̇ = τ
    fixed = world.state_derivative(world.state_to_array()).reshape(-1, 13)[-1]
    np.testing.assert_array_equal(fixed[:7], 0.0)  # a fixed body has v = 0 and ω = 0


@pytest.mark.parametrize(("method", "order"), [("euler", 1), ("rk4", 4)])
def test_ode_fixed_step_methods_have_their_order(method, order):
    # y' = −y, y(0) = 1: global error ∝ h^order; halving h divides it by 2^order (±0.3 pre-asymptotic).
    def err(h):
        return abs(tb.ode(np.array([1.0]), 0.0, 1.0, lambda t, y: -y, method=method, max_step=h)[0] - np.exp(-1))
    assert np.log2(err(0.1) / err(0.05)) == pytest.approx(order, abs=0.3)


def test_ode_adaptive_meets_its_tolerance():
    # y' = t cos(t) y has y = exp(cos t + t sin t − 1); DOP853 at rtol 1e-10 is within ~1e-9 relative.
    y1 = tb.ode(np.array([1.0]), 0.0, 3.0, lambda t, y: t * np.cos(t) * y, method="adaptive")[0]
    assert y1 == pytest.approx(np.exp(np.cos(3.0) + 3.0 * np.sin(3.0) - 1.0), rel=1e-9)


def test_snapshot_restore_replays_bitwise():
    world = random_world()
    world.simulate(0.1, 0.01)
    snap = world.snapshot()
    world.simulate(0.1, 0.01)
    after = world.state_arrays()
    world.restore(snap)
    assert world.time == pytest.approx(0.1)
    world.simulate(0.1, 0.01)
    for k, v in world.state_arrays().items():
        np.testing.assert_array_equal(v, after[k])


def test_force_callback_runs_once_per_step_with_the_time():
    world = tb.World(gravity=(0, 0, 0))
    body = world.add_body(tb.Sphere(0.5), mass=2.0)
    calls = []

    def thrust(w, t):
        calls.append(t)
        body.apply_force((4.0, 0, 0))

    world.add_force(thrust)
    world.simulate(0.5, 0.1)
    np.testing.assert_allclose(calls, [0.0, 0.1, 0.2, 0.3, 0.4], atol=1e-15)
    np.testing.assert_allclose(body.velocity, (0.5 * 4.0 / 2.0, 0, 0), rtol=1e-14)  # a = F/M for 0.5 s


def test_point_velocity_and_acceleration_closed_forms():
    # Baraff I (2-17) and II (C-12): a spinning body with no loads has centripetal point acceleration.
    world = tb.World(gravity=(0, 0, 0))
    body = world.add_body(tb.Cylinder(0.5, 0.1), angular_velocity=(0, 0, 3.0), velocity=(1, 0, 0))
    p = np.array([0.4, 0.0, 0.0])
    np.testing.assert_allclose(body.point_velocity(p), (1.0, 1.2, 0.0), rtol=1e-15)
    np.testing.assert_allclose(body.point_acceleration(p), (-9.0 * 0.4, 0, 0), rtol=1e-14, atol=1e-15)


def test_compound_body_is_recentred_at_its_com():
    world = tb.World()
    parts = [(tb.Box(1, 1, 1), (0, 0, 0)), (tb.Box(1, 1, 1), (1, 0, 0))]
    body = world.add_body(parts, position=(5, 0, 0))
    assert body.mass == pytest.approx(2000.0)
    np.testing.assert_allclose(world.model.geom.live("geom_pos"), [[-0.5, 0, 0], [0.5, 0, 0]])
    # Two unit cubes side by side = one 2×1×1 box (Baraff I (5-3)).
    np.testing.assert_allclose(body.inertia_body, tb.mass_properties(tb.Box(2, 1, 1)).inertia, rtol=1e-12)
