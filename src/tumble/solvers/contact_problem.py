"""The contact problem of the next step as matrices, for any solver (the library's or the user's).

``contact_problem(world, dt)`` detects the contacts of the current state, as the step would, and returns
the velocity-level problem of one step of ``dt`` (ArtiSynth notes 0.10; seed 004): with v* the body
velocities after every load but the contacts (the step's velocity stage), D the contact Jacobian (one
normal row and two friction rows per contact) and M⁻¹ the inverse mass matrix,

    v⁺ = v* + M⁻¹ Dᵀ λ,   w = D v⁺ + b_gap = N λ + b,   N = D M⁻¹ Dᵀ,   b = D v* + b_gap,

where b_gap is gap / dt on the normal row of a contact whose gap exceeds the slop (a speculative contact:
the bodies may close the gap in this step, not pass it) and 0 otherwise. The normal rows obey
0 ≤ λ_n ⊥ w_n ≥ 0 (seed 004's complementarity 0 ≤ λ ⊥ N λ + r ≥ 0); the friction rows depend on the model:

- frictionless: the LCP (N_nn, b_n) of the normal rows alone (``normal_lcp``);
- box friction: the box-constrained LCP (N, b, lo, hi) with |λ_t,i| ≤ μ λ̂_n for an estimate λ̂_n
  (``box_bounds``);
- the Anitescu–Stewart pyramid of k directions: the LCP of ``pyramid_lcp`` in (λ_n, β, γ);
- the circular cone: no LCP; the rows, μ and the layout are here for a cone-projecting solver.

Nothing the world keeps is changed (fresh detection buffers; the velocity stage runs on copies). This is a
probe, allocating as it goes, not a stage of the step. Rows are in ``Contacts`` order: contact c owns rows
3c (normal, from B toward A), 3c + 1 and 3c + 2 (tangents t1, t2 of ``contact_rows.tangent_basis``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import scipy.sparse as sp

from .. import _checks
from ..collision.detect import Contacts, detect_contacts
from ..constraints.contact_rows import contact_directions
from ..conventions import Integrator
from ..integration import integrate
from ..model import body_arrays

if TYPE_CHECKING:
    from ..world import World

__all__ = ["ContactProblem", "contact_problem"]


@dataclass(frozen=True, eq=False)
class ContactProblem:
    """One step's velocity-level contact problem (module docstring). c contacts, n bodies, r = 3c rows.

    Attributes:
        contacts: the ``Contacts`` the rows belong to (world frame, SI).
        dt: [s] the step.
        D: (r, 6n) sparse contact Jacobian; body i's columns are 6i … 6i+5 = (v, ω) in world axes.
        inv_mass_matrix: (6n, 6n) sparse block-diagonal M⁻¹: (1/m) I₃ and the world inverse inertia
            I⁻¹ = R I_body⁻¹ Rᵀ (Baraff I (2-39)); zero for fixed bodies.
        N: (r, r) dense D M⁻¹ Dᵀ [1/kg]. b: (r,) [m/s] D v* plus the gap term.
        v_free: (6n,) [m/s, rad/s] v* stacked as (v, ω) per body.
        mu: (c,) friction coefficient of each contact (√(μa μb)).
    """

    contacts: Contacts
    dt: float
    D: sp.csr_matrix
    inv_mass_matrix: sp.csr_matrix
    N: np.ndarray
    b: np.ndarray
    v_free: np.ndarray
    mu: np.ndarray

    @property
    def normal_rows(self) -> np.ndarray:
        """(c,) the row index of each contact's normal row."""
        return 3 * np.arange(len(self.contacts))

    def normal_lcp(self) -> tuple[np.ndarray, np.ndarray]:
        """(N_nn (c, c), b_n (c,)): the frictionless LCP w = N_nn λ_n + b_n, 0 ≤ λ_n ⊥ w ≥ 0 (seed 004)."""
        rows = self.normal_rows
        return self.N[np.ix_(rows, rows)], self.b[rows]

    def box_bounds(self, normal_estimate: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(lo, hi) (r,) of box friction (ArtiSynth notes 0.10): λ_n ≥ 0, and |λ_t,i| ≤ μ λ̂_n with
        ``normal_estimate`` λ̂_n (c,) [N s] (e.g. the frictionless solution, or last step's impulses)."""
        estimate = np.asarray(normal_estimate, dtype=float)
        if estimate.shape != (len(self.contacts),):
            raise ValueError(f"normal_estimate must have shape ({len(self.contacts)},), got {estimate.shape}")
        bound = self.mu * np.maximum(estimate, 0.0)
        lo = np.repeat(-bound, 3)
        hi = np.repeat(bound, 3)
        lo[self.normal_rows], hi[self.normal_rows] = 0.0, np.inf
        return lo, hi

    def pyramid_lcp(self, directions: int = 8) -> tuple[np.ndarray, np.ndarray, Callable[[np.ndarray], np.ndarray]]:
        """The Anitescu–Stewart LCP (ArtiSynth notes 0.10) with k = ``directions`` unit directions
        d_j = cos(2πj/k) t1 + sin(2πj/k) t2 per contact: unknowns x = (λ_n (c), β (c k), γ (c)) ≥ 0 with

            w_n = N_nn λ_n + N_nβ β + b_n                 ≥ 0  ⊥ λ_n
            w_β = N_βn λ_n + N_ββ β + E γ + b_β           ≥ 0  ⊥ β     (sliding opposes β's directions)
            w_γ = μ λ_n − Eᵀ β                            ≥ 0  ⊥ γ     (the impulse stays in the pyramid)

        where the β rows are D's friction rows turned into the k directions, E (c k, c) sums each contact's
        β, and γ is the contact's sliding speed (maximal dissipation). The matrix is not symmetric: Lemke's
        method solves it. Returns (M, q, to_impulses), to_impulses(x) giving the impulses λ (r,) on D's rows.
        """
        if isinstance(directions, bool) or not isinstance(directions, (int, np.integer)) or directions < 3:
            raise ValueError(f"directions must be an integer >= 3, got {directions!r}")
        c, k = len(self.contacts), int(directions)
        angle = 2.0 * np.pi * np.arange(k) / k
        # T (r, c + c k): columns of the normal rows, then each contact's k directions in its tangent rows
        i, j = np.repeat(np.arange(c), k), np.tile(np.arange(k), c)
        rows = np.concatenate([3 * np.arange(c), 3 * i + 1, 3 * i + 2])
        cols = np.concatenate([np.arange(c), c + k * i + j, c + k * i + j])
        vals = np.concatenate([np.ones(c), np.cos(angle[j]), np.sin(angle[j])])
        T = sp.csr_matrix((vals, (rows, cols)), shape=(3 * c, c + c * k))
        A = T.T @ self.N @ T
        q_top = T.T @ self.b
        E = sp.kron(sp.identity(c), np.ones((k, 1))).toarray()  # (c k, c)
        size = c + c * k + c
        M = np.zeros((size, size))
        M[: c + c * k, : c + c * k] = A
        M[c: c + c * k, c + c * k:] = E
        M[c + c * k:, :c] = np.diag(self.mu)
        M[c + c * k:, c: c + c * k] = -E.T
        q = np.concatenate([q_top, np.zeros(c)])

        def to_impulses(x: np.ndarray) -> np.ndarray:
            return T @ np.asarray(x, dtype=float)[: c + c * k]

        return M, q, to_impulses

    def velocities(self, impulses: np.ndarray) -> np.ndarray:
        """v⁺ = v* + M⁻¹ Dᵀ λ (6n,) for impulses λ (r,) [N s] on the rows."""
        return self.v_free + self.inv_mass_matrix @ (self.D.T @ np.asarray(impulses, dtype=float))


def contact_problem(world: World, dt: float) -> ContactProblem:
    """The contact problem one step of ``dt`` [s] would solve from the world's current state, as matrices
    (module docstring), with no sub-steps (the step's sub-steps solve the same rows with dt / substeps).
    The world is not changed."""
    dt = _checks.positive("dt", dt)
    contacts = detect_contacts(world.model, world.state)
    a = body_arrays(world.model, world.state)
    n, c = a["x"].shape[0], len(contacts)
    v, w = a["v"].copy(), a["w"].copy()
    inv_inertia = np.empty((n, 3, 3))
    # v* and I⁻¹ as the step's velocity stage makes them (its splitting kick), on copies of the loads.
    st = world.state.bodies()
    copies = st._replace(v=v, w=w, force=st.force.copy(), torque=st.torque.copy(), inv_inertia_world=inv_inertia,
                         awake=np.ones(n, dtype=np.bool_))
    integrate.velocity_stage(int(Integrator.SPLITTING), world.model.bodies(), copies, world.model.gravity, dt, False)
    fixed = a["inv_mass"] == 0.0
    inv_inertia[fixed] = 0.0
    blocks = np.zeros((n, 6, 6))
    blocks[:, :3, :3] = a["inv_mass"][:, None, None] * np.eye(3)
    blocks[:, 3:, 3:] = inv_inertia
    inv_mass_matrix = sp.bsr_matrix((blocks, np.arange(n), np.arange(n + 1)), shape=(6 * n, 6 * n)).tocsr()
    v_free = np.concatenate([v, w], axis=1).reshape(-1)

    # D: per contact, the normal then t1, t2; A gets +(dir, r_A × dir), B −(dir, r_B × dir) (seed 004's D).
    directions = np.empty((c, 3, 3))
    contact_directions(contacts.normal, directions)
    rows = np.broadcast_to(3 * np.arange(c)[:, None, None] + np.arange(3)[None, :, None], (c, 3, 6))
    parts = []
    for body, sign in ((contacts.body_a, 1.0), (contacts.body_b, -1.0)):
        lever = (contacts.point - a["x"][body])[:, None, :]
        block = sign * np.concatenate([directions, np.cross(lever, directions)], axis=2)  # (c, 3, 6)
        cols = np.broadcast_to(6 * body[:, None, None] + np.arange(6), (c, 3, 6))
        keep = ~fixed[body]  # a fixed body's columns stay empty (its M⁻¹ block is zero anyway)
        parts.append((block[keep].ravel(), rows[keep].ravel(), cols[keep].ravel()))
    vals, row_idx, col_idx = (np.concatenate(p) for p in zip(*parts, strict=True))
    D = sp.csr_matrix((vals, (row_idx, col_idx)), shape=(3 * c, 6 * n))
    N = (D @ inv_mass_matrix @ D.T).toarray()
    gap = -contacts.depth
    b = D @ v_free
    b[3 * np.arange(c)] += np.where(gap > world.settings.slop, gap / dt, 0.0)
    mu = np.sqrt(a["friction"][contacts.body_a] * a["friction"][contacts.body_b])
    return ContactProblem(contacts=contacts, dt=dt, D=D, inv_mass_matrix=inv_mass_matrix, N=N, b=b,
                          v_free=v_free, mu=mu)
