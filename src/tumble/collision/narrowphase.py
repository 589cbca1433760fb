"""Narrowphase: exact contacts for the candidate pairs of the broadphase.

The pairs fall into five families by their shapes' types (``pair_family``), each with its own kernel so
that a scene compiles only the families it has (a pile of spheres never compiles the polytope code; cold
compile time is mostly per kernel, see docs/contact.md):

- ``FAMILY_CLOSED_FORM``: sphere–sphere, sphere–plane, sphere–box, sphere–capsule, sphere–hull and
  sphere–cylinder (exact closest point), capsule–capsule, capsule–plane: closed-form tests;
- ``FAMILY_CAPSULE_POLYTOPE``: capsule against box, hull or cylinder (exact, see capsule_polytope);
- ``FAMILY_BOXES``: box–box (box_box's 15 axes in closed form) and box–plane. A box pair apart within the
  margin whose clipped manifold falls short of the face axis's separation needs the distance (box_box
  returns −1): it is deferred to the next family's kernel, which then runs only when some pair needs it,
  so a scene of boxes compiles the general separating-axis test and GJK only if it meets that case;
- ``FAMILY_POLYTOPES``: every other pair of polytopes (convex hull, cylinder as a 24-gon prism, against any
  polytope) by separating axes (sat.collide_polytopes), their planes, and the deferred box pairs;
- ``FAMILY_CONVEX``: the ellipsoid against every shape: the plane in closed form, the rest by GJK/EPA
  (ellipsoid.py).

Each kernel loops over a range of pairs, skips the pairs of other families, builds each geometry's world
pose (body pose ∘ local pose) and dispatches on the integer geometry types (no per-object virtual calls).
Each pair owns MAX_CONTACTS output slots (``contacts.slot``); detect.py then gathers the used ones.
``stats_out[UNSUPPORTED]`` stays as a guard for types added later.
"""

from __future__ import annotations

from collections import namedtuple

import numpy as np
from numba import prange

from ..conventions import GeomType
from ..jit import CallSite, njit
from ..math3d import qmul_t, qrot_t
from . import closed_form as cf
from . import features, gjk
from .box_box import box_box
from .capsule_polytope import capsule_polytope
from .contacts import slot
from .ellipsoid import convex_pair, ellipsoid_plane
from .sat import collide_polytopes, transform_polytope

SPHERE = int(GeomType.SPHERE)
BOX = int(GeomType.BOX)
CAPSULE = int(GeomType.CAPSULE)
CYLINDER = int(GeomType.CYLINDER)
ELLIPSOID = int(GeomType.ELLIPSOID)
HULL = int(GeomType.CONVEX_HULL)
PLANE = int(GeomType.PLANE)

# stats_out layout
POLYTOPE_TESTS, WITNESS_DECIDED, UNSUPPORTED, DEFERRED = 0, 1, 2, 3
STATS_SIZE = 4

DEFERRED_PAIR = -1
"""``pair_contacts_out`` of a box pair that ``box_pairs`` leaves to ``polytope_pairs`` (module docstring)."""


@njit(cache=True, forceinline=True, refcount=False)
def _is_polytope(t):
    return t == BOX or t == CYLINDER or t == HULL


@njit(cache=True, forceinline=True, refcount=False)
def _geom_pose(g, geom, poses):
    """World pose (px, py, pz, qw, qx, qy, qz) of geometry row g of ``geom``: body pose ∘ local pose."""
    x, q = poses
    geom_pos, geom_quat = geom.geom_pos, geom.geom_quat
    b = geom.geom_body[g]
    ox, oy, oz = qrot_t(q[b, 0], q[b, 1], q[b, 2], q[b, 3], geom_pos[g, 0], geom_pos[g, 1], geom_pos[g, 2])
    qw, qx, qy, qz = qmul_t(q[b, 0], q[b, 1], q[b, 2], q[b, 3],
                            geom_quat[g, 0], geom_quat[g, 1], geom_quat[g, 2], geom_quat[g, 3])
    return x[b, 0] + ox, x[b, 1] + oy, x[b, 2] + oz, qw, qx, qy, qz


