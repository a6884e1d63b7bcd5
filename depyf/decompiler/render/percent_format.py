"""f-strings that CPython 3.11 cannot print, written as ``%`` formatting instead.

Before 3.12 an f-string's expression parts may not contain a backslash, so source such as
``r"\\frac{%s}" % (" ".join([r"\\partial %s" % v for v in vs]),)`` has no f-string spelling there.
Its bytecode is an f-string's all the same: 3.11's compiler turns ``%`` formatting with only
``%s``, ``%r`` and ``%a`` into the code of an f-string. Written back as ``%`` formatting, such a
string compiles to the very same code.
"""

from __future__ import annotations

import ast

_SPECIFIER = {115: "%s", 114: "%r", 97: "%a"}     # FormattedValue.conversion -> its % specifier


def percent_formats(tree: ast.AST) -> bool:
    """Rewrite in place each f-string whose expression parts need a backslash, where it has a ``%``
    spelling (only ``!s``, ``!r``, ``!a`` parts, no format specs). Whether any was rewritten."""
    rewriter = _Rewriter()
    rewriter.visit(tree)
    return rewriter.changed


class _Rewriter(ast.NodeTransformer):
    changed = False

    def visit_JoinedStr(self, node: ast.JoinedStr) -> ast.expr:
        if _needs_backslash(node) and all(_spellable(part) for part in node.values):
            self.changed = True
            text = "".join(part.value.replace("%", "%%") if isinstance(part, ast.Constant)
                           else _SPECIFIER[part.conversion] for part in node.values)
            values = [part.value for part in node.values if isinstance(part, ast.FormattedValue)]
            node = ast.BinOp(ast.Constant(text), ast.Mod(), ast.Tuple(values, ast.Load()))
        return self.generic_visit(node)


def _spellable(part: ast.expr) -> bool:
    if isinstance(part, ast.Constant):
        return isinstance(part.value, str)
    return isinstance(part, ast.FormattedValue) and part.format_spec is None and part.conversion in _SPECIFIER


def _needs_backslash(node: ast.JoinedStr) -> bool:
    """Does a string or bytes constant inside an expression part print with a backslash?"""
    for part in node.values:
        if isinstance(part, ast.FormattedValue):
            for inner in ast.walk(part.value):
                if isinstance(inner, ast.Constant) and isinstance(inner.value, (str, bytes)) \
                        and "\\" in repr(inner.value):
                    return True
    return False
