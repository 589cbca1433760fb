"""Narrowphase: exact contacts for the candidate pairs of the broadphase.

The pairs fall into four families by their shapes' types (``pair_family``), each with its own kernel so
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
Each pair owns 4 output slots; detect.py then gathers the used ones. ``stats_out[UNSUPPORTED]`` stays as a
guard for types added later.
"""

from __future__ import annotations

import numpy as np
from numba import prange

from ..conventions import GeomType
from ..jit import njit
from ..math3d import qmul_t, qrot_t
from ..model.fields import MAX_CONTACTS
from . import closed_form as cf
from . import features, gjk
from .box_box import box_box
from .capsule_polytope import capsule_polytope
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
def _geom_pose(g, geom_body, geom_pos, geom_quat, x, q):
    """World position and orientation of geometry row g: body pose ∘ local pose."""
    b = geom_body[g]
    ox, oy, oz = qrot_t(q[b, 0], q[b, 1], q[b, 2], q[b, 3], geom_pos[g, 0], geom_pos[g, 1], geom_pos[g, 2])
    qw, qx, qy, qz = qmul_t(q[b, 0], q[b, 1], q[b, 2], q[b, 3],
                            geom_quat[g, 0], geom_quat[g, 1], geom_quat[g, 2], geom_quat[g, 3])
    return x[b, 0] + ox, x[b, 1] + oy, x[b, 2] + oz, qw, qx, qy, qz


@njit(cache=True, forceinline=True, refcount=False)
def _axis_points(px, py, pz, qw, qx, qy, qz, half):
    """Ends of a capsule's segment: centre ∓ half · (body z in world)."""
    ax, ay, az = qrot_t(qw, qx, qy, qz, 0.0, 0.0, half)
    c0 = (px - ax, py - ay, pz - az)
    c1 = (px + ax, py + ay, pz + az)
    return c0, c1


@njit(cache=True)
def _core(t, g, px, py, pz, qw, qx, qy, qz, geom_size, geom_vert_start, geom_vert_count, geom_face_start,
          poly_vertices, face_normal, face_offset, wv, wn, wd):
    """Geometry g (type t, world pose p, q) as a GJK shape: (kind, p, q, s, vertex count, radius). A sphere
    is its centre and a capsule its segment (c0 in p, c1 in s), each with its radius; an ellipsoid is
    itself; a polytope is its world vertices, written to wv."""
    if t == SPHERE:
        return gjk.KIND_POINT, px, py, pz, qw, qx, qy, qz, 0.0, 0.0, 0.0, 0, geom_size[g, 0]
    if t == CAPSULE:
        c0, c1 = _axis_points(px, py, pz, qw, qx, qy, qz, geom_size[g, 1])
        return gjk.KIND_SEGMENT, c0[0], c0[1], c0[2], qw, qx, qy, qz, c1[0], c1[1], c1[2], 0, geom_size[g, 0]
    if t == ELLIPSOID:
        return (gjk.KIND_ELLIPSOID, px, py, pz, qw, qx, qy, qz, geom_size[g, 0], geom_size[g, 1], geom_size[g, 2],
                0, 0.0)
    nv = geom_vert_count[g]
    transform_polytope(poly_vertices, face_normal, face_offset, geom_vert_start[g], nv, geom_face_start[g], 0,
                       px, py, pz, qw, qx, qy, qz, wv, wn, wd)
    return gjk.KIND_POLYTOPE, px, py, pz, qw, qx, qy, qz, 0.0, 0.0, 0.0, nv, 0.0


FAMILY_CLOSED_FORM, FAMILY_CAPSULE_POLYTOPE, FAMILY_BOXES, FAMILY_POLYTOPES, FAMILY_CONVEX = range(5)
FAMILY_COUNT = 5


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
def _pair_setup(k, pairs, geom_type, geom_body, geom_pos, geom_quat, x, q, margin, sweep):
    """Pair k in canonical order (lower geometry type first: A): (ga, gb, flip, speculative margin, pose of A,
    pose of B); ``flip`` is True when the order was swapped (the normals are flipped back at the end)."""
    ga, gb = pairs[k, 0], pairs[k, 1]
    flip = geom_type[ga] > geom_type[gb]
    if flip:
        ga, gb = gb, ga
    # Speculative margin of the pair: the contact margin plus how far the two shapes can move toward each
    # other in this step, so fast bodies are seen before they pass through (no tunnelling).
    mk = margin + sweep[ga] + sweep[gb]
    pose_a = _geom_pose(ga, geom_body, geom_pos, geom_quat, x, q)
    pose_b = _geom_pose(gb, geom_body, geom_pos, geom_quat, x, q)
    return ga, gb, flip, mk, pose_a, pose_b


