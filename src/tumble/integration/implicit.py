"""Implicit integrators for rigid bodies with springs: implicit Euler, trapezoidal and Bridson–Marino steps
(ArtiSynth notes 0.9.2, 0.9.3, 0.9.4), linearized with the springs' Jacobians (``tumble.forces.springs``).

Symbols (per body i, world frame): u_i = (v_i, ω_i) the generalized velocity [m/s, rad/s], linear first;
M = blockdiag(m_i 1, I_i) the mass matrix [kg, kg m²] with I_i = R_i I_body,i R_iᵀ the world inertia;
f(x, u) = (F + m g + spring forces, τ + spring torques − ω × I ω) the generalized load [N, N m], where the
gyroscopic torque −ω × I ω is explicit (it is what makes d(I ω)/dt = τ hold with the world-frame ω);
K = ∂f/∂(δx, δθ) and D = ∂f/∂u the springs' position and velocity Jacobians (world rotation vector δθ,
q ← exp(δθ) q). A position update by a velocity u over h is x ← x + h v, q ← exp(h ω) q.

Linearizing f(x⁺, u⁺) ≈ f + K Δx + D (u⁺ − u) in the standard way gives, per method:

- implicit Euler (0.9.2), u⁺ = u + h M⁻¹ f(x⁺, u⁺), x⁺ = x + h u⁺:
      (M − h D − h² K) u⁺ = M u + h (f − D u),                         then x ← x + h u⁺;
- trapezoidal (0.9.3), u⁺ = u + (h/2) M⁻¹ (f(x, u) + f(x⁺, u⁺)), x⁺ = x + (h/2)(u + u⁺):
      (M − (h/2) D − (h²/4) K) u⁺ = M u + h f − (h/2) D u + (h²/4) K u,   then x ← x + (h/2)(u + u⁺);
- Bridson–Marino (0.9.4; Bridson, Marino & Fedkiw 2003), implicit in velocity only (K is not used):
      (M − (h/2) D) u½ = M u + (h/2)(f(x, u) − D u),   x⁺ = x + h u½,
      (M⁺ − (h/2) D⁺) u⁺ = M⁺ u½ + (h/2)(f(x⁺, u½) − D⁺ u½)   (M⁺, D⁺, f at the new positions).
  Elastic forces are thus stepped explicitly (Störmer–Verlet): the scheme is stable for an undamped
  spring only while h √(k/m) < 2, but for any damping coefficient.

Implicit Euler is unconditionally stable and dissipates energy (by the factor 1/(1 + ω²h²) per step on a
linear oscillator of angular frequency ω); trapezoidal conserves the energy of a linear oscillator and has
a period error of about (ω h)²/12.

Solve: the system is unsymmetric (K of rigid-body loads is, ArtiSynth notes 0.23) and is solved by LU —
when at most ``DENSE_MAX_BODIES`` bodies move, by one kernel (``implicit_dense_step``: dense assembly and
``lu_solve``, partial pivoting) on a ``DenseWorkspace`` kept between steps, so a step allocates nothing;
else SciPy's sparse ``spsolve`` (SuperLU) on a CSC matrix assembled from the 6×6 blocks.

Fixed bodies (``inv_mass`` 0) take no part in the solve and keep x, q, v, w (the World allows them no
velocity). Springs to them act as springs to fixed points.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import scipy.sparse as sp
import scipy.sparse.linalg as spla

from .. import _checks
from ..conventions import FLOAT
from ..forces.springs import (
    CableArrays,
    FrameArrays,
    SpringArrays,
    SpringScratch,
    cable_jacobian_blocks,
    cable_loads,
    frame_jacobian_blocks,
    frame_loads,
    pack_springs,
    scatter_blocks,
    spring_jacobian_blocks,
    spring_loads,
)
from ..jit import njit
from ..math3d import exp_map_t, qmul_t, quat_to_matrix

__all__ = ["DENSE_MAX_BODIES", "METHODS", "implicit_step"]

METHODS = ("implicit_euler", "trapezoidal", "bridson_marino")
"""Names accepted by ``implicit_step``."""

DENSE_MAX_BODIES = 50
"""Moving bodies up to which the (6n)×(6n) system is solved densely: at 50 bodies (300 unknowns) a dense LU
takes a few ms, while sparse assembly and SuperLU have a fixed cost of about 1 ms; beyond it the dense cost
grows as n³ while spring systems stay sparse."""


@njit(cache=True, refcount=False)
def inertia_world(inertia_body, q, out, rot):
    """out[i] = R(q_i) inertia_body[i] R(q_i)ᵀ (Baraff I (2-40)): world inertia about the COM [kg m²].
    inertia_body (n, 3, 3) body axes; q (n, 4); out (n, 3, 3); rot (3, 3) scratch."""
    for i in range(q.shape[0]):
        quat_to_matrix(q[i], rot)
        for a in range(3):
            for b in range(3):
                acc = 0.0
                for k in range(3):
                    for m in range(3):
                        acc += rot[a, k] * inertia_body[i, k, m] * rot[b, m]
                out[i, a, b] = acc


@njit(cache=True)
def generalized_load(mass, inertia_w, w, force, torque, gravity, spring_force, spring_torque, load_out):
    """load_out[i] = (F_i + m_i g + F_spring, τ_i + τ_spring − ω_i × I_i ω_i) (n, 6) [N, N m], world frame."""
    for i in range(mass.shape[0]):
        lx = inertia_w[i, 0, 0] * w[i, 0] + inertia_w[i, 0, 1] * w[i, 1] + inertia_w[i, 0, 2] * w[i, 2]
        ly = inertia_w[i, 1, 0] * w[i, 0] + inertia_w[i, 1, 1] * w[i, 1] + inertia_w[i, 1, 2] * w[i, 2]
        lz = inertia_w[i, 2, 0] * w[i, 0] + inertia_w[i, 2, 1] * w[i, 1] + inertia_w[i, 2, 2] * w[i, 2]
        for k in range(3):
            load_out[i, k] = force[i, k] + mass[i] * gravity[k] + spring_force[i, k]
        load_out[i, 3] = torque[i, 0] + spring_torque[i, 0] - (w[i, 1] * lz - w[i, 2] * ly)
        load_out[i, 4] = torque[i, 1] + spring_torque[i, 1] - (w[i, 2] * lx - w[i, 0] * lz)
        load_out[i, 5] = torque[i, 2] + spring_torque[i, 2] - (w[i, 0] * ly - w[i, 1] * lx)


@njit(cache=True)
def advance_poses(moving, x, q, v_step, w_step, h):
    """x ← x + h v_step, q ← exp(h ω_step) q for the bodies with moving[i] (n,) bool; v_step, w_step (n, 3)
    world [m/s, rad/s]. The exponential map keeps q unit length to rounding."""
    for i in range(x.shape[0]):
        if not moving[i]:
            continue
        for k in range(3):
            x[i, k] += h * v_step[i, k]
        dw, dx, dy, dz = exp_map_t(w_step[i, 0], w_step[i, 1], w_step[i, 2], h)
        q[i, 0], q[i, 1], q[i, 2], q[i, 3] = qmul_t(dw, dx, dy, dz, q[i, 0], q[i, 1], q[i, 2], q[i, 3])


IMPLICIT_EULER, TRAPEZOIDAL, BRIDSON_MARINO, SPRING_LOADS = range(4)
"""What ``implicit_dense_step`` does: a step of one of the three methods, or the springs' implicit loads."""


