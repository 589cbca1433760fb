"""Loop closures: World joints with a robot link's body on a side (robots/closures.py, docs/robots.md), against
statics in closed form, the same mechanisms in maximal coordinates (the World's own joint solve, an independent
implementation) or as one robot (the articulated-body algorithm), and the refusals."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.spatial.transform import Rotation

import tumble as tb
from tumble.robots import ClosureSpec, GeomSpec, JointSpec, LinkSpec, RobotDescription

G = 9.81
Y = np.array([0.0, 1.0, 0.0])


def rod(name: str, length: float, mass: float = 1.0) -> LinkSpec:
    """A rod along the link's x axis from its frame (a thin box: the link needs a shape to carry a World body)."""
    inertia = np.diag([1e-4, mass * length**2 / 12, mass * length**2 / 12])
    return LinkSpec(name, mass, np.array([length / 2, 0.0, 0.0]), inertia,
                    [GeomSpec(tb.Box(length, 0.02, 0.02), np.array([length / 2, 0.0, 0.0]))])


def rod_end(body: tb.Body, length: float) -> np.ndarray:
    """The far end [m] of a ``rod`` link's body (its COM is mid-length), world frame."""
    return body.position + orientation_of(body) @ np.array([length / 2, 0.0, 0.0])


LENGTHS = (0.3, 0.5, 0.4)


def four_bar(world: tb.World, closure: str = "ball") -> tuple:
    """A planar four-bar in the x–z plane: a robot chain crank–coupler–rocker hinged about y from a fixed base at
    height 1 m, the rocker's far end pinned where it starts by a ``closure`` joint: "ball" or "hinge" to the world,
    "ball-to-fixed" to a fixed World body. Returns (robot, joint)."""
    links = [LinkSpec("base"), *(rod(n, length) for n, length in zip(("crank", "coupler", "rocker"), LENGTHS,
                                                                     strict=True))]
    joints = [JointSpec("j1", "revolute", "base", "crank", np.zeros(3), np.eye(3), Y),
              JointSpec("j2", "revolute", "crank", "coupler", np.array([LENGTHS[0], 0, 0]), np.eye(3), Y),
              JointSpec("j3", "revolute", "coupler", "rocker", np.array([LENGTHS[1], 0, 0]), np.eye(3), Y)]
    robot = world.add_robot(RobotDescription("fourbar", links, joints), position=(0, 0, 1.0))
    robot.q = [0.4, -1.3, -1.5]
    rocker = robot.link("rocker").body
    end = rod_end(rocker, LENGTHS[2])
    if closure == "hinge":
        joint = tb.HingeJoint(rocker, None, end, Y)
    else:   # "ball" to the world, or "ball-to-fixed": to a fixed World body there
        post = world.add_body(tb.Sphere(0.01), position=end, fixed=True, collide=False) if closure != "ball" else None
        joint = tb.BallJoint(rocker, post, end)
    return robot, world.add_joint(joint)


def turn_about_y(R: np.ndarray) -> float:
    """A rod's turn about y from the x axis [rad], in (−π, π], given its orientation R."""
    d = R @ np.array([1.0, 0.0, 0.0])
    return float(np.arctan2(-d[2], d[0]))


def angle_between(a: float, b: float) -> float:
    """|a − b| [rad] wrapped into [0, π]."""
    return abs(float(np.angle(np.exp(1j * (a - b)))))


def free_rod(world: tb.World, length: float, position, orientation) -> tb.Body:
    """A free body shaped and weighing as ``rod``'s link (1 kg), not colliding."""
    return world.add_body(tb.Box(length, 0.02, 0.02), mass=1.0, inertia=np.diag([1e-4, length**2 / 12,
                                                                                 length**2 / 12]),
                          position=position, orientation=orientation, collide=False)


def side_by_side(world: tb.World, twin: tb.World, joint: tb.Joint, angles, tolerance: float) -> float:
    """Step ``world`` and ``twin`` together for 1 s at h = 1/2400 s; every 0.1 s the pair of angles [rad] that
    ``angles()`` gives (one of each world) must agree to ``tolerance``. Returns the closure ``joint``'s largest
    error [m] over the steps."""
    worst = 0.0
    for k in range(2400):
        world.step(1 / 2400)
        twin.step(1 / 2400)
        worst = max(worst, joint.error)
        if (k + 1) % 240 == 0:
            assert angle_between(*angles()) < tolerance, k
    return worst


