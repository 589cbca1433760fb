"""Event-driven simulation (Baraff II 6, 8, 9 and Appendix D): ``World(method="event")``.

Time advances by integrating Baraff's ODE over Y = (x, q, P, L) of every body (Baraff I section 3, behind
``tumble.ode``), with the resting-contact forces inside ``dydt``:

1. at the current state, contacts within ``contact_band`` of touching are classified by their relative
   normal velocity v_rel (8-3): colliding below −``threshold``, separating above ``threshold``, resting
   between. Colliding contacts get impulses (8-18) with their restitution, one contact at a time as
   ``find_all_collisions`` does until none is colliding ("sequential"), or all at once as an LCP
   ("simultaneous"). Contacts still closing more slowly than ``threshold`` then get a plastic impulse
   (e = 0), all at once (an LCP): they become resting. This is what ends Zeno behaviour — a ball whose
   bounces would shrink geometrically forever comes to rest once it lands slower than ``threshold``;
2. the ODE is integrated over a step h (the rest of ``dt``, no longer than lets any body move a quarter of
   the thinnest bounding box, so a fast body cannot pass through a thin one within a step); the contacts
   resting at the start of the step (touching, −``threshold`` ≤ v_rel ≤ 10⁻³ ``threshold``: a separating
   one flies) keep, in every ``dydt`` of the step whatever their depth there, the forces of the
   resting-contact LCP d̈ = A f + b, f ≥ 0, d̈ ≥ 0, f·d̈ = 0 (9-5…9-9) at the state
   ``dydt`` is given, solved by Lemke's method. A contact that starts touching within the step gets no
   force there (it is a collision, found in 3), so the state at the end of a step is a continuous
   function of the step's length, which the root finding needs;
3. if the state at the end of the step penetrates deeper than ``tolerance`` ε (each contact measured from
   the deepest penetration of its pair at the start of the step, so contacts already touching do not mask
   a new one), the collision time is
   searched in the step: bisection (Baraff II 6), or the Illinois variant of regula falsi on the deepest
   penetration (default; it falls back on bisection where no contact is reported yet), until the deepest
   penetration is within [ε/4, ε]; at most ``max_halvings`` evaluations. The state there is the new
   state and the loop returns to 1.

The resting-contact LCP's A = J M⁻¹ Jᵀ is singular whenever more contacts than degrees of freedom hold a
body (a box flat on the ground: 4 contacts, 3 degrees of freedom), and then its forces are not unique; the
forces kept are the smallest (least-norm) ones on the active set Lemke finds, which share the load
symmetrically (checked against the LCP's conditions before they are used).

Friction acts on resting contacts, at acceleration level (``EventDriven._friction_lcp``): a sliding contact
gets μ f against its sliding velocity, exactly on Coulomb's cone; a contact at rest sticks or starts to slip
through Stewart–Trinkle's linearized cone in the same LCP; a slide that comes to a stop within a step ends
the step there (``_stop_time``). Impulses are frictionless in the default sequential mode; with
``impacts="simultaneous"`` they have Coulomb friction (``_frictional_impulses``). After every impulse LCP,
contacts that it lifts off slower than ``threshold`` are caught (``_catch``): the chatter of a box rocking onto a
face (docs/event.md says where the method stops).
"""

from __future__ import annotations

import math
import time
from collections import namedtuple
from dataclasses import dataclass, field, replace
from functools import partial
from typing import TYPE_CHECKING, Any

import numpy as np

from ..collision.contacts import ContactBuffer
from ..collision.detect import CONTACT_CODE, CollisionDetector, Contacts, gather
from ..constraints import resting as rc
from ..constraints.joint_dense import DenseJoints
from ..integration import ode as _ode
from ..integration import state_vector as _state
from ..integration.guard import first_non_finite, save_bodies
from ..jit import njit
from ..model import body_arrays
from ..precompile import Share
from ..shapes import Box, ConvexHull, Sphere
from ..solvers.blas_threads import one_blas_thread
from ..solvers.pivoting import LEMKE_ACCEPT, lemke_retried
from ..solvers.result import CONVERGED, STATUS_NAMES
from .ode import project_joint_velocities, project_joints, record_joint_impulses

if TYPE_CHECKING:
    from ..collision.contacts import ContactBuffers
    from ..model.model import Model
    from ..model.state import State

IMPACTS = ("sequential", "simultaneous")
ROOT_FINDERS = ("illinois", "bisection")
STOP_SPEED_FRACTION = 1e-6
"""A sliding contact whose tangential speed is below this fraction of ``threshold`` (1e-9 m/s by default)
has stopped: the stop time is found to it, and the contact sticks from there."""
FRICTION_DIRECTIONS = 8
"""Directions of the linearized friction cone of a sticking contact (``EventDriven._friction_lcp``): the
octagon inscribed in the circle resists the start of slip by at least μ f cos(π/8) = 0.92 μ f (exactly μ f
along each of the 8 directions)."""
STOP_TIME_RESOLUTION = 1e-6
"""The friction-stop search (``EventDriven._stop_time``) ends on a bracket narrower than this fraction of the
step when the speed jumps across the stop band instead of crossing it."""
JUMP_FRACTION = 1e-2
"""... or sooner, on a bracket across which the speed's steady change (the step's mean rate times the width) is
below this fraction of the jump between its ends: a narrower bracket moves the stop by less than the jump."""
EVENT_ODES = ("rk4", "adaptive")
SEPARATING_FRACTION = 1e-3
"""A touching contact whose v_rel is above this fraction of ``threshold`` (1 µm/s by default) separates: it
flies freely (``EventDriven._resting_at_start``); one at or below it rests or closes."""
CATCH_ROUNDS = 4
"""Rounds of the catch of slowly lifted contacts after an impact LCP (``EventDriven._catch``)."""
MAX_EVENTS_PER_STEP = 2000
"""The most event intervals (integrations between collisions, friction stops and the step bound) one ``step`` may
take before it raises ``EventBudgetExceeded``: contacts that chatter (Zeno-like: impact, lift, land again) would
otherwise go on for ever inside one step. A few to a few dozen are usual (bench/tosses.py, tests/event)."""
MAX_LCP_WORK_PER_STEP = 2e9
"""The most dense-LCP work one ``step`` may do, Σ m³ over the friction LCPs of its derivatives (m unknowns each:
a contact with friction is 10 of them): measured on a pile of 20 spheres resting on the ground (200 unknowns),
a derivative took 0.26 s on the 2-core machine (m³ = 8e6: about 3e7 units a second), nearly all of it the
least-norm polish's SVDs of the 200 × 200 LCP (with BLAS on two threads of a loaded machine: one thread takes
~2 ms a derivative, ``advance_by``); a pile of 100 spheres (208 contacts, 2080 unknowns) took 164 s for one step,
and three jointed boxes in a row with ``collide=True`` 4–22 s a step (dozens of derivatives of ~200 unknowns).
2e9 is about a minute of one core's work; beyond it the step raises ``EventBudgetExceeded`` instead of running for
many minutes (2e10, the first value, let a step run ~10 min)."""


class EventBudgetExceeded(RuntimeError):
    """A step of the event method ran past its budget (``MAX_EVENTS_PER_STEP``, ``MAX_LCP_WORK_PER_STEP``); the
    world is as before the step. The message names the stage and what to do."""

    user_error = True   # the CLI prints it as one line, status 2


class EventLCPFailed(RuntimeError):
    """An LCP of the event method that Lemke's method could not solve, on the exact problem or any regularized
    one (``solve_lcp``): a degenerate problem, where contacts, friction directions or joints act on fewer degrees
    of freedom than they hold (the end faces of two boxes joined by a ball joint with ``collide=True``: the
    joint already holds what their contacts would). Raised by ``World.step``, with the world as before the
    step (step.py undoes it); the message names the stage and what to do.

    Attributes: ``stage`` (the LCP's stage in the step: one of ``LCP_STAGES``' keys), ``size`` (its unknowns),
    ``status`` (how Lemke ended: a name of solvers/result.py), ``when`` ((start, end, reached) [s] of the
    step, or None outside one)."""

    user_error = True   # the CLI prints it as one line, status 2

    def __init__(self, stage: str, size: int, status: str,
                 when: tuple[float, float, float] | None = None) -> None:
        self.stage, self.size, self.status, self.when = stage, size, status, when
        step = ""
        if when is not None:
            step = f" in the step from t = {when[0]:.9g} s to {when[1]:.9g} s (at t = {when[2]:.9g} s)"
        super().__init__(
            f"event method: the {LCP_STAGES[stage][0]} LCP ({size} unknowns){step} could not be solved: Lemke's "
            f"method ended '{status}' on the exact and every regularized problem (a degenerate problem: more "
            f"contacts, friction directions or joints than the degrees of freedom they act on). "
            f"{LCP_STAGES[stage][1]}; the world is as before the step")


LCP_STAGES = {
    "resting": ("resting-contact force (Baraff II 9, with friction)",
                "Use method='timestep' (the default), or collide=False on a joint whose bodies touch"),
    "impact": ("impact impulse (Baraff II 8)",
               "Use method='timestep' (the default), or event_impacts='sequential' (frictionless, without joints)"),
    "catch": ("impact catch (held lift-off)",
              "Use method='timestep' (the default), or a smaller event_threshold"),
    "projection": ("position projection",
                   "Use method='timestep' (the default), or collide=False on a joint whose bodies touch"),
}
"""``EventLCPFailed``'s stages: what the message calls each, and what it tells the user to do."""


@dataclass(frozen=True)
class EventSettings:
    """Settings of the event-driven method (SI units; ``World(event_*=...)``).

    tolerance: ε [m], the deepest penetration a collision time is accepted with (Baraff II 6).
    contact_band: [m] contacts closer than this to touching take part in impacts and resting contact.
    threshold: [m/s] Baraff's THRESHOLD (8-3): colliding below −threshold, resting within ±threshold.
    impacts: "simultaneous" (one LCP for all impacts, Coulomb friction included; the default, chosen on measured
        tosses: docs/event.md) or "sequential" (``find_all_collisions``, frictionless impulses).
    ode: "rk4" (fixed steps of at most the step) or "adaptive" (``tumble.ode``'s DOP853).
    root: "illinois" (regula falsi, Illinois variant, with bisection where it cannot apply) or "bisection".
    max_halvings: the most evaluations of the collision-time search.
    """

    tolerance: float = 1e-10
    contact_band: float = 1e-6
    threshold: float = 1e-3
    impacts: str = "simultaneous"
    ode: str = "rk4"
    root: str = "illinois"
    max_halvings: int = 100


