"""Record the golden trajectories (scenes.py) into golden.npz, next to this file.

Run from the repository root, before a change that must keep behaviour: ``python tests/golden/make_golden.py``.
The file also records the machine's CPU model and the numpy/numba versions: the bitwise comparison of
test_golden.py holds on that machine (another CPU may round library calls differently).
"""

from __future__ import annotations

import os
import platform
import sys
import tempfile
from pathlib import Path

import numba
import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from scenes import SCENES, record  # noqa: E402


def cpu_model() -> str:
    """The CPU's model name (Linux: /proc/cpuinfo, else platform.processor()) and the LLVM target Numba compiles
    for on it (``llvmlite.binding.get_host_cpu_name``). The name alone does not tell CPUs apart that round
    differently: "AMD EPYC" names several generations, and Numba's code for an AVX-512 one (znver4) contracts
    and vectorizes otherwise than for an older one (10 of the golden scenes differed, up to 1e-7 relative)."""
    import llvmlite.binding

    name = platform.processor() or "unknown"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                name = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return f"{name} ({llvmlite.binding.get_host_cpu_name()})"


def machine() -> str:
    return f"{cpu_model()} | numpy {np.__version__} | numba {numba.__version__}"


def main() -> int:
    arrays: dict[str, np.ndarray] = {"machine": np.array(machine())}
    for name in SCENES:
        for key, value in record(name).items():
            arrays[f"{name}/{key}"] = value
        print(name, "recorded")
    target = HERE / "golden.npz"
    fd, tmp = tempfile.mkstemp(dir=HERE, suffix=".npz")
    os.close(fd)
    np.savez_compressed(tmp, **arrays)
    os.chmod(tmp, 0o644)
    os.replace(tmp, target)
    print(f"wrote {target} ({len(SCENES)} scenes) on {machine()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
