"""Decompile Dynamo's transformed bytecode and decide whether our recompiled code may replace it.

The recompiled code is handed back to Dynamo only when it is verified to be a drop-in
replacement (same arguments, flags, cell and free variables, and it references only names the
Dynamo code references). Otherwise Dynamo's bytecode runs and the file says so.
"""

from __future__ import annotations

import dis
import inspect
import io
import types
from dataclasses import dataclass

from depyf.decompiler.codeinfo import argument_names
from depyf.torch import adapter, verify

_RUN_FLAGS = (inspect.CO_GENERATOR | inspect.CO_COROUTINE | inspect.CO_ASYNC_GENERATOR
              | inspect.CO_ITERABLE_COROUTINE | inspect.CO_VARARGS | inspect.CO_VARKEYWORDS)


@dataclass
class TransformedCode:
    """The outcome for one transformed code object."""

    dynamo_code: types.CodeType
    code_to_run: types.CodeType
    file_text: str
    source: str | None           # decompiled source (None when decompilation failed)
    decompiled: bool             # True when our recompiled code runs
    fallback_reason: str | None
    recompiled_code: types.CodeType | None = None  # our recompiled code, even when it was rejected


def _names_used(code: types.CodeType) -> set[str]:
    """Global, attribute and import names the instructions use (``co_names`` may hold more:
    recompiled code keeps the placeholder names of embedded constants it no longer loads)."""
    names = {str(i.argval) for i in verify.instructions(code) if i.opcode in dis.hasname}
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            names |= _names_used(const)
    return names


def _spelled_as_calls(code: types.CodeType) -> set[str]:
    """Method names source uses for instructions that have no name (``LIST_EXTEND`` -> ``extend``)."""
    return {"extend"} if any(i.opname == "LIST_EXTEND" for i in verify.instructions(code)) else set()


def verification_problems(dynamo_code: types.CodeType, candidate: types.CodeType) -> list[str]:
    """Why ``candidate`` cannot stand in for ``dynamo_code`` (empty when it can)."""
    problems = []
    for attr in ("co_argcount", "co_posonlyargcount", "co_kwonlyargcount", "co_freevars", "co_cellvars",
                 "co_name"):
        if getattr(dynamo_code, attr) != getattr(candidate, attr):
            problems.append(f"{attr} differs: {getattr(candidate, attr)!r} != {getattr(dynamo_code, attr)!r}")
    if (dynamo_code.co_flags ^ candidate.co_flags) & _RUN_FLAGS:
        problems.append(f"flags differ: {candidate.co_flags:#x} != {dynamo_code.co_flags:#x}")
    n = len(argument_names(dynamo_code))
    if dynamo_code.co_varnames[:n] != candidate.co_varnames[:n]:
        problems.append("argument names differ")
    extra = _names_used(candidate) - _names_used(dynamo_code) - _spelled_as_calls(dynamo_code)
    if extra:
        problems.append(f"references names Dynamo's code does not: {sorted(extra)[:5]}")
    graph_like = {
        n for n in _names_used(dynamo_code) if adapter.is_graph_global(n) or adapter.is_resume_global(n)
    }
    missing = graph_like - _names_used(candidate)
    if missing:
        problems.append(f"does not call {sorted(missing)[:5]}")
    if not problems:
        from depyf.torch.verify import differences

        problems.extend(differences(dynamo_code, candidate))
    return problems


def dis_listing(code: types.CodeType) -> str:
    out = io.StringIO()
    dis.dis(code, file=out)
    return out.getvalue()


def _stub_text(function_name: str, code: types.CodeType, reason: str) -> str:
    lines = [
        f"# {function_name}: Dynamo's own bytecode runs for this cache entry.",
        f"# depyf did not use decompiled code because: {' '.join(reason.split())}",
        "# The bytecode that runs, as a `dis` listing:",
    ]
    lines += [f"#   {line}" if line else "#" for line in dis_listing(code).splitlines()]
    args = ", ".join(argument_names(code))
    lines += [
        "",
        "",
        f"def {function_name}({args}):",
        "    raise NotImplementedError('shown as bytecode above; Dynamo runs its own bytecode here')",
        "",
    ]
    return "\n".join(lines)


def transform(dynamo_code: types.CodeType, function_name: str, path: str) -> TransformedCode:
    """Decompile ``dynamo_code`` into ``path``'s text and pick the code Dynamo should run.

    ``function_name`` is the ``__transformed_code_<n>_for_<fn>`` name the dump uses for it.
    Never raises: any failure yields Dynamo's own code and a file explaining why.
    """
    try:
        from depyf import recompile

        # Dynamo's code keeps values on the stack and loads globals early: the general flow check
        # would reject reorderings no Python source can avoid. verification_problems checks it.
        # (recompile parsed the source: text that does not parse never gets this far)
        # keep_locals: Dynamo moves the frame's locals into the code it runs by name (2.2 fails with
        # a SystemError when one is missing), so unused locals of its code stay.
        recompiled = recompile(dynamo_code, filename=path, verify=False, keep_locals=True)
        problems = verification_problems(dynamo_code, recompiled.code)
        if problems:
            reason = "recompiled code failed verification: " + "; ".join(problems)
            text = _stub_text(function_name, dynamo_code, reason)
            return TransformedCode(dynamo_code, dynamo_code, text, None, False, reason, recompiled.code)
        # The file must be exactly the compiled source so line numbers match; notes go last.
        text = recompiled.source if recompiled.source.endswith("\n") else recompiled.source + "\n"
        text += (f"\n# depyf: this is {function_name}, Dynamo's transformed code for "
                 f"{dynamo_code.co_name!r}, decompiled; it is the code that runs.\n")
        return TransformedCode(dynamo_code, recompiled.code, text, recompiled.source, True, None,
                               recompiled.code)
    except Exception as exc:  # any failure falls back to Dynamo's code
        reason = f"{type(exc).__name__}: {exc}"
        try:
            text = _stub_text(function_name, dynamo_code, reason)
        except Exception:
            text = f"# {function_name}: Dynamo's own bytecode runs ({type(exc).__name__})\n"
        return TransformedCode(dynamo_code, dynamo_code, text, None, False, reason)


def safe_decompile(code: types.CodeType) -> str | None:
    """Decompiled source of ``code``, or None; never raises (safe inside bytecode hooks).

    For display of Dynamo's code: the flow check is off (see ``transform``); what runs is
    checked there."""
    try:
        from depyf import decompile

        return decompile(code, verify=False)
    except Exception:
        return None
