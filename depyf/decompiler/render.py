"""Top of the pipeline: code object -> ast -> source text (placeholder until the core lands)."""

from __future__ import annotations

import ast
import types

from depyf.decompiler.errors import DecompilationError


def code_to_source(code: types.CodeType, defaults: dict[str, ast.expr] | None = None) -> str:
    raise DecompilationError("decompiler core not implemented yet", qualname=getattr(code, "co_qualname", code.co_name))