def orientation_of(body: tb.Body) -> np.ndarray:
    """A body's rotation matrix (3, 3)."""
    return Rotation.from_quat(np.roll(body.orientation, -1)).as_matrix()


@pytest.mark.parametrize("closure", ["ball", "hinge", "ball-to-fixed"])
def test_a_four_bar_moves_as_its_maximal_coordinate_twin(closure):
    """A four-bar closed by a joint from the rocker to the world, released under gravity, against the same
    mechanism built of free bodies and the World's hinge and ball joints (solvers/joint_solve.py: another
    implementation, in other coordinates). At h = 1/2400 s the crank angles agree to 5e-3 rad at every 0.1 s over
    1 s: both schemes are first order, and their difference was measured at 0.021, 2.1e-3 and 5.2e-4 rad at h =
    1/240, 1/2400 and 1/9600 s (it shrinks as h). The closure holds to 1e-11 m at every step (the projection;
    without it the velocity rows alone drifted 1.3 mm in 2 s at 1/240 s). A hinge closure's axis rows, which
    the planar chain already holds, move nothing (``factor_block`` leaves them out), and a ball joint to a fixed
    World body is a ball joint to the world: the same motion."""
    world = tb.World(gravity=(0, 0, -G), sleep=False)
    robot, joint = four_bar(world, closure)
    twin = tb.World(gravity=(0, 0, -G), sleep=False)
    bodies = [free_rod(twin, length, robot.link(n).body.position, robot.link(n).body.orientation)
              for n, length in zip(("crank", "coupler", "rocker"), LENGTHS, strict=True)]
    starts = [rod_end(b, -length) for b, length in zip(bodies, LENGTHS, strict=True)]
    twin.add_joint(tb.HingeJoint(bodies[0], None, starts[0], Y))
    twin.add_joint(tb.HingeJoint(bodies[1], bodies[0], starts[1], Y))
    twin.add_joint(tb.HingeJoint(bodies[2], bodies[1], starts[2], Y))
    twin.add_joint(tb.BallJoint(bodies[2], None, rod_end(bodies[2], LENGTHS[2])))
    assert side_by_side(world, twin, joint, lambda: (robot.q[0], turn_about_y(orientation_of(bodies[0]))),
                        5e-3) < 1e-11
    assert abs(robot.q[0] - 0.4) > 0.3   # it moved


def energy(robot, links) -> float:
    """Kinetic and gravitational energy [J] of a robot whose moving links' bodies are ``links``."""
    return robot.kinetic_energy() + sum(b.mass * G * b.position[2] for b in links)


def test_a_four_bar_keeps_its_energy_to_first_order():
    """The four-bar's energy (kinetic + potential) over 2 s at h = 1/240 s stays within 1 % of its start
    (measured 0.76 %) and within 0.05 % at h = 1/4800 s (measured 0.034 %): first order in h, no drift beyond it.
    SHAKE (robots/step.py ``_shake_closures``) makes the velocity solve aim at the pose the step reaches; without
    it the four-bar lost 5 % in 2 s at 1/240 s."""
    for h, bound in ((1 / 240, 0.01), (1 / 4800, 5e-4)):
        world = tb.World(gravity=(0, 0, -G), sleep=False)
        robot, joint = four_bar(world)
        links = [robot.link(n).body for n in ("crank", "coupler", "rocker")]

        e0 = energy(robot, links)
        worst = 0.0
        for _ in range(round(2.0 / h)):
            world.step(h)
            worst = max(worst, abs(energy(robot, links) - e0))
        assert worst < bound * e0


