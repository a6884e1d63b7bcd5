"""The bytecode decompiler.

Pipeline: ``instructions`` (per-version normalisation) -> ``cfg`` (basic blocks and
exception table) -> ``stack`` (symbolic execution into ast expressions) -> ``structure``
(statements and control flow) -> ``cleanup`` (readability rewrites) -> ``ast.unparse``.
"""

from depyf.decompiler.api import DecompilationError, Recompiled, decompile, recompile

__all__ = ["DecompilationError", "Recompiled", "decompile", "recompile"]