@dataclass
class EventStats:
    """Figures of the last ``advance``: ODE steps, collision times found, impulses applied, root-finding
    evaluations, collision-time searches that ran out of evaluations (``root_failures``), friction-stop
    searches that did (``stop_failures``), projections that left a depth beyond ε, impacts with friction that
    fell back to frictionless ones (``frictionless_impacts``: the LCP was degenerate or the impulse would add
    energy), and the resting contacts and forces [N] (on A, along n) of the last ``dydt``."""

    ode_steps: int = 0
    collisions: int = 0
    impulses: int = 0
    root_evaluations: int = 0
    root_failures: int = 0
    stop_failures: int = 0
    unprojected: int = 0
    frictionless_impacts: int = 0
    resting_contacts: int = 0
    resting_forces: np.ndarray = field(default_factory=lambda: np.zeros(0))


class EventDriven:
    """Advances one World by the event-driven method (module docstring). Owns its own collision detector
    and buffers, so it never disturbs the time-stepping method's."""

    name = "event"
    guards_state = False     # step.py saves and checks around the whole event-driven step


    def after_undo(self, model: Model, contacts: Any) -> None:
        """After the bodies of an undone step were put back (step.py): the resting contacts are found again
        at the restored state, and the joints' carried impulses are cleared. The step's own sets (resting
        pairs, sliding and turning contacts) are dropped: a step that raised left them set."""
        self.last_contacts = None
        self._stale = True
        self._resting_pairs = self._sliding = self._turning = None
        if len(model.joints):
            model.joints.clear_impulses()

    def __init__(self, model: Model, state: State) -> None:
        self.model = model
        self.state = state
        self.settings: EventSettings = model.event_settings
        self.stats = EventStats()
        self._detector: CollisionDetector | None = None
        self._buffers = (ContactBuffer(), ContactBuffer())
        self._loads = (np.zeros((0, 3)), np.zeros((0, 3)))
        self.last_contacts: Contacts | None = None
        self._resting_pairs: np.ndarray | None = None          # pair codes, during a step
        self._resting_codes = self._start_codes = np.zeros(0, dtype=CONTACT_CODE)   # contact codes, too
        self._sliding: tuple[np.ndarray, np.ndarray] | None = None   # contact codes, directions
        self._turning: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None   # codes, rolling axes, spin signs
        self._force_vectors = np.zeros((0, 3))
        self._torque_vectors = np.zeros((0, 3))
        self._stale = True            # the state changed since the last detection
        self._joint_multipliers: tuple[DenseJoints, np.ndarray] | None = None   # of the last dydt
        self._start_rate: np.ndarray | None = None   # dydt at the start of the current step (``_integrate``)
        self._arrays: dict[str, np.ndarray] | None = None   # the body fields' live rows, during a step
        self._shape_rows: dict[str, np.ndarray] | None = None   # ``_geom``'s, during a step
        self._version = model.version
        self._lcp_work = 0.0          # Σ m³ of the dense LCPs of the current step (``_charge_lcp``)

    # ------------------------------------------------------------------ compiling
    def compile_shares(self, model: Model, state: State, contacts: Any) -> list[Share]:
        """The kernels of this method's steps in shares that compile apart (precompile.py): the detection stage
        and each narrowphase family the shapes can form (``CollisionDetector.compile_shares``, into this
        method's own buffers), and the method's own kernels in three parts (``_compile_kernels``). Costs: each
        share's cold compile seconds alone on an empty cache on the 2-core development machine."""
        self._refresh()
        if self._detector is None:
            self._detector = CollisionDetector(model)
        shares = [] if self._detector.idle else self._detector.compile_shares(model, state, *self._buffers, 0.0)
        for part, cost, kernels in (("forces", 3.7, _FORCE_KERNELS), ("LCP", 9.9, (lemke_retried, _least_norm_polish)),
                                    ("state", 4.4, _STATE_KERNELS)):
            shares.append(Share(f"event method: {part}", cost, partial(self._compile_kernels, part), kernels))
        return shares

    def _compile_kernels(self, part: str) -> None:
        """Call each kernel of one ``part`` of the method once with the argument types of a step (a forked child
        does, for ``compile_shares``; what it changes dies with it): "forces", the resting-contact forces'
        kernels; "LCP", Lemke's and the polish's; "state", the state vector's, the impacts', the bookkeeping's.
        On one made-up
        contact of the first two bodies, whose fields have the dtypes and shapes of a detection's (read from a
        buffer, not detected: the detection's kernels are the other shares'). The values do not matter: a
        kernel compiles for its arguments' types."""
        self._arrays = a = body_arrays(self.model, self.state)
        try:
            seen = gather(self._buffers[0])
            cs = Contacts(*(np.zeros((1,) + getattr(seen, f).shape[1:], getattr(seen, f).dtype)
                            for f in seen.__dataclass_fields__))
            cs.body_b[0] = min(1, a["x"].shape[0] - 1)
            if part == "forces":
                self._force_kernels(cs, a)
            elif part == "LCP":
                solve_lcp(np.ones((1, 1)), -np.ones(1), "resting")
            else:
                self._state_kernels(cs, a)
        finally:
            self._arrays = None

    def _force_kernels(self, cs: Contacts, a: dict[str, np.ndarray]) -> None:
        x, v, w, inv_mass = a["x"], a["v"], a["w"], a["inv_mass"]
        inv_inertia = rc.world_inverse_inertia(a["q"], a["inv_inertia_body"])
        J = rc.jacobian(cs, x)
        rc.apply_inverse_mass(inv_mass, inv_inertia, J.T)
        du = rc.body_accelerations(inv_mass, inv_inertia, w, a["force"], a["torque"])
        free = rc.free_acceleration(cs, inv_mass, inv_inertia, x, w, a["force"], a["torque"])
        rc.resting_offset(cs, free, free, x, v, w)
        rc.relative_acceleration(cs, x, du)
        rc.relative_velocity(cs, x, v, w)
        rc._face_normal_derivative(cs.feature, cs.normal, cs.geom_a, cs.geom_b, cs.body_a, cs.body_b,
                                   self._geom()["geom_type"], w, free, np.empty(1, dtype=np.int64))

    def _state_kernels(self, cs: Contacts, a: dict[str, np.ndarray]) -> None:
        x, v, w, inv_mass = a["x"], a["v"], a["w"], a["inv_mass"]
        vectors = np.zeros((1, 3))
        index = rc.lookup(cs.contact_codes(), cs.contact_codes())
        rc.lookup(cs.pair_codes(), cs.pair_codes())
        _sliding_directions(vectors, cs.normal, True, index, vectors, 0.0, vectors.copy(), np.empty(1, dtype=np.bool_))
        _deepest_of_pair(cs.pair_codes(), cs.depth, cs.depth >= 0.0, cs.depth.copy())
        self._contact_loads(cs, vectors, vectors)
        rc.find_all_collisions(cs.body_a, cs.body_b, cs.point, cs.normal, cs.restitution, x, inv_mass,
                               np.zeros((x.shape[0], 3, 3)), v, w, self.settings.threshold, 1)
        bodies = self.state.bodies()    # step.py's guard around an event step
        save_bodies(bodies)
        first_non_finite(bodies)
        y = self._get_state()
        self._set_state(y)
        _state.state_derivative_serial(a["mass"], inv_mass, a["inv_inertia_body"], a["force"], a["torque"],
                                       self.model.gravity, y, y.copy())

    # ------------------------------------------------------------------ detection
    def detect(self) -> Contacts:
        """The contacts of the world's current state (its x, q)."""
        return gather(self._detect_buffer())

    def _detect_buffer(self) -> ContactBuffer:
        self._refresh()
        if self._detector is None:
            self._detector = CollisionDetector(self.model)
        buffer, old = self._buffers
        self._detector.update(self.model, self.state, buffer, old)
        self._buffers = (old, buffer)
        self._stale = False
        return buffer

    def final_buffer(self) -> ContactBuffer:
        """The contact buffer of the world's current state (what a recording reads its deepest penetration
        from): the last detection's, which ``advance`` leaves at its end state (``_project`` detects last),
        or a new one if the state moved since."""
        if self._detector is None or self._stale:
            return self._detect_buffer()
        return self._buffers[1]

    @staticmethod
    def check_shapes(shapes: list) -> None:
        """ValueError for a shape the method cannot take yet (before the body is added): the closed-form
        ṅ and contacts cover boxes, convex hulls, spheres and the ground."""
        for shape in shapes:
            if not isinstance(shape, (Box, ConvexHull, Sphere)):
                raise ValueError(f"shape: method='event' does not support {type(shape).__name__} yet (boxes, "
                                 f"convex hulls, spheres and the ground; docs/event.md), got {shape!r}")

    collision_stats: dict[str, float] = {}
    """Nothing: the event method detects into its own buffers (``final_buffer``)."""

    def _refresh(self) -> None:
        """Drop what names the model's shape rows when its bodies or shapes changed since it was made."""
        if self._version != self.model.version:
            self._version = self.model.version
            self._detector = None
            self._buffers = (ContactBuffer(), ContactBuffer())
            self.last_contacts = None

    def _live(self) -> dict[str, np.ndarray]:
        """Every body field's live rows by name, the model's and the state's: gathered once per step
        (``advance_by``; nothing adds a body or moves a buffer within it), else anew."""
        return self._arrays if self._arrays is not None else body_arrays(self.model, self.state)

    def _geom(self) -> dict[str, np.ndarray]:
        """The shape rows ``normal_derivative`` reads, by name: gathered once per step, like ``_live``."""
        if self._shape_rows is not None:
            return self._shape_rows
        g = self.model.geom
        return {f: g.live(f) for f in ("geom_type", "geom_body", "geom_pos", "geom_quat", "geom_size",
                                       "geom_vert_start", "geom_edge_start")}

    def _bodies(self):
        a = self._live()
        inv_inertia = rc.world_inverse_inertia(a["q"], a["inv_inertia_body"])
        return a, inv_inertia

    # ------------------------------------------------------------------ resting contact (Baraff II 9)
    def resting_forces(self, cs: Contacts) -> tuple[Contacts, np.ndarray, np.ndarray, np.ndarray]:
        """The resting contacts of ``cs`` at the world's current state (touching, |v_rel| ≤ ``threshold``;
        within a step, of the pairs resting at its start), their normal forces f (k,) [N], their whole
        contact forces (k, 3) [N, world, on A]: f n plus friction, and their pure torques (k, 3) [N m, on A]:
        rolling resistance and torsional friction (``_friction_lcp``). Under the loads held in
        ``self._loads``."""
        a, inv_inertia = self._bodies()
        band, threshold = self.settings.contact_band, self.settings.threshold
        within_step = self._resting_pairs is not None
        if within_step:   # the pairs resting at the step's start (``advance``), all their reported contacts
            near = cs.subset(rc.lookup(cs.pair_codes(), self._resting_pairs) >= 0)
        else:
            near = cs.subset(cs.depth >= -band)
        if len(near) == 0:
            return near, np.zeros(0), np.zeros((0, 3)), np.zeros((0, 3))
        J = rc.jacobian(near, a["x"])
        # resting: |v_rel| within THRESHOLD (section 9); a colliding contact is an event, not a force
        vrel = J @ rc.stacked_velocities(a["v"], a["w"])
        keep = np.abs(vrel) <= threshold
        if within_step:
            # Within a step the set is the one of its start, so that the forces of RK4's stages, and so the
            # end state, are continuous in the step's length (the collision search needs that). A contact
            # resting at the start keeps its force (the LCP's, zero once it breaks) whatever its depth
            # and v_rel in a stage: RK4's stages are Euler predictions (y0 + τ/2 k1, …), which leave a
            # contact point that is not a material point (a table's edge under a tipping box's face) off
            # the surface by ~a τ²/8 — 1e-6 m, the band, for a = 0.5 m/s², τ = 4 ms — and a band test
            # dropped the force from some τ on. A contact there at the start but not resting gets none.
            # A contact whose features are new (a clipped manifold renames its points as a box turns on an
            # edge) rests when slow and within the band of its pair's deepest resting contact (the pair
            # drifts together).
            codes = near.contact_codes()
            was = rc.lookup(codes, self._resting_codes) >= 0
            new = (rc.lookup(codes, self._start_codes) < 0) & keep
            deepest = np.empty(len(near))
            _deepest_of_pair(near.pair_codes(), near.depth, was | new, deepest)
            keep = was | (new & (near.depth >= deepest - band))
        cs_r = near.subset(keep)
        if len(cs_r) == 0:
            return cs_r, np.zeros(0), np.zeros((0, 3)), np.zeros((0, 3))
        J = J[keep]
        force, torque = self._loads
        loads = force.copy()
        fixed = a["inv_mass"] == 0.0
        loads[~fixed] += a["mass"][~fixed, None] * self.model.gravity
        ndot = rc.normal_derivative(cs_r, self._geom(), self.model.polytopes.arrays(), a["x"], a["q"],
                                    a["v"], a["w"])
        joints = self._joint_block(inv_inertia)
        extra = None
        if joints is not None:   # the joints' response to the loads (constraints/joint_dense.py)
            extra = joints.response(rc.body_accelerations(a["inv_mass"], inv_inertia, a["w"], loads, torque))
        free = rc.free_acceleration(cs_r, a["inv_mass"], inv_inertia, a["x"], a["w"], loads, torque, extra)
        b = rc.resting_offset(cs_r, ndot, free, a["x"], a["v"], a["w"])
        free_turn = None
        if _turning_friction(cs_r):
            du = rc.body_accelerations(a["inv_mass"], inv_inertia, a["w"], loads, torque)
            if extra is not None:
                du = du + extra
            free_turn = du[cs_r.body_a, 3:] - du[cs_r.body_b, 3:]
        f, vectors, torques = self._friction_lcp(cs_r, J, b, free, a, self._inverse_mass(inv_inertia, joints),
                                                 free_turn)
        return cs_r, f, vectors, torques

    def _joint_block(self, inv_inertia: np.ndarray) -> DenseJoints | None:
        """The world's joints at its current state as one dense block, or None without joints."""
        return DenseJoints(self.model, self.state, inv_inertia) if len(self.model.joints) else None

    def _inverse_mass(self, inv_inertia: np.ndarray, joints: DenseJoints | None = None):
        """X (6n, k) ↦ M⁻¹ X, or with joints W X, the jointed system's (constraints/joint_dense.py)."""
        if joints is None and len(self.model.joints):
            joints = self._joint_block(inv_inertia)
        if joints is not None:
            return joints.inverse_mass
        inv_mass = self._live()["inv_mass"]
        return lambda X: rc.apply_inverse_mass(inv_mass, inv_inertia, X)

    def _friction_lcp(self, cs: Contacts, J: np.ndarray, b: np.ndarray, free: np.ndarray,
                      a: dict[str, np.ndarray], inverse_mass,
                      free_turn: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Normal forces f (c,) [N], contact force vectors (c, 3) [N] and pure contact torques (c, 3) [N m]
        (on A, world) with Coulomb friction, rolling resistance and torsional friction at acceleration level.

        A contact whose tangential velocity v_t is not zero slides: its force is f (n − μ t̂), t̂ = v_t/|v_t|
        (exactly on the cone, opposing the sliding), one unknown f. A contact at rest in the tangent plane
        sticks or starts to slip: the friction force is Σ β_k d_k over ``FRICTION_DIRECTIONS`` directions
        d_k of the tangent plane, with (Stewart–Trinkle's linearized cone, at acceleration level)

            d_k · ä_t + λ ≥ 0 ⊥ β_k ≥ 0,   μ f − Σ β_k ≥ 0 ⊥ λ ≥ 0,

        so the tangential acceleration is zero while the needed friction is inside the polygon, and points
        along −d_k (slip) when it is at the edge. Together with the normal rows d̈ = … ≥ 0 ⊥ f ≥ 0 this is one
        LCP (not symmetric when something slides), solved by Lemke's method. μ = 0 leaves only the normal rows.
        ``inverse_mass``: X ↦ M⁻¹ X (``_inverse_mass``: W X with joints).

        Rolling resistance μ_r and torsional friction μ_s [m] (``_turning_lcp_parts``) act alike on the
        relative angular velocity ω_a − ω_b of the pair: rolling (its part in the tangent plane, ω_t ≠ 0) is
        resisted by the torque −μ_r f ω̂_t per contact, spinning (its part s along n) by −μ_s f sign(s) n, so a
        pair's torque is μ Σ f; a pair that does not roll (spin) holds its relative angular acceleration at
        zero with a torque inside |τ| ≤ μ_r Σ f (μ_s Σ f), through the same linearized cone on angular
        directions. ``free_turn`` (c, 3) [rad/s²]: the relative angular acceleration of each contact's bodies
        without contact forces (needed when a contact has μ_r or μ_s)."""
        c = len(cs)
        mu = cs.friction
        n = cs.normal
        dv = rc.relative_velocity(cs, a["x"], a["v"], a["w"])
        t_hat, moving = np.zeros_like(dv), np.empty(c, dtype=np.bool_)
        if self._sliding is None:
            _sliding_directions(dv, n, False, np.zeros(0, dtype=np.int64), np.zeros((0, 3)),
                                STOP_SPEED_FRACTION * self.settings.threshold, t_hat, moving)
        else:
            codes, directions = self._sliding
            _sliding_directions(dv, n, True, rc.lookup(cs.contact_codes(), codes), directions, 0.0, t_hat, moving)
        sticking = (mu > 0.0) & ~moving
        G_n = J - mu[:, None] * rc.jacobian(cs, a["x"], t_hat)      # the force direction of each f
        torque_hat, turn = np.zeros((c, 3)), _no_turning_rows(c, J.shape[1])
        if _turning_friction(cs):
            torque_hat, turn = self._turning_lcp_parts(cs, a, free_turn)
            G_n = G_n + _angular_rows(cs, torque_hat, J.shape[1])
        k = FRICTION_DIRECTIONS
        stick = np.flatnonzero(sticking)
        m = stick.size
        if m or turn.groups.size:
            # Often nothing pulls a sticking contact sideways (a box at rest on level ground): then the
            # normal forces alone leave its tangential acceleration zero and friction is not needed (the
            # full LCP is degenerate there: every β row has q = 0).
            MinvGt = inverse_mass(G_n.T)
            f = solve_lcp(J @ MinvGt, b, "resting")
            acc = MinvGt @ f
            body_acc = rc.relative_acceleration(cs, a["x"], acc.reshape(-1, 6))[stick] + free[stick]
            nn = n[stick]
            tangential = body_acc - np.einsum("ij,ij->i", body_acc, nn)[:, None] * nn
            turn_acc = turn.rows @ acc + turn.free
            scale = 1e-12 * (np.abs(body_acc).max(initial=0.0) + np.abs(turn_acc).max(initial=0.0) + 1.0)
            if np.abs(tangential).max(initial=0.0) <= scale and np.abs(turn_acc).max(initial=0.0) <= scale:
                return f, f[:, None] * (n - mu[:, None] * t_hat), f[:, None] * torque_hat
        if m:
            dirs, owner, J_d = _cone_directions(cs, stick, a["x"])
        else:
            dirs, owner, J_d = np.zeros((0, 3)), np.zeros(0, dtype=np.int64), np.zeros((0, J.shape[1]))
        rows = np.vstack([J, J_d, turn.rows])
        cols = np.vstack([G_n, J_d, turn.rows])
        groups = np.concatenate([np.repeat(np.arange(m), k), m + turn.groups])
        bound = np.vstack([_contact_bounds(c, stick, mu), turn.bound])
        self._charge_lcp(rows.shape[0] + bound.shape[0], c)
        M = _coulomb_lcp(rows @ inverse_mass(cols.T), c, groups, bound)
        q = np.concatenate([b, np.einsum("ij,ij->i", dirs, free[owner]), turn.free, np.zeros(bound.shape[0])])
        z = solve_lcp(M, q, "resting")
        f = z[:c]
        vectors = f[:, None] * (n - mu[:, None] * t_hat)
        if m:
            np.add.at(vectors, owner, z[c:c + m * k, None] * dirs)
        torques = f[:, None] * torque_hat
        if turn.groups.size:   # the static torques Σ β d, carried by each pair's first contact
            beta = z[c + m * k:c + m * k + turn.groups.size]
            np.add.at(torques, turn.owner, beta[:, None] * turn.dirs)
        return f, vectors, torques

    def _charge_lcp(self, m: int, contacts: int) -> None:
        """Count a dense LCP of ``m`` unknowns for ``contacts`` contacts against the step's budget
        (``MAX_LCP_WORK_PER_STEP``), before it is solved."""
        self._lcp_work += float(m) ** 3
        if self._lcp_work > MAX_LCP_WORK_PER_STEP:
            raise EventBudgetExceeded(
                f"event method: the step's resting-contact LCPs (with friction; this one {m} unknowns for "
                f"{contacts} resting contacts) exceeded the step's work budget of "
                f"{MAX_LCP_WORK_PER_STEP:.3g} (MAX_LCP_WORK_PER_STEP, the sum of m^3): the dense LCP is for small "
                f"scenes. Use method='timestep' (the default) for piles and stacks; the world is as before the step")

    def _turning_lcp_parts(self, cs: Contacts, a: dict[str, np.ndarray], free_turn: np.ndarray):
        """Rolling resistance and torsional friction of ``_friction_lcp``: the kinetic torque per unit normal
        force (c, 3) of each contact (on A), and the static rows (``TurningRows``) of the pairs that do not
        roll (spin): 8 directions in the tangent plane (±n) each, bounded by μ_r (μ_s) times the pair's Σ f."""
        c = len(cs)
        n = cs.normal
        turn = a["w"][cs.body_a] - a["w"][cs.body_b]
        spin = np.einsum("ij,ij->i", turn, n)
        roll = turn - spin[:, None] * n
        roll_speed = np.linalg.norm(roll, axis=1)
        stop = STOP_SPEED_FRACTION * self.settings.threshold
        roll_axis = np.zeros_like(roll)
        spin_sign = np.zeros(c)
        if self._turning is None:
            rolling = roll_speed > stop
            roll_axis[rolling] = roll[rolling] / roll_speed[rolling, None]
            spin_sign = np.where(np.abs(spin) > stop, np.sign(spin), 0.0)
        else:   # within a step: as sliding (``_friction_lcp``), the start's direction past a reversal
            codes, axes, signs = self._turning
            index = rc.lookup(cs.contact_codes(), codes)
            found = index >= 0
            start_axis = np.zeros_like(roll)
            start_axis[found] = axes[index[found]]
            rolling = found & np.any(start_axis != 0.0, axis=1)
            along = rolling & (roll_speed > 0.0) & (np.einsum("ij,ij->i", roll, start_axis) > 0.0)
            roll_axis[rolling] = start_axis[rolling]
            roll_axis[along] = roll[along] / roll_speed[along, None]
            spin_sign[found] = signs[index[found]]
        mu_r, mu_s = cs.rolling_friction, cs.torsional_friction
        torque_hat = -mu_r[:, None] * roll_axis - (mu_s * spin_sign)[:, None] * n
        # the pairs at rest in rolling (spin) with μ_r (μ_s) > 0: one group each, on the pair's first contact
        pairs, first, which = np.unique(cs.pair_codes(), return_index=True, return_inverse=True)
        width = 6 * a["x"].shape[0]
        parts = []
        for resting_kind, mu, count in (((mu_r > 0.0) & ~rolling, mu_r, FRICTION_DIRECTIONS),
                                        ((mu_s > 0.0) & (spin_sign == 0.0), mu_s, 2)):
            still = np.zeros(pairs.size, dtype=bool)
            np.logical_or.at(still, which, resting_kind)
            held = np.flatnonzero(still)
            owner = np.repeat(first[held], count)
            if count == 2:      # spin: ±n
                dirs = np.repeat(n[first[held]], 2, axis=0) * np.tile([1.0, -1.0], held.size)[:, None]
            else:               # rolling: evenly spaced in the tangent plane
                t1, t2 = rc.tangent_basis(n[first[held]])
                angles = 2.0 * np.pi * np.arange(count) / count
                dirs = (np.cos(angles)[None, :, None] * t1[:, None, :]
                        + np.sin(angles)[None, :, None] * t2[:, None, :]).reshape(-1, 3)
            bound = np.where(which[None, :] == held[:, None], mu[None, :], 0.0)
            parts.append((dirs, owner, np.repeat(np.arange(held.size), count), bound))
        (d1, o1, g1, b1), (d2, o2, g2, b2) = parts
        dirs, owner = np.vstack([d1, d2]), np.concatenate([o1, o2])
        groups = np.concatenate([g1, b1.shape[0] + g2])
        rows = _angular_rows(cs.subset(owner), dirs, width)
        free = np.einsum("ij,ij->i", dirs, free_turn[owner]) if owner.size else np.zeros(0)
        return torque_hat, TurningRows(rows, dirs, owner, groups, np.vstack([b1, b2]), free)

    def contacts(self) -> Contacts:
        """The resting contacts of the last ``dydt`` evaluation (the state the last step ended in) with
        their forces: ``force`` = f n on A [N], impulses zero (the impacts are instantaneous)."""
        if self.last_contacts is None:   # evaluated at the current state, under the last step's loads
            if self._loads[0].shape[0] != self.model.body.count:
                a = self._live()
                self._loads = (a["force"].copy(), a["torque"].copy())
            self._evaluate_resting()
        cs, f = self.last_contacts, self._force_vectors
        zero = np.zeros_like(cs.normal)
        at_rest = replace(cs, normal_impulse=np.zeros(len(cs)), friction_impulse=zero, impulse=zero.copy(), force=f)
        # as ``world.contacts()`` reports them: a fixed body is B (the normal and force turned with it)
        return at_rest.fixed_as_b(self._live()["inv_mass"] == 0.0)

    def _resting_at_start(self, cs: Contacts) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """What rests at the start of a step, after ``resolve_impacts``: the pair codes (sorted) of the pairs
        with a resting contact, the contact codes (sorted) of those contacts, and the contact codes of all
        the contacts those pairs report. Resting: touching, not closing faster than ``threshold`` (the
        plastic pass has stopped the slower ones) and not separating (v_rel ≤ 10⁻³ ``threshold``).

        A contact that separates, however slowly, gets no force: it flies freely and comes back as a
        collision. Given a force, the LCP would hold its d̈ at 0 and so keep it leaving at its v_rel (up
        to ``threshold``) instead of letting gravity turn it back: a box landed flat with a residual tilt
        rate kept lifting its corners and rocked on (Baraff II 9 takes resting contacts to have v_rel = 0;
        THRESHOLD is there to absorb rounding, not motion)."""
        a = self._live()
        touching = cs.subset(cs.depth >= -self.settings.contact_band)
        vrel = rc.jacobian(touching, a["x"]) @ rc.stacked_velocities(a["v"], a["w"])
        keep = (vrel >= -self.settings.threshold) & (vrel <= SEPARATING_FRACTION * self.settings.threshold)
        resting = touching.subset(keep)
        pairs = np.unique(resting.pair_codes())
        seen = cs.subset(np.isin(cs.pair_codes(), pairs))
        return pairs, np.sort(resting.contact_codes()), np.sort(seen.contact_codes())

    def _sliding_at_start(self, cs: Contacts) -> tuple[np.ndarray, np.ndarray]:
        """The contacts of resting pairs with friction that slide at the start of a step (tangential speed
        above the stop speed, 10⁻⁶ ``threshold``): their contact codes (k,) and sliding directions (k, 3)."""
        codes, vt = self._tangential_velocities(cs)
        speed = np.linalg.norm(vt, axis=1)
        keep = np.isin(codes["pair"], self._resting_pairs) & (speed > STOP_SPEED_FRACTION * self.settings.threshold)
        return codes[keep], vt[keep] / speed[keep, None]

    def _tangential_velocities(self, cs: Contacts) -> tuple[np.ndarray, np.ndarray]:
        """Contact codes (k,) and tangential relative velocities (k, 3) of the touching contacts with
        friction."""
        a = self._live()
        touching = (cs.depth >= -self.settings.contact_band) & (cs.friction > 0.0)
        dv = rc.relative_velocity(cs, a["x"], a["v"], a["w"])[touching]
        n = cs.normal[touching]
        return cs.contact_codes()[touching], dv - np.einsum("ij,ij->i", dv, n)[:, None] * n

    def _turning_at_start(self, cs: Contacts) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The contacts of resting pairs with rolling resistance that roll, or with torsional friction that
        spin, at the start of a step (relative angular speed above 10⁻⁶ ``threshold``, read in rad/s): their
        contact codes (k,), rolling axes (k, 3) (unit, in the tangent plane; zero where it does not roll or
        has μ_r = 0) and spin signs (k,) (±1, 0 where it does not spin or has μ_s = 0)."""
        if not _turning_friction(cs):
            return np.zeros(0, dtype=CONTACT_CODE), np.zeros((0, 3)), np.zeros(0)
        codes, roll, spin, mu_r, mu_s = self._angular_velocities(cs)
        stop = STOP_SPEED_FRACTION * self.settings.threshold
        speed = np.linalg.norm(roll, axis=1)
        rolling = (mu_r > 0.0) & (speed > stop)
        spinning = (mu_s > 0.0) & (np.abs(spin) > stop)
        keep = np.isin(codes["pair"], self._resting_pairs) & (rolling | spinning)
        axes = np.zeros_like(roll)
        axes[rolling] = roll[rolling] / speed[rolling, None]
        return codes[keep], axes[keep], np.where(spinning, np.sign(spin), 0.0)[keep]

    def _angular_velocities(self, cs: Contacts):
        """Contact codes (k,), the rolling (k, 3) and spin (k,) parts of ω_a − ω_b, μ_r and μ_s (k,) of the
        touching contacts with rolling resistance or torsional friction."""
        a = self._live()
        touching = cs.subset((cs.depth >= -self.settings.contact_band)
                             & ((cs.rolling_friction > 0.0) | (cs.torsional_friction > 0.0)))
        turn = a["w"][touching.body_a] - a["w"][touching.body_b]
        n = touching.normal
        spin = np.einsum("ij,ij->i", turn, n)
        return (touching.contact_codes(), turn - spin[:, None] * n, spin, touching.rolling_friction,
                touching.torsional_friction)

    def _slide_reversed(self, start: tuple[np.ndarray, np.ndarray]) -> float:
        """The least sliding speed [m/s] along its start direction over the contacts sliding at the start of
        the step, and the least rolling and spin speeds [rad/s] along theirs (``self._turning``) (negative:
        one has turned back, so its sliding, rolling or spinning stopped within the step)."""
        cs = self.detect()
        least = math.inf
        codes, vt = self._tangential_velocities(cs)
        index = rc.lookup(start[0], codes)
        found = index >= 0
        if np.any(found):
            least = float(np.min(np.einsum("ij,ij->i", vt[index[found]], start[1][found])))
        if self._turning is not None and self._turning[0].size:
            turn_codes, axes, signs = self._turning
            codes, roll, spin, _, _ = self._angular_velocities(cs)
            index = rc.lookup(turn_codes, codes)
            found = index >= 0
            rolling = found & np.any(axes != 0.0, axis=1)
            spinning = found & (signs != 0.0)
            if np.any(rolling):
                least = min(least, float(np.min(np.einsum("ij,ij->i", roll[index[rolling]], axes[rolling]))))
            if np.any(spinning):
                least = min(least, float(np.min(spin[index[spinning]] * signs[spinning])))
        return least

    def _stop_time(self, y0: np.ndarray, t: float, h: float, start: tuple[np.ndarray, np.ndarray]) -> float:
        """The time τ in (0, h) at which the first sliding contact's speed along its start direction (or the
        first rolling or spinning pair's angular speed along its start axis, ``_slide_reversed``) is within
        [0, stop speed = 10⁻⁶ ``threshold``]; leaves the world in y(t + τ), where the contact then sticks (or
        slips on, by the LCP). The speed falls linearly in τ under Coulomb friction (μ f and the
        mass are constant over a short step), so the root is searched by regula falsi (Illinois variant)
        on g(τ) = speed − stop speed / 2, which lands on it in two or three evaluations where bisection
        takes ~25 (from millimetres per second to 10⁻⁹ m/s); bisection with ``root="bisection"``."""
        half = STOP_SPEED_FRACTION * self.settings.threshold
        goal = 0.5 * half
        lo, hi = 0.0, h
        g_hi = self._slide_reversed(start) - goal
        self._set_state(y0)
        g_lo = self._slide_reversed(start) - goal
        illinois = self.settings.root == "illinois" and math.isfinite(g_lo)
        rate = (g_lo - g_hi) / h if math.isfinite(g_lo) else math.inf   # the speed's mean fall [m/s²]
        speed_lo = g_lo + goal        # the speed at lo (g_lo is Illinois-weighted)
        retained = 0
        for _ in range(self.settings.max_halvings):
            tau = 0.5 * (lo + hi)
            if illinois and g_lo > 0.0 > g_hi:
                secant = hi - g_hi * (hi - lo) / (g_hi - g_lo)
                if lo < secant < hi:
                    tau = secant
            self._set_state(self._integrate(y0, t, tau))
            self.stats.root_evaluations += 1
            g = self._slide_reversed(start)
            if 0.0 <= g <= half:
                return tau
            narrow = tau - lo <= STOP_TIME_RESOLUTION * h or rate * (tau - lo) <= JUMP_FRACTION * (speed_lo - g)
            if g < 0.0 and narrow:
                # The least speed over the contacts is not continuous where the slowest contact changes (a
                # face spinning as it slides) or the LCP switches a contact's state (within a stage of the
                # one RK4 step to τ): it can jump past the band. Within a bracket this narrow the sliding has
                # stopped; a narrower one would move the stop by less than the jump (``JUMP_FRACTION``).
                return tau
            if g < 0.0:
                hi, g_hi = tau, g - goal
                g_lo = 0.5 * g_lo if retained == -1 else g_lo    # Illinois: halve the end that stays
                retained = -1
            else:
                lo, g_lo, speed_lo = tau, g - goal, g
                g_hi = 0.5 * g_hi if retained == 1 else g_hi
                retained = 1
        self.stats.stop_failures += 1
        self._set_state(self._integrate(y0, t, hi))
        return hi

    def _contact_loads(self, cs: Contacts, fn: np.ndarray, tn: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """World force and torque (n, 3) of contact forces fn (k, 3) at the contact points and pure contact
        torques tn (k, 3) (+ on A, − on B)."""
        x = self._live()["x"]
        force, torque = np.zeros_like(x), np.zeros_like(x)
        _add_contact_loads(cs.body_a, cs.body_b, cs.point, x, np.ascontiguousarray(fn), np.ascontiguousarray(tn),
                           force, torque)
        return force, torque

    def _evaluate_resting(self) -> tuple[Contacts, np.ndarray, np.ndarray]:
        cs, f, vectors, torques = self.resting_forces(self.detect())
        self.stats.resting_contacts = len(cs)
        self.stats.resting_forces = f
        self._force_vectors = vectors
        self._torque_vectors = torques
        self.last_contacts = cs
        return cs, vectors, torques

    def dydt(self, t: float, y: np.ndarray) -> np.ndarray:
        """dY/dt (Baraff I (2-43)) with the external loads, gravity and the resting-contact forces."""
        self._set_state(y)
        cf, ct = self._contact_loads(*self._evaluate_resting())
        a = self._live()
        if len(self.model.joints):
            cf, ct = self._with_joint_loads(cf, ct)
        ydot = np.empty_like(y)
        # ẋ = v, q̇ = ½ ω q (4-2), Ṗ = F + M g, L̇ = τ; zero for fixed bodies
        _state.state_derivative_serial(a["mass"], a["inv_mass"], a["inv_inertia_body"], self._loads[0] + cf,
                                       self._loads[1] + ct, self.model.gravity, y, ydot)
        return ydot

    def _with_joint_loads(self, cf: np.ndarray, ct: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The contact loads cf, ct (n, 3) plus the joints' Gᵀ λ, λ keeping G u̇ + Ġ u = 0 under every other
        load (constraints/joint_dense.py); λ is kept for the joints' readings."""
        a, inv_inertia = self._bodies()
        force, torque = self._loads
        loads = force + cf
        moving = a["inv_mass"] != 0.0
        loads[moving] += a["mass"][moving, None] * self.model.gravity
        joints = DenseJoints(self.model, self.state, inv_inertia)
        lam = joints.multipliers(rc.body_accelerations(a["inv_mass"], inv_inertia, a["w"], loads, torque + ct))
        self._joint_multipliers = (joints, lam)
        wrench = joints.loads(lam)
        return cf + wrench[:, :3], ct + wrench[:, 3:]

    def _get_state(self) -> np.ndarray:
        """Y = (x, q, P, L) (13 n,) of the world's bodies (Baraff I section 3; the one-thread kernels: the
        method's scenes are small, and a parallel region's start would cost more than the work)."""
        a = self._live()
        y = np.empty(_state.STATE_SIZE * a["x"].shape[0])
        _state.bodies_to_array_serial(a["mass"], a["inertia_body"], a["x"], a["q"], a["v"], a["w"], y)
        return y

    def _set_state(self, y: np.ndarray) -> None:
        """Write Y into the world: x, q normalized, v = P/M, ω = I⁻¹ L with I⁻¹ = R I_body⁻¹ Rᵀ (2-39, 2-41)."""
        a = self._live()
        self._stale = True
        _state.array_to_bodies_serial(a["inv_mass"], a["inv_inertia_body"], np.ascontiguousarray(y, dtype=np.float64),
                                      a["x"], a["q"], a["v"], a["w"])

    # ------------------------------------------------------------------ impacts (Baraff II 8)
    def resolve_impacts(self) -> int:
        """Impulses at the current state (module docstring, 1): colliding contacts with restitution, then
        plastic impulses on contacts closing slower than ``threshold``. Returns the impulses applied."""
        s = self.settings
        cs = self.detect()
        cs = cs.subset(cs.depth >= -s.contact_band)
        if len(cs) == 0:
            return 0
        a, inv_inertia = self._bodies()
        if s.impacts == "simultaneous" or len(self.model.joints):
            # with joints every impulse must move the jointed system (W), which the one-contact-at-a-time
            # formula (8-18) does not know: all impacts at once
            count = self._simultaneous(cs, a, inv_inertia)
        else:
            count = rc.find_all_collisions(cs.body_a, cs.body_b, cs.point, cs.normal, cs.restitution, a["x"],
                                           a["inv_mass"], inv_inertia, a["v"], a["w"], s.threshold, 1000)
            # closing too slowly to bounce: resting from now on (plastic, e = 0), all at once (the impulse LCP
            # with v⁺ ≥ 0 ⊥ j ≥ 0). Not one contact at a time: on a face's 4 coplanar corners each plastic
            # impulse lifts a neighbour by ~1e-6 m/s, which then flies, lands and lifts the next (a box
            # flat on the ground spinning chattered through >1000 collisions in a 4 ms step); the LCP
            # leaves every contact it pushes at v⁺ = 0 to rounding.
            count += self._simultaneous(cs, a, inv_inertia, plastic=True)
        return count

    def _simultaneous(self, cs: Contacts, a: dict[str, np.ndarray], inv_inertia: np.ndarray,
                      plastic: bool = False) -> int:
        """All impacts at once (Baraff II 8, ``find_all_collisions``' alternative): with K = J M⁻¹ Jᵀ and
        v⁻ = J u, find j ≥ 0 with w = K j + q ≥ 0, j·w = 0, where q = (1 + e) v⁻ for a colliding contact
        (v⁺ ≥ −e v⁻) and q = v⁻ for the others (v⁺ ≥ 0); then u ← u + M⁻¹ Jᵀ j. ``plastic``: e = 0 for all.
        With ``impacts="simultaneous"`` (not the plastic pass of "sequential"), contacts with friction get
        Coulomb impulses in the same LCP (``_frictional_impulses``).

        Then the catch (``_catch``): a contact that was not separating and that the impulses of its
        neighbours lift off more slowly than ``threshold`` is held at v⁺ = 0 instead."""
        J = rc.jacobian(cs, a["x"])
        u = rc.stacked_velocities(a["v"], a["w"])
        vminus = J @ u
        if np.all(vminus >= 0.0):
            return 0
        colliding = (vminus < -self.settings.threshold) & (not plastic)
        q = np.where(colliding, (1.0 + cs.restitution) * vminus, vminus)
        inverse_mass = self._inverse_mass(inv_inertia)
        MinvJt = inverse_mass(J.T)
        K = J @ MinvJt
        frictional = self.settings.impacts == "simultaneous" and not plastic and np.any(cs.friction > 0.0)
        if frictional:
            try:
                du, j = self._frictional_impulses(cs, J, K, q, u, a["x"], inverse_mass)
            except RuntimeError:
                # Lemke can end on a degenerate basis where many contacts share few degrees of freedom (a
                # face's 4 corners and 32 directions on 6), or the impulse would add energy: that impact is
                # frictionless
                self.stats.frictionless_impacts += 1
                frictional = False
        if not frictional:
            j = solve_lcp(K, q, "impact")
            du = MinvJt @ j
        count = int(np.count_nonzero(j))
        du += MinvJt @ self._catch(K, vminus, vminus + J @ du, j, colliding)
        du = du.reshape(-1, 6)
        a["v"][...] += du[:, :3]
        a["w"][...] += du[:, 3:]
        return count

    @staticmethod
    def _frictional_impulses(cs: Contacts, J: np.ndarray, K: np.ndarray, q: np.ndarray, u: np.ndarray,
                             x: np.ndarray, inverse_mass) -> tuple[np.ndarray, np.ndarray]:
        """Impacts with Coulomb friction: the velocity change du (6 n,) and normal impulses j (c,) [N s] of
        the impulse LCP with Stewart–Trinkle's linearized cone (``_coulomb_lcp``; Stewart & Trinkle 1996,
        Anitescu & Potra 1997): the normal rows of ``_simultaneous`` (K j + q ≥ 0 ⊥ j ≥ 0, q (c,)), and for each
        contact with friction, friction impulses β_k ≥ 0 along ``FRICTION_DIRECTIONS`` directions d_k with
        d_k · v_t⁺ + λ ≥ 0 ⊥ β_k ≥ 0 and μ j − Σ β_k ≥ 0 ⊥ λ ≥ 0: the contact point's tangential velocity
        after the impact is zero while the friction needed is inside the cone (it sticks), and the impulse
        is on the cone's edge against the slip otherwise. u (6 n,): the velocities before;
        ``inverse_mass``: X ↦ M⁻¹ X."""
        c = len(cs)
        rough = np.flatnonzero(cs.friction > 0.0)
        _, _, J_d = _cone_directions(cs, rough, x)
        rows = np.vstack([J, J_d])
        W_rows = inverse_mass(rows.T)
        block = np.empty((c + J_d.shape[0],) * 2)
        block[:c, :c] = K
        block[:c, c:] = J @ W_rows[:, c:]
        block[c:] = J_d @ W_rows
        M = _coulomb_lcp(block, c, np.repeat(np.arange(rough.size), FRICTION_DIRECTIONS),
                         _contact_bounds(c, rough, cs.friction))
        z = solve_lcp(M, np.concatenate([q, J_d @ u, np.zeros(rough.size)]), "impact")
        impulses = z[:c + J_d.shape[0]]
        du = W_rows @ impulses
        # ΔT = uᵀ M du + ½ duᵀ M du with M du = rowsᵀ z: Newton's restitution with friction can add energy
        # (Kane and Levinson's falling rod; Stronge, Impact Mechanics 5): such an impulse is refused
        gain = impulses @ (rows @ u) + 0.5 * impulses @ (rows @ du)
        if gain > 0.0:
            raise RuntimeError(f"the frictional impact adds {gain:.3g} J")
        return du, z[:c]

    def _catch(self, K: np.ndarray, vminus: np.ndarray, vplus: np.ndarray, j: np.ndarray,
               colliding: np.ndarray) -> np.ndarray:
        """The further normal impulses (k,) [N s] that catch the contacts an impact lifts off slowly: held at
        v⁺ = 0. K (k, k) = J M⁻¹ Jᵀ; the normal velocities v⁻ before and v⁺ after the impact's impulses j (k,);
        ``colliding`` (k,): the contacts that bounced (never caught).

        A plastic impulse on one contact of a body turns the body, and so lifts the body's other touching
        contacts: the corner landing of a box tipping over on an edge lifts the edge's other end, at ~0.2 of
        the landing speed. A lift slower than ``threshold`` is no bounce the method can resolve: the contact
        flies for microseconds and lands again, slower than ``threshold``, and the next plastic impulse
        lifts the first end — a chatter of thousands of impacts per frame, not a Zeno sequence (each
        landing as slow as the last; a tossed cube took a minute of wall time for 7 ms on its edge). So a
        contact that was not separating (v⁻ ≤ ``SEPARATING_FRACTION`` · ``threshold``) and would leave at
        v⁺ in (``SEPARATING_FRACTION`` · ``threshold``, ``threshold``] is held at v⁺ = 0 together with the
        contacts the impulses push (j > 0, at their own v⁺): the impulses' change solves K_HH δj = v_target
        − v⁺ on that set H (least squares: K_HH is singular when H holds more contacts than the degrees of
        freedom they share). The catch is a plastic impulse on a set that includes a contact being pulled,
        so its impulse may be adhesive, by at most the momentum of a ``threshold`` lift; with the pushed
        contacts at v⁺ = 0 (a plastic pass) it is the kinetic-energy projection onto J_H u = 0, so it never
        adds energy. Contacts it turns to closing get a plastic impulse LCP in a further round (at most
        ``CATCH_ROUNDS``)."""
        s = self.settings
        lift = SEPARATING_FRACTION * s.threshold
        resting = vminus <= lift
        pushed = j > 0.0
        extra = np.zeros_like(vminus)
        for _ in range(CATCH_ROUNDS):
            v = vplus + K @ extra
            lifted = resting & ~colliding & (v > lift) & (v <= s.threshold)
            if not np.any(lifted):
                break
            H = np.flatnonzero(lifted | pushed)
            target = np.where(lifted, 0.0, v)
            extra[H] += np.linalg.lstsq(K[np.ix_(H, H)], target[H] - v[H], rcond=1e-12)[0]
            v = vplus + K @ extra
            closing = v < -lift
            if not np.any(closing):
                break
            push = solve_lcp(K, np.where(closing, v, np.maximum(v, 0.0)), "catch")
            extra += push
            pushed |= push > 0.0
        return extra

    # ------------------------------------------------------------------ time (Baraff II 6)
    def _max_step(self) -> float:
        """[s] the longest step that lets no body's point move more than a quarter of the thinnest
        bounding box of the scene (AABBs of the last detection; planes excluded)."""
        a = self._live()
        speed = np.linalg.norm(a["v"], axis=1) + a["extent"] * np.linalg.norm(a["w"], axis=1)
        fastest = float(speed.max()) if speed.size else 0.0
        if fastest == 0.0 or self._detector is None or self._detector.idle:
            return math.inf     # (idle: no pair can collide, and the detector has computed no AABBs)
        lo, hi = self._detector._aabb_lo, self._detector._aabb_hi
        width = (hi - lo).min(axis=1)
        width = width[np.isfinite(width)]
        thin = float(width.min()) if width.size else math.inf
        return 0.25 * thin / fastest

    def _penetration(self, start: tuple[np.ndarray, np.ndarray]) -> float:
        """[m] the deepest penetration of the current state, each contact measured from the deepest
        penetration its pair had at the start of the step (when it had one, so that contacts already
        touching do not mask a new one); −inf without contacts."""
        _, measured = self._penetrations(start)
        return float(measured.max()) if measured.size else -math.inf

    def _penetrations(self, start: tuple[np.ndarray, np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
        """The contact codes (k,) of the current state and each contact's penetration (k,) [m] measured from
        its pair's deepest at the start of the step (``_penetration``)."""
        cs = self.detect()
        pairs, deepest = start
        index = rc.lookup(cs.pair_codes(), pairs)
        base = np.zeros(len(cs))
        base[index >= 0] = np.maximum(deepest[index[index >= 0]], 0.0)
        return cs.contact_codes(), cs.depth - base

    def loads_before_forces(self, state: State) -> None:
        """Nothing: the event method refuses no step for its size."""
        return None

    @staticmethod
    def fast_step(model: Model, state: State, dt: float, hooks: Any) -> bool:
        """No fast path: the event method refuses robots (time-stepping's ``fast_step``)."""
        return False

    def advance(self, model: Model, state: State, contacts: ContactBuffers, dt: float, stats: Any,
                loads: Any) -> None:
        """One step of ``dt`` [s] of the world's ``stats`` (step.StepStats); the time-stepping contact buffers
        ``contacts`` are left empty (the method detects into its own)."""
        t0 = time.perf_counter()
        self.advance_by(dt)
        stats.values[stats.CONTACTS] = self.stats.resting_contacts
        contacts.dt = None
        stats.values[stats.SECONDS_SOLVE] = time.perf_counter() - t0

    def advance_by(self, dt: float) -> None:
        """Advance the bodies by ``dt`` [s] (module docstring); their loads are held over ``dt``. BLAS runs on one
        thread meanwhile (``solvers/blas_threads.py``: the LCPs and their polish's SVDs are small, and OpenBLAS's
        threads waiting on each other at every BLAS call of an SVD made steps 10× slower on a loaded machine)."""
        self._refresh()
        self._arrays = body_arrays(self.model, self.state)
        self._shape_rows = self._geom()
        try:
            with one_blas_thread():
                self._advance_by(dt)
        finally:
            self._arrays = self._shape_rows = None
            self._start_rate = None

    def _advance_by(self, dt: float) -> None:
        model, state = self.model, self.state
        s = self.settings
        a = self._live()
        self._loads = (a["force"].copy(), a["torque"].copy())
        self.stats = EventStats()
        if len(model.joints):   # velocities set since the last step may disagree with the joints
            project_joint_velocities(model, state)
        t = state.time
        t_end = state.time + dt
        self._lcp_work = 0.0
        intervals = 0
        try:
            while t_end - t > 1e-12 * max(1.0, abs(t_end)):
                intervals += 1
                if intervals > MAX_EVENTS_PER_STEP:
                    st = self.stats
                    raise EventBudgetExceeded(
                        f"event method: the step from t = {state.time:.9g} s to {t_end:.9g} s took more than "
                        f"{MAX_EVENTS_PER_STEP} event intervals (MAX_EVENTS_PER_STEP) and reached only t = {t:.9g} s: "
                        f"{st.collisions} collisions, {st.impulses} impulses, {st.root_evaluations} root evaluations; "
                        f"contacts chattering (Zeno-like). Use method='timestep' (the default) or a smaller dt, or a "
                        f"larger event_threshold; the world is as before the step")
                self.stats.impulses += self.resolve_impacts()
                y0 = self._get_state()
                self._start_rate = None       # dydt(t, y0), once the step's first integration has it
                cs0 = self.detect()
                pairs, which = np.unique(cs0.pair_codes(), return_inverse=True)
                deepest = np.full(pairs.shape[0], -math.inf)
                np.maximum.at(deepest, which, cs0.depth)
                start = (pairs, deepest)          # each pair's deepest penetration at the start of the step
                self._resting_pairs, self._resting_codes, self._start_codes = self._resting_at_start(cs0)
                slide_start = self._sliding_at_start(cs0)
                self._sliding = slide_start
                self._turning = self._turning_at_start(cs0)
                h = min(t_end - t, self._max_step())
                y1 = self._integrate(y0, t, h)
                self._set_state(y1)
                self.stats.ode_steps += 1
                if (slide_start[0].size or self._turning[0].size) and self._slide_reversed(slide_start) < 0.0:
                    h = self._stop_time(y0, t, h, slide_start)      # sliding stops within the step: end there
                if self._penetration(start) > s.tolerance:
                    base = np.maximum(deepest[which], 0.0)      # the start's own penetrations (``_penetrations``)
                    tau = self._collision_time(y0, t, h, start, (cs0.contact_codes(), cs0.depth - base))
                    self.stats.collisions += 1
                    t += tau
                else:
                    t += h
                self._project()
                if len(model.joints):
                    project_joints(model, state)
                    self._stale = True
        except EventLCPFailed as failure:   # named with the step's times (the world is restored by step.py)
            raise EventLCPFailed(failure.stage, failure.size, failure.status, (state.time, t_end, t)) from None
        self._resting_pairs = None
        self._sliding = None
        self._turning = None
        self.last_contacts = None     # contacts() evaluates the final state when asked
        if len(model.joints):   # the joints' readings: their force at the end state, held over dt
            self._evaluate_resting()
            self._with_joint_loads(*self._contact_loads(self.last_contacts, self._force_vectors,
                                                        self._torque_vectors))
            joints, lam = self._joint_multipliers
            record_joint_impulses(model, state, joints.slots(lam, dt), dt)
        a["force"][...] = 0.0
        a["torque"][...] = 0.0

    def _project(self, rounds: int = 4) -> None:
        """Post-stabilization of the positions (ArtiSynth notes 0.11, constraint projection): resting
        contact holds d̈ = 0, so the depth of a contact whose point slides over a face (a clipped manifold's
        corner moving along an edge) drifts by the integration error. Contacts deeper than ε are moved
        back to ε/2 by a displacement M⁻¹ Jᵀ λ, λ ≥ 0 the smallest that does it (an LCP in K = J M⁻¹ Jᵀ, as
        for impulses), applied to x and q only: P and L are kept, so linear momentum is
        untouched (the orbital part x × P of the angular momentum moves by Δx × P, |Δx| ~ the drift) and
        the velocities change only through I(q)⁻¹. A collision is accepted within ε, so it is never moved.
        A few linearized rounds bring every depth within ε."""
        eps = self.settings.tolerance
        for _ in range(rounds):
            cs = self.detect()
            deep = cs.subset(cs.depth > eps)
            if len(deep) == 0:
                return
            a, inv_inertia = self._bodies()
            J = rc.jacobian(deep, a["x"])
            MinvJt = self._inverse_mass(inv_inertia)(J.T)
            lam = solve_lcp(J @ MinvJt, -(deep.depth - 0.5 * eps), "projection")
            move = (MinvJt @ lam).reshape(-1, 6)
            y = self._get_state().reshape(-1, _state.STATE_SIZE)
            y[:, :3] += move[:, :3]
            turned = np.any(move[:, 3:] != 0.0, axis=1)
            y[turned, 3:7] = _turn(y[turned, 3:7], move[turned, 3:])
            self._set_state(y.reshape(-1))
        self.stats.unprojected += 1

    def _integrate(self, y0: np.ndarray, t: float, h: float) -> np.ndarray:
        """y(t + h) from y(t) = y0 in one ``ode`` step. Every integration of a step starts from its y0 (the
        first, then each root evaluation of ``_stop_time`` and ``_collision_time``), so dydt(t, y0), the
        first stage of each, is evaluated once per step (``_start_rate``): a root search then costs three
        derivatives per evaluation, not four."""
        if self.settings.ode == "adaptive":
            return _ode.ode(y0, t, t + h, self.dydt, method="adaptive", max_step=h)
        if self._start_rate is None:
            self._start_rate = self.dydt(t, y0)
        return _ode.ode(y0, t, t + h, self.dydt, method=self.settings.ode, max_step=h, ydot0=self._start_rate)

    def _collision_time(self, y0: np.ndarray, t: float, h: float, start: tuple[np.ndarray, np.ndarray],
                        at_start: tuple[np.ndarray, np.ndarray] | None = None) -> float:
        """The time τ in (0, h] after t at which the deepest penetration (``_penetration``) is within
        [ε/4, ε]; leaves the world in the state y(t + τ). Illinois on g(τ) = penetration − 5ε/8, with
        bisection while the low end sees no contact; bisection alone for ``root="bisection"``.

        The secant is drawn through the penetration of one contact: the deepest at the high end, as the
        low end saw it (same pair and features). Not through the deepest penetration of each end: where
        a contact already rests, that is flat (≈ 0) at every low end, and regula falsi on a function flat on
        one side creeps (Illinois halves the other end ~25 times from millimetres to ε) and ran out of
        evaluations on every landing of a second corner. One contact's depth is smooth in τ, nearly linear
        over a short interval. Where the low end did not report that contact (its features changed, or it
        was beyond the contact margin), the step bisects. ``at_start``: the contact codes and penetrations
        (``_penetrations``) of y0, the low end's from the first evaluation on."""
        s = self.settings
        eps = s.tolerance
        goal = 0.625 * eps
        lo, (lo_codes, lo_pen) = 0.0, (at_start if at_start is not None else (None, None))
        hi_codes, hi_pen = self._penetrations(start)
        hi = h
        scale_lo = scale_hi = 1.0          # Illinois: the retained end's value, halved each time it stays
        retained = 0
        for _ in range(s.max_halvings):
            tau = 0.5 * (lo + hi)
            if s.root == "illinois" and lo_codes is not None and hi_pen.size:
                key = int(np.argmax(hi_pen))
                at = rc.lookup(hi_codes[key:key + 1], lo_codes)[0]
                if at >= 0:
                    g_lo, g_hi = scale_lo * (lo_pen[at] - goal), scale_hi * (hi_pen[key] - goal)
                    if g_lo < 0.0 < g_hi:
                        secant = hi - g_hi * (hi - lo) / (g_hi - g_lo)
                        if lo < secant < hi:
                            tau = secant
            self._set_state(self._integrate(y0, t, tau))
            self.stats.root_evaluations += 1
            codes, measured = self._penetrations(start)
            pen = float(measured.max()) if measured.size else -math.inf
            if 0.25 * eps <= pen <= eps:
                return tau
            if pen > goal:
                hi, hi_codes, hi_pen = tau, codes, measured
                scale_hi = 1.0
                scale_lo = 0.5 * scale_lo if retained == -1 else 1.0
                retained = -1
            else:
                lo, lo_codes, lo_pen = tau, codes, measured
                scale_lo = 1.0
                scale_hi = 0.5 * scale_hi if retained == 1 else 1.0
                retained = 1
        self.stats.root_failures += 1
        self._set_state(self._integrate(y0, t, hi))
        return hi


TurningRows = namedtuple("TurningRows", ["rows", "dirs", "owner", "groups", "bound", "free"])
"""The static rows of rolling resistance and torsional friction (``EventDriven._turning_lcp_parts``): angular
Jacobian rows (D, 6 n), their unit directions (D, 3) and the contact carrying each (D,), each direction's group
(D,), the groups' bounds (G, c) on the normal forces, and each direction's free relative angular acceleration
(D,) [rad/s²]."""


def _turning_friction(cs: Contacts) -> bool:
    """Whether any of the contacts has rolling resistance or torsional friction."""
    return bool((cs.rolling_friction > 0.0).any() or (cs.torsional_friction > 0.0).any())


def _no_turning_rows(c: int, width: int) -> TurningRows:
    """``TurningRows`` with no rows, for c contacts and Jacobian rows ``width`` wide."""
    return TurningRows(np.zeros((0, width)), np.zeros((0, 3)), np.zeros(0, dtype=np.int64),
                       np.zeros(0, dtype=np.int64), np.zeros((0, c)), np.zeros(0))


def _angular_rows(cs: Contacts, vectors: np.ndarray, width: int) -> np.ndarray:
    """(c, ``width`` = 6 n) rows that apply the pure torques ``vectors`` (c, 3) to each contact's A and their
    opposites to its B: [0, τ] at A's angular columns, [0, −τ] at B's (as a Jacobian: the relative angular
    velocity along τ)."""
    rows = np.zeros((len(cs), width))
    i = np.arange(len(cs))
    for col in range(3):
        rows[i, 6 * cs.body_a + 3 + col] += vectors[:, col]
        rows[i, 6 * cs.body_b + 3 + col] -= vectors[:, col]
    return rows


def _contact_bounds(c: int, rough: np.ndarray, mu: np.ndarray) -> np.ndarray:
    """(m, c): row g bounds the friction of contact ``rough[g]`` by μ of that contact times its f."""
    bound = np.zeros((rough.size, c))
    bound[np.arange(rough.size), rough] = mu[rough]
    return bound


def _cone_directions(cs: Contacts, rough: np.ndarray, x: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The ``FRICTION_DIRECTIONS`` directions d_k (m k, 3) of the tangent plane of each contact in ``rough``
    (m,) (evenly spaced from ``rc.tangent_basis``' t1), the contact each belongs to (m k,), and their
    Jacobian rows (m k, 6 n) [bodies' x (n, 3) m]."""
    k = FRICTION_DIRECTIONS
    t1, t2 = rc.tangent_basis(cs.normal[rough])
    angles = 2.0 * np.pi * np.arange(k) / k
    dirs = (np.cos(angles)[None, :, None] * t1[:, None, :]
            + np.sin(angles)[None, :, None] * t2[:, None, :]).reshape(rough.size * k, 3)
    owner = np.repeat(rough, k)
    return dirs, owner, rc.jacobian_rows(cs.body_a[owner], cs.body_b[owner], cs.point[owner], dirs, x)


def _coulomb_lcp(block: np.ndarray, c: int, groups: np.ndarray, bound: np.ndarray) -> np.ndarray:
    """The LCP matrix of Stewart–Trinkle's linearized Coulomb cone: unknowns (f (c,), β (D,), λ (G,)) for c
    contacts and D friction directions in G groups (``groups`` (D,): each direction's); ``block`` ((c + D)², the
    contact and direction rows times M⁻¹ times the force directions) on the first c + D; then
    d · a + λ_g ≥ 0 ⊥ β ≥ 0 for each direction of group g and Σ_i bound[g, i] f_i − Σ_(d in g) β ≥ 0 ⊥ λ_g ≥ 0
    (``bound`` (G, c): μ at the contacts whose normal forces bound the group; at acceleration level for forces,
    velocity level for impulses)."""
    D, G = groups.size, bound.shape[0]
    size = c + D + G
    M = np.zeros((size, size))
    M[:c + D, :c + D] = block
    beta = c + np.arange(D)
    M[beta, c + D + groups] = 1.0
    M[c + D:, :c] = bound
    M[c + D + groups, beta] = -1.0
    return M


@njit(cache=True)
def _sliding_directions(dv, normal, within, index, directions, stop, t_hat, moving):
    """The sliding contacts (``moving`` (c,)) and their unit sliding directions t̂ (c, 3) from the relative
    velocities dv (c, 3) at the contacts: the tangential part v_t of dv. Outside a step (not ``within``): a
    contact slides when |v_t| > ``stop``, along v_t. Within a step: the contacts sliding at its start
    (``index`` (c,): each one's row in ``directions`` (s, 3), their start directions u; −1: not sliding then)
    slide along v_t while it keeps to u (v_t · u > 0), along u past the point where it turns back (the step
    is then cut there: ``_stop_time``), so that the force does not flip inside RK4's stages."""
    for i in range(dv.shape[0]):
        dn = dv[i, 0] * normal[i, 0] + dv[i, 1] * normal[i, 1] + dv[i, 2] * normal[i, 2]
        t0, t1, t2 = dv[i, 0] - dn * normal[i, 0], dv[i, 1] - dn * normal[i, 1], dv[i, 2] - dn * normal[i, 2]
        speed = np.sqrt(t0 * t0 + t1 * t1 + t2 * t2)
        if not within:
            moving[i] = speed > stop
            if moving[i]:
                t_hat[i, 0], t_hat[i, 1], t_hat[i, 2] = t0 / speed, t1 / speed, t2 / speed
            continue
        j = index[i]
        moving[i] = j >= 0
        if j < 0:
            continue
        u0, u1, u2 = directions[j, 0], directions[j, 1], directions[j, 2]
        if speed > 0.0 and t0 * u0 + t1 * u1 + t2 * u2 > 0.0:
            t_hat[i, 0], t_hat[i, 1], t_hat[i, 2] = t0 / speed, t1 / speed, t2 / speed
        else:
            t_hat[i, 0], t_hat[i, 1], t_hat[i, 2] = u0, u1, u2


@njit(cache=True)
def _deepest_of_pair(pair_codes, depth, counted, out):
    """out (c,): the largest depth over the ``counted`` contacts of each contact's pair (−inf where none)."""
    for i in range(pair_codes.shape[0]):
        out[i] = -np.inf
        for j in range(pair_codes.shape[0]):
            if counted[j] and pair_codes[j] == pair_codes[i] and depth[j] > out[i]:
                out[i] = depth[j]


@njit(cache=True)
def _add_contact_loads(body_a, body_b, point, x, fn, tn, force, torque):
    """force, torque (n, 3) += the contact forces fn (k, 3) at the points (k, 3) and pure torques tn (k, 3),
    + on A, − on B (``EventDriven._contact_loads``)."""
    for i in range(body_a.shape[0]):
        for side in range(2):
            body = body_a[i] if side == 0 else body_b[i]
            sign = 1.0 if side == 0 else -1.0
            rx, ry, rz = point[i, 0] - x[body, 0], point[i, 1] - x[body, 1], point[i, 2] - x[body, 2]
            f0, f1, f2 = sign * fn[i, 0], sign * fn[i, 1], sign * fn[i, 2]
            force[body, 0] += f0
            force[body, 1] += f1
            force[body, 2] += f2
            torque[body, 0] += ry * f2 - rz * f1 + sign * tn[i, 0]
            torque[body, 1] += rz * f0 - rx * f2 + sign * tn[i, 1]
            torque[body, 2] += rx * f1 - ry * f0 + sign * tn[i, 2]


def _quat_products(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Row-wise quaternion products a b (k, 4), (w, x, y, z)."""
    aw, av, bw, bv = a[:, :1], a[:, 1:], b[:, :1], b[:, 1:]
    return np.concatenate([aw * bw - np.sum(av * bv, axis=1, keepdims=True),
                           aw * bv + bw * av + rc.cross(av, bv)], axis=1)


def _turn(q: np.ndarray, rotation: np.ndarray) -> np.ndarray:
    """Quaternions q (k, 4) turned by the rotation vectors ``rotation`` (k, 3) [rad], world frame:
    exp(½ θ) q (no zero rotation vectors)."""
    angle = np.linalg.norm(rotation, axis=1)
    axis = rotation / angle[:, None]
    dq = np.concatenate([np.cos(0.5 * angle)[:, None], np.sin(0.5 * angle)[:, None] * axis], axis=1)
    return _quat_products(dq, q)


_LCP_TRIES = np.array([[0.0, 0.0], [0.0, 1e-12], [0.0, 1e-10], [0.0, 1e-8], [0.0, 1e-6]])
"""``solve_lcp``'s tries (relative, absolute regularization of the diagonal of A / max |A|): exact first,
then a growing absolute regularization. A degenerate LCP can make Lemke end on a ray or an inexact basis: a hinged
rod resting on a support with friction (its 4 contacts and 32 friction directions act through one degree of
freedom: rank 14 of 40) failed at 1e-12 and 1e-9 and was solved at 1e-10, 1e-8 and 1e-6. The polish works on
the unregularized problem."""


POLISH_CUTOFFS = (1e-12, 1e-10, 1e-8)
"""The relative singular-value cutoffs ``_least_norm_polish`` tries, finest first."""


def solve_lcp(A: np.ndarray, b: np.ndarray, stage: str) -> np.ndarray:
    """f ≥ 0 with A f + b ≥ 0 and f·(A f + b) = 0 for a symmetric positive semidefinite A (a resting-contact
    or impact LCP): Lemke's method (``pivoting.lemke_retried``, its basis re-solved exactly, as ``lemke``
    does), then the least-norm f on the active set it finds (A is singular when contacts outnumber the degrees
    of freedom they hold; the least-norm forces share a load symmetrically), kept only if it satisfies the
    LCP's conditions as well as Lemke's answer does. ``stage``: a key of ``LCP_STAGES``, named by the
    ``EventLCPFailed`` raised when no try of Lemke's method ends on a solution."""
    k = b.shape[0]
    if k == 0:
        return np.zeros(0)
    if not (np.isfinite(A).all() and np.isfinite(b).all()):
        raise FloatingPointError(f"the contact LCP ({k} contacts) has non-finite entries: the state, the loads "
                                 f"or the step overflowed")
    scale = max(float(np.abs(A).max()), 1e-300)
    x, _, _, code = lemke_retried(A / scale, b / scale, k, _LCP_TRIES, max(100, 50 * k), LEMKE_ACCEPT, True)
    if code != CONVERGED:
        raise EventLCPFailed(stage, k, STATUS_NAMES[code])
    return _least_norm_polish(np.ascontiguousarray(A, dtype=np.float64), np.ascontiguousarray(b, dtype=np.float64),
                              np.maximum(x, 0.0), scale)


@njit(cache=True)
def _least_norm_polish(A, b, f, scale):
    """``solve_lcp``'s polish of Lemke's f (k,) ≥ 0: the least-norm solution of A_SS f_S = −b_S on the active
    set S (w ≤ tol or f > 0), if it satisfies the LCP's conditions to the same tolerance, else f. The
    solution drops the singular values of A_SS below ``POLISH_CUTOFFS`` times its largest, the finest cutoff
    that gives an acceptable solution: a jointed body's A carries its joint block's rounding as singular
    values of ~1e-10 relative (a hinged rod resting on four contacts: 9.8, 5e-10, 2e-11, 4e-16), which a
    cutoff of 1e-12 keeps, turning the least-norm forces negative.

    One SVD A_SS = U Σ Vᵀ serves every cutoff: f_S = Σ_{σ_i > cutoff σ_1} v_i (u_i · (−b_S)) / σ_i, the
    truncated pseudo-inverse that ``np.linalg.lstsq(A_SS, −b_S, rcond=cutoff)`` gives (LAPACK gelsd: singular
    values ≤ rcond σ_1 count as zero), to rounding. A call of lstsq per cutoff factored A_SS up to three times
    per LCP; where no cutoff is accepted (the friction LCPs of three jointed boxes whose end faces touch: 192
    active rows, rank ~20) that was three SVDs per derivative (issue 53)."""
    k = b.shape[0]
    w = A @ f + b
    tol = 1e-9 * (np.abs(b).max() + scale * f.max() + 1e-300)
    active = np.flatnonzero((w <= tol) | (f > 0.0))
    m = active.shape[0]
    sub = np.empty((m, m))
    rhs = np.empty(m)
    for i in range(m):
        rhs[i] = -b[active[i]]
        for j in range(m):
            sub[i, j] = A[active[i], active[j]]
    if m:
        u, sigma, vt = np.linalg.svd(sub, full_matrices=False)
        projected = u.T @ rhs                  # u_i · (−b_S)
    else:
        sigma, vt, projected = np.zeros(0), np.zeros((0, 0)), np.zeros(0)
    for cutoff in POLISH_CUTOFFS:
        polished = np.zeros(k)
        if m:
            solution = np.zeros(m)
            for i in range(m):
                if sigma[i] > cutoff * sigma[0]:
                    solution += (projected[i] / sigma[i]) * vt[i]
            for i in range(m):
                polished[active[i]] = solution[i]
        w2 = A @ polished + b
        if polished.min() >= -tol / scale and w2.min() >= -tol and abs(polished @ w2) <= tol * (1.0 + f.sum()):
            return np.maximum(polished, 0.0)
    return f


_FORCE_KERNELS = (rc._rotate_inertias, rc._jacobian_rows, rc._apply_inverse_mass, rc._body_accelerations,
                  rc._core_points, rc._point_motions, rc._offsets, rc._face_normal_derivative)
_STATE_KERNELS = (rc._lookup_small, rc.find_all_collisions, _sliding_directions, _deepest_of_pair, _add_contact_loads,
                  _state.bodies_to_array_serial, _state.array_to_bodies_serial, _state.state_derivative_serial,
                  save_bodies, first_non_finite)
"""The kernels of ``EventDriven._compile_kernels``' parts "forces" and "state" (precompile.py: a share is cold while
one of its kernels has no cache entry)."""
