"""Time-stepping (DESIGN.md "Two ways to advance time"): the default method, robust for stacks and piles.

A step, stage by stage (``TimeStepping.advance``):

    detection (collision/detect.py: AABBs → sweep and sort → narrowphase, into the contact buffer)
    → islands (constraints/islands.py: sleep and wake)
    → springs' loads (forces/springs.py)
    → with contacts or joints, one kernel (``contact_step``), per sub-step:
        velocity stage (integration/integrate.py) → contact and joint rows (constraints/, warm-started by feature
        id) → velocity solve (solvers/: Gauss–Seidel sweeps or the solver chosen) → position stage
        → position correction → rows refreshed at the new pose
      then restitution, and the impulses kept for the next step's warm start;
      without, the free-motion kernel (the same schemes fused per body)
    → joints' readings and breaking (model/joint_set.py)

The rows are rebuilt for the current pose after every position stage (``contact_rows.refresh_rows``), so
that every impulse of the step, in every sub-step, the position correction and the restitution pass, acts
on both bodies at one common world point with the current inverse inertias: the contacts then conserve the
total angular momentum about any fixed point, as they conserve linear momentum (Baraff II (8-12)).

Two ways of removing penetration without injecting energy (ArtiSynth notes 0.11; measured against each other
in docs/contact.md):

- ``CORRECTION_SPLIT`` (Bullet's split impulse): the velocity sweeps are rigid; a separate sweep finds
  pseudo-velocities that remove a fraction β of each penetration beyond a slop; they move the bodies in the
  position stage and are then dropped;
- ``CORRECTION_SOFT`` (Catto's soft step, Box2D v3): the velocity sweeps use regularized rows that push
  out of penetration (frequency, damping ratio); after the position stage, rigid "relax" sweeps remove
  the push velocity again.
"""

from __future__ import annotations

import math
import time
from collections import namedtuple
from typing import Any

import numpy as np

from ..collision.contacts import ContactBuffers, slot
from ..collision.detect import CollisionDetector
from ..constraints.contact_rows import prepare_rows, refresh_rows
from ..constraints.islands import clear_sleeping_loads, update_islands
from ..constraints.link_rows import to_joint_coordinates, to_solve_coordinates
from ..conventions import PARALLEL_MIN_BODIES, Integrator
from ..forces.springs import spring_loads
from ..integration import integrate
from ..integration.articulation import link_context, tree_begin, tree_end, tree_position, tree_velocity
from ..integration.guard import first_non_finite, restore_bodies, save_row, undo
from ..integration.integrate import inertia_stage, position_stage, velocity_stage
from ..jit import CallSite, njit
from ..math3d import exp_map_t, qmul_t, qrot_inv_t, qrot_t
from ..model.model import Model
from ..model.settings import (
    CORRECTION_SOFT,
    I_CORRECTION,
    I_FRICTION,
    I_FRICTION_DIRECTIONS,
    I_RELAX_ITERATIONS,
    I_SUBSTEPS,
    S_BAUMGARTE,
    S_DAMPING,
    S_HERTZ,
    S_MATCH_DISTANCE,
    S_MAX_PUSH,
    S_RESTITUTION_THRESHOLD,
    S_SLOP,
)
from ..model.state import State
from ..precompile import Share
from ..robots import step as robot_stages
from ..solvers import load_path as lp
from ..solvers import sequential_impulse as si
from ..solvers.joint_stage import joints_and_contacts_solve, joints_begin, joints_project, no_joints
from ..solvers.pivoting import MAX_LEMKE_SIZE
from ..solvers.velocity_solve import lemke_size, sweeps_singly, velocity_solve
from ..step import StepStats

# stats_out layout (step.StepStats.solver_out)
STAT_CONTACTS, STAT_ITERATIONS, STAT_RESIDUAL, STAT_STATUS, STAT_NON_FINITE = range(5)

StepInputs = namedtuple("StepInputs", ["scheme", "gravity", "h", "settings", "isettings", "integrate_positions"])
"""What ``contact_step`` is asked to do: the Integrator code of its velocity and position stages (SPLITTING,
SYMPLECTIC_EULER or IMPLICIT_GYRO), gravity (3,) [m/s²], the step h [s], the contact settings' float and int
arrays (layouts above), and whether to integrate positions (False: the ODE integrators' kick)."""

ONE_SOLVE_COMPILE_SECONDS = 60.0
"""[s] Cold compile time of ``contact_step`` with robots (the one solve's specialization) on the 2-core
development machine, for balancing precompile's shares (measured 2026-12-07 on a loaded machine: an estimate)."""

QUIET_WORLD_SKIP = True
"""Whether a step of a world whose moving bodies all sleep does nothing but advance the time (``_asleep``)."""


