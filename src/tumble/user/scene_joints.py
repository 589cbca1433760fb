"""Scene files: the ``[[joints]]``, ``[[springs]]`` and ``[[attachments]]`` tables (docs/scenes.md is the format
reference).

A joint or spring is written in one of two ways:

- by hand, in world coordinates at the state the file gives its bodies, as the Python API takes them
  (``anchor`` and ``axis`` for a joint; ``anchor_a``/``anchor_b``, ``points`` or ``frame_point`` and
  ``frame_orientation`` for a spring). The joint's angle or position is zero there, as at creation;
- as ``save_scene`` writes it, in each body's own axes (``frame_a``/``frame_b``, ``local_a``/``local_b``,
  ``local_points``): what the world keeps, so a joint displaced since its creation (a hinge turned by
  0.3 rad, a stretched spring) loads back with the same zero, limits and rest state, bitwise.

A body is referred to by its name or by its index among the world's bodies (0-based, the ground included
at its place; ``world.bodies`` order), and the world by ``"world"`` (or by leaving out a joint's ``b``).

An attachment is ``{ body, master }`` (``World.attach``) or ``{ body, point, mass }`` (``attach_point_mass``,
the point in world coordinates at the file's state). The file gives every body as it was made, at the pose
of the frame it was made in; the attachments are made again in the order listed, which rebuilds the
assemblies (their mass properties, shapes and frames), and come before the joints, whose frames are written
in the assembled bodies' axes.

Checked before the world is built, as the rest of the file (``scene._check_document``); the joint and
spring classes check the values again when ``_build`` makes them.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

import numpy as np

from ..forces.springs import AxialSpring, FrameSpring, MultiPointSpring
from ..joints import BallJoint, FixedJoint, HingeJoint, Joint, SliderJoint
from ..rotations import quat_mul, quat_rotate
from .scene import (
    KeyPath,
    _boolean,
    _known_keys,
    _located,
    _number,
    _Problem,
    _quaternion,
    _show,
    _string,
    _table,
    _vector,
    at_most,
)

if TYPE_CHECKING:
    from ..world import World

WORLD = "world"
"""The name that refers to the world (a fixed frame) where a body is expected."""

_JOINT_TYPES = {"ball": BallJoint, "hinge": HingeJoint, "slider": SliderJoint, "fixed": FixedJoint}
_JOINT_KEYS = ("type", "a", "b", "anchor", "axis", "frame_a", "frame_b", "limits", "rpy_limits", "motor",
               "compliance", "damping", "break_force", "collide", "name", "broken")
_RPY = ("roll", "pitch", "yaw")
_SPRING_KEYS = {
    "axial": ("a", "b", "anchor_a", "anchor_b", "local_a", "local_b", "stiffness", "damping", "rest_length"),
    "cable": ("bodies", "points", "local_points", "stiffness", "damping", "rest_length"),
    "frame": ("a", "b", "frame_point", "frame_orientation", "frame_a", "frame_b", "stiffness", "damping",
              "rotational_stiffness", "rotational_damping"),
}
_FRAME_KEYS = ("position", "orientation")
_ATTACHMENT_KEYS = ("body", "master", "point", "mass")


# ====================================================================== checking
def check_joints(value: Any, bodies: list[str | None], robots: bool = False) -> list[dict[str, Any]]:
    """The ``[[joints]]`` array as plans for ``build_joints``; ``bodies``: each world body's name (None for
    an unnamed one), in world order. With ``robots`` (the file has ``[[robots]]``) a name of the form
    "ROBOT/LINK" that names no body is kept as a name: a robot link's body (a loop closure, robots/closures.py),
    found once the robots are read (``build_joints``)."""
    out = []
    for k, spec in enumerate(_array_of_tables(("joints",), value)):
        where: KeyPath = ("joints", k)
        spec = _table(where, spec)
        kind = _type(where, spec, _JOINT_TYPES)
        _known_keys(where, spec, _JOINT_KEYS, f"key of a {kind} joint")
        if "a" not in spec:
            raise _Problem(where, "a joint needs a = the first body (its name or index)")
        a = _body(where + ("a",), spec["a"], bodies, world_ok=False, links=robots)
        b = _body(where + ("b",), spec["b"], bodies, world_ok=True, links=robots) if "b" in spec else -1
        if a == b:
            raise _Problem(where + ("b",), f"must be a different body from a, got {_show(spec['b'])}")
        plan: dict[str, Any] = {"where": where, "kind": kind, "a": a, "b": b}
        frames = [key for key in ("frame_a", "frame_b") if key in spec]
        placed = [key for key in ("anchor", "axis") if key in spec]
        if frames and placed:
            raise _Problem(where + (placed[0],), "give anchor and axis (world, at the file's state) or frame_a "
                                                 "and frame_b (each body's axes), not both")
        if frames:
            if len(frames) == 1:
                raise _Problem(where, f"{frames[0]} needs {'frame_b' if frames[0] == 'frame_a' else 'frame_a'} too")
            plan["frames"] = tuple(_frame(where + (key,), spec[key]) for key in ("frame_a", "frame_b"))
        else:
            if "anchor" in spec:
                plan["anchor"] = _vector(where + ("anchor",), spec["anchor"], 3)
            elif kind != "fixed":
                raise _Problem(where, f"a {kind} joint needs anchor = [x, y, z] (world, at the file's state)")
            if kind in ("hinge", "slider"):
                if "axis" not in spec:
                    raise _Problem(where, f"a {kind} joint needs axis = [x, y, z] (world, at the file's state)")
                plan["axis"] = _vector(where + ("axis",), spec["axis"], 3)
            elif "axis" in spec:
                raise _Problem(where + ("axis",), f"a {kind} joint has no axis")
        options: dict[str, Any] = {}
        if "limits" in spec:
            if kind not in ("hinge", "slider"):
                hint = "; a ball joint takes rpy_limits" if kind == "ball" else ""
                raise _Problem(where + ("limits",), f"a {kind} joint has no limits{hint}")
            options["limits"] = _vector(where + ("limits",), spec["limits"], 2)
        if "rpy_limits" in spec:
            if kind != "ball":
                raise _Problem(where + ("rpy_limits",), f"rpy_limits need a ball joint, got a {kind} joint")
            rpy = _table(where + ("rpy_limits",), spec["rpy_limits"])
            _known_keys(where + ("rpy_limits",), rpy, _RPY, "axis of rpy_limits")
            options["rpy_limits"] = tuple(_vector(where + ("rpy_limits", axis), rpy[axis], 2) if axis in rpy else None
                                          for axis in _RPY)
        if "motor" in spec:
            if kind not in ("hinge", "slider"):
                raise _Problem(where + ("motor",), f"a motor needs a hinge or slider joint, got a {kind} joint")
            options["motor"] = _vector(where + ("motor",), spec["motor"], 2)
        for key in ("compliance", "damping"):
            if key in spec:
                options[key] = _number(where + (key,), spec[key], minimum=0.0)
        if "break_force" in spec:
            options["break_force"] = _number(where + ("break_force",), spec["break_force"], positive=True)
        if "collide" in spec:
            options["collide"] = _boolean(where + ("collide",), spec["collide"])
        if "name" in spec:
            options["name"] = _string(where + ("name",), spec["name"])
        plan["options"] = options
        plan["broken"] = _boolean(where + ("broken",), spec["broken"]) if "broken" in spec else False
        out.append(plan)
    return out


def check_springs(value: Any, bodies: list[str | None], robots: bool = False) -> list[dict[str, Any]]:
    """The ``[[springs]]`` array as plans for ``build_springs`` (``bodies`` and ``robots`` as in ``check_joints``: a
    spring may hold a robot link's body, "ROBOT/LINK", whose loads act on the robot)."""
    out = []
    for k, spec in enumerate(_array_of_tables(("springs",), value)):
        where: KeyPath = ("springs", k)
        spec = _table(where, spec)
        kind = _type(where, spec, _SPRING_KEYS)
        _known_keys(where, spec, ("type",) + _SPRING_KEYS[kind], f"key of a {kind} spring")
        plan: dict[str, Any] = {"where": where, "kind": kind}
        if kind == "cable":
            refs = spec.get("bodies")
            if not isinstance(refs, list) or len(refs) < 2:
                raise _Problem(where + ("bodies",), f"must be an array of at least 2 bodies (names, indices or "
                                                    f"\"world\"), got {_show(refs)}")
            plan["bodies"] = [_body(where + ("bodies", j), r, bodies, world_ok=True, links=robots)
                              for j, r in enumerate(refs)]
            plan["points"] = _points(where, spec, "points", "local_points", len(refs))
        else:
            for side in ("a", "b"):
                if side not in spec:
                    raise _Problem(where, f"a {kind} spring needs {side} = a body's name or index, or \"world\"")
                plan[side] = _body(where + (side,), spec[side], bodies, world_ok=True, links=robots)
            if plan["a"] == plan["b"]:
                raise _Problem(where + ("b",), f"must differ from a, got {_show(spec['b'])}")
        if kind == "axial":
            plan["points"] = _points(where, spec, ("anchor_a", "anchor_b"), ("local_a", "local_b"), None)
        if kind == "frame":
            if "frame_a" in spec or "frame_b" in spec:
                if "frame_point" in spec or "frame_orientation" in spec:
                    raise _Problem(where + ("frame_a",), "give frame_point (and frame_orientation) or frame_a and "
                                                         "frame_b, not both")
                for key in ("frame_a", "frame_b"):
                    if key not in spec:
                        raise _Problem(where, f"frame_a and frame_b go together: {key} is missing")
                plan["frames"] = tuple(_frame(where + (key,), spec[key]) for key in ("frame_a", "frame_b"))
            else:
                if "frame_point" not in spec:
                    raise _Problem(where, "a frame spring needs frame_point = [x, y, z] (world, at the file's state)")
                plan["frame_point"] = _vector(where + ("frame_point",), spec["frame_point"], 3)
                plan["frame_orientation"] = _quaternion(where + ("frame_orientation",),
                                                        spec.get("frame_orientation", [1.0, 0.0, 0.0, 0.0]))
        options: dict[str, Any] = {}
        if "stiffness" not in spec:
            raise _Problem(where, f"{'an' if kind == 'axial' else 'a'} {kind} spring needs stiffness")
        scalar_keys = ("stiffness", "damping", "rest_length") if kind != "frame" else ()
        for key in scalar_keys:
            if key in spec:
                options[key] = _number(where + (key,), spec[key], minimum=0.0)
        if kind == "frame":
            for key in ("stiffness", "damping", "rotational_stiffness", "rotational_damping"):
                if key in spec:
                    options[key] = _stiffness(where + (key,), spec[key])
        plan["options"] = options
        out.append(plan)
    return out


def _array_of_tables(where: KeyPath, value: Any) -> list[Any]:
    if isinstance(value, dict):
        raise _Problem(where, f"must be an array of tables: write each as [[{where[0]}]], not [{where[0]}]")
    if not isinstance(value, list):
        raise _Problem(where, f"must be an array of tables ([[{where[0]}]]), got {_show(value)}")
    at_most(where, value, str(where[0]))
    return value


def _type(where: KeyPath, spec: dict[str, Any], known: dict[str, Any]) -> str:
    if "type" not in spec:
        raise _Problem(where, f"needs type = one of {sorted(known)}")
    kind = _string(where + ("type",), spec["type"])
    if kind not in known:
        raise _Problem(where + ("type",), f"unknown type {kind!r}; known: {sorted(known)}")
    return kind


def _body(where: KeyPath, value: Any, bodies: list[str | None], *, world_ok: bool, links: bool = False) -> Any:
    """A body reference as its world index, −1 for the world; with ``links`` a "ROBOT/LINK" name that names no
    body as itself (a link's body, found when the robots are read: ``_link_body``)."""
    if isinstance(value, str):
        if value == WORLD:
            if not world_ok:
                raise _Problem(where, "must be a body, not the world (the world may be b)")
            return -1
        if links and value not in bodies and "/" in value:
            return value
        if value not in bodies:
            named = [name for name in bodies if name is not None]
            raise _Problem(where, f"names no body: {value!r}; the bodies' names are {named}")
        return bodies.index(value)
    if isinstance(value, bool) or not isinstance(value, int):
        raise _Problem(where, f"must be a body's name, its index or \"world\", got {_show(value)}")
    if not 0 <= value < len(bodies):
        raise _Problem(where, f"must be a body index in [0, {len(bodies) - 1}], got {value!r}")
    return value


def _frame(where: KeyPath, value: Any) -> np.ndarray:
    """A { position, orientation } table as (7,): position (3,) [m] and unit quaternion (4,) in a body's axes."""
    table = _table(where, value)
    _known_keys(where, table, _FRAME_KEYS, "key of a frame")
    for key in _FRAME_KEYS:
        if key not in table:
            raise _Problem(where, f"a frame needs {key}")
    q = _quaternion(where + ("orientation",), table["orientation"])
    norm = math.sqrt(sum(c * c for c in q))
    if abs(norm - 1.0) > 1e-9:   # a frame is what the world kept: a unit quaternion, used as written
        raise _Problem(where + ("orientation",), f"must be a unit quaternion (to 1e-9), got norm {norm!r}")
    return np.array(_vector(where + ("position",), table["position"], 3) + q)


def _points(where: KeyPath, spec: dict[str, Any], world_keys: Any, local_keys: Any, count: int | None) -> dict:
    """World points (at the file's state) or body-local points, one of the two: {"world" | "local": (p, 3)}."""
    world_keys = (world_keys,) if isinstance(world_keys, str) else world_keys
    local_keys = (local_keys,) if isinstance(local_keys, str) else local_keys
    given_world = [k for k in world_keys if k in spec]
    given_local = [k for k in local_keys if k in spec]
    if given_world and given_local:
        raise _Problem(where + (given_local[0],), f"give {' and '.join(world_keys)} (world) or "
                                                  f"{' and '.join(local_keys)} (body axes), not both")
    keys, label = (local_keys, "local") if given_local else (world_keys, "world")
    rows = []
    for key in keys:
        if key not in spec:
            raise _Problem(where, f"needs {key}")
        if count is None:
            rows.append(_vector(where + (key,), spec[key], 3))
            continue
        value = spec[key]
        if not isinstance(value, list) or len(value) != count:
            raise _Problem(where + (key,), f"must be {count} points [x, y, z], one per body, got {_show(value)}")
        rows.extend(_vector(where + (key, j), p, 3) for j, p in enumerate(value))
    return {label: np.array(rows)}


def _stiffness(where: KeyPath, value: Any) -> Any:
    """A non-negative number or (3,) array of them (per frame-A axis)."""
    if isinstance(value, list):
        return [_number(where + (j,), c, minimum=0.0) for j, c in enumerate(_vector(where, value, 3))]
    return _number(where, value, minimum=0.0)


# ====================================================================== building
def build_joints(world: World, plans: list[dict[str, Any]]) -> None:
    """Add the planned joints to ``world`` (its bodies are built and posed as the file says)."""
    handles = world.bodies
    for plan in plans:
        a = _link_body(world, plan["a"], plan["where"] + ("a",)) if isinstance(plan["a"], str) else handles[plan["a"]]
        b = _link_body(world, plan["b"], plan["where"] + ("b",)) if isinstance(plan["b"], str) else \
            None if plan["b"] < 0 else handles[plan["b"]]
        cls = _JOINT_TYPES[plan["kind"]]
        if "frames" in plan:
            anchor, axis = _placed_by_frame(a, plan["frames"][0])
        else:
            anchor, axis = plan.get("anchor", a.position), plan.get("axis")
        args = (a, b, anchor) if axis is None or cls not in (HingeJoint, SliderJoint) else (a, b, anchor, axis)
        try:
            with np.errstate(over="raise", divide="raise", invalid="raise"):
                joint: Joint = world.add_joint(cls(*args, **plan["options"]))
        except (TypeError, ValueError, ArithmeticError) as exc:
            raise _located(plan["where"], exc, _keys(plan)) from None
        if "frames" in plan:
            joint.frames = plan["frames"]
        if plan["broken"]:
            joint.broken = True


def _link_body(world: World, name: str, where: KeyPath) -> Any:
    """The body called ``name`` (the file's key ``where``) once the robots are read: a robot link's body
    ("ROBOT/LINK")."""
    for body in world.bodies:
        if body.name == name:
            return body
    links = [f"{robot.name}/{link}" for robot in world.robots for link in robot.link_names
             if robot.link(link).body is not None]
    raise _Problem(where, f"names no body: {name!r}; the robots' link bodies are {links}")


def _keys(plan: dict[str, Any]) -> dict[str, KeyPath]:
    """Where each option of a joint or spring plan was written (argument name → key path)."""
    return {key: plan["where"] + (key,) for key in plan["options"]}


def _placed_by_frame(a: Any, frame_a: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The world anchor and x axis of a joint frame given in a's axes, at a's pose now."""
    anchor, orientation = _frame_in_world(a, frame_a)
    return anchor, quat_rotate(orientation, np.array([1.0, 0.0, 0.0]))


def build_springs(world: World, plans: list[dict[str, Any]]) -> None:
    """Add the planned springs to ``world``; body-local points and frames are stored as written."""
    handles = world.bodies

    def ref(plan: dict[str, Any], index: int | str, *key: Any) -> Any:
        if isinstance(index, str):   # a robot link's body (``check_springs``)
            return _link_body(world, index, plan["where"] + key)
        return None if index < 0 else handles[index]

    for plan in plans:
        local = plan.get("points", {}).get("local")
        world_points = plan.get("points", {}).get("world")
        try:
            with np.errstate(over="raise", divide="raise", invalid="raise"):
                if plan["kind"] == "cable":
                    refs = [ref(plan, i, "bodies", j) for j, i in enumerate(plan["bodies"])]
                    points = world_points if local is None else _to_world(refs, local)
                    spring: Any = MultiPointSpring(refs, points, **plan["options"])
                elif plan["kind"] == "axial":
                    refs = [ref(plan, plan["a"], "a"), ref(plan, plan["b"], "b")]
                    points = world_points if local is None else _to_world(refs, local)
                    spring = AxialSpring(refs[0], refs[1], points[0], points[1], **plan["options"])
                else:
                    refs = [ref(plan, plan["a"], "a"), ref(plan, plan["b"], "b")]
                    if "frames" in plan:
                        point, orientation = _frame_in_world(refs[0], plan["frames"][0])
                    else:
                        point, orientation = plan["frame_point"], plan["frame_orientation"]
                    spring = FrameSpring(refs[0], refs[1], point, frame_orientation=orientation, **plan["options"])
                world.add_spring(spring)
        except (TypeError, ValueError, ArithmeticError) as exc:
            raise _located(plan["where"], exc, _keys(plan)) from None
        # what the world keeps, as written (bind from world points would round it)
        if local is not None and plan["kind"] == "cable":
            spring.local_points = local.copy()
        elif local is not None:
            spring.local_a, spring.local_b = local[0].copy(), local[1].copy()
        elif "frames" in plan:
            spring.local_pos = np.stack([f[:3] for f in plan["frames"]])
            spring.local_rot = np.stack([f[3:] for f in plan["frames"]])
        world.model.constraints_changed()     # the springs' points changed: pack them again


def _to_world(refs: list[Any], local: np.ndarray) -> np.ndarray:
    """Body-local points (p, 3) as world points at the bodies' poses now (the world's for None)."""
    return np.array([p if body is None else body.position + quat_rotate(body.orientation, p)
                     for body, p in zip(refs, local, strict=True)])


def _frame_in_world(body: Any, frame: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """A frame (7,) in ``body``'s axes (the world's for None) as a world point and quaternion."""
    if body is None:
        return frame[:3], frame[3:]
    return body.position + quat_rotate(body.orientation, frame[:3]), quat_mul(body.orientation, frame[3:])


def check_attachments(value: Any, bodies: list[str | None]) -> list[dict[str, Any]]:
    """The ``[[attachments]]`` tables as plans: {"where", "body", and "master" or "point" and "mass"}."""
    plans = []
    for k, spec in enumerate(_array_of_tables(("attachments",), value)):
        where: KeyPath = ("attachments", k)
        spec = _table(where, spec)
        _known_keys(where, spec, _ATTACHMENT_KEYS, "key of an attachment")
        if "body" not in spec:
            raise _Problem(where, "needs body = the attached body (or the one that carries the point mass)")
        plan: dict[str, Any] = {"where": where, "body": _body(where + ("body",), spec["body"], bodies,
                                                              world_ok=False)}
        if ("master" in spec) == ("mass" in spec or "point" in spec):
            raise _Problem(where, "give master = ... (a body attached to a body) or point = [...] and "
                                  "mass = ... (a point mass), not both or neither")
        if "master" in spec:
            plan["master"] = _body(where + ("master",), spec["master"], bodies, world_ok=False)
        else:
            for key in ("point", "mass"):
                if key not in spec:
                    raise _Problem(where, f"a point mass needs {key}")
            plan["point"] = np.array(_vector(where + ("point",), spec["point"], 3))
            plan["mass"] = _number(where + ("mass",), spec["mass"], positive=True)
        plans.append(plan)
    return plans


def build_attachments(world: World, plans: list[dict[str, Any]]) -> None:
    """Make the planned attachments in ``world`` in order (its bodies are built and posed as the file says)."""
    handles = world.bodies
    for plan in plans:
        try:
            with np.errstate(over="raise", divide="raise", invalid="raise"):
                if "master" in plan:
                    world.attach(handles[plan["body"]], handles[plan["master"]])
                else:
                    world.attach_point_mass(handles[plan["body"]], plan["point"], plan["mass"])
        except (TypeError, ValueError, ArithmeticError) as exc:
            raise _located(plan["where"], exc, {key: plan["where"] + (key,) for key in ("point", "mass")
                                                if key in plan}) from None


# ====================================================================== writing
def attachment_tables(world: World, reference: Any) -> list[dict[str, Any]]:
    """One table per attachment as ``save_scene`` writes it, in the order they were made (a point mass's
    point in world coordinates now)."""
    out = []
    for op in world.attachment_log:
        if op[0] == "body":
            out.append({"body": reference(op[1]), "master": reference(op[2])})
        else:
            x, q = world.frame_as_made(op[1])
            out.append({"body": reference(op[1]), "point": (x + quat_rotate(q, op[2])).tolist(),
                        "mass": float(op[3])})
    return out



def joint_tables(world: World, reference: Any) -> list[dict[str, Any]]:
    """One table per joint as ``save_scene`` writes it: frames in the bodies' axes, so it loads back exactly.
    ``reference(body)`` gives the body's name or index for the file."""
    out = []
    for joint in world.joints:
        if joint._robot is not None:   # a robot file's closure: the robot's file makes it again
            continue
        fa, fb = joint._frames
        table: dict[str, Any] = {"type": joint.kind_name, "a": reference(joint.a)}
        if joint.b is not None:
            table["b"] = reference(joint.b)
        table["frame_a"] = {"position": fa[:3].tolist(), "orientation": fa[3:].tolist()}
        table["frame_b"] = {"position": fb[:3].tolist(), "orientation": fb[3:].tolist()}
        if joint.limits is not None:
            if isinstance(joint, BallJoint):
                table["rpy_limits"] = {axis: list(pair) for axis, pair in zip(_RPY, joint.limits, strict=True)
                                       if pair is not None}
            else:
                table["limits"] = list(joint.limits)
        if joint.motor is not None:
            table["motor"] = list(joint.motor)
        for key in ("compliance", "damping"):
            if getattr(joint, key) != 0.0:
                table[key] = getattr(joint, key)
        if math.isfinite(joint.break_force):
            table["break_force"] = joint.break_force
        if joint.collide:
            table["collide"] = True
        if joint.name is not None:
            table["name"] = joint.name
        if joint.broken:
            table["broken"] = True
        out.append(table)
    return out


