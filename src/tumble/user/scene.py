"""Scene files: a world in TOML (docs/scenes.md is the format reference).

``load_scene(path)`` reads a file with the standard library's ``tomllib`` (no code is ever evaluated),
checks every table and key, and only then builds the ``World``. A malformed file raises ``ValueError``
with a one-line message ``FILE:LINE: key.path: problem``, e.g.
``scene.toml:14: bodies[2].shape.radius: must be positive, got -1.0`` (``bodies[0]`` is the first
``[[bodies]]`` table).

``save_scene(world, path)`` writes a world so that loading it back gives bitwise the same arrays (with
attachments: the same to rounding): each
body as it was made (shape, density or mass and inertia as given, material, flags) and its current state
(x, q, v, w), plus gravity, the options and the time; joints, springs and attachments by ``scene_joints``
(a world with attachments loads back to rounding: they are made again); each robot read from a URDF or MJCF
file as a ``[[robots]]`` table (its file, how it was added, its joint state q, q̇, its controls and the
material extras set on its links), its link bodies left out of ``[[bodies]]`` (the robot makes them again).
Not saved: force callbacks, loads applied for the next step, the contacts' warm start and the sleep state (a
loaded scene starts awake, with a cold warm start).

Units are SI throughout: metres, kilograms, seconds, radians; vectors are in the world frame except a
compound's part poses (the compound's own frame); quaternions are (w, x, y, z), body → world.
"""

from __future__ import annotations

import math
import os
import re
import tomllib
from dataclasses import fields
from pathlib import Path
from typing import Any

import numpy as np
import tomli_w

from .. import _checks
from ..conventions import (
    DEFAULT_CONTACT_MARGIN,
    DEFAULT_DENSITY,
    DEFAULT_FRICTION,
    DEFAULT_GRAVITY,
    DEFAULT_RESTITUTION,
)
from ..methods.event import EventSettings
from ..model import body_arrays
from ..model.settings import ContactSettings
from ..shapes import Box, Capsule, ConvexHull, Cylinder, Ellipsoid, Sphere
from ..world import World
from .trajectory import MAX_STEPS, _atomic_write

SCENE_FORMAT = 1
"""The newest scene format this version reads and the one it writes."""

MAX_SCENE_BYTES = 64 * 2**20
"""The largest scene file ``load_scene`` reads [bytes] (64 MiB), checked before it is read: room for a scene
of ``MAX_SCENE_BODIES`` bodies as ``save_scene`` writes them (about 350 bytes a body, 35 MB) with hulls.
Parsing takes about 12 bytes of memory per byte of file, and about 1.5 s per MiB on a busy machine."""

MAX_SCENE_BODIES = 100_000
"""The most ``[[bodies]]`` a scene file may hold (the ground aside), and likewise the most ``[[joints]]``,
``[[springs]]`` and ``[[attachments]]`` each: a world of this many bodies takes about 0.6 GB and a couple of
minutes to build. ``[[bodies]]`` headers are counted before the file is parsed."""

MAX_SCENE_NESTING = 64
"""The deepest a scene file may nest arrays and inline tables (``[[[...]]]``, ``{ a = { ... } }``), and the
most parts a dotted key may have (``a.b.c``); checked before the file is parsed. A scene needs 3 (``parts =
[{ position = [...] }]``); ``tomllib`` recurses once per level and overflows Python's stack near 500."""

KeyPath = tuple[str | int, ...]
"""Where a value sits in the file: table and key names, and array indices (0-based)."""

_TOP_KEYS = ("format", "world", "run", "ground", "materials", "bodies", "robots", "attachments", "joints",
             "springs", "sensors")
_WORLD_KEYS = ("gravity", "method", "integrator", "robot_integrator", "contact_margin", "time", "contact", "event")
_EVENT_KEYS = ("impacts", "tolerance", "contact_band", "threshold", "ode", "root")
"""Keys of [world.event]: the event-driven method's settings, World(event_<key>=...)."""
_RUN_KEYS = ("dt", "duration", "record_every")
_EXTRA_KEYS = ("rolling_friction", "torsional_friction", "contact_stiffness", "contact_dissipation")
"""The material extras (docs/materials.md), keys of [materials.NAME], [ground] and [[bodies]] alike."""
_GROUND_KEYS = ("height", "friction", "restitution", "material", "name", "index") + _EXTRA_KEYS
_MATERIAL_KEYS = ("friction", "restitution", "density") + _EXTRA_KEYS
_BODY_KEYS = ("name", "shape", "parts", "density", "mass", "inertia", "position", "orientation", "velocity",
              "angular_velocity", "fixed", "kinematic", "material", "friction", "restitution", "collide",
              "collision_group", "collision_mask") + _EXTRA_KEYS
_SHAPE_KEYS = {"box": ("size",), "sphere": ("radius",), "capsule": ("radius", "length"),
               "cylinder": ("radius", "height"), "ellipsoid": ("semi_axes",), "hull": ("points",)}
_POSE_KEYS = ("position", "orientation")
_ROBOT_CONTROLS = ("tau", "kp", "kd", "q_target", "qd_target")
"""A robot's controls (``Robot.tau`` …), (nv,) each, written when not all zero."""
_ROBOT_KEYS = ("file", "format", "name", "position", "orientation", "fixed_base", "self_collision", "friction",
               "restitution", "q", "qd") + _ROBOT_CONTROLS + ("link_materials", "mocap")
_MOCAP_KEYS = ("position", "orientation", "velocity", "angular_velocity")
"""A robot's mocap body's state in its ``mocap`` table (an MJCF mocap body is a kinematic body its file makes)."""
_ROBOT_FORMATS = {".urdf": "urdf", ".xml": "mjcf"}
"""The format a robot file's extension implies when its table gives no ``format``."""
_CONTACT_KEYS = tuple(f.name for f in fields(ContactSettings) if f.init)
_NOT_YET = {"forces": "force callbacks"}

_QUAT_AS_IS = 1e-9
"""An orientation whose norm is within this of 1 is used exactly as written (so a saved state reloads
bitwise); any other non-zero quaternion is normalized."""


class _Problem(Exception):
    """A problem at a key path; ``load_scene`` turns it into ``ValueError('FILE:LINE: path: problem')``."""

    def __init__(self, where: KeyPath, problem: str) -> None:
        super().__init__(problem)
        self.where = where
        self.problem = problem


# ====================================================================== public functions
def load_scene(path: str | os.PathLike, **options: Any) -> World:
    """Build a ``World`` from a TOML scene file (format reference: docs/scenes.md).

    Args:
        path: the scene file (UTF-8 TOML).
        **options: World options that replace the file's (``tumble run --solver`` uses this): gravity,
            method, integrator, contact_margin, or any contact option (solver, friction, ...). They are
            checked by ``World`` as if given there.

    Returns:
        The world, with its bodies in file order (the ``[ground]``, if any, first unless its ``index`` says
        otherwise; then the link bodies of the ``[[robots]]``, robot by robot), ``world.time`` from
        ``[world] time`` and ``world.run_defaults`` = the ``[run]`` table
        as a dict (keys among ``dt`` [s], ``duration`` [s], ``record_every``; empty when absent), the
        defaults ``tumble run`` uses. Bodies start awake, with no force callbacks and a cold warm start.

    Raises:
        ValueError: the file is missing, unreadable, not UTF-8, not TOML, of a newer format, beyond the
            limits (``MAX_SCENE_BYTES``, ``MAX_SCENE_NESTING``, ``MAX_SCENE_BODIES``: checked before it is
            parsed), or any table or key is unknown, missing, of the wrong type or out of range (the World
            API's own refusals included, located at the key that gave the value). The one-line message reads
            ``FILE:LINE: key.path: problem``. Everything is checked before the world is built.
        TypeError: ``path`` is not a path.
    """
    text, shown = read_scene_text(path)
    return world_from_document(scene_document(text, shown), text, shown, options, base=Path(path).parent)


def read_scene_text(path: str | os.PathLike) -> tuple[str, str]:
    """The text of a scene file (UTF-8, a leading byte-order mark dropped) and the name its messages show.

    Raises ``ValueError`` (the file is missing, unreadable, not UTF-8 or larger than ``MAX_SCENE_BYTES``,
    checked before it is read) or ``TypeError`` (``path`` is not a path), as ``load_scene``."""
    if not isinstance(path, (str, os.PathLike)):
        raise TypeError(f"path must be a file path (str or os.PathLike), got {path!r}")
    shown = str(path)
    try:
        with open(path, "rb") as fh:
            size = os.fstat(fh.fileno()).st_size
            if size > MAX_SCENE_BYTES:
                raise _TooLarge(size)
            data = fh.read(MAX_SCENE_BYTES + 1)    # a device or pipe says size 0: never read more than this
    except _TooLarge as exc:
        raise ValueError(_too_large(shown, exc.size)) from None
    except OSError as exc:
        raise ValueError(f"scene file {shown!r} could not be read: {exc.strerror or exc}") from None
    if len(data) > MAX_SCENE_BYTES:
        raise ValueError(_too_large(shown, None))
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data[:exc.start].count(b"\n") + 1
        raise ValueError(f"{shown}:{line}: the file is not UTF-8 text (byte 0x{data[exc.start]:02x} at offset "
                         f"{exc.start})") from None
    return text.removeprefix("\ufeff"), shown


