"""Readability rewrites on the recovered statements; each keeps behaviour exactly."""

from __future__ import annotations

import ast
import re

from depyf.decompiler import traversal
from depyf.decompiler.expressions import negate
from depyf.decompiler.pseudo_statements import PopExceptStmt, WithExitStmt

_TERMINATORS = (ast.Return, ast.Raise, ast.Continue, ast.Break)
_TRY_NODES = (ast.Try, getattr(ast, "TryStar", ast.Try))


_TEMPORARY = re.compile(r"^__stack_\d+$")


def terminates(body: list[ast.stmt], through_try: bool = False) -> bool:
    """True when control never falls off the end of ``body``: it ends in a return, raise, break or
    continue, or in an if whose branches all end so. With ``through_try``, also in a try
    statement whose finally body ends so or whose body (or else clause) and except clauses all
    do. (The tidying rewrites below ask without it: lifting the code after such a try statement
    out of an ``else`` would leave the ``return None`` the compiler copied into the try body
    written out in every branch of an ``elif`` chain.)"""
    if not body:
        return False
    last = body[-1]
    if isinstance(last, _TERMINATORS):
        return True
    if isinstance(last, ast.If):
        return terminates(last.body, through_try) and terminates(last.orelse, through_try)
    if through_try and isinstance(last, _TRY_NODES):
        if terminates(last.finalbody, True):
            return True
        body_ends = terminates(last.body, True) or terminates(last.orelse, True)
        return body_ends and all(terminates(h.body, True) for h in last.handlers)
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
        if isinstance(stmt, _TRY_NODES):
            for h in stmt.handlers:
                h.body = tidy(h.body) or [ast.Pass()]
        for name in ("body",):
            if hasattr(stmt, name) and isinstance(getattr(stmt, name), list) and not getattr(stmt, name) \
                    and not isinstance(stmt, ast.Module):
                setattr(stmt, name, [ast.Pass()])
        if isinstance(stmt, ast.Match):
            for case in stmt.cases:
                case.body = tidy(case.body) or [ast.Pass()]
        out.extend(_rewrite(stmt))
    return share_copied_returns(hoist_copied_returns(_drop_dead(out)))


def hoist_copied_returns(body: list[ast.stmt]) -> list[ast.stmt]:
    """A ``return <constant>`` copied into the ends of a try statement or a with body, back to
    one ``return`` after the statement.

    Compilers that copy return tails (``Features.copies_return_tails``) copy the small returning block
    after a try statement into the end of its body and of each except clause (some into a with body
    too, after the exit call). A constant return
    can neither raise nor have effects, so running it inside or after the statement is the same;
    every clause that does not end in the copy must end otherwise (return, raise...), or it
    would now reach the return instead of falling off.
    """
    if not body:
        return body
    last = body[-1]
    if isinstance(last, _TRY_NODES) and not last.finalbody and not last.orelse and last.body:
        final = last.body[-1]
        ends = [h.body for h in last.handlers]
        if _constant_copy(final) and any(_same_return(b[-1], final) for b in ends) \
                and all(_same_return(b[-1], final) or terminates(b) for b in ends):
            last.body = last.body[:-1] or [ast.Pass()]
            for handler in last.handlers:
                if _same_return(handler.body[-1], final):
                    handler.body = handler.body[:-1] or [ast.Pass()]
            return [*body, final]
    if len(body) >= 2 and isinstance(body[-2], (ast.With, ast.AsyncWith)) and _constant_copy(body[-1]) \
            and _same_return(body[-2].body[-1], body[-1]):
        body[-2].body = body[-2].body[:-1] or [ast.Pass()]
    return body


def _constant_copy(stmt: ast.stmt) -> bool:
    return _is_copied_return(stmt) and (stmt.value is None or isinstance(stmt.value, ast.Constant))


