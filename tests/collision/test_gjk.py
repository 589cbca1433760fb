"""GJK distance and EPA penetration (``tumble.collision.gjk``) against independent references.

References (none uses the kernels' own output):
- closed forms: point–point, point–segment (clamped projection), axis-aligned box overlaps, sphere pairs,
  sphere–box (clamp to the box), a point inside a box, a segment through a box, shapes against themselves;
- ``scipy.optimize.lsq_linear`` (bounded least squares, BVLS active set, exact to rounding): segment–segment
  and box–box distances, with each box parametrised by its body coordinates |u_i| <= h_i;
- Eberly's 1-D root (``scipy.optimize.brentq``) for the distance from a point to an ellipsoid, and its
  minimum over a box with L-BFGS-B (the distance to a convex set is convex, so that minimum is global);
- separating-axis depth of two boxes over the 15 candidate axes (face normals and edge crosses): the
  penetration depth of two boxes is the least overlap over exactly these axes (the facet normals of A − B).

Tolerances (all shapes O(0.1)–O(3) m; stated per test where they differ):
- ROUND = 1e-12 m: exact answers (polytopes, points, segments). GJK/EPA on them end on exact supports, and
  each output is a few dozen flops of O(1) numbers, so rounding is ~1e-15; 1e-12 leaves three digits.
- ellipsoids: GJK runs at tol = 1e-12 m (the duality gap bounds |v| − dist <= tol); the rounding of the
  signed volumes for support points that cluster near the closest point adds up to ~1e-12 (measured
  2e-12 worst over hundreds of random pairs), so 1e-10 is asserted: far below the 1e-9 m requirement
  and far below any formula error (O(1e-2) m for a wrong support mapping).
- EPA on polytopes runs at tol = 0, where it stops once the new support lies within 1e-11 × (coordinate
  size) of the closest face: exact to ROUND. On smooth shapes it runs at EPA_TOL = 1e-9 m, and its depth
  is then an upper bound within EPA_TOL of the true one.
- DEGENERATE = 1e-7 m: below ~sqrt(eps) × size, GJK's distance is bounded only by itself in
  near-degenerate configurations (see ``check_points`` and ``gjk_distance``).
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import assume, example, given, settings
from hypothesis import strategies as st
from scipy.optimize import brentq, lsq_linear, minimize
from scipy.spatial.transform import Rotation

from tumble.collision.gjk import (
    SHAPE_ELLIPSOID,
    SHAPE_POINT,
    SHAPE_POLYTOPE,
    SHAPE_SEGMENT,
    epa_penetration,
    gjk_distance,
    shape,
    support,
)

SETTINGS = settings(max_examples=40, deadline=None)  # deadline=None: the first call compiles (Numba)
FEW = settings(max_examples=15, deadline=None)  # for tests whose scipy reference is slow
ROUND = 1e-12
GJK_TOL = 1e-12
EPA_TOL = 1e-9
ELL_DIST = 1e-10
DEGENERATE = 1e-7  # m: sqrt(eps) × 4 m (the largest coordinate differences here) ≈ 6e-8, rounded up

DUMMY = np.zeros((1, 3))
SIGNS = np.array(list(itertools.product((-1.0, 1.0), repeat=3)))

coord = st.floats(-2.0, 2.0, allow_nan=False, allow_infinity=False)
points = st.tuples(coord, coord, coord).map(np.array)
rotations = st.integers(0, 2**32 - 1).map(lambda s: Rotation.random(random_state=s))
halves = st.tuples(*[st.floats(0.1, 1.0)] * 3).map(np.array)
unit_vectors = (st.tuples(*[st.floats(-1.0, 1.0)] * 3).map(np.array)
                .filter(lambda v: np.linalg.norm(v) > 0.1).map(lambda v: v / np.linalg.norm(v)))


# ---------------------------------------------------------------------------------------------
# Shape arguments (the kernels' 13-argument form) and NumPy descriptions for the references.
# ---------------------------------------------------------------------------------------------


def f3(v):
    return float(v[0]), float(v[1]), float(v[2])


def point(c):
    return (SHAPE_POINT, *f3(c), 1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, DUMMY, 0)


def segment(c0, c1):
    return (SHAPE_SEGMENT, *f3(c0), 1.0, 0.0, 0.0, 0.0, *f3(c1), DUMMY, 0)


def scalar_first(rot):
    x, y, z, w = rot.as_quat()  # SciPy is scalar-last
    return float(w), float(x), float(y), float(z)


def ellipsoid(c, rot, s):
    return (SHAPE_ELLIPSOID, *f3(c), *scalar_first(rot), *f3(s), DUMMY, 0)


def sphere(c, r):
    return ellipsoid(c, Rotation.identity(), np.array([r, r, r]))


def polytope(v):
    v = np.ascontiguousarray(v, dtype=np.float64)
    return (SHAPE_POLYTOPE, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, v, len(v))


class Box:
    """World box {c + R u : |u_i| <= h_i}."""

    def __init__(self, c, rot, h):
        self.c, self.R, self.h = np.asarray(c, float), rot.as_matrix(), np.asarray(h, float)

    @property
    def vertices(self):
        return self.c + (SIGNS * self.h) @ self.R.T

    @property
    def args(self):
        return polytope(self.vertices)

    def excess(self, x):
        """Largest violation of the six halfspace inequalities |R_iᵀ (x − c)| <= h_i (<= 0: inside)."""
        return float(np.max(np.abs(self.R.T @ (np.asarray(x) - self.c)) - self.h))

    def moved(self, t):
        b = Box(self.c + t, Rotation.identity(), self.h)
        b.R = self.R
        return b


def aabb(c, h):
    return Box(c, Rotation.identity(), h)


def seg_seg_ref(p0, p1, q0, q1):
    """min |p0 + s (p1 − p0) − q0 − t (q1 − q0)| over s, t in [0, 1], as bounded least squares."""
    m = np.stack([p1 - p0, -(q1 - q0)], axis=1)
    r = lsq_linear(m, q0 - p0, bounds=(0.0, 1.0), method="bvls", tol=1e-15)
    return float(np.linalg.norm(m @ r.x - (q0 - p0)))


def box_box_ref(a: Box, b: Box):
    """min |c_A + R_A u − c_B − R_B w| over the two boxes' body coordinates (6 bounded variables)."""
    m = np.hstack([a.R, -b.R])
    r = lsq_linear(m, b.c - a.c, bounds=(np.r_[-a.h, -b.h], np.r_[a.h, b.h]), method="bvls", tol=1e-15)
    return float(np.linalg.norm(m @ r.x - (b.c - a.c)))


