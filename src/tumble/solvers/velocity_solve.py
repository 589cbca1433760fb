"""The velocity solve of one sub-step by the solver the world was given (``World(solver=...)``).

Every solver works on the same contact rows (constraints/contact_rows.py), the same warm start and the same
problem. With v the body velocities on entry (after the velocity stage, holding the warm-start impulses
λ₀), v(λ) = v + M⁻¹ Jᵀ (λ − λ₀) and

    g(λ) = J v(λ) + b + C λ = (N + C) λ + q,   q = J v + b − N λ₀,   N = J M⁻¹ Jᵀ (seed 004),

find λ with the normal rows 0 <= λ_n ⊥ g_n >= 0 and the friction rows by the model (notes 0.10, 0.16):
b is the gap term of a speculative contact or the push of a regularized row, C the compliance of a
regularized (soft or compliant) row (0 for a rigid one). A compliant pair's rows (its material's
``contact_stiffness``) are ``sequential_impulse.compliant_row``'s, in every solver. Rolling and torsional
friction rows are built only in the Gauss–Seidel sweep (PGS): the World refuses them with another solver,
and a compliant pair under the soft correction too (its relax pass holds compliant rows, which only the
sweep does). The soft row of
``sequential_impulse`` (notes 0.11) updates λ ← λ − m_n ms (v_n + b) − is λ; its fixed point is
v_n + b + (is / (m_n ms)) λ = 0, so C = is / (m_n ms) makes every solver solve the regularized problem
the Gauss–Seidel sweep converges to.

- ``PGS``: Gauss–Seidel sweeps over the rows (sequential_impulse.sweep, notes 0.15–0.16); the default;
- ``APGD``: projected.apgd's accelerated projected gradient on the rows, matrix-free (rows.py);
- ``CG``: mprgp.cg_qp's projected conjugate gradients on the normal rows (frictionless only, seed 004);
- ``Lemke``: the dense LCP of the awake contacts (frictionless, or the Anitescu–Stewart pyramid of notes
  0.10) by pivoting.lemke_retried, with and without a regularization (``LEMKE_REGULARIZATION``), for at most
  ``pivoting.MAX_LEMKE_SIZE`` unknowns (World refuses more before the step changes anything).

The solver is a compile-time choice: the settings tuple's type selects the implementation
(``velocity_solve`` is resolved by Numba per type), so the default step compiles none of the others.
Only PGS runs without allocating; the others allocate their vectors (and Lemke its tableau) per solve.
"""

from __future__ import annotations

from collections import namedtuple

import numpy as np
from numba import types

from ..collision.contacts import slot
from ..constraints.link_rows import (
    add_link_weights,
    add_tree_row_weight,
    body_part_masses,
    joint_velocities,
    keep_tree_row_impulses,
    tree_row_problem,
    tree_row_span,
    tree_rows_sweep,
)
from ..jit import njit, overload
from . import sequential_impulse as si
from .lcp_form import ROW_BOUNDED, ROW_FRICTION, ROW_PAIRED, ROW_UNILATERAL, lcp_impulses, lcp_layout, rows_lcp
from .mprgp import _mprgp_kernel
from .pivoting import LEMKE_ACCEPT, MAX_LEMKE_SIZE, lemke_retried
from .projected import _apgd_kernel
from .result import CONVERGED, FAILED, INFEASIBLE, MAX_ITERATIONS
from .rows import ContactRows, RowSet, gather, natural_residual, product, scatter

PGS = namedtuple("PGS", ["iterations", "tolerance"])
APGD = namedtuple("APGD", ["iterations", "tolerance"])
CG = namedtuple("CG", ["iterations", "tolerance"])
Lemke = namedtuple("Lemke", ["iterations", "tolerance"])
"""Settings of each solver: iterations (sweeps, iterations, or Lemke's pivot cap, 0 for max(100, 50 n)) and
tolerance [m/s] (the residual at which an iterative solver stops; Lemke reports it only)."""

