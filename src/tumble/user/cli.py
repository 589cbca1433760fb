"""The ``tumble`` command line (also ``python -m tumble``): ``demo``, ``run``, ``view``, ``validate``, ``bench``,
and ``sweep`` and ``fit`` (``tumble.sweep.commands``; they need the ``sweep`` extra).

A user error (a bad argument, a malformed scene file, a file that cannot be read or written, values out of
range) prints one line on stderr and exits with status 2, without a traceback; output paths are checked
before anything is simulated. ``run`` exits with status 2 and one line, keeping the frames recorded so far
in its ``.npz``, when a step fails and is undone (``NonFiniteStep``, the event method's budget) or when the
recorded run is meaningless (a body faster than light, an energy beyond float64: ``runs.out_of_range``), and
writes no summary then. Ctrl-C stops cleanly with status 130 and SIGTERM with status 143; ``run`` keeps
the trajectory recorded so far in both cases. Anything else (a bug) prints one line and exits with status 1;
``TUMBLE_TRACEBACK=1`` shows its traceback instead. Warnings are printed one line each.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import signal
import sys
import threading
import time
import warnings
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

COMPILE_NOTE = ("the first run compiles the contact kernels in parallel processes, about a minute on 2 cores, "
                "longer when busy (`tumble compile` does it ahead); later runs load them from Numba's cache in "
                "about a second")


EXIT_USER_ERROR = 2
"""Exit status of a user error (one line on stderr)."""
EXIT_INTERNAL_ERROR = 1
"""Exit status of an unexpected error, a bug (one line on stderr; ``TUMBLE_TRACEBACK=1`` shows the traceback)."""
EXIT_INTERRUPTED = 130
"""Exit status after Ctrl-C (SIGINT): 128 + 2, as a shell reports it."""
EXIT_TERMINATED = 143
"""Exit status after SIGTERM: 128 + 15, as a shell reports it."""

_USER_ERRORS = (ValueError, TypeError, OSError, ArithmeticError)
"""What a bad argument, file or value raises (overflow from extreme values included)."""


class _Terminated(KeyboardInterrupt):
    """SIGTERM, raised where the program is, so that a run stops and saves as on Ctrl-C."""


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


def _output_folder(option: str, text: str | os.PathLike) -> Path:
    """The folder given to ``option`` (the command line's ``-o/--out``, or ``out=`` of ``tumble.sweep.run`` and
    ``fit``), after checking that it is a path of one or of one that can be made, writable; nothing is created."""
    if not isinstance(text, (str, os.PathLike)):
        raise TypeError(f"{option} must be a folder path, got {text!r}")
    text = os.fspath(text)
    if not text:
        raise ValueError(f"{option} must name a folder, got an empty path ''")
    path = Path(text)
    if path.exists() and not path.is_dir():
        raise ValueError(f"{option} {text!r} is a file, not a folder")
    _check_makeable(option, text, path)
    return path


def _output_file(option: str, text: str) -> Path:
    """The file given to ``option``, after checking that it is not a folder and that its folder exists or can
    be made, writable; nothing is created."""
    if not text:
        raise ValueError(f"{option} must name a file, got an empty path ''")
    path = Path(text)
    if path.is_dir():
        raise ValueError(f"{option} {text!r} is a folder; give a file name, e.g. {str(path / 'replay.html')!r}")
    _check_makeable(option, text, path.parent)
    return path


def _check_makeable(option: str, text: str, folder: Path) -> None:
    existing = folder
    while not existing.exists():
        existing = existing.parent
    if not existing.is_dir():
        raise ValueError(f"{option} {text!r} cannot be written: {str(existing)!r} is a file, not a folder")
    if not os.access(existing, os.W_OK | os.X_OK):
        raise ValueError(f"{option} {text!r} cannot be written: the folder {str(existing)!r} is not writable")


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

    _output_folder("-o/--out", args.out)
    _steps(args.duration, args.dt)
    bodies = LATTICE[0] * LATTICE[1] * LATTICE[2]
    print(f"tumble demo: {bodies} boxes, balls, capsules, cylinders and rocks poured into a pen, "
          f"{args.duration:g} s at dt = {args.dt:g} s ({COMPILE_NOTE})", flush=True)
    s = run_demo(args.out, duration=args.duration, dt=args.dt, progress=not args.quiet)
    print(f"  kernel compile/load {s['compile_s']:.1f} s; {s['inside_pen']} of {s['bodies']} bodies inside the pen, "
          f"{s['sleeping_end']} asleep at the end")
    _print_summary(s, s["files"])
    print(f"  open {Path(args.out) / 'replay.html'} in a browser to watch it")
    return 0


def _steps(duration: float, dt: float) -> int:
    """Whole steps of ``dt`` in ``duration`` (at least one, at most MAX_STEPS)."""
    from .scene import MAX_STEPS

    if duration / dt > MAX_STEPS:
        raise ValueError(f"--duration {duration:g} s is {duration / dt:.3g} steps of --dt {dt:g} s; at most "
                         f"{MAX_STEPS:.3g} steps")
    steps = int(round(duration / dt))
    if steps < 1:
        raise ValueError(f"--duration must be at least one step of dt={dt:g} s, got {duration:g} s")
    return steps


def _cmd_run(args: argparse.Namespace) -> int:
    from .runs import out_of_range, run_summary, write_run
    from .scene import load_scene
    from .trajectory import SimulationInterrupted, check_recording

    out = _output_folder("-o/--out", args.out)
    overrides = {key: value for key, value in (("method", args.method), ("solver", args.solver))
                 if value is not None}
    world = load_scene(args.scene, **overrides)
    defaults = world.run_defaults
    dt = args.dt if args.dt is not None else defaults.get("dt", 1.0 / 240.0)
    duration = args.duration if args.duration is not None else defaults.get("duration", 1.0)
    steps = _steps(duration, dt)
    per_60th = 1.0 / (60.0 * dt)
    record_every = args.record_every if args.record_every is not None else defaults.get(
        "record_every", max(1, int(round(per_60th))) if per_60th < steps else steps)
    try:
        check_recording(steps, record_every, world.body_count)
    except ValueError as exc:
        raise ValueError(f"{args.scene}: {exc} (--record-every, --duration, or the scene's [run] table)") from None
    stem = Path(args.scene).stem
    npz = out / f"{stem}.npz"
    print(f"tumble run: {args.scene}: {world.body_count} bodies, {steps * dt:g} s at dt = {dt:g} s, "
          f"recording every {record_every} steps into {npz}", flush=True)
    out.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    try:
        traj = world.simulate(steps * dt, dt, record_every=record_every, progress=not args.quiet,
                              record_contacts=args.contacts, checkpoint=npz)
    except SimulationInterrupted as stop:
        part = stop.trajectory
        how, status = (("terminated (SIGTERM)", EXIT_TERMINATED) if isinstance(stop.interrupt, _Terminated)
                       else ("interrupted", EXIT_INTERRUPTED))
        print(f"tumble run: {how} at t = {part.times[-1]:g} s; kept {len(part)} frames in {stop.path}",
              file=sys.stderr)
        return status
    except Exception as error:   # a step that was undone: NonFiniteStep, EventBudgetExceeded
        part = getattr(error, "trajectory", None)
        if part is None:
            raise
        frames = f"{len(part)} frame" + "s" * (len(part) != 1)
        print(f"tumble run: error: {_one_line(error)}; kept {frames} (t = {part.times[0]:g} to {part.times[-1]:g} s) "
              f"in {error.path}", file=sys.stderr)   # type: ignore[attr-defined]
        return EXIT_USER_ERROR
    problem = out_of_range(traj)
    if problem is not None:
        print(f"tumble run: error: {args.scene}: {problem}; no summary written, the trajectory is in {npz}",
              file=sys.stderr)
        return EXIT_USER_ERROR
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

    if not args.trajectory:
        raise ValueError("the trajectory must name a file, got an empty path ''")
    if args.out is not None:
        out = _output_file("-o/--out", args.out)
    else:
        out = _output_file("the replay", str(Path(args.trajectory).with_suffix(".html")))
    traj = Trajectory.load(args.trajectory)
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

    from ..sweep.commands import add_commands

    add_commands(sub)

    bench = sub.add_parser("bench", help="run the BENCH.md scenes side by side with PyBullet and MuJoCo "
                                         "(from the repository root); arguments go to `python -m bench`",
                           add_help=False)
    bench.add_argument("bench_args", nargs=argparse.REMAINDER)
    bench.set_defaults(func=_cmd_bench)
    return parser


@contextlib.contextmanager
def _sigterm_interrupts() -> Iterator[None]:
    """While inside: SIGTERM raises ``_Terminated`` (a KeyboardInterrupt) in the main thread, so a run saves
    what it recorded as on Ctrl-C; and Ctrl-C (SIGINT) raises KeyboardInterrupt even in a process started with
    SIGINT ignored or blocked (both pass from a parent to the programs it starts: Python then installs no handler
    of its own, and `tumble run` ran on to its end). Elsewhere than the main thread nothing changes (only it may
    set handlers)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def terminate(signum: int, frame: Any) -> None:
        raise _Terminated(f"signal {signum}")

    previous = signal.signal(signal.SIGTERM, terminate)
    previous_int = signal.signal(signal.SIGINT, signal.default_int_handler)
    blocked = signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT}) if hasattr(signal, "pthread_sigmask") \
        else None
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)
        if previous_int is not None:   # (None: a handler not set from Python, which cannot be put back)
            signal.signal(signal.SIGINT, previous_int)
        if blocked is not None and signal.SIGINT in blocked:
            signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})


