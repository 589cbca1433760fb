"""Box against box: the 15 separating axes in closed form, and a clipped face manifold.

Two boxes are disjoint iff one of 15 axes separates them (Baraff II 7.1; Gottschalk's OBB test, Ericson,
Real-Time Collision Detection 4.4.1): the 3 face normals of each and the 9 cross products of their edge
directions. With C = R_Aᵀ R_B (C_ij = a_i · b_j) and t = R_Aᵀ (p_B − p_A), every projection radius is a
sum of half extents times |C_ij|, so the whole test is a few dozen multiply-adds and needs no vertex.

The axis choice is the general separating-axis test's (sat.py): the greatest separation, a face axis
unless an edge pair separates more by ``sat.face_preference``, ties to A. Contacts follow it too:
- face axis: B's face most anti-parallel to the reference normal is the incident face; its 4 corners, in
  the reference box's frame, are clipped against the reference face's 4 side planes (``sat.clip_by_plane``,
  so points are named by lines as everywhere, ``features.face_clip``, though numbered in this frame), points
  within the margin are kept midway between the incident point and the reference plane, the top-up rules
  of ``sat.manifold_top_up`` apply when the clipped points fall short of the overlap (docs/collision.md),
  and more than 4 are reduced to 4;
- edge axis: one edge–edge contact at the midpoint of the closest points of the two supporting edges.
Face indices follow ``polytope.box_polytope`` (2k for −axis k, 2k + 1 for +axis k). World frame, metres;
normals point from B toward A.

The witness cached per pair is the axis index (0–2 faces of A, 3–5 faces of B, 6 + 3i + j for a_i × b_j).
"""

from __future__ import annotations

import numpy as np

from ..jit import njit
from ..math3d import quat_matrix_t
from . import features
from .sat import (
    DEPTH_ROUNDING,
    KIND_EDGE_EDGE,
    KIND_VERTEX_FACE,
    clip_by_plane,
    edge_axis_along_face,
    edge_midpoint,
    face_preference,
    name_clipped,
    reduce_manifold,
    write_edge_contact,
)

WITNESS_BOX_AXIS = 3
"""Witness kind of a box pair: ``witness[k] = [WITNESS_BOX_AXIS, axis, -1]``."""

SUPPORT_TIE = 1e-6
BESIDE_FACE = 1e-3
"""m. With every box axis at least SUPPORT_TIE (a cosine) from the reference plane, depth falls off from the
deepest vertex by at least SUPPORT_TIE × the distance moved, so a point of the box 1 mm away laterally is
at least 1e-9 m (DEPTH_ROUNDING) shallower: a deepest vertex BESIDE_FACE beside the reference face means
the clipped manifold falls short, and the clipping can be skipped (``_deepest_vertex_beside``)."""

PARALLEL_SIN2 = 1e-12
"""sin² of the angle below which two edge directions count as parallel and give no axis (as in sat.py)."""


@njit(cache=True, forceinline=True, refcount=False)
def _frame(qw, qx, qy, qz, R):
    """Rows of R (3, 3): the body axes in world coordinates, i.e. the columns of the rotation matrix of the
    unit quaternion q (Baraff I section 4, ``math3d.quat_matrix_t``, transposed)."""
    (R[0, 0], R[1, 0], R[2, 0], R[0, 1], R[1, 1], R[2, 1],
     R[0, 2], R[1, 2], R[2, 2]) = quat_matrix_t(qw, qx, qy, qz)


@njit(cache=True, forceinline=True, refcount=False)
def _axis_separation(axis, ha, hb, C, AC, t, tb):
    """Separation of the boxes along axis ``axis`` (numbering in the module docstring): positive if it
    separates them by that much, −inf for an edge pair that is (nearly) parallel."""
    if axis < 3:
        i = axis
        return abs(t[i]) - (ha[i] + hb[0] * AC[i, 0] + hb[1] * AC[i, 1] + hb[2] * AC[i, 2])
    if axis < 6:
        j = axis - 3
        return abs(tb[j]) - (hb[j] + ha[0] * AC[0, j] + ha[1] * AC[1, j] + ha[2] * AC[2, j])
    i, j = (axis - 6) // 3, (axis - 6) % 3
    l2 = 1.0 - C[i, j] * C[i, j]
    if l2 <= PARALLEL_SIN2:
        return -np.inf
    i1, i2, j1, j2 = (i + 1) % 3, (i + 2) % 3, (j + 1) % 3, (j + 2) % 3
    # a_i × b_j in A's frame is (e_i × C[:, j]); its projections of t and of the two boxes:
    tl = t[i2] * C[i1, j] - t[i1] * C[i2, j]
    ra = ha[i1] * AC[i2, j] + ha[i2] * AC[i1, j]
    rb = hb[j1] * AC[i, j2] + hb[j2] * AC[i, j1]
    return (abs(tl) - ra - rb) / np.sqrt(l2)


