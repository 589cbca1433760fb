"""BENCH.md's scenes S1–S7, each written once as a neutral description every adapter builds from.

Everything is SI, z up, quaternions (w, x, y, z) body → world, velocities in the world frame (DESIGN.md).
A :class:`Shape` of kind ``"box"`` carries FULL side lengths ``(lx, ly, lz)``; ``"sphere"`` carries
``(radius,)``. Every body carries its exact mass [kg] and principal moments of inertia about its centre
of mass in body axes [kg m²], so no engine computes its own.

Scenes with several variants are split into *cases*: ``S2-boxes``/``S2-spheres``, ``S6-slide``/
``S6-stick``, ``S7-125``/``S7-1000``/``S7-8000``. :func:`make_case` builds one case; ``quick=True`` gives
the smaller smoke-test version used by ``python -m bench --quick``.

Randomness is seeded (``SEEDS``), so a case is the same on every machine and in every engine.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, Literal

import numpy as np

from bench.geometry import box_box_separation, quat_to_matrix, random_unit_quaternions

__all__ = [
    "Shape",
    "Body",
    "StaticBox",
    "Ground",
    "Scene",
    "SCENE_IDS",
    "SEEDS",
    "CLEARANCE",
    "case_ids",
    "make_case",
    "make_s1",
    "make_pile",
    "make_stack",
    "make_pyramid",
    "make_bounce",
    "make_incline",
]

GRAVITY = (0.0, 0.0, -9.81)
"""m/s², BENCH.md's default."""

SCENE_IDS = ("S1", "S2", "S3", "S4", "S5", "S6", "S7")

SEEDS = {"S1": 1, "S2-boxes": 2, "S2-spheres": 3}
"""Seeds of the random draws. S7 uses the S2 boxes seed, so ``S7-1000`` is exactly ``S2-boxes``."""

CLEARANCE = 1e-3
"""m. A randomly oriented S2 box is re-drawn until its SAT separation from every neighbour (and every
pen wall) is at least this: bodies start clear of each other, not merely touching."""

WALL_THICKNESS = 0.2
"""m, thickness of the S2/S7 pen walls (BENCH.md gives only the inner size and height)."""


@dataclass(frozen=True)
class Shape:
    """Geometry of a body in its own frame (centred at its centre of mass).

    Attributes:
        kind: ``"box"`` or ``"sphere"``.
        size: box: FULL side lengths (lx, ly, lz) [m]; sphere: (radius,) [m].
    """

    kind: Literal["box", "sphere"]
    size: tuple[float, ...]

    def __post_init__(self) -> None:
        expected = {"box": 3, "sphere": 1}.get(self.kind)
        if expected is None or len(self.size) != expected or min(self.size) <= 0:
            raise ValueError(f"bad shape {self.kind!r} with size {self.size!r}")

    @property
    def volume(self) -> float:
        """m³."""
        if self.kind == "box":
            return float(np.prod(self.size))
        return 4.0 / 3.0 * math.pi * self.size[0] ** 3

    @property
    def half_size(self) -> tuple[float, float, float]:
        """Box half extents, or (radius, 0, 0) for a sphere [m]: the row :mod:`bench.geometry` reads."""
        if self.kind == "box":
            return (0.5 * self.size[0], 0.5 * self.size[1], 0.5 * self.size[2])
        return (self.size[0], 0.0, 0.0)

    @property
    def bounding_radius(self) -> float:
        """Radius of the smallest sphere about the centre containing the shape [m]."""
        return float(np.linalg.norm(self.half_size)) if self.kind == "box" else self.size[0]

    def principal_inertia(self, mass: float) -> tuple[float, float, float]:
        """Principal moments about the centre of mass, body axes [kg m²], for uniform density."""
        if self.kind == "box":
            lx, ly, lz = self.size
            return (mass * (ly**2 + lz**2) / 12.0, mass * (lx**2 + lz**2) / 12.0, mass * (lx**2 + ly**2) / 12.0)
        i = 0.4 * mass * self.size[0] ** 2
        return (i, i, i)


