"""Contact and constraint solvers.

``sequential_impulse`` is the time-stepping method's solver: projected Gauss–Seidel over the contact
rows of the step's buffer, inside kernels (ArtiSynth notes 0.15–0.16).

The rest is a standalone library with NumPy arrays in and a :class:`SolverResult` out (docs/solvers.md):

- :func:`lemke`: the LCP w = M x + q, 0 <= x ⊥ w >= 0, by Lemke's complementary pivoting with the
  lexicographic anti-cycling rule, exact up to rounding, n <= ``MAX_LEMKE_SIZE`` (ArtiSynth notes 0.3, 0.7–0.8);
- :func:`pgs`: projected Gauss–Seidel / SOR for the box-constrained LCP lo <= x <= hi (notes 0.15);
- :func:`apgd`: accelerated projected gradient with adaptive restart for the same problem with M symmetric
  positive semidefinite, min ½ xᵀMx + qᵀx over the box (notes 0.3);
- :func:`cg_qp`: seed 004's contact QP min ½ λᵀNλ + λᵀb, λ >= 0, by projected conjugate gradients (MPRGP);
- :func:`mlcp_to_lcp`: a mixed LCP with bilateral and unilateral rows reduced to a pure LCP (notes 0.6–0.7);
- :func:`lcp_residual`: the natural-map residual ‖x − mid(lo, x − w, hi)‖∞ that every solver reports;
- :func:`contact_problem`: a world's next step as matrices (N, b, bounds, the pyramid LCP) for any of these.
"""

from .contact_problem import ContactProblem, contact_problem
from .mlcp import mlcp_to_lcp
from .mprgp import cg_qp
from .pivoting import MAX_LEMKE_SIZE, lemke
from .projected import apgd, pgs
from .result import STATUSES, SolverResult, lcp_residual

__all__ = [
    "ContactProblem",
    "MAX_LEMKE_SIZE",
    "STATUSES",
    "SolverResult",
    "apgd",
    "cg_qp",
    "contact_problem",
    "lcp_residual",
    "lemke",
    "mlcp_to_lcp",
    "pgs",
]
