"""Projected Gauss–Seidel / sequential impulses over the contact rows (ArtiSynth notes 0.15, 0.16).

Each sweep visits the contacts in buffer order (pairs by key, slots in order), so a sweep, and the whole
step, is the same on every run and any thread count. Per contact:

- **friction** (notes 0.16, the circular cone): the tangential relative velocity v_t (2,) is removed as far
  as the disc |λ_t| <= μ λ_n allows (``friction_disc``; K_t is the 2×2 tangential block of N = Dᵀ M⁻¹ D);
  or as far as the Anitescu–Stewart polygon of k directions allows (``friction_polygon``, notes 0.10); or
  row by row within the box |λ_t,i| <= μ λ_n (box friction, notes 0.10); or not at all;
- **normal** (notes 0.15 on the unilateral row of 0.10): the accumulated impulse is clamped at zero,
  λ_n ← max(0, λ_n − m_n (ms (v_n + bias)) − is λ_n). The row's target follows the gap s:
  s > δ (apart, within the contact margin): bias = s / h, so the bodies may close the gap this step but not
  pass it (a speculative contact); 0 < s <= δ, with δ the ``slop``: touching, a rigid row (a resting body
  that the position correction lifted by a hair must not fall freely for a sub-step: in a tall stack those
  free falls become a chatter that Gauss–Seidel cannot damp in a few sweeps, and the stack falls);
  s <= 0 in the biased sweep of the soft mode: bias = max(β_s s, −v_push) with the soft coefficients
  (ms, is) of the regularized row (notes 0.11); otherwise a rigid row (bias 0).

Velocities are updated in place after every row (the "total velocity" of notes 0.15), so a row always sees
the impulses of every row solved before it.

Robots (constraints/link_rows.py): every function takes ``links``, None or the robots' rows. A contact with a
link side is swept as any other: its body part by the code below, with the link side's velocity and inverse
mass taken as zero (``load_pair``), and its link part, J q̇ and q̇ += M⁻¹ Jᵀ Δλ, by link_rows; with None that
code is not compiled.

Materials (docs/materials.md): a compliant pair's normal rows are Hunt–Crossley springs (``compliant_row``),
swept by ``compliant_sweep`` (before ``sweep`` in a forward iteration, after it in a reverse one); a pair's
torsional and rolling rows by ``angular_sweep`` after both. velocity_solve's Gauss–Seidel calls them only when
some pair has them, so that the sweep of a scene without them is the code it was (S3's step: +4 % when the
sweep took compliant pairs in its own loop).

The soft row comes from notes 0.11 (0.8)–(0.9): a spring of stiffness k = m_n ω² and damper
d = 2 m_n ζ ω behind the constraint, integrated implicitly over the step, gives
  λ = −m_n ms (v_n + β_s s) − is λ_prev,  β_s = ω / (2ζ + hω),  ms = hω(2ζ + hω) / (1 + hω(2ζ + hω)),
  is = 1 / (1 + hω(2ζ + hω))
(the form of Catto's soft step, Box2D v3), so the behaviour is set in physical units (a frequency in Hz
and a damping ratio) whatever the masses.
"""

from __future__ import annotations

import numpy as np
from numba import types

from ..collision.contacts import slot
from ..constraints.contact_rows import row_velocity
from ..constraints.link_rows import (
    link_push,
    link_twist,
    tree_rows_warm_start,
    with_link_spin,
    with_link_velocity,
)
from ..jit import njit, overload


@njit(cache=True, forceinline=True, refcount=False)
def soft_coefficients(hertz, damping_ratio, h):
    """(β_s [1/s], ms, is) of a regularized row (module docstring); hertz 0 gives a rigid row (0, 1, 0)."""
    if hertz <= 0.0:
        return 0.0, 1.0, 0.0
    omega = 2.0 * np.pi * hertz
    a1 = 2.0 * damping_ratio + h * omega
    a2 = h * omega * a1
    a3 = 1.0 / (1.0 + a2)
    return omega / a1, a2 * a3, a3


@njit(cache=True, forceinline=True, refcount=False)
def friction_disc(k11, k12, k22, old1, old2, vt1, vt2, limit):
    """The friction step of notes 0.16 at one contact: the impulse λ_t (2,) in the disc |λ_t| <= ``limit``
    that reduces the tangential velocity v_t + K_t (λ_t − λ_old) the most, measured in the K_t⁻¹ metric
    (the kinetic energy the contact can remove), i.e. min ½ λᵀ K_t λ − λᵀ (K_t λ_old − v_t) on the disc.

    Inside the disc that is the sticking impulse λ_old − K_t⁻¹ v_t. Outside, (K_t + γ I) λ = K_t λ_old − v_t
    with γ > 0 chosen so |λ| = limit (the secular equation, solved by Newton's method on 1/|λ| − 1/limit in
    K_t's eigenbasis, which converges monotonically from γ = 0; Moré & Sorensen 1983). The velocity left
    after the step is then −γ λ: the friction opposes the sliding exactly (maximal dissipation), which a
    plain rescaling of the sticking impulse onto the circle does not do when K_t is not isotropic.
    """
    det = k11 * k22 - k12 * k12
    u1 = old1 - (k22 * vt1 - k12 * vt2) / det
    u2 = old2 - (k11 * vt2 - k12 * vt1) / det
    if u1 * u1 + u2 * u2 <= limit * limit:
        return u1, u2
    if limit <= 0.0:
        return 0.0, 0.0
    r1 = k11 * old1 + k12 * old2 - vt1
    r2 = k12 * old1 + k22 * old2 - vt2
    e1, e2, qa, qb = disc_frame(k11, k12, k22)
    t1, t2, _ = disc_boundary(e1, e2, qa, qb, r1, r2, limit, 0.0)
    return t1, t2


