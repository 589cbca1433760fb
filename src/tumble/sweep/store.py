"""A sweep's folder: one result file per variant, written atomically as each finishes, and the table.

``DIR/variants/KEY.json`` holds one variant's row (KEY: the hash of the scene, its parameters and the run,
``params.digest``); it is written last, after the variant's trajectory (``KEY.npz``) and final state
(``KEY.final.npz``), so its presence means the variant is done: a sweep started again skips it.
``DIR/results.parquet`` is assembled from the rows once every variant has one.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from ..user.trajectory import _atomic_write
from .params import Value
from .variant import finite_or_none

VARIANTS = "variants"
"""The folder of per-variant files inside a sweep's output folder."""

RESULTS = "results.parquet"
"""The table's file name inside a sweep's output folder."""

SUMMARY_TYPES = {"bodies": "int64", "simulated_s": "float64", "steps": "int64", "dt": "float64",
                 "wall_s": "float64", "steps_per_s": "float64", "energy_start_J": "float64",
                 "energy_end_J": "float64", "energy_change_J": "float64", "kinetic_energy_end_J": "float64",
                 "contacts_end": "int64", "max_contacts": "int64", "max_penetration_m": "float64",
                 "max_speed_end_m_s": "float64", "fixed_bodies": "int64"}
"""The summary figures of ``tumble run`` (``run_summary``) and their column types, in their order."""


MANIFEST = "sweep.json"
"""The file naming the sweep a folder holds (``claim_folder``)."""


def claim_folder(out: Path, keys: Sequence[str], what: Mapping[str, Any]) -> None:
    """Check that the folder ``out`` is empty of sweeps or holds this one (the same variant keys, ``keys``, in the
    same order: the same scene, values, run and tumble version), and record this sweep there (``sweep.json``:
    ``what``, a description, and the digest of ``keys``). A folder that holds another sweep's table or rows is
    refused: a second sweep would replace the first one's ``results.parquet``. A folder from before
    ``sweep.json`` is taken as this sweep's when every row in it is one of this sweep's variants.

    Raises:
        ValueError: ``out`` holds another sweep (naming the folder and what that sweep was).
    """
    from .params import digest

    identity = digest(list(keys))
    manifest = out / MANIFEST
    if manifest.exists():
        try:
            found = json.loads(manifest.read_text())
        except (OSError, ValueError):
            found = None
        if not isinstance(found, dict) or found.get("sweep") != identity:
            shown = _described(found)
            raise ValueError(f"out {str(out)!r} holds another sweep's results ({shown}); a different sweep would "
                             f"replace its {RESULTS}: give another --out/out folder (or delete that one)")
    else:
        rows = sorted((out / VARIANTS).glob("*.json")) if (out / VARIANTS).is_dir() else []
        known = set(keys)
        if any(path.stem not in known for path in rows) or ((out / RESULTS).exists() and not rows):
            raise ValueError(f"out {str(out)!r} holds another sweep's results ({RESULTS} or {VARIANTS}/ of other "
                             f"variants); a different sweep would replace them: give another --out/out folder (or "
                             f"delete that one)")
    text = json.dumps({"sweep": identity, **what}, indent=1) + "\n"
    _atomic_write(manifest, lambda fh: fh.write(text.encode()))


def _described(found: Any) -> str:
    if not isinstance(found, dict):
        return f"an unreadable {MANIFEST}"
    keys = found.get("keys")
    keys = ", ".join(map(str, keys)) if isinstance(keys, list) else "?"
    return f"{found.get('variants', '?')} variants of {found.get('scene', '?')} over {keys}"


def row_path(out: Path, key: str) -> Path:
    """The row file of the variant ``key``."""
    return out / VARIANTS / f"{key}.json"


def read_row(out: Path, key: str) -> dict[str, Any] | None:
    """The row a previous run wrote for ``key``, or None when there is none (or it cannot be read: the
    variant is then computed again)."""
    try:
        row = json.loads(row_path(out, key).read_text())
    except (OSError, ValueError):
        return None
    return row if isinstance(row, dict) and row.get("key") == key and row.get("status") in ("ok", "error") else None


def write_variant(out: Path, key: str, params: Mapping[str, Value], result: Mapping[str, Any]) -> dict[str, Any]:
    """Write one finished variant's files (trajectory, final state, then the row) and return its row."""
    row: dict[str, Any] = {"key": key, "params": dict(params)}
    row.update({name: finite_or_none(value) for name, value in result["row"].items()})
    folder = out / VARIANTS
    if result.get("trajectory") is not None:
        result["trajectory"].save(folder / f"{key}.npz")
        row["trajectory"] = f"{VARIANTS}/{key}.npz"
    if result.get("final") is not None:
        arrays = result["final"]
        _atomic_write(folder / f"{key}.final.npz", lambda fh: np.savez(fh, **arrays))
        row["final_state"] = f"{VARIANTS}/{key}.final.npz"
    text = json.dumps(row, indent=1) + "\n"
    _atomic_write(row_path(out, key), lambda fh: fh.write(text.encode()))
    return row


def write_table(path: Path, rows: Sequence[Mapping[str, Any]], keys: Sequence[str], figures: Sequence[str], *,
                trajectories: bool, final_states: bool) -> Path:
    """Write the results table (Parquet, atomically): one row per variant, in sweep order, with the columns
    ``variant``, one per varied key (``keys``), ``status``, ``error``, the summary figures, the user's
    ``figures``, ``trajectory``/``final_state`` (paths relative to the folder, "" for none) when kept, and
    ``key``. A figure is null in a row whose variant failed."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    columns: dict[str, Any] = {"variant": pa.array(range(len(rows)), pa.int64())}
    for name in keys:
        columns[name] = _param_column([row["params"].get(name) for row in rows])
    columns["status"] = pa.array([row["status"] for row in rows], pa.string())
    columns["error"] = pa.array([row.get("error", "") for row in rows], pa.string())
    for name, kind in SUMMARY_TYPES.items():
        columns[name] = pa.array([row.get(name) for row in rows], pa.from_numpy_dtype(np.dtype(kind)))
    for name in figures:
        columns[name] = pa.array([row.get(name) for row in rows], pa.float64())
    if trajectories:
        columns["trajectory"] = pa.array([row.get("trajectory", "") for row in rows], pa.string())
    if final_states:
        columns["final_state"] = pa.array([row.get("final_state", "") for row in rows], pa.string())
    columns["key"] = pa.array([row["key"] for row in rows], pa.string())
    table = pa.table(columns)
    return _atomic_write(path, lambda fh: pq.write_table(table, fh))


def _param_column(values: list[Any]) -> Any:
    """A parameter's column: booleans, integers, floats, strings or lists of floats, as the values allow;
    mixed kinds as their JSON text (null where a set lacks the key)."""
    import pyarrow as pa

    present = [v for v in values if v is not None]
    if all(isinstance(v, bool) for v in present):
        return pa.array(values, pa.bool_())
    if all(isinstance(v, int) and not isinstance(v, bool) for v in present):
        return pa.array(values, pa.int64())
    if all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in present):
        return pa.array([None if v is None else float(v) for v in values], pa.float64())
    if all(isinstance(v, str) for v in present):
        return pa.array(values, pa.string())
    if all(isinstance(v, list) and all(isinstance(c, (int, float)) and not isinstance(c, bool) for c in v)
           for v in present):
        return pa.array([None if v is None else [float(c) for c in v] for v in values], pa.list_(pa.float64()))
    return pa.array([None if v is None else json.dumps(v) for v in values], pa.string())
