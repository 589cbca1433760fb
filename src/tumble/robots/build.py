"""Adding a robot to a world (``World.add_robot``, ``add_urdf``, ``add_mjcf``): its tree joins the Model's
forest, and each link with collision shapes gets a World body that follows the joints (robots/step.py), so
that detection, the replay, trajectories and the energy see the links like any body."""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np

from .. import _checks
from ..mass import MassProperties
from ..math3d import matrix_to_quat
from ..model.fields import FLOAT
from ..rotations import quat_mul, quat_to_matrix
from . import dynamics as dy
from .description import CLOSURE_TYPES, ClosureSpec, RobotDescription
from .robot import Robot
from .tree import build_tree
from .validate import check_description

LINK_MASS_MIN = 1e-9
"""[kg] the mass of a World body carrying the shapes of a massless link (only its energy counts it)."""


def _check_positive_definite(desc: RobotDescription, tree: Any, q0: np.ndarray, gravity: np.ndarray) -> None:
    """M(q0) must be positive definite: every moving joint must move some mass (else q̈ is undefined)."""
    nv = tree.S.shape[0]
    if nv == 0:
        return
    work = dy.new_work(len(desc.links))
    dy.kinematics(tree, q0, work)
    M = np.zeros((nv, nv))
    dy.crba(tree, work, M)
    M[np.diag_indices(nv)] += tree.armature
    scale = max(1.0, float(np.max(np.abs(np.diag(M)))))
    for d in range(nv):
        if M[d, d] <= 1e-12 * scale:
            link = int(tree.dof_link[d])
            joint = "the floating base" if link == 0 else f"joint {desc.joints[link - 1].name!r}"
            raise ValueError(f"{desc.source or desc.name}: {joint} moves no mass or inertia (link "
                             f"{desc.links[link].name!r} and its descendants are massless): its motion is undefined")
    try:
        np.linalg.cholesky(M)
    except np.linalg.LinAlgError:
        raise ValueError(f"{desc.source or desc.name}: the joint-space mass matrix is singular at q = 0 (a joint "
                         "moves only massless links)") from None


def _link_body_row(world: Any, mass: float, com: np.ndarray, inertia: np.ndarray) -> dict[str, Any]:
    m = max(float(mass), LINK_MASS_MIN)
    moments = np.linalg.eigvalsh(0.5 * (inertia + inertia.T)) if mass > 0 else np.zeros(3)
    floor = max(1e-12 * float(np.max(moments)), 1e-15) if np.max(moments) > 0 else LINK_MASS_MIN * 1e-4
    inertia_body = 0.5 * (inertia + inertia.T) + floor * np.eye(3)
    moments, Rp = MassProperties(m, com, inertia_body).principal()
    q = np.empty(4)
    matrix_to_quat(Rp, q)
    return {"mass": m, "inv_mass": 1.0 / m, "inertia_body": inertia_body,
            "inv_inertia_body": np.linalg.inv(inertia_body), "principal_q": q, "principal_moments": moments,
            "inv_principal_moments": 1.0 / moments}