@njit(cache=True, forceinline=True, refcount=False)
def _pair_done(k, n, flip, normal_out, pair_contacts_out):
    """Record pair k's n contacts, normals flipped back to point from the pair's second geometry to its first."""
    if flip:
        base = MAX_CONTACTS * k
        for j in range(n):
            for c in range(3):
                normal_out[base + j, c] = -normal_out[base + j, c]
    pair_contacts_out[k] = n


@njit(cache=True)
def closed_form_pairs(k0, k1, pairs, pair_awake, geom, poly, x, q, margin, sweep, witness, scratch,
                      pair_contacts_out, out, stats_out):
    """Contacts of the ``FAMILY_CLOSED_FORM`` pairs among k0 ≤ k < k1 (arguments as ``narrowphase_range``)."""
    (geom_type, geom_body, geom_pos, geom_quat, geom_size, geom_vert_start, geom_vert_count,
     geom_face_start, geom_face_count, geom_edge_start, geom_edge_count) = geom
    poly_vertices, face_normal, face_offset, face_vstart, face_vcount, face_verts, edges, edge_faces = poly
    point_out, normal_out, depth_out, kind_out, feature_out = out
    wv1, wn1, wd1 = scratch[0][1], scratch[1][1], scratch[2][1]
    for k in range(k0, k1):
        if not pair_awake[k] or pair_family(geom_type[pairs[k, 0]], geom_type[pairs[k, 1]]) != FAMILY_CLOSED_FORM:
            continue  # asleep (last step's contacts were kept, contact_buffer.set_pairs) or another family's
        ga, gb, flip, mk, pose_a, pose_b = _pair_setup(k, pairs, geom_type, geom_body, geom_pos, geom_quat, x, q,
                                                       margin, sweep)
        pax, pay, paz, qaw, qax, qay, qaz = pose_a
        pbx, pby, pbz, qbw, qbx, qby, qbz = pose_b
        ta, tb = geom_type[ga], geom_type[gb]
        base = MAX_CONTACTS * k
        n = 0
        if tb == PLANE:
            nx, ny, nz = qrot_t(qbw, qbx, qby, qbz, 0.0, 0.0, 1.0)
            d = nx * pbx + ny * pby + nz * pbz
            if ta == SPHERE:
                n = cf.sphere_plane(pax, pay, paz, geom_size[ga, 0], nx, ny, nz, d, mk, features.POINT_ID,
                                    point_out, normal_out, depth_out, kind_out, feature_out, base)
            elif ta == CAPSULE:
                c0, c1 = _axis_points(pax, pay, paz, qaw, qax, qay, qaz, geom_size[ga, 1])
                n = cf.capsule_plane(c0, c1, geom_size[ga, 0], nx, ny, nz, d, mk,
                                     point_out, normal_out, depth_out, kind_out, feature_out, base)
            else:
                stats_out[UNSUPPORTED] += 1
        elif ta == SPHERE and tb == SPHERE:
            n = cf.spheres(pax, pay, paz, geom_size[ga, 0], pbx, pby, pbz, geom_size[gb, 0], mk, features.POINT_ID,
                           point_out, normal_out, depth_out, kind_out, feature_out, base)
        elif ta == SPHERE and tb == BOX:
            n = cf.sphere_box(pax, pay, paz, geom_size[ga, 0], pbx, pby, pbz, qbw, qbx, qby, qbz,
                              geom_size[gb, 0], geom_size[gb, 1], geom_size[gb, 2], mk,
                              point_out, normal_out, depth_out, kind_out, feature_out, base)
        elif ta == SPHERE and tb == CAPSULE:  # capsule_sphere takes the capsule first: flip its normal
            c0, c1 = _axis_points(pbx, pby, pbz, qbw, qbx, qby, qbz, geom_size[gb, 1])
            n = cf.capsule_sphere(c0, c1, geom_size[gb, 0], pax, pay, paz, geom_size[ga, 0],
                                  mk, point_out, normal_out, depth_out, kind_out, feature_out, base)
            flip = not flip
        elif ta == SPHERE and (tb == CYLINDER or tb == HULL):
            transform_polytope(poly_vertices, face_normal, face_offset, geom_vert_start[gb], geom_vert_count[gb],
                               geom_face_start[gb], geom_face_count[gb], pbx, pby, pbz, qbw, qbx, qby, qbz,
                               wv1, wn1, wd1)
            n = cf.sphere_polytope(pax, pay, paz, geom_size[ga, 0], wv1, wn1, wd1, geom_face_count[gb],
                                   face_vstart, face_vcount, face_verts, geom_face_start[gb], edges,
                                   geom_edge_start[gb], geom_edge_count[gb], mk,
                                   point_out, normal_out, depth_out, kind_out, feature_out, base)
        elif ta == CAPSULE and tb == CAPSULE:
            a0, a1 = _axis_points(pax, pay, paz, qaw, qax, qay, qaz, geom_size[ga, 1])
            b0, b1 = _axis_points(pbx, pby, pbz, qbw, qbx, qby, qbz, geom_size[gb, 1])
            n = cf.capsules(a0, a1, geom_size[ga, 0], b0, b1,
                            geom_size[gb, 0], mk, point_out, normal_out, depth_out, kind_out, feature_out, base)
        else:
            stats_out[UNSUPPORTED] += 1
        _pair_done(k, n, flip, normal_out, pair_contacts_out)


