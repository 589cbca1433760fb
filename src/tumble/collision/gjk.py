"""Distance and penetration depth between convex shapes given by support mappings: GJK and EPA.

A convex set A is known only through its support mapping s_A(d) = argmax_{x ∈ A} d · x. The two
algorithms work on the Minkowski difference A − B = {a − b}, whose support mapping is
s_A(d) − s_B(−d): A and B intersect iff the origin lies in A − B, their distance is the distance from
the origin to A − B, and their penetration depth is the distance from the origin to the boundary of A − B.

- ``gjk_distance``: the Gilbert–Johnson–Keerthi algorithm (E. G. Gilbert, D. W. Johnson, S. S. Keerthi,
  "A fast procedure for computing the distance between complex objects in three-dimensional space",
  IEEE J. Robotics and Automation 4(2), 1988), with the termination tests of G. van den Bergen
  ("A fast and robust GJK implementation for collision detection of convex objects", J. Graphics Tools
  4(2), 1999) and, as the simplex sub-algorithm, the signed-volumes method of M. Montanari, N. Petrinic,
  E. Barbieri ("Improving the GJK algorithm for faster and more reliable distance queries between convex
  objects", ACM Trans. Graphics 36(3), 2017). Signed volumes decide which face, edge or vertex of the
  simplex holds the closest point from the signs of determinants (volumes, and areas in the coordinate
  plane where the triangle projects largest) instead of Johnson's nested cofactor tests, which is what
  keeps it reliable for near-degenerate simplices.
- ``epa_penetration``: the Expanding Polytope Algorithm (G. van den Bergen, "Proximity queries and
  penetration depth computation on 3D game objects", GDC 2001; also his book "Collision Detection in
  Interactive 3D Environments", 2004, section 4.3.8), started from the tetrahedron with which GJK
  proved the intersection.

Shapes ("cores"). Every quantity is in the WORLD frame, lengths in metres, float64. A shape is one tuple
``(kind, (px, py, pz, qw, qx, qy, qz), (sx, sy, sz), verts, nv)`` (``shape`` builds it): p, q the pose, s the
size, all floats, and nv an integer:

- ``SHAPE_POINT`` (0): the point p; q, s and verts are ignored.
- ``SHAPE_SEGMENT`` (1): the segment from c0 = p to c1 = s; q and verts are ignored.
- ``SHAPE_ELLIPSOID`` (2): centre p, orientation q (unit quaternion, scalar first, body → world) and
  semi-axes s along the body x, y, z axes.
- ``SHAPE_POLYTOPE`` (3): the convex hull of ``verts[:nv]`` ((n, 3) float64, world coordinates);
  p, q and s are ignored.
- ``SHAPE_CYLINDER`` (4): the solid circular cylinder of radius s[0] and half height s[1] along body z,
  centre p, orientation q (the exact cylinder, for the distance queries of queries/distance.py; the
  narrowphase collides cylinders as prisms).

Shapes without vertices take a dummy (1, 3) array and nv = 0. The kernels allocate only small fixed-size
scratch arrays, once per call: 0.6 kB for GJK, and about 45 kB for EPA's polytope (only when the shapes
intersect).
"""

from __future__ import annotations

import numpy as np

from ..jit import njit
from ..math3d import centroid, qrot_inv_t, qrot_t

SHAPE_POINT = 0
SHAPE_SEGMENT = 1
SHAPE_ELLIPSOID = 2
SHAPE_POLYTOPE = 3
SHAPE_CYLINDER = 4


def shape(kind: int, p: tuple, q: tuple = (1.0, 0.0, 0.0, 0.0), s: tuple = (0.0, 0.0, 0.0),
          verts: np.ndarray | None = None, nv: int = 0) -> tuple:
    """The shape tuple (module docstring) of kind ``kind`` at p (3,) [m] with orientation q (4,) (scalar first,
    body → world) and size s (3,) [m]; ``verts`` (n, 3) [m] world vertices of a polytope, of which the first
    ``nv`` count. For callers outside kernels (tests, scripts): kernels build the tuple inline."""
    if verts is None:
        verts = np.zeros((1, 3))
    pose = tuple(float(c) for c in (*p, *q))
    return int(kind), pose, tuple(float(c) for c in s), np.ascontiguousarray(verts, dtype=np.float64), int(nv)

GJK_MAX_ITER = 128
"""GJK iterations. Polytopes finish in a handful (GJK is finite for them); smooth shapes converge
linearly near the solution, and 128 leaves room for 1e-12 m on ellipsoids of aspect ratio ~10."""

EPA_MAX_VERTS = 256
EPA_MAX_FACES = 512
"""EPA capacity. A closed triangulated polytope with V vertices has 2V − 4 faces, so the face arrays never
bind first. Polytopes need few vertices; 256 let EPA certify 1e-9 m on smooth shapes in all but nearly
concentric configurations (128 failed on ~1% of random sphere–box overlaps)."""

_ROUND = 64.0 * np.finfo(np.float64).eps
"""Relative rounding floor (≈ 1.4e-14). |v| below _ROUND × max |w_i| is indistinguishable from zero for
the simplex at hand, and a duality gap below _ROUND |v|² is rounding noise (the relative tests of
Montanari et al. 2017), so both stop GJK even when the caller passes tol = 0."""

_EPA_REL = 1e-11
"""EPA's geometric tolerance relative to the size of the shapes' coordinates (m/m). A face's plane is
known to about eps × (coordinate size) / sin(smallest angle), so visibility (is the new support point
above a face?) is only decided beyond this margin. It also bounds EPA's accuracy from below."""


# ---------------------------------------------------------------------------------------------
# Support mappings.
# ---------------------------------------------------------------------------------------------


