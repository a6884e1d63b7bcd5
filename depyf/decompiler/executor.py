"""Symbolic execution of straight-line instructions: stack values become ast expressions.

The executor runs one stretch of instructions with a symbolic stack, appending statements as
they are completed. It stops before control flow and hands the terminating instruction (and the
condition it pops) to the structurer, which owns every decision about blocks and nesting.
"""

from __future__ import annotations

import ast
import types
from dataclasses import dataclass

from depyf.decompiler import opaque, traversal
from depyf.decompiler import values as v
from depyf.decompiler.errors import DecompilationError
from depyf.decompiler.expressions import (
    BINARY_OPERATORS,
    COMPARE_OPERATORS,
    constant,
    load,
    store,
    to_store,
)
from depyf.decompiler.instructions import CONDITIONAL_JUMPS, Instr
from depyf.decompiler.slices import as_slice_object

_STORES = frozenset({"STORE_FAST", "STORE_NAME", "STORE_DEREF", "STORE_GLOBAL", "STORE_ATTR",
                     "STORE_SUBSCR"})
# instructions that may come between the stores of one tuple assignment (computing targets)
_DURING_GROUP = _STORES | {"LOAD_FAST", "LOAD_CONST", "LOAD_NAME", "LOAD_GLOBAL", "LOAD_DEREF",
                           "LOAD_ATTR", "BINARY_SUBSCR", "BINARY_OP", "SWAP", "COPY", "PUSH_NULL"}
_NAME_READS = frozenset({"LOAD_FAST", "LOAD_NAME", "LOAD_GLOBAL", "LOAD_DEREF"})
# Expressions a later target of a tuple assignment may compute (``x[f()], x[g()] = h(), k()``
# calls ``f`` after ``h`` and ``k``): the group stays open while they leave its values alone.
_TARGET_WORK = frozenset({"LOAD_CLASSDEREF", "LOAD_FROM_DICT_OR_DEREF", "LOAD_FROM_DICT_OR_GLOBALS",
                          "CALL", "CALL_KW", "CALL_FUNCTION_EX", "BUILD_SLICE", "BUILD_TUPLE",
                          "BUILD_LIST", "BUILD_SET", "BUILD_MAP", "BUILD_CONST_KEY_MAP", "BUILD_STRING",
                          "FORMAT_VALUE", "UNARY_NEGATIVE", "UNARY_POSITIVE", "UNARY_INVERT", "UNARY_NOT",
                          "COMPARE_OP", "IS_OP", "CONTAINS_OP"})


def _operands(ins: Instr) -> int:
    """How many stack entries an instruction of ``_TARGET_WORK`` takes."""
    op, n = ins.opname, ins.argval
    if op in ("CALL", "CALL_KW", "CALL_FUNCTION_EX"):
        args = n if op == "CALL" else n + 1 if op == "CALL_KW" else 1 + bool(n)
        return args + ins.slots
    if op in ("BUILD_SLICE", "BUILD_TUPLE", "BUILD_LIST", "BUILD_SET", "BUILD_STRING"):
        return n
    if op == "BUILD_MAP":
        return 2 * n
    if op == "BUILD_CONST_KEY_MAP":
        return n + 1
    if op == "FORMAT_VALUE":
        return 1 + bool(n[1])
    if op in ("COMPARE_OP", "IS_OP", "CONTAINS_OP"):
        return 2
    return 1 if op.startswith("UNARY_") else 0


def _reads_target(stack: list, target: ast.expr) -> bool:
    """Would a pending stack expression read the location ``target`` is about to overwrite?"""
    for item in stack:
        if not isinstance(item, ast.expr):
            continue
        for node in traversal.walk(item):
            if isinstance(target, ast.Name) and isinstance(node, ast.Name) and node.id == target.id:
                return True
            if (
                isinstance(target, ast.Attribute)
                and isinstance(node, ast.Attribute)
                and node.attr == target.attr
            ):
                return True
            if isinstance(target, ast.Subscript) and isinstance(node, ast.Subscript):
                return True
    return False


def _as_value(node: ast.expr) -> ast.expr:
    """``node`` as an expression that can stand alone (a slice only can inside brackets)."""
    return as_slice_object(node) if isinstance(node, ast.Slice) else node


def _reads_name(stack: list, name: str) -> bool:
    """Does a pending stack expression read the variable ``name``?"""
    return any(isinstance(node, ast.Name) and node.id == name
               for item in stack if isinstance(item, ast.expr) for node in traversal.walk(item))


def _parse_annotation(node: ast.Constant) -> ast.expr:
    """Under ``from __future__ import annotations`` the compiler stored the annotation's text."""
    try:
        return ast.parse(node.value, mode="eval").body
    except SyntaxError:
        return node


def _writes(target: ast.expr) -> frozenset:
    names = set()
    for node in traversal.walk(target):
        if isinstance(node, ast.Name):
            names.add(node.id)
    return frozenset(names)


def _walk_values(tree: ast.AST, skip) -> list[ast.expr]:
    """Non-trivial expressions in ``tree``, parents before their children (pre-order), not
    descending into ``skip``."""
    found = []
    todo = [tree]
    while todo:
        item = todo.pop()
        if item is skip or isinstance(item, _TRIVIAL):
            continue
        if isinstance(item, ast.expr):
            found.append(item)
        children = []
        for name in item._fields:
            value = getattr(item, name, None)
            if isinstance(value, ast.AST):
                children.append(value)
            elif value.__class__ is list:
                children.extend(x for x in value if isinstance(x, ast.AST))
        if children:
            children.reverse()
            todo.extend(children)
    return found


_TRIVIAL = (ast.Name, ast.Constant, ast.expr_context)


def _shared_counts(node: ast.AST, stack: list, keep) -> dict[int, int]:
    """How often each expression object occurs in ``node`` and in the stack (``keep`` aside)."""
    counts: dict[int, int] = {}
    for tree in [node, *(x for x in stack if isinstance(x, ast.expr))]:
        for sub in _walk_values(tree, keep):
            counts[id(sub)] = counts.get(id(sub), 0) + 1
    return counts


def _occurrences(stack: list, node: ast.expr) -> int:
    """How many times ``node`` (by identity) occurs in the stack, inside expressions included."""
    count = 0
    for item in stack:
        if item is node:
            count += 1
        elif isinstance(item, ast.expr):
            count += sum(1 for sub in traversal.walk(item) if sub is node)
    return count


def _occurrence_counts(stack: list) -> dict[int, int]:
    """``_occurrences`` of every node at once: id -> how many times it occurs in the stack."""
    counts: dict[int, int] = {}
    for item in stack:
        if isinstance(item, ast.expr):
            for sub in traversal.walk(item):
                counts[id(sub)] = counts.get(id(sub), 0) + 1
    return counts


def _replace_everywhere(stack: list, old: ast.expr, new: ast.expr) -> None:
    """Replace ``old`` (by identity) in the stack and inside every pending expression."""
    for k, item in enumerate(stack):
        if item is old:
            stack[k] = new
        elif isinstance(item, ast.expr):
            traversal.replace_in(item, old, new)
        elif isinstance(item, (v.WithEnter, v.WithExit)) and getattr(item, "manager", None) is old:
            item.manager = new


_COMPREHENSION_NAMES = {"<listcomp>": "list", "<setcomp>": "set", "<dictcomp>": "dict"}


# For the structurer, which names pending values the same way.
replace_in = traversal.replace_in
replace_everywhere = _replace_everywhere


class AppendStmt(ast.stmt):
    """Pseudo statement: a comprehension adds ``value`` (and ``key``) to its accumulator."""

    _fields = ("value", "key")


class ClassAnnotationsStmt(ast.stmt):
    """Pseudo statement: a 3.14+ class body stores its ``__annotate__`` function (``fn``)."""

    _fields = ("fn",)


class ModuleAnnotationsStmt(ast.stmt):
    """Pseudo statement: a 3.14+ module stores its ``__annotate__`` function (``fn``)."""

    _fields = ("fn",)


