"""Robots in trajectories, scene files and `tumble run`: the recorded joint state equals the robots' own q and
q̇ frame by frame; trajectory files keep it (and older files without it still load); [[robots]] tables load
robot files, are checked with located errors, and save_scene writes them back so that loading again gives q,
q̇ and the link bodies' states bitwise."""

from __future__ import annotations

import json
import os
import zipfile
from pathlib import Path

import numpy as np
import pytest

import tumble as tb
from tumble.user import cli
from tumble.user.trajectory import Recorder

DT = 1.0 / 240.0

PENDULUM_URDF = """\
<?xml version="1.0"?>
<robot name="pendulum">
  <link name="base">
    <inertial><mass value="1.0"/><inertia ixx="0.01" iyy="0.01" izz="0.01" ixy="0" ixz="0" iyz="0"/></inertial>
    <collision><geometry><box size="0.2 0.2 0.2"/></geometry></collision>
  </link>
  <link name="arm">
    <inertial>
      <origin xyz="0 0 -0.25"/><mass value="0.5"/>
      <inertia ixx="0.01" iyy="0.01" izz="0.002" ixy="0" ixz="0" iyz="0"/>
    </inertial>
    <collision><origin xyz="0 0 -0.25"/><geometry><box size="0.05 0.05 0.5"/></geometry></collision>
  </link>
  <joint name="hinge" type="revolute">
    <parent link="base"/><child link="arm"/><origin xyz="0 0 -0.15"/><axis xyz="0 1 0"/>
    <limit lower="-3" upper="3" effort="100" velocity="10"/>
  </joint>
</robot>
"""

PENDULUM_MJCF = """\
<mujoco model="mjpendulum">
  <worldbody>
    <body name="base" pos="0 0 1">
      <geom type="box" size="0.1 0.1 0.1" mass="1"/>
      <body name="arm" pos="0 0 -0.15">
        <joint name="swing" type="hinge" axis="0 1 0"/>
        <geom type="capsule" fromto="0 0 0 0 0 -0.4" size="0.03" mass="0.5"/>
      </body>
    </body>
  </worldbody>
</mujoco>
"""


@pytest.fixture
def urdf(tmp_path: Path) -> Path:
    """Two boxes and a revolute joint about y."""
    path = tmp_path / "robots" / "pendulum.urdf"
    path.parent.mkdir()
    path.write_text(PENDULUM_URDF)
    return path


def _kuka() -> Path:
    pybullet_data = pytest.importorskip("pybullet_data")
    pytest.importorskip("trimesh")
    return Path(pybullet_data.getDataPath()) / "kuka_iiwa" / "model.urdf"


def _robot_world(urdf: Path, kuka: Path | None) -> tb.World:
    """Ground, a ball, the pendulum on a fixed base, a floating pendulum dropped onto the ground, and the
    KUKA arm (when given) posed away from zero."""
    world = tb.World()
    world.add_ground()
    world.add_body(tb.Sphere(0.1), position=(2.0, 0.0, 0.5), name="ball")
    arm = world.add_urdf(urdf, position=(0.0, 0.0, 1.5), orientation=(0.9, 0.1, 0.2, 0.3))
    arm.q = [0.7]
    arm.qd = [-1.0]
    free = world.add_urdf(urdf, position=(1.0, 0.0, 0.8), fixed_base=False, name="floater")
    free.qd = [0.0, 0.0, 0.0, 0.3, -0.2, 0.1, 2.0]
    if kuka is not None:
        iiwa = world.add_urdf(kuka, position=(-1.0, 0.0, 0.0), name="iiwa")
        iiwa.q = [0.3, 0.5, 0.0, -1.2, 0.0, 0.8, 0.0]
    return world


def _bodies(world: tb.World) -> dict[str, tuple[np.ndarray, ...]]:
    return {b.name: (b.position, b.orientation, b.velocity, b.angular_velocity) for b in world.bodies}


