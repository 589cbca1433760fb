"""tumble's kernel decorator: ``numba.njit`` that compiles one specialization per argument *type*.

Numba types a constant argument (``f(x, 0)``, ``f(x, True)``) by its value, ``Literal[int](0)``, and
compiles a callee once per distinct combination of constant values it is called with: a helper called
as ``_slot(0, 1, …)``, ``_slot(1, 1, …)``, … was compiled 28 times, and such duplicates were 40 % of
the cold-cache compile time of a contact step. :func:`njit` here takes the same arguments as
``numba.njit`` and makes a call from another kernel type its constant arguments by their type (int64,
bool), so each kernel compiles once per signature of types. tumble's kernels never need a value as
part of a type (no ``numba.literally``); functions marked ``inline="always"`` are inlined as IR and are
unaffected.

**No reference counting** (``refcount=False``): Numba counts references to every array a kernel receives,
unpacks from a tuple or passes on, by atomic increments and decrements (NRT incref/decref) at each call
of a non-inlined kernel; in the stepping kernels, which pass 20-odd arrays to each helper once per joint,
contact or sub-step, those atomics were 22 % of a 10-link jointed step (perf: two instructions, ``lock
incq``/``lock decq``). A kernel that allocates nothing (no ``np.empty``, no copy: ``a[:] = b`` between
arrays may copy, write the loop) and keeps no array past its call needs no counting: ``refcount=False``
compiles it without (Numba's ``_nrt=False``; compiling one that allocates fails loudly: "NRT required").
The option also reaches what such a kernel calls, through an ``@overload`` or a kernel that does not set it (Numba
inherits the flag): ``timestep.contact_step``, which calls the velocity solvers that way (APGD, CG and Lemke
allocate), keeps counting. ``refcount=True`` set explicitly makes a kernel count whatever calls it: the dense
solvers of robots/contact_solve.py allocate and set it, and the link contact stage (robots/step.py), which does
not count, calls them; the arrays it hands them are borrowed, their increments and decrements balanced.

**Fast-math flags are never inherited** (``fastmath`` is False unless a kernel asks): Numba lets a function
that does not set ``fastmath`` take its first caller's flags, and a compiled function serves every later caller
with the same argument types; a helper first compiled from a kernel with fused multiply-adds would then round
differently in every other kernel, depending on which compiled first.

**Helpers are inlined by LLVM, not as IR** (``forceinline=True, refcount=False``): LLVM's ``alwaysinline``
puts a helper's machine code into each caller after the helper has been compiled once, where Numba's
``inline="always"`` copies and re-types its IR at every call site (a third of a contact step's cold compile).
Without reference counting the inlined helper costs nothing at run time. ``inline="always"`` is kept only in
``math3d`` and ``integration/integrate``, whose helpers take the fused multiply-adds of the free-motion kernels
they are inlined into (a helper compiled apart keeps its own flags), and for ``narrowphase._thread_scratch``,
which returns views (a function without reference counting must not).

**Views of packed buffers** (``view``): a kernel that takes a few packed buffers instead of many arrays (one
array argument costs its unboxing) makes its views inside; Numba's ``reshape`` calls a C helper for each
(~17 ns), ``view`` builds the C-contiguous array in a few instructions (robots/tree.py, "packed storage").

**Idle OpenMP threads sleep** (``OMP_WAIT_POLICY=PASSIVE``, set in ``os.environ`` at import when the user set
neither it nor ``GOMP_SPINCOUNT``): Numba's ``omp`` threading layer runs on GNU libgomp, whose idle threads spin
~300k iterations (a few ms) after every parallel region before they sleep. tumble's parallel regions are short and
far apart (the contact solver between them is serial), so on 2 cores the worker spun through most of each step;
harmless on an idle machine, but with an outside process on one core, the spinning worker, the outside process and
the serial solver share two cores. bench/BUSY.md (a machine loaded by other work as well): with one core taken,
libgomp's default ran S4 at 0.28x and S2-boxes at 0.60x the one-thread speed; passive, 1.05x and 1.08x. The price
is a sleeping worker's wake-up, ~7 us more per parallel region (in S2 and S4 one a step, the narrowphase's: < 2 %
of an idle S4 step). Numba's ``workqueue`` layer, which never spins, costs ~55 us a region. libgomp
reads the variable once, when Numba's pool starts (the first parallel call), so it must be set before that; a
process that started the pool, or loaded libgomp otherwise, before importing tumble keeps its policy (child
processes still inherit the variable).

Every module of tumble imports ``njit`` from here, not from numba. The widening wraps the dispatcher's
``get_call_template``, the hook numba's type inference calls for each call site (numba 0.59–0.68 here); a
numba that renamed it would only compile more, and tests/unit/test_jit.py would say so.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, MutableMapping
from typing import Any

import numba
from numba.core import cgutils, types
from numba.core.imputils import impl_ret_borrowed
from numba.extending import intrinsic
from numba.extending import overload as _numba_overload
from numba.np.arrayobj import make_array, populate_array

__all__ = ["FMA", "OPENMP_WAIT_POLICY", "CallSite", "njit", "overload", "view"]

OPENMP_WAIT_POLICY = "PASSIVE"
"""What tumble sets ``OMP_WAIT_POLICY`` to at import unless the user set ``OMP_WAIT_POLICY`` or ``GOMP_SPINCOUNT``
(see the module docstring, and bench/BUSY.md for the figures)."""


def choose_openmp_wait_policy(environ: MutableMapping[str, str] = os.environ) -> bool:
    """Set ``environ["OMP_WAIT_POLICY"]`` to ``OPENMP_WAIT_POLICY`` unless ``environ`` has ``OMP_WAIT_POLICY`` or
    ``GOMP_SPINCOUNT`` (a user's own choice wins); True when it was set."""
    if "OMP_WAIT_POLICY" in environ or "GOMP_SPINCOUNT" in environ:
        return False
    environ["OMP_WAIT_POLICY"] = OPENMP_WAIT_POLICY
    return True


choose_openmp_wait_policy()   # before any kernel runs: libgomp reads it when Numba's thread pool starts

FMA = {"contract"}
"""The fast-math flags a kernel may ask for (``fastmath=FMA``): only contraction of a * b + c into fused
multiply-adds, which rounds once instead of twice (no reassociation, no finite-math assumptions). The free-body
step kernels (integration/integrate.py: the five sub-rotations' dependency chain a third shorter, 143 → 94 ns a
body) and the robots' dynamics (robots/dynamics.py: the ABA's block products) use it."""


DISABLE_JIT = bool(numba.config.DISABLE_JIT)
"""``NUMBA_DISABLE_JIT=1`` in the environment: every kernel runs as the Python function it is written as (slow:
for stepping through a kernel in a debugger, a few steps of a small scene). ``njit`` then returns the function,
``view`` slices and reshapes, ``overload`` dispatches in Python, and a ``CallSite`` calls its kernel."""


def _type_constants_by_type(dispatcher: Any) -> Any:
    """Make calls to ``dispatcher`` from other kernels resolve with their literal argument types widened."""
    resolve = dispatcher.get_call_template  # the bound method numba's type inference calls per call site

    def get_call_template(args: tuple, kws: dict) -> Any:
        return resolve(tuple(types.unliteral(a) for a in args), {k: types.unliteral(v) for k, v in kws.items()})

    dispatcher.get_call_template = get_call_template
    return dispatcher


def njit(*args: Any, **options: Any) -> Any:
    """``numba.njit`` with the same arguments (bare ``@njit`` or ``@njit(cache=True, ...)``), plus
    ``refcount=False`` for a kernel that allocates nothing, and ``fastmath`` False unless given; see the module
    docstring for these differences."""
    if len(args) == 1 and callable(args[0]) and not options:
        return njit()(args[0])
    refcount = options.pop("refcount", None)
    if refcount is not None:   # unset: as its caller (Numba inherits the flag from the kernel that compiles it)
        options["_nrt"] = bool(refcount)
    options.setdefault("fastmath", False)
    decorate = numba.njit(*args, **options)
    if DISABLE_JIT:   # NUMBA_DISABLE_JIT=1: the plain Python functions, for a debugger
        return decorate

    def wrap(fn: Callable) -> Any:
        return _type_constants_by_type(decorate(fn))

    return wrap


def overload(stub: Callable, **options: Any) -> Callable[[Callable], Any]:
    """``numba.extending.overload(stub)``: the decorated generator gives ``stub``'s implementation for the Numba
    types of its arguments. With NUMBA_DISABLE_JIT=1 the stub, which only raises, is replaced in its module by a
    Python dispatcher that asks the generator for the implementation for the arguments' ``numba.typeof`` and
    calls it (every module of tumble imports overload from here, so its kernels can be stepped through)."""
    if not DISABLE_JIT:
        return _numba_overload(stub, **options)

    def register(generator: Callable) -> Callable:
        impls: dict[tuple, Callable] = {}

        def dispatch(*args: Any) -> Any:
            key = tuple(numba.typeof(a) for a in args)
            impl = impls.get(key)
            if impl is None:
                impl = impls[key] = generator(*key)
            return impl(*args)

        dispatch.__name__, dispatch.__qualname__, dispatch.__doc__ = stub.__name__, stub.__qualname__, stub.__doc__
        sys.modules[stub.__module__].__dict__[stub.__name__] = dispatch
        return generator

    return register


CHECK_CALL_SITES = 0
"""Every this many calls (0: never, 1: every call) a ``CallSite`` types its arguments as Numba's dispatcher would
and refuses (TypeError) a call whose types differ from those the site was bound to. A check costs a full
typing (~100 µs for a step's containers): the test suite checks every 32nd call and the first calls of each
site (tests/conftest.py)."""


class CallSite:
    """A call site of a kernel called once or a few times per step, whose arguments' types are fixed by how the
    caller builds them: the containers of the field registry (model/fields.py: every field has one dtype and
    its live views are C-contiguous), scratch arrays allocated once, and scalars of fixed kinds.

    Numba's dispatcher types every argument on every call to pick the compiled specialization: about 100 ns
    per array inside a namedtuple (a typed container goes through Numba's Python-level ``typeof``), so the
    step's containers cost several µs per call, 10 % of a 20-box stack's step. A call site remembers, for the
    Python types of the arguments (which tell a namedtuple class from another, None from a tuple, an enum from
    an int), the compiled entry point the dispatcher chose, and later calls it directly: the arguments are only
    unboxed. What the Python types do not show (the dtype and layout of an array, the types inside a plain
    tuple) must not change between calls at one site, or the entry point would read the arrays with the wrong
    layout: ``CHECK_CALL_SITES`` verifies it (a check costs a full typing: for tests, not for steps). A
    first call whose types match no compiled signature exactly (Numba converted an argument) leaves the site
    on the ordinary dispatch for those types.

    ``fixed=True`` is for a site whose caller gives every argument the same Python type at every call (a step's
    stage, whose containers it builds the same way each time): the site binds at its first call and then calls
    that entry point without looking at the arguments at all (the tuple of their types costs ~270 ns for a dozen
    arguments, three times the unboxing of a dozen arrays). ``CHECK_CALL_SITES`` checks such a site the same way.
    """

    __slots__ = ("kernel", "_entries", "_calls", "_fixed", "_bound")

    def __init__(self, kernel: Any, fixed: bool = False) -> None:
        self.kernel = kernel
        self._entries: dict[tuple, tuple[Any, tuple]] = {}
        self._calls = 0
        self._fixed = fixed
        self._bound: tuple[Any, tuple] | None = None

    def __call__(self, *args: Any) -> Any:
        if DISABLE_JIT:
            return self.kernel(*args)
        bound = self._bound
        if bound is not None:   # a fixed site, bound
            if CHECK_CALL_SITES:
                self._check(args, bound[1])
            return bound[0](*args)
        key = tuple(map(type, args))
        bound = self._entries.get(key)
        if bound is None:
            result = self.kernel(*args)
            signature = self._signature(args)
            compiled = self.kernel.overloads.get(signature)
            self._entries[key] = (self.kernel if compiled is None else compiled.entry_point, signature)
            if self._fixed:
                self._bound = self._entries[key]
            return result
        entry, signature = bound
        if CHECK_CALL_SITES:
            self._check(args, signature)
        return entry(*args)

    def _check(self, args: tuple, signature: tuple) -> None:
        """TypeError when ``CHECK_CALL_SITES`` asks for a check at this call and ``args`` type otherwise than the
        ``signature`` the site was bound to."""
        self._calls += 1
        if (self._calls < 4 or self._calls % CHECK_CALL_SITES == 0) and self._signature(args) != signature:
            raise TypeError(f"CallSite of {self.kernel.py_func.__qualname__} was bound to {signature}, "
                            f"called with {self._signature(args)}")

    def _signature(self, args: tuple) -> tuple:
        return tuple(self.kernel.typeof_pyval(a) for a in args)


@intrinsic
def view(typingctx: Any, buf: Any, start: Any, shape: Any) -> Any:
    """``buf[start:start + prod(shape)].reshape(shape)`` inside a kernel: a C-contiguous view of a 1-D
    C-contiguous buffer, built in place. Numba's ``reshape`` calls a C helper to check the strides (~17 ns, so
    the ~45 views of a robot's packed buffers cost 0.8 µs per step, half a 1-link step); the view here is a
    few instructions. ``shape`` is an integer or a tuple of integers; the caller keeps ``start`` and ``shape``
    inside the buffer (nothing checks it: the packed layouts are fixed by their ``*_size`` functions)."""
    if not (isinstance(buf, types.Array) and buf.ndim == 1 and buf.layout == "C"):
        return None
    if isinstance(shape, types.Integer):
        ndim, item = 1, shape
    elif isinstance(shape, types.UniTuple) and isinstance(shape.dtype, types.Integer):
        ndim, item = shape.count, shape.dtype
    else:
        return None
    result = buf.copy(ndim=ndim, layout="C")
    sig = result(buf, start, shape)

    def codegen(context: Any, builder: Any, sig: Any, args: Any) -> Any:
        source = make_array(sig.args[0])(context, builder, args[0])
        offset = context.cast(builder, args[1], sig.args[1], types.intp)
        sizes = [args[2]] if ndim == 1 else cgutils.unpack_tuple(builder, args[2], ndim)
        sizes = [context.cast(builder, s, item, types.intp) for s in sizes]
        strides = [source.itemsize] * ndim
        for k in range(ndim - 2, -1, -1):
            strides[k] = builder.mul(strides[k + 1], sizes[k + 1])
        out = make_array(result)(context, builder)
        populate_array(out, data=builder.gep(source.data, [offset]), shape=sizes, strides=strides,
                       itemsize=source.itemsize, meminfo=source.meminfo)
        return impl_ret_borrowed(context, builder, result, out._getvalue())

    return sig, codegen


if DISABLE_JIT:
    def view(buf: Any, start: Any, shape: Any) -> Any:  # noqa: F811 (the intrinsic's Python stand-in)
        """``buf[start:start + prod(shape)].reshape(shape)``: ``view`` as plain Python (NUMBA_DISABLE_JIT=1)."""
        size = 1
        for n in (shape,) if not isinstance(shape, tuple) else shape:
            size *= int(n)
        return buf[int(start):int(start) + size].reshape(shape)
