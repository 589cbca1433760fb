"""``tumble sweep`` and ``tumble fit``: the command-line faces of ``run_sweep`` and ``fit`` (docs/sweeps.md).

Errors follow the CLI's rule (``tumble.user.cli``): a bad option, key, value range, file or scheduler
prints one line and exits with status 2, checked before anything runs.
"""

from __future__ import annotations

import argparse
import math
from typing import Any

from ..user.cli import _output_folder, _positive_float, _positive_int


def add_commands(sub: Any) -> None:
    """Add the ``sweep`` and ``fit`` subcommands to the ``tumble`` parser's subparsers ``sub``."""
    sweep = sub.add_parser("sweep", help="simulate many variants of a scene (a grid over --vary keys) on a Dask "
                                         "cluster; write one table, DIR/results.parquet (docs/sweeps.md)")
    sweep.add_argument("scene", help="the scene file, e.g. scene.toml")
    sweep.add_argument("--vary", action="append", required=True, metavar="KEY=VALUES",
                       help="a dotted key of the scene file and its values: a comma list (0.1,0.3) or "
                            "start:stop:count (inclusive); e.g. ground.friction=0.2:0.8:4, "
                            "bodies.ball.restitution=0.5,0.7, bodies.ball.position.2=0.5,1.0; repeat for a grid")
    sweep.add_argument("--duration", type=_positive_float, required=True, help="simulated seconds per variant")
    sweep.add_argument("--dt", type=_positive_float, required=True, help="time step in seconds")
    sweep.add_argument("--out", required=True, metavar="DIR", help="output folder; running the same sweep "
                                                                   "again skips the variants already there")
    _cluster_options(sweep)
    sweep.add_argument("--record-every", type=_positive_int, help="record every k-th step (default: ~60 frames/s)")
    sweep.add_argument("--keep", action="append", metavar="BODY",
                       help="save this body's trajectory per variant (DIR/variants/KEY.npz); repeat for more")
    sweep.add_argument("--final-state", action="store_true", help="save each variant's final state "
                                                                  "(DIR/variants/KEY.final.npz)")
    sweep.set_defaults(func=_cmd_sweep)

    fit = sub.add_parser("fit", help="fit scene parameters (e.g. friction, restitution) to measured motion: a "
                                     "coarse sweep, then SciPy's Nelder-Mead, on Dask (docs/sweeps.md)")
    fit.add_argument("scene", help="the scene file: its initial state is the measured run's t = 0")
    fit.add_argument("measured", help="measured motion, CSV (time,body,x,y,z[,qw,qx,qy,qz]) or .npz (times, "
                                      "names, positions[, orientations])")
    fit.add_argument("--fit", action="append", required=True, metavar="KEY=LOW:HIGH", dest="keys",
                     help="a dotted key to fit and its search bounds, e.g. materials.rubber.friction=0.05:1; repeat")
    fit.add_argument("--toss", nargs=2, action="append", metavar=("SCENE", "MEASURED"),
                     help="another measured run, from its own scene's initial state; repeat")
    fit.add_argument("--dt", type=_positive_float, required=True, help="time step of the simulations in seconds")
    fit.add_argument("--length-scale", type=_positive_float, default=0.1, metavar="M",
                     help="L [m] of the error measure (default 0.1): a position error of L weighs as a rotation "
                          "error of 1 rad")
    fit.add_argument("--holdout", type=float, default=0.25, help="fraction of each run's time span, at its end, "
                                                                 "held out of the fit (default 0.25)")
    fit.add_argument("--coarse", type=_positive_int, default=5, help="grid values per key (default 5)")
    fit.add_argument("--max-evaluations", type=_positive_int, default=60,
                     help="most parameter sets the optimizer simulates (default 60)")
    fit.add_argument("-o", "--out", default="tumble-fit", metavar="DIR",
                     help="output folder for fit.json, coarse.parquet, fit.png (default tumble-fit)")
    _cluster_options(fit)
    fit.set_defaults(func=_cmd_fit)


def _cluster_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--scheduler", metavar="ADDRESS",
                        help="a running Dask scheduler, e.g. tcp://10.0.0.5:8786 (default: DASK_SCHEDULER_ADDRESS, "
                             "else a cluster of worker processes on this machine)")
    parser.add_argument("--workers", type=_positive_int, help="worker processes of the local cluster "
                                                              "(default: one per core)")
    parser.add_argument("--connect-timeout", type=_positive_float, default=5.0, metavar="S",
                        help="seconds to try to reach --scheduler (default 5)")
    parser.add_argument("-q", "--quiet", action="store_true", help="no progress bar")