def add_robot(world: Any, desc: RobotDescription, position: Any, orientation: Any, fixed_base: Any, name: Any,
              self_collision: Any, friction: Any, restitution: Any) -> Robot:
    """``World.add_robot``: every argument checked and the tree built before the world changes."""
    if world.method != "timestep" or world.integrator not in ("splitting", "symplectic_euler", "implicit_gyro"):
        raise ValueError(f"robots are advanced by time-stepping only: this world has method={world.method!r}, "
                         f"integrator={world.integrator!r} (use World(method='timestep') with the default integrator)")
    desc = check_description(desc)   # (a copy when its joints must be put in its links' order)
    x = _checks.vector3("position", position)
    quat = _checks.quaternion("orientation", orientation)
    for arg, value in (("fixed_base", fixed_base), ("self_collision", self_collision)):
        if not isinstance(value, (bool, np.bool_)):
            raise TypeError(f"{arg} must be True or False, got {value!r}")
    mu, e = _checks.material(friction, restitution)
    robot_name = desc.name if name is None else name
    if not isinstance(robot_name, str) or not robot_name:
        raise TypeError(f"name must be a non-empty string, got {name!r}")
    if any(r.name == robot_name for r in world.model.robots.robots):
        raise ValueError(f"name {robot_name!r} is already a robot's name in this world")
    link_names = [f"{robot_name}/{link.name}" for link in desc.links]
    for body_name in link_names:
        world._check_name(body_name)
    # the file's own placement of its root (MJCF: the top body's pos and quat), then the one asked for
    root_x = x + quat_to_matrix(quat) @ desc.base_position
    root_q = quat_mul(quat, desc.base_orientation)
    tree, q0 = build_tree(desc, root_x, root_q, bool(fixed_base))
    _check_positive_definite(desc, tree, q0, world.gravity)
    if world.settings.solver == "cg" and np.any(tree.friction > 0.0):
        joint = desc.joints[int(tree.dof_link[int(np.flatnonzero(tree.friction > 0.0)[0])]) - 1]
        raise ValueError(f"{desc.source or desc.name}: joint {joint.name!r} has dry friction {joint.friction!r}, "
                         "and solver='cg' solves frictionless problems only (seed 004's QP, λ >= 0): use another "
                         "solver, or a description without the joint's friction")
    # the shapes of every link, in its COM frame (body axes = link axes)
    parts = [[(g.shape, np.asarray(g.position, dtype=FLOAT), _quat_of(g.rotation)) for g in link.geoms]
             for link in desc.links]
    for i, shapes in enumerate(parts):
        for shape, _, _ in shapes:
            if not hasattr(shape, "geom_type"):
                raise TypeError(f"{desc.source or desc.name}: link {desc.links[i].name!r} has a shape tumble does "
                                f"not know: {shape!r}")
    _check_closures(world, desc)
    # the link bodies' rows, all made before the first is added (a failure leaves no orphan link body)
    rows = {}
    for i, shapes in enumerate(parts):
        if not shapes:
            continue
        com = tree.com[i]
        geom_rows, polys = world._geom_rows(shapes, com, 1, 0xFFFFFFFF)
        row = _link_body_row(world, tree.mass[i], com, tree.inertia[i])
        row.update({"x": np.zeros(3), "q": np.array([1.0, 0.0, 0.0, 0.0]), "v": np.zeros(3), "w": np.zeros(3),
                    "force": np.zeros(3), "torque": np.zeros(3), "friction": mu, "restitution": e, "collide": True,
                    "awake": True, "sleep_timer": 0.0, **world._contact_material(0.0, 0.0, None, 0.0)})
        row["extent"] = _extent(geom_rows)
        rows[i] = (row, geom_rows, polys)
    # ---- nothing above changed the world
    desc = dataclasses.replace(desc, name=robot_name)   # the caller's description is left as given
    link_body = np.full(len(desc.links), -1, dtype=np.int64)
    for i, (row, geom_rows, polys) in rows.items():
        body = world._append_body(row, geom_rows, polys, link_names[i])
        world._records.append({"robot_link": robot_name, "name": link_names[i]})
        link_body[i] = body._index
    bodies = link_body[link_body >= 0]
    if self_collision:
        pairs = [(link_body[i], _body_above(tree.parent, link_body, i)) for i in range(len(desc.links))]
        keys = [(min(a, b) << 32) | max(a, b) for a, b in pairs if a >= 0 and b >= 0]
    else:
        a, b = np.triu_indices(len(bodies), 1)   # (every pair of the robot's link bodies: O(links²), LINKS_MAX)
        lo, hi = np.minimum(bodies[a], bodies[b]), np.maximum(bodies[a], bodies[b])
        keys = (lo << 32) | hi
    robot = Robot(world, len(world.model.robots), desc, tree, bool(fixed_base))
    world.model.robots.append(robot, tree, q0, link_body, np.array(keys, dtype=np.int64))
    world._robot_records.append({"robot": robot, "fixed_base": bool(fixed_base), "position": x,
                                 "orientation": quat, "self_collision": bool(self_collision), "friction": mu,
                                 "restitution": e})
    world._bodies_changed()
    world._robots_moved()
    robot.closures = tuple(_add_closure(world, robot, spec) for spec in desc.closures)
    return robot