@njit(cache=True)
def support(shape, dx, dy, dz):
    """Support point s(d) = argmax_{x in shape} d · x of one shape (module docstring), world frame, m.

    d = (dx, dy, dz) need not be unit. Ties (a face or edge normal to d) return one maximiser: the first
    end of a segment, the first maximising vertex of a polytope. d = 0 returns p (first vertex for a
    polytope), which is a point of the shape.
    """
    kind, pose, size, verts, nv = shape
    px, py, pz, qw, qx, qy, qz = pose
    sx, sy, sz = size
    if kind == SHAPE_SEGMENT:
        if dx * px + dy * py + dz * pz >= dx * sx + dy * sy + dz * sz:
            return 1.0 * px, 1.0 * py, 1.0 * pz
        return 1.0 * sx, 1.0 * sy, 1.0 * sz
    if kind == SHAPE_ELLIPSOID:
        # Closed form: with d_b = Rᵀd, the body-frame maximiser of d_b · x over x = S u, |u| <= 1 is
        # x = S² d_b / |S d_b|. It is homogeneous of degree 0 in d, so d is first scaled to max-norm 1,
        # which keeps |S d_b|² from overflowing or underflowing for any finite d.
        lx, ly, lz = qrot_inv_t(qw, qx, qy, qz, dx, dy, dz)
        m = max(abs(lx), abs(ly), abs(lz))
        if not m > 0.0:
            return 1.0 * px, 1.0 * py, 1.0 * pz
        ux, uy, uz = sx * (lx / m), sy * (ly / m), sz * (lz / m)
        nu = np.sqrt(ux * ux + uy * uy + uz * uz)
        if not nu > 0.0:
            return 1.0 * px, 1.0 * py, 1.0 * pz
        ex, ey, ez = qrot_t(qw, qx, qy, qz, sx * ux / nu, sy * uy / nu, sz * uz / nu)
        return px + ex, py + ey, pz + ez
    if kind == SHAPE_POLYTOPE and nv > 0:
        best = dx * verts[0, 0] + dy * verts[0, 1] + dz * verts[0, 2]
        k = 0
        for i in range(1, nv):
            s = dx * verts[i, 0] + dy * verts[i, 1] + dz * verts[i, 2]
            if s > best:
                best = s
                k = i
        return verts[k, 0], verts[k, 1], verts[k, 2]
    if kind == SHAPE_CYLINDER:
        # s(d) = p + sign(d·a) h a + r d⊥/|d⊥|, a the axis, d⊥ = d − (d·a) a (a rim point, or the cap's centre
        # when d is along the axis); in body axes d⊥ is (lx, ly, 0).
        lx, ly, lz = qrot_inv_t(qw, qx, qy, qz, dx, dy, dz)
        rho = np.sqrt(lx * lx + ly * ly)
        cx, cy = (sx * lx / rho, sx * ly / rho) if rho > 0.0 else (0.0, 0.0)
        ex, ey, ez = qrot_t(qw, qx, qy, qz, cx, cy, sy if lz >= 0.0 else -sy)
        return px + ex, py + ey, pz + ez
    return 1.0 * px, 1.0 * py, 1.0 * pz


@njit(cache=True)
def _centre(shape):
    """A point inside the shape, used only to aim GJK's first support query."""
    kind, pose, size, verts, nv = shape
    px, py, pz = pose[0], pose[1], pose[2]
    sx, sy, sz = size
    if kind == SHAPE_SEGMENT:
        return 0.5 * (px + sx), 0.5 * (py + sy), 0.5 * (pz + sz)
    if kind == SHAPE_POLYTOPE and nv > 0:
        return centroid(verts, nv)
    return 1.0 * px, 1.0 * py, 1.0 * pz


@njit(cache=True)
def _support_diff(shape_a, shape_b, dx, dy, dz):
    """Support of A − B along d: w = s_A(d) − s_B(−d), with the two parts a and b."""
    ax, ay, az = support(shape_a, dx, dy, dz)
    bx, by, bz = support(shape_b, -dx, -dy, -dz)
    return ax - bx, ay - by, az - bz, ax, ay, az, bx, by, bz


# ---------------------------------------------------------------------------------------------
# Signed-volumes simplex sub-algorithm (Montanari, Petrinic & Barbieri 2017, section 3).
# Each returns (mask, l0, l1, l2, l3, vx, vy, vz): the bit set of the simplex rows W[i] that support the
# point v of the simplex closest to the origin, v's barycentric weights (0 for rows not in the mask),
# and v itself. v is computed from the supporting feature directly (vertex; t × (W_i × t)/|t|² on an
# edge; n (n · W_i)/|n|² on a triangle), not as Σ l_i W[i]: near a touching contact v is tiny while the
# W[i] are O(1), and the weighted sum would leave it with an absolute error ~eps |W| in every component.
# That error tilts the next search direction −v, which matters when a face of A − B is normal to v:
# the tilt then decides which vertex of that face the support mapping returns.
# ---------------------------------------------------------------------------------------------


@njit(cache=True, forceinline=True, refcount=False)
def _same_sign(a, b):
    # Zero matches neither sign: a weight that is exactly 0 sends the search to the lower-dimensional
    # face, which then carries the point with strictly positive weights.
    return (a > 0.0 and b > 0.0) or (a < 0.0 and b < 0.0)


@njit(cache=True, forceinline=True, refcount=False)
def _slot(idx, i, li, j, lj, k, lk):
    if idx == i:
        return li
    if idx == j:
        return lj
    if idx == k:
        return lk
    return 0.0


@njit(cache=True, forceinline=True, refcount=False)
def _weights(i, li, j, lj, k, lk):
    """Scatter up to three (row, weight) pairs into the four weight slots (unused rows: pass −1)."""
    return (_slot(0, i, li, j, lj, k, lk), _slot(1, i, li, j, lj, k, lk),
            _slot(2, i, li, j, lj, k, lk), _slot(3, i, li, j, lj, k, lk))