@njit(cache=True, forceinline=True, refcount=False)
def disc_frame(k11, k12, k22):
    """(e1, e2, qa, qb) of the 2×2 symmetric positive definite K_t = [[k11, k12], [k12, k22]]: its eigenvalues
    e1 <= e2 and the unit eigenvector q1 = (qa, qb) of e1 (q2 = (−qb, qa)); ``friction_disc`` solves in this
    basis, and a caller whose K_t stays fixed over many friction steps (robots/step.py) computes it once."""
    half_trace = 0.5 * (k11 + k22)
    spread = np.sqrt(0.25 * (k11 - k22) ** 2 + k12 * k12)
    e1, e2 = half_trace - spread, half_trace + spread
    if spread > 1e-14 * half_trace:   # eigenvector of e1: (k12, e1 − k11) or (e1 − k22, k12), the longer
        qa, qb = k12, e1 - k11
        qc, qd = e1 - k22, k12
        if qc * qc + qd * qd > qa * qa + qb * qb:
            qa, qb = qc, qd
        inv = 1.0 / np.sqrt(qa * qa + qb * qb)
        qa *= inv
        qb *= inv
    else:
        qa, qb = 1.0, 0.0
    return e1, e2, qa, qb


@njit(cache=True, forceinline=True, refcount=False)
def disc_boundary(e1, e2, qa, qb, r1, r2, limit, gamma0):
    """(λ1, λ2, γ): λ on the circle |λ| = ``limit`` with (K_t + γ I) λ = r for the γ >= 0 that puts it there (the
    outside case of ``friction_disc``: r = K_t λ_old − v_t), K_t given by its ``disc_frame`` (e1, e2, qa, qb), for
    an r whose sticking impulse K_t⁻¹ r lies outside the circle. Newton's method on φ(γ) = 1/|λ(γ)| − 1/limit,
    which is concave and increasing, so that it converges monotonically from below the root (Moré & Sorensen
    1983): from γ = 0, or from ``gamma0`` > 0 (the γ of a contact's last step, robots/step.py), which, if it lies
    above the root, one Newton step brings below (the tangent of a concave function lies above it)."""
    c1 = qa * r1 + qb * r2          # r in the eigenbasis (q1 = (qa, qb), q2 = (−qb, qa))
    c2 = -qb * r1 + qa * r2
    gamma = 0.0
    a1, a2 = c1 / e1, c2 / e2
    if gamma0 > 0.0:
        b1, b2 = c1 / (e1 + gamma0), c2 / (e2 + gamma0)
        norm = np.sqrt(b1 * b1 + b2 * b2)
        phi = 1.0 / norm - 1.0 / limit
        gamma = gamma0
        if phi > 0.0:   # above the root: one Newton step, γ ← γ − φ / φ′ with φ′ = Σ b² / (e + γ) / |b|³
            slope = (b1 * b1 / (e1 + gamma0) + b2 * b2 / (e2 + gamma0)) / (norm * norm * norm)
            gamma = max(gamma0 - phi / slope, 0.0)
        a1, a2 = c1 / (e1 + gamma), c2 / (e2 + gamma)
    for _ in range(30):
        norm = np.sqrt(a1 * a1 + a2 * a2)
        phi = 1.0 / norm - 1.0 / limit
        if phi * limit >= -1e-13:
            break
        dnorm = -(a1 * a1 / (e1 + gamma) + a2 * a2 / (e2 + gamma)) / norm
        gamma += phi * norm * norm / dnorm      # Newton: γ ← γ − φ / φ′ with φ′ = −|λ|′ / |λ|²
        a1, a2 = c1 / (e1 + gamma), c2 / (e2 + gamma)
    scale = limit / np.sqrt(a1 * a1 + a2 * a2)
    a1 *= scale
    a2 *= scale
    return qa * a1 - qb * a2, qb * a1 + qa * a2, gamma


MANIFOLD_PASSES = 2
"""Most passes over one face manifold's normal rows per sweep (``sweep``). A box face on a face has four
corner rows of rank three (the pair's relative motion along the normal has three degrees of freedom), and
one Gauss–Seidel pass shares the load between the corners in the order it visits them; the uneven corner
impulses tilt the box, and in a tall stack the tilt grows into a sway. Passes until the rows agree make each
such pair's normal rows one block solved per visit (block Gauss–Seidel over pairs, ArtiSynth notes 0.15).
Measured against one pass: S3 (20 boxes, 10 s) top drift 1.10 mm with sleep (0.76 mm without) → 0.14 mm
(0.04 mm) with 2 passes, 0.001 mm (0.0003 mm) with 4. Two were chosen over four by S2-boxes (one sitting,
2026-11-24): 10 % more steps/s, and the deepest contact over its last second at a median of 0.63 mm (max
1.30) against 1.20 mm (1.41) with 4 passes; S4's largest displacement 0.355 mm against 0.363. (S2-boxes'
end state is chaotic: its last frame alone read 0.96 mm with 4 passes, 1.28 mm with 3, 0.59 mm with 2.)"""

MANIFOLD_MIN_CONTACTS = 3
"""Pairs with fewer contacts get one pass. Passing over two-point manifolds (edges on faces) as well cost
S2-boxes 20 % of its speed and left it worse than one pass: max penetration 1.54 mm, end kinetic energy
7.15 J (measured with 8 passes; not understood)."""

MANIFOLD_TOLERANCE = 1e-7
"""[m/s] a pair's normal passes stop when no row's velocity changed by more than this in the last pass (over
a sub-step of 1/240 s, 4e-10 m)."""

FRICTION_NONE, FRICTION_CONE, FRICTION_PYRAMID, FRICTION_BOX = 0, 1, 2, 3
"""Friction models of the sweep (``contact_settings.FRICTION_MODELS`` names them)."""


