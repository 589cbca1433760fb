"""Collision detection: AABBs → sweep and sort → narrowphase → the step's contact buffer.

``CollisionDetector`` keeps what makes detection coherent from one call to the next: the broadphase's
sorted endpoint lists and pair table (Baraff II 7.2.2) and each pair's separating-axis witness
(Baraff II 7.1). Per call it runs a handful of kernels; carrying witnesses over is a vectorized merge on
the sorted pair keys, so no Python loop runs per pair or per contact.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, replace
from functools import partial
from typing import TYPE_CHECKING

import numba
import numpy as np

from ..conventions import PARALLEL_MIN_GEOMS_AABB, PARALLEL_MIN_PAIRS
from ..jit import CallSite, njit
from ..model.fields import ContactPairs, ContactSlots
from ..precompile import Share
from . import gjk
from . import narrowphase as nph
from .aabb import geom_aabbs, geom_aabbs_serial, motion_sweep, swept_aabbs_serial
from .broadphase import SweepAndSort, sap_step
from .contacts import CarriedPairs, ContactBuffer, PairMaterials, PairShapes, set_pairs, slot
from .sat import KIND_CAPSULE, KIND_EDGE_EDGE, KIND_ELLIPSOID, KIND_SPHERE, KIND_VERTEX_FACE

if TYPE_CHECKING:
    from ..model.model import Model
    from ..model.state import State

KIND_NAMES = {KIND_VERTEX_FACE: "vertex-face", KIND_EDGE_EDGE: "edge-edge", KIND_SPHERE: "sphere",
              KIND_CAPSULE: "capsule", KIND_ELLIPSOID: "ellipsoid"}
_KIND_TABLE = np.array([KIND_NAMES[k] for k in sorted(KIND_NAMES)])


@dataclass(frozen=True, eq=False)
class Contacts:
    """The contacts of one state, c of them, as arrays (world frame, SI): the one contact record of tumble,
    what ``World.contacts()`` returns and what the event-driven method works on.

    body_a, body_b (c,) int: body indices; the normal points from B toward A (Baraff II 8). As
    ``World.contacts()`` reports them (``fixed_as_b``), when one of the two is fixed (the ground, a wall) it
    is B; as ``gather`` reads them from a buffer, A and B are the pair's shapes in the buffer's order.
    geom_a, geom_b (c,) int: the shape rows that touch (compound bodies own several).
    point (c, 3) [m]: midway between the two surfaces. normal (c, 3): unit, B → A.
    depth (c,) [m]: penetration along the normal; negative for a gap smaller than the contact margin.
    kind (c,) str: "vertex-face", "edge-edge", "sphere" (a sphere or capsule end against anything),
    "capsule" (capsule segment contacts) or "ellipsoid" (an ellipsoid against anything).
    feature (c,) int64: an id, unique within its pair, that stays the same while the same features touch
    (for warm starting; collision/features.py).
    normal_impulse (c,) [N s]: λn the step applied along the normal (on A; B gets the opposite).
    friction_impulse (c, 3) [N s]: the friction impulse on A, in the tangent plane.
    impulse (c, 3) [N s]: their sum, λn n + friction, on A. force (c, 3) [N]: impulse / dt, the mean contact
    force over the step (zero when the contacts come from a detection, not a step).
    restitution, friction (c,): the pair's combined material (API.md). radius (c, 2) [m]: the rounding
    radius of A's and B's shape (``contacts.rounding_radius``: a sphere's or capsule's, else 0).
    rolling_friction, torsional_friction (c,) [m]: the pair's μ_r and μ_s; compliance (c,) [m/N]: the pair's
    1/k (0: rigid) and dissipation (c,) [s/m] (docs/materials.md).
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
    normal_impulse: np.ndarray
    friction_impulse: np.ndarray
    impulse: np.ndarray
    force: np.ndarray
    restitution: np.ndarray
    friction: np.ndarray
    radius: np.ndarray
    rolling_friction: np.ndarray
    torsional_friction: np.ndarray
    compliance: np.ndarray
    dissipation: np.ndarray

    def __len__(self) -> int:
        return int(self.depth.shape[0])

    def pair_codes(self) -> np.ndarray:
        """(c,) int64 naming each contact's pair of shapes: geom_a · 2³² + geom_b."""
        return (self.geom_a.astype(np.int64) << 32) | self.geom_b

    def contact_codes(self) -> np.ndarray:
        """(c,) records (pair code, feature id) naming each contact while the same features touch."""
        out = np.empty(len(self), dtype=CONTACT_CODE)
        out["pair"], out["feature"] = self.pair_codes(), self.feature
        return out

    def subset(self, keep: np.ndarray) -> Contacts:
        """The contacts where the boolean or index array ``keep`` selects (these same contacts, not a copy,
        when a boolean ``keep`` selects all of them)."""
        if keep.dtype == np.bool_ and keep.all():
            return self
        return Contacts(*(getattr(self, f)[keep] for f in self.__dataclass_fields__))

    def fixed_as_b(self, fixed: np.ndarray) -> Contacts:
        """The same contacts with every one whose A is fixed and B is not turned around (``fixed`` (n,) bool
        per body): A and B swapped, the normal and the impulses and force negated (they then act on the new
        A), so ground contacts point up, into the moving body."""
        swap = fixed[self.body_a] & ~fixed[self.body_b]
        if not np.any(swap):
            return self
        sign = np.where(swap, -1.0, 1.0)[:, None]
        return replace(self, body_a=np.where(swap, self.body_b, self.body_a),
                       body_b=np.where(swap, self.body_a, self.body_b),
                       geom_a=np.where(swap, self.geom_b, self.geom_a), geom_b=np.where(swap, self.geom_a, self.geom_b),
                       normal=sign * self.normal, friction_impulse=sign * self.friction_impulse,
                       impulse=sign * self.impulse, force=sign * self.force,
                       radius=np.where(swap[:, None], self.radius[:, ::-1], self.radius))