def ellipsoid_point_ref(c, rot, s, x):
    """Distance from x to the ellipsoid and the closest point (Eberly, "Distance from a point to an
    ellipse, an ellipsoid, or a hyperellipsoid", 2013): for y = Rᵀ(x − c) outside, the closest point is
    s_i² y_i / (t + s_i²) with t > 0 the root of Σ (s_i y_i / (t + s_i²))² = 1, which is decreasing in t."""
    R = rot.as_matrix()
    y = R.T @ (np.asarray(x) - c)
    if np.sum((y / s) ** 2) <= 1.0:
        return 0.0, np.asarray(x, float)
    t = brentq(lambda t: np.sum((s * y / (t + s * s)) ** 2) - 1.0, 0.0, np.max(s) * np.linalg.norm(y),
               xtol=1e-300, rtol=4 * np.finfo(float).eps, maxiter=500)
    z = s * s * y / (t + s * s)
    return float(np.linalg.norm(y - z)), c + R @ z


def sat_depth(a: Box, b: Box):
    """Penetration depth of two boxes: least projection overlap over the 15 axes of the SAT."""
    axes = [a.R[:, i] for i in range(3)] + [b.R[:, i] for i in range(3)]
    for i in range(3):
        for j in range(3):
            c = np.cross(a.R[:, i], b.R[:, j])
            if np.linalg.norm(c) > 1e-9:  # parallel edges: their cross is no facet normal of A − B
                axes.append(c / np.linalg.norm(c))
    d = a.c - b.c
    return min(np.sum(a.h * np.abs(a.R.T @ u)) + np.sum(b.h * np.abs(b.R.T @ u)) - abs(d @ u) for u in axes)


def nest(flat):
    """The kernels' shape tuple (gjk module docstring) of a flat (kind, p, q, s, verts, nv) tuple."""
    return shape(flat[0], flat[1:4], flat[4:8], flat[8:11], flat[11], flat[12])


def dist(a, b, tol=GJK_TOL):
    return gjk_distance(nest(a), nest(b), tol)


def epa(a, b, tol=EPA_TOL):
    return epa_penetration(nest(a), nest(b), tol)


def unpack_epa(out):
    depth, nx, ny, nz, ax, ay, az, bx, by, bz, ok = out
    return depth, np.array([nx, ny, nz]), np.array([ax, ay, az]), np.array([bx, by, bz]), ok


# ---------------------------------------------------------------------------------------------
# Support mappings.
# ---------------------------------------------------------------------------------------------


@SETTINGS
@given(points, rotations, halves, points.filter(lambda d: np.linalg.norm(d) > 1e-3))
def test_ellipsoid_support_is_the_tangent_point(c, rot, s, d):
    """The support point lies on the surface and the outward normal there, R S⁻² Rᵀ (x − c), is parallel
    to d (first-order optimality of max d·x on the ellipsoid). 1e-12: a few dozen flops on O(1) numbers."""
    x = np.array(support(nest(ellipsoid(c, rot, s)), *f3(d)))
    R = rot.as_matrix()
    y = R.T @ (x - c)
    assert abs(np.sum((y / s) ** 2) - 1.0) < ROUND
    normal = R @ (y / s**2)
    assert np.linalg.norm(np.cross(normal / np.linalg.norm(normal), d / np.linalg.norm(d))) < ROUND
    assert normal @ d > 0.0


