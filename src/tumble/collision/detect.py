"""Collision detection for a World: AABBs → sweep and sort → narrowphase → the contact set.

``CollisionDetector`` keeps what makes detection coherent from one call to the next: the broadphase's
sorted endpoint lists and pair table (Baraff II 7.2.2) and each pair's separating-axis witness
(Baraff II 7.1). Per call it runs a handful of kernels; carrying witnesses over is a vectorized merge on
the sorted pair keys, so no Python loop runs per pair or per contact.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numba
import numpy as np

from ..conventions import PARALLEL_MIN_GEOMS_AABB, PARALLEL_MIN_PAIRS
from . import gjk
from . import narrowphase as nph
from .aabb import geom_aabbs, geom_aabbs_serial
from .broadphase import SweepAndSort
from .ellipsoid import KIND_ELLIPSOID
from .sat import KIND_CAPSULE, KIND_EDGE_EDGE, KIND_SPHERE, KIND_VERTEX_FACE, MAX_CONTACTS

if TYPE_CHECKING:
    from ..world import World

KIND_NAMES = {KIND_VERTEX_FACE: "vertex-face", KIND_EDGE_EDGE: "edge-edge", KIND_SPHERE: "sphere",
              KIND_CAPSULE: "capsule", KIND_ELLIPSOID: "ellipsoid"}
_KIND_TABLE = np.array([KIND_NAMES[k] for k in sorted(KIND_NAMES)])


@dataclass(frozen=True, eq=False)
class Contacts:
    """The contacts of one state, c of them, as arrays (world frame, SI).

    body_a, body_b (c,) int: body indices; the normal points from B toward A (Baraff II 8). When one of
    the two is fixed (the ground, a wall) it is B.
    geom_a, geom_b (c,) int: the shape rows that touch (compound bodies own several).
    point (c, 3) [m]: midway between the two surfaces. normal (c, 3): unit, B → A.
    depth (c,) [m]: penetration along the normal; negative for a gap smaller than the contact margin.
    kind (c,) str: "vertex-face", "edge-edge", "sphere" (a sphere or capsule end against anything),
    "capsule" (capsule segment contacts) or "ellipsoid" (an ellipsoid against anything).
    feature (c,) int64: an id, unique within its pair, that stays the same while the same features touch
    (for warm starting).
    """

    body_a: np.ndarray
    body_b: np.ndarray
    geom_a: np.ndarray
    geom_b: np.ndarray
    point: np.ndarray
    normal: np.ndarray
    depth: np.ndarray
    kind: np.ndarray
    feature: np.ndarray

    def __len__(self) -> int:
        return int(self.depth.shape[0])


class CollisionDetector:
    """Coherent collision detection for one World (rebuilt when bodies are added)."""

    def __init__(self, world: World) -> None:
        self._broadphase = SweepAndSort()
        g = world._geom.count
        self._aabb_lo = np.empty((g, 3))
        self._aabb_hi = np.empty((g, 3))
        poly = world._polytopes
        nv = max(poly.max_vertices, 1)
        nf = max(poly.max_faces, 1)
        # A convex polygon clipped by r planes gains at most r vertices (+1: the deepest vertex); the vertices
        # of a polytope-against-plane pass too. Every thread of the parallel narrowphase has its own scratch.
        nclip = max(2 * poly.max_face_vertices + 5, nv, 13)
        t = numba.config.NUMBA_NUM_THREADS
        self._scratch = (np.empty((t, 2, nv, 3)), np.empty((t, 2, nf, 3)), np.empty((t, 2, nf)),
                         np.empty((t, 2, nclip, 3)), np.empty((t, 2, nclip), dtype=np.int64),
                         np.empty((t, 2, nclip), dtype=np.int64), np.empty((t, nclip)),
                         np.empty((t, nclip), dtype=np.int64), np.empty((t, 6, 3, 3)))
        self._epa = tuple(np.stack([a] * t) for a in gjk.epa_workspace())
        self._serial_scratch = tuple(a[0] for a in self._scratch) + (tuple(a[0] for a in self._epa),)
        self._thread_stats = np.zeros((t, nph.STATS_SIZE), dtype=np.int64)
        self._slots = (np.empty((0, 3)), np.empty((0, 3)), np.empty(0), np.empty(0, dtype=np.int64),
                       np.empty(0, dtype=np.int64))
        self._per_pair = np.empty(0, dtype=np.int64)
        self._keys = np.zeros(0, dtype=np.int64)      # pair keys a * g + b of the last call, sorted
        self._witness = np.zeros((0, 3), dtype=np.int64)
        self._stats = np.zeros(nph.STATS_SIZE, dtype=np.int64)
        self._first = True
        self.stats: dict[str, float] = {}
        # Geometry rows and polytope tables change only when bodies are added, which rebuilds the detector:
        # their views and the kernels' argument tuples are bound once here.
        gl = {f.name: world._geom.live(f.name) for f in world._geom.fields}
        tables = world._polytopes.arrays()
        self._gl, self._poly_vertices = gl, tables["vertices"]
        self._geom_rows = (gl["geom_type"], gl["geom_body"], gl["geom_pos"], gl["geom_quat"], gl["geom_size"],
                           gl["geom_vert_start"], gl["geom_vert_count"], gl["geom_face_start"],
                           gl["geom_face_count"], gl["geom_edge_start"], gl["geom_edge_count"])
        self._tables = (tables["vertices"], tables["face_normal"], tables["face_offset"], tables["face_vstart"],
                        tables["face_vcount"], tables["face_verts"], tables["edges"], tables["edge_faces"])
        self._body_of = gl["geom_body"].astype(np.int64)

    def detect(self, world: World) -> Contacts:
        """Contacts of the world's current state."""
        t0 = time.perf_counter()
        body, gl = world._live(), self._gl
        g = gl["geom_type"].shape[0]
        aabbs = geom_aabbs if g >= PARALLEL_MIN_GEOMS_AABB else geom_aabbs_serial
        aabbs(gl["geom_type"], gl["geom_body"], gl["geom_pos"], gl["geom_quat"], gl["geom_size"],
              gl["geom_vert_start"], gl["geom_vert_count"], self._poly_vertices, body["x"], body["q"],
              world._contact_margin, self._aabb_lo, self._aabb_hi)
        t1 = time.perf_counter()
        if self._first:
            self._broadphase.reset(self._aabb_lo, self._aabb_hi)
            self._first = False
        else:
            self._broadphase.update(self._aabb_lo, self._aabb_hi)
        pairs = self._broadphase.pairs(gl["geom_body"], body["inv_mass"], body["collide"], gl["geom_group"],
                                       gl["geom_mask"]).copy()
        m = pairs.shape[0]
        t2 = time.perf_counter()

        keys = pairs[:, 0] * g + pairs[:, 1]  # sorted, as the broadphase returns pairs sorted
        witness = np.empty((m, 3), dtype=np.int64)
        nph.carry_witnesses(self._keys, self._witness, keys, witness)

        if self._per_pair.shape[0] < m:  # the slot buffers grow by doubling and are kept
            cap = max(2 * self._per_pair.shape[0], m, 64)
            self._per_pair = np.empty(cap, dtype=np.int64)
            slots = MAX_CONTACTS * cap
            self._slots = (np.empty((slots, 3)), np.empty((slots, 3)), np.empty(slots),
                           np.empty(slots, dtype=np.int64), np.empty(slots, dtype=np.int64))
        per_pair = self._per_pair[:m]
        geom_rows, tables = self._geom_rows, self._tables
        threads = numba.get_num_threads()
        if m >= PARALLEL_MIN_PAIRS and threads > 1:
            bounds = np.linspace(0, m, threads + 1).astype(np.int64)
            stats = self._thread_stats[:threads]
            nph.narrowphase_parallel(bounds, pairs, geom_rows, tables, body["x"], body["q"], world._contact_margin,
                                     witness, self._scratch, self._epa, per_pair, self._slots, stats)
            self._stats[:] = stats.sum(axis=0)
        else:
            nph.narrowphase_range(0, m, pairs, geom_rows, tables, body["x"], body["q"], world._contact_margin,
                                  witness, self._serial_scratch, per_pair, self._slots, self._stats)
        self._keys, self._witness = keys, witness
        t3 = time.perf_counter()
        self.stats = {"pairs": m, "polytope_tests": int(self._stats[nph.POLYTOPE_TESTS]),
                      "witness_decided": int(self._stats[nph.WITNESS_DECIDED]),
                      "broadphase_swaps": int(self._broadphase.last_swaps),
                      "unsupported_pairs": int(self._stats[nph.UNSUPPORTED]),
                      "seconds_aabb": t1 - t0, "seconds_broadphase": t2 - t1, "seconds_narrowphase": t3 - t2}

        fixed = body["inv_mass"][gl["geom_body"]] == 0.0
        geom_a, geom_b, point, normal, depth, kind, feature = nph.gather_contacts(
            pairs, per_pair, self._slots, fixed)
        body_of = self._body_of
        return Contacts(body_a=body_of[geom_a], body_b=body_of[geom_b], geom_a=geom_a, geom_b=geom_b,
                        point=point, normal=normal, depth=depth, kind=_KIND_TABLE[kind], feature=feature)
