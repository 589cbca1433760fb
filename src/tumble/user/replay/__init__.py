"""Self-contained HTML replay of a simulation: one file that opens offline in any browser (file://, no
server, no network), with three.js r159 (``three.min.js``, MIT, see ``THREE_LICENSE``) inlined.

The page draws every body part as an instance of a shared geometry (one ``THREE.InstancedMesh`` per distinct
geometry, so a pile of thousands of bodies stays smooth), plays the poses in real time with interpolation
between stored frames, and has play/pause, a time scrubber, a speed selector, an orbit camera (drag: rotate,
wheel: zoom, right- or shift-drag: pan), optional contact points and normals, and a list of body names.

Safety: every user string (body names, the title) enters the page only as JSON inside a
``<script type="application/json">`` block with ``<``, ``>``, ``&``, U+2028 and U+2029 escaped, or through
``html.escape``; the page script shows names with ``textContent`` only.

Importing this module is cheap: the templates and three.js are read when a replay is written.
"""

from __future__ import annotations

import base64
import html
import json
import math
import os
import re
from importlib import resources
from pathlib import Path
from typing import Any

import numpy as np

__all__ = ["write_replay", "THREE_VERSION"]

THREE_VERSION = "0.159.0"  # the npm release of three whose build/three.min.js is vendored here

_PART_TYPES = ("box", "sphere", "capsule", "cylinder", "ellipsoid", "hull", "plane")

# Body colours, cycled by body index: distinct neighbours, readable on the light-grey ground. Fixed bodies
# (walls, ramps, the ground) are grey so the moving ones stand out.
_PALETTE = (0xE4572E, 0x29A0B1, 0xF3A712, 0x6A4C93, 0x2E933C, 0xD62472, 0x3066BE, 0xA86B3C,
            0x8CB33E, 0x17BEBB, 0xC03221, 0x7D5BA6)
_FIXED_COLOUR = 0x9A9A9A


def body_colour(index: int, fixed: bool) -> int:
    """The colour (0xRRGGBB, sRGB) the replay gives body ``index``: a palette cycled by index, grey if fixed."""
    return _FIXED_COLOUR if fixed else _PALETTE[index % len(_PALETTE)]


