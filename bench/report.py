"""Writing results: ``RESULTS.md`` (tables) and ``results.json`` (raw figures), atomically.

Each file is written to a temporary file in the destination directory and moved into place with
``os.replace``, so a reader never sees a half-written file and an interrupted run leaves the old one intact.
"""

from __future__ import annotations

import json
import math
import os
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from bench.metrics import SETTLED_SPEED, STAND_TOLERANCE, TOUCH_TOLERANCE

__all__ = ["write_atomic", "write_json", "render_markdown", "speed_key", "tumble_ratio"]



def _steps_s(probe: dict[str, Any]) -> float:
    """Seconds of the start-up probe's steps: the first two and those on to the first contact."""
    return probe["first_step_s"] + probe["second_step_s"] + probe.get("to_first_contact_s", 0.0)

def write_atomic(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` via a temporary file in the same directory and ``os.replace``."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _jsonable(obj: Any) -> Any:
    """NaN/inf → None, tuples → lists, NumPy scalars → Python numbers (strict JSON)."""
    if isinstance(obj, dict):
        return {str(k): _jsonable(v) for k, v in obj.items()}
    if isinstance(obj, list | tuple):
        return [_jsonable(v) for v in obj]
    if hasattr(obj, "item") and not isinstance(obj, str):
        obj = obj.item()
    if isinstance(obj, float) and not math.isfinite(obj):
        return None
    return obj


def write_json(path: Path, results: dict[str, Any]) -> None:
    """Write ``results`` as strict JSON (no NaN), atomically."""
    write_atomic(path, json.dumps(_jsonable(results), indent=1, allow_nan=False) + "\n")


# ---------------------------------------------------------------------------------------------------------
# formatting


def _num(x: Any, digits: int = 3) -> str:
    if x is None or (isinstance(x, float) and not math.isfinite(x)):
        return "—"
    if isinstance(x, bool):
        return "yes" if x else "NO"
    if isinstance(x, int):
        return f"{x:,}"
    if x == 0:
        return "0"
    mag = abs(x)
    if mag >= 1e6:
        return f"{x / 1e6:.{digits}g} M"
    if mag >= 1e3:
        return f"{float(f'{x:.{digits}g}'):,.0f}"
    return f"{x:.{digits}g}"


def _pct(x: Any) -> str:
    if x is None or (isinstance(x, float) and not math.isfinite(x)):
        return "—"
    return f"{100 * x:+.3g} %"


def _mm(x: Any) -> str:
    if x is None or (isinstance(x, float) and not math.isfinite(x)):
        return "—"
    return f"{1e3 * x:.3g}"


def speed_key(scene_id: str) -> str | None:
    """The speed figure tumble's ratio is taken on, or None for untimed scenes."""
    if scene_id == "S1":
        return "body_steps_per_s"
    if scene_id in ("S2", "S3", "S4", "S7"):
        return "steps_per_s"
    return None


def tumble_ratio(case: dict[str, Any], entry: dict[str, Any], tumble: str = "tumble/default") -> float | None:
    """The ``tumble`` configuration's speed ÷ this entry's speed on the case's speed figure (> 1: tumble is
    faster)."""
    key = speed_key(case["scene"]["scene_id"])
    mine = case["engines"].get(tumble, {})
    if key is None or mine.get("status") != "ok" or entry.get("status") != "ok":
        return None
    a, b = mine.get("speed", {}).get(key), entry.get("speed", {}).get(key)
    return a / b if a and b else None


Col = tuple[str, Callable[[dict[str, Any]], str]]


def _fig(key: str, fmt: Callable[[Any], str] = _num) -> Callable[[dict[str, Any]], str]:
    return lambda e: fmt(e.get("figures", {}).get(key))


def _spd(key: str) -> Callable[[dict[str, Any]], str]:
    return lambda e: _num(e.get("speed", {}).get(key))


def _runs(e: dict[str, Any]) -> str:
    runs = e.get("runs")
    if not runs:
        return "1 (traced)" if e.get("figures") else "—"
    text = str(len(runs))
    if e.get("partial"):
        text += f" partial: {runs[-1]['steps']} steps, t = {e['simulated_s']:.3g} s (budget)"
    return text


def _apex(k: int) -> Callable[[dict[str, Any]], str]:
    def cell(e: dict[str, Any]) -> str:
        f = e.get("figures", {})
        return f"{_num(f.get(f'apex{k}'), 4)} ({_pct(f.get(f'apex{k}_error'))})"

    return cell


_BUILD: Col = ("build s", lambda e: _num(e.get("build_s")))
_RUNS: Col = ("runs", _runs)

COLUMNS: dict[str, list[Col]] = {
    "S1": [("body-steps/s", _spd("body_steps_per_s")), ("ms/step", _spd("ms_per_step")), _RUNS,
           ("KE drift", _fig("ke_drift", _pct)), ("KE drift per s", _fig("ke_drift_per_s", _pct)),
           ("‖ΣL‖ drift", _fig("L_total_drift", _pct)), ("max body ‖ΔL‖/‖L‖", _fig("L_body_drift_max", _pct)),
           _BUILD],
    "S2": [("steps/s (mean)", _spd("steps_per_s")), ("steps/s (median step)", _spd("steps_per_s_median")), _RUNS,
           ("touching pairs", _fig("touching_pairs")), ("engine contacts", lambda e: _num(e.get("engine_contacts"))),
           ("max penetration mm", _fig("max_penetration", _mm)), ("penetrating pairs", _fig("penetrating_pairs")),
           ("KE end J", _fig("ke_end")), ("max speed end m/s", _fig("max_speed_end")), ("settled", _fig("settled")),
           ("escaped", _fig("escaped")), _BUILD],
    "S3": [("steps/s", _spd("steps_per_s")), _RUNS, ("top drift m", _fig("top_drift")),
           ("top height m", _fig("top_height", lambda x: _num(x, 5))),
           ("height error mm", _fig("top_height_error", _mm)),
           ("stands", _fig("stands")), _BUILD],
    "S4": [("steps/s", _spd("steps_per_s")), _RUNS, ("max displacement m", _fig("max_displacement")),
           ("stands", _fig("stands")), _BUILD],
    "S5": [(f"apex {k} m (error)", _apex(k)) for k in (1, 2, 3, 4)]
          + [("bounces found", _fig("bounces_found")), _BUILD],
    "S6": [("a m/s²", _fig("accel", lambda x: _num(x, 4))),
           ("a analytic", _fig("accel_analytic", lambda x: _num(x, 4))),
           ("error", _fig("accel_error", _pct)), ("creep m", _fig("creep")), ("lift m", _fig("lift")), _BUILD],
}
COLUMNS["S7"] = COLUMNS["S2"]

SCENE_FIGURE_NOTES = {
    "S1": "KE and angular momentum from the scene's masses and inertias and each engine's v, ω, q: "
          "ΣL about the origin; drift = (end − start)/start. tumble's target: ≥ 2× MuJoCo's body-steps/s.",
    "S2": "Computed from geometry at the end: touching = pairs with separating-axis gap "
          f"≤ {TOUCH_TOLERANCE * 1e3:g} mm "
          f"(body–body, body–ground, body–wall); penetration = exact depth (separating axes for boxes); "
          f"settled = max body speed < {SETTLED_SPEED} m/s; escaped = centre outside the pen or below the ground. "
          "'engine contacts' is each engine's own count (not comparable across engines).",
    "S3": f"Top box: horizontal drift and final centre height; stands = drift < {STAND_TOLERANCE} m and "
          f"|height error| < {STAND_TOLERANCE} m.",
    "S4": f"Max displacement of any box, end vs start; stands = max displacement < {STAND_TOLERANCE} m.",
    "S5": "Apex = rebound peak of the sphere's lowest point above the ground, from positions (parabola through the "
          "3 samples around each peak); analytic: each apex = e² × the previous, from a 1.0 m drop. "
          "Traced run (state read every step): no speed figure.",
    "S6": "Modelled as a horizontal ground with gravity tilted 20° (identical in every engine). a = least-squares "
          "½at² fit of the down-slope displacement for t ≥ 0.1 s; analytic a = g (sin θ − μ cos θ), 0 when it "
          "sticks; creep = final down-slope distance; lift = final height change. Traced run: no speed figure.",
}
SCENE_FIGURE_NOTES["S7"] = SCENE_FIGURE_NOTES["S2"]


def _status_cell(e: dict[str, Any]) -> str:
    status = e.get("status")
    if status == "ok":
        return "ok" + (" ⚠ " + "; ".join(e["warnings"]) if e.get("warnings") else "")
    if status == "unavailable":
        return e.get("reason") or "not installed"
    # the table shows the reason up to " — " (details such as the probe's exception stay in the JSON)
    return (e.get("reason") or status or "?").split(" — ")[0].replace("|", "/")


def _table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> list[str]:
    out = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    out += ["| " + " | ".join(str(c).replace("\n", " ") for c in row) + " |" for row in rows]
    return out


def _case_table(case: dict[str, Any]) -> list[str]:
    sid = case["scene"]["scene_id"]
    cols = COLUMNS[sid]
    timed = speed_key(sid) is not None
    mine = [k for k in case["engines"] if k.startswith("tumble/")]
    ratio_head = "tumble speed ÷ this" + (f" ({' / '.join(k.split('/')[1] for k in mine)})" if len(mine) > 1 else "")
    header = ["engine / config", "status"] + [c[0] for c in cols] + ([ratio_head] if timed else [])
    rows = []
    for label, e in case["engines"].items():
        row = [label, _status_cell(e)]
        row += [c[1](e) if e.get("status") == "ok" else "" for c in cols]
        if timed:
            ratios = [tumble_ratio(case, e, k) for k in mine]
            cell = " / ".join(f"{r:.2f}×" if r else "—" for r in ratios)
            row.append("—" if label.startswith("tumble") or not any(ratios) else cell)
        rows.append(row)
    return _table(header, rows)


def _scaling_table(cases: list[dict[str, Any]]) -> list[str]:
    """S7: ms per step against body count, and the exponent p of t ∝ nᵖ (least squares on logs)."""
    counts = [c["scene"]["bodies"] for c in cases]
    labels: list[str] = []
    for c in cases:
        labels += [k for k in c["engines"] if k not in labels]
    header = ["engine / config"] + [f"ms/step @ {n}" for n in counts] + ["exponent p (t ∝ nᵖ)"]
    rows = []
    for label in labels:
        ms, ns = [], []
        row = [label]
        for c, n in zip(cases, counts, strict=True):
            e = c["engines"].get(label, {})
            v = e.get("speed", {}).get("ms_per_step") if e.get("status") == "ok" else None
            if v:
                cell = _num(v)
            elif e.get("status") == "unsupported":
                cell = "not yet"
            else:
                cell = _status_cell(e) if e else "—"
            if v and e.get("partial"):
                cell += " (partial)"
            row.append(cell)
            if v:
                ms.append(v)
                ns.append(n)
        if len(ms) >= 2:
            lx = [math.log(n) for n in ns]
            ly = [math.log(v) for v in ms]
            mx, my = sum(lx) / len(lx), sum(ly) / len(ly)
            p = sum((a - mx) * (b - my) for a, b in zip(lx, ly, strict=True)) / sum((a - mx) ** 2 for a in lx)
            row.append(f"{p:.2f}")
        else:
            row.append("—")
        rows.append(row)
    return _table(header, rows)


def render_markdown(results: dict[str, Any]) -> str:
    """The whole RESULTS.md text from the results dict (the same dict that goes to results.json)."""
    meta = results["meta"]
    lines = [
        f"# tumble benchmark results{' (quick smoke run)' if meta['quick'] else ''}",
        "",
        f"Generated by `{meta['command']}` on {meta['date']}. Scenes: `../shared/BENCH.md`; harness: `bench/`.",
        "Every speed figure is measured side by side in this one run; figures are computed by the harness the "
        "same way for every engine (from positions, orientations and velocities, and the scene's masses and "
        "inertias), never from an engine's own report unless the column says so.",
        "",
        "## Machine and versions",
        "",
    ]
    m = meta["machine"]
    lines += _table(["item", "value"], [
        ["CPU", m["cpu"]], ["cores", str(m["cores"])], ["memory", m.get("memory", "?")], ["OS", m["os"]],
        ["Python", meta["versions"]["python"]],
        *[[k, v] for k, v in meta["versions"].items() if k != "python"],
        ["Numba threads", str(meta.get("numba_threads", "?"))],
    ])
    t = meta["timing"]
    lines += [
        "",
        f"Timing: `time.perf_counter` around the stepping loop only; {t['warmup']} warm-up steps; timed part run "
        f"{t['repeats']}× from a fresh scene, median reported; budget {t['budget_s']:g} s per case and "
        "configuration (a run that reaches it stops there and is marked partial; no further repeats). "
        "Scene build time is reported apart ('build s'). 'tumble speed ÷ this' > 1 means tumble is faster.",
        "",
        "## Engine configurations",
        "",
    ]
    settings = results.get("settings", {})
    for label, s in settings.items():
        lines.append(f"- **{label}**: " + "; ".join(f"{k}: {v}" for k, v in s.items()))
    comp = results.get("tumble_startup")
    if comp:
        lines += ["", "## tumble start-up (one-time cost, not in the speed figures)", ""]
        rows = []
        for c in comp:
            if "error" in c:
                rows.append([c["case"], c["error"], "", "", ""])
                continue
            cold, warm = c["cold"], c["warm"]
            rows.append([c["case"] + (" (quick size)" if c.get("quick_size") else ""),
                         f"{cold['import_s']:.2f} + {_steps_s(cold):.2f}",
                         f"{warm['import_s']:.2f} + {_steps_s(warm):.3f}",
                         str(cold.get("steps_to_first_contact", "—")), f"{c['compile_s']:.2f}",
                         f"{cold['build_s']:.3f}"])
        lines += _table(["case", "cold cache: import + steps s", "warm cache: import + steps s",
                         "steps (to the first with contacts)", "compile s (cold − warm)", "build s"], rows)
        lines += ["", "Cold = fresh interpreter with `NUMBA_CACHE_DIR` set to a new empty directory; warm = a second "
                  "fresh interpreter reusing that cache. Steps: the first two, then on to the first step with "
                  "contacts (when the contact kernels compile)."]
    cases = results["cases"]
    by_scene: dict[str, list[dict[str, Any]]] = {}
    for case in cases.values():
        by_scene.setdefault(case["scene"]["scene_id"], []).append(case)
    for sid in sorted(by_scene):
        lines += ["", f"## {sid}", "", SCENE_FIGURE_NOTES.get(sid, "")]
        notes: list[str] = []
        for case in by_scene[sid]:
            sc = case["scene"]
            lines += ["", f"### {sc['case']}: {sc['title']}", "",
                      f"dt = {sc['dt']:.6g} s, {sc['steps']} steps ({sc['duration_s']:.3g} s simulated), "
                      f"{sc['bodies']} bodies." + (f" Same scene as {case['same_as']}: figures reused."
                                                   if case.get("same_as") else ""), ""]
            lines += _case_table(case)
            for e in case["engines"].values():
                notes += [n for n in e.get("notes", []) if n not in notes]
        if sid == "S7" and len(by_scene[sid]) > 1:
            lines += ["", "### S7 scaling: time per step against body count", ""]
            lines += _scaling_table(by_scene[sid])
        if notes:
            lines += [""] + [f"- {n}" for n in notes]
    if results.get("collision"):
        from bench.collision import render_collision

        lines += [""] + render_collision(results["collision"])
    solvers = Path(__file__).with_name("SOLVERS.md")
    if solvers.exists():   # bench/solvers.py's table (its own run), so a rerun of the peers keeps it
        lines += ["", "## tumble's solvers (`python -m bench.solvers`)", ""]
        lines += solvers.read_text().splitlines()[2:]
    return "\n".join(lines) + "\n"
