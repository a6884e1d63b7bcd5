"""A comprehension's clauses from the statements its code was read as: each ``for`` loop a
generator, the tests that go on to the next item its ``if`` clauses, the append or ``yield``
innermost its element."""

from __future__ import annotations

import ast
import types

from depyf.decompiler.errors import DecompilationError
from depyf.decompiler.expressions import negate
from depyf.decompiler.filters import ALWAYS, NEVER, runs_through
from depyf.decompiler.pseudo_statements import AppendStmt


def comprehension_node(kind: str | None, element: tuple, generators: list) -> ast.expr:
    """The comprehension of ``kind`` (list, set, dict; None: a generator expression)."""
    if kind == "list":
        return ast.ListComp(element[0], generators)
    if kind == "set":
        return ast.SetComp(element[0], generators)
    if kind == "dict":
        return ast.DictComp(element[1], element[0], generators)
    return ast.GeneratorExp(element[0], generators)


def comprehension_parts(body: list, generators: list, code: types.CodeType) -> tuple:
    """Read the statements of a comprehension's code (its loops, tests and the append or yield
    at the heart) into ``generators``; the element (and, for a dict, the value) it makes."""
    qualname = getattr(code, "co_qualname", code.co_name)
    fail = DecompilationError("unrecognised comprehension body", qualname=qualname)
    while True:
        if len(body) == 1 and isinstance(body[0], (ast.For, ast.AsyncFor)) and not body[0].orelse:
            loop = body[0]
            generators.append(ast.comprehension(loop.target, loop.iter, [],
                                                int(isinstance(loop, ast.AsyncFor))))
            body = loop.body
            continue
        if not generators:
            raise fail
        # ``for y in [x]``: the compiler binds the one item without a loop (3.9+)
        bind = next((j for j, stmt in enumerate(body[:-1]) if _binds_locals_of(stmt, code)), None)
        if bind is None:
            bind = max(len(body) - 1, 0)
        elif bind == 0:
            item = ast.List([body[0].value], ast.Load())
            generators.append(ast.comprehension(body[0].targets[0], item, [], 0))
            body = body[1:]
            continue
        tests, body = body[:bind], body[bind:]
        if tests:   # tests that ``continue`` to the next item: the clause is when they run through
            condition = runs_through(tests)
            if condition is None or condition is NEVER:
                raise fail
            if condition is not ALWAYS:
                generators[-1].ifs.append(condition)
            continue
        last = body[0] if body else None
        if isinstance(last, ast.If):   # an empty branch also goes on to the next item
            if not last.orelse or runs_through(last.orelse) is NEVER:
                generators[-1].ifs.append(last.test)
                body = last.body
                continue
            if runs_through(last.body) is NEVER:
                generators[-1].ifs.append(negate(last.test))
                body = last.orelse
                continue
        if len(body) == 1 and isinstance(body[0], AppendStmt):
            stmt = body[0]
            return (stmt.value, stmt.key) if stmt.key is not None else (stmt.value, None)
        if len(body) == 1 and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Yield):
            return (body[0].value.value or ast.Constant(None), None)    # (a bare yield: None)
        raise fail


def _binds_locals_of(stmt: ast.stmt, code: types.CodeType) -> bool:
    """Is ``stmt`` an assignment to variables of ``code`` alone (no temporaries, attributes or
    items): what a comprehension's ``for`` over a one-item display compiles to?"""
    if not isinstance(stmt, ast.Assign) or len(stmt.targets) != 1:
        return False
    names = code.co_varnames + code.co_cellvars
    pending = [stmt.targets[0]]
    while pending:
        target = pending.pop()
        if isinstance(target, (ast.Tuple, ast.List)):
            pending.extend(target.elts)
        elif isinstance(target, ast.Starred):
            pending.append(target.value)
        elif not (isinstance(target, ast.Name) and target.id in names):
            return False
    return True
