"""Sensors around the readings: noise and bias, naming, recording by ``simulate`` (npz and CSV round trips),
scene files (round trip, located errors) and the refusals of bad input."""

from __future__ import annotations

import csv
import math
from pathlib import Path

import numpy as np
import pytest

import tumble as tb
from tumble.user.scene import save_scene

G = 9.81
DT = 1e-3

PENDULUM_URDF = """\
<?xml version="1.0"?>
<robot name="pendulum">
  <link name="base">
    <inertial><mass value="1.0"/><inertia ixx="0.01" iyy="0.01" izz="0.01" ixy="0" ixz="0" iyz="0"/></inertial>
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


def _box_world() -> tuple[tb.World, tb.Body]:
    w = tb.World()
    w.add_ground()
    box = w.add_body(tb.Box(0.4, 0.4, 0.4), mass=2.0, position=(0.0, 0.0, 0.2), name="box")
    return w, box


# ---------------------------------------------------------------------------------------------------- noise and bias
def test_same_seed_gives_the_same_readings_and_the_noise_has_its_std():
    """Two IMUs with seed 5 read the same 2000 samples bitwise; a third with seed 6 does not. The samples'
    standard deviation per component is within 10 % of the one asked (0.05 m/s² and 0.01 rad/s): the sample std of
    2000 normal draws has a relative spread of 1/√(2·2000) = 1.6 %, so 10 % is over 6 of those."""
    w, box = _box_world()
    noise = [0.05, 0.05, 0.05, 0.01, 0.01, 0.01]
    a, b, c = (w.add_sensor(tb.Imu(box, noise=noise, seed=s)) for s in (5, 5, 6))
    ra, rb, rc = (np.array([s.values() for _ in range(2000)]) for s in (a, b, c))
    assert np.array_equal(ra, rb)
    assert not np.array_equal(ra, rc)
    exact = a.measure()
    np.testing.assert_allclose(ra.mean(axis=0), exact, atol=4 * 0.05 / math.sqrt(2000))
    np.testing.assert_allclose(ra.std(axis=0), noise, rtol=0.10)


def test_bias_is_added_exactly():
    """A bias is added to the exact reading bit for bit (noise off), per component or as one number."""
    w, box = _box_world()
    biased = w.add_sensor(tb.Imu(box, bias=[0.1, -0.2, 0.3, 0.0, 0.0, 1e-3]))
    plain = w.add_sensor(tb.Imu(box))
    force = w.add_sensor(tb.ContactForce(box, bias=2.5))
    acc, gyro = biased.read()
    p_acc, p_gyro = plain.read()
    assert np.array_equal(acc, p_acc + [0.1, -0.2, 0.3])
    assert np.array_equal(gyro, p_gyro + [0.0, 0.0, 1e-3])
    assert np.array_equal(force.read(), [2.5, 2.5, 2.5])


# ---------------------------------------------------------------------------------------------------- names
def test_names_are_generated_unique_and_duplicates_refused():
    w, box = _box_world()
    first = w.add_sensor(tb.Imu(box))
    second = w.add_sensor(tb.Imu(box))
    force = w.add_sensor(tb.ContactForce(box), name="under")
    assert (first.name, second.name, force.name) == ("imu0", "imu1", "under")
    assert list(w.sensors) == ["imu0", "imu1", "under"] and w.sensors["under"] is force
    with pytest.raises(ValueError, match="name 'under' is taken by sensor"):
        w.add_sensor(tb.ContactForce(box), name="under")
    with pytest.raises(ValueError, match="must not be in a world already"):
        w.add_sensor(first)
    with pytest.raises(ValueError, match="name must be non-empty and made of letters"):
        w.add_sensor(tb.Imu(box), name="a,b")
    w.remove_sensor("imu0")
    assert list(w.sensors) == ["imu1", "under"]
    with pytest.raises(ValueError, match="is not in a world"):
        first.read()
    w.remove_sensor(force)
    assert list(w.sensors) == ["imu1"]


# ---------------------------------------------------------------------------------------------------- bad input
def test_bad_input_is_refused_with_messages():
    w, box = _box_world()
    other = tb.World().add_body(tb.Sphere(0.1), mass=1.0)
    with pytest.raises(TypeError, match="body must be a Body handle, got 'box'"):
        tb.Imu("box")
    with pytest.raises(ValueError, match="position must be finite"):
        tb.Imu(box, position=(0.0, math.nan, 0.0))
    with pytest.raises(ValueError, match="orientation must be a non-zero quaternion"):
        tb.Imu(box, orientation=(0.0, 0.0, 0.0, 0.0))
    with pytest.raises(ValueError, match=r"noise must be >= 0 \(a standard deviation\)"):
        tb.Imu(box, noise=-0.1)
    with pytest.raises(ValueError, match="noise must be one number or 6 numbers"):
        tb.Imu(box, noise=[0.1, 0.2])
    with pytest.raises(ValueError, match="bias must be finite"):
        tb.ContactForce(box, bias=math.inf)
    with pytest.raises(ValueError, match="seed must be an integer >= 0 or None"):
        tb.ContactForce(box, seed=-1)
    with pytest.raises(ValueError, match="other must be a body other than body"):
        tb.ContactForce(box, other=box)
    with pytest.raises(ValueError, match="body must be a body of this world"):
        w.add_sensor(tb.Imu(other))
    with pytest.raises(TypeError, match="sensor must be a tumble.Imu"):
        w.add_sensor(box)
    robot = w.add_robot(tb_arm(), position=(0.0, 0.0, 2.0))
    with pytest.raises(ValueError, match=r"joint_name: robot 'arm' has no joint 'knee'; its joints: \['shoulder'\]"):
        tb.ForceTorque(robot, "knee")
    with pytest.raises(TypeError, match="source must be a Robot"):
        tb.ForceTorque(box)


def tb_arm():
    from tumble.robots import JointSpec, LinkSpec, RobotDescription

    links = [LinkSpec("base"), LinkSpec("upper", 1.0, np.array([0.2, 0.0, 0.0]), np.eye(3) * 0.01)]
    joints = [JointSpec("shoulder", "revolute", "base", "upper", np.zeros(3), np.eye(3), np.array([0.0, 1.0, 0.0]))]
    return RobotDescription("arm", links, joints)


# ---------------------------------------------------------------------------------------------------- recording
def test_simulate_records_every_sensor_and_the_files_round_trip(tmp_path: Path):
    """``simulate`` records each sensor at every recorded frame: (T, 6) for an IMU, (T, 3) for a contact force;
    the first frame is the reading before any step (−g, no contact force) and the last the live reading. The
    ``.npz`` (no pickles: loaded with allow_pickle=False) and the CSV columns give the same numbers back."""
    w, box = _box_world()
    imu = w.add_sensor(tb.Imu(box, position=(0.1, 0.0, 0.0)), name="imu")
    force = w.add_sensor(tb.ContactForce(box), name="under")
    traj = w.simulate(0.05, DT, record_every=10)
    assert traj.sensors["imu"].shape == (6, 6) and traj.sensors["under"].shape == (6, 3)
    assert np.array_equal(traj.sensors["imu"][0], [0.0, 0.0, G, 0.0, 0.0, 0.0])
    assert np.array_equal(traj.sensors["under"][0], [0.0, 0.0, 0.0])
    assert np.array_equal(traj.sensors["imu"][-1], np.concatenate(imu.read()))
    assert np.array_equal(traj.sensors["under"][-1], force.read())
    loaded = tb.Trajectory.load(traj.save(tmp_path / "run.npz"))
    assert list(loaded.sensors) == ["imu", "under"]
    for name in traj.sensors:
        assert np.array_equal(loaded.sensors[name], traj.sensors[name])
    with np.load(tmp_path / "run.npz", allow_pickle=False) as data:
        assert data["sensor_names"].tolist() == ["imu", "under"]
    assert len(loaded.frames(3).sensors["imu"]) == 3
    with traj.to_csv(tmp_path / "run.csv").open() as fh:
        rows = list(csv.DictReader(fh))
    n = traj.positions.shape[1]
    assert len(rows) == 6 * n
    for k in range(6):
        row = rows[k * n]
        assert [float(row[f"imu[{j}]"]) for j in range(6)] == traj.sensors["imu"][k].tolist()
        assert [float(row[f"under[{j}]"]) for j in range(3)] == traj.sensors["under"][k].tolist()


def test_a_trajectory_without_sensors_loads_with_none(tmp_path: Path):
    w, _ = _box_world()
    traj = w.simulate(0.002, DT)
    assert traj.sensors == {}
    assert tb.Trajectory.load(traj.save(tmp_path / "plain.npz")).sensors == {}


# ---------------------------------------------------------------------------------------------------- scene files
def _scene_world(folder: Path) -> tb.World:
    urdf = folder / "pendulum.urdf"
    urdf.write_text(PENDULUM_URDF)
    w = tb.World()
    ground = w.add_ground()
    box = w.add_body(tb.Box(0.4, 0.4, 0.4), mass=2.0, position=(0.0, 0.0, 0.2), name="box")
    unnamed = w.add_body(tb.Sphere(0.1), mass=1.0, position=(2.0, 0.0, 1.0))
    joint = w.add_joint(tb.BallJoint(unnamed, None, (2.0, 0.0, 1.3)))
    robot = w.add_urdf(urdf, position=(0.0, 3.0, 1.0))
    q = np.array([math.cos(0.3), 0.0, math.sin(0.3), 0.0])
    w.add_sensor(tb.Imu(box, position=(0.1, 0.2, 0.3), orientation=q / np.linalg.norm(q),
                        noise=[0.01] * 3 + [0.001] * 3, bias=0.5, seed=3), name="imu")
    w.add_sensor(tb.ContactForce(box, other=ground))
    w.add_sensor(tb.ContactForce(unnamed))
    w.add_sensor(tb.ForceTorque(joint), name="ball")
    w.add_sensor(tb.ForceTorque(robot, "hinge"), name="hinge")
    w.add_sensor(tb.Imu(robot.link("arm").body), name="arm_imu")
    return w


def _spec(sensor: tb.Imu | tb.ContactForce | tb.ForceTorque) -> dict:
    out = {}
    for key, value in sensor.spec().items():
        if isinstance(value, tb.Body):
            value = value.index
        elif isinstance(value, tb.Joint):
            value = value.kind_name
        elif not isinstance(value, (int, float, str, list)):
            value = value.name
        out[key] = value
    return out


def test_scene_round_trip_keeps_every_sensor(tmp_path: Path):
    """Saved and loaded: the same sensors, names, types, references (bodies by name or index, a robot link's
    body as "ROBOT/LINK", a World joint by index, a robot joint by name), mount, noise, bias and seed, bitwise;
    saving again writes the same text; and the loaded world's readings equal the original's."""
    w = _scene_world(tmp_path)
    path = save_scene(w, tmp_path / "scene.toml")
    text = path.read_text()
    assert "[[sensors]]" in text
    loaded = tb.load_scene(path)
    assert list(loaded.sensors) == list(w.sensors)
    for name, sensor in w.sensors.items():
        again = loaded.sensors[name]
        assert type(again) is type(sensor)
        assert _spec(again) == _spec(sensor)
        assert np.array_equal(again.noise, sensor.noise) and np.array_equal(again.bias, sensor.bias)
    assert np.array_equal(loaded.sensors["imu"].orientation, w.sensors["imu"].orientation)
    assert save_scene(loaded, tmp_path / "again.toml").read_text() == text
    for name in ("contact_force1", "ball", "hinge"):
        assert np.array_equal(loaded.sensors[name].measure(), w.sensors[name].measure())


SCENE = """\
format = 1
[ground]
[[bodies]]
name = "box"
shape = { type = "box", size = [0.4, 0.4, 0.4] }
mass = 2.0
position = [0.0, 0.0, 0.2]
[[robots]]
file = "pendulum.urdf"
position = [0.0, 3.0, 1.0]
[[sensors]]
type = "imu"
name = "imu"
body = "box"
"""


@pytest.mark.parametrize("extra, line, message", [
    ('[[sensors]]\ntype = "imu"\nbody = "crate"\n', 17, "sensors[1].body: names no body: 'crate'"),
    ('[[sensors]]\ntype = "force_torque"\nrobot = "pendulum"\njoint = "knee"\n', 18,
     "sensors[1].joint: robot 'pendulum' has no joint 'knee'; its joints: ['hinge']"),
    ('[[sensors]]\ntype = "force_torque"\nrobot = "cart"\njoint = "hinge"\n', 17, "sensors[1].robot: names no robot"),
    ('[[sensors]]\ntype = "imu"\nname = "imu"\nbody = 0\n', 17, "sensors[1].name: the name 'imu' is taken"),
    ('[[sensors]]\ntype = "imu"\nbody = "box"\nposition = [0.0, nan, 0.0]\n', 18, "sensors[1].position[1]: must be"),
    ('[[sensors]]\ntype = "imu"\nbody = "box"\norientation = [0.0, 0.0, 0.0, 0.0]\n', 18,
     "sensors[1].orientation: must be a non-zero quaternion"),
    ('[[sensors]]\ntype = "contact_force"\nbody = "box"\nnoise = -1.0\n', 18,
     "sensors[1].noise: must be non-negative, got -1.0"),
    ('[[sensors]]\ntype = "contact_force"\nbody = "box"\nnoise = [0.1, 0.2]\n', 18,
     "sensors[1].noise: must be one number or 3 numbers"),
    ('[[sensors]]\ntype = "gps"\n', 16, "sensors[1].type: unknown type 'gps'"),
    ('[[sensors]]\ntype = "imu"\nbody = "box"\nother = "ground"\n', 18,
     "sensors[1].other: unknown key of a sensor of type 'imu'"),
])
def test_scene_errors_are_located(tmp_path: Path, extra, line, message):
    (tmp_path / "pendulum.urdf").write_text(PENDULUM_URDF)
    path = tmp_path / "scene.toml"
    path.write_text(SCENE + extra)
    with pytest.raises(ValueError) as info:
        tb.load_scene(path)
    text = str(info.value)
    assert text.startswith(f"{path}:{line}: "), text
    assert message in text, text
