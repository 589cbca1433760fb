"""Measured motion for ``fit``: times and positions, optionally orientations, of named bodies.

Two file formats, both readable without tumble:

- CSV with a header row naming the columns ``time`` [s], ``body`` (a body's name, or its index in the
  scene), ``x``, ``y``, ``z`` [m] and optionally ``qw``, ``qx``, ``qy``, ``qz`` (a unit quaternion, body →
  world); one row per (time, body); other columns are ignored, so ``Trajectory.to_csv``'s file serves.
- ``.npz`` with the arrays ``times`` (T,) [s], ``names`` (k,) text, ``positions`` (T, k, 3) [m] and
  optionally ``orientations`` (T, k, 4): what ``Trajectory.save`` writes (its other arrays are ignored).
  Read with ``allow_pickle=False`` after checking each array's header against the file's bytes.

Times count from the scene's initial state (t = 0) and increase strictly for each body.
"""

from __future__ import annotations

import csv
import math
import os
import zipfile
import zlib
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ..user.trajectory import _check_npz

MAX_MEASURED_BYTES = 256 * 2**20
"""The largest measured file read [bytes] (256 MiB, about 3 million CSV rows), checked before reading."""

MAX_MEASURED_ROWS = 1_000_000
"""The most samples (CSV rows; an npz's times × bodies) of one measured file, counted before any is parsed:
the rows are parsed into one array of 8 floats each (64 MB at the limit); a million samples is 1 kHz for
1000 s of one body. The error measure interpolates the simulation at every sample of every evaluation."""

_POSITION = ("x", "y", "z")
_ORIENTATION = ("qw", "qx", "qy", "qz")


@dataclass(frozen=True)
class Track:
    """One body's measured motion: ``times`` (T,) [s], ``positions`` (T, 3) [m] and ``orientations``
    (T, 4) unit quaternions (w, x, y, z) body → world, or None where only positions were measured."""

    times: np.ndarray
    positions: np.ndarray
    orientations: np.ndarray | None = None

    def __post_init__(self) -> None:
        times = np.asarray(self.times, dtype=float)
        positions = np.asarray(self.positions, dtype=float)
        if times.ndim != 1 or times.size < 1:
            raise ValueError(f"times must be a 1-D array of at least one time [s], got shape {times.shape}")
        if positions.shape != (times.size, 3):
            raise ValueError(f"positions must have shape ({times.size}, 3), got {positions.shape}")
        if not (np.all(np.isfinite(times)) and np.all(np.isfinite(positions))):
            raise ValueError("times and positions must be finite")
        if times[0] < 0.0 or np.any(np.diff(times) <= 0.0):
            raise ValueError(f"times must be >= 0 and strictly increasing, got {times[:4]}...")
        object.__setattr__(self, "times", times)
        object.__setattr__(self, "positions", positions)
        if self.orientations is not None:
            q = np.asarray(self.orientations, dtype=float)
            if q.shape != (times.size, 4) or not np.all(np.isfinite(q)):
                raise ValueError(f"orientations must be finite, of shape ({times.size}, 4), got {q.shape}")
            norm = np.linalg.norm(q, axis=1)
            if np.any(norm < 1e-12):
                raise ValueError("orientations must be non-zero quaternions (w, x, y, z)")
            object.__setattr__(self, "orientations", q / norm[:, None])


@dataclass(frozen=True)
class Measured:
    """Measured motion of named bodies: ``tracks`` maps a body's name (or its index in the scene, as text)
    to its ``Track``; ``source`` names where it came from (messages)."""

    tracks: Mapping[str, Track]
    source: str = "measured"

    def __post_init__(self) -> None:
        if not isinstance(self.tracks, Mapping) or not self.tracks:
            raise ValueError(f"{self.source}: measured motion must name at least one body, got {self.tracks!r}")
        for name, track in self.tracks.items():
            if not isinstance(name, str) or not isinstance(track, Track):
                raise TypeError(f"{self.source}: tracks must map body names to Track, got {name!r}: {track!r}")

    @property
    def duration(self) -> float:
        """The last measured time [s]."""
        return max(float(track.times[-1]) for track in self.tracks.values())


