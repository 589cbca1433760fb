"""``python -m bench.ik``: tumble's ``Robot.inverse_kinematics`` beside PyBullet's ``calculateInverseKinematics``.

Robot: pybullet_data's KUKA iiwa (``kuka_iiwa/model.urdf``, 7 revolute joints, all limited), fixed base at the
origin; the link ``lbr_iiwa_link_7`` (PyBullet's link index 6), its URDF link frame. Poses: those of
tests/robots/test_ik.py — forward kinematics of 200 random q drawn uniformly within 90 % of each joint's range
about its middle (NumPy ``default_rng(0)``): every pose is reachable within the limits. Each solve starts from
q = 0 and asks for the full pose (position and orientation).

Rows:

- ``tumble``: ``robot.inverse_kinematics(link, position, orientation, q0=zeros)`` with its defaults (1e-6 m,
  1e-5 rad, at most 500 steps, restarts when stalled); one untimed call first (Numba compile or cache load,
  reported apart). ``tumble/vectorized``: the 200 poses in one call (time / 200).
- ``pybullet/default``: ``calculateInverseKinematics(body, 6, position, orientation)`` after
  ``resetJointState`` to 0 (its start), PyBullet's defaults (damped least squares, 20 iterations, residual
  threshold 1e-4); ``pybullet/limits``: the same with ``lowerLimits``, ``upperLimits``, ``jointRanges`` (the
  file's) and ``restPoses`` 0 (its null-space form, the one that heeds limits), ``maxNumIterations`` 1000 and
  ``residualThreshold`` 1e-12; ``pybullet/iterated``: no limits, ``maxNumIterations`` 1000 and
  ``residualThreshold`` 1e-12; ``pybullet/repeated``: PyBullet's examples' "accurate IK" recipe — call again
  from the last answer (``resetJointState`` to it) until its own ``getLinkState`` pose is within 1e-6 m and
  1e-5 rad, at most 50 calls (default options otherwise: its residual threshold of 1e-4 m ends a call from
  a start already that close at once, so this recipe stalls there).

Figures, the same computation for every row: the errors at the returned q by tumble's forward kinematics
(``Link.position``, ``Link.orientation``; tumble's kinematics agree with Pinocchio to 1e-10, tests/robots/
test_pinocchio.py): position error |p − p_target| [m], orientation error the rotation angle between the
quaternions, 4 asin(|o ∓ o_target| / 2) [rad]. Success: position error ≤ 1e-6 m, orientation error ≤ 1e-5 rad
and q within the joint limits. Time: ``time.perf_counter`` around each call (PyBullet's reset to q = 0 and
tumble's argument checks included in their rows); the median over the 200 poses [ms].
"""

from __future__ import annotations

import math
import os
import statistics
import time
from pathlib import Path
from typing import Any

import numpy as np

from bench.run import standalone_header, standalone_report

LINK = "lbr_iiwa_link_7"
N_POSES = 200
TOLERANCE = 1e-6
ANGULAR_TOLERANCE = 1e-5
OUT = Path(__file__).resolve().parent / "IK.md"


def _angle(a: np.ndarray, b: np.ndarray) -> float:
    chord = min(np.linalg.norm(a - b), np.linalg.norm(a + b))
    return 4.0 * math.asin(min(1.0, chord / 2.0))


def _poses(robot: Any) -> tuple[np.ndarray, np.ndarray]:
    lower, upper = robot.position_limits
    mid, half = (lower + upper) / 2, (upper - lower) / 2
    qs = mid + 0.9 * half * np.random.default_rng(0).uniform(-1.0, 1.0, size=(N_POSES, robot.nq))
    positions, orientations = np.empty((N_POSES, 3)), np.empty((N_POSES, 4))
    link = robot.link(LINK)
    for i, q in enumerate(qs):
        robot.q = q
        positions[i], orientations[i] = link.position, link.orientation
    robot.q = np.zeros(robot.nq)
    return positions, orientations


def _figures(robot: Any, qs: np.ndarray, positions: np.ndarray, orientations: np.ndarray,
             times: list[float]) -> dict[str, Any]:
    lower, upper = robot.position_limits
    link = robot.link(LINK)
    pe, oe, inside = [], [], []
    for q, p, o in zip(qs, positions, orientations, strict=True):
        robot.q = q
        pe.append(float(np.linalg.norm(link.position - p)))
        oe.append(_angle(link.orientation, o))
        inside.append(bool(np.all(q >= lower) and np.all(q <= upper)))
    robot.q = np.zeros(robot.nq)
    pe_a, oe_a, in_a = np.array(pe), np.array(oe), np.array(inside)
    ok = (pe_a <= TOLERANCE) & (oe_a <= ANGULAR_TOLERANCE) & in_a
    return {"success": float(ok.mean()), "within_limits": float(in_a.mean()),
            "position_error_median": float(np.median(pe_a)), "position_error_max": float(pe_a.max()),
            "orientation_error_median": float(np.median(oe_a)), "orientation_error_max": float(oe_a.max()),
            "ms_median": 1e3 * statistics.median(times), "ms_max": 1e3 * max(times)}