def save_scene(world: World, path: str | os.PathLike) -> Path:
    """Write ``world`` to a TOML scene file that ``load_scene`` reads back exactly, or with attachments to
    rounding (docs/scenes.md).

    Written: gravity, method, integrator, contact margin, the contact options given to ``World``, the time,
    ``world.run_defaults`` (as ``[run]``), the ground (height, material, its place among the bodies) and every
    body as it was made (shape or compound parts as given, density or mass and inertia as given, friction,
    restitution, the material extras that are not their defaults, fixed, collision flags, name) with its current
    state: COM position [m], orientation
    quaternion (w, x, y, z), velocity [m/s] and angular velocity [rad/s], world frame. Floats are written
    with ``repr`` precision, so loading gives bitwise the same arrays and saving again the same text.
    Joints and springs are written with their frames and points in their bodies' axes
    (``scene_joints``), so they load back with the same zero angle, limits and rest state; a broken joint
    stays broken. Attachments (``attach``, ``attach_point_mass``) are written in the order they were made,
    with every body involved at the pose and velocity of the frame it was made in: loading makes them again
    and so rebuilds the assemblies (to rounding: the mass properties are recombined as they were made).

    Robots read from files (``add_urdf``, ``add_mjcf``) are written as ``[[robots]]`` tables: the file
    (relative to the scene file's folder when it lies inside that folder, else absolute), its format, name,
    base position and orientation as added, ``fixed_base``, ``self_collision``, the links' ``friction`` and
    ``restitution`` as added, the current joint positions q and velocities q̇ (loading gives them back bitwise,
    and so the link bodies' states), the controls (``tau``, ``kp``, ``kd``, ``q_target``, ``qd_target``) that
    are not all zero, and as ``link_materials`` the material extras set on link bodies after adding
    (``rolling_friction``, ``torsional_friction``, ``contact_stiffness``, ``contact_dissipation``). Their
    link bodies are not written as ``[[bodies]]``: the robot makes them again, after the bodies, so a body's
    index in the file (the ground's ``index``, joints' and springs' references) counts the other bodies
    only.

    Not saved: force callbacks (``add_force``; the world is saved without them, no error), loads applied
    with ``apply_force``/``apply_torque`` for the next step, the contacts' and joints' warm start and the
    sleep state.

    The file is written atomically (a temporary file in the same folder, then renamed). Returns the path.

    Raises:
        ValueError: the world has a robot added with ``add_robot(description)`` (no file to name) or whose
            file is gone, or more than one ground, or ``world.run_defaults`` holds an invalid entry, or the
            file would be one ``load_scene`` refuses: more than ``MAX_SCENE_BODIES`` bodies, robots, joints,
            springs or attachments, or more than ``MAX_SCENE_BYTES`` bytes (nothing is written).
    """
    if not isinstance(world, World):
        raise TypeError(f"world must be a tumble.World, got {world!r}")
    if not isinstance(path, (str, os.PathLike)):
        raise TypeError(f"path must be a file path (str or os.PathLike), got {path!r}")
    _refuse_code_robots(world)
    bodies = sum(1 for r in world.body_records if not r.get("ground") and not _robot_made(r))
    for what, count in (("bodies", bodies), ("robots", len(world.robots)), ("joints", len(world.joints)),
                        ("springs", len(world.springs)), ("attachments", len(world.attachment_log))):
        if count > MAX_SCENE_BODIES:
            raise ValueError(f"world has {count:,} {what}; a scene file may hold at most {MAX_SCENE_BODIES:,} "
                             f"(MAX_SCENE_BODIES), so load_scene would refuse the file")
    data = scene_text(world, Path(path).parent).encode("utf-8")
    if len(data) > MAX_SCENE_BYTES:
        raise ValueError(f"world's scene text takes {len(data):,} bytes; a scene file may hold at most "
                         f"{MAX_SCENE_BYTES:,} (MAX_SCENE_BYTES), so load_scene would refuse the file")
    return _atomic_write(Path(path), lambda fh: fh.write(data))


def _refuse_code_robots(world: World) -> None:
    """ValueError naming every robot a scene file cannot hold: one added from a ``RobotDescription`` in code
    (``add_robot``; there is no file to name)."""
    made = [record["robot"].name for record in world.robot_records if "file" not in record]
    if made:
        plural = len(made) > 1
        raise ValueError(f"robot{'s' if plural else ''} {', '.join(map(repr, made))} {'were' if plural else 'was'} "
                         "added with add_robot(description) in code: a scene file holds only robots read from a "
                         "URDF or MJCF file (add_urdf, add_mjcf), which it names; nothing was written")


def _robot_tables(world: World, folder: Path | None) -> list[dict[str, Any]]:
    """The ``[[robots]]`` tables of ``world``: each file relative to ``folder`` when it lies inside it (else
    absolute; always absolute when ``folder`` is None), how the robot was added, its q and q̇ now, its controls
    that are not all zero and its links' material extras that are not their defaults (``link_materials``)."""
    _refuse_code_robots(world)
    inside = None if folder is None else Path(os.path.abspath(folder))
    tables = []
    for record in world.robot_records:
        robot = record["robot"]
        file = Path(os.path.abspath(record["file"]))
        if not file.is_file():
            raise ValueError(f"robot {robot.name!r}: its file {str(file)!r} is no longer there, so a scene file "
                             "naming it could not be loaded; nothing was written")
        text = str(file)
        if inside is not None:
            try:
                text = file.relative_to(inside).as_posix()
            except ValueError:
                pass
        table = {"file": text, "format": record["format"], "name": robot.name,
                 "position": [float(c) for c in record["position"]],
                 "orientation": [float(c) for c in record["orientation"]],
                 "fixed_base": bool(record["fixed_base"]), "self_collision": bool(record["self_collision"]),
                 "friction": float(record["friction"]), "restitution": float(record["restitution"]),
                 "q": robot.q.tolist(), "qd": robot.qd.tolist()}
        for key in _ROBOT_CONTROLS:
            value = getattr(robot, key)
            if np.any(value != 0.0):
                table[key] = value.tolist()
        extras = _link_extras(robot)
        if extras:
            table["link_materials"] = extras
        mocap = record.get("mocap", ())
        if mocap:
            table["mocap"] = {body.name.split("/", 1)[1]: {key: getattr(body, key).tolist() for key in _MOCAP_KEYS}
                              for body in mocap}
        tables.append(table)
    return tables


def _named_tables(where: KeyPath, value: Any, known: tuple[str, ...],
                  what: str) -> list[tuple[str, KeyPath, dict[str, Any]]]:
    """A table of NAME → table (a robot's ``link_materials`` or ``mocap``; None: absent) as (name, its key path,
    its table), each table's keys checked against ``known``."""
    if value is None:
        return []
    out = []
    for name, values in _table(where, value).items():
        values = _table(where + (name,), values)
        _known_keys(where + (name,), values, known, what)
        out.append((name, where + (name,), values))
    return out


def _robot_made(record: dict[str, Any]) -> bool:
    """Whether a body record is one a robot's file makes (a link's body, an MJCF mocap body): the file makes it
    again, so the scene holds no [[bodies]] table for it (a mocap body's state is in its robot's ``mocap``)."""
    return "robot_link" in record or "robot_mocap" in record


def _link_extras(robot: Any) -> dict[str, dict[str, float]]:
    """The material extras (``_EXTRA_KEYS``) of a robot's link bodies that are not their defaults (0, rigid),
    link by link: a robot is added with the defaults, so these were set afterwards (``Body.rolling_friction`` …)."""
    out = {}
    for link in robot.links:
        body = link.body
        if body is None:
            continue
        changed = {key: float(value) for key in _EXTRA_KEYS if (value := getattr(body, key)) not in (None, 0.0)}
        if changed:
            out[link.name] = changed
    return out


