"""``python -m bench [SCENES...] [--engines tumble,pybullet,mujoco] [--quick] [--out DIR]``.

Runs BENCH.md's scenes in tumble and, where installed, PyBullet (reduced and maximal coordinates) and MuJoCo
(Newton and CG solvers), one case after another in this process, and writes a Markdown table and a JSON
file. One progress line per case goes to stderr.

Output files (written atomically):

- ``--out DIR``: ``DIR/RESULTS.md`` and ``DIR/results.json``;
- otherwise, all scenes at full size: ``bench/RESULTS.md`` and ``bench/results.json`` (the committed ones);
- ``--quick`` (smoke size, < 2 min): ``bench/RESULTS-quick.md`` and ``bench/results-quick.json``;
- a subset of scenes: ``bench/RESULTS-partial.md`` and ``bench/results-partial.json``.
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import platform
import re
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from bench.adapters import ENGINES, make_adapters
from bench.adapters.base import Adapter
from bench.report import render_markdown, write_atomic, write_json
from bench.scenes import SCENE_IDS, Scene, case_ids, make_case
from bench.timing import RunOptions, run_case

__all__ = ["main", "build_parser"]

BENCH_DIR = Path(__file__).resolve().parent
REPO = BENCH_DIR.parent


class _OneLineParser(argparse.ArgumentParser):
    """A user error prints one line (no usage block) and exits with status 2."""

    def error(self, message: str) -> None:
        self.exit(2, f"{self.prog}: error: {message}\n")


def build_parser() -> argparse.ArgumentParser:
    """The command-line parser."""
    ap = _OneLineParser(
        prog="python -m bench",
        description="Run tumble's benchmark scenes (BENCH.md S1–S7) side by side with PyBullet and MuJoCo.",
    )
    ap.add_argument("scenes", nargs="*", metavar="SCENE",
                    help=f"scene ids ({' '.join(SCENE_IDS)}) or case ids (e.g. S2-boxes); default: all")
    ap.add_argument("--engines", default=",".join(ENGINES),
                    help="comma-separated engines or engine/config (e.g. pybullet/maximal); default: %(default)s")
    ap.add_argument("--quick", action="store_true", help="smoke-test sizes (< 2 min in all); separate output files")
    ap.add_argument("--out", type=Path, default=None, help="directory for RESULTS.md and results.json")
    ap.add_argument("--repeats", type=int, default=3, help="timed runs per case and configuration (median)")
    ap.add_argument("--warmup", type=int, default=None, help="warm-up steps before timing (default 5, quick 2)")
    ap.add_argument("--budget", type=float, default=None,
                    help="seconds of timed running per case and configuration (default 240, quick 8)")
    ap.add_argument("--no-compile", action="store_true", help="skip timing tumble's cold Numba compile")
    return ap


def _expand_cases(tokens: list[str], quick: bool) -> list[str]:
    if not tokens:
        tokens = list(SCENE_IDS)
    known = {c for s in SCENE_IDS for q in (False, True) for c in case_ids(s, q)}
    out: list[str] = []
    for tok in tokens:
        if tok in SCENE_IDS:
            ids = case_ids(tok, quick)
        elif tok in known or re.fullmatch(r"S7-\d+", tok):
            ids = [tok]
        else:
            raise ValueError(f"unknown scene {tok!r}; expected one of {' '.join(SCENE_IDS)} or a case id such as "
                             "S2-boxes")
        out += [c for c in ids if c not in out]
    return out


def cpu_model() -> str:
    """The CPU model name (from /proc/cpuinfo where there is one)."""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def _memory() -> str:
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal"):
                return f"{int(line.split()[1]) / 2**20:.1f} GiB"
    except OSError:
        pass
    return "?"


def _git_commit() -> str:
    try:
        head = subprocess.run(["git", "-C", str(REPO), "rev-parse", "--short", "HEAD"], capture_output=True,
                              text=True, timeout=10)
        dirty = subprocess.run(["git", "-C", str(REPO), "status", "--porcelain", "--", "src"], capture_output=True,
                               text=True, timeout=10)
    except (OSError, subprocess.SubprocessError):
        return "unknown"
    commit = head.stdout.strip() if head.returncode == 0 else "no commit"
    return commit + (" + uncommitted changes in src/" if dirty.stdout.strip() else "")


def _versions(adapters: list[Adapter]) -> dict[str, str]:
    from importlib.metadata import PackageNotFoundError, version

    out = {"python": platform.python_version()}
    for pkg in ("numpy", "numba", "scipy"):
        try:
            out[pkg] = version(pkg)
        except PackageNotFoundError:
            out[pkg] = "not installed"
    for a in adapters:
        if a.engine in out:
            continue
        ok, why = a.available()
        out[a.engine] = a.version() if ok else why
        if a.engine == "tumble":
            out["tumble"] += f" (git {_git_commit()})"
    return out


def _numba_threads() -> str:
    try:
        import numba

        return f"{numba.config.NUMBA_NUM_THREADS} ({numba.config.THREADING_LAYER} layer requested)"
    except ImportError:
        return "numba not installed"


def side_by_side_meta(quick: bool, repeats: int, started: float) -> dict[str, Any]:
    """The "meta" entry of a side-by-side benchmark's results (bench/joints.py, bench/robots.py): date, machine,
    Numba threads, repeats, the three engines' versions and the run's wall time since ``started``."""
    from bench.adapters import MujocoAdapter, PyBulletAdapter, TumbleAdapter
    from bench.adapters.tumble_adapter import import_tumble

    tb = import_tumble()
    return {
        "date": dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M UTC"), "quick": quick,
        "cpu": cpu_model(), "cores": os.cpu_count(), "platform": platform.platform(),
        "numba_threads": _numba_threads(), "repeats": 1 if quick else repeats,
        "versions": _versions([TumbleAdapter(), MujocoAdapter(), PyBulletAdapter()]),
        "tumble_version": getattr(tb, "__version__", "?"), "wall_s": time.perf_counter() - started}


def write_side_by_side(text: str, results: dict[str, Any], name: str, quick: bool) -> None:
    """NAME.md (``text``) and name.json (``results``) next to the benchmark, or in the temp folder for a quick
    run, written atomically; the text printed."""
    import tempfile

    folder = Path(tempfile.gettempdir()) if quick else Path(__file__).resolve().parent
    write_atomic(folder / f"{name.upper()}.md", text)
    write_json(folder / f"{name}.json", results)
    print(text)


def side_by_side_main(name: str, doc: str, measure: Any, render: Any, repeats: int,
                      argv: list[str] | None) -> int:
    """``python -m bench.NAME [--quick]`` of a side-by-side benchmark: ``measure(quick)`` → results, their
    meta (``side_by_side_meta``, with the load average at the start and the end), ``render(results)`` →
    NAME.md beside name.json (``write_side_by_side``)."""
    ap = argparse.ArgumentParser(prog=f"python -m bench.{name}", description=doc.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="1 s simulated, 1 timed run; written to a temp dir")
    args = ap.parse_args(argv)
    started = time.perf_counter()
    load_start = os.getloadavg()[0]
    results = measure(args.quick)
    results["meta"] = side_by_side_meta(args.quick, repeats, started)
    results["meta"]["load_average"] = {"start": load_start, "end": os.getloadavg()[0]}
    write_side_by_side(render(results), results, name, args.quick)
    return 0


def _fingerprint(scene: Scene) -> int:
    return hash((scene.bodies, scene.walls, scene.ground, scene.gravity, scene.dt, scene.steps))


def _progress(case_id: str, entries: dict[str, dict[str, Any]], wall: float) -> str:
    parts = []
    for label, e in entries.items():
        if e["status"] == "ok":
            sp = e.get("speed")
            if sp:
                text = f"{sp['steps_per_s']:.4g} steps/s" + (" (partial)" if e.get("partial") else "")
            else:
                text = "traced"
        elif e["status"] == "unavailable":
            text = e["reason"]
        elif e["status"] == "unsupported":
            text = "not yet"
        else:
            text = "ERROR " + e["reason"][:60]
        parts.append(f"{label} {text}")
    return f"[bench] {case_id:<10} " + " | ".join(parts) + f"  ({wall:.1f} s)"


def _output_paths(args: argparse.Namespace, all_scenes: bool) -> tuple[Path, Path]:
    if args.out is not None:
        return args.out / "RESULTS.md", args.out / "results.json"
    if args.quick:
        return BENCH_DIR / "RESULTS-quick.md", BENCH_DIR / "results-quick.json"
    if not all_scenes:
        return BENCH_DIR / "RESULTS-partial.md", BENCH_DIR / "results-partial.json"
    return BENCH_DIR / "RESULTS.md", BENCH_DIR / "results.json"


def main(argv: list[str] | None = None) -> int:
    """Run the benchmark; returns the process exit status (0 ok, 2 bad arguments)."""
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        cases = _expand_cases(args.scenes, args.quick)
        adapters = make_adapters(args.engines)
    except ValueError as exc:
        print(f"python -m bench: error: {exc}", file=sys.stderr)
        return 2
    if args.repeats < 1:
        parser.error("--repeats must be at least 1")
    options = RunOptions(
        repeats=args.repeats,
        warmup=args.warmup if args.warmup is not None else (2 if args.quick else 5),
        budget_s=args.budget if args.budget is not None else (8.0 if args.quick else 240.0),
    )
    started = time.perf_counter()
    command = "python -m bench" + (" " + " ".join(argv if argv is not None else sys.argv[1:])).rstrip()
    results: dict[str, Any] = {
        "meta": {
            "command": command.strip(),
            "date": dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M UTC"),
            "quick": args.quick,
            "machine": {"cpu": cpu_model(), "cores": os.cpu_count(), "memory": _memory(),
                        "os": f"{platform.system()} {platform.release()}"},
            "versions": _versions(adapters),
            "numba_threads": _numba_threads(),
            "timing": {"repeats": options.repeats, "warmup": options.warmup, "budget_s": options.budget_s},
        },
        "settings": {a.label: a.settings() for a in adapters},
        "cases": {},
    }
    tumble = next((a for a in adapters if a.engine == "tumble"), None)
    probed: set[str] = set()
    startup: list[dict[str, Any]] = []
    done: dict[int, str] = {}
    for case_id in cases:
        t0 = time.perf_counter()
        try:
            scene = make_case(case_id, quick=args.quick)
        except ValueError as exc:
            print(f"python -m bench: error: {exc}", file=sys.stderr)
            return 2
        fp = _fingerprint(scene)
        case: dict[str, Any] = {"scene": {"scene_id": scene.scene_id, **scene.summary()}, "engines": {}}
        if fp in done:
            case["same_as"] = done[fp]
            case["engines"] = results["cases"][done[fp]]["engines"]
        else:
            done[fp] = case_id
            for a in adapters:
                if a.applies(scene):
                    case["engines"][a.label] = run_case(scene, a, options)
        results["cases"][case_id] = case
        if (tumble is not None and not args.no_compile and case["engines"].get(tumble.label, {}).get("status") == "ok"
                and (scene.scene_id if not args.quick else "once") not in probed):
            from bench.compile_probe import measure

            probed.add(scene.scene_id if not args.quick else "once")
            startup.append(measure(case_id, quick=True))
        print(_progress(case_id, case["engines"], time.perf_counter() - t0), file=sys.stderr, flush=True)
    if startup:
        results["tumble_startup"] = startup
    if not args.scenes and tumble is not None:  # the collision stage alone (issue 3), tumble only
        from bench.collision import run_collision

        results["collision"] = run_collision(args.quick)
    results["meta"]["wall_s"] = time.perf_counter() - started
    md_path, json_path = _output_paths(args, all_scenes=not args.scenes)
    write_json(json_path, results)
    write_atomic(md_path, render_markdown(results))
    print(f"[bench] wrote {md_path} and {json_path} ({results['meta']['wall_s']:.0f} s)", file=sys.stderr)
    return 0


def standalone_header(title: str, module: str, meta: dict[str, Any], load_note: str) -> list[str]:
    """The first lines of a standalone bench page (``standalone_report``'s ``meta``): the title, the command, date and
    wall time, the machine, the load average at the start and end followed by ``load_note``, the versions."""
    return [f"# {title}", "",
            f"Generated by `python -m {module}` on {meta['date']} in {meta['wall_s']:.0f} s. Machine: "
            f"{meta['cpu']}, {meta['cores']} cores, {meta['platform']}; 1-minute load average {meta['load'][0]:.2f} "
            f"at the start, {meta['load'][1]:.2f} at the end ({load_note}).", "",
            "Versions: " + ", ".join(f"{k} {v}" for k, v in meta["versions"].items()) + ".", ""]


def standalone_report(out: Path, measure: Any, render: Any, packages: tuple[str, ...]) -> int:
    """The main of a standalone bench script (bench/ik.py, bench/queries.py): ``measure()`` → results, stamped
    with the date, CPU, cores, platform, the versions of Python, ``packages`` and tumble, the wall time and the
    1-minute load average at the start and end, then ``render(results)`` written to ``out`` atomically and echoed."""
    from importlib.metadata import PackageNotFoundError, version

    started = time.perf_counter()
    load_start = os.getloadavg()[0]
    results = measure()
    versions = {"python": platform.python_version()}
    for pkg in packages:
        try:
            versions[pkg] = version(pkg)
        except PackageNotFoundError:
            versions[pkg] = "not installed"
    versions["tumble"] = f"0.1.0 (git {_git_commit()})"
    results["meta"] = {"date": dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M UTC"), "cpu": cpu_model(),
                       "cores": os.cpu_count(), "platform": f"{platform.system()} {platform.release()}",
                       "versions": versions, "wall_s": time.perf_counter() - started,
                       "load": (load_start, os.getloadavg()[0])}
    text = render(results)
    write_atomic(out, text)
    sys.stdout.write(text)
    return 0
