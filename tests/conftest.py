"""Suite-wide settings.

Hypothesis draws its examples from a fixed seed per test (``derandomize=True``) and keeps no example
database, so every run of the suite, CI's included, checks the same cases: a red CI then always means a
change broke something, never that a new random draw found an old fault. To search new cases on purpose,
run with ``--hypothesis-profile=explore`` (fresh random draws each run).
"""

from hypothesis import settings

settings.register_profile("ci", derandomize=True, database=None)
settings.register_profile("explore", derandomize=False)
settings.load_profile("ci")

# Kernel call sites (jit.CallSite) check that their arguments have the types they were bound to, on the first
# calls and every 32nd (a check is a full typing, ~100 µs): a site that skipped Numba's dispatch with a changed
# type would read arrays with the wrong layout.
import tumble.jit  # noqa: E402

tumble.jit.CHECK_CALL_SITES = 32
