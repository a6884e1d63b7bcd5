"""Skip Dynamo's guard evaluation when you already know which compiled code a call needs.

``torch.compile`` checks every guard of a compiled function on every call. For a model with a
hundred submodules that is hundreds of checks, often costing more than the compiled graph itself.
When the caller knows the checks would pass (one input shape, frozen configuration), it can run
Dynamo's transformed code directly::

    class Mod(TorchCompileWrapperWithCustomDispatcher):
        def __init__(self, n):
            self.fs = torch.nn.ModuleList([F(i) for i in range(n)])
            super().__init__(torch.compile(self.forward))

        def forward(self, x):
            for f in self.fs:
                x = f(x)
            return x

        def __call__(self, x):
            if len(self.compiled_codes) == 1:
                with self.dispatch_to_code(0):
                    return self.forward(x)
            return self.compiled_callable(x)

Run with ``check=True`` (or ``DEPYF_CHECK_DISPATCH=1``) while developing: every dispatched call then
evaluates the guards anyway and raises ``DispatchGuardError`` naming the guard that failed.
"""

from __future__ import annotations

import inspect
import os
import types
import weakref
from collections.abc import Callable
from typing import Any

from depyf.torch import adapter

__all__ = ["CHECK_ENV_VAR", "DispatchGuardError", "TorchCompileWrapperWithCustomDispatcher"]

CHECK_ENV_VAR = "DEPYF_CHECK_DISPATCH"

_MISSING = object()


class DispatchGuardError(RuntimeError):
    """A dispatched call whose guards fail: ``torch.compile`` would not have run that compiled code."""

    def __init__(self, function: str, code_index: int, failed: list[str]) -> None:
        self.function = function
        self.code_index = code_index
        self.failed_guards = failed
        lines = "\n".join(f"  - {part}" for part in failed)
        super().__init__(
            f"{function} was dispatched to compiled_codes[{code_index}], but guards of that code fail for "
            f"this call, so torch.compile would have used another cache entry or recompiled:\n{lines}\n"
            "Skipping these guards may give wrong results: call compiled_callable(...) for such inputs, "
            "or dispatch them to a compiled code whose guards hold."
        )


class TorchCompileWrapperWithCustomDispatcher:
    """Base class that records Dynamo's compiled code for a method and can run it without guards.

    ``compiled_callable`` must be ``torch.compile`` applied to a bound method of this object
    (``torch.compile(self.forward)``, the default when omitted). Works for plain objects and
    ``nn.Module`` subclasses; a subclass that is also an ``nn.Module`` must run ``nn.Module.__init__``
    before assigning submodules, as usual.

    Attributes:
        compiled_callable: the guarded ``torch.compile`` callable.
        compiled_codes: Dynamo's transformed code objects for the method, one per compilation of
            this instance, in order.
    """

    def __init__(
        self, compiled_callable: Callable[..., Any] | None = None, *, check: bool | None = None
    ) -> None:
        if compiled_callable is None:
            import torch

            compiled_callable = torch.compile(self.forward)  # type: ignore[attr-defined]
        method = _wrapped_method(compiled_callable, self)
        if check is None:
            check = os.environ.get(CHECK_ENV_VAR, "").strip() not in ("", "0", "false", "False")
        # object.__setattr__: an nn.Module must not register the compiled callable as a submodule.
        setattr_ = object.__setattr__
        setattr_(self, "compiled_callable", compiled_callable)
        setattr_(self, "compiled_codes", [])
        setattr_(self, "_depyf_compile_ids", [])  # parallel to compiled_codes: how to find each cache entry
        setattr_(self, "_depyf_method", method.__func__)
        setattr_(self, "_depyf_attribute", _attribute_name(type(self), method.__func__))
        setattr_(self, "_depyf_check", bool(check))
        setattr_(self, "_depyf_dispatchers", [])
        handle = adapter.register_bytecode_hook(_recording_hook(self, method.__func__))
        weakref.finalize(self, handle.remove)

    def dispatch_to_code(self, index: int) -> _CodeDispatch:
        """Context manager: inside it, ``self.<method>(...)`` runs ``compiled_codes[index]`` directly.

        Dynamo's guards are not evaluated (unless in checked mode), which is the point and the risk.
        Resume functions after graph breaks still run their own compiled code, guarded by Dynamo.
        """
        try:
            if index >= 0:
                return self._depyf_dispatchers[index]
        except IndexError:
            pass
        return self._depyf_new_dispatch(index)

    def dispatched(self, index: int) -> Callable[..., Any]:
        """The method running ``compiled_codes[index]`` directly, bound to this object.

        The same as calling the method inside ``dispatch_to_code(index)``, without the with-statement:
        on CPython 3.11 its ``__enter__``/``__exit__`` cost about as much as a small compiled graph,
        so hot paths can keep this callable and call it instead.
        """
        return self.dispatch_to_code(index).method

    def _depyf_new_dispatch(self, index: int) -> _CodeDispatch:
        dispatchers = self._depyf_dispatchers
        if not -len(self.compiled_codes) <= index < len(self.compiled_codes):
            name = self._depyf_method.__qualname__
            raise IndexError(
                f"dispatch_to_code({index}): {name} has {len(self.compiled_codes)} compiled code(s); "
                "call compiled_callable(...) first so Dynamo compiles it (or adopt_cached_code(...) "
                "when another instance of the class compiled it)"
            )
        if index < 0:
            return self.dispatch_to_code(index % len(self.compiled_codes))
        while len(dispatchers) <= index:
            dispatchers.append(_CodeDispatch(self, len(dispatchers)))
        return dispatchers[index]

    def adopt_cached_code(self, *args: Any, **kwargs: Any) -> int | None:
        """Record Dynamo's cached code for this call when it was compiled for another instance.

        Instances of one class share the method's code object and so Dynamo's cache: when another
        instance already compiled code whose guards hold for this one, Dynamo reuses it and this
        instance records nothing. This evaluates the guards of every cached code for
        ``self.<method>(*args, **kwargs)`` and returns the index in ``compiled_codes`` of the first
        one whose guards hold (appending it if new), or None.
        """
        method = self._depyf_method
        frame_locals = _frame_locals(method, inspect.signature(method), (self, *args), kwargs)
        for entry in adapter.dispatch_cache_entries(method.__code__):
            if adapter.failed_guards(adapter.entry_guards(entry), frame_locals) is None:
                for index, code in enumerate(self.compiled_codes):
                    if code is entry.code:
                        return index
                self.compiled_codes.append(entry.code)
                self._depyf_compile_ids.append(getattr(entry, "compile_id", None))
                return len(self.compiled_codes) - 1
        return None

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        """Default: the guarded compiled callable. Override to dispatch (see the module docstring)."""
        return self.compiled_callable(*args, **kwargs)


