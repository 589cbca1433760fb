"""Twists, wrenches and the adjoint transform (lecture: Modern Robotics ch. 8 notation).

A twist is (ω, v) and a wrench is (m, f), angular part first. A frame {b} seen from {a} is given by
(R, p): R rotates {b} coordinates into {a} coordinates and p is {b}'s origin in {a}.
    V_a = [Ad_T] V_b,   [Ad_T] = [[R, 0], [p* R, R]]
    F_b = [Ad_T]ᵀ F_a  (power ⟨F, V⟩ is the same in both frames)
For a rigid body, the world-frame pair (ω, v_com) of tumble converts to a body twist by (R, x).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from . import _checks
from .rotations import skew


def adjoint(R: Any, p: Any) -> np.ndarray:
    """[Ad_T] (6, 6) of the transform T = (R, p): maps twists in {b} to twists in {a}."""
    R = _checks.rotation_matrix("R", R)
    p = _checks.vector3("p", p)
    Ad = np.zeros((6, 6))
    Ad[:3, :3] = R
    Ad[3:, 3:] = R
    Ad[3:, :3] = skew(p) @ R
    return Ad


def transform_twist(R: Any, p: Any, twist: Any) -> np.ndarray:
    """V_a = [Ad_T] V_b for a twist (ω, v) (6,) given in {b}."""
    return adjoint(R, p) @ _checks.array("twist", twist, (6,))


def transform_wrench(R: Any, p: Any, wrench: Any) -> np.ndarray:
    """F_a = [Ad_T⁻¹]ᵀ F_b for a wrench (m, f) (6,) given in {b}: f_a = R f_b, m_a = R m_b + p × f_a."""
    R = _checks.rotation_matrix("R", R)
    p = _checks.vector3("p", p)
    F = _checks.array("wrench", wrench, (6,))
    f_a = R @ F[3:]
    return np.concatenate([R @ F[:3] + np.cross(p, f_a), f_a])


def body_twist(R: Any, omega: Any, v_com: Any) -> np.ndarray:
    """Body twist (ω_b, v_b) (6,) of a body with orientation R whose COM moves at ``v_com`` [m/s] with
    world angular velocity ``omega`` [rad/s] — the lecture's V_b at the COM frame."""
    R = _checks.rotation_matrix("R", R)
    return np.concatenate([R.T @ _checks.vector3("omega", omega), R.T @ _checks.vector3("v_com", v_com)])


def spatial_twist(R: Any, x: Any, omega: Any, v_com: Any) -> np.ndarray:
    """Spatial (world) twist (ω, v_s) (6,): v_s = v_com − ω × x is the velocity of the body point at
    the world origin. Equals ``transform_twist(R, x, body_twist(...))``."""
    x = _checks.vector3("x", x)
    omega = _checks.vector3("omega", omega)
    return np.concatenate([omega, _checks.vector3("v_com", v_com) - np.cross(omega, x)])
