"""Structural rules of tumble's source, checked on its syntax trees.

Each rule says where one thing lives (the World's internals, the quaternion → matrix formula, the solver
status codes, the contact record, the slot index) or bounds one shape (a kernel's parameter list), so that a
second copy or a shortcut cannot creep in unnoticed. The source is read and parsed, never imported: the
whole file runs in well under a second and needs neither Numba nor a compile.

Every checker takes source text and returns what it found, so that each is also run on a small snippet with
a violation (it must find it) and one without (it must find nothing): a checker that silently matches
nothing would otherwise pass forever.
"""

import ast
import functools
import re
import textwrap
from collections.abc import Iterable, Iterator
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src" / "tumble"

# Every module's text, read once: the tests share it, and each checker parses a text only once (_parse).
SOURCES: dict[str, str] = {
    path.relative_to(SRC).as_posix(): path.read_text(encoding="utf-8") for path in sorted(SRC.rglob("*.py"))
}


@functools.cache
def _parse(source: str) -> ast.Module:
    return ast.parse(source)


@functools.cache
def _nodes(source: str) -> tuple[tuple[ast.AST, str], ...]:
    """Every node of ``source``'s tree with its scope (_scoped_nodes), listed once: walking a megabyte of
    syntax tree is most of this file's time, and every checker reads the same list."""
    return tuple(_scoped_nodes(_parse(source)))


def _scoped_nodes(tree: ast.AST) -> Iterator[tuple[ast.AST, str]]:
    """Every node under ``tree`` with the dotted name of the innermost function or class around it (``""`` at
    module level), so that a finding can say where it is, not only on which line."""

    def visit(node: ast.AST, scope: str) -> Iterator[tuple[ast.AST, str]]:
        for child in ast.iter_child_nodes(node):
            yield child, scope
            if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                yield from visit(child, f"{scope}.{child.name}" if scope else child.name)
            else:
                yield from visit(child, scope)

    yield from visit(tree, "")


def _snippet(text: str) -> str:
    return textwrap.dedent(text).strip() + "\n"


def test_the_source_is_found():
    """The rules below pass vacuously on an empty tree: make sure they see tumble's modules."""
    assert len(SOURCES) > 50 and "world.py" in SOURCES and "math3d.py" in SOURCES


# ---------------------------------------------------------------------------------------------------------------
# 1. Only the API layer reaches into the World.
# ---------------------------------------------------------------------------------------------------------------

# The World and its handles (Body, Joint, Robot, Link): the one place that knows the World's private layout. Every other
# module takes what it needs through the World's public attributes, or is handed the arrays by the API layer,
# so that the World's internals can change without a hunt through the engine.
# robots/build.py is ``World.add_robot``'s body, kept apart from world.py.
API_LAYER = {"world.py", "body.py", "joints.py", "robots/robot.py", "robots/build.py"}

# Expressions taken to denote a World. ``w`` is too generic a name to tell (it is an angular velocity in most
# kernels), so only these names, and attribute chains ending in them (``self._world``, ``body.world``).
_WORLD_NAMES = {"world", "_world", "self_world"}
_WORLD_ATTRIBUTES = {"world", "_world"}
_ATTRIBUTE_BUILTINS = {"getattr", "setattr", "hasattr", "delattr"}


def _denotes_world(node: ast.AST) -> bool:
    return (isinstance(node, ast.Name) and node.id in _WORLD_NAMES) or (
        isinstance(node, ast.Attribute) and node.attr in _WORLD_ATTRIBUTES)


def _is_private(name: str) -> bool:
    """``_model`` and ``__cache`` are private; ``__class__`` and the other dunders are Python's, not the
    World's."""
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def _world_private_uses(source: str) -> list[int]:
    """Lines where ``source`` takes a private attribute of a World: ``world._model``, ``self._world._state``,
    and the same spelled ``getattr(world, "_model")`` (which would otherwise be the way around the rule)."""
    lines = []
    for node, _ in _nodes(source):
        if isinstance(node, ast.Attribute) and _is_private(node.attr) and _denotes_world(node.value):
            lines.append(node.lineno)
        elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in _ATTRIBUTE_BUILTINS
              and len(node.args) >= 2 and _denotes_world(node.args[0])
              and isinstance(node.args[1], ast.Constant) and isinstance(node.args[1].value, str)
              and _is_private(node.args[1].value)):
            lines.append(node.lineno)
    return sorted(lines)


