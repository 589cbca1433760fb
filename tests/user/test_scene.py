"""Scene files: the exact round trip, the same physics as a world built in Python, and located errors."""

from __future__ import annotations

import numpy as np
import pytest

import tumble as tb

DT = 1.0 / 240.0


def _world() -> tb.World:
    """Every shape kind, a compound, a hull, a fixed body, the ground, materials and non-default options."""
    world = tb.World(gravity=(0.1, 0.0, -9.7), integrator="splitting", contact_margin=0.004, friction="pyramid",
                     friction_directions=6, substeps=3, sleep=False)
    world.add_ground(height=-0.05, friction=0.7, restitution=0.1)
    world.add_body(tb.Box(0.2, 0.3, 0.4), density=700.0, position=(0, 0, 0.3), orientation=(0.9, 0.1, 0.2, 0.3),
                   velocity=(0.1, 0.2, -0.3), angular_velocity=(1.0, -2.0, 0.5), friction=0.3, name="box")
    world.add_body(tb.Sphere(0.1), mass=2.5, position=(0.5, 0, 0.4), restitution=0.6, name="ball")
    world.add_body(tb.Capsule(0.05, 0.2), position=(-0.5, 0, 0.2), orientation=(1, 1, 0, 0))
    world.add_body(tb.Cylinder(0.08, 0.12), mass=1.0, inertia=np.diag([0.01, 0.01, 0.004]), position=(0, 0.5, 0.2))
    world.add_body(tb.Ellipsoid(0.1, 0.07, 0.05), density=1200.0, position=(0, -0.5, 0.2), collision_group=2,
                   collision_mask=0xFFFF)
    rng = np.random.default_rng(3)
    world.add_body(tb.ConvexHull(rng.normal(size=(12, 3)) * 0.1 + 0.3), position=(0.5, 0.5, 0.3), name="rock")
    world.add_body([(tb.Sphere(0.05), (-0.1, 0, 0)), (tb.Box(0.1, 0.1, 0.1), (0.1, 0, 0), (0.9, 0, 0.1, 0))],
                   position=(-0.5, 0.5, 0.3), name="dumbbell")
    world.add_body(tb.Box(1.0, 1.0, 0.1), position=(2, 2, 0.5), orientation=(0.95, 0.0, 0.3, 0.0), fixed=True)
    for _ in range(25):  # an arbitrary state: contacts, spin, rounding
        world.step(DT)
    return world


def _assert_same_world(a: tb.World, b: tb.World) -> None:
    for name, value in a.state_arrays().items():
        np.testing.assert_array_equal(b.state_arrays()[name], value, err_msg=name)
    for field in ("mass", "inertia_body", "inv_mass", "principal_q", "friction", "restitution", "collide"):
        np.testing.assert_array_equal(b._live()[field], a._live()[field], err_msg=field)
    for field in ("geom_type", "geom_pos", "geom_quat", "geom_size", "geom_group", "geom_mask"):
        np.testing.assert_array_equal(b._geom.live(field), a._geom.live(field), err_msg=field)
    assert [x.name for x in b.bodies] == [x.name for x in a.bodies]
    np.testing.assert_array_equal(b.gravity, a.gravity)
    assert b.time == a.time and b.settings == a.settings and b.integrator == a.integrator


def test_round_trip_is_bitwise_and_the_text_is_stable(tmp_path):
    world = _world()
    path = world.save_scene(tmp_path / "scene.toml")
    back = tb.load_scene(path)
    _assert_same_world(world, back)
    again = back.save_scene(tmp_path / "again.toml")
    assert again.read_text() == path.read_text()


def test_a_loaded_scene_simulates_like_the_world_it_came_from(tmp_path):
    """Saving drops only the warm start and sleep state (documented); from a state with no contacts
    cached, the loaded world and the original step identically."""
    world = tb.World(sleep=False)
    world.add_ground()
    for k in range(4):
        world.add_body(tb.Box(0.3, 0.3, 0.3), position=(0.05 * k, 0, 0.2 + 0.35 * k), angular_velocity=(0, 0, k))
    back = tb.load_scene(world.save_scene(tmp_path / "s.toml"))
    for _ in range(50):
        world.step(DT)
        back.step(DT)
    _assert_same_world(world, back)


