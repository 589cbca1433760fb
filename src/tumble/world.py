"""The World: the API layer's façade. It validates input, writes the Model and State as bodies, joints and
springs come and go (model/), owns the contact buffers, and hands a step to ``step.py`` with the method it
chose for its integrator (methods/)."""

from __future__ import annotations

import math
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from . import _checks
from .body import Body
from .collision.contacts import ContactBuffers
from .collision.detect import Contacts, detect_contacts, read_contacts
from .collision.polytope import polytope_of
from .constraints.attachments import sync_attached
from .conventions import (
    DEFAULT_CONTACT_MARGIN,
    DEFAULT_DENSITY,
    DEFAULT_FRICTION,
    DEFAULT_GRAVITY,
    DEFAULT_RESTITUTION,
    FLOAT,
    INTEGRATOR_FAMILIES,
    INTEGRATOR_NAMES,
    QUAT_NORM_MIN,
    GeomType,
    Integrator,
)
from .forces.springs import AxialSpring, FrameSpring, MultiPointSpring
from .integration import energy as _energy
from .integration import state_vector as _state
from .joints import Joint
from .mass import MassProperties, compound_parts, mass_properties
from .methods.event import EVENT_ODES, IMPACTS, ROOT_FINDERS, EventDriven, EventSettings
from .model import body_arrays
from .model.fields import BODY_STATE_FIELDS, MAX_CONTACTS, SCRATCH_BODY_FIELDS
from .model.model import Model, spring_bodies
from .model.settings import ContactSettings
from .model.state import State
from .precompile import precompile, precompile_before_first_step
from .queries import distance as _distance
from .queries import ray as _ray
from .robots.description import RobotDescription
from .robots.robot import Robot
from .robots.step import place_links
from .rotations import matrix_to_quat, quat_conj, quat_mul, quat_rotate, quat_to_matrix
from .sensors import Sensor, check_name
from .shapes import SHAPE_TYPES
from .step import StepStats, method_for, step
from .user.trajectory import MAX_STEPS, Trajectory, check_recording, checkpoint_path, record_simulation

ForceCallback = Callable[["World", float], None]

Spring = AxialSpring | MultiPointSpring | FrameSpring


_OWN_FIELDS = ("mass", "inv_mass", "inertia_body", "inv_inertia_body", "principal_q", "principal_moments",
               "inv_principal_moments", "collide", "extent")
"""A body's fields that ``attach`` hands to its master (the body's read 0 while attached) and ``detach`` gives back."""

_BOUNDING_RADIUS = {
    int(GeomType.SPHERE): lambda size: size[0],
    int(GeomType.BOX): lambda size: float(np.linalg.norm(size)),
    int(GeomType.CAPSULE): lambda size: size[0] + size[1],
    int(GeomType.CYLINDER): lambda size: float(np.hypot(size[0], size[1])),
    int(GeomType.ELLIPSOID): lambda size: float(np.max(size)),
    int(GeomType.CONVEX_HULL): lambda size: float(np.linalg.norm(size)),
}
"""Radius of a sphere about the shape's origin that holds the shape, from ``geom_size``."""


def _give_up_part(entry: list[Any], mass: float, com: np.ndarray, inertia_world: np.ndarray, x: np.ndarray,
                  q: np.ndarray) -> None:
    """An attached body's saved own fields (``entry[5]``; frame: its axes, origin its COM; it is at x, q now)
    less a part of ``mass`` [kg] with COM ``com`` [m] and inertia ``inertia_world`` about it (world): its COM
    moves to the rest's, and its pose in the root's frame (``entry[2]``) with it."""
    own = entry[5]
    rotation = quat_to_matrix(q)
    rest = MassProperties(float(own["mass"]), np.zeros(3), own["inertia_body"]) + MassProperties(
        -mass, rotation.T @ (com - x), -(rotation.T @ inertia_world @ rotation))
    d = rest.com
    inertia_body = rest.inertia
    inertia_body = 0.5 * (inertia_body + inertia_body.T)
    moments, axes = MassProperties(rest.mass, np.zeros(3), inertia_body).principal()
    own.update(mass=rest.mass, inv_mass=1.0 / rest.mass, inertia_body=inertia_body,
               inv_inertia_body=np.linalg.inv(inertia_body), principal_q=matrix_to_quat(axes),
               principal_moments=moments, inv_principal_moments=1.0 / moments)
    entry[2] = entry[2] + quat_rotate(entry[3], d)


_MATERIAL_EXTRAS = ("rolling_friction", "torsional_friction", "contact_stiffness", "contact_dissipation")
"""The material extras of a body or the ground beside friction and restitution (docs/materials.md)."""


def _material_record(extras: dict[str, float]) -> dict[str, Any]:
    """A body's material extras as its record keeps them (the arguments as given: None for a rigid contact)."""
    k = extras["contact_stiffness"]
    return {**extras, "contact_stiffness": None if k == math.inf else k}


def _as_given(shape: Any) -> Any:
    """A shape, or a compound's parts as (shape, position, orientation or None) with float arrays as given
    (before normalization, so that a saved scene rebuilds the same rows); called after validation."""
    if isinstance(shape, SHAPE_TYPES):
        return shape
    return tuple((p[0], np.array(p[1], dtype=FLOAT), np.array(p[2], dtype=FLOAT) if len(p) == 3 else None)
                 for p in shape)


def _extent(geom_rows: dict[str, np.ndarray]) -> float:
    """[m] radius about the body's COM of a sphere holding all its shapes (for the sleep test)."""
    parts = zip(geom_rows["geom_type"], geom_rows["geom_pos"], geom_rows["geom_size"], strict=True)
    return max(float(np.linalg.norm(pos)) + _BOUNDING_RADIUS[int(t)](size) for t, pos, size in parts)


_STATE_PARTS = ((0, "position x"), (3, "quaternion q"), (7, "momentum P"), (10, "angular momentum L"))
"""Where each part of a body's 13 entries of Y starts (``integration/state_vector.py``), for messages."""


def _state_entry(y: np.ndarray, k: int) -> str:
    """'body 2's momentum P (y[33] = inf)' for entry ``k`` of Y (13 n,)."""
    body, offset = divmod(k, _state.STATE_SIZE)
    part = next(name for start, name in reversed(_STATE_PARTS) if offset >= start)
    return f"body {body}'s {part} (y[{k}] = {float(y[k])!r})"


def _snapshot_keys(where: str, given: Any, like: dict[str, Any], optional: tuple[str, ...] = ()) -> None:
    """Refuse ``given`` unless it is a dict with the keys of ``like`` (a part of this world's snapshot)."""
    if not isinstance(given, dict):
        raise TypeError(f"{where} must be a dict as world.snapshot() makes, got {type(given).__name__}")
    missing = sorted(set(like) - set(given) - set(optional))
    unknown = sorted(set(given) - set(like), key=str)
    if missing or unknown:
        found = "; ".join(f"{what} {keys}" for what, keys in (("missing", missing), ("unknown", unknown)) if keys)
        raise ValueError(f"{where} must have the keys of world.snapshot() {sorted(like)}: {found}")


_KINDS = {"f": "fiu", "i": "iu", "u": "iu", "b": "b"}
"""Array kinds a snapshot's array may have, by the kind of this world's (ints and bools are taken as given)."""


def _snapshot_array(where: str, given: Any, like: np.ndarray, rows: int | None) -> np.ndarray:
    """``given`` as an array shaped like ``like`` (with ``rows`` rows; None: any number), of its kind, finite."""
    shape = ("k" if rows is None else rows,) + like.shape[1:]
    try:
        arr = np.asarray(given)
    except ValueError:      # a ragged nesting of lists
        arr = np.asarray(None)
    if arr.dtype.kind not in _KINDS[like.dtype.kind]:
        raise TypeError(f"{where} must be an array of {like.dtype} with shape {shape}, got {_checks._show(given)}")
    if arr.shape[1:] != like.shape[1:] or arr.ndim != like.ndim or (rows is not None and arr.shape[0] != rows):
        raise ValueError(f"{where} must have shape {shape} (this world's), got shape {arr.shape}")
    if arr.dtype.kind == "f" and not np.all(np.isfinite(arr)):
        raise ValueError(f"{where} must be finite, got {_checks._show(given)}")
    return arr


def _snapshot_group(where: str, given: Any, like: dict[str, np.ndarray], rows: int | None) -> dict[str, np.ndarray]:
    """A group of arrays (``ArrayGroup.snapshot()``) checked against this world's: every array with ``rows`` rows
    (None: any number, the same for all)."""
    _snapshot_keys(where, given, like)
    out = {}
    for key, template in like.items():
        out[key] = _snapshot_array(f"{where}[{key!r}]", given[key], template, rows)
        rows = out[key].shape[0]
    return out


def _snapshot_indices(where: str, arr: np.ndarray, low: int, high: int) -> None:
    """Refuse entries of an index array outside [low, high)."""
    if arr.size and (arr.min() < low or arr.max() >= high):
        raise ValueError(f"{where} must hold indices in [{low}, {high}) (this world's), got {_checks._show(arr)}")


def _snapshot_value(where: str, given: Any, like: Any) -> Any:
    """One entry of the joints' snapshot checked against this world's: an array of its shape (or None, as a
    snapshot taken before the joints' arrays were built has), None or a finite number where this world has
    a number or None, a sequence of as many entries where it has a list."""
    if isinstance(like, np.ndarray):
        return None if given is None else _snapshot_array(where, given, like, like.shape[0])
    if isinstance(like, list):
        if not isinstance(given, (list, tuple)) or len(given) != len(like):
            raise ValueError(f"{where} must be a list of {len(like)} entries (this world's), "
                             f"got {_checks._show(given)}")
        return list(given)
    if given is None or isinstance(given, np.ndarray):
        return given
    return _checks.real(where, given)



def _nonzero_quaternions(rows: np.ndarray) -> np.ndarray:
    """The quaternions of Y's rows (n, 13), scaled by powers of two (exactly) so that q · q cannot overflow;
    ValueError naming ``y``, the body and its entries for one shorter than QUAT_NORM_MIN (zero)."""
    quats, exponent = _checks.quaternions_scaled(rows[:, 3:7])
    short = np.flatnonzero(np.ldexp(np.sqrt(np.einsum("ij,ij->i", quats, quats)), exponent) < QUAT_NORM_MIN)
    if short.size:
        i = int(short[0])
        o = _state.STATE_SIZE * i
        raise ValueError(f"y must hold a non-zero quaternion for every body: body {i}'s quaternion q "
                         f"(y[{o + 3}:{o + 7}]) is {rows[i, 3:7].tolist()}")
    return quats

def _integrator_family(name: str) -> str:
    """The family (``INTEGRATOR_FAMILIES``) of integrator ``name``."""
    return next(family for family, names in INTEGRATOR_FAMILIES.items() if name in names)


def _event_integrator(integrator: str, event_ode: str) -> str:
    """The message refusing ``integrator`` for a world of method="event"."""
    return (f"integrator={integrator!r} does not belong to method='event': the event-driven method integrates its "
            f"ODE with event_ode (this world's: {event_ode!r}; 'rk4' or 'adaptive'), and takes no integrator; "
            f"leave integrator out, or use method='timestep'")


