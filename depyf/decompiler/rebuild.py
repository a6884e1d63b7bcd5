"""Compile decompiled source back into a code object that can stand in for the original."""

from __future__ import annotations

import ast
import sys
import types
import warnings
from collections.abc import Mapping

from depyf.decompiler import traversal
from depyf.decompiler.codeinfo import argument_names
from depyf.decompiler.errors import DecompilationError, SourceDoesNotCompile
from depyf.decompiler.import_hints import import_hint, imported_globals
from depyf.decompiler.render.free_variables import (
    after_docstring_and_declarations,
    cells_reader,
    never_run_cells,
    with_free_variables_kept,
)

# Flags that change how a frame runs; CO_NESTED and friends are informational only.
_SIGNIFICANT_FLAGS = 0x01 | 0x02 | 0x04 | 0x08 | 0x20 | 0x80 | 0x100 | 0x200

_WRAPPER = "__depyf_wrapper__"
# Source is compiled with asserts kept whatever ``-O`` says: an ``assert`` read back from code
# holds the test that code makes (code compiled under ``-O`` has none, and reads back without it).
_FUTURE_FLAGS = 0x1000000  # CO_FUTURE_ANNOTATIONS: annotations stay strings
# The class that gives a method its ``__class__`` cell is named with underscores only: inside a
# class so named the compiler mangles no ``__private`` name (it would turn a global ``__x`` of the
# source, such as Dynamo's ``__compiled_fn_1`` or a placeholder, into ``_depyf_class____x``). It is
# the shortest such name the source does not use: a method that reads a global ``_`` (gettext's
# alias) must not see the class in its place.


def _class_name(tree: ast.Module) -> str:
    used = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            used.add(node.id)
        elif isinstance(node, ast.arg):
            used.add(node.arg)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            used.add(node.name)
        elif isinstance(node, ast.alias):
            used.add((node.asname or node.name).partition(".")[0])
        elif isinstance(node, (ast.Global, ast.Nonlocal)):
            used.update(node.names)
        elif isinstance(node, (ast.MatchAs, ast.MatchStar)) and node.name:
            used.add(node.name)
        elif isinstance(node, ast.MatchMapping) and node.rest:
            used.add(node.rest)
        elif isinstance(node, ast.ExceptHandler) and node.name:
            used.add(node.name)
    name = "_"
    while name in used:
        name += "_"
    return name


def rebuild_code(original: types.CodeType, source: str, *, filename: str | None = None,
                 compared_only: bool = False, room: Mapping[str, int] | None = None) -> types.CodeType:
    """Compile ``source`` (decompiled from ``original``) and return the matching code object.

    Free variables are recreated by nesting the function in a wrapper that defines them (in a
    class body when the function needs ``__class__`` for ``super()``), so the compiler gives the
    new code the same closure layout. Raises ``DecompilationError`` when the result would not be
    a drop-in replacement. With ``compared_only`` (the code is only compared with the original,
    never run) a function that needs no wrapper may be compiled from the text alone, and the
    qualified names of the code nested in it then lack the wrapper's. ``room`` (see
    ``opaque.room``) names the placeholders that get subscripts ``[0]`` after each load, so that
    ``opaque.embed`` has room for the instructions it patches in there.
    """
    target_file = filename if filename is not None else original.co_filename
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(max(limit, 6000))  # the depth render allows the source: compile it as deep
    try:
        with warnings.catch_warnings():
            # what the compiler warns of (``return`` in ``finally`` on 3.14+, ``is`` with a
            # literal) the original code already did; recompiling it is no news to the user
            warnings.simplefilter("ignore", SyntaxWarning)
            if compared_only and not room:
                new = _compiled_alone(original, source, target_file)
                if new is not None:
                    return _finished(original, new, target_file)
            return _rebuild_code(original, source, target_file, room or {})
    except SyntaxError as exc:
        raise SourceDoesNotCompile(f"the decompiled source does not compile: {exc.msg} (line {exc.lineno})",
                                   qualname=_qualname(original)) from None
    except RecursionError:
        raise DecompilationError(
            "source nested too deeply to compile", qualname=_qualname(original)
        ) from None
    finally:
        sys.setrecursionlimit(limit)


def _rebuild_code(original: types.CodeType, source: str, target_file: str,
                  room: Mapping[str, int]) -> types.CodeType:
    try:
        tree = _padded(ast.parse(source, filename=target_file), room)
    except (RecursionError, MemoryError):  # MemoryError: "parser stack overflowed" on 3.12+
        raise DecompilationError(
            "source nested too deeply to compile", qualname=_qualname(original)
        ) from None
    if original.co_name == "<module>":
        new = compile(tree, target_file, "exec", flags=original.co_flags & _FUTURE_FLAGS, dont_inherit=True,
                      optimize=0)
    elif is_class_body(original):
        new = _compile_function(original, tree, target_file, want_class_body=True)
    else:
        new = _compile_function(original, tree, target_file)
        missing_cells = [c for c in original.co_cellvars if c not in new.co_cellvars and c != "__class__"]
        if missing_cells:
            new = _compile_function(original, _padded(ast.parse(source, filename=target_file), room),
                                    target_file, keep_cells=missing_cells)
    return _finished(original, new, target_file)


