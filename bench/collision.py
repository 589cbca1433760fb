"""The collision stage alone: ``world.contacts()`` on pile-like states that move a little every step.

States: n bodies on a cubic lattice packed as densely as a settled S2 pile, with slight overlaps (boxes of
0.2 m edge at a spacing of 0.195 m, each turned by up to ±3° about a random axis; spheres of radius 0.1 m
at 0.195 m), jittered by ±2 mm. Each step every body moves by a random ±0.1 mm and turns by ±0.1°, as a
settling pile does. Figures: milliseconds per ``contacts()`` call (median of the timed steps), candidate
pairs and contacts per step, pairs tested per second, the share of polytope tests the cached witness
decided, and broadphase swaps per step. Scaling: boxes at n = 125, 1000, 8000 with the fitted exponent of
time against n. Contrast: the O(n²) brute-force pair search on the same boxes.

Run: part of ``python -m bench [--quick]`` (section "Collision stage alone" of RESULTS.md, figures under
"collision" in results.json), or alone with ``python -m bench.collision [--quick]``, which re-measures this
stage and re-renders RESULTS.md from results.json with the scene figures kept.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time
from pathlib import Path

import numpy as np

from bench.adapters.tumble_adapter import import_tumble
from bench.run import cpu_model

HERE = Path(__file__).resolve().parent
SPACING = 0.195


def lattice_world(kind: str, n: int, seed: int):
    """A world of n boxes or spheres on a jittered, slightly overlapping lattice (no gravity: the state is
    moved by hand)."""
    tb = import_tumble()
    rng = np.random.default_rng(seed)
    side = round(n ** (1 / 3))
    world = tb.World(gravity=(0, 0, 0))
    shape = tb.Box(0.2, 0.2, 0.2) if kind == "boxes" else tb.Sphere(0.1)
    idx = np.indices((side, side, side)).reshape(3, -1).T
    for p in idx * SPACING + rng.uniform(-0.002, 0.002, size=(side**3, 3)):
        axis = rng.normal(size=3)
        half = 0.5 * np.radians(rng.uniform(-3.0, 3.0))
        q = np.concatenate([[np.cos(half)], np.sin(half) * axis / np.linalg.norm(axis)])
        world.add_body(shape, position=p, orientation=q)
    return world


def nudge(world, rng) -> None:
    """Move every body by ±0.1 mm and turn it by ±0.1° (one batch write per array, no Python loop)."""
    a = world._live()
    a["x"] += rng.uniform(-1e-4, 1e-4, size=a["x"].shape)
    dq = np.concatenate([np.ones((a["q"].shape[0], 1)), rng.uniform(-8.7e-4, 8.7e-4, size=(a["q"].shape[0], 3))], 1)
    w1, v1 = dq[:, :1], dq[:, 1:]
    w2, v2 = a["q"][:, :1], a["q"][:, 1:]
    q = np.concatenate([w1 * w2 - np.sum(v1 * v2, 1, keepdims=True), w1 * v2 + w2 * v1 + np.cross(v1, v2)], 1)
    a["q"][:] = q / np.linalg.norm(q, axis=1, keepdims=True)


def measure(kind: str, n: int, steps: int, seed: int = 1) -> dict:
    world = lattice_world(kind, n, seed)
    rng = np.random.default_rng(seed + 100)
    world.contacts()  # compile, build the broadphase and the witnesses
    times, pairs, contacts, tests, decided, swaps, broad = [], [], [], [], [], [], []
    for _ in range(steps):
        nudge(world, rng)
        t = time.perf_counter()
        c = world.contacts()
        times.append(time.perf_counter() - t)
        s = world.collision_stats
        pairs.append(s["pairs"])
        contacts.append(len(c))
        tests.append(s["polytope_tests"])
        decided.append(s["witness_decided"])
        swaps.append(s["broadphase_swaps"])
        broad.append(s["seconds_broadphase"])
    ms = 1e3 * float(np.median(times))
    return {"kind": kind, "n": world.body_count, "ms": ms, "pairs": float(np.mean(pairs)),
            "contacts": float(np.mean(contacts)), "pairs_per_s": float(np.mean(pairs)) / (ms * 1e-3),
            "witness": float(np.sum(decided)) / max(1.0, float(np.sum(tests))), "swaps": float(np.mean(swaps)),
            "broad_ms": 1e3 * float(np.median(broad))}


def brute_force_ms(n: int, repeats: int = 5) -> float:
    """Median time of the O(n²) brute-force pair search on the lattice boxes' AABBs."""
    from tumble.collision.broadphase import brute_force_pairs

    world = lattice_world("boxes", n, 1)
    world.contacts()
    det = world._collision
    a, g = world._live(), world._geom
    args = (det._aabb_lo, det._aabb_hi, g.live("geom_body"), a["inv_mass"], a["collide"], g.live("geom_group"),
            g.live("geom_mask"))
    brute_force_pairs(*args)
    times = []
    for _ in range(repeats):
        t = time.perf_counter()
        brute_force_pairs(*args)
        times.append(time.perf_counter() - t)
    return 1e3 * float(np.median(times))


