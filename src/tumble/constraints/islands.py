"""Islands of the contact graph, and sleeping (Box2D's islands; Bullet's deactivation).

Two moving bodies belong to the same island when a chain of touching pairs, joints or springs joins them (a pair touches
when the narrowphase gave it at least one contact, speculative ones included, so a body about to land
on a sleeping pile already belongs to it). Fixed bodies join nothing: the ground does not make the whole
scene one island. Nor do kinematic bodies, but one that moves wakes what it touches and keeps it awake.

An island falls asleep when every body in it has been quiet for ``sleep_time`` seconds: a body is quiet
while the fastest point of its bounding sphere moves slower than ``sleep_speed``, |v| + ρ |ω| (ρ the
body's ``extent``). A sleeping body keeps its place and zero velocities; the step skips its velocity and
position stages, and the solver skips every pair with no awake moving body. The contacts of a sleeping
pair stay in the buffer with their last impulses, so ``world.contacts()`` still reports the forces that
hold a sleeping pile up, and the warm start is ready when the island wakes.

On a compliant contact (docs/materials.md) a body rests at the sink where its springs carry its weight,
m g / k for a ball, and swings about it at ω = √(k/m) (141 rad/s for 1 kg on 2e4 N/m) while its damper takes
the swing out: below ``sleep_speed`` the swing can still be ``sleep_speed`` / ω (0.07 mm of a 0.49 mm sink),
and a body put to sleep there stays off its rest depth (measured: +0.27 % of m g / k for that ball). So a body
touching a compliant pair is quiet only below min(sleep_speed, ``COMPLIANT_SINK`` |g| / ω), ω² = c k / m of
the pair (c its contact points, each of stiffness k: in parallel): a swing of amplitude A reaches the speed
ω A, so a body quiet for ``sleep_time`` (many periods) is within ``COMPLIANT_SINK`` |g| / ω² =
``COMPLIANT_SINK`` m g / (c k) of its rest, 0.1 % of its sink.

An island wakes as a whole when it holds an awake body and a sleeping one (something touched it); the
World also wakes a body when the user moves it, sets its velocities or applies a load.

How a sleeping body is skipped: by an ``awake`` flag per body row, not by moving awake bodies into a
dense range of indices (Box2D v3's solver sets with generation-counted handles). The flag keeps body
indices stable, which the handles, the trajectories and the contact buffer's pair keys rely on; its cost
is one branch per body and per pair in a step, against a copy of every field of a body each time it falls
asleep or wakes. ``World.remove_body`` compacts the rows in order and renumbers the handles.

The kernel takes the Model's, State's and Contacts' containers (``model.fields``): of the pairs
(``ContactPairs``, m rows) it reads pair_body (m, 2), pair_contacts and pair_compliance (m,) and writes
pair_awake (m,) bool; of the bodies (``BodyModel``) inv_mass and extent (n,); of their state (``BodyState``) it
updates v, w (n, 3), awake (n,) bool and sleep_timer (n,). Its own scratch is the tuple (parent (n,) int64,
island_timer (n,), island_state (n,) int64); edges (j, 2).
"""

from __future__ import annotations

import numpy as np

from ..jit import njit

COMPLIANT_SINK = 1e-3
"""A body on a compliant contact sleeps within this fraction of its sink m g / k (module docstring)."""


@njit(cache=True, forceinline=True, refcount=False)
def _root(parent, i):
    """Root of i's set, halving the path on the way (union-find)."""
    while parent[i] != i:
        parent[i] = parent[parent[i]]
        i = parent[i]
    return i


@njit(cache=True, forceinline=True, refcount=False)
def _carried(a, b, inv_mass, v, w, awake, sleep_timer):
    """A pair with a body of zero inverse mass: when that body moves (a kinematic body; a fixed one has v = ω = 0),
    the moving body of the pair is woken and kept from sleeping, since it is carried, pushed or about to be."""
    for s, o in ((a, b), (b, a)):
        if inv_mass[s] == 0.0 and inv_mass[o] != 0.0:
            if (v[s, 0] != 0.0 or v[s, 1] != 0.0 or v[s, 2] != 0.0 or w[s, 0] != 0.0 or w[s, 1] != 0.0
                    or w[s, 2] != 0.0):
                awake[o] = True
                sleep_timer[o] = 0.0


