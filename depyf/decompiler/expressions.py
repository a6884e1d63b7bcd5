"""Small helpers that build ast expressions the way the compiler would read them back."""

from __future__ import annotations

import ast
import math

from depyf.decompiler import opaque

BINARY_OPERATORS = {
    "+": ast.Add, "-": ast.Sub, "*": ast.Mult, "/": ast.Div, "//": ast.FloorDiv, "%": ast.Mod,
    "**": ast.Pow, "<<": ast.LShift, ">>": ast.RShift, "&": ast.BitAnd, "|": ast.BitOr, "^": ast.BitXor,
    "@": ast.MatMult,
}
COMPARE_OPERATORS = {
    "<": ast.Lt, "<=": ast.LtE, "==": ast.Eq, "!=": ast.NotEq, ">": ast.Gt, ">=": ast.GtE,
}


def load(name: str) -> ast.Name:
    return ast.Name(name, ast.Load())


def store(name: str) -> ast.Name:
    return ast.Name(name, ast.Store())


def constant(value: object, *, as_set: bool = False) -> ast.expr:
    """An expression that evaluates to ``value`` (a code constant).

    Objects no literal spells (``torch.float32`` in Dynamo's code) become placeholder names; see
    ``opaque``."""
    if not isinstance(value, (tuple, frozenset)) and not opaque.is_literal(value):
        return load(opaque.placeholder(value))
    if type(value) is slice:
        parts = [None if v is None else constant(v) for v in (value.start, value.stop, value.step)]
        return ast.Slice(*parts)
    if isinstance(value, tuple):
        return ast.Tuple([constant(v) for v in value], ast.Load())
    if isinstance(value, frozenset):
        elts = [constant(v) for v in value]
        if as_set and elts:
            return ast.Set(elts)
        call = ast.Call(load("frozenset"), [ast.Set(elts)] if elts else [], [])
        call.folded_constant = True  # stands for a constant, not a call the code makes
        return call
    if isinstance(value, float) and math.isnan(value):
        return ast.Call(load("float"), [ast.Constant("nan")], [])
    if isinstance(value, complex) and not _complex_round_trips(value):
        return ast.Call(load("complex"), [constant(value.real), constant(value.imag)], [])
    if isinstance(value, float) and value == 0.0 and math.copysign(1.0, value) < 0:
        return ast.UnaryOp(ast.USub(), ast.Constant(0.0))
    if isinstance(value, (int, float)) and not isinstance(value, bool) and value < 0:
        # written as a unary minus so the printer parenthesises it: (-1) ** x
        return ast.UnaryOp(ast.USub(), ast.Constant(-value))
    return ast.Constant(value)


def _complex_round_trips(value: complex) -> bool:
    try:
        back = complex(eval(ast.unparse(ast.Constant(value)), {}))  # literal text we just printed
    except Exception:
        return False
    same = lambda a, b: (a == b and math.copysign(1, a) == math.copysign(1, b)) or (a != a and b != b)  # noqa: E731
    return same(back.real, value.real) and same(back.imag, value.imag)


def to_store(expr: ast.expr) -> ast.expr:
    """The same expression used as an assignment target."""
    if isinstance(expr, ast.Name):
        return ast.Name(expr.id, ast.Store())
    if isinstance(expr, ast.Attribute):
        return ast.Attribute(expr.value, expr.attr, ast.Store())
    if isinstance(expr, ast.Subscript):
        return ast.Subscript(expr.value, expr.slice, ast.Store())
    if isinstance(expr, (ast.Tuple, ast.List)):
        return type(expr)([to_store(e) for e in expr.elts], ast.Store())
    if isinstance(expr, ast.Starred):
        return ast.Starred(to_store(expr.value), ast.Store())
    return expr


def to_load(expr: ast.expr) -> ast.expr:
    if isinstance(expr, ast.Name):
        return ast.Name(expr.id, ast.Load())
    if isinstance(expr, ast.Attribute):
        return ast.Attribute(expr.value, expr.attr, ast.Load())
    if isinstance(expr, ast.Subscript):
        return ast.Subscript(expr.value, expr.slice, ast.Load())
    if isinstance(expr, (ast.Tuple, ast.List)):
        return type(expr)([to_load(e) for e in expr.elts], ast.Load())
    if isinstance(expr, ast.Starred):
        return ast.Starred(to_load(expr.value), ast.Load())
    return expr


