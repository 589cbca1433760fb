"""Running one case in one engine configuration: build, warm up, timed loop, figures.

Timing rules (BENCH.md): ``time.perf_counter`` around the stepping loop only; a few warm-up steps first;
the timed part repeated (3 times by default, each from a fresh copy of the scene) and the median reported;
building the scene is timed apart. The loop is the same for every engine: it calls the adapter's bound
``step`` and stores one time stamp per step (≈0.1 µs, the same for all engines) so the median step time is
available too. Nothing else happens inside it: state is read before and after.

A time budget per (case, configuration) keeps slow peers from running for hours: each run stops at the
budget (the figures are then labelled partial), and a repeat is started only if the previous run fits in
what is left.
"""

from __future__ import annotations

import statistics
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from bench.adapters.base import Adapter, Sim, State
from bench.metrics import end_state_figures, trajectory_figures
from bench.scenes import Scene

__all__ = ["RunOptions", "timed_steps", "run_case"]


@dataclass(frozen=True)
class RunOptions:
    """How to time a case.

    Attributes:
        repeats: timed runs per case and configuration (median reported).
        warmup: untimed steps before the timed loop (they count toward the scene's duration).
        budget_s: wall-clock budget for all timed runs of one case in one configuration [s].
    """

    repeats: int = 3
    warmup: int = 5
    budget_s: float = 240.0


def timed_steps(step: Callable[[], None], n: int, budget_s: float) -> np.ndarray:
    """Call ``step`` up to ``n`` times, stopping once ``budget_s`` seconds have passed.

    Returns:
        (k + 1,) ``time.perf_counter`` stamps: before the first step and after each of the k steps done.
    """
    stamps = np.empty(n + 1)
    clock = time.perf_counter
    start = clock()
    stamps[0] = start
    deadline = start + budget_s
    for k in range(1, n + 1):
        step()
        now = clock()
        stamps[k] = now
        if now > deadline:
            return stamps[: k + 1]
    return stamps


def _record(sim: Sim, steps: int) -> tuple[np.ndarray, np.ndarray]:
    """Step ``steps`` times reading the first body's position after each step (untimed)."""
    xs = np.empty((steps + 1, 3))
    xs[0] = sim.state().x[0]
    for k in range(1, steps + 1):
        sim.step()
        xs[k] = sim.state().x[0]
    return xs, np.arange(steps + 1)


def _status(adapter: Adapter, scene: Scene) -> tuple[str, str]:
    ok, why = adapter.available()
    if not ok:
        return "unavailable", why
    ok, why = adapter.supported(scene)
    if not ok:
        return "unsupported", why
    return "ok", ""


def run_case(scene: Scene, adapter: Adapter, options: RunOptions) -> dict[str, Any]:
    """Run one case in one engine configuration and return its JSON-ready entry.

    Keys: ``status`` ("ok", "unavailable", "unsupported", "error"), ``reason``, ``build_s``, ``runs``
    (per timed run: ``wall_s``, ``steps``, ``median_step_s``), ``speed`` (``steps_per_s`` — steps over wall
    time, median over runs; ``steps_per_s_median`` — 1 / median step time; ``body_steps_per_s``;
    ``ms_per_step``), ``partial`` (the budget cut the run short), ``simulated_s``, ``figures``,
    ``engine_contacts``, ``warnings``, ``notes``.
    """
    entry: dict[str, Any] = {"engine": adapter.engine, "config": adapter.config}
    status, reason = _status(adapter, scene)
    entry.update(status=status, reason=reason)
    if status != "ok":
        return entry
    entry["notes"] = adapter.scene_notes(scene)
    sim: Sim | None = None
    try:
        t0 = time.perf_counter()
        sim = adapter.build(scene)
        entry["build_s"] = time.perf_counter() - t0
        if scene.needs_trajectory:
            xs, k = _record(sim, scene.steps)
            entry["figures"] = trajectory_figures(scene, k * scene.dt, xs)
            entry["simulated_s"] = scene.duration
            entry["warnings"] = sim.warnings()
            return entry
        runs: list[dict[str, Any]] = []
        warmup = min(options.warmup, scene.steps - 1)
        timed_n = scene.steps - warmup
        remaining = options.budget_s
        s0 = s1 = None
        for r in range(options.repeats):
            if r > 0 and not sim.reset():
                sim.close()
                sim = adapter.build(scene)
            s0 = sim.state()
            for _ in range(warmup):
                sim.step()
            stamps = timed_steps(sim.step, timed_n, remaining)
            s1 = sim.state()
            wall = float(stamps[-1] - stamps[0])
            done = len(stamps) - 1
            runs.append({"wall_s": wall, "steps": done, "median_step_s": float(np.median(np.diff(stamps)))})
            remaining -= wall
            if done < timed_n or wall > remaining:
                break
        assert s0 is not None and s1 is not None
        done = runs[-1]["steps"]
        entry["runs"] = runs
        entry["partial"] = done < timed_n
        entry["simulated_s"] = (warmup + done) * scene.dt
        sps = statistics.median(run["steps"] / run["wall_s"] for run in runs)
        entry["speed"] = {
            "steps_per_s": sps,
            "steps_per_s_median": 1.0 / statistics.median(run["median_step_s"] for run in runs),
            "body_steps_per_s": sps * scene.n_bodies,
            "ms_per_step": 1e3 / sps,
        }
        entry["figures"] = end_state_figures(scene, s0, s1, entry["simulated_s"])
        entry["engine_contacts"] = sim.engine_contact_count()
        entry["warnings"] = sim.warnings()
    except Exception as exc:  # a peer (or tumble) failing on one case must not stop the benchmark
        entry["status"] = "error"
        entry["reason"] = f"{type(exc).__name__}: {exc}"[:300]
        entry["traceback"] = traceback.format_exc(limit=6)
    finally:
        if sim is not None:
            sim.close()
    return entry


def initial_state_error(scene: Scene, state: State) -> dict[str, float]:
    """Largest difference between an engine's read-back initial state and the scene (a build check)."""
    a = scene.arrays
    q = state.q * np.sign(np.sum(state.q * a["q"], axis=1, keepdims=True))  # q and −q are one rotation
    return {
        "x": float(np.abs(state.x - a["x"]).max()),
        "q": float(np.abs(q - a["q"]).max()),
        "v": float(np.abs(state.v - a["v"]).max()),
        "w": float(np.abs(state.w - a["w"]).max()),
    }
