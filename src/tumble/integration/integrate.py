"""Time-stepping integrator kernels: one compiled loop over all bodies per step.

Each kernel advances (x, q, v, w) of every body by one step h [s] under the accumulated external
``force`` (N, world) and ``torque`` (N m, world, about the COM) plus ``gravity`` (m/s², world), then zeroes
the accumulators. Fixed bodies have zero inverse mass and inverse moments, so they need no branch.

The rotational part works in each body's principal frame Rp = R(q) R(principal_q), where the inertia is
diag(I1, I2, I3), ascending, and the angular momentum in principal coordinates is Π = diag(I) Rpᵀ ω
(Baraff I 2.9, (2-39)).

Every scheme has a serial driver (``*_serial``) for small worlds and a ``prange`` driver; both call the
same per-body function, so they give bitwise-equal results.
The kernels take the bodies as the Model's and State's containers (``body``: model.fields.BodyModel,
``state``: BodyState); gravity (3,) [m/s²] world; h scalar [s].
"""

from __future__ import annotations

import numpy as np
from numba import prange

from ..jit import FMA as _FMA
from ..jit import njit
from ..math3d import exp_map_t, qmul_t, qrot_inv_t, qrot_t, quat_matrix_t
from .guard import all_finite, save_row

_SERIES_MAX = 0.05
"""rad: below this |angle| the sin/cos series of ``_sin_cos`` is exact to rounding."""

# ------------------------------------------------------------------------------------------------
# Pieces shared by the schemes
# ------------------------------------------------------------------------------------------------


@njit(cache=True, inline="always")
def _translate(i, mass, inv_mass, x, v, force, gravity, h, lag):
    """Symplectic Euler for the COM (ArtiSynth notes 0.9.1): v ← v + h M⁻¹ (F + M g), then x ← x + h v,
    or, with ``lag`` = (S − 1) / (2S), exactly what S sub-steps of h / S would give under the constant load:
    x ← x + h (v⁺ − lag h a). A body then flies the same path whether or not the step it is in has
    contacts (those steps are sub-stepped), so restitution sees one consistent discrete energy."""
    for k in range(3):
        acc = inv_mass[i] * (force[i, k] + mass[i] * gravity[k])
        v[i, k] += h * acc
        x[i, k] += h * (v[i, k] - lag * h * acc)
        force[i, k] = 0.0


@njit(cache=True, inline="always")
def kinematic_move(i, x, q, v, w, h):
    """A kinematic body's step over h [s]: it moves with its own v and ω (world frame), held constant over the
    step, exactly: x ← x + h v and q ← exp(½ h ω) q, the flow of q̇ = ½ ω q (Baraff I (4-2)) for a constant ω.
    Nothing else moves it: its inverse mass and inertia are zero, so loads and impulses change neither v nor ω."""
    for k in range(3):
        x[i, k] += h * v[i, k]
    dw, dx, dy, dz = exp_map_t(w[i, 0], w[i, 1], w[i, 2], h)
    a, b, c, d = qmul_t(dw, dx, dy, dz, q[i, 0], q[i, 1], q[i, 2], q[i, 3])
    inv = 1.0 / np.sqrt(a * a + b * b + c * c + d * d)
    q[i, 0], q[i, 1], q[i, 2], q[i, 3] = a * inv, b * inv, c * inv, d * inv


@njit(cache=True, inline="always")
def _kinematic_step(i, x, q, v, w, force, torque, h, non_finite):
    """A kinematic body's whole step in the fused free-motion kernels: ``kinematic_move``, the loads dropped
    (they move nothing), and its ``non_finite`` flag (integration/guard.py)."""
    kinematic_move(i, x, q, v, w, h)
    for k in range(3):
        force[i, k] = 0.0
        torque[i, k] = 0.0
    non_finite[i] = not all_finite(x[i, 0], x[i, 1], x[i, 2], q[i, 0], w[i, 0], w[i, 1], w[i, 2])


