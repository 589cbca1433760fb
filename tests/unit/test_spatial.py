"""Twists, wrenches, the adjoint (lecture, Modern Robotics ch. 8) and the 6×6 spatial inertia
(ArtiSynth notes 0.1), against identities and closed forms.

Twists are (ω, v), wrenches (m, f), angular part first. Random rotations come from SciPy (independent
of tumble's own quaternion code). Tolerances: entries are O(10)-O(100); 1e-12 relative to the
magnitude of the numbers involved covers rounding of a few 6×6 products with wide margin.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.spatial.transform import Rotation

from tumble import spatial
from tumble.mass import spatial_inertia, spatial_inertia_inv

SETTINGS = settings(max_examples=60, deadline=None)  # deadline=None: the first call compiles (Numba)

coord = st.floats(-10.0, 10.0, allow_nan=False, allow_infinity=False)
vecs = st.tuples(coord, coord, coord).map(lambda t: np.array(t, dtype=float))
six = st.tuples(*[coord] * 6).map(lambda t: np.array(t, dtype=float))
rotations = st.integers(0, 2**32 - 1).map(lambda s: Rotation.random(random_state=s).as_matrix())


def star(a: np.ndarray) -> np.ndarray:
    return np.array([[0.0, -a[2], a[1]], [a[2], 0.0, -a[0]], [-a[1], a[0], 0.0]])


@st.composite
def inertias(draw):
    """A physical inertia about the COM: J = tr(S) 1 − S for a random SPD second moment S = R D Rᵀ,
    so the principal moments satisfy the triangle inequality by construction."""
    d = np.array(draw(st.tuples(*[st.floats(0.05, 5.0)] * 3)))
    R = draw(rotations)
    S = R @ np.diag(d) @ R.T
    J = np.trace(S) * np.eye(3) - S
    return 0.5 * (J + J.T)


masses = st.floats(0.1, 100.0)


# ---------------------------------------------------------------------------------------------
# Adjoint, twist and wrench transforms.
# ---------------------------------------------------------------------------------------------


def test_adjoint_of_identity_is_identity():
    np.testing.assert_array_equal(spatial.adjoint(np.eye(3), np.zeros(3)), np.eye(6))  # exact


@SETTINGS
@given(rotations, vecs)
def test_adjoint_closed_form(R, p):
    Ad = spatial.adjoint(R, p)
    expected = np.block([[R, np.zeros((3, 3))], [star(p) @ R, R]])
    np.testing.assert_allclose(Ad, expected, rtol=0, atol=1e-13)  # the same products, rounding only


@SETTINGS
@given(rotations, vecs, rotations, vecs)
def test_adjoint_is_a_homomorphism(R1, p1, R2, p2):
    # T1 T2 = (R1 R2, R1 p2 + p1): [Ad_{T1 T2}] = [Ad_T1][Ad_T2]. O(100) entries: 1e-11.
    lhs = spatial.adjoint(R1 @ R2, R1 @ p2 + p1)
    np.testing.assert_allclose(lhs, spatial.adjoint(R1, p1) @ spatial.adjoint(R2, p2), rtol=0, atol=1e-11)


@SETTINGS
@given(rotations, vecs, six)
def test_twist_transform_round_trip(R, p, V):
    Va = spatial.transform_twist(R, p, V)
    # Inverse transform T⁻¹ = (Rᵀ, −Rᵀ p). Values O(100): 1e-11.
    back = spatial.transform_twist(R.T, -R.T @ p, Va)
    np.testing.assert_allclose(back, V, rtol=0, atol=1e-11)


@SETTINGS
@given(rotations, vecs, six)
def test_twist_transform_is_rigid_velocity_field(R, p, V):
    """A twist (ω_b, v_b) in {b} is the motion whose velocity at {b}'s origin is v_b. In {a}: ω_a = R ω_b,
    and the velocity at {a}'s origin is R v_b + ω_a × (0 − p)."""
    Va = spatial.transform_twist(R, p, V)
    w_a = R @ V[:3]
    np.testing.assert_allclose(Va[:3], w_a, rtol=0, atol=1e-12)
    np.testing.assert_allclose(Va[3:], R @ V[3:] + np.cross(w_a, -p), rtol=0, atol=1e-11)  # O(100)


@SETTINGS
@given(rotations, vecs, six, six)
def test_power_is_frame_invariant(R, p, V, F):
    Va = spatial.transform_twist(R, p, V)
    Fa = spatial.transform_wrench(R, p, F)
    # ⟨F, V⟩ is O(1e3) with terms up to O(1e4): 1e-12 relative.
    assert abs(Fa @ Va - F @ V) <= 1e-12 * (1.0 + np.abs(Fa).max() * np.abs(Va).max() * 6)


@SETTINGS
@given(rotations, vecs, six)
def test_wrench_transform_closed_form(R, p, F):
    Fa = spatial.transform_wrench(R, p, F)
    # F_a = [Ad_{T⁻¹}]ᵀ F_b, with T⁻¹ = (Rᵀ, −Rᵀ p).
    Ad_inv = spatial.adjoint(R.T, -R.T @ p)
    np.testing.assert_allclose(Fa, Ad_inv.T @ F, rtol=0, atol=1e-11)  # O(100) values
    np.testing.assert_allclose(Fa[3:], R @ F[3:], rtol=0, atol=1e-12)


