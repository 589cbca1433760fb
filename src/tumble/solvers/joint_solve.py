"""The joints' share of a sub-step: their equality rows solved as one block, limits and motors by Gauss–Seidel,
and the position projection after the position stage.

**The equality rows** (constraints/joint_rows.py) of all joints form K λ = −(J v + Σ λ₀ + b) with
K = J M⁻¹ Jᵀ + Σ (ArtiSynth notes 0.5–0.6: the Schur complement of the KKT system; M is block-diagonal, so
K is sparse: two rows couple only through a body they share). Two ways to solve it, ``World(joint_solver=...)``:

- ``"direct"`` (default): K is factored once per sub-step by an envelope (skyline) Cholesky in a
  bandwidth-reducing order of the joints (reverse Cuthill–McKee on the joint graph, chosen when the joints
  change): a chain or a tree is banded, so the factorization costs O(rows · band²) and each solve
  O(rows · band). One solve satisfies every equality row exactly, whatever the chain length and the mass
  ratios; with contacts and limits the whole block takes part in the block Gauss–Seidel iteration with
  their rows (notes 0.15 with the joints as one block).
- ``"pgs"``: block Gauss–Seidel over the joints (notes 0.15): each joint's own rows are solved exactly
  (its k×k block of K), then the next joint's. Converges slowly along long chains and across high mass
  ratios, as Gauss–Seidel does, and takes no SHAKE step (below): a Gauss–Seidel SHAKE pass on top of
  unconverged velocity sweeps fed the next sub-step's warm start and diverged on a double pendulum.

K is kept SPD for redundant constraints (a closed loop, two joints on the same pair) by adding
``REGULARIZATION`` times each diagonal entry: the solve then returns the least-squares-like impulse.

**Softness** (notes 0.11): a joint with compliance c [m/N or rad/(N·m)] and damping d [N·s/m] is a stiff
spring k = 1/c with damper d behind each equality row, integrated implicitly over the sub-step h: with
φ⁺ = φ + h Ċ⁺, λ/h = −(k φ⁺ + d Ċ⁺) gives Ċ⁺ + Σ λ + b = 0 with Σ = c / (h (h + d c)), b = φ / (h + d c).
A rigid joint (c = 0) has Σ = 0, b = 0 and is held in place by the projection instead.

**Limits and motors** join the block by an active set: a limit is a unilateral row, λ >= 0 with Ċ >= −C/h
while the coordinate is within its bound (the bodies may reach the bound this sub-step but not pass it, a
speculative row) and Ċ >= 0 once at or past it; a motor drives Ċ to its target speed with |λ| <= max force
(or torque) × h. A row is in the block while its impulse is inside its bounds (an engaged limit, a motor
below its largest force): there it is solved exactly with the equality rows, so a limit stops the joint dead
and its impulse carries the bodies' momentum through the equality rows. A solve whose impulse would leave
the bounds (a limit that would pull, a motor past its force) holds that row at the bound, takes it out of
the block and solves again; a row out of the block whose velocity the solve leaves violated (a limit being
passed, a saturated motor that should let go) comes in. Each change factors the block again from the first
joint that changed (``refactor``); the warm start decides the active set at the start of each sub-step.
A hinge's or slider's motor and limit act on the same row, so while the limit is in the block the motor waits
out of it at a bound (``motor_yields_to_limit``); after ``BULK_PASSES`` the rows change one per pass.
(Before, the limits and motors were Gauss–Seidel rows after the block: a hinge limit's row, a torque about
the centre of mass, and the point rows trade the error back and forth, each exchange leaving 1 − I_com/I_pivot
of it (0.75 for a rod), and the iteration's convergence test read the equality rows alone: a rod hitting its
limit at 1 rad/s left it at −0.17 rad/s.)

**SHAKE / RATTLE** (``joint_shake``, "direct" only): after the velocity solve, impulses along the same rows
make the pose the position stage will reach satisfy the rigid rows (Ryckaert et al. 1977); with the velocity
solve at the next sub-step's pose this is RATTLE (Andersen 1983), symplectic and momentum-conserving. The
velocity solve alone loses energy at O(h) (each sub-step removes the velocity that the constraint's
curvature turns into violation): two jointed bodies spinning in zero g lost 0.6 % of their kinetic
energy in 2 s at 1/240 s and their angular momentum changed 0.5 %; with SHAKE 1.5e-6 and 2e-9.

**Projection** (notes 0.5, constraint satisfaction as projection): after the position stage the rigid
equality rows (and limits past their bound) are brought back to C = 0 by the smallest mass-weighted move,
Δq = M⁻¹ Jᵀ μ with J M⁻¹ Jᵀ μ = −C, on positions only: velocities are not touched, so no energy is injected
(a Baumgarte velocity bias would). ``World(joint_projection=...)`` Newton steps (default 2) with the rows
rebuilt at each pose; SHAKE takes as many.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse
from scipy.sparse.csgraph import reverse_cuthill_mckee

from ..constraints.joint_rows import (
    BALL,
    EQUALITY_ROWS,
    HAS_LIMIT,
    HAS_MOTOR,
    IDLE,
    LIMIT_ROW,
    MOTOR_ROW,
    ROW_SLOTS,
    RPY_ROWS,
    joint_rows_one,
    limit_rows,
)
from ..integration.integrate import position_stage_one
from ..jit import njit
from ..math3d import exp_map_t, qmul_t, qrot_t
from ..model.fields import JointBlock, JointData, JointScratch, JointStructure


def time_step_block(joints: JointData, scratch: JointScratch) -> JointBlock:
    """The time-stepping solve's ``JointBlock``: the joints' motors and impulses with the scratch's rows. (Kernels
    build it in place with the same arguments: a kernel without reference counting must not return arrays.)"""
    return JointBlock(scratch.sigma, scratch.bias, scratch.error, joints.motor, joints.impulse, scratch.lin,
                      scratch.ang_a, scratch.ang_b, scratch.inv_ang_a, scratch.inv_ang_b, scratch.active,
                      scratch.factor, scratch.rhs)

REGULARIZATION = 1e-10
"""Fraction of each diagonal entry of K added to it, so that redundant joints (closed loops) keep K SPD.
Relative 1e-10 moves a solve by ~1e-10 of its impulse, far below the joints' other errors."""

