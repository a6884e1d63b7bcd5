"""Every private torch API depyf touches, in one place, one small function each.

Why one module: private APIs change between torch releases. Keeping every access here means a
new torch release breaks at most this file. Each function has a test in
``tests/torch/test_adapter.py``.

Nothing here runs at import time beyond importing torch; every patch is undone by the callable
it returns.

Releases and the degrade-safely rule
------------------------------------
depyf supports torch ``MIN_TORCH`` (2.2) and later; ``check_supported()`` raises
``UnsupportedTorchError`` on anything older, once, at ``prepare_debug``/``install`` entry. On a
supported release a piece of torch may still be missing or have another shape. Every seam
therefore checks what it wraps *before* patching it, through ``expect(dotted, params)``:
``expect`` returns the object, or raises ``UnsupportedTorchError`` whose message names the torch
version and the missing piece. The caller (``DumpSession.start``) turns that error into one
unavailable *feature*: one ``DepyfWarning``, an ``{"feature", "reason"}`` item in index.json's
``"unavailable"`` list, and the user's program runs unchanged because nothing was patched.

To support a release whose API differs, add a function here that picks the variant by shape
(``has(dotted)``, ``expect``), never by comparing version numbers where a shape test works, and a
test in ``tests/torch/test_adapter.py`` that fails on that release without it. Shapes by release:

- 2.2: no structured trace (``torch._logging._internal.trace_log``); its pieces come from other
  seams, used only where it is absent: graph breaks from the captured graph's
  ``compile_subgraph_reason``, the joint graph from AOTAutograd (``patch_joint_graph``),
  recompilation reasons from Dynamo's guard-failure check (``patch_recompile_reasons``), and the
  per-tensor guard text (``check_tensor(...)``, which 2.2 and 2.3 only log) from the guards log
  (``patch_tensor_guard_text``). aot_eager's backward comes back inside ``torch._dynamo.disable``
  (``graph_runs_interpreted`` looks through it).
- 2.3: guard functions are Python (no C++ guard manager) and write the per-tensor text only to the
  guards log, as on 2.2, although a trace exists (``tensor_guards_only_logged``).
- 2.3 and 2.4: the trace has no recompilation reasons (``recompile_reasons``, 2.5): they come from
  ``patch_recompile_reasons`` as on 2.2 (``dynamo_traces_recompile_reasons``).
- 2.3 to 2.5 at least (2.6 not checked) the trace has no graph-break records
  (``dynamo_graph_break_reason``; 2.7 has them): graph breaks come from the captured graph's
  ``compile_subgraph_reason`` as on 2.2 (``dynamo_traces_graph_breaks``).
- up to 2.6 the trace has no pre-grad graph (and up to 2.4 no post-grad graph): those stages come
  from wrapping Inductor's passes (``inductor_traces``, ``patch_inductor_passes``). No
  ``AotAutograd`` class: the AOT compilers are wrapped at
  ``torch._dynamo.backends.common.aot_module_simplified``. Cache entries carry ``check_fn``
  (guard text in ``verbose_code_parts``) instead of a guard manager. Up to 2.5 Dynamo drops a
  cache entry whose identity-checked object is freed, possibly before the next compilation: the
  guard function is read as ``convert_frame.GuardedCode`` pairs it with the code
  (``patch_guarded_code``).
- 2.5 to 2.8 at least: a guard's user stack (the ``# x = a + 1`` behind each guard) is recorded
  only while the ``guards`` log is on; depyf turns it on, quietly, where the user has not
  (``keep_guard_user_lines``, decided by behaviour in ``guards_keep_user_stacks``).
- 2.2 to 2.4: a resume function that carries a closure (the ``__class__`` cell of a method that
  calls ``super()``, a variable a nested function reads) is made in place (``LOAD_CLOSURE``,
  ``BUILD_TUPLE``, ``LOAD_CONST <code>``, ``MAKE_FUNCTION``) and called at once: the decompiler
  names it with a placeholder and the recompiled code makes it from the same code object.
- 2.2 to 2.5: no compile stance (``torch.compiler.set_stance``, 2.6): ``depyf.debug()`` stops new
  compilations by installing Dynamo's compile callbacks as run-only mode
  (``patch_compile_callbacks_to_run_only``).
- 2.5: ``AotAutograd`` stores its backward-compiler wrapper in the backend's own settings, so from
  the second compilation on the backward compiler returns ``torch._dynamo.disable(compiled)``
  (``graph_runs_interpreted`` looks through it, as on 2.2).
- 2.2 to 2.5: ``OutputGraph.call_user_compiler(self, gm)`` takes no example inputs and the graph
  module has no ``meta["backend_id"]``: the name is the ``name`` local of the calling
  ``compile_and_call_fx_graph``.
- 2.2 (the dispatcher, ``depyf.optimization``): ``torch._C._dynamo`` is no package (its
  ``eval_frame`` is reached by attribute); Dynamo empties the compiling frame's locals dict after
  the compilation (``compiling_frame_locals`` copies it); cache entries carry no compile id (the
  entry a bytecode hook saw made is found by its place, ``CompileMark``). 2.2 to 2.4: guard
  functions check the current backend (2.2: ``___skip_backend_check() or ___current_backend() ==
  ...``, 2.3: ``___check_current_backend(id)``), which run-only mode skips through the flag of
  ``eval_frame.guarded_backend_cache`` (2.2 and 2.3; 2.2 fills it through
  ``_maybe_init_guarded_backend_cache``, 2.3 reads it with a default; 2.4 has neither)
  (``set_eval_frame``, ``failed_guards``).
"""

from __future__ import annotations

import contextlib
import functools
import importlib
import logging
import multiprocessing.process
import os
import re
import sys
import types
import weakref
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import torch


class UnsupportedTorchError(RuntimeError):
    """The installed torch cannot do what depyf asked of it: the release is older than ``MIN_TORCH``,
    or a private piece depyf uses is missing or has another shape (the message names the torch
    version and the piece). Where a dump needs the piece, only that feature is turned off and
    nothing is patched; ``depyf.debug()`` and ``depyf.optimization`` raise it to the caller."""


MIN_TORCH = (2, 2)


def torch_version() -> str:
    """``torch.__version__`` without a local suffix (``2.2.2+cu121`` -> ``2.2.2``)."""
    return str(torch.__version__).split("+")[0]


def _release(version: str) -> tuple[int, ...]:
    out = []
    for part in version.split(".")[:2]:
        digits = "".join(ch for ch in part if ch.isdigit())
        out.append(int(digits or 0))
    return tuple(out)