class TimeStepping:
    """The time-stepping method of a world (module docstring): ``advance`` is one step. Keeps what a step
    leaves for the next: the coherent collision detector and the islands' scratch, made anew when the model's
    bodies or shapes change (``Model.version``)."""

    name = "timestep"
    guards_state = True
    """Whether ``advance`` undoes a step that goes non-finite itself (integration/guard.py); else step.py does."""
    swapped = False
    """Whether this step's detection swapped the contact buffers (``after_undo`` swaps them back)."""
    robots_staged = False
    """Whether this step ran the robots' ``before_contacts`` (``undo`` then puts the robots back too)."""

    def __init__(self, model: Model) -> None:
        self._version = -1
        self._detector: CollisionDetector | None = None
        self._islands: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None
        self._links_only: bool | None = None
        self._robots_alone: bool | None = None
        self.free_scheme = int(model.integrator)
        """The Integrator code of the free-motion and contact stages (the implicit integrators use SPLITTING)."""
        self._keep_loads = model.settings.solver == "lemke"

    def loads_before_forces(self, state: State) -> tuple[np.ndarray, np.ndarray] | None:
        """With Lemke's solver, the loads before the force callbacks: a step whose LCP is beyond its dense
        tableau is refused before anything changes (``check_lemke_size``), the callbacks' loads taken back."""
        if not self._keep_loads:
            return None
        st = state.bodies()
        return st.force.copy(), st.torque.copy()

    def taking_over(self, previous: Any) -> TimeStepping:
        """This method, continuing where ``previous`` (the world's method before its integrator changed) left
        off: its collision detector and island scratch are kept, so detection stays coherent."""
        if isinstance(previous, TimeStepping):
            self._version, self._detector, self._islands = previous._version, previous._detector, previous._islands
        return self

    @property
    def collision_stats(self) -> dict[str, float]:
        """The detector's figures of the last detection (``CollisionDetector.stats``), {} before any."""
        return {} if self._detector is None else self._detector.stats

    def refresh(self, model: Model) -> None:
        """Drop what depends on the model's bodies and shapes when they changed since the last step."""
        if self._version != model.version:
            self._version = model.version
            self._detector = None
            self._islands = None
            self._links_only = None
            self._robots_alone = None

    def compile_shares(self, model: Model, state: State, contacts: ContactBuffers) -> list[Share]:
        """The kernels of this method's steps in shares that compile apart (precompile.py): the detection
        stage without its narrowphase, each narrowphase family the shapes can form, the robots' stages
        (robots/step.py ``compile_share``), and the contact step with the islands, springs and joints (not in a
        world of robots alone, whose steps never run it); each runs its stage on the (forked) world. Costs are the
        cold compile seconds of each share alone on an empty cache on the 2-core development machine."""
        shares = []
        detector = self.detector(model) if model.geom.count > 1 else None
        detects = detector is not None and not detector.idle
        if detects:
            shares += detector.compile_shares(model, state, contacts.now, contacts.last, 1.0 / 240.0)
        own = type(self).advance is TimeStepping.advance
        forest = model.robots
        # a world of robots alone runs neither the World's contact step nor its free step (``advance``)
        links_only = bool(len(forest)) and self.links_only(model)
        one_solve = bool(len(forest)) and not self.robots_alone(model) and self.one_solve_capable(model)
        if own and len(forest) and not (forest.alone and model.body.count == forest.n_link_bodies
                                        and not model.springs and not len(model.joints)):
            # (one robot and nothing else steps by its free step, World.step's one kernel: the stages only when
            # a limit comes in reach or a link is loaded)
            shares.append(robot_stages.compile_share(model, state, contacts, links_only, one_solve))
        if own and one_solve:
            def robots_contact_step() -> None:
                self.robots_in_step(model, state, contacts, 1.0 / 240.0, StepStats())

            shares.append(Share("contact step: robots", ONE_SOLVE_COMPILE_SECONDS, robots_contact_step,
                                (contact_step,)))
        if links_only:
            return shares
        if own and (detects or len(model.joints)):
            def contact_stages() -> None:
                run_contact_step(model, state, contacts, 1.0 / 240.0, self.free_scheme, True, StepStats())
                if model.settings.sleep and detects:
                    self.islands(model, state, contacts, 1.0 / 240.0)
                if model.springs:
                    self.spring_stage(model, state, 1.0 / 240.0)

            shares.append(Share("contact step", 12.5, contact_stages, (contact_step,)))
        if own and model.body.count:
            shares.append(Share("free step", 2.5, lambda: free_step(model, state, 1.0 / 240.0, self.free_scheme),
                                (free_step_site(model, self.free_scheme).kernel,)))
        return shares

    @staticmethod
    def fast_step(model: Model, state: State, dt: float, hooks: Any) -> bool:
        """The fast path of a world of one robot that nothing can touch and nothing else (no other body, spring,
        joint, or load on a link; ``hooks`` truthy when the world has force callbacks or attachments): the step
        is one kernel (robots/step.py ``free_step``: the ABA, or RK4), called through its compiled entry point
        once the first call found it (``_first_free_robot_step``). Returns whether it took the step (False: the
        full step follows; the kernel asks for it when a limit comes in reach). Raises the robots'
        non-finite error with the robot back at the step's start."""
        forest = model.robots
        if not (forest.alone and model.body._count == forest.n_link_bodies and not hooks and not model.springs
                and not model.joints.joints and not forest.loads_pending):
            return False
        b = state.body._view or state.bodies()
        forest.moves += 1
        entry = forest.free_step_entry
        if entry is not None:
            done = entry(forest.buffers, model.gravity, dt, forest.integrator == "rk4", b.x, b.q, b.v, b.w)
        else:
            done = _first_free_robot_step(forest, model.gravity, dt, b)
        if done == robot_stages.FREE_STEP_DONE:
            state.time += dt
            return True
        if done >= 0:
            raise robot_stages.non_finite_error(forest, done, state.time, dt)
        return False

    def links_only(self, model: Model) -> bool:
        """A world of robots alone: every moving body is a robot link's, no spring, and no World joint but loop
        closures. The robots' stages then move every body (``step_alone`` places them from the joint state), and
        nothing is left for the World's own free step, solve or islands (links never sleep). The bodies' part is
        cached until they change (``refresh``)."""
        if self._links_only is None:
            forest = model.robots
            n = model.body.count
            moving = (model.body.live("inv_mass") > 0.0) | model.body.live("kinematic")
            self._links_only = bool(forest.n_link_bodies and not np.any(moving & (forest.body_link(n) < 0)))
        return self._links_only and not model.springs and (not len(model.joints) or model.joints.only_closures)

    def detector(self, model: Model) -> CollisionDetector:
        self.refresh(model)
        if self._detector is None:
            self._detector = CollisionDetector(model)
        return self._detector

    # ------------------------------------------------------------------ the step
    def advance(self, model: Model, state: State, contacts: ContactBuffers, dt: float, stats: Any,
                loads: tuple[np.ndarray, np.ndarray] | None) -> None:
        """One step of ``dt`` [s] (module docstring); ``stats`` is the world's ``StepStats``."""
        t0 = time.perf_counter()
        self.swapped = False
        self.robots_staged = False
        if self._version != model.version:
            self.refresh(model)
        joints = len(model.joints) > 0
        if state.sleeping and self.quiet(model, state, contacts, joints):
            _asleep_step(contacts, state, stats)
            return
        pairs = self.detect(model, state, contacts, dt)
        if loads is not None:
            self.check_lemke_size(model, state, contacts, loads)
        t1 = time.perf_counter()
        robots = len(model.robots) > 0
        links_only = robots and self.links_only(model)   # the robots' stages move every body
        if pairs and model.settings.sleep and not links_only:
            self.islands(model, state, contacts, dt)
        elif state.sleeping:
            wake_all(model, state, contacts)
        # (a world of robots alone keeps its robots' own one-kernel step, robots/step.py, as its fast path: the one
        # solve's per-sub-step factorization and link rows cost a humanoid on the ground 4x its step, 202 µs vs 50)
        one_solve = robots and not self.robots_alone(model) and self.one_solve(model, state, contacts, dt)
        if one_solve:
            # the robots step inside the one contact step, their rows in its solve (integration/articulation.py)
            if model.springs:
                self.spring_stage(model, state, dt)
            bad = self.robots_in_step(model, state, contacts, dt, stats)
            if joints:
                model.joints.finish_step(dt)
        elif links_only:
            # every contact touches a link: the robots' stages are the whole step, in one call (robots/step.py)
            bad = robot_stages.step_alone(model, state, contacts, dt)
            if joints and bad < 0:
                model.joints.finish_step(dt)   # (the closures' readings and breaking)
        else:
            if model.springs:
                self.spring_stage(model, state, dt)
            solve = pairs > 0
            if robots and (self.robots_alone(model) or not self.one_solve_capable(model)):
                # every contact touching a link is the robots' (robots/step.py); none left: no World solve
                solve = robot_stages.before_contacts(model, state, contacts, dt) and solve
                self.robots_staged = True   # (``undo`` puts the robots back too)
            elif robots:   # nothing couples the robots this step (``one_solve``): their own step after the bodies'
                self.robots_apart(model, state)
            if not solve and not joints:
                if free_step(model, state, dt, self.free_scheme):
                    self.undo(model, state, contacts, "free-motion step (integration/integrate.py)", dt)
            else:
                self.contact_step(model, state, contacts, dt, stats)
                if joints:
                    model.joints.finish_step(dt)
            bad = robot_stages.after_contacts(model, state, contacts, dt) if robots else -1
        if bad >= 0:   # the robots are back at the step's start; the bodies go back too
            restore_bodies(state.bodies())
            if links_only:   # no World step saved the link bodies' start: placed from the joints again
                b = state.bodies()
                robot_stages.place_links(model.robots.buffers, b.x, b.q, b.v, b.w)
            self.after_undo(model, contacts)
            raise robot_stages.non_finite_error(model.robots, bad, state.time, dt)
        finish(state, contacts, dt, pairs, model.settings.substeps, stats, t0, t1)

    def robots_alone(self, model: Model) -> bool:
        """Whether no moving body is not a robot link's (``links_only``, or robots without collision shapes and no
        other moving body): such a world keeps its robots' own stages (robots/step.py), its fast path, and does not
        step them in the one solve (docs/robots.md "Not yet in the one solve"). Cached until the bodies change
        (``refresh``)."""
        if self._robots_alone is None:
            moving = (model.body.live("inv_mass") > 0.0) | model.body.live("kinematic")
            self._robots_alone = not np.any(moving & (model.robots.body_link(model.body.count) < 0))
        return self.links_only(model) or self._robots_alone

    @staticmethod
    def one_solve_capable(model: Model) -> bool:
        """Whether the world's robots step in the one solve when something couples them (``one_solve``): without
        loop closures (every solver: solvers/velocity_solve.py)."""
        return not (len(model.joints) and model.joints.closure_args(model.body.live("inv_mass")) is not None)

    def one_solve(self, model: Model, state: State, contacts: ContactBuffers, dt: float) -> bool:
        """Whether this step's robots step inside the contact step, their contacts, limits and dry friction rows of
        its solve (``robots_in_step``): in a world ``one_solve_capable``, when a link touches something, a limit is
        in reach or a joint has dry friction. Otherwise they step by their own stages: alone by the ABA or RK4
        when nothing couples them (robots/step.py ``free_step``), and with loop closures by robots/step.py's
        contact stage (issue 49: not yet in the one solve)."""
        if not self.one_solve_capable(model):
            return False
        forest = model.robots
        now = contacts.now
        if model.geom.count > 1 and now.pair_count and robot_stages.count_link_contacts(
                now.pairs.live("pair_body"), now.pairs.live("pair_contacts"),
                forest.body_link(model.body.count)) > 0:
            return True
        return forest.joint_friction or robot_stages.limits_in_reach(forest.tree, forest.state.q, forest.state.qd,
                                                                     dt)

    @staticmethod
    def robots_apart(model: Model, state: State) -> None:
        """A step of robots that nothing couples (``one_solve`` False in a world ``one_solve_capable``): their links'
        loads taken as joint forces before the World's step clears them; ``after_contacts`` then steps the robots
        whole (robots/step.py ``free_step``: the ABA, or RK4)."""
        forest = model.robots
        forest.coupled = False
        forest.hidden = 0
        b = state.bodies()
        robot_stages.gather_loads(forest.buffers, b.force, b.torque)

    def robots_in_step(self, model: Model, state: State, contacts: ContactBuffers, dt: float, stats: Any) -> int:
        """The contact step with the robots in it (``one_solve``). Returns −1, or the robots' first non-finite
        coordinate (the robots are then back at the step's start)."""
        forest = model.robots
        forest.moves += 1      # the joint state moves (Robot keeps its links' kinematics until it does)
        forest.coupled = True   # (``undo`` puts the robots back: robots/step.py ``undo_robots``)
        forest.hidden = 0
        self.robots_staged = True
        now = contacts.now
        link_contacts = robot_stages.count_link_contacts(now.pairs.live("pair_body"), now.pairs.live(
            "pair_contacts"), forest.body_link(model.body.count)) if now.pair_count else 0
        robots = forest.one_solve_args(model.body.count, now.pairs.capacity, now.slots.capacity, link_contacts)
        run_contact_step(model, state, contacts, dt, self.free_scheme, True, stats, robots)
        arrays = robots[2]
        if arrays.counts[2] >= 0:   # a joint coordinate went non-finite: the robots are back (``advance`` raises)
            forest.coupled = False
            return int(arrays.counts[2])
        if stats.solver_out[STAT_NON_FINITE] >= 0:
            self.undo(model, state, contacts, "contact step (velocity stage, contact solve, position stage)", dt)
        forest.coupled = False
        forest.last_rows = int(arrays.counts[0] + arrays.counts[1] - (arrays.J.shape[0] - 3 * forest.nv))
        return int(arrays.counts[2])

    def contact_step(self, model: Model, state: State, contacts: ContactBuffers, dt: float, stats: Any) -> None:
        """The contact step's kernel (``run_contact_step``), undone if it left a body non-finite."""
        run_contact_step(model, state, contacts, dt, self.free_scheme, True, stats)
        if stats.solver_out[STAT_NON_FINITE] >= 0:
            self.undo(model, state, contacts, "contact step (velocity stage, contact solve, position stage)", dt)

    def undo(self, model: Model, state: State, contacts: ContactBuffers, stage: str, dt: float) -> None:
        """Undo a step that left a body non-finite and raise ``guard.NonFiniteStep``: the bodies as at the
        start (their ``*_before`` rows), then ``after_undo``."""
        error = undo(state.bodies(), model.names, stage, state.time, dt)
        if self.robots_staged:   # the robots' stage of this step may have changed their q̇ and warm starts
            robot_stages.undo_robots(model)
            self.robots_staged = False
        self.after_undo(model, contacts)
        raise error

    def after_undo(self, model: Model, contacts: ContactBuffers) -> None:
        """After the bodies of an undone step were put back: the last step's contacts become current again
        (when this step's detection swapped the buffers), and the joints' carried impulses are cleared."""
        if self.swapped:
            contacts.swap()
            self.swapped = False
        if len(model.joints):
            model.joints.clear_impulses()

    def detect(self, model: Model, state: State, contacts: ContactBuffers, dt: float) -> int:
        """The detection stage: the new contacts go to one buffer while the other keeps the last step's,
        whose witnesses and impulses carry over by pair key and feature id. Returns the candidate pairs."""
        if model.geom.count <= 1:
            return 0
        contacts.swap()
        self.swapped = True
        now = contacts.now
        self.detector(model).update(model, state, now, contacts.last, dt)
        return now.pair_count

    def islands(self, model: Model, state: State, contacts: ContactBuffers, dt: float) -> None:
        """Sleep and wake by islands (constraints/islands.py); ``dt`` [s] advances the quiet timers."""
        if self._islands is None:
            n = model.body.count
            self._islands = (np.empty(n, dtype=np.int64), np.empty(n), np.empty(n, dtype=np.int64))
        settings = model.settings
        state.sleeping = _UPDATE_ISLANDS(contacts.now.pairs.view(), model.bodies(), state.bodies(), self._islands, dt,
                                         settings.sleep_speed, settings.sleep_time, model.island_edges(),
                                         math.hypot(*model.gravity))

    def spring_stage(self, model: Model, state: State, dt: float) -> None:
        """The springs' loads for this step, on the awake bodies (a sleeping body's loads would pile up, since the
        step skips it; a spring joins its bodies' islands, so a sleeping body's springs rest with it)."""
        st = state.bodies()
        spring_loads(model.spring_arrays(), st.x, st.q, st.v, st.w, st.force, st.torque)
        if state.sleeping:
            clear_sleeping_loads(st.awake, st.force, st.torque)

    def quiet(self, model: Model, state: State, contacts: ContactBuffers, joints: bool) -> bool:
        """Whether the step can be skipped (``_asleep_step``, with ``QUIET_WORLD_SKIP``): every moving body
        sleeps, no kinematic body moves, the last step found contact pairs, and nothing but contacts ties bodies
        together or loads them (no joints, springs or attachments; a force callback that applied a load has woken
        its body by now)."""
        if not (state.sleeping and QUIET_WORLD_SKIP):
            return False
        if joints or model.springs or len(model.attachments) or len(model.robots) or not model.settings.sleep:
            return False
        if contacts.dt is None:   # the last step found no pairs: the full step wakes every sleeping body
            return False
        kinematic = model.body.live("kinematic")
        if kinematic.any():   # a kinematic body that moves must be moved, and may wake what it meets
            st = state.bodies()
            if np.any(st.v[kinematic]) or np.any(st.w[kinematic]):
                return False
        return state.sleeping == int(np.count_nonzero(model.body.live("inv_mass")))

    def check_lemke_size(self, model: Model, state: State, contacts: ContactBuffers,
                         loads: tuple[np.ndarray, np.ndarray]) -> None:
        """ValueError when the step's LCP is beyond Lemke's dense tableau, after undoing the detection and the
        force callbacks' loads (``loads``), so the world is as it was before the step."""
        p = contacts.now.pairs
        isettings = model.settings.arrays[1]
        size = lemke_size(p.live("pair_contacts"), p.live("pair_awake"), isettings[I_FRICTION],
                          isettings[I_FRICTION_DIRECTIONS])
        if size > MAX_LEMKE_SIZE:
            contacts.swap()
            st = state.bodies()
            st.force[...], st.torque[...] = loads
            raise ValueError(f"solver='lemke': this step's LCP has {size} unknowns, more than MAX_LEMKE_SIZE = "
                             f"{MAX_LEMKE_SIZE} (Lemke's dense tableau); use solver='pgs', 'apgd' or 'cg'")


