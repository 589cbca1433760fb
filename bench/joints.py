"""``python -m bench.joints``: jointed chains in tumble side by side with MuJoCo and PyBullet.

Two scenes (SI units; gravity (0, 0, −9.81) m/s²; dt = 1/240 s; 5 s simulated), both made of the same link:
a box 0.1 × 0.04 × 0.04 m (long axis x), 0.1 kg (625 kg/m³), principal inertia from the box, jointed at the
centres of its two end faces (local anchors (∓0.05, 0, 0) m).

1. **pendulum**: 10 links in a straight horizontal line along +x at z = 1 m, link 0's free end hinged to the
   world at (0, 0, 1) m, each next link hinged to the one before; every hinge axis is y. Released at rest,
   it falls and swings in the x–z plane. No contacts at all (no ground, no link–link contacts).
2. **chain**: 50 links in a straight horizontal line along +x at z = 2 m (5 m long), link 0's free end
   pinned to the world by a ball joint at (0, 0, 2) m, each next link ball-jointed to the one before. Released
   at rest it swings down and piles onto the ground plane z = 0 (friction 0.5 for every pair, restitution 0).
   Links collide with the ground and with every link that is not their joint neighbour.

Modelling per row (the table says which):

- ``tumble/direct`` and ``tumble/pgs``: free bodies (maximal coordinates) and ``HingeJoint``/``BallJoint``
  rows, ``World(joint_solver="direct")`` (the default) or ``"pgs"``; otherwise World defaults.
- ``mujoco/tree``: MuJoCo's natural way, a kinematic tree of nested bodies with hinge or ball joints
  (reduced coordinates: the joints hold by construction, so the joint error is 0 up to rounding).
- ``mujoco/connect``: free bodies (``<freejoint/>``) joined by ``<equality><connect>`` constraints (maximal
  coordinates, tumble's formulation); a hinge is two connects half a link width either side of the anchor
  along the axis; adjacent links' contacts are ``<exclude>``-d. Connects keep MuJoCo's
  default soft constraint (solref 0.02 s, solimp 0.9 0.95).
- ``pybullet/multibody``: one ``createMultiBody`` with a fixed base at the pivot and 10 or 50 links
  (``JOINT_REVOLUTE`` / ``JOINT_SPHERICAL``, reduced coordinates, Featherstone); the joints' default motors
  are switched off (force 0); self-collision on, parent–child excluded. Not run for the 50-link ball chain:
  its 150 degrees of freedom exceed PyBullet's 128 (``PYBULLET_MAX_DOF``), and such a multibody is corrupt.
- ``pybullet/p2p``: one maximal-coordinates body per link (``useMaximalCoordinates=True``) joined by
  ``createConstraint(JOINT_POINT2POINT)`` (a hinge: two of them, as for MuJoCo), ``maxForce`` raised from
  the default 500 N to 1e9 N so the constraint impulses are not capped; adjacent links' collisions off.
- Both peers: mass and inertia explicit, damping 0; PyBullet gets √μ on each body (it multiplies the pair).

Figures:

- **steps/s**: ``time.perf_counter`` around the stepping only (the harness's ``bench.timing.timed_steps``, in
  chunks of ``SAMPLE_EVERY`` steps; the sampling between chunks is not timed), after ``WARMUP`` untimed steps
  of each run; 3 timed runs, each from a freshly built scene, interleaved across the configurations (so a
  noisy spell of this shared machine hits them all); the median over the runs is reported, and its ratio
  to ``mujoco/tree`` of the same run. tumble's first world's build and first step (Numba compile, or its
  load from the on-disk cache when that is still valid) are timed apart and reported separately.
- **joint error** [m]: the largest distance between the two anchor points of any joint over the whole run,
  sampled every ``SAMPLE_EVERY`` steps, computed by :func:`joint_gap` from each engine's body positions and
  orientations and the anchors in the body frames, the same way for every engine (no engine's own
  readout); for a hinge modelled as two point constraints it is measured at the hinge's anchor itself.
- chain only: the lowest link centre at the end [m] (0.01 m is a link lying flat on the ground).
- engine warnings: MuJoCo's ``data.warning`` counts (``mjWARN_BADQACC``: it met NaN or huge accelerations and
  reset the state to the initial pose, which the error and end figures then do not show by themselves).

    python -m bench.joints            # → bench/JOINTS.md and bench/joints.json (about 2–3 minutes here)
    python -m bench.joints --quick    # 1 s simulated, 1 timed run, → a temp dir (a smoke test)
"""

