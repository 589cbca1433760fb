"""The checks every ``RobotDescription`` passes before it becomes a robot: one validation for descriptions built in
code (``World.add_robot``) and for those the readers make (``read_urdf``, ``read_mjcf`` run it on what they read,
so a file's message names the file).

``check_description`` refuses, with a ``ValueError`` (a bad value) or ``TypeError`` (not a number, not a spec)
naming the robot (and its file), the element and the value, and before anything changes:

- the tree: no links, more than ``LINKS_MAX`` links, a link or joint name that is empty or occurs twice, an
  unknown joint type, a joint whose parent or child is not a link of the robot, a joint joining a link to
  itself, a link that is the child of two joints, joints that form a cycle, a link (but the first, the root) that
  is no joint's child, and a child listed before its parent. Links must be listed parent first (as the readers
  list them, depth-first from the root): q follows the links' order, so the description's order is kept, not
  re-sorted. Joints may be listed in any order; the returned description lists them as its links (joint k moves
  link k + 1), which ``Robot.joint_of`` reads.
- the inertials: a mass that is not a finite number in [0, MASS_MAX]; a COM not finite or farther than
  LENGTH_MAX from the link frame; an inertia (3, 3) not finite, not symmetric or not positive definite (zero
  with mass 0 is a massless link), or with entries above INERTIA_MAX.
- the joints: an origin not finite or farther than LENGTH_MAX; an ``origin_rotation`` that is not a proper
  rotation (RᵀR = 1 and det R = +1 to 1e-6); an axis that is not finite or not a direction (norm below
  ``AXIS_NORM_MIN``; a finite non-zero axis is normalized, as description.py's axis is a direction); NaN limits or
  ``lower`` > ``upper``; a NaN or negative ``effort`` or ``velocity`` (inf: no bound); a ``damping``,
  ``friction``, ``armature`` or ``stiffness`` that is not a finite number >= 0; a ``spring_ref`` not finite.
- the shapes' and the base's placement: not finite, beyond LENGTH_MAX, or not a rotation.

The physical-inertia test (``triangle_excess``: principal moments I3 <= I1 + I2) is the readers' (a vendor's file
that breaks it loads with a warning, or is refused with ``strict=True``); a description built in code is given as
meant.
"""

from __future__ import annotations

import dataclasses
import numbers
from typing import Any

import numpy as np

from .. import _checks
from .description import JOINT_TYPES, GeomSpec, JointSpec, LinkSpec, RobotDescription

LINKS_MAX = 1000
"""The most links a robot may have. Adding one costs O(links²) time and memory where it excludes its links' pairs
from collision (``self_collision=False``: every pair of link bodies) and in its dense joint-space matrices (the
mass-matrix check at q = 0, the contact stage's M, nv × nv); at 1000 links these are ~0.5 M pairs and 8 MB
matrices, at 10,000 links they took > 15 GB. The largest robot files in common use have ~100 links."""

AXIS_NORM_MIN = 1e-9
"""The least norm of a joint axis as given (it is normalized): below it the direction is rounding noise."""

_ROTATION_TOL = 1e-6
"""RᵀR = 1 to within this (``_checks.rotation_matrix``'s default)."""


def where_of(desc: RobotDescription) -> str:
    """How messages name the robot: its file and name, or its name."""
    name = getattr(desc, "name", "?")
    source = getattr(desc, "source", "")
    return f"{source}: robot {name!r}" if source else f"robot {name!r}"


def _real(where: str, what: str, value: Any) -> float:
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real):
        raise TypeError(f"{where} has {what} {_checks._show(value)}; it must be a real number")
    return float(value)


def _array(where: str, what: str, value: Any, shape: tuple[int, ...], bound: float) -> np.ndarray:
    """A finite float array of ``shape`` with entries of at most ``bound`` in size."""
    try:
        out = _checks.array(what, value, shape, finite=False)
    except (TypeError, ValueError) as exc:
        raise type(exc)(f"{where}: {exc}") from None
    if not np.all(np.isfinite(out)):
        raise ValueError(f"{where} has {what} {out.tolist()}; it must be finite")
    if out.size and float(np.abs(out).max()) > bound:
        raise ValueError(f"{where} has {what} {out.tolist()}; its entries must be at most {bound:g} in size")
    return out


def _rotation(where: str, what: str, value: Any) -> np.ndarray:
    R = _array(where, what, value, (3, 3), 1.0 + _ROTATION_TOL)
    if not np.allclose(R.T @ R, np.eye(3), rtol=0.0, atol=_ROTATION_TOL) or np.linalg.det(R) < 0.0:
        raise ValueError(f"{where} has {what} {R.tolist()}; it must be a proper rotation matrix (RᵀR = 1 and "
                         f"det R = +1 to {_ROTATION_TOL:g})")
    return R


