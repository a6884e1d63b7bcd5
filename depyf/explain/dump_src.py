"""``dump_src(fn)``: the text of ``full_code_for_...`` for a function compiled earlier."""

from __future__ import annotations

import types
from typing import Any

from depyf.torch.full_code import EntryView, FunctionView, original_source_of, render_function
from depyf.torch.guards import clauses_from_leaves
from depyf.torch.transformed import dis_listing, safe_decompile


def _function_of(fn: Any) -> tuple[types.CodeType, dict[str, Any]]:
    from depyf.torch import adapter

    target = adapter.original_callable(fn)
    while isinstance(target, types.MethodType):
        target = target.__func__
    code = getattr(target, "__code__", None)
    if not isinstance(code, types.CodeType):
        raise TypeError(f"dump_src needs a compiled function or module, got {type(fn).__qualname__!r}")
    return code, getattr(target, "__globals__", {})


def _view(code: types.CodeType, globals_: dict[str, Any], counters: dict[str, int],
          seen: set[types.CodeType]) -> FunctionView:
    from depyf.torch import adapter

    seen.add(code)
    entries, resumes = [], []
    for entry in adapter.cache_entries(code):
        n = counters.get(code.co_name, 0)
        counters[code.co_name] = n + 1
        leaves = adapter.leaf_guards(entry.guard_manager) if entry.guard_manager is not None else []
        source = safe_decompile(entry.code)
        graphs = []
        for name in entry.code.co_names:
            if adapter.is_graph_global(name) and name not in graphs:
                graphs.append(name)
            if adapter.is_resume_global(name):
                resume_fn = globals_.get(name)
                resume_code = getattr(resume_fn, "__code__", None)
                if isinstance(resume_code, types.CodeType) and resume_code not in seen:
                    resumes.append(_view(resume_code, globals_, counters, seen))
        entries.append(EntryView(
            guard_name=f"__guard_{n}_for_{code.co_name}",
            transformed_name=f"__transformed_code_{n}_for_{code.co_name}",
            transformed_file=f"__transformed_code_{n}_for_{code.co_name}.py",
            clauses=clauses_from_leaves((leaf.kind, leaf.parts) for leaf in leaves),
            source=source, runs_decompiled=False,
            fallback_reason=None if source is not None else "could not decompile",
            dis_text="" if source is not None else dis_listing(entry.code), graphs=graphs))
    resume = adapter.resume_of(code) is not None
    original = safe_decompile(code) if resume else original_source_of(code)
    return FunctionView(code=code, name=code.co_name, dispatch_name=f"__dispatch_for_{code.co_name}",
                        kind="resume" if resume else "user",
                        original_source=original, entries=entries, resumes=resumes)


def dump_src(fn: Any) -> str:
    """Everything Dynamo did to ``fn`` so far, as the text of a ``full_code_for_...`` file.

    ``fn`` is a ``torch.compile``'d function or module (or the plain function it wraps) that has
    run at least once. Raises ``ValueError`` when it has no compiled code yet.
    """
    from depyf.torch import adapter

    adapter.check_supported()
    code, globals_ = _function_of(fn)
    view = _view(code, globals_, {}, set())
    if not view.entries:
        raise ValueError(f"{code.co_name!r} has no compiled code yet: call it (compiled) at least once")
    return render_function(view)
