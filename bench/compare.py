"""tumble's median time per step on the scenes a restructuring must not slow down, for comparing two checkouts.

Run it once per checkout, in turn, on the same machine (the tumble imported is whichever is first on
``sys.path``: ``PYTHONPATH=/path/to/other/src python -m bench.compare``), each with its own warm Numba cache
(``NUMBA_CACHE_DIR``), and compare the JSON lines. Scenes (BENCH.md, tumble only, no peers):

- ``S1``: 4096 free boxes, collision detection running every step (``with-detection``, as tumble ran S1
  before it was run without collision like the peers), and ``S1-no-collision`` (the table's S1 now; only
  for a tumble whose bench adapter knows ``detection``);
- ``S3``: the 20-box stack, without sleeping (so every step does the whole work);
- ``S4``: the 210-box pyramid, without sleeping;
- ``pile``: the S2/S7 1000-box pile after it settled (``settled_pile_1000.npz``), without sleeping;
- the joints bench's ``pendulum`` and ``chain`` (bench/joints.py, direct joint solver).

Each figure is the median over ``REPEATS`` runs of the median step time of a run (after warm-up steps).
"""

from __future__ import annotations

import inspect
import json
import statistics
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

from bench.adapters.tumble_adapter import build_world
from bench.scenes import make_case

REPEATS = 5
BENCH_DIR = Path(__file__).resolve().parent


def median_step(world: Any, dt: float, warm: int, steps: int, repeats: int = REPEATS) -> float:
    """[s] the median over ``repeats`` runs of ``steps`` steps of each run's median step time."""
    for _ in range(warm):
        world.step(dt)
    medians = []
    for _ in range(repeats):
        times = []
        for _ in range(steps):
            t0 = time.perf_counter()
            world.step(dt)
            times.append(time.perf_counter() - t0)
        medians.append(statistics.median(times))
    return statistics.median(medians)


def _settled_pile() -> Any:
    world, handles = build_world(make_case("S2-boxes"), sleep=False)
    pile = np.load(BENCH_DIR / "settled_pile_1000.npz", allow_pickle=False)
    for i, body in enumerate(handles):
        body.position, body.orientation = pile["x"][i], pile["q"][i]
        body.velocity, body.angular_velocity = pile["v"][i], pile["w"][i]
    return world


def measure(names: list[str]) -> dict[str, float]:
    """Median step times of the named scenes (module docstring): {"S1_ms": …, "S3_us": …, …}."""
    out: dict[str, float] = {}
    knows_detection = "detection" in inspect.signature(build_world).parameters
    if "S1" in names:
        scene = make_case("S1")
        world = build_world(scene, detection=True)[0] if knows_detection else build_world(scene)[0]
        out["S1_ms"] = 1e3 * median_step(world, scene.dt, 5, 40)
        if knows_detection:
            out["S1-no-collision_ms"] = 1e3 * median_step(build_world(scene)[0], scene.dt, 5, 40)
    for name, unit, warm, steps in (("S3", "us", 50, 200), ("S4", "ms", 10, 40)):
        if name in names:
            world = build_world(make_case(name), sleep=False)[0]
            scale = 1e6 if unit == "us" else 1e3
            out[f"{name}_{unit}"] = scale * median_step(world, 1.0 / 240.0, warm, steps)
    if "pile" in names:
        out["pile_ms"] = 1e3 * median_step(_settled_pile(), 1.0 / 240.0, 10, 15, repeats=3)
    if "joints" in names:
        from bench.joints import SCENES, build_tumble

        for scene in SCENES:
            world = build_tumble(scene, "direct")[1]
            out[f"{scene.name}_us"] = 1e6 * median_step(world, 1.0 / 240.0, 20, 100)
    return out


def main(argv: list[str] | None = None) -> int:
    names = (sys.argv[1:] if argv is None else argv) or ["S1", "S3", "S4", "pile", "joints"]
    import tumble

    print(json.dumps({"tumble": str(Path(tumble.__file__).parent), **measure(names)}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
