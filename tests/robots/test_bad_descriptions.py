"""Robot descriptions built in code and robot files get one validation (robots/validate.py, issue 53 items 1, 3, 4):
every bad input a clear ValueError or TypeError naming the robot (its file), the element and the value, raised
before the world changes; a malformed tree never reaches a kernel (a cycle used to loop in one for ever: those
cases run in a subprocess with a wall limit)."""

from __future__ import annotations

import dataclasses
import math
import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

import tumble as tb
from tumble.robots.description import GeomSpec, JointSpec, LinkSpec, RobotDescription
from tumble.robots.urdf import read_urdf
from tumble.robots.validate import LINKS_MAX, check_description

NAN, INF = float("nan"), float("inf")
I = np.eye(3) * 0.01


def good() -> RobotDescription:
    """base → a (revolute, limited) → b (spherical), each with a box."""
    links = [LinkSpec("base", 1.0, np.zeros(3), I.copy(), [GeomSpec(tb.Box(0.1, 0.1, 0.1))]),
             LinkSpec("a", 1.0, np.zeros(3), I.copy(), [GeomSpec(tb.Box(0.1, 0.1, 0.1))]),
             LinkSpec("b", 1.0, np.zeros(3), I.copy(), [GeomSpec(tb.Box(0.1, 0.1, 0.1))])]
    joints = [JointSpec("j1", "revolute", "base", "a", np.array([0.0, 0.0, 0.3]), lower=-1.0, upper=1.0),
              JointSpec("j2", "spherical", "a", "b", np.array([0.0, 0.0, 0.3]))]
    return RobotDescription("arm", links, joints)


def link(desc: RobotDescription, k: int, **changes) -> RobotDescription:
    desc.links[k] = dataclasses.replace(desc.links[k], **changes)
    return desc


def joint(desc: RobotDescription, k: int, **changes) -> RobotDescription:
    desc.joints[k] = dataclasses.replace(desc.joints[k], **changes)
    return desc


def skew() -> np.ndarray:
    R = np.eye(3)
    R[0, 1] = 0.1
    return R


