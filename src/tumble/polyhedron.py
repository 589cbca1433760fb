"""Closed convex polyhedra: the hull of a point set and its exact volume integrals.

The mass properties of a polyhedron of uniform density follow exactly from its boundary triangles:
each outward triangle (a, b, c) and the origin span a signed tetrahedron, and the volume, first and
second moments of the solid are sums of the tetrahedra's closed-form moments (the divergence theorem;
e.g. Tonon, *J. Math. Stat.* 1 (2004), or Eberly, *Polyhedral Mass Properties*). No sampling.
"""

from __future__ import annotations

import numpy as np
from scipy.spatial import ConvexHull as _QHull
from scipy.spatial import QhullError, cKDTree

from ._checks import HULL_POINTS_MAX, LENGTH_MIN
from .conventions import FLOAT, HULL_MIN_VOLUME_RATIO

# Second moment of the standard tetrahedron (0, e1, e2, e3) per unit |det|: ∫ x xᵀ dV = S / 120.
_TET_SECOND_MOMENT = np.array([[2.0, 1.0, 1.0], [1.0, 2.0, 1.0], [1.0, 1.0, 2.0]]) / 120.0


def hull(points: np.ndarray, name: str = "points", max_vertices: int | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Convex hull of a point set.

    Args:
        points: (k, 3) float64, any frame, 4 <= k <= HULL_POINTS_MAX (200,000).
        name: argument name used in error messages.
        max_vertices: the most vertices the hull may have (None: any), checked as soon as qhull returns, before
            the checks below, whose work grows as vertices × faces.

    Returns:
        (vertices (m, 3), triangles (t, 3) int64): the hull's vertices and its boundary triangles,
        indices into ``vertices``, wound counter-clockwise seen from outside (outward normals).

    Raises:
        ValueError: fewer than 4 or more than HULL_POINTS_MAX points; more than ``max_vertices`` hull vertices;
            all points (nearly) coplanar or collinear: the hull thinner than
            LENGTH_MIN (1e-6 m) across some face; or two faces of different qhull facets so nearly coplanar
            that collision would take them as one plane (``collision/polytope.py``: normals within
            COPLANAR_COS, 4.5e-5 rad, offsets within 1e-9 of the hull's size): such a hull has no consistent
            polygon faces for the contact tests.
    """
    if points.shape[0] < 4:
        raise ValueError(f"{name} must hold at least 4 points that are not coplanar, got {points.shape[0]}")
    if points.shape[0] > HULL_POINTS_MAX:
        raise ValueError(f"{name} hold {points.shape[0]} points, more than the {HULL_POINTS_MAX} a convex hull is "
                         f"built from (docs/conventions.md, \"Limits\"); simplify them (e.g. decimate the mesh)")
    extent = points.max(axis=0) - points.min(axis=0)
    box_volume = float(np.prod(extent))
    try:
        qh = _QHull(points)
    except QhullError:
        raise ValueError(f"{name} are degenerate: all points are coplanar or collinear, "
                         f"so they bound no volume") from None
    if box_volume <= 0.0 or qh.volume < HULL_MIN_VOLUME_RATIO * box_volume:
        raise ValueError(f"{name} are degenerate: their hull has volume {qh.volume:.3g} m³, "
                         f"flat within {HULL_MIN_VOLUME_RATIO:g} of its bounding box")
    if max_vertices is not None and qh.vertices.size > max_vertices:
        raise ValueError(f"{name}: the hull has {qh.vertices.size} vertices, more than the {max_vertices} that "
                         f"contact feature ids can name; simplify it (e.g. decimate the mesh) before making a "
                         f"ConvexHull")
    used = np.unique(qh.simplices)
    thickness = _thickness(points[used], qh.equations)
    if thickness < LENGTH_MIN:
        raise ValueError(f"{name} are nearly coplanar: their hull is {thickness:.3g} m thick, less than the "
                         f"{LENGTH_MIN:g} m every shape must measure")
    remap = np.full(points.shape[0], -1, dtype=np.int64)
    remap[used] = np.arange(used.size)
    vertices = points[used].astype(FLOAT)
    triangles = remap[qh.simplices].astype(np.int64)
    # qhull does not orient its simplices: flip each one whose normal disagrees with the facet plane.
    a, b, c = (vertices[triangles[:, i]] for i in range(3))
    flip = np.einsum("ij,ij->i", np.cross(b - a, c - a), qh.equations[:, :3]) < 0.0
    triangles[flip] = triangles[flip][:, [0, 2, 1]]
    _refuse_merged_faces(vertices, triangles, qh.equations, thickness, name)
    return vertices, triangles


def _thickness(vertices: np.ndarray, equations: np.ndarray) -> float:
    """[m] The hull's least width across a face: min over faces of the deepest vertex below the face's plane
    (qhull's ``equations``: unit outward normal n and offset c, n · p + c <= 0 inside)."""
    least = np.inf
    for start in range(0, equations.shape[0], 256):   # (vertices, 256) at a time: bounded memory
        eq = equations[start:start + 256]
        depth = -(vertices @ eq[:, :3].T + eq[:, 3])
        least = min(least, float(depth.max(axis=0).min()))
    return least


_FACE_OFFSET = 1e-9
"""Two face planes whose offsets from the hull's centre of mass differ by less than this times the hull's size
(at least 1 m), with normals within COPLANAR_COS, are one plane to ``collision.polytope.hull_polytope`` (its
``1e-9 * scale``)."""


def _refuse_merged_faces(vertices: np.ndarray, triangles: np.ndarray, equations: np.ndarray, thickness: float,
                         name: str) -> None:
    """ValueError unless ``collision.polytope.hull_polytope`` will group the triangles into exactly qhull's
    facets (the triangles that share an equation). Two triangles of different facets whose planes agree within
    its tolerances (normals within COPLANAR_COS, offsets within _FACE_OFFSET of the hull's size) would be taken
    as one face, whose polygon then has edges that no neighbouring face shares. The planes are computed as that
    function computes them: from the outward triangles, in the hull frame (origin at the centre of mass)."""
    from .collision.polytope import COPLANAR_COS  # collision.polytope imports shapes, which imports this

    volume, first, _ = volume_moments(vertices, triangles)
    verts = vertices - first / volume
    a, b, c = (verts[triangles[:, i]] for i in range(3))
    normal = np.cross(b - a, c - a)
    normal /= np.linalg.norm(normal, axis=1, keepdims=True)
    offset = np.einsum("ij,ij->i", normal, a)
    scale = max(1.0, float(np.abs(verts).max()))
    facet = np.unique(equations, axis=0, return_inverse=True)[1].ravel()
    chord = np.sqrt(2.0 * (1.0 - COPLANAR_COS)) * (1.0 + 1e-6)   # |n1 − n2| at the cosine COPLANAR_COS
    i, j = cKDTree(normal).query_pairs(chord, output_type="ndarray").T
    cos = np.einsum("ij,ij->i", normal[i], normal[j])
    gap = np.abs(offset[i] - offset[j])
    merged = np.flatnonzero((facet[i] != facet[j]) & (cos > COPLANAR_COS) & (gap < _FACE_OFFSET * scale))
    if merged.size:
        k = merged[0]
        angle = float(np.arctan2(np.linalg.norm(np.cross(normal[i[k]], normal[j[k]])), cos[k]))
        raise ValueError(f"{name} give a hull with two nearly coplanar faces: they meet at {angle:.3g} rad with "
                         f"planes {gap[k]:.3g} m apart, within the {np.arccos(COPLANAR_COS):.2g} rad and "
                         f"{_FACE_OFFSET * scale:.2g} m at which collision takes faces as one plane (the hull is "
                         f"{thickness:.3g} m thick); move the points that make the fold onto a common plane or "
                         f"further off it")


def volume_moments(vertices: np.ndarray, triangles: np.ndarray) -> tuple[float, np.ndarray, np.ndarray]:
    """Exact volume, first moment and second moment of a closed polyhedron.

    Args:
        vertices: (m, 3) float64.
        triangles: (t, 3) int, outward-wound boundary triangles.

    Returns:
        (V [m³], first moment ∫ x dV (3,) [m⁴], second moment ∫ x xᵀ dV (3, 3) [m⁵]), about the origin
        of the vertices' frame.
    """
    a, b, c = (vertices[triangles[:, i]] for i in range(3))
    det = np.einsum("ij,ij->i", a, np.cross(b, c))           # 6 × signed tetra volume
    volume = det.sum() / 6.0
    first = (det[:, None] * (a + b + c)).sum(axis=0) / 24.0
    # Tetra (0, a, b, c) = A·(standard tetra) with A = [a b c]: ∫ x xᵀ = det · A S Aᵀ / 120.
    A = np.stack([a, b, c], axis=2)                          # (t, 3, 3), columns a, b, c
    second = np.einsum("t,tij,jk,tlk->il", det, A, _TET_SECOND_MOMENT, A)
    return float(volume), first, second