@dataclass(frozen=True)
class Body:
    """A dynamic rigid body.

    Attributes:
        shape: its geometry.
        mass: kg.
        inertia: principal moments about the COM in body axes [kg m²].
        position: COM in the world [m]; orientation: (w, x, y, z) body → world.
        velocity: world frame [m/s]; angular_velocity: world frame [rad/s].
        friction, restitution: this body's material; BENCH.md scenes give every pair the same values.
        density: kg/m³ where the scene specified the body by density (mass and inertia follow from it).
    """

    shape: Shape
    mass: float
    inertia: tuple[float, float, float]
    position: tuple[float, float, float]
    orientation: tuple[float, float, float, float] = (1.0, 0.0, 0.0, 0.0)
    velocity: tuple[float, float, float] = (0.0, 0.0, 0.0)
    angular_velocity: tuple[float, float, float] = (0.0, 0.0, 0.0)
    friction: float = 0.5
    restitution: float = 0.0
    density: float | None = None


@dataclass(frozen=True)
class StaticBox:
    """An immovable box (a pen wall). ``size`` is FULL side lengths [m]."""

    size: tuple[float, float, float]
    position: tuple[float, float, float]
    orientation: tuple[float, float, float, float] = (1.0, 0.0, 0.0, 0.0)
    friction: float = 0.5
    restitution: float = 0.0


@dataclass(frozen=True)
class Ground:
    """The static plane z = ``height`` [m] with its material."""

    height: float = 0.0
    friction: float = 0.5
    restitution: float = 0.0


@dataclass(frozen=True)
class Scene:
    """One benchmark case, engine-neutral.

    Attributes:
        case_id: e.g. ``"S2-boxes"``; scene_id: e.g. ``"S2"``; title: one line for the tables.
        bodies: the dynamic bodies, in creation order (engines report state in this order).
        ground: the ground plane or None; walls: static boxes.
        gravity: m/s², world frame.
        dt: step [s]; steps: number of steps the case runs (``steps * dt`` = duration).
        contacts: False when bodies never touch and collision handling is switched off (S1).
        needs_trajectory: True when the figures need the state at every step (S5, S6): such cases run
            once, with state reads each step, and report no speed.
        quick: True for the smoke-test size.
        params: scene-specific numbers the figures need (e.g. ``incline_deg``, ``friction``).
    """

    case_id: str
    scene_id: str
    title: str
    bodies: tuple[Body, ...]
    ground: Ground | None
    walls: tuple[StaticBox, ...]
    gravity: tuple[float, float, float]
    dt: float
    steps: int
    contacts: bool = True
    needs_trajectory: bool = False
    quick: bool = False
    params: Mapping[str, Any] = field(default_factory=dict)

    @property
    def n_bodies(self) -> int:
        """Number of dynamic bodies."""
        return len(self.bodies)

    @property
    def duration(self) -> float:
        """Simulated time [s]."""
        return self.steps * self.dt

    @cached_property
    def arrays(self) -> dict[str, np.ndarray]:
        """The bodies as stacked arrays (read-only copies).

        Keys: ``x`` (n,3) m, ``q`` (n,4), ``v`` (n,3) m/s, ``w`` (n,3) rad/s, ``mass`` (n,) kg,
        ``inertia`` (n,3) kg m² (principal, body axes), ``is_box`` (n,) bool, ``half_size`` (n,3) m.
        """
        b = self.bodies
        out = {
            "x": np.array([o.position for o in b], dtype=float).reshape(-1, 3),
            "q": np.array([o.orientation for o in b], dtype=float).reshape(-1, 4),
            "v": np.array([o.velocity for o in b], dtype=float).reshape(-1, 3),
            "w": np.array([o.angular_velocity for o in b], dtype=float).reshape(-1, 3),
            "mass": np.array([o.mass for o in b], dtype=float),
            "inertia": np.array([o.inertia for o in b], dtype=float).reshape(-1, 3),
            "is_box": np.array([o.shape.kind == "box" for o in b], dtype=bool),
            "half_size": np.array([o.shape.half_size for o in b], dtype=float).reshape(-1, 3),
        }
        for a in out.values():
            a.flags.writeable = False
        return out

    def wall_boxes(self) -> list[tuple[np.ndarray, np.ndarray, np.ndarray]]:
        """Walls as (centre (3,), rotation (3,3), half extents (3,)) for :func:`bench.geometry.measure_contacts`."""
        return [
            (np.array(w.position, float), quat_to_matrix(np.array(w.orientation, float)), 0.5 * np.array(w.size))
            for w in self.walls
        ]

    def summary(self) -> dict[str, Any]:
        """JSON-ready description (no per-body data)."""
        return {
            "case": self.case_id,
            "title": self.title,
            "bodies": self.n_bodies,
            "dt": self.dt,
            "steps": self.steps,
            "duration_s": self.duration,
            "gravity": list(self.gravity),
            "contacts": self.contacts,
            "quick": self.quick,
            **{k: v for k, v in self.params.items() if isinstance(v, int | float | str | bool)},
        }