BAD = [
    # (id, change to good(), error type, phrases of the message)
    ("no links", lambda d: dataclasses.replace(d, links=[], joints=[]), ValueError, ["robot 'arm' has no links"]),
    ("self parent", lambda d: joint(d, 1, parent="b"), ValueError,
     ["robot 'arm', joint 'j2' joins link 'b' to itself"]),
    ("cycle", lambda d: joint(joint(d, 0, parent="b"), 1, parent="a", child="b"), ValueError,
     ["robot 'arm': joints", "form a cycle", "'a' → 'b' → 'a'"]),
    ("duplicate link", lambda d: link(d, 2, name="a"), ValueError, ["robot 'arm' has two links named 'a'"]),
    ("duplicate joint", lambda d: joint(d, 1, name="j1"), ValueError, ["robot 'arm' has two joints named 'j1'"]),
    ("unknown type", lambda d: joint(d, 0, type="hinge"), ValueError,
     ["robot 'arm', joint 'j1' has type 'hinge'", "revolute"]),
    ("parent not a link", lambda d: joint(d, 0, parent="ghost"), ValueError,
     ["robot 'arm', joint 'j1' has parent 'ghost', which is not a link of the robot"]),
    ("child not a link", lambda d: joint(d, 1, child=3), ValueError,
     ["robot 'arm', joint 'j2' has child 3, which is not a link"]),
    ("two parents", lambda d: joint(d, 1, parent="base", child="a"), ValueError,
     ["joint 'j2' has child 'a', which is already the child of joint 'j1'"]),
    ("child before parent", lambda d: dataclasses.replace(d, links=[d.links[0], d.links[2], d.links[1]]), ValueError,
     ["robot 'arm': link 'b' is listed before its parent 'a' (joint 'j2')", "parent first"]),
    ("root is a child", lambda d: dataclasses.replace(d, links=[d.links[1], d.links[0], d.links[2]]), ValueError,
     ["its first link 'a' is the child of joint 'j1'"]),
    ("two roots", lambda d: dataclasses.replace(d, joints=d.joints[:1]), ValueError,
     ["link 'b' is no joint's child", "two roots"]),
    ("negative mass", lambda d: link(d, 1, mass=-1.0), ValueError,
     ["robot 'arm', link 'a' has mass -1.0", "in [0, 1e+21] kg"]),
    ("nan mass", lambda d: link(d, 1, mass=NAN), ValueError, ["robot 'arm', link 'a' has mass nan"]),
    ("mass not a number", lambda d: link(d, 1, mass="1"), TypeError,
     ["robot 'arm', link 'a' has mass '1'; it must be a real number"]),
    ("nan inertia", lambda d: link(d, 1, inertia=np.full((3, 3), NAN)), ValueError,
     ["robot 'arm', link 'a' has inertia", "nan", "must be finite"]),
    ("inf inertia", lambda d: link(d, 1, inertia=np.diag([INF, 1.0, 1.0])), ValueError,
     ["link 'a' has inertia", "inf", "must be finite"]),
    ("not positive definite", lambda d: link(d, 1, inertia=np.diag([1.0, -1.0, 1.0])), ValueError,
     ["link 'a' has an inertia with principal moments [-1, 1, 1]", "positive definite"]),
    ("not symmetric", lambda d: link(d, 1, inertia=np.array([[1.0, 0.5, 0], [0, 1, 0], [0, 0, 1]])), ValueError,
     ["link 'a' has inertia", "symmetric"]),
    ("huge com", lambda d: link(d, 1, com=np.array([1e300, 0.0, 0.0])), ValueError,
     ["link 'a' has com [1e+300, 0.0, 0.0]", "at most 1e+06"]),
    ("nan limit", lambda d: joint(d, 0, lower=NAN), ValueError,
     ["joint 'j1' has limits lower=nan, upper=1.0", "lower <= upper"]),
    ("lower above upper", lambda d: joint(d, 0, lower=1.0, upper=-1.0), ValueError,
     ["joint 'j1' has limits lower=1.0, upper=-1.0"]),
    ("negative effort", lambda d: joint(d, 0, effort=-1.0), ValueError, ["joint 'j1' has effort -1.0", ">= 0"]),
    ("nan velocity", lambda d: joint(d, 0, velocity=NAN), ValueError, ["joint 'j1' has velocity nan"]),
    ("negative friction", lambda d: joint(d, 0, friction=-0.5), ValueError, ["joint 'j1' has friction -0.5"]),
    ("nan damping", lambda d: joint(d, 0, damping=NAN), ValueError, ["joint 'j1' has damping nan", "finite"]),
    ("negative armature", lambda d: joint(d, 0, armature=-1.0), ValueError, ["joint 'j1' has armature -1.0"]),
    ("negative stiffness", lambda d: joint(d, 0, stiffness=-1.0), ValueError, ["joint 'j1' has stiffness -1.0"]),
    ("inf spring_ref", lambda d: joint(d, 0, spring_ref=INF), ValueError, ["joint 'j1' has spring_ref inf"]),
    ("skewed rotation", lambda d: joint(d, 0, origin_rotation=skew()), ValueError,
     ["joint 'j1' has origin_rotation", "proper rotation matrix"]),
    ("mirror rotation", lambda d: joint(d, 0, origin_rotation=np.diag([1.0, 1.0, -1.0])), ValueError,
     ["joint 'j1' has origin_rotation", "det R = +1"]),
    ("nan axis", lambda d: joint(d, 0, axis=np.array([NAN, 0.0, 1.0])), ValueError,
     ["joint 'j1' has axis [nan, 0.0, 1.0]", "finite"]),
    ("zero axis", lambda d: joint(d, 0, axis=np.zeros(3)), ValueError,
     ["joint 'j1' has axis [0.0, 0.0, 0.0]", "a direction"]),
    ("nan origin", lambda d: joint(d, 0, origin_xyz=np.array([0.0, NAN, 0.0])), ValueError,
     ["joint 'j1' has origin_xyz [0.0, nan, 0.0]"]),
    ("huge origin", lambda d: joint(d, 0, origin_xyz=np.array([0.0, 0.0, 1e300])), ValueError,
     ["joint 'j1' has origin_xyz [0.0, 0.0, 1e+300]", "at most 1e+06"]),
    ("origin shape", lambda d: joint(d, 0, origin_xyz=np.zeros(2)), ValueError,
     ["joint 'j1': origin_xyz must have shape (3,)"]),
    ("geom position", lambda d: link(d, 2, geoms=[GeomSpec(tb.Sphere(0.1), np.array([NAN, 0.0, 0.0]))]), ValueError,
     ["link 'b', geom 0 has position [nan, 0.0, 0.0]"]),
    ("zero base orientation", lambda d: dataclasses.replace(d, base_orientation=np.zeros(4)), ValueError,
     ["robot 'arm': base_orientation must be a non-zero quaternion"]),
    ("link not a spec", lambda d: dataclasses.replace(d, links=d.links + ["c"]), TypeError,
     ["robot 'arm': links must be LinkSpec, got 'c'"]),
    ("joint name", lambda d: joint(d, 0, name=""), TypeError, ["a joint name must be a non-empty string"]),
]