from __future__ import annotations

import functools
import math
import statistics
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from bench.adapters import MujocoAdapter, PyBulletAdapter, TumbleAdapter
from bench.adapters.tumble_adapter import import_tumble
from bench.geometry import quat_to_matrix
from bench.run import side_by_side_main
from bench.timing import timed_steps

__all__ = ["ChainScene", "SCENES", "CONFIGS", "joint_gap", "main"]

WARMUP = 5
"""Untimed steps at the start of every run (they count toward the simulated time)."""
SAMPLE_EVERY = 4
"""Steps between two joint-error samples (60 Hz at dt = 1/240 s)."""
REPEATS = 3
"""Timed runs per scene and configuration; the median is reported."""
BUDGET_S = 120.0
"""Wall-clock cap of one timed run [s] (a run cut short is marked partial)."""
PYBULLET_MAX_DOF = 128
"""PyBullet's ``MAX_DEGREE_OF_FREEDOM`` (SharedMemoryPublic.h): a multibody with more joint DoF is corrupted (a
50-link chain of spherical joints, 150 DoF, is; 40 links, 120 DoF, step correctly)."""
BIG_FORCE = 1e9
"""N, PyBullet constraints' ``maxForce`` (its default, 500 N, would cap the joint impulses)."""


@dataclass(frozen=True)
class ChainScene:
    """A straight horizontal chain of identical box links pinned to the world at its first link's free end.

    Attributes:
        name: "pendulum" or "chain".
        links: number of links.
        joint: "hinge" (axis ``AXIS``) or "ball".
        height: z of the chain and of the world pivot at (0, 0, height) [m].
        ground: whether there is a ground plane z = 0 (and contacts); without it no contacts at all.
        size: link side lengths (long axis x) [m]; mass [kg]; friction: μ of every pair.
        dt: time step [s]; seconds: simulated time [s].
    """

    name: str
    links: int
    joint: str
    height: float
    ground: bool
    size: tuple[float, float, float] = (0.1, 0.04, 0.04)   # MuJoCo's tree chain went unstable with 0.02
    mass: float = 0.1
    friction: float = 0.5
    dt: float = 1.0 / 240.0
    seconds: float = 5.0

    @property
    def length(self) -> float:
        """Link length [m]."""
        return self.size[0]

    @property
    def inertia(self) -> tuple[float, float, float]:
        """Principal moments of a link about its centre [kg m²]."""
        lx, ly, lz = self.size
        m = self.mass
        return (m * (ly**2 + lz**2) / 12.0, m * (lx**2 + lz**2) / 12.0, m * (lx**2 + ly**2) / 12.0)

    @property
    def steps(self) -> int:
        """Steps in ``seconds``."""
        return round(self.seconds / self.dt)

    def centres(self) -> np.ndarray:
        """(links, 3) initial link centres [m]."""
        x = self.length * (np.arange(self.links) + 0.5)
        return np.column_stack([x, np.zeros(self.links), np.full(self.links, self.height)])

    def anchors(self) -> np.ndarray:
        """(links, 3) joint points in the world at the start [m]: joint i joins link i to link i − 1 (the world
        for i = 0)."""
        return self.centres() - np.array([0.5 * self.length, 0.0, 0.0])

    def joint_table(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """(child, parent, child_local, parent_local): joint i holds link ``child[i]``'s point
        ``child_local[i]`` (its frame, [m]) on link ``parent[i]``'s point ``parent_local[i]``; parent −1 is
        the world, its point then in world coordinates."""
        n, half = self.links, 0.5 * self.length
        child = np.arange(n)
        parent = child - 1
        child_local = np.tile([-half, 0.0, 0.0], (n, 1))
        parent_local = np.tile([half, 0.0, 0.0], (n, 1))
        parent_local[0] = (0.0, 0.0, self.height)
        return child, parent, child_local, parent_local


AXIS = (0.0, 1.0, 0.0)
"""The hinges' axis (world and link frames at the start)."""

SCENES = (ChainScene("pendulum", 10, "hinge", height=1.0, ground=False),
          ChainScene("chain", 50, "ball", height=2.0, ground=True))


def joint_gap(x: np.ndarray, q: np.ndarray, child: np.ndarray, parent: np.ndarray, child_local: np.ndarray,
              parent_local: np.ndarray) -> float:
    """The largest distance [m] between the two anchor points of any joint.

    Args:
        x: (n, 3) body positions (the origins of the frames the anchors are given in) [m].
        q: (n, 4) body orientations, unit quaternions (w, x, y, z), body → world.
        child, parent: (m,) body indices of each joint's two bodies; parent −1 is the world.
        child_local: (m, 3) anchors in the child bodies' frames [m].
        parent_local: (m, 3) anchors in the parent bodies' frames, or world points where parent is −1 [m].
    """
    rot = quat_to_matrix(q)
    a = np.einsum("mij,mj->mi", rot[child], child_local) + x[child]
    b = np.array(parent_local, dtype=float)
    body = parent >= 0
    b[body] = np.einsum("mij,mj->mi", rot[parent[body]], parent_local[body]) + x[parent[body]]
    return float(np.max(np.linalg.norm(a - b, axis=1)))


# ---------------------------------------------------------------------------------------------------------
# builders: each returns (step, poses, close, warnings) — poses() gives (x (n, 3), q (n, 4) w-first) of the
# links' centres, in the frames the joint table's anchors are given in; warnings() the engine's own alarms.

Built = tuple[Callable[[], None], Callable[[], tuple[np.ndarray, np.ndarray]], Callable[[], None],
              Callable[[], list[str]]]


def build_tumble(scene: ChainScene, joint_solver: str) -> tuple[Built, Any]:
    """tumble: free bodies and joints (module docstring); also returns the world."""
    tb = import_tumble()
    world = tb.World(joint_solver=joint_solver)
    n = scene.links
    links = [world.add_body(tb.Box(*scene.size), mass=scene.mass, inertia=np.diag(scene.inertia), position=c,
                            friction=scene.friction, collide=scene.ground) for c in scene.centres()]
    if scene.ground:
        world.add_ground(friction=scene.friction)
    for i, anchor in enumerate(scene.anchors()):
        other = links[i - 1] if i else None
        if scene.joint == "hinge":
            world.add_joint(tb.HingeJoint(links[i], other, anchor, AXIS))
        else:
            world.add_joint(tb.BallJoint(links[i], other, anchor))

    def poses() -> tuple[np.ndarray, np.ndarray]:
        s = world.state_arrays()
        return np.asarray(s["x"])[:n].copy(), np.asarray(s["q"])[:n].copy()

    return (functools.partial(world.step, scene.dt), poses, lambda: None, list), world


def _f(values: Any) -> str:
    return " ".join(f"{float(v):.17g}" for v in np.ravel(values))


def _hinge_points(scene: ChainScene) -> tuple[float, ...]:
    """Offsets [m] along the axis of the point constraints that model one joint in maximal coordinates."""
    return (-0.5 * scene.size[1], 0.5 * scene.size[1]) if scene.joint == "hinge" else (0.0,)


def mujoco_xml(scene: ChainScene, tree: bool) -> str:
    """MJCF of ``scene``: nested bodies with hinge/ball joints (``tree``) or free bodies and connects."""
    half, n, mu = 0.5 * scene.length, scene.links, scene.friction
    geom = (f'<geom type="box" size="{_f(np.array(scene.size) / 2)}" friction="{mu:g} 0.005 0.0001" '
            f'condim="3"/>')
    inertial = f'<inertial pos="0 0 0" mass="{scene.mass:.17g}" diaginertia="{_f(scene.inertia)}"/>'
    flag = "" if scene.ground else '<flag contact="disable"/>'
    lines = ['<mujoco model="tumble-bench joints">', '  <compiler angle="radian" inertiafromgeom="false"/>',
             f'  <option timestep="{scene.dt:.17g}" gravity="0 0 -9.81">{flag}</option>', "  <worldbody>"]
    if scene.ground:
        lines.append(f'    <geom name="ground" type="plane" size="0 0 1" friction="{mu:g} 0.005 0.0001" condim="3"/>')
    centres = scene.centres()
    extra = []
    if tree:
        joint = (f'<joint type="hinge" axis="{_f(AXIS)}" pos="{-half:.17g} 0 0"/>' if scene.joint == "hinge"
                 else f'<joint type="ball" pos="{-half:.17g} 0 0"/>')
        for i in range(n):
            pos = centres[0] if i == 0 else (scene.length, 0.0, 0.0)
            lines.append("  " * (i + 2) + f'<body name="b{i}" pos="{_f(pos)}">{joint}{inertial}{geom}')
        lines += ["  " * (i + 2) + "</body>" for i in reversed(range(n))]
    else:
        for i in range(n):
            lines.append(f'    <body name="b{i}" pos="{_f(centres[i])}"><freejoint/>{inertial}{geom}</body>')
        extra.append("  <equality>")
        for i in range(n):
            for off in _hinge_points(scene):
                body2 = f' body2="b{i - 1}"' if i else ""
                extra.append(f'    <connect body1="b{i}"{body2} anchor="{-half:.17g} {off:.17g} 0"/>')
        extra.append("  </equality>")
        if scene.ground:
            extra += ["  <contact>"] + [f'    <exclude body1="b{i}" body2="b{i - 1}"/>' for i in range(1, n)]
            extra.append("  </contact>")
    lines += ["  </worldbody>", *extra, "</mujoco>"]
    return "\n".join(lines) + "\n"


def build_mujoco(scene: ChainScene, tree: bool) -> Built:
    """MuJoCo: a kinematic tree (``tree``) or free bodies and connect constraints."""
    import mujoco

    model = mujoco.MjModel.from_xml_string(mujoco_xml(scene, tree))
    data = mujoco.MjData(model)
    mujoco.mj_forward(model, data)
    rows = slice(1, scene.links + 1)          # body 0 is the world

    def poses() -> tuple[np.ndarray, np.ndarray]:
        return data.xpos[rows].copy(), data.xquat[rows].copy()

    def warnings() -> list[str]:   # e.g. mjWARN_BADQACC: MuJoCo found NaN/huge accelerations and reset the state
        return [f"{name} ×{data.warning[int(kind)].number}" for name, kind in mujoco.mjtWarning.__members__.items()
                if name != "mjNWARNING" and data.warning[int(kind)].number]

    return functools.partial(mujoco.mj_step, model, data), poses, lambda: None, warnings


def build_pybullet(scene: ChainScene, multibody: bool) -> Built:
    """PyBullet: one multibody with a fixed base (``multibody``), or maximal bodies and point constraints."""
    import pybullet as p

    cid = p.connect(p.DIRECT)
    p.setGravity(0.0, 0.0, -9.81, physicsClientId=cid)
    p.setTimeStep(scene.dt, physicsClientId=cid)
    n, half, mu = scene.links, 0.5 * scene.length, math.sqrt(scene.friction)
    halves = [0.5 * s for s in scene.size]
    if scene.ground:
        plane = p.createMultiBody(0.0, p.createCollisionShape(p.GEOM_PLANE, physicsClientId=cid),
                                  physicsClientId=cid)
        p.changeDynamics(plane, -1, lateralFriction=mu, physicsClientId=cid)
    identity = [0.0, 0.0, 0.0, 1.0]
    if multibody:
        dofs = n * (1 if scene.joint == "hinge" else 3)
        if dofs > PYBULLET_MAX_DOF:
            raise RuntimeError(f"not possible: {dofs} degrees of freedom > {PYBULLET_MAX_DOF}, the most PyBullet's "
                               "client–server state holds (MAX_DEGREE_OF_FREEDOM); built anyway, link 0 reads "
                               "garbage from the first step and the chain blows up")
        shape = (p.createCollisionShape(p.GEOM_BOX, halfExtents=halves, collisionFramePosition=[half, 0, 0],
                                        physicsClientId=cid) if scene.ground else -1)
        kind = p.JOINT_REVOLUTE if scene.joint == "hinge" else p.JOINT_SPHERICAL
        body = p.createMultiBody(
            baseMass=0.0, basePosition=[0.0, 0.0, scene.height], linkMasses=[scene.mass] * n,
            linkCollisionShapeIndices=[shape] * n, linkVisualShapeIndices=[-1] * n,
            linkPositions=[[0.0, 0.0, 0.0]] + [[scene.length, 0.0, 0.0]] * (n - 1),
            linkOrientations=[identity] * n, linkInertialFramePositions=[[half, 0.0, 0.0]] * n,
            linkInertialFrameOrientations=[identity] * n, linkParentIndices=list(range(n)),
            linkJointTypes=[kind] * n, linkJointAxis=[list(AXIS)] * n,
            flags=p.URDF_USE_SELF_COLLISION | p.URDF_USE_SELF_COLLISION_EXCLUDE_PARENT, physicsClientId=cid)
        for j in range(-1, n):
            p.changeDynamics(body, j, linearDamping=0.0, angularDamping=0.0, jointDamping=0.0, physicsClientId=cid)
            if j >= 0:
                p.changeDynamics(body, j, mass=scene.mass, localInertiaDiagonal=list(scene.inertia),
                                 lateralFriction=mu, physicsClientId=cid)
        for j in range(n):                    # the joints' default motors off
            if kind == p.JOINT_REVOLUTE:
                p.setJointMotorControl2(body, j, p.VELOCITY_CONTROL, force=0.0, physicsClientId=cid)
            else:
                p.setJointMotorControlMultiDof(body, j, p.POSITION_CONTROL, targetPosition=identity,
                                               positionGain=0.0, velocityGain=0.0, force=[0.0, 0.0, 0.0],
                                               physicsClientId=cid)
        links = list(range(n))

        def poses() -> tuple[np.ndarray, np.ndarray]:
            # [0], [1]: the centre of mass frame; without computeForwardKinematics link 0's pose is stale
            states = p.getLinkStates(body, links, computeForwardKinematics=True, physicsClientId=cid)
            x = np.array([s[0] for s in states])
            q = np.array([s[1] for s in states])[:, [3, 0, 1, 2]]
            return x, q
    else:
        shape = (p.createCollisionShape(p.GEOM_BOX, halfExtents=halves, physicsClientId=cid)
                 if scene.ground else -1)
        ids = []
        for c in scene.centres():
            b = p.createMultiBody(baseMass=scene.mass, baseCollisionShapeIndex=shape, basePosition=list(c),
                                  useMaximalCoordinates=True, physicsClientId=cid)
            p.changeDynamics(b, -1, mass=scene.mass, localInertiaDiagonal=list(scene.inertia), linearDamping=0.0,
                             angularDamping=0.0, lateralFriction=mu, physicsClientId=cid)
            ids.append(b)
        pivot = p.createMultiBody(baseMass=0.0, basePosition=list(scene.anchors()[0]), useMaximalCoordinates=True,
                                  physicsClientId=cid)
        for i in range(n):
            for off in _hinge_points(scene):
                shift = np.array(AXIS) * off
                if i:
                    p.setCollisionFilterPair(ids[i], ids[i - 1], -1, -1, 0, physicsClientId=cid)
                    c = p.createConstraint(ids[i], -1, ids[i - 1], -1, p.JOINT_POINT2POINT, [0, 0, 0],
                                           list(shift - [half, 0, 0]), list(shift + [half, 0, 0]),
                                           physicsClientId=cid)
                else:   # PyBullet refuses a maximal body's constraint to the world (-1): a fixed pivot body
                    c = p.createConstraint(ids[i], -1, pivot, -1, p.JOINT_POINT2POINT, [0, 0, 0],
                                           list(shift - [half, 0, 0]), list(shift), physicsClientId=cid)
                p.changeConstraint(c, maxForce=BIG_FORCE, physicsClientId=cid)

        def poses() -> tuple[np.ndarray, np.ndarray]:
            got = [p.getBasePositionAndOrientation(b, physicsClientId=cid) for b in ids]
            return np.array([g[0] for g in got]), np.array([g[1] for g in got])[:, [3, 0, 1, 2]]

    def close() -> None:
        if p.isConnected(physicsClientId=cid):
            p.disconnect(physicsClientId=cid)

    return functools.partial(p.stepSimulation, physicsClientId=cid), poses, close, list


CONFIGS: dict[str, Callable[[ChainScene], Built]] = {
    "tumble/direct": lambda s: build_tumble(s, "direct")[0],
    "tumble/pgs": lambda s: build_tumble(s, "pgs")[0],
    "mujoco/tree": lambda s: build_mujoco(s, tree=True),
    "mujoco/connect": lambda s: build_mujoco(s, tree=False),
    "pybullet/multibody": lambda s: build_pybullet(s, multibody=True),
    "pybullet/p2p": lambda s: build_pybullet(s, multibody=False),
}
"""Row label → builder, in table order."""

MODELLING = {
    "tumble/direct": "free bodies + joint rows, direct (banded Cholesky) solve",
    "tumble/pgs": "free bodies + joint rows, block Gauss–Seidel",
    "mujoco/tree": "kinematic tree (reduced coordinates)",
    "mujoco/connect": "free bodies + equality connect (maximal)",
    "pybullet/multibody": "btMultiBody links (reduced coordinates)",
    "pybullet/p2p": "maximal bodies + JOINT_POINT2POINT",
}


def run_once(scene: ChainScene, build: Callable[[ChainScene], Built], steps: int) -> dict[str, Any]:
    """Build ``scene``, take ``WARMUP`` untimed steps, then time the rest of ``steps`` in chunks of
    ``SAMPLE_EVERY`` with the joint error sampled between chunks (module docstring)."""
    table = scene.joint_table()
    step, poses, close, warnings = build(scene)
    try:
        worst = joint_gap(*poses(), *table)
        for _ in range(WARMUP):
            step()
        worst = max(worst, joint_gap(*poses(), *table))
        wall, done = 0.0, WARMUP
        while done < steps and wall < BUDGET_S:
            stamps = timed_steps(step, min(SAMPLE_EVERY, steps - done), BUDGET_S - wall)
            wall += float(stamps[-1] - stamps[0])
            done += len(stamps) - 1
            x, q = poses()
            gap = joint_gap(x, q, *table)
            worst = max(worst, gap) if math.isfinite(gap) else math.inf
        return {"steps_per_s": (done - WARMUP) / wall, "steps": done, "partial": done < steps, "max_gap": worst,
                "z_min_end": float(x[:, 2].min()), "warnings": warnings()}
    finally:
        close()


def first_step_cost(scene: ChainScene, joint_solver: str) -> dict[str, float]:
    """Seconds of tumble's first build and first step of ``scene`` in this process (kernel compile, or its
    load from Numba's on-disk cache)."""
    t0 = time.perf_counter()
    (step, *_), _ = build_tumble(scene, joint_solver)
    t1 = time.perf_counter()
    step()
    t2 = time.perf_counter()
    return {"build_s": t1 - t0, "first_step_s": t2 - t1}


def measure(quick: bool) -> dict[str, Any]:
    """Every scene in every configuration (``REPEATS`` interleaved runs); JSON-ready."""
    out: dict[str, Any] = {"scenes": {}}
    repeats = 1 if quick else REPEATS
    available = {"tumble": TumbleAdapter().available(), "mujoco": MujocoAdapter().available(),
                 "pybullet": PyBulletAdapter().available()}
    for scene in SCENES:
        steps = round(1.0 / scene.dt) if quick else scene.steps
        entry: dict[str, Any] = {"setup": {**scene.__dict__, "steps": steps, "axis": AXIS if scene.joint == "hinge"
                                           else None}, "compile": {}, "rows": {}}
        for solver in ("direct", "pgs"):
            entry["compile"][solver] = first_step_cost(scene, solver)
        runs: dict[str, list[dict[str, Any]]] = {label: [] for label in CONFIGS}
        for _ in range(repeats):
            for label, build in CONFIGS.items():
                ok, why = available[label.split("/")[0]]
                if not ok:
                    runs[label].append({"error": why})
                    continue
                try:
                    runs[label].append(run_once(scene, build, steps))
                except Exception as exc:   # one engine failing must not stop the benchmark
                    runs[label].append({"error": f"{type(exc).__name__}: {exc}"[:300]})
                print(f"[joints] {scene.name} {label}: {runs[label][-1]}", file=sys.stderr, flush=True)
        for label, rs in runs.items():
            good = [r for r in rs if "error" not in r]
            if not good:
                entry["rows"][label] = {"error": rs[0]["error"], "modelling": MODELLING[label]}
                continue
            entry["rows"][label] = {
                "modelling": MODELLING[label], "runs": good,
                "steps_per_s": statistics.median(r["steps_per_s"] for r in good),
                "max_gap": max(r["max_gap"] for r in good),
                "z_min_end": good[-1]["z_min_end"], "partial": any(r["partial"] for r in good),
                "warnings": sorted({w for r in good for w in r["warnings"]})}
        ref = entry["rows"].get("mujoco/tree", {}).get("steps_per_s")
        for row in entry["rows"].values():
            if "steps_per_s" in row and ref:
                row["ratio_to_mujoco_tree"] = row["steps_per_s"] / ref
        out["scenes"][scene.name] = entry
    return out


def render(results: dict[str, Any]) -> str:
    """The Markdown report of ``results`` (what :func:`measure` returned, plus ``meta``)."""
    meta = results["meta"]
    lines = ["# Jointed chains: tumble beside MuJoCo and PyBullet", "",
             f"Generated by `python -m bench.joints{' --quick' if meta['quick'] else ''}` on {meta['date']} in "
             f"{meta['wall_s']:.0f} s. Machine: {meta['cpu']}, {meta['cores']} cores; Numba threads "
             f"{meta['numba_threads']}.", "",
             "Versions: " + ", ".join(f"{k} {v}" for k, v in meta["versions"].items()) + ".", "",
             "Scenes, modelling and how each figure is measured: the docstring of `bench/joints.py`. Link: box "
             "0.1 × 0.04 × 0.04 m, 0.1 kg; dt 1/240 s; gravity 9.81 m/s². steps/s: median of "
             f"{meta['repeats']} timed runs (interleaved across the rows, fresh scene each, after {WARMUP} "
             "warm-up steps); ratio: to `mujoco/tree` in this same run. Joint error: the largest distance "
             f"between any joint's two anchor points, sampled every {SAMPLE_EVERY} steps over the whole run, "
             "computed from the bodies' poses the same way for every engine.", ""]
    titles = {"pendulum": "10-link pendulum: hinges (axis y), first hinged to the world at z = 1 m, released "
                          "horizontal; no contacts",
              "chain": "50-link chain: ball joints, pinned to the world at (0, 0, 2) m, released horizontal, falls "
                       "onto the ground (μ 0.5)"}
    for name, entry in results["scenes"].items():
        seconds = entry["setup"]["steps"] * entry["setup"]["dt"]
        lines += [f"## {titles[name]}; {seconds:g} s", "",
                  "| engine / modelling | steps/s | × mujoco/tree | max joint error [m] | lowest link centre at "
                  "the end [m] | engine warnings |", "|---|---|---|---|---|---|"]
        for label, row in entry["rows"].items():
            what = f"{label}: {row['modelling']}"
            if "error" in row:
                lines.append(f"| {what} | failed: {row['error']} | | | | |")
                continue
            partial = " (partial)" if row["partial"] else ""
            z = f"{row['z_min_end']:.4f}" if name == "chain" else "—"
            lines.append(f"| {what} | {row['steps_per_s']:,.0f}{partial} | {row['ratio_to_mujoco_tree']:.3g} | "
                         f"{row['max_gap']:.2e} | {z} | {', '.join(row['warnings']) or '—'} |")
        comp = entry["compile"]
        lines += ["", "tumble's one-time cost in this process, not in the figures above (first build; first step: "
                  "Numba compile, or loading the kernels from its on-disk cache when that is still valid): "
                  + "; ".join(f"{s}: build {c['build_s']:.2f} s, first step {c['first_step_s']:.2f} s"
                              for s, c in comp.items()) + ".", ""]
    lines += ["`mujoco/tree` and `pybullet/multibody` are reduced-coordinate models: their joints hold by "
              "construction, so their joint error is rounding, not a solver's residual.", ""]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    return side_by_side_main("joints", __doc__, measure, render, REPEATS, argv)


if __name__ == "__main__":
    raise SystemExit(main())