@njit(cache=True, forceinline=True, refcount=False)
def _best_axis(first, last, ha, hb, C, AC, t, tb):
    """(greatest separation, its axis) over the axes first ≤ axis < last (−inf, −1 if all are parallel)."""
    best, axis = -np.inf, -1
    for a in range(first, last):
        s = _axis_separation(a, ha, hb, C, AC, t, tb)
        if s > best:
            best, axis = s, a
    return best, axis


@njit(cache=True)
def box_box(box_a, box_b, margin, witness, k, frames, clip, out, base):
    """Contacts of box A (``box_a`` = (centre pa, orientation qa, half extents ha): 3-tuple, 4-tuple, 3-tuple;
    world, m) with box B (``box_b`` likewise).

    frames: scratch (6, 3, 3) float; clip: the narrowphase's clip scratch (points (2, C, 3), lines (2, C),
    kinds (2, C), depths (C,), kept (C,)); ``witness[k]`` is read and updated; up to 4 contacts are written
    to ``out`` = (point, normal, depth, kind, feature) from row ``base``.
    Returns (number of contacts, True if the cached witness alone decided); (−1, False) when the boxes are
    apart within the margin and the clipped manifold falls short of the face axis's separation (as when a
    vertex faces an edge, where that separation understates the distance): the general path
    (sat.collide_polytopes) then measures the distance by GJK.
    """
    pa, qa, ha = box_a
    pb, qb, hb = box_b
    RA, RB, C, AC, vec = frames[0], frames[1], frames[2], frames[3], frames[4]
    _frame(qa[0], qa[1], qa[2], qa[3], RA)
    _frame(qb[0], qb[1], qb[2], qb[3], RB)
    dx, dy, dz = pb[0] - pa[0], pb[1] - pa[1], pb[2] - pa[2]
    t, tb, hav, hbv = vec[0], vec[1], vec[2], frames[5, 0]
    for i in range(3):
        t[i] = RA[i, 0] * dx + RA[i, 1] * dy + RA[i, 2] * dz  # centre offset in A's frame
        tb[i] = RB[i, 0] * dx + RB[i, 1] * dy + RB[i, 2] * dz  # … and in B's
        hav[i], hbv[i] = ha[i], hb[i]
        for j in range(3):
            C[i, j] = RA[i, 0] * RB[j, 0] + RA[i, 1] * RB[j, 1] + RA[i, 2] * RB[j, 2]
            AC[i, j] = abs(C[i, j])
    if witness[k, 0] == WITNESS_BOX_AXIS and _axis_separation(witness[k, 1], hav, hbv, C, AC, t, tb) > margin:
        return 0, True
    # the axes in the general path's order: A's faces, B's faces, then edge pairs (witness kept from the first
    # group that separates)
    sa, fa = _best_axis(0, 3, hav, hbv, C, AC, t, tb)
    if sa > margin:
        witness[k, 0], witness[k, 1], witness[k, 2] = WITNESS_BOX_AXIS, fa, -1
        return 0, False
    sb, fb = _best_axis(3, 6, hav, hbv, C, AC, t, tb)
    fb -= 3
    if sb > margin:
        witness[k, 0], witness[k, 1], witness[k, 2] = WITNESS_BOX_AXIS, 3 + fb, -1
        return 0, False
    se, ae = _best_axis(6, 15, hav, hbv, C, AC, t, tb)
    if se > margin:
        witness[k, 0], witness[k, 1], witness[k, 2] = WITNESS_BOX_AXIS, ae, -1
        return 0, False
    # the bounding radius of a box about its centre is |h|
    prefer = face_preference(np.sqrt(ha[0] ** 2 + ha[1] ** 2 + ha[2] ** 2),
                             np.sqrt(hb[0] ** 2 + hb[1] ** 2 + hb[2] ** 2))
    if se > max(sa, sb) + prefer:
        witness[k, 0], witness[k, 1], witness[k, 2] = WITNESS_BOX_AXIS, ae, -1
        return _edge_contact(ae, (pa, RA, hav), (pb, RB, hbv), (dx, dy, dz), se, out, base), False
    point_out, normal_out, depth_out, kind_out, feature_out = out
    # If no point of the face manifold reaches the face axis's overlap, edges cross there: when the best edge
    # pair separates at least as much as the face, its edge contact is the answer (as in sat.collide_polytopes);
    # otherwise the crossing joins the manifold at the face's depth. The first case is common in piles (boxes
    # resting edge on edge), and is known before clipping when the incident box's deepest vertex lies well
    # beside the reference face (overlapping boxes only: boxes apart take the general path, see below). An
    # edge axis within sat.FACE_ALIGNED_COS of the face normal is the face's own, badly conditioned: the
    # face manifold stays, with the crossing.
    ref_normal = RA[fa] if sa >= sb else RB[fb]
    edge_is_face = ae >= 0 and se <= 0.0 and _edge_axis_along_face(ae, ref_normal, RA, RB)
    if ae >= 0 and se >= max(sa, sb) and max(sa, sb) <= 0.0 and not edge_is_face:
        if sa >= sb:
            beside = _deepest_vertex_beside(fa, 1.0 if t[fa] >= 0.0 else -1.0, pa, RA, hav, pb, RB, hbv)
        else:
            beside = _deepest_vertex_beside(fb, -1.0 if tb[fb] >= 0.0 else 1.0, pb, RB, hbv, pa, RA, hav)
        if beside:
            witness[k, 0], witness[k, 1], witness[k, 2] = WITNESS_BOX_AXIS, ae, -1
            return _edge_contact(ae, (pa, RA, hav), (pb, RB, hbv), (dx, dy, dz), se, out, base), False
    crossing, crossing_feature = (np.nan, np.nan, np.nan), 0
    for _attempt in range(2):  # the crossing is computed only for the rare second attempt
        if sa >= sb:  # reference face on A; its normal points A → B, the contact normal is its opposite
            witness[k, 0], witness[k, 1], witness[k, 2] = WITNESS_BOX_AXIS, fa, -1
            sign = 1.0 if t[fa] >= 0.0 else -1.0
            n, short = _face_contacts(False, (fa, sign), (pa, RA, hav), (pb, RB, hbv), sa, crossing,
                                      crossing_feature, margin, clip, out, base)
            flip = -1.0
        else:  # reference face on B; its normal points B → A
            witness[k, 0], witness[k, 1], witness[k, 2] = WITNESS_BOX_AXIS, 3 + fb, -1
            sign = -1.0 if tb[fb] >= 0.0 else 1.0
            n, short = _face_contacts(True, (fb, sign), (pb, RB, hbv), (pa, RA, hav), sb, crossing,
                                      crossing_feature, margin, clip, out, base)
            flip = 1.0
        if n < 0:
            return -1, False
        if not short or ae < 0:
            break
        if se >= max(sa, sb) and not edge_is_face:
            witness[k, 0], witness[k, 1], witness[k, 2] = WITNESS_BOX_AXIS, ae, -1
            return _edge_contact(ae, (pa, RA, hav), (pb, RB, hbv), (dx, dy, dz), se, out, base), False
        _, _, _, crossing, code_a, code_b = _edge_pair(ae, (pa, RA, hav), (pb, RB, hbv), (dx, dy, dz))
        crossing_feature = features.edge_edge(code_a, code_b)
    for r in range(n):
        for c in range(3):
            normal_out[base + r, c] *= flip
    return n, False


