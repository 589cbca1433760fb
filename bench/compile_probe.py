"""tumble's one-time start-up cost: import, build, first steps up to the first with contacts — cold (empty
Numba cache) and warm.

tumble's kernels are ``@njit(cache=True)``. :func:`measure` runs this module twice in fresh interpreters with
``NUMBA_CACHE_DIR`` pointing at a new empty directory: the first run compiles every kernel the case needs
(and writes the cache there), the second loads them from that cache. The repository's own
``__pycache__`` caches are neither read nor touched.

Run directly: ``python -m bench.compile_probe CASE [--quick]`` prints one JSON line of seconds; CASE is a
BENCH.md case id (S3, S2-boxes, ...) or ``demo``, the world of ``tumble demo``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

__all__ = ["measure", "main"]

REPO = Path(__file__).resolve().parents[1]
MAX_STEPS_TO_CONTACT = 2000
"""The probe steps on until the first step with contacts, at most this many steps."""


def _probe(case_id: str, quick: bool) -> dict[str, float]:
    """Time import, build and the first two steps of ``case_id`` in this interpreter."""
    t0 = time.perf_counter()
    from bench.adapters.tumble_adapter import import_tumble

    import_tumble()
    t1 = time.perf_counter()
    if case_id == "demo":
        from tumble.user.demo import build_demo_world

        t2 = time.perf_counter()
        sim = _DemoSim(build_demo_world())
    else:
        from bench.adapters.tumble_adapter import TumbleAdapter
        from bench.scenes import make_case

        scene = make_case(case_id, quick=quick)
        t2 = time.perf_counter()
        sim = TumbleAdapter().build(scene)
    t3 = time.perf_counter()
    sim.step()
    t4 = time.perf_counter()
    sim.step()
    t5 = time.perf_counter()
    sim.state()
    t6 = time.perf_counter()
    # A scene whose bodies start apart compiles its contact kernels only at the first contact: step on to it.
    steps = 2
    while sim.world.step_stats.contacts == 0 and steps < MAX_STEPS_TO_CONTACT:
        sim.step()
        steps += 1
    t7 = time.perf_counter()
    return {"import_s": t1 - t0, "build_s": t3 - t2, "first_step_s": t4 - t3, "second_step_s": t5 - t4,
            "first_state_read_s": t6 - t5, "to_first_contact_s": t7 - t6, "steps_to_first_contact": steps}


class _DemoSim:
    """The world of ``tumble demo`` (user/demo.py) with the adapter's step and state calls."""

    def __init__(self, world: Any) -> None:
        self.world = world

    def step(self) -> None:
        self.world.step(1.0 / 240.0)

    def state(self) -> Any:
        return [body.position for body in self.world.bodies]


def measure(case_id: str, quick: bool = True, timeout_s: float = 900.0) -> dict[str, Any]:
    """Cold and warm start-up times of tumble on ``case_id``, each in a fresh subprocess.

    Returns:
        ``{"cold": {...}, "warm": {...}, "compile_s": cold − warm (import + first steps)}``, seconds; or
        ``{"error": message}``.
    """
    out: dict[str, Any] = {"case": case_id, "quick_size": quick}
    with tempfile.TemporaryDirectory(prefix="tumble-numba-cache-") as cache:
        env = dict(os.environ, NUMBA_CACHE_DIR=cache)
        env["PYTHONPATH"] = os.pathsep.join([str(REPO), env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
        cmd = [sys.executable, "-m", "bench.compile_probe", case_id] + (["--quick"] if quick else [])
        for label in ("cold", "warm"):
            proc = subprocess.run(cmd, cwd=REPO, env=env, capture_output=True, text=True, timeout=timeout_s)
            if proc.returncode != 0:
                tail = (proc.stderr or proc.stdout).strip().splitlines()[-1:] or ["no output"]
                return {**out, "error": f"{label} run failed: {tail[0]}"[:300]}
            out[label] = json.loads(proc.stdout.strip().splitlines()[-1])
    startup = ("import_s", "first_step_s", "second_step_s", "to_first_contact_s")
    out["compile_s"] = sum(out["cold"][k] for k in startup) - sum(out["warm"][k] for k in startup)
    return out


def main(argv: list[str] | None = None) -> int:
    """Entry point of the subprocess: print the probe's JSON line."""
    args = sys.argv[1:] if argv is None else argv
    quick = "--quick" in args
    case_id = [a for a in args if not a.startswith("--")][0]
    print(json.dumps(_probe(case_id, quick)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