LEMKE_REGULARIZATION = 1e-6
"""Lemke's step first adds this fraction of each normal row's diagonal entry of N + C to it (a compliance of
1e-6 of the row's own). It makes the normal impulses unique where N is singular (the four coplanar contacts
of a face can carry a load in many ways). Without it Lemke returns a vertex of the solution set, e.g. a
resting box on two diagonal corners, which changes from step to step: a 5-box stack then rocked with a
velocity growing 7 % a step from rounding (1e-17 to 1e-12 m/s in 0.7 s) until it fell. Measured: with it
the stack rests with a residual of 8e-8 m/s and no body faster than 3e-7 m/s, and a step's velocities
differ from the unregularized LCP's by about 1e-6 of the contacts' velocity change. Regularizing the
friction rows too, or a smaller factor (1e-8, 1e-10), made the pyramid's tableau fail on near-ties of its
k redundant directions; and on a sliding contact the regularized pyramid LCP ends on a ray (a box sliding
down an incline: 478 of 480 steps failed) where the exact one is solved (480 of 480). So the frictionless
LCP is solved regularized first, the pyramid's exactly first, and a refused try is repeated the other way
before the sub-step falls back on Gauss–Seidel (with both tries the incline and the resting 5-stack of
pyramid rows solve every step). Which try succeeds can turn on rounding: the same pyramid LCP solved the
regularized way in plain Python and failed compiled."""

LEMKE_TRIES_FRICTIONLESS = np.array([[LEMKE_REGULARIZATION, 0.0], [0.0, 0.0]])
LEMKE_TRIES_PYRAMID = LEMKE_TRIES_FRICTIONLESS[::-1].copy()
"""``pivoting.lemke_retried``'s tries (relative, absolute diagonal regularization of the normal rows): the
frictionless LCP regularized first, the pyramid's exactly first (LEMKE_REGULARIZATION)."""

FALLBACK_SWEEPS = 20
"""Gauss–Seidel sweeps a sub-step runs instead of applying a failed solve (FAILED)."""



@njit(cache=True, refcount=False)
def _pgs_solve(solver, rows, bias, friction_model, directions, iterations, tolerance, v, w):
    pairs, slots, inv_mass, links = rows
    relax, angular, compliant = bias[7], bias[8], bias[9]
    springs = compliant and not relax   # (a relax pass holds the compliant rows: their impulse is the spring's)
    residual = 0.0
    for it in range(iterations):
        reverse = it % 2 == 1
        # the compliant pairs' normal rows before the others' going forwards, after them backwards: a ground
        # (the first shape) has its pairs first in the buffer, and a stack on a stiff one rests as with the
        # rows in buffer order (in this order always first, a 5-stack on k = 1e8 N/m swayed by 0.1 mm)
        spring_change = si.compliant_sweep(pairs, slots, inv_mass, v, w, bias, False, links) \
            if springs and not reverse else 0.0
        residual = max(spring_change, si.sweep(pairs, slots, inv_mass, v, w, bias, friction_model, directions,
                                               reverse, links))
        if springs and reverse:
            residual = max(residual, si.compliant_sweep(pairs, slots, inv_mass, v, w, bias, True, links))
        if angular:
            si.angular_sweep(pairs, slots, inv_mass, v, w, reverse, links)
        if links is not None and not relax:   # the robots' limit and dry friction rows (constraints/link_rows.py)
            residual = max(residual, tree_rows_sweep(links, reverse))
        if residual <= tolerance:
            return it + 1, residual, CONVERGED
    return iterations, residual, MAX_ITERATIONS


