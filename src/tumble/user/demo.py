"""The demo scene of ``tumble demo``: a pile of mixed shapes poured into a pen.

Boxes, spheres, capsules, cylinders and convex hulls (octahedra and random rocks) start on a loose lattice
above a square pen of four fixed walls, with random orientations and spins, fall under gravity, bounce,
slide, tumble and come to rest. Everything the time-stepping method does shows at once: Coulomb friction
(cone), restitution, stacking, resting contact, sleeping. The run writes a browser replay, plots, the
trajectory (npz, csv) and a summary.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import numpy as np

from ..shapes import Box, Capsule, ConvexHull, Cylinder, Sphere
from ..world import World
from .runs import run_summary, write_run

PEN_HALF_WIDTH = 0.9   # [m] inner half width of the pen
WALL_HEIGHT = 0.5      # [m]
WALL_THICKNESS = 0.1   # [m]
LATTICE = (5, 5, 4)    # bodies along x, y, z: 100 in all
SPACING = 0.3          # [m] lattice pitch
FIRST_LAYER = 0.6      # [m] height of the lowest layer's centres
SEED = 7


def _rock(rng: np.random.Generator) -> ConvexHull:
    """A random convex rock: the hull of 14 points on a squashed sphere of radius ~0.1 m."""
    d = rng.normal(size=(14, 3))
    d /= np.linalg.norm(d, axis=1)[:, None]
    return ConvexHull(d * np.array([0.11, 0.09, 0.07]) * rng.uniform(0.85, 1.15, size=(14, 1)))


def _octahedron() -> ConvexHull:
    r = 0.1
    return ConvexHull(r * np.array([[1, 0, 0], [-1, 0, 0], [0, 1, 0], [0, -1, 0], [0, 0, 1], [0, 0, -1.0]]))


def _random_quaternion(rng: np.random.Generator) -> np.ndarray:
    """A uniformly distributed rotation (Shoemake's method), (w, x, y, z)."""
    u1, u2, u3 = rng.uniform(size=3)
    a, b = np.sqrt(1.0 - u1), np.sqrt(u1)
    return np.array([b * np.cos(2 * np.pi * u3), a * np.sin(2 * np.pi * u2), a * np.cos(2 * np.pi * u2),
                     b * np.sin(2 * np.pi * u3)])


def build_demo_world(*, seed: int = SEED) -> World:
    """The demo scene: the ground, four fixed walls and 100 bodies of five kinds (z up, SI units)."""
    rng = np.random.default_rng(seed)
    world = World(gravity=(0.0, 0.0, -9.81))
    world.add_ground(friction=0.6)
    outer = PEN_HALF_WIDTH + 0.5 * WALL_THICKNESS
    length = 2.0 * (PEN_HALF_WIDTH + WALL_THICKNESS)
    for k, (x, y) in enumerate(((outer, 0.0), (-outer, 0.0), (0.0, outer), (0.0, -outer))):
        size = (WALL_THICKNESS, length, WALL_HEIGHT) if y == 0.0 else (length, WALL_THICKNESS, WALL_HEIGHT)
        world.add_body(Box(*size), position=(x, y, 0.5 * WALL_HEIGHT), fixed=True, friction=0.4,
                       name=f"wall {k + 1}")
    kinds: list[tuple[str, Any, dict[str, float]]] = [
        ("box", lambda: Box(*rng.uniform(0.1, 0.22, size=3)), {"friction": 0.6}),
        ("ball", lambda: Sphere(rng.uniform(0.06, 0.1)), {"friction": 0.4, "restitution": 0.6}),
        ("capsule", lambda: Capsule(rng.uniform(0.04, 0.06), rng.uniform(0.1, 0.18)), {"friction": 0.5}),
        ("cylinder", lambda: Cylinder(rng.uniform(0.06, 0.09), rng.uniform(0.08, 0.16)), {"friction": 0.5}),
        ("rock", lambda: _rock(rng) if rng.uniform() < 0.7 else _octahedron(), {"friction": 0.8}),
    ]
    nx, ny, nz = LATTICE
    index = 0
    for iz in range(nz):
        for iy in range(ny):
            for ix in range(nx):
                name, make, material = kinds[index % len(kinds)]
                jitter = rng.uniform(-0.03, 0.03, size=2)
                position = (SPACING * (ix - 0.5 * (nx - 1)) + jitter[0], SPACING * (iy - 0.5 * (ny - 1)) + jitter[1],
                            FIRST_LAYER + SPACING * iz)
                world.add_body(make(), density=rng.uniform(500.0, 1500.0), position=position,
                               orientation=_random_quaternion(rng), angular_velocity=rng.normal(scale=2.0, size=3),
                               name=f"{name} {index + 1}", **material)
                index += 1
    return world


def run_demo(out_dir: str | Path = "tumble-demo", duration: float = 4.0, dt: float = 1.0 / 240.0,
             progress: bool = True) -> dict[str, Any]:
    """Simulate the demo scene for ``duration`` seconds at steps of ``dt`` and write into ``out_dir``:
    ``replay.html`` (open it in a browser), ``plots.png``, ``pile.npz``, ``pile.csv`` and ``summary.json``
    (``runs.write_run``). Returns the summary (SI units) with ``compile_s``, ``inside_pen``,
    ``sleeping_end`` and the written ``files`` added."""
    started = time.perf_counter()
    build_demo_world().step(dt)  # compiles the contact kernels, or loads them from Numba's cache
    compile_s = time.perf_counter() - started
    world = build_demo_world()
    steps = int(round(duration / dt))
    started = time.perf_counter()
    traj = world.simulate(steps * dt, dt, record_every=max(1, int(round(1.0 / (60.0 * dt)))), progress=progress,
                          record_contacts=True)
    summary = run_summary(traj, steps=steps, dt=dt, wall_s=time.perf_counter() - started)
    moving = ~traj.fixed
    summary["compile_s"] = round(compile_s, 3)
    summary["inside_pen"] = int(np.all(np.abs(traj.positions[-1, moving, :2]) < PEN_HALF_WIDTH, axis=1).sum())
    summary["sleeping_end"] = world.step_stats.sleeping
    files = write_run(traj, out_dir, summary, title="tumble demo: a pile of mixed shapes poured into a pen",
                      stem="pile")
    summary["files"] = [str(f) for f in files]
    return summary
