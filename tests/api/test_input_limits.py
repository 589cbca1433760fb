"""Extreme and non-finite input to the Python API: a clear error naming the argument and showing the value,
raised before anything changes (issue 31, item 2), and the range of sizes, masses, densities and inertias
(``_checks``: LENGTH_MIN … INERTIA_RATIO_MAX; docs/conventions.md, "Limits").

Nothing here steps a world: every check runs when the value is given, so the file compiles no kernel beyond
the state-vector packing that ``state_to_array``/``array_to_state`` share with tests/physics.
"""

from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import tumble as tb
from tumble import _checks
from tumble.collision.polytope import polytope_of

NAN, INF = float("nan"), float("inf")
NON_FINITE = st.sampled_from([NAN, INF, -INF])
OVERFLOWING = st.floats(1e300, 1.7e308)
"""Finite, but any product with a mass, a length or another such value leaves float64."""
FAST = settings(max_examples=40, deadline=None)


def _world() -> tb.World:
    """Two moving bodies (one a compound) and the ground, with a velocity and a load set."""
    world = tb.World()
    world.add_ground()
    world.add_body(tb.Box(0.4, 0.3, 0.2), name="box", position=(0, 0, 1), velocity=(1, 0, 0))
    world.add_body([(tb.Sphere(0.1), (0, 0, 0.2)), (tb.Capsule(0.05, 0.3), (0, 0, -0.1), (1, 0, 0, 0))],
                   position=(1, 0, 1), angular_velocity=(0, 0, 2))
    world.bodies[1].apply_force((0, 0, 5))
    return world


def _frozen(world: tb.World) -> dict:
    """Everything a refused call could have changed: the snapshot, the counts, the bodies' parameters."""
    live = world._live()
    return {"snapshot": world.snapshot(), "bodies": world.body_count, "geoms": world.model.geom.count,
            "names": list(world.model.names), "gravity": world.gravity,
            "params": {k: live[k].copy() for k in ("mass", "inv_mass", "inertia_body", "friction")}}


def _assert_same(a, b) -> None:
    if isinstance(a, dict):
        assert a.keys() == b.keys()
        for key in a:
            _assert_same(a[key], b[key])
    elif isinstance(a, np.ndarray):
        np.testing.assert_array_equal(a, b)
    else:
        assert a == b


def _refused(world: tb.World, act, error: type, name: str) -> str:
    """``act()`` raises ``error`` whose message names ``name``, and ``world`` is as it was; the message."""
    before = _frozen(world)
    with pytest.raises(error) as info:
        act()
    message = str(info.value)
    assert name in message, message
    _assert_same(_frozen(world), before)
    return message


# ---------------------------------------------------------------------------------------------------------------
# The reproductions: each crashed or was accepted before.
# ---------------------------------------------------------------------------------------------------------------

def test_a_box_of_1e_minus_120_m_is_refused_naming_lx():
    # was accepted, then ZeroDivisionError
    with pytest.raises(ValueError, match=r"^lx must be in \[1e-06, 1e\+06\] m, got 1e-120$"):
        tb.Box(1e-120, 1, 1)


def test_a_sphere_of_1e200_m_is_refused_naming_radius():
    # was accepted, then OverflowError in the mass properties
    with pytest.raises(ValueError, match=r"^radius must be in .* m, got 1e\+200$"):
        tb.Sphere(1e200)


def test_a_density_of_1e308_is_refused_before_the_mass_properties():
    # was LinAlgError "Eigenvalues did not converge"
    world = _world()
    message = _refused(world, lambda: world.add_body(tb.Box(1, 1, 1), density=1e308), ValueError, "density")
    assert message.startswith("density must be in [0.001, 100000] kg/m³, got 1e+308")


def test_a_mass_of_1e_minus_320_is_refused():
    # was accepted with inv_mass = inf, and a step later "AABB of geometry row 3 is NaN or inverted"
    world = _world()
    message = _refused(world, lambda: world.add_body(tb.Box(1, 1, 1), mass=1e-320), ValueError, "mass")
    assert message.startswith("mass must be in [1e-15, 1e+21] kg, got 1e-320")


