"""The link side of a row: a contact whose body is a robot's link acts through the robot's tree (one solve).

A contact row (constraints/contact_rows.py) has two sides. A side that is a free body acts through its six
velocity coordinates with its inverse mass and inertia: J_d = (d, r × d) and M_b⁻¹ J_dᵀ = (d / m, I⁻¹ (r × d))
(Baraff II (8-12), (8-18)). A side that is a link of a robot (robots/, reduced coordinates q, q̇) acts through
the joint velocities of its robot instead: J_d (nv,) is the velocity along d of the contact point moving with
the link (the point Jacobian, nonzero on the link's path to the root: ``point_rows``), and an impulse λ along the
row changes q̇ by M⁻¹ J_dᵀ λ, M the robot's joint-space inertia matrix (CRBA) factored M = Lᵀ D L (Featherstone
Tables 6.2–6.4). The contact's block of the Delassus operator N = Dᵀ M⁻¹ D (seed 004) then holds J M⁻¹ Jᵀ for the
link side beside the body side's term, so the normal row's effective mass and the tangential block K_t hold both
sides, and the warm start, the Gauss–Seidel sweeps with their friction step, the position correction,
restitution and the sub-steps treat the row exactly as a body row: its velocity is J_b v + J q̇ and an impulse
moves v by M_b⁻¹ J_bᵀ λ and q̇ by M⁻¹ Jᵀ λ.

The solve works in the coordinates u = L q̇ (``to_solve_coordinates``, ``to_joint_coordinates``), where both are
sparse: J q̇ = Yᵀ u and M⁻¹ Jᵀ λ = L⁻¹ D⁻¹ Y λ moves u by D⁻¹ Y λ, with Y = L⁻ᵀ Jᵀ nonzero on the link's path to
the root only (Featherstone §6.5: the factor keeps a tree's sparsity). A row stores Y (``LinkArrays.J``) and D⁻¹ Y
(``Z``), both built along the path (``lt_solve``), and J M⁻¹ Jᵀ = Yᵀ D⁻¹ Y. From the end of a sub-step's velocity
stage to the start of its position stage the joint velocities of the joint state, the pseudo-velocities and the
step's start velocities hold u, each converted by the factor of the same pose as the rows.

The body part of a link side is empty: its inverse mass and inertia count as zero in the rows
(``side_inverses``) and its velocity as zero in the sweeps (sequential_impulse ``load_pair``), so that the body
code of a row computes the free body's part alone and the functions here add the link's.

Storage (``LinkArrays``, held by the forest and grown before a step needs more): each contact with a link side
owns three rows (n, t1, t2) of Y and D⁻¹ Y (R, nv), stored on the coordinates [row_lo, row_hi) of the robots
it touches (``slot_row``: the first of them, −1 for a contact between bodies); a pair with torsional or rolling
friction owns three more, the link's angular velocity along n, t1, t2 of its first contact (``pair_row``); the
robots' own one-coordinate rows take the last 3 nv rows, the joint limits within reach and the joints' dry
friction (``tree_rows``: rows ``tree_first`` … counts[1] − 1).

A world without robots passes None for ``links``: every function here then compiles to nothing, or to the body
rows' own code (Numba resolves them per the argument's type), so the body rows are what they were, bit for bit.
"""

from __future__ import annotations

from collections import namedtuple

import numpy as np
from numba import types

from ..jit import njit, overload
from ..robots.dynamics import PRISMATIC, REVOLUTE, jacobian_column, l_solve, l_times, lt_solve

LinkArrays = namedtuple("LinkArrays", ["J", "Z", "row_lo", "row_hi", "slot_row", "pair_row", "body_link",
                                       "link_lo", "link_hi", "qd_start", "qd_pseudo", "zero3", "counts", "row_dof",
                                       "row_kind", "row_bound", "row_target", "row_lam", "row_mass",
                                       "joint_impulse", "qd_before", "u_before"])
