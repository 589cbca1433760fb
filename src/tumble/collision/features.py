"""Contact feature ids: one encoder, one bit layout.

A contact's ``feature`` names the pair of geometric features that made it, so that the solver can carry a
contact's impulse from one step to the next (warm starting) when the same features touch again. It must be
unique within a pair and stay the same while the same features touch. Every narrowphase routine builds its
ids here.

Layout of the int64 (bit 63, the sign, is always 0)::

    bits 52–54   family (below)
    bits  0–51   payload, by family

    FACE_CLIP       a point of a clipped face–face manifold (SAT face axis)
                    bit 51 reference face on B · bits 39–50 reference face · bits 26–38 incident face ·
                    bits 13–25 line in · bits 0–12 line out
    EDGE_EDGE       the closest points of two edges (SAT edge axis)
                    bits 26–51 edge of A · bits 0–25 edge of B
    DEEPEST_VERTEX  the deepest vertex of the incident polytope inside the reference one, added when the
                    clipped manifold falls short of the separating-axis overlap (sat.manifold_top_up)
                    bit 51 reference face on B · bits 39–50 reference face · bits 0–25 vertex
    VERTEX          a polytope vertex against a plane · bits 0–25 vertex
    CLOSEST         one closest-point contact (a sphere against a shape, a capsule's point contact):
                    bits 26–51 which kind of feature of B (CLOSEST_FACE, _EDGE, _REGION, _NONE) ·
                    bits 0–25 its index
    CAPSULE_END     an end of a capsule's contact interval: bits 26–51 face of B (0 for a plane or a
                    capsule) · bits 13–25 side plane that clipped the end (0 = none, s + 1 otherwise) ·
                    bits 0–12 end (0 or 1)
    CURVED          the single contact of a strictly convex shape (ellipsoid): payload 0

A clipped point is a vertex of the clipped incident polygon, which is the intersection of two *lines* of the
incident face's plane: the edge before it and the edge after it. Each line is an incident face edge
(``line = k``, the edge from the face's k-th vertex to the next) or a reference side plane
(``line = LINE_SIDE | s``). The pair (line in, line out) is the full history of the point — an incident
vertex is (edge k−1, edge k), an incident edge cut by a side plane is (edge k, side s) or (side s, edge k),
a reference corner is (side s−1, side s) — and within one convex polygon no two vertices share it.

Field limits: faces < 4096, face vertices < 4096, polytope vertices and edges < 2²⁶ (a ConvexHull is
limited to ``MAX_HULL_VERTICES``, which keeps its faces below 4096).
"""

from __future__ import annotations

from ..jit import njit

FACE_CLIP = 1
EDGE_EDGE = 2
DEEPEST_VERTEX = 3
VERTEX = 4
CLOSEST = 5
CAPSULE_END = 6
CURVED = 7

FAMILY_NAMES = {FACE_CLIP: "face-clip", EDGE_EDGE: "edge-edge", DEEPEST_VERTEX: "deepest-vertex",
                VERTEX: "vertex", CLOSEST: "closest", CAPSULE_END: "capsule-end", CURVED: "curved"}

CLOSEST_NONE, CLOSEST_FACE, CLOSEST_EDGE, CLOSEST_REGION = 0, 1, 2, 3
"""Kinds of feature of B for a CLOSEST contact: none (a point, a plane, a segment), a face, an edge, or one
of the 27 regions of a box (faces, edges, corners, inside)."""

LINE_SIDE = 1 << 12
"""Flag of a clip line that is a reference side plane (otherwise an incident face edge)."""

MAX_HULL_VERTICES = 2048
"""A convex hull has at most 2V − 4 faces: 2048 vertices keep every face index below 4096 (12 bits)."""

_FAMILY_SHIFT = 52

POINT_ID = (CLOSEST << _FAMILY_SHIFT) | (CLOSEST_NONE << 26)
"""The id of the one contact of a point-like pair (a sphere against a sphere, a plane or a segment; two
crossing capsule segments): ``closest(CLOSEST_NONE, 0)``, as a constant for the kernels."""

CURVED_ID = CURVED << _FAMILY_SHIFT
"""The id of the single contact of an ellipsoid pair (payload 0), as a constant for the kernels."""
_M12, _M13, _M26 = (1 << 12) - 1, (1 << 13) - 1, (1 << 26) - 1


@njit(cache=True, forceinline=True, refcount=False)
def face_clip(ref_on_b, ref_face, inc_face, line_in, line_out):
    """Id of a clipped face–face point (see the module docstring)."""
    return ((FACE_CLIP << _FAMILY_SHIFT) | (int(ref_on_b) << 51) | ((ref_face & _M12) << 39)
            | ((inc_face & _M13) << 26) | ((line_in & _M13) << 13) | (line_out & _M13))


@njit(cache=True, forceinline=True, refcount=False)
def edge_edge(edge_a, edge_b):
    """Id of an edge–edge contact between edge_a of A and edge_b of B (polytope-local edge indices)."""
    return (EDGE_EDGE << _FAMILY_SHIFT) | ((edge_a & _M26) << 26) | (edge_b & _M26)


@njit(cache=True, forceinline=True, refcount=False)
def deepest_vertex(ref_on_b, ref_face, vertex):
    """Id of the incident polytope's deepest vertex below reference face ``ref_face``."""
    return ((DEEPEST_VERTEX << _FAMILY_SHIFT) | (int(ref_on_b) << 51) | ((ref_face & _M12) << 39)
            | (vertex & _M26))


@njit(cache=True, forceinline=True, refcount=False)
def vertex(v):
    """Id of polytope vertex v against a plane."""
    return (VERTEX << _FAMILY_SHIFT) | (v & _M26)


@njit(cache=True, forceinline=True, refcount=False)
def closest(which, index):
    """Id of a single closest-point contact on feature ``index`` of kind ``which`` (CLOSEST_*) of B."""
    return (CLOSEST << _FAMILY_SHIFT) | ((which & _M26) << 26) | (index & _M26)


@njit(cache=True, forceinline=True, refcount=False)
def capsule_end(face, side, end):
    """Id of end ``end`` (0, 1) of a capsule's contact interval on ``face`` of B, clipped by ``side``."""
    return (CAPSULE_END << _FAMILY_SHIFT) | ((face & _M26) << 26) | ((side & _M13) << 13) | (end & _M13)


def family(feature: int) -> str:
    """The family name of a feature id (for inspection and tests), e.g. ``"face-clip"``."""
    return FAMILY_NAMES.get((int(feature) >> _FAMILY_SHIFT) & 7, "unknown")


def decode_face_clip(feature: int) -> tuple[int, int, int, int, int]:
    """(ref_on_b, ref_face, incident_face, line_in, line_out) of a FACE_CLIP id."""
    f = int(feature)
    return (f >> 51) & 1, (f >> 39) & _M12, (f >> 26) & _M13, (f >> 13) & _M13, f & _M13