def test_a_nearly_coplanar_hull_is_refused_by_convex_hull_naming_points_and_its_thickness():
    # a 0.1 mm slab whose two faces are uneven by 1e-9 m: it was built, and add_body then failed in the
    # collision polytope with "faces do not form a closed polyhedron", naming no argument
    rng = np.random.default_rng(1)
    base = rng.uniform(-1, 1, size=(8, 3))
    base[:, 2] = 0.0
    points = np.vstack([base, base + [0.0, 0.0, 1e-4]])
    points[:, 2] += rng.uniform(0.0, 1e-9, size=16)
    with pytest.raises(ValueError, match=r"^points give a hull with two nearly coplanar faces") as info:
        tb.ConvexHull(points)
    assert "the hull is 0.0001 m thick" in str(info.value)


def test_a_hull_thinner_than_a_micrometre_is_refused_with_its_thickness():
    with pytest.raises(ValueError, match=r"^points are nearly coplanar: their hull is 1e-08 m thick"):
        tb.ConvexHull([[0, 0, 0], [1, 0, 0], [0, 1, 0], [1, 1, 1e-8]])


def test_restore_of_a_dict_that_is_no_snapshot_names_snapshot_and_the_keys():
    # was KeyError 'body'
    world = _world()
    message = _refused(world, lambda: world.restore({"foo": 1}), ValueError, "snapshot")
    assert "missing ['body', 'contacts', 'contacts_dt', 'contacts_substeps', 'time']" in message
    assert "unknown ['foo']" in message


def test_array_to_state_refuses_a_zero_quaternion_naming_y_and_the_body():
    # was accepted: the body's orientation became NaN
    world = _world()
    y = world.state_to_array()
    y[13 + 3:13 + 7] = 0.0
    message = _refused(world, lambda: world.array_to_state(y), ValueError, "y")
    assert "body 1's quaternion q (y[16:20])" in message


def test_array_to_state_refuses_a_non_finite_entry_naming_the_body_and_the_entry():
    world = _world()
    y = world.state_to_array()
    y[2 * 13 + 9] = NAN
    message = _refused(world, lambda: world.array_to_state(y), ValueError, "y")
    assert "body 2's momentum P (y[35] = nan)" in message


def test_array_to_state_normalizes_a_non_unit_quaternion_as_before():
    world = _world()
    y = world.state_to_array()
    y[13 + 3:13 + 7] = (0.0, 3.0, 0.0, 4.0)
    world.array_to_state(y)
    np.testing.assert_allclose(world.bodies[1].orientation, (0.0, 0.6, 0.0, 0.8), rtol=0, atol=1e-15)


# ---------------------------------------------------------------------------------------------------------------
# Sizes.
# ---------------------------------------------------------------------------------------------------------------

SIZES = [(tb.Sphere, ("radius",)), (tb.Box, ("lx", "ly", "lz")), (tb.Capsule, ("radius",)),
         (tb.Cylinder, ("radius", "height")), (tb.Ellipsoid, ("a", "b", "c"))]
GOOD = {tb.Sphere: (0.5,), tb.Box: (1.0, 2.0, 3.0), tb.Capsule: (0.2, 1.0), tb.Cylinder: (0.3, 0.8),
        tb.Ellipsoid: (0.1, 0.2, 0.3)}
SIZE_ARGUMENTS = [(make, k, name) for make, names in SIZES for k, name in enumerate(names)]
OUT_OF_RANGE_LENGTHS = st.one_of(NON_FINITE, st.floats(1e6, 1.7e308, exclude_min=True),
                                 st.floats(5e-324, 1e-6, exclude_max=True), st.floats(-1e308, 0.0))


@FAST
@given(st.sampled_from(SIZE_ARGUMENTS), OUT_OF_RANGE_LENGTHS)
def test_every_shape_size_outside_the_range_is_refused_naming_it(argument, value):
    make, k, name = argument
    args = list(GOOD[make])
    args[k] = value
    with pytest.raises(ValueError) as info:
        make(*args)
    assert str(info.value).startswith(f"{name} must be ")


@pytest.mark.parametrize(("make", "k", "name"), SIZE_ARGUMENTS)
def test_every_shape_size_at_the_bounds_is_accepted(make, k, name):
    for bound in (_checks.LENGTH_MIN, _checks.LENGTH_MAX):
        args = list(GOOD[make])
        args[k] = bound
        assert getattr(make(*args), name) == bound


def test_a_capsule_length_below_a_micrometre_is_accepted_but_not_above_the_range():
    assert tb.Capsule(0.4, 1e-9).length == 1e-9   # the capsule is still 0.8 m across
    with pytest.raises(ValueError, match=r"^length must be at most 1e\+06 m, got 2000000.0$"):
        tb.Capsule(0.4, 2e6)
    with pytest.raises(ValueError, match=r"^length must be positive"):
        tb.Capsule(0.4, 0.0)