"""The link rows of a step (module docstring): J, Z (R, nv); row_lo, row_hi (R,) int the coordinates a row spans;
slot_row (S,) int, pair_row (P,) int the first row of each contact slot and pair (−1: none); body_link (n,) int the
link of each World body (−1: not a link's); link_lo, link_hi (L,) int the coordinates of each link's robot; qd_start
(nv,) [rad/s, m/s] q̇ at the step's start (the rows' approach velocity); qd_pseudo (nv,) the split impulse's pseudo-
velocities; zero3 (3, 3) zeros (a link side's inverse inertia in the body rows); counts (3,) int the end of the
contacts' and pairs' rows (from row 0) and of the tree rows (from ``tree_first``), and the step's first non-finite
joint coordinate (integration/articulation.py ``tree_end``; −1: none); per tree row (``tree_rows``): row_dof (R,)
int its coordinate, row_kind (R,) int (``LOWER_LIMIT``, ``UPPER_LIMIT``, ``DRY_FRICTION``), row_bound (R,) the bound
of a dry friction row's impulse [N m s or N s], row_target (R,) the velocity the row asks for, row_lam (R,) its
accumulated impulse this sub-step, row_mass (R,) 1 / (J M⁻¹ Jᵀ); joint_impulse (2, 3, nv) [N m s or N s] each
coordinate's lower limit, upper limit and dry friction impulse of the last sub-step (the next one's warm start) and
summed over the step's sub-steps (what the joint state keeps: robots/forest.py ``JointState``); qd_before,
u_before (nv,) q̇ and u = L q̇ when the solve's coordinates were entered (``to_solve_coordinates``)."""

LinkRows = namedtuple("LinkRows", ["tree", "link_body", "st", "work", "sc", "M", "rows"])
"""What a step's kernels read of the robots (built in the kernel from the forest's packed buffers:
integration/articulation.py ``link_context``): the forest's ``Tree``, link_body (L,), ``JointState``, ``Work`` and
``Scratch``, M (nv, nv) the joint-space inertia matrix of the sub-step, LTDL-factored, and the ``LinkArrays``."""

LOWER_LIMIT, UPPER_LIMIT, DRY_FRICTION = 0, 1, 2
"""``row_kind`` codes of the tree rows."""

LIMIT_MARGIN = 0.02
"""[rad or m] A joint limit gets its row when the coordinate is within this of it after the sub-step's free motion
(as a contact inside the contact margin does): speculative, an inactive row costs a sweep and no impulse."""


@njit(cache=True, forceinline=True, refcount=False)
def point_rows(tree, work, link, point, normal, t1, t2, sign, J0, J1, J2, angular):
    """J_a (nv,) += sign · d_aᵀ J_v(point) for the directions d = normal, t1, t2 (3-vectors): the generalized rows
    of the velocity of a point moving with ``link`` along them (dynamics.point_jacobian's linear rows), written on
    the link's path to the root only. A coordinate's column of J_v is R s_v + (R s_ω) × r (r from the link's
    origin to the point, world frame), formed once for the three directions. With ``angular`` the rows of the
    link's angular velocity instead, d_aᵀ J_ω with J_ω's column R s_ω (``point`` unused). ``work`` holds the
    kinematics of the current q."""
    k = link
    while k >= 0:
        R = work.R_world[k]
        dx = point[0] - work.p_world[k, 0]
        dy = point[1] - work.p_world[k, 1]
        dz = point[2] - work.p_world[k, 2]
        for j in range(tree.nv_link[k]):
            d = tree.v_start[k] + j
            ax, ay, az, vx, vy, vz = jacobian_column(R, tree.S[d], dx, dy, dz)
            if angular:
                vx, vy, vz = ax, ay, az
            J0[d] += sign * (normal[0] * vx + normal[1] * vy + normal[2] * vz)
            J1[d] += sign * (t1[0] * vx + t1[1] * vy + t1[2] * vz)
            J2[d] += sign * (t2[0] * vx + t2[1] * vy + t2[2] * vz)
        k = tree.parent[k]


@njit(cache=True, forceinline=True, refcount=False)
def row_dot(rows, r, qd):
    """J_r q̇ = Y_rᵀ u: the velocity of row r for the joint velocities in the solve's coordinates u = L q̇ (nv,)
    (module docstring)."""
    s = 0.0
    J = rows.J
    for i in range(rows.row_lo[r], rows.row_hi[r]):
        s += J[r, i] * qd[i]
    return s


@njit(cache=True, forceinline=True, refcount=False)
def row_push(rows, r, impulse, qd):
    """u (nv,) += D⁻¹ Y_r impulse: q̇ += M⁻¹ J_rᵀ impulse in the solve's coordinates u = L q̇ (module docstring)."""
    Z = rows.Z
    for i in range(rows.row_lo[r], rows.row_hi[r]):
        qd[i] += impulse * Z[r, i]


