"""Broadphase: sweep-and-sort on the three axes with a persistent table of overlapping boxes (Baraff II 7.2).

Input: world AABBs ``aabb_lo``, ``aabb_hi`` (g,3) [m] of the g geometry rows (``collision.aabb``). Output:
candidate pairs (a, b), a < b, of rows whose boxes overlap and that pass the filters below.

Algorithm (Baraff II 7.2.1, 7.2.2). Each box is three intervals [b_i, e_i], one per world axis. Per axis we
keep the list of the 2g endpoints (value, row, is-max flag) sorted from the previous step. Each step the
values are refreshed and the nearly sorted lists are re-sorted by INSERTION SORT, O(g + c) for c exchanges
of adjacent endpoints. Overlap status changes only at exchanges between a min and a max (7.2.1):

- a min of B moves left past a max of A: on this axis the intervals start to overlap. Baraff 7.2.2: "check
  bounding boxes i and j for overlap whenever an exchange is made": if the two boxes now overlap on all
  three axes, the pair enters the table;
- a max of B moves left past a min of A: the intervals stop overlapping on this axis; the pair leaves the
  table (if present).

The table after all three sorts is exactly the set of overlapping boxes: insertion sort exchanges every
pair of endpoints whose order changed exactly once and no other, so a pair that ends overlapping and did
not before had a "start" exchange on an axis where it was apart, tested against the final boxes, and no
"stop" exchange afterwards; a pair that ends apart on some axis either had a "stop" exchange there or was
apart there before (so was absent), and every "start" test it meets fails. Cost O(g + c) per step, which
is O(g + k) under coherence (Baraff II 7.2.2). A full build (``reset``) sorts with ``np.lexsort`` and
sweeps one axis with an active list (7.2.1), O(g log g + k_axis), testing the full boxes.

Touching counts as overlap: intervals are closed, [b_A, e_A] ∩ [b_B, e_B] ≠ ∅ ⟺ b_A ≤ e_B and b_B ≤ e_A.
The sort order breaks ties of value with mins before maxes, so "min of B before max of A" means exactly
b_B ≤ e_A; the brute-force reference uses the same closed test. Infinite endpoints (planes, ±inf) compare
normally; NaN or inverted boxes (lo > hi) are rejected with ``ValueError``.

The overlap table. Baraff keeps "a table of overlapping bounding boxes". A g × g bit table is 8 MB at
g = 8000 and clearing or scanning it is O(g²); a per-pair 3-bit axis mask would have to store every pair
that overlaps on ANY one axis, which is nearly all g²/2 pairs when bodies rest on a common floor (all z
intervals overlap). So the table stores only the k pairs whose boxes overlap on all three axes (the full
test above makes the per-axis bits unnecessary): an open-addressing hash set of int64 keys
``(a << 32) | b`` with a < b, linear probing, Fibonacci hashing, deletion by backward shift (no tombstones,
so probe lengths do not degrade as pairs come and go), load factor at most 1/2, grown by doubling. Memory
O(k); insert, remove and lookup O(1) expected. Reporting scans it, O(capacity) = O(k), and sorts the
survivors by a radix sort, O(k + g).

Filtering happens when pairs are reported (``pairs``), not in the table, so changing a filter needs no
rebuild. A pair (a, b) of geometry rows is reported iff
- the rows belong to different bodies (``geom_body``);
- at least one of the two bodies can move (``inv_mass > 0``);
- both bodies have ``body_collide`` True;
- ``geom_group[a] & geom_mask[b]`` and ``geom_group[b] & geom_mask[a]`` are both non-zero (uint32 bit
  fields: the categories a row belongs to, and the categories it collides with).
Pairs are reported sorted by (a, b), so the output is deterministic.

Shapes and types: aabb_lo, aabb_hi (g,3) float64 [m], world; geom_body (g,) int; inv_mass (n,) float64
[1/kg]; body_collide (n,) bool; geom_group, geom_mask (g,) uint32. Pairs: (m,2) int64.
"""