@njit(cache=True, refcount=False)
def friction_polygon(k11, k12, k22, old1, old2, vt1, vt2, limit, directions):
    """The friction step at one contact with the Anitescu–Stewart polyhedral cone (ArtiSynth notes 0.10): the
    friction impulse is Σ β_i d_i with β_i >= 0, Σ β_i <= ``limit`` = μ λ_n, over ``directions`` unit vectors
    d_i evenly spread in the tangent plane (d_0 = t1), i.e. a point of the regular polygon with vertices
    limit · d_i. As ``friction_disc`` does for the disc, it returns the point of that polygon that reduces
    the tangential velocity the most in the K_t⁻¹ metric, min ½ (λ − u)ᵀ K_t (λ − u) with u = λ_old − K_t⁻¹ v_t
    the sticking impulse: maximal dissipation over the polygon, which is the LCP of Anitescu and Stewart
    (the slack γ of its complementarity rows is the sliding speed) solved for this one contact exactly.

    Inside the polygon that is u; otherwise the nearest point (K_t metric) of one of its edges, found by
    trying each edge: O(k) per contact. As k grows the polygon tends to the disc from inside; a body sliding
    midway between two directions is resisted by limit · cos(π/k) along its motion, plus a sideways part.
    """
    det = k11 * k22 - k12 * k12
    u1 = old1 - (k22 * vt1 - k12 * vt2) / det
    u2 = old2 - (k11 * vt2 - k12 * vt1) / det
    if limit <= 0.0:
        return 0.0, 0.0
    step = 2.0 * np.pi / directions
    # inside: on the inner side of every edge (the edge between vertices i and i+1 has outward normal
    # (cos, sin) of angle (i + ½) step, at distance limit · cos(step / 2) from the centre)
    inner = limit * np.cos(0.5 * step)
    inside = True
    for i in range(directions):
        angle = (i + 0.5) * step
        if u1 * np.cos(angle) + u2 * np.sin(angle) > inner:
            inside = False
            break
    if inside:
        return u1, u2
    best, b1, b2 = np.inf, 0.0, 0.0
    p1, p2 = limit, 0.0
    for i in range(directions):
        q1, q2 = limit * np.cos((i + 1) * step), limit * np.sin((i + 1) * step)
        e1, e2 = q1 - p1, q2 - p2
        ke1, ke2 = k11 * e1 + k12 * e2, k12 * e1 + k22 * e2
        t = ((u1 - p1) * ke1 + (u2 - p2) * ke2) / (e1 * ke1 + e2 * ke2)
        t = min(max(t, 0.0), 1.0)
        r1, r2 = p1 + t * e1 - u1, p2 + t * e2 - u2
        f = r1 * (k11 * r1 + k12 * r2) + r2 * (k12 * r1 + k22 * r2)
        if f < best:
            best, b1, b2 = f, p1 + t * e1, p2 + t * e2
        p1, p2 = q1, q2
    return b1, b2


RANK_TOLERANCE = 1e-10
"""A contact's tangential block K_t counts as singular when det K_t <= this × (trace K_t)²: a link side whose
contact point can move along one tangent direction only (the link of one hinge) or along none. A free body's
K_t is positive definite (its inverse mass is on the diagonal); rounding leaves a singular K_t's determinant
near 1e-16 of trace²."""


@njit(cache=True, forceinline=True, refcount=False)
def singular_block(k11, k12, k22):
    """Whether K_t = [[k11, k12], [k12, k22]] is singular (``RANK_TOLERANCE``)."""
    trace = k11 + k22
    return k11 * k22 - k12 * k12 <= RANK_TOLERANCE * trace * trace


@njit(cache=True, forceinline=True, refcount=False)
def rank_one_friction(k11, k12, k22, old1, old2, vt1, vt2, limit, friction_model, directions):
    """The friction step of a contact whose K_t is singular (``singular_block``; a link side's, constraints/
    link_rows.py), where the steps above divide by det K_t. For K_t = κ e eᵀ (rank one; e its unit eigenvector of
    the largest eigenvalue κ, ``disc_frame``) the tangential velocity J_t q̇ lies along e (it is in K_t's range),
    and an impulse along the null direction changes no velocity: the impulse is s e, with s minimizing
    ½ κ s² − s e·(K_t λ_old − v_t), s = e·λ_old − e·v_t / κ, clamped to the friction set's extent along e (the
    disc's limit; the polygon's support limit · max_i cos(θ_i − φ) with φ the angle of e; the box's
    limit / max(|e_1|, |e_2|)); for K_t = 0, zero. Returns (λ_1, λ_2)."""
    if k11 + k22 <= 0.0 or limit <= 0.0:
        return 0.0, 0.0
    e1, e2, qa, qb = disc_frame(k11, k12, k22)
    ex, ey = -qb, qa   # the eigenvector of e2
    s = ex * old1 + ey * old2 - (ex * vt1 + ey * vt2) / e2
    reach = limit
    if friction_model == FRICTION_BOX:
        reach = limit / max(abs(ex), abs(ey))
    elif friction_model == FRICTION_PYRAMID:
        step = 2.0 * np.pi / directions
        best = -1.0
        for i in range(directions):
            best = max(best, np.cos(i * step) * ex + np.sin(i * step) * ey)
        reach = limit * best
    s = min(max(s, -reach), reach)
    return s * ex, s * ey


@njit(cache=True, forceinline=True, refcount=False)
def _load(k, pair_body, inv_mass, v, w):
    """Pair k's bodies a, b, their inverse masses, and their velocities as one tuple st = (va, ωa, vb, ωb),
    12 floats: a sweep keeps them in registers while it visits the pair's rows and stores them once
    (``_store``; arrays may alias, so updating them in place row by row makes the compiler reload every
    velocity after every store)."""
    a, b = pair_body[k, 0], pair_body[k, 1]
    st = (v[a, 0], v[a, 1], v[a, 2], w[a, 0], w[a, 1], w[a, 2],
          v[b, 0], v[b, 1], v[b, 2], w[b, 0], w[b, 1], w[b, 2])
    return a, b, inv_mass[a], inv_mass[b], st


@njit(cache=True, forceinline=True, refcount=False)
def _store(a, b, st, v, w):
    v[a, 0], v[a, 1], v[a, 2], w[a, 0], w[a, 1], w[a, 2] = st[0], st[1], st[2], st[3], st[4], st[5]
    v[b, 0], v[b, 1], v[b, 2], w[b, 0], w[b, 1], w[b, 2] = st[6], st[7], st[8], st[9], st[10], st[11]


def load_pair(links, k, pair_body, inv_mass, v, w):
    """``_load``, with a link side's velocity and inverse mass zero (its part of a row is link_rows'). Kernels
    only."""
    raise NotImplementedError("resolved by Numba inside kernels")


