"""The step's contact buffers: what detection fills and the solve reads (the Contacts of Model/State/Contacts).

A buffer holds two groups of rows, declared in the field registry (``model.fields.PAIR_FIELDS``,
``SLOT_FIELDS``):

- **pairs**, one row per candidate pair of shapes from the broadphase, sorted by the pair key
  a · geom_count + b (a < b): the shapes, their bodies, the separating-axis witness carried between steps
  (Baraff II 7.1), the number of contact slots in use and the pair's combined material;
- **slots**, ``MAX_CONTACTS`` rows per pair (``slot(k, j)`` is contact j of pair k): the narrowphase's
  point, normal, depth, kind and feature id, the impulses the solver found, and the constraint rows it built
  from them.

``ContactBuffers`` keeps two and swaps them every step: the new step writes one while the other still holds
the last step's pairs, so that the impulses of a contact whose pair and feature id persist carry over
(contact recycling, the warm start of the Gauss–Seidel sweep) in one sorted merge, and nothing is allocated
once both buffers have grown to the scene's size.
"""

from __future__ import annotations

from collections import namedtuple
from typing import Any

import numpy as np

from ..conventions import GeomType
from ..jit import njit
from ..model.fields import (
    MAX_CONTACTS,
    PAIR_FIELDS,
    SLOT_FIELDS,
    WITNESS_NONE,
    ContactPairs,
    ContactSlots,
)
from ..model.storage import ArrayGroup

WarmStart = namedtuple("WarmStart", ["pair_key", "pair_contacts", "feature", "point", "normal_impulse",
                                     "friction_impulse", "pair_angular_impulse"])
"""What a step reads of the last step's buffer to warm-start its contacts (``contact_rows.prepare_rows``):
its sorted pair keys, slots in use, each slot's feature id, point and impulses, and each pair's angular
impulse (torsional and rolling rows)."""


@njit(cache=True, forceinline=True, refcount=False)
def slot(k, j):
    """The slot row of contact j (0 … MAX_CONTACTS − 1) of pair k."""
    return MAX_CONTACTS * k + j


class ContactBuffer:
    """Pair rows and slot rows (``MAX_CONTACTS`` per pair) with ``pair_count`` pairs live."""

    def __init__(self, capacity: int = 64) -> None:
        self.pairs = ArrayGroup(PAIR_FIELDS, capacity, ContactPairs)
        self.slots = ArrayGroup(SLOT_FIELDS, MAX_CONTACTS * capacity, ContactSlots)
        self._warm_start: WarmStart | None = None

    @property
    def pair_count(self) -> int:
        return self.pairs.count

    def resize(self, m: int) -> None:
        """Make ``m`` pairs live, growing by doubling; the rows' old contents are not kept. The containers
        below are rebuilt only when m changes (a step with as many pairs as the last allocates nothing)."""
        if m == self.pairs.count:
            return
        self.pairs.resize(m)
        self.slots.resize(MAX_CONTACTS * m)
        self._warm_start = None

    def warm_start(self) -> WarmStart:
        """This buffer as the next step reads it to warm-start its contacts (``WarmStart``)."""
        if self._warm_start is None:
            p, s = self.pairs, self.slots
            self._warm_start = WarmStart(p.live("pair_key"), p.live("pair_contacts"), s.live("feature"),
                                         s.live("point"), s.live("normal_impulse"), s.live("friction_impulse"),
                                         p.live("pair_angular_impulse"))
        return self._warm_start

    def snapshot(self) -> dict[str, Any]:
        return {"pairs": self.pairs.snapshot(), "slots": self.slots.snapshot()}

    def restore(self, snap: dict[str, Any]) -> None:
        m = len(snap["pairs"]["pair_key"])
        self.resize(m)
        self.pairs.restore(snap["pairs"])
        self.slots.restore(snap["slots"])


class ContactBuffers:
    """This step's contacts (``now``) and the last step's (``last``), with the step the impulses of ``now`` were
    solved in: ``dt`` [s] (None when ``now`` holds a detection, not a step's solve) and ``substeps`` (the
    buffer holds one sub-step's impulses: the step's are ``substeps`` times them)."""

    def __init__(self) -> None:
        self.now = ContactBuffer()
        self.last = ContactBuffer()
        self.dt: float | None = None
        self.substeps = 1

    def swap(self) -> None:
        """Start a step: the buffer of this step becomes the last step's, and the other is written anew."""
        self.now, self.last = self.last, self.now

    def clear(self) -> None:
        """Drop both buffers (the shape rows changed, so the pair keys name other shapes)."""
        self.now, self.last, self.dt = ContactBuffer(), ContactBuffer(), None

    def snapshot(self) -> dict[str, Any]:
        return {"contacts": self.now.snapshot(), "contacts_dt": self.dt, "contacts_substeps": self.substeps}

    def restore(self, snap: dict[str, Any]) -> None:
        self.now.restore(snap["contacts"])
        self.dt = snap["contacts_dt"]
        self.substeps = snap["contacts_substeps"]


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