# (dotted location, what depyf uses it for): the pieces ``missing_apis`` reports.
_REQUIRED: list[tuple[str, str]] = [
    ("torch._dynamo.convert_frame.register_bytecode_hook", "see Dynamo's transformed bytecode"),
    ("torch._dynamo.convert_frame.bytecode_log", "log decompiled source next to TORCH_LOGS=+bytecode"),
    ("torch._dynamo.eval_frame._debug_get_cache_entry_list", "list cache entries and their guards"),
    ("torch._logging._internal.trace_log", "read graphs, guards and graph breaks from the structured trace"),
    ("torch._logging._internal.trace_structured", "skip building trace records nobody reads"),
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


def has(dotted: str) -> bool:
    """Whether this torch has ``dotted`` (a module, or an attribute path inside one)."""
    try:
        _resolve(dotted)
    except (ImportError, AttributeError):
        return False
    return True


def expect(dotted: str, params: tuple[str, ...] = ()) -> Any:
    """``dotted`` resolved, checked to take ``params`` as its first parameters (names, in order).

    Raises ``UnsupportedTorchError`` naming the torch version and the missing piece, so a patch is never
    installed over something of another shape."""
    try:
        obj = _resolve(dotted)
    except (ImportError, AttributeError):
        raise UnsupportedTorchError(f"torch {torch_version()} has no {dotted}") from None
    if params:
        import inspect

        target = obj.__func__ if isinstance(obj, (classmethod, staticmethod)) else obj
        try:
            names = tuple(inspect.signature(target).parameters)
        except (TypeError, ValueError):
            raise UnsupportedTorchError(
                f"torch {torch_version()}: {dotted} has no inspectable signature"
            ) from None
        if names[:len(params)] != params:
            raise UnsupportedTorchError(f"torch {torch_version()}: {dotted} takes ({', '.join(names)}), "
                               f"depyf expects ({', '.join(params)}, ...)")
    return obj


def missing_apis() -> list[str]:
    """Lines naming each private torch API the full feature set uses that this torch lacks."""
    return [f"{dotted} (used to {why})" for dotted, why in _REQUIRED if not has(dotted)]


@functools.lru_cache(maxsize=1)
def check_supported() -> None:
    """Raise ``UnsupportedTorchError`` on a torch older than ``MIN_TORCH``, else return quietly.

    A supported release that lacks a piece loses only the feature that needs it (see the module
    docstring), so this checks the release alone."""
    if _release(torch_version()) < MIN_TORCH:
        raise UnsupportedTorchError(
            f"depyf supports torch {'.'.join(map(str, MIN_TORCH))} and later; this is torch "
            f"{torch.__version__}. Upgrade torch (pip install 'torch>=2.2') or use an older depyf."
        )


# --- Dynamo bytecode ------------------------------------------------------------------------------

def register_bytecode_hook(hook: Callable[[types.CodeType, types.CodeType], types.CodeType | None]) -> Any:
    """Register ``hook(original_code, dynamo_code)``; returns a handle with ``.remove()``."""
    return expect("torch._dynamo.convert_frame.register_bytecode_hook")(hook)


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


@dataclass(frozen=True)
class ResumeOf:
    """What a resume function's name says: the function it resumes and the line it resumes at."""

    parent: str
    line: int | None


_RESUME_NAME = re.compile(r"^torch_dynamo_resume_in_(?P<parent>.+)_at_(?P<line>\d+)$")
_OLD_RESUME_NAME = re.compile(r"^resume_in_(?P<parent>.+)$")


def resume_of(code: types.CodeType) -> ResumeOf | None:
    """``ResumeOf`` for a resume function Dynamo made, else None.

    Dynamo names them ``torch_dynamo_resume_in_<fn>_at_<line>`` from 2.5 and ``resume_in_<fn>``
    before (the line is then the code's first line number)."""
    name = code.co_name
    match = _RESUME_NAME.match(name)
    if match:
        return ResumeOf(match.group("parent"), int(match.group("line")))
    match = _OLD_RESUME_NAME.match(name)
    if match:
        return ResumeOf(match.group("parent"), code.co_firstlineno)
    return None


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
        if getattr(entry, "code", None) is None:
            # invalidated (torch 2.15 leaves an entry whose guarded object was freed in the list
            # with no code): nothing of it runs any more; its guards were read while it was alive
            continue
        cid = getattr(entry, "compile_id", None)
        key = None
        if cid is not None and getattr(cid, "frame_id", None) is not None:
            key = f"{cid.frame_id}/{cid.frame_compile_id}"
        backend = backend_name(getattr(entry, "backend", None)) or compile_backend_name(key)
        out.append(CacheEntryView(code=entry.code, compile_key=key, guard_manager=_guards_of(entry),
                                  backend=backend))
    return out


def _guards_of(entry: Any) -> Any:
    """The guard tree of a cache entry: ``guard_manager`` from 2.6, ``check_fn`` before (a guard
    manager wrapper on 2.5, a Python guard function with ``verbose_code_parts`` on 2.2 to 2.4)."""
    manager = getattr(entry, "guard_manager", None)
    return manager if manager is not None else getattr(entry, "check_fn", None)


def patch_guarded_code(on_guarded: Callable[[types.CodeType, Any], None]) -> Callable[[], None]:
    """Call ``on_guarded(code, check_fn)`` as Dynamo pairs the code it will run with its guard
    function (``convert_frame.GuardedCode``), just before it makes the cache entry; returns the undo.

    2.2 to 2.5: Dynamo drops a cache entry as soon as an object its guards check by identity is
    freed (GPT-2's ``ModelOutput`` on 2.4), which may happen before the next compilation, when the
    entries are read; the guard function is complete here already. From 2.6 ``GuardedCode`` holds
    a guard manager (fields ``code, guard_manager``): nothing is patched there."""
    import dataclasses

    from torch._dynamo import convert_frame

    original = getattr(convert_frame, "GuardedCode", None)
    if not (isinstance(original, type) and dataclasses.is_dataclass(original)):
        raise UnsupportedTorchError(f"torch {torch_version()} has no dataclass "
                                    "torch._dynamo.convert_frame.GuardedCode")
    fields = [f.name for f in dataclasses.fields(original)]
    if fields[:2] != ["code", "check_fn"]:
        return lambda: None

    class RecordingGuardedCode(original):  # type: ignore[misc, valid-type]
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            try:
                on_guarded(self.code, self.check_fn)
            except Exception:  # never break the user's compilation
                pass

    RecordingGuardedCode.__name__ = RecordingGuardedCode.__qualname__ = original.__name__
    convert_frame.GuardedCode = RecordingGuardedCode

    def undo() -> None:
        if convert_frame.GuardedCode is RecordingGuardedCode:
            convert_frame.GuardedCode = original

    return undo


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


# Parts every Python guard function of 2.2 to 2.4 starts with: Dynamo's own bookkeeping.
_PYTHON_GUARD_BOOKKEEPING = {"___guarded_code.valid"}


@dataclass(frozen=True)
class LeafGuard:
    """One leaf guard: its kind (``TENSOR_MATCH``...) and Dynamo's verbose text for it."""

    kind: str
    parts: tuple[str, ...]


def leaf_guards(guard_manager: Any) -> list[LeafGuard]:
    """Every leaf guard in the guard tree, depth first, children of dict managers included.

    A Python guard function (2.2 to 2.4 without the C++ guard manager) has no tree: its
    ``verbose_code_parts`` become leaves of kind ``GUARD``."""
    root = getattr(guard_manager, "root", guard_manager)
    if not callable(getattr(root, "get_leaf_guards", None)):
        parts = getattr(guard_manager, "verbose_code_parts", None)
        if parts is None:
            raise UnsupportedTorchError(
                f"torch {torch_version()}: a cache entry's guards have neither a guard "
                "tree nor verbose_code_parts"
            )
        out = []
        logged = _LOGGED_TENSOR_GUARDS.get(guard_manager, ()) if _weakrefable(guard_manager) else ()
        for part in parts:
            text = str(part)
            if text.strip() in _PYTHON_GUARD_BOOKKEEPING:
                continue
            if logged and text.startswith(_CHECK_TENSORS_CALL):
                # the one call that checks every tensor, spelled out per tensor as Dynamo logged it
                out.extend(LeafGuard("TENSOR_MATCH", (line,)) for line in logged)
                logged = ()
                continue
            out.append(LeafGuard("GUARD", (text,)))
        return out
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


# --- torch 2.7 to 2.12: what older releases keep elsewhere -------------------------------------

def graph_backend_id_from_compiling_frame() -> str | None:
    """The ``__compiled_fn_<n>`` name of the graph being compiled on torch 2.7 and older, or None.

    torch 2.2 to 2.7 name the graph in ``OutputGraph.compile_and_call_fx_graph`` (local ``name``) and
    only install the global after the backend returns; the backend call runs below that frame.
    """
    frame = sys._getframe(1)
    while frame is not None:
        code = frame.f_code
        if code.co_name == "compile_and_call_fx_graph" and code.co_filename.endswith("output_graph.py"):
            name = frame.f_locals.get("name")
            return name if isinstance(name, str) and name.startswith("__compiled_fn") else None
        frame = frame.f_back
    return None


# compile key -> backend name, filled by the call_user_compiler patch: cache entries name their
# backend only from torch 2.10, and the dump names the backends of its graphs on every release.
_COMPILE_BACKENDS: dict[str, str] = {}


def _remember_compile_backend(output_graph: Any) -> None:
    try:
        key = compile_key()
        name = backend_name(getattr(output_graph, "compiler_fn", None))
        if key is not None and name:
            _COMPILE_BACKENDS[key] = name
    except Exception:  # only a label for the dump
        pass


def compile_backend_name(key: str | None) -> str | None:
    """The backend of compilation ``key`` seen by the call_user_compiler patch, or None."""
    return _COMPILE_BACKENDS.get(key) if key is not None else None


def torch_release() -> tuple[int, int]:
    """(major, minor) of the installed torch, e.g. (2, 7)."""
    parts = torch.__version__.split("+")[0].split(".")
    try:
        return int(parts[0]), int(parts[1])
    except (IndexError, ValueError):
        return (0, 0)


def release_graph_records() -> dict[str, str]:
    """Structured-trace graph records of this torch that the 2.13 names do not cover -> dump stage.

    torch 2.7 logs Inductor's input graph as ``inductor_pre_grad_graph``, before the pre-grad
    passes (2.8 renamed it ``before_pre_grad_graph`` and added ``after_pre_grad_graph``): it is
    dumped as stage ``before_pre_grad``, not as the ``pre_grad`` stage it is not. torch 2.8 and 2.9
    name the post-grad graph artifact ``after_post_grad_graph`` (their ``inductor_post_grad_graph``
    is only logged on an FX graph cache hit, which the dump turns off).
    """
    release = torch_release()
    if release < (2, 8):
        return {"inductor_pre_grad_graph": "before_pre_grad"}
    if release < (2, 10):
        return {"after_post_grad_graph": "post_grad"}
    return {}


# --- torch 2.2: what later releases read from the structured trace ------------------------------
# Used only where the structured trace is absent (``torch._logging._internal.trace_log``); each
# seam gives the dump the same files and fields the trace gives it on later releases.

def patch_joint_graph(on_graph: Callable[[Any], None]) -> Undo:
    """Call ``on_graph(joint_gm)`` with each joint forward-backward graph AOTAutograd traces.

    2.2 and 2.3: ``aot_dispatch_autograd`` (``torch._functorch._aot_autograd.
    jit_compile_runtime_wrappers``) calls the module global ``aot_dispatch_autograd_graph(flat_fn,
    flat_args, aot_config, *, fw_metadata)``, which returns ``(joint_gm, joint_inputs,
    subclass_meta)``; AOTAutograd logs that graph as its ``aot_joint_graph`` artifact before
    partitioning it, and later releases put the same graph in the structured trace. As there, a
    graph traced with ``aot_config.enable_log`` false is left out: Inductor's pattern matcher
    traces its replacement patterns that way inside a compilation."""
    dotted = "torch._functorch._aot_autograd.jit_compile_runtime_wrappers.aot_dispatch_autograd_graph"
    original = expect(dotted, ("flat_fn", "flat_args", "aot_config"))
    module = importlib.import_module(dotted.rsplit(".", 1)[0])

    @functools.wraps(original)
    def aot_dispatch_autograd_graph(*args: Any, **kwargs: Any) -> Any:
        result = original(*args, **kwargs)
        try:
            config = args[2] if len(args) > 2 else kwargs.get("aot_config")
            graph = result[0] if isinstance(result, tuple) else result
            if isinstance(graph, torch.fx.GraphModule) and getattr(config, "enable_log", True):
                on_graph(graph)
        except Exception:  # dumping never breaks compilation
            pass
        return result

    return _replace_attribute(module, "aot_dispatch_autograd_graph", original, aot_dispatch_autograd_graph)


def patch_recompile_reasons(on_reasons: Callable[[types.CodeType, list[str]], None]) -> Undo:
    """Call ``on_reasons(code, reasons)`` each time Dynamo is about to recompile ``code``: one
    reason per cache entry whose guards failed, in Dynamo's words (``tensor 'L['x']' size mismatch
    at index 0. expected 4, actual 6``).

    2.2 to 2.6: ``convert_frame`` calls its global ``get_and_maybe_log_recompilation_reason(
    cache_entry, frame)`` before every recompilation, whatever is logged; it returns the reasons.
    It runs before the compilation has an id: the caller pairs the reasons with the compilation of
    ``code`` that follows."""
    dotted = "torch._dynamo.convert_frame.get_and_maybe_log_recompilation_reason"
    original = expect(dotted, ("cache_entry", "frame"))
    from torch._dynamo import convert_frame

    @functools.wraps(original)
    def get_and_maybe_log_recompilation_reason(cache_entry: Any, frame: Any, *args: Any,
                                               **kwargs: Any) -> Any:
        reasons = original(cache_entry, frame, *args, **kwargs)
        try:
            if isinstance(reasons, list):
                on_reasons(frame.f_code, [str(reason) for reason in reasons])
        except Exception:  # dumping never breaks compilation
            pass
        return reasons

    return _replace_attribute(convert_frame, "get_and_maybe_log_recompilation_reason", original,
                              get_and_maybe_log_recompilation_reason)


# Python guard function -> the per-tensor guard text Dynamo only logged for it (see below).
_LOGGED_TENSOR_GUARDS: weakref.WeakKeyDictionary[Any, tuple[str, ...]] = weakref.WeakKeyDictionary()
_CHECK_TENSORS_CALL = "___check_tensors("


def _weakrefable(obj: Any) -> bool:
    try:
        weakref.ref(obj)
    except TypeError:
        return False
    return True


class _GuardLogCapture(logging.Handler):
    def __init__(self) -> None:
        super().__init__(level=logging.DEBUG)
        self.messages: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        try:
            self.messages.append(record.getMessage())
        except Exception:  # a message that cannot be formatted is not a guard
            pass


def tensor_guards_only_logged() -> bool:
    """Whether the guard functions Dynamo builds are Python functions that check every tensor in
    one ``___check_tensors`` call and write the per-tensor text only to the guards log (2.2 and 2.3;
    2.4 to 2.6 where the user turned the C++ guard manager off), so ``patch_tensor_guard_text`` is
    needed whether or not the structured trace exists. Decided by shape: the legacy
    ``compile_check_fn(self, builder, guards_out, guard_fail_fn)`` and no C++ guard manager in
    Dynamo's config."""
    import inspect

    try:
        compile_check_fn = expect("torch._dynamo.guards.CheckFunctionManager.compile_check_fn")
        params = list(inspect.signature(compile_check_fn).parameters)
    except (UnsupportedTorchError, TypeError, ValueError):
        return False
    if params[:4] != ["self", "builder", "guards_out", "guard_fail_fn"]:
        return False
    from torch._dynamo import config

    return not getattr(config, "enable_cpp_guard_manager", False)


def patch_tensor_guard_text() -> Undo:
    """Keep the per-tensor guard text of the Python guard functions Dynamo builds from now on, so
    ``leaf_guards`` shows ``check_tensor(L['a'], Tensor, ..., torch.float32, ..., size=[10],
    stride=[1])`` as later releases' guard trees do.

    2.2 and 2.3: ``CheckFunctionManager.compile_check_fn(self, builder, guards_out, guard_fail_fn)``
    checks all tensors in one ``___check_tensors(L['a'], L['b'], ...)`` call and writes what it
    checks per tensor only to the ``guards`` log (``torch._dynamo.guards.__guards``, "log only").
    While the function runs, that logger also feeds a handler of ours; where the user has not
    enabled it, it is enabled for the call with propagation off, so nothing reaches the user's
    handlers, and put back after. The lines logged but not in the function's ``verbose_code_parts``
    are the per-tensor ones."""
    dotted = "torch._dynamo.guards.CheckFunctionManager.compile_check_fn"
    expect(dotted, ("self", "builder", "guards_out", "guard_fail_fn"))
    expect("torch._dynamo.guards.guards_log")
    from torch._dynamo import guards

    manager_class = guards.CheckFunctionManager
    original = manager_class.__dict__["compile_check_fn"]

    @functools.wraps(original)
    def compile_check_fn(self: Any, *args: Any, **kwargs: Any) -> Any:
        logger = guards.guards_log
        capture = _GuardLogCapture()
        already = logger.isEnabledFor(logging.DEBUG)
        level, propagate = logger.level, logger.propagate
        if not already:
            logger.setLevel(logging.DEBUG)
            logger.propagate = False
        logger.addHandler(capture)
        try:
            guard_fn = original(self, *args, **kwargs)
        finally:
            logger.removeHandler(capture)
            if not already:
                logger.setLevel(level)
                logger.propagate = propagate
        try:
            parts = {str(part) for part in getattr(guard_fn, "verbose_code_parts", ())}
            logged = tuple(m for m in capture.messages if m.startswith("check_tensor(") and m not in parts)
            if logged and _weakrefable(guard_fn):
                _LOGGED_TENSOR_GUARDS[guard_fn] = logged
        except Exception:  # only a better text for the dump
            pass
        return guard_fn

    return _replace_attribute(manager_class, "compile_check_fn", original, compile_check_fn)


def guards_keep_user_stacks() -> bool:
    """Whether Dynamo records the user line behind each guard without being asked.

    A guard's verbose text ends with ``# <user line>  # file:line in fn`` only where its
    ``user_stack`` was recorded. Later releases (2.13) always record it; 2.5 to 2.8 at least record
    it only while the ``guards`` log is on (``install_guard`` passes ``collect_debug_stack``, and
    ``GuardsSet.add`` then skips the stack). Decided by behaviour: one guard is added to an empty
    set with ``collect_debug_stack=False`` and its stack looked at."""
    import inspect

    from torch._dynamo.source import LocalSource
    from torch._guards import Guard, GuardsSet

    if "collect_debug_stack" not in inspect.signature(GuardsSet.add).parameters:
        return True   # nothing to skip it with
    probe = Guard(LocalSource("x"), lambda builder, guard: None)
    GuardsSet().add(probe, collect_debug_stack=False)
    return probe.user_stack is not None


def keep_guard_user_lines() -> Undo:
    """Make Dynamo record the user line behind each guard where it does so only while its
    ``guards`` log is on (see ``guards_keep_user_stacks``).

    Where the user has not enabled that log, it is turned on at DEBUG with propagation off and a
    handler that drops every record, so nothing reaches the user's handlers or the console; the
    undo puts level, propagation and handlers back while they are still as depyf left them."""
    expect("torch._dynamo.guards.guards_log")
    expect("torch._dynamo.guards.install_guard")
    expect("torch._guards.GuardsSet.add", ("self", "guard"))
    if guards_keep_user_stacks():
        return lambda: None
    from torch._dynamo import guards

    logger = guards.guards_log
    if logger.isEnabledFor(logging.DEBUG):
        return lambda: None
    level, propagate = logger.level, logger.propagate
    drop = logging.NullHandler()
    logger.addHandler(drop)
    logger.setLevel(logging.DEBUG)
    logger.propagate = False

    def undo() -> None:
        if drop not in logger.handlers:
            return   # someone reconfigured the log since (torch._logging.set_logs): theirs now
        logger.removeHandler(drop)
        if logger.level == logging.DEBUG and logger.propagate is False:
            logger.setLevel(level)
            logger.propagate = propagate

    return undo


# --- structured trace -----------------------------------------------------------------------------

def trace_logger() -> logging.Logger:
    """The structured-trace logger (what ``TORCH_TRACE``/tlparse read); records carry
    ``metadata`` (dict) and ``payload`` (str or None) attributes."""
    return expect("torch._logging._internal.trace_log")


# handler -> which records it wants; see ``skip_unwanted_trace_records``.
_TRACE_FILTERS: dict[logging.Handler, Callable[[str, Any], bool]] = {}
_TRACE_UNPATCH: list[Callable[[], None]] = []


def skip_unwanted_trace_records(handler: logging.Handler, wanted: Callable[[str, Any], bool]) -> Undo:
    """Let ``trace_structured`` skip records that no attached handler wants.

    Why: torch builds every record's metadata and payload (JSON, an md5) as soon as the trace logger
    has any handler, and most records (chromium timing events, bytecode listings, tensor
    descriptions) are of no use to depyf: about a tenth of a small compilation's time. While every
    handler on the logger was registered here, a record none of them wants
    (``wanted(name, metadata_fn)`` is false for all) is not built at all, exactly as without a
    handler; otherwise torch's function runs unchanged, so a user's own handler (``TORCH_TRACE``)
    still sees every record.

    Modules that bound ``trace_structured`` by name are re-pointed too; one imported later keeps
    torch's function, which only costs time.
    """
    _TRACE_FILTERS[handler] = wanted
    if not _TRACE_UNPATCH:
        _TRACE_UNPATCH.append(_patch_trace_structured())

    def undo() -> None:
        _TRACE_FILTERS.pop(handler, None)
        if not _TRACE_FILTERS and _TRACE_UNPATCH:
            _TRACE_UNPATCH.pop()()

    return undo


def _patch_trace_structured() -> Undo:
    from torch._logging import _internal

    original = _internal.trace_structured
    logger = _internal.trace_log

    def nobody_wants(name: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> bool:
        filters = [_TRACE_FILTERS.get(h) for h in logger.handlers]
        if not filters or None in filters:
            return False
        metadata_fn = kwargs.get("metadata_fn", args[0] if args else dict)
        return not any(wanted(name, metadata_fn) for wanted in filters)

    @functools.wraps(original)
    def trace_structured(name: str, *args: Any, **kwargs: Any) -> None:
        try:
            skip = nobody_wants(name, args, kwargs)
        except Exception:  # when unsure, log as torch would
            skip = False
        if not skip:
            original(name, *args, **kwargs)

    patched = [
        module
        for module in list(sys.modules.values())
        if isinstance(module, types.ModuleType) and module.__dict__.get("trace_structured") is original
    ]
    for module in patched:
        module.trace_structured = trace_structured

    def undo() -> None:
        # A module imported while the patch was in place may have bound the wrapper by name
        # (``from torch._logging import trace_structured``): it gets torch's function back too.
        for module in [*patched, *list(sys.modules.values())]:
            namespace = getattr(module, "__dict__", None) if isinstance(module, types.ModuleType) else None
            if namespace is not None and namespace.get("trace_structured") is trace_structured:
                module.trace_structured = original

    return undo


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

    ``graph_backend_id(gm)`` is then the ``__compiled_fn_<n>[_<uuid>]`` global the transformed code
    calls. The wrapper passes torch's own arguments through unchanged: ``(self, gm)`` up to 2.5,
    ``(self, gm, example_inputs)`` later; ``example_inputs`` handed to ``around`` comes from the
    output graph where the call does not carry them.
    The backend's name is remembered per compilation for ``cache_entries`` (see
    ``compile_backend_name``).
    """
    expect("torch._dynamo.output_graph.OutputGraph.call_user_compiler", ("self", "gm"))
    from torch._dynamo.output_graph import OutputGraph

    original = OutputGraph.__dict__["call_user_compiler"]

    @functools.wraps(original)
    def call_user_compiler(self: Any, gm: Any, *args: Any, **kwargs: Any) -> Any:
        _remember_compile_backend(self)
        inputs = args[0] if args else kwargs.get("example_inputs")
        if inputs is None:
            try:
                inputs = self.example_inputs()
            except Exception:  # only passed along to ``around``
                inputs = []
        return around(lambda g, _inputs: original(self, g, *args, **kwargs), gm, inputs)

    OutputGraph.call_user_compiler = call_user_compiler

    def undo() -> None:
        OutputGraph.call_user_compiler = original

    return undo


# gm -> the __compiled_fn_<n> name, on releases whose graph modules do not carry it (2.2 to 2.5).
def graph_backend_id(gm: Any) -> str | None:
    """The ``__compiled_fn_...`` name Dynamo gave a captured graph module.

    torch 2.9+ put it in ``gm.meta["backend_id"]``, 2.8 in ``gm._backend_id``; 2.7 and older keep
    it only in a local of the compiling frame (``graph_backend_id_from_compiling_frame``), so on
    those releases it is found only while the backend is being called.
    """
    meta = getattr(gm, "meta", None)
    if isinstance(meta, dict) and meta.get("backend_id"):
        return meta["backend_id"]
    name = getattr(gm, "_backend_id", None)  # 2.8
    if isinstance(name, str):
        return name
    return graph_backend_id_from_compiling_frame()


@dataclass(frozen=True)
class GraphBreak:
    """Why Dynamo ended a graph early, and the user line it stopped at."""

    reason: str
    filename: str | None
    lineno: int | None


def graph_break_of(gm: Any) -> GraphBreak | None:
    """The graph break that ended the captured graph ``gm`` (None when it ended at a return).

    Used where no structured trace reports graph breaks (2.2): Dynamo sets
    ``gm.compile_subgraph_reason`` (``reason``, ``user_stack``, ``graph_break``) before it calls
    the backend."""
    reason = getattr(gm, "compile_subgraph_reason", None)
    if reason is None or not getattr(reason, "graph_break", False):
        return None
    stack = list(getattr(reason, "user_stack", None) or [])
    frame = stack[-1] if stack else None
    return GraphBreak(str(getattr(reason, "reason", "")), getattr(frame, "filename", None),
                      getattr(frame, "lineno", None))


def patch_aot_compilers(wrap: Callable[[str, Callable[..., Any]], Callable[..., Any]]) -> Undo:
    """Wrap AOTAutograd's forward/backward/inference compilers (aot_eager and inductor both go
    through ``AotAutograd``): ``wrap(stage, compiler)`` returns the compiler to use, stage being
    ``"forward"``, ``"backward"`` or ``"inference"``. The backend's own settings are restored after
    each call, so nothing outlives the patch. Releases without the ``AotAutograd`` class (2.2, 2.3)
    are wrapped one step lower, at ``aot_module_simplified`` (see ``_patch_aot_module_simplified``)."""
    if not has("torch._dynamo.backends.common.AotAutograd"):
        return _patch_aot_module_simplified(wrap)
    expect("torch._dynamo.backends.common.AotAutograd.__call__", ("self", "gm", "example_inputs"))
    from torch._dynamo.backends.common import AotAutograd

    original = AotAutograd.__dict__["__call__"]

    @functools.wraps(original)
    def __call__(self: Any, gm: Any, example_inputs: Any, **kwargs: Any) -> Any:
        saved = self.kwargs
        self.kwargs = _wrapped_compilers(saved, wrap)
        try:
            return original(self, gm, example_inputs, **kwargs)
        finally:
            self.kwargs = saved

    AotAutograd.__call__ = __call__

    def undo() -> None:
        AotAutograd.__call__ = original

    return undo


def _wrapped_compilers(kwargs: dict[str, Any], wrap: Callable[[str, Callable[..., Any]], Callable[..., Any]],
                       ) -> dict[str, Any]:
    """A copy of AOTAutograd's keyword arguments with each compiler wrapped once."""
    patched = dict(kwargs)
    fw = kwargs.get("fw_compiler")
    if fw is not None and not getattr(fw, "_depyf_wrapped", False):
        patched["fw_compiler"] = _mark(wrap("forward", fw))
        bw = kwargs.get("bw_compiler") or fw
        if not getattr(bw, "_depyf_wrapped", False):
            patched["bw_compiler"] = _mark(wrap("backward", bw))
        inference = kwargs.get("inference_compiler") or fw
        if not getattr(inference, "_depyf_wrapped", False):
            patched["inference_compiler"] = _mark(wrap("inference", inference))
    return patched


