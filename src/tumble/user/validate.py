"""``tumble validate``: small scenes whose answers are known in closed form, as a pass/fail table.

Each check simulates a scene with the engine's defaults (the splitting integrator, the time-stepping contact
solver), computes the exact value from a closed form or a conservation law, and compares the two within a
tolerance stated and justified beside the check: rounding where the method is exact, the method's truncation
error where it is not, the solver's own stopping tolerance where that sets the limit. Nothing here is a stored
result: every value is simulated when the check runs and every expected value is computed from its formula.

Sources (``../shared/seeds/``, index in its README): Baraff I (000) and II (002), the ArtiSynth notes (001),
the dynamics lecture (003, Modern Robotics ch. 8 notation).

Usage::

    from tumble.user.validate import run_checks, format_table
    print(format_table(run_checks(progress=None)))
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass

import numpy as np
from scipy.special import ellipk

from ..body import Body
from ..joints import HingeJoint
from ..rotations import quat_to_matrix
from ..shapes import Box, Capsule, Cylinder, Sphere
from ..world import World

EPS = float(np.finfo(float).eps)
"""Unit roundoff of float64 (2.2e-16): the scale of the rounding tolerances below."""


@dataclass(frozen=True)
class Check:
    """One row of the validation table.

    name: the check's registry name (``CHECKS``). quantity: what is compared, with its unit, and whether the
    error is absolute ("abs.") or relative ("rel."). value: the simulated value. expected: the exact value from
    the closed form. error: |value − expected| (relative: divided by |expected|). tolerance: the largest error
    that passes, same kind as ``error``. passed: error <= tolerance (a NaN error fails) and the scene did what
    the check presumes (e.g. the Dzhanibekov box did flip). reference: the equation or closed form compared
    against, with its source. seconds: wall time of the check [s] (scene set-up, simulation and comparison).
    """

    name: str
    quantity: str
    value: float
    expected: float
    error: float
    tolerance: float
    passed: bool
    reference: str
    seconds: float


def compare(name: str, quantity: str, value: float, expected: float, tolerance: float, reference: str, *,
            relative: bool, scale: float | None = None, miss: float | None = None, seconds: float = 0.0,
            precondition: bool = True) -> Check:
    """Build the ``Check`` of ``value`` against ``expected``.

    Args:
        name, quantity, reference: as in ``Check``.
        value: the simulated value (any unit; the same as ``expected``).
        expected: the exact value from the closed form.
        tolerance: largest error that passes: dimensionless if the error is relative, else in value's unit.
        relative: divide the difference by |expected| (a relative error).
        scale: divide the difference by this instead (e.g. the largest entry of a tensor).
        miss: the difference to use instead of |value − expected| (e.g. the norm of a vector difference
            when value and expected show one component).
        seconds: [s] wall time to record.
        precondition: False fails the check whatever the error (the scene did not do what the check presumes).
    """
    value, expected, tolerance = float(value), float(expected), float(tolerance)
    error = abs(value - expected) if miss is None else float(miss)
    if relative:
        scale = abs(expected)
    if scale is not None:
        error = error / scale if scale != 0.0 else math.inf
    passed = bool(precondition and error <= tolerance)  # NaN compares False: a NaN result fails
    return Check(name, quantity, value, expected, error, tolerance, passed, reference, float(seconds))


# ---------------------------------------------------------------------------------------------------------
# Closed forms. Each is a plain function of the scene's parameters, so a test can perturb one and watch the
# check that uses it fail.
# ---------------------------------------------------------------------------------------------------------


def projectile_position(x0: np.ndarray, v0: np.ndarray, g: np.ndarray, t: float) -> np.ndarray:
    """x0 + v0 t + ½ g t² [m]: constant acceleration g [m/s²] from x0 [m], v0 [m/s] after t [s]."""
    return x0 + v0 * t + 0.5 * g * t * t


def projectile_velocity(v0: np.ndarray, g: np.ndarray, t: float) -> np.ndarray:
    """v0 + g t [m/s] (Baraff I (2-43): Ṗ = F = M g)."""
    return v0 + g * t


def box_inertia(mass: float, lx: float, ly: float, lz: float) -> np.ndarray:
    """(3, 3) [kg m²] of a box of FULL sides lx, ly, lz [m] about its centre: Baraff I (5-3)."""
    return mass / 12.0 * np.diag([ly * ly + lz * lz, lx * lx + lz * lz, lx * lx + ly * ly])


def cylinder_inertia(mass: float, r: float, h: float) -> np.ndarray:
    """(3, 3) [kg m²] of a solid cylinder (radius r, height h [m], axis z) about its centre (lecture 003)."""
    side = mass * (3.0 * r * r + h * h) / 12.0
    return np.diag([side, side, 0.5 * mass * r * r])


def capsule_inertia(density: float, r: float, length: float) -> np.ndarray:
    """(3, 3) [kg m²] of a capsule (radius r, cylinder length ``length`` [m], axis z; density [kg/m³]).

    Built differently from ``tumble.mass``: the cylinder (lecture 003) plus two hemispheres, each about its
    own centroid (83/320 m_h r² transversely, 2/5 m_h r² axially) moved by Steiner's theorem (lecture 003)
    to the capsule's centre, d = length/2 + 3r/8 away.
    """
    m_cyl = density * math.pi * r * r * length
    m_hemi = density * 2.0 / 3.0 * math.pi * r**3
    d = 0.5 * length + 3.0 * r / 8.0
    hemi = m_hemi * (83.0 / 320.0 * r * r + d * d)
    inertia = cylinder_inertia(m_cyl, r, length)
    return inertia + np.diag([2.0 * hemi, 2.0 * hemi, 2.0 * 0.4 * m_hemi * r * r])


def symmetric_top_rate(i1: float, i3: float, w3: float) -> float:
    """Ω = (I3 − I1) / I1 · ω3 [rad/s]: the rate at which ω turns about the symmetry axis in the body frame
    of a torque-free body with I1 = I2 (Euler's equations, lecture 003: 0 = I ω̇ + ω × I ω, give
    (ω1 + i ω2)˙ = i Ω (ω1 + i ω2), ω3 constant; Landau & Lifshitz, Mechanics §33)."""
    return (i3 - i1) / i1 * w3


def coulomb_slide_acceleration(g: float, theta: float, mu: float) -> float:
    """g (sin θ − μ cos θ) [m/s²]: a block sliding down a slope of θ [rad] with Coulomb friction μ (the
    normal force is m g cos θ; sliding friction μ times that, opposing the motion; ArtiSynth notes 0.16)."""
    return g * (math.sin(theta) - mu * math.cos(theta))


# ---------------------------------------------------------------------------------------------------------
# The registry.
# ---------------------------------------------------------------------------------------------------------

CheckFunction = Callable[[str, bool], Check]
CHECKS: dict[str, CheckFunction] = {}
"""The checks in the order they run: name → function(name, quick) returning its ``Check``."""


def _register(name: str) -> Callable[[CheckFunction], CheckFunction]:
    def add(fn: CheckFunction) -> CheckFunction:
        CHECKS[name] = fn
        return fn
    return add


def _steps(world: World, dt: float, seconds: float) -> int:
    n = round(seconds / dt)
    for _ in range(n):
        world.step(dt)
    return n


# ---------------------------------------------------------------- free fall
FREE_FALL_X0 = np.array([0.5, -1.0, 10.0])  # m (tests/physics/test_free_motion.py's projectile)
FREE_FALL_V0 = np.array([3.0, 1.0, 4.0])    # m/s
FREE_FALL_DT = 1e-3                          # s
FREE_FALL_T = 1.0                            # s (1000 steps: cheap, so quick runs it whole)


def _free_fall() -> tuple[World, np.ndarray, np.ndarray, float]:
    """A box thrown in the default gravity, stepped for FREE_FALL_T: (world, x [m], v [m/s], t [s])."""
    world = World()
    body = world.add_body(Box(0.1, 0.2, 0.3), position=FREE_FALL_X0, velocity=FREE_FALL_V0)
    n = _steps(world, FREE_FALL_DT, FREE_FALL_T)
    return world, body.position, body.velocity, n * FREE_FALL_DT


@_register("free-fall-position")
def check_free_fall_position(name: str, quick: bool) -> Check:
    """Position [m] of a thrown box after 1 s against the parabola x0 + v0 t + ½ g t² (the row shows the
    height z; the error is |x − x_exact| over all three axes)."""
    started = time.perf_counter()
    world, x, _, t = _free_fall()
    g = world.gravity
    exact = projectile_position(FREE_FALL_X0, FREE_FALL_V0, g, t)
    # Not exact: symplectic Euler (ArtiSynth notes 0.9.1: v ← v + h g, then x ← x + h v) run in S sub-steps of
    # h/S lags the parabola by exactly |g| t h / (2S) (x_n = x0 + n h v0 + h² g (n²/2 + n/(2S))), a first-order
    # truncation error: 1.2 mm at h = 1 ms, t = 1 s, S = 4. The tolerance is that error for S = 1, |g| t h / 2,
    # the first-order bound whatever the sub-step count; the velocity check below is exact.
    tolerance = float(np.linalg.norm(g)) * t * FREE_FALL_DT / 2.0
    return compare(name, "height z after 1 s [m]; error |Δx| (abs.)", x[2], exact[2], tolerance,
                   "x0 + v0 t + ½ g t²; symplectic Euler lags |g| t h/(2S) (ArtiSynth 0.9.1)", relative=False,
                   miss=float(np.linalg.norm(x - exact)), seconds=time.perf_counter() - started)


@_register("free-fall-velocity")
def check_free_fall_velocity(name: str, quick: bool) -> Check:
    """Velocity [m/s] of a thrown box after 1 s against v0 + g t (the row shows v_z; the error is |v − v_exact|)."""
    started = time.perf_counter()
    world, _, v, t = _free_fall()
    g = world.gravity
    exact = projectile_velocity(FREE_FALL_V0, g, t)
    # Exact up to rounding: each of the n·S kicks v ← v + (h/S) g adds a constant, rounding |v| by at most ε
    # each time, so the error is at most n S ε max|v|; the tolerance is twice that (2.2e-12 m/s here).
    n_kicks = round(t / FREE_FALL_DT) * world.settings.substeps
    speed = float(np.linalg.norm(FREE_FALL_V0)) + float(np.linalg.norm(g)) * t
    tolerance = 2.0 * n_kicks * EPS * speed
    return compare(name, "velocity v_z after 1 s [m/s]; error |Δv| (abs.)", v[2], exact[2], tolerance,
                   "v0 + g t (Baraff I (2-43): Ṗ = M g)", relative=False, miss=float(np.linalg.norm(v - exact)),
                   seconds=time.perf_counter() - started)


# ---------------------------------------------------------------- mass properties
DENSITY = 1000.0  # kg/m³
# A closed form is a handful of flops and the engine computes the same quantity by another arrangement of them
# (tumble.mass; the capsule's hemispheres are summed differently here), so the two agree to rounding: a few ε
# relative. 1e-12 (~5000 ε) is the rounding tolerance tests/unit/test_mass.py uses.
INERTIA_RTOL = 1e-12


def _inertia_check(name: str, shape: object, exact: np.ndarray, reference: str, started: float) -> Check:
    """Compare the inertia the World uses for ``shape`` (``body.inertia_body``) with ``exact`` (3, 3).

    The row shows the worst entry; its error is relative to the tensor's largest entry, so that the zero
    off-diagonal entries are compared too.
    """
    world = World(gravity=(0.0, 0.0, 0.0))
    got = world.add_body(shape, density=DENSITY).inertia_body
    i, j = np.unravel_index(int(np.argmax(np.abs(got - exact))), exact.shape)
    return compare(name, f"inertia I[{i},{j}], worst entry [kg m²] (rel. to max |I|)", got[i, j], exact[i, j],
                   INERTIA_RTOL, reference, relative=False, scale=float(np.max(np.abs(exact))),
                   seconds=time.perf_counter() - started)


@_register("inertia-box")
def check_inertia_box(name: str, quick: bool) -> Check:
    """Inertia tensor [kg m²] of the demo's 0.2 × 0.4 × 0.8 m box against Baraff I (5-3)."""
    started = time.perf_counter()
    lx, ly, lz = 0.2, 0.4, 0.8
    exact = box_inertia(DENSITY * lx * ly * lz, lx, ly, lz)
    return _inertia_check(name, Box(lx, ly, lz), exact, "M/12 diag(y0²+z0², x0²+z0², x0²+y0²) (Baraff I (5-3))",
                          started)