# ====================================================================== trajectories
def test_recorded_joint_state_equals_the_robots_at_every_frame(urdf):
    """simulate() and a twin world stepped by hand, reading robot.q and robot.qd after the same steps: the
    recorded arrays are those values bitwise, all robots concatenated in the order added."""
    kuka = _kuka()
    steps, every = 30, 4
    traj = _robot_world(urdf, kuka).simulate(steps * DT, DT, record_every=every)
    twin = _robot_world(urdf, kuka)
    expected_q, expected_qd, link_x = [], [], []
    for s in range(steps + 1):
        if s:
            twin.step(DT)
        if s % every == 0 or s == steps:
            expected_q.append(np.concatenate([r.q for r in twin.robots]))
            expected_qd.append(np.concatenate([r.qd for r in twin.robots]))
            link_x.append(twin.robot("iiwa").link("lbr_iiwa_link_7").body.position)
    nq = sum(r.nq for r in twin.robots)
    nv = sum(r.nv for r in twin.robots)
    assert (nq, nv) == (1 + 8 + 7, 1 + 7 + 7)
    assert traj.joint_positions.shape == (len(traj), nq) and traj.joint_velocities.shape == (len(traj), nv)
    np.testing.assert_array_equal(traj.joint_positions, np.array(expected_q))
    np.testing.assert_array_equal(traj.joint_velocities, np.array(expected_qd))
    assert list(traj.joint_names) == (
        ["pendulum/hinge"] + [f"floater/base_{c}" for c in ("x", "y", "z", "qw", "qx", "qy", "qz")]
        + ["floater/hinge"] + [f"iiwa/lbr_iiwa_joint_{k}" for k in range(1, 8)])
    # the link bodies are bodies of the trajectory like any other
    k = list(traj.names).index("iiwa/lbr_iiwa_link_7")
    np.testing.assert_array_equal(traj.positions[:, k], np.array(link_x))


def test_a_ball_joint_is_named_by_its_quaternion(tmp_path):
    desc_urdf = PENDULUM_URDF.replace('type="revolute"', 'type="spherical"')
    path = tmp_path / "ball.urdf"
    path.write_text(desc_urdf)
    world = tb.World()
    try:
        robot = world.add_urdf(path)
    except ValueError as exc:      # a reader without spherical joints: name them from a description instead
        pytest.skip(f"the URDF reader refuses a spherical joint: {exc}")
    assert robot.nq == 4
    traj = world.simulate(2 * DT, DT)
    assert list(traj.joint_names) == [f"pendulum/hinge_{c}" for c in ("qw", "qx", "qy", "qz")]
    np.testing.assert_array_equal(traj.joint_positions[-1], robot.q)


def test_a_world_without_robots_records_empty_joint_arrays():
    world = tb.World()
    world.add_body(tb.Sphere(0.1))
    traj = world.simulate(3 * DT, DT)
    assert traj.joint_positions.shape == (4, 0) and traj.joint_velocities.shape == (4, 0)
    assert traj.joint_names.shape == (0,)


def test_the_recorder_copies_into_its_buffers(urdf):
    """record() writes into the arrays allocated up front (no per-frame array), and reads the forest's state
    afresh each frame."""
    world = _robot_world(urdf, None)
    recorder = Recorder(world, 5)
    buffers = (recorder._traj.joint_positions, recorder._traj.joint_velocities)
    recorder.record(after_step=False)
    for _ in range(4):
        world.step(DT)
        recorder.record(after_step=True)
    assert (recorder._traj.joint_positions, recorder._traj.joint_velocities) == buffers
    traj = recorder.trajectory()
    assert np.shares_memory(traj.joint_positions, buffers[0])
    np.testing.assert_array_equal(traj.joint_positions[-1], np.concatenate([r.q for r in world.robots]))


def test_joint_arrays_survive_save_load_and_frames(urdf, tmp_path):
    traj = _robot_world(urdf, None).simulate(10 * DT, DT, record_every=3)
    back = tb.Trajectory.load(traj.save(tmp_path / "t.npz"))
    for name in ("joint_positions", "joint_velocities", "joint_names", "positions", "names"):
        np.testing.assert_array_equal(getattr(back, name), getattr(traj, name), err_msg=name)
    head = back.frames(2)
    np.testing.assert_array_equal(head.joint_positions, traj.joint_positions[:2])
    np.testing.assert_array_equal(head.joint_velocities, traj.joint_velocities[:2])
    np.testing.assert_array_equal(head.joint_names, traj.joint_names)


