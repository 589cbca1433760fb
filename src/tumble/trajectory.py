"""Trajectory: what a simulation recorded, as arrays; saved to ``.npz`` (no pickles) and CSV."""

from __future__ import annotations

import os
import tempfile
import zipfile
from dataclasses import dataclass, fields
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from .dynamics import energy as _energy
from .step import step

if TYPE_CHECKING:
    from .world import World

_FORMAT_VERSION = 1


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

    @property
    def energy(self) -> np.ndarray:
        """(T,) total mechanical energy, kinetic + potential [J]."""
        return self.kinetic_energy + self.potential_energy

    def __len__(self) -> int:
        return self.times.shape[0]

    def save(self, path: str | os.PathLike) -> Path:
        """Write an ``.npz`` file (plain arrays, no pickles) atomically; returns the path."""
        arrays = {f.name: getattr(self, f.name) for f in fields(self)}
        arrays["format_version"] = np.array(_FORMAT_VERSION)
        return _atomic_write(Path(path), lambda fh: np.savez_compressed(fh, **arrays))

    @classmethod
    def load(cls, path: str | os.PathLike) -> Trajectory:
        """Read a file written by ``save`` (with ``allow_pickle=False``)."""
        path = Path(path)
        try:
            with np.load(path, allow_pickle=False) as data:
                arrays = {name: data[name] for name in data.files}
        except (OSError, EOFError, ValueError, zipfile.BadZipFile) as exc:
            raise ValueError(f"path {str(path)!r} could not be read as a trajectory: {exc}") from None
        missing = [f.name for f in fields(cls) if f.name not in arrays]
        if missing or "format_version" not in arrays:
            raise ValueError(f"path {str(path)!r} is not a tumble trajectory: missing {missing or ['format_version']}")
        if int(arrays["format_version"]) > _FORMAT_VERSION:
            raise ValueError(f"path {str(path)!r} has format version {int(arrays['format_version'])}, "
                             f"newer than this tumble reads ({_FORMAT_VERSION})")
        return cls(**{f.name: arrays[f.name] for f in fields(cls)})

    def to_csv(self, path: str | os.PathLike) -> Path:
        """Write one row per (time, body): time, body, name, x, y, z, qw, qx, qy, qz, vx, vy, vz, wx, wy, wz."""
        T, n = self.positions.shape[:2]
        table = np.concatenate([
            np.repeat(self.times, n)[:, None], np.tile(np.arange(n), T)[:, None],
            self.positions.reshape(-1, 3), self.orientations.reshape(-1, 4),
            self.velocities.reshape(-1, 3), self.angular_velocities.reshape(-1, 3)], axis=1)
        header = "time,body,x,y,z,qw,qx,qy,qz,vx,vy,vz,wx,wy,wz"
        fmt = ["%.17g", "%d"] + ["%.17g"] * 13
        return _atomic_write(Path(path), lambda fh: np.savetxt(fh, table, delimiter=",", header=header,
                                                               comments="", fmt=fmt))

    def plot(self, path: str | os.PathLike) -> Path:
        """Plot energy and |angular momentum| relative drift against time to an image file (matplotlib,
        install with ``pip install tumble[plot]``)."""
        try:
            import matplotlib
            matplotlib.use("Agg")
            import matplotlib.pyplot as plt
        except ImportError:
            raise ImportError("plotting needs matplotlib: pip install 'tumble[plot]'") from None
        fig, (ax_e, ax_l) = plt.subplots(2, 1, sharex=True, figsize=(7, 5), constrained_layout=True)
        e = self.energy
        scale = max(abs(e[0]), 1e-300)
        ax_e.plot(self.times, (e - e[0]) / scale)
        ax_e.set_ylabel("(E − E₀) / |E₀|")
        L = np.linalg.norm(self.angular_momentum, axis=1)
        ax_l.plot(self.times, (L - L[0]) / max(L[0], 1e-300))
        ax_l.set_ylabel("(|L| − |L₀|) / |L₀|")
        ax_l.set_xlabel("time [s]")
        for ax in (ax_e, ax_l):
            ax.grid(True, alpha=0.3)
        path = _atomic_write(Path(path), lambda fh: fig.savefig(fh, format=Path(path).suffix.lstrip(".") or "png",
                                                                dpi=120))
        plt.close(fig)
        return path


def _atomic_write(path: Path, write: Any) -> Path:
    """Write through a temporary file in the same directory, then rename: never a half-written file."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as fh:
            write(fh)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path


def record_simulation(world: World, steps: int, dt: float, record_every: int, progress: bool) -> Trajectory:
    """Step ``world`` ``steps`` times, recording every ``record_every``-th state (and the first and last).

    Buffers are allocated once up front; each record copies array slices and runs one energy kernel.
    """
    n = world.body_count
    frames = sorted(set(range(0, steps + 1, record_every)) | {steps})
    T = len(frames)
    traj = Trajectory(
        times=np.empty(T), positions=np.empty((T, n, 3)), orientations=np.empty((T, n, 4)),
        velocities=np.empty((T, n, 3)), angular_velocities=np.empty((T, n, 3)),
        kinetic_energy=np.empty(T), potential_energy=np.empty(T), linear_momentum=np.empty((T, 3)),
        angular_momentum=np.empty((T, 3)), masses=world._live()["mass"].copy(),
        names=np.array([name or "" for name in world._names], dtype=str),
    )
    totals = np.empty(_energy.SIZE)
    origin = np.zeros(3)

    def record(k: int) -> None:
        a = world._live()
        traj.times[k] = world.time
        traj.positions[k] = a["x"]
        traj.orientations[k] = a["q"]
        traj.velocities[k] = a["v"]
        traj.angular_velocities[k] = a["w"]
        _energy.energy_momentum(a["mass"], a["inv_mass"], a["inertia_body"], a["x"], a["q"], a["v"], a["w"],
                                world._gravity, origin, totals)
        traj.kinetic_energy[k] = totals[_energy.KINETIC]
        traj.potential_energy[k] = totals[_energy.POTENTIAL]
        traj.linear_momentum[k] = totals[_energy.MOMENTUM]
        traj.angular_momentum[k] = totals[_energy.ANGULAR_MOMENTUM]

    bar = None
    if progress:
        from tqdm import tqdm
        bar = tqdm(total=steps, unit="step", desc="simulate")
    record(0)
    k = 1
    for s in range(1, steps + 1):
        step(world, dt)
        if bar is not None:
            bar.update(1)
        if k < T and frames[k] == s:
            record(k)
            k += 1
    if bar is not None:
        bar.close()
    return traj
