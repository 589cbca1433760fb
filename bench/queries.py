"""``python -m bench.queries``: tumble's ``World.ray_cast`` beside MuJoCo's ``mj_multiRay`` and PyBullet's
``rayTestBatch``, and the cost of a sensor on a step.

Scene (the same in each engine, from NumPy ``default_rng(SEED)``): a ground (the plane z = 0) and ``N_BODIES`` =
1,000 static shapes scattered uniformly in the 20 m cube [−10, 10]² × [0, 20] m with uniform random orientations:
a third spheres (radius 0.1–0.5 m), a third boxes (half extents 0.1–0.5 m), a third capsules (radius 0.1–0.3 m,
cylindrical part 0.2–1.0 m along the body z).

Rays: ``N_ORIGINS`` = 100 origins uniform in the cube, each at least 1.2 m from every body's centre (outside every
shape, whose bounding radii are below 0.8 m, so that no engine's convention for a ray starting inside a solid
matters), times ``N_DIRECTIONS`` = 1,000 directions uniform on the unit sphere (a new draw per origin), each of
length ``LENGTH`` = 30 m: 100,000 rays. ``mj_multiRay`` casts many rays from ONE point, hence origins × directions.

Rows (each the median over ``REPEATS`` calls after one untimed call, Numba compile or cache load excluded):

- ``tumble``: one ``world.ray_cast(origins, directions, max_distance=30)`` call on all 100,000 rays (argument
  checks included); Numba threads: as many as cores.
- ``mujoco``: ``mj_multiRay(model, data, origin, directions, None, 1, -1, geomid, dist, None, 1000, 30)`` once per
  origin (100 calls; MuJoCo's ray casts are single-threaded), after ``mj_kinematics``. Geom 0 is the plane
  (tumble's body 0), geom i shape i (body i). The cutoff culls geoms by bounding sphere, which the unbounded plane
  does not have: its hits beyond 30 m are counted as misses.
- ``pybullet``: ``rayTestBatch(from, to, numThreads=0)`` (0: all cores) in batches of
  ``MAX_RAY_INTERSECTION_BATCH_SIZE`` − 1 rays (a batch of exactly that many returns one result fewer).

Agreement on all rays: the body hit (mapped to tumble's body index) and the distance [m] along the ray. The
sensor row: a pile of ``PILE`` = 100 spheres and boxes on the ground, ``SENSOR_STEPS`` steps of 1 ms after a
settle, step time with and without one ``tb.Imu`` on a body (medians over interleaved blocks).
"""

from __future__ import annotations

import statistics
import time
from pathlib import Path
from typing import Any

import numpy as np

from bench.run import standalone_header, standalone_report

SEED = 51
N_BODIES = 1000
N_ORIGINS = 100
N_DIRECTIONS = 1000
LENGTH = 30.0
REPEATS = 7
HALF = 10.0
PILE = 100
SENSOR_STEPS = 200
SENSOR_BLOCKS = 9
DISTANCE_TOL = 1e-6
"""m: two engines' distances for the same body "agree" within this."""
OUT = Path(__file__).resolve().parent / "QUERIES.md"


def scene() -> dict[str, np.ndarray]:
    """The seeded scene and rays: kind (N,) 0 sphere / 1 box / 2 capsule, size (N, 3) (radius; half extents;
    radius and half length) [m], pos (N, 3) [m], quat (N, 4) (w, x, y, z); origins (R, 3), directions (R, 3)
    unit, R = N_ORIGINS × N_DIRECTIONS, origin k's rays at rows k·N_DIRECTIONS …"""
    rng = np.random.default_rng(SEED)
    kind = np.arange(N_BODIES) % 3
    size = np.zeros((N_BODIES, 3))
    size[kind == 0, 0] = rng.uniform(0.1, 0.5, (kind == 0).sum())
    size[kind == 1] = rng.uniform(0.1, 0.5, ((kind == 1).sum(), 3))
    size[kind == 2, 0] = rng.uniform(0.1, 0.3, (kind == 2).sum())
    size[kind == 2, 1] = rng.uniform(0.1, 0.5, (kind == 2).sum())
    pos = rng.uniform([-HALF, -HALF, 0.0], [HALF, HALF, 2 * HALF], (N_BODIES, 3))
    quat = rng.normal(size=(N_BODIES, 4))
    quat /= np.linalg.norm(quat, axis=1, keepdims=True)
    origins = []
    while len(origins) < N_ORIGINS:
        o = rng.uniform([-HALF, -HALF, 1.2], [HALF, HALF, 2 * HALF])
        if np.min(np.linalg.norm(pos - o, axis=1)) >= 1.2:
            origins.append(o)
    d = rng.normal(size=(N_ORIGINS * N_DIRECTIONS, 3))
    d /= np.linalg.norm(d, axis=1, keepdims=True)
    return {"kind": kind, "size": size, "pos": pos, "quat": quat, "origins": np.repeat(origins, N_DIRECTIONS, 0),
            "directions": d}