def scene_text(world: World, folder: str | os.PathLike | None = None) -> str:
    """The TOML text ``save_scene`` writes for ``world``; a robot's file is written relative to ``folder``
    (the scene file's folder) when it lies inside it, else absolute (``folder`` None: always absolute)."""
    robots = _robot_tables(world, None if folder is None else Path(folder))
    scene_index = {}   # world index -> index among the bodies the file holds (link bodies left out)
    for i, record in enumerate(world.body_records):
        if not _robot_made(record):
            scene_index[i] = len(scene_index)
    grounds = [i for i, r in enumerate(world.body_records) if r.get("ground")]
    if len(grounds) > 1:
        raise ValueError(f"a scene file holds at most one ground; this world has {len(grounds)} "
                         f"(bodies {grounds})")
    try:
        run = _check_run(("run",), dict(world.run_defaults))
    except _Problem as exc:
        raise ValueError(f"world.run_defaults: {_dotted(exc.where[1:])}: {exc.problem}") from None
    out = [f"# a tumble scene (format {SCENE_FORMAT}); docs/scenes.md describes it\n",
           f"format = {SCENE_FORMAT}\n", "\n[world]\n"]
    out.append(_line("gravity", [float(g) for g in world.gravity]))
    out.append(_line("method", world.method))
    out.append(_line("integrator", world.integrator))
    if world.robot_integrator != "euler":
        out.append(_line("robot_integrator", world.robot_integrator))
    out.append(_line("contact_margin", float(world.contact_margin)))
    out.append(_line("time", float(world.time)))
    contact = {}
    for key, value in world.contact_options.items():
        value = getattr(world.settings, key)
        if value is not None:
            contact[key] = _plain(value)
    if contact:
        out.append("\n[world.contact]\n")
        out.extend(_line(k, v) for k, v in contact.items())
    event = {k: _plain(getattr(world, f"event_{k}")) for k in _EVENT_KEYS}
    if world.method == "event" or event != {k: _plain(getattr(EventSettings(), k)) for k in _EVENT_KEYS}:
        out.append("\n[world.event]\n")   # (a time-stepping world's, as given, only where not the defaults)
        out.extend(_line(k, v) for k, v in event.items())
    if run:
        out.append("\n[run]\n")
        out.extend(_line(k, v) for k, v in run.items())
    live = body_arrays(world.model, world.state)
    made = _made_states(world)
    for i, record in enumerate(world.body_records):
        if record.get("ground"):
            out.append("\n[ground]\n")
            out.append(_line("height", float(record["height"])))
            out.append(_line("friction", float(record["friction"])))
            out.append(_line("restitution", float(record["restitution"])))
            out.extend(_material_lines(record))
            if record["name"] != "ground":
                out.append(_line("name", False if record["name"] is None else record["name"]))
            if scene_index[i] != 0:
                out.append(_line("index", scene_index[i]))
    for i, record in enumerate(world.body_records):
        if record.get("ground") or _robot_made(record):
            continue
        out.append("\n[[bodies]]\n")
        if record["name"] is not None:
            out.append(_line("name", record["name"]))
        shape = record["shape"]
        if isinstance(shape, tuple):
            parts = []
            for sub, pos, quat in shape:
                part = _shape_table(sub)
                part["position"] = pos.tolist()
                if quat is not None:
                    part["orientation"] = quat.tolist()
                parts.append(part)
            out.append(_line("parts", parts))
        else:
            out.append(_line("shape", _shape_table(shape)))
        if record.get("kinematic"):
            out.append(_line("kinematic", True))   # (an infinite mass: no density or mass)
        elif record["mass"] is not None:
            out.append(_line("mass", record["mass"]))
            if record["inertia"] is not None:
                out.append(_line("inertia", record["inertia"].tolist()))
        else:
            out.append(_line("density", DEFAULT_DENSITY if record["density"] is None else record["density"]))
        state = made.get(i) or tuple(live[field][i] for field in ("x", "q", "v", "w"))
        for key, value in zip(("position", "orientation", "velocity", "angular_velocity"), state, strict=True):
            out.append(_line(key, value.tolist()))
        out.append(_line("friction", float(record["friction"])))
        out.append(_line("restitution", float(record["restitution"])))
        out.extend(_material_lines(record))
        out.append(_line("fixed", bool(record["fixed"])))
        if not record["collide"]:
            out.append(_line("collide", False))
        if record["collision_group"] != 1:
            out.append(_line("collision_group", int(record["collision_group"])))
        if record["collision_mask"] != 0xFFFFFFFF:
            out.append(_line("collision_mask", int(record["collision_mask"])))
    for table in robots:
        out.append("\n[[robots]]\n")
        out.extend(_line(k, v) for k, v in table.items())
    if world.attachment_log or world.joints or world.springs:
        from .scene_joints import WORLD, attachment_tables, joint_tables, spring_tables

        def reference(body: Any) -> str | int:
            return body.name if body.name is not None and body.name != WORLD else scene_index[body.index]

        for header, tables in (("attachments", attachment_tables(world, reference)),
                               ("joints", joint_tables(world, reference)),
                               ("springs", spring_tables(world, reference))):
            for table in tables:
                out.append(f"\n[[{header}]]\n")
                out.extend(_line(k, v) for k, v in table.items())
    if world.sensors:
        from .scene_sensors import sensor_tables

        for table in sensor_tables(world, lambda body: body.name if body.name is not None else scene_index[body.index]):
            out.append("\n[[sensors]]\n")
            out.extend(_line(k, v) for k, v in table.items())
    return "".join(out)


def _material_lines(record: dict[str, Any]) -> list[str]:
    """The lines of a body's or the ground's material extras that differ from the defaults (0, rigid), so that
    a scene without them is written as before."""
    return [_line(key, float(record[key])) for key in _EXTRA_KEYS if record[key] not in (None, 0.0)]


def _made_states(world: World) -> dict[int, tuple[np.ndarray, ...]]:
    """For each body that takes part in an attachment (attached, master or carrier of a point mass): the
    (position, orientation, velocity, angular velocity) of the frame it was made in, which ``load_scene``
    makes it at before making the attachments again (world frame; the velocity is its assembly's rigid
    velocity at that origin)."""
    involved = {op[k] for op in world.attachment_log for k in ((1, 2) if op[0] == "body" else (1,))}
    out = {}
    live = body_arrays(world.model, world.state)
    owners = world.model.geom.live("geom_body")
    makers = world.model.geom.live("geom_maker")
    for body in involved:
        if body._index < 0:
            continue
        x, q = world.frame_as_made(body)
        owner = int(owners[np.flatnonzero(makers == body._index)[0]])
        w = live["w"][owner].copy()
        out[body._index] = (x, q, live["v"][owner] + np.cross(w, x - live["x"][owner]), w)
    return out


# ====================================================================== loading
class _TooLarge(Exception):
    def __init__(self, size: int) -> None:
        super().__init__(size)
        self.size = size


def _too_large(shown: str, size: int | None) -> str:
    what = f"{size:,} bytes" if size is not None else f"more than {MAX_SCENE_BYTES:,} bytes"
    return (f"{shown}: the file holds {what}; a scene file may hold at most {MAX_SCENE_BYTES:,} bytes "
            f"(MAX_SCENE_BYTES)")


_NOT_STRUCTURE = re.compile(r'"""[\s\S]*?"""|\'\'\'[\s\S]*?\'\'\'|"(?:[^"\\\n]|\\.)*"|\'[^\'\n]*\'|#[^\n]*')
"""Strings and comments: what the structure scan blanks out (an unterminated string is left in, so its
brackets count: the scan errs towards refusing)."""

_SCAN_CHUNK = 1 << 22
"""Bytes the structure scan takes at a time (its arrays: about 20 bytes a byte)."""

_BODY_HEADER = re.compile(r"^[ \t]*\[\[[ \t]*bodies[ \t]*\]\]", re.M)
_LONG_DOTTED_KEY = re.compile(rf"(?:\.[ \t]*+[\w-]++[ \t]*+){{{MAX_SCENE_NESTING}}}")
"""A key of more than MAX_SCENE_NESTING parts: that many dots, each followed by a part (it starts at a dot, a
literal the regex engine finds fast)."""


