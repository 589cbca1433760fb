"""Fitting friction and restitution to measured motion of a box, and the measured files' checks."""

from __future__ import annotations

import json

import numpy as np
import pytest
from scipy.spatial.transform import Rotation

import tumble as tb
from tumble.sweep.fit import fit, measure_error
from tumble.sweep.measured import load_measured

from .scenes import DROP, SLIDE, box_scene, tumble

MU, E = 0.35, 0.45
"""The true friction and restitution the measurements are made with."""
DT = 1 / 240
SIGMA_X = 1e-3
"""[m] measurement noise of each position coordinate."""
SIGMA_ANGLE = np.radians(1.0)
"""[rad] RMS angle of the measurement noise of an orientation (a random rotation, each component of its
rotation vector N(0, SIGMA_ANGLE²/3))."""
L = 0.1
NOISE = 3 * SIGMA_X**2 / L**2 + SIGMA_ANGLE**2
"""The error measure of pure noise: E[|n_x|²]/L² + E[θ²] = 3 σ_x²/L² + σ_θ² = 6.0e-4."""


def _measure(scene, seconds: float, seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The box's motion every second step for ``seconds``, with seeded noise: (times, positions, quaternions)."""
    traj = tb.load_scene(scene).simulate(seconds, DT)
    rng = np.random.default_rng(seed)
    k = np.arange(0, len(traj), 2)
    box = list(traj.names).index("box")
    x = traj.positions[k, box] + rng.normal(0.0, SIGMA_X, (k.size, 3))
    true = Rotation.from_quat(traj.orientations[k, box], scalar_first=True)
    noise = Rotation.from_rotvec(rng.normal(0.0, SIGMA_ANGLE / np.sqrt(3), (k.size, 3)))
    return traj.times[k], x, (noise * true).as_quat(scalar_first=True)


@pytest.fixture(scope="module")
def tosses(tmp_path_factory):
    """Two measured runs of a 10 cm box with mu = 0.35, e = 0.45: a flat drop from 25 cm (0.4 s, one bounce:
    its height is e's) as CSV, and a spinning slide along the ground (0.8 s, until it stops: mu's) as npz.
    (A box that bounces while it slides, or bounces twice, makes E a rough function of e at the 0.01 scale:
    which corner lands first changes with it. A fit then finds a local minimum; docs/sweeps.md.)"""
    folder = tmp_path_factory.mktemp("fit")
    drop = box_scene(folder / "drop.toml", DROP, MU, E)
    slide = box_scene(folder / "slide.toml", SLIDE, MU, E)
    t, x, q = _measure(drop, 0.4, seed=1)
    rows = "\n".join(",".join([repr(float(ti)), "box", *(repr(float(v)) for v in (*xi, *qi))])
                     for ti, xi, qi in zip(t, x, q, strict=True))
    (folder / "drop.csv").write_text("time,body,x,y,z,qw,qx,qy,qz\n" + rows + "\n")
    t, x, q = _measure(slide, 0.8, seed=2)
    np.savez(folder / "slide.npz", times=t, names=np.array(["box"]), positions=x[:, None], orientations=q[:, None])
    return folder, [(drop, folder / "drop.csv"), (slide, folder / "slide.npz")]


def test_fit_recovers_friction_and_restitution(tosses, tmp_path):
    """From noisy measurements (1 mm, 1°) the fit finds mu and e within 0.02 of the values they were made
    with, and its error on the held-out last quarter of each run is at most that of the true values plus one
    noise level (NOISE: the fitted values may explain the held-out noise worse than the truth, by no more
    than the noise itself). It writes fit.json, the coarse grid and the plot."""
    folder, pairs = tosses
    keys = {"materials.m.friction": (0.05, 1.0), "materials.m.restitution": (0.0, 0.9)}
    result = fit(pairs, keys, dt=DT, length_scale=L, out=tmp_path / "fit", workers=2)
    assert result.values["materials.m.friction"] == pytest.approx(MU, abs=0.02)
    assert result.values["materials.m.restitution"] == pytest.approx(E, abs=0.02)
    _, heldout_true = measure_error(pairs, {"materials.m.friction": MU, "materials.m.restitution": E}, dt=DT,
                                    length_scale=L)
    assert heldout_true == pytest.approx(NOISE, rel=0.5)     # the truth's error is the noise's (check of E)
    assert result.heldout_error <= heldout_true + NOISE
    assert len(result.coarse) == 25 and result.evaluations > 25
    report = json.loads((tmp_path / "fit" / "fit.json").read_text())
    assert report["values"] == result.values and report["heldout_error"] == result.heldout_error
    assert (tmp_path / "fit" / "fit.png").stat().st_size > 10_000
    assert (tmp_path / "fit" / "coarse.parquet").exists()


def test_the_fit_command(tosses, tmp_path):
    """`tumble fit SCENE MEASURED --toss SCENE MEASURED --fit KEY=LOW:HIGH ...` prints the fitted values and
    the errors and writes its files (a small search: this checks the command, not the fit)."""
    _, [(drop, drop_csv), (slide, slide_npz)] = tosses
    run = tumble("fit", str(drop), str(drop_csv), "--toss", str(slide), str(slide_npz), "--fit",
                 "materials.m.friction=0.05:1", "--fit", "materials.m.restitution=0:0.9", "--dt", repr(DT),
                 "--coarse", "2", "--max-evaluations", "3", "--workers", "1", "-o", str(tmp_path / "out"), "-q")
    assert run.returncode == 0, run.stderr
    assert "materials.m.friction = " in run.stdout and "on the held-out part" in run.stdout
    assert {p.name for p in (tmp_path / "out").iterdir()} == {"fit.json", "fit.png", "coarse.parquet"}


def test_measured_files_with_missing_columns_are_refused(tmp_path, tosses):
    """A CSV without z, one with only some of qw..qz, an npz without positions: ValueError naming the file
    and what is missing, before anything runs; on the command line one line and status 2."""
    (tmp_path / "no_z.csv").write_text("time,body,x,y\n0.0,box,0,0\n")
    (tmp_path / "half_q.csv").write_text("time,body,x,y,z,qw,qx\n0.0,box,0,0,0,1,0\n")
    np.savez(tmp_path / "no_x.npz", times=np.zeros(1), names=np.array(["box"]))
    with pytest.raises(ValueError, match=r"no_z\.csv'?: missing column\(s\) z"):
        load_measured(tmp_path / "no_z.csv")
    with pytest.raises(ValueError, match=r"half_q\.csv'?: orientation needs all of qw,qx,qy,qz; missing column\(s\) "
                                         r"qy, qz"):
        load_measured(tmp_path / "half_q.csv")
    with pytest.raises(ValueError, match=r"no_x\.npz'?: missing array\(s\) positions"):
        load_measured(tmp_path / "no_x.npz")
    (tmp_path / "late.csv").write_text("time,body,x,y,z\n0.2,box,0,0,0\n0.1,box,0,0,0\n")
    with pytest.raises(ValueError, match=r"body 'box': times must be >= 0 and strictly increasing"):
        load_measured(tmp_path / "late.csv")
    _, [(drop, _), _] = tosses
    run = tumble("fit", str(drop), str(tmp_path / "no_z.csv"), "--fit", "materials.m.friction=0:1", "--dt", "0.01",
                 "-o", str(tmp_path / "out"))
    assert run.returncode == 2
    assert run.stderr.count("\n") == 1 and "missing column(s) z" in run.stderr
    assert not (tmp_path / "out").exists()
    (tmp_path / "ghost.csv").write_text("time,body,x,y,z\n0.0,ghost,0,0,0\n")
    with pytest.raises(ValueError, match=r"measures body 'ghost', which .*drop\.toml does not have"):
        measure_error([(drop, tmp_path / "ghost.csv")], {"materials.m.friction": 0.3}, dt=DT)