@pytest.mark.parametrize("change, error, phrases", [pytest.param(c, e, p, id=i) for i, c, e, p in BAD])
def test_a_bad_description_is_refused_before_the_world_changes(change, error, phrases):
    world = tb.World()
    world.add_ground()
    with pytest.raises(error) as info:
        world.add_robot(change(good()))
    for phrase in phrases:
        assert phrase in str(info.value), (phrase, str(info.value))
    assert world.robots == () and world.body_count == 1


def test_a_nan_inertia_adds_no_orphan_link_body():
    """Issue 53 item 3: a raw LinAlgError used to leave the links before it added as bodies."""
    world = tb.World()
    desc = link(good(), 2, inertia=np.diag([1.0, NAN, 1.0]))
    with pytest.raises(ValueError, match=r"robot 'arm', link 'b' has inertia .*nan.*must be finite"):
        world.add_robot(desc)
    assert world.robots == () and world.body_count == 0


def test_joints_in_any_order_are_matched_to_their_links():
    """Joints are keyed by their child: listed out of order they are put in the links' order (the caller's
    description is not changed); links out of order are refused (above: q follows the links' order)."""
    desc = good()
    desc.joints.reverse()
    checked = check_description(desc)
    assert [j.name for j in checked.joints] == ["j1", "j2"] and [j.name for j in desc.joints] == ["j2", "j1"]
    assert check_description(checked) is checked
    robot = tb.World().add_robot(desc)
    assert robot.joint_names == ("j1", "j2") and robot.joint_of(2) == "j2"


def test_a_non_unit_axis_is_normalized():
    desc = joint(good(), 0, axis=np.array([0.0, 0.0, 1e200]))   # (|axis|² overflows: scaled first)
    robot = tb.World().add_robot(desc)
    assert robot._tree.axis[1].tolist() == [0.0, 0.0, 1.0]


def test_links_per_robot_are_limited_up_front():
    links = [LinkSpec(f"l{i}", 1.0, np.zeros(3), I.copy()) for i in range(LINKS_MAX + 1)]
    joints = [JointSpec(f"j{i}", "fixed", f"l{i - 1}", f"l{i}") for i in range(1, LINKS_MAX + 1)]
    with pytest.raises(ValueError, match=rf"robot 'long' has {LINKS_MAX + 1} links; a robot may have at most "
                                         rf"{LINKS_MAX} \(docs/conventions.md \"Limits\"\)"):
        tb.World().add_robot(RobotDescription("long", links, joints))


CYCLES = {   # (link names, joints, a phrase of the message)
    "self parent": ("abc", 'JointSpec("j", "revolute", "a", "b"), JointSpec("k", "revolute", "c", "c")', "to itself"),
    "duplicate link": ("abb", 'JointSpec("j", "revolute", "a", "b"), JointSpec("k", "revolute", "b", "b")',
                       "two links named 'b'"),
    "cycle": ("abc", 'JointSpec("j", "revolute", "c", "b"), JointSpec("k", "revolute", "b", "c")', "form a cycle"),
}


@pytest.mark.parametrize("names, joints, phrase", list(CYCLES.values()), ids=list(CYCLES))
def test_a_malformed_tree_does_not_hang(names, joints, phrase):
    """Issue 53 item 1: these descriptions looped in a kernel for ever (Ctrl-C could not stop it). In a subprocess
    with a wall limit: a clear ValueError, at once."""
    code = textwrap.dedent(f"""
        import numpy as np
        import tumble as tb
        from tumble.robots.description import JointSpec, LinkSpec, RobotDescription
        I = np.eye(3) * 0.01
        links = [LinkSpec(name, 1.0, np.zeros(3), I) for name in {names!r}]
        try:
            tb.World().add_robot(RobotDescription("r", links, [{joints}]))
        except ValueError as exc:
            print("ValueError:", exc)
        """)
    src = str(Path(tb.__file__).resolve().parents[1])
    env = {**os.environ, "PYTHONPATH": src}
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, env=env)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("ValueError: robot 'r'"), done.stdout + done.stderr
    assert phrase in done.stdout, done.stdout


