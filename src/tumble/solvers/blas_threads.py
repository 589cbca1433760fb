"""One BLAS thread while a block of small dense linear algebra runs (issue 53): ``one_blas_thread()``.

The event method (methods/event.py) solves a dense LCP and its least-norm polish (an SVD of the active rows,
``_least_norm_polish``) in every derivative; the matrices have tens to a few hundred rows. OpenBLAS splits
the LAPACK work of such a matrix over its threads, which meet at a barrier after every one of the hundreds
of BLAS calls inside one SVD. On a machine whose cores are busy with other work a thread waits at each
barrier for one that is not scheduled, and the SVD of a 192 × 192 block took 0.3–1.8 s instead of 2 ms:
three Box(0.2, 0.1, 0.1) joined by ball joints (collide=True) took 40 s for 12 steps of 1/60 s with one other
busy process on the 2-core development machine, 3.1 s with OPENBLAS_NUM_THREADS=1 (measured 2026-12). At
these sizes one thread is as fast as two on an idle machine.

The limit applies to every BLAS this process has loaded (NumPy's and SciPy's wheels each bundle an OpenBLAS;
Numba's ``np.linalg`` calls SciPy's LAPACK), found once by threadpoolctl (the library scikit-learn uses for this:
OpenBLAS, MKL and BLIS on every platform) and set through its per-library handles (~25 µs a use, where
``threadpool_limits`` scans the process each time, ~90 µs), and is restored after. While it holds, BLAS calls
from other Python threads of the process run on one thread too.
"""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Iterator
from typing import Any

from threadpoolctl import ThreadpoolController


@functools.cache
def _blas_libraries() -> tuple[Any, ...]:
    """threadpoolctl's controllers of the process's BLAS libraries, found once, after SciPy's LAPACK (the one
    Numba calls) is loaded."""
    import scipy.linalg.cython_lapack  # noqa: F401

    return tuple(ThreadpoolController().select(user_api="blas").lib_controllers)


@contextlib.contextmanager
def one_blas_thread() -> Iterator[None]:
    """Run the block with every loaded BLAS on one thread, and put back each one's thread count after (module
    docstring). Nesting is harmless."""
    libraries = _blas_libraries()
    before = [library.get_num_threads() for library in libraries]
    for library, count in zip(libraries, before, strict=True):
        if count != 1:
            library.set_num_threads(1)
    try:
        yield
    finally:
        for library, count in zip(libraries, before, strict=True):
            if count != 1:
                library.set_num_threads(count)
