"""Differential tests: tumble's contacts against coal (FCL's maintained successor) on seeded random poses.

Every unordered pair of shape kinds (sphere, box, capsule, cylinder, ellipsoid, convex hull: 21 pairs) and
every kind against the ground (6) gets ``CASES`` = 60 poses from ``numpy.random.default_rng(seed_of(pair, i))``;
a failure names its pair and case, and ``make_case(pair, i)`` rebuilds it (shapes, poses, tumble's contacts,
coal's answer). Shapes, orientations and the direction of approach are random; B is slid along that direction
until coal's signed distance hits a target: 40% of the cases overlap by 0.1–30 mm (log-uniform), 10% deeply
(30–70% of the overlap with B started near A's centre), 35% are apart by 0.05 mm to the margin less 0.2 mm,
15% by 3–6 margins (no contact allowed). Every fourth case turns B only slightly (≤ 0.03 rad) from A, or the
shape only slightly from upright or lying on its side against the ground, so that faces meet nearly parallel
and manifolds have several points. Odd cases add the pair to the world in the other order.

For each case (A = world body 0, normals from B toward A; tolerances below, each with its reason):
- existence: a contact iff coal's signed distance ≤ margin (not asserted within ``BAND`` of the margin);
- depth: the deepest contact's depth = −(coal's signed distance), up to FACE_PREFERENCE deeper where tumble
  keeps a face axis by design (``face_preference``);
- projection: the deepest depth is the overlap of the two shapes' projections on its own normal (exact, from
  support functions): true of every correct contact, false of a clipped manifold shallower than SAT's axis;
- normal: the deepest contact's normal = coal's, unless it is a genuine tie: moving A by depth + TIE_DELTA
  along tumble's normal must then leave the pair TIE_DELTA apart by coal;
- points: every contact point lies between the two surfaces: coal's signed distance from it to each shape
  is at most half the contact's |depth| (a point 0.2 m off the contact region fails, see the last test; the
  bound grows with the depth, so the deep cases test points more loosely);
- feature ids: unique within the pair (Contacts' docstring).
Cylinders are compared with a coal.Convex of the same 24-gon prism tumble collides, and separately with a
true coal.Cylinder to the prism's bound r (1 − cos(π/24)).

Coal's EPA is unreliable on curved supports (ellipsoids, true cylinders) when the overlap is deep: it can stop
on a non-minimal face (box–ellipsoid overlapping by 0.168 m reported as 0.682 m) and on capsule–ellipsoid its
depth can disagree with its own normal by 4e-7 m. Where tumble disagrees with coal on such a pair, coal's answer
is checked by minimising the exact projection overlap h_B(n) + h_A(−n) over directions
(coal_reference.verified), and tumble passes if it agrees with that.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np
import pytest
from coal_reference import (
    Distance,
    Ground,
    overlap_along,
    point_distance,
    prism_bound,
    signed_distance,
    support,
    verified,
)
from pair_worlds import pair_world, world_vertices

import tumble as tb

KINDS = ("sphere", "box", "capsule", "cylinder", "ellipsoid", "hull")
PAIRS = [(a, b) for i, a in enumerate(KINDS) for b in KINDS[i:]] + [(k, "ground") for k in KINDS]
CASES = 60
MARGIN = 0.005
"""m: the World's default contact margin, used throughout (checked against world.contact_margin)."""
BAND = 1e-4
"""m. Existence is not asserted for coal distances within BAND of the margin: far above both sides' distance
errors (≤ 1e-7 m, below), so only cases placed on the margin's edge are skipped; the targets never are."""

# Tolerances (metres unless said otherwise). Every depth, projection, tie and point comparison uses the pair's
# tolerance: ELLIPSOID_TOL with an ellipsoid (off the ground), EXACT_TOL otherwise.
EXACT_TOL = 1e-9
"""Pairs tumble solves exactly: closed-form closest features (sphere, capsule and the ground against anything
but an ellipsoid, capsule against polytopes, polytope and ellipsoid against the ground) and separating axes
between polytopes. Coal is exact there too (its Box answers to ~1e-11 m, its Convex to ~1e-16 m; the largest
difference on any case that passes is 7e-11 m), so 1e-9 m is rounding with room, not a modelling slack."""