@overload(load_pair)
def _load_pair(links, k, pair_body, inv_mass, v, w):
    if isinstance(links, types.NoneType):
        return lambda links, k, pair_body, inv_mass, v, w: _load(k, pair_body, inv_mass, v, w)

    def impl(links, k, pair_body, inv_mass, v, w):
        a, b, ima, imb, st = _load(k, pair_body, inv_mass, v, w)
        link_a, link_b = links.rows.body_link[a] >= 0, links.rows.body_link[b] >= 0
        if link_a:
            ima = 0.0
            st = (0.0, 0.0, 0.0, 0.0, 0.0, 0.0, st[6], st[7], st[8], st[9], st[10], st[11])
        if link_b:
            imb = 0.0
            st = (st[0], st[1], st[2], st[3], st[4], st[5], 0.0, 0.0, 0.0, 0.0, 0.0, 0.0)
        return a, b, ima, imb, st

    return impl


def store_pair(links, a, b, st, v, w):
    """``_store``, leaving a link side's body alone (its velocity follows the joints). Kernels only."""
    raise NotImplementedError("resolved by Numba inside kernels")


@overload(store_pair)
def _store_pair(links, a, b, st, v, w):
    if isinstance(links, types.NoneType):
        return lambda links, a, b, st, v, w: _store(a, b, st, v, w)

    def impl(links, a, b, st, v, w):
        if links.rows.body_link[a] < 0:
            v[a, 0], v[a, 1], v[a, 2], w[a, 0], w[a, 1], w[a, 2] = st[0], st[1], st[2], st[3], st[4], st[5]
        if links.rows.body_link[b] < 0:
            v[b, 0], v[b, 1], v[b, 2], w[b, 0], w[b, 1], w[b, 2] = st[6], st[7], st[8], st[9], st[10], st[11]

    return impl


@njit(cache=True, forceinline=True, refcount=False)
def _jv(s, d, dx, dy, dz, ang_a, ang_b, st):
    """J_d times the pair's velocities ``st`` (contact_rows.row_velocity on the loaded tuple)."""
    return (dx * (st[0] - st[6]) + dy * (st[1] - st[7]) + dz * (st[2] - st[8])
            + ang_a[s, d, 0] * st[3] + ang_a[s, d, 1] * st[4] + ang_a[s, d, 2] * st[5]
            - ang_b[s, d, 0] * st[9] - ang_b[s, d, 1] * st[10] - ang_b[s, d, 2] * st[11])


@njit(cache=True, forceinline=True, refcount=False)
def _push(s, d, dx, dy, dz, impulse, ima, imb, inv_ang_a, inv_ang_b, st):
    """``st`` += M⁻¹ J_dᵀ impulse (Baraff II (8-12)): A gets +impulse along d, B the opposite."""
    la, lb = impulse * ima, impulse * imb
    return (st[0] + la * dx, st[1] + la * dy, st[2] + la * dz,
            st[3] + impulse * inv_ang_a[s, d, 0], st[4] + impulse * inv_ang_a[s, d, 1],
            st[5] + impulse * inv_ang_a[s, d, 2],
            st[6] - lb * dx, st[7] - lb * dy, st[8] - lb * dz,
            st[9] - impulse * inv_ang_b[s, d, 0], st[10] - impulse * inv_ang_b[s, d, 1],
            st[11] - impulse * inv_ang_b[s, d, 2])


@njit(cache=True, forceinline=True, refcount=False)
def _twist(k, d, impulse, inv_rot_a, inv_rot_b, st):
    """``st`` += the couple of an angular impulse along row d of pair k's angular rows (contact_rows
    ``_set_angular_rows``): ω_a += I_a⁻¹ d impulse, ω_b −= I_b⁻¹ d impulse; the linear velocities keep."""
    return (st[0], st[1], st[2],
            st[3] + impulse * inv_rot_a[k, d, 0], st[4] + impulse * inv_rot_a[k, d, 1],
            st[5] + impulse * inv_rot_a[k, d, 2],
            st[6], st[7], st[8],
            st[9] - impulse * inv_rot_b[k, d, 0], st[10] - impulse * inv_rot_b[k, d, 1],
            st[11] - impulse * inv_rot_b[k, d, 2])


@njit(cache=True, refcount=False)
def warm_start(pairs, slots, inv_mass, v, w, links):
    """Apply last step's recycled impulses before the first sweep (warm start). ``pairs``, ``slots``: the contact
    buffer (model.fields.ContactPairs, ContactSlots); inv_mass (n,); v, w (n, 3) changed in place; ``links`` the
    robots' rows or None (module docstring), whose own rows are warm-started too."""
    pair_body, pair_contacts, pair_awake = pairs.pair_body, pairs.pair_contacts, pairs.pair_awake
    normal, tangent, normal_impulse, tangent_impulse = slots.normal, slots.tangent, slots.normal_impulse, \
        slots.tangent_impulse
    inv_ang_a, inv_ang_b = slots.inv_ang_a, slots.inv_ang_b
    pair_rolling, pair_torsional, pair_angular = pairs.pair_rolling, pairs.pair_torsional, pairs.pair_angular
    for k in range(pair_contacts.shape[0]):
        if not pair_awake[k]:
            continue
        a, b, ima, imb, st = load_pair(links, k, pair_body, inv_mass, v, w)
        for j in range(pair_contacts[k]):
            s = slot(k, j)
            st = _push(s, 0, normal[s, 0], normal[s, 1], normal[s, 2], normal_impulse[s], ima, imb, inv_ang_a,
                       inv_ang_b, st)
            link_push(links, s, 0, normal_impulse[s], False)
            for d in range(2):
                st = _push(s, d + 1, tangent[s, d, 0], tangent[s, d, 1], tangent[s, d, 2], tangent_impulse[s, d],
                           ima, imb, inv_ang_a, inv_ang_b, st)
                link_push(links, s, d + 1, tangent_impulse[s, d], False)
        if pair_contacts[k] > 0 and (pair_rolling[k] != 0.0 or pair_torsional[k] != 0.0):
            for d in range(3):
                st = _twist(k, d, pair_angular[k, d], pairs.pair_inv_rot_a, pairs.pair_inv_rot_b, st)
                link_twist(links, k, d, pair_angular[k, d])
        store_pair(links, a, b, st, v, w)
    tree_rows_warm_start(links)


