"""The URDF and MJCF readers (robots/urdf.py, robots/mjcf.py) against facts independent of them: numbers
written in the files, matrices worked out by hand from the URDF spec and the MJCF docs, and the forward
kinematics of two independent engines (PyBullet for URDF, MuJoCo's own mj_kinematics for MJCF).

Tolerances: 1e-12 where the value is read or composed from at most a few float operations; 1e-9 for forward
kinematics through a 7-link chain (rounding of ~50 products of unit rotations); 1e-6 m against PyBullet, which
stores its frames in float64 but composes them through its own quaternion chain with the file's 11-digit π/2;
mesh hulls to twice the largest jitter _mesh.py may apply (JITTER_STEPS[-1] of the mesh's size)."""

from __future__ import annotations

import math
import re
import sys
from pathlib import Path

import numpy as np
import pytest

from tumble.robots._mesh import JITTER_STEPS
from tumble.robots.description import RobotDescription
from tumble.robots.urdf import read_urdf
from tumble.shapes import Box, Capsule, ConvexHull, Cylinder, Ellipsoid, Sphere

# ---------------------------------------------------------------------------------------------------------------
# helpers
# ---------------------------------------------------------------------------------------------------------------


def rot_x(a: float) -> np.ndarray:
    c, s = math.cos(a), math.sin(a)
    return np.array([[1, 0, 0], [0, c, -s], [0, s, c]])


def rot_y(a: float) -> np.ndarray:
    c, s = math.cos(a), math.sin(a)
    return np.array([[c, 0, s], [0, 1, 0], [-s, 0, c]])


def rot_z(a: float) -> np.ndarray:
    c, s = math.cos(a), math.sin(a)
    return np.array([[c, -s, 0], [s, c, 0], [0, 0, 1]])


def axis_angle(axis: np.ndarray, angle: float) -> np.ndarray:
    """Rodrigues' formula."""
    k = np.asarray(axis, dtype=float) / np.linalg.norm(axis)
    K = np.array([[0, -k[2], k[1]], [k[2], 0, -k[0]], [-k[1], k[0], 0]])
    return np.eye(3) + math.sin(angle) * K + (1 - math.cos(angle)) * K @ K


def quat_to_matrix(q) -> np.ndarray:
    w, x, y, z = np.asarray(q, dtype=float) / np.linalg.norm(q)
    return np.array([[1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)],
                     [2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)],
                     [2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)]])


def forward_kinematics(robot: RobotDescription, q: dict) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """Each link's frame (position (3,), rotation (3, 3)) in the root frame, by description.py's convention:
    child = parent ∘ (origin_xyz, origin_rotation) ∘ motion(q). ``q[joint]``: an angle, a distance, a
    quaternion (w, x, y, z) for a spherical joint, or (position (3,), rotation (3, 3)) for a floating one; absent
    joints are at 0."""
    pose = {robot.links[0].name: (np.zeros(3), np.eye(3))}
    for joint in robot.joints:   # parents come before children (depth-first order)
        p, R = pose[joint.parent]
        p, R = p + R @ joint.origin_xyz, R @ joint.origin_rotation
        value = q.get(joint.name)
        if value is not None:
            if joint.type in ("revolute", "continuous"):
                R = R @ axis_angle(joint.axis, value)
            elif joint.type == "prismatic":
                p = p + R @ (joint.axis * value)
            elif joint.type == "spherical":
                R = R @ quat_to_matrix(value)
            elif joint.type == "floating":
                p, R = p + R @ np.asarray(value[0]), R @ np.asarray(value[1])
        pose[joint.child] = (p, R)
    return pose


def write(folder: Path, text: str, name: str = "robot.urdf") -> Path:
    path = folder / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def urdf(body: str) -> str:
    return f'<?xml version="1.0"?>\n<robot name="test">\n{body}\n</robot>\n'


def pybullet_data_path() -> Path:
    pybullet_data = pytest.importorskip("pybullet_data")
    return Path(pybullet_data.getDataPath())


def box_mesh(folder: Path, name: str, lower, upper) -> Path:
    """An axis-aligned box mesh from ``lower`` to ``upper`` [m] written by trimesh; returns its path."""
    trimesh = pytest.importorskip("trimesh")
    lower, upper = np.asarray(lower, float), np.asarray(upper, float)
    mesh = trimesh.creation.box(extents=upper - lower)
    mesh.apply_translation((lower + upper) / 2)
    path = folder / name
    path.parent.mkdir(parents=True, exist_ok=True)
    mesh.export(path)
    return path


def corners(lower, upper) -> np.ndarray:
    return np.array([[x, y, z] for x in (lower[0], upper[0]) for y in (lower[1], upper[1])
                     for z in (lower[2], upper[2])], dtype=float)


def geom_vertices(geom) -> np.ndarray:
    """A hull geom's vertices in its link frame."""
    return geom.position + geom.shape.vertices @ geom.rotation.T


def same_points(a: np.ndarray, b: np.ndarray, atol: float) -> bool:
    """Every point of a is within atol of some point of b, and the other way round."""
    d = np.linalg.norm(a[:, None, :] - b[None, :, :], axis=2)
    return bool(d.min(axis=1).max() < atol and d.min(axis=0).max() < atol)


# ---------------------------------------------------------------------------------------------------------------
# URDF: pybullet_data files
# ---------------------------------------------------------------------------------------------------------------

KUKA_LIMITS = [2.96705972839, 2.09439510239, 2.96705972839, 2.09439510239, 2.96705972839, 2.09439510239,
               3.05432619099]   # kuka_iiwa/model.urdf, <limit lower=-x upper=x>
KUKA_MASSES = [0.0, 4.0, 4.0, 3.0, 2.7, 1.7, 1.8, 0.3]   # <mass value> of lbr_iiwa_link_0..7


def test_kuka_iiwa_joints_limits_and_masses():
    pytest.importorskip("trimesh")
    robot = read_urdf(pybullet_data_path() / "kuka_iiwa" / "model.urdf")
    assert [link.name for link in robot.links] == [f"lbr_iiwa_link_{i}" for i in range(8)]
    assert [j.name for j in robot.joints] == [f"lbr_iiwa_joint_{i}" for i in range(1, 8)]
    assert robot.root == "lbr_iiwa_link_0" and robot.name == "lbr_iiwa"
    for k, joint in enumerate(robot.joints):
        assert joint.type == "revolute"
        assert (joint.parent, joint.child) == (f"lbr_iiwa_link_{k}", f"lbr_iiwa_link_{k + 1}")
        assert (joint.lower, joint.upper) == (-KUKA_LIMITS[k], KUKA_LIMITS[k])
        assert (joint.effort, joint.velocity) == (300.0, 10.0)
        np.testing.assert_array_equal(joint.axis, [0, 0, 1])
        assert (joint.damping, joint.friction, joint.armature) == (0.5, 0.0, 0.0)   # <dynamics damping="0.5"/>
    assert [link.mass for link in robot.links] == KUKA_MASSES
    assert sum(link.mass for link in robot.links) == pytest.approx(17.5, abs=1e-12)
    link1 = robot.links[1]   # <origin xyz="0 -0.03 0.12"/>, ixx=0.1 iyy=0.09 izz=0.02, rpy 0
    np.testing.assert_array_equal(link1.com, [0.0, -0.03, 0.12])
    np.testing.assert_array_equal(link1.inertia, np.diag([0.1, 0.09, 0.02]))
    assert all(len(link.geoms) == 1 and isinstance(link.geoms[0].shape, ConvexHull) for link in robot.links)
    np.testing.assert_array_equal(robot.joints[1].origin_xyz, [0, 0, 0.2025])
    assert robot.skipped == []


