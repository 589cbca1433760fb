"""World options read back (API.md's last paragraph, issue 54 item 5): every keyword of ``World(...)`` reads
back under its own name (on the world or ``world.settings``) and survives save_scene/load_scene; ``world.method``
is read only; the integrator changes within its family only (``conventions.INTEGRATOR_FAMILIES``);
``body.friction`` and ``body.restitution`` are settable with add_body's checks; springs take body references
as add_spring does.

Bad input raises the error type with a message naming the argument and the value, before anything changes.
"""

from __future__ import annotations

import inspect

import numpy as np
import pytest

import tumble as tb
from tumble.conventions import INTEGRATOR_FAMILIES, INTEGRATOR_NAMES
from tumble.model.settings import ContactSettings

# Every World keyword at a value other than its default (the contact options: each ContactSettings field).
NON_DEFAULT = {
    "gravity": (0.5, -0.25, -9.7),
    "integrator": "symplectic_euler",
    "robot_integrator": "rk4",
    "contact_margin": 0.004,
    "event_impacts": "sequential",
    "event_tolerance": 2e-10,
    "event_contact_band": 2e-6,
    "event_threshold": 2e-3,
    "event_ode": "adaptive",
    "event_root": "bisection",
    "friction": "pyramid",
    "friction_directions": 6,
    "solver": "apgd",
    "iterations": 7,
    "substeps": 3,
    "relax_iterations": 5,
    "tolerance": 2e-6,
    "restitution_threshold": 0.3,
    "correction": "soft",
    "contact_hertz": 40.0,
    "contact_damping_ratio": 5.0,
    "max_push_velocity": 2.0,
    "baumgarte": 0.3,
    "slop": 2e-4,
    "match_distance": 0.004,
    "sleep": False,
    "sleep_time": 0.7,
    "sleep_speed": 0.02,
    "joint_solver": "pgs",
    "joint_projection": 3,
}


def _options(world: tb.World) -> dict:
    """Every World keyword of NON_DEFAULT as the world reads it back: on the world, or on world.settings."""
    return {key: (getattr(world, key) if hasattr(world, key) else getattr(world.settings, key)) for key in NON_DEFAULT}


def _same(a: dict, b: dict) -> None:
    assert a.keys() == b.keys()
    for key in a:
        assert np.all(np.asarray(a[key]) == np.asarray(b[key])), (key, a[key], b[key])


def test_the_non_default_options_cover_every_world_keyword():
    """NON_DEFAULT names each keyword of World's signature (method apart: its own test) and each contact
    option, and differs from every default."""
    signature = inspect.signature(tb.World).parameters
    keywords = {k for k, p in signature.items() if p.kind != p.VAR_KEYWORD} - {"method"}
    contact = set(ContactSettings().as_dict())
    assert set(NON_DEFAULT) == keywords | contact
    defaults = {**{k: signature[k].default for k in keywords}, **ContactSettings().as_dict()}
    for key, value in NON_DEFAULT.items():
        assert np.any(np.asarray(value) != np.asarray(defaults[key])), key


@pytest.mark.parametrize("method", ["timestep", "event"])
def test_every_option_reads_back_and_round_trips_through_a_scene_file(tmp_path, method):
    given = dict(NON_DEFAULT)
    if method == "event":
        del given["integrator"]    # the event method takes no integrator (its ODE is event_ode's)
    world = tb.World(method=method, **given)
    world.add_ground()
    read = _options(world)
    expected = {**NON_DEFAULT, "integrator": "splitting"} if method == "event" else NON_DEFAULT
    _same(read, expected)
    assert world.method == method
    path = world.save_scene(tmp_path / "options.toml")
    loaded = tb.load_scene(path)
    assert loaded.method == method
    _same(_options(loaded), read)


def test_default_options_are_written_as_before(tmp_path):
    """A world of default options writes no robot_integrator and no [world.event] (scene files unchanged)."""
    text = tb.World().save_scene(tmp_path / "plain.toml").read_text()
    assert "robot_integrator" not in text and "[world.event]" not in text


def test_load_scene_takes_the_new_options_as_overrides(tmp_path):
    path = tb.World().save_scene(tmp_path / "plain.toml")
    world = tb.load_scene(path, robot_integrator="rk4", event_ode="adaptive")
    assert world.robot_integrator == "rk4" and world.event_ode == "adaptive"


