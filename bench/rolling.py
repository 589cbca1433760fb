"""S2-spheres with rolling resistance: tumble beside PyBullet (maximal coordinates) in one run.

BENCH.md's S2-spheres (1000 spheres of radius 0.1 m dropped into a 3 m pen, dt = 1/240 s, 3 s) with a rolling
resistance of ``ROLLING`` = 0.001 m on every body, the walls and the ground (docs/materials.md): without it a
sphere pile never settles on level ground (a rolling ball keeps its speed). Each engine runs ``--repeats``
times from a fresh build; the figures are medians over the runs: steps/s over the timed steps (after
``WARMUP`` untimed ones), and the fastest body at the end (settled: below 0.05 m/s, BENCH.md). Both engines
also run without rolling resistance for reference.

Materials: tumble's pair value is √(a b), so every body and the ground get μ_r = ROLLING. PyBullet combines a
contact's rolling friction as r_a μ_b + r_b μ_a (btManifoldResult::calculateCombinedRollingFriction, μ the
lateral friction), and its adapter sets √μ on every body (bench/adapters/pybullet_adapter.py), so each body gets
r = ROLLING / (2 √μ) to give the pair ROLLING. Its rolling friction, like tumble's, bounds the rolling torque by
that value times the contact's normal force.

    python -m bench.rolling [--repeats 3] [--duration 3.0]
"""

from __future__ import annotations

import argparse
import json
import math
import platform
import statistics
import time
from dataclasses import replace
from typing import Any

import numpy as np

from bench.adapters.pybullet_adapter import PyBulletAdapter
from bench.adapters.tumble_adapter import build_world
from bench.run import cpu_model
from bench.scenes import make_case

ROLLING = 0.001
"""[m] the pair's rolling resistance μ_r: |τ_roll| <= μ_r f_n."""

WARMUP = 5
"""Untimed steps before the timed ones (the first step of a tumble world loads its kernels)."""


def _tumble(scene: Any, rolling: float) -> tuple[Any, Any]:
    world, handles = build_world(scene)
    for body in world.bodies:           # the spheres, the walls and the ground
        body.rolling_friction = rolling
    return world.step, lambda: np.array([h.velocity for h in handles])


def _pybullet(scene: Any, rolling: float) -> tuple[Any, Any]:
    sim = PyBulletAdapter(maximal=True).build(scene)
    p, cid = sim._p, sim.cid
    for bid in range(p.getNumBodies(physicsClientId=cid)):
        mu = p.getDynamicsInfo(bid, -1, physicsClientId=cid)[1]      # the lateral friction the adapter set
        p.changeDynamics(bid, -1, rollingFriction=rolling / (2.0 * mu) if rolling else 0.0, physicsClientId=cid)

    def speeds() -> np.ndarray:
        return sim.state().v
    return (lambda dt: sim.step()), speeds


def run(engine: str, rolling: float, scene: Any) -> dict[str, float]:
    """One run: steps/s over the timed steps, and the fastest body at the end [m/s]."""
    step, velocities = (_tumble if engine == "tumble" else _pybullet)(scene, rolling)
    for _ in range(WARMUP):
        step(scene.dt)
    t0 = time.perf_counter()
    for _ in range(scene.steps - WARMUP):
        step(scene.dt)
    seconds = time.perf_counter() - t0
    return {"steps_per_s": (scene.steps - WARMUP) / seconds,
            "max_speed_end": float(np.linalg.norm(velocities(), axis=1).max())}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--duration", type=float, default=None, help="simulated seconds (default: the scene's 3 s)")
    args = parser.parse_args(argv)
    scene = make_case("S2-spheres")
    if args.duration is not None:
        scene = replace(scene, steps=round(args.duration / scene.dt))
    import numba
    import pybullet

    import tumble

    out: dict[str, Any] = {"case": scene.case_id, "steps": scene.steps, "dt": scene.dt, "rolling_m": ROLLING,
                           "machine": f"{cpu_model()}, {platform.system()} {platform.release()}",
                           "versions": {"tumble": tumble.__version__, "numba": numba.__version__,
                                        "numpy": np.__version__, "pybullet": str(pybullet.getAPIVersion())},
                           "numba_threads": numba.get_num_threads(), "runs": {}}
    _tumble(scene, ROLLING)[0](scene.dt)     # compile or load the kernels before any timing
    for rolling in (ROLLING, 0.0):
        for engine in ("tumble", "pybullet-maximal"):
            runs = [run(engine, rolling, scene) for _ in range(args.repeats)]
            key = f"{engine}, rolling {rolling:g} m"
            out["runs"][key] = {name: statistics.median(r[name] for r in runs) for name in runs[0]}
            out["runs"][key]["all"] = runs
            print(key, json.dumps(out["runs"][key]), flush=True)
    for rolling in (ROLLING, 0.0):
        ratio = (out["runs"][f"tumble, rolling {rolling:g} m"]["steps_per_s"]
                 / out["runs"][f"pybullet-maximal, rolling {rolling:g} m"]["steps_per_s"])
        out[f"tumble_over_pybullet_rolling_{rolling:g}"] = ratio
    print(json.dumps(out))
    return 0 if math.isfinite(out[f"tumble_over_pybullet_rolling_{ROLLING:g}"]) else 1


if __name__ == "__main__":
    raise SystemExit(main())
