"""Sensors (API.md, "sensors"; docs/sensors.md): an IMU, a contact-force sensor and a joint force–torque sensor.

A sensor is made with what it measures (``Imu(body)``, ``ContactForce(body, other)``, ``ForceTorque(robot,
joint_name)`` or ``ForceTorque(joint)``) and bound to a world by ``World.add_sensor``, which names it.
``read()`` gives the reading of the current state at any time; ``simulate()`` records ``values()`` — the same
reading as one flat (k,) row — at every recorded frame into ``Trajectory.sensors[name]`` (T, k).

The readings come from the world's public API (body and link states, ``World.contacts()``, the joints'
``force``/``torque``). What a reading needs of the last step's start (the IMU's point velocity, the links'
velocities under a force–torque sensor) the world hands to ``before_step`` at the start of each step: a
Python call per sensor, none per body (sensors are few).

Optional noise: each reading adds ``bias`` (constant) and Gaussian noise of standard deviation ``noise`` per
component, drawn from the sensor's own generator (``numpy.random.default_rng(seed)``); both off by default.
"""

from __future__ import annotations

import re
from abc import ABC, abstractmethod
from typing import TYPE_CHECKING, Any

import numpy as np

from . import _checks
from .body import Body
from .joints import Joint
from .rotations import quat_mul, quat_to_matrix

if TYPE_CHECKING:
    from .robots.robot import Robot
    from .world import World

NAME_PATTERN = re.compile(r"[A-Za-z0-9_.\-/]+")
"""What a sensor's name may hold: letters, digits, ``_ . - /`` (it heads CSV columns and scene tables)."""


def check_name(name: Any) -> str:
    """A sensor name as given: a non-empty string of ``NAME_PATTERN``'s characters (TypeError / ValueError)."""
    if not isinstance(name, str):
        raise TypeError(f"name must be a string or None, got {name!r}")
    if not NAME_PATTERN.fullmatch(name):
        raise ValueError(f"name must be non-empty and made of letters, digits, '_', '.', '-' and '/', got {name!r}")
    return name


class Sensor(ABC):
    """What every sensor has: its noise model and its binding to a world. Not made directly: use ``Imu``,
    ``ContactForce`` or ``ForceTorque``.

    Args (of every sensor):
        noise: standard deviation of the Gaussian noise added to each component of a reading, in the reading's
            units: one number >= 0 for all k components, or k of them; None or 0: no noise.
        bias: a constant added to each reading: one number or k of them; None: none.
        seed: the seed of the sensor's noise generator (an integer >= 0; None: fresh entropy). The same seed
            gives the same sequence of readings from the same states.
    """

    kind: str = ""
    """The type name scene files use ("imu", "contact_force", "force_torque")."""
    labels: tuple[str, ...] = ()
    """What each of the k components of ``values()`` is (the CSV columns' suffixes)."""

    def __init__(self, noise: Any = None, bias: Any = None, seed: int | None = None) -> None:
        k = len(self.labels)
        self.noise = self._per_component("noise", noise, k, non_negative=True)
        """(k,) standard deviation of each component's Gaussian noise, in the reading's units."""
        self.bias = self._per_component("bias", bias, k, non_negative=False)
        """(k,) constant added to each component, in the reading's units."""
        if seed is not None and (isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0):
            raise ValueError(f"seed must be an integer >= 0 or None, got {seed!r}")
        self.seed = None if seed is None else int(seed)
        """The seed of the noise generator, or None."""
        self._rng = np.random.default_rng(self.seed)
        self._world: World | None = None
        self.name: str | None = None
        """The name the world gave the sensor (``World.add_sensor``); None while unbound."""

    @staticmethod
    def _per_component(name: str, value: Any, k: int, non_negative: bool) -> np.ndarray:
        if value is None:
            return np.zeros(k)
        arr = np.asarray(value, dtype=float) if not isinstance(value, (str, bytes)) else None
        if arr is None or arr.ndim > 1 or (arr.ndim == 1 and arr.shape[0] != k):
            raise ValueError(f"{name} must be one number or {k} numbers (one per component), got {value!r}")
        if not np.all(np.isfinite(arr)):
            raise ValueError(f"{name} must be finite, got {value!r}")
        if non_negative and np.any(arr < 0.0):
            raise ValueError(f"{name} must be >= 0 (a standard deviation), got {value!r}")
        return np.broadcast_to(arr, (k,)).copy()

    @property
    def width(self) -> int:
        """k: the number of components of ``values()`` (Imu 6, ContactForce 3, ForceTorque 6)."""
        return len(self.labels)

    @property
    def world(self) -> World:
        """The world the sensor is bound to (ValueError when it is not, or was removed)."""
        if self._world is None:
            raise ValueError(f"{self!r} is not in a world (world.add_sensor) or was removed")
        return self._world

    def bind(self, world: World, name: str) -> None:
        """Bind to ``world`` under ``name`` (``World.add_sensor`` calls it after its checks); the reading's
        state of the last step starts empty (as before any step)."""
        self.check_world(world)
        self._world, self.name = world, name
        self.reset()

    def unbind(self) -> None:
        """Forget the world (``World.remove_sensor``)."""
        self._world, self.name = None, None

    @abstractmethod
    def check_world(self, world: World) -> None:
        """Raise ValueError if what the sensor measures is not in ``world``."""

    @abstractmethod
    def reset(self) -> None:
        """Forget the last step (the reading is then that of a state at rest in its frame of the last step)."""

    @abstractmethod
    def before_step(self, dt: float) -> None:
        """Keep what the reading needs of the step of ``dt`` [s] about to start (``World.step`` calls it)."""

    @abstractmethod
    def measure(self) -> np.ndarray:
        """(k,) the exact reading of the current state, without noise or bias."""

    def values(self) -> np.ndarray:
        """(k,) the reading as one row: ``measure()`` plus ``bias`` plus noise (what ``simulate`` records)."""
        out = self.measure() + self.bias
        if np.any(self.noise > 0.0):
            out = out + self.noise * self._rng.standard_normal(out.shape[0])
        return out

    def read(self) -> Any:
        """The reading (see the sensor's class): ``values()`` split as the sensor gives it."""
        return self.values()

    def spec(self) -> dict[str, Any]:
        """The arguments the sensor was made with, as plain values (what a scene file's ``[[sensors]]`` table
        holds, bodies and robots as handles): for ``save_scene``."""
        out: dict[str, Any] = {}
        if np.any(self.noise != 0.0):
            out["noise"] = _plain_components(self.noise)
        if np.any(self.bias != 0.0):
            out["bias"] = _plain_components(self.bias)
        if self.seed is not None:
            out["seed"] = self.seed
        return out

    def __repr__(self) -> str:
        return f"{type(self).__name__}(name={self.name!r})"


