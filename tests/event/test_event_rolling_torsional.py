"""Rolling resistance and torsional friction in the event-driven method (docs/event.md, docs/materials.md).

The event method applies them at acceleration level in the resting-contact LCP (``EventDriven._friction_lcp``):
a pair whose relative angular velocity ω_a − ω_b has a part ω_t in the tangent plane feels the torque
−μ_r Σf ω̂_t (rolling resistance), one spinning about the normal (s = n·(ω_a − ω_b) ≠ 0) −μ_s Σf sign(s) n; a
pair that does not roll (spin) holds its relative angular acceleration at zero with a torque of at most
μ_r Σf (μ_s Σf) on a linearized cone; a roll or spin that stops within a step ends the step there.

Closed forms for a solid sphere (I = 2/5 m r²) rolling without slipping (m a = −F, I α = F r − τ, a = r α):
- on level ground, τ = μ_r m g: a = μ_r g / (r (1 + 2/5)), it stops after v0² / (2 a) at t = v0 / a;
- on a slope θ (f_n = m g cos θ): held while μ_r ≥ r tan θ, else a = g (sin θ − (μ_r / r) cos θ) / (7/5);
- spinning about the vertical at ω0: ω(t) = ω0 − μ_s m g t / I, stopping at t = I ω0 / (μ_s m g).
The ODE is integrated by RK4, exact on these piecewise-quadratic motions, and each stop is found to
1e-9 rad/s: tolerances 1e-9 relative where the motion is polynomial, a step's worth where a time is read
from frames.
"""

from __future__ import annotations

import numpy as np
import pytest

import tumble as tb

G = 9.81
R = 0.1
MASS = 1.0
I = 0.4 * MASS * R * R
DT = 1.0 / 100.0


def _ball(**material):
    world = tb.World(method="event", event_impacts="sequential")
    world.add_ground(friction=0.5, **material)
    return world


def test_a_ball_rolling_against_rolling_resistance_stops_at_the_closed_form_distance():
    mu_r, v0 = 0.002, 1.0
    world = _ball(rolling_friction=mu_r)
    ball = world.add_body(tb.Sphere(R), mass=MASS, position=(0, 0, R), velocity=(v0, 0, 0),
                          angular_velocity=(0, v0 / R, 0), friction=0.5, rolling_friction=mu_r)
    a = mu_r * G / (R * 1.4)
    t_stop = v0 / a                                         # 7.14 s
    for k in range(1, round(6.0 / DT) + 1):                 # while rolling: x = v0 t − a t²/2
        world.step(DT)
        t = k * DT
        if k % 100 == 0:
            assert ball.position[0] == pytest.approx(v0 * t - 0.5 * a * t * t, rel=1e-9, abs=1e-12)
            assert ball.velocity[0] == pytest.approx(ball.angular_velocity[1] * R, abs=1e-9)   # no slip
    for _ in range(round(1.5 / DT)):
        world.step(DT)
    assert ball.position[0] == pytest.approx(v0 * v0 / (2.0 * a), rel=1e-9)
    assert np.linalg.norm(ball.velocity) < 1e-8 and np.linalg.norm(ball.angular_velocity) < 1e-7
    assert world.time > t_stop


@pytest.mark.parametrize("held", [True, False])
def test_a_ball_on_a_slope_is_held_by_rolling_resistance_or_rolls_down_at_the_closed_form_rate(held):
    theta = np.radians(2.0)
    mu_r = (1.2 if held else 0.5) * R * np.tan(theta)
    q = np.array([np.cos(theta / 2), 0.0, np.sin(theta / 2), 0.0])
    normal = np.array([np.sin(theta), 0.0, np.cos(theta)])
    world = tb.World(method="event", event_impacts="sequential")
    world.add_body(tb.Box(30.0, 30.0, 0.2), orientation=q, fixed=True, friction=0.5, rolling_friction=mu_r)
    ball = world.add_body(tb.Sphere(R), mass=MASS, position=(0.1 + R) * normal, friction=0.5, rolling_friction=mu_r)
    start = ball.position
    down = np.array([np.cos(theta), 0.0, -np.sin(theta)])
    a = 0.0 if held else G * (np.sin(theta) - mu_r / R * np.cos(theta)) / 1.4
    for k in range(1, 101):
        world.step(DT)
        assert (ball.position - start) @ down == pytest.approx(0.5 * a * (k * DT) ** 2, rel=1e-9, abs=1e-12)