def measure() -> dict[str, Any]:
    import pybullet_data

    import tumble as tb

    path = os.path.join(pybullet_data.getDataPath(), "kuka_iiwa/model.urdf")
    world = tb.World()
    robot = world.add_urdf(path, fixed_base=True)
    positions, orientations = _poses(robot)
    rows: dict[str, Any] = {}
    zero = np.zeros(robot.nq)

    started = time.perf_counter()
    robot.inverse_kinematics(LINK, positions[0], orientations[0], q0=zero)
    first_s = time.perf_counter() - started
    qs, times, iterations, reported_ok = [], [], [], []
    for p, o in zip(positions, orientations, strict=True):
        t0 = time.perf_counter()
        res = robot.inverse_kinematics(LINK, p, o, q0=zero)
        times.append(time.perf_counter() - t0)
        qs.append(res.q)
        iterations.append(res.iterations)
        reported_ok.append(res.ok)
    rows["tumble"] = _figures(robot, np.array(qs), positions, orientations, times)
    rows["tumble"]["first_call_s"] = first_s
    rows["tumble"]["iterations_median"] = float(np.median(iterations))
    rows["tumble"]["iterations_max"] = int(max(iterations))
    rows["tumble"]["reported_ok"] = float(np.mean(reported_ok))
    t0 = time.perf_counter()
    many = robot.inverse_kinematics(LINK, positions, orientations, q0=zero)
    per = (time.perf_counter() - t0) / N_POSES
    rows["tumble/vectorized"] = _figures(robot, many.q, positions, orientations, [per])

    try:
        import pybullet as p
    except ImportError:
        rows["pybullet"] = {"skipped": "pybullet not installed"}
        return {"rows": rows}
    client = p.connect(p.DIRECT)
    body = p.loadURDF(path, useFixedBase=True, physicsClientId=client)
    lower, upper = robot.position_limits
    options = {"pybullet/default": {},
               "pybullet/limits": {"lowerLimits": lower.tolist(), "upperLimits": upper.tolist(),
                                   "jointRanges": (upper - lower).tolist(), "restPoses": [0.0] * robot.nq,
                                   "maxNumIterations": 1000, "residualThreshold": 1e-12},
               "pybullet/iterated": {"maxNumIterations": 1000, "residualThreshold": 1e-12},
               "pybullet/repeated": {}}
    for label, extra in options.items():
        qs, times = [], []
        for pos, o in zip(positions, orientations, strict=True):
            t0 = time.perf_counter()
            q = [0.0] * robot.nq
            for _ in range(50 if label == "pybullet/repeated" else 1):
                for j in range(robot.nq):
                    p.resetJointState(body, j, q[j], physicsClientId=client)
                if label == "pybullet/repeated" and _ > 0:
                    state = p.getLinkState(body, 6, computeForwardKinematics=True, physicsClientId=client)
                    x, y, z, w = state[5]
                    if (np.linalg.norm(np.array(state[4]) - pos) <= TOLERANCE
                            and _angle(np.array([w, x, y, z]), o) <= ANGULAR_TOLERANCE):
                        break
                q = p.calculateInverseKinematics(body, 6, pos.tolist(), [o[1], o[2], o[3], o[0]],
                                                 physicsClientId=client, **extra)
            times.append(time.perf_counter() - t0)
            qs.append(np.array(q))
        rows[label] = _figures(robot, np.array(qs), positions, orientations, times)
    p.disconnect(client)
    return {"rows": rows}


def render(results: dict[str, Any]) -> str:
    meta, rows = results["meta"], results["rows"]
    lines = standalone_header("Inverse kinematics: tumble beside PyBullet", "bench.ik", meta,
                              "other work on this shared machine")
    lines += [f"pybullet_data's KUKA iiwa, link `{LINK}`: {N_POSES} random reachable poses (forward kinematics of "
              "seeded random q within 90 % of the joint ranges), each solved from q = 0 for position and orientation. "
              f"Success: position error ≤ {TOLERANCE:g} m, orientation error ≤ {ANGULAR_TOLERANCE:g} rad and q within "
              "the limits, all measured the same way for every row (tumble's forward kinematics at the returned q). "
              "How each row is called and measured: the docstring of `bench/ik.py`.", "",
              "| row | success | q within limits | position error median / max [m] | orientation error median / max "
              "[rad] | median ms per pose | max ms |", "|---|---|---|---|---|---|---|"]
    for label, r in rows.items():
        if "skipped" in r:
            lines.append(f"| {label} | skipped: {r['skipped']} | | | | | |")
            continue
        lines.append(f"| {label} | {100 * r['success']:.1f} % | {100 * r['within_limits']:.1f} % | "
                     f"{r['position_error_median']:.2e} / {r['position_error_max']:.2e} | "
                     f"{r['orientation_error_median']:.2e} / {r['orientation_error_max']:.2e} | "
                     f"{r['ms_median']:.3g} | {r['ms_max']:.3g} |")
    t = rows["tumble"]
    lines += ["", f"tumble: steps per pose median {t['iterations_median']:g}, max {t['iterations_max']} (restarts "
              f"included); its own `ok` said {100 * t['reported_ok']:.1f} %; the first call (Numba compile or cache "
              f"load, not in the figures) {t['first_call_s']:.2f} s. `tumble/vectorized`: the {N_POSES} poses in one "
              "call; its time column is the call's time / 200, a mean (no per-pose median). The target for tumble: "
              "≤ 5 ms per pose.", ""]
    return "\n".join(lines)


def main() -> int:
    return standalone_report(OUT, measure, render, ("numpy", "numba", "pybullet"))


if __name__ == "__main__":
    raise SystemExit(main())