@njit(cache=True, forceinline=True, refcount=False)
def _row_product(rows, r1, r2):
    """J_r1 M⁻¹ J_r2ᵀ = Y_r1ᵀ D⁻¹ Y_r2 (rows of one contact or pair: the same coordinates)."""
    s = 0.0
    for i in range(rows.row_lo[r1], rows.row_hi[r1]):
        s += rows.J[r1, i] * rows.Z[r2, i]
    return s


@njit(cache=True, forceinline=True, refcount=False)
def _solve_row(links, r, lo, hi):
    """Row r's J (on coordinates lo … hi − 1) turned into Y = L⁻ᵀ Jᵀ in place, and Z = D⁻¹ Y (module docstring)."""
    rows, LD = links.rows, links.M
    lt_solve(links.tree.dof_parent, LD, rows.J[r], lo, hi)
    for i in range(lo, hi):
        rows.Z[r, i] = rows.J[r, i] / LD[i, i]


@njit(cache=True, forceinline=True, refcount=False)
def _triple(links, r, a, b, point, directions, angular):
    """Rows r, r + 1, r + 2 along ``directions`` = (n, t1, t2) (3-vectors) of the contact between World bodies a
    and b (A gets +J, B −J) at ``point`` (or of their angular velocities with ``angular``): Y = L⁻ᵀ Jᵀ on their
    robots' coordinates and D⁻¹ Y (module docstring). Returns the link part of the rows' block (K_nn, K_11, K_12,
    K_22)."""
    rows = links.rows
    tree, work = links.tree, links.work
    la, lb = rows.body_link[a], rows.body_link[b]
    lo, hi = 1 << 62, -1
    for link in (la, lb):
        if link >= 0:
            lo = min(lo, rows.link_lo[link])
            # (Y = L⁻ᵀ Jᵀ is nonzero on the path, whose coordinates come before the link's own end)
            hi = max(hi, tree.v_start[link] + tree.nv_link[link])
    normal, t1, t2 = directions
    for rr in range(r, r + 3):
        rows.row_lo[rr] = lo
        rows.row_hi[rr] = hi
        for i in range(lo, hi):
            rows.J[rr, i] = 0.0
    for side in range(2):
        link = la if side == 0 else lb
        if link >= 0:
            point_rows(tree, work, link, point, normal, t1, t2, 1.0 if side == 0 else -1.0, rows.J[r],
                       rows.J[r + 1], rows.J[r + 2], angular)
    for rr in range(r, r + 3):
        _solve_row(links, rr, lo, hi)
    return (_row_product(rows, r, r), _row_product(rows, r + 1, r + 1), _row_product(rows, r + 1, r + 2),
            _row_product(rows, r + 2, r + 2))


def contact_link_block(links, s, a, b, point, directions, fresh):
    """The link part (K_nn, K_11, K_12, K_22) of contact slot s's block of N between bodies a and b at ``point``
    (3,) along ``directions`` = (n, t1, t2), its rows built (``_triple``; ``fresh``: the step's first build, which
    gives the slot its rows; else the slot's rows are rebuilt at the current pose); (0, 0, 0, 0) for a contact
    between bodies. Kernels only."""
    raise NotImplementedError("resolved by Numba inside kernels")


@overload(contact_link_block)
def _contact_link_block(links, s, a, b, point, directions, fresh):
    if isinstance(links, types.NoneType):
        return lambda links, s, a, b, point, directions, fresh: (0.0, 0.0, 0.0, 0.0)

    def impl(links, s, a, b, point, directions, fresh):
        rows = links.rows
        if rows.body_link[a] < 0 and rows.body_link[b] < 0:
            rows.slot_row[s] = -1
            return 0.0, 0.0, 0.0, 0.0
        if fresh:
            rows.slot_row[s] = rows.counts[0]
            rows.counts[0] += 3
        return _triple(links, rows.slot_row[s], a, b, point, directions, False)

    return impl


def pair_link_block(links, k, a, b, directions, fresh):
    """The link part (K_nn, K_11, K_12, K_22) of pair k's torsional and rolling rows (contact_rows
    ``_set_angular_rows``) along ``directions`` = (n, t1, t2), as ``contact_link_block``. Kernels only."""
    raise NotImplementedError("resolved by Numba inside kernels")


