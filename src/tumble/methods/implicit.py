"""The implicit integrators (implicit_euler, trapezoidal, bridson_marino) for stiff springs: the springs'
Jacobians make their loads implicit (ArtiSynth notes 0.9.2–0.9.4; the numerics are integration/implicit.py).

A step, stage by stage (``ImplicitIntegration.advance``):

    detection (as time-stepping's)
    → without contacts or joints: the whole step by the implicit integrator (springs, gravity and loads)
    → with contacts or joints: islands, then the springs alone treated implicitly: their velocity change over
      the step by linearly implicit Euler, (M − h D − h² K) Δu = h (f_s + h K u) (notes 0.9.2 with the
      springs' loads only), enters the step as the equivalent load M Δu / h, and time-stepping's splitting
      stages (velocity → rows → solve → position) solve the contacts and joints with it
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np

from ..collision.contacts import ContactBuffers
from ..constraints.islands import clear_sleeping_loads
from ..conventions import Integrator
from ..integration.guard import first_non_finite, save_bodies
from ..integration.implicit import implicit_spring_loads, implicit_step_unchecked
from ..model.model import Model
from ..model.state import State
from .timestepping import TimeStepping, _asleep_step, finish, wake_all

IMPLICIT_METHODS = {Integrator.IMPLICIT_EULER: "implicit_euler", Integrator.TRAPEZOIDAL: "trapezoidal",
                    Integrator.BRIDSON_MARINO: "bridson_marino"}
"""The implicit integrators and integration/implicit.py's names for them."""


class ImplicitIntegration(TimeStepping):
    """The implicit integrators' method (module docstring). Shares time-stepping's stages; keeps the dense
    solve's workspace between steps."""

    name = "implicit"

    def __init__(self, model: Model) -> None:
        super().__init__(model)
        self.implicit_method = IMPLICIT_METHODS[Integrator(model.integrator)]
        self.free_scheme = int(Integrator.SPLITTING)
        self._workspace: Any = None

    def advance(self, model: Model, state: State, contacts: ContactBuffers, dt: float, stats: Any,
                loads: tuple[np.ndarray, np.ndarray] | None) -> None:
        """One step of ``dt`` [s] (module docstring)."""
        t0 = time.perf_counter()
        self.swapped = False
        self.refresh(model)
        joints = len(model.joints) > 0
        if self.quiet(model, state, contacts, joints):
            _asleep_step(contacts, state, stats)
            return
        pairs = self.detect(model, state, contacts, dt)
        if loads is not None:
            self.check_lemke_size(model, state, contacts, loads)
        t1 = time.perf_counter()
        if pairs == 0 and not joints:
            save_bodies(state.bodies())
            self.implicit_step(model, state, dt)
            if first_non_finite(state.bodies()) >= 0:
                self.undo(model, state, contacts, f"{self.implicit_method} step", dt)
            finish(state, contacts, dt, 0, model.settings.substeps, stats, t0, t1)
            return
        if pairs and model.settings.sleep:
            self.islands(model, state, contacts, dt)
        elif state.sleeping:
            wake_all(model, state, contacts)
        if model.springs:
            self.spring_stage(model, state, dt)
        self.contact_step(model, state, contacts, dt, stats)
        if joints:
            model.joints.finish_step(dt)
        finish(state, contacts, dt, pairs, model.settings.substeps, stats, t0, t1)

    def implicit_step(self, model: Model, state: State, dt: float) -> None:
        """The whole step by the implicit integrator (integration/implicit.py), for a world without contacts
        and joints."""
        body, st = model.bodies(), state.bodies()
        self._workspace = implicit_step_unchecked(self.implicit_method, body.mass, body.inv_mass, body.inertia_body,
                                                  st.x, st.q, st.v, st.w, st.force, st.torque, model.gravity,
                                                  model.spring_arrays(), dt, self._workspace)
        st.force[...] = 0.0
        st.torque[...] = 0.0

    def spring_stage(self, model: Model, state: State, dt: float) -> None:
        """The springs' linearly implicit loads for this step (module docstring), on the awake bodies."""
        body, st = model.bodies(), state.bodies()
        self._workspace = implicit_spring_loads(body.mass, body.inv_mass, body.inertia_body, st.x, st.q, st.v, st.w,
                                                model.spring_arrays(), dt, st.force, st.torque, self._workspace)
        if state.sleeping:
            clear_sleeping_loads(st.awake, st.force, st.torque)