def spring_kernel_args(springs: SpringArrays) -> tuple[CableArrays, FrameArrays, int, SpringScratch]:
    """``springs``' arrays and scratch as the tuple ``implicit_dense_step`` takes: (cables, frames,
    frame_block_start, scratch), the containers of ``forces.springs`` and the first frame Jacobian block."""
    return springs.cables, springs.frames, springs.frame_block_start, springs.scratch


class DenseWorkspace:
    """Scratch of ``implicit_dense_step`` for n bodies of which nm move (at most ``DENSE_MAX_BODIES``) and the
    springs ``springs``, made once so that a step allocates nothing; ``fits`` says whether it still serves."""

    def __init__(self, n: int, nm: int, springs: SpringArrays) -> None:
        size, nb = 6 * nm, springs.block_count
        self.n, self.nm, self.springs = n, nm, springs
        self.spring_args = spring_kernel_args(springs)
        self.arrays = (np.empty(n, dtype=np.int64), np.empty(n, dtype=np.bool_), np.empty((n, 3, 3)),
                       np.empty((n, 3)), np.empty((n, 3)), np.empty((n, 6)), np.empty(size), np.empty(size),
                       np.empty(size), np.empty((size, size)), np.empty((size, size)), np.empty((size, size)),
                       np.empty((size, size)), np.empty((n, 3)), np.empty((n, 3)), np.empty(nb, dtype=np.int64),
                       np.empty(nb, dtype=np.int64), np.empty((nb, 6, 6)), np.empty((nb, 6, 6)), np.empty((3, 3)))

    def fits(self, n: int, nm: int, springs: SpringArrays) -> bool:
        return self.n == n and self.nm == nm and self.springs is springs