from __future__ import annotations

import numpy as np

from ..jit import njit

_EMPTY = -1
"""Marker of an empty slot in the pair table (keys are >= 0)."""

_MAX_LOAD_DEN = 2
"""The pair table holds at most capacity / 2 keys: linear probing then needs about 1.5 probes for a hit and
2.5 for a miss (Knuth, TAOCP 6.4); beyond 3/4 probe lengths grow quickly."""

# ------------------------------------------------------------------------------------------------
# Pieces shared by the kernels
# ------------------------------------------------------------------------------------------------


@njit(cache=True, forceinline=True, refcount=False)
def _boxes_overlap(a, b, aabb_lo, aabb_hi):
    """Closed-interval overlap of boxes a and b on all three axes (touching counts)."""
    for k in range(3):
        if aabb_lo[a, k] > aabb_hi[b, k] or aabb_lo[b, k] > aabb_hi[a, k]:
            return False
    return True


@njit(cache=True, forceinline=True, refcount=False)
def _keep_pair(a, b, geom_body, inv_mass, body_collide, geom_group, geom_mask):
    """The reporting filter of the module docstring, evaluated without short-circuit branches (``&`` on
    booleans): a mix of kept and rejected pairs would otherwise mispredict (measured 3× slower reporting)."""
    ba = geom_body[a]
    bb = geom_body[b]
    return ((ba != bb) & ((inv_mass[ba] != 0.0) | (inv_mass[bb] != 0.0)) & body_collide[ba] & body_collide[bb]
            & ((geom_group[a] & geom_mask[b]) != 0) & ((geom_group[b] & geom_mask[a]) != 0))


@njit(cache=True, forceinline=True, refcount=False)
def _slot(key, mask):
    """Home slot of ``key``: Fibonacci hashing (key × 2⁶⁴/φ, wrapping) with the high half folded into the low
    bits, masked to the power-of-two capacity."""
    h = key * -7046029254386353131  # 0x9E3779B97F4A7C15 as int64
    h ^= h >> 32
    return h & mask


@njit(cache=True, forceinline=True, refcount=False)
def _table_insert(a, b, table_keys, table_state):
    """Add the pair {a, b} (a ≠ b) to the table if absent; table_state[0] counts the keys."""
    key = (min(a, b) << 32) | max(a, b)
    mask = table_keys.shape[0] - 1
    s = _slot(key, mask)
    while True:
        k = table_keys[s]
        if k == key:
            return
        if k == _EMPTY:
            table_keys[s] = key
            table_state[0] += 1
            return
        s = (s + 1) & mask


@njit(cache=True, forceinline=True, refcount=False)
def _table_remove(a, b, table_keys, table_state):
    """Remove {a, b} if present, by backward-shift deletion (Knuth, TAOCP 6.4, Algorithm R): later keys of the
    probe run move back into the hole unless their home slot lies cyclically in (hole, their slot]."""
    key = (min(a, b) << 32) | max(a, b)
    mask = table_keys.shape[0] - 1
    s = _slot(key, mask)
    while True:
        k = table_keys[s]
        if k == _EMPTY:
            return
        if k == key:
            break
        s = (s + 1) & mask
    hole = s
    j = s
    while True:
        j = (j + 1) & mask
        k = table_keys[j]
        if k == _EMPTY:
            break
        home = _slot(k, mask)
        if hole <= j:
            stays = hole < home <= j
        else:
            stays = hole < home or home <= j
        if not stays:
            table_keys[hole] = k
            hole = j
    table_keys[hole] = _EMPTY
    table_state[0] -= 1


# ------------------------------------------------------------------------------------------------
# Kernels
# ------------------------------------------------------------------------------------------------


