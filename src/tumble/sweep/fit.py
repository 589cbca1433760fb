"""``fit``: the scene parameters that make simulated motion match measured motion (system identification).

The error of a parameter set, over the measured samples i of every body and toss (docs/sweeps.md):

    E = (1/N_x) Σ_i |x_sim(t_i) − x_meas(t_i)|² / L²  +  (1/N_q) Σ_i θ_i²,
    θ_i = 2 arccos |⟨q_sim(t_i), q_meas(t_i)⟩|,

the mean squared position error [m²] over the length scale L² [m²] plus the mean squared angle [rad²] of the
rotation between simulated and measured orientation (the second term only where orientations were
measured; N_x, N_q the numbers of such samples). The simulation records every step; positions between
steps are interpolated linearly and orientations by normalized linear interpolation (errors O(dt²)).

The last ``holdout`` fraction of each toss's time span is held out: ``fit`` minimizes E over the samples
before it, and reports E over the samples after it for the fitted values (a prediction it was not fitted to).
The search: a coarse grid of ``coarse`` values per key over its bounds (one Dask task per variant and toss,
as ``run_sweep``), then SciPy's bounded Nelder–Mead from the best grid point, each evaluation the tosses
simulated in parallel on the same cluster.
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from ..user.cli import _output_folder
from ..user.scene import read_scene_text, scene_document
from ..user.trajectory import _atomic_write
from ..world import World
from .cluster import CONNECT_TIMEOUT_S, check_scheduler, dask_client, require_dask
from .measured import Measured, load_measured
from .params import bounds_of, check_count, grid, resolve_key
from .run import _precompile
from .variant import Source, tracks

MAX_EVALUATION_STEPS = 1_000_000
"""The most steps one evaluation of a parameter set may take, over all measured runs together (checked before
anything runs): a fit simulates its runs coarse**keys + max_evaluations times, and each run records every step
(7 floats per measured body). A million steps is 4,167 s of measured motion at 1/240 s, about a minute of one
core for a small scene; a 2-row CSV spanning 1e5 s at dt = 0.01 s (1e7 steps per evaluation) is refused."""

ERROR_MEASURE = "E = mean(|x_sim - x_meas|^2) / L^2 + mean(theta^2), theta = 2 arccos|<q_sim, q_meas>| [rad]"
"""The fit's error measure in one line (``fit.json``)."""


@dataclass(frozen=True)
class FitResult:
    """What ``fit`` found.

    Attributes:
        values: the fitted value of each key.
        fit_error: E (dimensionless) over the samples it was fitted to, at ``values``.
        heldout_error: E over the held-out samples at ``values`` (NaN when ``holdout`` is 0).
        coarse: the grid: one (parameters, fit error) pair per grid point (inf where the variant failed).
        evaluations: parameter sets simulated in all (grid and optimizer).
        message: the optimizer's closing message.
        files: what was written into ``out`` (none without it).
    """

    values: dict[str, float]
    fit_error: float
    heldout_error: float
    coarse: list[tuple[dict[str, float], float]]
    evaluations: int
    message: str
    files: list[Path] = field(default_factory=list)


@dataclass(frozen=True)
class _Toss:
    source: Source
    measured: Measured
    bodies: tuple[str, ...]
    steps: int
    split: float   # [s] samples after it are held out