@njit(cache=True)
def count_moving(inv_mass):
    """The number of moving bodies (inv_mass (n,) > 0)."""
    count = 0
    for i in range(inv_mass.shape[0]):
        if inv_mass[i] > 0.0:
            count += 1
    return count


@njit(cache=True)
def _assemble(body, state, applied, springs, ws, need_k):
    """M, D (and K if ``need_k``), the load f and the velocities u of the moving bodies at the state, dense,
    into the workspace ``ws`` (``DenseWorkspace.arrays``); returns the system's size 6 nm.
    body = (mass (n,) [kg], inv_mass (n,) [1/kg], inertia_body (n, 3, 3) [kg m²] body axes); state = (x (n, 3)
    [m], q (n, 4), v (n, 3) [m/s], w (n, 3) [rad/s]), world; applied = (force (n, 3) [N], torque (n, 3) [N m],
    gravity (3,) [m/s²]), world; springs: ``spring_kernel_args``."""
    mass, inv_mass, inertia_body = body
    x, q, v, w = state
    force, torque, gravity = applied
    (body_dof, moving, inertia_w, spring_f, spring_t, load, f, u, rhs, M, D, K, A, v_old, w_old, row, col, Kb, Db,
     rot) = ws
    cables, frames, frame_block_start, scratch = springs
    n = x.shape[0]
    size = 0
    for i in range(n):
        moving[i] = inv_mass[i] > 0.0
        body_dof[i] = size if moving[i] else -1
        if moving[i]:
            size += 6
    inertia_world(inertia_body, q, inertia_w, rot)
    spring_f[:] = 0.0
    spring_t[:] = 0.0
    cable_loads(cables, x, q, v, w, spring_f, spring_t, scratch)
    frame_loads(frames, x, q, v, w, spring_f, spring_t, scratch)
    generalized_load(mass, inertia_w, w, force, torque, gravity, spring_f, spring_t, load)
    for r in range(size):
        for c in range(size):
            M[r, c] = 0.0
            D[r, c] = 0.0
            K[r, c] = 0.0
    for i in range(n):
        d = body_dof[i]
        if d < 0:
            continue
        for k in range(3):
            f[d + k], f[d + 3 + k] = load[i, k], load[i, 3 + k]
            u[d + k], u[d + 3 + k] = v[i, k], w[i, k]
            M[d + k, d + k] = mass[i]
            for m in range(3):
                M[d + 3 + k, d + 3 + m] = inertia_w[i, k, m]
    if row.shape[0]:
        cable_jacobian_blocks(cables, x, q, v, w, (row, col, Kb, Db), scratch)
        frame_jacobian_blocks(frames, frame_block_start, x, q, v, w, (row, col, Kb, Db), scratch)
        scatter_blocks(row, col, Db, body_dof, 1.0, D)
        if need_k:
            scatter_blocks(row, col, Kb, body_dof, 1.0, K)
    return size


