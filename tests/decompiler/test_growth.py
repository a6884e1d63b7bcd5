"""Bounded work on big code: exception entries found in one pass agree with a scan of the table."""

from __future__ import annotations

import types

from depyf.decompiler.cfg import ControlFlowGraph
from depyf.decompiler.instructions import normalize


def _function(source: str) -> types.FunctionType:
    namespace: dict = {}
    exec(compile(source, "<generated>", "exec"), namespace)
    return namespace["f"]


def test_exception_entries_of_many_try_statements_are_those_a_scan_of_the_table_finds():
    units = "\n".join(f"    try:\n        y = y + x // {i % 3}\n    except ZeroDivisionError:\n        y = -y"
                      for i in range(60))
    code = _function(f"def f(x):\n    y = 0\n{units}\n    return y\n").__code__
    instrs, entries = normalize(code)
    cfg = ControlFlowGraph(instrs, entries)
    scanned = [next((e for e in entries if e.start <= ins.offset < e.end), None) for ins in instrs]
    assert sum(e is not None for e in scanned) > 100
    assert cfg.handler_at == scanned