@contextlib.contextmanager
def _one_line_warnings(command: str) -> Iterator[None]:
    """While inside: each warning is printed as one line, ``tumble COMMAND: warning: ...``."""
    def show(message: Any, category: Any, filename: str, lineno: int, file: Any = None, line: Any = None) -> None:
        print(f"tumble {command}: warning: {' '.join(str(message).split())}", file=sys.stderr)

    with warnings.catch_warnings():
        warnings.showwarning = show
        yield


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``tumble`` command; returns the exit status: 0, ``EXIT_USER_ERROR`` (2),
    ``EXIT_INTERNAL_ERROR`` (1), ``EXIT_INTERRUPTED`` (130) or ``EXIT_TERMINATED`` (143); ``validate`` returns
    1 when a check fails. Every error is one line on stderr."""
    try:
        args = build_parser().parse_args(argv)
    except SystemExit as stop:   # --help (0) or a bad argument (EXIT_USER_ERROR, its line already printed)
        return stop.code if isinstance(stop.code, int) else EXIT_USER_ERROR
    with _one_line_warnings(args.command), _sigterm_interrupts():
        try:
            return args.func(args)
        except KeyboardInterrupt as stop:
            if isinstance(stop, _Terminated) or isinstance(getattr(stop, "interrupt", None), _Terminated):
                print(f"tumble {args.command}: terminated (SIGTERM)", file=sys.stderr)
                return EXIT_TERMINATED
            print(f"tumble {args.command}: interrupted", file=sys.stderr)
            return EXIT_INTERRUPTED
        except _USER_ERRORS as exc:
            print(f"tumble {args.command}: error: {_one_line(exc)}", file=sys.stderr)
            return EXIT_USER_ERROR
        except Exception as exc:
            if getattr(exc, "user_error", False):   # a refusal that says what to do (the event method's budget)
                print(f"tumble {args.command}: error: {_one_line(exc)}", file=sys.stderr)
                return EXIT_USER_ERROR
            if os.environ.get("TUMBLE_TRACEBACK") == "1":
                raise
            print(f"tumble {args.command}: internal error: {type(exc).__name__}: {_one_line(exc)} (a bug: please "
                  f"report it; TUMBLE_TRACEBACK=1 shows the traceback)", file=sys.stderr)
            return EXIT_INTERNAL_ERROR


def _one_line(exc: BaseException) -> str:
    return " ".join(str(exc).split()) or type(exc).__name__


if __name__ == "__main__":
    sys.exit(main())