@overload(pair_link_block)
def _pair_link_block(links, k, a, b, directions, fresh):
    if isinstance(links, types.NoneType):
        return lambda links, k, a, b, directions, fresh: (0.0, 0.0, 0.0, 0.0)

    def impl(links, k, a, b, directions, fresh):
        rows = links.rows
        if rows.body_link[a] < 0 and rows.body_link[b] < 0:
            rows.pair_row[k] = -1
            return 0.0, 0.0, 0.0, 0.0
        if fresh:
            rows.pair_row[k] = rows.counts[0]
            rows.counts[0] += 3
        return _triple(links, rows.pair_row[k], a, b, directions[0], directions, True)

    return impl


def side_inverses(links, inv_mass, inv_inertia_world, a, b):
    """(1/m_a, 1/m_b, I_a⁻¹, I_b⁻¹) of a contact row's body parts: a link side's are zero (module docstring).
    Kernels only."""
    raise NotImplementedError("resolved by Numba inside kernels")


@overload(side_inverses)
def _side_inverses(links, inv_mass, inv_inertia_world, a, b):
    if isinstance(links, types.NoneType):
        return lambda links, inv_mass, inv_inertia_world, a, b: (inv_mass[a], inv_mass[b], inv_inertia_world[a],
                                                                 inv_inertia_world[b])

    def impl(links, inv_mass, inv_inertia_world, a, b):
        rows = links.rows
        ima, imb, ia, ib = inv_mass[a], inv_mass[b], inv_inertia_world[a], inv_inertia_world[b]
        if rows.body_link[a] >= 0:
            ima, ia = 0.0, rows.zero3
        if rows.body_link[b] >= 0:
            imb, ib = 0.0, rows.zero3
        return ima, imb, ia, ib

    return impl


def with_link_part(links, s, d, value, qd):
    """``value`` (a row's body part of J v [m/s]) plus J q̇ of row d (0: n, 1: t1, 2: t2) of slot s's link side
    for the joint velocities qd (nv,) in the solve's coordinates; ``value`` itself for a contact between bodies,
    and without robots. Kernels only."""
    raise NotImplementedError("resolved by Numba inside kernels")


@overload(with_link_part)
def _with_link_part(links, s, d, value, qd):
    if isinstance(links, types.NoneType):
        return lambda links, s, d, value, qd: value

    def impl(links, s, d, value, qd):
        r = links.rows.slot_row[s]
        return value if r < 0 else value + row_dot(links.rows, r + d, qd)

    return impl


def link_row_push(links, s, d, impulse, qd):
    """qd (nv, the solve's coordinates) += M⁻¹ Jᵀ impulse of row d of slot s's link side (nothing for a contact
    between bodies, and without robots). Kernels only."""
    raise NotImplementedError("resolved by Numba inside kernels")


@overload(link_row_push)
def _link_row_push(links, s, d, impulse, qd):
    if isinstance(links, types.NoneType):
        return lambda links, s, d, impulse, qd: None

    def impl(links, s, d, impulse, qd):
        r = links.rows.slot_row[s]
        if r >= 0:
            row_push(links.rows, r + d, impulse, qd)

    return impl


def link_row_weight(links, s, d):
    """J M⁻¹ Jᵀ of row d of slot s's link side, both sides' robots together (0 for a contact between bodies,
    and without robots). Kernels only."""
    raise NotImplementedError("resolved by Numba inside kernels")


@overload(link_row_weight)
def _link_row_weight(links, s, d):
    if isinstance(links, types.NoneType):
        return lambda links, s, d: 0.0

    def impl(links, s, d):
        r = links.rows.slot_row[s]
        return 0.0 if r < 0 else _row_product(links.rows, r + d, r + d)

    return impl


def with_link_velocity(links, s, d, value, pseudo):
    """``value`` (a row's body part of J v [m/s]) plus J q̇ of row d (0: n, 1: t1, 2: t2) of slot s's link side,
    q̇ the robots' joint velocities, or with ``pseudo`` their split-impulse pseudo-velocities. Kernels only."""
    raise NotImplementedError("resolved by Numba inside kernels")


@overload(with_link_velocity)
def _with_link_velocity(links, s, d, value, pseudo):
    if isinstance(links, types.NoneType):
        return lambda links, s, d, value, pseudo: value

    def impl(links, s, d, value, pseudo):
        return with_link_part(links, s, d, value, links.rows.qd_pseudo if pseudo else links.st.qd)

    return impl