@_register("inertia-cylinder")
def check_inertia_cylinder(name: str, quick: bool) -> Check:
    """Inertia tensor [kg m²] of a cylinder r = 0.1 m, h = 0.5 m against the lecture's closed form."""
    started = time.perf_counter()
    r, h = 0.1, 0.5
    exact = cylinder_inertia(DENSITY * math.pi * r * r * h, r, h)
    return _inertia_check(name, Cylinder(r, h), exact, "m(3r²+h²)/12, m r²/2 (lecture 003)", started)


@_register("inertia-capsule")
def check_inertia_capsule(name: str, quick: bool) -> Check:
    """Inertia tensor [kg m²] of a capsule r = 0.1 m, cylinder length 0.5 m: cylinder + hemispheres."""
    started = time.perf_counter()
    r, length = 0.1, 0.5
    return _inertia_check(name, Capsule(r, length), capsule_inertia(DENSITY, r, length),
                          "cylinder + 2 hemispheres, 83/320 m r² + Steiner (lecture 003)", started)


# ---------------------------------------------------------------- torque-free symmetric top
TOP = Cylinder(0.1, 0.5)              # I1 = I2 > I3 about body z (tests/physics/test_free_motion.py)
TOP_OMEGA = np.array([0.7, -0.3, 4.0])  # rad/s, body frame = world frame at t = 0 (unrotated start)
FREE_DT = 1e-3                          # s: the demo's step


