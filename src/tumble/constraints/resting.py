"""Contacts of the event-driven method: impulses (Baraff II 8) and resting-contact forces (Baraff II 9, App. D).

The contacts of one state come from the collision detection's buffer, in its pair order, as detected: the
normal n points from body B toward body A (Baraff II 8), the point p is midway between the surfaces, the
depth is the penetration (negative for a gap). A contact's relative normal velocity is

    v_rel = n · (ṗ_a − ṗ_b),   ṗ = v + ω × (p − x)                                   (8-1, 8-2)

which is J u for the stacked body velocities u = (v_0, ω_0, v_1, ω_1, …) (6 n,) and the row
J = (… n, r_a × n … −n, −(r_b × n) …) of the contact Jacobian (seed 004's D). Then:

* a collision impulse j n at p gives Δv_rel = (J M⁻¹ Jᵀ) j: the denominator of (8-18);
* a resting-contact force f n gives d̈ = A f + b with A = J M⁻¹ Jᵀ (Appendix D's a_ij, written as a product)
  and b (Appendix D's ``compute_b_vector``): the external loads' and the velocity terms' share of
  n · (p̈_a − p̈_b), plus 2 ṅ · (ṗ_a − ṗ_b) (9-4);
* ṅ (``compute_ndot``) depends on what the normal is attached to: the face of a vertex–face contact turns
  with its body, ṅ = ω × n; an edge–edge normal n = e_a × e_b / |e_a × e_b| turns with both edges; a
  sphere's normal is the direction from the touching point of the other body to its centre.

Fixed bodies have zero inverse mass and inertia (Baraff II 8): their rows of M⁻¹ vanish and nothing else
needs to know they are fixed.

Shapes: c contacts, n bodies. body_a, body_b (c,) int; point, normal (c, 3) world; inv_mass (n,);
inv_inertia (n, 3, 3) world; v, w (n, 3).
"""

from __future__ import annotations

import numpy as np

from ..collision import features as ft
from ..collision.detect import Contacts
from ..conventions import GeomType
from ..jit import njit
from ..math3d import quat_to_matrices

_FAMILY_SHIFT = 52
_REFERENCE_ON_B = 1 << 51
_EDGE_MASK = (1 << 26) - 1


SMALL_LOOKUP = 4096
"""``lookup`` compares every code with every entry when k · m is at most this (the event method's sets of a
few contacts: a sort of records costs far more), and sorts the table otherwise."""


def lookup(codes: np.ndarray, table: np.ndarray) -> np.ndarray:
    """For each of ``codes`` (k,) its index in ``table`` (m,) (same dtype, unique entries), −1 if absent.
    The dtype: int64 (pair codes) or ``CONTACT_CODE`` records (pair, feature)."""
    if table.shape[0] == 0:
        return np.full(codes.shape[0], -1, dtype=np.int64)
    if codes.shape[0] * table.shape[0] <= SMALL_LOOKUP:
        out = np.empty(codes.shape[0], dtype=np.int64)
        width = 2 if codes.dtype.names else 1
        _lookup_small(np.ascontiguousarray(codes).view(np.int64).reshape(-1, width),
                      np.ascontiguousarray(table).view(np.int64).reshape(-1, width), out)
        return out
    order = np.argsort(table)
    pos = np.minimum(np.searchsorted(table[order], codes), table.shape[0] - 1)
    return np.where(table[order][pos] == codes, order[pos], -1)


@njit(cache=True)
def _lookup_small(codes, table, out):
    """``lookup`` by comparing all pairs: codes (k, w), table (m, w) int64 rows (w = 1 or 2 fields)."""
    for i in range(codes.shape[0]):
        out[i] = -1
        for j in range(table.shape[0]):
            same = True
            for f in range(codes.shape[1]):
                same = same and codes[i, f] == table[j, f]
            if same:
                out[i] = j
                break


