"""The material extras (rolling_friction, torsional_friction, contact_stiffness, contact_dissipation;
docs/materials.md) through the API: add_body, add_ground, the Body properties, scene files and save_scene.

Bad input raises ValueError (TypeError for a wrong type) naming the argument and showing the value, before
anything changes. Nothing here steps a world but the round trip, so the file compiles little.
"""

from __future__ import annotations

import numpy as np
import pytest

import tumble as tb

EXTRAS = ("rolling_friction", "torsional_friction", "contact_stiffness", "contact_dissipation")
NAN, INF = float("nan"), float("inf")

BAD = [
    ("rolling_friction", -0.1, ValueError, "rolling_friction must be non-negative, got -0.1"),
    ("rolling_friction", NAN, ValueError, "rolling_friction must be finite, got nan"),
    ("rolling_friction", "0.1", TypeError, "rolling_friction must be a real number, got '0.1'"),
    ("torsional_friction", -1e-9, ValueError, "torsional_friction must be non-negative, got -1e-09"),
    ("torsional_friction", INF, ValueError, "torsional_friction must be finite, got inf"),
    ("contact_stiffness", 0.0, ValueError, "contact_stiffness must be positive [N/m], or None for a rigid contact, "
                                           "got 0.0"),
    ("contact_stiffness", -5.0, ValueError, "contact_stiffness must be positive [N/m]"),
    ("contact_stiffness", 1e-320, ValueError, "contact_stiffness must be positive [N/m]"),
    ("contact_stiffness", INF, ValueError, "contact_stiffness must be finite, got inf"),
    ("contact_stiffness", NAN, ValueError, "contact_stiffness must be finite, got nan"),
    ("contact_stiffness", True, TypeError, "contact_stiffness must be a real number, got True"),
    # the ranges of docs/conventions.md "Limits" (issue 53 item 5: these values divided by zero in the step)
    ("contact_stiffness", 1e-300, ValueError, "contact_stiffness must be in [0.001, 1e+15] N/m "
                                              "(docs/conventions.md \"Limits\"), or None for a rigid contact, "
                                              "got 1e-300"),
    ("contact_stiffness", 1e16, ValueError, "contact_stiffness must be in [0.001, 1e+15] N/m"),
    ("rolling_friction", 1e200, ValueError, "rolling_friction must be at most 1e+06 m, got 1e+200"),
    ("torsional_friction", 2e6, ValueError, "torsional_friction must be at most 1e+06 m, got 2000000.0"),
    ("contact_dissipation", 1e300, ValueError, "contact_dissipation must be at most 1e+06 s/m, got 1e+300"),
    ("contact_dissipation", -0.5, ValueError, "contact_dissipation must be non-negative, got -0.5"),
    ("contact_dissipation", -INF, ValueError, "contact_dissipation must be finite, got -inf"),
]


def _world(**options) -> tb.World:
    world = tb.World(**options)
    world.add_ground(rolling_friction=0.001)
    world.add_body(tb.Sphere(0.1), position=(0, 0, 0.1), name="ball", torsional_friction=0.002,
                   contact_stiffness=1e5, contact_dissipation=0.3)
    return world


def _frozen(world: tb.World) -> dict:
    live = world._live()
    return {"bodies": world.body_count, "records": [dict(r) for r in world.body_records],
            **{key: live[key].copy() for key in EXTRAS + ("friction", "x")}}


def _refused(world: tb.World, act, error: type, message: str) -> None:
    before = _frozen(world)
    with pytest.raises(error) as info:
        act()
    assert message in str(info.value), str(info.value)
    after = _frozen(world)
    assert after["bodies"] == before["bodies"]
    assert [sorted(r.items(), key=str) for r in after["records"]] == [sorted(r.items(), key=str)
                                                                        for r in before["records"]]
    for key in EXTRAS + ("friction", "x"):
        np.testing.assert_array_equal(after[key], before[key], err_msg=key)