@njit(cache=True)
def _matvec_add(mat, vec, scale, out, size):
    """out[:size] += scale · mat[:size, :size] @ vec[:size]."""
    for r in range(size):
        acc = 0.0
        for c in range(size):
            acc += mat[r, c] * vec[c]
        out[r] += scale * acc


@njit(cache=True)
def lu_solve(A, b, size):
    """Solve A x = b over the leading size × size block in place (A is overwritten, b becomes x): Gaussian
    elimination with partial pivoting (rows swapped to the largest pivot of each column), then back
    substitution. The implicit systems are unsymmetric (module docstring), so no Cholesky."""
    for k in range(size):
        p = k
        big = abs(A[k, k])
        for i in range(k + 1, size):
            if abs(A[i, k]) > big:
                big, p = abs(A[i, k]), i
        if p != k:
            for c in range(k, size):
                A[k, c], A[p, c] = A[p, c], A[k, c]
            b[k], b[p] = b[p], b[k]
        inv_pivot = 1.0 / A[k, k]
        for i in range(k + 1, size):
            factor = A[i, k] * inv_pivot
            if factor != 0.0:
                for c in range(k + 1, size):
                    A[i, c] -= factor * A[k, c]
                b[i] -= factor * b[k]
    for i in range(size - 1, -1, -1):
        acc = b[i]
        for c in range(i + 1, size):
            acc -= A[i, c] * b[c]
        b[i] = acc / A[i, i]


@njit(cache=True)
def _system(M, D, K, A, size, d_scale, k_scale):
    """A = M − d_scale D − k_scale K over the leading size × size block."""
    for r in range(size):
        for c in range(size):
            A[r, c] = M[r, c] - d_scale * D[r, c] - k_scale * K[r, c]


@njit(cache=True)
def _scatter(body_dof, sol, v, w):
    for i in range(body_dof.shape[0]):
        d = body_dof[i]
        if d >= 0:
            for k in range(3):
                v[i, k], w[i, k] = sol[d + k], sol[d + 3 + k]