@njit(cache=True, inline="always")
def _enter_principal(i, principal_q, q, w, torque):
    """Rp = q ⊗ principal_q, and ω and τ in principal coordinates (Rpᵀ ω, Rpᵀ τ)."""
    pw, px, py, pz = qmul_t(q[i, 0], q[i, 1], q[i, 2], q[i, 3],
                            principal_q[i, 0], principal_q[i, 1], principal_q[i, 2], principal_q[i, 3])
    a0, a1, a2 = qrot_inv_t(pw, px, py, pz, w[i, 0], w[i, 1], w[i, 2])
    # Most free bodies carry no torque (gravity has none about the COM): rotating a zero vector cost about
    # 5 % of a 4096-body free step, which now pays for the step guard's test (integration/guard.py).
    t0, t1, t2 = 0.0, 0.0, 0.0
    if torque[i, 0] != 0.0 or torque[i, 1] != 0.0 or torque[i, 2] != 0.0:
        t0, t1, t2 = qrot_inv_t(pw, px, py, pz, torque[i, 0], torque[i, 1], torque[i, 2])
        for k in range(3):
            torque[i, k] = 0.0
    return pw, px, py, pz, a0, a1, a2, t0, t1, t2


@njit(cache=True, inline="always")
def _stored_finite(i, x, pw, a0, a1, a2):
    """Whether body i's step leaves it finite, tested on what ``_leave_principal`` is about to store: x⁺
    (stored, and non-finite whenever v⁺ is: x⁺ = x + h (v⁺ − lag h a), h > 0), ω in principal coordinates
    (a0, a1, a2; ω = Rp a) and the real part of the new Rp (q = Rp ⊗ principal_q⁻¹). A non-finite rotation
    angle (a sub-rotation's, or the exponential map's) makes all four parts of Rp NaN (each is a product with
    its sine or cosine), so pw stands for them. From registers: testing the stored x and ω instead cost 2 % of
    a 4096-body free step."""
    return all_finite(x[i, 0], x[i, 1], x[i, 2], pw, a0, a1, a2)


@njit(cache=True, inline="always")
def _leave_principal(i, principal_q, pw, px, py, pz, a0, a1, a2, q, w):
    """Store ω = Rp (a0, a1, a2) and q = Rp ⊗ principal_q⁻¹, with Rp renormalized against rounding."""
    inv_norm = 1.0 / np.sqrt(pw * pw + px * px + py * py + pz * pz)
    pw *= inv_norm
    px *= inv_norm
    py *= inv_norm
    pz *= inv_norm
    w[i, 0], w[i, 1], w[i, 2] = qrot_t(pw, px, py, pz, a0, a1, a2)
    q[i, 0], q[i, 1], q[i, 2], q[i, 3] = qmul_t(pw, px, py, pz, principal_q[i, 0], -principal_q[i, 1],
                                                -principal_q[i, 2], -principal_q[i, 3])


# ------------------------------------------------------------------------------------------------
# Default: exact principal-axis splitting
# ------------------------------------------------------------------------------------------------


@njit(cache=True, inline="always")
def _sin_cos(a):
    """(sin a, cos a). For |a| < ``_SERIES_MAX`` the Taylor polynomials to a⁷ and a⁸ are exact in double
    precision (the next terms, a⁹/9! and a¹⁰/10!, are below 1e-17 relative) and several times cheaper than
    the library calls; per-step rotation half-angles h|ω|/2 are far below that bound."""
    if abs(a) < _SERIES_MAX:
        a2 = a * a
        s = a * (1.0 + a2 * (-1.0 / 6.0 + a2 * (1.0 / 120.0 + a2 * (-1.0 / 5040.0))))
        c = 1.0 + a2 * (-0.5 + a2 * (1.0 / 24.0 + a2 * (-1.0 / 720.0 + a2 * (1.0 / 40320.0))))
        return s, c
    return np.sin(a), np.cos(a)


@njit(cache=True, inline="always")
def _half_angle(angle):
    """(s, c, cf, sf): sin and cos of half the ``angle`` [rad] and, from them, of the full angle."""
    s, c = _sin_cos(0.5 * angle)
    return s, c, 1.0 - 2.0 * s * s, 2.0 * s * c


