"""Every rejected input: error type, a message naming the argument, and nothing half-added."""

import subprocess
import sys

import numpy as np
import pytest

import tumble as tb

NAN = float("nan")


def world_with_one_body():
    world = tb.World()
    world.add_body(tb.Box(1, 1, 1), name="first")
    return world


def frozen(world):
    """Everything add_body could touch, copied."""
    return (world.body_count, world.model.geom.count, world.model.polytopes.arrays()["vertices"].shape,
            list(world.model.names), dict(world._name_index), {k: v.copy() for k, v in world._live().items()})


BAD_ADD_BODY = [
    # (kwargs, error type, text that must appear in the message)
    (dict(shape="box"), TypeError, "shape"),
    (dict(shape=[]), ValueError, "shape"),
    (dict(shape=[(tb.Sphere(1.0), (0, 0))]), ValueError, "position"),
    (dict(shape=[(tb.Sphere(1.0), (0, 0, 0), (0, 0, 0, 0))]), ValueError, "orientation"),
    (dict(shape=[("sphere", (0, 0, 0))]), TypeError, "shape[0][0]"),
    (dict(density=-1.0), ValueError, "density"),
    (dict(density=0.0), ValueError, "density"),
    (dict(density=NAN), ValueError, "density"),
    (dict(density="heavy"), TypeError, "density"),
    (dict(mass=0.0), ValueError, "mass"),
    (dict(mass=1.0, density=1.0), ValueError, "density"),
    (dict(inertia=np.eye(3)), ValueError, "inertia"),
    (dict(mass=1.0, inertia=-np.eye(3)), ValueError, "inertia"),
    (dict(mass=1.0, inertia=[[1, 2, 0], [0, 1, 0], [0, 0, 1]]), ValueError, "inertia"),
    (dict(mass=1.0, inertia=np.diag([1.0, 1.0, 5.0])), ValueError, "triangle inequality"),
    (dict(position=(0, 0, NAN)), ValueError, "position"),
    (dict(position=(0, 0)), ValueError, "position"),
    (dict(position="origin"), TypeError, "position"),
    (dict(orientation=(0, 0, 0, 0)), ValueError, "orientation"),
    (dict(orientation=(1, 0, 0)), ValueError, "orientation"),
    (dict(velocity=(np.inf, 0, 0)), ValueError, "velocity"),
    (dict(angular_velocity=(1, 2)), ValueError, "angular_velocity"),
    (dict(friction=-0.1), ValueError, "friction"),
    (dict(restitution=1.5), ValueError, "restitution"),
    (dict(restitution=-0.5), ValueError, "restitution"),
    (dict(fixed="yes"), TypeError, "fixed"),
    (dict(fixed=True, velocity=(1, 0, 0)), ValueError, "fixed"),
    (dict(name=3), TypeError, "name"),
    (dict(name="first"), ValueError, "name"),
    (dict(collide=1), TypeError, "collide"),
    (dict(collision_group=-1), ValueError, "collision_group"),
    (dict(collision_mask=2**32), ValueError, "collision_mask"),
    (dict(collision_mask=1.5), TypeError, "collision_mask"),
]


@pytest.mark.parametrize(("kwargs", "error", "text"), BAD_ADD_BODY)
def test_add_body_rejects_bad_input_and_changes_nothing(kwargs, error, text):
    world = world_with_one_body()
    before = frozen(world)
    kwargs = dict(kwargs)
    shape = kwargs.pop("shape", tb.Box(0.2, 0.4, 0.8))
    with pytest.raises(error, match=None) as info:
        world.add_body(shape, **kwargs)
    assert text in str(info.value)
    after = frozen(world)
    assert after[:5] == before[:5]
    for name, arr in before[5].items():
        np.testing.assert_array_equal(after[5][name], arr)