def _median_time(fn, repeats: int = REPEATS) -> tuple[float, Any]:
    out = fn()
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times), out


def run_tumble(s: dict[str, np.ndarray]) -> dict[str, Any]:
    """Body index hit (−1 none; the ground is body 0, shape i is body i + 1) and distance (inf none) per ray."""
    import tumble as tb

    world = tb.World(gravity=(0, 0, 0))
    world.add_ground()
    for k, size, pos, quat in zip(s["kind"], s["size"], s["pos"], s["quat"], strict=True):
        shape = (tb.Sphere(size[0]) if k == 0 else tb.Box(*(2 * size)) if k == 1
                 else tb.Capsule(size[0], 2 * size[1]))
        world.add_body(shape, position=pos, orientation=quat, fixed=True)
    t0 = time.perf_counter()
    world.ray_cast(s["origins"][:1], s["directions"][:1], max_distance=LENGTH)
    world.ray_cast(s["origins"][:100], s["directions"][:100], max_distance=LENGTH)
    first = time.perf_counter() - t0
    seconds, hits = _median_time(lambda: world.ray_cast(s["origins"], s["directions"], max_distance=LENGTH))
    return {"s": seconds, "body": hits.body, "distance": hits.distance, "first_call_s": first}


def _xml(values) -> str:
    return " ".join(f"{float(v):.17g}" for v in values)


def run_mujoco(s: dict[str, np.ndarray]) -> dict[str, Any]:
    try:
        import mujoco
    except ImportError:
        return {"skipped": "mujoco not installed"}
    geoms = ['<geom type="plane" size="0 0 1"/>']
    for k, size, pos, quat in zip(s["kind"], s["size"], s["pos"], s["quat"], strict=True):
        kind = ("sphere", "box", "capsule")[k]
        sz = _xml(size[:1] if k == 0 else size if k == 1 else size[:2])
        geoms.append(f'<geom type="{kind}" size="{sz}" pos="{_xml(pos)}" quat="{_xml(quat)}"/>')
    model = mujoco.MjModel.from_xml_string("<mujoco><worldbody>" + "".join(geoms) + "</worldbody></mujoco>")
    data = mujoco.MjData(model)
    mujoco.mj_kinematics(model, data)
    n = N_ORIGINS * N_DIRECTIONS
    geomid, dist = np.empty(n, dtype=np.int32), np.empty(n)
    origins = s["origins"][::N_DIRECTIONS].copy()
    dirs = [np.ascontiguousarray(s["directions"][k * N_DIRECTIONS:(k + 1) * N_DIRECTIONS]).reshape(-1)
            for k in range(N_ORIGINS)]

    def cast():
        gid, dd = np.empty(N_DIRECTIONS, dtype=np.int32), np.empty(N_DIRECTIONS)
        for k in range(N_ORIGINS):
            mujoco.mj_multiRay(model, data, origins[k], dirs[k], None, 1, -1, gid, dd, None, N_DIRECTIONS, LENGTH)
            geomid[k * N_DIRECTIONS:(k + 1) * N_DIRECTIONS] = gid
            dist[k * N_DIRECTIONS:(k + 1) * N_DIRECTIONS] = dd
        return geomid.copy(), dist.copy()

    seconds, (gid, dd) = _median_time(cast)
    hit = (gid >= 0) & (dd <= LENGTH)   # the cutoff culls by bounding spheres: the (unbounded) plane ignores it
    return {"s": seconds, "body": np.where(hit, gid, -1), "distance": np.where(hit, dd, np.inf)}