@njit(cache=True, forceinline=True, refcount=False)
def _edge_axis_along_face(ae, face_normal, RA, RB):
    """True when edge axis ``ae`` (6 + 3 i + j: a_i × b_j) lies within sat.FACE_ALIGNED_COS of the normal."""
    i, j = (ae - 6) // 3, (ae - 6) % 3
    return edge_axis_along_face(RA[i, 1] * RB[j, 2] - RA[i, 2] * RB[j, 1], RA[i, 2] * RB[j, 0] - RA[i, 0] * RB[j, 2],
                                RA[i, 0] * RB[j, 1] - RA[i, 1] * RB[j, 0], face_normal[0], face_normal[1],
                                face_normal[2])


@njit(cache=True, forceinline=True, refcount=False)
def _deepest_vertex_beside(r, sign, pR, RR, hR, pI, RI, hI):
    """True when box I's deepest vertex along −n (n = sign · R_r, the reference normal) is unique and lies
    more than BESIDE_FACE beside reference face r's rectangle. Then no point of I within the face's prism is
    within DEPTH_ROUNDING of its depth, so the clipped manifold falls short of the face axis's overlap."""
    nx, ny, nz = sign * RR[r, 0], sign * RR[r, 1], sign * RR[r, 2]
    wx, wy, wz = pI[0] - pR[0], pI[1] - pR[1], pI[2] - pR[2]
    for j in range(3):
        d = RI[j, 0] * nx + RI[j, 1] * ny + RI[j, 2] * nz
        if abs(d) < SUPPORT_TIE:
            return False
        sgn = -1.0 if d > 0.0 else 1.0
        wx, wy, wz = wx + sgn * hI[j] * RI[j, 0], wy + sgn * hI[j] * RI[j, 1], wz + sgn * hI[j] * RI[j, 2]
    r1, r2 = (r + 1) % 3, (r + 2) % 3
    x1 = RR[r1, 0] * wx + RR[r1, 1] * wy + RR[r1, 2] * wz
    x2 = RR[r2, 0] * wx + RR[r2, 1] * wy + RR[r2, 2] * wz
    return abs(x1) > hR[r1] + BESIDE_FACE or abs(x2) > hR[r2] + BESIDE_FACE


