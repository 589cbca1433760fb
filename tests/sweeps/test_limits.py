"""Issue 53 (items 7-9 and the repeated --fit key): sizes refused up front with a stated limit, a scheduler that
never answers or answers with junk bounded by --connect-timeout, a folder of another sweep not replaced, a
measured file's content never echoed, atomic writes synced before their rename."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import threading
import time
import tracemalloc

import pytest

from tumble.sweep import load_measured, run_sweep
from tumble.sweep import measured as measured_module
from tumble.user.cli import main

from .scenes import BALL, FALL, RADIUS, env, tumble, write


def _sweep(tmp_path, capsys, *args):
    scene = write(tmp_path / "ball.toml", BALL.format(radius=RADIUS))
    status = main(["sweep", str(scene), "--out", str(tmp_path / "o"), *args])
    return status, capsys.readouterr().err


@pytest.mark.parametrize("args, message", [
    (["--vary", "ground.friction=0:1:1000000000", "--duration", "0.5", "--dt", "0.01"],
     "range '0:1:1000000000': count 1,000,000,000 is more than the 100,000 variants a sweep may have (MAX_VARIANTS)"),
    (["--vary", "ground.friction=0:1:1000", "--vary", "bodies.ball.mass=1:2:1000", "--vary",
      "bodies.ball.restitution=0:1:1000", "--duration", "0.5", "--dt", "0.01"],
     "a grid of 1,000 x 1,000 x 1,000 is 1,000,000,000 variants; at most 100,000 (MAX_VARIANTS)"),
    (["--vary", "ground.friction=0.1,0.2", "--duration", "1e300", "--dt", "0.01"],
     "duration=1e+300 is 1e+302 steps of dt=0.01; at most 9.01e+15 steps (MAX_STEPS)"),
    (["--vary", "ground.friction=0.1,0.2", "--duration", "1e12", "--dt", "0.01"],
     "duration: each variant's recording 50,000,000,000,001 frames (100,000,000,000,000 steps, "
     "record_every=2) of 2 bodies"),
])
def test_sizes_are_refused_before_anything_runs(tmp_path, capsys, args, message):
    """Before: a MemoryError inside (a 1e9-value range, a 1000³ grid), or every variant failing and status 0
    (a duration of 1e300 s). Now one line naming the limit, status 2, nothing written."""
    started = time.monotonic()
    status, err = _sweep(tmp_path, capsys, *args)
    assert status == 2 and err.count("\n") == 1 and message in err, err
    assert time.monotonic() - started < 10.0
    assert not (tmp_path / "o").exists()


def _csv(path, rows):
    path.write_text("time,body,x,y,z\n" + "".join(f"{t!r},ball,0,0,{1.1 - t:.6f}\n" for t in rows))
    return path


def test_fit_sizes_are_refused_before_anything_runs(tmp_path, capsys, monkeypatch):
    scene = write(tmp_path / "ball.toml", BALL.format(radius=RADIUS))
    short = _csv(tmp_path / "m.csv", [0.0, 0.1])

    def fit(*args):
        status = main(["fit", str(scene), *args, "-o", str(tmp_path / "o")])
        err = capsys.readouterr().err
        assert status == 2 and err.count("\n") == 1, err
        assert not (tmp_path / "o").exists()
        return err

    err = fit(str(short), "--fit", "ground.friction=0:1", "--fit", "bodies.ball.restitution=0:1", "--dt", "0.01",
              "--coarse", "100000")
    assert "the coarse grid (100000 values per key, 2 free keys) is 10,000,000,000 variants; at most 100,000" in err
    # two rows 1e5 s apart: 1e7 steps per evaluation
    err = fit(str(_csv(tmp_path / "long.csv", [0.0, 1e5])), "--fit", "ground.friction=0:1", "--dt", "0.01")
    assert "long.csv spans 100000 s, 1e+07 steps of dt=0.01 per evaluation; at most 1,000,000 " \
           "(MAX_EVALUATION_STEPS)" in err
    # the same key twice: before, the last silently won
    err = fit(str(short), "--fit", "ground.friction=0:1", "--fit", "ground.friction=0.2:0.3", "--dt", "0.01")
    assert "--fit ground.friction: the key is given twice" in err
    # rows counted before any is parsed
    monkeypatch.setattr(measured_module, "MAX_MEASURED_ROWS", 10)
    many = _csv(tmp_path / "many.csv", [0.01 * i for i in range(11)])
    with pytest.raises(ValueError, match=r"many\.csv' has 11 rows; at most 10 \(MAX_MEASURED_ROWS\)"):
        load_measured(many)
    assert "many.csv' has 11 rows; at most 10 (MAX_MEASURED_ROWS)" in fit(str(many), "--fit", "ground.friction=0:1",
                                                                          "--dt", "0.01")
    assert len(load_measured(_csv(tmp_path / "ten.csv", [0.01 * i for i in range(10)])).tracks["ball"].times) == 10


def test_a_measured_csv_is_parsed_into_arrays_not_held_as_text(tmp_path):
    """100,000 rows (4.4 MB): read as lists of strings they took ~60 MB at the peak (a 180 MiB file took 5.4 GB);
    parsed row by row into one array, a few MB."""
    path = _csv(tmp_path / "big.csv", [1e-3 * i for i in range(100_000)])
    tracemalloc.start()
    try:
        track = load_measured(path).tracks["ball"]
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert track.positions.shape == (100_000, 3) and track.times[-1] == pytest.approx(99.999)
    assert peak < 20e6, peak


def test_a_measured_file_is_never_echoed(tmp_path, capsys):
    """A file given as measured data by mistake (here, a password file's first line): the error names the file
    and the missing columns, never its content."""
    secret = tmp_path / "passwd"
    secret.write_text("s3cret:x:0:0:s3cret:/s3cret:/bin/bash\nhunter2,zz\n")
    with pytest.raises(ValueError) as caught:
        load_measured(secret)
    text = str(caught.value)
    assert "passwd" in text and "missing column(s) time, body, x, y, z" in text and "s3cret" not in text
    bad = tmp_path / "bad.csv"
    bad.write_text("time,body,x,y,z\n0.0,ball,0,0,hunter2\n")
    with pytest.raises(ValueError, match=r"bad\.csv:2: column z: not a number$"):
        load_measured(bad)
    scene = write(tmp_path / "ball.toml", BALL.format(radius=RADIUS))
    status = main(["fit", str(scene), str(secret), "--fit", "ground.friction=0:1", "--dt", "0.01", "-o",
                   str(tmp_path / "o")])
    err = capsys.readouterr().err
    assert status == 2 and err.count("\n") == 1 and "missing column(s)" in err and "s3cret" not in err, err


def test_a_folder_of_another_sweep_is_refused_and_the_same_sweep_resumes(tmp_path):
    """A second, different sweep into the same folder would have replaced the first one's results.parquet: it
    is refused, naming the sweep the folder holds; the same sweep again reuses every variant."""
    scene = write(tmp_path / "fall.toml", FALL)
    out = tmp_path / "o"
    first = run_sweep(scene, [{"bodies.ball.mass": 1.0}], duration=0.02, dt=0.01, out=out, workers=1,
                      precompile=False)
    assert first.computed == 1 and json.loads((out / "sweep.json").read_text())["keys"] == ["bodies.ball.mass"]
    table = (out / "results.parquet").read_bytes()
    with pytest.raises(ValueError, match=r"holds another sweep's results \(1 variants of fall\.toml over "
                                         r"bodies\.ball\.mass\); a different sweep would replace its results\.parquet"):
        run_sweep(scene, [{"bodies.ball.mass": 2.0}], duration=0.02, dt=0.01, out=out, workers=1)
    assert (out / "results.parquet").read_bytes() == table
    again = run_sweep(scene, [{"bodies.ball.mass": 1.0}], duration=0.02, dt=0.01, out=out, workers=1)
    assert (again.computed, again.reused) == (0, 1)
    # a folder written before sweep.json: taken as this sweep's only when all its rows are this sweep's
    (out / "sweep.json").unlink()
    (out / "variants" / "0123456789abcdef0123.json").write_text("{}")
    with pytest.raises(ValueError, match=r"holds another sweep's results"):
        run_sweep(scene, [{"bodies.ball.mass": 1.0}], duration=0.02, dt=0.01, out=out, workers=1)


def test_atomic_writes_sync_the_file_before_the_rename(tmp_path, monkeypatch):
    import os

    from tumble.user.trajectory import _atomic_write

    calls = []
    real_fsync, real_replace = os.fsync, os.replace
    monkeypatch.setattr(os, "fsync", lambda fd: (calls.append("fsync"), real_fsync(fd))[1])
    monkeypatch.setattr(os, "replace", lambda a, b: (calls.append("replace"), real_replace(a, b))[1])
    _atomic_write(tmp_path / "f.bin", lambda fh: fh.write(b"data"))
    assert calls[:2] == ["fsync", "replace"] and (tmp_path / "f.bin").read_bytes() == b"data"


# ====================================================================== schedulers that are not Dask's
@pytest.fixture
def listener():
    """A TCP socket on 127.0.0.1 that accepts connections (the kernel completes them) and never answers."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen(8)
        yield sock


def test_a_listener_that_never_answers_is_one_line_within_the_connect_timeout(tmp_path, listener):
    """Before: the sweep waited 400 s with --connect-timeout 3 (Dask's Client does not bound its handshake). In a
    subprocess with a wall limit; the command's own time is measured there, after the imports."""
    address = f"tcp://127.0.0.1:{listener.getsockname()[1]}"
    scene = write(tmp_path / "fall.toml", FALL)
    timed = ("import sys, time; import distributed, tumble.sweep.run; from tumble.user.cli import main; "
             "t = time.monotonic(); status = main(sys.argv[1:]); print(f'{time.monotonic() - t:.2f}'); "
             "sys.exit(status)")
    run = subprocess.run([sys.executable, "-c", timed, "sweep", str(scene), "--vary", "bodies.ball.mass=1",
                          "--duration", "0.1", "--dt", "0.01", "--out", str(tmp_path / "o"), "--scheduler", address,
                          "--connect-timeout", "2"], capture_output=True, text=True, timeout=120, env=env())
    assert run.returncode == 2 and run.stderr.count("\n") == 1, run.stderr
    assert f"scheduler '{address}' could not be reached within 2 s: no answer from a Dask scheduler" in run.stderr
    assert float(run.stdout.split()[-1]) < 5.0
    assert not (tmp_path / "o").exists()


def test_a_peer_that_sends_junk_is_one_line_and_no_traceback(tmp_path, listener):
    held = []

    def serve():   # every connection (the reachability probe's first) gets the same junk, and is held open
        while True:
            try:
                conn, _ = listener.accept()
                conn.sendall(b"HTTP/1.1 200 OK\r\n\r\n" + b"\x00\xff" * 64)
            except OSError:
                return
            held.append(conn)

    threading.Thread(target=serve, daemon=True).start()
    address = f"tcp://127.0.0.1:{listener.getsockname()[1]}"
    scene = write(tmp_path / "fall.toml", FALL)
    run = tumble("sweep", str(scene), "--vary", "bodies.ball.mass=1", "--duration", "0.1", "--dt", "0.01", "--out",
                 str(tmp_path / "o"), "--scheduler", address, "--connect-timeout", "2", timeout=120)
    assert run.returncode == 2 and run.stderr.count("\n") == 1, run.stderr
    assert f"scheduler '{address}' could not be reached within 2 s: it does not answer as a Dask scheduler" \
        in run.stderr
    assert "Traceback" not in run.stderr and "__del__" not in run.stderr


def test_an_inproc_address_is_refused_in_one_line(tmp_path, capsys):
    status, err = _sweep(tmp_path, capsys, "--vary", "ground.friction=0.1", "--duration", "0.1", "--dt", "0.01",
                         "--scheduler", "inproc://x")
    assert status == 2 and err.count("\n") == 1, err
    assert "scheduler 'inproc://x': an inproc:// address names a scheduler inside another process's memory" in err
