"""Render ``full_code_for_<fn>_<n>.py``: everything Dynamo did to one function, as valid Python.

Layout: the original source, then per cache entry its guard function and transformed code, then
each resume function with its own guards and transformed code, and finally the dispatch
function that ties them together the way Dynamo's cache lookup does.
"""

from __future__ import annotations

import ast
import inspect
import textwrap
import types
from dataclasses import dataclass, field

from depyf.decompiler.codeinfo import argument_names
from depyf.decompiler.render.unparse import unparse
from depyf.torch.guards import GuardClause, guard_function_source
from depyf.torch.names import identifier


@dataclass
class EntryView:
    """One cache entry, ready to render."""

    guard_name: str
    transformed_name: str
    transformed_file: str
    clauses: list[GuardClause]
    source: str | None        # decompiled transformed code, or None
    runs_decompiled: bool
    fallback_reason: str | None
    dis_text: str = ""
    graphs: list[str] = field(default_factory=list)
    cached: bool = True       # False: Dynamo dropped the entry (a guarded object was freed)


@dataclass
class FunctionView:
    """One compiled code object (a user function or a resume function), ready to render."""

    code: types.CodeType
    name: str
    dispatch_name: str
    kind: str
    original_source: str | None
    entries: list[EntryView]
    resumes: list[FunctionView] = field(default_factory=list)


def _signature(code: types.CodeType) -> tuple[str, str]:
    """(parameter list, call argument list) for a function with ``code``'s arguments."""
    names = code.co_varnames
    pos = code.co_argcount
    posonly = code.co_posonlyargcount
    kwonly = code.co_kwonlyargcount
    params, call = [], []
    for i, name in enumerate(names[:pos]):
        params.append(name)
        call.append(name)
        if posonly and i == posonly - 1:
            params.append("/")
    index = pos
    varargs = varkw = None
    if code.co_flags & inspect.CO_VARARGS:
        varargs = names[pos + kwonly]
    if kwonly or varargs:
        params.append(f"*{varargs}" if varargs else "*")
        if varargs:
            call.append(f"*{varargs}")
    for name in names[index:index + kwonly]:
        params.append(name)
        call.append(f"{name}={name}")
    if code.co_flags & inspect.CO_VARKEYWORDS:
        varkw = names[pos + kwonly + (1 if varargs else 0)]
        params.append(f"**{varkw}")
        call.append(f"**{varkw}")
    return ", ".join(params), ", ".join(call)


def renamed_function_source(source: str, new_name: str) -> str | None:
    """``source`` with its first function renamed (display only), or None if it does not parse."""
    try:
        tree = ast.parse(textwrap.dedent(source))
    except SyntaxError:
        return None
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            node.name = new_name
            return unparse(tree) + "\n"
    return None


def original_source_of(code: types.CodeType) -> str | None:
    """The user's source for ``code`` (dedented), or None when it is not available or not parseable."""
    try:
        lines, _ = inspect.getsourcelines(code)
    except (OSError, TypeError):
        return None
    text = textwrap.dedent("".join(lines))
    try:
        ast.parse(text)
    except SyntaxError:
        return None
    return text if text.endswith("\n") else text + "\n"


def _as_comment(text: str, prefix: str = "# ") -> str:
    return "\n".join(prefix + line if line else prefix.rstrip() for line in text.splitlines()) + "\n"


def _entry_text(entry: EntryView, code: types.CodeType) -> str:
    parts = []
    if not entry.cached:
        parts.append("# No longer in Dynamo's cache (Dynamo drops an entry when an object its guards "
                     "check by identity is freed); its guards as read while it was cached.\n")
    parts += [guard_function_source(entry.guard_name, entry.clauses, [code.co_filename]), "\n"]
    if entry.graphs:
        parts.append(f"# {entry.transformed_name} calls the graph(s) {', '.join(entry.graphs)}; "
                     "see __compiled_fn_<n>.<stage>.<k>.py files.\n")
    if entry.source is not None and entry.runs_decompiled:
        parts.append(
            f"# Decompiled from Dynamo's bytecode; the same code runs from {entry.transformed_file}\n"
        )
    elif entry.source is not None:
        parts.append(f"# Decompiled for reading only; Dynamo's own bytecode runs ({entry.fallback_reason})\n")
    renamed = renamed_function_source(entry.source, entry.transformed_name) if entry.source else None
    if renamed is not None:
        parts.append(renamed)
    else:
        params, _ = _signature(code)
        parts.append(f"# Dynamo's own bytecode runs: {' '.join((entry.fallback_reason or '').split())}\n")
        if entry.dis_text:
            parts.append(_as_comment(entry.dis_text))
        parts.append(f"def {entry.transformed_name}({params}):\n"
                     f"    raise NotImplementedError('see the bytecode listing above')\n")
    parts.append("\n\n")
    return "".join(parts)


def _dispatch_text(fn: FunctionView) -> str:
    params, call = _signature(fn.code)
    lines = [f"def {fn.dispatch_name}({params}):",
             "    # How Dynamo picks code for a call: the first cache entry whose guard holds runs."]
    local_items = ", ".join(f"{name!r}: {name}" for name in argument_names(fn.code))
    lines.append(f"    L = {{{local_items}}}")
    lines.append("    G = globals()")
    for entry in fn.entries:
        if not entry.cached:
            continue
        lines.append(f"    if {entry.guard_name}(L, G):")
        lines.append(f"        return {entry.transformed_name}({call})")
    lines.append("    # No guard holds: Dynamo compiles a new entry (or runs the original code).")
    lines.append(f"    return {identifier(fn.name)}({call})")
    return "\n".join(lines) + "\n"


def render_function(fn: FunctionView, header: bool = True) -> str:
    """The text of ``full_code_for_...`` for ``fn`` (and its resume functions)."""
    out = []
    if header:
        out.append(f"# full_code for {fn.name!r}, written by depyf. Valid Python for reading; "
                   "Dynamo's guards use helper names (___check_*) defined in C++.\n\n")
    out.append(f"# ---- original code of {fn.name} ({fn.code.co_filename}:{fn.code.co_firstlineno}) ----\n")
    if fn.original_source:
        out.append(fn.original_source)
    else:
        params, _ = _signature(fn.code)
        out.append(f"def {identifier(fn.name)}({params}):\n    ...  # source not available\n")
    out.append("\n\n")
    for entry in fn.entries:
        out.append(f"# ---- cache entry: {entry.guard_name} -> {entry.transformed_name} ----\n")
        out.append(_entry_text(entry, fn.code))
    for resume in fn.resumes:
        out.append(
            f"# ==== resume function {resume.name} (called by the code above after a graph break) ====\n"
        )
        out.append(render_function(resume, header=False))
    out.append(f"# ---- dispatch for {fn.name} ----\n")
    out.append(_dispatch_text(fn))
    return "".join(out)