@njit(cache=True, forceinline=True, refcount=False)
def _axis_points(pose, half):
    """Ends of a capsule's segment at ``pose``: centre ∓ half · (body z in world)."""
    px, py, pz, qw, qx, qy, qz = pose
    ax, ay, az = qrot_t(qw, qx, qy, qz, 0.0, 0.0, half)
    c0 = (px - ax, py - ay, pz - az)
    c1 = (px + ax, py + ay, pz + az)
    return c0, c1


@njit(cache=True, forceinline=True, refcount=False)
def _plane(pose):
    """The plane (nx, ny, nz, d) {x : n · x = d} of a plane shape at ``pose``: its body z through its origin."""
    px, py, pz, qw, qx, qy, qz = pose
    nx, ny, nz = qrot_t(qw, qx, qy, qz, 0.0, 0.0, 1.0)
    return nx, ny, nz, nx * px + ny * py + nz * pz


@njit(cache=True, forceinline=True, refcount=False)
def _size(geom, g):
    return geom.geom_size[g, 0], geom.geom_size[g, 1], geom.geom_size[g, 2]


@njit(cache=True, forceinline=True, refcount=False)
def _polytope_rows(geom, g):
    """(first vertex row, vertex count, first face row, face count) of geometry g's polytope."""
    return geom.geom_vert_start[g], geom.geom_vert_count[g], geom.geom_face_start[g], geom.geom_face_count[g]


@njit(cache=True, forceinline=True, refcount=False)
def _local_rows(geom, g):
    """(vertex count, face count, first face row, first edge row, edge count) of geometry g's polytope, as the
    closed-form and capsule tests take them."""
    return (geom.geom_vert_count[g], geom.geom_face_count[g], geom.geom_face_start[g], geom.geom_edge_start[g],
            geom.geom_edge_count[g])


@njit(cache=True)
def _core(t, g, pose, geom, poly, world):
    """Geometry g (type t, world ``pose``) as a GJK core: (kind, pose, size, vertex count, radius) — the parts
    of a ``gjk`` shape tuple besides its vertices, and the radius that sweeps it. A sphere is its centre and a
    capsule its segment (c0 in the pose's position, c1 in size), each with its radius; an ellipsoid is itself;
    a polytope is its world vertices, written to ``world`` = (wv, wn, wd)."""
    px, py, pz, qw, qx, qy, qz = pose
    if t == SPHERE:
        return gjk.SHAPE_POINT, pose, (0.0, 0.0, 0.0), 0, geom.geom_size[g, 0]
    if t == CAPSULE:
        c0, c1 = _axis_points(pose, geom.geom_size[g, 1])
        return gjk.SHAPE_SEGMENT, (c0[0], c0[1], c0[2], qw, qx, qy, qz), c1, 0, geom.geom_size[g, 0]
    if t == ELLIPSOID:
        return gjk.SHAPE_ELLIPSOID, pose, _size(geom, g), 0, 0.0
    nv = geom.geom_vert_count[g]
    transform_polytope(poly, (geom.geom_vert_start[g], nv, geom.geom_face_start[g], 0), pose, world)
    return gjk.SHAPE_POLYTOPE, pose, (0.0, 0.0, 0.0), nv, 0.0


FAMILY_CLOSED_FORM, FAMILY_CAPSULE_POLYTOPE, FAMILY_BOXES, FAMILY_POLYTOPES, FAMILY_CONVEX = range(5)
FAMILY_COUNT = 5
FAMILY_NAMES = ("closed forms", "capsule-polytope", "boxes", "polytopes", "ellipsoids")
FAMILY_COMPILE_SECONDS = (4.4, 4.7, 8.3, 13.7, 9.0)
"""Cold compile time [s] of each family's kernel with what it calls, each alone on an empty cache, on the
2-core development machine: for balancing the parallel precompile (precompile.py). Ellipsoids: estimated
(GJK and EPA, like the polytopes' GJK)."""


@njit(cache=True)
def pair_family(ta, tb):
    """The family (module docstring) of a pair of geometry types."""
    if ta == ELLIPSOID or tb == ELLIPSOID:
        return FAMILY_CONVEX
    if (ta == BOX or ta == PLANE) and (tb == BOX or tb == PLANE):
        return FAMILY_BOXES
    if (_is_polytope(ta) or ta == PLANE) and (_is_polytope(tb) or tb == PLANE):
        return FAMILY_POLYTOPES  # with polytope–plane: a scene with polytopes seldom lacks the ground
    if (ta == CAPSULE and _is_polytope(tb)) or (tb == CAPSULE and _is_polytope(ta)):
        return FAMILY_CAPSULE_POLYTOPE
    return FAMILY_CLOSED_FORM


