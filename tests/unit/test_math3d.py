"""Numba kernels of ``tumble.math3d`` against closed forms (Baraff I (2-9), (4-1), section 4;
ArtiSynth notes 0.2, 0.4).

References are computed independently here with NumPy: the Hamilton product written out from
Baraff I (4-1), Rodrigues' formula for a rotation about an axis, and elementary rotations Rz, Ry, Rx.
Tolerances: inputs are O(1)-O(10) and each kernel does a few dozen flops, so rounding is ~1e-15 per
unit of magnitude; 1e-12 (relative to the magnitude) leaves three orders of margin.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from rotation_reference import Rx, Ry, Rz, axes, quats, rodrigues, unit, vecs

from tumble import math3d as k
from tumble.conventions import SMALL_ANGLE

SETTINGS = settings(max_examples=60, deadline=None)  # deadline=None: the first call compiles (Numba)

angles_open = st.floats(1e-6, np.pi - 1e-6)  # (0, π): the axis is defined and θ is not wrapped


# ---------------------------------------------------------------------------------------------
# Independent references.
# ---------------------------------------------------------------------------------------------


def hamilton(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Baraff I (4-1): [s1 s2 − v1·v2, s1 v2 + s2 v1 + v1 × v2]."""
    s1, v1, s2, v2 = a[0], a[1:], b[0], b[1:]
    return np.concatenate([[s1 * s2 - v1 @ v2], s1 * v2 + s2 * v1 + np.cross(v1, v2)])



def rot_of_quat(q: np.ndarray) -> np.ndarray:
    """R(q) through Rodrigues: q = [cos(θ/2), sin(θ/2) u]."""
    s = np.linalg.norm(q[1:])
    if s == 0.0:
        return np.eye(3)
    return rodrigues(q[1:], 2.0 * np.arctan2(s, q[0]))





def kq2m(q: np.ndarray) -> np.ndarray:
    out = np.empty((3, 3))
    k.quat_to_matrix(q, out)
    return out


def km2q(R: np.ndarray) -> tuple[np.ndarray, int]:
    out = np.empty(4)
    branch = k.matrix_to_quat(np.ascontiguousarray(R), out)
    return out, int(branch)


def assert_same_rotation(q: np.ndarray, p: np.ndarray, atol: float = 1e-12) -> None:
    """q and −q are the same rotation."""
    sign = 1.0 if q @ p >= 0.0 else -1.0
    np.testing.assert_allclose(q, sign * p, rtol=0, atol=atol)


# ---------------------------------------------------------------------------------------------
# Star operator and quaternion algebra.
# ---------------------------------------------------------------------------------------------


@SETTINGS
@given(vecs, vecs)
def test_skew_times_b_is_cross(a, b):
    S = np.empty((3, 3))
    k.skew(a, S)
    # |a||b| ≤ 300; a few flops each: 1e-12 relative to 100.
    np.testing.assert_allclose(S @ b, np.cross(a, b), rtol=0, atol=1e-10)
    np.testing.assert_array_equal(S, -S.T)  # exactly antisymmetric: entries are copies of ±a


@SETTINGS
@given(quats, quats)
def test_quat_mul_is_baraff_4_1_and_composes_rotations(a, b):
    out = np.empty(4)
    k.quat_mul(a, b, out)
    np.testing.assert_allclose(out, hamilton(a, b), rtol=0, atol=1e-14)  # same 16 products, rounding only
    # R(a b) = R(a) R(b): O(1) entries, rounding of a 3×3 product.
    np.testing.assert_allclose(kq2m(out), kq2m(a) @ kq2m(b), rtol=0, atol=1e-12)
    tup = k.qmul_t(a[0], a[1], a[2], a[3], b[0], b[1], b[2], b[3])
    np.testing.assert_array_equal(np.array(tup), out)  # the array form wraps the tuple form


@SETTINGS
@given(quats, quats)
def test_quat_mul_out_may_alias_input(a, b):
    expected = hamilton(a, b)
    x = a.copy()
    k.quat_mul(x, b, x)
    np.testing.assert_allclose(x, expected, rtol=0, atol=1e-14)  # rounding only
    y = b.copy()
    k.quat_mul(a, y, y)
    np.testing.assert_allclose(y, expected, rtol=0, atol=1e-14)  # rounding only


