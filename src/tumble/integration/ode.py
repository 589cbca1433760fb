"""The ODE solver interface of Baraff I section 3: ``ode(y0, t0, t1, dydt) -> y1``.

Baraff's C signature is ``ode(y0, yend, len, t0, t1, dydt)``; here y0 is a (len,) array and the result is
returned. ``dydt(t, y) -> ydot`` is any function of the time [s] and the state. The event-driven method
and the world's "euler", "rk4" and "adaptive" integrators go through this one interface.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
from scipy.integrate import solve_ivp

from .. import _checks

Derivative = Callable[[float, np.ndarray], np.ndarray]

METHODS = ("euler", "rk4", "adaptive")

MAX_ADAPTIVE_EVALUATIONS = 1_000_000
"""The most derivative evaluations one "adaptive" call may take (DOP853 takes 12 per step: about 83,000
steps). A span far beyond the motion's time scales (a step of 1e200 s of a spinning body) would otherwise
run for ever; it raises RuntimeError instead."""


class _TooManyEvaluations(Exception):
    pass


def ode(y0: np.ndarray, t0: float, t1: float, dydt: Derivative, *, method: str = "rk4",
        max_step: float | None = None, rtol: float = 1e-10, atol: float = 1e-12,
        ydot0: np.ndarray | None = None) -> np.ndarray:
    """Integrate dy/dt = dydt(t, y) from t0 to t1 [s]; returns y(t1) (same shape as y0).

    Args:
        y0: (k,) float64 state at t0.
        t0, t1: start and end times [s], t1 >= t0.
        dydt: the derivative function.
        method: "euler" (explicit Euler) or "rk4" (classical Runge–Kutta), both in equal substeps no
            longer than ``max_step`` (one step over [t0, t1] if None); or "adaptive": SciPy's
            ``solve_ivp`` with DOP853 (order 8, error control by ``rtol``/``atol``).
        max_step: the longest substep [s] for "euler"/"rk4"; also an upper bound for "adaptive".
        ydot0: dydt(t0, y0) (k,) when the caller has it already: "euler" and "rk4" take it as their first
            substep's first stage instead of evaluating it (a caller integrating from one y0 over several
            spans, as the event method's root searches do, evaluates it once); ignored by "adaptive".
    """
    _checks.choice("method", method, dict.fromkeys(METHODS))
    t0 = _checks.real("t0", t0)
    t1 = _checks.real("t1", t1)
    if t1 < t0:
        raise ValueError(f"t1 must be >= t0, got t0={t0!r}, t1={t1!r}")
    y = np.array(y0, dtype=np.float64)
    if t1 == t0:
        return y
    span = t1 - t0
    if method == "adaptive":
        evaluations = 0

        def counted(t: float, y: np.ndarray) -> np.ndarray:
            nonlocal evaluations
            evaluations += 1
            if evaluations > MAX_ADAPTIVE_EVALUATIONS:
                raise _TooManyEvaluations
            return dydt(t, y)

        try:
            sol = solve_ivp(counted, (t0, t1), y, method="DOP853", rtol=rtol, atol=atol,
                            max_step=np.inf if max_step is None else _checks.positive("max_step", max_step))
        except _TooManyEvaluations:
            raise RuntimeError(f"adaptive integration from t={t0!r} to t={t1!r} s took more than "
                               f"MAX_ADAPTIVE_EVALUATIONS = {MAX_ADAPTIVE_EVALUATIONS} derivative evaluations; "
                               f"integrate a shorter span") from None
        if not sol.success:
            raise RuntimeError(f"adaptive integration failed between t={t0} and t={t1}: {sol.message}")
        return sol.y[:, -1]
    steps = 1 if max_step is None else max(1, math.ceil(span / _checks.positive("max_step", max_step) - 1e-9))
    h = span / steps
    if ydot0 is not None and np.shape(ydot0) != y.shape:
        raise ValueError(f"ydot0 must have the shape of y0 {y.shape}, got {np.shape(ydot0)}")
    for k in range(steps):
        t = t0 + k * h
        rate = ydot0 if k == 0 and ydot0 is not None else None
        if method == "euler":
            y = y + h * (dydt(t, y) if rate is None else rate)
        else:
            k1 = dydt(t, y) if rate is None else rate
            k2 = dydt(t + 0.5 * h, y + 0.5 * h * k1)
            k3 = dydt(t + 0.5 * h, y + 0.5 * h * k2)
            k4 = dydt(t + h, y + h * k3)
            y = y + (h / 6.0) * (k1 + 2.0 * k2 + 2.0 * k3 + k4)
    return y
