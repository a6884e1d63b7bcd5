"""Facts about code objects that several layers need (the decompiler, the torch integration, the CLI)."""

from __future__ import annotations

import inspect
import types


def argument_names(code: types.CodeType) -> tuple[str, ...]:
    """The parameter names of ``code``, in order: positional, keyword-only, ``*args``, ``**kwargs``."""
    count = code.co_argcount + code.co_kwonlyargcount + bool(code.co_flags & inspect.CO_VARARGS) \
        + bool(code.co_flags & inspect.CO_VARKEYWORDS)
    return code.co_varnames[:count]