def share_copied_returns(body: list[ast.stmt]) -> list[ast.stmt]:
    """``if c: A; return x`` then ``B; return x`` -> ``if c: A else: B`` then one ``return x``.

    Compilers that copy return tails copy a small ``return`` statement into every branch that
    reaches it; the copies keep the statement's source line, so two equal returns on one line were
    one return in the source. Working from the end rebuilds an elif chain branch by branch, and
    ``if c: return a`` before ``return b`` on the same line is ``return a if c else b``.
    """
    if len(body) < 2 or not _is_copied_return(body[-1]):
        return body
    final = body[-1]
    for k in range(len(body) - 2, -1, -1):
        stmt = body[k]
        if k == len(body) - 2 and _conditional_return(stmt, final):
            # ``return a if c else b``: the RETURN copied into both arms
            merged = ast.Return(ast.IfExp(stmt.test, stmt.body[0].value, final.value))
            merged.source_line = final.source_line
            body = body[:k] + [merged]
            final = merged
            continue
        if not isinstance(stmt, ast.If) or len(stmt.body) < 2 or not _same_return(stmt.body[-1], final):
            continue
        if stmt.orelse:
            # both branches return: the if is the last statement before the return copy
            if k != len(body) - 2 or len(stmt.orelse) < 2 or not _same_return(stmt.orelse[-1], final):
                continue
            rest = stmt.orelse[:-1]
        else:
            rest = body[k + 1:-1]
        body = body[:k] + [ast.If(stmt.test, stmt.body[:-1], rest)] + [final]
    return body


def _is_copied_return(stmt: ast.stmt) -> bool:
    return isinstance(stmt, ast.Return) and getattr(stmt, "source_line", None) is not None


def _conditional_return(stmt: ast.stmt, final: ast.Return) -> bool:
    """``if c: return a`` right before ``return b``, both copies of one return statement."""
    if not isinstance(stmt, ast.If) or stmt.orelse or len(stmt.body) != 1:
        return False
    only = stmt.body[0]
    return _is_copied_return(only) and only.source_line == final.source_line \
        and only.value is not None and final.value is not None \
        and not (getattr(only, "after_exit_copy", False) or getattr(final, "after_exit_copy", False))


def _same_return(stmt: ast.stmt, final: ast.Return) -> bool:
    return (
        _is_copied_return(stmt)
        and stmt.source_line == final.source_line
        and ast.dump(stmt) == ast.dump(final)
    )


def _assertion(stmt: ast.If) -> ast.Assert | None:
    """``if not c: raise AssertionError(m)`` raising the exception class that ``assert`` loads
    (the builtin itself, not a lookup of the name) -> ``assert c, m``."""
    if stmt.orelse or len(stmt.body) != 1 or not isinstance(stmt.body[0], ast.Raise):
        return None
    return _assertion_of(stmt.body[0], stmt.test)


def _assertion_of(raised: ast.Raise, test: ast.expr | None) -> ast.Assert | None:
    """``assert <test>, m`` for ``raised`` when it raises the class ``assert`` loads (``assert
    False, m`` without a test)."""
    exc, message = raised.exc, None
    if raised.cause is not None:
        return None
    if isinstance(exc, ast.Call) and len(exc.args) == 1 and not exc.keywords \
            and not isinstance(exc.args[0], ast.Starred):
        exc, message = exc.func, exc.args[0]
    if not getattr(exc, "assertion_error", False):
        return None
    return ast.Assert(ast.Constant(False) if test is None else negate(test), message)


def asserts_of_false(nodes: list[ast.AST]) -> bool:
    """Each ``raise AssertionError(m)`` left among ``nodes`` (every node of a tree) that raises
    the class ``assert`` loads, no test guarding it, -> ``assert False, m``: the compiler drops
    the test of a false constant. Run after the rewrites (which read such raises as statements
    that end a branch). True where one was replaced."""
    if not any(node.__class__ is ast.Raise for node in nodes):
        return False    # (most code raises nothing: no walk of every statement list)
    found = False
    for parent in nodes:
        for name in ("body", "orelse", "finalbody"):
            stmts = getattr(parent, name, None)
            if stmts.__class__ is not list:
                continue
            for k, stmt in enumerate(stmts):
                if stmt.__class__ is ast.Raise and stmt.exc is not None:
                    assertion = _assertion_of(stmt, None)
                    if assertion is not None:
                        stmts[k] = assertion
                        found = True
    return found


def _rewrite(stmt: ast.stmt) -> list[ast.stmt]:
    if isinstance(stmt, ast.If):
        assertion = _assertion(stmt)
        if assertion is not None:
            return [assertion]
        stmt = _conditional_test(stmt)
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
    if isinstance(stmt, ast.Try) and not stmt.handlers and not stmt.orelse and stmt.finalbody \
            and len(stmt.body) == 1 and isinstance(stmt.body[0], _TRY_NODES) and not stmt.body[0].finalbody \
            and stmt.body[0].handlers:
        inner = stmt.body[0]
        return [type(inner)(inner.body, inner.handlers, inner.orelse, stmt.finalbody)]
    if isinstance(stmt, (ast.For, ast.AsyncFor, ast.While)):
        stmt.body = _guard_to_if(stmt.body)
    if isinstance(stmt, ast.While) and _is_true(stmt.test) and not stmt.orelse and stmt.body:
        first = stmt.body[0]
        if isinstance(first, ast.If) and not first.orelse and len(first.body) == 1 \
                and isinstance(first.body[0], ast.Break):
            rest = stmt.body[1:] or [ast.Pass()]
            return [ast.While(negate(first.test), rest, [])]
    return [stmt]


