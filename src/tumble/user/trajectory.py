"""Trajectory: what a simulation recorded, as arrays; saved to ``.npz`` (no pickles) and CSV, replayed in a
browser (``to_html``) and plotted (``plot``)."""

from __future__ import annotations

import json
import math
import os
import tempfile
import time
import zipfile
import zlib
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from ..collision.detect import deepest_penetration
from ..conventions import GeomType
from ..integration import energy as _energy

if TYPE_CHECKING:
    from ..world import World

_FORMAT_VERSION = 2
"""Version 2 added the per-frame contact figures, the geometry and the recorded contacts; version 1 files
still load (those fields empty). The robots' joint arrays (``joint_positions``, ``joint_velocities``,
``joint_names``) are optional members of a version-2 file: one without them (written before robots) loads
with them empty, and a tumble that predates them reads a file with them (it ignores members it does not
know), so they did not need a new version."""

_PER_FRAME_STATS = ("contact_count", "max_penetration", "solver_residual")
_CONTACT_ARRAYS = ("contact_offsets", "contact_points", "contact_normals")
_JOINT_ARRAYS = ("joint_positions", "joint_velocities", "joint_names")
_SENSOR_ARRAYS = ("sensor_names", "sensor_widths", "sensor_values")
"""How ``Trajectory.sensors`` is stored in an ``.npz``: the names (m,), each one's width k (m,) and the rows
side by side (T, Σ k), in the order of the names."""

MAX_STEPS = 2**53
"""The most steps a run may ask for (duration / dt; ``simulate``, ``[run]``): beyond it a step count is no
longer an exact float."""

MAX_RECORDING_FRACTION = 0.5
"""The most a recording's buffers may take, as a fraction of this machine's physical memory (8 GiB is
assumed where it cannot be read): ``simulate`` refuses, before its first step, a run whose recorded frames
(duration / dt / record_every, plus the first and last) would need more, and ``Trajectory.load`` a file whose
arrays would. Beyond it the buffers, allocated lazily, would exhaust the memory part-way through the run."""

_LIMIT_NAME = f"MAX_RECORDING_FRACTION, {MAX_RECORDING_FRACTION:.0%} of this machine's memory"

RECORDED_BYTES_PER_BODY = 13 * 8
"""Bytes one recorded frame takes per body: position (3), orientation (4), velocity (3) and angular velocity
(3), float64."""

RECORDED_BYTES_PER_FRAME = 13 * 8
"""Bytes one recorded frame takes besides the bodies: time, the two energies, the two momenta (3 + 3), the
contact count, deepest penetration, solver residual and contact offset, 8 bytes each."""

RECORDED_BYTES_PER_JOINT_COORDINATE = 8
"""Bytes one recorded frame takes per joint coordinate of the robots (each entry of q and of q̇), float64."""

MAX_NPZ_MEMBERS = 256
"""The most arrays a trajectory file may hold (a tumble trajectory has 22): ``Trajectory.load`` refuses more
before reading any."""

_DEFLATE_MAX_RATIO = 1032
"""The largest expansion deflate can give (RFC 1951: a 258-byte match per 2-bit code, plus block overhead):
a zip member that claims more uncompressed bytes than this many times its compressed size is damaged or
crafted."""