ELLIPSOID_TOL = 1e-7
"""An ellipsoid against another shape: both sides run GJK/EPA on a curved support. Tumble stops EPA when the
support improves by less than EPA_TOL = 1e-9 m (its depths agree with coal's within 7e-9 m); coal's GJK
distance for ellipsoids at gaps of 1e-6–1e-5 m scatters by up to 6e-8 m (moving A by coal's own depth plus δ
along coal's own normal leaves the pair δ ± 2e-8 m apart), which the tie and point checks must absorb."""

ANGLE_TOL = 1e-6
"""rad, normals of exact and SAT pairs: a closest-point direction rounds to ~1e-12 m / gap ≤ 2e-8 rad at the
smallest gap (50 µm), and SAT normals are exact face normals or edge cross products. A larger angle is a tie
(the face preference, or equal overlaps) that must pass the translation check, or a fault."""

ELLIPSOID_ANGLE_TOL = 1e-3
"""rad, normals of ellipsoid pairs: an EPA normal converges only as the square root of its support tolerance
over the curvature radius of the Minkowski difference (√(2 · 1e-9 m / 16 mm) ≈ 3.5e-4 rad for tumble's on our
flattest ellipsoids, coal's similar); two such normals differ by up to 8.4e-4 rad on cases whose depths agree
to 1e-8 m. A larger angle must pass the translation check."""

FACE_PREFERENCE = 1e-3
"""m. Where tumble chooses between a face axis and an edge axis (two polytopes; a capsule whose core enters a
polytope) it keeps the face unless the edge separates more by sat.face_preference: max(1 mm, 1e-3 × the
smaller bounding radius), which is 1 mm for all our shapes (each lies within 1 m of its centre). The reported
depth is then the overlap along the face normal: at least the minimum translation, at most 1 mm more; the
normal is the face's. Not imported, so the bound stays the documented one."""

TIE_DELTA = 1e-5
"""m. The tie check moves A by (depth + TIE_DELTA) along tumble's normal and asks coal for a distance of at
least TIE_DELTA − tolerance: tumble's normal then separates the pair after a move by its own depth. The extra
10 µm keeps coal off exact touching, where its EPA is ill-conditioned (5e-7 m errors at zero gap)."""


def seed_of(pair, index: int) -> list[int]:
    """The rng seed of case ``index`` of ``pair``: stable, whatever the order of PAIRS."""
    return [KINDS.index(pair[0]), (KINDS + ("ground",)).index(pair[1]), index]


def random_quat(rng) -> np.ndarray:
    q = rng.normal(size=4)
    return q / np.linalg.norm(q)


def small_turn(rng, max_angle: float) -> np.ndarray:
    """A rotation by up to ``max_angle`` [rad] about a random axis, as (w, x, y, z)."""
    axis = rng.normal(size=3)
    half = 0.5 * rng.uniform(0.0, max_angle)
    return np.concatenate([[np.cos(half)], np.sin(half) * axis / np.linalg.norm(axis)])


def qmul(p, q) -> np.ndarray:
    pw, pv, qw, qv = p[0], np.asarray(p[1:]), q[0], np.asarray(q[1:])
    return np.concatenate([[pw * qw - pv @ qv], pw * qv + qw * pv + np.cross(pv, qv)])


def random_shape(kind: str, rng):
    if kind == "sphere":
        return tb.Sphere(rng.uniform(0.1, 0.4))
    if kind == "box":
        return tb.Box(*rng.uniform(0.1, 0.8, size=3))
    if kind == "capsule":
        return tb.Capsule(rng.uniform(0.05, 0.25), rng.uniform(0.1, 0.6))
    if kind == "cylinder":
        return tb.Cylinder(rng.uniform(0.1, 0.35), rng.uniform(0.1, 0.6))
    if kind == "ellipsoid":
        return tb.Ellipsoid(*rng.uniform(0.08, 0.4, size=3))
    if kind == "hull":
        return tb.ConvexHull(rng.normal(size=(int(rng.integers(8, 21)), 3)) * rng.uniform(0.1, 0.25, size=3))
    raise ValueError(kind)