def run_pybullet(s: dict[str, np.ndarray]) -> dict[str, Any]:
    try:
        import pybullet as p
    except ImportError:
        return {"skipped": "pybullet not installed"}
    client = p.connect(p.DIRECT)
    ids = {p.createMultiBody(0, p.createCollisionShape(p.GEOM_PLANE, physicsClientId=client),
                             physicsClientId=client): 0}
    for i, (k, size, pos, quat) in enumerate(zip(s["kind"], s["size"], s["pos"], s["quat"], strict=True)):
        if k == 0:
            shape = p.createCollisionShape(p.GEOM_SPHERE, radius=size[0], physicsClientId=client)
        elif k == 1:
            shape = p.createCollisionShape(p.GEOM_BOX, halfExtents=size.tolist(), physicsClientId=client)
        else:
            shape = p.createCollisionShape(p.GEOM_CAPSULE, radius=size[0], height=2 * size[1],
                                           physicsClientId=client)
        ids[p.createMultiBody(0, shape, basePosition=pos.tolist(), baseOrientation=[*quat[1:], quat[0]],
                              physicsClientId=client)] = i + 1
    starts = s["origins"]
    ends = starts + LENGTH * s["directions"]
    batch = getattr(p, "MAX_RAY_INTERSECTION_BATCH_SIZE", 16384) - 1   # a full batch silently drops its last ray
    chunks = [(starts[i:i + batch].tolist(), ends[i:i + batch].tolist()) for i in range(0, len(starts), batch)]

    def cast():
        out = []
        for a, b in chunks:
            out += p.rayTestBatch(a, b, numThreads=0, physicsClientId=client)
        return out

    seconds, res = _median_time(cast)
    p.disconnect(client)
    body = np.array([ids.get(r[0], -2) if r[0] >= 0 else -1 for r in res])
    distance = np.array([r[2] * LENGTH if r[0] >= 0 else np.inf for r in res])
    return {"s": seconds, "body": body, "distance": distance}


def agreement(a: dict[str, Any], b: dict[str, Any]) -> dict[str, Any]:
    """How many rays differ in the body hit, and the distances of the rays that hit the same body."""
    same = a["body"] == b["body"]
    both = same & (a["body"] >= 0)
    gap = np.abs(a["distance"][both] - b["distance"][both])
    return {"rays": int(same.size), "body_differs": int((~same).sum()), "hits": int(both.sum()),
            "distance_max": float(gap.max()) if gap.size else 0.0,
            "distance_median": float(np.median(gap)) if gap.size else 0.0,
            "distance_over_tol": int((gap > DISTANCE_TOL).sum())}


def by_kind(a: dict[str, Any], b: dict[str, Any], s: dict[str, np.ndarray]) -> dict[str, dict[str, float]]:
    """Per kind of the body hit (sphere, box, capsule, ground), over the rays where a and b hit the same body:
    how many, how many differ by more than DISTANCE_TOL, the median and max |Δ| [m], and the mean of b − a [m]
    (negative: b hits earlier)."""
    kind = np.concatenate([[3], s["kind"]])   # body 0 is the ground
    both = (a["body"] == b["body"]) & (a["body"] >= 0)
    out = {}
    for k, name in enumerate(("sphere", "box", "capsule", "ground")):
        sel = both & (kind[np.maximum(a["body"], 0)] == k)
        delta = b["distance"][sel] - a["distance"][sel]
        out[name] = {"hits": int(sel.sum()), "over_tol": int((np.abs(delta) > DISTANCE_TOL).sum()),
                     "median": float(np.median(np.abs(delta))), "max": float(np.abs(delta).max()),
                     "mean": float(delta.mean())}
    return out


def sensor_cost() -> dict[str, float]:
    """Step time [ms] of a 100-body pile with and without one Imu, medians over interleaved blocks."""
    import tumble as tb

    def pile(with_imu: bool):
        rng = np.random.default_rng(SEED)
        world = tb.World()
        world.add_ground()
        bodies = []
        for i in range(PILE):
            pos = [rng.uniform(-1.5, 1.5), rng.uniform(-1.5, 1.5), 0.3 + 0.25 * i / 4]
            shape = tb.Sphere(0.15) if i % 2 else tb.Box(0.25, 0.25, 0.25)
            bodies.append(world.add_body(shape, position=pos))
        if with_imu:
            world.add_sensor(tb.Imu(bodies[-1]))
        for _ in range(300):
            world.step(1e-3)
        return world

    worlds = {False: pile(False), True: pile(True)}
    times: dict[bool, list[float]] = {False: [], True: []}
    for _ in range(SENSOR_BLOCKS):
        for flag, world in worlds.items():
            t0 = time.perf_counter()
            for _ in range(SENSOR_STEPS):
                world.step(1e-3)
            times[flag].append((time.perf_counter() - t0) / SENSOR_STEPS)
    off, on = statistics.median(times[False]), statistics.median(times[True])
    return {"off_ms": 1e3 * off, "on_ms": 1e3 * on, "overhead": on / off - 1.0}


def measure() -> dict[str, Any]:
    s = scene()
    rows = {"tumble": run_tumble(s), "mujoco": run_mujoco(s), "pybullet": run_pybullet(s)}
    agree = {}
    for peer in ("mujoco", "pybullet"):
        if "skipped" not in rows[peer]:
            agree[peer] = agreement(rows["tumble"], rows[peer]) | {"kinds": by_kind(rows["tumble"], rows[peer], s)}
    if "kinds" in agree.get("mujoco", {}) and "kinds" in agree.get("pybullet", {}):
        # where PyBullet's body differs from tumble's: does MuJoCo side with tumble?
        differ = rows["tumble"]["body"] != rows["pybullet"]["body"]
        agree["pybullet"]["mujoco_sides_with_tumble"] = int(
            (rows["mujoco"]["body"][differ] == rows["tumble"]["body"][differ]).sum())
    hit = rows["tumble"]["body"]
    return {"rows": rows, "agree": agree, "hit_fraction": float((hit >= 0).mean()),
            "ground_fraction": float((hit == 0).mean()), "sensor": sensor_cost()}