@njit(cache=True, inline="always")
def _rotation_x(qw, qx, qy, qz, p0, p1, p2, angle):
    """Exact flow of H_k = Π_k² / (2 I_k) over the time that turns the body by ``angle`` about its
    principal axis k (here x; ``_rotation_y``, ``_rotation_z`` for the others): Rp ← Rp Q_k(angle),
    Π ← Q_kᵀ Π (Dullweber, Leimkuhler & McLachlan 1997). Both factors are rotations, so |Π| and Rp Π (the
    world angular momentum L) do not change. One function per axis: each call site inlines one product."""
    s, c, cf, sf = _half_angle(angle)
    qw, qx, qy, qz = qmul_t(qw, qx, qy, qz, c, s, 0.0, 0.0)
    return qw, qx, qy, qz, p0, cf * p1 + sf * p2, -sf * p1 + cf * p2


@njit(cache=True, inline="always")
def _rotation_y(qw, qx, qy, qz, p0, p1, p2, angle):
    """``_rotation_x`` about the principal y axis."""
    s, c, cf, sf = _half_angle(angle)
    qw, qx, qy, qz = qmul_t(qw, qx, qy, qz, c, 0.0, s, 0.0)
    return qw, qx, qy, qz, -sf * p2 + cf * p0, p1, cf * p2 + sf * p0


@njit(cache=True, inline="always")
def _rotation_z(qw, qx, qy, qz, p0, p1, p2, angle):
    """``_rotation_x`` about the principal z axis."""
    s, c, cf, sf = _half_angle(angle)
    qw, qx, qy, qz = qmul_t(qw, qx, qy, qz, c, 0.0, 0.0, s)
    return qw, qx, qy, qz, cf * p0 + sf * p1, -sf * p0 + cf * p1, p2


@njit(cache=True, inline="always")
def _free_rotation(pw, px, py, pz, p0, p1, p2, k0, k1, k2, h):
    """Strang splitting of the free-body flow over h (see ``step_splitting``): half steps about the
    smallest-moment axis, then the middle one, a full step about the largest, and back."""
    half = 0.5 * h
    pw, px, py, pz, p0, p1, p2 = _rotation_x(pw, px, py, pz, p0, p1, p2, half * p0 * k0)
    pw, px, py, pz, p0, p1, p2 = _rotation_y(pw, px, py, pz, p0, p1, p2, half * p1 * k1)
    pw, px, py, pz, p0, p1, p2 = _rotation_z(pw, px, py, pz, p0, p1, p2, h * p2 * k2)
    pw, px, py, pz, p0, p1, p2 = _rotation_y(pw, px, py, pz, p0, p1, p2, half * p1 * k1)
    pw, px, py, pz, p0, p1, p2 = _rotation_x(pw, px, py, pz, p0, p1, p2, half * p0 * k0)
    return pw, px, py, pz, p0, p1, p2


@njit(cache=True, inline="always")
def _kick_omega(implicit_gyro, moments, inv_moments, omega, torque, h):
    """Euler's equation stepped on ω (principal coordinates): explicit, or implicit by one Newton step.
    ``moments`` (I0, I1, I2), ``inv_moments`` (k0, k1, k2), ``omega`` (a0, a1, a2), ``torque`` (t0, t1, t2)."""
    I0, I1, I2 = moments
    k0, k1, k2 = inv_moments
    a0, a1, a2 = omega
    t0, t1, t2 = torque
    if implicit_gyro:
        return _implicit_gyro(I0, I1, I2, a0 + h * k0 * t0, a1 + h * k1 * t1, a2 + h * k2 * t2, h)
    L0, L1, L2 = I0 * a0, I1 * a1, I2 * a2
    return (a0 + h * k0 * (t0 - (a1 * L2 - a2 * L1)),
            a1 + h * k1 * (t1 - (a2 * L0 - a0 * L2)),
            a2 + h * k2 * (t2 - (a0 * L1 - a1 * L0)))