def _conditional_test(stmt: ast.If) -> ast.If:
    """``if c: (if a: B) else: (if y: B)`` -> ``if (a if c else y): B`` when both ``B`` are
    copies of one piece of code ending in a return.

    A compiler that copies return tails copies a small block that returns into each path that
    reaches it, so the test of an ``if`` that is a conditional expression reads as two ifs with the
    same body.
    """
    if len(stmt.body) != 1 or len(stmt.orelse) != 1:
        return stmt
    yes, no = stmt.body[0], stmt.orelse[0]
    if (
        not (isinstance(yes, ast.If) and isinstance(no, ast.If))
        or yes.orelse
        or no.orelse
        or [ast.dump(s) for s in yes.body] != [ast.dump(s) for s in no.body]
        or not _copies_of_returns(yes.body, no.body)
    ):
        return stmt
    merged = ast.If(ast.IfExp(stmt.test, yes.test, no.test), yes.body, [])
    return ast.copy_location(merged, stmt)


def _copies_of_returns(first: list[ast.stmt], second: list[ast.stmt]) -> bool:
    """Do two equal statement lists end in returns copied from one return statement?"""
    a, b = first[-1], second[-1]
    while isinstance(a, ast.If) and isinstance(b, ast.If) and not a.orelse and not b.orelse:
        a, b = a.body[-1], b.body[-1]
    return _is_copied_return(a) and _is_copied_return(b) and a.source_line == b.source_line


def _guard_to_if(body: list[ast.stmt]) -> list[ast.stmt]:
    """``if not c: continue`` then the rest of the body ending in ``break``/``return``/``raise``
    -> ``if c: <the rest>`` (unless the ``continue`` went to a while loop's top test: see
    ``Structurer.continue_stmt``)."""
    for k, stmt in enumerate(body):
        rest = body[k + 1:]
        if (
            isinstance(stmt, ast.If)
            and not stmt.orelse
            and len(stmt.body) == 1
            and isinstance(stmt.body[0], ast.Continue)
            and not getattr(stmt.body[0], "to_top", False)
            and rest
            and isinstance(rest[-1], (ast.Break, ast.Return, ast.Raise))
        ):
            return body[:k] + [ast.If(negate(stmt.test), rest, [])]
    return body


def _drop_dead(body: list[ast.stmt]) -> list[ast.stmt]:
    for k, stmt in enumerate(body):
        if isinstance(stmt, _TERMINATORS) and k + 1 < len(body):
            return body[:k + 1]
    return body


def _is_true(expr: ast.expr) -> bool:
    return isinstance(expr, ast.Constant) and expr.value is True


def _is_return_none(stmt: ast.stmt) -> bool:
    return isinstance(stmt, ast.Return) and (
        stmt.value is None or (isinstance(stmt.value, ast.Constant) and stmt.value.value is None))


def strip_tail_returns(body: list[ast.stmt]) -> list[ast.stmt]:
    """``return None`` copies the compiler placed at every exit of a function's last statement."""
    if not body:
        return body
    last = body[-1]
    if _is_return_none(last):
        return strip_tail_returns(body[:-1])
    if isinstance(last, ast.If):
        last.body = strip_tail_returns(last.body) or [ast.Pass()]
        last.orelse = strip_tail_returns(last.orelse)
    elif isinstance(last, (ast.With, ast.AsyncWith)):
        last.body = strip_tail_returns(last.body) or [ast.Pass()]
    elif isinstance(last, _TRY_NODES):
        if not last.orelse:
            last.body = strip_tail_returns(last.body) or [ast.Pass()]
        for handler in last.handlers:
            handler.body = strip_tail_returns(handler.body) or [ast.Pass()]
        last.orelse = strip_tail_returns(last.orelse)
    elif isinstance(last, (ast.For, ast.AsyncFor, ast.While)):
        last.orelse = strip_tail_returns(last.orelse)
    elif isinstance(last, ast.Match):
        # cases that return values keep their explicit ``return None`` (as the source had it)
        if not any(c.body and isinstance(c.body[-1], ast.Return) and not _is_return_none(c.body[-1])
                   for c in last.cases):
            for case in last.cases:
                case.body = strip_tail_returns(case.body) or [ast.Pass()]
        final = last.cases[-1]
        if isinstance(final.pattern, ast.MatchAs) and final.pattern.pattern is None \
                and final.pattern.name is None and final.guard is None \
                and all(isinstance(s, ast.Pass) for s in final.body) and len(last.cases) > 1:
            last.cases.pop()            # ``case _: pass`` ending the function: no case at all
    return body