@njit(cache=True)
def capsule_polytope_pairs(k0, k1, pairs, pair_awake, geom, poly, x, q, margin, sweep, witness, scratch,
                           pair_contacts_out, out, stats_out):
    """Contacts of the ``FAMILY_CAPSULE_POLYTOPE`` pairs among k0 ≤ k < k1 (arguments as ``narrowphase_range``)."""
    (geom_type, geom_body, geom_pos, geom_quat, geom_size, geom_vert_start, geom_vert_count,
     geom_face_start, geom_face_count, geom_edge_start, geom_edge_count) = geom
    poly_vertices, face_normal, face_offset, face_vstart, face_vcount, face_verts, edges, edge_faces = poly
    wv1, wn1, wd1 = scratch[0][1], scratch[1][1], scratch[2][1]
    point_out, normal_out, depth_out, kind_out, feature_out = out
    for k in range(k0, k1):
        if not pair_awake[k] or pair_family(geom_type[pairs[k, 0]], geom_type[pairs[k, 1]]) != FAMILY_CAPSULE_POLYTOPE:
            continue
        ga, gb, flip, mk, pose_a, pose_b = _pair_setup(k, pairs, geom_type, geom_body, geom_pos, geom_quat, x, q,
                                                       margin, sweep)
        # capsule_polytope takes the capsule first: a (box, capsule) pair swaps and flips
        gc, gp, pose_c, pose_p = ga, gb, pose_a, pose_b
        if geom_type[ga] != CAPSULE:
            gc, gp, pose_c, pose_p = gb, ga, pose_b, pose_a
            flip = not flip
        pcx, pcy, pcz, qcw, qcx, qcy, qcz = pose_c
        ppx, ppy, ppz, qpw, qpx, qpy, qpz = pose_p
        transform_polytope(poly_vertices, face_normal, face_offset, geom_vert_start[gp], geom_vert_count[gp],
                           geom_face_start[gp], geom_face_count[gp], ppx, ppy, ppz, qpw, qpx, qpy, qpz,
                           wv1, wn1, wd1)
        c0, c1 = _axis_points(pcx, pcy, pcz, qcw, qcx, qcy, qcz, geom_size[gc, 1])
        n = capsule_polytope(c0, c1, geom_size[gc, 0], wv1, geom_vert_count[gp],
                             wn1, wd1, geom_face_count[gp], face_vstart, face_vcount, face_verts,
                             geom_face_start[gp], edges, geom_edge_start[gp], geom_edge_count[gp], mk,
                             point_out, normal_out, depth_out, kind_out, feature_out, MAX_CONTACTS * k)
        _pair_done(k, n, flip, normal_out, pair_contacts_out)


