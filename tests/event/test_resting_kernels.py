"""The event method's compiled pieces against independent NumPy forms of the same formulas.

Each check builds the quantity from its definition (Baraff I, II; Appendix D) with plain NumPy on random
bodies and contacts, not from tumble's own helpers, so a wrong index or sign in a kernel fails it. Tolerances
are rounding: 1e-12 relative to the largest entry for the products of O(1) numbers here.
"""

import numpy as np
import pytest

from tumble.collision.detect import CONTACT_CODE, Contacts
from tumble.constraints import resting as rc
from tumble.integration import ode as ode_module
from tumble.integration import state_vector as sv
from tumble.methods import event as ev


def _skew(a):
    return np.array([[0.0, -a[2], a[1]], [a[2], 0.0, -a[0]], [-a[1], a[0], 0.0]])


def _rotation(rng):
    q = rng.normal(size=4)
    q /= np.linalg.norm(q)
    w, x, y, z = q
    R = np.array([[1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)],
                  [2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)],
                  [2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)]])
    return q, R


def _bodies(rng, n=4):
    """n bodies, the last fixed (zero inverse mass and inertia)."""
    inv_mass = rng.uniform(0.5, 2.0, n)
    inertia_body = np.array([np.diag(rng.uniform(0.1, 1.0, 3)) for _ in range(n)])
    q, R = zip(*(_rotation(rng) for _ in range(n)), strict=True)
    q, R = np.array(q), np.array(R)
    inv_inertia = np.array([R[i] @ np.linalg.inv(inertia_body[i]) @ R[i].T for i in range(n)])
    inv_mass[-1] = 0.0
    inv_inertia[-1] = 0.0
    return dict(inv_mass=inv_mass, inertia_body=inertia_body, q=q, R=R, inv_inertia=inv_inertia,
                x=rng.normal(size=(n, 3)), v=rng.normal(size=(n, 3)), w=rng.normal(size=(n, 3)))


def _contacts(rng, n_bodies, c=5):
    a = rng.integers(0, n_bodies, c)
    b = (a + rng.integers(1, n_bodies, c)) % n_bodies
    normal = rng.normal(size=(c, 3))
    normal /= np.linalg.norm(normal, axis=1)[:, None]
    zeros3 = np.zeros((c, 3))
    radius = np.where(rng.random((c, 2)) < 0.5, 0.0, rng.uniform(0.05, 0.2, (c, 2)))
    return Contacts(body_a=a, body_b=b, geom_a=a.copy(), geom_b=b.copy(), point=rng.normal(size=(c, 3)),
                    normal=normal, depth=rng.uniform(-1e-3, 1e-3, c), kind=np.array(["vertex-face"] * c),
                    feature=np.arange(c, dtype=np.int64), normal_impulse=np.zeros(c), friction_impulse=zeros3,
                    impulse=zeros3.copy(), force=zeros3.copy(), restitution=np.zeros(c), friction=np.zeros(c),
                    radius=radius, rolling_friction=np.zeros(c), torsional_friction=np.zeros(c),
                    compliance=np.zeros(c), dissipation=np.zeros(c))


def test_jacobian_rows_give_the_relative_normal_velocity():
    # (8-1), (8-2): J u = n · (v_a + ω_a × r_a − v_b − ω_b × r_b)
    rng = np.random.default_rng(1)
    bd = _bodies(rng)
    cs = _contacts(rng, 4)
    u = np.concatenate([bd["v"], bd["w"]], axis=1).reshape(-1)
    J = rc.jacobian(cs, bd["x"])
    for i in range(len(cs)):
        a, b, p, n = cs.body_a[i], cs.body_b[i], cs.point[i], cs.normal[i]
        vrel = n @ (bd["v"][a] + np.cross(bd["w"][a], p - bd["x"][a])
                    - bd["v"][b] - np.cross(bd["w"][b], p - bd["x"][b]))
        assert J[i] @ u == pytest.approx(vrel, rel=1e-12, abs=1e-12)
    # relative_velocity: the whole vector
    dv = rc.relative_velocity(cs, bd["x"], bd["v"], bd["w"])
    for i in range(len(cs)):
        a, b, p = cs.body_a[i], cs.body_b[i], cs.point[i]
        expect = bd["v"][a] + np.cross(bd["w"][a], p - bd["x"][a]) - bd["v"][b] - np.cross(bd["w"][b], p - bd["x"][b])
        np.testing.assert_allclose(dv[i], expect, rtol=1e-12, atol=1e-12)