class World:
    """A set of rigid bodies advanced in time together.

    Args:
        gravity: (3,) gravitational acceleration [m/s²], world frame; default (0, 0, −9.81).
        integrator: how a step advances free motion (see ``docs/integrators.md`` for the drift table):
            "splitting" (default; symplectic Euler for translation, exact principal-axis rotations:
            |L| conserved to rounding, bounded energy error), "symplectic_euler", "implicit_gyro",
            "euler", "rk4" or "adaptive" (the last three integrate Baraff's Y = (x, q, P, L) through
            ``tumble.ode``), "implicit_euler", "trapezoidal" or "bridson_marino" (implicit, with the springs'
            Jacobians). method="event" takes none (its ODE is ``event_ode``'s).
        method: "timestep" (the default: velocity-level contact solved each step, by projected
            Gauss–Seidel unless ``solver`` says otherwise; docs/contact.md) or "event" (Baraff's
            event-driven method: the ODE over Y = (x, q, P, L) with resting-contact forces from an LCP,
            collision times by root finding and impulses; for small scenes; docs/event.md).
        event_impacts, event_tolerance, event_contact_band, event_threshold, event_ode, event_root: the
            event-driven method's settings (``methods.event.EventSettings``): "simultaneous" impacts (the
            default: one LCP for all impacts, with Coulomb friction; the closer to measured tosses,
            docs/event.md) or "sequential" (``find_all_collisions``, frictionless); ε [m] of the collision
            time; the touching band [m]; Baraff's THRESHOLD [m/s] between colliding and resting; "rk4" or
            "adaptive"; "illinois" or "bisection".
        robot_integrator: how robots' (q, q̇) advance (docs/robots.md): "euler" (semi-implicit Euler with
            implicit joint damping, the default) or "rk4" (classical Runge–Kutta on steps without link
            contacts or limits in reach).
        contact_margin: [m] pairs closer than this are reported as contacts with a negative depth
            (speculative contacts), so touching and nearly touching bodies are both seen. Default 5 mm.
        **contact_options: the contact solver's settings (``ContactSettings``: friction,
            friction_directions, solver ("pgs", "apgd", "cg", "lemke"; docs/solvers.md), iterations,
            relax_iterations, tolerance, restitution_threshold, correction, contact_hertz,
            contact_damping_ratio, max_push_velocity, baumgarte, slop, sleep...); docs/contact.md explains
            each.

    Every keyword reads back under its own name: ``world.gravity``, ``method`` (read only), ``integrator``
    (assignable within its family, ``conventions.INTEGRATOR_FAMILIES``), ``contact_margin``,
    ``robot_integrator`` and ``event_impacts``... on the world, the contact options on ``world.settings``
    (``world.settings.friction``, ``.solver``, ``.sleep``...); ``save_scene`` and ``load_scene`` keep them all.

    Bodies live in structure-of-arrays storage: their parameters in ``world.model``, their state in
    ``world.state`` (model/fields.py declares every array); ``world.bodies`` hands out thin ``Body`` handles
    that read and write those arrays.
    """

    def __init__(self, gravity: Any = DEFAULT_GRAVITY, *, method: str = "timestep", integrator: str = "splitting",
                 contact_margin: float = DEFAULT_CONTACT_MARGIN, event_impacts: str = "simultaneous",
                 event_tolerance: float = 1e-10, event_contact_band: float = 1e-6, event_threshold: float = 1e-3,
                 event_ode: str = "rk4", event_root: str = "illinois", robot_integrator: str = "euler",
                 **contact_options: Any) -> None:
        gravity = _checks.vector3("gravity", gravity)
        _checks.choice("method", method, {"timestep": 0, "event": 1})
        for name, value, options in (("event_impacts", event_impacts, IMPACTS), ("event_ode", event_ode, EVENT_ODES),
                                     ("event_root", event_root, ROOT_FINDERS)):
            _checks.choice(name, value, dict.fromkeys(options))
        event_settings = EventSettings(
            tolerance=_checks.at_most("event_tolerance", event_tolerance, _checks.LENGTH_MAX, "m"),
            contact_band=_checks.at_most("event_contact_band", event_contact_band, _checks.LENGTH_MAX, "m"),
            threshold=_checks.positive("event_threshold", event_threshold),
            impacts=event_impacts, ode=event_ode, root=event_root)
        integrator_code = _checks.choice("integrator", integrator, INTEGRATOR_NAMES)
        if method == "event" and integrator != "splitting":
            raise ValueError(_event_integrator(integrator, event_ode))
        _checks.choice("robot_integrator", robot_integrator, {"euler": 0, "rk4": 1})
        contact_margin = _checks.at_most("contact_margin", contact_margin, _checks.LENGTH_MAX, "m", zero=True)
        settings = ContactSettings(**contact_options)
        self._contact_options = dict(contact_options)
        """The contact options as given (validated), for ``save_scene``."""
        self._method_name = method
        self._event_settings = event_settings
        """The event method's settings as given (kept for a world of either method: ``event_impacts``...)."""
        self._model = Model(gravity, settings, contact_margin, integrator_code,
                            event_settings if method == "event" else None)
        self._model.robots.integrator = robot_integrator
        self._state = State()
        self._contacts = ContactBuffers()
        self._contacts.substeps = settings.substeps  # sub-steps of the step the buffer's impulses belong to
        self._method = method_for(self._model, self._state)
        self.step_stats = StepStats()
        """Figures of the last step (contacts, sweeps, residual, seconds per stage); see ``StepStats``."""
        self._name_index: dict[str, int] = {}
        self._handles: list[Body] = []
        self._force_fns: list[ForceCallback] = []
        self._stepped = False   # the first step precompiles in parallel (precompile.py)
        self._attachments: list[list[Any]] = []
        """[attached body, root master, COM in the root's frame (3,), orientation in it (4,), the master it was
        attached to, its own fields (``_OWN_FIELDS``), the attached bodies whose own fields carry it] per
        attachment (``attach``, ``detach``); packed into ``model.attachments`` for the step."""
        self._attach_log: list[tuple[Any, ...]] = []
        """The attachments in the order made, for ``save_scene`` to replay: ("body", body, master) and
        ("point", body, point (3,) [m] in the body's frame as made, mass [kg]); ``detach`` takes its entry
        out (the world is then as if it had not been made)."""
        self._views: dict[str, np.ndarray] | None = None
        self._records: list[dict[str, Any]] = []
        """How each body was made (the arguments as given, validated), in body order: what ``save_scene``
        writes. A body's record has "shape" (a shape, or a tuple of (shape, position, orientation or None)),
        "density", "mass", "inertia", "friction", "restitution", "fixed", "collide", "collision_group",
        "collision_mask", "name"; the ground's has "ground": True, "height", "friction", "restitution", "name";
        both have the material extras "rolling_friction", "torsional_friction", "contact_stiffness" (None: rigid)
        and "contact_dissipation", which the Body's setters keep current."""
        self._stats_stale = False   # step_stats hold a full step's figures (a robot-only fast step clears them)
        self._robot_records: list[dict[str, Any]] = []
        """How each robot was added (``add_robot``): the Robot, fixed_base, position, orientation, self_collision,
        and for a robot read from a file, its "file" and "format"."""
        self.run_defaults: dict[str, Any] = {}
        """Defaults for ``tumble run`` (``dt`` [s], ``duration`` [s], ``record_every``) from a scene file's
        ``[run]`` table (``load_scene``); ``save_scene`` writes them back. Empty for a world made in Python."""
        self._sensors: dict[str, Sensor] = {}
        """The sensors by name, in the order added (``add_sensor``)."""

    # ------------------------------------------------------------------ settings
    @property
    def model(self) -> Model:
        """The Model (model/model.py): the arrays and settings that change only through this API. For tools
        and advanced reading; change a world through its methods and handles."""
        return self._model

    @property
    def state(self) -> State:
        """The State (model/state.py): what a step advances (x, q, v, ω, loads, sleep, time). For tools and
        advanced reading; change a world through its methods and handles."""
        return self._state

    @property
    def time(self) -> float:
        """Simulated time [s]."""
        return self._state.time

    @time.setter
    def time(self, value: float) -> None:
        self._state.time = _checks.real("time", value)

    @property
    def gravity(self) -> np.ndarray:
        """(3,) gravitational acceleration [m/s²], world frame (a copy; assign to change)."""
        return self._model.gravity.copy()

    @gravity.setter
    def gravity(self, value: Any) -> None:
        self._model.gravity = _checks.vector3("gravity", value)
        self._wake_all()

    @property
    def method(self) -> str:
        """How time advances: "timestep" (velocity-level contact, docs/contact.md) or "event" (docs/event.md).
        Read only: the method is chosen when the world is made, ``World(method=...)``."""
        return self._method_name

    @method.setter
    def method(self, value: Any) -> None:
        raise AttributeError(f"world.method is read only (this world's is {self._method_name!r}, got {value!r}): "
                             f"the method is chosen when the world is made, e.g. World(method={value!r})")

    @property
    def integrator(self) -> str:
        """Name of the integrator in use; assign another of its family to change it (``INTEGRATOR_FAMILIES``:
        splitting, symplectic_euler, implicit_gyro step by time-stepping; euler, rk4, adaptive integrate the
        ODE; implicit_euler, trapezoidal, bridson_marino are implicit). A world with method="event" reads
        "splitting" and takes no other: its ODE is integrated by ``event_ode``."""
        return Integrator(self._model.integrator).name.lower()

    @integrator.setter
    def integrator(self, value: str) -> None:
        code = _checks.choice("integrator", value, INTEGRATOR_NAMES)
        current = self.integrator
        if self._method_name == "event":
            if value != current:
                raise ValueError(_event_integrator(value, self.event_ode))
            return
        family, own = _integrator_family(value), _integrator_family(current)
        if family != own:
            raise ValueError(f"integrator={value!r} does not belong to this world's method: method='timestep' with "
                             f"integrator={current!r} advances by {own} ({', '.join(INTEGRATOR_FAMILIES[own])}), and "
                             f"{value!r} by {family}; the method is chosen when the world is made: "
                             f"World(integrator={value!r})")
        self._model.integrator = code
        self._method = method_for(self._model, self._state).taking_over(self._method)

    @property
    def robot_integrator(self) -> str:
        """How robots' (q, q̇) advance: "euler" or "rk4" (``World(robot_integrator=...)``, docs/robots.md)."""
        return self._model.robots.integrator

    @property
    def event_impacts(self) -> str:
        """The event method's impact law, "simultaneous" or "sequential" (``World(event_impacts=...)``)."""
        return self._event_settings.impacts

    @property
    def event_tolerance(self) -> float:
        """ε [m] of the event method's collision times (``World(event_tolerance=...)``)."""
        return self._event_settings.tolerance

    @property
    def event_contact_band(self) -> float:
        """[m] the event method's touching band (``World(event_contact_band=...)``)."""
        return self._event_settings.contact_band

    @property
    def event_threshold(self) -> float:
        """[m/s] the event method's THRESHOLD between colliding and resting (``World(event_threshold=...)``)."""
        return self._event_settings.threshold

    @property
    def event_ode(self) -> str:
        """The event method's ODE integrator, "rk4" or "adaptive" (``World(event_ode=...)``)."""
        return self._event_settings.ode

    @property
    def event_root(self) -> str:
        """The event method's root finder, "illinois" or "bisection" (``World(event_root=...)``)."""
        return self._event_settings.root

    # ------------------------------------------------------------------ bodies
    def add_body(self, shape: Any, *, density: float | None = None, mass: float | None = None,
                 inertia: Any = None, position: Any = (0.0, 0.0, 0.0), orientation: Any = (1.0, 0.0, 0.0, 0.0),
                 velocity: Any = (0.0, 0.0, 0.0), angular_velocity: Any = (0.0, 0.0, 0.0),
                 friction: float = DEFAULT_FRICTION, restitution: float = DEFAULT_RESTITUTION,
                 fixed: bool = False, name: str | None = None, collide: bool = True,
                 collision_group: int = 1, collision_mask: int = 0xFFFFFFFF, rolling_friction: float = 0.0,
                 torsional_friction: float = 0.0, contact_stiffness: float | None = None,
                 contact_dissipation: float = 0.0, kinematic: bool = False) -> Body:
        """Add a rigid body and return its handle. Every argument is checked before anything changes.

        The body's mass, however given, lies in [1e-15, 1e21] kg, and the principal moments of its inertia in
        [1e-30, 1e36] kg m², within a ratio of 1e8 of one another unless it is fixed (``_checks``: MASS_MIN,
        MASS_MAX, INERTIA_MIN, INERTIA_MAX, INERTIA_RATIO_MAX; docs/conventions.md, "Limits").

        Args:
            shape: a shape, or a compound: a list of (shape, position, orientation) in a common frame.
                The body frame's origin is the centre of mass; a compound's parts are shifted so that
                its COM is the origin.
            density: [kg/m³] in [1e-3, 1e5] (default 1000 when neither density nor mass is given).
            mass: [kg] total mass instead of density; with ``inertia`` too, both are taken as given.
            inertia: (3, 3) [kg m²] about the COM in body axes; needs ``mass``.
            position: (3,) world position of the COM [m].
            orientation: (4,) quaternion (w, x, y, z), body → world; normalized if not unit length.
            velocity: (3,) COM velocity [m/s], world frame.
            angular_velocity: (3,) ω [rad/s], world frame.
            friction: Coulomb coefficient μ >= 0. restitution: e ∈ [0, 1].
            fixed: a fixed body never moves: zero inverse mass and inertia (Baraff II 8); its velocities
                must be zero.
            name: optional unique name for ``world.body(name)``.
            collide: False takes the body out of collision detection altogether.
            collision_group, collision_mask: 32-bit fields; two bodies' shapes can touch iff
                group_a & mask_b and group_b & mask_a are both non-zero (Box2D's rule).
            rolling_friction: μ_r >= 0 [m]: a contact's rolling torque is bounded by μ_r f_n (rolling
                resistance); torsional_friction: μ_s >= 0 [m]: its torque about the normal by μ_s f_n. Both
                combine per pair as √(a b), like friction; f_n is the pair's normal force (docs/materials.md).
                Solved by the default solver ("pgs") only: another solver refuses a non-zero value.
            contact_stiffness: k > 0 [N/m] per contact point, or None for a rigid contact (the default);
                contact_dissipation: d >= 0 [s/m]. A compliant contact pushes with the Hunt–Crossley force
                f_n = k x (1 + d ẋ), x the penetration; pairs put the two sides' springs in series
                (docs/materials.md).
            kinematic: the body moves with the ``velocity`` and ``angular_velocity`` set on it (changeable
                between steps), integrated exactly over each step: x ← x + h v, q ← exp(½ h ω) q; gravity,
                forces, springs, joints and contacts never change it, and it pushes and drags the bodies it
                touches as an infinite mass that moves (a conveyor, an elevator, a turntable, a motion-captured
                hand; docs/kinematic.md). It has no mass: density, mass and inertia are refused, as are
                ``fixed=True`` and impulses. Time-stepping integrators only (splitting, symplectic_euler,
                implicit_gyro).
        """
        parts = compound_parts(shape)
        if self.method == "event":
            EventDriven.check_shapes([part[0] for part in parts])
        if not isinstance(fixed, (bool, np.bool_)):
            raise TypeError(f"fixed must be True or False, got {fixed!r}")
        if not isinstance(kinematic, (bool, np.bool_)):
            raise TypeError(f"kinematic must be True or False, got {kinematic!r}")
        if kinematic:
            self._check_kinematic(fixed, density, mass, inertia)
        mp, inertia_body = self._check_mass(shape, density, mass, inertia, bool(fixed or kinematic))
        x = _checks.vector3("position", position)
        q = _checks.quaternion("orientation", orientation)
        v = _checks.vector3("velocity", velocity)
        w = _checks.vector3("angular_velocity", angular_velocity)
        mu, e = _checks.material(friction, restitution)
        extras = self._contact_material(rolling_friction, torsional_friction, contact_stiffness,
                                        contact_dissipation)
        if fixed and (np.any(v) or np.any(w)):
            raise ValueError(f"a fixed body cannot move: velocity and angular_velocity must be zero, "
                             f"got velocity={v.tolist()}, angular_velocity={w.tolist()}")
        self._check_name(name)
        if not isinstance(collide, (bool, np.bool_)):
            raise TypeError(f"collide must be True or False, got {collide!r}")
        group = _checks.bits32("collision_group", collision_group)
        mask = _checks.bits32("collision_mask", collision_mask)

        moments, Rp = MassProperties(mp.mass, mp.com, inertia_body).principal()
        geom_rows, polys = self._geom_rows(parts, mp.com, group, mask)
        # ---- nothing above changed the world; everything below only copies validated values
        row = {
            "mass": mp.mass,
            "inv_mass": 0.0 if fixed else 1.0 / mp.mass,
            "inertia_body": inertia_body,
            "inv_inertia_body": np.zeros((3, 3)) if fixed else np.linalg.inv(inertia_body),
            "principal_q": matrix_to_quat(Rp),
            "principal_moments": moments,
            "inv_principal_moments": np.zeros(3) if fixed else 1.0 / moments,
            "x": x, "q": q, "v": v, "w": w, "force": np.zeros(3), "torque": np.zeros(3),
            "friction": mu, "restitution": e, "collide": bool(collide),
            "extent": _extent(geom_rows), "awake": True, "sleep_timer": 0.0, **extras,
        }
        if kinematic:   # an infinite mass, as the ground's (its shape's centroid is its origin)
            row.update({"mass": 0.0, "inv_mass": 0.0, "inertia_body": np.zeros((3, 3)),
                        "inv_inertia_body": np.zeros((3, 3)), "principal_q": np.array([1.0, 0.0, 0.0, 0.0]),
                        "principal_moments": np.ones(3), "inv_principal_moments": np.zeros(3), "kinematic": True})
        handle = self._append_body(row, geom_rows, polys, name)
        self._records.append({
            "shape": _as_given(shape), "density": None if density is None else float(density),
            "mass": None if mass is None else float(mass),
            "inertia": None if inertia is None else np.array(inertia, dtype=FLOAT),
            "friction": mu, "restitution": e, "fixed": bool(fixed), "collide": bool(collide),
            "collision_group": group, "collision_mask": mask, "name": name, **_material_record(extras),
            "kinematic": bool(kinematic),
        })
        return handle

    def _check_kinematic(self, fixed: Any, density: Any, mass: Any, inertia: Any) -> None:
        """ValueError when a kinematic body is given what it cannot have: ``fixed=True`` (a kinematic body moves),
        a density, mass or inertia (it is an infinite mass), or a method that does not move it (the event
        method and the ODE and implicit integrators integrate the bodies' dynamics, not prescribed motions)."""
        if fixed:
            raise ValueError("kinematic=True and fixed=True exclude each other: a fixed body never moves, a "
                             "kinematic one moves with the velocity set on it; give one of them")
        for key, value in (("density", density), ("mass", mass), ("inertia", inertia)):
            if value is not None:
                raise ValueError(f"{key} must be None for a kinematic body: it moves as an infinite mass whatever "
                                 f"pushes it; got {key}={value!r}")
        if self._method.name != "timestep":
            raise ValueError(f"kinematic bodies move with the time-stepping integrators (splitting, "
                             f"symplectic_euler, implicit_gyro) of method='timestep'; this world has method="
                             f"{self.method!r}, integrator={self.integrator!r}")

    def add_ground(self, height: float = 0.0, *, friction: float = DEFAULT_FRICTION,
                   restitution: float = DEFAULT_RESTITUTION, name: str | None = "ground",
                   rolling_friction: float = 0.0, torsional_friction: float = 0.0,
                   contact_stiffness: float | None = None, contact_dissipation: float = 0.0) -> Body:
        """Add the static ground: the half-space z <= ``height`` [m], bounded by a plane with normal +z.

        It is a fixed body (zero inverse mass and inertia) with one plane shape. A plane has no mass:
        its ``mass`` is 0 and its principal moments are placeholders (1 kg m²) that no computation
        reads, since every dynamics kernel uses the zero inverses. Its material takes the keywords of
        ``add_body``'s (friction, restitution, rolling_friction, torsional_friction, contact_stiffness,
        contact_dissipation): a ball on a compliant ground sinks m g / k.
        """
        z = _checks.real("height", height)
        mu, e = _checks.material(friction, restitution)
        extras = self._contact_material(rolling_friction, torsional_friction, contact_stiffness,
                                        contact_dissipation)
        self._check_name(name)
        geom_rows = {
            "geom_type": np.array([int(GeomType.PLANE)], dtype=np.int32),
            "geom_pos": np.zeros((1, 3)), "geom_quat": np.array([[1.0, 0.0, 0.0, 0.0]]), "geom_size": np.zeros((1, 3)),
            "geom_group": np.array([1], dtype=np.uint32), "geom_mask": np.array([0xFFFFFFFF], dtype=np.uint32),
        }
        handle = self._append_body({
            "mass": 0.0, "inv_mass": 0.0, "inertia_body": np.zeros((3, 3)), "inv_inertia_body": np.zeros((3, 3)),
            "principal_q": np.array([1.0, 0.0, 0.0, 0.0]), "principal_moments": np.ones(3),
            "inv_principal_moments": np.zeros(3), "x": np.array([0.0, 0.0, z]), "q": np.array([1.0, 0.0, 0.0, 0.0]),
            "v": np.zeros(3), "w": np.zeros(3), "force": np.zeros(3), "torque": np.zeros(3),
            "friction": mu, "restitution": e, "collide": True, "extent": 0.0, "awake": True, "sleep_timer": 0.0,
            **extras,
        }, geom_rows, [None], name)
        self._records.append({"ground": True, "height": z, "friction": mu, "restitution": e, "name": name,
                              **_material_record(extras)})
        return handle

    def _contact_material(self, rolling_friction: Any, torsional_friction: Any, contact_stiffness: Any,
                          contact_dissipation: Any) -> dict[str, float]:
        """The checked material extras as body fields (``_checks.contact_material``; a rigid contact's
        stiffness is inf), refused when this world's solver cannot solve them (``_check_solver_material``)."""
        mu_r, mu_s, k, d = _checks.contact_material(rolling_friction, torsional_friction, contact_stiffness,
                                                    contact_dissipation)
        extras = {"rolling_friction": mu_r, "torsional_friction": mu_s, "contact_stiffness": k,
                  "contact_dissipation": d}
        self._check_solver_material(extras)
        return extras

    def _set_material(self, index: int, name: str, value: Any) -> None:
        """Body ``index``'s friction, restitution or material extra ``name`` = ``value`` (the Body setters):
        checked with the others as ``add_body`` checks them, then written to the body row and its record;
        refused before anything changes."""
        if name in ("friction", "restitution"):
            pair = {"friction": float(self._array("friction")[index]),
                    "restitution": float(self._array("restitution")[index]), name: value}
            checked = dict(zip(pair, _checks.material(pair["friction"], pair["restitution"]), strict=True))
            self._array(name)[index] = checked[name]
            self._records[index][name] = checked[name]
            return
        row = {key: float(self._array(key)[index]) for key in _MATERIAL_EXTRAS}
        extras = self._contact_material(**{**_material_record(row), name: value})
        self._array(name)[index] = extras[name]
        self._records[index][name] = _material_record(extras)[name]

    def _check_solver_material(self, extras: dict[str, float]) -> None:
        """ValueError when this world's contact solver cannot solve a material: rolling and torsional friction
        rows are built by the Gauss–Seidel sweep only (solver "pgs"), and so is the relax pass of the soft
        correction that holds compliant rows (docs/materials.md). The event method resolves rolling and
        torsional friction in its own resting-contact LCP, and refuses compliant contact (docs/event.md)."""
        settings = self._model.settings
        if self.method == "event":
            if extras["contact_stiffness"] != math.inf:
                raise ValueError(f"contact_stiffness must be None (rigid) with method='event': its impacts and "
                                 f"resting-contact LCP are rigid, and a Hunt–Crossley contact force would make its "
                                 f"ODE stiff (docs/event.md); use the default method='timestep'; got "
                                 f"{extras['contact_stiffness']!r}")
            return
        if settings.solver == "pgs":
            return
        for key in ("rolling_friction", "torsional_friction"):
            if extras[key] != 0.0:
                raise ValueError(f"{key} must be 0 with solver={settings.solver!r}: its rows are built by the "
                                 f"Gauss–Seidel sweep of the default solver 'pgs'; got {extras[key]!r}")
        if extras["contact_stiffness"] != math.inf and settings.correction == "soft":
            raise ValueError(f"contact_stiffness must be None (rigid) with correction='soft' and solver="
                             f"{settings.solver!r}: only the default solver 'pgs' holds compliant rows in the soft "
                             f"step's relax pass; got {extras['contact_stiffness']!r}")

    def _check_name(self, name: Any) -> None:
        if name is not None:
            if not isinstance(name, str):
                raise TypeError(f"name must be a string or None, got {name!r}")
            if name in self._name_index:
                raise ValueError(f"name must be unique in the world, got {name!r}, which is already taken")

    def _append_body(self, row: dict[str, Any], geom_rows: dict[str, np.ndarray], polys: list,
                     name: str | None) -> Body:
        """Copy one validated body and its shapes into the arrays."""
        model = self._model
        index = model.body.count
        row.setdefault("kinematic", False)
        for field in SCRATCH_BODY_FIELDS:
            row[field] = np.zeros(next(f.shape for f in BODY_STATE_FIELDS if f.name == field))
        model.body.append({f.name: np.asarray([row[f.name]]) for f in model.body.fields})
        self._state.body.append({f.name: np.asarray([row[f.name]]) for f in self._state.body.fields})
        k = len(polys)
        table = np.array([model.polytopes.append(p) if p is not None else (-1, 0, -1, 0, -1, 0) for p in polys],
                         dtype=np.int64).reshape(k, 6)
        for j, field in enumerate(("geom_vert_start", "geom_vert_count", "geom_face_start", "geom_face_count",
                                   "geom_edge_start", "geom_edge_count")):
            geom_rows[field] = table[:, j]
        geom_rows["geom_body"] = np.full(k, index, dtype=np.int32)
        geom_rows["geom_maker"] = np.full(k, index, dtype=np.int32)
        geom_rows["geom_made_pos"] = np.array(geom_rows["geom_pos"], dtype=FLOAT)
        geom_rows["geom_made_quat"] = np.array(geom_rows["geom_quat"], dtype=FLOAT)
        model.geom.append(geom_rows)
        model.names.append(name)
        if name is not None:
            self._name_index[name] = index
        handle = Body(self, index)
        self._handles.append(handle)
        self._bodies_changed()
        return handle

    def _bodies_changed(self) -> None:
        """Drop what depends on the body and shape rows: views, what the model derived from them (the methods
        then rebuild their detector and island scratch), the contact buffers (their pair keys name shape
        rows); attachments are packed again (remove_body moves rows up)."""
        self._views = None
        self._model.changed()
        self._contacts.clear()
        self._pack_attachments()

    def remove_body(self, body: Body) -> None:
        """Take ``body`` (a handle from this world) and its shapes out of the world.

        The rows after it move up one place, in order, and their handles follow (``body.index`` changes);
        the removed handle becomes invalid (using it raises ValueError). Every body is woken and the
        contacts' warm start is dropped, as after ``add_body``; the next step detects afresh. (The
        body's collision polytopes stay in the shared table, unused.)
        """
        if not isinstance(body, Body):
            raise TypeError(f"body must be a Body handle, got {body!r}")
        if body._index < 0:
            raise ValueError("body must be a live body of this world, got one already removed")
        if body._world is not self:
            raise ValueError(f"body must be a live body of this world, got {body!r} of another world")
        if any(body is e[0] or body is e[1] for e in self._attachments):
            raise ValueError(f"body must not take part in an attachment to be removed (world.detach first), "
                             f"got {body!r}")
        self._refuse_link("body", body, "removed")
        for joint in [j for j in self._model.joints.joints if j.a is body or j.b is body]:
            self._model.joints.remove(joint)
        self._model.springs[:] = [s for s in self._model.springs if body not in spring_bodies(s)]
        # a point mass it carries goes with it
        self._attach_log = [op for op in self._attach_log if op[1] is not body]
        index = body._index
        keep = np.arange(self._model.body.count) != index
        self._model.body.keep(keep)
        self._state.body.keep(keep)
        geom_keep = self._model.geom.live("geom_body") != index
        self._model.geom.keep(geom_keep)
        for field in ("geom_body", "geom_maker"):
            rows = self._model.geom.live(field)
            rows[rows > index] -= 1
        name = self._model.names.pop(index)
        if name is not None:
            del self._name_index[name]
        for key, i in self._name_index.items():
            if i > index:
                self._name_index[key] = i - 1
        self._handles.pop(index)
        self._records.pop(index)
        for handle in self._handles[index:]:
            handle._index -= 1
        body._index = -1
        self._model.robots.body_removed(index)
        self._bodies_changed()
        self._wake_all()

    def _wake_all(self) -> None:
        """Wake every moving body (gravity changed, a body was removed, the state was written)."""
        self._state.wake_all(self._model.body.live("inv_mass"))
        # This step's pairs too: those detected asleep kept their contacts (still valid: nothing moved) and
        # must now be solved.
        self._contacts.now.pairs.live("pair_awake")[:] = True

    @staticmethod
    def _check_mass(shape: Any, density: Any, mass: Any, inertia: Any,
                    fixed: bool) -> tuple[MassProperties, np.ndarray]:
        """The body's mass properties and its inertia about the COM (3, 3) [kg m²], with the mass and the
        principal moments in range (``_checks``); a fixed body's moments may be spread any amount."""
        if density is not None and mass is not None:
            raise ValueError(f"give density or mass, not both: got density={density!r}, mass={mass!r}")
        if inertia is not None and mass is None:
            raise ValueError("inertia needs mass: give mass= together with inertia=")
        mp = mass_properties(shape, DEFAULT_DENSITY if density is None else density)
        if mass is not None:
            mp = mp.scaled_to_mass(mass)
        elif not _checks.MASS_MIN <= mp.mass <= _checks.MASS_MAX:
            rho = DEFAULT_DENSITY if density is None else float(density)
            name, default = ("shape", " (the default density)") if density is None else ("density", "")
            raise ValueError(f"{name}: {rho:g} kg/m³{default} × {mp.mass / rho:.6g} m³ (the shape's volume) gives a "
                             f"mass of {mp.mass:.6g} kg, outside [{_checks.MASS_MIN:g}, {_checks.MASS_MAX:g}] kg; "
                             f"give another size or density, or mass=")
        if inertia is not None:
            return mp, _checks.inertia("inertia", inertia, spread=not fixed)
        inertia_body = 0.5 * (mp.inertia + mp.inertia.T)
        _checks.principal_moments("shape", np.linalg.eigvalsh(inertia_body),
                                  f" (from the shape and a mass of {mp.mass:.6g} kg)", spread=not fixed)
        return mp, inertia_body

    @staticmethod
    def _geom_rows(parts: list, com: np.ndarray, group: int, mask: int) -> tuple[dict[str, np.ndarray], list]:
        """Geometry rows for the parts of one body, re-centred so the body's COM is the origin, and each
        part's collision polytope (None for shapes handled in closed form)."""
        k = len(parts)
        rows = {
            "geom_type": np.array([int(p[0].geom_type) for p in parts], dtype=np.int32),
            "geom_pos": np.array([p[1] - com for p in parts], dtype=FLOAT),
            "geom_quat": np.array([p[2] for p in parts], dtype=FLOAT),
            "geom_size": np.array([p[0].size for p in parts], dtype=FLOAT),
            "geom_group": np.full(k, group, dtype=np.uint32),
            "geom_mask": np.full(k, mask, dtype=np.uint32),
        }
        return rows, [polytope_of(p[0]) for p in parts]

    @property
    def bodies(self) -> tuple[Body, ...]:
        """Handles of all bodies, in creation order."""
        return tuple(self._handles)

    def body(self, name: str) -> Body:
        """The body added with ``name``."""
        if not isinstance(name, str):
            raise TypeError(f"name must be a string, got {name!r}")
        if name not in self._name_index:
            raise ValueError(f"name {name!r} names no body in this world")
        return self._handles[self._name_index[name]]

    @property
    def body_count(self) -> int:
        """Number of bodies."""
        return self._model.body.count

    @property
    def geom_types(self) -> list[GeomType]:
        """Geometry type of each shape row, in order (compound bodies own several rows)."""
        return [GeomType(t) for t in self._model.geom.live("geom_type")]

    def add_force(self, fn: ForceCallback) -> None:
        """Register ``fn(world, t)``, called once at the start of every step (never per body); it applies
        loads through ``body.apply_force``/``apply_torque``, which act during that step."""
        if not callable(fn):
            raise TypeError(f"fn must be callable as fn(world, t), got {fn!r}")
        self._force_fns.append(fn)

    # ------------------------------------------------------------------ joints
    def _refuse_for_constraint_forces(self, what: str) -> None:
        """ValueError naming ``what`` (limits, a motor or a compliance) when the method is the event-driven one,
        which holds rigid equality joints only."""
        if self.method == "event":
            raise ValueError(f"{what} with method='event': it holds rigid equality joints only (no limits, "
                             f"motors or compliance); use method='timestep'")

    # ------------------------------------------------------------------ robots
    def add_robot(self, description: RobotDescription, *, position: Any = (0.0, 0.0, 0.0),
                  orientation: Any = (1.0, 0.0, 0.0, 0.0), fixed_base: bool = True, name: str | None = None,
                  self_collision: bool = False, friction: float = DEFAULT_FRICTION,
                  restitution: float = 0.0) -> Robot:
        """Add an articulation (reduced coordinates, docs/robots.md) from a ``RobotDescription`` and return its
        ``Robot`` handle. The root link sits at ``position`` (3,) [m] with ``orientation`` (4,) (w, x, y, z)
        (composed with the description's own ``base_position``/``base_orientation``, an MJCF file's placement);
        ``fixed_base`` True welds it there, False gives it a floating joint (q starts with that pose). Each
        link with collision shapes gets a World body named "ROBOT/LINK" that follows the joints; the robot's
        own links do not collide with each other unless ``self_collision`` (then only parent and child are
        kept apart). ``friction`` and ``restitution`` are the links' materials. Robots need time-stepping.
        The description's loop closures (``RobotDescription.closures``) become joints between the links' bodies,
        made at q = 0 (``robot.closures``; docs/robots.md). Every argument is checked before anything changes."""
        from .robots.build import add_robot

        if not isinstance(description, RobotDescription):
            raise TypeError(f"description must be a RobotDescription, got {type(description).__name__}")
        return add_robot(self, description, position, orientation, fixed_base, name, self_collision, friction,
                         restitution)

    def add_urdf(self, path: str | os.PathLike, *, position: Any = (0.0, 0.0, 0.0),
                 orientation: Any = (1.0, 0.0, 0.0, 0.0), fixed_base: bool = True, name: str | None = None,
                 self_collision: bool = False, convex_decomposition: bool = False,
                 friction: float = DEFAULT_FRICTION, restitution: float = 0.0, strict: bool = False) -> Robot:
        """Read a URDF file (robots/urdf.py; meshes become convex hulls, or the hulls of a convex decomposition
        with ``convex_decomposition``) and add it as ``add_robot`` does. Errors name the file and element. An
        inertia that is positive definite but breaks the triangle inequality loads with a ``UserWarning``;
        ``strict=True`` refuses it."""
        from .robots.urdf import read_urdf

        desc = read_urdf(path, convex_decomposition=convex_decomposition, strict=strict)
        robot = self.add_robot(desc, position=position, orientation=orientation, fixed_base=fixed_base, name=name,
                               self_collision=self_collision, friction=friction, restitution=restitution)
        self._robot_records[-1].update({"file": str(path), "format": "urdf"})
        return robot

    def add_mjcf(self, path: str | os.PathLike, *, position: Any = (0.0, 0.0, 0.0),
                 orientation: Any = (1.0, 0.0, 0.0, 0.0), fixed_base: bool | None = None, name: str | None = None,
                 self_collision: bool = False, friction: float = DEFAULT_FRICTION,
                 restitution: float = 0.0, strict: bool = False) -> Robot:
        """Read an MJCF file (an MJCF subset, robots/mjcf.py; ``strict`` as ``read_mjcf``'s) and add it as
        ``add_robot`` does; ``fixed_base``
        None takes the file's word (a root body with a free joint floats). ``position`` and ``orientation``
        place the file's world frame: the root body sits where the file puts it in that frame. The file's mocap
        bodies become kinematic bodies named "ROBOT/BODY" at the file's pose, at rest (``robot_records``'s
        "mocap"; move one by setting its velocity or pose; docs/kinematic.md)."""
        from .robots.mjcf import read_mjcf

        desc = read_mjcf(path, strict=strict)
        if fixed_base is None:
            fixed_base = not desc.floating
        place_x, place_q = _checks.vector3("position", position), _checks.quaternion("orientation", orientation)
        robot_name = desc.name if name is None else name
        for spec in desc.kinematic:   # (checked before the robot is added: nothing is half-added)
            self._check_name(f"{robot_name}/{spec.name}")
        robot = self.add_robot(desc, position=position, orientation=orientation, fixed_base=fixed_base, name=name,
                               self_collision=self_collision, friction=friction, restitution=restitution)
        mocap = []
        for spec in desc.kinematic:
            parts = [(g.shape, g.position, matrix_to_quat(g.rotation)) for g in spec.geoms]
            # the body's origin is its shapes' centroid (add_body), placed where the file's frame puts it
            q_body = quat_mul(place_q, spec.orientation)
            x_body = (place_x + quat_rotate(place_q, spec.position)
                      + quat_rotate(q_body, mass_properties(parts, DEFAULT_DENSITY).com))
            body = self.add_body(parts, kinematic=True, position=x_body, orientation=q_body, friction=friction,
                                 restitution=restitution, name=f"{robot.name}/{spec.name}")
            self._records[-1]["robot_mocap"] = robot.name
            mocap.append(body)
        self._robot_records[-1].update({"file": str(path), "format": "mjcf", "mocap": tuple(mocap)})
        return robot

    @property
    def robot_records(self) -> tuple[dict[str, Any], ...]:
        """How each robot was added, in order (for ``save_scene``): "robot" (the Robot), "fixed_base",
        "position", "orientation", "self_collision", "friction", "restitution" (the links' materials as added),
        and for a robot read from a file "file" and "format"; an MJCF robot's "mocap": the kinematic bodies its
        file's mocap bodies became."""
        return tuple(self._robot_records)

    @property
    def robots(self) -> tuple[Robot, ...]:
        """The robots, in the order added."""
        return tuple(self._model.robots.robots)

    def robot(self, name: str) -> Robot:
        """The robot called ``name``."""
        for r in self._model.robots.robots:
            if r.name == name:
                return r
        raise ValueError(f"no robot named {name!r}; robots: {[r.name for r in self._model.robots.robots]}")

    def _refuse_link(self, arg: str, body: Body, what: str) -> None:
        """A robot link's body follows its robot: it cannot be ``what`` on its own (ValueError)."""
        forest = self._model.robots
        if len(forest) and forest.body_link(self._model.body.count)[body._index] >= 0:
            raise ValueError(f"{arg} is {body.name!r}, a robot link's body, which follows its robot: it cannot be "
                             f"{what}")

    def _link_loaded(self, body: Body) -> None:
        """A load was put on ``body``: when it is a robot link's, the next step takes the stages that gather link
        loads (robots/step.py ``gather_link_loads``), not the one-kernel path of a robot alone."""
        forest = self._model.robots
        if len(forest) and forest.body_link(self._model.body.count)[body._index] >= 0:
            forest.loads_pending = True

    def _robots_moved(self) -> None:
        """The robots' q or q̇ were set: their links' bodies follow now (robots/step.py ``write_bodies``)."""
        forest = self._model.robots
        forest.moves += 1
        if len(forest):
            b = self._state.bodies()
            place_links(forest.buffers, b.x, b.q, b.v, b.w)
            self._wake_all()

    def add_joint(self, joint: Joint) -> Joint:
        """Add ``joint`` (a ``BallJoint``, ``HingeJoint``, ``SliderJoint`` or ``FixedJoint`` made with world
        coordinates; docs/joints.md) to the world: its anchor and axes are stored in each body's axes at the
        bodies' poses now. Returns the joint, now a live handle (``force``, ``torque``, ``error``, ...).
        With the splitting, semi-implicit or implicit integrators joints are solved as impulses; with the ODE
        integrators (euler, rk4, adaptive) and the event-driven method as constraint forces (the event
        method: rigid equality joints only; docs/joints.md). A joint with a robot link's body on a side is a loop
        closure, held by the robots' contact stage: its rigid equality rows only (no limits, motor or
        compliance), with the default solver "pgs" (docs/robots.md, robots/closures.py).
        Jointed bodies share an island (they sleep and wake together)."""
        if not isinstance(joint, Joint):
            raise TypeError(f"joint must be a BallJoint, HingeJoint, SliderJoint or FixedJoint, got {joint!r}")
        if joint._world is not None:
            raise ValueError(f"joint must not be in a world already, got {joint!r}")
        for side, body in (("a", joint.a), ("b", joint.b)):
            if body is None:
                continue
            if body._world is not self or body._index < 0:
                raise ValueError(f"joint.{side} must be a live body of this world, got {body!r}")
        inv_mass = self._model.body.live("inv_mass")
        if all(body is None or inv_mass[body._index] == 0.0 for body in (joint.a, joint.b)):
            raise ValueError(f"joint must connect at least one moving body, got {joint!r} between fixed bodies")
        problem = joint._constraint_force_problem()
        forest = self._model.robots
        links = forest.body_link(self._model.body.count) if len(forest) else None
        closure = links is not None and any(body is not None and links[body._index] >= 0
                                            for body in (joint.a, joint.b))
        if closure:
            # a loop closure: the robots' contact stage holds its rigid equality rows (robots/closures.py)
            if problem is not None:
                raise ValueError(f"joint {problem} cannot be held by a loop closure (a joint with a robot link's "
                                 f"body on a side: its rigid equality rows alone are held), got {joint!r}")
            if self._model.settings.solver != "pgs":
                raise ValueError(f"joint {joint!r} is a loop closure (a robot link's body on a side), which only "
                                 f"the default solver 'pgs' holds, got solver={self._model.settings.solver!r}")
        if problem is not None:
            self._refuse_for_constraint_forces(f"joint {problem}")
        joint._closure = closure
        joint._world = self
        joint._index = len(self._model.joints)
        self._model.joints.add(joint)
        self._model.constraints_changed()
        self._wake_all()
        return joint

    def remove_joint(self, joint: Joint) -> None:
        """Take ``joint`` out of the world; the handle stops being live."""
        if not isinstance(joint, Joint):
            raise TypeError(f"joint must be a joint, got {joint!r}")
        if joint._world is not self:
            raise ValueError(f"joint must be a joint of this world, got {joint!r}")
        self._model.joints.remove(joint)
        self._model.constraints_changed()
        self._wake_all()

    @property
    def joints(self) -> tuple[Joint, ...]:
        """The joints, in the order they were added."""
        return tuple(self._model.joints.joints)

    # ------------------------------------------------------------------ attachments
    def attach_point_mass(self, body: Body, point: Any, mass: float) -> None:
        """Attach a point mass ``mass`` [kg] at the world ``point`` [m] to ``body`` (ArtiSynth notes 0.17, 0.19;
        docs/attachments.md): the body's mass grows by it, its COM moves toward it and its inertia grows by
        the point-mass (parallel-axis) term. The body keeps its place and shapes in the world; its frame
        origin moves to the new COM. The point moves with the body (its velocity is the body's at that point)."""
        root = self._attach_root("body", body)
        point = _checks.vector3("point", point)
        mass = _checks.mass("mass", mass)
        a = self._live()
        r = root._index
        if a["inv_mass"][r] == 0.0:
            raise ValueError(f"body must be a moving body to carry a point mass, got the fixed {body!r}")
        self._check_no_springs(root)
        w, v, x = a["w"][r].copy(), a["v"][r].copy(), a["x"][r].copy()
        com = self._recombine(root, mass, point, np.zeros((3, 3)))
        a["v"][r] = v + np.cross(w, com - x)
        made_x, made_q = self.frame_as_made(root)
        self._attach_log.append(("point", root, quat_rotate(quat_conj(made_q), point - made_x), mass))
        self._bodies_changed()
        self._sync_attached()

    def attach(self, body: Body, master: Body) -> None:
        """Make ``body`` part of ``master`` (null-space reduction, ArtiSynth notes 0.17–0.19; docs/attachments.md):
        from now on it moves rigidly with it and carries no constraint rows. ``master`` may itself be attached
        (0.18): the body then joins the master's root. The two are merged as an inelastic contact would, keeping
        linear and angular momentum; the master's mass properties are recombined about the common COM and it
        takes over the body's shapes. The body's handle stays valid: its pose and velocity follow the master
        each step; its own mass and inertia read 0 (the master carries them). Bodies with joints or springs
        cannot be attached yet (ValueError). ``detach`` undoes it."""
        root = self._attach_root("master", master)
        if not isinstance(body, Body) or body._world is not self or body._index < 0:
            raise ValueError(f"body must be a live body of this world, got {body!r}")
        if body is root or body is master:
            raise ValueError(f"body must differ from master (and from master's root), got {body!r}")
        self._refuse_link("body", body, "attached")
        self._refuse_link("master", master, "attached to")
        if any(entry[0] is body for entry in self._attachments):
            raise ValueError(f"body is attached already, got {body!r}")
        a = self._live()
        b, r = body._index, root._index
        if a["inv_mass"][b] == 0.0:
            raise ValueError(f"body must be a moving body, got the fixed {body!r}")
        if any(j.a is body or j.b is body for j in self._model.joints.joints):
            raise ValueError(f"body must have no joints to be attached, got {body!r}")
        self._check_no_springs(body)
        self._check_no_springs(root)
        if self.method == "event":
            raise ValueError("attachments are solved by method='timestep' only")
        moving = a["inv_mass"][r] > 0.0
        mass_b, xb, qb, vb, wb = a["mass"][b], a["x"][b].copy(), a["q"][b].copy(), a["v"][b].copy(), a["w"][b].copy()
        inertia_b = body.inertia_world
        if moving:
            mass_r, xr, vr = a["mass"][r], a["x"][r].copy(), a["v"][r].copy()
            momentum = mass_r * vr + mass_b * vb
            com = (mass_r * xr + mass_b * xb) / (mass_r + mass_b)
            v_new = momentum / (mass_r + mass_b)
            spin = (root.inertia_world @ a["w"][r] + mass_r * np.cross(xr - com, vr - v_new)
                    + inertia_b @ wb + mass_b * np.cross(xb - com, vb - v_new))
            self._recombine(root, mass_b, xb, inertia_b)
            a["v"][r] = v_new
            a["w"][r] = np.linalg.solve(root.inertia_world, spin)
        # the body's shapes join the root's, placed where they are in the world
        qr_conj = quat_conj(a["q"][r])
        self._hand_shapes(self._model.geom.live("geom_body") == b, r, (xb, qb), (a["x"][r], a["q"][r]))
        if moving:   # (the sleep test's radius; a fixed root, the ground's plane among them, has none)
            a["extent"][r] = self._geom_extent(r)
        # bodies attached to ``body`` move to the root; their shapes already moved with body's
        for entry in self._attachments:
            if entry[1] is body:
                entry[1] = root
                entry[6].append(body)   # body's own fields, saved below, carry this rider
        # entry: body, root, its pose in the root's frame, the master it was attached to, its own fields, and
        # the attached bodies whose own fields carry it (it rode on them while they were roots)
        own = {name: np.copy(a[name][b]) for name in _OWN_FIELDS}
        self._attachments.append([body, root, np.zeros(3), np.array([1.0, 0.0, 0.0, 0.0]), master, own, []])
        self._attach_log.append(("body", body, master))
        for entry in self._attachments:
            if entry[1] is root:
                i = entry[0]._index
                entry[2] = quat_rotate(qr_conj, a["x"][i] - a["x"][r])
                entry[3] = quat_mul(qr_conj, a["q"][i])
        for name in _OWN_FIELDS:
            if name != "principal_q":   # the axes stay a unit quaternion: the kernels turn it for every body
                a[name][b] = 0
        self._bodies_changed()
        self._sync_attached()

    def detach(self, body: Body) -> None:
        """Undo ``attach(body, master)``: ``body`` moves on its own again with its own mass properties and
        shapes, and its root master loses them (docs/attachments.md). Both leave with the assembly's rigid
        velocity field at their centres of mass, v + ω × (x − x_com), and its ω, so linear and angular
        momentum are kept exactly (the inverse of the inelastic merge of ``attach``). The root's mass
        properties are the assembly's less the body's part (``MassProperties`` with a negative part, exact
        to rounding); its frame origin moves to its own COM, its shapes, joint anchors and attached bodies
        keeping their place in the world.

        Raises ValueError if ``body`` is not attached, or bodies were attached to it (detach those first)."""
        if not isinstance(body, Body):
            raise TypeError(f"body must be a Body handle, got {body!r}")
        entry = next((e for e in self._attachments if e[0] is body), None)
        if entry is None:
            raise ValueError(f"body must be an attached body of this world, got {body!r}")
        riders = [e[0] for e in self._attachments if e[4] is body]
        if riders:
            raise ValueError(f"body has {len(riders)} bodies attached to it ({riders!r}): detach those first")
        self._sync_attached()
        root, own = entry[1], entry[5]
        a = self._live()
        b, r = body._index, root._index
        xb, qb, x_com, v_com, w_com = a["x"][b].copy(), a["q"][b].copy(), a["x"][r].copy(), a["v"][r].copy(), \
            a["w"][r].copy()
        # the body's shapes go back to it, placed where they are in the world
        self._hand_shapes(self._model.geom.live("geom_maker") == b, b, (x_com, a["q"][r].copy()), (xb, qb))
        self._attachments.remove(entry)
        self._attach_log = [op for op in self._attach_log if not (op[0] == "body" and op[1] is body)]
        for name in _OWN_FIELDS:
            a[name][b] = own[name]
        rotation = quat_to_matrix(qb)
        inertia_b = rotation @ own["inertia_body"] @ rotation.T
        # Attached in a chain (0.18): the bodies it rode on while they were roots, attached since, carry it in
        # their own fields (attach merged it into them first); they give it up too.
        for carrier in entry[6]:
            carrier_entry = next(e for e in self._attachments if e[0] is carrier)
            _give_up_part(carrier_entry, float(own["mass"]), xb, inertia_b, a["x"][carrier._index],
                          a["q"][carrier._index])
        if a["inv_mass"][r] > 0.0:
            com_r = self._recombine(root, -float(own["mass"]), xb, -inertia_b)
            a["v"][r] = v_com + np.cross(w_com, com_r - x_com)
        a["v"][b] = v_com + np.cross(w_com, xb - x_com)
        a["w"][b] = w_com
        self._bodies_changed()
        self._sync_attached()
        self._wake_all()

    def _hand_shapes(self, rows: np.ndarray, owner: int, pose_from: tuple, pose_to: tuple) -> None:
        """Give the shape rows ``rows`` (g,) bool to body row ``owner``, keeping their place in the world: their
        local poses go from the frame ``pose_from`` = (x (3,) [m], q (4,)) to the frame ``pose_to``."""
        (x_from, q_from), (x_to, q_to) = pose_from, pose_to
        to_conj = quat_conj(q_to)
        pos, quat = self._model.geom.live("geom_pos"), self._model.geom.live("geom_quat")
        for k in np.flatnonzero(rows):
            world_pos = x_from + quat_rotate(q_from, pos[k])
            pos[k] = quat_rotate(to_conj, world_pos - x_to)
            quat[k] = quat_mul(to_conj, quat_mul(q_from, quat[k]))
        self._model.geom.live("geom_body")[rows] = owner

    def frame_as_made(self, body: Body) -> tuple[np.ndarray, np.ndarray]:
        """(x (3,) [m], q (4,)) in the world of the frame ``body`` was made in (its COM and axes at creation,
        carried along rigidly since): found from one of the shapes it was made with, whose world pose is
        known wherever attachments have handed it, and whose pose in that frame is ``geom_made_*``."""
        a = self._live()
        k = int(np.flatnonzero(self._model.geom.live("geom_maker") == body._index)[0])
        owner = int(self._model.geom.live("geom_body")[k])
        q_shape = quat_mul(a["q"][owner], self._model.geom.live("geom_quat")[k])
        x_shape = a["x"][owner] + quat_rotate(a["q"][owner], self._model.geom.live("geom_pos")[k])
        q_made = quat_mul(q_shape, quat_conj(self._model.geom.live("geom_made_quat")[k]))
        return x_shape - quat_rotate(q_made, self._model.geom.live("geom_made_pos")[k]), q_made

    @property
    def attachment_log(self) -> tuple[tuple[Any, ...], ...]:
        """The attachments in the order they were made, as ``save_scene`` writes them: ("body", body, master)
        and ("point", body, point (3,) [m] in the frame the body was made in (``frame_as_made``), mass [kg])."""
        return tuple(self._attach_log)

    @property
    def body_records(self) -> tuple[dict[str, Any], ...]:
        """How each body was made, in body order (what ``save_scene`` writes): a body's record has "shape" (a
        shape, or a tuple of (shape, position, orientation or None)), "density", "mass", "inertia", "friction",
        "restitution", "fixed", "collide", "collision_group", "collision_mask", "name"; the ground's has
        "ground": True, "height", "friction", "restitution", "name"; both have "rolling_friction",
        "torsional_friction", "contact_stiffness" (None: rigid) and "contact_dissipation", kept current by the
        Body's setters. The records themselves: do not change them."""
        return tuple(self._records)

    @property
    def contact_options(self) -> dict[str, Any]:
        """The contact options given to ``World`` (a copy; ``settings`` has every value, defaults included)."""
        return dict(self._contact_options)

    @property
    def attachments(self) -> tuple[tuple[Body, Body], ...]:
        """(attached body, the root master it moves with) pairs, in the order they were made."""
        return tuple((entry[0], entry[1]) for entry in self._attachments)

    def _attach_root(self, name: str, body: Any) -> Body:
        """The root master of ``body`` (itself unless attached), after checking it is a live body here."""
        if not isinstance(body, Body):
            raise TypeError(f"{name} must be a Body handle, got {body!r}")
        if body._world is not self or body._index < 0:
            raise ValueError(f"{name} must be a live body of this world, got {body!r}")
        for entry in self._attachments:
            if entry[0] is body:
                return entry[1]
        return body

    def _check_no_springs(self, body: Body) -> None:
        if any(body in spring_bodies(s) for s in self._model.springs):
            raise ValueError(f"a body with springs cannot take part in an attachment yet, got {body!r}")

    def _geom_extent(self, index: int) -> float:
        rows = self._model.geom.live("geom_body") == index
        return _extent({k: self._model.geom.live(k)[rows] for k in ("geom_type", "geom_pos", "geom_size")})

    def _recombine(self, root: Body, mass: float, com: np.ndarray, inertia_world: np.ndarray) -> np.ndarray:
        """Add a part (mass [kg], COM and inertia about it, world frame; a negative mass and inertia take a part
        out, as ``detach`` does) to ``root``'s mass properties about the common COM (the reduced mass matrix of
        ArtiSynth notes 0.19, by ``MassProperties.__add__``), move root's frame origin there (its shapes, joint
        anchors and attached bodies keep their place in the world) and return the new COM (3,) [m]."""
        a = self._live()
        r = root._index
        R = root.rotation_matrix
        merged = MassProperties(a["mass"][r], a["x"][r].copy(), root.inertia_world) + MassProperties(
            mass, np.asarray(com, dtype=float), inertia_world)
        total, com_new, inertia = merged.mass, merged.com, merged.inertia
        shift = R.T @ (com_new - a["x"][r])              # the new origin in the old body frame
        self._model.geom.live("geom_pos")[self._model.geom.live("geom_body") == r] -= shift
        for joint in self._model.joints.joints:
            for side, end in ((0, joint.a), (1, joint.b)):
                if end is root:
                    joint._frames[side][:3] -= shift
        self._model.joints.changed()
        for entry in self._attachments:
            if entry[1] is root:
                entry[2] = entry[2] - shift
        inertia_body = R.T @ inertia @ R
        inertia_body = 0.5 * (inertia_body + inertia_body.T)
        moments, Rp = MassProperties(total, np.zeros(3), inertia_body).principal()
        a["mass"][r], a["inv_mass"][r] = total, 1.0 / total
        a["inertia_body"][r], a["inv_inertia_body"][r] = inertia_body, np.linalg.inv(inertia_body)
        a["principal_q"][r], a["principal_moments"][r] = matrix_to_quat(Rp), moments
        a["inv_principal_moments"][r] = 1.0 / moments
        a["x"][r] = com_new
        a["extent"][r] = self._geom_extent(r)
        return com_new

    def _pack_attachments(self) -> None:
        """The attachments as the step's kernel takes them (``model.attachments``)."""
        entries = self._attachments
        self._model.attachments.set([e[0]._index for e in entries], [e[1]._index for e in entries],
                                    [e[2] for e in entries], [e[3] for e in entries])

    def _sync_attached(self) -> None:
        """Attached bodies' poses and velocities from their roots (attachments.sync_attached)."""
        self._pack_attachments()
        if not self._attachments:
            return
        a = self._live()
        attached = self._model.attachments
        sync_attached(attached.body, attached.root, attached.position, attached.orientation, a["x"], a["q"], a["v"],
                      a["w"])

    # ------------------------------------------------------------------ springs
    def add_spring(self, spring: Spring) -> Spring:
        """Add ``spring`` (``AxialSpring``, ``MultiPointSpring`` or ``FrameSpring``, made with world points at
        creation; docs/springs.md): its points are stored in the bodies' axes at their poses now. Its body
        references are those its constructor takes: a Body of this world, a body index (``world.bodies[i]``,
        which the spring then holds) or None for the world. Its loads
        act every step; the implicit integrators (``integrator="implicit_euler"``, "trapezoidal",
        "bridson_marino") use its Jacobians. Returns the spring."""
        if not isinstance(spring, (AxialSpring, MultiPointSpring, FrameSpring)):
            raise TypeError(f"spring must be an AxialSpring, MultiPointSpring or FrameSpring, got {spring!r}")
        if any(s is spring for s in self._model.springs):
            raise ValueError(f"spring must not be in this world already, got {spring!r}")
        refs = [self._spring_body(ref) for ref in spring_bodies(spring, keep_world=True)]
        if self.method == "event":     # before bind: a refused spring is left as it was given
            raise ValueError("springs act in method='timestep' only (the event-driven method's ODE does not "
                             "take their loads yet)")
        if isinstance(spring, MultiPointSpring):
            spring.bodies = refs
        else:
            spring.a, spring.b = refs
        live = self._live()
        spring.bind(live["x"], live["q"])
        self._model.springs.append(spring)
        self._model.constraints_changed()
        self._wake_all()
        return spring

    def _spring_body(self, ref: Any) -> Body | None:
        """A spring's body reference (what the spring constructors take: a Body, a body index or None for the
        world, ``forces.springs.BodyRef``) as this world's Body handle: a Body must be a live body of this
        world, an index that of one of its bodies (``world.bodies[i]``); None stays the world."""
        if ref is None:
            return None
        if isinstance(ref, (int, np.integer)) and not isinstance(ref, bool):
            if not 0 <= ref < len(self._handles):
                raise ValueError(f"spring must join bodies of this world (or None for the world): body index "
                                 f"{ref!r} is not one of its {len(self._handles)} bodies")
            return self._handles[int(ref)]
        if not isinstance(ref, Body) or ref._world is not self or ref._index < 0:
            raise ValueError(f"spring must join live bodies of this world (or None for the world), got {ref!r}")
        return ref

    def remove_spring(self, spring: Spring) -> None:
        """Take ``spring`` out of the world."""
        for k, s in enumerate(self._model.springs):
            if s is spring:
                del self._model.springs[k]
                self._model.constraints_changed()
                self._wake_all()
                return
        raise ValueError(f"spring must be a spring of this world, got {spring!r}")

    @property
    def springs(self) -> tuple[Spring, ...]:
        """The springs, in the order they were added."""
        return tuple(self._model.springs)

    # ------------------------------------------------------------------ arrays
    # ------------------------------------------------------------------ sensors
    def add_sensor(self, sensor: Sensor, name: str | None = None) -> Sensor:
        """Add ``sensor`` (``tumble.Imu``, ``ContactForce`` or ``ForceTorque`` of this world's bodies, robots or
        joints; docs/sensors.md) under ``name`` (letters, digits, ``_ . - /``; None: the sensor's type and the
        first free number, "imu0", "contact_force1", ...). Returns the sensor, now bound: ``sensor.read()``
        reads it any time and ``simulate`` records it as ``traj.sensors[name]``.

        Raises:
            TypeError: ``sensor`` is not a sensor, or ``name`` not a string.
            ValueError: the sensor is already in a world, measures something of another world, or ``name`` is
                malformed or taken.
        """
        if not isinstance(sensor, Sensor):
            raise TypeError(f"sensor must be a tumble.Imu, ContactForce or ForceTorque, got {sensor!r}")
        if sensor.name is not None:
            raise ValueError(f"sensor must not be in a world already, got {sensor!r}")
        if name is None:
            k = len(self._sensors)
            while f"{sensor.kind}{k}" in self._sensors:
                k += 1
            name = f"{sensor.kind}{k}"
        name = check_name(name)
        if name in self._sensors:
            raise ValueError(f"name {name!r} is taken by sensor {self._sensors[name]!r}; sensor names are unique")
        sensor.bind(self, name)
        self._sensors[name] = sensor
        return sensor

    def remove_sensor(self, sensor: Sensor | str) -> None:
        """Take a sensor (the handle or its name) out of the world; it stops being recorded and readable."""
        name = sensor if isinstance(sensor, str) else getattr(sensor, "name", None)
        if name not in self._sensors or not (isinstance(sensor, str) or self._sensors[name] is sensor):
            raise ValueError(f"sensor must be a sensor of this world or its name, got {sensor!r}; "
                             f"the sensors: {list(self._sensors)}")
        self._sensors.pop(name).unbind()

    @property
    def sensors(self) -> dict[str, Sensor]:
        """The sensors, name → sensor, in the order added (a new dict: changing it changes nothing)."""
        return dict(self._sensors)

    def _sensors_before_step(self, dt: float) -> None:
        """Each sensor keeps what its reading needs of the step of ``dt`` [s] about to start (sensors.py)."""
        for sensor in self._sensors.values():
            sensor.before_step(dt)

    def _live(self) -> dict[str, np.ndarray]:
        """Views of the live rows of every body field (the model's and the state's), rebuilt only when the
        bodies change."""
        if self._views is None:
            self._views = body_arrays(self._model, self._state)
        return self._views

    def _array(self, name: str) -> np.ndarray:
        """The full-capacity array of body field ``name`` (for the handles)."""
        group = self._state.body if hasattr(self._state.body, name) else self._model.body
        return getattr(group, name)

    def state_arrays(self) -> dict[str, np.ndarray]:
        """Copies of the body state: {"x": (n,3) m, "q": (n,4), "v": (n,3) m/s, "w": (n,3) rad/s}, world frame."""
        live = self._live()
        return {k: live[k].copy() for k in ("x", "q", "v", "w")}

    def snapshot(self) -> dict[str, Any]:
        """Everything that changes as time advances (state, accumulated loads, time, the contact buffer with the
        impulses that warm-start the next step, and the robots' q, q̇ and controls); see ``restore``."""
        forest = self._model.robots
        robots = forest.buffers[2].copy() if len(forest) else np.zeros(0)
        return {**self._state.snapshot(), **self._contacts.snapshot(), "joints": self._model.joints.snapshot(),
                "robots": robots}

    def restore(self, snapshot: dict[str, Any]) -> None:
        """Return to a ``snapshot`` of this world taken with the same bodies: stepping on from it repeats
        what followed the snapshot exactly. A snapshot without the keys, array shapes (as many bodies and joints
        as this world has) or finite values of one is refused, naming the key, before anything changes."""
        snapshot = self._checked_snapshot(snapshot)
        self._state.restore(snapshot)
        self._contacts.restore(snapshot)
        if "joints" in snapshot:
            self._model.joints.restore(snapshot["joints"])
        if "robots" in snapshot and len(self._model.robots):
            forest = self._model.robots
            forest.buffers[2][:] = snapshot["robots"]     # q, q̇, τ, motor targets and gains, joint impulses
            forest.work.flags[0] = 0.0                     # the kinematics are of another q
            forest.moves += 1
        if self.method == "event":
            self._method.last_contacts = None    # its resting contacts are re-evaluated at the restored state

    def _checked_snapshot(self, snapshot: Any) -> dict[str, Any]:
        """``snapshot`` checked against this world's own (``snapshot()``): the same keys ("joints" may be left
        out); the body arrays with a row per body; the contact buffer's arrays with any number m of pairs and
        MAX_CONTACTS m slots, its shape and body indices this world's; every float finite. Returns it with
        arrays for array-likes."""
        like = self.snapshot()
        _snapshot_keys("snapshot", snapshot, like, optional=("joints", "robots"))
        contacts = snapshot["contacts"]
        _snapshot_keys("snapshot['contacts']", contacts, like["contacts"])
        pairs = _snapshot_group("snapshot['contacts']['pairs']", contacts["pairs"], like["contacts"]["pairs"], None)
        m = next(iter(pairs.values())).shape[0] if pairs else 0
        out = {
            "time": _checks.real("snapshot['time']", snapshot["time"]),
            "body": _snapshot_group("snapshot['body']", snapshot["body"], like["body"], self._model.body.count),
            "contacts": {"pairs": pairs, "slots": _snapshot_group("snapshot['contacts']['slots']", contacts["slots"],
                                                                  like["contacts"]["slots"], MAX_CONTACTS * m)},
            "contacts_dt": (None if snapshot["contacts_dt"] is None
                            else _checks.positive("snapshot['contacts_dt']", snapshot["contacts_dt"])),
            "contacts_substeps": _checks.positive_int("snapshot['contacts_substeps']", snapshot["contacts_substeps"]),
        }
        for key, high in (("pair_geom", self._model.geom.count), ("pair_body", self._model.body.count),
                          ("pair_contacts", MAX_CONTACTS + 1)):
            if key in pairs:
                _snapshot_indices(f"snapshot['contacts']['pairs'][{key!r}]", pairs[key], 0, high)
        if "robots" in snapshot:
            out["robots"] = _snapshot_array("snapshot['robots']", snapshot["robots"], like["robots"],
                                            like["robots"].shape[0])
        if "joints" in snapshot:
            joints = snapshot["joints"]
            _snapshot_keys("snapshot['joints']", joints, like["joints"])
            out["joints"] = {key: _snapshot_value(f"snapshot['joints'][{key!r}]", joints[key], value)
                             for key, value in like["joints"].items()}
        return out

    def save_scene(self, path: str | os.PathLike) -> Path:
        """Write this world to a TOML scene file (docs/scenes.md) that ``tumble.load_scene`` reads back
        exactly: options, gravity, time, every body as it was made and its current state (x, q, v, w), its
        joints and springs; its attachments are made again on loading, so such a world comes back to rounding;
        its robots read from files (``add_urdf``, ``add_mjcf``) as ``[[robots]]`` with their q and q̇ (a robot
        built in code with ``add_robot`` has no file: ValueError, nothing written).

        Not saved: force callbacks (``add_force``; the file is written without them), loads applied for
        the next step, the contacts' warm start and the sleep state (a loaded scene starts awake and cold),
        the robots' controls (tau, gains, targets).
        The file is written atomically (temporary file, then rename). Returns the path.
        """
        from .user.scene import save_scene

        return save_scene(self, path)

    def state_to_array(self) -> np.ndarray:
        """Baraff's state vector Y = (x, q, P, L) per body, (13 n,) (Baraff I section 3). FloatingPointError,
        naming the body and the entry, where P = M v or L = I ω overflows float64."""
        live = self._live()
        y = np.empty(_state.STATE_SIZE * self._model.body.count)
        _state.bodies_to_array(live["mass"], live["inertia_body"], live["x"], live["q"], live["v"], live["w"], y)
        bad = np.flatnonzero(~np.isfinite(y))
        if bad.size:
            raise FloatingPointError(f"the state vector is not finite at {_state_entry(y, int(bad[0]))}: "
                                     f"the body's velocities times its mass or inertia overflow float64")
        return y

    def array_to_state(self, y: Any) -> None:
        """Set the bodies' state from Y (13 n,) (Baraff I section 3); quaternions are normalized and
        v = P/M, ω = I⁻¹ L recomputed. Fixed bodies stay at rest.

        Refused, naming ``y``, the body and the entry, before anything changes: an entry that is not finite, a
        quaternion shorter than QUAT_NORM_MIN (zero), or a momentum whose velocity overflows float64."""
        n = self._model.body.count
        y = _checks.array("y", y, (_state.STATE_SIZE * n,), finite=False)
        bad = np.flatnonzero(~np.isfinite(y))
        if bad.size:
            raise ValueError(f"y must be finite: {_state_entry(y, int(bad[0]))}")
        rows = y.reshape(n, _state.STATE_SIZE)
        rows[:, 3:7] = _nonzero_quaternions(rows)   # scaled by powers of two, exactly: q · q cannot overflow
        live = self._live()
        out = {key: np.empty_like(live[key]) for key in ("x", "q", "v", "w")}
        _state.array_to_bodies(live["inv_mass"], live["inv_inertia_body"], y, out["x"], out["q"], out["v"], out["w"])
        for key, what, (start, part) in (("v", "velocity", _STATE_PARTS[2]),
                                         ("w", "angular velocity", _STATE_PARTS[3])):
            bad = np.flatnonzero(~np.all(np.isfinite(out[key]), axis=1))
            if bad.size:
                i = int(bad[0])
                raise ValueError(f"y gives body {i} a non-finite {what} {out[key][i].tolist()} from its {part} "
                                 f"{rows[i, start:start + 3].tolist()}: beyond float64")
        for key, value in out.items():
            live[key][...] = value
        self._wake_all()

    def state_derivative(self, y: Any) -> np.ndarray:
        """dY/dt (13 n,) of Baraff I (2-43) under the loads accumulated now and gravity. The loads do not
        depend on time within a step, so ``lambda t, y: world.state_derivative(y)`` is a ``dydt`` for ``ode``."""
        y = _checks.array("y", y, (_state.STATE_SIZE * self._model.body.count,))
        _nonzero_quaternions(y.reshape(-1, _state.STATE_SIZE))    # a zero one would give NaN rates
        live = self._live()
        ydot = np.empty_like(y)
        _state.state_derivative(live["mass"], live["inv_mass"], live["inv_inertia_body"], live["force"],
                                live["torque"], self._model.gravity, y, ydot)
        return ydot

    # ------------------------------------------------------------------ contacts
    @property
    def contact_margin(self) -> float:
        """[m] distance below which separated pairs are reported as contacts (negative depth)."""
        return self._model.contact_margin

    def contacts(self) -> Contacts:
        """The contacts of the last step: detected at its start, with the impulses the step applied
        (``normal_impulse``, ``friction_impulse``, ``impulse``) and ``force`` = impulse / dt. With
        ``method="event"``: the resting contacts at the end of the last step and their forces (9-9).

        Before the first step (or after bodies were added) it runs the step's detection stage on the
        current state instead, with zero impulses and forces; the next step detects again.
        """
        if self.method == "event":
            return self._method.contacts()
        contacts = self._contacts
        if contacts.dt is None:
            self._method.detect(self._model, self._state, contacts, 0.0)
        return read_contacts(self._model, contacts.now, contacts.dt, contacts.substeps)

    def contact_buffer(self) -> Any:
        """The contact buffer (collision/contacts.py) holding the contacts of the current state as the last step
        left them, without the copy ``contacts()`` makes: the time-stepping methods' buffer of the step, the
        event method's last detection (every contact it found, resting or not)."""
        if self.method == "event":
            return self._method.final_buffer()
        return self._contacts.now

    def detect_contacts(self) -> Contacts:
        """Contacts of the current state, detected afresh without changing anything the world keeps
        (caches, the step's buffer): for probing states between steps. O(n log n), not coherent."""
        return detect_contacts(self._model, self._state)

    @property
    def collision_stats(self) -> dict[str, float]:
        """Figures of the last detection: candidate pairs, polytope pair tests, tests decided by the cached
        separating axis alone, broadphase swaps, pairs with no narrowphase test (always 0 now: every pair
        of shapes has one), and the wall time [s] of the AABB, broadphase and narrowphase stages."""
        return self._method.collision_stats

    @property
    def settings(self) -> ContactSettings:
        """The contact solver's settings (read only; give them to ``World``)."""
        return self._model.settings

    # ------------------------------------------------------------------ time
    def step(self, dt: float) -> None:
        """Advance the world by ``dt`` seconds (> 0): force callbacks, contact detection, velocity stage,
        contact solve, position stage (``step.py`` lists the stages).

        Raises:
            NonFiniteStep (a FloatingPointError): the step would have left a body's x, q, v or ω non-finite
                (a dt, load or stiffness beyond what the step can carry); it names the body, the field and the
                stage, and the world is as before the step (integration/guard.py; docs/integrators.md).
        """
        if not (isinstance(dt, float) and 0.0 < dt < math.inf):
            dt = _checks.positive("dt", dt)
        if not self._stepped:
            self._before_first_step()
        if self._sensors:
            self._sensors_before_step(dt)
        model = self._model
        if self._method.fast_step(model, self._state, dt, self._force_fns or self._attachments):
            if self._stats_stale:   # the last full step's figures are not this step's (no contacts, no solve)
                self.step_stats.values[:] = 0.0
                self._stats_stale = False
            return
        step(model, self._state, self._contacts, self._method, self.step_stats, dt, self._apply_forces)
        model.robots.loads_pending = False   # (the step's robot stages took them)
        self._stats_stale = True

    def _before_first_step(self) -> None:
        """The first step's parallel precompile (precompile.py), once per world."""
        if not self._stepped:
            self._stepped = True
            precompile_before_first_step(self._compile_shares)

    def _compile_shares(self) -> list[Any]:
        shares = getattr(self._method, "compile_shares", None)
        return [] if shares is None else shares(self._model, self._state, self._contacts)

    def precompile(self, processes: int | None = None, progress: bool = False) -> dict[str, Any]:
        """Compile the kernels this world's steps need now, in ``processes`` parallel processes (default: the
        usable cores), instead of one after the other during the first step (tumble/precompile.py). Changes
        nothing in the world. Needs ``os.fork`` (Linux); elsewhere the first step compiles as before.

        Returns {"shares": the groups of kernels compiled, "processes": how many processes compiled them,
        "seconds": wall time, "left": the groups left to compile at their first use (no fork here, or a
        process failed)}. ``progress``: a progress bar on stderr."""
        if processes is not None:
            processes = _checks.positive_int("processes", processes)
        return precompile(self._compile_shares(), processes, progress)

    # ------------------------------------------------------------------ queries (docs/queries.md)
    def _query_body(self, name: str, value: Any) -> int:
        """The row of ``value``, a live Body of this world or a body index in [0, body_count)."""
        if isinstance(value, Body):
            if value._world is not self or value._index < 0:
                raise ValueError(f"{name} must be a live body of this world, got {value!r}")
            return value._index
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
            raise TypeError(f"{name} must be a Body or a body index, got {_checks._show(value)}")
        if not 0 <= int(value) < self.body_count:
            raise ValueError(f"{name} must be a body index in [0, {self.body_count}), got {int(value)}")
        return int(value)

    def ray_cast(self, origins: Any, directions: Any, max_distance: Any = np.inf, mask: int | None = None,
                 ignore: Any = None) -> _ray.RayHits:
        """Cast rays at the world's shapes as they are now and return what each hits first (``RayHits``).

        Every shape type is hit exactly (closed forms; hulls by their face planes); a compound by its parts.
        A ray that starts inside a shape hits it at distance 0, at its origin, with the normal −direction
        (docs/queries.md). Nothing in the world changes.

        Args:
            origins: (3,) one ray's origin, or (n, 3) n rays' [m], world frame.
            directions: the same shape as origins, world frame; any non-zero length (normalized here).
            max_distance: [m] >= 0 (inf allowed), one for all rays or (n,) one per ray: hits farther along
                the ray are not reported.
            mask: None (every shape) or a 32-bit field: a ray hits a shape only if the shape's
                ``collision_group`` & mask is non-zero (the bit rule of ``add_body``'s collision filter).
                Bodies made with ``collide=False`` are never hit, as they never touch anything.
            ignore: None, or a Body (or index), or a collection of them: bodies the rays pass through.

        Returns:
            RayHits: body (n,) int, distance (n,) [m], point (n, 3) [m], normal (n, 3), world; for one ray
            given as (3,), 0-d body and distance and (3,) point and normal.
        """
        single = np.ndim(origins) == 1
        shape = (3,) if single else (None, 3)
        o = _checks.array("origins", origins, shape)
        d = _checks.array("directions", directions, shape)
        o, d = o.reshape(-1, 3), d.reshape(-1, 3)
        n = o.shape[0]
        if d.shape[0] != n:
            raise ValueError(f"directions must have as many rows as origins ({n}), got {d.shape[0]}")
        length = np.linalg.norm(d, axis=1)
        if np.any(length == 0.0):
            i = int(np.flatnonzero(length == 0.0)[0])
            where = "directions" if single else f"directions[{i}]"
            raise ValueError(f"{where} must be non-zero, got {d[i].tolist()}")
        if np.ndim(max_distance) == 0:
            limit = _checks.array("max_distance", max_distance, (), finite=False).reshape(1)
        else:
            limit = _checks.array("max_distance", max_distance, (n,), finite=False)
        if np.any(np.isnan(limit)) or np.any(limit < 0.0):
            i = int(np.flatnonzero(np.isnan(limit) | (limit < 0.0))[0])
            where = "max_distance" if limit.shape[0] == 1 and np.ndim(max_distance) == 0 else f"max_distance[{i}]"
            raise ValueError(f"{where} must be >= 0 [m] (inf for no limit), got {limit[i]}")
        limit = np.ascontiguousarray(np.broadcast_to(limit, (n,)))
        bits = 0xFFFFFFFF if mask is None else _checks.bits32("mask", mask)
        if ignore is None:
            skip: list[int] = []
        elif isinstance(ignore, (Body, int, np.integer)) and not isinstance(ignore, bool):
            skip = [self._query_body("ignore", ignore)]
        else:
            try:
                items = list(ignore)
            except TypeError:
                raise TypeError(f"ignore must be None, a Body, a body index or a collection of them, "
                                f"got {_checks._show(ignore)}") from None
            skip = [self._query_body(f"ignore[{k}]", item) for k, item in enumerate(items)]
        geom = self._model.geom
        ignored = np.zeros(self.body_count, dtype=bool)
        ignored[skip] = True
        geom_ok = (((geom.live("geom_group") & np.uint32(bits)) != 0)
                   & self._model.body.live("collide")[geom.live("geom_body")] & ~ignored[geom.live("geom_maker")])
        hits = _ray.cast(self._model, self._state, o, d / length[:, None], limit, np.ascontiguousarray(geom_ok))
        if single:
            return _ray.RayHits(hits.body[0], hits.distance[0], hits.point[0], hits.normal[0])
        return hits

    def distance(self, body_a: Any, body_b: Any) -> _distance.Distance:
        """Signed distance between two bodies as they are now (``Distance``; docs/queries.md).

        Args:
            body_a, body_b: two different bodies (Body handles or indices) with shapes, not both planes
                (grounds).

        Returns:
            Distance: distance [m] (the gap, or minus the penetration depth when they overlap), point_a and
            point_b (3,) [m] world (closest points, or each body's deepest point in the other), normal (3,)
            unit, world, from body_b toward body_a. Compounds: the least over their parts' pairs.
        """
        a = self._query_body("body_a", body_a)
        b = self._query_body("body_b", body_b)
        if a == b:
            raise ValueError(f"body_a and body_b must be different bodies, got body {a} twice")
        maker, types = self._model.geom.live("geom_maker"), self._model.geom.live("geom_type")
        for name, k in (("body_a", a), ("body_b", b)):
            if not np.any(maker == k):
                raise ValueError(f"{name} must have a shape, got body {k}, whose shapes are attached elsewhere")
        if (np.all(types[maker == a] == int(GeomType.PLANE)) and np.all(types[maker == b] == int(GeomType.PLANE))):
            raise ValueError(f"body_a and body_b are both planes (bodies {a} and {b}): two planes have no finite "
                             f"signed distance")
        return _distance.body_distance(self._model, self._state, a, b)

    def bodies_within(self, body: Any, distance: float) -> np.ndarray:
        """Indices of the bodies whose signed distance to ``body`` is at most ``distance`` [m] (negative:
        overlapping it by at least -distance), ascending, ``body`` itself left out; (k,) int64. Collision
        filters play no part (every shape counts). Broadphase boxes inflated by the distance pick the
        candidates; ``World.distance``'s exact test decides (docs/queries.md)."""
        k = self._query_body("body", body)
        limit = _checks.real("distance", distance)
        if not np.any(self._model.geom.live("geom_maker") == k):
            return np.zeros(0, dtype=np.int64)
        return _distance.bodies_within(self._model, self._state, k, limit)

    def _apply_forces(self) -> None:
        """The force callbacks, in the order added (the step's first stage)."""
        for fn in self._force_fns:
            fn(self, self._state.time)

    def simulate(self, duration: float, dt: float, *, record_every: int = 1, progress: bool = False,
                 record_contacts: bool = False, checkpoint: str | os.PathLike | None = None) -> Trajectory:
        """Step for ``duration`` seconds with steps of ``dt`` and record the state.

        Args:
            duration: simulated time [s] >= 0; must be a whole number of steps (to 1e-9 relative).
            dt: step [s] > 0.
            record_every: record every k-th step (the initial state and the last are always recorded).
            progress: show a progress bar (tqdm) on stderr.
            record_contacts: also record each recorded frame's contact points and normals (for the
                replay's contact display; memory grows with contacts × frames).
            checkpoint: an ``.npz`` path: the frames so far are saved there every few seconds of wall time
                and at the end, so an interrupted or killed run leaves a valid file.

        Returns:
            A ``Trajectory`` with times (T,), per-body arrays (T, n, ...), the per-frame contact figures and
            the geometry for ``to_html``.

        Raises:
            SimulationInterrupted (a KeyboardInterrupt) on Ctrl-C, carrying the frames recorded so far.
            NonFiniteStep: a step would have left a body non-finite (``step``); the world is as before it. The
                error carries the frames recorded before it as ``trajectory`` (saved to ``checkpoint`` first, when
                given) and the file as ``path``.
        """
        duration = _checks.non_negative("duration", duration)
        dt = _checks.positive("dt", dt)
        if not duration / dt <= MAX_STEPS:
            raise ValueError(f"duration / dt must be at most {MAX_STEPS:.0f} steps, got duration={duration!r}, "
                             f"dt={dt!r}")
        steps = round(duration / dt)
        if abs(steps * dt - duration) > 1e-9 * max(duration, dt):
            raise ValueError(f"duration must be a whole number of steps of dt={dt!r}, got duration={duration!r}")
        if isinstance(record_every, bool) or not isinstance(record_every, int) or record_every < 1:
            raise ValueError(f"record_every must be a positive integer, got {record_every!r}")
        if not isinstance(record_contacts, (bool, np.bool_)):
            raise TypeError(f"record_contacts must be True or False, got {record_contacts!r}")
        checkpoint_path(checkpoint)        # refused before anything compiles or steps
        check_recording(steps, record_every, self._model.body.count)
        self._before_first_step()   # before the progress bar, whose monitor thread would keep it from forking
        return record_simulation(self, steps, dt, record_every, bool(progress), record_contacts=bool(record_contacts),
                                 checkpoint=checkpoint)

    # ------------------------------------------------------------------ energy and momentum
    def _totals(self, point: np.ndarray) -> np.ndarray:
        a = self._live()
        out = np.empty(_energy.SIZE)
        _energy.energy_momentum(a["mass"], a["inv_mass"], a["inertia_body"], a["x"], a["q"], a["v"], a["w"],
                                self._model.gravity, point, out)
        return out

    def kinetic_energy(self) -> float:
        """Σ ½ M |v|² + ½ ωᵀ I ω [J] over all bodies (Baraff II (C-3))."""
        return float(self._totals(np.zeros(3))[_energy.KINETIC])

    def potential_energy(self) -> float:
        """Gravitational potential −Σ M g·x [J] of the moving bodies (zero at the world origin)."""
        return float(self._totals(np.zeros(3))[_energy.POTENTIAL])

    def energy(self) -> float:
        """Kinetic plus potential energy [J]."""
        t = self._totals(np.zeros(3))
        return float(t[_energy.KINETIC] + t[_energy.POTENTIAL])

    def linear_momentum(self) -> np.ndarray:
        """Σ P = Σ M v (3,) [kg m/s] (Baraff I (2-27))."""
        return self._totals(np.zeros(3))[_energy.MOMENTUM].copy()

    def angular_momentum(self, point: Any = (0.0, 0.0, 0.0)) -> np.ndarray:
        """Σ [(x − point) × M v + I ω] (3,) [kg m²/s] about a world ``point`` (Baraff I 2.9)."""
        return self._totals(_checks.vector3("point", point))[_energy.ANGULAR_MOMENTUM].copy()

    def __repr__(self) -> str:
        return (f"World(bodies={self._model.body.count}, time={self.time:g} s, gravity={self._model.gravity.tolist()}, "
                f"method={self.method!r}, integrator={self.integrator!r})")