def _check_structure(text: str, shown: str) -> None:
    """Refuse, before ``tomllib`` sees it, text nested deeper than ``MAX_SCENE_NESTING`` (arrays, inline tables,
    dotted keys) or with more than ``MAX_SCENE_BODIES`` ``[[bodies]]`` headers: linear time, no recursion."""
    bare = _NOT_STRUCTURE.sub(lambda m: "s" + "\n" * m[0].count("\n"), text)   # same lines as the text
    codes = np.frombuffer(bare.encode("utf-8", "surrogatepass"), dtype=np.uint8)
    depth, low = 0, 0      # the running sum of opening (+1) and closing (-1) brackets, and its lowest value
    for start in range(0, codes.size, _SCAN_CHUNK):    # in chunks: bounded memory whatever the file
        part = codes[start:start + _SCAN_CHUNK]
        delta = ((part == ord("[")) | (part == ord("{"))).astype(np.int8)
        delta -= (part == ord("]")) | (part == ord("}"))
        running = depth + np.cumsum(delta, dtype=np.int64)
        lowest = np.minimum(np.minimum.accumulate(running), low)
        nested = running - lowest     # a stray closing bracket does not lower the floor
        deepest = int(np.argmax(nested))
        if nested[deepest] > MAX_SCENE_NESTING:
            line = codes[:start + deepest].tobytes().count(b"\n") + 1
            raise ValueError(f"{shown}:{line}: arrays and inline tables nest {int(nested[deepest]):,} deep here; a "
                             f"scene file may nest them at most {MAX_SCENE_NESTING} deep (MAX_SCENE_NESTING)")
        depth, low = int(running[-1]), int(lowest[-1])
    dotted = _LONG_DOTTED_KEY.search(bare)
    if dotted:
        line = bare.count("\n", 0, dotted.start()) + 1
        raise ValueError(f"{shown}:{line}: a dotted key of more than {MAX_SCENE_NESTING} parts; a scene file may "
                         f"nest keys at most {MAX_SCENE_NESTING} deep (MAX_SCENE_NESTING)")
    for count, header in enumerate(_BODY_HEADER.finditer(bare), start=1):
        if count > MAX_SCENE_BODIES:
            line = bare.count("\n", 0, header.start()) + 1
            raise ValueError(f"{shown}:{line}: bodies: more than {MAX_SCENE_BODIES:,} [[bodies]] tables; a scene "
                             f"file may hold at most {MAX_SCENE_BODIES:,} bodies (MAX_SCENE_BODIES)")


def scene_document(text: str, shown: str) -> dict[str, Any]:
    """The TOML document (plain dicts and lists) of a scene file's ``text``, after the structure checks that
    come before parsing (``MAX_SCENE_NESTING``, ``MAX_SCENE_BODIES``); no key is checked yet. ``shown``
    names the file in messages. Raises ``ValueError`` ``FILE:LINE: problem`` for text that is not TOML."""
    _check_structure(text, shown)
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ValueError(_syntax_message(str(exc), text, shown)) from None
    except RecursionError:   # what the structure scan missed (it does not parse): still one clear line
        raise ValueError(f"{shown}: arrays or tables nest too deeply for the TOML reader; a scene file may nest "
                         f"them at most {MAX_SCENE_NESTING} deep (MAX_SCENE_NESTING)") from None


def world_from_document(doc: dict[str, Any], text: str, shown: str, options: dict[str, Any] | None = None, *,
                        base: str | os.PathLike | None = None) -> World:
    """Check every table and key of a scene document (``scene_document``, possibly edited: ``tumble sweep``
    sets its varied keys there) and build the World, as ``load_scene`` does with ``options``. A problem
    raises ``ValueError`` ``FILE:LINE: key.path: problem``, the line found in ``text`` (for a key the file
    does not have, the line of its table). ``base`` is the folder a ``[[robots]]`` table's relative ``file``
    is read from: the scene file's folder (None: the folder of ``shown``, the scene file's path)."""
    try:
        plan = _check_document(doc, Path(shown).parent if base is None else Path(base))
        for key, value in (options or {}).items():
            if key in ("gravity", "method", "integrator", "robot_integrator", "contact_margin"):
                plan["world"][key] = value
            elif key.startswith("event_"):
                plan["world"]["event"] = {**plan["world"]["event"], key[len("event_"):]: value}
            else:
                plan["world"]["contact"] = {**plan["world"]["contact"], key: value}
        return _build(plan)
    except _Problem as exc:
        line = _Locator(text).line_of(exc.where)
        where = _dotted(exc.where)
        raise ValueError(f"{shown}:{line}: {where + ': ' if where else ''}{exc.problem}") from None
    except ArithmeticError as exc:   # what no check located: still the file, in one line
        raise ValueError(f"{shown}: values out of range ({type(exc).__name__}: {_one_line(exc)})") from None


def _syntax_message(message: str, text: str, shown: str) -> str:
    """tomllib's 'problem (at line L, column C)' as 'FILE:L: TOML syntax error: problem (column C)'."""
    found = re.match(r"^(.*) \(at line (\d+), column (\d+)\)$", message, re.S)
    if found:
        return f"{shown}:{found[2]}: TOML syntax error: {found[1]} (column {found[3]})"
    found = re.match(r"^(.*) \(at end of document\)$", message, re.S)
    if found:
        return f"{shown}:{text.count(chr(10)) + 1}: TOML syntax error: {found[1]} (at the end of the file)"
    return f"{shown}:1: TOML syntax error: {message}"


def _check_document(doc: dict[str, Any], base: Path) -> dict[str, Any]:
    """Check every table and key; return what ``_build`` needs. Nothing is built here but shapes (robot files
    are found here, read by ``_build``; relative ones in the folder ``base``)."""
    _known_keys((), doc, _TOP_KEYS, "top-level table or key")
    if "format" not in doc:
        raise _Problem((), f"the file must say its format: add `format = {SCENE_FORMAT}` at the top")
    version = doc["format"]
    if isinstance(version, bool) or not isinstance(version, int) or version < 1:
        raise _Problem(("format",), f"must be a positive integer, got {_show(version)}")
    if version > SCENE_FORMAT:
        raise _Problem(("format",), f"format {version} is newer than this tumble reads ({SCENE_FORMAT}); "
                                    f"upgrade tumble")
    world = _check_world(_table(("world",), doc.get("world", {})))
    run = _check_run(("run",), _table(("run",), doc.get("run", {})))
    materials = _check_materials(_table(("materials",), doc.get("materials", {})))
    bodies_value = doc.get("bodies", [])
    if isinstance(bodies_value, dict):
        raise _Problem(("bodies",), "must be an array of tables: write each body as [[bodies]], not [bodies]")
    if not isinstance(bodies_value, list):
        raise _Problem(("bodies",), f"must be an array of tables ([[bodies]]), got {_show(bodies_value)}")
    at_most(("bodies",), bodies_value, "bodies")
    names: dict[str, KeyPath] = {}
    ground = None
    if "ground" in doc:
        ground = _check_ground(_table(("ground",), doc["ground"]), materials, len(bodies_value))
        if ground["kwargs"]["name"] is not None:
            names[ground["kwargs"]["name"]] = ("ground",)
    bodies = [_check_body(("bodies", k), body, materials, names) for k, body in enumerate(bodies_value)]
    robots_value = doc.get("robots", [])
    if isinstance(robots_value, dict):
        raise _Problem(("robots",), "must be an array of tables: write each robot as [[robots]], not [robots]")
    if not isinstance(robots_value, list):
        raise _Problem(("robots",), f"must be an array of tables ([[robots]]), got {_show(robots_value)}")
    at_most(("robots",), robots_value, "robots")
    robot_names: dict[str, KeyPath] = {}
    robots = [_check_robot(("robots", k), spec, base, robot_names) for k, spec in enumerate(robots_value)]
    plan = {"world": world, "run": run, "ground": ground, "bodies": bodies, "robots": robots, "attachments": [],
            "joints": [], "springs": []}
    if "joints" in doc or "springs" in doc or "attachments" in doc:
        from .scene_joints import check_attachments, check_joints, check_springs

        order: list[str | None] = [b["kwargs"].get("name") for b in bodies]   # world order: the ground at its index
        if ground is not None:
            order.insert(ground["index"], ground["kwargs"]["name"])
        plan["attachments"] = check_attachments(doc.get("attachments", []), order)
        plan["joints"] = check_joints(doc.get("joints", []), order, bool(robots))
        plan["springs"] = check_springs(doc.get("springs", []), order, bool(robots))
    if "sensors" in doc:
        from .scene_sensors import check_sensors

        order = [b["kwargs"].get("name") for b in bodies]
        if ground is not None:
            order.insert(ground["index"], ground["kwargs"]["name"])
        plan["sensors"] = check_sensors(doc["sensors"], order)
    return plan


def at_most(where: KeyPath, entries: list[Any], what: str) -> None:
    """Refuse more than ``MAX_SCENE_BODIES`` entries in the array of tables at ``where``."""
    if len(entries) > MAX_SCENE_BODIES:
        raise _Problem(where, f"{len(entries):,} {what}; a scene file may hold at most {MAX_SCENE_BODIES:,} "
                              f"(MAX_SCENE_BODIES)")