@SETTINGS
@given(quats)
def test_conjugate_is_inverse(q):
    c = np.empty(4)
    k.quat_conj(q, c)
    np.testing.assert_array_equal(c, [q[0], -q[1], -q[2], -q[3]])
    prod = np.empty(4)
    k.quat_mul(q, c, prod)
    np.testing.assert_allclose(prod, [1.0, 0.0, 0.0, 0.0], rtol=0, atol=1e-14)  # |q|² = 1 to rounding
    k.quat_mul(c, q, prod)
    np.testing.assert_allclose(prod, [1.0, 0.0, 0.0, 0.0], rtol=0, atol=1e-14)
    np.testing.assert_allclose(kq2m(c), kq2m(q).T, rtol=0, atol=1e-14)  # R(q*) = R(q)ᵀ


@SETTINGS
@given(quats, st.floats(1e-3, 1e3))
def test_normalize(q, scale):
    out = np.empty(4)
    k.quat_normalize(scale * q, out)
    np.testing.assert_allclose(out, q, rtol=0, atol=1e-14)  # one sqrt and a division: rounding only
    assert abs(np.linalg.norm(out) - 1.0) < 1e-15  # a few ulp of 1


@SETTINGS
@given(quats, vecs)
def test_quat_rotate_equals_matrix_and_sandwich(q, p):
    out = np.empty(3)
    k.quat_rotate(q, p, out)
    R = kq2m(q)
    np.testing.assert_allclose(out, R @ p, rtol=0, atol=1e-12 * 10)  # |p| ≤ 17: rounding of O(10) values
    sandwich = hamilton(hamilton(q, np.concatenate([[0.0], p])), q * [1, -1, -1, -1])
    np.testing.assert_allclose(out, sandwich[1:], rtol=0, atol=1e-12 * 10)  # q p q⁻¹ (Baraff I sec. 4)
    back = k.qrot_inv_t(q[0], q[1], q[2], q[3], out[0], out[1], out[2])
    np.testing.assert_allclose(np.array(back), p, rtol=0, atol=1e-12 * 10)  # Rᵀ R p = p


@SETTINGS
@given(quats)
def test_quat_to_matrix_is_rodrigues_rotation(q):
    R = kq2m(q)
    np.testing.assert_allclose(R, rot_of_quat(q), rtol=0, atol=1e-12)  # two O(1) formulas, rounding
    np.testing.assert_allclose(R.T @ R, np.eye(3), rtol=0, atol=1e-13)  # orthonormal to rounding
    assert abs(np.linalg.det(R) - 1.0) < 1e-13


# ---------------------------------------------------------------------------------------------
# Matrix → quaternion: round trips and each of the four branches.
# ---------------------------------------------------------------------------------------------


@SETTINGS
@given(quats)
def test_quat_matrix_round_trip(q):
    R = kq2m(q)
    p, branch = km2q(R)
    # The branch's square root is of a number ≥ 1, so the result is as accurate as R: 1e-12.
    assert_same_rotation(p, q)
    np.testing.assert_allclose(kq2m(p), R, rtol=0, atol=1e-12)
    tr = np.trace(R)
    expected_branch = 0 if tr >= 0.0 else 1 + int(np.argmax(np.diag(R)))
    assert branch == expected_branch
    if branch == 0:
        assert p[0] > 0.0  # trace branch: w = ½ sqrt(tr + 1) > 0


@SETTINGS
@given(st.tuples(unit, unit, unit).filter(lambda t: np.linalg.norm(t) > 0.1), st.floats(-np.pi, np.pi))
def test_matrix_quat_round_trip_from_matrix(axis, angle):
    R = rodrigues(np.array(axis), angle)
    p, _ = km2q(R)
    np.testing.assert_allclose(kq2m(p), R, rtol=0, atol=1e-12)  # R → q → R, rounding only
    assert abs(np.linalg.norm(p) - 1.0) < 1e-13