@njit(cache=True, forceinline=True, refcount=False)
def _visits(k, pairs, geom, family):
    """Does this family's kernel test pair k? Asleep pairs are skipped (last step's contacts were kept,
    contacts.set_pairs), and so are other families' pairs."""
    pair_geom, geom_type = pairs.pair_geom, geom.geom_type
    return pairs.pair_awake[k] and pair_family(geom_type[pair_geom[k, 0]], geom_type[pair_geom[k, 1]]) == family


@njit(cache=True, forceinline=True, refcount=False)
def _pair_setup(k, pairs, geom, poses, margins):
    """Pair k in canonical order (lower geometry type first: A): (ga, gb, flip, speculative margin, pose of A,
    pose of B); ``flip`` is True when the order was swapped (the normals are flipped back at the end)."""
    margin, sweep = margins
    ga, gb = pairs.pair_geom[k, 0], pairs.pair_geom[k, 1]
    flip = geom.geom_type[ga] > geom.geom_type[gb]
    if flip:
        ga, gb = gb, ga
    # Speculative margin of the pair: the contact margin plus how far the two shapes can move toward each
    # other in this step, so fast bodies are seen before they pass through (no tunnelling).
    mk = margin + sweep[ga] + sweep[gb]
    return ga, gb, flip, mk, _geom_pose(ga, geom, poses), _geom_pose(gb, geom, poses)


@njit(cache=True, forceinline=True, refcount=False)
def _pair_done(k, n, flip, normal_out, pair_contacts):
    """Record pair k's n contacts, normals flipped back to point from the pair's second geometry to its first."""
    if flip:
        for j in range(n):
            row = slot(k, j)
            for c in range(3):
                normal_out[row, c] = -normal_out[row, c]
    pair_contacts[k] = n


@njit(cache=True, refcount=False)
def closed_form_pairs(k0, k1, pairs, geom, poly, poses, margins, scratch, out, stats_out):
    """Contacts of the ``FAMILY_CLOSED_FORM`` pairs among k0 ≤ k < k1 (arguments as ``narrowphase_range``)."""
    geom_type = geom.geom_type
    world = (scratch[0][1], scratch[1][1], scratch[2][1])
    for k in range(k0, k1):
        if not _visits(k, pairs, geom, FAMILY_CLOSED_FORM):
            continue
        ga, gb, flip, mk, pose_a, pose_b = _pair_setup(k, pairs, geom, poses, margins)
        ta, tb = geom_type[ga], geom_type[gb]
        centre_a, ra = (pose_a[0], pose_a[1], pose_a[2]), geom.geom_size[ga, 0]
        base = slot(k, 0)
        n = 0
        if tb == PLANE:
            if ta == SPHERE:
                n = cf.sphere_plane(centre_a, ra, _plane(pose_b), mk, features.POINT_ID, out, base)
            elif ta == CAPSULE:
                c0, c1 = _axis_points(pose_a, geom.geom_size[ga, 1])
                n = cf.capsule_plane(c0, c1, ra, _plane(pose_b), mk, out, base)
            else:
                stats_out[UNSUPPORTED] += 1
        elif ta == SPHERE and tb == SPHERE:
            n = cf.spheres(centre_a, ra, (pose_b[0], pose_b[1], pose_b[2]), geom.geom_size[gb, 0], mk,
                           features.POINT_ID, out, base)
        elif ta == SPHERE and tb == BOX:
            n = cf.sphere_box(centre_a, ra, pose_b, _size(geom, gb), mk, out, base)
        elif ta == SPHERE and tb == CAPSULE:  # capsule_sphere takes the capsule first: flip its normal
            c0, c1 = _axis_points(pose_b, geom.geom_size[gb, 1])
            n = cf.capsule_sphere(c0, c1, geom.geom_size[gb, 0], centre_a, ra, mk, out, base)
            flip = not flip
        elif ta == SPHERE and (tb == CYLINDER or tb == HULL):
            transform_polytope(poly, _polytope_rows(geom, gb), pose_b, world)
            n = cf.sphere_polytope(centre_a, ra, world, _local_rows(geom, gb), poly, mk, out, base)
        elif ta == CAPSULE and tb == CAPSULE:
            a0, a1 = _axis_points(pose_a, geom.geom_size[ga, 1])
            b0, b1 = _axis_points(pose_b, geom.geom_size[gb, 1])
            n = cf.capsules(a0, a1, ra, b0, b1, geom.geom_size[gb, 0], mk, out, base)
        else:
            stats_out[UNSUPPORTED] += 1
        _pair_done(k, n, flip, out[1], pairs.pair_contacts)


