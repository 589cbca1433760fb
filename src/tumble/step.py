"""One time step, stage by stage. This is the only place the order of the stages is written.

    forces (user callbacks) → detection (AABBs → sweep and sort → narrowphase, into the contact buffer)
    → islands (sleep and wake)
    → velocity stage → contact rows and Gauss–Seidel solve → position stage → position correction
    → restitution

Without contacts the velocity and position stages run fused in one per-body kernel (the same arithmetic
in one pass). With contacts, ``dynamics.timestep.contact_step`` runs everything after detection in one
kernel. The ODE integrators (euler, rk4, adaptive) take the contact impulses, found at the start of the
step, as a kick and then integrate the loads over the step.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

import numpy as np

from .constraints.islands import clear_sleeping_loads, update_islands
from .conventions import PARALLEL_MIN_BODIES, Integrator
from .forces.springs import spring_loads
from .integration import integrate, ode
from .integration import state_vector as _state
from .methods import timestepping as ts
from .methods.implicit import implicit_spring_loads, implicit_step_unchecked
from .methods.ode import joint_ode_step
from .solvers.pivoting import MAX_LEMKE_SIZE
from .solvers.velocity_solve import STATUS_NAMES, lemke_size

if TYPE_CHECKING:
    from .world import World

_ODE_METHOD = {Integrator.EULER: "euler", Integrator.RK4: "rk4", Integrator.ADAPTIVE: "adaptive"}
_IMPLICIT_METHOD = {Integrator.IMPLICIT_EULER: "implicit_euler", Integrator.TRAPEZOIDAL: "trapezoidal",
                    Integrator.BRIDSON_MARINO: "bridson_marino"}


class StepStats:
    """Figures of the last step, kept in one array that each step overwrites (no allocation)."""

    CONTACTS, SWEEPS, RESIDUAL, SECONDS_DETECT, SECONDS_SOLVE, SECONDS_STEP, SLEEPING, STATUS = range(8)

    def __init__(self) -> None:
        self.values = np.zeros(8)
        self.solver_out = np.zeros(ts.STATS_SIZE)

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
        (solvers/velocity_solve.py); "converged" for a step without contacts."""
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


def step(world: World, dt: float) -> None:
    """Advance ``world`` by ``dt`` [s] (already validated); attached bodies then follow their masters."""
    _step(world, dt)
    if world._attachments:
        world._sync_attached()


def _step(world: World, dt: float) -> None:
    t0 = time.perf_counter()
    lemke = world._settings.solver == "lemke"
    if lemke:   # the loads before the callbacks, to undo a step that Lemke's size limit refuses
        a = world._live()
        loads = a["force"].copy(), a["torque"].copy()
    for fn in world._force_fns:
        fn(world, world.time)
    stats = world.step_stats.values
    stats[:] = 0.0
    if world._event is not None:
        world._event.advance(dt)
        stats[StepStats.CONTACTS] = world._event.stats.resting_contacts
        world._buffer_dt = None
        world.time += dt
        stats[StepStats.SECONDS_STEP] = stats[StepStats.SECONDS_SOLVE] = time.perf_counter() - t0
        return
    joints = len(world._joints) > 0
    if world._sleeping and QUIET_WORLD_SKIP and _all_asleep(world, joints):
        _asleep_step(world, dt, t0)
        return
    if world._geom.count > 1:
        world._detect_into_buffer(dt)
        pairs = world._buffer.pair_count
        if lemke:
            _check_lemke_size(world, loads)
    else:
        pairs = 0
    t1 = time.perf_counter()
    kind = int(world._integrator)  # a plain int: Numba types an IntEnum argument slowly (~150 µs a call)
    implicit = kind in _IMPLICIT_METHOD
    if implicit and pairs == 0 and not joints:
        _implicit_step(world, dt, _IMPLICIT_METHOD[Integrator(kind)])
        _finish(world, dt, 0, kind, t0, t1)
        return
    if pairs and world._settings.sleep and kind not in _ODE_METHOD:
        _islands(world, dt)
    elif world._sleeping:
        world._wake_all()
    if world._springs:
        _spring_stage(world, dt, implicit)
    if implicit:
        kind = int(Integrator.SPLITTING)
    if pairs == 0 and not joints:
        _free_step(world, dt, kind)
    elif kind in _ODE_METHOD:
        if pairs:
            _contact_kick(world, dt)
        push = pairs > 0 and world._settings.correction == "split"
        if joints:   # the push before the joints' projection, which then keeps the joints shut
            joint_ode_step(world, dt, _ODE_METHOD[Integrator(kind)],
                           (lambda: _kick_pseudo_move(world, dt)) if push else None)
        else:
            _step_state_ode(world, dt, _ODE_METHOD[Integrator(kind)])
            if push:
                _kick_pseudo_move(world, dt)
    else:
        _contact_step(world, dt, kind, True)
        if joints:
            world._joints.finish_step(dt)
    _finish(world, dt, pairs, kind, t0, t1)


QUIET_WORLD_SKIP = True
"""Whether a step of a world whose moving bodies all sleep does nothing but advance the time (below)."""