def test_a_spinning_ball_stops_spinning_at_the_closed_form_time():
    mu_s, w0 = 0.01, 5.0
    world = _ball(torsional_friction=mu_s)
    ball = world.add_body(tb.Sphere(R), mass=MASS, position=(0, 0, R), angular_velocity=(0, 0, w0), friction=0.5,
                          torsional_friction=mu_s)
    rate = mu_s * MASS * G / I                                # 24.5 rad/s²: stops at 0.204 s
    for k in range(1, round(0.2 / DT) + 1):
        world.step(DT)
        assert ball.angular_velocity[2] == pytest.approx(w0 - rate * k * DT, rel=1e-9)
    world.step(DT)
    assert abs(ball.angular_velocity[2]) < 1e-8                # stopped at 0.2039 s, within this step
    world.step(DT)
    assert abs(ball.angular_velocity[2]) < 1e-8
    assert np.allclose(ball.position, [0.0, 0.0, R], atol=1e-10)


def test_a_box_spinning_on_its_face_is_stopped_by_one_bound_for_its_four_corners():
    """Coulomb friction off: the torsional torque alone, μ_s Σf = μ_s m g for the pair (not 4 μ_s m g)."""
    mu_s, w0 = 0.02, 2.0
    world = tb.World(method="event", event_impacts="sequential")
    world.add_ground(friction=0.0, torsional_friction=mu_s)
    box = world.add_body(tb.Box(0.2, 0.2, 0.2), mass=MASS, position=(0, 0, 0.1), angular_velocity=(0, 0, w0),
                         friction=0.0, torsional_friction=mu_s)
    rate = mu_s * MASS * G / (MASS * 0.08 / 12.0)              # I_z = m (a² + b²)/12
    for k in range(1, 6):
        world.step(DT)
        assert box.angular_velocity[2] == pytest.approx(w0 - rate * k * DT, rel=1e-9)


def test_zero_rolling_and_torsional_friction_leave_the_event_step_bitwise_unchanged():
    def run(**material):
        world = tb.World(method="event", event_impacts="sequential")
        world.add_ground(friction=0.4, restitution=0.3, **material)
        body = world.add_body(tb.Box(0.1, 0.1, 0.1), mass=0.4, position=(0, 0, 0.2),
                              orientation=(0.9, 0.3, 0.2, 0.1), velocity=(0.5, 0, 0), angular_velocity=(1, 2, 3),
                              friction=0.4, restitution=0.3, **material)
        for _ in range(30):
            world.step(1 / 150)
        return np.concatenate([body.position, body.orientation, body.velocity, body.angular_velocity])

    assert np.array_equal(run(), run(rolling_friction=0.0, torsional_friction=0.0))


def test_compliant_contact_is_refused_by_the_event_method_and_nothing_changes():
    world = tb.World(method="event", event_impacts="sequential")
    with pytest.raises(ValueError, match="contact_stiffness"):
        world.add_ground(contact_stiffness=1e4)
    with pytest.raises(ValueError, match="contact_stiffness"):
        world.add_body(tb.Sphere(R), mass=MASS, position=(0, 0, 1), contact_stiffness=1e4)
    assert len(world.bodies) == 0
    ball = world.add_body(tb.Sphere(R), mass=MASS, position=(0, 0, 1))
    with pytest.raises(ValueError, match="contact_stiffness"):
        ball.contact_stiffness = 1e4
    assert ball.contact_stiffness is None
