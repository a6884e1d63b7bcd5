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
