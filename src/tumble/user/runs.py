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


SPEED_OF_LIGHT = 299_792_458.0
"""[m/s] A recorded body faster than this makes ``tumble run`` fail (``out_of_range``): its energies and figures
mean nothing (a units mistake or a blow-up), whatever the step made of it."""


def out_of_range(traj: Trajectory) -> str | None:
    """What makes a recorded run meaningless, in words, or None: the first frame in which a body moves faster than
    light (``SPEED_OF_LIGHT``) or the energy (kinetic, potential or their sum) is not finite (float64 overflowed,
    though every state was finite). ``tumble run`` reports it and exits with status 2 instead of a summary."""
    v = traj.velocities
    scale = np.abs(v).max(axis=2, initial=0.0)
    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
        speed = scale * np.linalg.norm(v / np.where(scale > 0.0, scale, 1.0)[..., None], axis=2)
        energies = np.stack([traj.kinetic_energy, traj.potential_energy, traj.kinetic_energy + traj.potential_energy])
    fast = np.flatnonzero(~(speed <= SPEED_OF_LIGHT).all(axis=1))
    bad = np.flatnonzero(~np.isfinite(energies).all(axis=0))
    if fast.size and (not bad.size or fast[0] <= bad[0]):
        frame = int(fast[0])
        body = int(np.argmax(np.where(np.isnan(speed[frame]), np.inf, speed[frame])))
        name = traj.names[body] if body < len(traj.names) else ""
        label = f"body {str(name)!r} (index {body})" if str(name) else f"body {body}"
        return (f"{label} moves at {speed[frame, body]:.3g} m/s at t = {traj.times[frame]:g} s, faster than light "
                f"({SPEED_OF_LIGHT:.9g} m/s): a units mistake or a blow-up")
    if bad.size:
        frame = int(bad[0])
        kinetic, potential = traj.kinetic_energy[frame], traj.potential_energy[frame]
        return (f"the energy left float64's range at t = {traj.times[frame]:g} s (kinetic {kinetic:.3g} J, "
                f"potential {potential:.3g} J) though every state was finite")
    return None


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
