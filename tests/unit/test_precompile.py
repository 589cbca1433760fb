"""tumble.precompile: the kernels of a world's steps compiled in forked processes before its first step."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from types import SimpleNamespace

import pytest

from tumble import precompile as pc

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="precompiling in parallel needs os.fork (Linux)")


@pytest.fixture
def forking(monkeypatch):
    """Fork even if this test process has started Numba's thread pool: the fake shares run no parallel kernel."""
    monkeypatch.setattr(pc, "can_fork", lambda: True)


def test_shares_go_longest_first_to_the_least_loaded_process():
    """LPT: the demo's measured share costs on two processes load them 23.3 and 22.8 s, not 26 and 20."""
    costs = [2.5, 4.4, 4.7, 8.3, 13.7, 12.5]
    bins = pc._assign(costs, 2)
    loads = sorted(sum(costs[i] for i in b) for b in bins)
    assert loads == pytest.approx([22.8, 23.3])
    assert sorted(i for b in bins for i in b) == list(range(6))
    assert pc._assign(costs, 10) == [[4], [5], [3], [2], [1], [0]]   # never an empty process


def _fake_share(name: str, cost: float, tmp_path: Path, fail: bool = False) -> pc.Share:
    """A share whose 'kernel' is cold until its run writes the cache index file, which the run also marks."""
    index = tmp_path / f"{name}.nbi"
    kernel = SimpleNamespace(overloads={}, _cache=SimpleNamespace(_cache_file=SimpleNamespace(_index_path=str(index))))

    def run() -> None:
        if fail:
            raise RuntimeError("compile failed")
        (tmp_path / f"{name}.pid").write_text(str(os.getpid()))
        index.write_text("compiled")

    return pc.Share(name, cost, run, (kernel,))


def test_cold_shares_run_in_children_and_warm_ones_are_skipped(tmp_path, forking):
    shares = [_fake_share(name, cost, tmp_path) for name, cost in (("a", 3.0), ("b", 2.0), ("c", 1.0))]
    (tmp_path / "c.nbi").write_text("already in the cache")
    result = pc.precompile(shares, processes=2)
    assert result["shares"] == ["a", "b"] and result["left"] == [] and result["processes"] == 2
    pids = {(tmp_path / f"{name}.pid").read_text() for name in ("a", "b")}
    assert len(pids) == 2 and str(os.getpid()) not in pids    # each in a child of its own, none here
    assert not (tmp_path / "c.pid").exists()
    assert pc.precompile(shares)["shares"] == []              # now every share is in the cache


def test_a_failing_share_is_left_for_the_first_step(tmp_path, forking):
    """A child that fails reports the shares it did not finish; the parent goes on (they compile when used)."""
    shares = [_fake_share("big", 5.0, tmp_path), _fake_share("bad", 4.0, tmp_path, fail=True),
              _fake_share("after", 1.0, tmp_path)]
    result = pc.precompile(shares, processes=1)              # one child: big, bad, then after (never reached)
    assert result["left"] == ["bad", "after"]
    assert (tmp_path / "big.pid").exists() and not (tmp_path / "after.pid").exists()


def test_a_hanging_share_is_stopped_and_left(tmp_path, forking, monkeypatch):
    """A child that hangs is killed at TIMEOUT_S; the shares it had not finished are left, the others kept."""
    import time

    monkeypatch.setattr(pc, "TIMEOUT_S", 2.0)
    quick, hang = _fake_share("quick", 1.0, tmp_path), _fake_share("hang", 5.0, tmp_path)
    hanging = pc.Share("hang", 5.0, lambda: time.sleep(60), hang.kernels)
    started = time.perf_counter()
    result = pc.precompile([quick, hanging], processes=2)
    assert time.perf_counter() - started < 10.0
    assert result["left"] == ["hang"] and (tmp_path / "quick.pid").exists()


def test_no_fork_while_another_thread_runs():
    """A child forked while another thread holds a lock could wait for it forever: no fork then."""
    import threading

    if threading.active_count() > 1:
        assert not pc.can_fork()
        return
    release = threading.Event()
    other = threading.Thread(target=release.wait)
    other.start()
    try:
        assert not pc.can_fork()
    finally:
        release.set()
        other.join()


