"""Read an MJCF (MuJoCo XML) file into a ``RobotDescription``.

MuJoCo itself parses and compiles the file (``mujoco.MjModel.from_xml_path``), so every MJCF rule it applies
holds here as in MuJoCo: <default> classes and ``childclass``, ``<compiler angle>`` (degrees unless it says
radian), ``euler``/``quat``/``axisangle``/``xyaxes``/``zaxis`` orientations, ``fromto`` capsules and cylinders,
inertia inferred from geoms, <include>, mesh scaling. This module reads the compiled ``mjModel`` arrays
(MuJoCo docs, "mjModel" and "Computation": Kinematics) and converts them to description.py's URDF frames.

Conversion (see ``_Converter`` for the frame algebra):

- A floating robot: when the world body has one child body and its only joint is free, that body is the root
  link, ``floating`` is True and its pose in the file is ``base_position``/``base_orientation``; the free joint
  itself is the articulation's floating base, not a JointSpec (its damping/armature are dropped).
- Otherwise the root link is MuJoCo's world body, "world": massless, without geoms, and each top-level body
  hangs from it by its own joints: no joint → fixed (welded, at its pose in the file), a free joint → a
  floating JointSpec whose origin is the body's pose in the file (q = identity puts it there).
- Geoms of the world body (a ground plane, a rail) are not part of the robot; ``skipped`` lists them.
- A body with k joints becomes a chain of k links: k − 1 massless links named ``BODY__JOINT`` (after the joint
  that moves them), then the body's own link. Each link frame sits at its joint's anchor (``jnt_pos``), with the
  body frame's axes; the COM, geoms and child bodies of the body are shifted by −anchor of its last joint.
- Joint types: hinge → revolute (continuous when not limited), slide → prismatic, ball → spherical, free →
  floating. q is MuJoCo's qpos − qpos0, so a hinge's ``ref`` is q = 0 and its range is shifted by −ref.
- Per joint: damping, armature and frictionloss of its (first) degree of freedom; a hinge's or slide's spring
  (``stiffness``, rest at ``springref``: ``spring_ref`` = qpos_spring − qpos0); ``effort`` from the joint's
  ``actuatorfrcrange`` and from the actuators that drive it (``|gear|`` × ``forcerange``, or for a motor
  ``|gear · gain|`` × ``ctrlrange``); inf when nothing bounds it. ``velocity`` is inf (MJCF has no such bound).
- Geoms: sphere, capsule, cylinder, box (MJCF half sizes → tumble's full sizes), ellipsoid, mesh (the convex
  hull of MuJoCo's compiled mesh vertices, see _mesh.py). Geoms that collide with nothing (``contype`` and
  ``conaffinity`` both 0: visual geoms) are skipped and listed. A plane, height field or SDF geom on a body
  is an error.
- Equality constraints ``connect`` and ``weld`` between bodies, active at the start: loop closures
  (``RobotDescription.closures``, a ball joint at a connect's anchor, a fixed joint for a weld), which
  ``World.add_robot`` adds as joints between the links' bodies (robots/closures.py): rigid, so their
  ``solref``/``solimp`` softness and a weld's ``torquescale`` are not represented. Both bodies need a collision
  geom (a link's World body), and a weld its ``relpose`` at the file's pose.
- Not represented, listed in ``skipped``: springs of ball and free joints, ball-joint cone limits, the other
  equality constraints (joint, tendon, distance, flex, between sites, inactive), tendons, a mocap body with child
  bodies (read as welded to the world).
- A mocap body (a child of the world body moved by prescription) without children is not part of the tree: it is a
  ``KinematicSpec`` (``RobotDescription.kinematic``), which ``World.add_mjcf`` adds as a kinematic body named
  "ROBOT/BODY" at the file's pose (one without a collision geom is listed in ``skipped``).

Errors are ``ValueError``s naming the file; MuJoCo's own compile errors name the element, its name and line.
"""

from __future__ import annotations

import os
import warnings
from typing import Any

import numpy as np

from ..rotations import quat_to_matrix
from ..shapes import Box, Capsule, Cylinder, Ellipsoid, Sphere
from . import _mesh, _xml
from .description import ClosureSpec, GeomSpec, JointSpec, KinematicSpec, LinkSpec, RobotDescription
from .validate import check_description

WORLD = "world"
"""The root link's name: MuJoCo's name for body 0."""


