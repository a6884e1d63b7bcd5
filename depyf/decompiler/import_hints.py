"""Globals the original code calls methods on as imported modules, for recompiling it alike.

CPython 3.11+ compiles ``m.f(x)``, where a module-level ``import`` binds ``m``, as an attribute
load and a plain call rather than a method call (the compiler's ``is_import_originated``). A
decompiled function is compiled on its own, where no import binds those names, so its calls
came out as method calls: the same behaviour, other instructions, and the flow check then
followed every path instead of seeing equal bytecode. Naming those globals in an ``if 0:
import m`` at module level, which never runs, gives the compiler the same knowledge.

The same holds for ``super``: CPython 3.12+ fuse ``super().f`` into one ``LOAD_SUPER_ATTR``
unless the module binds or uses the name ``super`` at its top level. Where the original calls a
global ``super`` and fuses none, its module did; the hint names ``super`` too."""

from __future__ import annotations

import ast
import dis
import keyword
import types

from depyf.decompiler.instructions import flow_instructions


def imported_globals(code: types.CodeType) -> list[str]:
    """Globals that ``code`` (or code nested in it) loads attributes of with plain attribute
    loads only, never as a method call's receiver: names an ``import`` may have bound."""
    plain: set[str] = set()
    method: set[str] = set()
    todo = [code]
    while todo:
        current = todo.pop()
        todo.extend(c for c in current.co_consts if isinstance(c, types.CodeType))
        previous = None
        for ins in flow_instructions(current):
            if ins.opname in ("CACHE", "EXTENDED_ARG"):
                continue
            if previous is not None and previous.opname == "LOAD_GLOBAL":
                if ins.opname == "LOAD_METHOD" or (ins.opname == "LOAD_ATTR" and "NULL|self" in ins.argrepr):
                    method.add(str(previous.argval))
                elif ins.opname == "LOAD_ATTR":
                    plain.add(str(previous.argval))
            previous = ins
    names = {name for name in plain - method if name.isidentifier() and not keyword.iskeyword(name)}
    if _calls_super_unfused(code):
        names.add("super")
    return sorted(names)


def _calls_super_unfused(code: types.CodeType) -> bool:
    """Does ``code`` (or code nested in it) load the global ``super``, with no fused
    ``LOAD_SUPER_ATTR`` anywhere, where the interpreter fuses?"""
    if "LOAD_SUPER_ATTR" not in dis.opmap:
        return False
    loads = False
    todo = [code]
    while todo:
        current = todo.pop()
        todo.extend(c for c in current.co_consts if isinstance(c, types.CodeType))
        if "super" not in current.co_names:
            continue
        for ins in flow_instructions(current):
            if ins.opname == "LOAD_SUPER_ATTR":
                return False
            if ins.opname == "LOAD_GLOBAL" and ins.argval == "super":
                loads = True
    return loads


def import_hint(names: list[str]) -> ast.If:
    """``if 0: import a, b`` (never run; the compiler still sees ``a`` and ``b`` imported). Its
    locations are the caller's to fill, with the rest of the module it goes into."""
    return ast.If(ast.Constant(0), [ast.Import([ast.alias(name) for name in names])], [])
