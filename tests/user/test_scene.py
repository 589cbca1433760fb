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
        np.testing.assert_array_equal(b.model.geom.live(field), a.model.geom.live(field), err_msg=field)
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


SPHERE = "format = 1\n[[bodies]]\nname = \"a\"\nshape = { type = \"sphere\", radius = 0.1 }\n"
"""A file with one named sphere: lines 1-4 (the next [[bodies]] starts on line 5)."""

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
    # a mistake far down in a longer file, inside an inline table
    (SPHERE + "[[bodies]]\nshape = { type = \"sphere\", radius = 0.1 }\n"
     "[[bodies]]\nname = \"c\"\nshape = { type = \"sphere\", radius = -1.0 }\n", 9,
     "bodies[2].shape.radius: must be positive, got -1.0"),
    (SPHERE + "[[bodies]]\nshape = { type = \"sphere\", radius = inf }\n", 6, "bodies[1].shape.radius: must be finite"),
    ("format = 1\n[[bodies]]\nshape = { type = \"sphere\", radius = 0.1 }\nposition = [0.0, \"1\", 0.0]\n", 4,
     "bodies[0].position[1]: must be a number"),
    ("format = 2\n", 1, "newer"),
    ("format = 1\n[[bodies]]\nshape = { type = \"cone\", radius = 0.1 }\n", 3, "bodies[0].shape.type: unknown shape"),
    ("format = 1\n[[bodies]]\nshape = { type = \"sphere\", radius = 0.1 }\nparts = []\n", 4, "not both"),
    ("format = 1\n\n[[bodies]]\nname = \"x\"\n", 3, "bodies[0]: a body needs shape"),
    ("format = 1\n[[bodies]]\nshape = { type = \"sphere\", radius = 0.1 }\nmaterial = \"steel\"\n", 4,
     "bodies[0].material: unknown material 'steel'"),
    (SPHERE + "[[bodies]]\nshape = { type = \"sphere\", radius = 0.1 }\nname = \"a\"\n", 7,
     "bodies[1].name: duplicate name 'a'"),
    ("format = 1\n[[bodies]]\nshape = { type = \"sphere\", radius = 0.1 }\ndensity = 1.0\nmass = 1.0\n", 5,
     "bodies[0].mass: give density or mass"),
    ("format = 1\n[[bodies]]\nshape = { type = \"sphere\", radius = 0.1 }\ninertia = [[1.0, 0, 0], [0, 1.0, 0], "
     "[0, 0, 1.0]]\n", 4, "bodies[0].inertia: inertia needs mass"),
    ("format = 1\n[world.contact]\nsolver = \"pgs\"\nwarp = 9\n", 4, "world.contact.warp: unknown contact option"),
    ("format = 1\n[world.contact]\nsolver = \"cg\"\n", 3, "world.contact.solver"),
    ("format = 1\n[[bodies]]\nshape = { type = \"sphere\", radius = 0.1 }\nvelocty = [0.0, 0.0, 0.0]\n", 4,
     "did you mean 'velocity'"),
    ("format = 1\n[[bodies]]\nshape = { type = \"sphere\", radius = 0.1 }\nfixed = true\nvelocity = [1.0, 0, 0]\n",
     5, "bodies[0].velocity: a fixed body cannot move"),
    ("format = 1\n[[bodies]]\nshape = { type = \"hull\", points = [[0, 0, 0], [1, 0, 0], [0, 1, 0], [1, 1, 0]] }\n",
     3, "bodies[0].shape.points"),  # coplanar: the ConvexHull's own error, located
    ("format = 1\n[world]\ngravity = \"down\"\n", 3, "world.gravity: must be an array of 3 numbers"),
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


def test_a_scene_saved_mid_run_steps_on_like_the_original_with_a_cold_start(tmp_path):
    """From an arbitrary state (after 25 steps with contacts), the loaded world and the original, its warm
    start dropped (what saving leaves out), step 50 more steps bitwise alike."""
    world = _world()
    back = tb.load_scene(world.save_scene(tmp_path / "mid.toml"))
    world._bodies_changed()  # the original without its contacts' warm start, as documented
    for _ in range(50):
        world.step(DT)
        back.step(DT)
    _assert_same_world(world, back)
    assert world.kinetic_energy() > 0.0


def test_the_saved_quaternion_is_taken_as_written(tmp_path):
    """add_body normalizes; a saved unit quaternion whose renormalization would move its last bit must
    still reload bitwise, while a hand-written non-unit one is normalized."""
    rng = np.random.default_rng(0)
    unit = (q / np.sqrt(q @ q) for q in rng.normal(size=(100, 4)))
    changed = next(q for q in unit if not np.array_equal(q / np.sqrt(q @ q), q))
    world = tb.World()
    body = world.add_body(tb.Sphere(0.1))
    world.state.body.live("q")[0] = changed  # a state the integrator could leave
    back = tb.load_scene(world.save_scene(tmp_path / "q.toml"))
    np.testing.assert_array_equal(back.bodies[0].orientation, body.orientation)
    path = tmp_path / "hand.toml"
    path.write_text('format = 1\n[[bodies]]\nshape = { type = "sphere", radius = 0.1 }\n'
                    'orientation = [2.0, 0.0, 0.0, 0.0]\n')
    np.testing.assert_array_equal(tb.load_scene(path).bodies[0].orientation, [1.0, 0.0, 0.0, 0.0])


def test_removed_bodies_a_ground_in_the_middle_and_run_defaults_round_trip(tmp_path):
    world = tb.World()
    first = world.add_body(tb.Sphere(0.1), name="gone")
    world.add_body(tb.Box(0.1, 0.2, 0.3), position=(0, 0, 1), name="kept")
    world.add_ground(0.25, name=None)
    world.add_body(tb.Sphere(0.2), position=(1, 0, 1))
    world.remove_body(first)
    world.run_defaults = {"dt": 0.002, "duration": 1.0, "record_every": 5}
    path = world.save_scene(tmp_path / "r.toml")
    back = tb.load_scene(path)
    assert [b.name for b in back.bodies] == ["kept", None, None]
    assert back.run_defaults == world.run_defaults
    _assert_same_world(world, back)
    assert back.save_scene(tmp_path / "r2.toml").read_text() == path.read_text()
