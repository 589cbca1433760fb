"""Joints: bilateral constraints between two bodies, or a body and the world (docs/joints.md).

``BallJoint``, ``HingeJoint``, ``SliderJoint`` and ``FixedJoint`` are made with world coordinates at
creation (API.md: the anchor and axis are given in the world and stored in each body's axes when the joint
is added) and become rows in the time-stepping solver (constraints/joint_rows.py, solvers/joint_solve.py).
After ``world.add_joint(joint)`` the object is a live handle: ``force``, ``torque``, ``angle`` or
``position``, ``error``, ``broken``.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

import numpy as np

from . import _checks
from .body import Body
from .constraints.joint_rows import BALL, FIXED, HINGE, JOINT_NAMES, SLIDER
from .rotations import matrix_to_quat, matrix_to_rpy, quat_conj, quat_mul, quat_rotate, quat_to_matrix

if TYPE_CHECKING:
    from .world import World


def _frame_from_axis(axis: np.ndarray) -> np.ndarray:
    """A unit quaternion (w, x, y, z) whose frame's x axis is the unit vector ``axis``."""
    x = axis / np.linalg.norm(axis)
    helper = np.array([0.0, 0.0, 1.0]) if abs(x[2]) < 0.9 else np.array([1.0, 0.0, 0.0])
    y = np.cross(helper, x)
    y /= np.linalg.norm(y)
    z = np.cross(x, y)
    return matrix_to_quat(np.column_stack([x, y, z]))


def _pair(name: str, pair: Any, bound: float, open_bound: bool) -> tuple[float, float]:
    """A checked (lo, hi) with lo <= hi inside [−bound, bound] (open when ``open_bound``)."""
    if isinstance(pair, (str, bytes)) or not hasattr(pair, "__len__") or len(pair) != 2:
        raise TypeError(f"{name} must be (lo, hi) or None, got {pair!r}")
    lo, hi = _checks.real(f"{name}[0]", pair[0]), _checks.real(f"{name}[1]", pair[1])
    if lo > hi:
        raise ValueError(f"{name} must have lo <= hi, got {pair!r}")
    if lo < -bound or hi > bound or (open_bound and max(-lo, hi) >= bound):
        raise ValueError(f"{name} must lie within {'(' if open_bound else '['}-{bound:.6g}, {bound:.6g}"
                         f"{')' if open_bound else ']'} rad, got {pair!r}")
    return lo, hi