CONTACT_CODE = np.dtype([("pair", np.int64), ("feature", np.int64)])
"""A contact's name while the same features touch: (pair code, feature id) (``Contacts.contact_codes``)."""


@njit(cache=True, refcount=False)
def serial_pairs(geom, polytope_vertices, bodies, margins, boxes, sweep_and_sort, excluded, merge, new_pairs,
                 new_slots):
    """A detection's stages before the narrowphase in one call, for a few shapes: the swept AABBs
    (``aabb.swept_aabbs_serial``), the sweep and sort's candidate pairs (``broadphase.sap_step``) and their rows
    (``contacts.set_pairs``). bodies = (x, q, v, w, awake) of the World's bodies; margins = (margin [m], dt [s]);
    boxes = (aabb_lo, aabb_hi, sweep) outputs (g, 3), (g, 3), (g,); sweep_and_sort = ``SweepAndSort.step_args``;
    excluded the sorted body-pair keys to drop; merge = (the shapes ``PairShapes``, the bodies' ``PairMaterials``,
    the last step's ``CarriedPairs`` and its slots (point, normal, depth, kind, feature)); new_pairs
    (``ContactPairs``) and new_slots (the five slot arrays) every row of this step's buffer (``ArrayGroup.whole``).
    Returns (m, the sort's exchanges): ``sap_step``'s m < 0 (a table to grow, a bad box) with no pair rows
    written, or the m candidate pairs, whose rows are written if m is within new_pairs' rows."""
    x, q, v, w, awake = bodies
    margin, dt = margins
    aabb_lo, aabb_hi, sweep = boxes
    lists, table, pair_filter, scratch = sweep_and_sort
    swept_aabbs_serial(geom, polytope_vertices, x, q, v, w, margin, dt, aabb_lo, aabb_hi, sweep)
    m, swaps = sap_step(aabb_lo, aabb_hi, lists, table, pair_filter, scratch, excluded)
    if 0 <= m <= new_pairs.pair_key.shape[0]:
        pair_shapes, materials, old_pairs, old_slots = merge
        set_pairs(scratch[2][:m], aabb_lo.shape[0], pair_shapes, materials, awake, old_pairs, old_slots, new_pairs,
                  new_slots)
    return m, swaps


# The detection stage's kernels, called through call sites (jit.CallSite: no type dispatch per step).
_AABBS, _AABBS_SERIAL = CallSite(geom_aabbs, fixed=True), CallSite(geom_aabbs_serial, fixed=True)
_MOTION_SWEEP = CallSite(motion_sweep, fixed=True)
_SET_PAIRS = CallSite(set_pairs, fixed=True)
_SWEPT_AABBS_SERIAL = CallSite(swept_aabbs_serial, fixed=True)
_SERIAL_PAIRS = CallSite(serial_pairs, fixed=True)