def test_kuka_iiwa_collision_hulls_sit_where_the_meshes_are():
    trimesh = pytest.importorskip("trimesh")
    data = pybullet_data_path()
    robot = read_urdf(data / "kuka_iiwa" / "model.urdf")
    for k, link in enumerate(robot.links):
        mesh = trimesh.load(data / "kuka_iiwa" / "meshes" / f"link_{k}.stl", force="mesh")
        hull = trimesh.convex.convex_hull(mesh)
        got = geom_vertices(link.geoms[0])
        size = float(np.linalg.norm(mesh.vertices.max(axis=0) - mesh.vertices.min(axis=0)))
        tol = 2 * JITTER_STEPS[-1] * size   # twice the largest move _mesh.py may make, per coordinate
        np.testing.assert_allclose(got.min(axis=0), mesh.vertices.min(axis=0), atol=tol)
        np.testing.assert_allclose(got.max(axis=0), mesh.vertices.max(axis=0), atol=tol)
        assert link.geoms[0].shape.volume == pytest.approx(hull.volume, rel=1e-3)


def test_kuka_iiwa_link_frames_match_pybullet():
    """The frames the description's origins, rpy and axes give equal PyBullet's own forward kinematics."""
    p = pytest.importorskip("pybullet")
    pytest.importorskip("trimesh")
    data = pybullet_data_path()
    robot = read_urdf(data / "kuka_iiwa" / "model.urdf")
    client = p.connect(p.DIRECT)
    try:
        body = p.loadURDF(str(data / "kuka_iiwa" / "model.urdf"), useFixedBase=True, physicsClientId=client)
        rng = np.random.default_rng(1)
        for _ in range(5):
            q = rng.uniform(-2.0, 2.0, 7)
            for i in range(7):
                p.resetJointState(body, i, q[i], physicsClientId=client)
            ours = forward_kinematics(robot, {f"lbr_iiwa_joint_{i + 1}": q[i] for i in range(7)})
            theirs = []
            for i in range(7):
                state = p.getLinkState(body, i, computeForwardKinematics=True, physicsClientId=client)
                theirs.append((np.array(state[4]), np.array(p.getMatrixFromQuaternion(state[5])).reshape(3, 3)))
            # PyBullet places the base by its inertial frame: compare every link relative to link 1.
            p1, R1 = ours["lbr_iiwa_link_1"]
            b1, S1 = theirs[0]
            for i in range(1, 7):
                pk, Rk = ours[f"lbr_iiwa_link_{i + 1}"]
                bk, Sk = theirs[i]
                np.testing.assert_allclose(R1.T @ (pk - p1), S1.T @ (bk - b1), atol=1e-6)
                np.testing.assert_allclose(R1.T @ Rk, S1.T @ Sk, atol=1e-6)
    finally:
        p.disconnect(client)


def test_humanoid_urdf_spherical_joints_and_total_mass_match_pybullet():
    """pybullet_data/humanoid/humanoid.urdf: PyBullet's spherical joints, CRLF lines and a NUL after </robot>."""
    p = pytest.importorskip("pybullet")
    path = pybullet_data_path() / "humanoid" / "humanoid.urdf"
    robot = read_urdf(path)
    text = path.read_bytes().decode("ascii", "replace")
    written = dict(re.findall(r'<joint name="(\w+)" type="(\w+)"', text))
    assert {j.name: j.type for j in robot.joints} == written
    assert sum(j.type == "spherical" for j in robot.joints) == 8
    client = p.connect(p.DIRECT)
    try:
        body = p.loadURDF(str(path), physicsClientId=client)
        masses = [p.getDynamicsInfo(body, i, physicsClientId=client)[0]
                  for i in range(-1, p.getNumJoints(body, physicsClientId=client))]
    finally:
        p.disconnect(client)
    assert sum(link.mass for link in robot.links) == pytest.approx(sum(masses), rel=1e-12)


# ---------------------------------------------------------------------------------------------------------------
# URDF: hand-written files
# ---------------------------------------------------------------------------------------------------------------


def test_rotated_inertial_is_expressed_in_link_axes(tmp_path):
    """<inertial> origin rpy = (π/2, 0, π/2): R = Rz(90°) Rx(90°) maps the inertial frame's x, y, z onto the
    link's y, z, x, so R I Rᵀ has I'_yy = I_xx, I'_zz = I_yy, I'_xx = I_zz and I'_yz = I_xy (worked by hand;
    Rᵀ I R would give I'_zz = I_xx instead)."""
    path = write(tmp_path, urdf('''
      <link name="base">
        <inertial>
          <origin xyz="0.1 -0.2 0.3" rpy="1.5707963267948966 0 1.5707963267948966"/>
          <mass value="2.5"/>
          <inertia ixx="1.0" ixy="0.1" ixz="0" iyy="2.0" iyz="0" izz="2.5"/>
        </inertial>
      </link>'''))
    link = read_urdf(path).links[0]
    assert link.mass == 2.5
    np.testing.assert_array_equal(link.com, [0.1, -0.2, 0.3])
    np.testing.assert_allclose(link.inertia, [[2.5, 0.0, 0.0], [0.0, 1.0, 0.1], [0.0, 0.1, 2.0]], atol=1e-15)


def test_rpy_origin_is_fixed_axis_roll_pitch_yaw(tmp_path):
    """URDF spec: rpy are fixed-axis roll (x), pitch (y), yaw (z): R = Rz(y) Ry(p) Rx(r). For (π/2, 0, π/2):
    x → y, y → z, z → x (worked by hand); for a generic triple, the product of the elementary matrices."""
    path = write(tmp_path, urdf('''
      <link name="a"/><link name="b"/><link name="c"/>
      <joint name="j1" type="fixed"><parent link="a"/><child link="b"/>
        <origin xyz="1 2 3" rpy="1.5707963267948966 0 1.5707963267948966"/></joint>
      <joint name="j2" type="fixed"><parent link="b"/><child link="c"/>
        <origin rpy="0.3 -0.5 1.2"/></joint>'''))
    j1, j2 = read_urdf(path).joints
    np.testing.assert_allclose(j1.origin_rotation, [[0, 0, 1], [1, 0, 0], [0, 1, 0]], atol=1e-15)
    np.testing.assert_array_equal(j1.origin_xyz, [1, 2, 3])
    np.testing.assert_allclose(j2.origin_rotation, rot_z(1.2) @ rot_y(-0.5) @ rot_x(0.3), atol=1e-15)
    np.testing.assert_array_equal(j2.origin_xyz, [0, 0, 0])