@njit(cache=True)
def implicit_dense_step(method, body, state, applied, h, springs, ws):
    """A step of h [s] of ``method`` (IMPLICIT_EULER, TRAPEZOIDAL, BRIDSON_MARINO; module docstring for the
    equations) on the state in place, the systems dense and solved by ``lu_solve``; or (SPRING_LOADS) the
    springs' implicit loads of ``implicit_spring_loads`` *added* to force, torque (n, 3) [N, N m].
    body = (mass (n,) [kg], inv_mass (n,) [1/kg], inertia_body (n, 3, 3) [kg m²] body axes); state = (x (n, 3)
    [m], q (n, 4), v (n, 3) [m/s], w (n, 3) [rad/s]), world, updated in place; applied = (force (n, 3) [N],
    torque (n, 3) [N m], gravity (3,) [m/s²]), world; springs: ``spring_kernel_args``; ws:
    ``DenseWorkspace.arrays``. Allocates nothing."""
    x, q, v, w = state
    force, torque, gravity = applied
    (body_dof, moving, inertia_w, spring_f, spring_t, load, f, u, rhs, M, D, K, A, v_old, w_old, row, col, Kb, Db,
     rot) = ws
    size = _assemble(body, state, applied, springs, ws, method != BRIDSON_MARINO)
    if size == 0:
        return
    hh = h * h
    if method == SPRING_LOADS:   # (M − h D − h² K) Δu = h (f_s + h K u), loads M Δu / h
        for i in range(body_dof.shape[0]):
            d = body_dof[i]
            if d >= 0:
                for k in range(3):
                    rhs[d + k], rhs[d + 3 + k] = h * spring_f[i, k], h * spring_t[i, k]
        _matvec_add(K, u, hh, rhs, size)
        _system(M, D, K, A, size, h, hh)
        lu_solve(A, rhs, size)
        for r in range(size):
            f[r] = 0.0
        _matvec_add(M, rhs, 1.0 / h, f, size)
        for i in range(body_dof.shape[0]):
            d = body_dof[i]
            if d >= 0:
                for k in range(3):
                    force[i, k] += f[d + k]
                    torque[i, k] += f[d + 3 + k]
        return
    if method == IMPLICIT_EULER:   # (M − h D − h² K) u⁺ = M u + h (f − D u)
        for r in range(size):
            rhs[r] = h * f[r]
        _matvec_add(M, u, 1.0, rhs, size)
        _matvec_add(D, u, -h, rhs, size)
        _system(M, D, K, A, size, h, hh)
        lu_solve(A, rhs, size)
        _scatter(body_dof, rhs, v, w)
        advance_poses(moving, x, q, v, w, h)
        return
    if method == TRAPEZOIDAL:   # (M − h/2 D − h²/4 K) u⁺ = M u + h f − h/2 D u + h²/4 K u
        for r in range(size):
            rhs[r] = h * f[r]
        _matvec_add(M, u, 1.0, rhs, size)
        _matvec_add(D, u, -0.5 * h, rhs, size)
        _matvec_add(K, u, 0.25 * hh, rhs, size)
        _system(M, D, K, A, size, 0.5 * h, 0.25 * hh)
        lu_solve(A, rhs, size)
        for i in range(body_dof.shape[0]):
            for k in range(3):
                v_old[i, k], w_old[i, k] = v[i, k], w[i, k]
        _scatter(body_dof, rhs, v, w)
        for i in range(body_dof.shape[0]):
            for k in range(3):
                v_old[i, k] = 0.5 * (v_old[i, k] + v[i, k])
                w_old[i, k] = 0.5 * (w_old[i, k] + w[i, k])
        advance_poses(moving, x, q, v_old, w_old, h)
        return
    # Bridson–Marino: (M − h/2 D) u½ = M u + h/2 (f − D u), x⁺ = x + h u½, then the same at x⁺ for u⁺
    for half in range(2):
        if half == 1:
            _assemble(body, state, applied, springs, ws, False)
        for r in range(size):
            rhs[r] = 0.5 * h * f[r]
        _matvec_add(M, u, 1.0, rhs, size)
        _matvec_add(D, u, -0.5 * h, rhs, size)
        _system(M, D, K, A, size, 0.5 * h, 0.0)
        lu_solve(A, rhs, size)
        _scatter(body_dof, rhs, v, w)
        if half == 0:
            advance_poses(moving, x, q, v, w, h)


class _System:
    """M, K, D (sparse) and the load f of the moving bodies at one state: the path for more than
    ``DENSE_MAX_BODIES`` moving bodies (fewer take ``implicit_dense_step``)."""

    def __init__(self, mass: np.ndarray, inertia_body: np.ndarray, moving: np.ndarray, x: np.ndarray,
                 q: np.ndarray, v: np.ndarray, w: np.ndarray, force: np.ndarray, torque: np.ndarray,
                 gravity: np.ndarray, springs: SpringArrays | None, need_k: bool) -> None:
        n = x.shape[0]
        self.moving_idx = np.flatnonzero(moving)
        nm = self.moving_idx.size
        size = 6 * nm
        body_dof = np.full(n, -1, dtype=np.int64)
        body_dof[self.moving_idx] = 6 * np.arange(nm, dtype=np.int64)
        inertia_w = np.empty((n, 3, 3))
        inertia_world(inertia_body, q, inertia_w, np.empty((3, 3)))
        spring_f = np.zeros((n, 3))
        spring_t = np.zeros((n, 3))
        if springs is not None:
            spring_loads(springs, x, q, v, w, spring_f, spring_t)
        load = np.empty((n, 6))
        generalized_load(mass, inertia_w, w, force, torque, gravity, spring_f, spring_t, load)
        self.f = load[self.moving_idx].ravel()
        self.u = np.concatenate([v[self.moving_idx], w[self.moving_idx]], axis=1).ravel()
        mass_blocks = np.zeros((nm, 6, 6))
        mass_blocks[:, 0, 0] = mass_blocks[:, 1, 1] = mass_blocks[:, 2, 2] = mass[self.moving_idx]
        mass_blocks[:, 3:, 3:] = inertia_w[self.moving_idx]
        diag = self.moving_idx.astype(np.int64)
        if springs is not None and springs.block_count:
            row, col, kb, db = spring_jacobian_blocks(springs, x, q, v, w)
        else:
            row = col = np.zeros(0, dtype=np.int64)
            kb = db = np.zeros((0, 6, 6))
        self.M = _sparse_blocks(diag, diag, mass_blocks, body_dof, size)
        self.D = _sparse_blocks(row, col, db, body_dof, size)
        self.K = _sparse_blocks(row, col, kb, body_dof, size) if need_k else None

    def solve(self, a: sp.spmatrix, b: np.ndarray) -> np.ndarray:
        return spla.spsolve(sp.csc_matrix(a), b)