@dataclass(eq=False)
class Trajectory:
    """Recorded states of n bodies at T times. All arrays are world frame, SI units.

    Attributes:
        times: (T,) [s].
        positions: (T, n, 3) COM positions [m].
        orientations: (T, n, 4) unit quaternions (w, x, y, z), body → world.
        velocities: (T, n, 3) COM velocities [m/s].
        angular_velocities: (T, n, 3) ω [rad/s].
        kinetic_energy: (T,) [J]. potential_energy: (T,) [J] (gravity, zero at the origin).
        linear_momentum: (T, 3) [kg m/s]. angular_momentum: (T, 3) about the world origin [kg m²/s].
        masses: (n,) [kg]. names: (n,) body names ("" where none was given).
        contact_count: (T,) contact points of the step that ended at each frame (0 at the first frame).
        max_penetration: (T,) [m] the deepest of those contacts, as detected at the start of that step
            (0 when none penetrates).
        solver_residual: (T,) [m/s] that step's solver residual (``StepStats.residual``).
        geometry: JSON text: the ground height and each body's shapes in its body frame, which ``to_html``
            draws (``world_geometry`` gives the layout); "" when unknown.
        contact_offsets: (T + 1,) int: frame k's recorded contacts are rows offsets[k]:offsets[k+1] of
            contact_points (c, 3) [m] and contact_normals (c, 3) (unit, into the body listed first by
            ``world.contacts()``); all zero unless recorded with ``record_contacts=True``.
        joint_positions: (T, nq) the robots' joint positions q [rad for angles, m for slides; a floating
            base's position in m and its orientation as a unit quaternion (w, x, y, z); a ball joint's
            orientation as a unit quaternion]: every robot's ``robot.q`` concatenated, in the order the robots
            were added (docs/robots.md gives each robot's q order); shape (T, 0) when the world has no robot.
        joint_velocities: (T, nv) the robots' joint velocities q̇ [rad/s, m/s; a floating base's (v, ω) in
            its own frame, a ball joint's ω in the child frame]: every ``robot.qd`` concatenated in the same
            order; shape (T, 0) when the world has no robot.
        joint_names: (nq,) str: what each column of ``joint_positions`` is, "ROBOT/JOINT" for a revolute,
            continuous or prismatic joint; "ROBOT/JOINT_qw", "_qx", "_qy", "_qz" for a ball joint's
            quaternion; "ROBOT/base_x", "base_y", "base_z", "base_qw", "base_qx", "base_qy", "base_qz" for a
            floating base (``joint_coordinate_names``). The robots' link bodies ("ROBOT/LINK") are among the
            bodies above, like any body.
        sensors: name → (T, k) array: each sensor's ``values()`` at each frame (``World.add_sensor``; Imu k = 6:
            specific force [m/s²] then angular velocity [rad/s], sensor frame; ContactForce k = 3 [N], world
            frame; ForceTorque k = 6: force [N] then torque [N m], the joint's child frame; docs/sensors.md),
            in the order the sensors were added; empty when the world has none.
    """

    times: np.ndarray
    positions: np.ndarray
    orientations: np.ndarray
    velocities: np.ndarray
    angular_velocities: np.ndarray
    kinetic_energy: np.ndarray
    potential_energy: np.ndarray
    linear_momentum: np.ndarray
    angular_momentum: np.ndarray
    masses: np.ndarray
    names: np.ndarray
    contact_count: np.ndarray | None = None
    max_penetration: np.ndarray | None = None
    solver_residual: np.ndarray | None = None
    geometry: str = ""
    contact_offsets: np.ndarray | None = None
    contact_points: np.ndarray | None = None
    contact_normals: np.ndarray | None = None
    joint_positions: np.ndarray | None = None
    joint_velocities: np.ndarray | None = None
    joint_names: np.ndarray | None = None
    sensors: dict[str, np.ndarray] = field(default_factory=dict)

    def __post_init__(self) -> None:
        T = self.times.shape[0]
        for name in ("joint_positions", "joint_velocities"):
            if getattr(self, name) is None:
                setattr(self, name, np.zeros((T, 0)))
        if self.joint_names is None:
            self.joint_names = np.full(self.joint_positions.shape[1], "", dtype=str)
        if self.contact_count is None:
            self.contact_count = np.zeros(T, dtype=np.int64)
        for name in ("max_penetration", "solver_residual"):
            if getattr(self, name) is None:
                setattr(self, name, np.zeros(T))
        if self.contact_offsets is None:
            self.contact_offsets = np.zeros(T + 1, dtype=np.int64)
        for name in ("contact_points", "contact_normals"):
            if getattr(self, name) is None:
                setattr(self, name, np.zeros((0, 3)))

    @property
    def fixed(self) -> np.ndarray:
        """(n,) bool: which bodies are fixed (the ground, walls), from the geometry; bodies of zero mass
        when the trajectory has no geometry."""
        if self.geometry:
            return np.array([body["fixed"] for body in json.loads(self.geometry)["bodies"]], dtype=bool)
        return self.masses == 0.0

    @property
    def kinematic(self) -> np.ndarray:
        """(n,) bool: which bodies are kinematic (moved as set, ``add_body(..., kinematic=True)``), from the
        geometry; all False when the trajectory has none."""
        if self.geometry:
            return np.array([body.get("kinematic", False) for body in json.loads(self.geometry)["bodies"]],
                            dtype=bool)
        return np.zeros(self.masses.shape[0], dtype=bool)

    @property
    def energy(self) -> np.ndarray:
        """(T,) total mechanical energy, kinetic + potential [J]."""
        return self.kinetic_energy + self.potential_energy

    def __len__(self) -> int:
        return self.times.shape[0]

    def save(self, path: str | os.PathLike) -> Path:
        """Write an ``.npz`` file (plain arrays, no pickles) atomically; returns the path."""
        arrays = {f.name: getattr(self, f.name) for f in fields(self) if f.name != "sensors"}
        arrays.update(_sensor_members(self.sensors, self.times.shape[0]))
        arrays["geometry"] = np.array(self.geometry)
        arrays["format_version"] = np.array(_FORMAT_VERSION)
        return _atomic_write(Path(path), lambda fh: np.savez_compressed(fh, **arrays))

    @classmethod
    def load(cls, path: str | os.PathLike) -> Trajectory:
        """Read a file written by ``save`` (with ``allow_pickle=False``); files of format 1 load with the
        contact figures zero and no geometry, and files written before robots with the joint arrays of
        shape (T, 0).

        Before any array is read, every array's header is checked against the bytes the file holds for it
        (so a header that claims terabytes is refused, not allocated) and the arrays together against
        ``MAX_RECORDING_FRACTION`` of the memory; after, the arrays' kinds and shapes and the geometry.

        Raises:
            TypeError: ``path`` is not a path.
            ValueError: naming the file (and the array or geometry key): it cannot be read, is not an
                ``.npz`` archive of plain arrays, is damaged or too large, or is not a consistent trajectory.
        """
        if not isinstance(path, (str, os.PathLike)):
            raise TypeError(f"path must be a file path (str or os.PathLike), got {path!r}")
        path = Path(path)
        _check_npz(path)
        try:
            with np.load(path, allow_pickle=False) as data:
                arrays = {name: data[name] for name in data.files}
        except (OSError, EOFError, ValueError, zipfile.BadZipFile, zlib.error) as exc:
            raise ValueError(f"path {str(path)!r} could not be read as a trajectory: {exc}") from None
        optional = _PER_FRAME_STATS + _CONTACT_ARRAYS + _JOINT_ARRAYS + ("geometry", "sensors")
        required = [f.name for f in fields(cls) if f.name not in optional]
        missing = [name for name in required + ["format_version"] if name not in arrays]
        if missing:
            raise ValueError(f"path {str(path)!r} is not a tumble trajectory: missing {missing}")
        version_array = arrays["format_version"]
        if version_array.shape != () or version_array.dtype.kind not in "iu":
            raise ValueError(f"path {str(path)!r} is not a tumble trajectory: format_version must be one integer, "
                             f"got {version_array.dtype} of shape {version_array.shape}")
        version = int(version_array)
        if version > _FORMAT_VERSION:
            raise ValueError(f"path {str(path)!r} has format version {version}, "
                             f"newer than this tumble reads ({_FORMAT_VERSION})")
        kwargs: dict[str, Any] = {f.name: arrays[f.name] for f in fields(cls) if f.name in arrays}
        if "geometry" in kwargs:
            geometry = kwargs["geometry"]
            if geometry.shape != () or geometry.dtype.kind != "U":
                raise ValueError(f"path {str(path)!r} is not a consistent trajectory: geometry must be one string "
                                 f"(JSON), got {geometry.dtype} of shape {geometry.shape}")
            kwargs["geometry"] = str(geometry[()])
        kwargs["sensors"] = _sensors_of(path, arrays, arrays["times"].shape[0])
        traj = cls(**kwargs)
        traj._check_shapes(path)
        if traj.geometry:
            _check_geometry(path, traj.geometry, traj.positions.shape[1])
        return traj

    def _check_shapes(self, path: Path) -> None:
        """Refuse a file whose arrays are not numbers (names: text) or disagree in T or n (a damaged or
        hand-made file)."""
        for f in fields(self):
            value = getattr(self, f.name)
            if f.name in ("geometry", "sensors"):   # (the sensors are checked as read: ``_sensors_of``)
                continue
            wanted = ("U" if f.name in ("names", "joint_names") else "iu"
                      if f.name in ("contact_count", "contact_offsets") else "biuf")
            if value.dtype.kind not in wanted:
                raise ValueError(f"path {str(path)!r} is not a consistent trajectory: {f.name} holds {value.dtype}, "
                                 f"expected {'text' if wanted == 'U' else 'integers' if wanted == 'iu' else 'numbers'}")
        T, n = self.positions.shape[:2] if self.positions.ndim == 3 else (-1, -1)
        nq = self.joint_names.shape[0] if self.joint_names.ndim == 1 else -1
        nv = self.joint_velocities.shape[1] if self.joint_velocities.ndim == 2 else -1
        expected = {"times": (T,), "positions": (T, n, 3), "orientations": (T, n, 4), "velocities": (T, n, 3),
                    "angular_velocities": (T, n, 3), "kinetic_energy": (T,), "potential_energy": (T,),
                    "linear_momentum": (T, 3), "angular_momentum": (T, 3), "masses": (n,), "names": (n,),
                    "contact_count": (T,), "max_penetration": (T,), "solver_residual": (T,),
                    "contact_offsets": (T + 1,), "joint_names": (nq,), "joint_positions": (T, nq),
                    "joint_velocities": (T, nv)}
        for name, shape in expected.items():
            if getattr(self, name).shape != shape:
                raise ValueError(f"path {str(path)!r} is not a consistent trajectory: {name} has shape "
                                 f"{getattr(self, name).shape}, expected {shape}")
        offsets = self.contact_offsets
        if offsets[0] != 0 or np.any(np.diff(offsets) < 0):
            raise ValueError(f"path {str(path)!r} is not a consistent trajectory: contact_offsets must start at 0 "
                             f"and not decrease")
        c = int(offsets[-1])
        if self.contact_points.shape != (c, 3) or self.contact_normals.shape != (c, 3):
            raise ValueError(f"path {str(path)!r} is not a consistent trajectory: {c} contacts recorded but "
                             f"contact_points has shape {self.contact_points.shape}")

    def frames(self, stop: int) -> Trajectory:
        """The first ``stop`` frames as a new Trajectory (views where possible)."""
        off = self.contact_offsets[:stop + 1]
        kw: dict[str, Any] = {}
        for f in fields(self):
            value = getattr(self, f.name)
            if f.name in ("masses", "names", "geometry", "joint_names"):
                kw[f.name] = value
            elif f.name == "contact_offsets":
                kw[f.name] = off
            elif f.name == "sensors":
                kw[f.name] = {name: rows[:stop] for name, rows in value.items()}
            elif f.name in ("contact_points", "contact_normals"):
                kw[f.name] = value[:int(off[-1])]
            else:
                kw[f.name] = value[:stop]
        return Trajectory(**kw)

    def to_csv(self, path: str | os.PathLike) -> Path:
        """Write one row per (time, body): time, body, x, y, z, qw, qx, qy, qz, vx, vy, vz, wx, wy, wz, then
        each sensor's k columns "NAME[j]" (j = 0 … k − 1, the components of ``sensors[NAME]``), the same on
        every body's row of a time."""
        T, n = self.positions.shape[:2]
        table = np.concatenate([
            np.repeat(self.times, n)[:, None], np.tile(np.arange(n), T)[:, None],
            self.positions.reshape(-1, 3), self.orientations.reshape(-1, 4),
            self.velocities.reshape(-1, 3), self.angular_velocities.reshape(-1, 3)]
            + [np.repeat(rows, n, axis=0) for rows in self.sensors.values()], axis=1)
        header = "time,body,x,y,z,qw,qx,qy,qz,vx,vy,vz,wx,wy,wz" + "".join(
            f",{name}[{j}]" for name, rows in self.sensors.items() for j in range(rows.shape[1]))
        fmt = ["%.17g", "%d"] + ["%.17g"] * (table.shape[1] - 2)
        return _atomic_write(Path(path), lambda fh: np.savetxt(fh, table, delimiter=",", header=header,
                                                               comments="", fmt=fmt))

    def plot(self, path: str | os.PathLike) -> Path:
        """Plot the run's figures against time to one image file (matplotlib: ``pip install tumble[plot]``).

        Panels: energy (kinetic, potential, total) [J]; |linear momentum| [kg m/s] and |angular momentum|
        about the origin [kg m²/s]; and, when the run had contacts, the contact count, the deepest
        penetration [mm] and the solver residual [m/s]. The format follows the suffix (png, svg, pdf).
        """
        try:
            import matplotlib
            matplotlib.use("Agg")
            import matplotlib.pyplot as plt
        except ImportError:
            raise ImportError("plotting needs matplotlib: pip install 'tumble[plot]'") from None
        with_contacts = bool(np.any(self.contact_count))
        rows = 5 if with_contacts else 2
        fig, axes = plt.subplots(rows, 1, sharex=True, figsize=(7, 1.9 * rows + 0.6), constrained_layout=True)
        t = self.times
        ax = axes[0]
        ax.plot(t, self.kinetic_energy, label="kinetic")
        ax.plot(t, self.potential_energy, label="potential")
        ax.plot(t, self.energy, label="total", color="k")
        ax.set_ylabel("energy [J]")
        ax.legend(loc="best", fontsize="small")
        ax = axes[1]
        ax.plot(t, np.linalg.norm(self.linear_momentum, axis=1), label="|p| [kg m/s]")
        ax.plot(t, np.linalg.norm(self.angular_momentum, axis=1), label="|L| [kg m²/s]")
        ax.set_ylabel("momentum")
        ax.legend(loc="best", fontsize="small")
        if with_contacts:
            axes[2].plot(t, self.contact_count, drawstyle="steps-post")
            axes[2].set_ylabel("contacts")
            axes[3].plot(t, 1e3 * self.max_penetration)
            axes[3].set_ylabel("max penetration [mm]")
            # no contacts, no solve: leave those frames out rather than plot a residual of zero
            axes[4].semilogy(t, np.where(self.contact_count > 0, np.maximum(self.solver_residual, 1e-16), np.nan))
            axes[4].set_ylabel("residual [m/s]")
        axes[-1].set_xlabel("time [s]")
        for ax in axes:
            ax.grid(True, alpha=0.3)
        fmt = Path(path).suffix.lstrip(".") or "png"
        path = _atomic_write(Path(path), lambda fh: fig.savefig(fh, format=fmt, dpi=110))
        plt.close(fig)
        return path

    def to_html(self, path: str | os.PathLike, *, title: str = "tumble replay", contacts: bool = True,
                fps: float = 60.0) -> Path:
        """Write a self-contained HTML replay (three.js inlined; opens offline in any browser): every body
        with its shapes and pose, the ground, play/pause/scrub/speed and an orbit camera; with
        ``contacts`` and contacts recorded (``simulate(..., record_contacts=True)``) their points and
        normals can be shown. Needs the geometry the recording stores (trajectories of tumble >= 0.1
        format 2). Returns the path; the file is written atomically."""
        from .replay import write_replay

        if not self.geometry:
            raise ValueError("this trajectory has no geometry to draw (it was saved by an older tumble); "
                             "record it again with world.simulate")
        geometry = json.loads(self.geometry)
        bodies = [{"name": str(name), "fixed": body["fixed"], "parts": body["parts"]}
                  for name, body in zip(self.names, geometry["bodies"], strict=True)]
        recorded = None
        if contacts and int(self.contact_offsets[-1]) > 0:
            recorded = {"offsets": self.contact_offsets, "points": self.contact_points,
                        "normals": self.contact_normals}
        return write_replay(path, times=self.times, positions=self.positions, orientations=self.orientations,
                            bodies=bodies, ground=geometry["ground"], contacts=recorded, title=title, fps=fps)