def link_push(links, s, d, impulse, pseudo):
    """q̇ (or with ``pseudo`` the pseudo-velocities) += M⁻¹ Jᵀ impulse of row d of slot s's link side (nothing for
    a contact between bodies). Kernels only."""
    raise NotImplementedError("resolved by Numba inside kernels")


@overload(link_push)
def _link_push(links, s, d, impulse, pseudo):
    if isinstance(links, types.NoneType):
        return lambda links, s, d, impulse, pseudo: None

    def impl(links, s, d, impulse, pseudo):
        link_row_push(links, s, d, impulse, links.rows.qd_pseudo if pseudo else links.st.qd)

    return impl


def add_link_weights(links, a, b, s, width, sums):
    """sums[first coordinate of a robot] += J M⁻¹ Jᵀ of slot s's ``width`` rows (n; n, t1, t2), for each of the
    robots of bodies a and b that is a link's: per robot, the Σ_r ‖A_r‖² of solvers/velocity_solve.py ``_setup``'s
    bound on λ_max(N) (a row across two robots counts whole in both: the bound stays above). Kernels only."""
    raise NotImplementedError("resolved by Numba inside kernels")


@overload(add_link_weights)
def _add_link_weights(links, a, b, s, width, sums):
    if isinstance(links, types.NoneType):
        return lambda links, a, b, s, width, sums: None

    def impl(links, a, b, s, width, sums):
        rows = links.rows
        r = rows.slot_row[s]
        if r < 0:
            return
        weight = 0.0
        for d in range(width):
            weight += _row_product(rows, r + d, r + d)
        for body in (a, b):
            link = rows.body_link[body]
            if link >= 0:
                sums[rows.link_lo[link]] += weight

    return impl


def body_part_masses(links, inv_mass):
    """The bodies' inverse masses (n,) as a row's body part sees them: a link's World body counts as zero
    (``side_inverses``); without robots ``inv_mass`` itself. Kernels only."""
    raise NotImplementedError("resolved by Numba inside kernels")


@overload(body_part_masses)
def _body_part_masses(links, inv_mass):
    if isinstance(links, types.NoneType):
        return lambda links, inv_mass: inv_mass

    def impl(links, inv_mass):
        out = inv_mass.copy()
        for b in range(out.shape[0]):
            if links.rows.body_link[b] >= 0:
                out[b] = 0.0
        return out

    return impl


def with_link_spin(links, k, d, value):
    """``value`` plus J q̇ of pair k's angular row d (0: torsion along n, 1, 2: rolling along t1, t2). Kernels
    only."""
    raise NotImplementedError("resolved by Numba inside kernels")


@overload(with_link_spin)
def _with_link_spin(links, k, d, value):
    if isinstance(links, types.NoneType):
        return lambda links, k, d, value: value

    def impl(links, k, d, value):
        r = links.rows.pair_row[k]
        return value if r < 0 else value + row_dot(links.rows, r + d, links.st.qd)

    return impl


def link_twist(links, k, d, impulse):
    """q̇ += M⁻¹ Jᵀ impulse of pair k's angular row d. Kernels only."""
    raise NotImplementedError("resolved by Numba inside kernels")


@overload(link_twist)
def _link_twist(links, k, d, impulse):
    if isinstance(links, types.NoneType):
        return lambda links, k, d, impulse: None

    def impl(links, k, d, impulse):
        r = links.rows.pair_row[k]
        if r >= 0:
            row_push(links.rows, r + d, impulse, links.st.qd)

    return impl


# ----------------------------------------------------------------------------------------- the robots' own rows
@njit(cache=True, forceinline=True, refcount=False)
def limit_target(gap, h, baumgarte, max_push):
    """The velocity [rad/s or m/s] a limit's unilateral row asks for, at ``gap`` [rad or m] from its bound (> 0:
    inside the range) over a step h [s]: up to the bound within the step, or from beyond it a Baumgarte push of
    at most ``max_push`` (a robot started outside its limits is brought back, not flung). robots/step.py's contact
    stage asks the same."""
    return -gap / h if gap > 0.0 else min(baumgarte * (-gap) / h, max_push)


@njit(cache=True, forceinline=True, refcount=False)
def tree_first(rows):
    """The first of the tree rows: the buffer's last 3 nv rows (two limits and a dry friction row per
    coordinate at most), above every contact's."""
    return rows.J.shape[0] - 3 * rows.qd_start.shape[0]