def _box_body(size: tuple[float, float, float], *, density: float | None = None, mass: float | None = None,
              **kw: Any) -> Body:
    """A box body from a density or a mass (exactly one)."""
    shape = Shape("box", size)
    m = mass if mass is not None else density * shape.volume
    return Body(shape=shape, mass=m, inertia=shape.principal_inertia(m), density=density, **kw)


def _sphere_body(radius: float, *, density: float | None = None, mass: float | None = None, **kw: Any) -> Body:
    """A sphere body from a density or a mass (exactly one)."""
    shape = Shape("sphere", (radius,))
    m = mass if mass is not None else density * shape.volume
    return Body(shape=shape, mass=m, inertia=shape.principal_inertia(m), density=density, **kw)


# ----------------------------------------------------------------------------------------------------------
# S1 free tumble


def make_s1(per_side: int = 16, steps: int = 1000, seed: int = SEEDS["S1"], quick: bool = False) -> Scene:
    """S1: ``per_side³`` free boxes 0.2×0.4×0.8 m, density 1000, on a 2 m grid centred at the origin, no
    gravity, no contacts, identity orientation, zero velocity, ω of magnitude 5 rad/s in a uniformly
    random direction (seeded); dt 1e-3."""
    rng = np.random.default_rng(seed)
    n = per_side**3
    axis = rng.standard_normal((n, 3))
    omega = 5.0 * axis / np.linalg.norm(axis, axis=1, keepdims=True)
    g = (np.arange(per_side) - 0.5 * (per_side - 1)) * 2.0
    gx, gy, gz = np.meshgrid(g, g, g, indexing="ij")
    pos = np.stack([gx.ravel(), gy.ravel(), gz.ravel()], axis=1)
    bodies = tuple(
        _box_body((0.2, 0.4, 0.8), density=1000.0, position=tuple(pos[i]), angular_velocity=tuple(omega[i]))
        for i in range(n)
    )
    return Scene(
        case_id="S1", scene_id="S1", title=f"free tumble: {n} boxes 0.2×0.4×0.8 m, |ω| = 5 rad/s, no gravity",
        bodies=bodies, ground=None, walls=(), gravity=(0.0, 0.0, 0.0), dt=1e-3, steps=steps,
        contacts=False, quick=quick, params={"grid_spacing": 2.0, "omega": 5.0, "seed": seed},
    )


# ----------------------------------------------------------------------------------------------------------
# S2 / S7 pile


def _pen_walls(inner: float, height: float) -> tuple[StaticBox, ...]:
    """Four walls around the square [-inner/2, inner/2]² from z = 0 to ``height``, not overlapping."""
    t, h = WALL_THICKNESS, 0.5 * inner
    return (
        StaticBox((t, inner + 2 * t, height), (h + 0.5 * t, 0.0, 0.5 * height)),
        StaticBox((t, inner + 2 * t, height), (-h - 0.5 * t, 0.0, 0.5 * height)),
        StaticBox((inner, t, height), (0.0, h + 0.5 * t, 0.5 * height)),
        StaticBox((inner, t, height), (0.0, -h - 0.5 * t, 0.5 * height)),
    )