def test_inverse_mass_is_the_block_diagonal_inverse():
    rng = np.random.default_rng(2)
    bd = _bodies(rng)
    n = bd["inv_mass"].size
    Minv = np.zeros((6 * n, 6 * n))
    for i in range(n):
        Minv[6 * i:6 * i + 3, 6 * i:6 * i + 3] = bd["inv_mass"][i] * np.eye(3)
        Minv[6 * i + 3:6 * i + 6, 6 * i + 3:6 * i + 6] = bd["inv_inertia"][i]
    G = rng.normal(size=(6 * n, 3))
    np.testing.assert_allclose(rc.apply_inverse_mass(bd["inv_mass"], bd["inv_inertia"], G), Minv @ G,
                               rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(rc.world_inverse_inertia(bd["q"][:-1], np.linalg.inv(bd["inertia_body"][:-1])),
                               bd["inv_inertia"][:-1], rtol=1e-12, atol=1e-12)


def test_body_accelerations_solve_newton_euler():
    # (C-10): m v̇ = F and I ω̇ + ω × (I ω) = τ, I = R I_body Rᵀ taken from the body frame, not inverted back
    # from I⁻¹; a fixed body (I⁻¹ = 0, as World.add_body stores it) gets zero. An ill-conditioned inertia
    # (a needle: moments 1e-8 and 1 kg m²) too, to its conditioning: 1e8 × eps = 2e-8 relative (measured 3e-9;
    # both sides round at that level).
    rng = np.random.default_rng(3)
    bd = _bodies(rng)
    n = bd["inv_mass"].size
    force, torque = rng.normal(size=(n, 3)), rng.normal(size=(n, 3))
    inertia_body, inv_inertia = bd["inertia_body"].copy(), bd["inv_inertia"].copy()
    inertia_body[1] = np.diag([1e-8, 1.0, 1.0])
    inv_inertia[1] = bd["R"][1] @ np.diag([1e8, 1.0, 1.0]) @ bd["R"][1].T
    du = rc.body_accelerations(bd["inv_mass"], inv_inertia, bd["w"], force, torque)
    for i in range(n - 1):
        np.testing.assert_allclose(du[i, :3], bd["inv_mass"][i] * force[i], rtol=1e-12)
        I = bd["R"][i] @ inertia_body[i] @ bd["R"][i].T
        expect = np.linalg.solve(I, torque[i] - np.cross(bd["w"][i], I @ bd["w"][i]))
        tol = 2e-8 if i == 1 else 1e-11
        np.testing.assert_allclose(du[i, 3:], expect, rtol=tol, atol=tol * np.abs(expect).max())
    np.testing.assert_array_equal(du[-1], 0.0)


def test_point_accelerations_and_resting_offset_follow_appendix_d():
    # (C-12): p̈ = v̇ + ω̇ × r + ω × (ω × r) at the core points (the contact point moved along n by a rounded
    # shape's radius − depth/2), and b = n · (p̈_a − p̈_b) + 2 ṅ · (ṗ_a − ṗ_b) − D |ṅ|² (9-4)
    rng = np.random.default_rng(4)
    bd = _bodies(rng)
    cs = _contacts(rng, 4)
    n = bd["inv_mass"].size
    force, torque = rng.normal(size=(n, 3)), rng.normal(size=(n, 3))
    du = rc.body_accelerations(bd["inv_mass"], bd["inv_inertia"], bd["w"], force, torque)
    free = rc.free_acceleration(cs, bd["inv_mass"], bd["inv_inertia"], bd["x"], bd["w"], force, torque)
    ndot = rng.normal(size=(len(cs), 3))
    b = rc.resting_offset(cs, ndot, free, bd["x"], bd["v"], bd["w"])
    rigid = rc.relative_acceleration(cs, bd["x"], du)
    for i in range(len(cs)):
        acc, vel, rig = [], [], []
        offsets = []
        for body, side in ((cs.body_a[i], 0), (cs.body_b[i], 1)):
            radius = cs.radius[i, side]
            offset = radius - 0.5 * cs.depth[i] if radius > 0 else 0.0
            offsets.append(offset)
            core = cs.point[i] + (1 if side == 0 else -1) * offset * cs.normal[i]
            r = core - bd["x"][body]
            w = bd["w"][body]
            acc.append(du[body, :3] + np.cross(du[body, 3:], r) + np.cross(w, np.cross(w, r)))
            vel.append(bd["v"][body] + np.cross(w, r))
            rp = cs.point[i] - bd["x"][body]
            rig.append(du[body, :3] + np.cross(du[body, 3:], rp))
        np.testing.assert_allclose(free[i], acc[0] - acc[1], rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(rigid[i], rig[0] - rig[1], rtol=1e-12, atol=1e-12)
        expect = cs.normal[i] @ (acc[0] - acc[1]) + 2 * ndot[i] @ (vel[0] - vel[1]) - sum(offsets) * ndot[i] @ ndot[i]
        assert b[i] == pytest.approx(expect, rel=1e-12, abs=1e-12)


def test_contact_loads_sum_forces_and_moments():
    rng = np.random.default_rng(5)
    bd = _bodies(rng)
    cs = _contacts(rng, 4)
    fn, tn = rng.normal(size=(len(cs), 3)), rng.normal(size=(len(cs), 3))
    force, torque = np.zeros((4, 3)), np.zeros((4, 3))
    ev._add_contact_loads(cs.body_a, cs.body_b, cs.point, bd["x"], fn, tn, force, torque)
    expect_f, expect_t = np.zeros((4, 3)), np.zeros((4, 3))
    for i in range(len(cs)):
        for body, sign in ((cs.body_a[i], 1.0), (cs.body_b[i], -1.0)):
            expect_f[body] += sign * fn[i]
            expect_t[body] += sign * (_skew(cs.point[i] - bd["x"][body]) @ fn[i] + tn[i])
    np.testing.assert_allclose(force, expect_f, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(torque, expect_t, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("k, m", [(3, 5), (40, 90), (120, 150), (0, 4), (4, 0)])
def test_lookup_finds_records_and_codes(k, m):
    # both of lookup's ways (all pairs compared for small k·m, a sorted table otherwise) against a dict
    rng = np.random.default_rng(k * 1000 + m)
    table = np.zeros(m, dtype=CONTACT_CODE)
    table["pair"] = rng.permutation(10 * m + 1)[:m]
    table["feature"] = rng.integers(0, 3, m)
    codes = np.zeros(k, dtype=CONTACT_CODE)
    if m:
        pick = rng.integers(0, m, k)
        codes["pair"] = table["pair"][pick]
        codes["feature"] = np.where(rng.random(k) < 0.5, table["feature"][pick], 7)
    where = {(int(p), int(f)): j for j, (p, f) in enumerate(table.tolist())}
    expect = [where.get((int(p), int(f)), -1) for p, f in codes.tolist()]
    np.testing.assert_array_equal(rc.lookup(codes, table), expect)
    ints = np.ascontiguousarray(table["pair"])
    where = {int(p): j for j, p in enumerate(ints)}
    np.testing.assert_array_equal(rc.lookup(codes["pair"].copy(), ints), [where.get(int(p), -1) for p in codes["pair"]])


def test_deepest_of_pair():
    codes = np.array([7, 3, 7, 7, 3, 9], dtype=np.int64)
    depth = np.array([0.1, 0.5, 0.3, 0.9, 0.2, 0.4])
    counted = np.array([True, True, True, False, False, False])
    out = np.empty(6)
    ev._deepest_of_pair(codes, depth, counted, out)
    np.testing.assert_array_equal(out, [0.3, 0.5, 0.3, 0.3, 0.5, -np.inf])


def test_serial_state_kernels_match_baraff_2_43():
    # the one-thread kernels of the event method against the definitions: P = M v, L = I ω, ẋ = P/M,
    # q̇ = ½ (0, ω) q, Ṗ = F + M g, L̇ = τ; a fixed body's rows zero
    rng = np.random.default_rng(6)
    bd = _bodies(rng, 3)
    n = 3
    mass = np.where(bd["inv_mass"] > 0, 1.0 / np.where(bd["inv_mass"] > 0, bd["inv_mass"], 1.0), 0.0)
    inv_body = np.array([np.linalg.inv(I) for I in bd["inertia_body"]])
    inv_body[-1] = 0.0
    y = np.empty(13 * n)
    sv.bodies_to_array_serial(mass, bd["inertia_body"], bd["x"], bd["q"], bd["v"], bd["w"], y)
    Y = y.reshape(n, 13)
    for i in range(n):
        np.testing.assert_allclose(Y[i, 7:10], mass[i] * bd["v"][i], rtol=1e-14)
        I = bd["R"][i] @ bd["inertia_body"][i] @ bd["R"][i].T
        np.testing.assert_allclose(Y[i, 10:], I @ bd["w"][i], rtol=1e-12)
    force, torque, g = rng.normal(size=(n, 3)), rng.normal(size=(n, 3)), np.array([0.0, 0.0, -9.81])
    ydot = np.empty_like(y)
    sv.state_derivative_serial(mass, bd["inv_mass"], inv_body, force, torque, g, y, ydot)
    D = ydot.reshape(n, 13)
    for i in range(n - 1):
        w = bd["w"][i]
        np.testing.assert_allclose(D[i, :3], bd["v"][i], rtol=1e-12)
        qw, qv = bd["q"][i, 0], bd["q"][i, 1:]
        np.testing.assert_allclose(D[i, 3:7], 0.5 * np.concatenate([[-w @ qv], qw * w + np.cross(w, qv)]),
                                   rtol=1e-11, atol=1e-14)
        np.testing.assert_allclose(D[i, 7:10], force[i] + mass[i] * g, rtol=1e-14)
        np.testing.assert_allclose(D[i, 10:], torque[i], rtol=0)
    np.testing.assert_array_equal(D[-1], 0.0)
    x, q, v, w = (np.empty((n, 3)), np.empty((n, 4)), np.empty((n, 3)), np.empty((n, 3)))
    sv.array_to_bodies_serial(bd["inv_mass"], inv_body, y, x, q, v, w)
    np.testing.assert_allclose(v[:-1], bd["v"][:-1], rtol=1e-12)
    np.testing.assert_allclose(w[:-1], bd["w"][:-1], rtol=1e-11)


def test_ode_takes_the_first_stage_given():
    # RK4 on ẏ = A y: with ydot0 = A y0 the result is the one it computes itself, bit for bit; a wrong
    # ydot0 changes it (it is used, not ignored); a wrong shape is refused
    A = np.array([[0.0, 1.0], [-4.0, -0.1]])
    y0 = np.array([1.0, 0.0])
    calls = []

    def dydt(t, y):
        calls.append(t)
        return A @ y

    plain = ode_module.ode(y0, 0.0, 0.1, dydt, max_step=0.05)
    assert len(calls) == 8
    calls.clear()
    given = ode_module.ode(y0, 0.0, 0.1, dydt, max_step=0.05, ydot0=A @ y0)
    assert len(calls) == 7
    np.testing.assert_array_equal(given, plain)
    assert not np.array_equal(ode_module.ode(y0, 0.0, 0.1, dydt, max_step=0.05, ydot0=A @ y0 + 1e-3), plain)
    with pytest.raises(ValueError, match="ydot0"):
        ode_module.ode(y0, 0.0, 0.1, dydt, ydot0=np.zeros(3))