def _patch_aot_module_simplified(wrap: Callable[[str, Callable[..., Any]], Callable[..., Any]]) -> Undo:
    """2.2, 2.3: ``aot_autograd(**kwargs)`` returns a closure that calls the global
    ``aot_module_simplified`` of ``torch._dynamo.backends.common`` with the compilers as keywords."""
    expect("torch._dynamo.backends.common.aot_module_simplified", ("mod", "args", "fw_compiler"))
    from torch._dynamo.backends import common

    original = common.__dict__["aot_module_simplified"]

    @functools.wraps(original)
    def aot_module_simplified(mod: Any, args: Any, *rest: Any, **kwargs: Any) -> Any:
        if rest:  # compilers passed by position: not how Dynamo calls it, leave it alone
            return original(mod, args, *rest, **kwargs)
        return original(mod, args, **_wrapped_compilers(kwargs, wrap))

    return _replace_attribute(common, "aot_module_simplified", original, aot_module_simplified)


def _replace_attribute(owner: Any, name: str, original: Any, replacement: Any) -> Callable[[], None]:
    """Set ``owner.name`` to ``replacement``; the undo puts ``original`` back only while the
    replacement is still there (a later patch by someone else is left alone)."""
    setattr(owner, name, replacement)

    def undo() -> None:
        if owner.__dict__.get(name) is replacement:
            setattr(owner, name, original)

    return undo