@pytest.mark.parametrize("value", [10**400, Fraction(10**400, 3), -(10**400)])
def test_numbers_beyond_float64_are_refused_as_not_finite(value):
    with pytest.raises(ValueError, match=r"^radius must be finite"):
        tb.Sphere(value)


@pytest.mark.parametrize(("points", "error", "text"), [
    ([[0, 0, 0], [1, 0, 0], [0, 1, 0], [0, 0, 1e200]], ValueError, "points must lie within ±1e+06 m"),
    ([[0, 0, 0], [1, 0, 0], [0, 1, 0], [0, 0, 10**400]], ValueError, "points must be finite"),
    ([["0", 0, 0], [1, 0, 0], [0, 1, 0], [0, 0, 1]], TypeError, "points must be an array of numbers"),
    ([[True, False, False], [False, True, False], [False, False, True], [False, False, False]], TypeError,
     "points must be an array of numbers"),
])
def test_hull_points_beyond_the_world_or_not_numbers_are_refused(points, error, text):
    with pytest.raises(error) as info:
        tb.ConvexHull(points)
    assert str(info.value).startswith(text)


def test_a_fold_in_a_thick_hull_is_refused_only_when_collision_would_merge_its_faces():
    cube = tb.Box(1, 1, 1).corners()
    with pytest.raises(ValueError, match=r"^points give a hull with two nearly coplanar faces.* 1 m thick"):
        tb.ConvexHull(np.vstack([cube, [0.0, 0.0, 0.5 + 1e-6]]))
    hull = tb.ConvexHull(np.vstack([cube, [0.0, 0.0, 0.5 + 1e-3]]))
    assert polytope_of(hull) is not None


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(4, 24), st.floats(1e-7, 1e-2), st.floats(0.0, 1e-3),
       st.sampled_from(["sheets", "point", "uniform"]))
def test_every_hull_that_convex_hull_accepts_has_a_collision_polytope(seed, k, thickness, unevenness, kind):
    """Nearly flat point sets (two sheets, a flat set with one point off it, or a slab): ConvexHull either
    refuses them naming ``points`` or makes a hull whose collision polytope builds, so add_body cannot fail
    on it later (the tolerances of polyhedron.hull and collision/polytope.py agree)."""
    rng = np.random.default_rng(seed)
    normal = rng.normal(size=3)
    normal /= np.linalg.norm(normal)
    points = rng.normal(size=(k, 3)) * rng.uniform(0.1, 3.0, size=3)
    points -= np.outer(points @ normal, normal)
    if kind == "sheets":
        points += np.outer(np.sign(rng.uniform(-1, 1, size=k)) * (1 + unevenness * rng.uniform(size=k)),
                           normal) * thickness
    elif kind == "point":
        points[0] += thickness * normal
    else:
        points += np.outer(rng.uniform(-1, 1, size=k), normal) * thickness
    try:
        hull = tb.ConvexHull(points)
    except ValueError as error:
        assert str(error).startswith("points ")
        return
    assert polytope_of(hull) is not None


def test_compound_part_positions_beyond_the_world_are_refused():
    world = _world()
    parts = [(tb.Sphere(1.0), (1e200, 0, 0)), (tb.Sphere(1.0), (0, 0, 0))]
    message = _refused(world, lambda: world.add_body(parts), ValueError, "shape[0] position")
    assert "within ±1e+06 m" in message and "1e+200" in message


@pytest.mark.parametrize(("option", "value"), [("contact_margin", 1e308), ("event_tolerance", 2e6),
                                               ("event_contact_band", 1e300)])
def test_world_lengths_beyond_the_range_are_refused(option, value):
    with pytest.raises(ValueError, match=rf"^{option} must be at most 1e\+06 m"):
        tb.World(**{option: value})


# ---------------------------------------------------------------------------------------------------------------
# Densities, masses, inertias.
# ---------------------------------------------------------------------------------------------------------------

@FAST
@given(st.one_of(NON_FINITE, st.floats(1e5, 1.7e308, exclude_min=True), st.floats(5e-324, 1e-3, exclude_max=True)))
def test_add_body_refuses_a_density_out_of_range(density):
    world = _world()
    _refused(world, lambda: world.add_body(tb.Sphere(0.1), density=density), ValueError, "density must be")