def target_distance(index: int, rng) -> tuple[float, bool]:
    """Coal signed distance a case is placed at, and whether it is relative: 40% overlap by 0.1–30 mm
    (log-uniform), 10% overlap deeply, by 30–70% of the depth the pair has with B started near A's centre
    (relative), 35% apart within the margin, 15% apart by 3–6 margins."""
    slot = index % 20
    if slot < 8:
        return -(10.0 ** rng.uniform(-4.0, np.log10(0.03))), False
    if slot < 10:
        return rng.uniform(0.3, 0.7), True
    if slot < 17:
        return rng.uniform(5e-5, MARGIN - 2 * BAND), False
    return rng.uniform(3.0, 6.0) * MARGIN, False


@dataclass(frozen=True)
class Case:
    """One pose of a pair: A (world body 0) and B (body 1, or the ground), tumble's contacts with normals
    from B toward A, and coal's reference ``ref`` for (A, B)."""

    pair: tuple[str, str]
    index: int
    shape_a: object
    pos_a: np.ndarray
    quat_a: np.ndarray
    shape_b: object
    pos_b: np.ndarray | None
    quat_b: np.ndarray | None
    point: np.ndarray
    normal: np.ndarray
    depth: np.ndarray
    feature: np.ndarray
    kind: np.ndarray
    ref: Distance

    def __str__(self) -> str:
        def pose(shape, pos, quat):
            if isinstance(shape, Ground):
                return repr(shape)
            what = (f"ConvexHull of {len(shape.vertices)} vertices, half extents {np.round(shape.size, 6).tolist()}"
                    if isinstance(shape, tb.ConvexHull) else repr(shape))
            return f"{what} at {np.round(pos, 6).tolist()} q {np.round(quat, 6).tolist()}"
        return (f"{self.pair} case {self.index} (seed {seed_of(self.pair, self.index)}): "
                f"A = {pose(self.shape_a, self.pos_a, self.quat_a)}, "
                f"B = {pose(self.shape_b, self.pos_b, self.quat_b)}; "
                f"coal: distance {self.ref.distance:.6g} normal {np.round(self.ref.normal, 6).tolist()} "
                f"points {np.round(self.ref.point_a, 6).tolist()} / {np.round(self.ref.point_b, 6).tolist()}; "
                f"tumble: {len(self.depth)} contacts, depth {np.round(self.depth, 7).tolist()}, "
                f"normal {np.round(self.normal, 6).tolist()}, point {np.round(self.point, 6).tolist()}, "
                f"kind {self.kind.tolist()}, feature {self.feature.tolist()}")

    def distance_with_a_at(self, pos_a) -> float:
        return signed_distance(self.shape_a, pos_a, self.quat_a, self.shape_b, self.pos_b, self.quat_b).distance

    @property
    def deepest(self) -> int:
        return int(np.argmax(self.depth))


def _place(shape_a, pos_a, quat_a, shape_b, start_b, quat_b, u, target, relative) -> float:
    """t such that coal's signed distance of A and B at start_b + t u is ``target`` (× the signed distance at
    t = 0 when ``relative``): safeguarded Newton on t (sd is convex in t, below target at t = 0 and growing
    past it, so the root is unique)."""
    def sd(t):
        if isinstance(shape_b, Ground):  # the ground stays put: move A down instead
            return signed_distance(shape_a, pos_a - t * u, quat_a, shape_b)
        return signed_distance(shape_a, pos_a, quat_a, shape_b, start_b + t * u, quat_b)

    lo, hi = 0.0, 1.0
    start = sd(lo).distance
    if relative:
        target *= start
    if start >= target:
        raise RuntimeError("the shapes' start does not overlap deeper than the target")
    while sd(hi).distance <= target:
        lo, hi = hi, 2.0 * hi
    t = 0.5 * (lo + hi)
    for _ in range(100):
        d = sd(t)
        f = d.distance - target
        if abs(f) < 1e-10:
            break
        if f < 0.0:
            lo = t
        else:
            hi = t
        slope = -(d.normal @ u)  # moving B along u changes the signed distance by −n · u (n: B → A)
        step = t - f / slope if slope > 1e-3 else None
        t = step if step is not None and lo < step < hi else 0.5 * (lo + hi)
    return t