SHAKE_GAP = 1e-6
"""[m or rad] a rigid row the sub-step starts this far off (or more) is the projection's to close, by moving
positions; SHAKE keeps its gap. Below it SHAKE closes the gap with the rest, by impulses that conserve
momentum: the projection's rounding (~1e-10), a contact's split-impulse move (~1e-7), at speeds of at most
SHAKE_GAP / h (1 mm/s at 1/960 s). Above it that speed is the gap over one sub-step: a chain whose ball joint
started 0.8 rad outside its limits, whose projection left the joints centimetres apart, had 42 kJ after one
step from 13 J. (Keeping every gap, however small, left the projection to move positions at its tolerance
each sub-step, and two spinning bodies' angular momentum drifted 2.4e-7 in 2 s instead of 2e-9.)"""

POSITION_TOLERANCE = 1e-10
"""[m or rad] a rigid row violated by less than this is left alone by SHAKE and the projection. Each SHAKE
step (K of the sub-step's start pose: a quasi-Newton step) cuts a swinging 10-link chain's predicted error
about 250-fold, 3e-6 → 1e-8 → 4e-11 m, so two steps usually end under 1e-10 and the projection then only
checks; at 1e-12 it ran two full passes every sub-step, for errors a hundred times below any tolerance
the tests ask for (the joint error stays below 1e-9 m)."""

ACTIVE_SET_PASSES = 32
"""Most solves of a block per iteration while its limits and motors enter or leave it (each change factors
the block again from the first joint that changed). A limit hit or left takes two; a 5-link chain whose
seven limit and motor rows engage together takes up to 9 (tests/joints/test_joint_ode.py). If the last pass
is reached, it clamps the impulses as Gauss–Seidel would, which leaves the block's other rows unsolved: with
8 passes that chain's joints came apart by 1e-4 m under rk4."""

BULK_PASSES = 2
"""Passes in which every row that should change does so at once (a chain hitting many limits in one step
settles in two); after them one row changes per pass, the first in the block's order (Murty's least-index
rule, which ends for the positive-definite K here, where exchanging all at once is not sure to)."""

ACTIVATION_TOLERANCE = 1e-10
"""[m/s or rad/s] a limit or saturated motor out of the block is brought in when the velocities violate it by
more than this: above the rounding of a solved row (~1e-15 relative), so a row just released does not
thrash in and out."""

DIRECT, PGS = 0, 1
SOLVER_NAMES = {"direct": DIRECT, "pgs": PGS}


def joint_structure(kind: np.ndarray, body: np.ndarray, flags: np.ndarray, inv_mass: np.ndarray,
                    direct: bool) -> JointStructure:
    """The sparsity structure of K (``JointStructure``: order (m,), row0 (m,), start (R,), ptr (R + 1,), adj_ptr
    (m + 1,), adj_joint, adj_side (k, 2), count (m,), slots (m, 8)), recomputed when the joints, their limits or
    motors (``flags`` (m,)), or the bodies change.

    count[j], slots[j, :count[j]]: joint j's rows in the block, as row slots (constraints/joint_rows.py): its
    equality rows, then its limit rows if it has limits, then its motor row if it has a motor (``block_slots``).

    order: the joints in elimination order (reverse Cuthill–McKee on the graph of joints that share a
    moving body, for ``direct``; the given order for block Gauss–Seidel). row0[j]: joint j's first row in
    that order. start[g]: the first column of row g's envelope (its own joint's first row, or the first row
    of the earliest neighbouring joint); ptr: offsets of the packed rows of L. adj: for each joint, the
    joints before it in the order that share a moving body with it, and which side (0 a, 1 b) that body is
    on in each (one entry per shared body).
    """
    m = kind.shape[0]
    slots = np.zeros((m, ROW_SLOTS), dtype=np.int64)
    rows = np.zeros(m, dtype=np.int64)
    for j in range(m):
        own = block_slots(int(kind[j]), int(flags[j]))
        rows[j] = len(own)
        slots[j, :len(own)] = own
    moving = [[int(i) for i in body[j] if i >= 0 and inv_mass[i] > 0.0] for j in range(m)]
    by_body: dict[int, list[tuple[int, int]]] = {}
    for j in range(m):
        for side in range(2):
            i = int(body[j, side])
            if i >= 0 and inv_mass[i] > 0.0:
                by_body.setdefault(i, []).append((j, side))
    order = np.arange(m, dtype=np.int64)
    if direct and m > 1:
        pairs = [(j1, j2) for members in by_body.values() for (j1, _) in members for (j2, _) in members if j1 != j2]
        if pairs:
            r, c = np.array(pairs).T
            graph = scipy.sparse.csr_matrix((np.ones(len(r)), (r, c)), shape=(m, m))
            order = reverse_cuthill_mckee(graph, symmetric_mode=True).astype(np.int64)
    position = np.empty(m, dtype=np.int64)
    position[order] = np.arange(m)
    row0 = np.zeros(m, dtype=np.int64)
    total = 0
    for j in order:
        row0[j] = total
        total += rows[j]
    adj_ptr = np.zeros(m + 1, dtype=np.int64)
    adj_joint: list[int] = []
    adj_side: list[tuple[int, int]] = []
    start = np.zeros(total, dtype=np.int64)
    for j in range(m):
        first = row0[j]
        if direct:
            for i in moving[j]:
                side = 0 if body[j, 0] == i else 1
                for j2, side2 in by_body[i]:
                    if j2 != j and position[j2] < position[j]:
                        adj_joint.append(j2)
                        adj_side.append((side, side2))
                        first = min(first, row0[j2])
        adj_ptr[j + 1] = len(adj_joint)
        start[row0[j]:row0[j] + rows[j]] = first
    ptr = np.zeros(total + 1, dtype=np.int64)
    ptr[1:] = np.cumsum(np.arange(total) - start + 1)
    return JointStructure(order, row0, start, ptr, adj_ptr, np.array(adj_joint, dtype=np.int64),
                          np.array(adj_side, dtype=np.int64).reshape(-1, 2), rows, slots)


