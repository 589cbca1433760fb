"""Velocity-level constraint rows of the contacts (ArtiSynth notes 0.10; seed 004's contact Jacobian D).

Contact j between bodies A and B, at point p with unit normal n (B → A) and friction directions t1, t2,
has three rows of the Jacobian J, one per direction d ∈ {n, t1, t2}:

    J_d (v_a, ω_a, v_b, ω_b) = d·v_a + (r_a × d)·ω_a − d·v_b − (r_b × d)·ω_b,   r = p − x (world)

so that J_n applied to the body velocities is the normal relative velocity v_rel of Baraff II (8-1)
(positive when separating). An impulse λ along a row changes the velocities by M⁻¹ Jᵀ λ: +λ d / M_a and
+λ I_a⁻¹ (r_a × d) on A, the opposite on B (Baraff II (8-12)). The effective mass of the normal row is
1 / (J_n M⁻¹ J_nᵀ), the inverse of the diagonal of N = Dᵀ M⁻¹ D (seed 004); the two friction rows keep
their 2×2 block K_t of N for the friction step of notes 0.16.

``prepare_rows`` builds the rows straight from the step's contact buffer and, in the same sorted merge,
takes each contact's impulses from the last step when its pair and feature id persist (warm start).

One common point. Both bodies' arms end at the same world point p, so an impulse λ d of any direction
changes the total angular momentum about any fixed point o by (p − o) × λ d on A and −(p − o) × λ d on B:
by nothing (Baraff II (8-12) applies the impulse at one point p; (8-18) is its effective mass there). That
holds only while the rows describe the current pose: I⁻¹ at the body's current orientation, r = p − x at
its current position. The bodies move and turn through the step's sub-steps, so ``prepare_rows`` records the
contact point in each body's axes (``anchor_a``, ``anchor_b``) and ``refresh_rows`` rebuilds the rows after
each pose change from the two anchors carried by their bodies. The two carried points part as the bodies
slide or roll against each other (by O(h v) over a step); the common point is their average weighted by the
inverse masses, p' = (m_a⁻¹ p_a + m_b⁻¹ p_b) / (m_a⁻¹ + m_b⁻¹): the moving body's own material point against a
fixed body (whose point carries no dynamics; a box sliding down a fixed incline then keeps its closed-form
acceleration to rounding, where the midpoint put its friction ½ v h ahead and erred by 3e-6), the midpoint
between equal masses. The directions n, t1, t2 are kept as prepared (any direction conserves L at a common
point; the normal comes from the narrowphase).
A rounded shape (a sphere, a capsule) and an ellipsoid are carried differently: each touches at a point its
shape gives relative to its core (``contact_from_core``: r along the normal from a sphere's centre or a
capsule's segment, an ellipsoid's support point), whichever of its material points is there, so its anchor
is the core point and that vector is added at the current orientation. Carried as a material point,
a ball rolling at ω turned its contact point ω h r behind its centre over a step, and its weight, acting
there, braked it (4 m/s → 3.2 m/s in 2 s on level ground).
Before rows were rebuilt (each body's arm from its own stale point, I⁻¹ from the start of the step), two
boxes meeting in zero gravity changed the world angular momentum by 0.44 % through the collision.
"""

from __future__ import annotations

import numpy as np

from ..collision.contacts import slot
from ..jit import njit
from ..math3d import qmul_t, qrot_inv_t, qrot_t
from .link_rows import contact_link_block, pair_link_block, side_inverses, with_link_part

_TANGENT_SWITCH = 0.57735026918962573
"""1/√3: some component of a unit normal is at least this large, so the tangent built from that
component and another never degenerates."""


@njit(cache=True, forceinline=True, refcount=False)
def tangent_basis(nx, ny, nz):
    """Unit t1 ⟂ n built from n alone (so a contact keeps its basis while n stays), and t2 = n × t1."""
    if abs(nx) >= _TANGENT_SWITCH:
        inv = 1.0 / np.sqrt(nx * nx + ny * ny)
        ax, ay, az = ny * inv, -nx * inv, 0.0
    else:
        inv = 1.0 / np.sqrt(ny * ny + nz * nz)
        ax, ay, az = 0.0, nz * inv, -ny * inv
    return ax, ay, az, ny * az - nz * ay, nz * ax - nx * az, nx * ay - ny * ax


