"""Coal (the maintained successor of FCL) as an independent reference for tumble's collision detection.

``coal_shape`` turns a tumble shape into the coal geometry of the SAME solid, in the same body frame
(origin at the centre of mass, capsules and cylinders along body z):

- Sphere, Box (coal takes full sides too), Capsule (coal's ``lz`` is the cylindrical part, as tumble's
  ``length``) and Ellipsoid (semi-axes) map one to one;
- a ConvexHull becomes a ``coal.Convex`` of its re-centred vertices and outward triangles
  (``polytope_of(hull).vertices`` = ``hull.vertices``: the body frame, already shifted by ``hull.center``);
- a Cylinder becomes a ``coal.Convex`` of the 24-gon prism tumble collides with (``polytope_of``), so depths
  and points compare exactly; ``true_cylinder=True`` gives ``coal.Cylinder`` instead. The prism is inscribed:
  it holds the cylinder of radius r cos(π/24) and lies inside the true one, so for any other solid
  sd(true) ≤ sd(prism) ≤ sd(true) + r (1 − cos(π/24))  (``prism_bound``).
- ``Ground(height)`` is the half-space z ≤ height (``world.add_ground``), a ``coal.Halfspace``.

Coal's ``distance`` gives the signed distance (negative: penetration, EPA's minimum translation) with a unit
normal pointing from its FIRST shape to its second. ``signed_distance(A, B)`` returns the normal in
tumble's convention instead: from B toward A. ``point_distance`` is coal's signed distance from a point.
Coal's EPA is not reliable on curved supports when the overlap is deep; ``verified`` checks such an answer
against the exact support functions (``support``, ``overlap_along``).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import coal
import numpy as np
from pair_worlds import rotation
from scipy.optimize import minimize

import tumble as tb
from tumble.collision.polytope import CYLINDER_SIDES, polytope_of

GJK_TOLERANCES = (1e-12, 1e-10, 1e-9, 1e-8, 1e-6)
"""Coal's GJK and EPA stopping tolerances, tried in turn. Exact for polytopes either way; on an ellipsoid the
EPA error falls with the tolerance (1e-12 puts coal's depth within ~1e-10 m of the converged value), but
on deep overlaps of curved shapes EPA cannot reach 1e-12 and coal answers −DBL_MAX: the next tolerance is
then tried (1e-10 m: still within ~1e-8 m)."""

EPA_ITERATIONS = 2000
"""Coal's default (64) stops EPA early on curved shapes; a few hundred suffice for 1e-9 m."""


@dataclass(frozen=True)
class Ground:
    """The ground of ``world.add_ground(height)``: the half-space z ≤ height, normal +z."""

    height: float = 0.0


def _convex(vertices: np.ndarray, triangles) -> coal.Convex:
    points = coal.StdVec_Vec3s()
    for v in np.asarray(vertices, dtype=float):
        points.append(v)
    tris = coal.StdVec_Triangle()
    for a, b, c in triangles:
        tris.append(coal.Triangle(int(a), int(b), int(c)))
    return coal.Convex(points, tris)


def _polytope_triangles(poly) -> list[tuple[int, int, int]]:
    """Fan triangulation of a tumble polytope's (convex, counter-clockwise) faces: outward triangles."""
    tris = []
    for j in range(len(poly.face_start) - 1):
        face = poly.face_vertices[poly.face_start[j]:poly.face_start[j + 1]]
        tris += [(face[0], face[k], face[k + 1]) for k in range(1, len(face) - 1)]
    return tris


@functools.cache
def coal_shape(shape, *, true_cylinder: bool = False):
    """The coal geometry of a tumble shape (or ``Ground``), in the shape's own frame."""
    if isinstance(shape, tb.Sphere):
        return coal.Sphere(shape.radius)
    if isinstance(shape, tb.Box):
        return coal.Box(shape.lx, shape.ly, shape.lz)
    if isinstance(shape, tb.Capsule):
        return coal.Capsule(shape.radius, shape.length)
    if isinstance(shape, tb.Ellipsoid):
        return coal.Ellipsoid(shape.a, shape.b, shape.c)
    if isinstance(shape, tb.Cylinder):
        if true_cylinder:
            return coal.Cylinder(shape.radius, shape.height)
        poly = polytope_of(shape)
        return _convex(poly.vertices, _polytope_triangles(poly))
    if isinstance(shape, tb.ConvexHull):
        return _convex(shape.vertices, shape.triangles)
    if isinstance(shape, Ground):
        return coal.Halfspace(np.array([0.0, 0.0, 1.0]), shape.height)
    raise TypeError(f"no coal shape for {shape!r}")


def prism_bound(shape) -> float:
    """[m] how much further apart the 24-gon prism can be than the true cylinder (0 for other shapes)."""
    if isinstance(shape, tb.Cylinder):
        return shape.radius * (1.0 - np.cos(np.pi / CYLINDER_SIDES))
    return 0.0


def coal_transform(pos, quat) -> coal.Transform3s:
    """Coal pose of a body at ``pos`` with scalar-first orientation ``quat`` (body → world)."""
    return coal.Transform3s(rotation(quat), np.asarray(pos, dtype=float))


_IDENTITY = coal.Transform3s()


def _request(tol: float) -> coal.DistanceRequest:
    req = coal.DistanceRequest()
    req.gjk_tolerance = tol
    req.epa_tolerance = tol
    req.epa_max_iterations = EPA_ITERATIONS
    req.gjk_max_iterations = EPA_ITERATIONS
    return req


_REQUESTS = [_request(tol) for tol in GJK_TOLERANCES]


_NUDGE = 1e-9
"""m. Coal's EPA can fail (it answers −DBL_MAX) when a point lies exactly on an ellipsoid's surface or two
shapes exactly touch; the point (or A) is then nudged by ±1e-9 m along each axis and the six answers
averaged (the linear parts cancel): an error of ~1e-9 m, far below every tolerance of test_differential."""


@dataclass(frozen=True)
class Distance:
    """Coal's answer for a pair A, B: signed distance [m] (negative: penetration depth), unit ``normal``
    from B toward A (tumble's convention), the witness points on A and on B (world), and the GJK/EPA
    tolerance the answer came with (GJK_TOLERANCES)."""

    distance: float
    normal: np.ndarray
    point_a: np.ndarray
    point_b: np.ndarray
    tolerance: float = GJK_TOLERANCES[0]


def _pose(shape, pos, quat) -> coal.Transform3s:
    return _IDENTITY if isinstance(shape, Ground) else coal_transform(pos, quat)


def _valid(d: float) -> bool:
    return bool(np.isfinite(d)) and abs(d) < 1e100


def _pair_distance(shape_a, pos_a, quat_a, shape_b, pos_b, quat_b, true_cylinder) -> Distance:
    geom_a, geom_b = coal_shape(shape_a, true_cylinder=true_cylinder), coal_shape(shape_b, true_cylinder=true_cylinder)
    pose_a, pose_b = _pose(shape_a, pos_a, quat_a), _pose(shape_b, pos_b, quat_b)
    for req, tol in zip(_REQUESTS, GJK_TOLERANCES, strict=True):
        res = coal.DistanceResult()
        dist = coal.distance(geom_a, pose_a, geom_b, pose_b, req, res)
        if _valid(dist):
            return Distance(float(dist), -np.array(res.normal), np.array(res.getNearestPoint1()),
                            np.array(res.getNearestPoint2()), tol)
    return Distance(float(dist), -np.array(res.normal), np.array(res.getNearestPoint1()),
                    np.array(res.getNearestPoint2()), tol)


def signed_distance(shape_a, pos_a, quat_a, shape_b, pos_b=None, quat_b=None, *,
                    true_cylinder: bool = False) -> Distance:
    """Coal's signed distance of A at (pos_a, quat_a) and B at (pos_b, quat_b); B may be a ``Ground``
    (then its pose is ignored). Exactly touching curved shapes can make coal's EPA fail (−DBL_MAX): A is
    then nudged as in ``point_distance`` and the distances averaged."""
    d = _pair_distance(shape_a, pos_a, quat_a, shape_b, pos_b, quat_b, true_cylinder)
    if _valid(d.distance):
        return d
    nudged = [_pair_distance(shape_a, np.asarray(pos_a) + s * _NUDGE * e, quat_a, shape_b, pos_b, quat_b,
                             true_cylinder) for e in np.eye(3) for s in (1, -1)]
    if not all(_valid(n.distance) for n in nudged):
        raise RuntimeError(f"coal gives no signed distance between {shape_a!r} and {shape_b!r}")
    return Distance(float(np.mean([n.distance for n in nudged])), nudged[0].normal, nudged[0].point_a,
                    nudged[0].point_b, max(n.tolerance for n in nudged))


_POINT = coal.Sphere(0.0)


def _point_distance(point, shape, pos, quat) -> float:
    where = coal.Transform3s(np.eye(3), np.asarray(point, dtype=float))
    geom, pose = coal_shape(shape), coal_transform(pos, quat)
    for req in _REQUESTS:
        dist = coal.distance(_POINT, where, geom, pose, req, coal.DistanceResult())
        if _valid(dist):
            break
    return float(dist)


def point_distance(point, shape, pos=None, quat=None) -> float:
    """Coal's signed distance [m] from a world point to a shape at (pos, quat): negative inside."""
    if isinstance(shape, Ground):
        return float(point[2] - shape.height)
    d = _point_distance(point, shape, pos, quat)
    if _valid(d):
        return d
    nudged = [_point_distance(np.asarray(point) + s * _NUDGE * e, shape, pos, quat)
              for e in np.eye(3) for s in (1, -1)]
    if not all(_valid(v) for v in nudged):
        raise RuntimeError(f"coal gives no signed distance from {point!r} to {shape!r}")
    return float(np.mean(nudged))


# ------------------------------------------------------------------------------------------------------------
# Deep overlaps of curved shapes: coal's EPA is not reliable there (box–ellipsoid overlapping by 0.168 m came
# out as 0.682 m, a true cylinder by 0.213 m as 0.363 m: EPA stops on a face of its polytope that is not the
# Minkowski difference's closest). The penetration depth of convex A and B is min over unit n of the overlap
# of their projections on n, h_B(n) + h_A(−n) (h: support function); every n gives an upper bound and the
# minimum is the depth. ``verified`` minimises it from coal's normal, extra seeds and a sampled sphere.

def support(shape, pos, quat, dirs: np.ndarray, *, true_cylinder: bool = False) -> np.ndarray:
    """h(n) = max over the solid of n · x, for world directions ``dirs`` (k, 3) (not necessarily unit)."""
    d = dirs @ rotation(quat)  # body-frame directions (row-vector form of Rᵀ n)
    if isinstance(shape, tb.Sphere):
        h = shape.radius * np.linalg.norm(d, axis=1)
    elif isinstance(shape, tb.Box):
        h = np.abs(d) @ shape.half_extents
    elif isinstance(shape, tb.Capsule):
        h = shape.radius * np.linalg.norm(d, axis=1) + 0.5 * shape.length * np.abs(d[:, 2])
    elif isinstance(shape, tb.Ellipsoid):
        h = np.linalg.norm(d * np.array([shape.a, shape.b, shape.c]), axis=1)
    elif isinstance(shape, tb.Cylinder) and true_cylinder:
        h = shape.radius * np.linalg.norm(d[:, :2], axis=1) + 0.5 * shape.height * np.abs(d[:, 2])
    else:
        h = (d @ polytope_of(shape).vertices.T).max(axis=1)
    return h + dirs @ np.asarray(pos, dtype=float)


def overlap_along(shape_a, pos_a, quat_a, shape_b, pos_b, quat_b, dirs, *, true_cylinder: bool = False):
    """How far A must move along each unit direction in ``dirs`` (k, 3) (from B toward A) to clear B."""
    return (support(shape_b, pos_b, quat_b, dirs, true_cylinder=true_cylinder)
            + support(shape_a, pos_a, quat_a, -dirs, true_cylinder=true_cylinder))


def _fibonacci_sphere(k: int) -> np.ndarray:
    i = np.arange(k) + 0.5
    z = 1.0 - 2.0 * i / k
    phi = np.pi * (1.0 + 5.0 ** 0.5) * i
    r = np.sqrt(1.0 - z * z)
    return np.column_stack([r * np.cos(phi), r * np.sin(phi), z])


_SPHERE = _fibonacci_sphere(4000)


def _refine(f, n0: np.ndarray) -> tuple[float, np.ndarray]:
    """Minimise f(unit n) near n0: Nelder–Mead in the tangent plane, restarted until it stops improving."""
    t1 = np.cross(n0, [1.0, 0.0, 0.0] if abs(n0[0]) < 0.9 else [0.0, 1.0, 0.0])
    t1 /= np.linalg.norm(t1)
    t2 = np.cross(n0, t1)

    def unit(x):
        n = n0 + x[0] * t1 + x[1] * t2
        return n / np.linalg.norm(n)

    best, x = f(n0[None])[0], np.zeros(2)
    for scale in (3e-2, 1e-4, 1e-6):
        res = minimize(lambda x: f(unit(x)[None])[0], x, method="Nelder-Mead",
                       options={"xatol": 1e-12, "fatol": 1e-14, "maxiter": 600,
                                "initial_simplex": [x, x + [scale, 0.0], x + [0.0, scale]]})
        if res.fun < best:
            best, x = float(res.fun), res.x
    return best, unit(x)


def verified(shape_a, pos_a, quat_a, shape_b, pos_b, quat_b, coal_answer: Distance, seeds=(), *,
             true_cylinder: bool = False) -> Distance:
    """Coal's answer for an overlapping pair, replaced by the support-function minimum where that finds a
    smaller overlap than coal's depth (coal's EPA stopped on a non-minimal face). Apart pairs (GJK, reliable)
    are returned as they are."""
    if coal_answer.distance >= 0.0:
        return coal_answer

    def f(dirs):
        return overlap_along(shape_a, pos_a, quat_a, shape_b, pos_b, quat_b, dirs, true_cylinder=true_cylinder)

    values = f(_SPHERE)
    starts = [coal_answer.normal, *seeds, _SPHERE[np.argmin(values)]]
    depth, n = min((_refine(f, np.asarray(s, dtype=float) / np.linalg.norm(s)) for s in starts), key=lambda r: r[0])
    if depth >= -coal_answer.distance:
        return coal_answer
    return Distance(-depth, n, coal_answer.point_a, coal_answer.point_b, coal_answer.tolerance)