class CollisionDetector:
    """Coherent collision detection for one Model (made anew when its bodies or shapes change)."""

    def __init__(self, model: Model) -> None:
        g = model.geom.count
        # the pair table is scanned whole by each step's collect: sized by the shapes (it grows when they overlap
        # more), not 1024 pairs for a handful of shapes (2048 slots scanned: ~1 µs a step)
        self._broadphase = SweepAndSort(pair_capacity=max(16, 4 * g))
        self._aabb_lo = np.empty((g, 3))
        self._aabb_hi = np.empty((g, 3))
        self._sweep = np.zeros(g)
        poly = model.polytopes
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
        # Contiguous pair ranges of the parallel narrowphase, one table per thread count (no allocation per step).
        self._bounds = {k: np.empty(k + 1, dtype=np.int64) for k in range(1, t + 1)}
        self._bounds_scale = {k: np.arange(k + 1, dtype=np.int64) for k in range(1, t + 1)}
        self._stats = np.zeros(nph.STATS_SIZE, dtype=np.int64)
        self._last: tuple[int, int, float, float, float] | None = None
        """(pairs, broadphase swaps, seconds of the AABB, broadphase and narrowphase stages) of the last detection,
        None before any; its narrowphase counters stay in ``_stats`` (``stats`` reads both)."""
        # Geometry rows and polytope tables change only when bodies are added, which rebuilds the detector:
        # their views and the kernels' argument tuples are bound once here.
        gl = {f.name: model.geom.live(f.name) for f in model.geom.fields}
        tables = model.polytopes.arrays()
        self._gl, self._poly_vertices = gl, tables["vertices"]
        self._geom, self._poly = model.geometry(), model.polytope_tables()
        self._pair_shapes = model.geom.subview(PairShapes)
        inv_mass, collide = model.body.live("inv_mass"), model.body.live("collide")
        self._pair_filter = (gl["geom_body"], inv_mass, collide, gl["geom_group"], gl["geom_mask"])
        self._materials = model.body.subview(PairMaterials)
        self._margin = model.contact_margin
        self._held: dict[int, tuple] = {}
        """Per step buffer: the one-call detection's arguments (``_held_args``)."""
        # only these families' kernels run (and compile)
        self._families = nph.families_present(gl["geom_type"], inv_mass[gl["geom_body"]] > 0.0)
        # No pair can pass the filter unless a moving body that collides has a shape and some other body that
        # collides has one too (collide and fixed are set at creation, which rebuilds the detector): a world
        # of non-colliding jointed links then skips detection instead of sweeping its AABBs every step.
        colliding = collide[gl["geom_body"]]
        bodies = np.unique(gl["geom_body"][colliding])
        self.idle = bodies.shape[0] < 2 or not np.any(inv_mass[bodies] > 0.0)

    @property
    def families(self) -> tuple[int, ...]:
        """The narrowphase families (narrowphase.FAMILY_*) this detector's shapes can form."""
        return self._families

    def update(self, model: Model, state: State, buffer: ContactBuffer, old: ContactBuffer,
               dt: float = 0.0, narrowphase: bool = True) -> None:
        """The detection stage of a step: AABBs → sweep and sort → narrowphase, written into ``buffer``
        (pairs sorted by key, up to MAX_CONTACTS slots each). Witnesses are carried from ``old``, the
        last step's buffer, by a merge on the sorted pair keys. ``dt`` [s] > 0 widens each shape's margin
        by how far it can move in the step (``aabb.motion_sweep``). ``narrowphase`` False stops before the
        narrowphase, leaving the pairs' contacts unset (for compiling the stages apart: precompile.py)."""
        t0 = time.perf_counter()
        if self.idle:
            buffer.resize(0)
            self._stats[:] = 0
            self._last = (0, 0, 0.0, 0.0, 0.0)
            return
        g = self._aabb_lo.shape[0]
        if dt > 0.0 and g < PARALLEL_MIN_GEOMS_AABB and self._broadphase.geom_count == g:
            # a few shapes: boxes, sweep and sort and the pair rows in one call (each call costs ~1 µs around it),
            # with arguments kept from step to step
            head, tail, narrow = self._held_args(model, state, buffer, old)
            m, swaps = _SERIAL_PAIRS(*head, (self._margin, dt), *tail)
            if 0 <= m <= buffer.pairs.capacity:
                self._broadphase.last_swaps = swaps
                buffer.resize(m)   # within the capacity: the rows written stay
                t1 = time.perf_counter()
                if narrowphase and m < PARALLEL_MIN_PAIRS:
                    nph.narrowphase_range(0, m, *narrow)   # (on every row: the kernels read the first m)
                    self._last = (m, swaps, 0.0, t1 - t0, time.perf_counter() - t1)
                    return
                self._narrowphase(state, buffer, m, narrowphase, t0, t0, t1)
                return
            # a table or buffer to grow or a bad box: the same stages one by one (the sort resumes)
        st, gl = state.bodies(), self._gl
        if dt > 0.0 and g < PARALLEL_MIN_GEOMS_AABB:
            _SWEPT_AABBS_SERIAL(self._geom, self._poly_vertices, st.x, st.q, st.v, st.w, self._margin, dt,
                                self._aabb_lo, self._aabb_hi, self._sweep)
        else:
            aabbs = _AABBS if g >= PARALLEL_MIN_GEOMS_AABB else _AABBS_SERIAL
            aabbs(self._geom, self._poly_vertices, st.x, st.q, self._margin, self._aabb_lo, self._aabb_hi)
            if dt > 0.0:
                _MOTION_SWEEP(gl["geom_body"], st.x, st.v, st.w, dt, self._aabb_lo, self._aabb_hi, self._sweep)
            else:
                self._sweep[:] = 0.0
        t1 = time.perf_counter()
        # (the first call sorts from scratch: the broadphase has no rows yet, and a change of rows is a reset)
        pairs = self._broadphase.update_pairs(self._aabb_lo, self._aabb_hi, *self._pair_filter,
                                              model.excluded_pairs())
        m = pairs.shape[0]
        buffer.resize(m)
        _SET_PAIRS(pairs, g, self._pair_shapes, self._materials, st.awake, old.pairs.subview(CarriedPairs),
                   narrowphase_out(old), buffer.pairs.view(), narrowphase_out(buffer))
        self._narrowphase(state, buffer, m, narrowphase, t0, t1, time.perf_counter())

    def _held_args(self, model: Model, state: State, buffer: ContactBuffer, old: ContactBuffer) -> tuple:
        """``serial_pairs``' arguments before and after its (margin, dt), and ``narrowphase_range``'s after its
        (0, m), for a step that writes ``buffer`` from ``old``: built again only when what they view changed (either
        buffer's rows: ``ArrayGroup.generation``; the broadphase's tables: ``SweepAndSort.step_args``; the excluded
        pairs: ``Model.excluded_pairs``), since building them costs more than the kernels' work for a few shapes
        (~2 µs a step). The shapes, the bodies' rows and the scratch stay for the detector's life (it is made anew
        when bodies or shapes change). The narrowphase gets every row of the buffer: its kernels read the first m
        pairs and their slots."""
        sap = self._broadphase.step_args(self._pair_filter)
        excluded = model.excluded_pairs()
        held = self._held.get(id(buffer))
        stamp = (buffer.pairs.generation, buffer.slots.generation, old.pairs.generation, old.slots.generation)
        if held is not None and held[0] is buffer and held[1] is old and held[2] == stamp and held[3] is sap \
                and held[4] is excluded:
            return held[5]
        st = state.bodies()
        whole = buffer.slots.whole(ContactSlots)
        out = (whole.point, whole.normal, whole.depth, whole.kind, whole.feature)
        merge = (self._pair_shapes, self._materials, old.pairs.subview(CarriedPairs), narrowphase_out(old))
        args = ((self._geom, self._poly_vertices, (st.x, st.q, st.v, st.w, st.awake)),
                ((self._aabb_lo, self._aabb_hi, self._sweep), sap, excluded, merge, buffer.pairs.whole(ContactPairs),
                 out),
                (buffer.pairs.whole(nph.NarrowPairs), self._geom, self._poly, (st.x, st.q), (self._margin, self._sweep),
                 self._serial_scratch, out, self._stats, self._families))
        if len(self._held) > 2:   # a step's two buffers are all a detector keeps arguments for
            self._held.clear()
        self._held[id(buffer)] = (buffer, old, stamp, sap, excluded, args)
        return args

    def _narrowphase(self, state: State, buffer: ContactBuffer, m: int, narrowphase: bool, t0: float, t1: float,
                     t2: float) -> None:
        """The narrowphase of the m pairs of ``buffer`` (none if not ``narrowphase``), in parallel for many; t0, t1,
        t2 the ``perf_counter`` at the detection's start, its AABBs' end and its pairs' end (``stats``)."""
        if not narrowphase:
            return
        st = state.bodies()
        out = narrowphase_out(buffer)
        p = buffer.pairs.subview(nph.NarrowPairs)
        geom, poly, poses, margins = self._geom, self._poly, (st.x, st.q), (self._margin, self._sweep)
        # (get_num_threads costs ~20 µs: asked only when the narrowphase may go parallel)
        threads = numba.get_num_threads() if m >= PARALLEL_MIN_PAIRS else 1
        if threads > 1:
            bounds = self._bounds[threads]
            np.multiply(self._bounds_scale[threads], m, out=bounds)
            np.floor_divide(bounds, threads, out=bounds)
            stats = self._thread_stats[:threads]
            nph.narrowphase_parallel(bounds, p, geom, poly, poses, margins, self._scratch, self._epa, out, stats,
                                     self._families)
            np.sum(stats, axis=0, out=self._stats)
        else:
            nph.narrowphase_range(0, m, p, geom, poly, poses, margins, self._serial_scratch, out, self._stats,
                                  self._families)
        # kept as they are: the figures are made only when asked for (``stats``), not in every step
        self._last = (m, self._broadphase.last_swaps, t1 - t0, t2 - t1, time.perf_counter() - t2)

    def compile_shares(self, model: Model, state: State, buffer: ContactBuffer, old: ContactBuffer,
                       dt: float) -> list[Share]:
        """The detection stage's kernels in shares that compile apart (precompile.py): AABBs, sweep and sort and
        the pairs' merge (``update`` with ``dt`` [s], without its narrowphase, into ``buffer`` from ``old``), then
        each narrowphase family the shapes can form. Costs: each share's cold compile seconds alone on an empty
        cache on the 2-core development machine."""
        def detection() -> None:
            for now, last in ((buffer, old), (old, buffer)):   # the broadphase sorts at the first, updates after
                self.update(model, state, now, last, dt, narrowphase=False)

        few = dt > 0.0 and model.geom.count < PARALLEL_MIN_GEOMS_AABB   # the second call goes in one (``update``)
        shares = [Share("detection", 2.5, detection, (set_pairs, serial_pairs) if few else (set_pairs,))]
        for family in self.families:
            shares.append(Share(f"narrowphase: {nph.FAMILY_NAMES[family]}", nph.FAMILY_COMPILE_SECONDS[family],
                                partial(self.compile_family, family, model, state, buffer),
                                (nph.FAMILY_KERNELS[family],)))
        return shares

    def compile_family(self, family: int, model: Model, state: State, buffer: ContactBuffer) -> None:
        """Call the serial kernel of narrowphase ``family`` on no pairs (it compiles, and changes nothing), with
        the arguments ``update`` gives it, and its parallel driver too when the shapes are many enough for
        PARALLEL_MIN_PAIRS pairs (two per shape) (precompile.py)."""
        st = state.bodies()
        p, out = buffer.pairs.subview(nph.NarrowPairs), narrowphase_out(buffer)
        poses, margins = (st.x, st.q), (model.contact_margin, self._sweep)
        nph.narrowphase_range(0, 0, p, self._geom, self._poly, poses, margins, self._serial_scratch, out, self._stats,
                              (family,))
        if 2 * model.geom.count >= PARALLEL_MIN_PAIRS:
            threads = numba.get_num_threads()
            nph.narrowphase_parallel(np.zeros(threads + 1, dtype=np.int64), p, self._geom, self._poly, poses, margins,
                                     self._scratch, self._epa, out, self._thread_stats[:threads], (family,))

    @property
    def stats(self) -> dict[str, float]:
        """Figures of the last detection: candidate pairs, polytope pair tests, tests decided by the cached
        separating axis alone, broadphase swaps, pairs with no narrowphase test (always 0: every pair of
        shapes has one), the wall time [s] of the AABB, broadphase and narrowphase stages (with fewer than
        PARALLEL_MIN_GEOMS_AABB shapes the AABBs are found in the broadphase's call and counted there), and the
        box pairs box_box left to the general test (narrowphase.FAMILY_BOXES)."""
        if self._last is None:
            return {}
        m, swaps, seconds_aabb, seconds_broadphase, seconds_narrowphase = self._last
        counts = self._stats
        return {"pairs": int(m), "polytope_tests": int(counts[nph.POLYTOPE_TESTS]),
                "witness_decided": int(counts[nph.WITNESS_DECIDED]), "broadphase_swaps": int(swaps),
                "unsupported_pairs": int(counts[nph.UNSUPPORTED]), "deferred_box_pairs": int(counts[nph.DEFERRED]),
                "seconds_aabb": float(seconds_aabb), "seconds_broadphase": float(seconds_broadphase),
                "seconds_narrowphase": float(seconds_narrowphase)}