def _check_world(table: dict[str, Any]) -> dict[str, Any]:
    _known_keys(("world",), table, _WORLD_KEYS, "key of [world]")
    out: dict[str, Any] = {
        "gravity": _vector(("world", "gravity"), table.get("gravity", list(DEFAULT_GRAVITY)), 3),
        "method": _string(("world", "method"), table.get("method", "timestep")),
        "integrator": _string(("world", "integrator"), table.get("integrator", "splitting")),
        "robot_integrator": _string(("world", "robot_integrator"), table.get("robot_integrator", "euler")),
        "contact_margin": _number(("world", "contact_margin"), table.get("contact_margin", DEFAULT_CONTACT_MARGIN),
                                  minimum=0.0),
        "time": _number(("world", "time"), table.get("time", 0.0)),
    }
    for key, options in (("method", ("timestep", "event")), ("integrator", _integrator_names()),
                         ("robot_integrator", ("euler", "rk4"))):
        if out[key] not in options:
            raise _Problem(("world", key), f"must be one of {sorted(options)}, got {out[key]!r}")
    contact = _table(("world", "contact"), table.get("contact", {}))
    _known_keys(("world", "contact"), contact, _CONTACT_KEYS, "contact option")
    try:
        ContactSettings(**contact)
    except (TypeError, ValueError) as exc:
        message = str(exc)
        first = re.match(r"\w+", message)
        key = first[0] if first and first[0] in contact else None
        raise _Problem(("world", "contact") + ((key,) if key else ()), _strip_name(message, key)) from None
    out["contact"] = contact
    event = _table(("world", "event"), table.get("event", {}))
    _known_keys(("world", "event"), event, _EVENT_KEYS, "event option")
    try:
        World(method="event", **{f"event_{key}": value for key, value in event.items()})
    except (TypeError, ValueError) as exc:
        message = str(exc)
        key = next((k for k in event if message.startswith(f"event_{k}")), None)
        raise _Problem(("world", "event") + ((key,) if key else ()),
                       _strip_name(message, f"event_{key}" if key else None)) from None
    out["event"] = event
    return out


def _integrator_names() -> tuple[str, ...]:
    from ..conventions import INTEGRATOR_NAMES

    return tuple(INTEGRATOR_NAMES)


def _check_run(where: KeyPath, table: dict[str, Any]) -> dict[str, Any]:
    _known_keys(where, table, _RUN_KEYS, "key of [run]")
    out: dict[str, Any] = {}
    if "dt" in table:
        out["dt"] = _number(where + ("dt",), table["dt"], positive=True)
    if "duration" in table:
        out["duration"] = _number(where + ("duration",), table["duration"], minimum=0.0)
    if "record_every" in table:
        out["record_every"] = _integer(where + ("record_every",), table["record_every"], 1, None)
    if "dt" in out and "duration" in out:
        if out["duration"] / out["dt"] > MAX_STEPS:
            raise _Problem(where + ("duration",), f"must be at most {MAX_STEPS:.3g} steps of dt = {out['dt']!r}, "
                                                  f"got {out['duration']!r}")
        steps = round(out["duration"] / out["dt"])
        if abs(steps * out["dt"] - out["duration"]) > 1e-9 * max(out["duration"], out["dt"]):
            raise _Problem(where + ("duration",), f"must be a whole number of steps of dt = {out['dt']!r}, "
                                                  f"got {out['duration']!r}")
    return out


def _check_materials(table: dict[str, Any]) -> dict[str, dict[str, float]]:
    out = {}
    for name, spec in table.items():
        where = ("materials", name)
        spec = _table(where, spec)
        _known_keys(where, spec, _MATERIAL_KEYS, "material key")
        out[name] = _material_values(where, spec)
    return out


def _material_values(where: KeyPath, spec: dict[str, Any]) -> dict[str, float]:
    out = {}
    if "friction" in spec:
        out["friction"] = _number(where + ("friction",), spec["friction"], minimum=0.0)
    if "restitution" in spec:
        out["restitution"] = _number(where + ("restitution",), spec["restitution"], minimum=0.0, maximum=1.0)
    if "density" in spec:
        out["density"] = _number(where + ("density",), spec["density"], positive=True)
    for key in ("rolling_friction", "torsional_friction", "contact_dissipation"):
        if key in spec:
            out[key] = _number(where + (key,), spec[key], minimum=0.0)
    if "contact_stiffness" in spec:     # absent: rigid (the file has no None)
        out["contact_stiffness"] = _number(where + ("contact_stiffness",), spec["contact_stiffness"], positive=True)
    return out


def _resolve_material(where: KeyPath, spec: dict[str, Any], materials: dict[str, dict[str, float]]
                      ) -> tuple[dict[str, float], dict[str, KeyPath]]:
    """The material's values overridden by the entry's own friction/restitution/density, and where each
    value was written (the material's key or the entry's own)."""
    values: dict[str, float] = {}
    keys: dict[str, KeyPath] = {}
    if "material" in spec:
        name = _string(where + ("material",), spec["material"])
        if name not in materials:
            known = f"; the file defines {sorted(materials)}" if materials else "; the file defines none"
            raise _Problem(where + ("material",), f"unknown material {name!r}{known} ([materials.NAME])")
        values.update(materials[name])
        keys.update({key: ("materials", name, key) for key in materials[name]})
    own = _material_values(where, spec)
    values.update(own)
    keys.update({key: where + (key,) for key in own})
    return values, keys


def _check_ground(table: dict[str, Any], materials: dict[str, dict[str, float]], n_bodies: int) -> dict[str, Any]:
    where: KeyPath = ("ground",)
    _known_keys(where, table, _GROUND_KEYS, "key of [ground]")
    values, keys = _resolve_material(where, {k: v for k, v in table.items() if k != "density"}, materials)
    name: Any = table.get("name", "ground")
    if name is False:
        name = None
    elif not isinstance(name, str):
        raise _Problem(where + ("name",), f"must be a string (or false for no name), got {_show(name)}")
    index = _integer(where + ("index",), table.get("index", 0), 0, n_bodies)
    keys.update({key: where + (key,) for key in ("height", "name")})
    return {"where": where, "index": index, "keys": keys, "kwargs": {
        "height": _number(where + ("height",), table.get("height", 0.0)),
        "friction": values.get("friction", DEFAULT_FRICTION),
        "restitution": values.get("restitution", DEFAULT_RESTITUTION), "name": name,
        **{key: values[key] for key in _EXTRA_KEYS if key in values}}}


def _check_body(where: KeyPath, spec: Any, materials: dict[str, dict[str, float]],
                names: dict[str, KeyPath]) -> dict[str, Any]:
    spec = _table(where, spec)
    _known_keys(where, spec, _BODY_KEYS, "body key")
    if "shape" in spec and "parts" in spec:
        raise _Problem(where + ("parts",), "give shape or parts, not both")
    if "shape" in spec:
        shape: Any = _shape(where + ("shape",), spec["shape"], pose=False)[0]
    elif "parts" in spec:
        parts = spec["parts"]
        if not isinstance(parts, list):
            raise _Problem(where + ("parts",), f"must be an array of shape tables, got {_show(parts)}")
        if not parts:
            raise _Problem(where + ("parts",), "must hold at least one part, got an empty array")
        shape = [_shape(where + ("parts", j), part, pose=True) for j, part in enumerate(parts)]
    else:
        raise _Problem(where, "a body needs shape = { type = ... } or parts = [...]; it has neither")
    kwargs: dict[str, Any] = {"shape": shape}
    if "density" in spec and "mass" in spec:
        raise _Problem(where + ("mass",), "give density or mass, not both")
    if "inertia" in spec and "mass" not in spec:
        raise _Problem(where + ("inertia",), "inertia needs mass: give mass = ... too")
    values, keys = _resolve_material(where, spec, materials)
    keys.update({key: where + (key,) for key in _BODY_KEYS if key in spec and key not in keys})
    keys["shape"] = where + ("shape" if "shape" in spec else "parts",)
    kinematic = "kinematic" in spec and _boolean(where + ("kinematic",), spec["kinematic"])
    if kinematic:
        # an infinite mass: a material's density does not apply; density or mass given in the table is refused
        for key in ("density", "mass", "inertia", "fixed"):
            if key in spec and (key != "fixed" or spec[key] is True):
                raise _Problem(where + (key,), f"a kinematic body (kinematic = true) takes no {key}: it moves as "
                                               f"an infinite mass with the velocity set on it")
        values.pop("density", None)
        kwargs["kinematic"] = True
    if "mass" in spec:
        kwargs["mass"] = _number(where + ("mass",), spec["mass"], positive=True)
        if "inertia" in spec:
            rows = spec["inertia"]
            if not isinstance(rows, list) or len(rows) != 3:
                raise _Problem(where + ("inertia",), f"must be a 3×3 array [[...], [...], [...]], got {_show(rows)}")
            matrix = [_vector(where + ("inertia", r), row, 3) for r, row in enumerate(rows)]
            _checked(where + ("inertia",), "inertia", _checks.symmetric_positive_definite, "inertia", matrix)
            kwargs["inertia"] = np.array(matrix, dtype=float)
    elif "density" in values:
        kwargs["density"] = values["density"]
    for key in ("friction", "restitution") + _EXTRA_KEYS:
        if key in values:
            kwargs[key] = values[key]
    for key, n in (("position", 3), ("velocity", 3), ("angular_velocity", 3)):
        if key in spec:
            kwargs[key] = _vector(where + (key,), spec[key], n)
    if "orientation" in spec:
        kwargs["orientation"] = _quaternion(where + ("orientation",), spec["orientation"])
    for key in ("fixed", "collide"):
        if key in spec:
            kwargs[key] = _boolean(where + (key,), spec[key])
    for key in ("collision_group", "collision_mask"):
        if key in spec:
            kwargs[key] = _integer(where + (key,), spec[key], 0, 0xFFFFFFFF)
    if kwargs.get("fixed"):
        for key in ("velocity", "angular_velocity"):
            if any(kwargs.get(key, ())):
                raise _Problem(where + (key,), f"a fixed body cannot move: must be zero, got {kwargs[key]}")
    if "name" in spec:
        name = _string(where + ("name",), spec["name"])
        if name in names:
            raise _Problem(where + ("name",), f"duplicate name {name!r}: already used by {_dotted(names[name])}")
        names[name] = where
        kwargs["name"] = name
    return {"where": where, "kwargs": kwargs, "keys": keys}


