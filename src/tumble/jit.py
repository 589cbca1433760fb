"""tumble's kernel decorator: ``numba.njit`` that compiles one specialization per argument *type*.

Numba types a constant argument (``f(x, 0)``, ``f(x, True)``) by its value, ``Literal[int](0)``, and
compiles a callee once per distinct combination of constant values it is called with: a helper called
as ``_slot(0, 1, …)``, ``_slot(1, 1, …)``, … was compiled 28 times, and such duplicates were 40 % of
the cold-cache compile time of a contact step. :func:`njit` here takes the same arguments as
``numba.njit`` and makes a call from another kernel type its constant arguments by their type (int64,
bool), so each kernel compiles once per signature of types. tumble's kernels never need a value as
part of a type (no ``numba.literally``); functions marked ``inline="always"`` are inlined as IR and are
unaffected.

Every module of tumble imports ``njit`` from here, not from numba. The widening wraps the dispatcher's
``get_call_template``, the hook numba's type inference calls for each call site (numba 0.59–0.68 here); a
numba that renamed it would only compile more, and tests/unit/test_jit.py would say so.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numba
from numba.core import types

__all__ = ["njit"]


def _type_constants_by_type(dispatcher: Any) -> Any:
    """Make calls to ``dispatcher`` from other kernels resolve with their literal argument types widened."""
    resolve = dispatcher.get_call_template  # the bound method numba's type inference calls per call site

    def get_call_template(args: tuple, kws: dict) -> Any:
        return resolve(tuple(types.unliteral(a) for a in args), {k: types.unliteral(v) for k, v in kws.items()})

    dispatcher.get_call_template = get_call_template
    return dispatcher


def njit(*args: Any, **options: Any) -> Any:
    """``numba.njit`` with the same arguments (bare ``@njit`` or ``@njit(cache=True, ...)``); see the module
    docstring for the one difference."""
    if len(args) == 1 and callable(args[0]) and not options:
        return _type_constants_by_type(numba.njit(args[0]))
    decorate = numba.njit(*args, **options)

    def wrap(fn: Callable) -> Any:
        return _type_constants_by_type(decorate(fn))

    return wrap