def _sensor_members(sensors: dict[str, np.ndarray], T: int) -> dict[str, np.ndarray]:
    """``Trajectory.sensors`` as the plain arrays of ``_SENSOR_ARRAYS`` (no pickles)."""
    names = list(sensors)
    return {"sensor_names": np.array(names, dtype=str).reshape(len(names)),
            "sensor_widths": np.array([sensors[k].shape[1] for k in names], dtype=np.int64),
            "sensor_values": (np.concatenate([sensors[k] for k in names], axis=1) if names
                              else np.zeros((T, 0)))}


def _sensors_of(path: Path, arrays: dict[str, np.ndarray], T: int) -> dict[str, np.ndarray]:
    """The sensors dict from a file's ``_SENSOR_ARRAYS`` (none: {}, a file written before sensors), checked:
    ValueError naming the file when they disagree."""
    present = [name for name in _SENSOR_ARRAYS if name in arrays]
    if not present:
        return {}
    bad = f"path {str(path)!r} is not a consistent trajectory: "
    if len(present) != len(_SENSOR_ARRAYS):
        raise ValueError(bad + f"it has {present} but not all of {list(_SENSOR_ARRAYS)}")
    names, widths, values = (arrays[name] for name in _SENSOR_ARRAYS)
    if names.ndim != 1 or (names.size and names.dtype.kind != "U"):
        raise ValueError(bad + f"sensor_names must be text (m,), got {names.dtype} of shape {names.shape}")
    if widths.shape != names.shape or widths.dtype.kind not in "iu" or np.any(widths < 1):
        raise ValueError(bad + f"sensor_widths must be {names.shape[0]} positive integers, got {widths!r}")
    if len(set(names.tolist())) != names.shape[0]:
        raise ValueError(bad + f"sensor_names must be unique, got {names.tolist()}")
    if values.dtype.kind not in "biuf" or values.shape != (T, int(widths.sum())):
        raise ValueError(bad + f"sensor_values has shape {values.shape} ({values.dtype}), expected "
                               f"{(T, int(widths.sum()))} numbers")
    ends = np.cumsum(widths)
    return {str(name): values[:, end - k:end].astype(float) for name, k, end in zip(names, widths, ends, strict=True)}


