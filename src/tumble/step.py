"""One time step, stage by stage. This is the only place the order of the stages is written.

    forces (user callbacks) → integrate

Collision detection (broadphase → narrowphase), constraint rows and the contact solve will slot in
between the two as they are built; each stage is a function over the world's arrays.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .conventions import PARALLEL_MIN_BODIES, Integrator
from .dynamics import integrate, ode
from .dynamics import state as _state

if TYPE_CHECKING:
    from .world import World

_ODE_METHOD = {Integrator.EULER: "euler", Integrator.RK4: "rk4", Integrator.ADAPTIVE: "adaptive"}


def step(world: World, dt: float) -> None:
    """Advance ``world`` by ``dt`` [s] (already validated)."""
    for fn in world._force_fns:
        fn(world, world.time)
    a = world._live()
    kind = world._integrator
    parallel = world._body.count >= PARALLEL_MIN_BODIES
    if kind == Integrator.SPLITTING:
        kernel = integrate.step_splitting if parallel else integrate.step_splitting_serial
        kernel(a["mass"], a["inv_mass"], a["principal_q"], a["principal_moments"], a["inv_principal_moments"],
               a["x"], a["q"], a["v"], a["w"], a["force"], a["torque"], world._gravity, dt)
    elif kind in (Integrator.SYMPLECTIC_EULER, Integrator.IMPLICIT_GYRO):
        kernel = integrate.step_symplectic_euler if parallel else integrate.step_symplectic_euler_serial
        kernel(a["mass"], a["inv_mass"], a["principal_q"], a["principal_moments"], a["inv_principal_moments"],
               a["x"], a["q"], a["v"], a["w"], a["force"], a["torque"], world._gravity, dt,
               kind == Integrator.IMPLICIT_GYRO)
    else:
        _step_state_ode(world, dt, _ODE_METHOD[Integrator(kind)])
    world.time += dt


def _step_state_ode(world: World, dt: float, method: str) -> None:
    """Integrate Baraff's Y = (x, q, P, L) over one step through ``ode`` (Baraff I section 3)."""
    a = world._live()

    def dydt(t: float, y):
        ydot = y.copy()
        _state.state_derivative(a["mass"], a["inv_mass"], a["inv_inertia_body"], a["force"], a["torque"],
                                world._gravity, y, ydot)
        return ydot

    y1 = ode.ode(world.state_to_array(), world.time, world.time + dt, dydt, method=method)
    world.array_to_state(y1)
    a["force"][...] = 0.0
    a["torque"][...] = 0.0