@pytest.mark.parametrize(
    ("axis", "angle", "branch"),
    [
        ((1.0, 2.0, 3.0), np.pi / 3, 0),        # tr = 1 + 2 cos 60° = 2 ≥ 0
        ((0.0, 0.0, 1.0), 2 * np.pi / 3 - 0.01, 0),  # tr just above 0
        ((1.0, 0.2, 0.1), 0.95 * np.pi, 1),     # tr < 0, R[0,0] largest (axis mostly x)
        ((0.1, 1.0, 0.2), 0.95 * np.pi, 2),     # tr < 0, R[1,1] largest
        ((0.2, 0.1, 1.0), 0.95 * np.pi, 3),     # tr < 0, R[2,2] largest
        ((1.0, 0.0, 0.0), np.pi, 1),            # half turn about x: diag(1, −1, −1), w = 0
        ((0.0, 1.0, 0.0), np.pi, 2),            # diag(−1, 1, −1)
        ((0.0, 0.0, 1.0), np.pi, 3),            # diag(−1, −1, 1)
        ((0.0, -1.0, 1.0), np.pi, 2),           # tie R[1,1] = R[2,2] = 0: the y branch (strict >)
    ],
)
def test_matrix_to_quat_each_branch(axis, angle, branch):
    axis = np.array(axis, dtype=float)
    R = rodrigues(axis, angle)
    u = axis / np.linalg.norm(axis)
    expected = np.concatenate([[np.cos(angle / 2)], np.sin(angle / 2) * u])
    p, got_branch = km2q(R)
    assert got_branch == branch
    assert_same_rotation(p, expected, atol=1e-12)  # closed form [cos θ/2, sin θ/2 u]; rounding only
    if branch != 0:
        # The branch's own component is ½ sqrt(1 + 2 R_ii − tr) > 0.
        assert p[branch] > 0.0


def test_matrix_to_quat_identity():
    p, branch = km2q(np.eye(3))
    assert branch == 0
    np.testing.assert_array_equal(p, [1.0, 0.0, 0.0, 0.0])  # exact: sqrt(4)/2 and zero differences


# ---------------------------------------------------------------------------------------------
# Axis-angle.
# ---------------------------------------------------------------------------------------------


@SETTINGS
@given(axes, angles_open)
def test_axis_angle_round_trip(axis, angle):
    q = np.empty(4)
    k.axis_angle_to_quat(axis, angle, q)
    u = axis / np.linalg.norm(axis)
    np.testing.assert_allclose(q, np.concatenate([[np.cos(angle / 2)], np.sin(angle / 2) * u]),
                               rtol=0, atol=1e-15)  # the same closed form: rounding only
    np.testing.assert_allclose(kq2m(q), rodrigues(axis, angle), rtol=0, atol=1e-12)  # rounding only
    a2 = np.empty(3)
    angle2 = k.quat_to_axis_angle(q, a2)
    # atan2 of (sin, cos) of θ/2 and a normalization: relative rounding; θ ≥ 1e-6 keeps the axis defined.
    assert abs(angle2 - angle) < 1e-12
    np.testing.assert_allclose(a2, u, rtol=0, atol=1e-9)  # |v| ≥ 5e-7: axis error ≤ eps/|v| ~ 1e-10


@SETTINGS
@given(quats)
def test_quat_axis_angle_round_trip(q):
    a = np.empty(3)
    angle = k.quat_to_axis_angle(q, a)
    assert 0.0 <= angle <= np.pi
    back = np.empty(4)
    k.axis_angle_to_quat(a, angle, back)
    # O(1) trig, rounding only; below SMALL_ANGLE the documented result is θ = 0, off by |v| ≤ SMALL_ANGLE/2.
    tiny = np.linalg.norm(q[1:]) < 0.5 * SMALL_ANGLE
    assert_same_rotation(back, q, atol=0.5 * SMALL_ANGLE if tiny else 1e-12)