@njit(cache=True)
def _setup(rows, bias, friction_model, directions, width, v, w):
    """The rows as (op, feasible set, x₀, q, largest diagonal of N + C, upper bound of its largest eigenvalue)
    (module docstring). The bound: for A = J M^(−1/2), whose rows have two blocks (a body's, or a robot's
    coordinates), λ_max(AAᵀ) <= 2 max_i Σ_{rows at i} |A_ri|² (Cauchy–Schwarz per row), plus the largest
    compliance. With robots (rows[3], constraints/link_rows.py) the robots' limit and dry friction rows follow the
    contacts' (rows.py ``ContactRows``), and the joint velocities are in the solve's coordinates."""
    pairs, slots, inv_mass, links = rows
    pair_body, pair_contacts, pair_awake, pair_friction = pairs.pair_body, pairs.pair_contacts, pairs.pair_awake, \
        pairs.pair_friction
    normal, tangent, normal_impulse, tangent_impulse = slots.normal, slots.tangent, slots.normal_impulse, \
        slots.tangent_impulse
    ang_a, ang_b, inv_ang_a, inv_ang_b = slots.ang_a, slots.ang_b, slots.inv_ang_a, slots.inv_ang_b
    normal_mass, tangent_k, separation = slots.normal_mass, slots.tangent_k, slots.separation
    h, use_bias, bias_rate, mass_scale, impulse_scale, max_push, touch_band, relax, angular, compliant = bias
    pair_compliance, pair_dissipation = pairs.pair_compliance, pairs.pair_dissipation
    slot_count = normal.shape[0]
    tail = width * slot_count
    _, tail_count = tree_row_span(links)
    size = tail + tail_count
    compliance = np.zeros(slot_count)
    gap_term = np.zeros(size)
    scale = np.zeros(size)
    x0 = np.zeros(size)
    body_masses = body_part_masses(links, inv_mass)
    body_sum = np.zeros(inv_mass.shape[0])
    qd = joint_velocities(links)
    robot_sum = np.zeros(qd.shape[0])   # (per robot, at its first coordinate: link_rows.add_link_weights)
    diag_max = 0.0
    for k in range(pair_contacts.shape[0]):
        if not pair_awake[k]:
            continue
        a, b = pair_body[k, 0], pair_body[k, 1]
        for j in range(pair_contacts[k]):
            s = slot(k, j)
            r = width * s
            if normal_mass[s] == 0.0:   # an inert contact (a robot's, contact_rows._set_link_rows): no row
                continue
            gap = separation[s]
            kn = 1.0 / normal_mass[s]
            if pair_compliance[k] > 0.0:     # a Hunt–Crossley row (si.compliant_row: C = 1 / D)
                gap_term[r], damping = si.compliant_row(pair_compliance[k], pair_dissipation[k], gap,
                                                        normal_mass[s], h)
                compliance[s] = 1.0 / damping
            elif gap > touch_band:
                gap_term[r] = gap / h
            elif use_bias and gap <= 0.0:
                gap_term[r] = max(bias_rate * gap, -max_push)
                compliance[s] = impulse_scale / mass_scale * kn
            scale[r] = normal_mass[s]
            x0[r] = normal_impulse[s]
            diag_max = max(diag_max, kn + compliance[s])
            for d in range(width):
                ka, kb = body_masses[a], body_masses[b]
                for e in range(3):
                    ka += ang_a[s, d, e] * inv_ang_a[s, d, e]
                    kb += ang_b[s, d, e] * inv_ang_b[s, d, e]
                body_sum[a] += ka
                body_sum[b] += kb
            add_link_weights(links, a, b, s, width, robot_sum)
            if width == 3:
                mt = 2.0 / (tangent_k[s, 0] + tangent_k[s, 2])
                scale[r + 1], scale[r + 2] = mt, mt
                x0[r + 1], x0[r + 2] = tangent_impulse[s, 0], tangent_impulse[s, 1]
                diag_max = max(diag_max, tangent_k[s, 0], tangent_k[s, 2])
    tail_lo, tail_hi = np.zeros(tail_count), np.zeros(tail_count)
    for t in range(tail_count):   # the robots' limit and dry friction rows (link_rows.tree_row_problem)
        gap_term[tail + t], x0[tail + t], scale[tail + t], tail_lo[t], tail_hi[t] = tree_row_problem(links, t)
        diag_max = max(diag_max, 1.0 / scale[tail + t])
        add_tree_row_weight(links, t, robot_sum)
    nb = inv_mass.shape[0]
    op = ContactRows(pair_body, pair_contacts, pair_awake, normal, tangent, ang_a, ang_b, inv_ang_a, inv_ang_b,
                     body_masses, compliance, np.zeros((nb, 3)), np.zeros((nb, 3)), width, links,
                     np.zeros(qd.shape[0]), tail)
    feasible = RowSet(pair_contacts, pair_awake, pair_friction, friction_model, directions, scale, width, tail_lo,
                      tail_hi)
    # q = J v + b − N λ₀ (v already holds the warm start λ₀), and N λ₀ = (N + C) λ₀ − C λ₀
    q = np.empty(size)
    gather(op, v, w, qd, q)
    nx0 = product(op, x0)
    for s in range(slot_count):
        r = width * s
        nx0[r] -= compliance[s] * x0[r]
    for i in range(size):
        q[i] += gap_term[i] - nx0[i]
    block_max = np.max(body_sum) if nb > 0 else 0.0
    if robot_sum.shape[0] > 0:
        block_max = max(block_max, np.max(robot_sum))
    upper = 2.0 * block_max + np.max(compliance) if nb > 0 else 0.0
    return op, feasible, x0, q, diag_max, upper


