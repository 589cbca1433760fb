"""``python -m bench.busy [--quick] [--rounds N] [--cases S2-boxes,S4] [--configs a,b]``: issue 54 item 2, "a busy
machine" — tumble's S2-boxes and S4 steps/s on the idle machine and with one core taken by an outside process, for
several settings of Numba's thread pool.

Each measurement is one fresh interpreter (``python -m bench.busy --child CASE``) started with the configuration's
environment, because OpenMP reads its variables once, when Numba's threading layer loads it (at the first parallel
call): it builds the case (``bench.scenes.make_case``) and times it once with the harness's ``run_case``
(``tumble/default``: 5 warm-up steps, ``time.perf_counter`` around the stepping loop), and prints its steps/s (the
pseudo-case ``region``: the time of one empty parallel region, ``_region_child``). "One
core taken" is a second interpreter spinning ``while True: pass`` for the whole child run, started just before it and
killed after it (on every exit path). The configurations and the two load states run in turn — round after round,
each round every (case, configuration, idle/busy) once — so a drift of the shared machine's load reaches them all
alike; the page reports the median over the rounds, and the 1-minute load average before each child run.

Configurations (``CONFIGS``): the environment each child starts with, on top of this process's own with every
variable of ``_CONTROLLED`` removed. The page is ``bench/BUSY.md`` (``--quick``: the temp folder), with the raw figures
in ``bench/busy.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from bench.report import write_json
from bench.run import standalone_header, standalone_report

__all__ = ["CONFIGS", "main", "measure", "render"]

BENCH_DIR = Path(__file__).resolve().parent

CONFIGS: dict[str, dict[str, str]] = {
    "default": {},
    "1-thread": {"NUMBA_NUM_THREADS": "1"},
    "gomp-default": {"GOMP_SPINCOUNT": "300000"},
    "spincount-10000": {"GOMP_SPINCOUNT": "10000"},
    "workqueue": {"NUMBA_THREADING_LAYER": "workqueue"},
}
"""Name → environment of a child. ``default``: tumble as it is (since issue 54 it sets ``OMP_WAIT_POLICY=PASSIVE``
itself, src/tumble/jit.py: idle OpenMP threads sleep at once); ``1-thread``: Numba's pool of one thread;
``gomp-default``: libgomp's own default spelled out (``GOMP_SPINCOUNT=300000``, what it uses when
``OMP_WAIT_POLICY`` is unset: an idle worker spins ~300k iterations, a few ms, before it sleeps), which is what
tumble ran with before, and which tumble leaves alone since the user set it; ``spincount-10000``: a short spin
(~0.1 ms); ``workqueue``: Numba's own pthread pool, whose idle threads wait on a condition variable."""

_CONTROLLED = ("OMP_WAIT_POLICY", "GOMP_SPINCOUNT", "NUMBA_THREADING_LAYER", "NUMBA_NUM_THREADS", "OMP_NUM_THREADS")
"""Variables a child gets only from its configuration (removed from the inherited environment)."""

CASES = ("S2-boxes", "S4", "region")
"""Two BENCH.md cases, and ``region``: one parallel region alone (``_region_child``)."""

REGION_GAP_S = 0.5e-3
"""[s] Serial work between two parallel regions in ``region``: about what the contact solver does between two
narrowphase calls of S4 (one step, ~0.4 ms at 2,500 steps/s); S2-boxes' steps are ~11 ms apart."""


def _region_child() -> dict[str, Any]:
    """The median time [µs] of one parallel region doing nothing (a ``prange`` over 2 items, one per thread) called
    2000 times with ``REGION_GAP_S`` of serial work in a kernel between calls (what an idle worker does there —
    spin or sleep — is what the configuration sets), after ``import tumble`` (which may set the wait policy)."""
    import numba
    import numpy as np

    import tumble  # noqa: F401  (sets its OpenMP wait policy before the pool starts)

    @numba.njit(parallel=True)
    def region(a: Any) -> None:
        for i in numba.prange(a.shape[0]):
            a[i] += 1.0

    @numba.njit
    def serial(until: float) -> float:
        s, k = 0.0, 0
        while s < until:   # ~1 ns an iteration; calibrated below
            s += 1e-9
            k += 1
        return s + k

    a = np.zeros(2)
    region(a)
    t0 = time.perf_counter()
    serial(1e-3)
    scale = 1e-3 / (time.perf_counter() - t0)
    times = np.empty(2000)
    for k in range(times.size):
        t0 = time.perf_counter()
        region(a)
        times[k] = time.perf_counter() - t0
        serial(REGION_GAP_S * scale)
    return {"value": 1e6 * float(np.median(times)), "partial": False}