def block_slots(kind: int, flags: int) -> list[int]:
    """The row slots of a joint of ``kind`` with ``flags`` in the block solve: its equality rows, then its
    limit rows (with ``HAS_LIMIT``), then its motor row (with ``HAS_MOTOR``)."""
    own = list(range(int(EQUALITY_ROWS[kind])))
    if flags & HAS_LIMIT:
        first, end = (RPY_ROWS, RPY_ROWS + 3) if kind == BALL else (LIMIT_ROW, LIMIT_ROW + 1)
        own += range(first, end)
    if flags & HAS_MOTOR:
        own.append(MOTOR_ROW)
    return own


@njit(cache=True, forceinline=True, refcount=False)
def _dot3(a, b, j, r, j2, r2):
    return a[j, r, 0] * b[j2, r2, 0] + a[j, r, 1] * b[j2, r2, 1] + a[j, r, 2] * b[j2, r2, 2]


@njit(cache=True, refcount=False)
def joint_inverse_arms(j, body, lin, ang_a, ang_b, inv_inertia_world, inv_ang_a, inv_ang_b):
    """inv_ang_a/b[j] (8, 3) = I⁻¹ ang_a/b of joint j's rows (zero for the world)."""
    for side in range(2):
        i = body[j, side]
        ang = ang_a if side == 0 else ang_b
        out = inv_ang_a if side == 0 else inv_ang_b
        for r in range(lin.shape[1]):
            for c in range(3):
                out[j, r, c] = 0.0 if i < 0 else (inv_inertia_world[i, c, 0] * ang[j, r, 0]
                                                  + inv_inertia_world[i, c, 1] * ang[j, r, 1]
                                                  + inv_inertia_world[i, c, 2] * ang[j, r, 2])


@njit(cache=True, forceinline=True, refcount=False)
def _body_mass(i, inv_mass):
    return 0.0 if i < 0 else inv_mass[i]


@njit(cache=True, refcount=False)
def assemble_joint(j, joints, block, inv_mass, structure):
    """Joint j's rows of K + Σ (its own block and its blocks with the joints before it in the order) into the
    packed envelope ``block.factor``: the rows of its block (``structure``'s slots) that are ``block.active``
    (m, 8) (the equality rows, an engaged limit, an unsaturated motor); the others, and an idle joint's (broken,
    or LINKED: a loop closure), are identity rows with no coupling (their impulse stays as it is). ``joints``:
    JointData; ``block``: JointBlock."""
    kind, body, flags = joints.kind, joints.body, joints.flags
    sigma, lin, ang_a, ang_b, inv_ang_a, inv_ang_b = (block.sigma, block.lin, block.ang_a, block.ang_b,
                                                      block.inv_ang_a, block.inv_ang_b)
    active, factor = block.active, block.factor
    order, row0, start, ptr, adj_ptr, adj_joint, adj_side, count, slots = structure
    a, b = body[j, 0], body[j, 1]
    ima, imb = _body_mass(a, inv_mass), _body_mass(b, inv_mass)
    idle = flags[j] & IDLE
    equality = EQUALITY_ROWS[kind[j]]
    for r in range(count[j]):
        s = slots[j, r]
        g = row0[j] + r
        base = ptr[g] - start[g]
        for c in range(start[g], g + 1):
            factor[base + c] = 0.0
        if idle or not active[j, s]:
            factor[base + g] = 1.0
            continue
        for r2 in range(r + 1):     # own block, lower triangle
            s2 = slots[j, r2]
            if not active[j, s2]:
                continue
            value = (ima + imb) * _dot3(lin, lin, j, s, j, s2) + _dot3(ang_a, inv_ang_a, j, s, j, s2) \
                + _dot3(ang_b, inv_ang_b, j, s, j, s2)
            if r2 == r:
                value = value * (1.0 + REGULARIZATION) + (sigma[j] if s < equality else 0.0)
            factor[base + row0[j] + r2] = value
        for e in range(adj_ptr[j], adj_ptr[j + 1]):     # blocks with earlier joints through a shared body
            j2 = adj_joint[e]
            if flags[j2] & IDLE:
                continue
            side, side2 = adj_side[e, 0], adj_side[e, 1]
            i = body[j, side]
            sign = (1.0 if side == 0 else -1.0) * (1.0 if side2 == 0 else -1.0)
            ang = ang_a if side == 0 else ang_b
            inv2 = inv_ang_a if side2 == 0 else inv_ang_b
            for r2 in range(count[j2]):
                s2 = slots[j2, r2]
                if active[j2, s2]:
                    factor[base + row0[j2] + r2] += sign * inv_mass[i] * _dot3(lin, lin, j, s, j2, s2) \
                        + _dot3(ang, inv2, j, s, j2, s2)


@njit(cache=True, refcount=False)
def cholesky_rows(factor, start, ptr, g0, g1):
    """Envelope Cholesky of rows g0..g1−1 in place (rows before g0 already factored), row by row:
    L[g, c] = (K[g, c] − Σ_k L[g, k] L[c, k]) / L[c, c]."""
    for g in range(g0, g1):
        sg, bg = start[g], ptr[g] - start[g]
        for c in range(sg, g + 1):
            sc, bc = start[c], ptr[c] - start[c]
            s = factor[bg + c]
            for k in range(max(sg, sc), c):
                s -= factor[bg + k] * factor[bc + k]
            if c < g:
                factor[bg + c] = s / factor[bc + c]
            else:
                factor[bg + g] = np.sqrt(s) if s > 0.0 else 1e150   # a row of no moving body: its λ stays 0


@njit(cache=True, refcount=False)
def _solve(factor, start, ptr, rhs, g0, g1):
    """rhs[g0:g1] ← (L Lᵀ)⁻¹ rhs over rows g0..g1−1 (every row's envelope starts at or after g0)."""
    for g in range(g0, g1):
        bg = ptr[g] - start[g]
        s = rhs[g]
        for k in range(start[g], g):
            s -= factor[bg + k] * rhs[k]
        rhs[g] = s / factor[bg + g]
    for g in range(g1 - 1, g0 - 1, -1):
        bg = ptr[g] - start[g]
        rhs[g] /= factor[bg + g]
        xg = rhs[g]
        for k in range(start[g], g):
            rhs[k] -= factor[bg + k] * xg