def _link(where: str, link: LinkSpec) -> None:
    mass = _real(where, "mass", link.mass)
    if not 0.0 <= mass <= _checks.MASS_MAX:
        raise ValueError(f"{where} has mass {link.mass!r}; it must be a finite number in [0, "
                         f"{_checks.MASS_MAX:g}] kg")
    _array(where, "com", link.com, (3,), _checks.LENGTH_MAX)
    inertia = _array(where, "inertia", link.inertia, (3, 3), _checks.INERTIA_MAX)
    if not np.allclose(inertia, inertia.T, rtol=1e-9, atol=1e-12 * max(1.0, float(np.abs(inertia).max()))):
        raise ValueError(f"{where} has inertia {inertia.tolist()}; it must be symmetric")
    if mass == 0.0 and not np.any(inertia):
        return   # a massless link
    moments = np.linalg.eigvalsh(0.5 * (inertia + inertia.T))
    if not moments[0] > 0.0:
        shown = "[" + ", ".join(f"{m:.6g}" for m in moments) + "]"
        raise ValueError(f"{where} has an inertia with principal moments {shown} kg m²; it must be positive "
                         f"definite (or zero, with mass 0, for a massless link)")
    for i, geom in enumerate(link.geoms):
        if not isinstance(geom, GeomSpec):
            raise TypeError(f"{where}: geoms must be GeomSpec, got {_checks._show(geom)}")
        _array(f"{where}, geom {i}", "position", geom.position, (3,), _checks.LENGTH_MAX)
        _rotation(f"{where}, geom {i}", "rotation", geom.rotation)


def _joint(where: str, joint: JointSpec) -> np.ndarray:
    """The joint's checked values; returns its unit axis."""
    _array(where, "origin_xyz", joint.origin_xyz, (3,), _checks.LENGTH_MAX)
    _rotation(where, "origin_rotation", joint.origin_rotation)
    axis = _array(where, "axis", joint.axis, (3,), _checks.FLOAT_MAX)
    scaled = axis / max(1.0, float(np.abs(axis).max()))   # (|axis|² would overflow from ~1e154)
    norm = float(np.linalg.norm(scaled))
    if not norm >= AXIS_NORM_MIN:
        raise ValueError(f"{where} has axis {axis.tolist()}; it must be a direction (a finite vector of norm >= "
                         f"{AXIS_NORM_MIN:g}, normalized)")
    lower, upper = _real(where, "lower", joint.lower), _real(where, "upper", joint.upper)
    if np.isnan(lower) or np.isnan(upper) or not lower <= upper or lower == np.inf or upper == -np.inf:
        raise ValueError(f"{where} has limits lower={joint.lower!r}, upper={joint.upper!r}; they must be numbers "
                         f"with lower <= upper (-inf, inf: none)")
    for key in ("effort", "velocity"):
        value = _real(where, key, getattr(joint, key))
        if not value >= 0.0:
            raise ValueError(f"{where} has {key} {getattr(joint, key)!r}; it must be a number >= 0 (inf: no bound)")
    for key in ("damping", "friction", "armature", "stiffness"):
        value = _real(where, key, getattr(joint, key))
        if not (np.isfinite(value) and value >= 0.0):
            raise ValueError(f"{where} has {key} {getattr(joint, key)!r}; it must be a finite number >= 0")
    if not np.isfinite(_real(where, "spring_ref", joint.spring_ref)):
        raise ValueError(f"{where} has spring_ref {joint.spring_ref!r}; it must be a finite number [rad or m]")
    return scaled / norm


def _name(where: str, kind: str, name: Any) -> str:
    if not isinstance(name, str) or not name:
        raise TypeError(f"{where}: a {kind} name must be a non-empty string, got {_checks._show(name)}")
    return name