def _check_robot(where: KeyPath, spec: Any, base: Path, names: dict[str, KeyPath]) -> dict[str, Any]:
    """A ``[[robots]]`` table: its file found (not read yet: ``_build`` reads it with ``World.add_urdf`` or
    ``add_mjcf``), its format, the arguments of the add call, the initial q and q̇ and the controls as written
    (their lengths are checked against the robot once it is read) and its ``link_materials`` (their values
    checked here, their link names once the robot is read)."""
    spec = _table(where, spec)
    _known_keys(where, spec, _ROBOT_KEYS, "robot key")
    if "file" not in spec:
        raise _Problem(where, 'a robot needs file = "PATH" (its URDF or MJCF file, relative to the scene '
                              "file's folder or absolute)")
    text = _string(where + ("file",), spec["file"])
    if not text:
        raise _Problem(where + ("file",), "must name a URDF or MJCF file, got an empty string")
    path = Path(os.path.abspath(Path(text) if Path(text).is_absolute() else base / text))
    if "format" in spec:
        fmt = _string(where + ("format",), spec["format"])
        if fmt not in ("urdf", "mjcf"):
            raise _Problem(where + ("format",), f'must be "urdf" or "mjcf", got {fmt!r}')
    else:
        fmt = _ROBOT_FORMATS.get(path.suffix.lower(), "")
        if not fmt:
            raise _Problem(where + ("file",), f"cannot tell the format of {text!r} from its extension (.urdf: "
                                              f'urdf, .xml: mjcf): give format = "urdf" or "mjcf"')
    if not path.is_file():
        what = "is a folder, not a file" if path.is_dir() else "does not exist"
        relative = "" if Path(text).is_absolute() else f" (read from the scene file's folder {str(base)!r})"
        raise _Problem(where + ("file",), f"the robot file {str(path)!r} {what}{relative}")
    kwargs: dict[str, Any] = {}
    if "name" in spec:
        name = _string(where + ("name",), spec["name"])
        if not name:
            raise _Problem(where + ("name",), "must be a non-empty string, got ''")
        if name in names:
            raise _Problem(where + ("name",), f"duplicate robot name {name!r}: already used by "
                                              f"{_dotted(names[name])}")
        names[name] = where + ("name",)
        kwargs["name"] = name
    if "position" in spec:
        kwargs["position"] = _vector(where + ("position",), spec["position"], 3)
    if "orientation" in spec:
        kwargs["orientation"] = _quaternion(where + ("orientation",), spec["orientation"])
    for key in ("fixed_base", "self_collision"):
        if key in spec:
            kwargs[key] = _boolean(where + (key,), spec[key])
    for key in ("friction", "restitution"):
        if key in spec:
            kwargs[key] = _number(where + (key,), spec[key], minimum=0.0)
    state: dict[str, list[float]] = {}
    for key in ("q", "qd") + _ROBOT_CONTROLS:
        if key in spec:
            value = spec[key]
            if not isinstance(value, list):
                raise _Problem(where + (key,), f"must be an array of numbers (one per joint coordinate), got "
                                               f"{_show(value)}")
            state[key] = [_number(where + (key, j), c) for j, c in enumerate(value)]
    link_materials = {link: _material_values(at, values) for link, at, values in
                      _named_tables(where + ("link_materials",), spec.get("link_materials"), _EXTRA_KEYS,
                                    "link material key")}
    mocap = {body: {key: _quaternion(at + (key,), value) if key == "orientation" else _vector(at + (key,), value, 3)
                    for key, value in values.items()}
             for body, at, values in _named_tables(where + ("mocap",), spec.get("mocap"), _MOCAP_KEYS, "mocap key")}
    keys = {key: where + (key,) for key in _ROBOT_KEYS if key in spec}
    keys["path"] = where + ("file",)
    return {"where": where, "file": path, "format": fmt, "kwargs": kwargs, "state": state, "keys": keys,
            "link_materials": link_materials, "mocap": mocap}


def _shape(where: KeyPath, spec: Any, *, pose: bool) -> Any:
    """A shape table as (shape,) or, with ``pose``, (shape, position, orientation) for a compound part."""
    spec = _table(where, spec)
    if "type" not in spec:
        raise _Problem(where, f"needs type = one of {sorted(_SHAPE_KEYS)}")
    kind = _string(where + ("type",), spec["type"])
    if kind not in _SHAPE_KEYS:
        raise _Problem(where + ("type",), f"unknown shape type {kind!r}; known: {sorted(_SHAPE_KEYS)}")
    allowed = ("type",) + _SHAPE_KEYS[kind] + (_POSE_KEYS if pose else ())
    _known_keys(where, spec, allowed, f"key of a {kind}")
    for key in _SHAPE_KEYS[kind]:
        if key not in spec:
            raise _Problem(where, f"a {kind} needs {key}")
    if kind == "box":
        shape: Any = _made(where, Box, _vector(where + ("size",), spec["size"], 3, positive=True),
                           {"lx": ("size", 0), "ly": ("size", 1), "lz": ("size", 2)})
    elif kind == "sphere":
        shape = _made(where, Sphere, [_number(where + ("radius",), spec["radius"], positive=True)],
                      {"radius": ("radius",)})
    elif kind == "capsule":
        shape = _made(where, Capsule, [_number(where + ("radius",), spec["radius"], positive=True),
                                       _number(where + ("length",), spec["length"], positive=True)],
                      {"radius": ("radius",), "length": ("length",)})
    elif kind == "cylinder":
        shape = _made(where, Cylinder, [_number(where + ("radius",), spec["radius"], positive=True),
                                        _number(where + ("height",), spec["height"], positive=True)],
                      {"radius": ("radius",), "height": ("height",)})
    elif kind == "ellipsoid":
        shape = _made(where, Ellipsoid, _vector(where + ("semi_axes",), spec["semi_axes"], 3, positive=True),
                      {"a": ("semi_axes", 0), "b": ("semi_axes", 1), "c": ("semi_axes", 2)})
    else:
        points = spec["points"]
        if not isinstance(points, list) or len(points) < 4:
            raise _Problem(where + ("points",), f"must be an array of at least 4 points [x, y, z], "
                                                f"got {_show(points)}")
        pts = [_vector(where + ("points", j), p, 3) for j, p in enumerate(points)]
        shape = _made(where, ConvexHull, [pts], {"points": ("points",)}, default=("points",))
    if not pose:
        return (shape,)
    position = _vector(where + ("position",), spec.get("position", [0.0, 0.0, 0.0]), 3)
    if "orientation" in spec:
        return (shape, position, _quaternion(where + ("orientation",), spec["orientation"]))
    return (shape, position)


def _build(plan: dict[str, Any]) -> World:
    """Make the world from a checked plan; the World's own checks are the second line of defence."""
    w = plan["world"]
    try:
        world = World(w["gravity"], method=w["method"], integrator=w["integrator"],
                      robot_integrator=w["robot_integrator"], contact_margin=w["contact_margin"], **w["contact"],
                      **{f"event_{key}": value for key, value in w["event"].items()})
    except (TypeError, ValueError) as exc:
        raise _Problem(("world",), str(exc)) from None
    entries: list[tuple[str, dict[str, Any]]] = [("body", b) for b in plan["bodies"]]
    if plan["ground"] is not None:
        entries.insert(plan["ground"]["index"], ("ground", plan["ground"]))
    quats = []
    for kind, entry in entries:
        try:
            with np.errstate(over="raise", divide="raise", invalid="raise"):
                if kind == "ground":
                    world.add_ground(**entry["kwargs"])
                    quats.append(None)
                else:
                    kwargs = dict(entry["kwargs"])
                    q = kwargs.get("orientation")
                    world.add_body(**kwargs)
                    quats.append(q)
        except (TypeError, ValueError, ArithmeticError) as exc:
            raise _located(entry["where"], exc, entry["keys"]) from None
    q_rows = world.state.body.live("q")
    for i, q in enumerate(quats):
        if q is not None and abs(math.sqrt(sum(c * c for c in q)) - 1.0) <= _QUAT_AS_IS:
            q_rows[i] = q          # as written: add_body's normalization may change the last bit
    for entry in plan["robots"]:
        _build_robot(world, entry)
    if plan["attachments"] or plan["joints"] or plan["springs"]:
        from .scene_joints import build_attachments, build_joints, build_springs

        build_attachments(world, plan["attachments"])
        build_joints(world, plan["joints"])
        build_springs(world, plan["springs"])
    if plan.get("sensors"):
        from .scene_sensors import build_sensors

        build_sensors(world, plan["sensors"])
    world.time = w["time"]
    world.run_defaults = plan["run"]
    return world


