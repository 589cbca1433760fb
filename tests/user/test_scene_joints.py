"""Scene files with joints and springs (scene_joints.py): the exact round trip, hand-written joints that obey
the closed form of a rod released on a hinge, and located errors."""

from __future__ import annotations

import math

import numpy as np
import pytest

import tumble as tb
from tumble.forces.springs import SpringArrays

DT = 1.0 / 240.0
G = 9.81


def _mechanism() -> tuple[tb.World, list[tb.Joint]]:
    """Every joint kind (limits, a motor, compliance, a break force, a world end) and every spring kind,
    stepped until the joints are displaced from their creation poses."""
    world = tb.World(gravity=(0.0, 0.0, -G), sleep=False)
    world.add_ground()
    base = world.add_body(tb.Box(0.2, 0.2, 0.2), mass=1.0, position=(0, 0, 3), fixed=True, name="base")
    rod = world.add_body(tb.Box(0.1, 0.1, 1.0), mass=1.0, position=(0, 0, 2.5), name="rod")
    arm = world.add_body(tb.Box(0.1, 0.1, 1.0), mass=2.0, position=(0, 0, 1.5))
    cart = world.add_body(tb.Box(0.3, 0.3, 0.1), mass=1.0, position=(1.0, 0, 2.0), name="cart")
    tip = world.add_body(tb.Sphere(0.05), mass=0.5, position=(1.0, 0, 1.8), name="world")   # referred to by index
    joints = [
        world.add_joint(tb.HingeJoint(rod, base, (0, 0, 3), (0, 1, 0), limits=(-1.0, 1.2), motor=(0.5, 2.0),
                                      name="shoulder")),
        world.add_joint(tb.BallJoint(arm, rod, (0, 0, 2), rpy_limits=((-0.5, 0.5), (-1.2, 1.2), (-1.0, 1.0)),
                                     compliance=1e-6, damping=0.1)),
        world.add_joint(tb.SliderJoint(cart, None, (1.0, 0, 2.0), (1, 0, 0), limits=(-0.2, 0.4), motor=(0.3, 5.0),
                                       break_force=1e4)),
        world.add_joint(tb.FixedJoint(tip, cart, collide=True)),
    ]
    world.add_spring(tb.AxialSpring(arm, None, (0, 0, 1.0), (1.0, 0, 1.5), 50.0, 1.0))
    world.add_spring(tb.MultiPointSpring([rod, None, arm], [(0, 0, 2.2), (0.5, 0.5, 2.0), (0, 0, 1.2)], 20.0,
                                         rest_length=1.5))
    world.add_spring(tb.FrameSpring(arm, rod, (0, 0, 2), 10.0, 0.5, (1.0, 2.0, 3.0), 0.1))
    rod.angular_velocity = (0, 3.0, 0)
    for _ in range(120):
        world.step(DT)
    return world, joints


def test_joints_and_springs_round_trip_exactly(tmp_path):
    world, joints = _mechanism()
    assert abs(joints[0].angle) > 0.05 and abs(joints[2].position) > 0.01   # displaced since creation
    path = world.save_scene(tmp_path / "mechanism.toml")
    loaded = tb.load_scene(path)
    # What the step reads: the joints' arrays and the springs' packed arrays, bitwise.
    a, b = world.model.joints.kernel_args(world._live()["inv_mass"])[0], \
        loaded.model.joints.kernel_args(loaded._live()["inv_mass"])[0]
    for name, x, y in zip(("kind", "body", "frame_a", "frame_b", "limit", "flags", "soft", "motor"), a, b,
                          strict=False):
        np.testing.assert_array_equal(y, x, err_msg=name)
    for name, value in vars(world.model.spring_arrays()).items():
        if name not in SpringArrays.SCRATCH:   # the kernels' scratch holds whatever the last step left
            np.testing.assert_array_equal(getattr(loaded.model.spring_arrays(), name), value, err_msg=name)
    # The joints' readings at the saved state: the creation zero is kept.
    new = loaded.joints
    assert new[0].angle == joints[0].angle and new[2].position == joints[2].position
    np.testing.assert_array_equal(new[1].rpy, joints[1].rpy)
    assert [j.name for j in new] == [j.name for j in joints]
    assert new[2].break_force == 1e4 and new[3].collide and not new[0].collide
    # Saving the loaded world gives the same text.
    assert loaded.save_scene(tmp_path / "again.toml").read_text() == path.read_text()