def graph_runs_interpreted(compiled: Any) -> bool:
    """Whether an AOTAutograd compiler's result runs its graph node by node through
    ``torch.fx.Interpreter`` (``boxed_nop``, aot_eager's compiler, up to torch 2.9 at least), so the
    graph's ``forward`` code, and a breakpoint in its file, never runs.

    A result wrapped with ``functools.wraps`` is looked through (``__wrapped__``): on 2.2, and
    on 2.5 from the second compilation on, the backward compiler's result comes back inside
    ``torch._dynamo.disable``."""
    fn = compiled
    for _ in range(8):  # a few wrappers at most; never loops on a self-referencing __wrapped__
        fn = getattr(fn, "__func__", fn)
        code = getattr(fn, "__code__", None)
        if isinstance(code, types.CodeType) and {"Interpreter", "boxed_run"} <= set(code.co_names):
            return True
        inner = getattr(fn, "__wrapped__", None)
        if inner is None or inner is fn:
            return False
        fn = inner
    return False


def _mark(fn: Callable[..., Any]) -> Callable[..., Any]:
    try:
        fn._depyf_wrapped = True  # type: ignore[attr-defined]
    except AttributeError:
        pass
    return fn


def patch_inductor_module_loader(on_load: Callable[[types.ModuleType, str], None]) -> Undo:
    """Call ``on_load(module, path)`` for each Python module Inductor loads from its code cache
    (its output code defines ``call``), before Inductor takes ``call`` from it."""
    expect("torch._inductor.codecache.PyCodeCache.load_by_key_path", ("key", "path"))
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


