"""Baraff's state vector Y and its derivative (Baraff I sections 2.11 and 3, with quaternions, section 4).

Per body, 13 numbers: Y = (x (3), q (4), P (3), L (3)), bodies one after another, so Y has shape (13 n,).
Its derivative (Baraff I (2-43)) is d/dt Y = (v, ½ ω q, F, τ) with the auxiliary quantities
v = P / M, R = R(normalize(q)), I⁻¹ = R Ibody⁻¹ Rᵀ (2-39), ω = I⁻¹ L (2-41). F includes gravity M g.
"""

from __future__ import annotations

import numpy as np
from numba import prange

from ..jit import njit
from ..math3d import qmul_t, qrot_inv_t, qrot_t

STATE_SIZE = 13


@njit(cache=True, forceinline=True, refcount=False)
def _world_inertia_times(qw, qx, qy, qz, Ibody, ax, ay, az):
    """(R Ibody Rᵀ) a for a unit quaternion q and a (3, 3) body-frame matrix ``Ibody`` (2-39)."""
    bx, by, bz = qrot_inv_t(qw, qx, qy, qz, ax, ay, az)
    cx = Ibody[0, 0] * bx + Ibody[0, 1] * by + Ibody[0, 2] * bz
    cy = Ibody[1, 0] * bx + Ibody[1, 1] * by + Ibody[1, 2] * bz
    cz = Ibody[2, 0] * bx + Ibody[2, 1] * by + Ibody[2, 2] * bz
    return qrot_t(qw, qx, qy, qz, cx, cy, cz)


@njit(cache=True, forceinline=True, refcount=False)
def _pack(i, mass, inertia_body, x, q, v, w, y_out):
    o = STATE_SIZE * i
    for k in range(3):
        y_out[o + k] = x[i, k]
        y_out[o + 7 + k] = mass[i] * v[i, k]
    for k in range(4):
        y_out[o + 3 + k] = q[i, k]
    Lx, Ly, Lz = _world_inertia_times(q[i, 0], q[i, 1], q[i, 2], q[i, 3], inertia_body[i], w[i, 0], w[i, 1], w[i, 2])
    y_out[o + 10] = Lx
    y_out[o + 11] = Ly
    y_out[o + 12] = Lz


@njit(cache=True, forceinline=True, refcount=False)
def _unpack(i, inv_mass, inv_inertia_body, y, x_out, q_out, v_out, w_out):
    o = STATE_SIZE * i
    n = np.sqrt(y[o + 3] ** 2 + y[o + 4] ** 2 + y[o + 5] ** 2 + y[o + 6] ** 2)
    qw, qx, qy, qz = y[o + 3] / n, y[o + 4] / n, y[o + 5] / n, y[o + 6] / n
    q_out[i, 0] = qw
    q_out[i, 1] = qx
    q_out[i, 2] = qy
    q_out[i, 3] = qz
    for k in range(3):
        x_out[i, k] = y[o + k]
        v_out[i, k] = inv_mass[i] * y[o + 7 + k]
    wx, wy, wz = _world_inertia_times(qw, qx, qy, qz, inv_inertia_body[i], y[o + 10], y[o + 11], y[o + 12])
    w_out[i, 0] = wx
    w_out[i, 1] = wy
    w_out[i, 2] = wz


@njit(cache=True, forceinline=True, refcount=False)
def _derivative(i, mass, inv_mass, inv_inertia_body, force, torque, gravity, y, ydot_out):
    o = STATE_SIZE * i
    n = np.sqrt(y[o + 3] ** 2 + y[o + 4] ** 2 + y[o + 5] ** 2 + y[o + 6] ** 2)
    qw, qx, qy, qz = y[o + 3] / n, y[o + 4] / n, y[o + 5] / n, y[o + 6] / n
    wx, wy, wz = _world_inertia_times(qw, qx, qy, qz, inv_inertia_body[i], y[o + 10], y[o + 11], y[o + 12])
    for k in range(3):
        ydot_out[o + k] = inv_mass[i] * y[o + 7 + k]                      # ẋ = v = P/M
        ydot_out[o + 7 + k] = force[i, k] + mass[i] * gravity[k]          # Ṗ = F
        ydot_out[o + 10 + k] = torque[i, k]                               # L̇ = τ
    # q̇ = ½ [0, ω] q, on the stored (unnormalized) q as Baraff I section 4 does
    a, b, c, d = qmul_t(0.0, wx, wy, wz, y[o + 3], y[o + 4], y[o + 5], y[o + 6])
    ydot_out[o + 3] = 0.5 * a
    ydot_out[o + 4] = 0.5 * b
    ydot_out[o + 5] = 0.5 * c
    ydot_out[o + 6] = 0.5 * d


@njit(cache=True, parallel=True)
def bodies_to_array(mass, inertia_body, x, q, v, w, y_out):
    """Baraff I section 3 ``Bodies_to_Array``: pack (x, q, P = M v, L = I ω) of n bodies into y (13 n,)."""
    for i in prange(x.shape[0]):
        _pack(i, mass, inertia_body, x, q, v, w, y_out)


@njit(cache=True, parallel=True)
def array_to_bodies(inv_mass, inv_inertia_body, y, x_out, q_out, v_out, w_out):
    """Baraff I section 3 ``Array_to_Bodies`` with the quaternion changes of section 4: unpack y and
    compute the auxiliary v = P/M and ω = I⁻¹ L with R from the normalized q. q is stored normalized."""
    for i in prange(x_out.shape[0]):
        _unpack(i, inv_mass, inv_inertia_body, y, x_out, q_out, v_out, w_out)


@njit(cache=True, parallel=True)
def state_derivative(mass, inv_mass, inv_inertia_body, force, torque, gravity, y, ydot_out):
    """dY/dt of Baraff I (2-43) with q̇ = ½ ω q (4-2), for all bodies at once.

    F = force + M g and τ = torque are held constant over the call (the accumulated external loads).
    Shapes: y, ydot_out (13 n,); force, torque (n, 3) world; gravity (3,).
    """
    for i in prange(mass.shape[0]):
        _derivative(i, mass, inv_mass, inv_inertia_body, force, torque, gravity, y, ydot_out)


# The same, one body after another: for a few bodies, which a parallel region's start costs more than (the
# event method's scenes, evaluated thousands of times a frame). ``state_derivative_serial`` leaves the rows
# of fixed bodies (inv_mass 0) zero.
@njit(cache=True)
def bodies_to_array_serial(mass, inertia_body, x, q, v, w, y_out):
    """``bodies_to_array`` in one thread."""
    for i in range(x.shape[0]):
        _pack(i, mass, inertia_body, x, q, v, w, y_out)


@njit(cache=True)
def array_to_bodies_serial(inv_mass, inv_inertia_body, y, x_out, q_out, v_out, w_out):
    """``array_to_bodies`` in one thread."""
    for i in range(x_out.shape[0]):
        _unpack(i, inv_mass, inv_inertia_body, y, x_out, q_out, v_out, w_out)


@njit(cache=True)
def state_derivative_serial(mass, inv_mass, inv_inertia_body, force, torque, gravity, y, ydot_out):
    """``state_derivative`` in one thread, zero for fixed bodies (inv_mass 0: Ṗ would be their share of the
    loads, which moves nothing)."""
    for i in range(mass.shape[0]):
        if inv_mass[i] == 0.0:
            for k in range(STATE_SIZE):
                ydot_out[STATE_SIZE * i + k] = 0.0
        else:
            _derivative(i, mass, inv_mass, inv_inertia_body, force, torque, gravity, y, ydot_out)