@functools.cache
def make_case(pair: tuple[str, str], index: int) -> Case:
    """Case ``index`` of ``pair`` (kinds, in KINDS order; the second may be "ground"), from its own seed."""
    rng = np.random.default_rng(seed_of(pair, index))
    kind_a, kind_b = pair
    aligned = index % 4 == 3
    target, relative = target_distance(index, rng)
    world = tb.World(gravity=(0, 0, 0))
    assert world.contact_margin == MARGIN
    if kind_b == "ground":
        shape_a, shape_b = random_shape(kind_a, rng), Ground(rng.uniform(-0.5, 0.5))
        if aligned:  # upright or lying on its side, turned a little
            base = (1.0, 0.0, 0.0, 0.0) if rng.uniform() < 0.5 else (np.cos(np.pi / 4), np.sin(np.pi / 4), 0.0, 0.0)
            quat_a = qmul(base, small_turn(rng, 0.02))
        else:
            quat_a = random_quat(rng)
        start = np.array([*rng.uniform(-1, 1, size=2), shape_b.height])
        u = np.array([0.0, 0.0, 1.0])
        pos_a = start + _place(shape_a, start, quat_a, shape_b, None, None, -u, target, relative) * u
        pos_b = quat_b = None
        world.add_body(shape_a, position=pos_a, orientation=quat_a)
        world.add_ground(shape_b.height)
    else:
        shapes = [random_shape(kind_a, rng), random_shape(kind_b, rng)]
        if index % 2:
            shapes.reverse()
        shape_a, shape_b = shapes
        quat_a = random_quat(rng)
        quat_b = qmul(quat_a, small_turn(rng, 0.03)) if aligned else random_quat(rng)
        pos_a = rng.uniform(-1, 1, size=3)
        u = rng.normal(size=3)
        u /= np.linalg.norm(u)
        start = pos_a + rng.uniform(-0.02, 0.02, size=3)  # off A's centre: coal's EPA fails on concentric shapes
        pos_b = start + _place(shape_a, pos_a, quat_a, shape_b, start, quat_b, u, target, relative) * u
        world = pair_world(shape_a, pos_a, quat_a, shape_b, pos_b, quat_b)
    c = world.contacts()
    assert np.all(c.body_b != c.body_a)
    sign = np.where(c.body_a == 0, 1.0, -1.0)[:, None]  # normals B → A with A = body 0
    return Case(pair, index, shape_a, pos_a, quat_a, shape_b, pos_b, quat_b, c.point, sign * c.normal, c.depth,
                c.feature, c.kind, signed_distance(shape_a, pos_a, quat_a, shape_b, pos_b, quat_b))


@functools.cache
def pair_cases(pair) -> list[Case]:
    return [make_case(pair, i) for i in range(CASES)]


# ---------------------------------------------------------------------------------------------------- checks

def _is_polytope(shape) -> bool:
    return isinstance(shape, (tb.Box, tb.Cylinder, tb.ConvexHull))


def tolerance(case: Case) -> float:
    """The pair's depth / tie / point tolerance: ELLIPSOID_TOL with an ellipsoid (off the ground), else
    EXACT_TOL."""
    ellipsoid = any(isinstance(s, tb.Ellipsoid) for s in (case.shape_a, case.shape_b))
    return ELLIPSOID_TOL if ellipsoid and not isinstance(case.shape_b, Ground) else EXACT_TOL


def angle_tolerance(case: Case) -> float:
    return ELLIPSOID_ANGLE_TOL if tolerance(case) == ELLIPSOID_TOL else ANGLE_TOL


def face_preference(case: Case) -> float:
    """How much deeper than coal tumble may report by design: FACE_PREFERENCE where tumble chooses between
    face and edge axes (two polytopes, and a capsule whose core segment enters the polytope: its
    separating-axis branch uses the same rule), 0 elsewhere.

    Apart polytopes use the same bound: SAT's separation is the distance when the closest features are a
    face and a vertex or two edges (face preference then gives up to 1 mm less); for two vertices or a vertex
    and an edge it is only a lower bound, a SAT limitation that none of the seeded cases meets."""
    a, b = case.shape_a, case.shape_b
    if _is_polytope(a) and _is_polytope(b):
        return FACE_PREFERENCE
    for cap, other in ((a, b), (b, a)):
        if isinstance(cap, tb.Capsule) and _is_polytope(other) and -case.ref.distance >= cap.radius - EXACT_TOL:
            return FACE_PREFERENCE
    return 0.0


def _expects_contact(case: Case) -> bool | None:
    d = case.ref.distance
    if d <= MARGIN - BAND:
        return True
    if d > MARGIN + BAND:
        return False
    return None


