"""``python -m bench.sweep [--quick]``: the sweep layer's throughput and overhead (tumble.sweep, Dask).

1. Throughput: a 64-variant sweep (8 ground frictions x 8 restitutions of the first box) of a small contact
   scene (two boxes, a sphere and a capsule dropped on the ground, sleeping off so every step costs the same),
   on a LocalCluster of 1 and of 2 worker processes (one thread each), the repeats alternated between them.
   The clusters are started and warmed (each worker has loaded the kernels from Numba's cache) outside the
   timing; each repeat is a fresh output folder, so nothing is skipped as already done. Variants per second
   and the 2-worker speed-up; the load average, since on a shared machine other processes take cores too.
2. Overhead: 8 variants of about 1 s each, run as a plain loop in this process (``run_variant``: build the
   world, simulate, the summary) and as a sweep on one worker (Dask scheduling, transfers, the per-variant
   files and the table), alternated ``REPEATS_OVERHEAD`` times; the overhead is (sweep - loop) / loop. The
   Dask layer's own share is the wall time outside ``simulate`` (which each variant times itself, ``wall_s``),
   sweep minus loop: it leaves out how fast one process or the other happened to step.

Every figure is the median of the repeats (``REPEATS`` for the throughput), wall time. This process and the
workers run Numba on one thread (``NUMBA_NUM_THREADS=1``, set before tumble is imported), so the loop and a
worker do the same work.
Prints a Markdown section for bench/RESULTS.md.
"""

from __future__ import annotations

import os

os.environ["NUMBA_NUM_THREADS"] = "1"    # before numba is imported: the plain loop runs as a worker does

import argparse  # noqa: E402
import contextlib  # noqa: E402
import platform  # noqa: E402
import statistics  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
from collections.abc import Iterator  # noqa: E402
from importlib.metadata import version  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Any  # noqa: E402

__all__ = ["SCENE", "main"]

SCENE = """format = 1

[world.contact]
sleep = false

[ground]
friction = 0.5

[[bodies]]
shape = { type = "box", size = [0.2, 0.2, 0.2] }
position = [0.0, 0.0, 0.3]

[[bodies]]
shape = { type = "box", size = [0.2, 0.2, 0.2] }
position = [0.05, 0.0, 0.6]

[[bodies]]
shape = { type = "sphere", radius = 0.1 }
position = [-0.05, 0.05, 0.9]

[[bodies]]
shape = { type = "capsule", radius = 0.05, length = 0.2 }
position = [0.0, -0.05, 1.2]
orientation = [0.9238795325112867, 0.3826834323650898, 0.0, 0.0]
"""
DT = 1 / 240
REPEATS = 3
REPEATS_OVERHEAD = 5


