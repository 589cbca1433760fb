"""Sweeps on a LocalCluster: the bounce's apex against e² h, a bad value that fails its row alone, figures and
final states, and resuming an interrupted sweep."""

from __future__ import annotations

import signal
import subprocess
import sys
import time

import numpy as np
import pandas as pd
import pytest

import tumble as tb
from tumble.sweep import grid, run_sweep
from tumble.sweep.store import SUMMARY_TYPES

from .conftest import DROPS, RESTITUTIONS
from .figures import top_height
from .scenes import BALL, FALL, RADIUS, apexes, env, write


def test_bounce_sweep_apexes_are_e_squared_times_the_drop(bounce_sweep):
    """Each variant's first rebound apex is e² h (Baraff II (8-10): v⁺ = −e v⁻, and the apex height ∝ v²).
    Tolerance: 3 %, that of tests/contact/test_timestep_contact.py::test_bounce_apex_ratio_is_e_squared (S5),
    the same ball at the same dt = 1/240 s with every step recorded: the apex is read from the recorded steps
    and the restitution is a velocity target on the step of impact. The table, read with pandas, has one row
    per variant: a column per varied key, status, error and every figure of tumble run's summary.json."""
    _, result = bounce_sweep
    table = pd.read_parquet(result.path)
    assert result.computed == 6 and result.reused == 0
    assert len(table) == 6
    assert list(table.columns[:5]) == ["variant", "bodies.ball.restitution", "bodies.ball.position.2", "status",
                                       "error"]
    assert set(SUMMARY_TYPES) <= set(table.columns)
    assert (table["status"] == "ok").all() and (table["error"] == "").all()
    assert sorted(zip(table["bodies.ball.restitution"], table["bodies.ball.position.2"], strict=True)) == sorted(
        (e, h + RADIUS) for e in RESTITUTIONS for h in DROPS)
    assert (table["steps"] == 240).all() and (table["bodies"] == 1).all()
    for _, row in table.iterrows():
        traj = tb.Trajectory.load(result.path.parent / row["trajectory"])
        assert list(traj.names) == ["ball"]
        z = traj.positions[:, 0, 2] - RADIUS
        e, h = row["bodies.ball.restitution"], row["bodies.ball.position.2"] - RADIUS
        assert apexes(z)[0] == pytest.approx(e * e * h, rel=0.03)


def test_a_bad_value_fails_its_row_and_the_others_complete(tmp_path):
    """Restitution 1.5 is refused by the scene loader when that variant builds its world: its row says so
    (file, line, key, value) and the others run. The same sweep keeps a figure of the user's own (the
    rebound's top, within 3 % of e² h + r as above) and each variant's final state (plain arrays)."""
    scene = write(tmp_path / "ball.toml", BALL.format(radius=RADIUS))
    variants = grid({"bodies.ball.restitution": [0.5, 1.5, 0.8]})
    result = run_sweep(scene, variants, duration=1.0, dt=1 / 240, out=tmp_path / "out", workers=1,
                       final_state=True, figures={"top": top_height})
    table = pd.read_parquet(result.path)
    assert list(table["status"]) == ["ok", "error", "ok"]
    assert table["error"][1] == "ValueError: ball.toml:12: bodies[0].restitution: must be in [0.0, 1.0], got 1.5"
    assert table["error"][0] == table["error"][2] == ""
    assert np.isnan(table["top"][1]) and np.isnan(table["energy_end_J"][1])
    for i, e in ((0, 0.5), (2, 0.8)):
        assert table["top"][i] - RADIUS == pytest.approx(e * e * 1.0, rel=0.03)
        with np.load(tmp_path / "out" / table["final_state"][i], allow_pickle=False) as final:
            assert final["positions"].shape == (2, 3) and list(final["names"]) == ["ground", "ball"]
            assert float(final["time"]) == pytest.approx(1.0)
    assert table["final_state"][1] == ""


def test_an_interrupted_sweep_computes_only_the_missing_variants_when_run_again(tmp_path):
    """Ctrl-C (SIGINT) once the first variant is written: status 130, the finished variants kept. The same
    command again computes only the rest (it says how many) and writes the whole table."""
    scene = write(tmp_path / "fall.toml", FALL)
    out = tmp_path / "out"
    command = [sys.executable, "-m", "tumble", "sweep", str(scene), "--vary", "bodies.ball.velocity.0=0:1:3",
               "--duration", "1.5", "--dt", "1e-04", "--out", str(out), "--workers", "1", "-q"]
    first = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env())
    deadline = time.monotonic() + 120
    while not list((out / "variants").glob("*.json")):
        assert first.poll() is None, first.communicate()
        assert time.monotonic() < deadline
        time.sleep(0.05)
    first.send_signal(signal.SIGINT)
    stdout, stderr = first.communicate(timeout=60)
    assert first.returncode == 130, stderr
    assert "the same command computes only the rest" in stdout
    done = len(list((out / "variants").glob("*.json")))
    assert 1 <= done < 3, "the sweep should have been stopped part-way"
    assert not (out / "results.parquet").exists()
    again = subprocess.run(command, capture_output=True, text=True, timeout=120, env=env())
    assert again.returncode == 0, again.stderr
    assert f"computed {3 - done}, reused {done} (already done)" in again.stdout
    table = pd.read_parquet(out / "results.parquet")
    assert list(table["bodies.ball.velocity.0"]) == [0.0, 0.5, 1.0]
    assert (table["status"] == "ok").all()
    # a free fall keeps its energy but for the integrator's lag: a first-order step leaves the position at
    # most g dt t / 2 behind the exact one, so |ΔE| <= m g · g dt t / 2 = 7.2e-3 J at dt = 1e-4 s, t = 1.5 s
    change = (table["energy_end_J"] - table["energy_start_J"]).abs()
    assert (change <= 9.81**2 * 1e-4 * 1.5 / 2).all()