@SETTINGS
@given(st.lists(points, min_size=1, max_size=12), points)
def test_polytope_and_segment_support_maximise(vs, d):
    v = np.array(vs)
    x = support(nest(polytope(v)), *f3(d))
    assert np.max(v @ d) == pytest.approx(np.dot(x, d), abs=ROUND)
    y = support(nest(segment(v[0], v[-1])), *f3(d))
    assert max(v[0] @ d, v[-1] @ d) == pytest.approx(np.dot(y, d), abs=ROUND)


# ---------------------------------------------------------------------------------------------
# GJK distance: points, segments, boxes, ellipsoids.
# ---------------------------------------------------------------------------------------------


def check_points(out, ref_dist, in_a, in_b, tol=ROUND):
    """dist matches, the points lie in their shapes (in_a, in_b: excess >= 0 outside) and |a − b| = dist."""
    d, a, b = out[0], np.array(out[1:4]), np.array(out[4:7])
    if d == 0.0:  # reported as touching: the shapes are within GJK_TOL
        assert ref_dist <= GJK_TOL + tol
        return
    assert d >= ref_dist - tol  # |v| is a point of A − B: never shorter than the distance
    if d < DEGENERATE:
        # Distances below ~sqrt(eps) × size can be near-degenerate (see gjk_distance: a vertex of A − B
        # with a normal cone narrower than the rounding of the search direction, e.g. two segments
        # sharing an end at an angle of 1e-7 rad); the error is then bounded only by d itself.
        assert ref_dist <= d + tol
    else:
        assert d == pytest.approx(ref_dist, abs=tol)
    if ref_dist > 10 * GJK_TOL:
        assert in_a(a) <= ROUND and in_b(b) <= ROUND
        assert np.linalg.norm(a - b) == pytest.approx(d, abs=ROUND)


@SETTINGS
@given(points, points)
@example(np.zeros(3), np.zeros(3))
def test_point_point(p, q):
    out = dist(point(p), point(q))
    ref = float(np.linalg.norm(p - q))
    if ref > GJK_TOL:
        assert out[0] == pytest.approx(ref, abs=ROUND)
        assert np.allclose(out[1:4], p, atol=ROUND, rtol=0) and np.allclose(out[4:7], q, atol=ROUND, rtol=0)
    else:
        assert out[0] == 0.0


def point_segment_ref(p, c0, c1):
    t = np.clip((p - c0) @ (c1 - c0) / ((c1 - c0) @ (c1 - c0)), 0.0, 1.0)
    x = c0 + t * (c1 - c0)
    return float(np.linalg.norm(p - x)), x


def on_segment(c0, c1):
    if (c1 - c0) @ (c1 - c0) > 0.0:  # not merely c1 != c0: a length of 1e-301 squares to 0
        return lambda x: point_segment_ref(x, c0, c1)[0]
    return lambda x: np.linalg.norm(x - c0)


@SETTINGS
@given(points, points, points)
@example(np.array([0.5, 1.0, 0.0]), np.zeros(3), np.array([1.0, 0.0, 0.0]))  # interior foot
@example(np.array([0.5, 0.0, 0.0]), np.zeros(3), np.array([1.0, 0.0, 0.0]))  # on the segment
@example(np.array([-1.0, 1.0, 0.0]), np.zeros(3), np.array([1.0, 0.0, 0.0]))  # beyond an end
def test_point_segment(p, c0, c1):
    assume(np.linalg.norm(c1 - c0) > 1e-6)
    ref, x = point_segment_ref(p, c0, c1)
    out = dist(point(p), segment(c0, c1))
    check_points(out, ref, lambda a: np.linalg.norm(a - p), on_segment(c0, c1))
    if ref > 10 * GJK_TOL:
        # The closest point of a segment is unique but ill-conditioned: moving it by e along the segment
        # changes the distance only by ~e²/(2 dist), so a distance exact to rounding (~1e-15 for dist <= 7)
        # fixes the point only to sqrt(2 × 7 × 1e-15) ≈ 1e-7.
        assert np.allclose(out[4:7], x, atol=1e-7, rtol=0)
    back = dist(segment(c0, c1), point(p))  # swapping A and B swaps the points
    check_points(back, ref, on_segment(c0, c1), lambda b: np.linalg.norm(b - p))