def _first_free_robot_step(forest: Any, gravity: np.ndarray, dt: float, b: Any) -> int:
    """``free_step`` of the robots through Numba's dispatcher (its answer), keeping the compiled entry point for the
    later steps, which call it directly (0.4 µs less per step: no typing of the eight arguments, whose types are
    fixed — the forest's packed float64/int64 buffers, the model's gravity (3,), the bodies' C-contiguous rows
    (``b``), a float and a bool; tests/robots check the step it takes)."""
    free = robot_stages.free_step
    args = (forest.buffers, gravity, dt, forest.integrator == "rk4", b.x, b.q, b.v, b.w)
    done = free(*args)
    compiled = free.overloads.get(tuple(free.typeof_pyval(a) for a in args))
    forest.free_step_entry = None if compiled is None else compiled.entry_point
    return done


def wake_all(model: Model, state: State, contacts: ContactBuffers) -> None:
    """Wake every moving body, and this step's pairs: those detected asleep kept their contacts (still valid:
    nothing moved) and must now be solved."""
    state.wake_all(model.body.live("inv_mass"))
    contacts.now.pairs.live("pair_awake")[:] = True


def _asleep_step(contacts: ContactBuffers, state: State, stats: Any) -> None:
    """The step of a world whose moving bodies all sleep (Box2D's islands: a sleeping world costs nothing).

    Such a step would change nothing: a sleeping body keeps its pose and zero velocities, detection would
    find the same pairs at the same poses (the narrowphase already skips a pair with no awake body and
    keeps its contacts), no island can wake without an awake body in it, and the solver skips every pair.
    So detection and solve are skipped and the last step's buffer stays, contacts, impulses and all, for
    ``world.contacts()`` and the warm start when something wakes the world (a setter, a load, a new body).
    The buffer keeps the step ``dt`` its impulses were solved with, so ``world.contacts()`` reports force =
    impulse / that dt whatever ``dt`` the skipped steps take. tests/contact/test_sleep.py checks that a
    trajectory that sleeps and is woken by a dropped body is bitwise the one of the full steps."""
    values = stats.values
    values[stats.CONTACTS] = int(contacts.now.pairs.live("pair_contacts").sum())
    values[stats.SLEEPING] = state.sleeping
    values[stats.SECONDS_SOLVE] = 0.0


