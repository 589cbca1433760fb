"""Polyhedral collision data of a shape, built once when a body is added (not in a step).

Boxes, convex hulls and cylinders collide as convex polyhedra (Baraff II 7.1): vertices, faces as
counter-clockwise polygons seen from outside with unit outward normals, and the undirected edges.
A cylinder uses a prism over a regular ``CYLINDER_SIDES``-gon inscribed in its circle: SAT on a fine
polygonal approximation, as DESIGN.md allows; its depth is exact on the caps and within
r (1 − cos(π / CYLINDER_SIDES)) on the side.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np

from ..shapes import Box, ConvexHull, Cylinder

CYLINDER_SIDES = 24
"""Sides of the prism that stands for a cylinder in collisions: side depth error ≤ r (1 − cos 7.5°) = 0.0086 r."""

COPLANAR_COS = 1.0 - 1e-9
"""Two hull triangles whose unit normals agree to this cosine (and share a plane) form one face."""


@dataclass(frozen=True, eq=False)
class Polytope:
    """A convex polyhedron in its shape frame.

    vertices (v, 3) [m]; face_vertices (k,) int: the faces' vertex indices, concatenated, each face
    counter-clockwise seen from outside; face_start (f + 1,) int: face j is face_vertices[face_start[j]:
    face_start[j + 1]]; face_normal (f, 3) unit outward; face_offset (f,) [m]: n · p for p on the face;
    edges (e, 2) int: each undirected edge once; edge_faces (e, 2) int: the two faces that meet at it.
    """

    vertices: np.ndarray
    face_vertices: np.ndarray
    face_start: np.ndarray
    face_normal: np.ndarray
    face_offset: np.ndarray
    edges: np.ndarray
    edge_faces: np.ndarray


def _from_faces(vertices: np.ndarray, faces: list[list[int]]) -> Polytope:
    normals, offsets = [], []
    edges: dict[tuple[int, int], list[int]] = {}
    for j, face in enumerate(faces):
        p = vertices[face]
        # Newell's method: robust normal of a planar polygon from all its vertices.
        n = np.cross(p, np.roll(p, -1, axis=0)).sum(axis=0)
        n /= np.linalg.norm(n)
        normals.append(n)
        offsets.append(float(np.mean(p @ n)))
        for a, b in zip(face, face[1:] + face[:1], strict=True):
            edges.setdefault((min(a, b), max(a, b)), []).append(j)
    start = np.concatenate([[0], np.cumsum([len(f) for f in faces])]).astype(np.int64)
    keys = sorted(edges)
    if any(len(edges[k]) != 2 for k in keys):
        raise ValueError("faces do not form a closed polyhedron: an edge does not join exactly two faces")
    poly = Polytope(vertices.astype(np.float64), np.concatenate(faces).astype(np.int64), start,
                    np.array(normals), np.array(offsets), np.array(keys, dtype=np.int64),
                    np.array([edges[k] for k in keys], dtype=np.int64))
    for arr in (poly.vertices, poly.face_vertices, poly.face_start, poly.face_normal, poly.face_offset, poly.edges,
                poly.edge_faces):
        arr.flags.writeable = False  # shared between all bodies of equal shape
    return poly


def box_polytope(half: np.ndarray) -> Polytope:
    """The 8 corners, 6 faces and 12 edges of a box with half extents ``half`` (3,)."""
    signs = np.array([[sx, sy, sz] for sx in (-1, 1) for sy in (-1, 1) for sz in (-1, 1)], dtype=float)
    vertices = signs * half
    # vertex index = 4 (x > 0) + 2 (y > 0) + (z > 0); faces CCW from outside
    faces = [[0, 1, 3, 2], [4, 6, 7, 5],   # −x, +x
             [0, 4, 5, 1], [2, 3, 7, 6],   # −y, +y
             [0, 2, 6, 4], [1, 5, 7, 3]]   # −z, +z
    return _from_faces(vertices, faces)


def prism_polytope(radius: float, half_height: float, sides: int = CYLINDER_SIDES) -> Polytope:
    """A prism along z over a regular ``sides``-gon inscribed in a circle of ``radius``."""
    angle = 2.0 * np.pi * np.arange(sides) / sides
    ring = np.stack([radius * np.cos(angle), radius * np.sin(angle)], axis=1)
    vertices = np.concatenate([np.column_stack([ring, np.full(sides, -half_height)]),
                               np.column_stack([ring, np.full(sides, half_height)])])
    faces = [list(range(sides - 1, -1, -1)), list(range(sides, 2 * sides))]
    faces += [[k, (k + 1) % sides, sides + (k + 1) % sides, sides + k] for k in range(sides)]
    return _from_faces(vertices, faces)


def hull_polytope(hull: ConvexHull) -> Polytope:
    """Merge a hull's coplanar boundary triangles into polygon faces."""
    verts, tris = hull.vertices, hull.triangles
    a, b, c = (verts[tris[:, i]] for i in range(3))
    n = np.cross(b - a, c - a)
    n /= np.linalg.norm(n, axis=1, keepdims=True)
    d = np.einsum("ij,ij->i", n, a)
    scale = max(1.0, float(np.abs(verts).max()))
    group = -np.ones(len(tris), dtype=np.int64)
    planes: list[int] = []
    for t in range(len(tris)):
        for g, rep in enumerate(planes):
            if n[t] @ n[rep] > COPLANAR_COS and abs(d[t] - d[rep]) < 1e-9 * scale:
                group[t] = g
                break
        else:
            group[t] = len(planes)
            planes.append(t)
    faces = []
    for g, rep in enumerate(planes):
        idx = np.unique(tris[group == g])
        # order the face's vertices counter-clockwise about its outward normal
        centre = verts[idx].mean(axis=0)
        u = verts[idx[0]] - centre
        u /= np.linalg.norm(u)
        v = np.cross(n[rep], u)
        rel = verts[idx] - centre
        order = np.argsort(np.arctan2(rel @ v, rel @ u))
        faces.append([int(i) for i in idx[order]])
    return _from_faces(verts, faces)