def test_links_and_joints_are_depth_first_in_joint_order(tmp_path):
    """Children in the order their joints appear in the file, whatever the order of the <link>s."""
    path = write(tmp_path, urdf('''
      <link name="c"/><link name="d"/><link name="a"/><link name="root"/><link name="b"/>
      <joint name="jb" type="fixed"><parent link="root"/><child link="b"/></joint>
      <joint name="ja" type="fixed"><parent link="root"/><child link="a"/></joint>
      <joint name="jc" type="fixed"><parent link="a"/><child link="c"/></joint>
      <joint name="jd" type="fixed"><parent link="b"/><child link="d"/></joint>'''))
    robot = read_urdf(path)
    assert [link.name for link in robot.links] == ["root", "b", "d", "a", "c"]
    assert [j.name for j in robot.joints] == ["jb", "jd", "ja", "jc"]
    assert all(j.child == link.name for j, link in zip(robot.joints, robot.links[1:], strict=True))


def test_joint_types_limits_and_dynamics(tmp_path):
    links = "".join(f'<link name="l{i}"/>' for i in range(9))
    path = write(tmp_path, urdf(links + '''
      <joint name="rev" type="revolute"><parent link="l0"/><child link="l1"/><axis xyz="0 0 2"/>
        <limit lower="-1" upper="1.5" effort="20" velocity="3"/><dynamics damping="0.4" friction="0.2"/></joint>
      <joint name="rev_default" type="revolute"><parent link="l1"/><child link="l2"/>
        <limit effort="5" velocity="1"/></joint>
      <joint name="cont" type="continuous"><parent link="l2"/><child link="l3"/><axis xyz="0 1 0"/>
        <limit lower="-1" upper="1" effort="0" velocity="0"/></joint>
      <joint name="pri" type="prismatic"><parent link="l3"/><child link="l4"/><axis xyz="3 4 0"/>
        <limit lower="-0.1" upper="0.2"/></joint>
      <joint name="pri_open" type="prismatic"><parent link="l4"/><child link="l5"/>
        <limit lower="1" upper="-1"/></joint>
      <joint name="ball" type="spherical"><parent link="l5"/><child link="l6"/><axis xyz="0 0 0"/></joint>
      <joint name="free" type="floating"><parent link="l6"/><child link="l7"/></joint>
      <joint name="weld" type="fixed"><parent link="l7"/><child link="l8"/><axis xyz="0 0 0"/></joint>'''))
    joints = {j.name: j for j in read_urdf(path).joints}
    rev = joints["rev"]
    np.testing.assert_array_equal(rev.axis, [0, 0, 1])
    assert (rev.type, rev.lower, rev.upper, rev.effort, rev.velocity) == ("revolute", -1.0, 1.5, 20.0, 3.0)
    assert (rev.damping, rev.friction, rev.armature) == (0.4, 0.2, 0.0)
    default = joints["rev_default"]   # spec: lower/upper default to 0; <axis> defaults to (1, 0, 0)
    assert (default.lower, default.upper) == (0.0, 0.0)
    np.testing.assert_array_equal(default.axis, [1, 0, 0])
    cont = joints["cont"]             # no position limits; effort/velocity 0 = unspecified
    assert (cont.lower, cont.upper, cont.effort, cont.velocity) == (-np.inf, np.inf, np.inf, np.inf)
    pri = joints["pri"]
    np.testing.assert_allclose(pri.axis, [0.6, 0.8, 0.0], atol=1e-15)
    assert (pri.lower, pri.upper, pri.effort) == (-0.1, 0.2, np.inf)
    assert (joints["pri_open"].lower, joints["pri_open"].upper) == (-np.inf, np.inf)
    assert [joints[n].type for n in ("ball", "free", "weld")] == ["spherical", "floating", "fixed"]


def test_primitive_collision_shapes(tmp_path):
    path = write(tmp_path, urdf('''
      <link name="a">
        <collision><origin xyz="0 0 0.5" rpy="0 1.5707963267948966 0"/>
          <geometry><box size="0.1 0.2 0.3"/></geometry></collision>
        <collision><geometry><sphere radius="0.25"/></geometry></collision>
        <collision><geometry><cylinder radius="0.05" length="0.4"/></geometry></collision>
        <collision><geometry><capsule radius="0.03" length="0.2"/></geometry></collision>
        <visual><geometry><box size="9 9 9"/></geometry></visual>
      </link>
      <link name="b"><visual><geometry><sphere radius="1"/></geometry></visual></link>
      <joint name="j" type="fixed"><parent link="a"/><child link="b"/></joint>'''))
    a, b = read_urdf(path).links
    box, sphere, cylinder, capsule = (g.shape for g in a.geoms)
    assert box == Box(0.1, 0.2, 0.3)            # URDF box size = full side lengths, like tumble's Box
    assert sphere == Sphere(0.25)
    assert cylinder == Cylinder(0.05, 0.4)      # both along their frame's z
    assert capsule == Capsule(0.03, 0.2)
    np.testing.assert_array_equal(a.geoms[0].position, [0, 0, 0.5])
    np.testing.assert_allclose(a.geoms[0].rotation, [[0, 0, 1], [0, 1, 0], [-1, 0, 0]], atol=1e-15)
    assert b.geoms == []                        # visuals are not collision shapes


def test_massless_links_are_allowed(tmp_path):
    path = write(tmp_path, urdf('''
      <link name="a"><inertial><mass value="0"/>
        <inertia ixx="0" ixy="0" ixz="0" iyy="0" iyz="0" izz="0"/></inertial></link>
      <link name="b"><inertial><mass value="0"/>
        <inertia ixx="0.1" ixy="0" ixz="0" iyy="0.1" iyz="0" izz="0.1"/></inertial></link>
      <link name="c"/>
      <joint name="j1" type="fixed"><parent link="a"/><child link="b"/></joint>
      <joint name="j2" type="fixed"><parent link="b"/><child link="c"/></joint>
      <joint name="j3" type="continuous"><parent link="c"/><child link="d"/><mimic joint="j1"/></joint>
      <link name="d"/>'''))
    robot = read_urdf(path)
    assert [link.mass for link in robot.links] == [0.0, 0.0, 0.0, 0.0]
    np.testing.assert_array_equal(robot.links[1].inertia, 0.1 * np.eye(3))
    assert robot.skipped == ["joint 'j3': <mimic> ignored, the joint moves on its own"]


