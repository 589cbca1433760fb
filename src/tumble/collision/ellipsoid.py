"""Ellipsoids against everything: a closed form against planes, GJK/EPA against other shapes.

An ellipsoid with centre p, orientation R and semi-axes s = (a, b, c) has the support mapping
s(d) = p + R S² Rᵀ d / |S Rᵀ d| with S = diag(s). Against a plane (n, d) its deepest point is s(−n), so
the contact is exact and closed form. Against a sphere or capsule the test runs on the *core* (the centre
point or the segment) and adds the radius afterwards: dist(core, ellipsoid) − r. Against polytopes and
other ellipsoids it runs on the shapes themselves. In every case ``gjk.epa_penetration`` returns the
signed distance along the best normal: GJK's closest points while the cores are apart, EPA's minimum
translation once they overlap (exact for polytopes; within ``EPA_TOL`` on the curved surface).

An ellipsoid is strictly convex, so each pair has one contact: at the midpoint of the two surface points,
normal from B toward A, depth = penetration (negative within the margin). World frame, metres.
"""

from __future__ import annotations

import numpy as np

from ..jit import njit
from ..math3d import qrot_inv_t, qrot_t
from . import features, gjk
from .sat import KIND_ELLIPSOID

EPA_TOL = 1e-9
"""m. EPA stops when the support along the best face's normal improves by less than this: far below the
5 mm contact margin and any solver slop, and reached in a few dozen iterations for resting contacts."""


@njit(cache=True)
def ellipsoid_plane(pose, semi_axes, plane, margin, out, base):
    """Ellipsoid A (``pose`` = centre p and orientation q, a 7-tuple; ``semi_axes`` = (a, b, c)) against plane
    B {x : n · x = d} (``plane`` = (nx, ny, nz, d)): the deepest point s(−n) = p − R S² Rᵀ n / |S Rᵀ n|, depth
    d − n · s(−n). Writes one contact to row ``base`` of ``out`` = (point, normal, depth, kind, feature) if
    within ``margin``; returns the count."""
    px, py, pz, qw, qx, qy, qz = pose
    a, b, c = semi_axes
    nx, ny, nz, d = plane
    point_out, normal_out, depth_out, kind_out, feature_out = out
    mx, my, mz = qrot_inv_t(qw, qx, qy, qz, nx, ny, nz)  # Rᵀ n
    norm = np.sqrt((a * mx) ** 2 + (b * my) ** 2 + (c * mz) ** 2)
    lx, ly, lz = a * a * mx / norm, b * b * my / norm, c * c * mz / norm
    ox, oy, oz = qrot_t(qw, qx, qy, qz, lx, ly, lz)
    sx, sy, sz = px - ox, py - oy, pz - oz
    height = nx * sx + ny * sy + nz * sz - d
    if height > margin:
        return 0
    point_out[base, 0] = sx - 0.5 * height * nx
    point_out[base, 1] = sy - 0.5 * height * ny
    point_out[base, 2] = sz - 0.5 * height * nz
    normal_out[base, 0], normal_out[base, 1], normal_out[base, 2] = nx, ny, nz
    depth_out[base] = -height
    kind_out[base] = KIND_ELLIPSOID
    feature_out[base] = features.CURVED_ID
    return 1


@njit(cache=True)
def convex_pair(shape_a, ra, shape_b, rb, margin, epa_ws, out, base):
    """One contact between core shapes A and B (``gjk`` shape tuples) swept by spheres of radii ra and rb
    (0 for ellipsoids and polytopes): depth = ra + rb − signed core distance, normal B → A, the point midway
    between the two surfaces, on the line through the curved side's deepest point along n, written to row
    ``base`` of ``out`` = (point, normal, depth, kind, feature) if within ``margin``. epa_ws: a
    ``gjk.epa_workspace()``. Returns 0 or 1."""
    depth, nx, ny, nz, ax, ay, az, bx, by, bz, _ = gjk.epa_penetration_ws(shape_a, shape_b, EPA_TOL, epa_ws)
    point_out, normal_out, depth_out, kind_out, feature_out = out
    ka = shape_a[0]
    depth += ra + rb
    if depth < -margin:
        return 0
    # The surface points along n are a − ra n and b + rb n, and the contact lies half the depth from either.
    # Only a strictly convex side has a unique such point: a polytope's support along a face normal is any
    # vertex of that face, and a segment's along its perpendicular any of its points. So the point is taken
    # from the curved side (an ellipsoid, or a sphere's centre).
    if ka == gjk.SHAPE_ELLIPSOID or ka == gjk.SHAPE_POINT:
        sx, sy, sz, half = ax - ra * nx, ay - ra * ny, az - ra * nz, 0.5 * depth
    else:
        sx, sy, sz, half = bx + rb * nx, by + rb * ny, bz + rb * nz, -0.5 * depth
    point_out[base, 0] = sx + half * nx
    point_out[base, 1] = sy + half * ny
    point_out[base, 2] = sz + half * nz
    normal_out[base, 0], normal_out[base, 1], normal_out[base, 2] = nx, ny, nz
    depth_out[base] = depth
    kind_out[base] = KIND_ELLIPSOID
    feature_out[base] = features.CURVED_ID
    return 1