def test_a_file_without_joint_arrays_loads_with_none(urdf, tmp_path):
    """A trajectory written before robots (no joint members) loads with (T, 0) arrays; damaged joint arrays
    are refused naming the array."""
    path = _robot_world(urdf, None).simulate(4 * DT, DT).save(tmp_path / "t.npz")
    old = tmp_path / "old.npz"
    with zipfile.ZipFile(path) as src, zipfile.ZipFile(old, "w", compression=zipfile.ZIP_DEFLATED) as dst:
        for info in src.infolist():
            if not info.filename.startswith("joint_"):
                dst.writestr(info.filename, src.read(info))
    traj = tb.Trajectory.load(old)
    assert traj.joint_positions.shape == (5, 0) and traj.joint_velocities.shape == (5, 0)
    assert traj.joint_names.shape == (0,)
    bad = tb.Trajectory.load(path)
    bad.joint_positions = bad.joint_positions[:, :-1]
    with pytest.raises(ValueError, match=r"joint_positions has shape \(5, 8\), expected \(5, 9\)"):
        tb.Trajectory.load(bad.save(tmp_path / "bad.npz"))


# ====================================================================== scene files
def _scene(tmp_path: Path, body: str, name: str = "scene.toml") -> Path:
    path = tmp_path / name
    path.write_text("format = 1\n\n[ground]\n\n" + body)
    return path


def test_a_scene_with_robots_loads_and_steps(urdf, tmp_path, monkeypatch):
    """Relative files are read from the scene's folder whatever the working directory; the format follows
    the extension; q and q̇ are set as written; the link bodies come after the bodies."""
    kuka = _kuka()
    (tmp_path / "robots" / "pendulum.xml").write_text(PENDULUM_MJCF)
    path = _scene(tmp_path, f"""\
[[bodies]]
name = "ball"
shape = {{ type = "sphere", radius = 0.1 }}
position = [2.0, 0.0, 0.5]

[[robots]]
file = "robots/pendulum.urdf"
position = [0.0, 0.0, 1.5]
q = [0.5]
qd = [1.0]

[[robots]]
file = {json.dumps(str(kuka))}
name = "iiwa"
position = [-1.0, 0.0, 0.0]
q = [0.3, 0.5, 0.0, -1.2, 0.0, 0.8, 0.0]

[[robots]]
file = "robots/pendulum.xml"
name = "mj"
position = [1.0, 1.0, 0.0]

[[robots]]
file = "robots/pendulum.urdf"
format = "urdf"
name = "floater"
fixed_base = false
self_collision = true
position = [1.0, 0.0, 2.0]
orientation = [0.0, 0.0, 0.0, 1.0]
""")
    monkeypatch.chdir(urdf.parent)      # not the scene's folder
    world = tb.load_scene(path)
    assert [r.name for r in world.robots] == ["pendulum", "iiwa", "mj", "floater"]
    assert [b.name for b in world.bodies][:4] == ["ground", "ball", "pendulum/base", "pendulum/arm"]
    pend, iiwa, mj, floater = world.robots
    assert pend.q.tolist() == [0.5] and pend.qd.tolist() == [1.0]
    assert iiwa.q.tolist() == [0.3, 0.5, 0.0, -1.2, 0.0, 0.8, 0.0]
    assert mj.nq == 1 and world.robot_records[2]["format"] == "mjcf"
    np.testing.assert_array_equal(floater.q[:7], [1.0, 0.0, 2.0, 0.0, 0.0, 0.0, 1.0])
    records = world.robot_records
    assert records[0]["file"] == str(urdf) and records[3]["self_collision"] and not records[3]["fixed_base"]
    np.testing.assert_allclose(pend.link("base").position, [0.0, 0.0, 1.5])
    for _ in range(20):
        world.step(DT)
    assert pend.q[0] != 0.5 and floater.q[2] < 2.0
    assert all(np.all(np.isfinite(r.q)) for r in world.robots)