def test_mesh_hull_sits_where_the_mesh_is(tmp_path):
    """An off-centre box mesh, scaled and placed by its <collision> origin: the hull's vertices in the link
    frame are the file's corners, scaled, rotated and moved, worked out here from the spec's definitions."""
    lower, upper = np.array([1.0, 2.0, 3.0]), np.array([1.2, 2.4, 3.6])
    box_mesh(tmp_path, "meshes/box.obj", lower, upper)
    path = write(tmp_path, urdf('''
      <link name="a"><collision>
        <origin xyz="0.5 -0.25 1" rpy="0 0 1.5707963267948966"/>
        <geometry><mesh filename="meshes/box.obj" scale="2 1 0.5"/></geometry>
      </collision></link>'''))
    (geom,) = read_urdf(path).links[0].geoms
    expected = corners(lower, upper) * [2.0, 1.0, 0.5] @ rot_z(math.pi / 2).T + [0.5, -0.25, 1.0]
    assert isinstance(geom.shape, ConvexHull) and geom.shape.vertices.shape == (8, 3)
    assert same_points(geom_vertices(geom), expected, atol=1e-12)
    assert geom.shape.volume == pytest.approx(0.4 * 0.4 * 0.3, rel=1e-12)


@pytest.mark.parametrize("scheme", ["package", "package_root", "file", "relative_up"])
def test_mesh_filenames(tmp_path, scheme):
    """package://PKG/REST from a URDF in PKG/urdf/ (found as PKG/REST above it, or REST in PKG); file://."""
    mesh = box_mesh(tmp_path, "my_robot/meshes/cube.stl", [0, 0, 0], [1, 1, 1])
    filename = {"package": "package://my_robot/meshes/cube.stl", "package_root": "package://other/meshes/cube.stl",
                "file": f"file://{mesh}", "relative_up": "../meshes/cube.stl"}[scheme]
    path = write(tmp_path, urdf(f'<link name="a"><collision><geometry><mesh filename="{filename}"/></geometry>'
                                f'</collision></link>'), "my_robot/urdf/robot.urdf")
    (geom,) = read_urdf(path).links[0].geoms
    assert same_points(geom_vertices(geom), corners([0, 0, 0], [1, 1, 1]), atol=1e-12)


def test_convex_decomposition_gives_several_hulls_inside_the_mesh(tmp_path):
    trimesh = pytest.importorskip("trimesh")
    pytest.importorskip("vhacdx")
    parts = [trimesh.creation.box(extents=(1.0, 0.2, 0.2)), trimesh.creation.box(extents=(0.2, 1.0, 0.2))]
    parts[0].apply_translation((0.5, 0.1, 0.1))
    parts[1].apply_translation((0.1, 0.5, 0.1))
    trimesh.util.concatenate(parts).export(tmp_path / "ell.obj")   # an L: [0,1]×[0,.2] ∪ [0,.2]×[0,1], z ∈ [0,.2]
    text = urdf('<link name="a"><collision><geometry><mesh filename="ell.obj"/></geometry></collision></link>')
    path = write(tmp_path, text)
    (whole,) = read_urdf(path).links[0].geoms
    pieces = read_urdf(path, convex_decomposition=True).links[0].geoms
    assert whole.shape.volume == pytest.approx(0.2 * (1 - 0.8**2 / 2), rel=1e-9)   # the L's hull: a prism
    assert len(pieces) > 1
    points = np.vstack([geom_vertices(g) for g in pieces])
    inside = ((points[:, 1] <= 0.2 + 1e-6) | (points[:, 0] <= 0.2 + 1e-6)) & np.all(points >= -1e-6, axis=1)
    assert inside.all() and points.max() <= 1.0 + 1e-6
    assert sum(g.shape.volume for g in pieces) == pytest.approx(0.36 * 0.2, rel=0.1)   # the L's volume


# ---------------------------------------------------------------------------------------------------------------
# URDF: errors — type, and a message that names the file, the element and its name
# ---------------------------------------------------------------------------------------------------------------

FIXED = '<joint name="{n}" type="fixed"><parent link="{p}"/><child link="{c}"/></joint>'


def fixed(n: str, p: str, c: str) -> str:
    return FIXED.format(n=n, p=p, c=c)


INERTIAL = ('<inertial><mass value="{m}"/><inertia ixx="{i[0]}" ixy="0" ixz="0" iyy="{i[1]}" iyz="0" '
            'izz="{i[2]}"/></inertial>')

