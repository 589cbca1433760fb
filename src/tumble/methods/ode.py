"""The ODE integrators (euler, rk4, adaptive): Baraff's Y = (x, q, P, L) integrated through ``tumble.ode``
(Baraff I section 3), with contacts and joints as constraint forces.

A step, stage by stage (``OdeIntegration.advance``):

    detection (as time-stepping's)
    → springs' loads
    → the contact kick: the contact impulses the time-stepping solve finds over the whole step (one sub-step
      of dt), applied to the velocities at the start of the step (gravity and the loads then act over it)
    → with joints (solvers/joint_accel.py):
      1. the joints' kick (``joint_velocity_kick``): the velocities are projected onto the joints' rows,
         G u = 0 (ArtiSynth notes 0.5), which takes out what the contact kick, or a velocity the user set,
         asks of the joints (the kick's own joint impulses lie in the range of M⁻¹ Gᵀ, which the projection
         removes exactly); with the limits (Ċ ≥ −C/h: an impact on a limit stops dead) and motors (toward
         their speed, by at most force × h) by the time-stepping solve's active set;
      2. Y is integrated with the constraint loads Gᵀ λ added to Ṗ and L̇ at every state the integrator
         evaluates (its ``dydt``): the equality rows, a limit at its bound, a motor at its speed, and the soft
         joints' spring forces;
    → the contacts' position correction (the kick's split-impulse pseudo-velocities move the bodies)
    → with joints: positions projected onto C = 0 (``joint_project``, ``World(joint_projection=...)`` Newton
      steps) and velocities onto G u = 0 again (``project_joints``; the event-driven method ends its steps
      with it too); the joints' readings (``joint.force``, ``joint.torque``: the constraint loads at the state
      the step ends in, under the step's loads), and a joint whose force exceeds its ``break_force`` breaks.

The ODE integrators never put bodies to sleep.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import numpy as np

from ..collision.contacts import ContactBuffers
from ..conventions import Integrator
from ..integration import ode
from ..integration import state_vector as _state
from ..integration.guard import FIELDS, NonFiniteStep
from ..integration.integrate import inertia_stage, velocity_stage
from ..model.model import Model
from ..model.state import State
from ..solvers import joint_accel as ja
from ..solvers.joint_solve import joint_accumulate, joint_project, time_step_block
from .timestepping import TimeStepping, apply_pseudo, finish, run_contact_step, wake_all

ODE_METHODS = {Integrator.EULER: "euler", Integrator.RK4: "rk4", Integrator.ADAPTIVE: "adaptive"}
"""The ODE integrators and ``tumble.ode``'s names for them."""


class OdeIntegration(TimeStepping):
    """The ODE integrators' method (module docstring). Shares time-stepping's detection and spring stages."""

    name = "ode"
    guards_state = False     # step.py saves and checks around the whole ODE step

    def __init__(self, model: Model) -> None:
        super().__init__(model)
        self.ode_method = ODE_METHODS[Integrator(model.integrator)]

    def advance(self, model: Model, state: State, contacts: ContactBuffers, dt: float, stats: Any,
                loads: tuple[np.ndarray, np.ndarray] | None) -> None:
        """One step of ``dt`` [s] (module docstring)."""
        t0 = time.perf_counter()
        self.swapped = False
        self.refresh(model)
        joints = len(model.joints) > 0
        pairs = self.detect(model, state, contacts, dt)
        if loads is not None:
            self.check_lemke_size(model, state, contacts, loads)
        t1 = time.perf_counter()
        if state.sleeping:
            wake_all(model, state, contacts)
        if model.springs:
            self.spring_stage(model, state, dt)
        if pairs:
            contact_kick(model, state, contacts, dt, stats)
        push = pairs > 0 and model.settings.correction == "split"
        if joints:   # the push before the joints' projection, which then keeps the joints shut
            joint_ode_step(model, state, contacts, dt, self.ode_method,
                           (lambda: kick_pseudo_move(model, state, dt)) if push else None)
        else:
            ode_step(model, state, contacts, dt, self.ode_method)
            if push:
                kick_pseudo_move(model, state, dt)
        finish(state, contacts, dt, pairs, 1, stats, t0, t1)