def test_quat_to_axis_angle_identity_and_negative_w():
    a = np.empty(3)
    assert k.quat_to_axis_angle(np.array([1.0, 0.0, 0.0, 0.0]), a) == 0.0
    np.testing.assert_array_equal(a, [1.0, 0.0, 0.0])  # documented axis for θ = 0
    # −q is the same rotation: 270° about z is reported as 90° about −z.
    q = np.array([np.cos(3 * np.pi / 4), 0.0, 0.0, np.sin(3 * np.pi / 4)])
    angle = k.quat_to_axis_angle(q, a)
    assert abs(angle - np.pi / 2) < 1e-14  # rounding of atan2
    np.testing.assert_allclose(a, [0.0, 0.0, -1.0], rtol=0, atol=1e-15)


# ---------------------------------------------------------------------------------------------
# Quaternion rates and the exponential map.
# ---------------------------------------------------------------------------------------------


@SETTINGS
@given(quats, vecs)
def test_quat_derivative_world_is_half_omega_q_and_equals_body_form(q, w):
    dq = np.empty(4)
    k.quat_derivative_world(q, w, dq)
    np.testing.assert_allclose(dq, 0.5 * hamilton(np.concatenate([[0.0], w]), q), rtol=0,
                               atol=1e-13)  # Baraff I (4-2); O(10) values, rounding
    dqb = np.empty(4)
    k.quat_derivative_body(q, kq2m(q).T @ w, dqb)
    np.testing.assert_allclose(dqb, dq, rtol=0, atol=1e-12)  # ω q = q ω_b with ω_b = Rᵀ ω; O(10) values
    assert abs(dq @ q) < 1e-12  # q̇ ⟂ q for a unit q (the norm is constant)


@SETTINGS
@given(quats, axes, st.floats(1e-3, 1.0))
def test_exp_map_is_exact_rotation_and_unit(q, w, h):
    out = np.empty(4)
    k.quat_integrate_exp(q, w, h, out)
    # Exact for constant world ω: rotate by |ω| h about ω after q.
    expected = rodrigues(w, np.linalg.norm(w) * h) @ kq2m(q)
    np.testing.assert_allclose(kq2m(out), expected, rtol=0, atol=1e-12)  # O(1) trig, rounding only
    assert abs(np.linalg.norm(out) - 1.0) < 1e-14  # product of two unit quaternions, a few ulp


@pytest.mark.parametrize("h", [-1e-3, -0.1, -1.0])
def test_exp_map_negative_step_is_exact_backward_rotation(h):
    """A negative step (integrating backwards) is the rotation by |ω| h < 0 about ω, i.e. exp(½ h ω) with
    h < 0 equals exp(½ |h| (−ω)). exp_map_t must not take its Taylor branch for large negative h."""
    q = np.array([0.3, -0.5, 0.7, 0.4])
    q /= np.linalg.norm(q)
    w = np.array([1.0, 2.0, -0.5])
    out, ref = np.empty(4), np.empty(4)
    k.quat_integrate_exp(q, w, h, out)
    k.quat_integrate_exp(q, -w, -h, ref)
    np.testing.assert_allclose(out, ref, rtol=0, atol=1e-14)  # same rotation, rounding only
    assert abs(np.linalg.norm(out) - 1.0) < 1e-14  # product of unit quaternions: a few ulp
    expected = rodrigues(w, np.linalg.norm(w) * h) @ kq2m(q)
    np.testing.assert_allclose(kq2m(out), expected, rtol=0, atol=1e-12)  # O(1) trig, rounding only


def test_exp_map_stays_unit_over_many_steps():
    q = np.array([0.3, -0.5, 0.7, 0.4])
    q /= np.linalg.norm(q)
    w = np.array([3.0, -7.0, 11.0])
    h = 1e-3
    for _ in range(10_000):
        k.quat_integrate_exp(q, w, h, q)
    # Rounding is a random walk of ~1e-16 per step: sqrt(1e4) × 1e-16 ≈ 1e-14; 1e-12 is generous.
    assert abs(np.linalg.norm(q) - 1.0) < 1e-12
    q0 = np.array([0.3, -0.5, 0.7, 0.4])
    q0 /= np.linalg.norm(q0)
    expected = rodrigues(w, np.linalg.norm(w) * h * 10_000) @ kq2m(q0)
    # 1e4 composed steps: rounding ~1e4 × 1e-16 per step at worst.
    np.testing.assert_allclose(kq2m(q), expected, rtol=0, atol=1e-10)


