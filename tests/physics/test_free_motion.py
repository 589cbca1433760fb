"""Free rigid-body motion against closed forms and conservation laws (Baraff I; lecture; ArtiSynth 0.9)."""

import numpy as np
import pytest
from scipy.spatial.transform import Rotation

import tumble as tb


def body_omega(q: np.ndarray, w: np.ndarray) -> np.ndarray:
    """Rᵀ ω for (T,4) quaternions (w,x,y,z) and (T,3) world ω; SciPy is scalar-last."""
    return Rotation.from_quat(np.asarray(q)[..., [1, 2, 3, 0]]).inv().apply(w)


# ---------------------------------------------------------------- torque-free symmetric top
TOP = tb.Cylinder(0.1, 0.5)  # symmetric about body z: I1 = I2 = m(3r² + h²)/12, I3 = m r²/2
W0 = np.array([0.7, -0.3, 4.0])  # body-frame ω at t = 0 (the body starts unrotated)


def top_error(integrator: str, dt: float, duration: float) -> float:
    world = tb.World(gravity=(0, 0, 0), integrator=integrator)
    body = world.add_body(TOP, angular_velocity=W0)
    I1, _, I3 = np.diag(body.inertia_body)
    Omega = (I3 - I1) / I1 * W0[2]
    traj = world.simulate(duration, dt, record_every=max(1, round(0.1 / dt)))
    t = traj.times
    # Euler's equations for I1 = I2: (ω1 + i ω2)' = i Ω (ω1 + i ω2), ω3 constant (lecture).
    z = (W0[0] + 1j * W0[1]) * np.exp(1j * Omega * t)
    expected = np.stack([z.real, z.imag, np.full_like(t, W0[2])], axis=1)
    got = body_omega(traj.orientations[:, 0], traj.angular_velocities[:, 0])
    return float(np.max(np.abs(got - expected)))


def test_symmetric_top_precesses_at_closed_form_rate_rk4():
    # Acceptance: error < 1e-6 over 10 s with RK4 at dt = 1e-3 (measured ≈ 1e-11: RK4's error is O(h⁴)).
    assert top_error("rk4", 1e-3, 10.0) < 1e-6


@pytest.mark.parametrize(("integrator", "order"), [("rk4", 4), ("splitting", 2)])
def test_symmetric_top_convergence_order(integrator, order):
    # Halving dt divides the error by 2^order; allow ±0.5 in the observed order for the pre-asymptotic range.
    coarse = top_error(integrator, 2e-2, 2.0)
    fine = top_error(integrator, 1e-2, 2.0)
    assert np.log2(coarse / fine) == pytest.approx(order, abs=0.5)


# ---------------------------------------------------------------- Dzhanibekov flip
def dzhanibekov(integrator: str, duration: float = 20.0, dt: float = 1e-3):
    world = tb.World(gravity=(0, 0, 0), integrator=integrator)
    body = world.add_body(tb.Box(0.2, 0.4, 0.8), angular_velocity=(1e-3, 5.0, 1e-3))
    I = np.diag(body.inertia_body)
    assert I[0] > I[1] > I[2]  # body y is the intermediate axis
    traj = world.simulate(duration, dt, record_every=10)
    e = traj.kinetic_energy
    L = np.linalg.norm(traj.angular_momentum, axis=1)
    return traj, np.max(np.abs(e / e[0] - 1)), np.max(np.abs(L / L[0] - 1))


def test_dzhanibekov_flip_default_integrator_conserves_energy_and_momentum():
    traj, e_drift, l_drift = dzhanibekov("splitting")
    wy = body_omega(traj.orientations[:, 0], traj.angular_velocities[:, 0])[:, 1]
    assert wy.min() < -4.9 and wy.max() > 4.9  # it flips: ω about body y reverses, fully
    # Acceptance: < 1e-6 relative over 20 s at dt = 1e-3. Measured 2.1e-7 (energy) and 6e-12 (|L|, rounding
    # in the ω ↔ Π conversions: each sub-rotation preserves |Π| exactly).
    assert e_drift < 1e-6
    assert l_drift < 1e-10
    # World-frame L itself is constant, not only its length.
    assert np.allclose(traj.angular_momentum, traj.angular_momentum[0], rtol=0, atol=1e-10 * L_norm(traj))