def contact_kick(model: Model, state: State, contacts: ContactBuffers, dt: float, stats: Any) -> None:
    """Find the step's contact impulses as the splitting scheme's velocity stage and solve would over the whole
    step (one sub-step of dt), and apply only the contacts' share to the velocities at the start of the step
    (an impulsive kick); the ODE then integrates gravity and the applied loads over the step. At rest the kick
    gives +g dt and gravity takes it back over the step."""
    body, st = model.bodies(), state.bodies()
    v0, w0 = st.v.copy(), st.w.copy()
    force, torque = st.force.copy(), st.torque.copy()
    v_loads, w_loads = v0.copy(), w0.copy()  # what the loads alone do to the velocities over the step
    loads_only = st._replace(v=v_loads, w=w_loads, force=force.copy(), torque=torque.copy(),
                             inv_inertia_world=st.inv_inertia_world.copy(), awake=np.ones(len(v0), dtype=np.bool_))
    velocity_stage(int(Integrator.SPLITTING), body, loads_only, model.gravity, dt, True)
    run_contact_step(model, state, contacts, dt, int(Integrator.SPLITTING), False, stats)
    st.force[...] = force
    st.torque[...] = torque
    st.v[...] = v0 + (st.v - v_loads)
    st.w[...] = w0 + (st.w - w_loads)


def kick_pseudo_move(model: Model, state: State, dt: float) -> None:
    """With the split-impulse correction: move the bodies by the pseudo-velocities the kick's solve found (the
    splitting step's position pass, ``timestepping.apply_pseudo``), after the ODE's step: positions only, so no
    kinetic energy is added. Without it nothing pushed two moving bodies apart: a sphere started 20 mm into a
    box resting on the ground stayed 20 mm in with rk4."""
    body, st = model.bodies(), state.bodies()
    apply_pseudo(body, st, dt)


def state_to_array(model: Model, state: State) -> np.ndarray:
    """Baraff's Y = (x, q, P, L) per body, (13 n,) (Baraff I section 3)."""
    body, st = model.bodies(), state.bodies()
    y = np.empty(_state.STATE_SIZE * model.body.count)
    _state.bodies_to_array(body.mass, body.inertia_body, st.x, st.q, st.v, st.w, y)
    return y


def array_to_state(model: Model, state: State, y: np.ndarray, method: str, dt: float) -> None:
    """The bodies' state from Y (13 n,), the end of a step of ``dt`` [s] by the ODE ``method``: quaternions
    normalized, v = P/M and ω = I⁻¹ L recomputed (fixed bodies stay at rest). ``guard.NonFiniteStep`` naming
    the first body and field of Y that is not finite, with the state left as it was."""
    if not np.all(np.isfinite(y)):
        entry = int(np.argmin(np.isfinite(y)))
        body, k = divmod(entry, _state.STATE_SIZE)
        field = FIELDS[0 if k < 3 else 1 if k < 7 else 2 if k < 10 else 3]   # Y = (x, q, P, L) per body
        raise NonFiniteStep(body, model.names[body], field, f"{method} integration", state.time, dt)
    body, st = model.bodies(), state.bodies()
    _state.array_to_bodies(body.inv_mass, body.inv_inertia_body, y, st.x, st.q, st.v, st.w)


def ode_step(model: Model, state: State, contacts: ContactBuffers, dt: float, method: str) -> None:
    """Integrate Baraff's Y = (x, q, P, L) over one step through ``ode`` (Baraff I section 3)."""
    body, st = model.bodies(), state.bodies()

    def dydt(t: float, y):
        ydot = y.copy()
        _state.state_derivative(body.mass, body.inv_mass, body.inv_inertia_body, st.force, st.torque, model.gravity,
                                y, ydot)
        return ydot

    y1 = ode.ode(state_to_array(model, state), state.time, state.time + dt, dydt, method=method)
    array_to_state(model, state, y1, method, dt)
    wake_all(model, state, contacts)
    st.force[...] = 0.0
    st.torque[...] = 0.0