def _plain_components(arr: np.ndarray) -> float | list[float]:
    return float(arr[0]) if np.all(arr == arr[0]) else [float(c) for c in arr]


def _live_body(name: str, body: Any) -> Body:
    if not isinstance(body, Body):
        raise TypeError(f"{name} must be a Body handle, got {body!r}")
    body.index   # noqa: B018  (raises ValueError for a removed body)
    return body


def _check_body_world(name: str, body: Body, world: World) -> None:
    if body.world is not world:
        raise ValueError(f"{name} must be a body of this world, got {body!r} of another world")
    body.index   # noqa: B018


class Imu(Sensor):
    """An inertial measurement unit fixed to a body: accelerometer and gyroscope.

    Args:
        body: the Body it is fixed to.
        position: (3,) [m] the sensor's point in the body's frame (from its COM, the body frame's origin).
        orientation: (4,) unit quaternion (w, x, y, z), sensor frame → body frame (normalized if not unit).
        noise, bias, seed: see ``Sensor``; 6 components: acc (x, y, z) [m/s²] then gyro (x, y, z) [rad/s].

    ``read()`` → (acc (3,), gyro (3,)), sensor frame:

    - acc = R_sᵀ (a_p − g) [m/s²], the specific force: R_s = R(q_body) R(orientation), g the world's gravity,
      a_p = (v_p − v_p⁻) / dt the mean acceleration of the sensor's point over the last step, from its
      velocity v_p = v + ω × (R(q_body) position) at the step's end and v_p⁻ at its start (this includes the
      centripetal and tangential terms). Before any step a_p = 0: a body at rest reads −g in the sensor
      frame, (0, 0, +9.81) upright.
    - gyro = R_sᵀ ω [rad/s].
    """

    kind = "imu"
    labels = ("acc_x", "acc_y", "acc_z", "gyro_x", "gyro_y", "gyro_z")

    def __init__(self, body: Body, position: Any = (0.0, 0.0, 0.0), orientation: Any = (1.0, 0.0, 0.0, 0.0), *,
                 noise: Any = None, bias: Any = None, seed: int | None = None) -> None:
        self.body = _live_body("body", body)
        """The Body the IMU is fixed to."""
        self.position = _checks.vector3("position", position)
        """(3,) [m] the sensor point in the body's frame."""
        self.orientation = _checks.quaternion("orientation", orientation)
        """(4,) unit quaternion, sensor → body."""
        super().__init__(noise, bias, seed)
        # the body's (q, v, ω) rows at the start of the last step and of the one before, each with that step's
        # start time and dt: copied as they are by ``before_step`` (the per-step cost), the point velocities
        # computed only when the sensor is read
        self._start: tuple[float, float, np.ndarray] | None = None
        self._prev: tuple[float, float, np.ndarray] | None = None

    def check_world(self, world: World) -> None:
        _check_body_world("body", self.body, world)

    def reset(self) -> None:
        self._start, self._prev = None, None

    def _point_velocity(self, qvw: np.ndarray) -> np.ndarray:
        """v_p = v + ω × R(q) r (3,) [m/s], world frame, of the body state ``qvw`` (10,) = (q, v, ω)."""
        return qvw[4:7] + np.cross(qvw[7:], quat_to_matrix(qvw[:4]) @ self.position)

    def _state(self) -> np.ndarray:
        """The body's (q, v, ω) now, (10,)."""
        st = self.world.state.bodies()
        i = self.body.index
        return np.concatenate([st.q[i], st.v[i], st.w[i]])

    def _acceleration(self) -> np.ndarray:
        """a_p (3,) [m/s²] of the last completed step, world frame: (v_p at its end − v_p at its start) / dt. When
        no step has run since the last ``before_step`` (the step was undone), the step before it; none yet: 0."""
        if self._start is None:
            return np.zeros(3)
        t0, dt, start = self._start
        if self.world.time != t0:
            return (self._point_velocity(self._state()) - self._point_velocity(start)) / dt
        if self._prev is None:
            return np.zeros(3)
        _, dt_prev, prev = self._prev
        return (self._point_velocity(start) - self._point_velocity(prev)) / dt_prev

    def before_step(self, dt: float) -> None:
        """Keep the body's (q, v, ω) rows as the step of ``dt`` [s] starts: three small copies, nothing computed
        (the sensor's whole cost in a step; a step of a 100-body pile takes ~0.5 ms)."""
        st = self.world.state.bodies()
        i = self.body._index
        row = np.empty(10)
        row[:4], row[4:7], row[7:] = st.q[i], st.v[i], st.w[i]
        time = self.world.time
        if self._start is not None and time == self._start[0]:
            self._start = (time, dt, row)   # the step that started here was undone: this one replaces it
        else:
            self._prev, self._start = self._start, (time, dt, row)

    def measure(self) -> np.ndarray:
        self.world   # noqa: B018  (refuses an unbound sensor)
        body = self.body
        Rs = quat_to_matrix(quat_mul(body.orientation, self.orientation))
        acc = Rs.T @ (self._acceleration() - self.world.gravity)
        gyro = Rs.T @ body.angular_velocity
        return np.concatenate([acc, gyro])

    def read(self) -> tuple[np.ndarray, np.ndarray]:
        """(acc (3,) [m/s²], gyro (3,) [rad/s]) in the sensor frame (class docstring)."""
        v = self.values()
        return v[:3], v[3:]

    def spec(self) -> dict[str, Any]:
        return {"body": self.body, "position": self.position.tolist(), "orientation": self.orientation.tolist(),
                **super().spec()}

    def __repr__(self) -> str:
        return f"Imu(name={self.name!r}, body={self.body!r})"


