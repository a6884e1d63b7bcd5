"""Make compiled graphs run from the files we dump, so breakpoints set in those files are hit.

Why this works without changing behaviour: we compile the dumped file's text with
``co_filename`` set to the file's absolute path, check that every function's bytecode,
names and constants equal the code torch generated (only file name and line numbers may
differ), and only then put our code object into the existing function objects
(``fn.__code__ = ...``). Swapping ``__code__`` in place reaches every reference torch already
holds (bound methods returned by a backend, ``Runner.call`` saved as ``call``), which
replacing attributes would miss. If anything does not match, nothing is changed.

Neither function ever raises: a failure is returned as a reason string (``None`` means linked)
and also reported as a warning.
"""

from __future__ import annotations
import __future__

import functools
import operator
import os
import sys
import types
import warnings
from collections.abc import Iterator
from typing import Any

from depyf.torch import adapter
from depyf.torch.files import DumpWriteError, atomic_write

__all__ = ["link_graph_module", "link_inductor_output", "link_bytecode_listing", "LinkWarning"]


class LinkWarning(UserWarning):
    """A dumped file could not be made the code that runs; the program itself is unaffected."""


def link_graph_module(gm: Any, path: str, *, title: str | None = None) -> str | None:
    """Write a readable source of the FX ``gm`` to ``path`` and make ``gm.forward`` run from it.

    Call it after the backend compiler has produced its final code for ``gm`` (for example after
    ``boxed_nop``, which regenerates ``forward``), because regenerating ``forward`` replaces the
    linked function. The file shows the module as a class (``print_readable`` layout, with typed
    locals and the user source line of each op) preceded by a comment listing the module's
    parameters, buffers and constants; nested graph modules (subgraphs of higher-order ops) become
    nested classes and are linked too. Returns ``None`` when linked, else the reason (the file is
    still written when possible, but the graph keeps running from torch's own code).
    """
    try:
        return _link_graph_module(gm, os.path.abspath(path), title)
    except DumpWriteError:
        raise
    except Exception as exc:  # never break the user's program
        return _give_up(path, f"{type(exc).__name__}: {exc}")


def link_inductor_output(compiled_module: types.ModuleType, path: str) -> str | None:
    """Copy Inductor's generated Python module to ``path`` and make its functions run from there.

    ``compiled_module`` is the module ``PyCodeCache`` loaded from Inductor's cache directory
    (its ``call`` is what the compiled graph runs; in torch 2.13 ``call`` is the bound method
    ``Runner.call``). Every Python function and method defined in that module (``call``, the
    benchmark helpers, Python kernel wrappers) gets the code compiled from ``path``. C++ kernels
    stay native code; their source is visible in the file. Returns ``None`` when linked, else the
    reason. Inductor shares one module between graphs whose output code is identical, so the last
    path linked wins.
    """
    try:
        return _link_inductor_output(compiled_module, os.path.abspath(path))
    except DumpWriteError:
        raise
    except Exception as exc:
        return _give_up(path, f"{type(exc).__name__}: {exc}")


# ---------------------------------------------------------------------------- graph modules


def _link_graph_module(gm: Any, path: str, title: str | None) -> str | None:
    name = adapter.graph_module_class_name(gm)
    # AOTAutograd names some graph classes "<lambda>", which is no class name Python accepts
    safe = name if name.isidentifier() else "GraphModule"
    modules = dict(_graph_modules(gm, safe))
    header = _graph_header(gm, title)
    readable = gm.print_readable(print_output=False)  # also forces a lazy module to generate code
    if safe != name:
        readable = readable.replace(f"class {name}(", f"class {safe}(", 1)
    readable = _nested_classes_named_by_attribute(readable, gm)
    text = header + "\n" + readable.rstrip() + "\n"
    targets = {qualname: _forward_function(mod) for qualname, mod in modules.items()}
    reason = _link_text(text, path, targets)
    if reason is None:
        return None
    # The readable layout did not compile to torch's bytecode: fall back to torch's own text
    # for the root graph (subgraphs then stay unlinked).
    plain = header + "\n" + gm.code.strip("\n") + "\n"
    fallback = _link_text(plain, path, {"forward": _forward_function(gm)})
    if fallback is None:
        return None
    return _give_up(path, f"{reason}; plain layout: {fallback}")


