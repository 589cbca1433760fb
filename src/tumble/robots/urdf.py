"""Read a URDF file into a ``RobotDescription``.

Follows the URDF XML specification (http://wiki.ros.org/urdf/XML: <robot>, <link>, <joint>) with PyBullet's
extensions ``spherical`` joints and ``capsule`` geometry. Only collision geometry is read (<visual> and
<material> are ignored). Frames and units are description.py's, which are URDF's.

Decisions where the spec is silent or files in the wild disagree with it:

- ``<limit>``: a revolute or prismatic joint must have one (spec); its missing lower/upper are 0 (spec). A
  ``lower`` above ``upper`` means "no position limit" (PyBullet's reading; pybullet_data/cube_no_rotation.urdf
  writes lower="1" upper="-1" for that). A missing, or zero, ``effort`` or ``velocity`` means no bound: a
  zero bound would make the joint unactuatable, and files write 0 for "unspecified".
- Continuous joints have no position limits; fixed, floating and spherical joints ignore <axis> and <limit>.
- Inertia (``INERTIA_TOLERANCE``): a link of mass 0 with an all-zero inertia is massless (allowed). Otherwise
  the inertia must be symmetric positive definite (else an error). Its principal moments should satisfy the
  triangle inequality I3 <= I1 + I2 (every rigid body does) to within 1 % of I3: one that misses by more is
  physically impossible, but the articulated algorithms need only positive definiteness, and vendors ship such
  files (pybullet_data's xarm6 link3 misses by 13 %), which PyBullet and Pinocchio load as written. So does
  tumble, with a ``UserWarning`` naming the file, the link and the excess; ``strict=True`` refuses it. A mass
  of 0 with a positive-definite inertia is kept as written (PyBullet files give a fixed base mass 0, e.g.
  kuka_iiwa/model.urdf). A positive mass with a zero inertia (a
  point mass, which PyBullet replaces by an inertia of its own) is refused: give the link's inertia.
- ``<mimic>`` is not represented: the joint moves on its own (listed in ``RobotDescription.skipped``).

Every error is a ``ValueError`` whose message names the file, the line and the element (with its name), and
is raised before anything is returned. The description read then passes robots/validate.py's checks (which name
the file, the link or joint and the value: e.g. a coordinate beyond 1e6 m).
"""

from __future__ import annotations

import os
import warnings
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np

from ..shapes import Box, Capsule, Cylinder, Sphere
from . import _mesh, _xml
from ._xml import Document
from .description import GeomSpec, JointSpec, LinkSpec, RobotDescription
from .validate import check_description

INERTIA_TOLERANCE = 1e-2
"""Relative slack in the triangle inequality of principal moments, I3 <= I1 + I2 + INERTIA_TOLERANCE · I3. Every
rigid body satisfies it exactly; URDF files print moments to three or four digits, whose rounding moves the sum
by up to about 0.2 %, and CAD exports round further (pybullet_data's TwoJointRobot links miss it by 0.8 %).
A larger miss is a wrong inertia (pybullet_data's mini_cheetah thighs miss by 4 %, xarm6's link3 by 13 %)."""

_TYPES = {"revolute", "continuous", "prismatic", "fixed", "floating", "spherical"}


def read_urdf(path: str | os.PathLike[str], *, convex_decomposition: bool = False,
              strict: bool = False) -> RobotDescription:
    """Read the URDF file ``path``.

    Args:
        path: the .urdf file. Mesh filenames are relative to its folder; ``package://PKG/REST`` is looked up as
            ``PKG/REST`` and ``REST`` in that folder and each folder above it; ``file://`` is stripped.
        convex_decomposition: give each collision mesh one ``ConvexHull`` per part of an approximate convex
            decomposition (V-HACD through trimesh; needs the package ``vhacdx``) instead of one hull of all
            its vertices.
        strict: refuse an inertia that breaks the triangle inequality (module docstring) instead of loading it
            with a ``UserWarning``.

    Returns:
        The robot: ``links`` depth-first from the root (children in the order their joints appear in the file),
        ``joints[k]`` the joint whose child is ``links[k + 1]``. This is the q order ("URDF depth-first").

    Raises:
        ValueError: the file is not a URDF file or breaks a rule of the module docstring; see there.
        ImportError: the file has a mesh and trimesh is not installed (or vhacdx, with convex_decomposition).
    """
    if not isinstance(strict, (bool, np.bool_)):
        raise TypeError(f"strict must be True or False, got {strict!r}")
    doc = _xml.read(path, "robot", "URDF")
    for element in doc.root.iter():
        if element.tag.startswith("xacro:"):
            raise doc.error(element, "this is a xacro file: expand it first (xacro FILE > FILE.urdf)")
    links = _elements(doc, "link")
    joints = _elements(doc, "joint")
    if not links:
        raise doc.error(doc.root, "the robot has no <link>")
    order, joint_order = _tree(doc, links, joints)
    meshes: dict[tuple[Path, tuple[float, ...]], list[np.ndarray]] = {}
    link_specs = [_link(doc, links[name], meshes, convex_decomposition, bool(strict)) for name in order]
    skipped: list[str] = []
    joint_specs = [_joint(doc, element, skipped) for element in joint_order]
    name = doc.root.get("name") or doc.path.stem
    return check_description(RobotDescription(name, link_specs, joint_specs, str(doc.path), skipped))


