"""The solvers work on their own: a random contact-like LCP (w = M x + q, x >= 0, w >= 0, x·w = 0) solved
by Lemke's pivoting exactly and by projected Gauss–Seidel and APGD iteratively."""

import numpy as np

import tumble as tb

rng = np.random.default_rng(0)
A = rng.normal(size=(12, 8))
M = A @ A.T + 1e-3 * np.eye(12)                                  # positive definite, like N = Dᵀ M⁻¹ D
q = rng.normal(size=12)

exact = tb.solvers.lemke(M, q)
for name, result in (("lemke", exact), ("pgs", tb.solvers.pgs(M, q, iterations=2000, tol=1e-10)),
                     ("apgd", tb.solvers.apgd(M, q, iterations=2000, tol=1e-10))):
    print(f"{name:5s} {result.status:15s} iterations {result.iterations:5d}  residual {result.residual:.1e}  "
          f"|x - x_lemke| {np.abs(result.x - exact.x).max():.1e}")
