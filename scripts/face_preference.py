"""Face preference: a fixed 1 mm against a tolerance relative to the shapes' size; prints the tables of
docs/collision.md.

The separating-axis test picks a face axis unless an edge pair separates more by the face preference.
Two things a stack cares about pull that tolerance in opposite directions:
1. A box resting slightly tilted on another must get a face manifold (4 points), not a single edge–edge
   contact that lets it rock: edge axes must not win by the small margins that tilt creates.
2. Two boxes genuinely crossing edge on edge must get the edge contact: preferring the face there pushes
   them apart along the wrong axis by up to the tolerance.
Separations are computed here in NumPy from the 15 box axes (independently of tumble's kernels) on seeded
random poses, for cubes of edge L from 1 cm to 10 m.

Run: python scripts/face_preference.py
"""

from __future__ import annotations

import numpy as np
from scipy.spatial.transform import Rotation

ABSOLUTE = 1e-3  # m: the former rule, and the floor of tumble's (sat.FACE_PREFERENCE_MIN)
RELATIVE = 1e-3  # × the smaller bounding radius (sat.FACE_PREFERENCE_REL)
SIZES = (0.01, 0.1, 1.0, 10.0)


def separations(hA, RA, pA, hB, RB, pB):
    """(best face separation, best edge-pair separation) of two boxes (half extents h, rotation R, centre p)."""
    C = RA.T @ RB
    AC = np.abs(C)
    t, tb = RA.T @ (pB - pA), RB.T @ (pB - pA)
    face = max(max(abs(t[i]) - (hA[i] + AC[i] @ hB) for i in range(3)),
               max(abs(tb[j]) - (hB[j] + AC[:, j] @ hA) for j in range(3)))
    edge = -np.inf
    for i in range(3):
        for j in range(3):
            l2 = 1.0 - C[i, j] ** 2
            if l2 <= 1e-12:
                continue
            i1, i2, j1, j2 = (i + 1) % 3, (i + 2) % 3, (j + 1) % 3, (j + 2) % 3
            tl = t[i2] * C[i1, j] - t[i1] * C[i2, j]
            ra = hA[i1] * AC[i2, j] + hA[i2] * AC[i1, j]
            rb = hB[j1] * AC[i, j2] + hB[j2] * AC[i, j1]
            edge = max(edge, (abs(tl) - ra - rb) / np.sqrt(l2))
    return face, edge


def resting(rng, L, tilt, depth=5e-4, samples=400):
    """Edge-minus-face separations of a cube resting tilted on another, its lowest corner ``depth`` deep."""
    h = np.full(3, L / 2)
    out = []
    for _ in range(samples):
        axis = rng.normal(size=2)
        axis = np.r_[axis / np.linalg.norm(axis), 0.0]
        R = (Rotation.from_rotvec(axis * tilt) * Rotation.from_rotvec([0, 0, rng.uniform(0, 2 * np.pi)])).as_matrix()
        below = np.abs(R[2]).sum() * L / 2  # how far the rotated cube reaches below its centre
        pA = np.array([rng.uniform(-0.3, 0.3) * L, rng.uniform(-0.3, 0.3) * L, L / 2 + below - depth])
        face, edge = separations(h, R, pA, h, np.eye(3), np.zeros(3))
        out.append(edge - face)
    return np.array(out)


def crossing(rng, L, overlap, samples=200):
    """Edge-minus-face separations of two cubes whose edges cross, overlapping by ``overlap``."""
    h = np.full(3, L / 2)
    out = []
    for _ in range(samples):
        RA = Rotation.from_euler("zx", [rng.uniform(0, np.pi), np.pi / 4]).as_matrix()
        RB = Rotation.from_euler("zy", [rng.uniform(0, np.pi), np.pi / 4]).as_matrix()
        pA = np.array([0.0, 0.0, (np.abs(RB[2]).sum() + np.abs(RA[2]).sum()) * L / 2 - overlap])
        face, edge = separations(h, RA, pA, h, RB, np.zeros(3))
        out.append(edge - face)
    return np.array(out)


def print_table(title: str, header: str, rows: list[tuple[str, np.ndarray]], failing) -> None:
    """A markdown table: per row, the label, a summary of the separations d, and the share of poses that
    ``failing(d, tolerance)`` counts as failures under each rule."""
    print(title + "\n")
    print(header + " | 1 mm absolute | 1e-3 × bounding radius | the larger (tumble) |")
    print("|---|---|---|---|---|---|")
    for label, L, d in rows:
        rel = RELATIVE * np.sqrt(3) * L / 2  # a cube's bounding radius is √3 L / 2
        shares = [np.mean(failing(d, tol)) for tol in (ABSOLUTE, rel, max(ABSOLUTE, rel))]
        print(label + " | " + " | ".join(f"{x:.0%}" for x in shares) + " |")


def main() -> None:
    rng = np.random.default_rng(1)
    rows = []
    for L in SIZES:
        for tilt in (0.001, 0.01, 0.05):
            d = resting(rng, L, tilt)
            rows.append((f"| {L:g} m | {tilt:g} rad | {d.max():.1e} m", L, d))
    print_table("Resting: a cube tilted by θ (random axis and yaw) on another, its lowest corner 0.5 mm deep.\n"
                "Share of poses where an edge axis wins (one contact instead of a face manifold):",
                "| cube edge L | tilt θ | max(s_edge − s_face)", rows, lambda d, tol: d > tol)
    rows = []
    for L in SIZES:
        for overlap in (1e-4, 1e-3, 1e-2):
            d = crossing(rng, L, overlap)
            rows.append((f"| {L:g} m | {overlap:g} m | {np.median(d):.1e} m", L, d))
    print_table("\nCrossing: two cubes whose edges cross at random angles, overlapping by δ.\n"
                "Share of poses where the face axis is wrongly kept (the pair is pushed apart along a face normal):",
                "| cube edge L | overlap δ | median(s_edge − s_face)", rows, lambda d, tol: d <= tol)


if __name__ == "__main__":
    main()