def _elements(doc: Document, tag: str) -> dict[str, ET.Element]:
    """The robot's <tag> children by name, in file order; each needs a unique, non-empty name."""
    found: dict[str, ET.Element] = {}
    for element in doc.root.findall(tag):
        name = element.get("name")
        if not name:
            raise doc.error(element, f"a <{tag}> needs a name attribute")
        if name in found:
            raise doc.error(element, f"a second {tag} named {name!r} (the first is on line "
                                     f"{doc.line(found[name])}); {tag} names must be unique")
        found[name] = element
    return found


def _tree(doc: Document, links: dict[str, ET.Element],
          joints: dict[str, ET.Element]) -> tuple[list[str], list[ET.Element]]:
    """Link names depth-first from the root, and the joints in the same order (joint k → link k + 1)."""
    children: dict[str, list[tuple[ET.Element, str]]] = {name: [] for name in links}
    parent_joint: dict[str, ET.Element] = {}
    for element in joints.values():
        ends = {}
        for end in ("parent", "child"):
            tag = element.find(end)
            link = tag.get("link") if tag is not None else None
            if not link:
                raise doc.error(element, f"the joint needs a <{end} link=...> element")
            if link not in links:
                raise doc.error(element, f"its {end} link {link!r} is not a <link> of this robot")
            ends[end] = link
        parent, child = ends["parent"], ends["child"]
        if child in parent_joint:
            raise doc.error(element, f"link {child!r} is already the child of joint "
                                     f"{parent_joint[child].get('name')!r}: a link has at most one parent joint "
                                     f"(a closed kinematic loop is not a tree)")
        if parent == child:
            raise doc.error(element, f"the joint connects link {child!r} to itself (a kinematic loop)")
        parent_joint[child] = element
        children[parent].append((element, child))
    roots = [name for name in links if name not in parent_joint]
    if len(roots) != 1:
        if not roots:
            raise doc.error(doc.root, "every link is some joint's child, so the links form a kinematic loop and "
                                      "there is no root link")
        raise doc.error(doc.root, f"the links form {len(roots)} separate trees, with roots "
                                  f"{', '.join(map(repr, roots))}; a robot has one root link: connect them")
    order: list[str] = []
    joint_order: list[ET.Element] = []
    stack: list[tuple[ET.Element | None, str]] = [(None, roots[0])]
    while stack:
        element, link = stack.pop()
        order.append(link)
        if element is not None:
            joint_order.append(element)
        stack.extend(reversed(children[link]))
    if len(order) != len(links):
        cut = [name for name in links if name not in set(order)]
        raise doc.error(parent_joint[cut[0]], f"links {', '.join(map(repr, cut))} form a kinematic loop, cut off "
                                              f"from the root link {roots[0]!r}")
    return order, joint_order


def _origin(doc: Document, element: ET.Element, context: str) -> tuple[np.ndarray, np.ndarray]:
    """(xyz (3,) [m], R (3, 3)) of ``element``'s <origin> child; identity if absent."""
    origin = element.find("origin")
    if origin is None:
        return np.zeros(3), np.eye(3)
    xyz = _xml.numbers(doc, origin, "xyz", 3, (0.0, 0.0, 0.0), context)
    rpy = _xml.numbers(doc, origin, "rpy", 3, (0.0, 0.0, 0.0), context)
    return xyz, _xml.rpy_matrix(rpy)