@njit(cache=True, refcount=False)
def sap_build(aabb_lo, aabb_hi, end_count, end_id, sweep_axis, active, active_slot, table_keys, table_state):
    """Fill the empty pair table from scratch: sweep the sorted endpoints of ``sweep_axis`` with an active list
    (Baraff II 7.2.1, figure 18) and test the full boxes of each interval pair met (7.2.2).

    end_id (3, ≥ end_count) int64: sorted endpoint ids 2 row + is_max. active, active_slot (≥ g,) int64
    scratch. table_keys (capacity,) int64 all empty; table_state (2,) int64 [key count, key limit].
    Returns the number of pairs found, or −1 if the table reached its limit (grow it and build again).
    """
    n_active = 0
    for p in range(end_count):
        e = end_id[sweep_axis, p]
        gi = e >> 1
        if e & 1 == 0:
            for t in range(n_active):
                gj = active[t]
                if _boxes_overlap(gi, gj, aabb_lo, aabb_hi):
                    if table_state[0] >= table_state[1]:
                        return -1
                    _table_insert(gi, gj, table_keys, table_state)
            active[n_active] = gi
            active_slot[gi] = n_active
            n_active += 1
        else:
            t = active_slot[gi]
            last = active[n_active - 1]
            active[t] = last
            active_slot[last] = t
            n_active -= 1
    return table_state[0]


@njit(cache=True, refcount=False)
def sap_update(aabb_lo, aabb_hi, end_count, end_value, end_id, table_keys, table_state):
    """One incremental step: refresh the endpoint values from the boxes, re-sort each axis by insertion sort
    from the previous order, and update the pair table at each min/max exchange (Baraff II 7.2.1, 7.2.2).

    end_value (3, ≥ end_count) float64 [m] and end_id (3, ≥ end_count) int64 (2 row + is_max): the sorted
    endpoint lists, updated in place. table_keys, table_state: the pair table (see ``sap_build``).

    Returns the number of adjacent exchanges performed, or −1 − i if box i is NaN or inverted (nothing is
    changed then). If an insertion would pass the table's key limit the kernel stops before that exchange,
    leaving a consistent state with table_state[0] == table_state[1]: grow the table and call again; the sort
    resumes where it stopped (every exchange still happens exactly once).
    """
    for i in range(aabb_lo.shape[0]):
        for k in range(3):
            if not aabb_lo[i, k] <= aabb_hi[i, k]:
                return -1 - i
    for k in range(3):
        for p in range(end_count):
            e = end_id[k, p]
            end_value[k, p] = aabb_hi[e >> 1, k] if e & 1 else aabb_lo[e >> 1, k]
    swaps = 0
    for k in range(3):
        for p in range(1, end_count):
            ve = end_value[k, p]
            ie = end_id[k, p]
            me = ie & 1
            j = p
            while j > 0:
                vf = end_value[k, j - 1]
                jf = end_id[k, j - 1]
                mf = jf & 1
                if not (vf > ve or (vf == ve and mf > me)):
                    break
                ge = ie >> 1
                gf = jf >> 1
                if ge != gf:
                    if me == 0 and mf == 1:  # min of ge passes max of gf: they start to overlap on axis k
                        if _boxes_overlap(ge, gf, aabb_lo, aabb_hi):
                            if table_state[0] >= table_state[1]:
                                end_value[k, j] = ve
                                end_id[k, j] = ie
                                return swaps
                            _table_insert(ge, gf, table_keys, table_state)
                    elif me == 1 and mf == 0:  # max of ge passes min of gf: they stop overlapping on axis k
                        _table_remove(ge, gf, table_keys, table_state)
                end_value[k, j] = vf
                end_id[k, j] = jf
                j -= 1
                swaps += 1
            end_value[k, j] = ve
            end_id[k, j] = ie
    return swaps


@njit(cache=True, refcount=False)
def table_rehash(table_keys, new_keys, new_state):
    """Insert every key of ``table_keys`` into the empty table ``new_keys`` (power-of-two size)."""
    for s in range(table_keys.shape[0]):
        key = table_keys[s]
        if key != _EMPTY:
            _table_insert(key >> 32, key & 0xFFFFFFFF, new_keys, new_state)