def read_mjcf(path: str | os.PathLike[str], *, strict: bool = False) -> RobotDescription:
    """Read the MJCF file ``path`` (see the module docstring for the conversion).

    ``strict``: refuse a body inertia that is positive definite but breaks the triangle inequality (MuJoCo's
    own compile error) instead of loading it as written with a ``UserWarning`` naming the file, the body and the
    excess (docs/robots.md "Bad input and vendor files"). A file that says ``<compiler balanceinertia="true"/>``
    gets MuJoCo's balanced inertia either way.

    Returns:
        The robot: ``links`` depth-first from the root (the floating body, or "world"; children in file order),
        ``joints[k]`` the joint whose child is ``links[k + 1]``; ``floating``, ``base_position`` and
        ``base_orientation`` as the module docstring says; ``skipped`` what the description leaves out.

    Raises:
        ImportError: mujoco is not installed.
        ValueError: the file is not an MJCF file (not a file, not XML, root not <mujoco>), MuJoCo cannot compile
            it (its message names the element), or a body holds a plane, height field or SDF geom.
    """
    if not isinstance(strict, (bool, np.bool_)):
        raise TypeError(f"strict must be True or False, got {strict!r}")
    doc = _xml.read(path, "mujoco", "MJCF")
    try:
        import mujoco
    except ImportError:
        raise _mesh.missing("mujoco", "reading an MJCF file") from None
    written: dict[int, np.ndarray] = {}
    try:
        model = mujoco.MjModel.from_xml_path(str(doc.path))
    except ValueError as exc:
        if strict or _TRIANGLE not in str(exc):
            raise ValueError(f"{doc.path}: MuJoCo cannot compile this MJCF file: {exc}".rstrip()
                             + (" (strict=True)" if strict and _TRIANGLE in str(exc) else "")) from None
        model, written = _impossible_inertias(mujoco, doc.path)
    converter = _Converter(mujoco, model, str(doc.path))
    converter.inertia = written
    desc = converter.run(doc.root.get("model") or doc.path.stem)
    return check_description(desc)


_TRIANGLE = "inertia must satisfy A + B >= C"
"""MuJoCo's compile error for principal moments that break the triangle inequality."""


def _impossible_inertias(mujoco: Any, path: Any) -> tuple[Any, dict[int, np.ndarray]]:
    """The model of an MJCF file whose explicit inertias break the triangle inequality, which MuJoCo refuses (unless
    ``balanceinertia``): compiled with ``balanceinertia`` (which changes only those moments), and for each such body
    (by body id) its inertia as written, (3, 3) [kg m²] about its COM in the body frame's axes, with a UserWarning
    naming the file, the body and the excess (docs/robots.md "Bad input and vendor files": loaded as PyBullet and
    Pinocchio load an URDF's)."""
    try:
        spec = mujoco.MjSpec.from_file(str(path))
        spec.compiler.balanceinertia = True
        model = spec.compile()
    except ValueError as exc:
        raise ValueError(f"{path}: MuJoCo cannot compile this MJCF file: {exc}".rstrip()) from None
    written: dict[int, np.ndarray] = {}
    for b, body in enumerate(spec.bodies):
        if not body.explicitinertial:
            continue
        full = np.array(body.fullinertia, dtype=float)
        if np.isnan(full[0]):   # diaginertia, in the (compiled) inertial frame
            R = _quat_matrix(model.body_iquat[b])
            tensor = R @ np.diag(np.array(body.inertia, dtype=float)) @ R.T
        else:                   # fullinertia: ixx iyy izz ixy ixz iyz in the body frame
            xx, yy, zz, xy, xz, yz = full
            tensor = np.array([[xx, xy, xz], [xy, yy, yz], [xz, yz, zz]])
        moments = np.linalg.eigvalsh(tensor)
        if moments[2] <= moments[0] + moments[1]:
            continue
        excess = (moments[2] - moments[0] - moments[1]) / moments[2]
        shown = "[" + ", ".join(f"{m:.6g}" for m in moments) + "]"
        warnings.warn(f"{path}: body {body.name or b!r}: the principal moments {shown} kg m² violate the triangle "
                      f"inequality I3 <= I1 + I2 by {excess:.3g} of I3: no rigid body has this inertia (MuJoCo "
                      f"refuses it); loaded as written (it is positive definite, as PyBullet and Pinocchio load it; "
                      f"strict=True refuses it)", UserWarning, stacklevel=3)
        written[b] = tensor
    return model, written