def render(results: dict[str, Any]) -> str:
    meta, rows, agree = results["meta"], results["rows"], results["agree"]
    ms = {k: 1e3 * r["s"] for k, r in rows.items() if "skipped" not in r}
    peers = [k for k in ("mujoco", "pybullet") if k in ms]
    fastest = min((ms[k] for k in peers), default=None)
    lines = standalone_header("Ray casts and sensors: tumble beside MuJoCo and PyBullet", "bench.queries", meta,
                              "other work on this shared machine: timings are noisy, compare ratios from one run")
    lines += [f"Scene: a ground and {N_BODIES} static shapes (spheres, boxes, capsules, a third each, seeded) in a "
              f"20 m cube; {N_ORIGINS} origins × {N_DIRECTIONS} directions = {N_ORIGINS * N_DIRECTIONS:,} rays of "
              f"{LENGTH:g} m ({100 * results['hit_fraction']:.1f} % hit something, "
              f"{100 * results['ground_fraction']:.1f} % the ground). Each time is the median of {REPEATS} calls after "
              "one untimed call. How each engine is called: the docstring of `bench/queries.py`.", "",
              "| engine | ms per 100k rays | tumble's speed vs it | rays whose body differs from tumble's | "
              "same-body distance max / median |Δ| [m] | same-body hits over 1e-6 m |", "|---|---|---|---|---|---|"]
    for label, r in rows.items():
        if "skipped" in r:
            lines.append(f"| {label} | skipped: {r['skipped']} | | | | |")
            continue
        if label == "tumble":
            lines.append(f"| tumble | {ms['tumble']:.1f} | 1.00× | — | — | — |")
            continue
        a = agree[label]
        lines.append(f"| {label} | {ms[label]:.1f} | {ms[label] / ms['tumble']:.2f}× | {a['body_differs']} of "
                     f"{a['rays']:,} | {a['distance_max']:.1e} / {a['distance_median']:.1e} | "
                     f"{a['distance_over_tol']} of {a['hits']:,} |")
    if fastest is not None:
        lines += ["", f"tumble against the faster peer: {fastest / ms['tumble']:.2f}× (above 1: tumble is faster). "
                  f"tumble's first call (Numba compile or cache load, not in the figures): "
                  f"{rows['tumble']['first_call_s']:.2f} s."]
    for peer, a in agree.items():
        lines += ["", f"{peer}, per kind of the body hit, over the rays where it and tumble hit the same body:", "",
                  "| kind | rays | over 1e-6 m | median |Δ| [m] | max |Δ| [m] | mean (peer − tumble) [m] |",
                  "|---|---|---|---|---|---|"]
        for name, k in a["kinds"].items():
            lines.append(f"| {name} | {k['hits']:,} | {k['over_tol']:,} | {k['median']:.1e} | {k['max']:.1e} | "
                         f"{k['mean']:+.1e} |")
        if "mujoco_sides_with_tumble" in a:
            lines += ["", f"Of the {a['body_differs']} rays where PyBullet's body differs from tumble's, MuJoCo "
                      f"hits tumble's body on {a['mujoco_sides_with_tumble']}."]
    sensor = results["sensor"]
    lines += ["", "## A sensor's cost on a step", "",
              f"A pile of {PILE} spheres and boxes on the ground (settled 300 steps), 1 ms steps, median over "
              f"{SENSOR_BLOCKS} interleaved blocks of {SENSOR_STEPS} steps:", "",
              "| world | ms per step |", "|---|---|",
              f"| without a sensor | {sensor['off_ms']:.3f} |", f"| with one `tb.Imu` | {sensor['on_ms']:.3f} |", "",
              f"Overhead: {100 * sensor['overhead']:+.2f} % (target < 1 %), "
              f"{sensor['on_ms'] - sensor['off_ms']:.3f} ms a step. The IMU's cost is its Python "
              "`before_step`, called once a step, which copies the body's (q, v, ω) row (the point velocities are "
              "computed when the sensor is read); a whole-step median on a shared machine also carries the "
              "machine's spread.", ""]
    return "\n".join(lines)


def main() -> int:
    return standalone_report(OUT, measure, render, ("numpy", "numba", "mujoco", "pybullet"))


if __name__ == "__main__":
    raise SystemExit(main())