BAD_URDF = [
    # (id, text, phrases the message must hold besides the file name)
    ("not xml", "<robot><link name='a'></robot>", ["not well-formed XML", "line 1"]),
    ("empty", "", ["not well-formed XML"]),
    ("root", urdf("").replace("robot", "sdf"), ["<sdf", "must be <robot>"]),
    ("xacro", urdf('<xacro:macro name="leg"/><link name="a"/>'), ['<xacro:macro name="leg">', "xacro"]),
    ("no link", urdf(""), ["<robot", "no <link>"]),
    ("link name", urdf("<link/>"), ["<link>", "name"]),
    ("duplicate link", urdf('<link name="a"/><link name="a"/>'), ['<link name="a">', "second link named 'a'"]),
    ("duplicate joint", urdf('<link name="a"/><link name="b"/><link name="c"/>' + fixed("j", "a", "b")
                             + fixed("j", "b", "c")), ['<joint name="j">', "second joint named 'j'"]),
    ("missing parent", urdf('<link name="b"/>' + fixed("j", "ghost", "b")),
     ['<joint name="j">', "parent link 'ghost'"]),
    ("missing child", urdf('<link name="a"/>' + fixed("j", "a", "ghost")), ['<joint name="j">', "'ghost'"]),
    ("no child element", urdf('<link name="a"/><joint name="j" type="fixed"><parent link="a"/></joint>'),
     ['<joint name="j">', "<child link"]),
    ("two parents", urdf('<link name="a"/><link name="b"/><link name="c"/>' + fixed("j1", "a", "c")
                         + fixed("j2", "b", "c")), ['<joint name="j2">', "already the child of joint 'j1'"]),
    ("self loop", urdf('<link name="a"/>' + fixed("j", "a", "a")), ['<joint name="j">', "to itself"]),
    ("loop", urdf('<link name="r"/><link name="a"/><link name="b"/>' + fixed("j1", "a", "b")
                  + fixed("j2", "b", "a")), ['<joint name="j', "kinematic loop", "'a'", "'b'"]),
    ("all in a loop", urdf('<link name="a"/><link name="b"/>' + fixed("j1", "a", "b") + fixed("j2", "b", "a")),
     ['<robot name="test">', "kinematic loop"]),
    ("forest", urdf('<link name="a"/><link name="b"/>'), ['<robot name="test">', "2 separate trees", "'a', 'b'"]),
    ("negative mass", urdf('<link name="a">' + INERTIAL.format(m=-1, i=(1, 1, 1)) + "</link>"),
     ['<mass>', '<link name="a">', "mass must be >= 0"]),
    ("no mass", urdf('<link name="a"><inertial/></link>'), ['<inertial>', '<link name="a">', "<mass"]),
    ("not positive definite", urdf('<link name="a">' + INERTIAL.format(m=1, i=(1, -1, 1)) + "</link>"),
     ['<inertia>', '<link name="a">', "positive definite"]),
    ("triangle", urdf('<link name="a">' + INERTIAL.format(m=1, i=(1, 1, 3)) + "</link>"),   # (strict=True)
     ['<inertia>', '<link name="a">', "triangle inequality", "(strict=True)"]),
    ("point mass", urdf('<link name="a">' + INERTIAL.format(m=2, i=(0, 0, 0)) + "</link>"),
     ['<inertia>', '<link name="a">', "zero inertia"]),
    ("massless with bad inertia", urdf('<link name="a">' + INERTIAL.format(m=0, i=(1, 1, -1)) + "</link>"),
     ['<inertia>', '<link name="a">', "positive definite"]),
    ("joint type", urdf('<link name="a"/><link name="b"/>'
                        '<joint name="j" type="hinge"><parent link="a"/><child link="b"/></joint>'),
     ['<joint name="j">', "unknown joint type 'hinge'"]),
    ("planar", urdf('<link name="a"/><link name="b"/>'
                    '<joint name="j" type="planar"><parent link="a"/><child link="b"/></joint>'),
     ['<joint name="j">', "planar joints are not supported"]),
    ("zero axis", urdf('<link name="a"/><link name="b"/><joint name="j" type="continuous"><parent link="a"/>'
                       '<child link="b"/><axis xyz="0 0 0"/></joint>'), ['<joint name="j">', "must not be zero"]),
    ("no limit", urdf('<link name="a"/><link name="b"/>'
                      '<joint name="j" type="revolute"><parent link="a"/><child link="b"/></joint>'),
     ['<joint name="j">', "needs a <limit>"]),
    ("negative effort", urdf('<link name="a"/><link name="b"/><joint name="j" type="revolute"><parent link="a"/>'
                             '<child link="b"/><limit effort="-1" velocity="1"/></joint>'),
     ['<limit>', '<joint name="j">', "effort must be >= 0"]),
    ("negative damping", urdf('<link name="a"/><link name="b"/><joint name="j" type="continuous">'
                              '<parent link="a"/><child link="b"/><dynamics damping="-2"/></joint>'),
     ['<dynamics>', '<joint name="j">', "damping must be >= 0"]),
    ("not a number", urdf('<link name="a"/><link name="b"/><joint name="j" type="fixed"><parent link="a"/>'
                          '<child link="b"/><origin xyz="1 two 3"/></joint>'), ["<origin>", "xyz='1 two 3'"]),
    ("count", urdf('<link name="a"><collision><geometry><box size="1 1"/></geometry></collision></link>'),
     ['<box>', '<link name="a">', "size='1 1' must be 3 numbers"]),
    ("nan", urdf('<link name="a"><collision><geometry><sphere radius="nan"/></geometry></collision></link>'),
     ['<sphere>', '<link name="a">', "radius='nan'"]),
    ("shape size", urdf('<link name="a"><collision><geometry><box size="1 0 1"/></geometry></collision></link>'),
     ['<box>', '<link name="a">', "ly"]),
    ("unknown geometry", urdf('<link name="a"><collision><geometry><cone/></geometry></collision></link>'),
     ['<cone>', '<link name="a">', "unknown geometry"]),
    ("plane", urdf('<link name="a"><collision><geometry><plane normal="0 0 1"/></geometry></collision></link>'),
     ['<plane>', '<link name="a">', "ground"]),
    ("no geometry", urdf('<link name="a"><collision/></link>'), ['<collision>', '<link name="a">', "<geometry>"]),
    ("missing mesh", urdf('<link name="a"><collision><geometry><mesh filename="nowhere/m.stl"/></geometry>'
                          '</collision></link>'), ['<mesh>', '<link name="a">', "'nowhere/m.stl' not found"]),
    ("mesh scheme", urdf('<link name="a"><collision><geometry><mesh filename="http://x/m.stl"/></geometry>'
                         '</collision></link>'), ['<mesh>', '<link name="a">', "package:// and file://"]),
]


@pytest.mark.parametrize("text, phrases", [pytest.param(t, p, id=i) for i, t, p in BAD_URDF])
def test_bad_urdf_is_refused_with_a_message_naming_file_and_element(tmp_path, text, phrases):
    """(strict=True: an impossible inertia is otherwise loaded with a warning, tests/robots/test_bad_descriptions.py)"""
    path = write(tmp_path, text)
    with pytest.raises(ValueError) as info:
        read_urdf(path, strict=True)
    message = str(info.value)
    assert message.startswith(str(path))
    for phrase in phrases:
        assert phrase in message, (phrase, message)


def test_messages_give_the_line_and_tolerate_pybullet_quirks(tmp_path):
    """White space before the XML declaration and NUL bytes after the root (files PyBullet reads) are accepted;
    errors give the line of the offending element."""
    text = "\n  " + urdf('<link name="a"/>\n<link name="b"/>\n' + fixed("j", "a", "b")) + "\x00\x00"
    assert [link.name for link in read_urdf(write(tmp_path, text)).links] == ["a", "b"]
    text = urdf('<link name="a"/>\n<link name="b"/>\n<joint name="j" type="bad"/>')   # the joint: line 5
    with pytest.raises(ValueError, match=r'line 5: <joint name="j">'):
        read_urdf(write(tmp_path, text))


def test_not_a_urdf_file(tmp_path):
    with pytest.raises(ValueError, match="no such URDF file"):
        read_urdf(tmp_path / "absent.urdf")
    with pytest.raises(ValueError, match="it is a folder"):
        read_urdf(tmp_path)


def test_unreadable_mesh_names_the_file(tmp_path):
    pytest.importorskip("trimesh")
    (tmp_path / "broken.stl").write_bytes(b"solid x\n facet normal 0 0 1\n  outer loop\n   vertex 0 0 oops\n")
    path = write(tmp_path, urdf('<link name="a"><collision><geometry><mesh filename="broken.stl"/></geometry>'
                                '</collision></link>'))
    with pytest.raises(ValueError) as info:
        read_urdf(path)
    assert str(info.value).startswith(str(path)) and "broken.stl" in str(info.value)
    assert '<link name="a">' in str(info.value)


def test_flat_mesh_is_refused_naming_the_file(tmp_path):
    trimesh = pytest.importorskip("trimesh")
    trimesh.Trimesh([[0, 0, 0], [1, 0, 0], [0, 1, 0], [1, 1, 0]], [[0, 1, 2], [1, 3, 2]]).export(tmp_path / "flat.obj")
    path = write(tmp_path, urdf('<link name="a"><collision><geometry><mesh filename="flat.obj"/></geometry>'
                                '</collision></link>'))
    with pytest.raises(ValueError, match=r"flat\.obj.*(coplanar|degenerate)"):
        read_urdf(path)