# Inductor's graph passes, by the dump stage whose graph they return (pre_grad) or leave (post_grad).
_INDUCTOR_PASSES = {"pre_grad": ("pre_grad_passes", ("gm", "example_inputs")),
                    "post_grad": ("post_grad_passes", ("gm", "is_inference"))}


def inductor_traces(artifacts: set[str]) -> bool:
    """Whether this torch's Inductor writes one of the structured-trace ``artifacts``.

    The pre-grad graph is traced from 2.7 on only, the post-grad graph from 2.5 on (the whole
    trace from 2.3): where it is not, ``patch_inductor_passes`` gives the dump that stage."""
    return _module_traces("torch._inductor.compile_fx", artifacts)


def dynamo_traces_graph_breaks() -> bool:
    """Whether Dynamo writes each graph break's reason to the structured trace (the artifact
    ``dynamo_graph_break_reason``; torch 2.7 does). Where it does not (2.2, which has no trace
    at all, to 2.5 at least), the dump reads each graph break from the captured graph's compile
    reason (``graph_break_of``)."""
    return _module_traces("torch._dynamo.symbolic_convert", {"dynamo_graph_break_reason"})


def dynamo_traces_recompile_reasons() -> bool:
    """Whether Dynamo writes the reasons of each recompilation to the structured trace (the
    artifact ``recompile_reasons``; torch 2.5 does). Where a trace exists without them (2.3 and
    2.4), the dump reads them from ``patch_recompile_reasons`` as where there is no trace (2.2)."""
    return _module_traces("torch._dynamo.guards", {"recompile_reasons"})


def _module_traces(module_name: str, artifacts: set[str]) -> bool:
    """Whether the source of torch module ``module_name`` names one of the trace ``artifacts``
    (torch builds the record names as string literals where it logs them)."""
    if not has("torch._logging._internal.trace_log"):
        return False
    try:
        module = importlib.import_module(module_name)
        with open(module.__file__, encoding="utf-8") as f:
            text = f.read()
    except (ImportError, OSError, TypeError):
        return False
    return any(f'"{name}"' in text for name in artifacts)


