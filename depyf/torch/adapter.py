"""Every private torch API depyf touches, in one place, one small function each.

Why one module: private APIs change between torch releases. Keeping every access here means a
new torch release breaks at most this file, and ``check_supported()`` can name exactly what is
missing instead of failing with a traceback from deep inside a compilation. Each function has a
test in ``tests/torch/test_adapter.py``.

Nothing here runs at import time beyond importing torch; every patch is undone by the callable
it returns.
"""

from __future__ import annotations

import contextlib
import functools
import logging
import types
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import torch


class UnsupportedTorchError(RuntimeError):
    """The installed torch lacks something depyf needs; the message names each missing piece."""


# (dotted location, what depyf uses it for); checked by ``check_supported``.
_REQUIRED: list[tuple[str, str]] = [
    ("torch._dynamo.convert_frame.register_bytecode_hook", "see Dynamo's transformed bytecode"),
    ("torch._dynamo.convert_frame.bytecode_log", "log decompiled source next to TORCH_LOGS=+bytecode"),
    ("torch._dynamo.eval_frame._debug_get_cache_entry_list", "list cache entries and their guards"),
    ("torch._logging._internal.trace_log", "read graphs, guards and graph breaks from the structured trace"),
    ("torch._guards.CompileContext.current_compile_id", "tell compilations apart"),
    ("torch._dynamo.output_graph.OutputGraph.call_user_compiler", "see the captured graph module"),
    ("torch._dynamo.backends.common.AotAutograd.__call__", "see forward/backward graph modules"),
    ("torch._inductor.codecache.PyCodeCache.load_by_key_path", "see Inductor's generated module"),
    ("torch._inductor.config.fx_graph_cache", "turn off Inductor's FX graph cache while dumping"),
    ("torch._functorch.config.enable_autograd_cache", "turn off the AOTAutograd cache while dumping"),
]


def _resolve(dotted: str) -> Any:
    parts = dotted.split(".")
    obj: Any = None
    for i in range(len(parts), 0, -1):
        try:
            obj = __import__(".".join(parts[:i]), fromlist=["_"])
        except ImportError:
            continue
        for attr in parts[i:]:
            obj = getattr(obj, attr)
        return obj
    raise ImportError(dotted)


def missing_apis() -> list[str]:
    """Lines naming each private torch API depyf needs that this torch does not have."""
    missing = []
    for dotted, why in _REQUIRED:
        try:
            _resolve(dotted)
        except (ImportError, AttributeError):
            missing.append(f"{dotted} (used to {why})")
    return missing


@functools.lru_cache(maxsize=1)
def check_supported() -> None:
    """Raise ``UnsupportedTorchError`` listing every missing private API, or return quietly."""
    missing = missing_apis()
    if missing:
        raise UnsupportedTorchError(
            f"depyf does not support torch {torch.__version__}: it lacks\n  - " + "\n  - ".join(missing)
            + "\ndepyf is tested with torch 2.13."
        )


# --- Dynamo bytecode ------------------------------------------------------------------------------

def register_bytecode_hook(hook: Callable[[types.CodeType, types.CodeType], types.CodeType | None]) -> Any:
    """Register ``hook(original_code, dynamo_code)``; returns a handle with ``.remove()``."""
    from torch._dynamo.convert_frame import register_bytecode_hook as _register

    return _register(hook)


def bytecode_hook_count() -> int:
    """How many bytecode hooks Dynamo holds (used to check that depyf removed its own)."""
    from torch._dynamo import convert_frame

    return len(convert_frame._bytecode_hooks)


def bytecode_logger() -> logging.Logger:
    """The logger behind ``TORCH_LOGS=+bytecode``."""
    from torch._dynamo import convert_frame

    return convert_frame.bytecode_log


def compile_key() -> str | None:
    """``"<frame_id>/<frame_compile_id>"`` of the compilation running now, or None outside one."""
    from torch._guards import CompileContext

    cid = CompileContext.current_compile_id()
    if cid is None or cid.frame_id is None:
        return None
    return f"{cid.frame_id}/{cid.frame_compile_id}"


# --- cache entries and guards ---------------------------------------------------------------------

@dataclass(frozen=True)
class CacheEntryView:
    """What depyf reads from one Dynamo cache entry (the C++ object is not kept)."""

    code: types.CodeType
    compile_key: str | None
    guard_manager: Any
    backend: str | None = None


