"""Geometry the harness uses to judge every engine the same way (NumPy only, vectorized).

Conventions (DESIGN.md): SI units, z up, quaternions (w, x, y, z) unit length rotating body → world,
``p_world = R(q) p_body + x``. Boxes are described by their HALF extents here (``h``, shape (..., 3));
scene descriptions carry full side lengths and convert at the boundary.

Penetration depth of two boxes is the minimum overlap over the 15 separating-axis candidates (3 + 3 face
normals, 9 edge × edge directions). For convex polyhedra the minimum translation distance lies along one of
those directions, so this is the exact depth, not an estimate. A positive return value of
:func:`box_box_separation` is a separating distance along the best axis (a lower bound of the Euclidean gap).
"""

from __future__ import annotations

import numpy as np
from scipy.spatial import cKDTree

__all__ = [
    "quat_to_matrix",
    "quat_conj_rotate",
    "random_unit_quaternions",
    "box_box_separation",
    "sphere_box_separation",
    "body_plane_separation",
    "ContactSummary",
    "measure_contacts",
]


def quat_to_matrix(q: np.ndarray) -> np.ndarray:
    """Rotation matrices of unit quaternions.

    Args:
        q: (..., 4) quaternions (w, x, y, z); normalized here.

    Returns:
        (..., 3, 3) matrices R with ``p_world = R p_body``.
    """
    q = np.asarray(q, dtype=float)
    q = q / np.linalg.norm(q, axis=-1, keepdims=True)
    w, x, y, z = q[..., 0], q[..., 1], q[..., 2], q[..., 3]
    r = np.empty(q.shape[:-1] + (3, 3))
    r[..., 0, 0] = 1 - 2 * (y * y + z * z)
    r[..., 0, 1] = 2 * (x * y - w * z)
    r[..., 0, 2] = 2 * (x * z + w * y)
    r[..., 1, 0] = 2 * (x * y + w * z)
    r[..., 1, 1] = 1 - 2 * (x * x + z * z)
    r[..., 1, 2] = 2 * (y * z - w * x)
    r[..., 2, 0] = 2 * (x * z - w * y)
    r[..., 2, 1] = 2 * (y * z + w * x)
    r[..., 2, 2] = 1 - 2 * (x * x + y * y)
    return r


def quat_conj_rotate(q: np.ndarray, v: np.ndarray) -> np.ndarray:
    """Rotate world vectors into body frames: ``R(q)ᵀ v``.

    Args:
        q: (n, 4) quaternions (w, x, y, z).
        v: (n, 3) world-frame vectors.

    Returns:
        (n, 3) body-frame vectors.
    """
    return np.einsum("nji,nj->ni", quat_to_matrix(q), np.asarray(v, dtype=float))


def random_unit_quaternions(rng: np.random.Generator, n: int) -> np.ndarray:
    """``n`` orientations uniformly distributed on SO(3) (normalized 4-D Gaussians), sign fixed to w ≥ 0.

    Returns:
        (n, 4) unit quaternions (w, x, y, z).
    """
    q = rng.standard_normal((n, 4))
    q /= np.linalg.norm(q, axis=1, keepdims=True)
    q[q[:, 0] < 0] *= -1.0
    return q