def test_save_scene_round_trip_is_bitwise(urdf, tmp_path):
    """A world built in code with robots read from files, stepped: saving and loading gives each robot's q
    and q̇ and every body's state (link bodies included) bitwise, and saving the loaded world the same text.
    The pendulum's file (inside the scene's folder) is written relative, the KUKA's absolute."""
    kuka = _kuka()
    world = _robot_world(urdf, kuka)
    for _ in range(25):
        world.step(DT)
    path = world.save_scene(tmp_path / "saved.toml")
    text = path.read_text()
    assert 'file = "robots/pendulum.urdf"' in text and f"file = {json.dumps(str(kuka))}" in text
    assert "pendulum/arm" not in text          # link bodies are the robots', not [[bodies]]
    back = tb.load_scene(path)
    assert [r.name for r in back.robots] == [r.name for r in world.robots]
    for robot in world.robots:
        np.testing.assert_array_equal(back.robot(robot.name).q, robot.q, err_msg=robot.name)
        np.testing.assert_array_equal(back.robot(robot.name).qd, robot.qd, err_msg=robot.name)
    before, after = _bodies(world), _bodies(back)
    assert set(before) == set(after)
    for name, values in before.items():
        for a, b in zip(values, after[name], strict=True):
            np.testing.assert_array_equal(b, a, err_msg=name)
    again = back.save_scene(tmp_path / "again.toml")
    assert again.read_text() == text
    # and the loaded world goes on as the original does
    for _ in range(5):
        world.step(DT)
        back.step(DT)
    for robot in world.robots:
        np.testing.assert_allclose(back.robot(robot.name).q, robot.q, rtol=0, atol=1e-9, err_msg=robot.name)


def test_a_robot_s_controls_and_materials_are_saved_and_act_the_same_after_loading(urdf, tmp_path):
    """A robot under joint motors (kp, kd, q_target, qd_target) with a constant torque, added with its own friction
    and restitution: save_scene writes its controls and materials, loading gives them back bitwise, and the loaded
    robot swings as the original does over 60 steps (to 1e-9 rad: the loaded world's warm start is cold) — without
    the controls it would hang from the motor-free pendulum's other path. A robot without controls writes none."""
    world = tb.World()
    quiet = world.add_urdf(urdf, position=(3.0, 0.0, 1.5), name="quiet")
    arm = world.add_urdf(urdf, position=(0.0, 0.0, 1.5), friction=0.9, restitution=0.25)
    arm.kp, arm.kd, arm.q_target, arm.qd_target, arm.tau = [40.0], [2.0], [1.1], [0.5], [0.7]
    text = world.save_scene(tmp_path / "controls.toml").read_text()
    assert text.count("kp = ") == 1 and "friction = 0.9" in text and "restitution = 0.25" in text
    back = tb.load_scene(tmp_path / "controls.toml")
    loaded = back.robot(arm.name)
    for key in ("tau", "kp", "kd", "q_target", "qd_target"):
        np.testing.assert_array_equal(getattr(loaded, key), getattr(arm, key), err_msg=key)
        assert not np.any(getattr(back.robot(quiet.name), key))
    assert loaded.link("arm").body.friction == 0.9 and loaded.link("arm").body.restitution == 0.25
    for _ in range(60):
        world.step(DT)
        back.step(DT)
    assert abs(arm.q[0]) > 0.5
    np.testing.assert_allclose(loaded.q, arm.q, rtol=0, atol=1e-9)


def test_material_extras_set_on_link_bodies_are_saved_and_loaded(urdf, tmp_path):
    """A floating pendulum dropped onto the ground on its arm, the arm made compliant and the base given rolling
    friction after adding: save_scene writes them as link_materials (and nothing for a robot left alone), the
    loaded links have them, saving the loaded world writes the same text, and both worlds land alike over 240
    steps (to 1e-9: neither has a warm start yet). With a rigid arm the robot topples instead: its hinge angle
    differs by 0.2 rad at the end."""
    world = tb.World()
    world.add_ground()
    robot = world.add_urdf(urdf, position=(0.0, 0.0, 0.8), fixed_base=False, name="dropped")
    world.add_urdf(urdf, position=(3.0, 0.0, 1.5), name="plain")
    robot.link("arm").body.contact_stiffness = 3e4
    robot.link("base").body.rolling_friction = 0.01
    path = world.save_scene(tmp_path / "materials.toml")
    text = path.read_text()
    assert text.count("link_materials") == 1
    back = tb.load_scene(path)
    loaded = back.robot("dropped")
    assert loaded.link("arm").body.contact_stiffness == 3e4
    assert loaded.link("base").body.rolling_friction == 0.01
    assert loaded.link("base").body.contact_stiffness is None
    assert back.robot("plain").link("arm").body.rolling_friction == 0.0
    assert back.save_scene(tmp_path / "again.toml").read_text() == text
    for _ in range(240):
        world.step(DT)
        back.step(DT)
    assert abs(robot.q[-1]) < 1e-3   # (it stood: the rigid arm ends at 0.23 rad)
    np.testing.assert_allclose(loaded.q, robot.q, rtol=0, atol=1e-9)


