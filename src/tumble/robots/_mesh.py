"""Collision meshes → tumble ``ConvexHull`` shapes, for the URDF and MJCF readers.

A robot file's collision mesh becomes the convex hull of its vertices (or, on request, one hull per part of an
approximate convex decomposition, V-HACD through trimesh). ``ConvexHull`` re-centres its points at the hull's
centre of mass; ``hull_geom`` puts that offset back into the geom's position, so that the hull sits where the
mesh is.

``ConvexHull`` refuses a point set whose hull has two faces from different qhull facets that collision would
take as one plane (``polyhedron.hull``: normals within 4.5e-5 rad and planes within 1e-9 of the hull's size).
Exported meshes often have them: a nearly flat fan whose centre vertex sits 1e-6 m off the plane, quads that
are planar only to the six digits a file prints. Such a hull is retried with its vertices moved by a seeded
pseudo-random amount, from 1e-7 up to at most ``JITTER_STEPS[-1]`` (1e-4) of the mesh's size per coordinate,
which turns the near-coincident planes into distinct ones; the result is the same for the same file every time.
Of the 191 pybullet_data .stl/.obj meshes that bound a volume and have at most 2048 hull vertices, 126 pass
exactly, 52 after moves of at most 1e-5, 11 more at 1e-4, and 2 are refused (a finely tessellated unit sphere).
The cure belongs in ``polyhedron.hull`` (merging nearly coplanar facets); until then this keeps real robot
files readable.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
from scipy.spatial import ConvexHull as QHull

from .._checks import HULL_POINTS_MAX
from ..shapes import ConvexHull
from .description import GeomSpec

JITTER_STEPS = (1e-7, 1e-6, 1e-5, 1e-4)
"""Largest moves of a hull vertex per coordinate, as fractions of the diagonal of the mesh's bounding box, tried
in turn (two seeds each) when the exact hull has two nearly coplanar faces. 1e-4 of a 0.3 m link is 30 µm, below
the accuracy of any collision mesh; 1e-5 suffices for most (module docstring). A fan of thin triangles around an
axis through the centre of mass (a wheel's flat side) needs the larger steps: moving its vertices tilts the
triangles but hardly moves their planes at the centre of mass, where the planes' offsets are compared."""

_FOLD_MESSAGE = "nearly coplanar faces"
"""The part of ``polyhedron.hull``'s message that marks the refusal a small move can cure (and no other)."""


def missing(package: str, purpose: str, extra: bool = True) -> ImportError:
    """The error for an optional dependency that is not installed (``extra``: one of tumble's ``robots`` extra)."""
    how = f'pip install "tumble[robots]" (or pip install {package})' if extra else f"pip install {package}"
    return ImportError(f"{purpose} needs the package {package!r}, which is not installed: {how}")


def convex_hull(points: np.ndarray, where: str) -> ConvexHull:
    """The ``ConvexHull`` of ``points`` (k, 3) [m], retried with jitter (module docstring) if its exact hull has
    nearly coplanar faces.

    Raises:
        ValueError: ``ConvexHull`` refuses the points (too few, flat, over 2048 hull vertices, or nearly coplanar
            faces even after the largest jitter); the message starts with ``where``.
    """
    pts = np.asarray(points, dtype=float)
    try:
        return ConvexHull(pts)
    except ValueError as exc:
        if _FOLD_MESSAGE not in str(exc):
            raise ValueError(f"{where}: {_hint(exc)}") from None
        first = exc
    pts = pts[QHull(pts).vertices]   # only the hull's vertices need moving
    size = float(np.linalg.norm(pts.max(axis=0) - pts.min(axis=0)))
    rng = np.random.default_rng(0)
    for step in JITTER_STEPS:
        for _ in range(2):
            try:
                return ConvexHull(pts + rng.uniform(-step * size, step * size, pts.shape))
            except ValueError as exc:
                if _FOLD_MESSAGE not in str(exc):
                    raise ValueError(f"{where}: {_hint(exc)}") from None
    raise ValueError(f"{where}: {_hint(first)} (also after moving its vertices by up to {JITTER_STEPS[-1]:g} of "
                     f"its size); give a simplified collision mesh or primitive shapes")


def _hint(exc: ValueError) -> str:
    text = str(exc)
    if "vertices, more than" in text:
        text += "; or read the file with convex_decomposition=True"
    return text


def hull_geom(points: np.ndarray, position: np.ndarray, rotation: np.ndarray, where: str) -> GeomSpec:
    """A ``GeomSpec`` for the convex hull of ``points`` (k, 3) [m], given in a frame placed at ``position``
    (3,) [m] with ``rotation`` (3, 3) in the link frame. The hull frame is that frame moved to the hull's centre
    of mass, so the geom sits at ``position + rotation @ hull.center``."""
    hull = convex_hull(points, where)
    return GeomSpec(hull, np.asarray(position, dtype=float) + rotation @ hull.center, np.array(rotation, dtype=float))


def load_parts(file: Path, scale: np.ndarray, decompose: bool, where: str) -> list[np.ndarray]:
    """The vertex sets (k, 3) [m] of a mesh file, scaled per axis by ``scale`` (3,): one set with all the mesh's
    vertices, or, with ``decompose``, one per part of trimesh's V-HACD convex decomposition.

    Raises:
        ImportError: trimesh (or, with ``decompose``, the V-HACD bindings ``vhacdx``) is not installed.
        ValueError: trimesh cannot read the file, it holds no triangles, or more than HULL_POINTS_MAX (200,000)
            vertices (counted before any hull or decomposition is built); the message starts with ``where``.
    """
    try:
        import trimesh
    except ImportError:
        raise missing("trimesh", "reading a mesh file") from None
    try:
        mesh: Any = trimesh.load(str(file), force="mesh")
    except Exception as exc:   # trimesh raises many kinds (ValueError, KeyError, NotImplementedError, ...)
        raise ValueError(f"{where}: trimesh cannot read the mesh file {file}: {type(exc).__name__}: {exc}") from None
    vertices = np.asarray(getattr(mesh, "vertices", np.zeros((0, 3))), dtype=float)
    faces = np.asarray(getattr(mesh, "faces", np.zeros((0, 3))))
    if vertices.ndim != 2 or vertices.shape[0] == 0 or faces.size == 0:
        raise ValueError(f"{where}: the mesh file {file} holds no triangles")
    if vertices.shape[0] > HULL_POINTS_MAX:
        raise ValueError(f"{where}: the mesh file {file} has {vertices.shape[0]} vertices ({faces.shape[0]} "
                         f"triangles), more than the {HULL_POINTS_MAX} a collision mesh may have "
                         f"(docs/conventions.md, \"Limits\"); give a simplified (decimated) collision mesh")
    vertices = vertices * scale
    if not decompose:
        return [vertices]
    try:
        import vhacdx  # noqa: F401  (trimesh's convex_decomposition imports it)
    except ImportError:
        raise missing("vhacdx", "convex_decomposition=True (V-HACD)") from None
    parts = trimesh.decomposition.convex_decomposition(trimesh.Trimesh(vertices, faces, process=False))
    return [np.asarray(part["vertices"], dtype=float) for part in parts]
