"""Tossed boxes: the event method on tumbling, rocking and sliding bodies, beside time-stepping.

Seeded random tosses of a cube and of a 2:1 box onto the ground (random orientation, spin up to 10 rad/s,
speed up to 3 m/s, restitution in {0, 0.125, 0.3, 0.5, 0.8}, friction in {0.1, 0.2, 0.5}), each run with
frames of 1/150 s until the body has rested on a face for ``REST_SECONDS`` (or ``seconds`` have passed).
Per toss: wall time per simulated second and of the slowest frame, the event method's impacts and root
evaluations, the largest energy over the start, the face the body rests on and its final pose.

    python -m bench.tosses              # 200 tosses, each method → bench/TOSSES.md
    python -m bench.tosses --quick      # 10 tosses → /tmp

tests/event/test_event_tosses.py runs the same tosses (``tosses``, ``run_toss``) and checks their physics.
"""

from __future__ import annotations

import argparse
import datetime
import math
import os
import platform
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

RESTITUTIONS = (0.0, 0.125, 0.3, 0.5, 0.8)
FRICTIONS = (0.1, 0.2, 0.5)
SIZES = {"cube": (0.1, 0.1, 0.1), "box 2:1": (0.2, 0.1, 0.1)}   # [m] full edge lengths
DENSITY = 400.0          # [kg/m³]: a 0.1 m wooden cube weighs 0.4 kg
FRAME = 1.0 / 150.0      # [s]
REST_SECONDS = 0.2       # [s] a toss ends once its body has rested on a face this long
REST_SPEED = 1e-3        # [m/s] at rest: |v| and |ω| extent below this
FACE_TILT = math.radians(1.0)   # [rad] on a face: a body axis within 1° of the vertical


@dataclass(frozen=True)
class Toss:
    """One toss: the body's shape name, size (3,) [m], mass [kg], initial position (3,) [m], orientation
    (w, x, y, z), velocity (3,) [m/s], angular velocity (3,) [rad/s, world], friction and restitution (of the
    body and the ground alike)."""

    shape: str
    size: tuple[float, float, float]
    mass: float
    position: tuple[float, float, float]
    orientation: tuple[float, float, float, float]
    velocity: tuple[float, float, float]
    angular_velocity: tuple[float, float, float]
    friction: float
    restitution: float


@dataclass
class TossResult:
    """What a toss did: ``frames`` run, ``seconds`` simulated, ``wall`` [s] in all, ``slowest_frame`` [s],
    ``impacts`` and ``root_evaluations`` (event method; 0 for time-stepping), ``max_frame_impacts`` and
    ``max_frame_evaluations`` (the most in one frame), ``energy_rise`` (the largest (E − E₀)/|E₀| over the
    frames; E = kinetic + m g z), ``rest_time`` [s] (when it came to rest on a face; nan if it did not),
    ``face`` ((axis, sign): the body axis pointing down, −1/+1 its direction along the axis), and the final
    position (3,) [m] and orientation (4,)."""

    frames: int = 0
    seconds: float = 0.0
    wall: float = 0.0
    slowest_frame: float = 0.0
    impacts: int = 0
    root_evaluations: int = 0
    max_frame_impacts: int = 0
    max_frame_evaluations: int = 0
    energy_rise: float = -math.inf
    rest_time: float = math.nan
    face: tuple[int, int] | None = None
    position: np.ndarray = field(default_factory=lambda: np.zeros(3))
    orientation: np.ndarray = field(default_factory=lambda: np.array([1.0, 0.0, 0.0, 0.0]))


def tosses(count: int, seed: int = 0) -> list[Toss]:
    """``count`` seeded random tosses, cube and 2:1 box alternately; each starts with its lowest point
    5–30 cm above the ground."""
    rng = np.random.default_rng(seed)
    out = []
    for i in range(count):
        shape = ("cube", "box 2:1")[i % 2]
        size = SIZES[shape]
        q = rng.normal(size=4)
        q /= np.linalg.norm(q)
        direction = rng.normal(size=3)
        velocity = rng.uniform(0.0, 3.0) * direction / np.linalg.norm(direction)
        axis = rng.normal(size=3)
        spin = rng.uniform(0.0, 10.0) * axis / np.linalg.norm(axis)
        reach = 0.5 * math.sqrt(sum(s * s for s in size))      # the half diagonal bounds the lowest point
        height = reach + rng.uniform(0.05, 0.3)
        out.append(Toss(shape, size, DENSITY * size[0] * size[1] * size[2], (0.0, 0.0, height),
                        tuple(float(c) for c in q), tuple(float(c) for c in velocity),
                        tuple(float(c) for c in spin), float(rng.choice(FRICTIONS)),
                        float(rng.choice(RESTITUTIONS))))
    return out