def _graph_modules(gm: Any, qualname: str) -> Iterator[tuple[str, Any]]:
    """The root and every nested graph module, keyed by their ``forward``'s qualname in the file."""
    import torch.fx

    yield f"{qualname}.forward", gm
    for name, child in gm.named_children():
        if isinstance(child, torch.fx.GraphModule):
            yield from _graph_modules(child, f"{qualname}.{name}")


def _nested_classes_named_by_attribute(readable: str, gm: Any) -> str:
    """``readable`` with each nested graph module's class named by its attribute (``cond_true_0``).

    torch 2.2's ``print_readable`` names the nested classes by their class name (every one
    ``GraphModule``), so their ``forward`` functions share one qualname and cannot be told apart;
    later releases name them by attribute already. Nested classes appear in the order of a
    depth-first walk of the graph module children."""
    import torch.fx

    expected: list[tuple[int, str]] = []

    def walk(module: Any, depth: int) -> None:
        for name, child in module.named_children():
            if isinstance(child, torch.fx.GraphModule):
                expected.append((depth, name))
                walk(child, depth + 1)

    walk(gm, 1)
    if not expected:
        return readable
    lines = readable.split("\n")
    order = iter(expected)
    for k, line in enumerate(lines):
        stripped = line.lstrip(" ")
        indent = len(line) - len(stripped)
        if indent and stripped.startswith("class ") and stripped.endswith("(torch.nn.Module):"):
            depth, name = next(order, (None, None))
            if depth is None or indent != 4 * depth:
                return readable  # another layout: leave it, verification decides
            lines[k] = f"{line[:indent]}class {name}(torch.nn.Module):"
    return "\n".join(lines)


def _forward_function(gm: Any) -> types.FunctionType | None:
    """The function object that runs for ``gm(...)`` and ``gm.forward(...)``."""
    gm.code  # noqa: B018 - generates the real forward of a lazy graph module
    fn = gm.__dict__.get("forward") or type(gm).__dict__.get("forward")
    fn = getattr(fn, "__func__", fn)
    return fn if isinstance(fn, types.FunctionType) else None


def _graph_header(gm: Any, title: str | None) -> str:
    lines = ["# " + (title or "FX graph") + ", written by depyf.",
             "# This file is the code that runs: a breakpoint set here is hit when the graph runs.",
             "# Not an importable module: names such as `torch` come from the graph's own globals",
             "# (an `import torch` here would change the bytecode Python generates).",
             "# Attributes of `self` used by forward:"]
    count = 0
    for kind, items in (("parameter", gm.named_parameters()), ("buffer", gm.named_buffers())):
        for name, value in items:
            lines.append(f"#   self.{name}: {kind} {_describe(value)}")
            count += 1
    for name, value in vars(gm).items():
        if name.startswith("_tensor_constant") or name.startswith("_frozen_param"):
            lines.append(f"#   self.{name}: constant {_describe(value)}")
            count += 1
    if count == 0:
        lines.append("#   (none)")
    return "\n".join(lines) + "\n"


def _describe(value: Any) -> str:
    try:
        import torch

        if isinstance(value, torch.Tensor):
            return (f"{str(value.dtype).replace('torch.', '')}{list(value.shape)} on {value.device}"
                    f"{', requires_grad' if value.requires_grad else ''}")
    except Exception:
        pass
    return type(value).__name__


# ---------------------------------------------------------------------------- inductor


def _link_inductor_output(module: types.ModuleType, path: str) -> str | None:
    source_file = getattr(module, "__file__", None)
    if not source_file or not os.path.exists(source_file):
        return _give_up(path, f"module {module.__name__!r} has no source file on disk")
    with open(source_file, encoding="utf-8") as f:
        text = f.read()
    targets: dict[str, types.FunctionType | None] = {}
    for fn in _functions_of_module(module, source_file):
        targets.setdefault(_qualname(fn.__code__), fn)
    if not targets:
        return _give_up(path, f"module {module.__name__!r} defines no Python function")
    return _link_text(text, path, targets)


def _functions_of_module(module: types.ModuleType, source_file: str) -> Iterator[types.FunctionType]:
    """Functions whose code comes from ``source_file``: module-level ones and methods of its classes."""
    seen: set[int] = set()
    for value in list(vars(module).values()):
        candidates: list[Any] = [value]
        if isinstance(value, type):
            candidates = list(vars(value).values())
        for obj in candidates:
            obj = getattr(obj, "__func__", obj)  # bound methods, static/class methods
            if isinstance(obj, types.FunctionType) and id(obj) not in seen:
                if obj.__code__.co_filename == source_file:
                    seen.add(id(obj))
                    yield obj