@FAST
@given(st.one_of(NON_FINITE, st.floats(1e21, 1.7e308, exclude_min=True), st.floats(5e-324, 1e-15, exclude_max=True)))
def test_add_body_refuses_a_mass_out_of_range(mass):
    world = _world()
    _refused(world, lambda: world.add_body(tb.Sphere(0.1), mass=mass), ValueError, "mass must be")


def test_a_mass_from_density_out_of_range_names_the_density_or_the_shape():
    world = _world()
    message = _refused(world, lambda: world.add_body(tb.Sphere(1e-6), density=1.0), ValueError, "density: ")
    assert "gives a mass of 4.18879e-18 kg, outside [1e-15, 1e+21] kg" in message
    message = _refused(world, lambda: world.add_body(tb.Sphere(1e6)), ValueError, "shape: ")
    assert "(the default density)" in message


def test_the_bounds_of_mass_and_density_are_accepted():
    world = tb.World()
    assert world.add_body(tb.Sphere(0.1), mass=_checks.MASS_MIN).mass == _checks.MASS_MIN
    assert world.add_body(tb.Sphere(1e5), mass=_checks.MASS_MAX).mass == _checks.MASS_MAX
    world.add_body(tb.Box(1, 1, 1), density=_checks.DENSITY_MIN)
    world.add_body(tb.Box(1, 1, 1), density=_checks.DENSITY_MAX)


@pytest.mark.parametrize(("inertia", "text"), [
    (np.eye(3) * 1e308, "inertia must have entries of at most 1e+36 kg m² in size, got one of 1e+308"),
    (np.eye(3) * 1e-40, "inertia must give principal moments in [1e-30, 1e+36] kg m², got [1e-40, 1e-40, 1e-40]"),
    (np.diag([1e-9, 1.0, 1.0]), "inertia must give principal moments within a ratio of 1e+08"),
    (np.diag([NAN, 1.0, 1.0]), "inertia must be finite"),
    (np.diag([1.0, INF, 1.0]), "inertia must be finite"),
    (np.eye(3) * 1e37, "inertia must have entries of at most 1e+36 kg m² in size, got one of 1e+37"),
])
def test_add_body_refuses_an_inertia_out_of_range(inertia, text):
    world = _world()
    message = _refused(world, lambda: world.add_body(tb.Box(1, 1, 1), mass=1.0, inertia=inertia), ValueError, text)
    assert message.startswith(text)


def test_a_rod_too_slender_to_turn_is_refused_unless_fixed():
    world = _world()
    message = _refused(world, lambda: world.add_body(tb.Capsule(1e-5, 1.0)), ValueError, "shape must give")
    assert "a ratio of 1.67e+09" in message and "(from the shape and a mass of" in message
    assert world.add_body(tb.Capsule(1e-5, 1.0), fixed=True).fixed
    assert world.add_body(tb.Box(1, 1, 1), mass=1.0, inertia=np.diag([1e-9, 1.0, 1.0]), fixed=True).fixed
    world.add_body(tb.Capsule(1e-3, 1.0))       # ratio 1.7e5: a 1 m rod 2 mm thick turns


def test_mass_properties_and_spatial_inertia_share_the_ranges():
    with pytest.raises(ValueError, match=r"^density must be in"):
        tb.mass_properties(tb.Box(1, 1, 1), density=1e308)
    with pytest.raises(ValueError, match=r"^mass must be in"):
        tb.spatial_inertia(1e-320, (0, 0, 0), np.eye(3))
    with pytest.raises(ValueError, match=r"^inertia must give principal moments within a ratio"):
        tb.spatial_inertia_inv(1.0, (0, 0, 0), np.diag([1e-12, 1.0, 1.0]))
    with pytest.raises(ValueError, match=r"^mass must be in"):
        tb.mass_properties(tb.Box(1, 1, 1)).scaled_to_mass(1e300)


# ---------------------------------------------------------------------------------------------------------------
# Non-finite values into every argument of add_body, every setter and load of a body, and World's.
# ---------------------------------------------------------------------------------------------------------------

VECTOR_ARGUMENTS = {"position": 3, "orientation": 4, "velocity": 3, "angular_velocity": 3}


