"""The world's joints as flat arrays for the step's kernels, rebuilt when joints or bodies change.

``JointSet.kernel_args()`` gives (data, scratch, structure), the containers of model/fields.py: data
(``JointData``) are the joints' definitions and the state carried between steps (impulses for the warm start,
the last step's impulse per joint); scratch (``JointScratch``) holds each sub-step's rows and the factor of K;
structure (``JointStructure``) the sparsity of K (solvers/joint_solve.py). Nothing here is allocated per step.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from ..constraints.joint_rows import (
    BALL,
    BROKEN,
    EQUALITY_ROWS,
    HAS_LIMIT,
    HAS_MOTOR,
    LIMIT_ROW,
    LIMIT_SLOTS,
    LINKED,
    MOTOR_ROW,
    NO_LIMIT,
    ROW_SLOTS,
    RPY_ROWS,
    joint_rows,
)
from ..solvers.joint_solve import joint_structure
from .fields import JointData, JointOde, JointScratch, JointStructure

if TYPE_CHECKING:
    from ..joints import Joint


class JointSet:
    """The joints of one world, in the order they were added."""

    def __init__(self, direct: bool) -> None:
        self.direct = direct
        self.joints: list[Joint] = []
        self._arrays: dict[str, np.ndarray] | None = None
        self._broken: list[bool] = []
        self._impulse = np.zeros((0, ROW_SLOTS))
        self._wrench = np.zeros((0, 6))
        # the loop closures' (joints with a robot link's body on a side, solved by the robots' contact stage):
        # the step's impulse of each equality row (its warm start) and the step's impulse on a, as _wrench
        self._closure_impulse = np.zeros((0, ROW_SLOTS))
        self._closure_wrench = np.zeros((0, 6))
        self._closures: tuple | None = None   # closure_args' (() when there are none), None: to build
        self._only_closures: bool | None = None
        self._dt = 0.0
        self._excluded: np.ndarray | None = None
        self._ode: tuple | None = None

    def __len__(self) -> int:
        return len(self.joints)

    def add(self, joint: Joint) -> None:
        self.changed()
        joint._frames = joint._local_frames()
        self.joints.append(joint)
        self._broken.append(False)
        self._impulse = np.vstack([self._impulse, np.zeros((1, ROW_SLOTS))])
        self._wrench = np.vstack([self._wrench, np.zeros((1, 6))])
        self._closure_impulse = np.vstack([self._closure_impulse, np.zeros((1, ROW_SLOTS))])
        self._closure_wrench = np.vstack([self._closure_wrench, np.zeros((1, 6))])
        self.changed()

    def remove(self, joint: Joint) -> None:
        self.changed()
        j = self.joints.index(joint)
        self.joints.pop(j)
        self._broken.pop(j)
        self._impulse = np.delete(self._impulse, j, axis=0)
        self._wrench = np.delete(self._wrench, j, axis=0)
        self._closure_impulse = np.delete(self._closure_impulse, j, axis=0)
        self._closure_wrench = np.delete(self._closure_wrench, j, axis=0)
        for k, other in enumerate(self.joints):
            other._index = k
        joint._index = -1
        joint._world = None
        self.changed()

    def changed(self) -> None:
        """The joints or the bodies changed: rebuild the arrays and the structure before the next step."""
        if self._arrays is not None:
            self._broken = [bool(f & BROKEN) for f in self._arrays["flags"]]
        self._arrays = None
        self._excluded = None
        self._ode = None
        self._closures = None
        self._only_closures: bool | None = None

    @property
    def only_closures(self) -> bool:
        """Whether every joint is a loop closure (a robot link's body on a side: the robots' stages hold them all,
        and a world of robots alone needs no World joint solve)."""
        if self._only_closures is None:
            self._only_closures = all(joint._closure for joint in self.joints)
        return self._only_closures

    @property
    def excluded_pairs(self) -> np.ndarray:
        """(k,) int64 sorted keys min(a, b) << 32 | max(a, b) of the body pairs joined by a joint made with
        ``collide=False``: detection skips them (collision/broadphase.drop_body_pairs)."""
        if self._excluded is None:
            keys = {(min(j.a._index, j.b._index) << 32) | max(j.a._index, j.b._index)
                    for j in self.joints if j.b is not None and not j.collide}
            self._excluded = np.array(sorted(keys), dtype=np.int64)
        return self._excluded

    # ------------------------------------------------------------------ arrays
    def kernel_args(self, inv_mass: np.ndarray) -> tuple[JointData, JointScratch, JointStructure]:
        if self._arrays is None:
            self._build(inv_mass)
        a = self._arrays
        data = JointData(a["kind"], a["body"], a["frame_a"], a["frame_b"], a["limit"], a["flags"], a["soft"],
                         a["motor"], self._impulse, self._wrench)
        return data, self._scratch, self._structure

    def _build(self, inv_mass: np.ndarray) -> None:
        m, n = len(self.joints), inv_mass.shape[0]
        kind = np.array([j.kind for j in self.joints], dtype=np.int64)
        body = np.array([[j.a._index, -1 if j.b is None else j.b._index] for j in self.joints],
                        dtype=np.int64).reshape(m, 2)
        frame_a = np.array([j._frames[0] for j in self.joints]).reshape(m, 7)
        frame_b = np.array([j._frames[1] for j in self.joints]).reshape(m, 7)
        limit = np.array([_limit_row(j) for j in self.joints], dtype=float).reshape(m, LIMIT_SLOTS)
        motor = np.array([j.motor or (0.0, 0.0) for j in self.joints], dtype=float).reshape(m, 2)
        soft = np.array([(j.compliance, j.damping) for j in self.joints], dtype=float).reshape(m, 2)
        flags = np.array([(HAS_LIMIT if j.limits is not None else 0) | (HAS_MOTOR if j.motor is not None else 0)
                          | (BROKEN if broken else 0) | (LINKED if j._closure else 0)
                          for j, broken in zip(self.joints, self._broken, strict=True)], dtype=np.int64)
        self._arrays = {"kind": kind, "body": body, "frame_a": frame_a, "frame_b": frame_b, "limit": limit,
                        "motor": motor, "soft": soft, "flags": flags}
        # finish_step's scratch: |F|² of each joint and the breaking test, so a step allocates nothing
        self._break_force_sq = np.array([j.break_force for j in self.joints], dtype=float) ** 2
        self._breakable = bool(np.isfinite(self._break_force_sq).any())
        self._force_sq, self._limit_sq = np.zeros(m), np.zeros(m)
        self._wrench_sum = np.zeros((m, 6)) if any(j._closure for j in self.joints) else None
        self._snapped = np.zeros(m, dtype=bool)
        self._structure = joint_structure(kind, body, flags, inv_mass, self.direct)
        rows = int(self._structure.count.sum())
        start, ptr = self._structure.start, self._structure.ptr
        self._scratch = JointScratch(
            np.zeros((m, ROW_SLOTS, 3)), np.zeros((m, ROW_SLOTS, 3)), np.zeros((m, ROW_SLOTS, 3)),
            np.zeros((m, ROW_SLOTS, 3)), np.zeros((m, ROW_SLOTS, 3)), np.zeros((m, ROW_SLOTS)), np.zeros(m),
            np.zeros(m), np.zeros((m, ROW_SLOTS)), np.zeros((m, ROW_SLOTS), dtype=np.int64),
            np.zeros(int(ptr[-1]) if len(start) else 0), np.zeros(rows),
            np.zeros((n, 3)), np.zeros((n, 4)), np.zeros((n, 3)), np.zeros((m, ROW_SLOTS, 3)), np.zeros((m, ROW_SLOTS)),
            np.zeros(m))

    def ode_args(self, inv_mass: np.ndarray) -> tuple[JointData, JointScratch, JointStructure, JointOde]:
        """(data, scratch, structure, ode_scratch) for the ODE integrators' constraint forces
        (solvers/joint_accel.py): ``kernel_args`` with the structure of the direct (envelope) solve whatever
        ``joint_solver`` says, and the ODE scratch (``JointOde``: its own factor and right-hand side, ...)."""
        data, scratch, structure = self.kernel_args(inv_mass)
        if self._ode is None:
            a = self._arrays
            m, n = len(self.joints), inv_mass.shape[0]
            direct = structure if self.direct else joint_structure(a["kind"], a["body"], a["flags"], inv_mass, True)
            rows = int(direct.count.sum())
            self._ode = (direct, JointOde(
                np.zeros(int(direct.ptr[-1]) if rows else 0), np.zeros(rows), np.zeros((m, ROW_SLOTS)),
                np.zeros((n, 3)), np.zeros((n, 4)), np.zeros((n, 3)), np.zeros((n, 3)), np.zeros((n, 3, 3)),
                np.zeros((n, 3)), np.zeros((n, 3)), np.zeros((n, 3)), np.zeros((n, 3)), np.ones(n, dtype=np.bool_),
                np.zeros((m, ROW_SLOTS)), np.zeros((m, ROW_SLOTS)), np.zeros((m, ROW_SLOTS)), np.zeros((m, 2)),
                np.zeros((m, ROW_SLOTS))))
        return data, scratch, self._ode[0], self._ode[1]

    def set_frames(self, j: int, frame_a: np.ndarray, frame_b: np.ndarray) -> None:
        """Joint j's frames (7,) each, in its bodies' axes (the world's for b = None), as given: a scene file
        written by ``save_scene`` holds them (the frames the world made at creation, not re-derived from the
        poses now, so the joint's zero and its drift are kept)."""
        self.joints[j]._frames = (np.array(frame_a, dtype=float), np.array(frame_b, dtype=float))
        self.changed()

    def set_broken(self, j: int) -> None:
        """Mark joint j broken (a saved broken joint loads broken)."""
        self.changed()
        self._broken[j] = True

    # ------------------------------------------------------------------ parameters assigned in the world
    def set_motor(self, j: int, motor: tuple[float, float] | None) -> None:
        """Joint j's motor (target speed, largest force or torque) or None, from the next step on; a removed
        motor's impulse is dropped from the warm start."""
        if motor is None:
            self._impulse[j, MOTOR_ROW] = 0.0
        if self._arrays is None:
            return      # read when the arrays are built
        self._arrays["motor"][j] = (0.0, 0.0) if motor is None else motor
        if bool(self._arrays["flags"][j] & HAS_MOTOR) != (motor is not None):
            self.changed()      # the motor row enters or leaves the joint's block: a new structure

    def set_limits(self, j: int, joint: Joint) -> None:
        """Joint j's limits (``joint.limits``), from the next step on; removed limits' impulses leave the warm
        start."""
        if joint.limits is None:
            first, end = (RPY_ROWS, RPY_ROWS + 3) if joint.kind == BALL else (LIMIT_ROW, LIMIT_ROW + 1)
            self._impulse[j, first:end] = 0.0
        if self._arrays is None:
            return
        self._arrays["limit"][j] = _limit_row(joint)
        if bool(self._arrays["flags"][j] & HAS_LIMIT) != (joint.limits is not None):
            self.changed()      # the limit rows enter or leave the joint's block: a new structure

    def set_soft(self, j: int, compliance: float, damping: float) -> None:
        """Joint j's compliance and damping, from the next step on."""
        if self._arrays is not None:
            self._arrays["soft"][j] = (compliance, damping)

    def set_break_force(self, j: int, break_force: float) -> None:
        """Joint j's breaking force [N], tested after the next step."""
        if self._arrays is None:
            return
        self._break_force_sq[j] = break_force * break_force
        self._breakable = bool(np.isfinite(self._break_force_sq).any())

    # ------------------------------------------------------------------ after a step
    def finish_step(self, dt: float) -> None:
        """Break the joints whose force over the step of ``dt`` [s] exceeded their ``break_force``."""
        self._dt = dt
        if self._arrays is None or not self.joints:
            return
        if not self._breakable:
            return
        wrench = self._wrench
        if self._wrench_sum is not None:   # (a closure's impulse is in _closure_wrench, the others' in _wrench)
            wrench = np.add(self._wrench, self._closure_wrench, out=self._wrench_sum)
        impulse = wrench[:, :3]
        np.einsum("ij,ij->i", impulse, impulse, out=self._force_sq)
        # |F| > break_force with F = impulse / dt, squared: |impulse|² > (break_force dt)²
        np.multiply(self._break_force_sq, dt * dt, out=self._limit_sq)
        snapped = np.greater(self._force_sq, self._limit_sq, out=self._snapped)
        if snapped.any():
            flags = self._arrays["flags"]
            flags[snapped] |= BROKEN
            self._impulse[snapped] = 0.0
            self._closure_impulse[snapped] = 0.0

    def _wrench_of(self, j: int) -> np.ndarray:
        return self._closure_wrench[j] if self.joints[j]._closure else self._wrench[j]

    def force(self, j: int) -> np.ndarray:
        return self._wrench_of(j)[:3] / self._dt if self._dt > 0.0 else np.zeros(3)

    def torque(self, j: int) -> np.ndarray:
        return self._wrench_of(j)[3:] / self._dt if self._dt > 0.0 else np.zeros(3)

    def closure_args(self, inv_mass: np.ndarray) -> tuple:
        """The loop closures for the robots' contact stage (robots/closures.py): (data, index, rows, shake) with
        data the joints' ``JointData`` whose impulse (m, 8) and wrench (m, 6) are the closures' own (the World's
        solve neither reads nor writes them), index (k,) int64 the closures (joints flagged LINKED), rows the
        scratch of ``joint_rows`` (lin, ang_a, ang_b (m, 8, 3), error (m, 8), coordinate (m,)), shake = (another
        such scratch, the predicted poses x (n, 3), q (n, 4) of the n bodies) for SHAKE; None without closures."""
        closures = self._closures
        if closures is None:
            closures = self._closures = self._build_closures(inv_mass)
        return closures or None

    def _build_closures(self, inv_mass: np.ndarray) -> tuple:
        """``closure_args``' tuple, or () when no joint is a closure (the stage then compiles without their
        code)."""
        if not any(joint._closure for joint in self.joints):
            return ()
        solved, _, _ = self.kernel_args(inv_mass)
        m = len(self.joints)
        data = solved._replace(impulse=self._closure_impulse, wrench=self._closure_wrench)
        index = np.array([j for j, joint in enumerate(self.joints) if joint._closure], dtype=np.int64)
        rows, predicted = ((np.zeros((m, ROW_SLOTS, 3)), np.zeros((m, ROW_SLOTS, 3)), np.zeros((m, ROW_SLOTS, 3)),
                            np.zeros((m, ROW_SLOTS)), np.zeros(m)) for _ in range(2))
        n = inv_mass.shape[0]
        return data, index, rows, (predicted, np.zeros((n, 3)), np.zeros((n, 4)))

    def broken(self, j: int) -> bool:
        if self._arrays is None:
            return self._broken[j]
        return bool(self._arrays["flags"][j] & BROKEN)

    def _rows_now(self, inv_mass: np.ndarray, x: np.ndarray, q: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(error (m, 8), coordinate (m,)) of the joints at the poses x (n, 3), q (n, 4)."""
        data, _, _ = self.kernel_args(inv_mass)
        m = len(self.joints)
        lin, error, coordinate = np.zeros((m, ROW_SLOTS, 3)), np.zeros((m, ROW_SLOTS)), np.zeros(m)
        joint_rows(data, x, q, (lin, lin.copy(), lin.copy(), error, coordinate))
        return error, coordinate

    def coordinate(self, j: int, inv_mass: np.ndarray, x: np.ndarray, q: np.ndarray) -> float:
        """Joint j's coordinate (hinge angle [rad], slider position [m]) at the poses x, q."""
        return float(self._rows_now(inv_mass, x, q)[1][j])

    def error(self, j: int, inv_mass: np.ndarray, x: np.ndarray, q: np.ndarray) -> float:
        """Joint j's largest equality-row violation at the poses x, q ([m] or [rad])."""
        error, _ = self._rows_now(inv_mass, x, q)
        n = EQUALITY_ROWS[self.joints[j].kind]
        return float(np.abs(error[j, :n]).max())

    def clear_impulses(self) -> None:
        """Drop the impulses carried for the warm start and the last step's wrenches (after a step that was
        undone: integration/guard.py)."""
        self._impulse[...] = 0.0
        self._wrench[...] = 0.0
        self._closure_impulse[...] = 0.0
        self._closure_wrench[...] = 0.0

    # ------------------------------------------------------------------ snapshot
    def snapshot(self) -> dict[str, Any]:
        flags = self._arrays["flags"].copy() if self._arrays is not None else None
        return {"impulse": self._impulse.copy(), "wrench": self._wrench.copy(), "dt": self._dt, "flags": flags,
                "broken": list(self._broken), "closure_impulse": self._closure_impulse.copy(),
                "closure_wrench": self._closure_wrench.copy()}

    def restore(self, snap: dict[str, Any]) -> None:
        self._impulse[...] = snap["impulse"]
        self._wrench[...] = snap["wrench"]
        self._closure_impulse[...] = snap["closure_impulse"]
        self._closure_wrench[...] = snap["closure_wrench"]
        self._dt = snap["dt"]
        self._broken = list(snap["broken"])
        if snap["flags"] is not None and self._arrays is not None:
            self._arrays["flags"][...] = snap["flags"]
        elif self._arrays is not None:
            self._arrays = None
            self._ode = None
            self._closures = None


def _limit_row(joint: Joint) -> list[float]:
    """The joint's row of ``joint_limit`` (joint_rows.LIMIT_SLOTS): unused and unlimited entries ±NO_LIMIT."""
    row = [-NO_LIMIT, NO_LIMIT] * 3
    if joint.limits is not None:
        pairs = joint.limits if joint.kind == BALL else [joint.limits]
        for k, pair in enumerate(pairs):
            if pair is not None:
                row[2 * k], row[2 * k + 1] = pair
    return row
