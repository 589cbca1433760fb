"""The step's persistent contact buffer, declared like the body fields (``arrays.Field``).

Two groups of rows:

- **pairs**, one row per candidate pair of shapes from the broadphase, sorted by the pair key
  a · geom_count + b (a < b): the shapes, their bodies, the separating-axis witness carried between steps
  (Baraff II 7.1), the number of contact slots in use and the pair's combined material;
- **slots**, ``MAX_CONTACTS`` rows per pair (slot ``MAX_CONTACTS * k + j`` is contact j of pair k): the
  narrowphase's point, normal, depth, kind and feature id, the impulses the solver found, and the
  constraint rows it built from them.

The World keeps two buffers and swaps them every step: the new step writes one while the other still
holds the last step's pairs, so that the impulses of a contact whose pair and feature id persist carry over
(contact recycling, the warm start of the Gauss–Seidel sweep) in one sorted merge, and nothing is
allocated once both buffers have grown to the scene's size.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..conventions import FLOAT, GeomType
from ..jit import njit
from ..model.fields import ArrayGroup, Field
from .sat import MAX_CONTACTS, WITNESS_NONE

PAIR_FIELDS: tuple[Field, ...] = (
    Field("pair_key", np.int64, (), "-", "-", "broadphase", "a · geom_count + b, ascending", state=True),
    Field("pair_geom", np.int64, (2,), "-", "-", "broadphase", "shape rows (a, b), a < b", state=True),
    Field("pair_body", np.int64, (2,), "-", "-", "broadphase", "their bodies (A, B)", state=True),
    Field("pair_witness", np.int64, (3,), "-", "-", "narrowphase",
          "separating-axis witness carried to the next step (Baraff II 7.1)", state=True),
    Field("pair_contacts", np.int64, (), "-", "-", "narrowphase", "slots in use, 0 … MAX_CONTACTS", state=True),
    Field("pair_friction", FLOAT, (), "-", "-", "broadphase", "μ = √(μa μb) (API.md, Box2D's rule)", state=True),
    Field("pair_restitution", FLOAT, (), "-", "-", "broadphase", "e = max(ea, eb) (API.md)", state=True),
    Field("pair_awake", np.bool_, (), "-", "-", "islands",
          "the pair has an awake moving body: the solver visits it (constraints/islands.py)", state=True),
    Field("pair_radius", FLOAT, (2,), "m", "-", "broadphase",
          "rounding radius of each shape (sphere, capsule; 0 for the others): the part of a contact's arm "
          "that keeps its world direction while the body turns (contact_rows.refresh_rows)", state=True),
    Field("pair_ellipsoid", FLOAT, (2, 7), "m, -", "shape", "broadphase",
          "each shape's semi-axes (a, b, c) and orientation in its body's axes (w, x, y, z) if it is an "
          "ellipsoid, zeros otherwise: its contact point is its support point, re-found as it turns "
          "(contact_rows.contact_from_core)", state=True),
)

SLOT_FIELDS: tuple[Field, ...] = (
    Field("point", FLOAT, (3,), "m", "world", "narrowphase", "midway between the surfaces", state=True),
    Field("normal", FLOAT, (3,), "-", "world", "narrowphase", "unit, from body B toward body A", state=True),
    Field("depth", FLOAT, (), "m", "-", "narrowphase", "penetration; negative for a gap", state=True),
    Field("kind", np.int64, (), "-", "-", "narrowphase", "contact kind code (detect.KIND_NAMES)", state=True),
    Field("feature", np.int64, (), "-", "-", "narrowphase", "feature id, unique within the pair", state=True),
    Field("normal_impulse", FLOAT, (), "N s", "-", "solve", "λn >= 0 applied along the normal this step",
          state=True),
    Field("friction_impulse", FLOAT, (3,), "N s", "world", "solve",
          "friction impulse on A this step (B gets its negative), in the tangent plane", state=True),
    Field("tangent", FLOAT, (2, 3), "-", "world", "rows", "friction directions t1, t2 = n × t1"),
    Field("tangent_impulse", FLOAT, (2,), "N s", "tangent", "solve", "friction impulse in (t1, t2)"),
    Field("ang_a", FLOAT, (3, 3), "m", "world", "rows", "rows r_a × n, r_a × t1, r_a × t2 (Jacobian, ω_a part)"),
    Field("ang_b", FLOAT, (3, 3), "m", "world", "rows", "rows r_b × n, r_b × t1, r_b × t2"),
    Field("inv_ang_a", FLOAT, (3, 3), "1/(kg m)", "world", "rows", "I_a⁻¹ (r_a × d) for d = n, t1, t2"),
    Field("inv_ang_b", FLOAT, (3, 3), "1/(kg m)", "world", "rows", "I_b⁻¹ (r_b × d) for d = n, t1, t2"),
    Field("normal_mass", FLOAT, (), "kg", "-", "rows", "1 / (J M⁻¹ Jᵀ) of the normal row"),
    Field("tangent_k", FLOAT, (3,), "1/kg", "-", "rows",
          "the 2×2 tangential block K_t = J_t M⁻¹ J_tᵀ as (a, b, c) = [[a, b], [b, c]] (notes 0.16)"),
    Field("approach", FLOAT, (), "m/s", "-", "rows",
          "normal relative velocity at the start of the step, before any load acted (v⁻ of (8-10))"),
    Field("normal_accel", FLOAT, (), "m/s²", "-", "rows",
          "normal relative acceleration from gravity and the applied loads over the step"),
    Field("recycled_from", np.int64, (), "-", "-", "rows",
          "slot of the last step's buffer whose impulses warm-started this contact; −1 for a new contact"),
    Field("separation", FLOAT, (), "m", "-", "solve", "current gap estimate: −depth, then moved with the step"),
    Field("pseudo_impulse", FLOAT, (), "N s", "-", "solve", "split-impulse position correction, this step"),
    Field("anchor_a", FLOAT, (3,), "m", "body A", "rows",
          "the contact point p − x_a in A's body axes when the rows were prepared; it moves with A, and the rows "
          "are rebuilt from it after every pose change of the step (contact_rows.refresh_rows)"),
    Field("anchor_b", FLOAT, (3,), "m", "body B", "rows", "the same point p − x_b in B's body axes"),
)


class ContactBuffer:
    """Pair rows and slot rows (``MAX_CONTACTS`` per pair) with ``pair_count`` pairs live."""

    def __init__(self, capacity: int = 64) -> None:
        self.pairs = ArrayGroup(PAIR_FIELDS, capacity)
        self.slots = ArrayGroup(SLOT_FIELDS, MAX_CONTACTS * capacity)
        self._views: dict[str, tuple[np.ndarray, ...]] = {}

    @property
    def pair_count(self) -> int:
        return self.pairs.count

    def resize(self, m: int) -> None:
        """Make ``m`` pairs live, growing by doubling; the rows' old contents are not kept. The argument
        tuples below are rebuilt only when m changes (a step with as many pairs as the last allocates
        nothing)."""
        if m == self.pairs.count:
            return
        for group, rows in ((self.pairs, m), (self.slots, MAX_CONTACTS * m)):
            group.count = 0
            group.reserve(rows)
            group.count = rows
        self._views = {}

    def _cached(self, key: str, names: tuple[str, ...], group: ArrayGroup) -> tuple[np.ndarray, ...]:
        views = self._views.get(key)
        if views is None:
            views = self._views[key] = tuple(group.live(name) for name in names)
        return views

    def pair_arrays(self) -> tuple[np.ndarray, ...]:
        """Live pair arrays in ``PAIR_FIELDS`` order (what the kernels take)."""
        return self._cached("pairs", tuple(f.name for f in PAIR_FIELDS), self.pairs)

    def slot_arrays(self) -> tuple[np.ndarray, ...]:
        """Live slot arrays in ``SLOT_FIELDS`` order."""
        return self._cached("slots", tuple(f.name for f in SLOT_FIELDS), self.slots)

    def narrowphase_out(self) -> tuple[np.ndarray, ...]:
        """(point, normal, depth, kind, feature): the slot arrays the narrowphase writes."""
        return self._cached("narrowphase", ("point", "normal", "depth", "kind", "feature"), self.slots)

    def recycle_arrays(self) -> tuple[np.ndarray, ...]:
        """(pair_key, pair_contacts, feature, point, normal_impulse, friction_impulse): what the next step
        reads of this one to warm-start its contacts (``contact_rows.prepare_rows``)."""
        p, s = self.pairs, self.slots
        views = self._views.get("recycle")
        if views is None:
            views = self._views["recycle"] = (p.live("pair_key"), p.live("pair_contacts"), s.live("feature"),
                                              s.live("point"), s.live("normal_impulse"),
                                              s.live("friction_impulse"))
        return views

    def snapshot(self) -> dict[str, Any]:
        return {"pairs": self.pairs.snapshot(), "slots": self.slots.snapshot()}

    def restore(self, snap: dict[str, Any]) -> None:
        m = len(snap["pairs"]["pair_key"])
        self.resize(m)
        self.pairs.restore(snap["pairs"])
        self.slots.restore(snap["slots"])


_SPHERE, _CAPSULE, _ELLIPSOID = int(GeomType.SPHERE), int(GeomType.CAPSULE), int(GeomType.ELLIPSOID)


@njit(cache=True, forceinline=True, refcount=False)
def rounding_radius(geom_type, size0):
    """The radius r [m] by which a shape is a point or segment grown by a sphere (a sphere, a capsule; its
    first size entry), 0 for the other shapes. A contact on such a surface lies at r along the normal from
    the core, whichever way the body turns: a ball rolls on the point below its centre, not on the
    material point that touched at the start of the step (contact_rows.refresh_rows)."""
    if geom_type == _SPHERE or geom_type == _CAPSULE:
        return size0
    return 0.0


@njit(cache=True)
def set_pairs(pairs, geom_count, geom_body, geom_type, geom_size, geom_quat, body_friction, body_restitution,
              inv_mass, awake, old_key, old_witness, old_contacts, old_slots, pair_key, pair_geom, pair_body,
              pair_witness, pair_contacts, pair_friction, pair_restitution, pair_awake, pair_radius, pair_ellipsoid,
              slots):
    """Fill the pair rows from the broadphase's sorted pairs (m, 2), carrying each pair's witness from the
    last step by a merge on the sorted keys (new pairs get WITNESS_NONE), and combine the materials:
    μ = √(μa μb), e = max(ea, eb) (API.md). ``pair_radius`` takes each shape's rounding radius
    (``rounding_radius``), ``pair_ellipsoid`` an ellipsoid's semi-axes and orientation in its body.

    A pair with no awake moving body (both asleep, or asleep on a fixed body) has not moved since the last
    step: it keeps last step's contacts (old_contacts, and old_slots = (point, normal, depth, kind,
    feature) copied into ``slots``) and ``pair_awake`` False, so the narrowphase skips it. Every other pair
    is awake for the narrowphase; the island pass decides again after it."""
    point, normal, depth, kind, feature = slots
    old_point, old_normal, old_depth, old_kind, old_feature = old_slots
    j = 0
    n_old = old_key.shape[0]
    for k in range(pairs.shape[0]):
        a, b = pairs[k, 0], pairs[k, 1]
        key = a * geom_count + b
        pair_key[k] = key
        pair_geom[k, 0], pair_geom[k, 1] = a, b
        ba, bb = geom_body[a], geom_body[b]
        pair_body[k, 0], pair_body[k, 1] = ba, bb
        pair_contacts[k] = 0
        pair_friction[k] = np.sqrt(body_friction[ba] * body_friction[bb])
        pair_restitution[k] = max(body_restitution[ba], body_restitution[bb])
        pair_radius[k, 0] = rounding_radius(geom_type[a], geom_size[a, 0])
        pair_radius[k, 1] = rounding_radius(geom_type[b], geom_size[b, 0])
        for side in range(2):
            g = a if side == 0 else b
            ellipsoid = geom_type[g] == _ELLIPSOID
            for c in range(3):
                pair_ellipsoid[k, side, c] = geom_size[g, c] if ellipsoid else 0.0
            for c in range(4):
                pair_ellipsoid[k, side, 3 + c] = geom_quat[g, c] if ellipsoid else 0.0
        pair_awake[k] = True
        while j < n_old and old_key[j] < key:
            j += 1
        if j < n_old and old_key[j] == key:
            for c in range(3):
                pair_witness[k, c] = old_witness[j, c]
            if not ((inv_mass[ba] != 0.0 and awake[ba]) or (inv_mass[bb] != 0.0 and awake[bb])):
                pair_awake[k] = False
                pair_contacts[k] = old_contacts[j]
                for r in range(old_contacts[j]):
                    s, so = MAX_CONTACTS * k + r, MAX_CONTACTS * j + r
                    for c in range(3):
                        point[s, c] = old_point[so, c]
                        normal[s, c] = old_normal[so, c]
                    depth[s], kind[s], feature[s] = old_depth[so], old_kind[so], old_feature[so]
        else:
            for c in range(3):
                pair_witness[k, c] = WITNESS_NONE