@njit(cache=True, refcount=False)
def contact_directions(normal, out):
    """out (c, 3, 3) = (n, t1, t2) of every contact with normal (c, 3): the directions of its rows."""
    for i in range(normal.shape[0]):
        nx, ny, nz = normal[i, 0], normal[i, 1], normal[i, 2]
        out[i, 0, 0], out[i, 0, 1], out[i, 0, 2] = nx, ny, nz
        t1x, t1y, t1z, t2x, t2y, t2z = tangent_basis(nx, ny, nz)
        out[i, 1, 0], out[i, 1, 1], out[i, 1, 2] = t1x, t1y, t1z
        out[i, 2, 0], out[i, 2, 1], out[i, 2, 2] = t2x, t2y, t2z


@njit(cache=True, forceinline=True, refcount=False)
def _row_geometry(s, r0, r1, r2, iinv, ang, inv_ang, d, dx, dy, dz):
    """ang[s, d] = r × dir and inv_ang[s, d] = I⁻¹ (r × dir); returns (r × dir)·I⁻¹ (r × dir)."""
    cx, cy, cz = r1 * dz - r2 * dy, r2 * dx - r0 * dz, r0 * dy - r1 * dx
    ang[s, d, 0], ang[s, d, 1], ang[s, d, 2] = cx, cy, cz
    ix = iinv[0, 0] * cx + iinv[0, 1] * cy + iinv[0, 2] * cz
    iy = iinv[1, 0] * cx + iinv[1, 1] * cy + iinv[1, 2] * cz
    iz = iinv[2, 0] * cx + iinv[2, 1] * cy + iinv[2, 2] * cz
    inv_ang[s, d, 0], inv_ang[s, d, 1], inv_ang[s, d, 2] = ix, iy, iz
    return cx * ix + cy * iy + cz * iz


@njit(cache=True, forceinline=True, refcount=False)
def row_velocity(s, d, a, b, dx, dy, dz, ang_a, ang_b, v, w):
    """J_d times the body velocities: the relative velocity of A against B at the contact along d."""
    return (dx * (v[a, 0] - v[b, 0]) + dy * (v[a, 1] - v[b, 1]) + dz * (v[a, 2] - v[b, 2])
            + ang_a[s, d, 0] * w[a, 0] + ang_a[s, d, 1] * w[a, 1] + ang_a[s, d, 2] * w[a, 2]
            - ang_b[s, d, 0] * w[b, 0] - ang_b[s, d, 1] * w[b, 1] - ang_b[s, d, 2] * w[b, 2])


@njit(cache=True, forceinline=True, refcount=False)
def _set_rows(s, arm_a, arm_b, ia, ib, ima, imb, slots):
    """The rows of slot s for the arms ``arm_a`` = r_a, ``arm_b`` = r_b (3-tuples, world) and world inverse
    inertias ia, ib (3, 3), inverse masses ima, imb: ang = r × d, inv_ang = I⁻¹ (r × d) for d = n, t1, t2, the
    normal row's effective mass 1 / (J_n M⁻¹ J_nᵀ) (the denominator of Baraff II (8-18)) and the tangential
    block K_t, written into ``slots`` (ContactSlots)."""
    kn, k11, k12, k22 = _row_blocks(s, arm_a, arm_b, ia, ib, ima, imb, slots)
    _store_blocks(s, kn, k11, k12, k22, slots)


@njit(cache=True, forceinline=True, refcount=False)
def _store_blocks(s, kn, k11, k12, k22, slots):
    """Slot s's normal_mass 1 / K_nn and tangent_k (K_11, K_12, K_22) of its block K = Dᵀ M⁻¹ D."""
    slots.normal_mass[s] = 1.0 / kn
    slots.tangent_k[s, 0], slots.tangent_k[s, 1], slots.tangent_k[s, 2] = k11, k12, k22


@njit(cache=True, forceinline=True, refcount=False)
def _set_link_rows(s, ab, arms, inverses, point, slots, links, fresh):
    """``_set_rows`` for a world with robots: the body parts (a link side's inverse mass and inertia are zero:
    ``link_rows.side_inverses``) plus the link part of the block (``link_rows.contact_link_block``) at the
    common ``point`` (3-tuple, world); ab = (a, b), arms = (r_a, r_b), inverses = (1/m_a, 1/m_b, I_a⁻¹, I_b⁻¹);
    ``fresh``: the step's first build of the slot's rows. Returns False for an inert contact (below)."""
    a, b = ab
    arm_a, arm_b = arms
    ima, imb, ia, ib = inverses
    kn, k11, k12, k22 = _row_blocks(s, arm_a, arm_b, ia, ib, ima, imb, slots)
    ln, l11, l12, l22 = contact_link_block(links, s, a, b, point, (slots.normal[s], slots.tangent[s, 0],
                                                                   slots.tangent[s, 1]), fresh)
    if kn + ln > 0.0:
        _store_blocks(s, kn + ln, k11 + l11, k12 + l12, k22 + l22, slots)
        return True
    # neither side can move along the normal here (a fixed or kinematic body against a link whose path to the
    # root has no joint, a fixed base's root; or a point that the link's joints cannot move along n): an inert
    # contact, normal_mass 0, which the sweeps pass over (sequential_impulse ``_normal_passes``) and whose friction
    # bound stays 0 (its impulses are zeroed by the caller); a pair of inert contacts leaves the solve
    _store_blocks(s, np.inf, 1.0, 0.0, 1.0, slots)
    return False


