"""Shared machinery for the corpus tests and ``tools/corpus_report.py``.

Finds the corpus functions, runs them (driving generators, coroutines and async generators to the
end), compares outcomes, and builds a copy of a function around recompiled code. It also holds the
private "identity" backend (``DEPYF_TEST_IDENTITY=1``): instead of decompiling it returns the real
source from ``inspect.getsource``, so the harness itself can be checked while the decompiler is
still being written.
"""

from __future__ import annotations

import ast
import contextlib
import copy
import importlib
import importlib.machinery
import importlib.util
import inspect
import math
import os
import pkgutil
import re
import signal
import sys
import textwrap
import types
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))

import corpus  # noqa: E402
from corpus._cases import Call  # noqa: E402

import depyf  # noqa: E402

CORPUS_DIR = Path(corpus.__file__).parent
IDENTITY = os.environ.get("DEPYF_TEST_IDENTITY") == "1"
# Generous: a corpus call takes microseconds; this only stops a broken recompiled loop.
CALL_TIME_LIMIT_S = 5.0
MAX_DRIVE_STEPS = 10_000

_VERSION_PREFIX = re.compile(r"^py3(\d+)_")

CO_GENERATOR, CO_COROUTINE, CO_ASYNC_GENERATOR = 0x20, 0x80, 0x200


# --------------------------------------------------------------------------- corpus discovery

def corpus_module_names() -> list[str]:
    """Theme modules runnable on this interpreter (``py3NN_`` modules need 3.NN+)."""
    names = [info.name for info in pkgutil.iter_modules([str(CORPUS_DIR)]) if not info.name.startswith("_")]
    for path in CORPUS_DIR.glob("py3*_*.pysrc"):
        m = _VERSION_PREFIX.match(path.stem)
        if m and sys.version_info >= (3, int(m.group(1))):
            names.append(path.stem)
    return sorted(names)


def module_path(name: str) -> Path:
    """The file of a theme module: ``.py``, or ``.pysrc`` for syntax newer than the oldest supported Python.

    ``.pysrc`` files hold syntax (``except*``) that the linter, which targets the oldest supported
    version, cannot parse; they are imported by ``load_module`` like ordinary modules.
    """
    py = CORPUS_DIR / f"{name}.py"
    return py if py.exists() else CORPUS_DIR / f"{name}.pysrc"


def load_module(name: str) -> types.ModuleType:
    qualified = f"corpus.{name}"
    path = module_path(name)
    if path.suffix == ".py" or qualified in sys.modules:
        return importlib.import_module(qualified)
    loader = importlib.machinery.SourceFileLoader(qualified, str(path))
    spec = importlib.util.spec_from_loader(qualified, loader)
    module = importlib.util.module_from_spec(spec)
    sys.modules[qualified] = module
    loader.exec_module(module)
    return module


def corpus_functions(namespace: dict[str, Any]) -> list[tuple[str, Callable]]:
    """The functions in a module namespace that carry ``@cases``, in definition order."""
    return [(n, f) for n, f in namespace.items()
            if isinstance(f, types.FunctionType) and hasattr(f, "__corpus_cases__")]


@dataclass(frozen=True)
class CorpusEntry:
    theme: str
    name: str
    func: types.FunctionType

    @property
    def test_id(self) -> str:
        return f"{self.theme}.{self.name}"


def all_entries() -> list[CorpusEntry]:
    entries = []
    for theme in corpus_module_names():
        module = load_module(theme)
        entries.extend(CorpusEntry(theme, n, f) for n, f in corpus_functions(vars(module)))
    return entries


# --------------------------------------------------------------------------- backends

class _IdentityBackend:
    """Stands in for the decompiler: real source from disk, compiled by depyf's rebuild step."""

    def decompile(self, obj: object) -> str:
        if isinstance(obj, property):
            return "\n".join(self.decompile(f) for f in (obj.fget, obj.fset, obj.fdel) if f is not None)
        code = depyf.decompiler.api.code_of(obj)
        if code.co_name == "<module>":
            return Path(code.co_filename).read_text()
        return textwrap.dedent(inspect.getsource(code))

    def recompile(self, code: types.CodeType, *, filename: str | None = None):
        from depyf.decompiler.api import Recompiled
        from depyf.decompiler.rebuild import rebuild_code

        source = self.decompile(code)
        return Recompiled(source=source, code=rebuild_code(code, source, filename=filename))


