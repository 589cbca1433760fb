"""Issue 53 item 6: the event method bounded per step. Each scene runs in a subprocess with a wall limit (a hang
fails the test instead of stopping the suite); the budgets (tumble.methods.event.MAX_EVENTS_PER_STEP,
MAX_LCP_WORK_PER_STEP) are reduced so that each refusal shows in one small step."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

WALL_S = 240.0
"""The subprocess's wall limit: its event kernels may compile first (~2 min on a loaded 2-core machine)."""


def _run(code: str) -> dict:
    run = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True,
                         timeout=WALL_S)
    assert run.returncode == 0, run.stderr[-3000:]
    return json.loads(run.stdout.strip().splitlines()[-1])


def test_a_step_past_its_event_budget_raises_naming_the_stage_and_is_undone():
    """A ball with e = 0.9 dropped from 1 m in one step of 3 s bounces many times inside the step; with the
    budget set to 5 intervals the step raises, says what to do, and leaves the world as before it."""
    out = _run("""
        import json
        import tumble as tb
        from tumble.methods import event
        event.MAX_EVENTS_PER_STEP = 5
        world = tb.World(method="event")
        world.add_ground(restitution=0.9)
        ball = world.add_body(tb.Sphere(0.1), mass=1.0, restitution=0.9)
        ball.position = (0.0, 0.0, 1.1)
        try:
            world.step(3.0)
            message = None
        except event.EventBudgetExceeded as exc:
            message = str(exc)
        print(json.dumps({"message": message, "time": world.time, "z": float(ball.position[2]),
                          "vz": float(ball.velocity[2])}))
    """)
    assert out["message"] is not None and out["message"].startswith(
        "event method: the step from t = 0 s to 3 s took more than 5 event intervals (MAX_EVENTS_PER_STEP)")
    assert "Use method='timestep' (the default) or a smaller dt" in out["message"]
    assert (out["time"], out["z"], out["vz"]) == (0.0, 1.1, 0.0)


def test_a_step_past_its_lcp_work_budget_raises_naming_the_stage_and_is_undone():
    """Measured (issue 53): a pile of 20 spheres spent 91 % of a step in the dense friction LCP's least-norm polish
    (0.26 s a derivative for 200 unknowns); 100 spheres took 164 s for a step. Here two spheres stacked off
    centre (friction rows: 2 + 16 + 2 unknowns) against a budget of 1000 = 10³."""
    out = _run("""
        import json
        import tumble as tb
        from tumble.methods import event
        event.MAX_LCP_WORK_PER_STEP = 1000.0
        world = tb.World(method="event")
        world.add_ground(friction=0.5)
        low = world.add_body(tb.Sphere(0.05), mass=1.0, friction=0.5)
        low.position = (0.0, 0.0, 0.05)
        high = world.add_body(tb.Sphere(0.05), mass=1.0, friction=0.5)
        high.position = (0.02, 0.0, 0.05 + (0.1**2 - 0.02**2) ** 0.5)
        start = [list(map(float, b.position)) for b in (low, high)]
        try:
            world.step(1 / 60)
            message = None
        except event.EventBudgetExceeded as exc:
            message = str(exc)
        print(json.dumps({"message": message, "time": world.time,
                          "same": start == [list(map(float, b.position)) for b in (low, high)]}))
    """)
    assert out["message"] is not None and out["message"].startswith(
        "event method: the step's resting-contact LCPs (with friction; this one 20 unknowns for 2 resting contacts) "
        "exceeded the step's work budget of 1e+03 (MAX_LCP_WORK_PER_STEP")
    assert "Use method='timestep' (the default) for piles and stacks" in out["message"]
    assert out["time"] == 0.0 and out["same"]


def test_three_boxes_joined_by_ball_joints_rest_on_the_ground_in_bounded_time():
    """The issue's scene: three Box(0.2, 0.1, 0.1) joined end to end by BallJoints, resting on the ground, dt =
    1/60 s (step 56 had not returned after 235 s). Measured here: 80 steps in 0.01-0.06 s each, one event
    interval a step and no collision search; 60 steps must finish within the wall limit and within budget."""
    out = _run("""
        import json, time
        import tumble as tb
        world = tb.World(method="event")
        world.add_ground()
        boxes = []
        for i in range(3):
            box = world.add_body(tb.Box(0.2, 0.1, 0.1), mass=1.0)
            box.position = (0.2 * i, 0.0, 0.05)
            boxes.append(box)
        for i in range(2):
            world.add_joint(tb.BallJoint(boxes[i], boxes[i + 1], (0.2 * i + 0.1, 0.0, 0.05)))
        world.step(1 / 60)      # compiles
        started = time.perf_counter()
        for _ in range(59):
            world.step(1 / 60)
        print(json.dumps({"wall": time.perf_counter() - started, "z": [float(b.position[2]) for b in boxes]}))
    """)
    assert out["wall"] < 60.0
    assert all(abs(z - 0.05) < 1e-3 for z in out["z"])
