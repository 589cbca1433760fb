"""``python -m bench.robots``: tumble's articulations (reduced coordinates) side by side with MuJoCo and PyBullet.

SI units; gravity (0, 0, −9.81) m/s²; dt = 1/240 s for every engine and scene. The chain scenes use the
link of ``bench/joints.py``: a box 0.1 × 0.04 × 0.04 m (long axis x), 0.1 kg, principal inertia from the
box, hinged at the centres of its two end faces about y.

1. **pendulum**: 10 links in a straight horizontal line along +x at z = 1 m, link 0's free end hinged to the
   world at (0, 0, 1) m, each next link hinged to the one before (``bench.joints``'s scene 1 as a kinematic
   tree). Released at rest; 5 s; no contacts at all.
2. **chain50**: the same with 50 links (5 m long); 5 s; no contacts.
3. **scaling**: the same with 10, 20, 50, 100 and 200 links; 5 s each; no contacts; rows ``tumble/euler``,
   ``mujoco/tree`` and ``pybullet/multibody``.
4. **humanoid**: pybullet_data's ``mjcf/humanoid.xml`` (13 bodies, 21 hinges, capsules and spheres, 40.8 kg in
   MuJoCo) on a floating base — its torso at (0, 0, 1.4) m as in the file, feet 0.115 m above the ground —
   dropped onto the plane z = 0 and left to fall (no control); 2 s; friction 1 for every pair.

Modelling per row (the tables say which):

- ``tumble/euler``, ``tumble/rk4``: ``World.add_robot`` of a ``RobotDescription`` built here (a massless fixed
  ``base`` link at the world origin; joint 0's origin at (0, 0, 1) m; "continuous" joints, axis y; each
  link's frame at its proximal hinge, its COM at (0.05, 0, 0) m; no collision shapes), ``fixed_base=True``,
  ``World(robot_integrator="euler")`` (the default) or ``"rk4"``; World defaults otherwise.
- ``tumble/urdf``: ``World.add_urdf`` of a URDF of the same chain generated into a temp dir (skipped with a
  note while ``tumble.robots.urdf`` does not exist). ``mujoco/urdf`` and ``pybullet/urdf`` load that file.
- ``mujoco/tree``: the MJCF kinematic tree of ``bench.joints`` (hinges; contacts disabled), MuJoCo's default
  Euler (semi-implicit) integrator — the reference of every ratio; ``mujoco/rk4``: the same with
  ``integrator RK4``; ``mujoco/urdf``: ``MjModel.from_xml_path`` of the generated URDF (timestep set to dt).
- ``pybullet/multibody``: one ``createMultiBody`` with a fixed base and ``JOINT_REVOLUTE`` links (btMultiBody,
  Featherstone, reduced coordinates); ``pybullet/urdf``: ``loadURDF`` of the generated file
  (``useFixedBase=True``, ``URDF_USE_INERTIA_FROM_FILE``, ``useMaximalCoordinates=False``, the default).
  Both: the joints' default velocity motors off (force 0), link and joint damping 0. Not run where the chain
  has more than 128 degrees of freedom (PyBullet's ``MAX_DEGREE_OF_FREEDOM``): the 200-link chain.
- humanoid: ``mujoco/mjcf`` loads a copy of the file with a free joint added to the torso (the file has none:
  MuJoCo would weld the torso to the world) — ``<joint type="free" damping="0" armature="0" limited="false"
  stiffness="0"/>``, the line pybullet_data's ``humanoid_symmetric.xml`` has commented out — with the
  file's options (PGS, 50 iterations, its joint damping, stiffness and armature) except the timestep, set to
  dt = 1/240 s (the file says 0.002 s). ``pybullet/mjcf``: ``loadMJCF`` of the original file (PyBullet gives
  a root body without a joint a floating base; it reads the file's floor as a second body), the 21 joint
  motors off, ``lateralFriction`` 1 on every link and the floor; PyBullet's defaults otherwise (its reader
  leaves out the file's joint damping and stiffness). ``tumble/mjcf``: ``World.add_mjcf`` of the same copy as MuJoCo,
  ``friction=1``, and ``add_ground(friction=1)``; ``fixed_base=None`` (the file's word), and should that
  raise, ``fixed_base=True`` (the reader's convention: its root link is MuJoCo's world body, kept fixed; the
  torso floats by its free joint), then the original file with ``fixed_base=False``; should the torso not
  start at the file's (0, 0, 1.4) m, built again with ``position`` making up the difference (the report
  notes what raised and what was used; the row is skipped with a note while ``tumble.robots.mjcf`` does not
  exist). The joints' spring ``stiffness`` (1–20 N m/rad here) acts in MuJoCo and tumble (its reader maps
  ``stiffness``/``springref`` to joint springs); PyBullet's reader ignores it.
- Link states are read the same way everywhere: tumble's ``Robot.link(name)`` (``com``, ``orientation``,
  ``velocity``, ``angular_velocity``); MuJoCo's ``xipos``, ``xquat`` and ``mj_objectVelocity`` after
  ``mj_kinematics``, ``mj_comPos``, ``mj_comVel`` (after ``mj_step`` those arrays still hold the state before
  the step); PyBullet's ``getLinkStates(computeLinkVelocity=1, computeForwardKinematics=1)``.

Figures:

- **steps/s**: ``time.perf_counter`` around the stepping only (``bench.timing.timed_steps``, in chunks of
  ``SAMPLE_EVERY`` steps; the sampling between chunks is not timed; the scaling scene has no sampling and
  one chunk), after ``WARMUP`` untimed steps of each run; ``REPEATS`` timed runs, each from a freshly built
  model, interleaved across the rows (and chain sizes) so a noisy spell of this shared machine hits them
  all; the median over the runs is reported, and its ratio to ``mujoco/tree`` (humanoid: ``mujoco/mjcf``)
  of the same run. Before the timed runs, each tumble row runs its scene once untimed: its build, its first
  step (Numba compile, or its load from the on-disk cache when that is still valid) and its other steps
  (kernels first used later, such as the contact stage at the first contact, load there) are reported
  separately; the scaling scene does this for 200 links and 2 steps.
- **energy** (chains): E = Σ ½ m |v|² + ½ ωᵀ R I Rᵀ ω + m g z over the links, from each engine's link COM
  positions, orientations, COM velocities and angular velocities (the same computation for every engine,
  no engine's own energy readout), sampled every ``SAMPLE_EVERY`` steps; reported as E(end) − E(0) and the
  largest |E − E(0)| over the run, in % of the chain's energy scale Σ m g (i + ½) L (the potential energy
  the chain gives up hanging straight down: 4.9 J for 10 links, 123 J for 50). **blew up**: the time of the
  first sample with a non-finite value (NaN, inf); the energy and joint figures are then those of the samples
  before it. MuJoCo does not go non-finite: on NaN or huge accelerations it warns (``mjWARN_BADQACC``) and
  resets the state to the initial pose; tumble refuses the step that would (``NonFiniteStep``, the state kept
  as before it): its row then stops there, reads NaN from then on, and its steps/s and median step count only
  the steps before.
- **joint error** (chains) [m]: the largest distance between the two anchor points of any hinge over the
  whole run (``bench.joints.joint_gap``: link i's end point (+0.05, 0, 0) and link i + 1's start point
  (−0.05, 0, 0), from the links' COM poses; joint 0 against the world pivot). Every model here is in
  reduced coordinates, so this is rounding (~1e-16 m), not a solver's residual: a check of each engine's
  link-pose readout.
- **scaling**: µs per step = 1 / (median steps/s), and the median duration of a single step (robust to other
  work on the machine); the exponent is the least-squares slope of log(µs/step) against log(links) over
  10–200 links (the issue's target for tumble: ≤ 1.1), and over 50–200 (the tail), from each of the two.
- **humanoid**: the lowest point of any of the robot's collision shapes above the ground [m] — at the start,
  the lowest over the run (sampled every ``SAMPLE_EVERY`` steps) and at the end (negative: below the
  ground) — computed by MuJoCo's ``mj_geomDistance`` to the floor geom, PyBullet's ``getClosestPoints`` to
  the floor, and for tumble from the link poses and the shapes of ``read_mjcf``'s description; the largest
  link COM speed at the end [m/s]; "at rest on the ground" = that speed < 0.05 m/s and the lowest point at
  the end within [−0.01, 0.01] m. The same figures after ``HUMANOID_SETTLE_SECONDS`` (5 s) of one more,
  untimed run of each row (is it at rest later?).
- engine warnings: MuJoCo's ``data.warning`` counts (``mjWARN_BADQACC``: it met NaN or huge accelerations and
  reset the state to the initial pose, which the figures do not show by themselves).

    python -m bench.robots            # → bench/ROBOTS.md and bench/robots.json (under a minute here)
    python -m bench.robots --quick    # 1 s simulated, 1 timed run, → a temp dir (a smoke test)
"""

