"""Public entry points: turn functions and code objects into source, and back into code."""

from __future__ import annotations

import ast
import dis
import inspect
import io
import sys
import types
import warnings
from dataclasses import dataclass

from depyf.decompiler.errors import DecompilationError, SourceDoesNotCompile
from depyf.decompiler.flowcheck import differences as flow_differences
from depyf.decompiler.instructions import reading_once
from depyf.decompiler.opaque import embed, room
from depyf.decompiler.rebuild import rebuild_code
from depyf.decompiler.render import code_to_source_and_constants

__all__ = ["DecompilationError", "Recompiled", "decompile", "recompile", "code_of"]


# Wrappers followed through ``__wrapped__`` before giving up (an object whose ``__getattr__``
# invents attributes would otherwise be followed until the interpreter's recursion limit).
MAX_WRAPPED = 100


def code_of(obj: object, _hops: int = 0) -> types.CodeType:
    """The code object behind anything that runs Python bytecode.

    Raises ``TypeError`` naming the type when ``obj`` has no bytecode (builtins, numbers, ...).
    """
    if isinstance(obj, types.CodeType):
        return obj
    if isinstance(obj, (staticmethod, classmethod)):
        return code_of(obj.__func__)
    if isinstance(obj, types.MethodType):
        return code_of(obj.__func__)
    if isinstance(obj, types.FunctionType):
        return obj.__code__
    for attr in ("gi_code", "cr_code", "ag_code"):  # generator, coroutine, async generator
        code = getattr(obj, attr, None)
        if isinstance(code, types.CodeType):
            return code
    if isinstance(obj, property):
        if obj.fget is None:
            raise TypeError("cannot decompile a property without a getter")
        return code_of(obj.fget)
    wrapped = getattr(obj, "__wrapped__", None)
    if wrapped is not None and wrapped is not obj:
        if _hops >= MAX_WRAPPED:
            raise TypeError(
                f"cannot decompile an object of type {type(obj).__qualname__!r}: more than "
                f"{MAX_WRAPPED} __wrapped__ objects deep (does its __getattr__ invent attributes?)"
            )
        return code_of(wrapped, _hops + 1)
    raise TypeError(
        f"cannot decompile an object of type {type(obj).__qualname__!r}: it has no Python bytecode"
    )


def decompile(obj: object, *, verify: bool = True) -> str:
    """Python source for a function, method, generator, code object or module code object.

    The source compiles back to code with the same behaviour. For a function object, default
    values that can be written as literals are shown in the signature; the recompiled code object
    never needs them (defaults live on the function object, not the code).

    With ``verify`` (the default) the source is compiled and its control flow compared with the
    original's (``depyf.decompiler.flowcheck``): where they differ, ``DecompilationError`` is
    raised instead of returning source that would run differently. Either way the text returned
    parses and compiles (a function with free variables: inside one that binds them); text that
    does not raises ``DecompilationError`` naming the function.
    """
    if isinstance(obj, property):
        parts = [decompile(f, verify=verify) for f in (obj.fget, obj.fset, obj.fdel) if f is not None]
        return "\n".join(parts)
    code = code_of(obj)
    _refuse_scopes_without_source(code)
    func = _function_of(obj)
    try:
        with reading_once():
            source, constants = code_to_source_and_constants(
                code, defaults=_literal_defaults(func) if func is not None else None)
            if verify:
                _check_same_flow(code, source, constants)
            else:
                _ensure_compiles(code, source)
        return source
    except Exception as exc:
        error = (
            exc
            if isinstance(exc, DecompilationError)
            else DecompilationError(
                f"internal error {type(exc).__name__}: {exc}",
                qualname=getattr(code, "co_qualname", code.co_name),
            )
        )
        if _called_from_dynamo():
            # Frameworks call decompile inside Dynamo's bytecode hooks: an exception there would
            # break the user's compilation. Say what failed and show the bytecode instead.
            warnings.warn(f"depyf.decompile could not decompile: {error}; returning the bytecode listing",
                          RuntimeWarning, stacklevel=2)
            return _listing_source(code, error)
        if error is exc:
            raise
        raise error from exc