def existence_failures(case: Case) -> list[str]:
    expected = _expects_contact(case)
    if expected is None or expected == (len(case.depth) > 0):
        return []
    what = "no contact" if expected else "a contact"
    return [f"{what} where coal's distance is {case.ref.distance:.6g} m (margin {MARGIN} m)"]


def _curved(case: Case, true_cylinder: bool) -> bool:
    """Does coal run EPA on a curved support here (an ellipsoid, or a true cylinder), where it can stop on a
    non-minimal face when the overlap is deep (coal_reference.verified)?"""
    kinds = (tb.Ellipsoid, tb.Cylinder) if true_cylinder else (tb.Ellipsoid,)
    return not isinstance(case.shape_b, Ground) and any(isinstance(s, kinds) for s in (case.shape_a, case.shape_b))


@functools.cache
def _true_cylinder(pair, index: int) -> Distance:
    case = make_case(pair, index)
    return signed_distance(case.shape_a, case.pos_a, case.quat_a, case.shape_b, case.pos_b, case.quat_b,
                           true_cylinder=True)


@functools.cache
def _refereed(pair, index: int, true_cylinder: bool) -> Distance:
    case = make_case(pair, index)
    ref = _true_cylinder(pair, index) if true_cylinder else case.ref
    seeds = [case.normal[case.deepest]] if len(case.depth) else []
    return verified(case.shape_a, case.pos_a, case.quat_a, case.shape_b, case.pos_b, case.quat_b, ref, seeds,
                    true_cylinder=true_cylinder)


def references(case: Case, true_cylinder: bool = False):
    """Coal's answer, then, only where tumble disagrees with it and coal's EPA met a curved support, coal's
    answer checked against the support functions (coal_reference.verified: never worse than coal's). Tumble
    passes if it agrees with either."""
    yield _true_cylinder(case.pair, case.index) if true_cylinder else case.ref
    if _curved(case, true_cylinder):
        yield _refereed(case.pair, case.index, true_cylinder)


def overlap_on_normal(case: Case, n: np.ndarray) -> float:
    """Exact overlap of A's and B's projections on the unit direction n (B → A), from support functions: how far
    A must move along n for the projections to separate (the ground bounds only along +z)."""
    if isinstance(case.shape_b, Ground):
        return float(case.shape_b.height + support(case.shape_a, case.pos_a, case.quat_a, -n[None])[0]) \
            if n[2] > 1.0 - 1e-12 else np.inf
    return float(overlap_along(case.shape_a, case.pos_a, case.quat_a, case.shape_b, case.pos_b, case.quat_b,
                               n[None])[0])


def depth_failures(case: Case) -> list[str]:
    if not len(case.depth) or not _expects_contact(case):
        return []
    tol, allowance = tolerance(case), face_preference(case)
    depth = case.depth.max()
    for ref in references(case):
        if -ref.distance - tol <= depth <= -ref.distance + allowance + tol:
            return []
    return [f"deepest depth {depth:.9g} m, reference {-ref.distance:.9g} m (differ by {depth + ref.distance:+.3g} m; "
            f"allowed [-{tol:.0e}, +{allowance + tol:.3g}])"]


def normal_failures(case: Case) -> list[str]:
    if not len(case.depth) or not _expects_contact(case):
        return []
    k = case.deepest
    n, depth = case.normal[k], case.depth[k]
    for ref in references(case):
        angle = float(np.arccos(np.clip(n @ ref.normal, -1.0, 1.0)))
        if angle <= angle_tolerance(case):
            return []
    # A genuine tie (or the face preference): moving A by its depth along tumble's normal separates the pair.
    after = case.distance_with_a_at(case.pos_a + (depth + TIE_DELTA) * n)
    if after >= TIE_DELTA - tolerance(case):
        return []
    return [f"deepest normal {np.round(n, 6).tolist()} is {angle:.3g} rad from the reference's "
            f"{np.round(ref.normal, 6).tolist()} and no tie: after moving A by depth {depth:.9g} + {TIE_DELTA} m "
            f"along it coal's distance is {after:.6g} m, {TIE_DELTA - after:.3g} m short of {TIE_DELTA} m"]