from __future__ import annotations

import functools
import importlib.util
import math
import re
import statistics
import sys
import tempfile
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from bench.adapters import MujocoAdapter, PyBulletAdapter, TumbleAdapter
from bench.adapters.tumble_adapter import import_tumble
from bench.geometry import quat_to_matrix
from bench.joints import AXIS, PYBULLET_MAX_DOF, ChainScene, joint_gap, mujoco_xml
from bench.metrics import SETTLED_SPEED
from bench.run import side_by_side_main
from bench.timing import timed_steps

__all__ = ["Sim", "chain_scene", "chain_urdf", "chain_energy", "main"]

DT = 1.0 / 240.0
"""Time step of every scene and engine [s]."""
G = 9.81
"""|gravity| [m/s²], along −z."""
WARMUP = 5
"""Untimed steps at the start of every run (they count toward the simulated time)."""
SAMPLE_EVERY = 4
"""Steps between two samples of the energy, joint error or lowest point (60 Hz at dt = 1/240 s)."""
REPEATS = 3
"""Timed runs per scene and row; the median is reported."""
BUDGET_S = 60.0
"""Wall-clock cap of one timed run [s] (a run cut short is marked partial)."""
CHAIN_SECONDS = 5.0
SCALING_SECONDS = 5.0
HUMANOID_SECONDS = 2.0
HUMANOID_SETTLE_SECONDS = 5.0
"""Simulated time of the extra, untimed humanoid run that asks whether it is at rest later [s]."""
SIZES = (10, 20, 50, 100, 200)
"""Links of the scaling chains."""
HUMANOID_FILE = "mjcf/humanoid.xml"
"""The humanoid, relative to ``pybullet_data.getDataPath()``."""
HUMANOID_ROOT = "torso"
HUMANOID_ROOT_AT = np.array([0.0, 0.0, 1.4])
"""The humanoid's root body and its position in the file [m]."""
HUMANOID_FRICTION = 1.0
"""μ of every humanoid pair: MuJoCo's default geom friction (the file sets none), which it combines by max;
PyBullet's ``lateralFriction`` set on every link and the floor (its MJCF reader gives 0.5), multiplied per
pair; tumble's ``friction`` on the links and the ground (√(μa μb) per pair)."""
REST_SPEED = SETTLED_SPEED
"""[m/s] the largest link speed of a humanoid "at rest" (bench.metrics' settled speed, 0.05)."""
GROUND_TOLERANCE = 0.01
"""[m] how far from the ground the lowest point may be for the humanoid to lie "on the ground"."""

LinkStates = tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]
"""(x (n, 3) link COMs [m], q (n, 4) orientations (w, x, y, z) of the link frames' axes, v (n, 3) COM
velocities [m/s], w (n, 3) angular velocities [rad/s]), world frame."""


@dataclass
class Sim:
    """One engine's model of a scene: ``step`` advances it by dt; ``links`` reads the links' states (the
    chains' links in chain order); ``lowest`` the lowest point of the robot's shapes above the ground
    (humanoid); ``info`` model facts (degrees of freedom, mass) for the report."""

    step: Callable[[], None]
    links: Callable[[], LinkStates]
    close: Callable[[], None] = lambda: None
    warnings: Callable[[], list[str]] = list
    lowest: Callable[[], float] | None = None
    info: dict[str, Any] = field(default_factory=dict)


class Skip(Exception):
    """A row that cannot run in this checkout (a reader not written yet, a peer's limit): the message says
    why; reported as "skipped", not as a failure."""


# ---------------------------------------------------------------------------------------------------------
# chains


def chain_scene(links: int, seconds: float = CHAIN_SECONDS) -> ChainScene:
    """The hinged chain of ``links`` links (module docstring), as ``bench.joints`` describes it."""
    return ChainScene(f"chain{links}", links, "hinge", height=1.0, ground=False, seconds=seconds)


def energy_scale(scene: ChainScene) -> float:
    """Σ m g (i + ½) L [J]: the potential energy the chain gives up hanging straight down from horizontal."""
    return scene.mass * G * scene.length * scene.links**2 / 2.0


def chain_energy(scene: ChainScene, states: LinkStates) -> float:
    """Total mechanical energy [J] of the chain's links from their COM states (module docstring)."""
    x, q, v, w = states
    rot = quat_to_matrix(q)
    w_body = np.einsum("nji,nj->ni", rot, w)     # Rᵀ ω
    kinetic = 0.5 * scene.mass * float(np.sum(v * v)) + 0.5 * float(np.sum(np.asarray(scene.inertia) * w_body**2))
    return kinetic + scene.mass * G * float(np.sum(x[:, 2]))


def _f(values: Any) -> str:
    return " ".join(f"{float(v):.17g}" for v in np.ravel(values))


def chain_urdf(scene: ChainScene) -> str:
    """URDF of ``scene``: a massless ``base`` link (fixed base at the world origin), links ``l0``… and
    continuous joints ``j0``… about y; joint 0's origin at (0, 0, height)."""
    ixx, iyy, izz = scene.inertia
    inertial = (f'<inertial><origin xyz="{_f((scene.length / 2, 0, 0))}" rpy="0 0 0"/><mass value="{scene.mass:.17g}"/>'
                f'<inertia ixx="{ixx:.17g}" ixy="0" ixz="0" iyy="{iyy:.17g}" iyz="0" izz="{izz:.17g}"/></inertial>')
    lines = ['<?xml version="1.0"?>', f'<robot name="chain{scene.links}">', '  <link name="base"/>']
    for i in range(scene.links):
        parent = "base" if i == 0 else f"l{i - 1}"
        origin = (0.0, 0.0, scene.height) if i == 0 else (scene.length, 0.0, 0.0)
        lines += [f'  <link name="l{i}">{inertial}</link>',
                  f'  <joint name="j{i}" type="continuous"><parent link="{parent}"/><child link="l{i}"/>'
                  f'<origin xyz="{_f(origin)}" rpy="0 0 0"/><axis xyz="{_f(AXIS)}"/>'
                  '<dynamics damping="0" friction="0"/></joint>']
    lines.append("</robot>")
    return "\n".join(lines) + "\n"