def cache_entries(code: types.CodeType) -> list[CacheEntryView]:
    """Cache entries of ``code`` in the order Dynamo checks them (most recent first)."""
    from torch._dynamo.eval_frame import _debug_get_cache_entry_list

    out = []
    for entry in _debug_get_cache_entry_list(code):
        cid = getattr(entry, "compile_id", None)
        key = None
        if cid is not None and getattr(cid, "frame_id", None) is not None:
            key = f"{cid.frame_id}/{cid.frame_compile_id}"
        out.append(CacheEntryView(code=entry.code, compile_key=key,
                                  guard_manager=getattr(entry, "guard_manager", None),
                                  backend=backend_name(getattr(entry, "backend", None))))
    return out


def backend_name(backend: Any) -> str | None:
    """A readable name for the backend object Dynamo stores on a cache entry."""
    if backend is None:
        return None
    for attr in ("compiler_name", "__name__"):
        name = getattr(backend, attr, None)
        if isinstance(name, str):
            return name
    inner = getattr(backend, "compiler_fn", None)
    if inner is not None and inner is not backend:
        return backend_name(inner)
    return type(backend).__name__


@dataclass(frozen=True)
class LeafGuard:
    """One leaf guard: its kind (``TENSOR_MATCH``...) and Dynamo's verbose text for it."""

    kind: str
    parts: tuple[str, ...]


def leaf_guards(guard_manager: Any) -> list[LeafGuard]:
    """Every leaf guard in the guard tree, depth first, children of dict managers included."""
    root = getattr(guard_manager, "root", guard_manager)
    out: list[LeafGuard] = []
    seen: set[int] = set()

    def walk(manager: Any) -> None:
        if id(manager) in seen:
            return
        seen.add(id(manager))
        for leaf in manager.get_leaf_guards():
            out.append(LeafGuard(type(leaf).__name__, tuple(leaf.verbose_code_parts())))
        for child in manager.get_child_managers():
            walk(child)
        # Dict guard managers keep key/value managers apart from the accessor children.
        get_key_value = getattr(manager, "get_key_value_managers", None)
        if callable(get_key_value):
            for pair in get_key_value().values():
                for sub in pair:
                    if sub is not None:
                        walk(sub)

    walk(root)
    epilogue = getattr(root, "get_epilogue_lambda_guards", None)
    if callable(epilogue):
        for leaf in epilogue():
            out.append(LeafGuard(type(leaf).__name__, tuple(leaf.verbose_code_parts())))
    return out


def original_callable(fn: Any) -> Any:
    """The user's function behind a ``torch.compile`` wrapper (``fn`` itself when not wrapped)."""
    inner = getattr(fn, "_torchdynamo_orig_callable", None)
    if inner is not None:
        return inner
    if isinstance(fn, torch.nn.Module):
        orig_mod = getattr(fn, "_orig_mod", None)
        if orig_mod is not None:
            return orig_mod.forward
        return fn.forward
    return fn


# --- structured trace -----------------------------------------------------------------------------

def trace_logger() -> logging.Logger:
    """The structured-trace logger (what ``TORCH_TRACE``/tlparse read); records carry
    ``metadata`` (dict) and ``payload`` (str or None) attributes."""
    from torch._logging._internal import trace_log

    return trace_log


def record_compile_key(metadata: dict[str, Any]) -> str | None:
    """The compile key of a structured-trace record (None when it has no frame)."""
    frame_id = metadata.get("frame_id")
    if frame_id is None:
        return None
    return f"{frame_id}/{metadata.get('frame_compile_id')}"


# --- compiler seams -------------------------------------------------------------------------------

Undo = Callable[[], None]


def patch_call_user_compiler(
    around: Callable[[Callable[[Any, list[Any]], Any], Any, list[Any]], Any],
) -> Undo:
    """Route Dynamo's backend call through ``around(call, gm, example_inputs)``.

    ``gm.meta["backend_id"]`` is the ``__compiled_fn_<n>_<uuid>`` global the transformed code calls.
    """
    from torch._dynamo.output_graph import OutputGraph

    original = OutputGraph.__dict__["call_user_compiler"]

    @functools.wraps(original)
    def call_user_compiler(self: Any, gm: Any, example_inputs: list[Any]) -> Any:
        return around(lambda g, inputs: original(self, g, inputs), gm, example_inputs)

    OutputGraph.call_user_compiler = call_user_compiler

    def undo() -> None:
        OutputGraph.call_user_compiler = original

    return undo