@njit(cache=True, refcount=False)
def sap_collect(table_keys, geom_body, inv_mass, body_collide, geom_group, geom_mask, count_scratch, keys_scratch,
                pairs_out):
    """Write the table's pairs that pass the filter into pairs_out (≥ m, 2) int64, sorted by (a, b). Returns m.

    The order comes from a two-pass LSD radix sort (a stable counting sort by b, then by a), O(m + g), so
    that a row overlapping everything (a ground plane) costs no more than any other. Scratch:
    count_scratch (≥ g + 1,) int64, keys_scratch (≥ m,) int64.
    """
    g = geom_body.shape[0]
    m = 0
    for s in range(table_keys.shape[0]):
        key = table_keys[s]
        if key != _EMPTY:
            a = key >> 32
            b = key & 0xFFFFFFFF
            if _keep_pair(a, b, geom_body, inv_mass, body_collide, geom_group, geom_mask):
                pairs_out[m, 0] = a
                pairs_out[m, 1] = b
                m += 1
    for col in (1, 0):  # least significant digit first; each pass is stable
        count_scratch[: g + 1] = 0
        for t in range(m):
            count_scratch[pairs_out[t, col] + 1] += 1
        for r in range(g):
            count_scratch[r + 1] += count_scratch[r]
        for t in range(m):
            d = pairs_out[t, col]
            keys_scratch[count_scratch[d]] = (pairs_out[t, 0] << 32) | pairs_out[t, 1]
            count_scratch[d] += 1
        for t in range(m):
            pairs_out[t, 0] = keys_scratch[t] >> 32
            pairs_out[t, 1] = keys_scratch[t] & 0xFFFFFFFF
    return m


@njit(cache=True, refcount=False)
def drop_body_pairs(pairs, geom_body, excluded):
    """Remove in place the shape pairs (m, 2) whose bodies form a pair of ``excluded`` (k,) int64, sorted keys
    min(a, b) << 32 | max(a, b) (bodies joined by a joint that does not collide). Keeps the order; returns
    the pairs kept, m' <= m (the first m' rows)."""
    kept = 0
    for t in range(pairs.shape[0]):
        a, b = geom_body[pairs[t, 0]], geom_body[pairs[t, 1]]
        key = (min(a, b) << 32) | max(a, b)
        i = np.searchsorted(excluded, key)
        if i < excluded.shape[0] and excluded[i] == key:
            continue
        pairs[kept, 0], pairs[kept, 1] = pairs[t, 0], pairs[t, 1]
        kept += 1
    return kept


@njit(cache=True, forceinline=True, refcount=False)
def sap_step(aabb_lo, aabb_hi, lists, table, pair_filter, scratch, excluded):
    """``sap_update``, ``sap_collect`` and ``drop_body_pairs`` in one call: the step's candidate pairs into
    pairs_out, m rows, with lists = (end_count, end_value, end_id), table = (table_keys, table_state), pair_filter =
    (geom_body, inv_mass, body_collide, geom_group, geom_mask), scratch = (count_scratch, keys_scratch, pairs_out)
    (those kernels' arguments). Returns (m, the exchanges of the sort), or (nothing collected) m = −1 when the table
    must grow first (call again after growing: the sort resumes where it stopped) or −2 − i when box i is NaN or
    inverted (nothing changed)."""
    end_count, end_value, end_id = lists
    table_keys, table_state = table
    geom_body, inv_mass, body_collide, geom_group, geom_mask = pair_filter
    count_scratch, keys_scratch, pairs_out = scratch
    s = sap_update(aabb_lo, aabb_hi, end_count, end_value, end_id, table_keys, table_state)
    if s < 0:
        return -1 + s, 0
    if table_state[0] >= table_state[1]:
        return -1, s
    m = sap_collect(table_keys, geom_body, inv_mass, body_collide, geom_group, geom_mask, count_scratch,
                    keys_scratch, pairs_out)
    if excluded.shape[0]:
        m = drop_body_pairs(pairs_out[:m], geom_body, excluded)
    return m, s


