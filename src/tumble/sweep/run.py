"""``run_sweep``: many variants of one scene, one Dask task each, into one table (docs/sweeps.md)."""

from __future__ import annotations

import inspect
import math
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .. import __version__
from ..user.cli import _output_folder
from ..user.scene import read_scene_text, scene_document, world_from_document
from ..user.trajectory import MAX_STEPS, check_recording
from ..world import World
from .cluster import CONNECT_TIMEOUT_S, check_scheduler, dask_client, require_dask, usable_cores
from .params import Key, Value, digest, plain_sets, resolve_key
from .store import RESULTS, SUMMARY_TYPES, VARIANTS, claim_folder, read_row, write_table, write_variant
from .variant import Figure, Source, Task, run_variant

_RESERVED = {"variant", "status", "error", "trajectory", "final_state", "key", *SUMMARY_TYPES}
"""Column names a parameter or a figure of the user's may not take."""


@dataclass(frozen=True)
class SweepResult:
    """What ``run_sweep`` did.

    Attributes:
        path: the results table, ``OUT/results.parquet``.
        rows: one dict per variant, in sweep order: ``key``, ``params`` (key → value), ``status``, ``error``
            and the figures (None where the variant failed), ``trajectory``/``final_state`` (paths relative
            to OUT) where kept.
        computed: variants simulated by this call.
        reused: variants whose results a previous call with the same arguments had written (not simulated
            again).
    """

    path: Path
    rows: list[dict[str, Any]]
    computed: int
    reused: int

    @property
    def errors(self) -> int:
        """Variants whose status is "error"."""
        return sum(row["status"] == "error" for row in self.rows)


def run_sweep(scene: str | os.PathLike | Callable[[dict[str, Value]], World], variants: Sequence[Mapping[str, Any]],
              *, duration: float, dt: float, out: str | os.PathLike, record_every: int | None = None,
              keep: Sequence[str] = (), final_state: bool = False, figures: Mapping[str, Figure] | None = None,
              scheduler: Any = None, workers: int | None = None, progress: bool = False, precompile: bool = True,
              connect_timeout: float = CONNECT_TIMEOUT_S, report: Callable[[str], None] | None = None) -> SweepResult:
    """Simulate every parameter set of ``variants`` as one Dask task and write one table, ``OUT/results.parquet``.

    Args:
        scene: a scene file (TOML) whose dotted keys the parameter sets vary (``bodies.ball.restitution``,
            ``ground.friction``, ...; tumble.sweep.params), or a function ``build(params) -> World`` that
            makes the world of one parameter set (a plain dict). Dask ships it with cloudpickle: by value
            from ``__main__`` or a lambda, by reference from a module (which the workers must import).
        variants: the parameter sets, e.g. ``grid({...})``, ``sample({...}, n, seed=...)`` or a list of dicts.
        duration: simulated time of each variant [s]; a whole number of steps of ``dt`` (to 1e-9).
        dt: time step [s] > 0.
        out: the output folder (made if needed). Each variant's results go to ``OUT/variants/KEY.*`` as it
            finishes; a call with the same arguments skips the variants already there (``reused``).
        record_every: record every k-th step (default: about 60 frames per simulated second, as ``tumble
            run``); the summary figures and kept trajectories come from the recorded frames.
        keep: names of bodies whose trajectories to save, one ``.npz`` per variant (``Trajectory.load``).
        final_state: save each variant's final state (all bodies) as ``.final.npz`` (plain arrays).
        figures: name → ``fn(world, trajectory) -> number``, computed on the worker after the run (the
            world at its end, the trajectory of all bodies); a column each.
        scheduler: a Dask scheduler address (``tcp://host:8786``) or a ``distributed.Client``; None: Dask's
            ``scheduler-address`` config (``DASK_SCHEDULER_ADDRESS``) if set, else a ``LocalCluster`` here.
        workers: processes of the local cluster (default: one per usable core); not with a scheduler.
        progress: a progress bar (tqdm) on stderr.
        precompile: compile the first variant's kernels in this process first (``World.precompile``, in
            parallel processes), so the workers on this machine load them from Numba's cache.
        connect_timeout: [s] how long to try to reach ``scheduler``.
        report: called with one line of text once everything is checked, saying what will run where.

    Returns:
        A ``SweepResult``: the table's path, the rows, how many variants were computed and reused.

    Raises (before any variant runs or any file is written):
        TypeError: an argument of the wrong type (the message names it).
        ValueError: a key the scene does not have (naming the key and what is known there), no variants or
            more than ``MAX_VARIANTS``, duration not a whole number of steps or a recording that would not fit
            in memory (``check_recording``), an unknown body in ``keep``, a figure named like a column,
            ``out`` a file, a scheduler that cannot be reached.
        ModuleNotFoundError: Dask's distributed or pyarrow is missing (``pip install "tumble[sweep]"``).

    A variant that raises (a value the scene refuses, say) gets ``status = "error"`` and the message in its
    row; the others go on. Tasks of a worker that dies run again elsewhere (Dask reschedules them).
    """
    require_dask()
    sets = plain_sets(variants)
    source, scene_id = _source(scene, sets)
    steps = _steps(duration, dt)
    record_every = _record_every(record_every, steps, dt)
    keep = _names("keep", keep)
    figure_list = _figures(figures)
    clashes = sorted({k for params in sets for k in params} & _RESERVED)
    if clashes:
        raise ValueError(f"variants: parameter {clashes[0]!r} is named like a column of the table; rename it")
    if source.text is not None:
        _check_kept(source, keep)
    _check_recording(source, steps, record_every)
    if not isinstance(final_state, bool):
        raise TypeError(f"final_state must be True or False, got {final_state!r}")
    folder = _output_folder("out", out)
    address = check_scheduler(scheduler, workers, connect_timeout)
    task_of = {}
    order = []
    for params in sets:
        task = Task(params=params, steps=steps, dt=float(dt), record_every=record_every, keep=keep,
                    final_state=final_state, figures=figure_list)
        key = digest(scene_id, params, steps, float(dt), record_every, keep, final_state,
                     [(name, _callable_id(fn)) for name, fn in figure_list], __version__)
        task_of[key] = task
        order.append(key)
    names = list(dict.fromkeys(k for params in sets for k in params))
    folder.mkdir(parents=True, exist_ok=True)
    claim_folder(folder, order, {"scene": source.shown, "keys": names, "variants": len(order),
                                 "duration": float(duration), "dt": float(dt), "tumble": __version__})
    (folder / VARIANTS).mkdir(parents=True, exist_ok=True)
    rows: dict[str, dict[str, Any]] = {}
    for key in task_of:
        row = read_row(folder, key)
        if row is not None:
            rows[key] = row
    reused = len(rows)
    todo = [key for key in task_of if key not in rows]
    if report is not None:
        where = (f"the cluster at {address}" if address else "the given client" if scheduler is not None
                 else f"a local cluster of {workers or usable_cores()} worker processes")
        report(f"{len(sets)} variants: {len(todo)} to compute on {where}, {reused} already done in {folder}")
    if todo:
        if precompile:
            _precompile(source, [task_of[key].params for key in todo[:3]], progress)
        rows.update(_compute(source, digest(scene_id), {key: task_of[key] for key in todo}, folder, scheduler,
                             workers, connect_timeout, progress))
    ordered = [rows[key] for key in order]
    path = write_table(folder / RESULTS, ordered, names, [name for name, _ in figure_list],
                       trajectories=bool(keep), final_states=final_state)
    return SweepResult(path=path, rows=ordered, computed=len(todo), reused=reused)