@njit(cache=True, forceinline=True, refcount=False, fastmath=_FMA)
def _splitting_one(i, body, state, gravity, h, lag):
    """One body's step of ``step_splitting``. Inlined by LLVM into both drivers (an IR-inlined function that
    reads arrays from a tuple inside a ``prange`` loop loses its writes: numba 0.68), with its own
    fused multiply-adds."""
    mass, inv_mass, principal_q = body.mass, body.inv_mass, body.principal_q
    principal_moments, inv_principal_moments = body.principal_moments, body.inv_principal_moments
    x, q, v, w, force, torque = state.x, state.q, state.v, state.w, state.force, state.torque
    save_row(i, state)
    if body.kinematic[i]:
        _kinematic_step(i, x, q, v, w, force, torque, h, state.non_finite)
        return
    _translate(i, mass, inv_mass, x, v, force, gravity, h, lag)
    pw, px, py, pz, a0, a1, a2, t0, t1, t2 = _enter_principal(i, principal_q, q, w, torque)
    k0, k1, k2 = inv_principal_moments[i, 0], inv_principal_moments[i, 1], inv_principal_moments[i, 2]
    # Torque kick on the momentum, L ← L + h τ (Baraff I (2-31)), in principal coordinates.
    p0 = principal_moments[i, 0] * a0 + h * t0
    p1 = principal_moments[i, 1] * a1 + h * t1
    p2 = principal_moments[i, 2] * a2 + h * t2
    pw, px, py, pz, p0, p1, p2 = _free_rotation(pw, px, py, pz, p0, p1, p2, k0, k1, k2, h)
    a0, a1, a2 = p0 * k0, p1 * k1, p2 * k2
    state.non_finite[i] = not _stored_finite(i, x, pw, a0, a1, a2)
    _leave_principal(i, principal_q, pw, px, py, pz, a0, a1, a2, q, w)


@njit(cache=True, refcount=False)
def _count(flags):
    """How many of the bodies' ``non_finite`` flags are set (each body's step sets its own, inside the
    LLVM-inlined per-body function: a prange reduction of the count made a 4096-body free step 11 % slower,
    150 → 170 µs, and a store in the prange body itself is lost, as the per-body functions' docstrings say)."""
    bad = 0
    for i in range(flags.shape[0]):
        bad += flags[i]
    return bad


@njit(cache=True, refcount=False, fastmath=_FMA)
def step_splitting_serial(body, state, gravity, h, lag):
    """Serial driver of ``step_splitting``."""
    for i in range(state.x.shape[0]):
        _splitting_one(i, body, state, gravity, h, lag)
    return _count(state.non_finite)


@njit(cache=True, parallel=True, fastmath=_FMA)
def step_splitting(body, state, gravity, h, lag):
    """Symplectic Euler for translation, an exact-rotation splitting for the rigid body's spin.

    Kick (ArtiSynth notes 0.9.1): v ← v + h M⁻¹ (F + M g), L ← L + h τ. Drift: x ← x + h v, and the
    orientation by the Strang splitting of the free-body Hamiltonian H = Σ Π_k² / (2 I_k) into its three
    principal-axis terms, each flowed exactly (Dullweber, Leimkuhler & McLachlan, J. Chem. Phys. 107
    (1997)): half steps about the smallest-moment axis, then the middle one, a full step about the
    largest, and back. |L| is conserved to rounding and the energy error stays bounded at O(h²); this
    axis order gave the smallest error constant of the orders tried (docs/integrators.md).

    Each body's x, q, v, ω of the start go to its ``*_before`` rows; returns how many bodies ended with a
    non-finite entry (integration/guard.py).
    """
    for i in prange(state.x.shape[0]):
        _splitting_one(i, body, state, gravity, h, lag)
    return _count(state.non_finite)


# ------------------------------------------------------------------------------------------------
# Semi-implicit Euler on (v, ω) with the gyroscopic term
# ------------------------------------------------------------------------------------------------