COMPLIANT_U0 = 1.0 / 16.0
"""u₀ of a compliant row's blend θ = u / (u + u₀) (``compliant_row``): the spring is implicit (θ >= ½) once
ω h >= ¼, a period of its own under 25 sub-steps. For the 1-DOF oscillator the step is then stable for any k
even when the true mode is up to 100 times stiffer than the row's own estimate u (checked over u ∈ [1e-5, 1e6]
for the amplification matrix), while a resolved contact (u ≪ u₀) loses about 8π u^1.5 of its rebound speed to
the scheme (1.5e-3 over a contact of 80 sub-steps) against ½ π ω h for implicit Euler (θ = 1: 5 % at 80)."""


@njit(cache=True, forceinline=True, refcount=False)
def compliant_row(compliance, dissipation, gap, mass, h):
    """(bias [m/s], D [kg]) of a compliant normal row (docs/materials.md): the Hunt–Crossley contact
    f = k x (1 + d ẋ) (x = −gap the penetration [m], ẋ = −v_n its rate, k = 1 / ``compliance`` [N/m],
    d = ``dissipation`` [s/m]) as a spring–damper over the sub-step h [s], a regularized row (ArtiSynth notes
    0.11): the damping linearized at the current depth, b = k d x⁺ (x⁺ = max(x, 0)), implicit in ẋ, and the
    spring taken at x + θ h ẋ, where the position stage ends the sub-step (x_end = x + h ẋ):
        λ = h f = h k x − D v_n,   D = h (θ k h + b),
    i.e. v_n + bias + C λ = 0 with bias = −h k x / D and the compliance C = 1 / D [1/kg] of velocity_solve.
    θ = u / (u + ``COMPLIANT_U0``) with u = h² k / m (m = ``mass``, the row's effective mass [kg]; u = (ω h)²
    of the row's own oscillation): backward Euler (θ → 1, stable for any k) where the sub-step cannot resolve
    the spring, nearly the symplectic step (θ → 0, no numerical damping) where it can.
    With a gap (x < 0) the row pushes only if the spring, so taken, is compressed: for a stiff spring that is
    the speculative row v_n >= −gap/h of a rigid contact. The sweep's update λ ← max(λ − m ms (v_n + bias)
    − is λ, 0) has that fixed point with ms = D / (D + m), is = m / (D + m)."""
    x = -gap
    u = h * h / (compliance * mass)
    theta = u / (u + COMPLIANT_U0)
    damping = h * (theta * h + dissipation * max(x, 0.0)) / compliance
    return -h * x / (compliance * damping), damping


@njit(cache=True, forceinline=True, refcount=False)
def _normal_passes(k, c, reverse, spring, bias, pairs, slots, masses, st, links):
    """Pair k's c normal rows on its velocities ``st`` (``_load``; masses = its (1/m_a, 1/m_b)), passed over
    until they agree, at most ``MANIFOLD_PASSES`` for a face manifold (``sweep``). Each row: the accumulated
    impulse λ ← max(λ − m ms (v_n + b) − is λ, 0), with b, ms, is of a rigid or soft row by its gap (module
    docstring; ``bias`` as ``sweep``'s), or with ``spring`` of the pair's Hunt–Crossley spring
    (``compliant_row``: ms = D / (D + m), is = m / (D + m)). ``links``: the robots' rows or None (module
    docstring). Returns (st, the largest velocity change [m/s])."""
    h, use_bias, bias_rate, mass_scale, impulse_scale, max_push, touch_band = (bias[0], bias[1], bias[2], bias[3],
                                                                               bias[4], bias[5], bias[6])
    normal, normal_impulse, normal_mass, separation = slots.normal, slots.normal_impulse, slots.normal_mass, \
        slots.separation
    ang_a, ang_b, inv_ang_a, inv_ang_b = slots.ang_a, slots.ang_b, slots.inv_ang_a, slots.inv_ang_b
    ima, imb = masses
    inv_h = 1.0 / h
    residual = 0.0
    for _ in range(MANIFOLD_PASSES if c >= MANIFOLD_MIN_CONTACTS else 1):
        largest = 0.0
        for jj in range(c):
            s = slot(k, c - 1 - jj if reverse else jj)
            nx, ny, nz = normal[s, 0], normal[s, 1], normal[s, 2]
            vn = with_link_velocity(links, s, 0, _jv(s, 0, nx, ny, nz, ang_a, ang_b, st), False)
            gap = separation[s]
            ms, is_ = 1.0, 0.0
            if spring:
                target, damping = compliant_row(pairs.pair_compliance[k], pairs.pair_dissipation[k], gap,
                                                normal_mass[s], h)
                ms, is_ = damping / (damping + normal_mass[s]), normal_mass[s] / (damping + normal_mass[s])
            elif gap > touch_band:
                target = gap * inv_h
            elif use_bias and gap <= 0.0:
                target = max(bias_rate * gap, -max_push)
                ms, is_ = mass_scale, impulse_scale
            else:
                target = 0.0
            if links is not None and normal_mass[s] == 0.0:
                continue   # (an inert contact of a link: contact_rows ``_set_link_rows``)
            old = normal_impulse[s]
            new = max(old - normal_mass[s] * ms * (vn + target) - is_ * old, 0.0)
            normal_impulse[s] = new
            delta = new - old
            st = _push(s, 0, nx, ny, nz, delta, ima, imb, inv_ang_a, inv_ang_b, st)
            link_push(links, s, 0, delta, False)
            largest = max(largest, abs(delta) / normal_mass[s])
        residual = max(residual, largest)
        if largest <= MANIFOLD_TOLERANCE:
            break
    return st, residual


