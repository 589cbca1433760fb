"""Mass properties (``tumble.mass``) against closed forms and independent computations.

Closed forms: box, Baraff I (5-3); sphere 2/5 m r²; cylinder and ellipsoid, the lecture (003). Independent
computations: solids of revolution integrated numerically with ``scipy.integrate.fixed_quad`` (capsule,
cylinder, sphere), tensor-product Gauss–Legendre quadrature over a box (Steiner), a seeded Monte Carlo
estimate over a random hull (tolerance from its standard error), and hulls of box corners.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.integrate import fixed_quad
from scipy.spatial import ConvexHull as QHull
from scipy.spatial.transform import Rotation

from tumble import Box, Capsule, ConvexHull, Cylinder, Ellipsoid, MassProperties, Sphere, mass_properties

SETTINGS = settings(max_examples=50, deadline=None)  # deadline=None: the first call compiles (Numba)

rotations = st.integers(0, 2**32 - 1).map(lambda s: Rotation.random(random_state=s).as_matrix())
lengths = st.floats(0.05, 5.0)
RTOL = 1e-12  # closed forms evaluated two ways: a handful of flops, rounding only


def wxyz(R: np.ndarray) -> np.ndarray:
    x, y, z, w = Rotation.from_matrix(R).as_quat()
    return np.array([w, x, y, z])


def revolution(profile2, pieces, density):
    """Mass and inertia (about the origin) of a solid of revolution about z with squared radius
    ``profile2(z)``, integrated piecewise over ``pieces`` [(z0, z1), ...].

    A disk of radius ρ at height z contributes dm = δ π ρ² dz, dI_zz = dm ρ²/2 and, about a transverse
    axis through the origin, dI_xx = dm (ρ²/4 + z²).
    """

    def integral(f):
        # Each integrand is a polynomial of degree ≤ 6 on each piece: 8-point Gauss–Legendre (exact to
        # degree 15) is exact up to rounding.
        return sum(fixed_quad(np.vectorize(f), a, b, n=8)[0] for a, b in pieces)

    m = density * np.pi * integral(profile2)
    izz = density * np.pi * integral(lambda z: profile2(z) ** 2 / 2.0)
    ixx = density * np.pi * integral(lambda z: profile2(z) ** 2 / 4.0 + profile2(z) * z * z)
    mz = density * np.pi * integral(lambda z: profile2(z) * z)
    return m, mz / m, np.diag([ixx, ixx, izz])


# ---------------------------------------------------------------------------------------------
# Primitives: closed forms.
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(("lx", "ly", "lz", "density"), [(1.0, 1.0, 1.0, 1000.0), (0.2, 1.5, 3.0, 7.5),
                                                        (4.0, 0.01, 0.3, 2700.0)])
def test_box_is_baraff_5_3(lx, ly, lz, density):
    mp = mass_properties(Box(lx, ly, lz), density=density)
    m = density * lx * ly * lz  # volume x0 y0 z0 with FULL side lengths
    assert mp.mass == pytest.approx(m, rel=RTOL)
    # Baraff I (5-3): Ibody = M/12 diag(y0² + z0², x0² + z0², x0² + y0²).
    expected = m / 12.0 * np.diag([ly**2 + lz**2, lx**2 + lz**2, lx**2 + ly**2])
    np.testing.assert_allclose(mp.inertia, expected, rtol=RTOL, atol=0)
    np.testing.assert_array_equal(mp.com, np.zeros(3))


def test_default_density_is_water():
    assert mass_properties(Box(1.0, 1.0, 1.0)).mass == pytest.approx(1000.0, rel=RTOL)


@pytest.mark.parametrize(("r", "density"), [(1.0, 1000.0), (0.03, 8000.0), (2.5, 0.9)])
def test_sphere(r, density):
    mp = mass_properties(Sphere(r), density=density)
    m = density * 4.0 / 3.0 * np.pi * r**3
    assert mp.mass == pytest.approx(m, rel=RTOL)
    np.testing.assert_allclose(mp.inertia, 0.4 * m * r * r * np.eye(3), rtol=RTOL, atol=0)
    # Independent: a solid of revolution ρ² = r² − z².
    m2, zc, I2 = revolution(lambda z: r * r - z * z, [(-r, r)], density)
    assert mp.mass == pytest.approx(m2, rel=1e-12)  # Gauss–Legendre on a polynomial: rounding only
    assert abs(zc) < 1e-12 * r
    np.testing.assert_allclose(mp.inertia, I2, rtol=1e-12, atol=0)


@pytest.mark.parametrize(("r", "h", "density"), [(1.0, 2.0, 1000.0), (0.1, 3.0, 500.0), (2.0, 0.05, 3.0)])
def test_cylinder(r, h, density):
    mp = mass_properties(Cylinder(r, h), density=density)
    m = density * np.pi * r * r * h
    assert mp.mass == pytest.approx(m, rel=RTOL)
    # Lecture: I_xx = I_yy = m (3 r² + h²) / 12, I_zz = m r² / 2 (axis along z).
    ixx = m * (3 * r * r + h * h) / 12.0
    np.testing.assert_allclose(mp.inertia, np.diag([ixx, ixx, m * r * r / 2.0]), rtol=RTOL, atol=0)
    m2, _, I2 = revolution(lambda z: r * r + 0.0 * z, [(-h / 2, h / 2)], density)
    assert mp.mass == pytest.approx(m2, rel=1e-12)  # Gauss–Legendre on a constant: rounding only
    np.testing.assert_allclose(mp.inertia, I2, rtol=1e-12, atol=0)


@pytest.mark.parametrize(("a", "b", "c", "density"), [(1.0, 2.0, 3.0, 1000.0), (0.3, 0.1, 0.7, 50.0)])
def test_ellipsoid(a, b, c, density):
    mp = mass_properties(Ellipsoid(a, b, c), density=density)
    m = density * 4.0 / 3.0 * np.pi * a * b * c
    assert mp.mass == pytest.approx(m, rel=RTOL)
    # Lecture: I = m/5 diag(b² + c², a² + c², a² + b²).
    expected = m / 5.0 * np.diag([b * b + c * c, a * a + c * c, a * a + b * b])
    np.testing.assert_allclose(mp.inertia, expected, rtol=RTOL, atol=0)


def test_ellipsoid_of_revolution_by_quadrature():
    a, c, density = 0.8, 1.7, 3.0  # a = b: a solid of revolution ρ² = a² (1 − z²/c²)
    mp = mass_properties(Ellipsoid(a, a, c), density=density)
    m, _, I2 = revolution(lambda z: a * a * (1.0 - z * z / (c * c)), [(-c, c)], density)
    assert mp.mass == pytest.approx(m, rel=1e-12)  # polynomial integrand: rounding only
    np.testing.assert_allclose(mp.inertia, I2, rtol=1e-12, atol=0)


def test_ellipsoid_with_equal_axes_is_sphere():
    e = mass_properties(Ellipsoid(0.7, 0.7, 0.7))
    s = mass_properties(Sphere(0.7))
    assert e.mass == pytest.approx(s.mass, rel=RTOL)
    np.testing.assert_allclose(e.inertia, s.inertia, rtol=RTOL, atol=0)


@pytest.mark.parametrize(("r", "L", "density"), [(0.5, 2.0, 1000.0), (1.0, 0.1, 7.0), (0.05, 3.0, 900.0)])
def test_capsule_by_quadrature(r, L, density):
    """Capsule along z: ρ² = r² on |z| ≤ L/2, r² − (|z| − L/2)² on the caps."""
    mp = mass_properties(Capsule(r, L), density=density)
    assert mp.mass == pytest.approx(density * (np.pi * r * r * L + 4.0 / 3.0 * np.pi * r**3), rel=RTOL)

    def profile2(z):
        t = max(abs(z) - L / 2, 0.0)
        return r * r - t * t

    m, zc, I2 = revolution(profile2, [(-L / 2 - r, -L / 2), (-L / 2, L / 2), (L / 2, L / 2 + r)], density)
    assert mp.mass == pytest.approx(m, rel=1e-12)  # polynomial on each piece: rounding only
    assert abs(zc) < 1e-12 * (L + r)
    np.testing.assert_allclose(mp.inertia, I2, rtol=1e-12, atol=0)
    np.testing.assert_array_equal(mp.com, np.zeros(3))


def test_capsule_tends_to_sphere():
    r = 0.4
    cap = mass_properties(Capsule(r, 1e-9))
    sph = mass_properties(Sphere(r))
    # The cylinder adds O(L / r) = 2.5e-9 relative.
    assert cap.mass == pytest.approx(sph.mass, rel=1e-8)
    np.testing.assert_allclose(cap.inertia, sph.inertia, rtol=1e-8, atol=0)


# ---------------------------------------------------------------------------------------------
# Convex hulls.
# ---------------------------------------------------------------------------------------------


def test_hull_of_box_corners_is_box():
    box = Box(0.4, 1.1, 2.3)
    offset = np.array([3.0, -1.0, 0.5])
    hull = ConvexHull(box.corners() + offset)
    np.testing.assert_allclose(hull.center, offset, rtol=0, atol=1e-14 * 10)  # O(3) coordinates
    hb, bb = mass_properties(hull, density=2.0), mass_properties(box, density=2.0)
    assert hb.mass == pytest.approx(bb.mass, rel=1e-12)  # exact tetra sums: rounding only
    np.testing.assert_allclose(hb.com, np.zeros(3), rtol=0, atol=1e-14)
    # Off-diagonal entries are 0 for the box; the hull's are rounding, relative to the diagonal.
    np.testing.assert_allclose(hb.inertia, bb.inertia, rtol=0, atol=1e-12 * np.abs(bb.inertia).max())


def test_hull_of_unit_tetrahedron_closed_form():
    """Tetrahedron (0, e1, e2, e3): V = 1/6, COM (1/4, 1/4, 1/4), and about the COM
    ∫x² dV = 1/60 − V/16 = 1/160, ∫xy dV = 1/120 − V/16 = −1/480 ⇒ I_xx = 1/80, I_xy = 1/480 (per density)."""
    hull = ConvexHull(np.array([[0.0, 0, 0], [1, 0, 0], [0, 1, 0], [0, 0, 1]]))
    assert hull.volume == pytest.approx(1.0 / 6.0, rel=1e-14)
    np.testing.assert_allclose(hull.center, [0.25, 0.25, 0.25], rtol=0, atol=1e-15)
    mp = mass_properties(hull, density=3.0)
    expected = 3.0 * (np.full((3, 3), 1.0 / 480.0) + np.eye(3) * (1.0 / 80.0 - 1.0 / 480.0))
    np.testing.assert_allclose(mp.inertia, expected, rtol=1e-13, atol=0)  # rounding only


def test_random_hull_matches_monte_carlo():
    rng = np.random.default_rng(20240601)
    pts = rng.normal(size=(40, 3)) * [1.0, 0.6, 0.3] + [2.0, -1.0, 0.5]
    hull = ConvexHull(pts)
    density = 2.5
    mp = mass_properties(hull, density=density)
    # The hull's vertices are input points shifted by ``center``.
    shifted = hull.vertices + hull.center
    assert all(np.min(np.linalg.norm(pts - v, axis=1)) < 1e-12 for v in shifted)

    # Inside test from SciPy's facet planes (a·x + b ≤ 0), independent of tumble's triangle sums.
    eq = QHull(hull.vertices).equations
    lo, hi = hull.vertices.min(axis=0), hull.vertices.max(axis=0)
    box_volume = float(np.prod(hi - lo))
    n, chunk = 400_000, 100_000
    sums = np.zeros(10)
    sq = np.zeros(10)
    for _ in range(n // chunk):
        x = lo + (hi - lo) * rng.random((chunk, 3))
        inside = np.all(x @ eq[:, :3].T + eq[:, 3] <= 0.0, axis=1)
        r2 = np.einsum("ij,ij->i", x, x)
        # Integrands, each times the indicator: 1, x, y, z, then I_xx, I_yy, I_zz, I_xy, I_xz, I_yz.
        g = np.stack([np.ones(chunk), x[:, 0], x[:, 1], x[:, 2], r2 - x[:, 0] ** 2, r2 - x[:, 1] ** 2,
                      r2 - x[:, 2] ** 2, -x[:, 0] * x[:, 1], -x[:, 0] * x[:, 2], -x[:, 1] * x[:, 2]], axis=1)
        g *= inside[:, None]
        sums += g.sum(axis=0)
        sq += (g * g).sum(axis=0)
    mean = sums / n
    se = box_volume * np.sqrt((sq / n - mean**2) / n)  # standard error of each MC integral
    est = box_volume * mean
    got = np.array([hull.volume, *(mp.com * hull.volume),
                    *(np.array([mp.inertia[0, 0], mp.inertia[1, 1], mp.inertia[2, 2], mp.inertia[0, 1],
                                mp.inertia[0, 2], mp.inertia[1, 2]]) / density)])
    # 5 standard errors: a correct implementation fails one of these 10 checks with p ≈ 6e-6 (and the
    # seed is fixed); a wrong formula (e.g. a missing Steiner shift) misses by far more than 5 SE.
    np.testing.assert_array_less(np.abs(got - est), 5.0 * se)
    assert mp.mass == pytest.approx(density * hull.volume, rel=1e-14)


@SETTINGS
@given(rotations, st.tuples(lengths, lengths, lengths))
def test_rotated_box_equals_hull_of_rotated_corners(R, dims):
    box = Box(*dims)
    mp = mass_properties(box)
    I_rot = mp.rotated(R)
    np.testing.assert_allclose(I_rot, R @ mp.inertia @ R.T, rtol=0, atol=1e-14 * np.abs(mp.inertia).max())
    hull = mass_properties(ConvexHull(box.corners() @ R.T))
    # Exact tetra sums on O(1) coordinates: rounding relative to the largest moment.
    np.testing.assert_allclose(hull.inertia, I_rot, rtol=0, atol=1e-11 * np.abs(I_rot).max())
    assert hull.mass == pytest.approx(mp.mass, rel=1e-12)


# ---------------------------------------------------------------------------------------------
# Steiner, rotation, compounds.
# ---------------------------------------------------------------------------------------------


def box_inertia_about_point(box: Box, density: float, P: np.ndarray) -> np.ndarray:
    """ρ ∫_box (|x − P|² 1 − (x − P)(x − P)ᵀ) dV by 2-point Gauss–Legendre per axis (exact for quadratics)."""
    h = box.half_extents
    I = np.zeros((3, 3))
    for sx in (-1, 1):
        for sy in (-1, 1):
            for sz in (-1, 1):
                x = np.array([sx, sy, sz]) * h / np.sqrt(3.0) - P
                I += np.prod(h) * (x @ x * np.eye(3) - np.outer(x, x))  # weight h per axis
    return density * I


@SETTINGS
@given(st.tuples(lengths, lengths, lengths), st.tuples(*[st.floats(-3.0, 3.0)] * 3))
def test_translated_equals_direct_integral(dims, d):
    box, d = Box(*dims), np.array(d)
    mp = mass_properties(box, density=4.0)
    direct = box_inertia_about_point(box, 4.0, d)
    np.testing.assert_allclose(mp.translated(d), direct, rtol=0, atol=1e-12 * np.abs(direct).max())


def test_sphere_about_surface_point_is_seven_fifths():
    r = 0.3
    mp = mass_properties(Sphere(r))
    I = mp.translated([0.0, 0.0, r])
    m = mp.mass
    np.testing.assert_allclose(I, np.diag([1.4 * m * r * r, 1.4 * m * r * r, 0.4 * m * r * r]), rtol=RTOL)


def test_compound_two_boxes_is_one_box_of_double_length():
    a, b, c = 0.7, 0.3, 1.2
    half = Box(a, b, c)
    parts = [(half, [a / 2, 0.0, 0.0], [1.0, 0.0, 0.0, 0.0]), (half, [-a / 2, 0.0, 0.0])]
    mp = mass_properties(parts, density=3.0)
    whole = mass_properties(Box(2 * a, b, c), density=3.0)
    assert mp.mass == pytest.approx(whole.mass, rel=RTOL)
    np.testing.assert_allclose(mp.com, np.zeros(3), rtol=0, atol=1e-15)
    np.testing.assert_allclose(mp.inertia, whole.inertia, rtol=RTOL, atol=0)


def test_compound_of_rotated_halves():
    # Box(b, a, c) turned 90° about z is Box(a, b, c); two of them side by side along x make Box(2a, b, c).
    a, b, c = 0.7, 0.3, 1.2
    qz = [np.cos(np.pi / 4), 0.0, 0.0, np.sin(np.pi / 4)]
    shift = np.array([1.0, 2.0, -0.5])
    parts = [(Box(b, a, c), shift + [a / 2, 0, 0], qz), (Box(b, a, c), shift - [a / 2, 0, 0], qz)]
    mp = mass_properties(parts)
    whole = mass_properties(Box(2 * a, b, c))
    np.testing.assert_allclose(mp.com, shift, rtol=0, atol=1e-14 * 4)  # O(2) coordinates
    # cos/sin of π/4 carry rounding: off-diagonals ~1e-16 of the diagonal.
    np.testing.assert_allclose(mp.inertia, whole.inertia, rtol=0, atol=1e-12 * np.abs(whole.inertia).max())


def test_compound_two_spheres_by_hand():
    r, d = 0.2, np.array([0.3, -0.4, 1.2])
    mp = mass_properties([(Sphere(r), d), (Sphere(r), -d)])
    m1 = 1000.0 * 4.0 / 3.0 * np.pi * r**3
    expected = 2.0 * (0.4 * m1 * r * r * np.eye(3) + m1 * (d @ d * np.eye(3) - np.outer(d, d)))
    assert mp.mass == pytest.approx(2 * m1, rel=RTOL)
    np.testing.assert_allclose(mp.com, np.zeros(3), rtol=0, atol=1e-15)
    np.testing.assert_allclose(mp.inertia, expected, rtol=RTOL, atol=1e-15)


@SETTINGS
@given(rotations, st.tuples(*[st.floats(-3.0, 3.0)] * 3))
def test_single_part_compound_is_transformed_shape(R, p):
    box = Box(0.5, 1.0, 2.0)
    mp = mass_properties([(box, p, wxyz(R))])
    base = mass_properties(box)
    np.testing.assert_allclose(mp.com, p, rtol=0, atol=1e-14 * 4)  # O(3): rounding only
    np.testing.assert_allclose(mp.inertia, R @ base.inertia @ R.T, rtol=0, atol=1e-12 * base.inertia.max())


# ---------------------------------------------------------------------------------------------
# Principal axes and rescaling.
# ---------------------------------------------------------------------------------------------


@SETTINGS
@given(rotations, st.tuples(lengths, lengths, lengths))
def test_principal_reconstructs_inertia(R, dims):
    mp0 = mass_properties(Box(*dims))
    mp = MassProperties(mp0.mass, np.zeros(3), mp0.rotated(R))
    moments, P = mp.principal()
    assert np.all(np.diff(moments) >= 0.0)  # ascending
    assert np.linalg.det(P) == pytest.approx(1.0, abs=1e-12)  # proper rotation, rounding only
    np.testing.assert_allclose(P.T @ P, np.eye(3), rtol=0, atol=1e-12)
    scale = np.abs(mp.inertia).max()
    np.testing.assert_allclose(P @ np.diag(moments) @ P.T, mp.inertia, rtol=0, atol=1e-12 * scale)
    # The moments are the box's (5-3) moments, sorted.
    np.testing.assert_allclose(moments, np.sort(np.diag(mp0.inertia)), rtol=0, atol=1e-12 * scale)


def test_principal_fixes_reflection():
    # Diagonal inertia in descending order: eigh must permute the axes, an odd permutation is a reflection.
    mp = MassProperties(1.0, np.zeros(3), np.diag([3.0, 2.0, 1.5]))
    moments, P = mp.principal()
    np.testing.assert_array_equal(moments, [1.5, 2.0, 3.0])
    assert np.linalg.det(P) == pytest.approx(1.0, abs=1e-14)
    np.testing.assert_allclose(P @ np.diag(moments) @ P.T, mp.inertia, rtol=0, atol=1e-14)


@pytest.mark.parametrize("shape", [Box(0.2, 0.4, 0.8), Sphere(0.3), Capsule(0.1, 0.5), Cylinder(0.2, 0.3),
                                   Ellipsoid(0.1, 0.2, 0.3)])
def test_scaled_to_mass(shape):
    mp = mass_properties(shape)
    volume = mp.mass / 1000.0
    scaled = mp.scaled_to_mass(5.0)
    same = mass_properties(shape, density=5.0 / volume)  # the density that gives 5 kg
    assert scaled.mass == 5.0
    np.testing.assert_allclose(scaled.inertia, same.inertia, rtol=1e-14, atol=0)  # one rescale, rounding
    np.testing.assert_array_equal(scaled.com, mp.com)


# ---------------------------------------------------------------------------------------------
# Bad input.
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("density", [0.0, -1.0, np.nan, np.inf])
def test_bad_density(density):
    with pytest.raises(ValueError, match=r"^density\b"):
        mass_properties(Box(1.0, 1.0, 1.0), density=density)


def test_bad_mass_and_vectors():
    mp = mass_properties(Sphere(1.0))
    with pytest.raises(ValueError, match=r"^mass\b"):
        mp.scaled_to_mass(0.0)
    with pytest.raises(TypeError, match=r"^mass\b"):
        mp.scaled_to_mass("1")
    with pytest.raises(ValueError, match=r"^d\b"):
        mp.translated([1.0, 2.0])
    with pytest.raises(ValueError, match=r"^R\b"):
        mp.rotated(np.diag([1.0, -1.0, 1.0]))


def test_bad_compound():
    with pytest.raises(ValueError, match=r"^shape\b"):
        mass_properties([])
    with pytest.raises(TypeError, match=r"^shape\b"):
        mass_properties("box")
    with pytest.raises(TypeError, match=r"^shape\[0\]"):
        mass_properties([(1.0, [0.0, 0.0, 0.0])])
    with pytest.raises(ValueError, match=r"^shape\[0\] position"):
        mass_properties([(Sphere(1.0), [0.0, 0.0])])
    with pytest.raises(ValueError, match=r"^shape\[1\] orientation"):
        mass_properties([(Sphere(1.0), [0.0, 0.0, 0.0]), (Sphere(1.0), [1.0, 0.0, 0.0], [0.0] * 4)])