def _grid_positions(n: int, spacing: float, z0: float) -> np.ndarray:
    """(n³, 3) centres, index order (k, j, i) = layer-major with x fastest: layer by layer from the bottom."""
    g = (np.arange(n) - 0.5 * (n - 1)) * spacing
    z = z0 + np.arange(n) * spacing
    zz, yy, xx = np.meshgrid(z, g, g, indexing="ij")
    return np.stack([xx.ravel(), yy.ravel(), zz.ravel()], axis=1)


def _clear_orientations(pos: np.ndarray, edge: float, n: int, walls: tuple[StaticBox, ...],
                        rng: np.random.Generator, max_tries: int = 10_000) -> np.ndarray:
    """Uniformly random orientations, each re-drawn until its box clears every neighbour already placed
    and every wall by at least ``CLEARANCE`` (separating-axis test)."""
    half = np.full((1, 3), 0.5 * edge)
    count = len(pos)
    quats = np.empty((count, 4))
    rots = np.empty((count, 3, 3))
    reach = 2.0 * float(np.linalg.norm(half)) + CLEARANCE
    wall_c = np.array([w.position for w in walls], dtype=float)
    wall_r = np.tile(np.eye(3), (len(walls), 1, 1))
    wall_h = 0.5 * np.array([w.size for w in walls], dtype=float)
    wall_reach = np.linalg.norm(wall_h, axis=1) + np.linalg.norm(half) + CLEARANCE
    offsets = [(dk, dj, di) for dk in (-1, 0) for dj in (-1, 0, 1) for di in (-1, 0, 1)
               if (dk, dj, di) < (0, 0, 0)]  # the 13 neighbours that come earlier in (k, j, i) order
    for idx in range(count):
        k, rem = divmod(idx, n * n)
        j, i = divmod(rem, n)
        nbr = [((k + a) * n + (j + b)) * n + (i + c) for a, b, c in offsets
               if 0 <= k + a < n and 0 <= j + b < n and 0 <= i + c < n]
        nbr = [m for m in nbr if np.linalg.norm(pos[m] - pos[idx]) < reach]
        near_walls = np.flatnonzero(np.linalg.norm(wall_c - pos[idx], axis=1) < wall_reach) if len(walls) else []
        others_c = np.concatenate([pos[nbr], wall_c[near_walls]]) if len(nbr) or len(near_walls) else None
        if others_c is not None:
            others_r = np.concatenate([rots[nbr], wall_r[near_walls]])
            others_h = np.concatenate([np.repeat(half, len(nbr), axis=0), wall_h[near_walls]])
        for _ in range(max_tries):
            q = random_unit_quaternions(rng, 1)[0]
            r = quat_to_matrix(q)
            if others_c is None:
                break
            m = len(others_c)
            sep = box_box_separation(np.repeat(pos[idx][None], m, 0), np.repeat(r[None], m, 0),
                                     np.repeat(half, m, 0), others_c, others_r, others_h)
            if sep.min() >= CLEARANCE:
                break
        else:
            raise RuntimeError(f"could not place box {idx} clear of its neighbours in {max_tries} draws")
        quats[idx], rots[idx] = q, r
    return quats


