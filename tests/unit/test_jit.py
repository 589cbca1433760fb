"""tumble.jit.njit: one compiled specialization per argument type, not per constant value."""

from __future__ import annotations

import numba
import numpy as np
import pytest

from tumble.jit import njit, view


def _callee(x, k, flag):
    return x[k] if flag else -x[k]


def _compile_with(decorator):
    """A callee decorated by ``decorator`` and a caller that passes it three different constant pairs."""
    callee = decorator(_callee)

    @numba.njit
    def caller(x):
        return callee(x, 0, True) + callee(x, 1, False) + callee(x, 2, True)

    return callee, caller


def test_constants_share_one_specialization():
    callee, caller = _compile_with(njit)
    assert caller(np.array([1.0, 2.0, 4.0])) == 3.0
    assert len(callee.signatures) == 1
    assert callee.signatures[0][1] == numba.int64 and callee.signatures[0][2] == numba.boolean


def test_plain_numba_specializes_per_constant():
    """The control: numba.njit compiles the callee once per constant combination (what tumble.jit avoids)."""
    callee, caller = _compile_with(numba.njit)
    assert caller(np.array([1.0, 2.0, 4.0])) == 3.0
    assert len(callee.signatures) == 3


def test_decorator_forms():
    bare = njit(_callee)
    configured = njit(cache=False, fastmath=False)(_callee)
    x = np.array([1.0, 2.0])
    assert bare(x, 1, False) == -2.0 and configured(x, 0, True) == 1.0


def test_refcount_false_compiles_without_reference_counting():
    """``refcount=False`` reaches Numba: a kernel that only reads and writes its arguments runs, and one
    that allocates is refused at compile time (NRT off), instead of silently counting references."""
    import pytest

    @njit(refcount=False)
    def scale(a, s):
        for i in range(a.shape[0]):
            a[i] *= s

    @njit(refcount=False)
    def allocate(n):
        return np.zeros(n)

    a = np.array([1.0, 2.0])
    scale(a, 3.0)
    assert a.tolist() == [3.0, 6.0]
    assert scale.targetoptions.get("_nrt") is False
    with pytest.raises(numba.core.errors.NumbaError):
        allocate(3)


def _total(arrays, scale):
    first, second = arrays
    return scale * (first.sum() + second.sum())


def test_call_site_skips_dispatch_and_keeps_types_apart(monkeypatch):
    """A CallSite calls the compiled entry point after its first call, gives the kernel's own results, keeps a
    separate entry for other Python types (a float64 and an int64 tuple of arrays are both ``tuple``, but a
    float and an int scale are not), and in check mode refuses a call whose arrays changed type under the
    same Python types (which the entry point would misread)."""
    import tumble.jit as jit

    kernel = njit(_total)
    site = jit.CallSite(kernel)
    floats = (np.arange(3.0), np.ones(2))
    assert site(floats, 2.0) == kernel(floats, 2.0) == 2.0 * (3.0 + 2.0)
    entry, _ = site._entries[(tuple, float)]
    assert entry is not kernel              # bound to the compiled entry point, not the dispatcher
    assert site(floats, 3.0) == 15.0
    assert site(floats, 3) == 15.0           # an int scale is another key: dispatched once, then bound
    assert len(site._entries) == 2
    ints = (np.arange(3), np.ones(2, dtype=np.int64))
    monkeypatch.setattr(jit, "CHECK_CALL_SITES", 1)
    with pytest.raises(TypeError, match="was bound to"):
        site(ints, 1.0)
    monkeypatch.setattr(jit, "CHECK_CALL_SITES", 0)
    assert site(floats, 1.0) == 5.0


def test_fixed_call_site_binds_once_and_is_checked_like_any(monkeypatch):
    """A ``fixed=True`` site binds its first call's entry point and then calls it without a key (its caller
    promises the same Python types); in check mode a call whose types differ is refused, as at any site."""
    import tumble.jit as jit

    kernel = njit(_total)
    site = jit.CallSite(kernel, fixed=True)
    floats = (np.arange(3.0), np.ones(2))
    assert site._bound is None
    assert site(floats, 2.0) == 10.0
    entry, signature = site._bound
    assert entry is not kernel and signature == tuple(kernel.typeof_pyval(a) for a in (floats, 2.0))
    assert site(floats, 3.0) == 15.0 and site._bound[0] is entry
    monkeypatch.setattr(jit, "CHECK_CALL_SITES", 1)
    with pytest.raises(TypeError, match="was bound to"):
        site((np.arange(3), np.ones(2, dtype=np.int64)), 1.0)
    with pytest.raises(TypeError, match="was bound to"):
        site(floats, 1)                      # a key would have told an int from a float: the check does
    assert site(floats, 1.0) == 5.0


@njit   # returns views: reference counting kept
def _views(buf, ints):
    return view(buf, 5, (2, 3, 4)), view(buf, 7, 6), view(buf, 3, (4, 5)), view(ints, 2, (3, 2))