@njit(cache=True, refcount=False)
def brute_force_fill(aabb_lo, aabb_hi, geom_body, inv_mass, body_collide, geom_group, geom_mask, pairs_out):
    """O(g²) reference: every pair a < b whose closed boxes overlap and that passes the filter, in (a, b) order.
    Writes the first pairs_out.shape[0] of them; returns how many there are."""
    m = 0
    g = aabb_lo.shape[0]
    for a in range(g):
        for b in range(a + 1, g):
            if _boxes_overlap(a, b, aabb_lo, aabb_hi) and _keep_pair(a, b, geom_body, inv_mass, body_collide,
                                                                     geom_group, geom_mask):
                if m < pairs_out.shape[0]:
                    pairs_out[m, 0] = a
                    pairs_out[m, 1] = b
                m += 1
    return m


# ------------------------------------------------------------------------------------------------
# Python side
# ------------------------------------------------------------------------------------------------


def _boxes(aabb_lo, aabb_hi) -> tuple[np.ndarray, np.ndarray]:
    lo = np.asarray(aabb_lo, dtype=np.float64)
    hi = np.asarray(aabb_hi, dtype=np.float64)
    if lo.ndim != 2 or lo.shape[1] != 3 or hi.shape != lo.shape:
        raise ValueError(f"aabb_lo and aabb_hi must both have shape (g, 3), got {lo.shape} and {hi.shape}")
    return lo, hi


def _bad_box_error(i: int, lo: np.ndarray, hi: np.ndarray) -> ValueError:
    return ValueError(f"AABB of geometry row {i} is NaN or inverted: lo={lo[i].tolist()}, hi={hi[i].tolist()}")


def brute_force_pairs(aabb_lo, aabb_hi, geom_body, inv_mass, body_collide, geom_group, geom_mask) -> np.ndarray:
    """All filtered pairs of overlapping boxes by testing every pair, O(g²): the reference that sweep-and-sort
    must equal (STYLE.md pattern 12). Same closed-interval test, filter and (a, b) order as
    ``SweepAndSort.pairs``. Returns (m, 2) int64."""
    lo, hi = _boxes(aabb_lo, aabb_hi)
    args = (lo, hi, geom_body, inv_mass, body_collide, geom_group, geom_mask)
    m = brute_force_fill(*args, np.empty((0, 2), dtype=np.int64))
    out = np.empty((m, 2), dtype=np.int64)
    brute_force_fill(*args, out)
    return out


