"""Pseudo statements: what the executor emits for the structurer and the cleanup to read,
and which never reach the output."""

from __future__ import annotations

import ast


class AppendStmt(ast.stmt):
    """Pseudo statement: a comprehension adds ``value`` (and ``key``) to its accumulator."""

    _fields = ("value", "key")


class ClassAnnotationsStmt(ast.stmt):
    """Pseudo statement: a 3.14+ class body stores its ``__annotate__`` function (``fn``)."""

    _fields = ("fn",)


class ModuleAnnotationsStmt(ast.stmt):
    """Pseudo statement: a 3.14+ module stores its ``__annotate__`` function (``fn``)."""

    _fields = ("fn",)


class AnnotationMarkStmt(ast.stmt):
    """Pseudo statement: a 3.14+ module records that its annotation number ``index`` was reached
    (``__conditional_annotations__.add(index)``, right after the annotated statement)."""

    _fields = ("index",)


class WithExitStmt(ast.stmt):
    """Pseudo statement: the ``__exit__(None, None, None)`` call ending a with body."""

    _fields = ("exit",)


class PopExceptStmt(ast.stmt):
    """Pseudo statement: POP_EXCEPT, the end of an except clause."""

    _fields = ()


class ReraiseStmt(ast.stmt):
    """Pseudo statement: RERAISE of the exception being handled (end of an except chain)."""

    _fields = ()


class ExceptAsStmt(ast.stmt):
    """Pseudo statement: the caught exception stored into ``name``."""

    _fields = ("name",)


# Calls the executor puts in tests for the structuring to read: does the exception match an
# ``except`` clause's type, an ``except*`` clause's, does a with statement's exit swallow it.
# No source can call them.
EXCEPTION_MATCHES = "__exception_matches__"
EXCEPTION_GROUP_MATCHES = "__exception_group_matches__"
WITH_EXIT_SUPPRESSES = "__with_exit_suppresses__"
MARKER_CALLS = frozenset({EXCEPTION_MATCHES, EXCEPTION_GROUP_MATCHES, WITH_EXIT_SUPPRESSES})


def leftover_marker(nodes: list[ast.AST]) -> str | None:
    """What in a finished tree (every node listed in ``nodes``) is a pseudo statement or a marker
    call the structuring did not turn into source: printed, it would be missing code or a call of
    a name nothing defines. None when there is nothing."""
    for node in nodes:
        if isinstance(node, ast.Name) and node.id in MARKER_CALLS:
            return node.id
        if node.__class__.__module__ == __name__:
            return type(node).__name__
    return None
