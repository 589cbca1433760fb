"""Shared helpers of the spring tests: random states and central finite differences of the loads."""

import numpy as np

from tumble.forces import spring_loads


def random_quat(rng, n):
    q = rng.normal(size=(n, 4))
    return q / np.linalg.norm(q, axis=1, keepdims=True)


def rotvec_quat(phi):
    """exp of a world rotation vector as a quaternion (w, x, y, z)."""
    t = np.linalg.norm(phi)
    if t == 0.0:
        return np.array([1.0, 0.0, 0.0, 0.0])
    return np.concatenate([[np.cos(t / 2)], np.sin(t / 2) * phi / t])


def qmul(a, b):
    return np.array([a[0] * b[0] - a[1:] @ b[1:], *(a[0] * b[1:] + b[0] * a[1:] + np.cross(a[1:], b[1:]))])


def loads(springs, x, q, v, w):
    """Generalized loads (6n,): per body (f, τ), world frame."""
    f = np.zeros_like(x)
    t = np.zeros_like(x)
    spring_loads(springs, x, q, v, w, f, t)
    return np.concatenate([f, t], axis=1).ravel()


def fd_jacobians(springs, x, q, v, w, eps=1e-6):
    """Central differences of the loads: K w.r.t. (δx, δθ) with q ← exp(δθ) q, D w.r.t. (v, ω)."""
    n = x.shape[0]
    K = np.zeros((6 * n, 6 * n))
    D = np.zeros((6 * n, 6 * n))
    for i in range(n):
        for k in range(3):
            cols = []
            for sgn in (1.0, -1.0):
                xp = x.copy()
                xp[i, k] += sgn * eps
                cols.append(loads(springs, xp, q, v, w))
            K[:, 6 * i + k] = (cols[0] - cols[1]) / (2 * eps)
            cols = []
            for sgn in (1.0, -1.0):
                qp = q.copy()
                e = np.zeros(3)
                e[k] = sgn * eps
                qp[i] = qmul(rotvec_quat(e), q[i])
                cols.append(loads(springs, x, qp, v, w))
            K[:, 6 * i + 3 + k] = (cols[0] - cols[1]) / (2 * eps)
            for arr, off in ((v, 0), (w, 3)):
                cols = []
                for sgn in (1.0, -1.0):
                    ap = arr.copy()
                    ap[i, k] += sgn * eps
                    args = (ap, w) if arr is v else (v, ap)
                    cols.append(loads(springs, x, q, *args))
                D[:, 6 * i + off + k] = (cols[0] - cols[1]) / (2 * eps)
    return K, D