def build(toss: Toss, method: str, **settings):
    """A World with the toss's body on the ground, and the body. ``settings``: further ``World`` keywords."""
    import tumble as tb

    world = tb.World(method=method, **settings)
    body = world.add_body(tb.Box(*toss.size), mass=toss.mass, position=toss.position,
                          orientation=toss.orientation, velocity=toss.velocity,
                          angular_velocity=toss.angular_velocity, friction=toss.friction,
                          restitution=toss.restitution)
    world.add_ground(friction=toss.friction, restitution=toss.restitution)
    return world, body


def resting_face(orientation: np.ndarray) -> tuple[int, int] | None:
    """(axis, sign) of the body axis within ``FACE_TILT`` of pointing straight down, or None."""
    w, x, y, z = orientation
    # the world z axis in body coordinates: the third row of R
    down_in_body = -np.array([2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)])
    axis = int(np.argmax(np.abs(down_in_body)))
    if abs(down_in_body[axis]) < math.cos(FACE_TILT):
        return None
    return axis, int(np.sign(down_in_body[axis]))


def run_toss(toss: Toss, method: str, seconds: float = 5.0, substeps: int = 1, **settings) -> TossResult:
    """Run ``toss`` with ``method`` ("event" or "timestep") in frames of 1/150 s (each ``substeps`` steps)
    until its body has rested on a face for ``REST_SECONDS`` or ``seconds`` have passed. ``settings``: further
    ``World`` keywords (``event_impacts``, ...)."""
    world, body = build(toss, method, **settings)
    result = TossResult()
    g = abs(world.gravity[2])
    extent = 0.5 * max(toss.size)

    def energy() -> float:
        return body.kinetic_energy() + toss.mass * g * body.position[2]

    e0 = energy()
    still = 0
    frames = round(seconds / FRAME)
    start = time.perf_counter()
    for k in range(frames):
        t = time.perf_counter()
        for _ in range(substeps):
            world.step(FRAME / substeps)
        took = time.perf_counter() - t
        result.slowest_frame = max(result.slowest_frame, took)
        if method == "event":
            stats = world._method.stats
            result.impacts += stats.impulses
            result.root_evaluations += stats.root_evaluations
            result.max_frame_impacts = max(result.max_frame_impacts, stats.impulses)
            result.max_frame_evaluations = max(result.max_frame_evaluations, stats.root_evaluations)
        result.energy_rise = max(result.energy_rise, (energy() - e0) / abs(e0))
        resting = (np.linalg.norm(body.velocity) < REST_SPEED
                   and extent * np.linalg.norm(body.angular_velocity) < REST_SPEED
                   and resting_face(body.orientation) is not None)
        still = still + 1 if resting else 0
        result.frames = k + 1
        if still * FRAME >= REST_SECONDS:
            result.rest_time = (k + 1 - still) * FRAME
            break
    result.wall = time.perf_counter() - start
    result.seconds = result.frames * FRAME
    result.face = resting_face(body.orientation)
    result.position = np.array(body.position)
    result.orientation = np.array(body.orientation)
    return result


def pose_difference(a: TossResult, b: TossResult) -> tuple[float, float]:
    """The final poses' distance [m] and rotation angle [rad] between two runs of a toss."""
    dot = abs(float(np.dot(a.orientation, b.orientation)))
    return float(np.linalg.norm(a.position - b.position)), 2.0 * math.acos(min(1.0, dot))


CONFIGS: tuple[tuple[str, str, dict], ...] = (
    ("event, sequential impacts", "event", {"event_impacts": "sequential"}),
    ("event, simultaneous impacts (default)", "event", {"event_impacts": "simultaneous"}),
    ("time-stepping 1/150 s", "timestep", {}),
    ("time-stepping 1/1500 s", "timestep", {"substeps": 10}),
)
"""The runs of each toss: a label, the method and ``run_toss``' keywords."""


def _warm_up() -> None:
    for _, method, settings in CONFIGS:
        run_toss(tosses(2, seed=99)[0], method, seconds=1.0, **settings)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="10 tosses, written under /tmp")
    parser.add_argument("--count", type=int, default=200)
    args = parser.parse_args(argv)
    count = 10 if args.quick else args.count
    out = Path(tempfile.gettempdir()) / "TOSSES.md" if args.quick else Path(__file__).with_name("TOSSES.md")
    _warm_up()
    rows = []
    for i, toss in enumerate(tosses(count)):
        results = [run_toss(toss, method, **settings) for _, method, settings in CONFIGS]
        rows.append((toss, results))
        print(f"{i:3d} {toss.shape:8s} e={toss.restitution:<5} mu={toss.friction:<4} "
              + "; ".join(f"{r.wall:6.2f} s (slowest frame {r.slowest_frame:.3f} s, {r.impacts} impacts) face {r.face}"
                          for r in results), flush=True)
    out.write_text(report(rows))
    print(f"wrote {out}")