def _check_closures(world: Any, desc: RobotDescription) -> None:
    """ValueError or TypeError, naming the closure, unless each of ``desc.closures`` can be added as a joint once
    the robot is (``_add_closure``): a known type, links of the robot with collision shapes (their World bodies),
    two different links, a finite anchor (3,), a unique name, and the world's solver "pgs" (which alone holds loop
    closures: World.add_joint)."""
    names = {link.name: link for link in desc.links}
    seen: set[str] = set()
    for spec in desc.closures:
        where = f"{desc.source or desc.name}: closure {getattr(spec, 'name', spec)!r}"
        if not isinstance(spec, ClosureSpec):
            raise TypeError(f"{desc.source or desc.name}: closures must be ClosureSpec, got {spec!r}")
        if spec.name in seen:
            raise ValueError(f"{where} occurs twice; closure names must be unique")
        seen.add(spec.name)
        if spec.type not in CLOSURE_TYPES:
            raise ValueError(f"{where} has type {spec.type!r}; it must be one of {CLOSURE_TYPES}")
        for side in [spec.link_a] + ([] if spec.link_b is None else [spec.link_b]):
            if side not in names:
                raise ValueError(f"{where} names link {side!r}, which the robot does not have")
            if not names[side].geoms:
                raise ValueError(f"{where} names link {side!r}, which has no collision shape: a loop closure joints "
                                 "the links' World bodies, and only a link with a shape has one")
        if spec.link_a == spec.link_b:
            raise ValueError(f"{where} joins link {spec.link_a!r} to itself")
        _checks.vector3(f"closure {spec.name!r} anchor", spec.anchor)
    if desc.closures and world.settings.solver != "pgs":
        raise ValueError(f"{desc.source or desc.name} has loop closures {[c.name for c in desc.closures]}, which "
                         f"only the default solver 'pgs' holds, got solver={world.settings.solver!r}")


def _add_closure(world: Any, robot: Robot, spec: ClosureSpec) -> Any:
    """The closure ``spec`` (checked by ``_check_closures``) as a World joint named "ROBOT/NAME" between its links'
    bodies, made at the robot's pose now (q = 0 as added, so the joint holds that configuration)."""
    from ..joints import BallJoint, FixedJoint

    link = robot.link(spec.link_a)
    anchor = link.position + link.rotation @ np.asarray(spec.anchor, dtype=float)
    other = None if spec.link_b is None else robot.link(spec.link_b).body
    kind = BallJoint if spec.type == "ball" else FixedJoint
    joint = world.add_joint(kind(link.body, other, anchor, name=f"{robot.name}/{spec.name}"))
    joint._robot = robot.name   # (save_scene leaves it to the robot's file: user/scene_joints.py)
    return joint


def _body_above(parent: np.ndarray, link_body: np.ndarray, i: int) -> int:
    """The body of the nearest ancestor of link i that has one (−1: none)."""
    k = parent[i]
    while k >= 0 and link_body[k] < 0:
        k = parent[k]
    return int(link_body[k]) if k >= 0 else -1


def _quat_of(R: np.ndarray) -> np.ndarray:
    q = np.empty(4)
    matrix_to_quat(np.asarray(R, dtype=FLOAT), q)
    return q


def _extent(geom_rows: dict[str, np.ndarray]) -> float:
    from ..world import _extent as world_extent

    return world_extent(geom_rows)
