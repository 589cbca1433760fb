"""Side-by-side benchmark harness for tumble (BENCH.md S1–S7), with PyBullet and MuJoCo as peers.

Layout (STYLE.md pattern 14):

- :mod:`bench.scenes`   — each BENCH.md scene written once as a neutral description (plain dataclasses);
- :mod:`bench.adapters` — one adapter per engine that builds a scene, steps it and returns state arrays;
- :mod:`bench.geometry` and :mod:`bench.metrics` — every accuracy figure computed by the harness, the same
  way for all engines, from positions, orientations and velocities;
- :mod:`bench.run`      — the command line (``python -m bench``), timing and reporting.

Benchmarks are not tests: nothing here asserts a time.
"""

from __future__ import annotations

__all__: list[str] = []
