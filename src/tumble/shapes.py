"""Shapes: body-frame geometry only, as frozen values.

Every shape's frame has its origin at the shape's centre of mass (uniform density). Capsules and
cylinders lie along their frame's z axis. ``Box`` takes FULL side lengths (Baraff I 5.1).
A ``ConvexHull`` is re-centred at its centre of mass; ``hull.center`` says where that centre lies in the
frame of the points it was built from. Every size lies in [LENGTH_MIN, LENGTH_MAX] = [1e-6, 1e6] m
(``_checks``; docs/conventions.md, "Limits").
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from . import _checks
from .collision.features import MAX_HULL_VERTICES
from .conventions import GeomType
from .polyhedron import hull, volume_moments


@dataclass(frozen=True)
class Sphere:
    """Sphere of ``radius`` [m] centred at the origin."""

    radius: float
    geom_type = GeomType.SPHERE

    def __post_init__(self) -> None:
        object.__setattr__(self, "radius", _checks.length("radius", self.radius))

    @property
    def size(self) -> tuple[float, float, float]:
        """(radius, 0, 0): the ``geom_size`` row the kernels read."""
        return (self.radius, 0.0, 0.0)


@dataclass(frozen=True)
class Box:
    """Box with FULL side lengths ``lx``, ``ly``, ``lz`` [m] along body x, y, z (Baraff I 5.1)."""

    lx: float
    ly: float
    lz: float
    geom_type = GeomType.BOX

    def __post_init__(self) -> None:
        for name in ("lx", "ly", "lz"):
            object.__setattr__(self, name, _checks.length(name, getattr(self, name)))

    @property
    def half_extents(self) -> np.ndarray:
        """(3,) half side lengths [m]."""
        return 0.5 * np.array([self.lx, self.ly, self.lz])

    @property
    def size(self) -> tuple[float, float, float]:
        """Half extents: the ``geom_size`` row the kernels read."""
        return (0.5 * self.lx, 0.5 * self.ly, 0.5 * self.lz)

    def corners(self) -> np.ndarray:
        """(8, 3) corner points in the box frame [m]."""
        signs = np.array([[sx, sy, sz] for sx in (-1, 1) for sy in (-1, 1) for sz in (-1, 1)], dtype=float)
        return signs * self.half_extents


@dataclass(frozen=True)
class Capsule:
    """Capsule along body z: a cylinder of ``radius`` and ``length`` (the cylindrical part only) [m]
    capped by two hemispheres; total extent along z is ``length + 2 radius``. ``length`` may be below
    LENGTH_MIN (any positive value): the capsule still measures 2 ``radius`` along every axis."""

    radius: float
    length: float
    geom_type = GeomType.CAPSULE

    def __post_init__(self) -> None:
        object.__setattr__(self, "radius", _checks.length("radius", self.radius))
        object.__setattr__(self, "length", _checks.at_most("length", self.length, _checks.LENGTH_MAX, "m"))

    @property
    def size(self) -> tuple[float, float, float]:
        """(radius, half length of the cylindrical part, 0)."""
        return (self.radius, 0.5 * self.length, 0.0)


@dataclass(frozen=True)
class Cylinder:
    """Solid circular cylinder of ``radius`` and ``height`` [m] along body z."""

    radius: float
    height: float
    geom_type = GeomType.CYLINDER

    def __post_init__(self) -> None:
        object.__setattr__(self, "radius", _checks.length("radius", self.radius))
        object.__setattr__(self, "height", _checks.length("height", self.height))

    @property
    def size(self) -> tuple[float, float, float]:
        """(radius, half height, 0)."""
        return (self.radius, 0.5 * self.height, 0.0)


@dataclass(frozen=True)
class Ellipsoid:
    """Solid ellipsoid with semi-axes ``a``, ``b``, ``c`` [m] along body x, y, z."""

    a: float
    b: float
    c: float
    geom_type = GeomType.ELLIPSOID

    def __post_init__(self) -> None:
        for name in ("a", "b", "c"):
            object.__setattr__(self, name, _checks.length(name, getattr(self, name)))

    @property
    def size(self) -> tuple[float, float, float]:
        """Semi-axes (a, b, c)."""
        return (self.a, self.b, self.c)


@dataclass(frozen=True, eq=False)
class ConvexHull:
    """Convex hull of a point set, re-centred at its centre of mass (uniform density).

    Args:
        points: (k, 3) array-like [m], 4 <= k <= HULL_POINTS_MAX (200,000, counted first), every coordinate
            within ±LENGTH_MAX (1e6 m); their hull at most MAX_HULL_VERTICES (2048) vertices (checked as soon
            as qhull returns), at least LENGTH_MIN (1e-6 m) thick, with no two neighbouring faces so nearly
            coplanar that collision would take them as one (``polyhedron.hull``).

    Attributes:
        vertices: (m, 3) hull vertices [m] in the hull frame (origin at the centre of mass).
        triangles: (t, 3) int, outward-wound boundary triangles indexing ``vertices``.
        center: (3,) centre of mass in the frame of the given points [m]; a point p of the input frame
            is ``p - center`` in the hull frame.
        volume: enclosed volume [m³].
    """

    points: Any = field(repr=False)
    vertices: np.ndarray = field(init=False, repr=False)
    triangles: np.ndarray = field(init=False, repr=False)
    center: np.ndarray = field(init=False)
    volume: float = field(init=False)
    geom_type = GeomType.CONVEX_HULL

    def __post_init__(self) -> None:
        pts = _checks.array("points", self.points, (None, 3))
        if pts.size and float(np.abs(pts).max()) > _checks.LENGTH_MAX:
            raise ValueError(f"points must lie within ±{_checks.LENGTH_MAX:g} m of the origin on every axis, "
                             f"got a coordinate {float(np.abs(pts).max()):g}")
        vertices, triangles = hull(pts, "points", MAX_HULL_VERTICES)
        volume, first, _ = volume_moments(vertices, triangles)
        center = first / volume
        vertices = vertices - center
        for arr in (vertices, triangles, center):
            arr.flags.writeable = False
        object.__setattr__(self, "points", pts)
        object.__setattr__(self, "vertices", vertices)
        object.__setattr__(self, "triangles", triangles)
        object.__setattr__(self, "center", center)
        object.__setattr__(self, "volume", volume)

    @property
    def size(self) -> tuple[float, float, float]:
        """Half extents of the hull's bounding box in the hull frame."""
        ext = np.abs(self.vertices).max(axis=0)
        return (float(ext[0]), float(ext[1]), float(ext[2]))


Shape = Sphere | Box | Capsule | Cylinder | Ellipsoid | ConvexHull
SHAPE_TYPES = (Sphere, Box, Capsule, Cylinder, Ellipsoid, ConvexHull)