def _require() -> None:
    from .cluster import require_dask

    try:
        require_dask()
    except ModuleNotFoundError as exc:
        raise ValueError(str(exc)) from None


def _cmd_sweep(args: argparse.Namespace) -> int:
    _require()
    from .params import grid, parse_vary
    from .run import run_sweep

    axes: dict[str, list[Any]] = {}
    for option in args.vary:
        key, values = parse_vary(option)
        if key in axes:
            raise ValueError(f"--vary {key}: the key is given twice; give all its values in one --vary")
        axes[key] = values
    out = _output_folder("--out", args.out)
    shape = " x ".join(str(len(v)) for v in axes.values())

    def report(line: str) -> None:
        print(f"tumble sweep: {args.scene}: a grid of {shape} over {', '.join(axes)}, {args.duration:g} s at "
              f"dt = {args.dt:g} s; {line}", flush=True)

    try:
        result = run_sweep(args.scene, grid(axes), duration=args.duration, dt=args.dt, out=out,
                           record_every=args.record_every, keep=args.keep or (), final_state=args.final_state,
                           scheduler=args.scheduler, workers=args.workers, progress=not args.quiet,
                           connect_timeout=args.connect_timeout, report=report)
    except ValueError as exc:
        text = str(exc)
        raise ValueError("--vary: " + text.removeprefix("variants: ") if text.startswith("variants: ") else text) \
            from None
    except KeyboardInterrupt:
        print(f"tumble sweep: stopped; the variants finished so far are kept in {out}: the same command computes "
              f"only the rest", flush=True)
        raise
    print(f"  {len(result.rows)} variants: computed {result.computed}, reused {result.reused} (already done); "
          f"{result.errors} failed")
    failed = [(i, row) for i, row in enumerate(result.rows) if row["status"] == "error"]
    for i, row in failed[:3]:
        values = ", ".join(f"{k}={v}" for k, v in row["params"].items())
        print(f"  variant {i} ({values}): {row['error']}")
    if len(failed) > 3:
        print(f"  ... and {len(failed) - 3} more (the table's error column)")
    print(f"  wrote {result.path}")
    return 0


def _cmd_fit(args: argparse.Namespace) -> int:
    _require()
    from .fit import fit

    keys = {}
    for option in args.keys:
        key, sep, bounds = option.partition("=")
        low, colon, high = bounds.partition(":")
        try:
            lo, hi = float(low), float(high)
        except ValueError:
            lo = hi = math.nan
        if not sep or not colon or not key.strip() or not (math.isfinite(lo) and math.isfinite(hi)) or lo > hi:
            raise ValueError(f"--fit {option!r}: must be KEY=LOW:HIGH with finite LOW <= HIGH, e.g. "
                             f"materials.rubber.friction=0.05:1")
        if key.strip() in keys:
            raise ValueError(f"--fit {key.strip()}: the key is given twice; give it once, with its bounds LOW:HIGH")
        keys[key.strip()] = (lo, hi)
    if not 0.0 <= args.holdout < 1.0:
        raise ValueError(f"--holdout must be a fraction in [0, 1), got {args.holdout:g}")
    out = _output_folder("-o/--out", args.out)
    tosses = [(args.scene, args.measured)] + [tuple(pair) for pair in args.toss or ()]
    print(f"tumble fit: {', '.join(keys)} to {len(tosses)} measured run(s); coarse grid of {args.coarse} per key, "
          f"then Nelder-Mead (at most {args.max_evaluations} evaluations)", flush=True)
    try:
        result = fit(tosses, keys, dt=args.dt, length_scale=args.length_scale, holdout=args.holdout,
                     coarse=args.coarse, max_evaluations=args.max_evaluations, out=out, scheduler=args.scheduler,
                     workers=args.workers, progress=not args.quiet, connect_timeout=args.connect_timeout)
    except ValueError as exc:   # the first toss is the positional pair; a key's problem is --fit's
        text = str(exc).removeprefix("tosses[0]: ")
        raise ValueError("--fit: " + text if text.startswith("key ") else text) from None
    for key, value in result.values.items():
        print(f"  {key} = {value:.6g}")
    print(f"  error E (mean squared position error / L^2 + mean squared angle): {result.fit_error:.4g} on the fitted "
          f"part, {result.heldout_error:.4g} on the held-out part; {result.evaluations} parameter sets simulated "
          f"({result.message})")
    for path in result.files:
        print(f"  wrote {path}")
    if not any(path.name == "fit.png" for path in result.files):
        print('  no plot: matplotlib is not installed (pip install "tumble[plot]")')
    return 0
