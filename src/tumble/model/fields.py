"""Every array tumble keeps, declared once: the field registry (after MuJoCo's ``mjmodel.h``/``mjdata.h``).

Each field has its dtype, trailing shape, units, frame and the stage that writes it. The registry makes
the storage (``storage.ArrayGroup``: allocation, growth by doubling, snapshot and restore) and the typed
containers the stages and kernels take whole: one ``namedtuple`` class per group, whose entries are the
group's live arrays in registry order (Numba types a namedtuple by its class and entries, so a kernel reads
``state.x`` as it would a bare array).

Groups, by lifetime (DESIGN.md "Containers by lifetime"):

- Model (changes only through the API): ``BODY_MODEL_FIELDS`` → ``BodyModel``, ``GEOM_FIELDS`` →
  ``Geometry``, the packed polytope tables → ``Polytopes``;
- State (what a step advances): ``BODY_STATE_FIELDS`` → ``BodyState``;
- Contacts (this step's, and the last step's for the warm start): ``PAIR_FIELDS`` → ``ContactPairs``,
  ``SLOT_FIELDS`` → ``ContactSlots`` (``MAX_CONTACTS`` slots per pair: slot ``slot(k, j)`` is contact j of
  pair k);
- the joints: ``JOINT_FIELDS`` → ``JointData`` (definitions, and the impulses they carry between steps), with
  the solvers' scratch ``JointScratch``, ``JointBlock``, ``JointStructure`` and ``JointOde``.
"""

from __future__ import annotations

from collections import namedtuple
from dataclasses import dataclass

import numpy as np

from ..conventions import FLOAT

MAX_CONTACTS = 4
"""Contact slots per pair: a face manifold is reduced to at most 4 points (Baraff II 7.1)."""

WITNESS_NONE = -1
"""``pair_witness[k, 0]`` of a pair with no cached separating axis yet."""


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


def container(name: str, fields: tuple[Field, ...], doc: str) -> type:
    """The namedtuple class ``name`` with one entry per field of ``fields``, in order. Its module is this one,
    where it must be bound to ``name``: Numba's cache refers to it by module and name."""
    cls = namedtuple(name, [f.name for f in fields])
    cls.__module__ = __name__
    cls.__doc__ = doc + "\n\n" + "\n".join(
        f"{f.name} ({', '.join(['n', *map(str, f.shape)])}) [{f.units}] {f.frame}: {f.doc}" for f in fields)
    return cls


# ---------------------------------------------------------------------------------------------------- bodies
# Body parameters change only through the API; body state changes every step (Baraff I 2.11).
BODY_MODEL_FIELDS: tuple[Field, ...] = (
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
    Field("friction", FLOAT, (), "-", "-", "add_body", "Coulomb friction coefficient μ"),
    Field("restitution", FLOAT, (), "-", "-", "add_body", "coefficient of restitution e ∈ [0, 1]"),
    Field("rolling_friction", FLOAT, (), "m", "-", "add_body",
          "rolling resistance μ_r: the rolling torque of a contact is bounded by μ_r f_n (docs/materials.md)"),
    Field("torsional_friction", FLOAT, (), "m", "-", "add_body",
          "torsional friction μ_s: the torque about the contact normal is bounded by μ_s f_n"),
    Field("contact_stiffness", FLOAT, (), "N/m", "-", "add_body",
          "Hunt–Crossley stiffness k per contact point; inf for a rigid body (the default)"),
    Field("contact_dissipation", FLOAT, (), "s/m", "-", "add_body",
          "Hunt–Crossley dissipation d: f_n = k x (1 + d ẋ) per contact point"),
    Field("collide", np.bool_, (), "-", "-", "add_body", "False: the body takes part in no contact"),
    Field("kinematic", np.bool_, (), "-", "-", "add_body",
          "True: the body moves with the v and ω set on it, exactly; zero inverse mass and inertia, so no load or "
          "contact changes it (integration/integrate.py ``kinematic_move``)"),
    Field("extent", FLOAT, (), "m", "-", "add_body",
          "radius about the COM of a sphere holding every shape of the body (for the sleep test)"),
)