class _Padding(ast.NodeTransformer):
    def __init__(self, room: Mapping[str, int]):
        self.room = room
        self.calls = getattr(room, "calls", {})

    def visit_Call(self, node: ast.Call) -> ast.expr:
        self.generic_visit(node)
        count = self.calls.get(node.func.id, 0) if isinstance(node.func, ast.Name) else 0
        out: ast.expr = node
        for _ in range(count):
            index = ast.copy_location(ast.Constant(0), node)
            out = ast.copy_location(ast.Subscript(out, index, ast.Load()), node)
        return out

    def visit_Name(self, node: ast.Name) -> ast.expr:
        count = self.room.get(node.id, 0) if isinstance(node.ctx, ast.Load) else 0
        out: ast.expr = node
        for _ in range(count):
            index = ast.copy_location(ast.Constant(0), node)
            out = ast.copy_location(ast.Subscript(out, index, ast.Load()), node)
        return out


def _padded(tree: ast.Module, room: Mapping[str, int]) -> ast.Module:
    """``tree`` with each load of a name in ``room`` followed by that many subscripts ``[0]``."""
    return _Padding(room).visit(tree) if room else tree


def _finished(original: types.CodeType, new: types.CodeType, target_file: str) -> types.CodeType:
    new = _with_filename(new, target_file)
    _check_compatible(original, new)
    replacements = {"co_name": original.co_name, "co_flags": original.co_flags}
    if hasattr(original, "co_qualname"):
        replacements["co_qualname"] = original.co_qualname
    return new.replace(**replacements)


def _compiled_alone(original: types.CodeType, source: str, target_file: str) -> types.CodeType | None:
    """The function compiled from the text as a module, where the wrapper would bind nothing it
    sees: no free variables, a name the source can define, and a module that names nothing but
    the function (one definition, no other statement). Compiling text skips building the syntax
    tree and handing it to the compiler. None: the wrapper is needed, or the text does not
    compile (the wrapper's way says why)."""
    name = original.co_name
    if name == "<module>" or is_class_body(original) or original.co_freevars or not name.isidentifier():
        return None
    imported = imported_globals(original)
    if imported:
        # (after the function: the compiler reads every import of the module, wherever it is)
        source = f"{source.rstrip()}\nif 0: import {', '.join(imported)}\n"
    try:
        module = compile(source, target_file, "exec", flags=original.co_flags & _FUTURE_FLAGS,
                         dont_inherit=True, optimize=0)
    except Exception:
        return None
    if set(module.co_names) - set(imported) != {name}:    # (the hint's names stay in co_names)
        return None
    found = _find(module, name, skip_self=True, predicate=lambda c: not is_class_body(c))
    if found is None or any(c not in found.co_cellvars for c in original.co_cellvars if c != "__class__"):
        return None
    return found


def is_class_body(code: types.CodeType) -> bool:
    """A class body's code: not optimised, no new locals (flags CO_OPTIMIZED/CO_NEWLOCALS unset)."""
    return code.co_name != "<module>" and not code.co_flags & 0x03