@njit(cache=True, forceinline=True, refcount=False)
def _row_velocity(j, r, a, b, lin, ang_a, ang_b, v, w):
    s = 0.0
    for c in range(3):
        if a >= 0:
            s += lin[j, r, c] * v[a, c] + ang_a[j, r, c] * w[a, c]
        if b >= 0:
            s += -lin[j, r, c] * v[b, c] + ang_b[j, r, c] * w[b, c]
    return s


@njit(cache=True, forceinline=True, refcount=False)
def _apply(j, r, a, b, impulse, lin, inv_ang_a, inv_ang_b, inv_mass, v, w):
    """v, ω += M⁻¹ J_rᵀ impulse (module docstring of joint_rows)."""
    if a >= 0:
        for c in range(3):
            v[a, c] += inv_mass[a] * lin[j, r, c] * impulse
            w[a, c] += inv_ang_a[j, r, c] * impulse
    if b >= 0:
        for c in range(3):
            v[b, c] -= inv_mass[b] * lin[j, r, c] * impulse
            w[b, c] += inv_ang_b[j, r, c] * impulse


@njit(cache=True, forceinline=True, refcount=False)
def _asleep(j, body, awake):
    """Whether joint j joins only sleeping or fixed bodies (its island sleeps: it is skipped)."""
    for side in range(2):
        i = body[j, side]
        if i >= 0 and awake[i]:
            return False
    return True


@njit(cache=True, refcount=False)
def joint_warm_start(joints, scratch, inv_mass, awake, v, w):
    """Apply the joints' impulses of the last sub-step (m, 8) along the current rows (joints of sleeping
    islands keep theirs for when they wake). ``joints``: JointData; ``scratch``: JointScratch."""
    body, flags, impulse = joints.body, joints.flags, joints.impulse
    lin, inv_ang_a, inv_ang_b = scratch.lin, scratch.inv_ang_a, scratch.inv_ang_b
    for j in range(joints.kind.shape[0]):
        if flags[j] & IDLE or _asleep(j, body, awake):
            continue
        a, b = body[j, 0], body[j, 1]
        for r in range(lin.shape[1]):
            if impulse[j, r] != 0.0:
                _apply(j, r, a, b, impulse[j, r], lin, inv_ang_a, inv_ang_b, inv_mass, v, w)


@njit(cache=True, forceinline=True, refcount=False)
def _target(j, s, error, motor, h):
    """The velocity a limit or motor row (slot s) asks for [m/s or rad/s]: a motor its target speed; a limit
    −C/h while the coordinate is within its bound (it may reach the bound this sub-step, never pass it), 0
    once at or past it."""
    if s == MOTOR_ROW:
        return motor[j, 0]
    gap = error[j, s]
    return -gap / h if gap > 0.0 else 0.0


@njit(cache=True, forceinline=True, refcount=False)
def _bounds(j, s, motor, h):
    """(lo, hi) of the impulse of a limit or motor row (slot s) over a sub-step of h [s]."""
    if s == MOTOR_ROW:
        return -motor[j, 1] * h, motor[j, 1] * h
    return 0.0, np.inf


@njit(cache=True, forceinline=True, refcount=False)
def _wants_in(j, s, impulse, vel, target, motor, h):
    """Whether an inactive limit or motor row (held at a bound of its impulse) is violated by the velocity
    ``vel`` of its row: a limit closing faster than its target, a saturated motor whose impulse should move
    back inside its bounds."""
    if s == MOTOR_ROW:
        lo, hi = _bounds(j, s, motor, h)
        if hi <= lo:        # a motor of no force
            return False
        if impulse[j, s] >= hi:
            return vel > target + ACTIVATION_TOLERANCE
        if impulse[j, s] <= lo:
            return vel < target - ACTIVATION_TOLERANCE
        return True
    return vel < target - ACTIVATION_TOLERANCE


@njit(cache=True, forceinline=True, refcount=False)
def limit_sign(j, lin, ang_a, ang_b):
    """+1 when hinge or slider j's limit row is its coordinate's row (the lower bound is nearer), −1 when it is
    that row negated (the upper bound: constraints/joint_rows.py)."""
    d = 0.0
    for c in range(3):
        d += lin[j, LIMIT_ROW, c] * lin[j, MOTOR_ROW, c] + ang_a[j, LIMIT_ROW, c] * ang_a[j, MOTOR_ROW, c] \
            + ang_b[j, LIMIT_ROW, c] * ang_b[j, MOTOR_ROW, c]
    return 1.0 if d > 0.0 else -1.0


@njit(cache=True, forceinline=True, refcount=False)
def motor_yields_to_limit(j, joints, block, h):
    """While hinge or slider j's limit row is in the block, hold its motor out of it at the bound that drives
    the coordinate from the velocity the limit asks (σ τ: σ the limit row's sign, τ its target) toward the
    motor's target speed, or into the limit when they agree. Returns the change of the motor's impulse (0
    when nothing changed), which the caller applies to the velocities.

    The two rows are one row up to sign (the coordinate's), so with both in the block K is singular but for
    ``REGULARIZATION``: the solve splits the impulse between them arbitrarily, into opposite impulses of
    order 1e10 times their disagreement. The active set then had to clamp the motor, and a chain whose limits
    entered one after another ran out of ``ACTIVE_SET_PASSES`` first: the last pass clamped the motor and
    applied the limit's 9e6 N·s (a 5-link chain under rk4 went to NaN at t = 0.77 s). Held by this rule, a
    motor reversed on its limit pushes away from it at once; the limit then lets go (its impulse would pull)
    and the motor comes back in as any saturated motor does. ``joints``: JointData; ``block``: JointBlock (its
    active, error, motor, impulse and rows)."""
    active, error, motor, impulse = block.active, block.error, block.motor, block.impulse
    lin, ang_a, ang_b = block.lin, block.ang_a, block.ang_b
    if joints.kind[j] == BALL or not active[j, LIMIT_ROW] or not joints.flags[j] & HAS_MOTOR:
        return 0.0
    sign = limit_sign(j, lin, ang_a, ang_b)
    push = motor[j, 0] - sign * _target(j, LIMIT_ROW, error, motor, h)
    if push == 0.0:
        push = -sign
    lo, hi = _bounds(j, MOTOR_ROW, motor, h)
    held = hi if push > 0.0 else lo
    delta = held - impulse[j, MOTOR_ROW]
    impulse[j, MOTOR_ROW] = held
    active[j, MOTOR_ROW] = 0
    return delta