@njit(cache=True, inline="always")
def _implicit_gyro(I0, I1, I2, a0, a1, a2, h):
    """One Newton step on f(ω) = I (ω − ω₀) + h ω × I ω = 0 from ω = ω₀ (principal coordinates, I diagonal).

    Jacobian J = I + h (ω₀* I − (I ω₀)*); J d = f(ω₀) = h ω₀ × I ω₀ solved by Cramer's rule
    (det J > 0: J → I, positive definite, as h → 0).
    """
    L0, L1, L2 = I0 * a0, I1 * a1, I2 * a2
    f0 = h * (a1 * L2 - a2 * L1)
    f1 = h * (a2 * L0 - a0 * L2)
    f2 = h * (a0 * L1 - a1 * L0)
    j00, j01, j02 = I0, h * (L2 - a2 * I1), h * (a1 * I2 - L1)
    j10, j11, j12 = h * (a2 * I0 - L2), I1, h * (L0 - a0 * I2)
    j20, j21, j22 = h * (L1 - a1 * I0), h * (a0 * I1 - L0), I2
    det = j00 * (j11 * j22 - j12 * j21) - j01 * (j10 * j22 - j12 * j20) + j02 * (j10 * j21 - j11 * j20)
    d0 = f0 * (j11 * j22 - j12 * j21) - j01 * (f1 * j22 - j12 * f2) + j02 * (f1 * j21 - j11 * f2)
    d1 = j00 * (f1 * j22 - j12 * f2) - f0 * (j10 * j22 - j12 * j20) + j02 * (j10 * f2 - f1 * j20)
    d2 = j00 * (j11 * f2 - f1 * j21) - j01 * (j10 * f2 - f1 * j20) + f0 * (j10 * j21 - j11 * j20)
    return a0 - d0 / det, a1 - d1 / det, a2 - d2 / det


@njit(cache=True, forceinline=True, refcount=False, fastmath=_FMA)
def _symplectic_euler_one(i, body, state, gravity, h, implicit_gyro, lag):
    """One body's step of ``step_symplectic_euler`` (inlined by LLVM, as ``_splitting_one``)."""
    mass, inv_mass, principal_q = body.mass, body.inv_mass, body.principal_q
    principal_moments, inv_principal_moments = body.principal_moments, body.inv_principal_moments
    x, q, v, w, force, torque = state.x, state.q, state.v, state.w, state.force, state.torque
    save_row(i, state)
    if body.kinematic[i]:
        _kinematic_step(i, x, q, v, w, force, torque, h, state.non_finite)
        return
    _translate(i, mass, inv_mass, x, v, force, gravity, h, lag)
    pw, px, py, pz, a0, a1, a2, t0, t1, t2 = _enter_principal(i, principal_q, q, w, torque)
    I0, I1, I2 = principal_moments[i, 0], principal_moments[i, 1], principal_moments[i, 2]
    k0, k1, k2 = inv_principal_moments[i, 0], inv_principal_moments[i, 1], inv_principal_moments[i, 2]
    a0, a1, a2 = _kick_omega(implicit_gyro, (I0, I1, I2), (k0, k1, k2), (a0, a1, a2), (t0, t1, t2), h)
    # Rp ← exp(½ h ω⁺) Rp with ω⁺ in world coordinates, i.e. exp(½ h ω⁺_p) on the right in principal ones.
    dw, dx, dy, dz = exp_map_t(a0, a1, a2, h)
    pw, px, py, pz = qmul_t(pw, px, py, pz, dw, dx, dy, dz)
    state.non_finite[i] = not _stored_finite(i, x, pw, a0, a1, a2)
    _leave_principal(i, principal_q, pw, px, py, pz, a0, a1, a2, q, w)


@njit(cache=True, refcount=False, fastmath=_FMA)
def step_symplectic_euler_serial(body, state, gravity, h, implicit_gyro, lag):
    """Serial driver of ``step_symplectic_euler``."""
    for i in range(state.x.shape[0]):
        _symplectic_euler_one(i, body, state, gravity, h, implicit_gyro, lag)
    return _count(state.non_finite)


@njit(cache=True, parallel=True, fastmath=_FMA)
def step_symplectic_euler(body, state, gravity, h, implicit_gyro, lag):
    """Semi-implicit (symplectic) Euler on (v, ω) with the gyroscopic term (ArtiSynth notes 0.9.1).

    In principal coordinates, Euler's equation I ω̇ + ω × I ω = τ (lecture; Baraff II (C-10)) is stepped
      explicit:  ω⁺ = ω + h I⁻¹ (τ − ω × I ω)
      implicit:  I (ω⁺ − ω₀) + h ω⁺ × I ω⁺ = 0 with ω₀ = ω + h I⁻¹ τ, one Newton step from ω₀
                 (Catto, GDC 2015: dissipates energy, stable at large spin).
    Then x ← x + h v⁺ and q ← exp(½ h ω⁺) q (exponential map, exact for constant ω over the step).
    First order in h for the rotation: |L| and energy drift (docs/integrators.md). Keeps the start and
    returns the non-finite count as ``step_splitting`` does.
    """
    for i in prange(state.x.shape[0]):
        _symplectic_euler_one(i, body, state, gravity, h, implicit_gyro, lag)
    return _count(state.non_finite)