def test_a_link_pinned_at_its_tip_hangs_on_half_its_weight():
    """Statics: a horizontal rod link (m = 2 kg, L = 0.6 m) hinged at one end to a fixed base and held at the
    other by a ball joint to the world stays still, and the joint carries m g / 2 upward (moments about the hinge,
    which takes no moment about its axis), to 1e-9 N; the rod's angle stays at 0 to 1e-12 rad over 1 s. The
    ball's row along the rod moves nothing (the hinge holds it) and gets no impulse."""
    m, length = 2.0, 0.6
    world = tb.World(gravity=(0, 0, -G))
    links = [LinkSpec("base"), rod("rod", length, m)]
    joints = [JointSpec("hinge", "revolute", "base", "rod", np.zeros(3), np.eye(3), Y)]
    robot = world.add_robot(RobotDescription("arm", links, joints), position=(0, 0, 1.0))
    body = robot.link("rod").body
    joint = world.add_joint(tb.BallJoint(body, None, (length, 0.0, 1.0)))
    for _ in range(240):
        world.step(1 / 240)
        assert abs(robot.q[0]) < 1e-12
    np.testing.assert_allclose(joint.force, [0.0, 0.0, m * G / 2], atol=1e-9)
    # the torque on the rod about the anchor: the ball joint takes none
    np.testing.assert_allclose(joint.torque, 0.0, atol=1e-9)


def test_a_closure_breaks_at_its_break_force():
    """The same pinned rod with break_force below m g / 2 breaks after its first step and the rod swings down
    (its angle about y grows: the tip falls); above it, it holds."""
    m, length = 2.0, 0.6
    for limit, breaks in ((0.9 * m * G / 2, True), (1.1 * m * G / 2, False)):
        world = tb.World(gravity=(0, 0, -G))
        links = [LinkSpec("base"), rod("rod", length, m)]
        joints = [JointSpec("hinge", "revolute", "base", "rod", np.zeros(3), np.eye(3), Y)]
        robot = world.add_robot(RobotDescription("arm", links, joints), position=(0, 0, 1.0))
        joint = world.add_joint(tb.BallJoint(robot.link("rod").body, None, (length, 0.0, 1.0), break_force=limit))
        for _ in range(48):
            world.step(1 / 240)
        assert joint.broken is breaks
        assert bool(robot.q[0] > 0.05) is breaks


def test_a_free_body_hinged_to_a_link_swings_as_a_robot_double_pendulum():
    """A double pendulum, its upper rod a robot link and its lower rod a free body hinged to the link's end, against
    the same double pendulum as one robot (the articulated-body algorithm alone). Released at 0.3 and 0.8 rad, the
    lower rod's angle agrees to 0.015 rad at every 0.1 s over 1 s at h = 1/2400 s: both schemes are first order,
    and the largest difference measured 0.082, 8.3e-3 and 2.1e-3 rad at h = 1/240, 1/2400 and 1/9600 s (the upper
    rod's 0.033, 3.3e-3, 8.3e-4). The closure error stays below 1e-11 m: the free body takes its share of the
    closure's impulse as a load, and of the projection as a move."""
    L1, L2 = 0.4, 0.3
    q0 = (0.3, 0.8)

    def pair(world, free_lower):
        links = [LinkSpec("base"), rod("upper", L1)]
        joints = [JointSpec("j1", "revolute", "base", "upper", np.zeros(3), np.eye(3), Y)]
        if not free_lower:
            links.append(rod("lower", L2))
            joints.append(JointSpec("j2", "revolute", "upper", "lower", np.array([L1, 0, 0]), np.eye(3), Y))
        robot = world.add_robot(RobotDescription("pendulum", links, joints), position=(0, 0, 1.0))
        robot.q = list(q0[:len(joints)])
        if not free_lower:
            return robot, None, None
        upper = robot.link("upper").body
        tip = rod_end(upper, L1)
        turn = Rotation.from_rotvec([0.0, q0[0] + q0[1], 0.0])
        centre = tip + turn.apply([L2 / 2, 0.0, 0.0])
        lower = free_rod(world, L2, centre, np.roll(turn.as_quat(), 1))
        return robot, lower, world.add_joint(tb.HingeJoint(upper, lower, tip, Y))

    mixed = tb.World(gravity=(0, 0, -G), sleep=False)
    robot, lower, joint = pair(mixed, True)
    alone = tb.World(gravity=(0, 0, -G), sleep=False)
    reference, _, _ = pair(alone, False)
    assert side_by_side(mixed, alone, joint, lambda: (turn_about_y(orientation_of(lower)),
                                                      reference.q[0] + reference.q[1]), 0.015) < 1e-11


