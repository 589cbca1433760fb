"""The joints' equality rows as one dense block, for the event-driven method (methods/event.py).

The event method solves its contacts with dense matrices (J M⁻¹ Jᵀ and Lemke's method, Baraff II 8–9). Its
bodies may also be held by rigid equality joints: then every contact sees the bodies' motion *under the
joints*. With G (r × 6n) the joints' rows at the current state and S = G M⁻¹ Gᵀ, eliminating the joints'
multipliers from the mixed system (ArtiSynth notes 0.7, a mixed LCP turned into an LCP by the Schur
complement of its equality block) replaces M⁻¹ by

    W = M⁻¹ − M⁻¹ Gᵀ S⁻¹ G M⁻¹,

the inverse mass of the jointed system (a contact impulse or force p gives Δu = W Jᵀ p, which keeps G u
unchanged), and adds to the bodies' free accelerations the joints' response to them,
Δa = −M⁻¹ Gᵀ S⁻¹ (G a + Ġ u) (notes 0.5: G u̇ + Ġ u = 0; Ġ u from ``joint_rates``). The joints' force for
any accelerations a the other loads give is Gᵀ λ with λ = −S⁻¹ (G a + Ġ u).

S is kept positive definite for redundant joints (closed loops) by the same relative ``REGULARIZATION`` of
its diagonal as the time-stepping solve's K.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import scipy.linalg

from ..model import body_arrays
from ..solvers.joint_solve import REGULARIZATION
from .joint_rows import BROKEN, EQUALITY_ROWS, joint_rates, joint_rows
from .resting import apply_inverse_mass

if TYPE_CHECKING:
    from ..model.model import Model
    from ..model.state import State


class DenseJoints:
    """The model's joints at the state (x, q, v, w) as the dense block of the module docstring.
    ``inv_inertia`` (n, 3, 3): the bodies' world inverse inertia at that state."""

    def __init__(self, model: Model, state: State, inv_inertia: np.ndarray) -> None:
        a = body_arrays(model, state)
        data, scratch, _, extra = model.joints.ode_args(a["inv_mass"])
        self._impulse = extra.impulse
        kind, body, flags = data.kind, data.body, data.flags
        lin, ang_a, ang_b, error, coordinate = scratch.lin, scratch.ang_a, scratch.ang_b, scratch.error, \
            scratch.coordinate
        rate = extra.rate
        joint_rows(data, a["x"], a["q"], (lin, ang_a, ang_b, error, coordinate))
        joint_rates(data, a["x"], a["q"], a["v"], a["w"], rate)
        n = a["x"].shape[0]
        # the rows (joint, slot) of the unbroken joints, in joint order
        count = EQUALITY_ROWS[kind]
        joint = np.repeat(np.arange(len(kind)), count)
        slot = np.arange(len(joint)) - np.repeat(np.cumsum(count) - count, count)   # 0, 1, … within each joint
        keep = (flags[joint] & BROKEN) == 0
        joint, slot = joint[keep], slot[keep]
        self.joint, self.slot = joint, slot
        r = len(joint)
        G = np.zeros((r, n, 6))
        rows = np.arange(r)
        for side, ang, sign in ((0, ang_a, 1.0), (1, ang_b, -1.0)):
            i = body[joint, side]
            on = i >= 0
            G[rows[on], i[on], :3] += sign * lin[joint[on], slot[on]]
            G[rows[on], i[on], 3:] += ang[joint[on], slot[on]]
        self.G = G.reshape(r, 6 * n)
        self.gamma = rate[joint, slot]                       # Ġ u (r,)
        self._inv_mass, self._inv_inertia = a["inv_mass"], inv_inertia
        self.MinvGt = apply_inverse_mass(a["inv_mass"], inv_inertia, self.G.T)
        S = self.G @ self.MinvGt
        S[rows, rows] *= 1.0 + REGULARIZATION
        S[rows, rows] += (np.diag(S) == 0.0)                 # a row of no moving body: its λ stays 0
        self._factor = scipy.linalg.cho_factor(S) if r else None

    def multipliers(self, du: np.ndarray) -> np.ndarray:
        """λ (r,) that keeps G u̇ + Ġ u = 0 when the other loads give the bodies the accelerations du (n, 6)."""
        if self._factor is None:
            return np.zeros(0)
        return -scipy.linalg.cho_solve(self._factor, self.G @ du.reshape(-1) + self.gamma)

    def response(self, du: np.ndarray) -> np.ndarray:
        """The joints' share of the accelerations (n, 6) that the accelerations ``du`` (n, 6) call for:
        M⁻¹ Gᵀ λ with λ = ``multipliers(du)``."""
        return (self.MinvGt @ self.multipliers(du)).reshape(du.shape) if self._factor is not None else 0.0 * du

    def inverse_mass(self, X: np.ndarray) -> np.ndarray:
        """W X (6n, k) for X (6n, k): the jointed system's inverse mass applied to generalized forces."""
        MinvX = apply_inverse_mass(self._inv_mass, self._inv_inertia, X)
        if self._factor is None:
            return MinvX
        return MinvX - self.MinvGt @ scipy.linalg.cho_solve(self._factor, self.G @ MinvX)

    def loads(self, lam: np.ndarray) -> np.ndarray:
        """Gᵀ λ (n, 6): the joints' forces [N] and torques [N·m about each COM], world frame."""
        return (self.G.T @ lam).reshape(-1, 6)

    def slots(self, lam: np.ndarray, scale: float) -> np.ndarray:
        """scale × λ placed in each joint's row slots (m, 8) (zero elsewhere), in ``JointSet``'s scratch."""
        out = self._impulse
        out[:] = 0.0
        out[self.joint, self.slot] = scale * lam
        return out