def box_box_separation(
    ca: np.ndarray, ra: np.ndarray, ha: np.ndarray, cb: np.ndarray, rb: np.ndarray, hb: np.ndarray
) -> np.ndarray:
    """Signed separation of box pairs by the separating-axis theorem.

    Args:
        ca, cb: (m, 3) box centres [m].
        ra, rb: (m, 3, 3) box rotation matrices (body → world).
        ha, hb: (m, 3) half extents [m].

    Returns:
        (m,) the maximum over the 15 axes of ``|d·a| − (rA + rB)`` [m]: > 0 separated (by at least that),
        ≤ 0 overlapping, and then ``−value`` is the exact penetration depth.
    """
    ca, cb = np.atleast_2d(ca), np.atleast_2d(cb)
    d = cb - ca
    ua = np.swapaxes(ra, -1, -2)  # (m, 3 axes, 3 comps): row i = world direction of A's body axis i
    ub = np.swapaxes(rb, -1, -2)
    cross = np.cross(ua[:, :, None, :], ub[:, None, :, :]).reshape(-1, 9, 3)
    norm = np.linalg.norm(cross, axis=-1)
    degenerate = norm < 1e-9  # parallel edges: that direction is already a face normal
    cross = cross / np.where(degenerate, 1.0, norm)[..., None]
    axes = np.concatenate([ua, ub, cross], axis=1)  # (m, 15, 3)
    rad_a = np.einsum("mki,mi->mk", np.abs(np.einsum("mkc,mic->mki", axes, ua)), ha)
    rad_b = np.einsum("mki,mi->mk", np.abs(np.einsum("mkc,mic->mki", axes, ub)), hb)
    dist = np.abs(np.einsum("mkc,mc->mk", axes, d))
    sep = dist - rad_a - rad_b
    sep[:, 6:][degenerate] = -np.inf
    return sep.max(axis=1)


def sphere_box_separation(cs: np.ndarray, radius: np.ndarray, cb: np.ndarray, rb: np.ndarray,
                          hb: np.ndarray) -> np.ndarray:
    """Signed Euclidean distance between spheres and boxes (negative: penetration depth, exact).

    Args:
        cs: (m, 3) sphere centres [m]; radius: (m,) [m].
        cb: (m, 3) box centres; rb: (m, 3, 3) box rotations; hb: (m, 3) half extents [m].

    Returns:
        (m,) distance from sphere surface to box surface [m]; negative when they overlap.
    """
    local = np.einsum("mji,mj->mi", rb, cs - cb)
    clamped = np.clip(local, -hb, hb)
    outside = np.linalg.norm(local - clamped, axis=1)
    inside_depth = np.min(hb - np.abs(local), axis=1)  # > 0 when the centre is inside the box
    signed = np.where(outside > 0, outside, -np.maximum(inside_depth, 0.0))
    return signed - radius


def body_plane_separation(kind_is_box: np.ndarray, x: np.ndarray, rot: np.ndarray, size: np.ndarray,
                          height: float) -> np.ndarray:
    """Signed distance from each body to the horizontal plane z = ``height`` (negative: depth).

    Args:
        kind_is_box: (n,) bool, True for boxes, False for spheres.
        x: (n, 3) centres; rot: (n, 3, 3) rotations.
        size: (n, 3) half extents for boxes, (radius, 0, 0) for spheres [m].
        height: plane height [m].

    Returns:
        (n,) lowest point of the body minus ``height`` [m].
    """
    box_reach = np.einsum("ni,ni->n", np.abs(rot[:, 2, :]), size)  # half height of a box along world z
    reach = np.where(kind_is_box, box_reach, size[:, 0])
    return x[:, 2] - reach - height


class ContactSummary:
    """Touching pairs and penetration measured from geometry alone.

    Attributes:
        touching: pairs (body–body, body–ground, body–wall) whose separation is ≤ ``tolerance``.
        penetrating: pairs whose separation is < 0.
        max_penetration: largest penetration depth [m] (0 when none).
        tolerance: the gap [m] under which a pair counts as touching.
    """

    def __init__(self, touching: int, penetrating: int, max_penetration: float, tolerance: float) -> None:
        self.touching = touching
        self.penetrating = penetrating
        self.max_penetration = max_penetration
        self.tolerance = tolerance

    def as_dict(self) -> dict[str, float]:
        """Plain dict for JSON."""
        return {
            "touching_pairs": self.touching,
            "penetrating_pairs": self.penetrating,
            "max_penetration": self.max_penetration,
            "touch_tolerance": self.tolerance,
        }