def test_missing_optional_packages_say_what_to_install(tmp_path, monkeypatch):
    box_mesh(tmp_path, "cube.stl", [0, 0, 0], [1, 1, 1])
    path = write(tmp_path, urdf('<link name="a"><collision><geometry><mesh filename="cube.stl"/></geometry>'
                                '</collision></link>'))
    monkeypatch.setitem(sys.modules, "trimesh", None)
    with pytest.raises(ImportError, match=r'pip install "tumble\[robots\]"'):
        read_urdf(path)
    monkeypatch.undo()   # trimesh back; the decomposition's V-HACD bindings gone
    monkeypatch.setitem(sys.modules, "vhacdx", None)
    with pytest.raises(ImportError, match="convex_decomposition=True .* pip install vhacdx"):
        read_urdf(path, convex_decomposition=True)


# ---------------------------------------------------------------------------------------------------------------
# MJCF
# ---------------------------------------------------------------------------------------------------------------


def capsule_mass(radius: float, length: float, density: float = 1000.0) -> float:
    """MuJoCo's default density (1000 kg/m³) times a capsule's volume π r² L + 4/3 π r³."""
    return density * (math.pi * radius**2 * length + 4.0 / 3.0 * math.pi * radius**3)


def test_inverted_double_pendulum_mjcf():
    pytest.importorskip("mujoco")
    from tumble.robots.mjcf import read_mjcf

    robot = read_mjcf(pybullet_data_path() / "mjcf" / "inverted_double_pendulum.xml")
    assert robot.name == "cartpole"
    assert [link.name for link in robot.links] == ["world", "cart", "pole", "pole2"]
    slider, hinge, hinge2 = robot.joints
    assert (slider.name, slider.type, slider.parent, slider.child) == ("slider", "prismatic", "world", "cart")
    assert (slider.lower, slider.upper) == (-1.0, 1.0)
    assert slider.effort == 500.0                         # motor gear 500, ctrlrange ±1
    np.testing.assert_array_equal(slider.axis, [1, 0, 0])
    for joint in (hinge, hinge2):                         # hinges without range: continuous
        assert (joint.type, joint.lower, joint.upper, joint.effort) == ("continuous", -np.inf, np.inf, np.inf)
        np.testing.assert_array_equal(joint.axis, [0, 1, 0])
    assert [j.damping for j in robot.joints] == [0.05, 0.05, 0.05]   # <default><joint damping="0.05"/>
    np.testing.assert_array_equal(hinge2.origin_xyz, [0, 0, 0.6])
    world, cart, pole, pole2 = robot.links
    assert world.mass == 0.0 and world.geoms == []
    assert cart.mass == pytest.approx(capsule_mass(0.1, 0.2), rel=1e-12)      # size="0.1 0.1": r, half-length
    for link in (pole, pole2):                                                  # fromto 0 → 0.6, radius 0.045
        assert link.mass == pytest.approx(capsule_mass(0.045, 0.6), rel=1e-12)
        np.testing.assert_allclose(link.com, [0, 0, 0.3], atol=1e-12)
        (geom,) = link.geoms
        assert geom.shape == Capsule(0.045, 0.6)
        np.testing.assert_allclose(geom.position, [0, 0, 0.3], atol=1e-12)
        np.testing.assert_allclose(abs(geom.rotation[:, 2]), [0, 0, 1], atol=1e-12)   # ±z: a symmetric shape
    (geom,) = cart.geoms                                  # quat="0.707 0 0.707 0": the capsule lies along x
    np.testing.assert_allclose(abs(geom.rotation[:, 2]), [1, 0, 0], atol=1e-12)
    assert robot.skipped == ["geom 'floor': on the world body, not part of the robot",
                             "geom 'rail': on the world body, not part of the robot"]


ARM_MJCF = """<mujoco model="arm">
  <compiler autolimits="true"/>
  <default>
    <joint damping="0.5"/>
    <geom density="500"/>
    <default class="knuckle">
      <joint type="hinge" axis="0 1 0" armature="0.01" range="-45 90"/>
      <geom type="box" size="0.05 0.1 0.2"/>
    </default>
    <default class="visual"><geom contype="0" conaffinity="0" density="0"/></default>
  </default>
  <asset><mesh name="block" file="block.obj"/></asset>
  <worldbody>
    <geom name="floor" type="plane" size="5 5 0.1"/>
    <body name="base" pos="0.1 0 0.5" euler="0 0 90" childclass="knuckle">
      <joint name="j1" pos="0.05 0 0.1" axis="1 0 0" ref="30" stiffness="4" springref="40"/>
      <joint name="j2" pos="0.2 0 0" actuatorfrcrange="-20 20"/>
      <geom name="base_box" pos="0.3 0 0"/>
      <geom name="shell" class="visual" type="sphere" size="0.5"/>
      <body name="forearm" pos="0 0 0.4" axisangle="1 0 0 90">
        <joint name="slide" type="slide" axis="0 0 1" range="-0.1 0.2" damping="2" stiffness="3"/>
        <inertial pos="0 0.1 0" mass="1.5" fullinertia="0.2 0.1 0.25 0.03 0 -0.02"/>
        <geom name="bone" type="capsule" fromto="0 0 0 0 0.3 0" size="0.02"/>
        <body name="hand" pos="0 0.3 0">
          <joint name="wrist" type="ball" pos="0 0.05 0" range="0 60" stiffness="2"/>
          <geom name="palm" type="ellipsoid" size="0.03 0.04 0.05"/>
          <geom name="block" type="mesh" mesh="block" pos="0.1 0 0"/>
        </body>
      </body>
    </body>
    <body name="puck" pos="1 1 0.1">
      <freejoint name="puck_free"/>
      <geom type="cylinder" size="0.1 0.02"/>
    </body>
  </worldbody>
  <actuator>
    <motor joint="j2" gear="10" ctrlrange="-2 3"/>
    <position joint="j1" kp="5" forcerange="-7 7"/>
  </actuator>
</mujoco>
"""


@pytest.fixture
def arm(tmp_path):
    pytest.importorskip("mujoco")
    box_mesh(tmp_path, "block.obj", [0.0, 0.0, 0.0], [0.04, 0.06, 0.08])
    return write(tmp_path, ARM_MJCF, "arm.xml")