@njit(cache=True, forceinline=True, refcount=False)
def _quiet_slot(s, slots):
    """An inert contact's impulses zero (``_set_link_rows``)."""
    slots.normal_impulse[s] = 0.0
    slots.tangent_impulse[s, 0] = 0.0
    slots.tangent_impulse[s, 1] = 0.0


@njit(cache=True, forceinline=True, refcount=False)
def _row_blocks(s, arm_a, arm_b, ia, ib, ima, imb, slots):
    """ang = r × d and inv_ang = I⁻¹ (r × d) of slot s's rows (``_set_rows``) into ``slots``; returns the body
    parts of its block (K_nn, K_11, K_12, K_22)."""
    ra0, ra1, ra2 = arm_a
    rb0, rb1, rb2 = arm_b
    normal, tangent, ang_a, ang_b = slots.normal, slots.tangent, slots.ang_a, slots.ang_b
    inv_ang_a, inv_ang_b = slots.inv_ang_a, slots.inv_ang_b
    nx, ny, nz = normal[s, 0], normal[s, 1], normal[s, 2]
    t1x, t1y, t1z = tangent[s, 0, 0], tangent[s, 0, 1], tangent[s, 0, 2]
    t2x, t2y, t2z = tangent[s, 1, 0], tangent[s, 1, 1], tangent[s, 1, 2]
    kn = (ima + imb + _row_geometry(s, ra0, ra1, ra2, ia, ang_a, inv_ang_a, 0, nx, ny, nz)
          + _row_geometry(s, rb0, rb1, rb2, ib, ang_b, inv_ang_b, 0, nx, ny, nz))
    k11 = (ima + imb + _row_geometry(s, ra0, ra1, ra2, ia, ang_a, inv_ang_a, 1, t1x, t1y, t1z)
           + _row_geometry(s, rb0, rb1, rb2, ib, ang_b, inv_ang_b, 1, t1x, t1y, t1z))
    k22 = (ima + imb + _row_geometry(s, ra0, ra1, ra2, ia, ang_a, inv_ang_a, 2, t2x, t2y, t2z)
           + _row_geometry(s, rb0, rb1, rb2, ib, ang_b, inv_ang_b, 2, t2x, t2y, t2z))
    k12 = 0.0
    for e in range(3):
        k12 += ang_a[s, 1, e] * inv_ang_a[s, 2, e] + ang_b[s, 1, e] * inv_ang_b[s, 2, e]
    return kn, k11, k12, k22


@njit(cache=True, refcount=False)     # (called, not inlined: only pairs with the rows need it)
def _set_angular_rows(k, ia, ib, directions, rows):
    """The angular rows of pair k (torsional along n, rolling along t1, t2: ``directions`` = the (normal,
    tangent) arrays of its slot 0's, s0 = slot(k, 0)) for the world inverse inertias ia, ib (3, 3) of its bodies:
    ``rows`` = (pair_inv_rot_a, pair_inv_rot_b, pair_rot_k) get I⁻¹ d and the block K = Dᵀ (I_a⁻¹ + I_b⁻¹) D
    (docs/materials.md). A row's Jacobian is (0, dᵀ, 0, −dᵀ): the relative angular velocity d·(ω_a − ω_b); an
    impulse Δ along it is a couple, +Δ d on A and −Δ d on B, which changes neither momentum. (Arrays, not the
    buffer's containers: typing a container costs compile time.)"""
    normal, tangent = directions
    inv_rot_a, inv_rot_b, rot_k = rows
    s0 = slot(k, 0)
    for r in range(3):
        if r == 0:
            dx, dy, dz = normal[s0, 0], normal[s0, 1], normal[s0, 2]
        else:
            dx, dy, dz = tangent[s0, r - 1, 0], tangent[s0, r - 1, 1], tangent[s0, r - 1, 2]
        for e in range(3):
            inv_rot_a[k, r, e] = ia[e, 0] * dx + ia[e, 1] * dy + ia[e, 2] * dz
            inv_rot_b[k, r, e] = ib[e, 0] * dx + ib[e, 1] * dy + ib[e, 2] * dz
    knn, k11, k12, k22 = 0.0, 0.0, 0.0, 0.0
    for e in range(3):
        n_e, t1_e, t2_e = normal[s0, e], tangent[s0, 0, e], tangent[s0, 1, e]
        knn += n_e * (inv_rot_a[k, 0, e] + inv_rot_b[k, 0, e])
        k11 += t1_e * (inv_rot_a[k, 1, e] + inv_rot_b[k, 1, e])
        k12 += t1_e * (inv_rot_a[k, 2, e] + inv_rot_b[k, 2, e])
        k22 += t2_e * (inv_rot_a[k, 2, e] + inv_rot_b[k, 2, e])
    rot_k[k, 0], rot_k[k, 1], rot_k[k, 2], rot_k[k, 3] = knn, k11, k12, k22