@njit(cache=True, forceinline=True, refcount=False)
def _support_code(R, i, lx, ly, lz):
    """Sign (±1) of axis i of frame R along direction l."""
    return 1.0 if R[i, 0] * lx + R[i, 1] * ly + R[i, 2] * lz >= 0.0 else -1.0


@njit(cache=True)
def _edge_pair(axis, box_a, box_b, d):
    """For edge axis ``axis`` = 6 + 3 i + j: the axis a_i × b_j (unit, pointing A → B), the midpoint of the
    closest points of A's edge along a_i that supports A along it and B's edge along b_j that supports B the
    other way, and the two edges' codes. box_* = (centre, frame rows R (3, 3), half extents (3,)); d = p_B − p_A."""
    i, j = (axis - 6) // 3, (axis - 6) % 3
    pa, RA, ha = box_a
    pb, RB, hb = box_b
    dx, dy, dz = d
    lx = RA[i, 1] * RB[j, 2] - RA[i, 2] * RB[j, 1]
    ly = RA[i, 2] * RB[j, 0] - RA[i, 0] * RB[j, 2]
    lz = RA[i, 0] * RB[j, 1] - RA[i, 1] * RB[j, 0]
    inv = 1.0 / np.sqrt(lx * lx + ly * ly + lz * lz)
    lx, ly, lz = lx * inv, ly * inv, lz * inv
    if lx * dx + ly * dy + lz * dz < 0.0:
        lx, ly, lz = -lx, -ly, -lz
    # edge start = centre + Σ_{k≠i} ±h_k axis_k − h_i axis_i; edge vector 2 h_i axis_i
    ex, ey, ez = pa[0] - ha[i] * RA[i, 0], pa[1] - ha[i] * RA[i, 1], pa[2] - ha[i] * RA[i, 2]
    code_a = i
    for m in range(3):
        if m != i:
            sgn = _support_code(RA, m, lx, ly, lz)
            ex, ey, ez = ex + sgn * ha[m] * RA[m, 0], ey + sgn * ha[m] * RA[m, 1], ez + sgn * ha[m] * RA[m, 2]
            code_a = 2 * code_a + (1 if sgn > 0.0 else 0)
    fx, fy, fz = pb[0] - hb[j] * RB[j, 0], pb[1] - hb[j] * RB[j, 1], pb[2] - hb[j] * RB[j, 2]
    code_b = j
    for m in range(3):
        if m != j:
            sgn = -_support_code(RB, m, lx, ly, lz)
            fx, fy, fz = fx + sgn * hb[m] * RB[m, 0], fy + sgn * hb[m] * RB[m, 1], fz + sgn * hb[m] * RB[m, 2]
            code_b = 2 * code_b + (1 if sgn > 0.0 else 0)
    mid = edge_midpoint(ex, ey, ez, 2.0 * ha[i] * RA[i, 0], 2.0 * ha[i] * RA[i, 1], 2.0 * ha[i] * RA[i, 2],
                        fx, fy, fz, 2.0 * hb[j] * RB[j, 0], 2.0 * hb[j] * RB[j, 1], 2.0 * hb[j] * RB[j, 2])
    return lx, ly, lz, mid, code_a, code_b


