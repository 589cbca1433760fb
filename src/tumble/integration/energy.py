"""Energy and momentum of all bodies in one pass (serial, so the summation order is fixed)."""

from __future__ import annotations

from ..jit import njit
from .state_vector import _world_inertia_times

# Layout of the ``out`` vector of ``energy_momentum``.
KINETIC, POTENTIAL, MOMENTUM, ANGULAR_MOMENTUM = 0, 1, slice(2, 5), slice(5, 8)
SIZE = 8


@njit(cache=True)
def energy_momentum(mass, inv_mass, inertia_body, x, q, v, w, gravity, point, out):
    """Totals over all bodies, written to out (8,):
    out[0] kinetic energy Σ ½ (M |v|² + ωᵀ I ω) [J] (Baraff II (C-3));
    out[1] potential energy −Σ M g·x of the moving bodies [J] (zero at the world origin);
    out[2:5] linear momentum Σ M v [kg m/s] (Baraff I (2-27));
    out[5:8] angular momentum about ``point``: Σ (x − point) × M v + I ω [kg m²/s] (Baraff I 2.9).
    Shapes: mass, inv_mass (n,); inertia_body (n,3,3); x, v, w (n,3) world; q (n,4); gravity, point (3,).
    """
    for k in range(SIZE):
        out[k] = 0.0
    for i in range(mass.shape[0]):
        m = mass[i]
        vx, vy, vz = v[i, 0], v[i, 1], v[i, 2]
        Lx, Ly, Lz = _world_inertia_times(q[i, 0], q[i, 1], q[i, 2], q[i, 3], inertia_body[i],
                                          w[i, 0], w[i, 1], w[i, 2])
        out[0] += 0.5 * (m * (vx * vx + vy * vy + vz * vz) + w[i, 0] * Lx + w[i, 1] * Ly + w[i, 2] * Lz)
        if inv_mass[i] > 0.0:
            out[1] -= m * (gravity[0] * x[i, 0] + gravity[1] * x[i, 1] + gravity[2] * x[i, 2])
        out[2] += m * vx
        out[3] += m * vy
        out[4] += m * vz
        rx, ry, rz = x[i, 0] - point[0], x[i, 1] - point[1], x[i, 2] - point[2]
        out[5] += ry * m * vz - rz * m * vy + Lx
        out[6] += rz * m * vx - rx * m * vz + Ly
        out[7] += rx * m * vy - ry * m * vx + Lz