def L_norm(traj):
    return float(np.linalg.norm(traj.angular_momentum[0]))


def test_dzhanibekov_first_order_integrators_drift_more():
    # The documented reason the default is the splitting: first-order ω updates drift ~1e-3 per flip.
    _, e_explicit, _ = dzhanibekov("symplectic_euler", duration=5.0)
    _, e_split, _ = dzhanibekov("splitting", duration=5.0)
    assert e_explicit > 100 * e_split


def test_implicit_gyroscopic_never_gains_energy():
    # Catto's implicit gyroscopic step is dissipative: kinetic energy must not increase (to rounding).
    world = tb.World(gravity=(0, 0, 0), integrator="implicit_gyro")
    world.add_body(tb.Box(0.2, 0.4, 0.8), angular_velocity=(1e-3, 5.0, 1e-3))
    traj = world.simulate(5.0, 1e-2)
    assert np.all(np.diff(traj.kinetic_energy) <= 1e-12 * traj.kinetic_energy[0])


# ---------------------------------------------------------------- free fall and projectile
X0 = np.array([0.5, -1.0, 10.0])
V0 = np.array([3.0, 1.0, 4.0])
G = np.array([0.0, 0.0, -9.81])


@pytest.mark.parametrize("integrator", ["rk4", "adaptive"])
def test_projectile_matches_closed_form(integrator):
    world = tb.World(integrator=integrator)
    world.add_body(tb.Sphere(0.1), position=X0, velocity=V0)
    traj = world.simulate(1.0, 1e-2)
    t = traj.times[:, None]
    # x(t) = x0 + v0 t + ½ g t² is a quadratic: RK4 is exact up to rounding (1e-12 m over 100 steps).
    np.testing.assert_allclose(traj.positions[:, 0], X0 + V0 * t + 0.5 * G * t**2, rtol=0, atol=1e-12)
    np.testing.assert_allclose(traj.velocities[:, 0], V0 + G * t, rtol=0, atol=1e-12)


@pytest.mark.parametrize(("dt", "steps"), [(1 / 60, 60), (2 / 60, 30), (4 / 60, 15)])
@pytest.mark.parametrize("integrator", ["splitting", "symplectic_euler", "implicit_gyro"])
def test_free_fall_exact_discrete_symplectic_euler(integrator, dt, steps):
    # Symplectic Euler (ArtiSynth 0.9.1) with S sub-steps of h / S (the contact steps' sub-steps; free
    # steps translate exactly as they would): v_n = v0 + n h g, x_n = x0 + n h v0 + h² g (n²/2 + n/(2S)).
    world = tb.World(integrator=integrator)
    body = world.add_body(tb.Box(0.1, 0.2, 0.3), position=X0, velocity=V0)
    for _ in range(steps):
        world.step(dt)
    n, S = steps, world.settings.substeps
    np.testing.assert_allclose(body.velocity, V0 + n * dt * G, rtol=0, atol=1e-12)
    np.testing.assert_allclose(body.position, X0 + n * dt * V0 + dt * dt * G * (n * n / 2 + n / (2 * S)),
                               rtol=0, atol=1e-12)
    assert world.time == pytest.approx(1.0)


# ---------------------------------------------------------------- Baraff I section 5
BLOCK = tb.Box(8.0, 1.0, 5.0)  # wide enough for the push points (±3, 0, ±2) of figures 8 and 9


