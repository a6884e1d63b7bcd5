"""Every private torch API that ``depyf.debug()`` and the linking tests use, one function each.

Each function names the private attribute it needs; when a torch release lacks it, the caller
gets one ``UnsupportedTorchError`` saying what is missing instead of a traceback from deep
inside torch. The lead merges this file into the single adapter module.
"""

from __future__ import annotations

import importlib
import types
from collections.abc import Callable
from typing import Any

__all__ = [
    "UnsupportedTorchError",
    "dynamo_callback_from_stance_patch",
    "inductor_loaded_modules",
    "register_bytecode_hook",
    "should_compile_frame",
    "run_frame_uncompiled",
]


class UnsupportedTorchError(RuntimeError):
    """This torch release lacks a private API depyf relies on; the message names it."""


def _private(module_name: str, attribute: str) -> Any:
    try:
        module = importlib.import_module(module_name)
        return getattr(module, attribute)
    except (ImportError, AttributeError) as exc:
        try:
            import torch

            version = torch.__version__
        except Exception:  # pragma: no cover - torch itself missing
            version = "(not importable)"
        raise UnsupportedTorchError(
            f"depyf needs {module_name}.{attribute}, which torch {version} does not provide ({exc}); "
            "depyf supports torch 2.13"
        ) from exc


def dynamo_callback_from_stance_patch(
    wrap: Callable[[Any, Any], Any],
) -> Callable[[], None]:
    """Route Dynamo's per-call choice of frame callback through ``wrap(original_result, callback)``.

    Private: ``torch._dynamo.eval_frame._callback_from_stance(callback)`` turns the compile
    callback into what runs under the current stance; for ``eager_on_recompile`` it returns
    ``False`` (run cached code only, silently). ``wrap`` may return a callable that is called on a
    cache miss instead. Returns the function that removes the patch.
    """
    eval_frame = importlib.import_module("torch._dynamo.eval_frame")
    original = _private("torch._dynamo.eval_frame", "_callback_from_stance")

    def patched(callback: Any) -> Any:
        return wrap(original(callback), callback)

    patched.__wrapped__ = original  # type: ignore[attr-defined]
    eval_frame._callback_from_stance = patched

    def restore() -> None:
        if eval_frame._callback_from_stance is patched:
            eval_frame._callback_from_stance = original

    return restore


def should_compile_frame(frame: types.FrameType) -> bool:
    """Whether Dynamo would try to compile ``frame`` at all (not a skipped file, has tensors).

    Private: ``torch._dynamo.trace_rules.check`` and ``torch._dynamo.convert_frame.has_tensor_in_frame``,
    the same tests the ``fail_on_recompile`` stance applies before complaining.
    """
    skipped = _private("torch._dynamo.trace_rules", "check")
    has_tensor = _private("torch._dynamo.convert_frame", "has_tensor_in_frame")
    return not skipped(frame.f_code) and bool(has_tensor(frame))


def run_frame_uncompiled() -> Any:
    """What a Dynamo frame callback returns to run this one frame without compiling it.

    Private: ``torch._dynamo.types.ConvertFrameReturn`` and ``FrameExecStrategy``/``FrameAction``.
    The frame runs as plain Python; frames it calls still use their compiled code; the code is
    not marked as skipped, so it compiles normally once ``depyf.debug()`` is left.
    """
    convert_frame_return = _private("torch._dynamo.types", "ConvertFrameReturn")
    strategy = _private("torch._dynamo.types", "FrameExecStrategy")
    action = _private("torch._dynamo.types", "FrameAction")
    return convert_frame_return(
        frame_exec_strategy=strategy(action.SKIP, action.DEFAULT), apply_to_code=False
    )


def inductor_loaded_modules() -> list[types.ModuleType]:
    """Output-code modules Inductor has loaded in this process, oldest first.

    Private: ``torch._inductor.codecache.PyCodeCache.modules``. Used by tests to find the module
    whose ``call`` a compiled graph runs.
    """
    cache = _private("torch._inductor.codecache", "PyCodeCache")
    modules = getattr(cache, "modules", None)
    if modules is None:
        raise UnsupportedTorchError("depyf needs torch._inductor.codecache.PyCodeCache.modules")
    return list(modules)


def register_bytecode_hook(hook: Callable[[types.CodeType, types.CodeType], Any]) -> Callable[[], None]:
    """Call ``hook(original_code, transformed_code)`` for each Dynamo transformation; it may return
    a replacement code object. Returns the function that removes the hook.

    Private: ``torch._dynamo.convert_frame.register_bytecode_hook``. Used by tests that link
    transformed code to a bytecode listing the way ``prepare_debug`` does.
    """
    register = _private("torch._dynamo.convert_frame", "register_bytecode_hook")
    handle = register(hook)
    return handle.remove