class _DepyfBackend:
    def decompile(self, obj: object) -> str:
        return depyf.decompile(obj)

    def recompile(self, code: types.CodeType, *, filename: str | None = None):
        return depyf.recompile(code, filename=filename)


BACKEND = _IdentityBackend() if IDENTITY else _DepyfBackend()


# --------------------------------------------------------------------------- time limits

class TimeLimitExceeded(Exception):
    """A call (or a decompile) ran past its time limit."""


@contextlib.contextmanager
def time_limit(seconds: float) -> Iterator[None]:
    """Raise ``TimeLimitExceeded`` in the main thread after ``seconds`` (no-op where SIGALRM is missing)."""
    if not hasattr(signal, "setitimer") or _not_main_thread():
        yield
        return

    def on_alarm(signum, frame):
        raise TimeLimitExceeded(f"exceeded {seconds} s")

    previous = signal.signal(signal.SIGALRM, on_alarm)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def _not_main_thread() -> bool:
    import threading

    return threading.current_thread() is not threading.main_thread()


# --------------------------------------------------------------------------- running and comparing

@dataclass(frozen=True)
class Outcome:
    """What one call did: a value, or an exception type; for generators also what they yielded."""

    kind: str  # "return" or "raise"
    value: Any
    yielded: tuple | None = None

    def describe(self) -> str:
        head = f"returned {self.value!r}" if self.kind == "return" else f"raised {self.value.__name__}"
        return head if self.yielded is None else f"yielded {list(self.yielded)!r}, {head}"


def run_case(func: Callable, invocation: Call) -> Outcome:
    """Call ``func`` on a deep copy of the arguments and drive what it returns to completion."""
    args = copy.deepcopy(invocation.args)
    kwargs = copy.deepcopy(invocation.kwargs)
    flags = func.__code__.co_flags
    yielded: list = []
    try:
        with time_limit(CALL_TIME_LIMIT_S):
            result = func(*args, **kwargs)
            if flags & CO_GENERATOR:
                value = _drive_generator(result, yielded)
            elif flags & CO_COROUTINE:
                value = _drive_coroutine(result)
            elif flags & CO_ASYNC_GENERATOR:
                value = _drive_async_generator(result, yielded)
            else:
                value = result
    except TimeLimitExceeded:
        raise
    except BaseException as exc:  # every exception is an outcome to compare
        return Outcome("raise", type(exc), tuple(yielded) if _is_generatorish(flags) else None)
    return Outcome("return", value, tuple(yielded) if _is_generatorish(flags) else None)


def _is_generatorish(flags: int) -> bool:
    return bool(flags & (CO_GENERATOR | CO_ASYNC_GENERATOR))


def _drive_generator(gen, yielded: list) -> Any:
    """Send each yield the number of values yielded so far, so yield expressions get distinct values."""
    to_send = None
    for _ in range(MAX_DRIVE_STEPS):
        try:
            yielded.append(gen.send(to_send))
        except StopIteration as stop:
            return stop.value
        to_send = len(yielded)
    gen.close()
    raise TimeLimitExceeded(f"generator yielded more than {MAX_DRIVE_STEPS} values")


def _drive_coroutine(awaitable) -> Any:
    """Run an awaitable without an event loop: the corpus only awaits ``Ready``, which yields None."""
    it = awaitable.__await__() if not isinstance(awaitable, types.CoroutineType) else awaitable
    for _ in range(MAX_DRIVE_STEPS):
        try:
            it.send(None)
        except StopIteration as stop:
            return stop.value
    raise TimeLimitExceeded(f"coroutine suspended more than {MAX_DRIVE_STEPS} times")


def _drive_async_generator(agen, yielded: list) -> Any:
    to_send = None
    for _ in range(MAX_DRIVE_STEPS):
        try:
            yielded.append(_drive_coroutine(agen.asend(to_send)))
        except StopAsyncIteration:
            return None
        to_send = len(yielded)
    raise TimeLimitExceeded(f"async generator yielded more than {MAX_DRIVE_STEPS} values")


