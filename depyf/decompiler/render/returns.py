"""The returns the compiler adds at the end of a body, which the source did not write."""

from __future__ import annotations

import ast
import copy


def remove_implicit_returns(body: list) -> list:
    """Module and class bodies end with an implicit ``return``: take every copy of it out.

    A branch that ended with it and was hoisted (``if c: ...; return`` then the rest) gets the
    rest back as its ``else``.
    """
    out: list = []
    for k, stmt in enumerate(body):
        if isinstance(stmt, ast.Return):
            return out
        if isinstance(stmt, ast.If):
            ends_then, ends_else = _ends_in_return(stmt.body), _ends_in_return(stmt.orelse)
            stmt.body = remove_implicit_returns(stmt.body) or [ast.Pass()]
            stmt.orelse = remove_implicit_returns(stmt.orelse)
            rest = body[k + 1:]
            if rest and ends_then and not ends_else and not stmt.orelse:
                stmt.orelse = remove_implicit_returns(rest)
                out.append(stmt)
                return out
            if rest and ends_else and not ends_then:
                stmt.body = stmt.body + remove_implicit_returns(rest)
                out.append(stmt)
                return out
        if isinstance(stmt, ast.Match):
            rest = body[k + 1:]
            ends = [_ends_in_return(case.body) for case in stmt.cases]
            for case in stmt.cases:
                case.body = remove_implicit_returns(case.body) or [ast.Pass()]
            if rest and any(ends):
                # the cases that ended the body skip the rest: the others (and no match) run it
                rest = remove_implicit_returns(rest)
                for case, ended in zip(stmt.cases, ends, strict=True):
                    if not ended:
                        case.body = case.body + copy.deepcopy(rest)
                last = stmt.cases[-1]
                if not (isinstance(last.pattern, ast.MatchAs) and last.pattern.pattern is None
                        and last.guard is None):
                    stmt.cases.append(ast.match_case(ast.MatchAs(None, None), None, copy.deepcopy(rest)))
                out.append(stmt)
                return out
        if isinstance(stmt, (ast.With, ast.AsyncWith)) and all(
            isinstance(r, ast.Return) for r in body[k + 1 :]
        ):
            # the last statement: the compiler copied the implicit return into its body
            stmt.body = remove_implicit_returns(stmt.body) or [ast.Pass()]
        out.append(stmt)
    return out


def _ends_in_return(body: list) -> bool:
    if not body:
        return False
    last = body[-1]
    if isinstance(last, ast.Return):
        return True
    if isinstance(last, ast.If):
        return _ends_in_return(last.body) or _ends_in_return(last.orelse)
    if isinstance(last, ast.Match):
        final = last.cases[-1]
        return isinstance(final.pattern, ast.MatchAs) and final.pattern.pattern is None \
            and final.guard is None and all(_ends_in_return(case.body) for case in last.cases)
    return False


def _contains_yield(body: list) -> bool:
    return any(isinstance(node, (ast.Yield, ast.YieldFrom)) for node in _own_nodes(body))


def bare_returns(body: list) -> None:
    """``return None`` as ``return`` in the body of an async generator, where a return with a
    value, even None, does not compile (the two compile alike elsewhere)."""
    for node in _own_nodes(body):
        if isinstance(node, ast.Return) and isinstance(node.value, ast.Constant) and node.value.value is None:
            node.value = None


def _own_nodes(body: list):
    """The nodes of a function's body, leaving out the bodies of the functions and classes in it
    (their decorators, defaults and bases are evaluated where they are defined: those stay)."""
    pending = list(body)
    while pending:
        node = pending.pop()
        yield node
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            args = node.args
            pending.extend(args.defaults + [d for d in args.kw_defaults if d is not None])
            if not isinstance(node, ast.Lambda):
                pending.extend(node.decorator_list)
        elif isinstance(node, ast.ClassDef):
            pending.extend(node.decorator_list + node.bases + [k.value for k in node.keywords])
        else:
            pending.extend(ast.iter_child_nodes(node))
