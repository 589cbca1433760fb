"""Joint springs τ = −stiffness (q − spring_ref) on revolute and prismatic joints (``JointSpec.stiffness``,
``spring_ref``; MJCF ``stiffness``/``springref``): against the closed forms of a mass on a spring and of a sprung
pendulum's rest angle, against MuJoCo's own rest angle for the same MJCF file, and the step's implicit treatment
(robots/step.py ``joint_forces``) against its own closed-form amplitude factor."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.optimize import brentq

import tumble as tb
from tumble.robots import JointSpec, LinkSpec, RobotDescription

G = 9.81


def slider(stiffness: float, spring_ref: float, mass: float = 2.0) -> RobotDescription:
    """A ``mass`` [kg] block on a prismatic joint along x with a spring."""
    links = [LinkSpec("base"), LinkSpec("block", mass, np.zeros(3), np.eye(3) * 0.01)]
    joints = [JointSpec("slide", "prismatic", "base", "block", np.zeros(3), np.eye(3), np.array([1.0, 0.0, 0.0]),
                        stiffness=stiffness, spring_ref=spring_ref)]
    return RobotDescription("slider", links, joints)


def sprung_rod(stiffness: float, spring_ref: float, damping: float, mass: float = 0.5,
               length: float = 0.2) -> RobotDescription:
    """A rod of ``mass`` hanging along −z from a hinge about x (its COM half a ``length`` below) with a torsional
    spring and damping."""
    inertia = np.diag([mass * length**2 / 12.0, mass * length**2 / 12.0, 1e-4])
    links = [LinkSpec("base"), LinkSpec("rod", mass, np.array([0.0, 0.0, -length / 2]), inertia)]
    joints = [JointSpec("hinge", "revolute", "base", "rod", np.zeros(3), np.eye(3), np.array([1.0, 0.0, 0.0]),
                        stiffness=stiffness, spring_ref=spring_ref, damping=damping)]
    return RobotDescription("rod", links, joints)


def rest_angle(stiffness: float, spring_ref: float, mass: float, com: float) -> float:
    """θ where the spring holds the rod against gravity: stiffness (θ − ref) + m g c sin θ = 0 (the root between
    0 and ref, where the two torques change sign)."""
    return brentq(lambda t: stiffness * (t - spring_ref) + mass * G * com * math.sin(t), 0.0, spring_ref, xtol=1e-15)


def test_a_mass_on_a_joint_spring_oscillates_at_the_closed_form_frequency_and_loses_amplitude_as_the_step_says():
    """A 2 kg block on a slider, k = 50 N/m, released at rest 0.1 m from the spring's rest: q(t) = ref (1 − cos ω t),
    ω = √(k/m) = 5 rad/s. The step treats the spring implicitly (k (q − ref + h q̇) now, h² k on M's diagonal),
    whose map per step has eigenvalues of angle atan(h ω) and modulus (1 + h² ω²)^−½: the period is 2π h / atan(h ω)
    (2π/ω to (hω)²/3 = 8e-6 relative; the crossings are interpolated linearly, O((hω)²) more: 1e-4 allowed), and the
    amplitude after n steps is the start's times (1 + h² ω²)^(−n/2) (a peak sampled between steps is off by
    ≤ (h ω)² / 8 = 3e-6 relative: 2e-5 allowed). An explicit spring would keep the amplitude (symplectic Euler)."""
    k, m, ref, h = 50.0, 2.0, 0.1, 1e-3
    omega = math.sqrt(k / m)
    w = tb.World(gravity=(0, 0, 0))
    robot = w.add_robot(slider(k, ref, m), fixed_base=True)
    qs = [robot.q[0]]
    for _ in range(4000):
        w.step(h)
        qs.append(robot.q[0])
    y = np.array(qs) - ref
    up = [i - 1 + (-y[i - 1]) / (y[i] - y[i - 1]) for i in range(1, len(y)) if y[i - 1] < 0.0 <= y[i]]
    period = h * (up[-1] - up[0]) / (len(up) - 1)
    assert period == pytest.approx(2 * math.pi * h / math.atan(h * omega), rel=1e-4)
    assert period == pytest.approx(2 * math.pi / omega, rel=1e-4)
    # the last trough against the first (q = 0 at the start, ref below it by its amplitude)
    troughs = [i for i in range(1, len(y) - 1) if y[i] <= y[i - 1] and y[i] <= y[i + 1]]
    last = troughs[-1]
    assert -y[last] == pytest.approx(ref * (1.0 + (h * omega) ** 2) ** (-last / 2), rel=2e-5)
    assert -y[last] < 0.97 * ref   # (the decay is measurable: 4.6 % over 3.7 s)


def test_a_spring_too_stiff_for_an_explicit_step_settles_instead_of_blowing_up():
    """k = 1e6 N/m on 1 kg at h = 10 ms (h ω = 10, where an explicit spring's step multiplies the state by ~h² ω²
    per step): the implicit step's map has modulus (1 + h² ω²)^−½ = 1/√101 per step, so 20 steps bring the block
    from 0.1 m off to its rest to 1e-12 m (the closed form: 0.1 × 101^−10 ≈ 1e-21 m, rounding aside), never
    passing further out than it started."""
    w = tb.World(gravity=(0, 0, 0))
    robot = w.add_robot(slider(1e6, 0.1, 1.0), fixed_base=True)
    offsets = []
    for _ in range(20):
        w.step(0.01)
        offsets.append(abs(robot.q[0] - 0.1))
    assert max(offsets) <= 0.1
    assert offsets[-1] < 1e-12


def test_runge_kutta_keeps_a_sprung_pendulum_s_energy_the_spring_s_share_included():
    """With ``robot_integrator="rk4"`` the spring is explicit: a rod on a torsional spring swinging under gravity
    keeps kinetic + potential energy (``Robot.potential_energy``: gravity and ½ k (q − ref)²) to 1e-9 of the
    energy exchanged over 3 s at h = 1 ms (RK4's error, (h ω)⁴ per step with ω ≈ 12 rad/s); without the spring's
    share the sum would swing by the whole spring energy."""
    w = tb.World(gravity=(0, 0, -G), robot_integrator="rk4")
    robot = w.add_robot(sprung_rod(1.0, 0.6, 0.0), fixed_base=True)
    e0 = robot.kinetic_energy() + robot.potential_energy()
    energies, springs = [], []
    for _ in range(3000):
        w.step(1e-3)
        energies.append(robot.kinetic_energy() + robot.potential_energy())
        springs.append(0.5 * 1.0 * (robot.q[0] - 0.6) ** 2)
    scale = max(springs) - min(springs)
    assert scale > 0.1
    assert max(abs(e - e0) for e in energies) < 1e-9 * scale


@pytest.mark.parametrize("integrator", ["euler", "rk4"])
def test_a_sprung_pendulum_comes_to_rest_at_the_closed_form_angle(integrator):
    """A 0.5 kg rod (COM 0.1 m below its hinge) on a 0.5 N m/rad spring whose rest is 1 rad, with damping: it comes
    to rest where the spring holds it against gravity, k (θ − 1) + m g c sin θ = 0 (brentq), to 1e-9 rad (at rest
    the step's implicit terms vanish: the rest angle does not depend on the scheme; 10 s of an overdamped swing
    leave e^−48 of the start)."""
    k, ref, m, c = 0.5, 1.0, 0.5, 0.1
    w = tb.World(gravity=(0, 0, -G), robot_integrator=integrator)
    robot = w.add_robot(sprung_rod(k, ref, 0.2, m, 2 * c), fixed_base=True)
    for _ in range(2400):
        w.step(1 / 240)
    expected = rest_angle(k, ref, m, c)
    assert 0.3 < expected < 1.0
    assert robot.q[0] == pytest.approx(expected, abs=1e-9)


SPRUNG_MJCF = """<mujoco model="sprung">
  <option gravity="0 0 -9.81" timestep="0.002"/>
  <worldbody>
    <body name="rod" pos="0 0 1">
      <joint name="hinge" type="hinge" axis="1 0 0" ref="20" stiffness="2" springref="80" damping="0.5"/>
      <geom type="capsule" fromto="0 0 0 0 0 -0.3" size="0.02" density="1000"/>
    </body>
  </worldbody>
</mujoco>"""


def test_an_mjcf_hinge_spring_rests_where_mujoco_s_does(tmp_path):
    """The same MJCF file in MuJoCo and through ``World.add_mjcf``: a capsule rod on a hinge with ``ref`` 20°,
    ``stiffness`` 2 N m/rad toward ``springref`` 80°, damped, comes to rest at one angle in both (MuJoCo's qpos −
    qpos0 against tumble's q, which starts at the ref) to 1e-8 rad (both at rest after 20 s; MuJoCo keeps the
    model in float64), and at the closed form's (``rest_angle``, with the rod's mass and COM as MuJoCo computes
    them)."""
    mujoco = pytest.importorskip("mujoco")
    path = tmp_path / "sprung.xml"
    path.write_text(SPRUNG_MJCF)
    model = mujoco.MjModel.from_xml_path(str(path))
    data = mujoco.MjData(model)
    for _ in range(10000):
        mujoco.mj_step(model, data)
    theirs = float(data.qpos[0] - model.qpos0[0])
    assert abs(float(data.qvel[0])) < 1e-9

    w = tb.World(gravity=(0, 0, -G))
    robot = w.add_mjcf(path)
    assert robot.q[0] == 0.0
    for _ in range(4800):
        w.step(1 / 240)
    assert robot.q[0] == pytest.approx(theirs, abs=1e-8)
    # q measured from the ref, where MuJoCo places the body as the file draws it (hanging): the spring's rest is at
    # 80° − 20° = 60°
    mass, com = float(model.body_mass[1]), float(np.linalg.norm(model.body_ipos[1]))
    assert robot.q[0] == pytest.approx(rest_angle(2.0, math.radians(60.0), mass, com), abs=1e-8)


@pytest.mark.parametrize(("change", "phrase", "error"), [
    ({"stiffness": -1.0}, "stiffness -1.0", ValueError),
    ({"stiffness": math.nan}, "stiffness nan", ValueError),
    ({"stiffness": "stiff"}, "stiffness 'stiff'; it must be a real number", TypeError),   # (the wrong kind)
    ({"spring_ref": math.inf}, "spring_ref inf", ValueError),
])
def test_a_bad_spring_is_refused_naming_the_joint_and_nothing_is_added(change, phrase, error):
    desc = slider(50.0, 0.1)
    for key, value in change.items():
        setattr(desc.joints[0], key, value)
    w = tb.World()
    with pytest.raises(error, match=f"joint 'slide' has {phrase}"):
        w.add_robot(desc, fixed_base=True)
    assert len(w.model.robots) == 0 and w.model.body.count == 0


def test_a_spring_on_a_ball_joint_is_refused():
    links = [LinkSpec("base"), LinkSpec("ball", 1.0, np.zeros(3), np.eye(3) * 0.01)]
    joints = [JointSpec("wrist", "spherical", "base", "ball", stiffness=3.0)]
    w = tb.World()
    with pytest.raises(ValueError, match="joint 'wrist' is 'spherical' with stiffness 3: a joint spring needs"):
        w.add_robot(RobotDescription("ball", links, joints), fixed_base=True)
    assert len(w.model.robots) == 0
