"""One step, in the order every method shares; the method's own stages are in its module (methods/).

    forces       the user's force callbacks add their loads for the step (``World.add_force``)
    advance      the world's method moves the bodies through its stages:
                   time-stepping (methods/timestepping.py): detection → islands → springs → velocity stage
                     → contact and joint rows → solve → position stage → correction → restitution
                   ODE integrators (methods/ode.py): detection → contact kick → joints' kick → ODE with the
                     joints' constraint forces → projection
                   implicit integrators (methods/implicit.py): detection → the implicit step of the springs
                     (with contacts or joints: their linearly implicit loads, then the time-stepping stages)
                   event-driven (methods/event.py): impacts → resting contact forces in the ODE → collision
                     times by root finding
    attachments  attached bodies follow their root masters (constraints/attachments.py)

The method is chosen once, when the world is made or its integrator changes (``method_for``).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import numpy as np

from .collision.contacts import ContactBuffers
from .constraints.attachments import sync_attached
from .conventions import Integrator
from .integration.guard import NonFiniteStep, first_non_finite, restore_bodies, save_bodies, undo
from .model.model import Model
from .model.state import State
from .solvers.result import STATUS_NAMES


class StepStats:
    """Figures of the last step, kept in one array that each step overwrites (no allocation)."""

    CONTACTS, SWEEPS, RESIDUAL, SECONDS_DETECT, SECONDS_SOLVE, SECONDS_STEP, SLEEPING, STATUS = range(8)
    SOLVER_SIZE = 5
    """Figures the contact step's kernel writes (methods/timestepping.py's STAT_*)."""

    def __init__(self) -> None:
        self.values = np.zeros(8)
        self.solver_out = np.zeros(self.SOLVER_SIZE)

    @property
    def contacts(self) -> int:
        """Contact points the step solved."""
        return int(self.values[self.CONTACTS])

    @property
    def iterations(self) -> int:
        """Iterations of the velocity solve, summed over the sub-steps: Gauss–Seidel sweeps, APGD or CG
        iterations, or Lemke's pivots (at most ``iterations`` per sub-step; fewer once under ``tolerance``)."""
        return int(self.values[self.SWEEPS])

    @property
    def status(self) -> str:
        """How the step's solves ended, the worst of its sub-steps: "failed" (some sub-step's answer was
        not applied and Gauss–Seidel sweeps ran instead), else "max_iterations", else "converged"
        (solvers/result.py); "converged" for a step without contacts."""
        return STATUS_NAMES[int(self.values[self.STATUS])]

    @property
    def sleeping(self) -> int:
        """Bodies asleep during the step (constraints/islands.py)."""
        return int(self.values[self.SLEEPING])

    @property
    def residual(self) -> float:
        """[m/s] the last sub-step's residual: for "pgs" the largest change of a normal relative velocity in
        the last sweep; for the other solvers the natural-map residual in velocity units (solvers/rows.py)."""
        return float(self.values[self.RESIDUAL])

    def as_dict(self) -> dict[str, float]:
        """All figures: contacts, iterations, residual [m/s], status, sleeping bodies, and seconds spent in
        detection, in the velocity–solve–position kernel and in the whole step."""
        v = self.values
        return {"contacts": self.contacts, "iterations": self.iterations, "residual": self.residual,
                "status": self.status, "sleeping": self.sleeping,
                "seconds_detection": float(v[self.SECONDS_DETECT]), "seconds_solve": float(v[self.SECONDS_SOLVE]),
                "seconds_step": float(v[self.SECONDS_STEP])}

    def __repr__(self) -> str:
        return f"StepStats({self.as_dict()})"


def step(model: Model, state: State, contacts: ContactBuffers, method: Any, stats: StepStats, dt: float,
         forces: Callable[[], None]) -> None:
    """Advance by ``dt`` [s] (validated): the stages of the module docstring. ``forces`` runs the user's force
    callbacks; ``method`` is the world's (``method_for``)."""
    t0 = time.perf_counter()
    stats.values.fill(0.0)
    loads = method.loads_before_forces(state)
    forces()
    if method.guards_state:
        method.advance(model, state, contacts, dt, stats, loads)
    else:
        _guarded_advance(model, state, contacts, method, stats, dt, loads)
    attached = model.attachments
    if len(attached):
        body = state.bodies()
        sync_attached(attached.body, attached.root, attached.position, attached.orientation, body.x, body.q,
                      body.v, body.w)
    state.time += dt
    stats.values[StepStats.SECONDS_STEP] = time.perf_counter() - t0


def _guarded_advance(model: Model, state: State, contacts: ContactBuffers, method: Any, stats: StepStats, dt: float,
                     loads: Any) -> None:
    """``method.advance`` with the bodies saved before and checked after (integration/guard.py), for the
    methods whose steps do not check themselves: a step that leaves a body non-finite, or fails on one (the
    event method's "M must be finite"), is undone and raises ``NonFiniteStep``; a step that fails otherwise
    is undone and its error raised."""
    st = state.bodies()
    save_bodies(st)
    cause = None
    try:
        with np.errstate(over="ignore", invalid="ignore"):   # an overflow is reported below, once
            method.advance(model, state, contacts, dt, stats, loads)
    except Exception as error:
        # NonFiniteStep: found before it was written (the ODE's Y); another error: the step failed part way
        # (on a non-finite value, or otherwise). Either way what the step changed goes back.
        if isinstance(error, NonFiniteStep) or first_non_finite(st) < 0:
            restore_bodies(st)
            method.after_undo(model, contacts)
            raise
        cause = error
    else:
        if first_non_finite(st) < 0:
            return
    failure = undo(st, model.names, f"{method.name} step", state.time, dt)
    method.after_undo(model, contacts)
    raise failure from cause


def method_for(model: Model, state: State) -> Any:
    """The method that advances a world of ``model`` and ``state``: event-driven when the model has event
    settings, else by its integrator (time-stepping for splitting, symplectic_euler and implicit_gyro)."""
    from .methods import event, implicit, ode, timestepping

    if model.event_settings is not None:
        return event.EventDriven(model, state)
    kind = Integrator(model.integrator)
    if kind in ode.ODE_METHODS:
        return ode.OdeIntegration(model)
    if kind in implicit.IMPLICIT_METHODS:
        return implicit.ImplicitIntegration(model)
    return timestepping.TimeStepping(model)