def _wrapped_method(compiled_callable: Callable[..., Any], owner: object) -> types.MethodType:
    """The bound method of ``owner`` that ``compiled_callable`` compiles; a clear error otherwise."""
    original = adapter.compiled_wrapper_target(compiled_callable)
    if isinstance(original, types.MethodType) and original.__self__ is owner:
        if not isinstance(original.__func__, types.FunctionType):
            raise TypeError(f"cannot dispatch {original!r}: it is not a Python function")
        if not hasattr(owner, "__dict__"):
            raise TypeError(
                f"{type(owner).__qualname__} has no __dict__ (uses __slots__); dispatch needs one"
            )
        return original
    raise TypeError(
        "TorchCompileWrapperWithCustomDispatcher needs torch.compile applied to a method of the same "
        f"object, as in super().__init__(torch.compile(self.forward)); got {original!r}"
    )


def _attribute_name(cls: type, func: types.FunctionType) -> str:
    """The class attribute holding ``func`` (``forward = _forward_impl`` holds it as ``forward``)."""
    for klass in cls.__mro__:
        for name, value in vars(klass).items():
            if value is func:
                return name
    return func.__name__


def _recording_hook(owner: TorchCompileWrapperWithCustomDispatcher, func: types.FunctionType) -> Callable:
    """A bytecode hook appending Dynamo's output for ``func`` to ``owner.compiled_codes``.

    Holds ``owner`` weakly. Many instances share one method code object, so the hook looks at the
    frame being compiled and records only compilations where ``self`` is ``owner``.
    """
    owner_ref = weakref.ref(owner)
    original_code = func.__code__
    self_name = original_code.co_varnames[0] if original_code.co_argcount else None

    def hook(code: types.CodeType, new_code: types.CodeType) -> None:
        if code is not original_code:
            return None
        wrapper = owner_ref()
        if wrapper is None:
            return None
        frame_locals = adapter.compiling_frame_locals()
        if frame_locals is not None and self_name is not None and frame_locals.get(self_name) is not wrapper:
            return None  # another instance of the same class compiled
        wrapper._depyf_compile_ids.append(adapter.compile_mark(code))
        wrapper.compiled_codes.append(new_code)
        return None

    return hook