@njit(cache=True, forceinline=True, refcount=False)
def _polytope_plane_pair(k, ga, flip, mk, pose_a, pose_b, geom_vert_start, geom_vert_count, geom_face_start, poly,
                         scratch, out, pair_contacts_out):
    """Pair k of polytope ga (pose_a) and a plane (pose_b): polytope_plane on ga's world vertices."""
    pax, pay, paz, qaw, qax, qay, qaz = pose_a
    pbx, pby, pbz, qbw, qbx, qby, qbz = pose_b
    poly_vertices, face_normal, face_offset = poly[0], poly[1], poly[2]
    wv0, wn0, wd0, clip_pts, clip_feat, clip_dep, keep = (scratch[0][0], scratch[1][0], scratch[2][0], scratch[3],
                                                          scratch[4], scratch[6], scratch[7])
    nx, ny, nz = qrot_t(qbw, qbx, qby, qbz, 0.0, 0.0, 1.0)
    nv = geom_vert_count[ga]
    transform_polytope(poly_vertices, face_normal, face_offset, geom_vert_start[ga], nv,
                       geom_face_start[ga], 0, pax, pay, paz, qaw, qax, qay, qaz, wv0, wn0, wd0)
    n = cf.polytope_plane(wv0, nv, nx, ny, nz, nx * pbx + ny * pby + nz * pbz, mk, clip_pts[0], clip_dep,
                          clip_feat[0], keep, out[0], out[1], out[2], out[3], out[4], MAX_CONTACTS * k)
    _pair_done(k, n, flip, out[1], pair_contacts_out)


@njit(cache=True)
def box_pairs(k0, k1, pairs, pair_awake, geom, poly, x, q, margin, sweep, witness, scratch,
              pair_contacts_out, out, stats_out):
    """Contacts of the ``FAMILY_BOXES`` pairs among k0 ≤ k < k1 (arguments as ``narrowphase_range``). A box pair
    that box_box cannot settle gets ``pair_contacts_out[k]`` = DEFERRED_PAIR and is counted in
    ``stats_out[DEFERRED]``: ``polytope_pairs`` must then run over the same range."""
    (geom_type, geom_body, geom_pos, geom_quat, geom_size, geom_vert_start, geom_vert_count,
     geom_face_start, geom_face_count, geom_edge_start, geom_edge_count) = geom
    clip = (scratch[3], scratch[4], scratch[5], scratch[6], scratch[7])
    frames = scratch[8]
    for k in range(k0, k1):
        if not pair_awake[k] or pair_family(geom_type[pairs[k, 0]], geom_type[pairs[k, 1]]) != FAMILY_BOXES:
            continue
        ga, gb, flip, mk, pose_a, pose_b = _pair_setup(k, pairs, geom_type, geom_body, geom_pos, geom_quat, x, q,
                                                       margin, sweep)
        if geom_type[gb] == PLANE:
            _polytope_plane_pair(k, ga, flip, mk, pose_a, pose_b, geom_vert_start, geom_vert_count,
                                 geom_face_start, poly, scratch, out, pair_contacts_out)
            continue
        pax, pay, paz, qaw, qax, qay, qaz = pose_a
        pbx, pby, pbz, qbw, qbx, qby, qbz = pose_b
        stats_out[POLYTOPE_TESTS] += 1
        n, decided = box_box((pax, pay, paz), (qaw, qax, qay, qaz), (geom_size[ga, 0], geom_size[ga, 1],
                             geom_size[ga, 2]), (pbx, pby, pbz), (qbw, qbx, qby, qbz),
                             (geom_size[gb, 0], geom_size[gb, 1], geom_size[gb, 2]), mk, witness, k,
                             frames, clip, out, MAX_CONTACTS * k)
        if n < 0:
            pair_contacts_out[k] = DEFERRED_PAIR
            stats_out[DEFERRED] += 1
            continue
        if decided:
            stats_out[WITNESS_DECIDED] += 1
        _pair_done(k, n, flip, out[1], pair_contacts_out)