class AnnotationMarkStmt(ast.stmt):
    """Pseudo statement: a 3.14+ module records that its annotation number ``index`` was reached
    (``__conditional_annotations__.add(index)``, right after the annotated statement)."""

    _fields = ("index",)


class WithExitStmt(ast.stmt):
    """Pseudo statement: the ``__exit__(None, None, None)`` call ending a with body."""

    _fields = ("exit",)


class PopExceptStmt(ast.stmt):
    """Pseudo statement: POP_EXCEPT, the end of an except clause."""

    _fields = ()


class ReraiseStmt(ast.stmt):
    """Pseudo statement: RERAISE of the exception being handled (end of an except chain)."""

    _fields = ()


class ExceptAsStmt(ast.stmt):
    """Pseudo statement: the caught exception stored into ``name``."""

    _fields = ("name",)


@dataclass
class Stop:
    """Why a run stopped: ``ins`` is the control instruction (None: fell into a new block)."""

    ins: Instr | None
    condition: ast.expr | None = None


def _tuple_items(node) -> list | None:
    """The items of a tuple display or of a constant tuple, as nodes."""
    if isinstance(node, ast.Tuple):
        return list(node.elts)
    if isinstance(node, ast.Constant) and isinstance(node.value, tuple):
        return [ast.Constant(x) for x in node.value]
    return None


def _interpolation_text(text: str) -> str | None:
    """The expression text a template string keeps (``Interpolation.expression``): printed as
    written so the rebuilt template carries the same text; None (print the value) where the text
    is not an expression on its own."""
    try:
        ast.parse(text.strip(), mode="eval")
    except SyntaxError:
        return None
    return text


# PEP 695 type parameters made from a name alone (3.12+; ast has these node types from 3.12)
_TYPE_PARAM_KINDS = {
    "INTRINSIC_TYPEVAR": getattr(ast, "TypeVar", None),
    "INTRINSIC_PARAMSPEC": getattr(ast, "ParamSpec", None),
    "INTRINSIC_TYPEVARTUPLE": getattr(ast, "TypeVarTuple", None),
}