def _compile_function(original: types.CodeType, tree: ast.Module, filename: str,
                      want_class_body: bool = False, keep_cells: list[str] | None = None) -> types.CodeType:
    freevars = [v for v in original.co_freevars if v != "__class__"]
    body: list[ast.stmt] = []
    if original.co_name.isidentifier() and original.co_name not in original.co_freevars:
        # the def binds its name in the wrapper; keep references to that name global
        body.append(ast.Global([original.co_name]))
    if freevars:
        body.append(ast.Assign(targets=[ast.Name(v, ast.Store()) for v in freevars],
                               value=ast.Constant(None)))
        # Referencing each name keeps it a cell even if the function only assigns it.
        body.append(cells_reader(freevars))
    inner = list(tree.body)
    _keep_free_variables(original, inner)
    if keep_cells:
        _keep_cell_variables(original, inner, keep_cells)
    holder = body       # where the source's statements go: the wrapper, or a class in it
    if "__class__" in original.co_freevars:
        holder = []
        class_name = _class_name(tree)
        body.append(ast.ClassDef(name=class_name, bases=[], keywords=[], body=holder, decorator_list=[],
                                 type_params=[]) if _has_type_params() else
                    ast.ClassDef(name=class_name, bases=[], keywords=[], body=holder, decorator_list=[]))
    wrapper_args = {"type_params": []} if _has_type_params() else {}
    wrapper = ast.FunctionDef(name=_WRAPPER, args=_no_args(), body=body, decorator_list=[], returns=None,
                              **wrapper_args)
    module = ast.Module(body=[wrapper], type_ignores=[])
    imported = imported_globals(original)
    if imported:
        module.body.append(import_hint(imported))
    # Only our wrapper's nodes lack a location: give them one before the parsed (or already
    # located) statements go in, rather than walking those too.
    traversal.fill_locations(module)
    holder.extend(inner)
    compiled = compile(module, filename, "exec", flags=original.co_flags & _FUTURE_FLAGS, dont_inherit=True,
                      optimize=0)
    wrapper_code = _find(compiled, _WRAPPER)
    if wrapper_code is None:  # pragma: no cover - the compiler always emits it
        raise DecompilationError("wrapper code object missing", qualname=_qualname(original))
    found = _find(wrapper_code, original.co_name, skip_self=True,
                  predicate=(lambda c: is_class_body(c) == want_class_body))
    if found is None:
        raise DecompilationError(
            "recompiled source does not define the function", qualname=_qualname(original)
        )
    return found


def _keep_free_variables(original: types.CodeType, body: list) -> None:
    """Free variables the code keeps but never reads (Dynamo's transformed code does this, and a
    constant-folded ``7 or c``) still have to be free variables of the new code: reference them
    where it never runs. So does ``__class__`` of a method whose decompiled source no longer calls
    ``super()`` (Dynamo's transformed code of such a method keeps the cell and passes it to its
    resume functions)."""
    if not original.co_freevars:
        return      # nothing to keep
    for node in body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == original.co_name:
            kept = with_free_variables_kept(original, node.body)
            if kept is not node.body:
                for stmt in kept:
                    if not hasattr(stmt, "lineno"):
                        traversal.fill_locations(stmt, node.lineno, node.col_offset)
                node.body = kept
            return


def _keep_cell_variables(original: types.CodeType, body: list, names: list[str]) -> None:
    """Cell variables the source no longer shares with a nested function (Dynamo's transformed code
    keeps the original's cells) stay cells: a nested function that never runs refers to them."""
    for node in body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == original.co_name:
            params = {a.arg for a in ast.walk(node.args) if isinstance(a, ast.arg)}
            node.body.insert(after_docstring_and_declarations(node.body),
                             traversal.fill_locations(never_run_cells(names, params), node.lineno,
                                                      node.col_offset))
            return


def _find(code: types.CodeType, name: str, skip_self: bool = False, predicate=None) -> types.CodeType | None:
    """Breadth-first search for a nested code object called ``name`` (outermost wins)."""
    queue = [code]
    while queue:
        current = queue.pop(0)
        if current.co_name == name and not (skip_self and current is code) \
                and (predicate is None or predicate(current)):
            return current
        queue.extend(c for c in current.co_consts if isinstance(c, types.CodeType))
    return None


def _with_filename(code: types.CodeType, filename: str) -> types.CodeType:
    consts = tuple(
        _with_filename(c, filename) if isinstance(c, types.CodeType) else c for c in code.co_consts
    )
    return code.replace(co_filename=filename, co_consts=consts)


def _check_compatible(original: types.CodeType, new: types.CodeType) -> None:
    problems = []
    for attr in ("co_argcount", "co_posonlyargcount", "co_kwonlyargcount", "co_freevars", "co_cellvars"):
        if getattr(original, attr) != getattr(new, attr):
            problems.append(f"{attr} {getattr(new, attr)!r} != {getattr(original, attr)!r}")
    nargs = len(argument_names(original))
    if original.co_varnames[:nargs] != new.co_varnames[:nargs]:
        problems.append(f"arguments {new.co_varnames[:nargs]!r} != {original.co_varnames[:nargs]!r}")
    if (original.co_flags ^ new.co_flags) & _SIGNIFICANT_FLAGS:
        problems.append(f"flags {new.co_flags:#x} != {original.co_flags:#x}")
    if problems:
        raise DecompilationError("recompiled code is not a drop-in replacement: " + "; ".join(problems),
                                 qualname=_qualname(original))


def _qualname(code: types.CodeType) -> str:
    return getattr(code, "co_qualname", code.co_name)


def _no_args() -> ast.arguments:
    return ast.arguments(posonlyargs=[], args=[], vararg=None, kwonlyargs=[], kw_defaults=[], kwarg=None,
                         defaults=[])


def _has_type_params() -> bool:
    return "type_params" in ast.FunctionDef._fields