def _child(case_id: str, quick: bool) -> None:
    """One timed run of ``case_id`` in this interpreter; prints one JSON line."""
    import numba

    if case_id == "region":
        wall, cpu = time.perf_counter(), time.process_time()
        result = _region_child()
        wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
        print(json.dumps({**result, "layer": numba.threading_layer(), "threads": numba.get_num_threads(),
                          "cpu_per_wall": cpu / wall}))
        return
    from bench.adapters import TumbleAdapter
    from bench.scenes import make_case
    from bench.timing import RunOptions, run_case

    scene = make_case(case_id, quick=quick)
    wall, cpu = time.perf_counter(), time.process_time()
    entry = run_case(scene, TumbleAdapter(), RunOptions(repeats=1, warmup=5, budget_s=120.0))
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    if entry["status"] != "ok":
        raise SystemExit(f"{case_id}: {entry['status']}: {entry.get('reason')}")
    threads = numba.get_num_threads()   # starts the pool if the case never ran a parallel kernel
    print(json.dumps({"value": entry["speed"]["steps_per_s"], "partial": entry["partial"],
                      "layer": numba.threading_layer(), "threads": threads, "cpu_per_wall": cpu / wall}))


def _run_child(case_id: str, env: dict[str, str], busy: bool, quick: bool) -> dict[str, Any]:
    """Start the child for ``case_id`` with ``env``; with ``busy``, an outside spinning process beside it."""
    spinner = subprocess.Popen([sys.executable, "-c", "while True: pass"]) if busy else None
    try:
        if spinner is not None:
            time.sleep(0.2)   # let it start spinning before the child does
        load = os.getloadavg()[0]
        cmd = [sys.executable, "-m", "bench.busy", "--child", case_id] + (["--quick"] if quick else [])
        out = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=600, cwd=BENCH_DIR.parent)
    finally:
        if spinner is not None:
            spinner.kill()
            spinner.wait()
    if out.returncode != 0:
        raise RuntimeError(f"child {case_id} failed ({out.returncode}): {out.stderr[-2000:]}")
    result = json.loads(out.stdout.strip().splitlines()[-1])
    result["load"] = load
    return result


def _unit(case_id: str) -> str:
    return "µs per region" if case_id == "region" else "steps/s"


def measure(quick: bool = False, rounds: int = 3, cases: tuple[str, ...] = CASES,
            configs: tuple[str, ...] = tuple(CONFIGS)) -> dict[str, Any]:
    """``rounds`` rounds of every (case, configuration, idle/busy), in turn; the medians per combination."""
    base = {k: v for k, v in os.environ.items() if k not in _CONTROLLED}
    runs: dict[str, list[dict[str, Any]]] = {}
    for r in range(rounds):
        for case_id in cases:
            for name in configs:
                for busy in (False, True):
                    key = f"{case_id}|{name}|{'busy' if busy else 'idle'}"
                    res = _run_child(case_id, {**base, **CONFIGS[name]}, busy, quick)
                    runs.setdefault(key, []).append(res)
                    print(f"[busy] round {r + 1}/{rounds} {key:<34} {res['value']:8.1f} {_unit(case_id)}  "
                          f"({res['layer']}, {res['threads']} threads, load {res['load']:.2f})",
                          file=sys.stderr, flush=True)
    table = {}
    for key, rs in runs.items():
        case_id, name, state = key.split("|")
        table.setdefault(case_id, {}).setdefault(name, {})[state] = {
            "median": statistics.median(x["value"] for x in rs),
            "min": min(x["value"] for x in rs), "max": max(x["value"] for x in rs),
            "cpu_per_wall": statistics.median(x["cpu_per_wall"] for x in rs),
            "load": [x["load"] for x in rs], "layer": rs[0]["layer"], "threads": rs[0]["threads"],
            "partial": any(x["partial"] for x in rs)}
    return {"quick": quick, "rounds": rounds, "configs": {n: CONFIGS[n] for n in configs}, "table": table}