@njit(cache=True)
def _finish(op, x0, x, rows, v, w):
    """Apply the change of impulses x − x₀ to the velocities (Baraff II (8-12)) and store x in the buffer (the
    robots' rows' impulses in theirs)."""
    normal_impulse, tangent_impulse = rows[1].normal_impulse, rows[1].tangent_impulse
    width = op.width
    change = x - x0
    qd = joint_velocities(op.links)
    scatter(op, change, v, w, qd)
    for k in range(op.pair_contacts.shape[0]):
        if op.pair_awake[k]:
            for j in range(op.pair_contacts[k]):
                s = slot(k, j)
                normal_impulse[s] = x[width * s]
                if width == 3:
                    tangent_impulse[s, 0], tangent_impulse[s, 1] = x[width * s + 1], x[width * s + 2]
    keep_tree_row_impulses(op.links, x, op.tail)


@njit(cache=True)
def _conclude(solver, rows, bias, friction, tolerance, v, w, problem, x, done, code):
    """Apply an iterative solve's x (kernel code CONVERGED, MAX_ITERATIONS, or a failure), or fall back on
    Gauss–Seidel sweeps when it failed or left a non-finite residual. ``friction`` = (friction_model,
    directions); ``problem`` = (op, feasible, x0, q) from ``_setup``."""
    friction_model, directions = friction
    op, feasible, x0, q = problem
    residual = natural_residual(feasible, x, product(op, x) + q)
    if code >= INFEASIBLE or not np.isfinite(residual):
        _, residual, _ = _pgs_solve(solver, rows, bias, friction_model, directions, FALLBACK_SWEEPS, tolerance, v, w)
        return done, residual, FAILED
    _finish(op, x0, x, rows, v, w)
    return done, residual, CONVERGED if code == CONVERGED else MAX_ITERATIONS


@njit(cache=True)
def _apgd_solve(solver, rows, bias, friction_model, directions, iterations, tolerance, v, w):
    width = 1 if friction_model == si.FRICTION_NONE else 3
    op, feasible, x0, q, diag_max, upper = _setup(rows, bias, friction_model, directions, width, v, w)
    if diag_max == 0.0:
        return 0, 0.0, CONVERGED
    x = x0.copy()
    # L starts at the largest diagonal entry (<= λ_max) and the backtracking doubles it as needed
    done, code, _ = _apgd_kernel(op, q, feasible, x, iterations, tolerance, diag_max, upper)
    return _conclude(solver, rows, bias, (friction_model, directions), tolerance, v, w, (op, feasible, x0, q), x,
                     done, code)