def test_uniform_field_exerts_no_torque():
    # Baraff I (5-5): forces m_i g at points whose mass-weighted centre is x give zero net torque.
    rng = np.random.default_rng(5)
    world = tb.World(gravity=(0, 0, 0))
    body = world.add_body(tb.ConvexHull(rng.normal(size=(20, 3))), position=(1, 2, 3))
    points = rng.normal(size=(50, 3))
    masses = rng.uniform(0.1, 1.0, size=50)
    masses *= body.mass / masses.sum()  # the particles make up the body: Σ m_i = M
    points += body.position - masses @ points / masses.sum()  # centre of mass of the particles at x
    for p, m in zip(points, masses, strict=True):
        body.apply_force(m * G, point=p)
    # |τ| ≤ Σ|r||m g| ~ 1e5 N m summed in 50 terms: rounding leaves ~1e-11 N m, ω̇ ~ 1e-14 rad/s².
    np.testing.assert_allclose(body.angular_acceleration(), 0.0, atol=1e-12)
    np.testing.assert_allclose(body.linear_acceleration(), G, rtol=1e-12)


def test_rotation_free_push():
    # Baraff I 5.3: F = (0, 0, f) at x + (−3, 0, −2) and x + (3, 0, −2): a = 2f/M along z, no spin.
    world = tb.World(gravity=(0, 0, 0))
    body = world.add_body(BLOCK, position=(1, 1, 1))
    f = 7.0
    for arm in ((-3, 0, -2), (3, 0, -2)):
        body.apply_force((0, 0, f), point=body.position + arm)
    np.testing.assert_allclose(body.linear_acceleration(), (0, 0, 2 * f / body.mass), rtol=1e-14)
    np.testing.assert_allclose(body.angular_acceleration(), 0.0, atol=1e-15)
    world.step(0.01)
    np.testing.assert_allclose(body.angular_velocity, 0.0, atol=1e-15)
    np.testing.assert_allclose(body.velocity, (0, 0, 0.01 * 2 * f / body.mass), rtol=1e-14)


def test_translation_free_push():
    # Baraff I 5.4, (5-6): F1 = (0,0,f) at x + (−3,0,−2), F2 = −F1 at x + (3,0,2): no net force,
    # torque (0, 6f, 0), so ω̇ = I⁻¹ (0, 6f, 0) from rest.
    world = tb.World(gravity=(0, 0, 0))
    body = world.add_body(BLOCK)
    f = 2.0
    body.apply_force((0, 0, f), point=(-3, 0, -2))
    body.apply_force((0, 0, -f), point=(3, 0, 2))
    np.testing.assert_allclose(body.linear_acceleration(), 0.0, atol=1e-15)
    expected = np.linalg.solve(body.inertia_world, (0, 6 * f, 0))
    np.testing.assert_allclose(body.angular_acceleration(), expected, rtol=1e-14)


def test_off_centre_push_gives_more_energy_equal_to_work():
    # Baraff I 5.5: the same force F for the same time gives the same v, but pushed off-centre the block
    # also spins, and its extra kinetic energy equals the extra work F·Δp along the longer path.
    F = np.array([0.0, 2.0, 0.0])
    T, dt = 1.0, 1e-4
    arm_body = np.array([-3.5, 0.0, 0.0])

    def push(off_centre: bool):
        world = tb.World(gravity=(0, 0, 0))
        body = world.add_body(BLOCK, mass=10.0)
        work = [0.0]

        def force(w, t):
            p = body.position + body.rotation_matrix @ arm_body if off_centre else body.position
            body.apply_force(F, point=p)
            work[0] -= F @ p  # + F·p at the end of the step, below

        world.add_force(force)
        for _ in range(round(T / dt)):
            world.step(dt)
            p = body.position + body.rotation_matrix @ arm_body if off_centre else body.position
            work[0] += F @ p
        return body, work[0]

    centre, w_centre = push(False)
    off, w_off = push(True)
    np.testing.assert_allclose(off.velocity, centre.velocity, rtol=1e-12)  # same impulse, same v
    # At the COM: exact, W = KE = |F|² T² / (2M) (symplectic Euler is exact for constant force on v).
    assert centre.kinetic_energy() == pytest.approx(F @ F * T**2 / (2 * 10.0), rel=1e-9)
    # Symplectic Euler's position leads by half a sub-step: x_N = a h² (N²/2 + N/(2S)) with S sub-steps,
    # so W = F·x_N = KE (1 + h/(S T)).
    S = tb.World().settings.substeps
    assert w_centre == pytest.approx(centre.kinetic_energy() * (1 + dt / (S * T)), rel=1e-9)
    assert off.kinetic_energy() > 1.2 * centre.kinetic_energy()
    # Off-centre the torque r × F is held over each step while r turns: O(h) error, measured 3e-5 at h = 1e-4.
    assert off.kinetic_energy() == pytest.approx(w_off, rel=1e-3)