_TYPE_PARAMETER_SCOPE = "<generic parameters of "


def _refuse_scopes_without_source(code: types.CodeType) -> None:
    """Raise ``TypeError`` for a code object that source never writes alone: the scope 3.12+
    compiles for the type parameters of ``def f[T]``, ``class C[T]`` or ``type A[T] = ...``
    (its source is that definition's header, which the code defining it reads back)."""
    if code.co_name.startswith(_TYPE_PARAMETER_SCOPE):
        defined = code.co_name[len(_TYPE_PARAMETER_SCOPE):].rstrip(">")
        raise TypeError(
            f"cannot decompile {code.co_name} on its own: it is the scope of {defined}'s type "
            f"parameters; decompile the code that defines {defined} (its module, class or function)"
        )


def _called_from_dynamo() -> bool:
    """Is this call running inside torch.compile's machinery (a Dynamo bytecode hook)?"""
    frame = sys._getframe(1)
    while frame is not None:
        if "torch/_dynamo/" in frame.f_code.co_filename.replace("\\", "/"):
            return True
        frame = frame.f_back
    return False


def _listing_source(code: types.CodeType, error: Exception) -> str:
    """Valid Python that says why ``code`` was not decompiled and lists its bytecode."""
    listing = io.StringIO()
    dis.dis(code, file=listing)
    lines = [f"# depyf could not decompile {getattr(code, 'co_qualname', code.co_name)}: {error}",
             "# Its bytecode:"]
    lines += [f"#   {line}" if line else "#" for line in listing.getvalue().splitlines()]
    return "\n".join(lines) + "\n"


@dataclass(frozen=True)
class Recompiled:
    """Decompiled source and the code object compiled from it, ready to replace the original."""

    source: str
    code: types.CodeType


def recompile(code: types.CodeType, *, filename: str | None = None, verify: bool = True,
              keep_locals: bool = False) -> Recompiled:
    """Decompile ``code`` and compile the source back into a drop-in replacement code object.

    The new code has the original's name, qualified name, argument layout, flags and free
    variables (checked; a mismatch raises ``DecompilationError``). With ``filename`` the new code
    (and every code nested in it) reports that file, so debuggers show the file we wrote. With
    ``verify`` (the default) the new code's control flow is compared with the original's (see
    ``decompile``); the torch integration turns it off and runs its own check of Dynamo's code.
    With ``keep_locals`` the new code has every local variable name of the original, unused ones
    included (see ``declare_unused_locals``).
    """
    if not isinstance(code, types.CodeType):
        code = code_of(code)
    with reading_once():
        source, constants = code_to_source_and_constants(code)
        new_code = _rebuild(code, source, constants, filename)
        missing = [name for name in code.co_varnames if name not in new_code.co_varnames]
        if keep_locals and missing:
            source = declare_unused_locals(source, missing)
            new_code = _rebuild(code, source, constants, filename)
        if verify:
            _raise_if_flow_differs(code, new_code)
    return Recompiled(source=source, code=new_code)


def _check_same_flow(code: types.CodeType, source: str, constants: dict[str, object]) -> None:
    """Compile ``source`` and compare its flow with ``code``'s. Source that compiles but does not
    rebuild into a drop-in code object (a comprehension's own code object, whose source is a
    function standing for the comprehension; rare layouts of generated code) is returned with
    its flow unchecked, once it is known to compile."""
    try:
        new_code = embed(rebuild_code(code, source, compared_only=True, room=room(constants)), constants)
    except SourceDoesNotCompile:
        raise
    except (DecompilationError, ValueError, TypeError):
        _ensure_compiles(code, source)
        return
    _raise_if_flow_differs(code, new_code)


