"""The ``Robot`` handle (API.md, robots): an articulation's joint-space state, controls and dynamics, and the
``Link`` handles of its links.

The dynamics methods (``mass_matrix``, ``inverse_dynamics``, ``forward_dynamics``, ``gravity_torques``,
``jacobian``) evaluate the robot's own tree at the q, q̇ given (the current ones by default), under the
world's gravity, without contact; the step (robots/step.py) advances the robot with its contacts.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .. import _checks
from ..conventions import QUAT_NORM_MIN
from ..jit import njit
from ..math3d import matrix_to_quat
from . import dynamics as dy
from .description import RobotDescription
from .ik import IKResult, _Problem, target_rotation
from .tree import Tree, pack_tree, tree_views

JOINT_SPEED_MAX = 1e6
"""[rad/s or m/s] The largest joint speed ``Robot.qd`` takes (docs/conventions.md "Limits"). A limit row or a
contact stops a coordinate by an impulse that cancels its speed, leaving the rounding of that speed (2.2e-16 of it,
times the conditioning of the stage): measured on a limited hinge, ~1e-6 rad/s left at 1e8, 1.6e4 rad/s at 1e20
(the joint then ended its step 67 rad beyond its limit). At 1e6 the rounding is below 1e-8 rad/s; the fastest
rotors built (ultracentrifuges, ~1.5e4 rad/s) and any speed a robot reaches stay far below it."""

# The kernels behind the methods take the robot's packed tree and work buffers (robots/tree.py, "packed
# storage"): a call with the Tree and Work namedtuples had Numba type ~45 arrays (~10 µs for a Link's pose).


@njit(cache=True, refcount=False)
def _kinematics(ti, tf, wf, q, qd):
    tree, _ = tree_views(ti, tf)
    work = dy.work_views(wf, ti[0])
    dy.kinematics(tree, q, work)
    dy.link_velocities(tree.parent, tree.v_start, tree.nv_link, tree.S, work.E, work.r, qd, work.vel)


@njit(cache=True, refcount=False)
def _mass_matrix(ti, tf, wf, M):
    tree, _ = tree_views(ti, tf)
    dy.crba(tree, dy.work_views(wf, ti[0]), M)
    for d in range(M.shape[0]):
        M[d, d] += tree.armature[d]


@njit(cache=True, refcount=False)
def _inverse_dynamics(ti, tf, wf, qd, qdd, gravity, tau):
    tree, _ = tree_views(ti, tf)
    dy.rnea(tree, dy.work_views(wf, ti[0]), qd, qdd, gravity, tau)
    for d in range(tau.shape[0]):
        tau[d] += tree.armature[d] * qdd[d]


@njit(cache=True, refcount=False)
def _forward_dynamics(ti, tf, wf, qd, tau, gravity, qdd):
    tree, _ = tree_views(ti, tf)
    dy.aba(tree, dy.work_views(wf, ti[0]), tree.armature, qd, tau, gravity, qdd)


@njit(cache=True, refcount=False)
def _jacobian(ti, tf, wf, link, point, J):
    tree, _ = tree_views(ti, tf)
    work = dy.work_views(wf, ti[0])
    dy.point_jacobian(tree.parent, tree.v_start, tree.nv_link, tree.S, work.R_world, work.p_world, link, point, J)


class Link:
    """A link of a robot: a Body-like, read-only view of its pose and motion in the world (the current q, q̇).

    ``position`` (3,) [m] is the link frame's origin (the URDF link frame) and ``orientation`` (4,) its
    quaternion (w, x, y, z), link → world; ``com`` (3,) [m] its centre of mass; ``velocity`` (3,) [m/s] the
    COM's velocity and ``angular_velocity`` (3,) [rad/s] ω, world frame; ``body`` the World body carrying its
    collision shapes (None for a link without any)."""

    def __init__(self, robot: Robot, index: int) -> None:
        self._robot = robot
        self._index = index

    @property
    def name(self) -> str:
        return self._robot._desc.links[self._index].name

    @property
    def mass(self) -> float:
        """[kg]"""
        return float(self._robot._tree.mass[self._index])

    def _pose(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        work = self._robot._kinematics()
        return work.R_world[self._index].copy(), work.p_world[self._index].copy(), work.vel[self._index].copy()

    @property
    def position(self) -> np.ndarray:
        return self._pose()[1]

    @property
    def orientation(self) -> np.ndarray:
        out = np.empty(4)
        matrix_to_quat(self._pose()[0], out)
        return out

    @property
    def rotation(self) -> np.ndarray:
        """(3, 3) link → world."""
        return self._pose()[0]

    @property
    def com(self) -> np.ndarray:
        R, p, _ = self._pose()
        return p + R @ self._robot._tree.com[self._index]

    @property
    def velocity(self) -> np.ndarray:
        R, _, vel = self._pose()
        c = self._robot._tree.com[self._index]
        w0, w1, w2 = vel[0], vel[1], vel[2]    # v_com = v_o + ω × c, written out (np.cross costs ~10 µs)
        return R @ (vel[3:] + np.array([w1 * c[2] - w2 * c[1], w2 * c[0] - w0 * c[2], w0 * c[1] - w1 * c[0]]))

    @property
    def angular_velocity(self) -> np.ndarray:
        R, _, vel = self._pose()
        return R @ vel[:3]

    @property
    def body(self) -> Any:
        b = self._robot._link_bodies()[self._index]
        return None if b < 0 else self._robot._world.bodies[b]

    def __repr__(self) -> str:
        return f"Link({self.name!r} of {self._robot.name!r})"


class Robot:
    """An articulation in a world (``World.add_urdf``, ``add_mjcf``, ``add_robot``). See API.md, robots."""

    def __init__(self, world: Any, slot: int, desc: RobotDescription, tree: Tree, fixed_base: bool) -> None:
        self._world = world
        self._slot = slot
        self._desc = desc
        L = len(desc.links)
        self._nq, self._nv = int(sum(dy.NQ[c] for c in tree.jtype)), int(tree.S.shape[0])
        self._packed = pack_tree(tree, self._nq, np.full(L, -1, dtype=np.int64))
        self._tree, _ = tree_views(*self._packed)
        self.fixed_base = fixed_base
        self.name: str = desc.name
        self._work_f = np.zeros(dy.work_size(L))
        self._work = dy.work_views(self._work_f, L)
        self._current = -1
        """``Forest.moves`` when ``_work`` last got the kinematics of the current state (−1: of another q)."""
        self._link_index = {link.name: i for i, link in enumerate(desc.links)}
        movable = [i for i in range(1, len(desc.links)) if tree.nv_link[i] > 0]
        self.closures: tuple[Any, ...] = ()
        """The World joints (named "ROBOT/CLOSURE") that hold the description's loop closures
        (``RobotDescription.closures``; docs/robots.md "Loop closures"), in its order."""
        self.joint_names: tuple[str, ...] = tuple(desc.joints[i - 1].name for i in movable)
        """Movable joints' names in q order (URDF depth-first); a floating base's coordinates come first."""
        self.link_names: tuple[str, ...] = tuple(link.name for link in desc.links)

    # ------------------------------------------------------------------ sizes and state
    @property
    def nq(self) -> int:
        return self._nq

    @property
    def nv(self) -> int:
        return self._nv

    def _state_array(self, field: str) -> np.ndarray:
        forest = self._world._model.robots
        _, q0, v0 = forest.offsets[self._slot]
        if field == "q":
            return forest.state.q[q0:q0 + self._nq]
        return getattr(forest.state, field)[v0:v0 + self._nv]

    @property
    def q(self) -> np.ndarray:
        """(nq,) joint positions [rad, m]; a floating base's (x, y, z, qw, qx, qy, qz) first. Setting moves the
        links' bodies at once."""
        return self._state_array("q").copy()

    @q.setter
    def q(self, value: Any) -> None:
        q = _checks.array("q", value, (self.nq,))
        q = self._normalized(q)
        self._state_array("q")[:] = q
        self._world._robots_moved()

    @property
    def qd(self) -> np.ndarray:
        """(nv,) joint velocities [rad/s, m/s]; a floating base's (v, ω) first: the base frame's own linear and
        angular velocity in the base frame (Pinocchio's convention)."""
        return self._state_array("qd").copy()

    @qd.setter
    def qd(self, value: Any) -> None:
        qd = _checks.array("qd", value, (self.nv,))
        fast = np.flatnonzero(np.abs(qd) > JOINT_SPEED_MAX)
        if fast.size:
            d = int(fast[0])
            raise ValueError(f"qd[{d}] (joint {self.joint_of(int(self._tree.dof_link[d]))!r} of robot {self.name!r}) "
                             f"is {float(qd[d])!r}; a joint speed must be at most {JOINT_SPEED_MAX:g} rad/s or m/s in "
                             f"size (docs/conventions.md \"Limits\")")
        self._state_array("qd")[:] = qd
        self._world._robots_moved()

    def _control(self, field: str, value: Any, nonnegative: bool = False) -> None:
        if isinstance(value, (str, bytes)) or not np.ndim(value):
            arr = np.full(self.nv, _checks.real(field, value))   # (a number for every coordinate)
        else:
            arr = _checks.array(field, value, (self.nv,))
        if not np.all(np.isfinite(arr)) or (nonnegative and np.any(arr < 0.0)):
            raise ValueError(f"{field} must be finite{' and >= 0' if nonnegative else ''}, got {arr.tolist()}")
        self._state_array(field)[:] = arr

    @property
    def tau(self) -> np.ndarray:
        """(nv,) joint torques [N m] and forces [N] applied every step until changed (controls)."""
        return self._state_array("tau").copy()

    @tau.setter
    def tau(self, value: Any) -> None:
        self._control("tau", value)

    @property
    def kp(self) -> np.ndarray:
        """(nv,) position gains [N m/rad, N/m] of the joint motors: τ += clamp(kp (q_target − q) + kd (qd_target −
        q̇), ±effort) on revolute and prismatic joints (effort from the robot file; inf where none)."""
        return self._state_array("kp").copy()

    @kp.setter
    def kp(self, value: Any) -> None:
        self._control("kp", value, nonnegative=True)

    @property
    def kd(self) -> np.ndarray:
        """(nv,) velocity gains [N m s/rad, N s/m] of the joint motors (``kp``)."""
        return self._state_array("kd").copy()

    @kd.setter
    def kd(self, value: Any) -> None:
        self._control("kd", value, nonnegative=True)

    @property
    def q_target(self) -> np.ndarray:
        """(nv,) position targets of the motors (one per velocity coordinate; used on revolute and prismatic
        joints)."""
        return self._state_array("q_target").copy()

    @q_target.setter
    def q_target(self, value: Any) -> None:
        self._control("q_target", value)

    @property
    def qd_target(self) -> np.ndarray:
        """(nv,) velocity targets of the motors."""
        return self._state_array("qd_target").copy()

    @qd_target.setter
    def qd_target(self, value: Any) -> None:
        self._control("qd_target", value)

    @property
    def effort_limit(self) -> np.ndarray:
        """(nv,) the largest motor torque/force per coordinate (inf: none), from the robot file."""
        return self._tree.effort.copy()

    @property
    def position_limits(self) -> tuple[np.ndarray, np.ndarray]:
        """(lower (nv,), upper (nv,)) [rad, m]; ±inf where a coordinate has none."""
        return self._tree.lower.copy(), self._tree.upper.copy()

    # ------------------------------------------------------------------ dynamics
    def _normalized(self, q: np.ndarray, name: str = "q") -> np.ndarray:
        q = q.copy()
        t = self._tree
        for i, code in enumerate(t.jtype):
            if code in (dy.SPHERICAL, dy.FLOATING):
                k = t.q_start[i] + (3 if code == dy.FLOATING else 0)
                # scaled by a power of two first (_checks.quaternions_scaled): components of 1e200 would make the
                # norm inf and the quaternion zero
                scaled, exponent = _checks.quaternions_scaled(q[k:k + 4])
                n = float(np.sqrt(scaled @ scaled))
                exponent = int(exponent)
                if -1 <= exponent <= 1 and abs(float(np.ldexp(n, exponent)) - 1.0) <= 1e-12:
                    continue   # a unit quaternion is kept bit for bit (a saved state reloads exactly)
                if exponent <= 0 and not float(np.ldexp(n, exponent)) >= QUAT_NORM_MIN:
                    raise ValueError(f"{name}: the quaternion of joint {self.joint_of(i)!r} at {name}[{k}:{k + 4}] "
                                     f"is zero (norm below {QUAT_NORM_MIN:g}), got {q[k:k + 4].tolist()}")
                q[k:k + 4] = scaled / n
        return q

    @property
    def q_names(self) -> tuple[str, ...]:
        """(nq,) a name for each entry of q: "JOINT" for an angle or a slide, "JOINT_qw" … "JOINT_qz" for a ball
        joint, "base_x" … "base_qz" for a floating base."""
        names: list[str] = []
        t = self._tree
        for i, code in enumerate(t.jtype):
            if code == dy.FLOATING:
                names += ["base_x", "base_y", "base_z", "base_qw", "base_qx", "base_qy", "base_qz"] if i == 0 else [
                    f"{self.joint_of(i)}_{c}" for c in ("x", "y", "z", "qw", "qx", "qy", "qz")]
            elif code == dy.SPHERICAL:
                names += [f"{self.joint_of(i)}_{c}" for c in ("qw", "qx", "qy", "qz")]
            elif code != dy.FIXED:
                names.append(self.joint_of(i))
        return tuple(names)

    def joint_of(self, link: int) -> str:
        """The name of the joint that moves link number ``link`` (in ``link_names`` order) relative to its
        parent; "floating base" for the root of a floating-base robot (the root of a fixed one: "fixed base")."""
        if isinstance(link, (bool, np.bool_)) or not isinstance(link, (int, np.integer)):
            raise TypeError(f"link must be a link number (an int), got {link!r}")
        if not 0 <= link < len(self.link_names):
            raise ValueError(f"link must be a link number in [0, {len(self.link_names) - 1}] (robot {self.name!r} "
                             f"has {len(self.link_names)} links; no wrapping around), got {link!r}")
        if link == 0:
            return "fixed base" if self.fixed_base else "floating base"
        return self._desc.joints[link - 1].name

    @property
    def description(self) -> RobotDescription:
        """The ``RobotDescription`` the robot was made from (links, joints, inertials, shapes), as read; for
        reading, not changing the robot."""
        return self._desc

    def _link_bodies(self) -> np.ndarray:
        """(L,) the World body of each link (−1: none), the robot's part of the forest's ``link_body``."""
        first = self._world.model.robots.offsets[self._slot][0]
        return self._world.model.robots.link_body[first:first + len(self.link_names)]

    def _q_arg(self, q: Any) -> np.ndarray:
        return self._state_array("q").copy() if q is None else self._normalized(_checks.array("q", q, (self.nq,)))

    def _kinematics(self, q: np.ndarray | None = None, qd: np.ndarray | None = None) -> dy.Work:
        if q is None and qd is None:
            # the current state's, kept while the joint state is unchanged (Forest.moves): reading every link
            # of an n-link robot costs O(n), not O(n²)
            moves = self._world._model.robots.moves
            if self._current != moves:
                _kinematics(*self._packed, self._work_f, self._state_array("q"), self._state_array("qd"))
                self._current = moves
            return self._work
        self._current = -1
        q = self._state_array("q") if q is None else q
        qd = self._state_array("qd") if qd is None else qd
        _kinematics(*self._packed, self._work_f, q, qd)
        return self._work

    def mass_matrix(self, q: Any = None) -> np.ndarray:
        """(nv, nv) joint-space mass matrix M(q) [kg m², kg m, kg] by the composite-rigid-body algorithm
        (Featherstone Table 6.2), armature included; the current q if None."""
        q = self._q_arg(q)
        self._kinematics(q, np.zeros(self.nv))
        M = np.zeros((self.nv, self.nv))
        _mass_matrix(*self._packed, self._work_f, M)
        return M

    def inverse_dynamics(self, q: Any, qd: Any, qdd: Any) -> np.ndarray:
        """(nv,) τ = M(q) q̈ + C(q, q̇) q̇ + g(q) [N m, N] by the recursive Newton–Euler algorithm (Featherstone
        Table 5.1), under the world's gravity; armature included, joint damping, springs and contact not."""
        q = self._q_arg(q)
        qd = _checks.array("qd", qd, (self.nv,))
        qdd = _checks.array("qdd", qdd, (self.nv,))
        self._kinematics(q, qd)
        tau = np.zeros(self.nv)
        _inverse_dynamics(*self._packed, self._work_f, qd, qdd, self._world.gravity, tau)
        return self._finite("inverse_dynamics", "τ", tau, "q, qd and qdd")

    def forward_dynamics(self, q: Any, qd: Any, tau: Any) -> np.ndarray:
        """(nv,) q̈ = M⁻¹ (τ − C q̇ − g) without contact, by the articulated-body algorithm (Featherstone
        Table 7.1); armature included, joint damping and springs not (add −damping q̇ − stiffness (q − spring_ref)
        to τ for them)."""
        q = self._q_arg(q)
        qd = _checks.array("qd", qd, (self.nv,))
        tau = _checks.array("tau", tau, (self.nv,))
        self._kinematics(q, qd)
        qdd = np.zeros(self.nv)
        _forward_dynamics(*self._packed, self._work_f, qd, tau, self._world.gravity, qdd)
        return self._finite("forward_dynamics", "q̈", qdd, "q, qd and tau")

    def _finite(self, method: str, what: str, out: np.ndarray, given: str) -> np.ndarray:
        """``out``, or a FloatingPointError when an entry overflowed (docs/robots.md "Bad input")."""
        if not np.all(np.isfinite(out)):
            d = int(np.flatnonzero(~np.isfinite(out))[0])
            raise FloatingPointError(f"{method}: {what}[{d}] (joint {self.joint_of(int(self._tree.dof_link[d]))!r}) "
                                     f"overflows float64 for the {given} given (robot {self.name!r}): they are "
                                     f"finite but too large for the result to be; scale them down")
        return out

    def gravity_torques(self, q: Any = None) -> np.ndarray:
        """(nv,) g(q) [N m, N]: the joint torques that hold the robot still against gravity at q."""
        q = self._q_arg(q)
        zero = np.zeros(self.nv)
        return self.inverse_dynamics(q, zero, zero)

    def link(self, name: str) -> Link:
        """The ``Link`` handle of the link called ``name``."""
        if name not in self._link_index:
            raise ValueError(f"robot {self.name!r} has no link {name!r}; its links: {list(self.link_names)}")
        return Link(self, self._link_index[name])

    @property
    def links(self) -> tuple[Link, ...]:
        return tuple(Link(self, i) for i in range(len(self.link_names)))

    def jacobian(self, link_name: str, point: Any = None) -> np.ndarray:
        """(6, nv) world-frame Jacobian of ``link_name`` at ``point`` (3,) [m, world; None: the link frame's
        origin]: J q̇ = (ω, v_point), angular rows first (API.md)."""
        link = self.link(link_name)._index
        w = self._kinematics()
        p = w.p_world[link].copy() if point is None else _checks.vector3("point", point)
        J = np.zeros((6, self.nv))
        _jacobian(*self._packed, self._work_f, link, p, J)
        return J

    def inverse_kinematics(self, link: str, position: Any, orientation: Any = None, q0: Any = None, *,
                           point: Any = None, tolerance: float = 1e-6, angular_tolerance: float = 1e-5,
                           max_iterations: int = 500, damping: float = 1e-3, floating_base: bool = False,
                           seed: int = 0) -> IKResult:
        """Joint positions q that bring ``point`` (3,) [m, in the frame of link ``link``; None: its origin] to
        ``position`` (3,) [m, world] and, if ``orientation`` (4,) (w, x, y, z) link → world is given (not unit:
        normalized, as everywhere in the API), the link's frame to that orientation. Damped least squares
        (Levenberg–Marquardt) on the world-frame Jacobian within the joint limits, with seeded random restarts
        (``seed``) when stuck (robots/ik.py; docs/robots.md "Inverse kinematics"). Starts from ``q0`` (nq,)
        (the robot's q if None; clamped into the limits); a floating base stays at q0's pose unless
        ``floating_base`` is True. Stops when the position error is at most ``tolerance`` [m] and the
        orientation error (the angle of R_target R(q)ᵀ) at most ``angular_tolerance`` [rad], or after
        ``max_iterations`` steps (restarts included); ``damping`` is the initial λ [m², rad²] of
        (Jᵀ J + λ 1) Δ = Jᵀ e, adapted from there. The robot's state is not changed.

        Many targets at once: ``position`` (n, 3), ``orientation`` (n, 4) or None, ``q0`` (nq,) or (n, nq):
        the ``IKResult`` then holds q (n, nq), ok (n,), position_error (n,), orientation_error (n,),
        iterations (n,), row i as a call with target i alone would give. Out of reach: ok False with the
        errors of the closest q found (no exception)."""
        if not isinstance(link, str):
            raise TypeError(f"link must be a link's name (str), got {link!r} of type {type(link).__name__}")
        index = self.link(link)._index
        many = np.ndim(position) == 2
        positions = _checks.array("position", position, (None, 3) if many else (3,)).reshape(-1, 3)
        n = positions.shape[0]
        rotations: list[np.ndarray | None] = [None] * n
        if orientation is not None:
            quats = _checks.array("orientation", orientation, (n, 4) if many else (4,)).reshape(-1, 4)
            rotations = [target_rotation(_checks.quaternion(f"orientation[{i}]" if many else "orientation", r))
                         for i, r in enumerate(quats)]
        if q0 is None:
            starts = np.tile(self._state_array("q"), (n, 1))
        else:
            starts = _checks.array("q0", q0, (n, self.nq) if many and np.ndim(q0) == 2 else (self.nq,))
            starts = np.array([self._normalized(s, "q0") for s in np.broadcast_to(starts, (n, self.nq))])
        p = np.zeros(3) if point is None else _checks.vector3("point", point)
        tol = _checks.positive("tolerance", tolerance)
        angular_tol = _checks.positive("angular_tolerance", angular_tolerance)
        iterations = _checks.positive_int("max_iterations", max_iterations)
        lam = _checks.positive("damping", damping)
        if not isinstance(floating_base, (bool, np.bool_)):
            raise TypeError(f"floating_base must be True or False, got {floating_base!r}")
        if floating_base and self.fixed_base:
            raise ValueError(f"floating_base=True: robot {self.name!r} has a fixed base")
        if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
            raise ValueError(f"seed must be an integer >= 0, got {seed!r}")
        problem = _Problem(self, index, p, bool(floating_base))
        if problem.active.size == 0:
            raise ValueError(f"link {link!r} of robot {self.name!r} is moved by no joint the solve may turn "
                             f"(movable joints: {list(self.joint_names)}; floating_base={floating_base})")
        found = [problem.solve(problem.clamp(starts[i]), positions[i], rotations[i], tol, angular_tol, iterations,
                               lam, int(seed)) for i in range(n)]
        q, ok, pe, oe, it = (np.array(column) for column in zip(*found, strict=True))
        if many:
            return IKResult(q, ok, pe, oe, it.astype(np.int64))
        return IKResult(q[0], bool(ok[0]), float(pe[0]), float(oe[0]), int(it[0]))

    def kinetic_energy(self) -> float:
        """½ q̇ᵀ M q̇ [J] at the current state."""
        qd = self._state_array("qd")
        return 0.5 * float(qd @ self.mass_matrix() @ qd)

    def potential_energy(self) -> float:
        """−Σ m g·c [J] of the links' COMs in the world's gravity (zero at the world origin), plus the joint
        springs' Σ ½ stiffness (q − spring_ref)²."""
        w = self._kinematics()
        t = self._tree
        g = self._world.gravity
        com = w.p_world + np.einsum("lab,lb->la", w.R_world, t.com)
        energy = float(-np.sum(t.mass * (com @ g)))
        one = np.flatnonzero(t.nv_link == 1)   # (springs are on revolute and prismatic joints only)
        d = t.v_start[one]
        if np.any(t.stiffness[d] > 0.0):
            stretch = self._state_array("q")[t.q_start[one]] - t.spring_ref[d]
            energy += 0.5 * float(np.sum(t.stiffness[d] * stretch * stretch))
        return energy

    def __repr__(self) -> str:
        return f"Robot({self.name!r}, {len(self.link_names)} links, nq={self.nq}, nv={self.nv})"