def run_collision(quick: bool) -> dict:
    """Every figure of the collision-stage benchmark as a JSON-ready dict (``results["collision"]``)."""
    import numba

    tb = import_tumble()
    steps = 5 if quick else 30
    sizes = (64, 216) if quick else (125, 1000, 8000)
    rows = []
    for kind in ("boxes", "spheres"):
        rows.append(measure(kind, 216 if quick else 1000, steps))
        print(f"[collision] {kind} n={rows[-1]['n']}: {rows[-1]['ms']:.2f} ms", file=sys.stderr, flush=True)
    scaling = [measure("boxes", n, steps) for n in sizes]
    slope = float(np.polyfit(np.log([r["n"] for r in scaling]), np.log([r["ms"] for r in scaling]), 1)[0])
    for r in scaling:
        r["brute_ms"] = brute_force_ms(r["n"])
    return {"quick": quick, "steps": steps, "date": time.strftime("%Y-%m-%d"),
            "versions": {"tumble": tb.__version__, "numpy": np.__version__, "numba": numba.__version__,
                         "python": platform.python_version()},
            "machine": f"{cpu_model()}, {os.cpu_count()} cores", "piles": rows, "scaling": scaling,
            "exponent": slope}


def render_collision(fig: dict) -> list[str]:
    """The RESULTS.md section for ``run_collision``'s figures."""
    v = fig["versions"]
    lines = [
        "## Collision stage alone",
        "",
        f"tumble {v['tumble']}, numpy {v['numpy']}, numba {v['numba']}, Python {v['python']}; {fig['machine']}; "
        f"{fig['date']}." + (" QUICK smoke sizes." if fig["quick"] else ""),
        "",
        "`world.contacts()` per step on a jittered, slightly overlapping lattice moved ±0.1 mm and turned ±0.1°",
        f"per step (see `bench/collision.py`); median of {fig['steps']} steps. Single run on a shared 2-core "
        "machine. No peer column: PyBullet and MuJoCo do not expose their collision stage alone.",
        "",
        "| state | bodies | ms / step | pairs | contacts | pairs tested / s | witness-decided | swaps / step |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for r in fig["piles"] + fig["scaling"]:
        lines.append(f"| {r['kind']} | {r['n']} | {r['ms']:.2f} | {r['pairs']:.0f} | {r['contacts']:.0f} | "
                     f"{r['pairs_per_s']:.3g} | {100 * r['witness']:.1f} % | {r['swaps']:.0f} |")
    lines += ["", f"Scaling (boxes): fitted exponent of time vs n = **{fig['exponent']:.2f}** (1 = linear).", "",
              "Broadphase alone: the incremental sweep and sort (update + filtered pairs) against the O(n²)",
              "brute-force pair search on the same boxes.", "",
              "| bodies | whole stage, ms | sweep and sort, ms | brute force, ms |", "|---|---|---|---|"]
    for r in fig["scaling"]:
        lines.append(f"| {r['n']} | {r['ms']:.2f} | {r['broad_ms']:.3f} | {r['brute_ms']:.3f} |")
    return lines


def main(argv: list[str] | None = None) -> int:
    """Measure the collision stage and fold it into the harness's results (json, then RESULTS.md rendered
    from it), keeping the scene figures already there."""
    from bench.report import render_markdown, write_atomic, write_json

    ap = argparse.ArgumentParser(prog="python -m bench.collision", description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="small sizes, few steps (smoke run)")
    args = ap.parse_args(argv)
    md = HERE / ("RESULTS-quick.md" if args.quick else "RESULTS.md")
    js = HERE / ("results-quick.json" if args.quick else "results.json")
    if not js.exists():
        print(f"python -m bench.collision: error: {js} does not exist; run `python -m bench"
              f"{' --quick' if args.quick else ''}` first", file=sys.stderr)
        return 2
    results = json.loads(js.read_text())
    results["collision"] = run_collision(args.quick)
    write_json(js, results)
    write_atomic(md, render_markdown(results))
    print(f"[collision] wrote the collision section of {md} and {js}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
