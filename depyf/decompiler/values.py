"""Symbolic stack values that are not plain expressions: markers for the stack machine's state."""

from __future__ import annotations

import ast
import types
from dataclasses import dataclass, field


class Null:
    """The NULL pushed before a callable (or by a method load)."""

    def __repr__(self) -> str:
        return "NULL"


NULL = Null()


class Hole:
    """A store target still to be found: the stores that consume it fill it in.

    ``UNPACK_SEQUENCE``/``UNPACK_EX`` on a hole split it into child holes; when every child is
    filled, the parent receives a ``Tuple`` target. ``on_fill`` is called with the final target.
    """

    def __init__(self, on_fill=None):
        self.target: ast.expr | None = None
        self.on_fill = on_fill

    def fill(self, target: ast.expr) -> None:
        self.target = target
        if self.on_fill is not None:
            self.on_fill(target)


class TupleHole:
    """Collects the children of an unpacked hole into one ``Tuple`` target."""

    def __init__(self, parent: Hole, count: int, star_index: int | None, is_local=None):
        self.parent = parent
        self.elts: list[ast.expr | None] = [None] * count
        self.star_index = star_index
        self.remaining = count
        self.is_local = is_local     # name -> is it a local variable (not a global or a cell)?

    def child(self, i: int) -> Hole:
        def done(target: ast.expr, i: int = i) -> None:
            if i == self.star_index:
                target = ast.Starred(target, ast.Store())
            self.elts[i] = target
            self.remaining -= 1
            if self.remaining == 0:
                self.parent.fill(ast.Tuple(self._dead_stores_named(), ast.Store()))
        return Hole(done)

    def _dead_stores_named(self) -> list:
        """The targets, each item popped unstored (``POP_TOP``: a ``_`` target marked
        ``dead_store``) named as a local stored later in the same targets: 3.13 drops the first
        of two stores to one local (``n, n = pair``), and ``_`` would bind a variable the code
        never had."""
        elts = list(self.elts)
        for i, target in enumerate(elts):
            if not getattr(target, "dead_store", False) or self.is_local is None:
                continue
            names = (t.value if isinstance(t, ast.Starred) else t for t in elts[i + 1:])
            later = next((t for t in names if isinstance(t, ast.Name) and self.is_local(t.id)), None)
            if later is not None:
                elts[i] = ast.Name(later.id, ast.Store())
        return elts


@dataclass
class ExcState:
    """The previous exception state saved by PUSH_EXC_INFO (popped by POP_EXCEPT)."""


@dataclass
class ExcValue:
    """The exception being handled."""


@dataclass
class WithExit:
    """The bound ``__exit__`` that BEFORE_WITH leaves under the body."""

    manager: ast.expr
    is_async: bool = False


@dataclass
class WithEnter(Hole):
    """The value of ``__enter__``: stored into the ``as`` target or popped."""

    def __init__(self, manager: ast.expr, is_async: bool = False):
        Hole.__init__(self)
        self.manager = manager
        self.is_async = is_async


@dataclass
class Iterator:
    """An iterator made by GET_ITER/GET_AITER, kept under a for loop's body."""

    iterable: ast.expr
    is_async: bool = False


@dataclass
class FunctionValue:
    """A function made by MAKE_FUNCTION, not yet stored or called."""

    code: types.CodeType
    defaults: list[ast.expr] = field(default_factory=list)
    kwdefaults: dict[str, ast.expr] = field(default_factory=dict)
    annotations: dict[str, ast.expr] = field(default_factory=dict)
    decorators: list[ast.expr] = field(default_factory=list)
    type_params: list = field(default_factory=list)
    # the variables whose cells MAKE_FUNCTION's closure holds, in order (None: no closure, or one
    # that is no tuple of this frame's cells)
    closure: list[str] | None = None
    # the closure as an expression where it is no tuple of this frame's cells (generated code that
    # kept the tuple in a list: ``stack[-1]``), else None
    closure_value: ast.expr | None = None
    # the qualified name MAKE_FUNCTION took from the stack where it takes one (None: from the code
    # object); ``qualname_known`` is False where that stack value was no string constant
    qualname: str | None = None
    qualname_known: bool = True


@dataclass
class BuildClass:
    """``__build_class__`` loaded by LOAD_BUILD_CLASS."""


@dataclass
class ClassValue:
    """A class statement's value before it is stored."""

    node: ast.ClassDef


@dataclass
class ImportValue:
    """The module object pushed by IMPORT_NAME."""

    module: str
    level: int
    fromlist: tuple | None
    attrs: tuple = ()       # for ``import a.b.c as d`` (IMPORT_FROM on a module without fromlist)


@dataclass
class ImportedName:
    """A name pushed by IMPORT_FROM."""

    source: ImportValue
    name: str


@dataclass
class CompAccumulator:
    """The list/set/dict a comprehension's code builds (BUILD_LIST 0 at its start)."""

    kind: str  # "list", "set" or "dict"


@dataclass
class Converted:
    """A value with an f-string conversion attached (CONVERT_VALUE, 3.13+)."""

    value: ast.expr
    conversion: str | None


@dataclass
class LoadLocals:
    """The result of LOAD_LOCALS (3.12 generic class bodies)."""


@dataclass
class CellRef:
    """The cell object of variable ``name`` (LOAD_CLOSURE), not its value. Source only needs it to
    build closures, which the compiler recreates; generated code also passes cells around."""

    name: str


@dataclass
class ClosureCells:
    """A tuple of cells, as built for MAKE_FUNCTION's closure."""

    names: list[str]


@dataclass
class TypeParams:
    """Type parameters made in a PEP 695 scope (``[T: int, *Ts, **P]``), as ``ast.type_param``s."""

    nodes: list


@dataclass
class GenericBase:
    """``Generic[*type_params]``, the base a generic class gets implicitly (INTRINSIC_SUBSCRIPT_GENERIC)."""


@dataclass
class TypeAliasValue:
    """``type name[params] = value`` before it is stored."""

    name: str
    type_params: list
    value: ast.expr