def spring_tables(world: World, reference: Any) -> list[dict[str, Any]]:
    """One table per spring as ``save_scene`` writes it: points and frames in the bodies' axes."""

    def ref(body: Any) -> Any:
        return WORLD if body is None else reference(body)

    out = []
    for spring in world.springs:
        if isinstance(spring, AxialSpring):
            table: dict[str, Any] = {"type": "axial", "a": ref(spring.a), "b": ref(spring.b),
                                     "local_a": spring.local_a.tolist(), "local_b": spring.local_b.tolist(),
                                     "stiffness": spring.stiffness, "damping": spring.damping,
                                     "rest_length": spring.rest_length}
        elif isinstance(spring, MultiPointSpring):
            table = {"type": "cable", "bodies": [ref(b) for b in spring.bodies],
                     "local_points": spring.local_points.tolist(), "stiffness": spring.stiffness,
                     "damping": spring.damping, "rest_length": spring.rest_length}
        else:
            table = {"type": "frame", "a": ref(spring.a), "b": ref(spring.b)}
            for side, key in ((0, "frame_a"), (1, "frame_b")):
                table[key] = {"position": spring.local_pos[side].tolist(),
                              "orientation": spring.local_rot[side].tolist()}
            for key in ("stiffness", "damping", "rotational_stiffness", "rotational_damping"):
                table[key] = getattr(spring, key).tolist()
        out.append(table)
    return out