@njit(cache=True)
def polytope_pairs(k0, k1, pairs, pair_awake, geom, poly, x, q, margin, sweep, witness, scratch,
                   pair_contacts_out, out, stats_out):
    """Contacts of the ``FAMILY_POLYTOPES`` pairs among k0 ≤ k < k1, and of the box pairs ``box_pairs`` deferred
    (arguments as ``narrowphase_range``)."""
    (geom_type, geom_body, geom_pos, geom_quat, geom_size, geom_vert_start, geom_vert_count,
     geom_face_start, geom_face_count, geom_edge_start, geom_edge_count) = geom
    poly_vertices, face_normal, face_offset = poly[0], poly[1], poly[2]
    scratch_v, scratch_n, scratch_d = scratch[0], scratch[1], scratch[2]
    wv0, wn0, wd0 = scratch_v[0], scratch_n[0], scratch_d[0]
    wv1, wn1, wd1 = scratch_v[1], scratch_n[1], scratch_d[1]
    for k in range(k0, k1):
        if not pair_awake[k]:
            continue
        family = pair_family(geom_type[pairs[k, 0]], geom_type[pairs[k, 1]])
        deferred = family == FAMILY_BOXES and pair_contacts_out[k] == DEFERRED_PAIR
        if family != FAMILY_POLYTOPES and not deferred:
            continue
        ga, gb, flip, mk, pose_a, pose_b = _pair_setup(k, pairs, geom_type, geom_body, geom_pos, geom_quat, x, q,
                                                       margin, sweep)
        if geom_type[gb] == PLANE:
            _polytope_plane_pair(k, ga, flip, mk, pose_a, pose_b, geom_vert_start, geom_vert_count,
                                 geom_face_start, poly, scratch, out, pair_contacts_out)
            continue
        pax, pay, paz, qaw, qax, qay, qaz = pose_a
        pbx, pby, pbz, qbw, qbx, qby, qbz = pose_b
        if not deferred:    # (box_pairs counted the deferred pair's test)
            stats_out[POLYTOPE_TESTS] += 1
        transform_polytope(poly_vertices, face_normal, face_offset, geom_vert_start[ga],
                           geom_vert_count[ga], geom_face_start[ga], geom_face_count[ga],
                           pax, pay, paz, qaw, qax, qay, qaz, wv0, wn0, wd0)
        transform_polytope(poly_vertices, face_normal, face_offset, geom_vert_start[gb],
                           geom_vert_count[gb], geom_face_start[gb], geom_face_count[gb],
                           pbx, pby, pbz, qbw, qbx, qby, qbz, wv1, wn1, wd1)
        rows_a = (geom_vert_start[ga], geom_vert_count[ga], geom_face_start[ga], geom_face_count[ga],
                  geom_edge_start[ga], geom_edge_count[ga])
        rows_b = (geom_vert_start[gb], geom_vert_count[gb], geom_face_start[gb], geom_face_count[gb],
                  geom_edge_start[gb], geom_edge_count[gb])
        n, decided = collide_polytopes(rows_a, rows_b, poly, (wv0, wn0, wd0), (wv1, wn1, wd1), mk,
                                       witness, k, scratch, out, MAX_CONTACTS * k)
        if decided:
            stats_out[WITNESS_DECIDED] += 1
        _pair_done(k, n, flip, out[1], pair_contacts_out)