def _splitting_tolerance(omega: float, dt: float) -> float:
    """The tolerance of an O(h²) error of the splitting integrator [dimensionless].

    The splitting is second order in free rotation (docs/integrators.md; tests/physics/test_free_motion.py
    measures the order): its relative errors in a rate or in the energy scale as (|ω| h)², the square of
    the angle turned per step. We allow a tenth of that: 1.7e-6 for the top (|ω| = 4.07 rad/s) and 2.5e-6
    for the Dzhanibekov box (5 rad/s) at h = 1 ms; measured 8e-9 (rate) and 2e-8 (energy) for the top,
    2e-7 for the box's energy (docs/integrators.md), and for the top ×100 of each at h = 10 ms, as second
    order predicts.
    """
    return (omega * dt) ** 2 / 10.0


def _rounding_tolerance(steps: int) -> float:
    """The tolerance of a quantity the splitting keeps to rounding (|L|) [dimensionless].

    Each step is five exact rotations of the body's angular momentum (docs/integrators.md) plus the ω ↔ L
    conversions, each rounding |L| by a few ε: at most ~10 ε a step if every rounding adds up, 10 n ε in all
    (2e-11 for 10 000 steps; measured 4e-13, as rounding errors mostly cancel).
    """
    return 10.0 * steps * EPS