@pytest.mark.parametrize("name, value, error, message", BAD, ids=[f"{b[0]}={b[1]!r}" for b in BAD])
def test_bad_values_are_refused_everywhere_before_anything_changes(name, value, error, message):
    world = _world()
    _refused(world, lambda: world.add_body(tb.Box(0.1, 0.1, 0.1), **{name: value}), error, message)
    _refused(world, lambda: world.add_ground(height=-1.0, name="floor", **{name: value}), error, message)
    for body in world.bodies:
        _refused(world, lambda body=body: setattr(body, name, value), error, message)


def test_defaults_and_properties_read_and_set():
    """Zero and rigid by default; the properties read what was given, setters write the row and the record
    (which ``save_scene`` writes), and ``contact_stiffness = None`` makes a body rigid again."""
    world = tb.World()
    ground = world.add_ground()
    box = world.add_body(tb.Box(0.1, 0.1, 0.1))
    for body in (ground, box):
        assert (body.rolling_friction, body.torsional_friction, body.contact_stiffness,
                body.contact_dissipation) == (0.0, 0.0, None, 0.0)
    box.rolling_friction, box.torsional_friction = 0.003, 0.004
    box.contact_stiffness, box.contact_dissipation = 2.5e4, 0.7
    ground.contact_stiffness = 1e6
    assert (box.rolling_friction, box.torsional_friction, box.contact_stiffness, box.contact_dissipation) == (
        0.003, 0.004, 2.5e4, 0.7)
    assert ground.contact_stiffness == 1e6
    record = world.body_records[1]
    assert {key: record[key] for key in EXTRAS} == {"rolling_friction": 0.003, "torsional_friction": 0.004,
                                                    "contact_stiffness": 2.5e4, "contact_dissipation": 0.7}
    box.contact_stiffness = None
    assert box.contact_stiffness is None and world.body_records[1]["contact_stiffness"] is None


def test_a_sleeping_body_wakes_when_its_material_changes():
    world = tb.World()
    ground = world.add_ground()
    box = world.add_body(tb.Box(0.1, 0.1, 0.1), position=(0, 0, 0.05))
    box.awake = False
    box.rolling_friction = 0.01
    assert box.awake
    box.awake = False
    ground.torsional_friction = 0.01   # a fixed body's change wakes every body: some may rest on it
    assert box.awake


@pytest.mark.parametrize("options", [{"solver": "apgd"}, {"solver": "cg", "friction": "none"},
                                     {"solver": "lemke", "friction": "pyramid"}])
def test_other_solvers_refuse_rolling_and_torsional_friction(options):
    """Only the Gauss–Seidel sweep builds the angular rows: another solver refuses a non-zero value at once,
    naming the argument and the solver; zero is accepted, and so is a compliant contact (every solver solves
    its row) except under the soft correction, whose relax pass only the sweep can hold it in."""
    world = tb.World(**options)
    world.add_ground(rolling_friction=0.0, contact_stiffness=1e5)
    ball = world.add_body(tb.Sphere(0.1), position=(0, 0, 0.1))
    solver = options["solver"]
    for name in ("rolling_friction", "torsional_friction"):
        needs = f"{name} must be 0 with solver={solver!r}: its rows are built by the Gauss–Seidel sweep of the " \
                f"default solver 'pgs'; got 0.01"
        _refused(world, lambda name=name: world.add_body(tb.Sphere(0.1), **{name: 0.01}), ValueError, needs)
        _refused(world, lambda name=name: world.add_ground(name="g2", **{name: 0.01}), ValueError, needs)
        _refused(world, lambda name=name: setattr(ball, name, 0.01), ValueError, needs)
    soft = tb.World(correction="soft", **options)
    _refused(soft, lambda: soft.add_ground(contact_stiffness=1e5), ValueError,
             f"contact_stiffness must be None (rigid) with correction='soft' and solver={solver!r}")