def test_mjcf_defaults_degrees_and_body_with_two_joints(arm):
    from tumble.robots.mjcf import read_mjcf

    robot = read_mjcf(arm)
    assert [link.name for link in robot.links] == ["world", "base__j1", "base", "forearm", "hand", "puck"]
    joints = {j.name: j for j in robot.joints}
    assert [j.name for j in robot.joints] == ["j1", "j2", "slide", "wrist", "puck_free"]
    j1, j2 = joints["j1"], joints["j2"]
    # Class "knuckle" (childclass): hinge, armature 0.01, range −45°..90°; j1's own axis and ref 30°.
    assert (j1.type, j1.parent, j1.child, j2.parent, j2.child) == ("revolute", "world", "base__j1", "base__j1", "base")
    np.testing.assert_array_equal(j1.axis, [1, 0, 0])
    np.testing.assert_array_equal(j2.axis, [0, 1, 0])
    assert j1.lower == pytest.approx(math.radians(-45 - 30), abs=1e-12)
    assert j1.upper == pytest.approx(math.radians(90 - 30), abs=1e-12)
    assert (j2.lower, j2.upper) == (pytest.approx(-math.pi / 4, abs=1e-12), pytest.approx(math.pi / 2, abs=1e-12))
    assert (j1.armature, j2.armature, j1.damping) == (0.01, 0.01, 0.5)
    assert j2.effort == 20.0                    # motor: |gear| × max |ctrl| = 30, capped by actuatorfrcrange
    assert j1.effort == 7.0                     # forcerange
    # Body "base" at (0.1, 0, 0.5) turned 90° about z; anchors (0.05, 0, 0.1) and (0.2, 0, 0) in its frame:
    # j1 at (0.1, 0, 0.5) + Rz90 (0.05, 0, 0.1); j2 at the difference of the anchors, in the body's axes.
    np.testing.assert_allclose(j1.origin_xyz, [0.1, 0.05, 0.6], atol=1e-12)
    np.testing.assert_allclose(j1.origin_rotation, rot_z(math.pi / 2), atol=1e-12)
    np.testing.assert_allclose(j2.origin_xyz, [0.15, 0.0, -0.1], atol=1e-12)
    np.testing.assert_allclose(j2.origin_rotation, np.eye(3), atol=0)
    base = robot.links[2]
    assert robot.links[1].mass == 0.0           # the massless link between the two hinges
    (box,) = base.geoms                         # the visual sphere is skipped
    assert box.shape == Box(0.1, 0.2, 0.4)      # MJCF half sizes → full sizes
    assert base.mass == pytest.approx(500 * 0.1 * 0.2 * 0.4, rel=1e-12)
    pose = forward_kinematics(robot, {})        # at q = 0 (qpos = qpos0): every frame where the file puts it
    p, R = pose["base"]
    np.testing.assert_allclose(p + R @ box.position, [0.1, 0.3, 0.5], atol=1e-12)   # (.1,0,.5) + Rz90 (.3,0,0)
    np.testing.assert_allclose(p, [0.1, 0.2, 0.5], atol=1e-12)                        # j2's anchor
    forearm = robot.links[3]
    p, R = pose["forearm"]                      # (.1,0,.5) + Rz90 (0,0,.4); axes Rz90 Rx90
    np.testing.assert_allclose(p, [0.1, 0.0, 0.9], atol=1e-12)
    np.testing.assert_allclose(R, rot_z(math.pi / 2) @ rot_x(math.pi / 2), atol=1e-12)
    assert forearm.mass == 1.5
    np.testing.assert_allclose(forearm.com, [0, 0.1, 0], atol=1e-12)
    # fullinertia = Ixx Iyy Izz Ixy Ixz Iyz, in the body's axes (MuJoCo stores it diagonalized: body_iquat).
    np.testing.assert_allclose(forearm.inertia, [[0.2, 0.03, 0], [0.03, 0.1, -0.02], [0, -0.02, 0.25]], atol=1e-12)
    (bone,) = forearm.geoms                     # fromto (0,0,0) → (0,.3,0), radius .02
    assert bone.shape == Capsule(0.02, 0.3)
    np.testing.assert_allclose(bone.position, [0, 0.15, 0], atol=1e-12)
    np.testing.assert_allclose(abs(bone.rotation[:, 2]), [0, 1, 0], atol=1e-12)
    slide = joints["slide"]
    assert (slide.type, slide.lower, slide.upper, slide.damping) == ("prismatic", -0.1, 0.2, 2.0)
    hand = robot.links[4]
    wrist = joints["wrist"]                     # ball anchored at (0, .05, 0) of hand: the link frame sits there
    assert wrist.type == "spherical"
    np.testing.assert_allclose(wrist.origin_xyz, [0, 0.35, 0], atol=1e-12)
    palm, block = hand.geoms
    assert palm.shape == Ellipsoid(0.03, 0.04, 0.05)
    np.testing.assert_allclose(palm.position, [0, -0.05, 0], atol=1e-12)
    pts = geom_vertices(block) + [0, 0.05, 0]   # in the hand body's frame: the mesh moved by pos (0.1, 0, 0)
    assert same_points(pts, corners([0.1, 0, 0], [0.14, 0.06, 0.08]), atol=1e-6)   # MuJoCo stores float32
    free = joints["puck_free"]
    assert (free.type, free.parent) == ("floating", "world")
    np.testing.assert_allclose(free.origin_xyz, [1, 1, 0.1], atol=1e-12)
    assert robot.links[5].geoms[0].shape == Cylinder(0.1, 0.04)
    assert "geom 'floor': on the world body, not part of the robot" in robot.skipped
    assert any("'shell'" in line and "visual" in line for line in robot.skipped)
    assert "joint 'wrist': ball-joint cone limit 1.0472 rad not represented" in robot.skipped   # 60°
    # springs: a hinge's rest springref − ref (degrees in the file), a slide's springref (0 by default); a ball's
    # spring is skipped
    assert (j1.stiffness, j1.spring_ref) == (4.0, pytest.approx(math.radians(40 - 30), abs=1e-12))
    assert (slide.stiffness, slide.spring_ref, j2.stiffness) == (3.0, 0.0, 0.0)
    assert "joint 'wrist': spring stiffness 2 of a spherical joint not represented" in robot.skipped
    assert not any("'slide'" in line or "'j1'" in line for line in robot.skipped)


WALKER_MJCF = """<mujoco model="walker">
  <worldbody>
    <geom name="ground" type="plane" size="5 5 0.1"/>
    <body name="torso" pos="0.2 -0.1 1.4" quat="0.9 0.1 0.3 0.2">
      <freejoint name="root"/>
      <geom type="box" size="0.2 0.1 0.05"/>
      <body name="thigh" pos="0.1 0 -0.1" euler="10 20 30">
        <joint name="hip_x" axis="1 0 0" pos="0 0.02 0"/>
        <joint name="hip_y" axis="0 1 1" pos="0 0 0.03" range="-30 60"/>
        <geom type="capsule" fromto="0 0 0 0 0 -0.4" size="0.04"/>
        <body name="shin" pos="0 0 -0.4">
          <joint name="knee" axis="0 1 0" pos="0 0 0.01"/>
          <geom type="cylinder" size="0.03 0.2" pos="0 0 -0.2"/>
        </body>
      </body>
    </body>
  </worldbody>
</mujoco>
"""


@pytest.fixture
def walker(tmp_path):
    pytest.importorskip("mujoco")
    return write(tmp_path, WALKER_MJCF, "walker.xml")