def make_pile(kind: Literal["boxes", "spheres"], per_side: int = 10, duration: float = 3.0,
              seed: int | None = None, case_id: str | None = None, quick: bool = False) -> Scene:
    """S2 (and S7): ``per_side³`` boxes of 0.2 m edge or spheres of radius 0.1 m (density 1000) on a grid of
    spacing 0.3 m centred over the pen, lowest layer at z = 0.5, dropped into a pen of 4 static walls.

    The pen scales with the grid to keep the density: inner side ``0.3 m × per_side`` (3 m at 10) and
    height ``2 m × per_side / 10``. Boxes get seeded uniformly random orientations, re-drawn until clear of
    their neighbours and the walls; spheres get seeded horizontal offsets uniform in ±0.04 m on x and y.
    dt 1/240.
    """
    spacing, z0 = 0.3, 0.5
    seed = SEEDS[f"S2-{kind}"] if seed is None else seed
    rng = np.random.default_rng(seed)
    inner, height = spacing * per_side, 2.0 * per_side / 10.0
    walls = _pen_walls(inner, height)
    pos = _grid_positions(per_side, spacing, z0)
    if kind == "boxes":
        quats = _clear_orientations(pos, 0.2, per_side, walls, rng)
        bodies = tuple(_box_body((0.2, 0.2, 0.2), density=1000.0, position=tuple(pos[i]),
                                 orientation=tuple(quats[i])) for i in range(len(pos)))
    elif kind == "spheres":
        pos = pos.copy()
        pos[:, :2] += rng.uniform(-0.04, 0.04, size=(len(pos), 2))
        bodies = tuple(_sphere_body(0.1, density=1000.0, position=tuple(p)) for p in pos)
    else:
        raise ValueError(f"kind must be 'boxes' or 'spheres', not {kind!r}")
    n = len(bodies)
    return Scene(
        case_id=case_id or f"S2-{kind}", scene_id="S7" if (case_id or "").startswith("S7") else "S2",
        title=f"pile: {n} {'boxes 0.2 m' if kind == 'boxes' else 'spheres r 0.1 m'} into a "
              f"{inner:g}×{inner:g}×{height:g} m pen",
        bodies=bodies, ground=Ground(), walls=walls, gravity=GRAVITY, dt=1.0 / 240.0,
        steps=round(duration * 240), quick=quick,
        params={"kind": kind, "per_side": per_side, "pen_inner": inner, "pen_height": height,
                "spacing": spacing, "seed": seed},
    )


# ----------------------------------------------------------------------------------------------------------
# S3 stack, S4 pyramid


def make_stack(count: int = 20, duration: float = 10.0, quick: bool = False) -> Scene:
    """S3: ``count`` boxes of 1 m edge, 1 kg each, stacked exactly (centres at 0.5, 1.5, … m); dt 1/240."""
    bodies = tuple(_box_body((1.0, 1.0, 1.0), mass=1.0, position=(0.0, 0.0, 0.5 + k)) for k in range(count))
    return Scene(
        case_id="S3", scene_id="S3", title=f"stack: {count} boxes 1 m, 1 kg, stacked exactly",
        bodies=bodies, ground=Ground(), walls=(), gravity=GRAVITY, dt=1.0 / 240.0,
        steps=round(duration * 240), quick=quick, params={"count": count, "top_height": count - 0.5},
    )


def make_pyramid(base: int = 20, duration: float = 5.0, quick: bool = False) -> Scene:
    """S4: 2-D pyramid in the x–z plane, ``base`` boxes (1 m, 1 kg) in the bottom row, each row one box
    shorter and offset by half a box, every box resting exactly on the two below (side faces touching,
    no gap); ``base (base + 1) / 2`` boxes in all; dt 1/240."""
    bodies = []
    for row in range(base):
        for k in range(base - row):
            x = -0.5 * (base - 1) + 0.5 * row + k
            bodies.append(_box_body((1.0, 1.0, 1.0), mass=1.0, position=(x, 0.0, 0.5 + row)))
    return Scene(
        case_id="S4", scene_id="S4", title=f"pyramid: {len(bodies)} boxes 1 m, 1 kg, base {base}",
        bodies=tuple(bodies), ground=Ground(), walls=(), gravity=GRAVITY, dt=1.0 / 240.0,
        steps=round(duration * 240), quick=quick, params={"base": base},
    )


# ----------------------------------------------------------------------------------------------------------
# S5 bounce, S6 incline


def make_bounce(duration: float = 3.0, quick: bool = False) -> Scene:
    """S5: a sphere of radius 0.1 m, 1 kg, centre released from rest at 1.1 m onto the ground;
    restitution 0.5 and friction 0 for the sphere and the ground; dt 1/240."""
    e = 0.5
    body = _sphere_body(0.1, mass=1.0, position=(0.0, 0.0, 1.1), friction=0.0, restitution=e)
    return Scene(
        case_id="S5", scene_id="S5", title="bounce: sphere r 0.1 m, 1 kg, from 1.1 m, e = 0.5, μ = 0",
        bodies=(body,), ground=Ground(friction=0.0, restitution=e), walls=(), gravity=GRAVITY,
        dt=1.0 / 240.0, steps=round(duration * 240), needs_trajectory=True, quick=quick,
        params={"restitution": e, "drop_height": 1.0, "radius": 0.1},
    )


