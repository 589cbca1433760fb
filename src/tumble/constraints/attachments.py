"""Attachments by null-space reduction (ArtiSynth notes 0.17–0.19): a point mass or a whole body made part of a
master body, so that it moves with it exactly and carries no constraint rows.

An attached component's velocity is fixed by its master's, u_a = G u_m (0.18) with G = [[1, −[r]×], [0, 1]]
for a point or frame at r from the master's origin. The reduction (0.20–0.23) leaves the master with the
mass matrix M̃ = M_m + Gᵀ M_a G and the load f̃ = f_m + Gᵀ (f_a − M_a Ġ u_m): the attached mass adds to the
master's, its inertia by the parallel-axis (point-mass) term, and Ġ u_m = ω × (ω × r) is the fictitious
centripetal term (0.19). tumble's bodies move about their centre of mass, where the mass matrix is
block-diagonal; there M̃ is the master's mass properties recombined about the new common COM (Steiner,
``MassProperties.__add__``) and
the fictitious term is exactly the one the free rigid motion about the COM already contains. So an
attachment recombines the master's mass properties, moves its frame origin to the new COM (its shapes and
joint anchors keep their place in the world), and hands the attached body's shapes to the master; the
attached body's pose and velocity are then the master's transported (``sync_attached``, each step).

Attachments to attached bodies form a DAG (0.18): every attachment is resolved to the root master at once,
and the reduction does not depend on the order of attachment (0.17).
"""

from __future__ import annotations

from ..jit import njit
from ..math3d import qmul_t, qrot_t


@njit(cache=True)
def sync_attached(attached, root, local_x, local_q, x, q, v, w):
    """Pose and velocity of every attached body from its root master: x = x_r + R_r r, q = q_r q_l,
    v = v_r + ω_r × (x − x_r), ω = ω_r. attached, root (k,) body rows; local_x (k, 3) [m] and local_q (k, 4):
    the attached body's COM and orientation in the root's body frame."""
    for k in range(attached.shape[0]):
        i, r = attached[k], root[k]
        dx, dy, dz = qrot_t(q[r, 0], q[r, 1], q[r, 2], q[r, 3], local_x[k, 0], local_x[k, 1], local_x[k, 2])
        x[i, 0], x[i, 1], x[i, 2] = x[r, 0] + dx, x[r, 1] + dy, x[r, 2] + dz
        q[i, 0], q[i, 1], q[i, 2], q[i, 3] = qmul_t(q[r, 0], q[r, 1], q[r, 2], q[r, 3], local_q[k, 0], local_q[k, 1],
                                                    local_q[k, 2], local_q[k, 3])
        wx, wy, wz = w[r, 0], w[r, 1], w[r, 2]
        v[i, 0] = v[r, 0] + wy * dz - wz * dy
        v[i, 1] = v[r, 1] + wz * dx - wx * dz
        v[i, 2] = v[r, 2] + wx * dy - wy * dx
        w[i, 0], w[i, 1], w[i, 2] = wx, wy, wz