def _sparse_blocks(row: np.ndarray, col: np.ndarray, blocks: np.ndarray, body_dof: np.ndarray,
                   size: int) -> sp.csr_matrix:
    """CSR matrix summing 6×6 blocks at (body_dof[row], body_dof[col]); blocks of the world or of fixed
    bodies (index −1 or dof −1) are dropped."""
    ok = (row >= 0) & (col >= 0)
    r0 = np.where(ok, body_dof[np.maximum(row, 0)], -1)
    c0 = np.where(ok, body_dof[np.maximum(col, 0)], -1)
    keep = (r0 >= 0) & (c0 >= 0)
    six = np.arange(6)
    ii = np.broadcast_to(r0[keep][:, None, None] + six[None, :, None], (keep.sum(), 6, 6))
    jj = np.broadcast_to(c0[keep][:, None, None] + six[None, None, :], (keep.sum(), 6, 6))
    return sp.coo_matrix((blocks[keep].ravel(), (ii.ravel(), jj.ravel())), shape=(size, size)).tocsr()


def _scatter_velocities(idx: np.ndarray, u: np.ndarray, v: np.ndarray, w: np.ndarray) -> None:
    u6 = u.reshape(-1, 6)
    v[idx] = u6[:, :3]
    w[idx] = u6[:, 3:]


def _check_arrays(mass: Any, inv_mass: Any, inertia_body: Any, x: Any, q: Any, v: Any, w: Any, force: Any,
                  torque: Any, gravity: Any, springs: Any) -> None:
    if not isinstance(x, np.ndarray) or x.ndim != 2:
        raise ValueError(f"x must be a float64 array of shape (n, 3), got {getattr(x, 'shape', x)!r}")
    n = x.shape[0]
    spec = (("mass", mass, (n,)), ("inv_mass", inv_mass, (n,)), ("inertia_body", inertia_body, (n, 3, 3)),
            ("x", x, (n, 3)), ("q", q, (n, 4)), ("v", v, (n, 3)), ("w", w, (n, 3)), ("force", force, (n, 3)),
            ("torque", torque, (n, 3)), ("gravity", gravity, (3,)))
    for name, arr, shape in spec:
        if not isinstance(arr, np.ndarray) or arr.dtype != FLOAT or arr.shape != shape:
            raise ValueError(f"{name} must be a float64 array of shape {shape}, got "
                             f"{getattr(arr, 'shape', type(arr).__name__)!r}")
        if not np.all(np.isfinite(arr)):
            raise ValueError(f"{name} must be finite, got {arr!r}")
    for name, arr in (("x", x), ("q", q), ("v", v), ("w", w)):
        if not arr.flags.c_contiguous or not arr.flags.writeable:
            raise ValueError(f"{name} must be a writeable C-contiguous array (it is updated in place)")
    if springs is not None:
        if not isinstance(springs, SpringArrays):
            raise TypeError(f"springs must be SpringArrays (from pack_springs) or None, got "
                            f"{type(springs).__name__}")
        if springs.max_body >= n:
            raise ValueError(f"springs refer to body {springs.max_body}, but x holds only {n} bodies")


_METHOD_CODE = {"implicit_euler": IMPLICIT_EULER, "trapezoidal": TRAPEZOIDAL, "bridson_marino": BRIDSON_MARINO}
_NO_SPRINGS: list[SpringArrays] = []
_NO_GRAVITY = np.zeros(3)
"""The gravity of the springs' implicit loads: their system needs M, D, K and u, not the load f."""