def _build_robot(world: World, entry: dict[str, Any]) -> None:
    """Read a ``[[robots]]`` table's file into ``world`` (``add_urdf`` or ``add_mjcf``) and set its q, q̇,
    controls and link materials as written. The reader's and the World's refusals come back located: at
    ``file`` when the message is about the file's contents (it starts with the file's path), else at the key it
    names or the table."""
    where, path, keys = entry["where"], entry["file"], entry["keys"]
    add = world.add_urdf if entry["format"] == "urdf" else world.add_mjcf
    try:
        robot = add(path, **entry["kwargs"])
    except (TypeError, ValueError, ArithmeticError, ImportError, OSError) as exc:
        at = where + ("file",) if _one_line(exc).startswith(str(path)) else where
        raise _located(at, exc, keys) from None
    state = entry["state"]
    for key, size in (("q", robot.nq), ("qd", robot.nv)) + tuple((key, robot.nv) for key in _ROBOT_CONTROLS):
        if key in state and len(state[key]) != size:
            names = ", ".join(robot.joint_names) or "none"
            raise _Problem(where + (key,), f"must have {size} numbers (robot {robot.name!r} has {key} of size "
                                           f"{size}; its movable joints: {names}), got {len(state[key])}")
    try:
        if "q" in state:
            robot.q = state["q"]     # checked; a quaternion off unit length normalized (a unit one kept as is)
        robot.qd = state["qd"] if "qd" in state else robot.qd    # also places the link bodies from q
        for key in _ROBOT_CONTROLS:
            if key in state:
                setattr(robot, key, state[key])   # (checked: finite; gains >= 0)
    except (TypeError, ValueError, ArithmeticError) as exc:
        raise _located(where, exc, keys) from None
    made = {body.name.split("/", 1)[1]: body for body in world.robot_records[-1].get("mocap", ())}
    for name, values in entry["mocap"].items():
        at = where + ("mocap", name)
        if name not in made:
            raise _Problem(at, f"robot {robot.name!r} has no mocap body {name!r}; its file's mocap bodies: "
                               f"{sorted(made) or 'none'}")
        for key, value in values.items():
            setattr(made[name], key, value)   # (checked as the scene's other vectors: finite; unit quaternion)
    for link, values in entry["link_materials"].items():
        at = where + ("link_materials", link)
        body = robot.link(link).body if link in robot.link_names else None
        if body is None:
            shaped = ", ".join(repr(k.name) for k in robot.links if k.body is not None) or "none"
            raise _Problem(at, f"robot {robot.name!r} has no link {link!r} with collision shapes (only those have "
                               f"a material); its links with shapes: {shaped}")
        for key, value in values.items():
            try:
                setattr(body, key, value)   # (checked as add_body checks it: e.g. solver "pgs" for rolling_friction)
            except (TypeError, ValueError) as exc:
                raise _located(at + (key,), exc, {key: at + (key,)}) from None


# ====================================================================== value checks (raise _Problem)
def _kind(value: Any) -> str:
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int):
        return "an integer"
    if isinstance(value, float):
        return "a float"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "an array"
    if isinstance(value, dict):
        return "a table"
    return f"a {type(value).__name__}"


def _show(value: Any) -> str:
    text = repr(value) if not isinstance(value, dict) else "{" + ", ".join(f"{k} = ..." for k in value) + "}"
    text = text if len(text) <= 60 else text[:57] + "..."
    return f"{text} ({_kind(value)})"


def _table(where: KeyPath, value: Any) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise _Problem(where, f"must be a table, got {_show(value)}")
    return value


def _known_keys(where: KeyPath, table: dict[str, Any], allowed: tuple[str, ...], what: str) -> None:
    for key in table:
        if key not in allowed:
            if not where and key in _NOT_YET:
                raise _Problem((key,), f"{_NOT_YET[key]} are not supported in scene files yet")
            hint = difflib_hint(key, allowed)
            raise _Problem(where + (key,), f"unknown {what} {key!r}{hint}; known: {', '.join(allowed)}")


def difflib_hint(key: str, allowed: tuple[str, ...]) -> str:
    """' (did you mean 'x'?)' for a near miss, else ''."""
    import difflib

    close = difflib.get_close_matches(key, allowed, n=1)
    return f" (did you mean {close[0]!r}?)" if close else ""


def _number(where: KeyPath, value: Any, *, minimum: float | None = None, maximum: float | None = None,
            positive: bool = False) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise _Problem(where, f"must be a number, got {_show(value)}")
    out = float(value)
    if not math.isfinite(out):
        raise _Problem(where, f"must be finite, got {value!r}")
    if positive and out <= 0.0:
        raise _Problem(where, f"must be positive, got {value!r}")
    if minimum is not None and out < minimum:
        bound = "non-negative" if minimum == 0.0 else f">= {minimum!r}"
        raise _Problem(where, f"must be {bound}, got {value!r}")
    if maximum is not None and out > maximum:
        raise _Problem(where, f"must be in [{minimum!r}, {maximum!r}], got {value!r}")
    return out


def _integer(where: KeyPath, value: Any, lo: int, hi: int | None) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise _Problem(where, f"must be an integer, got {_show(value)}")
    if value < lo or (hi is not None and value > hi):
        bound = f"in [{lo}, {hi}]" if hi is not None else f">= {lo}"
        raise _Problem(where, f"must be an integer {bound}, got {value!r}")
    return value


def _boolean(where: KeyPath, value: Any) -> bool:
    if not isinstance(value, bool):
        raise _Problem(where, f"must be true or false, got {_show(value)}")
    return value


def _string(where: KeyPath, value: Any) -> str:
    if not isinstance(value, str):
        raise _Problem(where, f"must be a string, got {_show(value)}")
    return value


def _vector(where: KeyPath, value: Any, n: int, *, positive: bool = False) -> list[float]:
    if not isinstance(value, list):
        raise _Problem(where, f"must be an array of {n} numbers, got {_show(value)}")
    if len(value) != n:
        raise _Problem(where, f"must have {n} numbers, got {len(value)}: {_show(value)}")
    return [_number(where + (j,), c, positive=positive) for j, c in enumerate(value)]


def _quaternion(where: KeyPath, value: Any) -> list[float]:
    q = _vector(where, value, 4)
    if math.sqrt(sum(c * c for c in q)) < 1e-12:
        raise _Problem(where, f"must be a non-zero quaternion (w, x, y, z), got {q}")
    return q


def _checked(where: KeyPath, name: str, fn: Any, *args: Any) -> Any:
    """``fn(*args)``, its TypeError/ValueError (or overflow, division by zero, invalid float operation)
    re-raised as a problem at ``where``."""
    try:
        with np.errstate(over="raise", divide="raise", invalid="raise"):
            return fn(*args)
    except (TypeError, ValueError, ArithmeticError) as exc:
        raise _Problem(where, _strip_name(_one_line(exc), name)) from None


def _made(where: KeyPath, cls: Any, args: list[Any], keys: dict[str, KeyPath], *,
          default: KeyPath = ()) -> Any:
    """``cls(*args)`` (a shape), its errors located at the key of the argument the message names (``keys``:
    argument name → key path under ``where``), else at ``where + default``."""
    try:
        with np.errstate(over="raise", divide="raise", invalid="raise"):
            return cls(*args)
    except (TypeError, ValueError, ArithmeticError) as exc:
        raise _located(where + default, exc, {name: where + key for name, key in keys.items()}) from None


def _located(where: KeyPath, exc: BaseException, keys: dict[str, KeyPath]) -> _Problem:
    """The API's error ``exc`` as a problem at the key of the argument its message starts with (``keys``:
    argument name → the key path that gave it), else at ``where``. Python's own arithmetic errors
    (overflow, division by zero) name no argument: they are said to come from the values of ``where``."""
    message = _one_line(exc)
    for name in sorted(keys, key=len, reverse=True):
        if re.match(rf"{re.escape(name)}(?: must\b| is\b| has\b| =|:|\[)", message):
            return _Problem(keys[name], _strip_name(message, name))
    if isinstance(exc, (ArithmeticError, np.linalg.LinAlgError)):
        message = f"its values are out of range ({type(exc).__name__}: {message})"
    return _Problem(where, message)