def chain_description(scene: ChainScene) -> Any:
    """tumble ``RobotDescription`` of the same chain as :func:`chain_urdf`."""
    import_tumble()
    from tumble.robots import JointSpec, LinkSpec, RobotDescription

    half = 0.5 * scene.length
    links = [LinkSpec("base")] + [LinkSpec(f"l{i}", mass=scene.mass, com=np.array([half, 0.0, 0.0]),
                                           inertia=np.diag(scene.inertia)) for i in range(scene.links)]
    joints = [JointSpec(f"j{i}", "continuous", "base" if i == 0 else f"l{i - 1}", f"l{i}",
                        origin_xyz=np.array([0.0, 0.0, scene.height] if i == 0 else [scene.length, 0.0, 0.0]),
                        axis=np.array(AXIS)) for i in range(scene.links)]
    return RobotDescription(f"chain{scene.links}", links, joints)


class _TumbleStepper:
    """``world.step(dt)``, until a step raises tumble's NonFiniteStep (a FloatingPointError: the state would have
    gone non-finite and the step was undone); from then on a no-op, and the link states read NaN, so that the
    sampler reports "blew up" as it does for an engine whose state goes NaN."""

    def __init__(self, world: Any, dt: float) -> None:
        self.world, self.dt, self.blown = world, dt, False
        self.calls = 0
        self.steps_before_blowing_up: int | None = None
        """Calls that stepped (the warm-up's included) before the one that raised: ``run_once`` times only those."""

    def __call__(self) -> None:
        if not self.blown:
            try:
                self.world.step(self.dt)
            except FloatingPointError:
                self.blown = True
                self.steps_before_blowing_up = self.calls
        self.calls += 1


def _tumble_links(robot: Any, names: list[str], stepper: _TumbleStepper | None = None) -> Callable[[], LinkStates]:
    handles = [robot.link(n) for n in names]

    def read() -> LinkStates:
        if stepper is not None and stepper.blown:
            nan = np.full((len(handles), 3), np.nan)
            return nan, np.full((len(handles), 4), np.nan), nan, nan
        return (np.array([h.com for h in handles]), np.array([h.orientation for h in handles]),
                np.array([h.velocity for h in handles]), np.array([h.angular_velocity for h in handles]))

    return read


def tumble_chain(scene: ChainScene, integrator: str, urdf: Path | None) -> Sim:
    """tumble: the chain from a RobotDescription, or from the URDF file ``urdf``."""
    tb = import_tumble()
    world = tb.World(gravity=(0.0, 0.0, -G), robot_integrator=integrator)
    if urdf is None:
        robot = world.add_robot(chain_description(scene), position=(0.0, 0.0, 0.0), fixed_base=True)
    else:
        if importlib.util.find_spec("tumble.robots.urdf") is None:
            raise Skip("tumble's URDF reader (tumble.robots.urdf) does not exist yet in this checkout")
        robot = world.add_urdf(urdf, position=(0.0, 0.0, 0.0), fixed_base=True)
    stepper = _TumbleStepper(world, scene.dt)
    return Sim(stepper, _tumble_links(robot, [f"l{i}" for i in range(scene.links)], stepper),
               info={"nv": robot.nv, "robot": robot, "world": world})


def _mujoco_sync(model: Any, data: Any) -> None:
    """Poses and velocities of the current state: after ``mj_step`` MuJoCo's ``xpos``, ``xipos``, ``geom_xpos`` and
    ``cvel`` are still those of the state before the step (computed at its start), one step behind ``qpos``."""
    import mujoco

    mujoco.mj_kinematics(model, data)
    mujoco.mj_comPos(model, data)
    mujoco.mj_comVel(model, data)


def _mujoco_links(model: Any, data: Any, ids: list[int]) -> Callable[[], LinkStates]:
    import mujoco

    vel = np.zeros(6)

    def read() -> LinkStates:
        _mujoco_sync(model, data)
        v = np.empty((len(ids), 6))
        for k, i in enumerate(ids):   # (ω, v) at the body's COM (mjOBJ_BODY: the inertial frame), world axes
            mujoco.mj_objectVelocity(model, data, mujoco.mjtObj.mjOBJ_BODY, i, vel, 0)
            v[k] = vel
        return data.xipos[ids].copy(), data.xquat[ids].copy(), v[:, 3:], v[:, :3]

    return read


def _mujoco_warnings(data: Any) -> Callable[[], list[str]]:
    import mujoco

    def warnings() -> list[str]:   # e.g. mjWARN_BADQACC: MuJoCo found NaN/huge accelerations and reset the state
        return [f"{name} ×{data.warning[int(kind)].number}" for name, kind in mujoco.mjtWarning.__members__.items()
                if name != "mjNWARNING" and data.warning[int(kind)].number]

    return warnings


def mujoco_chain(scene: ChainScene, integrator: str, urdf: Path | None) -> Sim:
    """MuJoCo: ``bench.joints``' MJCF tree (bodies b0…) or the URDF file (bodies l0…)."""
    import mujoco

    if urdf is None:
        model = mujoco.MjModel.from_xml_string(mujoco_xml(scene, tree=True))
        names = [f"b{i}" for i in range(scene.links)]
    else:
        model = mujoco.MjModel.from_xml_path(str(urdf))
        names = [f"l{i}" for i in range(scene.links)]
    model.opt.timestep = scene.dt
    model.opt.gravity[:] = (0.0, 0.0, -G)
    model.opt.integrator = getattr(mujoco.mjtIntegrator, f"mjINT_{integrator.upper()}")
    data = mujoco.MjData(model)
    mujoco.mj_forward(model, data)
    ids = [mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_BODY, n) for n in names]
    return Sim(functools.partial(mujoco.mj_step, model, data), _mujoco_links(model, data, ids),
               warnings=_mujoco_warnings(data), info={"nv": model.nv})


def _pybullet_links(p: Any, cid: int, body: int, links: list[int]) -> Callable[[], LinkStates]:
    def read() -> LinkStates:
        # [0], [1]: the COM frame; [6], [7]: its velocities (world); without computeForwardKinematics stale
        states = p.getLinkStates(body, links, computeLinkVelocity=1, computeForwardKinematics=1, physicsClientId=cid)
        return (np.array([s[0] for s in states]), np.array([s[1] for s in states])[:, [3, 0, 1, 2]],
                np.array([s[6] for s in states]), np.array([s[7] for s in states]))

    return read


def _pybullet_passive(p: Any, cid: int, body: int) -> None:
    """Damping 0 on every link and joint; the joints' default velocity motors off."""
    for j in range(-1, p.getNumJoints(body, physicsClientId=cid)):
        p.changeDynamics(body, j, linearDamping=0.0, angularDamping=0.0, jointDamping=0.0, physicsClientId=cid)
        if j >= 0 and p.getJointInfo(body, j, physicsClientId=cid)[2] in (p.JOINT_REVOLUTE, p.JOINT_PRISMATIC):
            p.setJointMotorControl2(body, j, p.VELOCITY_CONTROL, force=0.0, physicsClientId=cid)


