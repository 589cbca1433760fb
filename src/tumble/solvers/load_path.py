"""Load paths through light bodies: the normal rows around a body that a much heavier one bears on, solved as
one block (block Gauss–Seidel over bodies, ArtiSynth notes 0.15) after the sweeps.

Gauss–Seidel passes a load through a body in steps of that body's own effective mass. For a light box of mass
m between the ground and a heavy box of mass M, the two normal rows have the Delassus matrix
[[1/m, −1/m], [−1/m, 1/m + 1/M]], and one sweep removes only the fraction m/(M + m) of the error of the load
the light box carries (the spectral radius of Gauss–Seidel on it is M/(M + m): 0.990 at 100:1, 0.999 at
1,000:1), so 4 sub-steps × 4 sweeps carry 15 % (1.6 %) of a change of load per step. In general, two rows
that share body L, with other bodies A and B, couple with a12² / (a11 a22) = iL² / ((iL + iA)(iL + iB)) along
one direction (i the inverse masses, 0 for a fixed body): 1/2 at a box of a stack of equal boxes on the ground,
0.91 at 10:1, 0.99 at 100:1. ``block_bodies`` marks the bodies where this reaches ``BLOCK_COUPLING``, and
``solve_blocks`` solves the normal rows of all of such a body's pairs together, exactly (with the friction
impulses as they are), by principal pivoting on the Delassus block: the load then goes through in one visit.
"""

from __future__ import annotations

import numpy as np

from ..collision.contacts import slot
from ..constraints.contact_rows import row_velocity
from ..jit import njit

BLOCK_COUPLING = 0.8
"""Coupling iL² / ((iL + iA)(iL + iB)) of two of a body's pairs from which its normal rows are solved as a block
(the per-sweep convergence factor of Gauss–Seidel along the load path; 16 sweeps leave 0.8¹⁶ = 3 % of the
error). It needs a moving neighbour at least ``RATIO_MIN`` times as heavy."""

RATIO_MIN = BLOCK_COUPLING / (1.0 - BLOCK_COUPLING)
"""A pair whose heavier body is less than this many times as heavy as the lighter one cannot make a coupling of
``BLOCK_COUPLING`` (iL / (iL + iA) < BLOCK_COUPLING): the quick test ``has_light_body``."""

BLOCK_MAX_ROWS = 16
"""Most normal rows in a block (four face manifolds); a body with more contacts is left to the sweeps."""

BLOCK_REGULARIZATION = 1e-6
"""Proximal regularization of the block (relative to each row's diagonal entry): the pivoting solves
(K + εD) λ = −q + εD λ_old, which keeps the four coplanar rows of a face (rank three) from being singular and
changes nothing at the solution (λ = λ_old there)."""


@njit(cache=True, refcount=False)
def has_light_body(pairs, inv_mass):
    """Whether some awake pair joins two moving bodies whose masses differ by ``RATIO_MIN`` or more: the cheap
    test before ``block_bodies`` (which allocates)."""
    pair_body, pair_contacts, pair_awake = pairs.pair_body, pairs.pair_contacts, pairs.pair_awake
    for k in range(pair_contacts.shape[0]):
        if pair_contacts[k] == 0 or not pair_awake[k] or pairs.pair_compliance[k] > 0.0:
            continue
        ia, ib = inv_mass[pair_body[k, 0]], inv_mass[pair_body[k, 1]]
        if ia > 0.0 and ib > 0.0 and (ia >= RATIO_MIN * ib or ib >= RATIO_MIN * ia):
            return True
    return False