def projection_failures(case: Case) -> list[str]:
    """The deepest depth is the overlap of the two shapes' projections on its own normal. Every correct contact
    has it: a minimum translation (SAT's axis of least overlap, EPA's face) overlaps by exactly the depth along
    its direction, closest points are separated by exactly their distance along theirs, and a face axis kept
    by the face preference reports the overlap along that face normal. A clipped manifold whose deepest point
    is shallower than SAT's overlap on its axis fails here."""
    if not len(case.depth):
        return []
    k = case.deepest
    n, depth = case.normal[k], case.depth[k]
    overlap = overlap_on_normal(case, n)
    if abs(depth - overlap) <= tolerance(case):
        return []
    return [f"deepest depth {depth:.9g} m, but the projections on its normal {np.round(n, 6).tolist()} overlap by "
            f"{overlap:.9g} m (differ by {depth - overlap:+.3g} m)"]


def point_failures(case: Case, points=None) -> list[str]:
    """Every contact point must lie between the two surfaces: p is midway between a point of A's surface and
    one of B's, |depth| apart, so coal's signed distance from p to either shape is at most |depth| / 2. (Coal's
    EPA for a point deep inside a curved shape can only err deeper, which makes this check looser, never
    wrong.)"""
    points = case.point if points is None else points
    tol = tolerance(case)
    out = []
    for j, (p, d) in enumerate(zip(points, case.depth, strict=True)):
        sa = point_distance(p, case.shape_a, case.pos_a, case.quat_a)
        sb = point_distance(p, case.shape_b, case.pos_b, case.quat_b)
        if max(sa, sb) > 0.5 * abs(d) + tol:
            out.append(f"contact {j} at {np.round(p, 6).tolist()} (depth {d:.6g}) is {sa:.6g} m from A's surface "
                       f"and {sb:.6g} m from B's (at most |depth|/2 = {0.5 * abs(d):.6g} allowed)")
    return out


def feature_failures(case: Case) -> list[str]:
    ids = case.feature.tolist()
    if len(set(ids)) == len(ids):
        return []
    return [f"feature ids repeat within the pair: {ids}"]


def true_cylinder_failures(case: Case) -> list[str]:
    """Against coal.Cylinder: sd(true) ≤ sd(prism) ≤ sd(true) + Σ r (1 − cos(π/24)) (coal_reference.prism_bound),
    so the deepest depth lies in [−sd(true) − bound − TOL, −sd(true) + face preference + TOL]."""
    if not len(case.depth) or not _expects_contact(case):
        return []
    bound = prism_bound(case.shape_a) + prism_bound(case.shape_b)
    tol, depth = tolerance(case), case.depth.max()
    for ref in references(case, true_cylinder=True):
        if -ref.distance - bound - tol <= depth <= -ref.distance + face_preference(case) + tol:
            return []
    return [f"deepest depth {depth:.9g} m, true cylinder's {-ref.distance:.9g} m, prism bound {bound:.3g} m"]


def assert_every_case(pair, check) -> None:
    """Run ``check`` (case → list of failure messages) on every case of the pair; fail listing them all."""
    failures = []
    for case in pair_cases(pair):
        failures += [f"{msg}\n    {case}" for msg in check(case)]
    assert not failures, f"{len(failures)} of {CASES} cases:\n" + "\n".join(failures)


def _ids(pair) -> str:
    return "-".join(pair)


# ---------------------------------------------------------------------------------------------------- tests

CHECKS = {
    "contact iff coal's distance is within the margin": existence_failures,
    "deepest depth matches coal": depth_failures,
    "deepest normal matches coal or ties": normal_failures,
    "deepest depth is the overlap along its normal": projection_failures,
    "contact points lie between the surfaces": point_failures,
    "feature ids unique within the pair": feature_failures,
}


@pytest.mark.parametrize("check", list(CHECKS), ids=lambda name: name.replace(" ", "_"))
@pytest.mark.parametrize("pair", PAIRS, ids=_ids)
def test_pair_against_coal(pair, check):
    assert_every_case(pair, CHECKS[check])


@pytest.mark.parametrize("pair", [p for p in PAIRS if "cylinder" in p], ids=_ids)
def test_cylinder_depth_within_prism_bound_of_true_cylinder(pair):
    assert_every_case(pair, true_cylinder_failures)


