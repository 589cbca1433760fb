"""The step's guard: a step that would leave a body's state non-finite is undone and reported.

A step can overflow on legal but extreme input (a dt of 1e300, a load of 1e308 N, a spring stiff beyond
what the step can carry) and produce inf or NaN in x, q, v or ω. Without a guard the state stays non-finite
and the next step fails somewhere else (an AABB "NaN or inverted") or goes on silently. With it the step
raises ``NonFiniteStep`` (a ``FloatingPointError``) naming the body, the field and the stage, with the
bodies' x, q, v, ω and the world's time as they were before the step.

Cost: the per-body kernels keep each body's x, q, v, ω of the start of the step in the state's
``*_before`` rows as they read them, and test their results for finiteness as they write them (the fused
free-step kernels, integration/integrate.py), or the contact step saves them at its start and tests them at
its end (one pass over the bodies, methods/timestepping.py); the other methods' steps, costlier by far, are
wrapped by ``save_bodies`` and ``first_non_finite`` (step.py).

What a failed step leaves: x, q, v, ω and the time as before the step; the loads accumulated for it (force
callbacks, ``apply_force``) dropped, as a step drops them; the contacts' warm start the last good step's and
the joints' carried impulses cleared (``after_undo`` of the method). The sleep flags stay as the step's
islands pass set them (a body it put to sleep had come to rest before the failure).
"""

from __future__ import annotations

import math

from ..jit import njit

FIELDS = ("position x", "orientation q", "velocity v", "angular velocity ω")
"""The fields ``first_non_finite`` codes as 0..3, in the order it tests them."""


class NonFiniteStep(FloatingPointError):
    """A step that would have left a body's state non-finite; the world is as before the step.

    Attributes: ``body`` (index), ``name`` (the body's name or None), ``field`` (one of ``FIELDS``),
    ``stage`` (where in the step), ``time`` [s] (the world's time, the step's start).
    """

    def __init__(self, body: int, name: str | None, field: str, stage: str, time: float, dt: float) -> None:
        self.body, self.name, self.field, self.stage, self.time = body, name, field, stage, time
        if body < 0:   # a robot's coordinate (robots/step.py): name is "ROBOT/JOINT"
            label = "a robot" if name is None else f"robot joint {name!r}"
        else:
            label = f"body {body}" if name is None else f"body {name!r} (index {body})"
        super().__init__(
            f"the step of dt={dt!r} s at t={time!r} s made the {field} of {label} non-finite in the {stage}; "
            f"the world's state and time are as before the step (a smaller dt, smaller loads or a stiffness "
            f"the step can carry avoid it)")


@njit(cache=True, forceinline=True, refcount=False)
def save_row(i, state):
    """Keep body i's x, q, v, ω (``state``: BodyState) in its ``*_before`` rows."""
    for k in range(3):
        state.x_before[i, k] = state.x[i, k]
        state.v_before[i, k] = state.v[i, k]
        state.w_before[i, k] = state.w[i, k]
    for k in range(4):
        state.q_before[i, k] = state.q[i, k]


@njit(cache=True, forceinline=True, refcount=False)
def row_non_finite(i, state):
    """0..3: the first of x, q, v, ω of body i with a non-finite entry (``FIELDS``); -1 when all are finite."""
    x, q, v, w = state.x, state.q, state.v, state.w
    if not (math.isfinite(x[i, 0]) and math.isfinite(x[i, 1]) and math.isfinite(x[i, 2])):
        return 0
    if not (math.isfinite(q[i, 0]) and math.isfinite(q[i, 1]) and math.isfinite(q[i, 2])
            and math.isfinite(q[i, 3])):
        return 1
    if not (math.isfinite(v[i, 0]) and math.isfinite(v[i, 1]) and math.isfinite(v[i, 2])):
        return 2
    if not (math.isfinite(w[i, 0]) and math.isfinite(w[i, 1]) and math.isfinite(w[i, 2])):
        return 3
    return -1


@njit(cache=True, forceinline=True, refcount=False)
def all_finite(a, b, c, d, e, f, g):
    """Whether seven floats are all finite: a · 0 is 0 for a finite a and NaN for ±inf or NaN, and a
    product with 0 never overflows, so one comparison of the sum tests the seven (FMA-contracted: seven
    operations). The fused free steps test the values they are about to store with it, from registers."""
    return (a * 0.0 + b * 0.0 + c * 0.0 + d * 0.0 + e * 0.0 + f * 0.0 + g * 0.0) == 0.0


@njit(cache=True, refcount=False)
def save_bodies(state):
    """``save_row`` for every body (``state``: BodyState)."""
    for i in range(state.x.shape[0]):
        save_row(i, state)


@njit(cache=True, refcount=False)
def first_non_finite(state):
    """4 i + f for the first body i with a non-finite field f (``FIELDS``), or -1 (``state``: BodyState)."""
    for i in range(state.x.shape[0]):
        f = row_non_finite(i, state)
        if f >= 0:
            return 4 * i + f
    return -1


@njit(cache=True, refcount=False)
def restore_bodies(state):
    """Put back every body's x, q, v, ω from its ``*_before`` rows and drop its loads (``state``: BodyState)."""
    for i in range(state.x.shape[0]):
        for k in range(3):
            state.x[i, k] = state.x_before[i, k]
            state.v[i, k] = state.v_before[i, k]
            state.w[i, k] = state.w_before[i, k]
            state.force[i, k] = 0.0
            state.torque[i, k] = 0.0
        for k in range(4):
            state.q[i, k] = state.q_before[i, k]


def undo(state: object, names: list[str | None], stage: str, time: float, dt: float) -> NonFiniteStep:
    """The error of a step that went non-finite, after putting the bodies back (``restore_bodies``):
    ``state`` the BodyState, ``names`` the bodies' names, ``stage`` where in the step."""
    code = int(first_non_finite(state))
    body, field = (code // 4, FIELDS[code % 4]) if code >= 0 else (-1, "state")
    restore_bodies(state)
    return NonFiniteStep(body, names[body] if body >= 0 else None, field, stage, time, dt)


__all__ = ["FIELDS", "NonFiniteStep", "first_non_finite", "restore_bodies", "all_finite", "row_non_finite",
           "save_bodies", "save_row", "undo"]