# ---------------------------------------------------------------- momentum, fixed bodies, impulses
def test_fixed_body_never_moves():
    world = tb.World()
    wall = world.add_body(tb.Box(1, 1, 1), fixed=True, position=(0, 0, 1))
    wall.apply_force((100, 0, 0), point=(0.5, 0.5, 1.5))
    wall.apply_impulse((5, 5, 5), point=(0.5, 0, 1))
    world.simulate(0.5, 0.01)
    np.testing.assert_array_equal(wall.position, (0, 0, 1))
    np.testing.assert_array_equal(wall.orientation, (1, 0, 0, 0))
    np.testing.assert_array_equal(wall.velocity, 0.0)


def test_impulse_changes_momentum_by_j_and_angular_momentum_by_r_cross_j():
    # Baraff II (8-12): Δv = j/M, Δω = I⁻¹ (r × j); so ΔP = j and ΔL(about the COM) = r × j.
    world = tb.World(gravity=(0, 0, 0))
    body = world.add_body(tb.Box(0.3, 0.5, 0.7), orientation=(0.9, 0.1, -0.3, 0.2), velocity=(1, 2, 3))
    P0, L0 = body.linear_momentum, body.angular_momentum
    j, r = np.array([0.3, -2.0, 1.0]), np.array([0.1, 0.2, -0.3])
    body.apply_impulse(j, point=body.position + r)
    np.testing.assert_allclose(body.linear_momentum - P0, j, rtol=1e-14, atol=1e-14)
    np.testing.assert_allclose(body.angular_momentum - L0, np.cross(r, j), rtol=1e-12, atol=1e-14)


def test_many_bodies_conserve_total_momentum_and_energy():
    # No gravity, no contacts: each body is free; totals conserved to the splitting's bounded error.
    rng = np.random.default_rng(1)
    world = tb.World(gravity=(0, 0, 0))
    for _ in range(300):  # above the parallel threshold, so the prange kernel runs
        world.add_body(tb.Box(*rng.uniform(0.1, 1.0, 3)), position=rng.normal(size=3) * 10,
                       orientation=rng.normal(size=4), velocity=rng.normal(size=3),
                       angular_velocity=rng.normal(size=3) * 3, collide=False)
    E0, P0, L0 = world.kinetic_energy(), world.linear_momentum(), world.angular_momentum()
    world.simulate(1.0, 1e-3)
    assert world.kinetic_energy() == pytest.approx(E0, rel=1e-6)
    np.testing.assert_allclose(world.linear_momentum(), P0, rtol=1e-12, atol=1e-10)
    np.testing.assert_allclose(world.angular_momentum(), L0, rtol=1e-10, atol=1e-9)


def test_serial_and_parallel_kernels_agree_bitwise():
    from tumble.integration import integrate

    rng = np.random.default_rng(2)
    world = tb.World()
    for _ in range(50):
        world.add_body(tb.Box(*rng.uniform(0.1, 1.0, 3)), orientation=rng.normal(size=4),
                       angular_velocity=rng.normal(size=3) * 4)
    body, st = world.model.bodies(), world.state.bodies()
    one = st._replace(**{k: getattr(st, k).copy() for k in ("x", "q", "v", "w", "force", "torque")})
    two = st._replace(**{k: getattr(st, k).copy() for k in ("x", "q", "v", "w", "force", "torque")})
    integrate.step_splitting(body, one, world.model.gravity, 1e-3, 0.375)
    integrate.step_splitting_serial(body, two, world.model.gravity, 1e-3, 0.375)
    for x, y in zip(one, two, strict=True):
        np.testing.assert_array_equal(x, y)