@njit(cache=True)
def block_bodies(pairs, inv_mass):
    """The light bodies (module docstring) and their pairs: (start (L + 1,), members) with the pairs of block i at
    members[start[i]:start[i + 1]], in buffer order. O(bodies + pairs). Compliant pairs (springs, whose rows the
    sweeps solve: sequential_impulse.compliant_row) take no part."""
    pair_body, pair_contacts, pair_awake = pairs.pair_body, pairs.pair_contacts, pairs.pair_awake
    n, m = inv_mass.shape[0], pair_contacts.shape[0]
    heavy = np.full(n, np.inf)        # the smallest positive inverse mass of a neighbour, and its pair
    heavy_pair = np.full(n, -1)
    low1 = np.full(n, np.inf)         # the two smallest inverse masses of neighbours, pair by pair (0: fixed)
    low1_pair = np.full(n, -1)
    low2 = np.full(n, np.inf)
    rows = np.zeros(n, dtype=np.int64)
    for k in range(m):
        if pair_contacts[k] == 0 or not pair_awake[k] or pairs.pair_compliance[k] > 0.0:   # (springs: the sweeps')
            continue
        for side in range(2):
            body, other = pair_body[k, side], pair_body[k, 1 - side]
            if inv_mass[body] == 0.0:
                continue
            rows[body] += pair_contacts[k]
            io = inv_mass[other]
            if 0.0 < io < heavy[body]:
                heavy[body], heavy_pair[body] = io, k
            if io < low1[body]:
                low2[body] = low1[body]
                low1[body], low1_pair[body] = io, k
            elif io < low2[body]:
                low2[body] = io
    block = np.full(n, -1)
    count = 0
    for i in range(n):
        il = inv_mass[i]
        if heavy_pair[i] < 0 or rows[i] > BLOCK_MAX_ROWS:
            continue
        other = low2[i] if low1_pair[i] == heavy_pair[i] else low1[i]
        if other < np.inf and il * il >= BLOCK_COUPLING * (il + heavy[i]) * (il + other):
            block[i] = count
            count += 1
    start = np.zeros(count + 1, dtype=np.int64)
    for k in range(m):
        if pair_contacts[k] > 0 and pair_awake[k] and pairs.pair_compliance[k] == 0.0:
            for side in range(2):
                if block[pair_body[k, side]] >= 0:
                    start[block[pair_body[k, side]] + 1] += 1
    for i in range(count):
        start[i + 1] += start[i]
    fill = start[:count].copy()
    members = np.empty(start[count], dtype=np.int64)
    for k in range(m):
        if pair_contacts[k] > 0 and pair_awake[k] and pairs.pair_compliance[k] == 0.0:
            for side in range(2):
                i = block[pair_body[k, side]]
                if i >= 0:
                    members[fill[i]] = k
                    fill[i] += 1
    return start, members


@njit(cache=True, forceinline=True, refcount=False)
def _side(x, a, b, s, arm_a, arm_b):
    """Body x's sign in row s of pair (a, b) (+1 for A, −1 for B, 0 if neither) and that side's (3,) of
    ``arm_a`` or ``arm_b`` (slots.ang_* or slots.inv_ang_*) for the normal."""
    if x == a:
        return 1.0, arm_a[s, 0]
    if x == b:
        return -1.0, arm_b[s, 0]
    return 0.0, arm_a[s, 0]


@njit(cache=True, forceinline=True, refcount=False)
def _share(s, t, x, a_s, b_s, a_t, b_t, slots, dot_n, im):
    """Body x's part of K[s, t] = J_s M⁻¹ J_tᵀ for normal rows s and t (slots: ContactSlots; A of a row is
    pushed along +n, B along −n; ``dot_n`` = n_s · n_t, ``im`` x's inverse mass)."""
    sign_s, p = _side(x, a_s, b_s, s, slots.ang_a, slots.ang_b)
    sign_t, r = _side(x, a_t, b_t, t, slots.inv_ang_a, slots.inv_ang_b)
    if sign_s == 0.0 or sign_t == 0.0:
        return 0.0
    return sign_s * sign_t * (im * dot_n + p[0] * r[0] + p[1] * r[1] + p[2] * r[2])


@njit(cache=True)
def _cholesky_solve(K, active, rhs, x, L):
    """x[active] = K[active, active]⁻¹ rhs[active], 0 elsewhere (Cholesky in L); False if not positive definite."""
    n = K.shape[0]
    for i in range(n):
        x[i] = 0.0
        if not active[i]:
            continue
        for j in range(i + 1):
            if not active[j]:
                continue
            total = K[i, j]
            for k in range(j):
                if active[k]:
                    total -= L[i, k] * L[j, k]
            if i == j:
                if total <= 0.0:
                    return False
                L[i, i] = np.sqrt(total)
            else:
                L[i, j] = total / L[j, j]
    for i in range(n):     # forward: L y = rhs
        if active[i]:
            total = rhs[i]
            for k in range(i):
                if active[k]:
                    total -= L[i, k] * x[k]
            x[i] = total / L[i, i]
    for i in range(n - 1, -1, -1):     # back: Lᵀ x = y
        if active[i]:
            total = x[i]
            for k in range(i + 1, n):
                if active[k]:
                    total -= L[k, i] * x[k]
            x[i] = total / L[i, i]
    return True