@njit(cache=True)
def _s1d(W, i, j):
    """Closest point of segment W[i] W[j] to the origin."""
    tx, ty, tz = W[j, 0] - W[i, 0], W[j, 1] - W[i, 1], W[j, 2] - W[i, 2]
    # Unnormalised barycentric weights of the origin's projection, each from its own end so that a
    # weight is small only when the projection is really near the other end.
    li = W[j, 0] * tx + W[j, 1] * ty + W[j, 2] * tz
    lj = -(W[i, 0] * tx + W[i, 1] * ty + W[i, 2] * tz)
    if not lj > 0.0:  # also the zero-length segment (li = lj = 0)
        l0, l1, l2, l3 = _weights(i, 1.0, -1, 0.0, -1, 0.0)
        return 1 << i, l0, l1, l2, l3, W[i, 0], W[i, 1], W[i, 2]
    if not li > 0.0:
        l0, l1, l2, l3 = _weights(j, 1.0, -1, 0.0, -1, 0.0)
        return 1 << j, l0, l1, l2, l3, W[j, 0], W[j, 1], W[j, 2]
    s = li + lj
    l0, l1, l2, l3 = _weights(i, li / s, j, lj / s, -1, 0.0)
    # v = t × (W_i × t) / |t|², the component of W_i normal to the edge
    cx = W[i, 1] * tz - W[i, 2] * ty
    cy = W[i, 2] * tx - W[i, 0] * tz
    cz = W[i, 0] * ty - W[i, 1] * tx
    tt = tx * tx + ty * ty + tz * tz
    vx, vy, vz = (ty * cz - tz * cy) / tt, (tz * cx - tx * cz) / tt, (tx * cy - ty * cx) / tt
    return (1 << i) | (1 << j), l0, l1, l2, l3, vx, vy, vz


@njit(cache=True)
def _tri_normal(P, i, j, k):
    """(P[j] − P[i]) × (P[k] − P[i]), unnormalised, evaluated at the vertex opposite the longest edge.

    The cyclic forms at the three vertices are equal in exact arithmetic; a cross product a × b carries an
    absolute error ~eps |a| |b|, i.e. a relative error ~eps / sin(angle between a and b), and the angle
    opposite the longest edge is the largest one (>= 60°). For a sliver (two vertices 1e-6 apart, as GJK
    produces near convergence on smooth shapes) this keeps the normal exact to rounding instead of 1e-10.
    """
    lij = (P[j, 0] - P[i, 0]) ** 2 + (P[j, 1] - P[i, 1]) ** 2 + (P[j, 2] - P[i, 2]) ** 2
    ljk = (P[k, 0] - P[j, 0]) ** 2 + (P[k, 1] - P[j, 1]) ** 2 + (P[k, 2] - P[j, 2]) ** 2
    lki = (P[i, 0] - P[k, 0]) ** 2 + (P[i, 1] - P[k, 1]) ** 2 + (P[i, 2] - P[k, 2]) ** 2
    if lij >= ljk and lij >= lki:
        o, a, b = k, i, j  # (P[i] − P[k]) × (P[j] − P[k])
    elif ljk >= lki:
        o, a, b = i, j, k
    else:
        o, a, b = j, k, i
    e1x, e1y, e1z = P[a, 0] - P[o, 0], P[a, 1] - P[o, 1], P[a, 2] - P[o, 2]
    e2x, e2y, e2z = P[b, 0] - P[o, 0], P[b, 1] - P[o, 1], P[b, 2] - P[o, 2]
    return e1y * e2z - e1z * e2y, e1z * e2x - e1x * e2z, e1x * e2y - e1y * e2x


@njit(cache=True)
def _s2d(W, i, j, k):
    """Closest point of triangle W[i] W[j] W[k] to the origin."""
    nx, ny, nz = _tri_normal(W, i, j, k)
    nn = nx * nx + ny * ny + nz * nz
    test_i = test_j = test_k = True  # which edges (named by the opposite vertex) may hold the point
    if nn > 0.0:
        # Project the origin onto the plane, then compare signed areas in the coordinate plane in which
        # the triangle's projection is largest: the area of the projection there is n_m, the largest
        # component of the normal, so the signs are as well conditioned as the triangle allows.
        s = (nx * W[i, 0] + ny * W[i, 1] + nz * W[i, 2]) / nn
        p0, p1, p2 = s * nx, s * ny, s * nz
        if abs(nx) >= abs(ny) and abs(nx) >= abs(nz):
            mu, u, w = nx, 1, 2
        elif abs(ny) >= abs(nz):
            mu, u, w = ny, 2, 0
        else:
            mu, u, w = nz, 0, 1
        pu = p0 if u == 0 else (p1 if u == 1 else p2)
        pw = p0 if w == 0 else (p1 if w == 1 else p2)
        aiu, aiw = W[i, u] - pu, W[i, w] - pw
        aju, ajw = W[j, u] - pu, W[j, w] - pw
        aku, akw = W[k, u] - pu, W[k, w] - pw
        ci = aju * akw - ajw * aku  # area of (p, j, k): weight of vertex i
        cj = aku * aiw - akw * aiu
        ck = aiu * ajw - aiw * aju
        test_i = not _same_sign(mu, ci)
        test_j = not _same_sign(mu, cj)
        test_k = not _same_sign(mu, ck)
        if not (test_i or test_j or test_k):
            tot = ci + cj + ck
            l0, l1, l2, l3 = _weights(i, ci / tot, j, cj / tot, k, ck / tot)
            return (1 << i) | (1 << j) | (1 << k), l0, l1, l2, l3, p0, p1, p2
    best = np.inf
    bm, b0, b1, b2, b3, bx, by, bz = 0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0
    for e in range(3):
        if (test_i, test_j, test_k)[e]:
            a, b = (j, k) if e == 0 else ((i, k) if e == 1 else (i, j))
            m, l0, l1, l2, l3, vx, vy, vz = _s1d(W, a, b)
            d2 = vx * vx + vy * vy + vz * vz
            if d2 < best:
                best, bm, b0, b1, b2, b3, bx, by, bz = d2, m, l0, l1, l2, l3, vx, vy, vz
    return bm, b0, b1, b2, b3, bx, by, bz


@njit(cache=True, forceinline=True, refcount=False)
def _det(ax, ay, az, bx, by, bz, cx, cy, cz):
    """a · (b × c)."""
    return ax * (by * cz - bz * cy) + ay * (bz * cx - bx * cz) + az * (bx * cy - by * cx)