def finish(state: State, contacts: ContactBuffers, dt: float, pairs: int, substeps: int, stats: Any, t0: float,
           t1: float) -> None:
    """The step's bookkeeping: the step the contacts' impulses belong to, the statistics."""
    values = stats.values
    values[stats.SLEEPING] = state.sleeping
    contacts.dt = dt if pairs else None
    contacts.substeps = substeps
    t2 = time.perf_counter()
    values[stats.SECONDS_DETECT] = t1 - t0
    values[stats.SECONDS_SOLVE] = t2 - t1


def run_contact_step(model: Model, state: State, contacts: ContactBuffers, dt: float, scheme: int,
                     integrate_positions: bool, stats: Any, robots: tuple | None = None) -> None:
    """``contact_step`` on the model, state and contact buffers: the whole step after detection
    (``integrate_positions`` False: the ODE integrators' kick, one sub-step of dt, no position stage);
    ``robots`` None or the robots that step in it (robots/forest.py ``Forest.one_solve_args``)."""
    settings = model.settings
    arrays, iarrays = settings.arrays if integrate_positions else settings.kick_arrays
    out = stats.solver_out
    joints = model.joints.kernel_args(model.body.live("inv_mass")) if len(model.joints) else None
    inputs = StepInputs(scheme, model.gravity, dt, arrays, iarrays, integrate_positions)
    _CONTACT_STEP(model.bodies(), state.bodies(), contacts.now.pairs.view(), contacts.now.slots.view(),
                  contacts.last.warm_start(), inputs, settings.solver_settings, out, joints, robots)
    values = stats.values
    values[stats.CONTACTS] = out[STAT_CONTACTS]
    values[stats.SWEEPS] = out[STAT_ITERATIONS]
    values[stats.RESIDUAL] = out[STAT_RESIDUAL]
    values[stats.STATUS] = out[STAT_STATUS]


