"""Free variables that a nested function's decompiled source no longer names.

The compiler decides which names a nested function takes from its enclosing one before it folds
constants: ``return (7 or c) + k`` makes ``c`` a free variable although the code never loads it,
and the decompiled ``return 7 + k`` would not. Recompiled that way, the closure loses the cell and
the enclosing function keeps ``c`` as a plain local, which the flow check rightly refuses. A read
where it never runs, ``if False: (c,)``, gives the compiler the same knowledge and costs nothing
at run time (the compiler drops the dead branch)."""

from __future__ import annotations

import ast
import sys
import types

from depyf.decompiler import traversal
from depyf.decompiler.codeinfo import argument_names


def names_read_or_bound(body: list[ast.stmt]) -> set[str]:
    """Every name the statements mention (nested scopes included: a free variable may only pass
    through to a deeper function), with ``__class__`` for a body that calls ``super``."""
    names: set[str] = set()
    for stmt in body:
        for node in traversal.walk(stmt):
            if isinstance(node, ast.Name):
                names.add(node.id)
            elif isinstance(node, (ast.Nonlocal, ast.Global)):
                names.update(node.names)
    if "super" in names:
        names.add("__class__")      # the compiler gives a function that names super the cell
    return names


def unnamed_free_variables(code: types.CodeType, body: list[ast.stmt]) -> list[str]:
    """The free variables of ``code`` that ``body`` never names, in ``co_freevars`` order (only
    names source can spell: the compiler's own cells, such as ``__classdict__``, are its business)."""
    if not code.co_freevars:
        return []
    named = names_read_or_bound(body)
    return [name for name in code.co_freevars
            if name not in named and name.isidentifier() and not name.startswith("__classdict")]


def never_run_read(names: list[str]) -> ast.If:
    """``if False: (a, b)``: reads the compiler sees and never runs."""
    return ast.If(ast.Constant(False), [ast.Expr(ast.Tuple([ast.Name(n, ast.Load()) for n in names],
                                                           ast.Load()))], [])


def with_free_variables_kept(code: types.CodeType, body: list[ast.stmt],
                             cells: bool = False) -> list[ast.stmt]:
    """``body`` with a never-run read of each free variable it no longer names, placed after its
    docstring and declarations (a docstring must stay first; a read before ``nonlocal`` is an
    error). With ``cells``, its lost cell variables are kept too (``with_cells_kept``)."""
    if cells:
        body = with_cells_kept(code, body, set(argument_names(code)))
    missing = unnamed_free_variables(code, body)
    if not missing:
        return body
    at = after_docstring_and_declarations(body)
    return body[:at] + [never_run_read(missing)] + body[at:]


_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef, ast.ListComp, ast.SetComp,
           ast.DictComp, ast.GeneratorExp)


def unshared_cell_variables(code: types.CodeType, body: list[ast.stmt]) -> list[str]:
    """The cell variables of ``code`` that no nested scope of ``body`` names (a closure the
    compiler saw in code that never runs, and dropped with it), in ``co_cellvars`` order. Only
    names source can spell: ``__class__`` and the compiler's own cells are its business."""
    cells = [name for name in code.co_cellvars if name.isidentifier() and not name.startswith("__")]
    if not cells:
        return []
    shared: set[str] = set()
    for stmt in body:
        for node in traversal.walk(stmt):
            if isinstance(node, _SCOPES):
                shared |= names_read_or_bound([node])
    return [name for name in cells if name not in shared]


def never_run_cells(names: list[str], parameters: set[str]) -> ast.If:
    """``if False:`` a local binding of each name that is not a parameter, then a nested function
    that reads them all: the compiler makes each a cell, and nothing of it ever runs."""
    keep: list[ast.stmt] = []
    local = [n for n in names if n not in parameters]
    if local:
        keep.append(ast.Assign([ast.Tuple([ast.Name(n, ast.Store()) for n in local], ast.Store())]
                               if len(local) > 1 else [ast.Name(local[0], ast.Store())],
                               ast.Tuple([ast.Constant(None)] * len(local), ast.Load())
                               if len(local) > 1 else ast.Constant(None)))
    keep.append(cells_reader(names))
    return ast.If(ast.Constant(False), keep, [])


def cells_reader(names: list[str]) -> ast.FunctionDef:
    """``def __depyf_cells__(): return (a, b)``: a nested function that reads each name, so the
    compiler makes each a cell of the function around it (or a free variable passed through)."""
    extra = {"type_params": []} if sys.version_info >= (3, 12) else {}
    reads = ast.Return(ast.Tuple([ast.Name(n, ast.Load()) for n in names], ast.Load()))
    return ast.FunctionDef(name="__depyf_cells__", args=ast.arguments([], [], None, [], [], None, []),
                           body=[reads], decorator_list=[], returns=None, **extra)


def with_cells_kept(code: types.CodeType, body: list[ast.stmt], parameters: set[str]) -> list[ast.stmt]:
    """``body`` with a never-run block that keeps each cell variable no nested scope names any
    more, after its docstring and declarations (see ``never_run_cells``)."""
    missing = unshared_cell_variables(code, body)
    if not missing:
        return body
    at = after_docstring_and_declarations(body)
    return body[:at] + [never_run_cells(missing, parameters)] + body[at:]


def after_docstring_and_declarations(body: list[ast.stmt]) -> int:
    """Where a statement that never runs may go into a function's ``body``: after its docstring
    (which must stay first to be one) and its ``global``/``nonlocal`` declarations (a name used
    before its declaration is an error)."""
    at = 0
    while at < len(body) and (isinstance(body[at], (ast.Global, ast.Nonlocal)) or (
            at == 0 and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant)
            and isinstance(body[0].value.value, str))):
        at += 1
    return at