def _quat_matrix(q: np.ndarray) -> np.ndarray:
    """Rotation matrix (3, 3) of a MuJoCo quaternion (w, x, y, z; tumble's order), normalized first."""
    return quat_to_matrix(np.asarray(q, dtype=float))


class _Converter:
    """MuJoCo body b (frame B at q = qpos0, relative to its parent's frame P: ``body_pos`` p, ``body_quat`` R_Q)
    with joints j_1..j_k (anchor a_i, axis u_i in B): MuJoCo's kinematics (``mj_kinematics``) gives
    F_0 = P T(p) R_Q and F_i = F_{i-1} T(a_i) J_i(q_i) T(−a_i), J_i the joint's rotation or translation.
    Link i's frame is put at G_i = F_i T(a_i), so G_i = G_{i-1} T(a_i − a_{i−1}) J_i: joint i (i >= 2) has origin
    (a_i − a_{i−1}, identity) and axis u_i. Joint 1: G_1 = G_P T(−c_P) T(p) R_Q T(a_1) J_1, origin
    (−c_P + p + R_Q a_1, R_Q), where c_P is the parent's last anchor (its link frame is P T(c_P)). A point x of
    B is x − c_B in the body's link frame, c_B = a_k (0 for a body without joints or with a free joint)."""

    def __init__(self, mujoco: Any, model: Any, source: str) -> None:
        self.mj = mujoco
        self.m = model
        self.source = source
        self.inertia: dict[int, np.ndarray] = {}
        """Body id → its inertia as written (``_impossible_inertias``), in place of the compiled one."""
        self.links: list[LinkSpec] = []
        self.joints: list[JointSpec] = []
        self.skipped: list[str] = []
        self.anchor = np.zeros((model.nbody, 3))   # c_B of each body, in its MuJoCo frame [m]
        self.link_of = [WORLD] + [""] * (model.nbody - 1)
        self.effort = self._efforts()

    def _name(self, kind: Any, index: int, fallback: str) -> str:
        return self.mj.mj_id2name(self.m, kind, index) or fallback

    def body_name(self, b: int) -> str:
        return WORLD if b == 0 else self._name(self.mj.mjtObj.mjOBJ_BODY, b, f"body{b}")

    def run(self, name: str) -> RobotDescription:
        m = self.m
        for g in range(m.ngeom):
            if m.geom_bodyid[g] == 0:
                self.skipped.append(f"geom {self._geom_name(g)!r}: on the world body, not part of the robot")
        children: list[list[int]] = [[] for _ in range(m.nbody)]
        for b in range(1, m.nbody):
            children[m.body_parentid[b]].append(b)
        top = children[0]
        mocap = [b for b in top if m.body_mocapid[b] >= 0 and not children[b]]
        top = [b for b in top if b not in mocap]
        kinematic = [spec for spec in (self._mocap(b) for b in mocap) if spec is not None]
        floating = (len(top) == 1 and m.body_jntnum[top[0]] == 1
                    and int(m.jnt_type[m.body_jntadr[top[0]]]) == int(self.mj.mjtJoint.mjJNT_FREE))
        if floating:
            root = top[0]
            self.link_of[root] = self.body_name(root)
            self.links.append(self._link(root, self.link_of[root]))
            stack = list(reversed(children[root]))
        else:
            self.links.append(LinkSpec(WORLD))
            stack = list(reversed(top))
        while stack:   # depth-first, children in file order (MuJoCo numbers bodies in that order)
            b = stack.pop()
            self._body(b)
            stack.extend(reversed(children[b]))
        closures = [self._closure(e) for e in range(m.neq)]
        if m.ntendon:
            self.skipped.append(f"{m.ntendon} tendon(s): not represented")
        names = [link.name for link in self.links]
        for kind, seen in (("link", names), ("joint", [j.name for j in self.joints])):
            duplicates = sorted({n for n in seen if seen.count(n) > 1})
            if duplicates:
                raise ValueError(f"{self.source}: the {kind} names {duplicates} occur twice after naming MuJoCo's "
                                 f"unnamed bodies, joints and per-joint links (BODY__JOINT); rename them")
        robot = RobotDescription(name, self.links, self.joints, self.source, self.skipped,
                                 closures=[c for c in closures if c is not None], kinematic=kinematic)
        if floating:
            robot.floating = True
            robot.base_position = np.array(m.body_pos[top[0]], dtype=float)
            robot.base_orientation = np.array(m.body_quat[top[0]], dtype=float)
        return robot

    def _body(self, b: int) -> None:
        m, mj = self.m, self.mj
        name = self.body_name(b)
        parent = m.body_parentid[b]
        origin_xyz = m.body_pos[b] - self.anchor[parent]
        origin_rotation = _quat_matrix(m.body_quat[b])
        first, count = m.body_jntadr[b], m.body_jntnum[b]
        previous = self.link_of[parent]
        if m.body_mocapid[b] >= 0:
            self.skipped.append(f"body {name!r}: a mocap body with child bodies, read as welded to the world")
        if count == 0:
            self.joints.append(JointSpec(f"{name}__fixed", "fixed", previous, name, origin_xyz, origin_rotation))
        last_anchor = np.zeros(3)
        for i in range(count):
            j = first + i
            jname = self._name(mj.mjtObj.mjOBJ_JOINT, j, f"{name}_joint{i}")
            child = name if i == count - 1 else f"{name}__{jname}"
            if int(m.jnt_type[j]) == int(mj.mjtJoint.mjJNT_FREE):
                anchor = np.zeros(3)   # a free joint moves the body frame itself
            else:
                anchor = np.array(m.jnt_pos[j], dtype=float)
            if i == 0:
                xyz, rotation = origin_xyz + origin_rotation @ anchor, origin_rotation
            else:
                xyz, rotation = anchor - last_anchor, np.eye(3)
            self.joints.append(self._joint(j, jname, previous, child, xyz, rotation))
            if i < count - 1:
                self.links.append(LinkSpec(child))
            previous, last_anchor = child, anchor
        self.anchor[b] = last_anchor
        self.link_of[b] = name
        self.links.append(self._link(b, name))

    def _mocap(self, b: int) -> KinematicSpec | None:
        """Mocap body b (a childless child of the world body) as a ``KinematicSpec``, or None (in ``skipped``) when
        it has no collision geom: a kinematic body needs a shape."""
        name = self.body_name(b)
        geoms = self._link(b, name).geoms
        if not geoms:
            self.skipped.append(f"body {name!r}: a mocap body without a collision geom, not represented")
            return None
        return KinematicSpec(name, geoms, np.array(self.m.body_pos[b], dtype=float),
                             np.array(self.m.body_quat[b], dtype=float))

    def _joint(self, j: int, name: str, parent: str, child: str, xyz: np.ndarray, rotation: np.ndarray) -> JointSpec:
        """MuJoCo joint j as a JointSpec (module docstring: types, q = qpos − qpos0, per-dof parameters)."""
        m, J = self.m, self.mj.mjtJoint
        jtype = int(m.jnt_type[j])
        dof = m.jnt_dofadr[j]
        spec = JointSpec(name, "fixed", parent, child, xyz, rotation, damping=float(m.dof_damping[dof]),
                         friction=float(m.dof_frictionloss[dof]), armature=float(m.dof_armature[dof]),
                         effort=self.effort[j])
        limited = bool(m.jnt_limited[j])
        if jtype in (int(J.mjJNT_HINGE), int(J.mjJNT_SLIDE)):
            spec.type = ("revolute" if limited else "continuous") if jtype == int(J.mjJNT_HINGE) else "prismatic"
            spec.axis = np.array(m.jnt_axis[j], dtype=float)
            if limited:
                ref = float(m.qpos0[m.jnt_qposadr[j]])
                spec.lower, spec.upper = float(m.jnt_range[j, 0]) - ref, float(m.jnt_range[j, 1]) - ref
        elif jtype == int(J.mjJNT_BALL):
            spec.type = "spherical"
            if limited:
                self.skipped.append(f"joint {name!r}: ball-joint cone limit {float(m.jnt_range[j, 1]):g} rad "
                                    f"not represented")
        else:
            spec.type = "floating"
        stiffness = float(m.jnt_stiffness[j])
        if stiffness != 0.0 and spec.type in ("revolute", "continuous", "prismatic"):
            # MuJoCo's passive spring −stiffness (qpos − qpos_spring), qpos_spring from ``springref``; in q = qpos −
            # qpos0 its rest is qpos_spring − qpos0
            address = m.jnt_qposadr[j]
            spec.stiffness = stiffness
            spec.spring_ref = float(m.qpos_spring[address]) - float(m.qpos0[address])
        elif stiffness != 0.0:
            self.skipped.append(f"joint {name!r}: spring stiffness {stiffness:g} of a {spec.type} joint not "
                                f"represented")
        return spec

    def _closure(self, e: int) -> ClosureSpec | None:
        """MuJoCo equality e as a loop closure (module docstring), or None with the reason in ``skipped``."""
        m, mj = self.m, self.mj
        name = self._name(mj.mjtObj.mjOBJ_EQUALITY, e, f"equality{e}")
        kind = int(m.eq_type[e])
        types = {int(mj.mjtEq.mjEQ_CONNECT): ("connect", "ball"), int(mj.mjtEq.mjEQ_WELD): ("weld", "fixed")}
        if kind not in types:
            self.skipped.append(f"equality {name!r}: a {mj.mjtEq(kind).name[5:].lower()} constraint, not represented")
            return None
        tag, closure = types[kind]
        if int(m.eq_objtype[e]) != int(mj.mjtObj.mjOBJ_BODY):
            self.skipped.append(f"equality {name!r}: a {tag} between sites, not represented (name bodies)")
            return None
        if not m.eq_active0[e]:
            self.skipped.append(f"equality {name!r}: inactive at the start (active=\"false\"), not represented")
            return None
        b1, b2 = int(m.eq_obj1id[e]), int(m.eq_obj2id[e])
        data = np.array(m.eq_data[e], dtype=float)
        if kind == int(mj.mjtEq.mjEQ_WELD) and not self._weld_at_reference(b1, b2, data[3:10]):
            self.skipped.append(f"equality {name!r}: a weld whose relpose is not the bodies' pose in the file, not "
                                f"represented")
            return None
        shapeless = [self.body_name(b) for b in (b1, b2) if b != 0 and not self._link_spec(b).geoms]
        if shapeless:
            self.skipped.append(f"equality {name!r}: body {shapeless[0]!r} has no collision geom, and a loop closure "
                                f"needs its link's World body; not represented")
            return None
        # a connect's anchor is in body1's frame, and MuJoCo compiles the same point in body2's (data[3:6]); a weld's
        # anchor only places where its error is measured (body1's origin is used). A closure's first side is a
        # body, the world its second: body1 = world swaps the two. The link frame sits at the body's last joint
        # anchor.
        connect = kind == int(mj.mjtEq.mjEQ_CONNECT)
        point = data[0:3] if connect else np.zeros(3)
        if b1 == 0:
            b1, b2 = b2, b1
            point = data[3:6] if connect else np.zeros(3)
        return ClosureSpec(name, closure, self.link_of[b1], None if b2 == 0 else self.link_of[b2],
                           point - self.anchor[b1])

    def _link_spec(self, b: int) -> LinkSpec:
        return next(link for link in self.links if link.name == self.link_of[b])

    def _weld_at_reference(self, b1: int, b2: int, relpose: np.ndarray) -> bool:
        """Whether a weld's ``relpose`` (7,) (MuJoCo's compiled data: body2's position and orientation in body1's
        frame) is the bodies' relative pose at qpos0, the only weld a rigid FixedJoint made there holds."""
        m, mj = self.m, self.mj
        data = mj.MjData(m)
        mj.mj_kinematics(m, data)
        R1 = data.xmat[b1].reshape(3, 3)
        position = R1.T @ (data.xpos[b2] - data.xpos[b1])
        q1, q2 = np.array(data.xquat[b1]), np.array(data.xquat[b2])
        relative = np.empty(4)
        mj.mju_mulQuat(relative, np.array([q1[0], -q1[1], -q1[2], -q1[3]]), q2)
        return bool(np.allclose(position, relpose[:3], atol=1e-9)
                    and abs(abs(float(relative @ relpose[3:7])) - 1.0) < 1e-9)

    def _efforts(self) -> list[float]:
        """The largest |τ| [N m or N] each joint's actuators can apply (module docstring); inf if unbounded."""
        m, mj = self.m, self.mj
        total = np.zeros(m.njnt)
        driven = np.zeros(m.njnt, dtype=bool)
        for a in range(m.nu):
            if int(m.actuator_trntype[a]) not in (int(mj.mjtTrn.mjTRN_JOINT), int(mj.mjtTrn.mjTRN_JOINTINPARENT)):
                continue
            j = m.actuator_trnid[a, 0]
            driven[j] = True
            gear = abs(float(m.actuator_gear[a, 0]))
            if m.actuator_forcelimited[a]:
                force = float(np.abs(m.actuator_forcerange[a]).max())
            elif (m.actuator_ctrllimited[a] and int(m.actuator_gaintype[a]) == int(mj.mjtGain.mjGAIN_FIXED)
                  and int(m.actuator_biastype[a]) == int(mj.mjtBias.mjBIAS_NONE)
                  and int(m.actuator_dyntype[a]) == int(mj.mjtDyn.mjDYN_NONE)):
                force = abs(float(m.actuator_gainprm[a, 0])) * float(np.abs(m.actuator_ctrlrange[a]).max())
            else:
                force = np.inf
            total[j] += gear * force
        efforts = []
        for j in range(m.njnt):
            bound = total[j] if driven[j] else np.inf
            if m.jnt_actfrclimited[j]:
                bound = min(bound, float(np.abs(m.jnt_actfrcrange[j]).max()))
            efforts.append(float(bound))
        return efforts

    def _geom_name(self, g: int) -> str:
        return self._name(self.mj.mjtObj.mjOBJ_GEOM, g, f"geom{g}")

    def _link(self, b: int, name: str) -> LinkSpec:
        m, mj = self.m, self.mj
        shift = self.anchor[b]
        R = _quat_matrix(m.body_iquat[b])
        inertia = self.inertia[b] if b in self.inertia else R @ np.diag(m.body_inertia[b]) @ R.T
        link = LinkSpec(name, float(m.body_mass[b]), m.body_ipos[b] - shift, inertia)
        G = mj.mjtGeom
        unsupported = {int(G.mjGEOM_PLANE): "plane", int(G.mjGEOM_HFIELD): "height field", int(G.mjGEOM_SDF): "SDF"}
        for g in np.flatnonzero(m.geom_bodyid == b):
            gname = self._geom_name(g)
            gtype, size = int(m.geom_type[g]), np.array(m.geom_size[g], dtype=float)
            position, rotation = m.geom_pos[g] - shift, _quat_matrix(m.geom_quat[g])
            where = f"{self.source}: geom {gname!r} of body {name!r}"
            if gtype in unsupported:
                raise ValueError(f"{where}: a {unsupported[gtype]} geom on a moving body is not supported (tumble "
                                 f"has planes and height fields only as the world's ground)")
            if m.geom_contype[g] == 0 and m.geom_conaffinity[g] == 0:
                self.skipped.append(f"geom {gname!r} of body {name!r}: collides with nothing (contype = "
                                    f"conaffinity = 0), a visual geom")
                continue
            if gtype == int(G.mjGEOM_MESH):
                mesh = m.geom_dataid[g]
                start, count = m.mesh_vertadr[mesh], m.mesh_vertnum[mesh]
                points = np.array(m.mesh_vert[start:start + count], dtype=float)
                link.geoms.append(_mesh.hull_geom(points, position, rotation, where))
                continue
            try:
                shape = self._primitive(gtype, size)
            except (TypeError, ValueError) as exc:
                raise ValueError(f"{where}: {exc}") from None
            link.geoms.append(GeomSpec(shape, position, rotation))
        return link

    def _primitive(self, gtype: int, size: np.ndarray) -> Any:
        """The tumble shape of a primitive MuJoCo geom (``geom_size``: MuJoCo docs, geom/size)."""
        G = self.mj.mjtGeom
        if gtype == int(G.mjGEOM_SPHERE):
            return Sphere(size[0])
        if gtype == int(G.mjGEOM_CAPSULE):      # size: radius, half-length of the cylindrical part
            return Capsule(size[0], 2.0 * size[1])
        if gtype == int(G.mjGEOM_CYLINDER):     # size: radius, half-height
            return Cylinder(size[0], 2.0 * size[1])
        if gtype == int(G.mjGEOM_BOX):          # size: half side lengths; tumble's Box takes full ones
            return Box(*(2.0 * size))
        if gtype == int(G.mjGEOM_ELLIPSOID):    # size: semi-axes
            return Ellipsoid(*size)
        raise ValueError(f"MuJoCo geom type {gtype} is not supported")