def pybullet_chain(scene: ChainScene, urdf: Path | None) -> Sim:
    """PyBullet: one btMultiBody built by ``createMultiBody``, or ``loadURDF`` of the URDF file."""
    import pybullet as p

    n, half = scene.links, 0.5 * scene.length
    if n > PYBULLET_MAX_DOF:
        raise Skip(f"not possible: {n} degrees of freedom > {PYBULLET_MAX_DOF}, the most PyBullet's client–server "
                   "state holds (MAX_DEGREE_OF_FREEDOM)")
    cid = p.connect(p.DIRECT)
    try:
        p.setGravity(0.0, 0.0, -G, physicsClientId=cid)
        p.setTimeStep(scene.dt, physicsClientId=cid)
        identity = [0.0, 0.0, 0.0, 1.0]
        if urdf is None:
            body = p.createMultiBody(
                baseMass=0.0, basePosition=[0.0, 0.0, scene.height], linkMasses=[scene.mass] * n,
                linkCollisionShapeIndices=[-1] * n, linkVisualShapeIndices=[-1] * n,
                linkPositions=[[0.0, 0.0, 0.0]] + [[scene.length, 0.0, 0.0]] * (n - 1),
                linkOrientations=[identity] * n, linkInertialFramePositions=[[half, 0.0, 0.0]] * n,
                linkInertialFrameOrientations=[identity] * n, linkParentIndices=list(range(n)),
                linkJointTypes=[p.JOINT_REVOLUTE] * n, linkJointAxis=[list(AXIS)] * n, physicsClientId=cid)
            for j in range(n):
                p.changeDynamics(body, j, mass=scene.mass, localInertiaDiagonal=list(scene.inertia),
                                 physicsClientId=cid)
        else:
            body = p.loadURDF(str(urdf), basePosition=[0.0, 0.0, 0.0], useFixedBase=True,
                              flags=p.URDF_USE_INERTIA_FROM_FILE, physicsClientId=cid)
        _pybullet_passive(p, cid, body)
    except BaseException:
        p.disconnect(physicsClientId=cid)
        raise

    def close() -> None:
        if p.isConnected(physicsClientId=cid):
            p.disconnect(physicsClientId=cid)

    return Sim(functools.partial(p.stepSimulation, physicsClientId=cid), _pybullet_links(p, cid, body, list(range(n))),
               close=close, info={"nv": p.getNumJoints(body, physicsClientId=cid)})


CHAIN_ROWS: dict[str, tuple[str, Callable[[ChainScene, Path | None], Sim]]] = {
    "tumble/euler": ("RobotDescription, robot_integrator euler (default)", lambda s, u: tumble_chain(s, "euler", None)),
    "tumble/rk4": ("RobotDescription, robot_integrator rk4", lambda s, u: tumble_chain(s, "rk4", None)),
    "tumble/urdf": ("add_urdf of the generated URDF, euler", lambda s, u: tumble_chain(s, "euler", u)),
    "mujoco/tree": ("MJCF kinematic tree, Euler (default)", lambda s, u: mujoco_chain(s, "euler", None)),
    "mujoco/rk4": ("MJCF kinematic tree, RK4", lambda s, u: mujoco_chain(s, "rk4", None)),
    "mujoco/urdf": ("the generated URDF, Euler", lambda s, u: mujoco_chain(s, "euler", u)),
    "pybullet/multibody": ("createMultiBody (btMultiBody)", lambda s, u: pybullet_chain(s, None)),
    "pybullet/urdf": ("loadURDF of the generated URDF (btMultiBody)", lambda s, u: pybullet_chain(s, u)),
}
"""Row label → (modelling, builder(scene, urdf path; the scaling rows, which read no file, get None)), in table
order, for the pendulum and the 50-link chain."""

SCALING_ROWS = ("tumble/euler", "mujoco/tree", "pybullet/multibody")


# ---------------------------------------------------------------------------------------------------------
# humanoid


def humanoid_path() -> Path:
    """pybullet_data's humanoid MJCF (``HUMANOID_FILE``)."""
    try:
        import pybullet_data
    except ImportError:
        raise Skip("pybullet_data (the humanoid's file) is not installed") from None
    return Path(pybullet_data.getDataPath()) / HUMANOID_FILE


def humanoid_free(folder: Path) -> Path:
    """A copy of the humanoid file with a free joint in its torso (module docstring), written to ``folder``."""
    text = humanoid_path().read_text()
    free = ('<joint name="root" type="free" pos="0 0 0" armature="0" damping="0" limited="false" '
            'stiffness="0"/>')
    text, count = re.subn(r"(<body\s+name=['\"]torso['\"][^>]*>)", r"\1" + free, text, count=1)
    if count != 1:
        raise RuntimeError(f"{humanoid_path()}: no torso body to give a free joint")
    path = folder / "humanoid_free.xml"
    path.write_text(text)
    return path


def _lowest_point(shape: Any, centre: np.ndarray, rot: np.ndarray) -> float:
    """z of the lowest point [m] of a tumble shape at ``centre`` with axes ``rot`` (shape → world)."""
    tb = import_tumble()
    a = rot[2]                                # the world z row: z = centre_z + a · p for a shape point p
    if isinstance(shape, tb.Sphere):
        return float(centre[2] - shape.radius)
    if isinstance(shape, tb.Capsule):
        return float(centre[2] - abs(a[2]) * 0.5 * shape.length - shape.radius)
    if isinstance(shape, tb.Cylinder):
        return float(centre[2] - abs(a[2]) * 0.5 * shape.height - shape.radius * math.sqrt(max(0.0, 1 - a[2] ** 2)))
    if isinstance(shape, tb.Box):
        return float(centre[2] - np.abs(a) @ shape.half_extents)
    if isinstance(shape, tb.Ellipsoid):
        return float(centre[2] - np.linalg.norm(a * np.array(shape.size)))
    if isinstance(shape, tb.ConvexHull):
        return float(centre[2] + np.min(shape.vertices @ a))
    raise TypeError(f"no lowest point for {shape!r}")


def tumble_humanoid(free: Path, original: Path) -> Sim:
    """tumble: ``World.add_mjcf`` of the humanoid with a free joint (``free``), on a ground; the fallbacks of the
    module docstring (``original``: the file without the free joint), noted in ``info["notes"]``."""
    if importlib.util.find_spec("tumble.robots.mjcf") is None:
        raise Skip("tumble's MJCF reader (tumble.robots.mjcf) does not exist yet in this checkout, so "
                   "World.add_mjcf cannot load the humanoid; this row runs once it does")
    tb = import_tumble()
    from tumble.robots.mjcf import read_mjcf

    def build(position: np.ndarray) -> tuple[Any, Any]:
        world = tb.World(gravity=(0.0, 0.0, -G))
        world.add_ground(friction=HUMANOID_FRICTION)
        return world, world.add_mjcf(path, position=position, fixed_base=fixed_base, friction=HUMANOID_FRICTION)

    notes: list[str] = []
    # the file's word first (its torso has the free joint); then the reader's own convention (its root link is
    # MuJoCo's world body, kept fixed; the torso floats by its free joint); last the original file, whose torso
    # is welded to that world link, with the world link floating
    for path, fixed_base in ((free, None), (free, True), (original, False)):
        try:
            world, robot = build(np.zeros(3))
            break
        except Exception as exc:
            notes.append(f"add_mjcf({path.name}, fixed_base={fixed_base}) raised {type(exc).__name__}: "
                         f"{str(exc)[:200]}")
    else:
        raise RuntimeError("; ".join(notes))
    if notes:
        notes.append(f"used add_mjcf({path.name}, fixed_base={fixed_base})")
    torso = robot.link(HUMANOID_ROOT).position
    if np.linalg.norm(torso - HUMANOID_ROOT_AT) > 1e-9:   # the reader left the root body's pos to ``position``
        notes.append(f"add_mjcf put the torso at {np.round(torso, 6).tolist()}, not at the file's "
                     f"{HUMANOID_ROOT_AT.tolist()}: built again with position={(HUMANOID_ROOT_AT - torso).tolist()}")
        world, robot = build(HUMANOID_ROOT_AT - torso)
    desc = read_mjcf(path)                    # the same file again: the shapes of each link, for the lowest point
    geoms = [(robot.link(link.name), g) for link in desc.links for g in link.geoms]
    massive = [robot.link(link.name) for link in desc.links if link.mass > 0]

    def lowest() -> float:
        out = math.inf
        for handle, g in geoms:
            rot = handle.rotation
            out = min(out, _lowest_point(g.shape, handle.position + rot @ np.asarray(g.position), rot @ g.rotation))
        return out

    def links() -> LinkStates:
        return (np.array([h.com for h in massive]), np.array([h.orientation for h in massive]),
                np.array([h.velocity for h in massive]), np.array([h.angular_velocity for h in massive]))

    return Sim(functools.partial(world.step, DT), links, lowest=lowest,
               info={"nv": robot.nv, "mass": float(sum(h.mass for h in massive)), "geoms": len(geoms),
                     "links": len(desc.links), "notes": notes})