@njit(cache=True, refcount=False)
def capsule_polytope_pairs(k0, k1, pairs, geom, poly, poses, margins, scratch, out, stats_out):
    """Contacts of the ``FAMILY_CAPSULE_POLYTOPE`` pairs among k0 ≤ k < k1 (arguments as ``narrowphase_range``)."""
    world = (scratch[0][1], scratch[1][1], scratch[2][1])
    for k in range(k0, k1):
        if not _visits(k, pairs, geom, FAMILY_CAPSULE_POLYTOPE):
            continue
        ga, gb, flip, mk, pose_a, pose_b = _pair_setup(k, pairs, geom, poses, margins)
        # capsule_polytope takes the capsule first: a (box, capsule) pair swaps and flips
        gc, gp, pose_c, pose_p = ga, gb, pose_a, pose_b
        if geom.geom_type[ga] != CAPSULE:
            gc, gp, pose_c, pose_p = gb, ga, pose_b, pose_a
            flip = not flip
        transform_polytope(poly, _polytope_rows(geom, gp), pose_p, world)
        c0, c1 = _axis_points(pose_c, geom.geom_size[gc, 1])
        n = capsule_polytope(c0, c1, geom.geom_size[gc, 0], world, _local_rows(geom, gp), poly, mk, out,
                             slot(k, 0))
        _pair_done(k, n, flip, out[1], pairs.pair_contacts)


@njit(cache=True, forceinline=True, refcount=False)
def _polytope_plane_pair(k, ga, flip, mk, poses, geom, poly, scratch, out, pair_contacts):
    """Pair k of polytope ga and a plane (``poses`` = (pose of ga, pose of the plane)): polytope_plane on ga's
    world vertices."""
    pose_a, pose_b = poses
    world = (scratch[0][0], scratch[1][0], scratch[2][0])
    nv = geom.geom_vert_count[ga]
    transform_polytope(poly, (geom.geom_vert_start[ga], nv, geom.geom_face_start[ga], 0), pose_a, world)
    n = cf.polytope_plane(world[0], nv, _plane(pose_b), mk, (scratch[3][0], scratch[6], scratch[4][0], scratch[7]),
                          out, slot(k, 0))
    _pair_done(k, n, flip, out[1], pair_contacts)


@njit(cache=True, refcount=False)
def box_pairs(k0, k1, pairs, geom, poly, poses, margins, scratch, out, stats_out):
    """Contacts of the ``FAMILY_BOXES`` pairs among k0 ≤ k < k1 (arguments as ``narrowphase_range``). A box pair
    that box_box cannot settle gets ``pair_contacts[k]`` = DEFERRED_PAIR and is counted in
    ``stats_out[DEFERRED]``: ``polytope_pairs`` must then run over the same range."""
    clip = (scratch[3], scratch[4], scratch[5], scratch[6], scratch[7])
    frames = scratch[8]
    pair_contacts = pairs.pair_contacts
    for k in range(k0, k1):
        if not _visits(k, pairs, geom, FAMILY_BOXES):
            continue
        ga, gb, flip, mk, pose_a, pose_b = _pair_setup(k, pairs, geom, poses, margins)
        if geom.geom_type[gb] == PLANE:
            _polytope_plane_pair(k, ga, flip, mk, (pose_a, pose_b), geom, poly, scratch, out, pair_contacts)
            continue
        pax, pay, paz, qaw, qax, qay, qaz = pose_a
        pbx, pby, pbz, qbw, qbx, qby, qbz = pose_b
        stats_out[POLYTOPE_TESTS] += 1
        n, decided = box_box(((pax, pay, paz), (qaw, qax, qay, qaz), _size(geom, ga)),
                             ((pbx, pby, pbz), (qbw, qbx, qby, qbz), _size(geom, gb)), mk, pairs.pair_witness, k,
                             frames, clip, out, slot(k, 0))
        if n < 0:
            pair_contacts[k] = DEFERRED_PAIR
            stats_out[DEFERRED] += 1
            continue
        if decided:
            stats_out[WITNESS_DECIDED] += 1
        _pair_done(k, n, flip, out[1], pair_contacts)