@njit(cache=True, refcount=False)
def update_islands(pairs, body, state, scratch, dt, sleep_speed, sleep_time, edges, gravity):
    """One pass at the start of a step, after detection: advance the quiet timers by ``dt`` [s] (the last
    step's), build the islands, wake the islands that were touched and put the quiet ones to sleep; then
    mark the pairs the solver must visit (``pairs.pair_awake``). Returns the number of sleeping bodies.
    pairs: ``ContactPairs``; body: ``BodyModel``; state: ``BodyState`` (updated in place); scratch: (parent,
    island_timer, island_state), each (n,); sleep_speed [m/s] and sleep_time [s] as in the module docstring.
    ``edges`` (j, 2): body pairs joined by a joint or a spring (−1 the world); an edge joins its two moving
    bodies' islands as a contact does. ``gravity`` [m/s²]: |g|, which scales the quiet speed on a compliant
    pair (module docstring; with no gravity there is no sink to settle on, and ``sleep_speed`` applies).

    Serial and in index order, so the result is the same on every run and any thread count."""
    pair_body, pair_contacts, pair_awake = pairs.pair_body, pairs.pair_contacts, pairs.pair_awake
    pair_compliance = pairs.pair_compliance
    inv_mass, extent = body.inv_mass, body.extent
    v, w, awake, sleep_timer = state.v, state.w, state.awake, state.sleep_timer
    parent, island_timer, island_state = scratch
    n = inv_mass.shape[0]
    m = pair_body.shape[0]
    limit2 = sleep_speed * sleep_speed
    for i in range(n):
        parent[i] = i
        island_timer[i] = limit2   # (until the timers are read: each body's squared quiet speed)
        island_state[i] = 0
    if gravity > 0.0:
        for k in range(m):   # a compliant pair: quiet below COMPLIANT_SINK |g| / ω, ω² = c k / m
            if pair_contacts[k] == 0 or pair_compliance[k] <= 0.0:
                continue
            for s in range(2):
                i = pair_body[k, s]
                omega2 = pair_contacts[k] * inv_mass[i] / pair_compliance[k]
                if omega2 > 0.0:
                    island_timer[i] = min(island_timer[i], (COMPLIANT_SINK * gravity) ** 2 / omega2)
    for i in range(n):
        quiet2 = island_timer[i]
        island_timer[i] = np.inf
        if inv_mass[i] == 0.0 or not awake[i]:
            continue
        speed = np.sqrt(v[i, 0] ** 2 + v[i, 1] ** 2 + v[i, 2] ** 2) \
            + extent[i] * np.sqrt(w[i, 0] ** 2 + w[i, 1] ** 2 + w[i, 2] ** 2)
        if speed * speed < quiet2:
            sleep_timer[i] += dt
        else:
            sleep_timer[i] = 0.0
    for k in range(m):
        a, b = pair_body[k, 0], pair_body[k, 1]
        if inv_mass[a] == 0.0 or inv_mass[b] == 0.0:
            # (any pair the broadphase found, touching or not: the narrowphase skips a pair with no awake moving
            # body, so a sleeping body that a kinematic one is about to meet must be woken before they touch)
            _carried(a, b, inv_mass, v, w, awake, sleep_timer)
            continue
        if pair_contacts[k] == 0:
            continue
        ra, rb = _root(parent, a), _root(parent, b)
        if ra != rb:   # the smaller index becomes the root, so the sets do not depend on pair order
            if ra < rb:
                parent[rb] = ra
            else:
                parent[ra] = rb
    for k in range(edges.shape[0]):
        a, b = edges[k, 0], edges[k, 1]
        if a < 0 or b < 0 or inv_mass[a] == 0.0 or inv_mass[b] == 0.0:
            continue
        ra, rb = _root(parent, a), _root(parent, b)
        if ra != rb:
            if ra < rb:
                parent[rb] = ra
            else:
                parent[ra] = rb
    # island_state bits: 1 = holds an awake body, 2 = holds a sleeping body.
    for i in range(n):
        if inv_mass[i] == 0.0:
            continue
        r = _root(parent, i)
        if awake[i]:
            island_state[r] |= 1
            if sleep_timer[i] < island_timer[r]:
                island_timer[r] = sleep_timer[i]
        else:
            island_state[r] |= 2
    sleeping = 0
    for i in range(n):
        if inv_mass[i] == 0.0:
            continue
        r = _root(parent, i)
        if island_state[r] == 3:
            awake[i] = True
            sleep_timer[i] = 0.0
        elif island_state[r] == 1 and island_timer[r] >= sleep_time:
            awake[i] = False
            for c in range(3):
                v[i, c] = 0.0
                w[i, c] = 0.0
        if not awake[i]:
            sleeping += 1
    for k in range(m):
        a, b = pair_body[k, 0], pair_body[k, 1]
        pair_awake[k] = (inv_mass[a] != 0.0 and awake[a]) or (inv_mass[b] != 0.0 and awake[b])
    return sleeping


@njit(cache=True, refcount=False)
def clear_sleeping_loads(awake, force, torque):
    """Zero the loads force, torque (n, 3) [N, N m] of the sleeping bodies (awake (n,) bool False): the step
    skips them, so loads left on them would pile up until they wake."""
    for i in range(awake.shape[0]):
        if not awake[i]:
            for k in range(3):
                force[i, k] = 0.0
                torque[i, k] = 0.0