def make_incline(friction: float, duration: float = 2.0, quick: bool = False) -> Scene:
    """S6: a 0.2 m box, 1 kg, resting on a plane tilted 20° with friction ``friction`` (box and plane).

    Modelled identically in every engine as a horizontal ground with gravity tilted by 20° about the world
    y axis, so that "down the slope" is +x: ``g = 9.81 (sin 20°, 0, −cos 20°)``. Physically the same as a
    tilted plane, and it needs no tilted-plane support in any engine. dt 1/240.
    """
    theta = math.radians(20.0)
    g = (9.81 * math.sin(theta), 0.0, -9.81 * math.cos(theta))
    body = _box_body((0.2, 0.2, 0.2), mass=1.0, position=(0.0, 0.0, 0.1), friction=friction)
    slides = math.tan(theta) > friction
    return Scene(
        case_id="S6-slide" if slides else "S6-stick", scene_id="S6",
        title=f"incline 20°: box 0.2 m, 1 kg, μ = {friction:g} ({'slides' if slides else 'sticks'})",
        bodies=(body,), ground=Ground(friction=friction), walls=(), gravity=g, dt=1.0 / 240.0,
        steps=round(duration * 240), needs_trajectory=True, quick=quick,
        params={"incline_deg": 20.0, "friction": friction, "slides": slides, "g": 9.81},
    )


# ----------------------------------------------------------------------------------------------------------
# registry

_QUICK = {
    "S1": dict(per_side=8, steps=200),
    "S2": dict(per_side=3, duration=0.5),
    "S3": dict(count=5, duration=1.0),
    "S4": dict(base=5, duration=1.0),
    "S7": (2, 3, 4),
}
_FULL_S7 = (5, 10, 20)


def case_ids(scene_id: str, quick: bool = False) -> list[str]:
    """The case ids a BENCH.md scene id expands to (``"S2"`` → ``["S2-boxes", "S2-spheres"]``)."""
    if scene_id == "S2":
        return ["S2-boxes", "S2-spheres"]
    if scene_id == "S6":
        return ["S6-slide", "S6-stick"]
    if scene_id == "S7":
        return [f"S7-{n**3}" for n in (_QUICK["S7"] if quick else _FULL_S7)]
    if scene_id in SCENE_IDS:
        return [scene_id]
    raise ValueError(f"unknown scene {scene_id!r}; expected one of {', '.join(SCENE_IDS)}")


def make_case(case_id: str, quick: bool = False) -> Scene:
    """Build the scene for one case id (see :func:`case_ids`); ``quick`` gives the smoke-test size."""
    if case_id == "S1":
        return make_s1(**(_QUICK["S1"] if quick else {}), quick=quick)
    if case_id in ("S2-boxes", "S2-spheres"):
        return make_pile(case_id.split("-")[1], **(_QUICK["S2"] if quick else {}), quick=quick)
    if case_id == "S3":
        return make_stack(**(_QUICK["S3"] if quick else {}), quick=quick)
    if case_id == "S4":
        return make_pyramid(**(_QUICK["S4"] if quick else {}), quick=quick)
    if case_id == "S5":
        return make_bounce(quick=quick)
    if case_id == "S6-slide":
        return make_incline(0.3, quick=quick)
    if case_id == "S6-stick":
        return make_incline(0.5, quick=quick)
    if case_id.startswith("S7-"):
        count = int(case_id[3:])
        per_side = round(count ** (1 / 3))
        if per_side**3 != count:
            raise ValueError(f"S7 body count must be a cube, not {count}")
        duration = _QUICK["S2"]["duration"] if quick else 3.0
        return make_pile("boxes", per_side=per_side, duration=duration, seed=SEEDS["S2-boxes"],
                         case_id=case_id, quick=quick)
    raise ValueError(f"unknown case {case_id!r}")