def joint_ode_step(model: Model, state: State, contacts: ContactBuffers, dt: float, method: str,
                   before_projection: Callable[[], None] | None = None) -> None:
    """Advance by ``dt`` [s] with the ODE ``method`` and the joints' constraint loads (module docstring); the
    loads accumulated for the step are used and then cleared. ``before_projection``, if given, runs after the
    ODE's step and before the joints' projection (the contacts' position correction, which would otherwise
    pull the joints apart after they were projected)."""
    body, st = model.bodies(), state.bodies()
    data, scratch, structure, extra = model.joints.ode_args(body.inv_mass)
    x, q, v, w, force, torque, impulse, lam = extra.x, extra.q, extra.v, extra.w, extra.force, extra.torque, \
        extra.impulse, extra.lam
    n = st.x.shape[0]

    def constraint_loads(y: np.ndarray) -> None:
        """force, torque ← the joints' constraint loads at the state y (13 n,), under the step's loads."""
        _state.array_to_bodies(body.inv_mass, body.inv_inertia_body, y, x, q, v, w)
        iinv = _world_inertia(body, q, extra)
        ja.free_accelerations(body.inv_mass, iinv, w, st.force, st.torque, model.gravity, y, extra.acc,
                              extra.ang_acc)
        ja.joint_constraint_forces(data, scratch, structure, extra, x, q, v, w, body.inv_mass, iinv)

    def dydt(t: float, y: np.ndarray) -> np.ndarray:
        ydot = np.empty_like(y)
        _state.state_derivative(body.mass, body.inv_mass, body.inv_inertia_body, st.force, st.torque, model.gravity,
                                y, ydot)
        constraint_loads(y)
        per_body = ydot.reshape(n, _state.STATE_SIZE)
        per_body[:, 7:10] += force     # Ṗ = F + Gᵀλ (linear part)
        per_body[:, 10:13] += torque   # L̇ = τ + Gᵀλ (angular part)
        return ydot

    # the kick: what the joints ask of the velocities now, their limits and motors included
    ja.joint_velocity_kick(data, scratch, structure, extra, st.x, st.q, st.v, st.w, body.inv_mass,
                           _world_inertia(body, st.q, extra), dt)
    y1 = ode.ode(state_to_array(model, state), state.time, state.time + dt, dydt, method=method)
    array_to_state(model, state, y1, method, dt)
    wake_all(model, state, contacts)
    if before_projection is not None:
        before_projection()
    project_joints(model, state)
    # the readings: λ at the end state, as the impulse λ dt over the step for JointSet's accumulator
    constraint_loads(state_to_array(model, state))
    np.multiply(lam, dt, out=impulse)
    record_joint_impulses(model, state, impulse, dt)
    st.force[...] = 0.0
    st.torque[...] = 0.0


def _world_inertia(body: Any, q: np.ndarray, extra: Any) -> np.ndarray:
    """The bodies' world inverse inertia (n, 3, 3) at the orientations q, in the ode scratch ``extra``."""
    inertia_stage(body.principal_q, body.inv_principal_moments, q, extra.inv_inertia_world, extra.awake)
    return extra.inv_inertia_world


def project_joint_velocities(model: Model, state: State) -> None:
    """The bodies' velocities projected onto the joints' G u = 0 (the M-orthogonal projection, notes 0.5):
    what a contact kick or a velocity the user set asks of the joints, taken out."""
    body, st = model.bodies(), state.bodies()
    data, scratch, structure, extra = model.joints.ode_args(body.inv_mass)
    ja.joint_velocity_projection(data, scratch, structure, extra, st.x, st.q, st.v, st.w, body.inv_mass,
                                 _world_inertia(body, st.q, extra))


def project_joints(model: Model, state: State) -> None:
    """Post-stabilization (notes 0.5): the bodies' positions projected onto the joints' C = 0
    (``joint_project``, ``World(joint_projection=...)`` Newton steps), then their velocities onto G u = 0
    (the M-orthogonal projection, which never adds kinetic energy)."""
    body, st = model.bodies(), state.bodies()
    data, scratch, structure, extra = model.joints.ode_args(body.inv_mass)
    # the direct solve's own factor and right-hand side, as the ODE's derivative uses them
    scratch = scratch._replace(factor=extra.factor, rhs=extra.rhs)
    joint_project(data, scratch, time_step_block(data, scratch), structure, body.inv_mass, st.x, st.q,
                  _world_inertia(body, st.q, extra), True, model.settings.joint_projection, (extra.acc, extra.ang_acc))
    project_joint_velocities(model, state)


def record_joint_impulses(model: Model, state: State, impulse: np.ndarray, dt: float) -> None:
    """The joints' readings of a step of ``dt`` [s] from their row impulses ``impulse`` (m, 8) [N·s] (a force
    held over the step: λ dt) along the rows last built, then the breaking test (``JointSet.finish_step``)."""
    data, scratch, _ = model.joints.kernel_args(model.body.live("inv_mass"))
    data.wrench[:] = 0.0
    joint_accumulate(data.body, scratch.lin, scratch.ang_a, impulse, data.frame_a, state.bodies().q, data.wrench)
    model.joints.finish_step(dt)