def write_replay(path: str | os.PathLike, *, times: Any, positions: Any, orientations: Any,
                 bodies: list[dict[str, Any]], ground: float | None = None, contacts: dict[str, Any] | None = None,
                 title: str = "tumble replay", fps: float = 60.0) -> Path:
    """Write a self-contained HTML replay of a recorded motion; returns the path (written atomically).

    Parameters
    ----------
    path : the ``.html`` file to write (its folder is created if missing).
    times : (T,) frame times [s], non-decreasing.
    positions : (T, n, 3) world positions of the n bodies' centres of mass [m]. The world is z-up.
    orientations : (T, n, 4) body → world rotations as quaternions (w, x, y, z); normalised here (must be
        non-zero).
    bodies : n dicts ``{"name": str, "fixed": bool, "parts": [part, ...]}`` (a missing name becomes
        ``"body i"``). A part has ``"type"``, ``"position"`` (3,) [m] and ``"orientation"`` (4,) (w, x, y, z),
        both in the BODY frame (origin at the COM), and its sizes [m]: box ``"half_extents"`` (3,); sphere
        ``"radius"``; capsule ``"radius"``, ``"half_length"`` (half the cylindrical part, along part z);
        cylinder ``"radius"``, ``"half_height"`` (along part z); ellipsoid ``"semi_axes"`` (3,); hull
        ``"vertices"`` (k, 3) and ``"faces"`` (polygons of vertex indices, counter-clockwise seen from
        outside); ``"plane"`` draws nothing (the ground is drawn from ``ground``).
    ground : None, or the height z [m] of the ground plane, drawn with a grid.
    contacts : None, or ``{"offsets": (T+1,) int, "points": (c, 3) [m], "normals": (c, 3)}``: frame k's
        contacts are rows ``offsets[k]:offsets[k+1]``; the page shows them as points with short normal lines
        (a checkbox, off at start).
    title : shown in the page's title bar and header.
    fps : the most frames per second stored [1/s]: a recording finer than that is subsampled (the page
        interpolates between stored frames, so playback is smooth in real time at any speed).

    The poses are stored as float32, base64-encoded: n bodies over D seconds take about
    ``D * fps * n * 7 * 4 * 4/3`` bytes (a 1000-body pile over 3 s at 60 fps: about 6.7 MB).

    Raises ValueError, naming the argument, on inconsistent shapes, non-finite numbers or malformed bodies,
    before anything is written.
    """
    times_a, pos_a, quat_a, T, n = _check_motion(times, positions, orientations)
    if not isinstance(bodies, (list, tuple)):
        raise ValueError(f"bodies must be a list of {n} dicts, got {type(bodies).__name__}")
    if len(bodies) != n:
        raise ValueError(f"bodies has {len(bodies)} entries but positions has n = {n} bodies")
    if not isinstance(title, str):
        raise ValueError(f"title must be a str, got {type(title).__name__}")
    if isinstance(fps, bool) or not isinstance(fps, (int, float, np.integer, np.floating)) or \
            not math.isfinite(fps) or fps <= 0:
        raise ValueError(f"fps must be a finite number > 0, got {fps!r}")
    if ground is not None:
        try:
            ground = float(ground)
        except (TypeError, ValueError):
            raise ValueError(f"ground must be None or a number (height z [m]), got {ground!r}") from None
        if not math.isfinite(ground):
            raise ValueError(f"ground must be finite, got {ground!r}")
    names, fixed, meshes, instances, radii, hull_points, owners = _check_bodies(bodies)
    contact_data = _check_contacts(contacts, T) if contacts is not None else None

    keep = _subsample(times_a, float(fps))
    poses = np.concatenate([pos_a[keep], quat_a[keep][..., [1, 2, 3, 0]]], axis=2)  # three: (x, y, z, w)
    meta: dict[str, Any] = {
        "title": title,
        "names": names,
        "fixed": fixed,
        "colours": [body_colour(i, f) for i, f in enumerate(fixed)],
        "times": times_a[keep].tolist(),
        "bodyCount": n,
        "meshes": meshes,
        "instances": instances,
        "ground": ground,
        "bounds": _bounds(pos_a, quat_a, hull_points, owners, ground),
        "radii": radii.tolist(),
        "contacts": None,
    }
    blobs = {"poses": _b64(poses.astype("<f4"))}
    if contact_data is not None:
        offsets, points, normals = contact_data
        rows = [np.arange(offsets[k], offsets[k + 1]) for k in keep]
        counts = np.array([len(r) for r in rows], dtype=np.int64)
        sel = np.concatenate(rows) if rows else np.zeros(0, dtype=np.int64)
        meta["contacts"] = {"offsets": np.concatenate([[0], np.cumsum(counts)]).tolist(),
                            "maxCount": int(counts.max(initial=0))}
        blobs["contacts"] = _b64(np.concatenate([points[sel], normals[sel]], axis=1).astype("<f4"))

    page = _render_page(title, meta, blobs)

    from ..trajectory import _atomic_write  # here, not at module level: trajectory imports this module lazily

    return _atomic_write(Path(path), lambda fh: fh.write(page.encode("utf-8")))


# --------------------------------------------------------------------------------------------- validation

