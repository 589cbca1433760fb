"""The step's contact rows as a matrix-free operator and a feasible set, so that the library's solvers run on
them inside the step's kernel (ArtiSynth notes 0.10, 0.15–0.16; seed 004).

``projected.apgd`` and ``mprgp.cg_qp`` are written against three primitives that Numba resolves at compile
time by the type of their first argument:

- ``product(op, x)``: op x. A dense (n, n) matrix, or a ``ContactRows``: (N + C) x with N = J M⁻¹ Jᵀ applied
  as a scatter of the impulses x into body velocity changes M⁻¹ Jᵀ x (Baraff II (8-12)) and a gather J (·)
  (seed 004: N = Dᵀ M⁻¹ D is never formed), plus the compliance C of regularized rows;
- ``project(feasible, z)``: z onto the feasible set in place. A (lo, hi) box, a ``RowList`` (the link contact
  stage's rows, robots/contact_solve.py: contacts' triples, then single rows in boxes), or a ``RowSet``: per contact,
  λ_n ≥ 0, then the friction impulse onto the model's set of radius μ λ_n (the disc, the Anitescu–Stewart
  polygon, the box |λ_t,i| ≤ μ λ_n) or zero. The friction set depends on λ_n, so this is the projection
  of notes 0.16's Gauss–Seidel (friction bounded by the current normal impulse), whose fixed points are
  the Coulomb solutions the default solver finds; it is not the convex cone of Anitescu's relaxation;
- ``natural_residual(feasible, x, w)``: ‖x − P(x − w)‖∞ for a box (result.natural_map_norm); for rows the
  same map with each row's w scaled by its effective mass m and the change divided by it again,
  max_r |x_r − P(x − m w)_r| / m_r [m/s]: the largest change of a relative velocity that a projected
  Jacobi step would make, comparable with the Gauss–Seidel sweep's residual. A contact's two friction rows
  share one mass, 2 / (K_11 + K_22), so the scaled map has the same fixed points as the unscaled one.

Row layout: row r = width · s + d of slot s (``MAX_CONTACTS`` · pair + contact) and direction d (0 the
normal, 1 and 2 the tangents t1, t2); width is 1 (normal rows only: frictionless) or 3. Rows of asleep pairs
and empty slots are inactive: the operator and the set leave them at zero.
"""

from __future__ import annotations

from collections import namedtuple

import numpy as np
from numba import types

from ..collision.contacts import slot
from ..constraints.link_rows import link_row_push, tree_row_push, tree_row_span, tree_row_velocity, with_link_part
from ..jit import njit, overload
from .result import natural_map_norm
from .sequential_impulse import FRICTION_BOX, FRICTION_CONE, FRICTION_PYRAMID, _jv, friction_polygon, load_pair

ContactRows = namedtuple("ContactRows", ["pair_body", "pair_contacts", "pair_awake", "normal", "tangent", "ang_a",
                                         "ang_b", "inv_ang_a", "inv_ang_b", "inv_mass", "compliance", "dv", "dw",
                                         "width", "links", "dq", "tail"])
"""The operator N + C on the rows (module docstring). Contact buffer arrays (``contact_buffer.SLOT_FIELDS``:
normal (S, 3), tangent (S, 2, 3), ang_*/inv_ang_* (S, 3, 3)), body inv_mass (n,) (a robot link's World body
zero: its part of a row is the link's, constraints/link_rows.py ``body_part_masses``), compliance (S,) [1/kg]
(the velocity per impulse a regularized normal row adds; 0 for a rigid row), dv, dw (n, 3) scratch, width
1 or 3; links None, or the robots' rows (constraints/link_rows.py ``LinkRows``): a contact's link side acts
through its robot's joint velocities (dq (nv,) scratch of their change, in the solve's coordinates), and the
robots' limit and dry friction rows follow the contacts' at x[tail:] (``link_rows.tree_row_span``; tail =
width · S)."""

RowList = namedtuple("RowList", ["contact_rows", "row_mu", "lo", "hi", "friction_model", "directions", "scale"])
"""The feasible set of a list of rows (the link contact stage's, robots/contact_solve.py): rows 0 … contact_rows − 1
in contacts' triples (normal, t1, t2), each λ_n >= 0 and its friction pair in the model's set of radius
row_mu[t1] λ_n (``friction_onto``); every later row r within [lo[r], hi[r]] (a joint limit, a joint's dry
friction). scale (n,) each row's effective mass [kg] for the residual, as ``RowSet``'s."""

