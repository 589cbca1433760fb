"""Mass properties of shapes and compound bodies, and the 6×6 spatial inertia.

Closed forms: box, Baraff I (5-3); cylinder and ellipsoid, the lecture (Modern Robotics 8.2); sphere and
capsule, the standard results (capsule: cylinder plus two hemispheres, each shifted by Steiner).
Convex hulls: exact volume integrals over the boundary triangles (``polyhedron.volume_moments``).
Parallel-axis (Steiner) and rotated inertia: the lecture; spatial inertia and its inverse: ArtiSynth
notes 0.1, written here with the angular part first (twist (ω, v), wrench (m, f)).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from . import _checks
from .conventions import DEFAULT_DENSITY
from .polyhedron import volume_moments
from .rotations import quat_to_matrix
from .shapes import SHAPE_TYPES, Box, Capsule, ConvexHull, Cylinder, Ellipsoid, Sphere


@dataclass(frozen=True, eq=False)
class MassProperties:
    """Mass [kg], centre of mass ``com`` (3,) [m] and ``inertia`` (3, 3) [kg m²] about the COM,
    all in one reference frame (the shape's frame, or the compound's)."""

    mass: float
    com: np.ndarray
    inertia: np.ndarray

    def principal(self) -> tuple[np.ndarray, np.ndarray]:
        """Principal moments (3,) ascending [kg m²] and the rotation R (3, 3) whose columns are the
        principal axes, so ``inertia = R diag(moments) Rᵀ`` with det R = +1 (lecture, principal axes)."""
        moments, R = np.linalg.eigh(0.5 * (self.inertia + self.inertia.T))
        if np.linalg.det(R) < 0.0:
            R[:, 2] = -R[:, 2]
        return moments, R

    def translated(self, d: Any) -> np.ndarray:
        """Inertia (3, 3) about the point ``com + d``, axes unchanged (Steiner / parallel axis, lecture):
        I_q = I_c + m (dᵀd 1 − d dᵀ)."""
        d = _checks.vector3("d", d)
        return self.inertia + self.mass * (float(d @ d) * np.eye(3) - np.outer(d, d))

    def rotated(self, R: Any) -> np.ndarray:
        """Inertia (3, 3) of the body rotated by R: R I Rᵀ (Baraff I (2-39))."""
        R = _checks.rotation_matrix("R", R)
        return R @ self.inertia @ R.T

    def transformed(self, R: Any, p: Any) -> MassProperties:
        """These properties after rotating the body by R and moving its frame origin to p."""
        R = _checks.rotation_matrix("R", R)
        p = _checks.vector3("p", p)
        return MassProperties(self.mass, R @ self.com + p, R @ self.inertia @ R.T)

    def __add__(self, other: MassProperties) -> MassProperties:
        """Combine two parts given in the same frame: masses add, the COM is the mass-weighted mean,
        and each inertia is carried to the new COM by Steiner."""
        if not isinstance(other, MassProperties):
            return NotImplemented
        m = self.mass + other.mass
        com = (self.mass * self.com + other.mass * other.com) / m
        inertia = np.zeros((3, 3))
        for part in (self, other):
            d = part.com - com
            inertia += part.inertia + part.mass * (float(d @ d) * np.eye(3) - np.outer(d, d))
        return MassProperties(m, com, inertia)

    def scaled_to_mass(self, mass: float) -> MassProperties:
        """The same shape with total ``mass`` [kg] in [MASS_MIN, MASS_MAX] (uniform density scaled)."""
        mass = _checks.mass("mass", mass)
        return MassProperties(mass, self.com.copy(), self.inertia * (mass / self.mass))


def _shape_mass_properties(shape: Any, density: float) -> MassProperties:
    zero = np.zeros(3)
    if isinstance(shape, Sphere):
        r = shape.radius
        m = density * 4.0 / 3.0 * np.pi * r**3
        return MassProperties(m, zero, np.eye(3) * 0.4 * m * r * r)
    if isinstance(shape, Box):
        x0, y0, z0 = shape.lx, shape.ly, shape.lz
        m = density * x0 * y0 * z0
        # Baraff I (5-3)
        return MassProperties(m, zero, m / 12.0 * np.diag([y0**2 + z0**2, x0**2 + z0**2, x0**2 + y0**2]))
    if isinstance(shape, Cylinder):
        r, h = shape.radius, shape.height
        m = density * np.pi * r * r * h
        ixx = m * (3.0 * r * r + h * h) / 12.0
        return MassProperties(m, zero, np.diag([ixx, ixx, 0.5 * m * r * r]))
    if isinstance(shape, Ellipsoid):
        a, b, c = shape.a, shape.b, shape.c
        m = density * 4.0 / 3.0 * np.pi * a * b * c
        return MassProperties(m, zero, m / 5.0 * np.diag([b * b + c * c, a * a + c * c, a * a + b * b]))
    if isinstance(shape, Capsule):
        r, L = shape.radius, shape.length
        m_cyl = density * np.pi * r * r * L
        m_caps = density * 4.0 / 3.0 * np.pi * r**3          # both hemispheres
        # Each hemisphere's COM is 3r/8 from its flat face, so L/2 + 3r/8 from the capsule's centre;
        # its inertia about its own COM is (2/5 − 9/64) m_h r² about a transverse axis.
        ixx = m_cyl * (L * L / 12.0 + r * r / 4.0) + m_caps * (0.4 * r * r + L * L / 4.0 + 3.0 * L * r / 8.0)
        izz = 0.5 * m_cyl * r * r + 0.4 * m_caps * r * r
        return MassProperties(m_cyl + m_caps, zero, np.diag([ixx, ixx, izz]))
    if isinstance(shape, ConvexHull):
        volume, first, second = volume_moments(shape.vertices, shape.triangles)
        m = density * volume
        com = first / volume
        # Vertices are already centred, so com ≈ 0; shift the second moment exactly anyway.
        C = density * second - m * np.outer(com, com)
        return MassProperties(m, zero, np.trace(C) * np.eye(3) - C)
    raise TypeError(f"shape must be one of {[t.__name__ for t in SHAPE_TYPES]}, got {type(shape).__name__}")


def compound_parts(shape: Any, name: str = "shape") -> list[tuple[Any, np.ndarray, np.ndarray]]:
    """Normalize a shape or a list of (shape, position, orientation) into a list of parts; the positions [m]
    lie within ±LENGTH_MAX of the compound's origin.

    Returns a list of (shape, position (3,), orientation (4,) unit quaternion) in the compound frame.
    """
    if isinstance(shape, SHAPE_TYPES):
        return [(shape, np.zeros(3), np.array([1.0, 0.0, 0.0, 0.0]))]
    if isinstance(shape, (str, bytes)) or not isinstance(shape, Sequence):
        raise TypeError(f"{name} must be a shape or a list of (shape, position, orientation) tuples, "
                        f"got {type(shape).__name__}")
    if len(shape) == 0:
        raise ValueError(f"{name} must hold at least one part, got an empty list")
    parts = []
    for k, part in enumerate(shape):
        if not isinstance(part, (tuple, list)) or len(part) not in (2, 3):
            raise TypeError(f"{name}[{k}] must be a (shape, position, orientation) tuple, got {part!r}")
        sub = part[0]
        if not isinstance(sub, SHAPE_TYPES):
            raise TypeError(f"{name}[{k}][0] must be a shape, got {type(sub).__name__}")
        pos = _checks.vector3(f"{name}[{k}] position", part[1])
        if float(np.abs(pos).max()) > _checks.LENGTH_MAX:
            raise ValueError(f"{name}[{k}] position must lie within ±{_checks.LENGTH_MAX:g} m of the compound's "
                             f"origin on every axis, got {pos.tolist()}")
        quat = (_checks.quaternion(f"{name}[{k}] orientation", part[2]) if len(part) == 3
                else np.array([1.0, 0.0, 0.0, 0.0]))
        parts.append((sub, pos, quat))
    return parts


def mass_properties(shape: Any, density: float = DEFAULT_DENSITY) -> MassProperties:
    """Mass properties of a shape, or of a compound given as a list of (shape, position, orientation).

    Args:
        shape: a shape (its frame's origin is its COM, so ``com`` is zero), or a list of parts with
            positions [m] and orientations (w, x, y, z) in a common frame.
        density: uniform density [kg/m³] in [DENSITY_MIN, DENSITY_MAX] = [1e-3, 1e5] (``_checks``).

    Returns:
        MassProperties with ``com`` and ``inertia`` in the shape's (or compound's) frame.
    """
    density = _checks.density("density", density)
    total = None
    for sub, pos, quat in compound_parts(shape):
        mp = _shape_mass_properties(sub, density).transformed(quat_to_matrix(quat), pos)
        total = mp if total is None else total + mp
    return total


def spatial_inertia(mass: float, com: Any, inertia: Any) -> np.ndarray:
    """6×6 spatial inertia about the frame origin, angular part first (ArtiSynth notes 0.1).

    With c = ``com`` (3,) [m] in the frame and J = ``inertia`` (3, 3) [kg m²] about the COM:
    M = [[J − m c* c*, m c*], [−m c*, m 1]], so that (h, p) = M (ω, v) and ½ (ω, v)ᵀ M (ω, v) is the
    kinetic energy. M = Tᵀ diag(J, m 1) T with T = [[1, 0], [−c*, 1]] (T maps the twist at the origin
    to the twist at the COM). ``mass`` and ``inertia`` as a body's (``_checks.mass``, ``_checks.inertia``).
    """
    mass = _checks.mass("mass", mass)
    c = _checks.vector3("com", com)
    J = _checks.inertia("inertia", inertia)
    C = _star(c)
    M = np.empty((6, 6))
    M[:3, :3] = J - mass * C @ C
    M[:3, 3:] = mass * C
    M[3:, :3] = -mass * C
    M[3:, 3:] = mass * np.eye(3)
    return M


def spatial_inertia_inv(mass: float, com: Any, inertia: Any) -> np.ndarray:
    """Inverse of ``spatial_inertia`` in closed form (ArtiSynth notes 0.1):
    M⁻¹ = T⁻¹ diag(J⁻¹, 1/m) T⁻ᵀ = [[J⁻¹, −J⁻¹ c*], [c* J⁻¹, 1/m − c* J⁻¹ c*]]."""
    mass = _checks.mass("mass", mass)
    c = _checks.vector3("com", com)
    J = _checks.inertia("inertia", inertia)
    C = _star(c)
    Jinv = np.linalg.inv(J)
    Minv = np.empty((6, 6))
    Minv[:3, :3] = Jinv
    Minv[:3, 3:] = -Jinv @ C
    Minv[3:, :3] = C @ Jinv
    Minv[3:, 3:] = np.eye(3) / mass - C @ Jinv @ C
    return Minv


def _star(a: np.ndarray) -> np.ndarray:
    """Baraff I (2-9) as a NumPy matrix."""
    return np.array([[0.0, -a[2], a[1]], [a[2], 0.0, -a[0]], [-a[1], a[0], 0.0]])