@pytest.mark.parametrize("half_angle", [1e-12, 0.5 * SMALL_ANGLE, 0.999 * SMALL_ANGLE,
                                        1.001 * SMALL_ANGLE, 1e-6])
def test_exp_map_small_angle_branch_matches_closed_form(half_angle):
    w = np.array([1.0, -2.0, 2.0])  # |ω| = 3
    h = 2.0 * half_angle / 3.0
    c, x, y, z = k.exp_map_t(w[0], w[1], w[2], h)
    expected = np.concatenate([[np.cos(half_angle)], np.sin(half_angle) * w / 3.0])
    # Taylor error below SMALL_ANGLE is θ⁴/24 ≤ 1e-33 relative: only rounding remains.
    np.testing.assert_allclose([c, x, y, z], expected, rtol=1e-15, atol=1e-300)


def test_exp_map_zero_omega_is_identity():
    q = np.array([0.5, 0.5, -0.5, 0.5])
    out = np.empty(4)
    k.quat_integrate_exp(q, np.zeros(3), 0.1, out)
    np.testing.assert_array_equal(out, q)  # exp(0) = 1 exactly


@SETTINGS
@given(quats, vecs.filter(lambda w: np.linalg.norm(w) < 5.0))
def test_exp_map_finite_difference_is_half_omega_q(q, w):
    h = 1e-5
    plus, minus = np.empty(4), np.empty(4)
    k.quat_integrate_exp(q, w, h, plus)
    k.quat_integrate_exp(q, w, -h, minus)
    fd = (plus - minus) / (2 * h)
    # Central difference: truncation |ω|³ h² / 24 ≤ 125e-10 / 24 ≈ 5e-10; rounding 1e-16 / h = 1e-11.
    np.testing.assert_allclose(fd, 0.5 * hamilton(np.concatenate([[0.0], w]), q), rtol=0, atol=1e-8)


# ---------------------------------------------------------------------------------------------
# Roll, pitch, yaw (ArtiSynth notes 0.4).
# ---------------------------------------------------------------------------------------------

angle = st.floats(-np.pi, np.pi)


@SETTINGS
@given(angle, st.floats(-np.pi / 2, np.pi / 2), angle)
def test_rpy_to_matrix_is_rz_ry_rx(phi, theta, psi):
    R = np.empty((3, 3))
    k.rpy_to_matrix(phi, theta, psi, R)
    np.testing.assert_allclose(R, Rz(phi) @ Ry(theta) @ Rx(psi), rtol=0, atol=1e-14)  # rounding only


@SETTINGS
@given(angle, st.floats(-np.pi / 2 + 0.05, np.pi / 2 - 0.05))
def test_rpy_rate_matrix_columns_and_inverse(phi, theta):
    H = np.empty((3, 3))
    k.rpy_rate_matrix(phi, theta, H)
    # ω = φ̇ z + θ̇ Rz(φ) y + ψ̇ Rz(φ) Ry(θ) x.
    cols = np.column_stack([[0.0, 0.0, 1.0], Rz(phi) @ [0.0, 1.0, 0.0], Rz(phi) @ Ry(theta) @ [1.0, 0.0, 0.0]])
    np.testing.assert_allclose(H, cols, rtol=0, atol=1e-15)  # same trig products, rounding only
    Hinv = np.empty((3, 3))
    k.rpy_rate_matrix_inv(phi, theta, Hinv)
    # |H⁻¹| ≤ 1/cos θ ≤ 20 at 0.05 rad from the singularity: rounding × 20.
    np.testing.assert_allclose(H @ Hinv, np.eye(3), rtol=0, atol=1e-13)
    np.testing.assert_allclose(Hinv @ H, np.eye(3), rtol=0, atol=1e-13)