@SETTINGS
@given(points, points, points, points)
@example(np.zeros(3), np.array([1.0, 0, 0]), np.array([0, 1.0, 0]), np.array([1.0, 1.0, 0]))  # parallel
@example(np.zeros(3), np.array([1.0, 0, 0]), np.array([0.5, -1, 0]), np.array([0.5, 1.0, 0]))  # crossing
@example(np.zeros(3), np.array([1.0, 0, 0]), np.array([2.0, 0, 0]), np.array([3.0, 0, 0]))  # collinear
@example(np.zeros(3), np.array([1.0, 0, 0]), np.array([0.5, -1, 1]), np.array([0.5, 1.0, 1]))  # skew
def test_segment_segment(p0, p1, q0, q1):
    """Reference: BVLS over (s, t) in [0, 1]², exact to rounding (checked at 1e-12 against an exhaustive
    feature enumeration while writing this test). The distance is well conditioned even when the
    closest points are not (parallel segments)."""
    ref = seg_seg_ref(p0, p1, q0, q1)
    out = dist(segment(p0, p1), segment(q0, q1))
    check_points(out, ref, on_segment(p0, p1), on_segment(q0, q1))


box_pairs = st.tuples(points, rotations, halves, rotations, halves, unit_vectors, st.floats(0.0, 3.0))


def make_pair(c, ra, ha, rb, hb, u, gap):
    """Two boxes, B's centre along u from A's at the sum of their circumradii scaled by gap."""
    reach = np.linalg.norm(ha) + np.linalg.norm(hb)
    return Box(c, ra, ha), Box(c + u * reach * gap, rb, hb)


@SETTINGS
@given(box_pairs)
def test_box_box_separated(pair):
    a, b = make_pair(*pair)
    ref = box_box_ref(a, b)
    assume(ref > 1e-3)
    out = dist(a.args, b.args)
    check_points(out, ref, a.excess, b.excess)


@SETTINGS
@given(box_pairs)
def test_box_box_intersecting(pair):
    a, b = make_pair(*pair)
    ref = box_box_ref(a, b)
    assume(ref < 1e-9)  # BVLS reaches a zero residual to ~1e-16 when the boxes overlap
    assert dist(a.args, b.args)[0] == 0.0


@SETTINGS
@given(points, rotations, halves, unit_vectors, st.floats(0.0, 3.0))
@example(np.zeros(3), Rotation.identity(), np.array([1.0, 0.5, 0.25]), np.array([0.0, 0.0, 1.0]), 2.0)
@example(np.zeros(3), Rotation.identity(), np.array([0.3, 0.3, 0.3]), np.array([1.0, 0.0, 0.0]), 1.5)  # sphere
def test_ellipsoid_point(c, rot, s, u, scale):
    """Reference: Eberly's root. ELL_DIST for the distance (module docstring). The closest point is less
    accurate: a point e off the true one along the surface changes the distance by only ~e²/(2ρ), ρ the
    radius of curvature (<= 1 m / 0.1 m · 1 m = 10 m here), so dist within 1e-12 allows e up to
    ~sqrt(2 · 10 · 1e-12) ≈ 5e-6; 1e-5 is asserted."""
    x = c + u * np.max(s) * scale
    ref, z = ellipsoid_point_ref(c, rot, s, x)
    out = dist(ellipsoid(c, rot, s), point(x))
    d, a = out[0], np.array(out[1:4])
    if ref == 0.0:
        assert d == 0.0
        return
    assert d == pytest.approx(ref, abs=ELL_DIST)
    assert d >= ref - ROUND  # the convex combination of supports lies in the ellipsoid: never too short
    y = rot.as_matrix().T @ (a - c)
    assert np.sum((y / s) ** 2) <= 1.0 + ROUND
    if ref > 1e-6:
        assert np.linalg.norm(a - z) < 1e-5
    assert np.allclose(out[4:7], x, atol=ROUND, rtol=0)


@FEW
@given(points, rotations, halves, rotations, halves, unit_vectors, st.floats(1.0, 3.0))
def test_ellipsoid_box_separated(c, re, s, rb, h, u, gap):
    """Reference: min over the box of Eberly's distance (L-BFGS-B from the box centre; the objective is
    convex and C¹ outside the ellipsoid, so the local minimum is global). L-BFGS-B stops on a projected
    gradient of 1e-14, far inside ELL_DIST."""
    box = Box(c + u * (np.max(s) + np.linalg.norm(h)) * gap, rb, h)

    def f(w):
        x = box.c + box.R @ w
        d, z = ellipsoid_point_ref(c, re, s, x)
        if d == 0.0:
            return 0.0, np.zeros(3)
        return d, box.R.T @ ((x - z) / d)

    res = minimize(f, np.zeros(3), jac=True, method="L-BFGS-B", bounds=list(zip(-h, h, strict=True)),
                   options=dict(ftol=1e-16, gtol=1e-14, maxiter=1000))
    assume(res.fun > 1e-3)
    out = dist(ellipsoid(c, re, s), box.args)
    assert out[0] == pytest.approx(res.fun, abs=ELL_DIST)
    a, b = np.array(out[1:4]), np.array(out[4:7])
    assert np.sum((re.as_matrix().T @ (a - c) / s) ** 2) <= 1.0 + ROUND
    assert box.excess(b) <= ROUND
    assert np.linalg.norm(a - b) == pytest.approx(out[0], abs=ROUND)