# ---------------------------------------------------------------------------------------------------------------
# files: the same checks, naming the file
# ---------------------------------------------------------------------------------------------------------------

URDF = """<robot name="r">
  <link name="a"><inertial><mass value="1"/><inertia ixx="1" ixy="0" ixz="0" iyy="1" iyz="0" izz="1"/></inertial>
  </link>
  <link name="b"><inertial><origin xyz="{com}"/><mass value="1"/>
    <inertia ixx="{i[0]}" ixy="0" ixz="0" iyy="{i[1]}" iyz="0" izz="{i[2]}"/></inertial></link>
  <joint name="j" type="revolute"><parent link="a"/><child link="b"/><origin xyz="{xyz}"/>
    <limit lower="-1" upper="1" effort="1" velocity="1"/></joint>
</robot>"""


def urdf(tmp_path: Path, com: str = "0 0 0", xyz: str = "0 0 1", i=(1, 1, 1)) -> Path:
    path = tmp_path / "r.urdf"
    path.write_text(URDF.format(com=com, xyz=xyz, i=i))
    return path


def test_a_urdf_with_a_huge_coordinate_names_the_file(tmp_path):
    """Issue 53 item 4: 1e300 loaded with a NaN mass matrix and failed only at the first step."""
    path = urdf(tmp_path, xyz="0 0 1e300")
    with pytest.raises(ValueError, match=rf"^{re.escape(str(path))}: robot 'r', joint 'j' has origin_xyz "
                                         r"\[0.0, 0.0, 1e\+300\]"):
        read_urdf(path)
    path = urdf(tmp_path, com="1e300 0 0")
    world = tb.World()
    with pytest.raises(ValueError, match=rf"^{re.escape(str(path))}: robot 'r', link 'b' has com "
                                         r"\[1e\+300, 0.0, 0.0\]"):
        world.add_urdf(path)
    assert world.robots == () and world.body_count == 0


def test_an_impossible_urdf_inertia_warns_and_strict_refuses(tmp_path):
    """Issue 54 item 4: positive definite but breaking I3 <= I1 + I2 by a third: loaded as written with a warning
    naming the file, the link and the excess; strict=True refuses it; a non-positive-definite one stays an
    error either way."""
    path = urdf(tmp_path, i=(1, 1, 3))
    where = rf'^{re.escape(str(path))} line 5: <inertia> in <link name="b">: '
    with pytest.warns(UserWarning, match=where + r"the principal moments "
                                         r"\[1, 1, 3\] kg m² violate the triangle inequality I3 <= I1 \+ I2 by 0.333 "
                                         r"of I3 .* loaded as written"):
        desc = read_urdf(path)
    assert np.allclose(np.diag(desc.links[1].inertia), [1, 1, 3])
    with pytest.raises(ValueError, match=where + r".*triangle inequality.*by 0.333 of I3 .*\(strict=True\)"):
        read_urdf(path, strict=True)
    world = tb.World()
    with pytest.raises(ValueError, match=r"triangle inequality"):
        world.add_urdf(path, strict=True)
    assert world.robots == ()
    with pytest.warns(UserWarning, match="triangle inequality"):
        world.add_urdf(path)
    assert len(world.robots) == 1
    path = urdf(tmp_path, i=(1, -1, 1))
    for strict in (False, True):
        with pytest.raises(ValueError, match=r'<link name="b">: the inertia must be positive definite'):
            read_urdf(path, strict=strict)
    with pytest.raises(TypeError, match="strict must be True or False, got 'yes'"):
        read_urdf(path, strict="yes")


MJCF = """<mujoco model="m">
  <worldbody>
    <body name="a" pos="{pos}">
      <joint name="h" type="hinge" axis="0 1 0" {extra}/>
      <geom type="sphere" size="0.1"/>
    </body>
  </worldbody>
</mujoco>"""