def _link(doc: Document, element: ET.Element, meshes: dict, decompose: bool, strict: bool) -> LinkSpec:
    name = element.get("name", "")
    context = f' in <link name="{name}">'
    spec = LinkSpec(name)
    inertial = element.find("inertial")
    if inertial is not None:
        spec.com, rotation = _origin(doc, inertial, context)
        mass_element = inertial.find("mass")
        if mass_element is None:
            raise doc.error(inertial, "<inertial> needs a <mass value=...> element", context)
        spec.mass = _xml.number(doc, mass_element, "value", None, context)
        if spec.mass < 0.0:
            raise doc.error(mass_element, f"the mass must be >= 0 kg, got {spec.mass:g}", context)
        inertia = inertial.find("inertia")
        moments = np.zeros(6)
        if inertia is not None:
            moments = np.array([_xml.number(doc, inertia, key, 0.0, context)
                                for key in ("ixx", "ixy", "ixz", "iyy", "iyz", "izz")])
        ixx, ixy, ixz, iyy, iyz, izz = moments
        inertia_file = np.array([[ixx, ixy, ixz], [ixy, iyy, iyz], [ixz, iyz, izz]])
        # The spec's inertia is about the COM in the <inertial> origin's axes; the link frame's axes: R I Rᵀ.
        spec.inertia = rotation @ inertia_file @ rotation.T
        _check_inertia(doc, inertia if inertia is not None else inertial, spec.mass, inertia_file, context, strict)
    for collision in element.findall("collision"):
        spec.geoms.extend(_collision(doc, collision, meshes, decompose, context))
    return spec


def _check_inertia(doc: Document, element: ET.Element, mass: float, inertia: np.ndarray, context: str,
                   strict: bool) -> None:
    """The inertia rules of the module docstring (``inertia`` as written, about the COM, (3, 3) [kg m²]): a
    triangle inequality missed by more than INERTIA_TOLERANCE is an error if ``strict``, else a warning."""
    if mass == 0.0 and not np.any(inertia):
        return
    if mass > 0.0 and not np.any(inertia):
        raise doc.error(element, f"the link has mass {mass:g} kg but a zero inertia tensor (a point mass); "
                                 f"give its inertia about its centre of mass", context)
    moments = np.linalg.eigvalsh(inertia)
    shown = "[" + ", ".join(f"{m:.6g}" for m in moments) + "]"
    if moments[0] <= 0.0:
        raise doc.error(element, f"the inertia must be positive definite, got principal moments {shown} kg m²",
                        context)
    if moments[2] > moments[0] + moments[1] + INERTIA_TOLERANCE * moments[2]:
        excess = (moments[2] - moments[0] - moments[1]) / moments[2]
        message = (f"the principal moments {shown} kg m² violate the triangle inequality I3 <= I1 + I2 by "
                   f"{excess:.3g} of I3 (more than the {INERTIA_TOLERANCE:g} that rounding explains): no rigid body "
                   f"has this inertia")
        if strict:
            raise doc.error(element, message + " (strict=True)", context)
        warnings.warn(f"{doc.where(element, context)}: {message}; loaded as written (it is positive definite, as "
                      f"PyBullet and Pinocchio load it; strict=True refuses it)", UserWarning, stacklevel=4)


def _collision(doc: Document, element: ET.Element, meshes: dict, decompose: bool,
               context: str) -> list[GeomSpec]:
    """The tumble geoms of one <collision> (one, or several for a decomposed mesh)."""
    position, rotation = _origin(doc, element, context)
    geometry = element.find("geometry")
    shapes = list(geometry) if geometry is not None else []
    if len(shapes) != 1:
        raise doc.error(element, f"<collision> needs a <geometry> with exactly one shape, got "
                                 f"{len(shapes)}", context)
    shape = shapes[0]
    try:
        if shape.tag == "box":
            lx, ly, lz = _xml.numbers(doc, shape, "size", 3, None, context)   # full side lengths, as tumble's Box
            return [GeomSpec(Box(lx, ly, lz), position, rotation)]
        if shape.tag == "sphere":
            return [GeomSpec(Sphere(_xml.number(doc, shape, "radius", None, context)), position, rotation)]
        if shape.tag == "cylinder":   # along the collision frame's z, as tumble's Cylinder
            radius = _xml.number(doc, shape, "radius", None, context)
            return [GeomSpec(Cylinder(radius, _xml.number(doc, shape, "length", None, context)), position, rotation)]
        if shape.tag == "capsule":    # PyBullet's extension: length between the two hemisphere centres
            radius = _xml.number(doc, shape, "radius", None, context)
            return [GeomSpec(Capsule(radius, _xml.number(doc, shape, "length", None, context)), position, rotation)]
    except (TypeError, ValueError) as exc:
        if str(exc).startswith(str(doc.path)):
            raise
        raise doc.error(shape, str(exc), context) from None
    if shape.tag == "mesh":
        filename = shape.get("filename")
        if not filename:
            raise doc.error(shape, "a <mesh> needs a filename attribute", context)
        scale = _xml.numbers(doc, shape, "scale", 3, (1.0, 1.0, 1.0), context)
        file = _mesh_file(doc, shape, filename, context)
        key = (file, tuple(scale))
        if key not in meshes:
            meshes[key] = _mesh.load_parts(file, scale, decompose, doc.where(shape, context))
        where = doc.where(shape, context) + f" (mesh {file})"
        return [_mesh.hull_geom(points, position, rotation, where) for points in meshes[key]]
    if shape.tag == "plane":
        raise doc.error(shape, "a plane is not a shape a link can have; give the world a ground instead", context)
    raise doc.error(shape, f"unknown geometry <{shape.tag}> (known: box, sphere, cylinder, capsule, mesh)", context)