@pytest.mark.parametrize(("make", "error", "text"), [
    (lambda: tb.Sphere(0.0), ValueError, "radius"),
    (lambda: tb.Sphere(-1.0), ValueError, "radius"),
    (lambda: tb.Sphere(NAN), ValueError, "radius"),
    (lambda: tb.Sphere("1"), TypeError, "radius"),
    (lambda: tb.Box(1, 0, 1), ValueError, "ly"),
    (lambda: tb.Box(1, 1, np.inf), ValueError, "lz"),
    (lambda: tb.Capsule(0.1, -1), ValueError, "length"),
    (lambda: tb.Cylinder(0.1, 0), ValueError, "height"),
    (lambda: tb.Ellipsoid(1, 1, 0), ValueError, "c"),
    (lambda: tb.ConvexHull([[0, 0, 0], [1, 0, 0], [0, 1, 0]]), ValueError, "points"),
    (lambda: tb.ConvexHull([[0, 0, 0], [1, 0, 0], [0, 1, 0], [1, 1, 0]]), ValueError, "points"),
    (lambda: tb.ConvexHull([[0, 0, 0], [1, 1, 1], [2, 2, 2], [3, 3, 3], [4, 4, 4]]), ValueError, "points"),
    (lambda: tb.ConvexHull([[0, 0, 0], [1, 0, 0], [0, 1, 0], [0, 0, NAN]]), ValueError, "points"),
    (lambda: tb.ConvexHull("cube"), TypeError, "points"),
    (lambda: tb.mass_properties(tb.Box(1, 1, 1), density=0), ValueError, "density"),
    (lambda: tb.mass_properties("box"), TypeError, "shape"),
    (lambda: tb.spatial_inertia(1.0, (0, 0, 0), np.zeros((3, 3))), ValueError, "inertia"),
    (lambda: tb.spatial_inertia(-1.0, (0, 0, 0), np.eye(3)), ValueError, "mass"),
    (lambda: tb.World(gravity=(0, 0, NAN)), ValueError, "gravity"),
    (lambda: tb.World(integrator="verlet"), ValueError, "integrator"),
    (lambda: tb.World(integrator=3), TypeError, "integrator"),
    (lambda: tb.World(contact_margin=-0.01), ValueError, "contact_margin"),
    (lambda: tb.World().add_ground(height=NAN), ValueError, "height"),
    (lambda: tb.World().add_ground(friction=-1), ValueError, "friction"),
    (lambda: tb.ode(np.zeros(2), 0.0, 1.0, lambda t, y: y, method="rk45"), ValueError, "method"),
    (lambda: tb.ode(np.zeros(2), 1.0, 0.0, lambda t, y: y), ValueError, "t1"),
])
def test_constructors_reject_bad_input(make, error, text):
    with pytest.raises(error) as info:
        make()
    assert text in str(info.value)


@pytest.mark.parametrize(("act", "error", "text"), [
    (lambda w, b: w.step(0.0), ValueError, "dt"),
    (lambda w, b: w.step(-1e-3), ValueError, "dt"),
    (lambda w, b: w.step(NAN), ValueError, "dt"),
    (lambda w, b: w.step("0.01"), TypeError, "dt"),
    (lambda w, b: w.simulate(1.0, 0.3), ValueError, "duration"),
    (lambda w, b: w.simulate(-1.0, 0.1), ValueError, "duration"),
    (lambda w, b: w.simulate(1.0, 0.1, record_every=0), ValueError, "record_every"),
    (lambda w, b: w.body("missing"), ValueError, "missing"),
    (lambda w, b: w.add_force("not callable"), TypeError, "fn"),
    (lambda w, b: w.angular_momentum(point=(0, 0)), ValueError, "point"),
    (lambda w, b: w.array_to_state(np.zeros(5)), ValueError, "y"),
    (lambda w, b: setattr(w, "gravity", (0, 0)), ValueError, "gravity"),
    (lambda w, b: setattr(b, "position", (0, NAN, 0)), ValueError, "position"),
    (lambda w, b: setattr(b, "orientation", (0, 0, 0, 0)), ValueError, "orientation"),
    (lambda w, b: setattr(b, "velocity", "fast"), TypeError, "velocity"),
    (lambda w, b: b.apply_force((1, 2)), ValueError, "f"),
    (lambda w, b: b.apply_force((1, 2, 3), point=(NAN, 0, 0)), ValueError, "point"),
    (lambda w, b: b.apply_torque((1, 2, 3, 4)), ValueError, "tau"),
    (lambda w, b: b.apply_impulse((1, 2, NAN)), ValueError, "j"),
])
def test_world_and_body_reject_bad_input(act, error, text):
    world = tb.World()
    body = world.add_body(tb.Sphere(0.5))
    state = world.state_arrays()
    with pytest.raises(error) as info:
        act(world, body)
    assert text in str(info.value)
    for k, v in world.state_arrays().items():
        np.testing.assert_array_equal(v, state[k])
    assert world.time == 0.0


def test_fixed_body_velocity_cannot_be_set():
    world = tb.World()
    wall = world.add_body(tb.Box(1, 1, 1), fixed=True)
    with pytest.raises(ValueError, match="velocity"):
        wall.velocity = (1, 0, 0)


def test_non_unit_quaternion_is_normalized():
    world = tb.World()
    body = world.add_body(tb.Sphere(1.0), orientation=(2, 0, 0, 0))
    np.testing.assert_array_equal(body.orientation, (1, 0, 0, 0))


def test_trajectory_load_rejects_other_files(tmp_path):
    other = tmp_path / "other.npz"
    np.savez(other, a=np.zeros(3))
    with pytest.raises(ValueError, match="not a tumble trajectory"):
        tb.Trajectory.load(other)
    garbage = tmp_path / "garbage.npz"
    garbage.write_bytes(b"not a zip file")
    with pytest.raises(ValueError, match="garbage.npz"):
        tb.Trajectory.load(garbage)


@pytest.mark.parametrize("argv", [["demo", "--dt", "-1"], ["demo", "--duration", "abc"], ["fly"], [], ["bench", "S9"]])
def test_cli_user_errors_print_one_line_and_exit_2(argv):
    proc = subprocess.run([sys.executable, "-m", "tumble", *argv], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2
    assert len(proc.stderr.strip().splitlines()) == 1
    assert "Traceback" not in proc.stderr
