"""The ``tumble`` command line (also ``python -m tumble``): ``demo``, ``run``, ``view``, ``validate``, ``bench``.

A user error (a bad argument, a malformed scene file, a file that cannot be read) prints one line on
stderr and exits with status 2, without a traceback. Ctrl-C stops cleanly with status 130; ``run``
keeps the trajectory recorded so far.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

COMPILE_NOTE = ("the first run compiles the contact kernels in parallel processes, about 25 s on 2 idle cores, "
                "longer when busy (`tumble compile` does it ahead); later runs load them from Numba's cache in "
                "about a second")


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # one line, exit 2 (argparse would print the usage first)
        self.exit(2, f"{self.prog}: error: {message}\n")


def _positive_float(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None
    if not (value > 0.0 and value < float("inf")):
        raise argparse.ArgumentTypeError(f"expected a positive finite number, got {text!r}")
    return value


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}")
    return value


def _print_summary(summary: dict[str, Any], files: Sequence[Any]) -> None:
    s = summary
    print(f"  {s['bodies']} moving bodies and {s['fixed_bodies']} fixed; {s['simulated_s']:g} s simulated in "
          f"{s['steps']} steps of {s['dt']:g} s: {s['wall_s']:.2f} s wall, {s['steps_per_s']} steps/s")
    print(f"  energy {s['energy_start_J']:.6g} J -> {s['energy_end_J']:.6g} J; kinetic energy at the end "
          f"{s['kinetic_energy_end_J']:.3g} J")
    print(f"  contacts at the end {s['contacts_end']} (at most {s['max_contacts']}); "
          f"deepest penetration {1e3 * s['max_penetration_m']:.3g} mm")
    for path in files:
        print(f"  wrote {path}")


def _cmd_demo(args: argparse.Namespace) -> int:
    from .demo import LATTICE, run_demo

    bodies = LATTICE[0] * LATTICE[1] * LATTICE[2]
    print(f"tumble demo: {bodies} boxes, balls, capsules, cylinders and rocks poured into a pen, "
          f"{args.duration:g} s at dt = {args.dt:g} s ({COMPILE_NOTE})", flush=True)
    s = run_demo(args.out, duration=args.duration, dt=args.dt, progress=not args.quiet)
    print(f"  kernel compile/load {s['compile_s']:.1f} s; {s['inside_pen']} of {s['bodies']} bodies inside the pen, "
          f"{s['sleeping_end']} asleep at the end")
    _print_summary(s, s["files"])
    print(f"  open {Path(args.out) / 'replay.html'} in a browser to watch it")
    return 0


def _cmd_run(args: argparse.Namespace) -> int:
    from .runs import run_summary, write_run
    from .scene import load_scene
    from .trajectory import SimulationInterrupted

    overrides = {key: value for key, value in (("method", args.method), ("solver", args.solver))
                 if value is not None}
    world = load_scene(args.scene, **overrides)
    defaults = world.run_defaults
    dt = args.dt if args.dt is not None else defaults.get("dt", 1.0 / 240.0)
    duration = args.duration if args.duration is not None else defaults.get("duration", 1.0)
    record_every = args.record_every if args.record_every is not None else defaults.get(
        "record_every", max(1, int(round(1.0 / (60.0 * dt)))))
    steps = int(round(duration / dt))
    if steps < 1:
        raise ValueError(f"--duration must be at least one step of dt={dt:g} s, got {duration:g} s")
    out = Path(args.out)
    stem = Path(args.scene).stem
    npz = out / f"{stem}.npz"
    print(f"tumble run: {args.scene}: {world.body_count} bodies, {steps * dt:g} s at dt = {dt:g} s, "
          f"recording every {record_every} steps into {npz}", flush=True)
    started = time.perf_counter()
    try:
        traj = world.simulate(steps * dt, dt, record_every=record_every, progress=not args.quiet,
                              record_contacts=args.contacts, checkpoint=npz)
    except SimulationInterrupted as stop:
        part = stop.trajectory
        print(f"tumble run: interrupted at t = {part.times[-1]:g} s; kept {len(part)} frames in {stop.path}",
              file=sys.stderr)
        return 130
    summary = run_summary(traj, steps=steps, dt=dt, wall_s=time.perf_counter() - started)
    summary["scene"] = str(args.scene)
    files = [npz] + write_run(traj, out, summary, title=f"tumble run: {stem}", stem=stem, npz=False, csv=args.csv,
                              html=not args.no_html, plots=not args.no_plots)
    _print_summary(summary, files)
    return 0


def _cmd_compile(args: argparse.Namespace) -> int:
    from .scene import load_scene

    if args.scene is None:
        from .demo import build_demo_world

        world, what = build_demo_world(), "the demo"
    else:
        world, what = load_scene(args.scene), args.scene
    print(f"tumble compile: {what}: compiling the kernels its steps need, in parallel processes", flush=True)
    report = world.precompile(processes=args.processes, progress=not args.quiet)
    if not report["shares"]:
        print("  everything was already compiled (in Numba's cache)")
    else:
        print(f"  {len(report['shares'])} groups of kernels in {report['processes']} processes, "
              f"{report['seconds']:.1f} s: {', '.join(report['shares'])}")
    if report["left"]:
        print(f"  left to compile at their first use (no os.fork here, or a process failed): "
              f"{', '.join(report['left'])}")
    return 0


def _cmd_view(args: argparse.Namespace) -> int:
    from .trajectory import Trajectory

    traj = Trajectory.load(args.trajectory)
    out = Path(args.out) if args.out else Path(args.trajectory).with_suffix(".html")
    path = traj.to_html(out, title=args.title or f"tumble replay: {Path(args.trajectory).stem}",
                        contacts=not args.no_contacts)
    print(f"tumble view: {len(traj)} frames of {traj.positions.shape[1]} bodies; wrote {path}")
    return 0


def _cmd_validate(args: argparse.Namespace) -> int:
    from .validate import format_table, run_checks

    print(f"tumble validate: simulated scenes against closed forms ({COMPILE_NOTE})", flush=True)
    checks = run_checks(names=args.checks or None, quick=args.quick)
    print(format_table(checks))
    return 0 if all(c.passed for c in checks) else 1


def _cmd_bench(args: argparse.Namespace) -> int:
    root = Path.cwd()
    if (root / "bench" / "run.py").is_file() and str(root) not in sys.path:
        sys.path.insert(0, str(root))  # a console script does not see the working directory by itself
    try:
        from bench.run import main as bench_main
    except ImportError:
        print("tumble bench: error: the benchmark harness lives in the source checkout's bench/ folder; "
              "run this from the repository root", file=sys.stderr)
        return 2
    return bench_main(args.bench_args)


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="tumble", description="tumble: 3D rigid-body dynamics. Run `tumble demo` first.")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)

    demo = sub.add_parser("demo", help="pour a pile of mixed shapes into a pen; write a browser replay, "
                                       "plots, the trajectory and a summary")
    demo.add_argument("-o", "--out", default="tumble-demo", help="output folder (default: tumble-demo)")
    demo.add_argument("--duration", type=_positive_float, default=4.0, help="simulated seconds (default 4)")
    demo.add_argument("--dt", type=_positive_float, default=1.0 / 240.0, help="time step in seconds (default 1/240)")
    demo.add_argument("-q", "--quiet", action="store_true", help="no progress bar")
    demo.set_defaults(func=_cmd_demo)

    run = sub.add_parser("run", help="simulate a scene file (TOML, docs/scenes.md); write the trajectory, "
                                     "a browser replay, plots and a summary")
    run.add_argument("scene", help="the scene file, e.g. scene.toml")
    run.add_argument("-o", "--out", default="tumble-run", help="output folder (default: tumble-run)")
    run.add_argument("--duration", type=_positive_float, help="simulated seconds (default: the scene's [run] "
                                                               "duration, else 1)")
    run.add_argument("--dt", type=_positive_float, help="time step in seconds (default: the scene's, else 1/240)")
    run.add_argument("--method", help='how time advances: "timestep" (overrides the scene)')
    run.add_argument("--solver", help='the contact solver: "pgs", "apgd", "cg" or "lemke" (overrides the scene)')
    run.add_argument("--record-every", type=_positive_int, help="record every k-th step (default: ~60 frames/s)")
    run.add_argument("--contacts", action="store_true", help="record contact points and normals for the replay")
    run.add_argument("--csv", action="store_true", help="also write the trajectory as CSV")
    run.add_argument("--no-html", action="store_true", help="skip the browser replay")
    run.add_argument("--no-plots", action="store_true", help="skip the plots")
    run.add_argument("-q", "--quiet", action="store_true", help="no progress bar")
    run.set_defaults(func=_cmd_run)

    compile_ = sub.add_parser("compile", help="compile, in parallel processes, the kernels a scene's steps need "
                                              "(the demo's without a scene), so its first run starts at once")
    compile_.add_argument("scene", nargs="?", help="the scene file (default: the demo's world)")
    compile_.add_argument("--processes", type=_positive_int, help="processes (default: the usable cores)")
    compile_.add_argument("-q", "--quiet", action="store_true", help="no progress bar")
    compile_.set_defaults(func=_cmd_compile)

    view = sub.add_parser("view", help="write the browser replay of a saved trajectory (.npz)")
    view.add_argument("trajectory", help="a trajectory file written by `tumble run` or Trajectory.save")
    view.add_argument("-o", "--out", help="the HTML file (default: the trajectory's name with .html)")
    view.add_argument("--title", help="the page title")
    view.add_argument("--no-contacts", action="store_true", help="leave out recorded contacts")
    view.set_defaults(func=_cmd_view)

    validate = sub.add_parser("validate", help="run the analytic checks (free fall, precession, bounce, incline, "
                                               "...) and print a pass/fail table; exit 1 if any fails")
    validate.add_argument("checks", nargs="*", help="run only these checks (default: all)")
    validate.add_argument("--quick", action="store_true", help="shorter scenes")
    validate.set_defaults(func=_cmd_validate)

    bench = sub.add_parser("bench", help="run the BENCH.md scenes side by side with PyBullet and MuJoCo "
                                         "(from the repository root); arguments go to `python -m bench`",
                           add_help=False)
    bench.add_argument("bench_args", nargs=argparse.REMAINDER)
    bench.set_defaults(func=_cmd_bench)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``tumble`` command; returns the exit status."""
    args = build_parser().parse_args(argv)
    try:
        return args.func(args)
    except (ValueError, TypeError, OSError) as exc:
        message = " ".join(str(exc).split())  # one line, whatever the message holds
        print(f"tumble {args.command}: error: {message}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(f"tumble {args.command}: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