def _umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def _atomic_write(path: Path, write: Any) -> Path:
    """Write through a temporary file in the same directory, flushed to the disk (fsync), then rename: never a
    half-written file, even after a power cut (a rename can reach the disk before the data it names unless the
    data is synced first). The folder is synced after the rename, where the system allows it."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as fh:
            write(fh)
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(tmp, 0o666 & ~_umask())  # mkstemp makes the file private (0600); give it the usual mode
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    _sync_folder(path.parent)
    return path


def _sync_folder(folder: Path) -> None:
    """fsync a folder (its entries: a rename in it) where the system allows it (not on Windows)."""
    try:
        fd = os.open(folder, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def memory_limit_bytes() -> int:
    """The most bytes a recording, or a trajectory file's arrays, may take here: ``MAX_RECORDING_FRACTION``
    of the physical memory."""
    try:
        total = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (AttributeError, ValueError, OSError):
        total = 8 * 2**30
    return int(MAX_RECORDING_FRACTION * total)


def recorded_frames(steps: int, record_every: int) -> int:
    """Frames ``record_simulation`` records over ``steps`` steps: every ``record_every``-th state from the
    first, plus the last."""
    return steps // record_every + 1 + (1 if steps % record_every else 0)


def check_recording(steps: int, record_every: int, bodies: int, joint_coordinates: int = 0) -> int:
    """The frames a run of ``steps`` steps records for ``bodies`` bodies and ``joint_coordinates`` robot
    joint coordinates (nq + nv of all robots); ValueError, naming ``duration`` and ``record_every``, if their
    buffers would take more than ``memory_limit_bytes()``."""
    frames = recorded_frames(steps, record_every)
    need = frames * (RECORDED_BYTES_PER_FRAME + bodies * RECORDED_BYTES_PER_BODY
                     + joint_coordinates * RECORDED_BYTES_PER_JOINT_COORDINATE)
    limit = memory_limit_bytes()
    if need > limit:
        joints = f" and {joint_coordinates} joint coordinates" if joint_coordinates else ""
        raise ValueError(f"recording {frames:,} frames ({steps:,} steps, record_every={record_every}) of {bodies} "
                         f"bodies{joints} would take {need / 2**30:.3g} GiB, more than the limit of "
                         f"{limit / 2**30:.3g} GiB ({_LIMIT_NAME}): give a larger record_every or a shorter duration")
    return frames


def checkpoint_path(checkpoint: Any) -> Path | None:
    """``checkpoint`` as a Path, after checking that a file can be written there: a non-empty path (str or
    os.PathLike) that is not a folder, in a folder that exists and is writable; None for None.

    Raises:
        TypeError: not a path. ValueError: an empty path, a folder, or a folder that does not exist or is
            not writable (nothing is created).
    """
    if checkpoint is None:
        return None
    text = os.fspath(checkpoint) if isinstance(checkpoint, (str, os.PathLike)) else None
    if not isinstance(text, str):
        raise TypeError(f"checkpoint must be a file path (str or os.PathLike) or None, got {checkpoint!r}")
    if not text:
        raise ValueError("checkpoint must name a file, got an empty path ''")
    path = Path(text)
    if path.is_dir():
        raise ValueError(f"checkpoint must name a file, got the folder {text!r}")
    folder = path.parent
    if not folder.is_dir():
        what = "is not a folder" if folder.exists() else "does not exist"
        raise ValueError(f"checkpoint {text!r}: its folder {str(folder)!r} {what} (it is not created)")
    if not os.access(folder, os.W_OK | os.X_OK):
        raise ValueError(f"checkpoint {text!r}: its folder {str(folder)!r} is not writable")
    return path


def _check_npz(path: Path) -> None:
    """Refuse, before any array is read, a file that is not a zip archive of ``.npy`` arrays of plain
    numbers or text, or whose arrays claim more bytes than it holds: each header's shape × item size must fit
    in the bytes its member holds, each member's uncompressed size must be one deflate can give from its
    compressed size, and all of it must fit in ``memory_limit_bytes()``."""
    shown = str(path)
    try:
        if path.is_dir():
            raise ValueError(f"path {shown!r} is a folder, not an .npz trajectory")
        if not zipfile.is_zipfile(path):
            raise ValueError(f"path {shown!r} is not an .npz trajectory (not a zip archive of arrays)")
        with zipfile.ZipFile(path) as archive:
            members = archive.infolist()
            if len(members) > MAX_NPZ_MEMBERS:
                raise ValueError(f"path {shown!r} is not a tumble trajectory: {len(members)} members, at most "
                                 f"{MAX_NPZ_MEMBERS}")
            total = 0
            for info in members:
                total += _check_npz_member(shown, archive, info)
    except (OSError, EOFError, zipfile.BadZipFile, zlib.error, NotImplementedError) as exc:
        raise ValueError(f"path {shown!r} could not be read as a trajectory: {exc}") from None
    limit = memory_limit_bytes()
    if total > limit:
        raise ValueError(f"path {shown!r}: its arrays take {total / 2**30:.3g} GiB, more than the limit of "
                         f"{limit / 2**30:.3g} GiB ({_LIMIT_NAME})")


def _check_npz_member(shown: str, archive: zipfile.ZipFile, info: zipfile.ZipInfo) -> int:
    """The bytes the ``.npy`` member ``info`` holds, after checking its header (``_check_npz``)."""
    name = info.filename
    where = f"path {shown!r}: array {name.removesuffix('.npy')!r}"
    if not name.endswith(".npy"):
        raise ValueError(f"path {shown!r} is not an .npz trajectory: member {name!r} is not an .npy array")
    if info.compress_type == zipfile.ZIP_STORED:
        plausible = info.file_size == info.compress_size
    elif info.compress_type == zipfile.ZIP_DEFLATED:
        plausible = info.file_size <= _DEFLATE_MAX_RATIO * info.compress_size + 1024
    else:
        raise ValueError(f"{where} uses zip compression method {info.compress_type}; a trajectory uses "
                         f"deflate or none")
    if not plausible:
        raise ValueError(f"{where} is damaged: it claims {info.file_size:,} bytes from {info.compress_size:,} "
                         f"compressed")
    with archive.open(info) as fh:
        try:
            version = np.lib.format.read_magic(fh)
            if version == (1, 0):
                shape, _, dtype = np.lib.format.read_array_header_1_0(fh)
            elif version == (2, 0):
                shape, _, dtype = np.lib.format.read_array_header_2_0(fh)
            else:
                raise ValueError(f"format version {version[0]}.{version[1]}; a trajectory uses 1.0 or 2.0")
        except ValueError as exc:
            raise ValueError(f"{where} has a bad .npy header: {' '.join(str(exc).split())}") from None
        data_bytes = info.file_size - fh.tell()
    if dtype.hasobject:
        raise ValueError(f"{where} holds Python objects ({dtype}); a trajectory holds plain numbers and text")
    claimed = math.prod(shape) * dtype.itemsize
    if claimed > data_bytes:
        raise ValueError(f"{where} claims shape {shape} of {dtype} ({claimed:,} bytes) but the file holds "
                         f"{max(data_bytes, 0):,} bytes for it")
    return claimed


def _check_geometry(path: Path, text: str, bodies: int) -> None:
    """Refuse geometry JSON that ``to_html`` could not draw, naming the file and the key."""
    where = f"path {str(path)!r}: geometry"
    try:
        geometry = json.loads(text)
    except (ValueError, RecursionError) as exc:
        problem = "nested too deeply" if isinstance(exc, RecursionError) else str(exc)
        raise ValueError(f"{where}: not valid JSON: {problem}") from None
    if not isinstance(geometry, dict) or not {"ground", "bodies"} <= set(geometry):
        raise ValueError(f"{where}: must be a JSON object with 'ground' and 'bodies', got {text[:60]!r}")
    ground = geometry["ground"]
    if ground is not None and (isinstance(ground, bool) or not isinstance(ground, (int, float))
                               or not math.isfinite(ground)):
        raise ValueError(f"{where}.ground: must be null or a finite number (height [m]), got {ground!r}")
    entries = geometry["bodies"]
    if not isinstance(entries, list) or len(entries) != bodies:
        got = f"{len(entries)} entries" if isinstance(entries, list) else type(entries).__name__
        raise ValueError(f"{where}.bodies: must be a list of {bodies} entries (one per body), got {got}")
    for i, entry in enumerate(entries):
        if not isinstance(entry, dict) or not isinstance(entry.get("fixed"), bool) or "parts" not in entry:
            raise ValueError(f"{where}.bodies[{i}]: must be an object with 'fixed' (true or false) and 'parts', "
                             f"got {str(entry)[:60]}")
        if not isinstance(entry.get("kinematic", False), bool):
            raise ValueError(f"{where}.bodies[{i}].kinematic: must be true or false, got {entry['kinematic']!r}")
    from .replay import _check_bodies

    try:
        _check_bodies([{"name": "", "fixed": entry["fixed"], "parts": entry["parts"]} for entry in entries])
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{where}.{exc}") from None


def world_geometry(world: World) -> dict[str, Any]:
    """The world's shapes as plain data (what a replay draws), every part in its body's frame.

    Returns {"ground": height [m] or None, "bodies": [{"fixed": bool, "parts": [part, ...]}, ...]} (a kinematic
    body's entry has "kinematic": true, and "fixed" false: it moves) with one
    entry per body in index order. A part has "type", "position" (3,) [m] and "orientation" (4,) (w, x,
    y, z) in the body frame (origin at the COM), and its sizes [m]: box "half_extents"; sphere "radius";
    capsule "radius", "half_length"; cylinder "radius", "half_height"; ellipsoid "semi_axes"; hull
    "vertices" (k, 3) and "faces" (polygons of vertex indices, counter-clockwise seen from outside);
    plane (the ground) nothing more. The first plane found sets "ground".
    """
    geom = world.model.geometry()
    geom = {name: getattr(geom, name) for name in ("geom_type", "geom_body", "geom_pos", "geom_quat", "geom_size",
                                                   "geom_vert_start", "geom_vert_count", "geom_face_start",
                                                   "geom_face_count")}
    poly = world.model.polytopes.arrays()
    model = world.model.bodies()
    body = {"inv_mass": model.inv_mass, "x": world.state.bodies().x}
    bodies: list[dict[str, Any]] = [{"fixed": bool(model.inv_mass[i] == 0.0 and not model.kinematic[i]), "parts": []}
                                    for i in range(world.body_count)]
    for i in np.flatnonzero(model.kinematic[:world.body_count]):
        bodies[i]["kinematic"] = True
    ground = None
    for g in range(geom["geom_type"].shape[0]):
        kind = GeomType(int(geom["geom_type"][g]))
        size = geom["geom_size"][g]
        part: dict[str, Any] = {"type": _PART_TYPE[kind], "position": geom["geom_pos"][g].tolist(),
                                "orientation": geom["geom_quat"][g].tolist()}
        b = int(geom["geom_body"][g])
        if kind == GeomType.PLANE:
            if ground is None:
                ground = float(body["x"][b, 2])
        elif kind == GeomType.BOX:
            part["half_extents"] = size.tolist()
        elif kind == GeomType.SPHERE:
            part["radius"] = float(size[0])
        elif kind == GeomType.CAPSULE:
            part["radius"], part["half_length"] = float(size[0]), float(size[1])
        elif kind == GeomType.CYLINDER:
            part["radius"], part["half_height"] = float(size[0]), float(size[1])
        elif kind == GeomType.ELLIPSOID:
            part["semi_axes"] = size.tolist()
        else:
            part["vertices"], part["faces"] = _hull_faces(poly, int(geom["geom_vert_start"][g]),
                                                          int(geom["geom_vert_count"][g]),
                                                          int(geom["geom_face_start"][g]),
                                                          int(geom["geom_face_count"][g]))
        bodies[b]["parts"].append(part)
    return {"ground": ground, "bodies": bodies}


_PART_TYPE = {GeomType.SPHERE: "sphere", GeomType.BOX: "box", GeomType.CAPSULE: "capsule",
              GeomType.CYLINDER: "cylinder", GeomType.ELLIPSOID: "ellipsoid", GeomType.CONVEX_HULL: "hull",
              GeomType.PLANE: "plane"}


def _hull_faces(poly: dict[str, np.ndarray], v0: int, nv: int, f0: int, nf: int) -> tuple[list, list]:
    """A polytope's vertices and its faces as index polygons wound counter-clockwise about the outward
    face normal (the winding a renderer needs; the table stores the normal, so it is checked, not assumed)."""
    vertices = poly["vertices"][v0:v0 + nv]
    faces = []
    for f in range(f0, f0 + nf):
        start, count = int(poly["face_vstart"][f]), int(poly["face_vcount"][f])
        loop = [int(k) for k in poly["face_verts"][start:start + count]]
        p = vertices[loop]
        area_normal = np.cross(p[1:-1] - p[0], p[2:] - p[0]).sum(axis=0)
        if area_normal @ poly["face_normal"][f] < 0.0:
            loop.reverse()
        faces.append(loop)
    return vertices.tolist(), faces


class SimulationInterrupted(KeyboardInterrupt):
    """Ctrl-C (or any KeyboardInterrupt: ``tumble run`` turns SIGTERM into one) during ``record_simulation``:
    carries what was recorded up to the interruption (``trajectory``), the checkpoint file written with it
    (``path``, or None) and the KeyboardInterrupt that stopped it (``interrupt``)."""

    def __init__(self, trajectory: Trajectory, path: Path | None,
                 interrupt: KeyboardInterrupt | None = None) -> None:
        super().__init__("simulation interrupted")
        self.trajectory = trajectory
        self.path = path
        self.interrupt = interrupt


def joint_coordinate_names(world: World) -> list[str]:
    """Names of the entries of the robots' q, all robots concatenated in the order added (``Trajectory``
    ``joint_names``): "ROBOT/NAME" with NAME from ``Robot.q_names`` ("JOINT" for an angle or a slide,
    "JOINT_qw" … for a ball joint, "base_x" … "base_qz" for a floating base)."""
    return [f"{robot.name}/{name}" for robot in world.robots for name in robot.q_names]


class Recorder:
    """Records a world's state into arrays allocated once for ``frames`` frames.

    Each ``record()`` copies the state (the bodies' and the robots' q and q̇), runs one energy kernel and
    reads the last step's figures; with ``record_contacts`` it also reads the contacts (one small allocation
    per recorded frame).
    """

    def __init__(self, world: World, frames: int, *, record_contacts: bool = False) -> None:
        n, T = world.body_count, frames
        joints = world.model.robots.state
        nq, nv = joints.q.shape[0], joints.qd.shape[0]
        self.world = world
        self.count = 0
        self.record_contacts = record_contacts
        self._traj = Trajectory(
            times=np.empty(T), positions=np.empty((T, n, 3)), orientations=np.empty((T, n, 4)),
            velocities=np.empty((T, n, 3)), angular_velocities=np.empty((T, n, 3)),
            kinetic_energy=np.empty(T), potential_energy=np.empty(T), linear_momentum=np.empty((T, 3)),
            angular_momentum=np.empty((T, 3)), masses=world.model.bodies().mass.copy(),
            names=np.array([name or "" for name in world.model.names], dtype=str),
            geometry=json.dumps(world_geometry(world)), joint_positions=np.empty((T, nq)),
            joint_velocities=np.empty((T, nv)), joint_names=np.array(joint_coordinate_names(world), dtype=str),
            sensors={name: np.empty((T, sensor.width)) for name, sensor in world.sensors.items()},
        )
        self._sensors = world.sensors
        self._points: list[np.ndarray] = []
        self._normals: list[np.ndarray] = []
        self._totals = np.empty(_energy.SIZE)
        self._origin = np.zeros(3)

    def record(self, after_step: bool) -> None:
        """Store the current state as the next frame; ``after_step`` says whether a step produced it (so
        its contact figures are this state's; the initial state has none)."""
        k, w, tr = self.count, self.world, self._traj
        body, st = w.model.bodies(), w.state.bodies()
        tr.times[k] = w.time
        tr.positions[k] = st.x
        tr.orientations[k] = st.q
        tr.velocities[k] = st.v
        tr.angular_velocities[k] = st.w
        joints = w.model.robots.state        # read at each frame: adding a robot replaces these arrays
        tr.joint_positions[k] = joints.q
        tr.joint_velocities[k] = joints.qd
        for name, sensor in self._sensors.items():
            tr.sensors[name][k] = sensor.values()
        _energy.energy_momentum(body.mass, body.inv_mass, body.inertia_body, st.x, st.q, st.v, st.w,
                                w.model.gravity, self._origin, self._totals)
        tr.kinetic_energy[k] = self._totals[_energy.KINETIC]
        tr.potential_energy[k] = self._totals[_energy.POTENTIAL]
        tr.linear_momentum[k] = self._totals[_energy.MOMENTUM]
        tr.angular_momentum[k] = self._totals[_energy.ANGULAR_MOMENTUM]
        stats = w.step_stats
        tr.contact_count[k] = stats.contacts if after_step else 0
        tr.solver_residual[k] = stats.residual if after_step else 0.0
        depth, points, normals = 0.0, None, None
        if after_step and self.record_contacts:
            contacts = w.contacts()
            if len(contacts):
                depth = max(0.0, float(contacts.depth.max()))
            points, normals = contacts.point, contacts.normal
        if after_step and (w.method == "event" or (stats.contacts and not self.record_contacts)):
            # read in place (recording every step must not allocate); the event method's deepest contact need
            # not be a resting one (``contacts()`` reports those): its buffer has them all
            buffer = w.contact_buffer()
            depth = deepest_penetration(buffer.pairs.live("pair_contacts"), buffer.slots.live("depth"))
        tr.max_penetration[k] = depth
        added = points.shape[0] if self.record_contacts and points is not None else 0
        tr.contact_offsets[k + 1] = tr.contact_offsets[k] + added
        if added:
            self._points.append(points)
            self._normals.append(normals)
        self.count += 1  # last: a frame interrupted half-way is not counted

    def trajectory(self) -> Trajectory:
        """The frames recorded so far (views of the buffers, plus the contacts joined)."""
        traj = self._traj.frames(self.count)
        c = int(traj.contact_offsets[-1])
        if c:
            traj.contact_points = np.concatenate(self._points)[:c]
            traj.contact_normals = np.concatenate(self._normals)[:c]
        return traj


def record_simulation(world: World, steps: int, dt: float, record_every: int, progress: bool, *,
                      record_contacts: bool = False, checkpoint: str | os.PathLike | None = None,
                      checkpoint_seconds: float = 5.0) -> Trajectory:
    """Step ``world`` ``steps`` times, recording every ``record_every``-th state (and the first and last).

    Buffers are allocated once up front, for the recorded frames only: nothing grows with the number of
    steps. With ``checkpoint`` (an ``.npz`` path) the frames so far are saved there (atomically) every
    ``checkpoint_seconds`` of wall time and at the end, so an interrupted or killed run leaves a valid file of
    what it had. Ctrl-C raises ``SimulationInterrupted`` carrying the partial trajectory (saved to
    ``checkpoint`` first, when given). A step that raises ``NonFiniteStep`` (or the event method's
    ``EventBudgetExceeded``) and was undone: the frames so far are saved likewise and the error, re-raised, carries
    them as ``trajectory`` and the file as ``path``.

    Raises (before the first step):
        TypeError: ``checkpoint`` is not a path.
        ValueError: ``checkpoint`` is empty, a folder, or in a folder that does not exist or is not
            writable; or the recorded frames would take more than ``memory_limit_bytes()``.
    """
    path = checkpoint_path(checkpoint)
    joints = world.model.robots.state
    frames = check_recording(steps, record_every, world.body_count, joints.q.shape[0] + joints.qd.shape[0])
    recorder = Recorder(world, frames, record_contacts=record_contacts)
    bar = None
    if progress:
        from tqdm import tqdm
        bar = tqdm(total=steps, unit="step", desc="simulate", mininterval=0.5)
    last_save = time.perf_counter()
    try:
        recorder.record(after_step=False)
        for s in range(1, steps + 1):
            world.step(dt)
            if bar is not None:
                bar.update(1)
            if s % record_every == 0 or s == steps:
                recorder.record(after_step=True)
                if path is not None and time.perf_counter() - last_save > checkpoint_seconds:
                    recorder.trajectory().save(path)
                    last_save = time.perf_counter()
    except KeyboardInterrupt as stop:
        partial = recorder.trajectory()
        if path is not None:
            partial.save(path)
        raise SimulationInterrupted(partial, path, stop) from None
    except Exception as error:
        # a step that was undone (NonFiniteStep, the event method's EventBudgetExceeded): keep what was recorded
        if isinstance(error, FloatingPointError) or getattr(error, "user_error", False):
            partial = recorder.trajectory()
            if path is not None:
                partial.save(path)
            error.trajectory, error.path = partial, path   # type: ignore[attr-defined]
        raise
    finally:
        if bar is not None:
            bar.close()
    traj = recorder.trajectory()
    if path is not None:
        traj.save(path)
    return traj