@pytest.mark.parametrize(("line", "phrase"), [
    ("link_materials = { nolink = { rolling_friction = 0.1 } }",
     "robots[0].link_materials.nolink: robot 'pendulum' has no link 'nolink' with collision shapes"),
    ("link_materials = { arm = { friction = 0.1 } }",
     "robots[0].link_materials.arm.friction: unknown link material key 'friction'"),
    ("link_materials = { arm = { rolling_friction = -1.0 } }", "robots[0].link_materials.arm.rolling_friction"),
    ("link_materials = { arm = 3 }", "robots[0].link_materials.arm: must be a table"),
    ("kp = [1.0, 2.0]", "robots[0].kp: must have 1 numbers"),
    ("kd = [-1.0]", "robots[0].kd: must be finite and >= 0"),
    ("friction = -0.5", "robots[0].friction"),
])
def test_bad_robot_controls_in_a_scene_are_refused_where_they_are_written(urdf, tmp_path, line, phrase):
    path = tmp_path / "bad.toml"
    path.write_text(f'format = 1\n\n[[robots]]\nfile = "{urdf}"\n{line}\n')
    with pytest.raises(ValueError, match=phrase.replace("[", r"\[").replace("]", r"\]")):
        tb.load_scene(path)


def test_a_link_material_the_solver_cannot_hold_is_refused_at_its_key(urdf, tmp_path):
    """Rolling friction needs the Gauss–Seidel solver: with solver "apgd" the link's setter refuses it, and the
    message is located at the key, without the key's name said twice."""
    path = tmp_path / "bad.toml"
    path.write_text(f'format = 1\n\n[world.contact]\nsolver = "apgd"\n\n[[robots]]\nfile = "{urdf}"\n'
                    "link_materials = { arm = { rolling_friction = 0.01 } }\n")
    with pytest.raises(ValueError, match=r"bad\.toml:8: robots\[0\]\.link_materials\.arm\.rolling_friction: must be 0 "
                                         r"with solver='apgd'"):
        tb.load_scene(path)


def test_body_indices_in_the_file_leave_the_link_bodies_out(urdf, tmp_path):
    """A body added after a robot is referred to (by a joint, here) by its index among the file's bodies, and
    the ground's index likewise, so that the loaded world (link bodies last) joins the same bodies."""
    world = tb.World()
    world.add_urdf(urdf, position=(0.0, 0.0, 2.0))
    world.add_ground()
    ball = world.add_body(tb.Sphere(0.1), position=(1.0, 0.0, 1.0))
    world.add_joint(tb.HingeJoint(ball, None, anchor=(1.0, 0.0, 1.5), axis=(0.0, 1.0, 0.0)))
    assert ball.index == 3
    text = world.save_scene(tmp_path / "s.toml").read_text()
    assert "index = 0" not in text and "a = 1\n" in text    # the ground first, the ball second
    back = tb.load_scene(tmp_path / "s.toml")
    assert back.joints[0].a.index == 1
    np.testing.assert_array_equal(back.joints[0].a.position, ball.position)
    assert [b.name for b in back.bodies] == ["ground", None, "pendulum/base", "pendulum/arm"]


def test_save_scene_refuses_a_robot_built_in_code(urdf, tmp_path):
    from tumble.robots import RobotDescription

    world = tb.World()
    world.add_urdf(urdf)
    desc = world.robot("pendulum").description
    made = RobotDescription(name="coded", links=desc.links, joints=desc.joints)
    world.add_robot(made)
    target = tmp_path / "never.toml"
    with pytest.raises(ValueError, match=r"robot 'coded' was added with add_robot\(description\) in code.*"
                                         r"nothing was written"):
        world.save_scene(target)
    assert not target.exists() and list(tmp_path.iterdir()) == [urdf.parent]


def test_save_scene_refuses_a_robot_whose_file_is_gone(urdf, tmp_path):
    copy = tmp_path / "copy.urdf"
    copy.write_text(PENDULUM_URDF)
    world = tb.World()
    world.add_urdf(copy)
    copy.unlink()
    with pytest.raises(ValueError, match="no longer there"):
        world.save_scene(tmp_path / "s.toml")
    assert not (tmp_path / "s.toml").exists()