@njit(cache=True, forceinline=True, refcount=False)
def _coordinate_row(links, r, d, sign):
    """Row r = sign on coordinate d alone (J = ±e_d on d's robot; ``_solve_row``); returns 1 / (J M⁻¹ Jᵀ)."""
    rows = links.rows
    link = links.tree.dof_link[d]
    lo, hi = rows.link_lo[link], d + 1   # (Y on d's path: its coordinates up to d)
    rows.row_lo[r] = lo
    rows.row_hi[r] = hi
    for i in range(lo, hi):
        rows.J[r, i] = 0.0
    rows.J[r, d] = sign
    _solve_row(links, r, lo, hi)
    return 1.0 / _row_product(rows, r, r)


@njit(cache=True, refcount=False)
def tree_rows(links, h, baumgarte, max_push):
    """The robots' one-coordinate rows of the sub-step h [s], after its velocity stage (rows ``tree_first`` …,
    their end in counts[1]), warm-started with the impulses the joint state keeps (``keep_tree_impulses``):

    - a joint limit within ``LIMIT_MARGIN`` after the sub-step's free motion: a unilateral row on the coordinate
      (J = +e_d at the lower bound, −e_d at the upper) that lets it approach the limit up to the gap and pushes it
      back from beyond by a Baumgarte velocity of at most ``max_push`` [rad/s or m/s] (a robot started outside
      its limits is brought back, not flung);
    - a joint's dry friction (URDF ``<dynamics friction>``, MJCF ``frictionloss``): a row holding the coordinate
      still with an impulse of at most friction · h either way (Coulomb friction in the joint).

    Returns whether there is any."""
    rows, tree, st = links.rows, links.tree, links.st
    carried = rows.joint_impulse[0]
    first = tree_first(rows)
    r = first
    capacity = rows.J.shape[0]
    for i in range(tree.parent.shape[0]):
        code = tree.jtype[i]
        if code != REVOLUTE and code != PRISMATIC:
            continue
        d = tree.v_start[i]
        qi = st.q[tree.q_start[i]]
        for side in range(2):
            bound = tree.lower[d] if side == 0 else tree.upper[d]
            if not np.isfinite(bound) or r >= capacity:
                continue
            sign = 1.0 if side == 0 else -1.0
            gap = sign * (qi - bound)
            if gap + h * sign * st.qd[d] >= LIMIT_MARGIN:
                continue
            rows.row_mass[r] = _coordinate_row(links, r, d, sign)
            rows.row_dof[r] = d
            rows.row_kind[r] = LOWER_LIMIT if side == 0 else UPPER_LIMIT
            rows.row_target[r] = limit_target(gap, h, baumgarte, max_push)
            rows.row_lam[r] = carried[side, d]
            r += 1
        if tree.friction[d] > 0.0 and r < capacity:
            rows.row_mass[r] = _coordinate_row(links, r, d, 1.0)
            rows.row_dof[r] = d
            rows.row_kind[r] = DRY_FRICTION
            rows.row_bound[r] = tree.friction[d] * h
            rows.row_target[r] = 0.0
            rows.row_lam[r] = min(max(carried[DRY_FRICTION, d], -rows.row_bound[r]), rows.row_bound[r])
            r += 1
    rows.counts[1] = r
    return r > first


def tree_rows_warm_start(links):
    """qd += M⁻¹ Jᵀ λ of the tree rows' warm-start impulses. Kernels only."""
    raise NotImplementedError("resolved by Numba inside kernels")


@overload(tree_rows_warm_start)
def _tree_rows_warm_start(links):
    if isinstance(links, types.NoneType):
        return lambda links: None

    def impl(links):
        rows = links.rows
        for r in range(tree_first(rows), rows.counts[1]):
            row_push(rows, r, rows.row_lam[r], links.st.qd)

    return impl


def tree_rows_sweep(links, reverse):
    """One Gauss–Seidel pass over the tree rows (``tree_rows``), backwards with ``reverse``; returns the largest
    velocity change [rad/s or m/s] (0 without robots). Kernels only."""
    raise NotImplementedError("resolved by Numba inside kernels")