# ------------------------------------------------------------------------------------------------
# The same schemes as two stages, so that a contact solve can sit between them
# ------------------------------------------------------------------------------------------------
#
# A contact step is: velocity stage (every load but the contacts) → contact impulses → position stage.
# The velocity stage of both schemes is the kick of the fused kernels above; the position stage is their
# drift. With the splitting scheme the contact impulses thus change L before the exact rotation.


@njit(cache=True, inline="always")
def _store_inv_inertia_world(i, pw, px, py, pz, k0, k1, k2, inv_inertia_world):
    """I⁻¹ = Rp diag(k) Rpᵀ in world axes (Baraff I (2-39) with the principal frame), for the solver."""
    r00, r01, r02, r10, r11, r12, r20, r21, r22 = quat_matrix_t(pw, px, py, pz)
    a = inv_inertia_world
    a[i, 0, 0] = r00 * r00 * k0 + r01 * r01 * k1 + r02 * r02 * k2
    a[i, 0, 1] = r00 * r10 * k0 + r01 * r11 * k1 + r02 * r12 * k2
    a[i, 0, 2] = r00 * r20 * k0 + r01 * r21 * k1 + r02 * r22 * k2
    a[i, 1, 1] = r10 * r10 * k0 + r11 * r11 * k1 + r12 * r12 * k2
    a[i, 1, 2] = r10 * r20 * k0 + r11 * r21 * k1 + r12 * r22 * k2
    a[i, 2, 2] = r20 * r20 * k0 + r21 * r21 * k1 + r22 * r22 * k2
    a[i, 1, 0] = a[i, 0, 1]
    a[i, 2, 0] = a[i, 0, 2]
    a[i, 2, 1] = a[i, 1, 2]


@njit(cache=True, inline="always")
def velocity_stage_one(i, scheme, body, state, gravity, h, clear_loads):
    """Kick of body i by every load but the contacts, and its world inverse inertia for the solver.

    v ← v + h M⁻¹ (F + M g) (ArtiSynth notes 0.9.1). ``scheme`` SPLITTING: L ← L + h τ at the current
    orientation (the gyroscopic term lives in the exact rotation of the position stage); otherwise ω is
    stepped by the explicit (SYMPLECTIC_EULER) or implicit (IMPLICIT_GYRO) Euler equation as in
    ``step_symplectic_euler``. Zeroes the load accumulators when ``clear_loads`` (the last sub-step).
    """
    mass, inv_mass, principal_q = body.mass, body.inv_mass, body.principal_q
    principal_moments, inv_principal_moments = body.principal_moments, body.inv_principal_moments
    q, v, w, force, torque = state.q, state.v, state.w, state.force, state.torque
    inv_inertia_world = state.inv_inertia_world
    if body.kinematic[i]:   # no load changes it; its I⁻¹ stays zero (set when it was added)
        if clear_loads:
            for k in range(3):
                force[i, k] = 0.0
                torque[i, k] = 0.0
        return
    for k in range(3):
        v[i, k] += h * inv_mass[i] * (force[i, k] + mass[i] * gravity[k])
    pw, px, py, pz = qmul_t(q[i, 0], q[i, 1], q[i, 2], q[i, 3],
                            principal_q[i, 0], principal_q[i, 1], principal_q[i, 2], principal_q[i, 3])
    a0, a1, a2 = qrot_inv_t(pw, px, py, pz, w[i, 0], w[i, 1], w[i, 2])
    t0, t1, t2 = qrot_inv_t(pw, px, py, pz, torque[i, 0], torque[i, 1], torque[i, 2])
    if clear_loads:
        for k in range(3):
            force[i, k] = 0.0
            torque[i, k] = 0.0
    k0, k1, k2 = inv_principal_moments[i, 0], inv_principal_moments[i, 1], inv_principal_moments[i, 2]
    if scheme == 0:  # Integrator.SPLITTING
        a0, a1, a2 = a0 + h * k0 * t0, a1 + h * k1 * t1, a2 + h * k2 * t2
    else:
        a0, a1, a2 = _kick_omega(scheme == 2, (principal_moments[i, 0], principal_moments[i, 1],
                                 principal_moments[i, 2]), (k0, k1, k2), (a0, a1, a2), (t0, t1, t2), h)
    w[i, 0], w[i, 1], w[i, 2] = qrot_t(pw, px, py, pz, a0, a1, a2)
    _store_inv_inertia_world(i, pw, px, py, pz, k0, k1, k2, inv_inertia_world)