def _pair_separation(kind_is_box: np.ndarray, x: np.ndarray, rot: np.ndarray, size: np.ndarray,
                     i: np.ndarray, j: np.ndarray) -> np.ndarray:
    """Separation of body pairs (i[k], j[k]) of any kinds (box or sphere)."""
    sep = np.empty(len(i))
    bi, bj = kind_is_box[i], kind_is_box[j]
    m = bi & bj
    if m.any():
        sep[m] = box_box_separation(x[i[m]], rot[i[m]], size[i[m]], x[j[m]], rot[j[m]], size[j[m]])
    m = ~bi & ~bj
    if m.any():
        sep[m] = np.linalg.norm(x[i[m]] - x[j[m]], axis=1) - size[i[m], 0] - size[j[m], 0]
    m = bi & ~bj
    if m.any():
        sep[m] = sphere_box_separation(x[j[m]], size[j[m], 0], x[i[m]], rot[i[m]], size[i[m]])
    m = ~bi & bj
    if m.any():
        sep[m] = sphere_box_separation(x[i[m]], size[i[m], 0], x[j[m]], rot[j[m]], size[j[m]])
    return sep


def measure_contacts(
    kind_is_box: np.ndarray,
    size: np.ndarray,
    x: np.ndarray,
    q: np.ndarray,
    ground_height: float | None,
    walls: list[tuple[np.ndarray, np.ndarray, np.ndarray]],
    tolerance: float = 1e-3,
) -> ContactSummary:
    """Count touching pairs and find the deepest penetration, from geometry only.

    Args:
        kind_is_box: (n,) bool, True for boxes, False for spheres.
        size: (n, 3) half extents (boxes) or (radius, 0, 0) (spheres) [m].
        x: (n, 3) centres [m]; q: (n, 4) orientations (w, x, y, z).
        ground_height: height of the ground plane z = h [m], or None.
        walls: static boxes as (centre (3,), rotation (3, 3), half extents (3,)).
        tolerance: gap [m] under which a pair counts as touching.

    Returns:
        A :class:`ContactSummary`.
    """
    x = np.asarray(x, dtype=float)
    n = len(x)
    rot = quat_to_matrix(q)
    bound = np.where(kind_is_box, np.linalg.norm(size, axis=1), size[:, 0])
    seps = []
    if n > 1:
        pairs = cKDTree(x).query_pairs(2.0 * bound.max() + tolerance, output_type="ndarray")
        if len(pairs):
            i, j = pairs[:, 0], pairs[:, 1]
            near = np.linalg.norm(x[i] - x[j], axis=1) <= bound[i] + bound[j] + tolerance
            i, j = i[near], j[near]
            if len(i):
                seps.append(_pair_separation(kind_is_box, x, rot, size, i, j))
    if ground_height is not None:
        seps.append(body_plane_separation(kind_is_box, x, rot, size, ground_height))
    for centre, wrot, half in walls:
        wall_bound = float(np.linalg.norm(half))
        near = np.linalg.norm(x - centre, axis=1) <= bound + wall_bound + tolerance
        idx = np.flatnonzero(near)
        if len(idx) == 0:
            continue
        m = len(idx)
        cw, rw, hw = np.tile(centre, (m, 1)), np.tile(wrot, (m, 1, 1)), np.tile(half, (m, 1))
        sep = np.empty(m)
        box = kind_is_box[idx]
        if box.any():
            k = idx[box]
            sep[box] = box_box_separation(x[k], rot[k], size[k], cw[box], rw[box], hw[box])
        if (~box).any():
            k = idx[~box]
            sep[~box] = sphere_box_separation(x[k], size[k, 0], cw[~box], rw[~box], hw[~box])
        seps.append(sep)
    allsep = np.concatenate(seps) if seps else np.zeros(0)
    pen = allsep[allsep < 0]
    return ContactSummary(
        touching=int(np.count_nonzero(allsep <= tolerance)),
        penetrating=int(len(pen)),
        max_penetration=float(-pen.min()) if len(pen) else 0.0,
        tolerance=tolerance,
    )