@overload(tree_rows_sweep)
def _tree_rows_sweep(links, reverse):
    if isinstance(links, types.NoneType):
        return lambda links, reverse: 0.0

    def impl(links, reverse):
        rows = links.rows
        qd = links.st.qd
        first, end = tree_first(rows), rows.counts[1]
        largest = 0.0
        for rr in range(end - first):
            r = end - 1 - rr if reverse else first + rr
            vel = row_dot(rows, r, qd)
            old = rows.row_lam[r]
            if rows.row_kind[r] == DRY_FRICTION:
                bound = rows.row_bound[r]
                new = min(max(old - rows.row_mass[r] * vel, -bound), bound)
            else:
                new = max(old + rows.row_mass[r] * (rows.row_target[r] - vel), 0.0)
            rows.row_lam[r] = new
            row_push(rows, r, new - old, qd)
            largest = max(largest, abs(new - old) / rows.row_mass[r])
        return largest

    return impl


def tree_row_span(links):
    """(first, count) of the sub-step's tree rows (``tree_rows``); (0, 0) without robots. Kernels only."""
    raise NotImplementedError("resolved by Numba inside kernels")


@overload(tree_row_span)
def _tree_row_span(links):
    if isinstance(links, types.NoneType):
        return lambda links: (0, 0)

    def impl(links):
        first = tree_first(links.rows)
        return first, links.rows.counts[1] - first

    return impl


def tree_row_velocity(links, t, qd):
    """J q̇ of tree row ``first + t`` (``tree_row_span``) for the joint velocities qd (nv,) in the solve's
    coordinates. Kernels only."""
    raise NotImplementedError("resolved by Numba inside kernels")


@overload(tree_row_velocity)
def _tree_row_velocity(links, t, qd):
    if isinstance(links, types.NoneType):
        return lambda links, t, qd: 0.0
    return lambda links, t, qd: row_dot(links.rows, tree_first(links.rows) + t, qd)


def tree_row_push(links, t, impulse, qd):
    """qd (nv, the solve's coordinates) += M⁻¹ Jᵀ impulse of tree row ``first + t``. Kernels only."""
    raise NotImplementedError("resolved by Numba inside kernels")


@overload(tree_row_push)
def _tree_row_push(links, t, impulse, qd):
    if isinstance(links, types.NoneType):
        return lambda links, t, impulse, qd: None
    return lambda links, t, impulse, qd: row_push(links.rows, tree_first(links.rows) + t, impulse, qd)


def tree_row_problem(links, t):
    """Tree row ``first + t`` (``tree_row_span``) as a row of the solvers' problem w = N λ + q (solvers/
    velocity_solve.py): (its term of q beside J q̇ [rad/s or m/s], its warm-start impulse, its effective mass
    1 / (J M⁻¹ Jᵀ), the lower and upper bound of its impulse). A limit: w = J q̇ − target ≥ 0 ⊥ λ ∈ [0, ∞); a
    dry friction row: w = J q̇, λ ∈ [−bound, bound]. Kernels only."""
    raise NotImplementedError("resolved by Numba inside kernels")


@overload(tree_row_problem)
def _tree_row_problem(links, t):
    if isinstance(links, types.NoneType):
        return lambda links, t: (0.0, 0.0, 0.0, 0.0, 0.0)   # (no tree rows: never called)

    def impl(links, t):
        rows = links.rows
        r = tree_first(rows) + t
        if rows.row_kind[r] == DRY_FRICTION:
            return 0.0, rows.row_lam[r], rows.row_mass[r], -rows.row_bound[r], rows.row_bound[r]
        return -rows.row_target[r], rows.row_lam[r], rows.row_mass[r], 0.0, np.inf

    return impl


def add_tree_row_weight(links, t, sums):
    """sums[first coordinate of its robot] += J M⁻¹ Jᵀ of tree row ``first + t`` (``add_link_weights``). Kernels
    only."""
    raise NotImplementedError("resolved by Numba inside kernels")


@overload(add_tree_row_weight)
def _add_tree_row_weight(links, t, sums):
    if isinstance(links, types.NoneType):
        return lambda links, t, sums: None

    def impl(links, t, sums):
        rows = links.rows
        r = tree_first(rows) + t
        sums[rows.link_lo[links.tree.dof_link[rows.row_dof[r]]]] += 1.0 / rows.row_mass[r]

    return impl


def keep_tree_row_impulses(links, x, tail):
    """The tree rows' impulses x[tail:] (a solver's solution, ``tree_row_span``'s count of them) into the rows
    (``row_lam``: kept at the sub-step's end by ``keep_tree_impulses``). Kernels only."""
    raise NotImplementedError("resolved by Numba inside kernels")


