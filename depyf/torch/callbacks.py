"""``on_compile(cb)``: a supported way for frameworks to see what Dynamo produced.

``cb(event)`` runs once per compiled frame, at the end of its compilation, with a
``CompileEvent``. Exceptions raised by a callback are turned into warnings: a callback can
never break compilation. While no callback is registered nothing is installed in torch.
"""

from __future__ import annotations

import threading
import types
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from depyf.torch import adapter
from depyf.torch.guards import clauses_from_tree_text
from depyf.torch.trace import TraceEvent
from depyf.torch.transformed import safe_decompile


@dataclass
class CompileEvent:
    """What Dynamo produced for one frame."""

    original_code: types.CodeType
    transformed_code: types.CodeType   # Dynamo's transformed code, as bytecode hooks receive it
    source: str | None                 # decompiled transformed code; None when not decompilable
    guards: list[str] = field(default_factory=list)   # guard clauses as Python expressions
    graph_names: list[str] = field(default_factory=list)  # __compiled_fn_<n> it calls
    compile_id: str | None = None


class CallbackHandle:
    """Returned by ``on_compile``; ``remove()`` unregisters the callback."""

    def __init__(self, callback: Callable[[CompileEvent], Any]):
        self.callback = callback

    def remove(self) -> None:
        _registry.remove(self)


class _Registry:
    def __init__(self) -> None:
        self.handles: list[CallbackHandle] = []
        self.pending: dict[str, CompileEvent] = {}
        self.guards: dict[str, list[str]] = {}
        self.undo: list[Callable[[], None]] = []
        self.traced = True     # whether events wait for the trace's guards (see ``_install``)
        self.lock = threading.RLock()

    def add(self, handle: CallbackHandle) -> None:
        with self.lock:
            if not self.handles:
                self._install()
            self.handles.append(handle)

    def remove(self, handle: CallbackHandle) -> None:
        with self.lock:
            if handle in self.handles:
                self.handles.remove(handle)
            if not self.handles:
                self._uninstall()

    def _install(self) -> None:
        from depyf.torch import trace

        # The hook only notes the code; the event fires when the compilation ends (guards exist).
        self.undo.append(adapter.register_bytecode_hook(self._hook).remove)
        try:
            self.undo.append(trace.attach(self._on_trace, {"dynamo_cpp_guards_str", "compilation_metrics"}))
            self.traced = True
        except adapter.UnsupportedTorchError as exc:
            # No structured trace (2.2): events fire from the hook, before guards exist.
            self.traced = False
            from depyf.torch.records import DepyfWarning

            warnings.warn(f"depyf: on_compile events carry no guards: {exc}; the program runs unchanged",
                          DepyfWarning, stacklevel=4)

    def _uninstall(self) -> None:
        while self.undo:
            self.undo.pop()()
        self.pending.clear()
        self.guards.clear()

    def _hook(self, code: types.CodeType, new_code: types.CodeType) -> None:
        try:
            key = adapter.compile_key()
            event = CompileEvent(code, new_code, None, [], [], key)
            seen: list[str] = []
            for name in new_code.co_names:
                if adapter.is_graph_global(name) and adapter.short_graph_name(name) not in seen:
                    seen.append(adapter.short_graph_name(name))
            event.graph_names = seen
            if key is None or not self.traced:
                self._fire(event)
            else:
                self.pending[key] = event
        except Exception as exc:
            warnings.warn(f"depyf: on_compile bookkeeping failed: {exc!r}", stacklevel=2)
        return None

    def _on_trace(self, event: TraceEvent) -> None:
        key = event.compile_key or ""
        if event.kind == "dynamo_cpp_guards_str":
            self.guards[key] = [c.expression for c in clauses_from_tree_text(event.payload)]
        elif event.kind == "compilation_metrics":
            compiled = self.pending.pop(key, None)
            guards = self.guards.pop(key, [])
            if compiled is not None:
                compiled.guards = guards
                self._fire(compiled)

    def _fire(self, event: CompileEvent) -> None:
        # The final code object is what Dynamo kept; another hook may have replaced it.
        event.source = safe_decompile(event.transformed_code)
        for handle in list(self.handles):
            try:
                handle.callback(event)
            except Exception as exc:  # a callback must not break compilation
                warnings.warn(f"depyf: on_compile callback {handle.callback!r} raised {exc!r}", stacklevel=2)


_registry = _Registry()


def on_compile(callback: Callable[[CompileEvent], Any]) -> CallbackHandle:
    """Call ``callback(event)`` after each Dynamo compilation; returns a handle with ``remove()``."""
    if not callable(callback):  # refused now, not as an error inside some later compilation
        raise TypeError(f"on_compile() needs a callable taking a CompileEvent, not {type(callback).__name__}")
    adapter.check_supported()
    handle = CallbackHandle(callback)
    _registry.add(handle)
    return handle


def active_callback_count() -> int:
    return len(_registry.handles)