def mujoco_humanoid(path: Path) -> Sim:
    """MuJoCo: the humanoid with a free joint (its floor from the file), timestep dt."""
    import mujoco

    model = mujoco.MjModel.from_xml_path(str(path))
    model.opt.timestep = DT
    data = mujoco.MjData(model)
    mujoco.mj_forward(model, data)
    floor = mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_GEOM, "floor")
    mine = [g for g in range(model.ngeom) if model.geom_bodyid[g] != 0]
    bodies = [b for b in range(1, model.nbody) if model.body_mass[b] > 0]

    def lowest() -> float:
        _mujoco_sync(model, data)
        return min(mujoco.mj_geomDistance(model, data, g, floor, 10.0, None) for g in mine)

    return Sim(functools.partial(mujoco.mj_step, model, data), _mujoco_links(model, data, bodies),
               warnings=_mujoco_warnings(data), lowest=lowest,
               info={"nv": model.nv, "mass": float(model.body_mass.sum()), "geoms": len(mine),
                     "links": model.nbody - 1,
                     "file_options": "PGS, 50 iterations, Euler; file timestep 0.002 s replaced by dt"})


def pybullet_humanoid(path: Path) -> Sim:
    """PyBullet: ``loadMJCF`` of the original file (floating torso; the floor is the file's)."""
    import pybullet as p

    cid = p.connect(p.DIRECT)
    try:
        p.setGravity(0.0, 0.0, -G, physicsClientId=cid)
        p.setTimeStep(DT, physicsClientId=cid)
        floor, body = p.loadMJCF(str(path), physicsClientId=cid)
        p.changeDynamics(floor, -1, lateralFriction=HUMANOID_FRICTION, physicsClientId=cid)
        for j in range(-1, p.getNumJoints(body, physicsClientId=cid)):
            p.changeDynamics(body, j, lateralFriction=HUMANOID_FRICTION, physicsClientId=cid)
            if j >= 0 and p.getJointInfo(body, j, physicsClientId=cid)[2] == p.JOINT_REVOLUTE:
                p.setJointMotorControl2(body, j, p.VELOCITY_CONTROL, force=0.0, physicsClientId=cid)
        nj = p.getNumJoints(body, physicsClientId=cid)
        masses = [p.getDynamicsInfo(body, j, physicsClientId=cid)[0] for j in range(nj)]
        links = [j for j in range(nj) if masses[j] > 0]   # its dummy links (one per extra hinge of a body) weigh 0
        hinges = sum(p.getJointInfo(body, j, physicsClientId=cid)[2] == p.JOINT_REVOLUTE for j in range(nj))
        base_mass = p.getDynamicsInfo(body, -1, physicsClientId=cid)[0]
    except BaseException:
        p.disconnect(physicsClientId=cid)
        raise
    link_read = _pybullet_links(p, cid, body, links)

    def read() -> LinkStates:
        x, q, v, w = link_read()
        bx, bq = p.getBasePositionAndOrientation(body, physicsClientId=cid)
        bv, bw = p.getBaseVelocity(body, physicsClientId=cid)
        return (np.vstack([bx, x]), np.vstack([np.array(bq)[[3, 0, 1, 2]], q]), np.vstack([bv, v]),
                np.vstack([bw, w]))

    def lowest() -> float:
        points = p.getClosestPoints(body, floor, 10.0, physicsClientId=cid)
        return min(pt[8] for pt in points) if points else math.inf

    def close() -> None:
        if p.isConnected(physicsClientId=cid):
            p.disconnect(physicsClientId=cid)

    return Sim(functools.partial(p.stepSimulation, physicsClientId=cid), read, close=close, lowest=lowest,
               info={"nv": 6 + hinges, "mass": float(base_mass + sum(masses)), "links": 1 + len(links)})


HUMANOID_ROWS: dict[str, tuple[str, Callable[[Path, Path], Sim]]] = {
    "tumble/mjcf": ("World.add_mjcf of the file + free joint, euler", lambda orig, free: tumble_humanoid(free, orig)),
    "mujoco/mjcf": ("the file + free joint, its options, timestep dt", lambda orig, free: mujoco_humanoid(free)),
    "pybullet/mjcf": ("loadMJCF of the file (btMultiBody, floating base)", lambda orig, free: pybullet_humanoid(orig)),
}
"""Row label → (modelling, builder(original file, copy with a free joint))."""


# ---------------------------------------------------------------------------------------------------------
# running


def run_once(build: Callable[[], Sim], steps: int, probe: Callable[[Sim], dict[str, float]] | None
             ) -> dict[str, Any]:
    """Build, take ``WARMUP`` untimed steps, then time the rest of ``steps``: in chunks of ``SAMPLE_EVERY`` with
    ``probe`` sampled between chunks, or in one chunk without a probe."""
    sim = build()
    try:
        samples = [{"k": 0, **probe(sim)}] if probe else []
        for _ in range(WARMUP):
            sim.step()
        if probe:
            samples.append({"k": WARMUP, **probe(sim)})
        wall, done, durations = 0.0, WARMUP, []
        chunk = SAMPLE_EVERY if probe else steps
        while done < steps and wall < BUDGET_S:
            stamps = timed_steps(sim.step, min(chunk, steps - done), BUDGET_S - wall)
            wall += float(stamps[-1] - stamps[0])
            done += len(stamps) - 1
            durations.append(np.diff(stamps))
            if probe:
                samples.append({"k": done, **probe(sim)})
        timed = done - WARMUP
        each = np.concatenate(durations)
        stepped = getattr(sim.step, "steps_before_blowing_up", None)
        if stepped is not None and stepped > WARMUP:
            # tumble raised NonFiniteStep and stepped no more: time only the steps before (the calls after
            # return at once and would inflate steps/s)
            timed = stepped - WARMUP
            each = each[:timed]
            wall = float(np.sum(each))
        return {"steps_per_s": timed / wall, "median_step_us": 1e6 * float(np.median(each)),
                "steps": done, "partial": done < steps, "samples": samples, "warnings": sim.warnings(),
                "info": {k: v for k, v in sim.info.items() if k not in ("robot", "world")}}
    finally:
        sim.close()


def _try(build: Callable[[], Sim], steps: int, probe: Callable[[Sim], dict[str, float]] | None) -> dict[str, Any]:
    """:func:`run_once`, a failure caught and described (one engine failing must not stop the benchmark)."""
    try:
        return run_once(build, steps, probe)
    except Skip as why:
        return {"skipped": str(why)}
    except Exception as exc:
        return {"error": f"{type(exc).__name__}: {exc}"[:400], "traceback": traceback.format_exc(limit=8)}