def test_no_module_outside_the_api_layer_touches_world_private_attributes():
    """Outside world.py, body.py and joints.py no module reads or writes a private attribute of a World
    (``world._model``, ``self._world._state``, ``body.world._x``): the World's private layout is the API
    layer's to change, and a module that reached into it would break silently when it does."""
    offenders = [f"{path}:{line}" for path, text in SOURCES.items() if path not in API_LAYER
                 for line in _world_private_uses(text)]
    assert not offenders, "private World attributes used outside the API layer:\n" + "\n".join(offenders)


def test_world_private_checker_finds_a_violation():
    """The checker of the rule above finds each spelling of a violation, and passes clean code: public
    attributes, dunders, other objects' private attributes and a World's private attributes by other names."""
    bad = _snippet("""
        def f(world, body, self):
            a = world._model
            b = self._world._state
            body.world._x = 1
            c = getattr(self_world, "_settings")
            return a, b, c
    """)
    assert _world_private_uses(bad) == [2, 3, 4, 5]
    clean = _snippet("""
        def f(world, body, self, w):
            a = world.model, self._world.settings, body.world.bodies
            b = world.__class__, self._model, body._index, w._model
            c = getattr(world, "model")
            return a, b, c
    """)
    assert _world_private_uses(clean) == []


# ---------------------------------------------------------------------------------------------------------------
# 2. Kernels take at most twelve parameters.
# ---------------------------------------------------------------------------------------------------------------

# Beyond a dozen, kernels pass their arrays one by one, which is where argument-order bugs come from (and each
# array is one more reference to count at every call): group them in a container namedtuple (model/fields.py)
# or a tuple, which counts as one parameter.
MAX_KERNEL_PARAMETERS = 12


def _is_kernel_decorator(decorator: ast.expr) -> bool:
    """``@njit``, ``@njit(cache=True)``, ``@jit.njit(...)``, ``@overload(f)``, ``@overload_method(...)``."""
    text = ast.unparse(decorator)
    return "njit" in text or "overload" in text


def _kernel_parameter_counts(source: str) -> list[tuple[str, int]]:
    """(name, positional parameter count) of every Numba kernel and ``@overload`` in ``source``, methods and
    nested functions included."""
    counts = []
    for node, scope in _nodes(source):
        if isinstance(node, ast.FunctionDef) and any(map(_is_kernel_decorator, node.decorator_list)):
            name = f"{scope}.{node.name}" if scope else node.name
            counts.append((name, len(node.args.posonlyargs) + len(node.args.args)))
    return counts


def test_no_kernel_takes_more_than_twelve_parameters():
    """Every ``@njit`` kernel and ``@overload`` takes at most 12 positional parameters: longer lists are
    grouped into containers (a tuple or container counts as one), since a long list of same-typed arrays is
    where swapped arguments hide."""
    counts = [(path, name, n) for path, text in SOURCES.items() for name, n in _kernel_parameter_counts(text)]
    assert len(counts) > 100, "the kernels were not found: has the decorator changed?"
    offenders = [f"{path}:{name} ({n} params)" for path, name, n in counts if n > MAX_KERNEL_PARAMETERS]
    assert not offenders, f"kernels over {MAX_KERNEL_PARAMETERS} parameters:\n" + "\n".join(offenders)


def test_kernel_parameter_counter():
    """The counter finds each decorator spelling, counts positional-only parameters, counts a tuple
    parameter as one, and skips undecorated functions (a kernel's plain Python helpers)."""
    source = _snippet("""
        @njit
        def bare(a, b): pass

        @njit(cache=True, refcount=False)
        def called(a, /, b, c): pass

        @jit.njit(cache=True)
        def dotted(a, b, c, d, e, f, g, h, i, j, k, l, m): pass

        @overload(bare)
        def typed(a, b):
            def impl(a, b): pass
            return impl

        def plain(a, b, c, d, e, f, g, h, i, j, k, l, m, n): pass

        class Solver:
            @staticmethod
            @njit(cache=True)
            def method(bodies, contacts): pass
    """)
    assert _kernel_parameter_counts(source) == [("bare", 2), ("called", 3), ("dotted", 13), ("typed", 2),
                                                ("Solver.method", 2)]