def test_a_bad_robot_integrator_in_a_scene_file_names_its_line(tmp_path):
    path = tmp_path / "bad.toml"
    path.write_text('format = 1\n[world]\nrobot_integrator = "midpoint"\n')
    with pytest.raises(ValueError, match=r"bad.toml:3: world.robot_integrator: must be one of \['euler', 'rk4'\], "
                                         r"got 'midpoint'"):
        tb.load_scene(path)


# ------------------------------------------------------------------ method and integrator
@pytest.mark.parametrize("method", ["timestep", "event"])
def test_method_is_read_only(method):
    world = tb.World(method=method)
    other = "event" if method == "timestep" else "timestep"
    with pytest.raises(AttributeError, match=f"world.method is read only \\(this world's is '{method}', got "
                                             f"'{other}'\\): the method is chosen when the world is made, "
                                             f"e.g. World\\(method='{other}'\\)"):
        world.method = other
    assert world.method == method


def test_the_families_are_the_methods_that_step_them():
    """INTEGRATOR_FAMILIES partitions the integrators, and each family is stepped by one method class
    (step.method_for), which differs between families."""
    names = [n for family in INTEGRATOR_FAMILIES.values() for n in family]
    assert sorted(names) == sorted(INTEGRATOR_NAMES)
    classes = {}
    for family, members in INTEGRATOR_FAMILIES.items():
        kinds = {type(tb.World(integrator=n)._method).__name__ for n in members}
        assert len(kinds) == 1, family
        classes[family] = kinds.pop()
    assert len(set(classes.values())) == len(classes)


@pytest.mark.parametrize("family", list(INTEGRATOR_FAMILIES))
def test_the_integrator_changes_within_its_family(family):
    first, *others = INTEGRATOR_FAMILIES[family]
    world = tb.World(integrator=first)
    kind = type(world._method)
    for name in others:
        world.integrator = name
        assert world.integrator == name and type(world._method) is kind


def test_an_integrator_of_another_family_is_refused_naming_the_method():
    world = tb.World()
    with pytest.raises(ValueError, match=r"integrator='rk4' does not belong to this world's method: "
                                         r"method='timestep' with integrator='splitting' advances by time-stepping "
                                         r"\(splitting, symplectic_euler, implicit_gyro\), and 'rk4' by ODE "
                                         r"integration; the method is chosen when the world is made: "
                                         r"World\(integrator='rk4'\)"):
        world.integrator = "rk4"
    assert world.integrator == "splitting"
    implicit = tb.World(integrator="trapezoidal")
    with pytest.raises(ValueError, match=r"integrator='euler' does not belong to this world's method: "
                                         r"method='timestep' with integrator='trapezoidal' advances by implicit "
                                         r"integration"):
        implicit.integrator = "euler"
    with pytest.raises(ValueError, match=r"integrator must be one of .*, got 'verlet'"):
        world.integrator = "verlet"


def test_the_event_method_takes_no_integrator():
    message = (r"integrator='rk4' does not belong to method='event': the event-driven method integrates its ODE "
               r"with event_ode \(this world's: 'adaptive'; 'rk4' or 'adaptive'\), and takes no integrator; leave "
               r"integrator out, or use method='timestep'")
    with pytest.raises(ValueError, match=message):
        tb.World(method="event", integrator="rk4", event_ode="adaptive")
    world = tb.World(method="event", event_ode="adaptive")
    with pytest.raises(ValueError, match=message):
        world.integrator = "rk4"
    world.integrator = "splitting"      # what it reads: no change
    assert world.integrator == "splitting"


# ------------------------------------------------------------------ friction and restitution
def test_friction_and_restitution_are_set_checked_recorded_and_saved(tmp_path):
    world = tb.World()
    ground = world.add_ground()
    box = world.add_body(tb.Box(0.2, 0.2, 0.2), mass=1.0, position=(0, 0, 0.5))
    box.friction, box.restitution = 0.9, 0.4
    ground.friction = 0.3
    assert (box.friction, box.restitution, ground.friction) == (0.9, 0.4, 0.3)
    assert world.body_records[1]["friction"] == 0.9 and world.body_records[1]["restitution"] == 0.4
    loaded = tb.load_scene(world.save_scene(tmp_path / "m.toml"))
    assert (loaded.bodies[1].friction, loaded.bodies[1].restitution, loaded.bodies[0].friction) == (0.9, 0.4, 0.3)


