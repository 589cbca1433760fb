"""Argument checks shared by the public API.

Each check either returns a clean float64 value or raises ``TypeError`` (wrong kind of thing) or
``ValueError`` (right kind, bad value) whose message names the argument and shows the value.
"""

from __future__ import annotations

import numbers
from typing import Any

import numpy as np

from .conventions import FLOAT, QUAT_NORM_MIN


def _show(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


def real(name: str, value: Any) -> float:
    """A finite real number."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be a real number, got {_show(value)} of type {type(value).__name__}")
    out = float(value)
    if not np.isfinite(out):
        raise ValueError(f"{name} must be finite, got {_show(value)}")
    return out


def positive(name: str, value: Any) -> float:
    """A finite real number > 0."""
    out = real(name, value)
    if out <= 0.0:
        raise ValueError(f"{name} must be positive, got {_show(value)}")
    return out


def non_negative(name: str, value: Any) -> float:
    """A finite real number >= 0."""
    out = real(name, value)
    if out < 0.0:
        raise ValueError(f"{name} must be non-negative, got {_show(value)}")
    return out


def array(name: str, value: Any, shape: tuple[int | None, ...]) -> np.ndarray:
    """A finite float64 array of the given shape (``None`` matches any length on that axis)."""
    if isinstance(value, (str, bytes)) or value is None:
        raise TypeError(f"{name} must be an array of numbers with shape {_shape_text(shape)}, "
                        f"got {_show(value)}")
    try:
        out = np.array(value, dtype=FLOAT)
    except (TypeError, ValueError):
        raise TypeError(f"{name} must be an array of numbers with shape {_shape_text(shape)}, "
                        f"got {_show(value)}") from None
    if out.ndim != len(shape) or any(s is not None and s != d for s, d in zip(shape, out.shape, strict=True)):
        raise ValueError(f"{name} must have shape {_shape_text(shape)}, got shape {out.shape}: {_show(value)}")
    if not np.all(np.isfinite(out)):
        raise ValueError(f"{name} must be finite, got {_show(value)}")
    return out


def vector3(name: str, value: Any) -> np.ndarray:
    """A finite 3-vector."""
    return array(name, value, (3,))


def quaternion(name: str, value: Any) -> np.ndarray:
    """A finite non-zero quaternion (w, x, y, z), returned normalized (API.md: not unit → normalized)."""
    q = array(name, value, (4,))
    norm = float(np.sqrt(q @ q))
    if norm < QUAT_NORM_MIN:
        raise ValueError(f"{name} must be a non-zero quaternion (w, x, y, z), got {_show(value)}")
    return q / norm


def rotation_matrix(name: str, value: Any, tol: float = 1e-6) -> np.ndarray:
    """A proper rotation matrix (RᵀR = 1 and det R = +1 to within ``tol``)."""
    R = array(name, value, (3, 3))
    if not np.allclose(R.T @ R, np.eye(3), rtol=0.0, atol=tol) or np.linalg.det(R) < 0.0:
        raise ValueError(f"{name} must be a proper rotation matrix (orthonormal, det +1), got {_show(value)}")
    return R


def symmetric_positive_definite(name: str, value: Any) -> np.ndarray:
    """A symmetric positive-definite 3×3 matrix (an inertia tensor)."""
    J = array(name, value, (3, 3))
    if not np.allclose(J, J.T, rtol=1e-9, atol=1e-12 * max(1.0, float(np.abs(J).max()))):
        raise ValueError(f"{name} must be symmetric, got {_show(value)}")
    J = 0.5 * (J + J.T)
    eig = np.linalg.eigvalsh(J)
    if eig[0] <= 0.0:
        raise ValueError(f"{name} must be positive definite, got eigenvalues {eig.tolist()}")
    # The triangle inequality of principal moments holds for every physical body.
    if eig[2] > eig[0] + eig[1] + 1e-9 * eig[2]:
        raise ValueError(f"{name} violates the triangle inequality of principal moments "
                         f"(I3 <= I1 + I2), got eigenvalues {eig.tolist()}")
    return J


def material(friction: Any, restitution: Any) -> tuple[float, float]:
    """A Coulomb friction coefficient μ >= 0 and a coefficient of restitution e ∈ [0, 1]."""
    mu = non_negative("friction", friction)
    e = non_negative("restitution", restitution)
    if e > 1.0:
        raise ValueError(f"restitution must be in [0, 1], got {_show(restitution)}")
    return mu, e


def bits32(name: str, value: Any) -> int:
    """An integer bit field in [0, 2³² − 1]."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise TypeError(f"{name} must be an integer bit field, got {_show(value)}")
    if not 0 <= int(value) <= 0xFFFFFFFF:
        raise ValueError(f"{name} must fit in 32 bits (0 to 0xFFFFFFFF), got {_show(value)}")
    return int(value)


def positive_int(name: str, value: Any) -> int:
    """An integer >= 1 (bool is not an integer here)."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise TypeError(f"{name} must be an integer >= 1, got {_show(value)}")
    if int(value) < 1:
        raise ValueError(f"{name} must be >= 1, got {_show(value)}")
    return int(value)


def choice(name: str, value: Any, options: dict[str, Any]) -> Any:
    """One of a fixed set of string options."""
    if not isinstance(value, str):
        raise TypeError(f"{name} must be a string, one of {sorted(options)}, got {_show(value)}")
    if value not in options:
        raise ValueError(f"{name} must be one of {sorted(options)}, got {_show(value)}")
    return options[value]


def _shape_text(shape: tuple[int | None, ...]) -> str:
    return "(" + ", ".join("k" if s is None else str(s) for s in shape) + ("," if len(shape) == 1 else "") + ")"