def _spin(world: World, body: Body, seconds: float, every: int) -> dict[str, np.ndarray]:
    """Step ``world`` by FREE_DT for ``seconds`` [s]; record t, body-frame ω, energy and |L| every few steps."""
    rows: dict[str, list] = {"t": [], "w_body": [], "energy": [], "L": []}

    def record() -> None:
        rows["t"].append(world.time)
        rows["w_body"].append(quat_to_matrix(body.orientation).T @ body.angular_velocity)  # Rᵀ ω
        rows["energy"].append(world.kinetic_energy())
        rows["L"].append(float(np.linalg.norm(world.angular_momentum())))

    record()
    for k in range(round(seconds / FREE_DT)):
        world.step(FREE_DT)
        if (k + 1) % every == 0:
            record()
    return {key: np.array(val) for key, val in rows.items()}


def _top(quick: bool) -> tuple[dict[str, np.ndarray], float, int]:
    world = World(gravity=(0.0, 0.0, 0.0))
    body = world.add_body(TOP, density=DENSITY, angular_velocity=TOP_OMEGA)
    i1, _, i3 = np.diag(body.inertia_body)
    seconds = 2.0 if quick else 10.0  # 1 and 5 turns of ω about the body axis
    return _spin(world, body, seconds, 10), symmetric_top_rate(i1, i3, TOP_OMEGA[2]), round(seconds / FREE_DT)


@_register("precession-rate")
def check_precession_rate(name: str, quick: bool) -> Check:
    """Body-frame precession rate [rad/s] of a torque-free symmetric top against Ω = (I3 − I1)/I1 ω3."""
    started = time.perf_counter()
    rec, rate, _ = _top(quick)
    # The phase of ω1 + i ω2 grows linearly at Ω; fit it (least squares over every recorded sample).
    phase = np.unwrap(np.angle(rec["w_body"][:, 0] + 1j * rec["w_body"][:, 1]))
    fitted = float(np.polyfit(rec["t"], phase, 1)[0])
    tolerance = _splitting_tolerance(float(np.linalg.norm(TOP_OMEGA)), FREE_DT)
    return compare(name, "body-frame precession rate Ω [rad/s] (rel.)", fitted, rate, tolerance,
                   "Ω = (I3 − I1)/I1 ω3 (Euler's eqs., lecture 003)", relative=True,
                   seconds=time.perf_counter() - started)


@_register("precession-momentum")
def check_precession_momentum(name: str, quick: bool) -> Check:
    """Largest relative change of |L| [kg m²/s] of the torque-free top: conserved (no torque)."""
    started = time.perf_counter()
    rec, _, steps = _top(quick)
    drift = float(np.max(np.abs(rec["L"] / rec["L"][0] - 1.0)))
    return compare(name, "max |ΔL|/|L0| over the run (abs.)", drift, 0.0, _rounding_tolerance(steps),
                   "L̇ = τ = 0 (Baraff I (2-43))", relative=False, seconds=time.perf_counter() - started)


@_register("precession-energy")
def check_precession_energy(name: str, quick: bool) -> Check:
    """Largest relative change of the top's kinetic energy [J]: conserved for torque-free motion."""
    started = time.perf_counter()
    rec, _, _ = _top(quick)
    drift = float(np.max(np.abs(rec["energy"] / rec["energy"][0] - 1.0)))
    tolerance = _splitting_tolerance(float(np.linalg.norm(TOP_OMEGA)), FREE_DT)
    return compare(name, "max |ΔE|/E0 over the run (abs.)", drift, 0.0, tolerance,
                   "½ ωᵀIω constant (Baraff II (C-3)); O(h²) splitting error", relative=False,
                   seconds=time.perf_counter() - started)


# ---------------------------------------------------------------- Dzhanibekov flip (the demo's scene)
FLIP_BOX = Box(0.2, 0.4, 0.8)              # I1 > I2 > I3: body y is the intermediate axis
FLIP_OMEGA = np.array([1e-3, 5.0, 1e-3])   # rad/s (src/tumble/user/demo.py)


def _flip(quick: bool) -> tuple[dict[str, np.ndarray], int, int]:
    world = World(gravity=(0.0, 0.0, 0.0))
    body = world.add_body(FLIP_BOX, density=DENSITY, angular_velocity=FLIP_OMEGA)
    seconds = 10.0 if quick else 20.0  # one flip, two flips
    rec = _spin(world, body, seconds, 10)
    flips = int(np.count_nonzero(np.diff(np.sign(rec["w_body"][:, 1])) != 0))  # ω about body y reverses
    return rec, flips, round(seconds / FREE_DT)


@_register("dzhanibekov-energy")
def check_dzhanibekov_energy(name: str, quick: bool) -> Check:
    """Largest relative change of kinetic energy [J] over the intermediate-axis flip (must flip)."""
    started = time.perf_counter()
    rec, flips, _ = _flip(quick)
    drift = float(np.max(np.abs(rec["energy"] / rec["energy"][0] - 1.0)))
    tolerance = _splitting_tolerance(float(np.linalg.norm(FLIP_OMEGA)), FREE_DT)
    return compare(name, f"max |ΔE|/E0 over {flips} flip(s) (abs.)", drift, 0.0, tolerance,
                   "½ ωᵀIω constant (Baraff II (C-3)); O(h²) splitting error", relative=False,
                   seconds=time.perf_counter() - started, precondition=flips >= 1)


