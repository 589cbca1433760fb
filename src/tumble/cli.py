"""The ``tumble`` command line: ``tumble demo``, ``tumble bench``.

A user error prints one line on stderr and exits with status 2, without a traceback.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path


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


def _cmd_demo(args: argparse.Namespace) -> int:
    from .demo import run_demo

    print(f"tumble demo: Dzhanibekov flip of a free box, {args.duration:g} s at dt = {args.dt:g} s "
          "(the first run compiles the kernels, about 10 s; later runs load them from the cache)", flush=True)
    s = run_demo(args.out, duration=args.duration, dt=args.dt, progress=not args.quiet)
    print(f"  flips about the intermediate axis: {s['flips']} "
          f"(linear growth rate λ = {s['growth_rate']:.3f} 1/s)")
    print(f"  max relative drift: kinetic energy {s['energy_drift']:.2e}, |L| {s['momentum_drift']:.2e}")
    print(f"  kernel compile/load {s['compile_s']:.2f} s; {s['steps']} steps in {s['run_s']:.2f} s")
    for path in s["files"]:
        print(f"  wrote {path}")
    return 0


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
    parser = _Parser(prog="tumble", description="tumble: 3D rigid-body dynamics.")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)
    demo = sub.add_parser("demo", help="simulate the Dzhanibekov flip; print a summary, write npz/csv/png")
    demo.add_argument("-o", "--out", default="tumble-demo", help="output folder (default: tumble-demo)")
    demo.add_argument("--duration", type=_positive_float, default=20.0, help="simulated seconds (default 20)")
    demo.add_argument("--dt", type=_positive_float, default=1e-3, help="time step in seconds (default 1e-3)")
    demo.add_argument("-q", "--quiet", action="store_true", help="no progress bar")
    demo.set_defaults(func=_cmd_demo)
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
        print(f"tumble {args.command}: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(f"tumble {args.command}: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