@njit(cache=True, refcount=False)
def polytope_pairs(k0, k1, pairs, geom, poly, poses, margins, scratch, out, stats_out):
    """Contacts of the ``FAMILY_POLYTOPES`` pairs among k0 ≤ k < k1, and of the box pairs ``box_pairs`` deferred
    (arguments as ``narrowphase_range``)."""
    geom_type, pair_geom, pair_contacts = geom.geom_type, pairs.pair_geom, pairs.pair_contacts
    world_a = (scratch[0][0], scratch[1][0], scratch[2][0])
    world_b = (scratch[0][1], scratch[1][1], scratch[2][1])
    for k in range(k0, k1):
        if not pairs.pair_awake[k]:
            continue
        family = pair_family(geom_type[pair_geom[k, 0]], geom_type[pair_geom[k, 1]])
        deferred = family == FAMILY_BOXES and pair_contacts[k] == DEFERRED_PAIR
        if family != FAMILY_POLYTOPES and not deferred:
            continue
        ga, gb, flip, mk, pose_a, pose_b = _pair_setup(k, pairs, geom, poses, margins)
        if geom_type[gb] == PLANE:
            _polytope_plane_pair(k, ga, flip, mk, (pose_a, pose_b), geom, poly, scratch, out, pair_contacts)
            continue
        if not deferred:    # (box_pairs counted the deferred pair's test)
            stats_out[POLYTOPE_TESTS] += 1
        transform_polytope(poly, _polytope_rows(geom, ga), pose_a, world_a)
        transform_polytope(poly, _polytope_rows(geom, gb), pose_b, world_b)
        rows_a = (geom.geom_vert_start[ga], geom.geom_vert_count[ga], geom.geom_face_start[ga],
                  geom.geom_face_count[ga], geom.geom_edge_start[ga], geom.geom_edge_count[ga])
        rows_b = (geom.geom_vert_start[gb], geom.geom_vert_count[gb], geom.geom_face_start[gb],
                  geom.geom_face_count[gb], geom.geom_edge_start[gb], geom.geom_edge_count[gb])
        n, decided = collide_polytopes(rows_a, rows_b, poly, world_a, world_b, mk, pairs.pair_witness, k, scratch,
                                       out, slot(k, 0))
        if decided:
            stats_out[WITNESS_DECIDED] += 1
        _pair_done(k, n, flip, out[1], pair_contacts)


@njit(cache=True, refcount=False)
def convex_pairs(k0, k1, pairs, geom, poly, poses, margins, scratch, out, stats_out):
    """Contacts of the ``FAMILY_CONVEX`` pairs (an ellipsoid against anything) among k0 ≤ k < k1 (arguments as
    ``narrowphase_range``)."""
    epa_ws = scratch[9]
    world_a = (scratch[0][0], scratch[1][0], scratch[2][0])
    world_b = (scratch[0][1], scratch[1][1], scratch[2][1])
    for k in range(k0, k1):
        if not _visits(k, pairs, geom, FAMILY_CONVEX):
            continue
        ga, gb, flip, mk, pose_a, pose_b = _pair_setup(k, pairs, geom, poses, margins)
        ta, tb = geom.geom_type[ga], geom.geom_type[gb]
        base = slot(k, 0)
        if tb == PLANE:  # ta is the ellipsoid
            n = ellipsoid_plane(pose_a, _size(geom, ga), _plane(pose_b), mk, out, base)
        else:
            kind_a, core_a, size_a, nv_a, radius_a = _core(ta, ga, pose_a, geom, poly, world_a)
            kind_b, core_b, size_b, nv_b, radius_b = _core(tb, gb, pose_b, geom, poly, world_b)
            n = convex_pair((kind_a, core_a, size_a, world_a[0], nv_a), radius_a,
                            (kind_b, core_b, size_b, world_b[0], nv_b), radius_b, mk, epa_ws, out, base)
        _pair_done(k, n, flip, out[1], pairs.pair_contacts)