@_register("dzhanibekov-momentum")
def check_dzhanibekov_momentum(name: str, quick: bool) -> Check:
    """Largest relative change of |L| [kg m²/s] over the intermediate-axis flip (must flip)."""
    started = time.perf_counter()
    rec, flips, steps = _flip(quick)
    drift = float(np.max(np.abs(rec["L"] / rec["L"][0] - 1.0)))
    return compare(name, f"max |ΔL|/|L0| over {flips} flip(s) (abs.)", drift, 0.0, _rounding_tolerance(steps),
                   "L̇ = τ = 0 (Baraff I (2-43))", relative=False, seconds=time.perf_counter() - started,
                   precondition=flips >= 1)


# ---------------------------------------------------------------- contact scenes (BENCH.md: dt = 1/240 s)
CONTACT_DT = 1.0 / 240.0  # s


@_register("resting-box")
def check_resting_box(name: str, quick: bool) -> Check:
    """Total vertical contact force [N] under a 2 kg box resting on the ground against its weight m g."""
    started = time.perf_counter()
    world = World()
    world.add_ground()
    box = world.add_body(Box(0.2, 0.3, 0.4), mass=2.0, position=(0.1, -0.2, 0.2))
    _steps(world, CONTACT_DT, 1.0 if quick else 5.0)  # asleep after 0.5 s quiet; contacts keep their forces
    total = float(world.contacts().force.sum(axis=0)[2])
    weight = box.mass * float(-world.gravity[2])
    # The sweeps stop once no normal row changes a velocity by more than ``tolerance`` (1e-6 m/s), so a step's
    # impulse may be off by m·tolerance: a force error of m·tolerance/dt, i.e. tolerance/(g dt) = 2.4e-5 of
    # m g. (At rest the solver converges far below that; measured 0 to rounding.)
    rtol = world.settings.tolerance / (float(-world.gravity[2]) * CONTACT_DT)
    return compare(name, "Σ f_z of the contacts [N] (rel.)", total, weight, rtol,
                   "Σ f_n = m g (resting contact, Baraff II 9)", relative=True, seconds=time.perf_counter() - started)


BOUNCE_E = 0.5        # restitution of ball and ground
BOUNCE_HEIGHT = 1.0   # m, drop height of the ball's bottom
BOUNCES = 3           # apex ratios compared (the acceptance: the first three)


def _apex(z: np.ndarray, i: int) -> float:
    """Apex [m] of the parabola through samples z[i-1], z[i], z[i+1] (equally spaced)."""
    a = 0.5 * (z[i + 1] + z[i - 1]) - z[i]
    b = 0.5 * (z[i + 1] - z[i - 1])
    return float(z[i] - b * b / (4.0 * a))


@_register("bounce")
def check_bounce(name: str, quick: bool) -> Check:
    """Worst of the first three rebound apex ratios of a ball dropped from 1 m, e = 0.5, against e²."""
    started = time.perf_counter()
    world = World()
    world.add_ground(friction=0.0, restitution=BOUNCE_E)
    r = 0.1
    ball = world.add_body(Sphere(r), mass=1.0, position=(0.0, 0.0, BOUNCE_HEIGHT + r), friction=0.0,
                          restitution=BOUNCE_E)
    z = [ball.position[2] - r]
    for _ in range(round(1.5 / CONTACT_DT)):  # the third apex is at ~1.19 s
        world.step(CONTACT_DT)
        z.append(ball.position[2] - r)
    z = np.array(z)
    # Between bounces the discrete positions lie on a parabola (symplectic Euler under constant g), so the
    # parabola through the three samples around a maximum gives the apex without the sampling error.
    apexes = [_apex(z, i) for i in range(1, len(z) - 1) if z[i] > z[i - 1] and z[i] >= z[i + 1]][:BOUNCES]
    heights = [BOUNCE_HEIGHT, *apexes]
    ratios = [after / before for before, after in zip(heights, heights[1:], strict=False)]
    expected = BOUNCE_E**2  # Baraff II (8-10): v⁺ = −e v⁻; apex ∝ v², so each apex is e² times the last
    worst = max(ratios, key=lambda ratio: abs(ratio - expected)) if ratios else math.nan
    # That parabola's apex sits c = g (h/S)²/8 (1.3 µm) above the true one (h/S the sub-step), so a ratio of
    # two apexes is off by up to c/H relative, H the lower apex (0.0156 m for the third); the tolerance is
    # twice 2c/H_min = 3.4e-4 (measured 6e-5). The rebound itself keeps e² of the step's modified energy
    # (docs/contact.md "Restitution"), exact up to rounding.
    g = float(-world.gravity[2])
    c = g * (CONTACT_DT / world.settings.substeps) ** 2 / 8.0
    tolerance = 4.0 * c / (BOUNCE_HEIGHT * expected**BOUNCES)  # H_min = H0 e^(2·BOUNCES)
    return compare(name, "apex ratio H_k+1/H_k, worst of 3 (rel.)", worst, expected, tolerance,
                   "e² (Baraff II (8-10): v⁺ = −e v⁻)", relative=True, seconds=time.perf_counter() - started,
                   precondition=len(ratios) == BOUNCES)