def _all_asleep(world: World, joints: bool) -> bool:
    """Every moving body sleeps, the last step found contact pairs, and nothing but contacts ties bodies
    together or loads them (no joints, springs or attachments; a force callback that applied a load has woken
    its body by now)."""
    if joints or world._springs or world._attachments or not world._settings.sleep:
        return False
    if world._buffer_dt is None:   # the last step found no pairs: the full step wakes every sleeping body
        return False
    if int(world._integrator) in _ODE_METHOD:
        return False
    return world._sleeping == int(np.count_nonzero(world._live()["inv_mass"]))


def _asleep_step(world: World, dt: float, t0: float) -> None:
    """The step of a world whose moving bodies all sleep (Box2D's islands: a sleeping world costs nothing).

    Such a step would change nothing: a sleeping body keeps its pose and zero velocities, detection would
    find the same pairs at the same poses (the narrowphase already skips a pair with no awake body and
    keeps its contacts), no island can wake without an awake body in it, and the solver skips every pair.
    So detection and solve are skipped and the last step's buffer stays, contacts, impulses and all, for
    ``world.contacts()`` and the warm start when something wakes the world (a setter, a load, a new body;
    ``World._wake_all``, ``Body._wake``). The buffer keeps the step ``dt`` its impulses were solved with, so
    ``world.contacts()`` reports force = impulse / that dt whatever ``dt`` the skipped steps take.
    tests/contact/test_sleep.py checks that a trajectory that sleeps and is woken by a dropped body is
    bitwise the one of the full steps."""
    stats = world.step_stats.values
    stats[StepStats.CONTACTS] = int(world._buffer.pairs.live("pair_contacts").sum())
    stats[StepStats.SLEEPING] = world._sleeping
    world.time += dt
    stats[StepStats.SECONDS_STEP] = stats[StepStats.SECONDS_SOLVE] = time.perf_counter() - t0


def _finish(world: World, dt: float, pairs: int, kind: int, t0: float, t1: float) -> None:
    """The step's bookkeeping: the contacts' step, the time, the statistics."""
    stats = world.step_stats.values
    stats[StepStats.SLEEPING] = world._sleeping
    world._buffer_dt = dt if pairs else None
    world._buffer_substeps = 1 if kind in _ODE_METHOD else world._settings.substeps
    world.time += dt
    t2 = time.perf_counter()
    stats[StepStats.SECONDS_DETECT] = t1 - t0
    stats[StepStats.SECONDS_SOLVE] = t2 - t1
    stats[StepStats.SECONDS_STEP] = t2 - t0


def _check_lemke_size(world: World, loads: tuple[np.ndarray, np.ndarray]) -> None:
    """ValueError when the step's LCP is beyond Lemke's dense tableau, after undoing the detection and the
    force callbacks' loads, so the world is as it was before ``step``."""
    p = world._buffer.pairs
    isettings = world._settings.arrays[1]
    size = lemke_size(p.live("pair_contacts"), p.live("pair_awake"), isettings[ts.I_FRICTION],
                      isettings[ts.I_FRICTION_DIRECTIONS])
    if size > MAX_LEMKE_SIZE:
        world._buffer, world._old_buffer = world._old_buffer, world._buffer
        a = world._live()
        a["force"][...], a["torque"][...] = loads
        raise ValueError(f"solver='lemke': this step's LCP has {size} unknowns, more than MAX_LEMKE_SIZE = "
                         f"{MAX_LEMKE_SIZE} (Lemke's dense tableau); use solver='pgs', 'apgd' or 'cg'")


def _islands(world: World, dt: float) -> None:
    """Sleep and wake by islands (constraints/islands.py); ``dt`` [s] advances the quiet timers."""
    a = world._live()
    p = world._buffer.pairs
    parent, island_timer, island_state = world._island_scratch()
    settings = world._settings
    world._sleeping = update_islands(p.live("pair_body"), p.live("pair_contacts"), a["inv_mass"], a["extent"],
                                     a["v"], a["w"], a["awake"], a["sleep_timer"], parent, island_timer,
                                     island_state, dt, settings.sleep_speed, settings.sleep_time,
                                     p.live("pair_awake"), world._island_edges())


def _contact_step(world: World, dt: float, kind: int, integrate_positions: bool) -> None:
    settings, isettings = world._settings.arrays if integrate_positions else world._settings.kick_arrays
    out = world.step_stats.solver_out
    joints = world._joints.kernel_args(world._live()["inv_mass"]) if len(world._joints) else None
    ts.contact_step(kind, world._body_arrays(ts.BODY_ARRAYS), world._buffer.pair_arrays(),
                    world._buffer.slot_arrays(), world._old_buffer.recycle_arrays(), world._gravity, dt,
                    world._settings.solver_settings, settings, isettings, integrate_positions, out, joints)
    stats = world.step_stats.values
    stats[StepStats.CONTACTS] = out[ts.STAT_CONTACTS]
    stats[StepStats.SWEEPS] = out[ts.STAT_ITERATIONS]
    stats[StepStats.RESIDUAL] = out[ts.STAT_RESIDUAL]
    stats[StepStats.STATUS] = out[ts.STAT_STATUS]