NarrowPairs = namedtuple("NarrowPairs", ["pair_geom", "pair_awake", "pair_witness", "pair_contacts"])
"""What the narrowphase reads and writes of the pairs (``ContactPairs``): a call unboxes every array it is given
(~5 ns each without reference counting), so the detection passes these alone (``ArrayGroup.subview``); the
family kernels' call sites are ``fixed`` (jit.CallSite): always this class, never ``ContactPairs``."""

FAMILY_KERNELS = (closed_form_pairs, capsule_polytope_pairs, box_pairs, polytope_pairs, convex_pairs)
"""The serial kernel of each family, indexed by family. Each takes (k0, k1, pairs, geom, poly, poses, margins,
scratch, out, stats_out), documented at ``narrowphase_range``."""

_FAMILY_SITES = tuple(CallSite(kernel, fixed=True) for kernel in FAMILY_KERNELS)


def narrowphase_range(k0, k1, pairs, geom, poly, poses, margins, scratch, out, stats_out,
                      families=range(FAMILY_COUNT)):
    """Contacts for the candidate pairs k0 ≤ k < k1, by the kernels of ``families`` (every family by default; a
    caller that knows which families its pairs belong to passes those, so only their kernels compile). Pair k
    writes into its slots ``slot(k, 0 … 3)``, so any split of the range among threads gives the same output.

    ``pairs`` (``NarrowPairs``, m rows; the call sites are fixed to it): reads pair_geom (the two geometry rows) and
    pair_awake (False: asleep, skipped, keeping last step's contacts); pair_witness holds each pair's cached
    separating axis, read and updated; writes pair_contacts, the contacts of each pair.
    Pairs are put in canonical order (lower geometry type first) and the normals of a swapped pair are
    flipped back, so contact normals always point from the pair's second geometry toward its first.
    geom (``fields.Geometry``): the shapes; poly (``fields.Polytopes``): the packed polytope tables;
    poses = (x (n, 3) [m], q (n, 4)): the bodies' poses; margins = (margin [m], sweep (g,) [m]): pair k reports
    contacts up to margin + sweep[a] + sweep[b] apart, sweep being how far each shape can move in this step
    (``aabb.motion_sweep``).
    scratch = (vertices (2, V, 3), normals (2, F, 3), offsets (2, F), clip points (2, C, 3), clip features
    (2, C), clip kinds (2, C), depths (C,), kept indices (C,), box frames (6, 3, 3), an EPA workspace
    (``gjk.epa_workspace()``)): one thread's.
    Outputs: out = (point (4m, 3), normal (4m, 3) world, depth (4m,) m, kind (4m,), feature (4m,)), the slot
    arrays of ``fields.ContactSlots``; stats_out (4,) polytope tests, tests decided by the witness,
    unsupported pairs, box pairs deferred to ``polytope_pairs``: zeroed here, then counted.

    The dispatch is written out in each family's loop; the per-pair helpers are inlined by LLVM without
    reference counting, so the containers cost nothing per pair (binding ~40 arrays per pair through calls
    cost ~1 µs of reference counting, more than most pair tests take).
    """
    stats_out.fill(0)
    for family in families:
        _FAMILY_SITES[family](k0, k1, pairs, geom, poly, poses, margins, scratch, out, stats_out)
    # (only the box family defers pairs; the other families' steps skip reading the count)
    if FAMILY_BOXES in families and FAMILY_POLYTOPES not in families and stats_out[DEFERRED]:
        _FAMILY_SITES[FAMILY_POLYTOPES](k0, k1, pairs, geom, poly, poses, margins, scratch, out, stats_out)


@njit(cache=True, inline="always")   # it returns views: a function without reference counting must not
def _thread_scratch(scratch, epa, t):
    """Thread t's scratch tuple (as ``narrowphase_range`` takes it) from the per-thread stacks."""
    return (scratch[0][t], scratch[1][t], scratch[2][t], scratch[3][t], scratch[4][t], scratch[5][t],
            scratch[6][t], scratch[7][t], scratch[8][t], (epa[0][t], epa[1][t], epa[2][t], epa[3][t], epa[4][t],
                                                          epa[5][t]))


