"""Printing a syntax tree as source: ``ast.unparse``, with plainer ``and``/``or`` chains.

``ast.unparse`` raises the precedence it asks of each further operand of a chain, so
``a and b and c != 2`` prints as ``a and b and (c != 2)`` and ``x or y or a and b`` as
``x or y or (a and b)``. Every operand of a chain binds the same, one level tighter than the
operator: the printer here asks that of each. A generator expression that is a call's only
argument is printed in the call's parentheses, as written (``sum(x for x in xs)``, where
``ast.unparse`` prints ``sum((x for x in xs))``). Everything else prints as ``ast.unparse`` does.
Where the running CPython's printer lacks the pieces this relies on, ``ast.unparse`` prints alone.
"""

from __future__ import annotations

import ast
import sys


def _base_printer() -> type | None:
    base = getattr(ast, "_Unparser", None)
    if base is None:
        try:  # 3.14+: the printer lives in its own module
            from _ast_unparse import Unparser as base
        except ImportError:
            return None
    needed = ("boolops", "boolop_precedence", "set_precedence", "require_parens", "interleave", "traverse",
              "write", "visit")
    return base if all(hasattr(base, name) for name in needed) else None


def _printer_class() -> type | None:
    base = _base_printer()
    if base is None:
        return None

    precedence = getattr(sys.modules.get(base.__module__), "_Precedence", None)
    atom = getattr(precedence, "ATOM", None)

    class Printer(base):
        def visit_Call(self, node: ast.Call) -> None:
            args = node.args
            if atom is None or not hasattr(self, "delimit") or len(args) != 1 or node.keywords \
                    or not isinstance(args[0], ast.GeneratorExp):
                super().visit_Call(node)
                return
            self.set_precedence(atom, node.func)
            self.traverse(node.func)
            with self.delimit("(", ")"):
                self.traverse(args[0].elt)
                for generator in args[0].generators:
                    self.traverse(generator)

        def visit_BoolOp(self, node: ast.BoolOp) -> None:
            operator = self.boolops[type(node.op).__name__]
            precedence = self.boolop_precedence[operator]

            def operand(value: ast.expr) -> None:
                self.set_precedence(precedence.next(), value)
                self.traverse(value)

            with self.require_parens(precedence, node):
                self.interleave(lambda: self.write(f" {operator} "), operand, node.values)

    return Printer


_PRINTER = _printer_class()


def unparse(tree: ast.AST) -> str:
    """The source of ``tree``."""
    if _PRINTER is None:
        return ast.unparse(tree)
    return _PRINTER().visit(tree)