def fit(tosses: Sequence[tuple[str | os.PathLike | Callable[[dict[str, float]], World], str | os.PathLike | Measured]],
        keys: Mapping[str, tuple[float, float]], *, dt: float, length_scale: float = 0.1, holdout: float = 0.25,
        coarse: int = 5, max_evaluations: int = 60, out: str | os.PathLike | None = None, scheduler: Any = None,
        workers: int | None = None, progress: bool = False, connect_timeout: float = CONNECT_TIMEOUT_S) -> FitResult:
    """Fit the values of ``keys`` so that the simulated motion matches measured motion (module docstring).

    Args:
        tosses: (scene, measured) pairs, one per measured run: the scene file (its initial state is the run's
            t = 0) or a builder ``fn(params) -> World``, and the measured motion (a CSV or ``.npz`` path, or
            a ``Measured``) of bodies named in it.
        keys: dotted key → (low, high) bounds of the search, e.g. {"materials.rubber.friction": (0.05, 1.0)}.
        dt: time step of the simulations [s].
        length_scale: L [m] of the error measure: a position error of L weighs as much as a rotation error
            of one radian.
        holdout: the fraction (0 <= holdout < 1) of each toss's time span, at its end, held out of the fit.
        coarse: grid values per key (>= 2).
        max_evaluations: most parameter sets the local optimizer simulates.
        out: a folder for ``fit.json``, ``coarse.parquet`` and ``fit.png`` (measured against simulated
            motion; skipped with a note in ``fit.json`` when matplotlib is missing); None writes nothing.
        scheduler, workers, progress, connect_timeout: as ``run_sweep``.

    Returns:
        A ``FitResult``.

    Raises (before anything is simulated):
        TypeError, ValueError: a bad argument (naming it), a key the scene lacks, a measured file that cannot
            be read or lacks columns, a measured body the scene does not have, measured times beyond what
            ``MAX_STEPS`` allows.
    """
    require_dask()
    from scipy.optimize import minimize

    bounds = _keys(keys)
    dt = _positive("dt", dt)
    length_scale = _positive("length_scale", length_scale)
    if isinstance(holdout, bool) or not isinstance(holdout, (int, float)) or not 0.0 <= holdout < 1.0:
        raise ValueError(f"holdout must be a fraction in [0, 1), got {holdout!r}")
    for name, value, least in (("coarse", coarse, 2), ("max_evaluations", max_evaluations, 0)):
        if isinstance(value, bool) or not isinstance(value, int) or value < least:
            raise ValueError(f"{name} must be an integer >= {least}, got {value!r}")
    free = [k for k, (lo, hi) in bounds.items() if hi > lo]
    check_count(f"the coarse grid ({coarse} values per key, {len(free)} free keys)", coarse ** len(free))
    folder = _output_folder("out", out) if out is not None else None
    prepared = [_toss(i, scene, measured, bounds, dt, holdout) for i, (scene, measured) in
                enumerate(_pairs(tosses))]
    _check_evaluation(prepared, dt)
    evaluated: dict[tuple[float, ...], tuple[float, float]] = {}

    def params_of(point: Sequence[float]) -> dict[str, float]:
        return {k: float(v) for k, v in zip(bounds, point, strict=True)}

    from tqdm import tqdm

    axes = {k: np.linspace(lo, hi, coarse) if k in free else [lo] for k, (lo, hi) in bounds.items()}
    grid_points = [tuple(p.values()) for p in grid(axes)]
    check_scheduler(scheduler, workers, connect_timeout)
    for toss in prepared:    # each toss's kernels compiled here once, loaded by the workers (as run_sweep)
        _precompile(toss.source, [params_of(grid_points[0])], progress)
    with dask_client(scheduler, workers, connect_timeout=connect_timeout) as client:
        bar = tqdm(unit="variant", desc="fit", disable=not progress, mininterval=0.5)

        def evaluate(points: list[tuple[float, ...]]) -> None:
            points = [p for p in dict.fromkeys(points) if p not in evaluated]
            futures = [[client.submit(tracks, toss.source, params_of(p), toss.steps, dt, toss.bodies, pure=False)
                        for toss in prepared] for p in points]
            for point, row in zip(points, futures, strict=True):
                evaluated[point] = _errors(prepared, client.gather(row), length_scale)
                bar.update(1)

        try:
            evaluate(grid_points)
            best = min(grid_points, key=lambda p: evaluated[p][0])
            message = "no free parameter (every low == high)"
            if free and max_evaluations > 0:
                message = _local(minimize, evaluate, evaluated, bounds, free, best, coarse, max_evaluations)
        finally:
            bar.close()
    point = min(evaluated, key=lambda p: evaluated[p][0])
    result = FitResult(values=params_of(point), fit_error=evaluated[point][0], heldout_error=evaluated[point][1],
                       coarse=[(params_of(p), evaluated[p][0]) for p in grid_points], evaluations=len(evaluated),
                       message=message)
    if folder is not None:
        result.files.extend(_write(folder, result, prepared, bounds, dt, length_scale, holdout))
    return result


