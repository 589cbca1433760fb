"""Many runs of one scene: parameter sweeps, Monte Carlo samples and fitting to measured motion, on Dask.

``run_sweep(scene, variants, duration=..., dt=..., out=...)`` simulates every parameter set of ``variants``
(``grid``, ``sample`` or a list of dicts) as one Dask task, on a ``LocalCluster`` of worker processes or on a
running cluster (``scheduler=``), and writes one Parquet table, one row per variant; ``fit`` finds the
scene parameters that make the simulated motion match measured motion (``load_measured``). Dask and
pyarrow are the optional ``sweep`` extra (``pip install "tumble[sweep]"``); importing this module does not
import them. docs/sweeps.md describes keys, outputs, faults and resuming, clusters and the fit's error.
"""

from .fit import FitResult, fit, measure_error
from .measured import Measured, Track, load_measured
from .params import grid, sample
from .run import SweepResult, run_sweep

__all__ = ["FitResult", "Measured", "SweepResult", "Track", "fit", "grid", "load_measured", "measure_error",
           "run_sweep", "sample"]