def test_a_loaded_hinge_keeps_its_limit_where_it_was_made(tmp_path):
    """A rod driven by its motor onto the hinge limit at 0.25 rad rests there; the loaded world reads the same
    angle (re-made from world coordinates at the saved pose it would read 0) and its motor keeps the rod on
    the same bound: the angle stays within 1e-9 rad of 0.25 (the direct solve holds a limit to rounding)."""
    world = tb.World(gravity=(0.0, 0.0, 0.0))
    rod = world.add_body(tb.Box(0.1, 0.1, 1.0), mass=1.0, position=(0, 0, -0.5))
    hinge = world.add_joint(tb.HingeJoint(rod, None, (0, 0, 0), (0, 1, 0), limits=(-0.1, 0.25), motor=(2.0, 5.0)))
    for _ in range(240):
        world.step(DT)
    assert hinge.angle == pytest.approx(0.25, abs=1e-9)
    loaded = tb.load_scene(world.save_scene(tmp_path / "rod.toml"))
    assert loaded.joints[0].angle == hinge.angle
    for _ in range(240):
        loaded.step(DT)
    assert loaded.joints[0].angle == pytest.approx(0.25, abs=1e-9)


def test_a_broken_joint_loads_broken(tmp_path):
    """A ball joint that breaks under the hanging body's weight (break force 1 N < m g) stays broken when saved
    and loaded: the loaded body falls freely, Δv = −g t over 0.1 s (exact for the splitting step)."""
    world = tb.World(gravity=(0.0, 0.0, -G))
    body = world.add_body(tb.Sphere(0.1), mass=1.0, position=(0, 0, -0.5))
    world.add_joint(tb.BallJoint(body, None, (0, 0, 0), break_force=1.0))
    world.step(DT)
    world.step(DT)
    assert world.joints[0].broken
    loaded = tb.load_scene(world.save_scene(tmp_path / "broken.toml"))
    assert loaded.joints[0].broken
    v0 = loaded.bodies[0].velocity[2]
    for _ in range(24):
        loaded.step(DT)
    assert loaded.bodies[0].velocity[2] == pytest.approx(v0 - G * 0.1, abs=1e-12)


def test_a_hand_written_hinge_releases_the_rod_at_the_closed_form_rate(tmp_path):
    """A horizontal rod (length L, mass m) on a hinge at one end, written in world coordinates: released from
    rest it starts to fall at α = m g (L/2) / I_hinge, I_hinge = m L²/3 (so α = 3 g / (2 L)). After one step
    ω = α dt to O(dt²) (the rod turns by 0.0001 rad in it): 1e-3 relative."""
    length = 1.0
    path = tmp_path / "hinge.toml"
    path.write_text(f"""format = 1
[world]
gravity = [0.0, 0.0, {-G}]

[[bodies]]
name = "rod"
shape = {{ type = "box", size = [{length}, 0.02, 0.02] }}
mass = 1.0
position = [{length / 2}, 0.0, 1.0]

[[joints]]
type = "hinge"
a = "rod"
anchor = [0.0, 0.0, 1.0]
axis = [0.0, 1.0, 0.0]
""")
    world = tb.load_scene(path)
    world.step(DT)
    rod = world.body("rod")
    inertia = 1.0 * (length ** 2 + 0.02 ** 2) / 12 + 1.0 * (length / 2) ** 2
    alpha = 1.0 * G * (length / 2) / inertia
    # right-handed about +y, gravity −z on a rod along +x: ω_y > 0
    assert rod.angular_velocity[1] == pytest.approx(alpha * DT, rel=1e-3)
    assert world.joints[0].error < 1e-9


def test_a_hand_written_cable_and_frame_spring_load(tmp_path):
    path = tmp_path / "springs.toml"
    path.write_text("""format = 1
[world]
gravity = [0.0, 0.0, 0.0]

[[bodies]]
name = "a"
shape = { type = "sphere", radius = 0.1 }
position = [0.0, 0.0, 0.0]

[[bodies]]
shape = { type = "sphere", radius = 0.1 }
position = [2.0, 0.0, 0.0]

[[springs]]
type = "cable"
bodies = ["a", "world", 1]
points = [[0.0, 0.0, 0.0], [1.0, 1.0, 0.0], [2.0, 0.0, 0.0]]
stiffness = 10.0
rest_length = 2.0

[[springs]]
type = "frame"
a = "world"
b = 1
frame_point = [2.0, 0.0, 0.0]
stiffness = [1.0, 2.0, 3.0]
""")
    world = tb.load_scene(path)
    cable, frame = world.springs
    # The path is 2 √2 long against a rest length of 2: tension k (2√2 − 2) along each segment.
    assert cable.rest_length == 2.0
    world.step(1e-3)
    tension = 10.0 * (2 * math.sqrt(2) - 2)
    a = world.body("a")
    mass = a.mass
    # the first point is pulled toward the via point (1, 1, 0): Δv = T / m · û dt (the frame spring is at rest)
    np.testing.assert_allclose(a.velocity, tension / mass * np.array([1, 1, 0]) / math.sqrt(2) * 1e-3, rtol=1e-9)
    assert frame.stiffness.tolist() == [1.0, 2.0, 3.0]


