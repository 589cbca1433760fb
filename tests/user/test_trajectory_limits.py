"""Recording and reading trajectories at their limits (issue 31): nothing grows with the number of steps, a
recording that cannot fit is refused before the first step, the checkpoint is checked before the first step,
and ``Trajectory.load`` checks a file's array headers, kinds, shapes and geometry before trusting them."""

from __future__ import annotations

import struct
import time
import tracemalloc
import zipfile

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import tumble as tb
from tumble.user import trajectory as tr

from .npz_files import HUGE_SHAPE, huge_header_npz, npy_header, replace_member, trajectory


def _ball_world() -> tb.World:
    world = tb.World()
    world.add_body(tb.Sphere(0.1), position=(0.0, 0.0, 1.0))
    return world


# ---------------------------------------------------------------------------------------------- recording
def test_a_recording_that_cannot_fit_is_refused_before_the_first_step():
    """The issue: simulate(1e12, 1e-3) built a set of 10^15 step indices and exhausted the memory."""
    world = _ball_world()
    started = time.perf_counter()
    with pytest.raises(ValueError, match=r"recording 1,000,000,000,000,001 frames .* record_every=1\) of 1 bodies "
                                         r".*MAX_RECORDING_FRACTION.* larger record_every or a shorter duration"):
        world.simulate(1e12, 1e-3)
    assert time.perf_counter() - started < 5.0
    assert world.time == 0.0


def test_a_scene_run_of_1e9_seconds_is_refused_up_front(tmp_path):
    """The issue: `[run] duration = 1e9` did the same through the scene's run defaults."""
    path = tmp_path / "long.toml"
    path.write_text('format = 1\n[run]\ndt = 0.004\nduration = 1e9\nrecord_every = 4\n'
                    '[[bodies]]\nshape = { type = "sphere", radius = 0.1 }\n')
    world = tb.load_scene(path)
    run = world.run_defaults
    with pytest.raises(ValueError, match="62,500,000,001 frames"):
        world.simulate(run["duration"], run["dt"], record_every=run["record_every"])


def test_the_memory_limit_is_the_stated_fraction(monkeypatch):
    frames = tr.check_recording(1000, 10, 5)
    assert frames == 101
    need = frames * (tr.RECORDED_BYTES_PER_FRAME + 5 * tr.RECORDED_BYTES_PER_BODY)
    monkeypatch.setattr(tr, "memory_limit_bytes", lambda: need)
    assert tr.check_recording(1000, 10, 5) == 101
    monkeypatch.setattr(tr, "memory_limit_bytes", lambda: need - 1)
    with pytest.raises(ValueError, match="record_every=10"):
        tr.check_recording(1000, 10, 5)


def test_stepping_a_billion_step_run_allocates_nothing_per_step():
    """10^9 steps recorded at the first and last: stepping a few of them holds no more memory than a small run
    (the old code's frame set was as large as the recording; nothing else may grow with the steps)."""
    world = _ball_world()
    world.simulate(0.002, 0.001)    # compile or load the kernels first: not what is measured
    stop_after = [5]

    def stop(w, t):
        stop_after[0] -= 1
        if stop_after[0] < 0:
            raise KeyboardInterrupt

    world.add_force(stop)
    tracemalloc.start()
    try:
        with pytest.raises(tb.SimulationInterrupted) as info:
            world.simulate(1e6, 0.001, record_every=10**9)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert len(info.value.trajectory) == 1
    assert peak < 512 * 1024, peak


@given(steps=st.integers(0, 300), every=st.integers(1, 400))
def test_the_frame_count_is_every_kth_step_and_the_last(steps, every):
    assert tr.recorded_frames(steps, every) == len(set(range(0, steps + 1, every)) | {steps})


def test_the_recorded_times_are_every_kth_step_and_the_last():
    traj = _ball_world().simulate(0.07, 0.01, record_every=3)
    np.testing.assert_allclose(traj.times, [0.0, 0.03, 0.06, 0.07], atol=1e-12)


# ---------------------------------------------------------------------------------------------- checkpoint
def test_a_checkpoint_that_is_not_a_path_names_checkpoint():
    """The issue: a TypeError that named no argument."""
    world = _ball_world()
    with pytest.raises(TypeError, match=r"^checkpoint must be a file path \(str or os.PathLike\) or None, got 123$"):
        world.simulate(0.01, 0.01, checkpoint=123)
    assert world.time == 0.0


def test_a_checkpoint_in_a_missing_folder_is_refused_and_nothing_is_created(tmp_path):
    """The issue: simulate(..., checkpoint="/nonexistent/dir/x.npz") made folders at the filesystem root."""
    world = _ball_world()
    target = tmp_path / "nonexistent" / "dir" / "x.npz"
    with pytest.raises(ValueError, match=r"^checkpoint '.*x\.npz': its folder '.*dir' does not exist"):
        world.simulate(0.01, 0.01, checkpoint=target)
    assert not (tmp_path / "nonexistent").exists() and world.time == 0.0


