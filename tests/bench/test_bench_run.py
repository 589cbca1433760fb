"""The command line end to end on small cases: outputs, missing peers, bad arguments, tumble adapter."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np
import pytest

from bench import run
from bench.adapters import make_adapters
from bench.adapters.mujoco_adapter import MujocoAdapter
from bench.adapters.pybullet_adapter import PyBulletAdapter
from bench.adapters.tumble_adapter import TumbleAdapter
from bench.report import write_atomic
from bench.scenes import make_case
from bench.timing import initial_state_error


def _strict_json(path: Path) -> dict:
    def no_constants(name: str) -> None:
        raise AssertionError(f"non-standard JSON constant {name}")

    return json.loads(path.read_text(), parse_constant=no_constants)


def test_traced_cases_with_peers(tmp_path, capsys):
    pytest.importorskip("pybullet")
    pytest.importorskip("mujoco")
    rc = run.main(["S5", "S6", "--engines", "pybullet,mujoco", "--quick", "--out", str(tmp_path)])
    assert rc == 0
    err = capsys.readouterr().err
    assert sum(line.startswith("[bench] S") for line in err.splitlines()) == 3  # one line per case
    data = _strict_json(tmp_path / "results.json")
    assert {"python", "numpy", "numba", "pybullet", "mujoco"} <= set(data["meta"]["versions"])
    assert data["meta"]["machine"]["cores"] >= 1 and data["meta"]["quick"] is True
    s5 = data["cases"]["S5"]["engines"]
    assert set(s5) == {"pybullet/default", "pybullet/maximal", "mujoco/default", "mujoco/CG"}
    assert all(e["status"] == "ok" and e["figures"]["apex1"] > 0 for e in s5.values())
    stick = data["cases"]["S6-stick"]["engines"]["pybullet/default"]["figures"]
    assert stick["accel_analytic"] == 0.0 and stick["creep"] < 0.01
    md = (tmp_path / "RESULTS.md").read_text()
    assert "## S5" in md and "### S6-slide" in md and "solref" in md and "√μ" in md
    assert not list(tmp_path.glob(".*.tmp"))


def test_missing_peers_say_not_installed_and_tumble_still_runs(tmp_path, monkeypatch):
    if not TumbleAdapter().available()[0]:
        pytest.skip("tumble is not importable")
    monkeypatch.setattr(PyBulletAdapter, "available", lambda self: (False, "not installed"))
    monkeypatch.setattr(MujocoAdapter, "available", lambda self: (False, "not installed"))
    rc = run.main(["S1", "--quick", "--no-compile", "--repeats", "1", "--out", str(tmp_path)])
    assert rc == 0
    data = _strict_json(tmp_path / "results.json")
    engines = data["cases"]["S1"]["engines"]
    assert engines["pybullet/maximal"]["status"] == "unavailable"
    assert engines["mujoco/CG"]["reason"] == "not installed"
    mine = engines["tumble/default"]
    assert mine["status"] == "ok", mine.get("reason")
    assert mine["speed"]["body_steps_per_s"] > 0 and abs(mine["figures"]["ke_drift"]) < 0.01
    assert engines["tumble/1-thread"]["status"] == "ok"
    md = (tmp_path / "RESULTS.md").read_text()
    assert md.count("not installed") >= 4
    assert data["meta"]["versions"]["pybullet"] == "not installed"


def test_bad_arguments_exit_2(capsys):
    assert run.main(["S9", "--quick"]) == 2
    assert run.main(["S5", "--engines", "bullet3"]) == 2
    assert "unknown" in capsys.readouterr().err


def test_output_names_never_overwrite_the_committed_results(tmp_path):
    ns = argparse.Namespace(out=None, quick=True)
    md, js = run._output_paths(ns, all_scenes=True)
    assert (md.name, js.name) == ("RESULTS-quick.md", "results-quick.json")
    md, _ = run._output_paths(argparse.Namespace(out=None, quick=False), all_scenes=False)
    assert md.name == "RESULTS-partial.md"
    md, _ = run._output_paths(argparse.Namespace(out=None, quick=False), all_scenes=True)
    assert md == run.BENCH_DIR / "RESULTS.md"
    md, js = run._output_paths(argparse.Namespace(out=tmp_path, quick=True), all_scenes=True)
    assert md.parent == tmp_path and js.parent == tmp_path


def test_write_atomic_replaces_whole_file(tmp_path):
    target = tmp_path / "sub" / "RESULTS.md"
    write_atomic(target, "old\n")
    write_atomic(target, "new\n")
    assert target.read_text() == "new\n" and [p.name for p in target.parent.iterdir()] == ["RESULTS.md"]


def test_engine_selection():
    assert [a.label for a in make_adapters("pybullet/maximal,tumble/default")] == ["tumble/default",
                                                                                 "pybullet/maximal"]
    assert [a.label for a in make_adapters("tumble")] == ["tumble/default", "tumble/1-thread", "tumble/no-sleep",
                                                          "tumble/with-detection"]
    assert len(make_adapters("tumble,pybullet,mujoco")) == 8


def test_s1_runs_without_collision_as_the_peers_do_and_with_it_beside():
    """S1 has no contacts: the peers run it without collision (PyBullet: no shapes, MuJoCo: contacts
    disabled), so tumble's bodies get collide=False; ``tumble/with-detection`` keeps detection running, and has
    no row on scenes with contacts."""
    scene, stack = make_case("S1", quick=True), make_case("S3", quick=True)
    plain, detecting = TumbleAdapter(), TumbleAdapter(detection=True)
    assert plain.applies(scene) and detecting.applies(scene) and not detecting.applies(stack)
    if not plain.available()[0]:
        pytest.skip("tumble is not importable")
    assert not plain.build(scene).world.model.body.live("collide").any()
    assert detecting.build(scene).world.model.body.live("collide").all()
    assert plain.build(stack).world.model.body.live("collide")[:stack.n_bodies].all()
    with pytest.raises(ValueError):
        make_adapters("mujoco/PGS")


def test_tumble_adapter_reads_back_the_scene_and_reports_contact_support():
    adapter = TumbleAdapter()
    if not adapter.available()[0]:
        pytest.skip("tumble is not importable")
    scene = make_case("S1", quick=True)
    assert adapter.supported(scene) == (True, "")
    sim = adapter.build(scene)
    assert max(initial_state_error(scene, sim.state()).values()) < 1e-12
    sim.step()
    assert max(initial_state_error(scene, sim.state()).values()) > 1e-9  # the step moved it: a reset has work
    assert sim.reset() is True  # tumble has World.snapshot/restore, so the adapter resets in place ...
    assert max(initial_state_error(scene, sim.state()).values()) < 1e-12  # ... to exactly the built state
    ok, reason = adapter.supported(make_case("S3", quick=True))
    assert isinstance(ok, bool) and (ok or reason.startswith("not yet"))
    assert np.isfinite(sim.state().x).all()
    numba = pytest.importorskip("numba")
    before = numba.get_num_threads()
    one = TumbleAdapter(threads=1).build(scene)
    assert numba.get_num_threads() == 1
    one.close()
    assert numba.get_num_threads() == before
