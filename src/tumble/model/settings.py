"""The contact solver's settings: validated once, packed into the small arrays the step kernel reads.

Each setting's meaning, unit and default, and the measurements behind the defaults, are in
docs/contact.md.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import Any

import numpy as np

from .. import _checks
from ..solvers import joint_solve as js
from ..solvers import sequential_impulse as si
from ..solvers import velocity_solve as vs

CORRECTION_SPLIT, CORRECTION_SOFT = 0, 1
"""Codes of ``correction``: the split impulse and the soft step (methods/timestepping.py)."""

# The packed float settings the step's kernels read (``ContactSettings.arrays[0]``) ...
S_HERTZ, S_DAMPING, S_MAX_PUSH, S_BAUMGARTE, S_SLOP, S_RESTITUTION_THRESHOLD, S_MATCH_DISTANCE = range(7)
SETTINGS_SIZE = 7
# ... and the packed int settings (``ContactSettings.arrays[1]``)
(I_RELAX_ITERATIONS, I_CORRECTION, I_FRICTION, I_SUBSTEPS, I_FRICTION_DIRECTIONS, I_JOINT_SOLVER,
 I_JOINT_PROJECTION) = range(7)
ISETTINGS_SIZE = 7

FRICTION_MODELS = {"cone": si.FRICTION_CONE, "pyramid": si.FRICTION_PYRAMID, "box": si.FRICTION_BOX,
                   "none": si.FRICTION_NONE}
"""Friction models of the time-stepping solver (solvers/sequential_impulse.py, docs/solvers.md): the circular
Coulomb cone by projection in the Gauss–Seidel sweep (ArtiSynth notes 0.16); the Anitescu–Stewart polyhedral
cone of ``friction_directions`` directions with maximal dissipation (notes 0.10); box friction, each tangent
row bounded by ±μ times the normal impulse's estimate (notes 0.10); or none."""

SOLVERS = {"pgs": vs.PGS, "apgd": vs.APGD, "cg": vs.CG, "lemke": vs.Lemke}
"""Solvers of the time-stepping method's velocity solve (solvers/velocity_solve.py, docs/solvers.md): projected
Gauss–Seidel / sequential impulses (the default), accelerated projected gradient, projected conjugate
gradients (frictionless only) and Lemke's pivoting (frictionless or the pyramid)."""

DEFAULT_ITERATIONS = {"pgs": 4, "apgd": 30, "cg": 30, "lemke": None}
"""``iterations`` when not given: Gauss–Seidel sweeps, APGD or CG iterations per sub-step; for Lemke None
means a pivot cap of max(100, 50 n) for n unknowns."""

LCP_FRICTION = ("none", "pyramid")
"""The friction models with an LCP form (notes 0.10), the ones Lemke's method can solve."""

CORRECTIONS = {"split": CORRECTION_SPLIT, "soft": CORRECTION_SOFT}
"""How penetration is removed without injecting energy (methods/timestepping.py, docs/contact.md)."""


def _count(name: str, value: Any, minimum: int) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise TypeError(f"{name} must be an integer, got {value!r}")
    if value < minimum:
        raise ValueError(f"{name} must be an integer >= {minimum}, got {value!r}")
    return int(value)


