"""Argument checks shared by the public API.

Each check either returns a clean float64 value or raises ``TypeError`` (wrong kind of thing) or
``ValueError`` (right kind, bad value) whose message names the argument and shows the value.
"""

from __future__ import annotations

import numbers
from typing import Any

import numpy as np

from .conventions import FLOAT, QUAT_NORM_MIN

# ---------------------------------------------------------------------------------------------------------------
# The range of the world tumble simulates (docs/conventions.md, "Limits"). Each bound is inclusive.
# ---------------------------------------------------------------------------------------------------------------

LENGTH_MIN = 1e-6
"""[m] The least size of a shape: a radius, side, length, height or semi-axis, and a convex hull's thickness.
Collision's absolute tolerances are ~1e-9 m (``collision/sat.py`` DEPTH_ROUNDING, ``collision/ellipsoid.py``
EPA_TOL), so a 1 µm shape still has its depths to a thousandth of its size."""

LENGTH_MAX = 1e6
"""[m] The largest size of a shape (1000 km), and how far from its frame's origin a hull's points or a
compound's parts may lie. float64 resolves a coordinate of 1e6 m to 2.2e-10 m, below the 1e-9 m depth
tolerance: a 1 µm shape keeps its contacts anywhere in a world this size, and 1e6 / 1e-6 = 1e12 is as wide a
span of sizes as those two figures allow."""

DENSITY_MIN = 1e-3
"""[kg/m³] The least density: a thousandth of air's (1.2 kg/m³), below any gas, foam or aerogel a rigid body
is made of (silica aerogel ~1 kg/m³). A smaller value is a units mistake."""

DENSITY_MAX = 1e5
"""[kg/m³] The largest density: four times osmium's (22,590 kg/m³), the densest element. A larger value is a
units mistake (give ``mass`` for a body of a given weight)."""

MASS_MIN = 1e-15
"""[kg] The least mass of a body, however given (``mass`` or density × volume): a cube of water with side
LENGTH_MIN. The step's tolerances are velocities and its LCPs are scaled, so float64 would carry far lighter
bodies; the bound refuses what is a units mistake or a subnormal (1e-320 kg has 1/M = inf)."""

MASS_MAX = 1e21
"""[kg] The largest mass of a body: a rock body LENGTH_MAX across (Ceres, 940 km, has 9.4e20 kg). With sizes
up to LENGTH_MAX its moments stay below 1e33 kg m², and its momentum and energies stay far from float64's
1.8e308 at any speed below light's."""

INERTIA_MIN = 1e-30
"""[kg m²] The least principal moment: a thousandth of MASS_MIN × LENGTH_MIN², below the least moment of any
body that the mass and length bounds allow (a cube of side LENGTH_MIN and mass MASS_MIN has 1.7e-28 kg m²)."""

INERTIA_MAX = 1e36
"""[kg m²] The largest principal moment: a thousand times MASS_MAX × LENGTH_MAX², above that of any body the
mass and length bounds allow (MASS_MAX in a sphere of radius LENGTH_MAX has 4e32 kg m²)."""

INERTIA_RATIO_MAX = 1e8
"""The largest ratio of a body's principal moments. ω = I⁻¹ L mixes the axes: a rounding of L's large
components (2.2e-16 relative) reaches the weakest axis multiplied by this ratio, 2.2e-8 at 1e8. Plates,
discs and blocks have ratios of at most 2 (I3 <= I1 + I2); only slender rods approach it: a rod's ratio
is ~(length / radius)² / 6, so 1e8 allows a rod 24,000 times as long as its radius."""

CONTACT_STIFFNESS_MIN = 1e-3
"""[N/m] The least contact stiffness (docs/materials.md): a millinewton per metre, far below any solid or foam
(a soft foam is ~1e2 N/m). The compliant row's D = h (θ k h + b) (solvers/sequential_impulse.py ``compliant_row``)
goes as h⁴ k² / (m u₀) (u₀ = 1/16) for a spring the step resolves, and underflows to zero below ~1e-150 N/m at
h = 1/240 s and 1 kg (k = 1e-300 divided by zero in the step); at 1e-3 N/m it stays above 1e-50 for any sub-step
of 1 µs or more and mass up to MASS_MAX."""

CONTACT_STIFFNESS_MAX = 1e15
"""[N/m] The largest contact stiffness: a thousand times steel's contact stiffness (a 1 cm steel ball on a plate
is ~1e9 to 1e10 N/m); beyond it the row's u = h² k / m overflows for light bodies (θ = inf / inf is NaN), and a
rigid contact (None) is what is meant."""

CONTACT_DISSIPATION_MAX = 1e6
"""[s/m] The largest Hunt–Crossley dissipation d (docs/materials.md): d = 3 (1 − e) / (2 v_in) reaches 1e6 s/m only
for impacts slower than 1.5 µm/s. The compliant row's damping h d x k overflowed at d = 1e300 with k = 1e15 (a
non-finite step); at 1e6 it stays finite for any stiffness, depth and step in range."""