def returns_to_breaks(body: list[ast.stmt]) -> list[ast.stmt]:
    """A loop that ends the function: ``return None`` inside it is a ``break`` (its else: the rest)."""
    for k, stmt in enumerate(body):
        if isinstance(stmt, (ast.For, ast.AsyncFor, ast.While)) and not stmt.orelse:
            rest = body[k + 1:]
            if any(isinstance(s, (ast.Return, ast.Raise)) for s in rest) and rest:
                continue
            if _has_own_break(stmt.body):
                continue  # its breaks run the rest; a return must not
            if _replace_returns(stmt.body):
                stmt.orelse = rest
                return body[:k + 1]
    return body


def _has_own_break(body: list[ast.stmt]) -> bool:
    """Does ``body`` break out of the loop it belongs to (not out of a nested loop)?"""
    for stmt in body:
        if isinstance(stmt, ast.Break):
            return True
        if isinstance(stmt, ast.If) and (_has_own_break(stmt.body) or _has_own_break(stmt.orelse)):
            return True
        if isinstance(stmt, (ast.With, ast.AsyncWith)) and _has_own_break(stmt.body):
            return True
        if isinstance(stmt, _TRY_NODES) and (_has_own_break(stmt.body) or _has_own_break(stmt.orelse)
                                          or _has_own_break(stmt.finalbody)
                                          or any(_has_own_break(h.body) for h in stmt.handlers)):
            return True
    return False


def _replace_returns(body: list[ast.stmt]) -> bool:
    changed = False
    for k, stmt in enumerate(body):
        if _is_return_none(stmt):
            body[k] = ast.Break()
            changed = True
        elif isinstance(stmt, ast.If):
            changed |= _replace_returns(stmt.body)
            changed |= _replace_returns(stmt.orelse)
        elif isinstance(stmt, (ast.With, ast.AsyncWith)):
            changed |= _replace_returns(stmt.body)
        elif isinstance(stmt, _TRY_NODES):
            changed |= _replace_returns(stmt.body)
            for handler in stmt.handlers:
                changed |= _replace_returns(handler.body)
            changed |= _replace_returns(stmt.orelse)
    return changed


class BoolOpFromIfExp(ast.NodeTransformer):
    """``(b or c) if a else c`` -> ``a and b or c`` (what the compiler made of it)."""

    def visit_IfExp(self, node: ast.IfExp) -> ast.expr:
        self.generic_visit(node)
        body = node.body
        if isinstance(body, ast.BoolOp) and isinstance(body.op, ast.Or) and len(body.values) >= 2 \
                and ast.dump(body.values[-1]) == ast.dump(node.orelse):
            head = body.values[:-1]
            left = head[0] if len(head) == 1 else ast.BoolOp(ast.Or(), head)
            return ast.BoolOp(ast.Or(), [ast.BoolOp(ast.And(), [node.test, left]), node.orelse])
        return node


def renumber_temporaries(tree: ast.AST, reserved: set[str], nodes: list[ast.AST] | None = None) -> ast.AST:
    """Number ``__stack_<n>`` temporaries 0, 1, 2... in order of first appearance.

    Temporaries are numbered as the executor creates them, including for paths it tried and
    dropped; renumbering only renames (one name to one name), so the program is unchanged. Left
    alone when the original code has such names of its own (``reserved``). ``nodes``: the tree's
    ``traversal.preorder``, when the caller has it."""
    if any(_TEMPORARY.match(name) for name in reserved):
        return tree
    found = [(node, node.id) for node in (traversal.preorder(tree) if nodes is None else nodes)
             if node.__class__ is ast.Name and _TEMPORARY.match(node.id)]
    mapping: dict[str, str] = {}
    for _, old in found:
        mapping.setdefault(old, f"__stack_{len(mapping)}")
    for node, old in found:   # one Name object may occur at several places: rename it once
        node.id = mapping[old]
    return tree