def _springs_or_none(springs: SpringArrays | None) -> SpringArrays:
    """``springs``, or one empty ``SpringArrays`` made once (the kernels then loop over no spring)."""
    if springs is not None:
        return springs
    if not _NO_SPRINGS:
        _NO_SPRINGS.append(pack_springs([]))
    return _NO_SPRINGS[0]


def dense_workspace(workspace: DenseWorkspace | None, inv_mass: np.ndarray,
                    springs: SpringArrays | None) -> DenseWorkspace | None:
    """``workspace`` if it still fits the bodies and springs, else a new one; None when more than
    ``DENSE_MAX_BODIES`` bodies move (the sparse solve, which allocates, serves those)."""
    nm = count_moving(inv_mass)
    if nm > DENSE_MAX_BODIES:
        return None
    springs = _springs_or_none(springs)
    if workspace is not None and workspace.fits(inv_mass.shape[0], nm, springs):
        return workspace
    return DenseWorkspace(inv_mass.shape[0], nm, springs)


def implicit_step(method: str, mass: np.ndarray, inv_mass: np.ndarray, inertia_body: np.ndarray, x: np.ndarray,
                  q: np.ndarray, v: np.ndarray, w: np.ndarray, force: np.ndarray, torque: np.ndarray,
                  gravity: np.ndarray, springs: SpringArrays | None, h: float,
                  workspace: DenseWorkspace | None = None) -> DenseWorkspace | None:
    """Advance x, q, v, w of n rigid bodies by one step of length h, in place (module docstring for equations).

    Args:
        method: "implicit_euler" (ArtiSynth notes 0.9.2), "trapezoidal" (0.9.3) or "bridson_marino" (0.9.4).
        mass (n,) [kg]; inv_mass (n,) [1/kg], 0 marks a fixed body; inertia_body (n, 3, 3) [kg m²] about the
            COM in body axes.
        x (n, 3) [m] COM positions; q (n, 4) orientations (w, x, y, z), body → world; v (n, 3) [m/s] and
            w (n, 3) [rad/s] world-frame velocities — all float64, updated in place.
        force (n, 3) [N] and torque (n, 3) [N m] external loads, world frame (torque about the COM), held
            constant over the step and left unchanged (the caller zeroes its accumulators).
        gravity (3,) [m/s²].
        springs: ``SpringArrays`` from ``tumble.forces.pack_springs``, or None.
        h: step [s] > 0.
        workspace: the ``DenseWorkspace`` this function returned last time, or None. Up to
            ``DENSE_MAX_BODIES`` moving bodies the step runs in one kernel on it (``implicit_dense_step``)
            and, with it passed back each step, allocates nothing; beyond, SciPy's sparse LU.
    Returns the workspace to pass next time (None for the sparse solve).
    Raises ValueError/TypeError naming the bad argument, before any array is written.
    """
    if method not in METHODS:
        if not isinstance(method, str):
            raise TypeError(f"method must be a string, one of {list(METHODS)}, got {method!r}")
        raise ValueError(f"method must be one of {list(METHODS)}, got {method!r}")
    h = _checks.positive("h", h)
    _check_arrays(mass, inv_mass, inertia_body, x, q, v, w, force, torque, gravity, springs)
    return implicit_step_unchecked(method, mass, inv_mass, inertia_body, x, q, v, w, force, torque, gravity, springs,
                                   h, workspace)