@njit(cache=True)
def _edge_contact(axis, box_a, box_b, d, sep, out, base):
    """One edge–edge contact for edge axis ``axis`` (a_i × b_j), depth −sep (arguments as ``_edge_pair``)."""
    lx, ly, lz, mid, code_a, code_b = _edge_pair(axis, box_a, box_b, d)
    return write_edge_contact(out, base, mid, (-lx, -ly, -lz), -sep, features.edge_edge(code_a, code_b))


@njit(cache=True)
def _face_contacts(ref_on_b, face, ref, inc, s_ref, crossing, crossing_feature, margin, clip, out, base):
    """Clip the incident box I's face against face ``face`` = (axis r, side ``sign``) of reference box R, in R's
    frame (``ref`` = (centre pR, frame rows RR, half extents hR) of R, ``inc`` likewise of I).
    The reference normal n = sign · R_r points from R toward I; normals are written as n (the caller flips
    them to B → A). ``s_ref`` is the separation on this axis (−overlap). When the clipped points fall short
    of the overlap, the deepest vertex of I inside R, else the best edge pair's ``crossing`` (world; NaN:
    none), joins them, as in ``sat.manifold_top_up``. Returns (count, short) as ``sat._face_contact``."""
    r, sign = face
    pR, RR, hR = ref
    pI, RI, hI = inc
    clip_pts, clip_line, clip_kind, dep, keep = clip
    pts, line, kind = clip_pts[0], clip_line[0], clip_kind[0]
    tmp_pts, tmp_line = clip_pts[1], clip_line[1]
    point_out, normal_out, depth_out, kind_out, feature_out = out
    r1, r2 = (r + 1) % 3, (r + 2) % 3
    nx, ny, nz = sign * RR[r, 0], sign * RR[r, 1], sign * RR[r, 2]
    # incident face: the face of I most anti-parallel to n
    inc, best, inc_sign = 0, -1.0, 1.0
    for j in range(3):
        d = RI[j, 0] * nx + RI[j, 1] * ny + RI[j, 2] * nz
        if abs(d) > best:
            inc, best, inc_sign = j, abs(d), (-1.0 if d > 0.0 else 1.0)
    j1, j2 = (inc + 1) % 3, (inc + 2) % 3
    cx = pI[0] + inc_sign * hI[inc] * RI[inc, 0] - pR[0]
    cy = pI[1] + inc_sign * hI[inc] * RI[inc, 1] - pR[1]
    cz = pI[2] + inc_sign * hI[inc] * RI[inc, 2] - pR[2]
    # its corners in R's frame as (coordinate along r1, along r2, height above the reference face)
    for v in range(4):
        s1 = 1.0 if (v == 1 or v == 2) else -1.0
        s2 = 1.0 if v >= 2 else -1.0
        wx = cx + s1 * hI[j1] * RI[j1, 0] + s2 * hI[j2] * RI[j2, 0]
        wy = cy + s1 * hI[j1] * RI[j1, 1] + s2 * hI[j2] * RI[j2, 1]
        wz = cz + s1 * hI[j1] * RI[j1, 2] + s2 * hI[j2] * RI[j2, 2]
        pts[v, 0] = RR[r1, 0] * wx + RR[r1, 1] * wy + RR[r1, 2] * wz
        pts[v, 1] = RR[r2, 0] * wx + RR[r2, 1] * wy + RR[r2, 2] * wz
        pts[v, 2] = nx * wx + ny * wy + nz * wz - hR[r]
        line[v] = v
    m = 4
    for s in range(4):  # side planes ±x1 ≤ h_r1, ±x2 ≤ h_r2
        sx = (1.0 if s == 0 else -1.0) if s < 2 else 0.0
        sy = (1.0 if s == 2 else -1.0) if s >= 2 else 0.0
        m = clip_by_plane(pts, line, m, sx, sy, 0.0, hR[r1] if s < 2 else hR[r2], s, tmp_pts, tmp_line)
        if m == 0:
            break
    name_clipped(line, kind, m, ref_on_b, 2 * r + (1 if sign > 0.0 else 0), 2 * inc + (1 if inc_sign > 0.0 else 0),
                 tmp_line)
    n, deepest, short = 0, -np.inf, False
    for k in range(m):
        h = pts[k, 2]
        if h > margin:
            continue
        # the candidate is the midpoint between the incident point and the reference plane, height h/2
        tmp_pts[n, 0], tmp_pts[n, 1], tmp_pts[n, 2] = pts[k, 0], pts[k, 1], 0.5 * h
        tmp_line[n] = line[k]
        kind[n] = kind[k]
        dep[n] = -h
        deepest = max(deepest, -h)
        n += 1
    if deepest < -s_ref - DEPTH_ROUNDING and s_ref > 0.0:
        return -1, False
    if deepest < -s_ref - DEPTH_ROUNDING:
        # I's vertices in R's frame: the deepest inside R (|x| ≤ h on R's three axes)
        best, code = deepest, -1
        for v in range(8):
            wx, wy, wz = pI[0] - pR[0], pI[1] - pR[1], pI[2] - pR[2]
            for j in range(3):
                sgn = 1.0 if (v >> (2 - j)) & 1 else -1.0  # the vertex numbering of polytope.box_polytope
                wx, wy, wz = wx + sgn * hI[j] * RI[j, 0], wy + sgn * hI[j] * RI[j, 1], wz + sgn * hI[j] * RI[j, 2]
            x1 = RR[r1, 0] * wx + RR[r1, 1] * wy + RR[r1, 2] * wz
            x2 = RR[r2, 0] * wx + RR[r2, 1] * wy + RR[r2, 2] * wz
            h = nx * wx + ny * wy + nz * wz - hR[r]
            inside = (abs(x1) <= hR[r1] + DEPTH_ROUNDING and abs(x2) <= hR[r2] + DEPTH_ROUNDING
                      and h >= -2.0 * hR[r] - DEPTH_ROUNDING)
            if inside and -h > best:
                best, code = -h, v
                tmp_pts[n, 0], tmp_pts[n, 1], tmp_pts[n, 2] = x1, x2, 0.5 * h
        if code >= 0:
            tmp_line[n] = features.deepest_vertex(ref_on_b, 2 * r + (1 if sign > 0.0 else 0), code)
            kind[n] = KIND_VERTEX_FACE
            dep[n] = best
            n += 1
        short = best < -s_ref - DEPTH_ROUNDING and np.isnan(crossing[0])
        if best < -s_ref - DEPTH_ROUNDING and not short:
            wx, wy, wz = crossing[0] - pR[0], crossing[1] - pR[1], crossing[2] - pR[2]
            tmp_pts[n, 0] = RR[r1, 0] * wx + RR[r1, 1] * wy + RR[r1, 2] * wz
            tmp_pts[n, 1] = RR[r2, 0] * wx + RR[r2, 1] * wy + RR[r2, 2] * wz
            tmp_pts[n, 2] = nx * wx + ny * wy + nz * wz - hR[r]
            tmp_line[n] = crossing_feature
            kind[n] = KIND_EDGE_EDGE
            dep[n] = -s_ref
            n += 1
    count = reduce_manifold(tmp_pts, dep, n, 0.0, 0.0, 1.0, keep)
    for q in range(count):
        j = keep[q]
        x1, x2, up = tmp_pts[j, 0], tmp_pts[j, 1], hR[r] + tmp_pts[j, 2]
        for c in range(3):
            point_out[base + q, c] = pR[c] + x1 * RR[r1, c] + x2 * RR[r2, c] + up * sign * RR[r, c]
        normal_out[base + q, 0], normal_out[base + q, 1], normal_out[base + q, 2] = nx, ny, nz
        depth_out[base + q] = dep[j]
        kind_out[base + q] = kind[j]
        feature_out[base + q] = tmp_line[j]
    return count, short
