"""Every corpus function decompiles to valid source, and its recompiled code behaves the same.

Test ids are ``<theme>.<function>``; ``tools/corpus_report.py`` prints the same results as a
per-theme table with the most common failure messages.
"""

from __future__ import annotations

import types
from pathlib import Path

import pytest
from corpus_harness import (
    BACKEND,
    CorpusEntry,
    all_entries,
    compare_functions,
    corpus_functions,
    corpus_module_names,
    layout_differences,
    module_path,
    parse_source,
    with_code,
)

ENTRIES = all_entries()
_recompiled: dict[types.CodeType, object] = {}


def recompiled(entry: CorpusEntry):
    """``BACKEND.recompile`` of the entry's code, computed once per session."""
    code = entry.func.__code__
    if code not in _recompiled:
        try:
            _recompiled[code] = BACKEND.recompile(code)
        except Exception as exc:  # replayed in every test that needs it
            _recompiled[code] = exc
    result = _recompiled[code]
    if isinstance(result, Exception):
        raise result
    return result


def test_corpus_is_big_enough():
    assert len(ENTRIES) >= 300
    assert all(e.func.__corpus_cases__ for e in ENTRIES)


@pytest.mark.parametrize("entry", ENTRIES, ids=lambda e: e.test_id)
def test_source_is_valid(entry: CorpusEntry):
    src = BACKEND.decompile(entry.func)
    assert isinstance(src, str) and src.strip()
    parse_source(src, compile_too=not entry.func.__code__.co_freevars)


@pytest.mark.parametrize("entry", ENTRIES, ids=lambda e: e.test_id)
def test_recompiled_behaviour(entry: CorpusEntry):
    new_func = with_code(entry.func, recompiled(entry).code)
    problems = compare_functions(entry.func, new_func)
    assert not problems, "\n".join(problems) + "\n--- decompiled source ---\n" + recompiled(entry).source


@pytest.mark.parametrize("entry", ENTRIES, ids=lambda e: e.test_id)
def test_recompiled_layout(entry: CorpusEntry):
    problems = layout_differences(entry.func.__code__, recompiled(entry).code)
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("theme", corpus_module_names())
def test_module_code_object(theme: str):
    """Decompile a whole module's ``<module>`` code, run it, and compare its functions with the original's."""
    path = module_path(theme)
    code = compile(path.read_text(), str(path), "exec")
    src = BACKEND.decompile(code)
    parse_source(src)
    original_ns = _exec_module(code, theme, path)
    decompiled_ns = _exec_module(compile(src, str(path), "exec"), theme, path)
    originals = dict(corpus_functions(original_ns))
    rebuilt = dict(corpus_functions(decompiled_ns))
    assert list(rebuilt) == list(originals), "the decompiled module defines different corpus functions"
    problems = []
    for name, func in originals.items():
        problems.extend(f"{name}{p}" for p in compare_functions(func, rebuilt[name]))
    assert not problems, "\n".join(problems)


def _exec_module(code: types.CodeType, theme: str, path: Path) -> dict:
    namespace = {"__name__": f"corpus.{theme}", "__package__": "corpus", "__file__": str(path),
                 "__builtins__": __builtins__}
    exec(code, namespace)
    return namespace
