"""The order of a parallel Gauss–Seidel sweep: the step's contact pairs coloured so that no two pairs of one
colour share a moving body (ArtiSynth notes 0.15: Gauss–Seidel visits the rows in some order; any order
converges for the positive semi-definite N = J M⁻¹ Jᵀ of seed 004).

Within a colour the pairs touch disjoint sets of moving bodies, so their rows may be solved at the same time:
a pair reads and writes only its own bodies' velocities and its own impulses, so the sweep over one colour
gives the same bits whichever thread takes which pair, and in whatever order. The colours are visited one
after the other, so the whole sweep is one fixed Gauss–Seidel order (colour by colour, pairs in key order
within a colour) whatever the thread count: the trajectory is bitwise the same on 1 or 2 threads
(DESIGN.md, determinism). A fixed body (inverse mass 0) is never written and does not constrain the colouring:
every box on the ground can take the same colour.

The colouring is greedy, first fit in pair order, with a bit mask of the colours taken per body: each pair
takes the lowest colour neither of its moving bodies has yet. A mask holds ``ROUND_COLOURS`` colours; pairs
that find all of them taken (a body touching more than that many pairs) wait for the next round, which
colours them with the next ``ROUND_COLOURS`` colours, until every pair has one. A body of degree d needs at
most 2d − 1 colours; a settled pile of boxes takes about 15 to 25.
"""

from __future__ import annotations

from ..jit import njit

ROUND_COLOURS = 62
"""Colours per round of the greedy colouring: the bits of an int64 mask below its sign bit, less one."""

RUNS = 8
"""Runs each colour is cut into for the threads: a fixed count, so that nothing depends on the thread count
(asking Numba for it inside a kernel makes the kernel and its callers uncacheable); eight share out evenly over
1, 2, 4 or 8 threads. A run is a plain loop over its pairs in a kernel of its own: the per-pair code inlined
into the parallel loop itself made Numba's parallel array analysis fail."""


@njit(cache=True, inline="always")
def run_bounds(lo, hi, t, runs):
    """The t-th of ``runs`` near-equal runs of the index range [lo, hi)."""
    return lo + (hi - lo) * t // runs, lo + (hi - lo) * (t + 1) // runs


@njit(cache=True, refcount=False)
def colour_pairs(pair_body, pair_contacts, pair_awake, inv_mass, taken, pair_colour, colour_start, colour_pairs):
    """Colour the pairs that the solver visits (contacts in use and awake; module docstring) and list them
    colour by colour. Returns the number of colours C; colour c's pairs are
    ``colour_pairs[colour_start[c]:colour_start[c + 1]]``, in ascending pair order.

    pair_body (m, 2), pair_contacts (m,), pair_awake (m,), inv_mass (n,): the contact buffer and the bodies.
    Scratch: taken (n,) int64 (the bit masks), pair_colour (>= m,) int64 (−1 for a pair not visited);
    out: colour_start (>= m + 1,) int64, colour_pairs (>= m,) int64.
    """
    m = pair_contacts.shape[0]
    left = 0
    for k in range(m):
        if pair_contacts[k] > 0 and pair_awake[k]:
            pair_colour[k] = -2         # not coloured yet
            left += 1
        else:
            pair_colour[k] = -1
    base = 0
    while left > 0:
        for k in range(m):
            if pair_colour[k] == -2:
                taken[pair_body[k, 0]] = 0
                taken[pair_body[k, 1]] = 0
        for k in range(m):
            if pair_colour[k] != -2:
                continue
            a, b = pair_body[k, 0], pair_body[k, 1]
            mask = 0
            if inv_mass[a] > 0.0:
                mask |= taken[a]
            if inv_mass[b] > 0.0:
                mask |= taken[b]
            for c in range(ROUND_COLOURS):
                bit = 1 << c
                if (mask & bit) == 0:
                    pair_colour[k] = base + c
                    if inv_mass[a] > 0.0:
                        taken[a] |= bit
                    if inv_mass[b] > 0.0:
                        taken[b] |= bit
                    left -= 1
                    break
        base += ROUND_COLOURS
    colours = 0
    for k in range(m):
        colours = max(colours, pair_colour[k] + 1)
    # a counting sort by colour, stable: each colour's pairs stay in key order
    for c in range(colours + 1):
        colour_start[c] = 0
    for k in range(m):
        if pair_colour[k] >= 0:
            colour_start[pair_colour[k] + 1] += 1
    for c in range(colours):
        colour_start[c + 1] += colour_start[c]
    for k in range(m):
        c = pair_colour[k]
        if c >= 0:
            colour_pairs[colour_start[c]] = k
            colour_start[c] += 1
    for c in range(colours, 0, -1):    # the fill advanced each start to the next colour's: shift back
        colour_start[c] = colour_start[c - 1]
    colour_start[0] = 0
    return colours


@njit(cache=True)
def colour_step(scratch, pair_body, pair_contacts, pair_awake, inv_mass):
    """The sweep order of a step: None (buffer order, one thread) when ``scratch`` is None, else the colouring
    (colour_start, colour_pairs, colours, pair_residual) of ``sequential_impulse``'s coloured passes.
    scratch = (taken (n,) int64, pair_colour (>= m,) int64, colour_start (>= m + 1,) int64, colour_pairs (>= m,)
    int64, pair_residual (>= m,) float64)."""
    if scratch is None:
        return None
    taken, pair_colour, colour_start, colour_pairs_out, pair_residual = scratch
    colours = colour_pairs(pair_body, pair_contacts, pair_awake, inv_mass, taken, pair_colour, colour_start,
                           colour_pairs_out)
    return colour_start, colour_pairs_out, colours, pair_residual
