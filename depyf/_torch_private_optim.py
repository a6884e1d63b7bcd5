"""Every private torch API the guard-skipping dispatcher touches, in one place.

Each function names the torch internal it needs and raises ``TorchInternalsChanged`` (an
``ImportError``) with that name when the installed torch lacks it, so a torch upgrade fails with a
message that says what moved instead of an ``AttributeError`` deep inside a call.
Checked against torch 2.13.
"""

from __future__ import annotations

import sys
import types
from collections.abc import Callable
from typing import Any

__all__ = [
    "TorchInternalsChanged",
    "cache_entries",
    "cache_entry_for",
    "compiling_frame_locals",
    "current_compile_id",
    "failed_guards",
    "lean_profiler_hooks",
    "register_bytecode_hook",
    "run_only_eval_frame",
    "set_eval_frame",
]


class TorchInternalsChanged(ImportError):
    """A private torch API that depyf.optimization relies on is missing from the installed torch."""


def _missing(what: str, exc: BaseException | None = None) -> TorchInternalsChanged:
    import torch

    return TorchInternalsChanged(
        f"depyf.optimization needs {what}, which torch {torch.__version__} does not provide"
        + (f" ({exc})" if exc else "")
        + "; depyf was checked against torch 2.13."
    )


def register_bytecode_hook(hook: Callable[[types.CodeType, types.CodeType], Any]) -> Any:
    """Call ``hook(original_code, transformed_code)`` after every Dynamo transformation.

    Returns a handle with ``.remove()``.
    """
    try:
        from torch._dynamo.convert_frame import register_bytecode_hook as register
    except ImportError as exc:
        raise _missing("torch._dynamo.convert_frame.register_bytecode_hook", exc) from exc
    return register(hook)


def cache_entries(code: types.CodeType) -> list[Any]:
    """Dynamo's cache entries for ``code``: each has ``.code`` (transformed) and ``.guard_manager``."""
    try:
        from torch._dynamo.eval_frame import _debug_get_cache_entry_list
    except ImportError as exc:
        raise _missing("torch._dynamo.eval_frame._debug_get_cache_entry_list", exc) from exc
    return list(_debug_get_cache_entry_list(code))


def cache_entry_for(code: types.CodeType, transformed: types.CodeType, compile_id: Any) -> Any | None:
    """The cache entry of ``code`` that a bytecode hook saw being made, or None (evicted, reset).

    Matched by the transformed code itself, else by compile id: a bytecode hook registered after
    ours (``depyf.prepare_debug`` is one) may have replaced the code that the cache entry runs.
    """
    entries = cache_entries(code)
    for entry in entries:
        if entry.code is transformed:
            return entry
    if compile_id is not None:
        for entry in entries:
            if getattr(entry, "compile_id", None) == compile_id:
                return entry
    return None


def current_compile_id() -> Any | None:
    """The id of the compilation in progress (``torch._guards.CompileId``), or None outside one."""
    try:
        from torch._guards import CompileContext
    except ImportError as exc:
        raise _missing("torch._guards.CompileContext", exc) from exc
    return CompileContext.current_compile_id()


def compiling_frame_locals() -> dict[str, Any] | None:
    """The local variables of the frame Dynamo is compiling right now, or None if not found.

    Only meaningful when called from a bytecode hook: torch 2.13's ``convert_frame._compile``
    receives the frame's locals as its ``locals`` argument, and the hook runs below it on the stack.
    The hook itself gets no frame, so this is the only way to tell which instance triggered a
    compilation of a method shared by many instances.
    """
    frame = sys._getframe(1)
    while frame is not None:
        code = frame.f_code
        if code.co_name == "_compile" and code.co_filename.endswith("convert_frame.py"):
            value = frame.f_locals.get("locals")
            return value if isinstance(value, dict) else None
        frame = frame.f_back
    return None


def failed_guards(guard_manager: Any, f_locals: dict[str, Any]) -> list[str] | None:
    """None when the guards of one cache entry pass for ``f_locals``, else the failed guards' text."""
    try:
        check_verbose = guard_manager.check_verbose
    except AttributeError as exc:
        raise _missing("GuardManagerWrapper.check_verbose", exc) from exc
    result = check_verbose(f_locals)
    if result.result:
        return None
    return [str(part) for part in result.verbose_code_parts] or ["(torch reported no guard text)"]


def set_eval_frame() -> Callable[[Any], Any]:
    """``torch._C._dynamo.eval_frame.set_eval_frame``: installs a frame callback, returns the prior one."""
    try:
        from torch._C._dynamo.eval_frame import set_eval_frame as setter
    except ImportError as exc:
        raise _missing("torch._C._dynamo.eval_frame.set_eval_frame", exc) from exc
    return setter


# The callback value that puts Dynamo in "run only" mode: frames whose code has cache entries run
# their compiled code when the guards pass, nothing is ever compiled (what torch._dynamo.run() sets).
run_only_eval_frame = False


# Dynamo's transformed code opens a profiler range around the code before the graph call through
# these functions of torch._dynamo.utils, reached via this global. When no profiler runs they still
# cost about 3 us a call (one of them is wrapped in torch._disable_dynamo), as much as a small graph.
_DYNAMO_UTILS_GLOBAL = "__import_torch_dot__dynamo_dot_utils"
_LEAN_UTILS_GLOBAL = "__depyf_dispatch_dynamo_utils"


class _LeanDynamoUtils:
    """Stands in for torch._dynamo.utils in dispatched code: same profiler ranges, less overhead."""

    def __init__(self) -> None:
        import contextlib

        import torch.autograd.profiler as profiler
        from torch._dynamo import utils

        self._utils = utils
        null = contextlib.nullcontext()
        real_enter = utils.record_pregraph_bytecode_enter
        real_exit = utils.record_pregraph_bytecode_exit

        def record_pregraph_bytecode_enter() -> Any:
            if profiler._is_profiler_enabled:
                return real_enter()
            return null

        def record_pregraph_bytecode_exit(cm: Any) -> None:
            if cm is not null:
                real_exit(cm)

        self.record_pregraph_bytecode_enter = record_pregraph_bytecode_enter
        self.record_pregraph_bytecode_exit = record_pregraph_bytecode_exit

    def __getattr__(self, name: str) -> Any:  # anything else Dynamo's code reads from the module
        return getattr(self._utils, name)


def lean_profiler_hooks(code: types.CodeType, globals_: dict[str, Any]) -> types.CodeType:
    """``code`` reading Dynamo's profiler-range helpers from a faster stand-in, if it uses them.

    The stand-in opens the same "Pregraph bytecode" range when a profiler is running and does
    nothing otherwise. Installs the stand-in in ``globals_`` (the function's module globals).
    """
    if _DYNAMO_UTILS_GLOBAL not in code.co_names:
        return code
    if _LEAN_UTILS_GLOBAL not in globals_:
        try:
            globals_[_LEAN_UTILS_GLOBAL] = _LeanDynamoUtils()
        except (ImportError, AttributeError):
            return code  # torch moved them: dispatch still works, only slower
    names = tuple(_LEAN_UTILS_GLOBAL if name == _DYNAMO_UTILS_GLOBAL else name for name in code.co_names)
    return code.replace(co_names=names)
