"""Narrowphase: exact contacts for the candidate pairs of the broadphase.

One kernel loops over the pairs, builds each geometry's world pose (body pose ∘ local pose) and
dispatches on the integer geometry types (no per-object virtual calls). Each pair owns 4 output slots;
``compact`` then gathers the used slots into the World's contact buffer.

Pairs handled: sphere–sphere, sphere–plane, sphere–box, sphere–capsule, sphere–hull and sphere–cylinder
(exact closest point), capsule–capsule, capsule–plane, capsule–polytope (exact, see capsule_polytope),
every pair of polytopes (box, convex hull, cylinder as a 24-gon prism) by separating axes, and
polytope–plane. Pairs with no test yet (ellipsoids) produce no contacts and are counted in
``stats_out[UNSUPPORTED]``.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from ..conventions import GeomType
from ..math3d import qmul_t, qrot_t
from . import closed_form as cf
from .capsule_polytope import capsule_polytope
from .sat import MAX_CONTACTS, collide_polytopes, transform_polytope

SPHERE = int(GeomType.SPHERE)
BOX = int(GeomType.BOX)
CAPSULE = int(GeomType.CAPSULE)
CYLINDER = int(GeomType.CYLINDER)
ELLIPSOID = int(GeomType.ELLIPSOID)
HULL = int(GeomType.CONVEX_HULL)
PLANE = int(GeomType.PLANE)

# stats_out layout
POLYTOPE_TESTS, WITNESS_DECIDED, UNSUPPORTED = 0, 1, 2
STATS_SIZE = 3


@njit(cache=True, inline="always")
def _is_polytope(t):
    return t == BOX or t == CYLINDER or t == HULL


@njit(cache=True, inline="always")
def _geom_pose(g, geom_body, geom_pos, geom_quat, x, q):
    """World position and orientation of geometry row g: body pose ∘ local pose."""
    b = geom_body[g]
    ox, oy, oz = qrot_t(q[b, 0], q[b, 1], q[b, 2], q[b, 3], geom_pos[g, 0], geom_pos[g, 1], geom_pos[g, 2])
    qw, qx, qy, qz = qmul_t(q[b, 0], q[b, 1], q[b, 2], q[b, 3],
                            geom_quat[g, 0], geom_quat[g, 1], geom_quat[g, 2], geom_quat[g, 3])
    return x[b, 0] + ox, x[b, 1] + oy, x[b, 2] + oz, qw, qx, qy, qz


@njit(cache=True, inline="always")
def _axis_points(px, py, pz, qw, qx, qy, qz, half):
    """Ends of a capsule's segment: centre ∓ half · (body z in world)."""
    ax, ay, az = qrot_t(qw, qx, qy, qz, 0.0, 0.0, half)
    c0 = (px - ax, py - ay, pz - az)
    c1 = (px + ax, py + ay, pz + az)
    return c0, c1