def free_step_site(model: Model, scheme: int) -> CallSite:
    """The fused per-body kernel of ``scheme`` (integration/integrate.py), threaded for many bodies."""
    serial = model.body.count < PARALLEL_MIN_BODIES
    return _FREE_STEP[(0 if scheme == Integrator.SPLITTING else 2) + serial]


def free_step(model: Model, state: State, dt: float, scheme: int) -> int:
    """A step without contacts or joints: the scheme's fused per-body kernel (integration/integrate.py).
    Returns how many bodies it left non-finite (their start is in the ``*_before`` rows)."""
    body, st = model.bodies(), state.bodies()
    substeps = model.settings.substeps
    lag = (substeps - 1) / (2 * substeps)  # translate as the sub-stepped contact steps do
    if scheme == Integrator.SPLITTING:
        return free_step_site(model, scheme)(body, st, model.gravity, dt, lag)
    return free_step_site(model, scheme)(body, st, model.gravity, dt, scheme == Integrator.IMPLICIT_GYRO, lag)


@njit(cache=True)   # with reference counting: the solver it calls by overload may allocate (APGD, CG, Lemke)
def contact_step(body, state, pairs, slots, old, inputs, solver, stats_out, joints, robots):
    """Advance every body by h [s] with the contacts in the buffer (module docstring).

    ``body`` (BodyModel), ``state`` (BodyState): the bodies; ``pairs`` (ContactPairs), ``slots``
    (ContactSlots): this step's contact buffer, detected; ``old`` (WarmStart): the last step's, for the warm
    start; ``inputs`` (StepInputs): the scheme, gravity, h and settings. ``solver``: the settings tuple of the
    velocity solve (solvers/velocity_solve.py; its type picks the solver, so each solver compiles its own
    specialization of this kernel). ``inputs.integrate_positions`` False stops after the velocity solve and,
    with the split correction, its pseudo sweep (the ODE integrators then take the contact impulses as an
    initial kick, and move the bodies by the pseudo-velocities v_pseudo, w_pseudo after their step:
    methods/ode.py). stats_out (5,): contacts, the solver's iterations summed over the sub-steps, the last
    sub-step's residual [m/s], the worst sub-step's status (solvers/result.py's codes), and with
    ``integrate_positions`` the first non-finite body and field (``guard.first_non_finite``: 4 i + f, or -1;
    the start of the step is in the ``*_before`` rows). ``joints``: None,
    or the joints' arrays (model/joint_set.py). ``robots``: None, or the robots stepped in this kernel
    (integration/articulation.py): their velocity and position stages run in each sub-step beside the bodies',
    and their contacts, limits and dry friction are rows of the same solve (constraints/link_rows.py).
    """
    scheme, gravity, h, settings, isettings, integrate_positions = inputs
    inv_mass, principal_q, inv_principal_moments = body.inv_mass, body.principal_q, body.inv_principal_moments
    q, v, w, inv_inertia_world = state.q, state.v, state.w, state.inv_inertia_world
    v_pseudo, w_pseudo, awake = state.v_pseudo, state.w_pseudo, state.awake
    pair_contacts = pairs.pair_contacts
    friction_impulse, tangent, tangent_impulse = slots.friction_impulse, slots.tangent, slots.tangent_impulse
    pseudo_impulse = slots.pseudo_impulse
    joints_begin(joints)
    links = link_context(robots)
    substeps = isettings[I_SUBSTEPS]
    hs = h / substeps
    for i in range(v.shape[0]):     # the velocities before any load acts, for the rows' approach velocity
        for c in range(3):          # (a loop: an array-to-array slice assignment may allocate a copy)
            v_pseudo[i, c] = v[i, c]
            w_pseudo[i, c] = w[i, c]
        if integrate_positions:     # the start, put back if the step goes non-finite (integration/guard.py)
            save_row(i, state)
    tree_begin(links, state, hs, substeps)
    velocity_stage(scheme, body, state, gravity, hs, substeps == 1)
    tree_velocity(links, gravity, hs, settings[S_BAUMGARTE], settings[S_MAX_PUSH])
    count = prepare_rows(pairs, slots, old, inv_mass, state, (v_pseudo, w_pseudo), settings[S_MATCH_DISTANCE], hs,
                         links)
    correction = isettings[I_CORRECTION]
    soft = correction == CORRECTION_SOFT
    # Soft rows stay stable up to about a quarter of the sub-step rate (Catto, Box2D v3).
    hertz = min(settings[S_HERTZ], 0.25 / hs)
    bias_rate, mass_scale, impulse_scale = si.soft_coefficients(hertz, settings[S_DAMPING], hs)
    max_push = settings[S_MAX_PUSH]
    friction_model, directions = isettings[I_FRICTION], isettings[I_FRICTION_DIRECTIONS]
    rows = (pairs, slots, inv_mass, links)
    touch_band = settings[S_SLOP]
    angular, compliant = False, False     # whether some pair has angular rows, compliant rows (docs/materials.md)
    for k in range(pair_contacts.shape[0]):
        if pair_contacts[k] > 0:
            angular = angular or pairs.pair_rolling[k] != 0.0 or pairs.pair_torsional[k] != 0.0
            compliant = compliant or pairs.pair_compliance[k] > 0.0
    solve_bias = (hs, soft, bias_rate, mass_scale, impulse_scale, max_push, touch_band, False, angular, compliant)
    relax_bias = (hs, False, 0.0, 1.0, 0.0, 0.0, touch_band, True, angular, compliant)
    iterations = 0
    residual = 0.0
    status = 0
    # A light body that a much heavier one bears on: its normal rows solved as one block after the sweeps and
    # after the pseudo sweeps (solvers/load_path.py); Gauss–Seidel alone passes the load through it too slowly.
    # (not with robots: the blocks know bodies alone)
    blocks = links is None and not soft and no_joints(joints) and sweeps_singly(solver) and \
        lp.has_light_body(pairs, inv_mass)
    for sub in range(substeps):
        if sub > 0:
            velocity_stage(scheme, body, state, gravity, hs, sub == substeps - 1)
            tree_velocity(links, gravity, hs, settings[S_BAUMGARTE], settings[S_MAX_PUSH])
        # The impulses are per sub-step: each sub-step starts from the last one's (warm start).
        si.warm_start(pairs, slots, inv_mass, v, w, links)
        body_stage = (body, state, scheme)
        done, residual, ended = joints_and_contacts_solve(joints, solver, rows, solve_bias, friction_model,
                                                          directions, body_stage, hs, isettings, integrate_positions)
        iterations += done
        status = max(status, ended)   # the worst sub-step: failed > max_iterations > converged
        if blocks:
            lp.solve_blocks(pairs, slots, inv_mass, v, w, slots.normal_impulse, False, hs, touch_band, 0.0, 0.0)
        if not soft:
            v_pseudo[:] = 0.0
            w_pseudo[:] = 0.0
            pseudo_impulse[:] = 0.0
            for _ in range(isettings[I_RELAX_ITERATIONS]):
                si.pseudo_sweep(pairs, slots, inv_mass, v_pseudo, w_pseudo, hs, settings[S_BAUMGARTE],
                                settings[S_SLOP], links)
            if blocks:
                lp.solve_blocks(pairs, slots, inv_mass, v_pseudo, w_pseudo, pseudo_impulse, True, hs, touch_band,
                                settings[S_BAUMGARTE], settings[S_SLOP])
        if not integrate_positions:
            break       # (the ODE integrators apply the pseudo-velocities after their step: ode.kick_pseudo_move)
        if not soft:
            si.advance_separation(pairs, slots, inv_mass, v_pseudo, w_pseudo, hs, links, True)
        si.advance_separation(pairs, slots, inv_mass, v, w, hs, links, False)
        position_stage(scheme, body, state, hs)
        moved = False
        if not soft:
            moved = apply_pseudo(body, state, hs)
        tree_position(links, hs, state)
        joints_project(joints, body_stage, isettings)
        # The bodies have moved: the rows follow them (the relax pass, the next sub-step and the restitution
        # pass use them), with I⁻¹ at the new orientations (the next velocity stage computes the same again).
        # Rows kept from the start of the step made each body's impulse act at its own stale point with a
        # stale I⁻¹: two boxes colliding in zero gravity changed L by 0.65 % with 4 sub-steps (1e-14 with 1).
        inertia_stage(principal_q, inv_principal_moments, q, inv_inertia_world, awake)
        relax = soft and isettings[I_RELAX_ITERATIONS] > 0
        refresh_rows(pairs, slots, inv_mass, state, moved, sub == substeps - 1 and not relax,
                     settings[S_RESTITUTION_THRESHOLD], hs, links)
        if relax:
            # the rigid relax pass, by the same solver (a tolerance of −1: every iteration runs)
            to_solve_coordinates(links)
            velocity_solve(solver, rows, relax_bias, friction_model, directions, isettings[I_RELAX_ITERATIONS],
                           -1.0, v, w)
            to_joint_coordinates(links)
    if integrate_positions:
        to_solve_coordinates(links)
        for _ in range(isettings[I_RELAX_ITERATIONS]):
            si.restitution_sweep(pairs, slots, inv_mass, v, w, settings[S_RESTITUTION_THRESHOLD], hs, links)
        to_joint_coordinates(links)

    for k in range(pair_contacts.shape[0]):
        for j in range(pair_contacts[k]):
            s = slot(k, j)
            for c in range(3):
                friction_impulse[s, c] = (tangent_impulse[s, 0] * tangent[s, 0, c]
                                          + tangent_impulse[s, 1] * tangent[s, 1, c])
    stats_out[STAT_CONTACTS] = count
    stats_out[STAT_ITERATIONS] = iterations
    stats_out[STAT_RESIDUAL] = residual
    stats_out[STAT_STATUS] = status
    stats_out[STAT_NON_FINITE] = first_non_finite(state) if integrate_positions else -1
    tree_end(links, state)