def test_scene_files_take_the_extras_in_bodies_ground_and_materials(tmp_path):
    path = tmp_path / "scene.toml"
    path.write_text('format = 1\n[materials.rubber]\nrolling_friction = 0.002\ncontact_stiffness = 5e4\n'
                    'contact_dissipation = 0.4\n[ground]\ntorsional_friction = 0.003\ncontact_stiffness = 1e6\n'
                    '[[bodies]]\nshape = { type = "sphere", radius = 0.1 }\nmaterial = "rubber"\n'
                    'contact_dissipation = 0.6\n')
    world = tb.load_scene(path)
    ground, ball = world.bodies
    assert (ground.torsional_friction, ground.contact_stiffness, ground.rolling_friction) == (0.003, 1e6, 0.0)
    assert (ball.rolling_friction, ball.contact_stiffness, ball.contact_dissipation) == (0.002, 5e4, 0.6)
    back = tb.load_scene(world.save_scene(tmp_path / "again.toml"))
    for a, b in zip(world.bodies, back.bodies, strict=True):
        assert [getattr(a, key) for key in EXTRAS] == [getattr(b, key) for key in EXTRAS]


def test_a_scene_without_extras_is_written_as_before(tmp_path):
    """Defaults are not written, so existing scene files and their saved text stay as they were."""
    world = tb.World()
    world.add_ground()
    world.add_body(tb.Sphere(0.1), position=(0, 0, 0.1))
    text = world.save_scene(tmp_path / "s.toml").read_text()
    assert not any(key in text for key in EXTRAS)


@pytest.mark.parametrize("where, line, message", [
    ("[[bodies]]\nshape = { type = \"sphere\", radius = 0.1 }\nrolling_friction = -0.1\n", 4,
     "bodies[0].rolling_friction: must be non-negative, got -0.1"),
    ("[ground]\ncontact_stiffness = 0.0\n", 3, "ground.contact_stiffness: must be positive, got 0.0"),
    ("[materials.soft]\ncontact_dissipation = -1.0\n", 3,
     "materials.soft.contact_dissipation: must be non-negative, got -1.0"),
    ("[materials.soft]\ntorsional_friction = nan\n", 3, "materials.soft.torsional_friction: must be finite"),
    ("[world.contact]\nsolver = \"apgd\"\n[[bodies]]\nshape = { type = \"sphere\", radius = 0.1 }\n"
     "torsional_friction = 0.01\n", 6, "bodies[0].torsional_friction: must be 0 with solver='apgd'"),
])
def test_scene_files_refuse_bad_extras_at_their_line(tmp_path, where, line, message):
    path = tmp_path / "bad.toml"
    path.write_text("format = 1\n" + where)
    with pytest.raises(ValueError) as info:
        tb.load_scene(path)
    assert str(info.value).startswith(f"{path}:{line}: "), str(info.value)
    assert message in str(info.value), str(info.value)


@pytest.mark.parametrize("extras", [
    {"contact_stiffness": 1e-3, "contact_dissipation": 1e6}, {"contact_stiffness": 1e15, "contact_dissipation": 1e6},
    {"rolling_friction": 1e6, "torsional_friction": 1e6},
], ids=["least stiffness", "largest stiffness", "largest rolling and torsional"])
def test_the_ends_of_the_material_ranges_step(extras):
    """Issue 53 item 5: at the ends of the accepted ranges, on both sides of the contact, the step raises no
    ZeroDivisionError (k = 1e-300 and μ_r = 1e200 on both sides did, step after step) and stays finite."""
    world = tb.World()
    world.add_ground(**extras)
    ball = world.add_body(tb.Sphere(0.1), position=(0, 0, 0.099), velocity=(1.0, 0.0, 0.0), **extras)
    for _ in range(20):
        world.step(1 / 240)
    assert np.all(np.isfinite(ball.position)) and np.all(np.isfinite(ball.velocity))