class Executor:
    """Runs instructions of one code object over a symbolic stack."""

    def __init__(self, code: types.CodeType, instrs: list[Instr], decompile_nested):
        self.code = code
        self.instrs = instrs
        self.decompile_nested = decompile_nested  # callable(code) -> FunctionDef/ClassDef parts
        self.qualname = getattr(code, "co_qualname", code.co_name)
        self.comp_kind = _COMPREHENSION_NAMES.get(code.co_name)
        self.parallel: list = []   # pending (target, value) stores of a tuple assignment
        self.parallel_pending: list = []  # values on the stack when the group started
        self.current = 0
        self.current_stack: list = []
        self.temp_count = 0
        self.seq = 0                    # completion counter for values pushed (``_seq``)
        self.copied: set[int] = set()   # ids of values COPY put on the stack a second time
        self.temp_of: dict[int, tuple[ast.expr, str]] = {}  # id(value) -> (value, temporary it went to)
        self.globals_declared: set[str] = set()
        self.nonlocals_declared: set[str] = set()
        self.bound_names: dict[str, object] = {}   # a PEP 695 scope's parameters: the caller's values
        self.type_params: v.TypeParams | None = None  # the last type parameters stored (a class's)

    # -- driver ------------------------------------------------------------------------
    def run(self, start: int, end: int, stack: list, out: list) -> tuple[int, Stop]:
        """Execute ``instrs[start:end]``; stop at the first control instruction.

        Returns the index after the last executed instruction and why it stopped.
        """
        i = start
        self.current_stack = stack
        while i < end:
            ins = self.instrs[i]
            op = ins.opname
            if self.parallel and (op not in _DURING_GROUP and not self.computes_next_target(ins, stack)
                                  or self.reads_group_target(ins)):
                self.flush_parallel(out)
            if op in CONDITIONAL_JUMPS:
                if op.startswith("JUMP_IF"):
                    return i + 1, Stop(ins, stack[-1])
                cond = self.pop(stack, ins)
                if isinstance(cond, v.FunctionValue) or type(cond) is v.Hole:  # ``assert lambda: ...``
                    cond = self.value(cond, ins)
                if op == "POP_JUMP_IF_NONE":
                    cond = ast.Compare(cond, [ast.Is()], [ast.Constant(None)])
                elif op == "POP_JUMP_IF_NOT_NONE":
                    cond = ast.Compare(cond, [ast.IsNot()], [ast.Constant(None)])
                return i + 1, Stop(ins, cond)
            if op in ("JUMP", "FOR_ITER", "ASYNC_FOR_ITER", "RETURN_VALUE", "RAISE_VARARGS", "RERAISE"):
                if op == "RETURN_VALUE":
                    item = self.pop(stack, ins)
                    if isinstance(item, v.CompAccumulator):
                        out.append(ast.Return(None))
                    else:
                        node = ast.Return(self.value(item, ins))
                        node.source_line = ins.lineno    # copies of one return share it
                        self.name_repeated_parts(node, stack, out)
                        out.append(node)
                elif op == "RAISE_VARARGS":
                    out.append(self._raise(ins, stack))
                return i + 1, Stop(ins)
            handler = getattr(self, "op_" + op, None)
            if handler is None:
                raise self.error(ins, f"no symbolic semantics for {op}")
            self.current = i
            handler(ins, stack, out)
            if stack and isinstance(stack[-1], ast.expr) and not hasattr(stack[-1], "_seq"):
                self.seq += 1
                stack[-1]._seq = self.seq  # when this value was completed (see _store)
            i += 1
        self.flush_parallel(out)
        return i, Stop(None)

    # -- evaluation order ----------------------------------------------------------------
    def new_temp(self) -> str:
        taken = self.code.co_varnames + self.code.co_cellvars + self.code.co_freevars + self.code.co_names
        while True:
            self.temp_count += 1
            name = f"__stack_{self.temp_count - 1}"
            if name not in taken:
                return name

    def spill(self, stack: list, out: list, writes: frozenset = frozenset(), keep=None,
              force: tuple = ()) -> None:
        """Evaluate pending stack expressions into temporaries before a statement runs.

        CPython's own compiler never leaves expressions on the stack across a statement, but
        generated bytecode (Dynamo's) does; evaluating them later would change the order of
        evaluation, so each is assigned to a ``__stack_<n>`` temporary, bottom of stack first.
        """
        for k in range(len(stack)):
            item = stack[k]
            if not isinstance(item, ast.expr) or item is keep:
                continue
            forced = any(item is f for f in force)
            if isinstance(item, ast.Slice):
                # a slice is no value on its own (``__stack_0 = b:``): its parts are named instead
                for part in (item.lower, item.upper, item.step):
                    if part is not None and not isinstance(part, ast.Constant) \
                            and not (isinstance(part, ast.Name) and part.id not in writes):
                        self.assign_temp(part, stack, out)
                continue
            if isinstance(item, ast.Constant) or (isinstance(item, ast.Name) and item.id not in writes
                                                  and not forced):
                continue
            if isinstance(item, ast.Name) and item.id.startswith("__stack_"):
                continue
            self.spill_shared_parts(item, stack, out)
            item = stack[k]
            if isinstance(item, ast.Name) and item.id.startswith("__stack_"):
                continue
            self.assign_temp(item, stack, out)

    def assign_temp(self, node: ast.expr, stack: list, out: list) -> ast.Name:
        name = self.new_temp()
        self.flush_parallel(out)
        out.append(ast.Assign([store(name)], _as_value(node)))
        self.temp_of[id(node)] = (node, name)
        _replace_everywhere(stack, node, load(name))
        return load(name)

    def spill_shared_parts(self, item: ast.expr, stack: list, out: list) -> None:
        """Sub-expressions of ``item`` that other stack entries share (COPY) get one temporary first.

        Breadth-first, so the outermost shared node is named before anything inside it.
        """
        for _ in range(1000):
            counts = _occurrence_counts(stack)      # one pass over the stack, not one per node
            shared = None
            for node in traversal.walk(item):
                if (
                    node is item
                    or not isinstance(node, ast.expr)
                    or isinstance(node, (ast.Constant, ast.Name))
                ):
                    continue
                if counts.get(id(node), 0) > 1:
                    shared = node
                    break
            if shared is None:
                return
            self.assign_temp(shared, stack, out)

    def shared_container(self, node: ast.expr, stack: list, out: list) -> ast.expr:
        """A container about to be changed in place: if the stack still refers to it, name it first."""
        if isinstance(node, (ast.Name, ast.Constant)) or _occurrences(stack, node) == 0:
            return node
        self.spill(stack, out)
        named = self.temp_of.get(id(node))
        if named is not None and named[0] is node:
            return load(named[1])  # the spill named it: change it through that name
        return self.assign_temp(node, stack, out) if _occurrences(stack, node) else node

    def statement(self, node: ast.stmt, stack: list, out: list, writes: frozenset = frozenset(),
                  keep=None) -> None:
        """Append ``node`` after spilling what must be evaluated before it."""
        self.spill(stack, out, writes, keep)
        self.name_repeated_parts(node, stack, out, keep)
        out.append(node)

    def name_repeated_parts(self, node: ast.AST, stack: list, out: list, keep=None) -> None:
        """A value the bytecode computed once (then COPY'd) but that ``node`` uses several times,
        or that the stack still holds for later, is computed once into a temporary.

        The outermost repeated value is named first (fewer temporaries), after any part of it that
        is shared on its own (it was computed before, and is used elsewhere too).
        """
        # Only COPY makes one value occur twice: without a copied value in ``node`` there is nothing
        # to name (and no need to walk the whole stack).
        if not self.copied or not any(id(sub) in self.copied for sub in _walk_values(node, keep)):
            return
        for _ in range(1000):
            counts = _shared_counts(node, stack, keep)
            repeated = [sub for sub in _walk_values(node, keep) if counts.get(id(sub), 0) > 1]
            if not repeated:
                return
            self._name_with_parts(repeated[0], node, stack, out, counts, keep)

    def _name_with_parts(self, target: ast.expr, node: ast.AST, stack: list, out: list,
                         counts: dict[int, int], keep=None) -> None:
        inner: dict[int, int] = {}
        for sub in _walk_values(target, None):
            if sub is not target:
                inner[id(sub)] = inner.get(id(sub), 0) + 1
        for sub in _walk_values(target, None):
            if sub is not target and counts.get(id(sub), 0) > counts[id(target)] * inner[id(sub)]:
                self._name_with_parts(sub, node, stack, out, counts, keep)
                counts.clear()
                counts.update(_shared_counts(node, stack, keep))
                break
        name = self.new_temp()
        self.flush_parallel(out)
        out.append(ast.Assign([store(name)], _as_value(target)))
        traversal.replace_in(node, target, load(name))
        _replace_everywhere(stack, target, load(name))

    def tuple_assignment_ahead(self, stack: list) -> bool:
        """Other plain values wait on the stack: this store starts ``a, b = x, y``."""
        return any(isinstance(x, ast.expr) and not isinstance(x, ast.Constant) for x in stack) \
            and self.next_is_store()

    def computes_next_target(self, ins: Instr, stack: list) -> bool:
        """Does ``ins`` compute part of the next target of the open tuple assignment, leaving the
        values still to be stored where they are? Then they are stored after it runs."""
        if ins.opname not in _TARGET_WORK:
            return False
        taken = stack[len(stack) - _operands(ins):] if _operands(ins) else []
        return not any(x is p for x in taken for p in self.parallel_pending)

    def reads_group_target(self, ins: Instr) -> bool:
        """Does ``ins`` read a location the open tuple assignment stores? Then it reads the new
        value, and the stores happen before it."""
        for target, _ in self.parallel:
            if isinstance(target, ast.Name) and ins.opname in _NAME_READS and ins.argval == target.id:
                return True
            if isinstance(target, ast.Attribute) and ins.opname == "LOAD_ATTR" and ins.argval == target.attr:
                return True
            if isinstance(target, ast.Subscript) and ins.opname in ("BINARY_SUBSCR", "BINARY_SLICE"):
                return True
        return False

    def next_is_store(self) -> bool:
        nxt = self.instrs[self.current + 1] if self.current + 1 < len(self.instrs) else None
        return nxt is not None and nxt.opname in _DURING_GROUP

    def flush_parallel(self, out: list) -> None:
        """Emit stores that had to happen together (``a, b = b, a``) as one tuple assignment."""
        if not self.parallel:
            return
        targets = [t for t, _ in self.parallel]
        vals = [val for _, val in self.parallel]
        self.parallel = []
        order = getattr(self, "parallel_order", [])
        rank = [next((k for k, x in enumerate(order) if x is val), -1) for val in vals]
        names = [t.id for t in targets if isinstance(t, ast.Name)]
        if len(names) == len(targets) == len(set(names)) and rank == sorted(rank, reverse=True):
            # stores to distinct locals in reverse order of evaluation: show source order
            targets.reverse()
            vals.reverse()
        if len(targets) == 1:
            node = ast.Assign(targets, vals[0])
        else:
            node = ast.Assign([ast.Tuple(targets, ast.Store())], ast.Tuple(vals, ast.Load()))
        self.name_repeated_parts(node, self.current_stack, out)
        # A value still waiting on the stack that reads a location the stores overwrite was read
        # before them (``LOAD_FAST x; ...; STORE_FAST x``, then the old x is used): evaluated
        # later it would see the new value, so it is evaluated into a temporary first.
        stack = self.current_stack
        for k in range(len(stack)):
            item = stack[k]
            if isinstance(item, ast.expr) and not isinstance(item, ast.Constant) \
                    and not (isinstance(item, ast.Name) and item.id.startswith("__stack_")) \
                    and any(_reads_target([item], t) for t in targets):
                self.assign_temp(item, stack, out)
        out.append(node)

    # -- helpers -----------------------------------------------------------------------
    def error(self, ins: Instr | None, message: str) -> DecompilationError:
        return DecompilationError(message, qualname=self.qualname, offset=ins.offset if ins else None,
                                  opname=ins.opname if ins else None)

    def pop(self, stack: list, ins: Instr):
        if not stack:
            raise self.error(ins, "stack underflow")
        return stack.pop()

    def popn(self, stack: list, n: int, ins: Instr) -> list:
        if n == 0:
            return []
        if len(stack) < n:
            raise self.error(ins, "stack underflow")
        items = stack[-n:]
        del stack[-n:]
        return items

    def value(self, item, ins: Instr) -> ast.expr:
        """An expression for a stack item, turning pending values into expressions."""
        if isinstance(item, ast.Set) and not item.elts:
            return ast.Call(load("set"), [], [])
        if isinstance(item, ast.expr):
            return item
        if type(item) is v.Hole and item.target is None:
            # an unpacked item used as a value without a store (Dynamo's ``UNPACK_SEQUENCE`` of a
            # graph's outputs): it gets a temporary, and the unpacking assigns to it
            name = self.new_temp()
            item.fill(store(name))
            return load(name)
        if isinstance(item, v.FunctionValue):
            return self.decompile_nested.lambda_or_error(item, ins)
        if isinstance(item, v.Converted):
            return item.value
        if isinstance(item, v.ImportValue):
            return load(item.module.split(".")[0])
        if isinstance(item, v.CellRef):
            return load(opaque.placeholder(opaque.CellOf(item.name)))
        if isinstance(item, v.ClosureCells):
            return ast.Tuple([load(opaque.placeholder(opaque.CellOf(n))) for n in item.names], ast.Load())
        if isinstance(item, types.CodeType):
            # a code object passed around as data (Dynamo builds nested functions this way)
            return load(opaque.placeholder(item))
        raise self.error(ins, f"{type(item).__name__} used as a value")

    # -- loads -------------------------------------------------------------------------
    def op_LOAD_CONST(self, ins, stack, out):
        value = ins.argval
        stack.append(value if isinstance(value, types.CodeType) else constant(value))

    def op_LOAD_FAST(self, ins, stack, out):
        bound = self.bound_names.get(ins.argval)
        stack.append(bound if bound is not None else load(ins.argval))

    def assign_pending_walrus(self, reader: ast.expr, stack: list, out: list) -> None:
        """A condition that reads a name must see a ``(name := ...)`` still waiting on the stack
        (a match subject captured before its guard): assign that value first."""
        names = {
            n.id for n in traversal.walk(reader) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)
        }
        for item in list(stack):
            if isinstance(item, ast.expr) and any(
                    isinstance(n, ast.NamedExpr) and n.target.id in names for n in traversal.walk(item)):
                self.assign_temp(item, stack, out)

    op_LOAD_DEREF = op_LOAD_FAST
    op_LOAD_CLASSDEREF = op_LOAD_FAST
    op_LOAD_NAME = op_LOAD_FAST
    op_LOAD_GLOBAL = op_LOAD_FAST

    def op_ANNOTATION_MARK(self, ins, stack, out):
        out.append(AnnotationMarkStmt(ins.argval))

    def op_LOAD_CLOSURE(self, ins, stack, out):
        stack.append(v.CellRef(ins.argval))

    def op_PUSH_NULL(self, ins, stack, out):
        stack.append(v.NULL)

    def op_LOAD_ATTR(self, ins, stack, out):
        obj = self.value(self.pop(stack, ins), ins)
        stack.append(ast.Attribute(obj, ins.argval, ast.Load()))

    def op_LOAD_ASSERTION_ERROR(self, ins, stack, out):
        stack.append(load("AssertionError"))

    def op_LOAD_BUILD_CLASS(self, ins, stack, out):
        stack.append(v.BuildClass())

    # -- stores ------------------------------------------------------------------------
    def _store(self, target: ast.expr, item, ins, stack, out) -> None:
        if isinstance(item, v.Hole):
            item.fill(target)
            return
        if isinstance(item, v.ExcValue) and isinstance(target, ast.Name):
            out.append(ExceptAsStmt(target.id))
            return
        if isinstance(item, (v.TypeParams, v.GenericBase)):
            # a PEP 695 scope names its type parameters: the statement's brackets say it
            if isinstance(item, v.TypeParams):
                self.type_params = item
            return
        if isinstance(item, v.TypeAliasValue) and isinstance(target, ast.Name) and target.id == item.name:
            out.append(ast.TypeAlias(ast.Name(item.name, ast.Store()), type_params=item.type_params,
                                     value=item.value))
            return
        if isinstance(item, v.FunctionValue) and isinstance(target, ast.Name) \
                and target.id == "__annotate_func__" and item.code.co_name == "__annotate__" \
                and not self.code.co_flags & 0x01:
            # 3.14+: a class body's annotations, computed lazily (render turns it into the
            # body's ``name: annotation`` statements)
            out.append(ClassAnnotationsStmt(item))
            return
        if isinstance(item, v.FunctionValue) and isinstance(target, ast.Name) \
                and target.id == "__annotate__" and item.code.co_name == "__annotate__" \
                and self.code.co_name == "<module>":
            # 3.14+: the module's annotations (render puts them back as ``name: annotation``)
            out.append(ModuleAnnotationsStmt(item))
            return
        if isinstance(item, v.FunctionValue) and isinstance(target, ast.Name) and (
                item.code.co_name == target.id or (item.code.co_name.startswith("__")
                                                   and target.id.endswith(item.code.co_name))):
            out.append(self.decompile_nested.function_def(item, item.code.co_name))
            return
        if isinstance(item, v.ClassValue) and isinstance(target, ast.Name) and (
                item.node.name == target.id or (item.node.name.startswith("__")
                                                and target.id.endswith(item.node.name))):
            out.append(item.node)
            return
        if isinstance(item, v.ImportValue):
            out.append(self._import_statement(item, target, ins))
            return
        if isinstance(item, v.ImportedName):
            self._import_from_statement(item, target, out, ins)
            return
        value = self.value(item, ins)
        if self.parallel and not any(value is x for x in self.parallel_pending):
            self.flush_parallel(out)
        if self.parallel or (isinstance(item, ast.expr) and not any(x is value for x in stack)
                             and (_reads_target(stack, target) or self.tuple_assignment_ahead(stack))):
            if not self.parallel:
                self.parallel_pending = [x for x in stack if isinstance(x, ast.expr)]
                # evaluation order is the order the values were completed, not their stack
                # positions (SWAP/ROT_TWO reorder the stack before the stores)
                self.parallel_order = sorted(
                    self.parallel_pending + [value], key=lambda x: getattr(x, "_seq", 0)
                )
            self.parallel.append((target, value))
            self.parallel_pending = [x for x in self.parallel_pending if x is not value]
            if not any(any(x is p for p in self.parallel_pending) for x in stack):
                self.flush_parallel(out)
            return
        if isinstance(value, ast.BinOp) and getattr(value, "inplace", False):
            self.statement(
                ast.AugAssign(to_store(target), value.op, value.right), stack, out, _writes(target)
            )
            return
        # a value still on the stack (COPY) is shared: chained assignment or walrus
        if any(x is value for x in stack):
            if out and isinstance(out[-1], ast.Assign) and getattr(out[-1], "shared_value", None) is value:
                out[-1].targets.append(target)
                return
            if isinstance(target, ast.Name):
                named = ast.NamedExpr(ast.Name(target.id, ast.Store()), value)
                for k, x in enumerate(stack):
                    if x is value:
                        stack[k] = named
                return
            self._assign_shared(target, value, stack, out)
            return
        if out and isinstance(out[-1], ast.Assign) and getattr(out[-1], "shared_value", None) is value:
            out[-1].targets.append(target)
            out[-1].shared_value = None
            return
        self.statement(ast.Assign([target], value), stack, out, _writes(target))

    def op_STORE_FAST(self, ins, stack, out):
        self._store(store(ins.argval), self.pop(stack, ins), ins, stack, out)

    op_STORE_NAME = op_STORE_FAST

    def op_STORE_DEREF(self, ins, stack, out):
        if ins.argval in self.code.co_freevars:
            self.nonlocals_declared.add(ins.argval)
        self.op_STORE_FAST(ins, stack, out)

    def op_STORE_GLOBAL(self, ins, stack, out):
        self.globals_declared.add(ins.argval)
        self.op_STORE_FAST(ins, stack, out)

    def op_STORE_ATTR(self, ins, stack, out):
        obj = self.value(self.pop(stack, ins), ins)
        item = self.pop(stack, ins)
        obj = self.shared_container(obj, stack, out)
        self._store(ast.Attribute(obj, ins.argval, ast.Store()), item, ins, stack, out)

    def op_STORE_SUBSCR(self, ins, stack, out):
        key = self.value(self.pop(stack, ins), ins)
        container = self.value(self.pop(stack, ins), ins)
        item = self.pop(stack, ins)
        container = self.shared_container(container, stack, out)
        if isinstance(container, ast.Name) and container.id == "__annotations__" \
                and isinstance(key, ast.Constant) and isinstance(key.value, str):
            annotation = self.value(item, ins)
            if self.code.co_flags & 0x1000000 and isinstance(annotation, ast.Constant) \
                    and isinstance(annotation.value, str):
                annotation = _parse_annotation(annotation)
            ann = ast.AnnAssign(store(key.value), annotation, None, 1)
            out.append(ann)
            return
        self._store(ast.Subscript(container, key, ast.Store()), item, ins, stack, out)

    def op_DELETE_FAST(self, ins, stack, out):
        node = ast.Delete([ast.Name(ins.argval, ast.Del())])
        if ins.opname == "DELETE_FAST" and not self.parallel and not _reads_name(stack, ins.argval):
            # Deleting a local has no effect the values waiting on the stack could see, so they
            # need not be evaluated first (Dynamo deletes its temporaries around a graph call).
            out.append(node)
            return
        self.statement(node, stack, out, frozenset({ins.argval}))

    op_DELETE_NAME = op_DELETE_FAST

    def op_DELETE_DEREF(self, ins, stack, out):
        # ``nonlocal v; del v`` may be the only mention of ``v``: it binds like a store
        if ins.argval in self.code.co_freevars:
            self.nonlocals_declared.add(ins.argval)
        self.op_DELETE_FAST(ins, stack, out)

    def op_DELETE_GLOBAL(self, ins, stack, out):
        self.globals_declared.add(ins.argval)
        self.op_DELETE_FAST(ins, stack, out)

    def op_DELETE_ATTR(self, ins, stack, out):
        obj = self.value(self.pop(stack, ins), ins)
        self.statement(ast.Delete([ast.Attribute(obj, ins.argval, ast.Del())]), stack, out)

    def op_DELETE_SUBSCR(self, ins, stack, out):
        key = self.value(self.pop(stack, ins), ins)
        container = self.shared_container(self.value(self.pop(stack, ins), ins), stack, out)
        self.statement(ast.Delete([ast.Subscript(container, key, ast.Del())]), stack, out)

    def op_UNPACK_SEQUENCE(self, ins, stack, out):
        nxt = self.instrs[self.current + 1] if self.current + 1 < len(self.instrs) else None
        if (
            ins.argval == 1
            and nxt is not None
            and nxt.opname in ("LOAD_CONST", "BUILD_TUPLE", "RETURN_VALUE")
            and not isinstance(stack[-1] if stack else None, (v.Hole, ast.Call))
        ):
            # ``*args: *Ts`` (PEP 646) or a type parameter default ``*Ts = *tuple[int, ...]``: the
            # one item of unpacking the value, not a store
            stack.append(ast.Starred(self.value(self.pop(stack, ins), ins), ast.Load()))
            return
        self._unpack(ins, stack, out, ins.argval, None)

    def op_UNPACK_EX(self, ins, stack, out):
        before, after = ins.argval & 0xFF, ins.argval >> 8
        self._unpack(ins, stack, out, before + 1 + after, before)

    def _unpack(self, ins, stack, out, count, star_index):
        item = self.pop(stack, ins)
        if isinstance(item, v.Hole):
            parent = item
        else:
            value = self.value(item, ins)
            parent = v.Hole(lambda target, value=value: self._assign_unpacked(target, value, out))
        group = v.TupleHole(parent, count, star_index)
        for k in reversed(range(count)):
            stack.append(group.child(k))

    def _assign_unpacked(self, target: ast.expr, value: ast.expr, out: list) -> None:
        """``a, b = value``; a value the stack still holds (COPY: ``a, b = x = f()``) stays shared,
        so the next store joins this assignment instead of evaluating it again."""
        stack = self.current_stack
        if any(x is value for x in stack):
            self._assign_shared(target, value, stack, out)
            return
        out.append(ast.Assign([target], value))

    def _assign_shared(self, target: ast.expr, value: ast.expr, stack: list, out: list) -> None:
        """``target = value`` where the stack still holds ``value``: the store that takes it next
        adds its target to this assignment (``a = b = f()``) instead of evaluating it again."""
        node = ast.Assign([target], value)
        node.shared_value = value
        self.statement(node, stack, out, _writes(target), keep=value)

    # -- stack shuffles ----------------------------------------------------------------
    def op_POP_TOP(self, ins, stack, out):
        item = self.pop(stack, ins)
        if isinstance(item, (v.Null, v.ExcValue, v.Iterator, v.ImportValue)):
            if isinstance(item, v.ImportValue) and item.fromlist is not None and item.fromlist[:1] == ("*",):
                return
            return
        if isinstance(item, v.WithEnter):
            item.fill(None)
            return
        if isinstance(item, v.Hole):
            item.fill(store("_"))
            return
        if any(x is item for x in stack):
            return  # a COPY of a value still in use (e.g. chained comparison cleanup)
        if isinstance(item, ast.Name) and item.id.startswith("__stack_"):
            return
        self.statement(ast.Expr(self.value(item, ins)), stack, out)

    def op_COPY(self, ins, stack, out):
        item = stack[-ins.argval]
        if isinstance(item, ast.expr):
            self.copied.add(id(item))
        stack.append(item)

    def op_SWAP(self, ins, stack, out):
        n = ins.argval
        stack[-1], stack[-n] = stack[-n], stack[-1]

    # -- operators ---------------------------------------------------------------------
    def op_BINARY_OP(self, ins, stack, out):
        right = self.value(self.pop(stack, ins), ins)
        left = self.value(self.pop(stack, ins), ins)
        symbol = ins.argval
        inplace = symbol.endswith("=") and symbol not in ("==", "!=", "<=", ">=")
        node = ast.BinOp(left, BINARY_OPERATORS[symbol.rstrip("=") if inplace else symbol](), right)
        if inplace:
            node.inplace = True
        stack.append(node)

    def op_BINARY_SUBSCR(self, ins, stack, out):
        key = self.value(self.pop(stack, ins), ins)
        container = self.value(self.pop(stack, ins), ins)
        stack.append(ast.Subscript(container, key, ast.Load()))

    def _unary(self, op, ins, stack):
        stack.append(ast.UnaryOp(op, self.value(self.pop(stack, ins), ins)))

    def op_UNARY_NEGATIVE(self, ins, stack, out):
        self._unary(ast.USub(), ins, stack)

    def op_UNARY_POSITIVE(self, ins, stack, out):
        self._unary(ast.UAdd(), ins, stack)

    def op_UNARY_INVERT(self, ins, stack, out):
        self._unary(ast.Invert(), ins, stack)

    def op_UNARY_NOT(self, ins, stack, out):
        self._unary(ast.Not(), ins, stack)

    def op_COMPARE_OP(self, ins, stack, out):
        right = self.value(self.pop(stack, ins), ins)
        left = self.value(self.pop(stack, ins), ins)
        stack.append(ast.Compare(left, [COMPARE_OPERATORS[ins.argval]()], [right]))

    def op_IS_OP(self, ins, stack, out):
        right = self.value(self.pop(stack, ins), ins)
        left = self.value(self.pop(stack, ins), ins)
        stack.append(ast.Compare(left, [ast.IsNot() if ins.argval else ast.Is()], [right]))

    def op_CONTAINS_OP(self, ins, stack, out):
        right = self.value(self.pop(stack, ins), ins)
        if getattr(right, "folded_constant", False) and right.args and isinstance(right.args[0], ast.Set):
            right = right.args[0]
        left = self.value(self.pop(stack, ins), ins)
        stack.append(ast.Compare(left, [ast.NotIn() if ins.argval else ast.In()], [right]))

    # -- containers --------------------------------------------------------------------
    def op_BUILD_TUPLE(self, ins, stack, out):
        raw = self.popn(stack, ins.argval, ins)
        if raw and all(isinstance(x, v.CellRef) for x in raw):
            stack.append(v.ClosureCells([x.name for x in raw]))
            return
        if raw and all(isinstance(x, v.TypeParams) for x in raw):
            stack.append(v.TypeParams([node for x in raw for node in x.nodes]))
            return
        items = [self.value(x, ins) for x in raw]
        stack.append(ast.Tuple(items, ast.Load()))

    def op_BUILD_LIST(self, ins, stack, out):
        if self.comp_kind == "list" and ins.argval == 0 and not any(
                isinstance(x, v.CompAccumulator) for x in stack):
            stack.append(v.CompAccumulator("list"))
            return
        items = [self.value(x, ins) for x in self.popn(stack, ins.argval, ins)]
        stack.append(ast.List(items, ast.Load()))

    def op_BUILD_SET(self, ins, stack, out):
        if self.comp_kind == "set" and ins.argval == 0 and not any(
                isinstance(x, v.CompAccumulator) for x in stack):
            stack.append(v.CompAccumulator("set"))
            return
        items = [self.value(x, ins) for x in self.popn(stack, ins.argval, ins)]
        stack.append(ast.Set(items))

    def op_BUILD_MAP(self, ins, stack, out):
        if self.comp_kind == "dict" and ins.argval == 0 and not any(
                isinstance(x, v.CompAccumulator) for x in stack):
            stack.append(v.CompAccumulator("dict"))
            return
        items = [self.value(x, ins) for x in self.popn(stack, 2 * ins.argval, ins)]
        stack.append(ast.Dict(items[0::2], items[1::2]))

    def op_BUILD_CONST_KEY_MAP(self, ins, stack, out):
        keys = self.pop(stack, ins)
        vals = [self.value(x, ins) for x in self.popn(stack, ins.argval, ins)]
        key_nodes = keys.elts if isinstance(keys, ast.Tuple) else [constant(k) for k in keys.value]
        stack.append(ast.Dict(list(key_nodes), vals))

    def op_BUILD_STRING(self, ins, stack, out):
        parts = []
        for x in self.popn(stack, ins.argval, ins):
            x = self.value(x, ins)
            if isinstance(x, ast.JoinedStr):
                parts.extend(x.values)
            else:
                parts.append(x)
        stack.append(ast.JoinedStr(parts))

    def op_BUILD_SLICE(self, ins, stack, out):
        items = [self.value(x, ins) for x in self.popn(stack, ins.argval, ins)]
        items = [None if isinstance(x, ast.Constant) and x.value is None else x for x in items]
        stack.append(ast.Slice(*items))

    def mutate(self, ins, stack, out, method: str, args: list) -> bool:
        """In-place change of a collection that is shared (COPY) or already spilled: a statement."""
        depth = ins.argval
        target = stack[-depth]
        shared = sum(1 for x in stack if x is target) > 1 or not isinstance(
            target, (ast.List, ast.Set, ast.Dict)
        )
        if not shared:
            return False
        self.spill(stack, out, force=(target,))
        target = stack[-depth]
        if method == "__setitem__":
            node = ast.Assign([ast.Subscript(target, args[0], ast.Store())], args[1])
        else:
            node = ast.Expr(ast.Call(ast.Attribute(target, method, ast.Load()), args, []))
        out.append(node)
        return True

    def op_LIST_APPEND(self, ins, stack, out):
        item = self.value(self.pop(stack, ins), ins)
        target = stack[-ins.argval]
        if not isinstance(target, v.CompAccumulator) and self.mutate(
                ins, stack, out, "append" if ins.opname == "LIST_APPEND" else "add", [item]):
            return
        if isinstance(target, v.CompAccumulator):
            out.append(AppendStmt(item, None))
        elif isinstance(target, (ast.List, ast.Set)):
            target.elts.append(item)
        else:
            raise self.error(ins, "LIST_APPEND to an unknown collection")

    op_SET_ADD = op_LIST_APPEND

    def op_MAP_ADD(self, ins, stack, out):
        val = self.value(self.pop(stack, ins), ins)
        key = self.value(self.pop(stack, ins), ins)
        target = stack[-ins.argval]
        if not isinstance(target, v.CompAccumulator) and self.mutate(
            ins, stack, out, "__setitem__", [key, val]
        ):
            return
        if isinstance(target, v.CompAccumulator):
            out.append(AppendStmt(val, key))
        elif isinstance(target, ast.Dict):
            target.keys.append(key)
            target.values.append(val)
        else:
            raise self.error(ins, "MAP_ADD to an unknown collection")

    def op_LIST_EXTEND(self, ins, stack, out):
        item = self.value(self.pop(stack, ins), ins)
        target = stack[-ins.argval]
        if isinstance(target, v.CompAccumulator):      # ``[*row for row in rows]`` (3.15+)
            out.append(AppendStmt(ast.Starred(item, ast.Load()), None))
            return
        if self.mutate(ins, stack, out, "extend" if ins.opname == "LIST_EXTEND" else "update", [item]):
            return
        if not isinstance(target, (ast.List, ast.Set)):
            raise self.error(ins, "extend of an unknown collection")
        if isinstance(item, ast.Tuple) and not target.elts and all(
                isinstance(e, ast.Constant) for e in item.elts):
            target.elts.extend(item.elts)  # a folded constant list/set display
        elif getattr(item, "folded_constant", False) and not target.elts and isinstance(target, ast.Set) \
                and item.args:
            target.elts.extend(item.args[0].elts)
        else:
            target.elts.append(ast.Starred(item, ast.Load()))

    op_SET_UPDATE = op_LIST_EXTEND

    def op_DICT_UPDATE(self, ins, stack, out):
        item = self.value(self.pop(stack, ins), ins)
        target = stack[-ins.argval]
        if isinstance(target, v.CompAccumulator):      # ``{**d for d in rows}`` (3.15+): no value
            out.append(AppendStmt(None, item))
            return
        if self.mutate(ins, stack, out, "update", [item]):
            return
        if not isinstance(target, ast.Dict):
            raise self.error(ins, "update of an unknown mapping")
        if isinstance(item, ast.Dict) and not target.keys:
            target.keys.extend(item.keys)
            target.values.extend(item.values)
        else:
            target.keys.append(None)
            target.values.append(item)

    op_DICT_MERGE = op_DICT_UPDATE

    def op_LIST_TO_TUPLE(self, ins, stack, out):
        item = self.value(self.pop(stack, ins), ins)
        if isinstance(item, ast.List):
            stack.append(ast.Tuple(item.elts, ast.Load()))
        else:
            stack.append(ast.Call(load("tuple"), [item], []))

    # -- calls -------------------------------------------------------------------------
    def _callable(self, ins, stack):
        items = self.popn(stack, ins.slots, ins)
        real = [x for x in items if not isinstance(x, v.Null)]
        if len(real) == 2:
            # (unbound method, self) pair from a method load: treat as bound attribute call
            func, self_arg = real
            return func, [self_arg]
        if len(real) != 1:
            raise self.error(ins, "call without a callable")
        return real[0], []

    def op_CALL(self, ins, stack, out, kwnames=()):
        args = self.popn(stack, ins.argval, ins)
        func, prefix = self._callable(ins, stack)
        if isinstance(func, v.WithExit):
            out.append(WithExitStmt(func))
            stack.append(v.NULL)
            return
        if isinstance(func, v.BuildClass):
            stack.append(self._build_class(args, kwnames, ins))
            return
        args, prefix = prefix + args, []
        npos = len(args) - len(kwnames)
        if isinstance(func, v.FunctionValue) and func.code.co_name.startswith("<generic parameters of ") \
                and not kwnames:
            # a PEP 695 statement: its scope makes the type parameters, then the def, class or alias
            stack.append(self.decompile_nested.generic_scope(func, args, ins))
            return
        if isinstance(func, v.FunctionValue) and not kwnames and npos == 1 \
                and isinstance(args[0], v.Iterator) and func.code.co_name.startswith("<") \
                and func.code.co_name in ("<listcomp>", "<setcomp>", "<dictcomp>", "<genexpr>"):
            stack.append(self.decompile_nested.comprehension(func, args[0].iterable, ins))
            return
        if not kwnames and npos == 1 and isinstance(args[0], (v.FunctionValue, v.ClassValue)) \
                and not prefix and isinstance(func, ast.expr):
            target = args[0]
            if isinstance(target, v.FunctionValue) and target.code.co_name != "<lambda>":
                target.decorators.insert(0, func)
                stack.append(target)
                return
            if isinstance(target, v.ClassValue):
                target.node.decorator_list.insert(0, func)
                stack.append(target)
                return
        func = self.value(func, ins)
        values = [self.value(a, ins) for a in prefix + args]
        pos = values[:len(values) - len(kwnames)] if kwnames else values
        kws = [
            ast.keyword(name, val)
            for name, val in zip(kwnames, values[len(values) - len(kwnames) :], strict=False)
        ]
        stack.append(ast.Call(func, pos, kws))

    def op_CALL_KW(self, ins, stack, out):
        names = self.pop(stack, ins)
        kwnames = tuple(e.value for e in names.elts) if isinstance(names, ast.Tuple) else tuple(names.value)
        self.op_CALL(ins, stack, out, kwnames)

    def op_CALL_FUNCTION_EX(self, ins, stack, out):
        kwargs = self.value(self.pop(stack, ins), ins) if ins.argval else None
        args = self.value(self.pop(stack, ins), ins)
        func, prefix = self._callable(ins, stack)
        func = self.value(func, ins)
        prefix = [self.value(p, ins) for p in prefix]
        if isinstance(args, ast.Tuple):
            pos = list(prefix) + list(args.elts)
        elif isinstance(args, ast.List):
            pos = list(prefix) + list(args.elts)
        else:
            pos = list(prefix) + [ast.Starred(args, ast.Load())]
        keywords = []
        if kwargs is not None:
            if isinstance(kwargs, ast.Dict):
                for key, val in zip(kwargs.keys, kwargs.values, strict=False):
                    if key is None:
                        keywords.append(ast.keyword(None, val))
                    elif (
                        isinstance(key, ast.Constant)
                        and isinstance(key.value, str)
                        and key.value.isidentifier()
                    ):
                        keywords.append(ast.keyword(key.value, val))
                    else:
                        keywords = [ast.keyword(None, kwargs)]
                        break
            else:
                keywords.append(ast.keyword(None, kwargs))
        stack.append(ast.Call(func, pos, keywords))

    def op_MAKE_FUNCTION(self, ins, stack, out):
        flags = ins.argval
        code = self.pop(stack, ins)
        if ins.extra.get("qualname_on_stack"):
            code, _qualname = self.pop(stack, ins), code
        if not isinstance(code, types.CodeType):
            raise self.error(ins, "MAKE_FUNCTION without a code object")
        fn = v.FunctionValue(code)
        if flags & 0x08:
            self.pop(stack, ins)  # closure cells: recreated by the compiler
        if flags & 0x04:
            fn.annotations = self._annotations(self.pop(stack, ins), ins)
        if flags & 0x02:
            kw = self.value(self.pop(stack, ins), ins)
            if isinstance(kw, ast.Dict):
                fn.kwdefaults = {k.value: val for k, val in zip(kw.keys, kw.values, strict=False)}
        if flags & 0x01:
            d = self.value(self.pop(stack, ins), ins)
            fn.defaults = list(d.elts) if isinstance(d, ast.Tuple) else []
        stack.append(fn)

    def op_SET_FUNCTION_ATTRIBUTE(self, ins, stack, out):
        fn = self.pop(stack, ins)
        attr = self.pop(stack, ins)
        flag = ins.argval
        if flag == 0x08:
            pass
        elif flag == 0x04:
            fn.annotations = self._annotations(attr, ins)
        elif flag == 0x02:
            kw = self.value(attr, ins)
            if isinstance(kw, ast.Dict):
                fn.kwdefaults = {k.value: val for k, val in zip(kw.keys, kw.values, strict=False)}
        elif flag == 0x01:
            d = self.value(attr, ins)
            fn.defaults = list(d.elts) if isinstance(d, ast.Tuple) else []
        elif flag == 0x10:
            # 3.14+: annotations are computed by an ``__annotate__`` function when asked for
            fn.annotations = self.decompile_nested.annotations_of(attr, ins)
        stack.append(fn)

    def _annotations(self, item, ins) -> dict:
        node = self.value(item, ins) if not isinstance(item, v.FunctionValue) else None
        if isinstance(node, ast.Tuple):
            elts = node.elts
            return {elts[k].value: elts[k + 1] for k in range(0, len(elts) - 1, 2)}
        if isinstance(node, ast.Dict):
            return {k.value: val for k, val in zip(node.keys, node.values, strict=False)}
        return {}

    def _build_class(self, args, kwnames, ins) -> v.ClassValue:
        body_fn, name_node, *rest = args
        if not isinstance(body_fn, v.FunctionValue):
            raise self.error(ins, "class body is not a function")
        rest = [self.value(r, ins) for r in rest]
        npos = len(rest) - len(kwnames)
        # a generic class's implicit ``Generic[...]`` base comes back from its type parameters
        bases = [b for b in rest[:npos] if not (isinstance(b, ast.Name) and b.id == ".generic_base")]
        keywords = [ast.keyword(k, val) for k, val in zip(kwnames, rest[npos:], strict=False)]
        return v.ClassValue(self.decompile_nested.class_def(body_fn, name_node.value, bases, keywords, ins))

    def op_CALL_INTRINSIC_1(self, ins, stack, out):
        name = ins.argval
        if name == "INTRINSIC_UNARY_POSITIVE":
            self.op_UNARY_POSITIVE(ins, stack, out)
        elif name == "INTRINSIC_LIST_TO_TUPLE":
            self.op_LIST_TO_TUPLE(ins, stack, out)
        elif name == "INTRINSIC_PRINT":
            self.op_PRINT_EXPR(ins, stack, out)
        elif name == "INTRINSIC_IMPORT_STAR":
            self.op_IMPORT_STAR(ins, stack, out)
            stack.append(ast.Constant(None))
        elif name in _TYPE_PARAM_KINDS:
            param = self._type_param_name(self.pop(stack, ins), ins)
            stack.append(v.TypeParams([_TYPE_PARAM_KINDS[name](name=param)]))
        elif name in ("INTRINSIC_TYPEVAR_WITH_BOUND", "INTRINSIC_TYPEVAR_WITH_CONSTRAINTS"):
            bound = self.decompile_nested.lazy_expression(self.pop(stack, ins), ins)
            param = self._type_param_name(self.pop(stack, ins), ins)
            stack.append(v.TypeParams([ast.TypeVar(name=param, bound=bound)]))
        elif name == "INTRINSIC_SET_TYPEPARAM_DEFAULT":
            default = self.decompile_nested.lazy_expression(self.pop(stack, ins), ins)
            params = self.pop(stack, ins)
            if not isinstance(params, v.TypeParams) or len(params.nodes) != 1:
                raise self.error(ins, "type parameter default without its parameter")
            params.nodes[0].default_value = default
            stack.append(params)
        elif name == "INTRINSIC_SET_FUNCTION_TYPE_PARAMS":
            params = self.pop(stack, ins)
            fn = self.pop(stack, ins)
            if not isinstance(params, v.TypeParams) or not isinstance(fn, v.FunctionValue):
                raise self.error(ins, "type parameters for something other than a function")
            fn.type_params = params.nodes
            stack.append(fn)
        elif name == "INTRINSIC_SUBSCRIPT_GENERIC":
            self.pop(stack, ins)
            stack.append(v.GenericBase())
        else:
            raise self.error(ins, f"intrinsic {name} not supported")

    def _type_param_name(self, item, ins) -> str:
        if not (isinstance(item, ast.Constant) and isinstance(item.value, str)):
            raise self.error(ins, "type parameter without a name")
        return item.value

    def op_TYPE_ALIAS(self, ins, stack, out):
        fn = self.pop(stack, ins)
        params = self.pop(stack, ins)
        name = self._type_param_name(self.pop(stack, ins), ins)
        value = self.decompile_nested.lazy_expression(fn, ins)
        stack.append(v.TypeAliasValue(name, params.nodes if isinstance(params, v.TypeParams) else [], value))

    # -- template strings (3.14+) ------------------------------------------------------
    def _format_spec(self, has_spec: bool, ins, stack) -> ast.JoinedStr | None:
        """The format spec on top of the stack (f-string and template fields), as a JoinedStr."""
        if not has_spec:
            return None
        spec = self.value(self.pop(stack, ins), ins)
        return spec if isinstance(spec, ast.JoinedStr) else ast.JoinedStr([spec])

    def op_BUILD_INTERPOLATION(self, ins, stack, out):
        conversion, has_spec = ins.argval
        spec = self._format_spec(has_spec, ins, stack)
        text = self.pop(stack, ins)
        value = self.value(self.pop(stack, ins), ins)
        if not (isinstance(text, ast.Constant) and isinstance(text.value, str)):
            raise self.error(ins, "interpolation without its expression text")
        stack.append(ast.Interpolation(value=value, str=_interpolation_text(text.value),
                                       conversion=-1 if conversion is None else ord(conversion),
                                       format_spec=spec))

    def op_BUILD_TEMPLATE(self, ins, stack, out):
        interpolations = self.value(self.pop(stack, ins), ins)
        strings = self.value(self.pop(stack, ins), ins)
        parts = _tuple_items(interpolations)
        texts = _tuple_items(strings)
        if parts is None or texts is None or len(texts) != len(parts) + 1 \
                or not all(isinstance(t, ast.Constant) and isinstance(t.value, str) for t in texts):
            raise self.error(ins, "unrecognised template string")
        values: list = []
        for text, part in zip([t.value for t in texts], [*parts, None], strict=True):
            if text:
                values.append(ast.Constant(text))
            if part is not None:
                values.append(part)
        stack.append(ast.TemplateStr(values))

    # -- f-strings ---------------------------------------------------------------------
    def op_FORMAT_VALUE(self, ins, stack, out):
        conversion, has_spec = ins.argval
        spec = self._format_spec(has_spec, ins, stack)
        item = self.pop(stack, ins)
        if isinstance(item, v.Converted):
            conversion = conversion or item.conversion
            item = item.value
        conv = -1 if conversion is None else ord(conversion)
        stack.append(ast.JoinedStr([ast.FormattedValue(self.value(item, ins), conv, spec)]))

    def op_CONVERT_VALUE(self, ins, stack, out):
        item = self.value(self.pop(stack, ins), ins)
        stack.append(v.Converted(item, ins.argval))

    # -- iteration, generators ---------------------------------------------------------
    def op_GET_ITER(self, ins, stack, out):
        stack.append(v.Iterator(self.value(self.pop(stack, ins), ins)))

    def op_GET_AITER(self, ins, stack, out):
        stack.append(v.Iterator(self.value(self.pop(stack, ins), ins), is_async=True))

    def op_YIELD_VALUE(self, ins, stack, out):
        item = self.pop(stack, ins)
        value = self.value(item, ins)
        if isinstance(value, ast.Constant) and value.value is None and ins.extra.get("bare", True):
            stack.append(ast.Yield(None))
        else:
            stack.append(ast.Yield(value))

    def op_YIELD_FROM(self, ins, stack, out):
        stack.append(ast.YieldFrom(self.value(self.pop(stack, ins), ins)))

    def op_GET_YIELD_FROM_ITER(self, ins, stack, out):
        pass  # the iterable stays; YIELD_FROM consumes it

    def op_AWAIT(self, ins, stack, out):
        item = self.pop(stack, ins)
        if isinstance(item, v.WithEnter):
            item.is_async = True
            stack.append(item)
            return
        if isinstance(item, v.Null):
            stack.append(item)  # awaiting __aexit__(None, None, None): part of the with exit
            return
        value = self.value(item, ins)
        if getattr(value, "awaited_comprehension", False):
            stack.append(value)
            return
        stack.append(ast.Await(value))

    def op_GET_AWAITABLE(self, ins, stack, out):
        pass

    # -- with --------------------------------------------------------------------------
    def op_BEFORE_WITH(self, ins, stack, out):
        manager = self.value(self.pop(stack, ins), ins)
        stack.append(v.WithExit(manager))
        stack.append(v.WithEnter(manager))

    def op_BEFORE_ASYNC_WITH(self, ins, stack, out):
        manager = self.value(self.pop(stack, ins), ins)
        stack.append(v.WithExit(manager, is_async=True))
        stack.append(v.WithEnter(manager, is_async=True))

    # -- exceptions --------------------------------------------------------------------
    def op_PUSH_EXC_INFO(self, ins, stack, out):
        exc = self.pop(stack, ins) if stack else v.ExcValue()
        stack.append(v.ExcState())
        stack.append(exc if isinstance(exc, v.ExcValue) else v.ExcValue())

    def op_POP_EXCEPT(self, ins, stack, out):
        item = self.pop(stack, ins)
        if not isinstance(item, v.ExcState):
            raise self.error(ins, "POP_EXCEPT without exception state")
        out.append(PopExceptStmt())

    def op_CHECK_EXC_MATCH(self, ins, stack, out):
        typ = self.value(self.pop(stack, ins), ins)
        node = ast.Call(load("__exception_matches__"), [typ], [])
        stack.append(node)

    def op_CHECK_EG_MATCH(self, ins, stack, out):
        typ = self.value(self.pop(stack, ins), ins)
        self.pop(stack, ins)
        stack.append(v.ExcValue())
        stack.append(ast.Call(load("__exception_group_matches__"), [typ], []))

    def op_WITH_EXCEPT_START(self, ins, stack, out):
        stack.append(ast.Call(load("__with_exit_suppresses__"), [], []))

    def _raise(self, ins, stack) -> ast.Raise:
        n = ins.argval
        items = [self.value(x, ins) for x in self.popn(stack, n, ins)]
        if n == 0:
            return ast.Raise(None, None)
        if n == 1:
            return ast.Raise(items[0], None)
        return ast.Raise(items[0], items[1])

    # -- imports -----------------------------------------------------------------------
    def op_IMPORT_NAME(self, ins, stack, out):
        fromlist = self.pop(stack, ins)
        level = self.pop(stack, ins)
        names = None
        if isinstance(fromlist, ast.Tuple):
            names = tuple(e.value for e in fromlist.elts)
        elif isinstance(fromlist, ast.Constant) and fromlist.value is not None:
            names = tuple(fromlist.value)
        stack.append(v.ImportValue(ins.argval, level.value if isinstance(level, ast.Constant) else 0, names))

    def op_IMPORT_FROM(self, ins, stack, out):
        module = stack[-1]
        if not isinstance(module, v.ImportValue):
            raise self.error(ins, "IMPORT_FROM without a module")
        if module.fromlist is None:
            stack.append(v.ImportValue(module.module, module.level, None, module.attrs + (ins.argval,)))
        else:
            stack.append(v.ImportedName(module, ins.argval))

    def op_IMPORT_STAR(self, ins, stack, out):
        module = self.pop(stack, ins)
        out.append(ast.ImportFrom(module.module or None, [ast.alias("*")], module.level))

    def _import_statement(self, item: v.ImportValue, target, ins):
        if not isinstance(target, ast.Name):
            raise self.error(ins, "import stored into a non-name")
        if item.fromlist is not None:
            raise self.error(ins, "import with a fromlist stored directly")
        top = item.module.split(".")[0]
        if item.attrs or target.id != top:
            return ast.Import([ast.alias(item.module, target.id)])
        return ast.Import([ast.alias(item.module, None)])

    def _import_from_statement(self, item: v.ImportedName, target, out, ins):
        if not isinstance(target, ast.Name):
            raise self.error(ins, "imported name stored into a non-name")
        alias = ast.alias(item.name, None if target.id == item.name else target.id)
        last = out[-1] if out else None
        if isinstance(last, ast.ImportFrom) and getattr(last, "source", None) is item.source:
            last.names.append(alias)
            return
        node = ast.ImportFrom(item.source.module or None, [alias], item.source.level)
        node.source = item.source
        out.append(node)

    # -- class bodies and misc ---------------------------------------------------------
    def op_SETUP_ANNOTATIONS(self, ins, stack, out):
        pass

    def op_PRINT_EXPR(self, ins, stack, out):
        out.append(ast.Expr(self.value(self.pop(stack, ins), ins)))

    def op_GET_LEN(self, ins, stack, out):
        stack.append(ast.Call(load("len"), [self.value(stack[-1], ins)], []))

    def op_LOAD_LOCALS(self, ins, stack, out):
        stack.append(v.LoadLocals())

    def op_LOAD_FROM_DICT_OR_DEREF(self, ins, stack, out):
        self.pop(stack, ins)
        stack.append(load(ins.argval))

    op_LOAD_FROM_DICT_OR_GLOBALS = op_LOAD_FROM_DICT_OR_DEREF