@njit(cache=True)
def _cg_solve(solver, rows, bias, friction_model, directions, iterations, tolerance, v, w):
    op, feasible, x0, q, diag_max, upper = _setup(rows, bias, si.FRICTION_NONE, directions, 1, v, w)
    if diag_max == 0.0:
        return 0, 0.0, CONVERGED
    x = x0.copy()
    done, code = _mprgp_kernel(op, q, feasible, x, iterations, tolerance, 1.9 / upper, upper)
    return _conclude(solver, rows, bias, (friction_model, directions), tolerance, v, w, (op, feasible, x0, q), x,
                     done, code)


@njit(cache=True)
def lemke_size(pair_contacts, pair_awake, friction_model, directions):
    """Unknowns of the step's LCP: one per awake contact without friction; 1 + k + 1 per contact with the
    Anitescu–Stewart pyramid of k directions (λ_n, β, γ)."""
    count = 0
    for k in range(pair_contacts.shape[0]):
        if pair_awake[k]:
            count += pair_contacts[k]
    return count * (directions + 2) if friction_model == si.FRICTION_PYRAMID else count


@njit(cache=True)
def _lemke_solve(solver, rows, bias, friction_model, directions, iterations, tolerance, v, w):
    """The LCP of contact_problem.py (frictionless: (N_nn, b_n); pyramid: ``ContactProblem.pyramid_lcp``'s
    layout) assembled densely from the operator's columns, solved by Lemke's method; with robots their limits as
    unilateral rows and their dry friction as bounded ones (solvers/lcp_form.py)."""
    pairs = rows[0]
    pair_contacts, pair_awake, pair_friction = pairs.pair_contacts, pairs.pair_awake, pairs.pair_friction
    pyramid = friction_model == si.FRICTION_PYRAMID
    width = 3 if pyramid else 1
    kdir = directions if pyramid else 0
    op, feasible, x0, q, diag_max, upper = _setup(rows, bias, friction_model, directions, width, v, w)
    contacts = 0
    for k in range(pair_contacts.shape[0]):
        if pair_awake[k]:
            for j in range(pair_contacts[k]):
                contacts += rows[1].normal_mass[slot(k, j)] != 0.0
    tail_count = x0.shape[0] - op.tail
    n = contacts * width + tail_count
    if n == 0:
        return 0, 0.0, CONVERGED
    # the LCP's rows: the awake contacts' (normal, t1, t2) or normals, then the robots' rows (x[op.tail:])
    index = np.empty(n, dtype=np.int64)
    kind = np.full(n, ROW_UNILATERAL)
    mu = np.zeros(n)
    c = 0
    for k in range(pair_contacts.shape[0]):
        if pair_awake[k]:
            for j in range(pair_contacts[k]):
                if rows[1].normal_mass[slot(k, j)] == 0.0:   # (an inert contact: no row, ``_setup``)
                    continue
                for d in range(width):
                    index[c] = width * slot(k, j) + d
                    c += 1
                if pyramid:
                    kind[c - 2], kind[c - 1] = ROW_FRICTION, ROW_PAIRED
                    mu[c - 2] = pair_friction[k]
    for t in range(tail_count):
        index[c] = op.tail + t
        if feasible.tail_lo[t] < 0.0:   # a dry friction row, |λ| <= its bound
            kind[c], mu[c] = ROW_BOUNDED, feasible.tail_hi[t]
        c += 1
    unilateral, _, _, size = lcp_layout(kind, kdir)
    if size > MAX_LEMKE_SIZE:   # World checked before the islands pass; a wake can still add contacts
        _, residual, _ = _pgs_solve(solver, rows, bias, friction_model, directions, FALLBACK_SWEEPS, tolerance, v, w)
        return 0, residual, FAILED
    # N + C on the LCP's rows, one operator column at a time
    nf = np.empty((n, n))
    unit = np.zeros(x0.shape[0])
    for col in range(n):
        unit[index[col]] = 1.0
        column = product(op, unit)
        unit[index[col]] = 0.0
        for row in range(n):
            nf[row, col] = column[index[row]]
    qrows = np.empty(n)
    for row in range(n):
        qrows[row] = q[index[row]]
    M, qq = rows_lcp(nf, qrows, kind, mu, kdir)
    scale_lcp = max(np.max(np.abs(M)), np.max(np.abs(qq)))
    if scale_lcp == 0.0:
        return 0, 0.0, CONVERGED
    # the pivot cap is Lemke's own setting: a relax pass's sweep count means one exact solve here
    cap = solver.iterations if solver.iterations > 0 else max(100, 50 * size)
    M /= scale_lcp
    qq /= scale_lcp
    # λ_n's own entries M[p, p] take the normal rows' compliance (LEMKE_REGULARIZATION) on one of two tries
    tries = LEMKE_TRIES_PYRAMID if pyramid else LEMKE_TRIES_FRICTIONLESS
    sol, _, pivots, code = lemke_retried(M, qq, unilateral, tries, cap, LEMKE_ACCEPT, False)
    if code != CONVERGED:   # both tries refused: Gauss–Seidel sweeps, so the bodies still meet their contacts
        _, residual, _ = _pgs_solve(solver, rows, bias, friction_model, directions, FALLBACK_SWEEPS, tolerance, v, w)
        return pivots, residual, FAILED
    x = x0.copy()
    impulses = np.empty(n)
    lcp_impulses(sol, kind, kdir, impulses)
    for row in range(n):
        x[index[row]] = impulses[row]
    residual = natural_residual(feasible, x, product(op, x) + q)
    _finish(op, x0, x, rows, v, w)
    return pivots, residual, CONVERGED


