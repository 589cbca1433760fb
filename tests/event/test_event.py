"""The event-driven method (Baraff II 6, 8, 9): World(method="event"), against closed forms."""

from __future__ import annotations

import numpy as np
import pytest

import tumble as tb

G = 9.81
DT = 1.0 / 240.0


def _run(world: tb.World, seconds: float, dt: float = DT) -> None:
    for _ in range(round(seconds / dt)):
        world.step(dt)


def test_free_fall_is_exact():
    """No contact: RK4 integrates x(t) = x0 + v0 t + ½ g t² exactly (a quadratic in t; RK4 is exact for
    polynomials of degree ≤ 4). 120 steps of |x| ~ 1 m round at ~1e-16 each: 1e-12 leaves a wide margin."""
    world = tb.World(method="event", event_impacts="sequential")
    ball = world.add_body(tb.Sphere(0.1), mass=1.0, position=(0.0, 0.0, 2.0), velocity=(1.0, 0.5, 3.0))
    _run(world, 0.5)
    t = world.time
    expected = np.array([0.0, 0.0, 2.0]) + np.array([1.0, 0.5, 3.0]) * t + 0.5 * np.array([0, 0, -G]) * t**2
    assert np.allclose(ball.position, expected, rtol=0, atol=1e-12)
    assert np.allclose(ball.velocity, [1.0, 0.5, 3.0 - G * t], rtol=0, atol=1e-12)


def _bounce(restitution: float, seconds: float, **options):
    """A ball of radius 0.1 m dropped from 1 m above the ground; returns the world, the ball, each flight's
    apex height above the ground and the impact time before it, both from the state one step after the
    impact (closed-form free flight backwards and forwards from (z, v_z))."""
    world = tb.World(method="event", event_impacts="sequential", **options)
    world.add_ground(restitution=restitution)
    ball = world.add_body(tb.Sphere(0.1), mass=1.0, position=(0, 0, 1.1), restitution=restitution)
    apex, impact = [], []
    rising = False
    for _ in range(round(seconds / DT)):
        world.step(DT)
        z, vz = ball.position[2] - 0.1, ball.velocity[2]
        if vz > 0.0 and not rising:
            apex.append(z + vz**2 / (2 * G))
            # back along the parabola to the ground: z − vz τ − ½ g τ² = 0
            tau = (-vz + np.sqrt(vz**2 + 2 * G * z)) / G
            impact.append(world.time - tau)
        rising = vz > 0.0
    return world, ball, np.array(apex), np.array(impact)


def test_bounce_apexes_and_impact_times_match_the_closed_form():
    """e = 0.5 from h = 1 m: apex k = h e^(2k) within 1e-6 relative for k = 1…5, impact k at
    t_1 = √(2h/g), t_(k+1) = t_k + 2 e^k √(2gh)/g within 1e-6 s; then the ball rests on the ground.

    The collision time is found to a penetration within ε = 1e-10 m; an impact at depth δ changes the next
    apex by ~δ, 1e-7 relative to the 5th apex (1 mm). Measured: 2e-10 … 6e-8."""
    e, h = 0.5, 1.0
    world, ball, apex, impact = _bounce(e, 3.0)
    k = np.arange(1, 6)
    assert np.all(np.abs(apex[:5] / (h * e ** (2 * k)) - 1.0) < 1e-6)
    v1 = np.sqrt(2 * G * h)
    times = np.sqrt(2 * h / G) + np.concatenate([[0.0], np.cumsum(2 * e ** k[:4] * v1 / G)])
    assert np.all(np.abs(impact[:5] - times) < 1e-6)
    # Zeno: the bounces end in finite time (Σ flights = t_1 (1 + 2e/(1 − e)) = 1.35 s) and it rests
    assert abs(ball.position[2] - 0.1) < 1e-9
    assert np.linalg.norm(ball.velocity) < 1e-9
    forces = world.contacts().force
    assert forces.shape == (1, 3)
    assert forces[0] == pytest.approx([0.0, 0.0, G], abs=1e-9)


def test_bisection_finds_the_same_impacts():
    """The root finder changes the search, not the answer: bisection gives the same apexes to 1e-6."""
    _, _, apex_i, _ = _bounce(0.5, 1.2)
    _, _, apex_b, _ = _bounce(0.5, 1.2, event_root="bisection")
    assert len(apex_b) == len(apex_i) >= 2
    assert np.allclose(apex_b, apex_i, rtol=1e-6)


