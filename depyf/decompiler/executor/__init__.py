"""Symbolic execution of straight-line instructions: stack values become ast expressions.

The executor runs one stretch of instructions with a symbolic stack, appending statements as
they are completed. It stops before control flow and hands the terminating instruction (and the
condition it pops) to the structurer, which owns every decision about blocks and nesting.

The opcode semantics are mixin classes grouped by family (loads_stores.py, operators.py,
containers.py, calls.py, definitions.py, generators_exceptions.py); ordering.py holds the machinery
that keeps statements in execution order (spills, temporaries, tuple assignments); core.py composes
them into ``Executor``. The pseudo statements it emits for the structurer and the cleanup are in
``depyf.decompiler.pseudo_statements``.
"""

from depyf.decompiler.executor.core import Executor, Stop
from depyf.decompiler.executor.stack_reads import replace_everywhere, replace_in
from depyf.decompiler.pseudo_statements import (
    AnnotationMarkStmt,
    AppendStmt,
    ClassAnnotationsStmt,
    ExceptAsStmt,
    ModuleAnnotationsStmt,
    PopExceptStmt,
    ReraiseStmt,
    WithExitStmt,
)

__all__ = [
    "AnnotationMarkStmt", "AppendStmt", "ClassAnnotationsStmt", "ExceptAsStmt", "Executor",
    "ModuleAnnotationsStmt", "PopExceptStmt", "ReraiseStmt", "Stop", "WithExitStmt",
    "replace_everywhere", "replace_in"
]
