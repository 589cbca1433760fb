"""The same sweeps on a real Dask cluster: a scheduler and two workers started here as processes, the sweep
sent to it with --scheduler; a worker killed mid-sweep; a scheduler that is not there."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time

import numpy as np
import pandas as pd
import pytest

import tumble as tb

from .conftest import SWEEP_ARGS
from .scenes import FALL, dask_cluster, env, tumble, write

TIMING = ["wall_s", "steps_per_s"]
"""The only columns that measure the machine rather than the simulation."""


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    with dask_cluster(tmp_path_factory.mktemp("dask")) as (address, workers):
        yield address, workers


def test_the_sweep_on_a_running_cluster_gives_the_same_table_bitwise(cluster, bounce_sweep, tmp_path):
    """`tumble sweep ... --scheduler tcp://127.0.0.1:PORT` on the two `dask worker` processes writes the table
    the LocalCluster wrote, every column bit for bit (floats compared exactly) but the two wall-time ones,
    and the same kept trajectories."""
    address, _ = cluster
    scene, local = bounce_sweep
    run = tumble("sweep", str(scene), *SWEEP_ARGS, "--out", str(tmp_path / "out"), "--scheduler", address, "-q")
    assert run.returncode == 0, run.stderr
    assert f"6 to compute on the cluster at {address}" in run.stdout
    here = pd.read_parquet(tmp_path / "out" / "results.parquet")
    there = pd.read_parquet(local.path)
    pd.testing.assert_frame_equal(here.drop(columns=TIMING), there.drop(columns=TIMING), check_exact=True)
    for name in here["trajectory"]:
        a, b = tb.Trajectory.load(tmp_path / "out" / name), tb.Trajectory.load(local.path.parent / name)
        assert np.array_equal(a.positions, b.positions) and np.array_equal(a.orientations, b.orientations)


def test_a_worker_killed_mid_sweep_loses_no_variant(cluster, tmp_path):
    """SIGKILL to a worker process while it runs a variant (and after a first variant is written): its nanny
    starts a new one, the scheduler runs the lost tasks again, and every variant ends with status ok."""
    from distributed import Client

    address, _ = cluster
    scene = write(tmp_path / "fall.toml", FALL)
    out = tmp_path / "out"
    with Client(address, timeout=30, set_as_default=False) as client:
        client.wait_for_workers(2, timeout=60)
        pids = client.run(os.getpid)
        sweep = subprocess.Popen([sys.executable, "-m", "tumble", "sweep", str(scene), "--vary",
                                  "bodies.ball.velocity.0=0:1:8", "--duration", "1.5", "--dt", "1e-04", "--out",
                                  str(out), "--scheduler", address, "-q"],
                                 stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env())
        deadline = time.monotonic() + 120
        while True:
            busy = [w for w, keys in client.processing().items() if any("tumble-variant" in str(k) for k in keys)]
            if busy and list((out / "variants").glob("*.json")):
                break
            assert sweep.poll() is None, f"the sweep ended before a worker could be killed: {sweep.communicate()}"
            assert time.monotonic() < deadline
            time.sleep(0.02)
        os.kill(pids[busy[0]], signal.SIGKILL)
        stdout, stderr = sweep.communicate(timeout=180)
        assert sweep.returncode == 0, stderr
        table = pd.read_parquet(out / "results.parquet")
        assert len(table) == 8 and (table["status"] == "ok").all(), table["error"].tolist()
        assert np.allclose(table["simulated_s"], 1.5, rtol=1e-9)
        client.wait_for_workers(2, timeout=60)
        assert pids[busy[0]] not in client.run(os.getpid).values()


def test_an_unreachable_scheduler_is_one_line_and_status_2_within_10_s(tmp_path, capsys):
    """A port nothing listens on: one line on stderr naming the address, status 2, in under 10 s, and no
    output folder made."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    scene = write(tmp_path / "fall.toml", FALL)
    started = time.monotonic()
    run = tumble("sweep", str(scene), "--vary", "bodies.ball.mass=1,2", "--duration", "0.1", "--dt", "0.01",
                 "--out", str(tmp_path / "out"), "--scheduler", f"tcp://127.0.0.1:{port}")
    assert time.monotonic() - started < 10.0
    assert run.returncode == 2
    lines = run.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"tumble sweep: error: scheduler 'tcp://127.0.0.1:{port}' could "
                                                   f"not be reached"), run.stderr
    assert not (tmp_path / "out").exists()
    # Dask's own setting names the scheduler as well (DASK_SCHEDULER_ADDRESS is its config scheduler-address)
    import dask

    from tumble.user.cli import main

    with dask.config.set({"scheduler-address": f"tcp://127.0.0.1:{port}"}):
        status = main(["sweep", str(scene), "--vary", "bodies.ball.mass=1,2", "--duration", "0.1", "--dt", "0.01",
                       "--out", str(tmp_path / "out")])
    assert status == 2 and f"scheduler 'tcp://127.0.0.1:{port}' could not be reached" in capsys.readouterr().err