def test_closures_refuse_what_they_cannot_hold():
    """A closure holds rigid equality rows with the default solver: limits, a motor or a compliance, at creation or
    assigned later, and another solver, are refused with a ValueError naming them, before anything changes."""
    world = tb.World(gravity=(0, 0, -G))
    robot, joint = four_bar(world, "hinge")
    for name, value in (("limits", (-0.5, 0.5)), ("compliance", 1e-6)):
        with pytest.raises(ValueError, match=f"{name}=.*loop closure"):
            setattr(joint, name, value)
    assert joint.limits is None and joint.compliance == 0.0
    rocker = robot.link("rocker").body
    with pytest.raises(ValueError, match="motor=.*loop closure"):
        world.add_joint(tb.HingeJoint(rocker, None, rocker.position, Y, motor=(1.0, 5.0)))
    assert len(world.joints) == 1
    other = tb.World(gravity=(0, 0, -G), solver="apgd")
    with pytest.raises(ValueError, match="solver='apgd'"):
        four_bar(other)
    assert len(other.joints) == 0


def test_a_restored_closure_world_steps_again_bitwise():
    """``world.snapshot`` / ``restore`` bring a closure world back, a broken closure mended included: a four-bar
    whose closure breaks within 20 steps (break_force 0.1 N), restored to a snapshot taken before its first step
    and stepped again, takes bitwise the same q, q̇ and the closure breaks at the same step."""
    world = tb.World(gravity=(0, 0, -G), sleep=False)
    robot, joint = four_bar(world)
    joint.break_force = 0.1
    snap = world.snapshot()
    runs = []
    for _ in range(2):
        world.restore(snap)
        assert not joint.broken
        broke = None
        for k in range(20):
            world.step(1 / 240)
            if broke is None and joint.broken:
                broke = k
        runs.append((robot.q.copy(), robot.qd.copy(), broke))
    assert runs[0][2] is not None and runs[0][2] == runs[1][2]
    for a, b in zip(runs[0][:2], runs[1][:2], strict=True):
        np.testing.assert_array_equal(a, b)


# ---------------------------------------------------------------- closures of a robot's description (MJCF)

def four_bar_mjcf(timestep: float) -> str:
    """A four-bar in MJCF (x–z plane, hinges about y, gravity −z): crank A → B (0.2 m, 70° up) and coupler B → C
    (0.45 m) hang from the world at A, the rocker D → C (0.3 m) from D = (0.5, 0, 0); ``<equality connect>`` pins the
    coupler's end C to the rocker's, nearly rigid in MuJoCo (solref time constant two of its ``timestep``s). The
    coupler's body frame is at its middle, its hinge at B (``pos``), so the anchor is converted to its link frame."""
    A, D, (L1, L2, L3) = np.zeros(3), np.array([0.5, 0.0, 0.0]), (0.2, 0.45, 0.3)
    B = A + L1 * np.array([np.cos(np.radians(70)), 0.0, np.sin(np.radians(70))])
    d = np.linalg.norm(D - B)
    e = (D - B) / d
    along = (L2**2 - L3**2 + d**2) / (2 * d)
    C = B + along * e + np.sqrt(L2**2 - along**2) * np.array([-e[2], 0.0, e[0]])
    assert C[2] > 0.0
    M = (B + C) / 2   # the coupler's body frame, away from its joint (the link frame sits at the joint's anchor)

    def f(v: np.ndarray) -> str:
        return " ".join(f"{x:.17g}" for x in v)

    return f"""<mujoco model="fourbar">
  <option gravity="0 0 -9.81" timestep="{timestep}"/>
  <worldbody>
    <body name="crank" pos="{f(A)}">
      <joint name="a" type="hinge" axis="0 1 0"/>
      <geom type="capsule" fromto="0 0 0 {f(B - A)}" size="0.01" density="2000"/>
      <body name="coupler" pos="{f(M - A)}">
        <joint name="b" type="hinge" axis="0 1 0" pos="{f(B - M)}"/>
        <geom type="capsule" fromto="{f(B - M)} {f(C - M)}" size="0.01" density="2000"/>
      </body>
    </body>
    <body name="rocker" pos="{f(D)}">
      <joint name="d" type="hinge" axis="0 1 0"/>
      <geom type="capsule" fromto="0 0 0 {f(C - D)}" size="0.01" density="2000"/>
    </body>
  </worldbody>
  <contact><exclude body1="coupler" body2="rocker"/><exclude body1="crank" body2="rocker"/></contact>
  <equality><connect name="loop" body1="coupler" body2="rocker" anchor="{f(C - M)}" solref="{2 * timestep} 1"/>
  </equality>
</mujoco>"""