@njit(cache=True)
def _pair(ga, gb, geom_type, geom_body, geom_pos, geom_quat, geom_size, geom_vert_start, geom_vert_count,
          geom_face_start, geom_face_count, geom_edge_start, geom_edge_count,
          poly_vertices, face_normal, face_offset, face_vstart, face_vcount, face_verts, edges, edge_faces,
          x, q, margin, witness, scratch_v, scratch_n, scratch_d, clip_pts, clip_feat, clip_kind, clip_dep, keep,
          point_out, normal_out, depth_out, kind_out, feature_out, base, stats_out):
    """Contacts of one pair with ``geom_type[ga] <= geom_type[gb]`` (normals B → A). Returns the count."""
    ta, tb = geom_type[ga], geom_type[gb]
    pax, pay, paz, qaw, qax, qay, qaz = _geom_pose(ga, geom_body, geom_pos, geom_quat, x, q)
    pbx, pby, pbz, qbw, qbx, qby, qbz = _geom_pose(gb, geom_body, geom_pos, geom_quat, x, q)
    args = (point_out, normal_out, depth_out, kind_out, feature_out, base)
    if tb == PLANE:
        nx, ny, nz = qrot_t(qbw, qbx, qby, qbz, 0.0, 0.0, 1.0)
        d = nx * pbx + ny * pby + nz * pbz
        if ta == SPHERE:
            return cf.sphere_plane(pax, pay, paz, geom_size[ga, 0], nx, ny, nz, d, margin, 0, *args)
        if ta == CAPSULE:
            c0, c1 = _axis_points(pax, pay, paz, qaw, qax, qay, qaz, geom_size[ga, 1])
            return cf.capsule_plane(np.array(c0), np.array(c1), geom_size[ga, 0], nx, ny, nz, d, margin, *args)
        if _is_polytope(ta):
            nv = geom_vert_count[ga]
            transform_polytope(poly_vertices, face_normal, face_offset, geom_vert_start[ga], nv, geom_face_start[ga],
                               0, pax, pay, paz, qaw, qax, qay, qaz, scratch_v[0], scratch_n[0], scratch_d[0])
            return cf.polytope_plane(scratch_v[0], nv, nx, ny, nz, d, margin, clip_pts[0], clip_dep, clip_feat[0],
                                     keep, *args)
    elif ta == SPHERE:
        ra = geom_size[ga, 0]
        if tb == SPHERE:
            return cf.spheres(pax, pay, paz, ra, pbx, pby, pbz, geom_size[gb, 0], margin, 0, *args)
        if tb == BOX:
            return cf.sphere_box(pax, pay, paz, ra, pbx, pby, pbz, qbw, qbx, qby, qbz,
                                 geom_size[gb, 0], geom_size[gb, 1], geom_size[gb, 2], margin, *args)
        if tb == CAPSULE:  # capsule_sphere takes the capsule first: swap, then flip the normal
            c0, c1 = _axis_points(pbx, pby, pbz, qbw, qbx, qby, qbz, geom_size[gb, 1])
            n = cf.capsule_sphere(np.array(c0), np.array(c1), geom_size[gb, 0], pax, pay, paz, ra, margin, *args)
            for k in range(n):
                for c in range(3):
                    normal_out[base + k, c] = -normal_out[base + k, c]
            return n
        if tb == CYLINDER or tb == HULL:
            transform_polytope(poly_vertices, face_normal, face_offset, geom_vert_start[gb], geom_vert_count[gb],
                               geom_face_start[gb], geom_face_count[gb], pbx, pby, pbz, qbw, qbx, qby, qbz,
                               scratch_v[1], scratch_n[1], scratch_d[1])
            return cf.sphere_polytope(pax, pay, paz, ra, scratch_v[1], scratch_n[1], scratch_d[1],
                                      geom_face_count[gb], face_vstart, face_vcount, face_verts, geom_face_start[gb],
                                      edges, geom_edge_start[gb], geom_edge_count[gb], margin, *args)
    elif (ta == CAPSULE and _is_polytope(tb)) or (ta == BOX and tb == CAPSULE):
        # capsule_polytope takes the capsule first; a (box, capsule) pair flips its normals by sign −1
        gc, gp, sign = (ga, gb, 1.0) if ta == CAPSULE else (gb, ga, -1.0)
        pcx, pcy, pcz, qcw, qcx, qcy, qcz = (pax, pay, paz, qaw, qax, qay, qaz) if ta == CAPSULE else \
            (pbx, pby, pbz, qbw, qbx, qby, qbz)
        ppx, ppy, ppz, qpw, qpx, qpy, qpz = (pbx, pby, pbz, qbw, qbx, qby, qbz) if ta == CAPSULE else \
            (pax, pay, paz, qaw, qax, qay, qaz)
        transform_polytope(poly_vertices, face_normal, face_offset, geom_vert_start[gp], geom_vert_count[gp],
                           geom_face_start[gp], geom_face_count[gp], ppx, ppy, ppz, qpw, qpx, qpy, qpz,
                           scratch_v[1], scratch_n[1], scratch_d[1])
        c0, c1 = _axis_points(pcx, pcy, pcz, qcw, qcx, qcy, qcz, geom_size[gc, 1])
        return capsule_polytope(np.array(c0), np.array(c1), geom_size[gc, 0], scratch_v[1], geom_vert_count[gp],
                                scratch_n[1], scratch_d[1], geom_face_count[gp], face_vstart, face_vcount,
                                face_verts, geom_face_start[gp], edges, geom_edge_start[gp], geom_edge_count[gp],
                                margin, sign, *args)
    elif ta == CAPSULE and tb == CAPSULE:
        a0, a1 = _axis_points(pax, pay, paz, qaw, qax, qay, qaz, geom_size[ga, 1])
        b0, b1 = _axis_points(pbx, pby, pbz, qbw, qbx, qby, qbz, geom_size[gb, 1])
        return cf.capsules(np.array(a0), np.array(a1), geom_size[ga, 0], np.array(b0), np.array(b1),
                           geom_size[gb, 0], margin, *args)
    elif _is_polytope(ta) and _is_polytope(tb):
        stats_out[POLYTOPE_TESTS] += 1
        for side, g, px, py, pz, qw, qx, qy, qz in ((0, ga, pax, pay, paz, qaw, qax, qay, qaz),
                                                    (1, gb, pbx, pby, pbz, qbw, qbx, qby, qbz)):
            transform_polytope(poly_vertices, face_normal, face_offset, geom_vert_start[g], geom_vert_count[g],
                               geom_face_start[g], geom_face_count[g], px, py, pz, qw, qx, qy, qz,
                               scratch_v[side], scratch_n[side], scratch_d[side])
        n, decided = collide_polytopes(
            geom_vert_start[ga], geom_vert_count[ga], geom_face_start[ga], geom_face_count[ga],
            geom_edge_start[ga], geom_edge_count[ga],
            geom_vert_start[gb], geom_vert_count[gb], geom_face_start[gb], geom_face_count[gb],
            geom_edge_start[gb], geom_edge_count[gb],
            face_vstart, face_vcount, face_verts, edges, edge_faces,
            scratch_v[0], scratch_n[0], scratch_d[0], scratch_v[1], scratch_n[1], scratch_d[1], margin, witness,
            clip_pts[0], clip_feat[0], clip_kind[0], clip_pts[1], clip_feat[1], clip_kind[1], clip_dep, keep, *args)
        if decided:
            stats_out[WITNESS_DECIDED] += 1
        return n
    stats_out[UNSUPPORTED] += 1
    return 0