CarriedPairs = namedtuple("CarriedPairs", ["pair_key", "pair_witness", "pair_contacts"])
"""What ``set_pairs`` reads of the last step's pairs: a call unboxes every array it is given (~5 ns each without
reference counting), so the detection passes these alone (``ArrayGroup.subview``), not all of ``ContactPairs``."""

PairShapes = namedtuple("PairShapes", ["geom_body", "geom_type", "geom_size", "geom_quat"])
"""What ``set_pairs`` reads of the shapes (``Geometry``)."""

PairMaterials = namedtuple("PairMaterials", ["inv_mass", "friction", "restitution", "rolling_friction",
                                             "torsional_friction", "contact_stiffness", "contact_dissipation"])
"""What ``set_pairs`` reads of the bodies (``BodyModel``)."""


@njit(cache=True, forceinline=True, refcount=False)
def set_pairs(pairs, geom_count, geom, body, awake, old_pairs, old_slots, new_pairs, slots):
    """Fill the pair rows ``new_pairs`` (``ContactPairs``, m rows) from the broadphase's sorted pairs (m, 2) of
    shape rows, carrying each pair's witness from the last step's pairs ``old_pairs`` (``CarriedPairs``) by a
    merge on the sorted keys a · geom_count + b (new pairs get WITNESS_NONE), and combine the materials of the
    bodies (``PairMaterials`` ``body``: friction, restitution): μ = √(μa μb), e = max(ea, eb) (API.md); rolling
    and torsional friction like μ; the contact springs in series, 1/k = 1/k_a + 1/k_b (a rigid side has
    k = inf), with d = (k_b d_a + k_a d_b) / (k_a + k_b) = (d_a / k_a + d_b / k_b) / (1/k_a + 1/k_b); a compliant
    pair gets e = 0, its bounce being its damper's (docs/materials.md).
    ``pair_radius`` takes each shape's rounding radius (``rounding_radius``), ``pair_ellipsoid`` an
    ellipsoid's semi-axes [m] and orientation in its body; both read the shapes ``geom`` (``PairShapes``:
    geom_body, geom_type, geom_size, geom_quat). The detector's call sites are fixed to these subviews
    (jit.CallSite).

    A pair with no awake moving body (inv_mass of ``body`` and ``awake`` (n,) bool: both asleep, or asleep on a
    fixed body) has not moved since the last step: it keeps last step's contacts (old_pairs.pair_contacts, and
    old_slots = (point, normal, depth, kind, feature) copied into ``slots``, the same five slot arrays of this
    step) and ``pair_awake`` False, so the narrowphase skips it. Every other pair is awake for the narrowphase;
    the island pass decides again after it."""
    geom_body, geom_type, geom_size, geom_quat = geom.geom_body, geom.geom_type, geom.geom_size, geom.geom_quat
    body_friction, body_restitution, inv_mass = body.friction, body.restitution, body.inv_mass
    body_rolling, body_torsional = body.rolling_friction, body.torsional_friction
    body_stiffness, body_dissipation = body.contact_stiffness, body.contact_dissipation
    old_key, old_witness, old_contacts = old_pairs.pair_key, old_pairs.pair_witness, old_pairs.pair_contacts
    pair_key, pair_geom, pair_body = new_pairs.pair_key, new_pairs.pair_geom, new_pairs.pair_body
    pair_witness, pair_contacts, pair_awake = new_pairs.pair_witness, new_pairs.pair_contacts, new_pairs.pair_awake
    pair_friction, pair_restitution = new_pairs.pair_friction, new_pairs.pair_restitution
    pair_radius, pair_ellipsoid = new_pairs.pair_radius, new_pairs.pair_ellipsoid
    pair_rolling, pair_torsional = new_pairs.pair_rolling, new_pairs.pair_torsional
    pair_compliance, pair_dissipation = new_pairs.pair_compliance, new_pairs.pair_dissipation
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
        # the extras (their defaults cost a comparison: zero, and k = inf)
        ra, rb, sa, sb = body_rolling[ba], body_rolling[bb], body_torsional[ba], body_torsional[bb]
        pair_rolling[k] = np.sqrt(ra * rb) if ra != 0.0 and rb != 0.0 else 0.0
        pair_torsional[k] = np.sqrt(sa * sb) if sa != 0.0 and sb != 0.0 else 0.0
        pair_compliance[k] = 0.0
        pair_dissipation[k] = 0.0
        if body_stiffness[ba] != np.inf or body_stiffness[bb] != np.inf:
            ca, cb = 1.0 / body_stiffness[ba], 1.0 / body_stiffness[bb]   # compliances 1/k [m/N]; 0 for rigid
            pair_compliance[k] = ca + cb
            pair_dissipation[k] = (ca * body_dissipation[ba] + cb * body_dissipation[bb]) / (ca + cb)
            pair_restitution[k] = 0.0
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
                    s, so = slot(k, r), slot(j, r)
                    for c in range(3):
                        point[s, c] = old_point[so, c]
                        normal[s, c] = old_normal[so, c]
                    depth[s], kind[s], feature[s] = old_depth[so], old_kind[so], old_feature[so]
        else:
            for c in range(3):
                pair_witness[k, c] = WITNESS_NONE