@njit(cache=True, refcount=False)
def sweep(pairs, slots, inv_mass, v, w, bias, friction_model, directions, reverse, links):
    """One Gauss–Seidel sweep: every pair's normal rows (a face manifold's passed over until they agree,
    ``MANIFOLD_PASSES``), then every contact's friction (whose bound then uses this sweep's normal impulses)
    by ``friction_model`` (FRICTION_*; ``directions``: the pyramid's k); backwards through the buffer when
    ``reverse`` (alternating directions make the sweeps symmetric, so no contact order is favoured). Normals
    first holds stacks better than pair by pair (the S3 stack's top swayed 5.5 mm instead of 2.1 mm).
    ``bias`` = (h [s], use_bias, soft β_s [1/s], ms, is, max push [m/s], touch band [m], relax, angular,
    compliant) (velocity_solve). With ``compliant`` (some pair is), compliant pairs' normal rows are left to
    ``compliant_sweep``; the angular rows are ``angular_sweep``'s (docs/materials.md). ``links``: the robots'
    rows or None (module docstring).
    Returns the largest velocity change of a normal row [m/s] (the sweep's residual)."""
    pair_body, pair_contacts, pair_awake = pairs.pair_body, pairs.pair_contacts, pairs.pair_awake
    pair_friction = pairs.pair_friction
    tangent, normal_impulse, tangent_impulse = slots.tangent, slots.normal_impulse, slots.tangent_impulse
    ang_a, ang_b, inv_ang_a, inv_ang_b = slots.ang_a, slots.ang_b, slots.inv_ang_a, slots.inv_ang_b
    tangent_k = slots.tangent_k
    compliant = bias[9]
    residual = 0.0
    m = pair_contacts.shape[0]
    for phase in range(1 if friction_model == FRICTION_NONE else 2):  # 0: the normal rows, 1: the friction
        for kk in range(m):
            k = m - 1 - kk if reverse else kk
            c = pair_contacts[k]
            mu = pair_friction[k]
            if c == 0 or not pair_awake[k] or (phase == 1 and mu == 0.0) or (
                    phase == 0 and compliant and pairs.pair_compliance[k] > 0.0):
                continue
            a, b, ima, imb, st = load_pair(links, k, pair_body, inv_mass, v, w)
            if phase == 0:
                # Normal: unilateral, accumulated impulse clamped at zero; a face manifold's rows swept until
                # they agree
                st, largest = _normal_passes(k, c, reverse, False, bias, pairs, slots, (ima, imb), st, links)
                residual = max(residual, largest)
            else:
                for jj in range(c):
                    s = slot(k, c - 1 - jj if reverse else jj)
                    t1x, t1y, t1z = tangent[s, 0, 0], tangent[s, 0, 1], tangent[s, 0, 2]
                    t2x, t2y, t2z = tangent[s, 1, 0], tangent[s, 1, 1], tangent[s, 1, 2]
                    old1, old2 = tangent_impulse[s, 0], tangent_impulse[s, 1]
                    limit = mu * normal_impulse[s]
                    vt1 = with_link_velocity(links, s, 1, _jv(s, 1, t1x, t1y, t1z, ang_a, ang_b, st), False)
                    if links is not None and singular_block(tangent_k[s, 0], tangent_k[s, 1], tangent_k[s, 2]):
                        # a link whose contact point moves along one tangent only, or none
                        vt2 = with_link_velocity(links, s, 2, _jv(s, 2, t2x, t2y, t2z, ang_a, ang_b, st), False)
                        new1, new2 = rank_one_friction(tangent_k[s, 0], tangent_k[s, 1], tangent_k[s, 2], old1,
                                                       old2, vt1, vt2, limit, friction_model, directions)
                        st = _push(s, 1, t1x, t1y, t1z, new1 - old1, ima, imb, inv_ang_a, inv_ang_b, st)
                        st = _push(s, 2, t2x, t2y, t2z, new2 - old2, ima, imb, inv_ang_a, inv_ang_b, st)
                        link_push(links, s, 1, new1 - old1, False)
                        link_push(links, s, 2, new2 - old2, False)
                    elif friction_model == FRICTION_BOX:
                        # Box friction (notes 0.10): each tangent row alone, bounded by ±μ λ_n with λ_n this
                        # sweep's normal impulse (the estimate), the second row seeing the first's impulse.
                        new1 = min(max(old1 - vt1 / tangent_k[s, 0], -limit), limit)
                        st = _push(s, 1, t1x, t1y, t1z, new1 - old1, ima, imb, inv_ang_a, inv_ang_b, st)
                        link_push(links, s, 1, new1 - old1, False)
                        vt2 = with_link_velocity(links, s, 2, _jv(s, 2, t2x, t2y, t2z, ang_a, ang_b, st), False)
                        new2 = min(max(old2 - vt2 / tangent_k[s, 2], -limit), limit)
                        st = _push(s, 2, t2x, t2y, t2z, new2 - old2, ima, imb, inv_ang_a, inv_ang_b, st)
                        link_push(links, s, 2, new2 - old2, False)
                    else:
                        vt2 = with_link_velocity(links, s, 2, _jv(s, 2, t2x, t2y, t2z, ang_a, ang_b, st), False)
                        if friction_model == FRICTION_PYRAMID:  # the polyhedral cone (notes 0.10)
                            new1, new2 = friction_polygon(tangent_k[s, 0], tangent_k[s, 1], tangent_k[s, 2], old1,
                                                          old2, vt1, vt2, limit, directions)
                        else:  # the circular cone (notes 0.16)
                            new1, new2 = friction_disc(tangent_k[s, 0], tangent_k[s, 1], tangent_k[s, 2], old1, old2,
                                                       vt1, vt2, limit)
                        st = _push(s, 1, t1x, t1y, t1z, new1 - old1, ima, imb, inv_ang_a, inv_ang_b, st)
                        st = _push(s, 2, t2x, t2y, t2z, new2 - old2, ima, imb, inv_ang_a, inv_ang_b, st)
                        link_push(links, s, 1, new1 - old1, False)
                        link_push(links, s, 2, new2 - old2, False)
                    tangent_impulse[s, 0], tangent_impulse[s, 1] = new1, new2
            store_pair(links, a, b, st, v, w)
    return residual