def load_measured(path: str | os.PathLike) -> Measured:
    """Read measured motion from a CSV or ``.npz`` file (formats: this module's docstring).

    Raises:
        TypeError: ``path`` is not a path.
        ValueError: naming the file (and the line, column or array): it cannot be read, is too large
            (``MAX_MEASURED_BYTES``) or holds too many samples (``MAX_MEASURED_ROWS``), lacks a required column
            or array (``time``, ``body``, ``x``, ``y``, ``z``;
            ``times``, ``names``, ``positions``), has some but not all of ``qw qx qy qz``, a value that is not
            a finite number, arrays of the wrong shape, or a body's times that do not increase.
    """
    if not isinstance(path, (str, os.PathLike)):
        raise TypeError(f"path must be a file path (str or os.PathLike), got {path!r}")
    shown = str(path)
    path = Path(path)
    try:
        size = path.stat().st_size
    except OSError as exc:
        raise ValueError(f"measured file {shown!r} could not be read: {exc.strerror or exc}") from None
    if size > MAX_MEASURED_BYTES:
        raise ValueError(f"measured file {shown!r} holds {size:,} bytes; at most {MAX_MEASURED_BYTES:,} "
                         f"(MAX_MEASURED_BYTES)")
    if zipfile.is_zipfile(path):
        return _load_npz(path, shown)
    return _load_csv(path, shown)


def _load_csv(path: Path, shown: str) -> Measured:
    try:
        with open(path, "rb") as fh:
            lines = sum(block.count(b"\n") for block in iter(lambda: fh.read(1 << 20), b""))
    except OSError as exc:
        raise ValueError(f"measured file {shown!r} could not be read: {exc.strerror or exc}") from None
    if lines > MAX_MEASURED_ROWS + 1:
        raise ValueError(f"measured file {shown!r} has {lines - 1:,} rows; at most {MAX_MEASURED_ROWS:,} "
                         f"(MAX_MEASURED_ROWS): thin the samples out")
    try:
        with open(path, newline="", encoding="utf-8") as fh:
            return _parse_csv(csv.reader(fh), shown, lines + 1)
    except UnicodeDecodeError as exc:
        raise ValueError(f"measured file {shown!r} could not be read as CSV: not UTF-8 text (byte {exc.start})") \
            from None
    except (OSError, csv.Error) as exc:
        raise ValueError(f"measured file {shown!r} could not be read as CSV: {' '.join(str(exc).split())}") from None


