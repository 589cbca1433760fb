"""Inverse kinematics of a robot's link (``Robot.inverse_kinematics``; docs/robots.md "Inverse kinematics").

Damped least squares with Marquardt's adaptive damping (Levenberg–Marquardt) on the world-frame Jacobian,
Buss 2004 §5 ("Introduction to inverse kinematics with Jacobian transpose, pseudoinverse and damped least
squares methods"), Wampler 1986, Nakamura & Hanafusa 1986. For the error e = (log(R_t Rᵀ), p_t − p) (6,)
(angular rows first, as ``Robot.jacobian``; the position rows alone when no orientation is asked) and the
Jacobian J (6, nv) at q, a step solves

    (Jᵀ J + λ 1) Δ = Jᵀ e                          (Buss (11), in its normal-equations form)

over the coordinates that may move, and q ← q ⊕ Δ: angles and slides add Δ, a ball or free joint's
quaternion turns by exp(Δ_ω) in its link frame (the same retraction as the step's ``position_stage``; q̇ ≠ dq
for quaternions). A step is kept if it lowers |e|² (then λ ← λ / 10), else tried again with λ ← 10 λ
(Marquardt 1963). Joint limits by projection with an active set: a coordinate at a limit whose step points
out of it is taken out of the solve (its column dropped) and Δ solved again; what remains is clamped into
the limits. A run that stalls (its best |e|² not halved over ``_WINDOW`` steps, or λ at ``_LAMBDA_MAX``)
restarts from a random q within the limits (seeded: the same call gives the same answer); the best q met is
returned.

One kernel call per try (``_ik_try``): the retraction, the kinematics and the Jacobian of the compiled
kernels of robots/dynamics.py and robots/step.py; the small solve is NumPy's.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from ..jit import njit
from ..math3d import matrix_to_quat, quat_to_matrix
from . import dynamics as dy
from .step import position_stage
from .tree import tree_views

_LAMBDA_MIN = 1e-12
_LAMBDA_MAX = 1e8
_WINDOW = 25
"""Steps between stall checks: a run whose best |e|² has not halved in that many steps restarts."""


@dataclass(frozen=True)
class IKResult:
    """What ``Robot.inverse_kinematics`` found.

    One target: ``q`` (nq,) joint positions (the robot's q layout, within the joint limits); ``ok`` bool, both
    errors within their tolerances; ``position_error`` [m] the distance from the link's point to the target
    position; ``orientation_error`` [rad] the angle of R_target R(q)ᵀ (NaN when no orientation was asked);
    ``iterations`` the steps tried, restarts included. n targets: q (n, nq), ok (n,) bool, the errors (n,)
    float, iterations (n,) int, row i for target i."""

    q: np.ndarray
    ok: Any
    position_error: Any
    orientation_error: Any
    iterations: Any


@njit(cache=True, refcount=False)
def _ik_try(ti, tf, wf, q, dq, link, point, target_p, target_R, q_out, e_out, J_out):
    """q_out (nq,) = q ⊕ dq (``position_stage`` with h = 1; dq (nv,) is scratch, overwritten), then at q_out:
    e_out (6,) = (rotation vector of target_R R_linkᵀ, target_p − p_point) [rad, m] and J_out (6, nv) the
    world-frame Jacobian of the point ``point`` (3,) [m, link frame] on link ``link``."""
    tree, _ = tree_views(ti, tf)
    work = dy.work_views(wf, ti[0])
    for k in range(q.shape[0]):
        q_out[k] = q[k]
    position_stage(tree, q_out, dq, 1.0)
    dy.kinematics(tree, q_out, work)
    R, p = work.R_world[link], work.p_world[link]
    pw = work.vecs[0]                       # the point in world coordinates (the first 3 entries)
    for a in range(3):
        pw[a] = p[a] + R[a, 0] * point[0] + R[a, 1] * point[1] + R[a, 2] * point[2]
        e_out[3 + a] = target_p[a] - pw[a]
    Re = work.R3
    for a in range(3):
        for b in range(3):
            Re[a, b] = target_R[a, 0] * R[b, 0] + target_R[a, 1] * R[b, 1] + target_R[a, 2] * R[b, 2]
    qe = work.tmp6
    matrix_to_quat(Re, qe)
    if qe[0] < 0.0:
        for a in range(4):
            qe[a] = -qe[a]
    s = np.sqrt(qe[1] * qe[1] + qe[2] * qe[2] + qe[3] * qe[3])
    # log of a unit quaternion: θ u with θ = 2 atan2(|v|, w); 2 / w to first order near the identity
    k = 2.0 * np.arctan2(s, qe[0]) / s if s > 1e-12 else 2.0 / qe[0]
    for a in range(3):
        e_out[a] = k * qe[1 + a]
    dy.point_jacobian(tree.parent, tree.v_start, tree.nv_link, tree.S, work.R_world, work.p_world, link, pw, J_out)


class _Problem:
    """What a solve needs of the robot, gathered once per call: its packed tree, a work buffer of its own
    (the robot's cached kinematics stay as they are), the coordinates that may move and the limits."""

    def __init__(self, robot: Any, link: int, point: np.ndarray, floating_base: bool) -> None:
        t = robot._tree
        self.robot = robot
        self.packed = robot._packed
        self.wf = np.zeros(dy.work_size(len(robot.link_names)))
        self.link, self.point = link, point
        self.nq, self.nv = robot.nq, robot.nv
        self.lower, self.upper = t.lower.copy(), t.upper.copy()
        moving = np.zeros(self.nv, dtype=bool)    # coordinates on the path root → link
        k = link
        while k >= 0:
            moving[t.v_start[k]:t.v_start[k] + t.nv_link[k]] = True
            k = t.parent[k]
        self.base = 7 if t.jtype[0] == dy.FLOATING else 0
        if self.base and not floating_base:
            moving[:6] = False
        self.active = np.flatnonzero(moving)
        scalar = [i for i in range(len(t.jtype)) if t.jtype[i] in (dy.REVOLUTE, dy.PRISMATIC)]
        self.scalar_v = np.array([t.v_start[i] for i in scalar], dtype=np.int64)
        self.scalar_q = np.array([t.q_start[i] for i in scalar], dtype=np.int64)
        self.revolute = np.array([t.jtype[i] == dy.REVOLUTE for i in scalar], dtype=bool)
        self.balls = np.array([t.q_start[i] + (3 if t.jtype[i] == dy.FLOATING else 0) for i in range(len(t.jtype))
                               if t.jtype[i] == dy.SPHERICAL or (t.jtype[i] == dy.FLOATING and i > 0)],
                              dtype=np.int64)
        """Where the quaternion of each ball joint (and free joint other than the base) starts in q."""
        q_of_v = np.full(self.nv, -1, dtype=np.int64)
        q_of_v[self.scalar_v] = self.scalar_q
        self.limited = q_of_v[self.active] >= 0
        """Per active coordinate: an angle or a slide (it has a q entry of its own and may have limits)."""
        self.q_of_active = np.where(self.limited, q_of_v[self.active], 0)
        self.floating_base = floating_base

    def clamp(self, q: np.ndarray) -> np.ndarray:
        q = q.copy()
        v = self.scalar_v
        q[self.scalar_q] = np.clip(q[self.scalar_q], self.lower[v], self.upper[v])
        return q

    def random_q(self, q0: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """A restart: angles and slides uniform within their limits (a revolute joint without limits in
        [−π, π]; a slide without limits keeps q0's value), ball joints a uniform random rotation; the base as
        in q0."""
        q = q0.copy()
        lo, hi = self.lower[self.scalar_v], self.upper[self.scalar_v]
        lo = np.where(np.isfinite(lo), lo, np.where(self.revolute, -np.pi, q0[self.scalar_q]))
        hi = np.where(np.isfinite(hi), hi, np.where(self.revolute, np.pi, q0[self.scalar_q]))
        q[self.scalar_q] = rng.uniform(lo, hi)
        for k in self.balls:
            r = rng.normal(size=4)
            q[k:k + 4] = r / np.linalg.norm(r)
        return q

    def solve(self, q0: np.ndarray, target_p: np.ndarray, target_R: np.ndarray | None, tolerance: float,
              angular_tolerance: float, max_iterations: int, damping: float, seed: int) -> tuple:
        """(q, ok, position error, orientation error, iterations) for one target from q0 (within limits)."""
        rows = slice(3, 6) if target_R is None else slice(0, 6)
        R_t = np.eye(3) if target_R is None else target_R
        nv, active, lower, upper = self.nv, self.active, self.lower, self.upper
        sv, sq = self.scalar_v, self.scalar_q
        e, J = np.empty(6), np.empty((6, nv))
        e_try, J_try = np.empty(6), np.empty((6, nv))
        q, q_try, dq = np.empty(self.nq), np.empty(self.nq), np.zeros(nv)
        rng = np.random.default_rng(seed)

        def evaluate(start: np.ndarray, step: np.ndarray, q_out: np.ndarray, e_out: np.ndarray,
                     J_out: np.ndarray) -> float:
            _ik_try(*self.packed, self.wf, start, step, self.link, self.point, target_p, R_t, q_out, e_out, J_out)
            r = e_out[rows]
            return float(r @ r)

        def done(err: np.ndarray) -> bool:
            return bool(np.linalg.norm(err[3:]) <= tolerance
                        and (target_R is None or np.linalg.norm(err[:3]) <= angular_tolerance))

        cost = evaluate(q0, dq, q, e, J)
        best_cost, best_q, best_e = cost, q.copy(), e.copy()
        lam, checkpoint, since = damping, cost, 0
        iterations = 0
        while not done(e) and iterations < max_iterations:
            iterations += 1
            since += 1
            Ja = J[rows][:, active]
            g = Ja.T @ e[rows]
            H = Ja.T @ Ja
            free = np.ones(active.size, dtype=bool)
            qa = q[self.q_of_active]
            at_lower = self.limited & (qa <= lower[active])
            at_upper = self.limited & (qa >= upper[active])
            step = np.zeros(active.size)
            for _ in range(active.size + 1):       # active set: drop what pushes against its limit, solve again
                f = np.flatnonzero(free)
                step[:] = 0.0
                if f.size:
                    Hf = H[np.ix_(f, f)]
                    Hf[np.diag_indices_from(Hf)] += lam
                    step[f] = np.linalg.solve(Hf, g[f])
                out = free & ((at_lower & (step < 0.0)) | (at_upper & (step > 0.0)))
                if not out.any():
                    break
                free &= ~out
            dq[:] = 0.0
            dq[active] = step
            dq[sv] = np.clip(dq[sv], lower[sv] - q[sq], upper[sv] - q[sq])   # into the limits
            cost_try = evaluate(q, dq, q_try, e_try, J_try)
            if cost_try < cost:
                q, q_try, e, e_try, J, J_try = q_try, q, e_try, e, J_try, J
                cost, lam = cost_try, max(lam / 10.0, _LAMBDA_MIN)
                if cost < best_cost:
                    best_cost, best_q, best_e = cost, q.copy(), e.copy()
            else:
                lam *= 10.0
            if lam >= _LAMBDA_MAX or since >= _WINDOW:
                stalled = lam >= _LAMBDA_MAX or not cost < 0.5 * checkpoint
                if stalled:                         # restart from a random q within the limits
                    dq[:] = 0.0
                    cost = evaluate(self.random_q(q0, rng), dq, q, e, J)
                    lam = damping
                    if cost < best_cost:
                        best_cost, best_q, best_e = cost, q.copy(), e.copy()
                checkpoint, since = cost, 0
        if self.base and not self.floating_base:
            best_q[:7] = q0[:7]                     # the base exactly as given (the retraction renormalizes)
        position_error = float(np.linalg.norm(best_e[3:]))
        orientation_error = float("nan") if target_R is None else float(np.linalg.norm(best_e[:3]))
        return best_q, done(best_e), position_error, orientation_error, iterations


def target_rotation(orientation: np.ndarray) -> np.ndarray:
    """(3, 3) of a unit quaternion (w, x, y, z)."""
    R = np.empty((3, 3))
    quat_to_matrix(orientation, R)
    return R