def check_description(desc: RobotDescription) -> RobotDescription:
    """``desc`` checked (module docstring), or a ValueError/TypeError naming the robot, the element and the value.
    Returns the description to build: ``desc`` itself when its joints are already listed as its links, else a
    copy whose joints are (the caller's description is never changed)."""
    where = where_of(desc)
    links, joints = desc.links, desc.joints
    if not isinstance(links, (list, tuple)) or not isinstance(joints, (list, tuple)):
        raise TypeError(f"{where}: links and joints must be lists of LinkSpec and JointSpec")
    if not links:
        raise ValueError(f"{where} has no links; a robot needs at least its root link")
    if len(links) > LINKS_MAX:
        raise ValueError(f"{where} has {len(links)} links; a robot may have at most {LINKS_MAX} (docs/conventions.md "
                         f"\"Limits\")")
    index: dict[str, int] = {}
    for i, link in enumerate(links):
        if not isinstance(link, LinkSpec):
            raise TypeError(f"{where}: links must be LinkSpec, got {_checks._show(link)}")
        name = _name(where, "link", link.name)
        if name in index:
            raise ValueError(f"{where} has two links named {name!r} (links {index[name]} and {i}); link names must "
                             f"be unique")
        index[name] = i
    names: set[str] = set()
    joint_of: dict[str, JointSpec] = {}
    parent_of: dict[str, str] = {}
    for joint in joints:
        if not isinstance(joint, JointSpec):
            raise TypeError(f"{where}: joints must be JointSpec, got {_checks._show(joint)}")
        name = _name(where, "joint", joint.name)
        at = f"{where}, joint {name!r}"
        if name in names:
            raise ValueError(f"{where} has two joints named {name!r}; joint names must be unique")
        names.add(name)
        if joint.type not in JOINT_TYPES:
            raise ValueError(f"{at} has type {joint.type!r}; it must be one of {', '.join(JOINT_TYPES)}")
        for end in ("parent", "child"):
            link = getattr(joint, end)
            if not isinstance(link, str) or link not in index:
                raise ValueError(f"{at} has {end} {_checks._show(link)}, which is not a link of the robot")
        if joint.parent == joint.child:
            raise ValueError(f"{at} joins link {joint.child!r} to itself (parent = child: a kinematic loop)")
        if joint.child in joint_of:
            raise ValueError(f"{at} has child {joint.child!r}, which is already the child of joint "
                             f"{joint_of[joint.child].name!r}: a link has one parent joint (a loop is not a tree; "
                             f"close it with a ClosureSpec)")
        joint_of[joint.child] = joint
        parent_of[joint.child] = joint.parent
    # cycles first (a clearer message than the order's), by following each link's parents once
    state: dict[str, int] = {}   # 1: on the current path, 2: reaches the root
    for start in index:
        path = []
        link: str | None = start
        while link is not None and state.get(link, 0) == 0:
            state[link] = 1
            path.append(link)
            link = parent_of.get(link)
        if link is not None and state[link] == 1:
            cycle = path[path.index(link):] + [link]
            raise ValueError(f"{where}: joints {', '.join(repr(joint_of[c].name) for c in cycle[:-1])} form a cycle "
                             f"(links {' → '.join(map(repr, cycle))}): a robot is a tree")
        for visited in path:
            state[visited] = 2
    root = links[0].name
    if root in joint_of:
        raise ValueError(f"{where}: its first link {root!r} is the child of joint {joint_of[root].name!r}; the first "
                         f"link is the root, and links are listed parent first")
    for i, link in enumerate(links[1:], start=1):
        joint = joint_of.get(link.name)
        if joint is None:
            raise ValueError(f"{where}: link {link.name!r} is no joint's child, so the robot has two roots ({root!r} "
                             f"and {link.name!r}); a robot has one root link: connect them")
        if index[joint.parent] > i:
            raise ValueError(f"{where}: link {link.name!r} is listed before its parent {joint.parent!r} (joint "
                             f"{joint.name!r}); list links parent first (e.g. depth-first from the root, as q "
                             f"follows their order)")
    for link in links:
        _link(f"{where}, link {link.name!r}", link)
    for joint in joints:
        _joint(f"{where}, joint {joint.name!r}", joint)
    _array(where, "base_position", desc.base_position, (3,), _checks.LENGTH_MAX)
    try:
        _checks.quaternion("base_orientation", desc.base_orientation)
    except (TypeError, ValueError) as exc:
        raise type(exc)(f"{where}: {exc}") from None
    ordered = [joint_of[link.name] for link in links[1:]]
    if all(a is b for a, b in zip(ordered, joints, strict=True)):
        return desc
    return dataclasses.replace(desc, joints=ordered)


def triangle_excess(inertia: np.ndarray) -> tuple[float, np.ndarray]:
    """(I3 − I1 − I2) / I3 of a positive-definite inertia's principal moments I1 <= I2 <= I3 (<= 0: physical),
    and the moments."""
    moments = np.linalg.eigvalsh(0.5 * (inertia + inertia.T))
    return float((moments[2] - moments[0] - moments[1]) / moments[2]), moments