@pytest.mark.parametrize("table, message", [
    ('file = "robots/missing.urdf"',
     r"s\.toml:6: robots\[0\]\.file: the robot file '.*missing\.urdf' does not exist \(read from the scene "
     r"file's folder"),
    ('file = "robots"\nformat = "urdf"', r"s\.toml:6: robots\[0\]\.file: .* is a folder, not a file"),
    ('file = "robots/pendulum.urdf"\nfixd_base = true',
     r"s\.toml:7: robots\[0\]\.fixd_base: unknown robot key 'fixd_base' \(did you mean 'fixed_base'\?\)"),
    ('file = "robots/pendulum.urdf"\nfixed_base = "yes"', r"s\.toml:7: robots\[0\]\.fixed_base: must be true or "
                                                          r"false, got 'yes'"),
    ('file = "robots/pendulum.urdf"\nq = "zero"', r"s\.toml:7: robots\[0\]\.q: must be an array of numbers"),
    ('file = "robots/pendulum.urdf"\nq = [0.1, "a"]', r"s\.toml:7: robots\[0\]\.q\[1\]: must be a number"),
    ('file = "robots/pendulum.urdf"\nq = [0.1, 0.2]',
     r"s\.toml:7: robots\[0\]\.q: must have 1 numbers \(robot 'pendulum' has q of size 1; its movable joints: "
     r"hinge\), got 2"),
    ('file = "robots/pendulum.urdf"\nqd = []', r"s\.toml:7: robots\[0\]\.qd: must have 1 numbers"),
    ('file = "robots/pendulum.urdf"\nposition = [0.0, 1.0]', r"s\.toml:7: robots\[0\]\.position: must have 3"),
    ('file = "robots/pendulum.urdf"\nformat = "sdf"', r"s\.toml:7: robots\[0\]\.format: must be \"urdf\" or "
                                                      r"\"mjcf\", got 'sdf'"),
    ('file = "robots/pendulum.txt"', r"s\.toml:6: robots\[0\]\.file: cannot tell the format of "
                                     r"'robots/pendulum\.txt' from its extension"),
    ("name = 'x'", r"s\.toml:5: robots\[0\]: a robot needs file = \"PATH\""),
    ('file = ""', r"s\.toml:6: robots\[0\]\.file: must name a URDF or MJCF file"),
    ('file = 3', r"s\.toml:6: robots\[0\]\.file: must be a string, got 3"),
    ('file = "robots/bad.urdf"', r"s\.toml:6: robots\[0\]\.file: .*bad\.urdf.*"),
    ('file = "robots/pendulum.urdf"\n\n[[robots]]\nfile = "robots/pendulum.urdf"',
     r"s\.toml:8: robots\[1\]: name 'pendulum' is already a robot's name"),
    ('file = "robots/pendulum.urdf"\nname = "a"\n\n[[robots]]\nfile = "robots/pendulum.urdf"\nname = "a"',
     r"s\.toml:11: robots\[1\]\.name: duplicate robot name 'a': already used by robots\[0\]\.name"),
])
def test_bad_robot_tables_are_located(urdf, tmp_path, table, message):
    (urdf.parent / "bad.urdf").write_text("<robot name='r'><link name='a'/><joint name='j'/></robot>")
    path = _scene(tmp_path, f"[[robots]]\n{table}\n", "s.toml")
    with pytest.raises(ValueError, match=message):
        tb.load_scene(path)


def test_robots_must_be_an_array_of_tables(tmp_path):
    with pytest.raises(ValueError, match=r"robots: must be an array of tables: write each robot as \[\[robots\]\]"):
        tb.load_scene(_scene(tmp_path, '[robots]\nfile = "x.urdf"\n'))


def test_robots_need_the_time_stepping_method(urdf, tmp_path):
    path = tmp_path / "event.toml"
    path.write_text('format = 1\n[world]\nmethod = "event"\n\n[[robots]]\nfile = "robots/pendulum.urdf"\n')
    with pytest.raises(ValueError, match=r"event\.toml:5: robots\[0\]: robots are advanced by time-stepping only"):
        tb.load_scene(path)