@overload(keep_tree_row_impulses)
def _keep_tree_row_impulses(links, x, tail):
    if isinstance(links, types.NoneType):
        return lambda links, x, tail: None

    def impl(links, x, tail):
        rows = links.rows
        first = tree_first(rows)
        for t in range(rows.counts[1] - first):
            rows.row_lam[first + t] = x[tail + t]

    return impl


def joint_velocities(links):
    """The robots' joint velocities (nv,) of the joint state (in the solve's coordinates during a solve); an
    empty array without robots. Kernels only."""
    raise NotImplementedError("resolved by Numba inside kernels")


@overload(joint_velocities)
def _joint_velocities(links):
    if isinstance(links, types.NoneType):
        return lambda links: np.zeros(0)
    return lambda links: links.st.qd


@njit(cache=True, refcount=False)
def carry_tree_impulses(links, substeps):
    """At the step's start: the joint state's impulses of the last step (``JointState``: lower_impulse,
    upper_impulse, friction_impulse), a sub-step's share each, warm-start this step's first sub-step; the step's
    sums start at zero."""
    rows, st = links.rows, links.st
    impulse = rows.joint_impulse
    for d in range(st.qd.shape[0]):
        impulse[0, LOWER_LIMIT, d] = st.lower_impulse[d] / substeps
        impulse[0, UPPER_LIMIT, d] = st.upper_impulse[d] / substeps
        impulse[0, DRY_FRICTION, d] = st.friction_impulse[d] / substeps
        for kind in range(3):
            impulse[1, kind, d] = 0.0


@njit(cache=True, refcount=False)
def keep_tree_impulses(links):
    """After a sub-step's solve: the tree rows' impulses carried to the next sub-step (0 for a coordinate without
    a row) and added to the step's sums."""
    impulse = links.rows.joint_impulse
    rows = links.rows
    for d in range(impulse.shape[2]):
        for kind in range(3):
            impulse[0, kind, d] = 0.0
    for r in range(tree_first(rows), rows.counts[1]):
        d, kind = rows.row_dof[r], rows.row_kind[r]
        impulse[0, kind, d] = rows.row_lam[r]
        impulse[1, kind, d] += rows.row_lam[r]


@njit(cache=True, refcount=False)
def store_tree_impulses(links):
    """At the step's end: each coordinate's limit and friction impulses summed over the step into the joint
    state."""
    impulse, st = links.rows.joint_impulse, links.st
    for d in range(st.qd.shape[0]):
        st.lower_impulse[d] = impulse[1, LOWER_LIMIT, d]
        st.upper_impulse[d] = impulse[1, UPPER_LIMIT, d]
        st.friction_impulse[d] = impulse[1, DRY_FRICTION, d]


def to_solve_coordinates(links):
    """The joint velocities q̇ of the joint state into the solve's coordinates u = L q̇, L of the current factor
    (module docstring), q̇ and u kept (``to_joint_coordinates``). Kernels only."""
    raise NotImplementedError("resolved by Numba inside kernels")


@overload(to_solve_coordinates)
def _to_solve_coordinates(links):
    if isinstance(links, types.NoneType):
        return lambda links: None

    def impl(links):
        rows, qd = links.rows, links.st.qd
        nv = qd.shape[0]
        for d in range(nv):
            rows.qd_before[d] = qd[d]
        l_times(links.tree.dof_parent, links.M, qd, 0, nv)
        for d in range(nv):
            rows.u_before[d] = qd[d]

    return impl


def to_joint_coordinates(links):
    """Back from the solve's coordinates: q̇ = q̇_before + L⁻¹ (u − u_before), so that a solve that changed nothing
    gives q̇ back bit for bit (L⁻¹ L q̇ would round it), and the pseudo-velocities q̇_p = L⁻¹ u_p. Kernels only."""
    raise NotImplementedError("resolved by Numba inside kernels")


@overload(to_joint_coordinates)
def _to_joint_coordinates(links):
    if isinstance(links, types.NoneType):
        return lambda links: None

    def impl(links):
        rows, qd = links.rows, links.st.qd
        nv = qd.shape[0]
        parent = links.tree.dof_parent
        for d in range(nv):
            qd[d] -= rows.u_before[d]
        l_solve(parent, links.M, qd, 0, nv)
        for d in range(nv):
            qd[d] += rows.qd_before[d]
        l_solve(parent, links.M, rows.qd_pseudo, 0, nv)

    return impl