ANGULAR_FRICTION_MAX = 1e6
"""[m] The largest rolling or torsional friction (a lever arm, docs/materials.md): LENGTH_MAX. A pair's coefficient
√(μ_a μ_b) of two values beyond ~1e154 overflowed to inf and divided by zero in the step."""

HULL_POINTS_MAX = 200_000
"""The most points a convex hull is built from (``ConvexHull(points)``, a robot file's collision mesh), counted
before any work. Qhull's time grows with the hull's size: 200,000 points that all lie on the hull (a finely
tessellated sphere) took 2.8 s on the shared, loaded 2-core machine (1e6 took 12.7 s, the 655,362 vertices of a
1.3 M-triangle sphere mesh ~8 s), and such a hull is refused anyway for its more than 2048 vertices
(``collision.features.MAX_HULL_VERTICES``); points inside the hull cost little (4e6 in a cube: 2.2 s)."""


FLOAT_MAX = float(np.finfo(np.float64).max)


def _show(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


def real(name: str, value: Any) -> float:
    """A finite real number."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be a real number, got {_show(value)} of type {type(value).__name__}")
    try:
        out = float(value)
    except OverflowError:      # an int or Fraction beyond float64
        out = float("inf")
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


def at_most(name: str, value: Any, high: float, unit: str, zero: bool = False) -> float:
    """A finite real number > 0 (>= 0 if ``zero``) and at most ``high`` [unit]."""
    out = non_negative(name, value) if zero else positive(name, value)
    if out > high:
        raise ValueError(f"{name} must be at most {high:g} {unit}, got {_show(value)}")
    return out


def in_range(name: str, value: Any, low: float, high: float, unit: str) -> float:
    """A finite real number > 0 in [low, high] [unit] (low > 0)."""
    out = positive(name, value)
    if not low <= out <= high:
        raise ValueError(f"{name} must be in [{low:g}, {high:g}] {unit}, got {_show(value)}")
    return out


def length(name: str, value: Any) -> float:
    """A shape's size [m] in [LENGTH_MIN, LENGTH_MAX]."""
    return in_range(name, value, LENGTH_MIN, LENGTH_MAX, "m")


def density(name: str, value: Any) -> float:
    """A density [kg/m³] in [DENSITY_MIN, DENSITY_MAX]."""
    return in_range(name, value, DENSITY_MIN, DENSITY_MAX, "kg/m³")


def mass(name: str, value: Any) -> float:
    """A body's mass [kg] in [MASS_MIN, MASS_MAX]."""
    return in_range(name, value, MASS_MIN, MASS_MAX, "kg")


def array(name: str, value: Any, shape: tuple[int | None, ...], finite: bool = True) -> np.ndarray:
    """A float64 array of the given shape (``None`` matches any length on that axis), finite unless
    ``finite`` is False (the caller then says which entry is not, in its own terms)."""
    if isinstance(value, (str, bytes)) or value is None:
        raise TypeError(f"{name} must be an array of numbers with shape {_shape_text(shape)}, "
                        f"got {_show(value)}")
    try:
        given = np.asarray(value)
        if given.dtype.kind not in "iufO":     # strings, bools, complex numbers
            raise TypeError
        out = np.array(given, dtype=FLOAT)
    except (TypeError, ValueError):
        raise TypeError(f"{name} must be an array of numbers with shape {_shape_text(shape)}, "
                        f"got {_show(value)}") from None
    except OverflowError:      # Python ints beyond float64
        raise ValueError(f"{name} must be finite, got {_show(value)}") from None
    if out.ndim != len(shape) or any(s is not None and s != d for s, d in zip(shape, out.shape, strict=True)):
        raise ValueError(f"{name} must have shape {_shape_text(shape)}, got shape {out.shape}: {_show(value)}")
    if finite and not np.all(np.isfinite(out)):
        raise ValueError(f"{name} must be finite, got {_show(value)}")
    return out


def vector3(name: str, value: Any) -> np.ndarray:
    """A finite 3-vector."""
    return array(name, value, (3,))


def quaternion(name: str, value: Any) -> np.ndarray:
    """A finite non-zero quaternion (w, x, y, z), returned normalized (API.md: not unit → normalized)."""
    scaled, exponent = quaternions_scaled(array(name, value, (4,)))
    norm = float(np.sqrt(scaled @ scaled))
    if np.ldexp(norm, exponent) < QUAT_NORM_MIN:
        raise ValueError(f"{name} must be a non-zero quaternion (w, x, y, z), got {_show(value)}")
    return scaled / norm


def quaternions_scaled(q: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(q · 2⁻ᵉ, e) for finite quaternions q (..., 4): each scaled, exactly, by the power of two that brings its
    largest component into [0.5, 1), so that q · q neither overflows (components ~1e200 would make the norm
    inf and q / |q| zero) nor underflows. Its norm is |q| · 2⁻ᵉ, and normalizing it gives the same bits as
    normalizing q wherever q · q stays in range."""
    _, exponent = np.frexp(np.abs(q).max(axis=-1))
    return np.ldexp(q, -exponent[..., None]), exponent


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
    J = 0.5 * J + 0.5 * J.T
    eig = np.linalg.eigvalsh(J)
    if eig[0] <= 0.0:
        raise ValueError(f"{name} must be positive definite, got eigenvalues {eig.tolist()}")
    # The triangle inequality of principal moments holds for every physical body.
    if eig[2] > eig[0] + eig[1] + 1e-9 * eig[2]:
        raise ValueError(f"{name} violates the triangle inequality of principal moments "
                         f"(I3 <= I1 + I2), got eigenvalues {eig.tolist()}")
    return J


def inertia(name: str, value: Any, spread: bool = True) -> np.ndarray:
    """A body's inertia tensor (3, 3) [kg m²]: symmetric positive definite, its principal moments satisfying
    the triangle inequality, in [INERTIA_MIN, INERTIA_MAX] and, if ``spread``, within INERTIA_RATIO_MAX of one
    another."""
    J = array(name, value, (3, 3))
    largest = float(np.abs(J).max())
    if largest > INERTIA_MAX:
        raise ValueError(f"{name} must have entries of at most {INERTIA_MAX:g} kg m² in size, got one of {largest:g}")
    J = symmetric_positive_definite(name, J)
    principal_moments(name, np.linalg.eigvalsh(J), spread=spread)
    return J


def principal_moments(name: str, moments: np.ndarray, source: str = "", spread: bool = True) -> None:
    """Refuse principal moments (3,) [kg m²] outside [INERTIA_MIN, INERTIA_MAX] or, if ``spread``, spread by
    more than INERTIA_RATIO_MAX; ``source`` says where they came from, for the message."""
    low, high = float(np.min(moments)), float(np.max(moments))
    shown = "[" + ", ".join(f"{m:.6g}" for m in moments) + "]"
    if low < INERTIA_MIN or high > INERTIA_MAX:
        raise ValueError(f"{name} must give principal moments in [{INERTIA_MIN:g}, {INERTIA_MAX:g}] kg m², "
                         f"got {shown}{source}")
    if spread and high > INERTIA_RATIO_MAX * low:
        raise ValueError(f"{name} must give principal moments within a ratio of {INERTIA_RATIO_MAX:g} of one "
                         f"another, got {shown}{source}, a ratio of {high / low:.3g} (a rod reaches "
                         f"{INERTIA_RATIO_MAX:g} at about 24,000 times as long as its radius)")


def material(friction: Any, restitution: Any) -> tuple[float, float]:
    """A Coulomb friction coefficient μ >= 0 and a coefficient of restitution e ∈ [0, 1]."""
    mu = non_negative("friction", friction)
    e = non_negative("restitution", restitution)
    if e > 1.0:
        raise ValueError(f"restitution must be in [0, 1], got {_show(restitution)}")
    return mu, e


def contact_material(rolling_friction: Any, torsional_friction: Any, contact_stiffness: Any,
                     contact_dissipation: Any) -> tuple[float, float, float, float]:
    """The material extras of a body or the ground (docs/materials.md): rolling and torsional friction
    μ_r, μ_s in [0, ANGULAR_FRICTION_MAX] [m], a contact stiffness k in [CONTACT_STIFFNESS_MIN,
    CONTACT_STIFFNESS_MAX] [N/m] or None for a rigid contact (returned as inf), and a dissipation d in [0,
    CONTACT_DISSIPATION_MAX] [s/m]."""
    mu_r = at_most("rolling_friction", rolling_friction, ANGULAR_FRICTION_MAX, "m", zero=True)
    mu_s = at_most("torsional_friction", torsional_friction, ANGULAR_FRICTION_MAX, "m", zero=True)
    if contact_stiffness is None:
        k = float("inf")
    else:
        k = real("contact_stiffness", contact_stiffness)
        if not 1.0 / FLOAT_MAX < k:     # (1/k, the compliance the step uses, must be finite too)
            raise ValueError(f"contact_stiffness must be positive [N/m], or None for a rigid contact, "
                             f"got {_show(contact_stiffness)}")
        if not CONTACT_STIFFNESS_MIN <= k <= CONTACT_STIFFNESS_MAX:
            raise ValueError(f"contact_stiffness must be in [{CONTACT_STIFFNESS_MIN:g}, {CONTACT_STIFFNESS_MAX:g}] "
                             f"N/m (docs/conventions.md \"Limits\"), or None for a rigid contact, got "
                             f"{_show(contact_stiffness)}")
    d = at_most("contact_dissipation", contact_dissipation, CONTACT_DISSIPATION_MAX, "s/m", zero=True)
    return mu_r, mu_s, k, d


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