def first_step_cost(build: Callable[[], Sim], steps: int) -> dict[str, Any]:
    """Seconds of one tumble row's first build, first step, and the other ``steps`` − 1 steps of that first,
    untimed run in this process (Numba compile, or its load from the on-disk cache; kernels first used later —
    the contact stage at the first contact — load then, so this run goes through the whole scene once)."""
    try:
        t0 = time.perf_counter()
        sim = build()
        t1 = time.perf_counter()
        sim.step()
        t2 = time.perf_counter()
        for _ in range(steps - 1):
            sim.step()
        t3 = time.perf_counter()
        sim.close()
        return {"build_s": t1 - t0, "first_step_s": t2 - t1, "rest_s": t3 - t2, "steps": steps}
    except Skip as why:
        return {"skipped": str(why)}
    except Exception as exc:
        return {"error": f"{type(exc).__name__}: {exc}"[:400]}


def _available() -> dict[str, tuple[bool, str]]:
    return {"tumble": TumbleAdapter().available(), "mujoco": MujocoAdapter().available(),
            "pybullet": PyBulletAdapter().available()}


def _runs(labels: list[str], repeats: int, run: Callable[[str], dict[str, Any]], tag: str) -> dict[str, list]:
    """``repeats`` rounds over ``labels`` (interleaved), each ``run(label)``; an unavailable engine recorded."""
    available = _available()
    out: dict[str, list[dict[str, Any]]] = {label: [] for label in labels}
    for _ in range(repeats):
        for label in labels:
            ok, why = available[label.split("/")[0]]
            result = run(label) if ok else {"skipped": f"not installed: {why}"}
            out[label].append(result)
            shown = {k: v for k, v in result.items() if k not in ("samples", "traceback")}
            print(f"[robots] {tag} {label}: {shown}", file=sys.stderr, flush=True)
    return out


def _summary(runs: list[dict[str, Any]]) -> dict[str, Any]:
    """Median speed over the good runs; the first failure otherwise."""
    good = [r for r in runs if "steps_per_s" in r]
    if not good:
        bad = runs[0]
        return {k: bad[k] for k in ("skipped", "error", "traceback") if k in bad}
    out = {"steps_per_s": statistics.median(r["steps_per_s"] for r in good),
           "median_step_us": statistics.median(r["median_step_us"] for r in good),
           "runs": [{k: r[k] for k in ("steps_per_s", "median_step_us", "steps", "partial")} for r in good],
           "partial": any(r["partial"] for r in good),
           "warnings": sorted({w for r in good for w in r["warnings"]}), "info": good[-1]["info"]}
    failed = [r for r in runs if "steps_per_s" not in r]
    if failed:
        out["failed_runs"] = [r.get("error") or r.get("skipped") for r in failed]
    return out


def _ratios(rows: dict[str, dict[str, Any]], ref: str) -> None:
    base = rows.get(ref, {}).get("steps_per_s")
    for row in rows.values():
        if "steps_per_s" in row and base:
            row["ratio_to_mujoco"] = row["steps_per_s"] / base


def measure_chain(scene: ChainScene, steps: int, repeats: int, folder: Path) -> dict[str, Any]:
    """The pendulum or the 50-link chain in every CHAIN_ROWS row."""
    urdf = folder / f"chain{scene.links}.urdf"
    urdf.write_text(chain_urdf(scene))
    table = scene.joint_table()

    def probe(sim: Sim) -> dict[str, float]:
        states = sim.links()
        return {"energy": chain_energy(scene, states), "gap": joint_gap(states[0], states[1], *table)}

    entry: dict[str, Any] = {"setup": {**scene.__dict__, "steps": steps, "axis": AXIS,
                                       "energy_scale_J": energy_scale(scene)}, "compile": {}, "rows": {}}
    for label, (_, build) in CHAIN_ROWS.items():
        if label.startswith("tumble/"):
            entry["compile"][label] = first_step_cost(functools.partial(build, scene, urdf), steps)
    runs = _runs(list(CHAIN_ROWS), repeats, lambda label: _try(functools.partial(CHAIN_ROWS[label][1], scene, urdf),
                                                                 steps, probe), scene.name)
    for label, rs in runs.items():
        row = {"modelling": CHAIN_ROWS[label][0], **_summary(rs)}
        good = [r for r in rs if "steps_per_s" in r]
        if good:
            e0 = good[0]["samples"][0]["energy"]
            scale = energy_scale(scene)
            ok = [_finite_part(r["samples"]) for r in good]
            blowups = [r["samples"][len(f)]["k"] * scene.dt for r, f in zip(good, ok, strict=True)
                       if len(f) < len(r["samples"])]
            row.update(energy_start_J=e0, blowup_s=min(blowups) if blowups else None,
                       energy_drift=(statistics.median((f[-1]["energy"] - e0) / scale for f in ok) if not blowups
                                     else math.nan),
                       energy_max_dev=max(abs(s["energy"] - e0) / scale for f in ok for s in f),
                       max_gap=max(s["gap"] for f in ok for s in f))
        entry["rows"][label] = row
    _ratios(entry["rows"], "mujoco/tree")
    entry["tumble_own_energy"] = own_energy_check(scene, min(steps, round(1.0 / scene.dt)))
    return entry


def _finite_part(samples: list[dict[str, float]]) -> list[dict[str, float]]:
    """The samples before the first with a non-finite value (the state blew up: NaN or inf)."""
    for i, s in enumerate(samples):
        if not all(math.isfinite(v) for v in s.values()):
            return samples[:i]
    return samples


def own_energy_check(scene: ChainScene, steps: int) -> dict[str, Any]:
    """tumble's own ``Robot.kinetic_energy() + potential_energy()`` against :func:`chain_energy` after ``steps``
    (a check of those readouts, not timed)."""
    try:
        sim = tumble_chain(scene, "euler", None)
        for _ in range(steps):
            sim.step()
        robot = sim.info["robot"]
        own = robot.kinetic_energy() + robot.potential_energy()
        ours = chain_energy(scene, sim.links())
        return {"steps": steps, "own_J": own, "from_links_J": ours, "difference_J": own - ours}
    except Exception as exc:
        return {"error": f"{type(exc).__name__}: {exc}"[:400]}


def measure_scaling(seconds: float, repeats: int) -> dict[str, Any]:
    """Time per step of chains of ``SIZES`` links, tumble beside MuJoCo and PyBullet."""
    scenes = {n: chain_scene(n, seconds) for n in SIZES}
    runs: dict[int, dict[str, list]] = {n: {label: [] for label in SCALING_ROWS} for n in SIZES}
    entry: dict[str, Any] = {"setup": {"sizes": list(SIZES), "seconds": seconds, "dt": DT}, "compile": {},
                             "rows": {}}
    entry["compile"]["tumble/euler"] = first_step_cost(functools.partial(tumble_chain, scenes[SIZES[-1]], "euler",
                                                                         None), 2)
    for _ in range(repeats):
        for n, scene in scenes.items():
            got = _runs(list(SCALING_ROWS), 1, lambda label, s=scene: _try(
                functools.partial(CHAIN_ROWS[label][1], s, None), s.steps, None), f"scaling {n}")
            for label in SCALING_ROWS:
                runs[n][label] += got[label]
    for label in SCALING_ROWS:
        per = {n: _summary(runs[n][label]) for n in SIZES}
        entry["rows"][label] = {"sizes": per}
        sizes = [n for n in SIZES if "steps_per_s" in per[n]]
        wall = {n: 1e6 / per[n]["steps_per_s"] for n in sizes}
        median = {n: per[n]["median_step_us"] for n in sizes}
        for lo, key in ((SIZES[0], "exponent_all"), (50, "exponent_tail")):
            fit = [n for n in sizes if n >= lo]
            if len(fit) >= 2:
                for us, suffix in ((wall, ""), (median, "_median_step")):
                    slope = np.polyfit(np.log(fit), np.log([us[n] for n in fit]), 1)[0]
                    entry["rows"][label][key + suffix] = float(slope)
    return entry