# ---------------------------------------------------------------------------------------------
# EPA penetration.
# ---------------------------------------------------------------------------------------------


def check_consistent(a_args, b_args, out, in_a, in_b, require_ok=True):
    """Properties every EPA answer must have: |n| = 1, witnesses in their shapes with (b − a)·n = depth,
    and moving A by (depth + 1e-6) n separates the shapes. 1e-6 m is far above EPA_TOL, so a converged
    depth (an upper bound within EPA_TOL) must separate; a wrong normal or depth would not. The last holds
    even when EPA stops uncertified (ok = False): its depth is h(n) of its best normal, an upper bound."""
    depth, n, a, b, ok = unpack_epa(out)
    assert ok or not require_ok
    assert np.linalg.norm(n) == pytest.approx(1.0, abs=ROUND)
    assert in_a(a) <= ROUND and in_b(b) <= ROUND
    assert (b - a) @ n == pytest.approx(depth, abs=ROUND)
    moved = list(a_args)
    if moved[0] == SHAPE_POLYTOPE:
        moved[11] = moved[11] + (depth + 1e-6) * n
    else:
        moved[1:4] = (np.array(moved[1:4]) + (depth + 1e-6) * n).tolist()
        if moved[0] == SHAPE_SEGMENT:
            moved[8:11] = (np.array(moved[8:11]) + (depth + 1e-6) * n).tolist()
    assert dist(tuple(moved), b_args)[0] > 0.0


@SETTINGS
@given(points, halves, points.map(lambda p: p / 2), halves)
@example(np.zeros(3), np.array([0.5, 0.5, 0.5]), np.array([0.5, 0.3, 0.1]), np.array([0.5, 0.5, 0.5]))
def test_epa_axis_aligned_boxes(c, ha, off, hb):
    """Closed form: the overlap along axis i is h_A,i + h_B,i − |Δ_i|; the depth is the least one and the
    normal is sign(Δ_i) e_i, Δ = c_A − c_B."""
    delta = off
    overlap = ha + hb - np.abs(delta)
    assume(np.all(overlap > 1e-3))
    order = np.sort(overlap)
    assume(order[1] - order[0] > 1e-6)  # a unique minimal axis, so the normal is determined
    i = int(np.argmin(overlap))
    assume(abs(delta[i]) > 1e-6)  # and its sign
    a, b = aabb(c + delta, ha), aabb(c, hb)
    out = epa(a.args, b.args, tol=0.0)
    depth, n, _, _, _ = unpack_epa(out)
    assert depth == pytest.approx(overlap[i], abs=ROUND)
    expect = np.zeros(3)
    expect[i] = np.sign(delta[i])
    assert np.allclose(n, expect, atol=1e-9, rtol=0)  # 1e-9: normal of a face of A − B, to rounding
    check_consistent(a.args, b.args, out, a.excess, b.excess)


@SETTINGS
@given(points, st.floats(0.1, 1.0), unit_vectors, st.floats(0.3, 0.99), rotations)
@example(np.zeros(3), 0.5, np.array([1.0, 0.0, 0.0]), 0.3, Rotation.identity())
def test_epa_sphere_point(c, r, u, frac, rot):
    """Closed form: depth r − |p − c|, normal (p − c)/|p − c| from the sphere B toward the point A (and
    reversed when the point is B). EPA_TOL bounds the depth from above only (module docstring).
    |p − c| >= 0.3 r here; nearer the centre see test_epa_near_concentric."""
    p = c + u * r * frac
    s = ellipsoid(c, rot, np.array([r, r, r]))  # a rotated sphere: exercises the quaternion path
    true = r - r * frac

    def in_sphere(x):
        return np.linalg.norm(x - c) - r

    for a_args, b_args, sign, in_a, in_b in ((point(p), s, 1.0, lambda x: np.linalg.norm(x - p), in_sphere),
                                             (s, point(p), -1.0, in_sphere, lambda x: np.linalg.norm(x - p))):
        out = epa(a_args, b_args)
        depth, n, _, _, _ = unpack_epa(out)
        assert true - ROUND <= depth <= true + EPA_TOL + ROUND
        # depth along n is r − sign (p − c)·n, so the bound on the depth also bounds the angle of n
        assert depth == pytest.approx(r - sign * ((p - c) @ n), abs=ROUND)
        check_consistent(a_args, b_args, out, in_a, in_b)