def graph_backend_id(gm: Any) -> str | None:
    """The ``__compiled_fn_...`` name Dynamo gave a captured graph module."""
    meta = getattr(gm, "meta", None)
    return meta.get("backend_id") if isinstance(meta, dict) else None


def patch_aot_compilers(wrap: Callable[[str, Callable[..., Any]], Callable[..., Any]]) -> Undo:
    """Wrap AOTAutograd's forward/backward/inference compilers (aot_eager and inductor both go
    through ``AotAutograd``): ``wrap(stage, compiler)`` returns the compiler to use, stage being
    ``"forward"``, ``"backward"`` or ``"inference"``. The backend's own settings are restored after
    each call, so nothing outlives the patch."""
    from torch._dynamo.backends.common import AotAutograd

    original = AotAutograd.__dict__["__call__"]

    @functools.wraps(original)
    def __call__(self: Any, gm: Any, example_inputs: Any, **kwargs: Any) -> Any:
        saved = self.kwargs
        patched = dict(saved)
        fw = saved.get("fw_compiler")
        if fw is not None and not getattr(fw, "_depyf_wrapped", False):
            patched["fw_compiler"] = _mark(wrap("forward", fw))
            bw = saved.get("bw_compiler") or fw
            if not getattr(bw, "_depyf_wrapped", False):
                patched["bw_compiler"] = _mark(wrap("backward", bw))
            inference = saved.get("inference_compiler") or fw
            if not getattr(inference, "_depyf_wrapped", False):
                patched["inference_compiler"] = _mark(wrap("inference", inference))
        self.kwargs = patched
        try:
            return original(self, gm, example_inputs, **kwargs)
        finally:
            self.kwargs = saved

    AotAutograd.__call__ = __call__

    def undo() -> None:
        AotAutograd.__call__ = original

    return undo


def _mark(fn: Callable[..., Any]) -> Callable[..., Any]:
    try:
        fn._depyf_wrapped = True  # type: ignore[attr-defined]
    except AttributeError:
        pass
    return fn


def patch_inductor_module_loader(on_load: Callable[[types.ModuleType, str], None]) -> Undo:
    """Call ``on_load(module, path)`` for each Python module Inductor loads from its code cache
    (its output code defines ``call``), before Inductor takes ``call`` from it."""
    from torch._inductor.codecache import PyCodeCache

    original = PyCodeCache.__dict__["load_by_key_path"]
    func = original.__func__

    @functools.wraps(func)
    def load_by_key_path(cls: Any, key: str, path: str, *args: Any, **kwargs: Any) -> Any:
        module = func(cls, key, path, *args, **kwargs)
        on_load(module, path)
        return module

    PyCodeCache.load_by_key_path = classmethod(load_by_key_path)

    def undo() -> None:
        PyCodeCache.load_by_key_path = original

    return undo


@contextlib.contextmanager
def compile_caches_disabled() -> Iterator[None]:
    """Turn off Inductor's FX graph cache and the AOTAutograd cache: a warm cache skips the
    stages whose graphs the dump shows."""
    import torch._functorch.config as functorch_config
    import torch._inductor.config as inductor_config

    with inductor_config.patch(fx_graph_cache=False), functorch_config.patch(enable_autograd_cache=False):
        yield


def state_snapshot() -> dict[str, Any]:
    """Everything depyf may touch, for tests that check it is all put back."""
    from torch._dynamo.backends.common import AotAutograd
    from torch._dynamo.output_graph import OutputGraph
    from torch._functorch import config as functorch_config
    from torch._inductor import config as inductor_config
    from torch._inductor.codecache import PyCodeCache

    return {
        "bytecode_hooks": bytecode_hook_count(),
        # torch's own lazy TORCH_TRACE handler removes itself on the first trace event; not ours.
        "trace_handlers": [h for h in trace_logger().handlers if type(h).__name__ != "LazyTraceHandler"],
        "call_user_compiler": OutputGraph.__dict__["call_user_compiler"],
        "aot_call": AotAutograd.__dict__["__call__"],
        "load_by_key_path": PyCodeCache.__dict__["load_by_key_path"],
        "fx_graph_cache": inductor_config.fx_graph_cache,
        "autograd_cache": functorch_config.enable_autograd_cache,
        "bytecode_log_handlers": list(bytecode_logger().handlers),
    }


def distributed_rank() -> int | None:
    """This process's rank under an initialised ``torch.distributed``, else None."""
    dist = torch.distributed
    if dist.is_available() and dist.is_initialized():
        return int(dist.get_rank())
    return None
