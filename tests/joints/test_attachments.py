"""Attachments by null-space reduction (ArtiSynth notes 0.17–0.19; docs/attachments.md).

Checked against closed forms (the point-mass term of the inertia, the COM shift) and against an independent
computation: the mass properties of a compound body made of the same shapes (tumble.mass, a different code
path), and conservation of momentum when bodies are merged.
"""

from __future__ import annotations

import numpy as np
import pytest

import tumble as tb
from tumble.rotations import axis_angle_to_quat


def test_point_mass_adds_the_point_mass_term():
    # A point mass m at r from the COM of a body of mass M: the COM moves by m r / (M + m) and the inertia
    # about the new COM grows by the reduced-mass point term M m / (M + m) (|r|² 1 − r rᵀ) (notes 0.19).
    world = tb.World(gravity=(0, 0, 0))
    box = world.add_body(tb.Box(0.4, 0.2, 0.1), mass=2.0, orientation=axis_angle_to_quat([1, 2, 3], 0.7),
                         angular_velocity=(0.1, 2.0, 0.3))
    inertia0, r, m = box.inertia_world, np.array([0.3, 0.1, -0.05]), 0.5
    velocity_at_point = box.point_velocity(r)
    world.attach_point_mass(box, r, m)
    assert box.mass == pytest.approx(2.5, rel=1e-15)
    np.testing.assert_allclose(box.position, m * r / 2.5, atol=1e-15)
    reduced = 2.0 * m / 2.5
    np.testing.assert_allclose(box.inertia_world, inertia0 + reduced * (r @ r * np.eye(3) - np.outer(r, r)),
                               atol=1e-14)
    # the point keeps moving with the body: its velocity is unchanged
    np.testing.assert_allclose(box.point_velocity(r), velocity_at_point, atol=1e-14)


def _parts():
    """Three shapes with densities, poses in the world: a box, a sphere and a rotated box."""
    q = axis_angle_to_quat([1, 1, 0], 0.4)
    return [(tb.Box(0.4, 0.2, 0.1), np.zeros(3), np.array([1.0, 0, 0, 0]), 1000.0),
            (tb.Sphere(0.1), np.array([0.35, 0.1, 0.05]), np.array([1.0, 0, 0, 0]), 500.0),
            (tb.Box(0.1, 0.1, 0.3), np.array([0.35, 0.1, 0.3]), q, 2000.0)]


def test_attached_bodies_have_the_mass_properties_of_the_compound():
    # c attached to b, then b to a (an attachment to an attached component, notes 0.18): a now carries the
    # mass, COM and inertia of the three shapes as one rigid body. Reference: the same shapes as one compound
    # body with each part's density, computed by tumble.mass (an independent path). Order does not matter
    # (notes 0.17): attaching b to a first gives the same.
    for order in ("cb-ba", "ba-cb"):
        world = tb.World(gravity=(0, 0, 0))
        a, b, c = (world.add_body(shape, density=rho, position=x, orientation=q) for shape, x, q, rho in _parts())
        if order == "cb-ba":
            world.attach(c, b)
            world.attach(b, a)
        else:
            world.attach(b, a)
            world.attach(c, b)
        reference = tb.World(gravity=(0, 0, 0))
        masses = [tb.mass_properties(shape, rho).mass for shape, _, _, rho in _parts()]
        bodies = [reference.add_body(shape, density=rho, position=x, orientation=q) for shape, x, q, rho in _parts()]
        total = sum(masses)
        com = sum(m * body.position for m, body in zip(masses, bodies, strict=True)) / total
        inertia = sum(body.inertia_world + m * ((body.position - com) @ (body.position - com) * np.eye(3)
                                                  - np.outer(body.position - com, body.position - com))
                      for m, body in zip(masses, bodies, strict=True))
        assert a.mass == pytest.approx(total, rel=1e-14)
        np.testing.assert_allclose(a.position, com, atol=1e-14)
        np.testing.assert_allclose(a.inertia_world, inertia, atol=1e-12)
        assert {(x.index, y.index) for x, y in world.attachments} == {(1, 0), (2, 0)}
        assert b.mass == 0.0 and c.mass == 0.0     # carried by a