def patch_inductor_passes(stages: set[str], on_graph: Callable[[str, Any], None]) -> Undo:
    """Call ``on_graph(stage, gm)`` with the graph after Inductor's pre-grad passes and after its
    post-grad passes (``stages`` picks which), for releases whose trace does not report them.

    ``torch._inductor.compile_fx`` calls ``pre_grad_passes(gm, example_inputs)`` (returns the new
    graph) and ``post_grad_passes(gm, is_inference)`` (changes it in place) by module global."""
    import torch._inductor.compile_fx as compile_fx

    originals: dict[str, Any] = {}
    for stage in sorted(stages):
        name, params = _INDUCTOR_PASSES[stage]
        original = expect(f"torch._inductor.compile_fx.{name}", params)
        originals[name] = original

        def patched(
            gm: Any, *args: Any, __original: Any = original, __stage: str = stage, **kwargs: Any
        ) -> Any:
            result = __original(gm, *args, **kwargs)
            try:
                on_graph(__stage, result if __stage == "pre_grad" and result is not None else gm)
            except Exception:  # dumping never breaks compilation
                pass
            return result

        functools.update_wrapper(patched, original)
        setattr(compile_fx, name, patched)
    installed = {name: getattr(compile_fx, name) for name in originals}

    def undo() -> None:
        for name, original in originals.items():
            if getattr(compile_fx, name, None) is installed[name]:
                setattr(compile_fx, name, original)

    return undo


@contextlib.contextmanager
def compile_caches_disabled() -> Iterator[None]:
    """Turn off Inductor's FX graph cache and the AOTAutograd cache: a warm cache skips the
    stages whose graphs the dump shows. A release without one of them (no AOTAutograd cache
    before 2.5) has nothing to turn off there."""
    import torch._functorch.config as functorch_config
    import torch._inductor.config as inductor_config

    with contextlib.ExitStack() as stack:
        if hasattr(inductor_config, "fx_graph_cache"):
            stack.enter_context(inductor_config.patch(fx_graph_cache=False))
        if hasattr(functorch_config, "enable_autograd_cache"):
            stack.enter_context(functorch_config.patch(enable_autograd_cache=False))
        yield


def state_snapshot() -> dict[str, Any]:
    """Everything depyf may touch, for tests that check it is all put back."""
    from torch._dynamo.backends import common
    from torch._dynamo.output_graph import OutputGraph
    from torch._functorch import config as functorch_config
    from torch._inductor import config as inductor_config
    from torch._inductor.codecache import PyCodeCache

    aot = getattr(common, "AotAutograd", None)
    trace = trace_logger() if has("torch._logging._internal.trace_log") else None
    return {
        "bytecode_hooks": bytecode_hook_count(),
        # torch's own lazy TORCH_TRACE handler removes itself on the first trace event; not ours.
        "trace_handlers": [h for h in trace.handlers if type(h).__name__ != "LazyTraceHandler"]
        if trace
        else [],
        "call_user_compiler": OutputGraph.__dict__["call_user_compiler"],
        "aot_call": aot.__dict__["__call__"]
        if aot is not None
        else common.__dict__.get("aot_module_simplified"),
        "load_by_key_path": PyCodeCache.__dict__["load_by_key_path"],
        "fx_graph_cache": getattr(inductor_config, "fx_graph_cache", None),
        "autograd_cache": getattr(functorch_config, "enable_autograd_cache", None),
        "bytecode_log_handlers": list(bytecode_logger().handlers),
        "process_start": multiprocessing.process.BaseProcess.__dict__["start"],
        # the seams used where the structured trace is absent (2.2); None where a release lacks one
        **{seam: _module_attribute(seam) for seam in _UNTRACED_SEAMS},
        "guards_log": (lambda log: (log.level, log.propagate, list(log.handlers)))(
            logging.getLogger("torch._dynamo.guards.__guards")),
        # modules whose trace_structured is a wrapper (depyf's has __wrapped__); torch modules
        # imported during a dump (Inductor's, on first use) bind torch's own function and do not count
        "trace_structured_wrapped": sorted(
            name
            for name, module in list(sys.modules.items())
            if isinstance(module, types.ModuleType)
            and name.startswith("torch")
            and hasattr(module.__dict__.get("trace_structured"), "__wrapped__")
        ),
    }


_UNTRACED_SEAMS = (
    "torch._functorch._aot_autograd.jit_compile_runtime_wrappers.aot_dispatch_autograd_graph",
    "torch._dynamo.convert_frame.get_and_maybe_log_recompilation_reason",
    "torch._dynamo.guards.CheckFunctionManager.compile_check_fn",
)


def _module_attribute(dotted: str) -> Any:
    """What the module or class named in ``dotted`` holds under its last name (its own
    ``__dict__``, so a wrapper installed over it shows), or None."""
    owner, _, name = dotted.rpartition(".")
    try:
        return vars(_resolve(owner)).get(name)
    except (ImportError, AttributeError, TypeError):
        return None


def launcher_rank() -> int | None:
    """The rank ``torchrun`` (torch.distributed.run / elastic) gives this process in its environment.

    torchrun sets ``RANK`` and ``WORLD_SIZE`` (and ``LOCAL_RANK``, ``TORCHELASTIC_RUN_ID``) before the
    script starts, so the rank is known before ``init_process_group`` is called."""
    rank, world = os.environ.get("RANK", ""), os.environ.get("WORLD_SIZE", "")
    if not (rank.isdigit() and world.isdigit()) or "LOCAL_RANK" not in os.environ:
        return None
    return int(rank) if int(rank) < int(world) else None


def process_rank() -> int | None:
    """The rank this process dumps as: the initialised process group's, else torchrun's."""
    rank = distributed_rank()
    return rank if rank is not None else launcher_rank()


def distributed_rank() -> int | None:
    """This process's rank under an initialised ``torch.distributed``, else None."""
    dist = torch.distributed
    if dist.is_available() and dist.is_initialized():
        return int(dist.get_rank())
    return None


# ---------------------------------------------------------------------------------------------
# depyf.debug(): stances, frame decisions and Inductor's loaded modules (tests/torch/test_debugger_state.py
# has one test each).
# ---------------------------------------------------------------------------------------------

def _debug_private(module_name: str, attribute: str) -> Any:
    return expect(f"{module_name}.{attribute}")


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
    original = _debug_private("torch._dynamo.eval_frame", "_callback_from_stance")

    def patched(callback: Any) -> Any:
        return wrap(original(callback), callback)

    patched.__wrapped__ = original  # type: ignore[attr-defined]
    eval_frame._callback_from_stance = patched

    def restore() -> None:
        if eval_frame._callback_from_stance is patched:
            eval_frame._callback_from_stance = original

    return restore


def has_compile_stance() -> bool:
    """Whether Dynamo has compile stances (``torch.compiler.set_stance``, 2.6+)."""
    return has("torch.compiler.set_stance") and has("torch._dynamo.eval_frame._callback_from_stance")


def patch_compile_callbacks_to_run_only() -> Callable[[], None]:
    """Until undone, Dynamo compiles nothing: every compile callback it installs is installed as
    run-only mode instead (``False``, what ``torch._dynamo.run()`` sets), so code with a cache
    entry whose guards pass runs its compiled code and everything else runs as plain Python, without
    being marked as skipped. For releases without a compile stance (2.2 to 2.5), where
    ``eager_on_recompile`` does this.

    Private: Dynamo's contexts install their callback through one function of
    ``torch._dynamo.eval_frame``: ``_maybe_set_eval_frame`` (2.5) or the ``set_eval_frame`` it
    imported from ``torch._C._dynamo.eval_frame`` (2.2). What it returns stays torch's own (a
    context entered before the patch may restore it after). On 2.2 and 2.3 the flag that lets cached
    code compiled for any backend run in run-only mode
    (``eval_frame.guarded_backend_cache.skip_backend_check_for_run_only_mode``) is set until undone.
    Returns the function that removes the patch."""
    eval_frame = importlib.import_module("torch._dynamo.eval_frame")
    name = "_maybe_set_eval_frame" if "_maybe_set_eval_frame" in vars(eval_frame) else "set_eval_frame"
    original = _debug_private("torch._dynamo.eval_frame", name)

    def install_run_only(callback: Any) -> Any:
        if callback is None or callback is False:
            return original(callback)
        return original(run_only_eval_frame)

    install_run_only.__wrapped__ = original  # type: ignore[attr-defined]
    undo_patch = _replace_attribute(eval_frame, name, original, install_run_only)
    backend_cache = getattr(eval_frame, "guarded_backend_cache", None)
    if backend_cache is None:
        return undo_patch
    init_backend_cache = getattr(eval_frame, "_maybe_init_guarded_backend_cache", None)  # 2.2 only
    if callable(init_backend_cache):
        init_backend_cache()
    prior_skip = getattr(backend_cache, "skip_backend_check_for_run_only_mode", False)
    backend_cache.skip_backend_check_for_run_only_mode = True

    def undo() -> None:
        undo_patch()
        backend_cache.skip_backend_check_for_run_only_mode = prior_skip

    return undo