@njit(cache=True, forceinline=True, refcount=False)
def _unilateral_awake(j, flags, body, awake):
    """Whether joint j is whole, awake, and has a limit or a motor."""
    f = flags[j]
    return not f & IDLE and f & (HAS_LIMIT | HAS_MOTOR) != 0 and not _asleep(j, body, awake)


@njit(cache=True, refcount=False)
def refactor(p0, p1, joints, block, inv_mass, structure):
    """Assemble and factor again the rows of the joints order[p0:p1] (after their ``active`` rows changed):
    with the envelope Cholesky, the rows before them keep their factor."""
    order, row0, start, ptr, adj_ptr, adj_joint, adj_side, count, slots = structure
    for jj in range(p0, p1):
        assemble_joint(order[jj], joints, block, inv_mass, structure)
    last = order[p1 - 1]
    cholesky_rows(block.factor, start, ptr, row0[order[p0]], row0[last] + count[last])


@njit(cache=True, refcount=False)
def _block_pass(p0, p1, joints, block, inv_mass, awake, structure, h, v, w):
    """One solve of the block of the joints order[p0:p1] (all joints for ``direct``, one for ``pgs``) on v, ω,
    in place, with their limits and motors by an active set (module docstring); returns the largest row
    velocity error before it [m/s or rad/s]."""
    kind, body, flags = joints.kind, joints.body, joints.flags
    sigma, bias, error, motor, impulse = block.sigma, block.bias, block.error, block.motor, block.impulse
    lin, ang_a, ang_b, inv_ang_a, inv_ang_b = block.lin, block.ang_a, block.ang_b, block.inv_ang_a, block.inv_ang_b
    active, factor, rhs = block.active, block.factor, block.rhs
    order, row0, start, ptr, adj_ptr, adj_joint, adj_side, count, slots = structure
    last = order[p1 - 1]
    g0, g1 = row0[order[p0]], row0[last] + count[last]
    residual = 0.0
    for attempt in range(ACTIVE_SET_PASSES):
        final = attempt == ACTIVE_SET_PASSES - 1
        single = attempt >= BULK_PASSES
        for jj in range(p0, p1):
            j = order[jj]
            a, b = body[j, 0], body[j, 1]
            skip = flags[j] & IDLE or _asleep(j, body, awake)
            equality = EQUALITY_ROWS[kind[j]]
            for r in range(count[j]):
                g = row0[j] + r
                s = slots[j, r]
                rhs[g] = 0.0
                if skip:
                    continue
                vel = _row_velocity(j, s, a, b, lin, ang_a, ang_b, v, w)
                if s < equality:
                    res = vel + sigma[j] * impulse[j, s] + bias[j, s]
                else:
                    vel += bias[j, s]
                    target = _target(j, s, error, motor, h)
                    if not active[j, s]:
                        if attempt == 0 and _wants_in(j, s, impulse, vel, target, motor, h):
                            residual = max(residual, abs(vel - target))
                        continue
                    res = vel - target
                if attempt == 0:
                    residual = max(residual, abs(res))
                rhs[g] = -res
        _solve(factor, start, ptr, rhs, g0, g1)
        # an engaged limit whose impulse would pull, or a motor past its largest force: held at the bound,
        # out of the block, and solved again
        changed = p1
        for jj in range(p0, p1):
            j = order[jj]
            if not _unilateral_awake(j, flags, body, awake) or (single and changed < p1):
                continue
            a, b = body[j, 0], body[j, 1]
            for r in range(EQUALITY_ROWS[kind[j]], count[j]):
                s = slots[j, r]
                g = row0[j] + r
                if not active[j, s] or (single and changed < p1):
                    continue
                lo, hi = _bounds(j, s, motor, h)
                new = impulse[j, s] + rhs[g]
                if lo <= new <= hi:
                    continue
                held = min(max(new, lo), hi)
                if final:       # out of passes: project this row's impulse, as Gauss–Seidel would
                    rhs[g] = held - impulse[j, s]
                    continue
                _apply(j, s, a, b, held - impulse[j, s], lin, inv_ang_a, inv_ang_b, inv_mass, v, w)
                impulse[j, s] = held
                active[j, s] = 0
                changed = min(changed, jj)
        if changed < p1:
            refactor(changed, p1, joints, block, inv_mass, structure)
            continue
        for jj in range(p0, p1):
            j = order[jj]
            if flags[j] & IDLE or _asleep(j, body, awake):
                continue
            a, b = body[j, 0], body[j, 1]
            for r in range(count[j]):
                s = slots[j, r]
                if active[j, s]:
                    delta = rhs[row0[j] + r]
                    impulse[j, s] += delta
                    _apply(j, s, a, b, delta, lin, inv_ang_a, inv_ang_b, inv_mass, v, w)
        # a limit the velocities now pass, or a saturated motor that should let go: into the block, again
        for jj in range(p0, p1):
            j = order[jj]
            if not _unilateral_awake(j, flags, body, awake) or (single and changed < p1):
                continue
            a, b = body[j, 0], body[j, 1]
            for r in range(EQUALITY_ROWS[kind[j]], count[j]):
                s = slots[j, r]
                if active[j, s] or (single and changed < p1) or (s == MOTOR_ROW and active[j, LIMIT_ROW]):
                    continue
                vel = _row_velocity(j, s, a, b, lin, ang_a, ang_b, v, w) + bias[j, s]
                if _wants_in(j, s, impulse, vel, _target(j, s, error, motor, h), motor, h):
                    active[j, s] = 1
                    changed = min(changed, jj)
            # a motor waits out of the block while its limit holds the coordinate, at the bound the rule asks
            delta = motor_yields_to_limit(j, joints, block, h)
            if delta != 0.0:
                _apply(j, MOTOR_ROW, a, b, delta, lin, inv_ang_a, inv_ang_b, inv_mass, v, w)
                changed = min(changed, jj)
        if changed == p1:
            break
        refactor(changed, p1, joints, block, inv_mass, structure)
    return residual