def _cradle(count: int, gap: float, impacts: str = "sequential"):
    world = tb.World(gravity=(0, 0, 0), method="event", event_impacts=impacts)
    balls = [world.add_body(tb.Sphere(0.1), mass=1.0, position=(0.2 * k + gap * k, 0.0, 0.0), restitution=1.0)
             for k in range(count)]
    balls[0].velocity = (1.0, 0.0, 0.0)
    if gap:
        balls[0].position = (-0.01, 0.0, 0.0)
    p0, e0 = world.linear_momentum(), world.kinetic_energy()
    _run(world, 0.1)
    return world, balls, p0, e0


@pytest.mark.parametrize("count", [3, 4, 5])
@pytest.mark.parametrize("gap", [0.0, 1e-3], ids=["touching", "gaps"])
def test_newtons_cradle_sequential(count, gap):
    """Equal spheres, e = 1, sequential impulses (find_all_collisions): each impulse exchanges the two
    balls' velocities, so the first stops and the last leaves at the incoming 1 m/s; momentum and energy
    are conserved (each (8-18) impulse with e = 1 between equal masses is an exact exchange; 1e-9)."""
    world, balls, p0, e0 = _cradle(count, gap)
    for b in balls[:-1]:
        assert np.linalg.norm(b.velocity) < 1e-9
    assert balls[-1].velocity == pytest.approx([1.0, 0.0, 0.0], abs=1e-9)
    assert np.allclose(world.linear_momentum(), p0, atol=1e-9)
    assert world.kinetic_energy() == pytest.approx(e0, abs=1e-9)


def test_newtons_cradle_simultaneous():
    """All impacts as one LCP (docs/event.md): for three touching equal balls, the colliding contact
    (v⁻ = −1, target v⁺ ≥ e|v⁻| = 1) and the resting one (target v⁺ ≥ 0) are both active:
    K = [[2, −1], [−1, 2]], K j = (2, 0) gives j = (4/3, 2/3) and velocities (−1/3, 2/3, 2/3) m/s, which
    conserve momentum (1) and energy (1/9 + 4/9 + 4/9 = 1)."""
    world, balls, p0, e0 = _cradle(3, 0.0, "simultaneous")
    v = [b.velocity[0] for b in balls]
    assert v == pytest.approx([-1 / 3, 2 / 3, 2 / 3], abs=1e-9)
    assert np.allclose(world.linear_momentum(), p0, atol=1e-9)
    assert world.kinetic_energy() == pytest.approx(e0, abs=1e-9)


def test_resting_box_forces_are_equal_and_carry_its_weight():
    """A box flat on the ground: 4 vertex–face contacts, A singular (3 degrees of freedom): the least-norm
    forces are equal by symmetry, each m g / 4; the box's acceleration is zero (1e-9: the LCP is solved to
    rounding). It stays put for 1 s."""
    world = tb.World(method="event", event_impacts="sequential")
    world.add_ground()
    box = world.add_body(tb.Box(0.4, 0.3, 0.2), mass=2.0, position=(0.1, -0.2, 0.1))
    contacts = world.contacts()
    assert len(contacts) == 4
    fz = contacts.force[:, 2]
    assert fz.sum() == pytest.approx(2.0 * G, rel=1e-9)
    assert np.allclose(fz, 2.0 * G / 4, rtol=1e-9)
    assert np.allclose(contacts.force[:, :2], 0.0, atol=1e-12)
    ydot = world._method.dydt(world.time, world.state_to_array())
    assert np.abs(ydot[7:13]).max() < 1e-9 * 2.0 * G      # Ṗ, L̇ of the box
    _run(world, 1.0)
    assert np.linalg.norm(box.position - [0.1, -0.2, 0.1]) < 1e-9
    assert np.linalg.norm(box.velocity) < 1e-9


def test_frictionless_box_slides_down_an_incline_at_g_sin_theta():
    """A box on a fixed slab tilted 20° (frictionless resting contact): along the slope a = g sin θ, and it
    stays on the slab (1e-6 relative for a, from s = ½ a t² after 0.5 s)."""
    theta = np.radians(20.0)
    q = np.array([np.cos(theta / 2), 0.0, np.sin(theta / 2), 0.0])
    normal = np.array([np.sin(theta), 0.0, np.cos(theta)])
    world = tb.World(method="event", event_impacts="sequential")
    world.add_body(tb.Box(4.0, 4.0, 0.2), position=(0, 0, 0), orientation=q, fixed=True, friction=0.0)
    box = world.add_body(tb.Box(0.2, 0.2, 0.2), mass=1.0, position=0.2 * normal, orientation=q, friction=0.0)
    start = box.position
    _run(world, 0.5)
    d = box.position - start
    downhill = np.array([np.cos(theta), 0.0, -np.sin(theta)])
    a = 2.0 * (d @ downhill) / world.time**2
    assert a == pytest.approx(G * np.sin(theta), rel=1e-6)
    assert abs(d @ normal) < 1e-9
    assert np.linalg.norm(box.angular_velocity) < 1e-9