@SETTINGS
@given(points, st.floats(0.1, 1.0), st.floats(0.1, 1.0), unit_vectors, st.floats(0.3, 0.99))
def test_epa_spheres(c, ra, rb, u, frac):
    """Closed form: depth ra + rb − |c_A − c_B| along (c_A − c_B)/|c_A − c_B|."""
    ca = c + u * (ra + rb) * frac
    a, b = sphere(ca, ra), sphere(c, rb)
    out = epa(a, b)
    depth, n, _, _, _ = unpack_epa(out)
    true = ra + rb - np.linalg.norm(ca - c)
    assert true - ROUND <= depth <= true + EPA_TOL + ROUND
    assert depth == pytest.approx(ra + rb - (ca - c) @ n, abs=ROUND)
    check_consistent(a, b, out, lambda x: np.linalg.norm(x - ca) - ra, lambda x: np.linalg.norm(x - c) - rb)


@SETTINGS
@given(points, st.floats(0.1, 1.0), st.floats(0.1, 1.0), unit_vectors, st.floats(0.0, 0.3))
@example(np.zeros(3), 0.5, 0.3, np.array([0.0, 0.0, 1.0]), 0.0)  # coincident centres
def test_epa_near_concentric(c, ra, rb, u, frac):
    """Nearly concentric spheres: A − B is a sphere with the origin near its centre, every direction is
    almost as deep, and certifying the depth to EPA_TOL needs more faces than EPA's capacity (see
    ``epa_penetration``). The answer must still be a valid separating translation, an upper bound on the
    depth; 1e-3 (ra + rb) is the accuracy measured at capacity (worst 1.7e-4 over 300 random pairs)."""
    ca = c + u * (ra + rb) * frac
    a, b = sphere(ca, ra), sphere(c, rb)
    out = epa(a, b)
    depth, n, _, _, ok = unpack_epa(out)
    true = ra + rb - np.linalg.norm(ca - c)
    assert true - ROUND <= depth <= true + 1e-3 * (ra + rb)
    check_consistent(a, b, out, lambda x: np.linalg.norm(x - ca) - ra, lambda x: np.linalg.norm(x - c) - rb,
                     require_ok=False)


def box_edge_distance(y, h):
    """Distance from body-frame point y to the nearest edge of the box |u_i| <= h_i."""
    best = np.inf
    for k in range(3):
        i, j = (k + 1) % 3, (k + 2) % 3
        best = min(best, np.sqrt((abs(y[i]) - h[i]) ** 2 + (abs(y[j]) - h[j]) ** 2 + max(abs(y[k]) - h[k], 0.0) ** 2))
    return best


@SETTINGS
@given(points, st.floats(0.1, 1.0), rotations, halves, st.tuples(*[st.floats(-1.5, 1.5)] * 3).map(np.array))
@example(np.zeros(3), 1.0, Rotation.identity(), np.array([0.125, 0.125, 0.125]), np.zeros(3))  # concentric
@example(np.zeros(3), 0.5, Rotation.identity(), np.array([0.5, 0.5, 0.5]), np.ones(3))  # centre on a corner
def test_epa_sphere_box(c, r, rot, h, w):
    """Closed form (sphere A, box B): centre outside the box, depth r − |x − clamp(x)|; centre inside,
    depth r + (least distance to a face).

    Near an edge of the box (closer than 0.2 r) the boundary of A − B is a rounded edge, a cylinder of
    radius r about an axis that passes near the origin: the nearly concentric case of
    ``epa_penetration``, where EPA may run out of capacity (ok = False, measured for edge distances up to
    0.14 r). There the depth must still be a valid upper bound, within 1e-3 r (measured worst 1e-4 r
    over 3000 near-edge pairs); elsewhere it must be certified within EPA_TOL."""
    box = Box(c, rot, h)
    x = c + box.R @ (w * h)
    y = box.R.T @ (x - c)
    outside = float(np.linalg.norm(y - np.clip(y, -h, h)))
    true = r - outside if outside > 0.0 else r + float(np.min(h - np.abs(y)))
    assume(true > 1e-3)
    out = epa(sphere(x, r), box.args)
    depth, _, _, _, ok = unpack_epa(out)
    near_edge = box_edge_distance(y, h) < 0.2 * r
    assert true - ROUND <= depth <= true + (1e-3 * r if near_edge and not ok else EPA_TOL + ROUND)
    check_consistent(sphere(x, r), box.args, out, lambda z: np.linalg.norm(z - x) - r, box.excess,
                     require_ok=not near_edge)


