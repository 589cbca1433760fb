"""The peer engines get the scene exactly: masses, inertias, materials, damping, initial state.

Each test skips cleanly when its engine is not installed.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest

from bench.adapters.mujoco_adapter import MujocoAdapter, damping_ratio_for_restitution, mjcf
from bench.adapters.pybullet_adapter import PyBulletAdapter
from bench.geometry import quat_to_matrix, random_unit_quaternions
from bench.metrics import fit_acceleration
from bench.scenes import Scene, make_case
from bench.timing import initial_state_error


def _spinning(scene: Scene, seed: int = 7) -> Scene:
    """``scene`` with random orientations, velocities and angular velocities, in zero gravity, no ground."""
    rng = np.random.default_rng(seed)
    q = random_unit_quaternions(rng, scene.n_bodies)
    bodies = tuple(
        dataclasses.replace(b, orientation=tuple(q[i]), velocity=tuple(rng.normal(size=3)),
                            angular_velocity=tuple(rng.normal(size=3) * 3))
        for i, b in enumerate(scene.bodies)
    )
    return dataclasses.replace(scene, bodies=bodies, ground=None, walls=(), gravity=(0.0, 0.0, 0.0),
                               contacts=False)


@pytest.fixture(scope="module")
def mujoco():
    return pytest.importorskip("mujoco")


@pytest.fixture(scope="module")
def pybullet():
    return pytest.importorskip("pybullet")


# ------------------------------------------------------------------------------------------------ MuJoCo


@pytest.mark.parametrize("case", ["S1", "S2-boxes", "S2-spheres", "S3", "S5"])
def test_mjcf_has_the_scene_masses_and_inertias(mujoco, case):
    scene = make_case(case, quick=True)
    model = mujoco.MjModel.from_xml_string(mjcf(scene))
    a = scene.arrays
    assert model.nbody == scene.n_bodies + 1  # + the world body
    assert np.allclose(model.body_mass[1:], a["mass"], rtol=1e-12)
    assert np.allclose(model.body_inertia[1:], a["inertia"], rtol=1e-12)
    assert np.allclose(model.body_ipos[1:], 0.0) and np.allclose(np.abs(model.body_iquat[1:, 0]), 1.0)
    assert np.allclose(model.opt.gravity, scene.gravity) and model.opt.timestep == scene.dt


def test_mjcf_materials_and_solver(mujoco):
    s1 = make_case("S1", quick=True)
    model = mujoco.MjModel.from_xml_string(mjcf(s1, "CG"))
    assert np.all(model.geom_contype == 0) and np.all(model.geom_conaffinity == 0)
    assert model.opt.solver == mujoco.mjtSolver.mjSOL_CG
    pile = mujoco.MjModel.from_xml_string(mjcf(make_case("S2-boxes", quick=True)))
    assert pile.opt.solver == mujoco.mjtSolver.mjSOL_NEWTON
    assert np.allclose(pile.geom_friction[:, 0], 0.5) and np.all(pile.geom_condim == 3)
    assert np.allclose(pile.geom_solref, [0.02, 1.0])  # e = 0: MuJoCo's default, critically damped
    bounce = mujoco.MjModel.from_xml_string(mjcf(make_case("S5")))
    zeta = damping_ratio_for_restitution(0.5)
    assert zeta == pytest.approx(0.2155, abs=1e-4)
    assert np.allclose(bounce.geom_solref, [0.02, zeta]) and np.all(bounce.geom_condim == 1)


def test_damping_ratio_gives_the_restitution():
    for e in (0.1, 0.5, 0.9):
        zeta = damping_ratio_for_restitution(e)
        assert math.exp(-zeta * math.pi / math.sqrt(1 - zeta**2)) == pytest.approx(e)


def test_mujoco_state_round_trip_and_body_frame_spin(mujoco):
    scene = _spinning(make_case("S2-boxes", quick=True))
    sim = MujocoAdapter().build(scene)
    err = initial_state_error(scene, sim.state())
    assert max(err.values()) < 1e-12
    # A body spinning about a principal axis keeps ω fixed in the world (torque-free): this fails if the
    # world-frame ω were passed to MuJoCo's body-frame free-joint velocity.
    r = quat_to_matrix(np.array(scene.bodies[0].orientation))
    w = r @ np.array([0.0, 0.0, 4.0])
    body = dataclasses.replace(scene.bodies[0], angular_velocity=tuple(w), velocity=(0.0, 0.0, 0.0))
    one = dataclasses.replace(scene, bodies=(body,))
    sim = MujocoAdapter().build(one)
    for _ in range(50):
        sim.step()
    assert np.allclose(sim.state().w[0], w, atol=1e-9)
    assert max(initial_state_error(one, sim.state()).values()) > 1e-3  # 50 steps of spin turned it
    assert sim.reset() is True  # MuJoCo resets in place (mj_resetData), no rebuild
    assert max(initial_state_error(one, sim.state()).values()) < 1e-12


# ------------------------------------------------------------------------------------------------ PyBullet


@pytest.mark.parametrize("maximal", [False, True])
def test_pybullet_bodies_have_the_scene_masses_inertias_and_sqrt_materials(pybullet, maximal):
    for case in ("S2-boxes", "S5"):
        scene = make_case(case, quick=True)
        sim = PyBulletAdapter(maximal).build(scene)
        try:
            for body, bid in zip(scene.bodies, sim.ids, strict=True):
                info = pybullet.getDynamicsInfo(bid, -1, physicsClientId=sim.cid)
                mass, friction, inertia, restitution = info[0], info[1], info[2], info[5]
                assert mass == pytest.approx(body.mass, rel=1e-12)
                assert inertia == pytest.approx(body.inertia, rel=1e-12)
                assert friction == pytest.approx(math.sqrt(body.friction))  # pair: √μ · √μ = μ
                if not maximal:  # getDynamicsInfo reports restitution 0 for every maximal-coordinates body
                    assert restitution == pytest.approx(math.sqrt(body.restitution))
            ground = min(sim.ids) - 1 - len(scene.walls)  # created first
            info = pybullet.getDynamicsInfo(ground, -1, physicsClientId=sim.cid)
            assert info[1] == pytest.approx(math.sqrt(scene.ground.friction))
            assert info[5] == pytest.approx(math.sqrt(scene.ground.restitution))
        finally:
            sim.close()


@pytest.mark.parametrize("maximal", [False, True])
def test_pybullet_state_round_trip_and_no_damping(pybullet, maximal):
    scene = _spinning(make_case("S2-spheres", quick=True))  # spheres: ω stays constant without damping
    sim = PyBulletAdapter(maximal).build(scene)
    try:
        s0 = sim.state()
        assert max(initial_state_error(scene, s0).values()) < 1e-9
        for _ in range(240):
            sim.step()
        s1 = sim.state()
        # PyBullet's default damping 0.04 would take ~4 % off both in 1 s
        assert np.allclose(s1.v, s0.v, rtol=1e-6) and np.allclose(s1.w, s0.w, rtol=1e-6)
    finally:
        sim.close()


@pytest.mark.parametrize("maximal", [False, True])
def test_pybullet_pair_friction_is_the_scene_mu(pybullet, maximal):
    """S6 slide: a = g (sin θ − μ cos θ) only if the pair's friction is μ, not μ² (= 0.09)."""
    scene = make_case("S6-slide")
    sim = PyBulletAdapter(maximal).build(scene)
    try:
        xs = []
        for _ in range(scene.steps):
            sim.step()
            xs.append(sim.state().x[0, 0])
    finally:
        sim.close()
    t = np.arange(1, scene.steps + 1) * scene.dt
    a = fit_acceleration(t[t > 0.1], np.array(xs)[t > 0.1])
    expected = 9.81 * (math.sin(math.radians(20)) - 0.3 * math.cos(math.radians(20)))
    assert a == pytest.approx(expected, rel=0.05)


@pytest.mark.parametrize("maximal", [False, True])
def test_pybullet_pair_restitution_is_the_scene_e(pybullet, maximal):
    """S5: the first rebound apex is e² × 1 m = 0.25 m only if the pair's restitution is e (e² would give
    0.0625 m, none ≈ 0)."""
    scene = make_case("S5")
    sim = PyBulletAdapter(maximal).build(scene)
    try:
        z = []
        for _ in range(int(0.9 / scene.dt)):  # fall (0.45 s) and first rebound (0.45 s)
            sim.step()
            z.append(sim.state().x[0, 2])
    finally:
        sim.close()
    late = np.array(z)[int(0.5 / scene.dt):]
    assert 0.2 < late.max() - 0.1 < 0.3
