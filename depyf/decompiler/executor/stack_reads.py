"""Which values on the symbolic stack read or write a name, and how often a value occurs in
them: what the ordering machinery consults before it lets a store or a call run ahead."""

from __future__ import annotations

import ast

from depyf.decompiler import traversal
from depyf.decompiler import values as v
from depyf.decompiler.instructions import Instr
from depyf.decompiler.slices import as_slice_object

_STORES = frozenset({"STORE_FAST", "STORE_NAME", "STORE_DEREF", "STORE_GLOBAL", "STORE_ATTR",
                     "STORE_SUBSCR"})


# instructions that may come between the stores of one tuple assignment (computing targets, or
# unpacking a value for a nested target: ``a, (b, c) = x, y``)
_DURING_GROUP = _STORES | {"LOAD_FAST", "LOAD_CONST", "LOAD_NAME", "LOAD_GLOBAL", "LOAD_DEREF",
                           "LOAD_ATTR", "BINARY_SUBSCR", "BINARY_OP", "SWAP", "COPY", "PUSH_NULL",
                           "UNPACK_SEQUENCE", "UNPACK_EX"}


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
    if isinstance(target, (ast.Tuple, ast.List)):   # ``a, (b, *c) = ...``: any of its locations
        return any(_reads_target(stack, t) for t in target.elts)
    if isinstance(target, ast.Starred):
        return _reads_target(stack, target.value)
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


# For the structurer, which names pending values the same way.
replace_in = traversal.replace_in


replace_everywhere = _replace_everywhere
