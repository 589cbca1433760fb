"""Scene files: ``[[attachments]]`` (``World.attach``, ``attach_point_mass``), written by ``save_scene`` in the
order made with every body involved at the frame it was made in, and made again by ``load_scene``. Checked:
the round trip rebuilds every body's mass properties, pose, velocity and shapes, and the motion after it;
a hand-written point mass adds the parallel-axis term of ArtiSynth notes 0.19; bad tables are located."""

from __future__ import annotations

import numpy as np
import pytest

import tumble as tb
from tumble.rotations import quat_rotate


def _assembly() -> tb.World:
    """A chain (c on b, then b on a), point masses on a lone box and on the chain's root, a box attached and
    then detached again; stepped so that the assemblies fall and turn."""
    world = tb.World()
    world.add_ground()
    a = world.add_body(tb.Box(0.4, 0.2, 0.2), mass=2.0, position=(0, 0, 1.0), name="a",
                       angular_velocity=(0.3, 0.1, 0.2))
    b = world.add_body(tb.Sphere(0.1), mass=1.0, position=(0.3, 0, 1.0), name="b")
    c = world.add_body(tb.Box(0.1, 0.1, 0.1), mass=0.5, position=(0.3, 0.2, 1.0), name="c",
                       orientation=(0.9, 0.1, 0.3, 0.2))
    d = world.add_body(tb.Box(0.2, 0.2, 0.2), mass=1.0, position=(2, 0, 0.5), name="d")
    e = world.add_body(tb.Box(0.1, 0.3, 0.1), mass=0.4, position=(-0.3, 0, 1.0), name="e")
    world.attach_point_mass(d, (2.1, 0.0, 0.5), 0.7)
    world.attach(c, b)
    world.attach(e, a)
    world.attach(b, a)
    world.attach_point_mass(b, (-0.2, 0, 1.0), 0.3)    # carried by b's root, a
    for _ in range(20):
        world.step(1 / 240)
    world.detach(e)
    for _ in range(10):
        world.step(1 / 240)
    return world


def _shape_poses(world: tb.World) -> np.ndarray:
    """Every shape's world position (g, 3) [m], by the body that made it (order-independent of hand-overs)."""
    live = world._live()
    g = world.model.geom
    order = np.argsort(g.live("geom_maker"), kind="stable")
    owner = g.live("geom_body")[order]
    return np.array([live["x"][o] + quat_rotate(live["q"][o], p) for o, p in zip(owner, g.live("geom_pos")[order],
                                                                               strict=True)])


def test_round_trip_rebuilds_the_assemblies(tmp_path):
    # Loading makes the attachments again from the bodies as made, so the mass properties are recombined
    # as they were: equal to rounding (1e-12), and the motion after it too.
    world = _assembly()
    loaded = tb.load_scene(world.save_scene(tmp_path / "assembly.toml"))
    assert [(x.name, y.name) for x, y in loaded.attachments] == [(x.name, y.name) for x, y in world.attachments]
    assert [(x.name, y.name) for x, y in world.attachments] == [("c", "a"), ("b", "a")]
    for one, two in zip(world.bodies, loaded.bodies, strict=True):
        for field in ("mass", "position", "orientation", "velocity", "angular_velocity", "inertia_world"):
            np.testing.assert_allclose(getattr(two, field), getattr(one, field), rtol=0, atol=1e-12,
                                       err_msg=f"{one.name}.{field}")
    np.testing.assert_allclose(_shape_poses(loaded), _shape_poses(world), rtol=0, atol=1e-12)
    for _ in range(60):
        world.step(1 / 240)
        loaded.step(1 / 240)
    for one, two in zip(world.bodies, loaded.bodies, strict=True):
        np.testing.assert_allclose(two.position, one.position, rtol=0, atol=1e-10)
    # the detached body is free in both, and the lone box keeps its point mass
    assert loaded.bodies[5].mass == 0.4 and loaded.bodies[4].mass == pytest.approx(1.7, abs=1e-15)


def test_hand_written_point_mass_adds_the_parallel_axis_term(tmp_path):
    # A 1 kg, 0.2 m box with 0.5 kg at r = (0.1, 0, 0) from its centre: the body becomes 1.5 kg, its COM moves
    # by m r/(M + m), and its inertia about the new COM grows by M m/(M + m) (|r|² 1 − r rᵀ) (notes 0.19).
    path = tmp_path / "point.toml"
    path.write_text('format = 1\n\n[[bodies]]\nname = "box"\nshape = { type = "box", size = [0.2, 0.2, 0.2] }\n'
                    'mass = 1.0\nposition = [0.0, 0.0, 1.0]\n\n'
                    '[[attachments]]\nbody = "box"\npoint = [0.1, 0.0, 1.0]\nmass = 0.5\n')
    world = tb.load_scene(path)
    box = world.bodies[0]
    r = np.array([0.1, 0.0, 0.0])
    big, small = 1.0, 0.5
    expected = big * 0.04 / 6 * np.eye(3) + big * small / (big + small) * (r @ r * np.eye(3) - np.outer(r, r))
    assert box.mass == pytest.approx(1.5, rel=1e-15)
    np.testing.assert_allclose(box.position, [small * 0.1 / 1.5, 0.0, 1.0], rtol=0, atol=1e-15)
    np.testing.assert_allclose(box.inertia_world, expected, rtol=1e-13, atol=1e-16)


@pytest.mark.parametrize("table, message", [
    ('master = "b"', "needs body"),
    ('body = "a"', "give master"),
    ('body = "a"\nmaster = "b"\nmass = 1.0', "not both"),
    ('body = "a"\npoint = [0, 0, 0]', "needs mass"),
    ('body = "a"\npoint = [0, 0]\nmass = 1.0', "point"),
    ('body = "a"\npoint = [0, 0, 0]\nmass = -1.0', "mass"),
    ('body = "nobody"\nmaster = "b"', "names no body"),
    ('body = "world"\nmaster = "b"', "not the world"),
    ('body = "a"\nmaster = "a"', "must differ from master"),
    ('body = "a"\nmaster = "b"\nrigid = true', "unknown key"),
])
def test_bad_attachment_tables_are_located(tmp_path, table, message):
    path = tmp_path / "bad.toml"
    path.write_text('format = 1\n\n[[bodies]]\nname = "a"\nshape = { type = "sphere", radius = 0.1 }\n\n'
                    '[[bodies]]\nname = "b"\nshape = { type = "sphere", radius = 0.1 }\nposition = [1, 0, 0]\n\n'
                    f'[[attachments]]\n{table}\n')
    with pytest.raises(ValueError, match=rf"bad.toml:\d+: attachments\[0\].*{message}"):
        tb.load_scene(path)
