"""One BLAS thread while a block of small dense linear algebra runs (issue 53): ``one_blas_thread()``.

The event method (methods/event.py) solves a dense LCP and its least-norm polish (an SVD of the active rows,
``_least_norm_polish``) in every derivative; the matrices have tens to a few hundred rows. OpenBLAS splits
the LAPACK work of such a matrix over its threads, which meet at a barrier after every one of the hundreds
of BLAS calls inside one SVD. On a machine whose cores are busy with other work a thread waits at each
barrier for one that is not scheduled, and the SVD of a 192 × 192 block took 0.3–1.8 s instead of 2 ms:
three Box(0.2, 0.1, 0.1) joined by ball joints (collide=True) took 40 s for 12 steps of 1/60 s with one other
busy process on the 2-core development machine, 3.1 s with OPENBLAS_NUM_THREADS=1 (measured 2026-12). At
these sizes one thread is as fast as two on an idle machine.

The limit applies to every OpenBLAS this process has loaded (NumPy's and SciPy's wheels each bundle one;
Numba's ``np.linalg`` calls SciPy's LAPACK), found by name in ``/proc/self/maps`` and set through its
``*_set_num_threads`` entry point (what threadpoolctl does), and is restored after. Elsewhere (another OS, MKL,
Accelerate, a BLAS without those entry points) it does nothing. While it holds, BLAS calls from other Python
threads of the process run on one thread too.
"""

from __future__ import annotations

import contextlib
import ctypes
import functools
import os
from collections.abc import Iterator

_ENTRY_POINTS = (   # (get, set) of the OpenBLAS builds: SciPy's wheels, NumPy's (64-bit ints), plain OpenBLAS
    ("scipy_openblas_get_num_threads", "scipy_openblas_set_num_threads"),
    ("scipy_openblas_get_num_threads64_", "scipy_openblas_set_num_threads64_"),
    ("openblas_get_num_threads64_", "openblas_set_num_threads64_"),
    ("openblas_get_num_threads", "openblas_set_num_threads"),
)


@functools.cache
def _find_controls() -> tuple[tuple[ctypes._CFuncPtr, ctypes._CFuncPtr], ...]:
    """(get, set) of each OpenBLAS loaded in this process, looked up once; SciPy's LAPACK is loaded first, so
    that the one Numba calls is among them. Empty where ``/proc/self/maps`` cannot be read."""
    import scipy.linalg.cython_lapack  # noqa: F401  (loads SciPy's OpenBLAS, which Numba's np.linalg uses)

    try:
        with open("/proc/self/maps", encoding="utf-8", errors="replace") as maps:
            paths = sorted({line.split(maxsplit=5)[-1].strip() for line in maps
                            if "openblas" in os.path.basename(line.rstrip()).lower()})
    except OSError:
        return ()
    controls = []
    for path in paths:
        if not os.path.isfile(path):
            continue
        try:
            library = ctypes.CDLL(path)
        except OSError:
            continue
        for get_name, set_name in _ENTRY_POINTS:
            get, set_ = getattr(library, get_name, None), getattr(library, set_name, None)
            if get is not None and set_ is not None:
                get.restype, get.argtypes = ctypes.c_int, []
                set_.restype, set_.argtypes = None, [ctypes.c_int]
                controls.append((get, set_))
                break
    return tuple(controls)


@contextlib.contextmanager
def one_blas_thread() -> Iterator[None]:
    """Run the block with every loaded OpenBLAS on one thread, and put back each one's thread count after (module
    docstring). Nesting is harmless."""
    controls = _find_controls()
    before = [get() for get, _ in controls]
    for (_, set_), count in zip(controls, before, strict=True):
        if count != 1:
            set_(1)
    try:
        yield
    finally:
        for (_, set_), count in zip(controls, before, strict=True):
            if count != 1:
                set_(count)
