"""A step of an ODE integrator (euler, rk4, adaptive) in a world with joints (solvers/joint_accel.py).

1. The velocities are projected onto the joints' rows, G u = 0 (ArtiSynth notes 0.5): this takes out what
   the step's contact kick, or a velocity the user set, asks of the joints (the kick's own joint impulses
   lie in the range of M⁻¹ Gᵀ, which the projection removes exactly).
2. Baraff's state Y = (x, q, P, L) is integrated with the constraint loads Gᵀ λ added to Ṗ and L̇ at every
   state the integrator evaluates (``constrained_derivative``).
3. The positions are projected onto C = 0 (``joint_project``, ``World(joint_projection=...)`` Newton steps)
   and the velocities onto G u = 0 again.
4. The joints' readings: ``joint.force`` and ``joint.torque`` are the constraint loads at the state the step
   ends in (under the step's loads), and a joint whose force exceeds its ``break_force`` breaks.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from ..solvers import joint_accel as ja
from ..solvers.joint_solve import joint_accumulate, joint_project
from . import ode
from . import state as _state
from .integrate import inertia_stage

if TYPE_CHECKING:
    from ..world import World


def joint_ode_step(world: World, dt: float, method: str) -> None:
    """Advance ``world`` by ``dt`` [s] with the ODE ``method`` and its joints' constraint loads (module
    docstring); the loads accumulated for the step are used and then cleared."""
    live = world._live()
    data, scratch, structure, extra = world._joints.ode_args(live["inv_mass"])
    kind, jbody, frame_a, frame_b, limit, flags, soft, _, _, wrench = data
    lin, ang_a, ang_b, inv_a, inv_b, error, coordinate, sigma, _, active = scratch[:10]
    factor, rhs, rate, x, q, v, w, inv_inertia_world, acc, ang_acc, force, torque, awake, impulse = extra
    rows = (kind, jbody, frame_a, frame_b, limit, flags)
    solve_scratch = (structure, lin, ang_a, ang_b, inv_a, inv_b, error, coordinate, sigma, active, factor, rhs)
    n = live["x"].shape[0]

    def world_inertia(q_now: np.ndarray) -> np.ndarray:
        inertia_stage(live["principal_q"], live["inv_principal_moments"], q_now, inv_inertia_world, awake)
        return inv_inertia_world

    def project_velocities() -> None:
        ja.joint_velocity_projection(*rows, live["x"], live["q"], live["v"], live["w"], live["inv_mass"],
                                     world_inertia(live["q"]), *solve_scratch)

    def constraint_loads(y: np.ndarray) -> None:
        """force, torque ← the joints' constraint loads at the state y (13 n,), under the step's loads."""
        _state.array_to_bodies(live["inv_mass"], live["inv_inertia_body"], y, x, q, v, w)
        iinv = world_inertia(q)
        ja.free_accelerations(live["inv_mass"], iinv, w, live["force"], live["torque"], world._gravity, y, acc,
                              ang_acc)
        ja.joint_constraint_forces(*rows, x, q, v, w, live["inv_mass"], iinv, acc, ang_acc, *solve_scratch, rate,
                                   force, torque)

    def dydt(t: float, y: np.ndarray) -> np.ndarray:
        ydot = np.empty_like(y)
        _state.state_derivative(live["mass"], live["inv_mass"], live["inv_inertia_body"], live["force"],
                                live["torque"], world._gravity, y, ydot)
        constraint_loads(y)
        per_body = ydot.reshape(n, _state.STATE_SIZE)
        per_body[:, 7:10] += force     # Ṗ = F + Gᵀλ (linear part)
        per_body[:, 10:13] += torque   # L̇ = τ + Gᵀλ (angular part)
        return ydot

    project_velocities()
    y1 = ode.ode(world.state_to_array(), world.time, world.time + dt, dydt, method=method)
    world.array_to_state(y1)
    joint_project(*rows, soft, live["x"], live["q"], live["inv_mass"], world_inertia(live["q"]), structure, True,
                  lin, ang_a, ang_b, inv_a, inv_b, error, coordinate, sigma, active, factor, rhs,
                  world._settings.joint_projection)
    project_velocities()
    # the readings: λ at the end state, as the impulse λ dt over the step for JointSet's accumulator
    constraint_loads(world.state_to_array())
    ja.rows_to_slots(structure, rhs, dt, impulse)
    wrench[:] = 0.0
    joint_accumulate(jbody, lin, ang_a, impulse, frame_a, live["q"], wrench)
    live["force"][...] = 0.0
    live["torque"][...] = 0.0
    world._joints.finish_step(dt)