def _ensure_compiles(code: types.CodeType, source: str) -> None:
    """The last guard on every way out: text that is not Python, or that Python does not compile,
    is a decompiler bug, never a result (checked here where nothing compiled it). A function with
    free variables is compiled inside a function that defines them (``nonlocal x`` needs one)."""
    qualname = getattr(code, "co_qualname", code.co_name)
    try:
        ast.parse(source)
    except SyntaxError as exc:
        raise SourceDoesNotCompile(
            f"the decompiled source is not valid Python: {exc.msg} (line {exc.lineno})", qualname=qualname
        ) from None
    except (RecursionError, MemoryError):
        raise DecompilationError("source nested too deeply to parse", qualname=qualname) from None
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", SyntaxWarning)   # (see rebuild_code)
            compile(source, "<decompiled>", "exec", flags=code.co_flags & _FUTURE_ANNOTATIONS,
                    dont_inherit=True)
    except (SyntaxError, ValueError) as exc:
        try:
            rebuild_code(code, source)  # raises SourceDoesNotCompile where the wrapper does not help
        except SourceDoesNotCompile:
            raise
        except DecompilationError as inner:
            if "nested too deeply" in inner.reason:
                raise
            # it compiled, into code that is no drop-in replacement: still Python
        except (ValueError, TypeError):
            raise SourceDoesNotCompile(
                f"the decompiled source does not compile: {exc}", qualname=qualname
            ) from None
    except (RecursionError, MemoryError):
        raise DecompilationError("source nested too deeply to compile", qualname=qualname) from None


_FUTURE_ANNOTATIONS = 0x1000000   # CO_FUTURE_ANNOTATIONS


def declare_unused_locals(source: str, names: list[str]) -> str:
    """``source`` (one function) with a last statement that assigns ``names``, after its end.

    Why: an eval-frame that moves a frame's locals into replacement code by name (torch 2.2's
    Dynamo does) needs every local of the code it replaces, even one the code never reads. The
    statement follows the function's last line, where a return has already left; it only makes
    the compiler allocate the names."""
    lines = source.rstrip("\n").split("\n")
    body = next((line for line in lines[1:] if line.strip() and not line.lstrip().startswith("#")), "    ")
    indent = body[:len(body) - len(body.lstrip())] or "    "
    lines.append(f"{indent}{' = '.join(names)} = None  # depyf: locals of the replaced code, never read")
    return "\n".join(lines) + "\n"


def _rebuild(code: types.CodeType, source: str, constants: dict[str, object],
             filename: str | None = None) -> types.CodeType:
    """The drop-in code object compiled from ``source``, placeholder constants put back."""
    return embed(rebuild_code(code, source, filename=filename, room=room(constants)), constants)


def _raise_if_flow_differs(code: types.CodeType, new_code: types.CodeType) -> None:
    problems = flow_differences(code, new_code)
    if problems:
        raise DecompilationError(f"the decompiled source would run differently: {problems[0]}",
                                 qualname=getattr(code, "co_qualname", code.co_name))


def _function_of(obj: object) -> types.FunctionType | None:
    while isinstance(obj, (staticmethod, classmethod, types.MethodType)):
        obj = obj.__func__
    return obj if isinstance(obj, types.FunctionType) else None


def _literal_defaults(func: types.FunctionType) -> dict[str, ast.expr]:
    """Defaults of ``func`` as ast literals; those that are not plain literals are left out."""
    out: dict[str, ast.expr] = {}
    try:
        sig = inspect.signature(func, follow_wrapped=False)
    except (TypeError, ValueError):
        return out
    for name, param in sig.parameters.items():
        if param.default is inspect.Parameter.empty:
            continue
        node = _literal(param.default)
        if node is not None:
            out[name] = node
    return out


def _literal(value: object) -> ast.expr | None:
    if value is None or value is Ellipsis or isinstance(value, (bool, int, float, complex, str, bytes)):
        node = ast.Constant(value)
        try:
            if ast.literal_eval(ast.unparse(node)) != value and value == value:
                return None
        except (ValueError, SyntaxError):
            return None
        return node
    if isinstance(value, tuple):
        elts = [_literal(v) for v in value]
        return None if any(e is None for e in elts) else ast.Tuple(elts=elts, ctx=ast.Load())
    return None