@settings(max_examples=60, deadline=None)
@given(box_pairs)
def test_epa_random_boxes(pair):
    """Reference: the SAT depth over the 15 box axes. 1e-9: both are exact for polytopes (EPA stops when
    the new support lies within 1e-11 × coordinates of the closest face, so at most ~5e-11 m here).
    Minimality, independently: A moved by depth − 1e-6 along n still overlaps B."""
    c, ra, ha, rb, hb, u, gap = pair
    a, b = make_pair(c, ra, ha, rb, hb, u, gap / 3.0)  # gap in [0, 1]: centres within the circumradii
    ref = sat_depth(a, b)
    assume(ref > 1e-3)
    out = epa(a.args, b.args, tol=0.0)
    depth, n, _, _, _ = unpack_epa(out)
    assert depth == pytest.approx(ref, abs=1e-9)
    check_consistent(a.args, b.args, out, a.excess, b.excess)
    if depth > 2e-6:
        assert dist(a.moved((depth - 1e-6) * n).args, b.args)[0] == 0.0


@SETTINGS
@given(points, rotations, halves, rotations, halves, unit_vectors, st.floats(0.0, 1.0))
def test_epa_ellipsoid_box_properties(c, re, s, rb, h, u, frac):
    """No closed form: the consistency properties, plus minimality against the SAT-like bound that the depth
    can't exceed the overlap along any of the box's face normals (each is a valid separating direction).
    ok is not required: nearly concentric configurations (see ``epa_penetration``) can exhaust EPA's capacity,
    and the properties checked hold for its uncertified answer as well."""
    box = Box(c + u * (np.max(s) + np.max(h)) * frac, rb, h)
    e = ellipsoid(c, re, s)
    assume(dist(e, box.args)[0] == 0.0)
    out = epa(e, box.args)
    depth, n, _, _, ok = unpack_epa(out)

    def in_e(x):
        return np.sum((re.as_matrix().T @ (x - c) / s) ** 2) - 1.0

    check_consistent(e, box.args, out, in_e, box.excess, require_ok=False)
    R = re.as_matrix()
    for i in range(3):
        k = box.R[:, i]
        overlap = np.linalg.norm(s * (R.T @ k)) + h[i] - abs(k @ (c - box.c))
        # uncertified (ok = False): within the 1e-3 × size seen for nearly concentric spheres
        assert depth <= overlap + (EPA_TOL + ROUND if ok else 1e-3 * np.max(s))


# ---------------------------------------------------------------------------------------------
# Degenerate configurations.
# ---------------------------------------------------------------------------------------------


def test_touching_boxes_exactly():
    """Dyadic coordinates: the faces x = 0.5 of A and B coincide exactly."""
    a = aabb(np.zeros(3), np.array([0.5, 0.5, 0.5]))
    b = aabb(np.array([0.75, 0.125, 0.25]), np.array([0.25, 0.5, 0.125]))
    assert dist(a.args, b.args, tol=0.0)[0] <= ROUND
    assert dist(a.args, b.args)[0] == 0.0
    depth, n, _, _, ok = unpack_epa(epa(a.args, b.args, tol=0.0))
    assert ok and abs(depth) <= ROUND
    assert np.allclose(n, [-1.0, 0.0, 0.0], atol=1e-9, rtol=0)
    # a hair apart: the distance, and EPA reports the same gap as a negative depth
    c = b.moved(np.array([1e-6, 0.0, 0.0]))
    assert dist(a.args, c.args)[0] == pytest.approx(1e-6, abs=ROUND)
    depth, n, _, _, ok = unpack_epa(epa(a.args, c.args))
    assert ok and depth == pytest.approx(-1e-6, abs=ROUND) and np.allclose(n, [-1.0, 0.0, 0.0], atol=1e-9)


def test_touching_sphere_point():
    """A point on the sphere's surface (to rounding): distance 0 within the rounding of the surface."""
    c, r = np.array([0.1, -0.2, 0.3]), 0.7
    u = np.array([1.0, 2.0, -2.0]) / 3.0
    assert dist(sphere(c, r), point(c + r * u))[0] <= ROUND
    depth, _, _, _, ok = unpack_epa(epa(sphere(c, r), point(c + r * u)))
    assert ok and abs(depth) <= EPA_TOL


@pytest.mark.parametrize("seed", range(5))
def test_identical_shapes(seed):
    """A − A = 2 (A − centre) for a centrally symmetric A: depth 2 × (least half-extent / semi-axis),
    along that axis (either sign)."""
    rot = Rotation.random(random_state=seed)
    h = np.array([0.3, 0.7, 0.5])
    box = Box(np.array([0.2, -1.0, 0.4]), rot, h)
    assert dist(box.args, box.args)[0] == 0.0
    depth, n, _, _, ok = unpack_epa(epa(box.args, box.args, tol=0.0))
    assert ok and depth == pytest.approx(2 * 0.3, abs=ROUND)
    assert abs(n @ box.R[:, 0]) == pytest.approx(1.0, abs=1e-9)
    e = ellipsoid(np.array([0.2, -1.0, 0.4]), rot, h)
    assert dist(e, e)[0] == 0.0
    depth, n, _, _, ok = unpack_epa(epa(e, e))
    assert ok and 0.6 - ROUND <= depth <= 0.6 + EPA_TOL
    assert abs(n @ box.R[:, 0]) == pytest.approx(1.0, abs=1e-4)  # angle ~ sqrt(EPA_TOL / 0.6) ≈ 4e-5