def test_a_pull_stronger_than_the_weight_lifts_the_box():
    """Complementarity (9-7): pulled up with 1.5 m g, the contacts accelerate apart (d̈ > 0), their forces
    are zero and the box rises at 0.5 g."""
    world = tb.World(method="event", event_impacts="sequential")
    world.add_ground()
    box = world.add_body(tb.Box(0.2, 0.2, 0.2), mass=1.0, position=(0, 0, 0.1))
    world.add_force(lambda w, t: box.apply_force((0.0, 0.0, 1.5 * G)))
    world.step(DT)
    t = world.time
    assert box.position[2] == pytest.approx(0.1 + 0.25 * G * t**2, abs=1e-12)
    box.apply_force((0.0, 0.0, 1.5 * G))
    # while touching (at t = 0 the pull already wins): every force zero
    fresh = tb.World(method="event", event_impacts="sequential")
    fresh.add_ground()
    b2 = fresh.add_body(tb.Box(0.2, 0.2, 0.2), mass=1.0, position=(0, 0, 0.1))
    b2.apply_force((0.0, 0.0, 1.5 * G))
    contacts = fresh.contacts()
    assert len(contacts) == 4
    assert np.all(contacts.force == 0.0)


@pytest.mark.parametrize("impacts", ["sequential", "simultaneous"])
def test_two_body_collision_in_free_space(impacts):
    """Central impact of two spheres (1 kg at 2 m/s, 3 kg at −1 m/s, e = 0.5): Newton's law gives
    v1' = v̄ − e m2 (v1 − v2)/(m1 + m2), v2' = v̄ + e m1 (v1 − v2)/(m1 + m2) (v̄ the centre-of-mass
    velocity), and the kinetic energy drops by ½ μ (1 − e²) (v1 − v2)²; momentum is exact (each impulse is
    ±j on the two bodies: 1e-12)."""
    world = tb.World(gravity=(0, 0, 0), method="event", event_impacts=impacts)
    a = world.add_body(tb.Sphere(0.1), mass=1.0, position=(0, 0, 0), velocity=(2.0, 0, 0), restitution=0.5)
    b = world.add_body(tb.Sphere(0.1), mass=3.0, position=(0.5, 0, 0), velocity=(-1.0, 0, 0), restitution=0.5)
    p0, e0 = world.linear_momentum(), world.kinetic_energy()
    _run(world, 0.2)
    vbar = (1.0 * 2.0 + 3.0 * -1.0) / 4.0
    assert a.velocity[0] == pytest.approx(vbar - 0.5 * 3.0 * 3.0 / 4.0, abs=1e-12)
    assert b.velocity[0] == pytest.approx(vbar + 0.5 * 1.0 * 3.0 / 4.0, abs=1e-12)
    assert np.allclose(world.linear_momentum(), p0, rtol=0, atol=1e-12)
    mu = 3.0 / 4.0
    assert e0 - world.kinetic_energy() == pytest.approx(0.5 * mu * (1 - 0.25) * 9.0, rel=1e-12)


def test_spinning_boxes_collide_with_momentum_exact():
    """Two spinning boxes meeting off-centre in zero gravity (vertex–face and edge–edge impacts):
    linear and angular momentum exact to 1e-12 relative (each impulse is ±j at one point, (8-12))."""
    world = tb.World(gravity=(0, 0, 0), method="event", event_impacts="sequential")
    world.add_body(tb.Box(0.2, 0.2, 0.2), mass=1.0, position=(0, 0, 0), velocity=(2.0, 0.3, 0.0),
                   angular_velocity=(0.0, 1.0, 2.0), restitution=0.5)
    world.add_body(tb.Box(0.3, 0.2, 0.25), mass=3.0, position=(0.4, 0.05, 0.02), velocity=(-1.0, 0.0, 0.1),
                   orientation=(0.9, 0.1, 0.2, 0.3), restitution=0.5)
    p0, L0 = world.linear_momentum(), world.angular_momentum()
    e0 = world.kinetic_energy()
    _run(world, 0.3)
    assert world._method.stats is not None
    assert np.linalg.norm(world.linear_momentum() - p0) < 1e-12 * np.linalg.norm(p0)
    assert np.linalg.norm(world.angular_momentum() - L0) < 1e-12 * np.linalg.norm(L0)
    assert world.kinetic_energy() < e0          # e = 0.5 dissipates


def test_bad_event_options_raise_before_anything_changes():
    with pytest.raises(ValueError, match="event_impacts"):
        tb.World(method="event", event_impacts="both")
    with pytest.raises(ValueError, match="event_tolerance"):
        tb.World(method="event", event_impacts="sequential", event_tolerance=-1.0)
    with pytest.raises(ValueError, match="event_root"):
        tb.World(method="event", event_impacts="sequential", event_root="newton")
    with pytest.raises(ValueError, match="method"):
        tb.World(method="events")


