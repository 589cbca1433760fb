"""The World's structure-of-arrays storage, declared once in a field registry.

Each field is declared with its dtype, trailing shape, units, frame and the stage that writes it
(after MuJoCo's ``mjmodel.h``/``mjdata.h``). Allocation, growth by doubling, snapshot and restore are
generated from the registry. Kernels receive the bare arrays, sliced to the live count.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..conventions import FLOAT


@dataclass(frozen=True)
class Field:
    name: str
    dtype: type
    shape: tuple[int, ...]
    units: str
    frame: str
    writer: str
    doc: str
    state: bool = False
    """True for fields that change as time advances: the ones a snapshot saves."""


# Body parameters change only through the API; body state changes every step (Baraff I 2.11).
BODY_FIELDS: tuple[Field, ...] = (
    Field("mass", FLOAT, (), "kg", "-", "add_body", "mass M; a fixed body keeps its shape's mass for reference"),
    Field("inv_mass", FLOAT, (), "1/kg", "-", "add_body", "1/M, zero for fixed bodies (Baraff II 8)"),
    Field("inertia_body", FLOAT, (3, 3), "kg m²", "body", "add_body", "Ibody about the COM (Baraff I 2.10)"),
    Field("inv_inertia_body", FLOAT, (3, 3), "1/(kg m²)", "body", "add_body",
          "Ibody⁻¹, zero for fixed bodies"),
    Field("principal_q", FLOAT, (4,), "-", "principal → body", "add_body",
          "rotation Rp of the principal axes into body axes: Ibody = Rp diag(principal_moments) Rpᵀ; "
          "axes ordered by ascending moment"),
    Field("principal_moments", FLOAT, (3,), "kg m²", "principal", "add_body", "eigenvalues of Ibody, ascending"),
    Field("inv_principal_moments", FLOAT, (3,), "1/(kg m²)", "principal", "add_body",
          "1 / principal_moments, zero for fixed bodies"),
    Field("x", FLOAT, (3,), "m", "world", "integrate", "COM position x(t)", state=True),
    Field("q", FLOAT, (4,), "-", "body → world", "integrate", "orientation q(t), (w, x, y, z)", state=True),
    Field("v", FLOAT, (3,), "m/s", "world", "integrate", "COM velocity v(t) = P/M", state=True),
    Field("w", FLOAT, (3,), "rad/s", "world", "integrate", "angular velocity ω(t) = I⁻¹ L", state=True),
    Field("force", FLOAT, (3,), "N", "world", "apply_force / force callbacks; zeroed by integrate",
          "external force F(t) accumulated for the next step, gravity excluded", state=True),
    Field("torque", FLOAT, (3,), "N m", "world", "apply_force / apply_torque; zeroed by integrate",
          "external torque τ(t) about the COM accumulated for the next step", state=True),
    Field("friction", FLOAT, (), "-", "-", "add_body", "Coulomb friction coefficient μ"),
    Field("restitution", FLOAT, (), "-", "-", "add_body", "coefficient of restitution e ∈ [0, 1]"),
    Field("collide", np.bool_, (), "-", "-", "add_body", "False: the body takes part in no contact"),
    Field("extent", FLOAT, (), "m", "-", "add_body",
          "radius about the COM of a sphere holding every shape of the body (for the sleep test)"),
    Field("awake", np.bool_, (), "-", "-", "islands / the API",
          "False while the body sleeps: the step skips it (constraints/islands.py)", state=True),
    Field("sleep_timer", FLOAT, (), "s", "-", "islands", "how long the body has been quiet", state=True),
    Field("inv_inertia_world", FLOAT, (3, 3), "1/(kg m²)", "world", "velocity stage",
          "I⁻¹ = R Ibody⁻¹ Rᵀ at the start of the step (Baraff I (2-39)), for the contact rows"),
    Field("v_pseudo", FLOAT, (3,), "m/s", "world", "contact solve",
          "split-impulse pseudo-velocity: moves the body in the position stage, then dropped"),
    Field("w_pseudo", FLOAT, (3,), "rad/s", "world", "contact solve", "split-impulse pseudo angular velocity"),
)

DERIVED_BODY_FIELDS = ("inv_inertia_world", "v_pseudo", "w_pseudo")
"""Body fields that the step writes as scratch: add_body fills them with zeros."""

# Geometry: one row per shape; a compound body owns several rows. Local pose is in the body frame.
GEOM_FIELDS: tuple[Field, ...] = (
    Field("geom_type", np.int32, (), "-", "-", "add_body", "GeomType code"),
    Field("geom_body", np.int32, (), "-", "-", "add_body", "index of the owning body"),
    Field("geom_maker", np.int32, (), "-", "-", "add_body",
          "index of the body the shape was made with: geom_body until ``World.attach`` hands the shape to a "
          "master, and again after ``World.detach``"),
    Field("geom_pos", FLOAT, (3,), "m", "body", "add_body", "shape origin (its COM) in the body frame"),
    Field("geom_quat", FLOAT, (4,), "-", "shape → body", "add_body", "shape orientation in the body frame"),
    Field("geom_made_pos", FLOAT, (3,), "m", "maker", "add_body",
          "geom_pos as made, in the maker's frame at creation: attachments move a body's frame and hand its "
          "shapes over, and this is where ``save_scene`` finds the frame the body was made in"),
    Field("geom_made_quat", FLOAT, (4,), "-", "shape → maker", "add_body", "geom_quat as made"),
    Field("geom_size", FLOAT, (3,), "m", "shape", "add_body",
          "sphere (r,0,0); box half extents; capsule (r, half length, 0); cylinder (r, half height, 0); "
          "ellipsoid semi-axes; hull bounding half extents"),
    Field("geom_vert_start", np.int64, (), "-", "-", "add_body",
          "first row of the shape's polytope in the polytope table (box, hull, cylinder prism), −1 otherwise"),
    Field("geom_vert_count", np.int64, (), "-", "-", "add_body", "number of polytope vertices"),
    Field("geom_face_start", np.int64, (), "-", "-", "add_body", "first polytope face row, −1 if none"),
    Field("geom_face_count", np.int64, (), "-", "-", "add_body", "number of polytope faces"),
    Field("geom_edge_start", np.int64, (), "-", "-", "add_body", "first polytope edge row, −1 if none"),
    Field("geom_edge_count", np.int64, (), "-", "-", "add_body", "number of polytope edges"),
    Field("geom_group", np.uint32, (), "-", "-", "add_body", "collision group bits (default 1)"),
    Field("geom_mask", np.uint32, (), "-", "-", "add_body",
          "collision mask bits: a pair collides iff group_a & mask_b and group_b & mask_a (default all)"),
)


class ArrayGroup:
    """Arrays for one kind of entity, sized to a capacity that doubles as rows are added.

    Attributes are the full-capacity arrays named as in the registry; ``count`` rows are live.
    Use ``live(name)`` for the view a kernel should see.
    """

    def __init__(self, fields: tuple[Field, ...], capacity: int = 16) -> None:
        self.fields = fields
        self.count = 0
        self.capacity = max(1, capacity)
        for f in fields:
            setattr(self, f.name, np.zeros((self.capacity, *f.shape), dtype=f.dtype))

    def live(self, name: str) -> np.ndarray:
        """The ``count`` live rows of field ``name`` (a view)."""
        return getattr(self, name)[: self.count]

    def reserve(self, extra: int) -> None:
        """Make room for ``extra`` more rows, doubling the capacity as often as needed."""
        needed = self.count + extra
        if needed <= self.capacity:
            return
        capacity = self.capacity
        while capacity < needed:
            capacity *= 2
        for f in self.fields:
            old = getattr(self, f.name)
            new = np.zeros((capacity, *f.shape), dtype=f.dtype)
            new[: self.count] = old[: self.count]
            setattr(self, f.name, new)
        self.capacity = capacity

    def append(self, rows: dict[str, np.ndarray]) -> int:
        """Append rows given as {field: (k, *shape) array}; every field must be given. Returns the
        first new index. Callers validate first: this only copies."""
        k = len(next(iter(rows.values())))
        self.reserve(k)
        start = self.count
        for f in self.fields:
            getattr(self, f.name)[start:start + k] = rows[f.name]
        self.count += k
        return start

    def keep(self, mask: np.ndarray) -> None:
        """Keep the live rows where ``mask`` (count,) is True, moved up in order; the others are dropped."""
        kept = int(np.count_nonzero(mask))
        for f in self.fields:
            arr = getattr(self, f.name)
            arr[:kept] = arr[: self.count][mask]
            arr[kept: self.count] = 0
        self.count = kept

    def snapshot(self) -> dict[str, np.ndarray]:
        """Copies of the live rows of every state field (MuJoCo's mj_getState)."""
        return {f.name: self.live(f.name).copy() for f in self.fields if f.state}

    def restore(self, snap: dict[str, np.ndarray]) -> None:
        """Write back a ``snapshot`` taken with the same number of rows (mj_setState)."""
        for name, value in snap.items():
            if value.shape[0] != self.count:
                raise ValueError(f"snapshot has {value.shape[0]} rows for {name}, the world has {self.count}")
        for name, value in snap.items():
            self.live(name)[...] = value