def run_outside_dynamo(fn: Callable[..., Any]) -> Callable[..., Any]:
    """``fn`` wrapped so that Dynamo never traces it: called from compiled code, it graph-breaks and
    runs as Python (``torch.compiler.disable``)."""
    return torch.compiler.disable(fn)


def tag_frame_callback_with_backend(fn: Any, callback: Any) -> None:
    """Make Dynamo's cache lookup treat frame callback ``fn`` as ``callback`` (same backend), so
    cache entries compiled under ``callback`` still run while ``fn`` is installed.

    Private: the attribute Dynamo reads for this (as on its own ``fail_on_recompile`` callback) is
    ``_torchdynamo_orig_backend`` from torch 2.9, ``_torchdynamo_orig_callable`` before.
    """
    attribute = "_torchdynamo_orig_callable" if torch_release() < (2, 9) else "_torchdynamo_orig_backend"
    setattr(fn, attribute, callback)


def should_compile_frame(frame: types.FrameType) -> bool:
    """Whether Dynamo would try to compile ``frame`` at all (not a skipped file, has tensors).

    Private: ``torch._dynamo.trace_rules.check`` and ``torch._dynamo.convert_frame.has_tensor_in_frame``,
    the same tests the ``fail_on_recompile`` stance applies before complaining.
    """
    skipped = _debug_private("torch._dynamo.trace_rules", "check")
    has_tensor = _debug_private("torch._dynamo.convert_frame", "has_tensor_in_frame")
    return not skipped(frame.f_code) and bool(has_tensor(frame))


def run_frame_uncompiled() -> Any:
    """What a Dynamo frame callback returns to run this one frame without compiling it.

    Private: ``torch._dynamo.types.ConvertFrameReturn`` and ``FrameExecStrategy``/``FrameAction``.
    The frame runs as plain Python; frames it calls still use their compiled code; the code is
    not marked as skipped, so it compiles normally once ``depyf.debug()`` is left.
    """
    convert_frame_return = _debug_private("torch._dynamo.types", "ConvertFrameReturn")
    strategy = _debug_private("torch._dynamo.types", "FrameExecStrategy")
    action = _debug_private("torch._dynamo.types", "FrameAction")
    return convert_frame_return(
        frame_exec_strategy=strategy(action.SKIP, action.DEFAULT), apply_to_code=False
    )


def inductor_loaded_modules() -> list[types.ModuleType]:
    """Output-code modules Inductor has loaded in this process, oldest first.

    Private: ``torch._inductor.codecache.PyCodeCache.modules`` (a list), or on torch 2.2 to 2.4
    its ``cache`` (a dict key -> module, in load order). Used by tests to find the module whose
    ``call`` a compiled graph runs.
    """
    cache = _debug_private("torch._inductor.codecache", "PyCodeCache")
    modules = getattr(cache, "modules", None)
    if modules is None:
        by_key = getattr(cache, "cache", None)
        if not isinstance(by_key, dict):
            raise UnsupportedTorchError("depyf needs torch._inductor.codecache.PyCodeCache.modules "
                                        f"(or its cache dict); torch {torch_version()} has neither")
        modules = by_key.values()
    return list(modules)


# ---------------------------------------------------------------------------------------------
# depyf.optimization: cache entries, guard evaluation and the eval-frame callback
# (tests/test_optimization.py has one test each).
# ---------------------------------------------------------------------------------------------

def _optim_missing(what: str, exc: BaseException | None = None) -> UnsupportedTorchError:
    return UnsupportedTorchError(
        f"depyf.optimization needs {what}, which torch {torch.__version__} does not provide"
        + (f" ({exc})" if exc else "")
        + "; depyf was checked against torch 2.13."
    )


def dispatch_cache_entries(code: types.CodeType) -> list[Any]:
    """Dynamo's cache entries for ``code``: each has ``.code`` (transformed) and ``.guard_manager``."""
    try:
        from torch._dynamo.eval_frame import _debug_get_cache_entry_list
    except ImportError as exc:
        raise _optim_missing("torch._dynamo.eval_frame._debug_get_cache_entry_list", exc) from exc
    return list(_debug_get_cache_entry_list(code))


def entry_guards(entry: Any) -> Any:
    """The guards of a raw cache entry, as ``failed_guards`` takes them."""
    return _guards_of(entry)


@dataclass(frozen=True)
class CompileMark:
    """What a bytecode hook records to find the cache entry of the compilation it sees later.

    ``compile_id`` is the compilation's id; ``entries_before`` is how many cache entries the code
    had when the hook ran. Cache entries name their compilation from torch 2.3; on 2.2 the new
    entry is told by its place (Dynamo puts each new entry in front and removes none until
    ``torch._dynamo.reset()``)."""

    compile_id: Any
    entries_before: int


def compile_mark(code: types.CodeType) -> CompileMark:
    """The ``CompileMark`` of the compilation of ``code`` running now (call it from a bytecode hook)."""
    return CompileMark(current_compile_id(), len(dispatch_cache_entries(code)))


def cache_entry_for(code: types.CodeType, transformed: types.CodeType, mark: Any) -> Any | None:
    """The cache entry of ``code`` that a bytecode hook saw being made, or None (evicted, reset).

    Matched by the transformed code itself, else by compile id (``mark`` is a ``CompileMark`` or a
    compile id): a bytecode hook registered after ours (``depyf.prepare_debug`` is one) may have
    replaced the code that the cache entry runs. Entries without a compile id (torch 2.2) are
    matched by their place, and only when the entry's code is the same function as ``transformed``.
    """
    entries = dispatch_cache_entries(code)
    for entry in entries:
        if entry.code is transformed:
            return entry
    compile_id = mark.compile_id if isinstance(mark, CompileMark) else mark
    if compile_id is not None:
        for entry in entries:
            if getattr(entry, "compile_id", None) == compile_id:
                return entry
    if isinstance(mark, CompileMark) and entries and not hasattr(entries[0], "compile_id"):
        place = len(entries) - 1 - mark.entries_before
        if 0 <= place < len(entries):
            candidate = entries[place].code
            same = ("co_name", "co_filename", "co_firstlineno", "co_argcount", "co_varnames")
            if all(getattr(candidate, attr) == getattr(transformed, attr) for attr in same):
                return entries[place]
    return None


def current_compile_id() -> Any | None:
    """The id of the compilation in progress (``torch._guards.CompileId``), or None outside one."""
    try:
        from torch._guards import CompileContext
    except ImportError as exc:
        raise _optim_missing("torch._guards.CompileContext", exc) from exc
    return CompileContext.current_compile_id()


def compiling_frame_locals() -> dict[str, Any] | None:
    """The local variables of the frame Dynamo is compiling right now, or None if not found.

    Only meaningful when called from a bytecode hook: ``convert_frame._compile`` (2.2 to 2.15)
    receives the frame's locals as its ``locals`` argument, and the hook runs below it on the stack.
    The hook itself gets no frame, so this is the only way to tell which instance triggered a
    compilation of a method shared by many instances.
    """
    frame = sys._getframe(1)
    while frame is not None:
        code = frame.f_code
        if code.co_name == "_compile" and code.co_filename.endswith("convert_frame.py"):
            value = frame.f_locals.get("locals")
            # a copy: torch 2.2 empties the frame's locals dict once the compilation is over
            return dict(value) if isinstance(value, dict) else None
        frame = frame.f_back
    return None