def measure_humanoid(steps: int, repeats: int, folder: Path) -> dict[str, Any]:
    """The humanoid dropped onto the ground in every HUMANOID_ROWS row."""
    try:
        orig = humanoid_path()
        free = humanoid_free(folder)
    except Skip as why:
        return {"skipped": str(why)}

    def probe(sim: Sim) -> dict[str, float]:
        assert sim.lowest is not None
        v = sim.links()[2]
        return {"lowest": sim.lowest(), "speed": float(np.max(np.linalg.norm(v, axis=1)))}

    entry: dict[str, Any] = {"setup": {"file": HUMANOID_FILE, "dt": DT, "steps": steps, "friction": HUMANOID_FRICTION},
                             "compile": {}, "rows": {}}
    entry["compile"]["tumble/mjcf"] = first_step_cost(functools.partial(HUMANOID_ROWS["tumble/mjcf"][1], orig, free),
                                                      steps)
    runs = _runs(list(HUMANOID_ROWS), repeats, lambda label: _try(
        functools.partial(HUMANOID_ROWS[label][1], orig, free), steps, probe), "humanoid")
    for label, rs in runs.items():
        row = {"modelling": HUMANOID_ROWS[label][0], **_summary(rs)}
        good = [r for r in rs if "steps_per_s" in r]
        if good:
            last = good[-1]["samples"]
            row.update(lowest_start=last[0]["lowest"], lowest_min=min(s["lowest"] for s in last),
                       lowest_end=last[-1]["lowest"], speed_end=last[-1]["speed"])
            row["at_rest_on_ground"] = _at_rest(row["speed_end"], row["lowest_end"])
            row["later"] = _settle(functools.partial(HUMANOID_ROWS[label][1], orig, free), probe)
        entry["rows"][label] = row
    _ratios(entry["rows"], "mujoco/mjcf")
    return entry


def _at_rest(speed: float, lowest: float) -> bool:
    return bool(speed < REST_SPEED and abs(lowest) <= GROUND_TOLERANCE)


def _settle(build: Callable[[], Sim], probe: Callable[[Sim], dict[str, float]]) -> dict[str, Any]:
    """An untimed run of ``HUMANOID_SETTLE_SECONDS``: the lowest point and the largest link speed at its end."""
    try:
        sim = build()
    except Exception as exc:
        return {"error": f"{type(exc).__name__}: {exc}"[:300]}
    try:
        steps = round(HUMANOID_SETTLE_SECONDS / DT)
        for _ in range(steps):
            sim.step()
        got = probe(sim)
        return {"seconds": steps * DT, "lowest_end": got["lowest"], "speed_end": got["speed"],
                "at_rest_on_ground": _at_rest(got["speed"], got["lowest"])}
    except Exception as exc:
        return {"error": f"{type(exc).__name__}: {exc}"[:300]}
    finally:
        sim.close()


def measure(quick: bool) -> dict[str, Any]:
    """Every scene (``REPEATS`` interleaved runs; ``--quick``: 1 s simulated, 1 run); JSON-ready."""
    repeats = 1 if quick else REPEATS
    seconds = 1.0 if quick else None
    out: dict[str, Any] = {"scenes": {}}
    with tempfile.TemporaryDirectory(prefix="tumble-bench-robots-") as tmp:
        folder = Path(tmp)
        for name, links in (("pendulum", 10), ("chain50", 50)):
            scene = ChainScene(name, links, "hinge", height=1.0, ground=False, seconds=seconds or CHAIN_SECONDS)
            out["scenes"][name] = measure_chain(scene, scene.steps, repeats, folder)
        out["scenes"]["scaling"] = measure_scaling(seconds or SCALING_SECONDS, repeats)
        out["scenes"]["humanoid"] = measure_humanoid(round((seconds or HUMANOID_SECONDS) / DT), repeats, folder)
    return out


# ---------------------------------------------------------------------------------------------------------
# report


def _sps(row: dict[str, Any]) -> str:
    return f"{row['steps_per_s']:,.0f}" + (" (partial)" if row.get("partial") else "")


def _failed(row: dict[str, Any]) -> str:
    if "skipped" in row:
        return f"skipped: {row['skipped']}"
    return f"failed: {row.get('error', '?')}"


def _pct(x: float) -> str:
    return f"{100 * x:+.3g} %" if math.isfinite(x) else "NaN"


def _compile_line(comp: dict[str, dict[str, Any]]) -> str:
    parts = []
    for label, c in comp.items():
        if "build_s" in c:
            parts.append(f"{label}: build {c['build_s']:.2f} s, first step {c['first_step_s']:.2f} s, its other "
                         f"{c['steps'] - 1} steps {c['rest_s']:.2f} s")
        else:
            parts.append(f"{label}: {_failed(c)}")
    return ("tumble's one-time cost in this process, not in the figures above: a first, untimed run of the scene "
            "(its build; its first step: Numba compile, or loading the kernels from the on-disk cache when that is "
            "still valid; its other steps, with the kernels first used later, e.g. at the first contact): "
            + "; ".join(parts) + ".")


def _later(later: dict[str, Any]) -> str:
    if "error" in later:
        return f"failed: {later['error']}"
    return (f"{later['lowest_end']:.4f}, {later['speed_end']:.3g}, "
            f"{'yes' if later['at_rest_on_ground'] else 'no'}")


def _blowup(row: dict[str, Any]) -> str:
    return f"{row['blowup_s']:.3g}" if row.get("blowup_s") is not None else "—"