@njit(cache=True, forceinline=True, refcount=False)
def contact_from_core(rounding, k, side, q, body, nx, ny, nz, depth):
    """p − c [m] (world): the vector from the core point c of side ``side`` (0: the pair's A, 1: B) of pair k
    to the contact point p, at the body orientation q[body], for a contact with normal n (B → A) and ``depth``.

    ``rounding`` = (pair_radius (m, 2), pair_ellipsoid (m, 2, 7)) (contact_buffer). The surface of A that
    faces B is met along u = −n (B's along u = +n), and p lies midway between the two surfaces:
    p = s_A + (depth/2) n, p = s_B − (depth/2) n. s − c is
    - on a shape rounded by r (a sphere about its centre, a capsule about its segment): r u, whatever the
      body's turn;
    - on an ellipsoid (semi-axes S, axes R in world): its support point R S² Rᵀ u / |S Rᵀ u|, which moves
      over its surface as it turns;
    - on any other shape (a polytope): the contact is a material point, c = p: returns zero.
    """
    radius, ellipsoid = rounding
    sign = -1.0 if side == 0 else 1.0
    ux, uy, uz = sign * nx, sign * ny, sign * nz
    half = -0.5 * sign * depth
    a = ellipsoid[k, side, 0]
    if a > 0.0:
        b, c = ellipsoid[k, side, 1], ellipsoid[k, side, 2]
        sw, sx, sy, sz = qmul_t(q[body, 0], q[body, 1], q[body, 2], q[body, 3], ellipsoid[k, side, 3],
                                ellipsoid[k, side, 4], ellipsoid[k, side, 5], ellipsoid[k, side, 6])
        mx, my, mz = qrot_inv_t(sw, sx, sy, sz, ux, uy, uz)
        norm = np.sqrt((a * mx) ** 2 + (b * my) ** 2 + (c * mz) ** 2)
        ox, oy, oz = qrot_t(sw, sx, sy, sz, a * a * mx / norm, b * b * my / norm, c * c * mz / norm)
        return ox + half * nx, oy + half * ny, oz + half * nz
    r = radius[k, side]
    if r > 0.0:
        return r * ux + half * nx, r * uy + half * ny, r * uz + half * nz
    return 0.0, 0.0, 0.0


@njit(cache=True, forceinline=True, refcount=False)
def _link_row_velocity(links, s, a, b, slots, v, w, qd):
    """``row_velocity`` of slot s's normal row with a link side's body part left out and its J q̇ added (qd (nv,)
    the robots' joint velocities: link_rows module docstring)."""
    normal, ang_a, ang_b = slots.normal, slots.ang_a, slots.ang_b
    body_link = links.rows.body_link
    value = 0.0
    for e in range(3):
        if body_link[a] < 0:
            value += normal[s, e] * v[a, e] + ang_a[s, 0, e] * w[a, e]
        if body_link[b] < 0:
            value -= normal[s, e] * v[b, e] + ang_b[s, 0, e] * w[b, e]
    return with_link_part(links, s, 0, value, qd)


@njit(cache=True, forceinline=True, refcount=False)
def _add_pair_link_block(k, a, b, pairs, slots, links, fresh):
    """Pair k's angular block ``pair_rot_k`` (``_set_angular_rows``: its bodies' part) plus its link part
    (link_rows.pair_link_block) in the directions of its slot 0."""
    s0 = slot(k, 0)
    ln, l11, l12, l22 = pair_link_block(links, k, a, b, (slots.normal[s0], slots.tangent[s0, 0],
                                                         slots.tangent[s0, 1]), fresh)
    rot_k = pairs.pair_rot_k
    rot_k[k, 0] += ln
    rot_k[k, 1] += l11
    rot_k[k, 2] += l12
    rot_k[k, 3] += l22


