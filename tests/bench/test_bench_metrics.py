"""The harness's own geometry and figures, on cases with known answers."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.spatial.transform import Rotation

from bench.adapters.base import State
from bench.geometry import box_box_separation, measure_contacts, quat_to_matrix, sphere_box_separation
from bench.metrics import angular_momenta, bounce_apexes, end_state_figures, fit_acceleration, kinetic_energy
from bench.scenes import make_case
from bench.timing import initial_state_error


def _rz(angle):
    return np.array([[math.cos(angle), -math.sin(angle), 0], [math.sin(angle), math.cos(angle), 0], [0, 0, 1]])


def test_quat_to_matrix_matches_scipy():
    q = np.random.default_rng(0).standard_normal((50, 4))
    q /= np.linalg.norm(q, axis=1, keepdims=True)
    expected = Rotation.from_quat(q[:, [1, 2, 3, 0]]).as_matrix()  # SciPy is scalar-last
    assert np.allclose(quat_to_matrix(q), expected)


def test_box_box_separation_known_cases():
    h = np.array([[0.5, 0.5, 0.5]])
    eye = np.eye(3)[None]
    # face to face: 0.2 m gap; 0.1 m overlap
    assert box_box_separation(np.zeros((1, 3)), eye, h, np.array([[1.2, 0, 0]]), eye, h)[0] == pytest.approx(0.2)
    assert box_box_separation(np.zeros((1, 3)), eye, h, np.array([[0.9, 0.3, 0]]), eye, h)[0] == pytest.approx(-0.1)
    # a box turned 45° about z with its edge pointing at the other's face: reach 0.5·√2
    r45 = _rz(math.pi / 4)[None]
    sep = box_box_separation(np.zeros((1, 3)), eye, h, np.array([[1.6, 0, 0]]), r45, h)[0]
    assert sep == pytest.approx(1.6 - 0.5 - 0.5 * math.sqrt(2))
    # symmetric in its arguments
    assert box_box_separation(np.array([[1.6, 0, 0]]), r45, h, np.zeros((1, 3)), eye, h)[0] == pytest.approx(sep)


def test_sphere_box_separation():
    eye, h = np.eye(3)[None], np.array([[0.5, 0.5, 0.5]])
    r = np.array([0.1])
    assert sphere_box_separation(np.array([[0.7, 0, 0]]), r, np.zeros((1, 3)), eye, h)[0] == pytest.approx(0.1)
    corner = np.array([[0.6, 0.6, 0.6]])
    assert sphere_box_separation(corner, r, np.zeros((1, 3)), eye, h)[0] == pytest.approx(math.sqrt(0.03) - 0.1)
    assert sphere_box_separation(np.array([[0.45, 0, 0]]), r, np.zeros((1, 3)), eye, h)[0] == pytest.approx(-0.15)


def test_measure_contacts_box_on_ground_and_stack():
    is_box = np.array([True, True])
    half = np.full((2, 3), 0.5)
    q = np.array([[1.0, 0, 0, 0]] * 2)
    x = np.array([[0, 0, 0.5], [0, 0, 1.5]])
    c = measure_contacts(is_box, half, x, q, 0.0, [])
    assert (c.touching, c.penetrating, c.max_penetration) == (2, 0, 0.0)
    x_sunk = x - [0, 0, 0.002]
    c = measure_contacts(is_box, half, x_sunk, q, 0.0, [])
    assert c.penetrating == 1 and c.max_penetration == pytest.approx(0.002)
    wall = (np.array([1.0, 0, 0.5]), np.eye(3), np.array([0.5, 0.5, 0.5]))
    c = measure_contacts(is_box, half, x + [0.003, 0, 0], q, 0.0, [wall])
    assert c.max_penetration == pytest.approx(0.003) and c.touching == 4  # + both boxes on the wall


def test_energy_and_momentum_of_a_rotated_spinning_box():
    m, inertia = np.array([2.0]), np.array([[1.0, 2.0, 3.0]])
    q = np.array([[math.cos(0.3), 0.0, 0.0, math.sin(0.3)]])
    r = quat_to_matrix(q)[0]
    w_world = r @ np.array([0.0, 1.5, 0.0])  # spinning about its body y axis
    v = np.array([[1.0, 0, 0]])
    assert kinetic_energy(m, inertia, q, v, w_world[None])[0] == pytest.approx(0.5 * 2 * 1 + 0.5 * 2.0 * 1.5**2)
    x = np.array([[0.0, 1.0, 0.0]])
    L = angular_momenta(m, inertia, x, q, v, w_world[None])[0]
    assert np.allclose(L, 2.0 * np.cross(x[0], v[0]) + r @ np.array([0.0, 3.0, 0.0]))


def _bouncing_ball(t: np.ndarray, h0: float, e: float, g: float = 9.81) -> np.ndarray:
    """Exact height of a ball dropped from h0 that rebounds with restitution e (piecewise parabolas)."""
    z = np.empty_like(t)
    ts, z0, v0 = 0.0, h0, 0.0  # current flight: start time, height, upward speed
    for k, tk in enumerate(t):
        while True:
            flight = (v0 + math.sqrt(v0 * v0 + 2 * g * z0)) / g  # time until it is back at z = 0
            if tk - ts <= flight or flight < 1e-9:  # (bounces accumulate in finite time: then at rest)
                break
            ts, z0, v0 = ts + flight, 0.0, -e * (v0 - g * flight)
        tau = tk - ts
        z[k] = max(0.0, z0 + v0 * tau - 0.5 * g * tau * tau)
    return z


def test_bounce_apexes_on_an_exact_trace():
    t = np.arange(0, 3, 1 / 240)
    apex = bounce_apexes(t, _bouncing_ball(t, 1.0, 0.5))
    assert apex == pytest.approx([0.25, 0.0625, 0.015625, 0.00390625], rel=1e-3)


def test_bounce_apexes_ignore_resting_jitter():
    z = np.r_[np.linspace(1, 0, 50), 1e-5 * np.sin(np.arange(200))]
    assert bounce_apexes(np.arange(len(z)), z) == []


def test_fit_acceleration():
    t = np.linspace(0.1, 2, 200)
    assert fit_acceleration(t, 0.3 + 0.2 * t + 0.5 * 0.59 * t**2) == pytest.approx(0.59)


def test_s1_figures_zero_drift_for_an_unchanged_state_and_the_known_drift_of_a_sped_up_one():
    s = make_case("S1", quick=True)
    a = s.arrays
    st = State(a["x"], a["q"], a["v"], a["w"])
    f = end_state_figures(s, st, st, 0.2)
    assert f["ke_drift"] == 0.0 and f["L_total_drift"] == 0.0 and f["L_body_drift_max"] == 0.0
    # every velocity 10 % faster: kinetic energy × 1.21 (+21 %, 105 %/s over 0.2 s), and every body's
    # angular momentum m x × v + I ω × 1.1 (+10 %, the total too)
    fast = State(a["x"], a["q"], 1.1 * a["v"], 1.1 * a["w"])
    f = end_state_figures(s, st, fast, 0.2)
    assert f["ke_drift"] == pytest.approx(0.21, rel=1e-12) and f["ke_drift_per_s"] == pytest.approx(1.05, rel=1e-12)
    assert f["L_total_drift"] == pytest.approx(0.1, rel=1e-12) and f["L_body_drift_max"] == pytest.approx(0.1, rel=1e-9)
    assert end_state_figures(s, fast, st, 0.2)["ke_drift"] == pytest.approx(1 / 1.21 - 1, rel=1e-12)  # the sign
    assert initial_state_error(s, State(a["x"], -a["q"], a["v"], a["w"]))["q"] == 0.0  # q ≡ −q