def test_an_mjcf_four_bar_moves_as_mujoco_s_as_both_steps_shrink(tmp_path):
    """An MJCF four-bar whose loop is an ``<equality connect>`` (a ball closure of the robot's description): released
    under gravity its crank swings through ~5.8 rad in 1 s, in MuJoCo and through ``add_mjcf``. The crank angles
    every 0.1 s differ by the two integrators' first-order errors and MuJoCo's soft constraint: 3.6e-3 rad at
    (MuJoCo 2e-4 s, tumble 1/2400 s), 8.9e-4 rad at steps four times smaller (allowed: 5e-3 and 1.5e-3, and the
    fine difference under a third of the coarse). The closure holds to 1e-10 m throughout."""
    mujoco = pytest.importorskip("mujoco")
    gaps = []
    for mj_dt, h in ((2e-4, 1 / 2400), (5e-5, 1 / 9600)):
        path = tmp_path / f"fourbar_{h:.6f}.xml"
        path.write_text(four_bar_mjcf(mj_dt))
        model = mujoco.MjModel.from_xml_path(str(path))
        data = mujoco.MjData(model)
        theirs = []
        for i in range(round(1.0 / mj_dt)):
            mujoco.mj_step(model, data)
            if (i + 1) % round(0.1 / mj_dt) == 0:
                theirs.append(data.qpos[0])
        w = tb.World(gravity=(0, 0, -G))
        robot = w.add_mjcf(path)
        (loop,) = robot.closures
        assert loop.name == "fourbar/loop" and isinstance(loop, tb.BallJoint) and not robot.description.skipped
        ours, error = [], 0.0
        for i in range(round(1.0 / h)):
            w.step(h)
            error = max(error, float(np.linalg.norm(loop.error)))
            if (i + 1) % round(0.1 / h) == 0:
                ours.append(robot.q[0])
        assert ours[-1] > 5.0 and error < 1e-10
        gaps.append(float(np.max(np.abs(np.array(ours) - np.array(theirs)))))
    assert gaps[0] < 5e-3 and gaps[1] < 1.5e-3 and gaps[1] < gaps[0] / 3


WELDED_MJCF = """<mujoco model="welded">
  <worldbody>
    <body name="upper" pos="0 0 1" euler="0 40 0">
      <joint name="shoulder" type="hinge" axis="0 1 0"/>
      <geom type="capsule" fromto="0 0 0 0.3 0 0" size="0.02"/>
      <body name="lower" pos="0.3 0 0" euler="0 -70 0">
        <joint name="elbow" type="hinge" axis="0 1 0"/>
        <geom type="capsule" fromto="0 0 0 0.3 0 0" size="0.02"/>
      </body>
    </body>
    <body name="pin" pos="0.8 0 0.5"><geom type="sphere" size="0.01"/></body>
    <body name="plain" pos="-1 0 0"><joint type="slide" axis="1 0 0"/><geom type="sphere" size="0.05"/></body>
    <body name="ghost" pos="-2 0 0"><joint type="slide" axis="1 0 0"/>
      <geom type="sphere" size="0.05" contype="0" conaffinity="0"/></body>
  </worldbody>
  <equality>
    <weld name="hold" body1="lower"/>
    <weld name="twisted" body1="plain" relpose="0 0 0 0 1 0 0"/>
    <connect name="off" body1="plain" anchor="0 0 0" active="false"/>
    <connect name="unseen" body1="ghost" anchor="0 0 0"/>
    <connect name="upside" body1="world" body2="plain" anchor="-1 0 0.2"/>
    <joint name="couple" joint1="shoulder" joint2="elbow"/>
  </equality>
</mujoco>"""