class ContactForce(Sensor):
    """The total contact force on a body over the last step.

    Args:
        body: the Body whose contact force is read.
        other: a Body: only the contacts between ``body`` and ``other`` count; None: all of ``body``'s.
        noise, bias, seed: see ``Sensor``; 3 components (x, y, z) [N].

    ``read()`` → (3,) [N], world frame: Σ ±force over the contacts of ``World.contacts()`` that involve
    ``body`` (and ``other``), + where ``body`` is A and − where it is B (a contact's force acts on A, its
    opposite on B; Baraff II 8): the mean contact force of the last step (impulse / dt; with
    ``method="event"`` the resting contact forces). Zero before the first step.
    """

    kind = "contact_force"
    labels = ("fx", "fy", "fz")

    def __init__(self, body: Body, other: Body | None = None, *, noise: Any = None, bias: Any = None,
                 seed: int | None = None) -> None:
        self.body = _live_body("body", body)
        """The Body whose contact force is read."""
        self.other = None if other is None else _live_body("other", other)
        """The only other body whose contacts count, or None for all."""
        if self.other is self.body:
            raise ValueError(f"other must be a body other than body, got {other!r} twice")
        super().__init__(noise, bias, seed)

    def check_world(self, world: World) -> None:
        _check_body_world("body", self.body, world)
        if self.other is not None:
            _check_body_world("other", self.other, world)

    def reset(self) -> None:
        """Nothing is kept between steps: the contacts are read when the sensor is."""

    def before_step(self, dt: float) -> None:
        """Nothing to keep: ``World.contacts()`` holds the last step's forces."""

    def measure(self) -> np.ndarray:
        contacts = self.world.contacts()
        i = self.body.index
        on_a, on_b = contacts.body_a == i, contacts.body_b == i
        if self.other is not None:
            j = self.other.index
            on_a &= contacts.body_b == j
            on_b &= contacts.body_a == j
        force = contacts.force
        return force[on_a].sum(axis=0) - force[on_b].sum(axis=0)

    def read(self) -> np.ndarray:
        """(3,) [N] world frame: the contact force on ``body`` (class docstring)."""
        return self.values()

    def spec(self) -> dict[str, Any]:
        out: dict[str, Any] = {"body": self.body}
        if self.other is not None:
            out["other"] = self.other
        return {**out, **super().spec()}

    def __repr__(self) -> str:
        return f"ContactForce(name={self.name!r}, body={self.body!r}, other={self.other!r})"