def _has_resume_functions(code: types.CodeType) -> bool:
    """Whether Dynamo's code continues in resume functions (it had graph breaks)."""
    if adapter.continues_in_resume_functions(code):
        return True
    return any(
        isinstance(const, types.CodeType) and adapter.resume_of(const) is not None
        for const in code.co_consts
    )


class _CodeDispatch:
    """The context manager returned by ``dispatch_to_code``; one per code index, reused across calls.

    Entering puts a bound method running the compiled code into the instance ``__dict__``, which
    shadows the class's method for ``self.<name>`` on this instance only; leaving restores it. Kept
    to two dictionary writes because it runs on every call.
    """

    __slots__ = ("_namespace", "_name", "method", "_saved")

    def __init__(self, owner: TorchCompileWrapperWithCustomDispatcher, index: int) -> None:
        func = owner._depyf_method
        entry = adapter.cache_entry_for(
            func.__code__, owner.compiled_codes[index], owner._depyf_compile_ids[index]
        )
        # What Dynamo's cache runs: Dynamo's code, or what a later bytecode hook replaced it with.
        code = owner.compiled_codes[index] if entry is None else entry.code
        lean_code = adapter.lean_profiler_hooks(code, func.__globals__)
        function: Callable[..., Any] = types.FunctionType(
            lean_code, func.__globals__, func.__name__, func.__defaults__, func.__closure__
        )
        function.__kwdefaults__ = func.__kwdefaults__
        function.__qualname__ = func.__qualname__
        if _has_resume_functions(code):
            function = _in_run_only_mode(function, adapter.set_eval_frame())
        if owner._depyf_check:
            function = _checked(func, entry, index, function)
        self._namespace = owner.__dict__
        self._name = owner._depyf_attribute
        self.method = types.MethodType(function, owner)
        self._saved: list[Any] = []

    def __enter__(self) -> None:
        namespace = self._namespace
        self._saved.append(namespace.get(self._name, _MISSING))
        namespace[self._name] = self.method

    def __exit__(self, exc_type: object, exc: object, traceback: object) -> None:
        saved = self._saved.pop()
        if saved is _MISSING:
            del self._namespace[self._name]
        else:
            self._namespace[self._name] = saved


def _in_run_only_mode(
    function: Callable[..., Any], set_eval_frame: Callable[[Any], Any]
) -> Callable[..., Any]:
    """``function`` run with Dynamo in "run only" mode.

    After a graph break Dynamo's code calls resume functions; in this mode (what
    ``torch._dynamo.run()`` sets) they run their own compiled code when its guards hold and run
    eagerly otherwise, never compiling. Without it they would always run eagerly.
    """

    def run_only(*args: Any, **kwargs: Any) -> Any:
        prior = set_eval_frame(adapter.run_only_eval_frame)
        try:
            return function(*args, **kwargs)
        finally:
            set_eval_frame(prior)

    run_only.__qualname__ = function.__qualname__
    return run_only


def _checked(
    func: types.FunctionType,
    entry: Any | None,
    index: int,
    fast: Callable[..., Any],
) -> Callable[..., Any]:
    """``fast`` preceded by an evaluation of the guards of Dynamo's cache ``entry`` for it."""
    signature = inspect.signature(func)
    name = func.__qualname__
    if entry is None:
        raise RuntimeError(
            f"checked dispatch of {name}: Dynamo holds no cache entry for compiled_codes[{index}] "
            "(evicted or reset), so its guards cannot be evaluated"
        )
    guard_manager = adapter.entry_guards(entry)

    def checked(*args: Any, **kwargs: Any) -> Any:
        frame_locals = _frame_locals(func, signature, args, kwargs)
        failed = adapter.failed_guards(guard_manager, frame_locals)
        if failed is not None:
            raise DispatchGuardError(name, index, failed)
        return fast(*args, **kwargs)

    checked.__qualname__ = name
    return checked


def _frame_locals(
    func: types.FunctionType, signature: inspect.Signature, args: tuple[Any, ...], kwargs: dict[str, Any]
) -> dict[str, Any]:
    """The locals ``func``'s frame starts with for this call: what Dynamo's guards read as ``L[...]``."""
    bound = signature.bind(*args, **kwargs)
    bound.apply_defaults()
    frame_locals = dict(bound.arguments)
    for var, cell in zip(func.__code__.co_freevars, func.__closure__ or (), strict=True):
        frame_locals[var] = cell.cell_contents
    return frame_locals