def test_materials_and_overrides(tmp_path):
    path = tmp_path / "m.toml"
    path.write_text('format = 1\n[materials.rubber]\nfriction = 0.9\nrestitution = 0.7\ndensity = 1100.0\n'
                    '[[bodies]]\nshape = { type = "sphere", radius = 0.1 }\nmaterial = "rubber"\n'
                    '[[bodies]]\nshape = { type = "sphere", radius = 0.1 }\nmaterial = "rubber"\nfriction = 0.2\n'
                    'position = [1.0, 0.0, 0.0]\n[run]\ndt = 0.002\n')
    world = tb.load_scene(path, solver="apgd")
    a, b = world.bodies
    assert (a.friction, a.restitution, b.friction, b.restitution) == (0.9, 0.7, 0.2, 0.7)
    assert a.mass == pytest.approx(1100.0 * 4.0 / 3.0 * np.pi * 0.1 ** 3, rel=1e-14)
    assert world.settings.solver == "apgd" and world.run_defaults == {"dt": 0.002}


BAD = [  # (text, line of the mistake, fragment of the message)
    ("format = 1\n[world]\ngravity = [0.0, 0.0]\n", 3, "world.gravity"),
    ("format = 1\n\n[[bodies]]\nshape = { type = \"sphere\", radius = 0.1 }\n\n[[bodies]]\n"
     "shape = { type = \"box\", size = [1.0, -1.0, 1.0] }\n", 7, "bodies[1].shape"),
    ("format = 1\n[[bodies]]\nshape = { type = \"sphere\", radius = 0.1 }\nmass = 0.0\n", 4, "bodies[0].mass"),
    ("format = 1\n[[bodies]]\nshape = { type = \"sphere\", radius = 0.1 }\norientation = [0.0, 0.0, 0.0, 0.0]\n",
     4, "bodies[0].orientation"),
    ("format = 1\n[world.contact]\nfriction = \"ice\"\n", 3, "friction"),
    ("format = 1\n[run]\ndt = -1.0\n", 3, "run.dt"),
    ("format = 1\n[ground]\nfriction = -0.5\n", 3, "ground.friction"),
    ("format = 1\n[[bodies]]\nshape = { type = \"sphere\", radius = 0.1 }\nrestitution = 1.5\n", 4, "restitution"),
    ("format = 1\n[[bodies]]\nparts = [\n  { type = \"sphere\", radius = 0.1 },\n  { type = \"cone\" },\n]\n",
     5, "bodies[0].parts[1]"),  # the element itself, inside the array
    ("format = 1\n[joints]\n", 2, "joints"),
    ("[world]\n", 1, "format"),
    ("format = 1\nformat = 2\n", 2, "syntax"),
    ("format = 1\n[[bodies]]\nshape = { type = \"sphere\", radius = 0.1 }\ninertia = [[1.0, 0.0, 0.0]]\n", 4,
     "inertia"),
]


@pytest.mark.parametrize(("text", "line", "fragment"), BAD, ids=[f"bad{k}" for k in range(len(BAD))])
def test_malformed_files_name_the_file_line_and_key(tmp_path, text, line, fragment):
    path = tmp_path / "bad.toml"
    path.write_text(text)
    with pytest.raises(ValueError) as err:
        tb.load_scene(path)
    message = str(err.value)
    assert message.startswith(f"{path}:{line}:"), message
    assert fragment in message and "\n" not in message


def test_missing_and_non_utf8_files(tmp_path):
    with pytest.raises(ValueError, match="could not be read"):
        tb.load_scene(tmp_path / "nothing.toml")
    path = tmp_path / "latin.toml"
    path.write_bytes(b"format = 1\n# caf\xe9\n")
    with pytest.raises(ValueError, match=r"latin.toml:2: .*not UTF-8"):
        tb.load_scene(path)
