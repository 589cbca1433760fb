"""One variant of a sweep, as a Dask task runs it: build the world, simulate, and return the row and files.

Everything here runs on a worker (another process, maybe another machine): the task carries the scene's
text (not its path) or the builder function, and returns plain data; the client writes the files. Any
exception a variant raises (a bad value the scene loader refuses, a builder's error, a non-finite step)
becomes ``status = "error"`` and a one-line ``error`` in its row.
"""

from __future__ import annotations

import json
import math
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from ..user.runs import run_summary
from ..user.scene import scene_document, world_from_document
from ..user.trajectory import Trajectory
from ..world import World
from .params import Key, Value, with_values

Figure = Callable[[World, Trajectory], float]
"""A figure of the user's own: fn(world at the end, trajectory of all bodies) -> a number."""


@dataclass(frozen=True)
class Source:
    """What a variant's world is made from: a scene file's ``text`` (its name ``shown`` in messages, its
    varied ``keys``) or a ``builder(params) -> World``."""

    shown: str
    text: str | None = None
    keys: Mapping[str, Key] = field(default_factory=dict)
    builder: Callable[[dict[str, Value]], World] | None = None

    def world(self, params: Mapping[str, Value]) -> World:
        """The world of one parameter set (the scene loader or the builder checks the values)."""
        if self.builder is not None:
            world = self.builder(dict(params))
            if not isinstance(world, World):
                raise TypeError(f"the builder must return a tumble.World, got {type(world).__name__}")
            return world
        doc = with_values(scene_document(self.text, self.shown), self.keys, params)
        return world_from_document(doc, self.text, self.shown)


@dataclass(frozen=True)
class Task:
    """One variant: its parameters, the run (``steps`` of ``dt`` [s], recording every ``record_every``-th
    state) and what to keep: the named bodies' trajectories (``keep``), the final state, figures."""

    params: Mapping[str, Value]
    steps: int
    dt: float
    record_every: int
    keep: tuple[str, ...] = ()
    final_state: bool = False
    figures: tuple[tuple[str, Figure], ...] = ()


def run_variant(source: Source, task: Task) -> dict[str, Any]:
    """Simulate one variant. Returns {"row": status, error and figures (JSON-able), "trajectory": the kept
    bodies' Trajectory or None, "final": the final state's arrays or None}; never raises an Exception."""
    try:
        world = source.world(task.params)
        keep = [_body_index(world, name) for name in task.keep]
        started = time.perf_counter()
        traj = world.simulate(task.steps * task.dt, task.dt, record_every=task.record_every)
        wall = time.perf_counter() - started
        row: dict[str, Any] = {"status": "ok", "error": ""}
        row.update(run_summary(traj, steps=task.steps, dt=task.dt, wall_s=wall))
        for name, fn in task.figures:
            row[name] = _figure(name, fn(world, traj))
        return {"row": row, "trajectory": select_bodies(traj, keep) if keep else None,
                "final": final_state(traj) if task.final_state else None}
    except Exception as exc:  # a variant's failure is data: it goes in its row, and the sweep goes on
        return {"row": {"status": "error", "error": one_line(exc)}, "trajectory": None, "final": None}


def tracks(source: Source, params: Mapping[str, Value], steps: int, dt: float,
           bodies: tuple[str, ...]) -> tuple[np.ndarray, np.ndarray, np.ndarray] | str:
    """The motion of ``bodies`` (names) over ``steps`` steps of ``dt`` [s], every step recorded: times (T,) [s],
    positions (T, k, 3) [m] and orientations (T, k, 4) (w, x, y, z); or the one-line error of a variant that
    failed (what ``fit`` scores as infinitely bad)."""
    try:
        world = source.world(params)
        index = [_body_index(world, name) for name in bodies]
        traj = world.simulate(steps * dt, dt)
        return traj.times, traj.positions[:, index], traj.orientations[:, index]
    except Exception as exc:  # scored, not raised: a fit's bounds may reach values a variant refuses
        return one_line(exc)


def _body_index(world: World, name: str) -> int:
    """The index of the body ``name`` (or, for a name no body has, of the body at that 0-based place)."""
    names = [b.name for b in world.bodies]
    if name in names:
        return names.index(name)
    if name.isdigit() and int(name) < len(names):
        return int(name)
    shown = ", ".join(repr(n) for n in names if n) or "none"
    raise ValueError(f"no body named {name!r} in the world (named: {shown})")


def _figure(name: str, value: Any) -> float:
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise TypeError(f"figure {name!r} must return a number, got {value!r}")
    return float(value)


def select_bodies(traj: Trajectory, index: list[int]) -> Trajectory:
    """``traj`` with only the bodies ``index`` (its per-body arrays and geometry); the per-frame figures
    (energies, momenta, contact counts) stay those of the whole world."""
    geometry = ""
    if traj.geometry:
        whole = json.loads(traj.geometry)
        geometry = json.dumps({"ground": whole["ground"], "bodies": [whole["bodies"][i] for i in index]})
    return replace(traj, positions=traj.positions[:, index], orientations=traj.orientations[:, index],
                   velocities=traj.velocities[:, index], angular_velocities=traj.angular_velocities[:, index],
                   masses=traj.masses[index], names=traj.names[index], geometry=geometry)


def final_state(traj: Trajectory) -> dict[str, np.ndarray]:
    """The last recorded state of every body: time () [s], names (n,), positions (n, 3) [m], orientations
    (n, 4) (w, x, y, z), velocities (n, 3) [m/s], angular_velocities (n, 3) [rad/s], world frame."""
    return {"time": np.array(traj.times[-1]), "names": traj.names, "positions": traj.positions[-1],
            "orientations": traj.orientations[-1], "velocities": traj.velocities[-1],
            "angular_velocities": traj.angular_velocities[-1]}


def one_line(exc: BaseException) -> str:
    """``Type: message`` on one line."""
    text = " ".join(str(exc).split())
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def finite_or_none(value: Any) -> Any:
    """JSON keeps no NaN or infinity: those become None (null)."""
    return None if isinstance(value, float) and not math.isfinite(value) else value