@functools.lru_cache(maxsize=4096)
def polytope_of(shape: object) -> Polytope | None:
    """The collision polyhedron of a shape, or None for shapes handled in closed form. Shapes are frozen
    values, so equal boxes and cylinders share one (read-only) polytope."""
    if isinstance(shape, Box):
        return box_polytope(shape.half_extents)
    if isinstance(shape, ConvexHull):
        return hull_polytope(shape)
    if isinstance(shape, Cylinder):
        return prism_polytope(shape.radius, 0.5 * shape.height)
    return None


class PolytopeTable:
    """All polytopes of a world packed into flat arrays for the kernels.

    Polytopes are appended as bodies are added (chunks kept in lists, joined once when the arrays are next
    read, so adding n bodies costs O(n)). Arrays: vertices (V, 3) shape frame [m]; face_normal (F, 3),
    face_offset (F,) shape frame; face_vstart (F,): row of the face's first entry in face_verts;
    face_vcount (F,); face_verts (K,): vertex indices local to the polytope; edges (E, 2): local vertex
    pairs; edge_faces (E, 2): local face pairs.
    """

    NAMES = ("vertices", "face_normal", "face_offset", "face_vstart", "face_vcount", "face_verts", "edges",
             "edge_faces")

    def __init__(self) -> None:
        self._chunks: dict[str, list[np.ndarray]] = {name: [] for name in self.NAMES}
        self._joined: dict[str, np.ndarray] | None = None
        self._counts = [0, 0, 0, 0]  # vertices, faces, face_verts, edges so far
        self._rows: dict[int, tuple[int, int, int, int, int, int]] = {}  # id(polytope) -> its rows
        self._kept: list[Polytope] = []  # keeps each stored polytope alive, so its id stays unique
        self.max_vertices = 0
        self.max_faces = 0
        self.max_face_vertices = 0

    def append(self, poly: Polytope) -> tuple[int, int, int, int, int, int]:
        """Store one polytope (once: the same object again gets the same rows); returns
        (vert_start, vert_count, face_start, face_count, edge_start, edge_count)."""
        if id(poly) in self._rows:
            return self._rows[id(poly)]
        nv, nf, ne = poly.vertices.shape[0], poly.face_normal.shape[0], poly.edges.shape[0]
        v0, f0, k0, e0 = self._counts
        sizes = np.diff(poly.face_start)
        for name, chunk in (("vertices", poly.vertices), ("face_normal", poly.face_normal),
                            ("face_offset", poly.face_offset), ("face_vstart", poly.face_start[:-1] + k0),
                            ("face_vcount", sizes), ("face_verts", poly.face_vertices), ("edges", poly.edges),
                            ("edge_faces", poly.edge_faces)):
            self._chunks[name].append(chunk)
        self._counts = [v0 + nv, f0 + nf, k0 + poly.face_vertices.shape[0], e0 + ne]
        self._joined = None
        self.max_vertices = max(self.max_vertices, nv)
        self.max_faces = max(self.max_faces, nf)
        self.max_face_vertices = max(self.max_face_vertices, int(sizes.max()))
        self._rows[id(poly)] = (v0, nv, f0, nf, e0, ne)
        self._kept.append(poly)
        return self._rows[id(poly)]

    def arrays(self) -> dict[str, np.ndarray]:
        """The packed arrays, by the names in ``NAMES``."""
        if self._joined is None:
            empty = {"vertices": (0, 3), "face_normal": (0, 3), "edges": (0, 2), "edge_faces": (0, 2)}
            self._joined = {}
            for name in self.NAMES:
                chunks = self._chunks[name]
                dtype = np.float64 if name in ("vertices", "face_normal", "face_offset") else np.int64
                self._joined[name] = (np.concatenate(chunks).astype(dtype) if chunks
                                      else np.zeros(empty.get(name, (0,)), dtype=dtype))
        return self._joined