INCLINE_THETA = math.radians(20.0)  # tan 20° = 0.364


def _incline(mu: float, seconds: float) -> tuple[World, np.ndarray, np.ndarray, np.ndarray]:
    """A 0.2 m, 1 kg box on a fixed 4 × 4 × 0.2 m slab tilted by INCLINE_THETA about y (a tilted body, not
    tilted gravity), both of friction ``mu``. Returns the world, step times (T,) [s], displacements (T, 3)
    [m] and the downhill unit vector."""
    theta = INCLINE_THETA
    q = np.array([math.cos(theta / 2.0), 0.0, math.sin(theta / 2.0), 0.0])
    normal = quat_to_matrix(q)[:, 2]  # the slab's top face normal
    world = World()
    world.add_body(Box(4.0, 4.0, 0.2), orientation=q, fixed=True, friction=mu)
    box = world.add_body(Box(0.2, 0.2, 0.2), mass=1.0, position=0.2 * normal, orientation=q, friction=mu)
    g = world.gravity
    downhill = g - (g @ normal) * normal
    downhill /= np.linalg.norm(downhill)
    start = box.position
    path = []
    for _ in range(round(seconds / CONTACT_DT)):
        world.step(CONTACT_DT)
        path.append(box.position - start)
    times = CONTACT_DT * np.arange(1, len(path) + 1)
    return world, times, np.array(path), downhill


@_register("incline-slide")
def check_incline_slide(name: str, quick: bool) -> Check:
    """Acceleration [m/s²] of a box sliding down a 20° slope with μ = 0.3 against g (sin θ − μ cos θ)."""
    started = time.perf_counter()
    mu = 0.3
    world, t, path, downhill = _incline(mu, 1.0 if quick else 2.0)
    s = path @ downhill
    half = len(t) // 2  # fit s = s0 + v0 t + ½ a t² over the second half, once sliding is steady
    a = 2.0 * float(np.polyfit(t[half:], s[half:], 2)[0])
    g = float(np.linalg.norm(world.gravity))
    exact = coulomb_slide_acceleration(g, INCLINE_THETA, mu)
    # A step's velocity may be off by the solver's stopping tolerance (1e-6 m/s) out of the a·dt it gains:
    # tolerance / (a dt) = 4e-4 relative. (Sliding friction sits on the cone's rim, μ λ_n, which the disc
    # projection hits exactly, so the measured error is rounding, ~1e-13.)
    rtol = world.settings.tolerance / (exact * CONTACT_DT)
    return compare(name, "acceleration down the slope [m/s²] (rel.)", a, exact, rtol,
                   "g(sin θ − μ cos θ), θ = 20°, μ = 0.3 (Coulomb, notes 0.16)", relative=True,
                   seconds=time.perf_counter() - started)


@_register("incline-stick")
def check_incline_stick(name: str, quick: bool) -> Check:
    """Displacement [m] of a box resting on a 20° slope with μ = 0.5 > tan 20°: static friction holds it."""
    started = time.perf_counter()
    world, _, path, _ = _incline(0.5, 1.0 if quick else 2.0)
    creep = float(np.linalg.norm(path[-1]))
    # μ ≥ tan θ: the friction needed, m g sin θ, is inside the cone μ m g cos θ, so the exact creep is 0. The
    # box may settle by up to the slop (0.1 mm): the split-impulse correction leaves penetrations below the
    # slop alone (docs/contact.md), so positions are only defined to that. Measured 4e-7 m, all in the
    # first step.
    return compare(name, "displacement after the run [m] (abs.)", creep, 0.0, world.settings.slop,
                   "0: μ m g cos θ ≥ m g sin θ (Coulomb cone, notes 0.16)", relative=False,
                   seconds=time.perf_counter() - started)