BODY_STATE_FIELDS: tuple[Field, ...] = (
    Field("x", FLOAT, (3,), "m", "world", "integrate", "COM position x(t)", state=True),
    Field("q", FLOAT, (4,), "-", "body → world", "integrate", "orientation q(t), (w, x, y, z)", state=True),
    Field("v", FLOAT, (3,), "m/s", "world", "integrate", "COM velocity v(t) = P/M", state=True),
    Field("w", FLOAT, (3,), "rad/s", "world", "integrate", "angular velocity ω(t) = I⁻¹ L", state=True),
    Field("force", FLOAT, (3,), "N", "world", "apply_force / force callbacks; zeroed by integrate",
          "external force F(t) accumulated for the next step, gravity excluded", state=True),
    Field("torque", FLOAT, (3,), "N m", "world", "apply_force / apply_torque; zeroed by integrate",
          "external torque τ(t) about the COM accumulated for the next step", state=True),
    Field("awake", np.bool_, (), "-", "-", "islands / the API",
          "False while the body sleeps: the step skips it (constraints/islands.py)", state=True),
    Field("sleep_timer", FLOAT, (), "s", "-", "islands", "how long the body has been quiet", state=True),
    Field("inv_inertia_world", FLOAT, (3, 3), "1/(kg m²)", "world", "velocity stage",
          "I⁻¹ = R Ibody⁻¹ Rᵀ at the start of the step (Baraff I (2-39)), for the contact rows"),
    Field("v_pseudo", FLOAT, (3,), "m/s", "world", "contact solve",
          "split-impulse pseudo-velocity: moves the body in the position stage, then dropped"),
    Field("w_pseudo", FLOAT, (3,), "rad/s", "world", "contact solve", "split-impulse pseudo angular velocity"),
    Field("x_before", FLOAT, (3,), "m", "world", "the step's first stage",
          "x at the start of the step, put back if the step leaves a non-finite state (integration/guard.py)"),
    Field("q_before", FLOAT, (4,), "-", "body → world", "the step's first stage", "q at the start of the step"),
    Field("v_before", FLOAT, (3,), "m/s", "world", "the step's first stage", "v at the start of the step"),
    Field("w_before", FLOAT, (3,), "rad/s", "world", "the step's first stage", "ω at the start of the step"),
    Field("non_finite", np.bool_, (), "-", "-", "the fused free-step kernels",
          "True where the body's step left a non-finite entry (integrate._count)"),
)

SCRATCH_BODY_FIELDS = tuple(f.name for f in BODY_STATE_FIELDS if not f.state)
"""Body state fields that the step writes as scratch (not saved by a snapshot): add_body fills them with zeros."""

BodyModel = container("BodyModel", BODY_MODEL_FIELDS, "The bodies' parameters (Model), n rows.")
BodyState = container("BodyState", BODY_STATE_FIELDS, "The bodies' state and the step's per-body scratch (State).")


# -------------------------------------------------------------------------------------------------- geometry
# One row per shape; a compound body owns several rows. Local pose is in the body frame.
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

Geometry = container("Geometry", GEOM_FIELDS, "The shapes (Model), g rows.")

POLYTOPE_FIELDS: tuple[Field, ...] = (
    Field("vertices", FLOAT, (3,), "m", "shape", "add_body", "polytope vertices, all polytopes stacked"),
    Field("face_normal", FLOAT, (3,), "-", "shape", "add_body", "unit outward face normals"),
    Field("face_offset", FLOAT, (), "m", "shape", "add_body", "n · p for p on the face"),
    Field("face_vstart", np.int64, (), "-", "-", "add_body", "row of the face's first entry in face_verts"),
    Field("face_vcount", np.int64, (), "-", "-", "add_body", "number of the face's vertices"),
    Field("face_verts", np.int64, (), "-", "-", "add_body",
          "vertex indices local to the polytope, each face counter-clockwise seen from outside"),
    Field("edges", np.int64, (2,), "-", "-", "add_body", "local vertex pairs, each undirected edge once"),
    Field("edge_faces", np.int64, (2,), "-", "-", "add_body", "the two local faces that meet at each edge"),
)
"""The packed polytope tables (``collision.polytope.PolytopeTable``): rows are vertices, faces, face entries
and edges of every stored polytope, addressed through the geometry rows' ``geom_*_start``/``count``."""

