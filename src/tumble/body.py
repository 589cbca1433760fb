"""Body: a thin handle (world, index) whose properties read and write the World's arrays.

Getters return copies (changing them does not move the body); setters validate and write through: a value
that is not finite is refused, naming the argument, and the body is left as it was.
Loads applied with ``apply_force``/``apply_torque`` accumulate until the next step consumes them;
``apply_impulse`` changes the velocities at once (Baraff II (8-12)). A load or impulse whose sum would
overflow float64 is refused, all of it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import numpy as np

from . import _checks
from .rotations import quat_to_matrix

if TYPE_CHECKING:
    from .world import World

_FIELD_TEXT = {"force": "accumulated force [N]", "torque": "accumulated torque [N m]", "v": "velocity [m/s]",
               "w": "angular velocity [rad/s]"}
"""How a message names the body fields that loads and impulses add to."""


def _given(name: str, value: np.ndarray, point: Any) -> str:
    """'f = [1.0, 0.0, 0.0] at point = [0.0, 2.0, 0.0]' for a message (the point as given: it was checked)."""
    at = "" if point is None else f" at point = {np.asarray(point, dtype=float).tolist()}"
    return f"{name} = {value.tolist()}{at}"


class Body:
    """Handle to one rigid body of a ``World``. Obtain it from ``world.add_body`` or ``world.bodies``."""

    __slots__ = ("_world", "_index")

    def __init__(self, world: World, index: int) -> None:
        self._world = world
        self._index = index

    def _live_index(self) -> int:
        if self._index < 0:
            raise ValueError("this body was removed from its world (world.remove_body)")
        return self._index

    def _row(self, name: str) -> np.ndarray:
        return self._world._array(name)[self._live_index()]

    def _set(self, name: str, value: Any) -> None:
        """Write a scalar field of this body's row."""
        self._world._array(name)[self._live_index()] = value

    @property
    def world(self) -> World:
        """The world this body belongs to."""
        return self._world

    @property
    def index(self) -> int:
        """Row of this body in the world's arrays: its place in creation order among the bodies still in the
        world (it moves up by one when an earlier body is removed)."""
        return self._live_index()

    @property
    def name(self) -> str | None:
        """The name given at creation, or None."""
        return self._world._model.names[self._live_index()]

    # ------------------------------------------------------------------ state
    @property
    def position(self) -> np.ndarray:
        """COM position x (3,) [m], world frame."""
        return self._row("x").copy()

    @position.setter
    def position(self, value: Any) -> None:
        self._row("x")[:] = _checks.vector3("position", value)
        self._moved()

    @property
    def orientation(self) -> np.ndarray:
        """Unit quaternion q (4,) (w, x, y, z), body → world. A non-unit value set here is normalized."""
        return self._row("q").copy()

    @orientation.setter
    def orientation(self, value: Any) -> None:
        self._row("q")[:] = _checks.quaternion("orientation", value)
        self._moved()

    @property
    def velocity(self) -> np.ndarray:
        """COM velocity v (3,) [m/s], world frame."""
        return self._row("v").copy()

    @velocity.setter
    def velocity(self, value: Any) -> None:
        self._set_motion("velocity", "v", value)

    @property
    def angular_velocity(self) -> np.ndarray:
        """Angular velocity ω (3,) [rad/s], world frame."""
        return self._row("w").copy()

    @angular_velocity.setter
    def angular_velocity(self, value: Any) -> None:
        self._set_motion("angular_velocity", "w", value)

    def _set_motion(self, name: str, field: str, value: Any) -> None:
        vec = _checks.vector3(name, value)
        if self.fixed and np.any(vec):
            raise ValueError(f"{name} of a fixed body must stay zero, got {vec.tolist()}")
        self._row(field)[:] = vec
        if self.kinematic:
            self._moved()   # what rests on it must follow it
        elif np.any(vec):
            self._wake()

    def _moved(self) -> None:
        """A moved body wakes; a moved fixed or kinematic body wakes every body (some may rest on it)."""
        if self._row("inv_mass") == 0.0:
            self._world._wake_all()
        else:
            self._wake()

    def _wake(self) -> None:
        if not self._row("awake"):
            self._set("awake", True)
            self._world._state.sleeping -= 1
        self._set("sleep_timer", 0.0)

    @property
    def awake(self) -> bool:
        """False while the body sleeps (constraints/islands.py): the step leaves it where it is. Setting True
        wakes it; setting False puts it to sleep now with zero velocities, though its island wakes it again
        at the next step if any body in it is awake. Fixed and kinematic bodies are always awake. Moving the body,
        setting a velocity or applying a load wakes it."""
        return bool(self._row("awake"))

    @awake.setter
    def awake(self, value: bool) -> None:
        if not isinstance(value, (bool, np.bool_)):
            raise TypeError(f"awake must be True or False, got {value!r}")
        if value:
            self._wake()
            return
        if self._row("inv_mass") == 0.0:
            kind = "kinematic" if self.kinematic else "fixed"
            raise ValueError(f"awake of a {kind} body cannot be set to False: {kind} bodies do not sleep")
        if self._row("awake"):
            self._set("awake", False)
            self._world._state.sleeping += 1
        self._row("v")[:] = 0.0
        self._row("w")[:] = 0.0

    # ------------------------------------------------------------------ parameters
    @property
    def fixed(self) -> bool:
        """True for a fixed (static) body: zero inverse mass and inertia, and it never moves."""
        return bool(self._row("inv_mass") == 0.0) and not self.kinematic

    @property
    def kinematic(self) -> bool:
        """True for a kinematic body (``add_body(..., kinematic=True)``): it moves with the velocity and angular
        velocity set on it, as an infinite mass (zero inverse mass and inertia; ``mass`` reads 0, as the
        ground's); gravity, forces, springs, joints and contacts never change it."""
        return bool(self._row("kinematic"))

    @property
    def mass(self) -> float:
        """Mass M [kg]."""
        return float(self._row("mass"))

    @property
    def inv_mass(self) -> float:
        """1/M [1/kg]; zero for a fixed body."""
        return float(self._row("inv_mass"))

    @property
    def inertia_body(self) -> np.ndarray:
        """Ibody (3, 3) [kg m²] about the COM, body axes."""
        return self._row("inertia_body").copy()

    @property
    def rotation_matrix(self) -> np.ndarray:
        """R(q) (3, 3): body → world."""
        return quat_to_matrix(self._row("q"))

    @property
    def inertia_world(self) -> np.ndarray:
        """I = R Ibody Rᵀ (3, 3) [kg m²], world axes (Baraff I (2-39))."""
        R = self.rotation_matrix
        return R @ self._row("inertia_body") @ R.T

    @property
    def inv_inertia_world(self) -> np.ndarray:
        """I⁻¹ = R Ibody⁻¹ Rᵀ (3, 3) [1/(kg m²)]; zero for a fixed body."""
        R = self.rotation_matrix
        return R @ self._row("inv_inertia_body") @ R.T

    @property
    def friction(self) -> float:
        """Coulomb friction coefficient μ (a pair's is √(μ_a μ_b), docs/materials.md). Settable (>= 0, checked
        as ``add_body`` checks it); the body wakes, and its resting contacts take the new value."""
        return float(self._row("friction"))

    @friction.setter
    def friction(self, value: float) -> None:
        self._set_material("friction", value)

    @property
    def restitution(self) -> float:
        """Coefficient of restitution e (a pair's is max(e_a, e_b), docs/materials.md). Settable (in [0, 1],
        checked as ``add_body`` checks it); the body wakes."""
        return float(self._row("restitution"))

    @restitution.setter
    def restitution(self, value: float) -> None:
        self._set_material("restitution", value)

    @property
    def rolling_friction(self) -> float:
        """Rolling resistance μ_r [m]: a contact's rolling torque is bounded by μ_r f_n, with μ_r = √(a b) of the
        pair (docs/materials.md). Settable (>= 0; solver "pgs" only when non-zero); the body wakes."""
        return float(self._row("rolling_friction"))

    @rolling_friction.setter
    def rolling_friction(self, value: float) -> None:
        self._set_material("rolling_friction", value)

    @property
    def torsional_friction(self) -> float:
        """Torsional friction μ_s [m]: a contact's torque about its normal is bounded by μ_s f_n, with
        μ_s = √(a b) of the pair (docs/materials.md). Settable (>= 0; solver "pgs" only when non-zero)."""
        return float(self._row("torsional_friction"))

    @torsional_friction.setter
    def torsional_friction(self, value: float) -> None:
        self._set_material("torsional_friction", value)

    @property
    def contact_stiffness(self) -> float | None:
        """Hunt–Crossley stiffness k [N/m] per contact point, or None for a rigid contact (the default); a pair
        puts its sides in series, 1/k = 1/k_a + 1/k_b (docs/materials.md). Settable (> 0 or None)."""
        k = float(self._row("contact_stiffness"))
        return None if k == np.inf else k

    @contact_stiffness.setter
    def contact_stiffness(self, value: float | None) -> None:
        self._set_material("contact_stiffness", value)

    @property
    def contact_dissipation(self) -> float:
        """Hunt–Crossley dissipation d [s/m]: f_n = k x (1 + d ẋ) (docs/materials.md). Settable (>= 0)."""
        return float(self._row("contact_dissipation"))

    @contact_dissipation.setter
    def contact_dissipation(self, value: float) -> None:
        self._set_material("contact_dissipation", value)

    def _set_material(self, name: str, value: Any) -> None:
        """Set friction, restitution or a material extra, checked as ``add_body`` checks it (nothing changes when
        refused); the body wakes (a fixed one wakes every body), so that its resting contacts take the new
        material."""
        self._world._set_material(self._live_index(), name, value)
        self._moved()

    @property
    def linear_momentum(self) -> np.ndarray:
        """P = M v (3,) [kg m/s] (Baraff I (2-27))."""
        return self.mass * self._row("v")

    @property
    def angular_momentum(self) -> np.ndarray:
        """L = I ω (3,) [kg m²/s] about the COM, world frame (Baraff I 2.9)."""
        return self.inertia_world @ self._row("w")

    # ------------------------------------------------------------------ loads
    def _point_arm(self, point: Any) -> np.ndarray:
        if point is None:
            return np.zeros(3)
        point = _checks.vector3("point", point)
        with np.errstate(over="ignore", invalid="ignore"):
            arm = point - self._row("x")
        if not np.all(np.isfinite(arm)):
            raise ValueError(f"point = {point.tolist()} lies beyond float64 from body {self._index}'s centre "
                             f"{self._row('x').tolist()}")
        return arm

    def _add(self, given: str, changes: Callable[[], dict[str, np.ndarray]]) -> None:
        """Add to this body's rows, all or nothing: ``changes()`` gives {field: (3,) increment}; refused when an
        increment or a sum is not finite (float64 overflow), with ``given`` (the arguments and their values)."""
        with np.errstate(over="ignore", invalid="ignore"):
            sums = {field: self._row(field) + delta for field, delta in changes().items()}
        for field, total in sums.items():
            if not np.all(np.isfinite(total)):
                raise ValueError(f"{given} would make the {_FIELD_TEXT[field]} of body {self._index} "
                                 f"{total.tolist()}: beyond float64")
        for field, total in sums.items():
            self._row(field)[:] = total

    def apply_force(self, f: Any, point: Any = None) -> None:
        """Add a world-frame force f (3,) [N] at a world point (the COM if None) for the next step.
        The torque about the COM is (point − x) × f (Baraff I (2-21)). On a robot link's body the load acts on the
        robot, as the generalized force Jᵀ (torque, force) through the link's Jacobian at its COM
        (docs/robots.md)."""
        f = _checks.vector3("f", f)
        arm = self._point_arm(point)
        self._add(_given("f", f, point), lambda: {"force": f, "torque": np.cross(arm, f)})
        if np.any(f) and not self.fixed:
            self._wake()
            self._world._link_loaded(self)

    def apply_torque(self, tau: Any) -> None:
        """Add a world-frame torque τ (3,) [N m] for the next step."""
        tau = _checks.vector3("tau", tau)
        self._add(_given("tau", tau, None), lambda: {"torque": tau})
        if np.any(tau) and not self.fixed:
            self._wake()
            self._world._link_loaded(self)

    def apply_impulse(self, j: Any, point: Any = None) -> None:
        """Apply a world-frame impulse j (3,) [N s] at a world point (the COM if None), now:
        Δv = j / M, Δω = I⁻¹ ((point − x) × j) (Baraff II (8-12)). No effect on a fixed body. A robot link's body
        takes none (ValueError: its motion is its robot's; ``apply_force`` acts on the robot through the link), nor
        does a kinematic body (ValueError: it moves as its velocity is set)."""
        j = _checks.vector3("j", j)
        if self.kinematic:
            raise ValueError(f"a kinematic body takes no impulse: it moves with the velocity set on it (set "
                             f"body.velocity and body.angular_velocity instead); got j={j.tolist()} on {self!r}")
        self._world._refuse_link("body", self, "given an impulse (its velocity is its robot's; apply_force acts on "
                                               "the robot through the link)")
        arm = self._point_arm(point)
        self._add(_given("j", j, point),
                  lambda: {"v": self.inv_mass * j, "w": self.inv_inertia_world @ np.cross(arm, j)})
        if np.any(j) and not self.fixed:
            self._wake()

    def clear_loads(self) -> None:
        """Discard the force and torque accumulated for the next step."""
        self._row("force")[:] = 0.0
        self._row("torque")[:] = 0.0

    # ------------------------------------------------------------------ kinematics
    def point_velocity(self, p: Any) -> np.ndarray:
        """Velocity (3,) [m/s] of the body point at world position p: v + ω × (p − x) (Baraff I (2-17))."""
        return self._row("v") + np.cross(self._row("w"), _checks.vector3("p", p) - self._row("x"))

    def linear_acceleration(self) -> np.ndarray:
        """v̇ (3,) [m/s²] = F/M + g under the loads accumulated now (Baraff I (2-30))."""
        return self.inv_mass * self._row("force") + (0.0 if self.inv_mass == 0.0 else 1.0) * self._world._model.gravity

    def angular_acceleration(self) -> np.ndarray:
        """ω̇ (3,) [rad/s²] = I⁻¹ (τ + L × ω) under the torque accumulated now (Baraff II (C-10))."""
        L = self.angular_momentum
        return self.inv_inertia_world @ (self._row("torque") + np.cross(L, self._row("w")))

    def point_acceleration(self, p: Any) -> np.ndarray:
        """Acceleration (3,) [m/s²] of the body point at world p under the loads accumulated now:
        v̇ + ω̇ × r + ω × (ω × r), r = p − x (Baraff II (C-12))."""
        r = _checks.vector3("p", p) - self._row("x")
        w = self._row("w")
        return self.linear_acceleration() + np.cross(self.angular_acceleration(), r) + np.cross(w, np.cross(w, r))

    def kinetic_energy(self) -> float:
        """½ M |v|² + ½ ωᵀ I ω [J] (Baraff II (C-3))."""
        v, w = self._row("v"), self._row("w")
        return float(0.5 * self.mass * (v @ v) + 0.5 * (w @ self.inertia_world @ w))

    def __repr__(self) -> str:
        label = f"{self.name!r}, " if self.name is not None else ""
        return f"Body({label}index={self._index}, position={self._row('x').tolist()})"

    def __eq__(self, other: object) -> bool:
        return other is self or (isinstance(other, Body) and other._world is self._world
                                 and other._index == self._index >= 0)

    def __hash__(self) -> int:
        # The world hands out one handle per body, so identity names the body; the index would not do as a
        # hash: it changes when an earlier body is removed, and a handle kept in a set would be lost.
        return id(self)