def _mesh_file(doc: Document, element: ET.Element, filename: str, context: str) -> Path:
    """The mesh file a <mesh filename> names (see ``read_urdf``)."""
    folder = doc.path.resolve().parent
    if filename.startswith("package://"):
        rest = filename[len("package://"):]
        package, _, inside = rest.partition("/")
        names = [rest, inside] if inside else [rest]
        tried = [base / name for base in (folder, *folder.parents) for name in names]
    else:
        if filename.startswith("file://"):
            filename = filename[len("file://"):]
        elif "://" in filename:
            raise doc.error(element, f"mesh filename {filename!r}: only package:// and file:// are understood",
                            context)
        tried = [folder / filename]
    for candidate in tried:
        if candidate.is_file():
            return candidate
    shown = ", ".join(str(t) for t in tried[:4]) + (", ..." if len(tried) > 4 else "")
    raise doc.error(element, f"mesh file {filename!r} not found (looked for {shown})", context)


def _joint(doc: Document, element: ET.Element, skipped: list[str]) -> JointSpec:
    name = element.get("name", "")
    kind = element.get("type")
    context = f' of <joint name="{name}">'
    if kind == "planar":
        raise doc.error(element, "planar joints are not supported (give two prismatic joints and a revolute)")
    if kind not in _TYPES:
        raise doc.error(element, f"unknown joint type {kind!r} (known: {', '.join(sorted(_TYPES))})")
    parent = element.find("parent").get("link")   # checked by _tree
    child = element.find("child").get("link")
    xyz, rotation = _origin(doc, element, "")
    spec = JointSpec(name, kind, parent, child, xyz, rotation)
    if kind in ("revolute", "continuous", "prismatic"):
        axis_element = element.find("axis")
        if axis_element is not None:
            axis = _xml.numbers(doc, axis_element, "xyz", 3, (1.0, 0.0, 0.0), context)
            norm = float(np.linalg.norm(axis))
            if norm == 0.0:
                raise doc.error(element, "the <axis xyz> must not be zero")
            spec.axis = axis / norm
        limit = element.find("limit")
        if limit is None and kind != "continuous":
            raise doc.error(element, f"a {kind} joint needs a <limit> element (URDF spec)")
        if limit is not None:
            if kind != "continuous":
                lower = _xml.number(doc, limit, "lower", 0.0, context)
                upper = _xml.number(doc, limit, "upper", 0.0, context)
                if lower <= upper:
                    spec.lower, spec.upper = lower, upper
            spec.effort = _bound(doc, limit, "effort", context)
            spec.velocity = _bound(doc, limit, "velocity", context)
        dynamics = element.find("dynamics")
        if dynamics is not None:
            for key in ("damping", "friction"):
                value = _xml.number(doc, dynamics, key, 0.0, context)
                if value < 0.0:
                    raise doc.error(dynamics, f"{key} must be >= 0, got {value:g}", context)
                setattr(spec, key, value)
    if element.find("mimic") is not None:
        skipped.append(f"joint {name!r}: <mimic> ignored, the joint moves on its own")
    return spec


def _bound(doc: Document, limit: ET.Element, key: str, context: str) -> float:
    """<limit effort|velocity>: >= 0; missing or 0 → inf (no bound; module docstring)."""
    value = _xml.number(doc, limit, key, 0.0, context)
    if value < 0.0:
        raise doc.error(limit, f"{key} must be >= 0, got {value:g}", context)
    return value if value > 0.0 else float(np.inf)
