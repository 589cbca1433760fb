"""The joints' part of the time-stepping kernel (``timestep.contact_step``), compiled only for worlds with joints.

``contact_step`` takes ``joints`` = None or (data, scratch, structure) (model/joint_set.py). The three
functions here are resolved by Numba per the type of that argument: for None they reduce to the contact
solve alone (no joint code is compiled: a world without joints compiles its step as fast as before joints
existed), for the tuple they run solvers/joint_solve.py's stages:

- ``joints_begin``: zero the joints' impulse accumulators of the step;
- ``joints_and_contacts_solve``: rows and factor at the sub-step's pose, warm start, block Gauss–Seidel
  between the joints' rows and the contacts (with Gauss–Seidel contacts one joint pass and one contact sweep
  per iteration until both residuals are under the tolerance; the other contact solvers run whole, between
  joint passes), then SHAKE ("direct" only) and the step's impulse readout;
- ``joints_project``: the position projection after the position stage.
"""

from __future__ import annotations

from numba import types

from ..jit import overload
from ..model.fields import JointBlock
from ..model.settings import I_JOINT_PROJECTION, I_JOINT_SOLVER
from . import joint_solve as js
from .result import CONVERGED, MAX_ITERATIONS
from .velocity_solve import sweeps_singly, velocity_solve


def joints_begin(joints):
    """Zero the step's joint impulse readout. Kernels only."""
    raise NotImplementedError("resolved by Numba inside kernels")


def joints_and_contacts_solve(joints, solver, rows, bias, friction_model, directions, body, h, isettings,
                              integrate_positions):
    """The velocity solve of one sub-step with the joints (module docstring); returns (iterations, residual
    [m/s], status) as ``velocity_solve``. ``body`` = (BodyModel, BodyState, the Integrator code of the step's
    stages). Kernels only."""
    raise NotImplementedError("resolved by Numba inside kernels")


def joints_project(joints, body, isettings):
    """The joints' position projection after a position stage. Kernels only."""
    raise NotImplementedError("resolved by Numba inside kernels")


@overload(joints_begin)
def _joints_begin(joints):
    if isinstance(joints, types.NoneType):
        return lambda joints: None

    def impl(joints):
        joints[0].wrench[:] = 0.0      # the step's impulse readout

    return impl


@overload(joints_and_contacts_solve)
def _joints_and_contacts_solve(joints, solver, rows, bias, friction_model, directions, body, h, isettings,
                               integrate_positions):
    if isinstance(joints, types.NoneType):
        def contacts_only(joints, solver, rows, bias, friction_model, directions, body, h, isettings,
                          integrate_positions):
            v, w = body[1].v, body[1].w
            return velocity_solve(solver, rows, bias, friction_model, directions, solver.iterations,
                                  solver.tolerance, v, w)
        return contacts_only

    def impl(joints, solver, rows, bias, friction_model, directions, body, h, isettings, integrate_positions):
        data, scratch, structure = joints
        bodies, state, scheme = body
        inv_mass, v, w, awake = bodies.inv_mass, state.v, state.w, state.awake
        direct = isettings[I_JOINT_SOLVER] == js.DIRECT
        block = JointBlock(scratch.sigma, scratch.bias, scratch.error, data.motor, data.impulse, scratch.lin,
                           scratch.ang_a, scratch.ang_b, scratch.inv_ang_a, scratch.inv_ang_b, scratch.active,
                           scratch.factor, scratch.rhs)     # (js.time_step_block, built in place)
        js.joint_setup(data, scratch, block, structure, inv_mass, state.x, state.q, state.inv_inertia_world, h)
        js.joint_warm_start(data, scratch, inv_mass, awake, v, w)
        if sweeps_singly(solver):
            done, residual, status = solver.iterations, 0.0, MAX_ITERATIONS
            for it in range(solver.iterations):
                joint_residual = js.joint_iteration(data, block, inv_mass, awake, structure, direct, h, v, w)
                _, residual, _ = velocity_solve(solver, rows, bias, friction_model, directions, 1, -1.0, v, w)
                if max(residual, joint_residual) <= solver.tolerance:
                    done, status = it + 1, CONVERGED
                    break
        else:
            for _ in range(solver.iterations):
                js.joint_iteration(data, block, inv_mass, awake, structure, direct, h, v, w)
            done, residual, status = velocity_solve(solver, rows, bias, friction_model, directions,
                                                    solver.iterations, solver.tolerance, v, w)
            for _ in range(solver.iterations):
                js.joint_iteration(data, block, inv_mass, awake, structure, direct, h, v, w)
        if integrate_positions and direct and isettings[I_JOINT_PROJECTION] > 0:
            js.joint_shake(data, scratch, structure, bodies, state, direct, h, isettings[I_JOINT_PROJECTION], scheme)
        js.joint_accumulate(data.body, scratch.lin, scratch.ang_a, data.impulse, data.frame_a, state.q, data.wrench)
        return done, residual, status

    return impl


@overload(joints_project)
def _joints_project(joints, body, isettings):
    if isinstance(joints, types.NoneType):
        return lambda joints, body, isettings: None

    def impl(joints, body, isettings):
        data, scratch, structure = joints
        bodies, state = body[0], body[1]
        block = JointBlock(scratch.sigma, scratch.bias, scratch.error, data.motor, data.impulse, scratch.lin,
                           scratch.ang_a, scratch.ang_b, scratch.inv_ang_a, scratch.inv_ang_b, scratch.active,
                           scratch.factor, scratch.rhs)
        js.joint_project(data, scratch, block, structure, bodies.inv_mass, state.x, state.q, state.inv_inertia_world,
                         isettings[I_JOINT_SOLVER] == js.DIRECT, isettings[I_JOINT_PROJECTION],
                         (scratch.predict_x, scratch.predict_w))  # (SHAKE's prediction is spent: they hold the moves)

    return impl


def no_joints(joints):
    """Whether the step has no joints (``joints`` is None), as a compile-time constant. Kernels only."""
    raise NotImplementedError("resolved by Numba inside kernels")


@overload(no_joints)
def _no_joints(joints):
    none = isinstance(joints, types.NoneType)

    def impl(joints):
        return none

    return impl