@njit(cache=True, refcount=False)
def joint_iteration(joints, block, inv_mass, awake, structure, direct, h, v, w):
    """One iteration of the joints' rows on the velocities v, ω (n, 3), in place: the block of every joint's
    equality rows, engaged limits and unsaturated motors, all at once for ``direct``, joint by joint
    otherwise (module docstring). ``block`` (JointBlock): sigma (m,), bias (m, 8) [m/s] added to each row's
    velocity (a soft equality row's b; 0 on the limit and motor rows here, which the ODE integrators'
    acceleration-level solve fills with Ġ u: solvers/joint_accel.py), error (m, 8) (the limit rows' C), motor
    (m, 2) target speed and largest force or torque, impulse (m, 8) accumulated, active (m, 8) the rows in
    the block (changed in place with the factor). Joints of sleeping islands are skipped (their bodies are at
    rest and, joined only to each other, decouple from the rest of K). Returns the largest row velocity error
    before the solve [m/s or rad/s]: of the equality rows, the rows in the block, and the limits and motors
    out of it that the velocities violate."""
    m = joints.kind.shape[0]
    if m == 0:
        return 0.0
    if direct:
        return _block_pass(0, m, joints, block, inv_mass, awake, structure, h, v, w)
    residual = 0.0
    for jj in range(m):
        residual = max(residual, _block_pass(jj, jj + 1, joints, block, inv_mass, awake, structure, h, v, w))
    return residual


@njit(cache=True, refcount=False)
def joint_setup(joints, scratch, block, structure, inv_mass, x, q, inv_inertia_world, h):
    """Rows, I⁻¹ arms, Σ and b of the soft rows (module docstring), the rows in the block and the factor of
    K + Σ at the pose x (n, 3), q (n, 4), for a sub-step of h [s]. ``joints`` (JointData): soft (m, 2)
    compliance and damping, motor (m, 2), impulse (m, 8) the last sub-step's, the warm start, held within its
    bounds. A limit pushing at the end of the last sub-step starts in the block, a motor below its largest
    force too. ``scratch``: JointScratch, written; ``block``: the JointBlock over them (``time_step_block``)."""
    kind, body, soft, motor, impulse = joints.kind, joints.body, joints.soft, joints.motor, joints.impulse
    lin, ang_a, ang_b, inv_ang_a, inv_ang_b = scratch.lin, scratch.ang_a, scratch.ang_b, scratch.inv_ang_a, \
        scratch.inv_ang_b
    error, sigma, bias, active, factor = scratch.error, scratch.sigma, scratch.bias, scratch.active, scratch.factor
    rows = (lin, ang_a, ang_b, error, scratch.coordinate)
    order, row0, start, ptr, adj_ptr, adj_joint, adj_side, count, slots = structure
    for jj in range(kind.shape[0]):
        j = order[jj]
        joint_rows_one(j, joints, x, q, rows)
        joint_inverse_arms(j, body, lin, ang_a, ang_b, inv_inertia_world, inv_ang_a, inv_ang_b)
        c, d = soft[j, 0], soft[j, 1]
        sigma[j] = c / (h * (h + d * c)) if c > 0.0 else 0.0
        equality = EQUALITY_ROWS[kind[j]]
        for r in range(ROW_SLOTS):
            bias[j, r] = error[j, r] / (h + d * c) if c > 0.0 and r < equality else 0.0
        for r in range(count[j]):
            s = slots[j, r]
            if s < equality:
                active[j, s] = 1
                continue
            lo, hi = _bounds(j, s, motor, h)
            impulse[j, s] = min(max(impulse[j, s], lo), hi)
            active[j, s] = 1 if lo < impulse[j, s] < hi else 0
        motor_yields_to_limit(j, joints, block, h)  # warm start
        assemble_joint(j, joints, block, inv_mass, structure)
    cholesky_rows(factor, start, ptr, 0, start.shape[0])


@njit(cache=True, forceinline=True, refcount=False)
def _move(i, dx, dy, dz, tx, ty, tz, x, q):
    """Translate body i by (dx, dy, dz) [m] and turn it by the rotation vector (tx, ty, tz) [rad] (world)."""
    x[i, 0] += dx
    x[i, 1] += dy
    x[i, 2] += dz
    if tx == 0.0 and ty == 0.0 and tz == 0.0:
        return
    dw, ex, ey, ez = exp_map_t(tx, ty, tz, 1.0)
    a, b, c, d = qmul_t(dw, ex, ey, ez, q[i, 0], q[i, 1], q[i, 2], q[i, 3])
    inv = 1.0 / np.sqrt(a * a + b * b + c * c + d * d)
    q[i, 0], q[i, 1], q[i, 2], q[i, 3] = a * inv, b * inv, c * inv, d * inv