def test_attaching_moving_bodies_keeps_momentum_and_then_moves_rigidly():
    # Attaching two moving bodies is an inelastic merge: linear and angular momentum are kept (the reduction
    # projects the velocities onto the attachment, notes 0.17). Then the assembly tumbles freely: momentum
    # stays, the attached shapes keep their place relative to the master exactly, and they collide as part
    # of it (the sphere lands on the ground).
    world = tb.World(gravity=(0, 0, 0))
    a = world.add_body(tb.Box(0.4, 0.2, 0.1), mass=2.0, velocity=(0.1, 0, 0), angular_velocity=(0, 0, 1.0))
    b = world.add_body(tb.Sphere(0.1), mass=1.0, position=(0.4, 0, 0), velocity=(0, 0.5, 0),
                       angular_velocity=(1.0, 0, 0))
    p0, l0 = world.linear_momentum(), world.angular_momentum()
    world.attach(b, a)
    np.testing.assert_allclose(world.linear_momentum(), p0, atol=1e-14)
    np.testing.assert_allclose(world.angular_momentum(), l0, atol=1e-14)
    offset = np.linalg.norm(b.position - a.position)
    for _ in range(480):
        world.step(1 / 240)
    np.testing.assert_allclose(world.linear_momentum(), p0, atol=1e-13)
    np.testing.assert_allclose(world.angular_momentum(), l0, atol=1e-12)
    assert np.linalg.norm(b.position - a.position) == pytest.approx(offset, abs=1e-14)


def test_attached_shapes_collide_with_their_master():
    world = tb.World()
    world.add_ground()
    a = world.add_body(tb.Box(0.4, 0.2, 0.1), mass=2.0, position=(0, 0, 1.0))
    b = world.add_body(tb.Sphere(0.1), mass=1.0, position=(0.3, 0, 0.8))
    world.attach(b, a)
    for _ in range(480):
        world.step(1 / 240)
    assert b.position[2] == pytest.approx(0.1, abs=2e-3)      # the sphere rests on the ground
    assert np.linalg.norm(a.velocity) < 1e-2


def test_bad_attachments_raise_and_change_nothing():
    world, other = tb.World(), tb.World()
    a = world.add_body(tb.Sphere(0.1))
    b = world.add_body(tb.Sphere(0.1), position=(1, 0, 0))
    fixed = world.add_body(tb.Sphere(0.1), position=(3, 0, 0), fixed=True)
    o = other.add_body(tb.Sphere(0.1))
    with pytest.raises(ValueError, match="mass must be positive"):
        world.attach_point_mass(a, (0, 0, 0), -1.0)
    with pytest.raises(ValueError, match="fixed"):
        world.attach_point_mass(fixed, (3, 0, 0), 1.0)
    with pytest.raises(ValueError, match="live body of this world"):
        world.attach(o, a)
    with pytest.raises(ValueError, match="differ"):
        world.attach(a, a)
    world.attach(b, a)
    with pytest.raises(ValueError, match="attached already"):
        world.attach(b, a)
    with pytest.raises(ValueError, match="differ"):
        world.attach(a, b)        # a cycle: a is b's root
    with pytest.raises(ValueError, match="attachment"):
        world.remove_body(b)
    assert len(world.attachments) == 1 and a.mass == pytest.approx(2 * 1000.0 * 4 / 3 * np.pi * 0.1**3)


def _snapshot(world: tb.World, bodies) -> dict:
    """Each body's mass, COM, world inertia and shapes' world poses (what detach must give back)."""
    from tumble.rotations import quat_mul, quat_rotate

    g = world.model.geom
    out = {}
    for body in bodies:
        rows = np.flatnonzero(g.live("geom_maker") == body.index)
        owner = g.live("geom_body")[rows]
        live = world._live()
        shapes = [(live["x"][o] + quat_rotate(live["q"][o], g.live("geom_pos")[k]),
                   quat_mul(live["q"][o], g.live("geom_quat")[k])) for k, o in zip(rows, owner, strict=True)]
        out[body.index] = (body.mass, body.position, body.inertia_world, shapes)
    return out


