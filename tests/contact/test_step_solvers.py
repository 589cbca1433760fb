"""``World(solver=...)``: the notes' solvers inside the step, on the same rows (issue 12, item 3).

Every solver's step is checked against an independent computation of the same problem: the velocities
after one step equal those of ``tumble.solvers.contact_problem`` (D and M⁻¹ assembled in NumPy, not by the
step's kernels) solved by the standalone ``lemke``. Then the friction closed forms on an incline, the soft
rows' compliance against the Gauss–Seidel sweep's own regularization, the statistics, and the errors.
"""

from __future__ import annotations

import numpy as np
import pytest

import tumble as tb
import tumble.methods.timestepping
from tumble.solvers import contact_problem, lemke

from .test_friction_models import COULOMB, _downslope_acceleration, _incline

DT = 1.0 / 240.0

CONVERGED = {"pgs": {"iterations": 30000, "tolerance": 1e-13}, "apgd": {"iterations": 20000, "tolerance": 1e-12},
             "cg": {"iterations": 2000, "tolerance": 1e-12}, "lemke": {}}
"""Options that make each solver converge far below the comparisons' 1e-8 m/s."""

AGREE = {"pgs": 1e-8, "apgd": 1e-8, "cg": 1e-8, "lemke": 5e-6}
"""[m/s] how closely each solver's v⁺ must match the exact LCP's: the iterative ones converge to 1e-12; Lemke's
step adds a compliance of LEMKE_REGULARIZATION = 1e-6 of each normal row's own, which moves v⁺ by about 1e-6
of the contacts' velocity change (up to 2 m/s here; measured 0.8e-6 and 1.0e-6)."""


def _moving_stack(friction: str, **options) -> tuple[tb.World, list]:
    """Three 0.4 m cubes (isotropic inertia, so ω is constant over the free rotation and the step's ω after
    the position stage is the solve's) on the ground, offset 3 cm each, the lower two touching, the top one
    2 mm above (a speculative contact), all moving and spinning into their contacts, fast enough sideways
    (1–2 m/s) that the contacts slide."""
    world = tb.World(friction=friction, substeps=1, sleep=False, relax_iterations=0, **options)
    world.add_ground(friction=0.4)
    boxes = []
    for i, (vel, spin) in enumerate([((2.0, 0.0, -0.05), (0.0, 0.4, 0.2)), ((-1.5, 1.0, -0.1), (0.3, 0.0, -0.5)),
                                     ((1.0, -2.0, -0.15), (-0.2, 0.6, 0.1))]):
        z = 0.2 + 0.4 * i + (0.002 if i == 2 else 0.0)
        boxes.append(world.add_body(tb.Box(0.4, 0.4, 0.4), mass=1.0 + 0.5 * i, position=(0.03 * i, 0.0, z),
                                    velocity=vel, angular_velocity=spin, friction=0.4))
    return world, boxes


def _velocities(world: tb.World, boxes: list) -> np.ndarray:
    return np.concatenate([np.concatenate([b.velocity, b.angular_velocity]) for b in boxes])


def _reference(world: tb.World, friction: str, boxes: list) -> np.ndarray:
    """v⁺ of the next step from contact_problem + the standalone lemke (moving bodies only)."""
    problem = contact_problem(world, DT)
    if friction == "none":
        N, b = problem.normal_lcp()
        result = lemke(N, b)
        impulses = np.zeros(3 * len(b))
        impulses[problem.normal_rows] = result.x
    else:
        M, q, to_impulses = problem.pyramid_lcp(8)
        result = lemke(M, q)
        impulses = to_impulses(result.x)
    assert result.ok
    v = problem.velocities(impulses).reshape(-1, 6)
    rows = [b.index for b in boxes]
    return v[rows].ravel()