class SweepAndSort:
    """Sweep-and-sort broadphase with a persistent pair table (Baraff II 7.2.2); see the module docstring.

    Usage, once per step after the AABBs are computed::

        sap.update(aabb_lo, aabb_hi)       # or sap.reset(...) after rows are added, removed or reordered
        pairs = sap.pairs(geom_body, inv_mass, body_collide, geom_group, geom_mask)

    State (flat arrays with a capacity, grown by doubling; nothing is allocated by ``update`` in the steady
    state): per axis the sorted endpoint values (3, cap) float64 and ids 2 row + is_max (3, cap) int64; the
    pair table (capacity,) int64 with [count, limit]; output buffers sized to the table.

    Attributes:
        geom_count: number of geometry rows g the lists were built for.
        last_swaps: adjacent endpoint exchanges performed by the last ``update``, over all three axes (0 after
            ``reset``): the c of Baraff's O(n + c).
    """

    def __init__(self, *, pair_capacity: int = 1024) -> None:
        capacity = 16
        while capacity < 2 * pair_capacity:
            capacity *= 2
        self.geom_count = 0
        self.last_swaps = 0
        self._end_value = np.zeros((3, 0), dtype=np.float64)
        self._end_id = np.zeros((3, 0), dtype=np.int64)
        self._active = np.zeros(0, dtype=np.int64)
        self._active_slot = np.zeros(0, dtype=np.int64)
        self._count_scratch = np.zeros(1, dtype=np.int64)
        self._table_keys = np.full(capacity, _EMPTY, dtype=np.int64)
        self._table_state = np.array([0, capacity // _MAX_LOAD_DEN], dtype=np.int64)
        self._keys_scratch = np.empty(capacity // _MAX_LOAD_DEN, dtype=np.int64)
        self._pairs = np.empty((capacity // _MAX_LOAD_DEN, 2), dtype=np.int64)
        self._step_args: tuple | None = None

    @property
    def pair_count(self) -> int:
        """Number of overlapping box pairs in the table, before filtering."""
        return int(self._table_state[0])

    @property
    def table_capacity(self) -> int:
        """Slots in the pair table (a power of two, at least twice ``pair_count``)."""
        return int(self._table_keys.shape[0])

    def _grow_table(self) -> None:
        capacity = 2 * self._table_keys.shape[0]
        keys = np.full(capacity, _EMPTY, dtype=np.int64)
        state = np.array([0, capacity // _MAX_LOAD_DEN], dtype=np.int64)
        table_rehash(self._table_keys, keys, state)
        self._table_keys, self._table_state = keys, state
        self._keys_scratch = np.empty(capacity // _MAX_LOAD_DEN, dtype=np.int64)
        self._pairs = np.empty((capacity // _MAX_LOAD_DEN, 2), dtype=np.int64)
        self._step_args = None

    def reset(self, aabb_lo, aabb_hi) -> None:
        """Build everything from scratch for boxes (g,3) [m]: sort each axis with ``np.lexsort`` (value, then
        mins before maxes) and find the overlapping pairs by one sweep (Baraff II 7.2.1) along the axis where
        the box centres spread most. O(g log g + k_axis)."""
        lo, hi = _boxes(aabb_lo, aabb_hi)
        bad = np.flatnonzero(~np.all(lo <= hi, axis=1))
        if bad.size:
            raise _bad_box_error(int(bad[0]), lo, hi)
        g = lo.shape[0]
        n_end = 2 * g
        if self._end_value.shape[1] < n_end:
            cap = max(16, self._end_value.shape[1])
            while cap < n_end:
                cap *= 2
            self._end_value = np.zeros((3, cap), dtype=np.float64)
            self._end_id = np.zeros((3, cap), dtype=np.int64)
            self._active = np.zeros(cap // 2, dtype=np.int64)
            self._active_slot = np.zeros(cap // 2, dtype=np.int64)
            self._count_scratch = np.zeros(cap // 2 + 1, dtype=np.int64)
        ids = np.concatenate([2 * np.arange(g, dtype=np.int64), 2 * np.arange(g, dtype=np.int64) + 1])
        for k in range(3):
            values = np.concatenate([lo[:, k], hi[:, k]])
            order = np.lexsort((ids & 1, values))
            self._end_value[k, :n_end] = values[order]
            self._end_id[k, :n_end] = ids[order]
        finite = np.isfinite(lo) & np.isfinite(hi)  # planes (±inf) have no centre
        spread = [np.var(0.5 * (lo[finite[:, k], k] + hi[finite[:, k], k])) if finite[:, k].sum() > 1 else 0.0
                  for k in range(3)]
        axis = int(np.argmax(spread))
        while True:
            self._table_keys.fill(_EMPTY)
            self._table_state[0] = 0
            found = sap_build(lo, hi, n_end, self._end_id, axis, self._active, self._active_slot,
                              self._table_keys, self._table_state)
            if found >= 0:
                break
            self._grow_table()
        self.geom_count = g
        self.last_swaps = 0
        self._step_args = None

    def update(self, aabb_lo, aabb_hi) -> None:
        """Incremental step for new boxes (g,3) [m] of the same rows: insertion sort from the previous order and
        table maintenance at each exchange, O(g + c) (Baraff II 7.2.2). If g differs from ``geom_count`` this
        is a ``reset``. Raises ``ValueError`` (and changes nothing) if a box is NaN or inverted."""
        lo, hi = _boxes(aabb_lo, aabb_hi)
        if lo.shape[0] != self.geom_count:
            self.reset(lo, hi)
            return
        swaps = 0
        while True:
            s = sap_update(lo, hi, 2 * self.geom_count, self._end_value, self._end_id, self._table_keys,
                           self._table_state)
            if s < 0:
                raise _bad_box_error(-1 - s, lo, hi)
            swaps += s
            if self._table_state[0] < self._table_state[1]:
                break
            self._grow_table()
        self.last_swaps = swaps

    def update_pairs(self, aabb_lo: np.ndarray, aabb_hi: np.ndarray, geom_body: np.ndarray, inv_mass: np.ndarray,
                     body_collide: np.ndarray, geom_group: np.ndarray, geom_mask: np.ndarray,
                     excluded: np.ndarray) -> np.ndarray:
        """``update`` then ``pairs``, without the pairs of bodies in ``excluded`` (k,) (sorted body-pair keys,
        ``drop_body_pairs``), in one kernel call: for C-contiguous float64 boxes (g, 3) of the same g rows as
        the last call; anything else goes the way of ``update``. The result is a view, as ``pairs``'."""
        g = aabb_lo.shape[0]
        if g != self.geom_count or aabb_lo.dtype != np.float64 or aabb_hi.dtype != np.float64:
            self.update(aabb_lo, aabb_hi)
            pairs = self.pairs(geom_body, inv_mass, body_collide, geom_group, geom_mask)
            return pairs[:drop_body_pairs(pairs, geom_body, excluded)] if excluded.shape[0] else pairs
        swaps = 0
        while True:
            m, s = sap_step(aabb_lo, aabb_hi, *self.step_args((geom_body, inv_mass, body_collide, geom_group,
                                                                 geom_mask)), excluded)
            swaps += s
            if m >= 0:
                break
            if m < -1:
                raise _bad_box_error(-2 - m, aabb_lo, aabb_hi)
            self._grow_table()
        self.last_swaps = swaps
        return self._pairs[:m]

    def step_args(self, pair_filter: tuple) -> tuple:
        """``sap_step``'s (lists, table, pair_filter, scratch) for this table and the filter's arrays
        (geom_body, inv_mass, body_collide, geom_group, geom_mask): the same tuple while neither the tables nor
        ``pair_filter`` changed (a caller may keep what it built from it while ``step_args`` returns it)."""
        args = self._step_args
        if args is None or args[2] is not pair_filter:
            args = self._step_args = ((2 * self.geom_count, self._end_value, self._end_id),
                                      (self._table_keys, self._table_state), pair_filter,
                                      (self._count_scratch, self._keys_scratch, self._pairs))
        return args

    def pairs(self, geom_body, inv_mass, body_collide, geom_group, geom_mask) -> np.ndarray:
        """Candidate pairs (m, 2) int64 of geometry rows a < b, sorted by (a, b), that overlap and pass the
        filter (module docstring): geom_body (g,) int, inv_mass (n,) [1/kg], body_collide (n,) bool,
        geom_group and geom_mask (g,) uint32.

        The result is a view into a buffer that the next ``pairs``, ``update`` or ``reset`` may overwrite:
        copy it to keep it.
        """
        if len(geom_body) != self.geom_count:
            raise ValueError(f"geom_body must have one entry per geometry row ({self.geom_count}), "
                             f"got {len(geom_body)}")
        m = sap_collect(self._table_keys, geom_body, inv_mass, body_collide, geom_group, geom_mask,
                        self._count_scratch, self._keys_scratch, self._pairs)
        return self._pairs[:m]