@njit(cache=True, refcount=False)
def joint_project(joints, scratch, block, structure, inv_mass, x, q, inv_inertia_world, direct, iterations, steps):
    """The position projection (module docstring): ``iterations`` Newton steps that move the bodies' x, q
    (n, 3), (n, 4) so that the rigid joints' equality rows and the limits past their bounds reach C = 0
    (one block, the limits past their bounds in it): all joints at once by the envelope factor
    (``direct``), or joint by joint, each at the pose its predecessors left (Gauss–Seidel); a pass stops
    early where no rigid row is violated by more than ``POSITION_TOLERANCE``. Velocities are not touched;
    ``inv_inertia_world`` is that of the pose before the projection (the moves are small). The scratch
    arrays are those of ``joint_setup`` (``scratch``; the next sub-step's setup sets ``active`` and the factor
    again; ``block`` the JointBlock over them); ``steps`` = (step_x, step_t) (n, 3) are scratch for each body's
    move.

    A Newton step moves each body once, by the sum over its joints of M⁻¹ J_jᵀ μ_j. Applied joint by joint
    as finite rotations, the terms, which can be large and nearly cancel (a thin rod's inverse inertia about
    its axis is 24000 here), do not commute: a 6-body tree with a limit 0.01 rad past its bound turned a
    0.005 rad step of one body into 0.61 rad, and its joints came 0.5 m apart."""
    kind, body, flags, soft = joints.kind, joints.body, joints.flags, joints.soft
    lin, ang_a, ang_b, inv_ang_a, inv_ang_b = scratch.lin, scratch.ang_a, scratch.ang_b, scratch.inv_ang_a, \
        scratch.inv_ang_b
    error, sigma, active, factor, rhs = scratch.error, scratch.sigma, scratch.active, scratch.factor, scratch.rhs
    rows = (lin, ang_a, ang_b, error, scratch.coordinate)
    step_x, step_t = steps
    order, row0, start, ptr, adj_ptr, adj_joint, adj_side, count, slots = structure
    m = kind.shape[0]
    sigma[:] = 0.0
    for j in range(m):
        for side in range(2):
            i = body[j, side]
            if i >= 0:
                step_x[i, :] = 0.0
                step_t[i, :] = 0.0
    for _ in range(iterations):
        if direct:
            worst = 0.0
            for j in range(m):
                joint_rows_one(j, joints, x, q, rows)
                worst = max(worst, _rigid_violation(j, kind, flags, soft, error))
            if worst <= POSITION_TOLERANCE:
                return
        for jj in range(m):
            j = order[jj]
            if not direct:
                joint_rows_one(j, joints, x, q, rows)
                if _rigid_violation(j, kind, flags, soft, error) <= POSITION_TOLERANCE:
                    continue
            joint_inverse_arms(j, body, lin, ang_a, ang_b, inv_inertia_world, inv_ang_a, inv_ang_b)
            rigid = soft[j, 0] == 0.0 and not flags[j] & IDLE
            equality = EQUALITY_ROWS[kind[j]]
            for r in range(count[j]):
                s = slots[j, r]
                past = s != MOTOR_ROW and s >= equality and error[j, s] < 0.0
                active[j, s] = 1 if s < equality or past else 0
                rhs[row0[j] + r] = -error[j, s] if (rigid and s < equality) or past else 0.0
            assemble_joint(j, joints, block, inv_mass, structure)
            if not direct:
                cholesky_rows(factor, start, ptr, row0[j], row0[j] + count[j])
                _solve(factor, start, ptr, rhs, row0[j], row0[j] + count[j])
                _project_step(j, body, flags, structure, rhs, lin, inv_ang_a, inv_ang_b, inv_mass, step_x, step_t)
                _apply_steps(j, j + 1, body, inv_mass, step_x, step_t, x, q)
        if direct:
            cholesky_rows(factor, start, ptr, 0, start.shape[0])
            _solve(factor, start, ptr, rhs, 0, start.shape[0])
            for j in range(m):
                _project_step(j, body, flags, structure, rhs, lin, inv_ang_a, inv_ang_b, inv_mass, step_x, step_t)
            _apply_steps(0, m, body, inv_mass, step_x, step_t, x, q)


@njit(cache=True, forceinline=True, refcount=False)
def _rigid_violation(j, kind, flags, soft, error):
    """The largest |C| of joint j's rigid equality rows and of its limit past its bound [m or rad]."""
    if flags[j] & IDLE:
        return 0.0
    worst = 0.0
    if soft[j, 0] == 0.0:
        for r in range(EQUALITY_ROWS[kind[j]]):
            worst = max(worst, abs(error[j, r]))
    if flags[j] & HAS_LIMIT:
        first, end = limit_rows(kind[j])
        for r in range(first, end):
            worst = max(worst, -error[j, r])
    return worst


@njit(cache=True, refcount=False)
def _project_step(j, body, flags, structure, rhs, lin, inv_ang_a, inv_ang_b, inv_mass, step_x, step_t):
    """step_x, step_t (n, 3) of joint j's bodies += M⁻¹ J_jᵀ μ_j (μ of its block's rows in rhs): translation
    [m] and rotation vector [rad], world frame."""
    order, row0, start, ptr, adj_ptr, adj_joint, adj_side, count, slots = structure
    if flags[j] & IDLE:
        return
    a, b = body[j, 0], body[j, 1]
    ima, imb = _body_mass(a, inv_mass), _body_mass(b, inv_mass)
    for r in range(count[j]):
        s = slots[j, r]
        mu = rhs[row0[j] + r]
        for c in range(3):
            if a >= 0:
                step_x[a, c] += ima * lin[j, s, c] * mu
                step_t[a, c] += inv_ang_a[j, s, c] * mu
            if b >= 0:
                step_x[b, c] -= imb * lin[j, s, c] * mu
                step_t[b, c] += inv_ang_b[j, s, c] * mu


@njit(cache=True, refcount=False)
def _apply_steps(j0, j1, body, inv_mass, step_x, step_t, x, q):
    """Move the moving bodies of joints j0..j1−1 by their accumulated steps (``_project_step``), each once,
    and clear the steps."""
    for j in range(j0, j1):
        for side in range(2):
            i = body[j, side]
            if i < 0 or inv_mass[i] == 0.0:
                continue
            _move(i, step_x[i, 0], step_x[i, 1], step_x[i, 2], step_t[i, 0], step_t[i, 1], step_t[i, 2], x, q)
            step_x[i, :] = 0.0
            step_t[i, :] = 0.0


@njit(cache=True, refcount=False)
def joint_accumulate(body, lin, ang_a, impulse, frame_a, q, wrench):
    """wrench (m, 6) += the sub-step's impulse on body a: (Σ lin λ, torque about the joint's anchor on a)
    [N·s, N·m·s], world frame (``joint_wrench``); the world's step divides by dt."""
    for j in range(body.shape[0]):
        w = joint_wrench(j, body, lin, ang_a, impulse, frame_a, q)
        for k in range(6):
            wrench[j, k] += w[k]


@njit(cache=True, forceinline=True, refcount=False)
def joint_wrench(j, body, lin, ang_a, impulse, frame_a, q):
    """Joint j's impulse (m, 8) on body a as (Σ lin λ, Σ ang_a λ − r_a × Σ lin λ): the linear impulse [N·s] and
    the angular impulse about the joint's anchor p_a = x_a + r_a [N·m·s] (ang_a λ is about a's COM), world
    frame; frame_a (m, 7) the anchors in a's axes, q (n, 4) the bodies' orientations."""
    f0 = f1 = f2 = t0 = t1 = t2 = 0.0
    for r in range(lin.shape[1]):
        lam = impulse[j, r]
        f0 += lin[j, r, 0] * lam
        f1 += lin[j, r, 1] * lam
        f2 += lin[j, r, 2] * lam
        t0 += ang_a[j, r, 0] * lam
        t1 += ang_a[j, r, 1] * lam
        t2 += ang_a[j, r, 2] * lam
    a = body[j, 0]
    from_com = (0.0, 0.0, 0.0)
    if a >= 0:
        from_com = qrot_t(q[a, 0], q[a, 1], q[a, 2], q[a, 3], frame_a[j, 0], frame_a[j, 1], frame_a[j, 2])
    c0 = from_com[1] * f2 - from_com[2] * f1
    c1 = from_com[2] * f0 - from_com[0] * f2
    c2 = from_com[0] * f1 - from_com[1] * f0
    return f0, f1, f2, t0 - c0, t1 - c1, t2 - c2