def test_view_is_the_reshaped_slice_and_writes_through():
    """``view`` equals Numba's slice-and-reshape (values, shape, C strides) for 1-, 2- and 3-D shapes of float
    and int buffers, and shares their memory: a write through it lands in the buffer."""
    buf, ints = np.arange(100.0), np.arange(20, dtype=np.int64)
    a, b, c, d = _views(buf, ints)
    for got, want in ((a, buf[5:29].reshape(2, 3, 4)), (b, buf[7:13]), (c, buf[3:23].reshape(4, 5)),
                      (d, ints[2:8].reshape(3, 2))):
        assert got.shape == want.shape and got.strides == want.strides and got.dtype == want.dtype
        np.testing.assert_array_equal(got, want)
        assert got.flags["C_CONTIGUOUS"]
    a[1, 2, 3] = -1.0
    d[2, 1] = -7
    assert buf[5 + 23] == -1.0 and ints[2 + 5] == -7


_DEBUG_SCENE = """
import json

import numpy as np
import tumble as tb

world = tb.World()
world.add_ground(friction=0.5)
box = world.add_body(tb.Box(0.2, 0.2, 0.2), mass=1.0, position=(0.0, 0.0, 0.099), velocity=(0.3, 0.0, 0.0))
ball = world.add_body(tb.Sphere(0.1), mass=1.0, position=(0.5, 0.0, 0.2))
for _ in range(3):
    world.step(0.01)
print(json.dumps(np.concatenate([box.position, box.orientation, box.velocity, ball.position, ball.velocity]).tolist()))
"""


def test_disable_jit_steps_a_contact_scene_like_the_compiled_kernels():
    """NUMBA_DISABLE_JIT=1 (for a debugger): tumble imports, and a small contact scene steps in pure Python
    (``njit`` returns the function, ``overload`` dispatches in Python, ``view`` slices) to the compiled result;
    only rounding differs (the free-motion kernels' fused multiply-adds)."""
    import json
    import os
    import subprocess
    import sys
    from pathlib import Path

    src = str(Path(__file__).resolve().parents[2] / "src")
    env = {**os.environ, "NUMBA_DISABLE_JIT": "1",
           "PYTHONPATH": os.pathsep.join([src, os.environ.get("PYTHONPATH", "")])}
    run = subprocess.run([sys.executable, "-c", _DEBUG_SCENE], env=env, capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr
    plain = np.array(json.loads(run.stdout.strip()))
    printed: list[str] = []
    exec(_DEBUG_SCENE, {"print": printed.append})
    compiled = np.array(json.loads(printed[0]))
    assert plain[2] < 0.1 and abs(plain[9] - 0.2) > 1e-3   # the box rests on the ground, the ball fell
    np.testing.assert_allclose(plain, compiled, rtol=0.0, atol=1e-9)


def test_openmp_threads_sleep_when_idle_unless_the_user_chose_a_wait_policy():
    """tumble sets OMP_WAIT_POLICY=PASSIVE (its parallel regions are short and far apart: a spinning libgomp worker
    only takes a core from the serial solver, bench/BUSY.md); a user's OMP_WAIT_POLICY or GOMP_SPINCOUNT wins."""
    from tumble.jit import choose_openmp_wait_policy

    env: dict[str, str] = {"NUMBA_THREADING_LAYER": "omp"}
    assert choose_openmp_wait_policy(env)
    assert env == {"NUMBA_THREADING_LAYER": "omp", "OMP_WAIT_POLICY": "PASSIVE"}
    for own in ({"OMP_WAIT_POLICY": "active"}, {"GOMP_SPINCOUNT": "1000"}):
        env = dict(own)
        assert not choose_openmp_wait_policy(env)
        assert env == own


_POOL_AT_IMPORT = """
import os
import tumble
maps = open("/proc/self/maps").read()
print(os.environ.get("OMP_WAIT_POLICY"), "libgomp" in maps)
"""


@pytest.mark.skipif(not __import__("sys").platform.startswith("linux"), reason="reads /proc/self/maps")
@pytest.mark.parametrize("own", [None, "active"])
def test_importing_tumble_sets_the_wait_policy_before_openmp_loads(own):
    """``import tumble`` sets the policy in the environment (a user's own kept) and loads no OpenMP runtime: libgomp
    reads the variable when Numba's pool starts at the first parallel call, so the setting takes effect."""
    import os
    import subprocess
    import sys
    from pathlib import Path

    src = str(Path(__file__).resolve().parents[2] / "src")
    env = {k: v for k, v in os.environ.items() if k not in ("OMP_WAIT_POLICY", "GOMP_SPINCOUNT")}
    env["PYTHONPATH"] = os.pathsep.join([src, os.environ.get("PYTHONPATH", "")])
    if own is not None:
        env["OMP_WAIT_POLICY"] = own
    run = subprocess.run([sys.executable, "-c", _POOL_AT_IMPORT], env=env, capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    assert run.stdout.split() == [own or "PASSIVE", "False"]
