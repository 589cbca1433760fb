"""Golden scenes: short runs that together reach every way tumble advances time.

They guard restructurings of the engine (issue "one house"): ``make_golden.py`` records each scene's
trajectory once, before a change, into ``golden.npz``; ``test_golden.py`` runs them again and asserts the
same bits. A change that reorders floating-point operations on purpose re-records them, with the reason
and the size of the difference in its commit.

Built through the public API only (API.md, docs/), so that the scenes outlive any change inside the
engine. Together they cover: both methods (time-stepping, event-driven with sequential and simultaneous
impacts), every integrator (splitting, symplectic_euler, implicit_gyro, euler, rk4, adaptive,
implicit_euler, trapezoidal, bridson_marino), every velocity solver (pgs, apgd, cg, lemke), every friction
model (cone, pyramid, box, none), both corrections (split, soft), every shape family (sphere, box, capsule,
cylinder, ellipsoid, convex hull, compound, ground, fixed bodies), the parallel free-motion kernel, joints of
every kind with limits, motors and softness under both joint solvers, springs of every kind, attachments
(a body and a point mass), force callbacks and impulses, and sleeping with a wake-up.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

import tumble as tb

DT = 1.0 / 240.0


def _rng(seed: int) -> np.random.Generator:
    return np.random.default_rng(seed)


def _rock(rng: np.random.Generator, size: float) -> tb.ConvexHull:
    return tb.ConvexHull(rng.normal(size=(14, 3)) * size)


def _quat(rng: np.random.Generator) -> np.ndarray:
    q = rng.normal(size=4)
    return q / np.linalg.norm(q)


# --------------------------------------------------------------------------------------------- time-stepping
def stack_sleep() -> tb.World:
    """Five boxes stacked on the ground (all defaults): the stack falls asleep after 0.5 s quiet, and a ball
    dropped from 5.5 m wakes it at about 1 s."""
    w = tb.World()
    w.add_ground(friction=0.6)
    for k in range(5):
        w.add_body(tb.Box(0.4, 0.4, 0.4), mass=1.0, position=(0.0, 0.0, 0.2 + 0.4 * k))
    w.add_body(tb.Sphere(0.1), mass=0.5, position=(0.05, 0.02, 7.0), restitution=0.3)
    return w


def mixed_pile() -> tb.World:
    """Every shape family falling onto the ground and a fixed block: sphere, box, capsule, cylinder,
    ellipsoid, convex hull, a compound; mixed friction and restitution."""
    rng = _rng(7)
    w = tb.World()
    w.add_ground(friction=0.5, restitution=0.1)
    w.add_body(tb.Box(0.6, 0.6, 0.3), position=(0.4, 0.0, 0.15), fixed=True, friction=0.4)
    shapes = [tb.Sphere(0.12), tb.Box(0.2, 0.3, 0.15), tb.Capsule(0.08, 0.25), tb.Cylinder(0.1, 0.2),
              tb.Ellipsoid(0.15, 0.1, 0.08), _rock(rng, 0.1),
              [(tb.Box(0.3, 0.08, 0.08), (0.0, 0.0, 0.0)), (tb.Sphere(0.08), (0.15, 0.0, 0.0))],
              tb.Sphere(0.09), tb.Capsule(0.06, 0.2), _rock(rng, 0.08)]
    for k, shape in enumerate(shapes):
        position = (0.25 * (k % 4) - 0.3, 0.2 * (k // 4) - 0.2, 0.5 + 0.3 * k)
        w.add_body(shape, density=600.0 + 50.0 * k, position=position, orientation=_quat(rng),
                   velocity=rng.normal(size=3) * 0.3, angular_velocity=rng.normal(size=3),
                   friction=0.3 + 0.05 * k, restitution=0.05 * (k % 3))
    return w


def box_pile() -> tb.World:
    """125 boxes dropped from a 5×5×5 grid in random orientations into a pen of four walls (S7-125's kind of
    scene, pgs, split correction, sleep): broadphase coherence and face manifolds."""
    rng = _rng(11)
    w = tb.World()
    w.add_ground(friction=0.5)
    for sx, sy, lx, ly in ((1, 0, 0.1, 1.6), (-1, 0, 0.1, 1.6), (0, 1, 1.6, 0.1), (0, -1, 1.6, 0.1)):
        w.add_body(tb.Box(lx, ly, 1.0), position=(0.75 * sx, 0.75 * sy, 0.5), fixed=True)
    for i in range(5):
        for j in range(5):
            for k in range(5):
                w.add_body(tb.Box(0.2, 0.2, 0.2), density=1000.0, orientation=_quat(rng),
                           position=(0.3 * i - 0.6, 0.3 * j - 0.6, 0.3 + 0.3 * k))
    return w


def free_parallel() -> tb.World:
    """300 free boxes tumbling without gravity (above the parallel kernels' threshold of 256 bodies)."""
    rng = _rng(3)
    w = tb.World(gravity=(0.0, 0.0, 0.0))
    for k in range(300):
        omega = rng.normal(size=3)
        w.add_body(tb.Box(0.2, 0.4, 0.8), density=1000.0, position=(2.0 * (k % 17), 2.0 * (k // 17), 0.0),
                   orientation=_quat(rng), angular_velocity=5.0 * omega / np.linalg.norm(omega),
                   velocity=rng.normal(size=3))
    return w


def _free_few(integrator: str) -> Callable[[], tb.World]:
    def build() -> tb.World:
        rng = _rng(5)
        w = tb.World(integrator=integrator)
        for k in range(6):
            w.add_body(tb.Box(0.1 + 0.05 * k, 0.3, 0.5), density=800.0, position=(float(k), 0.0, 5.0),
                       orientation=_quat(rng), angular_velocity=rng.normal(size=3) * 4.0,
                       velocity=rng.normal(size=3))
        return w
    build.__doc__ = f"Six free bodies under gravity, integrator {integrator!r}."
    return build


def _contact_small(integrator: str = "splitting", **options) -> tb.World:
    """A ball bouncing, a box sliding, a capsule tipping and a three-box pyramid, on the ground."""
    w = tb.World(integrator=integrator, **options)
    w.add_ground(friction=0.4, restitution=0.2)
    w.add_body(tb.Sphere(0.1), mass=1.0, position=(0.0, 0.0, 0.6), restitution=0.6)
    w.add_body(tb.Box(0.2, 0.2, 0.2), mass=1.0, position=(1.0, 0.0, 0.1), velocity=(1.5, 0.0, 0.0))
    w.add_body(tb.Capsule(0.05, 0.3), mass=0.5, position=(-1.0, 0.0, 0.3),
               orientation=(np.cos(0.2), np.sin(0.2), 0.0, 0.0))
    for x, z in ((-0.11, 0.1), (0.11, 0.1), (0.0, 0.3)):
        w.add_body(tb.Box(0.2, 0.2, 0.2), mass=0.8, position=(x, 1.0, z))
    return w


def _ode(integrator: str) -> Callable[[], tb.World]:
    def build() -> tb.World:
        return _contact_small(integrator)
    build.__doc__ = f"The small contact scene with the ODE integrator {integrator!r} (contacts as a kick)."
    return build


def _solver(**options) -> Callable[[], tb.World]:
    def build() -> tb.World:
        return _contact_small(**options)
    build.__doc__ = f"The small contact scene with {options}."
    return build


# --------------------------------------------------------------------------------------------------- joints
def _chain(integrator: str = "splitting", soft: bool = True, **options) -> tb.World:
    """A hinge with limits and a motor, a slider with limits, a ball joint with roll-pitch-yaw limits (and
    softness when ``soft``), a fixed joint, hung from the world, swinging onto the ground. (The soft ball
    joint, 1e5 N/m on 0.2 kg, is beyond rk4's stability at this step: ω h = 2.9.)"""
    w = tb.World(integrator=integrator, **options)
    w.add_ground()
    a = w.add_body(tb.Box(0.4, 0.05, 0.05), mass=0.5, position=(0.2, 0.0, 1.0))
    w.add_joint(tb.HingeJoint(a, None, anchor=(0.0, 0.0, 1.0), axis=(0.0, 1.0, 0.0), limits=(-1.0, 1.2),
                              motor=(0.5, 2.0)))
    b = w.add_body(tb.Box(0.3, 0.05, 0.05), mass=0.3, position=(0.55, 0.0, 1.0))
    w.add_joint(tb.SliderJoint(a, b, anchor=(0.4, 0.0, 1.0), axis=(1.0, 0.0, 0.0), limits=(-0.05, 0.1)))
    c = w.add_body(tb.Box(0.05, 0.05, 0.3), mass=0.2, position=(0.7, 0.0, 0.85))
    w.add_joint(tb.BallJoint(b, c, anchor=(0.7, 0.0, 1.0), rpy_limits=((-0.5, 0.5), (-0.7, 0.7), None),
                             compliance=1e-5 if soft else 0.0, damping=0.01 if soft else 0.0))
    d = w.add_body(tb.Sphere(0.05), mass=0.2, position=(0.7, 0.0, 0.65))
    w.add_joint(tb.FixedJoint(c, d))
    return w


def _joints(**options) -> Callable[[], tb.World]:
    def build() -> tb.World:
        return _chain(**options)
    build.__doc__ = f"The joint chain with {options or 'the defaults'}."
    return build


# -------------------------------------------------------------------------------------------------- springs
def _springy(integrator: str, ground: bool) -> tb.World:
    """An axial spring to the world, a multi-point spring over three bodies, a frame spring between two."""
    w = tb.World(integrator=integrator)
    if ground:
        w.add_ground()
    a = w.add_body(tb.Box(0.2, 0.2, 0.2), mass=1.0, position=(0.0, 0.0, 1.0))
    b = w.add_body(tb.Sphere(0.1), mass=0.5, position=(0.6, 0.0, 0.9), angular_velocity=(0.0, 1.0, 0.0))
    c = w.add_body(tb.Capsule(0.05, 0.2), mass=0.4, position=(1.2, 0.1, 0.8))
    w.add_spring(tb.AxialSpring(a, None, (0.0, 0.0, 1.1), (0.0, 0.0, 1.6), 400.0, damping=2.0))
    w.add_spring(tb.MultiPointSpring([a, b, c], [(0.1, 0.0, 1.0), (0.6, 0.0, 0.95), (1.2, 0.1, 0.9)], 200.0,
                                     damping=1.0, rest_length=1.0))
    w.add_spring(tb.FrameSpring(b, c, (0.9, 0.05, 0.85), 300.0, damping=1.5, rotational_stiffness=2.0,
                                rotational_damping=0.05))
    return w


def _springs(integrator: str, ground: bool = False) -> Callable[[], tb.World]:
    def build() -> tb.World:
        return _springy(integrator, ground)
    build.__doc__ = f"Springs of every kind, integrator {integrator!r}, {'with' if ground else 'without'} ground."
    return build


# -------------------------------------------------------------------------------------- attachments, forces
def attachments() -> tb.World:
    """A box attached to another, a point mass on a third body, falling onto the ground and tumbling."""
    w = tb.World()
    w.add_ground(friction=0.5)
    master = w.add_body(tb.Box(0.3, 0.2, 0.2), mass=1.0, position=(0.0, 0.0, 0.8),
                        angular_velocity=(0.5, 1.0, 0.0))
    part = w.add_body(tb.Box(0.1, 0.1, 0.3), mass=0.4, position=(0.2, 0.0, 0.9))
    w.attach(part, master)
    carrier = w.add_body(tb.Cylinder(0.1, 0.3), mass=0.7, position=(1.0, 0.0, 0.6), velocity=(0.0, 0.5, 0.0))
    w.attach_point_mass(carrier, point=(1.1, 0.0, 0.7), mass=0.3)
    return w


def forces() -> tb.World:
    """A force callback pushing a box sideways and twisting a sphere every step, and an impulse at the start."""
    w = tb.World()
    w.add_ground(friction=0.3)
    box = w.add_body(tb.Box(0.2, 0.2, 0.2), mass=1.0, position=(0.0, 0.0, 0.1), name="box")
    ball = w.add_body(tb.Sphere(0.1), mass=1.0, position=(1.0, 0.0, 0.1), name="ball")

    def push(world: tb.World, t: float) -> None:
        world.body("box").apply_force((4.0 * np.sin(5.0 * t), 1.0, 0.0), point=world.body("box").position
                                      + np.array([0.0, 0.1, 0.1]))
        world.body("ball").apply_torque((0.0, 0.0, 0.3))

    w.add_force(push)
    ball.apply_impulse((0.5, 0.2, 0.0), point=ball.position + np.array([0.0, 0.0, 0.05]))
    box.apply_impulse((0.0, 0.0, 1.0))
    return w


# ---------------------------------------------------------------------------------------------------- event
def _event(impacts: str, joints: bool = False) -> Callable[[], tb.World]:
    def build() -> tb.World:
        w = tb.World(method="event", event_impacts=impacts)
        w.add_ground(friction=0.3, restitution=0.5)
        w.add_body(tb.Sphere(0.1), mass=1.0, position=(0.0, 0.0, 0.5), restitution=0.5)
        w.add_body(tb.Box(0.2, 0.2, 0.2), mass=1.0, position=(0.5, 0.0, 0.15),
                   orientation=(np.cos(0.05), np.sin(0.05), 0.0, 0.0), velocity=(0.3, 0.0, 0.0))
        if joints:
            p = w.add_body(tb.Sphere(0.05), mass=0.5, position=(1.3, 0.0, 1.0))
            w.add_joint(tb.BallJoint(p, None, anchor=(1.0, 0.0, 1.0)))
        return w
    build.__doc__ = f"Event-driven: a bouncing ball and a tipping box, {impacts} impacts" + (
        ", and a pendulum on a ball joint." if joints else ".")
    return build


SCENES: dict[str, tuple[Callable[[], tb.World], float, float]] = {
    # name: (builder, duration [s], dt [s])
    "stack_sleep": (stack_sleep, 1.5, DT),
    "mixed_pile": (mixed_pile, 1.0, DT),
    "box_pile": (box_pile, 0.5, DT),
    "free_parallel": (free_parallel, 0.1, 1e-3),
    "free_symplectic_euler": (_free_few("symplectic_euler"), 0.5, 1e-3),
    "free_implicit_gyro": (_free_few("implicit_gyro"), 0.5, 1e-3),
    "ode_euler": (_ode("euler"), 0.5, DT),
    "ode_rk4": (_ode("rk4"), 0.5, DT),
    "ode_adaptive": (_ode("adaptive"), 0.5, DT),
    "solver_apgd": (_solver(solver="apgd"), 0.5, DT),
    "solver_cg": (_solver(solver="cg", friction="none"), 0.5, DT),
    "solver_lemke": (_solver(solver="lemke", friction="pyramid", friction_directions=4), 0.5, DT),
    "friction_box_soft": (_solver(friction="box", correction="soft", sleep=False), 0.5, DT),
    "friction_pyramid_symplectic": (_solver(friction="pyramid", integrator="symplectic_euler", substeps=2), 0.5, DT),
    "joints_direct": (_joints(), 1.0, DT),
    "joints_pgs": (_joints(joint_solver="pgs"), 1.0, DT),
    "joints_rk4": (_joints(integrator="rk4", soft=False), 0.5, DT),
    "springs_implicit_euler": (_springs("implicit_euler"), 0.5, DT),
    "springs_trapezoidal": (_springs("trapezoidal"), 0.5, DT),
    "springs_bridson_marino": (_springs("bridson_marino"), 0.5, DT),
    "springs_splitting_ground": (_springs("splitting", ground=True), 0.5, DT),
    "springs_implicit_ground": (_springs("implicit_euler", ground=True), 0.5, DT),
    "attachments": (attachments, 1.0, DT),
    "forces": (forces, 0.5, DT),
    "event_sequential": (_event("sequential"), 0.3, 1.0 / 120.0),
    "event_simultaneous": (_event("simultaneous"), 0.3, 1.0 / 120.0),
    "event_joints": (_event("sequential", joints=True), 0.2, 1.0 / 120.0),
}
"""Every golden scene: its builder, how long it runs and its step."""

FRAMES = 4
"""Frames recorded per scene besides the initial state, evenly spaced over the run."""


def record(name: str) -> dict[str, np.ndarray]:
    """Run scene ``name`` and return its trajectory: ``x`` (F, n, 3), ``q`` (F, n, 4), ``v``, ``w`` (F, n, 3)
    at F = FRAMES + 1 evenly spaced steps, ``time`` (F,), and at the end the contacts' points (c, 3) and
    impulses (c, 3) (``world.contacts()``) and each joint's force (m, 3) [N]."""
    build, duration, dt = SCENES[name]
    world = build()
    steps = round(duration / dt)
    marks = set(np.linspace(0, steps, FRAMES + 1).round().astype(int).tolist())
    frames: dict[str, list[np.ndarray]] = {k: [] for k in ("x", "q", "v", "w", "time")}
    for s in range(steps + 1):
        if s in marks:
            state = world.state_arrays()
            for k in ("x", "q", "v", "w"):
                frames[k].append(state[k])
            frames["time"].append(np.array(world.time))
        if s < steps:
            world.step(dt)
    out = {k: np.stack(v) for k, v in frames.items()}
    contacts = world.contacts()
    out["contact_point"] = np.asarray(contacts.point, dtype=float).reshape(-1, 3)
    out["contact_impulse"] = np.asarray(contacts.impulse, dtype=float).reshape(-1, 3)
    out["joint_force"] = np.array([j.force for j in world.joints], dtype=float).reshape(-1, 3)
    return out