@pytest.mark.parametrize("solver", ["pgs", "apgd", "cg", "lemke"])
def test_frictionless_step_matches_the_standalone_lcp(solver):
    """The frictionless LCP's velocities are unique (N is PSD: the QP's M^(−1/2) Dᵀ λ is), even though the
    4-point face contacts make the impulses not: every solver's v⁺ within 1e-8 m/s of Lemke's on
    contact_problem (``AGREE``)."""
    world, boxes = _moving_stack("none", solver=solver, **CONVERGED[solver])
    expected = _reference(world, "none", boxes)
    world.step(DT)
    assert world.step_stats.contacts >= 9
    assert world.step_stats.status == "converged"
    np.testing.assert_allclose(_velocities(world, boxes), expected, atol=AGREE[solver])


@pytest.mark.parametrize("solver", ["pgs", "apgd", "lemke"])
def test_pyramid_step_matches_the_anitescu_stewart_lcp(solver):
    """friction="pyramid" (k = 8): the step's v⁺ against contact_problem.pyramid_lcp solved by the standalone
    lemke (``AGREE``). The boxes slide and spin, so friction sits on the polygon's edges and vertices."""
    world, boxes = _moving_stack("pyramid", solver=solver, friction_directions=8, **CONVERGED[solver])
    expected = _reference(world, "pyramid", boxes)
    world.step(DT)
    assert world.step_stats.status == "converged"
    np.testing.assert_allclose(_velocities(world, boxes), expected, atol=AGREE[solver])


def _coulomb_violation(problem, contacts, friction: str) -> float:
    """[m/s] how far impulses and velocities are from a Coulomb solution of ``problem`` (contact_problem of the
    state before the step), checked row by row from the reported impulses: v⁺ = v* + M⁻¹ Dᵀ λ, w = D v⁺ + b,
    normal 0 <= λ_n ⊥ w_n >= 0; friction within μ λ_n (the disc, or each row for the box), and where it is
    below the bound the contact sticks (w_t = 0), where it is on the bound it opposes the sliding.
    Impulse terms are turned into velocities by the row's own response N_rr."""
    c = len(contacts)
    assert c == len(problem.contacts) and np.allclose(contacts.point, problem.contacts.point)
    lam = np.zeros(3 * c)
    dirs = np.array([_row_directions(n) for n in problem.contacts.normal])      # (c, 3, 3): n, t1, t2
    lam[0::3] = contacts.normal_impulse
    lam[1::3] = np.einsum("ij,ij->i", contacts.friction_impulse, dirs[:, 1])
    lam[2::3] = np.einsum("ij,ij->i", contacts.friction_impulse, dirs[:, 2])
    w = problem.D @ problem.velocities(lam) + (problem.b - problem.D @ problem.v_free)
    k = np.diag(problem.N)
    worst = 0.0
    for i in range(c):
        ln, wn, mu = lam[3 * i], w[3 * i], problem.mu[i]
        worst = max(worst, -wn, min(ln * k[3 * i], abs(wn)))            # w_n >= 0, and λ_n w_n = 0
        lt, wt = lam[3 * i + 1: 3 * i + 3], w[3 * i + 1: 3 * i + 3]
        kt = k[3 * i + 1]
        if friction == "box":
            for d in range(2):
                over = abs(lt[d]) - mu * ln
                worst = max(worst, over * kt)
                if over < -1e-9 * max(mu * ln, 1e-12):
                    worst = max(worst, abs(wt[d]))                      # inside: sticks along this row
                else:
                    worst = max(worst, max(wt[d] * np.sign(lt[d]), 0.0))  # on the bound: opposes the slip
        else:
            norm = np.linalg.norm(lt)
            worst = max(worst, (norm - mu * ln) * kt)
            if norm < mu * ln * (1.0 - 1e-9):
                worst = max(worst, np.linalg.norm(wt))
            elif norm > 0.0:     # sliding: w_t = −s λ_t / |λ_t| with s >= 0
                s = -wt @ lt / norm
                worst = max(worst, np.linalg.norm(wt + s * lt / norm), -s)
    return worst


def _row_directions(normal: np.ndarray) -> np.ndarray:
    from tumble.constraints.contact_rows import tangent_basis
    t = tangent_basis(*normal)
    return np.array([normal, t[:3], t[3:]])