_CHILD = textwrap.dedent("""
    import json, sys
    import numba
    import tumble as tb

    def balls():
        world = tb.World()
        world.add_ground()
        for k in range(3):
            world.add_body(tb.Sphere(0.1), position=(0.3 * k, 0.0, 0.099))
        return world

    def sliding_box():   # the event method: a box sliding on the ground (resting contacts, friction, impacts)
        world = tb.World(method="event", event_impacts="sequential")
        world.add_ground(friction=0.3)
        world.add_body(tb.Box(0.2, 0.2, 0.2), position=(0.0, 0.0, 0.1), velocity=(1.0, 0.2, 0.0), friction=0.3)
        return world

    def ball_robot(free_ball):   # a floating one-link robot, a sphere, on the ground (and a free ball beside it)
        from tumble.robots import GeomSpec, LinkSpec, RobotDescription
        world = tb.World()
        world.add_ground()
        link = LinkSpec("ball", 1.0, [0.0, 0.0, 0.0], [[0.004, 0, 0], [0, 0.004, 0], [0, 0, 0.004]],
                        [GeomSpec(tb.Sphere(0.1))])
        world.add_robot(RobotDescription("bot", [link], []), position=(0.0, 0.0, 0.099), fixed_base=False)
        if free_ball:
            world.add_body(tb.Sphere(0.1), position=(0.5, 0.0, 0.099))
        return world

    build = {"balls": balls, "sliding": sliding_box, "robot": lambda: ball_robot(False),
             "mixed": lambda: ball_robot(True)}[sys.argv[1]]

    def compiled():
        return {f"{name}.{attr}": set(value.overloads)
                for name, module in list(sys.modules.items()) if name.startswith("tumble")
                for attr, value in vars(module).items() if isinstance(value, numba.core.dispatcher.Dispatcher)}

    planned, stepped = build(), build()
    shares = planned._compile_shares()
    for share in shares:        # here, not in children: what matters is which kernels the shares reach
        share.run()
    before = compiled()
    for _ in range(3):
        stepped.step(1 / 240)
    missed = sorted(name for name, sigs in compiled().items() if sigs - before.get(name, set()))
    print(json.dumps({"shares": [s.name for s in shares], "contacts": len(stepped.contacts()), "missed": missed}))
""")


@pytest.mark.parametrize("scene, shares, contacts", [
    ("balls", ["detection", "narrowphase: closed forms", "contact step", "free step"], 3),
    ("sliding box", ["detection", "narrowphase: boxes", "event method: forces", "event method: LCP",
                     "event method: state"], 4),
    ("robot on the ground", ["detection", "narrowphase: closed forms", "robot stages"], 1),
    ("mixed robot and ball", ["detection", "narrowphase: closed forms", "robot stages", "contact step: robots",
                              "contact step", "free step"], 2)])
def test_the_shares_reach_every_kernel_of_the_first_steps(tmp_path, scene, shares, contacts):
    """The share plan covers the steps: after a world (balls on the ground; a box sliding on the ground with
    the event method; a robot on the ground, alone (its stages only: no World contact or free step) or beside a
    free ball) ran its shares, the first three steps of a world like it need no kernel, or argument
    types of a kernel, that the shares did not reach (in a fresh interpreter, whose kernels come from the
    suite's cache or compile). A stage that no share reaches would compile alone, on one core, during the
    first step (this test found the broadphase's update, which only the second detection calls)."""
    script = tmp_path / "child.py"
    script.write_text(_CHILD)
    env = dict(os.environ, TUMBLE_PRECOMPILE="0")
    out = subprocess.run([sys.executable, str(script), scene.split()[0]], env=env, capture_output=True, text=True,
                         timeout=600, check=True)
    result = json.loads(out.stdout.strip().splitlines()[-1])
    assert result["shares"] == shares
    assert result["contacts"] == contacts
    assert result["missed"] == []


def test_bad_process_count_is_refused():
    import tumble as tb

    with pytest.raises(ValueError, match="processes must be >= 1, got 0"):
        tb.World().precompile(processes=0)
    with pytest.raises(TypeError, match="processes must be an integer"):
        tb.World().precompile(processes=1.5)