@njit(cache=True, refcount=False)
def apply_pseudo(body, state, h):
    """Move every body by its split-impulse pseudo-velocities over h [s]: x ← x + h v_p, q ← exp(½ h ω_p) q,
    keeping its world spin I ω: ω ← I(q')⁻¹ I(q) ω. Returns whether any body moved. ``body`` (BodyModel),
    ``state`` (BodyState, with the pseudo-velocities v_pseudo, w_pseudo).

    The pseudo move is a correction of the pose, not a physical impulse, so it must not change the angular
    momentum: turning the body's inertia under a fixed ω changed I(q) ω (two boxes started 3 cm into each
    other: L changed 7.7 % with one sub-step and no restitution). Keeping I ω is what a torque-free rotation
    does (the splitting's exact rotation keeps it too). The orbital part Σ x × M v moves by h P × (v_a − v_b)
    for a pseudo impulse P on a sliding contact; ``contact_rows.refresh_rows`` (withdraw) balances it.
    """
    principal_q, principal_moments, inv_principal_moments = (body.principal_q, body.principal_moments,
                                                             body.inv_principal_moments)
    x, q, w, v_pseudo, w_pseudo = state.x, state.q, state.w, state.v_pseudo, state.w_pseudo
    moved = False
    for i in range(x.shape[0]):
        wx, wy, wz = w_pseudo[i, 0], w_pseudo[i, 1], w_pseudo[i, 2]
        if wx == 0.0 and wy == 0.0 and wz == 0.0 and v_pseudo[i, 0] == 0.0 and v_pseudo[i, 1] == 0.0 \
                and v_pseudo[i, 2] == 0.0:
            continue
        moved = True
        for k in range(3):
            x[i, k] += h * v_pseudo[i, k]
        if wx == 0.0 and wy == 0.0 and wz == 0.0:
            continue
        # the world spin I ω = Rp diag(I) Rpᵀ ω at the old orientation (Rp = q principal_q)
        pw, px, py, pz = qmul_t(q[i, 0], q[i, 1], q[i, 2], q[i, 3],
                                principal_q[i, 0], principal_q[i, 1], principal_q[i, 2], principal_q[i, 3])
        a0, a1, a2 = qrot_inv_t(pw, px, py, pz, w[i, 0], w[i, 1], w[i, 2])
        l0, l1, l2 = qrot_t(pw, px, py, pz, principal_moments[i, 0] * a0, principal_moments[i, 1] * a1,
                            principal_moments[i, 2] * a2)
        dw, dx, dy, dz = exp_map_t(wx, wy, wz, h)
        a, b, c, d = qmul_t(dw, dx, dy, dz, q[i, 0], q[i, 1], q[i, 2], q[i, 3])
        inv = 1.0 / np.sqrt(a * a + b * b + c * c + d * d)
        q[i, 0], q[i, 1], q[i, 2], q[i, 3] = a * inv, b * inv, c * inv, d * inv
        # ω' = I(q')⁻¹ (I ω) at the new orientation
        pw, px, py, pz = qmul_t(q[i, 0], q[i, 1], q[i, 2], q[i, 3],
                                principal_q[i, 0], principal_q[i, 1], principal_q[i, 2], principal_q[i, 3])
        a0, a1, a2 = qrot_inv_t(pw, px, py, pz, l0, l1, l2)
        w[i, 0], w[i, 1], w[i, 2] = qrot_t(pw, px, py, pz, inv_principal_moments[i, 0] * a0,
                                           inv_principal_moments[i, 1] * a1, inv_principal_moments[i, 2] * a2)
    return moved


# The per-step kernels, called through call sites (jit.CallSite: no type dispatch per step).
_CONTACT_STEP, _UPDATE_ISLANDS = CallSite(contact_step), CallSite(update_islands)
_FREE_STEP = tuple(CallSite(kernel) for kernel in (integrate.step_splitting, integrate.step_splitting_serial,
                                                     integrate.step_symplectic_euler,
                                                     integrate.step_symplectic_euler_serial))