@FAST
@given(st.sampled_from(sorted(VECTOR_ARGUMENTS)), st.integers(0, 3), NON_FINITE)
def test_add_body_refuses_a_non_finite_vector_entry_naming_the_argument(name, k, value):
    world = _world()
    vector = [1.0, 0.0, 0.0, 0.0][:VECTOR_ARGUMENTS[name]]
    vector[k % len(vector)] = value
    message = _refused(world, lambda: world.add_body(tb.Sphere(0.1), **{name: vector}), ValueError, name)
    assert message.startswith(f"{name} must be finite")


@FAST
@given(st.sampled_from(["density", "friction", "restitution"]), NON_FINITE)
def test_add_body_refuses_a_non_finite_scalar_naming_it(name, value):
    world = _world()
    message = _refused(world, lambda: world.add_body(tb.Sphere(0.1), **{name: value}), ValueError, name)
    assert message.startswith(f"{name} must be finite")


@FAST
@given(st.sampled_from(sorted(VECTOR_ARGUMENTS)), st.integers(0, 1), st.integers(0, 3), NON_FINITE)
def test_body_setters_refuse_a_non_finite_entry_and_change_nothing(name, which, k, value):
    world = _world()
    body = world.bodies[1 + which]
    vector = list(getattr(body, name))
    vector[k % len(vector)] = value
    message = _refused(world, lambda: setattr(body, name, vector), ValueError, name)
    assert message.startswith(f"{name} must be finite")


LOADS = {
    "f": lambda body, v: body.apply_force(v),
    "tau": lambda body, v: body.apply_torque(v),
    "j": lambda body, v: body.apply_impulse(v),
    "point": lambda body, v: body.apply_force((0.0, 0.0, 1.0), point=v),
}


@FAST
@given(st.sampled_from(sorted(LOADS)), st.integers(0, 2), NON_FINITE)
def test_loads_and_impulses_refuse_a_non_finite_entry_and_change_nothing(name, k, value):
    world = _world()
    vector = [0.0, 0.0, 0.0]
    vector[k] = value
    message = _refused(world, lambda: LOADS[name](world.bodies[1], vector), ValueError, name)
    assert message.startswith(f"{name} must be finite")


@FAST
@given(st.sampled_from(sorted(LOADS)), st.integers(0, 2), OVERFLOWING, st.booleans())
def test_loads_and_impulses_that_overflow_are_refused_whole(name, k, value, negative):
    """A finite value whose sum with what the body already has (the largest float64 there), or whose torque
    (an arm of 1e300 m), leaves float64: refused, nothing added."""
    world = _world()
    body = world.bodies[1]
    sign = -1.0 if negative else 1.0
    largest, vector = [0.0, 0.0, 0.0], [0.0, 0.0, 0.0]
    largest[k], vector[k] = sign * np.finfo(float).max, sign * value
    if name == "f":
        body.apply_force(largest)
    elif name == "tau":
        body.apply_torque(largest)
    elif name == "j":
        body.velocity = largest
    force = [0.0, 0.0, 0.0]
    force[(k + 1) % 3] = 1e300
    message = _refused(world, lambda: LOADS[name](body, vector) if name != "point" else
                       body.apply_force(force, point=vector), ValueError, "point = " if name == "point" else name)
    assert "beyond float64" in message


def test_the_same_load_may_be_added_until_it_would_overflow():
    world = _world()
    body = world.bodies[2]
    body.clear_loads()
    body.apply_force((1e308, 0.0, 0.0))
    message = _refused(world, lambda: body.apply_force((1e308, 0.0, 0.0)), ValueError, "f = [1e+308, 0.0, 0.0]")
    assert "accumulated force [N] of body 2 [inf, 0.0, 0.0]" in message
    np.testing.assert_array_equal(world.state.body.live("force")[2], (1e308, 0.0, 0.0))


def test_an_impulse_on_a_fixed_body_far_away_cannot_make_its_rates_nan():
    world = _world()
    wall = world.add_body(tb.Box(1, 1, 1), fixed=True)
    _refused(world, lambda: wall.apply_impulse((1e308, 0, 0), point=(0, 1e10, 0)), ValueError, "j = ")


def test_a_huge_quaternion_is_normalized_not_zeroed():
    world = _world()
    body = world.bodies[1]
    body.orientation = (1e200, 1e200, 0.0, 0.0)    # q · q overflows: 1e200 / inf used to give (0, 0, 0, 0)
    np.testing.assert_allclose(body.orientation, (2**-0.5, 2**-0.5, 0.0, 0.0), rtol=1e-15)
    with pytest.raises(ValueError, match=r"^orientation must be a non-zero quaternion"):
        body.orientation = (1e-200, 0.0, 0.0, 0.0)