@njit(cache=True, refcount=False)
def compliant_sweep(pairs, slots, inv_mass, v, w, bias, reverse, links):
    """One Gauss–Seidel sweep over the normal rows of the compliant pairs (``compliant_row``: Hunt–Crossley
    springs; docs/materials.md), which ``sweep`` leaves to it, in buffer order or backwards; ``bias`` as
    ``sweep``'s (its h [s] is the sub-step). Returns the largest velocity change of such a row [m/s]."""
    pair_body, pair_contacts, pair_awake = pairs.pair_body, pairs.pair_contacts, pairs.pair_awake
    residual = 0.0
    m = pair_contacts.shape[0]
    for kk in range(m):
        k = m - 1 - kk if reverse else kk
        c = pair_contacts[k]
        if c == 0 or not pair_awake[k] or pairs.pair_compliance[k] == 0.0:
            continue
        a, b, ima, imb, st = load_pair(links, k, pair_body, inv_mass, v, w)
        st, largest = _normal_passes(k, c, reverse, True, bias, pairs, slots, (ima, imb), st, links)
        residual = max(residual, largest)
        store_pair(links, a, b, st, v, w)
    return residual


@njit(cache=True, refcount=False)
def angular_sweep(pairs, slots, inv_mass, v, w, reverse, links):
    """One Gauss–Seidel sweep over the pairs' torsional and rolling rows (docs/materials.md), after ``sweep``
    (whose normal impulses bound them), in buffer order or backwards. Per pair with rolling or torsional
    friction, the directions those of its slot 0 and Λ its normal impulse (the sum over its contacts):
    torsion (along n): the relative spin n·(ω_a − ω_b) removed as far as |Δ_n| <= μ_s Λ allows, a clamped
    row; rolling (along t1, t2): the tangential part of ω_a − ω_b removed as far as the disc |Δ_t| <= μ_r Λ
    allows, in the K⁻¹ metric (``friction_disc``: maximal dissipation). A limit of 0 clamps its row to 0 (a warm
    start projected from a turned normal is taken back). The pair's impulse is kept in world axes too
    (``pair_angular_impulse``, the next step's warm start). ``pairs``, ``slots``: the buffer; v, w changed in
    place."""
    pair_body, pair_contacts, pair_awake = pairs.pair_body, pairs.pair_contacts, pairs.pair_awake
    pair_rolling, pair_torsional = pairs.pair_rolling, pairs.pair_torsional
    angular, rot_k, inv_rot_a, inv_rot_b = pairs.pair_angular, pairs.pair_rot_k, pairs.pair_inv_rot_a, \
        pairs.pair_inv_rot_b
    angular_impulse = pairs.pair_angular_impulse
    normal, tangent, normal_impulse = slots.normal, slots.tangent, slots.normal_impulse
    m = pair_contacts.shape[0]
    for kk in range(m):
        k = m - 1 - kk if reverse else kk
        c = pair_contacts[k]
        if c == 0 or not pair_awake[k] or (pair_rolling[k] == 0.0 and pair_torsional[k] == 0.0):
            continue
        a, b, ima, imb, st = load_pair(links, k, pair_body, inv_mass, v, w)
        total = 0.0
        for j in range(c):
            total += normal_impulse[slot(k, j)]
        s0 = slot(k, 0)
        wn = with_link_spin(links, k, 0, normal[s0, 0] * (st[3] - st[9]) + normal[s0, 1] * (st[4] - st[10])
                            + normal[s0, 2] * (st[5] - st[11]))      # n·(ω_a − ω_b)
        limit = pair_torsional[k] * total
        old = angular[k, 0]
        if links is not None and rot_k[k, 0] <= 0.0:
            new = 0.0   # (a link that cannot spin about n here)
        else:
            new = min(max(old - wn / rot_k[k, 0], -limit), limit)
        angular[k, 0] = new
        st = _twist(k, 0, new - old, inv_rot_a, inv_rot_b, st)
        link_twist(links, k, 0, new - old)
        w1 = with_link_spin(links, k, 1, tangent[s0, 0, 0] * (st[3] - st[9]) + tangent[s0, 0, 1] * (st[4] - st[10])
                            + tangent[s0, 0, 2] * (st[5] - st[11]))
        w2 = with_link_spin(links, k, 2, tangent[s0, 1, 0] * (st[3] - st[9]) + tangent[s0, 1, 1] * (st[4] - st[10])
                            + tangent[s0, 1, 2] * (st[5] - st[11]))
        old1, old2 = angular[k, 1], angular[k, 2]
        if links is not None and singular_block(rot_k[k, 1], rot_k[k, 2], rot_k[k, 3]):
            new1, new2 = rank_one_friction(rot_k[k, 1], rot_k[k, 2], rot_k[k, 3], old1, old2, w1, w2,
                                           pair_rolling[k] * total, FRICTION_CONE, 0)
        else:
            new1, new2 = friction_disc(rot_k[k, 1], rot_k[k, 2], rot_k[k, 3], old1, old2, w1, w2,
                                       pair_rolling[k] * total)
        angular[k, 1], angular[k, 2] = new1, new2
        st = _twist(k, 1, new1 - old1, inv_rot_a, inv_rot_b, st)
        st = _twist(k, 2, new2 - old2, inv_rot_a, inv_rot_b, st)
        link_twist(links, k, 1, new1 - old1)
        link_twist(links, k, 2, new2 - old2)
        for e in range(3):     # in world axes, for the next step's warm start (contact_rows.prepare_rows)
            angular_impulse[k, e] = new * normal[s0, e] + new1 * tangent[s0, 0, e] + new2 * tangent[s0, 1, e]
        store_pair(links, a, b, st, v, w)


