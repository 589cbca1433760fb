"""ṅ of every supported contact kind (Appendix D's compute_ndot) against a central difference of the
detected normal along the bodies' motion."""

from __future__ import annotations

import numpy as np
import pytest

import tumble as tb
from tumble.constraints import resting as rc
from tumble.rotations import quat_mul

DELTA = 1e-6


def _rotate(q, w, h):
    """exp(½ h ω) q for a world-frame ω: the orientation after turning at ω for h seconds."""
    angle = np.linalg.norm(w) * h
    if angle == 0.0:
        return q.copy()
    axis = w / np.linalg.norm(w)
    dq = np.concatenate([[np.cos(angle / 2)], np.sin(angle / 2) * axis])
    return quat_mul(dq, q)


def _normals_at(world, h):
    """Detected normals by key after moving every body rigidly for h seconds at its current v, ω."""
    a = world._live()
    x0, q0 = a["x"].copy(), a["q"].copy()
    a["x"][...] = x0 + h * a["v"]
    for i in range(len(q0)):
        a["q"][i] = _rotate(q0[i], a["w"][i], h)
    cs = world._method.detect()
    a["x"][...], a["q"][...] = x0, q0
    return dict(zip(cs.contact_codes().tolist(), cs.normal, strict=True))


def _check(world, families=None):
    """Every contact's ṅ matches (n(+δ) − n(−δ)) / 2δ: the truncation is O(δ² |n⃛|) ~ 1e-12 and the
    rounding of the detected normals ~1e-16/δ = 1e-10, so 1e-7 (relative to |ṅ| ≥ 0.1 here) separates a
    right formula from a wrong one (a missing term is O(|ω|) or O(|v|/r) ~ 1)."""
    ev = world._method
    cs = ev.detect()
    assert len(cs) > 0
    a = world._live()
    nd = rc.normal_derivative(cs, ev._geom(), world.model.polytopes.arrays(), a["x"], a["q"], a["v"], a["w"])
    plus, minus = _normals_at(world, DELTA), _normals_at(world, -DELTA)
    seen = set()
    for i, key in enumerate(cs.contact_codes().tolist()):
        assert key in plus and key in minus, "contact lost under a tiny motion"
        fd = (plus[key] - minus[key]) / (2 * DELTA)
        assert np.allclose(nd[i], fd, atol=1e-7), (key, nd[i], fd)
        seen.add(int(cs.feature[i]) >> 52)
    if families is not None:
        assert seen >= families
    return nd


def _world():
    return tb.World(gravity=(0, 0, 0), method="event", event_impacts="sequential")


def test_vertex_face_normal_turns_with_the_reference_body():
    """A box on a spinning, moving slab: the clipped face manifold's normal is the slab's face normal."""
    world = _world()
    world.add_body(tb.Box(2.0, 2.0, 0.2), mass=5.0, position=(0, 0, 0), velocity=(0.3, -0.2, 0.1),
                   angular_velocity=(0.4, -0.7, 1.1))
    world.add_body(tb.Box(0.3, 0.3, 0.3), mass=1.0, position=(0.1, 0.05, 0.2499), velocity=(1.0, 0.0, 0.5),
                   angular_velocity=(2.0, 0.5, -1.0), orientation=(0.99, 0.0, 0.0, 0.141))
    nd = _check(world, {1})
    assert np.abs(nd).max() > 0.1


@pytest.mark.parametrize("skew", [0.0, 30.0], ids=["square", "skewed"])
def test_edge_edge_normal(skew):
    """Two boxes meeting edge to edge (crossed): n = e_a × e_b / |e_a × e_b| turns with both edges. With the
    upper ridge turned by 30° the edges are not perpendicular and the spin about n changes |e_a × e_b|: the
    projection (z − (z·n) n) matters there (for perpendicular ridges z·n = 0)."""
    world = _world()
    c, s = np.cos(np.pi / 8), np.sin(np.pi / 8)    # each box turned 45°, a ridge up / down
    turn = np.array([np.cos(np.radians(skew) / 2), 0.0, 0.0, np.sin(np.radians(skew) / 2)])
    world.add_body(tb.Box(0.4, 0.4, 0.4), mass=1.0, position=(0, 0, 0), orientation=(c, s, 0.0, 0.0),
                   angular_velocity=(0.3, 1.2, -0.5), velocity=(0.2, 0.1, 0.0))
    world.add_body(tb.Box(0.4, 0.4, 0.4), mass=1.0, position=(0.0, 0.0, 2 * 0.2 * np.sqrt(2) - 1e-4),
                   orientation=quat_mul(turn, np.array([c, 0.0, s, 0.0])), angular_velocity=(-0.8, 0.4, 0.9),
                   velocity=(0.0, 0.3, -0.2))
    _check(world, {2})


