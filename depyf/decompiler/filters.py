"""A comprehension's ``if`` clauses, read back from the statements the structurer gives its loop body.

The compiler turns ``[e for i in it if c]`` into a loop whose body jumps back to the loop head when
``c`` fails. With ``and``/``or``/chained comparisons in ``c`` the structurer reads those jumps as
nested ``if`` statements that end in ``continue``. This module folds such a statement list back into
one condition that holds exactly when control runs through to the element, evaluating the same tests
in the same order.
"""

from __future__ import annotations

import ast

from depyf.decompiler.expressions import bool_op, negate

# Outcomes that evaluate nothing: control always / never runs through.
ALWAYS = "always"
NEVER = "never"

Condition = ast.expr | str


def runs_through(stmts: list[ast.stmt]) -> Condition | None:
    """The condition under which control runs off the end of ``stmts``; ``None`` when they do more
    than test and ``continue``."""
    parts: list[ast.expr] = []
    for stmt in stmts:
        if isinstance(stmt, ast.Continue):
            return _conjunction(parts, NEVER)
        if isinstance(stmt, ast.Pass):
            continue
        if not isinstance(stmt, ast.If):
            return None
        then, orelse = runs_through(stmt.body), runs_through(stmt.orelse)
        if then is None or orelse is None:
            return None
        part = _choose(stmt.test, then, orelse)
        if part is NEVER:
            return _conjunction(parts, NEVER)
        if part is not ALWAYS:
            parts.append(part)
    return _conjunction(parts, ALWAYS)


def _conjunction(parts: list[ast.expr], last: str) -> Condition:
    if last is NEVER:
        if not parts:
            return NEVER
        parts = [*parts, ast.Constant(False)]
    if not parts:
        return ALWAYS
    result = parts[0]
    for part in parts[1:]:
        result = bool_op(ast.And, result, part)
    return result


def _choose(test: ast.expr, then: Condition, orelse: Condition) -> Condition:
    """``then if test else orelse`` with the constant outcomes folded into ``and``/``or``."""
    if then is ALWAYS and orelse is ALWAYS:
        return bool_op(ast.Or, test, ast.Constant(True))   # the test is still evaluated
    if then is NEVER and orelse is NEVER:
        return bool_op(ast.And, test, ast.Constant(False))
    if then is ALWAYS:
        return test if orelse is NEVER else bool_op(ast.Or, test, orelse)
    if then is NEVER:
        return negate(test) if orelse is ALWAYS else bool_op(ast.And, negate(test), orelse)
    if orelse is ALWAYS:
        return bool_op(ast.Or, negate(test), then)
    if orelse is NEVER:
        return bool_op(ast.And, test, then)
    return ast.IfExp(test, then, orelse)


def as_expression(condition: Condition) -> ast.expr:
    """An ``if`` clause for ``condition`` (one that never holds is written ``False``)."""
    if condition is ALWAYS:
        return ast.Constant(True)
    if condition is NEVER:
        return ast.Constant(False)
    return condition