@njit(cache=True, refcount=False)
def joint_shake(joints, scratch, structure, bodies, state, direct, h, iterations, scheme):
    """SHAKE (Ryckaert, Ciccotti & Berendsen 1977; with the velocity solve at the next pose, RATTLE, Andersen
    1983): after the velocity solve, impulses ν along the rows J of the sub-step's start pose so that the pose
    the position stage will reach satisfies the rigid equality rows, K ν = −(C(x + h v, exp(h ω) q) − C₀) / h,
    ``iterations`` Newton steps with K's factor from ``joint_setup``; C₀ is the gap C(x, q) the sub-step
    started with (``error`` (m, 8) from ``joint_setup``) where it exceeds ``SHAKE_GAP``, else 0. All impulses
    then act along J at one
    pose where the anchors coincide, so they conserve linear and angular momentum exactly (Baraff II (8-12)),
    and RATTLE's symplectic structure bounds the energy error instead of letting it drift; the position
    projection (``joint_project``) is left with the rounding of the prediction. v, w (n, 3) change in place;
    the pose is predicted by the position stage itself (``scheme``, the integrator's code, with the bodies'
    principal axes and moments: ``bodies``, BodyModel) on the scratch predict_* arrays (n, 3), (n, 4), (n, 3),
    (m, 8, 3), (m, 8), (m,). ``state`` (BodyState): x, q, v, w."""
    kind, body, flags, soft = joints.kind, joints.body, joints.flags, joints.soft
    error, factor, rhs = scratch.error, scratch.factor, scratch.rhs
    predict_lin, predict_error = scratch.predict_lin, scratch.predict_error
    predicted = (predict_lin, predict_lin, predict_lin, predict_error, scratch.predict_coordinate)
    predict_x, predict_q = scratch.predict_x, scratch.predict_q
    inv_mass, v, w = bodies.inv_mass, state.v, state.w
    order, row0, start, ptr, adj_ptr, adj_joint, adj_side, count, slots = structure
    m = kind.shape[0]
    for _ in range(iterations):
        worst = 0.0
        if direct:
            _predict(0, m, order, body, bodies, state, h, scratch, scheme)
        for jj in range(m):
            j = order[jj]
            if not direct:      # Gauss–Seidel: joint j sees the impulses of the joints before it
                _predict(jj, jj + 1, order, body, bodies, state, h, scratch, scheme)
            joint_rows_one(j, joints, predict_x, predict_q, predicted)
            rigid = soft[j, 0] == 0.0 and not flags[j] & IDLE
            equality = EQUALITY_ROWS[kind[j]]
            for r in range(count[j]):       # the limits and motors in the block keep their row velocity
                s = slots[j, r]
                # a gap the sub-step started with: SHAKE closes it when small, the projection when large
                drift = predict_error[j, s] - (error[j, s] if abs(error[j, s]) > SHAKE_GAP else 0.0)
                rhs[row0[j] + r] = -drift / h if rigid and s < equality else 0.0
                if rigid and s < equality:
                    worst = max(worst, abs(drift))
            if not direct:
                _solve(factor, start, ptr, rhs, row0[j], row0[j] + count[j])
                _shake_apply(j, joints, scratch, structure, inv_mass, v, w)
        if direct:
            if worst <= POSITION_TOLERANCE:
                return
            _solve(factor, start, ptr, rhs, 0, start.shape[0])
            for j in range(m):
                _shake_apply(j, joints, scratch, structure, inv_mass, v, w)


@njit(cache=True, forceinline=True, refcount=False)
def _shake_apply(j, joints, scratch, structure, inv_mass, v, w):
    """SHAKE's impulses ν (in ``scratch.rhs``) of joint j's rows in the block, on v, ω and its impulses."""
    body, flags, impulse = joints.body, joints.flags, joints.impulse
    active, rhs, lin, inv_ang_a, inv_ang_b = scratch.active, scratch.rhs, scratch.lin, scratch.inv_ang_a, \
        scratch.inv_ang_b
    order, row0, start, ptr, adj_ptr, adj_joint, adj_side, count, slots = structure
    if flags[j] & IDLE:
        return
    a, b = body[j, 0], body[j, 1]
    for r in range(count[j]):
        s = slots[j, r]
        if active[j, s]:
            nu = rhs[row0[j] + r]
            impulse[j, s] += nu
            _apply(j, s, a, b, nu, lin, inv_ang_a, inv_ang_b, inv_mass, v, w)


@njit(cache=True, refcount=False)
def _predict(j0, j1, order, body, bodies, state, h, scratch, scheme):
    """The pose the position stage would give the moving bodies of joints order[j0:j1] (``body`` (m, 2) the
    joints' bodies) with their velocities now, in scratch.predict_x, predict_q (predict_w: the angular velocity
    it leaves); ``bodies`` (BodyModel) and ``state`` (BodyState) the bodies."""
    inv_mass, principal_q = bodies.inv_mass, bodies.principal_q
    principal_moments, inv_principal_moments = bodies.principal_moments, bodies.inv_principal_moments
    x, q, v, w = state.x, state.q, state.v, state.w
    predict_x, predict_q, predict_w = scratch.predict_x, scratch.predict_q, scratch.predict_w
    for jj in range(j0, j1):
        j = order[jj]
        for side in range(2):
            i = body[j, side]
            if i < 0:
                continue
            for c in range(3):
                predict_x[i, c] = x[i, c]
                predict_w[i, c] = w[i, c]
            for c in range(4):
                predict_q[i, c] = q[i, c]
            if inv_mass[i] > 0.0:
                position_stage_one(i, scheme, principal_q, principal_moments, inv_principal_moments, predict_x,
                                   predict_q, v, predict_w, h)