def test_mjcf_one_free_body_is_a_floating_root(walker):
    from tumble.robots.mjcf import read_mjcf

    robot = read_mjcf(walker)
    assert robot.floating
    assert [link.name for link in robot.links] == ["torso", "thigh__hip_x", "thigh", "shin"]
    assert [j.name for j in robot.joints] == ["hip_x", "hip_y", "knee"]   # the free joint is the floating base
    np.testing.assert_array_equal(robot.base_position, [0.2, -0.1, 1.4])
    np.testing.assert_allclose(robot.base_orientation, np.array([0.9, 0.1, 0.3, 0.2]) / math.sqrt(0.95),
                               atol=1e-12)
    hip_y = robot.joints[1]
    np.testing.assert_allclose(hip_y.axis, [0, math.sqrt(0.5), math.sqrt(0.5)], atol=1e-12)
    assert (hip_y.lower, hip_y.upper) == (pytest.approx(-math.pi / 6), pytest.approx(math.pi / 3))
    assert robot.skipped == ["geom 'ground': on the world body, not part of the robot"]
    assert not read_mjcf(pybullet_data_path() / "mjcf" / "inverted_double_pendulum.xml").floating


@pytest.mark.parametrize("model_file", ["arm", "walker"])
def test_mjcf_frames_match_mujoco_kinematics(model_file, request):
    """For random joint positions, every link frame, COM and geom from the description equals MuJoCo's own
    forward kinematics (mj_kinematics: xmat, xipos, geom_xpos, geom_xmat), with q = qpos − qpos0, in the
    root link's frame (the world's, or a floating root body's)."""
    mujoco = pytest.importorskip("mujoco")
    from tumble.robots.mjcf import read_mjcf

    path = request.getfixturevalue(model_file)
    robot = read_mjcf(path)
    model = mujoco.MjModel.from_xml_path(str(path))
    data = mujoco.MjData(model)
    rng = np.random.default_rng(3)
    links = {link.name: link for link in robot.links}
    root = 0 if robot.links[0].name == "world" else model.body(robot.links[0].name).id
    for _ in range(5):
        data.qpos[:] = model.qpos0
        q = {}
        for j in range(model.njnt):
            name, adr = model.joint(j).name, model.jnt_qposadr[j]
            kind = int(model.jnt_type[j])
            if kind in (int(mujoco.mjtJoint.mjJNT_HINGE), int(mujoco.mjtJoint.mjJNT_SLIDE)):
                data.qpos[adr] += rng.uniform(-0.5, 0.5)
                q[name] = data.qpos[adr] - model.qpos0[adr]
            elif kind == int(mujoco.mjtJoint.mjJNT_BALL):
                quat = rng.normal(size=4)
                data.qpos[adr:adr + 4] = quat / np.linalg.norm(quat)
                q[name] = data.qpos[adr:adr + 4].copy()
            else:   # free: a world pose; a free joint of the description: relative to its origin, the file's pose
                quat = rng.normal(size=4)
                pos, R = rng.normal(size=3), quat_to_matrix(quat)
                data.qpos[adr:adr + 3], data.qpos[adr + 3:adr + 7] = pos, quat / np.linalg.norm(quat)
                joint = next((jt for jt in robot.joints if jt.name == name), None)
                if joint is not None:
                    Ro = joint.origin_rotation
                    q[name] = (Ro.T @ (pos - joint.origin_xyz), Ro.T @ R)
        mujoco.mj_kinematics(model, data)
        pose = forward_kinematics(robot, q)
        p0, R0 = data.xpos[root], data.xmat[root].reshape(3, 3)   # MuJoCo's frames → the root link's frame

        def rel(x, R0=R0, p0=p0):
            return R0.T @ (x - p0)

        seen = {name: 0 for name in links}
        for g in range(model.ngeom):   # the description keeps each body's geoms in order, less the visual one
            body = model.body(model.geom_bodyid[g]).name
            if body == "world" or model.geom(g).name == "shell":
                continue
            geom = links[body].geoms[seen[body]]
            seen[body] += 1
            p, R = pose[body]
            xmat = data.geom_xmat[g].reshape(3, 3)
            centre = geom.shape.center if isinstance(geom.shape, ConvexHull) else np.zeros(3)   # in MuJoCo's frame
            np.testing.assert_allclose(p + R @ geom.position, rel(data.geom_xpos[g] + xmat @ centre), atol=1e-9)
            np.testing.assert_allclose(R @ geom.rotation, R0.T @ xmat, atol=1e-9)
        for b in range(1, model.nbody):
            p, R = pose[model.body(b).name]
            np.testing.assert_allclose(R, R0.T @ data.xmat[b].reshape(3, 3), atol=1e-9)   # link axes = body axes
            link = links[model.body(b).name]
            np.testing.assert_allclose(p + R @ link.com, rel(data.xipos[b]), atol=1e-9)    # the COM lands right


def test_mjcf_duplicate_generated_names_are_refused(tmp_path):
    pytest.importorskip("mujoco")
    from tumble.robots.mjcf import read_mjcf

    path = write(tmp_path, """<mujoco><worldbody>
      <body name="arm"><joint name="a"/><joint name="b"/><geom size="0.1"/></body>
      <body name="arm__a"><geom size="0.1"/></body>
    </worldbody></mujoco>""", "dup.xml")
    with pytest.raises(ValueError, match=r"dup\.xml.*'arm__a'"):
        read_mjcf(path)


BAD_MJCF = [
    ("not xml", "<mujoco><worldbody></mujoco>", ["not well-formed XML"]),
    ("root", '<robot name="r"><link name="a"/></robot>', ['<robot name="r">', "must be <mujoco>"]),
    ("compile", '<mujoco><worldbody><body name="b"><geom class="nope" size="1"/></body></worldbody></mujoco>',
     ["MuJoCo cannot compile", "nope", "line 1"]),
    ("plane on a body", '<mujoco><worldbody><body name="b"><geom name="p" type="plane" size="1 1 1"/>'
                        '<geom size="0.1"/></body></worldbody></mujoco>', ["geom 'p' of body 'b'", "plane"]),
    ("plane on a moving body", '<mujoco><worldbody><body name="b"><joint/><geom name="p" type="plane" '
                               'size="1 1 1"/></body></worldbody></mujoco>', ["MuJoCo cannot compile", "'p'"]),
]


@pytest.mark.parametrize("text, phrases", [pytest.param(t, p, id=i) for i, t, p in BAD_MJCF])
def test_bad_mjcf_is_refused_with_a_message_naming_file_and_element(tmp_path, text, phrases):
    pytest.importorskip("mujoco")
    from tumble.robots.mjcf import read_mjcf

    path = write(tmp_path, text, "bad.xml")
    with pytest.raises(ValueError) as info:
        read_mjcf(path)
    message = str(info.value)
    assert message.startswith(str(path))
    for phrase in phrases:
        assert phrase in message, (phrase, message)


def test_missing_mujoco_says_what_to_install(tmp_path, monkeypatch):
    from tumble.robots.mjcf import read_mjcf

    path = write(tmp_path, "<mujoco><worldbody/></mujoco>", "m.xml")
    monkeypatch.setitem(sys.modules, "mujoco", None)
    with pytest.raises(ImportError, match=r'pip install "tumble\[robots\]"'):
        read_mjcf(path)
    with pytest.raises(ValueError, match="no such MJCF file"):
        read_mjcf(tmp_path / "absent.xml")