class Joint:
    """What every joint has. Not made directly: use one of the four kinds."""

    kind: int = BALL

    def __init__(self, a: Body, b: Body | None, anchor: Any, axis: Any = None, *, limits: Any = None,
                 motor: Any = None, compliance: float = 0.0, damping: float = 0.0,
                 break_force: float = math.inf, collide: bool = False, name: str | None = None) -> None:
        if not isinstance(a, Body):
            raise TypeError(f"a must be a Body handle, got {a!r}")
        if b is not None and not isinstance(b, Body):
            raise TypeError(f"b must be a Body handle or None (the world), got {b!r}")
        if b is not None and b._world is not a._world:
            raise ValueError(f"b must be a body of a's world, got {b!r} from another world")
        if b is a:
            raise ValueError(f"a joint needs two different bodies, got a = b = {a!r}")
        a._live_index()
        if b is not None:
            b._live_index()
        self.a = a
        """The first body."""
        self.b = b
        """The second body, or None for the world."""
        self.anchor = _checks.vector3("anchor", anchor)
        """[m] the joint point in the world at creation."""
        if axis is not None:
            axis = _checks.vector3("axis", axis)
            norm = float(np.linalg.norm(axis))
            if norm < 1e-12:
                raise ValueError(f"axis must be a non-zero vector, got {axis.tolist()}")
            axis = axis / norm
        self.axis = axis
        """Unit axis (3,) in the world at creation (hinge and slider), else None."""
        self._world: World | None = None
        self._index = -1
        self._closure = False   # a loop closure: a robot link's body on a side (World.add_joint)
        self._robot: str | None = None   # the robot whose description made it (robots/build.py), else None
        self.limits = limits
        self.motor = motor
        self._compliance = self._damping = 0.0
        self.compliance = compliance
        self.damping = damping
        self.break_force = break_force
        if not isinstance(collide, (bool, np.bool_)):
            raise TypeError(f"collide must be True or False, got {collide!r}")
        self.collide = bool(collide)
        """Whether the two bodies' shapes still collide with each other (default False: a joint's bodies
        usually overlap at the joint, and their contacts would fight it; Box2D's collideConnected)."""
        if name is not None and not isinstance(name, str):
            raise TypeError(f"name must be a string or None, got {name!r}")
        self.name = name

    # ------------------------------------------------------------------ binding
    def _local_frames(self) -> tuple[np.ndarray, np.ndarray]:
        """(frame_a, frame_b) (7,) each: anchor and joint-frame quaternion in each body's axes (the world's
        for b = None), from the world-coordinate anchor and axis and the bodies' poses now."""
        axis = self.axis if self.axis is not None else np.array([1.0, 0.0, 0.0])
        frame = _frame_from_axis(axis)
        out = []
        for body in (self.a, self.b):
            if body is None:
                out.append(np.concatenate([self.anchor, frame]))
                continue
            x, q = body.position, body.orientation
            qc = quat_conj(q)
            out.append(np.concatenate([quat_rotate(qc, self.anchor - x), quat_mul(qc, frame)]))
        return out[0], out[1]

    # ------------------------------------------------------------------ parameters changed in a world
    @property
    def limits(self) -> Any:
        """(lo, hi) of the hinge angle [rad] or slider position [m]; for a ball joint three (lo, hi) pairs (or
        None) of roll, pitch and yaw [rad] (``rpy_limits``); or None. May be assigned at any time (a fixed
        joint has none)."""
        return self._limits

    @limits.setter
    def limits(self, limits: Any) -> None:
        if limits is not None and self.kind == BALL:
            if isinstance(limits, (str, bytes)) or not hasattr(limits, "__len__") or len(limits) != 3:
                raise TypeError(f"rpy_limits must be three (lo, hi) pairs or None, got {limits!r}")
            bounds = (math.pi, math.pi / 2, math.pi)   # pitch stays clear of the gimbal lock at ±π/2
            limits = tuple(None if pair is None else _pair(f"rpy_limits[{k}]", pair, bounds[k], k == 1)
                           for k, pair in enumerate(limits))
            if limits[1] is None and (limits[0] is not None or limits[2] is not None):
                # Near pitch ±π/2 roll and yaw lose their meaning (they turn about one axis) and jump by up to
                # π as the joint passes: a hanging 3-link chain with a roll or yaw limit alone blew up to NaN
                # there. With any pitch limit inside (−π/2, π/2), even ±1.55, it stays finite and held.
                raise ValueError(f"rpy_limits with a roll or yaw limit need a pitch limit too, within "
                                 f"(-pi/2, pi/2), which keeps the joint off the gimbal lock where roll and yaw "
                                 f"are undefined; got {limits!r}")
        elif limits is not None:
            if self.kind == FIXED:
                raise ValueError(f"limits need a hinge, slider or ball joint, got a fixed joint: {limits!r}")
            limits = _pair("limits", limits, math.pi if self.kind == HINGE else math.inf, False)
        if self._world is not None and limits is not None:
            self._refuse_on_a_closure(f"limits={limits!r}")
            self._world._refuse_for_constraint_forces(f"limits={limits!r}")
        self._limits = limits
        if self._world is not None:
            self._world.model.joints.set_limits(self._index, self)

    @property
    def compliance(self) -> float:
        """[m/N for point rows, rad/(N·m) for angular rows]: 0 is rigid (ArtiSynth notes 0.11). May be
        assigned at any time."""
        return self._compliance

    @compliance.setter
    def compliance(self, compliance: Any) -> None:
        compliance = _checks.non_negative("compliance", compliance)
        if self._world is not None and compliance > 0.0:
            self._refuse_on_a_closure(f"compliance={compliance!r}")
            self._world._refuse_for_constraint_forces(f"compliance={compliance!r}")
        self._compliance = compliance
        if self._world is not None:
            self._world.model.joints.set_soft(self._index, self._compliance, self._damping)

    @property
    def damping(self) -> float:
        """[N·s/m] damping of a compliant joint's rows. May be assigned at any time."""
        return self._damping

    @damping.setter
    def damping(self, damping: Any) -> None:
        self._damping = _checks.non_negative("damping", damping)
        if self._world is not None:
            self._world.model.joints.set_soft(self._index, self._compliance, self._damping)

    @property
    def motor(self) -> tuple[float, float] | None:
        """(target speed [rad/s or m/s], largest torque [N·m] or force [N]), or None. Hinge and slider only;
        may be assigned at any time (a world's next step drives with it)."""
        return self._motor

    @motor.setter
    def motor(self, motor: Any) -> None:
        if motor is not None:
            if self.kind not in (HINGE, SLIDER):
                raise ValueError(f"motor needs a hinge or slider joint, got a {JOINT_NAMES[self.kind]} joint")
            if isinstance(motor, (str, bytes)) or not hasattr(motor, "__len__") or len(motor) != 2:
                raise TypeError(f"motor must be (target_speed, max_force) or None, got {motor!r}")
            motor = (_checks.real("motor[0]", motor[0]), _checks.non_negative("motor[1]", motor[1]))
        if self._world is not None and motor is not None:
            self._refuse_on_a_closure(f"motor={motor!r}")
            self._world._refuse_for_constraint_forces(f"motor={motor!r}")
        self._motor = motor
        if self._world is not None:
            self._world.model.joints.set_motor(self._index, motor)

    @property
    def break_force(self) -> float:
        """[N] the joint breaks (stops acting) after a step whose constraint force exceeds this; may be
        assigned at any time."""
        return self._break_force

    @break_force.setter
    def break_force(self, break_force: Any) -> None:
        if isinstance(break_force, bool) or not isinstance(break_force, (int, float)) or math.isnan(break_force):
            raise TypeError(f"break_force must be a number, got {break_force!r}")
        if break_force <= 0.0:
            raise ValueError(f"break_force must be positive, got {break_force!r}")
        self._break_force = float(break_force)
        if self._world is not None:
            self._world.model.joints.set_break_force(self._index, self._break_force)

    def _refuse_on_a_closure(self, what: str) -> None:
        if self._closure:
            raise ValueError(f"{what} cannot be set on {self!r}, a loop closure (a robot link's body on a side): "
                             f"its equality rows alone are held (docs/robots.md)")

    def _constraint_force_problem(self) -> str | None:
        """What of this joint the event method cannot solve, as ``name=value``, or None: it holds rigid
        equality joints only, by constraint forces (solvers/joint_accel.py, constraints/joint_dense.py). (The
        ODE integrators hold every joint: limits and motors too, and a compliance as the spring it stands
        for.) A loop closure (a robot link's body on a side) holds the same, its rigid equality rows
        (robots/closures.py)."""
        if self.limits is not None:
            return f"limits={self.limits!r}"
        if self.motor is not None:
            return f"motor={self.motor!r}"
        if self.compliance > 0.0:
            return f"compliance={self.compliance!r}"
        return None

    def _live(self) -> tuple[World, int]:
        if self._world is None or self._index < 0:
            raise ValueError(f"{self!r} is not in a world (world.add_joint) or was removed")
        return self._world, self._index

    # ------------------------------------------------------------------ readings
    @property
    def kind_name(self) -> str:
        """"ball", "hinge", "slider" or "fixed"."""
        return JOINT_NAMES[self.kind]

    @property
    def force(self) -> np.ndarray:
        """(3,) [N] the constraint force the joint applied on body a over the last step (the average over its
        sub-steps), world frame; body b got the opposite. Zeros before the first step."""
        world, j = self._live()
        return world.model.joints.force(j)

    @property
    def torque(self) -> np.ndarray:
        """(3,) [N·m] the constraint torque on body a about the joint's anchor over the last step, world frame."""
        world, j = self._live()
        return world.model.joints.torque(j)

    @property
    def broken(self) -> bool:
        """Whether the joint broke (its force exceeded ``break_force``, or it was broken by assigning True); a
        broken joint no longer acts. A broken joint cannot be mended: remove it and add a new one."""
        world, j = self._live()
        return world.model.joints.broken(j)

    @broken.setter
    def broken(self, value: Any) -> None:
        if not isinstance(value, (bool, np.bool_)):
            raise TypeError(f"broken must be True or False, got {value!r}")
        world, j = self._live()
        if not value and world.model.joints.broken(j):
            raise ValueError("broken must stay True once a joint broke (remove it and add a new one), got False")
        if value:
            world.model.joints.set_broken(j)

    @property
    def frames(self) -> tuple[np.ndarray, np.ndarray]:
        """(frame_a, frame_b), (7,) each: the joint's anchor [m] and frame orientation (w, x, y, z) in a's and in
        b's body axes (the world's for b = None), as stored when the joint was added (copies). Assign a saved
        pair to restore the joint exactly (scene files do: re-deriving them from world points would round)."""
        self._live()
        return self._frames[0].copy(), self._frames[1].copy()

    @frames.setter
    def frames(self, value: Any) -> None:
        if not isinstance(value, (tuple, list)) or len(value) != 2:
            raise TypeError(f"frames must be a pair (frame_a, frame_b) of (7,) arrays, got {value!r}")
        frame_a, frame_b = (_checks.array(f"frames[{k}]", f, (7,)) for k, f in enumerate(value))
        for k, frame in enumerate((frame_a, frame_b)):
            if abs(float(np.linalg.norm(frame[3:])) - 1.0) > 1e-9:   # kept as given: normalizing may round
                raise ValueError(f"frames[{k}][3:] must be a unit quaternion (w, x, y, z), got {frame[3:].tolist()}")
        world, j = self._live()
        world.model.joints.set_frames(j, frame_a, frame_b)

    @property
    def error(self) -> float:
        """The largest violation of the joint's equality rows now: [m] for the point and line rows, [rad]
        for the angular rows."""
        world, j = self._live()
        body, st = world.model.bodies(), world.state.bodies()
        return world.model.joints.error(j, body.inv_mass, st.x, st.q)

    def __repr__(self) -> str:
        label = f" {self.name!r}" if self.name else ""
        where = "" if self._world is None else f" #{self._index}"
        b = "world" if self.b is None else (self.b.name or f"body {self.b._index}")
        return f"<{type(self).__name__}{label}{where} {self.a.name or f'body {self.a._index}'} – {b}>"


