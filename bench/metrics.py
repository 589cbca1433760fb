"""Accuracy figures, computed by the harness the same way for every engine.

Inputs are only what every engine can give: positions, orientations (w, x, y, z), linear and angular
velocities (world frame) — plus the scene's own masses and inertias. Nothing here reads an engine's own
energy, contact depth or momentum report.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from bench.adapters.base import State
from bench.geometry import measure_contacts, quat_to_matrix
from bench.scenes import Scene

__all__ = [
    "SETTLED_SPEED",
    "STAND_TOLERANCE",
    "TOUCH_TOLERANCE",
    "kinetic_energy",
    "angular_momenta",
    "bounce_apexes",
    "fit_acceleration",
    "end_state_figures",
    "trajectory_figures",
]

SETTLED_SPEED = 0.05
"""m/s. A pile counts as settled when no body moves faster than this at the end."""

STAND_TOLERANCE = 0.25
"""m (a quarter of the 1 m box edge). S3 stands if the top box drifted less than this horizontally and its
height is within this of the exact stack height; S4 stands if no box moved more than this."""

TOUCH_TOLERANCE = 1e-3
"""m. Pairs closer than this (separating-axis gap) count as touching in the harness's contact count."""


def kinetic_energy(mass: np.ndarray, inertia: np.ndarray, q: np.ndarray, v: np.ndarray,
                   w: np.ndarray) -> np.ndarray:
    """Per-body kinetic energy ``½ m v² + ½ ωᵀ R I Rᵀ ω`` [J].

    Args:
        mass: (n,) kg; inertia: (n, 3) principal moments in body axes [kg m²].
        q: (n, 4) orientations (w, x, y, z); v: (n, 3) m/s; w: (n, 3) rad/s, world frame.

    Returns:
        (n,) joules.
    """
    w_body = np.einsum("nji,nj->ni", quat_to_matrix(q), w)
    return 0.5 * mass * np.einsum("ni,ni->n", v, v) + 0.5 * np.einsum("ni,ni->n", inertia * w_body, w_body)


def angular_momenta(mass: np.ndarray, inertia: np.ndarray, x: np.ndarray, q: np.ndarray, v: np.ndarray,
                    w: np.ndarray, point: np.ndarray | None = None) -> np.ndarray:
    """Per-body angular momentum about ``point`` (default the origin): ``m (x − p) × v + R I Rᵀ ω``.

    Args: as :func:`kinetic_energy`, plus x (n, 3) m and point (3,) m.

    Returns:
        (n, 3) kg m²/s, world frame.
    """
    rot = quat_to_matrix(q)
    w_body = np.einsum("nji,nj->ni", rot, w)
    spin = np.einsum("nij,nj->ni", rot, inertia * w_body)
    arm = x - (np.zeros(3) if point is None else np.asarray(point, dtype=float))
    return mass[:, None] * np.cross(arm, v) + spin


def bounce_apexes(t: np.ndarray, z: np.ndarray, count: int = 4, min_rise: float = 5e-4) -> list[float]:
    """Heights of the first ``count`` rebound apexes of a falling body's height trace.

    A rebound apex is a local maximum of ``z`` reached after ``z`` has risen by at least ``min_rise`` from
    the preceding minimum (so resting jitter is not a bounce). Each apex is refined by the parabola through
    the sample and its two neighbours (exact for ballistic flight sampled at equal steps).

    Args:
        t: (T,) times [s] (equally spaced); z: (T,) heights [m].
        count: how many apexes to return at most.
        min_rise: m.

    Returns:
        Up to ``count`` apex heights [m], in order.
    """
    del t  # equal spacing is all the refinement needs
    apexes: list[float] = []
    low = z[0]
    rising = False
    for k in range(1, len(z) - 1):
        if z[k] < low:
            low = z[k]
            rising = False
        if z[k] - low >= min_rise:
            rising = True
        if rising and z[k] >= z[k - 1] and z[k] > z[k + 1]:
            a, b, c = z[k - 1], z[k], z[k + 1]
            denom = a - 2 * b + c
            apexes.append(float(b - 0.125 * (c - a) ** 2 / denom) if denom < 0 else float(b))
            low = z[k]
            rising = False
            if len(apexes) == count:
                break
    return apexes


def fit_acceleration(t: np.ndarray, s: np.ndarray) -> float:
    """Least-squares constant acceleration of a displacement trace: fit ``s0 + v0 t + ½ a t²``.

    Args:
        t: (T,) times [s]; s: (T,) displacement along the line of motion [m].

    Returns:
        a [m/s²].
    """
    design = np.stack([np.ones_like(t), t, 0.5 * t * t], axis=1)
    coef, *_ = np.linalg.lstsq(design, s, rcond=None)
    return float(coef[2])


