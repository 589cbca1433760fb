"""Scene files and measured data for the sweep and fit tests, and a real Dask cluster on localhost."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import numpy as np

BALL = """format = 1

[ground]
friction = 0.0
restitution = 0.0

[[bodies]]
name = "ball"
shape = {{ type = "sphere", radius = {radius} }}
mass = 1.0
friction = 0.0
restitution = 0.5
position = [0.0, 0.0, 1.1]
"""
"""The bounce of tests/contact/test_timestep_contact.py (S5): a 1 kg ball of radius 0.1 m, no friction. The
ground's restitution is 0, so the pair's e = max(e_ball, e_ground) is the ball's."""

RADIUS = 0.1

FALL = """format = 1

[[bodies]]
name = "ball"
shape = { type = "sphere", radius = 0.1 }
mass = 1.0
position = [0.0, 0.0, 10.0]
"""
"""A ball falling freely, nothing to hit: a slow variant at a small dt (the fault and resume tests need
variants still running when they act)."""

BOX = """format = 1

[materials.m]                 # both the box and the ground: the pair's friction sqrt(mu mu) = mu, e = max(e, e) = e
friction = {mu!r}
restitution = {e!r}

[ground]
material = "m"

[[bodies]]
name = "box"
shape = {{ type = "box", size = [0.1, 0.1, 0.1] }}
density = 500.0
material = "m"
position = {position}
velocity = {velocity}
angular_velocity = {spin}
"""

DROP = {"position": [0.0, 0.0, 0.3], "velocity": [0.0, 0.0, 0.0], "spin": [0.0, 0.0, 0.0]}
"""A 10 cm box dropped flat from 25 cm above the ground: one bounce in 0.4 s (its height says e)."""
SLIDE = {"position": [0.0, 0.0, 0.05], "velocity": [2.0, 0.5, 0.0], "spin": [0.0, 0.0, 6.0]}
"""The box launched along the ground at 2.06 m/s, spinning at 6 rad/s about z: it slides and stops (mu)."""


def write(path: Path, text: str) -> Path:
    path.write_text(text)
    return path


def box_scene(path: Path, toss: dict, mu: float, e: float) -> Path:
    return write(path, BOX.format(mu=mu, e=e, **toss))


def env() -> dict[str, str]:
    """This process's environment (Numba's cache included) for a subprocess that runs tumble or Dask's
    workers, with one Numba thread: what a local cluster's workers get (tumble.sweep.cluster.WORKER_ENV)."""
    from tumble.sweep.cluster import WORKER_ENV

    return {**os.environ, **WORKER_ENV}


def tumble(*args: str, timeout: float = 120.0) -> subprocess.CompletedProcess:
    """``tumble ARGS`` in a subprocess (``python -m tumble``), its output captured."""
    return subprocess.run([sys.executable, "-m", "tumble", *args], capture_output=True, text=True, timeout=timeout,
                          env=env())


@contextlib.contextmanager
def dask_cluster(folder: Path, workers: int = 2) -> Iterator[tuple[str, list[subprocess.Popen]]]:
    """A real Dask cluster on localhost: ``dask scheduler`` on a free port (the port the OS gives, read back
    from its scheduler file) and ``workers`` ``dask worker`` processes of one thread each, each with a
    nanny that restarts its worker if it dies. Yields (address, worker processes); everything is stopped
    on leaving (SIGTERM to each process group, SIGKILL after 10 s)."""
    folder.mkdir(parents=True, exist_ok=True)
    file = folder / "scheduler.json"
    started: list[subprocess.Popen] = []

    def spawn(*args: str) -> subprocess.Popen:
        log = open(folder / f"dask-{len(started)}.log", "w")  # noqa: SIM115 (closed with the process)
        proc = subprocess.Popen([sys.executable, "-m", "dask", *args], stdout=log, stderr=subprocess.STDOUT,
                                env=env(), cwd=folder, start_new_session=True)
        started.append(proc)
        return proc

    try:
        spawn("scheduler", "--host", "127.0.0.1", "--port", "0", "--no-dashboard", "--scheduler-file", str(file))
        deadline = time.monotonic() + 60
        while not file.exists() or not file.read_text().strip():
            if time.monotonic() > deadline or started[0].poll() is not None:
                raise RuntimeError(f"the Dask scheduler did not start: {(folder / 'dask-0.log').read_text()}")
            time.sleep(0.1)
        address = json.loads(file.read_text())["address"]
        procs = [spawn("worker", "--scheduler-file", str(file), "--nthreads", "1", "--nworkers", "1",
                       "--no-dashboard", "--local-directory", str(folder / f"w{k}"), "--death-timeout", "60")
                 for k in range(workers)]
        yield address, procs
    finally:
        for proc in reversed(started):
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGTERM)
        for proc in reversed(started):
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(proc.pid, signal.SIGKILL)
                proc.wait(timeout=10)


def apexes(z: np.ndarray) -> list[float]:
    """The local maxima of a height series (each sample compared with its neighbours)."""
    return [float(z[i]) for i in range(1, len(z) - 1) if z[i] > z[i - 1] and z[i] >= z[i + 1]]
