"""Trajectory recording and files."""

import numpy as np
import pytest

import tumble as tb


@pytest.fixture
def traj():
    world = tb.World()
    world.add_body(tb.Box(0.2, 0.4, 0.8), name="box", position=(0, 0, 1), angular_velocity=(0, 5, 0.1))
    world.add_body(tb.Sphere(0.1), velocity=(1, 0, 0))
    return world.simulate(0.1, 0.01, record_every=3)


def test_recording_shapes_and_frames(traj):
    # 10 steps recorded every 3rd: steps 0, 3, 6, 9 and the last one, 10.
    np.testing.assert_allclose(traj.times, [0.0, 0.03, 0.06, 0.09, 0.1], atol=1e-15)
    assert traj.positions.shape == (5, 2, 3) and traj.orientations.shape == (5, 2, 4)
    assert traj.energy.shape == (5,) and traj.angular_momentum.shape == (5, 3)
    assert list(traj.names) == ["box", ""]
    # Free fall: total energy is conserved by symplectic Euler only to O(h); check the magnitude.
    assert np.ptp(traj.energy) < 1e-2 * abs(traj.energy[0])


def test_npz_round_trip(traj, tmp_path):
    path = traj.save(tmp_path / "run.npz")
    back = tb.Trajectory.load(path)
    for name in ("times", "positions", "orientations", "velocities", "angular_velocities", "kinetic_energy",
                 "potential_energy", "linear_momentum", "angular_momentum", "masses", "names"):
        np.testing.assert_array_equal(getattr(back, name), getattr(traj, name))
    assert not list(tmp_path.glob(".*tmp"))  # the temporary file was renamed away


def test_csv_has_one_row_per_time_and_body(traj, tmp_path):
    path = traj.to_csv(tmp_path / "run.csv")
    lines = path.read_text().splitlines()
    assert lines[0].startswith("time,body,x,y,z,qw")
    assert len(lines) == 1 + 5 * 2
    row = np.array(lines[-1].split(","), dtype=float)
    np.testing.assert_allclose(row[2:5], traj.positions[-1, 1], rtol=1e-15)


def test_plot_writes_png(traj, tmp_path):
    pytest.importorskip("matplotlib")
    path = traj.plot(tmp_path / "energy.png")
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_max_penetration_read_in_place_equals_the_contacts():
    """Recording reads the deepest contact from the buffer in place; with record_contacts it takes it from
    world.contacts() instead. Both must give the same figures, frame by frame, and 0 where nothing touches."""
    def run(record_contacts):
        world = tb.World()
        world.add_ground()
        for k in range(5):
            world.add_body(tb.Box(0.3, 0.3, 0.3), position=(0.4 * k, 0, 0.5), velocity=(0, 0, -3))
        return world.simulate(0.5, 1 / 240, record_contacts=record_contacts)

    plain, with_contacts = run(False), run(True)
    np.testing.assert_array_equal(plain.max_penetration, with_contacts.max_penetration)
    assert plain.max_penetration.max() > 0.0 and plain.max_penetration[0] == 0.0
    first = int(np.argmax(with_contacts.contact_offsets[1:] > 0))  # first frame with contacts recorded
    depth_free = with_contacts.contact_count[:first]
    assert not np.any(depth_free) and np.all(plain.max_penetration[:first] == 0.0)