def velocity_solve(solver, rows, bias, friction_model, directions, iterations, tolerance, v, w):
    """Solve the sub-step's rows by ``solver`` (PGS, APGD, CG or Lemke settings), changing the impulses in the
    buffer and the velocities v, w (n, 3) in place; v, w hold the warm start on entry. ``rows``: the buffer
    (ContactPairs, ContactSlots), the bodies' inverse masses and the robots' rows (constraints/link_rows.py
    ``LinkRows``, None without robots: rows.py ``ContactRows``), as (pairs, slots, inv_mass, links); ``bias``: (h [s],
    use_bias, soft β_s [1/s], ms, is, max push [m/s], touch band [m], relax (a rigid relax pass: compliant rows
    held), angular, compliant (some pair has angular rows, compliant rows)). Returns (iterations, residual [m/s],
    a result.py status code). Callable from kernels only."""
    raise NotImplementedError("velocity_solve is resolved by Numba inside kernels")


_KERNELS = {PGS: _pgs_solve, APGD: _apgd_solve, CG: _cg_solve, Lemke: _lemke_solve}


@overload(velocity_solve)
def _velocity_solve_impl(solver, rows, bias, friction_model, directions, iterations, tolerance, v, w):
    kernel = _KERNELS.get(solver.instance_class) if isinstance(solver, types.BaseNamedTuple) else None
    if kernel is None:
        return None

    def impl(solver, rows, bias, friction_model, directions, iterations, tolerance, v, w):
        return kernel(solver, rows, bias, friction_model, directions, iterations, tolerance, v, w)

    return impl


def sweeps_singly(solver):
    """Whether ``solver`` runs as separate sweeps that other rows may be interleaved with (PGS). Kernels only."""
    raise NotImplementedError("sweeps_singly is resolved by Numba inside kernels")


@overload(sweeps_singly)
def _sweeps_singly_impl(solver):
    singly = isinstance(solver, types.BaseNamedTuple) and solver.instance_class is PGS

    def impl(solver):
        return singly

    return impl