@njit(cache=True, refcount=False)
def refresh_rows(pairs, slots, inv_mass, state, withdraw, only_needed, restitution_threshold, h, links):
    """Rebuild the rows of every awake pair for the bodies' current pose (module docstring: one common point).
    ``pairs``, ``slots``: the contact buffer (ContactPairs, ContactSlots); inv_mass (n,); ``state``
    (BodyState): x, q, the world inverse inertias and ω (which the withdrawal below changes).

    Each contact's anchors (``prepare_rows``) are carried by their bodies to p_a = x_a + R(q_a) anchor_a
    + e_a and p_b = x_b + R(q_b) anchor_b + e_b, with e the ``contact_from_core`` vector of a rounded shape
    or an ellipsoid at the current orientation (zero for the others, whose anchor is the material contact
    point; ``rounding`` as there); the impulse then acts at their inverse-mass weighted average p' (module
    docstring) on both bodies,
    r_a = p' − x_a, r_b = p' − x_b, so that it changes no angular momentum (Baraff II (8-12)), and the
    effective masses ((8-18)) use ``inv_inertia_world`` at the current orientations (the caller refreshes
    it), as do a pair's torsional and rolling rows (``_set_angular_rows``, when its material has them). The
    directions and impulses are kept. Asleep pairs have not moved: they keep their rows.

    ``withdraw``: the split-impulse correction has just moved the bodies (timestep.py) with pseudo-velocities
    that the ``pseudo_impulse`` P of each contact gave at the old common point p; the correction then takes
    those impulses back at the new common point p'. Each of the two acts at one point, so together they
    change no angular momentum, and no linear momentum either; they leave A's spin changed by
    P (r_a × n − r_a' × n) (the old rows' ang_a minus the new ones', times P), which ``w`` takes up here at
    the new inverse inertia (B the opposite). That spin balances the angular momentum that the pseudo move
    shifts between the bodies' orbits x × M v, h P × (v_a − v_b) for a contact that slides (see
    ``timestep._apply_pseudo``).

    ``only_needed`` (after the last sub-step, when no relax pass follows): rebuild only the pairs whose rows
    are used again this step, those with a pseudo impulse to withdraw or a contact that the restitution pass
    may visit (``pair_restitution`` > 0 and approach + h normal_accel ≤ −``restitution_threshold``, as
    ``sequential_impulse.restitution_sweep`` selects them); the next step prepares every row afresh.

    ``links``: None, or the robots' rows (constraints/link_rows.py ``LinkRows``, at the current joint state with
    M factored): a contact with a link side then gets its link part at the common point too (the link's material
    point weighted with the other body's by the link body's inverse mass, as a body's).
    """
    pair_body, pair_contacts, pair_awake = pairs.pair_body, pairs.pair_contacts, pairs.pair_awake
    pair_restitution, pair_rolling, pair_torsional = pairs.pair_restitution, pairs.pair_rolling, pairs.pair_torsional
    rounding = (pairs.pair_radius, pairs.pair_ellipsoid)
    normal, depth, anchor_a, anchor_b = slots.normal, slots.depth, slots.anchor_a, slots.anchor_b
    ang_a, ang_b, pseudo_impulse = slots.ang_a, slots.ang_b, slots.pseudo_impulse
    approach, normal_accel = slots.approach, slots.normal_accel
    x, q, w, inv_inertia_world = state.x, state.q, state.w, state.inv_inertia_world
    for k in range(pair_contacts.shape[0]):
        if not pair_awake[k]:
            continue
        if only_needed:
            needed = False
            for j in range(pair_contacts[k]):
                s = slot(k, j)
                if (withdraw and pseudo_impulse[s] != 0.0) or (
                        pair_restitution[k] != 0.0 and approach[s] + h * normal_accel[s] <= -restitution_threshold):
                    needed = True
            if not needed:
                continue
        a, b = pair_body[k, 0], pair_body[k, 1]
        ima, imb = inv_mass[a], inv_mass[b]
        ia, ib = inv_inertia_world[a], inv_inertia_world[b]
        dx, dy, dz = x[b, 0] - x[a, 0], x[b, 1] - x[a, 1], x[b, 2] - x[a, 2]
        wa = ima / (ima + imb)   # weights of the common point (module docstring); a pair has a moving body
        wb = 1.0 - wa
        if links is not None:   # (a link side's body part is empty: link_rows.side_inverses)
            ima, imb, ia, ib = side_inverses(links, inv_mass, inv_inertia_world, a, b)
        sa0, sa1, sa2, sb0, sb1, sb2 = 0.0, 0.0, 0.0, 0.0, 0.0, 0.0   # the spin the withdrawal leaves, world
        movable = False   # (with robots: some contact of the pair can act, ``_set_link_rows``)
        for j in range(pair_contacts[k]):
            s = slot(k, j)
            lam = pseudo_impulse[s] if withdraw else 0.0
            if lam != 0.0:
                sa0, sa1, sa2 = sa0 + lam * ang_a[s, 0, 0], sa1 + lam * ang_a[s, 0, 1], sa2 + lam * ang_a[s, 0, 2]
                sb0, sb1, sb2 = sb0 - lam * ang_b[s, 0, 0], sb1 - lam * ang_b[s, 0, 1], sb2 - lam * ang_b[s, 0, 2]
            ua0, ua1, ua2 = qrot_t(q[a, 0], q[a, 1], q[a, 2], q[a, 3], anchor_a[s, 0], anchor_a[s, 1], anchor_a[s, 2])
            ub0, ub1, ub2 = qrot_t(q[b, 0], q[b, 1], q[b, 2], q[b, 3], anchor_b[s, 0], anchor_b[s, 1], anchor_b[s, 2])
            # a rounded surface or an ellipsoid touches where its shape says, however the body has turned
            nx, ny, nz = normal[s, 0], normal[s, 1], normal[s, 2]
            ea0, ea1, ea2 = contact_from_core(rounding, k, 0, q, a, nx, ny, nz, depth[s])
            eb0, eb1, eb2 = contact_from_core(rounding, k, 1, q, b, nx, ny, nz, depth[s])
            ua0, ua1, ua2 = ua0 + ea0, ua1 + ea1, ua2 + ea2
            ub0, ub1, ub2 = ub0 + eb0, ub1 + eb1, ub2 + eb2
            # r_a = p' − x_a = wa u_a + wb (u_b + x_b − x_a), r_b = p' − x_b = wa (u_a − (x_b − x_a)) + wb u_b
            ma0, ma1, ma2 = wa * ua0 + wb * ub0, wa * ua1 + wb * ub1, wa * ua2 + wb * ub2
            if links is None:
                _set_rows(s, (ma0 + wb * dx, ma1 + wb * dy, ma2 + wb * dz), (ma0 - wa * dx, ma1 - wa * dy,
                          ma2 - wa * dz), ia, ib, ima, imb, slots)
            elif _set_link_rows(s, (a, b), ((ma0 + wb * dx, ma1 + wb * dy, ma2 + wb * dz),
                                            (ma0 - wa * dx, ma1 - wa * dy, ma2 - wa * dz)), (ima, imb, ia, ib),
                                (x[a, 0] + ma0 + wb * dx, x[a, 1] + ma1 + wb * dy, x[a, 2] + ma2 + wb * dz),
                                slots, links, False):
                movable = True
            else:
                _quiet_slot(s, slots)
            if lam != 0.0:
                sa0, sa1, sa2 = sa0 - lam * ang_a[s, 0, 0], sa1 - lam * ang_a[s, 0, 1], sa2 - lam * ang_a[s, 0, 2]
                sb0, sb1, sb2 = sb0 + lam * ang_b[s, 0, 0], sb1 + lam * ang_b[s, 0, 1], sb2 + lam * ang_b[s, 0, 2]
        if links is not None and not movable:
            pairs.pair_awake[k] = False   # (every contact inert: the pair leaves the solve)
        if pair_rolling[k] != 0.0 or pair_torsional[k] != 0.0:
            _set_angular_rows(k, ia, ib, (normal, slots.tangent), (pairs.pair_inv_rot_a, pairs.pair_inv_rot_b,
                                                                 pairs.pair_rot_k))
            if links is not None:
                _add_pair_link_block(k, a, b, pairs, slots, links, False)
        if withdraw:
            for e in range(3):
                w[a, e] += ia[e, 0] * sa0 + ia[e, 1] * sa1 + ia[e, 2] * sa2
                w[b, e] += ib[e, 0] * sb0 + ib[e, 1] * sb1 + ib[e, 2] * sb2