@pytest.mark.parametrize("solver", ["pgs", "apgd"])
@pytest.mark.parametrize("friction", ["cone", "box"])
def test_coulomb_step_is_a_coulomb_solution(solver, friction):
    """The circular cone and box friction have no LCP, and with four coplanar contacts per face their
    solutions are not unique (Gauss–Seidel and APGD, both converged, reach velocities 1e-5 m/s apart on this
    stack). So each solver's answer is checked against the conditions themselves, computed from the
    impulses it reports and contact_problem's independent D and M⁻¹: within 1e-8 m/s."""
    world, boxes = _moving_stack(friction, solver=solver, **CONVERGED[solver])
    problem = contact_problem(world, DT)
    world.step(DT)
    assert world.step_stats.status == "converged"
    assert _coulomb_violation(problem, world.contacts(), friction) < 1e-8


@pytest.mark.parametrize("solver", ["apgd", "cg", "lemke"])
def test_soft_rows_solve_the_sweeps_regularized_problem(solver):
    """correction="soft": a box 3 mm into the ground gets regularized rows. Gauss–Seidel applies them as
    λ ← λ − m ms (v + β s) − is λ; the other solvers as the compliance C = is / (m ms) (velocity_solve.py).
    Converged, both give the same v⁺ (``AGREE``), and the box is pushed out (v_z > 0). With relax_iterations
    = 0 no rigid relax pass follows, so v⁺ is the soft solve's."""
    results = []
    for name in ("pgs", solver):
        world = tb.World(solver=name, friction="none", correction="soft", substeps=1, sleep=False,
                         relax_iterations=0, **CONVERGED[name])
        world.add_ground()
        box = world.add_body(tb.Box(0.3, 0.3, 0.3), mass=2.0, position=(0, 0, 0.147),
                             orientation=(np.cos(0.05), np.sin(0.05), 0.0, 0.0))
        world.step(DT)
        results.append(np.concatenate([box.velocity, box.angular_velocity]))
    assert results[0][2] > 0.0
    np.testing.assert_allclose(results[1], results[0], atol=AGREE[solver])


@pytest.mark.parametrize("options", [{"solver": "apgd"}, {"solver": "lemke", "friction": "pyramid"}],
                         ids=["apgd-cone", "lemke-pyramid"])
def test_incline_closed_form(options):
    """The incline of test_friction_models with the default settings of the solver: sliding at
    a = g (sin θ − μ cos θ) within 1%, sticking (μ = 0.5 > tan 20°) with creep < 0.1 mm in 2 s."""
    path, box = _incline(0.3, **options)
    assert _downslope_acceleration(path) == pytest.approx(COULOMB, rel=0.01)
    assert box.world.step_stats.status != "failed"    # the solver's answer, not the fallback's
    path, box = _incline(0.5, **options)
    assert np.linalg.norm(path[-1]) < 1e-4
    assert box.world.step_stats.status != "failed"


@pytest.mark.parametrize("options", [{"solver": "apgd"}, {"solver": "cg", "friction": "none"},
                                     {"solver": "lemke", "friction": "pyramid"}], ids=["apgd", "cg", "lemke"])
def test_a_stack_stands_with_each_solver(options):
    """Five 0.4 m boxes, sleep off, default settings of each solver: after 1 s the top box has moved less
    than 1 mm (the S3 criterion of BENCH.md), and no step fell back on Gauss–Seidel."""
    world = tb.World(sleep=False, **options)
    world.add_ground()
    boxes = [world.add_body(tb.Box(0.4, 0.4, 0.4), mass=1.0, position=(0, 0, 0.2 + 0.4 * i)) for i in range(5)]
    start = boxes[-1].position
    failed = 0
    for _ in range(240):
        world.step(DT)
        failed += world.step_stats.status == "failed"
    assert np.linalg.norm(boxes[-1].position - start) < 1e-3
    assert failed == 0      # every step is the solver's own answer, never the Gauss–Seidel fallback