@pytest.mark.parametrize(("name", "value", "error", "message"), [
    ("friction", -0.1, ValueError, "friction must be non-negative, got -0.1"),
    ("friction", float("nan"), ValueError, "friction must be finite, got nan"),
    ("friction", "0.5", TypeError, "friction must be a real number, got '0.5'"),
    ("restitution", 1.5, ValueError, r"restitution must be in \[0, 1\], got 1.5"),
    ("restitution", -0.5, ValueError, "restitution must be non-negative, got -0.5"),
    ("restitution", None, TypeError, "restitution must be a real number, got None"),
])
def test_bad_friction_or_restitution_is_refused_before_anything_changes(name, value, error, message):
    world = tb.World()
    box = world.add_body(tb.Box(0.2, 0.2, 0.2), mass=1.0, friction=0.6, restitution=0.2)
    with pytest.raises(error, match=message):
        setattr(box, name, value)
    assert (box.friction, box.restitution) == (0.6, 0.2)
    assert world.body_records[0]["friction"] == 0.6 and world.body_records[0]["restitution"] == 0.2


def test_a_resting_body_takes_its_new_friction():
    """A box at rest (asleep) on a slope held by friction slides once its friction is set below tan θ: the
    setter wakes it and its contacts combine the new value (as a box made with it does)."""
    theta = 0.3
    gravity = 9.81 * np.array([np.sin(theta), 0.0, -np.cos(theta)])   # the slope as a tilted gravity

    def world_with(mu):
        world = tb.World(gravity=gravity)
        world.add_ground(friction=0.5)
        return world, world.add_body(tb.Box(0.2, 0.2, 0.2), mass=1.0, position=(0, 0, 0.1), friction=mu)

    held, box = world_with(1.0)
    for _ in range(120):
        held.step(1 / 120)
    assert not box.awake and abs(box.position[0]) < 1e-3
    box.friction = 0.1
    assert box.awake
    for _ in range(30):
        held.step(1 / 120)
    assert box.velocity[0] > 0.1   # μ = √(0.1 · 0.5) ≈ 0.22 < tan 0.3 ≈ 0.31: it slides (√(1 · 0.5) held it)


# ------------------------------------------------------------------ springs
@pytest.mark.parametrize("make", [
    lambda a, b: tb.AxialSpring(a, b, (0, 0, 0), (1, 0, 0), 10.0),
    lambda a, b: tb.FrameSpring(a, b, (0.5, 0, 0), 10.0),
    lambda a, b: tb.MultiPointSpring([a, None, b], [(0, 0, 0), (0.5, 0, 1), (1, 0, 0)], 10.0),
])
def test_add_spring_takes_the_references_the_spring_constructors_take(make):
    """A body index is world.bodies[i] (the spring then holds that Body), as a Body handle is; the same spring
    made either way acts the same."""
    loads = []
    for by_index in (False, True):
        world = tb.World(gravity=(0, 0, 0))
        a = world.add_body(tb.Sphere(0.1), mass=1.0)
        b = world.add_body(tb.Sphere(0.1), mass=1.0, position=(1.5, 0, 0), velocity=(1.0, 0.0, 0.0))
        spring = world.add_spring(make(0, 1) if by_index else make(a, b))
        refs = spring.bodies if hasattr(spring, "bodies") else [spring.a, spring.b]
        assert [r for r in refs if r is not None] == [a, b]
        for _ in range(3):
            world.step(0.01)
        loads.append(np.concatenate([a.velocity, b.velocity]))
    assert loads[0][0] > 0.0   # a is pulled along after b
    np.testing.assert_array_equal(loads[0], loads[1])


def test_add_spring_refuses_an_index_the_world_does_not_have_before_anything_changes():
    world = tb.World()
    world.add_body(tb.Sphere(0.1))
    spring = tb.AxialSpring(0, 3, (0, 0, 0), (1, 0, 0), 10.0)
    with pytest.raises(ValueError, match=r"spring must join bodies of this world \(or None for the world\): "
                                         r"body index 3 is not one of its 1 bodies"):
        world.add_spring(spring)
    assert spring.b == 3 and not spring.bound and world.springs == ()
    elsewhere = tb.World()
    elsewhere.add_body(tb.Sphere(0.1))
    other = elsewhere.add_body(tb.Sphere(0.1))
    with pytest.raises(ValueError, match="spring must join live bodies of this world"):
        world.add_spring(tb.AxialSpring(0, other, (0, 0, 0), (1, 0, 0), 10.0))