def measure_error(tosses: Sequence[tuple[Any, Any]], params: Mapping[str, float], *, dt: float,
                  length_scale: float = 0.1, holdout: float = 0.25) -> tuple[float, float]:
    """E (module docstring) of one parameter set, (over the fitted part, over the held-out part), simulated
    here, in this process (no Dask): what ``fit`` scores, for checking a fit against known values."""
    bounds = {k: (float(v), float(v)) for k, v in params.items()}
    prepared = [_toss(i, scene, measured, bounds, _positive("dt", dt), holdout)
                for i, (scene, measured) in enumerate(_pairs(tosses))]
    runs = [tracks(t.source, dict(params), t.steps, dt, t.bodies) for t in prepared]
    return _errors(prepared, runs, _positive("length_scale", length_scale))


# ====================================================================== the search
def _local(minimize: Any, evaluate: Callable, evaluated: dict, bounds: Mapping[str, tuple[float, float]],
           free: list[str], best: tuple[float, ...], coarse: int, max_evaluations: int) -> str:
    """Bounded Nelder–Mead over the free keys, scaled to [0, 1], from the best grid point; its first simplex
    spans half a grid step along each key. Returns its message."""
    names = list(bounds)
    lo = np.array([bounds[k][0] for k in free])
    span = np.array([bounds[k][1] - bounds[k][0] for k in free])
    start = np.array([best[names.index(k)] for k in free])
    u0 = (start - lo) / span
    step = 0.5 / (coarse - 1)
    simplex = [u0]
    for j in range(len(free)):
        u = u0.copy()
        u[j] += step if u[j] + step <= 1.0 else -step
        simplex.append(u)

    def point(u: np.ndarray) -> tuple[float, ...]:
        full = list(best)
        for k, value in zip(free, lo + np.clip(u, 0.0, 1.0) * span, strict=True):
            full[names.index(k)] = float(value)
        return tuple(full)

    def objective(u: np.ndarray) -> float:
        p = point(u)
        evaluate([p])
        return evaluated[p][0]

    found = minimize(objective, u0, method="Nelder-Mead", bounds=[(0.0, 1.0)] * len(free),
                     options={"initial_simplex": np.array(simplex), "xatol": 1e-4, "fatol": 1e-12,
                              "maxfev": max_evaluations})
    return str(found.message)


def _errors(prepared: Sequence[_Toss], runs: Sequence[Any], length_scale: float) -> tuple[float, float]:
    """E over the fitted and the held-out samples of all tosses (inf when a run failed; NaN for a part with
    no sample)."""
    sums = np.zeros((2, 2))     # [part][position, rotation]
    counts = np.zeros((2, 2))
    for toss, run in zip(prepared, runs, strict=True):
        if isinstance(run, str):
            return math.inf, math.inf
        times, positions, orientations = run
        for k, body in enumerate(toss.bodies):
            track = toss.measured.tracks[body]
            held = track.times > toss.split
            x = np.stack([np.interp(track.times, times, positions[:, k, c]) for c in range(3)], axis=1)
            d2 = np.sum((x - track.positions) ** 2, axis=1) / length_scale**2
            for part, mask in enumerate((~held, held)):
                sums[part, 0] += d2[mask].sum()
                counts[part, 0] += mask.sum()
            if track.orientations is not None:
                q = _nlerp(times, orientations[:, k], track.times)
                theta = 2.0 * np.arccos(np.clip(np.abs(np.sum(q * track.orientations, axis=1)), 0.0, 1.0))
                for part, mask in enumerate((~held, held)):
                    sums[part, 1] += np.sum(theta[mask] ** 2)
                    counts[part, 1] += mask.sum()
    out = []
    for part in range(2):
        if counts[part, 0] == 0:
            out.append(math.nan)
            continue
        rotation = sums[part, 1] / counts[part, 1] if counts[part, 1] else 0.0
        out.append(float(sums[part, 0] / counts[part, 0] + rotation))
    return out[0], out[1]