def end_state_figures(scene: Scene, s0: State, s1: State, elapsed: float) -> dict[str, Any]:
    """Accuracy figures of a timed case from its initial and final states.

    Args:
        scene: the case.
        s0: state read back right after the build (the engine's t = 0).
        s1: state after the last step.
        elapsed: simulated time between them [s].

    Returns:
        Figures by name (SI units; the table layout in :mod:`bench.report` names them).
    """
    a = scene.arrays
    m, inertia = a["mass"], a["inertia"]
    out: dict[str, Any] = {"finite": bool(np.all(np.isfinite(s1.x)) and np.all(np.isfinite(s1.v)))}
    if not out["finite"]:
        return out
    sid = scene.scene_id
    if sid == "S1":
        ke0 = kinetic_energy(m, inertia, s0.q, s0.v, s0.w).sum()
        ke1 = kinetic_energy(m, inertia, s1.q, s1.v, s1.w).sum()
        l0 = angular_momenta(m, inertia, s0.x, s0.q, s0.v, s0.w)
        l1 = angular_momenta(m, inertia, s1.x, s1.q, s1.v, s1.w)
        n0, n1 = np.linalg.norm(l0.sum(axis=0)), np.linalg.norm(l1.sum(axis=0))
        body_drift = np.linalg.norm(l1 - l0, axis=1) / np.linalg.norm(l0, axis=1)
        out.update({
            "ke_initial": float(ke0),
            "ke_drift": float((ke1 - ke0) / ke0),
            "ke_drift_per_s": float((ke1 - ke0) / ke0 / elapsed) if elapsed > 0 else math.nan,
            "L_total_drift": float((n1 - n0) / n0),
            "L_body_drift_max": float(body_drift.max()),
        })
    elif sid in ("S2", "S7"):
        contacts = measure_contacts(a["is_box"], a["half_size"], s1.x, s1.q,
                                    scene.ground.height if scene.ground else None, scene.wall_boxes(),
                                    TOUCH_TOLERANCE)
        speed = np.linalg.norm(s1.v, axis=1)
        half = 0.5 * float(scene.params["pen_inner"])
        escaped = (np.abs(s1.x[:, 0]) > half) | (np.abs(s1.x[:, 1]) > half) | (s1.x[:, 2] < 0.0)
        out.update(contacts.as_dict())
        out.update({
            "ke_end": float(kinetic_energy(m, inertia, s1.q, s1.v, s1.w).sum()),
            "max_speed_end": float(speed.max()),
            "settled": bool(speed.max() < SETTLED_SPEED),
            "escaped": int(np.count_nonzero(escaped)),
        })
    elif sid == "S3":
        top = int(np.argmax(s0.x[:, 2]))
        drift = float(np.linalg.norm(s1.x[top, :2] - s0.x[top, :2]))
        height = float(s1.x[top, 2])
        exact = float(scene.params["top_height"])
        out.update({
            "top_drift": drift,
            "top_height": height,
            "top_height_error": height - exact,
            "max_displacement": float(np.linalg.norm(s1.x - s0.x, axis=1).max()),
            "stands": bool(drift < STAND_TOLERANCE and abs(height - exact) < STAND_TOLERANCE),
        })
    elif sid == "S4":
        disp = float(np.linalg.norm(s1.x - s0.x, axis=1).max())
        out.update({"max_displacement": disp, "stands": bool(disp < STAND_TOLERANCE)})
    return out


def trajectory_figures(scene: Scene, t: np.ndarray, x: np.ndarray) -> dict[str, Any]:
    """Figures of a trajectory case (S5, S6) from its recorded positions.

    Args:
        scene: the case (one dynamic body).
        t: (T,) times [s], starting at 0.
        x: (T, 3) positions of the body [m].

    Returns:
        Figures by name.
    """
    out: dict[str, Any] = {"finite": bool(np.all(np.isfinite(x)))}
    if not out["finite"]:
        return out
    if scene.scene_id == "S5":
        e = float(scene.params["restitution"])
        r = float(scene.params["radius"])
        h0 = float(scene.params["drop_height"])
        ground = scene.ground.height if scene.ground else 0.0
        apex = bounce_apexes(t, x[:, 2] - r - ground)
        for k in range(4):
            analytic = h0 * e ** (2 * (k + 1))
            out[f"apex{k + 1}_analytic"] = analytic
            out[f"apex{k + 1}"] = apex[k] if k < len(apex) else math.nan
            out[f"apex{k + 1}_error"] = (apex[k] - analytic) / analytic if k < len(apex) else math.nan
        out["bounces_found"] = len(apex)
        return out
    if scene.scene_id == "S6":
        theta = math.radians(float(scene.params["incline_deg"]))
        mu, g = float(scene.params["friction"]), float(scene.params["g"])
        analytic = max(0.0, g * (math.sin(theta) - mu * math.cos(theta)))
        s = x[:, 0] - x[0, 0]  # +x is down the slope (gravity is tilted, the ground is z = 0)
        fit_from = t >= 0.1  # skip the first 0.1 s while the contact settles
        out.update({
            "accel": fit_acceleration(t[fit_from], s[fit_from]),
            "accel_analytic": analytic,
            "creep": float(abs(s[-1])),
            "lift": float(x[-1, 2] - x[0, 2]),
        })
        out["accel_error"] = (out["accel"] - analytic) / analytic if analytic > 0 else math.nan
        return out
    return out