# ---------------------------------------------------------------------------- bytecode listings


def link_bytecode_listing(code: types.CodeType, path: str, *, title: str = "") -> types.CodeType | None:
    """Write ``code``'s instructions to ``path``, one per line, and return ``code`` reporting that file.

    For code that cannot be decompiled (Dynamo's transformed code when the decompiler gives up):
    the returned code object has the same bytecode, constants and exception table, only
    ``co_filename`` is ``path`` and every instruction's line is its line in the listing, so a
    breakpoint on an instruction line is hit and ``p <local>`` shows live values. Nested code
    objects (comprehensions, lambdas) are listed after their parent in the same file. The listing
    sits inside a string literal: the file is valid Python and pdb accepts breakpoints on its
    lines. Returns ``None`` (with a ``LinkWarning``) when it cannot. The line table is written in
    the running interpreter's format (3.10's byte-offset/line-delta pairs, 3.11+'s location table).
    """
    try:
        path = os.path.abspath(path)
        lines = [f"# {line}" if line else "#" for line in title.splitlines()]
        lines += ["# Dynamo's bytecode, one instruction per line; it runs with this file as its source.",
                  "# Set breakpoints on instruction lines; `p <name>` shows the frame's locals.",
                  "__bytecode_listing__ = r\"\"\""]
        linked = _listed_code(code, lines)
        lines.append('"""')
        text = "\n".join(lines) + "\n"
        atomic_write(path, text)
        import linecache

        linecache.checkcache(path)
        return _with_filename(linked, path)
    except Exception as exc:
        _give_up(path, f"{type(exc).__name__}: {exc}")
        return None