@_register("collision-momentum")
def check_collision_momentum(name: str, quick: bool) -> Check:
    """Change of total linear momentum [kg m/s] of two boxes colliding in zero gravity: conserved."""
    started = time.perf_counter()
    world = World(gravity=(0.0, 0.0, 0.0))
    world.add_body(Box(0.2, 0.2, 0.2), mass=1.0, position=(0.0, 0.0, 0.0), velocity=(2.0, 0.3, 0.0),
                   angular_velocity=(0.0, 1.0, 2.0), restitution=0.5)
    world.add_body(Box(0.3, 0.2, 0.25), mass=3.0, position=(0.4, 0.05, 0.02), velocity=(-1.0, 0.0, 0.1),
                   orientation=(0.9, 0.1, 0.2, 0.3), restitution=0.5)
    p0 = world.linear_momentum()
    touched = False
    steps = round(0.5 / CONTACT_DT)
    for _ in range(steps):
        world.step(CONTACT_DT)
        touched |= world.step_stats.contacts > 0
    change = float(np.linalg.norm(world.linear_momentum() - p0))
    # Each impulse acts on A as +j and on B as −j (Baraff II (8-12), figure 24), so Σ M v is unchanged but
    # for rounding: each application rounds both bodies' momenta by ~ε|p|. Applications per step: S
    # sub-steps × (iterations + relax_iterations) sweeps × up to 4 contacts, for 2 bodies:
    # 2 ε · steps · S · (iterations + relax) · 4 (7e-12 relative; measured 4e-16).
    s = world.settings
    rtol = 2.0 * EPS * steps * s.substeps * (s.iterations + s.relax_iterations) * 4
    return compare(name, "|ΔP| through the impact [kg m/s] (rel. to |P0|)", change / float(np.linalg.norm(p0)),
                   0.0, rtol, "Σ M v constant: ±j on A and B (Baraff II (8-12))", relative=False,
                   seconds=time.perf_counter() - started, precondition=touched)


# ---------------------------------------------------------------- pendulum on a hinge
PENDULUM_DT = 1.0 / 240.0   # s
PENDULUM_LENGTH = 1.0       # m, a 1 kg rod 0.1 × 0.1 × 1 m hinged at one end, released horizontal (90°)
PENDULUM_I_PIVOT = (PENDULUM_LENGTH**2 + 0.1**2) / 12.0 + (PENDULUM_LENGTH / 2) ** 2   # kg m², Steiner


def _pendulum_omega_max(g: float) -> float:
    """[rad/s] the rod's fastest angular speed, at the bottom: √(2 m g d / I_pivot), d = L/2."""
    return math.sqrt(2.0 * g * (PENDULUM_LENGTH / 2) / PENDULUM_I_PIVOT)


def pendulum_period(i_pivot: float, mass: float, g: float, arm: float, amplitude: float) -> float:
    """[s] exact period of a physical pendulum: (2/π) K(sin²(θ₀/2)) · 2π √(I_pivot / (m g d)), K the complete
    elliptic integral of the first kind (parameter m = k²), d the pivot–COM distance, θ₀ the amplitude."""
    return 4.0 * math.sqrt(i_pivot / (mass * g * arm)) * float(ellipk(math.sin(amplitude / 2.0) ** 2))


def _pendulum(integrator: str, periods: float) -> tuple[World, list[float], list[float], float, float, float]:
    """The hinged rod stepped for ``periods`` exact periods: (world, times [s], angles from the downward
    vertical [rad], the exact period [s], the largest energy drift [J], the largest joint error [m])."""
    world = World(integrator=integrator)
    rod = world.add_body(Box(PENDULUM_LENGTH, 0.1, 0.1), mass=1.0, position=(PENDULUM_LENGTH / 2, 0.0, 0.0))
    joint = world.add_joint(HingeJoint(rod, None, (0.0, 0.0, 0.0), (0.0, 1.0, 0.0)))
    period = pendulum_period(PENDULUM_I_PIVOT, 1.0, float(-world.gravity[2]), PENDULUM_LENGTH / 2, math.pi / 2)
    e0, drift, error, times, angles = world.energy(), 0.0, 0.0, [], []
    for _ in range(round(periods * period / PENDULUM_DT)):
        world.step(PENDULUM_DT)
        times.append(world.time)
        angles.append(math.atan2(rod.position[0], -rod.position[2]))
        drift = max(drift, abs(world.energy() - e0))
        error = max(error, joint.error)
    return world, times, angles, period, drift, error


@_register("pendulum-period")
def check_pendulum_period(name: str, quick: bool) -> Check:
    """Period [s] of a rod on a hinge released at 90°, from two downward zero crossings, against the exact
    elliptic-integral period (the splitting step with the joints' block solve and SHAKE/RATTLE)."""
    started = time.perf_counter()
    world, times, angles, period, _, error = _pendulum("splitting", 2.2)
    down = [times[i] - angles[i] * (times[i + 1] - times[i]) / (angles[i + 1] - angles[i])
            for i in range(len(angles) - 1) if angles[i] > 0.0 >= angles[i + 1]]
    measured = down[1] - down[0] if len(down) >= 2 else math.nan
    # RATTLE is second order: its frequency error on a linear oscillator is (ω h)²/24 (Störmer–Verlet), h =
    # dt/S the sub-step. This pendulum is not linear; taking its fastest swing, ω_max = √(2 m g d / I_pivot)
    # = 5.4 rad/s, as the frequency gives an estimate of 1.3e-6, and the measured error is 1.37e-6: the
    # estimate has the right size but is not a bound. The tolerance is twice it, (ω_max h)²/12 = 2.65e-6, a
    # margin of 1.9 over the measurement (an O(h) scheme would miss by ~h ω_max = 6e-3). The zero crossings
    # are interpolated linearly where the angle's second derivative vanishes (θ = 0): a third-order error.
    omega_max = _pendulum_omega_max(float(-world.gravity[2]))
    tolerance = (omega_max * PENDULUM_DT / world.settings.substeps) ** 2 / 12.0
    return compare(name, "period of a 90° hinged rod [s] (rel.)", measured, period, tolerance,
                   "(2/π) K(sin²(θ₀/2)) 2π√(I/(m g d))", relative=True, seconds=time.perf_counter() - started,
                   precondition=error < 1e-6)