def _compute(source: Source, source_key: str, tasks: Mapping[str, Task], folder: Path, scheduler: Any,
             workers: int | None, connect_timeout: float, progress: bool) -> dict[str, dict[str, Any]]:
    """Run ``tasks`` (key → task) on the Dask cluster, writing each one's files as it finishes."""
    from distributed import as_completed
    from tqdm import tqdm

    rows: dict[str, dict[str, Any]] = {}
    with dask_client(scheduler, workers, connect_timeout=connect_timeout) as client:
        # the source goes to the cluster once, as a task (recomputed from its spec if its worker dies)
        shipped = client.submit(_same, source, key=f"tumble-source-{source_key}")
        futures = {client.submit(run_variant, shipped, task, key=f"tumble-variant-{key}", retries=2): key
                   for key, task in tasks.items()}
        bar = tqdm(total=len(futures), unit="variant", desc="sweep", disable=not progress, mininterval=0.5)
        try:
            for future in as_completed(futures, loop=client.loop):
                key = futures[future]
                try:
                    result = future.result()
                except Exception as exc:   # the cluster gave up on it (its workers kept dying): not saved
                    rows[key] = {"key": key, "params": dict(tasks[key].params), "status": "error",
                                 "error": f"the cluster could not run this variant ({type(exc).__name__}: "
                                          f"{' '.join(str(exc).split())}); run the sweep again to retry it"}
                else:
                    rows[key] = write_variant(folder, key, tasks[key].params, result)
                future.release()
                bar.update(1)
        finally:
            bar.close()
            for future in futures:
                future.cancel()
    return rows


def _same(source: Source) -> Source:
    return source