def test_stats_report_the_solvers_own_figures():
    """APGD held to 1 iteration with a tolerance it cannot reach ends "max_iterations" after one iteration
    per sub-step; with room it converges under the tolerance."""
    world, _ = _moving_stack("cone", solver="apgd", iterations=1, tolerance=1e-14)
    world.step(DT)
    stats = world.step_stats
    assert stats.status == "max_iterations" and stats.iterations == 1 and stats.residual > 1e-14
    world, _ = _moving_stack("cone", solver="apgd", iterations=5000, tolerance=1e-9)
    world.step(DT)
    assert world.step_stats.status == "converged" and world.step_stats.residual <= 1e-9


def test_a_failed_solve_falls_back_on_gauss_seidel():
    """Lemke capped at 1 pivot cannot finish: its answer is not applied, the sub-step runs Gauss–Seidel
    sweeps instead, and the step says "failed"; the dropped box still lands and rests (it would fall
    through the ground, 2 mm a step, if a failed solve left the contacts without impulses)."""
    world = tb.World(solver="lemke", friction="none", iterations=1, sleep=False)
    world.add_ground()
    box = world.add_body(tb.Box(0.4, 0.4, 0.4), mass=1.0, position=(0, 0, 0.201))
    statuses = set()
    for _ in range(120):
        world.step(DT)
        statuses.add(world.step_stats.status)
    assert "failed" in statuses
    assert abs(box.position[2] - 0.2) < 1e-3 and np.linalg.norm(box.velocity) < 1e-3


def test_lemke_refuses_a_step_beyond_its_size_and_changes_nothing(monkeypatch):
    """Above MAX_LEMKE_SIZE unknowns the step raises a ValueError naming the solver and the size, before
    the bodies move; the force callbacks' loads are taken back, so the world steps on as if never asked."""
    world, boxes = _moving_stack("none", solver="lemke")
    world.add_force(lambda w, t: boxes[0].apply_force((1.0, 0.0, 0.0)))
    before = world.snapshot()
    monkeypatch.setattr(tumble.methods.timestepping, "MAX_LEMKE_SIZE", 5)
    with pytest.raises(ValueError, match=r"solver='lemke'.* unknowns, more than MAX_LEMKE_SIZE = 5"):
        world.step(DT)
    assert world.time == 0.0
    monkeypatch.undo()
    world.step(DT)
    after_refusal = world.state_to_array()
    world.restore(before)
    world.step(DT)
    np.testing.assert_array_equal(world.state_to_array(), after_refusal)


@pytest.mark.parametrize("kwargs, error, text", [
    ({"solver": "newton"}, ValueError, r"solver must be one of .*'newton'"),
    ({"solver": 3}, TypeError, r"solver must be a string"),
    ({"solver": "cg"}, ValueError, r"solver='cg'.*friction='cone'"),
    ({"solver": "cg", "friction": "box"}, ValueError, r"solver='cg'.*friction='box'"),
    ({"solver": "lemke"}, ValueError, r"solver='lemke'.*friction='cone'"),
    ({"solver": "lemke", "friction": "box"}, ValueError, r"solver='lemke'.*friction='box'"),
    ({"solver": "apgd", "iterations": 0}, ValueError, r"iterations must be an integer >= 1, got 0"),
    ({"solver": "lemke", "friction": "none", "iterations": -3}, ValueError, r"iterations .* got -3"),
    ({"solver": "cg", "friction": "none", "iterations": 2.5}, TypeError, r"iterations must be an integer"),
    ({"solver": "apgd", "tolerance": -1e-6}, ValueError, r"tolerance"),
    ({"friction": "coulomb"}, ValueError, r"friction must be one of .*'coulomb'"),
])
def test_bad_solver_options_raise(kwargs, error, text):
    with pytest.raises(error, match=text):
        tb.World(**kwargs)


def test_default_iterations_follow_the_solver():
    assert tb.World().settings.iterations == 4
    assert tb.World(solver="apgd").settings.iterations == 30
    assert tb.World(solver="cg", friction="none").settings.iterations == 30
    assert tb.World(solver="lemke", friction="none").settings.iterations is None
    assert tb.World(solver="apgd", iterations=7).settings.iterations == 7