def _listed_code(code: types.CodeType, lines: list[str]) -> types.CodeType:
    """Append ``code``'s listing to ``lines`` and return ``code`` with a matching line table."""
    import dis

    lines.append(f"{_qualname(code)}({', '.join(code.co_varnames[:code.co_argcount])}):")
    first_line = len(lines)  # 1-based number of the header line just added
    spans: list[tuple[int, int]] = []  # (line, length in code units)
    instructions = list(dis.get_instructions(code))
    for i, ins in enumerate(instructions):
        end = instructions[i + 1].offset if i + 1 < len(instructions) else len(code.co_code)
        argument = f" {ins.argrepr}" if ins.argrepr else (f" {ins.arg}" if ins.arg is not None else "")
        argument = argument.replace('"""', "'''")  # keep the string literal closed
        lines.append(f"    {ins.offset:>5} {ins.opname}{argument}")
        spans.append((len(lines), (end - ins.offset) // 2))
    consts = list(code.co_consts)
    for k, const in enumerate(consts):
        if isinstance(const, types.CodeType):
            lines.append("")
            consts[k] = _listed_code(const, lines)
    return code.replace(co_firstlineno=first_line, co_linetable=_line_table(first_line, spans),
                        co_consts=tuple(consts))


def _line_table(first_line: int, spans: list[tuple[int, int]]) -> bytes:
    """A line table for this interpreter giving each span of code units one line (no columns)."""
    if sys.version_info < (3, 11):
        return _line_table_310(first_line, spans)
    out = bytearray()
    previous = first_line
    for line, length in spans:
        while length > 0:
            chunk = min(length, 8)
            out.append(0x80 | (13 << 3) | (chunk - 1))  # 13: "line only, no column" entry
            _write_signed_varint(out, line - previous)
            previous = line
            length -= chunk
    return bytes(out)


def _line_table_310(first_line: int, spans: list[tuple[int, int]]) -> bytes:
    """CPython 3.10's ``co_linetable``: (byte length, signed line delta) byte pairs (PEP 626).

    A length is at most 254 bytes and a delta within -127..127; a larger line jump is spread over
    zero-length pairs before the span, a longer span over pairs with delta 0 after the first.
    """
    out = bytearray()
    previous = first_line
    for line, length in spans:
        delta = line - previous
        previous = line
        while delta > 127 or delta < -127:
            step = 127 if delta > 0 else -127
            out += bytes((0, step & 0xFF))
            delta -= step
        remaining = length * 2
        while remaining > 254:
            out += bytes((254, delta & 0xFF))
            delta = 0
            remaining -= 254
        out += bytes((remaining, delta & 0xFF))
    return bytes(out)


def _write_signed_varint(out: bytearray, value: int) -> None:
    unsigned = (-value << 1) | 1 if value < 0 else value << 1
    while unsigned >= 64:
        out.append(0x40 | (unsigned & 63))
        unsigned >>= 6
    out.append(unsigned)


def _with_filename(code: types.CodeType, path: str) -> types.CodeType:
    consts = tuple(_with_filename(c, path) if isinstance(c, types.CodeType) else c for c in code.co_consts)
    return code.replace(co_filename=path, co_consts=consts)


# ---------------------------------------------------------------------------- shared core


def _link_text(text: str, path: str, targets: dict[str, types.FunctionType | None]) -> str | None:
    """Write ``text`` to ``path``, compile it from there and swap in verified code objects.

    ``targets`` maps the ``co_qualname`` a function has in ``text`` to the live function object.
    All targets are verified before any is swapped, so a mismatch changes nothing.
    """
    atomic_write(path, text)  # a refused write raises DumpWriteError: the caller stops the dump
    import linecache

    linecache.checkcache(path)  # a previous version of the file may be cached
    compiled = compile(text, path, "exec", flags=_future_flags(targets), dont_inherit=True)
    by_qualname: dict[str, types.CodeType] = {}
    for code in _nested_codes(compiled):
        by_qualname.setdefault(_qualname(code), code)
    swaps: list[tuple[types.FunctionType, types.CodeType]] = []
    for qualname, fn in targets.items():
        if fn is None:
            return f"no Python function runs for {qualname}"
        new = by_qualname.get(qualname)
        if new is None:
            return f"{qualname} not found in the written file"
        mismatch = _difference(fn.__code__, new)
        if mismatch:
            return f"{qualname}: written source does not compile to the running code ({mismatch})"
        swaps.append((fn, new))
    for fn, new in swaps:
        fn.__code__ = new
    return None


# Every ``from __future__ import ...`` feature's compiler flag: code compiled under one carries it.
_FUTURE_FLAGS = functools.reduce(
    operator.or_, (getattr(__future__, name).compiler_flag for name in __future__.all_feature_names), 0)


def _future_flags(targets: dict[str, types.FunctionType | None]) -> int:
    """The ``__future__`` features the running code was compiled with, to compile the file alike.

    torch 2.2's Inductor compiles its output code inside a module that imports
    ``annotations`` from ``__future__`` and so passes that flag on (``co_flags`` differs by it);
    later releases compile without inheriting. The feature only changes annotations, none of which
    the written files have."""
    for fn in targets.values():
        if fn is not None:
            return fn.__code__.co_flags & _FUTURE_FLAGS
    return 0


def _nested_codes(code: types.CodeType) -> Iterator[types.CodeType]:
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            yield const
            yield from _nested_codes(const)


_SAME_FIELDS = ("co_code", "co_names", "co_varnames", "co_freevars", "co_cellvars", "co_argcount",
                "co_posonlyargcount", "co_kwonlyargcount", "co_flags", "co_nlocals", "co_stacksize",
                "co_name")


def _difference(old: types.CodeType, new: types.CodeType) -> str | None:
    """What differs in behaviour between two code objects (``None``: only file and lines)."""
    for field in _SAME_FIELDS:
        if getattr(old, field) != getattr(new, field):
            return f"{field} differs"
    if len(old.co_consts) != len(new.co_consts):
        return "co_consts differ"
    for a, b in zip(old.co_consts, new.co_consts, strict=True):
        if isinstance(a, types.CodeType) and isinstance(b, types.CodeType):
            inner = _difference(a, b)
            if inner:
                return f"{a.co_name}: {inner}"
        elif type(a) is not type(b) or (a != b and repr(a) != repr(b)):
            return f"constant {a!r} != {b!r}"
    if getattr(old, "co_exceptiontable", None) != getattr(new, "co_exceptiontable", None):
        return "exception table differs"
    return None


def _qualname(code: types.CodeType) -> str:
    return getattr(code, "co_qualname", code.co_name)  # Python 3.10 has no co_qualname


def _give_up(path: str, reason: str) -> str:
    warnings.warn(f"depyf: {path} is written for reading only; the compiled code keeps running from "
                  f"torch's own code ({reason})", LinkWarning, stacklevel=3)
    return reason
