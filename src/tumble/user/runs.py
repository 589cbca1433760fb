"""What a run leaves on disk: the trajectory (npz, optionally csv), the browser replay, the plots and a
summary, all written atomically into one folder. ``tumble demo`` and ``tumble run`` share it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np

from .trajectory import Trajectory, _atomic_write


def run_summary(traj: Trajectory, *, steps: int, dt: float, wall_s: float) -> dict[str, Any]:
    """The figures a user looks at first, from a recorded run (SI units).

    ``steps`` steps of ``dt`` [s] took ``wall_s`` seconds of wall time. Energies are in J, penetration in
    m; ``energy_change_J`` is negative where contacts dissipated energy.
    """
    return {
        "bodies": int(np.count_nonzero(~traj.fixed)),
        "simulated_s": float(traj.times[-1]),
        "steps": int(steps),
        "dt": float(dt),
        "wall_s": round(float(wall_s), 3),
        "steps_per_s": round(steps / wall_s, 1) if wall_s > 0.0 else None,
        "energy_start_J": float(traj.energy[0]),
        "energy_end_J": float(traj.energy[-1]),
        "energy_change_J": float(traj.energy[-1] - traj.energy[0]),
        "kinetic_energy_end_J": float(traj.kinetic_energy[-1]),
        "contacts_end": int(traj.contact_count[-1]),
        "max_contacts": int(traj.contact_count.max()),
        "max_penetration_m": float(traj.max_penetration.max()),
        "max_speed_end_m_s": float(np.linalg.norm(traj.velocities[-1], axis=1).max(initial=0.0)),
        "fixed_bodies": int(np.count_nonzero(traj.fixed)),
        **_joint_summary(traj),
    }


def _joint_summary(traj: Trajectory) -> dict[str, Any]:
    """With robots: ``joint_positions_end``, the last frame's q by coordinate name ("ROBOT/JOINT" [rad or m],
    ``Trajectory.joint_names``); nothing without."""
    if not traj.joint_names.size:
        return {}
    return {"joint_positions_end": {str(name): float(q) for name, q in
                                    zip(traj.joint_names, traj.joint_positions[-1], strict=True)}}


def write_run(traj: Trajectory, out_dir: str | Path, summary: dict[str, Any], *, title: str,
              stem: str = "trajectory", npz: bool = True, csv: bool = True, html: bool = True,
              plots: bool = True) -> list[Path]:
    """Write ``stem``.npz (unless ``npz`` is False: already saved, e.g. by ``simulate(checkpoint=...)``),
    ``stem``.csv, ``replay.html``, ``plots.png`` (when matplotlib is installed) and ``summary.json`` into
    ``out_dir``; returns the paths written. Every file goes through a temporary name and a rename, so none
    is ever half-written."""
    out = Path(out_dir)
    files = [traj.save(out / f"{stem}.npz")] if npz else []
    if csv:
        files.append(traj.to_csv(out / f"{stem}.csv"))
    if html:
        files.append(traj.to_html(out / "replay.html", title=title))
    if plots:
        try:
            files.append(traj.plot(out / "plots.png"))
        except ImportError:
            pass
    text = json.dumps(summary, indent=2) + "\n"
    files.append(_atomic_write(out / "summary.json", lambda fh: fh.write(text.encode())))
    return files