@SETTINGS
@given(rotations, vecs, vecs, vecs)
def test_spatial_twist_equals_transformed_body_twist(R, x, w, v):
    Vb = spatial.body_twist(R, w, v)
    np.testing.assert_allclose(Vb, np.concatenate([R.T @ w, R.T @ v]), rtol=0, atol=1e-12)
    Vs = spatial.spatial_twist(R, x, w, v)
    np.testing.assert_allclose(Vs, spatial.transform_twist(R, x, Vb), rtol=0, atol=1e-11)  # O(100)
    # The body point at the world origin moves at v_com + ω × (0 − x).
    np.testing.assert_allclose(Vs[3:], v + np.cross(w, -x), rtol=0, atol=1e-11)


def test_transform_rejects_bad_input():
    with pytest.raises(ValueError, match=r"^R\b"):
        spatial.adjoint(np.diag([1.0, 1.0, -1.0]), np.zeros(3))
    with pytest.raises(ValueError, match=r"^twist\b"):
        spatial.transform_twist(np.eye(3), np.zeros(3), np.zeros(5))
    with pytest.raises(ValueError, match=r"^wrench\b"):
        spatial.transform_wrench(np.eye(3), np.zeros(3), [np.nan] * 6)
    with pytest.raises(TypeError, match=r"^p\b"):
        spatial.adjoint(np.eye(3), "xyz")


# ---------------------------------------------------------------------------------------------
# Spatial inertia (ArtiSynth notes 0.1).
# ---------------------------------------------------------------------------------------------


@SETTINGS
@given(masses, vecs, inertias())
def test_spatial_inertia_times_inverse_is_identity(m, c, J):
    M = spatial_inertia(m, c, J)
    Minv = spatial_inertia_inv(m, c, J)
    # cond(M) can reach ~1e7 (m|c|² up to 3e4 against J down to 0.1); errors scale with it: 1e-7.
    np.testing.assert_allclose(M @ Minv, np.eye(6), rtol=0, atol=1e-7)
    # The reference np.linalg.inv(M) is itself off by ~cond(M) ε |M⁻¹| (measured 1.1e-9 on an entry that is
    # 0 in closed form), so the absolute tolerance scales with that bound.
    bound = 1e-14 * np.linalg.cond(M) * np.abs(Minv).max()
    np.testing.assert_allclose(Minv, np.linalg.inv(M), rtol=1e-6, atol=max(1e-9, bound))
    # Symmetric up to the rounding of c* c* (a matrix product, not mirrored exactly): O(1e4) entries.
    np.testing.assert_allclose(M, M.T, rtol=0, atol=1e-12 * np.abs(M).max())


@SETTINGS
@given(masses, vecs, inertias(), vecs, vecs)
def test_spatial_inertia_kinetic_energy_and_momentum(m, c, J, w, v):
    """V = (ω, v) is the twist at the frame origin; the COM moves at v_com = v + ω × c."""
    M = spatial_inertia(m, c, J)
    V = np.concatenate([w, v])
    v_com = v + np.cross(w, c)
    ke = 0.5 * m * v_com @ v_com + 0.5 * w @ J @ w
    # KE up to ~1e8 (m ≤ 100, |v_com| ≤ 300): 1e-12 relative, plus rounding of the largest term.
    scale = 0.5 * m * (np.abs(v).sum() + np.abs(w).sum() * (1.0 + np.abs(c).sum())) ** 2 + 1.0
    assert abs(0.5 * V @ M @ V - ke) <= 1e-12 * scale
    # (h, p) = M V: linear momentum m v_com, angular momentum about the origin J ω + c × p.
    hp = M @ V
    p = m * v_com
    np.testing.assert_allclose(hp[3:], p, rtol=0, atol=1e-12 * scale)
    np.testing.assert_allclose(hp[:3], J @ w + np.cross(c, p), rtol=0, atol=1e-12 * scale)


def test_spatial_inertia_at_com_is_block_diagonal():
    J = np.diag([1.0, 2.0, 2.5])
    M = spatial_inertia(3.0, np.zeros(3), J)
    np.testing.assert_array_equal(M, np.block([[J, np.zeros((3, 3))], [np.zeros((3, 3)), 3.0 * np.eye(3)]]))


def test_spatial_inertia_rejects_bad_input():
    J = np.diag([1.0, 1.0, 1.0])
    with pytest.raises(ValueError, match=r"^mass\b"):
        spatial_inertia(0.0, np.zeros(3), J)
    with pytest.raises(ValueError, match=r"^inertia\b"):
        spatial_inertia(1.0, np.zeros(3), np.diag([1.0, 1.0, 3.0]))  # violates I3 ≤ I1 + I2
    with pytest.raises(ValueError, match=r"^inertia\b"):
        spatial_inertia_inv(1.0, np.zeros(3), np.diag([1.0, -1.0, 1.0]))
    with pytest.raises(ValueError, match=r"^inertia\b"):
        spatial_inertia(1.0, np.zeros(3), [[1.0, 0.5, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]])  # asymmetric
    with pytest.raises(ValueError, match=r"^com\b"):
        spatial_inertia_inv(1.0, np.zeros(2), J)