@pytest.mark.parametrize("pair", PAIRS, ids=_ids)
def test_cases_cover_every_regime(pair):
    # The seeded mix must hold overlapping, near and far cases, and manifolds where the shapes allow them.
    d = np.array([c.ref.distance for c in pair_cases(pair)])
    assert (d < 0).sum() >= CASES * 0.45 and ((d > 0) & (d < MARGIN)).sum() >= CASES * 0.3
    assert (d > 2 * MARGIN).sum() >= CASES * 0.1
    assert sum(len(c.depth) for c in pair_cases(pair)) >= CASES * 0.8


def test_coal_reference_conventions():
    # Two spheres 0.7 m apart on x, radii 0.5 and 0.3: overlap 0.1 m, normal from B (at +x) toward A (−x).
    q = np.array([1.0, 0.0, 0.0, 0.0])
    d = signed_distance(tb.Sphere(0.5), np.zeros(3), q, tb.Sphere(0.3), np.array([0.7, 0, 0]), q)
    assert d.distance == pytest.approx(-0.1, abs=1e-12)
    np.testing.assert_allclose(d.normal, (-1, 0, 0), atol=1e-12)
    # Full side lengths, the capsule's length without its caps (tip at 0.5 + 0.1), centre of mass frames and the
    # ground's half-space.
    turn = np.array([np.cos(0.3), 0.0, np.sin(0.3), 0.0])
    assert point_distance(np.array([0.2, 0, 0]), tb.Box(1.0, 2.0, 3.0), np.zeros(3), q) == pytest.approx(-0.3)
    assert point_distance(np.array([0, 0, 0.55]), tb.Capsule(0.1, 1.0), np.zeros(3), q) == pytest.approx(-0.05)
    assert point_distance(np.array([0, 0, 0.2]), Ground(0.5), None, None) == pytest.approx(-0.3)
    rng = np.random.default_rng(5)
    hull = tb.ConvexHull(rng.normal(size=(12, 3)) * 0.3 + 2.0)  # far off its centre: re-centred by tumble
    cyl = tb.Cylinder(0.2, 0.5)
    for shape in (hull, cyl, tb.Box(0.3, 0.4, 0.5)):
        pos = rng.normal(size=3)
        for v in world_vertices(shape, pos, turn):  # tumble's collision vertices lie on coal's surface
            assert point_distance(v, shape, pos, turn) == pytest.approx(0.0, abs=1e-9)
    # The prism lies inside the true cylinder, at most r (1 − cos(π/24)) inside it.
    pos = np.array([0.0, 0.0, 0.0])
    for angle in np.linspace(0.0, np.pi / 12, 7):
        ball = np.array([np.cos(angle), np.sin(angle), 0.0]) * 0.35
        prism = signed_distance(tb.Sphere(0.1), ball, q, cyl, pos, q).distance
        true = signed_distance(tb.Sphere(0.1), ball, q, cyl, pos, q, true_cylinder=True).distance
        assert true - 1e-12 <= prism <= true + prism_bound(cyl) + 1e-12
    assert prism_bound(cyl) == pytest.approx(0.2 * (1 - np.cos(np.pi / 24)))


@pytest.mark.parametrize("pair", [("sphere", "box"), ("box", "box"), ("ellipsoid", "hull"), ("capsule", "ground")],
                         ids=_ids)
def test_point_check_rejects_a_point_off_the_contact_region(pair):
    # The point check must catch a contact point placed 0.2 m away from where the shapes meet: off along the
    # normal (into one shape, out of the other) and, on a curved surface, sideways.
    checked = 0
    for case in pair_cases(pair):
        if not len(case.depth) or case.ref.distance < -0.03 or point_failures(case):
            continue  # shallow cases whose points pass as they are
        k = case.deepest
        n = case.normal[k]
        side = np.cross(n, [1.0, 0.0, 0.0] if abs(n[0]) < 0.9 else [0.0, 1.0, 0.0])
        side /= np.linalg.norm(side)
        shifts = [0.2 * n, -0.2 * n] + ([0.2 * side] if pair[0] in ("sphere", "ellipsoid") else [])
        for shift in shifts:
            moved = case.point.copy()
            moved[k] += shift
            assert any(msg.startswith(f"contact {k} ") for msg in point_failures(case, moved)), (shift, str(case))
        checked += 1
    assert checked >= 5