def report(rows: list[tuple[Toss, list[TossResult]]]) -> str:
    """bench/TOSSES.md's text for the tosses' results (``CONFIGS`` order in each row)."""
    import numba

    lines = [
        "# Tossed boxes: the event method and time-stepping",
        "",
        f"`python -m bench.tosses` on {datetime.date.today()}, {platform.processor() or platform.machine()}, "
        f"{os.cpu_count()} cores, Python {platform.python_version()}, NumPy {np.__version__}, "
        f"Numba {numba.__version__}. {len(rows)} seeded tosses (bench/tosses.py: a cube and a 2:1 box alternately, "
        f"random orientation, spin up to 10 rad/s, speed up to 3 m/s, e in {RESTITUTIONS}, μ in {FRICTIONS}), "
        f"frames of 1/150 s, each run until it has rested on a face for {REST_SECONDS} s (at most 5 s); wall times "
        "after a warm-up, one run, this machine shared.",
        "",
        "| run | wall / simulated s (median) | slowest frame (median, max) | impacts per toss (median, max) | "
        "most impacts in a frame | most root evaluations in a frame | at rest on a face | rest time (median) | "
        "largest energy rise |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for c, (label, method, _) in enumerate(CONFIGS):
        res = [r[1][c] for r in rows]
        per = [r.wall / r.seconds for r in res]
        rested = [r for r in res if not math.isnan(r.rest_time)]
        impacts = [r.impacts for r in res]
        slow = [r.slowest_frame for r in res]
        event = method == "event"
        lines.append(
            f"| {label} | {np.median(per):.3f} s | {np.median(slow):.3f} s, {max(slow):.3f} s | "
            + (f"{np.median(impacts):.0f}, {max(impacts)} | {max(r.max_frame_impacts for r in res)} | "
               f"{max(r.max_frame_evaluations for r in res)} | " if event else "– | – | – | ")
            + f"{len(rested)}/{len(res)} | {np.median([r.rest_time for r in rested]) if rested else math.nan:.2f} s | "
            f"{max(r.energy_rise for r in res):.1e} |")
    lines += ["", "Same final face (tosses agreeing / tosses), by restitution:", "",
              "| runs compared | all | " + " | ".join(f"e = {e}" for e in RESTITUTIONS) + " | mean pose difference "
              "where they agree |", "|---|---|" + "---|" * len(RESTITUTIONS) + "---|"]
    for a, b in ((0, 2), (1, 2), (1, 3), (0, 1), (2, 3)):
        agree = np.array([r[1][a].face is not None and r[1][a].face == r[1][b].face for r in rows])
        e = np.array([r[0].restitution for r in rows])
        poses = np.array([pose_difference(r[1][a], r[1][b]) for r in rows])
        cells = [f"{agree[e == x].sum()}/{(e == x).sum()}" for x in RESTITUTIONS]
        lines.append(f"| {CONFIGS[a][0]} vs {CONFIGS[b][0]} | {agree.sum()}/{len(rows)} ({100 * agree.mean():.0f} %) | "
                     + " | ".join(cells) + f" | {poses[agree, 0].mean() * 1e3:.1f} mm, "
                     f"{math.degrees(poses[agree, 1].mean()):.1f}° |")
    lines += ["", "Final faces counted over the tosses (in distribution, not toss by toss): the 2:1 box on one of its "
              "four long faces or on an end (0.1 × 0.1 m; its body x axis vertical), the cube by the body axis that "
              "points down (its faces are alike: a fair toss gives a third each).", "",
              "| run | 2:1 box: long face | 2:1 box: end | cube: x | cube: y | cube: z | on no face |",
              "|---|---|---|---|---|---|---|"]
    for c, (label, _, _) in enumerate(CONFIGS):
        box = [r[1][c].face for r in rows if r[0].shape == "box 2:1"]
        cube = [r[1][c].face for r in rows if r[0].shape == "cube"]
        none = sum(f is None for f in box + cube)
        lines.append(f"| {label} | {sum(f is not None and f[0] != 0 for f in box)}/{len(box)} | "
                     f"{sum(f is not None and f[0] == 0 for f in box)}/{len(box)} | "
                     + " | ".join(f"{sum(f is not None and f[0] == k for f in cube)}/{len(cube)}" for k in range(3))
                     + f" | {none} |")
    lines.append("")
    return "\n".join(lines)


if __name__ == "__main__":
    main()