Polytopes = container("Polytopes", POLYTOPE_FIELDS, "The packed polytope tables (Model).")


# -------------------------------------------------------------------------------------------------- contacts
PAIR_FIELDS: tuple[Field, ...] = (
    Field("pair_key", np.int64, (), "-", "-", "broadphase", "a · geom_count + b, ascending", state=True),
    Field("pair_geom", np.int64, (2,), "-", "-", "broadphase", "shape rows (a, b), a < b", state=True),
    Field("pair_body", np.int64, (2,), "-", "-", "broadphase", "their bodies (A, B)", state=True),
    Field("pair_witness", np.int64, (3,), "-", "-", "narrowphase",
          "separating-axis witness carried to the next step (Baraff II 7.1)", state=True),
    Field("pair_contacts", np.int64, (), "-", "-", "narrowphase", "slots in use, 0 … MAX_CONTACTS",
          state=True),
    Field("pair_friction", FLOAT, (), "-", "-", "broadphase", "μ = √(μa μb) (API.md, Box2D's rule)", state=True),
    Field("pair_restitution", FLOAT, (), "-", "-", "broadphase",
          "e = max(ea, eb) (API.md); 0 for a compliant pair (its bounce is its damper's)", state=True),
    Field("pair_rolling", FLOAT, (), "m", "-", "broadphase", "rolling resistance μ_r = √(μ_ra μ_rb)", state=True),
    Field("pair_torsional", FLOAT, (), "m", "-", "broadphase", "torsional friction μ_s = √(μ_sa μ_sb)",
          state=True),
    Field("pair_compliance", FLOAT, (), "m/N", "-", "broadphase",
          "1/k = 1/k_a + 1/k_b: the springs of the two sides in series; 0 for a rigid pair", state=True),
    Field("pair_dissipation", FLOAT, (), "s/m", "-", "broadphase",
          "d = (k_b d_a + k_a d_b) / (k_a + k_b), the compliant side's d against a rigid one", state=True),
    Field("pair_angular_impulse", FLOAT, (3,), "N m s", "world", "solve",
          "angular impulse of the torsional and rolling rows on A (B gets its negative), one sub-step's, for "
          "the next step's warm start; 0 for a pair without the rows", state=True),
    Field("pair_angular", FLOAT, (3,), "N m s", "rows", "solve",
          "accumulated impulses of the torsional row (along n) and the rolling rows (along t1, t2) of slot 0"),
    Field("pair_inv_rot_a", FLOAT, (3, 3), "1/(kg m²)", "world", "rows", "I_a⁻¹ d for d = n, t1, t2 of slot 0"),
    Field("pair_inv_rot_b", FLOAT, (3, 3), "1/(kg m²)", "world", "rows", "I_b⁻¹ d for d = n, t1, t2"),
    Field("pair_rot_k", FLOAT, (4,), "1/(kg m²)", "-", "rows",
          "the angular rows' block K = Dᵀ (I_a⁻¹ + I_b⁻¹) D, D = (n, t1, t2): (K_nn, K_11, K_12, K_22)"),
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

ContactPairs = container("ContactPairs", PAIR_FIELDS, "One step's candidate pairs (Contacts), m rows.")
ContactSlots = container("ContactSlots", SLOT_FIELDS, "One step's contact slots (Contacts), MAX_CONTACTS m rows.")


# ---------------------------------------------------------------------------------------------------- joints
JOINT_FIELDS: tuple[Field, ...] = (
    Field("kind", np.int64, (), "-", "-", "add_joint", "BALL, HINGE, SLIDER or FIXED (constraints/joint_rows.py)"),
    Field("body", np.int64, (2,), "-", "-", "add_joint", "the two bodies (a, b), −1 for the world"),
    Field("frame_a", FLOAT, (7,), "m, -", "body a", "add_joint",
          "the joint's anchor (3) and frame orientation (4) in a's axes"),
    Field("frame_b", FLOAT, (7,), "m, -", "body b", "add_joint", "the same in b's axes (the world's for −1)"),
    Field("limit", FLOAT, (6,), "rad or m", "-", "the API",
          "(lo, hi) of the hinge angle or slider position, or three (lo, hi) of a ball joint's roll, pitch, yaw"),
    Field("flags", np.int64, (), "-", "-", "the API / breaking", "HAS_LIMIT | HAS_MOTOR | BROKEN bits"),
    Field("soft", FLOAT, (2,), "m/N, N s/m", "-", "the API", "compliance and damping; (0, 0) for a rigid joint"),
    Field("motor", FLOAT, (2,), "m/s or rad/s, N or N m", "-", "the API", "target speed and largest force"),
    Field("impulse", FLOAT, (8,), "N s", "rows", "solve", "each row slot's impulse, the next step's warm start",
          state=True),
    Field("wrench", FLOAT, (6,), "N s, N m s", "world", "solve",
          "the last step's impulse on body a: force part, then torque about the anchor", state=True),
)

JointData = container("JointData", JOINT_FIELDS, "The joints (Model; impulse and wrench change every step), m rows.")

JointScratch = namedtuple("JointScratch", [
    "lin", "ang_a", "ang_b", "inv_ang_a", "inv_ang_b", "error", "coordinate", "sigma", "bias", "active", "factor",
    "rhs", "predict_x", "predict_q", "predict_w", "predict_lin", "predict_error", "predict_coordinate"])
JointScratch.__module__ = __name__
JointScratch.__doc__ = """The joint solve's scratch (model/joint_set.py allocates it once): the rows at the sub-step's
pose, lin, ang_a, ang_b and their I⁻¹ arms inv_ang_a, inv_ang_b (m, 8, 3) (constraints/joint_rows.py), error (m, 8) C
[m or rad], coordinate (m,), sigma (m,) the soft rows' Σ, bias (m, 8) [m/s], active (m, 8) the rows in the
block; factor (packed envelope of K) and rhs (rows,); SHAKE's predicted pose predict_x (n, 3), predict_q (n, 4),
predict_w (n, 3) and rows predict_lin (m, 8, 3), predict_error (m, 8), predict_coordinate (m,)."""

JointBlock = namedtuple("JointBlock", ["sigma", "bias", "error", "motor", "impulse", "lin", "ang_a", "ang_b",
                                       "inv_ang_a", "inv_ang_b", "active", "factor", "rhs"])
JointBlock.__module__ = __name__
JointBlock.__doc__ = """What one iteration of the joints' block reads and writes (solvers/joint_solve.py): the rows'
Σ (m,) and bias (m, 8), the limit rows' C (error (m, 8)), the motors (m, 2), the accumulated impulses (m, 8), the
rows (m, 8, 3) and I⁻¹ arms, the rows in the block (m, 8), the factor and the right-hand side. The time-stepping
solve takes them from the joints and their scratch; the ODE integrators' acceleration-level solve gives
accelerations for velocities and forces for impulses (solvers/joint_accel.py)."""

JointStructure = namedtuple("JointStructure", ["order", "row0", "start", "ptr", "adj_ptr", "adj_joint", "adj_side",
                                               "count", "slots"])
JointStructure.__module__ = __name__
JointStructure.__doc__ = """The sparsity structure of the joints' K (solvers/joint_solve.joint_structure)."""

JointOde = namedtuple("JointOde", ["factor", "rhs", "rate", "x", "q", "v", "w", "inv_inertia_world", "acc", "ang_acc",
                                   "force", "torque", "awake", "impulse", "bias", "limit_gap", "motor_hold", "lam"])
JointOde.__module__ = __name__
JointOde.__doc__ = """The ODE integrators' joint scratch (solvers/joint_accel.py): the direct factor and rhs, J̇ u
(rate (m, 8)), a state x, q, v, w the derivative is evaluated at and its inverse inertias, the free accelerations
acc, ang_acc (n, 3), the constraint loads force, torque (n, 3), awake (n,) all True, the kick's impulse and the
solve's bias (m, 8), the limits held at their bounds (limit_gap (m, 8)) and motors at their speed (motor_hold
(m, 2)) for the step, and the multipliers lam (m, 8)."""