# ---------------------------------------------------------------------------------------------------------------
# 3. One quaternion → matrix formula.
# ---------------------------------------------------------------------------------------------------------------


def _is_number(node: ast.AST, value: float) -> bool:
    return (isinstance(node, ast.Constant) and type(node.value) in (int, float)  # not True, which == 1
            and node.value == value)


def _quaternion_matrix_diagonals(source: str) -> list[tuple[str, int]]:
    """(enclosing function, line) of every ``1 - 2 * (…)`` or ``1.0 - 2.0 * (…)`` in ``source``: the
    fingerprint of a diagonal entry of R(q) = 1 − 2 (qy² + qz²), … (Baraff I (4-3)). ``1.0 - 2.0 * s * s``
    (a double angle) is ``1.0 - (2.0 * s) * s`` and does not match."""
    found = []
    for node, scope in _nodes(source):
        if (isinstance(node, ast.BinOp) and isinstance(node.op, ast.Sub) and _is_number(node.left, 1)
                and isinstance(node.right, ast.BinOp) and isinstance(node.right.op, ast.Mult)
                and _is_number(node.right.left, 2)):
            found.append((scope, node.lineno))
    return found


def test_one_definition_of_quaternion_to_matrix():
    """The quaternion → rotation matrix formula (Baraff I (4-3)) is written once, in math3d.quat_matrix_t,
    whose three diagonal entries are its fingerprint; every other form is built on that function, so a sign
    or index fixed there is fixed everywhere."""
    found = [(path, scope, line) for path, text in SOURCES.items()
             for scope, line in _quaternion_matrix_diagonals(text)]
    elsewhere = [f"{path}:{line} ({scope or 'module level'})" for path, scope, line in found
                 if (path, scope) != ("math3d.py", "quat_matrix_t")]
    assert not elsewhere, ("the quaternion → matrix formula outside math3d.quat_matrix_t (call it instead):\n"
                           + "\n".join(elsewhere))
    assert len(found) == 3, f"math3d.quat_matrix_t should hold the 3 diagonal entries, found {found}"


def test_quaternion_matrix_fingerprint():
    """The fingerprint matches the integer and float spellings, in any function, and not the look-alikes:
    a double-angle ``1 - 2 * s * s``, ``1 - 3 * (…)``, ``2 - 2 * (…)`` or ``1 + 2 * (…)``."""
    source = _snippet("""
        def matrix(x, y, z):
            return 1.0 - 2.0 * (y * y + z * z), 1 - 2 * (x * x + z * z)

        def others(s, y, z):
            return 1.0 - 2.0 * s * s, 1 - 3 * (y * y), 2 - 2 * (y * y), 1 + 2 * (z * z), True - 2 * (y * z)

        class Rotation:
            def diagonal(self, x, y):
                return 1 - 2 * (x * x + y * y)
    """)
    assert _quaternion_matrix_diagonals(source) == [("matrix", 2), ("matrix", 2), ("Rotation.diagonal", 9)]


# ---------------------------------------------------------------------------------------------------------------
# 4. One set of solver status codes.
# ---------------------------------------------------------------------------------------------------------------

STATUS_MODULE = "solvers/result.py"

# The codes and their names, defined in solvers/result.py; every solver, standalone and in-step, reports these,
# and StepStats.status reads them back. Importing them is the only way to use them elsewhere.
STATUS_DEFINITIONS = {"CONVERGED", "MAX_ITERATIONS", "INFEASIBLE", "DEGENERATE", "DIVERGED", "FAILED",
                      "STATUS_NAMES", "STATUSES"}

# Module-level names that look like a second set of codes (``LEMKE_STATUS``, ``PGS_STATUS_NAMES``).
_STATUS_LIKE_SUFFIXES = ("_STATUS", "STATUS_NAMES", "STATUSES")

# Names with such a suffix that are something else, each with why.
STATUS_LIKE_ALLOWED = {
    # The column of the status code in the contact step's stats vector (STAT_CONTACTS, STAT_ITERATIONS,
    # STAT_RESIDUAL, STAT_STATUS = range(4)): a position in an array, not a status code.
    ("methods/timestepping.py", "STAT_STATUS"),
}


