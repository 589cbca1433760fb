"""Reference rotations written independently of tumble (Rodrigues' formula and the elementary rotations),
shared by the unit tests as the closed forms to compare against, and the hypothesis strategies for
unit quaternions, vectors and axes that those tests draw from."""

import numpy as np
from hypothesis import strategies as st

unit = st.floats(-1.0, 1.0, allow_nan=False, allow_infinity=False)
quats = (st.tuples(unit, unit, unit, unit).map(lambda t: np.array(t, dtype=float))
         .filter(lambda q: np.linalg.norm(q) > 0.1).map(lambda q: q / np.linalg.norm(q)))
coord = st.floats(-10.0, 10.0, allow_nan=False, allow_infinity=False)
vecs = st.tuples(coord, coord, coord).map(lambda t: np.array(t, dtype=float))
axes = vecs.filter(lambda a: np.linalg.norm(a) > 0.1)


def rodrigues(axis: np.ndarray, angle: float) -> np.ndarray:
    """R = 1 + sin θ K + (1 − cos θ) K², K the star matrix of the unit axis."""
    u = np.asarray(axis, dtype=float) / np.linalg.norm(axis)
    K = np.array([[0.0, -u[2], u[1]], [u[2], 0.0, -u[0]], [-u[1], u[0], 0.0]])
    return np.eye(3) + np.sin(angle) * K + (1.0 - np.cos(angle)) * K @ K


def Rx(a: float) -> np.ndarray:
    c, s = np.cos(a), np.sin(a)
    return np.array([[1.0, 0.0, 0.0], [0.0, c, -s], [0.0, s, c]])


def Ry(a: float) -> np.ndarray:
    c, s = np.cos(a), np.sin(a)
    return np.array([[c, 0.0, s], [0.0, 1.0, 0.0], [-s, 0.0, c]])


def Rz(a: float) -> np.ndarray:
    c, s = np.cos(a), np.sin(a)
    return np.array([[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]])
