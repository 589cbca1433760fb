"""The collision stage alone: ``world.contacts()`` on pile-like states.

Lattice states: n bodies on a cubic lattice packed as densely as a settled S2 pile, with slight overlaps (boxes
of 0.2 m edge at a spacing of 0.195 m, each turned by up to ±3° about a random axis; spheres of radius 0.1 m
at 0.195 m), jittered by ±2 mm. Each step every body moves by a random ±0.1 mm and turns by ±0.1°, as a
settling pile does. Figures: milliseconds per ``contacts()`` call (median of the timed steps), candidate
pairs and contacts per step, pairs tested per second, the share of polytope tests the cached witness
decided, and broadphase swaps per step. Scaling: boxes at n = 125, 1000, 8000 with the fitted exponent of
time against n. Contrast: the O(n²) brute-force pair search on the same boxes.

Settled pile: BENCH.md's S2 box pile (1000 boxes of 0.2 m dropped into the 3 m × 3 m pen; 125 boxes in a
1.5 m pen for ``--quick``) settled by a physics engine with a contact solver (MuJoCo, see ``SETTLE_OPTIONS``;
tumble has no solver yet), its poses cached in ``bench/settled_pile_<n>.npz``. ``world.contacts()`` runs repeatedly on
that one state (coherent caches warm) on 1 and 2 Numba threads; figures: median ms per call and µs per
broadphase pair and per contact, split into the detector's stages (``CollisionDetector.stats``), the pair
kinds and how many pairs touch. Beside it, coal's (FCL's successor) time per pair on the same pairs.

Run: part of ``python -m bench [--quick]`` (section "Collision stage alone" of RESULTS.md, figures under
"collision" in results.json), or alone with ``python -m bench.collision [--quick]``, which re-measures this
stage and re-renders RESULTS.md from results.json with the scene figures kept. ``python -m bench.collision
--settle [--quick]`` settles the pile(s) again in MuJoCo and rewrites the cached poses (a few minutes for
1000 boxes); a run that finds no cache settles the pile itself when MuJoCo is installed, else skips the case.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path

import numpy as np

from bench.adapters.tumble_adapter import build_world, import_tumble
from bench.geometry import quat_to_matrix
from bench.metrics import SETTLED_SPEED
from bench.run import cpu_model
from bench.scenes import Scene, make_pile

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
    st = world.state.bodies()
    st.x[...] += rng.uniform(-1e-4, 1e-4, size=st.x.shape)
    dq = np.concatenate([np.ones((st.q.shape[0], 1)), rng.uniform(-8.7e-4, 8.7e-4, size=(st.q.shape[0], 3))], 1)
    w1, v1 = dq[:, :1], dq[:, 1:]
    w2, v2 = st.q[:, :1], st.q[:, 1:]
    q = np.concatenate([w1 * w2 - np.sum(v1 * v2, 1, keepdims=True), w1 * v2 + w2 * v1 + np.cross(v1, v2)], 1)
    st.q[:] = q / np.linalg.norm(q, axis=1, keepdims=True)


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
    det = world._method.detector(world.model)
    body, g = world.model.bodies(), world.model.geom
    args = (det._aabb_lo, det._aabb_hi, g.live("geom_body"), body.inv_mass, body.collide, g.live("geom_group"),
            g.live("geom_mask"))
    brute_force_pairs(*args)
    times = []
    for _ in range(repeats):
        t = time.perf_counter()
        brute_force_pairs(*args)
        times.append(time.perf_counter() - t)
    return 1e3 * float(np.median(times))


# ----------------------------------------------------------------------------------------------------------
# settled pile

PILE_SIDE = {False: 10, True: 5}
"""Boxes per side of the settled pile: 10 (1000 boxes, BENCH.md's S2) for full runs, 5 (125) for --quick."""

SETTLE_OPTIONS = {"solver": "CG", "cone": "elliptic", "impratio": 10.0}
"""MuJoCo's options for settling. CG: the Newton solver needs minutes per simulated second on 1000 boxes here.
Elliptic cone, impratio 10 (MuJoCo's remedy for slip): with the default pyramidal cone and impratio 1 the
boxes creep and the 1000-box pile never comes to rest (measured: boxes still at 1 m/s after 12 s)."""

SETTLE_SPEED = SETTLED_SPEED
"""m/s (0.05, the harness's S2 criterion): the pile counts as settled once no box moves faster than this …"""

SETTLE_SPIN = 0.5
"""rad/s: … and none turns faster than this, at two checks 0.5 s apart (checked every 0.5 s of simulated
time, from ``SETTLE_MIN_TIME`` on)."""

SETTLE_MIN_TIME = 5.0
"""s simulated before the pile may count as settled (the boxes land within about 2 s)."""

SETTLE_MAX_TIME = 60.0
"""s simulated: give up (and write nothing) if the pile has not settled by then."""

PILE_KEYS = ("x", "q", "v", "w", "per_side", "seed", "pen_inner", "pen_height", "edge", "settled_after_s",
             "max_penetration", "engine")


def pile_cache_path(per_side: int) -> Path:
    """Where the settled poses of the ``per_side³``-box pile are cached."""
    return HERE / f"settled_pile_{per_side**3}.npz"


def settle_pile(per_side: int, max_time: float = SETTLE_MAX_TIME) -> dict[str, np.ndarray]:
    """Drop the S2 box pile (``per_side³`` boxes, seeded orientations, pen scaled as in S7) into its pen in
    MuJoCo (``SETTLE_OPTIONS``, dt 1/240) and step until it has settled (``SETTLE_SPEED``, ``SETTLE_SPIN``);
    returns the arrays :func:`save_pile` writes (``PILE_KEYS``).

    Raises ImportError without MuJoCo and RuntimeError if the pile has not settled after ``max_time``.
    """
    import mujoco

    from bench.adapters.mujoco_adapter import MujocoAdapter
    from bench.geometry import measure_contacts

    scene = make_pile("boxes", per_side=per_side)
    adapter = MujocoAdapter(SETTLE_OPTIONS["solver"])
    sim = adapter.build(scene)
    sim.model.opt.cone = getattr(mujoco.mjtCone, f"mjCONE_{SETTLE_OPTIONS['cone'].upper()}")
    sim.model.opt.impratio = SETTLE_OPTIONS["impratio"]
    chunk = round(0.5 / scene.dt)
    steps, calm, t0 = 0, 0, time.perf_counter()
    while True:
        for _ in range(chunk):
            sim.step()
        steps += chunk
        s = sim.state()
        speed, spin = float(np.linalg.norm(s.v, axis=1).max()), float(np.linalg.norm(s.w, axis=1).max())
        print(f"[collision] settling {scene.n_bodies} boxes in MuJoCo: t = {steps * scene.dt:.1f} s, max speed "
              f"{speed:.3g} m/s, max spin {spin:.3g} rad/s ({time.perf_counter() - t0:.0f} s)", file=sys.stderr,
              flush=True)
        calm = calm + 1 if speed < SETTLE_SPEED and spin < SETTLE_SPIN else 0
        if steps * scene.dt >= SETTLE_MIN_TIME and calm >= 2:
            break
        if steps * scene.dt >= max_time:
            raise RuntimeError(f"the {scene.n_bodies}-box pile had not settled after {max_time:g} s simulated "
                               f"(max speed {speed:.3g} m/s, max spin {spin:.3g} rad/s)")
    a = scene.arrays
    q = s.q / np.linalg.norm(s.q, axis=1, keepdims=True)
    contacts = measure_contacts(a["is_box"], a["half_size"], s.x, q, 0.0, scene.wall_boxes())
    p = scene.params
    return {"x": s.x, "q": q, "v": s.v, "w": s.w, "per_side": np.int64(per_side), "seed": np.int64(p["seed"]),
            "pen_inner": np.float64(p["pen_inner"]), "pen_height": np.float64(p["pen_height"]),
            "edge": np.float64(scene.bodies[0].shape.size[0]), "settled_after_s": np.float64(steps * scene.dt),
            "max_penetration": np.float64(contacts.max_penetration),
            "engine": np.str_(f"MuJoCo {adapter.version()} ({SETTLE_OPTIONS['solver']} solver, "
                              f"{SETTLE_OPTIONS['cone']} cone, impratio {SETTLE_OPTIONS['impratio']:g}, dt 1/240)")}


def save_pile(path: Path, pile: dict[str, np.ndarray]) -> None:
    """Write the pile's arrays as an .npz via a temporary file in the same folder and ``os.replace``."""
    path = Path(path)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as fh:
            np.savez_compressed(fh, **{k: np.asarray(pile[k]) for k in PILE_KEYS})
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def load_pile(path: Path) -> dict[str, np.ndarray]:
    """Read a cached pile (``allow_pickle=False``: plain arrays only) and check its shapes."""
    with np.load(path, allow_pickle=False) as z:
        missing = [k for k in PILE_KEYS if k not in z.files]
        if missing:
            raise ValueError(f"{path} lacks {', '.join(missing)}")
        pile = {k: z[k] for k in PILE_KEYS}
    n = int(pile["per_side"]) ** 3
    if pile["x"].shape != (n, 3) or pile["q"].shape != (n, 4) or pile["v"].shape != (n, 3) \
            or pile["w"].shape != (n, 3):
        raise ValueError(f"{path}: arrays do not hold {n} boxes")
    return pile


def settled_pile(per_side: int) -> tuple[dict[str, np.ndarray] | None, str]:
    """The cached settled pile, settled and cached now if there is no cache and MuJoCo is installed;
    (None, why) if neither (or if the pile did not settle)."""
    path = pile_cache_path(per_side)
    if path.exists():
        return load_pile(path), ""
    try:
        import mujoco  # noqa: F401
    except ImportError:
        return None, (f"skipped: no cached poses ({path.name}) and MuJoCo is not installed to settle the pile "
                      "(pip install -e '.[peers]')")
    try:
        pile = settle_pile(per_side)
    except RuntimeError as exc:
        return None, f"skipped: no cached poses ({path.name}) and {exc}"
    save_pile(path, pile)
    return pile, ""


def pile_scene(pile: dict[str, np.ndarray]) -> Scene:
    """The S2 box pile scene (pen, ground, box sizes and masses) with the boxes at the pile's poses."""
    scene = make_pile("boxes", per_side=int(pile["per_side"]), seed=int(pile["seed"]))
    bodies = tuple(replace(b, position=tuple(map(float, x)), orientation=tuple(map(float, q)))
                   for b, x, q in zip(scene.bodies, pile["x"], pile["q"], strict=True))
    return replace(scene, bodies=bodies)


def broadphase_pairs(world) -> np.ndarray:
    """(m, 2) body rows of the broadphase pairs of the world's last ``contacts()`` call (the detector keeps
    their keys ``geom_a * geoms + geom_b``, sorted)."""
    g = world.model.geom.count
    keys = world.contact_buffer().pairs.live("pair_key")
    body = world.model.geom.live("geom_body").astype(np.int64)
    return np.stack([body[keys // g], body[keys % g]], axis=1)


def pair_census(world, contacts, n_boxes: int) -> tuple[dict, np.ndarray]:
    """Broadphase pairs of the last ``contacts()`` call by kind (box–box, box–wall, box–ground), how many of
    each have a contact (within the contact margin) or penetrate, and the contacts by kind; and the (m,)
    mask of the pairs with contacts."""
    g = world.model.geom.count
    keys = world.contact_buffer().pairs.live("pair_key")
    ba, bb = broadphase_pairs(world).T
    ground = world.body_count - 1  # build_world adds the boxes, then the walls, then the ground
    kind = np.where((ba < n_boxes) & (bb < n_boxes), 0, np.where((ba == ground) | (bb == ground), 2, 1))
    ck = np.minimum(contacts.geom_a, contacts.geom_b) * g + np.maximum(contacts.geom_a, contacts.geom_b)
    touching = np.isin(keys, ck)
    penetrating = np.isin(keys, ck[contacts.depth > 0.0])
    out = {"pairs": int(keys.size), "touching": int(touching.sum()), "penetrating": int(penetrating.sum()),
           "contacts": len(contacts), "max_depth": float(contacts.depth.max(initial=0.0)), "pair_kinds": {}}
    for k, name in enumerate(("box-box", "box-wall", "box-ground")):
        sel = kind == k
        out["pair_kinds"][name] = {"pairs": int(sel.sum()), "touching": int(touching[sel].sum()),
                                   "penetrating": int(penetrating[sel].sum())}
    names, counts = np.unique(contacts.kind, return_counts=True)
    out["contact_kinds"] = {str(n): int(c) for n, c in zip(names, counts, strict=True)}
    return out, touching


def _stage_figures(seconds: dict[str, list[float]], pairs: int, contacts: int) -> dict:
    """Median ms per call of each stage, and µs per pair and per contact."""
    out = {}
    for stage, values in seconds.items():
        ms = 1e3 * float(np.median(values))
        out[stage] = {"ms": ms, "us_per_pair": 1e3 * ms / max(pairs, 1), "us_per_contact": 1e3 * ms / max(contacts, 1)}
    return out


def measure_settled(pile: dict[str, np.ndarray], steps: int, threads: tuple[int, ...] = (1, 2),
                    with_coal: bool = True, coal_repeats: int = 5) -> dict:
    """tumble's collision stage on the settled pile (``steps`` calls of ``world.contacts()`` on the same state
    per thread count, medians), and coal's time per pair on the same broadphase pairs."""
    import numba

    scene = pile_scene(pile)
    world, _ = build_world(scene)
    n = scene.n_bodies
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    before = numba.get_num_threads()
    runs, census, touching, first = [], None, None, None
    try:
        for t in dict.fromkeys(min(t, numba.config.NUMBA_NUM_THREADS) for t in threads):
            numba.set_num_threads(t)
            world.contacts()  # compile, build the broadphase and the witnesses
            seconds: dict[str, list[float]] = {k: [] for k in ("aabb", "broadphase", "narrowphase", "other", "total")}
            tests = decided = 0
            for _ in range(steps):
                t0 = time.perf_counter()
                c = world.contacts()
                total = time.perf_counter() - t0
                s = world.collision_stats
                seconds["total"].append(total)
                for k in ("aabb", "broadphase", "narrowphase"):
                    seconds[k].append(s[f"seconds_{k}"])
                seconds["other"].append(total - s["seconds_aabb"] - s["seconds_broadphase"] - s["seconds_narrowphase"])
                tests += s["polytope_tests"]
                decided += s["witness_decided"]
                counts = (s["pairs"], len(c))
                if first is None:
                    first, (census, touching) = counts, pair_census(world, c, n)
                elif counts != first:
                    raise RuntimeError(f"pairs and contacts changed on an unchanged state: {first} then {counts}")
            runs.append({"threads": t, "witness": decided / max(tests, 1),
                         "stages": _stage_figures(seconds, *first)})
            print(f"[collision] settled pile n={n}, {t} thread(s): {runs[-1]['stages']['total']['ms']:.2f} ms",
                  file=sys.stderr, flush=True)
    finally:
        numba.set_num_threads(before)
    out = {"n": n, "steps": steps, "engine": str(pile["engine"]), "cache": pile_cache_path(int(pile["per_side"])).name,
           "settled_after_s": float(pile["settled_after_s"]), "max_penetration": float(pile["max_penetration"]),
           "max_speed": float(np.linalg.norm(pile["v"], axis=1).max()),
           "max_spin": float(np.linalg.norm(pile["w"], axis=1).max()),
           "margin": world.contact_margin, "load": load, **census, "runs": runs}
    out["coal"] = (coal_per_pair(scene, broadphase_pairs(world), world.contact_margin, coal_repeats) if with_coal
                   else {"skipped": "not measured"})
    mask = out["coal"].pop("colliding_mask", None)
    if mask is not None:
        out["coal"]["agree"] = int(np.sum(mask == touching))
    return out


def coal_per_pair(scene: Scene, pairs: np.ndarray, margin: float, repeats: int = 5) -> dict:
    """coal's time per pair on ``pairs`` ((m, 2) body rows as in :func:`build_world`: boxes, walls, ground).

    Boxes and walls are ``coal.Box``, the ground ``coal.Halfspace``; one ``coal.ComputeCollision`` per pair
    of shapes, ``CollisionRequest(CONTACT, 1)`` with ``security_margin`` = tumble's contact margin, coal's
    default GJK/EPA settings (no cached guesses), one thread. Every transform, functor and result object is
    made before the clock starts. Figures (medians of ``repeats``): coal's own timer around each C++ call
    (``enable_timings``: a steady clock read in C++, reported as ``CPUTimes.user`` in µs) summed; the Python
    loop minus the same loop with an empty body (so including the Python → C++ call); and, likewise,
    collide + ``ComputeContactPatch`` (coal's contact polygon, the counterpart of tumble's clipped manifold)
    on the colliding pairs.
    """
    try:
        import coal
    except ImportError:
        return {"skipped": "coal is not installed"}
    from importlib.metadata import version

    shapes: dict[tuple, object] = {}

    def shape(key: tuple) -> object:
        if key not in shapes:
            shapes[key] = coal.Box(*key[1]) if key[0] == "box" else coal.Halfspace(np.array([0.0, 0.0, 1.0]), key[1])
        return shapes[key]

    geoms, tfs = [], []
    for b in scene.bodies:
        geoms.append(shape(("box", b.shape.size)))
        tfs.append(coal.Transform3s(quat_to_matrix(np.array(b.orientation)), np.array(b.position)))
    for w in scene.walls:
        geoms.append(shape(("box", w.size)))
        tfs.append(coal.Transform3s(quat_to_matrix(np.array(w.orientation)), np.array(w.position)))
    geoms.append(shape(("halfspace", scene.ground.height)))
    tfs.append(coal.Transform3s())
    collide: dict[tuple[int, int], object] = {}
    patch: dict[tuple[int, int], object] = {}
    items = []
    for a, b in pairs:
        key = (id(geoms[a]), id(geoms[b]))
        if key not in collide:
            collide[key] = coal.ComputeCollision(geoms[a], geoms[b])
            patch[key] = coal.ComputeContactPatch(geoms[a], geoms[b])
        items.append((collide[key], patch[key], tfs[a], tfs[b]))
    req = coal.CollisionRequest(coal.CollisionRequestFlag.CONTACT, 1)
    req.security_margin = margin
    preq = coal.ContactPatchRequest()
    m = max(len(items), 1)
    own, loop, with_patch, colliding = [], [], [], np.zeros(0, dtype=bool)
    for _ in range(repeats):
        req.enable_timings = True
        calls = [(f, ta, tb, coal.CollisionResult()) for f, _, ta, tb in items]
        for f, ta, tb, res in calls:
            f(ta, tb, req, res)
        own.append(1e-6 * sum(c[3].timings.user for c in calls))
        req.enable_timings = False
        calls = [(f, ta, tb, coal.CollisionResult()) for f, _, ta, tb in items]
        t0 = time.perf_counter()
        for f, ta, tb, res in calls:
            f(ta, tb, req, res)
        t1 = time.perf_counter()
        for _f, _ta, _tb, _res in calls:
            pass
        t2 = time.perf_counter()
        loop.append((t1 - t0) - (t2 - t1))
        colliding = np.array([c[3].isCollision() for c in calls], dtype=bool)
        hits = [(pf, ta, tb, c[3], coal.ContactPatchResult(preq))
                for (_, pf, ta, tb), c, hit in zip(items, calls, colliding, strict=True) if hit]
        t0 = time.perf_counter()
        for pf, ta, tb, res, pres in hits:
            pf(ta, tb, res, preq, pres)
        t1 = time.perf_counter()
        for _pf, _ta, _tb, _res, _pres in hits:
            pass
        t2 = time.perf_counter()
        with_patch.append(loop[-1] + (t1 - t0) - (t2 - t1))
    return {"version": version("coal"), "pairs": len(items), "colliding": int(colliding.sum()),
            "colliding_mask": colliding, "repeats": repeats,
            "us_per_pair_own_timer": 1e6 * float(np.median(own)) / m,
            "us_per_pair_loop": 1e6 * float(np.median(loop)) / m,
            "us_per_pair_with_patch": 1e6 * float(np.median(with_patch)) / m}


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
    pile, why = settled_pile(PILE_SIDE[quick])
    if pile is None:
        print(f"[collision] settled pile {why}", file=sys.stderr, flush=True)
        settled = {"n": PILE_SIDE[quick] ** 3, "skipped": why}
    else:
        settled = measure_settled(pile, steps=10 if quick else 50, coal_repeats=3 if quick else 7)
    return {"quick": quick, "steps": steps, "date": time.strftime("%Y-%m-%d"),
            "versions": {"tumble": tb.__version__, "numpy": np.__version__, "numba": numba.__version__,
                         "python": platform.python_version()},
            "machine": f"{cpu_model()}, {os.cpu_count()} cores", "piles": rows, "scaling": scaling,
            "exponent": slope, "settled": settled}


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
    if fig.get("settled"):
        lines += [""] + render_settled(fig["settled"])
    return lines


STAGE_NAMES = {"aabb": "AABBs", "broadphase": "broadphase (sweep and sort)", "narrowphase": "narrowphase",
               "other": "other (contact gather, Python)", "total": "whole call"}


def render_settled(r: dict) -> list[str]:
    """The settled-pile part of the collision section (``run_collision(...)["settled"]``)."""
    lines = [f"### Settled pile: {r['n']} boxes", ""]
    if r.get("skipped"):
        return lines + [f"Settled pile {r['skipped']}."]
    kinds = ", ".join(f"{k} {v['pairs']} ({v['touching']} with contacts)" for k, v in r["pair_kinds"].items())
    contact_kinds = ", ".join(f"{k} {v}" for k, v in r["contact_kinds"].items())
    lines += [
        f"BENCH.md's S2 boxes dropped into the pen and settled in {r['engine']} after {r['settled_after_s']:.1f} s "
        f"simulated (max box speed {r['max_speed']:.2g} m/s, max spin {r['max_spin']:.2g} rad/s, max penetration "
        f"{1e3 * r['max_penetration']:.2f} mm); poses cached in `bench/{r['cache']}`. `world.contacts()` called "
        f"{r['steps']} times on that one state (coherent caches warm); stages from `CollisionDetector.stats`, "
        "\"other\" = whole call − stages; each row is the median of its own, so the rows need not add up. "
        f"1-minute load average when it started: {r.get('load', float('nan')):.2f} on "
        "a shared machine (a busy core slows the 2-thread figures most).",
        "",
        f"Broadphase pairs: **{r['pairs']}** — {kinds}; {r['touching']} with contacts within the "
        f"{1e3 * r['margin']:g} mm margin, {r['penetrating']} penetrating. Contacts: **{r['contacts']}** "
        f"({contact_kinds}); deepest {1e3 * r['max_depth']:.2f} mm.",
        "",
    ]
    runs = r["runs"]
    head = ["stage"]
    for run in runs:
        t = f"{run['threads']} thread{'s' if run['threads'] > 1 else ''}"
        head += [f"{t}: ms / call", "µs / pair", "µs / contact"]
    lines += ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for stage, name in STAGE_NAMES.items():
        cells = [name]
        for run in runs:
            st = run["stages"][stage]
            cells += [f"{st['ms']:.3f}", f"{st['us_per_pair']:.3f}", f"{st['us_per_contact']:.3f}"]
        lines.append("| " + " | ".join(cells) + " |")
    lines += ["", "Witness-decided polytope tests: " + ", ".join(
        f"{100 * run['witness']:.1f} % ({run['threads']} thread{'s' if run['threads'] > 1 else ''})" for run in runs)
        + "."]
    c = r["coal"]
    lines += [""]
    if c.get("skipped"):
        return lines + [f"coal (independent library) on the same pairs: {c['skipped']}."]
    narrow = runs[0]["stages"]["narrowphase"]["us_per_pair"]
    lines += [
        f"The independent library on the same {c['pairs']} pairs: coal {c['version']} (FCL's successor), one "
        "thread; boxes and walls as `coal.Box`, the ground as `coal.Halfspace`; one `ComputeCollision` per shape "
        "pair, `CollisionRequest(CONTACT, 1)` with `security_margin` = tumble's contact margin, default GJK/EPA "
        "settings; transforms, functors and results made before the clock starts; median of "
        f"{c['repeats']} passes. coal finds {c['colliding']} pairs colliding within the margin (tumble: "
        f"{r['touching']} pairs with contacts); the two agree on {c['agree']} of the {c['pairs']} pairs.",
        "",
        "| per broadphase pair | µs |",
        "|---|---|",
        f"| coal collide, coal's own timer (`enable_timings`: C++ call only) | {c['us_per_pair_own_timer']:.3f} |",
        f"| coal collide, Python loop − empty loop (includes the Python → C++ call) | {c['us_per_pair_loop']:.3f} |",
        "| coal collide + `ComputeContactPatch` on the colliding pairs (contact polygon, like tumble's manifold), "
        f"loop − empty loop | {c['us_per_pair_with_patch']:.3f} |",
        f"| tumble narrowphase, {runs[0]['threads']} thread (up to 4 contacts per pair) | {narrow:.3f} |",
    ]
    return lines


def main(argv: list[str] | None = None) -> int:
    """Measure the collision stage and fold it into the harness's results (json, then RESULTS.md rendered
    from it), keeping the scene figures already there."""
    from bench.report import render_markdown, write_atomic, write_json

    ap = argparse.ArgumentParser(prog="python -m bench.collision", description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="small sizes, few steps (smoke run)")
    ap.add_argument("--settle", action="store_true",
                    help="settle the pile in MuJoCo again and rewrite bench/settled_pile_<n>.npz (1000 and 125 "
                         "boxes; 125 only with --quick), then stop")
    args = ap.parse_args(argv)
    if args.settle:
        for side in sorted({PILE_SIDE[True], PILE_SIDE[args.quick]}):
            path = pile_cache_path(side)
            save_pile(path, settle_pile(side))
            print(f"[collision] wrote {path}", file=sys.stderr)
        return 0
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