class ForceTorque(Sensor):
    """A six-axis force–torque sensor in a joint: the wrench the parent exerts on the child through it.

    Args:
        source: a ``Robot`` (then ``joint_name`` names one of its joints) or a World ``Joint`` (``BallJoint``,
            ``HingeJoint``, ``SliderJoint``, ``FixedJoint``; ``joint_name`` None).
        joint_name: the robot joint's name (``robot.joint_names``, fixed joints included).
        noise, bias, seed: see ``Sensor``; 6 components: force (x, y, z) [N] then torque (x, y, z) [N m].

    ``read()`` → (force (3,) [N], torque (3,) [N m] about the joint's origin), in the joint's child frame.

    - Robot joint: the child frame is the child link's frame (URDF: the moved joint frame), the torque is about
      its origin p. By Newton–Euler on the subtree S below the joint (Featherstone's RNEA backward pass,
      Table 5.1, f_i = f_i^B − f_i^x + Σ f_children, summed in the world frame):
      F = Σ_{k∈S} m_k (a_k − g) − Σ f_c, τ = Σ_{k∈S} [(c_k − p) × m_k (a_k − g) + I_k α_k + ω_k × I_k ω_k]
      − Σ (x_c − p) × f_c, with a_k, α_k the COM and angular accelerations of link k over the last step
      ((v − v⁻)/dt, (ω − ω⁻)/dt), c_k its COM, I_k its inertia in world axes, and f_c at x_c the contact
      forces on the subtree's link bodies (``World.contacts()``). The actuation (τ, PD motor, damping, springs)
      and the joint's constraint wrench are both in it. Before any step the accelerations are zero (a robot at
      rest reads the subtree's static load).
    - World joint: the joint's ``force`` and ``torque`` (on body a, the child; b or the world is the parent;
      torque about the anchor) rotated into the joint frame on a: R(q_a ⊗ frame_a)ᵀ.
    """

    kind = "force_torque"
    labels = ("fx", "fy", "fz", "tx", "ty", "tz")

    def __init__(self, source: Robot | Joint, joint_name: str | None = None, *, noise: Any = None,
                 bias: Any = None, seed: int | None = None) -> None:
        from .robots.robot import Robot

        self.robot: Robot | None = None
        """The robot whose joint is measured, or None for a World joint."""
        self.joint: Joint | None = None
        """The World joint measured, or None for a robot joint."""
        self.joint_name: str | None = None
        """The robot joint's name, or None for a World joint."""
        if isinstance(source, Joint):
            if joint_name is not None:
                raise ValueError(f"joint_name must be None for a World joint, got {joint_name!r}")
            self.joint = source
        elif isinstance(source, Robot):
            if not isinstance(joint_name, str):
                raise TypeError(f"joint_name must be the name of one of robot {source.name!r}'s joints, "
                                f"got {joint_name!r}")
            names = [j.name for j in source.description.joints]
            if joint_name not in names:
                raise ValueError(f"joint_name: robot {source.name!r} has no joint {joint_name!r}; its joints: "
                                 f"{names}")
            self.robot, self.joint_name = source, joint_name
            self._child = names.index(joint_name) + 1   # the link the joint moves (Robot.joint_of)
            self._subtree = self._links_below(source, self._child)
        else:
            raise TypeError(f"source must be a Robot (with joint_name) or a World joint, got {source!r}")
        super().__init__(noise, bias, seed)
        self._start: tuple[float, float, np.ndarray, np.ndarray] | None = None   # (time, dt, v⁻ (s, 3), ω⁻ (s, 3))
        self._last: tuple[np.ndarray, np.ndarray] | None = None   # (a, α) of the last completed step

    @staticmethod
    def _links_below(robot: Robot, child: int) -> list[int]:
        """The link indices of the subtree whose root is link ``child`` (itself first)."""
        index = {name: i for i, name in enumerate(robot.link_names)}
        parent = {index[j.child]: index[j.parent] for j in robot.description.joints}
        out = [child]
        for i in range(len(robot.link_names)):   # links come parents first (tree order)
            if i in parent and parent[i] in out and i not in out:
                out.append(i)
        return out

    def check_world(self, world: World) -> None:
        owned = world.robots if self.robot is not None else world.joints
        if not any(item is (self.robot if self.robot is not None else self.joint) for item in owned):
            raise ValueError(f"source must be a robot or joint of this world, got {self!r}")

    def reset(self) -> None:
        self._start, self._last = None, None

    def _link_motion(self) -> tuple[np.ndarray, np.ndarray]:
        """(v (s, 3) COM velocities [m/s], ω (s, 3) [rad/s]) of the subtree's links, world frame."""
        links = self.robot.links
        v = np.array([links[k].velocity for k in self._subtree])
        w = np.array([links[k].angular_velocity for k in self._subtree])
        return v, w

    def _accelerations(self) -> tuple[np.ndarray, np.ndarray]:
        """(a (s, 3), α (s, 3)) of the subtree's links over the last step, world frame (zero before any)."""
        if self._start is None or self.world.time == self._start[0]:
            if self._last is None:
                zero = np.zeros((len(self._subtree), 3))
                return zero, zero
            return self._last
        _, dt, v0, w0 = self._start
        v, w = self._link_motion()
        return (v - v0) / dt, (w - w0) / dt

    def before_step(self, dt: float) -> None:
        if self.robot is None:
            return
        self._last = self._accelerations()
        self._start = (self.world.time, dt, *self._link_motion())

    def measure(self) -> np.ndarray:
        world = self.world
        if self.joint is not None:
            joint = self.joint
            Rf = quat_to_matrix(quat_mul(joint.a.orientation, joint.frames[0][3:]))
            return np.concatenate([Rf.T @ joint.force, Rf.T @ joint.torque])
        robot = self.robot
        links = robot.links
        specs = robot.description.links
        accel, alpha = self._accelerations()
        g = world.gravity
        child = links[self._child]
        p, Rc = child.position, child.rotation
        force, torque = np.zeros(3), np.zeros(3)
        bodies = set()
        for s, k in enumerate(self._subtree):
            link = links[k]
            R = link.rotation
            inertia = R @ specs[k].inertia @ R.T
            w = link.angular_velocity
            f = link.mass * (accel[s] - g)
            force += f
            torque += np.cross(link.com - p, f) + inertia @ alpha[s] + np.cross(w, inertia @ w)
            body = link.body
            if body is not None:
                bodies.add(body.index)
        if bodies:
            contacts = world.contacts()
            on_a = np.isin(contacts.body_a, list(bodies))
            on_b = np.isin(contacts.body_b, list(bodies))
            sign = on_a.astype(float) - on_b.astype(float)   # a contact inside the subtree cancels
            fc = contacts.force * sign[:, None]
            force -= fc.sum(axis=0)
            torque -= np.cross(contacts.point - p, fc).sum(axis=0)
        return np.concatenate([Rc.T @ force, Rc.T @ torque])

    def read(self) -> tuple[np.ndarray, np.ndarray]:
        """(force (3,) [N], torque (3,) [N m]) in the joint's child frame (class docstring)."""
        v = self.values()
        return v[:3], v[3:]

    def spec(self) -> dict[str, Any]:
        out: dict[str, Any] = ({"robot": self.robot, "joint": self.joint_name} if self.robot is not None
                               else {"joint": self.joint})
        return {**out, **super().spec()}

    def __repr__(self) -> str:
        what = f"joint={self.joint!r}" if self.joint is not None else \
            f"robot={self.robot.name!r}, joint={self.joint_name!r}"
        return f"ForceTorque(name={self.name!r}, {what})"


SENSOR_TYPES: dict[str, type[Sensor]] = {"imu": Imu, "contact_force": ContactForce, "force_torque": ForceTorque}
"""The sensor classes by the type name scene files use."""

__all__ = ["ContactForce", "ForceTorque", "Imu", "NAME_PATTERN", "SENSOR_TYPES", "Sensor", "check_name"]