@njit(cache=True, refcount=False)
def prepare_rows(pairs, slots, old, inv_mass, state, start, match_distance, h, links):
    """Rows of every contact in the buffer (``pairs``, ``slots``: ContactPairs, ContactSlots), with the
    warm-start impulses recycled from the last step (``old``: collision.contacts.WarmStart).

    Run after the (first) velocity stage of length h [s]: ``start`` = (v_start, w_start) (n, 3) are the
    velocities before it, so ``approach`` is the normal velocity at the start of the step (v⁻ of Baraff II
    (8-10)) and ``normal_accel`` the normal relative acceleration the loads gave over the stage; ``state``
    (BodyState) holds x, q, v, w after it and the world inverse inertias. ``old`` has the last step's pair
    keys (sorted), slot counts, feature ids, points and impulses, and pair angular impulses; match_distance [m]
    bounds the fallback match by position. Both arms end at the contact point (module docstring: one common
    point), which is also stored in each body's axes (anchor_a, anchor_b (S, 3)) for ``refresh_rows``: the
    material point of a polytope, the core point (the point less its ``contact_from_core`` vector) of a rounded
    shape or an ellipsoid. A pair whose material has rolling or torsional friction also gets its angular rows
    (``_set_angular_rows``), warm-started with the last step's angular impulse of the pair projected on them.
    ``links``: None, or the robots' rows (``refresh_rows``), whose link parts are built here afresh: a link side's
    normal acceleration is J (q̇ − q̇_start) / h, its approach velocity J q̇_start.
    Returns the number of contacts.
    """
    pair_key, pair_body, pair_contacts = pairs.pair_key, pairs.pair_body, pairs.pair_contacts
    rounding = (pairs.pair_radius, pairs.pair_ellipsoid)
    point, normal, depth, feature = slots.point, slots.normal, slots.depth, slots.feature
    normal_impulse, friction_impulse, tangent, tangent_impulse = slots.normal_impulse, slots.friction_impulse, \
        slots.tangent, slots.tangent_impulse
    ang_a, ang_b, approach, normal_accel = slots.ang_a, slots.ang_b, slots.approach, slots.normal_accel
    separation, source, anchor_a, anchor_b = slots.separation, slots.recycled_from, slots.anchor_a, slots.anchor_b
    old_key, old_contacts, old_feature, old_point, old_normal_impulse, old_friction_impulse, old_angular = old
    pair_rolling, pair_torsional, pair_angular = pairs.pair_rolling, pairs.pair_torsional, pairs.pair_angular
    angular_impulse = pairs.pair_angular_impulse
    x, q, v, w, inv_inertia_world = state.x, state.q, state.v, state.w, state.inv_inertia_world
    v_start, w_start = start
    jo = 0
    n_old = old_key.shape[0]
    count = 0
    for k in range(pair_key.shape[0]):
        c = pair_contacts[k]
        if c == 0 or (pair_rolling[k] == 0.0 and pair_torsional[k] == 0.0):   # no angular rows to carry over
            angular_impulse[k, 0], angular_impulse[k, 1], angular_impulse[k, 2] = 0.0, 0.0, 0.0
        if c == 0:
            continue
        key = pair_key[k]
        while jo < n_old and old_key[jo] < key:
            jo += 1
        matched = jo < n_old and old_key[jo] == key
        a, b = pair_body[k, 0], pair_body[k, 1]
        ima, imb, ia, ib = side_inverses(links, inv_mass, inv_inertia_world, a, b)
        # Contact recycling: a contact whose pair persists takes the impulses of last step's contact with
        # the same feature id; failing that, of the nearest unclaimed old contact within match_distance
        # (exactly aligned equal faces can name a corner by either box's edges, so ids alone flicker).
        for j in range(c):
            source[slot(k, j)] = -1
        if matched:
            claimed = 0
            n_prev = old_contacts[jo]
            for j in range(c):
                s = slot(k, j)
                for jj in range(n_prev):
                    so = slot(jo, jj)
                    if old_feature[so] == feature[s] and not (claimed >> jj) & 1:
                        source[s] = so
                        claimed |= 1 << jj
                        break
            for j in range(c):
                s = slot(k, j)
                if source[s] >= 0:
                    continue
                best, best_d2 = -1, match_distance * match_distance
                for jj in range(n_prev):
                    if (claimed >> jj) & 1:
                        continue
                    so = slot(jo, jj)
                    d2 = ((point[s, 0] - old_point[so, 0]) ** 2 + (point[s, 1] - old_point[so, 1]) ** 2
                          + (point[s, 2] - old_point[so, 2]) ** 2)
                    if d2 <= best_d2:
                        best, best_d2 = jj, d2
                if best >= 0:
                    source[s] = slot(jo, best)
                    claimed |= 1 << best
        movable = False   # (with robots: some contact of the pair can act, ``_set_link_rows``)
        for j in range(c):
            s = slot(k, j)
            count += 1
            lam = 0.0
            fx, fy, fz = 0.0, 0.0, 0.0
            so = source[s]
            if so >= 0:
                lam = old_normal_impulse[so]
                fx, fy, fz = old_friction_impulse[so, 0], old_friction_impulse[so, 1], old_friction_impulse[so, 2]
            nx, ny, nz = normal[s, 0], normal[s, 1], normal[s, 2]
            t1x, t1y, t1z, t2x, t2y, t2z = tangent_basis(nx, ny, nz)
            tangent[s, 0, 0], tangent[s, 0, 1], tangent[s, 0, 2] = t1x, t1y, t1z
            tangent[s, 1, 0], tangent[s, 1, 1], tangent[s, 1, 2] = t2x, t2y, t2z
            ra0, ra1, ra2 = point[s, 0] - x[a, 0], point[s, 1] - x[a, 1], point[s, 2] - x[a, 2]
            rb0, rb1, rb2 = point[s, 0] - x[b, 0], point[s, 1] - x[b, 1], point[s, 2] - x[b, 2]
            ea0, ea1, ea2 = contact_from_core(rounding, k, 0, q, a, nx, ny, nz, depth[s])
            eb0, eb1, eb2 = contact_from_core(rounding, k, 1, q, b, nx, ny, nz, depth[s])
            anchor_a[s, 0], anchor_a[s, 1], anchor_a[s, 2] = qrot_inv_t(q[a, 0], q[a, 1], q[a, 2], q[a, 3],
                                                                        ra0 - ea0, ra1 - ea1, ra2 - ea2)
            anchor_b[s, 0], anchor_b[s, 1], anchor_b[s, 2] = qrot_inv_t(q[b, 0], q[b, 1], q[b, 2], q[b, 3],
                                                                        rb0 - eb0, rb1 - eb1, rb2 - eb2)
            if links is None:
                _set_rows(s, (ra0, ra1, ra2), (rb0, rb1, rb2), ia, ib, ima, imb, slots)
                approach[s] = row_velocity(s, 0, a, b, nx, ny, nz, ang_a, ang_b, v_start, w_start)
                normal_accel[s] = (row_velocity(s, 0, a, b, nx, ny, nz, ang_a, ang_b, v, w) - approach[s]) / h
            else:
                if _set_link_rows(s, (a, b), ((ra0, ra1, ra2), (rb0, rb1, rb2)), (ima, imb, ia, ib),
                                  (point[s, 0], point[s, 1], point[s, 2]), slots, links, True):
                    movable = True
                else:
                    lam, fx, fy, fz = 0.0, 0.0, 0.0, 0.0   # (an inert contact takes no warm start)
                approach[s] = _link_row_velocity(links, s, a, b, slots, v_start, w_start, links.rows.qd_start)
                normal_accel[s] = (_link_row_velocity(links, s, a, b, slots, v, w, links.st.qd) - approach[s]) / h
            separation[s] = -depth[s]
            normal_impulse[s] = lam
            friction_impulse[s, 0], friction_impulse[s, 1], friction_impulse[s, 2] = fx, fy, fz
            tangent_impulse[s, 0] = fx * t1x + fy * t1y + fz * t1z
            tangent_impulse[s, 1] = fx * t2x + fy * t2y + fz * t2z
        if links is not None and not movable:
            pairs.pair_awake[k] = False   # (every contact inert: the pair leaves the solve)
        if pair_rolling[k] != 0.0 or pair_torsional[k] != 0.0:
            # the pair's torsional and rolling rows, warm-started with last step's angular impulse of the pair
            # (world), which the sweeps keep (sequential_impulse.angular_sweep), in the directions of slot 0
            _set_angular_rows(k, ia, ib, (normal, tangent), (pairs.pair_inv_rot_a, pairs.pair_inv_rot_b,
                                                             pairs.pair_rot_k))
            if links is not None:
                _add_pair_link_block(k, a, b, pairs, slots, links, True)
            s0 = slot(k, 0)
            for e in range(3):
                angular_impulse[k, e] = old_angular[jo, e] if matched else 0.0
            for d in range(3):
                lam = 0.0
                for e in range(3):
                    lam += angular_impulse[k, e] * (normal[s0, e] if d == 0 else tangent[s0, d - 1, e])
                pair_angular[k, d] = lam
    return count