def _source(scene: Any, sets: list[dict[str, Value]]) -> tuple[Source, Any]:
    """The variants' Source (its keys resolved up front) and what identifies the scene in a variant's key."""
    if callable(scene) and not isinstance(scene, (str, os.PathLike)):
        return Source(shown=getattr(scene, "__qualname__", repr(scene)), builder=scene), _callable_id(scene)
    if not isinstance(scene, (str, os.PathLike)):
        raise TypeError(f"scene must be a scene file path or a function params -> World, got {scene!r}")
    text, shown = read_scene_text(scene)
    doc = scene_document(text, shown)
    # the scene as written must load: a file every variant would refuse (no format line, a bad key) is one
    # error up front, not one per row
    world_from_document(scene_document(text, shown), text, shown)
    keys: dict[str, Key] = {}
    for params in sets:
        for name in params:
            if name not in keys:
                try:
                    keys[name] = resolve_key(doc, name)
                except ValueError as exc:
                    raise ValueError(f"variants: {exc}") from None
    paths = {}
    for name, key in keys.items():   # two names for one value (bodies.0.mass and bodies.ball.mass) or a vector
        for other, path in paths.items():   # and one of its components would fight over it
            if key.path[:len(path)] == path or path[:len(key.path)] == key.path:
                raise ValueError(f"variants: keys {other!r} and {name!r} set the same value")
        paths[name] = key.path
    return Source(shown=Path(shown).name, text=text, keys=keys), digest(text)


def _callable_id(fn: Any) -> str:
    """A function's identity for variant keys: its qualified name and, where Python has it, its source."""
    name = f"{getattr(fn, '__module__', '')}.{getattr(fn, '__qualname__', repr(fn))}"
    try:
        return name + "\n" + inspect.getsource(fn)
    except (OSError, TypeError):
        return name


def _steps(duration: Any, dt: Any) -> int:
    for name, value in (("duration", duration), ("dt", dt)):
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise TypeError(f"{name} must be a number of seconds, got {value!r}")
        if not math.isfinite(value) or value <= 0.0:
            raise ValueError(f"{name} must be positive and finite, got {value!r}")
    if not duration / dt <= MAX_STEPS:
        raise ValueError(f"duration={duration!r} is {duration / dt:.3g} steps of dt={dt!r}; at most "
                         f"{MAX_STEPS:.3g} steps (MAX_STEPS)")
    steps = round(duration / dt)
    if steps < 1 or abs(steps * dt - duration) > 1e-9 * max(duration, dt):
        raise ValueError(f"duration must be a whole number (>= 1) of steps of dt={dt!r}, got duration={duration!r}")
    return steps


def _check_recording(source: Source, steps: int, record_every: int) -> None:
    """ValueError when each variant's recording would not fit (``check_recording``, as ``tumble run``): every
    variant would fail alike, so the sweep is refused up front. The scene file's bodies are counted (at least
    one for a builder, whose world is not made here)."""
    bodies = 1
    if source.text is not None:
        doc = scene_document(source.text, source.shown)
        listed = doc.get("bodies", [])
        bodies = max(1, (len(listed) if isinstance(listed, list) else 0) + ("ground" in doc))
    try:
        check_recording(steps, record_every, bodies)
    except ValueError as exc:
        raise ValueError(f"duration: each variant's {exc}") from None


def _record_every(record_every: Any, steps: int, dt: float) -> int:
    if record_every is None:
        per_60th = 1.0 / (60.0 * dt)
        return max(1, int(round(per_60th))) if per_60th < steps else steps
    if isinstance(record_every, bool) or not isinstance(record_every, int) or record_every < 1:
        raise ValueError(f"record_every must be a positive integer, got {record_every!r}")
    return record_every


def _names(what: str, names: Any) -> tuple[str, ...]:
    if isinstance(names, str) or not isinstance(names, Sequence) or not all(isinstance(n, str) for n in names):
        raise TypeError(f"{what} must be a sequence of body names, got {names!r}")
    return tuple(dict.fromkeys(names))


def _check_kept(source: Source, keep: tuple[str, ...]) -> None:
    doc = scene_document(source.text, source.shown)
    names = [b.get("name") for b in doc.get("bodies", []) if isinstance(b, dict)]
    ground = doc.get("ground")
    if isinstance(ground, dict):
        names.append(ground.get("name", "ground"))
    for name in keep:
        if name not in names:
            raise ValueError(f"keep: no body named {name!r} in {source.shown} (named: "
                             f"{', '.join(repr(n) for n in names if isinstance(n, str)) or 'none'})")


def _figures(figures: Any) -> tuple[tuple[str, Figure], ...]:
    if figures is None:
        return ()
    if not isinstance(figures, Mapping):
        raise TypeError(f"figures must be a mapping of names to functions fn(world, trajectory), got {figures!r}")
    for name, fn in figures.items():
        if not isinstance(name, str) or not callable(fn):
            raise TypeError(f"figures[{name!r}] must be a function fn(world, trajectory) -> number, got {fn!r}")
        if name in _RESERVED:
            raise ValueError(f"figures: {name!r} is a column of the table already; give the figure another name")
    return tuple(figures.items())


def _precompile(source: Source, candidates: list[Mapping[str, Value]], progress: bool) -> None:
    """Compile the kernels of the first of ``candidates`` that builds, in parallel processes of this one, so
    that the workers (which share Numba's cache on this machine) load them instead of each compiling them."""
    for params in candidates:
        try:
            world = source.world(params)
        except Exception:   # this variant will fail as a task and say why in its row
            continue
        world.precompile(progress=progress)
        return