def _nlerp(times: np.ndarray, q: np.ndarray, at: np.ndarray) -> np.ndarray:
    """Orientations (len(at), 4) at the times ``at``, normalized linear interpolation of ``q`` (T, 4) sampled at
    ``times`` (the shorter way round)."""
    i = np.clip(np.searchsorted(times, at, side="right") - 1, 0, len(times) - 2)
    f = np.clip((at - times[i]) / (times[i + 1] - times[i]), 0.0, 1.0)[:, None]
    a, b = q[i], q[i + 1]
    b = np.where(np.sum(a * b, axis=1, keepdims=True) < 0.0, -b, b)
    out = (1.0 - f) * a + f * b
    return out / np.linalg.norm(out, axis=1, keepdims=True)


# ====================================================================== checking the arguments
def _keys(keys: Any) -> dict[str, tuple[float, float]]:
    if not isinstance(keys, Mapping) or not keys:
        raise ValueError(f"keys must be a non-empty mapping of keys to (low, high), got {keys!r}")
    return {name: bounds_of(f"keys[{name!r}]", b) for name, b in keys.items()}


def _positive(name: str, value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TypeError(f"{name} must be a number, got {value!r}")
    if not (math.isfinite(value) and value > 0.0):
        raise ValueError(f"{name} must be positive and finite, got {value!r}")
    return float(value)


def _pairs(tosses: Any) -> list[tuple[Any, Any]]:
    if isinstance(tosses, (str, bytes)) or not isinstance(tosses, Sequence) or not tosses:
        raise ValueError(f"tosses must be a non-empty sequence of (scene, measured) pairs, got {tosses!r}")
    for i, pair in enumerate(tosses):
        if not isinstance(pair, (tuple, list)) or len(pair) != 2:
            raise TypeError(f"tosses[{i}] must be a (scene, measured) pair, got {pair!r}")
    return [tuple(pair) for pair in tosses]


def _toss(i: int, scene: Any, measured: Any, bounds: Mapping[str, tuple[float, float]], dt: float,
          holdout: float) -> _Toss:
    """One toss, checked: its scene's keys resolved, its measured bodies found in the scene."""
    from ..user.trajectory import MAX_STEPS

    if not isinstance(measured, Measured):
        measured = load_measured(measured)
    if callable(scene) and not isinstance(scene, (str, os.PathLike)):
        source = Source(shown=getattr(scene, "__qualname__", repr(scene)), builder=scene)
    else:
        text, shown = read_scene_text(scene)
        doc = scene_document(text, shown)
        try:
            keys = {name: resolve_key(doc, name) for name in bounds}
        except ValueError as exc:
            raise ValueError(f"tosses[{i}]: {exc}") from None
        source = Source(shown=Path(shown).name, text=text, keys=keys)
        names = {b.get("name") for b in doc.get("bodies", []) if isinstance(b, dict)}
        count = len(doc.get("bodies", []))
        for body in measured.tracks:
            if body not in names and not (body.isdigit() and int(body) < count):
                raise ValueError(f"tosses[{i}]: {measured.source} measures body {body!r}, which {shown} does not "
                                 f"have (bodies: {', '.join(sorted(repr(n) for n in names if n)) or 'none named'})")
    end = measured.duration
    if end / dt > min(MAX_STEPS, MAX_EVALUATION_STEPS):
        raise ValueError(f"tosses[{i}]: {measured.source} spans {end:g} s, {end / dt:.3g} steps of dt={dt!r} per "
                         f"evaluation; at most {MAX_EVALUATION_STEPS:,} (MAX_EVALUATION_STEPS): a larger dt, or "
                         f"measured runs that end sooner")
    steps = max(1, math.ceil(end / dt - 1e-9))
    return _Toss(source=source, measured=measured, bodies=tuple(measured.tracks), steps=steps,
                 split=(1.0 - holdout) * end if holdout > 0.0 else math.inf)


def _check_evaluation(prepared: Sequence[_Toss], dt: float) -> None:
    """ValueError when one evaluation (every toss simulated once) would take more than MAX_EVALUATION_STEPS."""
    total = sum(t.steps for t in prepared)
    if total > MAX_EVALUATION_STEPS:
        raise ValueError(f"the {len(prepared)} measured runs together are {total:,} steps of dt={dt!r} per evaluation; "
                         f"at most {MAX_EVALUATION_STEPS:,} (MAX_EVALUATION_STEPS): a larger dt, or fewer or shorter "
                         f"measured runs")


# ====================================================================== what a fit writes
def _write(folder: Path, result: FitResult, prepared: Sequence[_Toss], bounds: Mapping[str, tuple[float, float]],
           dt: float, length_scale: float, holdout: float) -> list[Path]:
    import pyarrow as pa
    import pyarrow.parquet as pq

    folder.mkdir(parents=True, exist_ok=True)
    files = []
    columns = {k: pa.array([p[k] for p, _ in result.coarse], pa.float64()) for k in bounds}
    columns["fit_error"] = pa.array([e for _, e in result.coarse], pa.float64())
    table = pa.table(columns)
    files.append(_atomic_write(folder / "coarse.parquet", lambda fh: pq.write_table(table, fh)))
    report: dict[str, Any] = {
        "values": result.values, "fit_error": result.fit_error,
        "heldout_error": None if math.isnan(result.heldout_error) else result.heldout_error,
        "error_measure": ERROR_MEASURE, "length_scale_m": length_scale, "holdout": holdout, "dt": dt,
        "bounds": {k: list(b) for k, b in bounds.items()}, "evaluations": result.evaluations,
        "optimizer": result.message, "tosses": [t.measured.source for t in prepared]}
    try:
        files.append(_plot(folder / "fit.png", result.values, prepared, dt))
    except ImportError:
        report["plot"] = 'skipped: matplotlib is not installed (pip install "tumble[plot]")'
    text = json.dumps(report, indent=2) + "\n"
    files.append(_atomic_write(folder / "fit.json", lambda fh: fh.write(text.encode())))
    return files


def _plot(path: Path, values: Mapping[str, float], prepared: Sequence[_Toss], dt: float) -> Path:
    """Measured (dots) against simulated (lines) motion of each measured body of each toss at the fitted
    values: x, y, z, and where orientations were measured the angle turned from the first sample [deg]; the
    held-out span shaded."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    panels = [(t, body) for t in prepared for body in t.bodies][:8]
    turns = any(t.measured.tracks[body].orientations is not None for t, body in panels)
    fig, axes = plt.subplots(len(panels), 2 if turns else 1, figsize=(12 if turns else 8, 2.6 * len(panels)),
                             squeeze=False)
    for row, (toss, body) in zip(axes, panels, strict=True):
        run = tracks(toss.source, dict(values), toss.steps, dt, (body,))
        track = toss.measured.tracks[body]
        ax = row[0]
        for c, color in zip(range(3), ("tab:red", "tab:green", "tab:blue"), strict=True):
            ax.plot(track.times, track.positions[:, c], ".", ms=3, color=color, label=f"{'xyz'[c]} measured")
            if not isinstance(run, str):
                ax.plot(run[0], run[1][:, 0, c], "-", lw=1, color=color, label=f"{'xyz'[c]} simulated")
        ax.set_ylabel("position [m]")
        if turns and track.orientations is not None:
            row[1].plot(track.times, _turned(track.orientations), ".", ms=3, color="k", label="measured")
            if not isinstance(run, str):
                row[1].plot(run[0], _turned(run[2][:, 0]), "-", lw=1, color="tab:purple", label="simulated")
            row[1].set_ylabel("turned from the start [deg]")
        for ax in row:
            if math.isfinite(toss.split):
                ax.axvspan(toss.split, track.times[-1], color="0.9", zorder=0, label="held out")
            ax.set_title(f"{toss.measured.source}: {body}", fontsize=9)
            ax.set_xlabel("t [s]")
            ax.legend(fontsize=6, ncol=4)
    fig.tight_layout()
    try:
        return _atomic_write(path, lambda fh: fig.savefig(fh, format="png", dpi=100))
    finally:
        plt.close(fig)


def _turned(q: np.ndarray) -> np.ndarray:
    """The angle [deg] of each orientation of ``q`` (T, 4) relative to the first."""
    return np.degrees(2.0 * np.arccos(np.clip(np.abs(q @ q[0]), 0.0, 1.0)))
