"""The `tumble` command end to end: demo, run, view, validate; user errors; Ctrl-C during a run.

Outputs are checked against closed forms where there is one (a ball in free fall under the splitting
integrator, whose discrete trajectory is known exactly), and for what the user is promised otherwise
(files present, loadable without pickles, the replay escaping body names).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

import numpy as np
import pytest

import tumble as tb
from tumble.user import cli

G = 9.81
DT = 0.01

SCENE = f"""\
format = 1

[world]
gravity = [0.0, 0.0, -{G}]

[run]
dt = {DT}
duration = 0.3

[ground]
height = 0.0

[[bodies]]
name = "ball <script>alert(1)</script>"
shape = {{ type = "sphere", radius = 0.1 }}
mass = 2.0
position = [0.0, 0.0, 5.0]
velocity = [1.0, 0.0, 0.0]

[[bodies]]
name = "crate"
shape = {{ type = "box", size = [0.4, 0.4, 0.4] }}
density = 500.0
position = [3.0, 0.0, 0.2]
"""


def _run(argv, capsys):
    status = cli.main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return status, out, err


@pytest.fixture
def scene(tmp_path):
    path = tmp_path / "drop.toml"
    path.write_text(SCENE)
    return path


def test_run_writes_a_trajectory_that_matches_free_fall(scene, tmp_path, capsys):
    """The ball is far above everything for 0.3 s. Each of the S sub-steps of h = dt / S kicks then drifts
    (v_K = v0 − g K h, x_K = x0 + h Σ v_J), so after step k (K = S k) z = z0 − g h² K (K + 1) / 2 exactly:
    compared to rounding (1e-12 m on values of 5 m)."""
    out = tmp_path / "out"
    status, stdout, _ = _run(["run", scene, "-o", out, "--csv", "--record-every", "1", "-q"], capsys)
    assert status == 0, stdout
    for name in ("drop.npz", "drop.csv", "replay.html", "plots.png", "summary.json"):
        assert (out / name).is_file(), name
    traj = tb.Trajectory.load(out / "drop.npz")
    k = np.arange(len(traj))
    np.testing.assert_allclose(traj.times, k * DT, atol=1e-12)
    S = tb.World().settings.substeps
    K, h = S * k, DT / S
    np.testing.assert_allclose(traj.positions[:, 1, 2], 5.0 - G * h * h * K * (K + 1) / 2.0, rtol=0, atol=1e-12)
    np.testing.assert_allclose(traj.positions[:, 1, 0], 1.0 * DT * k, rtol=0, atol=1e-12)
    # The crate rests on the ground: contacts every step after the first, and they carry its weight.
    assert np.all(traj.contact_count[1:] >= 4) and traj.contact_count[0] == 0
    summary = json.loads((out / "summary.json").read_text())
    assert summary["bodies"] == 2 and summary["fixed_bodies"] == 1 and summary["steps"] == 30
    assert "<script>alert(1)</script>" not in (out / "replay.html").read_text()
    assert "wrote" in stdout


def test_run_options_override_the_scene(scene, tmp_path, capsys):
    out = tmp_path / "o"
    status, _, err = _run(["run", scene, "-o", out, "--duration", "0.05", "--dt", "0.005", "--solver", "apgd",
                           "--no-html", "--no-plots", "-q"], capsys)
    assert status == 0, err
    traj = tb.Trajectory.load(out / "drop.npz")
    assert traj.times[-1] == pytest.approx(0.05, abs=1e-12)
    assert not (out / "replay.html").exists() and not (out / "plots.png").exists()


def test_view_writes_a_replay_of_a_saved_trajectory(scene, tmp_path, capsys):
    out = tmp_path / "out"
    assert _run(["run", scene, "-o", out, "--no-html", "-q"], capsys)[0] == 0
    status, stdout, _ = _run(["view", out / "drop.npz", "-o", tmp_path / "r.html", "--title", "a <b>title</b>"],
                             capsys)
    assert status == 0
    html = (tmp_path / "r.html").read_text()
    assert "<b>title</b>" not in html and "three" in html.lower()
    assert "frames of 3 bodies" in stdout


def test_demo_writes_its_outputs(tmp_path, capsys):
    out = tmp_path / "demo"
    status, stdout, _ = _run(["demo", "-o", out, "--duration", "0.25", "-q"], capsys)
    assert status == 0
    for name in ("pile.npz", "pile.csv", "replay.html", "plots.png", "summary.json"):
        assert (out / name).is_file(), name
    summary = json.loads((out / "summary.json").read_text())
    assert summary["bodies"] == 100 and summary["fixed_bodies"] == 5  # the ground and four walls
    assert summary["steps"] == 60
    traj = tb.Trajectory.load(out / "pile.npz")
    # Nothing touches in the first 0.25 s but the lowest layer's landing: bodies still fall freely, so
    # the momentum grows as M g t while no contact acts (checked at the first recorded frames).
    moving = ~traj.fixed
    total_mass = traj.masses[moving].sum()
    assert traj.linear_momentum[1, 2] == pytest.approx(-total_mass * G * traj.times[1], rel=1e-9)


def test_compile_reports_what_it_compiled(scene, capsys):
    """`tumble compile SCENE` compiles the scene's kernels ahead (or finds them in Numba's cache) and says
    which; a second time everything is cached (the first run's children, or the test run, compiled it),
    unless this process cannot fork (Numba's thread pool started here: then it says what is left)."""
    status, first, _ = _run(["compile", scene, "-q"], capsys)
    assert status == 0 and first.startswith(f"tumble compile: {scene}:")
    assert "groups of kernels in" in first or "already compiled" in first
    status, second, _ = _run(["compile", scene, "-q", "--processes", "1"], capsys)
    assert status == 0
    assert "everything was already compiled" in second or "left to compile at their first use" in first


def test_validate_quick_passes(capsys):
    status, stdout, _ = _run(["validate", "--quick", "free-fall-velocity", "bounce"], capsys)
    assert status == 0
    assert "2 of 2 passed" in stdout


MALFORMED = {
    "syntax": "format = 1\n[world\n",
    "unknown-shape": 'format = 1\n[[bodies]]\nshape = { type = "torus", radius = 1.0 }\n',
    "negative-radius": 'format = 1\n[[bodies]]\nshape = { type = "sphere", radius = -1.0 }\n',
    "mass-and-density": ('format = 1\n[[bodies]]\nshape = { type = "sphere", radius = 1.0 }\n'
                         'mass = 1.0\ndensity = 2.0\n'),
    "bad-vector": 'format = 1\n[[bodies]]\nshape = { type = "sphere", radius = 1.0 }\nposition = [0.0, 1.0]\n',
    "unknown-key": 'format = 1\n[[bodies]]\nshape = { type = "sphere", radius = 1.0 }\nspeed = 3.0\n',
    "unknown-solver": 'format = 1\n[world.contact]\nsolver = "magic"\n',
    "string-for-number": 'format = 1\n[ground]\nheight = "low"\n',
    "nan": 'format = 1\n[world]\ngravity = [0.0, 0.0, nan]\n',
    "unknown-material": 'format = 1\n[[bodies]]\nshape = { type = "sphere", radius = 1.0 }\nmaterial = "steel"\n',
    "duplicate-name": ('format = 1\n[[bodies]]\nname = "a"\nshape = { type = "sphere", radius = 1.0 }\n'
                       '[[bodies]]\nname = "a"\nshape = { type = "sphere", radius = 1.0 }\n'),
    "newer-format": "format = 99\n",
    "no-shape": 'format = 1\n[[bodies]]\nname = "a"\n',
}


@pytest.mark.parametrize("kind", sorted(MALFORMED))
def test_malformed_scene_is_one_line_and_exit_2(kind, tmp_path, capsys):
    path = tmp_path / f"{kind}.toml"
    path.write_text(MALFORMED[kind])
    status, stdout, err = _run(["run", path, "-o", tmp_path / "out", "-q"], capsys)
    assert status == 2
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith("tumble run: error: ") and f"{kind}.toml:" in lines[0]
    assert not (tmp_path / "out").exists()  # nothing written


def test_missing_files_are_user_errors(tmp_path, capsys):
    for argv in (["run", tmp_path / "none.toml"], ["view", tmp_path / "none.npz"],
                 ["compile", tmp_path / "none.toml"]):
        status, _, err = _run(argv, capsys)
        assert status == 2 and len(err.strip().splitlines()) == 1


def test_the_real_process_exits_2_on_a_bad_scene(tmp_path):
    path = tmp_path / "bad.toml"
    path.write_text(MALFORMED["negative-radius"])
    proc = subprocess.run([sys.executable, "-m", "tumble", "run", str(path)], capture_output=True, text=True,
                          timeout=120, cwd=tmp_path)
    assert proc.returncode == 2
    assert proc.stderr.count("\n") == 1 and "Traceback" not in proc.stderr
    assert "bad.toml:3:" in proc.stderr


@pytest.mark.skipif(sys.platform == "win32", reason="signals to a child process are POSIX")
@pytest.mark.parametrize("signum, status, said, ignored", [(signal.SIGINT, 130, "interrupted", False),
                                                           (signal.SIGINT, 130, "interrupted", True),
                                                           (signal.SIGTERM, 143, "terminated (SIGTERM)", False)],
                         ids=["SIGINT", "SIGINT-ignored-by-the-parent", "SIGTERM"])
def test_a_signal_mid_run_saves_what_was_recorded(tmp_path, signum, status, said, ignored):
    """Ctrl-C (SIGINT) or SIGTERM while `tumble run` steps, after its first checkpoint: one line on stderr,
    exit 130 or 143, and the npz holds every frame recorded (a final save by the interrupt handler, more than
    the checkpoint had). SIGTERM used to kill the process, leaving the last checkpoint only. The scene keeps
    its bodies awake: asleep, its million steps are skipped in about 3 s on a quick machine, and the signal
    then met the run's own final save instead of a step. Started with SIGINT ignored (a parent's setting, which a
    program inherits: Python then installs no Ctrl-C handler of its own), Ctrl-C still interrupts: the run used to
    go on to its end and exit 0 (the suite's workers sometimes ran it so)."""
    scene = tmp_path / "drop.toml"
    scene.write_text(SCENE.replace("[run]", "[world.contact]\nsleep = false\n\n[run]"))
    out = tmp_path / "out"
    proc = subprocess.Popen([sys.executable, "-m", "tumble", "run", str(scene), "-o", str(out), "--duration", "1000",
                             "--dt", "0.001", "--record-every", "10", "-q"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=tmp_path,
                            preexec_fn=(lambda: signal.signal(signal.SIGINT, signal.SIG_IGN)) if ignored else None)
    try:
        deadline = time.monotonic() + 150
        while not (out / "drop.npz").exists():     # the first checkpoint: about 5 s into the stepping
            assert proc.poll() is None, proc.communicate()
            assert time.monotonic() < deadline, "no checkpoint within 150 s"
            time.sleep(0.2)
        checkpointed = len(tb.Trajectory.load(out / "drop.npz"))
        time.sleep(1.0)
        proc.send_signal(signum)
        _, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == status, err
    lines = err.splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"tumble run: {said} at t = "), err
    traj = tb.Trajectory.load(out / "drop.npz")
    assert f"kept {len(traj)} frames in" in lines[0]
    assert len(traj) > checkpointed and np.all(np.diff(traj.times) > 0)
    assert not [p for p in os.listdir(out) if p.endswith(".tmp")]


BALL = """\
[[bodies]]
name = "{name}"
shape = {{ type = "sphere", radius = 0.1 }}
position = {position}
velocity = {velocity}
"""


def _scene(tmp_path, text: str):
    path = tmp_path / "blowup.toml"
    path.write_text("format = 1\n" + text)
    return path


def test_run_stops_at_a_non_finite_step_keeping_the_frames_recorded(tmp_path, capsys):
    """Issue 53 item 10: a spring of 1e300 N/m overflows in the second step (NonFiniteStep, undone). `tumble run`
    exits 2 with one line that says so and where the frames recorded before it are; it writes no summary."""
    scene = _scene(tmp_path, BALL.format(name="a", position=[0.0, 0.0, 1.0], velocity=[0.0, 0.0, 0.0])
                   + BALL.format(name="b", position=[1.0, 0.0, 1.0], velocity=[0.0, 0.0, 0.0])
                   + '[[springs]]\ntype = "axial"\na = "a"\nb = "b"\nanchor_a = [0.0, 0.0, 1.0]\n'
                     'anchor_b = [1.0, 0.0, 1.0]\nstiffness = 1e300\nrest_length = 0.5\n')
    out = tmp_path / "out"
    status, _, err = _run(["run", scene, "-o", out, "--duration", "1", "--dt", "0.01", "--record-every", "1",
                           "--quiet"], capsys)
    assert status == 2
    assert len(err.splitlines()) == 1 and "Traceback" not in err, err
    assert err.startswith("tumble run: error: the step of dt=0.01 s at t=0.01 s made the ") and "non-finite" in err
    assert err.rstrip().endswith(f"kept 2 frames (t = 0 to 0.01 s) in {out / 'blowup.npz'}"), err
    kept = tb.Trajectory.load(out / "blowup.npz")
    assert len(kept) == 2 and np.all(np.isfinite(kept.positions))
    assert not (out / "summary.json").exists()


@pytest.mark.parametrize("case", ["fast", "blow-up", "energy"])
def test_run_of_a_meaningless_motion_exits_2_without_a_summary(case, tmp_path, capsys):
    """Issue 53 item 10: `tumble run` exited 0 reporting 5e305 J -> -0.98 J. A body faster than light (given so,
    or a spring too stiff for the step that blows up without overflowing) or an energy beyond float64 with every
    state finite (1e300 m/s/s gravity at 1e10 m) is a units mistake or a blow-up: status 2, one line naming the
    body, the speed or energy and the time; the trajectory is kept, no summary is written."""
    ball = {"fast": BALL.format(name="ball", position=[0.0, 0.0, 1.0], velocity=[1e300, 0.0, 0.0]),
            "blow-up": BALL.format(name="a", position=[0.0, 0.0, 1.0], velocity=[0.0, 0.0, 0.0])
            + BALL.format(name="b", position=[1.0, 0.0, 1.0], velocity=[0.0, 0.0, 0.0])
            + '[[springs]]\ntype = "axial"\na = "a"\nb = "b"\nanchor_a = [0.0, 0.0, 1.0]\n'
              'anchor_b = [1.0, 0.0, 1.0]\nstiffness = 1e12\nrest_length = 0.9\n',
            "energy": "[world]\ngravity = [0.0, 0.0, -1e300]\n"
            + BALL.format(name="ball", position=[0.0, 0.0, 1e10], velocity=[0.0, 0.0, 0.0])}[case]
    out = tmp_path / "out"
    status, _, err = _run(["run", _scene(tmp_path, ball), "-o", out, "--duration", "0.1", "--dt", "0.01",
                           "--record-every", "1", "--quiet"], capsys)
    assert status == 2
    assert len(err.splitlines()) == 1 and "Traceback" not in err, err
    said = {"fast": "body 'ball' (index 0) moves at 1e+300 m/s at t = 0 s, faster than light",
            "blow-up": "moves at 1.67e+09 m/s at t = 0.03 s, faster than light",
            "energy": "the energy left float64's range at t = 0 s (kinetic 0 J, potential inf J)"}[case]
    assert said in err and err.startswith("tumble run: error: ") and "blowup.toml: " in err, err
    assert err.rstrip().endswith(f"no summary written, the trajectory is in {out / 'blowup.npz'}"), err
    assert (out / "blowup.npz").exists() and not (out / "summary.json").exists()
