"""Trajectory files for the tests, good and damaged, made without simulating."""

from __future__ import annotations

import io
import json
import zipfile
from pathlib import Path

import numpy as np

import tumble as tb

SPHERE_GEOMETRY = {"ground": 0.0, "bodies": [{"fixed": False, "parts": [
    {"type": "sphere", "position": [0.0, 0.0, 0.0], "orientation": [1.0, 0.0, 0.0, 0.0], "radius": 0.1}]}]}


def trajectory(frames: int = 3, geometry: str | None = None) -> tb.Trajectory:
    """One sphere falling from 1 m, ``frames`` frames 0.1 s apart."""
    T = frames
    positions = np.zeros((T, 1, 3))
    positions[:, 0, 2] = 1.0 - 0.5 * 9.81 * (0.1 * np.arange(T)) ** 2
    orientations = np.zeros((T, 1, 4))
    orientations[..., 0] = 1.0
    return tb.Trajectory(
        times=0.1 * np.arange(T), positions=positions, orientations=orientations, velocities=np.zeros((T, 1, 3)),
        angular_velocities=np.zeros((T, 1, 3)), kinetic_energy=np.zeros(T), potential_energy=np.zeros(T),
        linear_momentum=np.zeros((T, 3)), angular_momentum=np.zeros((T, 3)), masses=np.ones(1),
        names=np.array(["ball"]), geometry=json.dumps(SPHERE_GEOMETRY) if geometry is None else geometry)


def replace_member(path: Path, name: str, data: bytes) -> Path:
    """Rewrite the .npz ``path`` with its member ``name`` (e.g. "positions.npy") holding ``data``."""
    with zipfile.ZipFile(path) as archive:
        members = {info.filename: archive.read(info) for info in archive.infolist()}
    members[name] = data
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        for member, content in members.items():
            archive.writestr(member, content)
    return path


def npy_header(shape: tuple[int, ...], descr: str = "<f8", version: tuple[int, int] = (1, 0)) -> bytes:
    """The bytes of an .npy header claiming an array of ``shape`` (no data after it)."""
    fh = io.BytesIO()
    header = {"descr": descr, "fortran_order": False, "shape": shape}
    if version == (1, 0):
        np.lib.format.write_array_header_1_0(fh, header)
    else:
        np.lib.format.write_array_header_2_0(fh, header)
    return fh.getvalue()


HUGE_SHAPE = (290_000_000, 1_000, 3)
"""(T, n, 3) float64 positions of about 6.3 TiB, as in the issue's crafted file."""


def huge_header_npz(path: Path) -> Path:
    """A valid trajectory whose positions header claims ``HUGE_SHAPE`` (followed by 64 bytes)."""
    trajectory().save(path)
    return replace_member(path, "positions.npy", npy_header(HUGE_SHAPE) + bytes(64))