def narrowphase_out(buffer: ContactBuffer) -> tuple[np.ndarray, ...]:
    """(point, normal, depth, kind, feature): the slot arrays of ``buffer`` the narrowphase writes."""
    s = buffer.slots.view()
    return s.point, s.normal, s.depth, s.kind, s.feature


def detect_contacts(model: Model, state: State) -> Contacts:
    """Contacts of the current state, without touching anything kept between steps: a fresh detector and
    fresh buffers, so a caller may probe any state (the event-driven method's root finding does)."""
    buffer = ContactBuffer(1)
    CollisionDetector(model).update(model, state, buffer, ContactBuffer(1))
    return read_contacts(model, buffer, None)


def read_contacts(model: Model, buffer: ContactBuffer, dt: float | None, substeps: int = 1) -> Contacts:
    """The contacts held in ``buffer`` as ``World.contacts()`` reports them: ``gather``, with a fixed body
    always B (``Contacts.fixed_as_b``)."""
    return gather(buffer, dt, substeps).fixed_as_b(model.body.live("inv_mass") == 0.0)


def gather(buffer: ContactBuffer, dt: float | None = None, substeps: int = 1) -> Contacts:
    """The used slots of ``buffer`` as a ``Contacts`` record, in pair order, A and B in the buffer's order
    (one allocation per call; never in a step). ``dt`` [s] is the step the impulses belong to (None: no
    step, forces zero). The buffer holds the impulses of one of the step's ``substeps`` sub-steps (the
    last): the step's impulse is that times ``substeps``."""
    p, s = buffer.pairs.view(), buffer.slots.view()
    pair, rows = used_slots(p.pair_contacts)
    normal = s.normal[rows]
    normal_impulse = s.normal_impulse[rows] * substeps
    friction_impulse = s.friction_impulse[rows] * substeps
    impulse = normal_impulse[:, None] * normal + friction_impulse
    force = impulse / dt if dt else np.zeros_like(impulse)
    return Contacts(body_a=p.pair_body[pair, 0], body_b=p.pair_body[pair, 1], geom_a=p.pair_geom[pair, 0],
                    geom_b=p.pair_geom[pair, 1], point=s.point[rows], normal=normal, depth=s.depth[rows],
                    kind=_KIND_TABLE[s.kind[rows]], feature=s.feature[rows], normal_impulse=normal_impulse,
                    friction_impulse=friction_impulse, impulse=impulse, force=force,
                    restitution=p.pair_restitution[pair], friction=p.pair_friction[pair], radius=p.pair_radius[pair],
                    rolling_friction=p.pair_rolling[pair], torsional_friction=p.pair_torsional[pair],
                    compliance=p.pair_compliance[pair], dissipation=p.pair_dissipation[pair])


@njit(cache=True)
def used_slots(pair_contacts):
    """(pair (c,), slot (c,)): the pair and the slot row of each used slot of a buffer, in pair order."""
    c = 0
    for k in range(pair_contacts.shape[0]):
        c += pair_contacts[k]
    pair, rows = np.empty(c, dtype=np.int64), np.empty(c, dtype=np.int64)
    i = 0
    for k in range(pair_contacts.shape[0]):
        for j in range(pair_contacts[k]):
            pair[i], rows[i] = k, slot(k, j)
            i += 1
    return pair, rows


@njit(cache=True)
def deepest_penetration(pair_contacts, depth):
    """[m] the largest depth among the used slots of a contact buffer (0 when none penetrates): what a
    recording needs each frame, without gathering the contacts into new arrays."""
    deepest = 0.0
    for k in range(pair_contacts.shape[0]):
        for j in range(pair_contacts[k]):
            deepest = max(deepest, depth[slot(k, j)])
    return deepest