class BallJoint(Joint):
    """A point of a and a point of b stay together (3 rows); b None: a's point stays fixed in the world.

    Args: a, b (None for the world), anchor (3,) world point [m] at creation; keyword: rpy_limits, three
    (lo, hi) pairs [rad] or None entries of the roll φ, pitch θ and yaw ψ of a's orientation relative to b
    (to the world's axes at creation), R_rel = Rz(φ) Ry(θ) Rx(ψ) (ArtiSynth notes 0.4), all 0 at creation;
    pitch limits within (−π/2, π/2); compliance, damping, break_force [N], collide, name.
    """

    kind = BALL

    def __init__(self, a: Body, b: Body | None, anchor: Any, *, rpy_limits: Any = None, compliance: float = 0.0,
                 damping: float = 0.0, break_force: float = math.inf, collide: bool = False,
                 name: str | None = None) -> None:
        super().__init__(a, b, anchor, limits=rpy_limits, compliance=compliance, damping=damping,
                         break_force=break_force, collide=collide, name=name)

    @property
    def rpy(self) -> np.ndarray:
        """(3,) [rad] roll, pitch, yaw of a relative to b now (``rpy_limits``); 0 at creation."""
        world, _ = self._live()
        fa, fb = self._frames
        orientation = world.state.bodies().q
        frames = []
        for body, local in ((self.a, fa), (self.b, fb)):
            q = local[3:] if body is None else quat_mul(orientation[body._index], local[3:])
            frames.append(quat_to_matrix(q))
        return matrix_to_rpy(frames[1].T @ frames[0])