def _target_names(target: ast.AST) -> Iterator[tuple[str, int]]:
    """The names a target binds, through tuple/list unpacking and starred targets."""
    if isinstance(target, ast.Name):
        yield target.id, target.lineno
    elif isinstance(target, ast.Tuple | ast.List):
        for element in target.elts:
            yield from _target_names(element)
    elif isinstance(target, ast.Starred):
        yield from _target_names(target.value)


def _assigned_names(nodes: Iterable[ast.AST]) -> Iterator[tuple[str, int]]:
    for node in nodes:
        if isinstance(node, ast.Assign):
            for target in node.targets:
                yield from _target_names(target)
        elif isinstance(node, ast.AnnAssign | ast.AugAssign | ast.NamedExpr):
            yield from _target_names(node.target)


def _status_assignments(source: str) -> list[tuple[str, int]]:
    """(name, line) of every assignment in ``source``, at any depth, to a name of STATUS_DEFINITIONS."""
    return [(name, line) for name, line in _assigned_names(node for node, _ in _nodes(source))
            if name in STATUS_DEFINITIONS]


def _module_level_statements(body: list[ast.stmt]) -> Iterator[ast.stmt]:
    """The module's own statements, including those under a top-level ``if``/``try``/``with`` (which still
    define module names) but not the bodies of functions and classes."""
    for statement in body:
        yield statement
        if isinstance(statement, ast.If | ast.Try | ast.With | ast.For | ast.While):
            for block in (statement.body, getattr(statement, "orelse", []), getattr(statement, "finalbody", [])):
                yield from _module_level_statements(block)
            for handler in getattr(statement, "handlers", []):
                yield from _module_level_statements(handler.body)


def _status_like_definitions(source: str) -> list[tuple[str, int]]:
    """(name, line) of every module-level name of ``source`` (assigned, or a function or class) ending in
    ``_STATUS``, ``STATUS_NAMES`` or ``STATUSES``."""
    statements = list(_module_level_statements(_parse(source).body))
    names = list(_assigned_names(statements))
    names += [(s.name, s.lineno) for s in statements if isinstance(s, ast.FunctionDef | ast.ClassDef)]
    return [(name, line) for name, line in names if name.endswith(_STATUS_LIKE_SUFFIXES)]


def test_one_solver_status():
    """The solver status codes (CONVERGED … FAILED) and their names (STATUS_NAMES, STATUSES) are defined
    once, in solvers/result.py: no other module assigns those names, anywhere, and no other module defines a
    module-level ``*_STATUS``, ``*STATUS_NAMES`` or ``*STATUSES`` (a second set of codes would drift from the
    first, and StepStats.status would name a code wrongly)."""
    defined = {name for name, _ in _status_assignments(SOURCES[STATUS_MODULE])}
    assert defined == STATUS_DEFINITIONS, f"{STATUS_MODULE} no longer defines {STATUS_DEFINITIONS - defined}"
    offenders = [f"{path}:{line} assigns {name}" for path, text in SOURCES.items() if path != STATUS_MODULE
                 for name, line in _status_assignments(text)]
    offenders += [f"{path}:{line} defines {name}" for path, text in SOURCES.items() if path != STATUS_MODULE
                  for name, line in _status_like_definitions(text) if (path, name) not in STATUS_LIKE_ALLOWED]
    assert not offenders, (f"status codes are defined only in {STATUS_MODULE} (import them):\n"
                           + "\n".join(offenders))


def test_status_checkers():
    """The checkers find an assignment to a code at any depth and through unpacking, and a status-like
    module-level name, but not an import, an attribute, a use, or a status-like name local to a function."""
    source = _snippet("""
        from .result import CONVERGED, STATUS_NAMES as NAMES
        OK, FAILED = 0, 1
        LEMKE_STATUS: int = 3

        def solve(out):
            DIVERGED = 4
            out.CONVERGED = CONVERGED
            local_status = NAMES[0]
            return DIVERGED, local_status

        if True:
            PGS_STATUS_NAMES = ("ok",)

        class Stats:
            STATUS = 7
    """)
    assert _status_assignments(source) == [("FAILED", 2), ("DIVERGED", 6)]
    assert _status_like_definitions(source) == [("LEMKE_STATUS", 3), ("PGS_STATUS_NAMES", 12)]
    assert _status_assignments("from .result import CONVERGED\nx = CONVERGED\n") == []