def _parse_csv(reader: Any, shown: str, capacity: int) -> Measured:
    """The rows of ``reader`` parsed as they are read, into one array of at most ``capacity`` rows (the file's
    lines): the file's text is never held whole."""
    header_row = next(reader, None)
    if header_row is None:
        raise ValueError(f"measured file {shown!r} is empty; it needs a header row: time,body,x,y,z[,qw,qx,qy,qz]")
    header = [name.strip().lstrip("#").strip() for name in header_row]
    missing = [name for name in ("time", "body") + _POSITION if name not in header]
    if missing:
        # the file's own text is never shown: a file given by mistake (a password file, a key) must not be
        # echoed into a terminal or a log; the columns it lacks are named instead
        raise ValueError(f"measured file {shown!r}: missing column(s) {', '.join(missing)} in its header row "
                         f"(its first line); needed: time,body,x,y,z and optionally qw,qx,qy,qz")
    with_q = [name for name in _ORIENTATION if name in header]
    if with_q and len(with_q) != 4:
        absent = [name for name in _ORIENTATION if name not in header]
        raise ValueError(f"measured file {shown!r}: orientation needs all of qw,qx,qy,qz; missing column(s) "
                         f"{', '.join(absent)}")
    columns = {name: header.index(name) for name in ("time", *_POSITION, *with_q)}
    body_col = header.index("body")
    table = np.empty((capacity, len(columns)))
    owner = np.empty(capacity, dtype=np.int64)
    bodies: dict[str, int] = {}
    count = 0
    for row in reader:
        line = reader.line_num
        if not row or all(not cell.strip() for cell in row):
            continue
        if len(row) != len(header):
            raise ValueError(f"{shown}:{line}: {len(row)} values, the header names {len(header)}")
        if count == capacity:   # (the file grew since its lines were counted)
            raise ValueError(f"measured file {shown!r} changed while it was read")
        for k, (name, col) in enumerate(columns.items()):
            try:
                value = float(row[col])
            except ValueError:
                raise ValueError(f"{shown}:{line}: column {name}: not a number") from None
            if not math.isfinite(value):
                raise ValueError(f"{shown}:{line}: column {name}: must be finite, got {value}")
            table[count, k] = value
        owner[count] = bodies.setdefault(row[body_col].strip(), len(bodies))
        count += 1
    if not count:
        raise ValueError(f"measured file {shown!r} has a header but no rows")
    table, owner = table[:count], owner[:count]
    tracks = {}
    for body, index in bodies.items():
        rows = table[owner == index]
        try:
            tracks[body] = Track(rows[:, 0], rows[:, 1:4], rows[:, 4:8] if with_q else None)
        except ValueError as exc:
            raise ValueError(f"measured file {shown!r}: body {body!r}: {exc}") from None
    return Measured(tracks, source=shown)


def _load_npz(path: Path, shown: str) -> Measured:
    _check_npz(path)
    try:
        with np.load(path, allow_pickle=False) as data:
            arrays = {name: data[name] for name in ("times", "names", "positions", "orientations")
                      if name in data.files}
    except (OSError, EOFError, ValueError, zipfile.BadZipFile, zlib.error) as exc:
        raise ValueError(f"measured file {shown!r} could not be read: {exc}") from None
    missing = [name for name in ("times", "names", "positions") if name not in arrays]
    if missing:
        raise ValueError(f"measured file {shown!r}: missing array(s) {', '.join(missing)}; needed: times (T,), "
                         f"names (k,), positions (T, k, 3) and optionally orientations (T, k, 4)")
    times, names, positions = arrays["times"], arrays["names"], arrays["positions"]
    if positions.size // 3 > MAX_MEASURED_ROWS:
        raise ValueError(f"measured file {shown!r} holds {positions.size // 3:,} samples (times x bodies); at most "
                         f"{MAX_MEASURED_ROWS:,} (MAX_MEASURED_ROWS): thin the samples out")
    orientations = arrays.get("orientations")
    if names.ndim != 1 or names.dtype.kind != "U":
        raise ValueError(f"measured file {shown!r}: names must be a 1-D array of text, got {names.dtype} "
                         f"{names.shape}")
    shape = (times.shape[0] if times.ndim == 1 else -1, names.shape[0])
    if positions.shape != shape + (3,) or (orientations is not None and orientations.shape != shape + (4,)):
        raise ValueError(f"measured file {shown!r}: positions must have shape (T, k, 3) and orientations (T, k, 4) "
                         f"for T = len(times), k = len(names); got times {times.shape}, names {names.shape}, "
                         f"positions {positions.shape}"
                         + (f", orientations {orientations.shape}" if orientations is not None else ""))
    tracks = {}
    for k, name in enumerate(names.tolist()):
        if not name:
            continue   # an unnamed body of a saved trajectory: nothing to match it by
        try:
            tracks[name] = Track(times, positions[:, k], None if orientations is None else orientations[:, k])
        except ValueError as exc:
            raise ValueError(f"measured file {shown!r}: body {name!r}: {exc}") from None
    if not tracks:
        raise ValueError(f"measured file {shown!r}: no named body (names is empty or all blank)")
    return Measured(tracks, source=shown)
