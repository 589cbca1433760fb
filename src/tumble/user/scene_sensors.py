"""Scene files: the ``[[sensors]]`` tables (docs/scenes.md is the format reference; docs/sensors.md the sensors).

One table per sensor, in the order they are added to the world::

    [[sensors]]
    type = "imu"                 # "imu", "contact_force" or "force_torque"
    name = "imu"                 # optional: World.add_sensor's automatic name otherwise
    body = "box"                 # imu, contact_force: a body's name or index, or a robot link's "ROBOT/LINK"
    position = [0.0, 0.0, 0.1]   # imu: the sensor point in the body's frame [m] (default the COM)
    orientation = [1.0, 0.0, 0.0, 0.0]   # imu: sensor → body quaternion (w, x, y, z)
    other = "ground"             # contact_force: only the contacts with this body (default: all)
    robot = "arm"                # force_torque: a robot's name, with joint = one of its joints' names;
    joint = "elbow"              #   without robot, joint is a [[joints]] entry's name or index
    noise = 0.01                 # standard deviation per component: one number or k of them (default 0)
    bias = [0.0, 0.0, 0.1]       # constant added per component: one number or k of them (default 0)
    seed = 7                     # the noise generator's seed (default: fresh entropy)

Checked with the rest of the file before the world is built (``check_sensors``); the references to robots,
their links and joints are resolved when the world is (``build_sensors``), with the sensor classes' own
checks located at the key that gave the value.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

import numpy as np

from ..sensors import SENSOR_TYPES, ContactForce, ForceTorque, Imu, Sensor
from .scene import KeyPath, _integer, _known_keys, _located, _number, _Problem, _quaternion, _string, _table, _vector
from .scene_joints import _array_of_tables, _body, _link_body, _type

if TYPE_CHECKING:
    from ..world import World

_KEYS = {
    "imu": ("type", "name", "body", "position", "orientation", "noise", "bias", "seed"),
    "contact_force": ("type", "name", "body", "other", "noise", "bias", "seed"),
    "force_torque": ("type", "name", "robot", "joint", "noise", "bias", "seed"),
}
_QUAT_AS_IS = 1e-9
"""An orientation within this of unit length is kept as written (normalizing it again could change its last
bit), so a saved scene loads back bitwise."""


# ====================================================================== checking
def check_sensors(value: Any, bodies: list[str | None]) -> list[dict[str, Any]]:
    """The ``[[sensors]]`` array as plans for ``build_sensors``; ``bodies``: each world body's name (None for
    an unnamed one), in world order. A body reference is kept as its world index, or as a "ROBOT/LINK" name to
    find once the robots are read."""
    out = []
    names: dict[str, KeyPath] = {}
    for k, spec in enumerate(_array_of_tables(("sensors",), value)):
        where: KeyPath = ("sensors", k)
        spec = _table(where, spec)
        kind = _type(where, spec, SENSOR_TYPES)
        _known_keys(where, spec, _KEYS[kind], f"key of a sensor of type {kind!r}")
        plan: dict[str, Any] = {"where": where, "kind": kind, "keys": {}, "options": {}}
        if "name" in spec:
            name = _string(where + ("name",), spec["name"])
            if name in names:
                raise _Problem(where + ("name",), f"the name {name!r} is taken by the sensor at "
                                                  f"sensors[{names[name][1]}]; sensor names are unique")
            names[name] = where
            plan["name"] = name
        if kind in ("imu", "contact_force"):
            if "body" not in spec:
                raise _Problem(where, "needs body = a body's name or index")
            plan["body"] = _body(where + ("body",), spec["body"], bodies, world_ok=False, links=True)
        if kind == "contact_force" and "other" in spec:
            plan["other"] = _body(where + ("other",), spec["other"], bodies, world_ok=False, links=True)
        if kind == "imu":
            if "position" in spec:
                plan["options"]["position"] = _vector(where + ("position",), spec["position"], 3)
            if "orientation" in spec:
                plan["options"]["orientation"] = _quaternion(where + ("orientation",), spec["orientation"])
        if kind == "force_torque":
            if "joint" not in spec:
                raise _Problem(where, "needs joint = a robot joint's name (with robot) or a [[joints]] entry's "
                                      "name or index")
            joint = spec["joint"]
            if "robot" in spec:
                plan["robot"] = _string(where + ("robot",), spec["robot"])
                plan["joint"] = _string(where + ("joint",), joint)
            elif isinstance(joint, str):
                plan["joint"] = joint
            else:
                plan["joint"] = _integer(where + ("joint",), joint, 0, None)
        for key in ("noise", "bias"):
            if key in spec:
                plan["options"][key] = _components(where + (key,), spec[key], minimum=0.0 if key == "noise" else None)
        if "seed" in spec:
            plan["options"]["seed"] = _integer(where + ("seed",), spec["seed"], 0, None)
        plan["keys"] = {key: where + (key,) for key in plan["options"]}
        out.append(plan)
    return out


def _components(where: KeyPath, value: Any, minimum: float | None) -> float | list[float]:
    """One number or a list of them (one per component; the sensor checks how many)."""
    if isinstance(value, list):
        return [_number(where + (j,), c, minimum=minimum) for j, c in enumerate(value)]
    return _number(where, value, minimum=minimum)


# ====================================================================== building
def build_sensors(world: World, plans: list[dict[str, Any]]) -> None:
    """Add the planned sensors to ``world`` (its bodies, robots and joints are built)."""
    for plan in plans:
        where = plan["where"]
        options = plan["options"]
        try:
            with np.errstate(over="raise", divide="raise", invalid="raise"):
                sensor = _make(world, plan)
                world.add_sensor(sensor, plan.get("name"))
        except (TypeError, ValueError, ArithmeticError) as exc:
            raise _located(where, exc, {**plan["keys"], "name": where + ("name",),
                                        "joint_name": where + ("joint",), "source": where + ("joint",)}) from None
        q = options.get("orientation")
        if isinstance(sensor, Imu) and q is not None and abs(math.sqrt(sum(c * c for c in q)) - 1.0) <= _QUAT_AS_IS:
            sensor.orientation = np.array(q, dtype=float)   # as written (see _QUAT_AS_IS)


def _make(world: World, plan: dict[str, Any]) -> Sensor:
    where, kind, options = plan["where"], plan["kind"], plan["options"]
    if kind in ("imu", "contact_force"):
        body = _resolve(world, plan["body"], where + ("body",))
        if kind == "imu":
            return Imu(body, **options)
        other = _resolve(world, plan["other"], where + ("other",)) if "other" in plan else None
        return ContactForce(body, other, **options)
    if "robot" in plan:
        robots = {robot.name: robot for robot in world.robots}
        if plan["robot"] not in robots:
            raise _Problem(where + ("robot",), f"names no robot: {plan['robot']!r}; the robots: {list(robots)}")
        return ForceTorque(robots[plan["robot"]], plan["joint"], **options)
    joints = world.joints
    ref = plan["joint"]
    if isinstance(ref, int):
        if ref >= len(joints):
            raise _Problem(where + ("joint",), f"must be a joint index in [0, {len(joints) - 1}] (the [[joints]] "
                                               f"entries), got {ref}")
        return ForceTorque(joints[ref], **options)
    named = [j for j in joints if j.name == ref]
    if not named:
        raise _Problem(where + ("joint",), f"names no joint: {ref!r}; the joints' names are "
                                           f"{[j.name for j in joints if j.name is not None]} (give robot = ... for "
                                           f"a robot's joint)")
    return ForceTorque(named[0], **options)


def _resolve(world: World, ref: int | str, where: KeyPath) -> Any:
    return _link_body(world, ref, where) if isinstance(ref, str) else world.bodies[ref]


# ====================================================================== writing
def sensor_tables(world: World, reference: Any) -> list[dict[str, Any]]:
    """The ``[[sensors]]`` tables of ``world``'s sensors, in the order added; ``reference(body)`` is what the
    file calls a body (its name, or its index among the file's bodies)."""
    out = []
    joints = world.joints
    for name, sensor in world.sensors.items():
        table: dict[str, Any] = {"type": sensor.kind, "name": name}
        for key, value in sensor.spec().items():
            if key in ("body", "other"):
                link = _link_name(world, value)
                table[key] = link if link is not None else reference(value)
            elif key == "robot":
                table[key] = value.name
            elif key == "joint" and not isinstance(value, str):
                table[key] = value.name if value.name is not None else next(
                    k for k, joint in enumerate(joints) if joint is value)
            else:
                table[key] = value
        out.append(table)
    return out


def _link_name(world: World, body: Any) -> str | None:
    """"ROBOT/LINK" for a robot link's body (the robot makes it again: the file does not list it), else None."""
    for robot in world.robots:
        for link in robot.links:
            if link.body is body:
                return f"{robot.name}/{link.name}"
    return None


__all__ = ["build_sensors", "check_sensors", "sensor_tables"]