# ====================================================================== tumble run
def test_tumble_run_on_a_robot_scene(urdf, tmp_path, capsys):
    path = _scene(tmp_path, """\
[run]
dt = 0.005
duration = 0.1

[[robots]]
file = "robots/pendulum.urdf"
position = [0.0, 0.0, 1.5]
q = [0.5]

[[robots]]
file = "robots/pendulum.urdf"
name = "floater"
fixed_base = false
position = [1.0, 0.0, 0.6]
""", "robo.toml")
    out = tmp_path / "out"
    status = cli.main(["run", str(path), "-o", str(out), "--record-every", "2", "-q", "--no-plots"])
    stdout, stderr = capsys.readouterr()
    assert status == 0, stderr
    traj = tb.Trajectory.load(out / "robo.npz")
    assert traj.joint_positions.shape == (11, 9) and traj.joint_velocities.shape == (11, 8)
    assert traj.joint_positions[0, 0] == 0.5 and traj.joint_positions[-1, 0] != 0.5
    summary = json.loads((out / "summary.json").read_text())
    end = summary["joint_positions_end"]
    assert list(end) == list(traj.joint_names)
    assert end["pendulum/hinge"] == traj.joint_positions[-1, 0]
    assert "pendulum/arm" in (out / "replay.html").read_text()
    assert os.path.getsize(out / "robo.npz") > 0


def test_an_mjcf_robot_placed_by_its_file_saves_and_loads_in_place(tmp_path):
    """An MJCF file that places its free root body at z = 1.4 m, added at position (1, 0, 0): the torso starts at
    (1, 0, 1.4); saved and loaded, it is there again (the file's placement is applied once, not twice)."""
    xml = tmp_path / "floater.xml"
    xml.write_text("""<mujoco><worldbody><body name="torso" pos="0 0 1.4"><freejoint/>
        <geom type="box" size="0.1 0.1 0.1" mass="1"/></body></worldbody></mujoco>""")
    world = tb.World()
    robot = world.add_mjcf(xml, position=(1.0, 0.0, 0.0))
    assert np.allclose(robot.link("torso").position, (1.0, 0.0, 1.4))
    world.save_scene(tmp_path / "scene.toml")
    again = tb.load_scene(tmp_path / "scene.toml")
    assert np.allclose(again.robots[0].link("torso").position, (1.0, 0.0, 1.4))


def test_a_loop_closure_saves_and_loads(urdf, tmp_path):
    """A joint on a link's body (a loop closure, robots/closures.py) is written with the link body's name and
    loads back as a closure on the loaded robot's link: the same frames, and the loaded world steps on as the
    original does (to 1e-9)."""
    world = tb.World(sleep=False)
    robot = world.add_urdf(urdf, position=(0.0, 0.0, 2.0))
    robot.q = [0.5]
    arm = robot.link("arm").body
    bob = world.add_body(tb.Sphere(0.05), mass=0.2, position=arm.position + (0.0, 0.0, -0.4), collide=False)
    world.add_joint(tb.BallJoint(arm, bob, bob.position + (0.0, 0.0, 0.1)))
    for _ in range(10):
        world.step(DT)
    text = world.save_scene(tmp_path / "s.toml").read_text()
    assert 'a = "pendulum/arm"' in text
    back = tb.load_scene(tmp_path / "s.toml")
    assert back.joints[0].a is back.robot("pendulum").link("arm").body
    for k in range(2):
        np.testing.assert_array_equal(back.joints[0].frames[k], world.joints[0].frames[k])
    for _ in range(24):
        world.step(DT)
        back.step(DT)
    np.testing.assert_allclose(back.robot("pendulum").q, robot.q, rtol=0, atol=1e-9)
    assert back.joints[0].error < 1e-11 and world.joints[0].error < 1e-11


def test_a_joint_naming_no_link_body_is_refused_at_its_key(urdf, tmp_path):
    """A [[joints]] table whose a names a "ROBOT/LINK" body that the robots do not make is refused once they are
    read, at its key, with the link bodies they do make listed."""
    path = tmp_path / "s.toml"
    path.write_text(f'format = 1\n\n[[robots]]\nfile = "{urdf}"\n\n[[joints]]\ntype = "ball"\n'
                    f'a = "pendulum/hand"\nanchor = [0.0, 0.0, 0.0]\n')
    with pytest.raises(ValueError, match=r"s\.toml:8: joints\[0\]\.a: names no body: 'pendulum/hand'; the robots' "
                                         r"link bodies are \['pendulum/base', 'pendulum/arm'\]"):
        tb.load_scene(path)
