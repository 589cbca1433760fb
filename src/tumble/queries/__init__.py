"""Geometric queries on a world's current pose: ray casts (``ray.py``) and signed distances (``distance.py``).
They read the Model and State and change nothing; docs/queries.md gives the formulas."""