def cross(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Row-wise a × b of (k, 3) arrays (np.cross's axis handling costs more than the product here)."""
    a0, a1, a2 = a[..., 0], a[..., 1], a[..., 2]
    b0, b1, b2 = b[..., 0], b[..., 1], b[..., 2]
    return np.stack([a1 * b2 - a2 * b1, a2 * b0 - a0 * b2, a0 * b1 - a1 * b0], axis=-1)


def world_inverse_inertia(q: np.ndarray, inv_inertia_body: np.ndarray) -> np.ndarray:
    """I⁻¹ = R I_body⁻¹ Rᵀ (n, 3, 3) for unit quaternions q (n, 4) (w, x, y, z) (Baraff I (2-39))."""
    R = rotation_matrices(q)
    out = np.empty_like(R)
    _rotate_inertias(R, np.ascontiguousarray(inv_inertia_body, dtype=np.float64), out)
    return out


@njit(cache=True)
def _rotate_inertias(R, inertia, out):
    """out_n = R_n I_n R_nᵀ for (n, 3, 3) arrays."""
    for n in range(R.shape[0]):
        for i in range(3):
            for l in range(3):
                s = 0.0
                for j in range(3):
                    row = R[n, i, 0] * inertia[n, 0, j] + R[n, i, 1] * inertia[n, 1, j] + R[n, i, 2] * inertia[n, 2, j]
                    s += row * R[n, l, j]
                out[n, i, l] = s


def rotation_matrices(q: np.ndarray) -> np.ndarray:
    """R(q) (n, 3, 3) of unit quaternions q (n, 4) (w, x, y, z) (Baraff I (4-3))."""
    q = np.ascontiguousarray(q, dtype=np.float64)
    out = np.empty((q.shape[0], 3, 3))
    quat_to_matrices(q, out)
    return out


def jacobian(cs: Contacts, x: np.ndarray, direction: np.ndarray | None = None) -> np.ndarray:
    """The contact Jacobian J (c, 6 n) of the normal rows: v_rel = J u for u = (v_0, ω_0, v_1, ω_1, …)
    (module docstring; (8-1), (8-2)); x (n, 3) the bodies' centres of mass. ``direction`` (c, 3): the rows
    of those directions at the contacts instead of the normals (friction)."""
    return jacobian_rows(cs.body_a, cs.body_b, cs.point, cs.normal if direction is None else direction, x)


def jacobian_rows(body_a: np.ndarray, body_b: np.ndarray, point: np.ndarray, direction: np.ndarray,
                  x: np.ndarray) -> np.ndarray:
    """``jacobian`` of contacts given by their bodies (c,), points (c, 3) [m] and row directions (c, 3)."""
    J = np.zeros((body_a.shape[0], 6 * x.shape[0]))
    _jacobian_rows(body_a, body_b, point, np.ascontiguousarray(direction, dtype=np.float64), x, J)
    return J


@njit(cache=True)
def _jacobian_rows(body_a, body_b, point, direction, x, J):
    """J (c, 6 n), zero on entry: row i gets (d, r_a × d) on A's columns and −(d, r_b × d) on B's (8-1, 8-2)."""
    for i in range(body_a.shape[0]):
        d0, d1, d2 = direction[i, 0], direction[i, 1], direction[i, 2]
        for side in range(2):
            body = body_a[i] if side == 0 else body_b[i]
            sign = 1.0 if side == 0 else -1.0
            rx, ry, rz = point[i, 0] - x[body, 0], point[i, 1] - x[body, 1], point[i, 2] - x[body, 2]
            o = 6 * body
            J[i, o] += sign * d0
            J[i, o + 1] += sign * d1
            J[i, o + 2] += sign * d2
            J[i, o + 3] += sign * (ry * d2 - rz * d1)
            J[i, o + 4] += sign * (rz * d0 - rx * d2)
            J[i, o + 5] += sign * (rx * d1 - ry * d0)


def apply_inverse_mass(inv_mass: np.ndarray, inv_inertia: np.ndarray, G: np.ndarray) -> np.ndarray:
    """M⁻¹ G for G (6 n, k): each body's block diag(m⁻¹ 1, I⁻¹) (Baraff II 8: fixed bodies have zeros)."""
    G = np.ascontiguousarray(G, dtype=np.float64)
    out = np.empty((G.shape[0], G.size // max(G.shape[0], 1)))
    _apply_inverse_mass(inv_mass, inv_inertia, G.reshape(out.shape), out)
    return out


@njit(cache=True)
def _apply_inverse_mass(inv_mass, inv_inertia, G, out):
    """out (6 n, k) = M⁻¹ G, body by body."""
    for b in range(inv_mass.shape[0]):
        o = 6 * b
        for col in range(G.shape[1]):
            for a in range(3):
                out[o + a, col] = inv_mass[b] * G[o + a, col]
                out[o + 3 + a, col] = (inv_inertia[b, a, 0] * G[o + 3, col] + inv_inertia[b, a, 1] * G[o + 4, col]
                                       + inv_inertia[b, a, 2] * G[o + 5, col])


def stacked_velocities(v: np.ndarray, w: np.ndarray) -> np.ndarray:
    """u = (v_0, ω_0, v_1, ω_1, …) (6 n,)."""
    return np.concatenate([v, w], axis=1).reshape(-1)


def normal_derivative(cs: Contacts, geom: dict[str, np.ndarray], polytopes: dict[str, np.ndarray],
                      x: np.ndarray, q: np.ndarray, v: np.ndarray, w: np.ndarray) -> np.ndarray:
    """ṅ (c, 3) of every contact: Appendix D's ``compute_ndot``, for each kind of contact.

    * vertex–face (a clipped face manifold, a deepest vertex, a vertex on a plane): the normal is the
      reference face's, attached to its body X: ṅ = ω_X × n;
    * edge–edge: n = ±(e_a × e_b)/|e_a × e_b| with ė = ω × e for each body's edge:
      ṅ = (z − (z·n) n)/|e_a × e_b|, z = ė_a × e_b + e_a × ė_b (sign carried by n);
    * a sphere against anything (``CLOSEST``): n is ± the unit vector from the other shape's closest point
      to the sphere's centre, which may slide over that shape (``_sphere_normal_derivative``).

    ``geom`` holds the shape rows (arrays.GEOM_FIELDS), ``polytopes`` the world's polytope table.
    Other kinds (capsule segments, ellipsoids, cylinders' curved sides) raise ValueError: the event-driven
    method does not support those shapes yet (docs/event.md).
    """
    c = len(cs)
    ndot = np.zeros((c, 3))
    if c == 0:
        return ndot
    gt = geom["geom_type"]
    family = np.empty(c, dtype=np.int64)
    if _face_normal_derivative(cs.feature, cs.normal, cs.geom_a, cs.geom_b, cs.body_a, cs.body_b, gt, w, ndot,
                               family) == 0:
        return ndot
    vf = (family == ft.FACE_CLIP) | (family == ft.DEEPEST_VERTEX) | (family == ft.VERTEX)
    ee = family == ft.EDGE_EDGE
    if np.any(ee):
        n = cs.normal
        # A feature id names the narrowphase's A and B, the shape of lower type first (collision/narrowphase.py
        # _pair_setup), which may be the buffer pair's second shape.
        flip = gt[cs.geom_a] > gt[cs.geom_b]
        body_na, body_nb = np.where(flip, cs.body_b, cs.body_a), np.where(flip, cs.body_a, cs.body_b)
        geom_na, geom_nb = np.where(flip, cs.geom_b, cs.geom_a), np.where(flip, cs.geom_a, cs.geom_b)
        # box–box contacts (collision/box_box.py) name an edge by 4 · (box axis) + 2 support bits; every
        # other polytope pair by its polytope-local edge index
        boxes = (gt[geom_na[ee]] == GeomType.BOX) & (gt[geom_nb[ee]] == GeomType.BOX)
        ea = _edge_direction(geom_na[ee], (cs.feature[ee] >> 26) & _EDGE_MASK, boxes, geom, polytopes, q)
        eb = _edge_direction(geom_nb[ee], cs.feature[ee] & _EDGE_MASK, boxes, geom, polytopes, q)
        wa, wb = w[body_na[ee]], w[body_nb[ee]]
        axis = cross(ea, eb)
        length = np.linalg.norm(axis, axis=1)
        sign = np.sign(np.einsum("ij,ij->i", axis, n[ee]))
        z = cross(cross(wa, ea), eb) + cross(ea, cross(wb, eb))
        # m = (e_a × e_b)/|e_a × e_b| = sign n: ṁ = (z − (z·m) m)/|e_a × e_b|, and (z·m) m = (z·n) n
        ndot[ee] = sign[:, None] * (z - np.einsum("ij,ij->i", z, n[ee])[:, None] * n[ee]) / length[:, None]
    sphere = family == ft.CLOSEST
    if np.any(sphere):
        ndot[sphere] = _sphere_normal_derivative(cs.subset(sphere), geom, polytopes, x, q, v, w)
    other = ~(vf | ee | sphere)
    if np.any(other):
        names = sorted({ft.FAMILY_NAMES[int(f)] for f in family[other]})
        raise ValueError(f"method='event' does not support contacts of kind {names} yet (capsules, "
                         f"cylinders and ellipsoids); supported: boxes, convex hulls, spheres and the ground")
    return ndot


@njit(cache=True)
def _face_normal_derivative(feature, normal, geom_a, geom_b, body_a, body_b, geom_type, w, ndot, family):
    """Each contact's feature family (c,) into ``family``, and ṅ = ω_X × n (c, 3) into ``ndot`` for those whose
    normal is a face's (a clipped face manifold, a deepest vertex, a vertex on a plane) of body X. A feature
    id names the narrowphase's A and B, the shape of lower type first (collision/narrowphase.py _pair_setup),
    which may be the buffer pair's second shape; the reference face is on its B where the id says so, and a
    plane's (VERTEX) is always its B. Returns the number of the other contacts."""
    others = 0
    for i in range(feature.shape[0]):
        kind = (feature[i] >> _FAMILY_SHIFT) & 7
        family[i] = kind
        face = kind == ft.FACE_CLIP or kind == ft.DEEPEST_VERTEX
        if not (face or kind == ft.VERTEX):
            others += 1
            continue
        flip = geom_type[geom_a[i]] > geom_type[geom_b[i]]
        owner_is_na = face and (feature[i] & _REFERENCE_ON_B) == 0
        # the narrowphase's A is the buffer's B when flipped
        owner = body_a[i] if owner_is_na != flip else body_b[i]
        w0, w1, w2 = w[owner, 0], w[owner, 1], w[owner, 2]
        n0, n1, n2 = normal[i, 0], normal[i, 1], normal[i, 2]
        ndot[i, 0] = w1 * n2 - w2 * n1
        ndot[i, 1] = w2 * n0 - w0 * n2
        ndot[i, 2] = w0 * n1 - w1 * n0
    return others


def _edge_direction(g: np.ndarray, edge: np.ndarray, box_code: np.ndarray, geom: dict[str, np.ndarray],
                    poly: dict[str, np.ndarray], q: np.ndarray) -> np.ndarray:
    """World direction (k, 3) of the edge a feature id names on shape row g: for ``box_code`` the box axis
    edge // 4, else the polytope-local edge ``edge``."""
    rows = geom["geom_edge_start"][g] + np.where(box_code, 0, edge)
    ends = poly["edges"][rows]
    v0 = poly["vertices"][geom["geom_vert_start"][g] + ends[:, 0]]
    v1 = poly["vertices"][geom["geom_vert_start"][g] + ends[:, 1]]
    in_shape = np.where(box_code[:, None], np.eye(3)[np.where(box_code, edge // 4, 0)], v1 - v0)
    local = np.einsum("kij,kj->ki", rotation_matrices(geom["geom_quat"][g]), in_shape)
    body = geom["geom_body"][g]
    return np.einsum("kij,kj->ki", rotation_matrices(q[body]), local)


def _sphere_normal_derivative(cs: Contacts, geom: dict[str, np.ndarray], polytopes: dict[str, np.ndarray],
                              x: np.ndarray, q: np.ndarray, v: np.ndarray, w: np.ndarray) -> np.ndarray:
    """ṅ of closest-point contacts of a sphere (centre c, radius r) against another shape O.

    The normal is m = d / |d|, d = c − p, with p the point of O closest to c. That point may slide over O
    along the directions E (orthonormal columns) in which it is free: none at a corner or a sphere's
    centre, the edge direction on an edge, the face's plane on a face or a plane. Differentiating
    (with ṗ_O(p) the velocity of O's material point at p and ė = ω_O × e for each free direction):

        ṁ = (1 − m mᵀ − E Eᵀ)(ċ − ṗ_O(p)) / |d| + E Eᵀ (ω_O × m)

    which is ω_O × m on a face (Appendix D's vertex–face case) and (1 − m mᵀ)(ċ − ċ_O)/|c − c_O| for two
    spheres. n is ±m (n points from B toward A)."""
    gt = geom["geom_type"]
    sphere_a = gt[cs.geom_a] == GeomType.SPHERE
    s_geom = np.where(sphere_a, cs.geom_a, cs.geom_b)
    o_geom = np.where(sphere_a, cs.geom_b, cs.geom_a)
    s_body, o_body = geom["geom_body"][s_geom], geom["geom_body"][o_geom]
    if not np.all(gt[s_geom] == GeomType.SPHERE):
        raise ValueError("method='event' supports closest-point contacts of spheres only (no capsules yet)")
    k = len(cs)
    m = np.where(sphere_a[:, None], cs.normal, -cs.normal)       # from O toward the sphere's centre
    Rs = rotation_matrices(q[s_body])
    centre = x[s_body] + np.einsum("kij,kj->ki", Rs, geom["geom_pos"][s_geom])
    radius = geom["geom_size"][s_geom, 0]
    dist = radius - cs.depth
    Ro = rotation_matrices(q[o_body]) @ rotation_matrices(geom["geom_quat"][o_geom])   # O's shape axes, world
    free = np.zeros((k, 3, 3))        # E Eᵀ
    o_type = gt[o_geom]
    o_sphere = o_type == GeomType.SPHERE
    if np.any(o_sphere):
        oc = x[o_body[o_sphere]] + np.einsum("kij,kj->ki", rotation_matrices(q[o_body[o_sphere]]),
                                             geom["geom_pos"][o_geom[o_sphere]])
        dist[o_sphere] = np.linalg.norm(centre[o_sphere] - oc, axis=1)
    flat = (o_type == GeomType.PLANE) | ((cs.feature >> 26) & _EDGE_MASK == ft.CLOSEST_FACE)
    free[flat] = np.eye(3) - np.einsum("ki,kj->kij", m[flat], m[flat])
    region_kind = ((cs.feature >> 26) & _EDGE_MASK) == ft.CLOSEST_REGION
    if np.any(region_kind):     # a box: axis a is free where the centre lies within the box's slab
        region = cs.feature & _EDGE_MASK
        for axis, scale in enumerate((9, 3, 1)):
            within = region_kind & ((region // scale) % 3 == 1)
            e = Ro[:, :, axis]
            free[within] += np.einsum("ki,kj->kij", e[within], e[within])
        inside = region_kind & (region == 13)
        free[inside] = np.eye(3) - np.einsum("ki,kj->kij", m[inside], m[inside])
    edge = ((cs.feature >> 26) & _EDGE_MASK == ft.CLOSEST_EDGE) & ~o_sphere & (o_type != GeomType.PLANE)
    if np.any(edge):
        e = _edge_direction(o_geom[edge], cs.feature[edge] & _EDGE_MASK, np.zeros(int(edge.sum()), bool), geom,
                            polytopes, q)
        e /= np.linalg.norm(e, axis=1)[:, None]
        free[edge] = np.einsum("ki,kj->kij", e, e)
    p = centre - dist[:, None] * m
    centre_velocity = v[s_body] + cross(w[s_body], centre - x[s_body])
    rel = centre_velocity - (v[o_body] + cross(w[o_body], p - x[o_body]))
    normal_part = np.eye(3) - np.einsum("ki,kj->kij", m, m) - free
    out = (np.einsum("kij,kj->ki", normal_part, rel) / dist[:, None]
           + np.einsum("kij,kj->ki", free, cross(w[o_body], m)))
    return np.where(sphere_a[:, None], out, -out)


def core_points(cs: Contacts) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The points (c, 3) of A and B whose motion the separation follows, and the distance D (c,) between
    them along n.

    Baraff's d̈ (9-4) follows the two material points that touch, which is exact for polytopes (a vertex,
    an edge, a face). A rounded shape (a sphere, a capsule: radius r > 0 in ``cs.radius``) touches at the
    point r along the normal from its core, whichever material point is there: its separation is
    d = n · (c_a − c_b) − r_a − r_b for its core point c (the sphere's centre, A's at the contact point
    + (r_a − depth/2) n, B's at − (r_b − depth/2) n). Differentiating twice with n · n = 1:

        d̈ = n · (c̈_a − c̈_b) + 2 ṅ · (ċ_a − ċ_b) − D |ṅ|²,   c_a − c_b = D n,

    so a ball rolling at ω feels no centripetal ω² r of the material point at its bottom (which made the
    resting force m (g − ω² r), and none at all above ω² r = g). A side that is not rounded keeps the
    contact point itself (D then counts only the rounded side's offset). The time-stepping rows place the
    same core points (contact_rows.contact_from_core, which also handles ellipsoids; the event method takes
    none)."""
    c = len(cs)
    core_a, core_b, distance = np.empty((c, 3)), np.empty((c, 3)), np.empty(c)
    _core_points(cs.point, cs.normal, cs.radius, cs.depth, core_a, core_b, distance)
    return core_a, core_b, distance


@njit(cache=True)
def _core_points(point, normal, radius, depth, core_a, core_b, distance):
    """``core_points`` into core_a, core_b (c, 3) and distance (c,)."""
    for i in range(point.shape[0]):
        offset_a = radius[i, 0] - 0.5 * depth[i] if radius[i, 0] > 0.0 else 0.0
        offset_b = radius[i, 1] - 0.5 * depth[i] if radius[i, 1] > 0.0 else 0.0
        for k in range(3):
            core_a[i, k] = point[i, k] + offset_a * normal[i, k]
            core_b[i, k] = point[i, k] - offset_b * normal[i, k]
        distance[i] = offset_a + offset_b


def resting_offset(cs: Contacts, ndot: np.ndarray, free: np.ndarray, x: np.ndarray, v: np.ndarray,
                   w: np.ndarray) -> np.ndarray:
    """b (c,) of d̈ = A f + b (9-9; Appendix D's ``compute_b_vector``): n · (c̈_a − c̈_b) without the contact
    forces (``free`` (c, 3), from ``free_acceleration``) plus 2 ṅ · (ċ_a − ċ_b) (9-4) − D |ṅ|², at the core
    points c of ``core_points`` (the contact point itself on a shape that is not rounded). (A = J M⁻¹ Jᵀ.)"""
    core_a, core_b, core_distance = core_points(cs)
    velocity = np.empty((len(cs), 3))
    _point_motions(cs.body_a, cs.body_b, core_a, core_b, x, v, w, w, False, velocity)
    out = np.empty(len(cs))
    _offsets(cs.normal, np.ascontiguousarray(free), np.ascontiguousarray(ndot), velocity, core_distance, out)
    return out


@njit(cache=True)
def _offsets(normal, free, ndot, velocity, core_distance, out):
    """out (c,) = n · free + 2 ṅ · velocity − D |ṅ|² (``resting_offset``)."""
    for i in range(normal.shape[0]):
        s = 0.0
        for k in range(3):
            s += normal[i, k] * free[i, k] + ndot[i, k] * (2.0 * velocity[i, k] - core_distance[i] * ndot[i, k])
        out[i] = s


def body_accelerations(inv_mass: np.ndarray, inv_inertia: np.ndarray, w: np.ndarray, force: np.ndarray,
                       torque: np.ndarray) -> np.ndarray:
    """(v̇, ω̇) (n, 6) of every body under ``force`` (with gravity) and ``torque`` alone: F/m and
    I⁻¹(τ + L × ω) (C-10), L = I ω; zero for fixed bodies."""
    out = np.empty((inv_mass.shape[0], 6))
    _body_accelerations(inv_mass, np.ascontiguousarray(inv_inertia, dtype=np.float64), w, force, torque, out)
    return out


@njit(cache=True)
def _body_accelerations(inv_mass, inv_inertia, w, force, torque, out):
    """``body_accelerations`` into out (n, 6). I = (I⁻¹)⁻¹ by cofactors: a body's I⁻¹ is the inverse of its
    inertia or, fixed, zero (World.add_body), which turns nothing."""
    inertia = np.empty((3, 3))
    for b in range(inv_mass.shape[0]):
        A = inv_inertia[b]
        c00 = A[1, 1] * A[2, 2] - A[1, 2] * A[2, 1]
        c01 = A[1, 2] * A[2, 0] - A[1, 0] * A[2, 2]
        c02 = A[1, 0] * A[2, 1] - A[1, 1] * A[2, 0]
        det = A[0, 0] * c00 + A[0, 1] * c01 + A[0, 2] * c02
        if det == 0.0:    # a fixed body: no angular acceleration
            for k in range(3):
                out[b, k] = inv_mass[b] * force[b, k]
                out[b, 3 + k] = 0.0
            continue
        inertia[0, 0], inertia[1, 0], inertia[2, 0] = c00 / det, c01 / det, c02 / det
        inertia[0, 1] = (A[0, 2] * A[2, 1] - A[0, 1] * A[2, 2]) / det
        inertia[1, 1] = (A[0, 0] * A[2, 2] - A[0, 2] * A[2, 0]) / det
        inertia[2, 1] = (A[0, 1] * A[2, 0] - A[0, 0] * A[2, 1]) / det
        inertia[0, 2] = (A[0, 1] * A[1, 2] - A[0, 2] * A[1, 1]) / det
        inertia[1, 2] = (A[0, 2] * A[1, 0] - A[0, 0] * A[1, 2]) / det
        inertia[2, 2] = (A[0, 0] * A[1, 1] - A[0, 1] * A[1, 0]) / det
        L0 = inertia[0, 0] * w[b, 0] + inertia[0, 1] * w[b, 1] + inertia[0, 2] * w[b, 2]
        L1 = inertia[1, 0] * w[b, 0] + inertia[1, 1] * w[b, 1] + inertia[1, 2] * w[b, 2]
        L2 = inertia[2, 0] * w[b, 0] + inertia[2, 1] * w[b, 1] + inertia[2, 2] * w[b, 2]
        t0 = torque[b, 0] + L1 * w[b, 2] - L2 * w[b, 1]     # τ + L × ω
        t1 = torque[b, 1] + L2 * w[b, 0] - L0 * w[b, 2]
        t2 = torque[b, 2] + L0 * w[b, 1] - L1 * w[b, 0]
        for k in range(3):
            out[b, k] = inv_mass[b] * force[b, k]
            out[b, 3 + k] = A[k, 0] * t0 + A[k, 1] * t1 + A[k, 2] * t2


def free_acceleration(cs: Contacts, inv_mass: np.ndarray, inv_inertia: np.ndarray, x: np.ndarray,
                      w: np.ndarray, force: np.ndarray, torque: np.ndarray,
                      extra: np.ndarray | None = None) -> np.ndarray:
    """c̈_a − c̈_b (c, 3) at each contact's core points (``core_points``: the contact point on a shape that is
    not rounded) without the contact forces (Appendix D: the loads, with gravity in ``force``, and the
    velocity terms ω × (ω × r) + I⁻¹ (L × ω) × r of (C-10), (C-12)); ``extra`` (n, 6): accelerations added
    to the bodies' (the joints' response to the loads, method "event")."""
    du = body_accelerations(inv_mass, inv_inertia, w, force, torque)
    if extra is not None:
        du = du + extra
    core_a, core_b, _ = core_points(cs)
    out = np.empty((len(cs), 3))
    _point_motions(cs.body_a, cs.body_b, core_a, core_b, x, du[:, :3], du[:, 3:], w, True, out)
    return out


@njit(cache=True)
def _point_motions(body_a, body_b, point_a, point_b, x, lin, ang, w, centripetal, out):
    """out (c, 3) = the difference between A's point point_a and B's point_b of l + a × r (+ ω × (ω × r) with
    ``centripetal``), r = p − x, for each body's (lin, ang) (n, 3): the velocity ṗ = v + ω × r (8-1) with
    (v, ω), the acceleration p̈ = v̇ + ω̇ × r + ω × (ω × r) (C-12) with (v̇, ω̇) and ``centripetal``."""
    for i in range(body_a.shape[0]):
        for k in range(3):
            out[i, k] = 0.0
        for side in range(2):
            body = body_a[i] if side == 0 else body_b[i]
            p = point_a[i] if side == 0 else point_b[i]
            sign = 1.0 if side == 0 else -1.0
            rx, ry, rz = p[0] - x[body, 0], p[1] - x[body, 1], p[2] - x[body, 2]
            a0 = lin[body, 0] + ang[body, 1] * rz - ang[body, 2] * ry
            a1 = lin[body, 1] + ang[body, 2] * rx - ang[body, 0] * rz
            a2 = lin[body, 2] + ang[body, 0] * ry - ang[body, 1] * rx
            if centripetal:
                w0, w1, w2 = w[body, 0], w[body, 1], w[body, 2]
                c0, c1, c2 = w1 * rz - w2 * ry, w2 * rx - w0 * rz, w0 * ry - w1 * rx
                a0 += w1 * c2 - w2 * c1
                a1 += w2 * c0 - w0 * c2
                a2 += w0 * c1 - w1 * c0
            out[i, 0] += sign * a0
            out[i, 1] += sign * a1
            out[i, 2] += sign * a2


def relative_velocity(cs: Contacts, x: np.ndarray, v: np.ndarray, w: np.ndarray) -> np.ndarray:
    """ṗ_a − ṗ_b (c, 3) at each contact point (8-1)."""
    out = np.empty((len(cs), 3))
    _point_motions(cs.body_a, cs.body_b, cs.point, cs.point, x, v, w, w, False, out)
    return out


def relative_acceleration(cs: Contacts, x: np.ndarray, du: np.ndarray) -> np.ndarray:
    """p̈_a − p̈_b (c, 3) at the contact points from the bodies' accelerations du (n, 6) = (v̇, ω̇) alone
    (the rigid part of (C-12); the velocity terms are in ``free_acceleration``)."""
    out = np.empty((len(cs), 3))
    _point_motions(cs.body_a, cs.body_b, cs.point, cs.point, x, du[:, :3], du[:, 3:], x, False, out)
    return out


def tangent_basis(n: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Two unit tangents (c, 3) with (t1, t2, n) right-handed, t1 from n alone."""
    pick = np.where(np.abs(n[:, 0:1]) < 0.57735026918962573, np.array([[1.0, 0.0, 0.0]]), np.array([[0.0, 1.0, 0.0]]))
    t1 = cross(pick, n)
    t1 /= np.linalg.norm(t1, axis=1)[:, None]
    return t1, cross(n, t1)


@njit(cache=True)
def find_all_collisions(body_a, body_b, point, normal, restitution, x, inv_mass, inv_inertia, v, w, threshold,
                        max_sweeps):
    """Baraff II 8 ``find_all_collisions``: sweep the contacts in order and give every colliding one
    (v_rel < −threshold [m/s]) the impulse j n of (8-18) with its restitution e, j = −(1 + e) v_rel / K,
    K = m_a⁻¹ + m_b⁻¹ + n · (I_a⁻¹ (r_a × n)) × r_a + n · (I_b⁻¹ (r_b × n)) × r_b, applied at the point to
    both bodies (Baraff's ``collision``); repeat until a sweep finds none (at most ``max_sweeps``). A contact
    that would rebound slower than the threshold gets e = 0 (it becomes resting: the end of Zeno behaviour).
    Updates v, w (n, 3) in place; returns the number of impulses (−1 if sweeps ran out)."""
    count = 0
    for _ in range(max_sweeps):
        had = False
        for i in range(body_a.shape[0]):
            a, b = body_a[i], body_b[i]
            n0, n1, n2 = normal[i, 0], normal[i, 1], normal[i, 2]
            ra = point[i] - x[a]
            rb = point[i] - x[b]
            vrel = 0.0
            for k in range(3):
                vrel += normal[i, k] * (v[a, k] - v[b, k])
            wa = np.cross(w[a], ra)
            wb = np.cross(w[b], rb)
            vrel += n0 * (wa[0] - wb[0]) + n1 * (wa[1] - wb[1]) + n2 * (wa[2] - wb[2])
            if vrel >= -threshold:
                continue
            ua = inv_inertia[a] @ np.cross(ra, normal[i])
            ub = inv_inertia[b] @ np.cross(rb, normal[i])
            ta = np.cross(ua, ra)
            tb = np.cross(ub, rb)
            k_eff = inv_mass[a] + inv_mass[b] + n0 * (ta[0] + tb[0]) + n1 * (ta[1] + tb[1]) + n2 * (ta[2] + tb[2])
            # a rebound slower than the threshold would only start another, smaller collision (Zeno):
            # the contact becomes resting instead (e = 0)
            e = restitution[i] if -restitution[i] * vrel > threshold else 0.0
            j = -(1.0 + e) * vrel / k_eff
            for k in range(3):
                v[a, k] += j * inv_mass[a] * normal[i, k]
                v[b, k] -= j * inv_mass[b] * normal[i, k]
                w[a, k] += j * ua[k]
                w[b, k] -= j * ub[k]
            count += 1
            had = True
        if not had:
            return count
    return -1