RowSet = namedtuple("RowSet", ["pair_contacts", "pair_awake", "pair_friction", "friction_model", "directions",
                               "scale", "width", "tail_lo", "tail_hi"])
"""The feasible set of the rows (module docstring): friction_model (``sequential_impulse.FRICTION_*``),
directions the pyramid's k, scale (size,) each row's effective mass [kg] for the residual; tail_lo, tail_hi
(T,) the bounds of the robots' rows after the contacts' (``ContactRows.tail``; empty without robots)."""


def _is(tp, cls) -> bool:
    return isinstance(tp, types.BaseNamedTuple) and tp.instance_class is cls


@njit(cache=True)
def scatter(op, x, dv, dw, dq):
    """dv, dw (n, 3) += M⁻¹ Jᵀ x: each active row's impulse x_r along its direction, +on A, −on B; dq (nv,) the
    same for the robots' joint velocities (their rows' part, in the solve's coordinates)."""
    width = op.width
    for k in range(op.pair_contacts.shape[0]):
        if not op.pair_awake[k]:
            continue
        a, b = op.pair_body[k, 0], op.pair_body[k, 1]
        ima, imb = op.inv_mass[a], op.inv_mass[b]
        for j in range(op.pair_contacts[k]):
            s = slot(k, j)
            for d in range(width):
                lam = x[width * s + d]
                if lam == 0.0:
                    continue
                for e in range(3):
                    u = op.normal[s, e] if d == 0 else op.tangent[s, d - 1, e]
                    dv[a, e] += lam * ima * u
                    dv[b, e] -= lam * imb * u
                    dw[a, e] += lam * op.inv_ang_a[s, d, e]
                    dw[b, e] -= lam * op.inv_ang_b[s, d, e]
                link_row_push(op.links, s, d, lam, dq)
    _, count = tree_row_span(op.links)
    for t in range(count):
        tree_row_push(op.links, t, x[op.tail + t], dq)


@njit(cache=True)
def gather(op, v, w, qd, out):
    """out (size,) = J (v, w, q̇) on the active rows (the relative velocities [m/s]); inactive rows 0. qd (nv,)
    the robots' joint velocities in the solve's coordinates (unused without robots)."""
    width = op.width
    out[:] = 0.0
    for k in range(op.pair_contacts.shape[0]):
        if not op.pair_awake[k]:
            continue
        a, b, _, _, st = load_pair(op.links, k, op.pair_body, op.inv_mass, v, w)
        for j in range(op.pair_contacts[k]):
            s = slot(k, j)
            for d in range(width):
                if d == 0:
                    dx, dy, dz = op.normal[s, 0], op.normal[s, 1], op.normal[s, 2]
                else:
                    dx, dy, dz = op.tangent[s, d - 1, 0], op.tangent[s, d - 1, 1], op.tangent[s, d - 1, 2]
                out[width * s + d] = with_link_part(op.links, s, d, _jv(s, d, dx, dy, dz, op.ang_a, op.ang_b, st),
                                                    qd)
    _, count = tree_row_span(op.links)
    for t in range(count):
        out[op.tail + t] = tree_row_velocity(op.links, t, qd)


@njit(cache=True)
def _rows_product(op, x):
    op.dv[:] = 0.0
    op.dw[:] = 0.0
    op.dq[:] = 0.0
    scatter(op, x, op.dv, op.dw, op.dq)
    out = np.empty_like(x)
    gather(op, op.dv, op.dw, op.dq, out)
    width = op.width
    for k in range(op.pair_contacts.shape[0]):
        if op.pair_awake[k]:
            for j in range(op.pair_contacts[k]):
                s = slot(k, j)
                out[width * s] += op.compliance[s] * x[width * s]
    return out


def product(op, x):
    """op x (module docstring); callable from kernels only."""
    raise NotImplementedError("product is resolved by Numba inside kernels")


@overload(product)
def _product_impl(op, x):
    if isinstance(op, types.Array):
        return lambda op, x: op @ x
    if _is(op, ContactRows):
        return lambda op, x: _rows_product(op, x)
    return None