def render(results: dict[str, Any]) -> str:
    """The Markdown report of ``results`` (what :func:`measure` returned, plus ``meta``)."""
    meta = results["meta"]
    scenes = results["scenes"]
    load = meta.get("load_average", {})
    lines = ["# Robots (articulations in reduced coordinates): tumble beside MuJoCo and PyBullet", "",
             f"Generated by `python -m bench.robots{' --quick' if meta['quick'] else ''}` on {meta['date']} in "
             f"{meta['wall_s']:.0f} s. Machine: {meta['cpu']}, {meta['cores']} cores; Numba threads "
             f"{meta['numba_threads']}; 1-minute load average {load.get('start', math.nan):.2f} at the start, "
             f"{load.get('end', math.nan):.2f} at the end (other work on this shared machine).", "",
             "Versions: " + ", ".join(f"{k} {v}" for k, v in meta["versions"].items()) + ".", "",
             "Scenes, modelling and how each figure is measured: the docstring of `bench/robots.py`. Chain link: "
             "box 0.1 × 0.04 × 0.04 m, 0.1 kg, hinged about y at its end faces; dt 1/240 s for every engine and "
             f"scene; gravity 9.81 m/s². steps/s: median of {meta['repeats']} timed runs (interleaved across the "
             f"rows, fresh model each, after {WARMUP} untimed warm-up steps); ratio: to MuJoCo's natural model "
             "(`mujoco/tree`; humanoid: `mujoco/mjcf`) in this same run. Energy: from the links' COM states the "
             "same way for every engine, in % of the chain's energy scale Σ m g (i + ½) L. Joint error: the "
             f"largest gap between a link's end point and the next link's start point, every {SAMPLE_EVERY} steps. "
             "Blew up: the first sample with a non-finite state (NaN/inf) [s]; the energy and joint figures are "
             "then those before it (MuJoCo never goes non-finite: on NaN or huge accelerations it warns "
             "`mjWARN_BADQACC` and resets the state to the initial pose).", ""]
    titles = {"pendulum": "10-link pendulum: hinged to the world at (0, 0, 1) m, released horizontal; no contacts",
              "chain50": "50-link chain: the same with 50 links; no contacts"}
    for name in ("pendulum", "chain50"):
        entry = scenes[name]
        seconds = entry["setup"]["steps"] * entry["setup"]["dt"]
        lines += [f"## {titles[name]}; {seconds:g} s", "",
                  "| engine / modelling | steps/s | × mujoco/tree | median step [µs] | energy E(end) − E(0) | "
                  "max \\|E − E(0)\\| | blew up at [s] | max joint error [m] | engine warnings |",
                  "|---|---|---|---|---|---|---|---|---|"]
        for label, row in entry["rows"].items():
            what = f"{label}: {row['modelling']}"
            if "steps_per_s" not in row:
                lines.append(f"| {what} | {_failed(row)} | | | | | | | |")
                continue
            ratio = f"{row['ratio_to_mujoco']:.3g}" if "ratio_to_mujoco" in row else "—"
            lines.append(f"| {what} | {_sps(row)} | {ratio} | {row['median_step_us']:.3g} | "
                         f"{_pct(row['energy_drift'])} | {_pct(row['energy_max_dev'])} | {_blowup(row)} | "
                         f"{row['max_gap']:.2e} | "
                         f"{', '.join(row['warnings']) or '—'} |")
        own = entry.get("tumble_own_energy", {})
        lines += ["", f"Energy scale {entry['setup']['energy_scale_J']:.4g} J. " + _compile_line(entry["compile"])]
        if "own_J" in own:
            lines.append(f"tumble's own `Robot.kinetic_energy() + potential_energy()` after {own['steps']} steps of "
                         f"tumble/euler: {own['own_J']:.10g} J; from the link states as above: "
                         f"{own['from_links_J']:.10g} J (difference {own['difference_J']:.2e} J).")
        lines.append("")
    sc = scenes["scaling"]
    sizes = sc["setup"]["sizes"]
    lines += [f"## Scaling: hinged chains of {', '.join(map(str, sizes))} links, no contacts; "
              f"{sc['setup']['seconds']:g} s each", "",
              "µs per step: 1 / (median over the runs of steps/s); in brackets the median duration of a single "
              "step (robust to the other work on this machine). Last column: tumble's steps/s ÷ MuJoCo's.", "",
              "| links | " + " | ".join(SCALING_ROWS) + " | tumble/euler × mujoco/tree |",
              "|---|" + "---|" * (len(SCALING_ROWS) + 1)]
    for n in sizes:
        got = {label: sc["rows"][label]["sizes"][n] for label in SCALING_ROWS}
        cells = [f"{1e6 / r['steps_per_s']:.3g} ({r['median_step_us']:.3g})"
                 + (f"; {', '.join(r['warnings'])}" if r["warnings"] else "") if "steps_per_s" in r else _failed(r)
                 for r in got.values()]
        pair = got["tumble/euler"], got["mujoco/tree"]
        ratio = (f"{pair[0]['steps_per_s'] / pair[1]['steps_per_s']:.3g}" if all("steps_per_s" in r for r in pair)
                 else "—")
        lines.append(f"| {n} | " + " | ".join(cells) + f" | {ratio} |")
    lines += ["", "Exponent of the time per step in the number of links (log-log least-squares slope; the target for "
              "tumble: ≤ 1.1 over 10–200), from the µs per step and, in brackets, from the median step:", ""]
    for label in SCALING_ROWS:
        row = sc["rows"][label]
        text = f"- {label}: "
        if "exponent_all" in row:
            text += f"{row['exponent_all']:.3g} ({row['exponent_all_median_step']:.3g}) over 10–200 links"
        if "exponent_tail" in row:
            text += f", {row['exponent_tail']:.3g} ({row['exponent_tail_median_step']:.3g}) over 50–200"
        if label.startswith("pybullet"):
            text += " (over the sizes it runs: ≤ 128 degrees of freedom)"
        lines.append(text + ".")
    lines += ["", _compile_line(sc["compile"]), ""]
    hu = scenes["humanoid"]
    lines += ["## Humanoid (pybullet_data `mjcf/humanoid.xml`, floating base) dropped onto the ground; "
              + (f"{hu['setup']['steps'] * hu['setup']['dt']:g} s at dt 1/240 s for every engine (the file's "
                 "MuJoCo timestep, 0.002 s, replaced)" if "setup" in hu else "not run"), ""]
    if "skipped" in hu and "rows" not in hu:
        lines += [f"Skipped: {hu['skipped']}.", ""]
    else:
        lines += ["| engine / modelling | steps/s | × mujoco/mjcf | median step [µs] | dof (nv) | mass [kg] | lowest "
                  "point: start / lowest over the run / end [m] | largest link speed at the end [m/s] | at rest on "
                  f"the ground | the same at {HUMANOID_SETTLE_SECONDS:g} s (untimed run): lowest point [m], speed "
                  "[m/s], at rest | engine warnings |", "|---|---|---|---|---|---|---|---|---|---|---|"]
        notes: list[str] = []
        for label, row in hu["rows"].items():
            what = f"{label}: {row['modelling']}"
            if "steps_per_s" not in row:
                lines.append(f"| {what} | {_failed(row)} | | | | | | | | | |")
                continue
            info = row["info"]
            notes += [f"{label}: {note}." for note in info.get("notes", [])]
            ratio = f"{row['ratio_to_mujoco']:.3g}" if "ratio_to_mujoco" in row else "—"
            lines.append(f"| {what} | {_sps(row)} | {ratio} | {row['median_step_us']:.3g} | {info.get('nv', '?')} | "
                         f"{info.get('mass', math.nan):.4g} | {row['lowest_start']:.4f} / {row['lowest_min']:.4f} / "
                         f"{row['lowest_end']:.4f} | {row['speed_end']:.3g} | "
                         f"{'yes' if row['at_rest_on_ground'] else 'no'} | {_later(row['later'])} | "
                         f"{', '.join(row['warnings']) or '—'} |")
        lines += ["", f"At rest on the ground: largest link COM speed < {REST_SPEED:g} m/s and the lowest point "
                  f"within ±{GROUND_TOLERANCE:g} m of the ground at the end. PyBullet's `loadMJCF` places this file's "
                  "shapes differently from MuJoCo: at the start its feet are 0.19 m above the ground (MuJoCo: "
                  "0.115 m) and its other links' lowest points 0.12 m higher than MuJoCo's (its `getClosestPoints` "
                  "per link), so its figures are of a somewhat different robot. "
                  + _compile_line(hu["compile"]), "", *notes, *([""] if notes else [])]
    lines += ["Every model here is in reduced coordinates: the joints hold by construction, so the joint error "
              "is rounding, not a solver's residual. A row marked skipped could not run in this checkout (the "
              "reason is given); failed: the engine raised (message given, traceback in the JSON).", ""]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    return side_by_side_main("robots", __doc__, measure, render, REPEATS, argv)


if __name__ == "__main__":
    raise SystemExit(main())