def test_coincident_centres():
    """Concentric spheres: every unit normal is right, depth ra + rb (EPA cannot certify it: ok may be False,
    see test_epa_near_concentric). A point at a box's centre leaves through the nearest face pair."""
    c = np.array([0.3, 0.2, -0.1])
    for ra, rb in ((0.5, 0.3), (0.2, 0.2)):
        depth, n, _, _, _ = unpack_epa(epa(sphere(c, ra), sphere(c, rb)))
        assert ra + rb - ROUND <= depth <= ra + rb + ROUND  # h(n) = ra + rb for every n
        assert np.linalg.norm(n) == pytest.approx(1.0, abs=ROUND)
    box = aabb(c, np.array([0.5, 0.2, 0.4]))
    depth, n, _, _, ok = unpack_epa(epa(point(c), box.args, tol=0.0))
    assert ok and depth == pytest.approx(0.2, abs=ROUND) and abs(n[1]) == pytest.approx(1.0, abs=1e-9)


@pytest.mark.parametrize("y0, z0", [(0.0, 0.0), (0.1, -0.05), (0.19, 0.3)])
def test_segment_through_box(y0, z0):
    """A segment along x through the box, longer than it: it leaves fastest sideways, by
    min(h_y − |y0|, h_z − |z0|) toward the nearer side."""
    h = np.array([0.5, 0.2, 0.4])
    box = aabb(np.zeros(3), h)
    seg = segment(np.array([-1.0, y0, z0]), np.array([1.0, y0, z0]))
    assert dist(seg, box.args)[0] == 0.0
    out = epa(seg, box.args, tol=0.0)
    depth, n, _, _, ok = unpack_epa(out)
    true = min(h[1] - abs(y0), h[2] - abs(z0))
    assert ok and depth == pytest.approx(true, abs=ROUND)
    check_consistent(seg, box.args, out, on_segment(np.array([-1.0, y0, z0]), np.array([1.0, y0, z0])), box.excess)


def test_flat_minkowski_differences():
    """A − B without interior (the origin then lies on its boundary): depth 0, normal off the flat set."""
    # two crossing segments: A − B is a parallelogram in the plane z = 0
    a = segment(np.array([-1.0, 0.0, 0.0]), np.array([1.0, 0.0, 0.0]))
    b = segment(np.array([0.0, -1.0, 0.0]), np.array([0.0, 1.0, 0.0]))
    assert dist(a, b)[0] == 0.0
    depth, n, _, _, ok = unpack_epa(epa(a, b))
    assert ok and abs(depth) <= ROUND and abs(n[2]) == pytest.approx(1.0, abs=1e-9)
    # a point inside a segment: A − B is a segment along x
    depth, n, _, _, ok = unpack_epa(epa(point(np.array([0.25, 0.0, 0.0])), a))
    assert ok and abs(depth) <= ROUND and abs(n[0]) <= 1e-9 and np.linalg.norm(n) == pytest.approx(1.0)
    # coincident points: A − B is the origin
    p = np.array([0.1, 0.2, 0.3])
    assert dist(point(p), point(p))[0] == 0.0
    depth, n, _, _, ok = unpack_epa(epa(point(p), point(p)))
    assert ok and depth == 0.0 and np.linalg.norm(n) == pytest.approx(1.0)
    # a point on a square (a flat polytope)
    sq = polytope(np.array([[-1.0, -1.0, 0.0], [1.0, -1.0, 0.0], [1.0, 1.0, 0.0], [-1.0, 1.0, 0.0]]))
    depth, n, _, _, ok = unpack_epa(epa(point(np.array([0.3, -0.2, 0.0])), sq))
    assert ok and abs(depth) <= ROUND and abs(n[2]) == pytest.approx(1.0, abs=1e-9)


def test_separated_input_to_epa():
    """Separated beyond tol: EPA returns GJK's signed distance, −distance along (a − b)/|a − b|."""
    depth, n, a, b, ok = unpack_epa(epa(sphere(np.array([3.0, 0.0, 0.0]), 1.0), sphere(np.zeros(3), 0.5)))
    assert ok and depth == pytest.approx(-1.5, abs=ELL_DIST)
    assert np.allclose(n, [1.0, 0.0, 0.0], atol=1e-5)