@pytest.mark.parametrize(("value", "error", "text"), [
    (("1", "0", "0"), TypeError, "position must be an array of numbers"),
    ((True, False, False), TypeError, "position must be an array of numbers"),
    ((1 + 0j, 0, 0), TypeError, "position must be an array of numbers"),
    ((10**400, 0, 0), ValueError, "position must be finite"),
])
def test_vectors_of_strings_bools_or_huge_ints_are_refused(value, error, text):
    world = _world()
    message = _refused(world, lambda: setattr(world.bodies[1], "position", value), error, "position")
    assert message.startswith(text)


WORLD_ARGUMENTS = ["contact_margin", "event_tolerance", "event_contact_band", "event_threshold", "tolerance",
                   "restitution_threshold", "slop", "sleep_time", "sleep_speed", "max_push_velocity"]


@FAST
@given(st.sampled_from(WORLD_ARGUMENTS), NON_FINITE)
def test_world_refuses_a_non_finite_argument_naming_it(name, value):
    with pytest.raises(ValueError) as info:
        tb.World(**{name: value})
    assert str(info.value).startswith(f"{name} must be finite")


@FAST
@given(st.integers(0, 2), NON_FINITE, st.booleans())
def test_gravity_and_time_refuse_non_finite_values(k, value, setter):
    gravity = [0.0, 0.0, -9.81]
    gravity[k] = value
    if not setter:
        with pytest.raises(ValueError, match=r"^gravity must be finite"):
            tb.World(gravity=gravity)
        return
    world = _world()
    _refused(world, lambda: setattr(world, "gravity", gravity), ValueError, "gravity must be finite")
    _refused(world, lambda: setattr(world, "time", value), ValueError, "time must be finite")


# ---------------------------------------------------------------------------------------------------------------
# restore, array_to_state, state_to_array.
# ---------------------------------------------------------------------------------------------------------------

def _spoiled(snapshot: dict, path: tuple, value) -> dict:
    """A copy of ``snapshot`` with the entry at ``path`` replaced (or removed when ``value`` is ...)."""
    out = {k: (dict(v) if isinstance(v, dict) else v) for k, v in snapshot.items()}
    out["contacts"] = {k: dict(v) for k, v in snapshot["contacts"].items()}
    holder = out
    for key in path[:-1]:
        holder = holder[key]
    if value is ...:
        del holder[path[-1]]
    else:
        holder[path[-1]] = value
    return out


SPOILED_SNAPSHOTS = [
    (("time",), NAN, ValueError, "snapshot['time'] must be finite"),
    (("time",), "0", TypeError, "snapshot['time'] must be a real number"),
    (("body",), ..., ValueError, "snapshot must have the keys of world.snapshot()"),
    (("extra",), 1, ValueError, "unknown ['extra']"),
    (("body", "x"), ..., ValueError, "snapshot['body'] must have the keys of world.snapshot()"),
    (("body", "x"), np.zeros((2, 3)), ValueError, "snapshot['body']['x'] must have shape (3, 3)"),
    (("body", "q"), np.full((3, 4), INF), ValueError, "snapshot['body']['q'] must be finite"),
    (("body", "v"), "fast", TypeError, "snapshot['body']['v'] must be an array of float64"),
    (("body", "awake"), np.ones(3), TypeError, "snapshot['body']['awake'] must be an array of bool"),
    (("body",), [1, 2], TypeError, "snapshot['body'] must be a dict"),
    (("contacts", "pairs", "pair_body"), np.array([[0, 7]]), ValueError,
     "snapshot['contacts']['pairs']['pair_body'] must hold indices in [0, 3)"),
    (("contacts", "slots", "depth"), np.zeros(3), ValueError, "snapshot['contacts']['slots']['depth'] must have shape"),
    (("contacts_dt",), -1.0, ValueError, "snapshot['contacts_dt'] must be positive"),
    (("contacts_substeps",), 0, ValueError, "snapshot['contacts_substeps'] must be >= 1"),
    (("joints", "broken"), [True], ValueError, "snapshot['joints']['broken'] must be a list of 0 entries"),
]