@dataclass(frozen=True)
class ContactSettings:
    """Settings of the time-stepping contact solver (all SI).

    Attributes:
        friction: "cone" (Coulomb's circular cone, default), "pyramid" (Anitescu–Stewart, k directions),
            "box" (each tangent row within ±μ λ_n) or "none".
        friction_directions: k, the pyramid's directions in the tangent plane (>= 3; "pyramid" only): the
            polygon inscribed in the cone's disc resists sliding by at least μ λ_n cos(π/k).
        solver: the velocity solve of each sub-step, on the same rows and warm start (docs/solvers.md):
            "pgs" (projected Gauss–Seidel / sequential impulses, default), "apgd" (accelerated projected
            gradient, matrix-free), "cg" (projected conjugate gradients on the normal rows; needs
            friction="none") or "lemke" (Lemke's pivoting on the dense LCP of the awake contacts; needs
            friction="none" or "pyramid", and refuses a step whose LCP has more than
            ``tumble.solvers.MAX_LEMKE_SIZE`` unknowns).
        iterations: the most iterations per sub-step: Gauss–Seidel sweeps (default 4), APGD or CG
            iterations (default 30), Lemke's pivots (default None: max(100, 50 n)); see ``tolerance``.
        substeps: sub-steps per step: velocity stage, sweeps and position stage repeat with h / substeps on
            the rows built at the start of the step and brought to each sub-step's pose (docs/contact.md,
            momentum) (Box2D v3's soft step); impulses are per sub-step.
        relax_iterations: sweeps of each pass after the velocity solve: the split-impulse position
            correction or the soft step's relax (run by the chosen solver: for "lemke" any count >= 1 is
            one exact solve), and the restitution pass.
        tolerance: [m/s] the solve of a sub-step stops early under this residual: for "pgs" once no normal
            row changes a relative velocity by more than this in a sweep; for "apgd" and "cg" once the
            natural-map residual in velocity units (solvers/rows.py) is below it. Lemke only reports it.
        restitution_threshold: [m/s] contacts closing slower than this before the solve get no bounce
            (Baraff II (8-10) applies above it), so resting contact stays at rest.
        correction: "split" (split impulse: pseudo-velocities, dropped after the position stage) or
            "soft" (regularized rows with a relax pass, ArtiSynth notes 0.11).
        contact_hertz: [Hz] stiffness of the soft rows as a natural frequency ("soft" only).
        contact_damping_ratio: damping ratio ζ of the soft rows ("soft" only).
        max_push_velocity: [m/s] the fastest a soft row pushes bodies apart ("soft" only).
        baumgarte: fraction of a penetration the split-impulse correction removes per step ("split" only).
        slop: [m] penetration left alone by the correction, so touching contacts stay touching.
        match_distance: [m] a contact whose feature id is new takes the warm start of the nearest unclaimed
            contact of the same pair from the last step within this distance.
        sleep: let resting islands fall asleep (constraints/islands.py); False keeps every body awake, and
            the physics of awake bodies is the same either way. The ODE integrators (euler, rk4,
            adaptive) never put bodies to sleep.
        sleep_time: [s] how long every body of an island must have been quiet before it sleeps.
        sleep_speed: [m/s] a body is quiet while |v| + ρ |ω| stays below this (ρ: the radius of its
            bounding sphere about the COM, so the bound holds for every point of the body).
        joint_solver: how the joints' equality rows are solved in each iteration (solvers/joint_solve.py,
            docs/joints.md): "direct" (all at once by a sparse envelope Cholesky of K = J M⁻¹ Jᵀ, exact
            for any chain length and mass ratio; default) or "pgs" (block Gauss–Seidel, joint by joint).
        joint_projection: Newton steps of the joints' position projection after each position stage
            (ArtiSynth notes 0.5); 0 turns it off (then rigid joints drift).
    """

    friction: str = "cone"
    friction_directions: int = 8
    solver: str = "pgs"
    iterations: int | None = None
    substeps: int = 4
    relax_iterations: int = 4
    tolerance: float = 1e-6
    restitution_threshold: float = 0.25
    correction: str = "split"
    contact_hertz: float = 30.0
    contact_damping_ratio: float = 10.0
    max_push_velocity: float = 3.0
    baumgarte: float = 0.2
    slop: float = 1e-4
    match_distance: float = 0.005
    sleep: bool = True
    sleep_time: float = 0.5
    sleep_speed: float = 0.01
    joint_solver: str = "direct"
    joint_projection: int = 2
    solver_settings: tuple = field(init=False, repr=False, compare=False)
    arrays: tuple[np.ndarray, np.ndarray] = field(init=False, repr=False, compare=False)
    kick_arrays: tuple[np.ndarray, np.ndarray] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        _checks.choice("friction", self.friction, FRICTION_MODELS)
        _checks.choice("solver", self.solver, SOLVERS)
        _checks.choice("correction", self.correction, CORRECTIONS)
        _checks.choice("joint_solver", self.joint_solver, js.SOLVER_NAMES)
        _count("joint_projection", self.joint_projection, 0)
        if self.solver == "cg" and self.friction != "none":
            raise ValueError(f"solver='cg' solves frictionless contact only (seed 004's QP), got friction="
                             f"{self.friction!r}: use friction='none', or another solver")
        if self.solver == "lemke" and self.friction not in LCP_FRICTION:
            raise ValueError(f"solver='lemke' needs a friction model with an LCP form, got friction="
                             f"{self.friction!r}: use friction='pyramid' (Anitescu–Stewart) or 'none'")
        if self.iterations is None:
            object.__setattr__(self, "iterations", DEFAULT_ITERATIONS[self.solver])
        if self.iterations is not None:
            _count("iterations", self.iterations, 1)
        _count("friction_directions", self.friction_directions, 3)
        _count("relax_iterations", self.relax_iterations, 0)
        _count("substeps", self.substeps, 1)
        for name in ("tolerance", "restitution_threshold", "contact_damping_ratio", "max_push_velocity", "slop",
                     "match_distance"):
            _checks.non_negative(name, getattr(self, name))
        _checks.positive("contact_hertz", self.contact_hertz)
        if not isinstance(self.sleep, (bool, np.bool_)):
            raise TypeError(f"sleep must be True or False, got {self.sleep!r}")
        _checks.positive("sleep_time", self.sleep_time)
        _checks.positive("sleep_speed", self.sleep_speed)
        beta = _checks.real("baumgarte", self.baumgarte)
        if not 0.0 <= beta <= 1.0:
            raise ValueError(f"baumgarte must be in [0, 1], got {self.baumgarte!r}")
        settings = np.zeros(SETTINGS_SIZE)
        settings[S_HERTZ] = self.contact_hertz
        settings[S_DAMPING] = self.contact_damping_ratio
        settings[S_MAX_PUSH] = self.max_push_velocity
        settings[S_BAUMGARTE] = beta
        settings[S_SLOP] = self.slop
        settings[S_RESTITUTION_THRESHOLD] = self.restitution_threshold
        settings[S_MATCH_DISTANCE] = self.match_distance
        isettings = np.zeros(ISETTINGS_SIZE, dtype=np.int64)
        isettings[I_RELAX_ITERATIONS] = self.relax_iterations
        isettings[I_CORRECTION] = CORRECTIONS[self.correction]
        isettings[I_FRICTION] = FRICTION_MODELS[self.friction]
        isettings[I_SUBSTEPS] = self.substeps
        isettings[I_FRICTION_DIRECTIONS] = self.friction_directions
        isettings[I_JOINT_SOLVER] = js.SOLVER_NAMES[self.joint_solver]
        isettings[I_JOINT_PROJECTION] = self.joint_projection
        object.__setattr__(self, "arrays", (settings, isettings))
        iterations = 0 if self.iterations is None else int(self.iterations)
        object.__setattr__(self, "solver_settings", SOLVERS[self.solver](iterations, float(self.tolerance)))
        # The ODE integrators' contact kick solves the whole step at once (step._contact_kick).
        kick = isettings.copy()
        kick[I_SUBSTEPS] = 1
        object.__setattr__(self, "kick_arrays", (settings, kick))

    def as_dict(self) -> dict[str, Any]:
        """The settings by name."""
        return {f.name: getattr(self, f.name) for f in fields(self) if f.init}