# The parallel drivers, one per family (a kernel cannot take the family's kernel as an argument and still be
# cached). Each runs its family's kernel over the pair ranges bounds[t] ≤ k < bounds[t + 1], one per thread,
# each with its own scratch and its own row of stats_out (T, STATS_SIZE). ``scratch`` holds the first 9
# scratch arrays and ``epa`` the EPA workspace's 6, each with a leading thread axis (a parallel loop takes
# flat tuples of arrays only). Each pair reads only its own witness and writes only its own slots: the output
# is the serial one.

@njit(cache=True, parallel=True)
def closed_form_parallel(bounds, pairs, geom, poly, poses, margins, scratch, epa, out, stats_out):
    for t in prange(bounds.shape[0] - 1):
        closed_form_pairs(bounds[t], bounds[t + 1], pairs, geom, poly, poses, margins,
                          _thread_scratch(scratch, epa, t), out, stats_out[t])


@njit(cache=True, parallel=True)
def capsule_polytope_parallel(bounds, pairs, geom, poly, poses, margins, scratch, epa, out, stats_out):
    for t in prange(bounds.shape[0] - 1):
        capsule_polytope_pairs(bounds[t], bounds[t + 1], pairs, geom, poly, poses, margins,
                               _thread_scratch(scratch, epa, t), out, stats_out[t])


@njit(cache=True, parallel=True)
def box_parallel(bounds, pairs, geom, poly, poses, margins, scratch, epa, out, stats_out):
    for t in prange(bounds.shape[0] - 1):
        box_pairs(bounds[t], bounds[t + 1], pairs, geom, poly, poses, margins, _thread_scratch(scratch, epa, t),
                  out, stats_out[t])


@njit(cache=True, parallel=True)
def polytope_parallel(bounds, pairs, geom, poly, poses, margins, scratch, epa, out, stats_out):
    for t in prange(bounds.shape[0] - 1):
        polytope_pairs(bounds[t], bounds[t + 1], pairs, geom, poly, poses, margins,
                       _thread_scratch(scratch, epa, t), out, stats_out[t])


@njit(cache=True, parallel=True)
def convex_parallel(bounds, pairs, geom, poly, poses, margins, scratch, epa, out, stats_out):
    for t in prange(bounds.shape[0] - 1):
        convex_pairs(bounds[t], bounds[t + 1], pairs, geom, poly, poses, margins, _thread_scratch(scratch, epa, t),
                     out, stats_out[t])


FAMILY_PARALLEL_KERNELS = (closed_form_parallel, capsule_polytope_parallel, box_parallel, polytope_parallel,
                           convex_parallel)
"""The parallel driver of each family, indexed by family (arguments as ``closed_form_parallel``)."""


def narrowphase_parallel(bounds, pairs, geom, poly, poses, margins, scratch, epa, out, stats_out, families):
    """``narrowphase_range`` over the pair ranges bounds[t] ≤ k < bounds[t + 1], one per thread (T + 1,), by
    the parallel drivers: ``scratch`` and ``epa`` hold every thread's scratch (a leading thread axis), and
    stats_out (T, STATS_SIZE) one row per thread, summed by the caller."""
    stats_out.fill(0)
    for family in families:
        _PARALLEL_SITES[family](bounds, pairs, geom, poly, poses, margins, scratch, epa, out, stats_out)
    if FAMILY_BOXES in families and FAMILY_POLYTOPES not in families and stats_out[:, DEFERRED].any():
        _PARALLEL_SITES[FAMILY_POLYTOPES](bounds, pairs, geom, poly, poses, margins, scratch, epa, out, stats_out)


_PARALLEL_SITES = tuple(CallSite(kernel) for kernel in FAMILY_PARALLEL_KERNELS)


def families_present(geom_type: np.ndarray, geom_moving: np.ndarray) -> tuple[int, ...]:
    """The families, in order, that a pair of the geometries can fall in: geometry types ``geom_type`` (g,) and
    ``geom_moving`` (g,) bool, False for the geometries of fixed bodies (two of which never pair). Whether a
    body is fixed cannot change, and detection is rebuilt when bodies come or go, so this holds for the
    detector's life."""
    geom_type, geom_moving = np.asarray(geom_type), np.asarray(geom_moving, dtype=bool)
    found = set()
    for ta in np.unique(geom_type[geom_moving]):
        for tb in np.unique(geom_type):
            if ta == tb and np.count_nonzero(geom_type == ta) < 2:
                continue
            found.add(int(pair_family(int(ta), int(tb))))
    return tuple(sorted(found))