@njit(cache=True, refcount=False)
def pseudo_sweep(pairs, slots, inv_mass, v_pseudo, w_pseudo, h, baumgarte, slop, links):
    """One sweep of the split-impulse position correction (Bullet's split impulse): pseudo-velocities that
    remove the fraction ``baumgarte`` of each penetration beyond ``slop`` [m] over the step h [s]. They move the
    bodies in the position stage and are then dropped, so they add no kinetic energy. A compliant pair's
    penetration is physical (its spring's compression): it is not corrected. A link side moves by the robots'
    pseudo-velocities (link_rows ``LinkArrays.qd_pseudo``)."""
    pair_body, pair_contacts, pair_awake = pairs.pair_body, pairs.pair_contacts, pairs.pair_awake
    normal, pseudo_impulse, normal_mass, separation = slots.normal, slots.pseudo_impulse, slots.normal_mass, \
        slots.separation
    ang_a, ang_b, inv_ang_a, inv_ang_b = slots.ang_a, slots.ang_b, slots.inv_ang_a, slots.inv_ang_b
    inv_h = 1.0 / h
    pair_compliance = pairs.pair_compliance
    for k in range(pair_contacts.shape[0]):
        if not pair_awake[k] or pair_compliance[k] > 0.0:    # a compliant contact's depth is its spring's
            continue
        a, b, ima, imb, st = load_pair(links, k, pair_body, inv_mass, v_pseudo, w_pseudo)
        for j in range(pair_contacts[k]):
            s = slot(k, j)
            target = baumgarte * max(-separation[s] - slop, 0.0) * inv_h
            nx, ny, nz = normal[s, 0], normal[s, 1], normal[s, 2]
            vn = with_link_velocity(links, s, 0, _jv(s, 0, nx, ny, nz, ang_a, ang_b, st), True)
            old = pseudo_impulse[s]
            new = max(old + normal_mass[s] * (target - vn), 0.0)
            pseudo_impulse[s] = new
            st = _push(s, 0, nx, ny, nz, new - old, ima, imb, inv_ang_a, inv_ang_b, st)
            link_push(links, s, 0, new - old, True)
        store_pair(links, a, b, st, v_pseudo, w_pseudo)


@njit(cache=True, refcount=False)
def advance_separation(pairs, slots, inv_mass, v, w, h, links, pseudo):
    """s ← s + h v_n: each contact's gap after the position stage moved the bodies with v, w (n, 3) over h [s]
    (to first order in the rotation), for the passes that run after it; a link side moves with the robots' q̇
    (or with ``pseudo`` their pseudo-velocities, as v, w are the bodies')."""
    pair_body, pair_contacts, pair_awake = pairs.pair_body, pairs.pair_contacts, pairs.pair_awake
    normal, ang_a, ang_b, separation = slots.normal, slots.ang_a, slots.ang_b, slots.separation
    for k in range(pair_contacts.shape[0]):
        if not pair_awake[k]:
            continue
        if links is None:
            a, b = pair_body[k, 0], pair_body[k, 1]
            for j in range(pair_contacts[k]):
                s = slot(k, j)
                separation[s] += h * row_velocity(s, 0, a, b, normal[s, 0], normal[s, 1], normal[s, 2],
                                                  ang_a, ang_b, v, w)
        else:
            a, b, _, _, st = load_pair(links, k, pair_body, inv_mass, v, w)
            for j in range(pair_contacts[k]):
                s = slot(k, j)
                separation[s] += h * with_link_velocity(links, s, 0, _jv(s, 0, normal[s, 0], normal[s, 1],
                                                                         normal[s, 2], ang_a, ang_b, st), pseudo)


@njit(cache=True, forceinline=True, refcount=False)
def rebound_speed(e, v0, a, gap, h):
    """Separation speed v⁺ >= 0 after an impact with restitution e (Baraff II (8-10)), for a contact that
    started the step at normal velocity v0 < 0 [m/s], gap [m] (negative when overlapping) and constant
    normal relative acceleration a [m/s²] from the loads, with sub-steps of h [s].

    A symplectic Euler step under a constant load conserves the modified energy
    Ẽ = ½ v² − a z + ½ h a v exactly (z the gap); the continuous energy it approximates is off by O(h).
    v⁺ is chosen so that Ẽ after the impact (at z = 0) is e² times Ẽ before it:
        v⁺² + h a v⁺ = e² (v0² − 2 a gap + h a v0),
    so rebound heights come out in the ratio e² exactly under a constant load. With a = 0 (no load), or as
    h → 0 with the gap closed, this is v⁺ = −e v⁻ of (8-10).
    """
    energy = v0 * v0 - 2.0 * a * gap + h * a * v0
    if energy <= 0.0:
        return 0.0
    half = 0.5 * h * a
    return -half + np.sqrt(half * half + e * e * energy)


@njit(cache=True, refcount=False)
def restitution_sweep(pairs, slots, inv_mass, v, w, threshold, h, links):
    """Baraff II (8-10): a contact that was closing faster than ``threshold`` [m/s] and took a normal
    impulse leaves with the separation speed of ``rebound_speed``. Run after the position stage (as Box2D v3
    does), so a speculative contact first brings the bodies together and only then sends them apart."""
    pair_body, pair_contacts, pair_awake = pairs.pair_body, pairs.pair_contacts, pairs.pair_awake
    pair_restitution = pairs.pair_restitution
    normal, normal_impulse, normal_mass, depth = slots.normal, slots.normal_impulse, slots.normal_mass, slots.depth
    ang_a, ang_b, inv_ang_a, inv_ang_b = slots.ang_a, slots.ang_b, slots.inv_ang_a, slots.inv_ang_b
    approach, normal_accel = slots.approach, slots.normal_accel
    for k in range(pair_contacts.shape[0]):
        e = pair_restitution[k]
        if e == 0.0 or not pair_awake[k]:
            continue
        a, b, ima, imb, st = load_pair(links, k, pair_body, inv_mass, v, w)
        for j in range(pair_contacts[k]):
            s = slot(k, j)
            if approach[s] + h * normal_accel[s] > -threshold or normal_impulse[s] == 0.0:
                continue
            target = rebound_speed(e, approach[s], normal_accel[s], -depth[s], h)
            nx, ny, nz = normal[s, 0], normal[s, 1], normal[s, 2]
            vn = with_link_velocity(links, s, 0, _jv(s, 0, nx, ny, nz, ang_a, ang_b, st), False)
            old = normal_impulse[s]
            new = max(old + normal_mass[s] * (target - vn), 0.0)
            normal_impulse[s] = new
            st = _push(s, 0, nx, ny, nz, new - old, ima, imb, inv_ang_a, inv_ang_b, st)
            link_push(links, s, 0, new - old, False)
        store_pair(links, a, b, st, v, w)