def _free_step(world: World, dt: float, kind: int) -> None:
    a = world._live()
    parallel = world._body.count >= PARALLEL_MIN_BODIES
    substeps = world._settings.substeps
    lag = (substeps - 1) / (2 * substeps)  # translate as the sub-stepped contact steps do
    if kind == Integrator.SPLITTING:
        kernel = integrate.step_splitting if parallel else integrate.step_splitting_serial
        kernel(a["mass"], a["inv_mass"], a["principal_q"], a["principal_moments"], a["inv_principal_moments"],
               a["x"], a["q"], a["v"], a["w"], a["force"], a["torque"], world._gravity, dt, lag)
    elif kind in (Integrator.SYMPLECTIC_EULER, Integrator.IMPLICIT_GYRO):
        kernel = integrate.step_symplectic_euler if parallel else integrate.step_symplectic_euler_serial
        kernel(a["mass"], a["inv_mass"], a["principal_q"], a["principal_moments"], a["inv_principal_moments"],
               a["x"], a["q"], a["v"], a["w"], a["force"], a["torque"], world._gravity, dt,
               kind == Integrator.IMPLICIT_GYRO, lag)
    else:
        _step_state_ode(world, dt, _ODE_METHOD[Integrator(kind)])


def _contact_kick(world: World, dt: float) -> None:
    """For the ODE integrators: find the step's contact impulses as the splitting scheme's velocity stage
    and solve would over the whole step (one sub-step of dt), and apply only the contacts' share to the
    velocities at the start of the step (an impulsive kick); the ODE then integrates gravity and the
    applied loads over the step. At rest the kick gives +g dt and gravity takes it back over the step."""
    a = world._live()
    v0, w0 = a["v"].copy(), a["w"].copy()
    force, torque = a["force"].copy(), a["torque"].copy()
    v_loads, w_loads = v0.copy(), w0.copy()  # what the loads alone do to the velocities over the step
    integrate.velocity_stage(int(Integrator.SPLITTING), a["mass"], a["inv_mass"], a["principal_q"],
                             a["principal_moments"], a["inv_principal_moments"], a["q"], v_loads, w_loads,
                             force.copy(), torque.copy(), world._gravity, dt, a["inv_inertia_world"].copy(),
                             np.ones(len(v0), dtype=np.bool_), True)
    _contact_step(world, dt, int(Integrator.SPLITTING), False)
    a["force"][...] = force
    a["torque"][...] = torque
    a["v"][...] = v0 + (a["v"] - v_loads)
    a["w"][...] = w0 + (a["w"] - w_loads)


def _kick_pseudo_move(world: World, dt: float) -> None:
    """For the ODE integrators with the split-impulse correction: move the bodies by the pseudo-velocities the
    kick's solve found (the splitting step's position pass, ``timestep._apply_pseudo``), after the ODE's step:
    positions only, so no kinetic energy is added. Without it nothing pushed two moving bodies apart: a sphere
    started 20 mm into a box resting on the ground stayed 20 mm in with rk4."""
    a = world._live()
    ts._apply_pseudo(a["principal_q"], a["principal_moments"], a["inv_principal_moments"], a["x"], a["q"], a["w"],
                     a["v_pseudo"], a["w_pseudo"], dt)


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


def _implicit_step(world: World, dt: float, method: str) -> None:
    """A step of an implicit integrator (methods/implicit.py) for a world without contacts and joints."""
    a = world._live()
    springs = world._spring_arrays() if world._springs else None
    world._implicit_workspace = implicit_step_unchecked(method, a["mass"], a["inv_mass"], a["inertia_body"], a["x"],
                                                        a["q"], a["v"], a["w"], a["force"], a["torque"],
                                                        world._gravity, springs, dt, world._implicit_workspace)
    a["force"][...] = 0.0
    a["torque"][...] = 0.0


def _spring_stage(world: World, dt: float, implicit: bool) -> None:
    """The springs' loads for this step, on the awake bodies (a sleeping body's loads would pile up, since the
    step skips it; a spring joins its bodies' islands, so a sleeping body's springs rest with it).

    With an implicit integrator (with contacts or joints: ``_step`` runs the whole implicit step without
    them) the springs alone are treated implicitly: their velocity change over the step by linearly implicit
    Euler, (M − h D − h² K) Δu = h (f_s + h K u) (notes 0.9.2 with the springs' loads only), enters the step as
    the equivalent load M Δu / h, and the splitting step solves contacts and joints with it."""
    a = world._live()
    springs = world._spring_arrays()
    if implicit:
        world._implicit_workspace = implicit_spring_loads(a["mass"], a["inv_mass"], a["inertia_body"], a["x"],
                                                          a["q"], a["v"], a["w"], springs, dt, a["force"],
                                                          a["torque"], world._implicit_workspace)
    else:
        spring_loads(springs, a["x"], a["q"], a["v"], a["w"], a["force"], a["torque"])
    if world._sleeping:
        clear_sleeping_loads(a["awake"], a["force"], a["torque"])