@njit(cache=True)
def convex_pairs(k0, k1, pairs, pair_awake, geom, poly, x, q, margin, sweep, witness, scratch,
                 pair_contacts_out, out, stats_out):
    """Contacts of the ``FAMILY_CONVEX`` pairs (an ellipsoid against anything) among k0 ≤ k < k1 (arguments as
    ``narrowphase_range``)."""
    (geom_type, geom_body, geom_pos, geom_quat, geom_size, geom_vert_start, geom_vert_count,
     geom_face_start, geom_face_count, geom_edge_start, geom_edge_count) = geom
    poly_vertices, face_normal, face_offset = poly[0], poly[1], poly[2]
    scratch_v, scratch_n, scratch_d, epa_ws = scratch[0], scratch[1], scratch[2], scratch[9]
    point_out, normal_out, depth_out, kind_out, feature_out = out
    wv0, wn0, wd0 = scratch_v[0], scratch_n[0], scratch_d[0]
    wv1, wn1, wd1 = scratch_v[1], scratch_n[1], scratch_d[1]
    for k in range(k0, k1):
        if not pair_awake[k] or pair_family(geom_type[pairs[k, 0]], geom_type[pairs[k, 1]]) != FAMILY_CONVEX:
            continue
        ga, gb, flip, mk, pose_a, pose_b = _pair_setup(k, pairs, geom_type, geom_body, geom_pos, geom_quat, x, q,
                                                       margin, sweep)
        pax, pay, paz, qaw, qax, qay, qaz = pose_a
        pbx, pby, pbz, qbw, qbx, qby, qbz = pose_b
        ta, tb = geom_type[ga], geom_type[gb]
        base = MAX_CONTACTS * k
        if tb == PLANE:  # ta is the ellipsoid
            nx, ny, nz = qrot_t(qbw, qbx, qby, qbz, 0.0, 0.0, 1.0)
            n = ellipsoid_plane(pax, pay, paz, qaw, qax, qay, qaz, geom_size[ga, 0], geom_size[ga, 1],
                                geom_size[ga, 2], nx, ny, nz, nx * pbx + ny * pby + nz * pbz, mk,
                                point_out, normal_out, depth_out, kind_out, feature_out, base)
        else:
            a = _core(ta, ga, pax, pay, paz, qaw, qax, qay, qaz, geom_size, geom_vert_start, geom_vert_count,
                      geom_face_start, poly_vertices, face_normal, face_offset, wv0, wn0, wd0)
            b = _core(tb, gb, pbx, pby, pbz, qbw, qbx, qby, qbz, geom_size, geom_vert_start, geom_vert_count,
                      geom_face_start, poly_vertices, face_normal, face_offset, wv1, wn1, wd1)
            n = convex_pair(a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7], a[8], a[9], a[10], wv0, a[11], a[12],
                            b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], wv1, b[11], b[12],
                            mk, epa_ws, point_out, normal_out, depth_out, kind_out, feature_out, base)
        _pair_done(k, n, flip, normal_out, pair_contacts_out)


FAMILY_KERNELS = (closed_form_pairs, capsule_polytope_pairs, box_pairs, polytope_pairs, convex_pairs)
"""The serial kernel of each family, indexed by family. Each takes (k0, k1, pairs, pair_awake, geom, poly, x, q,
margin, sweep, witness, scratch, pair_contacts_out, out, stats_out), documented at ``narrowphase_range``."""