@pytest.mark.parametrize("order", ["cb-ba", "ba-cb"])
def test_detach_gives_back_the_mass_properties_and_shapes(order):
    # c attached to b and b to a, in either order, then detached (c first: it rides on b) without a step
    # between: every body's mass, COM, world inertia and shapes' world poses are those it had before (exact to
    # rounding: the root, and b if it carried c, lose the parts by the parallel-axis terms they gained; 1e-13
    # for the inertia's cancellation).
    world = tb.World(gravity=(0, 0, 0))
    a, b, c = (world.add_body(shape, density=rho, position=x, orientation=q) for shape, x, q, rho in _parts())
    before = _snapshot(world, (a, b, c))
    for rider, master in ((c, b), (b, a)) if order == "cb-ba" else ((b, a), (c, b)):
        world.attach(rider, master)
    with pytest.raises(ValueError, match="detach those first"):
        world.detach(b)       # c rides on b
    world.detach(c)
    world.detach(b)
    assert world.attachments == ()
    after = _snapshot(world, (a, b, c))
    for index, (mass, com, inertia, shapes) in before.items():
        m2, com2, inertia2, shapes2 = after[index]
        assert m2 == pytest.approx(mass, rel=1e-14)
        np.testing.assert_allclose(com2, com, atol=1e-14)
        np.testing.assert_allclose(inertia2, inertia, atol=1e-13)
        for (p, q), (p2, q2) in zip(shapes, shapes2, strict=True):
            np.testing.assert_allclose(p2, p, atol=1e-14)
            np.testing.assert_allclose(q2 * np.sign(q2 @ q), q, atol=1e-14)
    world.remove_body(c)         # no longer part of an attachment
    assert len(world.bodies) == 2


def test_detach_keeps_momentum_and_the_parts_leave_with_the_rigid_velocity_field():
    # After tumbling as one, the parts separate with v_i = v + ω × (x_i − x_com) and ω: the inverse of the
    # inelastic merge, so P and L are kept (1e-13) and, in zero gravity, each part then moves freely: the
    # sphere's velocity stays the one it left with (a sphere's spin does not couple to its motion).
    world = tb.World(gravity=(0, 0, 0))
    a = world.add_body(tb.Box(0.4, 0.2, 0.1), mass=2.0, velocity=(0.1, 0, 0), angular_velocity=(0.2, 0.1, 1.0))
    b = world.add_body(tb.Sphere(0.1), mass=1.0, position=(0.4, 0, 0), velocity=(0, 0.5, 0))
    p0, l0 = world.linear_momentum(), world.angular_momentum()
    world.attach(b, a)
    for _ in range(100):
        world.step(1 / 240)
    v, w, x = a.velocity, a.angular_velocity, a.position
    xb = b.position
    world.detach(b)
    np.testing.assert_allclose(world.linear_momentum(), p0, atol=1e-13)
    np.testing.assert_allclose(world.angular_momentum(), l0, atol=1e-13)
    np.testing.assert_allclose(b.velocity, v + np.cross(w, xb - x), atol=1e-14)
    np.testing.assert_allclose(b.angular_velocity, w, atol=1e-15)
    np.testing.assert_allclose(a.velocity, v + np.cross(w, a.position - x), atol=1e-14)
    vb = b.velocity
    for _ in range(100):
        world.step(1 / 240)
    np.testing.assert_allclose(b.velocity, vb, atol=1e-14)
    np.testing.assert_allclose(b.position, xb + vb * 100 / 240, atol=1e-12)


def test_detach_from_a_fixed_master_and_bad_detach():
    world = tb.World()
    wall = world.add_body(tb.Box(1, 1, 1), fixed=True)
    ball = world.add_body(tb.Sphere(0.1), mass=1.0, position=(0.6, 0, 0))
    world.attach(ball, wall)
    with pytest.raises(ValueError, match="attached body"):
        world.detach(wall)
    with pytest.raises(TypeError, match="Body"):
        world.detach("ball")
    world.detach(ball)
    assert ball.mass == 1.0 and np.all(ball.velocity == 0.0) and wall.inv_mass == 0.0
    world.step(0.01)
    assert ball.velocity[2] == pytest.approx(-9.81 * 0.01, rel=1e-12)   # it falls again on its own
    with pytest.raises(ValueError, match="attached body"):
        world.detach(ball)