@pytest.mark.parametrize("case", ["sphere", "face", "edge", "corner", "plane"])
def test_sphere_normals(case):
    """A moving, spinning sphere against a sphere, a box face, edge and corner, and the ground."""
    world = _world()
    r = 0.1
    if case == "plane":
        world.add_ground()
        world.add_body(tb.Sphere(r), mass=1.0, position=(0, 0, r - 1e-5), velocity=(1.0, 0.5, 0.0),
                       angular_velocity=(1.0, 2.0, 3.0))
        _check(world)   # the ground does not turn: ṅ = 0
        return
    if case == "sphere":
        world.add_body(tb.Sphere(0.15), mass=2.0, position=(0, 0, 0), velocity=(0.2, 0.1, -0.3),
                       angular_velocity=(1.0, 0.0, 2.0))
        other = 0.15 * np.array([1.0, 2.0, 0.0]) / np.sqrt(5.0)
    else:
        world.add_body(tb.Box(0.4, 0.4, 0.4), mass=2.0, position=(0, 0, 0), velocity=(0.2, 0.1, -0.3),
                       angular_velocity=(1.0, -0.5, 2.0))
        other = {"face": (0.05, 0.03, 0.2), "edge": (0.05, 0.2, 0.2), "corner": (0.2, 0.2, 0.2)}[case]
    d = np.array(other) / np.linalg.norm(other)
    centre = np.array(other) + (r - 1e-5) * d
    world.add_body(tb.Sphere(r), mass=1.0, position=centre, velocity=(-0.5, 1.0, 0.4), angular_velocity=(3, 1, 2))
    nd = _check(world, {5})
    assert np.abs(nd).max() > 0.1


def test_edge_edge_normal_of_a_hull_against_a_box():
    """The same crossing with the lower body a convex hull of the box's corners (the general separating-
    axis path names edges by polytope-local index, box–box by box axis)."""
    world = _world()
    c, s = np.cos(np.pi / 8), np.sin(np.pi / 8)
    corners = np.array([[x, y, z] for x in (-0.2, 0.2) for y in (-0.2, 0.2) for z in (-0.2, 0.2)])
    world.add_body(tb.ConvexHull(corners), mass=1.0, position=(0, 0, 0), orientation=(c, s, 0.0, 0.0),
                   angular_velocity=(0.3, 1.2, -0.5), velocity=(0.2, 0.1, 0.0))
    world.add_body(tb.Box(0.4, 0.4, 0.4), mass=1.0, position=(0.0, 0.0, 2 * 0.2 * np.sqrt(2) - 1e-4),
                   orientation=(c, 0.0, s, 0.0), angular_velocity=(-0.8, 0.4, 0.9), velocity=(0.0, 0.3, -0.2))
    _check(world, {2})


def test_vertex_normal_of_a_spinning_hull_on_the_ground():
    """A spinning hull touching the ground (added after it, so the ground is the pair's first shape): the
    ground's normal does not turn, ṅ = 0, whichever body the pair lists first."""
    world = _world()
    hull = tb.ConvexHull(np.array([[0.2, 0, 0], [-0.1, 0.17, 0], [-0.1, -0.17, 0], [0, 0, 0.3]]))
    world.add_ground()
    world.add_body(hull, mass=1.0, position=(0, 0, 0.0), velocity=(0.5, 0.2, 0.0), angular_velocity=(0.0, 0.0, 3.0))
    world._live()["x"][1, 2] += world._method.detect().depth.max() - 1e-5    # the base 10 µm deep
    assert world._method.detect().depth.max() == pytest.approx(1e-5)
    nd = _check(world, {4})
    assert np.abs(nd).max() == 0.0