def test_scene_files_carry_the_event_settings(tmp_path):
    """[world.event] round trip; a bad value is located to its line and key."""
    world = tb.World(method="event", event_impacts="simultaneous", event_tolerance=1e-9, event_root="bisection")
    world.add_ground(restitution=0.5)
    world.add_body(tb.Sphere(0.1), mass=1.0, position=(0, 0, 1.0), restitution=0.5)
    path = tmp_path / "event.toml"
    world.save_scene(path)
    loaded = tb.load_scene(path)
    assert loaded.method == "event"
    assert loaded._method.settings == world._method.settings
    text = path.read_text()
    line = text.splitlines().index('impacts = "simultaneous"') + 1
    path.write_text(text.replace('impacts = "simultaneous"', 'impacts = "both"'))
    with pytest.raises(ValueError, match=rf"event.toml:{line}: world\.event\.impacts: must be one of"):
        tb.load_scene(path)


def test_a_fast_ball_does_not_tunnel_through_a_thin_wall():
    """A 5 cm ball at 200 m/s toward a 2 cm wall 0.5 m away, e = 1, zero gravity: one step of 1/240 s would
    carry it 0.83 m, through the wall; the step bound (a quarter of the thinnest bounding box per step)
    catches the impact, and it comes back at 200 m/s."""
    world = tb.World(gravity=(0, 0, 0), method="event", event_impacts="sequential")
    world.add_body(tb.Box(0.02, 1.0, 1.0), position=(0.5, 0, 0), fixed=True, restitution=1.0)
    ball = world.add_body(tb.Sphere(0.05), mass=1.0, position=(0, 0, 0), velocity=(200.0, 0, 0), restitution=1.0)
    world.step(DT)
    assert ball.velocity[0] == pytest.approx(-200.0, rel=1e-12)
    assert ball.position[0] < 0.5 - 0.01 - 0.05 + 1e-9


def test_adaptive_ode_gives_the_same_bounce():
    """event_ode="adaptive" (DOP853 at rtol 1e-10): the first apex h e² within 1e-6 relative."""
    _, _, apex, _ = _bounce(0.5, 0.8, event_ode="adaptive")
    assert apex[0] == pytest.approx(0.25, rel=1e-6)


def test_removing_a_body_renews_the_event_methods_detector():
    """After world.remove_body the method detects on the new shape rows: the remaining ball still lands and
    rests on the ground (a stale detector would name removed shapes)."""
    world = tb.World(method="event", event_impacts="sequential")
    world.add_ground()
    gone = world.add_body(tb.Sphere(0.1), mass=1.0, position=(1.0, 0, 0.1))
    ball = world.add_body(tb.Sphere(0.1), mass=1.0, position=(0, 0, 0.3))
    world.step(DT)
    world.remove_body(gone)
    _run(world, 0.5)
    assert ball.position[2] == pytest.approx(0.1, abs=1e-9)
    assert np.linalg.norm(ball.velocity) < 1e-9


def test_restore_repeats_the_event_run_bitwise():
    """snapshot()/restore() in event mode: the same impacts and collision times follow, bit for bit."""
    world = tb.World(method="event", event_impacts="sequential")
    world.add_ground(restitution=0.5)
    ball = world.add_body(tb.Box(0.2, 0.1, 0.15), mass=1.0, position=(0, 0, 0.6), restitution=0.5,
                          orientation=(0.96, 0.2, 0.1, 0.17), angular_velocity=(1.0, 2.0, 0.5))
    _run(world, 0.2)
    snap = world.snapshot()
    _run(world, 0.3)
    first = (ball.position.copy(), ball.velocity.copy(), world.contacts().force.copy())
    world.restore(snap)
    _run(world, 0.3)
    assert np.array_equal(ball.position, first[0]) and np.array_equal(ball.velocity, first[1])
    assert np.array_equal(world.contacts().force, first[2])


def test_an_unsupported_shape_is_refused_before_anything_changes():
    world = tb.World(method="event", event_impacts="sequential")
    world.add_ground()
    with pytest.raises(ValueError, match="shape: method='event' does not support Capsule"):
        world.add_body(tb.Capsule(0.1, 0.3), mass=1.0)
    with pytest.raises(ValueError, match="Cylinder"):
        parts = [(tb.Box(0.1, 0.1, 0.1), (0, 0, 0), (1, 0, 0, 0)), (tb.Cylinder(0.1, 0.2), (0, 0, 0.2), (1, 0, 0, 0))]
        world.add_body(parts, mass=1.0)
    assert len(world.bodies) == 1