@njit(cache=True)
def _s3d(W):
    """Closest point of tetrahedron W[0..3] to the origin."""
    # c_j is the signed volume with vertex j replaced by the origin, so c_j / det is the origin's
    # barycentric weight of vertex j (the volume is affine in each vertex). Every volume is formed from
    # differences of nearby vertices: near convergence the vertices cluster (1e-6 apart for smooth
    # shapes) far from the origin, and a triple product of the raw coordinates would carry an absolute
    # rounding error far larger than these volumes.
    d1x, d1y, d1z = W[1, 0] - W[0, 0], W[1, 1] - W[0, 1], W[1, 2] - W[0, 2]
    d2x, d2y, d2z = W[2, 0] - W[0, 0], W[2, 1] - W[0, 1], W[2, 2] - W[0, 2]
    d3x, d3y, d3z = W[3, 0] - W[0, 0], W[3, 1] - W[0, 1], W[3, 2] - W[0, 2]
    ox, oy, oz = -W[0, 0], -W[0, 1], -W[0, 2]
    det = _det(d1x, d1y, d1z, d2x, d2y, d2z, d3x, d3y, d3z)
    # det(0, s1, s2, s3) = s1 · ((s2 − s1) × (s3 − s1))
    c0 = _det(W[1, 0], W[1, 1], W[1, 2], W[2, 0] - W[1, 0], W[2, 1] - W[1, 1], W[2, 2] - W[1, 2],
              W[3, 0] - W[1, 0], W[3, 1] - W[1, 1], W[3, 2] - W[1, 2])
    c1 = _det(ox, oy, oz, d2x, d2y, d2z, d3x, d3y, d3z)
    c2 = _det(d1x, d1y, d1z, ox, oy, oz, d3x, d3y, d3z)
    c3 = _det(d1x, d1y, d1z, d2x, d2y, d2z, ox, oy, oz)
    t0, t1, t2, t3 = (not _same_sign(det, c0), not _same_sign(det, c1),
                      not _same_sign(det, c2), not _same_sign(det, c3))
    if not (t0 or t1 or t2 or t3):
        tot = c0 + c1 + c2 + c3  # the weights then sum to 1 to rounding
        return 15, c0 / tot, c1 / tot, c2 / tot, c3 / tot, 0.0, 0.0, 0.0
    best = np.inf
    bm, b0, b1, b2, b3, bx, by, bz = 0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0
    for f in range(4):
        if (t0, t1, t2, t3)[f]:
            a, b, c = (1, 2, 3) if f == 0 else ((0, 2, 3) if f == 1 else ((0, 1, 3) if f == 2 else (0, 1, 2)))
            m, l0, l1, l2, l3, vx, vy, vz = _s2d(W, a, b, c)
            d2 = vx * vx + vy * vy + vz * vz
            if d2 < best:
                best, bm, b0, b1, b2, b3, bx, by, bz = d2, m, l0, l1, l2, l3, vx, vy, vz
    return bm, b0, b1, b2, b3, bx, by, bz


@njit(cache=True)
def _reduce(simp, lam, n):
    """Run the sub-algorithm on the n rows of the simplex and keep only the supporting rows (in order).

    simp (6, 4, 3): [0] points w = a − b of A − B, [1] their a, [2] their b ([3:6] are the caller's
    backup). lam (2, 4): [0] the weights. Returns the new row count and v.
    """
    W = simp[0]
    if n == 1:
        mask, l0, l1, l2, l3, vx, vy, vz = 1, 1.0, 0.0, 0.0, 0.0, W[0, 0], W[0, 1], W[0, 2]
    elif n == 2:
        mask, l0, l1, l2, l3, vx, vy, vz = _s1d(W, 0, 1)
    elif n == 3:
        mask, l0, l1, l2, l3, vx, vy, vz = _s2d(W, 0, 1, 2)
    else:
        mask, l0, l1, l2, l3, vx, vy, vz = _s3d(W)
    m = 0
    for i in range(n):
        if mask & (1 << i):
            li = l0 if i == 0 else (l1 if i == 1 else (l2 if i == 2 else l3))
            for r in range(3):
                for c in range(3):
                    simp[r, m, c] = simp[r, i, c]
            lam[0, m] = li
            m += 1
    for i in range(m, 4):
        lam[0, i] = 0.0
    return m, vx, vy, vz


# ---------------------------------------------------------------------------------------------
# GJK.
# ---------------------------------------------------------------------------------------------


@njit(cache=True)
def _gjk(shape_a, shape_b, tol, simp, lam):
    """GJK on A − B. Leaves the final simplex in simp/lam (see ``_reduce``).

    Returns (n, vx, vy, vz, vv, hit): the simplex size, its point v closest to the origin, |v|², and
    hit = True when the origin is in the simplex or within max(tol, rounding) of it.
    """
    for r in range(6):
        for i in range(4):
            for c in range(3):
                simp[r, i, c] = 0.0
    cax, cay, caz = _centre(shape_a)
    cbx, cby, cbz = _centre(shape_b)
    dx, dy, dz = cax - cbx, cay - cby, caz - cbz
    if dx == 0.0 and dy == 0.0 and dz == 0.0:
        dx = 1.0
    # cA − cB is a point of A − B, so the support opposite to it is a good first vertex.
    w = _support_diff(shape_a, shape_b, -dx, -dy, -dz)
    for c in range(3):
        simp[0, 0, c] = w[c]
        simp[1, 0, c] = w[3 + c]
        simp[2, 0, c] = w[6 + c]
    lam[0, 0] = 1.0
    n = 1
    vx, vy, vz = w[0], w[1], w[2]
    vv = vx * vx + vy * vy + vz * vz
    hit = False
    for _ in range(GJK_MAX_ITER):
        if vv <= tol * tol:
            hit = True
            break
        w = _support_diff(shape_a, shape_b, -vx, -vy, -vz)
        wx, wy, wz = w[0], w[1], w[2]
        # Duality gap (van den Bergen 1999): v·w/|v| is a lower bound on the distance and |v| an upper
        # one, so gap/|v| = |v| − v·w/|v| bounds the error of |v| in metres.
        gap = vv - (vx * wx + vy * wy + vz * wz)
        if gap <= tol * np.sqrt(vv) or gap <= _ROUND * vv:
            break
        dup = False
        for i in range(n):
            if simp[0, i, 0] == wx and simp[0, i, 1] == wy and simp[0, i, 2] == wz:
                dup = True
        if dup:  # no new support point: v cannot improve (a polytope's exact answer, or rounding)
            break
        for r in range(3):
            for i in range(n):
                for c in range(3):
                    simp[3 + r, i, c] = simp[r, i, c]
        for i in range(4):
            lam[1, i] = lam[0, i]
        n_old = n
        for c in range(3):
            simp[0, n, c] = w[c]
            simp[1, n, c] = w[3 + c]
            simp[2, n, c] = w[6 + c]
        n, nx, ny, nz = _reduce(simp, lam, n + 1)
        nvv = nx * nx + ny * ny + nz * nz
        if n == 4:  # the origin is inside the tetrahedron
            vx, vy, vz, vv = nx, ny, nz, nvv
            hit = True
            break
        wmax = 0.0
        for i in range(n):
            wmax = max(wmax, simp[0, i, 0] ** 2 + simp[0, i, 1] ** 2 + simp[0, i, 2] ** 2)
        if nvv <= _ROUND * _ROUND * wmax:
            vx, vy, vz, vv = nx, ny, nz, nvv
            hit = True
            break
        if nvv == vv:
            # A decrease below the rounding of |v|²: the new simplex is no worse and, in exact arithmetic,
            # better (it can move the points by ~sqrt(2 |v| × rounding) along a flat direction); but
            # |v| cannot improve further, so stop here.
            vx, vy, vz = nx, ny, nz
            break
        if not nvv < vv:
            # |v| must decrease in exact arithmetic; if rounding makes it grow, the previous simplex is the
            # better answer (and continuing could cycle).
            n = n_old
            for r in range(3):
                for i in range(n):
                    for c in range(3):
                        simp[r, i, c] = simp[3 + r, i, c]
            for i in range(4):
                lam[0, i] = lam[1, i]
            break
        vx, vy, vz, vv = nx, ny, nz, nvv
    return n, vx, vy, vz, vv, hit


