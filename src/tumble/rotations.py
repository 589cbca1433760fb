"""Rotations for users: validated NumPy wrappers around the ``math3d`` kernels.

Quaternions are (w, x, y, z) and rotate body → world (Baraff I section 4). Every function takes
array-likes, checks them (``ValueError``/``TypeError`` naming the argument) and returns new float64
arrays. Roll-pitch-yaw follows ArtiSynth notes 0.4: R = Rz(roll) Ry(pitch) Rx(yaw).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from . import _checks
from . import math3d as _k
from .conventions import RPY_SINGULAR_COS


def skew(a: Any) -> np.ndarray:
    """The star matrix a* (3, 3) of Baraff I (2-9): ``skew(a) @ b == cross(a, b)``."""
    out = np.empty((3, 3))
    _k.skew(_checks.vector3("a", a), out)
    return out


def quat_mul(a: Any, b: Any) -> np.ndarray:
    """Quaternion product a b (4,), Baraff I (4-1). R(a b) = R(a) R(b): b is applied first."""
    out = np.empty(4)
    _k.quat_mul(_checks.array("a", a, (4,)), _checks.array("b", b, (4,)), out)
    return out


def quat_conj(q: Any) -> np.ndarray:
    """Conjugate [w, −x, −y, −z]: the inverse rotation of a unit quaternion."""
    out = np.empty(4)
    _k.quat_conj(_checks.array("q", q, (4,)), out)
    return out


def quat_normalize(q: Any) -> np.ndarray:
    """q / |q|; raises ``ValueError`` for a (near-)zero quaternion."""
    return _checks.quaternion("q", q)


def quat_rotate(q: Any, p: Any) -> np.ndarray:
    """R(q) p (3,): the body-frame vector p expressed in the world frame."""
    out = np.empty(3)
    _k.quat_rotate(_checks.quaternion("q", q), _checks.vector3("p", p), out)
    return out


def quat_to_matrix(q: Any) -> np.ndarray:
    """Rotation matrix (3, 3) of a quaternion (normalized first), Baraff I section 4."""
    out = np.empty((3, 3))
    _k.quat_to_matrix(_checks.quaternion("q", q), out)
    return out


def matrix_to_quat(R: Any) -> np.ndarray:
    """Unit quaternion (4,) of a rotation matrix, Baraff I section 4 (four branches)."""
    out = np.empty(4)
    _k.matrix_to_quat(_checks.rotation_matrix("R", R), out)
    return out / np.sqrt(out @ out)  # R is accepted to within 1e-6 of orthonormal: make q exactly unit


def axis_angle_to_quat(axis: Any, angle: float) -> np.ndarray:
    """Quaternion [cos(θ/2), sin(θ/2) u] of a rotation by ``angle`` θ [rad] about ``axis`` (any length > 0)."""
    axis = _checks.vector3("axis", axis)
    if not np.any(axis):
        raise ValueError(f"axis must be non-zero, got {axis.tolist()}")
    out = np.empty(4)
    _k.axis_angle_to_quat(axis, _checks.real("angle", angle), out)
    return out


def quat_to_axis_angle(q: Any) -> tuple[np.ndarray, float]:
    """(unit axis (3,), angle θ ∈ [0, π] rad) of a quaternion; the axis is (1, 0, 0) when θ = 0."""
    axis = np.empty(3)
    angle = _k.quat_to_axis_angle(_checks.quaternion("q", q), axis)
    return axis, float(angle)


def quat_derivative(q: Any, omega: Any, frame: str = "world") -> np.ndarray:
    """q̇ (4,) for angular velocity ω [rad/s]: ½ [0, ω] q with ω in world coordinates (Baraff I (4-2)),
    or ½ q [0, ω] with ω in body coordinates (ArtiSynth notes 0.2)."""
    kernel = _checks.choice("frame", frame, {"world": _k.quat_derivative_world, "body": _k.quat_derivative_body})
    out = np.empty(4)
    kernel(_checks.quaternion("q", q), _checks.vector3("omega", omega), out)
    return out


def quat_integrate(q: Any, omega: Any, dt: float) -> np.ndarray:
    """Exponential-map update exp(½ dt ω) q for a constant world-frame ω [rad/s] over ``dt`` [s]."""
    out = np.empty(4)
    _k.quat_integrate_exp(_checks.quaternion("q", q), _checks.vector3("omega", omega),
                          _checks.real("dt", dt), out)
    return out


def rpy_to_matrix(rpy: Any) -> np.ndarray:
    """R = Rz(roll) Ry(pitch) Rx(yaw) for angles (roll, pitch, yaw) [rad] (ArtiSynth notes 0.4)."""
    phi, theta, psi = _checks.vector3("rpy", rpy)
    out = np.empty((3, 3))
    _k.rpy_to_matrix(phi, theta, psi, out)
    return out


def matrix_to_rpy(R: Any) -> np.ndarray:
    """(roll, pitch, yaw) [rad] of a rotation matrix, pitch ∈ [−π/2, π/2]; inverse of ``rpy_to_matrix``
    away from pitch = ±π/2, where roll and yaw are not separately defined (yaw 0 is returned)."""
    R = _checks.rotation_matrix("R", R)
    theta = float(np.arcsin(np.clip(-R[2, 0], -1.0, 1.0)))
    if abs(np.cos(theta)) < RPY_SINGULAR_COS:
        return np.array([np.arctan2(-R[0, 1], R[1, 1]), theta, 0.0])
    return np.array([np.arctan2(R[1, 0], R[0, 0]), theta, np.arctan2(R[2, 1], R[2, 2])])


def rpy_rates_to_omega(rpy: Any, rpy_rates: Any) -> np.ndarray:
    """World-frame ω (3,) [rad/s] from roll-pitch-yaw rates (ArtiSynth notes 0.4): ω = H(φ, θ) ṙ."""
    phi, theta, _ = _checks.vector3("rpy", rpy)
    H = np.empty((3, 3))
    _k.rpy_rate_matrix(phi, theta, H)
    return H @ _checks.vector3("rpy_rates", rpy_rates)


def omega_to_rpy_rates(rpy: Any, omega: Any) -> np.ndarray:
    """Roll-pitch-yaw rates (3,) [rad/s] from world-frame ω: ṙ = H⁻¹ ω, ArtiSynth notes (0.2).

    Raises:
        ValueError: at the singularity cos(pitch) = 0, where roll and yaw axes align (gimbal lock).
    """
    phi, theta, _ = _checks.vector3("rpy", rpy)
    if abs(np.cos(theta)) < RPY_SINGULAR_COS:
        raise ValueError(f"rpy has pitch {theta!r} rad at the roll-pitch-yaw singularity cos(pitch) = 0: "
                         "roll and yaw rates are not defined there")
    Hinv = np.empty((3, 3))
    _k.rpy_rate_matrix_inv(phi, theta, Hinv)
    return Hinv @ _checks.vector3("omega", omega)