def failed_guards(guard_manager: Any, f_locals: dict[str, Any]) -> list[str] | None:
    """None when the guards of one cache entry pass for ``f_locals``, else the failed guards' text.

    ``guard_manager`` is what ``entry_guards`` returns: a guard manager with ``check_verbose``, or
    (2.2 to 2.4) the Python guard function Dynamo calls with the frame's locals."""
    check_verbose = getattr(guard_manager, "check_verbose", None)
    if check_verbose is None:
        if callable(guard_manager) and hasattr(guard_manager, "verbose_code_parts"):
            return _failed_python_guards(guard_manager, f_locals)
        raise _optim_missing("GuardManagerWrapper.check_verbose")
    result = check_verbose(f_locals)
    if result.result:
        return None
    return [str(part) for part in result.verbose_code_parts] or ["(torch reported no guard text)"]


def _failed_python_guards(guard_fn: Any, f_locals: dict[str, Any]) -> list[str] | None:
    """The failed parts of a Python guard function (torch 2.2 to 2.4), evaluated one by one as
    Dynamo's ``get_guard_fail_reason`` does, without recording a failure in Dynamo's tables.

    The backend check (``___skip_backend_check() or ___current_backend() == ...``) is skipped, as in
    Dynamo's run-only mode: outside a ``torch.compile`` call no backend is current, and the code a
    dispatcher runs is the code compiled for its own ``torch.compile`` callable."""
    closure_vars = getattr(guard_fn, "closure_vars", None)
    global_scope = getattr(guard_fn, "global_scope", None)
    if not isinstance(closure_vars, dict) or not isinstance(global_scope, dict):
        if guard_fn(f_locals):
            return None
        return [f"(torch {torch_version()}'s guard function returned False; it names no guard)"]
    scope = {"L": f_locals, "G": global_scope.get("G"), **closure_vars}
    scope["___check_tensors"] = scope.get("___check_tensors_verbose", scope.get("___check_tensors"))
    scope["___skip_backend_check"] = lambda: True  # 2.2: ``___skip_backend_check() or ...``
    scope["___check_current_backend"] = lambda backend_id: True  # 2.3: one call with the backend's id
    failed: list[str] = []
    for part in guard_fn.verbose_code_parts:
        try:
            result = eval(str(part), dict(global_scope), scope)  # Dynamo's own guard text
        except Exception as exc:  # a guard that cannot run fails, with the reason
            failed.append(f"{part} (raised {type(exc).__name__}: {exc})")
            continue
        if isinstance(result, str):
            failed.append(result)
        elif not result:
            failed.append(str(part))
    return failed or None


def set_eval_frame() -> Callable[[Any], Any]:
    """A setter that installs a Dynamo frame callback and returns what restores the prior one.

    ``torch._C._dynamo.eval_frame.set_eval_frame``, reached by attribute: torch 2.2's
    ``torch._C._dynamo`` is no package, so ``from torch._C._dynamo.eval_frame import ...`` fails
    there. On torch 2.2 to 2.4 Dynamo's run-only mode is also a flag that lets cached code compiled
    for any backend run (``eval_frame.guarded_backend_cache.skip_backend_check_for_run_only_mode``,
    set by ``torch._dynamo.run()``): without it a resume function's guards fail outside its
    ``torch.compile`` call; the setter sets that flag with the callback and restores both."""
    try:
        setter = torch._C._dynamo.eval_frame.set_eval_frame
    except AttributeError as exc:
        raise _optim_missing("torch._C._dynamo.eval_frame.set_eval_frame", exc) from exc
    from torch._dynamo import eval_frame

    backend_cache = getattr(eval_frame, "guarded_backend_cache", None)
    if backend_cache is None:
        return setter
    init_backend_cache = getattr(eval_frame, "_maybe_init_guarded_backend_cache", None)  # 2.2 only

    def set_callback_and_backend_check(callback: Any) -> Any:
        if isinstance(callback, _PriorFrameCallback):
            backend_cache.skip_backend_check_for_run_only_mode = callback.skip_backend_check
            return setter(callback.callback)
        # a thread-local namespace: 2.2 fills it on first use, 2.3 reads it with a default
        if callable(init_backend_cache):
            init_backend_cache()
        prior_skip = getattr(backend_cache, "skip_backend_check_for_run_only_mode", False)
        prior = _PriorFrameCallback(setter(callback), prior_skip)
        backend_cache.skip_backend_check_for_run_only_mode = callback is False
        return prior

    return set_callback_and_backend_check


@dataclass(frozen=True)
class _PriorFrameCallback:
    """What ``set_eval_frame()``'s setter returns on torch 2.2 to 2.4: the prior callback and flag."""

    callback: Any
    skip_backend_check: bool


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


# ---------------------------------------------------------------------------------------------
# Dynamo's naming conventions: how the globals, wrappers and counters it leaves behind are named
# (tests/torch/test_adapter.py has one test each).
# ---------------------------------------------------------------------------------------------

# Dynamo installs each captured graph as a module global ``__compiled_fn_<n>`` (``_<uuid>`` appended
# from torch 2.6) and each resume function as ``__resume_at_<offset>_<n>``; graph breaks inside
# inlined calls pass resume functions through the local ``__nested_resume_fns`` (torch 2.9+).
_GRAPH_GLOBAL_PREFIX = "__compiled_fn"
_GRAPH_SHORT_NAME = re.compile(r"^(__compiled_fn_\d+)")
_RESUME_GLOBAL_PREFIX = "__resume_at_"
_NESTED_RESUME_LOCAL = "__nested_resume_fns"


def is_graph_global(name: str) -> bool:
    """Whether ``name`` is a global through which Dynamo's transformed code calls a captured graph."""
    return name.startswith(_GRAPH_GLOBAL_PREFIX)


def short_graph_name(global_name: str) -> str:
    """``__compiled_fn_3_<uuid>`` -> ``__compiled_fn_3`` (the name the dump's files use)."""
    match = _GRAPH_SHORT_NAME.match(global_name)
    return match.group(1) if match else global_name


def is_resume_global(name: str) -> bool:
    """Whether ``name`` is a global through which Dynamo's transformed code calls a resume function."""
    return name.startswith(_RESUME_GLOBAL_PREFIX)


def continues_in_resume_functions(code: types.CodeType) -> bool:
    """Whether Dynamo's transformed ``code`` hands over to resume functions: it names one as a global,
    or receives them through ``__nested_resume_fns``."""
    return any(is_resume_global(name) for name in code.co_names) or _NESTED_RESUME_LOCAL in code.co_varnames


def compiled_wrapper_target(fn: Any) -> Any:
    """The callable a ``torch.compile`` wrapper compiles (``_torchdynamo_orig_callable``), else ``fn``.

    Unlike ``original_callable`` a compiled ``nn.Module`` stays itself."""
    return getattr(fn, "_torchdynamo_orig_callable", fn)


def graph_module_class_name(gm: Any) -> str:
    """The class name torch prints a graph module under (``GraphModule``, ``<lambda>``...)."""
    return gm._get_name()


def compile_counts() -> dict[str, int] | None:
    """Frames compiled, unique graphs and graph breaks so far, from ``torch._dynamo.utils.counters``;
    None when the counters cannot be read.

    Graph breaks are read from ``counters["unimplemented"]``, else from ``counters["graph_break"]``."""
    counters = getattr(sys.modules.get("torch._dynamo.utils"), "counters", None)
    if counters is None:
        return None
    try:
        frames = int(counters["frames"].get("ok", 0))
        graphs = int(counters["stats"].get("unique_graphs", 0))
        breaks = int(sum(counters["unimplemented"].values())) if "unimplemented" in counters else 0
        if not breaks and "graph_break" in counters:
            breaks = int(sum(counters["graph_break"].values()))
    except (KeyError, TypeError, ValueError, RuntimeError):
        return None
    return {"frames": frames, "graphs": graphs, "breaks": breaks}