@njit(cache=True, forceinline=True, refcount=False)
def _closest_points(simp, lam, n):
    """The closest points a ∈ A and b ∈ B: GJK's barycentric weights lam[0, :n] applied to the support
    points of A (simp[1]) and of B (simp[2])."""
    ax = ay = az = bx = by = bz = 0.0
    for i in range(n):
        ax += lam[0, i] * simp[1, i, 0]
        ay += lam[0, i] * simp[1, i, 1]
        az += lam[0, i] * simp[1, i, 2]
        bx += lam[0, i] * simp[2, i, 0]
        by += lam[0, i] * simp[2, i, 1]
        bz += lam[0, i] * simp[2, i, 2]
    return ax, ay, az, bx, by, bz


@njit(cache=True)
def gjk_distance(shape_a, shape_b, tol):
    """Distance between convex shapes A and B (shape tuples, see the module docstring), world frame.

    tol (m, >= 0): absolute accuracy. The returned distance is never below the true one (to rounding) and
    exceeds it by at most tol plus rounding: ~1e-14 × the coordinates' size for points, segments and
    polytopes (exact to rounding whatever tol), up to ~1e-12 × size for ellipsoids, whose support points
    cluster near the closest point until the simplex is too thin to improve (measured: tol = 1e-12 m gives
    <= 2e-12 m on shapes of 0.1–1 m). At most GJK_MAX_ITER iterations. Shapes closer than tol count as
    touching.

    Returns (dist, ax, ay, az, bx, by, bz): dist = |a − b| >= 0 and the closest points a ∈ A, b ∈ B.
    dist = 0.0 when A and B intersect or touch within tol; the points are then not meaningful.
    For smooth shapes the points' position along the surface is less accurate than dist: an error e
    along the surface changes the distance only by ~e² × curvature.

    Limitation (floating point, not the algorithm): when the distance is below ~sqrt(eps) × size
    (~1e-8 m for metre-sized shapes), the direction of v carries a rounding error ~eps × size / |v|, and a
    vertex of A − B whose normal cone is narrower than that (e.g. two segments that share an end and are
    antiparallel to within 1e-7 rad) can be missed. GJK then stops on the duplicate support with an
    error bounded by the returned distance itself, at worst ~1e-8 × size.
    """
    simp = np.zeros((6, 4, 3))
    lam = np.zeros((2, 4))
    n, vx, vy, vz, vv, hit = _gjk(shape_a, shape_b, tol, simp, lam)
    ax, ay, az, bx, by, bz = _closest_points(simp, lam, n)
    if hit:
        return 0.0, ax, ay, az, bx, by, bz
    return np.sqrt(vv), ax, ay, az, bx, by, bz


# ---------------------------------------------------------------------------------------------
# EPA.
# ---------------------------------------------------------------------------------------------


@njit(cache=True)
def _set_face(ev, fv, fnrm, fdist, f, i, j, k):
    """Face f = (i, j, k), counter-clockwise seen from outside. False if it has no usable normal."""
    nx, ny, nz = _tri_normal(ev, i, j, k)
    nn = np.sqrt(nx * nx + ny * ny + nz * nz)
    if not nn > 0.0 or not np.isfinite(nn):
        return False
    nx, ny, nz = nx / nn, ny / nn, nz / nn
    fv[f, 0], fv[f, 1], fv[f, 2] = i, j, k
    fnrm[f, 0], fnrm[f, 1], fnrm[f, 2] = nx, ny, nz
    # The mean over the three vertices of the plane offset averages the rounding of the normal.
    fdist[f] = (nx * (ev[i, 0] + ev[j, 0] + ev[k, 0]) + ny * (ev[i, 1] + ev[j, 1] + ev[k, 1])
                + nz * (ev[i, 2] + ev[j, 2] + ev[k, 2])) / 3.0
    return True