def implicit_step_unchecked(method: str, mass: np.ndarray, inv_mass: np.ndarray, inertia_body: np.ndarray,
                            x: np.ndarray, q: np.ndarray, v: np.ndarray, w: np.ndarray, force: np.ndarray,
                            torque: np.ndarray, gravity: np.ndarray, springs: SpringArrays | None, h: float,
                            workspace: DenseWorkspace | None = None) -> DenseWorkspace | None:
    """``implicit_step`` without its checks of the arguments, for the World's own arrays (the checks build
    temporary arrays, which a step should not)."""
    workspace = dense_workspace(workspace, inv_mass, springs)
    if workspace is not None:
        implicit_dense_step(_METHOD_CODE[method], (mass, inv_mass, inertia_body), (x, q, v, w),
                            (force, torque, gravity), h, workspace.spring_args, workspace.arrays)
        return workspace
    moving = inv_mass > 0.0
    sys = _System(mass, inertia_body, moving, x, q, v, w, force, torque, gravity, springs,
                  need_k=method != "bridson_marino")
    idx = sys.moving_idx
    M, K, D, f, u = sys.M, sys.K, sys.D, sys.f, sys.u
    if method == "implicit_euler":
        u_new = sys.solve(M - h * D - (h * h) * K, M @ u + h * (f - D @ u))
        _scatter_velocities(idx, u_new, v, w)
        advance_poses(moving, x, q, v, w, h)
    elif method == "trapezoidal":
        u_new = sys.solve(M - (0.5 * h) * D - (0.25 * h * h) * K,
                          M @ u + h * f - (0.5 * h) * (D @ u) + (0.25 * h * h) * (K @ u))
        v_old, w_old = v.copy(), w.copy()
        _scatter_velocities(idx, u_new, v, w)
        advance_poses(moving, x, q, 0.5 * (v_old + v), 0.5 * (w_old + w), h)
    else:
        u_half = sys.solve(M - (0.5 * h) * D, M @ u + (0.5 * h) * (f - D @ u))
        _scatter_velocities(idx, u_half, v, w)
        advance_poses(moving, x, q, v, w, h)
        sys2 = _System(mass, inertia_body, moving, x, q, v, w, force, torque, gravity, springs, need_k=False)
        M2, D2 = sys2.M, sys2.D
        u_new = sys2.solve(M2 - (0.5 * h) * D2, M2 @ u_half + (0.5 * h) * (sys2.f - D2 @ u_half))
        _scatter_velocities(idx, u_new, v, w)
    return None


def implicit_spring_loads(mass: np.ndarray, inv_mass: np.ndarray, inertia_body: np.ndarray, x: np.ndarray,
                          q: np.ndarray, v: np.ndarray, w: np.ndarray, springs: SpringArrays, h: float,
                          force: np.ndarray, torque: np.ndarray,
                          workspace: DenseWorkspace | None = None) -> DenseWorkspace | None:
    """The springs' loads made implicit: the velocity change Δu = (Δv, Δω) that linearly implicit Euler gives
    the springs alone over a step of h [s], (M − h D − h² K) Δu = h (f_s + h K u) (notes 0.9.2 with f_s the
    spring loads), as the constant loads that produce it, M Δu / h, *added* to force (n, 3) [N] and torque
    (n, 3) [N m], world frame (nothing on fixed bodies). For a step that solves contacts and joints with them.
    ``workspace`` as for ``implicit_step`` (returned for the next call; None for the sparse solve)."""
    workspace = dense_workspace(workspace, inv_mass, springs)
    if workspace is not None:
        implicit_dense_step(SPRING_LOADS, (mass, inv_mass, inertia_body), (x, q, v, w), (force, torque, _NO_GRAVITY),
                            h, workspace.spring_args, workspace.arrays)
        return workspace
    n = x.shape[0]
    moving = inv_mass > 0.0
    zeros = np.zeros((n, 3))
    sys = _System(mass, inertia_body, moving, x, q, v, w, zeros, zeros, np.zeros(3), springs, need_k=True)
    spring_f, spring_t = np.zeros((n, 3)), np.zeros((n, 3))
    spring_loads(springs, x, q, v, w, spring_f, spring_t)
    idx = sys.moving_idx
    f = np.concatenate([spring_f[idx], spring_t[idx]], axis=1).ravel()
    du = sys.solve(sys.M - h * sys.D - (h * h) * sys.K, h * (f + h * (sys.K @ sys.u)))
    loads = (sys.M @ du).reshape(-1, 6) / h
    force[idx] += loads[:, :3]
    torque[idx] += loads[:, 3:]
    return None
