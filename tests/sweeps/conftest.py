"""The bounce sweep that several tests read: a 2 x 3 grid over restitution and drop height, on the default
LocalCluster (two worker processes), the ball's trajectory kept and every step recorded."""

from __future__ import annotations

import pytest

from .scenes import BALL, RADIUS, write

RESTITUTIONS = [0.5, 0.7]
DROPS = [0.5, 0.75, 1.0]
"""Drop heights h [m] of the ball's bottom above the ground (its centre starts at h + radius)."""

SWEEP_ARGS = ["--vary", "bodies.ball.restitution=0.5,0.7", "--vary", "bodies.ball.position.2=0.6,0.85,1.1",
              "--duration", "1.0", "--dt", "0.004166666666666667", "--record-every", "1", "--keep", "ball"]
"""The same sweep as ``bounce_sweep``, on the command line (the scheduler test runs it so)."""


@pytest.fixture(scope="session")
def bounce_sweep(tmp_path_factory):
    """(scene path, SweepResult) of the bounce sweep; the table is at result.path."""
    from tumble.sweep import grid, run_sweep

    folder = tmp_path_factory.mktemp("bounce")
    scene = write(folder / "ball.toml", BALL.format(radius=RADIUS))
    variants = grid({"bodies.ball.restitution": RESTITUTIONS,
                     "bodies.ball.position.2": [h + RADIUS for h in DROPS]})
    result = run_sweep(scene, variants, duration=1.0, dt=1 / 240, out=folder / "out", keep=["ball"],
                       record_every=1, workers=2)
    return scene, result