@njit(cache=True)
def _tetra_height(ev):
    """Smallest height of the tetrahedron ev[0..3] (m), and the sign of its volume."""
    d1x, d1y, d1z = ev[1, 0] - ev[0, 0], ev[1, 1] - ev[0, 1], ev[1, 2] - ev[0, 2]
    d2x, d2y, d2z = ev[2, 0] - ev[0, 0], ev[2, 1] - ev[0, 1], ev[2, 2] - ev[0, 2]
    d3x, d3y, d3z = ev[3, 0] - ev[0, 0], ev[3, 1] - ev[0, 1], ev[3, 2] - ev[0, 2]
    vol = _det(d1x, d1y, d1z, d2x, d2y, d2z, d3x, d3y, d3z)
    amax = 0.0  # twice the largest face area: the height over it is the smallest
    bi, bj, bk = 0, 1, 2
    for f in range(4):
        i, j, k = (1, 2, 3) if f == 0 else ((0, 2, 3) if f == 1 else ((0, 1, 3) if f == 2 else (0, 1, 2)))
        e1x, e1y, e1z = ev[j, 0] - ev[i, 0], ev[j, 1] - ev[i, 1], ev[j, 2] - ev[i, 2]
        e2x, e2y, e2z = ev[k, 0] - ev[i, 0], ev[k, 1] - ev[i, 1], ev[k, 2] - ev[i, 2]
        cx, cy, cz = e1y * e2z - e1z * e2y, e1z * e2x - e1x * e2z, e1x * e2y - e1y * e2x
        a = np.sqrt(cx * cx + cy * cy + cz * cz)
        if a > amax:
            amax = a
            bi, bj, bk = i, j, k
    if not amax > 0.0:
        return 0.0, vol, 0, 1, 2
    return abs(vol) / amax, vol, bi, bj, bk


@njit(cache=True)
def _grow(shape_a, shape_b, ev, n, eps):
    """Grow a simplex ev[:n] of A − B that holds the origin (within tol) to a tetrahedron.

    GJK stops as soon as the origin is within tol of its simplex, which may then be a point, a segment or
    a triangle. New vertices are supports of A − B off the simplex's affine hull, by more than eps (m).
    If there are none, A − B is flat (a point, a segment or a planar set): the origin is then on its
    boundary, the depth is 0, and any normal of the hull is a valid direction. Returns (n, nx, ny, nz):
    n = 4 on success, else n < 4 and (nx, ny, nz) such a unit normal.
    """
    if n == 1:
        for t in range(6):
            s = 1.0 if t % 2 == 0 else -1.0
            dx, dy, dz = (s, 0.0, 0.0) if t < 2 else ((0.0, s, 0.0) if t < 4 else (0.0, 0.0, s))
            w = _support_diff(shape_a, shape_b, dx, dy, dz)
            ex, ey, ez = w[0] - ev[0, 0], w[1] - ev[0, 1], w[2] - ev[0, 2]
            if ex * ex + ey * ey + ez * ez > eps * eps:
                ev[1, 0], ev[1, 1], ev[1, 2] = w[0], w[1], w[2]
                n = 2
                break
        if n == 1:
            return 1, 1.0, 0.0, 0.0
    if n == 2:
        tx, ty, tz = ev[1, 0] - ev[0, 0], ev[1, 1] - ev[0, 1], ev[1, 2] - ev[0, 2]
        tn = np.sqrt(tx * tx + ty * ty + tz * tz)
        tx, ty, tz = tx / tn, ty / tn, tz / tn
        # Two unit directions u1, u2 orthogonal to the segment: a point of A − B off the segment's line
        # has a positive component along one of ±u1, ±u2, so these four supports find it.
        if abs(tx) <= abs(ty) and abs(tx) <= abs(tz):
            u1x, u1y, u1z = 0.0, tz, -ty
        elif abs(ty) <= abs(tz):
            u1x, u1y, u1z = -tz, 0.0, tx
        else:
            u1x, u1y, u1z = ty, -tx, 0.0
        un = np.sqrt(u1x * u1x + u1y * u1y + u1z * u1z)
        u1x, u1y, u1z = u1x / un, u1y / un, u1z / un
        u2x, u2y, u2z = ty * u1z - tz * u1y, tz * u1x - tx * u1z, tx * u1y - ty * u1x
        for t in range(4):
            s = 1.0 if t % 2 == 0 else -1.0
            dx, dy, dz = (s * u1x, s * u1y, s * u1z) if t < 2 else (s * u2x, s * u2y, s * u2z)
            w = _support_diff(shape_a, shape_b, dx, dy, dz)
            ex, ey, ez = w[0] - ev[0, 0], w[1] - ev[0, 1], w[2] - ev[0, 2]
            along = ex * tx + ey * ty + ez * tz
            off2 = ex * ex + ey * ey + ez * ez - along * along
            if off2 > eps * eps:
                ev[2, 0], ev[2, 1], ev[2, 2] = w[0], w[1], w[2]
                n = 3
                break
        if n == 2:
            return 2, u1x, u1y, u1z
    nx, ny, nz = _tri_normal(ev, 0, 1, 2)
    nn = np.sqrt(nx * nx + ny * ny + nz * nz)
    if not nn > 0.0:  # only if the three points lie within ~1e-150 m of one another (underflow)
        return 3, 0.0, 0.0, 1.0
    nx, ny, nz = nx / nn, ny / nn, nz / nn
    # Search first on the side of the plane where the origin is, so the tetrahedron contains it even
    # when GJK left it slightly off the triangle; the other side is the fallback for the touching case.
    first = 1.0 if nx * ev[0, 0] + ny * ev[0, 1] + nz * ev[0, 2] <= 0.0 else -1.0
    for t in range(2):
        s = first if t == 0 else -first
        w = _support_diff(shape_a, shape_b, s * nx, s * ny, s * nz)
        h = (w[0] - ev[0, 0]) * nx + (w[1] - ev[0, 1]) * ny + (w[2] - ev[0, 2]) * nz
        if abs(h) > eps:
            ev[3, 0], ev[3, 1], ev[3, 2] = w[0], w[1], w[2]
            return 4, nx, ny, nz
    return 3, nx, ny, nz


@njit(cache=True)
def epa_workspace():
    """The arrays one EPA call works in (allocate once per thread, pass to ``epa_penetration_ws``):
    (simplex (6, 4, 3), weights (2, 4), vertices (V, 3), face planes (F, 4), face integers (F, 11) int32,
    horizon (V, 6) int32) with V = EPA_MAX_VERTS, F = EPA_MAX_FACES."""
    return (np.zeros((6, 4, 3)), np.zeros((2, 4)), np.empty((EPA_MAX_VERTS, 3)), np.empty((EPA_MAX_FACES, 4)),
            np.zeros((EPA_MAX_FACES, 11), np.int32), np.empty((EPA_MAX_VERTS, 6), np.int32))


