"""The bytecode decompiler.

Pipeline: ``versions`` and ``instructions`` (each CPython's bytecode -> one instruction model) ->
``cfg`` (basic blocks and the exception table) -> ``executor`` (symbolic execution into ast
expressions) -> ``structure`` (statements and control flow) -> ``cleanup`` (readability rewrites)
-> ``render`` (``ast.unparse``); ``rebuild`` compiles the source back and ``flowcheck`` checks
that the recompiled code takes the same paths. Entry points are in ``api``.
"""

from depyf.decompiler.api import DecompilationError, Recompiled, decompile, recompile

__all__ = ["DecompilationError", "Recompiled", "decompile", "recompile"]