def _variants(n: int) -> list[dict[str, float]]:
    from tumble.sweep import grid

    side = round(n ** 0.5)
    return grid({"ground.friction": [0.2 + 0.1 * i for i in range(side)],
                 "bodies.0.restitution": [0.1 * i for i in range(n // side)]})


def _sweep(client, scene: Path, variants: list, duration: float, folder: Path) -> tuple[float, float, float]:
    """One sweep on ``client`` into a fresh folder: (wall time, the variants' simulate time summed, the CPU time
    the workers used) [s]."""
    from tumble.sweep import run_sweep

    out = Path(tempfile.mkdtemp(dir=folder))
    cpu = sum(client.run(_cpu_seconds).values())
    started = time.perf_counter()
    result = run_sweep(scene, variants, duration=duration, dt=DT, out=out, scheduler=client, precompile=False)
    seconds = time.perf_counter() - started
    cpu = sum(client.run(_cpu_seconds).values()) - cpu
    assert result.computed == len(variants) and result.errors == 0
    return seconds, sum(row["wall_s"] for row in result.rows), cpu


def _cpu_seconds() -> float:
    """This process's CPU time, user and system [s]."""
    times = os.times()
    return times.user + times.system


@contextlib.contextmanager
def _cluster(workers: int, scene: Path, folder: Path, duration: float) -> Iterator[Any]:
    """A client on a LocalCluster of ``workers``, warmed by a first sweep (each worker has loaded the kernels)."""
    from distributed import Client, LocalCluster

    from tumble.sweep.cluster import WORKER_ENV

    with LocalCluster(n_workers=workers, threads_per_worker=1, processes=True, dashboard_address="127.0.0.1:0",
                      env=dict(WORKER_ENV), silence_logs=40) as cluster, Client(cluster) as client:
        client.wait_for_workers(workers)
        client.run(_warm, str(scene), duration)        # on every worker (a sweep might use only one)
        _sweep(client, scene, _variants(64)[:2 * workers], duration, folder)
        yield client


def _warm(scene: str, duration: float) -> None:
    """Load the scene's kernels in this worker: one variant's run."""
    import tumble as tb

    tb.load_scene(scene).simulate(round(duration / DT) * DT, DT)


def _loop(scene: Path, variants: list, duration: float) -> tuple[float, float]:
    """The same variants as a plain loop here: (wall time, simulate time summed) [s]."""
    from tumble.sweep.params import resolve_key
    from tumble.sweep.variant import Source, Task, run_variant
    from tumble.user.scene import read_scene_text, scene_document

    text, shown = read_scene_text(scene)
    doc = scene_document(text, shown)
    source = Source(shown=shown, text=text, keys={k: resolve_key(doc, k) for k in variants[0]})
    steps = round(duration / DT)
    started = time.perf_counter()
    simulated = 0.0
    for params in variants:
        result = run_variant(source, Task(params=params, steps=steps, dt=DT, record_every=round(1 / (60 * DT))))
        assert result["row"]["status"] == "ok", result["row"]
        simulated += result["row"]["wall_s"]
    return time.perf_counter() - started, simulated


def main(argv: list[str] | None = None) -> int:
    """Run the measurements and print the Markdown section."""
    parser = argparse.ArgumentParser(prog="python -m bench.sweep", description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="16 short variants, one repeat (a smoke run)")
    parser.add_argument("--repeats", type=int, default=REPEATS, help=f"throughput repeats (default {REPEATS})")
    args = parser.parse_args(argv)
    n, short, long_, long_count = (64, 25.0, 55.0, 8) if not args.quick else (16, 0.5, 1.0, 2)
    repeats, repeats_overhead = (args.repeats, REPEATS_OVERHEAD) if not args.quick else (1, 1)
    import tumble as tb
    from bench.run import cpu_model

    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        scene = folder / "pile.toml"
        scene.write_text(SCENE)
        tb.load_scene(scene).precompile()                 # compile once; every process loads the cache
        tb.load_scene(scene).simulate(10 * DT, DT)
        variants = _variants(n)
        throughput: dict[int, list[float]] = {1: [], 2: []}
        cores: dict[int, list[float]] = {1: [], 2: []}
        load = [os.getloadavg()[0]]
        with _cluster(1, scene, folder, short) as one, _cluster(2, scene, folder, short) as two:
            for _ in range(repeats):       # alternated, so that the machine's drift hits both
                for w, client in ((1, one), (2, two)):
                    seconds, _, cpu = _sweep(client, scene, variants, short, folder)
                    throughput[w].append(seconds)
                    cores[w].append(cpu / seconds)
                    load.append(os.getloadavg()[0])
        long_variants = variants[:long_count]
        loop, swept = [], []
        with _cluster(1, scene, folder, long_) as client:   # alternated, so that the machine's drift hits both
            for _ in range(repeats_overhead):
                loop.append(_loop(scene, long_variants, long_))
                swept.append(_sweep(client, scene, long_variants, long_, folder))
    med = {w: statistics.median(t) for w, t in throughput.items()}
    rate = {w: n / med[w] for w in med}
    per_loop = statistics.median(t for t, _ in loop) / long_count
    per_dask = statistics.median(t for t, _, _ in swept) / long_count
    layer = statistics.median((t - sim) - (t0 - sim0) for (t, sim, _), (t0, sim0) in zip(swept, loop, strict=True))
    layer /= long_count
    lines = [
        f"## Sweeps on Dask (`python -m bench.sweep{' --quick' if args.quick else ''}`, "
        f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())})",
        "",
        f"{cpu_model()}, {os.cpu_count()} cores, Python {platform.python_version()}, tumble {tb.__version__}, "
        f"dask {version('dask')}, distributed {version('distributed')}, numba {version('numba')}, "
        f"numpy {version('numpy')}; Numba on one thread per process. Medians of {repeats} repeats (wall time); "
        f"clusters started and warmed outside the timing. The machine's 1-minute load average during the "
        f"throughput runs: {min(load):.1f} to {max(load):.1f} (2 would be these 2 workers alone; more means other "
        f"processes shared the cores).",
        "",
        f"Throughput: {n} variants of the small contact scene in bench/sweep.py (4 bodies, {short:g} s at "
        f"dt = 1/240 s, {round(short / DT)} steps each):",
        "",
        "| workers | sweep [s] (each repeat) | variants/s | speed-up | cores the workers got (CPU s / wall s) |",
        "|---|---|---|---|---|",
    ]
    for w in (1, 2):
        lines.append(f"| {w} | {med[w]:.2f} ({', '.join(f'{t:.2f}' for t in throughput[w])}) | {rate[w]:.2f} | "
                     f"{rate[w] / rate[1]:.2f}x | {statistics.median(cores[w]):.2f} |")
    lines += [
        "",
        f"Overhead: {long_count} variants of {long_:g} s simulated ({round(long_ / DT)} steps) each, one worker "
        f"against a plain loop in one process, {repeats_overhead} repeats alternated:",
        "",
        "| | per variant [s] (each repeat, all variants) | overhead |",
        "|---|---|---|",
        f"| plain loop (`run_variant`) | {per_loop:.3f} ({', '.join(f'{t:.2f}' for t, _ in loop)}) | |",
        f"| sweep, 1 worker | {per_dask:.3f} ({', '.join(f'{t:.2f}' for t, _, _ in swept)}) | "
        f"{100 * (per_dask - per_loop) / per_loop:+.1f} % |",
        f"| the Dask layer alone (wall time outside `simulate`, sweep minus loop) | {layer:.4f} | "
        f"{100 * layer / per_loop:+.1f} % |",
    ]
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