@njit(cache=True)
def epa_penetration(shape_a, shape_b, tol):
    """``epa_penetration_ws`` with a workspace of its own (allocated per call)."""
    return epa_penetration_ws(shape_a, shape_b, tol, epa_workspace())


@njit(cache=True)
def _gjk_ws(shape_a, shape_b, tol, ws):
    """GJK in the workspace ``ws``: (simplex size, distance, unit n from B toward A, closest points a and b,
    hit); when hit (the shapes intersect or touch within tol) only the size is meaningful, and the simplex
    in ws[0], ws[1] is EPA's start."""
    simp, lam = ws[0], ws[1]
    simp[:] = 0.0
    lam[:] = 0.0
    n, vx, vy, vz, vv, hit = _gjk(shape_a, shape_b, tol, simp, lam)
    if hit:
        return n, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, True
    ax, ay, az, bx, by, bz = _closest_points(simp, lam, n)
    dist = np.sqrt(vv)
    return n, dist, vx / dist, vy / dist, vz / dist, ax, ay, az, bx, by, bz, False


@njit(cache=True)
def distance_ws(shape_a, shape_b, tol, ws):
    """Distance between convex shapes A and B (shape tuples, see the module docstring), world frame, by
    GJK alone in the workspace ``ws`` of ``epa_workspace()`` (no allocation, and no EPA compiled: for callers
    that know the shapes are apart).

    Returns (apart, distance, nx, ny, nz, ax, ay, az, bx, by, bz): n the unit normal from B toward A, a and b
    the closest points, as ``epa_penetration_ws`` reports shapes apart (depth = −distance); apart is False
    when the shapes intersect or touch within tol, and the rest is then zero.
    """
    n, dist, nx, ny, nz, ax, ay, az, bx, by, bz, hit = _gjk_ws(shape_a, shape_b, tol, ws)
    return not hit, dist, nx, ny, nz, ax, ay, az, bx, by, bz


