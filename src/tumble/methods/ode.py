"""A step of an ODE integrator (euler, rk4, adaptive) in a world with joints (solvers/joint_accel.py).

1. The joints' kick (``joint_velocity_kick``): the velocities are projected onto the joints' rows, G u = 0
   (ArtiSynth notes 0.5), which takes out what the step's contact kick, or a velocity the user set, asks of
   the joints (the kick's own joint impulses lie in the range of M⁻¹ Gᵀ, which the projection removes
   exactly); with the limits (Ċ ≥ −C/h: an impact on a limit stops dead) and motors (toward their speed, by
   at most force × h) by the time-stepping solve's active set.
2. Baraff's state Y = (x, q, P, L) is integrated with the constraint loads Gᵀ λ added to Ṗ and L̇ at every
   state the integrator evaluates (its ``dydt``): the equality rows, a limit at its bound, a motor at its
   speed, and the soft joints' spring forces.
3. The positions are projected onto C = 0 (``joint_project``, ``World(joint_projection=...)`` Newton steps)
   and the velocities onto G u = 0 again.
   (``project_joints``; the event-driven method ends its steps with it too.)
4. The joints' readings: ``joint.force`` and ``joint.torque`` are the constraint loads at the state the step
   ends in (under the step's loads), and a joint whose force exceeds its ``break_force`` breaks.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import numpy as np

from ..integration import ode
from ..integration import state_vector as _state
from ..integration.integrate import inertia_stage
from ..solvers import joint_accel as ja
from ..solvers.joint_solve import joint_accumulate, joint_project

if TYPE_CHECKING:
    from ..world import World


def joint_ode_step(world: World, dt: float, method: str, before_projection: Callable[[], None] | None = None) -> None:
    """Advance ``world`` by ``dt`` [s] with the ODE ``method`` and its joints' constraint loads (module
    docstring); the loads accumulated for the step are used and then cleared. ``before_projection``, if given,
    runs after the ODE's step and before the joints' projection (the contacts' position correction, which
    would otherwise pull the joints apart after they were projected)."""
    live = world._live()
    data, solve, extra = _kernel_arrays(world)
    rate, x, q, v, w, acc, ang_acc, force, torque, awake, impulse = (extra[2], *extra[3:7], *extra[8:14])
    bias, limit_gap, motor_hold, lam = extra[14:18]
    n = live["x"].shape[0]

    def constraint_loads(y: np.ndarray) -> None:
        """force, torque ← the joints' constraint loads at the state y (13 n,), under the step's loads."""
        _state.array_to_bodies(live["inv_mass"], live["inv_inertia_body"], y, x, q, v, w)
        iinv = _world_inertia(live, q, extra)
        ja.free_accelerations(live["inv_mass"], iinv, w, live["force"], live["torque"], world._gravity, y, acc,
                              ang_acc)
        ja.joint_constraint_forces(*data[:8], x, q, v, w, live["inv_mass"], iinv, acc, ang_acc, *solve, rate, bias,
                                   limit_gap, motor_hold, lam, awake, force, torque)

    def dydt(t: float, y: np.ndarray) -> np.ndarray:
        ydot = np.empty_like(y)
        _state.state_derivative(live["mass"], live["inv_mass"], live["inv_inertia_body"], live["force"],
                                live["torque"], world._gravity, y, ydot)
        constraint_loads(y)
        per_body = ydot.reshape(n, _state.STATE_SIZE)
        per_body[:, 7:10] += force     # Ṗ = F + Gᵀλ (linear part)
        per_body[:, 10:13] += torque   # L̇ = τ + Gᵀλ (angular part)
        return ydot

    # the kick: what the joints ask of the velocities now, their limits and motors included
    ja.joint_velocity_kick(*data[:8], live["x"], live["q"], live["v"], live["w"], live["inv_mass"],
                           _world_inertia(live, live["q"], extra), *solve, bias, impulse, awake, dt, limit_gap,
                           motor_hold)
    y1 = ode.ode(world.state_to_array(), world.time, world.time + dt, dydt, method=method)
    world.array_to_state(y1)
    if before_projection is not None:
        before_projection()
    project_joints(world)
    # the readings: λ at the end state, as the impulse λ dt over the step for JointSet's accumulator
    constraint_loads(world.state_to_array())
    np.multiply(lam, dt, out=impulse)
    record_joint_impulses(world, impulse, dt)
    live["force"][...] = 0.0
    live["torque"][...] = 0.0


def _kernel_arrays(world: World) -> tuple[tuple, tuple, tuple]:
    """(``JointSet``'s data, the solve's arrays from the structure to the right-hand side as the kernels of
    joint_accel.py take them, ``JointSet.ode_args``' ode scratch)."""
    data, scratch, structure, extra = world._joints.ode_args(world._live()["inv_mass"])
    lin, ang_a, ang_b, inv_a, inv_b, error, coordinate, sigma, _, active = scratch[:10]
    return data, (structure, lin, ang_a, ang_b, inv_a, inv_b, error, coordinate, sigma, active, extra[0],
                  extra[1]), extra


def _world_inertia(live: dict[str, np.ndarray], q: np.ndarray, extra: tuple) -> np.ndarray:
    """The bodies' world inverse inertia (n, 3, 3) at the orientations q, in the ode scratch ``extra``."""
    inertia_stage(live["principal_q"], live["inv_principal_moments"], q, extra[7], extra[12])
    return extra[7]


def project_joint_velocities(world: World) -> None:
    """The bodies' velocities projected onto the joints' G u = 0 (the M-orthogonal projection, notes 0.5):
    what a contact kick or a velocity the user set asks of the joints, taken out."""
    live = world._live()
    data, solve, extra = _kernel_arrays(world)
    ja.joint_velocity_projection(*data[:7], live["x"], live["q"], live["v"], live["w"], live["inv_mass"],
                                 _world_inertia(live, live["q"], extra), *solve, extra[13], extra[14])


def project_joints(world: World) -> None:
    """Post-stabilization (notes 0.5): the bodies' positions projected onto the joints' C = 0
    (``joint_project``, ``World(joint_projection=...)`` Newton steps), then their velocities onto G u = 0
    (the M-orthogonal projection, which never adds kinetic energy)."""
    live = world._live()
    data, (structure, *scratch), extra = _kernel_arrays(world)
    joint_project(*data[:7], live["x"], live["q"], live["inv_mass"], _world_inertia(live, live["q"], extra),
                  structure, True, *scratch, world._settings.joint_projection, extra[8], extra[9])
    project_joint_velocities(world)


def record_joint_impulses(world: World, impulse: np.ndarray, dt: float) -> None:
    """The joints' readings of a step of ``dt`` [s] from their row impulses ``impulse`` (m, 8) [N·s] (a force
    held over the step: λ dt) along the rows last built, then the breaking test (``JointSet.finish_step``)."""
    live = world._live()
    data, scratch, _ = world._joints.kernel_args(live["inv_mass"])
    wrench = data[9]
    wrench[:] = 0.0
    joint_accumulate(data[1], scratch[0], scratch[1], impulse, data[2], live["q"], wrench)
    world._joints.finish_step(dt)