def _one_line(exc: BaseException) -> str:
    return " ".join(str(exc).split()) or type(exc).__name__


def _strip_name(message: str, name: str | None) -> str:
    """'radius must be positive, got -1' → 'must be positive, got -1' (the key path already names it)."""
    if name and message.startswith(name + " "):
        return message[len(name) + 1:]
    if name and message.startswith(name + ": "):
        return message[len(name) + 2:]
    return message


def _dotted(where: KeyPath) -> str:
    out = ""
    for part in where:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            text = part if re.fullmatch(r"[A-Za-z0-9_-]+", part) else _string_literal(part)
            out += ("." if out else "") + text
    return out


# ====================================================================== writing
def _plain(value: Any) -> Any:
    """NumPy scalars as Python ones (for the writer)."""
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    if isinstance(value, (int, np.integer)):
        return int(value)
    if isinstance(value, (float, np.floating)):
        return float(value)
    return value


def _shape_table(shape: Any) -> dict[str, Any]:
    if isinstance(shape, Box):
        return {"type": "box", "size": [shape.lx, shape.ly, shape.lz]}
    if isinstance(shape, Sphere):
        return {"type": "sphere", "radius": shape.radius}
    if isinstance(shape, Capsule):
        return {"type": "capsule", "radius": shape.radius, "length": shape.length}
    if isinstance(shape, Cylinder):
        return {"type": "cylinder", "radius": shape.radius, "height": shape.height}
    if isinstance(shape, Ellipsoid):
        return {"type": "ellipsoid", "semi_axes": [shape.a, shape.b, shape.c]}
    if isinstance(shape, ConvexHull):
        return {"type": "hull", "points": np.asarray(shape.points, dtype=float).tolist()}
    raise TypeError(f"cannot save a shape of type {type(shape).__name__}")


def _string_literal(text: str) -> str:
    """A TOML basic string, escaped by tomli-w."""
    return tomli_w.dumps({"s": text})[len("s = "):-1]


def _key(key: str) -> str:
    return key if re.fullmatch(r"[A-Za-z0-9_-]+", key) else _string_literal(key)


def _literal(value: Any, indent: str = "") -> str:
    """A TOML value on one line, except arrays of more than three arrays or tables (hull points, compound
    parts), written one element a line. Floats use ``repr`` (shortest text that reads back exactly)."""
    value = _plain(value)
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if not math.isfinite(value):
            raise ValueError(f"cannot save a non-finite number {value!r}")
        return repr(value)
    if isinstance(value, str):
        return _string_literal(value)
    if isinstance(value, dict):
        inner = indent + "    "
        return "{ " + ", ".join(f"{_key(k)} = {_literal(v, inner)}" for k, v in value.items()) + " }"
    if isinstance(value, (list, tuple)):
        nested = bool(value) and all(isinstance(v, (list, tuple, dict)) for v in value)
        if nested and (len(value) > 3 or any(isinstance(v, dict) for v in value)):
            inner = indent + "    "
            return "[\n" + "".join(f"{inner}{_literal(v, inner)},\n" for v in value) + indent + "]"
        return "[" + ", ".join(_literal(v, indent) for v in value) + "]"
    raise TypeError(f"cannot save a value of type {type(value).__name__}")


def _line(key: str, value: Any) -> str:
    return f"{_key(key)} = {_literal(value)}\n"


# ====================================================================== locating keys in the text
class _Locator:
    """Line numbers of tables, keys and array elements, by key path, from a light scan of TOML text that
    ``tomllib`` already accepted (tomllib itself reports no positions)."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.pos = 0
        self.line = 1
        self.where: dict[KeyPath, int] = {}
        self.aot: dict[KeyPath, int] = {}
        try:
            self._document()
        except (IndexError, ValueError):  # best effort: what was found so far still serves
            pass

    def line_of(self, where: KeyPath) -> int:
        """The line of ``where``, or of the nearest enclosing table or key found; 1 if none."""
        path = tuple(where)
        while path:
            if path in self.where:
                return self.where[path]
            path = path[:-1]
        return 1

    # -- characters
    def _peek(self, n: int = 1) -> str:
        return self.text[self.pos:self.pos + n]

    def _advance(self, n: int = 1) -> None:
        self.line += self.text.count("\n", self.pos, self.pos + n)
        self.pos += n

    def _skip_spaces(self) -> None:
        while self._peek() in (" ", "\t") and self._peek():
            self._advance()

    def _skip_blank(self) -> None:
        """Spaces, newlines and comments."""
        while self.pos < len(self.text):
            c = self.text[self.pos]
            if c in " \t\r\n":
                self._advance()
            elif c == "#":
                end = self.text.find("\n", self.pos)
                self._advance((len(self.text) if end < 0 else end) - self.pos)
            else:
                return

    def _expect(self, token: str) -> None:
        if self._peek(len(token)) != token:
            raise ValueError(f"expected {token!r} at line {self.line}")
        self._advance(len(token))

    # -- grammar
    def _document(self) -> None:
        current: KeyPath = ()
        while True:
            self._skip_blank()
            if self.pos >= len(self.text):
                return
            if self._peek(2) == "[[":
                self._advance(2)
                keys = self._key()
                self._skip_spaces()
                self._expect("]]")
                current = self._resolve(keys, array=True)
                self.where.setdefault(current, self.line)
            elif self._peek() == "[":
                self._advance()
                keys = self._key()
                self._skip_spaces()
                self._expect("]")
                current = self._resolve(keys, array=False)
                self.where.setdefault(current, self.line)
            else:
                keys = self._key()
                self._skip_spaces()
                self._expect("=")
                self._skip_spaces()
                path = current + keys
                self.where.setdefault(path, self.line)
                self._value(path)

    def _resolve(self, keys: tuple[str, ...], *, array: bool) -> KeyPath:
        path: KeyPath = ()
        for i, key in enumerate(keys):
            path += (key,)
            if array and i == len(keys) - 1:
                n = self.aot.get(path, 0)
                self.aot[path] = n + 1
                path += (n,)
            elif path in self.aot:
                path += (self.aot[path] - 1,)
        return path

    def _key(self) -> tuple[str, ...]:
        parts = []
        while True:
            self._skip_spaces()
            c = self._peek()
            if c in ("\"", "'"):
                start = self.pos
                self._string()
                raw = self.text[start:self.pos]
                try:
                    parts.append(tomllib.loads(f"k = {raw}")["k"])
                except tomllib.TOMLDecodeError:
                    parts.append(raw[1:-1])
            else:
                start = self.pos
                while self.pos < len(self.text) and (self.text[self.pos].isalnum() or self.text[self.pos] in "_-"):
                    self._advance()
                if self.pos == start:
                    raise ValueError(f"no key at line {self.line}")
                parts.append(self.text[start:self.pos])
            self._skip_spaces()
            if self._peek() != ".":
                return tuple(parts)
            self._advance()

    def _string(self) -> None:
        for quote in ('"""', "'''"):
            if self._peek(3) == quote:
                self._advance(3)
                while self._peek(3) != quote or (quote == '"""' and self.text[self.pos - 1] == "\\"):
                    if self.pos >= len(self.text):
                        raise ValueError("unterminated string")
                    self._advance(2 if quote == '"""' and self._peek() == "\\" else 1)
                self._advance(3)
                while self._peek() == quote[0]:  # up to two quotes may close the content
                    self._advance()
                return
        quote = self._peek()
        self._advance()
        while self._peek() != quote:
            if self.pos >= len(self.text) or self._peek() == "\n":
                raise ValueError("unterminated string")
            self._advance(2 if quote == '"' and self._peek() == "\\" else 1)
        self._advance()

    def _value(self, path: KeyPath) -> None:
        c = self._peek()
        if c == "{":
            self._advance()
            while True:
                self._skip_blank()
                if self._peek() == "}":
                    self._advance()
                    return
                keys = self._key()
                self._skip_spaces()
                self._expect("=")
                self._skip_spaces()
                self.where.setdefault(path + keys, self.line)
                self._value(path + keys)
                self._skip_blank()
                if self._peek() == ",":
                    self._advance()
        elif c == "[":
            self._advance()
            index = 0
            while True:
                self._skip_blank()
                if self._peek() == "]":
                    self._advance()
                    return
                self.where.setdefault(path + (index,), self.line)
                self._value(path + (index,))
                index += 1
                self._skip_blank()
                if self._peek() == ",":
                    self._advance()
        elif c in ("\"", "'"):
            self._string()
        else:
            start = self.pos
            while self.pos < len(self.text) and self.text[self.pos] not in ",]}\n#":
                self._advance()
            if self.pos == start:
                raise ValueError(f"no value at line {self.line}")
