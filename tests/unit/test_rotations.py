"""The validated rotation API ``tumble.rotations`` against closed forms and identities.

References are independent: SciPy's ``Rotation`` (scalar-last, converted here at the boundary),
Rodrigues' formula, elementary rotations Rz Ry Rx (ArtiSynth notes 0.4) and finite differences.
Tolerances: O(1) rotation quantities carry ~1e-16 rounding per flop; 1e-12 leaves wide margin unless a
comment says otherwise.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from rotation_reference import Rx, Ry, Rz, axes, quats, rodrigues, vecs
from scipy.spatial.transform import Rotation

from tumble import _checks
from tumble import rotations as rot
from tumble.conventions import SMALL_ANGLE

SETTINGS = settings(max_examples=60, deadline=None)  # deadline=None: the first call compiles (Numba)

# Roll and yaw strictly inside (−π, π) so atan2 does not wrap; pitch 0.05 rad away from ±π/2, where
# arcsin loses ~eps / cos θ ≈ 5e-15 and H⁻¹ has entries ≤ 1 / cos θ ≈ 20.
roll_yaw = st.floats(-np.pi + 1e-3, np.pi - 1e-3)
pitch = st.floats(-np.pi / 2 + 0.05, np.pi / 2 - 0.05)
rpys = st.tuples(roll_yaw, pitch, roll_yaw).map(lambda t: np.array(t, dtype=float))


def scipy_matrix(q: np.ndarray) -> np.ndarray:
    """R(q) from SciPy, converting (w, x, y, z) → scalar-last."""
    return Rotation.from_quat([q[1], q[2], q[3], q[0]]).as_matrix()






def vee(S: np.ndarray) -> np.ndarray:
    """Inverse of the star operator: the vector of the antisymmetric part of S."""
    A = 0.5 * (S - S.T)
    return np.array([A[2, 1], A[0, 2], A[1, 0]])


def assert_same_rotation(q: np.ndarray, p: np.ndarray, atol: float = 1e-12) -> None:
    sign = 1.0 if q @ p >= 0.0 else -1.0
    np.testing.assert_allclose(q, sign * p, rtol=0, atol=atol)


# ---------------------------------------------------------------------------------------------
# Quaternions.
# ---------------------------------------------------------------------------------------------


@SETTINGS
@given(quats)
def test_quat_to_matrix_matches_scipy(q):
    np.testing.assert_allclose(rot.quat_to_matrix(q), scipy_matrix(q), rtol=0, atol=1e-12)  # rounding


@SETTINGS
@given(quats)
def test_quat_matrix_quat_round_trip(q):
    p = rot.matrix_to_quat(rot.quat_to_matrix(q))
    assert_same_rotation(p, q)  # q → R → q equals ±q; stable square roots, rounding only


@SETTINGS
@given(quats, quats)
def test_composition(a, b):
    Rab = rot.quat_to_matrix(rot.quat_mul(a, b))
    np.testing.assert_allclose(Rab, rot.quat_to_matrix(a) @ rot.quat_to_matrix(b), rtol=0, atol=1e-12)
    # b is applied first, as SciPy's (A * B) composition.
    ref = (Rotation.from_quat([a[1], a[2], a[3], a[0]]) * Rotation.from_quat([b[1], b[2], b[3], b[0]]))
    np.testing.assert_allclose(Rab, ref.as_matrix(), rtol=0, atol=1e-12)


@SETTINGS
@given(quats, vecs)
def test_quat_rotate_equals_matrix(q, p):
    # |p| ≤ 17: rounding of O(10) values.
    np.testing.assert_allclose(rot.quat_rotate(q, p), rot.quat_to_matrix(q) @ p, rtol=0, atol=1e-11)
    np.testing.assert_allclose(rot.quat_rotate(q, p), scipy_matrix(q) @ p, rtol=0, atol=1e-11)


@SETTINGS
@given(quats, vecs)
def test_conjugate_is_inverse(q, p):
    c = rot.quat_conj(q)
    np.testing.assert_allclose(rot.quat_mul(q, c), [1.0, 0.0, 0.0, 0.0], rtol=0, atol=1e-14)  # |q|² = 1
    np.testing.assert_allclose(rot.quat_rotate(c, rot.quat_rotate(q, p)), p, rtol=0, atol=1e-11)  # O(10)


@SETTINGS
@given(quats, st.floats(1e-3, 1e3))
def test_normalization_of_non_unit_input(q, scale):
    np.testing.assert_allclose(rot.quat_normalize(scale * q), q, rtol=0, atol=1e-14)  # rounding only
    # Every quaternion input is normalized first: a scaled q is the same rotation.
    np.testing.assert_allclose(rot.quat_to_matrix(scale * q), rot.quat_to_matrix(q), rtol=0, atol=1e-13)


@SETTINGS
@given(axes, st.floats(1e-6, np.pi - 1e-6))
def test_axis_angle_round_trip(axis, angle):
    q = rot.axis_angle_to_quat(axis, angle)
    np.testing.assert_allclose(rot.quat_to_matrix(q), rodrigues(axis, angle), rtol=0, atol=1e-12)
    a2, angle2 = rot.quat_to_axis_angle(q)
    assert abs(angle2 - angle) < 1e-12  # atan2 of (sin, cos) of θ/2: rounding only
    # |sin(θ/2)| ≥ 5e-7, so the axis's relative rounding is ≤ eps / 5e-7 ≈ 4e-10.
    np.testing.assert_allclose(a2, axis / np.linalg.norm(axis), rtol=0, atol=1e-9)


@SETTINGS
@given(quats)
def test_quat_axis_angle_quat_round_trip(q):
    axis, angle = rot.quat_to_axis_angle(q)
    assert 0.0 <= angle <= np.pi
    # O(1) trig, rounding only; below SMALL_ANGLE the documented result is θ = 0, off by |v| ≤ SMALL_ANGLE/2.
    assert_same_rotation(rot.axis_angle_to_quat(axis, angle), q, atol=0.5 * SMALL_ANGLE
                         if np.linalg.norm(q[1:]) < 0.5 * SMALL_ANGLE else 1e-12)


@SETTINGS
@given(vecs, vecs)
def test_skew_is_cross(a, b):
    np.testing.assert_allclose(rot.skew(a) @ b, np.cross(a, b), rtol=0, atol=1e-10)  # |a||b| ≤ 300


# ---------------------------------------------------------------------------------------------
# Rates and the exponential map.
# ---------------------------------------------------------------------------------------------


@SETTINGS
@given(quats, vecs)
def test_quat_derivative_world_equals_body_with_rotated_omega(q, w):
    R = rot.quat_to_matrix(q)
    world = rot.quat_derivative(q, w, "world")
    body = rot.quat_derivative(q, R.T @ w, "body")
    np.testing.assert_allclose(world, body, rtol=0, atol=1e-12)  # O(10) values, rounding only
    # ½ [0, ω] q, Baraff I (4-2); default frame is world.
    ref = 0.5 * rot.quat_mul(np.concatenate([[0.0], w]), q)
    np.testing.assert_allclose(rot.quat_derivative(q, w), ref, rtol=0, atol=1e-13)


@SETTINGS
@given(quats, vecs.filter(lambda w: np.linalg.norm(w) < 5.0))
def test_quat_integrate_finite_difference_is_half_omega_q(q, w):
    h = 1e-5
    fd = (rot.quat_integrate(q, w, h) - rot.quat_integrate(q, w, -h)) / (2 * h)
    # Central difference: truncation |ω|³ h² / 24 ≤ 5e-10; rounding eps / h ≈ 1e-11.
    np.testing.assert_allclose(fd, rot.quat_derivative(q, w, "world"), rtol=0, atol=1e-8)


@SETTINGS
@given(quats, axes, st.floats(-2.0, 2.0))
def test_quat_integrate_is_exact_rotation_and_unit(q, w, dt):
    # dt may be negative (integrating backwards): ``dt`` is validated only as a finite real.
    q1 = rot.quat_integrate(q, w, dt)
    assert abs(np.linalg.norm(q1) - 1.0) < 1e-14  # product of unit quaternions: a few ulp
    expected = rodrigues(w, np.linalg.norm(w) * dt) @ rot.quat_to_matrix(q)
    np.testing.assert_allclose(rot.quat_to_matrix(q1), expected, rtol=0, atol=1e-12)  # rounding only


def test_quat_integrate_backwards_undoes_forwards():
    q = np.array([0.2, 0.4, -0.1, 0.9])
    q /= np.linalg.norm(q)
    w, dt = np.array([0.5, -1.5, 2.0]), 0.37
    back = rot.quat_integrate(rot.quat_integrate(q, w, dt), w, -dt)
    assert_same_rotation(back, q, atol=1e-13)  # exp(−½ dt ω) exp(½ dt ω) = 1; rounding only


def test_quat_integrate_matches_scipy_rotvec():
    q = np.array([0.2, 0.4, -0.1, 0.9])
    q /= np.linalg.norm(q)
    w, dt = np.array([0.5, -1.5, 2.0]), 0.37
    ref = Rotation.from_rotvec(w * dt) * Rotation.from_quat([q[1], q[2], q[3], q[0]])
    x, y, z, s = ref.as_quat()
    assert_same_rotation(rot.quat_integrate(q, w, dt), np.array([s, x, y, z]))  # rounding only


# ---------------------------------------------------------------------------------------------
# Roll, pitch, yaw (ArtiSynth notes 0.4).
# ---------------------------------------------------------------------------------------------


@SETTINGS
@given(rpys)
def test_rpy_matrix_round_trip(rpy):
    R = rot.rpy_to_matrix(rpy)
    np.testing.assert_allclose(R, Rz(rpy[0]) @ Ry(rpy[1]) @ Rx(rpy[2]), rtol=0, atol=1e-14)  # rounding
    # arcsin at |cos θ| ≥ 0.05 amplifies rounding by ≤ 20: 1e-12 is generous.
    np.testing.assert_allclose(rot.matrix_to_rpy(R), rpy, rtol=0, atol=1e-12)


@SETTINGS
@given(quats)
def test_matrix_rpy_matrix_round_trip(q):
    R = rot.quat_to_matrix(q)
    rpy = rot.matrix_to_rpy(R)
    assert -np.pi / 2 <= rpy[1] <= np.pi / 2
    # Near pitch ±π/2 arcsin(−R20) loses up to sqrt(eps) ≈ 1e-8 in θ, yet R is recovered to that level.
    np.testing.assert_allclose(rot.rpy_to_matrix(rpy), R, rtol=0, atol=1e-7)


@pytest.mark.parametrize("theta", [np.pi / 2, -np.pi / 2])
def test_matrix_to_rpy_at_singularity_reproduces_matrix(theta):
    R = rot.rpy_to_matrix([0.7, theta, 0.3])
    rpy = rot.matrix_to_rpy(R)
    assert rpy[2] == 0.0  # documented: yaw 0 at the singularity
    assert abs(rpy[1] - theta) < 1e-7  # arcsin at ±1 loses sqrt(eps)
    np.testing.assert_allclose(rot.rpy_to_matrix(rpy), R, rtol=0, atol=1e-12)


@SETTINGS
@given(rpys, vecs)
def test_rpy_rate_matrix_times_inverse_is_identity(rpy, rates):
    w = rot.rpy_rates_to_omega(rpy, rates)
    # H⁻¹ has entries ≤ 1 / cos θ ≤ 20 and rates ≤ 17: rounding of O(300) values.
    np.testing.assert_allclose(rot.omega_to_rpy_rates(rpy, w), rates, rtol=0, atol=1e-11)
    back = rot.rpy_rates_to_omega(rpy, rot.omega_to_rpy_rates(rpy, rates))
    np.testing.assert_allclose(back, rates, rtol=0, atol=1e-11)


@SETTINGS
@given(rpys, vecs)
def test_rpy_rates_to_omega_matches_finite_difference(rpy, rates):
    h = 1e-6
    Rdot = (rot.rpy_to_matrix(rpy + h * rates) - rot.rpy_to_matrix(rpy - h * rates)) / (2 * h)
    w_fd = vee(Rdot @ rot.rpy_to_matrix(rpy).T)  # ω* = Ṙ Rᵀ
    # Central difference: truncation |ṙ|³ h² / 6 ≤ 5e3 × 1e-12 ≈ 1e-9; rounding eps / h ≈ 2e-10.
    np.testing.assert_allclose(rot.rpy_rates_to_omega(rpy, rates), w_fd, rtol=0, atol=1e-7)


@pytest.mark.parametrize("theta", [np.pi / 2, -np.pi / 2, np.pi / 2 - 1e-12, -np.pi / 2 + 1e-12])
def test_omega_to_rpy_rates_raises_at_singularity(theta):
    with pytest.raises(ValueError, match=r"^rpy\b"):
        rot.omega_to_rpy_rates([0.3, theta, -0.2], [1.0, 2.0, 3.0])


# ---------------------------------------------------------------------------------------------
# Bad input.
# ---------------------------------------------------------------------------------------------


def test_zero_quaternion_rejected():
    with pytest.raises(ValueError, match=r"^q\b"):
        rot.quat_normalize([0.0, 0.0, 0.0, 0.0])
    with pytest.raises(ValueError, match=r"^q\b"):
        rot.quat_to_matrix([0.0, 0.0, 0.0, 0.0])


def test_matrix_to_quat_is_unit_for_accepted_input():
    """A matrix that passes validation (orthonormal to 4e-7, inside the checked tolerance 1e-6) still
    gives a unit quaternion, as documented ("Unit quaternion (4,)")."""
    R = rodrigues(np.array([1.0, 2.0, 3.0]), 1.0) * (1.0 + 2e-7)  # RᵀR − 1 = 4e-7 · 1
    q = rot.matrix_to_quat(R)
    assert abs(np.linalg.norm(q) - 1.0) < 1e-12  # a normalized result is unit to rounding


def test_rotation_matrix_check_honours_its_tolerance():
    """``_checks.rotation_matrix`` promises RᵀR = 1 "to within tol" (default 1e-6); a deviation of 1e-5
    is ten times that and must be rejected."""
    R = rodrigues(np.array([1.0, 2.0, 3.0]), 1.0) * (1.0 + 5e-6)  # RᵀR − 1 ≈ 1e-5 · 1
    with pytest.raises(ValueError, match=r"^R\b"):
        _checks.rotation_matrix("R", R)


def test_non_rotation_matrix_rejected():
    with pytest.raises(ValueError, match=r"^R\b"):
        rot.matrix_to_quat(np.diag([1.0, 1.0, -1.0]))  # a reflection: det −1
    with pytest.raises(ValueError, match=r"^R\b"):
        rot.matrix_to_rpy(2.0 * np.eye(3))  # not orthonormal
    with pytest.raises(ValueError, match=r"^R\b"):
        rot.matrix_to_quat(np.eye(4))  # wrong shape


def test_bad_vectors_rejected():
    with pytest.raises(ValueError, match=r"^axis\b"):
        rot.axis_angle_to_quat([0.0, 0.0, 0.0], 1.0)
    with pytest.raises(TypeError, match=r"^angle\b"):
        rot.axis_angle_to_quat([1.0, 0.0, 0.0], "1.0")
    with pytest.raises(TypeError, match=r"^a\b"):
        rot.skew("abc")
    with pytest.raises(ValueError, match=r"^omega\b"):
        rot.quat_derivative([1.0, 0.0, 0.0, 0.0], [1.0, np.nan, 0.0])
    with pytest.raises(ValueError, match=r"^p\b"):
        rot.quat_rotate([1.0, 0.0, 0.0, 0.0], [1.0, 2.0])
    with pytest.raises(ValueError, match=r"^dt\b"):
        rot.quat_integrate([1.0, 0.0, 0.0, 0.0], [1.0, 0.0, 0.0], np.inf)


def test_bad_frame_rejected():
    with pytest.raises(ValueError, match=r"^frame\b"):
        rot.quat_derivative([1.0, 0.0, 0.0, 0.0], [1.0, 0.0, 0.0], "space")
    with pytest.raises(TypeError, match=r"^frame\b"):
        rot.quat_derivative([1.0, 0.0, 0.0, 0.0], [1.0, 0.0, 0.0], 0)