@njit(cache=True)
def epa_penetration_ws(shape_a, shape_b, tol, ws):
    """Penetration depth of convex shapes A and B (shape tuples, see the module docstring), world frame.

    tol (m, >= 0): EPA stops when the support of A − B along the closest face's normal lies less than
    max(tol, 1e-11 × coordinate size) beyond that face. The depth is then exact to rounding for polytopes,
    points and segments, and within that bound of the true depth for ellipsoids.

    Returns (depth, nx, ny, nz, ax, ay, az, bx, by, bz, ok):
    - n: unit normal pointing FROM B TOWARD A; translating A by depth · n leaves A and B touching.
    - depth (m): the support of A − B along −n, an upper bound on the true depth; depth >= 0 whenever
      A and B intersect or are within tol of each other.
    - a = s_A(−n), the deepest point of A along n; b = s_B(n), the deepest point of B along −n;
      (b − a) · n = depth (to rounding, before clamping at 0).
    - ok: True when the depth is certified within the tolerance above (the least face distance of the
      polytope, a lower bound, is that close to the depth). False if EPA ran out of capacity or met a
      degenerate polytope; the result is then the best face found: a valid separating direction and
      distance, but not necessarily the minimal one. Smooth shapes whose Minkowski difference has its
      centre of curvature near the origin (nearly concentric spheres: every direction almost as deep)
      need a number of faces that grows like 1/(centre offset), and exhaust EPA_MAX_VERTS: for two
      spheres, once the centres are closer than ~0.2 (ra + rb); the depth is then still within
      ~2e-4 (ra + rb) of the true one, with ok = False.
    If A and B are separated by more than tol, the result is the signed distance from GJK instead:
    depth = −distance < 0, n = (a − b)/|a − b| with a, b the closest points, ok = True.
    Flat Minkowski differences (e.g. two crossing segments, a point on a polygon) have depth 0 and n
    normal to their plane or line.
    ``ws``: the arrays of ``epa_workspace()``, overwritten (no allocation here).
    """
    simp, lam, ev, face_real, face_int, horizon = ws
    n, dist, nx, ny, nz, ax, ay, az, bx, by, bz, hit = _gjk_ws(shape_a, shape_b, tol, ws)
    if not hit:
        return -dist, nx, ny, nz, ax, ay, az, bx, by, bz, True

    scale = 0.0
    for i in range(n):
        for r in range(3):
            scale = max(scale, np.sqrt(simp[r, i, 0] ** 2 + simp[r, i, 1] ** 2 + simp[r, i, 2] ** 2))
        for c in range(3):
            ev[i, c] = simp[0, i, c]
    eps = _EPA_REL * scale

    if n == 4:
        h, vol, i, j, k = _tetra_height(ev)
        if not h > eps:
            # GJK's tetrahedron is too flat to orient reliably: restart from its largest face.
            for c in range(3):
                simp[3, 0, c], simp[3, 1, c], simp[3, 2, c] = ev[i, c], ev[j, c], ev[k, c]
            for c in range(3):
                ev[0, c], ev[1, c], ev[2, c] = simp[3, 0, c], simp[3, 1, c], simp[3, 2, c]
            n = 3
    if n < 4:
        n, mx, my, mz = _grow(shape_a, shape_b, ev, n, eps)
        if n < 4:
            w = _support_diff(shape_a, shape_b, mx, my, mz)
            depth = max(0.0, mx * w[0] + my * w[1] + mz * w[2])
            return depth, -mx, -my, -mz, w[3], w[4], w[5], w[6], w[7], w[8], True
        h, vol, i, j, k = _tetra_height(ev)
    if vol < 0.0:  # orient so that the faces below have outward normals
        for c in range(3):
            ev[1, c], ev[2, c] = ev[2, c], ev[1, c]

    # Only rows of live faces (and of vertices below nvert) are ever read, so most arrays need no zeroing.
    fv = face_int[:, 0:3]
    fadj = face_int[:, 3:6]  # fadj[f, e]: face across edge e = fv[f, e] → fv[f, e+1]
    fnrm = face_real[:, 0:3]
    fdist = face_real[:, 3]
    alive = face_int[:, 6]  # 1 for a live face
    mark = face_int[:, 7]  # +it: visible in iteration it, −it: seen, not visible
    free = face_int[:, 8]
    stack = face_int[:, 9]
    seen = face_int[:, 10]
    alive[:] = 0
    mark[:] = 0
    # The horizon is a simple loop through polytope vertices, so it has fewer than EPA_MAX_VERTS edges;
    # a longer one is caught (as a failure) before it could overflow.
    hor = horizon[:, 0:4]  # horizon edge: i, j, outer face, its edge index
    hnext = horizon[:, 4]
    hface = horizon[:, 5]
    nfree = EPA_MAX_FACES - 4
    for s in range(nfree):
        free[s] = EPA_MAX_FACES - 1 - s

    ok = (_set_face(ev, fv, fnrm, fdist, 0, 0, 2, 1) and _set_face(ev, fv, fnrm, fdist, 1, 0, 1, 3)
          and _set_face(ev, fv, fnrm, fdist, 2, 0, 3, 2) and _set_face(ev, fv, fnrm, fdist, 3, 1, 2, 3))
    for f in range(4):
        alive[f] = 1
        for e in range(3):
            a, b = fv[f, e], fv[f, (e + 1) % 3]
            for g in range(4):
                for e2 in range(3):
                    if fv[g, e2] == b and fv[g, (e2 + 1) % 3] == a:
                        fadj[f, e] = g
    nvert = 4
    ftop = 4  # faces are taken lowest-index first from `free`, so live faces all lie below ftop

    # The best direction so far: the face normal m whose support h(m) = max (A − B)·m was least. Each h(m)
    # bounds the depth from above; the fallback, if EPA cannot start, is the line of centres.
    cax, cay, caz = _centre(shape_a)
    cbx, cby, cbz = _centre(shape_b)
    ux, uy, uz = cbx - cax, cby - cay, cbz - caz
    un = np.sqrt(ux * ux + uy * uy + uz * uz)
    ux, uy, uz = (ux / un, uy / un, uz / un) if un > 0.0 else (0.0, 0.0, -1.0)
    upper = np.inf
    converged = False
    it = 0
    while ok:
        it += 1
        f = -1
        d = np.inf
        for g in range(ftop):
            if alive[g] and fdist[g] < d:
                d = fdist[g]
                f = g
        mx, my, mz = fnrm[f, 0], fnrm[f, 1], fnrm[f, 2]
        w = _support_diff(shape_a, shape_b, mx, my, mz)
        # The closest face's plane is at distance d from the origin, a lower bound on the depth (the
        # polytope lies inside A − B), and every h(m) is an upper bound: stop when they meet within tol.
        h = mx * w[0] + my * w[1] + mz * w[2]
        if h < upper:
            upper, ux, uy, uz = h, mx, my, mz
        if upper - d <= max(tol, eps):
            converged = True
            break
        if nvert == EPA_MAX_VERTS:
            break
        ev[nvert, 0], ev[nvert, 1], ev[nvert, 2] = w[0], w[1], w[2]

        # Faces visible from w, by flood fill from f over the adjacency: the visible region is then
        # connected, and its boundary (the horizon) is collected with the invisible face beyond each edge.
        mark[f] = it
        stack[0] = f
        nstack = 1
        seen[0] = f
        nseen = 1
        nh = 0
        while nstack > 0:
            nstack -= 1
            g = stack[nstack]
            for e in range(3):
                o = fadj[g, e]
                if mark[o] != it and mark[o] != -it:
                    vis = fnrm[o, 0] * w[0] + fnrm[o, 1] * w[1] + fnrm[o, 2] * w[2] - fdist[o]
                    if vis > eps:
                        mark[o] = it
                        stack[nstack] = o
                        nstack += 1
                        seen[nseen] = o
                        nseen += 1
                        continue
                    mark[o] = -it
                if mark[o] == -it:
                    if nh == EPA_MAX_VERTS:
                        ok = False
                        break
                    eo = -1
                    for e2 in range(3):
                        if fadj[o, e2] == g:
                            eo = e2
                    hor[nh, 0], hor[nh, 1], hor[nh, 2], hor[nh, 3] = fv[g, e], fv[g, (e + 1) % 3], o, eo
                    nh += 1
        # The horizon must be one simple loop (it is for a convex polytope; rounding could break that).
        for h1 in range(nh):
            hnext[h1] = -1
            for h2 in range(nh):
                if hor[h2, 0] == hor[h1, 1]:
                    if hnext[h1] >= 0:
                        ok = False
                    hnext[h1] = h2
            if hnext[h1] < 0 or hor[h1, 3] < 0:
                ok = False
        if ok:
            h1, steps = 0, 0
            while True:
                h1 = hnext[h1]
                steps += 1
                if h1 == 0 or steps > nh:
                    break
            ok = steps == nh and nh >= 3 and nfree + nseen >= nh
        if not ok:
            break
        for s in range(nseen):
            alive[seen[s]] = 0
            free[nfree] = seen[s]
            nfree += 1
        for h1 in range(nh):
            nfree -= 1
            g = free[nfree]
            ftop = max(ftop, g + 1)
            hface[h1] = g
            alive[g] = 1
            if not _set_face(ev, fv, fnrm, fdist, g, hor[h1, 0], hor[h1, 1], nvert):
                ok = False
            fadj[g, 0] = hor[h1, 2]
            fadj[hor[h1, 2], hor[h1, 3]] = g
        for h1 in range(nh):
            # face (i, j, w): its edge j → w is the edge w → j of the next face (j, k, w)
            fadj[hface[h1], 1] = hface[hnext[h1]]
            fadj[hface[hnext[h1]], 2] = hface[h1]
        nvert += 1

    # n = −m: the face normal m points out of A − B, and moving A by h(m) along −m empties the origin.
    w = _support_diff(shape_a, shape_b, ux, uy, uz)
    depth = max(0.0, ux * w[0] + uy * w[1] + uz * w[2])
    return depth, -ux, -uy, -uz, w[3], w[4], w[5], w[6], w[7], w[8], converged
