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
from numba.extending import overload

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
        joints[0][9][:] = 0.0      # data's wrench accumulator

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
        kind, jbody, frame_a, frame_b, limit, flags, soft, motor, impulse, wrench = data
        (lin, ang_a, ang_b, inv_a, inv_b, error, coordinate, sigma, bias_j, active, factor, rhs, predict_x,
         predict_q, predict_w, predict_lin, predict_error, predict_coordinate) = scratch
        bodies, state, scheme = body
        inv_mass, principal_q = bodies.inv_mass, bodies.principal_q
        principal_moments, inv_principal_moments = bodies.principal_moments, bodies.inv_principal_moments
        x, q, v, w = state.x, state.q, state.v, state.w
        inv_inertia_world, awake = state.inv_inertia_world, state.awake
        direct = isettings[I_JOINT_SOLVER] == js.DIRECT
        js.joint_setup(kind, jbody, frame_a, frame_b, limit, flags, soft, motor, impulse, x, q, inv_mass,
                       inv_inertia_world, structure, h, lin, ang_a, ang_b, inv_a, inv_b, error, coordinate, sigma,
                       bias_j, active, factor)
        js.joint_warm_start(kind, jbody, flags, impulse, lin, inv_a, inv_b, inv_mass, awake, v, w)
        if sweeps_singly(solver):
            done, residual, status = solver.iterations, 0.0, MAX_ITERATIONS
            for it in range(solver.iterations):
                joint_residual = js.joint_iteration(kind, jbody, flags, sigma, bias_j, error, motor, impulse, lin,
                                                    ang_a, ang_b, inv_a, inv_b, inv_mass, awake, structure, active,
                                                    factor, rhs, direct, h, v, w)
                _, residual, _ = velocity_solve(solver, rows, bias, friction_model, directions, 1, -1.0, v, w)
                if max(residual, joint_residual) <= solver.tolerance:
                    done, status = it + 1, CONVERGED
                    break
        else:
            for _ in range(solver.iterations):
                js.joint_iteration(kind, jbody, flags, sigma, bias_j, error, motor, impulse, lin, ang_a, ang_b, inv_a,
                                   inv_b, inv_mass, awake, structure, active, factor, rhs, direct, h, v, w)
            done, residual, status = velocity_solve(solver, rows, bias, friction_model, directions,
                                                    solver.iterations, solver.tolerance, v, w)
            for _ in range(solver.iterations):
                js.joint_iteration(kind, jbody, flags, sigma, bias_j, error, motor, impulse, lin, ang_a, ang_b, inv_a,
                                   inv_b, inv_mass, awake, structure, active, factor, rhs, direct, h, v, w)
        if integrate_positions and direct and isettings[I_JOINT_PROJECTION] > 0:
            js.joint_shake(kind, jbody, frame_a, frame_b, limit, flags, soft, x, q, v, w, inv_mass, structure, direct,
                           h, lin, inv_a, inv_b, error, impulse, active, factor, rhs, predict_x, predict_q, predict_w,
                           predict_lin, predict_error, predict_coordinate, isettings[I_JOINT_PROJECTION], scheme,
                           principal_q, principal_moments, inv_principal_moments)
        js.joint_accumulate(jbody, lin, ang_a, impulse, frame_a, q, wrench)
        return done, residual, status

    return impl


@overload(joints_project)
def _joints_project(joints, body, isettings):
    if isinstance(joints, types.NoneType):
        return lambda joints, body, isettings: None

    def impl(joints, body, isettings):
        data, scratch, structure = joints
        kind, jbody, frame_a, frame_b, limit, flags, soft, motor, impulse, wrench = data
        (lin, ang_a, ang_b, inv_a, inv_b, error, coordinate, sigma, bias_j, active, factor, rhs, predict_x, _,
         predict_w) = scratch[:15]
        x, q, inv_mass, inv_inertia_world = body[1].x, body[1].q, body[0].inv_mass, body[1].inv_inertia_world
        js.joint_project(kind, jbody, frame_a, frame_b, limit, flags, soft, x, q, inv_mass, inv_inertia_world,
                         structure, isettings[I_JOINT_SOLVER] == js.DIRECT, lin, ang_a, ang_b, inv_a, inv_b, error,
                         coordinate, sigma, active, factor, rhs, isettings[I_JOINT_PROJECTION], predict_x,
                         predict_w)   # (SHAKE's prediction is spent by now: its arrays hold the moves)

    return impl