def test_an_mjcf_weld_holds_its_link_still_and_what_cannot_be_held_is_listed(tmp_path):
    """``<weld body1="lower"/>`` (to the world, at the file's pose) holds a bent two-link arm still under gravity:
    after 1 s both joints are where they started to 1e-9 rad (a rigid weld; MuJoCo's soft one would sag). A connect
    whose body1 is the world holds its body2 there. A weld with a relpose other than the file's pose, an inactive
    connect, a connect of a body without a collision geom and a joint equality are listed in ``skipped`` and not
    added."""
    path = tmp_path / "welded.xml"
    path.write_text(WELDED_MJCF)
    w = tb.World(gravity=(0, 0, -G))
    robot = w.add_mjcf(path)
    assert [j.name for j in robot.closures] == ["welded/hold", "welded/upside"]
    hold, upside = robot.closures
    assert isinstance(hold, tb.FixedJoint) and isinstance(upside, tb.BallJoint)
    # body1 = world: the closure's first side is the body, the anchor where the file puts it in the world
    assert upside.a is robot.link("plain").body and upside.b is None
    np.testing.assert_allclose(upside.anchor, [-1.0, 0.0, 0.2], atol=1e-12)
    skipped = "\n".join(robot.description.skipped)
    for phrase in ("equality 'twisted': a weld whose relpose", "equality 'off': inactive",
                   "equality 'unseen': body 'ghost' has no collision geom", "equality 'couple': a joint constraint"):
        assert phrase in skipped
    q0 = robot.q.copy()
    for _ in range(240):
        w.step(1 / 240)
    np.testing.assert_allclose(robot.q[:2], q0[:2], atol=1e-9)


def test_a_robot_file_s_closures_are_saved_with_its_file_not_twice(tmp_path):
    """``save_scene`` leaves a robot file's closures to the file (``add_mjcf`` makes them again): the loaded world
    has the one closure, and steps as the saved one did (bitwise)."""
    path = tmp_path / "fourbar.xml"
    path.write_text(four_bar_mjcf(2e-4))
    w = tb.World(gravity=(0, 0, -G))
    w.add_mjcf(path)
    scene = w.save_scene(tmp_path / "scene.toml")
    loaded = tb.load_scene(scene)
    assert [j.name for j in loaded.joints] == ["fourbar/loop"] and loaded.robots[0].closures == loaded.joints
    for world in (w, loaded):
        for _ in range(48):
            world.step(1 / 240)
    np.testing.assert_array_equal(loaded.robots[0].q, w.robots[0].q)


def test_a_description_s_bad_closure_is_refused_before_the_world_changes():
    """A closure naming an unknown link, a link without a shape, one link twice or an unknown type, or a world whose
    solver cannot hold closures: ValueError naming the closure; nothing added."""
    def described(*closures: ClosureSpec) -> RobotDescription:
        links = [LinkSpec("base"), rod("crank", 0.3), LinkSpec("bare", 1.0, np.zeros(3), np.eye(3) * 1e-3)]
        joints = [JointSpec("j1", "revolute", "base", "crank", np.zeros(3), np.eye(3), Y),
                  JointSpec("j2", "revolute", "crank", "bare", np.array([0.3, 0, 0]), np.eye(3), Y)]
        return RobotDescription("arm", links, joints, closures=list(closures))

    cases = [(ClosureSpec("c", "ball", "nope", None), "names link 'nope'"),
             (ClosureSpec("c", "ball", "bare", None), "'bare', which has no collision shape"),
             (ClosureSpec("c", "ball", "crank", "crank"), "joins link 'crank' to itself"),
             (ClosureSpec("c", "hinge", "crank", None), "has type 'hinge'")]
    for spec, phrase in cases:
        w = tb.World()
        with pytest.raises(ValueError, match=f"closure 'c' {phrase}" if "names" in phrase or "type" in phrase
                           or "joins" in phrase else phrase):
            w.add_robot(described(spec))
        assert len(w.robots) == 0 and w.model.body.count == 0 and len(w.joints) == 0
    w = tb.World(solver="apgd")
    with pytest.raises(ValueError, match="only the default solver 'pgs' holds"):
        w.add_robot(described(ClosureSpec("c", "ball", "crank", None, np.array([0.3, 0, 0]))))
    assert len(w.robots) == 0 and w.model.body.count == 0