def negate(expr: ast.expr) -> ast.expr:
    """``not expr``, simplified where that is exact (never flips ``<`` into ``>=``)."""
    if isinstance(expr, ast.UnaryOp) and isinstance(expr.op, ast.Not):
        return expr.operand
    if isinstance(expr, ast.BoolOp) and any(isinstance(e, ast.UnaryOp) and isinstance(e.op, ast.Not)
                                            for e in expr.values):
        # De Morgan, exact for truthiness (negate is only used on conditions)
        flipped = ast.Or if isinstance(expr.op, ast.And) else ast.And
        return ast.BoolOp(flipped(), [negate(e) for e in expr.values])
    if isinstance(expr, ast.Compare) and len(expr.ops) == 1 and type(expr.ops[0]) in _FLIPPED_TESTS:
        return ast.Compare(expr.left, [_FLIPPED_TESTS[type(expr.ops[0])]()], expr.comparators)
    return ast.UnaryOp(ast.Not(), expr)


# the comparisons whose negation is another operator exactly (``<`` is no ``not >=`` for NaN)
_FLIPPED_TESTS = {ast.Is: ast.IsNot, ast.IsNot: ast.Is, ast.In: ast.NotIn, ast.NotIn: ast.In}


def negated_operand(expr: ast.expr) -> ast.expr:
    """``not expr`` as an operand of ``and``/``or``. A comparison by ``is`` or ``in`` keeps the
    operator the bytecode tested (``not (b not in c)``): negating the whole condition then gives
    it back by De Morgan (``not a or b not in c``, not ``not (a and b in c)``, which compiles to
    other instructions). Where no negation follows, ``fold_negated_tests`` flips it at the end,
    as the compiler itself does."""
    if isinstance(expr, ast.Compare) and len(expr.ops) == 1 and type(expr.ops[0]) in _FLIPPED_TESTS:
        return ast.UnaryOp(ast.Not(), expr)
    return negate(expr)


def fold_negated_tests(nodes: list[ast.AST]) -> bool:
    """Replace each ``not (a is b)`` / ``not (a in b)`` among ``nodes`` (every node of a tree)
    with ``a is not b`` / ``a not in b``: the compiler folds the one into the other, so the
    instructions are the same. True where one was replaced."""
    def negated_test(node) -> bool:
        return node.__class__ is ast.UnaryOp and node.op.__class__ is ast.Not \
            and node.operand.__class__ is ast.Compare and len(node.operand.ops) == 1 \
            and type(node.operand.ops[0]) in _FLIPPED_TESTS

    if not any(negated_test(node) for node in nodes):
        return False
    for parent in nodes:
        for name in parent._fields:
            value = getattr(parent, name, None)
            if negated_test(value):
                setattr(parent, name, negate(value.operand))
            elif value.__class__ is list:
                for k, item in enumerate(value):
                    if negated_test(item):
                        value[k] = negate(item.operand)
    return True


def same(a: ast.AST | None, b: ast.AST | None) -> bool:
    """Structural equality of two ast nodes (locations ignored)."""
    if a is None or b is None:
        return a is b
    return ast.dump(a) == ast.dump(b)


def bool_op(op: type, left: ast.expr, right: ast.expr) -> ast.BoolOp:
    """``left op right`` as one flat ``BoolOp``: an operand that is itself ``op`` gives its values.

    Exact on either side (``a and (b and c)`` evaluates and returns as ``a and b and c``), and
    needed: each nested level is a parenthesis the parser counts (a few hundred terms nested stop
    parsing), while one flat ``BoolOp`` of any length parses."""
    values = []
    for side in (left, right):
        if isinstance(side, ast.BoolOp) and isinstance(side.op, op):
            values.extend(side.values)
        else:
            values.append(side)
    return ast.BoolOp(op(), values)
