"""Fast walks over ast trees.

The symbolic run looks through its pending expressions after almost every instruction (does a
store overwrite something still to be read, is a copied value used twice). ``ast.walk`` does that
with a generator per node (``iter_child_nodes`` over ``iter_fields``), which cost more than the
looking itself on Dynamo's long stack-heavy code; ``ast.NodeVisitor`` makes a method call per
node. These walks visit the same nodes in the same order, with plain loops over each node's
``_fields``.
"""

from __future__ import annotations

import ast


def walk(tree: ast.AST) -> list[ast.AST]:
    """Every node of ``tree``, breadth first, in ``ast.walk``'s order (``tree`` first)."""
    nodes = [tree]
    append = nodes.append
    i = 0
    while i < len(nodes):
        node = nodes[i]
        i += 1
        for name in node._fields:
            value = getattr(node, name, None)
            if isinstance(value, ast.AST):
                append(value)
            elif value.__class__ is list:
                for item in value:
                    if isinstance(item, ast.AST):
                        append(item)
    return nodes


def preorder(tree: ast.AST) -> list[ast.AST]:
    """Every node of ``tree``, depth first, each before its children, in the order an
    ``ast.NodeVisitor`` visits them (a node reached twice is listed twice)."""
    nodes = []
    append = nodes.append
    stack = [tree]
    push, pop = stack.append, stack.pop
    AST = ast.AST
    while stack:
        node = pop()
        append(node)
        # children pushed last field first, each list backwards: they come off in order
        for name in reversed(node._fields):
            value = getattr(node, name, None)
            if isinstance(value, AST):
                push(value)
            elif value.__class__ is list:
                for item in reversed(value):
                    if isinstance(item, AST):
                        push(item)
    return nodes


def replace_in(tree: ast.AST, old: ast.AST, new: ast.AST) -> None:
    """Replace every occurrence of ``old`` (by identity) below ``tree`` with ``new``.

    ``new`` is not searched: the walk is taken before anything is replaced."""
    for parent in walk(tree):
        for name in parent._fields:
            value = getattr(parent, name, None)
            if value is old:
                setattr(parent, name, new)
            elif value.__class__ is list:
                for k, item in enumerate(value):
                    if item is old:
                        value[k] = new


def fill_locations(tree: ast.AST, lineno: int = 1, col_offset: int = 0,
                   nodes: list[ast.AST] | None = None) -> ast.AST:
    """Give every node below ``tree`` that has none a location (``lineno`` etc.), as ``compile``
    and ``ast.unparse`` need. Unlike ``ast.fix_missing_locations`` it does not copy the parent's
    position: the nodes it fills are ones we made, whose positions nobody reads. ``nodes``: every
    node of the tree in any order (``walk`` or ``preorder``), when the caller has them."""
    for node in walk(tree) if nodes is None else nodes:
        attributes = node._attributes
        if "lineno" in attributes and not hasattr(node, "lineno"):
            node.lineno = lineno
            node.col_offset = col_offset
        if "end_lineno" in attributes and getattr(node, "end_lineno", None) is None:
            node.end_lineno = lineno
            node.end_col_offset = col_offset
    return tree