@pytest.mark.parametrize("where, message", [
    ("", "checkpoint must name a file, got an empty path ''"),
    ("folder", "checkpoint must name a file, got the folder"),
    ("afile/x.npz", "its folder '.*afile' is not a folder"),
])
def test_checkpoints_that_cannot_be_written_are_refused(tmp_path, monkeypatch, where, message):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "folder").mkdir()
    (tmp_path / "afile").write_text("x")
    world = _ball_world()
    with pytest.raises(ValueError, match=message):
        world.simulate(0.01, 0.01, checkpoint=where)
    assert world.time == 0.0


def test_an_interruption_saves_and_carries_what_stopped_it(tmp_path):
    class Stop(KeyboardInterrupt):
        pass

    world = _ball_world()
    steps = [0]

    def stop(w, t):
        steps[0] += 1
        if steps[0] == 4:
            raise Stop

    world.add_force(stop)
    with pytest.raises(tb.SimulationInterrupted) as info:
        world.simulate(1.0, 0.01, checkpoint=tmp_path / "x.npz")
    assert isinstance(info.value.interrupt, Stop) and info.value.path == tmp_path / "x.npz"
    assert len(tb.Trajectory.load(tmp_path / "x.npz")) == len(info.value.trajectory) == 4


# ---------------------------------------------------------------------------------------------- loading
def test_a_header_claiming_terabytes_is_refused_before_anything_is_loaded(tmp_path, monkeypatch):
    """The issue: `tumble view` on an .npz whose header claimed a 6.5 TiB array died with a traceback."""
    path = huge_header_npz(tmp_path / "huge.npz")
    monkeypatch.setattr(np, "load", lambda *a, **k: pytest.fail("np.load reached"))
    with pytest.raises(ValueError, match=rf"array 'positions' claims shape \({HUGE_SHAPE[0]}, {HUGE_SHAPE[1]}, 3\) "
                                         r"of float64 \(6,960,000,000,000 bytes\) but the file holds 64 bytes"):
        tb.Trajectory.load(path)


