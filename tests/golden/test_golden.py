"""The golden scenes (scenes.py) give bitwise the trajectories recorded in golden.npz.

This is a guard for restructurings, not a physics test: the physics is tested against closed forms
elsewhere. Bits are compared where the recording was made (same CPU model and numpy/numba versions: libm
and BLAS may round differently on another CPU, and a contact scene amplifies one ulp); elsewhere the
test is skipped and says so. Re-record with ``python tests/golden/make_golden.py`` only for a change that
reorders floating-point operations on purpose, and give the reason and the largest difference in the commit.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from make_golden import machine  # noqa: E402
from scenes import SCENES, record  # noqa: E402

GOLDEN = HERE / "golden.npz"


@pytest.fixture(scope="module")
def golden() -> dict[str, np.ndarray]:
    with np.load(GOLDEN, allow_pickle=False) as data:
        stored = {k: data[k] for k in data.files}
    if str(stored["machine"]) != machine():
        pytest.skip(f"golden.npz was recorded on {stored['machine']}, this is {machine()}: bits are "
                    f"compared only there")
    return stored


@pytest.mark.parametrize("name", list(SCENES))
def test_scene_repeats_its_recorded_bits(name: str, golden: dict[str, np.ndarray]) -> None:
    got = record(name)
    for key, value in got.items():
        want = golden[f"{name}/{key}"]
        assert value.shape == want.shape, f"{name}/{key}: shape {value.shape}, recorded {want.shape}"
        if not np.array_equal(value, want):
            scale = np.maximum(np.abs(want), 1e-300)
            worst = float(np.max(np.abs(value - want) / scale))
            pytest.fail(f"{name}/{key}: differs from the recording, largest relative difference {worst:.3g}")