class _AxisJoint(Joint):
    """A joint with an axis, a coordinate along or about it, limits and a motor (hinge, slider)."""

    def __init__(self, a: Body, b: Body | None, anchor: Any, axis: Any, limits: Any = None, *, motor: Any = None,
                 compliance: float = 0.0, damping: float = 0.0, break_force: float = math.inf,
                 collide: bool = False, name: str | None = None) -> None:
        super().__init__(a, b, anchor, axis, limits=limits, motor=motor, compliance=compliance, damping=damping,
                         break_force=break_force, collide=collide, name=name)


class HingeJoint(_AxisJoint):
    """Rotation about one axis only (5 rows): a ball joint that also keeps the axis of a and b together.

    Args: a, b (None for the world), anchor (3,) [m] and axis (3,) in the world at creation; limits (lo, hi)
    [rad] of the hinge angle (a's turn about the axis relative to b, or to the world, 0 at creation,
    right-handed; within [-π, π]); motor (target speed [rad/s], largest torque [N·m]); compliance, damping,
    break_force [N], collide, name.
    """

    kind = HINGE

    @property
    def angle(self) -> float:
        """[rad] a's rotation about the axis relative to b (or the world), in (−π, π], 0 at creation."""
        world, j = self._live()
        body, st = world.model.bodies(), world.state.bodies()
        return world.model.joints.coordinate(j, body.inv_mass, st.x, st.q)


class SliderJoint(_AxisJoint):
    """Translation along one axis only (5 rows): the bodies keep their relative orientation and b's anchor
    stays on the line through a's anchor along the axis (the axis turns with a).

    Args: a, b (None for the world), anchor (3,) [m] and axis (3,) in the world at creation; limits (lo, hi)
    [m] of the slider position (a's anchor along the axis from b's, or from where it was in the world;
    0 at creation); motor (target speed [m/s], largest force [N]); compliance, damping, break_force [N],
    collide, name.
    """

    kind = SLIDER

    @property
    def position(self) -> float:
        """[m] a's anchor along the axis from b's (or from its place in the world at creation)."""
        world, j = self._live()
        body, st = world.model.bodies(), world.state.bodies()
        return world.model.joints.coordinate(j, body.inv_mass, st.x, st.q)


class FixedJoint(Joint):
    """The bodies keep their relative pose (6 rows): welded. The anchor defaults to a's centre of mass.

    Args: a, b (None for the world), anchor (3,) [m] or None; compliance, damping, break_force [N], collide, name.
    """

    kind = FIXED

    def __init__(self, a: Body, b: Body | None, anchor: Any = None, *, compliance: float = 0.0,
                 damping: float = 0.0, break_force: float = math.inf, collide: bool = False,
                 name: str | None = None) -> None:
        if anchor is None and isinstance(a, Body):
            anchor = a.position
        super().__init__(a, b, anchor, compliance=compliance, damping=damping, break_force=break_force,
                         collide=collide, name=name)