@_register("pendulum-energy-rk4")
def check_pendulum_energy_rk4(name: str, quick: bool) -> Check:
    """Largest energy drift [J] of the same rod over one period with ``integrator="rk4"``, where the hinge acts
    as a constraint force (ArtiSynth notes 0.5), against the constant energy of a frictionless pendulum."""
    started = time.perf_counter()
    world, _, _, _, drift, error = _pendulum("rk4", 1.0)
    # RK4's local energy error per step is O((ω h)⁵) of the energy scale m g d; over the N steps of a period
    # the bound is N (ω_max h)⁵ m g d = 2.7e-6 m g d (measured 5e-9 m g d: the error stays far below its bound).
    g = float(-world.gravity[2])
    omega_max = _pendulum_omega_max(g)
    scale = g * PENDULUM_LENGTH / 2
    steps = world.time / PENDULUM_DT
    tolerance = steps * (omega_max * PENDULUM_DT) ** 5 * scale
    return compare(name, "energy drift over a period with rk4 [J] (abs.)", drift, 0.0, tolerance,
                   "E constant (no dissipation); constraint forces, ArtiSynth 0.5", relative=False,
                   seconds=time.perf_counter() - started, precondition=error < 1e-6)


# ---------------------------------------------------------------------------------------------------------
# Running and printing.
# ---------------------------------------------------------------------------------------------------------


def run_checks(names: Iterable[str] | None = None, quick: bool = False,
               progress: Callable[[Check], None] | None = None) -> list[Check]:
    """Run the checks and return their rows, in registry order.

    Args:
        names: the checks to run (``CHECKS`` keys; one name as a string is accepted); None runs all. They
            run in registry order whatever the order given. An unknown name raises ValueError before
            anything runs.
        quick: shorter simulated durations, the same checks and tolerances (for the test suite): the top
            2 s instead of 10 s, the flip 10 s (one flip) instead of 20 s (two), the resting box 1 s instead
            of 5 s, the incline 1 s instead of 2 s; free fall (1 s), the bounce (1.5 s) and the collision
            (0.5 s) are short already and run whole.
        progress: called with each finished ``Check`` (e.g. to print rows as they come).

    Returns:
        One ``Check`` per check run. Wall time with a warm Numba cache on the 2-core machine: 1.6 s for all,
        1.2 s quick; on a cold cache the first free-motion step compiles for 5–10 s and the first contact
        scene for 35–65 s (docs/contact.md "Compile time").
    """
    if names is None:
        selected = list(CHECKS)
    else:
        selected = [names] if isinstance(names, str) else list(names)
        unknown = [n for n in selected if n not in CHECKS]
        if unknown:
            raise ValueError(f"unknown check name(s) {', '.join(map(repr, unknown))}; the checks are: "
                             f"{', '.join(CHECKS)}")
        selected = [n for n in CHECKS if n in set(selected)]  # registry order, once each
    results = []
    for name in selected:
        check = CHECKS[name](name, bool(quick))
        results.append(check)
        if progress is not None:
            progress(check)
    return results


TABLE_COLUMNS = ("check", "quantity", "value", "expected", "error", "tolerance", "result", "time", "reference")


def format_row(check: Check) -> tuple[str, ...]:
    """The cells of one table row, as strings (value and expected to 10 digits, error and tolerance to 2)."""
    return (check.name, check.quantity, f"{check.value:.10g}", f"{check.expected:.10g}", f"{check.error:.1e}",
            f"{check.tolerance:.1e}", "PASS" if check.passed else "FAIL", f"{check.seconds:.2f} s", check.reference)


def format_line(check: Check) -> str:
    """One unaligned line for ``check`` (e.g. for a progress callback): result, name, error and tolerance."""
    return (f"{'PASS' if check.passed else 'FAIL'}  {check.name}: {check.quantity}: {check.value:.10g} vs "
            f"{check.expected:.10g}, error {check.error:.1e} (tolerance {check.tolerance:.1e}), {check.seconds:.2f} s")


def format_table(checks: list[Check]) -> str:
    """A plain-text table of ``checks``: a header, one aligned row per check, and "N of M passed"."""
    rows = [TABLE_COLUMNS, *(format_row(c) for c in checks)]
    widths = [max(len(row[k]) for row in rows) for k in range(len(TABLE_COLUMNS))]
    numeric = {2, 3, 4, 5, 7}  # right-aligned columns

    def line(row: tuple[str, ...]) -> str:
        cells = [cell.rjust(w) if k in numeric else cell.ljust(w) for k, (cell, w) in enumerate(zip(row, widths,
                                                                                                    strict=True))]
        return "  ".join(cells).rstrip()

    rule = "  ".join("-" * w for w in widths)
    passed = sum(c.passed for c in checks)
    body = [line(rows[0]), rule, *(line(r) for r in rows[1:])]
    return "\n".join([*body, f"{passed} of {len(checks)} passed"])
