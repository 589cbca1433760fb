"""Bad input to every solver: a ValueError (or TypeError for a wrong kind of thing) naming the argument and
showing the value, raised before any work; and the shape of a SolverResult."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from tumble.solvers import STATUSES, SolverResult, apgd, cg_qp, lcp_residual, lemke, pgs

M = np.array([[2.0, 1.0], [1.0, 2.0]])
q = np.array([-1.0, 1.0])

ALL = {"lemke": lemke, "pgs": pgs, "apgd": apgd, "cg_qp": cg_qp}
ITERATIVE = {"pgs": pgs, "apgd": apgd, "cg_qp": cg_qp}
BOXED = {"pgs": pgs, "apgd": apgd}


def names(solver):
    return ("N", "b") if solver is cg_qp else ("M", "q")


@pytest.mark.parametrize("solver", ALL.values(), ids=ALL)
@pytest.mark.parametrize(("bad_M", "bad_q", "which", "pattern"), [
    (np.ones((2, 3)), q, 0, r"must be a square matrix, got shape \(2, 3\)"),
    (np.ones(4), q, 0, r"must have shape \(k, k\), got shape \(4,\)"),
    (M, np.ones(3), 1, r"must have length 2 to match .* got length 3"),
    (np.array([[np.nan, 1.0], [1.0, 2.0]]), q, 0, r"must be finite, got .*nan"),
    (M, np.array([np.inf, 0.0]), 1, r"must be finite, got .*inf"),
])
def test_bad_matrix_or_vector(solver, bad_M, bad_q, which, pattern):
    name = names(solver)[which]
    with pytest.raises(ValueError, match=rf"^{name} {pattern}"):
        solver(bad_M, bad_q)


@pytest.mark.parametrize("solver", ALL.values(), ids=ALL)
def test_not_numbers(solver):
    with pytest.raises(TypeError, match=rf"^{names(solver)[0]} must be an array of numbers"):
        solver("[[1, 0], [0, 1]]", q)
    with pytest.raises(TypeError, match=rf"^{names(solver)[1]} must be an array of numbers"):
        solver(M, None)


@pytest.mark.parametrize("solver", ITERATIVE.values(), ids=ITERATIVE)
@pytest.mark.parametrize(("value", "error", "pattern"), [
    (-1, ValueError, r"iterations must be >= 0, got -1"),
    (2.5, TypeError, r"iterations must be an integer >= 0, got 2.5"),
    ("10", TypeError, r"iterations must be an integer >= 0, got '10'"),
    (True, TypeError, r"iterations must be an integer >= 0, got True"),
])
def test_bad_iterations(solver, value, error, pattern):
    with pytest.raises(error, match=pattern):
        solver(M, q, iterations=value)


@pytest.mark.parametrize(("value", "error", "pattern"), [
    (-1, ValueError, r"max_pivots must be >= 0, got -1"),
    (1.0, TypeError, r"max_pivots must be an integer >= 0, got 1.0"),
])
def test_bad_max_pivots(value, error, pattern):
    with pytest.raises(error, match=pattern):
        lemke(M, q, max_pivots=value)


@pytest.mark.parametrize("solver", ITERATIVE.values(), ids=ITERATIVE)
@pytest.mark.parametrize(("value", "error", "pattern"), [
    (-1e-8, ValueError, r"tol must be non-negative, got -1e-08"),
    (np.nan, ValueError, r"tol must be finite, got nan"),
    (np.inf, ValueError, r"tol must be finite, got inf"),
    ("1e-8", TypeError, r"tol must be a real number, got '1e-8'"),
])
def test_bad_tol(solver, value, error, pattern):
    with pytest.raises(error, match=pattern):
        solver(M, q, tol=value)


@pytest.mark.parametrize("value", [0.0, 2.0, -0.5, 2.5])
def test_bad_omega(value):
    with pytest.raises(ValueError, match=rf"omega must be in the open interval \(0, 2\), got {value}"):
        pgs(M, q, omega=value)


@pytest.mark.parametrize("solver", BOXED.values(), ids=BOXED)
@pytest.mark.parametrize(("lo", "hi", "pattern"), [
    ([0.0, 1.0], [1.0, 0.5], r"lo must be <= hi, got lo\[1\] = 1.0 > hi\[1\] = 0.5"),
    ([0.0, np.nan], None, r"lo must not contain NaN"),
    (None, [np.nan, 1.0], r"hi must not contain NaN"),
    ([0.0, np.inf], None, r"lo must be < \+inf, got lo\[1\] = inf"),
    (None, -np.inf, r"hi must be > -inf, got hi\[0\] = -inf"),
    ([0.0, 0.0, 0.0], None, r"lo must be a number or have shape \(2,\), got shape \(3,\)"),
])
def test_bad_bounds(solver, lo, hi, pattern):
    with pytest.raises(ValueError, match=pattern):
        solver(M, q, lo=lo, hi=hi)


@pytest.mark.parametrize("solver", ITERATIVE.values(), ids=ITERATIVE)
def test_bad_start(solver):
    with pytest.raises(ValueError, match=r"x0 must have shape \(2,\), got shape \(3,\)"):
        solver(M, q, x0=[0.0, 0.0, 0.0])
    with pytest.raises(ValueError, match=r"x0 must be finite"):
        solver(M, q, x0=[0.0, np.nan])


@pytest.mark.parametrize("solver", [apgd, cg_qp], ids=["apgd", "cg_qp"])
def test_symmetry_required(solver):
    name = names(solver)[0]
    with pytest.raises(ValueError, match=rf"{name} must be symmetric, got {name}\[[01], [01]\] = "):
        solver(np.array([[2.0, 1.0], [0.0, 2.0]]), q)


def test_pgs_needs_a_positive_diagonal():
    with pytest.raises(ValueError, match=r"M must have a positive diagonal for pgs, got M\[1, 1\] = 0.0"):
        pgs(np.array([[1.0, 0.0], [0.0, 0.0]]), q)


def test_lcp_residual():
    assert lcp_residual(M, q, [0.5, 0.0]) == 0.0               # w = (0, 1.5): a solution
    assert lcp_residual(M, q, [0.0, 0.0]) == 1.0               # min(0, −1) = −1
    assert lcp_residual(M, q, [2.0, 0.0], lo=-1.0, hi=2.0) == pytest.approx(3.0)   # at hi with w = 3 > 0
    with pytest.raises(ValueError, match=r"x must have shape \(2,\)"):
        lcp_residual(M, q, [0.0])
    with pytest.raises(ValueError, match=r"lo must be <= hi"):
        lcp_residual(M, q, [0.0, 0.0], lo=1.0, hi=0.0)


def test_result_is_frozen_and_documented():
    r = pgs(M, q)
    assert isinstance(r, SolverResult) and r.status in STATUSES and r.ok == (r.status == "converged")
    assert isinstance(r.iterations, int) and isinstance(r.residual, float)
    with pytest.raises(dataclasses.FrozenInstanceError):
        r.ok = False
    with pytest.raises(ValueError):
        r.x[0] = 1.0                                            # the solution array is read-only too
