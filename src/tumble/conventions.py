"""The rules of tumble, stated once.

- SI units everywhere: metres, kilograms, seconds, radians, newtons.
- z is up; the default gravity is (0, 0, -9.81) m/s².
- Quaternions are (w, x, y, z), unit length, and rotate body → world:
  ``p_world = R(q) p_body + x`` (Baraff I (2-1), section 4).
- A body's frame origin is its centre of mass; ``inertia_body`` is about the COM in body axes.
- Linear velocity ``v`` and angular velocity ``w`` (ω) are world-frame vectors (Baraff I 2.3).
- 6-vectors put the angular part first: twist (ω, v), wrench (m, f) (lecture, Modern Robotics ch. 8).
- Contact normals point from body B toward body A (Baraff II 8).
- All state and parameters are float64.

Named tolerances live here, each with the reason for its value.
"""

from __future__ import annotations

from enum import IntEnum

import numpy as np

FLOAT = np.float64
"""dtype of every real-valued array in the engine."""

DEFAULT_GRAVITY = (0.0, 0.0, -9.81)
"""m/s², z up."""

DEFAULT_DENSITY = 1000.0
"""kg/m³ (water), the density used when neither density nor mass is given."""

DEFAULT_FRICTION = 0.5
DEFAULT_RESTITUTION = 0.0

QUAT_NORM_MIN = 1e-12
"""A quaternion shorter than this cannot be normalized: it is rejected as 'zero'. Any longer one is
normalized, as API.md promises; 1e-12 is far below any orientation a user means to give."""

RPY_SINGULAR_COS = 1e-9
"""|cos(pitch)| below this makes the roll-pitch-yaw rate matrix (ArtiSynth notes 0.4, eq. 0.2) singular:
the roll and yaw axes align (gimbal lock). 1e-9 rad from ±90° is where the inverse's entries exceed 1e9."""

SMALL_ANGLE = 1e-8
"""Below this rotation angle (rad), axis-angle and exponential-map formulas switch to their Taylor series;
at 1e-8 the next Taylor term (θ²/48 ≈ 2e-18) is below double-precision rounding."""

HULL_MIN_VOLUME_RATIO = 1e-9
"""A convex hull whose volume is below this fraction of its bounding-box volume is degenerate (flat)."""


JOINT_BALL, JOINT_HINGE, JOINT_SLIDER, JOINT_FIXED, JOINT_FREE = range(5)
"""Joint types: one vocabulary for the World's joints (constraints/joint_rows.py: BALL, HINGE, SLIDER, FIXED) and
a robot tree's (robots/dynamics.py: SPHERICAL, REVOLUTE, PRISMATIC, FIXED and FLOATING, a free base), which
name the same joints as URDF does: a ball joint is a spherical one, a hinge a revolute one, a slider a prismatic
one; only a tree has a free joint. Plain ints, read by the kernels as compile-time constants."""


class GeomType(IntEnum):
    """Integer geometry codes shared with the Numba kernels (``geom_type`` array)."""

    SPHERE = 0
    BOX = 1
    CAPSULE = 2
    CYLINDER = 3
    ELLIPSOID = 4
    CONVEX_HULL = 5
    PLANE = 6


class Integrator(IntEnum):
    """Integrator codes for the time-stepping method; see ``docs/integrators.md`` for the drift table."""

    SPLITTING = 0
    """Symplectic Euler for translation, exact principal-axis splitting for rotation (default)."""
    SYMPLECTIC_EULER = 1
    """Semi-implicit Euler on (v, ω) with the explicit gyroscopic term, exponential-map orientation."""
    IMPLICIT_GYRO = 2
    """Semi-implicit Euler with the gyroscopic term solved implicitly (one Newton step, body frame)."""
    EULER = 3
    """Explicit Euler on Baraff's state Y = (x, q, P, L)."""
    RK4 = 4
    """Classical Runge–Kutta on Y = (x, q, P, L)."""
    ADAPTIVE = 5
    """SciPy ``solve_ivp`` (DOP853, rtol 1e-10) on Y = (x, q, P, L)."""
    IMPLICIT_EULER = 6
    """Linearly implicit Euler with the springs' Jacobians (ArtiSynth notes 0.9.2; integration/implicit.py)."""
    TRAPEZOIDAL = 7
    """Trapezoidal rule with the springs' Jacobians (notes 0.9.3)."""
    BRIDSON_MARINO = 8
    """Bridson–Marino: implicit in velocity, elastic forces explicit (notes 0.9.4)."""


INTEGRATOR_NAMES = {
    "splitting": Integrator.SPLITTING,
    "symplectic_euler": Integrator.SYMPLECTIC_EULER,
    "implicit_gyro": Integrator.IMPLICIT_GYRO,
    "euler": Integrator.EULER,
    "rk4": Integrator.RK4,
    "adaptive": Integrator.ADAPTIVE,
    "implicit_euler": Integrator.IMPLICIT_EULER,
    "trapezoidal": Integrator.TRAPEZOIDAL,
    "bridson_marino": Integrator.BRIDSON_MARINO,
}

INTEGRATOR_FAMILIES = {
    "time-stepping": ("splitting", "symplectic_euler", "implicit_gyro"),
    "ODE integration": ("euler", "rk4", "adaptive"),
    "implicit integration": ("implicit_euler", "trapezoidal", "bridson_marino"),
}
"""The integrators of ``method="timestep"`` by the advance method that steps them (``step.method_for``:
methods/timestepping.py, methods/ode.py, methods/implicit.py). A world's integrator is chosen when it is made;
assigning ``world.integrator`` changes it within its family only (docs/integrators.md). ``method="event"``
integrates its own ODE (``event_ode``) and takes no integrator."""

PARALLEL_MIN_BODIES = 256
"""Worlds with fewer bodies run the serial version of a per-body kernel: below a few hundred bodies the
fork/join of Numba's thread pool (~10 µs, and far more when a core is busy elsewhere) outweighs the work."""

PARALLEL_MIN_PAIRS = 512
"""Narrowphase pairs below which one thread tests them all: a box pair takes ~0.3 µs, so 512 pairs are
~0.15 ms of work, where a parallel region's fork/join costs tens of µs and more when a core is busy."""

PARALLEL_MIN_GEOMS_AABB = 16384
"""The AABB pass takes ~25 ns per shape serially (24 µs for 1000 spheres), so below this many shapes it
costs < 0.4 ms, small next to the narrowphase, while a parallel region can wait a whole scheduler slice
(measured: 3.1 ms for 1000 shapes) when another process holds one of the cores."""

DEFAULT_CONTACT_MARGIN = 0.005
"""m. Pairs closer than this are reported as (speculative) contacts. 5 mm is larger than what a body moves
in one step at the speeds of a settling pile (1 m/s × 1/240 s ≈ 4 mm), so a contact is seen before it
closes, and small against the smallest BENCH.md body (0.2 m), so few far pairs reach the narrowphase."""