def same(a: Any, b: Any) -> bool:
    """Equality that also tells -0.0 from 0.0, treats NaN as equal to NaN and checks types."""
    if isinstance(a, Outcome) and isinstance(b, Outcome):
        return (a.kind == b.kind and same(a.value, b.value)
                and (a.yielded is None) == (b.yielded is None)
                and (a.yielded is None or same(a.yielded, b.yielded)))
    if isinstance(a, float) and isinstance(b, float):
        return (math.isnan(a) and math.isnan(b)) or (a == b and math.copysign(1, a) == math.copysign(1, b))
    if isinstance(a, complex) and isinstance(b, complex):
        return same(a.real, b.real) and same(a.imag, b.imag)
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return type(a) is type(b) and len(a) == len(b) and all(same(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, dict) and isinstance(b, dict):
        return type(a) is type(b) and list(a) == list(b) and all(same(a[k], b[k]) for k in a)
    if type(a) is not type(b):
        # Classes made inside a corpus function are new on every call: compare by name and repr.
        return type(a).__qualname__ == type(b).__qualname__ and repr(a) == repr(b)
    if isinstance(a, type):
        return a is b
    try:
        return bool(a == b)
    except Exception:
        return repr(a) == repr(b)


def with_code(func: types.FunctionType, code: types.CodeType) -> types.FunctionType:
    """A copy of ``func`` (globals, defaults, closure, keyword defaults) running ``code``."""
    new = types.FunctionType(code, func.__globals__, func.__name__, func.__defaults__, func.__closure__)
    new.__kwdefaults__ = copy.copy(func.__kwdefaults__)
    new.__qualname__ = func.__qualname__
    new.__dict__.update(func.__dict__)
    return new


def compare_functions(original: Callable, candidate: Callable) -> list[str]:
    """Run both on every case of ``original``; describe each case where they differ."""
    problems = []
    for invocation in original.__corpus_cases__:
        expected = run_case(original, invocation)
        try:
            got = run_case(candidate, invocation)
        except TimeLimitExceeded as exc:
            problems.append(f"{invocation!r}: recompiled code did not finish ({exc})")
            continue
        if not same(expected, got):
            problems.append(f"{invocation!r}: expected {expected.describe()}, got {got.describe()}")
    return problems


# --------------------------------------------------------------------------- code layout

LAYOUT_ATTRS = (
    "co_argcount",
    "co_posonlyargcount",
    "co_kwonlyargcount",
    "co_flags",
    "co_freevars",
    "co_name",
)


def layout_differences(original: types.CodeType, new: types.CodeType) -> list[str]:
    """How ``new`` fails to be a drop-in replacement for ``original``."""
    problems = [f"{attr}: {getattr(new, attr)!r} != {getattr(original, attr)!r}"
                for attr in LAYOUT_ATTRS if getattr(original, attr) != getattr(new, attr)]
    if getattr(original, "co_qualname", None) != getattr(new, "co_qualname", None):
        problems.append(f"co_qualname: {getattr(new, 'co_qualname', None)!r} != "
                        f"{getattr(original, 'co_qualname', None)!r}")
    nargs = (original.co_argcount + original.co_kwonlyargcount
             + bool(original.co_flags & 0x04) + bool(original.co_flags & 0x08))
    if original.co_varnames[:nargs] != new.co_varnames[:nargs]:
        problems.append(f"argument names: {new.co_varnames[:nargs]!r} != {original.co_varnames[:nargs]!r}")
    return problems


def error_summary(exc: BaseException) -> str:
    """One line for a failure: exception type and message, without the varying offset details."""
    return f"{type(exc).__name__}: {exc}".splitlines()[0][:300]


def parse_source(src: str, *, compile_too: bool = True) -> ast.Module:
    """``ast.parse``, and with ``compile_too`` also a full compile (catches e.g. a misplaced ``return``).

    Source of a closure cannot be compiled on its own (its ``nonlocal`` names have no binding), so
    callers pass ``compile_too=False`` for code with free variables.
    """
    tree = ast.parse(src)
    if compile_too:
        compile(tree, "<decompiled>", "exec")
    return tree