def test_a_member_claiming_more_than_deflate_can_give_is_refused(tmp_path):
    """A zip whose directory says a member unpacks to 4 GiB from a few hundred bytes, with an .npy header that
    agrees: the header check alone would pass it."""
    path = tmp_path / "bomb.npz"
    trajectory().save(path)
    claimed = 0xFFFF_FF00
    replace_member(path, "positions.npy", npy_header((claimed // 8 - 100,)) + bytes(100))
    data = bytearray(path.read_bytes())
    for signature, offset in ((b"PK\x03\x04", 22), (b"PK\x01\x02", 24)):
        at = data.find(signature)
        while at >= 0:
            name_length = struct.unpack_from("<H", data, at + (26 if signature == b"PK\x03\x04" else 28))[0]
            start = at + (30 if signature == b"PK\x03\x04" else 46)
            if data[start:start + name_length] == b"positions.npy":
                struct.pack_into("<I", data, at + offset, claimed)
            at = data.find(signature, at + 4)
    path.write_bytes(bytes(data))
    with pytest.raises(ValueError, match=r"array 'positions' is damaged: it claims 4,294,967,040 bytes from"):
        tb.Trajectory.load(path)


def test_random_bytes_are_not_called_pickled_data(tmp_path):
    """The issue: random bytes were called "pickled (object) data"."""
    path = tmp_path / "noise.npz"
    path.write_bytes(np.random.default_rng(1).bytes(2000))
    with pytest.raises(ValueError) as info:
        tb.Trajectory.load(path)
    assert "is not an .npz trajectory (not a zip archive of arrays)" in str(info.value)
    assert "pickle" not in str(info.value)


@pytest.mark.parametrize("member, data, message", [
    ("names.npy", npy_header((1,), descr="|O") + bytes(8), "array 'names' holds Python objects"),
    ("times.npy", npy_header((3,)) + bytes(8), r"array 'times' claims shape \(3,\) of float64 \(24 bytes\) but the "
                                               r"file holds 8"),
    ("times.npy", b"\x93NUMPY\x03\x00" + bytes(20), "array 'times' has a bad .npy header: format version 3.0"),
    ("times.npy", b"not an array at all", "array 'times' has a bad .npy header"),
    ("times.txt", b"x", "member 'times.txt' is not an .npy array"),
])
def test_damaged_members_are_refused_naming_the_array(tmp_path, member, data, message):
    path = tmp_path / "t.npz"
    trajectory().save(path)
    replace_member(path, member, data)
    with pytest.raises(ValueError, match=message):
        tb.Trajectory.load(path)


@pytest.mark.parametrize("field, value, message", [
    ("times", np.array(["a", "b", "c"]), "times holds <U1, expected numbers"),
    ("names", np.array([1.0]), "names holds float64, expected text"),
    ("contact_offsets", np.array([0, 2, 1, 1]), "contact_offsets must start at 0 and not decrease"),
    ("format_version", np.array([2, 2]), "format_version must be one integer"),
    ("geometry", np.array(3.0), "geometry must be one string"),
])
def test_arrays_of_the_wrong_kind_are_refused_naming_them(tmp_path, field, value, message):
    path = tmp_path / "t.npz"
    trajectory().save(path)
    with np.load(path) as data:
        arrays = {name: data[name] for name in data.files}
    arrays[field] = value
    np.savez(path, **arrays)
    with pytest.raises(ValueError, match=message):
        tb.Trajectory.load(path)


@pytest.mark.parametrize("geometry, message", [
    ("{not json", r"geometry: not valid JSON: Expecting property name"),
    ("[" * 100_000, r"geometry: not valid JSON: nested too deeply"),
    ("[]", r"geometry: must be a JSON object with 'ground' and 'bodies'"),
    ('{"ground": "low", "bodies": []}', r"geometry\.ground: must be null or a finite number"),
    ('{"ground": 0, "bodies": []}', r"geometry\.bodies: must be a list of 1 entries \(one per body\), got 0"),
    ('{"ground": 0, "bodies": [{"parts": []}]}', r"geometry\.bodies\[0\]: must be an object with 'fixed'"),
    ('{"ground": 0, "bodies": [{"fixed": false, "parts": [{"type": "torus"}]}]}',
     r"geometry\.bodies\[0\]\['parts'\]\[0\]\['type'\] must be one of"),
    ('{"ground": 0, "bodies": [{"fixed": false, "parts": [{"type": "box", "half_extents": [1, 1]}]}]}',
     r"geometry\.bodies\[0\]\['parts'\]\[0\]\['half_extents'\] must be 3"),
])
def test_malformed_geometry_names_the_file_and_key(tmp_path, geometry, message):
    """The issue: malformed geometry JSON did not name the file or the key (and some raised KeyError)."""
    path = trajectory(geometry=geometry).save(tmp_path / "g.npz")
    with pytest.raises(ValueError, match=rf"^path '.*g\.npz': {message}"):
        tb.Trajectory.load(path)


def test_a_file_larger_than_the_memory_limit_is_refused(tmp_path, monkeypatch):
    path = trajectory().save(tmp_path / "t.npz")
    monkeypatch.setattr(tr, "memory_limit_bytes", lambda: 100)
    with pytest.raises(ValueError, match="its arrays take .* more than the limit"):
        tb.Trajectory.load(path)


def test_a_good_file_still_loads_exactly(tmp_path):
    original = trajectory(frames=5)
    back = tb.Trajectory.load(original.save(tmp_path / "t.npz"))
    for name in ("times", "positions", "orientations", "masses", "names", "contact_offsets"):
        np.testing.assert_array_equal(getattr(back, name), getattr(original, name), err_msg=name)
    assert back.geometry == original.geometry


def test_a_damaged_crc_is_one_line(tmp_path):
    path = trajectory().save(tmp_path / "t.npz")
    with zipfile.ZipFile(path) as archive:
        info = archive.getinfo("times.npy")
        offset = info.header_offset + 30 + len(info.filename) + len(info.extra) + info.compress_size // 2
    data = bytearray(path.read_bytes())
    data[offset] ^= 0xFF
    path.write_bytes(bytes(data))
    with pytest.raises(ValueError, match=r"^path '.*t\.npz' could not be read as a trajectory"):
        tb.Trajectory.load(path)


def test_simulate_refuses_a_bad_checkpoint_or_recording_before_it_compiles(monkeypatch, tmp_path):
    """The checks come before the first step's precompile (seconds to a minute on a cold cache)."""
    world = tb.World()
    world.add_body(tb.Sphere(0.1))

    def compiled() -> None:
        raise AssertionError("precompiled before the arguments were checked")

    monkeypatch.setattr(world, "_before_first_step", compiled)
    with pytest.raises(ValueError, match="checkpoint"):
        world.simulate(1.0, 0.1, checkpoint=tmp_path / "missing" / "run.npz")
    with pytest.raises(ValueError, match="record_every"):
        world.simulate(1e12, 1e-3)
    assert world.time == 0.0


def test_simulate_refuses_more_steps_than_a_float_counts():
    # round(1e300 / 1e-300) raised OverflowError
    world = tb.World()
    world.add_body(tb.Sphere(0.1))
    with pytest.raises(ValueError, match="duration / dt"):
        world.simulate(1e300, 1e-300)