JOINT_BAD = [  # (the [[joints]] or [[springs]] table, the message's fragment)
    ('[[joints]]\ntype = "hinge"\na = "p"\nanchor = [0, 0, 0]\n', "joints[0]: a hinge joint needs axis"),
    ('[[joints]]\ntype = "screw"\na = "p"\n', "joints[0].type: unknown type 'screw'"),
    ('[[joints]]\ntype = "ball"\na = "nobody"\nanchor = [0, 0, 0]\n', "joints[0].a: names no body: 'nobody'"),
    ('[[joints]]\ntype = "ball"\na = 5\nanchor = [0, 0, 0]\n', "joints[0].a: must be a body index in [0, 1]"),
    ('[[joints]]\ntype = "ball"\na = "world"\nanchor = [0, 0, 0]\n', "joints[0].a: must be a body, not the world"),
    ('[[joints]]\ntype = "ball"\na = "p"\nb = 1\nanchor = [0, 0, 0]\n', "joints[0].b: must be a different body"),
    ('[[joints]]\ntype = "ball"\na = "p"\nanchor = [0, 0, 0]\nlimits = [0, 1]\n', "takes rpy_limits"),
    ('[[joints]]\ntype = "hinge"\na = "p"\nanchor = [0, 0, 0]\naxis = [0, 0, 0]\n', "axis must be a non-zero"),
    ('[[joints]]\ntype = "hinge"\na = "p"\nanchor = [0, 0, 0]\naxis = [0, 1, 0]\nlimits = [1, -1]\n', "lo <= hi"),
    ('[[joints]]\ntype = "fixed"\na = "p"\nmotor = [1, 1]\n', "joints[0].motor: a motor needs a hinge"),
    ('[[joints]]\ntype = "ball"\na = "p"\nanchor = [0, 0, 0]\nframe_a = { position = [0, 0, 0], '
     'orientation = [1, 0, 0, 0] }\n', "not both"),
    ('[[joints]]\ntype = "ball"\na = "p"\nframe_a = { position = [0, 0, 0], orientation = [1, 0, 0, 0] }\n',
     "frame_a needs frame_b"),
    ('[[joints]]\ntype = "ball"\na = "p"\nframe_a = { position = [0, 0, 0], orientation = [2, 0, 0, 0] }\n'
     'frame_b = { position = [0, 0, 0], orientation = [1, 0, 0, 0] }\n',
     "joints[0].frame_a.orientation: must be a unit"),
    ('[[joints]]\ntype = "ball"\na = "p"\nanchor = [0, 0, 0]\ncompliance = -1.0\n',
     "joints[0].compliance: must be non-negative"),
    ('[joints]\ntype = "ball"\n', "write each as [[joints]]"),
    ('[[springs]]\ntype = "axial"\na = "p"\nb = "world"\nanchor_a = [0, 0, 0]\nanchor_b = [1, 0, 0]\n'
     'stiffness = -5.0\n', "springs[0].stiffness: must be non-negative"),
    ('[[springs]]\ntype = "cable"\nbodies = ["p"]\npoints = [[0, 0, 0]]\nstiffness = 1.0\n',
     "springs[0].bodies: must be an array of at least 2 bodies"),
    ('[[springs]]\ntype = "cable"\nbodies = ["p", "world"]\npoints = [[0, 0, 0]]\nstiffness = 1.0\n',
     "springs[0].points: must be 2 points"),
    ('[[springs]]\ntype = "axial"\na = "p"\nb = "p"\nanchor_a = [0, 0, 0]\nanchor_b = [1, 0, 0]\nstiffness = 1.0\n',
     "springs[0].b: must differ from a"),
    ('[[springs]]\ntype = "frame"\na = "world"\nb = "p"\nstiffness = 1.0\n',
     "springs[0]: a frame spring needs frame_point"),
    ('[[springs]]\ntype = "axial"\na = "p"\nb = "world"\nanchor_a = [0, 0, 0]\nanchor_b = [1, 0, 0]\n',
     "springs[0]: an axial spring needs stiffness"),
]


@pytest.mark.parametrize("table,fragment", JOINT_BAD)
def test_bad_joint_and_spring_tables_are_located(tmp_path, table, fragment):
    head = 'format = 1\n[ground]\n\n[[bodies]]\nname = "p"\nshape = { type = "sphere", radius = 0.1 }\n\n'
    path = tmp_path / "bad.toml"
    path.write_text(head + table)
    with pytest.raises(ValueError) as info:
        tb.load_scene(path)
    message = str(info.value)
    assert fragment in message
    line = int(message.split(":")[1])
    assert line >= 8 and "\n" not in message     # located in the joint's or spring's table, one line


def test_joints_refused_by_the_world_are_located(tmp_path):
    """The World's own refusals (the event method holds rigid equality joints only) come back located at the
    joint."""
    path = tmp_path / "event.toml"
    path.write_text('format = 1\n[world]\nmethod = "event"\n\n[[bodies]]\nname = "p"\n'
                    'shape = { type = "sphere", radius = 0.1 }\n\n[[joints]]\ntype = "hinge"\na = "p"\n'
                    'anchor = [0, 0, 0]\naxis = [0, 1, 0]\nlimits = [-1, 1]\n')
    with pytest.raises(ValueError, match=r"event.toml:9: joints\[0\]: joint limits=.*method='event'"):
        tb.load_scene(path)