def _as_float_array(value: Any, name: str) -> np.ndarray:
    try:
        arr = np.asarray(value, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{name} must be an array of numbers: {exc}") from None
    return arr


def _check_motion(times: Any, positions: Any, orientations: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray,
                                                                           int, int]:
    t = _as_float_array(times, "times")
    if t.ndim != 1 or t.shape[0] < 1:
        raise ValueError(f"times must have shape (T,) with T >= 1, got shape {t.shape}")
    T = t.shape[0]
    p = _as_float_array(positions, "positions")
    if p.ndim != 3 or p.shape[0] != T or p.shape[2] != 3:
        raise ValueError(f"positions must have shape (T, n, 3) with T = {T} (len(times)), got shape {p.shape}")
    n = p.shape[1]
    q = _as_float_array(orientations, "orientations")
    if q.shape != (T, n, 4):
        raise ValueError(f"orientations must have shape (T, n, 4) = ({T}, {n}, 4), got shape {q.shape}")
    for name, arr in (("times", t), ("positions", p), ("orientations", q)):
        if not np.all(np.isfinite(arr)):
            bad = np.argwhere(~np.isfinite(arr))[0]
            raise ValueError(f"{name} must be finite; {name}[{', '.join(map(str, bad))}] = {arr[tuple(bad)]}")
    if T > 1 and np.any(np.diff(t) < 0):
        k = int(np.argmax(np.diff(t) < 0))
        raise ValueError(f"times must be non-decreasing; times[{k}] = {t[k]} > times[{k + 1}] = {t[k + 1]}")
    norm = np.linalg.norm(q, axis=2, keepdims=True)
    if np.any(norm < 1e-9):
        bad = np.argwhere(norm[..., 0] < 1e-9)[0]
        raise ValueError(f"orientations must be non-zero quaternions (w, x, y, z); orientations[{bad[0]}, {bad[1]}]"
                         f" = {q[bad[0], bad[1]].tolist()}")
    return t, p, q / norm, T, n


def _vector(value: Any, size: int, name: str, positive: bool = False) -> list[float]:
    arr = _as_float_array(value, name)
    if arr.shape != (size,) or not np.all(np.isfinite(arr)) or (positive and np.any(arr <= 0)):
        what = "positive finite" if positive else "finite"
        raise ValueError(f"{name} must be {size} {what} numbers, got {value!r}")
    return arr.tolist()


def _scalar(part: dict[str, Any], key: str, name: str) -> float:
    if key not in part:
        raise ValueError(f"{name} ({part.get('type')}) needs {key!r}")
    return _vector([part[key]], 1, f"{name}[{key!r}]", positive=True)[0]


def _check_bodies(bodies: Any) -> tuple[list[str], list[bool], list[dict[str, Any]], list[list[float]],
                                         np.ndarray, np.ndarray, np.ndarray]:
    """Validate ``bodies``; return names, fixed flags, the distinct meshes, the instances (one per drawn part:
    [body, mesh, px, py, pz, qx, qy, qz, qw, sx, sy, sz] in the body frame), each body's bounding radius
    about its COM [m] (0 for a body with nothing drawn; the page's hover test), and points enclosing each
    drawn part in its body's frame, (P, 3) [m], with their bodies' indices (P,) (what the camera frames)."""
    names: list[str] = []
    fixed: list[bool] = []
    meshes: list[dict[str, Any]] = []
    mesh_index: dict[str, int] = {}
    instances: list[list[float]] = []
    radii = np.zeros(len(bodies))
    hull_points: list[np.ndarray] = []
    owners: list[np.ndarray] = []
    signs = np.array([[sx, sy, sz] for sx in (-1, 1) for sy in (-1, 1) for sz in (-1, 1)], dtype=float)

    def mesh(spec: dict[str, Any]) -> int:
        # Meshes are shared by geometry: box, sphere (ellipsoids too) and cylinder are unit shapes scaled per
        # instance; a capsule's caps do not scale, so each (radius, half_length) is its own mesh, and so is each
        # distinct hull.
        key = json.dumps(spec, sort_keys=True)
        if key not in mesh_index:
            mesh_index[key] = len(meshes)
            meshes.append(spec)
        return mesh_index[key]

    for i, body in enumerate(bodies):
        where = f"bodies[{i}]"
        if not isinstance(body, dict):
            raise ValueError(f"{where} must be a dict with 'name', 'fixed' and 'parts', got {type(body).__name__}")
        name = body.get("name", f"body {i}")
        if not isinstance(name, str):
            raise ValueError(f"{where}['name'] must be a str, got {name!r}")
        names.append(name)
        fixed.append(bool(body.get("fixed", False)))
        parts = body.get("parts", [])
        if not isinstance(parts, (list, tuple)):
            raise ValueError(f"{where}['parts'] must be a list of parts, got {type(parts).__name__}")
        for j, part in enumerate(parts):
            pname = f"{where}['parts'][{j}]"
            if not isinstance(part, dict):
                raise ValueError(f"{pname} must be a dict, got {type(part).__name__}")
            kind = part.get("type")
            if kind not in _PART_TYPES:
                raise ValueError(f"{pname}['type'] must be one of {list(_PART_TYPES)}, got {kind!r}")
            if kind == "plane":
                continue
            pos = _vector(part.get("position", (0.0, 0.0, 0.0)), 3, f"{pname}['position']")
            quat = _vector(part.get("orientation", (1.0, 0.0, 0.0, 0.0)), 4, f"{pname}['orientation']")
            qn = math.sqrt(sum(c * c for c in quat))
            if qn < 1e-9:
                raise ValueError(f"{pname}['orientation'] must be a non-zero quaternion (w, x, y, z), got {quat}")
            w, x, y, z = (c / qn for c in quat)
            if kind == "box":
                scale = _vector(part.get("half_extents"), 3, f"{pname}['half_extents']", positive=True)
                m = mesh({"type": "box"})
                extent = math.sqrt(sum(s * s for s in scale))
            elif kind == "sphere":
                r = _scalar(part, "radius", pname)
                scale, m, extent = [r, r, r], mesh({"type": "sphere"}), r
            elif kind == "ellipsoid":
                scale = _vector(part.get("semi_axes"), 3, f"{pname}['semi_axes']", positive=True)
                m, extent = mesh({"type": "sphere"}), max(scale)
            elif kind == "cylinder":
                r, hh = _scalar(part, "radius", pname), _scalar(part, "half_height", pname)
                scale, m, extent = [r, r, hh], mesh({"type": "cylinder"}), math.hypot(r, hh)
            elif kind == "capsule":
                r, hl = _scalar(part, "radius", pname), _scalar(part, "half_length", pname)
                scale, m, extent = [1.0, 1.0, 1.0], mesh({"type": "capsule", "radius": r, "halfLength": hl}), r + hl
            else:
                verts, faces = _check_hull(part, pname)
                scale, m = [1.0, 1.0, 1.0], mesh({"type": "hull", "vertices": verts, "faces": faces})
                extent = float(np.linalg.norm(np.asarray(verts), axis=1).max())
            radii[i] = max(radii[i], math.sqrt(sum(c * c for c in pos)) + extent)
            instances.append([i, m, *pos, x, y, z, w, *scale])
            # the part's enclosing points: a hull's vertices, else the corners of the part's own bounding box
            half = [r, r, r + hl] if kind == "capsule" else scale  # (a capsule's instance is not scaled)
            local = np.asarray(verts) if kind == "hull" else signs * half
            hull_points.append(np.asarray(pos) + _rotate(np.array([w, x, y, z]), local))
            owners.append(np.full(len(local), i))
    points = np.concatenate(hull_points) if hull_points else np.zeros((0, 3))
    owner = np.concatenate(owners) if owners else np.zeros(0, dtype=np.int64)
    return names, fixed, meshes, instances, radii, points, owner


def _rotate(q: np.ndarray, v: np.ndarray) -> np.ndarray:
    """Rotate vectors v (..., 3) by unit quaternions q (..., 4) (w, x, y, z), broadcasting."""
    w, u = q[..., :1], q[..., 1:]
    t = 2.0 * np.cross(u, v)
    return v + w * t + np.cross(u, t)


def _check_hull(part: dict[str, Any], pname: str) -> tuple[list[list[float]], list[list[int]]]:
    verts = _as_float_array(part.get("vertices"), f"{pname}['vertices']")
    if verts.ndim != 2 or verts.shape[1] != 3 or verts.shape[0] < 4 or not np.all(np.isfinite(verts)):
        raise ValueError(f"{pname}['vertices'] must be a (k, 3) array of finite numbers with k >= 4, "
                         f"got shape {verts.shape}")
    faces = part.get("faces")
    if not isinstance(faces, (list, tuple)) or len(faces) < 4:
        raise ValueError(f"{pname}['faces'] must be a list of at least 4 polygons (lists of vertex indices)")
    out = []
    for f, face in enumerate(faces):
        try:
            idx = [int(k) for k in face]
        except (TypeError, ValueError):
            raise ValueError(f"{pname}['faces'][{f}] must be a list of vertex indices, got {face!r}") from None
        if len(idx) < 3 or min(idx) < 0 or max(idx) >= verts.shape[0]:
            raise ValueError(f"{pname}['faces'][{f}] must list >= 3 vertex indices in [0, {verts.shape[0]}), "
                             f"got {idx}")
        out.append(idx)
    return verts.tolist(), out


def _check_contacts(contacts: Any, T: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    if not isinstance(contacts, dict) or not {"offsets", "points", "normals"} <= set(contacts):
        raise ValueError("contacts must be None or a dict with 'offsets' (T+1,), 'points' (c, 3) and "
                         "'normals' (c, 3)")
    offsets = np.asarray(contacts["offsets"])
    if offsets.shape != (T + 1,) or not np.issubdtype(offsets.dtype, np.integer):
        raise ValueError(f"contacts['offsets'] must be (T+1,) = ({T + 1},) integers, got shape {offsets.shape} "
                         f"dtype {offsets.dtype}")
    offsets = offsets.astype(np.int64)
    if offsets[0] != 0 or np.any(np.diff(offsets) < 0):
        raise ValueError("contacts['offsets'] must start at 0 and be non-decreasing")
    c = int(offsets[-1])
    arrays = []
    for key in ("points", "normals"):
        arr = _as_float_array(contacts[key], f"contacts[{key!r}]")
        if arr.shape != (c, 3):
            raise ValueError(f"contacts[{key!r}] must have shape (c, 3) = ({c}, 3) (c = offsets[-1]), "
                             f"got shape {arr.shape}")
        if not np.all(np.isfinite(arr)):
            raise ValueError(f"contacts[{key!r}] must be finite")
        arrays.append(arr)
    return offsets, arrays[0], arrays[1]


# ------------------------------------------------------------------------------------------ frames and page

def _subsample(times: np.ndarray, fps: float) -> np.ndarray:
    """Indices of the frames to store: for each tick of a 1/fps grid over the recording, the first frame at or
    after it, plus the last frame. A recording coarser than fps keeps every frame (the page interpolates)."""
    t0, t1 = float(times[0]), float(times[-1])
    ticks = t0 + np.arange(int(math.floor((t1 - t0) * fps + 1e-9)) + 1) / fps
    idx = np.searchsorted(times, ticks - 1e-9 / fps, side="left")
    idx = np.unique(np.append(np.minimum(idx, len(times) - 1), len(times) - 1))
    # Equal times (a duplicated frame) would make a zero-length interpolation interval: keep the later one.
    keep = np.append(times[idx][1:] > times[idx][:-1], True)
    return idx[keep]


def _bounds(positions: np.ndarray, orientations: np.ndarray, points: np.ndarray, owner: np.ndarray,
            ground: float | None) -> list[float]:
    """Axis-aligned box [xmin, ymin, zmin, xmax, ymax, zmax] [m] swept by the drawn bodies over the run (what the
    camera frames at start), from the parts' enclosing points in up to 64 frames spread over the run (first and
    last included); the ground's height is included."""
    if len(points):
        count = min(len(positions), 64, max(2, 2_000_000 // len(points)))  # bounded memory for huge scenes
        frames = np.unique(np.linspace(0, len(positions) - 1, count).round().astype(int))
        world = positions[frames][:, owner] + _rotate(orientations[frames][:, owner], points[None])
        lo, hi = world.min(axis=(0, 1)), world.max(axis=(0, 1))
    else:
        lo, hi = np.full(3, -1.0), np.full(3, 1.0)
    if ground is not None:
        lo[2], hi[2] = min(lo[2], ground), max(hi[2], ground)
    return [*lo.tolist(), *hi.tolist()]


def _b64(arr: np.ndarray) -> str:
    return base64.b64encode(np.ascontiguousarray(arr).tobytes()).decode("ascii")


def _json_for_script(value: Any) -> str:
    """JSON that is safe inside a <script> element: no '<', '>' or '&' (so no '</script>' or '<!--'), and
    U+2028/U+2029 escaped (ensure_ascii) for older JavaScript parsers."""
    text = json.dumps(value, ensure_ascii=True, allow_nan=False, separators=(",", ":"))
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def _resource(name: str) -> str:
    return resources.files(__name__).joinpath(name).read_text(encoding="utf-8")


def _render_page(title: str, meta: dict[str, Any], blobs: dict[str, str]) -> str:
    three, player = _resource("three.min.js"), _resource("player.js")
    for name, code in (("three.min.js", three), ("player.js", player)):
        # Inlined code must not close its own <script> element early.
        if re.search(r"</script|<!--", code, re.IGNORECASE):
            raise RuntimeError(f"{name} contains '</script' or '<!--' and cannot be inlined")
    fill = {
        "TITLE": html.escape(title),
        "STYLE": _resource("player.css"),
        "THREE": three,
        "PLAYER": player,
        "META": _json_for_script(meta),
        "POSES": blobs["poses"],
        "CONTACTS": blobs.get("contacts", ""),
    }
    # One pass over the template only, so a marker-like string in the data is never substituted.
    return re.sub(r"\{\{([A-Z]+)\}\}", lambda m: fill[m.group(1)], _resource("page.html"))