@njit(cache=True)
def solve_blocks(pairs, slots, inv_mass, v, w, impulse, pseudo, h, touch_band, baumgarte, slop):
    """Solve the normal rows of each light body's pairs (``block_bodies``) as one block, in order, changing
    ``impulse`` (slots.normal_impulse, or slots.pseudo_impulse with ``pseudo``) and the velocities v, w (n, 3)
    in place. The rows' targets are the sweeps': with ``pseudo``, the split impulse's normal velocity
    ``baumgarte`` · max(−s − slop, 0) / h (sequential_impulse.pseudo_sweep); otherwise 0, or −s / h for a gap s
    beyond ``touch_band`` (sequential_impulse.sweep's rigid rows). The block LCP K λ + q >= 0, λ >= 0,
    complementary, is solved by Murty's least-index principal pivoting (finite for a positive definite K) on
    the proximally regularized block (BLOCK_REGULARIZATION); a block it does not finish is left as it was."""
    start, members = block_bodies(pairs, inv_mass)
    if start.shape[0] == 1:
        return
    pair_body, pair_contacts = pairs.pair_body, pairs.pair_contacts
    normal, separation = slots.normal, slots.separation
    ang_a, ang_b, inv_ang_a, inv_ang_b = slots.ang_a, slots.ang_b, slots.inv_ang_a, slots.inv_ang_b
    rhs = np.empty(BLOCK_MAX_ROWS)
    K = np.empty((BLOCK_MAX_ROWS, BLOCK_MAX_ROWS))
    L = np.empty((BLOCK_MAX_ROWS, BLOCK_MAX_ROWS))
    q = np.empty(BLOCK_MAX_ROWS)
    x = np.empty(BLOCK_MAX_ROWS)
    old = np.empty(BLOCK_MAX_ROWS)
    row_slot = np.empty(BLOCK_MAX_ROWS, dtype=np.int64)
    row_pair = np.empty(BLOCK_MAX_ROWS, dtype=np.int64)
    active = np.empty(BLOCK_MAX_ROWS, dtype=np.bool_)
    inv_h = 1.0 / h
    for blk in range(start.shape[0] - 1):
        r = 0
        for e in range(start[blk], start[blk + 1]):
            k = members[e]
            for j in range(pair_contacts[k]):
                row_slot[r], row_pair[r] = slot(k, j), k
                r += 1
        Kb, Lb = K[:r, :r], L[:r, :r]
        for i in range(r):
            s, k = row_slot[i], row_pair[i]
            a_s, b_s = pair_body[k, 0], pair_body[k, 1]
            for j in range(r):
                t, kt = row_slot[j], row_pair[j]
                a_t, b_t = pair_body[kt, 0], pair_body[kt, 1]
                dot_n = normal[s, 0] * normal[t, 0] + normal[s, 1] * normal[t, 1] + normal[s, 2] * normal[t, 2]
                Kb[i, j] = (_share(s, t, a_s, a_s, b_s, a_t, b_t, slots, dot_n, inv_mass[a_s])
                            + _share(s, t, b_s, a_s, b_s, a_t, b_t, slots, dot_n, inv_mass[b_s]))
        for i in range(r):
            s, k = row_slot[i], row_pair[i]
            vn = row_velocity(s, 0, pair_body[k, 0], pair_body[k, 1], normal[s, 0], normal[s, 1], normal[s, 2],
                              ang_a, ang_b, v, w)
            gap = separation[s]
            if pseudo:
                target = baumgarte * max(-gap - slop, 0.0) * inv_h
            else:
                target = -gap * inv_h if gap > touch_band else 0.0
            old[i] = impulse[s]
            q[i] = vn - target
        scale = 0.0
        for i in range(r):
            for j in range(r):
                q[i] -= Kb[i, j] * old[j]
        for i in range(r):
            d = BLOCK_REGULARIZATION * Kb[i, i]
            Kb[i, i] += d
            q[i] -= d * old[i]
            scale = max(scale, abs(q[i]))
            rhs[i] = -q[i]
            active[i] = old[i] > 0.0
        tol = 1e-12 * scale
        solved = False
        for _ in range(4 * r + 8):
            if not _cholesky_solve(Kb, active[:r], rhs[:r], x[:r], Lb):
                break
            pick = -1
            for i in range(r):
                if active[i]:
                    if x[i] < 0.0:
                        pick = i
                        break
                else:
                    wi = q[i]
                    for j in range(r):
                        wi += Kb[i, j] * x[j]
                    if wi < -tol:
                        pick = i
                        break
            if pick < 0:
                solved = True
                break
            active[pick] = not active[pick]
        if not solved:
            continue
        for i in range(r):
            s, k = row_slot[i], row_pair[i]
            delta = x[i] - old[i]
            if delta == 0.0:
                continue
            impulse[s] = x[i]
            a, b = pair_body[k, 0], pair_body[k, 1]
            ima, imb = inv_mass[a], inv_mass[b]
            for c in range(3):
                v[a, c] += delta * ima * normal[s, c]
                w[a, c] += delta * inv_ang_a[s, 0, c]
                v[b, c] -= delta * imb * normal[s, c]
                w[b, c] -= delta * inv_ang_b[s, 0, c]