@njit(cache=True, forceinline=True)
def friction_onto(model, t1, t2, limit, directions):
    """(t1, t2) projected onto the friction set of radius ``limit`` = μ λ_n of ``model`` (module docstring): the
    disc, the box |t_i| <= limit, the Anitescu–Stewart polygon of ``directions`` (Euclidean: K_t = I) or zero."""
    if model == FRICTION_CONE:
        norm = np.sqrt(t1 * t1 + t2 * t2)
        if norm > limit:
            f = limit / norm
            t1, t2 = t1 * f, t2 * f
    elif model == FRICTION_BOX:
        t1, t2 = min(max(t1, -limit), limit), min(max(t2, -limit), limit)
    elif model == FRICTION_PYRAMID:   # the nearest point of the polygon (K_t = I: Euclidean)
        t1, t2 = friction_polygon(1.0, 0.0, 1.0, t1, t2, 0.0, 0.0, limit, directions)
    else:
        t1, t2 = 0.0, 0.0
    return t1, t2


@njit(cache=True)
def _project_rows(feasible, z):
    width = feasible.width
    model = feasible.friction_model
    for k in range(feasible.pair_contacts.shape[0]):
        if not feasible.pair_awake[k]:
            continue
        mu = feasible.pair_friction[k]
        for j in range(feasible.pair_contacts[k]):
            r = width * slot(k, j)
            # (scale 0: an inert contact of a robot, velocity_solve._setup; its impulses stay 0)
            lam_n = max(z[r], 0.0) if feasible.scale[r] > 0.0 else 0.0
            z[r] = lam_n
            if width == 3:
                z[r + 1], z[r + 2] = friction_onto(model, z[r + 1], z[r + 2], mu * lam_n, feasible.directions)
    tail = z.shape[0] - feasible.tail_lo.shape[0]
    for t in range(feasible.tail_lo.shape[0]):
        z[tail + t] = min(max(z[tail + t], feasible.tail_lo[t]), feasible.tail_hi[t])


@njit(cache=True)
def _project_list(feasible, z):
    for r in range(0, feasible.contact_rows, 3):
        lam_n = max(z[r], 0.0)
        z[r] = lam_n
        z[r + 1], z[r + 2] = friction_onto(feasible.friction_model, z[r + 1], z[r + 2], feasible.row_mu[r + 1] * lam_n,
                                           feasible.directions)
    for r in range(feasible.contact_rows, z.shape[0]):
        z[r] = min(max(z[r], feasible.lo[r]), feasible.hi[r])


def project(feasible, z):
    """z ← P(z) onto the feasible set, in place (module docstring); callable from kernels only."""
    raise NotImplementedError("project is resolved by Numba inside kernels")


@overload(project)
def _project_impl(feasible, z):
    if isinstance(feasible, types.BaseTuple) and not isinstance(feasible, types.BaseNamedTuple):
        def box(feasible, z):
            lo, hi = feasible
            for i in range(z.shape[0]):
                z[i] = min(max(z[i], lo[i]), hi[i])
        return box
    if _is(feasible, RowSet):
        return lambda feasible, z: _project_rows(feasible, z)
    if _is(feasible, RowList):
        return lambda feasible, z: _project_list(feasible, z)
    return None


@njit(cache=True)
def _rows_residual(feasible, x, w):
    scale = feasible.scale
    z = np.empty_like(x)
    for i in range(x.shape[0]):
        z[i] = x[i] - scale[i] * w[i]
    project(feasible, z)
    out = 0.0
    for i in range(x.shape[0]):
        if scale[i] > 0.0:
            r = abs(x[i] - z[i]) / scale[i]
            if not r <= out:
                out = r if np.isfinite(r) else np.inf
    return out


def natural_residual(feasible, x, w):
    """The natural-map residual of x with w = op x + q (module docstring); callable from kernels only."""
    raise NotImplementedError("natural_residual is resolved by Numba inside kernels")


@overload(natural_residual)
def _natural_residual_impl(feasible, x, w):
    if isinstance(feasible, types.BaseTuple) and not isinstance(feasible, types.BaseNamedTuple):
        def box(feasible, x, w):
            lo, hi = feasible
            return natural_map_norm(x, w, lo, hi)
        return box
    if _is(feasible, RowSet) or _is(feasible, RowList):
        return lambda feasible, x, w: _rows_residual(feasible, x, w)
    return None