@pytest.mark.parametrize("pos, extra, phrase", [
    ("0 0 1", 'frictionloss="-1"', "joint 'h' has friction -1.0"),
    ("0 0 1", 'damping="nan"', "joint 'h' has damping nan"),
    ("0 0 1e300", "", "joint 'h' has origin_xyz [0.0, 0.0, 1e+300]"),
], ids=["negative frictionloss", "nan damping", "huge position"])
def test_a_bad_mjcf_value_names_the_file(tmp_path, pos, extra, phrase):
    pytest.importorskip("mujoco")
    path = tmp_path / "m.xml"
    path.write_text(MJCF.format(pos=pos, extra=extra))
    world = tb.World()
    with pytest.raises(ValueError) as info:
        world.add_mjcf(path)
    message = str(info.value)
    assert message.startswith(f"{path}: ") and phrase in message, message
    assert world.robots == () and world.body_count == 0


def test_check_description_accepts_what_the_readers_and_the_tests_build():
    desc = good()
    assert check_description(desc) is desc
    massless = link(good(), 1, mass=0.0, inertia=np.zeros((3, 3)))
    assert check_description(massless) is massless
    assert math.isinf(good().joints[1].upper)


TRIANGLE_MJCF = """<mujoco model="t">
  <worldbody>
    <body name="a">
      <joint name="h" type="hinge" axis="0 1 0"/>
      <inertial pos="0 0 0" mass="1" diaginertia="0.1 0.1 0.3" quat="0.9 0.1 0.3 0.2"/>
      <geom type="sphere" size="0.1" mass="0"/>
      <body name="b" pos="0 0 1">
        <joint name="k" type="hinge" axis="1 0 0"/>
        <inertial pos="0 0 0" mass="1" fullinertia="0.3 0.1 0.1 0.01 0 0"/>
        <geom type="sphere" size="0.1" mass="0"/>
      </body>
    </body>
  </worldbody>
</mujoco>"""


def test_an_impossible_mjcf_inertia_warns_and_strict_refuses(tmp_path):
    """Issue 54 item 4, MJCF: MuJoCo's compiler refuses such an inertia ("use 'balanceinertia'"); tumble loads the
    inertia as written (diaginertia in its frame, fullinertia as given) with a warning per body naming the file,
    the body and the excess; strict=True refuses it, naming the file and MuJoCo's message."""
    from tumble.robots.mjcf import read_mjcf

    pytest.importorskip("mujoco")
    path = tmp_path / "t.xml"
    path.write_text(TRIANGLE_MJCF)
    with pytest.warns(UserWarning) as record:
        desc = read_mjcf(path)
    messages = [str(w.message) for w in record]
    assert len(messages) == 2, messages
    assert messages[0].startswith(f"{path}: body 'a': the principal moments [0.1, 0.1, 0.3] kg m² violate the "
                                  f"triangle inequality I3 <= I1 + I2 by 0.333 of I3"), messages[0]
    assert messages[1].startswith(f"{path}: body 'b'") and "by 0.336 of I3" in messages[1], messages[1]
    w, x, y, z = np.array([0.9, 0.1, 0.3, 0.2]) / np.linalg.norm([0.9, 0.1, 0.3, 0.2])
    R = np.array([[1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)],
                  [2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)],
                  [2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)]])
    inertia = {link.name: link.inertia for link in desc.links}
    assert np.allclose(inertia["a"], R @ np.diag([0.1, 0.1, 0.3]) @ R.T, rtol=0, atol=1e-12)
    assert np.allclose(inertia["b"], [[0.3, 0.01, 0], [0.01, 0.1, 0], [0, 0, 0.1]], rtol=0, atol=1e-15)
    with pytest.raises(ValueError, match=rf"^{re.escape(str(path))}: MuJoCo cannot compile this MJCF file: .*inertia "
                                         r"must satisfy A \+ B >= C(.|\n)*\(strict=True\)"):
        tb.World().add_mjcf(path, strict=True)


def test_the_root_of_a_description_without_one_is_a_clear_error():
    """RobotDescription.root of no links, or of links that are all some joint's child, was a raw IndexError."""
    links = [LinkSpec("a"), LinkSpec("b")]
    cycle = [JointSpec("j", "fixed", "a", "b"), JointSpec("k", "fixed", "b", "a")]
    for desc in (RobotDescription("arm", [], []), RobotDescription("arm", links, cycle)):
        with pytest.raises(ValueError, match="robot 'arm' has no root link: every link is some joint's child"):
            _ = desc.root