@pytest.mark.parametrize(("path", "value", "error", "text"), SPOILED_SNAPSHOTS)
def test_restore_refuses_a_spoiled_snapshot_naming_the_key_and_changes_nothing(path, value, error, text):
    world = _world()
    snapshot = world.snapshot()
    snapshot["contacts"]["pairs"] = {k: np.zeros((1,) + v.shape[1:], dtype=v.dtype)
                                     for k, v in snapshot["contacts"]["pairs"].items()}
    snapshot["contacts"]["slots"] = {k: np.zeros((4,) + v.shape[1:], dtype=v.dtype)
                                     for k, v in snapshot["contacts"]["slots"].items()}
    world.bodies[1].position = (5, 5, 5)
    message = _refused(world, lambda: world.restore(_spoiled(snapshot, path, value)), error, text)
    assert message.startswith(text) or text.startswith("unknown")


def test_restore_takes_lists_and_a_snapshot_without_joints():
    world = _world()
    snapshot = world.snapshot()
    world.bodies[1].position = (5, 5, 5)
    as_lists = _spoiled(snapshot, ("body", "x"), snapshot["body"]["x"].tolist())
    world.restore(_spoiled(as_lists, ("joints",), ...))
    np.testing.assert_array_equal(world.bodies[1].position, snapshot["body"]["x"][1])


@FAST
@given(st.data(), NON_FINITE)
def test_array_to_state_refuses_a_non_finite_entry_anywhere(data, value):
    world = _world()
    y = world.state_to_array()
    k = data.draw(st.integers(0, y.size - 1))
    y[k] = value
    message = _refused(world, lambda: world.array_to_state(y), ValueError, f"body {k // 13}'s")
    assert message.startswith("y must be finite") and f"(y[{k}] = " in message


@FAST
@given(st.integers(1, 2), st.floats(0.0, 1e-12, exclude_max=True))
def test_array_to_state_refuses_a_quaternion_too_short_to_normalize(body, scale):
    world = _world()
    y = world.state_to_array()
    y[13 * body + 3:13 * body + 7] = scale * np.array([0.5, -0.5, 0.5, 0.5])
    _refused(world, lambda: world.array_to_state(y), ValueError, f"body {body}'s quaternion q")


@FAST
@given(st.integers(1, 2), st.floats(2e-12, 1e300))
def test_array_to_state_normalizes_any_other_quaternion(body, scale):
    world = _world()
    y = world.state_to_array()
    y[13 * body + 3:13 * body + 7] = scale * np.array([0.5, -0.5, 0.5, 0.5])
    world.array_to_state(y)
    np.testing.assert_allclose(world.bodies[body].orientation, (0.5, -0.5, 0.5, 0.5), rtol=1e-14)


def test_array_to_state_refuses_a_momentum_whose_velocity_overflows():
    world = tb.World()
    world.add_body(tb.Sphere(0.01))                 # 4.2 g: v = P / M overflows for P = 1e308
    y = world.state_to_array()
    y[7] = 1e308
    message = _refused(world, lambda: world.array_to_state(y), ValueError, "y gives body 0 a non-finite velocity")
    assert "from its momentum P [1e+308, 0.0, 0.0]" in message


def test_state_to_array_raises_where_the_momentum_overflows():
    world = _world()
    world.bodies[1].velocity = (1e307, 0.0, 0.0)    # P = M v = 24 kg × 1e307
    with pytest.raises(FloatingPointError, match=r"body 1's momentum P \(y\[20\] = inf\)"):
        world.state_to_array()


def test_state_derivative_refuses_a_zero_quaternion_instead_of_returning_nan():
    world = tb.World()
    world.add_body(tb.Box(1, 1, 1))
    world.add_body(tb.Sphere(0.5), position=(3, 0, 0))
    y = world.state_to_array()
    y[13 + 3:13 + 7] = 0.0
    with pytest.raises(ValueError, match=r"y must hold a non-zero quaternion.*body 1"):
        world.state_derivative(y)


def test_attach_point_mass_takes_a_mass_in_the_stated_range():
    world = tb.World()
    body = world.add_body(tb.Box(1, 1, 1))
    before = world.snapshot()
    for mass in (1e-320, 1e30):
        with pytest.raises(ValueError, match=r"mass must be in \[1e-15, 1e\+21\] kg"):
            world.attach_point_mass(body, (0.5, 0.0, 0.0), mass)
    assert body.mass == 1000.0 and np.array_equal(world.snapshot()["body"]["x"], before["body"]["x"])