@njit(cache=True)
def narrowphase(pairs, geom_type, geom_body, geom_pos, geom_quat, geom_size, geom_vert_start, geom_vert_count,
                geom_face_start, geom_face_count, geom_edge_start, geom_edge_count,
                poly_vertices, face_normal, face_offset, face_vstart, face_vcount, face_verts, edges, edge_faces,
                x, q, margin, witness, scratch_v, scratch_n, scratch_d, clip_pts, clip_feat, clip_kind, clip_dep, keep,
                pair_contacts_out, point_out, normal_out, depth_out, kind_out, feature_out, stats_out):
    """Contacts for every candidate pair (m, 2) of geometry rows; pair k writes into slots 4k … 4k+3.

    Pairs are put in canonical order (lower geometry type first) and the normals of a swapped pair are
    flipped back, so contact normals always point from the pair's second geometry toward its first.
    ``witness`` (m, 3) holds each pair's cached separating axis, read and updated.
    Outputs: pair_contacts_out (m,) contacts per pair; point/normal (4m, 3) world; depth (4m,) m;
    kind, feature (4m,); stats_out (3,) polytope tests, tests decided by the witness, unsupported pairs.
    """
    for k in range(STATS_SIZE):
        stats_out[k] = 0
    for k in range(pairs.shape[0]):
        ga, gb = pairs[k, 0], pairs[k, 1]
        swap = geom_type[ga] > geom_type[gb]
        if swap:
            ga, gb = gb, ga
        base = MAX_CONTACTS * k
        n = _pair(ga, gb, geom_type, geom_body, geom_pos, geom_quat, geom_size, geom_vert_start, geom_vert_count,
                  geom_face_start, geom_face_count, geom_edge_start, geom_edge_count,
                  poly_vertices, face_normal, face_offset, face_vstart, face_vcount, face_verts, edges, edge_faces,
                  x, q, margin, witness[k], scratch_v, scratch_n, scratch_d, clip_pts, clip_feat, clip_kind, clip_dep,
                  keep, point_out, normal_out, depth_out, kind_out, feature_out, base, stats_out)
        if swap:
            for j in range(n):
                for c in range(3):
                    normal_out[base + j, c] = -normal_out[base + j, c]
        pair_contacts_out[k] = n