# ---------------------------------------------------------------------------------------------------------------
# 5. One contact record.
# ---------------------------------------------------------------------------------------------------------------

# What makes a class a contact record: the per-contact point, normal and depth as annotated class fields.
_CONTACT_FIELDS = {"point", "normal", "depth"}
# What makes a namedtuple or a field registry one: its normal and depth.
_CONTACT_TUPLE_FIELDS = {"normal", "depth"}
_NAMEDTUPLE = {"namedtuple", "NamedTuple"}
# The registry helper of model/fields.py that builds a container namedtuple from a tuple of Fields.
_CONTAINER = "container"


def _contact_record_classes(source: str) -> list[str]:
    """Names of the classes of ``source`` (at any depth) whose own body annotates point, normal and depth:
    a dataclass, a typing.NamedTuple or a plain annotated class."""
    classes = []
    for node, scope in _nodes(source):
        if isinstance(node, ast.ClassDef):
            fields = {s.target.id for s in node.body if isinstance(s, ast.AnnAssign) and isinstance(s.target, ast.Name)}
            if _CONTACT_FIELDS <= fields:
                classes.append(f"{scope}.{node.name}" if scope else node.name)
    return classes


def _call_name(call: ast.Call) -> str | None:
    func = call.func
    return func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else None


def _literal_fields(node: ast.AST) -> set[str]:
    """The field names spelled out in a namedtuple's field list: ``["a", "b"]``, ``("a", "b")``, ``"a b"``,
    ``"a, b"``, or NamedTuple's ``[("a", float), …]``; empty when they are computed."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return set(node.value.replace(",", " ").split())
    if isinstance(node, ast.List | ast.Tuple):
        names = set()
        for element in node.elts:
            if isinstance(element, ast.Tuple) and element.elts:
                element = element.elts[0]
            if isinstance(element, ast.Constant) and isinstance(element.value, str):
                names.add(element.value)
        return names
    return set()


def _contact_namedtuples(source: str) -> list[int]:
    """Lines of the ``namedtuple(…)`` / ``NamedTuple(…)`` calls of ``source`` whose spelled-out fields include
    normal and depth."""
    lines = []
    for node, _ in _nodes(source):
        if isinstance(node, ast.Call) and _call_name(node) in _NAMEDTUPLE:
            fields = [k.value for k in node.keywords if k.arg in ("field_names", "fields")] + node.args[1:2]
            if any(_CONTACT_TUPLE_FIELDS <= _literal_fields(f) for f in fields):
                lines.append(node.lineno)
    return lines


def _contact_registries(source: str) -> list[str]:
    """Module-level names of ``source`` bound to a tuple or list of ``Field("name", …)`` entries that include
    normal and depth: a registry a contact container can be built from."""
    registries = []
    for statement in _module_level_statements(_parse(source).body):
        value = statement.value if isinstance(statement, ast.Assign | ast.AnnAssign) else None
        if isinstance(value, ast.Tuple | ast.List):
            names = {e.args[0].value for e in value.elts
                     if isinstance(e, ast.Call) and _call_name(e) == "Field" and e.args
                     and isinstance(e.args[0], ast.Constant)}
            if _CONTACT_TUPLE_FIELDS <= names:
                registries += [name for name, _ in _assigned_names([statement])]
    return registries


def _containers_built_from(source: str, registries: set[str]) -> list[tuple[str, int]]:
    """(bound name, line) of the ``container(…)``, ``namedtuple(…)`` and ``NamedTuple(…)`` calls of ``source``
    whose arguments mention one of ``registries`` (``container("ContactSlots", SLOT_FIELDS, …)``,
    ``namedtuple("X", [f.name for f in SLOT_FIELDS])``); the bound name is ``"?"`` for a call not assigned."""
    bound = {}
    for node, _ in _nodes(source):
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            bound[id(node.value)] = node.targets[0].id
    found = []
    for node, _ in _nodes(source):
        if isinstance(node, ast.Call) and _call_name(node) in _NAMEDTUPLE | {_CONTAINER}:
            mentioned = {n.id for arg in [*node.args, *(k.value for k in node.keywords)]
                         for n in ast.walk(arg) if isinstance(n, ast.Name)}
            if mentioned & registries:
                found.append((bound.get(id(node), "?"), node.lineno))
    return found


def test_one_contact_record():
    """One class holds a contact's point, normal and depth as annotated fields: ``Contacts`` of
    collision/detect.py, what ``World.contacts`` returns. And no namedtuple spells out normal and depth as
    fields (the kernels' slots are ContactSlots, built from the field registry: see the next test). A second
    record would be a second layout of the same data, to keep in step by hand."""
    classes = [f"{path}:{name}" for path, text in SOURCES.items() for name in _contact_record_classes(text)]
    assert classes == ["collision/detect.py:Contacts"], f"contact record classes: {classes}"
    tuples = [f"{path}:{line}" for path, text in SOURCES.items() for line in _contact_namedtuples(text)]
    assert not tuples, "namedtuples with normal and depth fields (use ContactSlots or Contacts):\n" + "\n".join(tuples)


def test_one_contact_slot_container():
    """The kernels' contact container is built once: one field registry has normal and depth (SLOT_FIELDS of
    model/fields.py), and one ``container``/``namedtuple`` call is built from it (ContactSlots, there). A
    second container over the same registry, or a second registry, would be a second contact record."""
    registries = [(path, name) for path, text in SOURCES.items() for name in _contact_registries(text)]
    assert registries == [("model/fields.py", "SLOT_FIELDS")], f"contact field registries: {registries}"
    containers = [(path, name) for path, text in SOURCES.items()
                  for name, _ in _containers_built_from(text, {"SLOT_FIELDS"})]
    assert containers == [("model/fields.py", "ContactSlots")], f"containers built from SLOT_FIELDS: {containers}"


def test_contact_record_checkers():
    """The checkers find a dataclass or NamedTuple class with the contact fields, a namedtuple spelling them
    out in each form, a registry with normal and depth, and a container built from it; and not a class or
    namedtuple with only some of the fields, nor a use of the registry that builds no container."""
    source = _snippet("""
        @dataclass
        class Hit:
            point: np.ndarray
            normal: np.ndarray
            depth: float

        class Partial(NamedTuple):
            normal: np.ndarray
            depth: float

        A = namedtuple("A", ["point", "normal", "depth"])
        B = collections.namedtuple("B", "normal depth")
        C = NamedTuple("C", [("normal", float), ("depth", float)])
        D = namedtuple("D", ["normal", "normal_impulse"])
        REGISTRY = (Field("normal", float), Field("depth", float))
        OTHER = (Field("normal", float),)
        E = container("E", REGISTRY, "doc")
        F = namedtuple("F", [f.name for f in REGISTRY])
        group = ArrayGroup(REGISTRY, 4, E)
    """)
    assert _contact_record_classes(source) == ["Hit"]
    assert _contact_namedtuples(source) == [11, 12, 13]
    assert _contact_registries(source) == ["REGISTRY"]
    assert _containers_built_from(source, {"REGISTRY"}) == [("E", 17), ("F", 18)]


# ---------------------------------------------------------------------------------------------------------------
# 6. Slot rows through contacts.slot.
# ---------------------------------------------------------------------------------------------------------------

# Where the slot layout (MAX_CONTACTS rows per pair) is written down; everything else calls it, so the
# layout can change (interleaved, padded) in one place.
SLOT_DEFINITION = ("collision/contacts.py", "slot")


def _is_max_contacts(node: ast.AST) -> bool:
    return (isinstance(node, ast.Name) and node.id == "MAX_CONTACTS") or (
        isinstance(node, ast.Attribute) and node.attr == "MAX_CONTACTS")


def _is_pair_stride(node: ast.AST) -> bool:
    """``MAX_CONTACTS * k`` or ``k * MAX_CONTACTS``."""
    return (isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mult)
            and (_is_max_contacts(node.left) or _is_max_contacts(node.right)))


def _slot_expressions(source: str) -> list[tuple[str, int]]:
    """(enclosing function, line) of every ``MAX_CONTACTS * k + j`` of ``source``, in either order of
    either operation (``j + k * MAX_CONTACTS`` too): an inline copy of ``slot(k, j)``."""
    return [(scope, node.lineno) for node, scope in _nodes(source)
            if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add)
            and (_is_pair_stride(node.left) or _is_pair_stride(node.right))]


def _assert_only_in(checker, place: tuple[str, str], message: str) -> None:
    """``checker`` (source → [(scope, line)]) finds exactly one thing in all of tumble, in ``place`` (module
    path, enclosing function)."""
    found = [(path, scope, line) for path, text in SOURCES.items() for scope, line in checker(text)]
    offenders = [f"{path}:{line} ({scope or 'module level'})" for path, scope, line in found
                 if (path, scope) != place]
    assert not offenders, f"{message}:\n" + "\n".join(offenders)
    assert len(found) == 1, f"{place} should hold the one occurrence, found {found}"


def test_slot_accessor_everywhere():
    """Slot rows are computed by ``contacts.slot(k, j)`` only: no module writes ``MAX_CONTACTS * k + j``
    itself, so the slot layout has one definition (a copy that missed a layout change would read another
    pair's contacts)."""
    _assert_only_in(_slot_expressions, SLOT_DEFINITION, "slot index written inline (call contacts.slot)")


def test_slot_expression_checker():
    """The checker finds the slot expression in each operand order and through a module attribute, and not
    a bare stride (``MAX_CONTACTS * m``, a size), a quotient or another constant's stride."""
    source = _snippet("""
        def rows(k, j, m, fields):
            a = MAX_CONTACTS * k + j
            b = j + k * MAX_CONTACTS
            c = fields.MAX_CONTACTS * k + 1
            d = MAX_CONTACTS * m, s // MAX_CONTACTS, WIDTH * k + j, MAX_CONTACTS + j
            return a, b, c, d
    """)
    assert _slot_expressions(source) == [("rows", 2), ("rows", 3), ("rows", 4)]


# ---------------------------------------------------------------------------------------------------------------
# One Lemke wrapper.
# ---------------------------------------------------------------------------------------------------------------

# Lemke's pivoting kernel is run by one wrapper, with its regularize-and-retry ladder and its acceptance test;
# the standalone solver, the step and the event method all go through it.
LEMKE_WRAPPER = ("solvers/pivoting.py", "lemke_retried")


def _lemke_kernel_calls(source: str) -> list[tuple[str, int]]:
    """(enclosing function, line) of every call of ``_lemke_kernel`` (by name or module attribute)."""
    return [(scope, node.lineno) for node, scope in _nodes(source)
            if isinstance(node, ast.Call) and _call_name(node) == "_lemke_kernel"]


def test_one_lemke_wrapper():
    """Only ``pivoting.lemke_retried`` runs Lemke's kernel: a second regularize-and-retry loop would drift
    from the first in its ladder or its acceptance test."""
    _assert_only_in(_lemke_kernel_calls, LEMKE_WRAPPER, "Lemke's kernel called outside pivoting.lemke_retried")


def test_lemke_call_checker():
    source = _snippet("""
        def solve(M, q):
            x = pivoting._lemke_kernel(M.T, q, 10)
            y = _lemke_kernel(M.T, q, 10)
            return lemke(M, q), _lemke_kernel
    """)
    assert _lemke_kernel_calls(source) == [("solve", 2), ("solve", 3)]


def test_architecture_page_names_files_that_exist():
    """docs/architecture.md matches the code: every source file it names (a `…py` path relative to src/tumble,
    or a folder/ prefix with a file) exists, so a move or rename that leaves the page behind fails here."""
    repo = SRC.parents[1]
    page = (repo / "docs" / "architecture.md").read_text()
    named = set(re.findall(r"`([a-z_]+(?:/[a-z_]+)*\.py)`", page))
    missing = sorted(p for p in named if not any((base / p).exists() or any(base.rglob(Path(p).name))
                                                 for base in (SRC, repo / "tests", repo / "bench")))
    assert len(named) > 30, "the page should name the source files"
    assert missing == [], f"docs/architecture.md names files that do not exist: {missing}"
