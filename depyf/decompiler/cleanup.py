"""Readability rewrites on the recovered statements; each keeps behaviour exactly."""

from __future__ import annotations

import ast

from depyf.decompiler.executor import AppendStmt, PopExceptStmt, WithExitStmt
from depyf.decompiler.expressions import negate

_TERMINATORS = (ast.Return, ast.Raise, ast.Continue, ast.Break)


def terminates(body: list[ast.stmt]) -> bool:
    """True when control never falls off the end of ``body``."""
    if not body:
        return False
    last = body[-1]
    if isinstance(last, _TERMINATORS):
        return True
    if isinstance(last, ast.If):
        return terminates(last.body) and terminates(last.orelse)
    return False


def tidy(body: list[ast.stmt]) -> list[ast.stmt]:
    """Apply every rewrite, bottom-up."""
    out: list[ast.stmt] = []
    for stmt in body:
        if isinstance(stmt, (PopExceptStmt, WithExitStmt)):
            continue
        for name in ("body", "orelse", "finalbody"):
            inner = getattr(stmt, name, None)
            if isinstance(inner, list) and inner and isinstance(inner[0], ast.stmt):
                setattr(stmt, name, tidy(inner))
        if isinstance(stmt, ast.Try):
            for h in stmt.handlers:
                h.body = tidy(h.body) or [ast.Pass()]
        for name in ("body",):
            if hasattr(stmt, name) and isinstance(getattr(stmt, name), list) and not getattr(stmt, name) \
                    and not isinstance(stmt, ast.Module):
                setattr(stmt, name, [ast.Pass()])
        if isinstance(stmt, ast.match_case if hasattr(ast, "match_case") else ()):
            pass
        out.extend(_rewrite(stmt))
    return _drop_dead(out)


def _rewrite(stmt: ast.stmt) -> list[ast.stmt]:
    if isinstance(stmt, ast.If):
        if not stmt.body or all(isinstance(s, ast.Pass) for s in stmt.body):
            if stmt.orelse:
                return [ast.If(negate(stmt.test), stmt.orelse, [])]
            stmt.body = [ast.Pass()]
        # if c: <ends>  else: rest   ->   if c: <ends>  rest   (rest not an elif chain)
        if stmt.orelse and terminates(stmt.body) and not (
                len(stmt.orelse) == 1 and isinstance(stmt.orelse[0], ast.If)):
            rest = stmt.orelse
            stmt.orelse = []
            return [stmt, *rest]
        return [stmt]
    if isinstance(stmt, (ast.With, ast.AsyncWith)) and len(stmt.body) == 1 \
            and type(stmt.body[0]) is type(stmt):
        inner = stmt.body[0]
        return [type(stmt)(stmt.items + inner.items, inner.body)]
    if isinstance(stmt, ast.While) and _is_true(stmt.test) and not stmt.orelse and stmt.body:
        first = stmt.body[0]
        if isinstance(first, ast.If) and not first.orelse and len(first.body) == 1 \
                and isinstance(first.body[0], ast.Break):
            rest = stmt.body[1:] or [ast.Pass()]
            return [ast.While(negate(first.test), rest, [])]
    return [stmt]


def _drop_dead(body: list[ast.stmt]) -> list[ast.stmt]:
    for k, stmt in enumerate(body):
        if isinstance(stmt, _TERMINATORS) and k + 1 < len(body):
            return body[:k + 1]
    return body


def _is_true(expr: ast.expr) -> bool:
    return isinstance(expr, ast.Constant) and expr.value is True


def strip_trailing_return_none(body: list[ast.stmt]) -> list[ast.stmt]:
    if body and isinstance(body[-1], ast.Return) and (
            body[-1].value is None or (isinstance(body[-1].value, ast.Constant) and body[-1].value.value is None)):
        return body[:-1]
    return body


def has_append(body) -> bool:
    return any(isinstance(n, AppendStmt) for n in ast.walk(ast.Module(body=body, type_ignores=[])))
