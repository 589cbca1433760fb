"""Closed convex polyhedra: the hull of a point set and its exact volume integrals.

The mass properties of a polyhedron of uniform density follow exactly from its boundary triangles:
each outward triangle (a, b, c) and the origin span a signed tetrahedron, and the volume, first and
second moments of the solid are sums of the tetrahedra's closed-form moments (the divergence theorem;
e.g. Tonon, *J. Math. Stat.* 1 (2004), or Eberly, *Polyhedral Mass Properties*). No sampling.
"""

from __future__ import annotations

import numpy as np
from scipy.spatial import ConvexHull as _QHull
from scipy.spatial import QhullError

from .conventions import FLOAT, HULL_MIN_VOLUME_RATIO

# Second moment of the standard tetrahedron (0, e1, e2, e3) per unit |det|: ∫ x xᵀ dV = S / 120.
_TET_SECOND_MOMENT = np.array([[2.0, 1.0, 1.0], [1.0, 2.0, 1.0], [1.0, 1.0, 2.0]]) / 120.0


def hull(points: np.ndarray, name: str = "points") -> tuple[np.ndarray, np.ndarray]:
    """Convex hull of a point set.

    Args:
        points: (k, 3) float64, any frame, k >= 4.
        name: argument name used in error messages.

    Returns:
        (vertices (m, 3), triangles (t, 3) int64): the hull's vertices and its boundary triangles,
        indices into ``vertices``, wound counter-clockwise seen from outside (outward normals).

    Raises:
        ValueError: fewer than 4 points, or all points (nearly) coplanar or collinear.
    """
    if points.shape[0] < 4:
        raise ValueError(f"{name} must hold at least 4 points that are not coplanar, got {points.shape[0]}")
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
    used = np.unique(qh.simplices)
    remap = np.full(points.shape[0], -1, dtype=np.int64)
    remap[used] = np.arange(used.size)
    vertices = points[used].astype(FLOAT)
    triangles = remap[qh.simplices].astype(np.int64)
    # qhull does not orient its simplices: flip each one whose normal disagrees with the facet plane.
    a, b, c = (vertices[triangles[:, i]] for i in range(3))
    flip = np.einsum("ij,ij->i", np.cross(b - a, c - a), qh.equations[:, :3]) < 0.0
    triangles[flip] = triangles[flip][:, [0, 2, 1]]
    return vertices, triangles


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
