"""Figures of the user's own for the sweep tests, in a module the workers can import (a LocalCluster's worker
processes get this process's sys.path)."""

from __future__ import annotations

import tumble as tb


def top_height(world: tb.World, traj: tb.Trajectory) -> float:
    """The ball's highest COM height after its first bounce [m] (the first rebound's apex + radius)."""
    z = traj.positions[:, world.body("ball").index, 2]
    vz = traj.velocities[:, world.body("ball").index, 2]
    bounced = int((vz > 0.0).argmax())
    return float(z[bounced:].max())


def not_a_number(world: tb.World, traj: tb.Trajectory) -> str:
    """A broken figure: returns text."""
    return "high"