@njit(cache=True, inline="always")
def position_stage_one(i, scheme, principal_q, principal_moments, inv_principal_moments, x, q, v, w, h):
    """Drift of body i with its (post-contact) velocities: x ← x + h v, and the orientation by the exact
    principal-axis splitting (SPLITTING, see ``step_splitting``) or the exponential map q ← exp(½ h ω) q."""
    for k in range(3):
        x[i, k] += h * v[i, k]
    pw, px, py, pz = qmul_t(q[i, 0], q[i, 1], q[i, 2], q[i, 3],
                            principal_q[i, 0], principal_q[i, 1], principal_q[i, 2], principal_q[i, 3])
    a0, a1, a2 = qrot_inv_t(pw, px, py, pz, w[i, 0], w[i, 1], w[i, 2])
    k0, k1, k2 = inv_principal_moments[i, 0], inv_principal_moments[i, 1], inv_principal_moments[i, 2]
    if scheme == 0:
        p0, p1, p2 = principal_moments[i, 0] * a0, principal_moments[i, 1] * a1, principal_moments[i, 2] * a2
        pw, px, py, pz, p0, p1, p2 = _free_rotation(pw, px, py, pz, p0, p1, p2, k0, k1, k2, h)
        a0, a1, a2 = p0 * k0, p1 * k1, p2 * k2
    else:
        dw, dx, dy, dz = exp_map_t(a0, a1, a2, h)
        pw, px, py, pz = qmul_t(pw, px, py, pz, dw, dx, dy, dz)
    _leave_principal(i, principal_q, pw, px, py, pz, a0, a1, a2, q, w)


@njit(cache=True, refcount=False)
def velocity_stage(scheme, body, state, gravity, h, clear_loads):
    """``velocity_stage_one`` for every body with ``state.awake`` True (serial). One call per stage, not one
    per body: the per-body work is inlined here once, and the arrays are bound once."""
    awake = state.awake
    for i in range(state.v.shape[0]):
        if awake[i]:
            velocity_stage_one(i, scheme, body, state, gravity, h, clear_loads)


@njit(cache=True, refcount=False)
def inertia_stage(principal_q, inv_principal_moments, q, inv_inertia_world, awake):
    """``inv_inertia_world`` of every body with ``awake`` (n,) True at its current orientation, as the velocity
    stage leaves it: for contact rows rebuilt after a position stage (contact_rows.refresh_rows)."""
    for i in range(q.shape[0]):
        if awake[i]:
            pw, px, py, pz = qmul_t(q[i, 0], q[i, 1], q[i, 2], q[i, 3],
                                    principal_q[i, 0], principal_q[i, 1], principal_q[i, 2], principal_q[i, 3])
            _store_inv_inertia_world(i, pw, px, py, pz, inv_principal_moments[i, 0], inv_principal_moments[i, 1],
                                     inv_principal_moments[i, 2], inv_inertia_world)


@njit(cache=True, refcount=False)
def position_stage(scheme, body, state, h):
    """``position_stage_one`` for every body with ``state.awake`` True, ``kinematic_move`` for a kinematic one
    (serial)."""
    principal_q, principal_moments, inv_principal_moments = (body.principal_q, body.principal_moments,
                                                             body.inv_principal_moments)
    x, q, v, w, awake = state.x, state.q, state.v, state.w, state.awake
    kinematic = body.kinematic
    for i in range(v.shape[0]):
        if kinematic[i]:
            kinematic_move(i, x, q, v, w, h)
        elif awake[i]:
            position_stage_one(i, scheme, principal_q, principal_moments, inv_principal_moments, x, q, v, w, h)
