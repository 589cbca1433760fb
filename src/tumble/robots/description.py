"""What a robot file describes, independent of the file format: links, joints, inertials, collision shapes.

The URDF and MJCF readers (robots/urdf.py, robots/mjcf.py) produce a ``RobotDescription``; robots/tree.py
turns it into the flat arrays of an articulation (robots/dynamics.py). Conventions (URDF's, which MJCF is
converted to):

- Every link has a frame. A joint places its child link's frame in its parent link's frame: first the fixed
  ``origin`` (``origin_xyz`` [m] and ``origin_rotation`` (3, 3), which maps joint-frame coordinates to parent
  coordinates), then the joint's own motion about or along ``axis`` (a unit vector in the joint frame) —
  a rotation by q [rad] (revolute, continuous), a translation by q [m] (prismatic), a rotation given by a
  unit quaternion (spherical) or a whole pose (floating). The child link's frame is the moved joint frame.
- A link's inertial: ``mass`` [kg], ``com`` (3,) [m] in the link frame, ``inertia`` (3, 3) [kg m²] about the
  COM in the link frame's axes (URDF's <inertial> with its origin rotation already applied).
- A link's collision shapes: ``GeomSpec`` with a tumble shape and its pose in the link frame.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

JOINT_TYPES = ("revolute", "continuous", "prismatic", "spherical", "fixed", "floating")
"""The joint types an articulation knows (URDF's names; MJCF's hinge → revolute or continuous, slide →
prismatic, ball → spherical, free → floating)."""


@dataclass
class GeomSpec:
    """One collision shape of a link: ``shape`` a tumble shape (Box, Sphere, Capsule, Cylinder, ConvexHull),
    placed at ``position`` (3,) [m] with ``rotation`` (3, 3) (shape frame → link frame)."""

    shape: Any
    position: np.ndarray = field(default_factory=lambda: np.zeros(3))
    rotation: np.ndarray = field(default_factory=lambda: np.eye(3))


@dataclass
class LinkSpec:
    """A link: its name, inertial (see the module docstring) and collision shapes."""

    name: str
    mass: float = 0.0
    com: np.ndarray = field(default_factory=lambda: np.zeros(3))
    inertia: np.ndarray = field(default_factory=lambda: np.zeros((3, 3)))
    geoms: list[GeomSpec] = field(default_factory=list)


@dataclass
class JointSpec:
    """A joint between ``parent`` and ``child`` (link names); see the module docstring for the frames.

    ``lower``/``upper`` are position limits [rad or m] (±inf: none), ``effort`` the largest |τ| [N m or N]
    a motor may apply (inf: no limit), ``velocity`` the largest |q̇| (inf: none; recorded, not enforced),
    ``damping`` [N m s/rad or N s/m] (τ = −damping q̇), ``friction`` [N m or N] (dry joint friction),
    ``armature`` [kg m² or kg] (rotor inertia added to the mass matrix's diagonal), ``stiffness`` [N m/rad or
    N/m] and ``spring_ref`` [rad or m]: a joint spring τ = −stiffness (q − spring_ref) (MJCF's ``stiffness`` and
    ``springref``; revolute, continuous and prismatic joints)."""

    name: str
    type: str
    parent: str
    child: str
    origin_xyz: np.ndarray = field(default_factory=lambda: np.zeros(3))
    origin_rotation: np.ndarray = field(default_factory=lambda: np.eye(3))
    axis: np.ndarray = field(default_factory=lambda: np.array([1.0, 0.0, 0.0]))
    lower: float = -np.inf
    upper: float = np.inf
    effort: float = np.inf
    velocity: float = np.inf
    damping: float = 0.0
    friction: float = 0.0
    armature: float = 0.0
    stiffness: float = 0.0
    spring_ref: float = 0.0


CLOSURE_TYPES = ("ball", "fixed")
"""The loop closures a description may hold (MJCF's equality ``connect`` and ``weld``)."""


@dataclass
class ClosureSpec:
    """A loop closure of the robot, held as a World joint between its links' bodies (robots/closures.py; MJCF's
    ``<equality connect|weld>``): ``type`` "ball" holds the point ``anchor`` (3,) [m] of link ``link_a``'s frame on
    ``link_b`` where it is with every joint at q = 0; "fixed" holds the two links' relative pose at q = 0 (``anchor``
    the point at which its error is measured). ``link_b`` None: the world. Both links need a collision shape (a
    link without one has no World body to joint)."""

    name: str
    type: str
    link_a: str
    link_b: str | None
    anchor: np.ndarray = field(default_factory=lambda: np.zeros(3))


@dataclass
class KinematicSpec:
    """A body the file moves by prescription, outside the tree (MJCF's ``mocap`` bodies): ``name``, its collision
    shapes ``geoms`` in its frame, and its pose in the file's world frame, ``position`` (3,) [m] and
    ``orientation`` (4,) (w, x, y, z). ``World.add_mjcf`` adds it as a kinematic body (docs/kinematic.md)."""

    name: str
    geoms: list[GeomSpec]
    position: np.ndarray = field(default_factory=lambda: np.zeros(3))
    orientation: np.ndarray = field(default_factory=lambda: np.array([1.0, 0.0, 0.0, 0.0]))


@dataclass
class RobotDescription:
    """A robot as a tree: ``links`` (the root first), ``joints`` (each link but the root is the child of exactly
    one), ``name`` and ``source`` (the file it came from, for messages). ``skipped`` lists, one line each, what
    the file holds that the description leaves out (e.g. an MJCF world body's ground plane, a URDF mimic).

    ``floating``: the file says the root moves freely (MJCF: its one top-level body has a free joint; URDF never
    says). ``base_position`` (3,) [m] and ``base_orientation`` (4,) (w, x, y, z): where the file puts the root
    link in its own world frame (MJCF: that body's pos and quat; the origin otherwise). ``closures``: the loop
    closures (``ClosureSpec``) that ``World.add_robot`` adds as joints with the robot. ``kinematic``: bodies the file
    moves by prescription (``KinematicSpec``, MJCF mocap bodies), which ``World.add_mjcf`` adds beside the robot as
    kinematic bodies."""

    name: str
    links: list[LinkSpec]
    joints: list[JointSpec]
    source: str = ""
    skipped: list[str] = field(default_factory=list)
    floating: bool = False
    base_position: np.ndarray = field(default_factory=lambda: np.zeros(3))
    base_orientation: np.ndarray = field(default_factory=lambda: np.array([1.0, 0.0, 0.0, 0.0]))
    closures: list[ClosureSpec] = field(default_factory=list)
    kinematic: list[KinematicSpec] = field(default_factory=list)

    @property
    def root(self) -> str:
        """The root link's name: the one link that is no joint's child."""
        children = {j.child for j in self.joints}
        roots = [link.name for link in self.links if link.name not in children]
        if not roots:
            raise ValueError(f"robot {self.name!r} has no root link: every link is some joint's child (a cycle, or "
                             f"no links; robots/validate.py check_description says which)")
        return roots[0]
