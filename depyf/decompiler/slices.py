"""Slices outside brackets: BUILD_SLICE makes a value that generated code may use anywhere.

Source spells that value ``a:b`` only as a subscript (``x[a:b]``, ``x[a:b, c]``); anywhere else
(a return value, an argument) it must be the ``slice(a, b)`` object itself, or the text would
not be Python."""

from __future__ import annotations

import ast
import dis
import types

from depyf.decompiler import traversal
from depyf.decompiler.expressions import load

_BUILD_SLICE = dis.opmap["BUILD_SLICE"]


def builds_slices(code: types.CodeType) -> bool:
    """Can ``code`` or code nested in it build a slice object (so the rewrite may be needed)?"""
    raw = code.co_code
    if any(raw[i] == _BUILD_SLICE for i in range(0, len(raw), 2)):
        return True
    return any(isinstance(c, types.CodeType) and builds_slices(c) for c in code.co_consts)


def as_slice_object(node: ast.Slice) -> ast.Call:
    """``slice(lower, upper[, step])``: the object BUILD_SLICE made."""
    parts = [node.lower, node.upper] + ([node.step] if node.step is not None else [])
    return ast.Call(load("slice"), [p if p is not None else ast.Constant(None) for p in parts], [])


def slices_as_values(tree: ast.AST) -> None:
    """Turn every ``ast.Slice`` not in a subscript's brackets into a ``slice(...)`` call."""
    allowed: set[int] = set()
    for node in traversal.walk(tree):
        if isinstance(node, ast.Subscript):
            allowed.add(id(node.slice))
            if isinstance(node.slice, ast.Tuple):
                allowed.update(id(e) for e in node.slice.elts)
    for parent in traversal.walk(tree):
        for name in parent._fields:
            value = getattr(parent, name, None)
            if isinstance(value, ast.Slice) and id(value) not in allowed:
                setattr(parent, name, as_slice_object(value))
            elif value.__class__ is list:
                for k, item in enumerate(value):
                    if isinstance(item, ast.Slice) and id(item) not in allowed:
                        value[k] = as_slice_object(item)