def narrowphase_range(k0, k1, pairs, pair_awake, geom, poly, x, q, margin, sweep, witness, scratch, pair_contacts_out,
                      out, stats_out, families=range(FAMILY_COUNT)):
    """Contacts for the candidate pairs k0 ≤ k < k1 of pairs (m, 2) of geometry rows, by the kernels of
    ``families`` (every family by default; a caller that knows which families its pairs belong to passes
    those, so only their kernels compile). Pair k writes into slots 4k … 4k+3, so any split of the range
    among threads gives the same output.

    Pairs with ``pair_awake`` (m,) False are skipped (asleep: they keep last step's contacts).
    Pairs are put in canonical order (lower geometry type first) and the normals of a swapped pair are
    flipped back, so contact normals always point from the pair's second geometry toward its first.
    Array groups (tuples, unpacked once per call):
    geom = (geom_type, geom_body, geom_pos, geom_quat, geom_size, geom_vert_start, geom_vert_count,
    geom_face_start, geom_face_count, geom_edge_start, geom_edge_count): the World's geometry rows;
    poly = (vertices, face_normal, face_offset, face_vstart, face_vcount, face_verts, edges, edge_faces):
    the shared polytope tables (PolytopeTable.arrays()); x (n, 3), q (n, 4): body poses;
    scratch = (vertices (2, V, 3), normals (2, F, 3), offsets (2, F), clip points (2, C, 3), clip features
    (2, C), clip kinds (2, C), depths (C,), kept indices (C,), box frames (6, 3, 3), an EPA workspace
    (``gjk.epa_workspace()``)): one thread's;
    ``sweep`` (g,) [m]: how far each shape can move in this step (``aabb.motion_sweep``); pair k reports
    contacts up to margin + sweep[a] + sweep[b] apart. ``witness`` (m, 3) holds each pair's cached
    separating axis, read and updated.
    Outputs: pair_contacts_out (m,) contacts per pair; out = (point (4m, 3), normal (4m, 3) world, depth
    (4m,) m, kind (4m,), feature (4m,)); stats_out (4,) polytope tests, tests decided by the witness,
    unsupported pairs, box pairs deferred to ``polytope_pairs``: zeroed here, then counted.

    The dispatch is written out in each family's loop, with every array bound once before it: binding ~40
    arrays per pair (a call, or an inlined function's parameters) costs ~1 µs of reference counting, more
    than most pair tests take.
    """
    stats_out[:] = 0
    for family in families:
        FAMILY_KERNELS[family](k0, k1, pairs, pair_awake, geom, poly, x, q, margin, sweep, witness, scratch,
                               pair_contacts_out, out, stats_out)
    if stats_out[DEFERRED] and FAMILY_POLYTOPES not in families:
        polytope_pairs(k0, k1, pairs, pair_awake, geom, poly, x, q, margin, sweep, witness, scratch,
                       pair_contacts_out, out, stats_out)


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
def closed_form_parallel(bounds, pairs, pair_awake, geom, poly, x, q, margin, sweep, witness, scratch, epa,
                         pair_contacts_out, out, stats_out):
    for t in prange(bounds.shape[0] - 1):
        closed_form_pairs(bounds[t], bounds[t + 1], pairs, pair_awake, geom, poly, x, q, margin, sweep, witness,
                          _thread_scratch(scratch, epa, t), pair_contacts_out, out, stats_out[t])


@njit(cache=True, parallel=True)
def capsule_polytope_parallel(bounds, pairs, pair_awake, geom, poly, x, q, margin, sweep, witness, scratch, epa,
                              pair_contacts_out, out, stats_out):
    for t in prange(bounds.shape[0] - 1):
        capsule_polytope_pairs(bounds[t], bounds[t + 1], pairs, pair_awake, geom, poly, x, q, margin, sweep,
                               witness, _thread_scratch(scratch, epa, t), pair_contacts_out, out, stats_out[t])


@njit(cache=True, parallel=True)
def box_parallel(bounds, pairs, pair_awake, geom, poly, x, q, margin, sweep, witness, scratch, epa,
                 pair_contacts_out, out, stats_out):
    for t in prange(bounds.shape[0] - 1):
        box_pairs(bounds[t], bounds[t + 1], pairs, pair_awake, geom, poly, x, q, margin, sweep, witness,
                  _thread_scratch(scratch, epa, t), pair_contacts_out, out, stats_out[t])


@njit(cache=True, parallel=True)
def polytope_parallel(bounds, pairs, pair_awake, geom, poly, x, q, margin, sweep, witness, scratch, epa,
                      pair_contacts_out, out, stats_out):
    for t in prange(bounds.shape[0] - 1):
        polytope_pairs(bounds[t], bounds[t + 1], pairs, pair_awake, geom, poly, x, q, margin, sweep, witness,
                       _thread_scratch(scratch, epa, t), pair_contacts_out, out, stats_out[t])


@njit(cache=True, parallel=True)
def convex_parallel(bounds, pairs, pair_awake, geom, poly, x, q, margin, sweep, witness, scratch, epa,
                    pair_contacts_out, out, stats_out):
    for t in prange(bounds.shape[0] - 1):
        convex_pairs(bounds[t], bounds[t + 1], pairs, pair_awake, geom, poly, x, q, margin, sweep, witness,
                     _thread_scratch(scratch, epa, t), pair_contacts_out, out, stats_out[t])


FAMILY_PARALLEL_KERNELS = (closed_form_parallel, capsule_polytope_parallel, box_parallel, polytope_parallel,
                           convex_parallel)
"""The parallel driver of each family, indexed by family (arguments as ``closed_form_parallel``)."""


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