def render(results: dict[str, Any]) -> str:
    """The page: one table per case, medians idle and busy, each against the 1-thread figure."""
    lines = standalone_header("A busy machine: tumble's parallel kernels with one core taken", "bench.busy",
                              results["meta"], "a shared machine: the load before each run is in the tables; 'idle' "
                              "means without our spinner, not an idle machine")
    lines += [f"Each figure: steps/s of the whole case (5 warm-up steps, then the timed loop), or for `region` the "
              "median µs of one empty parallel region called between 0.5 ms stretches of serial work (lower is "
              f"better), median of {results['rounds']} fresh interpreters, every configuration and load state in "
              "turn each round. "
              "'busy': an outside Python process spinning on one of the two cores for the whole run. 'CPU s ÷ wall s': "
              "the child's CPU time over its wall time while it builds and runs the case (median; 1 = one core kept "
              "busy, 2 = both: a spinning OpenMP worker shows here). How it is measured: the docstring of "
              "`bench/busy.py`.", ""]
    for case_id, rows in results["table"].items():
        one, unit = rows.get("1-thread", {}), _unit(case_id)
        lines += [f"## {case_id}" + (" (quick size)" if results["quick"] and case_id != "region" else ""), "",
                  f"| configuration | environment | layer, threads | idle {unit} (min–max) | busy {unit} (min–max) "
                  "| busy ÷ idle | busy ÷ 1-thread busy | CPU s ÷ wall s (idle; busy) "
                  "| load before the runs (idle; busy) |",
                  "|---|---|---|---|---|---|---|---|---|"]
        for name, states in rows.items():
            idle, busy = states.get("idle"), states.get("busy")
            env = " ".join(f"{k}={v}" for k, v in results["configs"][name].items()) or "(none)"

            def fig(s: dict[str, Any] | None) -> str:
                if s is None:
                    return "—"
                return f"{s['median']:,.1f} ({s['min']:,.1f}–{s['max']:,.1f})" + (" partial" if s["partial"] else "")

            ratio = f"{busy['median'] / idle['median']:.2f}" if idle and busy else "—"
            vs_one = f"{busy['median'] / one['busy']['median']:.2f}" if busy and one.get("busy") else "—"
            s = idle or busy
            loads = "; ".join(" ".join(f"{x:.2f}" for x in st["load"]) for st in (idle, busy) if st)
            cpu = "; ".join(f"{st['cpu_per_wall']:.2f}" for st in (idle, busy) if st)
            lines.append(f"| {name} | {env} | {s['layer']}, {s['threads']} | {fig(idle)} | {fig(busy)} | {ratio} | "
                         f"{vs_one} | {cpu} | {loads} |")
        lines.append("")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench.busy", description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="the cases' smoke sizes, 1 round; written to a temp dir")
    ap.add_argument("--rounds", type=int, default=3, help="fresh interpreters per combination (median)")
    ap.add_argument("--cases", default=",".join(CASES), help="comma-separated case ids (default: %(default)s)")
    ap.add_argument("--configs", default=",".join(CONFIGS), help="comma-separated configurations (default: all)")
    ap.add_argument("--child", metavar="CASE", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.child:
        _child(args.child, args.quick)
        return 0
    configs = tuple(args.configs.split(","))
    unknown = [c for c in configs if c not in CONFIGS]
    if unknown:
        ap.error(f"unknown configuration(s) {unknown}; known: {', '.join(CONFIGS)}")
    rounds = 1 if args.quick else args.rounds
    out = Path(tempfile.gettempdir() if args.quick else BENCH_DIR) / "BUSY.md"

    def run() -> dict[str, Any]:
        return measure(args.quick, rounds, tuple(args.cases.split(",")), configs)

    def render_and_save(results: dict[str, Any]) -> str:
        write_json(out.parent / "busy.json", results)
        return render(results)

    return standalone_report(out, run, render_and_save, ("numpy", "numba"))


if __name__ == "__main__":
    raise SystemExit(main())
